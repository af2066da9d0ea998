//! The ghost-row Jacobi stencil across MPI ranks (lecture §2.3, §3.1, §4.1),
//! its serial reference and its prediction.
//!
//! An N×N grid of `f64` with a fixed boundary is swept by 5-point Jacobi
//! ([`grid`]). The ranks own blocks of it ([`layout`]) and exchange ghost
//! cells every sweep ([`halo`]) in three variants:
//!
//! | variant | assignment | exchange |
//! |---|---|---|
//! | `blocking` (a) | 1D rows, 1 × P | `MPI_Send`/`MPI_Recv`, odd/even ordering, then the sweep |
//! | `nonblocking` (b) | 1D rows, 1 × P | `MPI_Isend`/`MPI_Irecv`, inner rows swept while the rows fly, border rows after `MPI_Waitall` |
//! | `2d` (c) | px × py blocks | as (b) with ghost rows and packed ghost columns |
//!
//! The 2D variant takes the most square px × py = P (a √P × √P grid when P
//! is a square; 1 × P, which is the 1D layout, when P is prime).
//!
//! Every variant gives the serial reference's grid ([`serial`]) bit for
//! bit: Jacobi reads only the previous sweep, and every point's update adds
//! the same five values in the same order. The residual max |u' − u| is
//! reduced with `MPI_MAX` every k sweeps; a maximum does not depend on the
//! order of reduction, so it is exact too, and a tolerance stops every
//! variant at the same sweep. The grid checksum ([`grid::checksum_term`])
//! is bit-exact and order-independent.
//!
//! [`model`] predicts a sweep from the machine profile; [`warm_up`] brings
//! the machine to the sweeps' pace before the first variant, [`driver`]
//! runs a variant and times it, and [`probe`] re-measures the profile figures the
//! prediction leans on right after it. The MPI parts need the `mpi` feature; the grid,
//! the layouts, the serial reference and the model do not.

pub mod grid;
pub mod layout;
pub mod model;
pub mod serial;

#[cfg(feature = "mpi")]
pub mod driver;
#[cfg(feature = "mpi")]
pub mod halo;
#[cfg(feature = "mpi")]
pub mod probe;
#[cfg(feature = "mpi")]
pub mod warm_up;

use layout::ProcessGrid;

/// The three variants of the exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Variant {
    /// (a) Blocking send/recv with odd/even ordering, 1D rows.
    Blocking,
    /// (b) Isend/Irecv overlapped with the inner rows, 1D rows.
    Nonblocking,
    /// (c) Non-blocking on a px × py process grid.
    #[value(name = "2d")]
    TwoD,
}

impl Variant {
    /// All variants, in the order they run.
    pub const ALL: [Variant; 3] = [Variant::Blocking, Variant::Nonblocking, Variant::TwoD];

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Blocking => "blocking",
            Variant::Nonblocking => "nonblocking",
            Variant::TwoD => "2d",
        }
    }

    /// The process grid of this variant on `p` ranks.
    pub fn grid(self, p: usize) -> ProcessGrid {
        match self {
            Variant::Blocking | Variant::Nonblocking => ProcessGrid::rows(p),
            Variant::TwoD => ProcessGrid::square(p),
        }
    }
}
