//! msd_run's errors and exit codes: one place maps every failure to exactly one code, and
//! renders it as `error:` / detail / `hint:` on stderr. The table is `msd_run --help`'s
//! [`EXIT_CODES`], and a test holds the two equal.
//!
//! Resolver failures carry what execute-plan must show when it halts: the task id, the tracker
//! prefix, the full tracker id and the resolver's raw error, verbatim.

use std::process::ExitCode;

use crate::project::ProjectError;

/// Exit codes of msd_run. Each means one thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RunExit {
    /// Success.
    Ok = 0,
    /// `config-get`: the key has no value and no `--default` was given (like `git config`).
    Unset = 1,
    /// Bad command line (unknown query, workflow, key or agent, a flag missing its value, a bad
    /// phase, a value the key does not allow).
    Usage = 2,
    /// The installed msd-core tree is missing or damaged (reinstall).
    Core = 3,
    /// A project file is invalid (`.planning/config.json`, a PLAN.md task), or there is no
    /// `.planning/` where one is needed, or a project path leads out of the project through a
    /// symlink or is not a regular file (msd_run neither follows nor opens it).
    Project = 4,
    /// A file could not be read or written.
    Io = 5,
    /// A task-content resolver failed: it could not start, or exited non-zero.
    ResolverFailed = 6,
    /// A task-content resolver did not answer within its `timeout_ms`.
    ResolverTimeout = 7,
    /// A task-content resolver answered something other than the reply JSON.
    ResolverMalformed = 8,
    /// An answer over the spill threshold could not be written to its spill file.
    Spill = 9,
    /// `query prompt-budget`: no prompt fits the budget (both files are written, the prompt empty).
    NoFit = 10,
}

impl RunExit {
    /// Every code, in order (the `--help` table lists each).
    pub const ALL: [RunExit; 11] = [
        RunExit::Ok,
        RunExit::Unset,
        RunExit::Usage,
        RunExit::Core,
        RunExit::Project,
        RunExit::Io,
        RunExit::ResolverFailed,
        RunExit::ResolverTimeout,
        RunExit::ResolverMalformed,
        RunExit::Spill,
        RunExit::NoFit,
    ];
}

/// The exit-code table of `msd_run --help`.
pub(crate) const EXIT_CODES: &str = "Exit codes (each means one thing, for every subcommand):
  0  success
  1  config-get: the key is not set and no --default was given
  2  usage error (unknown query, workflow, key or agent; a flag without its value; a bad phase
     number or budget; a value the key does not allow; a bad MSD_RUN_SPILL_BYTES)
  3  the installed msd-core tree is missing or damaged (reinstall with msd-install)
  4  a project file is invalid (.planning/config.json, a PLAN.md task), or no .planning/ here,
     or a project path is a symlink out of the project or a FIFO or device (never followed)
  5  a file could not be read or written (prompt-budget's input and output files included)
  6  a task-content resolver failed (could not start, or exited non-zero)
  7  a task-content resolver timed out
  8  a task-content resolver's reply is not the reply JSON
  9  an answer too long for stdout could not be written to its @file: spill file
 10  query prompt-budget: no prompt fits the budget (the prompt file is written empty)
  Compatibility: the reference's prompt-budget exited 1 for usage or an unreadable file and 2
  when nothing fits; msd_run uses 2, 5 and 10 for those, as for every other subcommand.
  `hook` speaks the runtime's hook protocol instead: 0 allow, 2 block (reason on stderr).

Answers longer than MSD_RUN_SPILL_BYTES are not printed: msd_run writes them to a private file
and prints one line, @file:<absolute path>; read that file for the answer.

Environment:
  MSD_CORE_DIR         the installed msd-core tree (same as --core; default: the parent of the
                       directory holding msd_run, i.e. <core>/bin/msd_run -> <core>)
  MSD_RUN_SPILL_BYTES  spill answers longer than this many bytes (default 51200; 0 spills every
                       answer); spill files live in $TMPDIR/msd_run-<uid>/ for a day";

impl From<RunExit> for ExitCode {
    fn from(e: RunExit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Which resolver, for which task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolverContext {
    /// The task's id in PLAN.md.
    pub task_id: String,
    /// The tracker prefix (before the first `:` of `tracker-id`).
    pub tracker: String,
    /// The whole `tracker-id`.
    pub tracker_id: String,
}

impl std::fmt::Display for ResolverContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "task {}: tracker `{}` ({})", self.task_id, self.tracker, self.tracker_id)
    }
}

/// How a resolver failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolverFailure {
    /// It could not start or exited non-zero.
    Failed {
        /// Exit status, or why it could not start.
        status: String,
    },
    /// It did not answer within its timeout and was killed.
    Timeout {
        /// The declared timeout.
        timeout_ms: u64,
    },
    /// Its stdout is not the reply JSON.
    Malformed {
        /// The parse error.
        error: String,
        /// Its stdout, verbatim (cut at 4,000 bytes).
        stdout: String,
    },
}

/// A resolver failure with what the halting workflow must show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{ctx}: {}", match failure {
    ResolverFailure::Failed { status } => format!("the resolver failed: {status}"),
    ResolverFailure::Timeout { timeout_ms } => format!("the resolver did not answer within {timeout_ms} ms and was killed"),
    ResolverFailure::Malformed { error, .. } => format!("the resolver's reply is malformed: {error}"),
})]
pub struct ResolverError {
    /// Which task and tracker.
    pub ctx: ResolverContext,
    /// What happened.
    pub failure: ResolverFailure,
    /// The resolver's stderr, verbatim.
    pub stderr: String,
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
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A task-content resolver failed, timed out or answered garbage.
    #[error("{0}")]
    Resolver(Box<ResolverError>),
    /// An answer over the spill threshold could not be written to its spill file.
    #[error("cannot spill the answer to {path}: {reason}")]
    Spill {
        /// The spill file.
        path: String,
        /// Why not.
        reason: String,
    },
    /// `query prompt-budget`: not even the minimum fits.
    #[error("no review prompt fits {budget} tokens (effective {effective}; the smallest prompt needs {needed})")]
    NoFit {
        /// The budget asked for.
        budget: i64,
        /// The budget less the safety margin.
        effective: i64,
        /// What the minimum prompt needs.
        needed: u64,
    },
}

impl RunError {
    /// The exit code.
    pub fn exit(&self) -> RunExit {
        match self {
            RunError::Unset { .. } => RunExit::Unset,
            RunError::Usage { .. } => RunExit::Usage,
            RunError::Core { .. } => RunExit::Core,
            RunError::Project(_) => RunExit::Project,
            RunError::Io { .. } => RunExit::Io,
            RunError::Resolver(r) => match r.failure {
                ResolverFailure::Failed { .. } => RunExit::ResolverFailed,
                ResolverFailure::Timeout { .. } => RunExit::ResolverTimeout,
                ResolverFailure::Malformed { .. } => RunExit::ResolverMalformed,
            },
            RunError::Spill { .. } => RunExit::Spill,
            RunError::NoFit { .. } => RunExit::NoFit,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            RunError::Unset { hint, .. } | RunError::Usage { hint, .. } | RunError::Core { hint, .. } => hint.clone(),
            RunError::Project(p) => p.hint.clone(),
            RunError::Io { .. } => "check that the file exists and is readable and writable".into(),
            RunError::Spill { .. } => format!(
                "the answer was not printed; make the temporary directory (TMPDIR, else /tmp) writable, with a path of letters, digits and / . _ -, or raise {}",
                crate::answer::SPILL_ENV
            ),
            RunError::NoFit { .. } => "raise --budget, or review fewer plans at once".into(),
            RunError::Resolver(_) => {
                "halt this task: fix the tracker, the resolver or the task's tracker-id; never fall back to the PLAN.md text".into()
            }
        }
    }

    /// The error for people: `error:` line, raw resolver output, `hint:` line.
    pub fn render(&self) -> String {
        let mut s = format!("error: {self}\n");
        let block = |s: &mut String, label: &str, text: &str| {
            s.push_str(&format!("{label}:\n"));
            if text.is_empty() {
                s.push_str("(empty)\n");
            } else {
                s.push_str(text);
                if !text.ends_with('\n') {
                    s.push('\n');
                }
            }
        };
        if let RunError::Resolver(r) = self {
            if let ResolverFailure::Malformed { stdout, .. } = &r.failure {
                block(&mut s, "resolver stdout", stdout);
            }
            block(&mut s, "resolver stderr", &r.stderr);
        }
        s.push_str(&format!("hint: {}", self.hint()));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_is_in_all_and_in_the_help_table() {
        // A new variant fails to compile here until it is listed.
        let listed = |c: RunExit| match c {
            RunExit::Ok
            | RunExit::Unset
            | RunExit::Usage
            | RunExit::Core
            | RunExit::Project
            | RunExit::Io
            | RunExit::ResolverFailed
            | RunExit::ResolverTimeout
            | RunExit::ResolverMalformed
            | RunExit::Spill
            | RunExit::NoFit => RunExit::ALL.contains(&c),
        };
        for (i, c) in RunExit::ALL.into_iter().enumerate() {
            assert!(listed(c));
            assert_eq!(c as usize, i, "codes are dense and in order");
            assert!(EXIT_CODES.contains(&format!("\n{:>3}  ", c as u8)), "the table lacks {c:?}");
        }
    }
}
