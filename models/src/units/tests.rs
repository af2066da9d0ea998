use super::*;

fn v(s: &str, d: Dimension) -> f64 {
    parse(s, d).unwrap().value
}

#[test]
fn conversion_constants() {
    assert_eq!(KILO, 1000.0);
    assert_eq!(KIBI, 1024.0);
    assert_eq!(BITS_PER_BYTE, 8.0);
    assert_eq!(cycles_to_seconds(200.0, 3e9), 200.0 / 3e9);
}

#[test]
fn times() {
    assert_eq!(v("2us", Dimension::Time), 2e-6);
    assert_eq!(v("2µs", Dimension::Time), 2e-6);
    assert_eq!(v("2 μs", Dimension::Time), 2e-6);
    assert_eq!(v("1.5ms", Dimension::Time), 1.5e-3);
    assert!((v("66.7ns", Dimension::Time) - 66.7e-9).abs() < 1e-20);
    assert_eq!(v("250ps", Dimension::Time), 250e-12);
    assert_eq!(v("3s", Dimension::Time), 3.0);
    assert_eq!(v("5min", Dimension::Time), 300.0);
    assert_eq!(v("1h", Dimension::Time), 3600.0);
    assert_eq!(v("1e-6", Dimension::Time), 1e-6);
    let c = parse("200cycles", Dimension::Time).unwrap();
    assert!(c.cycles);
    assert_eq!(c.value, 200.0);
}

#[test]
fn sizes_decimal_and_binary() {
    assert_eq!(v("32KiB", Dimension::Bytes), 32768.0);
    assert_eq!(v("32KB", Dimension::Bytes), 32000.0);
    assert_eq!(v("32kB", Dimension::Bytes), 32000.0);
    assert_eq!(v("16MiB", Dimension::Bytes), 16.0 * 1048576.0);
    assert_eq!(v("1GiB", Dimension::Bytes), 1073741824.0);
    assert_eq!(v("1TiB", Dimension::Bytes), 1099511627776.0);
    assert_eq!(v("12.8kB", Dimension::Bytes), 12800.0);
    assert_eq!(v("4096", Dimension::Bytes), 4096.0);
    assert_eq!(
        parse("32KiB", Dimension::Bytes).unwrap().prefix,
        PrefixKind::Binary
    );
    assert_eq!(
        parse("32KB", Dimension::Bytes).unwrap().prefix,
        PrefixKind::Decimal
    );
}

#[test]
fn bandwidths() {
    assert_eq!(v("6.4GB/s", Dimension::Bandwidth), 6.4e9);
    assert_eq!(v("20GiB/s", Dimension::Bandwidth), 20.0 * 1073741824.0);
    assert_eq!(v("100Gbit/s", Dimension::Bandwidth), 12.5e9);
    assert_eq!(v("100Gb/s", Dimension::Bandwidth), 12.5e9);
    assert_eq!(v("12.5e9", Dimension::Bandwidth), 12.5e9);
}

#[test]
fn frequencies_rates_counts() {
    assert_eq!(v("3GHz", Dimension::Frequency), 3e9);
    assert_eq!(v("2400MHz", Dimension::Frequency), 2.4e9);
    assert_eq!(v("3ghz", Dimension::Frequency), 3e9);
    assert_eq!(v("768GFLOP/s", Dimension::FlopRate), 768e9);
    assert_eq!(v("1.5Tflops", Dimension::FlopRate), 1.5e12);
    assert_eq!(v("1e6", Dimension::Count), 1e6);
    assert_eq!(v("4k", Dimension::Count), 4000.0);
    assert_eq!(v("1Mi", Dimension::Count), 1048576.0);
}

#[test]
fn rejects_wrong_or_unknown_units() {
    assert!(matches!(
        parse("2GB", Dimension::Time),
        Err(UnitError::UnknownUnit { .. })
    ));
    assert!(matches!(
        parse("3 parsecs", Dimension::Time),
        Err(UnitError::UnknownUnit { .. })
    ));
    assert!(matches!(
        parse("fast", Dimension::Time),
        Err(UnitError::Malformed { .. })
    ));
    assert!(parse("", Dimension::Bytes).is_err());
    assert!(parse("2mB", Dimension::Bytes).is_err(), "milli-bytes");
    assert!(
        parse("4k", Dimension::Bytes).is_err(),
        "prefix without unit"
    );
    assert!(parse("1e400", Dimension::Count).is_err(), "overflow to inf");
    let e = parse("2xs", Dimension::Time).unwrap_err().to_string();
    assert!(e.contains("unknown unit 'xs'"), "{e}");
}

#[test]
fn negative_numbers_parse_for_callers_to_refuse() {
    assert_eq!(v("-2us", Dimension::Time), -2e-6);
}

#[test]
fn si_display() {
    assert_eq!(Si(6.4e9, "B/s").to_string(), "6.40 GB/s");
    assert_eq!(Si(7.12e-6, "s").to_string(), "7.12 µs");
    assert_eq!(Si(12800.0, "B").to_string(), "12.8 kB");
    assert_eq!(Si(768e9, "FLOP/s").to_string(), "768 GFLOP/s");
    assert_eq!(Si(0.0, "s").to_string(), "0 s");
    assert_eq!(Si(999.96, "B").to_string(), "1.00 kB");
    assert_eq!(Si(8e30, "B").to_string(), "8.00e30 B");
    assert_eq!(Si(999e15, "B").to_string(), "999 PB");
    assert_eq!(Si(2e-13, "s").to_string(), "2.00e-13 s");
    assert_eq!(Si(1e-12, "s").to_string(), "1.00 ps");
}

#[test]
fn binary_byte_counts() {
    let v: Vec<String> = [4096.0, 65536.0, 1048576.0, 16777216.0, 268435456.0]
        .iter()
        .map(|&b| binary_bytes(b))
        .collect();
    assert_eq!(v, ["4 KiB", "64 KiB", "1 MiB", "16 MiB", "256 MiB"]);
    assert_eq!(binary_bytes(1536.0), "1.5 KiB");
    assert_eq!(binary_bytes(30583.9), "29.9 KiB");
    assert_eq!(binary_bytes(553060.6), "540 KiB");
    assert_eq!(binary_bytes(1.5 * 1073741824.0), "1.5 GiB");
    assert_eq!(binary_bytes(100.0), "100 B");
    assert_eq!(exact_binary_bytes(4096), "4 KiB");
    assert_eq!(exact_binary_bytes(3444), "3444 B");
    assert_eq!(exact_binary_bytes(16 << 20), "16 MiB");
    assert_eq!(exact_binary(3.0 * 1073741824.0), Some((3.0, "GiB")));
    assert_eq!(exact_binary(1000.0), None);
}
