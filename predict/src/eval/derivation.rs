//! A worked answer: each result with its formula, the values substituted and
//! the unit, printable as text for a student or as one JSON object.

use models::units::Si;
use serde_json::{Map, Value};

/// One line of work.
#[derive(Debug, Clone)]
pub struct Step {
    /// Object the key belongs to in the JSON (`None`: top level).
    pub group: Option<&'static str>,
    /// JSON key, SI units in the name.
    pub key: String,
    /// Symbolic formula, e.g. `T = T0 + n/B`.
    pub formula: String,
    /// The formula with the numbers in, e.g. `2 µs + 32768 B / 6.40 GB/s`.
    pub substituted: String,
    pub value: Answer,
}

/// A numeric result with its unit, or a verdict.
#[derive(Debug, Clone)]
pub enum Answer {
    Number(f64, &'static str),
    Text(String),
}

/// The worked evaluation of one model.
#[derive(Debug, Clone)]
pub struct Derivation {
    /// Subcommand name, e.g. `alpha-beta`.
    pub model: &'static str,
    /// One line naming the model and its lecture section.
    pub title: String,
    /// The given values, as (name, SI value, unit).
    pub inputs: Vec<(&'static str, f64, &'static str)>,
    pub steps: Vec<Step>,
    /// Remarks worth reading (assumptions, refusals of a regime).
    pub notes: Vec<String>,
}

impl Derivation {
    pub fn new(model: &'static str, title: impl Into<String>) -> Self {
        Self {
            model,
            title: title.into(),
            inputs: Vec::new(),
            steps: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Records a given value.
    pub fn input(&mut self, name: &'static str, value: f64, unit: &'static str) -> &mut Self {
        self.inputs.push((name, value, unit));
        self
    }

    /// Records a numeric result at the top level.
    pub fn num(
        &mut self,
        key: impl Into<String>,
        formula: &str,
        substituted: String,
        value: f64,
        unit: &'static str,
    ) -> f64 {
        self.grouped(None, key, formula, substituted, value, unit)
    }

    /// Records a numeric result inside a JSON object `group`.
    pub fn grouped(
        &mut self,
        group: Option<&'static str>,
        key: impl Into<String>,
        formula: &str,
        substituted: String,
        value: f64,
        unit: &'static str,
    ) -> f64 {
        self.steps.push(Step {
            group,
            key: key.into(),
            formula: formula.to_string(),
            substituted,
            value: Answer::Number(value, unit),
        });
        value
    }

    /// Records a verdict such as the binding resource.
    pub fn verdict(
        &mut self,
        key: &'static str,
        formula: &str,
        substituted: String,
        value: impl Into<String>,
    ) {
        self.steps.push(Step {
            group: None,
            key: key.into(),
            formula: formula.to_string(),
            substituted,
            value: Answer::Text(value.into()),
        });
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// The human form: title, inputs, then one line per step.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.title);
        if !self.inputs.is_empty() {
            let given: Vec<String> = self
                .inputs
                .iter()
                .map(|(n, v, u)| format!("{n} = {}", show(*v, u)))
                .collect();
            out.push_str(&format!("  given: {}\n", given.join(", ")));
        }
        let mut group = None;
        for s in &self.steps {
            if s.group != group {
                group = s.group;
                if let Some(g) = group {
                    out.push_str(&format!("  [{g}]\n"));
                }
            }
            let result = match &s.value {
                Answer::Number(v, u) => show(*v, u),
                Answer::Text(t) => t.clone(),
            };
            let indent = if group.is_some() { "    " } else { "  " };
            out.push_str(&format!(
                "{indent}{key}: {f}\n{indent}    = {sub}\n{indent}    = {result}\n",
                key = s.key,
                f = s.formula,
                sub = s.substituted,
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        out
    }

    /// The machine form: one object with `model`, `inputs`, every result key
    /// (grouped where a group is set) and `work`, the steps as text.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("model".into(), self.model.into());
        let inputs: Map<String, Value> = self
            .inputs
            .iter()
            .map(|(n, v, _)| (n.to_string(), json_number(*v)))
            .collect();
        obj.insert("inputs".into(), Value::Object(inputs));
        for s in &self.steps {
            let v = match &s.value {
                Answer::Number(x, _) => json_number(*x),
                Answer::Text(t) => Value::String(t.clone()),
            };
            let target = match s.group {
                None => &mut obj,
                Some(g) => obj
                    .entry(g)
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("groups are objects"),
            };
            target.insert(s.key.clone(), v);
        }
        let work: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                let key = match s.group {
                    Some(g) => format!("{g}.{}", s.key),
                    None => s.key.clone(),
                };
                Value::String(format!("{key}: {} = {}", s.formula, s.substituted))
            })
            .collect();
        obj.insert("work".into(), Value::Array(work));
        if !self.notes.is_empty() {
            obj.insert("notes".into(), self.notes.clone().into());
        }
        Value::Object(obj)
    }
}

/// JSON has no infinity: an unbounded result (Amdahl's limit at f = 0) is null.
fn json_number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A value for people: SI prefix for dimensioned units, plain for ratios.
pub fn show(v: f64, unit: &'static str) -> String {
    match unit {
        "" => plain(v),
        "flop/B" => format!("{} {unit}", plain(v)),
        "B" => bytes(v),
        "s" if v.abs() >= 60.0 => format!("{} s ({} min)", plain(v), plain(v / 60.0)),
        _ if v.is_infinite() => format!("{v} {unit}"),
        _ => Si(v, unit).to_string(),
    }
}

/// Bytes: exact below 10 kB; a whole multiple of 1024 also in binary units so
/// the reader sees which prefix was meant.
fn bytes(v: f64) -> String {
    const BINARY: [(f64, &str); 3] = [(1073741824.0, "GiB"), (1048576.0, "MiB"), (1024.0, "KiB")];
    if v.fract() == 0.0 && v.abs() < 1e15 {
        if let Some((f, u)) = BINARY.iter().find(|(f, _)| v.abs() >= *f && v % f == 0.0) {
            return format!("{v} B ({} {u})", v / f);
        }
        if v.abs() < 1e4 {
            return format!("{v} B");
        }
    }
    Si(v, "B").to_string()
}

/// A dimensionless number with up to 4 significant digits and no trailing noise.
pub fn plain(v: f64) -> String {
    if v.is_infinite() || v.is_nan() {
        return v.to_string();
    }
    if v != 0.0 && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        return format!("{v:.4e}");
    }
    if v.fract() == 0.0 {
        return format!("{v}");
    }
    // Four significant digits.
    let int_digits = if v == 0.0 {
        1
    } else {
        v.abs().log10().floor() as i32 + 1
    };
    let decimals = (4 - int_digits).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_nest_in_json() {
        let mut d = Derivation::new("demo", "demo");
        d.input("n", 4.0, "");
        d.num("a", "a = n", "4".into(), 4.0, "");
        d.grouped(Some("g"), "b", "b = 2n", "2·4".into(), 8.0, "B");
        d.verdict("bound", "which", "a < b".into(), "memory");
        let j = d.to_json();
        assert_eq!(j["a"], 4.0);
        assert_eq!(j["g"]["b"], 8.0);
        assert_eq!(j["bound"], "memory");
        assert_eq!(j["inputs"]["n"], 4.0);
        assert!(d.to_text().contains("[g]"));
    }

    #[test]
    fn infinite_is_null_in_json() {
        assert_eq!(json_number(f64::INFINITY), Value::Null);
    }

    #[test]
    fn bytes_show_their_prefix() {
        assert_eq!(show(32768.0, "B"), "32768 B (32 KiB)");
        assert_eq!(show(12800.0, "B"), "12.8 kB");
        assert_eq!(show(64.0, "B"), "64 B");
        assert_eq!(show(0.15, "flop/B"), "0.15 flop/B");
    }

    #[test]
    fn plain_numbers() {
        assert_eq!(plain(32.0), "32");
        assert_eq!(plain(0.5), "0.5");
        assert_eq!(plain(1.0 / 3.0), "0.3333");
        assert_eq!(plain(61.4946), "61.49");
        assert_eq!(plain(1570.9004), "1571");
        assert_eq!(show(1200.0, "s"), "1200 s (20 min)");
        assert_eq!(plain(262144.0), "262144");
        assert_eq!(plain(1.5e-5), "1.5000e-5");
    }
}
