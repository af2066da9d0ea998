//! The checks of each typed section ([`super::validate`]).

use super::{each, invalid, opt_rate, positive, summary, Check, Rate};
use crate::profile::c2c::{C2cSection, Handoff, HandoffPoint, Increment, Increments, TeamRegion};
use crate::profile::flops::{FlopsKernel, FlopsSection, SpanPoint};
use crate::profile::latency::{LatencyPoint, LatencySection, Plateau};
use crate::profile::lock::{LockKindResult, LockPoint, LockSection};
use crate::profile::mlp::{Little, MlpPoint, MlpSection};
use crate::profile::pingpong::{Drift, Evicted, ModeFit, Overlap, PingpongSection};
use crate::profile::stream::{BytesPerElem, StreamLevel, StreamPoint, StreamSection, StreamSweep};
use crate::profile::NetworkRegime;
use crate::profile::ProfileError;

type R = Result<(), ProfileError>;

impl Check for NetworkRegime {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("from_bytes", &self.from_bytes),
                ("to_bytes", &self.to_bytes),
                ("t0_s", &self.t0_s),
                ("bandwidth_Bps", &self.bandwidth_Bps),
                ("r_squared", &self.r_squared),
            ],
        )
    }
}

impl Check for LockSection {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("critical_ns", &self.critical_ns),
                ("step_s", &self.step_s),
                ("duration_s", &self.duration_s),
                ("kinds", &self.kinds),
                ("t_crit_s", &self.t_crit_s),
            ],
        )
    }
}

impl Check for LockKindResult {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("points", &self.points),
                ("t_crit_s", &self.t_crit_s),
                ("t_work_s", &self.t_work_s),
                ("saturation_threads", &self.saturation_threads),
            ],
        )
    }
}

impl Check for LockPoint {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("throughput_ops", &self.throughput_ops),
                ("model_ops", &self.model_ops),
                ("model_error", &self.model_error),
            ],
        )
    }
}

impl Check for MlpSection {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("points", &self.points),
                ("max_bandwidth_Bps", &opt_rate(self.max_bandwidth_Bps)),
                ("saturation_share", &self.saturation_share),
                ("little", &self.little),
            ],
        )
    }
}

impl Check for MlpPoint {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("time_per_step_s", &self.time_per_step_s),
                ("bandwidth_Bps", &Rate(self.bandwidth_Bps)),
            ],
        )
    }
}

impl Check for Little {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("latency_s", &self.latency_s),
                ("bandwidth_Bps", &opt_rate(self.bandwidth_Bps)),
                ("k", &self.k),
            ],
        )
    }
}

impl Check for C2cSection {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("round_trip_s", &self.round_trip_s),
                ("one_way_s", &self.one_way_s),
                ("handoff", &self.handoff),
                ("increments", &self.increments),
                ("regions", &self.regions),
            ],
        )
    }
}

impl Check for TeamRegion {
    fn check(&self, at: &str) -> R {
        self.per_region_s.check(&format!("{at}.per_region_s"))
    }
}

impl Check for Handoff {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("points", &self.points),
                ("fit", &self.fit),
                ("regimes", &self.regimes),
            ],
        )
    }
}

impl Check for HandoffPoint {
    fn check(&self, at: &str) -> R {
        self.time_s.check(&format!("{at}.time_s"))
    }
}

impl Check for Increments {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("own_line", &self.own_line),
                ("shared_line", &self.shared_line),
                ("local", &self.local),
                ("histogram", &self.histogram),
                ("scatter", &self.scatter),
                ("scatter_dram", &self.scatter_dram),
                ("scatter_curve", &self.scatter_curve),
            ],
        )
    }
}

impl Check for Increment {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("per_increment_s", &self.per_increment_s),
                ("per_step_s", &self.per_step_s),
                ("per_item_s", &self.per_item_s),
            ],
        )
    }
}

impl Check for LatencySection {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("clock_hz", &opt_rate(self.clock_hz)),
                ("points", &self.points),
                ("levels", &self.levels),
                ("breakpoints_bytes", &self.breakpoints_bytes),
                ("spikes_bytes", &self.spikes_bytes),
                ("tlb_s", &self.tlb_s),
            ],
        )
    }
}

impl Check for LatencyPoint {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("latency_s", &self.latency_s),
                ("latency_cycles", &self.latency_cycles),
            ],
        )
    }
}

impl Check for Plateau {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("from_bytes", &self.from_bytes),
                ("to_bytes", &self.to_bytes),
                ("size_bytes", &self.size_bytes),
                ("latency_s", &self.latency_s),
            ],
        )
    }
}

impl Check for StreamSection {
    fn check(&self, at: &str) -> R {
        for (k, b) in &self.bytes_per_elem {
            b.check(&format!("{at}.bytes_per_elem.{k}"))?;
        }
        each(
            at,
            &[
                ("sweeps", &self.sweeps),
                ("base_pages", &self.base_pages),
                ("levels", &self.levels),
                ("dram", &self.dram),
            ],
        )
    }
}

impl Check for BytesPerElem {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("stream", &self.stream),
                ("write_allocate", &self.write_allocate),
                ("load", &self.load),
                ("store", &self.store),
                ("allocate", &self.allocate),
            ],
        )
    }
}

impl Check for StreamSweep {
    fn check(&self, at: &str) -> R {
        self.points.check(&format!("{at}.points"))
    }
}

impl Check for StreamPoint {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("bandwidth_Bps", &self.bandwidth_Bps),
                (
                    "bandwidth_write_allocate_Bps",
                    &Rate(self.bandwidth_write_allocate_Bps),
                ),
            ],
        )?;
        let bursts: Vec<Rate> = self.bursts_Bps.iter().map(|&b| Rate(b)).collect();
        bursts.check(&format!("{at}.bursts_Bps"))?;
        let probes = self.bursts_line_s.len();
        if probes != 0 && probes != self.bursts_Bps.len() {
            return Err(invalid(
                &format!("{at}.bursts_line_s"),
                probes as f64,
                "one pair of probes per burst",
            ));
        }
        let lines: Vec<Rate> = self
            .bursts_line_s
            .iter()
            .flatten()
            .map(|&t| Rate(t))
            .collect();
        lines.check(&format!("{at}.bursts_line_s"))
    }
}

impl Check for StreamLevel {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("from_bytes", &self.from_bytes),
                ("to_bytes", &self.to_bytes),
                ("points", &self.points),
                ("read_bandwidth_Bps", &self.read_bandwidth_Bps),
            ],
        )
    }
}

impl Check for FlopsSection {
    fn check(&self, at: &str) -> R {
        self.kernels.check(&format!("{at}.kernels"))?;
        for (op, s) in &self.chain {
            s.check(&format!("{at}.chain.{op}"))?;
        }
        self.span.check(&format!("{at}.span"))
    }
}

impl Check for SpanPoint {
    fn check(&self, at: &str) -> R {
        positive(&format!("{at}.depth"), self.depth as f64)?;
        self.element.check(&format!("{at}.element"))
    }
}

impl Check for FlopsKernel {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("flops", &self.flops),
                ("flops_per_iteration", &self.flops_per_iteration),
                (
                    "flops_per_cycle_per_thread",
                    &self.flops_per_cycle_per_thread,
                ),
            ],
        )
    }
}

impl Check for PingpongSection {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("headline.t0_s", &self.headline.t0_s),
                ("headline.bandwidth_Bps", &self.headline.bandwidth_Bps),
                ("blocking", &self.blocking),
                ("nonblocking", &self.nonblocking),
                ("overlap", &self.overlap),
                ("evicted", &self.evicted),
                ("drift", &self.drift),
                ("options.min_sample_s", &self.options.min_sample_s),
                (
                    "options.watchdog_timeout_s",
                    &self.options.watchdog_timeout_s,
                ),
            ],
        )
    }
}

impl Check for ModeFit {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("regimes", &self.regimes),
                ("breakpoints_bytes", &self.breakpoints_bytes),
            ],
        )?;
        let criterion: Vec<f64> = self.criterion.iter().flatten().copied().collect();
        criterion.check(&format!("{at}.criterion"))
    }
}

impl Check for Overlap {
    fn check(&self, at: &str) -> R {
        summary(&format!("{at}.fraction"), &self.fraction, false)?;
        summary(&format!("{at}.comm_s"), &self.comm_s, true)?;
        summary(&format!("{at}.comp_s"), &self.comp_s, true)?;
        summary(&format!("{at}.total_s"), &self.total_s, true)
    }
}

impl Check for Evicted {
    fn check(&self, at: &str) -> R {
        self.fit.check(&format!("{at}.fit"))
    }
}

impl Check for Drift {
    fn check(&self, at: &str) -> R {
        each(
            at,
            &[
                ("first_s", &self.first_s),
                ("again_s", &self.again_s),
                ("change", &self.change),
            ],
        )
    }
}
