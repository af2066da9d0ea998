//! Networks for the scaling planner: the calibrated one from a profile
//! (T0 and B per protocol regime, with intervals), another cluster's from
//! its profile (`--network-profile`), or a what-if given on the command
//! line (`--network t0=1.5us,bw=12.5GB/s[,name=upgrade]`, exact values).

use std::path::Path;

use models::profile::{Network, Profile};
use models::units::{parse, Dimension, Si};
use models::Estimate;

use super::curves::Range;
use super::uncertainty::Param;
use crate::error::BadInput;

/// One protocol regime with uncertain T0 and B.
#[allow(non_snake_case)]
#[derive(Debug, Clone, PartialEq)]
pub struct Regime {
    pub range: Range,
    pub t0_s: Estimate,
    pub bandwidth_Bps: Estimate,
}

/// A network to plan with.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkSpec {
    pub name: String,
    /// Where it came from ("profile data/profile.json", "--network").
    pub source: String,
    pub regimes: Vec<Regime>,
}

impl NetworkSpec {
    /// The regimes' size ranges, in θ order.
    pub fn ranges(&self) -> Vec<Range> {
        self.regimes.iter().map(|r| r.range).collect()
    }

    /// T0 and B of each regime as parameters, in θ order.
    pub fn params(&self) -> Vec<Param> {
        let many = self.regimes.len() > 1;
        let mut out = Vec::new();
        for r in &self.regimes {
            let suffix = if many {
                format!(
                    " [{}–{}]",
                    models::units::binary_bytes(r.range.from_bytes),
                    if r.range.to_bytes.is_finite() {
                        models::units::binary_bytes(r.range.to_bytes)
                    } else {
                        "∞".into()
                    }
                )
            } else {
                String::new()
            };
            // A regime beyond the caches can fit a line with a negative
            // intercept (the per-byte time rises with size): that line only
            // holds inside its range, so its T0 is not bounded below.
            let t0 = if r.t0_s.point < 0.0 {
                Param::unbounded
            } else {
                Param::non_negative
            };
            out.push(t0(&format!("T0{suffix}"), "s", r.t0_s, &self.source));
            out.push(Param::positive(
                &format!("B{suffix}"),
                "B/s",
                r.bandwidth_Bps,
                &self.source,
            ));
        }
        out
    }

    /// "T0 = 4.00 µs, B = 10.0 GB/s" of the regime serving `bytes`.
    pub fn describe_for(&self, bytes: f64) -> String {
        let i = super::curves::regime_index(&self.ranges(), bytes);
        let r = &self.regimes[i];
        format!(
            "T0 = {}, B = {} for {} messages",
            fmt_est(&r.t0_s, "s"),
            fmt_est(&r.bandwidth_Bps, "B/s"),
            models::units::binary_bytes(bytes)
        )
    }
}

/// "4.00 µs (3.60 µs – 4.40 µs)", or just the value when exact.
pub fn fmt_est(e: &Estimate, unit: &'static str) -> String {
    if unit.is_empty() {
        return if e.hi > e.lo {
            format!("{:.4} ({:.4} – {:.4})", e.point, e.lo, e.hi)
        } else {
            format!("{:.4}", e.point)
        };
    }
    if e.hi > e.lo {
        format!(
            "{} ({} – {})",
            Si(e.point, unit),
            Si(e.lo, unit),
            Si(e.hi, unit)
        )
    } else {
        Si(e.point, unit).to_string()
    }
}

/// The network of a profile section.
pub fn from_network(net: &Network, name: &str, source: &str) -> Result<NetworkSpec, BadInput> {
    if net.regimes.is_empty() {
        return Err(BadInput(format!(
            "{source}: the network section has no regimes; re-run `mpirun -np 2 calibrate --only pingpong`"
        )));
    }
    let mut regimes: Vec<Regime> = net
        .regimes
        .iter()
        .map(|r| Regime {
            range: Range {
                from_bytes: r.from_bytes,
                to_bytes: r.to_bytes,
            },
            t0_s: r.t0_s,
            bandwidth_Bps: r.bandwidth_Bps,
        })
        .collect();
    regimes.sort_by(|a, b| a.range.from_bytes.total_cmp(&b.range.from_bytes));
    // Each regime's line must give a positive time over its own range; its
    // T0 may be negative when the regime starts at large sizes.
    if let Some(r) = regimes.iter().find(|r| {
        let b = r.bandwidth_Bps.point;
        let t_first = r.t0_s.point + r.range.from_bytes.max(1.0) / b;
        !b.is_finite() || b <= 0.0 || t_first.is_nan() || t_first <= 0.0
    }) {
        return Err(BadInput(format!(
            "{source}: a network regime from {} B has T0 = {} s and B = {} B/s; B must be > 0 and T0 + n/B > 0 over the regime",
            r.range.from_bytes, r.t0_s.point, r.bandwidth_Bps.point
        )));
    }
    Ok(NetworkSpec {
        name: name.to_string(),
        source: source.to_string(),
        regimes,
    })
}

/// The calibrated network of `profile`: its `network` section, else its
/// summary's MPI T0 and B (exact), else None.
pub fn from_profile(profile: &Profile, source: &str) -> Result<Option<NetworkSpec>, BadInput> {
    if let Some(net) = &profile.network {
        let name = if net.transport.is_empty() {
            "calibrated network".to_string()
        } else {
            net.transport.clone()
        };
        return from_network(net, &name, source).map(Some);
    }
    match (profile.summary.mpi_t0_s, profile.summary.mpi_bandwidth_Bps) {
        (Some(t0), Some(b)) if t0 >= 0.0 && b > 0.0 => Ok(Some(NetworkSpec {
            name: "calibrated network".into(),
            source: format!("{source} (summary)"),
            regimes: vec![Regime {
                range: Range {
                    from_bytes: 0.0,
                    to_bytes: f64::INFINITY,
                },
                t0_s: Estimate::exact(t0),
                bandwidth_Bps: Estimate::exact(b),
            }],
        })),
        _ => Ok(None),
    }
}

/// A network file: a whole profile, or just its `network` object.
pub fn from_file(path: &Path) -> anyhow::Result<NetworkSpec> {
    let crate::profiles::Located {
        label: source,
        name: stem,
        text,
    } = crate::profiles::locate(path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        BadInput(format!(
            "{source} line {}, column {}: not valid JSON ({e})",
            e.line(),
            e.column()
        ))
    })?;
    if value.get("schema_version").is_some() {
        let profile = Profile::from_json(&text)?;
        return from_profile(&profile, &source)?.ok_or_else(|| {
            BadInput(format!("{source}: the profile has no network section")).into()
        });
    }
    let net: Network = serde_json::from_value(value).map_err(|e| {
        BadInput(format!(
            "{source}: neither a profile nor a network section ({e})"
        ))
    })?;
    let name = if net.transport.is_empty() {
        stem
    } else {
        net.transport.clone()
    };
    Ok(from_network(&net, &name, &source)?)
}

/// Parses `t0=1.5us,bw=12.5GB/s[,name=upgrade]` (keys `t0`/`latency`,
/// `bw`/`b`/`bandwidth`, `name`; any order).
pub fn parse_what_if(s: &str, index: usize) -> Result<NetworkSpec, BadInput> {
    let bad = |why: String| {
        BadInput(format!(
            "--network '{s}': {why}; write it as t0=1.5us,bw=12.5GB/s (optionally ,name=upgrade)"
        ))
    };
    let (mut t0, mut bw, mut name) = (None, None, None);
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("'{part}' is not key=value")))?;
        match k.trim().to_ascii_lowercase().as_str() {
            "t0" | "latency" => {
                let p = parse(v, Dimension::Time).map_err(|e| bad(e.to_string()))?;
                if p.cycles {
                    return Err(bad("T0 in cycles needs a clock; give it in seconds".into()));
                }
                if p.value.is_nan() || p.value < 0.0 {
                    return Err(bad(format!("T0 = {v} is negative")));
                }
                t0 = Some(p.value);
            }
            "bw" | "b" | "bandwidth" => {
                let p = parse(v, Dimension::Bandwidth).map_err(|e| bad(e.to_string()))?;
                if p.value.is_nan() || p.value <= 0.0 {
                    return Err(bad(format!("B = {v} is not positive")));
                }
                bw = Some(p.value);
            }
            "name" => name = Some(v.trim().to_string()),
            other => return Err(bad(format!("unknown key '{other}'"))),
        }
    }
    let t0 = t0.ok_or_else(|| bad("t0 is missing".into()))?;
    let bw = bw.ok_or_else(|| bad("bw is missing".into()))?;
    let name = name
        .unwrap_or_else(|| format!("what-if {}: {} / {}", index + 1, Si(t0, "s"), Si(bw, "B/s")));
    Ok(NetworkSpec {
        name,
        source: "--network".into(),
        regimes: vec![Regime {
            range: Range {
                from_bytes: 0.0,
                to_bytes: f64::INFINITY,
            },
            t0_s: Estimate::exact(t0),
            bandwidth_Bps: Estimate::exact(bw),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_if_networks_parse() {
        let n = parse_what_if("t0=1.5us,bw=12.5GB/s,name=upgrade", 0).unwrap();
        assert_eq!(n.name, "upgrade");
        assert_eq!(n.regimes[0].t0_s.point, 1.5e-6);
        assert_eq!(n.regimes[0].bandwidth_Bps.point, 12.5e9);
        let n = parse_what_if("bw=100Gbit/s, t0=2us", 1).unwrap();
        assert_eq!(n.regimes[0].bandwidth_Bps.point, 12.5e9);
        assert!(n.name.starts_with("what-if 2"), "{}", n.name);
    }

    #[test]
    fn bad_networks_say_how_to_write_them() {
        for s in [
            "t0=1.5us",
            "bw=1GB/s",
            "t0=fast,bw=1GB/s",
            "t0=1us,bw=0GB/s",
            "t0=1us;bw=1GB/s",
            "x=1,t0=1us,bw=1GB/s",
            "t0=-1us,bw=1GB/s",
        ] {
            let e = parse_what_if(s, 0).unwrap_err();
            assert!(e.0.contains("write it as t0=1.5us,bw=12.5GB/s"), "{s}: {e}");
        }
    }
}
