//! msd_run's errors and exit codes: one place maps every failure to exactly one code and renders
//! it as `error:` / `hint:` on stderr. The table is `msd_run --help`'s [`EXIT_CODES`].

use std::process::ExitCode;

/// Exit codes of msd_run. Each means one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RunExit {
    /// Success.
    Ok = 0,
    /// `config-get`: the key has no value and no `--default` was given (like `git config`).
    Unset = 1,
    /// Bad command line (unknown key, invalid value, unknown agent).
    Usage = 2,
    /// The installed msd-core tree is missing or damaged (reinstall).
    Core = 3,
    /// A project file is invalid (`.planning/config.json`), or there is no `.planning/`.
    Project = 4,
    /// A file could not be read or written.
    Io = 5,
}

/// The exit-code table of `msd_run --help`.
pub const EXIT_CODES: &str = "Exit codes:
  0  success
  1  config-get: the key is not set and no --default was given
  2  usage error (unknown key or agent, a value the key does not allow)
  3  the installed msd-core tree is missing or damaged (reinstall with msd-install)
  4  a project file is invalid (.planning/config.json), or there is no .planning/ here
  5  a file could not be read or written

Environment:
  MSD_CORE_DIR  the installed msd-core tree (same as --core; default: the parent of the
                directory holding msd_run, i.e. <core>/bin/msd_run -> <core>)";

impl From<RunExit> for ExitCode {
    fn from(e: RunExit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Every error of msd_run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The key is not set.
    #[error("{message}")]
    Unset {
        /// What is unset.
        message: String,
        /// What to do.
        hint: String,
    },
    /// Bad command line.
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// The installed tree is missing or damaged.
    #[error("{path}: {message}")]
    Core {
        /// The file or directory.
        path: String,
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// A project file is invalid.
    #[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Project {
        /// The file, relative to the project.
        path: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl RunError {
    /// The exit code.
    pub fn exit(&self) -> RunExit {
        match self {
            RunError::Unset { .. } => RunExit::Unset,
            RunError::Usage { .. } => RunExit::Usage,
            RunError::Core { .. } => RunExit::Core,
            RunError::Project { .. } => RunExit::Project,
            RunError::Io { .. } => RunExit::Io,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            RunError::Unset { hint, .. }
            | RunError::Usage { hint, .. }
            | RunError::Core { hint, .. }
            | RunError::Project { hint, .. } => hint.clone(),
            RunError::Io { .. } => "check that the file exists and is readable and writable".into(),
        }
    }

    /// The error for people: `error:` and `hint:` lines.
    pub fn render(&self) -> String {
        format!("error: {self}\nhint: {}", self.hint())
    }
}
