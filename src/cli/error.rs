//! The library's top-level error, its exit codes and its rendering: one place.
//!
//! Every stage has its own `thiserror` enum that carries the path (and line:col where there is
//! one): [`PipelineError`], [`ApplyError`], and the maintainers' tools' own; this module, the only
//! place that combines them, wraps them (apply's whole, never its variants copied), maps each to
//! exactly one exit code, and renders the cause chain for people (`error:` / `  Caused by:` /
//! `hint:`) or one JSON object for scripts (the chain as an array).

use std::process::ExitCode;

use msd_core::fs::fsx;

use crate::apply::plan::PlanError;
use crate::apply::txn::TxnError;
use crate::apply::write::WriteError;
use crate::apply::{ApplyError, LifecycleError};
use crate::cli::project::ProjectError;
use crate::cli::release::SelfUpdateError;
use crate::dev::attribution::AttributionError;
use crate::dev::generated::{self, GenError};
use crate::dev::gitx::GitError;
use crate::pipeline::PipelineError;
use crate::pipeline::convert::ConvertError;
use crate::pipeline::fit::FitError;
use crate::pipeline::guard::GuardError;
use crate::pipeline::load::{ContentError, LoadError};
use crate::pipeline::synth::HelperError;
use crate::pipeline::target::TargetError;

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
    /// This msd-install's version is not one the target accepts: outside the project's msd.toml
    /// `version`, or older than the msd-install that wrote an install (a downgrade, refused
    /// without `--allow-downgrade`). Nothing was written.
    Version = 6,
    /// `self-update` could not read its release channel (offline, a bad URL).
    Channel = 7,
    /// `self-update` found no usable release (no archive for this platform, a bad checksum, a
    /// damaged archive); nothing was replaced.
    Release = 8,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// Any error of msd-install.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// An install, uninstall, verify or recovery failed, or a stage before them (loading,
    /// composing, converting, guarding, planning, writing, locking): apply's own error, wrapped
    /// whole (a run over several runtimes that failed part-way is its `Partial`).
    #[error(transparent)]
    Apply(#[from] ApplyError),
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
    /// Git could not answer a base-revision check.
    #[error(transparent)]
    Git(#[from] GitError),
    /// Emitted attribution could not run.
    #[error(transparent)]
    Attribution(#[from] AttributionError),
    /// The project's msd.toml is malformed, missing, or does not accept this version.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// `self-update` failed.
    #[error(transparent)]
    SelfUpdate(#[from] SelfUpdateError),
    /// An install written by a newer msd-install, which this one would downgrade.
    #[error(
        "{target} was installed by msd-install {installed}, newer than this one ({binary}); installing would downgrade it, so nothing was written"
    )]
    Downgrade {
        /// `claude (global)`.
        target: String,
        /// The version that wrote the install.
        installed: String,
        /// This binary's version.
        binary: String,
    },
}

/// Each stage error converts through its own stage's error into [`ApplyError`].
macro_rules! through_apply {
    ($($t:ty => $via:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::Apply(ApplyError::from(<$via>::from(e)))
            }
        }
    )*};
}
through_apply!(
    PipelineError => PipelineError, PlanError => PlanError, WriteError => WriteError,
    LifecycleError => LifecycleError,
    LoadError => PipelineError, ContentError => PipelineError, TargetError => PipelineError,
    ConvertError => PipelineError, GuardError => PipelineError, FitError => PipelineError,
    HelperError => PipelineError
);

fn pipeline_exit(e: &PipelineError) -> Exit {
    match e {
        PipelineError::Load(LoadError::Io { .. }) => Exit::Io,
        PipelineError::Load(_)
        | PipelineError::Content(_)
        | PipelineError::Convert(_)
        | PipelineError::Guard(_)
        | PipelineError::Fit(_) => Exit::Invalid,
        PipelineError::Target(TargetError::NotUtf8(_)) | PipelineError::Helper(_) => Exit::Io,
        PipelineError::Target(_)
        | PipelineError::UnknownRuntime { .. }
        | PipelineError::Profile(_)
        | PipelineError::NoPrimary => Exit::Usage,
    }
}

fn pipeline_hint(e: &PipelineError) -> Option<String> {
    match e {
        PipelineError::Load(e) => e.hint(),
        PipelineError::Content(e) => Some(e.hint.clone()),
        PipelineError::Fit(e) => Some(e.hint()),
        PipelineError::Guard(_) => Some(
            "shrink the source (move text into steps or detail parts), or adjust the cap in the manifest or tiers.json"
                .into(),
        ),
        PipelineError::UnknownRuntime { given, valid } => Some(match closest(given, valid) {
            Some(id) => format!("did you mean `{id}`? valid runtimes: {}", valid.join(", ")),
            None => format!("valid runtimes: {}", valid.join(", ")),
        }),
        PipelineError::Profile(p) => Some(format!("profiles: {}", p.valid.join(", "))),
        PipelineError::NoPrimary => Some("name one with --runtime (see `msd-install runtimes`)".into()),
        PipelineError::Helper(h) => Some(h.hint()),
        PipelineError::Target(t) => t.hint(),
        PipelineError::Convert(_) => None,
    }
}

/// The valid id nearest to `given` (Jaro-Winkler, as clap suggests subcommands), when close
/// enough to be a typo; a prefix of an id counts too (`-r claud`).
fn closest<'a>(given: &str, valid: &'a [String]) -> Option<&'a str> {
    let given = given.to_ascii_lowercase();
    valid
        .iter()
        .map(|v| {
            let score = strsim::jaro_winkler(&given, v);
            (if v.starts_with(&given) && !given.is_empty() { score.max(0.9) } else { score }, v)
        })
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| v.as_str())
}

fn attribution_exit(e: &AttributionError) -> Exit {
    match e {
        AttributionError::Git(GitError::Failed { .. })
        | AttributionError::Io { .. }
        | AttributionError::BaseBinary { .. } => Exit::Io,
        AttributionError::Git(_) | AttributionError::NoDefaultBase => Exit::Usage,
        AttributionError::Ack(_) => Exit::Invalid,
        AttributionError::Side { source, .. } => pipeline_exit(source),
    }
}

fn attribution_hint(e: &AttributionError) -> Option<String> {
    Some(match e {
        AttributionError::Git(e) => e.hint(),
        AttributionError::NoDefaultBase => "pass --base REV (a commit, branch or tag)".into(),
        AttributionError::Ack(e) => e.hint.clone(),
        AttributionError::Io { .. } => "check that the repository's content/ and runtimes/ are readable".into(),
        AttributionError::BaseBinary { .. } => {
            "the base binary must be an msd-install build with the `inventory` subcommand; build it from the base revision, or drop --base-binary".into()
        }
        AttributionError::Side { source, side } => {
            let inner = pipeline_hint(source);
            if side.starts_with("base") {
                format!("{}the base must install cleanly: pick another --base", inner.map(|h| format!("{h}; ")).unwrap_or_default())
            } else {
                return inner;
            }
        }
    })
}

/// The exit code of apply's error (and of every stage under it): one table.
fn apply_exit(e: &ApplyError) -> Exit {
    match e {
        ApplyError::Pipeline(e) => pipeline_exit(e),
        ApplyError::Plan(PlanError::Record(_)) => Exit::Invalid,
        ApplyError::Write(WriteError::Txn(TxnError::BadJournal { .. })) => Exit::Invalid,
        ApplyError::Plan(_) | ApplyError::Write(_) => Exit::Io,
        ApplyError::Lifecycle(LifecycleError::Locked(fsx::LockError::Busy { .. })) => Exit::Locked,
        ApplyError::Lifecycle(LifecycleError::Settings(_) | LifecycleError::State(_)) => Exit::Invalid,
        // Damaged state (README: exit 3): an interrupted run's journal that cannot be read.
        ApplyError::Lifecycle(LifecycleError::Txn(TxnError::BadJournal { .. })) => Exit::Invalid,
        ApplyError::Lifecycle(_) => Exit::Io,
        // The run failed as the runtime that failed did.
        ApplyError::Partial { source, .. } => apply_exit(source),
    }
}

/// What to do about apply's error.
fn apply_hint(e: &ApplyError) -> Option<String> {
    match e {
        ApplyError::Pipeline(e) => pipeline_hint(e),
        ApplyError::Plan(PlanError::Confine(c)) | ApplyError::Write(WriteError::Confine(c)) => Some(c.hint()),
        ApplyError::Plan(PlanError::Record(_)) => Some("the install manifest is damaged; move it aside and run again with --adopt (files it listed are then backed up before they are replaced)".into()),
        ApplyError::Plan(PlanError::Unmanaged { .. }) => Some("move these files aside (they are yours and were not touched), or run again with --adopt to back them up to msd-local-patches/ and replace them".into()),
        ApplyError::Plan(_) => None,
        ApplyError::Write(WriteError::Txn(t)) => Some(t.hint()),
        ApplyError::Write(_) => Some(WRITABLE.into()),
        ApplyError::Lifecycle(e) => Some(e.hint()),
        ApplyError::Partial { failed, installed, .. } => Some(format!(
            "only {failed} was rolled back; {} stay installed; fix the cause and run the same command again",
            if installed.is_empty() { "no other runtime".to_string() } else { installed.join(", ") }
        )),
    }
}

const WRITABLE: &str = "check that the target exists and is writable";

impl Error {
    /// The exit code.
    pub(crate) fn exit(&self) -> Exit {
        match self {
            Error::Apply(e) => apply_exit(e),
            Error::Io { .. } => Exit::Io,
            Error::Usage { .. } => Exit::Usage,
            Error::CheckFailed(_) => Exit::CheckFailed,
            Error::Gen(g) if g.reason == generated::Reason::FailWriteError => Exit::Io,
            Error::Gen(_) => Exit::CheckFailed,
            Error::Git(GitError::Failed { .. }) => Exit::Io,
            Error::Git(_) => Exit::Usage,
            Error::Attribution(e) => attribution_exit(e),
            Error::Project(ProjectError::Invalid { .. }) => Exit::Invalid,
            Error::Project(ProjectError::Version { .. }) => Exit::Version,
            Error::Project(ProjectError::Io { .. }) => Exit::Io,
            Error::Project(
                ProjectError::Missing { .. } | ProjectError::Exists { .. } | ProjectError::Nothing { .. },
            ) => Exit::Usage,
            Error::Downgrade { .. } => Exit::Version,
            Error::SelfUpdate(SelfUpdateError::Unreachable { .. }) => Exit::Channel,
            Error::SelfUpdate(
                SelfUpdateError::NoArchive { .. }
                | SelfUpdateError::Checksum { .. }
                | SelfUpdateError::BadRelease { .. },
            ) => Exit::Release,
            Error::SelfUpdate(SelfUpdateError::Replace { .. } | SelfUpdateError::Reinstall { .. }) => Exit::Io,
            Error::SelfUpdate(SelfUpdateError::OtherChannel { .. }) => Exit::Usage,
        }
    }

    /// What to do about it. Every variant is listed: a new one must decide.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            Error::Apply(e) => apply_hint(e),
            Error::Usage { hint, .. } => Some(hint.clone()),
            Error::Io { .. } => Some(WRITABLE.into()),
            Error::Gen(g) => Some(g.hint.clone()),
            Error::Git(e) => Some(e.hint()),
            Error::Attribution(e) => attribution_hint(e),
            Error::CheckFailed(_) => None,
            Error::Project(e) => Some(e.hint()),
            Error::SelfUpdate(e) => Some(e.hint()),
            Error::Downgrade { installed, binary, .. } => Some(format!(
                "update this msd-install to {installed} or newer (`msd-install self-update`, or the way you installed it), or run again with --allow-downgrade to put {binary} in its place"
            )),
        }
    }

    /// What went wrong, then why, one level of the cause chain each: the error's own message,
    /// then the message of each `source()` below it. A message that ends with its cause's text
    /// (`reading X: permission denied`) is cut before it, so each level says its own part once;
    /// a cause already quoted inside its parent's message adds no level.
    pub(crate) fn chain(&self) -> Vec<String> {
        let mut levels = vec![self.to_string()];
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            let text = e.to_string();
            cause = e.source();
            if text.is_empty() {
                continue;
            }
            let last = levels.last_mut().expect("one level at least");
            if let Some(head) = last.strip_suffix(text.as_str()) {
                let head = head.trim_end_matches(|c: char| c == ':' || c.is_whitespace());
                if !head.is_empty() {
                    // `{path}: {source}` cut to a bare path would not say what went wrong.
                    *last = if head.contains(char::is_whitespace) {
                        head.to_string()
                    } else {
                        format!("cannot use {head}")
                    };
                    levels.push(text);
                }
            } else if !last.contains(text.as_str()) {
                levels.push(text);
            }
        }
        levels
    }

    /// Renders the error for people, as uv does: `error: <what>`, one `  Caused by: <why>` per
    /// level of the cause chain, then `hint: <what to do>`.
    pub(crate) fn render(&self) -> String {
        let mut levels = self.chain().into_iter();
        let mut s = format!("error: {}", levels.next().unwrap_or_default());
        for cause in levels {
            s.push_str("\n  Caused by: ");
            s.push_str(&cause);
        }
        if let Some(h) = self.hint() {
            s.push_str("\nhint: ");
            s.push_str(&h);
        }
        s
    }

    /// Renders the error as JSON: `error` whole as before, `chain` its levels as [`Error::render`]
    /// prints them (what, then each cause).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "ok": false,
            "exit_code": self.exit() as u8,
            "error": self.to_string(),
            "chain": self.chain(),
            "hint": self.hint(),
        });
        if let Error::Apply(ApplyError::Partial { installed, not_installed, .. }) = self {
            v["installed"] = serde_json::json!(installed);
            v["not_installed"] = serde_json::json!(not_installed);
        }
        if let Error::Project(ProjectError::Invalid { path, line, .. }) = self {
            v["file"] = serde_json::json!(path);
            v["line"] = serde_json::json!(line);
        }
        if let Error::Project(ProjectError::Version { required, have, .. }) = self {
            v["required"] = serde_json::json!(required);
            v["version"] = serde_json::json!(have);
        }
        if let Error::Gen(g) = self {
            v["reason"] = serde_json::json!(g.reason);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    fn io(context: &str, cause: &str) -> Error {
        Error::Io { context: context.into(), source: std::io::Error::other(cause.to_string()) }
    }

    #[test]
    fn a_message_that_ends_with_its_cause_is_cut_before_it() {
        let e = io("reading /x/settings.json", "permission denied");
        assert_eq!(e.chain(), ["reading /x/settings.json", "permission denied"]);
        assert_eq!(
            e.render(),
            "error: reading /x/settings.json\n  Caused by: permission denied\nhint: check that the target exists and is writable"
        );
    }

    #[test]
    fn a_message_cut_to_a_bare_path_says_the_path_could_not_be_used() {
        let e = io("/x/settings.json", "expected a file, found a directory: /x/settings.json");
        assert_eq!(e.chain(), ["cannot use /x/settings.json", "expected a file, found a directory: /x/settings.json"]);
    }

    #[test]
    fn a_cause_quoted_inside_its_parent_adds_no_level() {
        // `{context}: {source}` where the context already names the cause in the middle.
        let e = Error::Apply(crate::apply::ApplyError::Partial {
            installed: vec!["claude (global)".into()],
            failed: "codex (global)".into(),
            not_installed: vec!["codex (global)".into()],
            source: Box::new(
                crate::apply::LifecycleError::Io {
                    path: "/h/.codex".into(),
                    source: std::io::Error::other("read-only file system"),
                }
                .into(),
            ),
        });
        let chain = e.chain();
        assert_eq!(chain.len(), 1, "{chain:?}");
        assert!(chain[0].starts_with("codex (global): /h/.codex: read-only file system\n"), "{chain:?}");
    }

    #[test]
    fn an_error_without_a_source_is_one_level() {
        let e = Error::Usage { message: "bad".into(), hint: "do this".into() };
        assert_eq!(e.chain(), ["bad"]);
        assert_eq!(e.render(), "error: bad\nhint: do this");
    }
}
