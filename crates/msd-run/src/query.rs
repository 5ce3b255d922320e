//! `msd_run query <question>`: the dispatch of every query. Each query is one module; this file
//! only routes. `init.<workflow>` is not a fixed subcommand (the workflows are whatever the
//! installed tree holds), so it arrives as an external subcommand and is routed by its prefix.

use std::ffi::OsString;
use std::path::Path;

use clap::Subcommand;

use super::{Answer, RunError, agent_skills, context_predicates, init, prompt_budget, update_check};

/// The query that is not a fixed subcommand, for `msd_run query --help`.
pub const AFTER_HELP: &str = "Workflow facts:
  init.<workflow> [args...]  what that workflow needs for this invocation, as JSON: phase, paths,
                             exists, flags, args, config and section_manifest (the sections to
                             read). Pass the workflow's arguments through unchanged:
                             msd_run query init.plan-phase 3 --prd docs/prd.md";

/// Queries.
#[derive(Debug, Subcommand)]
pub enum Query {
    /// The payload to paste into an agent's spawn prompt: the project's skills for it
    /// (`agent_skills.<agent>`) and its instructions, compact when `workflow.compact_content` is
    /// true, canonical otherwise. Never empty.
    AgentSkills(agent_skills::Args),
    /// Predicates of CONTEXT.md matching every given selector, as JSON {matched, predicates}.
    ContextPredicates(context_predicates::Args),
    /// Assemble a review prompt that fits a token budget: instructions, roadmap and plans kept,
    /// PROJECT.md head-shrunk, plans truncated proportionally, context / research /
    /// requirements dropped in that order. Writes the prompt and its metadata; exit 10 when no
    /// prompt fits.
    PromptBudget(Box<prompt_budget::PromptBudgetArgs>),
    /// Whether a newer msd-core build is at hand: the installed version (this helper's) against
    /// `--available` (what `msd-install --version` prints) and the installer's update cache,
    /// compared numerically, as JSON {installed, available, available_from, status}.
    UpdateCheck(update_check::Args),
    /// `init.<workflow> [args...]`: what the workflow needs for this invocation, as JSON: the
    /// phase, project paths, which exist, the parsed flags and values, the effective config, and
    /// `section_manifest` (the sections to read).
    #[command(external_subcommand)]
    Other(Vec<OsString>),
}

/// Runs a query.
pub fn run(core: Option<&Path>, q: &Query) -> Result<Answer, RunError> {
    match q {
        Query::AgentSkills(a) => agent_skills::run(core, a),
        Query::ContextPredicates(a) => context_predicates::run(core, a),
        Query::PromptBudget(a) => prompt_budget::run(a),
        Query::UpdateCheck(a) => update_check::run(a),
        Query::Other(words) => {
            let mut words = words.iter().map(|w| {
                w.to_str().map(str::to_string).ok_or_else(|| RunError::Usage {
                    message: format!("argument {} is not UTF-8", w.to_string_lossy()),
                    hint: "pass arguments as UTF-8 text".into(),
                })
            });
            let name = words.next().transpose()?.unwrap_or_default();
            let args: Vec<String> = words.collect::<Result<_, _>>()?;
            match name.strip_prefix("init.") {
                Some(stem) => init::run(core, stem, &args),
                None => Err(RunError::Usage {
                    message: format!("unknown query `{name}`"),
                    hint: "see `msd_run query --help`; workflow facts are `msd_run query init.<workflow>`".into(),
                }),
            }
        }
    }
}
