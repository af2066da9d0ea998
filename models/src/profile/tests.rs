//! Profiles round-tripped, other schema versions refused, older files read,
//! and newer runs merged into older profiles.

use super::*;

fn sample() -> Profile {
    let mut p = Profile::new(Provenance {
        cpu_model: "Test CPU".into(),
        logical_cpus: 2,
        threads: 2,
        ..Default::default()
    });
    p.summary.stream_triad_Bps = Some(20e9);
    p.levels.push(MemoryLevel {
        name: "L1".into(),
        size_bytes: Some(49152.0),
        latency_s: Some(Estimate::new(1.2e-9, 1.1e-9, 1.3e-9)),
        bandwidth_1t_Bps: None,
        bandwidth_Bps: None,
    });
    p
}

#[test]
fn round_trip() {
    let p = sample();
    let text = p.to_json();
    assert!(text.contains("\"stream_triad_Bps\": 20000000000.0"));
    assert!(text.contains("\"mpi_t0_s\": null"));
    assert_eq!(Profile::from_json(&text).unwrap(), p);
    assert_eq!(p.level_of(4096.0), "L1");
    assert_eq!(p.level_of(1e9), "DRAM");
}

#[test]
fn refuses_other_versions() {
    let text = sample().to_json().replace(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 999",
    );
    let e = Profile::from_json(&text).unwrap_err();
    assert!(matches!(e, ProfileError::Version { found: 999, .. }), "{e}");
    assert!(Profile::from_json("{}").is_err());
    assert!(Profile::from_json("not json").is_err());
}

#[test]
fn profiles_without_trust_still_load() {
    let mut v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
    v.as_object_mut().unwrap().remove("trust");
    let p = Profile::from_json(&v.to_string()).unwrap();
    assert!(p.trust.is_empty());
    assert_eq!(p.summary.stream_triad_Bps, Some(20e9));
}

#[test]
fn an_unreliable_newer_figure_withdraws_the_older_one() {
    let mut old = sample();
    old.summary.peak_flops_f64 = Some(80e9);
    let mut newer = Profile::new(Provenance::default());
    newer.trust.insert(
        "peak_flops_f64".into(),
        FigureTrust {
            clean_batches: 2,
            disturbed_batches: 12,
            unreliable: Some("too few clean batches".into()),
        },
    );
    old.merge_from(newer);
    assert_eq!(old.summary.peak_flops_f64, None);
    assert_eq!(old.summary.stream_triad_Bps, Some(20e9));
    assert_eq!(old.trust["peak_flops_f64"].disturbed_batches, 12);
    let mut s = Summary::default();
    assert!(s.figure_mut("nope").is_none());
    *s.figure_mut("t_crit_s").unwrap() = Some(1.0);
    assert_eq!(s.t_crit_s, Some(1.0));
    assert_eq!(s.figure("t_crit_s"), Some(1.0));
    assert_eq!(s.figure("mpi_t0_s"), None);
    assert_eq!(s.figure("nope"), None);
}

#[test]
fn merge_keeps_unmeasured_sections() {
    let mut old = sample();
    let mut newer = Profile::new(Provenance::default());
    newer.summary.l1_latency_s = Some(1.0e-9);
    newer.levels.push(MemoryLevel {
        name: "DRAM".into(),
        size_bytes: None,
        latency_s: Some(Estimate::exact(90e-9)),
        bandwidth_1t_Bps: None,
        bandwidth_Bps: None,
    });
    newer
        .sections
        .insert_json("latency", serde_json::json!({"line_bytes": 64}))
        .unwrap();
    old.merge_from(newer);
    assert_eq!(old.summary.stream_triad_Bps, Some(20e9));
    assert_eq!(old.summary.l1_latency_s, Some(1.0e-9));
    let names: Vec<_> = old.levels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["L1", "DRAM"]);
    assert!(old.sections.contains("latency"));
}
