//! Which transport carried the messages, as far as the launch shows it.
//!
//! MPI does not say which path a message took, but the user chose it: Open
//! MPI's `mpirun --mca btl tcp,self` reaches every rank as the environment
//! variable `OMPI_MCA_btl=tcp,self` (likewise `OMPI_MCA_pml`, and the same
//! holds for `export OMPI_MCA_btl=...`). Without a choice the library picks:
//! shared memory between ranks on one host (Open MPI's `vader`/`sm`), its
//! fastest network between hosts. The transport name recorded in the
//! profile therefore combines the selection with whether ranks 0 and 1 ran
//! on one host, so a `--mca btl tcp,self` run gives a profile that says
//! `tcp` and a default run one that says `shared memory`.

use std::collections::BTreeMap;

/// Environment variables that select transports (Open MPI and MPICH).
pub const SELECTION_VARIABLES: &[&str] = &[
    "OMPI_MCA_pml",
    "OMPI_MCA_btl",
    "OMPI_MCA_mtl",
    "MPIR_CVAR_CH4_NETMOD",
    "MPIR_CVAR_CH3_NETMOD",
    "MPIR_CVAR_NEMESIS_NETMOD",
    "FI_PROVIDER",
    "UCX_TLS",
];

/// The transport of a ping-pong run, as the profile records it.
pub use models::profile::pingpong::Transport;

/// Components named in an Open MPI include list (`tcp,self` gives `tcp`);
/// empty for an exclude list (`^openib`) or `self` alone.
fn included(list: &str) -> Vec<String> {
    let list = list.trim();
    if list.starts_with('^') {
        return Vec::new();
    }
    list.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty() && *c != "self")
        .map(String::from)
        .collect()
}

/// Describes the transport from the library version, the two hosts and an
/// environment lookup (`std::env::var` in real runs).
pub fn describe(
    library: &str,
    hosts: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Transport {
    let selection: BTreeMap<String, String> = SELECTION_VARIABLES
        .iter()
        .filter_map(|k| env(k).map(|v| (k.to_string(), v)))
        .collect();
    let same_host = hosts.windows(2).all(|w| w[0] == w[1]);
    let get = |k: &str| selection.get(k).map(String::as_str);
    let btl = get("OMPI_MCA_btl").map(included).unwrap_or_default();
    let pml = get("OMPI_MCA_pml").map(included).unwrap_or_default();
    let name = if !btl.is_empty() && pml.iter().all(|p| p == "ob1") {
        match btl.iter().map(|c| short_btl(c)).collect::<Vec<_>>() {
            v if v.len() == 1 => v[0].to_string(),
            v => v.join("+"),
        }
    } else if let Some(p) = pml.iter().find(|p| *p != "ob1") {
        p.clone()
    } else if let Some(netmod) = get("MPIR_CVAR_CH4_NETMOD")
        .or(get("MPIR_CVAR_CH3_NETMOD"))
        .or(get("MPIR_CVAR_NEMESIS_NETMOD"))
    {
        netmod.to_string()
    } else if same_host {
        "shared memory (library default)".into()
    } else {
        "network (library default)".into()
    };
    let hosts_text = if same_host {
        format!(
            "ranks 0 and 1 on one host ({})",
            hosts.first().map_or("?", String::as_str)
        )
    } else {
        format!("ranks 0 and 1 on {}", hosts.join(" and "))
    };
    let sel_text = if selection.is_empty() {
        "no transport selected".to_string()
    } else {
        selection
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let library_line = library.lines().next().unwrap_or("").trim();
    let library_short = library_line
        .split(',')
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    Transport {
        detail: format!("{library_short}; {sel_text}; {hosts_text}"),
        name,
        selection,
        library: library_line.to_string(),
        same_host,
    }
}

/// Open MPI's shared-memory components under one name.
fn short_btl(c: &str) -> &str {
    match c {
        "vader" | "sm" => "shared memory",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    const OMPI: &str = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4";

    #[test]
    fn tcp_selection_is_named() {
        let hosts = vec!["vm".to_string(), "vm".to_string()];
        let t = describe(OMPI, &hosts, env(&[("OMPI_MCA_btl", "tcp,self")]));
        assert_eq!(t.name, "tcp");
        assert!(t.same_host);
        assert!(t.detail.contains("Open MPI v4.1.4"), "{}", t.detail);
        assert!(t.detail.contains("OMPI_MCA_btl=tcp,self"), "{}", t.detail);
    }

    #[test]
    fn default_depends_on_hosts() {
        let one = vec!["a".to_string(), "a".to_string()];
        let two = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            describe(OMPI, &one, env(&[])).name,
            "shared memory (library default)"
        );
        let t = describe(OMPI, &two, env(&[]));
        assert_eq!(t.name, "network (library default)");
        assert!(t.detail.contains("a and b"));
        // An exclude list is no selection.
        assert_eq!(
            describe(OMPI, &one, env(&[("OMPI_MCA_btl", "^openib")])).name,
            "shared memory (library default)"
        );
    }

    #[test]
    fn shared_memory_and_pml_selections() {
        let one = vec!["a".to_string(), "a".to_string()];
        assert_eq!(
            describe(OMPI, &one, env(&[("OMPI_MCA_btl", "self,vader")])).name,
            "shared memory"
        );
        assert_eq!(
            describe(OMPI, &one, env(&[("OMPI_MCA_pml", "ucx")])).name,
            "ucx"
        );
    }
}
