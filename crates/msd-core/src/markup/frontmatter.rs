//! YAML frontmatter of commands and agents: read strictly, edited entry by entry, re-emitted
//! with the source formatting of every entry left alone.
//!
//! Input: a Markdown document starting with `---\n ... \n---\n`. Output: [`Frontmatter`], an
//! ordered list of top-level entries (key, raw lines, parsed value) plus the body. Converters
//! drop, rename, replace and add entries; untouched entries keep their exact bytes.
//!
//! Invariant: a frontmatter that is not valid YAML mapping is an error with file:line, never
//! passed through.

use yaml_serde::Value;

/// One top-level entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key.
    pub key: String,
    /// The entry's source lines, each with its `\n`.
    pub raw: String,
    /// The parsed value.
    pub value: Value,
}

/// A parsed frontmatter.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// Entries in source order.
    pub entries: Vec<Entry>,
}

/// A frontmatter problem, located.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct FrontmatterError {
    /// The document.
    pub path: String,
    /// 1-based line in the document.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Splits `src` into its frontmatter and body. A document that does not start with `---` has
/// no frontmatter (`None`) and its whole text is the body.
pub fn split<'a>(path: &str, src: &'a str) -> Result<(Option<Frontmatter>, &'a str), FrontmatterError> {
    let err = |line: usize, message: String| FrontmatterError { path: path.to_string(), line, message };
    let Some(rest) = src.strip_prefix("---\n").or_else(|| src.strip_prefix("---\r\n")) else {
        return Ok((None, src));
    };
    let header_len = src.len() - rest.len();
    // Find the closing `---` line.
    let mut offset = 0usize;
    let mut close: Option<(usize, usize)> = None;
    for line in rest.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        if t == "---" {
            close = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let (yaml_end, body_start) = close.ok_or_else(|| err(1, "frontmatter opened with `---` is never closed".into()))?;
    let yaml = &rest[..yaml_end];
    let body = &src[header_len + body_start..];

    let value: Value = if yaml.trim().is_empty() {
        Value::Mapping(Default::default())
    } else {
        yaml_serde::from_str(yaml).map_err(|e| {
            // YAML counts a lone `\r` as a line break; the document's lines end at `\n`. Locate by
            // byte offset, which both agree on (fuzzing found the difference).
            let line = e.location().map_or(2, |l| {
                let at = l.index().min(yaml.len());
                let at = (0..=at).rev().find(|i| yaml.is_char_boundary(*i)).unwrap_or(0);
                yaml[..at].matches('\n').count() + 2
            });
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            err(line, format!("frontmatter is not valid YAML: {msg}"))
        })?
    };
    let Value::Mapping(map) = value else {
        return Err(err(2, "frontmatter is not a mapping of keys to values".into()));
    };

    let mut entries: Vec<Entry> = Vec::new();
    let mut pending_comments = String::new();
    for (i, line) in yaml.split_inclusive('\n').enumerate() {
        let lineno = i + 2;
        let starts_entry =
            line.as_bytes().first().is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'"' || *b == b'\'');
        if starts_entry {
            let key_end = line
                .find(':')
                .ok_or_else(|| err(lineno, format!("expected `key: value`, found `{}`", line.trim_end())))?;
            let key = line[..key_end].trim().trim_matches(['"', '\'']).to_string();
            let value = map
                .get(Value::String(key.clone()))
                .cloned()
                .ok_or_else(|| err(lineno, format!("key `{key}` not found in parsed frontmatter")))?;
            if entries.iter().any(|e| e.key == key) {
                return Err(err(lineno, format!("duplicate key `{key}`")));
            }
            let mut raw = std::mem::take(&mut pending_comments);
            raw.push_str(line);
            entries.push(Entry { key, raw, value });
        } else if line.starts_with('#') && entries.is_empty() {
            pending_comments.push_str(line);
        } else if let Some(last) = entries.last_mut() {
            last.raw.push_str(line);
        } else if !line.trim().is_empty() {
            return Err(err(lineno, format!("unexpected indented line before the first key: `{}`", line.trim_end())));
        }
    }
    Ok((Some(Frontmatter { entries }), body))
}

impl Frontmatter {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }

    /// The value of `key` as a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// A list value: a YAML sequence of strings or a comma-separated string.
    pub fn get_list(&self, key: &str) -> Option<Vec<String>> {
        match self.get(key)? {
            Value::Sequence(items) => Some(items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()),
            Value::String(s) => Some(s.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect()),
            _ => None,
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|e| e.key != key);
    }

    /// Keeps only the keys in `allowed`, in their source order.
    pub fn retain(&mut self, allowed: &[&str]) {
        self.entries.retain(|e| allowed.contains(&e.key.as_str()));
    }

    /// Sets `key` to a string scalar (double-quoted), replacing it in place or appending it.
    pub fn set_str(&mut self, key: &str, value: &str) {
        self.set_raw(key, &format!("{key}: {}\n", yaml_quote(value)), Value::String(value.to_string()));
    }

    /// Sets `key` to a block list of strings.
    pub fn set_list(&mut self, key: &str, values: &[String]) {
        let mut raw = format!("{key}:\n");
        for v in values {
            raw.push_str(&format!("  - {}\n", yaml_quote_if_needed(v)));
        }
        if values.is_empty() {
            raw = format!("{key}: []\n");
        }
        let value = Value::Sequence(values.iter().map(|v| Value::String(v.clone())).collect());
        self.set_raw(key, &raw, value);
    }

    /// Sets `key` to a raw YAML line (e.g. `priority: 90`), with its parsed value.
    pub fn set_raw(&mut self, key: &str, raw: &str, value: Value) {
        let entry = Entry { key: key.to_string(), raw: raw.to_string(), value };
        match self.entries.iter_mut().find(|e| e.key == key) {
            Some(e) => *e = entry,
            None => self.entries.push(entry),
        }
    }

    /// Renames `from` to `to`, keeping the value's source text.
    pub fn rename(&mut self, from: &str, to: &str) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.key == from) {
            e.raw = e.raw.replacen(from, to, 1);
            e.key = to.to_string();
        }
    }

    /// Renders `---\n<entries>---\n`.
    pub fn render(&self) -> String {
        let mut s = String::from("---\n");
        for e in &self.entries {
            s.push_str(&e.raw);
            if !e.raw.ends_with('\n') {
                s.push('\n');
            }
        }
        s.push_str("---\n");
        s
    }
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
pub fn yaml_quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// Plain when safe, double-quoted otherwise.
pub fn yaml_quote_if_needed(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-./ ()*".contains(&b))
        && !s.starts_with([' ', '-', '*'])
        && !s.ends_with(' ');
    if plain { s.to_string() } else { yaml_quote(s) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\nname: msd:plan\ndescription: Plan it\nallowed-tools:\n  - Read\n  - Bash\n---\nbody\n";

    #[test]
    fn frontmatter_round_trips_and_edits() {
        let (fm, body) = split("c.md", DOC).unwrap();
        let mut fm = fm.unwrap();
        assert_eq!(body, "body\n");
        assert_eq!(fm.render() + body, DOC);
        assert_eq!(fm.get_list("allowed-tools").unwrap(), ["Read", "Bash"]);
        fm.set_str("name", "msd-plan");
        fm.remove("allowed-tools");
        assert_eq!(fm.render(), "---\nname: \"msd-plan\"\ndescription: Plan it\n---\n");
    }

    #[test]
    fn frontmatter_errors_are_located() {
        let e = split("c.md", "---\nname: [unclosed\n---\n").unwrap_err();
        assert!(e.line >= 2, "{e}");
        assert!(split("c.md", "---\nname: x\n").is_err());
        assert!(split("c.md", "---\n- a\n---\n").is_err());
        assert_eq!(split("c.md", "no frontmatter").unwrap().0, None);
    }

    #[test]
    fn frontmatter_error_lines_count_only_newlines() {
        // A lone CR is a line break to YAML but not to the document (found by the fuzzer).
        let src = "---\nname: x\ndescription: a\r\r\r: b: c\n---\nbody\n";
        let e = split("c.md", src).unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn frontmatter_comma_list() {
        let (fm, _) = split("a.md", "---\ntools: Read, Write,Bash\n---\n").unwrap();
        assert_eq!(fm.unwrap().get_list("tools").unwrap(), ["Read", "Write", "Bash"]);
    }
}
