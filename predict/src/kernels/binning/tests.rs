//! The binning variants against the serial reference, the sort's bounds
//! and its description.

use super::*;
use models::kernel::Traffic;

#[test]
fn sort_matches_reference() {
    let p = Particles::new(5000, 16);
    // Three threads on one CPU: more workers than this test can count on.
    let cpu = calibrate::harness::pin::allowed_cpus()[0];
    let team = Team::new(&[cpu; 3]).unwrap();
    let mut sort = CountingSort::new(&p, &team);
    for _ in 0..2 {
        sort.run(&p, &team);
        assert_eq!(sort.cells(), reference(&p));
    }
    assert_eq!((sort.starts[0], sort.ends[p.cells() - 1]), (0, 5000));
    assert!(sort.starts[1..].iter().zip(&sort.ends).all(|(a, b)| a == b));
}

#[test]
fn the_sort_is_predicted_from_its_passes_descriptions() {
    let (n, threads) = (1 << 20, 2);
    let w = Variant::DataParallel.declared(n, 256, threads).unwrap();
    let n_f = n as f64;
    let per_thread = 20.0 * n_f / 2.0;
    // Each loop reads the level of its own pass's arrays: x, y and the
    // cells (12 B per particle), then the cells and the output (8 B).
    let sort_loop = |kind, bytes: f64| Demand::BinLoop {
        kind,
        items_per_thread: n_f / 2.0,
        working_set_per_thread: bytes * n_f / 2.0,
    };
    assert_eq!(
        w.demands,
        vec![
            Demand::Memory {
                traffic: Traffic::streaming(12.0 * n_f, 8.0 * n_f),
                per_thread_bytes: per_thread,
                huge_pages: true,
                isa: Build::builtin().isa,
            },
            sort_loop(SortLoop::Histogram, 12.0),
            sort_loop(SortLoop::Scatter, 8.0),
        ]
    );
}

#[test]
fn bounds_order_cells_then_threads() {
    let b = bounds(&[vec![2, 0, 1], vec![1, 3, 0]]);
    assert_eq!((b.starts, b.ends), (vec![0, 3, 6], vec![3, 6, 7]));
    assert_eq!(b.cursors, [vec![0, 3, 6], vec![2, 3, 7]]);
}

#[test]
fn cells_clamp_to_the_grid() {
    assert_eq!(cell_of(0.0, 0.0, 4), 0);
    assert_eq!(cell_of(0.26, 0.5, 4), 2 * 4 + 1);
    assert_eq!(cell_of(1.0, 1.0, 4), 15);
    assert_eq!(cell_of(-3.0, f32::NAN, 4), 0);
    assert_eq!(cell_of(0.99, 7.0, 1), 0);
}

#[test]
fn locks_match_reference() {
    let p = Particles::new(3000, 4);
    let lists = Lists::new(p.len());
    let heads = Mutex::new(vec![NIL; p.cells()]);
    std::thread::scope(|s| {
        for r in super::super::team::split(p.len(), 3) {
            let (p, heads, lists) = (&p, &heads, &lists);
            s.spawn(move || insert_global(p, r, heads, lists));
        }
    });
    assert_eq!(
        from_lists(&heads.into_inner().unwrap(), &lists),
        reference(&p)
    );
    let lists = Lists::new(p.len());
    let heads: Vec<CellLock> = (0..p.cells()).map(|_| CellLock::default()).collect();
    std::thread::scope(|s| {
        for r in super::super::team::split(p.len(), 3) {
            let (p, heads, lists) = (&p, &heads, &lists);
            s.spawn(move || insert_per_cell(p, r, heads, lists));
        }
    });
    let h: Vec<u32> = heads
        .into_iter()
        .map(|m| m.0.into_inner().unwrap())
        .collect();
    assert_eq!(from_lists(&h, &lists), reference(&p));
}

#[test]
fn the_lock_free_insertion_is_not_predicted_on_any_thread_count() {
    for threads in [1, 2] {
        let why = Variant::NoSync.declared(1 << 20, 256, threads).unwrap_err();
        assert!(matches!(why, NoWork::Unmodelled(s) if s.contains("no profile figure")));
    }
    assert!(Variant::GlobalLock.declared(1 << 20, 256, 1).is_ok());
}
