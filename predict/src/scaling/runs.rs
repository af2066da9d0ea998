//! The runs file of `predict scaling --fit`: one line per run with the
//! process count P, the wall time, and optionally the part of that time
//! spent communicating (as a profiler such as mpiP separates MPI time).

use models::units::{parse, Dimension};
use serde::Serialize;

use crate::error::BadInput;

/// One run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Run {
    pub p: f64,
    pub time_s: f64,
    /// The measured communication time of the run, when the file has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm_s: Option<f64>,
    /// Line of the CSV file.
    pub line: u64,
}

/// Column names accepted for P, for the time and for the communication time.
const P_NAMES: [&str; 9] = [
    "p",
    "procs",
    "processes",
    "ranks",
    "np",
    "nprocs",
    "threads",
    "cores",
    "nodes",
];
const T_NAMES: [&str; 10] = [
    "time_s",
    "time",
    "seconds",
    "t",
    "t_s",
    "runtime",
    "runtime_s",
    "elapsed",
    "elapsed_s",
    "wall_s",
];
const COMM_NAMES: [&str; 7] = [
    "comm_s",
    "comm",
    "comm_time",
    "comm_time_s",
    "communication_s",
    "mpi_s",
    "mpi_time_s",
];

/// Where the columns are.
struct Columns {
    p: usize,
    time: usize,
    comm: Option<usize>,
    names: Vec<String>,
}

fn csv_bad(source: &str, e: &csv::Error) -> BadInput {
    BadInput(format!("{source}: {}", crate::record::read::csv_error(e)))
}

fn columns(first: &csv::StringRecord, source: &str, line: u64) -> Result<Columns, BadInput> {
    let names: Vec<String> = first.iter().map(|h| h.to_ascii_lowercase()).collect();
    let find = |set: &[&str]| names.iter().position(|h| set.contains(&h.as_str()));
    let missing = |what: &str, set: &[&str]| {
        BadInput(format!(
            "{source} line {line}: no column for {what} in the header ({}); name it one of: {}",
            names.join(", "),
            set.join(", ")
        ))
    };
    let p = find(&P_NAMES).ok_or_else(|| missing("P", &P_NAMES))?;
    let time = find(&T_NAMES).ok_or_else(|| missing("the time", &T_NAMES))?;
    let comm = find(&COMM_NAMES);
    Ok(Columns {
        p,
        time,
        comm,
        names,
    })
}

/// Reads runs from CSV: a header naming a P column, a time column and
/// optionally a communication-time column (`comm_s`, `mpi_s`, ...), or no
/// header and P, time as the first two columns. Times take units (`1.5ms`;
/// a bare number is seconds). P must be a whole number. Errors name the
/// line and column.
pub fn read_runs(text: &str, source: &str) -> Result<Vec<Run>, BadInput> {
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut rows = rd.records();
    let empty = || {
        BadInput(format!(
            "{source} has no runs; expected a header such as `p,time_s` and one line per run"
        ))
    };
    let first = rows
        .next()
        .ok_or_else(empty)?
        .map_err(|e| csv_bad(source, &e))?;
    let first_line = first.position().map_or(1, |p| p.line());
    let is_header = first.get(0).is_some_and(|f| f.parse::<f64>().is_err());
    let cols = if is_header {
        columns(&first, source, first_line)?
    } else {
        Columns {
            p: 0,
            time: 1,
            comm: None,
            names: vec!["p".into(), "time".into()],
        }
    };
    let header_len = first.len();
    let mut runs = Vec::new();
    let data = (!is_header).then_some(Ok(first)).into_iter().chain(rows);
    for row in data {
        let row = row.map_err(|e| csv_bad(source, &e))?;
        if is_header && row.len() > header_len {
            return Err(BadInput(format!(
                "{source} line {}: {} values under a header of {} columns",
                row.position().map_or(0, |p| p.line()),
                row.len(),
                header_len
            )));
        }
        runs.push(parse_row(&row, &cols, source)?);
    }
    if runs.is_empty() {
        return Err(empty());
    }
    Ok(runs)
}

fn parse_row(row: &csv::StringRecord, cols: &Columns, source: &str) -> Result<Run, BadInput> {
    let line = row.position().map_or(0, |p| p.line());
    let at = |c: usize| -> Result<&str, BadInput> {
        match row.get(c) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(BadInput(format!(
                "{source} line {line}, column {} ({}): the value is missing",
                c + 1,
                cols.names[c]
            ))),
        }
    };
    let here = |c: usize, why: String| {
        BadInput(format!(
            "{source} line {line}, column {} ({}): {why}",
            c + 1,
            cols.names[c]
        ))
    };
    let ps = at(cols.p)?;
    let p: f64 = ps
        .parse()
        .map_err(|_| here(cols.p, format!("'{ps}' is not a number")))?;
    if !(p > 0.0 && p.is_finite()) {
        return Err(here(cols.p, format!("P = {ps} is not positive")));
    }
    if p.fract() != 0.0 {
        return Err(here(
            cols.p,
            format!("P = {ps} is not a whole number of processes"),
        ));
    }
    let time = |c: usize, zero_ok: bool| -> Result<f64, BadInput> {
        let ts = at(c)?;
        let t = match parse(ts, Dimension::Time) {
            Ok(v) if !v.cycles => v.value,
            Ok(_) => {
                return Err(here(
                    c,
                    format!("'{ts}' is in cycles; give seconds (e.g. 1.5ms)"),
                ))
            }
            Err(e) => return Err(here(c, e.to_string())),
        };
        if !(t.is_finite() && (t > 0.0 || (zero_ok && t == 0.0))) {
            let what = if zero_ok { "negative" } else { "not positive" };
            return Err(here(c, format!("the time {ts} is {what}")));
        }
        Ok(t)
    };
    let time_s = time(cols.time, false)?;
    let comm_s = match cols.comm {
        Some(c) => {
            let v = time(c, true)?;
            if v >= time_s {
                return Err(here(
                    c,
                    format!(
                        "the communication time {} is not less than the run's time {}",
                        row.get(c).unwrap_or_default(),
                        row.get(cols.time).unwrap_or_default()
                    ),
                ));
            }
            Some(v)
        }
        None => None,
    };
    Ok(Run {
        p,
        time_s,
        comm_s,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers_units_and_bare_columns() {
        let r = read_runs("p,time_s\n1,8\n2,4.2\n", "r.csv").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            Run {
                p: 2.0,
                time_s: 4.2,
                comm_s: None,
                line: 3
            }
        );
        let r = read_runs("ranks,elapsed\n4,1.5ms\n", "r.csv").unwrap();
        assert_eq!(r[0].time_s, 1.5e-3);
        let r = read_runs("# my runs\n1,8\n2,4\n", "r.csv").unwrap();
        assert_eq!(r.len(), 2);
        let r = read_runs("p,time_s,mpi_s\n1,8,0\n2,4.5,0.5\n", "r.csv").unwrap();
        assert_eq!(r[0].comm_s, Some(0.0));
        assert_eq!(r[1].comm_s, Some(0.5));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = read_runs("", "r.csv").unwrap_err();
        assert!(e.0.contains("r.csv has no runs"), "{e}");
        let e = read_runs("p,time_s\n", "r.csv").unwrap_err();
        assert!(e.0.contains("has no runs"), "{e}");
        let e = read_runs("p,time_s\n1,8\n8,1,2,3\n", "r.csv").unwrap_err();
        assert_eq!(e.0, "r.csv line 3: 4 values under a header of 2 columns");
        let e = read_runs("p,time_s\n1,8\n0,4\n", "r.csv").unwrap_err();
        assert_eq!(e.0, "r.csv line 3, column 1 (p): P = 0 is not positive");
        let e = read_runs("p,time_s\n1,8\n1.5,4\n", "r.csv").unwrap_err();
        assert_eq!(
            e.0,
            "r.csv line 3, column 1 (p): P = 1.5 is not a whole number of processes"
        );
        let e = read_runs("p,time_s\n1,8\n2,fast\n", "r.csv").unwrap_err();
        assert!(
            e.0.starts_with("r.csv line 3, column 2 (time_s): 'fast' is not"),
            "{e}"
        );
        let e = read_runs("p,time_s\n1\n", "r.csv").unwrap_err();
        assert_eq!(e.0, "r.csv line 2, column 2 (time_s): the value is missing");
        let e = read_runs("n,seconds\n1,2\n", "r.csv").unwrap_err();
        assert!(e.0.contains("no column for P"), "{e}");
        let e = read_runs("p,time_s,comm_s\n2,4,5\n", "r.csv").unwrap_err();
        assert!(
            e.0.contains("column 3 (comm_s): the communication time 5 is not less"),
            "{e}"
        );
        let e = read_runs("p,time_s,comm_s\n2,4,-1\n", "r.csv").unwrap_err();
        assert!(e.0.contains("is negative"), "{e}");
    }
}
