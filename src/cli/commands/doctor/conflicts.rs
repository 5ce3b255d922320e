//! Another tool's (or the user's) entries in a runtime's settings files that stop msd's install
//! from working: the settings the manifest names in `conflicts` (a deny rule covering the
//! helper, hooks switched off), and hook entries of others on the same event and matcher as
//! msd's. Reads only.

use std::path::{Path, PathBuf};

use msd_core::fs::fsx;
use msd_core::manifest::capability::{Capability, glob_match};

use super::{Finding, Level, finding};
use crate::apply::state::InstallState;
use crate::pipeline::target::Target;

/// A settings file read as JSON (comments and trailing commas allowed).
fn read_json(path: &Path) -> Option<serde_json::Value> {
    let text = fsx::read_to_string(path).ok()?;
    let ast = jsonc_parser::parse_to_ast(&text, &Default::default(), &jsonc_parser::ParseOptions::default()).ok()?;
    ast.value.map(serde_json::Value::from)
}

/// The manifest's conflicts found in the files of `t` (and the user's files the runtime reads
/// with them).
pub(super) fn check(cap: &Capability, t: &Target, user_home: &Path, findings: &mut Vec<Finding>) {
    for c in &cap.conflicts {
        let mut seen: Vec<PathBuf> = Vec::new();
        for f in &c.files {
            let path = match f.strip_prefix("~/") {
                Some(rel) => user_home.join(rel),
                None => t.home.join(f),
            };
            let canon = fsx::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&canon) {
                continue;
            }
            seen.push(canon);
            let Some(doc) = read_json(&path) else { continue };
            let Some(value) = c.at.iter().try_fold(&doc, |v, k| v.get(k)) else { continue };
            let key = c.at.join(".");
            let hint = format!(
                "remove it from {} (or narrow it so it does not cover msd), then start {} again",
                path.display(),
                cap.title
            );
            if let Some(want) = &c.equals {
                if value == want {
                    findings.push(finding(
                        Level::Problem,
                        "conflict",
                        format!("{} sets `{key}` to {value}: it switches off {}", path.display(), c.blocks),
                        hint.clone(),
                    ));
                }
                continue;
            }
            let strings: Vec<&str> = match value {
                serde_json::Value::String(s) => vec![s.as_str()],
                serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
                _ => Vec::new(),
            };
            for s in strings.into_iter().filter(|s| c.matches.iter().any(|m| glob_match(m, s))) {
                findings.push(finding(
                    Level::Problem,
                    "conflict",
                    format!("{} has `{s}` in `{key}`: it blocks {}", path.display(), c.blocks),
                    hint.clone(),
                ));
            }
        }
    }
}

/// Hook entries that are not msd's beside msd's own, on the same event with the same matcher
/// (or none: every tool call): both decide on the same calls, and a refusal by either stands.
pub(super) fn rival_hooks(cap: &Capability, t: &Target, findings: &mut Vec<Finding>) {
    let Ok(Some(state)) = InstallState::read(&t.home, cap, t.scope) else { return };
    for (file, ledger) in &state.settings {
        let path = t.home.join(file.as_str());
        let Some(doc) = read_json(&path) else { continue };
        for (id, entry) in ledger.entries.iter().filter(|(id, _)| id.starts_with("hook:")) {
            let Some(serde_json::Value::Array(entries)) = entry.at.iter().try_fold(&doc, |v, k| v.get(k)) else {
                continue;
            };
            let matcher = entry.value.get("matcher").and_then(|m| m.as_str()).unwrap_or("");
            for other in entries {
                let theirs = other.get("matcher").and_then(|m| m.as_str()).unwrap_or("");
                if other.to_string().contains("msd_run") || theirs != matcher {
                    continue;
                }
                let what = first_command(other).unwrap_or_else(|| other.to_string());
                findings.push(finding(
                    Level::Note,
                    "conflict",
                    format!(
                        "{} runs `{what}` on {}{} beside msd's hook `{id}`: a refusal by either stands",
                        path.display(),
                        entry.at.last().map_or("", String::as_str),
                        if matcher.is_empty() { String::new() } else { format!(" ({matcher})") }
                    ),
                    "when it refuses what msd's workflows write (.planning/), allow that there",
                ));
            }
        }
    }
}

/// The first `command` string of a hook entry.
fn first_command(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Object(o) => {
            if let Some(serde_json::Value::String(c)) = o.get("command") {
                return Some(c.clone());
            }
            o.values().find_map(first_command)
        }
        serde_json::Value::Array(a) => a.iter().find_map(first_command),
        _ => None,
    }
}
