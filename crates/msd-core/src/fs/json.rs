//! Positions in JSON text, for errors that serde cannot locate: [`locate_path`] walks the
//! document's syntax tree (JSONC, through `jsonc-parser`, whose nodes carry byte ranges) to the
//! value at a path of keys and indices, so an error in the second cap rule points at the
//! second rule, not at the first `"glob"` of the file.

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

/// One step of a path into a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg<'s> {
    /// A key of an object.
    Key(&'s str),
    /// An index of an array.
    Index(usize),
}

/// The 1-based line and column of the byte offset `at` in `text`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |p| p + 1)..].chars().count() + 1;
    (line, col)
}

/// The 1-based line and column of the deepest node of `path` found in `text`: the property
/// (its key) when the path ends at a key, the element when it ends at an index; `(1, 1)` when
/// the text does not parse or the first step is absent.
pub fn locate_path(text: &str, path: &[Seg<'_>]) -> (usize, usize) {
    let Ok(parsed) = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default()) else {
        return (1, 1);
    };
    let Some(mut node) = parsed.value else { return (1, 1) };
    let mut at = None;
    for seg in path {
        let next = match (seg, &node) {
            (Seg::Key(k), Value::Object(o)) => o.properties.iter().find(|p| prop_name(&p.name) == *k).map(|p| {
                at = Some(p.range.start);
                p.value.clone()
            }),
            (Seg::Index(i), Value::Array(a)) => a.elements.get(*i).map(|v| {
                at = Some(v.range().start);
                v.clone()
            }),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    at.map_or((1, 1), |at| line_col(text, at))
}

fn prop_name<'a>(name: &'a ObjectPropName<'a>) -> &'a str {
    match name {
        ObjectPropName::String(s) => &s.value,
        ObjectPropName::Word(w) => w.value,
    }
}

/// Finds the 1-based line and column of the first occurrence of `needle` in `text`, for files
/// whose errors name a key rather than a path (`(1, 1)` when absent).
pub fn locate(text: &str, needle: &str) -> (usize, usize) {
    match text.find(needle) {
        Some(i) => line_col(text, i),
        None => (1, 1),
    }
}

/// A key that occurs twice in one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key.
    pub key: String,
    /// The dotted path of the object holding it (empty for the top level).
    pub within: String,
    /// 1-based line and column of its second occurrence.
    pub line: usize,
    /// See `line`.
    pub col: usize,
}

/// The first key that occurs twice in one object of `text` (JSON or JSONC), in document order;
/// `None` when there is none or the text does not parse. serde keeps only the last of two equal
/// keys (and a runtime may read the first): a duplicate is an error, never silently dropped.
pub fn first_duplicate_key(text: &str) -> Option<DuplicateKey> {
    let parsed = jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default()).ok()?;
    let mut found = None;
    walk_dup(text, parsed.value.as_ref()?, &mut String::new(), &mut found);
    found
}

fn walk_dup(text: &str, v: &Value<'_>, path: &mut String, found: &mut Option<DuplicateKey>) {
    if found.is_some() {
        return;
    }
    match v {
        Value::Object(o) => {
            let mut seen = std::collections::HashSet::new();
            for p in &o.properties {
                let name = prop_name(&p.name);
                if !seen.insert(name) {
                    let (line, col) = line_col(text, p.range.start);
                    *found = Some(DuplicateKey { key: name.to_string(), within: path.clone(), line, col });
                    return;
                }
            }
            for p in &o.properties {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(prop_name(&p.name));
                walk_dup(text, &p.value, path, found);
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, e) in a.elements.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk_dup(text, e, path, found);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_duplicate_keys_are_found_at_any_depth() {
        assert_eq!(first_duplicate_key("{\"a\": 1, \"b\": 2}"), None);
        let d = first_duplicate_key("{\"a\": 1,\n \"a\": 2}").unwrap();
        assert_eq!((d.key.as_str(), d.within.as_str(), d.line, d.col), ("a", "", 2, 2));
        let d = first_duplicate_key("{\"h\": [{\"x\": {\"k\": 1, \"k\": 2}}]}").unwrap();
        assert_eq!((d.key.as_str(), d.within.as_str()), ("k", "h[0].x"));
        assert_eq!(first_duplicate_key("not json"), None);
    }

    #[test]
    fn json_locate_path_names_the_nth_element() {
        let text = "{\n  \"caps\": [\n    {\"glob\": \"a\"},\n    {\"glob\": \"b\"}\n  ]\n}\n";
        assert_eq!(locate_path(text, &[Seg::Key("caps"), Seg::Index(1), Seg::Key("glob")]), (4, 6));
        assert_eq!(locate_path(text, &[Seg::Key("caps"), Seg::Index(0), Seg::Key("glob")]), (3, 6));
        assert_eq!(locate_path(text, &[Seg::Key("caps")]), (2, 3));
        // An absent step: the deepest node found.
        assert_eq!(locate_path(text, &[Seg::Key("caps"), Seg::Index(7)]), (2, 3));
        assert_eq!(locate_path("not json", &[Seg::Key("x")]), (1, 1));
    }

    #[test]
    fn json_locate_path_reads_comments_and_counts_characters() {
        let text = "// é\n{\"é\": 1, /* c */ \"b\": 2}";
        assert_eq!(locate_path(text, &[Seg::Key("b")]), (2, 18));
    }
}
