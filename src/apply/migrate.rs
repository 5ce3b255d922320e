//! Migrations: ordered, recorded changes of an installed target's layout between versions of
//! msd-install, run before planning so that the plan compares like with like.
//!
//! Input: a target home, its runtime's [`Capability`] and the [`InstallState`] found there.
//! Output: the migrations that ran (to be recorded in the state by the same transaction as the
//! install), or an error after every migration of this run has been reverted.
//!
//! Invariants: [`MIGRATIONS`] is append-only and runs in order; each migration runs once per
//! target (the state records it); each is idempotent (each step checks whether it is already
//! done, so a run killed half-way is finished by the next) and reversible (`revert` undoes
//! `apply`; a run that fails after migrating reverts them, last first). A migration acts only on
//! what proves to be ours (a file manifest naming this runtime), never on a user's look-alike.

use std::path::{Path, PathBuf};

use crate::apply::record::{FileManifest, MANIFEST_NAME};
use crate::apply::state::InstallState;
use crate::apply::txn::fault_point;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};

/// A migration.
pub(crate) struct Migration {
    /// Stable id, recorded in the state.
    pub id: &'static str,
    apply: fn(&Ctx<'_>) -> Result<bool, MigrateError>,
    revert: fn(&Ctx<'_>) -> Result<(), MigrateError>,
}

/// Every migration, oldest first. Append only.
pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    // Layout 1 kept the core tree in <home>/msd/; layout 2 keeps it in <home>/<core_dir>/ (msd-core).
    id: "core-dir-msd-to-msd-core",
    apply: core_dir_apply,
    revert: core_dir_revert,
}];

/// What a migration step works on.
pub(crate) struct Ctx<'a> {
    home: &'a Path,
    cap: &'a Capability,
    scope: Scope,
    allow_symlinks: bool,
}

/// Migration errors.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// An io error on a path.
    #[error("migration {id}: {path}: {source}")]
    Io {
        /// The migration.
        id: &'static str,
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The target holds both the old and the new layout.
    #[error("migration {id}: {old} and {new} both exist")]
    BothLayouts {
        /// The migration.
        id: &'static str,
        /// The old location.
        old: String,
        /// The new location.
        new: String,
    },
    /// A path is not safe.
    #[error("migration {id}: {message}")]
    Unsafe {
        /// The migration.
        id: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A path of the migration passes through a symlink or a file.
    #[error("migration {id}: {source}")]
    Confine {
        /// The migration.
        id: &'static str,
        /// What is on the way.
        source: fsx::ConfineError,
    },
}

impl MigrateError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        let reverted = "the migration was reverted and nothing else was written";
        match self {
            MigrateError::BothLayouts { old, .. } => {
                format!("move {old} aside (keep it until the install works) and run again; {reverted}")
            }
            MigrateError::Confine { source, .. } => source.hint(),
            MigrateError::Io { path, .. } => {
                format!(
                    "check that {path} is readable and writable (permissions, disk space), then run again; {reverted}"
                )
            }
            MigrateError::Unsafe { .. } => format!("reinstall into a fresh home, or report this; {reverted}"),
        }
    }
}

/// A migration that ran in this run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Ran {
    /// Its id.
    pub id: &'static str,
    /// Whether it changed the target.
    pub applied: bool,
}

/// Runs every migration `state` does not record, in order. On error, reverts those that ran.
pub(crate) fn run(
    home: &Path,
    cap: &Capability,
    scope: Scope,
    state: Option<&InstallState>,
    allow_symlinks: bool,
) -> Result<Vec<Ran>, MigrateError> {
    let ctx = Ctx { home, cap, scope, allow_symlinks };
    let mut ran = Vec::new();
    for m in MIGRATIONS {
        if state.is_some_and(|s| s.has_migration(m.id)) {
            continue;
        }
        match (m.apply)(&ctx) {
            Ok(applied) => ran.push(Ran { id: m.id, applied }),
            Err(e) => {
                revert(home, cap, scope, &ran, allow_symlinks);
                return Err(e);
            }
        }
    }
    Ok(ran)
}

/// The migrations of `state`'s list that this run would run (for `--dry-run`).
pub(crate) fn pending(state: Option<&InstallState>) -> Vec<&'static str> {
    MIGRATIONS.iter().filter(|m| !state.is_some_and(|s| s.has_migration(m.id))).map(|m| m.id).collect()
}

/// Reverts the applied migrations of `ran`, last first (best effort: a failure here leaves a
/// layout the next run's migration completes again).
pub(crate) fn revert(home: &Path, cap: &Capability, scope: Scope, ran: &[Ran], allow_symlinks: bool) {
    let ctx = Ctx { home, cap, scope, allow_symlinks };
    for r in ran.iter().rev().filter(|r| r.applied) {
        if let Some(m) = MIGRATIONS.iter().find(|m| m.id == r.id) {
            let _ = (m.revert)(&ctx);
        }
    }
}

const CORE_ID: &str = "core-dir-msd-to-msd-core";
const LEGACY_CORE: &str = "msd";

impl Ctx<'_> {
    fn path(&self, id: &'static str, rel: &RelPath) -> Result<PathBuf, MigrateError> {
        fsx::confined(self.home, rel, self.allow_symlinks).map_err(|source| MigrateError::Confine { id, source })
    }
}

fn mio<'a>(id: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> MigrateError + 'a {
    move |source| MigrateError::Io { id, path: path.display().to_string(), source }
}

/// Reads a manifest of this runtime at `dir`, `None` when there is none or it is not ours.
fn our_manifest(ctx: &Ctx<'_>, dir: &Path) -> Option<FileManifest> {
    let path = dir.join(MANIFEST_NAME);
    let bytes = fsx::read_if_exists(&path).ok()??;
    FileManifest::parse(&path, &bytes).ok().filter(|m| m.runtime == ctx.cap.id)
}

/// Rewrites the manifest in `dir` so that paths under `from/` are under `to/`. Returns whether
/// anything changed.
fn rewrite_manifest(dir: &Path, m: &FileManifest, from: &RelPath, to: &RelPath) -> Result<bool, MigrateError> {
    let mut out = m.clone();
    let mut changed = false;
    for e in &mut out.files {
        if e.path.starts_with(from) {
            let rest = &e.path.as_str()[from.as_str().len()..];
            e.path = RelPath::new(format!("{to}{rest}"))
                .map_err(|err| MigrateError::Unsafe { id: CORE_ID, message: err.to_string() })?;
            changed = true;
        }
    }
    if changed {
        out.files.sort_by(|a, b| a.path.cmp(&b.path));
        let path = dir.join(MANIFEST_NAME);
        fault_point();
        fsx::write_atomic(&path, &out.render(), FileMode::Regular).map_err(mio(CORE_ID, &path))?;
    }
    Ok(changed)
}

fn core_dir_apply(ctx: &Ctx<'_>) -> Result<bool, MigrateError> {
    let legacy = RelPath::new(LEGACY_CORE).expect("static");
    let core = ctx.cap.core_dir(ctx.scope);
    if *core == legacy {
        return Ok(false);
    }
    let old = ctx.path(CORE_ID, &legacy)?;
    let new = ctx.path(CORE_ID, core)?;
    let mut applied = false;
    if fsx::is_dir(&old) && our_manifest(ctx, &old).is_some() {
        if fsx::is_dir(&new) && (our_manifest(ctx, &new).is_some() || !fsx::remove_dir_if_empty(&new)) {
            return Err(MigrateError::BothLayouts {
                id: CORE_ID,
                old: old.display().to_string(),
                new: new.display().to_string(),
            });
        }
        fault_point();
        fsx::rename(&old, &new).map_err(mio(CORE_ID, &old))?;
        applied = true;
    }
    // Step two runs on its own too: a run killed between the rename and the rewrite left a
    // moved tree whose manifest still names the old paths.
    if let Some(m) = our_manifest(ctx, &new) {
        applied |= rewrite_manifest(&new, &m, &legacy, core)?;
    }
    Ok(applied)
}

fn core_dir_revert(ctx: &Ctx<'_>) -> Result<(), MigrateError> {
    let legacy = RelPath::new(LEGACY_CORE).expect("static");
    let core = ctx.cap.core_dir(ctx.scope);
    let old = ctx.path(CORE_ID, &legacy)?;
    let new = ctx.path(CORE_ID, core)?;
    if fsx::exists(&old) || !fsx::is_dir(&new) {
        return Ok(());
    }
    if let Some(m) = our_manifest(ctx, &new) {
        rewrite_manifest(&new, &m, core, &legacy)?;
    }
    fault_point();
    fsx::rename(&new, &old).map_err(mio(CORE_ID, &new))
}
