//! Reading a loop description: `--array NAME:MODE:BYTES[:stride=S][:random=SIZE]`
//! specs and the JSON description file (`data/README.md`, "Kernel
//! descriptions").

use std::path::Path;

use anyhow::{Context as _, Result};
use models::kernel::{Access, ArrayUse, Mode};
use models::units::{parse, Dimension};
use serde::Deserialize;
use serde_json::Value;

use crate::error::BadInput;

/// Parses one `--array` spec.
///
/// `NAME:MODE:BYTES` with MODE `load`, `store` or `update`, then at most
/// one of `stride=S` (bytes between consecutive iterations; default BYTES)
/// and `random=SIZE` (one random element of a SIZE-byte region).
pub fn parse_array(spec: &str) -> Result<ArrayUse, String> {
    let form = "NAME:MODE:BYTES[:stride=S][:random=SIZE]";
    let parts: Vec<&str> = spec.split(':').collect();
    let [name, mode, bytes, options @ ..] = parts.as_slice() else {
        return Err(format!("--array {spec:?}: expected {form}"));
    };
    if name.is_empty() {
        return Err(format!("--array {spec:?}: the array needs a name ({form})"));
    }
    let mode = match *mode {
        "load" => Mode::Load,
        "store" => Mode::Store,
        "update" => Mode::Update,
        other => {
            return Err(format!(
                "--array {spec:?}: mode {other:?} does not exist; use load, store or update"
            ))
        }
    };
    let size = |what: &str, v: &str| {
        parse(v, Dimension::Bytes)
            .map(|p| p.value)
            .map_err(|e| format!("--array {spec:?}: {what}: {e}"))
    };
    let bytes = size("BYTES", bytes)?;
    let mut access = Access::Strided {
        stride_bytes: bytes,
    };
    match options {
        [] => {}
        [opt] => {
            access = match opt.split_once('=') {
                Some(("stride", v)) => Access::Strided {
                    stride_bytes: size("stride", v)?,
                },
                Some(("random", v)) => Access::Random {
                    region_bytes: size("random", v)?,
                },
                _ => {
                    return Err(format!(
                        "--array {spec:?}: unknown option {opt:?}; use stride=S or random=SIZE"
                    ))
                }
            }
        }
        _ => {
            return Err(format!(
                "--array {spec:?}: give at most one of stride=S and random=SIZE"
            ))
        }
    }
    Ok(ArrayUse {
        name: (*name).to_string(),
        mode,
        bytes,
        access,
    })
}

/// `BYTES@WINDOW`: bytes per iteration loaded again, and the window of the
/// loop's own traffic between the two uses (units allowed: `16@32Ki`).
pub fn parse_reuse(spec: &str) -> Result<models::kernel::Reuse, String> {
    let (bytes, window) = spec
        .split_once('@')
        .ok_or_else(|| format!("--windowed-reuse {spec:?}: write BYTES@WINDOW, e.g. 16@32816"))?;
    // Sizes as `--array` reads them: `32KiB`, `12.8kB` or plain bytes.
    let size = |s: &str| {
        parse(s, Dimension::Bytes)
            .map(|p| p.value)
            .map_err(|e| format!("--windowed-reuse {spec:?}: {e}"))
    };
    Ok(models::kernel::Reuse {
        bytes: size(bytes)?,
        window_bytes: size(window)?,
    })
}

/// A description file: every field optional, command-line flags win.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescriptionFile {
    pub name: Option<String>,
    pub n: Option<Value>,
    pub threads: Option<usize>,
    #[serde(default)]
    pub arrays: Vec<String>,
    pub flops: Option<Value>,
    pub precision: Option<models::kernel::Precision>,
    pub chain: Option<Value>,
    pub span: Option<Value>,
    pub reused: Option<Value>,
    #[serde(default)]
    pub windowed_reuse: Vec<models::kernel::Reuse>,
    pub segment: Option<f64>,
    pub segment_stride: Option<f64>,
    #[serde(default)]
    pub sort_loops: Vec<models::kernel::SortLoop>,
    pub huge_pages: Option<bool>,
}

impl DescriptionFile {
    /// Reads and parses `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            BadInput(format!(
                "cannot read the description {}: {e}",
                path.display()
            ))
        })?;
        serde_json::from_str(&text)
            .map_err(|e| BadInput(format!("the description {}: {e}", path.display())))
            .context("reading the kernel description")
    }
}

/// A count from a file: a JSON number, or a string with the toolkit's units
/// (`"16Mi"`, `"1e6"`).
pub fn count_value(field: &str, v: &Value) -> Result<f64, BadInput> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| BadInput(format!("{field}: {n} is not a number"))),
        Value::String(s) => parse(s, Dimension::Count)
            .map(|p| p.value)
            .map_err(|e| BadInput(format!("{field}: {e}"))),
        other => Err(BadInput(format!(
            "{field}: expected a number or a string such as \"1e6\", not {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_specs() {
        let a = parse_array("x:load:8").unwrap();
        assert_eq!(a.mode, Mode::Load);
        assert_eq!(a.access, Access::Strided { stride_bytes: 8.0 });
        let a = parse_array("y:update:4:stride=64").unwrap();
        assert_eq!(a.mode, Mode::Update);
        assert_eq!(a.access, Access::Strided { stride_bytes: 64.0 });
        let a = parse_array("t:load:8:random=128MiB").unwrap();
        assert_eq!(
            a.access,
            Access::Random {
                region_bytes: 134_217_728.0
            }
        );
    }

    #[test]
    fn bad_array_specs_say_why() {
        for (spec, says) in [
            ("x:read:8", "does not exist"),
            ("x:load", "expected NAME:MODE:BYTES"),
            (":load:8", "needs a name"),
            ("x:load:8:step=2", "unknown option"),
            ("x:load:8:stride=8:random=1MiB", "at most one"),
            ("x:load:eight", "BYTES"),
        ] {
            let e = parse_array(spec).unwrap_err();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }

    #[test]
    fn counts_take_units() {
        assert_eq!(count_value("n", &serde_json::json!(1000)).unwrap(), 1000.0);
        assert_eq!(
            count_value("n", &serde_json::json!("16Mi")).unwrap(),
            16777216.0
        );
        assert!(count_value("n", &serde_json::json!(true)).is_err());
    }
}
