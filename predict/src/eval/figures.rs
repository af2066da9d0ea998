//! Machine figures for the flags left out of `predict eval`, taken from
//! `--profile FILE|NAME`: `predict eval --profile textbook alpha-beta
//! --bytes 32KiB` takes T0 and B from the lecture's example machine.
//! Every figure taken this way is named in the derivation's notes.

use std::path::Path;

use models::profile::{CeilingKernel, Profile};

use super::derivation::{q, Derivation};
use crate::args::Time;
use crate::error::BadInput;

/// The profile `eval` may take figures from.
#[derive(Debug, Default)]
pub struct Figures {
    profile: Option<(Profile, String)>,
}

impl Figures {
    /// No profile: every figure must be given.
    pub fn none() -> Self {
        Self::default()
    }

    /// The profile `spec` names (see [`crate::profiles`]), or none.
    ///
    /// # Errors
    /// As [`crate::profiles::load`].
    pub fn load(spec: Option<&Path>) -> anyhow::Result<Self> {
        let profile = match spec {
            Some(s) => {
                let (p, found) = crate::profiles::load(s)?;
                Some((p, found.name))
            }
            None => None,
        };
        Ok(Self { profile })
    }

    /// `given`, else the profile's `summary.<key>` (SI units), noted in `d`.
    ///
    /// # Errors
    /// [`BadInput`] naming the flag when neither is there.
    pub fn value(
        &self,
        d: &mut Derivation,
        given: Option<f64>,
        flag: &str,
        key: &str,
        unit: &'static str,
    ) -> Result<f64, BadInput> {
        if let Some(v) = given {
            return Ok(v);
        }
        let (v, name) = self.summary(flag, key)?;
        d.note(format!(
            "--{flag} {} from the profile {name} (summary.{key})",
            q(v, unit)
        ));
        Ok(v)
    }

    /// The profile's `summary.<key>` and the profile's name, for a
    /// figure `--flag` left out.
    ///
    /// # Errors
    /// [`BadInput`] naming the flag when there is no profile or no such
    /// figure in it.
    pub fn summary(&self, flag: &str, key: &str) -> Result<(f64, &str), BadInput> {
        let (profile, name) = self.profile.as_ref().ok_or_else(|| {
            BadInput(format!(
                "give --{flag}, or --profile FILE|NAME (e.g. --profile textbook) to take it from a machine profile"
            ))
        })?;
        profile
            .summary
            .figure(key)
            .map(|v| (v, name.as_str()))
            .ok_or_else(|| {
                BadInput(format!(
                    "give --{flag}: the profile {name} has no summary.{key}"
                ))
            })
    }

    /// A time flag in seconds: `given` (cycles converted with [`Self::clock`]),
    /// else the profile's `summary.<key>`.
    ///
    /// # Errors
    /// As [`Self::value`], and for cycles without any clock.
    pub fn time(
        &self,
        d: &mut Derivation,
        given: Option<Time>,
        flag: &str,
        key: &str,
        clock: Option<f64>,
    ) -> anyhow::Result<f64> {
        match given {
            Some(t) => t.seconds(flag, self.clock(d, t, clock)),
            None => Ok(self.value(d, None, flag, key, "s")?),
        }
    }

    /// The clock to convert `t` with: `--clock`, else the profile's clock
    /// when `t` is in cycles (noted in `d`).
    pub fn clock(&self, d: &mut Derivation, t: Time, given: Option<f64>) -> Option<f64> {
        if given.is_some() || !t.0.cycles {
            return given;
        }
        let (profile, name) = self.profile.as_ref()?;
        let hz = profile.provenance.clock_hz?;
        let note = format!("--clock {} from the profile {name}", q(hz, "Hz"));
        if !d.notes.contains(&note) {
            d.note(note);
        }
        Some(hz)
    }

    /// Peak FLOP/s: `given`, else the profile's fastest all-thread ceiling
    /// of `precision` (f64 falls back on `summary.peak_flops_f64`).
    ///
    /// # Errors
    /// [`BadInput`] when neither is there.
    pub fn peak_flops(
        &self,
        d: &mut Derivation,
        given: Option<f64>,
        precision: &str,
    ) -> Result<f64, BadInput> {
        let Some((profile, name)) = self.profile.as_ref().filter(|_| given.is_none()) else {
            return self.value(d, given, "peak-flops", "peak_flops_f64", "FLOP/s");
        };
        let threads = profile.provenance.threads;
        match profile.ceiling(precision, threads, CeilingKernel::Registers, None) {
            Some(c) => {
                d.note(format!(
                    "--peak-flops {} from the profile {name} (ceiling \"{}\", {} threads)",
                    q(c.flops.point, "FLOP/s"),
                    c.name,
                    c.threads
                ));
                Ok(c.flops.point)
            }
            None if precision == "f64" => {
                self.value(d, None, "peak-flops", "peak_flops_f64", "FLOP/s")
            }
            None => Err(BadInput(format!(
                "give --peak-flops: the profile {name} has no {precision} ceiling"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_values_win_and_profile_values_are_noted() {
        let f = Figures::load(Some(Path::new("textbook"))).unwrap();
        let mut d = Derivation::new("t", "t");
        assert_eq!(
            f.value(&mut d, Some(1.0), "t0", "mpi_t0_s", "s").unwrap(),
            1.0
        );
        assert!(d.notes.is_empty());
        assert_eq!(f.value(&mut d, None, "t0", "mpi_t0_s", "s").unwrap(), 2e-6);
        assert!(d.notes[0].contains("textbook"), "{:?}", d.notes);
        assert_eq!(f.peak_flops(&mut d, None, "f32").unwrap(), 768e9);
        assert_eq!(f.peak_flops(&mut d, None, "f64").unwrap(), 384e9);
        let cycles = crate::args::time("200cycles").unwrap();
        let l = f.time(&mut d, Some(cycles), "latency", "dram_latency_s", None);
        assert!((l.unwrap() - 66.667e-9).abs() < 1e-11);
    }

    #[test]
    fn missing_figures_name_the_flag() {
        let mut d = Derivation::new("t", "t");
        let e = Figures::none()
            .value(&mut d, None, "t0", "mpi_t0_s", "s")
            .unwrap_err();
        assert!(e.0.contains("--t0") && e.0.contains("--profile"), "{e}");
        let f = Figures::load(Some(Path::new("textbook"))).unwrap();
        let e = f
            .value(&mut d, None, "l1", "l1_latency_s", "s")
            .unwrap_err();
        assert!(e.0.contains("summary.l1_latency_s"), "{e}");
    }
}
