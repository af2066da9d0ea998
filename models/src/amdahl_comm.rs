//! Amdahl's law plus one communication term (lecture §4.6, §4.1, §4.2):
//!
//! T(P) = T1·(f + (1 − f)/P) + c·g(P),
//!
//! with T1 the time on one process, f the serial fraction and c·g(P) the
//! communication the parallel run adds. The candidate terms g(P) are the
//! normal form's usual few (P^i·log₂^j P): none, a constant, log₂P (a
//! reduction tree, §4.1), √P, P, P·log₂P, and the surface-to-volume ratio
//! (N/P)^((d−1)/d) of a d-dimensional domain split among P processes (a
//! halo exchange, §4.2). One process sends nothing, so every g(1) = 0 and
//! T(1) = T1. `predict scaling --fit` fits (T1, f, c) to a user's runs and
//! chooses the term.

use serde::Serialize;

/// A communication term g(P).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Term {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "const")]
    Const,
    #[serde(rename = "log2P")]
    Log2P,
    #[serde(rename = "sqrtP")]
    SqrtP,
    #[serde(rename = "P")]
    P,
    #[serde(rename = "PlogP")]
    PLogP,
    #[serde(rename = "surface")]
    Surface,
}

/// The domain of the surface-to-volume term: N points in d dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Domain {
    pub n: f64,
    pub dims: f64,
}

impl Term {
    /// The candidates, simplest first.
    pub const ALL: [Term; 7] = [
        Term::None,
        Term::Const,
        Term::Log2P,
        Term::SqrtP,
        Term::P,
        Term::PLogP,
        Term::Surface,
    ];

    /// The name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            Term::None => "none",
            Term::Const => "const",
            Term::Log2P => "log2P",
            Term::SqrtP => "sqrtP",
            Term::P => "P",
            Term::PLogP => "PlogP",
            Term::Surface => "surface",
        }
    }

    /// g(P) as a formula, e.g. "c·log2(P)".
    pub fn formula(self, domain: Option<Domain>) -> String {
        match self {
            Term::None => "0".into(),
            Term::Const => "c".into(),
            Term::Log2P => "c·log2(P)".into(),
            Term::SqrtP => "c·√P".into(),
            Term::P => "c·P".into(),
            Term::PLogP => "c·P·log2(P)".into(),
            Term::Surface => match domain {
                Some(d) => format!("c·({}/P)^({}/{})", d.n, d.dims - 1.0, d.dims),
                None => "c·(N/P)^((d−1)/d)".into(),
            },
        }
    }

    /// g(P); 0 at P ≤ 1 (one process sends nothing). The surface term is
    /// 0 without a domain.
    pub fn g(self, p: f64, domain: Option<Domain>) -> f64 {
        if p <= 1.0 {
            return 0.0;
        }
        match self {
            Term::None => 0.0,
            Term::Const => 1.0,
            Term::Log2P => p.log2(),
            Term::SqrtP => p.sqrt(),
            Term::P => p,
            Term::PLogP => p * p.log2(),
            Term::Surface => domain.map_or(0.0, |d| (d.n / p).powf((d.dims - 1.0) / d.dims)),
        }
    }

    /// Parameters of the joint fit: a and b, and c unless the term is none.
    pub fn parameters(self) -> usize {
        if self == Term::None {
            2
        } else {
            3
        }
    }
}

/// T(P) = T1·(f + (1 − f)/P) + c·g(P).
pub fn time_s(term: Term, domain: Option<Domain>, theta: &[f64], p: f64) -> f64 {
    theta[0] * (theta[1] + (1.0 - theta[1]) / p) + theta[2] * term.g(p, domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_vanish_at_one_process_and_grow_as_named() {
        let d = Some(Domain { n: 1e6, dims: 2.0 });
        for t in Term::ALL {
            assert_eq!(t.g(1.0, d), 0.0, "{}", t.name());
        }
        assert_eq!(Term::Log2P.g(8.0, d), 3.0);
        assert_eq!(Term::PLogP.g(8.0, d), 24.0);
        assert_eq!(Term::SqrtP.g(16.0, d), 4.0);
        assert_eq!(Term::Const.g(2.0, d), 1.0);
        // A 1000×1000 grid over 4 processes: each has a 500×500 block,
        // whose edge is (N/P)^(1/2) = 500 points.
        assert!((Term::Surface.g(4.0, d) - 500.0).abs() < 1e-9);
        assert_eq!(serde_json::to_string(&Term::PLogP).unwrap(), "\"PlogP\"");
    }
}
