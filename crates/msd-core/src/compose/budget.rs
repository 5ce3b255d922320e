//! The review-prompt ladder (contracts section 2): a review prompt assembled from its sections
//! and fitted to a token budget through the composer.
//!
//! Input: [`Sections`] (instructions, roadmap, plans, and the optional project, context,
//! research and requirements texts), a budget in tokens and [`BudgetOptions`]. Output: an
//! [`Outcome`]: the prompt and its [`Metadata`] (the exact keys of the reference).
//!
//! Arithmetic: tokens are `ceil(UTF-16 units / 4)`; the effective budget is
//! `floor(budget * (1 - margin/100))` in f64; 80 tokens are reserved for the note, only under
//! pressure. The ladder is [`build_fragments`] in declaration order: `projectMd` is head-shrunk,
//! then the plans are truncated proportionally (each keeps at least 1024 UTF-16 units, none is
//! dropped), then context, research and requirements are dropped in that order while still
//! over. The composer measures fragments one by one and never sees the `\n\n` separators or
//! the note, so the assembled prompt is checked again: over the effective budget it is a hard
//! fail with an empty prompt. The note's text is a template file, not code.

use crate::compose::{self, ComposeError, Fragment, Measure, Options, Strategy, Tokens};

/// Tokens kept free for the note under pressure.
pub const NOTE_RESERVE_TOKENS: i64 = 80;
/// UTF-16 units every plan keeps.
pub const PLAN_FLOOR_CHARS: u64 = 1024;
/// Default safety margin, percent.
pub const DEFAULT_SAFETY_MARGIN_PCT: f64 = 10.0;
/// Default lines of PROJECT.md kept under pressure.
pub const DEFAULT_PROJECT_MD_HEAD_LINES: i64 = 40;

/// The note injected when anything was trimmed: `{budget}`, `{omittedList}` and
/// `{planTruncationPct}` are replaced, the first occurrence of each.
pub fn default_note_template() -> &'static str {
    let t = include_str!("templates/prompt-budget-note.md");
    t.strip_suffix('\n').unwrap_or(t)
}

/// One plan file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanText {
    /// Its file name (the basename), shown as the plan's heading.
    pub file: String,
    /// Its text.
    pub content: String,
}

/// The sections of a review prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sections {
    /// Instructions (verbatim, first).
    pub instructions: String,
    /// ROADMAP.md (verbatim).
    pub roadmap: String,
    /// The plans (truncated proportionally, never dropped).
    pub plans: Vec<PlanText>,
    /// PROJECT.md (head-shrunk).
    pub project_md: Option<String>,
    /// Context (dropped first).
    pub context: Option<String>,
    /// Research (dropped second).
    pub research: Option<String>,
    /// Requirements (dropped last).
    pub requirements: Option<String>,
}

/// Ladder options.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetOptions {
    /// Percent taken off the budget.
    pub safety_margin_pct: f64,
    /// The note template (default: [`default_note_template`]).
    pub note_template: Option<String>,
    /// Lines of PROJECT.md kept under pressure.
    pub project_md_head_lines: i64,
}

impl Default for BudgetOptions {
    fn default() -> Self {
        BudgetOptions {
            safety_margin_pct: DEFAULT_SAFETY_MARGIN_PCT,
            note_template: None,
            project_md_head_lines: DEFAULT_PROJECT_MD_HEAD_LINES,
        }
    }
}

/// A percentage, written as an integer when it is whole (as JavaScript writes numbers).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pct(pub f64);

impl serde::Serialize for Pct {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 9.0e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

/// The metadata written beside the prompt, keys as the reference writes them: camelCase, the one
/// documented exception to the helper's snake_case (docs/CONTENT-CONVENTIONS.md section 3).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The budget given.
    pub budget: i64,
    /// `floor(budget * (1 - margin/100))`.
    pub effective_budget: i64,
    /// Tokens of the assembled prompt; on a minimum-set hard fail, of the smallest prompt the
    /// ladder can assemble (what the budget would have to hold), never 0.
    pub estimated_tokens: u64,
    /// Omitted fragment ids.
    pub omitted: Vec<String>,
    /// PROJECT.md was head-shrunk.
    pub project_md_shrunk: bool,
    /// Percent of the plans' length that was cut.
    pub plan_truncation_pct: Pct,
    /// No prompt fits.
    pub hard_failed: bool,
    /// The note was injected.
    pub note_injected: bool,
}

/// The result.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The prompt (empty on a hard fail).
    pub prompt: String,
    /// Its metadata.
    pub metadata: Metadata,
}

const PLANS_GROUP: &str = "plans";

/// The ladder's fragments in declaration order (= ladder order). Plan ids are `plan:<file>`, or
/// `plan:<index>:<file>` when that is taken.
pub fn build_fragments(s: &Sections, opts: &BudgetOptions) -> Vec<Fragment> {
    let opt = |o: &Option<String>| o.clone().unwrap_or_default();
    let mut out = vec![
        Fragment::new("instructions", s.instructions.clone(), Strategy::Verbatim).required(),
        Fragment::new("roadmap", s.roadmap.clone(), Strategy::Verbatim).wrapper("## Roadmap\n\n").required(),
        Fragment::new("projectMd", opt(&s.project_md), Strategy::Head { max_lines: opts.project_md_head_lines })
            .wrapper("## Project\n\n"),
    ];
    // A review without plans (a code review, say) has no plans section at all.
    if !s.plans.is_empty() {
        out.push(Fragment::new("plans-header", "", Strategy::Verbatim).wrapper("## Plans\n\n").required());
    }
    for (i, p) in s.plans.iter().enumerate() {
        let mut id = format!("plan:{}", p.file);
        if out.iter().any(|f| f.id == id) {
            id = format!("plan:{i}:{}", p.file);
        }
        out.push(
            Fragment::new(id, p.content.clone(), Strategy::Truncate { floor: PLAN_FLOOR_CHARS })
                .wrapper(format!("### {}\n\n", p.file))
                .group(PLANS_GROUP)
                .required(),
        );
    }
    out.push(Fragment::new("context", opt(&s.context), Strategy::Drop).wrapper("## Context\n\n"));
    out.push(Fragment::new("research", opt(&s.research), Strategy::Drop).wrapper("## Research\n\n"));
    out.push(Fragment::new("requirements", opt(&s.requirements), Strategy::Drop).wrapper("## Requirements\n\n"));
    out
}

/// The least of each fragment any prompt needs: instructions and roadmap whole, the first 1024
/// UTF-16 units of each plan, nothing of the rest.
pub fn minimum_for(f: &Fragment) -> Option<String> {
    match f.id.as_str() {
        "instructions" | "roadmap" => Some(f.content.clone()),
        _ if f.group.as_deref() == Some(PLANS_GROUP) => Some(Tokens.cut(&f.content, PLAN_FLOOR_CHARS).to_string()),
        _ => None,
    }
}

/// The smallest prompt the ladder can assemble (the minimum set, joined as [`apply`] joins it,
/// without the note): its size is what a minimum-set hard fail reports.
fn minimum_prompt(fragments: &[Fragment]) -> String {
    let whole = |id: &str| fragments.iter().find(|f| f.id == id).map(|f| format!("{}{}", f.wrapper, f.content));
    let plans: Vec<String> = fragments
        .iter()
        .filter(|f| f.group.as_deref() == Some(PLANS_GROUP))
        .filter_map(|f| minimum_for(f).map(|m| format!("{}{m}", f.wrapper)))
        .collect();
    let mut blocks: Vec<String> = Vec::new();
    blocks.extend(whole("instructions"));
    blocks.extend(whole("roadmap"));
    if let Some(header) = fragments.iter().find(|f| f.id == "plans-header") {
        blocks.push(format!("{}{}", header.wrapper, plans.join("\n\n")));
    }
    blocks.join("\n\n")
}

/// The composer options of the ladder.
pub fn options(opts: &BudgetOptions) -> Options<'static> {
    Options {
        safety_margin_pct: opts.safety_margin_pct,
        reserve: NOTE_RESERVE_TOKENS,
        chars_per_unit: 4,
        minimum_for: Some(&minimum_for),
        priority_cutoff: false,
        // The reference ladder, exactly (its outputs are pinned case by case).
        monotone: false,
    }
}

/// Rounds half up, as `Math.round` does for the non-negative values here.
fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// Replaces the first occurrence of `from`.
fn replace_first(s: &str, from: &str, to: &str) -> String {
    s.replacen(from, to, 1)
}

/// Applies the ladder.
pub fn apply(s: &Sections, budget: i64, opts: &BudgetOptions) -> Result<Outcome, ComposeError> {
    let fragments = build_fragments(s, opts);
    let c = compose::compose(&fragments, budget, &Tokens, &options(opts))?;
    let r = &c.report;
    if r.hard_failed {
        return Ok(Outcome {
            prompt: String::new(),
            metadata: Metadata {
                budget,
                effective_budget: r.effective_budget,
                estimated_tokens: Tokens::estimate(&minimum_prompt(&fragments)),
                omitted: Vec::new(),
                project_md_shrunk: false,
                plan_truncation_pct: Pct(0.0),
                hard_failed: true,
                note_injected: false,
            },
        });
    }
    let project_md_shrunk = r.shrunk.iter().any(|id| id == "projectMd");
    let trimmed = !r.omitted.is_empty() || project_md_shrunk || r.truncation_pct > 0.0;
    let note = trimmed.then(|| {
        let template = opts.note_template.as_deref().unwrap_or(default_note_template());
        let omitted = if r.omitted.is_empty() { "none".to_string() } else { r.omitted.join(", ") };
        let t = replace_first(template, "{budget}", &budget.to_string());
        let t = replace_first(&t, "{omittedList}", &omitted);
        replace_first(&t, "{planTruncationPct}", &format!("{}", js_round(r.truncation_pct) as i64))
    });

    let block = |id: &str| c.get(id).filter(|p| p.present).map(|p| format!("{}{}", p.wrapper, p.content));
    let mut blocks: Vec<String> = Vec::new();
    blocks.extend(block("instructions"));
    blocks.extend(note.clone());
    blocks.extend(block("roadmap"));
    blocks.extend(block("projectMd"));
    let plans: Vec<String> = c
        .fragments
        .iter()
        .zip(&fragments)
        .filter(|(_, f)| f.group.as_deref() == Some(PLANS_GROUP))
        .filter_map(|(p, _)| block(&p.id))
        .collect();
    if let Some(header) = block("plans-header") {
        blocks.push(format!("{header}{}", plans.join("\n\n")));
    }
    for id in ["context", "research", "requirements"] {
        blocks.extend(block(id));
    }
    let prompt = blocks.join("\n\n");
    let estimated = Tokens::estimate(&prompt);
    let hard_failed = i128::from(estimated) > i128::from(r.effective_budget);
    Ok(Outcome {
        prompt: if hard_failed { String::new() } else { prompt },
        metadata: Metadata {
            budget,
            effective_budget: r.effective_budget,
            estimated_tokens: estimated,
            omitted: r.omitted.clone(),
            project_md_shrunk,
            plan_truncation_pct: Pct(r.truncation_pct),
            hard_failed,
            note_injected: note.is_some(),
        },
    })
}

#[cfg(test)]
mod tests;
