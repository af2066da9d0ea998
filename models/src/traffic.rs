//! The time a memory level takes for a loop's traffic, from the STREAM
//! kernels measured at the same working set and thread count (§2.5, §4.3,
//! §4.4).
//!
//! One "bandwidth" per level cannot serve loops whose mixes of loads and
//! stores differ: on some machines a copy (one load, one store) runs at the
//! same elements per second as a triad (two loads, one store), as if the
//! stores set the pace; on others every byte on the bus counts alike. The
//! model has four roofs, each the highest rate any measured kernel reached
//! on that resource:
//!
//! - reads: B_r = max_k L_k / t_k (the loads' concurrency, Little's law §4.3),
//! - line fills: B_f = max_k (L_k + A_k) / t_k (every line read from the
//!   level, the allocate reads A of stores included: a store's allocate
//!   read is a read the level serves, but not one a load waits for),
//! - writes: B_w = max_k S_k / t_k (write-back and write-combining),
//! - the bus: B_bus = max_k (L_k + A_k + S_k) / t_k (all bytes moved),
//!
//! and a loop's traffic (L, S, A) takes
//! T = max(L / B_r, (L + A) / B_f, S / B_w, (L + A + S) / B_bus),
//! the Roofline's max over resources applied inside the memory system. Each
//! roof is a rate that was reached, so T is never slower than a measured
//! kernel of the same mix (but may be faster: the bound below closes
//! that). The fill roof is what reads
//! beside allocating stores reach: on the Zen 4 VM at two threads in DRAM
//! the load kernel moved 38–40 GB/s and add and triad 40–44 GB/s of line
//! fills, while the bus roof came from the update and store kernels
//! (61–65 GB/s, neither reading and allocating at once), so the three
//! roofs alone put add and triad 9–15% under their own measured times.
//!
//! Other machines add their streams' costs instead, as the ECM model does:
//! a core whose line-fill buffers bound it pays for every load stream and
//! every allocating store stream in turn. That form,
//! T = c_L·L' + c_S·A + c_U·U with L' the plain loads, A the allocating
//! stores and U the bytes updated in place, is fitted to the same kernels by
//! weighted least squares. [`LevelModel`] keeps both and uses the one whose
//! relative error over the level's own kernels is smaller: the machine's
//! measurements decide whether its memory streams overlap or add.
//!
//! Neither form may predict a loop faster than the measured kernel whose
//! mix of loads, allocates and stores is nearest the loop's ran: on one
//! core the rate at which lines arrive follows the misses it keeps in
//! flight (Little's law, §4.3), and those follow the loop's streams, so a
//! rate one mix reached is not one another mix can borrow. Kerncraft reads
//! a level's bandwidth the same way, from the benchmark kernel with the
//! nearest ratio of read to write streams. On the Zen 4 VM with AVX2
//! kernels, one thread at DRAM, the triad moved 40 GB/s of line fills and
//! the copy 36 GB/s: the fill roof, the triad's, put a copy-like loop 10%
//! under its own kernel's time, and the 4096×4096 stencil and the MPI
//! ghost stencil, both copy-like sweeps, 13–19% under their measured
//! times.

use crate::kernel::Traffic;
use nalgebra::{DMatrix, DVector};
use serde::Serialize;

/// One measured kernel: bytes per element it loads, stores and allocates,
/// and its time per element.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixSample {
    pub load_bytes: f64,
    pub store_bytes: f64,
    pub allocate_bytes: f64,
    pub seconds: f64,
}

impl MixSample {
    /// The kernel's bytes per element as a traffic.
    pub fn traffic(&self) -> Traffic {
        Traffic {
            load_bytes: self.load_bytes,
            store_bytes: self.store_bytes,
            allocate_bytes: self.allocate_bytes,
        }
    }

    /// Whether the sample is a time that was measured.
    fn usable(&self) -> bool {
        self.seconds.is_finite() && self.seconds > 0.0
    }
}

/// A traffic's mix: the shares of its loads, allocates and stores in all
/// the bytes it moves; `None` for no traffic.
fn mix_shares(t: &Traffic) -> Option<[f64; 3]> {
    let bus = t.bus_bytes();
    (bus > 0.0).then(|| {
        [
            t.load_bytes / bus,
            t.allocate_bytes / bus,
            t.store_bytes / bus,
        ]
    })
}

/// The measured kernel whose mix is nearest a loop's, and what it paid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearestMix {
    /// The kernel's bytes per element and time.
    pub kernel: MixSample,
    /// The loop's bytes at that kernel's rate, s.
    pub seconds: f64,
}

/// The four roofs of a memory level for one thread count, bytes/s (all
/// threads together).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[allow(non_snake_case)]
pub struct TrafficRoofs {
    pub read_Bps: f64,
    pub fill_Bps: f64,
    pub write_Bps: f64,
    pub bus_Bps: f64,
}

/// Which roof a traffic time came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Roof {
    Read,
    Fill,
    Write,
    Bus,
}

impl Roof {
    pub fn name(self) -> &'static str {
        match self {
            Roof::Read => "read",
            Roof::Fill => "fill",
            Roof::Write => "write",
            Roof::Bus => "bus",
        }
    }
}

impl TrafficRoofs {
    /// The highest rates the samples reached; `None` without a usable
    /// sample. A roof no sample exercised (no stores measured) is infinite:
    /// nothing measured bounds it.
    pub fn from_samples(samples: &[MixSample]) -> Option<TrafficRoofs> {
        let usable: Vec<&MixSample> = samples.iter().filter(|s| s.usable()).collect();
        if usable.is_empty() {
            return None;
        }
        let best = |f: &dyn Fn(&MixSample) -> f64| {
            let r = usable.iter().map(|s| f(s) / s.seconds).fold(0.0, f64::max);
            if r > 0.0 {
                r
            } else {
                f64::INFINITY
            }
        };
        Some(TrafficRoofs {
            read_Bps: best(&|s| s.load_bytes),
            fill_Bps: best(&|s| s.load_bytes + s.allocate_bytes),
            write_Bps: best(&|s| s.store_bytes),
            bus_Bps: best(&|s| s.load_bytes + s.allocate_bytes + s.store_bytes),
        })
    }

    /// T = max(L / B_r, (L + A) / B_f, S / B_w, (L + A + S) / B_bus), and
    /// the roof that binds (on a tie, the first of read, write, bus and
    /// fill).
    pub fn time_s(&self, t: &Traffic) -> (f64, Roof) {
        [
            (t.load_bytes / self.read_Bps, Roof::Read),
            (t.store_bytes / self.write_Bps, Roof::Write),
            (t.bus_bytes() / self.bus_Bps, Roof::Bus),
            (
                (t.load_bytes + t.allocate_bytes) / self.fill_Bps,
                Roof::Fill,
            ),
        ]
        .into_iter()
        .map(|(s, r)| (if s.is_nan() { 0.0 } else { s }, r))
        .fold((0.0, Roof::Bus), |a, b| if b.0 > a.0 { b } else { a })
    }

    /// Each roof scaled by `k` (an interval end of the measurements).
    pub fn scaled(self, k: f64) -> TrafficRoofs {
        TrafficRoofs {
            read_Bps: self.read_Bps * k,
            fill_Bps: self.fill_Bps * k,
            write_Bps: self.write_Bps * k,
            bus_Bps: self.bus_Bps * k,
        }
    }
}

/// Seconds per byte of each kind of stream, as the adding form counts them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamCosts {
    /// A byte loaded and not written back.
    pub load_s_per_byte: f64,
    /// A byte stored to a line not read before (its allocate read included).
    pub store_s_per_byte: f64,
    /// A byte read and written back in place.
    pub update_s_per_byte: f64,
}

/// The three stream classes of a traffic: plain loads, allocating stores
/// and in-place updates (stores without an allocate read).
fn classes(t: &Traffic) -> [f64; 3] {
    let update = (t.store_bytes - t.allocate_bytes).max(0.0);
    [(t.load_bytes - update).max(0.0), t.allocate_bytes, update]
}

impl StreamCosts {
    /// Least squares of T = c·classes over the samples, each weighted by
    /// 1/T (relative errors); classes no sample exercises are left out of
    /// the fit and priced from the others (an update as a load plus a
    /// store, a load or a store as half an update). Negative costs are
    /// refitted without their class. `None` when nothing can be fitted.
    pub fn fit(samples: &[MixSample]) -> Option<StreamCosts> {
        let rows: Vec<([f64; 3], f64)> = samples
            .iter()
            .filter(|s| s.usable())
            .map(|s| (classes(&s.traffic()), s.seconds))
            .collect();
        let mut active: Vec<usize> = (0..3)
            .filter(|&j| rows.iter().any(|(x, _)| x[j] > 0.0))
            .collect();
        loop {
            if active.is_empty() || rows.len() < active.len() {
                return None;
            }
            let a = DMatrix::from_fn(rows.len(), active.len(), |i, j| {
                rows[i].0[active[j]] / rows[i].1
            });
            let b = DVector::from_element(rows.len(), 1.0);
            let c = a.svd(true, true).solve(&b, 1e-12).ok()?;
            match c.iter().position(|&v| v <= 0.0) {
                Some(k) => {
                    active.remove(k);
                }
                None => {
                    let mut cost = [f64::NAN; 3];
                    for (j, &col) in active.iter().enumerate() {
                        cost[col] = c[j];
                    }
                    let [l, s, u] = cost;
                    let l = if l.is_nan() { (u / 2.0).max(s) } else { l };
                    let s = if s.is_nan() { (u / 2.0).max(l) } else { s };
                    let u = if u.is_nan() { l + s } else { u };
                    let out = StreamCosts {
                        load_s_per_byte: l,
                        store_s_per_byte: s,
                        update_s_per_byte: u,
                    };
                    return (l.is_finite() && s.is_finite() && u.is_finite()).then_some(out);
                }
            }
        }
    }

    /// T = c_L·L' + c_S·A + c_U·U.
    pub fn time_s(&self, t: &Traffic) -> f64 {
        let [l, a, u] = classes(t);
        l * self.load_s_per_byte + a * self.store_s_per_byte + u * self.update_s_per_byte
    }
}

/// Whether a level's streams overlap (the roofs' max) or add (the stream
/// costs' sum), as its own kernels show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Overlapping,
    Adding,
}

/// A level's traffic model for one thread count: both forms, their
/// relative RMS errors over the level's kernels, the form chosen, and the
/// kernels themselves, whose nearest mix bounds a loop's time from below.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelModel {
    pub roofs: TrafficRoofs,
    pub costs: Option<StreamCosts>,
    pub form: Form,
    /// RMS of (model − measured)/measured over the kernels, each form.
    pub rms_overlapping: f64,
    pub rms_adding: f64,
    #[serde(skip)]
    pub kernels: Vec<MixSample>,
}

fn rms(samples: &[MixSample], model: impl Fn(&Traffic) -> f64) -> f64 {
    let errs: Vec<f64> = samples
        .iter()
        .filter(|s| s.seconds > 0.0)
        .map(|s| (model(&s.traffic()) - s.seconds) / s.seconds)
        .collect();
    (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt()
}

impl LevelModel {
    /// Both forms fitted to one level's kernels; the adding form is chosen
    /// only when it describes them better.
    pub fn from_samples(samples: &[MixSample]) -> Option<LevelModel> {
        let roofs = TrafficRoofs::from_samples(samples)?;
        let costs = StreamCosts::fit(samples);
        let rms_overlapping = rms(samples, |t| roofs.time_s(t).0);
        let rms_adding = costs.map_or(f64::INFINITY, |c| rms(samples, |t| c.time_s(t)));
        Some(LevelModel {
            roofs,
            costs,
            form: if rms_adding < rms_overlapping {
                Form::Adding
            } else {
                Form::Overlapping
            },
            rms_overlapping,
            rms_adding,
            kernels: samples.iter().copied().filter(MixSample::usable).collect(),
        })
    }

    /// The chosen form's time for `t`, never below the time of the
    /// measured kernel of the nearest mix ([`Self::nearest_mix`]).
    pub fn time_s(&self, t: &Traffic) -> f64 {
        let form = self.form_time_s(t);
        self.nearest_mix(t).map_or(form, |n| form.max(n.seconds))
    }

    /// The chosen form's time for `t` alone.
    pub fn form_time_s(&self, t: &Traffic) -> f64 {
        match (self.form, self.costs) {
            (Form::Adding, Some(c)) => c.time_s(t),
            _ => self.roofs.time_s(t).0,
        }
    }

    /// The measured kernel whose shares of loads, allocates and stores in
    /// the bytes moved are nearest `t`'s (Euclidean; of kernels with the
    /// same mix, the fastest per byte), and `t`'s bytes at its rate:
    /// T_mix = (L + A + S) · t_k / (L_k + A_k + S_k). `None` without
    /// traffic or kernels.
    pub fn nearest_mix(&self, t: &Traffic) -> Option<NearestMix> {
        let want = mix_shares(t)?;
        let distance = |k: &MixSample| {
            mix_shares(&k.traffic()).map_or(f64::INFINITY, |s| {
                s.iter()
                    .zip(want)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt()
            })
        };
        let per_byte = |k: &MixSample| k.seconds / k.traffic().bus_bytes();
        let nearest = self
            .kernels
            .iter()
            .map(distance)
            .fold(f64::INFINITY, f64::min);
        let kernel = *self
            .kernels
            .iter()
            .filter(|k| distance(k) <= nearest + 1e-9)
            .min_by(|a, b| per_byte(a).total_cmp(&per_byte(b)))?;
        Some(NearestMix {
            kernel,
            seconds: t.bus_bytes() * per_byte(&kernel),
        })
    }

    /// Every rate and cost scaled to an interval end: rates times `k`,
    /// costs divided by it.
    pub fn scaled(self, k: f64) -> LevelModel {
        LevelModel {
            roofs: self.roofs.scaled(k),
            costs: self.costs.map(|c| StreamCosts {
                load_s_per_byte: c.load_s_per_byte / k,
                store_s_per_byte: c.store_s_per_byte / k,
                update_s_per_byte: c.update_s_per_byte / k,
            }),
            kernels: self
                .kernels
                .into_iter()
                .map(|s| MixSample {
                    seconds: s.seconds / k,
                    ..s
                })
                .collect(),
            ..self
        }
    }
}

/// The time of traffic `t` at working set `x` on a curve of (working set,
/// level model) sorted by working set: linear in log-size between the two
/// nearest points' times (the end points' outside the curve), with the
/// nearer point's model.
pub fn time_at(curve: &[(f64, LevelModel)], x: f64, t: &Traffic) -> Option<(f64, LevelModel)> {
    let (first, last) = (curve.first()?, curve.last()?);
    if x <= first.0 {
        return Some((first.1.time_s(t), first.1.clone()));
    }
    if x >= last.0 {
        return Some((last.1.time_s(t), last.1.clone()));
    }
    let k = curve.partition_point(|p| p.0 < x).clamp(1, curve.len() - 1);
    let ((x0, a), (x1, b)) = (&curve[k - 1], &curve[k]);
    let (x0, x1) = (*x0, *x1);
    let f = if x1 > x0 {
        (x.ln() - x0.ln()) / (x1.ln() - x0.ln())
    } else {
        1.0
    };
    let near = if f < 0.5 { a } else { b };
    Some(((1.0 - f) * a.time_s(t) + f * b.time_s(t), near.clone()))
}

#[cfg(test)]
mod tests;
