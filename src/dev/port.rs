//! The reference framework's own content in msd's conventions, made at bench time, so the
//! installer benchmark can time the reference and msd-install on the same Markdown
//! (`bench/install.sh --reference DIR`). Nothing of the reference is committed here: the port
//! reads a checkout and writes a content tree into a directory the bench throws away.
//!
//! Input: the reference checkout's trees of Markdown (its commands, agents and the workflows,
//! references, templates and contexts of its core directory: [`LAYOUT`]), as [`Tree`]s. Output:
//! a content [`Tree`] that loads as `--content DIR` and a [`PortReport`] of what the port did.
//! The rules, each a table or a line below:
//!
//! - **Layout**: every file moves by [`LAYOUT`]; an agent `gsd-<x>.md` becomes `msd-<x>.md`. The
//!   reference's generated section manifest is dropped: msd's is built from the ported tree.
//! - **Routers**: a command whose frontmatter names a skill (`name: gsd-<group>`) rather than a
//!   command (`name: gsd:<stem>`) routes to the commands of its `requires`; msd writes routers
//!   from `namespaces.json`, so each becomes a group there (a command two routers list stays in
//!   the first; commands no router lists form one more group). The instructions of a router are
//!   msd's own, from the embedded content's `namespaces.json`.
//! - **Names**: the reference's brand prefix becomes msd's in its core directory's name, in
//!   command references (`/gsd:<stem>`, `name: gsd:<stem>`) and in every agent and command name
//!   (`gsd-planner`, the skill `gsd-plan-phase`), matched whole. The names of the reference's own
//!   helper (`gsd-tools`, `gsd_run`, `GSD_*`) stay: the port does not carry that helper, and
//!   calling msd_run by its name would be a claim about arguments it does not take. The brand
//!   in prose stays too. Both prefixes are three bytes: no file changes size.
//! - **Markers**: a `<!-- gsd:section ... -->` whose `when` is an atom of msd's table becomes an
//!   msd section (its steps file is where msd looks for it); any other `<!-- gsd:` comment stays
//!   as it is, an HTML comment msd passes through.
//! - **Tiers**: each workflow and agent gets the smallest size tier whose cap holds it with a
//!   quarter to spare (an installed path is longer than `~/.claude/`), else XL.

use std::collections::{BTreeMap, BTreeSet};

use msd_core::fs::bytes::Bytes;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::caps::{Tier, Tiers};
use msd_core::markup::frontmatter;
use msd_core::markup::when::Atom;

use crate::pipeline::load::Tree;
use crate::pipeline::section_manifest;

/// Where the reference keeps each kind of file, and where msd's content keeps it.
pub(crate) const LAYOUT: [(&str, &str); 6] = [
    ("commands/gsd", "commands/msd"),
    ("agents", "agents"),
    ("gsd-core/workflows", "msd-core/workflows"),
    ("gsd-core/references", "msd-core/references"),
    ("gsd-core/templates", "msd-core/templates"),
    ("gsd-core/contexts", "msd-core/contexts"),
];

/// The reference's brand prefix and msd's.
const FROM: &str = "gsd";
const TO: &str = "msd";

/// The reference's section manifest, generated from its own markers.
const REFERENCE_SECTION_MANIFEST: &str = "gsd-core/workflows/section-manifest.json";

/// The group of commands no router of the reference lists.
const UNROUTED: (&str, &str) =
    ("more", "Every other command of the ported content: the ones no router of the reference lists.");

/// Why a checkout cannot be ported.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub(crate) struct PortError {
    /// The file (or directory) at fault.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// What the port did, for the line the command prints.
#[derive(Debug, Default)]
pub(crate) struct PortReport {
    /// Files read from the reference.
    pub files_in: usize,
    /// Bytes read from the reference.
    pub bytes_in: u64,
    /// Commands, agents and core files written.
    pub commands: usize,
    /// Agents written.
    pub agents: usize,
    /// Routers turned into `namespaces.json` groups (names of the groups).
    pub groups: Vec<String>,
    /// Sections whose `when` msd knows, made msd sections.
    pub sections_ported: usize,
    /// Sections left as the reference's comments, by their `when`.
    pub sections_inert: BTreeMap<String, usize>,
}

/// One tree of the reference, read from its directory in [`LAYOUT`] order (a missing one is
/// an empty tree: a checkout of another version may lack `contexts`).
pub(crate) fn read(reference: &std::path::Path) -> Result<Vec<Tree>, PortError> {
    let mut trees = Vec::new();
    for (from, _) in LAYOUT {
        let dir = reference.join(from);
        if !msd_core::fs::fsx::is_dir(&dir) {
            trees.push(Tree { origin: dir.display().to_string(), files: BTreeMap::new() });
            continue;
        }
        trees.push(
            Tree::from_dir(&dir).map_err(|e| PortError { path: dir.display().to_string(), message: e.to_string() })?,
        );
    }
    if trees[0].files.is_empty() {
        return Err(PortError {
            path: reference.join(LAYOUT[0].0).display().to_string(),
            message: "no commands here: not a checkout of the reference (open-gsd/gsd-core)".into(),
        });
    }
    Ok(trees)
}

/// Ports the trees [`read`] returned (one per [`LAYOUT`] entry); `ours` is msd's own content,
/// whose router instructions the ported routers use.
pub(crate) fn port(trees: &[Tree], ours: &Tree) -> Result<(Tree, PortReport), PortError> {
    let mut report = PortReport::default();
    let commands = &trees[0];
    let agents = &trees[1];
    // Names first: the renames apply to every file, and routers are told apart by frontmatter.
    let mut routers: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut command_stems: BTreeSet<String> = BTreeSet::new();
    for (rel, bytes) in &commands.files {
        let Some(stem) = rel.as_str().strip_suffix(".md").filter(|s| !s.contains('/')) else { continue };
        let disp = commands.display(rel);
        let text = utf8(&disp, bytes)?;
        let (fm, _) =
            frontmatter::split(&disp, text).map_err(|e| PortError { path: disp.clone(), message: e.message })?;
        let name = fm.as_ref().and_then(|f| f.get_str("name")).unwrap_or_default().to_string();
        match name.strip_prefix(&format!("{FROM}-")) {
            Some(group) => {
                let fm = fm.as_ref().expect("a name was read from it");
                let description = fm.get_str("description").unwrap_or_default().to_string();
                routers.push((group.to_string(), description, fm.get_list("requires").unwrap_or_default()));
            }
            None => {
                command_stems.insert(stem.to_string());
            }
        }
    }
    let agent_stems: BTreeSet<String> = agents
        .files
        .keys()
        .filter_map(|r| r.as_str().strip_suffix(".md").filter(|s| !s.contains('/')).map(str::to_string))
        .collect();
    let mut names: BTreeSet<String> = command_stems.clone();
    names.extend(agent_stems.iter().filter_map(|a| a.strip_prefix(&format!("{FROM}-")).map(str::to_string)));
    names.insert("core".into());
    let rename = Renamer { names };

    let mut files: BTreeMap<RelPath, Bytes> = BTreeMap::new();
    for (tree, (from, to)) in trees.iter().zip(LAYOUT) {
        for (rel, bytes) in &tree.files {
            report.files_in += 1;
            report.bytes_in += bytes.len() as u64;
            if format!("{from}/{rel}") == REFERENCE_SECTION_MANIFEST {
                continue;
            }
            let mut path = rel.as_str().to_string();
            if from == LAYOUT[0].0 {
                let stem = path.strip_suffix(".md").unwrap_or(&path);
                if !command_stems.contains(stem) {
                    continue; // a router: a group of namespaces.json
                }
                report.commands += 1;
            }
            if from == LAYOUT[1].0 {
                if !path.strip_suffix(".md").is_some_and(|stem| agent_stems.contains(stem)) {
                    continue; // not an agent definition (a note, a nested file)
                }
                if let Some(rest) = path.strip_prefix(&format!("{FROM}-")) {
                    path = format!("{TO}-{rest}");
                }
                report.agents += 1;
            }
            let dest = RelPath::new(format!("{to}/{path}"))
                .map_err(|e| PortError { path: tree.display(rel), message: e.to_string() })?;
            let data = match std::str::from_utf8(bytes) {
                Ok(text) => Bytes::from(rename.apply(&sections(text, &mut report)).into_bytes()),
                Err(_) => bytes.clone(),
            };
            files.insert(dest, data);
        }
    }

    let namespaces = namespaces(&routers, &command_stems, ours, &mut report)?;
    put_json(&mut files, "namespaces.json", &namespaces);
    let tiers = tiers(&files);
    put_json(&mut files, "tiers.json", &tiers);
    let mut out = Tree { origin: format!("{} (ported)", commands.origin), files };
    let manifest = section_manifest::build(&out)
        .map_err(|e| PortError { path: e.path, message: format!("{}: {}", e.reason, e.message) })?;
    out.files
        .insert(RelPath::new(section_manifest::PATH).expect("static"), Bytes::from(manifest.render().into_bytes()));
    Ok((out, report))
}

fn utf8<'a>(disp: &str, bytes: &'a [u8]) -> Result<&'a str, PortError> {
    std::str::from_utf8(bytes).map_err(|_| PortError { path: disp.to_string(), message: "not UTF-8".into() })
}

fn put_json(files: &mut BTreeMap<RelPath, Bytes>, name: &str, v: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(v).expect("json") + "\n";
    files.insert(RelPath::new(name).expect("static"), Bytes::from(text.into_bytes()));
}

/// The reference's section markers whose `when` msd knows, made msd's (with their closing
/// line); every other line as it is.
fn sections(text: &str, report: &mut PortReport) -> String {
    let open = format!("<!-- {FROM}:section ");
    let close = format!("<!-- /{FROM}:section -->");
    let mut out = String::with_capacity(text.len());
    let mut ported_open = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if let Some(attrs) = body.strip_prefix(&open) {
            let when = attrs.split("when=\"").nth(1).and_then(|w| w.split('"').next()).unwrap_or_default();
            if Atom::parse(when).is_some() {
                report.sections_ported += 1;
                ported_open = true;
                out.push_str(&line.replacen(&format!("{FROM}:"), &format!("{TO}:"), 1));
                continue;
            }
            *report.sections_inert.entry(when.to_string()).or_default() += 1;
        } else if ported_open && body.trim() == close {
            ported_open = false;
            out.push_str(&line.replacen(&format!("/{FROM}:"), &format!("/{TO}:"), 1));
            continue;
        }
        out.push_str(line);
    }
    out
}

/// The brand renames of the module header: `gsd-<name>` for a known name, `gsd:` before a
/// command name outside an HTML comment's marker.
struct Renamer {
    /// Agent names without the prefix, command stems, and `core`.
    names: BTreeSet<String>,
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'
}

impl Renamer {
    fn apply(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (at, _) in text.match_indices(FROM) {
            let Some(&sep) = bytes.get(at + FROM.len()) else { continue };
            // The prefix starts a word: `xgsd-` is not the brand.
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let start = at + FROM.len() + 1;
            let end = start + bytes[start.min(bytes.len())..].iter().take_while(|b| is_name_byte(**b)).count();
            let name = text[start.min(end)..end].trim_end_matches('-');
            let ours = match sep {
                b'-' => self.names.contains(name),
                // `<!-- gsd:...` and `<!-- /gsd:...` are the reference's own markers.
                b':' => !name.is_empty() && !text[..at].ends_with("<!-- ") && !text[..at].ends_with("<!-- /"),
                _ => false,
            };
            if ours {
                out.push_str(&text[last..at]);
                out.push_str(TO);
                last = at + FROM.len();
            }
        }
        out.push_str(&text[last..]);
        out
    }
}

/// `namespaces.json` from the reference's routers.
fn namespaces(
    routers: &[(String, String, Vec<String>)],
    commands: &BTreeSet<String>,
    ours: &Tree,
    report: &mut PortReport,
) -> Result<serde_json::Value, PortError> {
    let ns_rel = RelPath::new("namespaces.json").expect("static");
    let instructions = ours
        .files
        .get(&ns_rel)
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
        .and_then(|v| v["instructions"].as_str().map(str::to_string))
        .ok_or_else(|| PortError {
            path: ours.display(&ns_rel),
            message: "msd's content has no router instructions to give the ported routers".into(),
        })?;
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut groups = Vec::new();
    for (name, description, requires) in routers {
        if commands.contains(name) {
            return Err(PortError {
                path: format!("router {FROM}-{name}"),
                message: format!("a router and a command are both named `{name}`: msd's groups take no command's name"),
            });
        }
        let listed: Vec<&str> =
            requires.iter().map(String::as_str).filter(|c| commands.contains(*c) && seen.insert(c)).collect();
        report.groups.push(name.clone());
        groups.push(serde_json::json!({"name": name, "description": description, "commands": listed}));
    }
    let rest: Vec<&str> = commands.iter().map(String::as_str).filter(|c| !seen.contains(c)).collect();
    if !rest.is_empty() {
        report.groups.push(UNROUTED.0.to_string());
        groups.push(serde_json::json!({"name": UNROUTED.0, "description": UNROUTED.1, "commands": rest}));
    }
    Ok(serde_json::json!({"instructions": instructions, "groups": groups}))
}

/// Each top-level workflow's and each agent's tier: the smallest whose cap holds it with a
/// quarter to spare.
fn tiers(files: &BTreeMap<RelPath, Bytes>) -> Tiers {
    let fit = |len: usize, cap: fn(Tier) -> u64| {
        [Tier::Default, Tier::Large, Tier::Xl].into_iter().find(|t| len as u64 * 5 / 4 <= cap(*t)).unwrap_or(Tier::Xl)
    };
    let mut tiers = Tiers::default();
    for (rel, bytes) in files {
        let p = rel.as_str();
        if let Some(stem) = p.strip_prefix("msd-core/workflows/").and_then(|s| s.strip_suffix(".md")) {
            if !stem.contains('/') {
                tiers.workflows.insert(stem.to_string(), fit(bytes.len(), Tier::workflow_cap));
            }
        } else if let Some(name) = p.strip_prefix("agents/").and_then(|s| s.strip_suffix(".md")) {
            tiers.agents.insert(name.to_string(), fit(bytes.len(), Tier::agent_cap));
        }
    }
    tiers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renamer() -> Renamer {
        Renamer { names: ["core", "planner", "plan-phase"].into_iter().map(str::to_string).collect() }
    }

    #[test]
    fn port_renames_names_whole_and_leaves_the_reference_helper_and_markers() {
        let r = renamer();
        assert_eq!(r.apply("spawn gsd-planner, run /gsd:plan-phase"), "spawn msd-planner, run /msd:plan-phase");
        assert_eq!(r.apply("~/.claude/gsd-core/x gsd-plan-phase."), "~/.claude/msd-core/x msd-plan-phase.");
        assert_eq!(r.apply("gsd-tools gsd_run GSD_TOOLS gsd-planners"), "gsd-tools gsd_run GSD_TOOLS gsd-planners");
        assert_eq!(r.apply("<!-- gsd:loop-host\n<!-- /gsd:x -->"), "<!-- gsd:loop-host\n<!-- /gsd:x -->");
        assert_eq!(r.apply("name: gsd:anything"), "name: msd:anything");
        assert_eq!(r.apply("xgsd-planner gsd"), "xgsd-planner gsd");
    }

    #[test]
    fn port_makes_sections_msd_only_where_msd_knows_the_atom() {
        let mut rep = PortReport::default();
        let src = "a\n<!-- gsd:section id=\"p-x\" when=\"flag:--prd\" -->\nread\n<!-- /gsd:section -->\n\
                   <!-- gsd:section id=\"p-y\" when=\"state:nope\" -->\nread\n<!-- /gsd:section -->\n";
        let out = sections(src, &mut rep);
        assert!(out.contains("<!-- msd:section id=\"p-x\" when=\"flag:--prd\" -->\nread\n<!-- /msd:section -->\n"));
        assert!(out.contains("<!-- gsd:section id=\"p-y\" when=\"state:nope\" -->\nread\n<!-- /gsd:section -->\n"));
        assert_eq!(rep.sections_ported, 1);
        assert_eq!(rep.sections_inert.get("state:nope"), Some(&1));
    }
}
