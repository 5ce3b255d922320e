//! The marker parser: sections, protected sentinels and the isolate prefix, in one left-to-right
//! pass over fences and HTML comments together.
//!
//! Input: one UTF-8 document and its path. Output: a [`Document`]: every line with its own
//! terminator, the sections (explicit and gap) partitioning every non-marker byte in order, and
//! the protected blocks. [`Document::strip`] is the document minus its marker lines; for a
//! document without markers it returns the input byte for byte (mixed LF/CRLF and a BOM
//! included).
//!
//! Grammar (SPEC section 3, contracts section 5): a marker is a line whose JS-trimmed text is one
//! HTML comment `<!-- msd:section id=".." when=".." -->`, `<!-- /msd:section -->`,
//! `<!-- msd:protected -->`, `<!-- msd:protected:start -->` or `<!-- msd:protected:end -->`.
//! Inside a fence only the matching closer counts; inside a multi-line comment only `-->` counts.
//! Every failure is a [`MarkerError`] with a stable [`Reason`] and file:line.
//!
//! Decisions beyond the reference (contracts section 5): ids `gap-N` are reserved; a section may
//! carry `shrink=` and `priority=` for the composer; an `isolate-*` section must lead the document
//! and stay verbatim, and so must a section that holds protected text (`isolate_not_leading`,
//! `load_bearing_shrink`); `<!-->` is a complete (empty) comment, not an opener; a BOM in front
//! of a marker on line 1 is kept (it becomes the first gap) instead of leaving with the marker.

use std::collections::BTreeSet;
use std::fmt;

use crate::markup::when::Atom;

/// Why a document's markers are malformed. The set is closed; tests lock it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// EOF while a section is open (reported at the open line).
    UnclosedSection,
    /// A close marker with no open section.
    UnmatchedClose,
    /// An open marker inside an open section.
    NestedSection,
    /// A section id used twice (reported at the second).
    DuplicateId,
    /// Open marker without `id`.
    MissingId,
    /// Open marker without `when`.
    MissingWhen,
    /// `id` does not match `[a-z0-9]([a-z0-9-]*[a-z0-9])?`.
    MalformedId,
    /// `when` is not one of the atoms of [`crate::markup::when::ATOMS`].
    UnknownWhen,
    /// Not a clean run of `key="value"`, a duplicate key, or a bad `shrink`/`priority` value.
    MalformedAttributes,
    /// An attribute other than `id`, `when`, `shrink`, `priority`.
    UnrecognizedAttribute,
    /// `/msd:section` followed by anything.
    CloseWithAttributes,
    /// An id of the form `gap-N`, reserved for the gaps between sections.
    ReservedId,
    /// `protected:start` while another is open.
    ProtectedStartWhileOpen,
    /// `protected:end` with no start.
    ProtectedEndWithoutStart,
    /// A protected pair covering nothing.
    ProtectedEmpty,
    /// `protected:start` never closed.
    ProtectedUnclosed,
    /// A single `protected` marker with no block after it.
    ProtectedSingleWithoutContent,
    /// `msd:protected...` that is none of the three sentinels.
    ProtectedUnknownSentinel,
    /// An `isolate-*` section preceded by text or by a non-isolate section.
    IsolateNotLeading,
    /// A `shrink` other than `verbatim` on an `isolate-*` section or on a section holding
    /// protected text.
    LoadBearingShrink,
    /// `<!-- msd:... -->` that is no marker of the grammar (a typo would otherwise reach the
    /// emitted file).
    UnknownMarker,
}

impl Reason {
    /// Every reason, for locks and documentation.
    pub const ALL: [Reason; 21] = [
        Reason::UnclosedSection,
        Reason::UnmatchedClose,
        Reason::NestedSection,
        Reason::DuplicateId,
        Reason::MissingId,
        Reason::MissingWhen,
        Reason::MalformedId,
        Reason::UnknownWhen,
        Reason::MalformedAttributes,
        Reason::UnrecognizedAttribute,
        Reason::CloseWithAttributes,
        Reason::ReservedId,
        Reason::ProtectedStartWhileOpen,
        Reason::ProtectedEndWithoutStart,
        Reason::ProtectedEmpty,
        Reason::ProtectedUnclosed,
        Reason::ProtectedSingleWithoutContent,
        Reason::ProtectedUnknownSentinel,
        Reason::IsolateNotLeading,
        Reason::LoadBearingShrink,
        Reason::UnknownMarker,
    ];

    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::UnclosedSection => "unclosed_section",
            Reason::UnmatchedClose => "unmatched_close",
            Reason::NestedSection => "nested_section",
            Reason::DuplicateId => "duplicate_id",
            Reason::MissingId => "missing_id",
            Reason::MissingWhen => "missing_when",
            Reason::MalformedId => "malformed_id",
            Reason::UnknownWhen => "unknown_when",
            Reason::MalformedAttributes => "malformed_attributes",
            Reason::UnrecognizedAttribute => "unrecognized_attribute",
            Reason::CloseWithAttributes => "close_with_attributes",
            Reason::ReservedId => "reserved_id",
            Reason::ProtectedStartWhileOpen => "protected_start_while_open",
            Reason::ProtectedEndWithoutStart => "protected_end_without_start",
            Reason::ProtectedEmpty => "protected_empty",
            Reason::ProtectedUnclosed => "protected_unclosed",
            Reason::ProtectedSingleWithoutContent => "protected_single_without_content",
            Reason::ProtectedUnknownSentinel => "protected_unknown_sentinel",
            Reason::IsolateNotLeading => "isolate_not_leading",
            Reason::LoadBearingShrink => "load_bearing_shrink",
            Reason::UnknownMarker => "unknown_marker",
        }
    }

    fn hint(self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            Reason::UnclosedSection => "add `<!-- /msd:section -->` on its own line where the section ends",
            Reason::UnmatchedClose => "remove the close marker or add the open marker it belongs to",
            Reason::NestedSection => "close the outer section first; sections do not nest",
            Reason::DuplicateId => "give each section of a file its own id",
            Reason::MissingId => "add id=\"...\" to the open marker",
            Reason::MissingWhen => "add when=\"...\" with one atom (e.g. when=\"always\")",
            Reason::MalformedId => "ids are lowercase letters, digits and inner hyphens",
            Reason::UnknownWhen => {
                return std::borrow::Cow::Owned(format!(
                    "use exactly one of the {} atoms of SPEC section 3, no operators: {}",
                    crate::markup::when::ATOMS.len(),
                    crate::markup::when::ATOMS.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
                ));
            }
            Reason::MalformedAttributes => {
                "write attributes as key=\"value\", each key once; shrink is verbatim|head:N|truncate:N|drop, priority a number"
            }
            Reason::UnrecognizedAttribute => "a section takes only id, when, shrink and priority",
            Reason::CloseWithAttributes => "the close marker is exactly `<!-- /msd:section -->`",
            Reason::ReservedId => "`gap-N` ids are reserved for unmarked text; rename the section",
            Reason::ProtectedStartWhileOpen => {
                "close the open protected region with `<!-- msd:protected:end -->` first"
            }
            Reason::ProtectedEndWithoutStart => "add `<!-- msd:protected:start -->` before it or remove it",
            Reason::ProtectedEmpty => "put the protected text between start and end, or remove the pair",
            Reason::ProtectedUnclosed => "add `<!-- msd:protected:end -->` where the region ends",
            Reason::ProtectedSingleWithoutContent => "put the protected block right after the marker, or remove it",
            Reason::ProtectedUnknownSentinel => "use `msd:protected`, `msd:protected:start` or `msd:protected:end`",
            Reason::UnknownMarker => {
                "the msd: markers are `msd:section`, `/msd:section`, `msd:protected`, `msd:protected:start` and `msd:protected:end`; fix the typo or drop the `msd:` prefix"
            }
            Reason::IsolateNotLeading => {
                "isolate sections form the document's prefix: move them to the very top, before any text or other section"
            }
            Reason::LoadBearingShrink => {
                "isolate sections and sections holding protected text are never shrunk: remove `shrink=` or move the protected text out"
            }
        })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A malformed marker, located.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {reason}: {detail}")]
pub struct MarkerError {
    /// The document's path.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// The stable reason.
    pub reason: Reason,
    /// What was found.
    pub detail: String,
}

impl MarkerError {
    /// What to do about it.
    pub fn hint(&self) -> std::borrow::Cow<'static, str> {
        self.reason.hint()
    }
}

/// How the composer may shrink a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "strategy", content = "n")]
pub enum Shrink {
    /// Never touched.
    Verbatim,
    /// Keep the first N lines.
    Head(usize),
    /// Cut proportionally, never below N bytes.
    Truncate(usize),
    /// May be omitted.
    Drop,
}

impl fmt::Display for Shrink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shrink::Verbatim => f.write_str("verbatim"),
            Shrink::Head(n) => write!(f, "head:{n}"),
            Shrink::Truncate(n) => write!(f, "truncate:{n}"),
            Shrink::Drop => f.write_str("drop"),
        }
    }
}

impl Shrink {
    fn parse(s: &str) -> Option<Shrink> {
        let num = |t: &str| -> Option<usize> {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok()).flatten()
        };
        match s {
            "verbatim" => Some(Shrink::Verbatim),
            "drop" => Some(Shrink::Drop),
            _ => {
                if let Some(n) = s.strip_prefix("head:") {
                    num(n).map(Shrink::Head)
                } else {
                    s.strip_prefix("truncate:").and_then(num).map(Shrink::Truncate)
                }
            }
        }
    }
}

/// One section: explicit (between markers) or a gap (text outside markers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The id (`gap-N` for gaps).
    pub id: String,
    /// The gating atom (`always` for gaps).
    pub when: Atom,
    /// Whether the section was written with markers.
    pub explicit: bool,
    /// 1-based line: the open marker for explicit sections, the first line for gaps.
    pub start_line: usize,
    /// 1-based line: the close marker for explicit sections, the last line for gaps.
    pub end_line: usize,
    /// Whether a protected block covers any of its lines.
    pub protected: bool,
    /// The body: every line between the markers with its own terminator, marker lines removed.
    pub body: String,
    /// The composer strategy.
    pub shrink: Shrink,
    /// The composer priority (higher is kept longer).
    pub priority: u32,
}

impl Section {
    /// Whether this section belongs to the isolate prefix.
    pub fn is_isolate(&self) -> bool {
        self.explicit && is_isolate_id(&self.id)
    }

    /// Whether the composer must keep this section byte for byte: verbatim, isolate or
    /// protected.
    pub fn is_load_bearing(&self) -> bool {
        self.shrink == Shrink::Verbatim || self.is_isolate() || self.protected
    }
}

/// A protected block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    /// 1-based line of the (start) sentinel.
    pub marker_line: usize,
    /// Whether it was a start/end pair.
    pub paired: bool,
    /// 1-based numbers of the covered non-blank lines.
    pub lines: Vec<usize>,
}

/// One line of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    start: usize,
    content_end: usize,
    end: usize,
}

/// A parsed document.
#[derive(Debug, Clone)]
pub struct Document<'a> {
    src: &'a str,
    lines: Vec<Line>,
    marker: Vec<bool>,
    /// Sections in document order, covering every non-marker line exactly once.
    pub sections: Vec<Section>,
    /// Protected blocks in document order.
    pub protected: Vec<Protected>,
}

/// JavaScript's `String.prototype.trim` whitespace set: it strips U+FEFF and keeps U+0085.
pub fn js_is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// JavaScript `trim()`.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(js_is_space)
}

/// A fence opener: `(char, run length)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence {
    ch: u8,
    len: usize,
}

/// Tests `line` (terminator removed) as a fence opener: at most 3 spaces, then 3+ backticks or
/// tildes; a backtick opener's info string must not contain a backtick.
pub fn fence_opener(line: &str) -> Option<Fence> {
    let b = line.as_bytes();
    let indent = b.iter().take_while(|&&c| c == b' ').count();
    if indent > 3 {
        return None;
    }
    let ch = *b.get(indent)?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = b[indent..].iter().take_while(|&&c| c == ch).count();
    if len < 3 {
        return None;
    }
    if ch == b'`' && b[indent + len..].contains(&b'`') {
        return None;
    }
    Some(Fence { ch, len })
}

/// Tests `line` as the closer of `fence`: same character, run at least as long, then only
/// whitespace.
pub fn fence_closes(line: &str, fence: Fence) -> bool {
    let b = line.as_bytes();
    let indent = b.iter().take_while(|&&c| c == b' ').count();
    if indent > 3 {
        return false;
    }
    let run = b[indent..].iter().take_while(|&&c| c == fence.ch).count();
    run >= fence.len && line[indent + run..].chars().all(js_is_space)
}

fn split_lines(src: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let b = src.as_bytes();
    let mut start = 0;
    while start < b.len() {
        match memchr_nl(&b[start..]) {
            Some(off) => {
                let nl = start + off;
                let content_end = if nl > start && b[nl - 1] == b'\r' { nl - 1 } else { nl };
                lines.push(Line { start, content_end, end: nl + 1 });
                start = nl + 1;
            }
            None => {
                lines.push(Line { start, content_end: b.len(), end: b.len() });
                start = b.len();
            }
        }
    }
    lines
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// What a candidate comment line turned out to be.
enum Candidate<'t> {
    Open(&'t str),
    Close,
    CloseWithAttrs,
    ProtectedSingle,
    ProtectedStart,
    ProtectedEnd,
    ProtectedUnknown,
    Unknown,
    Other,
}

fn classify(inner: &str) -> Candidate<'_> {
    const SECTION: &str = "msd:section";
    const CLOSE: &str = "/msd:section";
    if inner == CLOSE {
        return Candidate::Close;
    }
    if let Some(rest) = inner.strip_prefix(CLOSE) {
        return if rest.starts_with(js_is_space) { Candidate::CloseWithAttrs } else { Candidate::Unknown };
    }
    if let Some(rest) = inner.strip_prefix(SECTION) {
        return if rest.is_empty() || rest.starts_with(js_is_space) {
            Candidate::Open(rest)
        } else {
            Candidate::Unknown
        };
    }
    match inner {
        "msd:protected" => Candidate::ProtectedSingle,
        "msd:protected:start" => Candidate::ProtectedStart,
        "msd:protected:end" => Candidate::ProtectedEnd,
        _ if inner.starts_with("msd:protected") => Candidate::ProtectedUnknown,
        _ if inner.starts_with("msd:") => Candidate::Unknown,
        _ => Candidate::Other,
    }
}

/// Parses `key="value"` attributes. `Err(())` = malformed.
fn parse_attrs(mut s: &str) -> Result<Vec<(&str, &str)>, ()> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    loop {
        s = s.trim_start_matches(js_is_space);
        if s.is_empty() {
            return Ok(out);
        }
        let b = s.as_bytes();
        if !b[0].is_ascii_alphabetic() {
            return Err(());
        }
        let klen = b.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-').count();
        let key = &s[..klen];
        let rest = s[klen..].strip_prefix("=\"").ok_or(())?;
        let close = rest.find('"').ok_or(())?;
        let value = &rest[..close];
        if out.iter().any(|(k, _)| *k == key) {
            return Err(());
        }
        out.push((key, value));
        s = &rest[close + 1..];
    }
}

fn is_section_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Whether `id` names an isolate section (`isolate-*`).
pub fn is_isolate_id(id: &str) -> bool {
    id.starts_with("isolate-")
}

fn is_reserved_id(id: &str) -> bool {
    id.strip_prefix("gap-").is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

struct OpenSection {
    id: String,
    when: Atom,
    line: usize,
    shrink: Shrink,
    priority: u32,
    body: String,
}

/// The gap being collected between explicit sections.
#[derive(Default)]
struct Gap {
    text: String,
    start: usize,
    end: usize,
    count: usize,
}

impl Gap {
    fn push(&mut self, lineno: usize, text: &str) {
        if self.text.is_empty() {
            self.start = lineno;
        }
        self.end = lineno;
        self.text.push_str(text);
    }

    fn flush(&mut self, sections: &mut Vec<Section>) {
        if !self.text.is_empty() {
            sections.push(Section {
                id: format!("gap-{}", self.count),
                when: Atom::Always,
                explicit: false,
                start_line: self.start,
                end_line: self.end,
                protected: false,
                body: std::mem::take(&mut self.text),
                shrink: Shrink::Verbatim,
                priority: 0,
            });
            self.count += 1;
        }
    }
}

/// Classifies one line outside fences and comments: `Some(candidate)` for a whole-line comment,
/// `None` for anything else. Updates the fence and comment state.
fn scan_line<'t>(content: &'t str, fence: &mut Option<Fence>, in_comment: &mut bool) -> Option<Candidate<'t>> {
    if let Some(f) = *fence {
        if fence_closes(content, f) {
            *fence = None;
        }
        return None;
    }
    if *in_comment {
        if content.contains("-->") {
            *in_comment = false;
        }
        return None;
    }
    let t = js_trim(content);
    if t.starts_with("<!--") {
        // `t[2..]` so that `<!-->` and `<!--->` count as closed (HTML treats them as complete).
        if !t[2..].contains("-->") {
            *in_comment = true;
            return None;
        }
        if !t.ends_with("-->") {
            // `<!-- x --> prose`: content, and no comment stays open.
            return None;
        }
        if t.len() < "<!---->".len() {
            return Some(Candidate::Other);
        }
        return Some(classify(js_trim(&t["<!--".len()..t.len() - "-->".len()])));
    }
    if let Some(f) = fence_opener(content) {
        *fence = Some(f);
    }
    None
}

/// Parses `src`. `path` names the document in errors.
pub fn parse<'a>(path: &str, src: &'a str) -> Result<Document<'a>, MarkerError> {
    let lines = split_lines(src);
    let mut p = Parser { path, marker: vec![false; lines.len()], ..Parser::default() };
    let mut fence: Option<Fence> = None;
    let mut in_comment = false;
    for (idx, l) in lines.iter().enumerate() {
        let lineno = idx + 1;
        let content = &src[l.start..l.content_end];
        let kind = scan_line(content, &mut fence, &mut in_comment);
        let marker = match kind {
            None | Some(Candidate::Other) => None,
            Some(k) => Some(k),
        };
        p.cover_protected(lineno, marker.is_some(), js_trim(content).is_empty())?;
        let Some(kind) = marker else {
            p.text(lineno, &src[l.start..l.end]);
            continue;
        };
        p.marker[idx] = true;
        if idx == 0 && content.starts_with('\u{feff}') {
            // The BOM stays in the output even though its line is a marker.
            p.gap.push(lineno, "\u{feff}");
        }
        p.marker_line(lineno, content, kind)?;
    }
    let (sections, protected) = p.finish()?;
    Ok(Document { src, lines, marker: p.marker, sections, protected })
}

/// The state of one parse: the sections so far, the one open, the gap of unmarked text, the
/// protected regions, and which lines are markers. Each step below handles one kind of line.
#[derive(Default)]
struct Parser<'p> {
    path: &'p str,
    marker: Vec<bool>,
    sections: Vec<Section>,
    ids: BTreeSet<String>,
    open: Option<OpenSection>,
    gap: Gap,
    protected: Vec<Protected>,
    /// A paired region waiting for its end: (start marker line, covered lines).
    paired_open: Option<(usize, Vec<usize>)>,
    /// A single `protected` marker waiting for its block: (marker line, covered lines).
    single_open: Option<(usize, Vec<usize>)>,
}

/// The attributes of an open marker, checked.
struct OpenAttrs<'t> {
    id: &'t str,
    when: Atom,
    shrink: Shrink,
    priority: u32,
}

impl Parser<'_> {
    fn err(&self, line: usize, reason: Reason, detail: String) -> MarkerError {
        MarkerError { path: self.path.to_string(), line, reason, detail }
    }

    /// Protected coverage: a single block ends at a blank line, a marker or the end; a paired
    /// region covers every non-blank, non-marker line until its end marker.
    fn cover_protected(&mut self, lineno: usize, is_marker: bool, blank: bool) -> Result<(), MarkerError> {
        if let Some((_, covered)) = self.single_open.as_mut() {
            if is_marker || (blank && !covered.is_empty()) {
                let (m, covered) = self.single_open.take().expect("checked");
                self.close_single(m, covered)?;
            } else if !blank {
                covered.push(lineno);
            }
        }
        if let Some((_, covered)) = self.paired_open.as_mut()
            && !is_marker
            && !blank
        {
            covered.push(lineno);
        }
        Ok(())
    }

    fn close_single(&mut self, marker_line: usize, covered: Vec<usize>) -> Result<(), MarkerError> {
        if covered.is_empty() {
            return Err(self.err(
                marker_line,
                Reason::ProtectedSingleWithoutContent,
                "no block follows the marker".into(),
            ));
        }
        self.protected.push(Protected { marker_line, paired: false, lines: covered });
        Ok(())
    }

    /// A line of text: into the open section, or into the gap between sections.
    fn text(&mut self, lineno: usize, full: &str) {
        match self.open.as_mut() {
            Some(s) => s.body.push_str(full),
            None => self.gap.push(lineno, full),
        }
    }

    fn marker_line(&mut self, lineno: usize, content: &str, kind: Candidate<'_>) -> Result<(), MarkerError> {
        match kind {
            Candidate::Open(attrs_src) => self.open_section(lineno, content, attrs_src),
            Candidate::Close => self.close_section(lineno),
            Candidate::CloseWithAttrs => {
                Err(self.err(lineno, Reason::CloseWithAttributes, js_trim(content).to_string()))
            }
            Candidate::ProtectedSingle => {
                self.single_open = Some((lineno, Vec::new()));
                Ok(())
            }
            Candidate::ProtectedStart => {
                if let Some((m, _)) = &self.paired_open {
                    return Err(self.err(
                        lineno,
                        Reason::ProtectedStartWhileOpen,
                        format!("the region opened at line {m} is still open"),
                    ));
                }
                self.paired_open = Some((lineno, Vec::new()));
                Ok(())
            }
            Candidate::ProtectedEnd => {
                let (m, covered) = self.paired_open.take().ok_or_else(|| {
                    self.err(lineno, Reason::ProtectedEndWithoutStart, "no protected region is open".into())
                })?;
                if covered.is_empty() {
                    return Err(self.err(m, Reason::ProtectedEmpty, "the region covers no text".into()));
                }
                self.protected.push(Protected { marker_line: m, paired: true, lines: covered });
                Ok(())
            }
            Candidate::ProtectedUnknown => {
                Err(self.err(lineno, Reason::ProtectedUnknownSentinel, js_trim(content).to_string()))
            }
            Candidate::Unknown => Err(self.err(lineno, Reason::UnknownMarker, js_trim(content).to_string())),
            // `parse` passes only marker lines here.
            Candidate::Other => Ok(()),
        }
    }

    /// The attributes of an open marker: only `id`, `when`, `shrink`, `priority`, each valid.
    fn open_attrs<'t>(&self, lineno: usize, content: &str, attrs_src: &'t str) -> Result<OpenAttrs<'t>, MarkerError> {
        let attrs = parse_attrs(attrs_src)
            .map_err(|_| self.err(lineno, Reason::MalformedAttributes, js_trim(content).to_string()))?;
        if let Some((k, _)) = attrs.iter().find(|(k, _)| !matches!(*k, "id" | "when" | "shrink" | "priority")) {
            return Err(self.err(lineno, Reason::UnrecognizedAttribute, format!("attribute `{k}`")));
        }
        let get = |k: &str| attrs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        let id = get("id").ok_or_else(|| self.err(lineno, Reason::MissingId, js_trim(content).to_string()))?;
        let when = get("when").ok_or_else(|| self.err(lineno, Reason::MissingWhen, js_trim(content).to_string()))?;
        if !is_section_id(id) {
            return Err(self.err(lineno, Reason::MalformedId, format!("id `{id}`")));
        }
        if is_reserved_id(id) {
            return Err(self.err(lineno, Reason::ReservedId, format!("id `{id}`")));
        }
        let when = Atom::parse(when).ok_or_else(|| self.err(lineno, Reason::UnknownWhen, format!("when `{when}`")))?;
        let shrink = match get("shrink") {
            None => Shrink::Verbatim,
            Some(s) => Shrink::parse(s)
                .ok_or_else(|| self.err(lineno, Reason::MalformedAttributes, format!("shrink `{s}`")))?,
        };
        let priority = match get("priority") {
            None => 0,
            Some(p) => p
                .parse::<u32>()
                .ok()
                .filter(|_| p.bytes().all(|c| c.is_ascii_digit()))
                .ok_or_else(|| self.err(lineno, Reason::MalformedAttributes, format!("priority `{p}`")))?,
        };
        Ok(OpenAttrs { id, when, shrink, priority })
    }

    fn open_section(&mut self, lineno: usize, content: &str, attrs_src: &str) -> Result<(), MarkerError> {
        let OpenAttrs { id, when, shrink, priority } = self.open_attrs(lineno, content, attrs_src)?;
        if let Some(o) = &self.open {
            return Err(self.err(
                lineno,
                Reason::NestedSection,
                format!("section `{id}` opened inside `{}` (line {})", o.id, o.line),
            ));
        }
        if !self.ids.insert(id.to_string()) {
            return Err(self.err(lineno, Reason::DuplicateId, format!("id `{id}`")));
        }
        if is_isolate_id(id) {
            if shrink != Shrink::Verbatim {
                return Err(self.err(lineno, Reason::LoadBearingShrink, format!("isolate section `{id}`")));
            }
            let leading = self.gap.text.trim_start_matches('\u{feff}').is_empty()
                && self.sections.iter().all(|s| s.is_isolate() || s.body == "\u{feff}");
            if !leading {
                return Err(self.err(
                    lineno,
                    Reason::IsolateNotLeading,
                    format!("isolate section `{id}` follows other text"),
                ));
            }
        }
        self.gap.flush(&mut self.sections);
        self.open = Some(OpenSection { id: id.to_string(), when, line: lineno, shrink, priority, body: String::new() });
        Ok(())
    }

    fn close_section(&mut self, lineno: usize) -> Result<(), MarkerError> {
        let o =
            self.open.take().ok_or_else(|| self.err(lineno, Reason::UnmatchedClose, "no section is open".into()))?;
        self.sections.push(Section {
            id: o.id,
            when: o.when,
            explicit: true,
            start_line: o.line,
            end_line: lineno,
            protected: false,
            body: o.body,
            shrink: o.shrink,
            priority: o.priority,
        });
        Ok(())
    }

    /// The end of the document: nothing may stay open; sections holding protected text are
    /// marked, and must stay verbatim.
    fn finish(&mut self) -> Result<(Vec<Section>, Vec<Protected>), MarkerError> {
        if let Some(o) = &self.open {
            return Err(self.err(o.line, Reason::UnclosedSection, format!("section `{}` is never closed", o.id)));
        }
        if let Some((m, _)) = self.paired_open {
            return Err(self.err(m, Reason::ProtectedUnclosed, "protected region is never closed".into()));
        }
        if let Some((m, covered)) = self.single_open.take() {
            self.close_single(m, covered)?;
        }
        self.gap.flush(&mut self.sections);
        let mut protected = std::mem::take(&mut self.protected);
        protected.sort_by_key(|p| p.marker_line);
        let mut covered: Vec<usize> = protected.iter().flat_map(|p| p.lines.iter().copied()).collect();
        covered.sort_unstable();
        let mut sections = std::mem::take(&mut self.sections);
        for s in &mut sections {
            let first = covered.partition_point(|&n| n < s.start_line);
            s.protected = covered.get(first).is_some_and(|&n| n <= s.end_line);
            if s.protected && s.shrink != Shrink::Verbatim {
                return Err(self.err(
                    s.start_line,
                    Reason::LoadBearingShrink,
                    format!("section `{}` holds protected text but has shrink `{}`", s.id, s.shrink),
                ));
            }
        }
        Ok((sections, protected))
    }
}

impl<'a> Document<'a> {
    /// The source text.
    pub fn source(&self) -> &'a str {
        self.src
    }

    /// Whether the document has any marker line.
    pub fn has_markers(&self) -> bool {
        self.marker.iter().any(|m| *m)
    }

    /// The document minus its marker lines (each removed with its own terminator): the sections'
    /// bodies in order. Without markers, the input byte for byte.
    pub fn strip(&self) -> String {
        if !self.has_markers() {
            return self.src.to_string();
        }
        self.sections.iter().map(|s| s.body.as_str()).collect()
    }

    /// The 1-based numbers of the marker lines.
    pub fn marker_lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.marker.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i + 1)
    }

    /// The explicit sections.
    pub fn explicit_sections(&self) -> impl Iterator<Item = &Section> {
        self.sections.iter().filter(|s| s.explicit)
    }

    /// The trimmed text of 1-based line `n`.
    pub fn line_text(&self, n: usize) -> &'a str {
        let l = self.lines[n - 1];
        js_trim(&self.src[l.start..l.content_end])
    }

    /// The trimmed texts of every protected line.
    pub fn protected_lines(&self) -> Vec<&'a str> {
        self.protected.iter().flat_map(|p| p.lines.iter().map(|&n| self.line_text(n))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(src: &str) -> (Reason, usize) {
        let e = parse("t.md", src).unwrap_err();
        (e.reason, e.line)
    }

    #[test]
    fn markers_unmarked_document_round_trips() {
        for src in ["", "a\n", "\u{feff}a\r\nb\nc", "x\r\n\r\n", "no newline", "a\rb\n", "\0\u{fffd}\n"] {
            let d = parse("t.md", src).unwrap();
            assert_eq!(d.strip(), src);
            assert!(!d.has_markers());
        }
    }

    #[test]
    fn markers_sections_partition_in_order() {
        let src = "head\r\n<!-- msd:section id=\"a\" when=\"flag:--prd\" -->\nbody\r\n<!-- /msd:section -->\ntail";
        let d = parse("t.md", src).unwrap();
        let ids: Vec<_> = d.sections.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["gap-0", "a", "gap-1"]);
        assert_eq!(d.sections[1].body, "body\r\n");
        assert_eq!(d.sections[1].start_line, 2);
        assert_eq!(d.strip(), "head\r\nbody\r\ntail");
        let joined: String = d.sections.iter().map(|s| s.body.as_str()).collect();
        assert_eq!(joined, d.strip());
    }

    #[test]
    fn markers_bom_before_marker_is_trimmed_like_js_and_kept() {
        let src = "\u{feff}<!-- msd:section id=\"a\" when=\"always\" -->\nx\n<!-- /msd:section -->\n";
        let d = parse("t.md", src).unwrap();
        assert_eq!(d.explicit_sections().count(), 1);
        assert_eq!(d.strip(), "\u{feff}x\n", "the BOM survives its marker line");
        // A BOM in front of isolate sections does not stop them from leading.
        let iso = "\u{feff}<!-- msd:section id=\"isolate-a\" when=\"always\" -->\na\n<!-- /msd:section -->\n<!-- msd:section id=\"isolate-b\" when=\"always\" -->\nb\n<!-- /msd:section -->\nrest\n";
        let d = parse("t.md", iso).unwrap();
        assert_eq!(d.sections.iter().filter(|s| s.is_isolate()).count(), 2);
        assert_eq!(d.strip(), "\u{feff}a\nb\nrest\n");
    }

    #[test]
    fn markers_empty_comment_does_not_open_a_comment() {
        for empty in ["<!-->", "<!--->", "<!---->"] {
            let src = format!("{empty}\n<!-- msd:section id=\"a\" when=\"always\" -->\nx\n<!-- /msd:section -->\n");
            let d = parse("t.md", &src).unwrap();
            assert_eq!(d.explicit_sections().count(), 1, "{empty}");
            assert_eq!(d.strip(), format!("{empty}\nx\n"));
        }
    }

    #[test]
    fn markers_sections_know_their_lines_and_protection() {
        let src = "a\n<!-- msd:section id=\"s\" when=\"always\" -->\n<!-- msd:protected -->\nkeep\n<!-- /msd:section -->\nb\nc\n";
        let d = parse("t.md", src).unwrap();
        let spans: Vec<_> = d.sections.iter().map(|s| (s.id.as_str(), s.start_line, s.end_line, s.protected)).collect();
        assert_eq!(spans, [("gap-0", 1, 1, false), ("s", 2, 5, true), ("gap-1", 6, 7, false)]);
        assert!(d.sections[1].is_load_bearing());
        assert_eq!(d.marker_lines().collect::<Vec<_>>(), [2, 3, 5]);
    }

    #[test]
    fn markers_inside_fences_and_comments_are_text() {
        let src = "```md\n<!-- msd:section id=\"a\" when=\"always\" -->\n```\n<!--\n<!-- /msd:section -->\n-->\n~~~\n<!-- /msd:section -->\n~~~~\n";
        let d = parse("t.md", src).unwrap();
        assert!(!d.has_markers());
        // A fence delimiter inside a comment is comment text; a comment opener inside a fence is fence text.
        let src2 = "<!--\n```\n-->\n<!-- msd:section id=\"b\" when=\"always\" -->\nx\n<!-- /msd:section -->\n";
        assert_eq!(parse("t.md", src2).unwrap().explicit_sections().count(), 1);
    }

    #[test]
    fn markers_every_reason_has_a_fixture() {
        let open = |attrs: &str| format!("<!-- msd:section {attrs} -->\nx\n<!-- /msd:section -->\n");
        let cases: Vec<(String, Reason, usize)> = vec![
            ("<!-- msd:section id=\"a\" when=\"always\" -->\nx\n".into(), Reason::UnclosedSection, 1),
            ("x\n<!-- /msd:section -->\n".into(), Reason::UnmatchedClose, 2),
            (
                "<!-- msd:section id=\"a\" when=\"always\" -->\n<!-- msd:section id=\"b\" when=\"always\" -->\n".into(),
                Reason::NestedSection,
                2,
            ),
            (
                format!("{}{}", open("id=\"a\" when=\"always\""), open("id=\"a\" when=\"always\"")),
                Reason::DuplicateId,
                4,
            ),
            (open("when=\"always\""), Reason::MissingId, 1),
            (open("id=\"a\""), Reason::MissingWhen, 1),
            (open("id=\"A\" when=\"always\""), Reason::MalformedId, 1),
            (open("id=\"a\" when=\" always\""), Reason::UnknownWhen, 1),
            (open("id=\"a\" when=\"flag:--prd&&always\""), Reason::UnknownWhen, 1),
            (open("id='a' when=\"always\""), Reason::MalformedAttributes, 1),
            (open("id=\"a\" id=\"b\" when=\"always\""), Reason::MalformedAttributes, 1),
            (open("id=\"a\" when=\"always\" shrink=\"squash\""), Reason::MalformedAttributes, 1),
            (open("id=\"a\" when=\"always\" extra=\"1\""), Reason::UnrecognizedAttribute, 1),
            (
                "<!-- msd:section id=\"a\" when=\"always\" -->\nx\n<!-- /msd:section id=\"a\" -->\n".into(),
                Reason::CloseWithAttributes,
                3,
            ),
            (open("id=\"gap-0\" when=\"always\""), Reason::ReservedId, 1),
            (
                "<!-- msd:protected:start -->\na\n<!-- msd:protected:start -->\n".into(),
                Reason::ProtectedStartWhileOpen,
                3,
            ),
            ("a\n<!-- msd:protected:end -->\n".into(), Reason::ProtectedEndWithoutStart, 2),
            ("a\n<!-- msd:sectoin id=\"a\" when=\"always\" -->\nx\n".into(), Reason::UnknownMarker, 2),
            ("<!-- msd:protected:start -->\n\n<!-- msd:protected:end -->\n".into(), Reason::ProtectedEmpty, 1),
            ("<!-- msd:protected:start -->\na\n".into(), Reason::ProtectedUnclosed, 1),
            ("<!-- msd:protected -->\n\n".into(), Reason::ProtectedSingleWithoutContent, 1),
            ("<!-- msd:protected:begin -->\na\n".into(), Reason::ProtectedUnknownSentinel, 1),
            (format!("intro\n{}", open("id=\"isolate-a\" when=\"always\"")), Reason::IsolateNotLeading, 2),
            (
                format!("{}{}", open("id=\"a\" when=\"always\""), open("id=\"isolate-b\" when=\"always\"")),
                Reason::IsolateNotLeading,
                4,
            ),
            (open("id=\"isolate-a\" when=\"always\" shrink=\"drop\""), Reason::LoadBearingShrink, 1),
            (
                "x\n<!-- msd:section id=\"a\" when=\"always\" shrink=\"head:1\" -->\n<!-- msd:protected -->\nrule\n<!-- /msd:section -->\n"
                    .into(),
                Reason::LoadBearingShrink,
                2,
            ),
        ];
        let mut seen = BTreeSet::new();
        for (src, want, line) in cases {
            assert_eq!(reason(&src), (want, line), "{src:?}");
            seen.insert(want);
        }
        assert_eq!(seen.len(), Reason::ALL.len(), "a fixture per reason");
    }

    #[test]
    fn markers_reason_names_are_locked_and_documented() {
        let names: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            names,
            [
                "unclosed_section",
                "unmatched_close",
                "nested_section",
                "duplicate_id",
                "missing_id",
                "missing_when",
                "malformed_id",
                "unknown_when",
                "malformed_attributes",
                "unrecognized_attribute",
                "close_with_attributes",
                "reserved_id",
                "protected_start_while_open",
                "protected_end_without_start",
                "protected_empty",
                "protected_unclosed",
                "protected_single_without_content",
                "protected_unknown_sentinel",
                "isolate_not_leading",
                "load_bearing_shrink",
                "unknown_marker",
            ]
        );
        for r in Reason::ALL {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str(), "serde and as_str agree");
        }
        let doc = include_str!("../../../../docs/CONTENT-CONVENTIONS.md");
        for name in names {
            assert!(doc.contains(&format!("`{name}`")), "docs/CONTENT-CONVENTIONS.md does not list `{name}`");
        }
    }

    #[test]
    fn markers_section_prefix_lookalikes_are_text() {
        for src in ["<!-- msd-loop-host -->\n", "<!-- /msd:help lists them -->\n", "<!-- x --> prose\n"] {
            assert!(!parse("t.md", src).unwrap().has_markers(), "{src}");
        }
        // Anything else that starts with `msd:` (or `/msd:section`) is a typo of a marker.
        for src in ["<!-- msd:sectionX id=\"a\" -->\n", "<!-- /msd:sectionfoo -->\n", "<!-- msd:loop-host -->\n"] {
            assert_eq!(parse("t.md", src).unwrap_err().reason, Reason::UnknownMarker, "{src}");
        }
        // No whitespace between attributes is accepted.
        assert!(parse("t.md", "<!--msd:section when=\"always\"id=\"x\"-->\n<!-- /msd:section -->\n").is_ok());
    }

    /// Pieces that make hostile documents: fences, comments, lone CR, CRLF, BOM, NUL, CJK,
    /// emoji, marker look-alikes and real markers.
    fn piece() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("text\n".to_string()),
            Just("crlf\r\n".to_string()),
            Just("lone\rcr\n".to_string()),
            Just("\n".to_string()),
            Just("```md\n".to_string()),
            Just("~~~~\n".to_string()),
            Just("<!--\n".to_string()),
            Just("-->\n".to_string()),
            Just("<!-- x --> prose\n".to_string()),
            Just("<!-- /msd:help lists them -->\n".to_string()),
            Just("<!-- msd-loop-host -->\n".to_string()),
            Just("\u{feff}\0\u{fffd}漢字😀\n".to_string()),
            "[a-z ]{0,12}\n",
            "[a-z]{0,5}",
        ]
    }

    proptest::proptest! {
        /// An unmarked document: its sections partition it byte for byte (not only through the
        /// no-marker fast path of `strip`).
        #[test]
        fn markers_prop_unmarked_sections_partition_the_source(pieces in proptest::collection::vec(piece(), 0..40)) {
            let src: String = pieces.concat();
            let d = parse("t.md", &src).unwrap();
            proptest::prop_assert!(!d.has_markers());
            let joined: String = d.sections.iter().map(|s| s.body.as_str()).collect();
            proptest::prop_assert_eq!(&joined, &src);
            proptest::prop_assert_eq!(d.strip(), src);
        }

        /// With markers interleaved: the sections cover every non-marker line, in order.
        #[test]
        fn markers_prop_sections_cover_every_non_marker_line(
            blocks in proptest::collection::vec((proptest::collection::vec(piece(), 0..4), proptest::collection::vec(piece(), 0..4), proptest::bool::ANY), 0..8)
        ) {
            // Fences and comments are defused here (their interleaving with markers has unit
            // tests above), so every marker below is recognised.
            let defuse = |p: &[String]| p.concat().replace("<!--", "<!-- -->").replace('`', "'").replace('~', "-");
            let mut src = String::new();
            for (i, (outside, inside, crlf)) in blocks.iter().enumerate() {
                let nl = if *crlf { "\r\n" } else { "\n" };
                src.push_str(&defuse(outside));
                src.push_str(&format!("\n<!-- msd:section id=\"s{i}\" when=\"always\" -->{nl}"));
                src.push_str(&defuse(inside));
                src.push_str(&format!("\n<!-- /msd:section -->{nl}"));
            }
            let d = parse("t.md", &src).unwrap();
            proptest::prop_assert_eq!(d.explicit_sections().count(), blocks.len());
            let markers: BTreeSet<usize> = d.marker_lines().collect();
            let expected: String = split_lines(&src)
                .iter()
                .enumerate()
                .filter(|(i, _)| !markers.contains(&(i + 1)))
                .map(|(_, l)| &src[l.start..l.end])
                .collect();
            proptest::prop_assert_eq!(markers.len(), 2 * blocks.len());
            proptest::prop_assert_eq!(d.strip(), expected);
        }
    }

    #[test]
    fn markers_protected_blocks_cover_lines() {
        let src = "<!-- msd:protected -->\n\nrule one\nrule two\n\nafter\n<!-- msd:protected:start -->\n```\ncode\n```\n<!-- msd:protected:end -->\n";
        let d = parse("t.md", src).unwrap();
        assert_eq!(d.protected.len(), 2);
        assert_eq!(d.protected[0].lines, vec![3, 4]);
        assert_eq!(d.protected[1].lines, vec![8, 9, 10]);
        assert_eq!(d.protected_lines(), vec!["rule one", "rule two", "```", "code", "```"]);
        assert_eq!(d.strip(), "\nrule one\nrule two\n\nafter\n```\ncode\n```\n");
    }
}
