//! Verify: compare an install with its manifest (modified, missing, extra files) and its settings
//! entries; writes nothing.
//!
//! What no manifest lists is the user's. A file msd did not write inside a directory msd owns
//! (the core dir, a `skills/msd-help/` the manifest lists files of) is `extra`: drift. A file or
//! directory that only looks like ours (the user's own `skills/msd-mine/`, `agents/msd-own.md`)
//! is `user`: reported apart, never drift, never touched. Both come from the target's survey
//! ([`Survey::unlisted`]), as the modified and missing files do from its classes.

use std::path::{Path, PathBuf};

use msd_core::fs::fsx::{self};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};
use serde::Serialize;

use super::settings_plan::{HookContext, plan_settings};
use super::surfaces::HookMode;
use super::survey::{Class, Reading, Survey};
use super::{ApplyError, LifecycleError, record, state};
use crate::apply::plan::{Action, Plan, SettingsChange};
use crate::apply::txn::Area;
use crate::pipeline::target::Target;

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
    /// Files the manifest does not list inside directories it owns (drift).
    pub extra: Vec<RelPath>,
    /// The user's own files at msd-like names (`skills/msd-*`, `agents/msd-*`) that no manifest
    /// lists: reported, not drift.
    pub user: Vec<RelPath>,
    /// Settings surfaces whose msd entries are missing or differ.
    pub settings: Vec<SettingsChange>,
}

/// Compares the manifest, the disk and our settings entries. Reads only.
pub fn verify(
    cap: &Capability,
    target: &Target,
    allow_symlinks: bool,
    user_home: &Path,
) -> Result<VerifyReport, ApplyError> {
    verify_surveyed(cap, target, allow_symlinks, user_home).map(|(r, _)| r)
}

/// [`verify`], with the survey it was computed from (`None` when nothing is installed): `status`
/// reports both.
pub(crate) fn verify_surveyed(
    cap: &Capability,
    target: &Target,
    allow_symlinks: bool,
    user_home: &Path,
) -> Result<(VerifyReport, Option<Survey>), ApplyError> {
    let home = &target.home;
    let mut r =
        VerifyReport { runtime: cap.id.clone(), scope: Some(target.scope), home: home.clone(), ..Default::default() };
    r.interrupted = Area::new(home, allow_symlinks).pending();
    // Without a manifest nothing is installed: only the manifest is read.
    if !fsx::lexists(&home.join(record::manifest_rel(cap, target.scope).as_str())) {
        return Ok((r, None));
    }
    let how = Reading {
        emission: None,
        recorded: true,
        keep_edited: false,
        runtime_surfaces: true,
        allow_symlinks,
        dirs: &fsx::DirCache::new(),
    };
    let survey = Survey::read(home, cap, target.scope, how)?;
    let Some(manifest) = &survey.manifest else { return Ok((r, None)) };
    r.installed = true;
    let state = survey.state.clone();
    for f in &survey.files {
        match f.class {
            Class::Missing => r.missing.push(f.path.clone()),
            Class::Edited => r.modified.push(f.path.clone()),
            Class::Unchanged | Class::UsersAtOurPath | Class::Created => {}
        }
    }
    let unlisted = survey.unlisted(cap)?;
    r.extra = unlisted.in_ours;
    r.user = unlisted.users_own;
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
        manifest_disk_stat: None,
        settings: Vec::new(),
        migrations: Vec::new(),
        state: None,
    };
    // The hooks as the install wrote them: relative to $HOME when it was --portable-hooks.
    let mode = HookMode { portable: state.as_ref().is_some_and(|s| s.portable_hooks), force_statusline: false };
    let hooks = HookContext { mode, user_home };
    match plan_settings(&mut probe, &survey, cap, target, false, &hooks) {
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
                old_data: None,
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
    Ok((r, Some(survey)))
}
