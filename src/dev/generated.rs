//! The one `--check` / `--write` idiom for every generated file.
//!
//! Render in memory, normalise newlines, compare with what is committed. `--check` prints a
//! unified diff of every stale file and the exact command that fixes it, and fails; `--write`
//! writes only the files that differ (atomically); without either, the fresh text is printed.
//!
//! Two entries: [`apply`] over a list of files (the golden lists; it prints nothing: the CLI
//! shows what it returns), and [`Output`] for one file
//! whose failures carry a typed [`Reason`] (missing, not JSON, wrong shape, stale, and the
//! reasons of its sources), so tests and scripts match reasons, never prose. [`Output::compare`]
//! also serves the install-time check of a committed file held in memory.

use std::path::{Path, PathBuf};

use msd_core::fs::fsx::{self, FileMode};
use similar::TextDiff;

use crate::pipeline::freshness::normalise;
pub(crate) use crate::pipeline::freshness::{GenError, Output, Reason, fix_command};

/// What to do with generated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Compare and fail on drift.
    Check,
    /// Write what differs.
    Write,
    /// Print the fresh text.
    Print,
}

/// One generated file: where it lives and what it should hold.
#[derive(Debug, Clone)]
pub(crate) struct Generated {
    /// Path (relative to the root the command runs in, for messages).
    pub path: PathBuf,
    /// Fresh contents.
    pub fresh: String,
}

/// What a run found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Outcome {
    /// Files that were up to date.
    pub current: Vec<PathBuf>,
    /// Files that were stale (check) or rewritten (write).
    pub stale: Vec<PathBuf>,
}

/// What [`apply`] produced: the outcome, and the text to show (the fresh files for
/// [`Mode::Print`], the unified diffs of stale files for [`Mode::Check`]). The caller prints it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Applied {
    /// Which files were current and which stale.
    pub outcome: Outcome,
    /// What to show.
    pub text: String,
}

impl Applied {
    /// Whether a check found stale files.
    pub(crate) fn failed(&self, mode: Mode) -> bool {
        mode == Mode::Check && !self.outcome.stale.is_empty()
    }
}

/// Applies `mode` to `files` under `root`. Nothing is printed: the caller shows
/// [`Applied::text`] and fails a check that found stale files.
pub(crate) fn apply(root: &Path, files: &[Generated], mode: Mode) -> Result<Applied, GenError> {
    let mut applied = Applied::default();
    let io = |full: &Path, what: &str, e: std::io::Error| GenError {
        reason: Reason::FailWriteError,
        path: full.display().to_string(),
        line: None,
        message: format!("cannot {what} it: {e}"),
        detail: None,
        hint: "check that the directory exists and is writable".into(),
    };
    if mode == Mode::Print {
        applied.text = files.iter().map(|g| g.fresh.as_str()).collect();
        return Ok(applied);
    }
    for g in files {
        let full = root.join(&g.path);
        let committed = fsx::read_if_exists(&full)
            .map_err(|e| io(&full, "read", e))?
            .map(|b| normalise(&String::from_utf8_lossy(&b)));
        if committed.as_deref() == Some(normalise(&g.fresh).as_str()) {
            applied.outcome.current.push(g.path.clone());
            continue;
        }
        applied.outcome.stale.push(g.path.clone());
        if mode == Mode::Write {
            fsx::write_atomic(&full, g.fresh.as_bytes(), FileMode::Regular).map_err(|e| io(&full, "write", e))?;
        } else {
            {
                let old = committed.unwrap_or_default();
                let name = g.path.display().to_string();
                let diff = TextDiff::from_lines(&old, &g.fresh);
                applied.text.push_str(&format!(
                    "{}",
                    diff.unified_diff()
                        .context_radius(2)
                        .header(&format!("{name} (committed)"), &format!("{name} (fresh)"))
                ));
            }
        }
    }
    Ok(applied)
}
