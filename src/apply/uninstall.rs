//! Uninstall: remove exactly the manifest's files the user did not edit (edited ones are backed
//! up and stay), our settings entries, our metadata and the directories we created when empty.

use std::path::PathBuf;
use std::sync::Arc;

use msd_core::fs::fsx::{self, DirCache, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};
use serde::Serialize;

use super::settings_plan::remove_entries;
use super::survey::{Class, Disk, Reading, Survey};
use super::take::{hold, remove_created};
use super::{ApplyError, LifecycleError, Progress, lio, migrate, record, state, txn, write};
use crate::apply::plan::{Action, SettingsChange};
use crate::apply::txn::{Area, Recovery, Staged};
use crate::pipeline::target::Target;

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
    /// Directories above the home that its first install created and that are not empty yet
    /// (another runtime's home is in them): [`crate::apply::remove_created_parents`] takes them
    /// once every uninstall of a run is done.
    #[serde(skip)]
    pub created_parents: Vec<PathBuf>,
    /// Where the edited files were copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_dir: Option<PathBuf>,
    /// What recovery did first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
}

impl UninstallReport {
    /// An empty report of `cap` on `target`, filled as the uninstall goes.
    fn of(cap: &Capability, target: &Target) -> UninstallReport {
        UninstallReport {
            runtime: cap.id.clone(),
            scope: Some(target.scope),
            home: target.home.clone(),
            ..Default::default()
        }
    }
}

/// Uninstalls `cap` from `target`: removes exactly the manifest's files the user did not edit
/// (edited ones are backed up and stay), our settings entries, our metadata, and the
/// directories we created when they are empty.
pub fn uninstall(
    cap: &Capability,
    target: &Target,
    allow_symlinks: bool,
    dry_run: bool,
    progress: &dyn Progress,
) -> Result<UninstallReport, ApplyError> {
    let home = &target.home;
    let mut report = UninstallReport::of(cap, target);
    if !home.is_dir() {
        return Ok(report);
    }
    let held = if dry_run { None } else { Some(hold(&[home.as_path()], allow_symlinks, None)?) };
    report.recovery = held.as_ref().and_then(|h| h.recoveries.get(home).cloned());
    let Some(Removal { staged, state_sha, state_rel, dirs, created, known }) =
        plan_removal(cap, target, allow_symlinks, dry_run, &mut report)?
    else {
        return Ok(report);
    };
    if dry_run {
        return Ok(report);
    }
    let bars = progress.target(&format!("{} ({}) uninstall", cap.id, target.scope.as_str()));
    let area = Area::new(home, allow_symlinks).with_caches(&known, &Arc::default());
    txn::commit(&area, &format!("uninstall {} {}", cap.id, target.scope.as_str()), staged, bars.as_ref())
        .map_err(LifecycleError::from)?;
    // Directories we created, deepest first, when empty; those holding the state after it.
    let holds_state = |d: &RelPath| state_rel.as_str().starts_with(&format!("{}/", d.as_str()));
    let (later, now): (Vec<RelPath>, Vec<RelPath>) = dirs.into_iter().partition(|d| holds_state(d));
    for d in now {
        let p = home.join(d.as_str());
        if fsx::is_dir(&p) && known.remove_dir_if_empty(&p) {
            report.dirs_removed.push(d);
        }
    }
    if let Some(sha) = state_sha {
        txn::commit(
            &area,
            &format!("uninstall {} {} state", cap.id, target.scope.as_str()),
            vec![Staged::remove(state_rel.clone(), sha)],
            bars.as_ref(),
        )
        .map_err(LifecycleError::from)?;
    }
    for d in later {
        let p = home.join(d.as_str());
        if fsx::is_dir(&p) && known.remove_dir_if_empty(&p) {
            report.dirs_removed.push(d);
        }
    }
    drop(held);
    if let Some(above) = created {
        report.created_parents = remove_created(home, above);
    }
    Ok(report)
}

/// The uninstall of an install staged to be committed as one with another runtime's install
/// (`migrate`, [`super::Linked`]): its home locked and its transaction staged, the state's
/// removal in it, nothing visible changed.
pub(crate) struct StagedRemoval {
    /// What the uninstall does.
    pub(crate) report: UninstallReport,
    // Dropped in this order when the run fails: the staging (unless the install took it), the
    // two homes' notes, then the lock.
    linked: super::Linked,
    notes: [txn::PartnerNote; 2],
    held: super::take::Held,
    dirs: Vec<RelPath>,
    created: Option<usize>,
}

/// Locks `target`'s home and stages its uninstall (after its migrations), linked to the
/// install of `partner` (the other half's home); `None` when nothing is installed there.
pub(crate) fn stage_removal(
    cap: &Capability,
    target: &Target,
    partner: &std::path::Path,
    allow_symlinks: bool,
) -> Result<Option<StagedRemoval>, ApplyError> {
    let home = &target.home;
    let mut report = UninstallReport::of(cap, target);
    if !home.is_dir() {
        return Ok(None);
    }
    let held = hold(&[home.as_path()], allow_symlinks, None)?;
    report.recovery = held.recoveries.get(home).cloned();
    let Some(Removal { mut staged, state_sha, state_rel, dirs, created, known }) =
        plan_removal(cap, target, allow_symlinks, false, &mut report)?
    else {
        return Ok(None);
    };
    if let Some(sha) = state_sha {
        staged.push(Staged::remove(state_rel, sha));
    }
    let notes = note_pair(home, partner, allow_symlinks)?;
    let label = format!("uninstall {} {}", cap.id, target.scope.as_str());
    let area = Area::new(home, allow_symlinks).with_caches(&known, &Arc::default());
    let mut prepared = txn::prepare(&area, &label, staged, &txn::NoProgress).map_err(LifecycleError::from)?;
    prepared.prune_after(dirs.clone());
    prepared.link_staging(partner).map_err(LifecycleError::from)?;
    Ok(Some(StagedRemoval { report, linked: super::Linked::new(prepared), notes, held, dirs, created }))
}

/// Before this half stages anything, each of the two homes names the other
/// ([`Area::note_partner`]): this one under its lock (held), `partner`'s under its own, taken
/// for the moment (no other run is working there; once it is let go, a run that takes it
/// follows the note to this home and finds it locked). A run killed from here on, while this
/// half stages and before the install takes `partner`, leaves a note there that a recovery of
/// `partner` follows to this staging and discards.
fn note_pair(
    home: &std::path::Path,
    partner: &std::path::Path,
    allow_symlinks: bool,
) -> Result<[txn::PartnerNote; 2], ApplyError> {
    let here = Area::new(home, allow_symlinks).note_partner(partner).map_err(LifecycleError::from)?;
    let lock = fsx::Lock::acquire(partner).map_err(LifecycleError::Locked)?;
    let there = Area::new(partner, allow_symlinks).note_partner(home).map_err(LifecycleError::from)?;
    drop(lock);
    Ok([here, there])
}

impl StagedRemoval {
    /// The staged transaction, for the install it commits with.
    pub(crate) fn linked(&self) -> &super::Linked {
        &self.linked
    }

    /// Once committed: what was removed, then the lock and the directories above the home the
    /// install had created.
    pub(crate) fn finish(self) -> UninstallReport {
        let StagedRemoval { held, mut report, dirs, created, notes, .. } = self;
        let home = report.home.clone();
        // The transaction removed them when empty.
        report.dirs_removed = dirs.into_iter().filter(|d| !fsx::lexists(&home.join(d.as_str()))).collect();
        // The pair is done: this home's note goes while it is still locked (the install took
        // the other's away with its own lock).
        drop(notes);
        drop(held);
        if let Some(above) = created {
            report.created_parents = remove_created(&home, above);
        }
        report
    }
}

/// An uninstall planned from its survey: nothing changed yet.
pub(crate) struct Removal {
    /// The transaction's ops (the state's removal not among them).
    staged: Vec<Staged>,
    /// The install state's hash, when it is there (removed last).
    state_sha: Option<msd_core::fs::digest::Sha256>,
    state_rel: RelPath,
    /// The directories the install created, deepest first.
    dirs: Vec<RelPath>,
    /// The install created its home, and this many directories above it.
    created: Option<usize>,
    /// What the survey learned of the home's directories, which the transaction and the
    /// removals after it go on from (every change of the home after the survey goes through it).
    known: Arc<DirCache>,
}

/// Plans the uninstall of `target` into `report` (after its migrations, unless `dry_run`);
/// `None` when nothing is installed there.
fn plan_removal(
    cap: &Capability,
    target: &Target,
    allow_symlinks: bool,
    dry_run: bool,
    report: &mut UninstallReport,
) -> Result<Option<Removal>, ApplyError> {
    let home = &target.home;
    if !dry_run {
        migrate::run(home, cap, target.scope, None, allow_symlinks).map_err(LifecycleError::from)?;
    }
    let known = Arc::new(DirCache::new());
    let how = Reading {
        emission: None,
        recorded: true,
        keep_edited: true,
        runtime_surfaces: false,
        allow_symlinks,
        dirs: &known,
    };
    let mut survey = Survey::read(home, cap, target.scope, how)?;
    if !survey.installed() {
        // A run killed after removing the state and before its core dir leaves it empty.
        if !dry_run {
            let core = home.join(cap.core_dir(target.scope).as_str());
            if fsx::is_dir(&core) && known.remove_dir_if_empty(&core) {
                report.dirs_removed.push(cap.core_dir(target.scope).clone());
            }
        }
        return Ok(None);
    }
    report.installed = true;
    let mut staged = Vec::new();
    // The plan, from each path's class: msd's as written goes, msd's edited by the user is
    // backed up and stays, msd's missing is said.
    let mut kept = Vec::new();
    for (i, f) in survey.files.iter_mut().enumerate() {
        let Some(recorded) = &f.recorded else { continue };
        match f.class {
            Class::Missing => report.missing.push(f.path.clone()),
            Class::Unchanged => {
                staged.push(Staged::remove(f.path.clone(), recorded.sha256));
                report.removed.push(f.path.clone());
            }
            Class::Edited => {
                report.kept_edited.push(f.path.clone());
                if let Disk::File { bytes: Some(b), .. } = &mut f.disk {
                    kept.push((i, std::mem::take(b)));
                }
            }
            Class::UsersAtOurPath | Class::Created => {}
        }
    }
    let survey = survey;
    let mut backups = Vec::new();
    for (i, bytes) in kept {
        let f = &survey.files[i];
        backups.push(write::Backup {
            path: &f.path,
            bytes,
            sha256: f.disk.sha256().expect("an edited file was read"),
            reason: crate::apply::plan::BackupReason::UserEdited,
            recorded_sha256: f.recorded.as_ref().map(|r| r.sha256),
        });
    }
    if let Some(s) = &survey.state {
        for (file, l) in &s.settings {
            let c = remove_entries(&survey, file, l)?;
            if let (Some(bytes), Some(sha)) = (&c.old_data, &c.old_sha256) {
                backups.push(write::Backup {
                    path: file,
                    bytes: bytes.clone(),
                    sha256: *sha,
                    reason: crate::apply::plan::BackupReason::UserEdited,
                    recorded_sha256: None,
                });
            }
            match (c.action, &c.data) {
                (Action::Change, Some(data)) => {
                    staged.push(Staged::put(file.clone(), data.clone(), FileMode::Regular, c.old_sha256).in_place());
                }
                (Action::Remove, _) => {
                    staged.push(Staged::remove(file.clone(), c.old_sha256.expect("exists")));
                }
                _ => {}
            }
            report.settings.push(c);
        }
    }
    if !backups.is_empty() {
        let from = survey.manifest.as_ref().map(|m| m.tool_version.as_str());
        let dir_rel = write::stage_backups(home, backups, from, &cap.id, &mut staged);
        report.backup_dir = Some(home.join(dir_rel.as_str()));
    }
    // The state goes last, after the directories it lists: a run killed before then is redone
    // by the next uninstall, which still finds the state.
    let state_rel = state::state_rel(cap, target.scope);
    let state_sha = fsx::sha256_file(&fsx::confined(home, &state_rel, allow_symlinks).map_err(LifecycleError::from)?)
        .map_err(lio(home))?;
    if state_sha.is_some() {
        report.metadata.push(state_rel.clone());
    }
    let meta = record::manifest_rel(cap, target.scope);
    let dest = fsx::confined(home, &meta, allow_symlinks).map_err(LifecycleError::from)?;
    if let Some(sha) = fsx::sha256_file(&dest).map_err(lio(&dest))? {
        staged.push(Staged::remove(meta.clone(), sha));
        report.metadata.push(meta);
    }
    let mut dirs = survey.state.as_ref().map(|s| s.created_dirs.clone()).unwrap_or_default();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_str().matches('/').count()));
    let created = survey.state.as_ref().filter(|s| s.created_home).map(|s| s.created_above);
    Ok(Some(Removal { staged, state_sha, state_rel, dirs, created, known }))
}
