//! Stage 3, `compose`: fit fragments into a budget without ever losing load-bearing text.
//!
//! Input: fragments in declaration order (each with a strategy from a closed set), a budget and
//! a [`Measure`] (UTF-8 bytes for emission, estimated tokens for the review-prompt ladder).
//! Output: a [`Composition`]: the plan (every fragment, kept, shrunk, truncated or omitted) and a
//! [`Report`] `{omitted, shrunk, truncated, floored, isolate_prefix, hard_failed, ...}`. The
//! composer decides and the caller renders: it never joins text with separators of its own.
//!
//! The ladder (contracts section 3): pressure means the total is strictly over the effective
//! budget (`floor(budget * (1 - margin/100))`, in f64); only under pressure is the reserve
//! subtracted. One walk in declaration order: `head:N` keeps the first N lines, `truncate`
//! cuts a group proportionally to its members' lengths, never below a member's floor (skipped,
//! not clamped, when the group's budget is not positive), `drop` omits while still over.
//! `verbatim` and isolate fragments are never touched. Around the ladder (when
//! [`Options::priority_cutoff`] is set) a Priompt-style cutoff: if the ladder alone does not
//! fit, the lowest priority level found by binary search whose removal (every droppable
//! fragment at or below it, up front) lets the ladder fit.
//! With [`Options::monotone`] (emission) the walk is replaced by two walks that hold "more
//! budget never yields less content" by construction (see `best_ladder`); they fit whenever the
//! minimum fits, so there the cutoff only shapes a result that cannot fit.
//!
//! Invariants (property-tested below): more budget never yields less content; verbatim and
//! isolate fragments are byte-identical in every result that is not a hard fail; a floor is
//! never undercut; omitted ids follow the drop order; the isolate prefix never depends on the
//! budget. Errors are structural only: a duplicate id, an isolate after a non-isolate.
//!
//! Emission uses it through the installer's `pipeline::fit` (sections of a document as
//! fragments, composed to a runtime's cap); the review-prompt ladder is [`budget`]; [`gate`] is
//! the deterministic load-bearing contract gate; [`measure`] is how emission counts bytes.

pub mod budget;
pub mod gate;
pub mod measure;

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::markup::markers::{Section, Shrink};

/// How text is measured against a budget and how it is cut.
pub trait Measure {
    /// The cost of `text` in budget units.
    fn measure(&self, text: &str) -> u64;
    /// The length of `text` in cut units (what `truncate` floors and shares count).
    fn len(&self, text: &str) -> u64;
    /// The longest prefix of `text` whose [`Measure::len`] is at most `n`, on a character boundary.
    fn cut<'t>(&self, text: &'t str, n: u64) -> &'t str;
}

/// Emission's measure: LF-normalised UTF-8 bytes (CRLF counts one); cuts by bytes on a character
/// boundary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Utf8Bytes;

impl Measure for Utf8Bytes {
    fn measure(&self, text: &str) -> u64 {
        crate::compose::measure::lf_bytes(text.as_bytes())
    }

    fn len(&self, text: &str) -> u64 {
        text.len() as u64
    }

    fn cut<'t>(&self, text: &'t str, n: u64) -> &'t str {
        let mut i = usize::try_from(n).unwrap_or(usize::MAX).min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        &text[..i]
    }
}

/// The review-prompt measure (contracts section 1): tokens estimated as `ceil(UTF-16 units / 4)`;
/// lengths and cuts in UTF-16 units. Deviation: a cut never splits a surrogate pair (it backs off
/// one unit), since a Rust string cannot hold half of one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tokens;

impl Tokens {
    /// `ceil(utf16 units / 4)`.
    pub fn estimate(text: &str) -> u64 {
        (text.encode_utf16().count() as u64).div_ceil(4)
    }
}

impl Measure for Tokens {
    fn measure(&self, text: &str) -> u64 {
        Tokens::estimate(text)
    }

    fn len(&self, text: &str) -> u64 {
        text.encode_utf16().count() as u64
    }

    fn cut<'t>(&self, text: &'t str, n: u64) -> &'t str {
        let mut units = 0u64;
        for (i, c) in text.char_indices() {
            units += c.len_utf16() as u64;
            if units > n {
                return &text[..i];
            }
        }
        text
    }
}

/// A fragment's strategy: the closed set of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Never touched.
    Verbatim,
    /// Keep the first `max_lines` lines (everything before the `max_lines`-th `\n`).
    Head {
        /// Lines kept; `<= 0` keeps nothing.
        max_lines: i64,
    },
    /// Cut proportionally within the group, never below `floor` cut units.
    Truncate {
        /// Cut units always kept.
        floor: u64,
    },
    /// May be omitted.
    Drop,
}

impl From<Shrink> for Strategy {
    fn from(s: Shrink) -> Strategy {
        match s {
            Shrink::Verbatim => Strategy::Verbatim,
            Shrink::Head(n) => Strategy::Head { max_lines: i64::try_from(n).unwrap_or(i64::MAX) },
            Shrink::Truncate(n) => Strategy::Truncate { floor: n as u64 },
            Shrink::Drop => Strategy::Drop,
        }
    }
}

/// One fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// Unique id.
    pub id: String,
    /// The text.
    pub content: String,
    /// Text rendered before the content (a heading); counts toward the budget, never shrunk.
    pub wrapper: String,
    /// How it may be reduced.
    pub strategy: Strategy,
    /// Present (its wrapper rendered and counted) even when its content is empty.
    pub required: bool,
    /// Truncation group (default: its own id).
    pub group: Option<String>,
    /// Budget units this fragment keeps whatever happens (0 = none).
    pub flex_reserve: u64,
    /// Part of the isolate prefix: must lead, never touched.
    pub isolate: bool,
    /// Cutoff priority: droppable fragments of lower priority go first.
    pub priority: u32,
}

impl Fragment {
    /// A fragment with no wrapper, not required, no group, no reserve, priority 0.
    pub fn new(id: impl Into<String>, content: impl Into<String>, strategy: Strategy) -> Fragment {
        Fragment {
            id: id.into(),
            content: content.into(),
            wrapper: String::new(),
            strategy,
            required: false,
            group: None,
            flex_reserve: 0,
            isolate: false,
            priority: 0,
        }
    }

    /// With a wrapper.
    pub fn wrapper(mut self, w: impl Into<String>) -> Fragment {
        self.wrapper = w.into();
        self
    }

    /// Required.
    pub fn required(mut self) -> Fragment {
        self.required = true;
        self
    }

    /// In a truncation group.
    pub fn group(mut self, g: impl Into<String>) -> Fragment {
        self.group = Some(g.into());
        self
    }

    /// With a flex reserve.
    pub fn flex_reserve(mut self, r: u64) -> Fragment {
        self.flex_reserve = r;
        self
    }

    /// Part of the isolate prefix.
    pub fn isolate(mut self) -> Fragment {
        self.isolate = true;
        self
    }

    /// With a priority.
    pub fn priority(mut self, p: u32) -> Fragment {
        self.priority = p;
        self
    }

    /// Whether the gate treats it as load-bearing: verbatim or isolate.
    pub fn is_load_bearing(&self) -> bool {
        self.strategy == Strategy::Verbatim || self.isolate
    }

    fn group_key(&self) -> &str {
        self.group.as_deref().unwrap_or(&self.id)
    }

    fn removable(&self) -> bool {
        self.strategy == Strategy::Drop && !self.isolate && self.flex_reserve == 0 && !self.content.is_empty()
    }
}

/// The least text of a fragment that any result needs (`None`: nothing).
pub type MinimumFor = dyn Fn(&Fragment) -> Option<String>;

/// Composer options.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Percentage taken off the budget before anything else.
    pub safety_margin_pct: f64,
    /// Units kept free under pressure (for a note the caller adds).
    pub reserve: i64,
    /// Cut units per budget unit (`truncate` turns a group budget into a cut length with it).
    pub chars_per_unit: u64,
    /// The least text of each fragment any result needs; when their sum exceeds the effective
    /// budget the composition hard-fails (`minimum-set`).
    pub minimum_for: Option<&'a MinimumFor>,
    /// Run the priority cutoff around the ladder when the ladder alone does not fit.
    pub priority_cutoff: bool,
    /// Keep "more budget never yields less content" by construction: instead of the reference
    /// walk, the better fitting of two walks that each hold it (see `best_ladder`; the reference
    /// skips a group whose budget is not positive and never gives back what a later `drop`
    /// overshot, so a smaller budget can keep more). Off for the review-prompt ladder, whose
    /// outputs follow the reference exactly.
    pub monotone: bool,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            safety_margin_pct: 0.0,
            reserve: 0,
            chars_per_unit: 1,
            minimum_for: None,
            priority_cutoff: false,
            monotone: false,
        }
    }
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("safety_margin_pct", &self.safety_margin_pct)
            .field("reserve", &self.reserve)
            .field("chars_per_unit", &self.chars_per_unit)
            .field("minimum_for", &self.minimum_for.is_some())
            .field("priority_cutoff", &self.priority_cutoff)
            .field("monotone", &self.monotone)
            .finish()
    }
}

/// A fragment as planned.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Planned {
    /// The id.
    pub id: String,
    /// The content after composition.
    pub content: String,
    /// The wrapper (unchanged).
    pub wrapper: String,
    /// Whether it is rendered (required, or content not empty).
    pub present: bool,
    /// Head-shrunk.
    pub shrunk: bool,
    /// Truncated.
    pub truncated: bool,
    /// Omitted (dropped by the ladder or below the cutoff).
    pub omitted: bool,
}

/// Why a composition hard-failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HardFail {
    /// The minimum set alone exceeds the effective budget.
    #[serde(rename = "minimum-set")]
    MinimumSet,
}

/// What the composer did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// The budget given.
    pub budget: i64,
    /// `floor(budget * (1 - margin/100))`.
    pub effective_budget: i64,
    /// The effective budget, less the reserve under pressure.
    pub content_budget: i64,
    /// The total before composition was strictly over the effective budget.
    pub under_pressure: bool,
    /// Total before composition.
    pub total_before: u64,
    /// Total after composition.
    pub total: u64,
    /// `total <= content_budget` (false on a hard fail).
    pub fits: bool,
    /// Omitted ids, in declaration order.
    pub omitted: Vec<String>,
    /// Head-shrunk ids.
    pub shrunk: Vec<String>,
    /// Truncated ids.
    pub truncated: Vec<String>,
    /// Ids whose floor or reserve stopped a reduction.
    pub floored: Vec<String>,
    /// Share of the last truncated group's length that was cut, in percent.
    pub truncation_pct: f64,
    /// Droppable fragments at or below this priority were omitted up front.
    pub priority_cutoff: Option<u32>,
    /// The isolate fragments' wrappers and contents, concatenated.
    pub isolate_prefix: String,
    /// The composition failed.
    pub hard_failed: bool,
    /// Why.
    pub hard_fail_reason: Option<HardFail>,
}

/// A plan and its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Composition {
    /// Every fragment in declaration order (empty on a hard fail).
    pub fragments: Vec<Planned>,
    /// What was done.
    pub report: Report,
}

impl Composition {
    /// Wrapper and content of every present fragment, concatenated (no separators).
    pub fn concat(&self) -> String {
        self.fragments.iter().filter(|f| f.present).map(|f| format!("{}{}", f.wrapper, f.content)).collect()
    }

    /// The planned fragment `id`.
    pub fn get(&self, id: &str) -> Option<&Planned> {
        self.fragments.iter().find(|f| f.id == id)
    }
}

/// A fragment set the composer refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// Two fragments share an id.
    #[error("fragment id `{id}` is used twice")]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// An isolate fragment after a non-isolate one.
    #[error("isolate fragment `{id}` follows the non-isolate fragment `{after}`; isolates must lead")]
    IsolateNotLeading {
        /// The isolate.
        id: String,
        /// The fragment before it.
        after: String,
    },
}

/// `floor(budget * (1 - pct/100))` in f64, as the reference computes it.
pub fn effective_budget(budget: i64, safety_margin_pct: f64) -> i64 {
    (budget as f64 * (1.0 - safety_margin_pct / 100.0)).floor() as i64
}

/// The first `max_lines` lines: everything before the `max_lines`-th `\n` (no trailing newline);
/// unchanged with fewer newlines; empty for `max_lines <= 0`.
pub fn head(text: &str, max_lines: i64) -> &str {
    if max_lines <= 0 {
        return "";
    }
    let n = usize::try_from(max_lines - 1).unwrap_or(usize::MAX);
    match text.match_indices('\n').nth(n) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// The total cost of `fragments` before composition.
pub fn total<M: Measure + ?Sized>(fragments: &[Fragment], m: &M) -> u64 {
    fragments.iter().map(|f| cost(f.required, &f.wrapper, &f.content, m)).sum()
}

fn present(required: bool, content: &str) -> bool {
    required || !content.is_empty()
}

fn cost<M: Measure + ?Sized>(required: bool, wrapper: &str, content: &str, m: &M) -> u64 {
    if present(required, content) { m.measure(wrapper) + m.measure(content) } else { 0 }
}

fn check(fragments: &[Fragment]) -> Result<(), ComposeError> {
    let mut ids = BTreeSet::new();
    for (i, f) in fragments.iter().enumerate() {
        if !ids.insert(f.id.as_str()) {
            return Err(ComposeError::DuplicateId { id: f.id.clone() });
        }
        if f.isolate && i > 0 && !fragments[i - 1].isolate {
            return Err(ComposeError::IsolateNotLeading { id: f.id.clone(), after: fragments[i - 1].id.clone() });
        }
    }
    Ok(())
}

impl Report {
    /// The report before any step: nothing omitted, shrunk or truncated.
    fn start(budget: i64, effective: i64, total_before: u64, isolate_prefix: String) -> Report {
        Report {
            budget,
            effective_budget: effective,
            content_budget: effective,
            under_pressure: false,
            total_before,
            total: total_before,
            fits: false,
            omitted: Vec::new(),
            shrunk: Vec::new(),
            truncated: Vec::new(),
            floored: Vec::new(),
            truncation_pct: 0.0,
            priority_cutoff: None,
            isolate_prefix,
            hard_failed: false,
            hard_fail_reason: None,
        }
    }
}

fn isolate_prefix(fragments: &[Fragment]) -> String {
    fragments.iter().filter(|f| f.isolate).map(|f| format!("{}{}", f.wrapper, f.content)).collect()
}

/// Composes `fragments` into `budget`.
pub fn compose<M: Measure + ?Sized>(
    fragments: &[Fragment],
    budget: i64,
    m: &M,
    opts: &Options<'_>,
) -> Result<Composition, ComposeError> {
    check(fragments)?;
    let effective = effective_budget(budget, opts.safety_margin_pct);
    let total_before = total(fragments, m);
    let mut report = Report::start(budget, effective, total_before, isolate_prefix(fragments));
    if let Some(min) = opts.minimum_for {
        let need: u64 = fragments.iter().map(|f| min(f).map_or(0, |t| m.measure(&t))).sum();
        if i128::from(need) > i128::from(effective) {
            report.hard_failed = true;
            report.hard_fail_reason = Some(HardFail::MinimumSet);
            return Ok(Composition { fragments: Vec::new(), report });
        }
    }
    report.under_pressure = i128::from(total_before) > i128::from(effective);
    report.content_budget = if report.under_pressure { effective.saturating_sub(opts.reserve) } else { effective };

    let none = vec![false; fragments.len()];
    let base = best_ladder(fragments, &none, report.content_budget, m, opts);
    if base.fits() || !opts.priority_cutoff {
        return Ok(base.finish(fragments, &none, report));
    }
    let mut levels: Vec<u32> = fragments.iter().filter(|f| f.removable()).map(|f| f.priority).collect();
    levels.sort_unstable();
    levels.dedup();
    if levels.is_empty() {
        return Ok(base.finish(fragments, &none, report));
    }
    let excluded = |level: u32| -> Vec<bool> {
        fragments.iter().map(|f| f.removable() && f.priority <= level).collect::<Vec<bool>>()
    };
    // Binary search for the lowest level whose removal lets the ladder fit; the last level
    // (every droppable fragment removed) is the fallback when none does.
    let (mut lo, mut hi) = (0usize, levels.len() - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if best_ladder(fragments, &excluded(levels[mid]), report.content_budget, m, opts).fits() {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let ex = excluded(levels[lo]);
    let run = best_ladder(fragments, &ex, report.content_budget, m, opts);
    report.priority_cutoff = Some(levels[lo]);
    Ok(run.finish(fragments, &ex, report))
}

/// One run of the ladder.
pub(crate) struct Ladder<'f> {
    content: Vec<Cow<'f, str>>,
    shrunk: Vec<bool>,
    truncated: Vec<bool>,
    dropped: Vec<bool>,
    floored: Vec<bool>,
    truncation_pct: f64,
    total: u64,
    content_budget: i64,
}

impl Ladder<'_> {
    fn fits(&self) -> bool {
        i128::from(self.total) <= i128::from(self.content_budget)
    }

    fn finish(self, fragments: &[Fragment], excluded: &[bool], mut report: Report) -> Composition {
        let ids = |flags: &[bool]| -> Vec<String> {
            fragments.iter().zip(flags).filter(|(_, b)| **b).map(|(f, _)| f.id.clone()).collect()
        };
        let omitted: Vec<bool> = self.dropped.iter().zip(excluded).map(|(d, e)| *d || *e).collect();
        report.omitted = ids(&omitted);
        report.shrunk = ids(&self.shrunk);
        report.truncated = ids(&self.truncated);
        report.floored = ids(&self.floored);
        report.truncation_pct = self.truncation_pct;
        report.total = self.total;
        report.fits = self.fits();
        let planned = fragments
            .iter()
            .zip(self.content)
            .enumerate()
            .map(|(i, (f, c))| Planned {
                id: f.id.clone(),
                present: present(f.required, &c),
                content: c.into_owned(),
                wrapper: f.wrapper.clone(),
                shrunk: self.shrunk[i],
                truncated: self.truncated[i],
                omitted: omitted[i],
            })
            .collect();
        Composition { fragments: planned, report }
    }
}

fn over(total: u64, budget: i64) -> bool {
    i128::from(total) > i128::from(budget)
}

/// Which walk [`ladder`] takes over the `truncate` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// The reference: a group over budget is cut to its share of what is left (skipped when
    /// that is not positive).
    Reference,
    /// Truncation skipped: only `head` and `drop` steps.
    NoTruncate,
    /// Every step all or nothing (a group is cut to its floors), then the last group cut is
    /// grown back into whatever room is left: see [`best_ladder`].
    Floors,
}

/// The ladder, or with [`Options::monotone`] the better fitting one of two walks that each keep
/// "more budget never yields less content" by construction.
///
/// Why not the reference walk: its truncation step depends on the budget in two ways that can
/// cost content when the budget grows. A group whose share of the budget is not positive is
/// skipped (later steps pay, the group stays whole), but one unit more and it is cut to almost
/// nothing; and a group cut to its share that its floors keep over budget is followed by a
/// `drop` that overshoots, and nothing gives the room back. Both walks below are a prefix of a
/// fixed sequence of steps (a step runs while over budget, and nothing grows back during the
/// walk), so more budget runs a shorter prefix:
/// - [`Walk::NoTruncate`]: `head` and `drop` only; a shorter prefix keeps more.
/// - [`Walk::Floors`]: a group is cut to its floors, then the last group cut is grown back as far
///   as it fits (a binary search over its budget; its size grows with its budget). With the same
///   prefix, more budget grows it as much or more; with a shorter one, the result already holds
///   the state after that prefix, which was over the smaller budget, so more than any fitting
///   result there.
///
/// Both fit exactly when the minimum fits, so the better of the two is monotone as well, and
/// the priority cutoff (taken only when no walk fits) never changes a fitting result.
pub(crate) fn best_ladder<'f, M: Measure + ?Sized>(
    fragments: &'f [Fragment],
    excluded: &[bool],
    content_budget: i64,
    m: &M,
    opts: &Options<'_>,
) -> Ladder<'f> {
    if !opts.monotone {
        return ladder(fragments, excluded, content_budget, m, opts, Walk::Reference);
    }
    let floors = ladder(fragments, excluded, content_budget, m, opts, Walk::Floors);
    if !floors.truncated.iter().any(|t| *t) {
        return floors; // no truncate step cut anything: the same walk as without truncation
    }
    let without = ladder(fragments, excluded, content_budget, m, opts, Walk::NoTruncate);
    if without.fits() && (!floors.fits() || without.total > floors.total) { without } else { floors }
}

/// The reference ladder: one walk in declaration order. `excluded` fragments are already
/// omitted (the cutoff) and are not touched; `walk` says how `truncate` steps run.
fn ladder<'f, M: Measure + ?Sized>(
    fragments: &'f [Fragment],
    excluded: &[bool],
    content_budget: i64,
    m: &M,
    opts: &Options<'_>,
    walk: Walk,
) -> Ladder<'f> {
    let n = fragments.len();
    let mut l = Ladder {
        content: fragments
            .iter()
            .zip(excluded)
            .map(|(f, e)| if *e { Cow::Borrowed("") } else { Cow::Borrowed(f.content.as_str()) })
            .collect(),
        shrunk: vec![false; n],
        truncated: vec![false; n],
        dropped: vec![false; n],
        floored: vec![false; n],
        truncation_pct: 0.0,
        total: 0,
        content_budget,
    };
    let mut costs: Vec<u64> =
        fragments.iter().zip(&l.content).map(|(f, c)| cost(f.required, &f.wrapper, c, m)).collect();
    l.total = costs.iter().sum();
    let mut groups_done: BTreeSet<&str> = BTreeSet::new();
    let mut last_group: Option<Vec<usize>> = None;
    let cpu = opts.chars_per_unit;
    for i in 0..n {
        let f = &fragments[i];
        if f.isolate || excluded[i] {
            continue;
        }
        match f.strategy {
            Strategy::Verbatim => {}
            Strategy::Head { max_lines } => {
                if !over(l.total, content_budget) || !present(f.required, &l.content[i]) {
                    continue;
                }
                let new = head(&f.content, max_lines);
                if new == l.content[i] {
                    continue;
                }
                if f.flex_reserve > 0 && m.measure(new) < f.flex_reserve {
                    l.floored[i] = true;
                    continue;
                }
                l.content[i] = Cow::Borrowed(new);
                l.shrunk[i] = true;
                let c = cost(f.required, &f.wrapper, new, m);
                l.total = l.total - costs[i] + c;
                costs[i] = c;
            }
            Strategy::Truncate { .. } => {
                let key = f.group_key();
                if walk == Walk::NoTruncate || !groups_done.insert(key) || !over(l.total, content_budget) {
                    continue;
                }
                let members = group_members(fragments, excluded, key);
                let group_content: u64 = members.iter().map(|&j| m.measure(&l.content[j])).sum();
                let overhead = i128::from(l.total) - i128::from(group_content);
                let group_budget = if walk == Walk::Floors { 0 } else { i128::from(content_budget) - overhead };
                if walk == Walk::Reference && (group_budget <= 0 || group_budget >= i128::from(group_content)) {
                    continue; // skipped, not clamped (corpus case B9)
                }
                cut_group(fragments, &members, group_budget as f64, m, cpu, &mut l, &mut costs);
                last_group = Some(members);
            }
            Strategy::Drop => {
                if !over(l.total, content_budget) || !present(f.required, &l.content[i]) || l.content[i].is_empty() {
                    continue;
                }
                if f.flex_reserve > 0 {
                    l.floored[i] = true;
                    continue;
                }
                l.content[i] = Cow::Borrowed("");
                l.dropped[i] = true;
                let c = cost(f.required, &f.wrapper, "", m);
                l.total = l.total - costs[i] + c;
                costs[i] = c;
            }
        }
    }
    if let Some(members) = last_group.filter(|_| walk == Walk::Floors && l.fits()) {
        grow_back(fragments, &members, m, cpu, &mut l, &mut costs);
    }
    l
}

/// The truncate fragments of group `key` that the walk may cut.
fn group_members(fragments: &[Fragment], excluded: &[bool], key: &str) -> Vec<usize> {
    (0..fragments.len())
        .filter(|&j| {
            let g = &fragments[j];
            !g.isolate && !excluded[j] && matches!(g.strategy, Strategy::Truncate { .. }) && g.group_key() == key
        })
        .collect()
}

/// Each member's cut length when the group `members` gets `group_budget` budget units: a share
/// in proportion to its length, never below its floor or reserve, and with whether the reserve
/// (not the share or floor) set it. Each length grows with `group_budget`.
fn caps<M: Measure + ?Sized>(
    fragments: &[Fragment],
    members: &[usize],
    group_budget: f64,
    m: &M,
    cpu: u64,
) -> Vec<(u64, bool)> {
    let chars_budget = group_budget.max(0.0) * cpu as f64;
    let orig: Vec<u64> = members.iter().map(|&j| m.len(&fragments[j].content)).collect();
    let orig_total: u64 = orig.iter().sum();
    members
        .iter()
        .zip(&orig)
        .map(|(&j, &len)| {
            let g = &fragments[j];
            let Strategy::Truncate { floor } = g.strategy else { unreachable!("members are truncate") };
            let share =
                if orig_total == 0 { 0 } else { (len as f64 / orig_total as f64 * chars_budget).floor() as u64 };
            let base = share.max(floor);
            let cap = base.max(g.flex_reserve.saturating_mul(cpu));
            (cap, cap > base && base < len)
        })
        .collect()
}

/// Cuts the group `members` from their whole text to `group_budget` budget units (see [`caps`]).
fn cut_group<'f, M: Measure + ?Sized>(
    fragments: &'f [Fragment],
    members: &[usize],
    group_budget: f64,
    m: &M,
    cpu: u64,
    l: &mut Ladder<'f>,
    costs: &mut [u64],
) {
    let (mut orig_total, mut new_total) = (0u64, 0u64);
    for (&j, (cap, floored)) in members.iter().zip(caps(fragments, members, group_budget, m, cpu)) {
        let g = &fragments[j];
        let new = m.cut(&g.content, cap);
        l.floored[j] = floored;
        l.truncated[j] = new.len() < g.content.len();
        l.content[j] = Cow::Borrowed(new);
        orig_total += m.len(&g.content);
        new_total += m.len(new);
        let c = cost(g.required, &g.wrapper, new, m);
        l.total = l.total - costs[j] + c;
        costs[j] = c;
    }
    if orig_total > 0 {
        l.truncation_pct = (orig_total - new_total) as f64 / orig_total as f64 * 100.0;
    }
}

/// Grows the group `members`, cut to its floors, back to the largest group budget that still
/// fits (binary search: the group's cost grows with its budget).
fn grow_back<'f, M: Measure + ?Sized>(
    fragments: &'f [Fragment],
    members: &[usize],
    m: &M,
    cpu: u64,
    l: &mut Ladder<'f>,
    costs: &mut [u64],
) {
    let cost_at = |group_budget: u64| -> u64 {
        members
            .iter()
            .zip(caps(fragments, members, group_budget as f64, m, cpu))
            .map(|(&j, (cap, _))| {
                let g = &fragments[j];
                cost(g.required, &g.wrapper, m.cut(&g.content, cap), m)
            })
            .sum()
    };
    let rest = l.total - members.iter().map(|&j| costs[j]).sum::<u64>();
    let room = u64::try_from(l.content_budget).unwrap_or(0).saturating_sub(rest);
    // Every member whole once the group budget reaches the group's length (in budget units).
    let whole: u64 = members.iter().map(|&j| m.len(&fragments[j].content)).sum::<u64>() + 1;
    let (mut lo, mut hi) = (0u64, whole);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if cost_at(mid) <= room { lo = mid } else { hi = mid - 1 }
    }
    cut_group(fragments, members, lo as f64, m, cpu, l, costs);
}

/// The smallest composition of a fragment set: verbatim and isolate whole, `head` cut to its
/// lines, `truncate` cut to its floor (or reserve), `drop` omitted (unless it has a reserve).
/// The emission fit falls back to it; its size is "the smallest size reachable".
pub fn minimum<M: Measure + ?Sized>(fragments: &[Fragment], m: &M, opts: &Options<'_>) -> Composition {
    let mut plan = Vec::with_capacity(fragments.len());
    let mut report = Report::start(0, 0, total(fragments, m), isolate_prefix(fragments));
    report.under_pressure = true;
    report.total = 0;
    let (mut orig_chars, mut new_chars) = (0u64, 0u64);
    for f in fragments {
        let (content, shrunk, truncated, omitted) = match f.strategy {
            _ if f.isolate => (f.content.as_str(), false, false, false),
            Strategy::Verbatim => (f.content.as_str(), false, false, false),
            Strategy::Head { max_lines } => {
                let h = head(&f.content, max_lines);
                (h, h != f.content, false, false)
            }
            Strategy::Truncate { floor } => {
                let cap = floor.max(f.flex_reserve.saturating_mul(opts.chars_per_unit));
                let t = m.cut(&f.content, cap);
                orig_chars += m.len(&f.content);
                new_chars += m.len(t);
                (t, false, t.len() < f.content.len(), false)
            }
            Strategy::Drop if f.flex_reserve > 0 || f.content.is_empty() => (f.content.as_str(), false, false, false),
            Strategy::Drop => ("", false, false, true),
        };
        for (flag, list) in
            [(shrunk, &mut report.shrunk), (truncated, &mut report.truncated), (omitted, &mut report.omitted)]
        {
            if flag {
                list.push(f.id.clone());
            }
        }
        report.total += cost(f.required, &f.wrapper, content, m);
        plan.push(Planned {
            id: f.id.clone(),
            content: content.to_string(),
            wrapper: f.wrapper.clone(),
            present: present(f.required, content),
            shrunk,
            truncated,
            omitted,
        });
    }
    if orig_chars > 0 {
        report.truncation_pct = (orig_chars - new_chars) as f64 / orig_chars as f64 * 100.0;
    }
    Composition { fragments: plan, report }
}

/// A document's sections as fragments: strategy from `shrink=`, priority from `priority=`,
/// isolate sections (and a lone leading BOM) as the isolate prefix, every `truncate` section of
/// the document in one proportional group.
pub fn fragments_of(sections: &[Section]) -> Vec<Fragment> {
    sections
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut f = Fragment::new(s.id.clone(), s.body.clone(), s.shrink.into()).priority(s.priority);
            if s.is_isolate() || (i == 0 && !s.explicit && s.body == "\u{feff}") {
                f = f.isolate();
            }
            if s.protected {
                f.strategy = Strategy::Verbatim;
            }
            if matches!(f.strategy, Strategy::Truncate { .. }) {
                f = f.group("truncate");
            }
            f
        })
        .collect()
}

/// Emission's minimum set (`Options::minimum_for`): what [`minimum`] keeps of each fragment.
pub fn emission_minimum(f: &Fragment) -> Option<String> {
    match f.strategy {
        _ if f.isolate => Some(f.content.clone()),
        Strategy::Verbatim => Some(f.content.clone()),
        Strategy::Head { max_lines } => Some(head(&f.content, max_lines).to_string()),
        Strategy::Truncate { floor } => Some(Utf8Bytes.cut(&f.content, floor).to_string()),
        Strategy::Drop => None,
    }
}

/// Renders an emission composition: every present fragment's text; a fragment that was cut
/// mid-line gets its original line terminator back so the next section starts on its own line.
pub fn render_sections(fragments: &[Fragment], plan: &Composition) -> String {
    // Sized once (each present fragment, plus the line end a cut one may get): a loaded content
    // tree holds every composed document for the whole run, so no growth slack is kept.
    let len: usize = plan.fragments.iter().filter(|p| p.present).map(|p| p.wrapper.len() + p.content.len() + 2).sum();
    let mut out = String::with_capacity(len);
    for (f, p) in fragments.iter().zip(&plan.fragments) {
        if !p.present {
            continue;
        }
        out.push_str(&p.wrapper);
        out.push_str(&p.content);
        if (p.shrunk || p.truncated) && !p.content.is_empty() && !p.content.ends_with('\n') {
            if f.content.ends_with("\r\n") && !p.content.ends_with('\r') {
                out.push_str("\r\n");
            } else if f.content.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Parses a document's markers and composes it whole (every section verbatim): the document
/// minus its marker lines, byte for byte otherwise. Returns the text and the explicit-section
/// list (empty for a document without sections).
pub fn document(path: &str, src: &str) -> Result<(String, Vec<Section>), crate::markup::markers::MarkerError> {
    let doc = crate::markup::markers::parse(path, src)?;
    if !doc.has_markers() {
        return Ok((src.to_string(), Vec::new()));
    }
    let mut whole = fragments_of(&doc.sections);
    for f in &mut whole {
        f.strategy = Strategy::Verbatim;
    }
    let size = i64::try_from(total(&whole, &Utf8Bytes)).unwrap_or(i64::MAX);
    let plan = compose(&whole, size, &Utf8Bytes, &Options::default())
        .expect("parsed sections have unique ids and leading isolates");
    let text = render_sections(&whole, &plan);
    let sections = if doc.explicit_sections().next().is_some() { doc.sections } else { Vec::new() };
    Ok((text, sections))
}

#[cfg(test)]
mod tests;
