//! The author's own points, without a `predict run` record:
//! `--point NAME:AI:FLOPS[:LO:HI]` and `--points FILE`.
//!
//! AI is in flop/byte (a plain number, `flop/B` may follow); FLOPS, LO and
//! HI are rates in human units (`3.1GFLOP/s`, `9.4e9`), LO–HI the point's
//! interval (e.g. its 95% interval). The CSV file has a header with the
//! columns `name`, `ai`, `flops` and optionally `lo`, `hi` (both or
//! neither per row) and `threads`:
//!
//! ```text
//! name,ai,flops,lo,hi,threads
//! SpMV,0.16,3.1GFLOP/s,2.9GFLOP/s,3.3GFLOP/s,2
//! 7-point stencil,0.5,9.4e9,,,2
//! ```

use std::path::Path;

use models::units::{parse, Dimension};
use serde::Serialize;

use crate::error::BadInput;

/// A point the user gives directly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserPoint {
    pub name: String,
    /// flop/byte.
    pub ai: f64,
    /// FLOP/s.
    pub flops: f64,
    /// [lo, hi] FLOP/s.
    pub interval: Option<(f64, f64)>,
    pub threads: Option<u64>,
    /// "--point" or the file it came from.
    pub source: String,
}

fn intensity(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("flop/byte")
        .or_else(|| t.strip_suffix("flop/B"))
        .unwrap_or(t)
        .trim();
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!(
            "the intensity '{s}' is not a positive number of flop/byte"
        )),
    }
}

fn rate(s: &str, what: &str) -> Result<f64, String> {
    match parse(s.trim(), Dimension::FlopRate) {
        Ok(p) if p.value > 0.0 && p.value.is_finite() => Ok(p.value),
        Ok(_) => Err(format!("the {what} '{s}' is not a positive rate")),
        Err(e) => Err(format!("the {what} '{s}': {e}")),
    }
}

/// A checked point.
fn point(
    name: &str,
    ai: f64,
    flops: f64,
    interval: Option<(f64, f64)>,
    threads: Option<u64>,
    source: &str,
) -> Result<UserPoint, String> {
    if name.trim().is_empty() {
        return Err("the point has no name".into());
    }
    if let Some((lo, hi)) = interval {
        if !(lo <= flops && flops <= hi) {
            return Err(format!(
                "the interval [{lo}, {hi}] FLOP/s does not contain the point's {flops} FLOP/s"
            ));
        }
    }
    Ok(UserPoint {
        name: name.trim().to_string(),
        ai,
        flops,
        interval,
        threads,
        source: source.to_string(),
    })
}

/// Parses `NAME:AI:FLOPS[:LO:HI]`.
pub fn parse_point(spec: &str) -> Result<UserPoint, BadInput> {
    let bad = |e: String| BadInput(format!("--point '{spec}': {e}"));
    let fields: Vec<&str> = spec.split(':').collect();
    let (name, ai, flops, interval) = match fields.as_slice() {
        [n, a, f] => (*n, *a, *f, None),
        [n, a, f, lo, hi] => (*n, *a, *f, Some((*lo, *hi))),
        _ => {
            return Err(bad(
                "expected NAME:AI:FLOPS or NAME:AI:FLOPS:LO:HI, e.g. SpMV:0.16:3.1GFLOP/s".into(),
            ))
        }
    };
    let ai = intensity(ai).map_err(bad)?;
    let flops = rate(flops, "performance").map_err(bad)?;
    let interval = match interval {
        Some((lo, hi)) => Some((
            rate(lo, "interval's low end").map_err(bad)?,
            rate(hi, "interval's high end").map_err(bad)?,
        )),
        None => None,
    };
    point(name, ai, flops, interval, None, "--point").map_err(bad)
}

/// Reads a points CSV (see the module documentation).
pub fn load_points(path: &Path) -> Result<Vec<UserPoint>, BadInput> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read the points file {source}: {e}")))?;
    parse_points(&text, &source)
}

/// Parses the points CSV `text` read from `source`.
pub fn parse_points(text: &str, source: &str) -> Result<Vec<UserPoint>, BadInput> {
    let (mut rd, header) = crate::record::read_csv::reader_and_header(text, source)?;
    let col = |n: &str| header.iter().position(|h| h == n);
    let need = |n: &str| {
        col(n).ok_or_else(|| {
            BadInput(format!(
                "{source} line 1: the header has no '{n}' column; expected name,ai,flops[,lo,hi][,threads]"
            ))
        })
    };
    let (c_name, c_ai, c_flops) = (need("name")?, need("ai")?, need("flops")?);
    let (c_lo, c_hi, c_threads) = (col("lo"), col("hi"), col("threads"));
    let mut out = Vec::new();
    for row in rd.records() {
        let row =
            row.map_err(|e| BadInput(format!("{source}: {}", crate::record::read::csv_error(&e))))?;
        let line = row.position().map_or(0, |p| p.line());
        let bad = |e: String| BadInput(format!("{source} line {line}: {e}"));
        let get = |c: Option<usize>| c.and_then(|c| row.get(c)).unwrap_or("");
        let ai = intensity(get(Some(c_ai))).map_err(bad)?;
        let flops = rate(get(Some(c_flops)), "performance").map_err(bad)?;
        let interval = match (get(c_lo), get(c_hi)) {
            ("", "") => None,
            (lo, hi) if !lo.is_empty() && !hi.is_empty() => {
                Some((rate(lo, "lo").map_err(bad)?, rate(hi, "hi").map_err(bad)?))
            }
            _ => return Err(bad("give both lo and hi, or neither".into())),
        };
        let threads = match get(c_threads) {
            "" => None,
            t => Some(
                t.parse::<u64>()
                    .map_err(|_| bad(format!("threads '{t}' is not a whole number")))?,
            ),
        };
        out.push(point(get(Some(c_name)), ai, flops, interval, threads, source).map_err(bad)?);
    }
    if out.is_empty() {
        return Err(BadInput(format!("{source} has a header but no points")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_in_human_units() {
        let p = parse_point("SpMV:0.16:3.1GFLOP/s").unwrap();
        assert_eq!((p.name.as_str(), p.ai, p.flops), ("SpMV", 0.16, 3.1e9));
        assert_eq!(p.interval, None);
        let p = parse_point("stencil:0.5flop/B:9.4GFLOP/s:9GFLOP/s:9.8GFLOP/s").unwrap();
        assert_eq!(p.interval, Some((9e9, 9.8e9)));
    }

    #[test]
    fn bad_points_name_the_fault() {
        let e = parse_point("SpMV:0.16").unwrap_err();
        assert!(e.0.contains("expected NAME:AI:FLOPS"), "{e}");
        let e = parse_point("SpMV:-1:3GFLOP/s").unwrap_err();
        assert!(e.0.contains("not a positive number of flop/byte"), "{e}");
        let e = parse_point("SpMV:0.16:fast").unwrap_err();
        assert!(e.0.contains("the performance 'fast'"), "{e}");
        let e = parse_point("SpMV:0.16:3GFLOP/s:4GFLOP/s:5GFLOP/s").unwrap_err();
        assert!(e.0.contains("does not contain"), "{e}");
    }

    #[test]
    fn points_csv_with_and_without_intervals() {
        let csv = "name,ai,flops,lo,hi,threads\nSpMV,0.16,3.1GFLOP/s,2.9GFLOP/s,3.3GFLOP/s,2\nstencil,0.5,9.4e9,,,16\n";
        let p = parse_points(csv, "p.csv").unwrap();
        assert_eq!(p[0].interval, Some((2.9e9, 3.3e9)));
        assert_eq!((p[1].interval, p[1].threads), (None, Some(16)));
        let e = parse_points("name,ai,flops,lo,hi\nx,1,1e9,1e8,\n", "p.csv").unwrap_err();
        assert_eq!(e.0, "p.csv line 2: give both lo and hi, or neither");
        let e = parse_points("name,flops\nx,1\n", "p.csv").unwrap_err();
        assert!(e.0.contains("no 'ai' column"), "{e}");
    }
}
