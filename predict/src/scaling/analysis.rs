//! Curves, knees and Monte Carlo bands of one scaling model.
//!
//! For a parameter vector θ the three knees are
//!
//! * the crossover P: the smallest P where the part of the time that does
//!   not parallelise catches up with the part that does (comm ≥ compute;
//!   for the ghost-row stencil P* = N·t_update·N / (k·T0 + 2N·elem/B),
//!   §4.1);
//! * the efficiency knee: the smallest P where E(P) = S(P)/P drops below
//!   the threshold;
//! * the best P: the smallest P whose time is within 1% of the fastest time
//!   in range (beyond it, more processors buy less than 1%).
//!
//! Each is found on a grid of 16 points per octave and refined by
//! bisection in log P (continuous models) or read off the integer grid
//! (thread counts). The point estimate uses θ̂; the 95% range is the 2.5th
//! to 97.5th percentile of the knee over the Monte Carlo draws, a draw that
//! never reaches the knee within range counting as "beyond P_max".

use serde::Serialize;

use super::curves::{Curve, Domain, Point};
use super::uncertainty::{Param, Uncertainty};
use models::random::SplitMix64;
use models::stats::quantile;

/// Grid points per octave of P.
pub const PER_OCTAVE: f64 = 16.0;
/// Tolerance of the best-time knee: within this share of the fastest time.
pub const BEST_TOLERANCE: f64 = 0.01;

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Config {
    pub p_min: f64,
    pub p_max: f64,
    /// Efficiency threshold of the efficiency knee (0.5).
    pub efficiency: f64,
    /// Monte Carlo draws (0: point estimates only).
    pub draws: usize,
    pub seed: u64,
}

/// A knee: its point estimate and 95% range; None means beyond P_max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    pub point: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// Share of the draws that never reach the knee within range.
    pub beyond_share: f64,
}

/// The three knees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knees {
    pub crossover: Knee,
    pub efficiency: Knee,
    pub best: Knee,
}

/// A point with its 95% band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub point: Point,
    pub time_lo_s: f64,
    pub time_hi_s: f64,
    pub speedup_lo: f64,
    pub speedup_hi: f64,
    pub efficiency_lo: f64,
    pub efficiency_hi: f64,
}

/// One analysed series (one network, one strategy, one fit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesResult {
    pub name: String,
    pub params: Vec<Param>,
    /// What the crossover means for this model.
    pub crossover_means: &'static str,
    /// At powers of two (the table).
    pub rows: Vec<Row>,
    /// On the fine grid (the chart and the CSV).
    pub curve: Vec<Row>,
    pub knees: Knees,
}

/// The fine grid: 16 points per octave (all whole numbers up to 512
/// threads for integer models).
pub fn grid(domain: Domain, p_min: f64, p_max: f64) -> Vec<f64> {
    let mut out = Vec::new();
    match domain {
        Domain::Integer if p_max - p_min <= 512.0 => {
            let mut p = p_min.ceil();
            while p <= p_max {
                out.push(p);
                p += 1.0;
            }
        }
        _ => {
            let octaves = (p_max / p_min).log2();
            let steps = (octaves * PER_OCTAVE).ceil().max(1.0) as i64;
            for k in 0..=steps {
                let p = (p_min * 2f64.powf(k as f64 / PER_OCTAVE)).min(p_max);
                let p = if domain == Domain::Integer {
                    p.round()
                } else {
                    p
                };
                if out.last() != Some(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Powers of two in range, with both ends.
pub fn table_ps(p_min: f64, p_max: f64) -> Vec<f64> {
    let mut out = vec![p_min];
    let mut p = 2f64.powf(p_min.log2().floor() + 1.0);
    while p < p_max {
        out.push(p);
        p *= 2.0;
    }
    if p_max > p_min {
        out.push(p_max);
    }
    out
}

/// The smallest P where `crossed` turns true, refined between grid points.
fn first_crossing(
    curve: &dyn Curve,
    theta: &[f64],
    grid: &[f64],
    points: &[Point],
    crossed: &dyn Fn(&Point) -> bool,
) -> Option<f64> {
    let i = points.iter().position(crossed)?;
    if i == 0 || curve.domain() == Domain::Integer {
        return Some(grid[i]);
    }
    let (mut lo, mut hi) = (grid[i - 1].ln(), grid[i].ln());
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if crossed(&curve.point(theta, mid.exp())) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi.exp())
}

fn knees_of(curve: &dyn Curve, theta: &[f64], grid: &[f64], cfg: &Config) -> [Option<f64>; 3] {
    let points: Vec<Point> = grid.iter().map(|&p| curve.point(theta, p)).collect();
    let crossover = first_crossing(curve, theta, grid, &points, &|pt| {
        pt.p > 1.0 && pt.comm_s >= pt.compute_s
    });
    let e = cfg.efficiency;
    let efficiency = first_crossing(curve, theta, grid, &points, &|pt| pt.efficiency < e);
    let fastest = points
        .iter()
        .map(|pt| pt.time_s)
        .filter(|t| t.is_finite())
        .fold(f64::INFINITY, f64::min);
    let best = points
        .iter()
        .find(|pt| pt.time_s <= fastest * (1.0 + BEST_TOLERANCE))
        .map(|pt| pt.p);
    [crossover, efficiency, best]
}

fn knee(point: Option<f64>, mut draws: Vec<Option<f64>>) -> Knee {
    if draws.is_empty() {
        return Knee {
            point,
            lo: point,
            hi: point,
            beyond_share: if point.is_none() { 1.0 } else { 0.0 },
        };
    }
    let n = draws.len() as f64;
    let beyond = draws.iter().filter(|d| d.is_none()).count() as f64 / n;
    let mut v: Vec<f64> = draws
        .drain(..)
        .map(|d| d.unwrap_or(f64::INFINITY))
        .collect();
    v.sort_by(f64::total_cmp);
    let finite = |x: f64| x.is_finite().then_some(x);
    let q = |q: f64| {
        // Interpolating towards infinity is meaningless: take the order
        // statistic when a neighbour is beyond range.
        let x = quantile(&v, q);
        if x.is_nan() {
            None
        } else {
            finite(x)
        }
    };
    Knee {
        point,
        lo: q(0.025),
        hi: q(0.975),
        beyond_share: beyond,
    }
}

/// Analyses one model: the point curve, its Monte Carlo band, and the knees.
pub fn analyse(name: &str, curve: &dyn Curve, unc: &Uncertainty, cfg: &Config) -> SeriesResult {
    let grid = grid(curve.domain(), cfg.p_min, cfg.p_max);
    let table = match curve.domain() {
        Domain::Integer => table_ps(cfg.p_min.ceil(), cfg.p_max.floor()),
        Domain::Continuous => table_ps(cfg.p_min, cfg.p_max),
    };
    let theta_hat = unc.point();
    let [c, e, b] = knees_of(curve, &theta_hat, &grid, cfg);

    // Draws: the curve at every grid and table P, and the knees.
    let mut rng = SplitMix64::new(cfg.seed);
    let all_ps: Vec<f64> = grid.iter().chain(&table).copied().collect();
    let mut samples: Vec<Vec<Point>> = vec![Vec::with_capacity(cfg.draws); all_ps.len()];
    let mut knee_draws: [Vec<Option<f64>>; 3] = Default::default();
    for _ in 0..cfg.draws {
        let theta = unc.draw(&mut rng);
        for (k, &p) in all_ps.iter().enumerate() {
            samples[k].push(curve.point(&theta, p));
        }
        for (slot, v) in knee_draws
            .iter_mut()
            .zip(knees_of(curve, &theta, &grid, cfg))
        {
            slot.push(v);
        }
    }
    let band = |k: usize, p: f64| -> Row {
        let point = curve.point(&theta_hat, p);
        if cfg.draws == 0 {
            return Row {
                point,
                time_lo_s: point.time_s,
                time_hi_s: point.time_s,
                speedup_lo: point.speedup,
                speedup_hi: point.speedup,
                efficiency_lo: point.efficiency,
                efficiency_hi: point.efficiency,
            };
        }
        let range = |f: &dyn Fn(&Point) -> f64| {
            let mut v: Vec<f64> = samples[k].iter().map(f).filter(|x| x.is_finite()).collect();
            v.sort_by(f64::total_cmp);
            (quantile(&v, 0.025), quantile(&v, 0.975))
        };
        let (t0, t1) = range(&|x| x.time_s);
        let (s0, s1) = range(&|x| x.speedup);
        let (e0, e1) = range(&|x| x.efficiency);
        Row {
            point,
            time_lo_s: t0,
            time_hi_s: t1,
            speedup_lo: s0,
            speedup_hi: s1,
            efficiency_lo: e0,
            efficiency_hi: e1,
        }
    };
    let curve_rows: Vec<Row> = grid.iter().enumerate().map(|(k, &p)| band(k, p)).collect();
    let rows: Vec<Row> = table
        .iter()
        .enumerate()
        .map(|(k, &p)| band(grid.len() + k, p))
        .collect();
    let [kc, ke, kb] = knee_draws;
    SeriesResult {
        name: name.to_string(),
        params: unc.params.clone(),
        crossover_means: curve.crossover_label(),
        rows,
        curve: curve_rows,
        knees: Knees {
            crossover: knee(c, kc),
            efficiency: knee(e, ke),
            best: knee(b, kb),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::curves::{lecture_stencil, Stencil};
    use models::Estimate;

    fn lecture(rel: f64) -> (Stencil, Uncertainty) {
        let s = lecture_stencil();
        let e = |v: f64| Estimate::new(v, v * (1.0 - rel), v * (1.0 + rel));
        let u = Uncertainty::independent(vec![
            Param::positive("t_update", "s", e(2.0 / 3e9), "lecture"),
            Param::non_negative("T0", "s", e(2e-6), "lecture"),
            Param::positive("B", "B/s", e(6.4e9), "lecture"),
        ]);
        (s, u)
    }

    fn cfg(draws: usize) -> Config {
        Config {
            p_min: 1.0,
            p_max: 4096.0,
            efficiency: 0.5,
            draws,
            seed: 1,
        }
    }

    #[test]
    fn lecture_knee_near_1571() {
        let (s, u) = lecture(0.0);
        let r = analyse("lecture", &s, &u, &cfg(0));
        let p = r.knees.crossover.point.unwrap();
        // comm = compute: N²·t/P = T0 + 2N·4/B -> P = 1571.
        assert!((p - 1571.0).abs() < 1.0, "{p}");
        // Without overlap, E = c1/(c1 + P·m) = 1/2 exactly at the crossover.
        let e = r.knees.efficiency.point.unwrap();
        assert!((e - p).abs() / p < 1e-6, "{e} vs {p}");
    }

    #[test]
    fn band_contains_the_point_and_shrinks_with_the_intervals() {
        let (s, wide) = lecture(0.10);
        let (_, narrow) = lecture(0.02);
        let w = analyse("w", &s, &wide, &cfg(500));
        let n = analyse("n", &s, &narrow, &cfg(500));
        for r in w.rows.iter().chain(&n.rows) {
            assert!(
                r.speedup_lo <= r.point.speedup && r.point.speedup <= r.speedup_hi,
                "{r:?}"
            );
        }
        let width = |k: &Knee| k.hi.unwrap() - k.lo.unwrap();
        assert!(width(&n.knees.crossover) < width(&w.knees.crossover) / 2.0);
        let kw = w.knees.crossover;
        assert!(kw.lo.unwrap() < kw.point.unwrap() && kw.point.unwrap() < kw.hi.unwrap());
    }

    #[test]
    fn grids() {
        assert_eq!(
            table_ps(1.0, 100.0),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0]
        );
        assert_eq!(table_ps(3.0, 8.0), vec![3.0, 4.0, 8.0]);
        let g = grid(Domain::Continuous, 1.0, 4.0);
        assert_eq!(g.len(), 33);
        assert_eq!(*g.last().unwrap(), 4.0);
        assert_eq!(grid(Domain::Integer, 1.0, 8.0).len(), 8);
    }
}
