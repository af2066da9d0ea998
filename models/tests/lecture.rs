//! The lecture's numeric examples (§4.1–§4.6) and thought questions (§7),
//! one test each, asserting the lecture's numbers to its own rounding.
//! Where the lecture's arithmetic is off, the test says so and asserts the
//! correct value.

use models::alpha_beta::AlphaBeta;
use models::binning::{self, BinningInputs, Strategy};
use models::contention::{office_hours, SerializedLock};
use models::decomposition::{assignment_cost, blocked_1d_comm_to_compute, Assignment};
use models::little::{bandwidth_from_concurrency, outstanding_lines, sweep_time_s};
use models::locality::{false_sharing, fusion_speedup_bound, stencil_traffic, three_pass, FUSED};
use models::roofline::{peak_flops, Bound, Roofline};
use models::speedup::{amdahl_limit, amdahl_speedup};
use models::stencil::GhostStencil;
use models::work_span::{latency_in_updates, stencil_efficiency_with_latency};

/// |a − b| ≤ tol·|b|.
fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}

macro_rules! assert_close {
    ($a:expr, $b:expr, $tol:expr) => {{
        let (a, b) = ($a, $b);
        assert!(
            close(a, b, $tol),
            "{} = {a}, expected {b} (±{})",
            stringify!($a),
            $tol
        );
    }};
}

/// The lecture's network: T0 = 2 µs, B = 6.4 GB/s.
fn lecture_net() -> AlphaBeta {
    AlphaBeta::new(2e-6, 6.4e9).unwrap()
}

/// 2 cycles per update at 3 GHz.
const UPDATE_S: f64 = 2.0 / 3e9;

#[test]
fn s2_2_half_peak_message_is_12_8_kb() {
    assert_close!(lecture_net().half_peak_bytes(), 12_800.0, 1e-12);
}

#[test]
fn s4_1_example_a_one_message_of_two_rows() {
    let net = lecture_net();
    let bytes = 2.0 * 4096.0 * 4.0;
    assert_eq!(bytes, 32_768.0);
    assert_close!(net.time_s(bytes), 7.12e-6, 1e-3);
    assert_close!(net.effective_bandwidth_Bps(bytes), 4.60e9, 1e-3);
    assert_close!(net.fraction_of_peak(bytes), 0.72, 5e-3);
}

/// The lecture splits the exchange into "64 messages of one element, times 2
/// (send and receive)" = 256 µs and calls it 36× slower than the 7.12 µs
/// message. The arithmetic is right, but the two sides carry different data:
/// 128 messages of 4 B move 512 B, not the 32 KiB of the one message. Sending
/// the same 32 KiB as 8192 one-element messages would take 16.4 ms, 2300×
/// longer.
#[test]
fn s4_1_example_a_many_small_messages() {
    let net = lecture_net();
    assert_close!(net.time_s(4.0), 2.000625e-6, 1e-9);
    let small = net.sequential_messages_time_s(128.0, 4.0).unwrap();
    assert_close!(small, 256e-6, 1e-3);
    assert_close!(small / net.time_s(32_768.0), 36.0, 0.01);
    // Same bytes, 8192 messages of one element each:
    assert_close!(net.coalescing_gain(8192.0, 32_768.0).unwrap(), 2301.9, 1e-3);
}

#[test]
fn s4_1_example_a_compute_and_crossover() {
    let s = GhostStencil::new(4096.0, UPDATE_S, 4.0, 1.0, lecture_net(), false).unwrap();
    let p64 = s.strong(64.0).unwrap();
    assert_close!(p64.compute_s, 174.8e-6, 1e-3);
    assert_close!(p64.comm_s / p64.compute_s, 0.041, 0.01);
    let p512 = s.strong(512.0).unwrap();
    assert_close!(p512.compute_s, 21.8e-6, 3e-3);
    assert_close!(p512.comm_s / p512.compute_s, 0.33, 0.02);
    // rows ≈ 2.6; the lecture rounds rows to 2.6 before dividing
    // (4096 / 2.6 = 1575); unrounded it is 1571.
    assert_close!(s.crossover_rows(), 2.6, 0.01);
    assert_close!(s.crossover_p(), 1575.0, 3e-3);
}

#[test]
fn s4_2_example_b_latency_in_the_span() {
    let l = latency_in_updates(7.12e-6, UPDATE_S).unwrap();
    assert_close!(l, 10_680.0, 1e-9);
    let e64 = stencil_efficiency_with_latency(2048.0, 64.0, l).unwrap();
    assert_close!(e64, 0.86, 5e-3);
    let e1024 = stencil_efficiency_with_latency(2048.0, 1024.0, l).unwrap();
    assert_close!(e1024, 0.28, 0.02);
}

#[test]
fn s4_2_bandwidth_lower_bounds_of_fusion() {
    // 128 Mi floats, 9 and 5 transfers of 4 B at 20 GB/s.
    let n = 134_217_728.0;
    let three = sweep_time_s(three_pass().bytes(4.0, false) * n, 20e9).unwrap();
    let fused = sweep_time_s(FUSED.bytes(4.0, false) * n, 20e9).unwrap();
    assert_close!(three, 241e-3, 3e-3);
    assert_close!(fused, 134e-3, 3e-3);
}

#[test]
fn s4_3_example_c_littles_law() {
    let l200 = 200.0 / 3e9;
    assert_close!(20e9 / 64.0, 312.5e6, 1e-12);
    assert_close!(outstanding_lines(20e9, l200, 64.0).unwrap(), 20.8, 3e-3);
    let l400 = 400.0 / 3e9;
    assert_close!(outstanding_lines(20e9, l400, 64.0).unwrap(), 41.7, 3e-3);
    // Spread over 16 cores: 1.3 to 2.6 per core.
    assert_close!(
        outstanding_lines(20e9, l200, 64.0).unwrap() / 16.0,
        1.3,
        0.01
    );
    assert_close!(
        outstanding_lines(20e9, l400, 64.0).unwrap() / 16.0,
        2.6,
        0.01
    );
    // One miss at a time: 0.96 GB/s, about 5% of 20 GB/s.
    let one = bandwidth_from_concurrency(1.0, l200, 64.0).unwrap();
    assert_close!(one, 0.96e9, 3e-3);
    assert_close!(one / 20e9, 0.05, 0.05);
    // A 256 MB sweep: 12.8 ms read, 25.6 ms read + write.
    assert_close!(sweep_time_s(256e6, 20e9).unwrap(), 12.8e-3, 1e-12);
    assert_close!(sweep_time_s(512e6, 20e9).unwrap(), 25.6e-3, 1e-12);
}

#[test]
fn s4_4_example_d_roofline() {
    let peak = peak_flops(16.0, 3e9, 8.0, 2.0).unwrap();
    assert_eq!(peak, 768e9);
    let r = Roofline::simple(peak, 20e9).unwrap();
    let dram = &r.memory[0];
    assert_close!(r.ridge_ai(dram), 38.4, 1e-12);
    // Fused element-wise: 3 flop / 20 B.
    let fused = r
        .attainable(FUSED.flops_per_byte(4.0, false), dram)
        .unwrap();
    assert_close!(FUSED.flops_per_byte(4.0, false), 0.15, 1e-12);
    assert_close!(fused.flops, 3.0e9, 1e-12);
    assert_close!(fused.flops / peak, 0.0039, 0.01);
    assert_eq!(fused.bound, Bound::Memory);
    // Three passes: 3 flop / 36 B.
    let three = r
        .attainable(three_pass().flops_per_byte(4.0, false), dram)
        .unwrap();
    assert_close!(three.flops, 1.67e9, 3e-3);
    // Stencil: 5 flops on 16 B (row-major) or 8 B (tiled).
    let row = stencil_traffic(8_388_608.0, 4.0, 32e6, false).unwrap();
    let tile = stencil_traffic(16_384.0, 4.0, 512.0 * 1024.0, false).unwrap();
    assert_eq!((row.bytes_per_elem, tile.bytes_per_elem), (16.0, 8.0));
    assert_close!(row.flops_per_byte, 0.3125, 1e-12);
    assert_close!(tile.flops_per_byte, 0.625, 1e-12);
    assert_close!(
        r.attainable(row.flops_per_byte, dram).unwrap().flops,
        6.25e9,
        1e-12
    );
    assert_close!(
        r.attainable(tile.flops_per_byte, dram).unwrap().flops,
        12.5e9,
        1e-12
    );
    // Blocked matmul, AI = b/4: b ≥ 153.6 to pass the ridge.
    assert_close!(4.0 * r.ridge_ai(dram), 153.6, 1e-12);
    let b64 = r.attainable(64.0 / 4.0, dram).unwrap();
    assert_eq!((b64.flops, b64.bound), (320e9, Bound::Memory));
    let b256 = r.attainable(256.0 / 4.0, dram).unwrap();
    assert_eq!((b256.flops, b256.bound), (768e9, Bound::Compute));
}

#[test]
fn s2_7_2_fusion_traffic_and_intensity() {
    assert_eq!(three_pass().transfers(), 9.0);
    assert_eq!(FUSED.transfers(), 5.0);
    assert_close!(three_pass().ops_per_transfer(), 1.0 / 3.0, 1e-12);
    assert_close!(FUSED.ops_per_transfer(), 3.0 / 5.0, 1e-12);
    assert_close!(fusion_speedup_bound(4.0, false), 1.8, 1e-12);
}

#[test]
fn s3_3_tiling_window_fits_l2() {
    // Tile 16 Ki columns of f32: three rows = 192 KiB ≤ 512 KiB L2.
    let t = stencil_traffic(16_384.0, 4.0, 512.0 * 1024.0, false).unwrap();
    assert_eq!(t.window_bytes, 192.0 * 1024.0);
    assert!(t.reuse_fits);
}

#[test]
fn s4_5_example_e_lock_costs_from_measurements() {
    let per = |ms: f64| ms * 1e-3 / 4e6;
    assert_close!(per(1748.0), 437e-9, 1e-3);
    assert_close!(per(2530.0), 633e-9, 2e-3);
    assert_close!(1.0 / per(2530.0), 1.58e6, 3e-3);
    assert_close!(1.0 / per(1748.0), 2.29e6, 3e-3);
    assert_close!(per(38.7), 9.7e-9, 3e-3);
    assert_close!(per(1109.0), 277e-9, 2e-3);
    assert_close!(per(1176.0), 294e-9, 1e-3);
    assert_close!(per(1748.0) / per(1109.0), 1.6, 0.02);
    assert_close!(per(2530.0) / per(1176.0), 2.2, 0.03);
    assert_close!(per(4.5), 1.1e-9, 0.03);
    // 80 MB moved in 4.5 ms: 17.8 GB/s.
    assert_close!(80e6 / 4.5e-3, 17.8e9, 3e-3);
    // The lock's ceiling does not move with threads.
    let lock = SerializedLock::new(per(2530.0), 0.0).unwrap();
    assert_eq!(
        lock.time_s(4e6, 1.0).unwrap(),
        lock.time_s(4e6, 16.0).unwrap()
    );
}

#[test]
fn s4_6_example_f1_amdahl() {
    assert_close!(amdahl_speedup(0.05, 16.0).unwrap(), 9.1, 0.01);
    assert_eq!(amdahl_limit(0.05).unwrap(), 20.0);
    // The lecture prints 39.4×; 1/(0.01 + 0.99/64) = 39.26, so 39.3 to its rounding.
    assert_close!(amdahl_speedup(0.01, 64.0).unwrap(), 39.26, 1e-3);
    assert_eq!(amdahl_limit(0.01).unwrap(), 100.0);
}

#[test]
fn s4_6_example_f2_fixed_size_trap() {
    assert_close!(
        blocked_1d_comm_to_compute(258.0, 32.0).unwrap(),
        0.248,
        3e-3
    );
    assert_close!(
        blocked_1d_comm_to_compute(1024.0, 32.0).unwrap(),
        0.0625,
        1e-12
    );
}

#[test]
fn s2_8_office_hours() {
    // Appointments at 3:00 and 4:30: ten minutes each, no wait.
    let booked = office_hours(&[0.0, 90.0], 5.0, 5.0).unwrap();
    assert!(booked.iter().all(|v| v.total == 10.0 && v.wait == 0.0));
    // Five students leave at 3:00 together: the first takes 10 minutes,
    // the fifth waits for four answers, 30 minutes in all.
    let rush = office_hours(&[0.0; 5], 5.0, 5.0).unwrap();
    assert_eq!(rush[0].total, 10.0);
    assert_eq!(rush[4].total, 30.0);
    // The lecture's "23 minutes" for the last student needs the last one to
    // leave 7 minutes after the others; with everyone leaving at once it is 30.
    let late = office_hours(&[0.0, 0.0, 0.0, 0.0, 7.0], 5.0, 5.0).unwrap();
    assert_eq!(late[4].total, 23.0);
}

#[test]
fn q1_three_assignments() {
    let b = assignment_cost(4096.0, 64.0, Assignment::Blocked1D).unwrap();
    assert_eq!(
        (b.compute_elems, b.comm_elems, b.arithmetic_intensity),
        (262_144.0, 8_192.0, 32.0)
    );
    let i = assignment_cost(4096.0, 64.0, Assignment::Interleaved1D).unwrap();
    assert_eq!(
        (i.compute_elems, i.comm_elems, i.arithmetic_intensity),
        (262_144.0, 524_288.0, 0.5)
    );
    let d = assignment_cost(4096.0, 64.0, Assignment::Blocked2D).unwrap();
    assert_eq!(
        (d.compute_elems, d.comm_elems, d.arithmetic_intensity),
        (262_144.0, 2_048.0, 128.0)
    );
    assert_eq!(d.grid, (8, 8));
    // Interleaved is P times worse than blocked; comm/compute ratios 1/32, 2, 1/128.
    assert_eq!(b.arithmetic_intensity / i.arithmetic_intensity, 64.0);
    assert_eq!(1.0 / i.arithmetic_intensity, 2.0);
    // Only the blocked ones improve with N.
    let b2 = assignment_cost(8192.0, 64.0, Assignment::Blocked1D).unwrap();
    let i2 = assignment_cost(8192.0, 64.0, Assignment::Interleaved1D).unwrap();
    assert!(b2.arithmetic_intensity > b.arithmetic_intensity);
    assert_eq!(i2.arithmetic_intensity, i.arithmetic_intensity);
}

#[test]
fn q2_false_sharing_of_stats() {
    // 16 threads × struct { long hits; long misses; } = 256 B on 4 lines.
    let fs = false_sharing(16.0, 16.0, 64.0).unwrap();
    assert_eq!(fs.unpadded_bytes, 256.0);
    assert_eq!(fs.lines, 4.0);
    assert_eq!(fs.sharers_per_line, 4.0);
    assert!(fs.transfers_per_write > 0.0);
    // alignas(64): 1 KiB, one thread per line, no transfers.
    let padded = false_sharing(16.0, 64.0, 64.0).unwrap();
    assert_eq!(padded.unpadded_bytes, 1024.0);
    assert_eq!(fs.padded_bytes, 1024.0);
    assert_eq!(padded.transfers_per_write, 0.0);
}

#[test]
fn q3_binning_strategy_choice() {
    let c = binning::costs(&BinningInputs {
        items: 1e6,
        global_lock_op_s: 600e-9,
        bucket_lock_op_s: 290e-9,
        sort_bytes_per_item: 20.0,
        bandwidth_Bps: 20e9,
        sort_op_s: 1.1e-9,
    })
    .unwrap();
    assert_close!(c.global_lock_s, 0.60, 1e-12);
    assert_close!(c.bucket_locks_s, 0.29, 1e-12);
    // 20 MB / 20 GB/s = 1 ms; with 1.1 ns per item measured, 1.1 ms: "about 1-5 ms".
    assert_close!(c.data_parallel_s, 1.1e-3, 1e-9);
    assert_eq!(c.choice, Strategy::DataParallel);
    assert!(
        c.bucket_locks_s / c.data_parallel_s > 100.0,
        "two orders of magnitude"
    );
}

/// §2.1: a four-stage instruction pipeline has a latency of 4 cycles and
/// finishes one instruction per cycle.
#[test]
fn pipeline_latency_and_throughput() {
    let p = models::pipeline::pipeline(4.0, 1.0, 1000.0, None).unwrap();
    assert_eq!(p.latency_s, 4.0);
    assert_eq!(p.throughput_per_s, 1.0);
    assert_eq!(p.time_s, 1003.0);
}

/// §4.3 example C: 312.5 M lines/s, 20.8 misses in flight, 1.3 per core.
#[test]
fn lines_per_second_and_mlp_per_core() {
    let lines = models::little::lines_per_s(20e9, 64.0).unwrap();
    assert!((lines - 312.5e6).abs() < 1.0);
    let mlp = models::little::outstanding_lines(20e9, 200.0 / 3e9, 64.0).unwrap();
    let per_core = models::little::mlp_per_core(mlp, 16.0).unwrap();
    assert!((per_core - 1.302).abs() < 1e-3, "{per_core}");
}

/// §4.4: a blocked multiply needs b ≥ 4 × 38.4 = 153.6 → 154 to reach the ridge.
#[test]
fn block_side_reaching_the_ridge() {
    let b = models::roofline::ridge_block_side(768e9, 20e9, 4.0).unwrap();
    assert!((b - 153.6).abs() < 1e-9);
    assert_eq!(b.ceil(), 154.0);
}

/// §2.2: half the bandwidth at n = T0·B = 12.8 kB; 90 % needs 9× that.
#[test]
fn message_size_for_a_fraction_of_the_bandwidth() {
    let net = models::alpha_beta::AlphaBeta::new(2e-6, 6.4e9).unwrap();
    let half = models::alpha_beta::bytes_for_fraction(&net, 0.5).unwrap();
    assert!((half - 12800.0).abs() < 1e-6);
    let ninety = models::alpha_beta::bytes_for_fraction(&net, 0.9).unwrap();
    assert!((net.fraction_of_peak(ninety) - 0.9).abs() < 1e-12);
    assert!(models::alpha_beta::bytes_for_fraction(&net, 1.0).is_err());
    // No start-up cost: every size is at full bandwidth, so no size is
    // the answer (not 0 B with a 0/0 check).
    let free = models::alpha_beta::AlphaBeta::new(0.0, 6.4e9).unwrap();
    let e = models::alpha_beta::bytes_for_fraction(&free, 0.5).unwrap_err();
    assert!(e.to_string().contains("T0 = 0"), "{e}");
}
