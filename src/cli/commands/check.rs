//! `msd-install check` (no subcommand): the project's installs against its msd.toml, for CI
//! ([`super::project_check`]).
//!
//! `msd-install check partition [--base REV] [--content DIR] [--json]`: reads the content tree's
//! workflows (and, with a base, the same directory at the merge-base through git), runs the
//! partition checks of [`crate::dev::partition`], prints every violation with its spine, part, line
//! and kind, and fails (exit 1) when there is one.
//!
//! `msd-install check references [--content DIR] [--runtimes DIR] [--profiles FILE] [--json]`:
//! emits the content for every runtime and scope, hands the content text, the installed core
//! trees and the profiles file to [`crate::dev::references`], prints every finding as
//! file:line with its fix, and fails (exit 1) when there is one.
//!
//! `msd-install check tools [--content DIR] [--runtimes DIR] [--json]`: hands the content text to
//! [`crate::dev::tools`] and, with the runtimes' tool tables, to [`crate::dev::tool_names`];
//! prints every command or agent that uses a tool it is not allowed and every tool name the prose
//! uses that some runtime lacks, each with its fix, and fails (exit 1) when there is one.

use std::collections::BTreeMap;
use std::path::Path;

use std::collections::BTreeSet;

use super::report::{Report, listing};
use crate::cli::args::{CheckArgs, CheckWhat, PartitionArgs, ReferencesArgs, ToolsArgs};
use crate::cli::error::Error;
use crate::cli::settings::{Globals, Settings, Subcommand, Takes};
use crate::dev::gitx::{GitError, Repo};
use crate::dev::partition::{self, Base, Check, GATE_PATH, Snapshot, TRAILER_KEY};
use crate::dev::references::{self, Inputs};
use crate::dev::tool_names;
use crate::pipeline;
use crate::pipeline::load::Tree;
use crate::pipeline::target::Environment;
use msd_core::manifest::capability::Scope;

const WORKFLOWS: &str = "msd-core/workflows";

impl Subcommand for CheckArgs {
    const NAME: &'static str = "check";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        match &self.what {
            Some(CheckWhat::References(a)) => base.sources(&a.sources),
            Some(CheckWhat::Tools(a)) => base.manifests(a.runtimes_dir.as_ref()),
            _ => base,
        }
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        match &self.what {
            None => super::project_check::run(s, self.project.project.as_deref()),
            Some(CheckWhat::Partition(a)) => partition(s, a),
            Some(CheckWhat::References(a)) => check_references(s, a),
            Some(CheckWhat::Tools(a)) => check_tools(s, a),
        }
    }
}

fn check_tools(s: &Settings, a: &ToolsArgs) -> Result<(), Error> {
    let tree = match &a.content {
        Some(dir) => Tree::from_dir(dir)?,
        None => pipeline::load_content(&Default::default())?.tree,
    };
    let files: BTreeMap<String, String> = tree
        .files
        .iter()
        .filter_map(|(p, b)| std::str::from_utf8(b).ok().map(|t| (p.to_string(), t.to_string())))
        .collect();
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let names = tool_names::names(runtimes.iter().map(|r| &r.capability));
    let findings = crate::dev::tools::check(&files);
    let prose = tool_names::check(&files, &names);
    let commands = files.keys().filter(|p| p.starts_with("commands/msd/")).count();
    let agents = files.keys().filter(|p| p.starts_with("agents/")).count();
    let ok = findings.is_empty() && prose.is_empty();
    let mut lines: Vec<String> = findings.iter().map(ToString::to_string).collect();
    lines.extend(prose.iter().map(ToString::to_string));
    let mut failed = Vec::new();
    if !findings.is_empty() {
        failed.push(format!("{} tool(s) used without being allowed", findings.len()));
    }
    if !prose.is_empty() {
        failed.push(format!("{} tool name(s) in prose that some runtime lacks", prose.len()));
    }
    Report {
        ok,
        doc: serde_json::json!({
            "ok": ok,
            "commands": commands,
            "agents": agents,
            "findings": findings,
            "guarded_names": names.guarded.keys().collect::<Vec<_>>(),
            "prose": prose,
        }),
        text: listing(
            &lines,
            &[],
            format!(
                "{commands} command(s) and {agents} agent(s) have the tools they use; no prose names {}",
                names.guarded.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
            ),
        ),
        failed: failed.join("; "),
    }
    .finish(s)
}

fn check_references(s: &Settings, a: &ReferencesArgs) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let content = pipeline::load_content(&s.sources)?;
    let env = Environment::golden();
    let mut inputs = Inputs::default();
    for (p, b) in &content.tree.files {
        if let Ok(t) = std::str::from_utf8(b) {
            inputs.files.insert(p.to_string(), t.to_string());
        }
    }
    for rt in &runtimes {
        for scope in [Scope::Global, Scope::Local] {
            if scope == Scope::Local && rt.capability.local.is_none() {
                continue;
            }
            let emission = pipeline::emit(&content, rt, scope, None, &env)?.emission;
            let core = format!("{}/", rt.capability.core_dir(scope).as_str());
            let files: BTreeSet<String> = emission
                .files
                .iter()
                .filter_map(|f| f.path.as_str().strip_prefix(core.as_str()).map(str::to_string))
                .collect();
            inputs.installed.insert(format!("{}-{}", rt.capability.id, scope.as_str()), files);
        }
    }
    let profiles_path = match (&a.profiles, &a.sources.content) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(dir)) if dir.join("profiles.json").exists() => Some(dir.join("profiles.json")),
        (None, Some(dir)) => Some(dir.join("../docs/profiles.json")),
        (None, None) => Some(Path::new("docs/profiles.json").to_path_buf()),
    };
    let content_profiles = content.tree.files.iter().find(|(p, _)| p.as_str() == "profiles.json");
    inputs.profiles = match (content_profiles, a.profiles.is_none()) {
        (Some((_, b)), true) => Some(("content/profiles.json".into(), String::from_utf8_lossy(b).into_owned())),
        _ => match profiles_path.filter(|p| msd_core::fs::fsx::is_file(p)) {
            Some(p) => {
                let text = msd_core::fs::fsx::read(&p)
                    .map_err(|e| Error::Io { context: format!("reading {}", p.display()), source: e })?;
                Some((p.display().to_string(), String::from_utf8_lossy(&text).into_owned()))
            }
            None => None,
        },
    };
    let findings = references::check(&inputs);
    let notes: Vec<String> = inputs
        .profiles
        .is_none()
        .then(|| "no profiles file found; the profile rule was not run (pass --profiles FILE)".to_string())
        .into_iter()
        .collect();
    Report {
        ok: findings.is_empty(),
        doc: serde_json::json!({
            "ok": findings.is_empty(),
            "files": inputs.files.len(),
            "installs": inputs.installed.keys().collect::<Vec<_>>(),
            "profiles": inputs.profiles.as_ref().map(|(p, _)| p),
            "findings": findings,
        }),
        text: listing(
            &findings,
            &notes,
            format!("{} file(s) checked against {} install(s)", inputs.files.len(), inputs.installed.len()),
        ),
        failed: format!("{} broken reference(s)", findings.len()),
    }
    .finish(s)
}

fn snapshot(files: impl IntoIterator<Item = (String, String)>, prefix: &str) -> Snapshot {
    let prefix = format!("{}/", prefix.trim_end_matches('/'));
    let prefix = if prefix == "/" { String::new() } else { prefix };
    Snapshot {
        files: files
            .into_iter()
            .filter_map(|(p, t)| p.strip_prefix(prefix.as_str()).map(|r| (r.to_string(), t)))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// The base side: merge-base of `rev` and HEAD, the workflows at it, the trailers since.
fn base(content: &Path, rev: &str) -> Result<(Base, String), Error> {
    let repo = Repo::discover(content)?;
    repo.resolve(rev)?;
    let merge_base = repo.merge_base(rev)?;
    let canon = |p: &Path| {
        msd_core::fs::fsx::canonicalize(p)
            .map_err(|e| Error::Io { context: format!("resolving {}", p.display()), source: e })
    };
    let rel = canon(content)?
        .strip_prefix(canon(&repo.root)?)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .map_err(|_| GitError::NotARepo { dir: content.display().to_string() })?;
    let workflows_path = if rel.is_empty() { WORKFLOWS.to_string() } else { format!("{rel}/{WORKFLOWS}") };
    let files = repo.files_at(&merge_base, &workflows_path)?;
    let trailers = repo.trailers(&merge_base, TRAILER_KEY)?;
    Ok((Base { snapshot: snapshot(files, &workflows_path), workflows_path, trailers }, merge_base))
}

fn partition(s: &Settings, a: &PartitionArgs) -> Result<(), Error> {
    let tree = Tree::from_dir(&a.content)?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let now = snapshot(tree.files.iter().map(|(p, b)| (p.to_string(), text(b))), WORKFLOWS);
    let gate = tree.files.iter().find(|(p, _)| p.as_str() == format!("msd-core/{GATE_PATH}")).map(|(_, b)| text(b));
    let based = match &a.base {
        Some(rev) => Some(base(&a.content, rev)?),
        None => None,
    };
    let report = partition::check(&now, gate.as_deref(), based.as_ref().map(|(b, _)| b));
    let workflows_dir = a.content.join(WORKFLOWS).display().to_string();
    let doc = serde_json::json!({
        "ok": report.violations.is_empty(),
        "workflows_dir": workflows_dir,
        "base": a.base,
        "merge_base": based.as_ref().map(|(_, mb)| mb),
        "checks_run": report.checks_run,
        "checks_skipped": Check::ALL.iter().filter(|c| !report.checks_run.contains(c)).collect::<Vec<_>>(),
        "splits": report.splits,
        "new_splits": report.new_splits,
        "violations": report.violations,
    });
    let mut out = format!("partition check of {workflows_dir}");
    match &based {
        Some((_, mb)) => out.push_str(&format!(
            " against the merge-base {} of {}\n",
            &mb[..12.min(mb.len())],
            a.base.as_deref().unwrap_or_default()
        )),
        None => out.push_str(" (no --base: completeness and boundary moves not checked)\n"),
    }
    for split in &report.splits {
        let new = if report.new_splits.contains(&split.name) { " (new)" } else { "" };
        out.push_str(&format!("  {}{new}: {} part(s)\n", split.spine, split.parts.len()));
    }
    let violations: Vec<String> =
        report.violations.iter().map(|v| format!("{}: {v}\n  hint: {}", v.check.as_str(), v.kind.hint())).collect();
    let run: Vec<&str> = report.checks_run.iter().map(|c| c.as_str()).collect();
    out.push_str(&listing(&violations, &[], format!("{} split(s), checks: {}", report.splits.len(), run.join(", "))));
    Report {
        ok: report.violations.is_empty(),
        doc,
        text: out,
        failed: format!("{} partition violation(s)", report.violations.len()),
    }
    .finish(s)
}
