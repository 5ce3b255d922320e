//! `msd_run query prompt-budget`: the review-prompt ladder ([`msd_core::compose::budget`]) on files.
//!
//! Input: `--budget N` (tokens, positive), `--instructions-file`, `--roadmap-file`, one or more
//! `--plan-file`, optional `--project-file`, `--context-file`, `--research-file`,
//! `--requirements-file`, `--output-prompt`, `--output-metadata`, `--safety-margin-pct`
//! (default 10), `--project-md-head-lines` (default 40). `--plan-file` repeats; for every other
//! flag the first occurrence wins. Output: the prompt file and the metadata JSON (pretty, no
//! trailing newline), always both. A missing optional file is absent. A plan's heading is its
//! file's basename.
//!
//! Exit codes are the helper's own ([`crate::error`]): 2 for usage (a missing flag, a budget that
//! is not a positive integer), 5 for a file that cannot be read as UTF-8 text (a required one, or
//! an optional one that exists; a FIFO or a device is refused at once) or written, 4 for a path
//! in the project that leads out of it through a symlink ([`crate::confine_named`]: neither read
//! nor written), 10 when no prompt fits (the files are written, the
//! prompt empty). The reference's contract used 1 for the first two and 2 for the last; that
//! compatibility note is in `msd_run --help` and the code-review workflow checks the new codes.

use std::path::{Path, PathBuf};

use clap::{ArgAction, Args};

use msd_core::compose::budget::{self, BudgetOptions, PlanText, Sections};
use msd_core::fs::fsx;

use crate::RunError;
use crate::answer::Answer;

/// Flags of `query prompt-budget`. Every flag but `--plan-file` may be given more than once, and
/// the first occurrence wins (as in the reference), so each is a list here.
#[derive(Debug, Clone, Args)]
pub struct PromptBudgetArgs {
    /// The budget in tokens (a positive integer; tokens are ceil(UTF-16 units / 4)).
    #[arg(long, value_name = "N", action = ArgAction::Append, allow_hyphen_values = true)]
    pub budget: Vec<String>,
    /// The review instructions (kept whole).
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub instructions_file: Vec<PathBuf>,
    /// ROADMAP.md (kept whole).
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub roadmap_file: Vec<PathBuf>,
    /// A PLAN.md to review; repeat for each plan (truncated proportionally, never dropped).
    /// None at all is a review without plans.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub plan_file: Vec<PathBuf>,
    /// The trim note's template, replacing the shipped one (`{budget}`, `{omittedList}` and
    /// `{planTruncationPct}` are filled in).
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub note_template_file: Vec<PathBuf>,
    /// PROJECT.md (head-shrunk under pressure); absent if the file does not exist.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub project_file: Vec<PathBuf>,
    /// Context (dropped first); absent if the file does not exist.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub context_file: Vec<PathBuf>,
    /// Research (dropped second); absent if the file does not exist.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub research_file: Vec<PathBuf>,
    /// Requirements (dropped last); absent if the file does not exist.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub requirements_file: Vec<PathBuf>,
    /// Where to write the prompt.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub output_prompt: Vec<PathBuf>,
    /// Where to write the metadata JSON.
    #[arg(long, value_name = "P", action = ArgAction::Append)]
    pub output_metadata: Vec<PathBuf>,
    /// Percent taken off the budget first (default 10).
    #[arg(long, value_name = "N", action = ArgAction::Append, allow_hyphen_values = true)]
    pub safety_margin_pct: Vec<String>,
    /// Lines of PROJECT.md kept under pressure (default 40).
    #[arg(long, value_name = "N", action = ArgAction::Append, allow_hyphen_values = true)]
    pub project_md_head_lines: Vec<String>,
}

fn usage(message: impl Into<String>, hint: &str) -> RunError {
    RunError::Usage { message: message.into(), hint: hint.into() }
}

fn io(p: &Path, source: std::io::Error) -> RunError {
    RunError::Io { path: p.display().to_string(), source }
}

fn required<'a, T>(v: &'a [T], flag: &str) -> Result<&'a T, RunError> {
    v.first().ok_or_else(|| usage(format!("{flag} is required"), "run `msd_run query prompt-budget --help`"))
}

fn read_text(p: &Path) -> Result<Option<String>, RunError> {
    let bytes = crate::read_named(p)?;
    bytes
        .map(|b| {
            String::from_utf8(b)
                .map_err(|_| io(p, std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text")))
        })
        .transpose()
}

fn read_required(p: &Path, flag: &str) -> Result<String, RunError> {
    read_text(p)?.ok_or_else(|| {
        io(p, std::io::Error::new(std::io::ErrorKind::NotFound, format!("{flag} {}: no such file", p.display())))
    })
}

fn read_optional(v: &[PathBuf]) -> Result<Option<String>, RunError> {
    match v.first() {
        Some(p) => read_text(p),
        None => Ok(None),
    }
}

fn parse_budget(s: &str) -> Result<i64, RunError> {
    let ok = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match s.parse::<i64>() {
        Ok(n) if ok && n > 0 => Ok(n),
        _ => Err(usage(
            format!("--budget must be a positive integer, not `{s}`"),
            "pass the token budget, e.g. --budget 12000",
        )),
    }
}

fn resolve(a: &PromptBudgetArgs) -> Result<(Sections, i64, BudgetOptions, PathBuf, PathBuf), RunError> {
    let budget = parse_budget(required(&a.budget, "--budget")?)?;
    let instructions_file = required(&a.instructions_file, "--instructions-file")?;
    let roadmap_file = required(&a.roadmap_file, "--roadmap-file")?;
    // Both outputs are checked before either is written: none goes out of the project by a link.
    let output_prompt = crate::confine_named(required(&a.output_prompt, "--output-prompt")?)?.0;
    let output_metadata = crate::confine_named(required(&a.output_metadata, "--output-metadata")?)?.0;
    let mut opts = BudgetOptions::default();
    if let Some(m) = a.safety_margin_pct.first() {
        opts.safety_margin_pct =
            m.parse::<f64>().ok().filter(|m| m.is_finite() && (0.0..100.0).contains(m)).ok_or_else(|| {
                usage(
                    format!("--safety-margin-pct must be a number from 0 to below 100, not `{m}`"),
                    "e.g. --safety-margin-pct 10",
                )
            })?;
    }
    if let Some(n) = a.project_md_head_lines.first() {
        opts.project_md_head_lines = n.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            usage(
                format!("--project-md-head-lines must be a whole number, not `{n}`"),
                "e.g. --project-md-head-lines 40",
            )
        })?;
    }
    if let Some(p) = a.note_template_file.first() {
        opts.note_template = Some(read_required(p, "--note-template-file")?);
    }
    let mut plans = Vec::new();
    for p in &a.plan_file {
        let file = p
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| usage(format!("--plan-file {}: no file name", p.display()), "pass a plan file"))?;
        plans.push(PlanText { file: file.to_string(), content: read_required(p, "--plan-file")? });
    }
    let sections = Sections {
        instructions: read_required(instructions_file, "--instructions-file")?,
        roadmap: read_required(roadmap_file, "--roadmap-file")?,
        plans,
        project_md: read_optional(&a.project_file)?,
        context: read_optional(&a.context_file)?,
        research: read_optional(&a.research_file)?,
        requirements: read_optional(&a.requirements_file)?,
    };
    Ok((sections, budget, opts, output_prompt, output_metadata))
}

/// Runs the query: writes the prompt and its metadata, answers nothing on stdout.
pub(crate) fn run(a: &PromptBudgetArgs) -> Result<Answer, RunError> {
    let (sections, budget, opts, out_prompt, out_meta) = resolve(a)?;
    let outcome = budget::apply(&sections, budget, &opts)
        .map_err(|e| usage(e.to_string(), "give each plan file a distinct name"))?;
    let meta = serde_json::to_string_pretty(&outcome.metadata).expect("metadata serialises");
    for (path, bytes) in [(&out_prompt, outcome.prompt.as_bytes()), (&out_meta, meta.as_bytes())] {
        // Written again on each review, and may be the user's: its mode, owner and link are kept.
        fsx::write_in_place(path, bytes).map_err(|e| io(path, e))?;
    }
    if outcome.metadata.hard_failed {
        return Err(RunError::NoFit {
            budget,
            effective: outcome.metadata.effective_budget,
            needed: outcome.metadata.estimated_tokens,
        });
    }
    Ok(Answer::none())
}
