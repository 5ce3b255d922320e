//! The settings and state part of every plan: from the surfaces a [`Survey`] read, our entries
//! upserted into (or removed from) each settings file by the surfaces' own rules, and the install
//! state a plan leads to. Install, uninstall, verify and the no-change fast path all plan their
//! settings and state here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::Capability;
use msd_core::shell::Os;

use super::survey::{SurfaceText, Survey};
use super::{LifecycleError, lio, plan, state, surfaces, write};
use crate::apply::migrate::Ran;
use crate::apply::plan::{Action, Plan, SettingsChange};
use crate::apply::state::{InstallState, MigrationOutcome, MigrationRecord, SurfaceLedger};
use crate::apply::surfaces::{HookMode, Vars};
use crate::pipeline::target::Target;

/// A surveyed surface's text, or its error (a file msd must edit and cannot read).
fn text_of(s: &SurfaceText) -> Result<Option<&str>, LifecycleError> {
    Ok(s.read()?)
}

pub(super) fn change(path: &RelPath, cur: Option<&str>, sha: Option<Sha256>, edit: surfaces::Edit) -> SettingsChange {
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
        old_data: if edit.edited.is_empty() || action == Action::Keep {
            None
        } else {
            cur.map(|c| c.as_bytes().to_vec())
        },
        data: if matches!(action, Action::Add | Action::Change) { edit.text.map(String::into_bytes) } else { None },
        old_sha256: sha,
    }
}

/// How hook commands are written for one target: the mode and the user's `$HOME` (what
/// `--portable-hooks` makes them relative to).
pub(super) struct HookContext<'a> {
    pub(super) mode: HookMode,
    pub(super) user_home: &'a Path,
}

/// Plans the settings surfaces of `cap` for `target` into `plan`, from what `survey` read of
/// them and its state's ledgers; returns the new ledgers. `lost_ledger`: a previous install
/// whose ledger is lost (a manifest, no state): entries equal to ours are taken as ours.
pub(super) fn plan_settings(
    plan: &mut Plan,
    survey: &Survey,
    cap: &Capability,
    target: &Target,
    lost_ledger: bool,
    hooks: &HookContext<'_>,
) -> Result<BTreeMap<RelPath, SurfaceLedger>, LifecycleError> {
    let platform = (Os::HOST, cap.command_shell(Os::HOST));
    let vars = Vars::new(target, cap.core_dir(target.scope), hooks.mode, Some(hooks.user_home), platform)?;
    let prev = survey.state.as_ref();
    let adopt = lost_ledger;
    let empty = BTreeMap::new();
    let prev_ledgers = prev.map_or(&empty, |s| &s.settings);
    let mut ledgers = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for spec in msd_core::manifest::surfaces::for_scope(&cap.settings, target.scope) {
        seen.insert(spec.file.clone());
        let prev_l = prev_ledgers.get(&spec.file).cloned().unwrap_or_default();
        let s = survey.surface(&spec.file);
        let cur = text_of(s)?;
        let mut edit = surfaces::upsert(spec, &vars, &s.display, cur, &prev_l, adopt)?;
        edit.ledger.format = spec.format;
        if !edit.ledger.is_empty() {
            ledgers.insert(spec.file.clone(), edit.ledger.clone());
        }
        plan.settings.push(change(&spec.file, cur, s.sha256, edit));
    }
    // Surfaces an older version wrote to and this one does not: our entries leave them.
    for (file, l) in prev_ledgers.iter().filter(|(f, _)| !seen.contains(*f)) {
        plan.settings.push(remove_entries(survey, file, l)?);
    }
    Ok(ledgers)
}

/// Our entries of `ledger` leave the surveyed surface `file` (an uninstall, or a surface this
/// version no longer writes to).
pub(super) fn remove_entries(
    survey: &Survey,
    file: &RelPath,
    ledger: &SurfaceLedger,
) -> Result<SettingsChange, LifecycleError> {
    let s = survey.surface(file);
    let cur = text_of(s)?;
    let edit = surfaces::remove(ledger.format, &s.display, cur, ledger)?;
    Ok(change(file, cur, s.sha256, edit))
}

/// The state to record after `plan`, `None` when the one on disk is already it.
#[allow(
    clippy::too_many_arguments,
    reason = "the state of a target is computed from every part of its plan; a struct would only rename them"
)]
pub(super) fn next_state(
    plan: &Plan,
    cap: &Capability,
    prev: Option<&InstallState>,
    ran: &[Ran],
    ledgers: BTreeMap<RelPath, SurfaceLedger>,
    created_home: Option<usize>,
    portable_hooks: bool,
    profile: Option<&str>,
) -> Result<Option<plan::StateWrite>, LifecycleError> {
    let mut next = prev.cloned().unwrap_or_default();
    next.portable_hooks = portable_hooks;
    if let Some(p) = profile {
        next.profile = Some(p.to_string());
    }
    if prev.is_none() {
        next.created_home = created_home.is_some();
        next.created_above = created_home.unwrap_or(0);
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
    // Each directory looked at once, however many new files go into it.
    let known = fsx::DirCache::new();
    for p in new_paths {
        let mut anc = p.parent();
        while let Some(a) = anc {
            if !known.dir_exists(&plan.home.join(a.as_str())) {
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
    Ok(Some((state_rel, bytes, disk.as_deref().map(fsx::sha256))))
}
