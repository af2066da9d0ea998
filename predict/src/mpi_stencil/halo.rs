//! One iteration of each variant: the ghost exchange and the sweep
//! (lecture §2.3, §3.1).
//!
//! Tags name the direction a message travels, so a rank's two messages to
//! the same neighbour can never be confused: a row travelling down (to the
//! next process row) arrives in the receiver's top ghost row.
//!
//! * (a) [`step_blocking`]: `MPI_Send`/`MPI_Recv` in two phases (rows
//!   travel down, then up). In each phase even process rows send first and
//!   odd ones receive first, so every send meets a posted receive and the
//!   chain cannot deadlock even when the library sends by rendezvous (a
//!   blocking send then waits for its receive). Then the whole block is
//!   swept.
//! * (b) and (c) [`step_nonblocking`]: all receives and sends are posted at
//!   once (`MPI_Irecv`/`MPI_Isend`), the points that need no ghost value are
//!   swept while the messages fly, `MPI_Waitall`, then the ring of border
//!   points. In 2D the edge columns are packed into contiguous buffers
//!   before posting and the received ones unpacked after the wait (a column
//!   of a row-major block is strided).

use std::ops::Range;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::grid::{sweep, Block};
use super::layout::Layout;

/// A row travelling to the next process row (arrives in the top ghost row).
const TAG_DOWN: mpi::Tag = 10;
/// A row travelling to the previous process row (bottom ghost row).
const TAG_UP: mpi::Tag = 11;
/// A column travelling to the next process column (left ghost column).
const TAG_RIGHT: mpi::Tag = 12;
/// A column travelling to the previous process column (right ghost column).
const TAG_LEFT: mpi::Tag = 13;

/// The packed edge columns of the 2D variant.
#[derive(Debug, Clone)]
pub struct Columns {
    send_left: Vec<f64>,
    send_right: Vec<f64>,
    recv_left: Vec<f64>,
    recv_right: Vec<f64>,
}

impl Columns {
    /// Buffers for columns of `ry` values.
    pub fn new(ry: usize) -> Self {
        Self {
            send_left: vec![0.0; ry],
            send_right: vec![0.0; ry],
            recv_left: vec![0.0; ry],
            recv_right: vec![0.0; ry],
        }
    }
}

/// Range of local row `i`'s inner columns.
fn row(lay: &Layout, i: usize) -> std::ops::Range<usize> {
    let start = i * lay.ld() + 1;
    start..start + lay.rx
}

/// (a) Blocking exchange with odd/even ordering, then the whole sweep.
/// Returns the block's max |u' − u| when `residual` is set.
pub fn step_blocking(
    world: &SimpleCommunicator,
    lay: &Layout,
    b: &mut Block,
    residual: bool,
) -> f64 {
    exchange_blocking(world, lay, &mut b.cur);
    let ld = b.ld();
    sweep(
        &b.cur,
        0,
        &mut b.next,
        ld,
        1..lay.ry + 1,
        1..lay.rx + 1,
        residual,
    )
}

fn exchange_blocking(world: &SimpleCommunicator, lay: &Layout, cur: &mut [f64]) {
    let even = lay.cy % 2 == 0;
    let ry = lay.ry;
    let send = |cur: &[f64], to: Option<usize>, i: usize, tag| {
        if let Some(r) = to {
            world
                .process_at_rank(r as i32)
                .send_with_tag(&cur[row(lay, i)], tag);
        }
    };
    let recv = |cur: &mut [f64], from: Option<usize>, i: usize, tag| {
        if let Some(r) = from {
            world
                .process_at_rank(r as i32)
                .receive_into_with_tag(&mut cur[row(lay, i)], tag);
        }
    };
    // Phase 1: last rows travel down into the top ghost rows.
    if even {
        send(cur, lay.down, ry, TAG_DOWN);
        recv(cur, lay.up, 0, TAG_DOWN);
    } else {
        recv(cur, lay.up, 0, TAG_DOWN);
        send(cur, lay.down, ry, TAG_DOWN);
    }
    // Phase 2: first rows travel up into the bottom ghost rows.
    if even {
        send(cur, lay.up, 1, TAG_UP);
        recv(cur, lay.down, ry + 1, TAG_UP);
    } else {
        recv(cur, lay.down, ry + 1, TAG_UP);
        send(cur, lay.up, 1, TAG_UP);
    }
}

/// (b)/(c) Non-blocking exchange overlapped with the sweep of the points
/// that need no ghost value, then the border. Returns the block's
/// max |u' − u| when `residual` is set.
pub fn step_nonblocking(
    world: &SimpleCommunicator,
    lay: &Layout,
    b: &mut Block,
    cols: &mut Columns,
    residual: bool,
) -> f64 {
    let (ld, ry, rx) = (lay.ld(), lay.ry, lay.rx);
    let Columns {
        send_left,
        send_right,
        recv_left,
        recv_right,
    } = cols;
    pack_columns(lay, &b.cur, send_left, send_right);
    // Inner points that read no ghost cell: rows 2..ry-1, and the columns
    // away from a neighbour's ghost column.
    let c0 = 1 + usize::from(lay.left.is_some());
    let c1 = rx + 1 - usize::from(lay.right.is_some());
    let mid_rows = 2..ry.max(2);
    let mut diff = 0.0f64;
    {
        let Block { cur, next, .. } = &mut *b;
        let (top, rest) = cur.split_at_mut(ld);
        let (inner, bottom) = rest.split_at_mut(ry * ld);
        let inner: &[f64] = inner;
        // `inner` holds local rows 1..=ry.
        let inner_row = |i: usize| {
            let s = (i - 1) * ld + 1;
            s..s + rx
        };
        mpi::request::multiple_scope(8, |scope, coll| {
            if let Some(u) = lay.up {
                let p = world.process_at_rank(u as i32);
                coll.add(p.immediate_receive_into_with_tag(scope, &mut top[1..1 + rx], TAG_DOWN));
                coll.add(p.immediate_send_with_tag(scope, &inner[inner_row(1)], TAG_UP));
            }
            if let Some(d) = lay.down {
                let p = world.process_at_rank(d as i32);
                coll.add(p.immediate_receive_into_with_tag(scope, &mut bottom[1..1 + rx], TAG_UP));
                coll.add(p.immediate_send_with_tag(scope, &inner[inner_row(ry)], TAG_DOWN));
            }
            if let Some(l) = lay.left {
                let p = world.process_at_rank(l as i32);
                coll.add(p.immediate_receive_into_with_tag(scope, &mut recv_left[..], TAG_RIGHT));
                coll.add(p.immediate_send_with_tag(scope, &send_left[..], TAG_LEFT));
            }
            if let Some(r) = lay.right {
                let p = world.process_at_rank(r as i32);
                coll.add(p.immediate_receive_into_with_tag(scope, &mut recv_right[..], TAG_LEFT));
                coll.add(p.immediate_send_with_tag(scope, &send_right[..], TAG_RIGHT));
            }
            if c0 < c1 {
                diff = sweep(inner, 1, next, ld, mid_rows, c0..c1, residual);
            }
            let mut done = Vec::with_capacity(8);
            coll.wait_all(&mut done);
        });
    }
    unpack_columns(lay, &mut b.cur, recv_left, recv_right);
    diff.max(sweep_border(lay, b, c0..c1, residual))
}

/// Copies the block's edge columns into the send buffers of the
/// neighbours there are.
fn pack_columns(lay: &Layout, cur: &[f64], left: &mut [f64], right: &mut [f64]) {
    let (ld, rx) = (lay.ld(), lay.rx);
    if lay.left.is_some() {
        for (k, v) in left.iter_mut().enumerate() {
            *v = cur[(k + 1) * ld + 1];
        }
    }
    if lay.right.is_some() {
        for (k, v) in right.iter_mut().enumerate() {
            *v = cur[(k + 1) * ld + rx];
        }
    }
}

/// Copies the received columns into the block's ghost columns.
fn unpack_columns(lay: &Layout, cur: &mut [f64], left: &[f64], right: &[f64]) {
    let (ld, rx) = (lay.ld(), lay.rx);
    if lay.left.is_some() {
        for (k, v) in left.iter().enumerate() {
            cur[(k + 1) * ld] = *v;
        }
    }
    if lay.right.is_some() {
        for (k, v) in right.iter().enumerate() {
            cur[(k + 1) * ld + rx + 1] = *v;
        }
    }
}

/// Sweeps the border once the ghosts are in: the first and last rows
/// whole, and between them the edge columns outside `inner_cols`.
fn sweep_border(lay: &Layout, b: &mut Block, inner_cols: Range<usize>, residual: bool) -> f64 {
    let (ld, ry, rx) = (lay.ld(), lay.ry, lay.rx);
    let (c0, c1) = (inner_cols.start, inner_cols.end);
    let mid_rows = 2..ry.max(2);
    let (cur, next) = (&b.cur, &mut b.next);
    let mut diff = sweep(cur, 0, next, ld, 1..2, 1..rx + 1, residual);
    if ry >= 2 {
        diff = diff.max(sweep(cur, 0, next, ld, ry..ry + 1, 1..rx + 1, residual));
    }
    if c0 < c1 {
        diff = diff.max(sweep(cur, 0, next, ld, mid_rows.clone(), 1..c0, residual));
        diff = diff.max(sweep(cur, 0, next, ld, mid_rows, c1..rx + 1, residual));
    } else {
        diff = diff.max(sweep(cur, 0, next, ld, mid_rows, 1..rx + 1, residual));
    }
    diff
}
