//! Records as CSV (`predict run --csv`): a header row, then one record per
//! row; see [`super::read`] for the columns.

use super::read::Record;
use crate::error::BadInput;

/// A CSV reader over `text` (cells trimmed) and its header row in lower
/// case; `source` names the input in errors.
pub fn reader_and_header<'a>(
    text: &'a str,
    source: &str,
) -> Result<(csv::Reader<&'a [u8]>, Vec<String>), BadInput> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = rd
        .headers()
        .map_err(|e| BadInput(format!("{source}: {e}")))?
        .iter()
        .map(str::to_ascii_lowercase)
        .collect();
    Ok((rd, header))
}

/// Parses CSV records with a header row; errors name the line and column.
pub fn parse_csv(text: &str, source: &str) -> Result<Vec<Record>, BadInput> {
    let (mut rd, header) = reader_and_header(text, source)?;
    if header.iter().all(String::is_empty) {
        return Err(BadInput(format!(
            "{source} is empty; expected a header line with kernel,variant,threads,size,measured_s,measured_ci_s,predicted_s,binding,flops,bytes"
        )));
    }
    let k = Cols::new(&header, source)?;
    let mut out = Vec::new();
    for row in rd.records() {
        let row = row.map_err(|e| BadInput(format!("{source}: {}", csv_error(&e))))?;
        let line = row.position().map_or(0, |p| p.line());
        let cells = Cells {
            row: &row,
            header: &header,
            source,
            line,
        };
        let field = |c: usize| cells.field(c);
        let number = |c: usize, optional: bool| cells.number(c, optional);
        let ci = if let (Some(lo), Some(hi)) = (k.ci_lo, k.ci_hi) {
            match (number(lo, true)?, number(hi, true)?) {
                (Some(a), Some(b)) => Some((a, b)),
                _ => None,
            }
        } else if let Some(c) = k.ci {
            one_column_interval(field(c)).ok_or_else(|| ci_error(source, line, c, field(c)))?
        } else {
            None
        };
        out.push(Record {
            kernel: field(k.kernel).to_string(),
            variant: k.variant.map(|c| field(c).to_string()).unwrap_or_default(),
            threads: match k.threads {
                Some(c) => number(c, true)?.map(|t| t.max(0.0) as u64),
                None => None,
            },
            size: k.size.map(|c| field(c).to_string()).unwrap_or_default(),
            measured_s: number(k.measured, false)?.unwrap_or(f64::NAN),
            measured_ci_s: ci,
            predicted_s: match k.pred {
                Some(c) => number(c, true)?,
                None => None,
            },
            binding: k
                .binding
                .map(|c| field(c).to_string())
                .filter(|s| !s.is_empty()),
            flops: number(k.flops, false)?.unwrap_or(f64::NAN),
            bytes: number(k.bytes, false)?.unwrap_or(f64::NAN),
            cpu_model: k
                .cpu
                .map(|c| field(c).to_string())
                .filter(|s| !s.is_empty()),
            profile: k
                .profile
                .map(|c| field(c).to_string())
                .filter(|s| !s.is_empty()),
            date: k
                .date
                .map(|c| field(c).to_string())
                .filter(|s| !s.is_empty()),
            source: source.to_string(),
        });
    }
    if out.is_empty() {
        return Err(BadInput(format!("{source} has a header but no records")));
    }
    Ok(out)
}

/// Where each field is in a records CSV.
struct Cols {
    kernel: usize,
    measured: usize,
    flops: usize,
    bytes: usize,
    variant: Option<usize>,
    threads: Option<usize>,
    size: Option<usize>,
    pred: Option<usize>,
    binding: Option<usize>,
    cpu: Option<usize>,
    profile: Option<usize>,
    date: Option<usize>,
    ci: Option<usize>,
    ci_lo: Option<usize>,
    ci_hi: Option<usize>,
}

impl Cols {
    fn new(header: &[String], source: &str) -> Result<Self, BadInput> {
        let col = |name: &str| header.iter().position(|h| h == name);
        let need = |name: &str| {
            col(name).ok_or_else(|| {
                BadInput(format!(
                    "{source} line 1: the header has no '{name}' column (it has: {})",
                    header.join(", ")
                ))
            })
        };
        Ok(Self {
            kernel: need("kernel")?,
            measured: need("measured_s")?,
            flops: need("flops")?,
            bytes: need("bytes")?,
            variant: col("variant"),
            threads: col("threads"),
            size: col("size"),
            pred: col("predicted_s"),
            binding: col("binding"),
            cpu: col("provenance_cpu_model"),
            profile: col("provenance_profile"),
            date: col("provenance_date"),
            ci: col("measured_ci_s"),
            ci_lo: col("measured_ci_lo_s").or_else(|| col("measured_ci_s_lo")),
            ci_hi: col("measured_ci_hi_s").or_else(|| col("measured_ci_s_hi")),
        })
    }
}

/// The cells of one CSV row, read with errors that name line and column.
struct Cells<'a> {
    row: &'a csv::StringRecord,
    header: &'a [String],
    source: &'a str,
    line: u64,
}

impl Cells<'_> {
    fn field(&self, c: usize) -> &str {
        self.row.get(c).unwrap_or("")
    }

    /// The number in column `c`; empty or `null` is None when `optional`.
    fn number(&self, c: usize, optional: bool) -> Result<Option<f64>, BadInput> {
        let s = self.field(c);
        let at = format!(
            "{} line {}, column {} ({})",
            self.source,
            self.line,
            c + 1,
            self.header[c]
        );
        if s.is_empty() || s.eq_ignore_ascii_case("null") {
            if optional {
                return Ok(None);
            }
            return Err(BadInput(format!("{at}: the value is empty")));
        }
        s.parse::<f64>()
            .map(Some)
            .map_err(|_| BadInput(format!("{at}: '{s}' is not a number")))
    }
}

/// An interval in one CSV cell: `[lo;hi]`, `lo;hi`, `lo hi` (None inside
/// when the cell is empty, None outside when it is not an interval).
fn one_column_interval(cell: &str) -> Option<Option<(f64, f64)>> {
    let s = cell.trim_matches(|ch| ch == '[' || ch == ']' || ch == '(' || ch == ')');
    if s.is_empty() {
        return Some(None);
    }
    let parts: Vec<&str> = s
        .split(|ch: char| ch == ';' || ch == ',' || ch.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    match parts.as_slice() {
        [a, b] => match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(a), Ok(b)) => Some(Some((a, b))),
            _ => None,
        },
        _ => None,
    }
}

fn ci_error(source: &str, line: u64, c: usize, s: &str) -> BadInput {
    BadInput(format!(
        "{source} line {line}, column {} (measured_ci_s): '{s}' is not an interval; write it as [lo;hi]",
        c + 1
    ))
}

/// A csv crate error as "line L: what".
pub fn csv_error(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => format!(
            "line {}: {len} fields where the header has {expected_len}",
            pos.as_ref().map_or(0, |p| p.line())
        ),
        csv::ErrorKind::Utf8 { pos, .. } => format!(
            "line {}: not valid UTF-8",
            pos.as_ref().map_or(0, |p| p.line())
        ),
        _ => e.to_string(),
    }
}
