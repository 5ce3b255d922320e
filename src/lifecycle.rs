//! The lifecycle of an installed target: install (and upgrade), uninstall, verify, recover.
//! Each run that writes holds the target's lock from before it reads anything to after its
//! last write.
//!
//! Input: emitted and guarded runtimes (install), or a runtime and its target (the others).
//! Output: per target, the [`Plan`] that was carried out (the same value `--dry-run` prints and
//! `--json` serialises) with what recovery and migrations did.
//!
//! Order of an install, per target: check the target can be written (a missing or read-only
//! target is an error before anything is written) -> lock -> finish or undo what an interrupted
//! run left ([`txn::recover`]) -> migrations -> plan the files ([`plan::build`]), the settings
//! surfaces ([`settings`]) and the install state -> check every destination directory can be
//! written -> one transaction ([`write::apply`]) -> unlock. Nothing is written for any target
//! until every target has been planned; a failure before its transaction reverts the
//! migrations of that run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::capability::{Capability, Scope};
use crate::error::Error;
use crate::fsx::{self, FileMode, Lock};
use crate::guard::GuardReport;
use crate::load::{Content, LoadedRuntime};
use crate::migrate::{self, Ran};
use crate::pipeline;
use crate::plan::{self, Action, Plan, SettingsChange};
use crate::progress::Bars;
use crate::record::{self, FileManifest};
use crate::relpath::RelPath;
use crate::settings::{self, Vars};
use crate::state::{self, InstallState, MigrationOutcome, MigrationRecord, SurfaceLedger};
use crate::target::{Environment, HomeSource, Target};
use crate::txn::{self, Area, Recovery, Staged};
use crate::write::{self, WriteReport};

/// Errors of the lifecycle around the pipeline.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// Another run holds the target.
    #[error(transparent)]
    Locked(#[from] fsx::LockError),
    /// The target (or the directory it would be created in) does not exist.
    #[error("target {home} cannot be created: {reason}")]
    Missing {
        /// The home.
        home: PathBuf,
        /// Why.
        reason: String,
    },
    /// The target cannot be written.
    #[error("target {home} is not writable: {reason}")]
    ReadOnly {
        /// The home.
        home: PathBuf,
        /// Why.
        reason: String,
    },
    /// A settings file cannot be parsed or edited; it was left untouched.
    #[error(transparent)]
    Settings(#[from] settings::SettingsError),
    /// The install state cannot be read.
    #[error(transparent)]
    State(#[from] state::StateError),
    /// A migration failed (and was reverted).
    #[error(transparent)]
    Migrate(#[from] migrate::MigrateError),
    /// The swap or the recovery failed.
    #[error(transparent)]
    Txn(#[from] txn::TxnError),
    /// A destination passes through a symlink.
    #[error(transparent)]
    Confine(#[from] fsx::ConfineError),
    /// An io error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl LifecycleError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            LifecycleError::Locked(_) => "wait for the other run to finish and run again (a killed run releases its lock by itself)".into(),
            LifecycleError::Missing { .. } => "create the parent directory first, or fix the path given by --config-dir or the environment".into(),
            LifecycleError::ReadOnly { .. } => "make the target writable (permissions, immutable flag, read-only mount) and run again; nothing was written".into(),
            LifecycleError::Settings(_) => "fix the file's syntax (or move it aside) and run again; it was left untouched and nothing was written".into(),
            LifecycleError::State(_) => "the install state is damaged; move it aside and run again".into(),
            LifecycleError::Migrate(_) => "move one of the two directories aside and run again; the migration was reverted".into(),
            LifecycleError::Txn(t) => txn_hint(t),
            LifecycleError::Confine(_) => "pass --allow-symlinks if the link is intended".into(),
            LifecycleError::Io { .. } => "check that the target exists and is writable".into(),
        }
    }
}

/// What to do about a failed swap or recovery.
pub fn txn_hint(t: &txn::TxnError) -> String {
    match t {
        txn::TxnError::Conflict { .. } => {
            "another program changed the file during the run; every change was rolled back; run again".into()
        }
        txn::TxnError::BadJournal { .. } => "move the .msd-install directory aside and run again (the target may then be half-updated: run install to make it whole)".into(),
        txn::TxnError::Stuck { .. } => "fix the cause (permissions, disk space) and run `msd-install recover`".into(),
        txn::TxnError::Confine(_) => "pass --allow-symlinks if the link is intended".into(),
        txn::TxnError::Io { .. } => "every change of this run was rolled back; fix the cause and run again".into(),
    }
}

fn lio(path: &Path) -> impl FnOnce(std::io::Error) -> LifecycleError + '_ {
    move |source| LifecycleError::Io { path: path.display().to_string(), source }
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
    /// `--dry-run`: plan only; no lock, no recovery, no migration, no write.
    pub dry_run: bool,
    /// Draw progress bars (stderr is a terminal and not `--quiet`).
    pub progress: bool,
}

/// One target of an install run.
#[derive(Debug)]
pub struct TargetRun {
    /// Where it goes.
    pub target: Target,
    /// What the guard measured.
    pub guard: GuardReport,
    /// What was (or, for a dry run, would be) done.
    pub plan: Plan,
    /// What recovery did before planning.
    pub recovery: Option<Recovery>,
    /// Dry run: an interrupted run's journal that the next real run completes first.
    pub pending_recovery: bool,
    /// Dry run: migrations the next real run would run.
    pub pending_migrations: Vec<&'static str>,
    /// What was written.
    pub report: Option<WriteReport>,
    /// What composition did to each file with sections or a cap.
    pub compose: Vec<crate::compose::fit::FileCompose>,
}

struct Held {
    _locks: Vec<Lock>,
    recoveries: BTreeMap<PathBuf, Recovery>,
    created_home: BTreeSet<PathBuf>,
}

impl Drop for Held {
    /// Unlocks, then removes a home this run created when it stayed empty (a run that failed
    /// before writing leaves no trace).
    fn drop(&mut self) {
        self._locks.clear();
        for home in &self.created_home {
            fsx::remove_dir_if_empty(home);
        }
    }
}

/// Checks that `home` exists or can be created, and can be written, writing nothing visible.
fn preflight(target: &Target) -> Result<(), LifecycleError> {
    let home = &target.home;
    if target.source == HomeSource::ConfigDir
        && let Some(parent) = home.parent()
        && !fsx::is_dir(parent)
    {
        return Err(LifecycleError::Missing {
            home: home.clone(),
            reason: format!("{} does not exist (--config-dir names a directory in an existing one)", parent.display()),
        });
    }
    let mut probe = home.as_path();
    while !probe.exists() {
        if std::fs::symlink_metadata(probe).is_ok() {
            return Err(LifecycleError::Missing {
                home: home.clone(),
                reason: format!("{} is a dangling symlink", probe.display()),
            });
        }
        match probe.parent() {
            Some(p) => probe = p,
            None => break,
        }
    }
    if !probe.is_dir() {
        return Err(LifecycleError::Missing {
            home: home.clone(),
            reason: format!("{} is not a directory", probe.display()),
        });
    }
    fsx::probe_writable(probe).map_err(|e| LifecycleError::ReadOnly { home: home.clone(), reason: e.to_string() })
}

/// Locks every distinct home (in path order, so two runs on overlapping sets cannot deadlock),
/// creating missing homes, and recovers what interrupted runs left.
fn hold(homes: &[&Path], allow_symlinks: bool) -> Result<Held, LifecycleError> {
    let set: BTreeSet<&Path> = homes.iter().copied().collect();
    let mut held = Held { _locks: Vec::new(), recoveries: BTreeMap::new(), created_home: BTreeSet::new() };
    for home in set {
        if !home.exists() {
            held.created_home.insert(home.to_path_buf());
        }
        held._locks.push(Lock::acquire(home)?);
        if let Some(r) = txn::recover(&Area::new(home, allow_symlinks))? {
            held.recoveries.insert(home.to_path_buf(), r);
        }
    }
    Ok(held)
}

/// Installs (or upgrades) `runtimes`.
pub fn install(
    content: &Content,
    runtimes: &[&LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<Vec<TargetRun>, Error> {
    let emitted: Vec<_> = runtimes
        .par_iter()
        .map(|rt| pipeline::emit_composed(content, rt, opts.scope, opts.config_dir, env).map(|e| (*rt, e)))
        .collect::<Result<_, Error>>()?;
    let held = if opts.dry_run {
        None
    } else {
        for (_, (target, _, _, _)) in &emitted {
            preflight(target)?;
        }
        let homes: Vec<&Path> = emitted.iter().map(|(_, (t, _, _, _))| t.home.as_path()).collect();
        Some(hold(&homes, opts.allow_symlinks)?)
    };
    let mut migrated: Vec<(PathBuf, &Capability, Scope, Vec<Ran>)> = Vec::new();
    let mut runs = Vec::new();
    let planned = (|| -> Result<(), Error> {
        for (rt, (target, emission, guard, compose)) in emitted {
            let cap = &rt.capability;
            let home = target.home.clone();
            let state0 = InstallState::read(&home, cap, target.scope).map_err(LifecycleError::from)?;
            let (ran, pending_migrations) = if opts.dry_run {
                (Vec::new(), migrate::pending(state0.as_ref()))
            } else {
                let ran = migrate::run(&home, cap, target.scope, state0.as_ref(), opts.allow_symlinks)
                    .map_err(LifecycleError::from)?;
                migrated.push((home.clone(), cap, target.scope, ran.clone()));
                (ran, Vec::new())
            };
            let state = if ran.iter().any(|r| r.applied) {
                InstallState::read(&home, cap, target.scope).map_err(LifecycleError::from)?
            } else {
                state0
            };
            let mut plan = plan::build(emission, cap, &home, opts.allow_symlinks)?;
            let ledgers = plan_settings(&mut plan, cap, &target, state.as_ref(), opts.allow_symlinks)?;
            let created_home = held.as_ref().is_some_and(|h| h.created_home.contains(&home));
            plan.state = next_state(&plan, cap, state.as_ref(), &ran, ledgers, created_home)?;
            plan.migrations = ran;
            runs.push(TargetRun {
                recovery: held.as_ref().and_then(|h| h.recoveries.get(&home).cloned()),
                pending_recovery: opts.dry_run && Area::new(&home, opts.allow_symlinks).pending(),
                pending_migrations,
                target,
                guard,
                plan,
                report: None,
                compose,
            });
        }
        if !opts.dry_run {
            for r in &runs {
                probe_destinations(&r.plan, opts.allow_symlinks)?;
            }
        }
        Ok(())
    })();
    if let Err(e) = planned {
        for (home, cap, scope, ran) in &migrated {
            migrate::revert(home, cap, *scope, ran, opts.allow_symlinks);
        }
        return Err(e);
    }
    if opts.dry_run {
        return Ok(runs);
    }
    for i in 0..runs.len() {
        let bars = Bars::new(opts.progress, &format!("{} ({})", runs[i].plan.runtime, runs[i].plan.scope.as_str()));
        match write::apply(&runs[i].plan, opts.allow_symlinks, &bars) {
            Ok(report) => runs[i].report = Some(report),
            Err(e) => {
                for (home, cap, scope, ran) in &migrated[i..] {
                    migrate::revert(home, cap, *scope, ran, opts.allow_symlinks);
                }
                return Err(e.into());
            }
        }
    }
    drop(held);
    Ok(runs)
}

/// Every directory a write of `plan` goes into must accept new files: checked before the
/// transaction, so that a read-only subdirectory stops the run before anything is written.
fn probe_destinations(plan: &Plan, allow_symlinks: bool) -> Result<(), Error> {
    let home = &plan.home;
    let mut dirs = BTreeSet::new();
    let puts = plan
        .ops
        .iter()
        .filter(|o| o.action != Action::Keep)
        .map(|o| &o.path)
        .chain(plan.settings.iter().filter(|s| s.action != Action::Keep).map(|s| &s.path));
    for p in puts {
        let dest = fsx::confined(home, p, allow_symlinks).map_err(LifecycleError::from)?;
        let mut d = dest.parent().map(Path::to_path_buf).unwrap_or_else(|| home.clone());
        while !d.exists() {
            match d.parent() {
                Some(p) => d = p.to_path_buf(),
                None => break,
            }
        }
        dirs.insert(d);
    }
    if !plan.is_noop() {
        dirs.insert(home.clone());
    }
    for d in dirs {
        fsx::probe_writable(&d).map_err(|e| LifecycleError::ReadOnly { home: home.clone(), reason: e.to_string() })?;
    }
    Ok(())
}

/// Reads a settings surface: its text, sha256 and display name.
fn read_surface(
    home: &Path,
    file: &RelPath,
    allow_symlinks: bool,
) -> Result<(Option<String>, Option<String>, String), LifecycleError> {
    let dest = fsx::confined(home, file, allow_symlinks)?;
    let display = dest.display().to_string();
    let bytes = fsx::read_if_exists(&dest).map_err(lio(&dest))?;
    let sha = bytes.as_deref().map(fsx::sha256_hex);
    let text = match bytes {
        None => None,
        Some(b) => Some(String::from_utf8(b).map_err(|_| settings::SettingsError {
            path: display.clone(),
            line: None,
            message: "not UTF-8".into(),
        })?),
    };
    Ok((text, sha, display))
}

fn change(path: &RelPath, cur: Option<&str>, sha: Option<String>, edit: settings::Edit) -> SettingsChange {
    let action = match (cur, &edit.text) {
        (None, Some(_)) => Action::Add,
        (Some(c), Some(t)) if c == t => Action::Keep,
        (Some(_), Some(_)) => Action::Change,
        (Some(_), None) => Action::Remove,
        (None, None) => Action::Keep,
    };
    SettingsChange {
        path: path.clone(),
        action,
        added: edit.added,
        updated: edit.updated,
        removed: edit.removed,
        notes: edit.notes,
        data: if matches!(action, Action::Add | Action::Change) { edit.text.map(String::into_bytes) } else { None },
        old_sha256: sha,
    }
}

/// Plans the settings surfaces of `cap` for `target` into `plan`; returns the new ledgers.
fn plan_settings(
    plan: &mut Plan,
    cap: &Capability,
    target: &Target,
    prev: Option<&InstallState>,
    allow_symlinks: bool,
) -> Result<BTreeMap<RelPath, SurfaceLedger>, LifecycleError> {
    let vars = Vars::new(target, cap.core_dir(target.scope));
    // A previous install whose ledger is lost: entries equal to ours are ours.
    let adopt = prev.is_none() && plan.previous.is_some();
    let empty = BTreeMap::new();
    let prev_ledgers = prev.map_or(&empty, |s| &s.settings);
    let mut ledgers = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for spec in settings::for_scope(&cap.settings, target.scope) {
        seen.insert(spec.file.clone());
        let prev_l = prev_ledgers.get(&spec.file).cloned().unwrap_or_default();
        let (cur, sha, display) = read_surface(&target.home, &spec.file, allow_symlinks)?;
        let mut edit = settings::upsert(spec, &vars, &display, cur.as_deref(), &prev_l, adopt)?;
        edit.ledger.format = spec.format;
        if !edit.ledger.is_empty() {
            ledgers.insert(spec.file.clone(), edit.ledger.clone());
        }
        plan.settings.push(change(&spec.file, cur.as_deref(), sha, edit));
    }
    // Surfaces an older version wrote to and this one does not: our entries leave them.
    for (file, l) in prev_ledgers.iter().filter(|(f, _)| !seen.contains(*f)) {
        let (cur, sha, display) = read_surface(&target.home, file, allow_symlinks)?;
        let edit = settings::remove(l.format, &display, cur.as_deref(), l)?;
        plan.settings.push(change(file, cur.as_deref(), sha, edit));
    }
    Ok(ledgers)
}

/// The state to record after `plan`, `None` when the one on disk is already it.
fn next_state(
    plan: &Plan,
    cap: &Capability,
    prev: Option<&InstallState>,
    ran: &[Ran],
    ledgers: BTreeMap<RelPath, SurfaceLedger>,
    created_home: bool,
) -> Result<Option<plan::StateWrite>, LifecycleError> {
    let mut next = prev.cloned().unwrap_or_default();
    if prev.is_none() {
        next.created_home = created_home;
    }
    let at = write::timestamp();
    for r in ran {
        next.migrations.push(MigrationRecord {
            id: r.id.to_string(),
            outcome: if r.applied { MigrationOutcome::Applied } else { MigrationOutcome::NotNeeded },
            by_version: env!("CARGO_PKG_VERSION").to_string(),
            at: at.clone(),
        });
    }
    next.settings = ledgers;
    let mut dirs: BTreeSet<RelPath> = next.created_dirs.iter().cloned().collect();
    let state_rel = state::state_rel(cap, plan.scope);
    let new_paths = plan
        .ops
        .iter()
        .filter(|o| o.action == Action::Add)
        .map(|o| &o.path)
        .chain(plan.settings.iter().filter(|s| s.action == Action::Add).map(|s| &s.path))
        .chain(std::iter::once(&plan.manifest_path))
        .chain(std::iter::once(&state_rel));
    for p in new_paths {
        let mut anc = p.parent();
        while let Some(a) = anc {
            if !plan.home.join(a.as_str()).exists() {
                dirs.insert(a.clone());
            }
            anc = a.parent();
        }
    }
    next.created_dirs = dirs.into_iter().collect();
    let path = plan.home.join(state_rel.as_str());
    let disk = fsx::read_if_exists(&path).map_err(lio(&path))?;
    let bytes = next.render();
    if disk.as_deref() == Some(&bytes[..]) {
        return Ok(None);
    }
    Ok(Some((state_rel, bytes, disk.as_deref().map(fsx::sha256_hex))))
}

// ---------------------------------------------------------------------------------------------
// Uninstall.

/// What an uninstall did (or, for a dry run, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct UninstallReport {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Option<Scope>,
    /// The home.
    pub home: PathBuf,
    /// Whether anything was installed there.
    pub installed: bool,
    /// Managed files removed.
    pub removed: Vec<RelPath>,
    /// Managed files the user edited: backed up and left in place.
    pub kept_edited: Vec<RelPath>,
    /// Managed files already gone.
    pub missing: Vec<RelPath>,
    /// Settings surfaces edited.
    pub settings: Vec<SettingsChange>,
    /// Our metadata files removed.
    pub metadata: Vec<RelPath>,
    /// Directories removed (empty ones we had created).
    pub dirs_removed: Vec<RelPath>,
    /// Where the edited files were copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_dir: Option<PathBuf>,
    /// What recovery did first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
}

/// Uninstalls `cap` from `target`: removes exactly the manifest's files the user did not edit
/// (edited ones are backed up and stay), our settings entries, our metadata, and the
/// directories we created when they are empty.
pub fn uninstall(
    cap: &Capability,
    target: &Target,
    allow_symlinks: bool,
    dry_run: bool,
    progress: bool,
) -> Result<UninstallReport, Error> {
    let home = &target.home;
    let mut report = UninstallReport {
        runtime: cap.id.clone(),
        scope: Some(target.scope),
        home: home.clone(),
        ..Default::default()
    };
    if !home.is_dir() {
        return Ok(report);
    }
    let held = if dry_run { None } else { Some(hold(&[home.as_path()], allow_symlinks)?) };
    report.recovery = held.as_ref().and_then(|h| h.recoveries.get(home).cloned());
    if !dry_run {
        migrate::run(home, cap, target.scope, None, allow_symlinks).map_err(LifecycleError::from)?;
    }
    let manifest = FileManifest::read(home, cap, target.scope).map_err(crate::plan::PlanError::from)?;
    let state = InstallState::read(home, cap, target.scope).map_err(LifecycleError::from)?;
    if manifest.is_none() && state.is_none() {
        return Ok(report);
    }
    report.installed = true;
    let mut staged = Vec::new();
    let mut backups = Vec::new();
    if let Some(m) = &manifest {
        for e in &m.files {
            let dest = fsx::confined(home, &e.path, allow_symlinks).map_err(LifecycleError::from)?;
            match fsx::read_if_exists(&dest).map_err(lio(&dest))? {
                None => report.missing.push(e.path.clone()),
                Some(d) => {
                    let sha = fsx::sha256_hex(&d);
                    if sha == e.sha256 {
                        staged.push(Staged::remove(e.path.clone(), e.sha256.clone()));
                        report.removed.push(e.path.clone());
                    } else {
                        report.kept_edited.push(e.path.clone());
                        backups.push(write::Backup {
                            path: &e.path,
                            bytes: d,
                            sha256: sha,
                            reason: crate::plan::BackupReason::UserEdited,
                            recorded_sha256: Some(&e.sha256),
                        });
                    }
                }
            }
        }
    }
    if !backups.is_empty() {
        let from = manifest.as_ref().map(|m| m.tool_version.as_str());
        let dir_rel = write::stage_backups(home, backups, from, &cap.id, &mut staged);
        report.backup_dir = Some(home.join(dir_rel.as_str()));
    }
    if let Some(s) = &state {
        for (file, l) in &s.settings {
            let (cur, sha, display) = read_surface(home, file, allow_symlinks)?;
            let edit = settings::remove(l.format, &display, cur.as_deref(), l).map_err(LifecycleError::from)?;
            let c = change(file, cur.as_deref(), sha, edit);
            match (c.action, &c.data) {
                (Action::Change, Some(data)) => {
                    staged.push(Staged::put(file.clone(), data.clone(), FileMode::Regular, c.old_sha256.clone()));
                }
                (Action::Remove, _) => {
                    staged.push(Staged::remove(file.clone(), c.old_sha256.clone().expect("exists")));
                }
                _ => {}
            }
            report.settings.push(c);
        }
    }
    for meta in [record::manifest_rel(cap, target.scope), state::state_rel(cap, target.scope)] {
        let dest = fsx::confined(home, &meta, allow_symlinks).map_err(LifecycleError::from)?;
        if let Some(sha) = fsx::sha256_file(&dest).map_err(lio(&dest))? {
            staged.push(Staged::remove(meta.clone(), sha));
            report.metadata.push(meta);
        }
    }
    if dry_run {
        return Ok(report);
    }
    let bars = Bars::new(progress, &format!("{} ({}) uninstall", cap.id, target.scope.as_str()));
    let area = Area::new(home, allow_symlinks);
    txn::commit(&area, &format!("uninstall {} {}", cap.id, target.scope.as_str()), staged, &bars)
        .map_err(LifecycleError::from)?;
    // Directories we created, deepest first, when empty.
    let mut dirs = state.as_ref().map(|s| s.created_dirs.clone()).unwrap_or_default();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_str().matches('/').count()));
    for d in dirs {
        let p = home.join(d.as_str());
        if fsx::is_dir(&p) && fsx::remove_dir_if_empty(&p) {
            report.dirs_removed.push(d);
        }
    }
    drop(held);
    if state.as_ref().is_some_and(|s| s.created_home) {
        fsx::remove_dir_if_empty(home);
    }
    Ok(report)
}

// ---------------------------------------------------------------------------------------------
// Verify.

/// Drift between the manifest and the disk.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// No drift.
    pub ok: bool,
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Option<Scope>,
    /// The home.
    pub home: PathBuf,
    /// Whether an install was found.
    pub installed: bool,
    /// An interrupted run awaits recovery.
    pub interrupted: bool,
    /// Managed files whose bytes differ from the manifest.
    pub modified: Vec<RelPath>,
    /// Managed files that are gone.
    pub missing: Vec<RelPath>,
    /// Files in our directories that the manifest does not list.
    pub extra: Vec<RelPath>,
    /// Settings surfaces whose msd entries are missing or differ.
    pub settings: Vec<SettingsChange>,
}

/// Compares the manifest, the disk and our settings entries. Reads only.
pub fn verify(cap: &Capability, target: &Target, allow_symlinks: bool) -> Result<VerifyReport, Error> {
    let home = &target.home;
    let mut r =
        VerifyReport { runtime: cap.id.clone(), scope: Some(target.scope), home: home.clone(), ..Default::default() };
    r.interrupted = Area::new(home, allow_symlinks).pending();
    let Some(manifest) = FileManifest::read(home, cap, target.scope).map_err(crate::plan::PlanError::from)? else {
        return Ok(r);
    };
    r.installed = true;
    let state = InstallState::read(home, cap, target.scope).map_err(LifecycleError::from)?;
    for e in &manifest.files {
        let dest = fsx::confined(home, &e.path, allow_symlinks).map_err(LifecycleError::from)?;
        match fsx::sha256_file(&dest).map_err(lio(&dest))? {
            None => r.missing.push(e.path.clone()),
            Some(sha) if sha != e.sha256 => r.modified.push(e.path.clone()),
            Some(_) => {}
        }
    }
    let listed: BTreeSet<&str> = manifest.files.iter().map(|e| e.path.as_str()).collect();
    let ours = [record::manifest_rel(cap, target.scope), state::state_rel(cap, target.scope)];
    let mut areas: Vec<RelPath> = vec![cap.core_dir(target.scope).clone()];
    for spec in cap.layout(target.scope) {
        let dir = home.join(spec.dest.as_str());
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for entry in rd.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with(&spec.prefix)
                && let Ok(rel) = RelPath::new(format!("{}/{name}", spec.dest))
            {
                areas.push(rel);
            }
        }
    }
    for area in areas {
        let dir = home.join(area.as_str());
        let files = if fsx::is_dir(&dir) {
            fsx::list_files(&dir).map_err(lio(&dir))?.into_iter().map(|f| format!("{area}/{f}")).collect()
        } else if dir.is_file() {
            vec![area.to_string()]
        } else {
            Vec::new()
        };
        for f in files {
            if !listed.contains(f.as_str())
                && !ours.iter().any(|o| o.as_str() == f)
                && let Ok(rel) = RelPath::new(f)
                && !r.extra.contains(&rel)
            {
                r.extra.push(rel);
            }
        }
    }
    r.extra.sort();
    let mut probe = Plan {
        runtime: cap.id.clone(),
        scope: target.scope,
        home: home.clone(),
        ops: Vec::new(),
        manifest: manifest.clone(),
        manifest_path: record::manifest_rel(cap, target.scope),
        manifest_changed: false,
        previous: None,
        manifest_old_sha256: None,
        settings: Vec::new(),
        migrations: Vec::new(),
        state: None,
    };
    match plan_settings(&mut probe, cap, target, state.as_ref(), allow_symlinks) {
        Ok(_) => r.settings = probe.settings.into_iter().filter(|s| s.action != Action::Keep).collect(),
        Err(LifecycleError::Settings(e)) => {
            // An unparseable settings file is drift too: report it against its surface.
            let file = cap
                .settings
                .iter()
                .map(|s| &s.file)
                .chain(state.iter().flat_map(|st| st.settings.keys()))
                .find(|f| home.join(f.as_str()).display().to_string() == e.path)
                .cloned()
                .unwrap_or_else(|| state::state_rel(cap, target.scope));
            r.settings.push(SettingsChange {
                path: file,
                action: Action::Change,
                added: Vec::new(),
                updated: Vec::new(),
                removed: Vec::new(),
                notes: vec![e.to_string()],
                data: None,
                old_sha256: None,
            });
        }
        Err(e) => return Err(e.into()),
    }
    r.ok = r.installed
        && !r.interrupted
        && r.modified.is_empty()
        && r.missing.is_empty()
        && r.extra.is_empty()
        && r.settings.is_empty();
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// Recover.

/// Locks `home` and completes or rolls back what an interrupted run left there.
pub fn recover(home: &Path, allow_symlinks: bool) -> Result<Option<Recovery>, Error> {
    if !home.is_dir() {
        return Ok(None);
    }
    let held = hold(&[home], allow_symlinks)?;
    Ok(held.recoveries.get(home).cloned())
}
