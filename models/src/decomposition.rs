//! Work assignment of an N×N grid to P processors and the communication it
//! implies (lecture §2.5, §2.7.4, §4.6, thought question 1).
//!
//! All counts are in grid elements per processor per sweep of a 5-point
//! stencil. Following the lecture, "arithmetic intensity" here is computed
//! elements per communicated element (higher is better); its reciprocal is the
//! communication-to-computation ratio.

use serde::Serialize;

use crate::error::{count, positive, ModelError, Result};

/// How rows or blocks of the grid are dealt to processors (§2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Assignment {
    /// Contiguous bands of N/P rows.
    Blocked1D,
    /// Row i to processor i mod P.
    Interleaved1D,
    /// A √P×√P grid of square blocks (or the most square px×py grid when P is not a square).
    Blocked2D,
}

/// Computation and inherent communication of one processor for one sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GridCost {
    /// Elements this processor updates: N²/P.
    pub compute_elems: f64,
    /// Elements it must receive from other processors (inherent communication).
    pub comm_elems: f64,
    /// compute_elems / comm_elems.
    pub arithmetic_intensity: f64,
    /// Processor grid (columns, rows) for the 2D assignment; (1, P) otherwise.
    pub grid: (u64, u64),
}

/// The most square factorisation px × py = P with px ≤ py.
pub fn process_grid(p: u64) -> (u64, u64) {
    let mut px = (p as f64).sqrt().floor() as u64;
    while px > 1 && p % px != 0 {
        px -= 1;
    }
    (px.max(1), p / px.max(1))
}

/// Cost of one assignment for an N×N grid on P processors (§2.5, thought question 1):
///
/// - 1D blocked: compute N²/P, communication 2N (the two neighbour rows), intensity N/(2P);
/// - 1D interleaved: compute N²/P, communication 2N·(N/P) (two rows for each of the
///   N/P rows owned), intensity 1/2;
/// - 2D blocked on a grid of px columns by py rows of processors: compute
///   N²/P, communication 2·N/px (the top and bottom edges, when py > 1) +
///   2·N/py (the side edges, when px > 1); 4N/√P when P is a square,
///   intensity N/(4√P). A 1×P grid is the 1D blocked assignment: its blocks
///   have no side neighbours.
///
/// Counts are those of an interior processor, as in the lecture; one
/// processor (P = 1) communicates nothing and its intensity is unbounded.
/// N and P are whole numbers; a 1D assignment needs P ≤ N (a whole row per
/// processor) and the 2D one a grid of at most N×N processors.
pub fn assignment_cost(n: f64, p: f64, assignment: Assignment) -> Result<GridCost> {
    let n = count("n", n)?;
    let p = count("p", p)?;
    let one_d = assignment != Assignment::Blocked2D;
    if one_d && p > n {
        return Err(ModelError::Inconsistent(format!(
            "p = {p} processors exceed the {n} rows of the {n}x{n} grid: a 1D assignment gives each processor at least one whole row (use P <= N)"
        )));
    }
    if p > n * n {
        return Err(ModelError::Inconsistent(format!(
            "p = {p} processors exceed the {} elements of the {n}x{n} grid",
            n * n
        )));
    }
    let compute = n * n / p;
    let (comm, grid) = match assignment {
        _ if p == 1.0 => (0.0, (1, 1)),
        Assignment::Blocked1D => (2.0 * n, (1, p as u64)),
        Assignment::Interleaved1D => (2.0 * n * n / p, (1, p as u64)),
        Assignment::Blocked2D => {
            let (px, py) = process_grid(p as u64);
            let edges = |neighbours: u64, length: f64| {
                if neighbours > 1 {
                    2.0 * length
                } else {
                    0.0
                }
            };
            let comm = edges(py, n / px as f64) + edges(px, n / py as f64);
            (comm, (px, py))
        }
    };
    Ok(GridCost {
        compute_elems: compute,
        comm_elems: comm,
        arithmetic_intensity: compute / comm,
        grid,
    })
}

/// Communication-to-computation ratio of the 1D blocked assignment,
/// 2N / (N²/P) = 2P/N (§4.6, the fixed-problem-size trap).
pub fn blocked_1d_comm_to_compute(n: f64, p: f64) -> Result<f64> {
    Ok(2.0 * count("p", p)? / positive("n", n)?)
}

/// Elements moved across the left and right edges of a 2D block when every
/// transfer is a whole cache line (§2.7.4, artifactual communication).
///
/// A block of N/py rows (on the px×py grid of [`process_grid`]; N/√P when
/// P is a square) needs one element per row from each side neighbour, but
/// each is fetched as a line of `line_bytes / elem_bytes` elements:
/// 2·(N/py)·(line/elem) elements instead of 2·N/py. The top and bottom
/// edges are contiguous and move whole lines usefully, and a grid of one
/// column (px = 1) has no side neighbours. Returns (inherent, moved)
/// element counts for the side edges; moved − inherent is the artifactual
/// communication, which grows with the line size.
pub fn side_edge_traffic(n: f64, p: f64, line_bytes: f64, elem_bytes: f64) -> Result<(f64, f64)> {
    let n = count("n", n)?;
    let p = count("p", p)?;
    let line = positive("line-bytes", line_bytes)?;
    let elem = positive("elem-bytes", elem_bytes)?;
    if p == 1.0 {
        return Ok((0.0, 0.0));
    }
    let (px, py) = process_grid(p as u64);
    if px == 1 {
        return Ok((0.0, 0.0));
    }
    let rows = n / py as f64;
    let elems_per_line = (line / elem).max(1.0);
    Ok((2.0 * rows, 2.0 * rows * elems_per_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_and_non_square_grids() {
        assert_eq!(process_grid(64), (8, 8));
        assert_eq!(process_grid(12), (3, 4));
        assert_eq!(process_grid(7), (1, 7));
        assert_eq!(process_grid(1), (1, 1));
    }

    #[test]
    fn non_square_2d_uses_rectangular_blocks() {
        let c = assignment_cost(1200.0, 12.0, Assignment::Blocked2D).unwrap();
        assert_eq!(c.grid, (3, 4));
        assert_eq!(c.comm_elems, 2.0 * 400.0 + 2.0 * 300.0);
    }

    #[test]
    fn a_grid_of_one_column_is_the_1d_blocked_assignment() {
        for (n, p) in [(10.0, 3.0), (1024.0, 7.0)] {
            let two = assignment_cost(n, p, Assignment::Blocked2D).unwrap();
            let one = assignment_cost(n, p, Assignment::Blocked1D).unwrap();
            assert_eq!(two.grid, (1, p as u64));
            assert_eq!(two.comm_elems, one.comm_elems);
            assert_eq!(side_edge_traffic(n, p, 64.0, 4.0).unwrap(), (0.0, 0.0));
        }
    }

    #[test]
    fn refuses_nonsense() {
        assert!(assignment_cost(0.0, 4.0, Assignment::Blocked1D).is_err());
        assert!(assignment_cost(16.0, 2.5, Assignment::Blocked1D).is_err());
        assert!(assignment_cost(4.0, 17.0, Assignment::Blocked1D).is_err());
        assert!(assignment_cost(16.0, 64.0, Assignment::Blocked1D).is_err());
        assert!(assignment_cost(16.0, 64.0, Assignment::Interleaved1D).is_err());
        assert!(assignment_cost(16.0, 64.0, Assignment::Blocked2D).is_ok());
        assert!(assignment_cost(4096.5, 64.0, Assignment::Blocked1D).is_err());
        assert!(side_edge_traffic(16.0, 4.0, 0.0, 4.0).is_err());
    }

    #[test]
    fn one_processor_communicates_nothing() {
        for a in [
            Assignment::Blocked1D,
            Assignment::Interleaved1D,
            Assignment::Blocked2D,
        ] {
            let c = assignment_cost(4096.0, 1.0, a).unwrap();
            assert_eq!(c.comm_elems, 0.0, "{a:?}");
            assert_eq!(c.compute_elems, 4096.0 * 4096.0);
        }
        assert_eq!(
            side_edge_traffic(4096.0, 1.0, 64.0, 4.0).unwrap(),
            (0.0, 0.0)
        );
    }

    #[test]
    fn artifactual_traffic_grows_with_line_size() {
        let (inh, moved16) = side_edge_traffic(4096.0, 64.0, 16.0, 4.0).unwrap();
        let (_, moved64) = side_edge_traffic(4096.0, 64.0, 64.0, 4.0).unwrap();
        assert_eq!(inh, 1024.0);
        assert_eq!(moved16, 4096.0);
        assert_eq!(moved64, 16384.0);
    }
}
