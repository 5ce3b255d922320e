//! `msd_run query init.<workflow> [args...]`: everything a workflow needs to start, as one JSON
//! document (SPEC section 9; the field set is CONTENT-CONVENTIONS section 3):
//! `workflow`, `phase` (`{number, padded, name, slug, dir, is_gap_closure}` or null), `paths`
//! (project-relative, never contents), `exists`, `flags`, `args`, `config` and
//! `section_manifest` (`{workflow, included, excluded, read[]}`, or null for a workflow without
//! sections; `read` holds the installed paths of the included sections' steps files, the same
//! paths their pointers name).
//!
//! Which workflows exist is data: `<core>/workflows/<workflow>.md`. The argument grammar and the
//! sections come from the installed `section-manifest.json` (installed workflows have their
//! markers stripped, so the generated manifest is the only faithful source; the installer
//! refuses a stale one). Without a manifest, a workflow has no sections and switch-only flags.
//!
//! Facts, each computed from the invocation and the project in the current directory
//! (CONTENT-CONVENTIONS section 5): a flag is true when its token was passed; the gap-closure
//! phase is a phase number containing `.`; prior phases means a lower-numbered phase directory
//! has a `*SUMMARY.md`; needs-codebase-map means source files exist and `.planning/codebase/`
//! does not; MVP mode is config `workflow.mvp_mode` or `**Mode:** mvp` in the phase's ROADMAP
//! block; worktrees is config `workflow.use_worktrees`; chunked is `--chunked` or config
//! `workflow.plan_chunked`. Config values count only when they are JSON `true`.
//!
//! The current phase: a workflow of [`PICKS_CURRENT_PHASE`] called without a phase number gets
//! the phase work is waiting on, the way plan-phase picks its own: the phase STATE.md's
//! `## Current Position` names when it still has a plan without a summary, else the first phase
//! in ROADMAP.md order that has one; `phase_picked_from` says which file decided (`STATE.md`,
//! `ROADMAP.md`), and is null when the number was passed or nothing is waiting. `args.phase`
//! stays what was passed.
//!
//! `config` is the installed `templates/config.json` (the defaults) overlaid by the project's
//! `.planning/config.json`, key by key.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{Answer, RunError, core_dir, read_core};
use crate::project::{PLANNING, PhaseDir, Project, RoadmapPhase, roadmap_phases, slug, state_phase};
use msd_core::installed::config_keys;
use msd_core::installed::invocation::{self, Invocation, PhaseNumber};
use msd_core::installed::section_manifest::{CORE_PATH, SectionManifest};
use msd_core::markup::when::{self, Atom, Facts};

fn is_stem(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn workflows(core: &Path) -> Vec<String> {
    msd_core::fs::fsx::list_dir(&core.join("workflows"))
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.is_file)
        .filter_map(|e| e.name.strip_suffix(".md").map(str::to_string))
        .collect()
}

/// Reads the installed section manifest, `None` when the install has none.
pub(crate) fn manifest(core: &Path) -> Result<Option<SectionManifest>, RunError> {
    let Some(text) = read_core(core, CORE_PATH)? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| RunError::Core {
        path: core.join(CORE_PATH).display().to_string(),
        message: format!("the installed section manifest is damaged: {e}"),
        hint: "reinstall msd-core with msd-install".into(),
    })
}

fn config(core: &Path, project: &Project) -> Result<Map<String, Value>, RunError> {
    let mut base = match read_core(core, "templates/config.json")? {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(&t) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(RunError::Core {
                    path: core.join("templates/config.json").display().to_string(),
                    message: "the installed config template is not a JSON object".into(),
                    hint: "reinstall msd-core with msd-install".into(),
                });
            }
        },
    };
    if let Some(user) = project.config()? {
        // What `config-get` rejects, init rejects too: no workflow starts on an invalid value.
        // (A core without the schema, such as a test fixture, has nothing to check against.)
        let problems = match read_core(core, config_keys::SCHEMA_PATH)? {
            Some(_) => super::config::schema(core)?.invalid_values(&Value::Object(user.clone())),
            None => Vec::new(),
        };
        if !problems.is_empty() {
            return Err(RunError::Project(crate::project::ProjectError {
                path: format!("{PLANNING}/config.json"),
                line: None,
                message: problems.join("; "),
                hint: "fix it with `msd_run config-set <key> <value>`; `{cmd:health}` finds what is wrong".into(),
            }));
        }
        merge(&mut base, user);
    }
    Ok(base)
}

fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn truthy(config: &Map<String, Value>, section: &str, key: &str) -> bool {
    config.get(section).and_then(|s| s.get(key)) == Some(&Value::Bool(true))
}

/// Runs `query init.<stem>`.
pub(crate) fn run(core: Option<&Path>, stem: &str, args: &[String]) -> Result<Answer, RunError> {
    let core = core_dir(core)?;
    if !is_stem(stem) || !msd_core::fs::fsx::is_file(&core.join(format!("workflows/{stem}.md"))) {
        return Err(RunError::Usage {
            message: format!("no workflow `{stem}` in {}", core.join("workflows").display()),
            hint: format!("installed workflows: {}", workflows(&core).join(", ")),
        });
    }
    let manifest = manifest(&core)?;
    let spec = manifest.as_ref().and_then(|m| m.arguments.get(stem));
    let inv = invocation::parse(spec, args).map_err(|message| RunError::Usage {
        message: format!("init.{stem}: {message}"),
        hint: "pass the workflow's arguments through unchanged ($ARGUMENTS)".into(),
    })?;
    // The project the current directory belongs to, found upwards as the CLI does; outside any
    // project, the current directory (where new-project starts one).
    let project =
        Project::find_or_cwd().map_err(|e| RunError::Io { path: "the current directory".into(), source: e })?;
    let doc = answer(&core, &project, stem, &inv, manifest.as_ref())?;
    Ok(Answer::json(&doc, false))
}

/// Builds the init document.
pub(crate) fn answer(
    core: &Path,
    project: &Project,
    stem: &str,
    inv: &Invocation,
    manifest: Option<&SectionManifest>,
) -> Result<Value, RunError> {
    let p = |rel: &str| format!("{PLANNING}/{rel}");
    let config = config(core, project)?;
    let roadmap = project.read(&p("ROADMAP.md"))?;
    let phases = roadmap.as_deref().map(roadmap_phases).unwrap_or_default();
    let dirs = project.phase_dirs()?;
    let picked = match inv.phase {
        Some(_) => None,
        None if PICKS_CURRENT_PHASE.contains(&stem) => current_phase(project, &phases, &dirs)?,
        None => None,
    };
    let number = inv.phase.as_ref().or(picked.as_ref().map(|(n, _)| n));
    let in_roadmap = number.and_then(|n| phases.iter().find(|rp| rp.number.numeric_cmp(n).is_eq()));

    let phase = match (number, in_roadmap) {
        (Some(n), Some(rp)) => {
            let slug = slug(&rp.name);
            let wanted = if slug.is_empty() { n.padded() } else { format!("{}-{slug}", n.padded()) };
            let same: Vec<&str> =
                dirs.iter().filter(|d| d.number.numeric_cmp(n).is_eq()).map(|d| d.name.as_str()).collect();
            let dir_name =
                same.iter().find(|d| **d == wanted).or(same.first()).map_or(wanted.clone(), |d| d.to_string());
            Some(PhaseInfo { number: n.clone(), name: rp.name.clone(), slug, dir: p(&format!("phases/{dir_name}")) })
        }
        _ => None,
    };

    let phase_file = |suffix: &str| phase.as_ref().map(|ph| format!("{}/{}-{suffix}", ph.dir, ph.number.padded()));
    let listed = |suffix: &str| -> Result<Vec<String>, RunError> {
        Ok(match &phase {
            Some(ph) => project.files_ending(&ph.dir, suffix)?.into_iter().map(|f| format!("{}/{f}", ph.dir)).collect(),
            None => Vec::new(),
        })
    };
    let context = phase_file("CONTEXT.md");
    let research = phase_file("RESEARCH.md");
    let verification = phase_file("VERIFICATION.md");
    let uat = phase_file("UAT.md");
    let paths = json!({
        "planning": PLANNING,
        "project": p("PROJECT.md"),
        "requirements": p("REQUIREMENTS.md"),
        "roadmap": p("ROADMAP.md"),
        "state": p("STATE.md"),
        "config": p("config.json"),
        "codebase": p("codebase"),
        "research": p("research"),
        "context": context,
        "phase_research": research,
        "verification": verification,
        "uat": uat,
        "plans": listed("-PLAN.md")?,
        "summaries": listed("-SUMMARY.md")?,
        "todos": p("todos"),
    });
    let opt_exists = |rel: &Option<String>| rel.as_deref().is_some_and(|r| project.exists(r));
    let codebase_map = msd_core::fs::fsx::is_dir(&project.abs(&p("codebase")));
    let exists = json!({
        "planning": msd_core::fs::fsx::is_dir(&project.abs(PLANNING)),
        "project": project.exists(&p("PROJECT.md")),
        "roadmap": roadmap.is_some(),
        "state": project.exists(&p("STATE.md")),
        "context": opt_exists(&context),
        "phase_research": opt_exists(&research),
        "codebase_map": codebase_map,
        "verification": opt_exists(&verification),
        "uat": opt_exists(&uat),
    });

    let sections = manifest.and_then(|m| m.workflows.get(stem));
    let uses = |atom: Atom| sections.is_some_and(|s| s.iter().any(|e| e.when == atom.as_str()));
    let mut prior = false;
    if let Some(n) = number {
        for d in dirs.iter().filter(|d| d.number.numeric_cmp(n).is_lt()) {
            if !project.files_ending(&p(&format!("phases/{}", d.name)), "SUMMARY.md")?.is_empty() {
                prior = true;
                break;
            }
        }
    }
    // The walk for source files is the one fact that can cost; compute it only when a section asks.
    let needs_map = uses(Atom::StateNeedsCodebaseMap) && !codebase_map && project.has_source_files()?;
    let facts = Facts {
        flags: inv.flags.iter().cloned().collect::<BTreeSet<_>>(),
        phase_number: number.map(PhaseNumber::number),
        has_prior_phases: prior,
        needs_codebase_map: needs_map,
        phase_mvp_mode: truthy(&config, "workflow", "mvp_mode") || in_roadmap.is_some_and(|rp| rp.mvp),
        worktrees_enabled: truthy(&config, "workflow", "use_worktrees"),
        chunked_mode: inv.flags.iter().any(|f| f == "--chunked") || truthy(&config, "workflow", "plan_chunked"),
    };
    let section_manifest = match sections {
        None => Value::Null,
        Some(entries) => {
            let mut parsed = Vec::with_capacity(entries.len());
            for e in entries {
                let atom = Atom::parse(&e.when).ok_or_else(|| RunError::Core {
                    path: core.join(CORE_PATH).display().to_string(),
                    message: format!("section `{}` of `{stem}` has the unknown when `{}`", e.id, e.when),
                    hint: "reinstall msd-core with the msd-install that matches this msd_run".into(),
                })?;
                parsed.push((e.id.as_str(), atom));
            }
            let sel = when::select(parsed, &facts);
            let read: Vec<&str> =
                entries.iter().filter(|e| sel.included.contains(&e.id)).map(|e| e.read.as_str()).collect();
            json!({"workflow": stem, "included": sel.included, "excluded": sel.excluded, "read": read})
        }
    };

    let mut args = Map::new();
    args.insert("phase".into(), inv.phase.as_ref().map_or(Value::Null, |n| Value::String(n.number())));
    args.insert("prd".into(), Value::Null);
    args.insert("wave".into(), Value::Null);
    let declared =
        manifest.and_then(|m| m.arguments.get(stem)).map(|s| s.value_flags.keys().cloned().collect::<Vec<_>>());
    for flag in declared.unwrap_or_default().iter().chain(inv.values.keys()) {
        let key = flag.trim_start_matches('-').replace('-', "_");
        let v = inv.values.get(flag).cloned().unwrap_or(Value::Null);
        if v != Value::Null || !args.contains_key(&key) {
            args.insert(key, v);
        }
    }

    let phase_json = match &phase {
        Some(ph) => json!({
            "number": ph.number.number(),
            "padded": ph.number.padded(),
            "name": ph.name,
            "slug": ph.slug,
            "dir": ph.dir,
            "is_gap_closure": Atom::StateGapClosurePhase.holds(&facts),
        }),
        None => Value::Null,
    };
    Ok(json!({
        "workflow": stem,
        // Every path below is relative to this (the project root, found upwards).
        "root": project.root.display().to_string(),
        "phase": phase_json,
        "phase_picked_from": picked.map(|(_, from)| from),
        "paths": paths,
        "exists": exists,
        "flags": inv.flags,
        "args": args,
        "config": config,
        "section_manifest": section_manifest,
    }))
}

/// Workflows whose init picks the current phase when no number is passed (module header).
const PICKS_CURRENT_PHASE: &[&str] = &["execute-phase"];

/// Whether a phase's directory holds a `*-PLAN.md` without its `*-SUMMARY.md`.
fn has_unexecuted_plan(project: &Project, dirs: &[PhaseDir], n: &PhaseNumber) -> Result<bool, RunError> {
    for d in dirs.iter().filter(|d| d.number.numeric_cmp(n).is_eq()) {
        let rel = format!("{PLANNING}/phases/{}", d.name);
        let summaries = project.files_ending(&rel, "-SUMMARY.md")?;
        for plan in project.files_ending(&rel, "-PLAN.md")? {
            let summary = format!("{}-SUMMARY.md", plan.trim_end_matches("-PLAN.md"));
            if !summaries.contains(&summary) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The phase work waits on, and the file that named it (module header).
fn current_phase(
    project: &Project,
    phases: &[RoadmapPhase],
    dirs: &[PhaseDir],
) -> Result<Option<(PhaseNumber, &'static str)>, RunError> {
    let state = project.read(&format!("{PLANNING}/STATE.md"))?;
    if let Some(n) = state.as_deref().and_then(state_phase)
        && phases.iter().any(|rp| rp.number.numeric_cmp(&n).is_eq())
        && has_unexecuted_plan(project, dirs, &n)?
    {
        return Ok(Some((n, "STATE.md")));
    }
    for rp in phases {
        if has_unexecuted_plan(project, dirs, &rp.number)? {
            return Ok(Some((rp.number.clone(), "ROADMAP.md")));
        }
    }
    Ok(None)
}

struct PhaseInfo {
    number: PhaseNumber,
    name: String,
    slug: String,
    dir: String,
}
