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

use msd_core::shell::{Os, Shell};
use std::collections::BTreeMap;
use std::path::Path;

use msd_core::fs::relpath::RelPath;
use msd_core::manifest::surfaces::{EntryKind, EntrySpec, STATUSLINE_ID, SurfaceFormat, SurfaceSpec};
use serde_json::Value;

use crate::apply::state::{LedgerEntry, OpenedLine, SurfaceLedger};
use crate::pipeline::synth::helper_path;
use crate::pipeline::target::Target;

/// `s` as one POSIX shell word: bare when it holds only safe characters, else single-quoted.
// A local stand-in until msd-core's shared quoting function lands (the safety engineer's).
pub(crate) fn sh_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The helper at `helper` as the start of a command string for `shell` (what `{{msd_run}}`
/// expands to): quoted for it, called with `&` in PowerShell, and relative to the home when
/// `portable_home` is given and holds it (`"$HOME"/...` in sh, `& "$HOME\..."` in PowerShell,
/// `"%USERPROFILE%\..."` in cmd.exe).
pub(crate) fn helper_command(
    helper: &Path,
    portable_home: Option<&Path>,
    shell: Shell,
) -> Result<String, msd_core::shell::QuoteError> {
    if let Some(rel) = portable_home.and_then(|h| helper.strip_prefix(h).ok()) {
        let rel = rel.display().to_string();
        return Ok(match shell {
            Shell::Posix => format!("\"$HOME\"/{}", sh_quote(&rel)),
            // Inside double quotes PowerShell expands `$` and a backtick: refuse those, like
            // cmd.exe refuses `%` and `"`.
            Shell::PowerShell if !rel.contains(['$', '`', '"']) => format!("& \"$HOME\\{rel}\""),
            Shell::Cmd if !rel.contains(['%', '"']) => format!("\"%USERPROFILE%\\{rel}\""),
            _ => return Err(msd_core::shell::QuoteError { word: rel }),
        });
    }
    let path = helper.display().to_string();
    let word = msd_core::shell::quote(&path, shell)?;
    Ok(msd_core::shell::invocation(&word, shell))
}

mod json;
mod markdown;
mod toml;
mod yaml;

#[cfg(test)]
mod tests;

/// How hook entries are written (`--portable-hooks`, `--force-statusline`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HookMode {
    /// Hook commands name the helper relative to `$HOME`.
    pub portable: bool,
    /// Our status line replaces the user's.
    pub force_statusline: bool,
}

/// The placeholder values of one target.
#[derive(Debug, Clone)]
pub(crate) struct Vars {
    home: String,
    core: String,
    core_ref: String,
    msd_run: String,
    msd_run_powershell: String,
    msd_run_argv: String,
    msd_run_exe: String,
    force_statusline: bool,
    helper_ref_sh: String,
}

impl Vars {
    /// The values for `target`, whose core dir is `core_dir`, on `os`, whose command strings
    /// `shell` runs; `user_home` is the user's `$HOME` (what `--portable-hooks` makes commands
    /// relative to).
    pub(crate) fn new(
        target: &Target,
        core_dir: &RelPath,
        mode: HookMode,
        user_home: Option<&Path>,
        (os, shell): (Os, Shell),
    ) -> Result<Vars, SettingsError> {
        let home = target.home.display().to_string();
        let core = format!("{home}/{core_dir}");
        let helper = target.home.join(core_dir.as_str()).join(helper_path(os).as_str());
        let sh =
            |p: String| msd_core::shell::quote_path(&p, Shell::Posix).expect("an OS path holds no NUL").into_owned();
        let portable = mode.portable.then_some(user_home).flatten();
        let command = |shell: Shell| {
            helper_command(&helper, portable, shell).map_err(|e| SettingsError {
                path: helper.display().to_string(),
                line: None,
                message: format!(
                    "{e}; the runtime runs its hooks with {shell:?} here: install into a home whose path that shell can take"
                ),
            })
        };
        // A runtime that splits the command into words itself and runs it without a shell,
        // expanding only a leading `~` (Hermes): `~/...` instead of `"$HOME"/...`.
        let argv = match portable.and_then(|h| helper.strip_prefix(h).ok()) {
            Some(rel) => format!("~/{}", sh_quote(&rel.display().to_string())),
            None => command(Shell::Posix)?,
        };
        Ok(Vars {
            msd_run: command(shell)?,
            msd_run_argv: argv,
            // An executable's path for a field no shell reads (Codex's MCP server `command`):
            // plain, and absolute even under --portable-hooks.
            msd_run_exe: helper.display().to_string(),
            msd_run_powershell: command(Shell::PowerShell)?,
            core,
            home,
            core_ref: target.core_ref.clone(),
            helper_ref_sh: sh(format!("{}bin/msd_run", target.core_ref)),
            force_statusline: mode.force_statusline,
        })
    }

    fn expand(&self, s: &str) -> String {
        s.replace("{{home}}", &self.home)
            .replace("{{core_ref}}", &self.core_ref)
            .replace("{{core}}", &self.core)
            .replace("{{msd_run}}", &self.msd_run)
            .replace("{{msd_run_powershell}}", &self.msd_run_powershell)
            .replace("{{msd_run_argv}}", &self.msd_run_argv)
            .replace("{{helper_ref_sh}}", &self.helper_ref_sh)
            .replace("{{msd_run_exe}}", &self.msd_run_exe)
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
pub(crate) struct Edit {
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
    /// Entry ids of ours that the user had edited: replaced or removed, so the file is backed up
    /// first (like an edited file).
    pub edited: Vec<String>,
    /// The user had replaced the file we wrote with one of their own ([`replaced_wholesale`]):
    /// it was read as theirs, not as ours.
    pub replaced: bool,
}

/// Whether `item` is the entry we recorded as `ours`, whatever the user changed in it: equal,
/// or holding exactly our strings (commands, matchers) with other numbers or flags (a changed
/// timeout). An item whose strings differ is not ours.
fn same_owner(ours: &Value, item: &Value) -> bool {
    fn strings<'v>(v: &'v Value, out: &mut Vec<(String, &'v str)>, at: &str) {
        match v {
            Value::String(s) => out.push((at.to_string(), s)),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| strings(x, out, &format!("{at}[{i}]"))),
            Value::Object(o) => o.iter().for_each(|(k, x)| strings(x, out, &format!("{at}.{k}"))),
            _ => {}
        }
    }
    if ours == item {
        return true;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    strings(ours, &mut a, "");
    strings(item, &mut b, "");
    !a.is_empty() && a == b
}

/// One entry of a JSON or TOML surface, rendered for a target.
#[derive(Debug, Clone, PartialEq)]
enum Wanted {
    /// One item of the array at `at`.
    Item {
        /// Owner id.
        id: String,
        /// Key path of the array.
        at: Vec<String>,
        /// The item.
        value: Value,
    },
    /// The value of the key at `at`.
    Key {
        /// Owner id.
        id: String,
        /// Key path of the key.
        at: Vec<String>,
        /// The value.
        value: Value,
    },
}

/// One block of a Markdown surface, rendered for a target.
#[derive(Debug, Clone, PartialEq)]
struct WantedBlock {
    /// Owner id.
    id: String,
    /// The block's body.
    text: String,
}

/// The entries of `spec` rendered for a target, split by what edits them (the manifest's
/// validation put blocks in Markdown surfaces and the rest in JSON and TOML ones).
fn rendered(spec: &SurfaceSpec, vars: &Vars) -> (Vec<Wanted>, Vec<WantedBlock>) {
    let (mut structured, mut blocks) = (Vec::new(), Vec::new());
    for e in &spec.entries {
        match e {
            EntrySpec::ArrayItem { id, at, value } => structured.push(Wanted::Item {
                id: id.clone(),
                at: at.iter().map(|k| vars.expand(k)).collect(),
                value: vars.expand_value(value),
            }),
            EntrySpec::Key { id, at, value } => structured.push(Wanted::Key {
                id: id.clone(),
                at: at.iter().map(|k| vars.expand(k)).collect(),
                value: vars.expand_value(value),
            }),
            EntrySpec::Block { id, text } => blocks.push(WantedBlock { id: id.clone(), text: vars.expand(text) }),
        }
    }
    (structured, blocks)
}

/// Upserts the entries of `spec` into `current` (the file's text, `None` when absent).
/// `display` names the file in errors. `adopt` claims items equal to ours that the ledger does
/// not know: set when a previous install exists but its ledger is lost (an older layout, a
/// damaged state), so that its entries are not orphaned (and left dangling by uninstall).
pub(crate) fn upsert(
    spec: &SurfaceSpec,
    vars: &Vars,
    display: &str,
    current: Option<&str>,
    ledger: &SurfaceLedger,
    adopt: bool,
) -> Result<Edit, SettingsError> {
    let (structured, blocks) = rendered(spec, vars);
    let how = How { adopt, force: vars.force_statusline };
    let mut edit = match spec.format {
        SurfaceFormat::Json => {
            merge(&mut json::JsonDoc::parse(display, current)?, display, current.is_none(), &structured, ledger, how)?
        }
        SurfaceFormat::Toml => {
            merge(&mut toml::TomlDoc::parse(display, current)?, display, current.is_none(), &structured, ledger, how)?
        }
        SurfaceFormat::Yaml => yaml_merge(display, current, current.is_none(), &structured, ledger, how)?,
        SurfaceFormat::Markdown => markdown::blocks(display, current, &blocks, ledger)?,
    };
    if let Some(n) = &spec.notice
        && !(edit.added.is_empty() && edit.updated.is_empty())
    {
        edit.notes.push(n.clone());
    }
    // What uninstall restores: the text before our first write, carried over while the file
    // holds exactly what we last wrote.
    let untouched_since = ledger.written_sha256.is_some()
        && current.map(|c| msd_core::fs::fsx::sha256(c.as_bytes())) == ledger.written_sha256;
    edit.ledger.before = if edit.replaced || (ledger.entries.is_empty() && ledger.written_sha256.is_none()) {
        current.map(str::to_string)
    } else if untouched_since {
        ledger.before.clone()
    } else {
        None
    };
    edit.ledger.written_sha256 = edit.text.as_deref().map(|t| msd_core::fs::fsx::sha256(t.as_bytes()));
    Ok(edit)
}

/// How a merge treats what it finds: `adopt` claims items equal to ours, `force` replaces the
/// user's status line.
#[derive(Debug, Clone, Copy, Default)]
struct How {
    adopt: bool,
    force: bool,
}

/// Removes every entry we own from `current` (uninstall). When the file still holds exactly
/// what we last wrote, the text from before our first write is restored byte for byte.
pub(crate) fn remove(
    format: SurfaceFormat,
    display: &str,
    current: Option<&str>,
    ledger: &SurfaceLedger,
) -> Result<Edit, SettingsError> {
    let mut edit = match format {
        SurfaceFormat::Json => {
            merge(&mut json::JsonDoc::parse(display, current)?, display, false, &[], ledger, How::default())?
        }
        SurfaceFormat::Toml => {
            merge(&mut toml::TomlDoc::parse(display, current)?, display, false, &[], ledger, How::default())?
        }
        SurfaceFormat::Yaml => yaml_merge(display, current, false, &[], ledger, How::default())?,
        SurfaceFormat::Markdown => markdown::blocks(display, current, &[], ledger)?,
    };
    // The file holds exactly what we last wrote over the user's `before` (kept only while
    // nobody else changed the file between our writes): the user's bytes come back as they
    // were (comments, trailing commas, one-line arrays, CRLF, a BOM, an empty file). A file we
    // created has no `before`: it goes only when the merge above left nothing in it, since a
    // key the user (or the runtime itself) added and a later run wrote back with ours is the
    // user's, whatever the hash of the file says.
    let ours = ledger.written_sha256.is_some()
        && current.map(|c| msd_core::fs::fsx::sha256(c.as_bytes())) == ledger.written_sha256;
    if ours && ledger.before.is_some() {
        edit.text = ledger.before.clone();
    }
    Ok(edit)
}

/// [`merge`] over a YAML file, checked against the same merge over its parsed value (a JSON
/// twin): the YAML text is edited line by line, and an edit whose text would mean anything else
/// than the structured one is refused, the file left as it is.
fn yaml_merge(
    display: &str,
    current: Option<&str>,
    file_absent: bool,
    want: &[Wanted],
    prev: &SurfaceLedger,
    how: How,
) -> Result<Edit, SettingsError> {
    let mut doc = yaml::YamlDoc::parse(display, current)?;
    let twin_text = yaml::twin(doc.value()).to_string();
    let mut twin = json::JsonDoc::parse(display, Some(&twin_text))?;
    let edit = merge(&mut doc, display, file_absent, want, prev, how);
    if let Some(b) = doc.broken() {
        return Err(SettingsError {
            path: display.to_string(),
            line: None,
            message: format!("msd cannot edit this YAML in place ({b}); add its entries by hand"),
        });
    }
    let edit = edit?;
    let twin_edit = merge(&mut twin, display, file_absent, want, prev, how)?;
    yaml::check(display, &edit.text, &twin_edit.text)?;
    Ok(edit)
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
    /// The user's lines this edit opened into blocks (key path, line as it was), taken out.
    fn take_opened(&mut self) -> Vec<(Vec<String>, String)> {
        Vec::new()
    }
    /// Puts `line` back as the key at `path`, whose block is empty.
    fn close(&mut self, _path: &[String], _line: &str) {}
    /// The text.
    fn render(&self) -> String;
}

fn at(path: &[String]) -> String {
    path.join(".")
}

/// Upserts `want` into `doc` and removes what `prev` owned that is no longer wanted, in four
/// steps: each wanted entry ([`Merge::item`], [`Merge::key`]), stale entries
/// ([`Merge::drop_stale`]), containers we created that are empty now
/// ([`Merge::prune_containers`]), and the outcome ([`Merge::finish`]).
fn merge(
    doc: &mut dyn Doc,
    display: &str,
    file_absent: bool,
    want: &[Wanted],
    prev: &SurfaceLedger,
    how: How,
) -> Result<Edit, SettingsError> {
    let before = doc.render();
    let fresh = SurfaceLedger { format: prev.format, ..SurfaceLedger::default() };
    let replaced = replaced_wholesale(doc, prev);
    let prev = if replaced { &fresh } else { prev };
    let mut m = Merge {
        doc,
        display,
        prev,
        adopt: how.adopt,
        force: how.force,
        edit: Edit { replaced, ..Edit::default() },
        ledger: SurfaceLedger {
            format: prev.format,
            created_file: prev.created_file || file_absent,
            containers: prev.containers.clone(),
            entries: BTreeMap::new(),
            before: None,
            written_sha256: None,
            opened: prev.opened.clone(),
        },
    };
    for w in want {
        match w {
            Wanted::Item { id, at, value } => m.item(id, at, value)?,
            Wanted::Key { id, at, value } => m.key(id, at, value)?,
        }
    }
    m.drop_stale();
    m.prune_containers();
    m.close_opened();
    Ok(m.finish(before, file_absent))
}

/// Whether the user replaced the file we wrote with one of their own: not one of the entries
/// that name msd (our array items, our keys holding text: a hook's command, the status line)
/// is left, nor an edited copy of one. What the ledger says we created (the file, its
/// containers) and the plain keys we set are then the user's as this file holds them: a
/// `"version": 1` or `hooks: {}` of their own is not ours to remove.
fn replaced_wholesale(doc: &dyn Doc, prev: &SurfaceLedger) -> bool {
    fn has_text(v: &Value) -> bool {
        match v {
            Value::String(_) => true,
            Value::Array(a) => a.iter().any(has_text),
            Value::Object(o) => o.values().any(has_text),
            _ => false,
        }
    }
    let found = |ours: &Value, x: &Value| x == ours || same_owner(ours, x);
    let mut naming = prev
        .entries
        .values()
        .filter(|e| e.kind == EntryKind::ArrayItem || (e.kind == EntryKind::Key && has_text(&e.value)))
        .peekable();
    naming.peek().is_some()
        && naming.all(|e| match e.kind {
            EntryKind::ArrayItem => doc.items(&e.at).map_or(true, |items| !items.iter().any(|x| found(&e.value, x))),
            _ => doc.get(&e.at).is_none_or(|x| !found(&e.value, &x)),
        })
}

/// One merge in progress.
struct Merge<'a> {
    doc: &'a mut dyn Doc,
    display: &'a str,
    prev: &'a SurfaceLedger,
    adopt: bool,
    force: bool,
    edit: Edit,
    ledger: SurfaceLedger,
}

impl Merge<'_> {
    fn err(&self, message: String) -> SettingsError {
        SettingsError { path: self.display.to_string(), line: None, message }
    }

    /// What we wrote last time for `id`, if it was of `kind` at the same place.
    fn ours_before(&self, id: &str, kind: EntryKind, path: &[String]) -> Option<&Value> {
        self.prev.entries.get(id).filter(|e| e.kind == kind && e.at == path).map(|e| &e.value)
    }

    fn own(&mut self, id: &str, kind: EntryKind, path: &[String], value: &Value) {
        // A user's value we replaced stays recorded for as long as ours is there.
        let replaced =
            self.prev.entries.get(id).filter(|e| e.kind == kind && e.at == path).and_then(|e| e.replaced.clone());
        self.ledger.entries.insert(
            id.to_string(),
            LedgerEntry { kind, at: path.to_vec(), value: value.clone(), separator: None, replaced },
        );
    }

    fn created(&mut self, created: Vec<Vec<String>>) {
        for c in created {
            if !self.ledger.containers.contains(&c) {
                self.ledger.containers.push(c);
            }
        }
    }

    fn ensure_parent(&mut self, path: &[String]) -> Result<(), SettingsError> {
        let created = self.doc.ensure_table(&path[..path.len() - 1]).map_err(|m| self.err(m))?;
        self.created(created);
        Ok(())
    }

    /// One array item: kept, adopted, replaced in place, left to the user, or appended.
    fn item(&mut self, id: &str, path: &[String], value: &Value) -> Result<(), SettingsError> {
        self.ensure_parent(path)?;
        let ours_before = self.ours_before(id, EntryKind::ArrayItem, path).cloned();
        let items = self.doc.items(path).map_err(|m| self.err(m))?;
        let has_new = items.iter().position(|x| x == value);
        let has_old = ours_before.as_ref().and_then(|o| {
            items
                .iter()
                .position(|x| x == o)
                .or_else(|| (0..items.len()).find(|&i| Some(i) != has_new && same_owner(o, &items[i])))
        });
        let edited = match (has_old, &ours_before) {
            (Some(i), Some(o)) => &items[i] != o,
            _ => false,
        };
        if edited {
            self.edit.edited.push(id.to_string());
            self.edit.notes.push(format!(
                "{}: you edited msd's `{id}` entry ({}); it was backed up with the file and replaced by msd's",
                at(path),
                items[has_old.expect("found")]
            ));
        }
        match (has_new, has_old) {
            (Some(_), Some(_)) if ours_before.as_ref() == Some(value) => {
                self.own(id, EntryKind::ArrayItem, path, value)
            }
            (Some(_), Some(old)) => {
                // The user already has the new item; ours is the stale one.
                self.doc.remove_item(path, old);
                self.edit.removed.push(id.to_string());
            }
            (Some(_), None) if self.adopt => self.own(id, EntryKind::ArrayItem, path, value),
            (Some(_), None) => {
                self.edit.notes.push(format!("{}: you already have msd's `{id}` entry; it stays yours", at(path)))
            }
            (None, Some(old)) => {
                self.doc.replace(path, old, value);
                self.own(id, EntryKind::ArrayItem, path, value);
                self.edit.updated.push(id.to_string());
            }
            (None, None) => {
                if self.doc.push(path, value).map_err(|m| self.err(m))? {
                    self.created(vec![path.to_vec()]);
                }
                self.own(id, EntryKind::ArrayItem, path, value);
                self.edit.added.push(id.to_string());
            }
        }
        Ok(())
    }

    /// One key: set when absent, kept when equal, updated when it still holds our last value,
    /// left to the user otherwise.
    fn key(&mut self, id: &str, path: &[String], value: &Value) -> Result<(), SettingsError> {
        self.ensure_parent(path)?;
        let ours_before = self.ours_before(id, EntryKind::Key, path).cloned();
        match self.doc.get(path) {
            None => {
                self.doc.set(path, value);
                self.own(id, EntryKind::Key, path, value);
                self.edit.added.push(id.to_string());
            }
            Some(cur) if &cur == value => {
                if ours_before.is_some() || self.adopt {
                    self.own(id, EntryKind::Key, path, value);
                }
            }
            Some(cur) if Some(&cur) == ours_before.as_ref() => {
                self.doc.set(path, value);
                self.own(id, EntryKind::Key, path, value);
                self.edit.updated.push(id.to_string());
            }
            Some(cur) if self.force && id == STATUSLINE_ID => {
                self.doc.set(path, value);
                self.own(id, EntryKind::Key, path, value);
                let replaced = ours_before.is_none().then(|| cur.clone());
                let kept = self.prev.entries.get(id).and_then(|e| e.replaced.clone());
                if let Some(e) = self.ledger.entries.get_mut(id) {
                    e.replaced = replaced.or(kept);
                }
                self.edit.updated.push(id.to_string());
                self.edit.notes.push(format!(
                    "{}: replaced your status line {cur} (--force-statusline); uninstall puts it back",
                    at(path)
                ));
            }
            Some(cur) if id == STATUSLINE_ID => self
                .edit
                .notes
                .push(format!("{}: kept your status line {cur}; pass --force-statusline to use msd's", at(path))),
            Some(cur) => self.edit.notes.push(format!("{}: kept your value {cur} (msd would set {value})", at(path))),
        }
        Ok(())
    }

    /// Entries we own that are no longer wanted (an older version's, moved ones, or uninstall).
    fn drop_stale(&mut self) {
        for (id, old) in &self.prev.entries {
            if self.ledger.entries.get(id).is_some_and(|e| e.at == old.at) {
                continue;
            }
            match old.kind {
                EntryKind::ArrayItem => {
                    if let Ok(items) = self.doc.items(&old.at)
                        && let Some(i) = items
                            .iter()
                            .position(|x| x == &old.value)
                            .or_else(|| items.iter().position(|x| same_owner(&old.value, x)))
                    {
                        if items[i] != old.value {
                            self.edit.edited.push(id.clone());
                            self.edit.notes.push(format!(
                                "{}: you edited msd's `{id}` entry ({}); it was backed up with the file and removed",
                                at(&old.at),
                                items[i]
                            ));
                        }
                        self.doc.remove_item(&old.at, i);
                        self.edit.removed.push(id.clone());
                    }
                }
                EntryKind::Key => {
                    if self.doc.get(&old.at).as_ref() == Some(&old.value) {
                        match &old.replaced {
                            Some(theirs) => self.doc.set(&old.at, theirs),
                            None => self.doc.remove_key(&old.at),
                        }
                        self.edit.removed.push(id.clone());
                    }
                }
                // A block in the ledger of a structured file: nothing of ours to find there.
                EntryKind::Block => {}
            }
        }
    }

    /// Containers we created that are empty now go, deepest first.
    fn prune_containers(&mut self) {
        let mut containers = self.ledger.containers.clone();
        containers.sort_by_key(|c| std::cmp::Reverse(c.len()));
        for c in containers {
            let needed = self.ledger.entries.values().any(|e| e.at.starts_with(&c));
            if self.doc.get(&c).is_none() {
                self.ledger.containers.retain(|x| x != &c);
            } else if self.doc.is_empty_container(&c) && !needed {
                self.doc.remove_key(&c);
                self.ledger.containers.retain(|x| x != &c);
            }
        }
    }

    /// The user's lines we opened into blocks (now or before) whose blocks are empty again are
    /// put back as they were.
    fn close_opened(&mut self) {
        for (at, line) in self.doc.take_opened() {
            if !self.ledger.opened.iter().any(|o| o.at == at) {
                self.ledger.opened.push(OpenedLine { at, line });
            }
        }
        for o in self.ledger.opened.clone() {
            let needed = self.ledger.entries.values().any(|e| e.at.starts_with(&o.at));
            if self.doc.get(&o.at).is_none() {
                self.ledger.opened.retain(|x| x.at != o.at);
            } else if !needed && self.doc.is_empty_container(&o.at) {
                self.doc.close(&o.at, &o.line);
                self.ledger.opened.retain(|x| x.at != o.at);
            }
        }
    }

    /// The new text (`None`: remove the file we created) and ledger.
    fn finish(mut self, before: String, file_absent: bool) -> Edit {
        let text = self.doc.render();
        self.edit.text = if self.ledger.created_file && self.ledger.entries.is_empty() && self.doc.is_blank() {
            None
        } else if text == before && !file_absent {
            Some(before)
        } else {
            Some(text)
        };
        if self.ledger.entries.is_empty() && self.ledger.containers.is_empty() {
            self.ledger.created_file = false;
        }
        self.edit.ledger = self.ledger;
        self.edit
    }
}
