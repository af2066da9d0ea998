//! The ping-pong's results: the fits per mode, the profile's `network`
//! section and headline figures, the detailed JSON section, and the human
//! table.

use std::fmt;

use models::fit::FitError;
use models::profile::pingpong::{Evicted, Headline, ModeFit, PingpongSection};
use models::profile::{Network, Profile, Section};
use models::units::{exact_binary_bytes, Si};
use models::Estimate;

use super::drift::{drifted, Drift};
use super::measure::{Mode, SizePoint};
use super::overlap::OverlapResult;
use super::regimes::{self, RegimeFit};
use super::transport::Transport;
use super::{PingpongError, PingpongOptions};

/// One mode's points and their regime fit.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeResult {
    pub mode: Mode,
    /// The sizes in increasing order.
    pub points: Vec<SizePoint>,
    pub fit: RegimeFit,
}

/// Fits the medians of `points`.
pub fn fit_points(points: &[SizePoint], max_regimes: usize) -> Result<RegimeFit, FitError> {
    let x: Vec<f64> = points.iter().map(|p| p.bytes as f64).collect();
    let y: Vec<f64> = points.iter().map(|p| p.one_way_s.median).collect();
    regimes::fit_regimes(&x, &y, max_regimes)
}

impl ModeResult {
    /// Fits the points of one mode.
    ///
    /// # Errors
    /// [`PingpongError::Fit`] when the fit refuses the points.
    pub fn new(
        mode: Mode,
        points: Vec<SizePoint>,
        max_regimes: usize,
    ) -> Result<Self, PingpongError> {
        let fit = fit_points(&points, max_regimes).map_err(|source| PingpongError::Fit {
            mode: mode.name(),
            source,
        })?;
        Ok(Self { mode, points, fit })
    }
}

/// Everything rank 0 reports.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq)]
pub struct PingpongReport {
    pub transport: Transport,
    /// Host names of ranks 0 and 1.
    pub hosts: Vec<String>,
    pub blocking: ModeResult,
    pub nonblocking: ModeResult,
    pub overlap: Option<OverlapResult>,
    /// The blocking ping-pong after an evicting sweep ([`super::evicted`]):
    /// rank 0's sweep, bytes, and the fit.
    pub evicted: Option<(u64, ModeResult)>,
    /// Anchor sizes measured again at the end.
    pub drift: Vec<Drift>,
    /// Small-message T0 (first blocking regime), seconds.
    pub t0_s: Estimate,
    /// Large-message B (last blocking regime), bytes/s.
    pub bandwidth_Bps: Estimate,
    /// Noisy figures and fit caveats.
    pub warnings: Vec<String>,
    pub options: PingpongOptions,
}

impl PingpongReport {
    /// Assembles the report and its warnings.
    ///
    /// # Errors
    /// [`PingpongError::Degenerate`] when the blocking fit gives no
    /// physical headline pair.
    pub fn new(
        transport: Transport,
        hosts: Vec<String>,
        blocking: ModeResult,
        nonblocking: ModeResult,
        overlap: Option<OverlapResult>,
        drift: Vec<Drift>,
        options: PingpongOptions,
    ) -> Result<Self, PingpongError> {
        let head = regimes::headline(&blocking.fit).map_err(PingpongError::Degenerate)?;
        let mut warnings: Vec<String> = head.note.iter().cloned().collect();
        for m in [&blocking, &nonblocking] {
            warnings.extend(noisy_warning(m.mode.name(), &m.points));
            for n in &m.fit.notes {
                warnings.push(format!("{}: {n}", m.mode.name()));
            }
        }
        for d in drift.iter().filter(|d| drifted(d)) {
            warnings.push(format!(
                "the machine drifted during the sweep: {} took {} at first and {} at the end ({:+.0}%); another program was probably running, so the figures are unreliable",
                exact_binary_bytes(d.bytes),
                Si(d.first_s, "s"),
                Si(d.again_s, "s"),
                100.0 * d.change
            ));
        }
        if let Some(o) = &overlap {
            // The fraction can be near 0, so its spread is judged in
            // absolute terms, not by the CV.
            if o.fraction.ci_hi - o.fraction.ci_lo > 0.2 {
                warnings.push(format!(
                    "overlap: the fraction is uncertain, 95% interval [{:.2}, {:.2}]",
                    o.fraction.ci_lo, o.fraction.ci_hi
                ));
            }
        }
        Ok(Self {
            transport,
            hosts,
            blocking,
            nonblocking,
            overlap,
            evicted: None,
            drift,
            t0_s: head.t0_s,
            bandwidth_Bps: head.bandwidth_Bps,
            warnings,
            options,
        })
    }

    /// The report with the ping-pong after an evicting sweep of
    /// `sweep_bytes` per rank, measured at `points` (none when they could
    /// not be fitted, which the warnings say).
    pub fn with_evicted(mut self, sweep_bytes: u64, points: Vec<SizePoint>) -> Self {
        let what = format!(
            "after an evicting sweep of {}",
            exact_binary_bytes(sweep_bytes)
        );
        self.warnings.extend(noisy_warning(&what, &points));
        match ModeResult::new(Mode::Blocking, points, self.options.max_regimes) {
            Ok(m) => self.evicted = Some((sweep_bytes, m)),
            Err(e) => self.warnings.push(format!("{what}: {e}")),
        }
        self
    }

    /// The overlap fraction for the profile, clamped to [0, 1] (single
    /// triples can fall outside through noise; the section keeps them raw).
    pub fn overlap_fraction(&self) -> Option<Estimate> {
        self.overlap.as_ref().map(|o| {
            let c = |v: f64| v.clamp(0.0, 1.0);
            let e = o.fraction.estimate();
            Estimate::new(c(e.point), c(e.lo), c(e.hi))
        })
    }

    /// The profile's `network` section: the blocking regimes, the overlap,
    /// and every point of both modes.
    pub fn network(&self) -> Network {
        let points = [&self.blocking, &self.nonblocking]
            .iter()
            .flat_map(|m| m.points.iter().cloned())
            .collect();
        Network {
            transport: self.transport.name.clone(),
            hosts: self.hosts.clone(),
            regimes: self.blocking.fit.regimes.clone(),
            overlap_fraction: self.overlap_fraction(),
            points,
            evicted_regimes: self
                .evicted
                .as_ref()
                .map(|(_, m)| m.fit.regimes.clone())
                .unwrap_or_default(),
        }
    }

    /// The detailed section `sections.pingpong`.
    pub fn section(&self) -> PingpongSection {
        let mode = |m: &ModeResult| ModeFit {
            regimes: m.fit.regimes.clone(),
            points_per_regime: m.fit.points_per_regime.clone(),
            breakpoints_bytes: m.fit.breakpoints_bytes.clone(),
            criterion: m
                .fit
                .criterion
                .iter()
                .map(|c| c.is_finite().then_some(*c))
                .collect(),
            notes: m.fit.notes.clone(),
        };
        let o = &self.options;
        let t = &self.transport;
        PingpongSection {
            method: "ranks 0 and 1 of MPI_COMM_WORLD; one-way time = round trip / 2; per size a doubling warm-up, then samples of at least min_sample_s; median and distribution-free 95% interval; T(n) = T0 + n/B fitted per regime by segmented least squares with weights 1/t^2; blocking regimes go to network.regimes".into(),
            transport: t.clone(),
            hosts: self.hosts.clone(),
            headline: Headline { t0_s: self.t0_s, bandwidth_Bps: self.bandwidth_Bps },
            blocking: mode(&self.blocking),
            nonblocking: mode(&self.nonblocking),
            overlap: self.overlap.clone(),
            evicted: self.evicted.as_ref().map(|(sweep_bytes, m)| Evicted {
                sweep_bytes: *sweep_bytes,
                fit: mode(m),
                points: m.points.clone(),
            }),
            drift: self.drift.clone(),
            options: o.clone(),
            warnings: self.warnings.clone(),
        }
    }

    /// Writes the headline figures, the network and the section into
    /// `profile` (the other sections stay as they are).
    pub fn apply_to(&self, profile: &mut Profile) {
        profile.summary.mpi_t0_s = Some(self.t0_s.point);
        profile.summary.mpi_bandwidth_Bps = Some(self.bandwidth_Bps.point);
        profile.network = Some(self.network());
        profile.sections.insert(Section::Pingpong(self.section()));
    }
}

fn estimate_text(e: &Estimate, unit: &'static str) -> String {
    // f64::MAX marks an open (unbounded) end, see `regimes::bandwidth_from_slope`.
    let v = |x: f64, open: &str| {
        if x == f64::MAX {
            open.to_string()
        } else {
            Si(x, unit).to_string()
        }
    };
    format!(
        "{} [{}, {}]",
        v(e.point, "unresolved"),
        v(e.lo, "open"),
        v(e.hi, "open")
    )
}

fn summary_text(s: &models::stats::Summary) -> String {
    format!(
        "{} [{}, {}]{}",
        Si(s.median, "s"),
        Si(s.ci_lo, "s"),
        Si(s.ci_hi, "s"),
        if s.noisy { " ~" } else { "" }
    )
}

/// The warning that names the sizes of `points` (measured as `what`)
/// whose figure is noisy; none when none is.
fn noisy_warning(what: &str, points: &[SizePoint]) -> Option<String> {
    let noisy: Vec<String> = points
        .iter()
        .filter(|p| p.one_way_s.noisy)
        .map(|p| exact_binary_bytes(p.bytes))
        .collect();
    (!noisy.is_empty()).then(|| {
        format!(
            "{what}: {} of {} sizes are noisy (CV > 5% or > 10% outliers): {}",
            noisy.len(),
            points.len(),
            noisy.join(", ")
        )
    })
}

/// The regimes of T(n) = T0 + n/B of `m`, a line each, under `what`
/// ("blocking").
fn write_regimes(f: &mut fmt::Formatter<'_>, what: &str, m: &ModeResult) -> fmt::Result {
    writeln!(f)?;
    writeln!(f, "  {what} regimes of T(n) = T0 + n/B:")?;
    writeln!(
        f,
        "  {:<22} {:<34} {:<34} {:>7} {:>6}",
        "sizes", "T0 [95% CI]", "B [95% CI]", "R²", "points"
    )?;
    for (r, n) in m.fit.regimes.iter().zip(&m.fit.points_per_regime) {
        writeln!(
            f,
            "  {:<22} {:<34} {:<34} {:>7.4} {:>6}",
            format!(
                "{}..{}",
                exact_binary_bytes(r.from_bytes as u64),
                exact_binary_bytes(r.to_bytes as u64)
            ),
            estimate_text(&r.t0_s, "s"),
            estimate_text(&r.bandwidth_Bps, "B/s"),
            r.r_squared,
            n
        )?;
    }
    Ok(())
}

impl fmt::Display for PingpongReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(
            f,
            "MPI ping-pong, ranks 0 and 1 (lecture §2.2, §4.1): transport {}",
            self.transport.name
        )?;
        writeln!(f, "  {}", self.transport.detail)?;
        writeln!(
            f,
            "  {} sizes per mode, {}..{}; samples of >= {}, {} per size{}; watchdog {:.0} s",
            self.blocking.points.len(),
            exact_binary_bytes(self.blocking.points.first().map_or(0, |p| p.bytes)),
            exact_binary_bytes(self.blocking.points.last().map_or(0, |p| p.bytes)),
            Si(o.min_sample_s, "s"),
            o.samples,
            if o.quick { " (quick)" } else { "" },
            o.watchdog_timeout_s,
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "  {:<10} {:<34} {:<12} {:<34}",
            "size", "blocking one-way [95% CI]", "n/t", "nonblocking one-way [95% CI]"
        )?;
        for (b, n) in self.blocking.points.iter().zip(&self.nonblocking.points) {
            writeln!(
                f,
                "  {:<10} {:<34} {:<12} {:<34}",
                exact_binary_bytes(b.bytes),
                summary_text(&b.one_way_s),
                Si(b.bandwidth_Bps, "B/s").to_string(),
                summary_text(&n.one_way_s),
            )?;
        }
        writeln!(f, "  (~ marks a noisy figure)")?;
        for m in [&self.blocking, &self.nonblocking] {
            write_regimes(f, m.mode.name(), m)?;
        }
        if let Some((sweep_bytes, m)) = &self.evicted {
            let what = format!(
                "blocking, each round trip after an evicting sweep of {} per rank,",
                exact_binary_bytes(*sweep_bytes)
            );
            write_regimes(f, &what, m)?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "  headline: T0 = {} (small messages), B = {} (large messages)",
            estimate_text(&self.t0_s, "s"),
            estimate_text(&self.bandwidth_Bps, "B/s")
        )?;
        if let Some(ov) = &self.overlap {
            let fr = &ov.fraction;
            writeln!(
                f,
                "  overlap of a {} exchange with computation: f = {:.3} [{:.3}, {:.3}] (t_comm {}, t_comp {}, t_total {})",
                exact_binary_bytes(ov.bytes),
                fr.median,
                fr.ci_lo,
                fr.ci_hi,
                Si(ov.comm_s.median, "s"),
                Si(ov.comp_s.median, "s"),
                Si(ov.total_s.median, "s"),
            )?;
        }
        for w in &self.warnings {
            writeln!(f, "  warning: {w}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pingpong::measure::point;
    use std::collections::BTreeMap;

    fn synthetic_mode(mode: Mode) -> ModeResult {
        let pts = crate::pingpong::sizes::powers_of_two(1 << 20)
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let n = b as f64;
                let t = if n <= 2048.0 {
                    2e-7 + n / 5e9
                } else {
                    4e-6 + n / 1e10
                };
                let e = 1.0 + 0.002 * (i % 3) as f64;
                point(mode, b, 10, vec![t * e, t * e * 1.001, t * e * 0.999])
            })
            .collect();
        ModeResult::new(mode, pts, 4).unwrap()
    }

    fn report() -> PingpongReport {
        let transport = Transport {
            name: "tcp".into(),
            detail: "Open MPI v4.1.4; OMPI_MCA_btl=tcp,self; ranks 0 and 1 on one host (vm)".into(),
            selection: BTreeMap::new(),
            library: "Open MPI v4.1.4".into(),
            same_host: true,
        };
        let overlap = crate::pingpong::overlap::summarize(
            1 << 20,
            1000,
            &[[1.0, 1.0, 1.9], [1.0, 1.0, 1.95], [1.0, 1.0, 2.05]],
        );
        PingpongReport::new(
            transport,
            vec!["vm".into(), "vm".into()],
            synthetic_mode(Mode::Blocking),
            synthetic_mode(Mode::Nonblocking),
            Some(overlap),
            vec![Drift {
                bytes: 8,
                first_s: 1e-6,
                again_s: 1.5e-6,
                change: 0.5,
            }],
            PingpongOptions::quick(),
        )
        .unwrap()
        .with_evicted(4 << 20, synthetic_mode(Mode::Blocking).points)
    }

    #[test]
    fn profile_gets_headline_network_and_section() {
        let r = report();
        let mut p = Profile::new(Default::default());
        p.summary.stream_triad_Bps = Some(1e10);
        r.apply_to(&mut p);
        assert!((p.summary.mpi_t0_s.unwrap() - 2e-7).abs() < 2e-8);
        assert!((p.summary.mpi_bandwidth_Bps.unwrap() - 1e10).abs() < 5e8);
        assert_eq!(p.summary.stream_triad_Bps, Some(1e10));
        let net = p.network.as_ref().unwrap();
        assert_eq!(net.transport, "tcp");
        assert_eq!(net.regimes.len(), 2);
        assert_eq!(net.points.len(), 2 * 21);
        // The overlap of the triple with t_total > comm + comp clamps to 0.
        let f = net.overlap_fraction.unwrap();
        assert!(f.lo >= 0.0 && f.hi <= 1.0 && (f.point - 0.05).abs() < 1e-12);
        assert_eq!(net.evicted_regimes.len(), 2);
        let section = p.sections.pingpong.as_ref().unwrap();
        let evicted = section.evicted.as_ref().unwrap();
        assert_eq!((evicted.sweep_bytes, evicted.points.len()), (4 << 20, 21));
        // The profile still parses back (no infinities in the JSON).
        let back = Profile::from_json(&p.to_json()).unwrap();
        let net_back = back.network.unwrap();
        assert_eq!(net_back.transport, "tcp");
        assert_eq!(net_back.regimes.len(), 2);
    }

    #[test]
    fn table_names_transport_regimes_and_headline() {
        let text = report().to_string();
        assert!(text.contains("transport tcp"), "{text}");
        assert!(text.contains("blocking regimes"), "{text}");
        assert!(
            text.contains("after an evicting sweep of 4 MiB per rank, regimes"),
            "{text}"
        );
        assert!(text.contains("headline: T0 = "), "{text}");
        assert!(text.contains("overlap of a 1 MiB exchange"), "{text}");
        assert!(text.contains("drifted during the sweep: 8 B"), "{text}");
    }
}
