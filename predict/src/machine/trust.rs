//! How far a profile's figures can be trusted here: the warnings for a
//! prediction that leans on a figure calibrate flagged unreliable, and for
//! a profile measured on another machine than this one.

use models::identity::MachineId;
use models::profile::{Profile, Sample};

/// The one-line warning for a prediction that leans on summary figure
/// `key` of `profile` when calibrate flagged it unreliable, else `None`.
pub fn unreliable_warning(profile: &Profile, key: &str) -> Option<String> {
    leans_on(key, profile.trust.get(key)?.unreliable.as_ref()?)
}

/// The one-line warning for a prediction that leans on the lock point
/// `what` whose throughput `sample` calibrate flagged unreliable, else
/// `None`. Each kind's rounds are judged on their own: a mutex prediction
/// does not inherit the ticket lock's `t_crit_s` verdict.
pub fn unreliable_lock_warning(what: &str, sample: &Sample) -> Option<String> {
    leans_on(what, sample.unreliable.as_ref()?)
}

/// The warning's one line: the figure `what` and why calibrate flagged it.
fn leans_on(what: &str, why: &str) -> Option<String> {
    Some(format!(
        "warning: this prediction leans on the profile's {what}, which calibrate flagged unreliable ({why})"
    ))
}

/// Prints `warning` on stderr unless one for `key` was printed before in
/// this process.
pub(super) fn warn_once(key: &str, warning: Option<String>) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let Some(w) = warning else { return };
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|k| k == key) {
        said.push(key.to_string());
        eprintln!("{w}");
    }
}

/// The machine this process runs on: the CPU model of `/proc/cpuinfo` and
/// the host name (compare with [`models::identity::difference`]).
pub fn this_machine() -> MachineId {
    let sys = calibrate::harness::sysinfo::SysInfo::read(1);
    MachineId::new(sys.cpu_model, sys.hostname)
}

/// The one-line warning when `profile` (read from `label`) was measured on
/// another machine than this one, or `None`.
pub fn other_machine_warning(profile: &Profile, label: &str) -> Option<String> {
    models::identity::profile_warning(label, &profile.provenance, &this_machine())
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::profile::{FigureTrust, Provenance};

    #[test]
    fn a_figure_flagged_unreliable_warns() {
        let mut p = Profile::new(Provenance::default());
        assert_eq!(unreliable_warning(&p, "peak_flops_f64"), None);
        p.trust.insert(
            "peak_flops_f64".into(),
            FigureTrust {
                clean_batches: 1,
                disturbed_batches: 20,
                unreliable: Some("only 1 of 21 timed batches were clean".into()),
            },
        );
        p.trust.insert("t_crit_s".into(), FigureTrust::default());
        let w = unreliable_warning(&p, "peak_flops_f64").unwrap();
        assert!(w.starts_with("warning: this prediction leans on the profile's peak_flops_f64"));
        assert!(w.contains("only 1 of 21") && !w.contains('\n'));
        assert_eq!(
            unreliable_warning(&p, "t_crit_s"),
            None,
            "clean figures are quiet"
        );
    }

    #[test]
    fn a_lock_point_flagged_unreliable_warns_on_its_own() {
        let mut s = Sample::new(1e7, 0.9e7, 1.1e7);
        assert_eq!(
            unreliable_lock_warning("lock mutex on 2 thread(s)", &s),
            None
        );
        s.unreliable = Some("only 2 of 9 rounds were clean".into());
        let w = unreliable_lock_warning("lock mutex on 2 thread(s)", &s).unwrap();
        assert!(w.contains("lock mutex on 2 thread(s)") && w.contains("only 2 of 9"));
        assert!(!w.contains('\n'));
    }
}
