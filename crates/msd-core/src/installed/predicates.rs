//! The context predicate store: `CONTEXT.md` parsed into `CLASS.sub.key=value` facts, the
//! selector behind `msd_run query context-predicates`, and the committed index
//! `content/CONTEXT-INDEX.json` (SPEC section 10, contracts section 8).
//!
//! Input: one Markdown document. Output: a [`Parsed`] value: the predicates (id, class, value,
//! 1-based line, heading), the duplicate ids with every line they occur on, the malformed
//! declarations with a stable [`Malformed`] reason, and the headings that hold no predicate.
//!
//! Grammar (contracts 8.1), decided in one left-to-right pass:
//! - Lines split on `\n`; one trailing `\r` is ignored for every test (CRLF files parse like LF).
//! - Fenced blocks and HTML comments are skipped together, with the fence rule of
//!   [`crate::markup::markers`]: inside a fence only its closer counts, inside a comment only `-->`; a line
//!   whose trimmed text starts with `<!--` is skipped whole and opens a comment when it has no
//!   `-->`. An unclosed fence or comment skips to the end without error.
//! - `#` in column 0 is a heading (it names the section of the predicates below it); a line
//!   starting with `>` after leading whitespace is a blockquote; neither declares anything.
//! - A declaration is a whole line `` `ID=value` `` or a list item (`-`, `*`, `+`, `N.`) whose
//!   whole text is one; the inner text splits on the first `=`, which must not be its first
//!   character. Text inside prose, tables or headings never declares.
//! - Ids are checked structurally in one pass over their bytes (linear time by construction; the
//!   reference's regex was exponential): segments split on `.`, none empty, the class
//!   `[A-Z][A-Z0-9_-]*`, later segments `[A-Za-z0-9_-]+`. Values are non-empty and hold no line
//!   break (LF, CR, U+2028, U+2029).
//!
//! Invariants: diagnostics never change whether a line is accepted; the index carries no line
//! numbers, so it is unchanged by a pure line shift and changed by any value edit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::markup::markers::{Fence, fence_closes, fence_opener, js_is_space, js_trim};

/// Why a backticked `ID=value` line was rejected. The set is closed; a test locks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Malformed {
    /// The id has an empty segment (`A..b`, `A.`, `.a`).
    EmptySegment,
    /// The class (first segment) starts with a lowercase letter.
    LowercaseLeadingClass,
    /// A character outside the id alphabet (the class is `[A-Z][A-Z0-9_-]*`, later segments
    /// `[A-Za-z0-9_-]+`).
    InvalidIdChars,
    /// Nothing after the `=`.
    EmptyValue,
    /// The value holds a line break (CR, U+2028 or U+2029).
    ValueContainsNewline,
}

impl Malformed {
    /// Every reason, for locks and documentation.
    pub const ALL: [Malformed; 5] = [
        Malformed::EmptySegment,
        Malformed::LowercaseLeadingClass,
        Malformed::InvalidIdChars,
        Malformed::EmptyValue,
        Malformed::ValueContainsNewline,
    ];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Malformed::EmptySegment => "empty-segment",
            Malformed::LowercaseLeadingClass => "lowercase-leading-class",
            Malformed::InvalidIdChars => "invalid-id-chars",
            Malformed::EmptyValue => "empty-value",
            Malformed::ValueContainsNewline => "value-contains-newline",
        }
    }

    /// What to do about it.
    pub fn hint(self) -> &'static str {
        match self {
            Malformed::EmptySegment => "remove the doubled, leading or trailing `.` from the id",
            Malformed::LowercaseLeadingClass => "the class (before the first `.`) is upper case: `RULE.x=...`",
            Malformed::InvalidIdChars => {
                "ids use `[A-Z][A-Z0-9_-]*` for the class and `[A-Za-z0-9_-]+` for later segments, joined by `.`"
            }
            Malformed::EmptyValue => "write a value after the `=`",
            Malformed::ValueContainsNewline => "keep the value on one line",
        }
    }
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One accepted predicate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Predicate {
    /// The whole id (`RULE.install.atomic`).
    pub id: String,
    /// The class: the id's first segment.
    pub class: String,
    /// Everything after the first `=`, verbatim.
    pub value: String,
    /// 1-based source line.
    pub line: usize,
    /// The text of the heading above it (empty before the first heading).
    pub section: String,
}

/// A rejected declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MalformedLine {
    /// 1-based source line.
    pub line: usize,
    /// The line, trailing whitespace removed.
    pub text: String,
    /// Why.
    pub reason: Malformed,
}

/// An id declared more than once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Duplicate {
    /// The id.
    pub id: String,
    /// How many times it occurs.
    pub count: usize,
    /// Every line it occurs on, ascending.
    pub lines: Vec<usize>,
}

/// A parsed document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Parsed {
    /// Accepted predicates in document order.
    pub predicates: Vec<Predicate>,
    /// Ids that occur more than once, sorted by id.
    pub duplicates: Vec<Duplicate>,
    /// Rejected declarations in document order.
    pub malformed: Vec<MalformedLine>,
    /// Non-empty headings with no predicate under them, unique, in order of first appearance.
    pub skipped_sections: Vec<String>,
}

/// Parses `src`.
pub fn parse(src: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut fence: Option<Fence> = None;
    let mut in_comment = false;
    let mut section = String::new();
    let mut headings: Vec<String> = Vec::new();
    for (idx, raw) in src.split('\n').enumerate() {
        let lineno = idx + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(f) = fence {
            if fence_closes(line, f) {
                fence = None;
            }
            continue;
        }
        if in_comment {
            if line.contains("-->") {
                in_comment = false;
            }
            continue;
        }
        if js_trim(line).starts_with("<!--") {
            in_comment = !line.contains("-->");
            continue;
        }
        if let Some(f) = fence_opener(line) {
            fence = Some(f);
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            section = js_trim(rest.trim_start_matches('#')).to_string();
            headings.push(section.clone());
            continue;
        }
        if line.trim_start_matches(js_is_space).starts_with('>') {
            continue;
        }
        let text = line.trim_end_matches(js_is_space);
        let Some(inner) = declaration(text) else { continue };
        let Some(eq) = inner.find('=').filter(|&i| i > 0) else { continue };
        let (id, value) = (&inner[..eq], &inner[eq + 1..]);
        match check(id, value) {
            Ok(()) => out.predicates.push(Predicate {
                id: id.to_string(),
                class: id.split('.').next().unwrap_or_default().to_string(),
                value: value.to_string(),
                line: lineno,
                section: section.clone(),
            }),
            Err(reason) => out.malformed.push(MalformedLine { line: lineno, text: text.to_string(), reason }),
        }
    }
    let mut by_id: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for p in &out.predicates {
        by_id.entry(&p.id).or_default().push(p.line);
    }
    out.duplicates = by_id
        .into_iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(id, lines)| Duplicate { id: id.to_string(), count: lines.len(), lines })
        .collect();
    let used: std::collections::BTreeSet<&str> = out.predicates.iter().map(|p| p.section.as_str()).collect();
    for h in headings {
        if !h.is_empty() && !used.contains(h.as_str()) && !out.skipped_sections.contains(&h) {
            out.skipped_sections.push(h);
        }
    }
    out
}

/// The inner text of a declaration line (already right-trimmed): a bare `` `...` `` or a list
/// item whose whole text is one.
fn declaration(text: &str) -> Option<&str> {
    fn bare(s: &str) -> Option<&str> {
        (s.len() > 2 && s.starts_with('`') && s.ends_with('`')).then(|| &s[1..s.len() - 1])
    }
    let s = text.trim_start_matches([' ', '\t']);
    if s.starts_with('`') {
        return bare(s);
    }
    let s = text.trim_start_matches(js_is_space);
    let after_marker = if let Some(r) = s.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        s[digits..].strip_prefix('.').filter(|_| digits > 0)?
    };
    let body = after_marker.trim_start_matches([' ', '\t']);
    if body.len() == after_marker.len() {
        return None;
    }
    bare(body)
}

/// Checks an id and a value; the first failing check names the reason.
fn check(id: &str, value: &str) -> Result<(), Malformed> {
    if id.split('.').any(str::is_empty) {
        return Err(Malformed::EmptySegment);
    }
    let mut segments = id.split('.');
    let class = segments.next().unwrap_or_default();
    let first = class.as_bytes()[0];
    if first.is_ascii_lowercase() {
        return Err(Malformed::LowercaseLeadingClass);
    }
    let class_ok = first.is_ascii_uppercase()
        && class.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    let rest_ok = segments.all(|s| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    if !class_ok || !rest_ok {
        return Err(Malformed::InvalidIdChars);
    }
    if value.is_empty() {
        return Err(Malformed::EmptyValue);
    }
    if value.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return Err(Malformed::ValueContainsNewline);
    }
    Ok(())
}

/// Selection criteria, ANDed; `None` matches everything.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    /// The class, matched exactly.
    pub class: Option<String>,
    /// A raw prefix of the id (not segment-aware: `PRED.k32` matches `PRED.k320.x`).
    pub prefix: Option<String>,
    /// A case-insensitive substring of `id + " " + value`.
    pub contains: Option<String>,
}

impl Selector {
    /// Whether `p` matches every given criterion.
    pub fn matches(&self, p: &Predicate) -> bool {
        self.class.as_ref().is_none_or(|c| &p.class == c)
            && self.prefix.as_ref().is_none_or(|x| p.id.starts_with(x.as_str()))
            && self
                .contains
                .as_ref()
                .is_none_or(|s| format!("{} {}", p.id, p.value).to_lowercase().contains(&s.to_lowercase()))
    }

    /// The matching predicates, in document order.
    pub fn select<'a>(&self, predicates: &'a [Predicate]) -> Vec<&'a Predicate> {
        predicates.iter().filter(|p| self.matches(p)).collect()
    }
}

/// Format version of the index.
pub const INDEX_SCHEMA_VERSION: u32 = 1;

/// The committed index: no line numbers, so moving text without changing a fact leaves it alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    /// Format version.
    pub schema_version: u32,
    /// Number of predicates.
    pub count: usize,
    /// Predicates per class, sorted by class.
    pub classes: BTreeMap<String, usize>,
    /// Every predicate, sorted by id (then source order).
    pub predicates: Vec<IndexEntry>,
}

/// One predicate of the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    /// The id.
    pub id: String,
    /// Its class.
    pub class: String,
    /// Its value.
    pub value: String,
}

impl Index {
    /// Builds the index of parsed predicates.
    pub fn build(predicates: &[Predicate]) -> Index {
        let mut sorted: Vec<&Predicate> = predicates.iter().collect();
        sorted.sort_by(|a, b| a.id.cmp(&b.id).then(a.line.cmp(&b.line)));
        let mut classes = BTreeMap::new();
        for p in &sorted {
            *classes.entry(p.class.clone()).or_insert(0) += 1;
        }
        Index {
            schema_version: INDEX_SCHEMA_VERSION,
            count: sorted.len(),
            classes,
            predicates: sorted
                .into_iter()
                .map(|p| IndexEntry { id: p.id.clone(), class: p.class.clone(), value: p.value.clone() })
                .collect(),
        }
    }

    /// The committed form: pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("index serializes");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(src: &str) -> Vec<String> {
        parse(src).predicates.into_iter().map(|p| p.id).collect()
    }

    fn reason(line: &str) -> Option<Malformed> {
        parse(line).malformed.first().map(|m| m.reason)
    }

    #[test]
    fn predicates_both_declaration_forms() {
        let src = "# Caps\n`CAP.a=1`\n- `CAP.b=2`\n* `CAP.c=3`\n+ `CAP.d=4`\n12. `CAP.e=5`\n    - `CAP.f=6`\n";
        let p = parse(src);
        assert_eq!(ids(src), ["CAP.a", "CAP.b", "CAP.c", "CAP.d", "CAP.e", "CAP.f"]);
        assert!(p.predicates.iter().all(|x| x.section == "Caps" && x.class == "CAP"));
        assert_eq!(p.predicates[4].line, 6);
    }

    #[test]
    fn predicates_value_is_verbatim_after_the_first_equals() {
        let p = parse("`RULE.x=a = b `c` =`\n");
        assert_eq!(p.predicates[0].value, "a = b `c` =");
        // Trailing spaces after the closing backtick are trimmed, inner ones kept.
        let p = parse("`RULE.y=v  `   \n");
        assert_eq!(p.predicates[0].value, "v  ");
    }

    #[test]
    fn predicates_equals_position_boundaries() {
        assert!(parse("`=x`\n").predicates.is_empty());
        assert!(parse("`=x`\n").malformed.is_empty(), "`=` at index 0 is not a declaration");
        assert_eq!(ids("`A=x`\n"), ["A"]);
        assert_eq!(ids("`AB=x`\n"), ["AB"]);
        assert!(parse("``\n").predicates.is_empty());
        assert!(parse("`A`\n").malformed.is_empty(), "no `=`, no diagnostic");
    }

    #[test]
    fn predicates_prose_tables_and_headings_never_declare() {
        let src = "Some `RULE.a=1` in prose.\n| `RULE.b=2` |\n# `RULE.c=3`\n> `RULE.d=4`\n-`RULE.e=5`\n";
        assert!(ids(src).is_empty());
    }

    #[test]
    fn predicates_each_malformed_reason() {
        assert_eq!(reason("`A..b=1`"), Some(Malformed::EmptySegment));
        assert_eq!(reason("`A.=1`"), Some(Malformed::EmptySegment));
        assert_eq!(reason("`rule.a=1`"), Some(Malformed::LowercaseLeadingClass));
        assert_eq!(reason("`Ab.c=1`"), Some(Malformed::InvalidIdChars));
        assert_eq!(reason("`1A.c=1`"), Some(Malformed::InvalidIdChars));
        assert_eq!(reason("`A.b c=1`"), Some(Malformed::InvalidIdChars));
        assert_eq!(reason("`A.b=`"), Some(Malformed::EmptyValue));
        assert_eq!(reason("`A.b=x\u{2028}y`"), Some(Malformed::ValueContainsNewline));
        assert_eq!(reason("`A.b=x\ry`"), Some(Malformed::ValueContainsNewline));
        let mut seen: Vec<Malformed> = ["`A..b=1`", "`rule.a=1`", "`Ab.c=1`", "`A.b=`", "`A.b=x\u{2029}`"]
            .iter()
            .filter_map(|l| reason(l))
            .collect();
        seen.sort();
        assert_eq!(seen, Malformed::ALL, "a case per reason");
        // Id checks come before value checks.
        assert_eq!(reason("`a..b=`"), Some(Malformed::EmptySegment));
        let m = &parse("x\n- `rule.a=1`  \n").malformed[0];
        assert_eq!((m.line, m.text.as_str()), (2, "- `rule.a=1`"));
    }

    #[test]
    fn predicates_crlf_and_mixed_line_ends() {
        let lf = "# S\n- `A.a=1`\n```\n`A.b=2`\n```\n`A.c=3`\n";
        let crlf = lf.replace('\n', "\r\n");
        assert_eq!(parse(lf), parse(&crlf));
        let mixed = "# S\r\n- `A.a=1`\n```\r\n`A.b=2`\n```\r\n`A.c=3`\r\n";
        assert_eq!(parse(lf), parse(mixed));
        assert_eq!(ids(lf), ["A.a", "A.c"]);
        // A lone CR is not a line end.
        assert!(ids("`A.a=1`\r`A.b=2`\r").is_empty());
    }

    #[test]
    fn predicates_fences_and_comments_interleave() {
        // A fence inside a comment is comment text: the comment ends at `-->`.
        let src = "<!--\n```\n-->\n`A.live=1`\n";
        assert_eq!(ids(src), ["A.live"]);
        // A comment opener inside a fence is fence text: the fence ends at its closer.
        let src = "```\n<!--\n```\n`A.live=1`\n";
        assert_eq!(ids(src), ["A.live"]);
        // A fence inside a comment with no closer anywhere: the comment still ends at `-->`.
        let src = "<!-- start\n~~~\n`A.dead=1`\n-->\n`A.live=2`\n";
        assert_eq!(ids(src), ["A.live"]);
        // Declarations inside either are never live and never counted as duplicates.
        let src = "`A.x=1`\n```\n`A.x=2`\n```\n<!-- `A.x=3` -->\n<!--\n`A.x=4`\n-->\n";
        let p = parse(src);
        assert_eq!(p.predicates.len(), 1);
        assert!(p.duplicates.is_empty());
        // A one-line comment followed by text is skipped whole; an unclosed comment skips to EOF.
        assert!(ids("<!-- x --> `A.a=1`\n").is_empty());
        assert!(ids("<!--\n`A.a=1`\n").is_empty());
        assert!(ids("```\n`A.a=1`\n").is_empty());
        // A shorter or different closer does not close; four-space indent is not a fence.
        assert!(ids("````\n```\n`A.a=1`\n~~~~\n").is_empty());
        assert_eq!(ids("    ```\n`A.a=1`\n"), ["A.a"]);
    }

    #[test]
    fn predicates_duplicates_name_their_lines() {
        let p = parse("`B.x=1`\n`A.y=1`\n`B.x=2`\n\n`B.x=3`\n`A.y=2`\n");
        assert_eq!(
            p.duplicates,
            vec![
                Duplicate { id: "A.y".into(), count: 2, lines: vec![2, 6] },
                Duplicate { id: "B.x".into(), count: 3, lines: vec![1, 3, 5] },
            ]
        );
    }

    #[test]
    fn predicates_headings_and_skipped_sections() {
        let p = parse("#! shebang\n## Empty\n## Full ##\n`A.a=1`\n## Empty\n  # not a heading `A.b=1`\n");
        assert_eq!(p.predicates[0].section, "Full ##");
        assert_eq!(p.skipped_sections, ["! shebang", "Empty"]);
    }

    #[test]
    fn predicates_sixty_dot_id_is_linear() {
        // The reference's regex backtracked exponentially on this shape; the structural check
        // visits each byte a constant number of times, so this returns at once.
        let id = format!("A{}", ".a".repeat(60));
        assert_eq!(ids(&format!("`{id}=v`\n")), [id]);
        let bad = format!("`A{}!=v`", ".a".repeat(60));
        assert_eq!(reason(&bad), Some(Malformed::InvalidIdChars));
        let empty = format!("`A{}.=v`", ".a".repeat(60));
        assert_eq!(reason(&empty), Some(Malformed::EmptySegment));
    }

    #[test]
    fn predicates_selector_ands_its_criteria() {
        let p = parse("`PRED.k320.x=Alpha`\n`PRED.k32=beta`\n`RULE.k32=ALPHA`\n").predicates;
        let sel = |class: Option<&str>, prefix: Option<&str>, contains: Option<&str>| -> Vec<&str> {
            Selector {
                class: class.map(str::to_string),
                prefix: prefix.map(str::to_string),
                contains: contains.map(str::to_string),
            }
            .select(&p)
            .into_iter()
            .map(|x| x.id.as_str())
            .collect()
        };
        assert_eq!(sel(Some("PRED"), None, None), ["PRED.k320.x", "PRED.k32"]);
        assert_eq!(sel(None, Some("PRED.k32"), None), ["PRED.k320.x", "PRED.k32"]);
        assert_eq!(sel(None, None, Some("alpha")), ["PRED.k320.x", "RULE.k32"]);
        assert_eq!(sel(Some("PRED"), None, Some("alpha")), ["PRED.k320.x"]);
        assert_eq!(sel(None, None, Some("k32 beta")), ["PRED.k32"], "id and value joined by a space");
    }

    #[test]
    fn predicates_index_ignores_line_shifts_and_sees_value_edits() {
        let a = "# X\n`B.b=2`\n`A.a=1`\n";
        let shifted = "# X\n\nintro\n\n`B.b=2`\n\n`A.a=1`\n";
        let edited = "# X\n`B.b=3`\n`A.a=1`\n";
        let idx = |s: &str| Index::build(&parse(s).predicates).render();
        assert_eq!(idx(a), idx(shifted));
        assert_ne!(idx(a), idx(edited));
        assert!(!idx(a).contains("line"));
        let i = Index::build(&parse(a).predicates);
        assert_eq!(i.predicates[0].id, "A.a");
        assert_eq!(i.classes.get("B"), Some(&1));
    }
}
