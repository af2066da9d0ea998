//! `predict eval <model>`: every formula of the lecture evaluated with the
//! work shown (formula, values substituted, result with units).

mod communication;
mod contention;
pub mod derivation;
mod figures;
mod format;
mod laws;
pub mod lecture;
mod locality;
mod more;

use clap::Subcommand;

pub use derivation::Derivation;
pub use figures::Figures;

/// The models `eval` knows.
#[derive(Debug, Subcommand)]
pub enum Model {
    /// T(n) = T0 + n/B: time, effective bandwidth, half-peak size (§2.2, §4.1).
    AlphaBeta(communication::AlphaBetaArgs),
    /// Compute and communication of 1D blocked, 1D interleaved and 2D blocked grids (§2.5).
    Assignment(locality::AssignmentArgs),
    /// Little's law: outstanding lines for a bandwidth, or bandwidth from concurrency (§4.3).
    Little(communication::LittleArgs),
    /// Attainable FLOP/s, ridge point and the binding roof (§4.4).
    Roofline(laws::RooflineArgs),
    /// Amdahl's speed-up and limit, with Gustafson's for comparison (§4.6).
    Amdahl(laws::AmdahlArgs),
    /// Serial fraction from a measured speed-up (§4.6).
    KarpFlatt(laws::KarpFlattArgs),
    /// Greedy-scheduling bounds from work and span (§4.2).
    WorkSpan(laws::WorkSpanArgs),
    /// Ghost-row stencil: compute, communication, speed-up and crossover P (§4.1, §4.2).
    StencilScaling(communication::StencilArgs),
    /// Loop fusion traffic and intensity (§2.7.2).
    Fusion(locality::FusionArgs),
    /// Row-major against tiled stencil traffic (§2.7.1, §3.3).
    Tiling(locality::TilingArgs),
    /// Per-thread data on shared cache lines (§2.7.4, §3.4).
    FalseSharing(locality::FalseSharingArgs),
    /// A serialized lock and per-bucket locks (§4.5).
    Lock(contention::LockArgs),
    /// Flat against tree combining (§2.8).
    Combining(contention::CombiningArgs),
    /// M/M/1 and M/D/1 waiting times (§2.8).
    Queue(contention::QueueArgs),
    /// The office-hours example (§2.8).
    OfficeHours(contention::OfficeHoursArgs),
    /// Global lock, bucket locks or data-parallel binning (thought question 3).
    Binning(contention::BinningArgs),
    /// Every worked example of the lecture: its figure beside the computed
    /// one, each slip marked with its reason.
    Lecture,
    /// Pipeline latency and throughput (§2.1).
    Pipeline(more::PipelineArgs),
    /// Overhead + occupancy + network delay − overlap (§2.2).
    Overlap(more::OverlapArgs),
    /// Block side a blocked matrix multiply needs to reach the ridge point (§4.4).
    RidgeBlock(more::RidgeBlockArgs),
    /// Line transfers per second and misses in flight per core (§4.3).
    Mlp(more::MlpArgs),
    /// Message size that reaches a fraction of the link bandwidth (§2.2, §4.1).
    MessageSize(more::MessageSizeArgs),
}

/// Evaluates one model; machine figures left out come from `figures`.
///
/// # Errors
/// Bad input, and any result that is not a finite number.
pub fn evaluate(model: &Model, figures: &Figures) -> anyhow::Result<Derivation> {
    let d = dispatch(model, figures)?;
    d.check_finite()?;
    Ok(d)
}

fn dispatch(model: &Model, figures: &Figures) -> anyhow::Result<Derivation> {
    match model {
        Model::AlphaBeta(a) => communication::alpha_beta(a, figures),
        Model::Assignment(a) => locality::assignment(a),
        Model::Little(a) => communication::little(a, figures),
        Model::Roofline(a) => laws::roofline(a, figures),
        Model::Amdahl(a) => laws::amdahl(a),
        Model::KarpFlatt(a) => laws::karp_flatt(a),
        Model::WorkSpan(a) => laws::work_span(a),
        Model::StencilScaling(a) => communication::stencil(a, figures),
        Model::Fusion(a) => locality::fusion(a),
        Model::Tiling(a) => locality::tiling(a),
        Model::FalseSharing(a) => locality::false_sharing(a),
        Model::Lock(a) => contention::lock(a, figures),
        Model::Combining(a) => contention::combining(a),
        Model::Queue(a) => contention::queue(a),
        Model::OfficeHours(a) => contention::office_hours(a),
        Model::Binning(a) => contention::binning(a, figures),
        Model::Lecture => Err(crate::error::BadInput(
            "the lecture table is not one derivation: use `predict eval lecture`".into(),
        )
        .into()),
        Model::Pipeline(a) => more::pipeline(a),
        Model::Overlap(a) => more::overlap(a),
        Model::RidgeBlock(a) => more::ridge_block(a, figures),
        Model::Mlp(a) => more::mlp(a, figures),
        Model::MessageSize(a) => more::message_size(a, figures),
    }
}
