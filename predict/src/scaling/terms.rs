//! How the communication term of a fitted scaling model is chosen. The
//! model, Amdahl's law (lecture §4.6) plus one communication term c·g(P),
//! is [`models::amdahl_comm`]:
//!
//! T(P) = T1·(f + (1 − f)/P) + c·g(P) = a + b/P + c·g(P),
//!
//! with a = T1·f (serial), b = T1·(1 − f) (parallel). The form is linear in
//! (a, b, c), so a ≥ 0, b ≥ 0, c ≥ 0, i.e. 0 ≤ f ≤ 1 and c ≥ 0, is a
//! non-negative least-squares fit ([`models::fit::non_negative`]), one for
//! each candidate term of [`Term::ALL`].
//!
//! The term is chosen by the small-sample Akaike information criterion of
//! each candidate's bounded fit, AICc = n·ln(RSS_w/n) + 2k + 2k(k + 1)/
//! (n − k − 1) ([`models::fit::aicc`]): lowest wins, and a tie goes to the
//! simpler term (earlier in [`Term::ALL`]). An information criterion rather
//! than cross-validation by P, because a constant term differs from the
//! serial fraction only at P = 1, which a fold without P = 1 cannot
//! predict.

use serde::Serialize;

pub use models::amdahl_comm::{time_s, Domain, Term};

/// One candidate's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    pub term: Term,
    /// AICc of the candidate's fit (lower is better).
    pub score: f64,
}
