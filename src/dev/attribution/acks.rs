//! Acknowledgements of emitted drift: `tests/emitted-drift-acks/<name>.json`.
//!
//! Input: the fragment files of the work tree (parsed strictly) and those at the base (only
//! their keys matter, read leniently). Output: every acknowledgement entry with its file, key,
//! reason and whether it is spent.
//!
//! Format: `{"version": 1, "paths": {"<key>": {"reason": "..."}}}`. A key is a repository path of
//! a source: the content file of a workflow or agent whose growth is intended
//! (`content/msd-core/workflows/plan-phase.md`), or any source of an emitted file that moved with
//! no changed source (`runtimes/claude/capability.json`). Keys are full paths, never bare file
//! names: the reference keyed by bare name, and a workflow and an agent of one name collided.
//!
//! Invariants: unknown fields, a version other than 1, a duplicate key, a key that is not a safe
//! relative path, a reserved key (`__proto__`, `constructor`, `prototype`), a key or reason with
//! an invisible character (U+00AD, U+200B-U+200D, U+2060, U+FEFF), an empty reason and an empty
//! `paths` are errors with file:line:col, never skipped. An entry whose file and key were
//! already present at the base is spent: it acknowledges nothing and is never stale, so each
//! change needs its own acknowledgement.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};

use msd_core::fs::relpath::RelPath;

/// Where fragments live, relative to the repository root.
pub(crate) const ACK_DIR: &str = "tests/emitted-drift-acks";

/// More fragments than this is an error: acknowledgements are for changes, not a ledger.
pub(crate) const MAX_FRAGMENTS: usize = 500;

/// Keys that mean something to JavaScript object prototypes; refused so a fragment reads the
/// same to every tool that may process it.
pub(crate) const RESERVED_KEYS: [&str; 3] = ["__proto__", "constructor", "prototype"];

/// Characters that make two different strings look identical.
pub(crate) const INVISIBLE: [char; 6] = ['\u{00AD}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}'];

/// A malformed fragment, located.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub(crate) struct AckError {
    /// The fragment (repository-relative).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub hint: String,
}

/// One acknowledgement entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Ack {
    /// The fragment (repository-relative).
    pub file: String,
    /// The key: a repository path of a source.
    pub key: String,
    /// Why the drift is intended.
    pub reason: String,
    /// Present at the base already: inert.
    pub spent: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    version: u32,
    paths: UniqueMap,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WireEntry {
    reason: String,
}

/// A JSON object read in order, refusing duplicate keys (serde_json keeps the last silently).
struct UniqueMap(Vec<(String, WireEntry)>);

impl<'de> serde::Deserialize<'de> for UniqueMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UniqueMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of {\"<key>\": {\"reason\": \"...\"}}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UniqueMap, A::Error> {
                let mut seen = BTreeSet::new();
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    out.push((key, map.next_value()?));
                }
                Ok(UniqueMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

fn at(file: &str, text: &str, needle: &str, message: String, hint: &str) -> AckError {
    let (line, col) = msd_core::fs::json::locate(text, needle);
    AckError { file: file.to_string(), line, col, message, hint: hint.to_string() }
}

fn invisible(s: &str) -> Option<char> {
    s.chars().find(|c| INVISIBLE.contains(c))
}

/// Parses one fragment strictly: (key, reason) in file order.
pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<(String, String)>, AckError> {
    const SHAPE: &str = "write {\"version\": 1, \"paths\": {\"<source path>\": {\"reason\": \"why\"}}}";
    let wire: Wire = serde_json::from_str(text).map_err(|e| AckError {
        file: file.to_string(),
        line: e.line().max(1),
        col: e.column().max(1),
        message: format!("invalid acknowledgement file: {e}"),
        hint: SHAPE.into(),
    })?;
    if wire.version != 1 {
        return Err(at(file, text, "\"version\"", format!("unsupported version {}", wire.version), SHAPE));
    }
    if wire.paths.0.is_empty() {
        return Err(at(
            file,
            text,
            "\"paths\"",
            "acknowledges nothing (`paths` is empty)".into(),
            "delete the file, or add the keys it acknowledges",
        ));
    }
    let mut out = Vec::new();
    for (key, entry) in wire.paths.0 {
        let needle = format!("\"{}\"", key.escape_debug());
        if RESERVED_KEYS.contains(&key.as_str()) {
            return Err(at(
                file,
                text,
                &needle,
                format!("reserved key `{key}`"),
                "a key is the repository path of a source, e.g. content/msd-core/workflows/plan-phase.md",
            ));
        }
        if let Some(c) = invisible(&key) {
            return Err(at(
                file,
                text,
                "\"paths\"",
                format!("key `{}` contains the invisible character U+{:04X}", key.escape_unicode(), c as u32),
                "retype the key without invisible characters",
            ));
        }
        if RelPath::new(key.clone()).is_err() {
            return Err(at(
                file,
                text,
                &needle,
                format!("key `{}` is not a repository-relative path", key.escape_debug()),
                "a key is the repository path of a source, e.g. content/agents/msd-planner.md",
            ));
        }
        if let Some(c) = invisible(&entry.reason) {
            return Err(at(
                file,
                text,
                &needle,
                format!("the reason for `{key}` contains the invisible character U+{:04X}", c as u32),
                "retype the reason without invisible characters",
            ));
        }
        if entry.reason.trim().is_empty() {
            return Err(at(
                file,
                text,
                &needle,
                format!("the reason for `{key}` is empty"),
                "say why the change in emitted bytes is intended",
            ));
        }
        out.push((key, entry.reason));
    }
    Ok(out)
}

/// The keys of a fragment as it was at the base, read leniently: a fragment that was malformed
/// there spends nothing (its entries are live now, and parsed strictly).
pub(crate) fn keys_at_base(text: &[u8]) -> BTreeSet<String> {
    let Ok(serde_json::Value::Object(doc)) = serde_json::from_slice::<serde_json::Value>(text) else {
        return BTreeSet::new();
    };
    match doc.get("paths") {
        Some(serde_json::Value::Object(paths)) => paths.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

/// Every entry of the fragments now (`file` -> text), each marked spent when its file had its
/// key at the base (`base`: file -> bytes).
pub(crate) fn load(now: &BTreeMap<String, String>, base: &BTreeMap<String, Vec<u8>>) -> Result<Vec<Ack>, AckError> {
    if now.len() > MAX_FRAGMENTS {
        return Err(AckError {
            file: ACK_DIR.into(),
            line: 1,
            col: 1,
            message: format!("{} acknowledgement files, more than {MAX_FRAGMENTS}", now.len()),
            hint: "delete fragments that are spent (present at the base of every open change)".into(),
        });
    }
    let mut out = Vec::new();
    for (file, text) in now {
        let spent_keys = base.get(file).map(|b| keys_at_base(b)).unwrap_or_default();
        for (key, reason) in parse(file, text)? {
            let spent = spent_keys.contains(&key);
            out.push(Ack { file: file.clone(), key, reason, spent });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: &str = "tests/emitted-drift-acks/a.json";

    fn err(text: &str) -> AckError {
        parse(F, text).expect_err("must be rejected")
    }

    #[test]
    fn attribution_acks_parse_a_valid_fragment() {
        let text = r#"{"version": 1, "paths": {"content/agents/msd-planner.md": {"reason": "adds a step"}}}"#;
        assert_eq!(parse(F, text).unwrap(), vec![("content/agents/msd-planner.md".into(), "adds a step".into())]);
    }

    #[test]
    fn attribution_acks_reject_malformed_fragments() {
        let cases: &[(&str, &str)] = &[
            (r#"{"version": 2, "paths": {"a.md": {"reason": "r"}}}"#, "unsupported version 2"),
            (r#"{"version": 1, "paths": {"a.md": {"reason": "r"}}, "extra": 1}"#, "unknown field `extra`"),
            (r#"{"version": 1, "paths": {"a.md": {"reason": "r", "why": 1}}}"#, "unknown field `why`"),
            (r#"{"version": 1, "paths": {"a.md": {"reason": "r"}, "a.md": {"reason": "s"}}}"#, "duplicate key `a.md`"),
            (r#"{"version": 1, "paths": {}}"#, "acknowledges nothing"),
            (r#"{"version": 1, "paths": {"__proto__": {"reason": "r"}}}"#, "reserved key `__proto__`"),
            (r#"{"version": 1, "paths": {"constructor": {"reason": "r"}}}"#, "reserved key `constructor`"),
            (r#"{"version": 1, "paths": {"prototype": {"reason": "r"}}}"#, "reserved key `prototype`"),
            (r#"{"version": 1, "paths": {"a.md": {"reason": "  "}}}"#, "is empty"),
            (r#"{"version": 1, "paths": {"../a.md": {"reason": "r"}}}"#, "not a repository-relative path"),
            (r#"{"version": 1, "paths": {"/etc/a.md": {"reason": "r"}}}"#, "not a repository-relative path"),
            (r#"{"version": 1}"#, "missing field `paths`"),
            ("not json", "invalid acknowledgement file"),
        ];
        for (text, want) in cases {
            let e = err(text);
            assert!(e.message.contains(want), "{text}: {}", e.message);
            assert_eq!(e.file, F);
        }
    }

    #[test]
    fn attribution_acks_reject_every_invisible_character() {
        for c in INVISIBLE {
            let key = format!(r#"{{"version": 1, "paths": {{"a{c}.md": {{"reason": "r"}}}}}}"#);
            assert!(err(&key).message.contains("invisible"), "key with U+{:04X}", c as u32);
            let reason = format!(r#"{{"version": 1, "paths": {{"a.md": {{"reason": "r{c}"}}}}}}"#);
            assert!(err(&reason).message.contains("invisible"), "reason with U+{:04X}", c as u32);
            let escaped = format!(r#"{{"version": 1, "paths": {{"a\u{:04x}.md": {{"reason": "r"}}}}}}"#, c as u32);
            assert!(err(&escaped).message.contains("invisible"), "escaped U+{:04X}", c as u32);
        }
    }

    #[test]
    fn attribution_acks_errors_point_at_the_line() {
        let text = "{\n  \"version\": 1,\n  \"paths\": {\n    \"__proto__\": {\"reason\": \"r\"}\n  }\n}\n";
        let e = err(text);
        assert_eq!((e.line, e.col), (4, 5), "{e}");
        let e = err("{\n  \"version\": 1,\n  \"paths\": {\"a.md\": {\"reason\": 3}}\n}\n");
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn attribution_acks_present_at_the_base_are_spent() {
        let mut now = BTreeMap::new();
        now.insert(
            F.to_string(),
            r#"{"version": 1, "paths": {"a.md": {"reason": "old"}, "b.md": {"reason": "new"}}}"#.to_string(),
        );
        let mut base = BTreeMap::new();
        base.insert(F.to_string(), br#"{"version": 1, "paths": {"a.md": {"reason": "old"}}}"#.to_vec());
        base.insert("tests/emitted-drift-acks/other.json".to_string(), br#"{"paths": {"b.md": {}}}"#.to_vec());
        let acks = load(&now, &base).unwrap();
        let spent: Vec<(&str, bool)> = acks.iter().map(|a| (a.key.as_str(), a.spent)).collect();
        // b.md was at the base only in another file: this entry is new.
        assert_eq!(spent, [("a.md", true), ("b.md", false)]);
        assert!(keys_at_base(b"{broken").is_empty());
    }

    #[test]
    fn attribution_acks_limit_the_number_of_fragments() {
        let now: BTreeMap<String, String> = (0..=MAX_FRAGMENTS)
            .map(|i| (format!("{ACK_DIR}/{i}.json"), r#"{"version": 1, "paths": {"a.md": {"reason": "r"}}}"#.into()))
            .collect();
        assert!(load(&now, &BTreeMap::new()).unwrap_err().message.contains("more than 500"));
        let fewer: BTreeMap<String, String> = now.into_iter().take(MAX_FRAGMENTS).collect();
        assert_eq!(load(&fewer, &BTreeMap::new()).unwrap().len(), MAX_FRAGMENTS);
    }
}
