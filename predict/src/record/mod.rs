//! The record of one measured-and-predicted kernel run: its format, its
//! writer (here) and its reader ([`read`], [`read_csv`]). `predict run`
//! and `predict kernel` write records; `predict roofline` reads them back.
//!
//! JSON: an array of records, each with the contract keys `kernel`,
//! `variant`, `threads`, `size`, `measured_s`, `measured_ci_s` [lo, hi],
//! `predicted_s` (null without a prediction), `rel_error`
//! ((predicted − measured)/measured, null without a prediction),
//! `binding`, `flops`, `bytes`, a `provenance` object, and the kernel's own
//! keys beside them. CSV: one row per record with the same keys;
//! `measured_ci_s` becomes `measured_ci_lo_s` and `measured_ci_hi_s`,
//! provenance fields `provenance_*`, and a kernel's own keys follow in
//! alphabetical order (nested values as JSON text). Files are written
//! atomically ([`AtomicFile`]).

pub mod read;
pub mod read_csv;

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use models::stats::Summary;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use calibrate::harness::atomic::AtomicFile;

/// The keys every record carries, whatever its kernel.
pub const CONTRACT_KEYS: [&str; 12] = [
    "kernel",
    "variant",
    "threads",
    "size",
    "measured_s",
    "measured_ci_s",
    "predicted_s",
    "rel_error",
    "binding",
    "flops",
    "bytes",
    "provenance",
];

/// Where and how a record was made. The first five fields are those of
/// the thread kernels' records ([`crate::run::report::assess`]), so the two kinds
/// of record line up in `records.jsonl` and in CSV.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Host of rank 0 (or of the process).
    pub host: String,
    pub cpu_model: String,
    /// RFC 3339 UTC time the record was made.
    pub date: String,
    pub tool_version: String,
    /// The profile the prediction used ("" without one).
    pub profile: String,
    /// Every host of the run (distinct, in rank order).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// The command line.
    #[serde(default)]
    pub command: String,
    /// Caveats: no profile, noisy timing, oversubscription.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Provenance {
    /// Provenance of a run now, on `hosts`, predicted from `profile`.
    pub fn now(hosts: Vec<String>, profile: Option<String>) -> Self {
        let args: Vec<String> = std::env::args().collect();
        Self {
            host: hosts.first().cloned().unwrap_or_default(),
            cpu_model: calibrate::harness::sysinfo::SysInfo::read(1).cpu_model,
            date: rfc3339_utc(SystemTime::now()),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            profile: profile.unwrap_or_default(),
            hosts,
            command: args.join(" "),
            notes: Vec::new(),
        }
    }
}

/// One kernel variant: measured, predicted, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub kernel: String,
    pub variant: String,
    /// Threads, or MPI ranks for an MPI kernel.
    pub threads: usize,
    /// The kernel's problem size (a grid side, an element count).
    pub size: u64,
    /// Time of one repetition, seconds: the low quantile of the clean
    /// timings (`models::stats::capability`), the convention of the
    /// profile's figures, so that prediction and measurement compare like
    /// with like.
    pub measured_s: f64,
    /// Interval of `measured_s` from order statistics, seconds.
    pub measured_ci_s: [f64; 2],
    /// Coefficient of variation of the repetitions.
    pub measured_cv: f64,
    /// The timing is too noisy to trust (`models::stats`), or too few of
    /// its timings were clean (`models::interference`).
    pub noisy: bool,
    pub predicted_s: Option<f64>,
    /// (predicted − measured)/measured.
    pub rel_error: Option<f64>,
    /// The resource the model says binds.
    pub binding: Option<String>,
    /// Why there is no prediction, and what fixes it.
    pub no_prediction: Option<String>,
    /// Floating-point operations of one repetition.
    pub flops: f64,
    /// Bytes of one repetition as the kernel counts them (each array
    /// element read or written once, no write-allocate).
    pub bytes: f64,
    /// The result equals the serial reference (null when not compared).
    pub verified: Option<bool>,
    pub provenance: Provenance,
    /// The kernel's own keys.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Record {
    /// A record of a measurement without a prediction yet.
    #[allow(clippy::too_many_arguments)]
    pub fn measured(
        kernel: &str,
        variant: &str,
        threads: usize,
        size: u64,
        time: &Summary,
        flops: f64,
        bytes: f64,
        provenance: Provenance,
    ) -> Self {
        let best = time.capability(models::stats::Better::Lower);
        Self {
            kernel: kernel.into(),
            variant: variant.into(),
            threads,
            size,
            measured_s: best.point,
            measured_ci_s: [best.lo, best.hi],
            measured_cv: time.cv,
            noisy: time.noisy || time.unreliable.is_some(),
            predicted_s: None,
            rel_error: None,
            binding: None,
            no_prediction: None,
            flops,
            bytes,
            verified: None,
            provenance,
            extra: Map::new(),
        }
    }

    /// Adds the prediction and its relative error.
    pub fn predicted(mut self, predicted_s: f64, binding: impl Into<String>) -> Self {
        self.predicted_s = Some(predicted_s);
        self.rel_error = Some(rel_error(predicted_s, self.measured_s));
        self.binding = Some(binding.into());
        self
    }

    /// Says why there is no prediction.
    pub fn unpredicted(mut self, why: impl Into<String>) -> Self {
        self.no_prediction = Some(why.into());
        self
    }

    /// Adds a kernel key.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.extra.insert(
            key.into(),
            serde_json::to_value(value).expect("kernel keys serialize"),
        );
        self
    }
}

/// (predicted − measured) / measured.
pub fn rel_error(predicted: f64, measured: f64) -> f64 {
    (predicted - measured) / measured
}

/// The records as one pretty JSON array.
pub fn to_json(records: &[Record]) -> String {
    serde_json::to_string_pretty(records).expect("records serialize")
}

/// The fixed CSV columns (those of the thread kernels' CSV first), before
/// the kernels' own keys and the rest of the provenance.
const CSV_HEAD: [&str; 21] = [
    "kernel",
    "variant",
    "threads",
    "size",
    "measured_s",
    "measured_ci_lo_s",
    "measured_ci_hi_s",
    "measured_cv",
    "noisy",
    "predicted_s",
    "rel_error",
    "binding",
    "no_prediction",
    "flops",
    "bytes",
    "verified",
    "host",
    "cpu_model",
    "date",
    "tool_version",
    "profile",
];

fn num(v: f64) -> String {
    format!("{v:e}")
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The records as CSV with a header row: the contract columns, the kernels' own
/// keys in alphabetical order (nested values as JSON text), then `hosts`
/// (`;`-separated), `command` and `notes` (`;`-separated).
pub fn to_csv(records: &[Record]) -> String {
    let keys: BTreeSet<&String> = records.iter().flat_map(|r| r.extra.keys()).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let header: Vec<&str> = CSV_HEAD
        .iter()
        .copied()
        .chain(keys.iter().map(|k| k.as_str()))
        .chain(["hosts", "command", "notes"])
        .collect();
    w.write_record(&header).expect("writing to memory");
    for r in records {
        let p = &r.provenance;
        let mut row = vec![
            r.kernel.clone(),
            r.variant.clone(),
            r.threads.to_string(),
            r.size.to_string(),
            num(r.measured_s),
            num(r.measured_ci_s[0]),
            num(r.measured_ci_s[1]),
            num(r.measured_cv),
            r.noisy.to_string(),
            r.predicted_s.map(num).unwrap_or_default(),
            r.rel_error.map(num).unwrap_or_default(),
            r.binding.clone().unwrap_or_default(),
            r.no_prediction.clone().unwrap_or_default(),
            num(r.flops),
            num(r.bytes),
            r.verified.map(|v| v.to_string()).unwrap_or_default(),
            p.host.clone(),
            p.cpu_model.clone(),
            p.date.clone(),
            p.tool_version.clone(),
            p.profile.clone(),
        ];
        row.extend(
            keys.iter()
                .map(|k| r.extra.get(*k).map(cell).unwrap_or_default()),
        );
        row.extend([p.hosts.join(";"), p.command.clone(), p.notes.join(";")]);
        w.write_record(&row).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("flushing to memory")).expect("CSV of UTF-8 text")
}

/// The file of a measurements folder every run's records are appended to.
pub const RECORDS_FILE: &str = "records.jsonl";

/// Refuses a measurements folder `dir` that cannot hold `records.jsonl`
/// (it, or the nearest part of its path that exists, is a file, or no file
/// can be created there), so that `predict run` says so before its kernels
/// run rather than after. Nothing is left behind: the trial file is a
/// temporary one, removed at once.
pub fn check_folder(dir: &Path) -> Result<(), crate::error::BadInput> {
    let bad =
        |why: String| crate::error::BadInput(format!("--measurements {}: {why}", dir.display()));
    let Some(found) = dir.ancestors().find(|a| a.exists()) else {
        return Ok(());
    };
    if !found.is_dir() {
        return Err(bad(format!("{} is a file, not a folder", found.display())));
    }
    AtomicFile::create(&found.join(RECORDS_FILE))
        .map(drop)
        .map_err(|e| bad(format!("cannot write in {}: {e}", found.display())))
}

/// Appends `records` to the JSON-lines file `path` (one record per line),
/// atomically: the old lines and the new ones go to a temporary file that
/// replaces `path`. The folder is created if needed.
///
/// # Errors
/// When the folder cannot be created or the file cannot be read or written.
pub fn append_jsonl(path: &Path, records: &[Record]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for r in records {
        text.push_str(&serde_json::to_string(r).expect("records serialize"));
        text.push('\n');
    }
    AtomicFile::create(path)?.commit(text.as_bytes())
}

/// `t` as RFC 3339 UTC, e.g. `2025-01-31T12:00:00Z`.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Year, month, day of the `z`-th day after 1970-01-01 (Howard Hinnant's
/// algorithm for the proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::stats::Sample;
    use std::time::Duration;

    #[test]
    fn a_measurements_folder_under_a_file_is_refused_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("taken");
        fs::write(&file, "not a folder").unwrap();
        for bad in [file.clone(), file.join("sub")] {
            let e = check_folder(&bad).unwrap_err().to_string();
            assert!(e.ends_with("taken is a file, not a folder"), "{e}");
        }
        assert!(check_folder(dir.path()).is_ok());
        assert!(check_folder(&dir.path().join("new/deeper")).is_ok());
    }

    fn record(variant: &str) -> Record {
        // Median 1.1 ms; the low quantile of 3 timings is the fastest, 1 ms.
        let t = Sample::new(vec![1.1e-3, 1.2e-3, 1.0e-3]).unwrap().summary();
        let prov = Provenance {
            host: "a".into(),
            cpu_model: "Test CPU".into(),
            date: "2025-01-01T00:00:00Z".into(),
            tool_version: "0.1.0".into(),
            profile: String::new(),
            hosts: vec!["a".into(), "b".into()],
            command: "predict run".into(),
            notes: vec![],
        };
        Record::measured("ghost-stencil", variant, 2, 1024, &t, 5.0, 16.0, prov)
    }

    #[test]
    fn relative_error_and_contract_keys() {
        let mut r = record("blocking")
            .predicted(1.2e-3, "network")
            .with("grid", "1x2");
        r.verified = Some(true);
        assert_eq!(r.measured_s, 1.0e-3, "the capability, not the median");
        assert_eq!(r.measured_ci_s, [1.0e-3, 1.2e-3]);
        assert!((r.rel_error.unwrap() - 0.2).abs() < 1e-12);
        let v: Value = serde_json::from_str(&to_json(&[r])).unwrap();
        let o = &v[0];
        for k in CONTRACT_KEYS {
            assert!(o.get(k).is_some(), "{k} missing");
        }
        assert_eq!(o["measured_ci_s"].as_array().unwrap().len(), 2);
        assert_eq!(o["verified"], true);
        assert_eq!(o["grid"], "1x2");
        // Without a prediction the keys are null, not absent.
        let v: Value =
            serde_json::from_str(&to_json(&[record("2d").unpredicted("no profile")])).unwrap();
        assert!(v[0]["predicted_s"].is_null() && v[0]["rel_error"].is_null());
        assert_eq!(v[0]["no_prediction"], "no profile");
        // Records read back.
        let back: Vec<Record> = serde_json::from_value(v).unwrap();
        assert_eq!(back[0].variant, "2d");
    }

    #[test]
    fn csv_has_one_row_per_record_and_the_union_of_keys() {
        let rs = [
            record("blocking").with("checksum", "0x1"),
            record("2d")
                .predicted(2e-3, "memory bandwidth (DRAM)")
                .with("grid", "1x2"),
        ];
        let text = to_csv(&rs);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let head: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(&head[..4], ["kernel", "variant", "threads", "size"]);
        assert_eq!(
            &head[21..],
            ["checksum", "grid", "hosts", "command", "notes"]
        );
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[0][col("predicted_s")], "");
        assert_eq!(&rows[1][col("binding")], "memory bandwidth (DRAM)");
        assert_eq!(&rows[0][col("hosts")], "a;b");
        assert_eq!(rows[1][col("predicted_s")].parse::<f64>().unwrap(), 2e-3);
        // CV 10%: flagged.
        assert_eq!(&rows[0][col("noisy")], "true");
    }

    #[test]
    fn jsonl_appends_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m/records.jsonl");
        append_jsonl(&path, &[record("blocking")]).unwrap();
        append_jsonl(&path, &[record("nonblocking"), record("2d")]).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let variants: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<Record>(l).unwrap().variant)
            .collect();
        assert_eq!(variants, ["blocking", "nonblocking", "2d"]);
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661);
        assert_eq!(rfc3339_utc(t), "2000-02-29T01:01:01Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(rfc3339_utc(t), "2024-12-31T23:59:59Z");
    }
}
