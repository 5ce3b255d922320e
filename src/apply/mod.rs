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
//! written -> stage its transaction ([`write::prepare`]: nothing visible changes) -> and, once
//! every target is staged, commit each ([`txn::Prepared::commit`]) -> unlock. Nothing visible
//! is written for any target until every target has been planned and staged; a failure before
//! the commits discards the staged trees and reverts the migrations of that run. The next runtime
//! is emitted while one is staged, so a run holds about one emission's bytes at a time.
//!
//! A re-run whose inputs and installed files are as the last run left them takes the no-change
//! fast path first ([`fast`]): the same checks, lock and recovery, then every recorded stat, the
//! settings and the state, without emission or reading the files.

pub(crate) mod fast;
mod jsonw;
pub(crate) mod migrate;
pub mod plan;
pub(crate) mod record;
pub(crate) mod state;
pub(crate) mod surfaces;
pub mod txn;
pub mod write;

mod install;
mod recover;
mod settings_plan;
pub(crate) mod survey;
mod take;
mod uninstall;
mod verify;

pub use install::{forget_version, install};
pub use recover::recover;
pub use take::remove_created_parents;
pub(crate) use uninstall::stage_removal;
pub use uninstall::{UninstallReport, uninstall};
pub(crate) use verify::verify_surveyed;
pub use verify::{VerifyReport, verify};

use std::path::{Path, PathBuf};

use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

use crate::apply::plan::{Plan, PlanError};
use crate::apply::txn::Recovery;
use crate::apply::write::{WriteError, WriteReport};
use crate::pipeline::PipelineError;
use crate::pipeline::guard::GuardReport;
use crate::pipeline::target::Target;

/// Any error of installing, uninstalling, verifying or recovering a target.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// Emitting what to install failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// Planning failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Locking, recovery, migrations, settings surfaces.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// A run over several targets failed at one after others were installed: those stay
    /// installed (each target is its own transaction), the failed one was rolled back, the rest
    /// were not attempted.
    #[error(
        "{failed}: {source}\ninstalled by this run (kept): {}\nnot installed: {}",
        list(installed),
        list(not_installed)
    )]
    Partial {
        /// Targets installed before the failure (`runtime (scope)`).
        installed: Vec<String>,
        /// The target that failed (rolled back).
        failed: String,
        /// Targets never attempted, the failed one first.
        not_installed: Vec<String>,
        /// The failure.
        source: Box<ApplyError>,
    },
}

impl From<survey::SurveyError> for ApplyError {
    fn from(e: survey::SurveyError) -> Self {
        match e {
            survey::SurveyError::Io(e) => PlanError::Io(e).into(),
            survey::SurveyError::Record(e) => PlanError::Record(e).into(),
            survey::SurveyError::Confine(e) => LifecycleError::Confine(e).into(),
            survey::SurveyError::Lifecycle(e) => e.into(),
        }
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() { "none".into() } else { v.join(", ") }
}

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
    Settings(#[from] surfaces::SettingsError),
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
            LifecycleError::Locked(fsx::LockError::Busy { .. }) => "wait for the other run to finish and run again (a killed run releases its lock by itself)".into(),
            LifecycleError::Locked(fsx::LockError::Io { lock, source, .. }) => lock_io_hint(lock, source),
            LifecycleError::Missing { .. } => "create the parent directory first, or fix the path given by --config-dir or the environment".into(),
            LifecycleError::ReadOnly { .. } => "make the target writable (permissions, immutable flag, read-only mount) and run again; nothing was written".into(),
            LifecycleError::Settings(_) => "fix the file's syntax, or what the error names when the syntax is fine (or move the file aside), and run again; it was left untouched and nothing was written".into(),
            LifecycleError::State(_) => "the install state is damaged; move it aside and run again".into(),
            LifecycleError::Migrate(m) => m.hint(),
            LifecycleError::Txn(t) => t.hint(),
            LifecycleError::Confine(c) => c.hint(),
            LifecycleError::Io { .. } => "check that the target exists and is writable".into(),
        }
    }
}

/// What to do when the lock file cannot be made: said after what the io error was, since no
/// other run is involved and waiting changes nothing.
fn lock_io_hint(lock: &Path, e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    let dir = lock.parent().unwrap_or(lock).display();
    let what = match e.kind() {
        K::StorageFull | K::QuotaExceeded => "the disk is full (or over quota): free some space",
        K::ReadOnlyFilesystem => "the filesystem is mounted read-only: remount it writable or choose another target",
        K::PermissionDenied => "this user may not write there: fix the permissions of the target",
        K::NotADirectory | K::AlreadyExists | K::IsADirectory => {
            "something that is not msd-install's is in the way of its work directory: move it aside"
        }
        _ => "check the filesystem of the target (space, mount, permissions)",
    };
    format!("{what}, then run again; msd-install keeps its lock in {dir}; this run installed nothing")
}

pub(crate) fn lio(path: &Path) -> impl FnOnce(std::io::Error) -> LifecycleError + '_ {
    move |source| LifecycleError::Io { path: path.display().to_string(), source }
}

/// Options of an install run.
#[derive(Clone)]
pub struct InstallOptions<'a> {
    /// Scope.
    pub scope: Scope,
    /// `--config-dir`.
    pub config_dir: Option<&'a Path>,
    /// `--allow-symlinks`.
    pub allow_symlinks: bool,
    /// `--adopt`: files at our paths that no manifest lists are backed up and replaced (without
    /// it they are the user's and the run is refused).
    pub adopt: bool,
    /// `--dry-run`: plan only; no lock, no recovery, no migration, no write.
    pub dry_run: bool,
    /// `--portable-hooks` and `--force-statusline`.
    pub hooks: surfaces::HookMode,
    /// Where the swap of each target reports its progress.
    pub progress: &'a dyn Progress,
    /// The profile the content was selected for, recorded in each target's install state
    /// (`None` keeps what the state has).
    pub profile: Option<&'a str>,
    /// The identity of the run's content and manifests ([`fast::inputs`]); `None` turns the
    /// no-change fast path off.
    pub inputs: Option<&'a str>,
    /// A transaction of another home to commit as one with this install's (`migrate`: the
    /// removal of the old runtime's install); the install then has one target and no fast path.
    pub linked: Option<&'a Linked>,
}

/// A staged transaction of another home that an install commits together with its own
/// ([`txn::commit_linked`], the install's half first): both are carried out, or neither.
pub struct Linked {
    prepared: std::sync::Mutex<Option<txn::Prepared>>,
    /// The home it is staged in.
    home: PathBuf,
}

impl Linked {
    pub(crate) fn new(prepared: txn::Prepared) -> Linked {
        let home = prepared.home().to_path_buf();
        Linked { prepared: std::sync::Mutex::new(Some(prepared)), home }
    }

    /// The staged transaction, once.
    pub(crate) fn take(&self) -> Option<txn::Prepared> {
        self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }

    /// The home of the staged transaction, which the install's home names until the pair is
    /// done ([`txn::Area::note_partner`]).
    pub(crate) fn home(&self) -> &Path {
        &self.home
    }
}

/// Where a run reports progress: the CLI draws bars on a terminal; tests and scripts see nothing.
pub trait Progress: Sync {
    /// A progress sink for one target's swap, labelled `label`; dropped when the swap ends.
    fn target(&self, label: &str) -> Box<dyn txn::Progress + '_>;
}

/// A run that reports no progress.
pub struct Silent;

impl Progress for Silent {
    fn target(&self, _label: &str) -> Box<dyn txn::Progress + '_> {
        Box::new(txn::NoProgress)
    }
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
    pub compose: Vec<crate::pipeline::fit::FileCompose>,
    /// Whether the no-change fast path answered for it ([`fast`]).
    pub fast: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock file that cannot be made says what went wrong, never "wait for the other run".
    #[test]
    fn a_lock_io_error_is_not_told_to_wait() {
        use std::io::{Error, ErrorKind};
        let home = PathBuf::from("/h");
        for (kind, says) in [
            (ErrorKind::StorageFull, "the disk is full"),
            (ErrorKind::ReadOnlyFilesystem, "mounted read-only"),
            (ErrorKind::PermissionDenied, "permissions"),
            (ErrorKind::NotADirectory, "in the way"),
        ] {
            let e = LifecycleError::Locked(fsx::LockError::Io {
                home: home.clone(),
                lock: home.join(".msd-install/lock"),
                source: Error::from(kind),
            });
            let hint = e.hint();
            assert!(hint.contains(says) && !hint.contains("wait"), "{kind:?}: {hint}");
            assert!(e.to_string().contains("no other run holds it"), "{e}");
        }
        let busy = LifecycleError::Locked(fsx::LockError::Busy { home: home.clone(), lock: home.join("l") });
        assert!(busy.hint().contains("wait for the other run"));
    }
}
