//! Task-content resolvers (ADR-3646, SPEC section 11): how a capability manifest declares "an
//! external tracker owns the content of tasks whose `tracker-id` has this prefix", how the
//! declaration is validated at install time, and the file that carries it to the installed
//! msd_run.
//!
//! Declaration, in `runtimes/<id>/capability.json`:
//! `"resolvers": [{"kind": "resolver", "tracker_prefix": "LIN", "invoke": {"binary": "linear-task",
//! "args": ["show", "{{id}}", "--json"], "timeout_ms": 10000}}]`. A task
//! `tracker-id="LIN:ENG-142"` is resolved by running `binary` with `args`, `{{id}}` replaced by
//! `ENG-142` (the part after the first `:`), in the project directory.
//!
//! Validation (install time, before anything is written): the prefix is
//! `[A-Za-z0-9][A-Za-z0-9_-]*`; `binary` is non-empty; `args` contain `{{id}}` (a resolver that
//! never receives the id is not wired) and no other `{{...}}` placeholder; `0 < timeout_ms <=`
//! [`MAX_TIMEOUT_MS`]; and no two resolvers of the whole manifest set share a prefix, compared
//! case-insensitively (`LIN` and `lin` would be one tracker to a reader).
//!
//! The installer writes the runtime's resolvers to `<core>/resolvers.json` ([`Installed`]) on
//! every install, with an empty list when there are none, so the installed msd_run can tell "no
//! resolver registered" from "the install is damaged".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::manifest::ManifestError;

/// The longest timeout a resolver may declare (ten minutes).
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The placeholder replaced by the task's tracker id.
pub const ID_PLACEHOLDER: &str = "{{id}}";

/// Where the installed resolvers live, relative to the core dir.
pub const INSTALLED_PATH: &str = "resolvers.json";

/// One task-content resolver.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolver {
    /// Always `resolver`.
    pub kind: ResolverKind,
    /// Tasks whose `tracker-id` starts with this prefix and a `:` are resolved here.
    pub tracker_prefix: String,
    /// The command that fetches one task's content.
    pub invoke: Invoke,
}

/// The dispatch kind of a resolver entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResolverKind {
    /// A required subprocess whose exit code binds (ADR-3646 decision 2).
    Resolver,
}

/// How a resolver is run.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Invoke {
    /// The program: a name looked up on PATH, an absolute path, or `~/...`.
    pub binary: String,
    /// Its arguments; `{{id}}` is replaced by the tracker id and must occur at least once.
    pub args: Vec<String>,
    /// Milliseconds before the resolver is killed and the task halts.
    pub timeout_ms: u64,
}

/// `<core>/resolvers.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Installed {
    /// Format version.
    pub schema_version: u32,
    /// The runtime the install is for.
    pub runtime: String,
    /// Its resolvers.
    pub resolvers: Vec<Resolver>,
}

impl Installed {
    /// The installed form: pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("resolvers serialize");
        s.push('\n');
        s
    }

    /// The resolver registered for `prefix`, matched exactly.
    pub fn find(&self, prefix: &str) -> Option<&Resolver> {
        self.resolvers.iter().find(|r| r.tracker_prefix == prefix)
    }
}

fn is_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// The `{{...}}` placeholders of `s`, in order.
fn placeholders(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i..];
        match after.find("}}") {
            Some(j) => {
                out.push(&after[..j + 2]);
                rest = &after[j + 2..];
            }
            None => {
                out.push(after);
                break;
            }
        }
    }
    out
}

/// Checks the resolvers of one manifest. `text` is the manifest source, for locations.
pub fn validate(file: &str, text: &str, resolvers: &[Resolver]) -> Result<(), ManifestError> {
    use crate::fs::json::{Seg, locate_path};
    let err = |path: &[Seg<'_>], message: String, hint: &str| {
        let (line, col) = locate_path(text, path);
        ManifestError { file: file.to_string(), line, col, message, hint: hint.to_string() }
    };
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for (i, r) in resolvers.iter().enumerate() {
        let key = |k: &'static str| [Seg::Key("resolvers"), Seg::Index(i), Seg::Key(k)];
        let invoke = |k: &'static str| [Seg::Key("resolvers"), Seg::Index(i), Seg::Key("invoke"), Seg::Key(k)];
        if !is_prefix(&r.tracker_prefix) {
            return Err(err(
                &key("tracker_prefix"),
                format!("invalid resolver tracker_prefix `{}`", r.tracker_prefix),
                "use letters, digits, `-` and `_`, starting with a letter or digit (no `:`)",
            ));
        }
        if let Some(prev) = seen.insert(r.tracker_prefix.to_ascii_lowercase(), &r.tracker_prefix) {
            return Err(err(
                &key("tracker_prefix"),
                format!("resolver tracker_prefix `{}` collides with `{prev}` in the same manifest", r.tracker_prefix),
                "declare one resolver per tracker prefix",
            ));
        }
        if r.invoke.binary.trim().is_empty() || r.invoke.binary.contains('\0') {
            return Err(err(
                &invoke("binary"),
                format!("resolver `{}` has no binary", r.tracker_prefix),
                "name the program that fetches a task: `\"binary\": \"linear-task\"`",
            ));
        }
        if !r.invoke.args.iter().any(|a| a.contains(ID_PLACEHOLDER)) {
            return Err(err(
                &invoke("args"),
                format!(
                    "resolver `{}` never passes the task id: no argument contains {ID_PLACEHOLDER}",
                    r.tracker_prefix
                ),
                "add {{id}} to `invoke.args` where the tracker id goes, e.g. [\"show\", \"{{id}}\"]",
            ));
        }
        if let Some(bad) = std::iter::once(&r.invoke.binary)
            .chain(&r.invoke.args)
            .flat_map(|a| placeholders(a))
            .find(|p| *p != ID_PLACEHOLDER)
        {
            return Err(err(
                &invoke("args"),
                format!("resolver `{}` uses the unknown placeholder `{bad}`", r.tracker_prefix),
                "the only placeholder is {{id}}",
            ));
        }
        if r.invoke.timeout_ms == 0 || r.invoke.timeout_ms > MAX_TIMEOUT_MS {
            return Err(err(
                &invoke("timeout_ms"),
                format!(
                    "resolver `{}` has timeout_ms {}; it must be between 1 and {MAX_TIMEOUT_MS}",
                    r.tracker_prefix, r.invoke.timeout_ms
                ),
                "a resolver that never times out can hang a plan; give it a bound",
            ));
        }
    }
    Ok(())
}

/// Checks resolvers across the manifest set: a tracker prefix belongs to one manifest.
pub fn validate_set<'a>(manifests: impl IntoIterator<Item = (&'a str, &'a [Resolver])>) -> Result<(), ManifestError> {
    let mut seen: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    for (file, resolvers) in manifests {
        for r in resolvers {
            if let Some((prev_file, prev)) =
                seen.insert(r.tracker_prefix.to_ascii_lowercase(), (file, &r.tracker_prefix))
            {
                return Err(ManifestError {
                    file: file.to_string(),
                    line: 0,
                    col: 0,
                    message: format!(
                        "resolver tracker_prefix `{}` collides with `{prev}` declared in {prev_file}",
                        r.tracker_prefix
                    ),
                    hint: "a tracker prefix belongs to one resolver across all runtime manifests; rename one".into(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(prefix: &str, binary: &str, args: &[&str], timeout_ms: u64) -> Resolver {
        Resolver {
            kind: ResolverKind::Resolver,
            tracker_prefix: prefix.into(),
            invoke: Invoke { binary: binary.into(), args: args.iter().map(|a| a.to_string()).collect(), timeout_ms },
        }
    }

    #[test]
    fn resolver_validation_rejects_each_defect() {
        let ok = r("LIN", "linear", &["show", "{{id}}"], 1000);
        validate("m", "", std::slice::from_ref(&ok)).unwrap();
        let cases = [
            (r("", "x", &["{{id}}"], 1), "invalid resolver tracker_prefix"),
            (r("LIN:X", "x", &["{{id}}"], 1), "invalid resolver tracker_prefix"),
            (r("-x", "x", &["{{id}}"], 1), "invalid resolver tracker_prefix"),
            (r("LIN", " ", &["{{id}}"], 1), "has no binary"),
            (r("LIN", "x", &["show", "id"], 1), "never passes the task id"),
            (r("LIN", "x", &[], 1), "never passes the task id"),
            (r("LIN", "x", &["{{id}}", "{{ID}}"], 1), "unknown placeholder `{{ID}}`"),
            (r("LIN", "x", &["{{id}}", "{{id"], 1), "unknown placeholder `{{id`"),
            (r("LIN", "x", &["{{id}}"], 0), "timeout_ms 0"),
            (r("LIN", "x", &["{{id}}"], MAX_TIMEOUT_MS + 1), "must be between"),
        ];
        for (bad, needle) in cases {
            let e = validate("m", "", &[bad]).unwrap_err();
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
        let e = validate("m", "", &[ok.clone(), r("lin", "y", &["{{id}}"], 5)]).unwrap_err();
        assert!(e.message.contains("collides"), "{}", e.message);
    }

    #[test]
    fn resolver_prefixes_are_unique_across_manifests() {
        let a = [r("LIN", "x", &["{{id}}"], 1)];
        let b = [r("JIRA", "x", &["{{id}}"], 1)];
        let c = [r("Lin", "x", &["{{id}}"], 1)];
        validate_set([("a", &a[..]), ("b", &b[..])]).unwrap();
        let e = validate_set([("a", &a[..]), ("b", &b[..]), ("c", &c[..])]).unwrap_err();
        assert_eq!(e.file, "c");
        assert!(e.message.contains("declared in a"), "{}", e.message);
    }
}
