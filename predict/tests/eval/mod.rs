//! Every line of work `predict eval` shows is the formula with the values
//! put in, and evaluates to the result printed under it ([`expr`]); every
//! subcommand's JSON has one shape whatever the flags, lists every input it
//! used, and gives booleans as booleans.

mod expr;

use crate::common::predict;
use serde_json::Value;

/// Each subcommand with several flag sets, the edge cases among them.
const CASES: &[&[&str]] = &[
    &[
        "alpha-beta",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--bytes",
        "32KiB",
    ],
    &[
        "alpha-beta",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--bytes",
        "4",
        "--messages",
        "1000",
    ],
    &[
        "alpha-beta",
        "--t0",
        "6000cycles",
        "--clock",
        "3GHz",
        "--bandwidth",
        "100Gbit/s",
        "--bytes",
        "1MB",
    ],
    &["assignment", "--n", "4096", "--p", "64"],
    &["assignment", "--n", "4096", "--p", "1"],
    &[
        "assignment",
        "--n",
        "1200",
        "--p",
        "12",
        "--line-bytes",
        "2",
    ],
    &[
        "assignment",
        "--n",
        "4096",
        "--p",
        "64",
        "--line-bytes",
        "128",
        "--elem-bytes",
        "8",
    ],
    &[
        "little",
        "--bandwidth",
        "20GB/s",
        "--latency",
        "200cycles",
        "--clock",
        "3GHz",
    ],
    &["little", "--outstanding", "10", "--latency", "80ns"],
    &[
        "roofline",
        "--peak-flops",
        "768GFLOP/s",
        "--bandwidth",
        "20GB/s",
        "--ai",
        "0.15",
    ],
    &[
        "roofline",
        "--peak-flops",
        "768GFLOP/s",
        "--bandwidth",
        "20GB/s",
        "--ai",
        "100",
    ],
    &["--profile", "textbook", "roofline", "--ai", "1"],
    &["amdahl", "--serial-fraction", "0.05", "--p", "16"],
    &["amdahl", "--serial-fraction", "0", "--p", "8"],
    &["karp-flatt", "--speedup", "12", "--p", "16"],
    &["karp-flatt", "--speedup", "20", "--p", "16"],
    &["karp-flatt", "--speedup", "0.5", "--p", "16"],
    &["work-span", "--work", "1e6", "--span", "1e3", "--p", "64"],
    &["work-span", "--work", "1e6", "--span", "1e5", "--p", "64"],
    &[
        "stencil-scaling",
        "--n",
        "4096",
        "--p",
        "64",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--update-time",
        "2cycles",
        "--clock",
        "3GHz",
    ],
    &[
        "stencil-scaling",
        "--n",
        "4096",
        "--p",
        "1",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--update-time",
        "1ns",
    ],
    &[
        "stencil-scaling",
        "--n",
        "4096",
        "--p",
        "16",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--update-time",
        "1ns",
        "--weak",
        "--overlap",
    ],
    &["fusion"],
    &[
        "fusion",
        "--write-allocate",
        "--elements",
        "1e8",
        "--bandwidth",
        "20GB/s",
    ],
    &[
        "tiling",
        "--row-elems",
        "1e6",
        "--tile-elems",
        "1024",
        "--cache",
        "2MiB",
    ],
    &[
        "tiling",
        "--row-elems",
        "4096",
        "--tile-elems",
        "512",
        "--cache",
        "2MiB",
        "--write-allocate",
    ],
    &["false-sharing", "--threads", "16", "--elem-bytes", "100"],
    &["false-sharing", "--threads", "16", "--elem-bytes", "24"],
    &[
        "false-sharing",
        "--threads",
        "8",
        "--elem-bytes",
        "8",
        "--writes",
        "1e6",
        "--line-transfer",
        "60ns",
        "--local-write",
        "1ns",
    ],
    &[
        "lock",
        "--t-crit",
        "600ns",
        "--ops",
        "1e6",
        "--threads",
        "16",
    ],
    &[
        "lock",
        "--t-crit",
        "600ns",
        "--t-work",
        "2us",
        "--ops",
        "1e6",
        "--threads",
        "16",
        "--buckets",
        "64",
    ],
    &["combining", "--p", "1", "--t-op", "100ns"],
    &["combining", "--p", "64", "--t-op", "100ns", "--fan-in", "4"],
    &["queue", "--arrival-rate", "0.8", "--service-rate", "1"],
    &["queue", "--arrival-rate", "8e5", "--service-rate", "1e6"],
    &["office-hours"],
    &["office-hours", "--leave-times", "0,0,0,0,7min"],
    &[
        "office-hours",
        "--leave-times",
        "0min,90min",
        "--walk",
        "2min",
        "--answer",
        "10min",
    ],
    &[
        "binning",
        "--items",
        "1e6",
        "--global-lock-op",
        "600ns",
        "--bucket-lock-op",
        "290ns",
        "--bandwidth",
        "20GB/s",
    ],
    &[
        "binning",
        "--items",
        "1e6",
        "--global-lock-op",
        "600ns",
        "--bucket-lock-op",
        "290ns",
        "--bandwidth",
        "20GB/s",
        "--sort-op",
        "50ns",
    ],
    &[
        "pipeline",
        "--stages",
        "5",
        "--stage-time",
        "2ns",
        "--items",
        "1000",
    ],
    &[
        "pipeline",
        "--stages",
        "4",
        "--stage-time",
        "1ns",
        "--items",
        "1",
        "--slowest-stage",
        "3ns",
    ],
    &[
        "overlap",
        "--overhead",
        "1us",
        "--occupancy",
        "3us",
        "--latency",
        "2us",
        "--overlap",
        "1.5us",
    ],
    &[
        "ridge-block",
        "--peak-flops",
        "768GFLOP/s",
        "--bandwidth",
        "20GB/s",
        "--elem-bytes",
        "4",
    ],
    &[
        "mlp",
        "--bandwidth",
        "20GB/s",
        "--latency",
        "100ns",
        "--cores",
        "16",
    ],
    &[
        "message-size",
        "--t0",
        "2us",
        "--bandwidth",
        "6.4GB/s",
        "--fraction",
        "0.9",
    ],
];

/// The result printed on a line: its first quantity, without the second
/// reading in parentheses.
fn result_value(line: &str) -> Result<f64, String> {
    let main = line.split(" (").next().unwrap_or(line);
    expr::eval(main)
}

/// Checks every line of work of one invocation; returns how many.
fn check_work(args: &[&str]) -> usize {
    let mut full = vec!["eval"];
    full.extend_from_slice(args);
    let out = predict(&full);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut checked = 0;
    for (i, pair) in lines.windows(2).enumerate() {
        let ctx = || format!("{args:?}, line {}: «{}» then «{}»", i + 1, pair[0], pair[1]);
        if let (Some(sub), Some(res)) = (pair[0].strip_prefix("= "), pair[1].strip_prefix("= ")) {
            let (cmp, sub) = match sub.split_once(" → ") {
                Some((c, s)) => (Some(c), s),
                None => (None, sub),
            };
            if let Some(c) = cmp {
                assert_eq!(
                    expr::eval(c).unwrap_or(0.0),
                    1.0,
                    "comparison fails: {}",
                    ctx()
                );
            }
            let got = expr::eval(sub).unwrap_or_else(|e| panic!("{e}: {}", ctx()));
            let want = result_value(res).unwrap_or_else(|e| panic!("{e}: {}", ctx()));
            let tol = 2e-3 * want.abs().max(got.abs()) + 1e-300;
            assert!((got - want).abs() <= tol, "{got} ≠ {want}: {}", ctx());
            checked += 1;
        } else if let (Some(sub), Some(_)) =
            (pair[0].strip_prefix(": "), pair[1].strip_prefix("→ "))
        {
            if ["<", "≤", ">", "≥"].iter().any(|c| sub.contains(c)) {
                assert_eq!(expr::eval(sub).unwrap_or(0.0), 1.0, "verdict: {}", ctx());
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "{args:?}: no work found in\n{text}");
    checked
}

#[test]
fn every_line_of_work_evaluates_to_its_result() {
    let total: usize = CASES.iter().map(|a| check_work(a)).sum();
    assert!(total > 150, "only {total} lines checked");
}

/// Every key path of a JSON value, with the kind of value at leaves
/// (number and null are one kind: an absent result is null).
fn shape(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                shape(x, &format!("{at}.{k}"), out);
            }
        }
        Value::Array(a)
            if at.ends_with(".work") || at.ends_with(".notes") || at.ends_with(".warnings") =>
        {
            out.push(format!("{at}: list"));
        }
        Value::Array(_) => out.push(format!("{at}: array")),
        Value::Bool(_) => out.push(format!("{at}: bool")),
        Value::String(_) => out.push(format!("{at}: text")),
        Value::Number(_) | Value::Null => out.push(format!("{at}: number")),
    }
}

fn json(args: &[&str]) -> Value {
    let mut full = vec!["eval", "--json"];
    full.extend_from_slice(args);
    let out = predict(&full);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

/// The subcommand of a case (after a leading `--profile NAME`).
fn model<'a>(args: &[&'a str]) -> &'a str {
    if args[0] == "--profile" {
        args[2]
    } else {
        args[0]
    }
}

#[test]
fn one_json_shape_per_subcommand() {
    let mut shapes: std::collections::BTreeMap<&str, (Vec<String>, &[&str])> = Default::default();
    for args in CASES {
        let mut s = Vec::new();
        shape(&json(args), "", &mut s);
        s.sort();
        match shapes.get(model(args)) {
            Some((first, first_args)) => assert_eq!(
                first, &s,
                "{first_args:?} and {args:?} give different JSON shapes"
            ),
            None => {
                shapes.insert(model(args), (s, args));
            }
        }
    }
}

#[test]
fn every_flag_given_is_an_input() {
    // Flags whose input key differs from the flag's name.
    const ALIAS: &[(&str, &str)] = &[("update_time", "update_s"), ("cache", "cache_bytes")];
    for args in CASES {
        let j = json(args);
        let inputs = j["inputs"].as_object().expect("inputs");
        for flag in args.iter().filter_map(|a| a.strip_prefix("--")) {
            if flag == "profile" {
                continue;
            }
            let key = flag.replace('-', "_");
            let key = ALIAS
                .iter()
                .find(|(f, _)| *f == key)
                .map_or(key.clone(), |(_, k)| k.to_string());
            assert!(
                inputs
                    .keys()
                    .any(|k| k == &key || k.starts_with(&format!("{key}_"))),
                "{args:?}: --{flag} is not among the inputs {:?}",
                inputs.keys().collect::<Vec<_>>()
            );
        }
        for (k, v) in inputs {
            if ["write_allocate", "weak", "overlap"].contains(&k.as_str()) {
                assert!(
                    v.is_boolean(),
                    "{args:?}: inputs.{k} = {v} is not a boolean"
                );
            }
        }
    }
}

#[test]
fn the_lecture_table_marks_its_slips() {
    let out = predict(&["eval", "lecture", "--json"]);
    assert!(out.status.success());
    let j: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let rows = j["examples"].as_array().expect("examples");
    assert!(rows.len() >= 30, "{} examples", rows.len());
    let slip = |what: &str| {
        rows.iter()
            .find(|r| r["example"].as_str().is_some_and(|e| e.contains(what)))
            .unwrap_or_else(|| panic!("no example {what}"))
            .clone()
    };
    for (what, lecture, computed) in [
        ("Amdahl f = 1 %", 39.4, 39.26),
        ("P where communication", 1575.0, 1571.0),
        ("the last one's time", 1380.0, 1800.0),
        ("loads per element", 3.0, 6.0),
        ("split into one-element", 36.0, 2302.0),
    ] {
        let r = slip(what);
        assert_eq!(r["agrees"], false, "{r}");
        assert_eq!(r["lecture"].as_f64(), Some(lecture));
        let c = r["computed"].as_f64().unwrap();
        assert!((c - computed).abs() <= 5e-3 * computed, "{r}");
        assert!(r["why"].as_str().is_some_and(|w| w.len() > 20), "{r}");
    }
    assert_eq!(slip("T(32 KiB)")["agrees"], true);
    assert_eq!(
        j["slips"],
        rows.iter().filter(|r| r["agrees"] == false).count()
    );
    let text = predict(&["eval", "lecture"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("lecture 39.4 | computed") && text.contains("slip:"),
        "{text}"
    );
}
