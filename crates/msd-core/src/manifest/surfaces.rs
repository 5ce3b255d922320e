//! The `settings` list of a manifest: which settings files of a runtime msd-install edits, in
//! which format, and the entries it owns there (each with an owner id). Wire types and their
//! validation only; editing the files is the installer's `apply::surfaces`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fs::relpath::RelPath;
use crate::manifest::Scope;

/// One settings surface of a runtime.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SurfaceSpec {
    /// The file, relative to the scope's home.
    pub file: RelPath,
    /// Scopes that get it (default both).
    #[serde(default = "both_scopes")]
    pub scopes: Vec<Scope>,
    /// How the file is edited.
    pub format: SurfaceFormat,
    /// Our entries, each with an owner id unique within the file.
    pub entries: Vec<EntrySpec>,
}

fn both_scopes() -> Vec<Scope> {
    vec![Scope::Global, Scope::Local]
}

/// File formats of settings surfaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SurfaceFormat {
    /// JSON with comments (JSONC); comments and formatting are kept.
    #[default]
    Json,
    /// TOML; comments and formatting are kept.
    Toml,
    /// A text file (Markdown instructions) holding marked blocks.
    Markdown,
}

/// One entry we own in a surface, by kind (`"kind"` in the manifest).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EntrySpec {
    /// One item of an array (a hook group, a permission rule), in a JSON or TOML surface.
    ArrayItem {
        /// Owner id, unique within the file (`hook:session-start`).
        id: String,
        /// Key path to the array.
        at: Vec<String>,
        /// The item. Strings may hold `{{home}}`, `{{core}}` (absolute paths), `{{core_ref}}`
        /// (the core path as content references it), and for command strings `{{helper_sh}}`
        /// and `{{helper_ref_sh}}` (`<core>/bin/msd_run` and `<core_ref>bin/msd_run`, quoted for
        /// POSIX sh by `msd_core::shell`). A `command` string may not hold a raw path.
        value: Value,
    },
    /// One key's value, set only when the user has not set it, in a JSON or TOML surface.
    Key {
        /// Owner id, unique within the file.
        id: String,
        /// Key path to the key.
        at: Vec<String>,
        /// The value, placeholders as for `array-item`.
        value: Value,
    },
    /// A block between `<!-- msd-install:begin ID -->` and `<!-- msd-install:end ID -->` lines
    /// of a Markdown surface.
    Block {
        /// Owner id, unique within the file.
        id: String,
        /// The block's text, placeholders as for `array-item`.
        text: String,
    },
}

impl EntrySpec {
    /// The owner id.
    pub fn id(&self) -> &str {
        match self {
            EntrySpec::ArrayItem { id, .. } | EntrySpec::Key { id, .. } | EntrySpec::Block { id, .. } => id,
        }
    }

    /// The kind.
    pub fn kind(&self) -> EntryKind {
        match self {
            EntrySpec::ArrayItem { .. } => EntryKind::ArrayItem,
            EntrySpec::Key { .. } => EntryKind::Key,
            EntrySpec::Block { .. } => EntryKind::Block,
        }
    }
}

/// Entry kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// One item of an array (a hook group, a permission rule).
    ArrayItem,
    /// One key's value, set only when the user has not set it.
    Key,
    /// A block between `<!-- msd-install:begin ID -->` and `<!-- msd-install:end ID -->` lines.
    Block,
}

const PLACEHOLDERS: [&str; 5] = ["{{home}}", "{{core}}", "{{core_ref}}", "{{helper_sh}}", "{{helper_ref_sh}}"];

/// Placeholders that expand to a raw (unquoted) path.
const RAW_PATHS: [&str; 3] = ["{{home}}", "{{core}}", "{{core_ref}}"];

/// The first `command` string of `v` that holds a raw path placeholder.
fn raw_command(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => o.iter().find_map(|(k, x)| match x {
            Value::String(s) if k == "command" && RAW_PATHS.iter().any(|p| s.contains(p)) => Some(s.as_str()),
            _ => raw_command(x),
        }),
        Value::Array(a) => a.iter().find_map(raw_command),
        _ => None,
    }
}

/// Checks a surface list of a manifest; the message says what is wrong, the caller locates it.
pub fn validate(specs: &[SurfaceSpec]) -> Result<(), String> {
    let mut files = std::collections::BTreeSet::new();
    for s in specs {
        if s.scopes.is_empty() {
            return Err(format!("settings surface `{}` has no scopes", s.file));
        }
        for scope in &s.scopes {
            if !files.insert((s.file.clone(), *scope)) {
                return Err(format!("settings surface `{}` is listed twice for the {} scope", s.file, scope.as_str()));
            }
        }
        if s.entries.is_empty() {
            return Err(format!("settings surface `{}` has no entries", s.file));
        }
        let mut ids = std::collections::BTreeSet::new();
        for e in &s.entries {
            let id = e.id();
            if id.trim().is_empty() || !ids.insert(id) {
                return Err(format!("settings surface `{}`: entry id `{id}` is empty or repeated", s.file));
            }
            let ok = match (s.format, e) {
                (SurfaceFormat::Markdown, EntrySpec::Block { .. }) => true,
                (
                    SurfaceFormat::Json | SurfaceFormat::Toml,
                    EntrySpec::ArrayItem { at, .. } | EntrySpec::Key { at, .. },
                ) => !at.is_empty(),
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "settings surface `{}`: entry `{id}` does not fit its format (json and toml take `array-item` and `key` with a non-empty `at` and a `value`; markdown takes `block` with `text`)",
                    s.file
                ));
            }
            let mut strings = Vec::new();
            match e {
                EntrySpec::ArrayItem { value, .. } | EntrySpec::Key { value, .. } => {
                    if s.format == SurfaceFormat::Toml && has_null(value) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` holds null, which TOML cannot",
                            s.file
                        ));
                    }
                    if let Some(cmd) = raw_command(value) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` puts an unquoted path into the shell command `{cmd}`; use {{{{helper_sh}}}} (quoted for sh)",
                            s.file
                        ));
                    }
                    collect_strings(value, &mut strings);
                }
                EntrySpec::Block { text, .. } => {
                    strings.push(text.as_str());
                    if text.contains("<!-- msd-install:") {
                        return Err(format!("settings surface `{}`: block `{id}` contains a block marker", s.file));
                    }
                }
            }
            for text in strings {
                let mut rest = text;
                while let Some(i) = rest.find("{{") {
                    let tail = &rest[i..];
                    if !PLACEHOLDERS.iter().any(|p| tail.starts_with(p)) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` has an unknown placeholder in `{text}` (known: {})",
                            s.file,
                            PLACEHOLDERS.join(", ")
                        ));
                    }
                    rest = &tail[2..];
                }
            }
        }
    }
    Ok(())
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// The surfaces of `specs` that apply to `scope`.
pub fn for_scope(specs: &[SurfaceSpec], scope: Scope) -> impl Iterator<Item = &SurfaceSpec> {
    specs.iter().filter(move |s| s.scopes.contains(&scope))
}
