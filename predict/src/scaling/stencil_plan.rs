//! `predict scaling` for the ghost-row stencil (lecture §3.1, §4.1, §4.2):
//! T(P) = (N/P)·N·t_update + k·T0 + 2·N·elem/B on each network, t_update
//! from the profile's memory bandwidth or `--update-time`.

use models::profile::Profile;
use models::units::Si;
use models::Estimate;

use super::analysis::analyse;
use super::curves::Stencil;
use super::network;
use super::report::Report;
use super::uncertainty::{Param, Uncertainty};
use super::{config, dram, maybe_profile, missing_profile, networks, ScalingArgs};
use crate::error::BadInput;

/// b / e as an estimate (a time from a bandwidth), σ by the delta method.
fn per(bytes: f64, e: &Estimate) -> Estimate {
    Estimate {
        point: bytes / e.point,
        lo: bytes / e.hi.max(e.point),
        hi: bytes / e.lo.min(e.point).max(f64::MIN_POSITIVE),
        std_err: e.std_err.map(|s| bytes * s / (e.point * e.point)),
    }
}

fn scale(e: &Estimate, k: f64) -> Estimate {
    Estimate {
        point: e.point * k,
        lo: e.lo * k,
        hi: e.hi * k,
        std_err: e.std_err.map(|s| s * k),
    }
}

/// t_update with its interval and a description.
fn update_param(
    a: &ScalingArgs,
    profile: Option<&(Profile, String)>,
) -> anyhow::Result<(Param, String)> {
    if let Some(t) = a.update_time {
        let s = t.seconds("update-time", a.clock)?;
        if s.is_nan() || s <= 0.0 {
            return Err(BadInput(format!("--update-time = {s} s is not positive")).into());
        }
        return Ok((
            Param::positive("t_update", "s", Estimate::exact(s), "--update-time"),
            format!("t_update = {} per element update (given)", Si(s, "s")),
        ));
    }
    let (p, src) = profile.ok_or_else(|| {
        missing_profile("the stencil needs the memory bandwidth or --update-time")
    })?;
    let bpu = a.bytes_per_update();
    let r = a.ranks_per_node();
    let level = dram(p);
    let (bw, what) = if r <= 1.0 {
        match level.and_then(|l| l.bandwidth_1t_Bps) {
            Some(b) => (b, "one-thread DRAM bandwidth".to_string()),
            None => match p.summary.stream_triad_1t_Bps {
                Some(b) => (Estimate::exact(b), "one-thread STREAM triad".to_string()),
                None => {
                    return Err(BadInput(format!(
                        "{src} has no one-thread memory bandwidth; run `calibrate --only stream` or give --update-time"
                    ))
                    .into())
                }
            },
        }
    } else {
        match level.and_then(|l| l.bandwidth_Bps) {
            Some(b) => (scale(&b, 1.0 / r), format!("all-threads DRAM bandwidth / {r} ranks")),
            None => match p.summary.stream_triad_Bps {
                Some(b) => (Estimate::exact(b / r), format!("STREAM triad / {r} ranks")),
                None => {
                    return Err(BadInput(format!(
                        "{src} has no memory bandwidth; run `calibrate --only stream` or give --update-time"
                    ))
                    .into())
                }
            },
        }
    };
    let e = per(bpu, &bw);
    Ok((
        Param::positive("t_update", "s", e, &format!("{src}: {bpu} B / {what}")),
        format!(
            "t_update = {} B / {} = {} per element update",
            bpu,
            network::fmt_est(&bw, "B/s"),
            Si(e.point, "s")
        ),
    ))
}

pub(super) fn stencil_report(a: &ScalingArgs) -> anyhow::Result<Report> {
    if !(a.n() >= 2.0 && a.n().fract() == 0.0) {
        return Err(BadInput(format!(
            "--n = {} is not accepted: the grid side must be a whole number >= 2",
            a.n()
        ))
        .into());
    }
    if !(a.messages() >= 1.0 && a.messages().fract() == 0.0) {
        return Err(BadInput(format!(
            "--messages = {} is not accepted: it must be a whole number >= 1",
            a.messages()
        ))
        .into());
    }
    if a.ranks_per_node().is_nan() || a.ranks_per_node() < 1.0 {
        return Err(BadInput(format!(
            "--ranks-per-node = {} is not accepted: it must be >= 1",
            a.ranks_per_node()
        ))
        .into());
    }
    let profile = maybe_profile(a)?;
    let cfg = config(a, if a.weak { 65536.0 } else { a.n() })?;
    let (update, update_text) = update_param(a, profile.as_ref())?;
    let (nets, notes) = networks(a, profile.as_ref())?;
    let mut setup = vec![
        format!(
            "N = {}, {} B per element, {} message start-up(s) per iteration, {}",
            a.n(),
            a.elem_bytes(),
            a.messages(),
            if a.overlap {
                "exchange overlapped with the update"
            } else {
                "no overlap"
            }
        ),
        update_text,
    ];
    if !a.weak && cfg.p_max > a.n() {
        return Err(BadInput(format!(
            "--p-max {} exceeds --n {}: 1D blocked rows give each rank at least one whole row (use --p-max <= N, or --weak)",
            cfg.p_max,
            a.n()
        ))
        .into());
    }
    let mut series = Vec::new();
    for net in &nets {
        let curve = Stencil {
            n: a.n(),
            elem_bytes: a.elem_bytes(),
            messages: a.messages(),
            overlap: a.overlap,
            weak: a.weak,
            regimes: net.ranges(),
        };
        setup.push(format!(
            "{}: {}",
            net.name,
            net.describe_for(curve.message_bytes(if a.weak { cfg.p_max } else { 2.0 }))
        ));
        let mut params = vec![update.clone()];
        params.extend(net.params());
        let unc = Uncertainty::independent(params);
        series.push(analyse(&net.name, &curve, &unc, &cfg));
    }
    Ok(Report {
        kernel: "ghost-row stencil".into(),
        scaling: if a.weak { "weak" } else { "strong" }.into(),
        setup,
        config: cfg,
        series,
        fit: None,
        measured_p_max: None,
        notes,
    })
}
