//! `msd_run query agent-skills <agent> [--json]`: the payload a workflow pastes into an agent's
//! spawn prompt.
//!
//! Where the runtime loads `agents/<agent>.md` itself when a spawn names the agent
//! (`agents_native` in `<core>/runtime.json`, written by the installer from the manifest's
//! layout), the payload is the skills block only. Elsewhere it also carries the instructions:
//! with `workflow.compact_content` true the agent's compact variant
//! (`<core>/agents/<agent>.compact.md`); false, absent or invalid, its canonical text
//! (`<core>/agents/<agent>.md`); true with no variant, the canonical text with the substitution
//! disclosed inside the payload. The project's `agent_skills.<agent>` paths come first: each
//! names a directory holding `SKILL.md` (or a `.md` file); one that does not exist is skipped
//! with a warning on stderr. An agent that is not installed is a usage error (exit 2). The
//! payload is never empty.

use std::path::Path;

use serde_json::Value;

use super::config::{self, read_config};
use super::{Answer, RunError, core_dir, read_core};
use msd_core::installed::compact::{self, AGENTS_DIR, COMPACT_SUFFIX, Variant};
use msd_core::installed::config_keys;
use msd_core::installed::runtime_info::{RUNTIME_INFO_PATH, RuntimeInfo};

/// Arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent, e.g. msd-executor.
    pub agent: String,
    /// Print {agent, variant, instructions_included, compact_content, skills, warnings, payload}
    /// as JSON.
    #[arg(long)]
    pub json: bool,
}

fn is_agent_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// `<core>/runtime.json`: absent reads as the fallback (no native agents: the body is carried);
/// present but unreadable is a damaged install.
fn runtime_info(core: &Path) -> Result<RuntimeInfo, RunError> {
    match read_core(core, RUNTIME_INFO_PATH)? {
        None => Ok(RuntimeInfo::fallback()),
        Some(t) => RuntimeInfo::parse(&t).map_err(|e| RunError::Core {
            path: core.join(RUNTIME_INFO_PATH).display().to_string(),
            message: format!("damaged: {e}"),
            hint: "reinstall msd-core with msd-install".into(),
        }),
    }
}

/// Runs the query.
pub(crate) fn run(core: Option<&Path>, a: &Args) -> Result<Answer, RunError> {
    let core = core_dir(core)?;
    let unknown = || RunError::Usage {
        message: format!("unknown agent `{}`", a.agent),
        hint: format!("installed agents are the files of {}", core.join(AGENTS_DIR).display()),
    };
    if !is_agent_name(&a.agent) {
        return Err(unknown());
    }
    let canonical = read_core(&core, &format!("{AGENTS_DIR}/{}.md", a.agent))?.ok_or_else(unknown)?;
    let schema = config::schema(&core)?;
    let doc = Value::Object(read_config()?.unwrap_or_default());
    // Skill paths are relative to the project root, wherever in the project this runs.
    let root = config::find_project()?.map(|p| p.root).unwrap_or_default();
    let mut warnings: Vec<String> = Vec::new();

    let key = "workflow.compact_content";
    let compact_on = match config_keys::get(&doc, key) {
        None => schema.lookup(key).and_then(|(s, _)| s.default()) == Some(Value::Bool(true)),
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            warnings.push(format!("{key} is {other}, not a boolean: serving the canonical payload"));
            false
        }
    };
    let (variant, instructions) = if compact_on {
        match read_core(&core, &format!("{AGENTS_DIR}/{}{COMPACT_SUFFIX}", a.agent))? {
            Some(t) => (Variant::Compact, t),
            None => (Variant::CanonicalSubstituted, canonical),
        }
    } else {
        (Variant::Canonical, canonical)
    };

    let skills_key = format!("agent_skills.{}", a.agent);
    let mut skills = Vec::new();
    match config_keys::get(&doc, &skills_key) {
        None => {}
        Some(Value::Array(items)) => {
            for item in items {
                let Some(p) = item.as_str().map(|p| p.trim_end_matches('/')) else {
                    warnings.push(format!("{skills_key}: {item} is not a path; skipped"));
                    continue;
                };
                if msd_core::fs::relpath::RelPath::new(p).is_err() {
                    warnings.push(format!("{skills_key}: `{p}` is not a project-relative path; skipped"));
                } else if msd_core::fs::fsx::exists(&root.join(p).join("SKILL.md")) {
                    skills.push(format!("{p}/SKILL.md"));
                } else if p.ends_with(".md") && msd_core::fs::fsx::exists(&root.join(p)) {
                    skills.push(p.to_string());
                } else {
                    warnings.push(format!("{skills_key}: `{p}` has no SKILL.md; skipped"));
                }
            }
        }
        Some(other) => warnings.push(format!("{skills_key} is {other}, not a list of paths; ignored")),
    }

    let info = runtime_info(&core)?;
    let body = (!info.agents_native).then_some((variant, instructions.as_str()));
    let payload = compact::payload(&a.agent, body, &skills);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if a.json {
        let doc = serde_json::json!({
            "agent": a.agent,
            "variant": variant,
            "instructions_included": body.is_some(),
            "compact_content": compact_on,
            "skills": skills,
            "warnings": warnings,
            "payload": payload,
        });
        Ok(Answer::json(&doc, false))
    } else {
        Ok(Answer::text(payload))
    }
}
