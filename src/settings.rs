//! Settings and config surfaces: the files a runtime reads its hooks, permissions and options
//! from (Claude `settings.json`, Codex `config.toml` and `hooks.json`, instruction files with a
//! marked block). They belong to the user; msd-install adds its entries and nothing else.
//!
//! Input: a manifest's `settings` list ([`SurfaceSpec`]: file, format, entries, each entry with
//! an owner id), the target (for the `{{core}}` / `{{home}}` / `{{core_ref}}` placeholders), the
//! file's current text and the [`SurfaceLedger`] of what we own there. Output: the new text (or
//! the file's removal) and the new ledger.
//!
//! Rules:
//! - the file is parsed keeping everything (JSONC comments and formatting through
//!   `jsonc-parser`'s CST, TOML through `toml_edit`, text outside our markers as is); a file
//!   that does not parse is an error and is left untouched;
//! - an entry is upserted by its owner id: the item we wrote last time (the ledger) is replaced
//!   in place, an item equal to ours that the user already had is left alone and not claimed, so
//!   a reinstall never duplicates and an uninstall never removes a user's item;
//! - containers we had to create are recorded and removed again when they are empty, and a file
//!   we created is removed when nothing but an empty object is left: uninstall leaves the file
//!   byte-identical to what the user had;
//! - a key the user set to another value keeps the user's value (noted in the report).

use std::collections::BTreeMap;

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstNode, CstObject, CstRootNode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capability::Scope;
use crate::relpath::RelPath;
use crate::state::{LedgerEntry, SurfaceLedger};
use crate::target::Target;

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

/// One entry we own in a surface.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    /// Owner id, unique within the file (`hook:session-start`).
    pub id: String,
    /// What the entry is.
    pub kind: EntryKind,
    /// Key path: to the array (`array-item`) or to the key (`key`). Unused for `block`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<String>,
    /// The item or value (`array-item`, `key`). Strings may hold `{{home}}`, `{{core}}`
    /// (absolute paths) and `{{core_ref}}` (the core path as content references it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The block's text (`block`), placeholders as for `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
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

const PLACEHOLDERS: [&str; 3] = ["{{home}}", "{{core}}", "{{core_ref}}"];

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
            if e.id.trim().is_empty() || !ids.insert(e.id.as_str()) {
                return Err(format!("settings surface `{}`: entry id `{}` is empty or repeated", s.file, e.id));
            }
            let ok = match (s.format, e.kind) {
                (SurfaceFormat::Markdown, EntryKind::Block) => e.text.is_some() && e.value.is_none() && e.at.is_empty(),
                (SurfaceFormat::Json | SurfaceFormat::Toml, EntryKind::ArrayItem | EntryKind::Key) => {
                    e.value.is_some() && e.text.is_none() && !e.at.is_empty()
                }
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "settings surface `{}`: entry `{}` does not fit its format (json and toml take `array-item` and `key` with `at` and `value`; markdown takes `block` with `text`)",
                    s.file, e.id
                ));
            }
            if s.format == SurfaceFormat::Toml && e.value.as_ref().is_some_and(has_null) {
                return Err(format!("settings surface `{}`: entry `{}` holds null, which TOML cannot", s.file, e.id));
            }
            let mut strings = Vec::new();
            if let Some(v) = &e.value {
                collect_strings(v, &mut strings);
            }
            if let Some(t) = &e.text {
                strings.push(t.as_str());
                if t.contains("<!-- msd-install:") {
                    return Err(format!("settings surface `{}`: block `{}` contains a block marker", s.file, e.id));
                }
            }
            for text in strings {
                let mut rest = text;
                while let Some(i) = rest.find("{{") {
                    let tail = &rest[i..];
                    if !PLACEHOLDERS.iter().any(|p| tail.starts_with(p)) {
                        return Err(format!(
                            "settings surface `{}`: entry `{}` has an unknown placeholder in `{text}` (known: {})",
                            s.file,
                            e.id,
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

/// The placeholder values of one target.
#[derive(Debug, Clone)]
pub struct Vars {
    home: String,
    core: String,
    core_ref: String,
}

impl Vars {
    /// The values for `target`, whose core dir is `core_dir`.
    pub fn new(target: &Target, core_dir: &RelPath) -> Vars {
        let home = target.home.display().to_string();
        Vars { core: format!("{home}/{core_dir}"), home, core_ref: target.core_ref.clone() }
    }

    fn expand(&self, s: &str) -> String {
        s.replace("{{home}}", &self.home).replace("{{core_ref}}", &self.core_ref).replace("{{core}}", &self.core)
    }

    fn expand_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.expand(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.expand_value(x)).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), self.expand_value(x))).collect()),
            other => other.clone(),
        }
    }
}

/// A settings file that cannot be edited.
#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SettingsError {
    /// The file.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The outcome of editing one surface.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    /// The new text; `None` when the file is to be removed.
    pub text: Option<String>,
    /// The new ledger.
    pub ledger: SurfaceLedger,
    /// Entry ids added.
    pub added: Vec<String>,
    /// Entry ids whose value changed.
    pub updated: Vec<String>,
    /// Entry ids removed.
    pub removed: Vec<String>,
    /// Things the user should know (their value kept over ours, ...).
    pub notes: Vec<String>,
}

/// The entries of `spec` rendered for a target: id -> (kind, key path, value or block text).
fn rendered(spec: &SurfaceSpec, vars: &Vars) -> Vec<(String, EntryKind, Vec<String>, Value)> {
    spec.entries
        .iter()
        .map(|e| {
            let v = match (&e.value, &e.text) {
                (Some(v), _) => vars.expand_value(v),
                (None, Some(t)) => Value::String(vars.expand(t)),
                (None, None) => Value::Null,
            };
            (e.id.clone(), e.kind, e.at.clone(), v)
        })
        .collect()
}

/// Upserts the entries of `spec` into `current` (the file's text, `None` when absent).
/// `display` names the file in errors. `adopt` claims items equal to ours that the ledger does
/// not know: set when a previous install exists but its ledger is lost (an older layout, a
/// damaged state), so that its entries are not orphaned (and left dangling by uninstall).
pub fn upsert(
    spec: &SurfaceSpec,
    vars: &Vars,
    display: &str,
    current: Option<&str>,
    ledger: &SurfaceLedger,
    adopt: bool,
) -> Result<Edit, SettingsError> {
    let want = rendered(spec, vars);
    match spec.format {
        SurfaceFormat::Json => {
            let mut doc = JsonDoc::parse(display, current)?;
            merge(&mut doc, display, current.is_none(), &want, ledger, adopt)
        }
        SurfaceFormat::Toml => {
            let mut doc = TomlDoc::parse(display, current)?;
            merge(&mut doc, display, current.is_none(), &want, ledger, adopt)
        }
        SurfaceFormat::Markdown => blocks(display, current, &want, ledger),
    }
}

/// Removes every entry we own from `current` (uninstall).
pub fn remove(
    format: SurfaceFormat,
    display: &str,
    current: Option<&str>,
    ledger: &SurfaceLedger,
) -> Result<Edit, SettingsError> {
    match format {
        SurfaceFormat::Json => {
            let mut doc = JsonDoc::parse(display, current)?;
            merge(&mut doc, display, false, &[], ledger, false)
        }
        SurfaceFormat::Toml => {
            let mut doc = TomlDoc::parse(display, current)?;
            merge(&mut doc, display, false, &[], ledger, false)
        }
        SurfaceFormat::Markdown => blocks(display, current, &[], ledger),
    }
}

/// A structured document edited in place. Paths are key paths from the top-level table.
trait Doc {
    /// The value at `path` (converted to JSON for comparison), `None` when absent.
    fn get(&self, path: &[String]) -> Option<Value>;
    /// Makes `path` an existing table/object (creating missing ones); returns the paths it
    /// created. Errors when something in the way is not a table.
    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String>;
    /// Items of the array at `path` (empty when absent).
    fn items(&self, path: &[String]) -> Result<Vec<Value>, String>;
    /// Appends `v` to the array at `path`, creating the array; returns whether it created it.
    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String>;
    /// Replaces item `i` of the array at `path`.
    fn replace(&mut self, path: &[String], i: usize, v: &Value);
    /// Removes item `i` of the array at `path`.
    fn remove_item(&mut self, path: &[String], i: usize);
    /// Sets the key at `path` (its parent exists).
    fn set(&mut self, path: &[String], v: &Value);
    /// Removes the key at `path`.
    fn remove_key(&mut self, path: &[String]);
    /// Whether the container at `path` exists and is empty.
    fn is_empty_container(&self, path: &[String]) -> bool;
    /// Whether the whole document is an empty table/object without comments.
    fn is_blank(&self) -> bool;
    /// The text.
    fn render(&self) -> String;
}

fn at(path: &[String]) -> String {
    path.join(".")
}

fn merge(
    doc: &mut dyn Doc,
    display: &str,
    file_absent: bool,
    want: &[(String, EntryKind, Vec<String>, Value)],
    prev: &SurfaceLedger,
    adopt: bool,
) -> Result<Edit, SettingsError> {
    let err = |message: String| SettingsError { path: display.to_string(), line: None, message };
    let before = doc.render();
    let mut edit = Edit::default();
    let mut ledger = SurfaceLedger {
        format: prev.format,
        created_file: prev.created_file || file_absent,
        containers: prev.containers.clone(),
        entries: BTreeMap::new(),
    };
    fn note(ledger: &mut SurfaceLedger, created: Vec<Vec<String>>) {
        for c in created {
            if !ledger.containers.contains(&c) {
                ledger.containers.push(c);
            }
        }
    }
    let own = |kind: EntryKind, path: &[String], value: &Value| LedgerEntry {
        kind,
        at: path.to_vec(),
        value: value.clone(),
        separator: None,
    };
    for (id, kind, path, value) in want {
        // What we wrote last time, if it was at the same place.
        let ours_before = prev.entries.get(id).filter(|e| e.kind == *kind && &e.at == path).map(|e| &e.value);
        match kind {
            EntryKind::ArrayItem => {
                let created = doc.ensure_table(&path[..path.len() - 1]).map_err(err)?;
                note(&mut ledger, created);
                let items = doc.items(path).map_err(err)?;
                let has_new = items.iter().position(|x| x == value);
                let has_old = ours_before.and_then(|o| items.iter().position(|x| x == o));
                match (has_new, has_old) {
                    (Some(_), Some(_)) if ours_before == Some(value) => {
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                    }
                    (Some(_), Some(old)) => {
                        // The user already has the new item; ours is the stale one.
                        doc.remove_item(path, old);
                        edit.removed.push(id.clone());
                    }
                    (Some(_), None) if adopt => {
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                    }
                    (Some(_), None) => {
                        edit.notes.push(format!("{}: you already have msd's `{id}` entry; it stays yours", at(path)));
                    }
                    (None, Some(old)) => {
                        doc.replace(path, old, value);
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                        edit.updated.push(id.clone());
                    }
                    (None, None) => {
                        if doc.push(path, value).map_err(err)? {
                            note(&mut ledger, vec![path.clone()]);
                        }
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                        edit.added.push(id.clone());
                    }
                }
            }
            EntryKind::Key => {
                let created = doc.ensure_table(&path[..path.len() - 1]).map_err(err)?;
                note(&mut ledger, created);
                match doc.get(path) {
                    None => {
                        doc.set(path, value);
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                        edit.added.push(id.clone());
                    }
                    Some(cur) if &cur == value => {
                        if ours_before.is_some() || adopt {
                            ledger.entries.insert(id.clone(), own(*kind, path, value));
                        }
                    }
                    Some(cur) if Some(&cur) == ours_before => {
                        doc.set(path, value);
                        ledger.entries.insert(id.clone(), own(*kind, path, value));
                        edit.updated.push(id.clone());
                    }
                    Some(cur) => {
                        edit.notes.push(format!("{}: kept your value {cur} (msd would set {value})", at(path)))
                    }
                }
            }
            EntryKind::Block => unreachable!("validated: blocks live in markdown surfaces"),
        }
    }
    // Entries we own that are no longer wanted (an older version's, moved ones, or uninstall).
    for (id, old) in &prev.entries {
        if ledger.entries.get(id).is_some_and(|e| e.at == old.at) {
            continue;
        }
        match old.kind {
            EntryKind::ArrayItem => {
                if let Ok(items) = doc.items(&old.at)
                    && let Some(i) = items.iter().position(|x| x == &old.value)
                {
                    doc.remove_item(&old.at, i);
                    edit.removed.push(id.clone());
                }
            }
            EntryKind::Key => {
                if doc.get(&old.at).as_ref() == Some(&old.value) {
                    doc.remove_key(&old.at);
                    edit.removed.push(id.clone());
                }
            }
            EntryKind::Block => {}
        }
    }
    // Containers we created that are empty now go, deepest first.
    let mut containers = ledger.containers.clone();
    containers.sort_by_key(|c| std::cmp::Reverse(c.len()));
    for c in containers {
        let needed = ledger.entries.values().any(|e| e.at.starts_with(&c));
        if doc.get(&c).is_none() {
            ledger.containers.retain(|x| x != &c);
        } else if doc.is_empty_container(&c) && !needed {
            doc.remove_key(&c);
            ledger.containers.retain(|x| x != &c);
        }
    }
    let text = doc.render();
    edit.text = if ledger.created_file && ledger.entries.is_empty() && doc.is_blank() {
        None
    } else if text == before && !file_absent {
        Some(before)
    } else {
        Some(text)
    };
    if ledger.entries.is_empty() && ledger.containers.is_empty() {
        ledger.created_file = false;
    }
    edit.ledger = ledger;
    Ok(edit)
}

// ---------------------------------------------------------------------------------------------
// JSONC through the jsonc-parser CST.

struct JsonDoc {
    root: CstRootNode,
}

impl JsonDoc {
    fn parse(display: &str, text: Option<&str>) -> Result<JsonDoc, SettingsError> {
        let text = text.unwrap_or("");
        let src = if text.trim().is_empty() { "{}\n" } else { text };
        let root = CstRootNode::parse(src, &ParseOptions::default()).map_err(|e| SettingsError {
            path: display.to_string(),
            line: Some(src[..e.range().start.min(src.len())].matches('\n').count() + 1),
            message: format!("not valid JSON ({})", e.kind()),
        })?;
        if root.object_value().is_none() {
            return Err(SettingsError {
                path: display.to_string(),
                line: Some(1),
                message: "the top level is not an object".into(),
            });
        }
        Ok(JsonDoc { root })
    }

    fn object(&self, path: &[String]) -> Option<CstObject> {
        let mut obj = self.root.object_value()?;
        for k in path {
            obj = obj.object_value(k)?;
        }
        Some(obj)
    }

    fn array(&self, path: &[String]) -> Option<CstArray> {
        let (last, parent) = path.split_last()?;
        self.object(parent)?.array_value(last)
    }
}

fn to_input(v: &Value) -> jsonc_parser::cst::CstInputValue {
    use jsonc_parser::cst::CstInputValue as I;
    match v {
        Value::Null => I::Null,
        Value::Bool(b) => I::Bool(*b),
        Value::Number(n) => I::Number(n.to_string()),
        Value::String(s) => I::String(s.clone()),
        Value::Array(a) => I::Array(a.iter().map(to_input).collect()),
        Value::Object(o) => I::Object(o.iter().map(|(k, v)| (k.clone(), to_input(v))).collect()),
    }
}

impl Doc for JsonDoc {
    fn get(&self, path: &[String]) -> Option<Value> {
        let (last, parent) = path.split_last()?;
        self.object(parent)?.get(last)?.value()?.to_serde_value()
    }

    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String> {
        let mut created = Vec::new();
        let mut obj = self.root.object_value().ok_or("the top level is not an object")?;
        for (i, k) in path.iter().enumerate() {
            obj = match obj.get(k) {
                Some(prop) => prop
                    .value()
                    .and_then(|v| v.as_object())
                    .ok_or_else(|| format!("`{}` is not an object", at(&path[..=i])))?,
                None => {
                    created.push(path[..=i].to_vec());
                    obj.append(k, to_input(&Value::Object(Default::default())));
                    obj.object_value(k).expect("just added")
                }
            };
        }
        Ok(created)
    }

    fn items(&self, path: &[String]) -> Result<Vec<Value>, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let Some(obj) = self.object(parent) else { return Ok(Vec::new()) };
        match obj.get(last).and_then(|p| p.value()) {
            None => Ok(Vec::new()),
            Some(CstNode::Container(c)) if c.is_array() => {
                let arr = obj.array_value(last).expect("is an array");
                Ok(arr.elements().iter().filter_map(|e| e.to_serde_value()).collect())
            }
            Some(_) => Err(format!("`{}` is not an array", at(path))),
        }
    }

    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let obj = self.object(parent).ok_or_else(|| format!("`{}` is missing", at(parent)))?;
        let created = obj.get(last).is_none();
        let arr = obj.array_value_or_set(last);
        arr.append(to_input(v));
        Ok(created)
    }

    fn replace(&mut self, path: &[String], i: usize, v: &Value) {
        if let Some(arr) = self.array(path)
            && let Some(el) = arr.elements().into_iter().nth(i)
        {
            el.remove();
            arr.insert(i, to_input(v));
        }
    }

    fn remove_item(&mut self, path: &[String], i: usize) {
        if let Some(arr) = self.array(path)
            && let Some(el) = arr.elements().into_iter().nth(i)
        {
            el.remove();
        }
    }

    fn set(&mut self, path: &[String], v: &Value) {
        let Some((last, parent)) = path.split_last() else { return };
        let Some(obj) = self.object(parent) else { return };
        match obj.get(last) {
            Some(prop) => prop.set_value(to_input(v)),
            None => {
                obj.append(last, to_input(v));
            }
        }
    }

    fn remove_key(&mut self, path: &[String]) {
        let Some((last, parent)) = path.split_last() else { return };
        if let Some(prop) = self.object(parent).and_then(|o| o.get(last)) {
            prop.remove();
        }
    }

    fn is_empty_container(&self, path: &[String]) -> bool {
        match self.get(path) {
            Some(Value::Object(o)) => o.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        }
    }

    fn is_blank(&self) -> bool {
        let no_comments = !self.root.to_string().contains("//") && !self.root.to_string().contains("/*");
        no_comments && self.root.object_value().is_some_and(|o| o.properties().is_empty())
    }

    fn render(&self) -> String {
        self.root.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// TOML through toml_edit.

struct TomlDoc {
    doc: toml_edit::DocumentMut,
}

impl TomlDoc {
    fn parse(display: &str, text: Option<&str>) -> Result<TomlDoc, SettingsError> {
        let src = text.unwrap_or("");
        let doc = src.parse::<toml_edit::DocumentMut>().map_err(|e| SettingsError {
            path: display.to_string(),
            line: e.span().map(|s| src[..s.start.min(src.len())].matches('\n').count() + 1),
            message: format!("not valid TOML ({})", e.message()),
        })?;
        Ok(TomlDoc { doc })
    }

    fn item(&self, path: &[String]) -> Option<&toml_edit::Item> {
        let mut item = self.doc.as_item();
        for k in path {
            item = item.as_table_like()?.get(k)?;
        }
        Some(item)
    }

    fn item_mut(&mut self, path: &[String]) -> Option<&mut toml_edit::Item> {
        let mut item = self.doc.as_item_mut();
        for k in path {
            item = item.as_table_like_mut()?.get_mut(k)?;
        }
        Some(item)
    }
}

fn toml_to_json(item: &toml_edit::Item) -> Option<Value> {
    use toml_edit::Item;
    match item {
        Item::None => None,
        Item::Value(v) => Some(toml_value_to_json(v)),
        Item::Table(t) => {
            Some(Value::Object(t.iter().filter_map(|(k, v)| Some((k.to_string(), toml_to_json(v)?))).collect()))
        }
        Item::ArrayOfTables(a) => Some(Value::Array(
            a.iter()
                .map(|t| Value::Object(t.iter().filter_map(|(k, v)| Some((k.to_string(), toml_to_json(v)?))).collect()))
                .collect(),
        )),
    }
}

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        T::InlineTable(t) => Value::Object(t.iter().map(|(k, v)| (k.to_string(), toml_value_to_json(v))).collect()),
    }
}

fn json_to_toml_value(v: &Value) -> toml_edit::Value {
    match v {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml_edit::Value::from(i),
            None => toml_edit::Value::from(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(json_to_toml_value).collect()),
        Value::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in o {
                t.insert(k, json_to_toml_value(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

fn json_to_toml_table(o: &serde_json::Map<String, Value>) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    for (k, v) in o {
        t.insert(k, toml_edit::Item::Value(json_to_toml_value(v)));
    }
    t
}

impl Doc for TomlDoc {
    fn get(&self, path: &[String]) -> Option<Value> {
        self.item(path).and_then(toml_to_json)
    }

    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String> {
        let mut created = Vec::new();
        let mut table: &mut dyn toml_edit::TableLike = self.doc.as_table_mut();
        for (i, k) in path.iter().enumerate() {
            if table.get(k).is_none() {
                created.push(path[..=i].to_vec());
                let mut t = toml_edit::Table::new();
                t.set_implicit(i + 1 < path.len());
                table.insert(k, toml_edit::Item::Table(t));
            }
            table = table
                .get_mut(k)
                .and_then(|x| x.as_table_like_mut())
                .ok_or_else(|| format!("`{}` is not a table", at(&path[..=i])))?;
        }
        Ok(created)
    }

    fn items(&self, path: &[String]) -> Result<Vec<Value>, String> {
        match self.item(path) {
            None => Ok(Vec::new()),
            Some(toml_edit::Item::ArrayOfTables(_)) | Some(toml_edit::Item::Value(toml_edit::Value::Array(_))) => {
                match toml_to_json(self.item(path).expect("present")) {
                    Some(Value::Array(a)) => Ok(a),
                    _ => Ok(Vec::new()),
                }
            }
            Some(_) => Err(format!("`{}` is not an array", at(path))),
        }
    }

    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String> {
        let (last, parent) = path.split_last().ok_or("empty path")?;
        let table = self
            .item_mut(parent)
            .and_then(|x| x.as_table_like_mut())
            .ok_or_else(|| format!("`{}` is missing", at(parent)))?;
        let created = table.get(last).is_none();
        match (v, created) {
            (Value::Object(o), true) => {
                let mut a = toml_edit::ArrayOfTables::new();
                a.push(json_to_toml_table(o));
                table.insert(last, toml_edit::Item::ArrayOfTables(a));
            }
            (_, true) => {
                let mut a = toml_edit::Array::new();
                a.push(json_to_toml_value(v));
                table.insert(last, toml_edit::Item::Value(toml_edit::Value::Array(a)));
            }
            (_, false) => match table.get_mut(last) {
                Some(toml_edit::Item::ArrayOfTables(a)) => match v {
                    Value::Object(o) => a.push(json_to_toml_table(o)),
                    _ => return Err(format!("`{}` is an array of tables; the entry is not a table", at(path))),
                },
                Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a.push(json_to_toml_value(v)),
                _ => return Err(format!("`{}` is not an array", at(path))),
            },
        }
        Ok(created)
    }

    fn replace(&mut self, path: &[String], i: usize, v: &Value) {
        match self.item_mut(path) {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                if let (Some(t), Value::Object(o)) = (a.get_mut(i), v) {
                    *t = json_to_toml_table(o);
                }
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
                a.replace(i, json_to_toml_value(v));
            }
            _ => {}
        }
    }

    fn remove_item(&mut self, path: &[String], i: usize) {
        match self.item_mut(path) {
            Some(toml_edit::Item::ArrayOfTables(a)) => {
                a.remove(i);
            }
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => {
                a.remove(i);
            }
            _ => {}
        }
    }

    fn set(&mut self, path: &[String], v: &Value) {
        let Some((last, parent)) = path.split_last() else { return };
        if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_like_mut()) {
            match t.get_mut(last) {
                Some(toml_edit::Item::Value(cur)) => {
                    let decor = cur.decor().clone();
                    *cur = json_to_toml_value(v);
                    *cur.decor_mut() = decor;
                }
                _ => {
                    t.insert(last, toml_edit::Item::Value(json_to_toml_value(v)));
                }
            }
        }
    }

    fn remove_key(&mut self, path: &[String]) {
        let Some((last, parent)) = path.split_last() else { return };
        if let Some(t) = self.item_mut(parent).and_then(|x| x.as_table_like_mut()) {
            t.remove(last);
        }
    }

    fn is_empty_container(&self, path: &[String]) -> bool {
        match self.item(path) {
            Some(toml_edit::Item::Table(t)) => t.is_empty(),
            Some(toml_edit::Item::ArrayOfTables(a)) => a.is_empty(),
            Some(toml_edit::Item::Value(toml_edit::Value::Array(a))) => a.is_empty(),
            Some(toml_edit::Item::Value(toml_edit::Value::InlineTable(t))) => t.is_empty(),
            _ => false,
        }
    }

    fn is_blank(&self) -> bool {
        self.doc.to_string().trim().is_empty()
    }

    fn render(&self) -> String {
        self.doc.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Marked blocks in text files.

fn begin(id: &str) -> String {
    format!("<!-- msd-install:begin {id} -->")
}

fn end(id: &str) -> String {
    format!("<!-- msd-install:end {id} -->")
}

/// Finds block `id`: (first line index, last line index), both marker lines.
fn find_block(display: &str, lines: &[&str], id: &str) -> Result<Option<(usize, usize)>, SettingsError> {
    let (b, e) = (begin(id), end(id));
    let Some(start) = lines.iter().position(|l| l.trim_end() == b) else {
        if let Some(i) = lines.iter().position(|l| l.trim_end() == e) {
            return Err(SettingsError {
                path: display.into(),
                line: Some(i + 1),
                message: format!("`{e}` without its begin line"),
            });
        }
        return Ok(None);
    };
    match lines[start + 1..].iter().position(|l| l.trim_end() == e) {
        Some(off) => Ok(Some((start, start + 1 + off))),
        None => Err(SettingsError {
            path: display.into(),
            line: Some(start + 1),
            message: format!("`{b}` has no matching `{e}`"),
        }),
    }
}

fn blocks(
    display: &str,
    current: Option<&str>,
    want: &[(String, EntryKind, Vec<String>, Value)],
    prev: &SurfaceLedger,
) -> Result<Edit, SettingsError> {
    let mut text = current.unwrap_or("").to_string();
    let mut edit = Edit::default();
    let mut ledger = SurfaceLedger { created_file: prev.created_file || current.is_none(), ..Default::default() };
    // Check every marker we might touch before changing anything.
    {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for id in want.iter().map(|w| &w.0).chain(prev.entries.keys()) {
            find_block(display, &lines, id)?;
        }
    }
    for (id, kind, _, value) in want {
        let body = value.as_str().unwrap_or_default();
        let mut block = format!("{}\n{}", begin(id), body);
        if !block.ends_with('\n') {
            block.push('\n');
        }
        block.push_str(&end(id));
        block.push('\n');
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut separator = prev.entries.get(id).and_then(|e| e.separator.clone());
        match find_block(display, &lines, id)? {
            Some((s, e)) => {
                let old: String = lines[s..=e].concat();
                if old != block {
                    text = format!("{}{}{}", lines[..s].concat(), block, lines[e + 1..].concat());
                    edit.updated.push(id.clone());
                }
            }
            None => {
                // Separated from the user's text by one blank line, recorded so that removal
                // takes exactly what was added.
                let sep = if text.is_empty() || text.ends_with("\n\n") {
                    ""
                } else if text.ends_with('\n') {
                    "\n"
                } else {
                    "\n\n"
                };
                text = format!("{text}{sep}{block}");
                separator = (!sep.is_empty()).then(|| sep.to_string());
                edit.added.push(id.clone());
            }
        }
        ledger.entries.insert(id.clone(), LedgerEntry { kind: *kind, at: Vec::new(), value: value.clone(), separator });
    }
    let wanted: std::collections::BTreeSet<&String> = want.iter().map(|w| &w.0).collect();
    for (id, old) in prev.entries.iter().filter(|(id, _)| !wanted.contains(id)) {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let Some((s, e)) = find_block(display, &lines, id)? else { continue };
        let mut head = lines[..s].concat();
        if let Some(sep) = &old.separator
            && e + 1 == lines.len()
            && head.ends_with(sep.as_str())
        {
            head.truncate(head.len() - sep.len());
        }
        text = format!("{head}{}", lines[e + 1..].concat());
        edit.removed.push(id.clone());
    }
    edit.text = if ledger.created_file && text.is_empty() { None } else { Some(text) };
    if ledger.entries.is_empty() {
        ledger.created_file = false;
    }
    edit.ledger = ledger;
    Ok(edit)
}

/// The surfaces of `specs` that apply to `scope`.
pub fn for_scope(specs: &[SurfaceSpec], scope: Scope) -> impl Iterator<Item = &SurfaceSpec> {
    specs.iter().filter(move |s| s.scopes.contains(&scope))
}
