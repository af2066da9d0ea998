//! `calibrate point`: one figure at one working set and thread count, for
//! benchmark scripts that put calibrate beside other tools (likwid-bench, a
//! C pointer chase) on exactly the same size, threads and page policy.
//!
//! The working set (`--size`) is the total over all arrays and threads, as
//! likwid-bench's `-W N:<size>:<threads>` counts it; stream bandwidths are
//! counted as STREAM does (no write-allocate), the figure with
//! write-allocate is given beside.

use anyhow::Result;
use clap::ValueEnum;
use models::units::Si;
use serde_json::json;

use crate::bench::flops::measure_flops;
use crate::bench::flops::span::measure_span;
use crate::bench::increments::scatter_items_beyond_caches;
use crate::bench::latency::measure_chase;
use crate::bench::stream::measure_size;
use crate::cli::{PagesArg, PointArgs, PointKernel};
use crate::config::UsageError;
use crate::kernels::bins::BINS;
use crate::kernels::fma::FlopKernel;
use crate::kernels::span::DEPTHS;
use crate::kernels::Isa;
use crate::mem::Pages;
use crate::pin::{allowed_cpus, Team};
use crate::sysinfo::SysInfo;
use crate::timer::{record, take_recorded, Plan};
use crate::trust::trust_of;
use models::stats::{Better, Summary as Stats};
use models::units::binary_bytes;

/// Measures and prints one figure.
pub fn run(args: &PointArgs) -> Result<()> {
    let allowed = allowed_cpus();
    let sys = SysInfo::read(allowed.len());
    let threads = args.threads;
    if threads == 0 {
        return Err(UsageError::ZeroThreads.into());
    }
    if threads > allowed.len() {
        return Err(UsageError::TooManyThreads {
            asked: threads,
            cpus: allowed.len(),
        }
        .into());
    }
    let name = args
        .kernel
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    let one_thread = matches!(args.kernel, PointKernel::Chase | PointKernel::Span);
    let no_working_set = matches!(args.kernel, PointKernel::Peak(_) | PointKernel::Span);
    let inapplicable = if args.depth.is_some() && args.kernel != PointKernel::Span {
        Some("--depth applies to point span only")
    } else if args.size.is_some() && no_working_set {
        Some("--size does not apply: this figure has no working set")
    } else if args.pages.is_some() && no_working_set {
        Some("--pages does not apply: this figure has no working set")
    } else if threads > 1 && one_thread {
        Some("--threads does not apply: this figure is measured on one thread")
    } else {
        None
    };
    if let Some(why) = inapplicable {
        return Err(UsageError::Point(format!("point {name}: {why}; drop it")).into());
    }
    if args.kernel == PointKernel::Span && !args.depth.is_some_and(|d| DEPTHS.contains(&d)) {
        return Err(UsageError::Point(match args.depth {
            Some(d) => format!("--depth {d} is not one of {DEPTHS:?}"),
            None => format!("point span needs --depth, one of {DEPTHS:?}"),
        })
        .into());
    }
    let size = match (args.size, !no_working_set) {
        (Some(s), true) => {
            if sys.ram_bytes > 0 && s > sys.ram_bytes / 2 {
                return Err(UsageError::Point(format!(
                    "--size {} is more than half of this machine's {} of RAM",
                    binary_bytes(s as f64),
                    binary_bytes(sys.ram_bytes as f64)
                ))
                .into());
            }
            if let PointKernel::Stream(k) = args.kernel {
                if k.elems_for((s / threads as u64) as usize) == 0 {
                    return Err(UsageError::Point(format!(
                        "--size {s} B gives {threads} thread(s) less than one 8-byte element in each of {name}'s {} arrays",
                        k.arrays()
                    ))
                    .into());
                }
            }
            Some(s)
        }
        (None, true) => {
            return Err(
                UsageError::Point(format!("point {name} needs --size, e.g. --size 1GB")).into(),
            )
        }
        (_, false) => None,
    };
    let plan = if args.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    let pages = Pages::from(args.pages.unwrap_or(PagesArg::Huge));
    let team = Team::new(&allowed[..threads])?;
    if args.json {
        record();
    }
    let (stats, unit, extra) = measure(args, &team, &allowed, &sys, size, pages, &plan)?;
    let shown = Shown {
        name: &name,
        threads: if matches!(args.kernel, PointKernel::Chase | PointKernel::Span) {
            1
        } else {
            threads
        },
        size,
        pages,
        sizeless: if args.kernel == PointKernel::Span {
            "in L1"
        } else {
            "in registers"
        },
    };
    print(&shown, &stats, unit, extra, args.json);
    Ok(())
}

/// What a point measured, for its output line or JSON.
struct Shown<'a> {
    name: &'a str,
    threads: usize,
    size: Option<u64>,
    pages: Pages,
    /// Where a figure without a working set runs.
    sizeless: &'static str,
}

/// Prints the figure: its capability estimate with the interval, the
/// median, the clean and disturbed timings (every batch with its readings
/// in JSON), and a warning when it is unreliable.
fn print(p: &Shown, stats: &Stats, unit: &'static str, extra: serde_json::Value, json_out: bool) {
    let better = if unit == "s" {
        Better::Lower
    } else {
        Better::Higher
    };
    let best = stats.capability(better);
    let trust = trust_of(stats);
    if json_out {
        let batches: Vec<_> = take_recorded().into_iter().flatten().collect();
        let mut j = json!({
            "kernel": p.name,
            "threads": p.threads,
            "size_bytes": p.size,
            "pages": p.pages.label(),
            "value": best.point,
            "unit": unit,
            "ci_lo": best.lo,
            "ci_hi": best.hi,
            "median": stats.median,
            "mean": stats.mean,
            "min": stats.min,
            "max": stats.max,
            "cv": stats.cv,
            "n": stats.n,
            "noisy": stats.noisy,
            "clean_batches": trust.clean_batches,
            "disturbed_batches": trust.disturbed_batches,
            "unreliable": trust.unreliable,
            "batches": batches.iter().map(|(v, r)| json!({
                "per_unit_s": v, "duration_s": r.duration_s,
                "steal_s": r.steal_s, "run_delay_s": r.run_delay_s,
            })).collect::<Vec<_>>(),
        });
        if let (Some(o), Some(e)) = (j.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        println!("{j}");
    } else {
        let setting = match p.size {
            Some(s) => format!("{} with {} pages", binary_bytes(s as f64), p.pages.label()),
            None => p.sizeless.to_string(),
        };
        println!(
            "{} on {} thread(s), {setting}: {} (95% CI {} to {}, median {}, CV {:.1}%, {} clean and {} disturbed timings){}",
            p.name,
            p.threads,
            Si(best.point, unit),
            Si(best.lo, unit),
            Si(best.hi, unit),
            Si(stats.median, unit),
            100.0 * stats.cv,
            trust.clean_batches,
            trust.disturbed_batches,
            trust
                .unreliable
                .map(|w| format!("\nwarning: unreliable, not the machine's figure: {w}"))
                .unwrap_or_default()
        );
    }
}

/// Measures the figure `args` asks for: its sample summary, unit and the
/// kernel's own keys.
fn measure(
    args: &PointArgs,
    team: &Team,
    allowed: &[core_affinity::CoreId],
    sys: &SysInfo,
    size: Option<u64>,
    pages: Pages,
    plan: &Plan,
) -> Result<(Stats, &'static str, serde_json::Value)> {
    let threads = args.threads;
    Ok(match (args.kernel, size) {
        (PointKernel::Stream(k), Some(size)) => {
            let p = measure_size(team, size / threads as u64, &[k], pages, plan)?.remove(0);
            let wa = p.write_allocate_best();
            (
                p.bandwidth,
                "B/s",
                json!({ "write_allocate_value": wa, "bytes_per_elem": k.bytes_per_elem() }),
            )
        }
        (PointKernel::Chase, Some(size)) => {
            let one = Team::new(&allowed[..1])?;
            let p = measure_chase(&one, size, sys.line_bytes, pages, plan)?;
            (
                p.latency,
                "s",
                json!({ "huge_page_bytes": p.huge_page_bytes, "line_bytes": sys.line_bytes }),
            )
        }
        (PointKernel::Peak(precision), _) => {
            let fk = FlopKernel::widest(precision);
            (
                measure_flops(team, fk, plan)?,
                "FLOP/s",
                json!({ "kernel": fk.label() }),
            )
        }
        (PointKernel::Span, _) => {
            // Checked in `run`.
            let depth = args.depth.unwrap_or(DEPTHS[0]);
            let one = Team::new(&allowed[..1])?;
            let isa = Isa::detect();
            (
                measure_span(&one, isa, depth, plan)?,
                "s",
                json!({ "depth": depth, "isa": isa.name() }),
            )
        }
        (PointKernel::Scatter, Some(size)) => {
            let per_thread = size / threads as u64;
            let s =
                scatter_items_beyond_caches(team, plan, per_thread, pages)?.ok_or_else(|| {
                    UsageError::Point(format!(
                        "--size {} gives each thread less than a line per bin of output",
                        binary_bytes(size as f64)
                    ))
                })?;
            (
                s,
                "s",
                json!({ "bins": BINS, "output_bytes_per_thread": per_thread }),
            )
        }
        (PointKernel::Stream(_) | PointKernel::Chase | PointKernel::Scatter, None) => {
            return Err(UsageError::Point("this kernel needs --size".into()).into())
        }
    })
}
