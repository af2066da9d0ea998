//! Invariants of the models, checked over random inputs.

use models::alpha_beta::AlphaBeta;
use models::decomposition::side_edge_traffic;
use models::roofline::Roofline;
use models::speedup::{amdahl_speedup, efficiency};
use models::stencil::GhostStencil;
use models::work_span::bounds;
use proptest::prelude::*;

proptest! {
    #[test]
    fn roofline_never_exceeds_peak(peak in 1e6f64..1e15, bw in 1e6f64..1e13, ai in 1e-4f64..1e4) {
        let r = Roofline::simple(peak, bw).unwrap();
        let a = r.attainable(ai, &r.memory[0]).unwrap();
        prop_assert!(a.flops <= peak);
        prop_assert!(a.flops <= ai * bw * (1.0 + 1e-12));
    }

    #[test]
    fn amdahl_is_bounded_by_p_and_one_over_f(f in 0.0f64..=1.0, p in 1u32..100_000) {
        let s = amdahl_speedup(f, p as f64).unwrap();
        prop_assert!(s <= p as f64 * (1.0 + 1e-12));
        if f > 0.0 {
            prop_assert!(s <= (1.0 / f) * (1.0 + 1e-12));
        }
        prop_assert!(s >= 1.0 - 1e-12);
        prop_assert!(efficiency(s, p as f64).unwrap() <= 1.0 + 1e-12);
    }

    #[test]
    fn effective_bandwidth_stays_below_b(t0 in 1e-9f64..1e-3, bw in 1e6f64..1e12, n in 1f64..1e10) {
        let ab = AlphaBeta::new(t0, bw).unwrap();
        prop_assert!(ab.effective_bandwidth_Bps(n) < bw);
        prop_assert!(ab.fraction_of_peak(n) < 1.0);
    }

    #[test]
    fn efficiencies_stay_at_or_below_one(
        w in 1.0f64..1e12, s_frac in 1e-9f64..=1.0, p in 1u32..10_000,
        n in 16f64..65536.0, t0 in 0.0f64..1e-4, overlap: bool,
    ) {
        let b = bounds(w, w * s_frac, p as f64).unwrap();
        prop_assert!(b.efficiency_lower_bound <= 1.0);
        prop_assert!(b.time_lower_bound <= b.time_upper_bound);
        let net = AlphaBeta::new(t0, 1e10).unwrap();
        let st = GhostStencil::new(n, 1e-9, 8.0, 2.0, net, overlap).unwrap();
        prop_assert!(st.strong(p as f64).unwrap().efficiency <= 1.0 + 1e-12);
        prop_assert!(st.weak(p as f64).unwrap().efficiency <= 1.0 + 1e-12);
    }

    #[test]
    fn traffic_is_monotone_in_line_size(
        n in 64f64..1e5, p in 1u32..4096, a in 0u32..5, b in 0u32..5,
    ) {
        let n = n.round(); // a grid side is a whole number
        prop_assume!((p as f64) <= n * n);
        let (la, lb) = (4.0 * 2f64.powi(a as i32), 4.0 * 2f64.powi(b as i32));
        let (inh_a, moved_a) = side_edge_traffic(n, p as f64, la, 4.0).unwrap();
        let (_, moved_b) = side_edge_traffic(n, p as f64, lb, 4.0).unwrap();
        prop_assert!(moved_a >= inh_a);
        if la <= lb {
            prop_assert!(moved_a <= moved_b);
        }
    }
}
