//! [`FitError`]: every way a fit can refuse its input or fail to converge.
//!
//! Each message is one sentence that says what is missing or what to change.

use thiserror::Error;

/// Why a fit could not be made.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FitError {
    /// Fewer points than the fit needs: a model with `p` parameters needs at
    /// least `p + 1` points so that one degree of freedom is left for the
    /// residual variance and hence for the intervals.
    #[error(
        "{what} needs at least {needed} points but only {got} were given; measure more points"
    )]
    TooFewPoints {
        /// What was being fitted (for example "a line").
        what: &'static str,
        /// Points needed.
        needed: usize,
        /// Points given.
        got: usize,
    },

    /// Two inputs that must have one value per point have different lengths.
    #[error("{what} has {got} values but there are {expected} points; give exactly one per point")]
    LengthMismatch {
        /// Which input is the wrong length ("y", "weights", "design rows").
        what: &'static str,
        /// The number of points (the length of x, or the design's rows).
        expected: usize,
        /// The length that was given.
        got: usize,
    },

    /// An input holds NaN or an infinity.
    #[error("{what}[{index}] is {value}, not a finite number; remove or repair that point")]
    NonFinite {
        /// Which input ("x", "y", "weights", "design", "initial").
        what: &'static str,
        /// Index of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },

    /// A weight is zero or negative.
    #[error("weights[{index}] is {value} but weights must be positive; drop the point instead of giving it a zero or negative weight")]
    NonPositiveWeight {
        /// Index of the first offending weight.
        index: usize,
        /// The offending weight.
        value: f64,
    },

    /// Relative weights `1/y²` were asked for but some `y` is zero.
    #[error("y[{index}] is zero so its relative weight 1/y² is infinite; remove that point or use absolute weights")]
    ZeroForRelativeWeight {
        /// Index of the first zero `y`.
        index: usize,
    },

    /// Every x is the same, so no slope (and no breakpoint) can be told apart.
    #[error("all x values are equal; vary the size")]
    AllXEqual,

    /// The design (or the Jacobian of a nonlinear model) does not determine
    /// every parameter.
    #[error("the fit is degenerate: {detail}")]
    Singular {
        /// What is degenerate and what to change, as a clause.
        detail: String,
    },

    /// A fitted intercept is negative where the caller forbids it (for
    /// example a negative latency from an alpha–beta fit).
    #[error("the fitted {what} is negative ({value:.3e}), which is not physical; measure more small sizes (or repeat them) so the intercept is pinned down")]
    NegativeIntercept {
        /// What the intercept means ("latency T0").
        what: String,
        /// The fitted value.
        value: f64,
    },

    /// The nonlinear optimiser stopped before converging.
    #[error("the nonlinear fit did not converge after {iterations} iterations ({reason}); give a closer initial guess or allow more iterations")]
    NotConverged {
        /// Iterations used.
        iterations: u64,
        /// Why it stopped.
        reason: String,
    },

    /// The nonlinear model is not finite at the initial parameters.
    #[error("the model is not finite at the initial parameters ({value} at x = {x}); start from parameters where the model is defined")]
    ModelNotFinite {
        /// The x where the model failed.
        x: f64,
        /// What the model returned there.
        value: f64,
    },

    /// An option or argument is out of range.
    #[error("invalid option: {detail}")]
    InvalidOption {
        /// Which option and what it must be, as a clause.
        detail: String,
    },
}
