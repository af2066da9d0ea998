//! Every profile the project ships reads through the typed sections, and
//! the checked-in JSON schema is the one the types generate.
//!
//! Regenerate the schema with
//! `UPDATE_PROFILE_SCHEMA=1 cargo test --release -p models --test profiles`.

use std::path::{Path, PathBuf};

use models::profile::{schema, Profile};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The folders that hold profiles: the shipped ones, the accuracy data of
/// every CPU family, the test references.
fn folders() -> Vec<PathBuf> {
    let mut v = vec![
        root().join("data/profiles"),
        root().join("predict/tests/reference"),
    ];
    for e in std::fs::read_dir(root().join("data/measurements/accuracy")).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.push(p);
        }
    }
    v
}

fn profiles() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in folders() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "json") {
                let text = std::fs::read_to_string(&p).unwrap();
                if text.contains("\"schema_version\"") {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

#[test]
fn every_shipped_profile_reads_and_round_trips() {
    let all = profiles();
    assert!(all.len() >= 5, "{all:?}");
    for p in all {
        let text = std::fs::read_to_string(&p).unwrap();
        let profile = Profile::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        // Written and read again, the profile keeps every figure (to the
        // last bits that parsing a decimal may round differently).
        let first = profile.to_json();
        let again = Profile::from_json(&first).unwrap().to_json();
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&first).unwrap(),
            serde_json::from_str(&again).unwrap(),
        );
        assert!(same(&a, &b), "{} does not round-trip", p.display());
        // Every section key of the file survives typing.
        let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
        let typed: serde_json::Value = serde_json::from_str(&first).unwrap();
        assert_keys_kept(
            &raw["sections"],
            &typed["sections"],
            &p.display().to_string(),
        );
    }
}

#[test]
fn the_checked_in_schema_is_generated_from_the_types() {
    let path = root().join("data/profile.schema.json");
    let text = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_PROFILE_SCHEMA").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "data/profile.schema.json differs from the types: regenerate it with \
         UPDATE_PROFILE_SCHEMA=1 cargo test --release -p models --test profiles"
    );
}

/// Keys older profiles wrote under another name, and their names now
/// (read through a serde alias).
const RENAMED: &[(&str, &str)] = &[("scatter_caches", "scatter_curve")];

/// Every object key of `raw` is in `typed` at the same place, under its
/// present name.
fn assert_keys_kept(raw: &serde_json::Value, typed: &serde_json::Value, at: &str) {
    match (raw, typed) {
        (serde_json::Value::Object(r), serde_json::Value::Object(t)) => {
            for (k, v) in r {
                let here = format!("{at}.{k}");
                let now = RENAMED
                    .iter()
                    .find(|(old, _)| old == k)
                    .map_or(k.as_str(), |r| r.1);
                let Some(w) = t.get(now) else {
                    assert!(v.is_null(), "{here} was dropped");
                    continue;
                };
                assert_keys_kept(v, w, &here);
            }
        }
        (serde_json::Value::Array(r), serde_json::Value::Array(t)) => {
            assert_eq!(r.len(), t.len(), "{at}");
            for (i, (v, w)) in r.iter().zip(t).enumerate() {
                assert_keys_kept(v, w, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

/// Equal trees, numbers within a relative 1e-14.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-14 * x.abs().max(y.abs())
        }
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}
