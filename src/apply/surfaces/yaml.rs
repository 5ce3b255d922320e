//! YAML surfaces (Hermes `config.yaml`), edited line by line so that comments, order and
//! formatting stay as the user had them.
//!
//! No maintained YAML crate edits a document in place, so this edits block-style YAML as text:
//! a mapping key is a `key:` line, its block the more-indented lines below it (and, for a
//! sequence, the `- ` lines at its own indent); a sequence item runs from its `- ` line to the
//! next one. Our items are written as block mappings whose scalars are JSON (which YAML reads
//! as double-quoted strings, numbers and booleans). An empty flow value (`hooks: {}`, `[]`,
//! `null`, `~`, nothing) becomes a block when we add to it. What this cannot read as blocks
//! (flow collections with content, multi-line scalars in the way, anchors) is refused: every
//! edit is checked by [`super::upsert`] against the same merge done on the parsed value, and a
//! text whose meaning differs from it is never written.
//!
//! The parsed value is the one the runtime reads: merge keys (`<<: *base`) applied, as PyYAML
//! does. A key or list a merge key brings in is not in the text, so msd never writes that key
//! beside it (which would override, and silence, the user's hooks it brings): such an edit is
//! refused. A byte order mark is kept.

use serde_json::Value;

use super::{Doc, SettingsError, at};

pub(super) struct YamlDoc {
    lines: Vec<String>,
    /// The text began with a byte order mark (kept on render).
    bom: bool,
    /// The text ended with a newline (or was empty).
    newline: bool,
    /// The document as parsed after the last edit.
    value: Value,
    /// Why the text no longer parses, after an edit.
    broken: Option<String>,
    /// The user's lines opened into blocks by this edit (key path, line as it was).
    opened: Vec<(Vec<String>, String)>,
}

/// The YAML text parsed to JSON as the runtime reads it, merge keys applied (an empty document
/// is an empty mapping; a byte order mark is no content).
pub(super) fn to_json(display: &str, text: &str) -> Result<Value, SettingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err = |line: Option<usize>, message: String| SettingsError { path: display.to_string(), line, message };
    let v: Value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        let mut y: yaml_serde::Value = yaml_serde::from_str(text)
            .map_err(|e| err(e.location().map(|l| l.line()), format!("not valid YAML ({e})")))?;
        y.apply_merge().map_err(|e| err(None, format!("a merge key (`<<`) msd cannot read ({e})")))?;
        serde_json::to_value(&y).map_err(|e| err(None, format!("not a YAML msd can read ({e})")))?
    };
    match v {
        Value::Null => Ok(Value::Object(Default::default())),
        Value::Object(_) => Ok(v),
        _ => Err(SettingsError {
            path: display.to_string(),
            line: Some(1),
            message: "the top level is not a mapping".into(),
        }),
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A blank or comment line.
fn trivia(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Whether `line` is an item of a sequence at indent `ind`.
fn item_line(line: &str, ind: usize) -> bool {
    !trivia(line) && indent(line) == ind && (line[ind..] == *"-" || line[ind..].starts_with("- "))
}

/// The inline value after `key:` on `line` (at indent `ind`), when the line is that key.
fn key_value<'a>(line: &'a str, ind: usize, key: &str) -> Option<&'a str> {
    if trivia(line) || indent(line) != ind {
        return None;
    }
    let rest = &line[ind..];
    let dq = serde_json::to_string(key).unwrap_or_default();
    let sq = format!("'{}'", key.replace('\'', "''"));
    let after = [key, dq.as_str(), sq.as_str()].iter().find_map(|k| rest.strip_prefix(k))?;
    let v = after.strip_prefix(':')?;
    if !(v.is_empty() || v.starts_with([' ', '\t'])) {
        return None;
    }
    let v = v.trim();
    Some(if v.starts_with('#') { "" } else { v })
}

/// An inline value that is an empty container (or nothing), which a block can replace.
fn empty_inline(v: &str) -> bool {
    let v = v.split(" #").next().unwrap_or("").trim();
    matches!(v, "" | "{}" | "[]" | "null" | "~" | "Null" | "NULL")
}

fn plain_key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

fn scalar(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `v` as the lines of one sequence item at indent `ind`.
fn item_lines(v: &Value, ind: usize) -> Vec<String> {
    let pad = " ".repeat(ind);
    match v {
        Value::Object(o) if !o.is_empty() => o
            .iter()
            .enumerate()
            .map(|(i, (k, x))| format!("{pad}{}{}: {}", if i == 0 { "- " } else { "  " }, plain_key(k), scalar(x)))
            .collect(),
        _ => vec![format!("{pad}- {}", scalar(v))],
    }
}

impl YamlDoc {
    pub(super) fn parse(display: &str, text: Option<&str>) -> Result<YamlDoc, SettingsError> {
        let src = text.unwrap_or("");
        let (bom, src) = match src.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, src),
        };
        let value = to_json(display, src)?;
        if src.contains('\t') && src.lines().any(|l| l.starts_with('\t')) {
            return Err(SettingsError {
                path: display.to_string(),
                line: None,
                message: "indented with tabs, which YAML does not allow".into(),
            });
        }
        Ok(YamlDoc {
            lines: src.lines().map(str::to_string).collect(),
            bom,
            newline: src.is_empty() || src.ends_with('\n'),
            value,
            broken: None,
            opened: Vec::new(),
        })
    }

    /// Why the edited text does not parse, if it does not.
    pub(super) fn broken(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// The document as parsed.
    pub(super) fn value(&self) -> &Value {
        &self.value
    }

    fn reparse(&mut self) {
        match to_json("", &self.render()) {
            Ok(v) => self.value = v,
            Err(e) => self.broken = Some(e.message),
        }
    }

    /// The last content line of lines `from..to` (`from - 1` when there is none).
    fn last_content(&self, from: usize, to: usize) -> usize {
        (from..to).rev().find(|&i| !trivia(&self.lines[i])).unwrap_or(from.saturating_sub(1))
    }

    /// The indent of the entries of the block `from..to`, `None` when it has none.
    fn block_indent(&self, from: usize, to: usize) -> Option<usize> {
        (from..to).find(|&i| !trivia(&self.lines[i])).map(|i| indent(&self.lines[i]))
    }

    /// The key `path`: its line, indent, and block `line + 1..end`. The top level (empty path)
    /// is the whole text.
    fn find(&self, path: &[String]) -> Option<(Option<usize>, usize, usize, usize)> {
        let (mut line, mut ind, mut from, mut to) = (None, 0, 0, self.lines.len());
        for k in path {
            let child = self.block_indent(from, to)?;
            if line.is_some() && child <= ind {
                // The block is a sequence at the key's own indent: no mapping to descend.
                return None;
            }
            let i = (from..to).find(|&i| key_value(&self.lines[i], child, k).is_some())?;
            let end = (i + 1..to)
                .find(|&j| {
                    let l = &self.lines[j];
                    !trivia(l) && indent(l) <= child && !item_line(l, child)
                })
                .unwrap_or(to);
            (line, ind, from, to) = (Some(i), child, i + 1, end);
        }
        Some((line, ind, from, to))
    }

    /// Why `path`, which the parsed value has, is not found in the text as `what` (a block
    /// mapping or list): a merge key brought it in, or it is written in a form msd cannot edit.
    fn not_in_text(&self, path: &[String], what: &str) -> String {
        let merged = self.lines.iter().any(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with("<<:") || t.starts_with("\"<<\":") || t.starts_with("'<<':")
        });
        if merged && !path.is_empty() {
            format!(
                "`{}` comes from a merge key (`<<:`); msd does not write it beside the merge, which would override what the merge brings in (your hooks there would stop running): add msd's entries by hand",
                at(path)
            )
        } else {
            format!("`{}` is not a {what}", at(path))
        }
    }

    /// Makes the inline empty value of the key on line `i` (at indent `ind`) a block opener.
    fn open_block(&mut self, i: usize, ind: usize, path: &[String]) -> Result<(), String> {
        let k = path.last().map(String::as_str).unwrap_or_default();
        let v = key_value(&self.lines[i], ind, k).unwrap_or_default().to_string();
        if v.is_empty() {
            return Ok(());
        }
        if !empty_inline(&v) {
            return Err(format!(
                "`{}` holds `{v}` on one line, which msd cannot add to; write it as a block",
                at(path)
            ));
        }
        let comment = v.split_once(" #").map(|(_, c)| format!(" #{c}")).unwrap_or_default();
        self.opened.push((path.to_vec(), self.lines[i].clone()));
        self.lines[i] = format!("{}{}:{comment}", " ".repeat(ind), plain_key(k));
        Ok(())
    }

    /// Inserts `key:` (or `key: <v>`) for `path` at the end of its parent's block; the parent
    /// exists.
    fn insert_key(&mut self, path: &[String], inline: Option<&Value>) -> Result<(), String> {
        let (parent, k) = (&path[..path.len() - 1], &path[path.len() - 1]);
        let not_block = || format!("`{}` is not a block mapping", at(parent));
        let (pline, pind, from, to) = self.find(parent).ok_or_else(not_block)?;
        if let Some(p) = pline {
            self.open_block(p, pind, parent)?;
        }
        let (ind, line) = match (self.block_indent(from, to), pline) {
            (Some(c), Some(_)) if c <= pind => return Err(not_block()),
            (Some(c), _) => (c, self.last_content(from, to) + 1),
            (None, Some(p)) => (pind + 2, p + 1),
            (None, None) => (0, self.lines.len()),
        };
        let text = match inline {
            Some(v) => format!("{}{}: {}", " ".repeat(ind), plain_key(k), scalar(v)),
            None => format!("{}{}:", " ".repeat(ind), plain_key(k)),
        };
        self.lines.insert(line, text);
        Ok(())
    }

    /// The items of the block sequence at `path`: their indent and line ranges.
    fn item_ranges(&self, path: &[String]) -> Option<(usize, Vec<(usize, usize)>)> {
        let (_, _, from, to) = self.find(path)?;
        let first = (from..to).find(|&i| !trivia(&self.lines[i]))?;
        let ind = indent(&self.lines[first]);
        if !item_line(&self.lines[first], ind) {
            return None;
        }
        let starts: Vec<usize> = (from..to).filter(|&i| item_line(&self.lines[i], ind)).collect();
        let ranges = starts
            .iter()
            .enumerate()
            .map(|(n, &s)| (s, self.last_content(s, starts.get(n + 1).copied().unwrap_or(to)) + 1))
            .collect();
        Some((ind, ranges))
    }
}

/// The value with every null made an empty mapping, for the structured twin of a YAML merge
/// (a `key:` with nothing under it is an empty container to the runtime and to us).
pub(super) fn twin(v: &Value) -> Value {
    match v {
        Value::Null => Value::Object(Default::default()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), twin(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(twin).collect()),
        other => other.clone(),
    }
}

/// Null, `{}` and `[]` alike, for comparing a YAML edit with its twin.
fn empties(v: &Value) -> Value {
    match v {
        Value::Object(o) if o.is_empty() => Value::Null,
        Value::Array(a) if a.is_empty() => Value::Null,
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), empties(x))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(empties).collect()),
        other => other.clone(),
    }
}

impl Doc for YamlDoc {
    fn get(&self, path: &[String]) -> Option<Value> {
        path.iter().try_fold(&self.value, |v, k| v.get(k)).cloned()
    }

    fn ensure_table(&mut self, path: &[String]) -> Result<Vec<Vec<String>>, String> {
        let mut created = Vec::new();
        for n in 1..=path.len() {
            let p = &path[..n];
            match self.get(p) {
                Some(Value::Object(_) | Value::Null) => {
                    let (line, ind, ..) = self.find(p).ok_or_else(|| self.not_in_text(p, "block mapping"))?;
                    if let Some(i) = line {
                        self.open_block(i, ind, p)?;
                    }
                }
                Some(_) => return Err(format!("`{}` is not a table", at(p))),
                None => {
                    self.insert_key(p, None)?;
                    created.push(p.to_vec());
                }
            }
            self.reparse();
            if let Some(b) = &self.broken {
                return Err(b.clone());
            }
        }
        Ok(created)
    }

    fn items(&self, path: &[String]) -> Result<Vec<Value>, String> {
        match self.get(path) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(format!("`{}` is not a list", at(path))),
        }
    }

    fn push(&mut self, path: &[String], v: &Value) -> Result<bool, String> {
        let created = match self.get(path) {
            None => {
                self.insert_key(path, None)?;
                true
            }
            Some(Value::Array(_) | Value::Null) => false,
            Some(_) => return Err(format!("`{}` is not a list", at(path))),
        };
        let (line, ind, from, to) = self.find(path).ok_or_else(|| self.not_in_text(path, "block list"))?;
        let Some(kline) = line else { return Err("the top level is not a list".into()) };
        self.open_block(kline, ind, path)?;
        let (item_ind, at_line) = match self.item_ranges(path) {
            Some((c, r)) if !r.is_empty() => (c, r.last().map(|x| x.1).unwrap_or(to)),
            _ if self.block_indent(from, to).is_some() => {
                return Err(format!("`{}` is not a block list", at(path)));
            }
            _ => (ind + 2, kline + 1),
        };
        for (n, l) in item_lines(v, item_ind).into_iter().enumerate() {
            self.lines.insert(at_line + n, l);
        }
        self.reparse();
        match &self.broken {
            Some(b) => Err(b.clone()),
            None => Ok(created),
        }
    }

    fn replace(&mut self, path: &[String], i: usize, v: &Value) {
        if let Some((c, r)) = self.item_ranges(path)
            && let Some(&(s, e)) = r.get(i)
        {
            self.lines.splice(s..e, item_lines(v, c));
            self.reparse();
        } else {
            self.broken = Some(format!("item {i} of `{}` not found as a block", at(path)));
        }
    }

    fn remove_item(&mut self, path: &[String], i: usize) {
        if let Some((_, r)) = self.item_ranges(path)
            && let Some(&(s, e)) = r.get(i)
        {
            self.lines.drain(s..e);
            self.reparse();
        } else {
            self.broken = Some(format!("item {i} of `{}` not found as a block", at(path)));
        }
    }

    fn set(&mut self, path: &[String], v: &Value) {
        if self.get(path).is_some() {
            self.remove_key(path);
        }
        if let Err(e) = self.insert_key(path, Some(v)) {
            self.broken = Some(e);
        }
        self.reparse();
    }

    fn remove_key(&mut self, path: &[String]) {
        match self.find(path) {
            Some((Some(line), _, from, to)) => {
                let end = self.last_content(from, to).max(line) + 1;
                self.lines.drain(line..end);
                self.reparse();
            }
            _ => self.broken = Some(format!("`{}` not found as a block", at(path))),
        }
    }

    fn is_empty_container(&self, path: &[String]) -> bool {
        match self.get(path) {
            Some(Value::Object(o)) => o.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            // A `key:` with nothing under it.
            Some(Value::Null) => self.find(path).is_some_and(|(_, _, f, t)| self.block_indent(f, t).is_none()),
            _ => false,
        }
    }

    fn is_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }

    fn take_opened(&mut self) -> Vec<(Vec<String>, String)> {
        std::mem::take(&mut self.opened)
    }

    fn close(&mut self, path: &[String], line: &str) {
        if let Some((Some(i), _, from, to)) = self.find(path)
            && self.block_indent(from, to).is_none()
        {
            self.lines[i] = line.to_string();
            self.reparse();
        }
    }

    fn render(&self) -> String {
        let body = self.lines.join("\n");
        let mut s = if self.bom { String::from('\u{feff}') } else { String::new() };
        s.push_str(&body);
        if !body.is_empty() && (self.newline || !body.ends_with('\n')) {
            s.push('\n');
        }
        s
    }
}

/// Checks a YAML edit against the same merge over the parsed value: the text must mean what
/// the structured edit means, else nothing is written.
pub(super) fn check(display: &str, yaml: &Option<String>, json: &Option<String>) -> Result<(), SettingsError> {
    let refuse = |why: String| SettingsError {
        path: display.to_string(),
        line: None,
        message: format!(
            "msd cannot edit this YAML in place ({why}); add its entries by hand or write the keys as blocks"
        ),
    };
    let got = yaml.as_deref().map(|t| to_json(display, t)).transpose().map_err(|e| refuse(e.message))?;
    let want =
        json.as_deref().map(|t| serde_json::from_str::<Value>(t).map_err(|e| refuse(e.to_string()))).transpose()?;
    let norm = |v: Option<Value>| v.map(|v| empties(&v)).filter(|v| !v.is_null());
    let (got, want) = (norm(got), norm(want));
    if got == want {
        Ok(())
    } else {
        Err(refuse(format!(
            "the edited text reads as {} instead of {}",
            got.map(|v| v.to_string()).unwrap_or_default(),
            want.map(|v| v.to_string()).unwrap_or_default()
        )))
    }
}
