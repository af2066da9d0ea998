//! The pool of resident memory, in a test process of its own (enabling the
//! pool is process-wide): dropped regions are handed out again, in parts,
//! and a base-page region made from pooled huge pages holds none.

use calibrate::mem::{pool, Pages, Region};

const MIB: usize = 1 << 20;

#[test]
fn dropped_regions_are_handed_out_again() {
    pool::enable();
    let whole = Region::new(64 * MIB, Pages::Huge).unwrap();
    let at = whole.as_ptr() as usize;
    drop(whole);

    let front = Region::new(16 * MIB, Pages::Huge).unwrap();
    let rest = Region::new(48 * MIB, Pages::Huge).unwrap();
    assert_eq!(front.as_ptr() as usize, at, "the front of the pooled range");
    assert_eq!(rest.as_ptr() as usize, at + 16 * MIB, "the rest of it");
    drop((front, rest));

    let mut small = Region::new(32 * MIB, Pages::Small).unwrap();
    assert_eq!(small.as_ptr() as usize, at, "the two parts merged again");
    if let Some(huge) = small.huge_page_bytes() {
        assert_eq!(huge, 0, "base pages, not the pooled huge pages");
    }
    let words = small.words_mut();
    words
        .iter_mut()
        .enumerate()
        .for_each(|(i, w)| *w = i as u64);
    assert!(words.iter().enumerate().all(|(i, &w)| w == i as u64));
}
