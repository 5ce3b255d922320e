//! Install profiles (`content/profiles.json`): the commands of a profile (its own and those of
//! the profiles it extends), closed over `requires`, then the content an install of them
//! carries: those commands, their workflows (`workflows/<stem>.md` and `workflows/<stem>/`),
//! every core file that is not another command's workflow, and the agents the kept workflows
//! and commands spawn (`subagent_type`), or none for `--minimal`.
//!
//! Input: loaded [`Content`] and a profile name. Output: a narrowed [`Content`]. Pure.

use std::collections::BTreeSet;

use crate::pipeline::load::{Content, Profiles};

/// The name `--minimal` is recorded under.
pub(crate) const MINIMAL: &str = "minimal";

/// A profile name that is not in the content.
#[derive(Debug, thiserror::Error)]
#[error("unknown profile `{given}`")]
pub struct ProfileError {
    /// What was asked for.
    pub given: String,
    /// The profiles the content has (and `minimal`).
    pub valid: Vec<String>,
}

/// The profile an install uses: `--minimal`, `--profile`, the one recorded in the target's
/// state, else the content's default. `None` when the content has no profiles.
pub(crate) fn choose(content: &Content, given: Option<&str>, recorded: Option<&str>) -> Option<String> {
    let p = content.profiles.as_ref()?;
    Some(given.or(recorded).unwrap_or(&p.default).to_string())
}

/// The command stems of `name`, closed over `requires`.
pub(crate) fn commands(p: &Profiles, name: &str) -> Result<BTreeSet<String>, ProfileError> {
    let unknown = || ProfileError {
        given: name.to_string(),
        valid: p.profiles.iter().map(|x| x.name.clone()).chain([MINIMAL.to_string()]).collect(),
    };
    let base = if name == MINIMAL { p.minimal.profile.as_str() } else { name };
    let mut set = BTreeSet::new();
    let mut next = Some(base.to_string());
    let mut seen = BTreeSet::new();
    while let Some(n) = next.take() {
        if !seen.insert(n.clone()) {
            break;
        }
        let pr = p.profiles.iter().find(|x| x.name == n).ok_or_else(unknown)?;
        set.extend(pr.commands.iter().cloned());
        next = pr.extends.clone();
    }
    let mut todo: Vec<String> = set.iter().cloned().collect();
    while let Some(c) = todo.pop() {
        for r in p.requires.get(&c).into_iter().flatten() {
            if set.insert(r.clone()) {
                todo.push(r.clone());
            }
        }
    }
    Ok(set)
}

/// `content` narrowed to the profile `name` (taken, not copied: a caller that needs the whole
/// content again clones it first).
pub(crate) fn select(content: Content, name: &str) -> Result<Content, ProfileError> {
    let Some(p) = &content.profiles else { return Ok(content) };
    let keep = commands(p, name)?;
    let agents = name != MINIMAL || p.minimal.agents;
    let all: BTreeSet<String> = content.commands.iter().map(|c| c.stem.clone()).collect();
    let dropped_workflow = |rel: &str| {
        let Some(rest) = rel.strip_prefix("workflows/") else { return false };
        let stem = rest.split('/').next().unwrap_or(rest);
        let stem = if rest.contains('/') { stem } else { stem.strip_suffix(".md").unwrap_or(stem) };
        all.contains(stem) && !keep.contains(stem)
    };
    let mut out = content;
    out.commands.retain(|c| keep.contains(&c.stem));
    out.core.retain(|f| !dropped_workflow(f.rel.as_str()));
    // The agents the kept workflows and commands spawn.
    let mut spawned = BTreeSet::new();
    if agents {
        let texts = out
            .core
            .iter()
            .filter(|f| f.rel.as_str().starts_with("workflows/"))
            .filter_map(|f| f.text.as_deref())
            .chain(out.commands.iter().map(|c| c.body.as_str()));
        for text in texts {
            for (i, _) in text.match_indices("subagent_type") {
                let window = &text[i..(i + 120).min(text.len())];
                let window = &window[..window.find('\n').unwrap_or(window.len())];
                for a in &out.agents {
                    if window.contains(a.stem.as_str()) {
                        spawned.insert(a.stem.clone());
                    }
                }
            }
        }
    }
    out.agents.retain(|a| spawned.contains(&a.stem));
    out.core.retain(|f| match f.rel.as_str().strip_prefix("agents/") {
        Some(file) => spawned.iter().any(|a| file.starts_with(&format!("{a}."))),
        None => true,
    });
    if let Some(ns) = &mut out.namespaces {
        for g in &mut ns.groups {
            g.commands.retain(|c| keep.contains(c));
        }
        ns.groups.retain(|g| !g.commands.is_empty());
    }
    Ok(out)
}
