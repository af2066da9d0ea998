//! Which machine a profile (or a record) was measured on, and whether that
//! is the machine at hand: the guard against reading one machine's
//! measurements under another machine's roofs.
//!
//! Pure: the caller reads this machine's identity (CPU model and host name)
//! and passes it in.

use crate::profile::Provenance;

/// The identity of a machine: CPU model and host name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MachineId {
    pub cpu_model: String,
    pub hostname: String,
}

impl MachineId {
    pub fn new(cpu_model: impl Into<String>, hostname: impl Into<String>) -> Self {
        Self {
            cpu_model: cpu_model.into(),
            hostname: hostname.into(),
        }
    }

    /// The machine a profile was measured on.
    pub fn of(p: &Provenance) -> Self {
        Self::new(p.cpu_model.clone(), p.hostname.clone())
    }

    /// "CPU on host H" for messages.
    pub fn describe(&self) -> String {
        let cpu = if self.cpu_model.trim().is_empty() {
            "an unnamed CPU"
        } else {
            self.cpu_model.trim()
        };
        if self.hostname.trim().is_empty() {
            cpu.to_string()
        } else {
            format!("{cpu} on host {}", self.hostname.trim())
        }
    }
}

/// Whether a profile holds measurements at all: a profile written by hand
/// (the lecture's textbook machine, a what-if) describes no real machine,
/// so no mismatch is reported for it.
pub fn is_measured(p: &Provenance) -> bool {
    p.command.contains("calibrate")
}

/// How `a` and `b` differ, as a short phrase, or `None` when they are the
/// same machine: same CPU model (ignoring repeated blanks and case) and
/// same host name. An empty field on either side is unknown and does not
/// count as a difference.
pub fn difference(a: &MachineId, b: &MachineId) -> Option<String> {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let differs = |x: &str, y: &str| {
        let (x, y) = (norm(x), norm(y));
        !x.is_empty() && !y.is_empty() && x != y
    };
    let cpu = differs(&a.cpu_model, &b.cpu_model);
    let host = differs(&a.hostname, &b.hostname);
    match (cpu, host) {
        (false, false) => None,
        (true, _) => Some(format!(
            "CPU {} is not {}",
            a.cpu_model.trim(),
            b.cpu_model.trim()
        )),
        (false, true) => Some(format!(
            "host {} is not {} (same CPU model)",
            a.hostname.trim(),
            b.hostname.trim()
        )),
    }
}

/// The one-line warning for a profile measured on `profile` used on `here`,
/// or `None` when they are the same machine or the profile is hand-written.
pub fn profile_warning(label: &str, profile: &Provenance, here: &MachineId) -> Option<String> {
    if !is_measured(profile) {
        return None;
    }
    let theirs = MachineId::of(profile);
    difference(&theirs, here).map(|_| {
        format!(
            "the profile {label} was measured on {}, not on this machine ({}); its figures may not hold here",
            theirs.describe(),
            here.describe()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_machine_modulo_blanks_and_case() {
        let a = MachineId::new("Intel(R) Xeon(R)  Processor", "vm");
        let b = MachineId::new("intel(r) xeon(r) processor", "vm");
        assert_eq!(difference(&a, &b), None);
        assert_eq!(difference(&a, &MachineId::new("", "")), None);
    }

    #[test]
    fn differences_are_named() {
        let a = MachineId::new("Intel Xeon", "vm");
        let e = difference(&a, &MachineId::new("AMD EPYC 7763", "vm")).unwrap();
        assert!(e.contains("Intel Xeon") && e.contains("AMD EPYC"), "{e}");
        let h = difference(&a, &MachineId::new("Intel Xeon", "laptop")).unwrap();
        assert!(h.contains("host vm is not laptop"), "{h}");
    }

    #[test]
    fn hand_written_profiles_are_not_flagged() {
        let mut p = Provenance {
            cpu_model: "Lecture example machine".into(),
            hostname: "textbook".into(),
            command: "hand-written".into(),
            ..Default::default()
        };
        let here = MachineId::new("AMD EPYC", "box");
        assert_eq!(profile_warning("textbook", &p, &here), None);
        p.command = "calibrate --out data/profile.json".into();
        let w = profile_warning("data/profile.json", &p, &here).unwrap();
        assert!(
            w.contains("not on this machine") && !w.contains('\n'),
            "{w}"
        );
    }
}
