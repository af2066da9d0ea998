//! Reading the records `predict run` writes (its `--json` arrays, its
//! `--csv` files, and the files it appends to `data/measurements/`).
//!
//! Only the contract fields are read — `kernel`, `variant`, `threads`,
//! `size`, `measured_s`, `measured_ci_s` [lo, hi], `predicted_s`, `binding`,
//! `flops`, `bytes` — and the CPU of the provenance (`provenance.cpu_model`,
//! in CSV `provenance_cpu_model`), to warn when records come from another
//! machine than the profile; every other field (`rel_error`, the kernel's
//! own keys) is ignored, so the reader does not depend on the record type's other
//! fields. JSON files may hold an array of records, one record, an object
//! with a `records` array, or one JSON document per line. CSV files need a
//! header; the interval may be one column (`measured_ci_s` as `[lo, hi]`,
//! `lo;hi` or `lo hi`) or two (`measured_ci_lo_s`, `measured_ci_hi_s`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::error::BadInput;

pub use super::read_csv::{csv_error, parse_csv};

/// One measured kernel variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    pub kernel: String,
    pub variant: String,
    pub threads: Option<u64>,
    /// The problem size as the record gives it (a number or a text).
    pub size: String,
    pub measured_s: f64,
    /// 95% interval of the measured time, seconds.
    pub measured_ci_s: Option<(f64, f64)>,
    /// None when the profile lacked what the prediction needs.
    pub predicted_s: Option<f64>,
    pub binding: Option<String>,
    pub flops: f64,
    pub bytes: f64,
    /// The CPU the record was measured on (its provenance), when given.
    pub cpu_model: Option<String>,
    /// The profile the record's prediction read (its provenance), when
    /// given.
    pub profile: Option<String>,
    /// When the record was made (RFC 3339, its provenance), when given.
    pub date: Option<String>,
    /// The file the record came from.
    pub source: String,
}

/// The records of every file, and what was noticed while reading them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub records: Vec<Record>,
    pub notes: Vec<String>,
}

/// Reads `path`: one file, or every `.json`, `.jsonl` and `.csv` file of a
/// directory in name order. A later record with the same kernel, variant,
/// threads and size replaces an earlier one (a re-run), and the number
/// replaced is noted.
pub fn load(path: &Path) -> Result<Loaded, BadInput> {
    load_all(std::slice::from_ref(&path.to_path_buf()))
}

/// The files `path` names: itself, or its record files in name order.
fn files_of(path: &Path) -> Result<Vec<PathBuf>, BadInput> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| BadInput(format!("cannot read the directory {}: {e}", path.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && kind(p).is_some())
            .collect();
        files.sort();
        Ok(files)
    } else if path.is_file() {
        Ok(vec![path.to_path_buf()])
    } else {
        Err(BadInput(format!(
            "{}: no such file or directory of measurements",
            path.display()
        )))
    }
}

/// Reads every path as [`load`] does, in order; a record in a later path
/// replaces an earlier one of the same kernel, variant, threads and size.
pub fn load_all(paths: &[PathBuf]) -> Result<Loaded, BadInput> {
    let mut all = Vec::new();
    let mut notes = Vec::new();
    for path in paths {
        let files = files_of(path)?;
        if path.is_dir() && files.is_empty() {
            notes.push(format!(
                "{} holds no .json or .csv measurements; the chart shows the machine only",
                path.display()
            ));
        }
        for f in &files {
            let text = std::fs::read_to_string(f)
                .map_err(|e| BadInput(format!("cannot read {}: {e}", f.display())))?;
            let source = f.display().to_string();
            all.extend(match kind(f) {
                Some(Kind::Csv) => parse_csv(&text, &source)?,
                _ => parse_json(&text, &source)?,
            });
        }
    }
    let (records, replaced) = latest(all);
    if replaced > 0 {
        notes.push(format!(
            "{replaced} earlier record(s) of the same kernel, variant, threads and size were replaced by later ones"
        ));
    }
    Ok(Loaded { records, notes })
}

enum Kind {
    Json,
    Csv,
}

fn kind(p: &Path) -> Option<Kind> {
    match p.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "json" | "jsonl" => Some(Kind::Json),
        "csv" => Some(Kind::Csv),
        _ => None,
    }
}

/// Keeps the last record of each (kernel, variant, threads, size), in the
/// order of first appearance.
fn latest(records: Vec<Record>) -> (Vec<Record>, usize) {
    let mut index: BTreeMap<(String, String, Option<u64>, String), usize> = BTreeMap::new();
    let mut out: Vec<Record> = Vec::new();
    let mut replaced = 0;
    for r in records {
        let key = (
            r.kernel.clone(),
            r.variant.clone(),
            r.threads,
            r.size.clone(),
        );
        match index.get(&key) {
            Some(&i) => {
                out[i] = r;
                replaced += 1;
            }
            None => {
                index.insert(key, out.len());
                out.push(r);
            }
        }
    }
    (out, replaced)
}

/// Parses JSON records (see the module documentation for the shapes).
pub fn parse_json(text: &str, source: &str) -> Result<Vec<Record>, BadInput> {
    let mut out = Vec::new();
    let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    for doc in stream {
        let doc = doc.map_err(|e| {
            BadInput(format!(
                "{source} line {}, column {}: not valid JSON ({e})",
                e.line(),
                e.column()
            ))
        })?;
        let items: Vec<Value> = match doc {
            Value::Array(a) => a,
            Value::Object(ref o) if o.get("records").is_some_and(Value::is_array) => {
                o["records"].as_array().cloned().unwrap_or_default()
            }
            Value::Object(_) => vec![doc],
            other => {
                return Err(BadInput(format!(
                    "{source}: expected records (objects), found {other}"
                )))
            }
        };
        for v in items {
            let n = out.len() + 1;
            out.push(
                from_json(&v, source)
                    .map_err(|e| BadInput(format!("{source}: record {n}: {e}")))?,
            );
        }
    }
    if out.is_empty() {
        return Err(BadInput(format!("{source} holds no records")));
    }
    Ok(out)
}

fn from_json(v: &Value, source: &str) -> Result<Record, String> {
    let o = v
        .as_object()
        .ok_or_else(|| format!("expected an object, found {v}"))?;
    let text = |k: &str| -> Result<String, String> {
        match o.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Null) | None => Err(format!("the field '{k}' is missing")),
            Some(other) => Ok(other.to_string()),
        }
    };
    let num = |k: &str| -> Result<Option<f64>, String> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .map(Some)
                .map_err(|_| format!("the field '{k}' is '{s}', not a number")),
            Some(other) => Err(format!("the field '{k}' is {other}, not a number")),
        }
    };
    let required = |k: &str| num(k)?.ok_or_else(|| format!("the field '{k}' is missing"));
    let ci = match o.get("measured_ci_s") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) if a.len() == 2 => match (a[0].as_f64(), a[1].as_f64()) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => return Err("'measured_ci_s' must be two numbers [lo, hi]".into()),
        },
        Some(Value::Object(m)) => match (
            m.get("lo").and_then(Value::as_f64),
            m.get("hi").and_then(Value::as_f64),
        ) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => return Err("'measured_ci_s' must be two numbers [lo, hi]".into()),
        },
        Some(other) => return Err(format!("'measured_ci_s' is {other}, expected [lo, hi]")),
    };
    let bytes = match o.get("bytes") {
        Some(Value::Object(levels)) => levels
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("dram"))
            .and_then(|(_, v)| v.as_f64())
            .ok_or("'bytes' is an object without a 'dram' entry")?,
        _ => required("bytes")?,
    };
    let size = match o.get("size") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let binding = match o.get("binding") {
        Some(Value::String(s)) => Some(s.clone()),
        _ => None,
    };
    let provenance = |key: &str| {
        o.get("provenance")
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(Record {
        kernel: text("kernel")?,
        variant: text("variant").unwrap_or_default(),
        threads: num("threads")?.map(|t| t.max(0.0) as u64),
        size,
        measured_s: required("measured_s")?,
        measured_ci_s: ci,
        predicted_s: num("predicted_s")?,
        binding,
        flops: required("flops")?,
        bytes,
        cpu_model: provenance("cpu_model"),
        profile: provenance("profile"),
        date: provenance("date"),
        source: source.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"[
      {"kernel":"fusion","variant":"fused","threads":2,"size":1000000,"measured_s":0.01,
       "measured_ci_s":[0.009,0.011],"predicted_s":0.0095,"rel_error":-0.05,
       "binding":"DRAM bandwidth","flops":3e6,"bytes":2e7,"provenance":{"host":"x"}},
      {"kernel":"matmul","variant":"blocked","threads":2,"size":"512","measured_s":0.02,
       "measured_ci_s":null,"predicted_s":null,"binding":null,"flops":2.7e8,"bytes":4e6}
    ]"#;

    #[test]
    fn json_arrays_and_lines() {
        let r = parse_json(JSON, "a.json").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].measured_ci_s, Some((0.009, 0.011)));
        assert_eq!(r[0].size, "1000000");
        assert_eq!(r[1].predicted_s, None);
        assert_eq!(r[1].size, "512");
        let lines = "{\"kernel\":\"k\",\"measured_s\":1,\"flops\":1,\"bytes\":1}\n{\"kernel\":\"k2\",\"measured_s\":1,\"flops\":1,\"bytes\":1}\n";
        assert_eq!(parse_json(lines, "b.jsonl").unwrap().len(), 2);
    }

    #[test]
    fn json_errors_name_the_record_and_field() {
        let e = parse_json(r#"[{"kernel":"k","measured_s":1,"flops":1}]"#, "a.json").unwrap_err();
        assert_eq!(e.0, "a.json: record 1: the field 'bytes' is missing");
        let e = parse_json("[{\"kernel\":", "a.json").unwrap_err();
        assert!(e.0.starts_with("a.json line 1, column"), "{e}");
        assert!(parse_json("", "a.json").is_err());
    }

    #[test]
    fn csv_with_one_or_two_interval_columns() {
        let one = "kernel,variant,threads,size,measured_s,measured_ci_s,predicted_s,binding,flops,bytes\n\
                   fusion,fused,2,1000000,0.01,[0.009;0.011],0.0095,dram,3e6,2e7\n";
        let r = parse_csv(one, "a.csv").unwrap();
        assert_eq!(r[0].measured_ci_s, Some((0.009, 0.011)));
        let two =
            "kernel,variant,measured_s,measured_ci_lo_s,measured_ci_hi_s,flops,bytes,predicted_s\n\
                   k,v,0.01,0.009,0.011,3e6,2e7,\n";
        let r = parse_csv(two, "b.csv").unwrap();
        assert_eq!(r[0].measured_ci_s, Some((0.009, 0.011)));
        assert_eq!(r[0].predicted_s, None);
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        let bad = "kernel,variant,measured_s,flops,bytes\nk,v,0.01,3e6,2e7\nk,w,fast,3e6,2e7\n";
        let e = parse_csv(bad, "r.csv").unwrap_err();
        assert_eq!(
            e.0,
            "r.csv line 3, column 3 (measured_s): 'fast' is not a number"
        );
        let e = parse_csv("", "r.csv").unwrap_err();
        assert!(e.0.contains("is empty"), "{e}");
        let e = parse_csv("kernel,measured_s,flops\nk,1,1\n", "r.csv").unwrap_err();
        assert!(e.0.contains("no 'bytes' column"), "{e}");
        let e = parse_csv("kernel,measured_s,flops,bytes\nk,1,1\n", "r.csv").unwrap_err();
        assert!(
            e.0.contains("line 2: 3 fields where the header has 4"),
            "{e}"
        );
    }

    #[test]
    fn later_runs_replace_earlier_ones() {
        let mut a = parse_json(JSON, "a.json").unwrap();
        let mut b = a.clone();
        b[0].measured_s = 0.02;
        a.extend(b);
        let (kept, replaced) = latest(a);
        assert_eq!((kept.len(), replaced), (2, 2));
        assert_eq!(kept[0].measured_s, 0.02);
    }
}
