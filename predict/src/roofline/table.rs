//! The chart's data as text: the CSV table, the human table, and the
//! caption sentence.

use models::units::Si;
use serde::Serialize;

use super::data::{CeilingKind, RooflineData};
use crate::chart::output::Num;

/// The chart data as one CSV table: a `record` column says whether a row
/// is the `chart` (its machine, threads and provenance), a `ceiling`, the
/// `ridge` or a `point`; the other columns are empty where they do not
/// apply (a point given without an interval has empty lo and hi). Numbers are in SI units (B/s, FLOP/s,
/// flop/byte), written with the shortest exact representation.
pub fn to_csv(d: &RooflineData) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |r: CsvRow| w.serialize(r).expect("writing to memory");
    row(CsvRow {
        record: "chart",
        name: Some(d.machine.clone()),
        threads: Some(d.threads as u64),
        profile: Some(d.profile.clone()),
        calibration_date: Some(d.calibration_date.clone()),
        calibrated_with: Some(d.calibrated_with.clone()),
        tool_version: Some(d.tool_version.clone()),
        ..CsvRow::default()
    });
    for c in &d.ceilings {
        row(CsvRow {
            record: "ceiling",
            kind: Some(match c.kind {
                CeilingKind::Bandwidth => "bandwidth",
                CeilingKind::Compute => "compute",
            }),
            name: Some(c.name.clone()),
            label: Some(c.label.clone()),
            value: Some(Num(c.value)),
            value_lo: Some(Num(c.lo)),
            value_hi: Some(Num(c.hi)),
            unit: Some(c.unit),
            threads: Some(c.threads as u64),
            ridge_ai_flop_per_byte: Some(Num(c.ridge_ai)),
            method: Some(c.method.clone()),
            ..CsvRow::default()
        });
    }
    row(CsvRow {
        record: "ridge",
        name: Some(format!("{} x {}", d.ridge.memory, d.ridge.compute)),
        label: Some(format!("ridge {}", ai_text(d.ridge.ai))),
        value: Some(Num(d.ridge.flops)),
        unit: Some("FLOP/s"),
        threads: Some(d.threads as u64),
        ridge_ai_flop_per_byte: Some(Num(d.ridge.ai)),
        ai_flop_per_byte: Some(Num(d.ridge.ai)),
        ..CsvRow::default()
    });
    for p in &d.points {
        row(CsvRow {
            record: "point",
            name: Some(p.name.clone()),
            unit: Some("FLOP/s"),
            threads: p.threads,
            kernel: Some(p.kernel.clone()),
            variant: Some(p.variant.clone()),
            size: Some(p.size.clone()),
            ai_flop_per_byte: Some(Num(p.ai)),
            measured_flops: Some(Num(p.measured_flops)),
            measured_flops_lo: p.measured_flops_lo.map(Num),
            measured_flops_hi: p.measured_flops_hi.map(Num),
            predicted_flops: p.predicted_flops.map(Num),
            attainable_flops: Some(Num(p.attainable_flops)),
            binding: p.binding.clone(),
            ..CsvRow::default()
        });
    }
    String::from_utf8(w.into_inner().expect("in-memory writer")).expect("UTF-8 fields")
}

/// One row of the chart's CSV: a ceiling, the ridge or a kernel point; the
/// columns its kind does not use stay empty.
#[derive(Debug, Default, Serialize)]
struct CsvRow {
    record: &'static str,
    kind: Option<&'static str>,
    name: Option<String>,
    label: Option<String>,
    value: Option<Num>,
    value_lo: Option<Num>,
    value_hi: Option<Num>,
    unit: Option<&'static str>,
    threads: Option<u64>,
    ridge_ai_flop_per_byte: Option<Num>,
    kernel: Option<String>,
    variant: Option<String>,
    size: Option<String>,
    ai_flop_per_byte: Option<Num>,
    measured_flops: Option<Num>,
    measured_flops_lo: Option<Num>,
    measured_flops_hi: Option<Num>,
    predicted_flops: Option<Num>,
    attainable_flops: Option<Num>,
    binding: Option<String>,
    method: Option<String>,
    profile: Option<String>,
    calibration_date: Option<String>,
    calibrated_with: Option<String>,
    tool_version: Option<String>,
}

/// An intensity as text: "5.2 flop/B"; a power of ten outside
/// [0.001, 100000) ("2.50e-5 flop/B").
pub fn ai_text(ai: f64) -> String {
    if ai != 0.0 && !(1e-3..1e5).contains(&ai.abs()) {
        return format!("{ai:.2e} flop/B");
    }
    let digits = if ai >= 100.0 {
        0
    } else if ai >= 10.0 {
        1
    } else if ai >= 1.0 {
        2
    } else {
        3
    };
    format!("{ai:.digits$} flop/B")
}

/// The human table of `predict roofline`.
pub fn to_text(d: &RooflineData) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Roofline of {} ({} thread{})\n\n",
        if d.machine.is_empty() {
            "this machine"
        } else {
            &d.machine
        },
        d.threads,
        if d.threads == 1 { "" } else { "s" }
    ));
    s.push_str(&format!(
        "{:<10} {:<22} {:>16} {:>26} {:>12}\n",
        "ceiling", "name", "value", "95% interval", "ridge AI"
    ));
    for c in &d.ceilings {
        let kind = match c.kind {
            CeilingKind::Bandwidth => "bandwidth",
            CeilingKind::Compute => "compute",
        };
        s.push_str(&format!(
            "{:<10} {:<22} {:>16} {:>26} {:>12}\n",
            kind,
            c.name,
            Si(c.value, c.unit).to_string(),
            format!("{} – {}", Si(c.lo, c.unit), Si(c.hi, c.unit)),
            ai_text(c.ridge_ai)
        ));
    }
    s.push_str(&format!(
        "\nridge point: {} at {} ({} meets {})\n",
        ai_text(d.ridge.ai),
        Si(d.ridge.flops, "FLOP/s"),
        d.ridge.memory,
        d.ridge.compute
    ));
    if !d.points.is_empty() {
        s.push_str(&format!(
            "\n{:<30} {:>14} {:>15} {:>27} {:>15} {:>15}  {}\n",
            "kernel", "AI", "measured", "95% interval", "predicted", "roof (DRAM)", "binding"
        ));
        for p in &d.points {
            s.push_str(&format!(
                "{:<30} {:>14} {:>15} {:>27} {:>15} {:>15}  {}\n",
                p.name,
                ai_text(p.ai),
                Si(p.measured_flops, "FLOP/s").to_string(),
                match (p.measured_flops_lo, p.measured_flops_hi) {
                    (Some(lo), Some(hi)) => format!("{} – {}", Si(lo, "FLOP/s"), Si(hi, "FLOP/s")),
                    _ => "—".to_string(),
                },
                p.predicted_flops
                    .map_or("—".to_string(), |v| Si(v, "FLOP/s").to_string()),
                Si(p.attainable_flops, "FLOP/s").to_string(),
                p.binding.as_deref().unwrap_or("—")
            ));
        }
    }
    for k in &d.skipped {
        s.push_str(&format!(
            "not on the chart: {} {}: {}\n",
            k.kernel, k.variant, k.reason
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// "L1, L2 and DRAM".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A caption for the figure: the machine and threads, what each roof is
/// and how it was measured, what the markers and bands are, the
/// calibration date and the tools' versions.
pub fn caption(d: &RooflineData) -> String {
    let machine = if d.machine.is_empty() {
        "the calibrated machine"
    } else {
        &d.machine
    };
    let threads = |t: usize| format!("{t} thread{}", if t == 1 { "" } else { "s" });
    let of = |kind: CeilingKind| d.ceilings.iter().filter(move |c| c.kind == kind);
    let bw: Vec<String> = of(CeilingKind::Bandwidth)
        .map(|c| format!("{} ({})", c.name, Si(c.value, c.unit)))
        .collect();
    let bw_method = of(CeilingKind::Bandwidth)
        .next()
        .map_or(String::new(), |c| c.method.clone());
    let compute: Vec<String> = of(CeilingKind::Compute)
        .map(|c| {
            if d.measured {
                format!("{} ({}, {})", c.name, Si(c.value, c.unit), c.method)
            } else {
                format!("{} ({})", c.name, Si(c.value, c.unit))
            }
        })
        .collect();
    let compute_threads = of(CeilingKind::Compute)
        .next()
        .map_or(d.threads, |c| c.threads);
    let sloped = if d.measured {
        format!("read bandwidth of {}, each {bw_method}", and_list(&bw))
    } else {
        format!("bandwidth of {}", and_list(&bw))
    };
    let mut s = format!(
        "Roofline of {machine} with {}. Sloped roofs: {sloped}. Flat roofs: {}, on {}.",
        threads(d.threads),
        and_list(&compute),
        threads(compute_threads),
    );
    if !d.measured {
        s.push_str(&format!(" Every roof is {bw_method}."));
    }
    if d.ceilings.iter().any(|c| c.hi > c.lo) {
        s.push_str(" Shaded bands: the roofs' 95% intervals.");
    }
    if !d.points.is_empty() {
        let with_ci = d.points.iter().any(|p| p.measured_flops_lo.is_some());
        let predicted = d.points.iter().any(|p| p.predicted_flops.is_some());
        s.push_str(" Filled markers: measured performance");
        if with_ci {
            s.push_str(" with its 95% interval (hidden by the marker where shorter)");
        }
        if predicted {
            s.push_str("; hollow markers: the model's prediction");
        }
        s.push('.');
        let mut other: std::collections::BTreeMap<u64, Vec<String>> = Default::default();
        for p in &d.points {
            if let Some(t) = p.threads.filter(|t| *t != d.threads as u64) {
                other.entry(t).or_default().push(p.name.clone());
            }
        }
        for (t, names) in other {
            s.push_str(&format!(
                " Measured on {} against the roofs of {}: {}.",
                threads(t as usize),
                threads(d.threads),
                and_list(&names)
            ));
        }
    }
    if d.measured {
        let date = d.calibration_date.get(..10).unwrap_or(&d.calibration_date);
        s.push_str(&format!(
            " Calibrated on {date} with calibrate {}; drawn with predict {} from {}.",
            d.calibrated_with, d.tool_version, d.profile
        ));
    } else {
        s.push_str(&format!(
            " Drawn with predict {} from {}.",
            d.tool_version, d.profile
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::ai_text;

    #[test]
    fn intensities_read_at_any_magnitude() {
        assert_eq!(ai_text(0.083), "0.083 flop/B");
        assert_eq!(ai_text(5.2), "5.20 flop/B");
        assert_eq!(ai_text(250.0), "250 flop/B");
        assert_eq!(ai_text(1e300), "1.00e300 flop/B");
        assert_eq!(ai_text(2.5e-5), "2.50e-5 flop/B");
    }
}
