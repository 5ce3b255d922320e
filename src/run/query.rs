//! `msd_run query <question>`: the dispatch of every query. Each query is one module; this file
//! only routes.

use std::path::Path;

use clap::Subcommand;

use super::{RunError, agent_skills};

/// Queries.
#[derive(Debug, Subcommand)]
pub enum Query {
    /// The payload to paste into an agent's spawn prompt: the project's skills for it
    /// (`agent_skills.<agent>`) and its instructions, compact when `workflow.compact_content` is
    /// true, canonical otherwise. Never empty.
    AgentSkills(agent_skills::Args),
}

/// Runs a query.
pub fn run(core: Option<&Path>, q: &Query) -> Result<(), RunError> {
    match q {
        Query::AgentSkills(a) => agent_skills::run(core, a),
    }
}
