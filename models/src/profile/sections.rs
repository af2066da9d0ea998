//! The detailed results of each microbenchmark, one typed section each.
//!
//! A section name the types do not know is refused when the profile is
//! read (a renamed section fails at load time, naming itself, instead of
//! reading as missing later on).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::c2c::C2cSection;
use super::flops::FlopsSection;
use super::latency::LatencySection;
use super::lock::LockSection;
use super::mlp::MlpSection;
use super::pingpong::PingpongSection;
use super::stream::StreamSection;

/// The sections of a profile, each present when its benchmark ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c2c: Option<C2cSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<FlopsSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlp: Option<MlpSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pingpong: Option<PingpongSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamSection>,
}

/// One section of any kind, as a benchmark hands it over (once per run,
/// so the sizes of the variants do not matter).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Section {
    C2c(C2cSection),
    Flops(FlopsSection),
    Latency(LatencySection),
    Lock(LockSection),
    Mlp(MlpSection),
    Pingpong(PingpongSection),
    Stream(StreamSection),
}

impl Sections {
    /// Stores `s` under its name, replacing an older one.
    pub fn insert(&mut self, s: Section) {
        match s {
            Section::C2c(s) => self.c2c = Some(s),
            Section::Flops(s) => self.flops = Some(s),
            Section::Latency(s) => self.latency = Some(s),
            Section::Lock(s) => self.lock = Some(s),
            Section::Mlp(s) => self.mlp = Some(s),
            Section::Pingpong(s) => self.pingpong = Some(s),
            Section::Stream(s) => self.stream = Some(s),
        }
    }

    /// Parses `value` as the section called `name` and stores it (how
    /// hand-written sections and test fixtures are built).
    ///
    /// # Errors
    /// When `name` is no section or `value` does not fit its type.
    pub fn insert_json(
        &mut self,
        name: &str,
        value: serde_json::Value,
    ) -> Result<(), serde_json::Error> {
        let mut one = serde_json::Map::new();
        one.insert(name.to_string(), value);
        let parsed: Sections = serde_json::from_value(serde_json::Value::Object(one))?;
        self.merge_from(parsed);
        Ok(())
    }

    /// Takes every section `newer` has, keeping the others.
    pub fn merge_from(&mut self, newer: Sections) {
        macro_rules! take {
            ($($k:ident),*) => { $( if newer.$k.is_some() { self.$k = newer.$k; } )* };
        }
        take!(c2c, flops, latency, lock, mlp, pingpong, stream);
    }

    /// Names of the sections present, in alphabetical order.
    pub fn names(&self) -> Vec<&'static str> {
        [
            ("c2c", self.c2c.is_some()),
            ("flops", self.flops.is_some()),
            ("latency", self.latency.is_some()),
            ("lock", self.lock.is_some()),
            ("mlp", self.mlp.is_some()),
            ("pingpong", self.pingpong.is_some()),
            ("stream", self.stream.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, present)| present.then_some(n))
        .collect()
    }

    /// Whether the section called `name` is present.
    pub fn contains(&self, name: &str) -> bool {
        self.names().contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_sections_are_refused_and_known_ones_merge() {
        let e = serde_json::from_str::<Sections>(r#"{"latencies": {}}"#).unwrap_err();
        assert!(e.to_string().contains("latencies"), "{e}");
        let mut s = Sections::default();
        s.insert_json("lock", serde_json::json!({"kinds": []}))
            .unwrap();
        assert!(s.insert_json("nope", serde_json::json!({})).is_err());
        let mut newer = Sections::default();
        newer.insert(Section::Mlp(MlpSection::default()));
        s.merge_from(newer);
        assert_eq!(s.names(), ["lock", "mlp"]);
        assert!(s.contains("lock") && !s.contains("stream"));
    }
}
