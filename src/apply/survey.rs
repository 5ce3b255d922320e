//! The survey of a target: what is there, read once, for every operation to plan from. So far
//! it reads the settings surfaces (each split into msd's entries and the user's, by the
//! surfaces' own rules) and renders the install state a plan leads to; install, uninstall,
//! verify and the no-change fast path all plan their settings and state from here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::Capability;
use msd_core::shell::Os;

use super::{LifecycleError, lio, plan, state, surfaces, write};
use crate::apply::migrate::Ran;
use crate::apply::plan::{Action, Plan, SettingsChange};
use crate::apply::state::{InstallState, MigrationOutcome, MigrationRecord, SurfaceLedger};
use crate::apply::surfaces::{HookMode, Vars};
use crate::pipeline::target::Target;

/// Reads a settings surface: its text, sha256 and display name.
pub(super) fn read_surface(
    home: &Path,
    file: &RelPath,
    allow_symlinks: bool,
) -> Result<(Option<String>, Option<Sha256>, String), LifecycleError> {
    let dest = fsx::confined(home, file, allow_symlinks)?;
    let display = dest.display().to_string();
    let bytes = fsx::read_if_exists(&dest).map_err(lio(&dest))?;
    let sha = bytes.as_deref().map(fsx::sha256);
    let text = match bytes {
        None => None,
        Some(b) => Some(String::from_utf8(b).map_err(|_| surfaces::SettingsError {
            path: display.clone(),
            line: None,
            message: "not UTF-8".into(),
        })?),
    };
    Ok((text, sha, display))
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

/// Plans the settings surfaces of `cap` for `target` into `plan`; returns the new ledgers.
pub(super) fn plan_settings(
    plan: &mut Plan,
    cap: &Capability,
    target: &Target,
    prev: Option<&InstallState>,
    allow_symlinks: bool,
    hooks: &HookContext<'_>,
) -> Result<BTreeMap<RelPath, SurfaceLedger>, LifecycleError> {
    let platform = (Os::HOST, cap.command_shell(Os::HOST));
    let vars = Vars::new(target, cap.core_dir(target.scope), hooks.mode, Some(hooks.user_home), platform)?;
    // A previous install whose ledger is lost: entries equal to ours are ours.
    let adopt = prev.is_none() && plan.previous.is_some();
    let empty = BTreeMap::new();
    let prev_ledgers = prev.map_or(&empty, |s| &s.settings);
    let mut ledgers = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for spec in msd_core::manifest::surfaces::for_scope(&cap.settings, target.scope) {
        seen.insert(spec.file.clone());
        let prev_l = prev_ledgers.get(&spec.file).cloned().unwrap_or_default();
        let (cur, sha, display) = read_surface(&target.home, &spec.file, allow_symlinks)?;
        let mut edit = surfaces::upsert(spec, &vars, &display, cur.as_deref(), &prev_l, adopt)?;
        edit.ledger.format = spec.format;
        if !edit.ledger.is_empty() {
            ledgers.insert(spec.file.clone(), edit.ledger.clone());
        }
        plan.settings.push(change(&spec.file, cur.as_deref(), sha, edit));
    }
    // Surfaces an older version wrote to and this one does not: our entries leave them.
    for (file, l) in prev_ledgers.iter().filter(|(f, _)| !seen.contains(*f)) {
        let (cur, sha, display) = read_surface(&target.home, file, allow_symlinks)?;
        let edit = surfaces::remove(l.format, &display, cur.as_deref(), l)?;
        plan.settings.push(change(file, cur.as_deref(), sha, edit));
    }
    Ok(ledgers)
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
    for p in new_paths {
        let mut anc = p.parent();
        while let Some(a) = anc {
            if !fsx::dir_exists(&plan.home.join(a.as_str())) {
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
