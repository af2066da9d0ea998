//! Where a machine profile comes from: a file, a name under
//! `data/profiles/` (`--profile textbook`), or the built-in copy of the
//! lecture's example machine.
//!
//! `--profile X` resolves in this order: the file `X` if it exists, then
//! `data/profiles/X.json` (relative to the working directory), then a
//! built-in profile named `X`. The lecture's machine is built in so that
//! `predict eval --profile textbook ...` works from any directory.

use std::path::Path;

use anyhow::Context as _;
use models::profile::Profile;

use crate::error::BadInput;

/// The profile `calibrate` writes and `predict` reads by default.
pub const DEFAULT_PROFILE: &str = "data/profile.json";

/// The folder whose `records.jsonl` collects every run's records.
pub const DEFAULT_MEASUREMENTS: &str = "data/measurements";

/// The folder of named profiles and network files.
pub const PROFILES_DIR: &str = "data/profiles";

/// Profiles compiled into the binary: (name, JSON).
const BUILT_IN: &[(&str, &str)] = &[(
    "textbook",
    include_str!("../../data/profiles/textbook.json"),
)];

/// The text of a profile (or network file) and where it came from.
#[derive(Debug, Clone)]
pub struct Located {
    /// The path it was read from, or `built-in NAME`.
    pub label: String,
    /// The file's stem or the name: a short label for tables and charts.
    pub name: String,
    pub text: String,
}

/// Finds `spec` as a file, a name under [`PROFILES_DIR`], or a built-in
/// name, and reads it.
///
/// # Errors
/// [`BadInput`] naming what was tried and the names available.
pub fn locate(spec: &Path) -> Result<Located, BadInput> {
    let read = |path: &Path| {
        std::fs::read_to_string(path)
            .map(|text| Located {
                label: path.display().to_string(),
                name: stem(path),
                text,
            })
            .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))
    };
    if spec.is_file() {
        return read(spec);
    }
    if let Ok(m) = std::fs::metadata(spec) {
        let what = if m.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(BadInput(format!(
            "cannot read the profile {}: it is {what}",
            spec.display()
        )));
    }
    let as_name = spec.to_str().filter(|s| is_name(s));
    if let Some(name) = as_name {
        let named = Path::new(PROFILES_DIR).join(format!("{name}.json"));
        if named.is_file() {
            return read(&named);
        }
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
            return Ok(Located {
                label: format!("built-in {name}"),
                name: name.to_string(),
                text: (*text).to_string(),
            });
        }
    }
    let names = available().join(", ");
    let hint = if spec == Path::new(DEFAULT_PROFILE) {
        format!("; measure this machine with `calibrate` (it writes {DEFAULT_PROFILE}), or pass --profile textbook|dev-vm|FILE ({names})")
    } else if as_name.is_some() {
        format!("; profile names: {names}")
    } else {
        format!(
            "; create it with `calibrate --out {}`, or pass a profile name ({names})",
            spec.display()
        )
    };
    Err(BadInput(format!(
        "no profile {}: no such file{}{hint}",
        spec.display(),
        if as_name.is_some() {
            format!(", nor {PROFILES_DIR}/{}.json", spec.display())
        } else {
            String::new()
        }
    )))
}

/// Reads and checks the profile `spec` names (see [`locate`]); warns on
/// stderr, in one line, when it was measured on another machine.
///
/// # Errors
/// [`BadInput`] when it cannot be found, and the profile's own errors
/// (malformed, another schema version, a figure that is not finite,
/// positive or inside its interval).
pub fn load(spec: &Path) -> anyhow::Result<(Profile, Located)> {
    let found = locate(spec)?;
    if is_network_file(&found.text) {
        return Err(BadInput(format!(
            "{} is a network file (a link's T0 and B alone, for `predict scaling --network-profile`), not a machine profile",
            found.label
        ))
        .into());
    }
    let profile =
        Profile::from_json(&found.text).with_context(|| format!("the profile {}", found.label))?;
    if let Some(w) = crate::machine::other_machine_warning(&profile, &found.label) {
        eprintln!("warning: {w}");
    }
    Ok((profile, found))
}

/// The line printed when no `--profile` was given and [`DEFAULT_PROFILE`]
/// does not exist.
pub fn no_default_profile() -> String {
    format!(
        "no profile at {DEFAULT_PROFILE}: measure this machine with `calibrate` (it writes that file), or pass --profile textbook (the lecture's machine) or --profile dev-vm (a sample measured profile)"
    )
}

/// `--profile` if given, else [`DEFAULT_PROFILE`] when it exists, else
/// `None`.
///
/// # Errors
/// As [`load`], for a profile that was named or that exists.
pub fn load_or_default(explicit: Option<&Path>) -> anyhow::Result<Option<(Profile, Located)>> {
    match explicit {
        Some(spec) => load(spec).map(Some),
        None if Path::new(DEFAULT_PROFILE).exists() => load(Path::new(DEFAULT_PROFILE)).map(Some),
        None => Ok(None),
    }
}

/// The names `--profile NAME` accepts here: the files of
/// [`PROFILES_DIR`] and the built-in ones.
pub fn available() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(PROFILES_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| stem(&p))
        .chain(BUILT_IN.iter().map(|(n, _)| n.to_string()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether `text` is a network file: a JSON object with the `regimes` of a
/// network section and no profile's `schema_version`.
fn is_network_file(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.get("regimes").is_some() && v.get("schema_version").is_none())
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_textbook_machine_is_built_in_and_valid() {
        // The tests run in predict/, where data/profiles/ does not exist.
        let (p, found) = load(Path::new("textbook")).unwrap();
        assert_eq!(found.name, "textbook");
        assert_eq!(p.summary.mpi_t0_s, Some(2e-6));
        assert_eq!(p.summary.mpi_bandwidth_Bps, Some(6.4e9));
        assert_eq!(p.summary.stream_triad_Bps, Some(20e9));
        assert_eq!(p.provenance.clock_hz, Some(3e9));
        assert_eq!(p.provenance.logical_cpus, 16);
        assert!(available().contains(&"textbook".to_string()));
    }

    #[test]
    fn an_unknown_name_lists_the_names() {
        let e = locate(Path::new("no-such-machine")).unwrap_err();
        assert!(
            e.0.contains("profile names:") && e.0.contains("textbook"),
            "{e}"
        );
        let e = locate(Path::new("/no/such/profile.json")).unwrap_err();
        assert!(
            e.0.contains("no such file") && e.0.contains("calibrate --out"),
            "{e}"
        );
    }

    #[test]
    fn a_directory_or_a_network_file_is_no_profile() {
        let dir = tempfile::tempdir().unwrap();
        let e = locate(dir.path()).unwrap_err();
        assert!(e.0.ends_with("it is a directory"), "{e}");
        let net = dir.path().join("net.json");
        std::fs::write(&net, r#"{"transport": "tcp", "hosts": [], "regimes": []}"#).unwrap();
        let e = load(&net).unwrap_err().to_string();
        assert!(e.contains("is a network file"), "{e}");
    }

    #[test]
    fn a_file_wins_over_a_name() {
        let dir = std::env::temp_dir().join(format!("profiles-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("textbook");
        std::fs::write(&file, "{}").unwrap();
        let found = locate(&file).unwrap();
        assert_eq!(found.text, "{}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
