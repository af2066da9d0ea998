//! A worked answer: each result with its formula, the values substituted and
//! the unit, printable as text for a student or as one JSON object.
//!
//! The JSON of a subcommand has one shape whatever the flags: every input
//! key is there (null when not given), every result key is there (null when
//! not evaluated), booleans are booleans, `notes` and `warnings` are arrays.

use serde_json::{Map, Value};

pub use super::format::{plain, q, show};
use crate::error::BadInput;

/// One line of work.
#[derive(Debug, Clone)]
pub struct Step {
    /// Object the key belongs to in the JSON (`None`: top level).
    pub group: Option<&'static str>,
    /// JSON key, SI units in the name; `name[i]` is element i of the
    /// array `name`.
    pub key: String,
    /// Symbolic formula, e.g. `T = T0 + n/B`.
    pub formula: String,
    /// The formula with the numbers in, e.g. `2 µs + 32768 B / 6.4 GB/s`.
    pub substituted: String,
    pub value: Answer,
}

/// A numeric result with its unit, a verdict, or a result that does not
/// exist for these inputs (null in the JSON).
#[derive(Debug, Clone)]
pub enum Answer {
    Number(f64, &'static str),
    Text(String),
    Absent(String),
}

/// A given value.
#[derive(Debug, Clone)]
pub enum Input {
    Number(f64, &'static str),
    Flag(bool),
    Text(String),
    List(Vec<f64>, &'static str),
    /// An optional input that was not given.
    Absent,
}

/// The worked evaluation of one model.
#[derive(Debug, Clone)]
pub struct Derivation {
    /// Subcommand name, e.g. `alpha-beta`.
    pub model: &'static str,
    /// One line naming the model and its lecture section.
    pub title: String,
    /// The given values by JSON key.
    pub inputs: Vec<(&'static str, Input)>,
    pub steps: Vec<Step>,
    /// Remarks worth reading (assumptions, where a figure came from).
    pub notes: Vec<String>,
    /// Results whose meaning differs from the usual one (superlinear
    /// speed-up, a run slower than the serial one).
    pub warnings: Vec<String>,
}

impl Derivation {
    pub fn new(model: &'static str, title: impl Into<String>) -> Self {
        Self {
            model,
            title: title.into(),
            inputs: Vec::new(),
            steps: Vec::new(),
            notes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Records a given value.
    pub fn input(&mut self, name: &'static str, value: f64, unit: &'static str) -> &mut Self {
        self.inputs.push((name, Input::Number(value, unit)));
        self
    }

    /// Records an optional value, null when not given.
    pub fn input_opt(
        &mut self,
        name: &'static str,
        value: Option<f64>,
        unit: &'static str,
    ) -> &mut Self {
        let v = value.map_or(Input::Absent, |v| Input::Number(v, unit));
        self.inputs.push((name, v));
        self
    }

    /// Records a switch.
    pub fn flag(&mut self, name: &'static str, on: bool) -> &mut Self {
        self.inputs.push((name, Input::Flag(on)));
        self
    }

    /// Records a word such as a precision.
    pub fn word(&mut self, name: &'static str, w: &str) -> &mut Self {
        self.inputs.push((name, Input::Text(w.to_string())));
        self
    }

    /// Records a list of values.
    pub fn list(&mut self, name: &'static str, v: Vec<f64>, unit: &'static str) -> &mut Self {
        self.inputs.push((name, Input::List(v, unit)));
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
        self.push(
            group,
            key,
            formula,
            substituted,
            Answer::Number(value, unit),
        );
        value
    }

    /// Records a result that these inputs leave undefined (null in JSON).
    pub fn absent(
        &mut self,
        group: Option<&'static str>,
        key: impl Into<String>,
        formula: &str,
        why: impl Into<String>,
    ) {
        let why = why.into();
        self.push(group, key, formula, String::new(), Answer::Absent(why));
    }

    /// Records a verdict such as the binding resource.
    pub fn verdict(
        &mut self,
        key: &'static str,
        formula: &str,
        substituted: String,
        value: impl Into<String>,
    ) {
        self.push(None, key, formula, substituted, Answer::Text(value.into()));
    }

    fn push(
        &mut self,
        group: Option<&'static str>,
        key: impl Into<String>,
        formula: &str,
        substituted: String,
        value: Answer,
    ) {
        self.steps.push(Step {
            group,
            key: key.into(),
            formula: formula.to_string(),
            substituted,
            value,
        });
    }

    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    pub fn warn(&mut self, text: impl Into<String>) {
        self.warnings.push(text.into());
    }

    /// Refuses a derivation with a result or input that is not a finite
    /// number: the inputs were too large (or too small) for the formula.
    ///
    /// # Errors
    /// [`BadInput`] naming the first such key.
    pub fn check_finite(&self) -> Result<(), BadInput> {
        let bad = |key: &str, v: f64| {
            BadInput(format!(
                "{} = {v} is not a finite number: the inputs are beyond what the formula can evaluate; give smaller values",
                key
            ))
        };
        for (name, i) in &self.inputs {
            match i {
                Input::Number(v, _) if !v.is_finite() => return Err(bad(name, *v)),
                Input::List(vs, _) => {
                    if let Some(v) = vs.iter().find(|v| !v.is_finite()) {
                        return Err(bad(name, *v));
                    }
                }
                _ => {}
            }
        }
        for s in &self.steps {
            if let Answer::Number(v, _) = s.value {
                if !v.is_finite() {
                    return Err(bad(&s.key, v));
                }
            }
        }
        Ok(())
    }

    /// The human form: title, inputs, then one line per step.
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.title);
        let given: Vec<String> = self
            .inputs
            .iter()
            .filter_map(|(n, i)| {
                let v = match i {
                    Input::Number(v, u) => show(*v, u),
                    Input::Flag(b) => b.to_string(),
                    Input::Text(t) => t.clone(),
                    Input::List(vs, u) => {
                        let items: Vec<String> = vs.iter().map(|v| q(*v, u)).collect();
                        format!("[{}]", items.join(", "))
                    }
                    Input::Absent => return None,
                };
                Some(format!("{n} = {v}"))
            })
            .collect();
        if !given.is_empty() {
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
            let indent = if group.is_some() { "    " } else { "  " };
            out.push_str(&format!("{indent}{}: {}\n", s.key, s.formula));
            match &s.value {
                Answer::Number(v, u) => out.push_str(&format!(
                    "{indent}    = {}\n{indent}    = {}\n",
                    s.substituted,
                    show(*v, u)
                )),
                Answer::Text(t) => out.push_str(&format!(
                    "{indent}    : {}\n{indent}    → {t}\n",
                    s.substituted
                )),
                Answer::Absent(why) => {
                    out.push_str(&format!("{indent}    — not evaluated: {why}\n"))
                }
            }
        }
        for n in &self.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        for w in &self.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        out
    }

    /// The machine form (see the module docs and data/README.md).
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("model".into(), self.model.into());
        let inputs: Map<String, Value> = self
            .inputs
            .iter()
            .map(|(n, i)| {
                let v = match i {
                    Input::Number(v, _) => json_number(*v),
                    Input::Flag(b) => Value::Bool(*b),
                    Input::Text(t) => Value::String(t.clone()),
                    Input::List(vs, _) => vs.iter().map(|v| json_number(*v)).collect(),
                    Input::Absent => Value::Null,
                };
                (n.to_string(), v)
            })
            .collect();
        obj.insert("inputs".into(), Value::Object(inputs));
        for s in &self.steps {
            let v = match &s.value {
                Answer::Number(x, _) => json_number(*x),
                Answer::Text(t) => Value::String(t.clone()),
                Answer::Absent(_) => Value::Null,
            };
            let target = match s.group {
                None => &mut obj,
                Some(g) => {
                    let entry = obj.entry(g).or_insert_with(|| Value::Object(Map::new()));
                    match entry {
                        Value::Object(m) => m,
                        _ => continue,
                    }
                }
            };
            match s.key.split_once('[') {
                Some((name, _)) => {
                    if let Value::Array(a) = target
                        .entry(name)
                        .or_insert_with(|| Value::Array(Vec::new()))
                    {
                        a.push(v);
                    }
                }
                None => {
                    target.insert(s.key.clone(), v);
                }
            }
        }
        let work: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                let key = match s.group {
                    Some(g) => format!("{g}.{}", s.key),
                    None => s.key.clone(),
                };
                Value::String(match &s.value {
                    Answer::Absent(why) => format!("{key}: {} — not evaluated: {why}", s.formula),
                    _ => format!("{key}: {} = {}", s.formula, s.substituted),
                })
            })
            .collect();
        obj.insert("work".into(), Value::Array(work));
        obj.insert("notes".into(), self.notes.clone().into());
        obj.insert("warnings".into(), self.warnings.clone().into());
        Value::Object(obj)
    }
}

/// JSON has no infinity: a value without a finite form is null.
fn json_number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_nest_in_json() {
        let mut d = Derivation::new("demo", "demo");
        d.input("n", 4.0, "")
            .flag("weak", false)
            .input_opt("k", None, "");
        d.num("a", "a = n", "4".into(), 4.0, "");
        d.grouped(Some("g"), "b", "b = 2n", "2·4".into(), 8.0, "B");
        d.verdict("bound", "which", "4 < 8".into(), "memory");
        d.num("s[1]", "x", "1".into(), 1.0, "s");
        d.num("s[2]", "x", "2".into(), 2.0, "s");
        d.absent(None, "limit", "1/f", "f = 0");
        let j = d.to_json();
        assert_eq!(j["a"], 4.0);
        assert_eq!(j["g"]["b"], 8.0);
        assert_eq!(j["bound"], "memory");
        assert_eq!(j["inputs"]["n"], 4.0);
        assert_eq!(j["inputs"]["weak"], false);
        assert!(j["inputs"]["k"].is_null());
        assert_eq!(j["s"], serde_json::json!([1.0, 2.0]));
        assert!(j["limit"].is_null());
        assert_eq!(j["notes"], serde_json::json!([]));
        assert!(d.to_text().contains("[g]"));
    }

    #[test]
    fn non_finite_results_are_refused() {
        let mut d = Derivation::new("demo", "demo");
        d.num("t", "t", "1e308·10".into(), f64::INFINITY, "s");
        assert!(d.check_finite().unwrap_err().0.contains("t = inf"));
        assert_eq!(json_number(f64::INFINITY), Value::Null);
    }
}
