//! The known keys of a project's `.planning/config.json`: their types, allowed values and
//! defaults, read from the content's `msd-core/templates/config-keys.json`.
//!
//! Why a data file in the content and not a table in code: the keys belong to the framework
//! being installed (CONTENT-CONVENTIONS section 7 lists them), not to the tool; a tree installed
//! with `--content DIR` brings its own. The file is installed with the core, so `msd_run
//! config-get` / `config-set` read the schema of the content they serve, and the install
//! validates it (and that `templates/config.json` agrees with its defaults) before writing.
//!
//! Input: the schema text; a key (`workflow.compact_content`, `agent_skills.msd-executor`); a
//! value as typed on a command line or as found in the file. Output: the typed JSON value, or a
//! message saying what is allowed. Pure: reading and writing the file is the caller's job.
//!
//! Types are a closed set: `bool`, `enum` (listed strings) and `paths` (a JSON array of
//! project-relative paths). A key segment `<agent>` stands for one agent name.

use serde_json::{Map, Value};

/// Where the schema lives, relative to the core dir.
pub const SCHEMA_PATH: &str = "templates/config-keys.json";
/// The config template, relative to the core dir.
pub const TEMPLATE_PATH: &str = "templates/config.json";
/// The one placeholder segment.
pub const AGENT_PLACEHOLDER: &str = "<agent>";

/// The schema file.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    /// What the file is (free text for readers).
    #[serde(default)]
    pub about: String,
    /// The keys, in documentation order.
    pub keys: Vec<KeySpec>,
}

/// One key.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum KeySpec {
    /// `true` or `false`.
    Bool {
        /// Dotted key.
        key: String,
        /// Default.
        default: bool,
        /// What it does.
        meaning: String,
    },
    /// One of `values`.
    Enum {
        /// Dotted key.
        key: String,
        /// Allowed values.
        values: Vec<String>,
        /// Default.
        default: String,
        /// What it does.
        meaning: String,
    },
    /// A JSON array of project-relative paths; absent by default.
    Paths {
        /// Dotted key.
        key: String,
        /// What it does.
        meaning: String,
    },
}

impl KeySpec {
    /// The dotted key pattern.
    pub fn key(&self) -> &str {
        match self {
            KeySpec::Bool { key, .. } | KeySpec::Enum { key, .. } | KeySpec::Paths { key, .. } => key,
        }
    }

    /// The default, when the key has one.
    pub fn default(&self) -> Option<Value> {
        match self {
            KeySpec::Bool { default, .. } => Some(Value::Bool(*default)),
            KeySpec::Enum { default, .. } => Some(Value::String(default.clone())),
            KeySpec::Paths { .. } => None,
        }
    }

    /// What values are allowed, for messages.
    pub fn allowed(&self) -> String {
        match self {
            KeySpec::Bool { .. } => "true or false".into(),
            KeySpec::Enum { values, .. } => values.join(", "),
            KeySpec::Paths { .. } => "a JSON array of project-relative paths, e.g. '[\"skills/testing\"]'".into(),
        }
    }

    /// Parses a value typed on the command line.
    pub fn parse(&self, raw: &str) -> Result<Value, String> {
        let v = match self {
            KeySpec::Bool { .. } => match raw {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(format!("`{raw}` is not a boolean")),
            },
            KeySpec::Enum { .. } => Value::String(raw.to_string()),
            KeySpec::Paths { .. } => {
                serde_json::from_str(raw).map_err(|e| format!("`{raw}` is not a JSON array: {e}"))?
            }
        };
        self.check(&v)?;
        Ok(v)
    }

    /// Checks a value found in the file or parsed from the command line.
    pub fn check(&self, v: &Value) -> Result<(), String> {
        match (self, v) {
            (KeySpec::Bool { .. }, Value::Bool(_)) => Ok(()),
            (KeySpec::Enum { values, .. }, Value::String(s)) if values.contains(s) => Ok(()),
            (KeySpec::Enum { .. }, Value::String(s)) => Err(format!("`{s}` is not an allowed value")),
            (KeySpec::Paths { .. }, Value::Array(items)) => {
                for item in items {
                    let Value::String(p) = item else { return Err(format!("{item} is not a path string")) };
                    let p = p.trim_end_matches('/');
                    crate::fs::relpath::RelPath::new(p)
                        .map_err(|e| format!("`{p}` is not a project-relative path: {e}"))?;
                }
                Ok(())
            }
            (_, other) => Err(format!("{other} has the wrong type")),
        }
    }
}

/// A problem with the schema file itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SchemaError {
    /// The file.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

fn is_segment(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn is_agent_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl Schema {
    /// Parses and validates the schema: unique keys, lowercase segments (or `<agent>` as a
    /// whole segment), enum defaults among their values.
    pub fn parse(path: &str, text: &str) -> Result<Schema, SchemaError> {
        let err = |line: Option<usize>, message: String| SchemaError { path: path.to_string(), line, message };
        let schema: Schema = serde_json::from_str(text).map_err(|e| err(Some(e.line()), e.to_string()))?;
        let locate = |key: &str| crate::fs::json::locate(text, &format!("\"{key}\"")).0;
        let mut seen = std::collections::BTreeSet::new();
        for k in &schema.keys {
            let key = k.key();
            if !key.split('.').all(|s| is_segment(s) || s == AGENT_PLACEHOLDER) {
                return Err(err(
                    Some(locate(key)),
                    format!("key `{key}`: segments are lowercase letters, digits, `_`, or `<agent>`"),
                ));
            }
            if !seen.insert(key) {
                return Err(err(Some(locate(key)), format!("key `{key}` is listed twice")));
            }
            if let KeySpec::Enum { values, default, .. } = k
                && !values.contains(default)
            {
                return Err(err(
                    Some(locate(key)),
                    format!("key `{key}`: default `{default}` is not among its values"),
                ));
            }
        }
        Ok(schema)
    }

    /// The spec of `key`, and the agent name when the key has the `<agent>` segment.
    pub fn lookup(&self, key: &str) -> Option<(&KeySpec, Option<String>)> {
        let segs: Vec<&str> = key.split('.').collect();
        self.keys.iter().find_map(|k| {
            let pat: Vec<&str> = k.key().split('.').collect();
            if pat.len() != segs.len() {
                return None;
            }
            let mut agent = None;
            for (p, s) in pat.iter().zip(&segs) {
                if *p == AGENT_PLACEHOLDER && is_agent_name(s) {
                    agent = Some(s.to_string());
                } else if p != s {
                    return None;
                }
            }
            Some((k, agent))
        })
    }

    /// The known keys, for messages.
    pub fn key_list(&self) -> String {
        self.keys.iter().map(KeySpec::key).collect::<Vec<_>>().join(", ")
    }

    /// Checks a config document (the template, or a project's file): every leaf is a known key
    /// with a valid value. Returns one message per problem. With `defaults`, also requires every
    /// key with a default to be present with exactly that value (the template's contract).
    pub fn check_document(&self, doc: &Value, defaults: bool) -> Vec<String> {
        let mut problems = Vec::new();
        let mut leaves = Vec::new();
        collect_leaves(doc, String::new(), self, &mut leaves);
        for (key, _) in &leaves {
            if self.lookup(key).is_none() {
                problems.push(format!("unknown key `{key}`"));
            }
        }
        problems.extend(self.invalid_values(doc));
        if defaults {
            for k in &self.keys {
                if let Some(d) = k.default()
                    && get(doc, k.key()) != Some(&d)
                {
                    problems.push(format!("`{}` must be present with its default {d}", k.key()));
                }
            }
        }
        problems
    }
}

impl Schema {
    /// The known keys of `doc` whose value the key does not allow (what `config-get` rejects),
    /// one message per key; unknown keys are not this check's business.
    pub fn invalid_values(&self, doc: &Value) -> Vec<String> {
        let mut leaves = Vec::new();
        collect_leaves(doc, String::new(), self, &mut leaves);
        leaves
            .iter()
            .filter_map(|(key, v)| {
                let (spec, _) = self.lookup(key)?;
                spec.check(v).err().map(|e| format!("`{key}`: {e}; allowed: {}", spec.allowed()))
            })
            .collect()
    }
}

/// Leaves of a config document as dotted keys. An object is descended into unless a schema key
/// names it as a whole (none does today; `paths` values are arrays).
fn collect_leaves<'a>(v: &'a Value, prefix: String, schema: &Schema, out: &mut Vec<(String, &'a Value)>) {
    match v {
        Value::Object(m) if prefix.is_empty() || schema.lookup(&prefix).is_none() => {
            for (k, child) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                collect_leaves(child, key, schema, out);
            }
        }
        _ => out.push((prefix, v)),
    }
}

/// The value at a dotted key.
pub fn get<'a>(doc: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(doc, |v, seg| v.as_object()?.get(seg))
}

/// Sets a dotted key, creating objects on the way. Fails (changing nothing) when a segment on
/// the way holds something other than an object.
pub fn set(doc: &mut Map<String, Value>, key: &str, value: Value) -> Result<(), String> {
    let segs: Vec<&str> = key.split('.').collect();
    let (last, path) = segs.split_last().expect("split yields one segment");
    let mut cur = doc;
    let mut walked = String::new();
    for seg in path {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(seg);
        let entry = cur.entry(seg.to_string()).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            return Err(format!("`{walked}` holds {entry}, not an object"));
        }
        cur = entry.as_object_mut().expect("checked");
    }
    cur.insert(last.to_string(), value);
    Ok(())
}

/// Renders a value the way `config-get` prints it: strings bare, everything else as JSON.
pub fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"keys": [
        {"key": "mode", "type": "enum", "values": ["interactive", "yolo"], "default": "interactive", "meaning": "m"},
        {"key": "workflow.compact_content", "type": "bool", "default": false, "meaning": "c"},
        {"key": "agent_skills.<agent>", "type": "paths", "meaning": "s"}
    ]}"#;

    #[test]
    fn config_keys_lookup_parse_and_set() {
        let s = Schema::parse("k.json", SCHEMA).unwrap();
        let (spec, agent) = s.lookup("agent_skills.msd-executor").unwrap();
        assert_eq!(agent.as_deref(), Some("msd-executor"));
        assert!(spec.parse(r#"["skills/a", "b/"]"#).is_ok());
        assert!(spec.parse(r#"["../x"]"#).is_err());
        assert!(spec.parse(r#""x""#).is_err());
        assert!(s.lookup("agent_skills.Bad_Name").is_none());
        assert!(s.lookup("workflow.nope").is_none());
        let (c, _) = s.lookup("workflow.compact_content").unwrap();
        assert_eq!(c.parse("true").unwrap(), Value::Bool(true));
        assert!(c.parse("yes").is_err() && c.parse("\"true\"").is_err());
        let mut doc = Map::new();
        set(&mut doc, "workflow.compact_content", Value::Bool(true)).unwrap();
        assert_eq!(get(&Value::Object(doc.clone()), "workflow.compact_content"), Some(&Value::Bool(true)));
        doc.insert("git".into(), Value::String("x".into()));
        assert!(set(&mut doc, "git.branching_strategy", Value::Null).is_err());
    }

    #[test]
    fn config_keys_schema_errors_and_template_check() {
        let bad = r#"{"keys": [{"key": "mode", "type": "enum", "values": ["a"], "default": "b", "meaning": "m"}]}"#;
        assert!(Schema::parse("k.json", bad).unwrap_err().message.contains("default"));
        assert!(Schema::parse("k.json", r#"{"keys": [], "extra": 1}"#).is_err());
        let s = Schema::parse("k.json", SCHEMA).unwrap();
        let ok: Value =
            serde_json::from_str(r#"{"mode": "interactive", "workflow": {"compact_content": false}}"#).unwrap();
        assert!(s.check_document(&ok, true).is_empty());
        let drift: Value =
            serde_json::from_str(r#"{"mode": "yolo", "workflow": {"compact_content": 1, "x": true}}"#).unwrap();
        assert_eq!(s.check_document(&drift, true).len(), 4, "{:?}", s.check_document(&drift, true));
    }
}
