//! Compact content mode outside the workflows (ADR-4139 stream 2, SPEC section 8): the agents'
//! payloads and the config schema they are selected by.
//!
//! Input: the parsed [`Content`]. Output: validation (before anything is written) of
//! - `msd-core/templates/config-keys.json` (the keys `msd_run config-set` accepts) and
//!   `msd-core/templates/config.json` (it must hold exactly the schema's defaults);
//! - compact agent variants `msd-core/agents/<agent>.compact.md`: each belongs to an agent, is
//!   strictly smaller than the agent's canonical text, and keeps every protected line of it;
//!
//! the canonical payload copies the installer adds to every runtime's core
//! (`<core>/agents/<agent>.md`: the agent's body, whatever format the runtime's own agent files
//! use), and [`payload`], the text `msd_run query agent-skills` prints.
//!
//! Invariant: a payload is never empty; when compact mode is on and the agent has no compact
//! variant, the canonical text is served and the payload says so inside it.

use std::collections::BTreeSet;

use crate::pipeline::load::{Content, ContentError};
use msd_core::fs::relpath::RelPath;
use msd_core::installed::compact::{AGENTS_DIR, COMPACT_SUFFIX};
use msd_core::installed::config_keys::{SCHEMA_PATH, Schema, TEMPLATE_PATH};
use msd_core::markup::markers::{self, js_trim};

fn err(content: &Content, rel: &str, line: Option<usize>, message: String, hint: &str) -> ContentError {
    let path = content.tree.display(&RelPath::new(rel).expect("content paths are relative"));
    ContentError { path, line, message, hint: hint.to_string() }
}

/// Validates the config schema, the template and the compact agent variants of `content`.
pub(crate) fn validate(content: &Content) -> Result<(), ContentError> {
    let core_text = |rel: &str| content.core.iter().find(|f| f.rel.as_str() == rel).and_then(|f| f.text.as_deref());
    if let Some(text) = core_text(SCHEMA_PATH) {
        let src = format!("msd-core/{SCHEMA_PATH}");
        let schema =
            Schema::parse(&content.tree.display(&RelPath::new(src.clone()).expect("static")), text).map_err(|e| {
                ContentError {
                path: e.path,
                line: e.line,
                message: e.message,
                hint:
                    "each key is {\"key\", \"type\": \"bool|enum|paths\", \"values\" (enum), \"default\", \"meaning\"}"
                        .into(),
            }
            })?;
        if let Some(t) = core_text(TEMPLATE_PATH) {
            let tpl = format!("msd-core/{TEMPLATE_PATH}");
            let doc: serde_json::Value = serde_json::from_str(t)
                .map_err(|e| err(content, &tpl, Some(e.line()), format!("not valid JSON: {e}"), "fix the JSON"))?;
            let problems = schema.check_document(&doc, true);
            if !problems.is_empty() {
                return Err(err(
                    content,
                    &tpl,
                    None,
                    format!("disagrees with {SCHEMA_PATH}: {}", problems.join("; ")),
                    "the template holds every key of the schema that has a default, with that default, and nothing else",
                ));
            }
        }
    }
    for f in &content.core {
        let Some(file) = f.rel.as_str().strip_prefix(&format!("{AGENTS_DIR}/")) else { continue };
        let src = f.source.as_str();
        let Some(name) = file.strip_suffix(COMPACT_SUFFIX).filter(|n| !n.contains('/')) else {
            return Err(err(
                content,
                src,
                None,
                "msd-core/agents/ holds only compact variants named <agent>.compact.md".into(),
                "canonical payloads are copied from agents/<agent>.md at install; move this file",
            ));
        };
        let Some(agent) = content.agents.iter().find(|a| a.stem == name) else {
            return Err(err(
                content,
                src,
                None,
                format!("compact variant of unknown agent `{name}`"),
                "name it after an agent of agents/, or remove it",
            ));
        };
        let variant = f.text.as_deref().unwrap_or_default();
        if variant.len() >= agent.body.len() {
            return Err(err(
                content,
                src,
                None,
                format!("{} bytes, not smaller than the canonical {} bytes of {name}", variant.len(), agent.body.len()),
                "a compact variant is a terser rewrite; shorten it",
            ));
        }
        let raw_agent = String::from_utf8_lossy(&content.tree.files[&agent.source]).into_owned();
        let raw_variant = String::from_utf8_lossy(&f.bytes).into_owned();
        let canonical = markers::parse(agent.source.as_str(), &raw_agent).map_err(ContentError::from)?;
        let kept: BTreeSet<&str> = raw_variant.split('\n').map(js_trim).collect();
        for p in &canonical.protected {
            for &n in &p.lines {
                let line = canonical.line_text(n);
                if !kept.contains(line) {
                    return Err(err(
                        content,
                        src,
                        None,
                        format!("drops protected line {n} of {}: {line}", agent.source),
                        "a compact variant keeps every protected line of its agent word for word",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The canonical payload copies: `(path relative to the core dir, text, content source)`.
pub(crate) fn canonical_payloads(content: &Content) -> Vec<(RelPath, &str, &RelPath)> {
    content
        .agents
        .iter()
        .map(|a| {
            let rel = RelPath::new(format!("{AGENTS_DIR}/{}.md", a.stem)).expect("agent names are stems");
            (rel, a.body.as_str(), &a.source)
        })
        .collect()
}
