//! `predict scaling --fit runs.csv [--comm ...] [--network ...]`: the fit
//! of one's own runs ([`super::fit`]) and, with `--comm`, the same code on
//! each network the planner knows (the profile's measured one,
//! `--network-profile`, `--network`; [`super::comm`]). Every other flag of
//! `predict scaling` either changes this result or is refused here with a
//! line saying why.

use std::path::Path;

use super::analysis::analyse;
use super::comm::{parse_comm, CommSpec, OwnCode};
use super::curves::Fitted;
use super::fit::{self, FitOptions, RunsFit};
use super::report::{fmt_p, Report};
use super::terms::Domain;
use super::{config, maybe_profile, networks, ScalingArgs};
use crate::error::BadInput;

const STENCIL: &str =
    "describes the built-in stencil; --fit takes the computation from your runs, so drop it";
const BINNING: &str = "describes the binning kernel; drop it with --fit";
const NEEDS_COMM: &str = "applies to your code only through what it communicates: add --comm msgs=2,bytes=4MB/P^0.5 (your code's messages and bytes per iteration)";

/// The flags of the built-in kernels, refused with --fit.
fn built_in_flag(a: &ScalingArgs) -> Option<(&'static str, &'static str)> {
    let checks = [
        (
            a.kernel.is_some(),
            "--kernel",
            "picks a built-in model, but --fit models the runs of your own code; drop one of them",
        ),
        (a.elem_bytes.is_some(), "--elem-bytes", STENCIL),
        (a.bytes_per_update.is_some(), "--bytes-per-update", STENCIL),
        (a.update_time.is_some(), "--update-time", STENCIL),
        (
            a.clock.is_some(),
            "--clock",
            "converts cycles of the built-in models; the runs' times are in seconds, so drop it",
        ),
        (a.ranks_per_node.is_some(), "--ranks-per-node", STENCIL),
        (
            a.weak,
            "--weak",
            "is for the built-in stencil; --fit fits the runs as given (strong scaling of one problem), so drop it",
        ),
        (
            a.messages.is_some(),
            "--messages",
            "counts the built-in stencil's messages; describe your code's with --comm msgs=N,bytes=SIZE",
        ),
        (a.items.is_some(), "--items", BINNING),
        (a.buckets.is_some(), "--buckets", BINNING),
        (a.sort_bytes.is_some(), "--sort-bytes", BINNING),
        (a.t_crit.is_some(), "--t-crit", BINNING),
        (a.t_work.is_some(), "--t-work", BINNING),
    ];
    checks.into_iter().find(|c| c.0).map(|c| (c.1, c.2))
}

/// The first flag that cannot apply to a fit, as the line that says why.
fn refused(a: &ScalingArgs) -> Option<String> {
    if let Some((flag, why)) = built_in_flag(a) {
        return Some(format!("{flag} {why}"));
    }
    if a.comm.is_none() {
        let network = [
            (!a.networks.is_empty(), "--network"),
            (!a.network_profiles.is_empty(), "--network-profile"),
            (a.profile.is_some(), "--profile (read for its network)"),
            (a.no_profile_network, "--no-profile-network"),
            (a.overlap, "--overlap"),
        ];
        if let Some((_, flag)) = network.iter().find(|c| c.0) {
            return Some(format!("{flag} in --fit mode {NEEDS_COMM}"));
        }
    }
    if a.title.is_some() && a.out.is_none() {
        return Some("--title names the chart: add --out chart.svg".into());
    }
    None
}

/// The surface term's domain from --n and --dims.
fn domain(a: &ScalingArgs) -> Result<Option<Domain>, BadInput> {
    match (a.n, a.dims) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(BadInput(
            "--n with --fit is the size of the domain for the surface term: add --dims d (e.g. 2 or 3)".into(),
        )),
        (None, Some(_)) => Err(BadInput(
            "--dims needs --n N, the points of the whole domain (e.g. --n 4096^2 as 16777216)".into(),
        )),
        (Some(n), Some(d)) => {
            if !(d >= 2.0 && d.fract() == 0.0 && d <= 10.0) {
                return Err(BadInput(format!(
                    "--dims = {d} is not accepted: it must be a whole number from 2 to 10 (in one dimension the surface term is the constant term)"
                )));
            }
            if !(n >= 1.0 && n.is_finite()) {
                return Err(BadInput(format!(
                    "--n = {n} is not accepted: the domain must have at least one point"
                )));
            }
            Ok(Some(Domain { n, dims: d }))
        }
    }
}

/// The fit, and with --comm the code on every network.
pub(super) fn fit_report(a: &ScalingArgs, path: &Path) -> anyhow::Result<Report> {
    if let Some(why) = refused(a) {
        return Err(BadInput(why).into());
    }
    let domain = domain(a)?;
    let comm = a.comm.as_deref().map(parse_comm).transpose()?;
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {source}: {e}")))?;
    let runs = fit::read_runs(&text, &source)?;
    let p_hi = runs.iter().map(|r| r.p).fold(1.0, f64::max);
    let p_lo = runs.iter().map(|r| r.p).fold(f64::INFINITY, f64::min);
    let mut a2 = a.clone();
    a2.p_min = a.p_min.or(Some(p_lo.max(1.0)));
    let cfg = config(&a2, 16.0 * p_hi)?;
    let f = fit::fit_runs(
        runs,
        &source,
        FitOptions {
            domain,
            seed: a.seed,
        },
    )?;
    let short = path
        .file_name()
        .map_or_else(|| source.clone(), |n| n.to_string_lossy().into_owned());
    let curve = Fitted {
        term: f.term,
        domain,
    };
    let unc = fit::uncertainty(&f, &source);
    let mut series = vec![analyse(&format!("fit of {short}"), &curve, &unc, &cfg)];
    let mut setup = vec![format!(
        "{} runs from P = {} to {}; beyond P = {} the curves are extrapolated (marked * in the table)",
        f.runs.len(),
        fmt_p(p_lo),
        fmt_p(p_hi),
        fmt_p(p_hi)
    )];
    let mut notes = Vec::new();
    if let Some(spec) = comm {
        own_code(
            a,
            &f,
            spec,
            &short,
            &cfg,
            &mut series,
            &mut setup,
            &mut notes,
        )?;
    }
    Ok(Report {
        kernel: "fit".into(),
        scaling: "strong".into(),
        setup,
        config: cfg,
        series,
        fit: Some(f),
        measured_p_max: Some(p_hi),
        notes,
    })
}

/// One series per network for the code described by --comm.
#[allow(clippy::too_many_arguments)]
fn own_code(
    a: &ScalingArgs,
    f: &RunsFit,
    spec: CommSpec,
    short: &str,
    cfg: &super::analysis::Config,
    series: &mut Vec<super::analysis::SeriesResult>,
    setup: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    let profile = maybe_profile(a)?;
    if a.no_profile_network && profile.is_none() {
        return Err(BadInput(
            "--no-profile-network: there is no profile whose network could be left out; drop it"
                .into(),
        )
        .into());
    }
    if a.no_profile_network && a.profile.is_some() {
        return Err(BadInput(
            "--profile is only read for its network with --fit, and --no-profile-network leaves that out; drop one of them".into(),
        )
        .into());
    }
    let (nets, more) = networks(a, profile.as_ref())?;
    notes.extend(more);
    let [t1, fr, _] = f.values();
    setup.push(format!(
        "your code (--comm {}): computation from the fit, T1·(f + (1 − f)/P) with T1 = {}, f = {:.4}; {} iteration(s) per run{}",
        spec.text,
        models::units::Si(t1, "s"),
        fr,
        spec.iters,
        if a.overlap {
            ", communication overlapped with the parallel work"
        } else {
            ""
        }
    ));
    let p_ref = f.p_max().max(2.0);
    for net in &nets {
        let what = spec.describe_at(p_ref);
        let regime = if spec.msgs.at(p_ref) > 0.0 {
            net.describe_for(spec.message_bytes(p_ref))
        } else {
            net.describe_for(spec.allreduce_bytes[0])
        };
        let theta: Vec<f64> = net.params().iter().map(|p| p.estimate.point).collect();
        setup.push(format!(
            "{}: {what}; {regime}; communication per run at P = {}: {} (the fit of the runs: {})",
            net.name,
            fmt_p(p_ref),
            models::units::Si(spec.time_s(&net.ranges(), &theta, p_ref), "s"),
            models::units::Si(f.values()[2] * f.term.g(p_ref, f.domain), "s")
        ));
        let curve = OwnCode {
            spec: spec.clone(),
            overlap: a.overlap,
            regimes: net.ranges(),
        };
        let unc = fit::compute_uncertainty(f, short).extended(net.params());
        series.push(analyse(
            &format!("{short} on {}", net.name),
            &curve,
            &unc,
            cfg,
        ));
    }
    Ok(())
}
