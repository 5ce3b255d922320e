//! Uninstall: remove exactly the manifest's files the user did not edit (edited ones are backed
//! up and stay), our settings entries, our metadata and the directories we created when empty.

use std::path::PathBuf;

use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};
use serde::Serialize;

use super::survey::{change, read_surface};
use super::take::{hold, remove_created};
use super::{ApplyError, LifecycleError, Progress, lio, migrate, record, state, surfaces, txn, write};
use crate::apply::plan::{Action, SettingsChange};
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
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
    let manifest = FileManifest::read(home, cap, target.scope).map_err(crate::apply::plan::PlanError::from)?;
    let state = InstallState::read(home, cap, target.scope).map_err(LifecycleError::from)?;
    if manifest.is_none() && state.is_none() {
        // A run killed after removing the state and before its core dir leaves it empty.
        if !dry_run {
            let core = home.join(cap.core_dir(target.scope).as_str());
            if fsx::is_dir(&core) && fsx::remove_dir_if_empty(&core) {
                report.dirs_removed.push(cap.core_dir(target.scope).clone());
            }
        }
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
                    let sha = fsx::sha256(&d);
                    if sha == e.sha256 {
                        staged.push(Staged::remove(e.path.clone(), e.sha256));
                        report.removed.push(e.path.clone());
                    } else {
                        report.kept_edited.push(e.path.clone());
                        backups.push(write::Backup {
                            path: &e.path,
                            bytes: d,
                            sha256: sha,
                            reason: crate::apply::plan::BackupReason::UserEdited,
                            recorded_sha256: Some(e.sha256),
                        });
                    }
                }
            }
        }
    }
    if let Some(s) = &state {
        for (file, l) in &s.settings {
            let (cur, sha, display) = read_surface(home, file, allow_symlinks)?;
            let edit = surfaces::remove(l.format, &display, cur.as_deref(), l).map_err(LifecycleError::from)?;
            let c = change(file, cur.as_deref(), sha, edit);
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
                    staged.push(Staged::put(file.clone(), data.clone(), FileMode::Regular, c.old_sha256));
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
        let from = manifest.as_ref().map(|m| m.tool_version.as_str());
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
    if dry_run {
        return Ok(report);
    }
    let bars = progress.target(&format!("{} ({}) uninstall", cap.id, target.scope.as_str()));
    let area = Area::new(home, allow_symlinks);
    txn::commit(&area, &format!("uninstall {} {}", cap.id, target.scope.as_str()), staged, bars.as_ref())
        .map_err(LifecycleError::from)?;
    // Directories we created, deepest first, when empty; those holding the state after it.
    let mut dirs = state.as_ref().map(|s| s.created_dirs.clone()).unwrap_or_default();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_str().matches('/').count()));
    let holds_state = |d: &RelPath| state_rel.as_str().starts_with(&format!("{}/", d.as_str()));
    let (later, now): (Vec<RelPath>, Vec<RelPath>) = dirs.into_iter().partition(|d| holds_state(d));
    for d in now {
        let p = home.join(d.as_str());
        if fsx::is_dir(&p) && fsx::remove_dir_if_empty(&p) {
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
        if fsx::is_dir(&p) && fsx::remove_dir_if_empty(&p) {
            report.dirs_removed.push(d);
        }
    }
    drop(held);
    if let Some(s) = state.as_ref().filter(|s| s.created_home) {
        report.created_parents = remove_created(home, s.created_above);
    }
    Ok(report)
}
