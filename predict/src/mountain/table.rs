//! The mountain's data as CSV and as the human table.

use models::units::Si;
use serde::Serialize;

use super::data::{MountainData, Quantity};
use crate::chart::output::Num;
use crate::chart::ticks::binary_bytes;

/// One CSV table: rows of `record` = latency | bandwidth | level.
pub fn to_csv(d: &MountainData) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut row = |r: CsvRow| w.serialize(r).expect("writing to memory");
    for c in &d.curves {
        let record = match c.quantity {
            Quantity::Latency => "latency",
            Quantity::Bandwidth => "bandwidth",
        };
        for p in &c.points {
            row(CsvRow {
                record,
                curve: Some(c.name.clone()),
                threads: Some(c.threads),
                pages: Some(c.pages.clone().unwrap_or_default()),
                kernel: Some(c.kernel.clone().unwrap_or_default()),
                working_set_bytes: Some(Num(p.working_set_bytes)),
                value: Some(Num(p.value)),
                lo: Some(Num(p.lo)),
                hi: Some(Num(p.hi)),
                unit: Some(c.unit.to_string()),
                ..CsvRow::default()
            });
        }
    }
    for l in &d.levels {
        row(CsvRow {
            record: "level",
            level: Some(l.name.clone()),
            level_size_bytes: l.size_bytes.map(Num),
            level_latency_s: l.latency_s.map(Num),
            level_bandwidth_1t_Bps: l.bandwidth_Bps.map(Num),
            ..CsvRow::default()
        });
    }
    String::from_utf8(w.into_inner().expect("in-memory writer")).expect("UTF-8 fields")
}

/// One row of the mountain CSV; the columns its kind does not use stay
/// empty.
#[derive(Debug, Default, Serialize)]
#[allow(non_snake_case)]
struct CsvRow {
    record: &'static str,
    curve: Option<String>,
    threads: Option<usize>,
    pages: Option<String>,
    kernel: Option<String>,
    working_set_bytes: Option<Num>,
    value: Option<Num>,
    lo: Option<Num>,
    hi: Option<Num>,
    unit: Option<String>,
    level: Option<String>,
    level_size_bytes: Option<Num>,
    level_latency_s: Option<Num>,
    level_bandwidth_1t_Bps: Option<Num>,
}

/// The human summary of `predict mountain`.
pub fn to_text(d: &MountainData) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Memory mountain of {}\n\n",
        if d.machine.is_empty() {
            "this machine"
        } else {
            &d.machine
        }
    ));
    s.push_str(&format!(
        "{:<6} {:>12} {:>14} {:>20}\n",
        "level", "size", "latency", "bandwidth (1 thr)"
    ));
    for l in &d.levels {
        s.push_str(&format!(
            "{:<6} {:>12} {:>14} {:>20}\n",
            l.name,
            l.size_bytes.map_or("—".into(), binary_bytes),
            l.latency_s.map_or("—".into(), |v| Si(v, "s").to_string()),
            l.bandwidth_Bps
                .map_or("—".into(), |v| Si(v, "B/s").to_string()),
        ));
    }
    s.push('\n');
    for c in &d.curves {
        let first = c.points.first().expect("curves have points");
        let last = c.points.last().expect("curves have points");
        s.push_str(&format!(
            "{}: {} points, {} at {} to {} at {}\n",
            c.name,
            c.points.len(),
            Si(first.value, c.unit),
            binary_bytes(first.working_set_bytes),
            Si(last.value, c.unit),
            binary_bytes(last.working_set_bytes),
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
