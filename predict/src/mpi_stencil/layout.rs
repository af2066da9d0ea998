//! Which part of the N×N grid a rank owns, and who its neighbours are
//! (lecture §2.3, §2.5).
//!
//! Ranks form a px × py process grid (px columns, py rows), rank =
//! cy·px + cx. The 1D variants use 1 × P: rank r owns a band of whole
//! rows. The 2D variant uses the most square factorisation px × py = P
//! with px ≤ py (`models::decomposition::process_grid`): 2 × 2 for P = 4,
//! 2 × 3 for P = 6, and 1 × P, the 1D layout, for a prime P. N rows (and
//! columns) are dealt in contiguous blocks; when they do not divide evenly
//! the first N mod parts blocks get one more.
//!
//! Coordinates: the grid with its fixed boundary frame is (N+2) × (N+2),
//! framed row 0 and N+1 and framed column 0 and N+1 being the boundary. A
//! rank's local array is (ry+2) × (rx+2): its ry × rx block plus a frame
//! that holds either ghost cells (copies of a neighbour's edge) or the
//! fixed boundary. Local framed (li, lj) is global framed (y0 + li, x0 + lj).

use std::fmt;

use models::decomposition::process_grid;

/// `n` items in `parts` contiguous blocks: (start, length) of block `k`;
/// the first `n % parts` blocks are one longer.
pub fn split(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let base = n / parts;
    let rem = n % parts;
    let len = base + usize::from(k < rem);
    let start = k * base + k.min(rem);
    (start, len)
}

/// A px × py process grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessGrid {
    /// Columns of ranks.
    pub px: usize,
    /// Rows of ranks.
    pub py: usize,
}

impl ProcessGrid {
    /// 1 × P: whole rows per rank.
    pub fn rows(p: usize) -> Self {
        Self { px: 1, py: p }
    }

    /// The most square px × py = P, px ≤ py.
    pub fn square(p: usize) -> Self {
        let (px, py) = process_grid(p as u64);
        Self {
            px: px as usize,
            py: py as usize,
        }
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.px * self.py
    }

    /// (cx, cy) of `rank`.
    pub fn coords(&self, rank: usize) -> (usize, usize) {
        (rank % self.px, rank / self.px)
    }

    /// The rank at (cx, cy).
    pub fn rank(&self, cx: usize, cy: usize) -> usize {
        cy * self.px + cx
    }
}

impl fmt::Display for ProcessGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.px, self.py)
    }
}

/// One rank's block and neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Grid side.
    pub n: usize,
    pub grid: ProcessGrid,
    pub rank: usize,
    pub cx: usize,
    pub cy: usize,
    /// Rows and columns of the block.
    pub ry: usize,
    pub rx: usize,
    /// Global framed coordinates of local framed (0, 0).
    pub y0: usize,
    pub x0: usize,
    /// Neighbouring ranks, where there are any.
    pub up: Option<usize>,
    pub down: Option<usize>,
    pub left: Option<usize>,
    pub right: Option<usize>,
}

impl Layout {
    /// The block of `rank` in an N×N grid on `grid`.
    ///
    /// # Panics
    /// If `rank` is not in the grid (a programming error; sizes are
    /// checked by [`check_size`] first).
    pub fn new(n: usize, grid: ProcessGrid, rank: usize) -> Self {
        assert!(rank < grid.size(), "rank {rank} outside the {grid} grid");
        let (cx, cy) = grid.coords(rank);
        let (y0, ry) = split(n, grid.py, cy);
        let (x0, rx) = split(n, grid.px, cx);
        Self {
            n,
            grid,
            rank,
            cx,
            cy,
            ry,
            rx,
            y0,
            x0,
            up: (cy > 0).then(|| grid.rank(cx, cy - 1)),
            down: (cy + 1 < grid.py).then(|| grid.rank(cx, cy + 1)),
            left: (cx > 0).then(|| grid.rank(cx - 1, cy)),
            right: (cx + 1 < grid.px).then(|| grid.rank(cx + 1, cy)),
        }
    }

    /// Row length of the local array (rx + 2).
    pub fn ld(&self) -> usize {
        self.rx + 2
    }

    /// Number of neighbours.
    pub fn neighbours(&self) -> usize {
        [self.up, self.down, self.left, self.right]
            .iter()
            .filter(|n| n.is_some())
            .count()
    }
}

/// Why a grid cannot be dealt to the ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooSmall {
    pub n: usize,
    pub grid: ProcessGrid,
}

impl fmt::Display for TooSmall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let need = self.grid.px.max(self.grid.py);
        write!(
            f,
            "--n {} is too small for {} ranks on a {} process grid: every rank needs at least one row and one column, so give --n >= {need} or use fewer ranks",
            self.n,
            self.grid.size(),
            self.grid
        )
    }
}

/// Checks that every rank of `grid` gets at least one row and one column.
pub fn check_size(n: usize, grid: ProcessGrid) -> Result<(), TooSmall> {
    if n >= grid.px && n >= grid.py && n > 0 {
        Ok(())
    } else {
        Err(TooSmall { n, grid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_deals_the_remainder_first() {
        // 10 rows on 4 ranks: 3, 3, 2, 2.
        let blocks: Vec<_> = (0..4).map(|k| split(10, 4, k)).collect();
        assert_eq!(blocks, vec![(0, 3), (3, 3), (6, 2), (8, 2)]);
        // Contiguous and complete for many shapes.
        for n in 1..40 {
            for parts in 1..=n {
                let mut next = 0;
                for k in 0..parts {
                    let (s, l) = split(n, parts, k);
                    assert_eq!(s, next);
                    assert!(l >= 1);
                    next = s + l;
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn square_grids() {
        assert_eq!(ProcessGrid::square(4), ProcessGrid { px: 2, py: 2 });
        assert_eq!(ProcessGrid::square(6), ProcessGrid { px: 2, py: 3 });
        assert_eq!(ProcessGrid::square(9), ProcessGrid { px: 3, py: 3 });
        assert_eq!(ProcessGrid::square(7), ProcessGrid { px: 1, py: 7 });
        assert_eq!(ProcessGrid::square(1), ProcessGrid { px: 1, py: 1 });
        assert_eq!(ProcessGrid::square(2).to_string(), "1x2");
    }

    #[test]
    fn coordinates_and_neighbours_on_2x2() {
        let g = ProcessGrid::square(4);
        for r in 0..4 {
            let (cx, cy) = g.coords(r);
            assert_eq!(g.rank(cx, cy), r);
        }
        // Rank 0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right.
        let l0 = Layout::new(10, g, 0);
        assert_eq!(
            (l0.up, l0.down, l0.left, l0.right),
            (None, Some(2), None, Some(1))
        );
        let l3 = Layout::new(10, g, 3);
        assert_eq!(
            (l3.up, l3.down, l3.left, l3.right),
            (Some(1), None, Some(2), None)
        );
        assert_eq!((l3.y0, l3.x0, l3.ry, l3.rx), (5, 5, 5, 5));
        assert_eq!(l3.neighbours(), 2);
        // An odd N: the first row and column of blocks get the extra one.
        let l = Layout::new(7, g, 1);
        assert_eq!((l.ry, l.rx, l.y0, l.x0), (4, 3, 0, 4));
    }

    #[test]
    fn rows_layout_has_vertical_neighbours_only() {
        let g = ProcessGrid::rows(3);
        let mid = Layout::new(9, g, 1);
        assert_eq!(
            (mid.up, mid.down, mid.left, mid.right),
            (Some(0), Some(2), None, None)
        );
        assert_eq!((mid.ry, mid.rx, mid.y0, mid.x0), (3, 9, 3, 0));
        assert_eq!(mid.ld(), 11);
    }

    #[test]
    fn too_small_grids_are_refused() {
        assert!(check_size(2, ProcessGrid::rows(2)).is_ok());
        let e = check_size(1, ProcessGrid::rows(2)).unwrap_err();
        assert!(e.to_string().contains("--n >= 2"), "{e}");
        assert!(check_size(2, ProcessGrid::square(6)).is_err());
        assert!(check_size(3, ProcessGrid::square(6)).is_ok());
    }
}
