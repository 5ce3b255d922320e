//! The pipeline end to end: `load` -> `validate` -> `compose` -> `convert` -> `guard` ->
//! `plan` -> `write` -> `record`.
//!
//! Everything before `write` is pure (the plan reads the disk, never writes it) and runs per
//! runtime in parallel; the content is loaded and parsed once and shared. Nothing is written
//! until every selected runtime has been emitted, guarded and planned.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::capability::Scope;
use crate::convert::{self, Emission};
use crate::error::Error;
use crate::guard::{self, GuardReport};
use crate::load::{self, Content, ContentError, LoadedRuntime, Tree};
use crate::plan::{self, Plan};
use crate::section_manifest;
use crate::synth;
use crate::target::{self, Environment, Target};
use crate::write::{self, WriteReport};

/// Where content and manifests come from.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--content DIR` (embedded when `None`).
    pub content: Option<PathBuf>,
    /// `--runtimes DIR` (embedded when `None`).
    pub runtimes: Option<PathBuf>,
}

/// Content and manifests, loaded and validated.
#[derive(Debug)]
pub struct Loaded {
    /// The content.
    pub content: Content,
    /// The runtimes, sorted by id.
    pub runtimes: Vec<LoadedRuntime>,
}

/// Loads and validates the runtime manifests only.
pub fn load_runtimes(sources: &Sources) -> Result<Vec<LoadedRuntime>, Error> {
    let tree = match &sources.runtimes {
        Some(dir) => Tree::from_dir(dir)?,
        None => Tree::embedded_runtimes(),
    };
    runtimes_from_tree(&tree)
}

/// Parses and validates the manifests of a runtimes tree already in memory, sorted by id.
pub fn runtimes_from_tree(tree: &Tree) -> Result<Vec<LoadedRuntime>, Error> {
    let mut runtimes = load::runtimes(tree)?;
    runtimes.sort_by(|a, b| a.capability.id.cmp(&b.capability.id));
    Ok(runtimes)
}

/// Loads and validates the content tree only, including the freshness of its generated
/// section manifest (an installed msd_run must never select with stale sections).
pub fn load_content(sources: &Sources) -> Result<Content, Error> {
    let tree = match &sources.content {
        Some(dir) => Tree::from_dir(dir)?,
        None => Tree::embedded_content(),
    };
    content_from_tree(tree)
}

/// Parses and validates a content tree already in memory, as [`load_content`] does.
pub fn content_from_tree(tree: Tree) -> Result<Content, Error> {
    let content = load::content(tree)?;
    section_manifest::verify_content(&content.tree).map_err(|g| ContentError {
        path: g.path,
        line: g.line,
        message: format!("{}: {}{}", g.reason, g.message, g.detail.map(|d| format!("\n{d}")).unwrap_or_default()),
        hint: g.hint,
    })?;
    crate::compact::validate(&content)?;
    Ok(content)
}

/// Loads and validates manifests and content.
pub fn load(sources: &Sources) -> Result<Loaded, Error> {
    let runtimes = load_runtimes(sources)?;
    let content = load_content(sources)?;
    Ok(Loaded { content, runtimes })
}

/// Picks runtimes by id (in the order given, duplicates removed) or all of them.
pub fn select<'a>(runtimes: &'a [LoadedRuntime], ids: &[String], all: bool) -> Result<Vec<&'a LoadedRuntime>, Error> {
    if all {
        return Ok(runtimes.iter().collect());
    }
    let mut out: Vec<&LoadedRuntime> = Vec::new();
    for id in ids {
        let rt = runtimes.iter().find(|r| &r.capability.id == id).ok_or_else(|| Error::UnknownRuntime {
            given: id.clone(),
            valid: runtimes.iter().map(|r| r.capability.id.clone()).collect(),
        })?;
        if !out.iter().any(|r| r.capability.id == rt.capability.id) {
            out.push(rt);
        }
    }
    Ok(out)
}

/// One runtime, emitted, guarded and planned.
#[derive(Debug)]
pub struct Prepared {
    /// Where it goes.
    pub target: Target,
    /// What the guard measured.
    pub guard: GuardReport,
    /// What will be done.
    pub plan: Plan,
}

/// Resolves, emits and guards one runtime, then adds the synthesized files (reads only).
pub fn emit_one(
    content: &Content,
    rt: &LoadedRuntime,
    scope: Scope,
    config_dir: Option<&Path>,
    env: &Environment,
) -> Result<(Target, Emission, GuardReport), Error> {
    let target = target::resolve(&rt.capability, scope, config_dir, env)?;
    let mut emission = convert::emit(content, rt, &target)?;
    let report = guard::check(&emission, &rt.capability, &content.tiers)?;
    synth::add(&mut emission, &rt.capability, rt.source.as_str())?;
    Ok((target, emission, report))
}

/// Options of an install run.
#[derive(Debug, Clone)]
pub struct InstallOptions<'a> {
    /// Scope.
    pub scope: Scope,
    /// `--config-dir`.
    pub config_dir: Option<&'a Path>,
    /// `--allow-symlinks`.
    pub allow_symlinks: bool,
}

/// Emits, guards and plans every selected runtime, in parallel. Fails before any write if any
/// runtime fails.
pub fn prepare(
    content: &Content,
    selected: &[&LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<Vec<Prepared>, Error> {
    selected
        .par_iter()
        .map(|rt| {
            let (target, emission, guard) = emit_one(content, rt, opts.scope, opts.config_dir, env)?;
            let plan = plan::build(emission, &rt.capability, &target.home, opts.allow_symlinks)?;
            Ok(Prepared { target, guard, plan })
        })
        .collect()
}

/// Carries out prepared plans, in order.
pub fn write_all(prepared: &[Prepared], allow_symlinks: bool) -> Result<Vec<WriteReport>, Error> {
    prepared.iter().map(|p| Ok(write::apply(&p.plan, allow_symlinks)?)).collect()
}
