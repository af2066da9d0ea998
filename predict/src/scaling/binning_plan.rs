//! `predict scaling --kernel binning`: binning n items into buckets with
//! P threads under a global lock, per-bucket locks, or a data-parallel
//! counting sort (lecture §2.9, §3.5, §4.5), with the profile's t_crit and
//! bandwidths.

use models::profile::Profile;
use models::Estimate;

use super::analysis::analyse;
use models::binning::Strategy;

use super::curves::Binning;
use super::report::Report;
use super::uncertainty::{Param, Uncertainty};
use super::{config, dram, maybe_profile, missing_profile, ScalingArgs};
use crate::error::BadInput;

/// t_crit and t_work: from the flags, else the profile's lock section or
/// summary.
fn lock_params(
    a: &ScalingArgs,
    profile: Option<&(Profile, String)>,
) -> anyhow::Result<(Param, Param)> {
    let (lock_tc, lock_tw) = profile.map_or((None, None), |(p, _)| lock_section(p));
    let src = profile.map_or("", |(_, s)| s.as_str()).to_string();
    let t_crit = match a.t_crit {
        Some(t) => Param::positive(
            "t_crit",
            "s",
            Estimate::exact(t.seconds("t-crit", a.clock)?),
            "--t-crit",
        ),
        None => match (lock_tc, profile.and_then(|(p, _)| p.summary.t_crit_s)) {
            (Some(e), _) => Param::positive("t_crit", "s", e, &format!("{src}: lock section")),
            (None, Some(t)) => Param::positive(
                "t_crit",
                "s",
                Estimate::exact(t),
                &format!("{src}: summary"),
            ),
            (None, None) => {
                return Err(match profile {
                    None => missing_profile("binning needs t_crit"),
                    Some(_) => BadInput(format!(
                        "{src} has no lock figures; run `calibrate --only lock` or give --t-crit"
                    )),
                }
                .into())
            }
        },
    };
    let t_work = match a.t_work {
        Some(t) => Param::non_negative(
            "t_work",
            "s",
            Estimate::exact(t.seconds("t-work", a.clock)?),
            "--t-work",
        ),
        None => Param::non_negative(
            "t_work",
            "s",
            Estimate::exact(lock_tw.unwrap_or(0.0).max(0.0)),
            if lock_tw.is_some() {
                "profile: lock section"
            } else {
                "none measured: 0"
            },
        ),
    };
    Ok((t_crit, t_work))
}

/// A figure of the `lock` section: (t_crit, t_work) of the mutex, else the first kind.
fn lock_section(p: &Profile) -> (Option<Estimate>, Option<f64>) {
    p.sections
        .lock
        .as_ref()
        .map_or((None, None), |l| l.contention())
}

pub(super) fn binning_report(a: &ScalingArgs) -> anyhow::Result<Report> {
    for (name, v) in [("items", a.items()), ("buckets", a.buckets())] {
        if !(v >= 1.0 && v.fract() == 0.0) {
            return Err(BadInput(format!(
                "--{name} = {v} is not accepted: it must be a whole number >= 1"
            ))
            .into());
        }
    }
    let profile = maybe_profile(a)?;
    let (t_crit, t_work) = lock_params(a, profile.as_ref())?;
    let (p, psrc) = profile
        .as_ref()
        .ok_or_else(|| missing_profile("binning needs the memory bandwidth"))?;
    let level = dram(p);
    let b1 = level
        .and_then(|l| l.bandwidth_1t_Bps)
        .or(p.summary.stream_triad_1t_Bps.map(Estimate::exact))
        .ok_or_else(|| {
            BadInput(format!(
                "{psrc} has no one-thread memory bandwidth; run `calibrate --only stream`"
            ))
        })?;
    let ball = level
        .and_then(|l| l.bandwidth_Bps)
        .or(p.summary.stream_triad_Bps.map(Estimate::exact))
        .ok_or_else(|| {
            BadInput(format!(
                "{psrc} has no all-threads memory bandwidth; run `calibrate --only stream`"
            ))
        })?;
    let threads = p.provenance.threads.max(1) as f64;
    let cfg = config(a, 64f64.max(2.0 * threads))?;
    let params = vec![
        t_crit,
        t_work,
        Param::positive("B (1 thread)", "B/s", b1, &format!("{psrc}: DRAM")),
        Param::positive(
            &format!("B ({threads} threads)"),
            "B/s",
            ball,
            &format!("{psrc}: DRAM"),
        ),
    ];
    let unc = Uncertainty::independent(params);
    let setup = vec![
        format!(
            "{} items into {} buckets; the data-parallel sort moves {} B per item at min(P·B_1thread, B_all)",
            a.items(), a.buckets(), a.sort_bytes()
        ),
        format!("bandwidth saturates beyond the {threads} threads the profile measured"),
    ];
    let series = [
        Strategy::GlobalLock,
        Strategy::BucketLocks,
        Strategy::DataParallel,
    ]
    .into_iter()
    .map(|s| {
        let curve = Binning {
            strategy: s,
            items: a.items(),
            buckets: a.buckets(),
            sort_bytes: a.sort_bytes(),
        };
        analyse(&s.name(a.buckets()), &curve, &unc, &cfg)
    })
    .collect();
    Ok(Report {
        kernel: "binning".into(),
        scaling: "strong".into(),
        setup,
        config: cfg,
        series,
        fit: None,
        measured_p_max: None,
        notes: Vec::new(),
    })
}
