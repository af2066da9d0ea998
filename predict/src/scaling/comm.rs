//! `--comm`: what one's own code communicates, so that a what-if network
//! can be applied to it without a trace.
//!
//! ```text
//! --comm msgs=2,bytes=4MB/P^0.5,allreduce=8B,iters=100
//! ```
//!
//! Per iteration the code sends `msgs` messages carrying `bytes` in all
//! (each message bytes/msgs) and takes part in each `allreduce` of the
//! given size; `iters` iterations make one run (default 1: the runs' times
//! are per iteration). `msgs` and `bytes` may grow with P: a value followed
//! by factors `*P`, `/P`, `*P^0.5`, `*sqrtP`, `*log2P`. On a network with
//! start-up T0 and bandwidth B (the α-β model, lecture §2.7, §4.1), the
//! regime chosen by message size ([`super::curves::regime_index`]):
//!
//! comm(P) = iters·[msgs·T0 + bytes/B + Σ log₂P·(T0 + size/B)],
//!
//! an allreduce costed as log₂P rounds of a recursive-doubling exchange. A
//! single process communicates nothing: comm(1) = 0. The computation comes
//! from the fit of the runs, T1·(f + (1 − f)/P) ([`super::fit`]).

use models::units::{parse, Dimension, Si};
use serde::Serialize;

use super::curves::{regime_index, Curve, Point, Range};
use crate::error::BadInput;

/// base·P^a·(log₂P)^b.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    pub base: f64,
    pub p_exp: f64,
    pub log_exp: f64,
    pub text: String,
}

impl Growth {
    fn constant(v: f64) -> Self {
        Self {
            base: v,
            p_exp: 0.0,
            log_exp: 0.0,
            text: format!("{v}"),
        }
    }

    /// The value at P (P > 1).
    pub fn at(&self, p: f64) -> f64 {
        let mut v = self.base * p.powf(self.p_exp);
        if self.log_exp != 0.0 {
            v *= p.log2().powf(self.log_exp);
        }
        v
    }
}

/// The user's description of the code's communication.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommSpec {
    pub msgs: Growth,
    pub bytes: Growth,
    /// Sizes of the allreduces of one iteration, in bytes.
    pub allreduce_bytes: Vec<f64>,
    pub iters: f64,
    /// As given.
    pub text: String,
}

fn growth(v: &str, dim: Option<Dimension>) -> Result<Growth, String> {
    let split = v.find(['*', '/']).unwrap_or(v.len());
    let (head, mut rest) = (v[..split].trim(), &v[split..]);
    let base = match dim {
        Some(d) => parse(head, d).map_err(|e| e.to_string())?.value,
        None => head
            .parse::<f64>()
            .map_err(|_| format!("'{head}' is not a number"))?,
    };
    if !(base.is_finite() && base >= 0.0) {
        return Err(format!("'{head}' is negative"));
    }
    let mut g = Growth {
        base,
        p_exp: 0.0,
        log_exp: 0.0,
        text: v.trim().to_string(),
    };
    while let Some(op) = rest.chars().next() {
        let sign = if op == '*' { 1.0 } else { -1.0 };
        let end = rest[1..].find(['*', '/']).map_or(rest.len(), |i| i + 1);
        let factor = rest[1..end].trim().replace(' ', "");
        match factor.as_str() {
            "P" | "p" => g.p_exp += sign,
            "sqrtP" | "sqrt(P)" => g.p_exp += 0.5 * sign,
            "log2P" | "log2(P)" => g.log_exp += sign,
            f if f.starts_with("P^") || f.starts_with("p^") => {
                let e: f64 = f[2..]
                    .trim_matches(|c| c == '(' || c == ')')
                    .parse()
                    .map_err(|_| format!("'{f}': the exponent is not a number"))?;
                g.p_exp += sign * e;
            }
            f => {
                return Err(format!(
                    "unknown factor '{f}' (use P, P^0.5, sqrtP or log2P)"
                ))
            }
        }
        rest = &rest[end..];
    }
    Ok(g)
}

/// Parses `msgs=2,bytes=4MB/P^0.5,allreduce=8B,iters=100`.
pub fn parse_comm(s: &str) -> Result<CommSpec, BadInput> {
    let bad = |why: String| {
        BadInput(format!(
            "--comm '{s}': {why}; write it as msgs=2,bytes=4MB/P^0.5 (optionally ,allreduce=8B ,iters=100)"
        ))
    };
    let (mut msgs, mut bytes, mut all, mut iters) = (None, None, Vec::new(), 1.0);
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("'{part}' is not key=value")))?;
        match k.trim().to_ascii_lowercase().as_str() {
            "msgs" | "messages" => msgs = Some(growth(v, None).map_err(&bad)?),
            "bytes" => bytes = Some(growth(v, Some(Dimension::Bytes)).map_err(&bad)?),
            "allreduce" => {
                let b = parse(v, Dimension::Bytes).map_err(|e| bad(e.to_string()))?;
                if !(b.value > 0.0 && b.value.is_finite()) {
                    return Err(bad(format!("allreduce = {v} is not positive")));
                }
                all.push(b.value);
            }
            "iters" | "iterations" => {
                iters = v
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| *x >= 1.0 && x.fract() == 0.0)
                    .ok_or_else(|| bad(format!("iters = {v} is not a whole number >= 1")))?;
            }
            other => return Err(bad(format!("unknown key '{other}'"))),
        }
    }
    if msgs.is_none() && bytes.is_none() && all.is_empty() {
        return Err(bad("it names no messages, bytes or allreduce".into()));
    }
    // Bytes without a count are one message; a count without bytes is
    // start-ups only.
    let msgs = msgs.unwrap_or_else(|| Growth::constant(if bytes.is_some() { 1.0 } else { 0.0 }));
    if bytes.is_some() && msgs.base == 0.0 {
        return Err(bad("bytes are sent in msgs = 0 messages".into()));
    }
    Ok(CommSpec {
        msgs,
        bytes: bytes.unwrap_or_else(|| Growth::constant(0.0)),
        allreduce_bytes: all,
        iters,
        text: s.to_string(),
    })
}

impl CommSpec {
    /// The size of one point-to-point message at P (0 when none are sent).
    pub fn message_bytes(&self, p: f64) -> f64 {
        let m = self.msgs.at(p);
        if m > 0.0 {
            self.bytes.at(p) / m
        } else {
            0.0
        }
    }

    /// Communication time of one run at P on a network whose regimes
    /// `ranges` have (T0, B) at `net[2r]`, `net[2r + 1]`.
    pub fn time_s(&self, ranges: &[Range], net: &[f64], p: f64) -> f64 {
        if p <= 1.0 {
            return 0.0;
        }
        let ab = |bytes: f64| {
            let r = regime_index(ranges, bytes);
            (net[2 * r], net[2 * r + 1])
        };
        let mut t = 0.0;
        let m = self.msgs.at(p);
        if m > 0.0 {
            let (t0, b) = ab(self.message_bytes(p));
            t += m * t0 + self.bytes.at(p) / b;
        }
        for &z in &self.allreduce_bytes {
            let (t0, b) = ab(z);
            t += p.log2() * (t0 + z / b);
        }
        self.iters * t
    }

    /// "2.000 messages of 2.00 MB per iteration at P = 4, an allreduce of
    /// 8 B" for the setup lines.
    pub fn describe_at(&self, p: f64) -> String {
        let mut parts = Vec::new();
        if self.msgs.at(p) > 0.0 {
            parts.push(format!(
                "{:.3} messages of {}",
                self.msgs.at(p),
                Si(self.message_bytes(p), "B")
            ));
        }
        for z in &self.allreduce_bytes {
            parts.push(format!("an allreduce of {}", Si(*z, "B")));
        }
        format!(
            "{} per iteration at P = {}",
            parts.join(", "),
            super::report::fmt_p(p)
        )
    }
}

/// One's own code on a network: θ = [T1, f, T0₁, B₁, T0₂, B₂, …].
#[derive(Debug, Clone, PartialEq)]
pub struct OwnCode {
    pub spec: CommSpec,
    /// Communication overlapped with the parallel work: max instead of sum.
    pub overlap: bool,
    pub regimes: Vec<Range>,
}

impl Curve for OwnCode {
    fn point(&self, theta: &[f64], p: f64) -> Point {
        let (t1, f) = (theta[0], theta[1]);
        let compute = t1 * (1.0 - f) / p;
        let comm = self.spec.time_s(&self.regimes, &theta[2..], p);
        let time = t1 * f
            + if self.overlap {
                compute.max(comm)
            } else {
                compute + comm
            };
        Point::strong(p, t1, time, compute, comm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_regime() -> Vec<Range> {
        vec![Range {
            from_bytes: 0.0,
            to_bytes: f64::INFINITY,
        }]
    }

    #[test]
    fn growth_and_costs() {
        let c = parse_comm("msgs=2,bytes=4MB/P^0.5,allreduce=8B,iters=10").unwrap();
        assert_eq!(c.bytes.at(4.0), 2e6);
        assert_eq!(c.message_bytes(4.0), 1e6);
        // 10·[2·1us + 2MB/1GB/s + 2·(1us + 8B/1GB/s)]
        let t = c.time_s(&one_regime(), &[1e-6, 1e9], 4.0);
        let want = 10.0 * (2e-6 + 2e6 / 1e9 + 2.0 * (1e-6 + 8.0 / 1e9));
        assert!((t - want).abs() < 1e-15, "{t} vs {want}");
        assert_eq!(c.time_s(&one_regime(), &[1e-6, 1e9], 1.0), 0.0);
        let g = parse_comm("msgs=4*log2P,bytes=1KiB*P/sqrtP").unwrap();
        assert_eq!(g.msgs.at(8.0), 12.0);
        assert!((g.bytes.at(16.0) - 1024.0 * 4.0).abs() < 1e-9);
    }

    #[test]
    fn regimes_by_each_message_size() {
        let r = vec![
            Range {
                from_bytes: 0.0,
                to_bytes: 1000.0,
            },
            Range {
                from_bytes: 1000.0,
                to_bytes: f64::INFINITY,
            },
        ];
        let net = [1e-6, 1e9, 5e-6, 2e9];
        let c = parse_comm("bytes=1MB,allreduce=8B").unwrap();
        let t = c.time_s(&r, &net, 2.0);
        assert!((t - (5e-6 + 1e6 / 2e9 + 1e-6 + 8.0 / 1e9)).abs() < 1e-15);
    }

    #[test]
    fn bad_descriptions_say_how_to_write_them() {
        for s in [
            "",
            "msgs",
            "msgs=two",
            "bytes=4MB/Q",
            "bytes=4MB/P^x",
            "allreduce=0B",
            "iters=1.5",
            "color=red",
            "msgs=0,bytes=1MB",
        ] {
            let e = parse_comm(s).unwrap_err();
            assert!(
                e.0.contains("write it as msgs=2,bytes=4MB/P^0.5"),
                "{s}: {e}"
            );
        }
    }

    #[test]
    fn overlap_hides_the_smaller_part() {
        let spec = parse_comm("msgs=1,bytes=1MB").unwrap();
        let mut c = OwnCode {
            spec,
            overlap: false,
            regimes: one_regime(),
        };
        let theta = [1.0, 0.0, 0.0, 1e9];
        let sum = c.point(&theta, 2.0).time_s;
        c.overlap = true;
        let max = c.point(&theta, 2.0).time_s;
        assert!((sum - 0.501).abs() < 1e-12 && (max - 0.5).abs() < 1e-12);
    }
}
