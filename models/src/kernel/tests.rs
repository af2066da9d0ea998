use super::*;

const LINE: Lines = Lines { line_bytes: 64.0 };

fn array(name: &str, mode: Mode, bytes: f64, access: Access) -> ArrayUse {
    ArrayUse {
        name: name.into(),
        mode,
        bytes,
        access,
    }
}

fn contiguous(name: &str, mode: Mode) -> ArrayUse {
    array(name, mode, 8.0, Access::Strided { stride_bytes: 8.0 })
}

fn kernel(arrays: Vec<ArrayUse>) -> LoopKernel {
    LoopKernel {
        flops: 2.0,
        ..LoopKernel::streaming(1000.0, 2, arrays)
    }
}

#[test]
fn triad_traffic_counts_the_allocate_read() {
    let k = kernel(vec![
        contiguous("a", Mode::Store),
        contiguous("b", Mode::Load),
        contiguous("c", Mode::Load),
    ]);
    let t = k.traffic(LINE);
    assert_eq!(t.load_bytes, 16_000.0);
    assert_eq!(t.store_bytes, 8_000.0);
    assert_eq!(t.allocate_bytes, 8_000.0);
    assert_eq!(t.bus_bytes(), 32_000.0);
    assert_eq!(k.per_thread_bytes(LINE), 12_000.0);
}

#[test]
fn an_update_reads_and_writes_without_allocate() {
    let t = kernel(vec![contiguous("a", Mode::Update)]).traffic(LINE);
    assert_eq!(
        (t.load_bytes, t.store_bytes, t.allocate_bytes),
        (8e3, 8e3, 0.0)
    );
}

#[test]
fn strides_move_whole_lines() {
    let strided = |stride| {
        kernel(vec![array(
            "x",
            Mode::Load,
            8.0,
            Access::Strided {
                stride_bytes: stride,
            },
        )])
        .traffic(LINE)
        .load_bytes
    };
    assert_eq!(strided(8.0), 8e3);
    assert_eq!(strided(32.0), 32e3);
    assert_eq!(strided(64.0), 64e3);
    assert_eq!(strided(96.0), 64e3);
}

/// A stride that skips as many lines as each element uses is no stream:
/// its lines are separate misses, taking a cache as the sets allow.
#[test]
fn a_scattered_stride_is_separate_misses_over_its_span() {
    let k = |bytes, stride| {
        kernel(vec![array(
            "x",
            Mode::Update,
            bytes,
            Access::Strided {
                stride_bytes: stride,
            },
        )])
    };
    // (bytes, stride, lines per use, cache taken per use): a power-of-two
    // stride of lines takes its span, an odd one its lines.
    for (bytes, stride, lines, cached) in [
        (8.0, 128.0, 1.0, 128.0),
        (8.0, 4096.0, 1.0, 4096.0),
        (72.0, 256.0, 2.0, 256.0),
        (8.0, 576.0, 1.0, 64.0),
        (8.0, 768.0, 1.0, 256.0),
    ] {
        let k = k(bytes, stride);
        assert!(k.arrays[0].scattered(LINE), "{bytes} B every {stride} B");
        assert_eq!(k.traffic(LINE), Traffic::default());
        assert_eq!(
            k.random_accesses(LINE),
            vec![RandomAccesses {
                lines: 1000.0 * lines,
                region_bytes: 1000.0 * cached,
                written: true,
                stride_bytes: Some(stride),
            }]
        );
        // Each thread's share.
        assert_eq!(k.per_thread_bytes(LINE), 500.0 * cached);
        assert_eq!(k.moved_bytes(LINE), 2.0 * 1000.0 * lines * 64.0);
    }
    // Two lines of every three, or a 72-byte element's two lines every
    // 192 bytes, still stream.
    assert!(!k(8.0, 96.0).arrays[0].scattered(LINE));
    assert!(!k(72.0, 192.0).arrays[0].scattered(LINE));
}

/// Elements wider than a line share lines with their neighbours: a
/// contiguous array of 72-byte elements moves 72 bytes per iteration,
/// and a stride of 80 bytes moves 80, not the two lines each element
/// touches.
#[test]
fn wide_elements_move_their_bytes_not_their_lines_twice() {
    let moved = |bytes, stride| {
        kernel(vec![array(
            "x",
            Mode::Load,
            bytes,
            Access::Strided {
                stride_bytes: stride,
            },
        )])
        .traffic(LINE)
        .load_bytes
    };
    assert_eq!(moved(72.0, 72.0), 72e3);
    assert_eq!(moved(96.0, 96.0), 96e3);
    assert_eq!(moved(72.0, 80.0), 80e3);
    assert_eq!(moved(72.0, 192.0), 128e3);
}

#[test]
fn random_accesses_are_separate_lines() {
    let k = kernel(vec![
        contiguous("idx", Mode::Load),
        array("x", Mode::Load, 8.0, Access::Random { region_bytes: 1e6 }),
    ]);
    let r = k.random_accesses(LINE);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].lines, 1000.0);
    assert!(!r[0].written);
    assert_eq!(k.traffic(LINE).load_bytes, 8e3);
    assert_eq!(k.per_thread_bytes(LINE), 4e3 + 1e6);
}

#[test]
fn bad_descriptions_are_named() {
    let mut k = kernel(vec![array(
        "x",
        Mode::Load,
        8.0,
        Access::Strided { stride_bytes: 4.0 },
    )]);
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::StrideTooSmall { .. })
    ));
    k.arrays = vec![array(
        "x",
        Mode::Load,
        8.0,
        Access::Random { region_bytes: 4.0 },
    )];
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::RegionTooSmall { .. })
    ));
    k.arrays = vec![contiguous("x", Mode::Load)];
    k.chain = 3.0;
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::ChainAboveFlops { .. })
    ));
    k.chain = 0.0;
    k.span = 3.0;
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::SpanAboveFlops { .. })
    ));
    k.span = -1.0;
    assert_eq!(k.validate(), Err(DescriptionError::NegativeFlops));
    k.span = 0.0;
    k.reused_bytes = -8.0;
    assert_eq!(k.validate(), Err(DescriptionError::NegativeReuse(-8.0)));
    k.reused_bytes = 32.0;
    assert_eq!(k.validate(), Ok(()));
    assert_eq!(k.reused_bytes_per_thread(), 1000.0 / 2.0 * 32.0);
    let n = k.n;
    k.n = 1.0;
    assert_eq!(
        k.validate(),
        Err(DescriptionError::FewerIterationsThanThreads { n: 1.0, threads: 2 })
    );
    k.n = n;
    k.windowed_reuse = vec![Reuse {
        bytes: 16.0,
        window_bytes: f64::NAN,
    }];
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::BadWindow { .. })
    ));
    // A thread's 500 iterations touch 4000 B: no window can be longer.
    k.windowed_reuse[0].window_bytes = 32816.0;
    assert_eq!(
        k.validate(),
        Err(DescriptionError::WindowBeyondLoop {
            window: 32816.0,
            touched: 4000.0
        })
    );
    k.windowed_reuse[0].window_bytes = 2048.0;
    assert_eq!(k.validate(), Ok(()));
    k.span = 0.5;
    assert_eq!(k.validate(), Err(DescriptionError::SpanBelowOne(0.5)));
    k.span = 0.0;
    assert_eq!(k.segments_per_thread(), None);
    k.segment_iterations = Some(0.0);
    assert!(k.validate().unwrap_err().to_string().contains("--segment"));
    k.segment_iterations = Some(0.5);
    assert_eq!(k.validate(), Err(DescriptionError::SegmentBelowOne(0.5)));
    // 500 iterations per thread in runs of 128: 4 runs of 128 × 8 B.
    k.segment_iterations = Some(128.0);
    assert_eq!(k.validate(), Ok(()));
    assert_eq!(k.segments_per_thread(), Some((4.0, 1024.0)));
    // Runs that start 64 runs apart; a stride needs its run, and one
    // shorter than the run would overlap it.
    k.segment_stride_iterations = Some(8192.0);
    assert_eq!(k.validate(), Ok(()));
    assert_eq!(k.runs_per_row(), Some(64.0));
    // 500 iterations of 8 B per thread: columns of 4000 / 64 B.
    assert_eq!(k.column_bytes(), Some(62.5));
    k.segment_stride_iterations = Some(64.0);
    assert!(k
        .validate()
        .unwrap_err()
        .to_string()
        .contains("at least the run's"));
    k.segment_iterations = None;
    assert_eq!(
        k.validate(),
        Err(DescriptionError::SegmentStrideWithoutSegment)
    );
    k.segment_stride_iterations = None;
    assert_eq!(k.runs_per_row(), None);
    k.segment_iterations = Some(128.0);
    // Runs restart streams; a loop of random accesses alone has none.
    let streams = std::mem::replace(
        &mut k.arrays,
        vec![array(
            "x",
            Mode::Load,
            8.0,
            Access::Random { region_bytes: 1e6 },
        )],
    );
    assert_eq!(k.validate(), Err(DescriptionError::SegmentWithoutStream));
    k.arrays = streams;
    k.n = 0.0;
    assert!(k.validate().unwrap_err().to_string().contains("--n"));
    k.n = 10.5;
    assert!(matches!(
        k.validate(),
        Err(DescriptionError::NotWhole { .. })
    ));
    k.n = 1e30;
    assert_eq!(
        k.validate().unwrap_err().to_string(),
        "--n = 1e30 is beyond 2^53, where whole numbers are no longer exact"
    );
    k.n = 10.0;
    k.arrays.push(contiguous("x", Mode::Store));
    assert_eq!(
        k.validate(),
        Err(DescriptionError::DuplicateName("x".into()))
    );
    k.arrays.clear();
    k.flops = 0.0;
    assert_eq!(k.validate(), Err(DescriptionError::Empty));
}
