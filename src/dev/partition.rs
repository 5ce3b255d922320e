//! The compact-content partition checks (ADR-4139 Decision 5, contracts section 10): a covered
//! workflow is a spine `workflows/<name>.md` plus detail parts `workflows/<name>/detail/*.md`,
//! and the two halves are pieces of one document.
//!
//! Input: a [`Snapshot`] of the workflows directory now (paths relative to it, text), the shared
//! gate's text, and optionally a [`Base`]: the same directory at the merge-base of a base
//! revision, plus the `Boundary-Move-Declared:` trailers of the commits since. Output: every
//! [`Violation`], each naming its check, kind, spine, part and line. Pure: no I/O (the git side
//! lives in [`crate::dev::gitx`], the command in `cmd::check`).
//!
//! The five checks:
//! 1. completeness (base, new splits only): every normalised line of the old spine is in the new
//!    spine or a part, and the spine got strictly smaller;
//! 2. disjointness (always): no normalised line of a part is in its spine; no spine restates the
//!    gate;
//! 3. registration (always): orphan parts, unreferenced parts, dangling references, part size
//!    (`>=` [`DETAIL_PART_CAP`] fails), `@` lines in parts, the gate referenced exactly once;
//! 4. protected content: parts hold no sentinel and every marker parses (always); every line a
//!    sentinel covered at the base is still in the spine (base; cannot be excused by a trailer);
//! 5. boundary moves (base): lines that left a spine for its parts need a trailer naming the
//!    spine on some commit since the merge-base.
//!
//! Deliberate differences from the reference, recorded in `docs/PARTITION-RULES.md`: checks 4 and
//! 5 also apply to splits made in the diff under review (the reference exempted them, which let a
//! split commit relocate protected text or move lines undeclared), and every violation is
//! reported (the reference capped the report at 20 per split).

use std::collections::{BTreeMap, BTreeSet};

use msd_core::manifest::caps::DETAIL_PART_CAP;
use msd_core::markup::markers::{self, js_trim};

/// The one gate, relative to the core dir.
pub(crate) const GATE_PATH: &str = "references/compact-content-gate.md";
/// The trailer that declares a boundary move.
pub(crate) const TRAILER_KEY: &str = "Boundary-Move-Declared";
/// Separates a trailer's spine from its reason.
pub(crate) const TRAILER_DELIMITER: &str = " — ";

/// The five checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Check {
    /// 1. A split carries every line of the spine it was made from.
    Completeness,
    /// 2. No line is in both halves.
    Disjointness,
    /// 3. Parts and spines name each other, parts fit their cap.
    Registration,
    /// 4. Protected text stays in the spine.
    Protected,
    /// 5. Lines that crossed the boundary were declared.
    BoundaryMoves,
}

impl Check {
    /// Every check, in order.
    pub(crate) const ALL: [Check; 5] =
        [Check::Completeness, Check::Disjointness, Check::Registration, Check::Protected, Check::BoundaryMoves];

    /// The stable name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Check::Completeness => "completeness",
            Check::Disjointness => "disjointness",
            Check::Registration => "registration",
            Check::Protected => "protected",
            Check::BoundaryMoves => "boundary_moves",
        }
    }
}

/// What exactly is wrong. The set is closed; each kind belongs to one [`Check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A line of the old spine is in neither the new spine nor a part.
    IncompleteSplit,
    /// The split did not make the spine smaller.
    SpineNotSmaller,
    /// A part repeats a line of its spine.
    DuplicatedLine,
    /// A spine repeats a line of the gate.
    GateRestated,
    /// A detail directory without a spine.
    OrphanDetail,
    /// A part its spine does not name.
    UnreferencedDetail,
    /// A spine names a part that does not exist (or is not its own).
    DanglingReference,
    /// A part at or over the cap.
    PartTooLarge,
    /// A line starting with `@` in a part (inert there).
    IncludeInPart,
    /// A spine with parts that does not reference the gate exactly once.
    GateReference,
    /// Spines have parts but the gate file does not exist.
    GateMissing,
    /// A protected sentinel inside a part.
    ProtectedInPart,
    /// A sentinel that does not parse.
    MalformedMarker,
    /// A protected line of the base spine now in a part.
    ProtectedRelocated,
    /// A protected line of the base spine gone.
    ProtectedDeleted,
    /// Lines moved from a spine into its parts without a trailer.
    UndeclaredBoundaryMove,
    /// A malformed `Boundary-Move-Declared:` trailer.
    TrailerError,
}

impl Kind {
    /// The check this kind belongs to.
    pub(crate) fn check(self) -> Check {
        match self {
            Kind::IncompleteSplit | Kind::SpineNotSmaller => Check::Completeness,
            Kind::DuplicatedLine | Kind::GateRestated => Check::Disjointness,
            Kind::OrphanDetail
            | Kind::UnreferencedDetail
            | Kind::DanglingReference
            | Kind::PartTooLarge
            | Kind::IncludeInPart
            | Kind::GateReference
            | Kind::GateMissing => Check::Registration,
            Kind::ProtectedInPart | Kind::MalformedMarker | Kind::ProtectedRelocated | Kind::ProtectedDeleted => {
                Check::Protected
            }
            Kind::UndeclaredBoundaryMove | Kind::TrailerError => Check::BoundaryMoves,
        }
    }

    /// The stable snake_case name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::IncompleteSplit => "incomplete_split",
            Kind::SpineNotSmaller => "spine_not_smaller",
            Kind::DuplicatedLine => "duplicated_line",
            Kind::GateRestated => "gate_restated",
            Kind::OrphanDetail => "orphan_detail",
            Kind::UnreferencedDetail => "unreferenced_detail",
            Kind::DanglingReference => "dangling_reference",
            Kind::PartTooLarge => "part_too_large",
            Kind::IncludeInPart => "include_in_part",
            Kind::GateReference => "gate_reference",
            Kind::GateMissing => "gate_missing",
            Kind::ProtectedInPart => "protected_in_part",
            Kind::MalformedMarker => "malformed_marker",
            Kind::ProtectedRelocated => "protected_relocated",
            Kind::ProtectedDeleted => "protected_deleted",
            Kind::UndeclaredBoundaryMove => "undeclared_boundary_move",
            Kind::TrailerError => "trailer_error",
        }
    }

    /// What to do about it.
    pub(crate) fn hint(self) -> &'static str {
        match self {
            Kind::IncompleteSplit => "move the line into the spine or a part; a split moves text, it never drops it",
            Kind::SpineNotSmaller => "a split must shrink the eagerly loaded spine; move elaborations out of it",
            Kind::DuplicatedLine => "keep the sentence in one half only; reword it or delete one copy",
            Kind::GateRestated => "reference the gate file instead of repeating its text",
            Kind::OrphanDetail => "add the spine workflows/<name>.md or delete the detail directory",
            Kind::UnreferencedDetail => "name the part by its full path in the spine, at the step it elaborates",
            Kind::DanglingReference => "fix the path, add the part, or remove the reference",
            Kind::PartTooLarge => "split the part in two; each part stays under 32,768 bytes",
            Kind::IncludeInPart => "`@` includes only work in command files; move the line to the spine",
            Kind::GateReference => {
                "write the gate line once near the top of the spine: Detail parts: follow `~/.claude/msd-core/references/compact-content-gate.md` for the parts named below."
            }
            Kind::GateMissing => "add msd-core/references/compact-content-gate.md",
            Kind::ProtectedInPart => "protected text never leaves the spine; move the block back",
            Kind::MalformedMarker => "fix the marker (see the markers section of docs/CONTENT-CONVENTIONS.md)",
            Kind::ProtectedRelocated => {
                "protected lines never leave the spine; move the line back (no trailer excuses it)"
            }
            Kind::ProtectedDeleted => "restore the protected line in the spine (no trailer excuses it)",
            Kind::UndeclaredBoundaryMove => {
                "add the trailer `Boundary-Move-Declared: <spine path> — <reason>` to a commit of this change"
            }
            Kind::TrailerError => "write the trailer as `Boundary-Move-Declared: <spine path> — <reason>`",
        }
    }
}

/// One violation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Violation {
    /// The check.
    pub check: Check,
    /// The kind.
    pub kind: Kind,
    /// The spine, relative to the workflows dir (`plan-phase.md`), or the trailer's key.
    pub spine: String,
    /// The part, relative to the workflows dir, when one is involved.
    pub part: Option<String>,
    /// 1-based line in the file the violation points at (the part when there is one, else the
    /// spine; for completeness and protected checks, the base spine).
    pub line: Option<usize>,
    /// The offending text or a short explanation.
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.spine)?;
        if let Some(p) = &self.part {
            write!(f, " -> {p}")?;
        }
        if let Some(l) = self.line {
            write!(f, " line {l}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// Files of a workflows directory: path relative to it -> text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// The files.
    pub files: BTreeMap<String, String>,
}

/// One registered split.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Split {
    /// The workflow stem.
    pub name: String,
    /// `<name>.md`.
    pub spine: String,
    /// `<name>/detail/<part>.md`, sorted.
    pub parts: Vec<String>,
}

/// Registered splits: every `<name>/detail/` directory holding at least one `*.md` directly.
/// Deeper directories are not registered. Sorted by name.
pub(crate) fn splits(snap: &Snapshot) -> Vec<Split> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in snap.files.keys() {
        if let Some((name, rest)) = path.split_once("/detail/")
            && !name.contains('/')
            && !rest.contains('/')
            && rest.ends_with(".md")
        {
            by_name.entry(name.to_string()).or_default().push(path.clone());
        }
    }
    by_name.into_iter().map(|(name, parts)| Split { spine: format!("{name}.md"), name, parts }).collect()
}

/// Whether a trimmed line is trivial for line comparison: fence delimiters (backticks), rules of
/// 3+ `-`, bare `#` headings, bare labels (`Output:`), bare shell block syntax, a bare XML-ish
/// open or close tag, and msd marker lines (structure, not text; the protected check follows
/// sentinels on its own).
pub(crate) fn is_trivial(t: &str) -> bool {
    if t.is_empty() || t.starts_with("```") || t.bytes().all(|b| b == b'#') {
        return true;
    }
    if (t.starts_with("<!-- msd:") || t.starts_with("<!-- /msd:")) && t.ends_with("-->") {
        return true;
    }
    if t.len() >= 3 && t.bytes().all(|b| b == b'-') {
        return true;
    }
    // A Markdown table's delimiter row (`|---|--:|`): structure, like a rule.
    if t.starts_with('|') && t.contains('-') && t.bytes().all(|b| matches!(b, b'|' | b'-' | b':' | b' ')) {
        return true;
    }
    if let Some(label) = t.strip_suffix(':')
        && label.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && label.bytes().all(|b| b.is_ascii_alphabetic() || b == b' ')
    {
        return true;
    }
    if matches!(t.strip_suffix(';').unwrap_or(t), "fi" | "done" | "esac" | "else" | "then" | "do" | "{" | "}") {
        return true;
    }
    is_bare_tag(t)
}

fn is_bare_tag(t: &str) -> bool {
    let Some(inner) = t.strip_prefix('<').and_then(|s| s.strip_suffix('>')) else { return false };
    let name = inner.strip_prefix('/').unwrap_or(inner);
    name.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && !inner.contains(['<', '>'])
}

/// Lines that legitimately recur across files (the helper's launcher call, a spawn call's first
/// line); ignored by disjointness only.
pub(crate) fn is_boilerplate(t: &str) -> bool {
    t.starts_with("~/.claude/msd-core/bin/msd_run ") || t.starts_with("Task(")
}

/// `(1-based line, trimmed text)` of every non-blank, non-trivial line. Lines split on `\n`
/// (a `\r` before it is trimmed away); duplicates are kept.
pub(crate) fn normalised_lines(text: &str) -> Vec<(usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, js_trim(l)))
        .filter(|(_, t)| !t.is_empty() && !is_trivial(t))
        .collect()
}

fn set(text: &str) -> BTreeSet<&str> {
    normalised_lines(text).into_iter().map(|(_, t)| t).collect()
}

fn all_lines(text: &str) -> BTreeSet<&str> {
    text.split('\n').map(js_trim).filter(|t| !t.is_empty()).collect()
}

/// A reference to a detail part found in a text: the literal and where it resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartRef {
    /// 1-based line.
    pub line: usize,
    /// The text as written.
    pub literal: String,
    /// Relative to the workflows dir, or `None` when it escapes it.
    pub resolved: Option<String>,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '~' | '$')
}

/// Every substring shaped like `<path>/detail/<path>.md`, resolved against the workflows dir: a
/// path containing `msd-core/workflows/` (the installed form, `~/.claude/msd-core/...`) is taken
/// from there; a path starting `workflows/` from there; anything else as relative to it.
pub(crate) fn part_refs(text: &str) -> Vec<PartRef> {
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let mut from = 0;
        while let Some(at) = line[from..].find("/detail/") {
            let at = from + at;
            from = at + "/detail/".len();
            let start =
                line[..at].char_indices().rev().take_while(|(_, c)| is_path_char(*c)).last().map_or(at, |(j, _)| j);
            let tail = &line[at + "/detail/".len()..];
            let end = at + "/detail/".len() + tail.find(|c: char| !is_path_char(c)).unwrap_or(tail.len());
            let literal = line[start..end].trim_end_matches('.');
            if start == at || !literal.ends_with(".md") || literal.ends_with("/detail/.md") {
                continue;
            }
            let rel = match literal.find("msd-core/workflows/") {
                Some(k) => &literal[k + "msd-core/workflows/".len()..],
                None => literal.strip_prefix("workflows/").unwrap_or(literal),
            };
            let escapes = rel.starts_with('/')
                || rel.starts_with('~')
                || rel.split('/').any(|s| s == ".." || s == "." || s.is_empty());
            out.push(PartRef {
                line: i + 1,
                literal: literal.to_string(),
                resolved: (!escapes).then(|| rel.to_string()),
            });
        }
    }
    out
}

/// The state at the merge-base, for checks 1, 4 and 5.
#[derive(Debug, Clone, Default)]
pub(crate) struct Base {
    /// The workflows directory at the merge-base.
    pub snapshot: Snapshot,
    /// Repository-relative path of the workflows dir (`content/msd-core/workflows`), the prefix
    /// of trailer keys.
    pub workflows_path: String,
    /// Values of every `Boundary-Move-Declared:` trailer on the commits since the merge-base.
    pub trailers: Vec<String>,
}

/// What a run checked and found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Report {
    /// Registered splits now.
    pub splits: Vec<Split>,
    /// Splits that did not exist at the base.
    pub new_splits: Vec<String>,
    /// The checks that ran.
    pub checks_run: Vec<Check>,
    /// Every violation, in check order.
    pub violations: Vec<Violation>,
}

fn v(kind: Kind, spine: &str, part: Option<&str>, line: Option<usize>, detail: impl Into<String>) -> Violation {
    Violation {
        check: kind.check(),
        kind,
        spine: spine.to_string(),
        part: part.map(str::to_string),
        line,
        detail: detail.into(),
    }
}

/// Runs the checks: 2, 3 and the base-free half of 4 always; 1, the rest of 4 and 5 with a base.
pub(crate) fn check(now: &Snapshot, gate: Option<&str>, base: Option<&Base>) -> Report {
    let splits = splits(now);
    let mut out = Vec::new();
    let text = |p: &str| now.files.get(p).map(String::as_str);

    // 3. Registration.
    if !splits.is_empty() && gate.is_none() {
        out.push(v(Kind::GateMissing, &splits[0].spine, None, None, format!("no {GATE_PATH}")));
    }
    for s in &splits {
        let Some(spine) = text(&s.spine) else {
            for p in &s.parts {
                out.push(v(Kind::OrphanDetail, &s.spine, Some(p), None, "the spine does not exist"));
            }
            continue;
        };
        let named: BTreeSet<String> = part_refs(spine).into_iter().filter_map(|r| r.resolved).collect();
        for p in &s.parts {
            if !named.contains(p) {
                out.push(v(Kind::UnreferencedDetail, &s.spine, Some(p), None, format!("the spine never names {p}")));
            }
            let body = text(p).unwrap_or_default();
            if body.len() as u64 >= DETAIL_PART_CAP {
                out.push(v(
                    Kind::PartTooLarge,
                    &s.spine,
                    Some(p),
                    None,
                    format!("{} bytes; a part must be under {DETAIL_PART_CAP}", body.len()),
                ));
            }
            for (i, l) in body.split('\n').enumerate() {
                if js_trim(l).starts_with('@') {
                    out.push(v(Kind::IncludeInPart, &s.spine, Some(p), Some(i + 1), js_trim(l)));
                }
            }
        }
        let gate_refs = spine.matches(GATE_PATH).count();
        if gate_refs != 1 {
            out.push(v(
                Kind::GateReference,
                &s.spine,
                None,
                None,
                format!("the spine references {GATE_PATH} {gate_refs} times; it must do so exactly once"),
            ));
        }
    }
    for (path, body) in &now.files {
        let Some(name) = path.strip_suffix(".md").filter(|n| !n.contains('/')) else { continue };
        for r in part_refs(body) {
            let own = r.resolved.as_deref().is_some_and(|p| p.starts_with(&format!("{name}/detail/")));
            let exists = r.resolved.as_deref().is_some_and(|p| now.files.contains_key(p));
            if !own || !exists {
                let why = if r.resolved.is_none() {
                    "the path leaves the workflows directory"
                } else if !exists {
                    "no such part"
                } else {
                    "the part belongs to another workflow"
                };
                out.push(v(Kind::DanglingReference, path, None, Some(r.line), format!("{}: {why}", r.literal)));
            }
        }
    }

    // 2. Disjointness.
    for s in &splits {
        let Some(spine) = text(&s.spine) else { continue };
        let spine_set = set(spine);
        for p in &s.parts {
            for (line, t) in normalised_lines(text(p).unwrap_or_default()) {
                if !is_boilerplate(t) && spine_set.contains(t) {
                    out.push(v(Kind::DuplicatedLine, &s.spine, Some(p), Some(line), t));
                }
            }
        }
    }
    if let Some(gate) = gate {
        let gate_set: BTreeSet<&str> = set(gate).into_iter().filter(|t| !is_boilerplate(t)).collect();
        for (path, body) in &now.files {
            if path.contains('/') || !path.ends_with(".md") {
                continue;
            }
            for (line, t) in normalised_lines(body) {
                if gate_set.contains(t) {
                    out.push(v(Kind::GateRestated, path, None, Some(line), t));
                }
            }
        }
    }

    // 4. Protected content, the part that needs no base.
    for s in &splits {
        for p in std::iter::once(&s.spine).chain(&s.parts) {
            let Some(body) = text(p) else { continue };
            let part = (p != &s.spine).then_some(p.as_str());
            match markers::parse(p, body) {
                Err(e) => out.push(v(Kind::MalformedMarker, &s.spine, part, Some(e.line), e.to_string())),
                Ok(doc) => {
                    if let Some(part) = part {
                        for b in &doc.protected {
                            out.push(v(
                                Kind::ProtectedInPart,
                                &s.spine,
                                Some(part),
                                Some(b.marker_line),
                                "a protected sentinel in a detail part",
                            ));
                        }
                    }
                }
            }
        }
    }

    let mut report =
        Report { checks_run: vec![Check::Disjointness, Check::Registration, Check::Protected], ..Default::default() };
    if let Some(base) = base {
        report.checks_run = Check::ALL.to_vec();
        let mut trailer_errors = Vec::new();
        let keys = declared(&base.trailers, &mut trailer_errors);
        out.extend(trailer_errors);
        let old_splits: BTreeSet<String> = self::splits(&base.snapshot).into_iter().map(|s| s.name).collect();
        for s in &splits {
            let Some(spine) = text(&s.spine) else { continue };
            let Some(old) = base.snapshot.files.get(&s.spine) else { continue };
            let is_new = !old_splits.contains(&s.name);
            if is_new {
                report.new_splits.push(s.name.clone());
            }
            let parts: Vec<(&str, &str)> = s.parts.iter().map(|p| (p.as_str(), text(p).unwrap_or_default())).collect();
            // 1. Completeness, once: when the split is made.
            if is_new {
                let mut union = set(spine);
                for (_, body) in &parts {
                    union.extend(set(body));
                }
                for (line, t) in normalised_lines(old) {
                    if !union.contains(t) {
                        out.push(v(Kind::IncompleteSplit, &s.spine, None, Some(line), t));
                    }
                }
                if spine.len() >= old.len() {
                    out.push(v(
                        Kind::SpineNotSmaller,
                        &s.spine,
                        None,
                        None,
                        format!("{} bytes now, {} before the split", spine.len(), old.len()),
                    ));
                }
            }
            // 4. Protected lines of the base spine stay in the spine.
            let mut protected_moves: BTreeSet<&str> = BTreeSet::new();
            match markers::parse(&s.spine, old) {
                Err(e) => out.push(v(Kind::MalformedMarker, &s.spine, None, Some(e.line), format!("at the base: {e}"))),
                Ok(doc) => {
                    let now_lines = all_lines(spine);
                    for b in &doc.protected {
                        for &n in &b.lines {
                            let t = doc.line_text(n);
                            if now_lines.contains(t) {
                                continue;
                            }
                            protected_moves.insert(t);
                            match parts.iter().find(|(_, body)| all_lines(body).contains(t)) {
                                Some((p, _)) => out.push(v(Kind::ProtectedRelocated, &s.spine, Some(p), Some(n), t)),
                                None => out.push(v(Kind::ProtectedDeleted, &s.spine, None, Some(n), t)),
                            }
                        }
                    }
                }
            }
            // 5. Boundary moves are declared.
            let old_set = set(old);
            let new_set = set(spine);
            let mut moved: Vec<(&str, usize, &str)> = Vec::new();
            for (p, body) in &parts {
                let before: BTreeSet<&str> = base.snapshot.files.get(*p).map(|b| set(b)).unwrap_or_default();
                for (line, t) in normalised_lines(body) {
                    if old_set.contains(t)
                        && !new_set.contains(t)
                        && !before.contains(t)
                        && !protected_moves.contains(t)
                    {
                        moved.push((p, line, t));
                    }
                }
            }
            if let Some((p, line, t)) = moved.first() {
                let key = format!("{}/{}", base.workflows_path, s.spine);
                if !keys.contains(key.as_str()) {
                    out.push(v(
                        Kind::UndeclaredBoundaryMove,
                        &s.spine,
                        Some(p),
                        Some(*line),
                        format!(
                            "{} line(s) moved from the spine into its parts, first: {t}; no trailer names {key}",
                            moved.len()
                        ),
                    ));
                }
            }
        }
    }
    out.sort_by(|a, b| (a.check, &a.spine, &a.part, a.line).cmp(&(b.check, &b.spine, &b.part, b.line)));
    out.dedup();
    report.splits = splits;
    report.violations = out;
    report
}

/// The spine keys declared by `trailers`. Malformed values, and keys given two different
/// reasons (the key is then dropped), are reported into `errors`.
pub(crate) fn declared(trailers: &[String], errors: &mut Vec<Violation>) -> BTreeSet<String> {
    let mut reasons: BTreeMap<String, String> = BTreeMap::new();
    let mut conflicted: BTreeSet<String> = BTreeSet::new();
    for raw in trailers {
        let value = raw.replace('\r', "");
        let value = value.trim();
        let Some((key, reason)) = value.split_once(TRAILER_DELIMITER) else {
            errors.push(v(
                Kind::TrailerError,
                value,
                None,
                None,
                format!("no ` — ` between the spine and the reason: {value}"),
            ));
            continue;
        };
        let (key, reason) = (key.trim(), reason.split_whitespace().collect::<Vec<_>>().join(" "));
        if key.is_empty() || reason.is_empty() {
            errors.push(v(Kind::TrailerError, value, None, None, "an empty spine path or reason"));
            continue;
        }
        match reasons.get(key) {
            Some(r) if *r != reason => {
                if conflicted.insert(key.to_string()) {
                    errors.push(v(Kind::TrailerError, key, None, None, "declared twice with different reasons"));
                }
            }
            _ => {
                reasons.insert(key.to_string(), reason);
            }
        }
    }
    reasons.into_keys().filter(|k| !conflicted.contains(k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_trivial_lines() {
        for t in [
            "```",
            "```bash",
            "---",
            "###",
            "Output:",
            "Next up:",
            "fi",
            "done;",
            "{",
            "</process>",
            "<step name=\"x\">",
        ] {
            assert!(is_trivial(t), "{t}");
        }
        assert!(is_trivial("<!-- msd:protected -->"));
        for t in ["~~~", "--", "## Heading", "Output: a file", "a < b > c", "<!-- note -->", "x"] {
            assert!(!is_trivial(t), "{t}");
        }
    }

    #[test]
    fn partition_part_refs_resolve() {
        let text = "Read `~/.claude/msd-core/workflows/plan-phase/detail/a.md`.\nsee plan-phase/detail/b.md and workflows/x/detail/c.md.\n`workflows/<stem>/detail/<part>.md`\n../detail/d.md\n";
        let r: Vec<_> = part_refs(text).into_iter().map(|r| (r.line, r.resolved)).collect();
        assert_eq!(
            r,
            [
                (1, Some("plan-phase/detail/a.md".into())),
                (2, Some("plan-phase/detail/b.md".into())),
                (2, Some("x/detail/c.md".into())),
                (4, None)
            ]
        );
    }

    #[test]
    fn partition_trailers_parse() {
        let mut errs = Vec::new();
        let t = |s: &str| s.to_string();
        let keys = declared(
            &[t("a.md — why\r"), t("a.md —  why"), t("b.md — one"), t("b.md — two"), t("c.md - hyphen"), t(" — x")],
            &mut errs,
        );
        assert_eq!(keys.into_iter().collect::<Vec<_>>(), ["a.md"]);
        assert_eq!(errs.len(), 3, "{errs:?}");
    }
}
