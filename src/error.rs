//! The library's top-level error, its exit codes and its rendering: one place.
//!
//! Every stage has its own `thiserror` enum that carries the path (and line:col where there is
//! one); this module wraps them, maps each to exactly one exit code, and renders `error:` /
//! `hint:` lines for people or one JSON object for scripts.

use std::process::ExitCode;

use crate::attribution::AttributionError;
use crate::compose::fit::FitError;
use crate::convert::ConvertError;
use crate::fsx;
use crate::generated::{self, GenError};
use crate::gitx::GitError;
use crate::guard::GuardError;
use crate::lifecycle::LifecycleError;
use crate::load::{ContentError, LoadError};
use crate::plan::PlanError;
use crate::synth::{HelperError, SynthError};
use crate::target::TargetError;
use crate::write::WriteError;

/// Exit codes. Each means one thing; `--help` documents them (`cli::AFTER_HELP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success.
    Ok = 0,
    /// A check ran and found problems (verify drift, stale generated file, violations).
    CheckFailed = 1,
    /// Bad command-line usage.
    Usage = 2,
    /// Invalid input: a manifest, content file, marker or cap violation. Nothing was written.
    Invalid = 3,
    /// A filesystem error (unreadable, read-only, missing target, symlink refused).
    Io = 4,
    /// Another msd-install run holds the target's lock.
    Locked = 5,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Any error of the library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Loading content or manifests failed.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A content file is invalid.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// The target cannot be resolved.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// Conversion failed.
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// Caps were violated.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// Planning failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Locking, recovery, migrations, settings surfaces.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// A runtime id that no manifest defines.
    #[error("unknown runtime `{given}`")]
    UnknownRuntime {
        /// What was asked for.
        given: String,
        /// The valid ids.
        valid: Vec<String>,
    },
    /// Bad usage that clap cannot see.
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// A plain io error with context.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// A check found problems (already reported).
    #[error("{0}")]
    CheckFailed(String),
    /// A generated file or its sources failed (`msd-install gen`).
    #[error(transparent)]
    Gen(#[from] GenError),
    /// The msd_run binary to install is missing.
    #[error(transparent)]
    Helper(#[from] HelperError),
    /// Git could not answer a base-revision check.
    #[error(transparent)]
    Git(#[from] GitError),
    /// Emitted attribution could not run.
    #[error(transparent)]
    Attribution(#[from] AttributionError),
    /// An emitted file cannot be composed to fit its cap (boxed: it names much).
    #[error(transparent)]
    Fit(Box<FitError>),
}

impl From<FitError> for Error {
    fn from(e: FitError) -> Error {
        Error::Fit(Box::new(e))
    }
}

impl From<SynthError> for Error {
    fn from(e: SynthError) -> Error {
        match e {
            SynthError::Helper(h) => Error::Helper(h),
            SynthError::Convert(c) => Error::Convert(c),
        }
    }
}

impl Error {
    /// The exit code.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Load(LoadError::Io { .. }) => Exit::Io,
            Error::Load(_) | Error::Content(_) | Error::Convert(_) | Error::Guard(_) => Exit::Invalid,
            Error::Target(TargetError::NotUtf8(_)) => Exit::Io,
            Error::Target(_) | Error::UnknownRuntime { .. } | Error::Usage { .. } => Exit::Usage,
            Error::Plan(PlanError::Record(_)) => Exit::Invalid,
            Error::Plan(_) | Error::Write(_) | Error::Io { .. } => Exit::Io,
            Error::CheckFailed(_) => Exit::CheckFailed,
            Error::Gen(g) if g.reason == generated::Reason::FailWriteError => Exit::Io,
            Error::Gen(_) => Exit::CheckFailed,
            Error::Helper(_) => Exit::Io,
            Error::Git(GitError::Failed { .. }) => Exit::Io,
            Error::Git(_) => Exit::Usage,
            Error::Lifecycle(LifecycleError::Locked(fsx::LockError::Busy { .. })) => Exit::Locked,
            Error::Lifecycle(LifecycleError::Settings(_) | LifecycleError::State(_)) => Exit::Invalid,
            Error::Lifecycle(_) => Exit::Io,
            Error::Fit(_) => Exit::Invalid,
            Error::Attribution(e) => e.exit(),
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Load(e) => e.hint(),
            Error::Content(e) => Some(e.hint.clone()),
            Error::Fit(e) => Some(e.hint()),
            Error::Guard(_) => Some("shrink the source (move text into steps or detail parts), or adjust the cap in the manifest or tiers.json".into()),
            Error::UnknownRuntime { valid, .. } => Some(format!("valid runtimes: {}", valid.join(", "))),
            Error::Usage { hint, .. } => Some(hint.clone()),
            Error::Plan(PlanError::Confine(_)) | Error::Write(WriteError::Confine(_)) => {
                Some("pass --allow-symlinks if the link is intended".into())
            }
            Error::Plan(PlanError::Record(_)) => Some("the install manifest is damaged; move it aside and run again (files are then treated as unmanaged and backed up before they are replaced)".into()),
            Error::Write(WriteError::Txn(t)) => Some(crate::lifecycle::txn_hint(t)),
            Error::Write(_) | Error::Io { .. } => Some("check that the target exists and is writable".into()),
            Error::Gen(g) => Some(g.hint.clone()),
            Error::Helper(h) => Some(h.hint()),
            Error::Git(e) => Some(e.hint()),
            Error::Lifecycle(e) => Some(e.hint()),
            Error::Attribution(e) => e.hint(),
            _ => None,
        }
    }

    /// Renders the error for people.
    pub fn render(&self) -> String {
        let mut s = format!("error: {self}");
        if let Some(h) = self.hint() {
            s.push_str("\nhint: ");
            s.push_str(&h);
        }
        s
    }

    /// Renders the error as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "ok": false,
            "exit_code": self.exit() as u8,
            "error": self.to_string(),
            "hint": self.hint(),
        });
        if let Error::Gen(g) = self {
            v["reason"] = serde_json::json!(g.reason);
        }
        v
    }
}
