//! The one `--check` / `--write` idiom for every generated file.
//!
//! Render in memory, normalise newlines, compare with what is committed. `--check` prints a
//! unified diff of every stale file and the exact command that fixes it, and fails; `--write`
//! writes only the files that differ (atomically); without either, the fresh text is printed.
//!
//! Two entries: [`apply`] over a list of files (the golden lists), and [`Output`] for one file
//! whose failures carry a typed [`Reason`] (missing, not JSON, wrong shape, stale, and the
//! reasons of its sources), so tests and scripts match reasons, never prose. [`Output::compare`]
//! also serves the install-time check of a committed file held in memory.

use std::path::{Path, PathBuf};

use serde::Serialize;
use similar::TextDiff;

use crate::error::Error;
use crate::fsx::{self, FileMode};

/// What to do with generated files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Compare and fail on drift.
    Check,
    /// Write what differs.
    Write,
    /// Print the fresh text.
    Print,
}

/// One generated file: where it lives and what it should hold.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Path (relative to the root the command runs in, for messages).
    pub path: PathBuf,
    /// Fresh contents.
    pub fresh: String,
}

/// What a run found.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Outcome {
    /// Files that were up to date.
    pub current: Vec<PathBuf>,
    /// Files that were stale (check) or rewritten (write).
    pub stale: Vec<PathBuf>,
}

fn normalise(s: &str) -> String {
    s.replace("\r\n", "\n")
}

/// Applies `mode` to `files` under `root`. `fix` is the command that regenerates them.
pub fn apply(root: &Path, files: &[Generated], mode: Mode, fix: &str) -> Result<Outcome, Error> {
    let mut outcome = Outcome::default();
    let mut report = String::new();
    for g in files {
        if mode == Mode::Print {
            print!("{}", g.fresh);
            continue;
        }
        let full = root.join(&g.path);
        let committed = fsx::read_if_exists(&full)
            .map_err(|e| Error::Io { context: format!("reading {}", full.display()), source: e })?
            .map(|b| normalise(&String::from_utf8_lossy(&b)));
        if committed.as_deref() == Some(normalise(&g.fresh).as_str()) {
            outcome.current.push(g.path.clone());
            continue;
        }
        outcome.stale.push(g.path.clone());
        match mode {
            Mode::Write => {
                fsx::write_atomic(&full, g.fresh.as_bytes(), FileMode::Regular)
                    .map_err(|e| Error::Io { context: format!("writing {}", full.display()), source: e })?;
            }
            Mode::Check => {
                let old = committed.unwrap_or_default();
                let name = g.path.display().to_string();
                let diff = TextDiff::from_lines(&old, &g.fresh);
                report.push_str(&format!(
                    "{}",
                    diff.unified_diff()
                        .context_radius(2)
                        .header(&format!("{name} (committed)"), &format!("{name} (fresh)"))
                ));
            }
            Mode::Print => unreachable!("handled above"),
        }
    }
    if mode == Mode::Check && !outcome.stale.is_empty() {
        eprint!("{report}");
        return Err(Error::CheckFailed(format!(
            "{} generated file(s) are stale; run `{fix}` and commit the result",
            outcome.stale.len()
        )));
    }
    Ok(outcome)
}

/// Why a generated file or its sources failed. Each generator uses a subset; tests lock them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A section names a steps file that does not exist.
    FailMissingStepFile,
    /// A steps file that no section and no reachable prose names.
    FailOrphanStepFile,
    /// A workflow or command does not parse (markers, frontmatter, argument hint).
    FailSourceParseError,
    /// The section manifest is absent.
    FailManifestMissing,
    /// The section manifest is not JSON.
    FailManifestUnparseable,
    /// The section manifest is JSON of the wrong shape.
    FailManifestMalformedShape,
    /// `CONTEXT.md` is absent.
    FailContextMissing,
    /// `CONTEXT.md` cannot be read (or is not UTF-8).
    FailContextUnreadable,
    /// A predicate id is declared more than once.
    FailDuplicateIds,
    /// A backticked `ID=value` line is malformed.
    FailMalformedPredicates,
    /// The context index is absent.
    FailIndexMissing,
    /// The context index is not JSON of the index shape.
    FailIndexUnparseable,
    /// The committed file differs from a fresh build.
    FailStale,
    /// Writing the file failed.
    FailWriteError,
}

impl Reason {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::FailMissingStepFile => "fail_missing_step_file",
            Reason::FailOrphanStepFile => "fail_orphan_step_file",
            Reason::FailSourceParseError => "fail_source_parse_error",
            Reason::FailManifestMissing => "fail_manifest_missing",
            Reason::FailManifestUnparseable => "fail_manifest_unparseable",
            Reason::FailManifestMalformedShape => "fail_manifest_malformed_shape",
            Reason::FailContextMissing => "fail_context_missing",
            Reason::FailContextUnreadable => "fail_context_unreadable",
            Reason::FailDuplicateIds => "fail_duplicate_ids",
            Reason::FailMalformedPredicates => "fail_malformed_predicates",
            Reason::FailIndexMissing => "fail_index_missing",
            Reason::FailIndexUnparseable => "fail_index_unparseable",
            Reason::FailStale => "fail_stale",
            Reason::FailWriteError => "fail_write_error",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure of a generated file or of the sources it is built from, located.
#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {reason}: {message}{}", line.map(|l| format!(":{l}")).unwrap_or_default(), detail.as_ref().map(|d| format!("\n{d}")).unwrap_or_default())]
pub struct GenError {
    /// Why, stable.
    pub reason: Reason,
    /// The file at fault (display form).
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// Extra lines shown below the message (a diff, a list of duplicates).
    pub detail: Option<String>,
    /// What to do.
    pub hint: String,
}

/// Where a generated file lives and how its failures are named.
#[derive(Debug, Clone)]
pub struct Output {
    /// The file on disk.
    pub path: PathBuf,
    /// The command that rewrites it.
    pub fix: String,
    /// Reason when the file is absent.
    pub missing: Reason,
    /// Reason when it is not JSON.
    pub unparseable: Reason,
    /// Reason when it is JSON of the wrong shape.
    pub malformed_shape: Reason,
}

/// A unified diff from `old` to `new`, labelled.
pub fn diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
    TextDiff::from_lines(old, new).unified_diff().context_radius(2).header(old_label, new_label).to_string()
}

impl Output {
    fn err(&self, reason: Reason, message: impl Into<String>, hint: impl Into<String>) -> GenError {
        GenError {
            reason,
            path: self.path.display().to_string(),
            line: None,
            message: message.into(),
            detail: None,
            hint: hint.into(),
        }
    }

    /// Compares the committed file on disk with `fresh`. `shape` says whether parsed JSON has
    /// the file's shape.
    pub fn check(&self, fresh: &str, shape: impl Fn(&serde_json::Value) -> bool) -> Result<(), GenError> {
        match fsx::read_if_exists(&self.path) {
            Ok(committed) => self.compare(committed.as_deref(), fresh, shape),
            Err(e) => Err(self.err(self.unparseable, format!("cannot read it: {e}"), format!("run `{}`", self.fix))),
        }
    }

    /// Compares `committed` (`None` when absent) with `fresh`.
    pub fn compare(
        &self,
        committed: Option<&[u8]>,
        fresh: &str,
        shape: impl Fn(&serde_json::Value) -> bool,
    ) -> Result<(), GenError> {
        let Some(committed) = committed else {
            return Err(self.err(self.missing, "the generated file is missing", format!("run `{}`", self.fix)));
        };
        let committed = String::from_utf8_lossy(committed);
        let value: serde_json::Value = serde_json::from_str(&committed).map_err(|e| GenError {
            line: Some(e.line()),
            ..self.err(self.unparseable, format!("not valid JSON: {e}"), format!("run `{}`", self.fix))
        })?;
        if !shape(&value) {
            return Err(self.err(
                self.malformed_shape,
                "the file is JSON of the wrong shape",
                format!("run `{}` (it is generated, never edited by hand)", self.fix),
            ));
        }
        let (committed, fresh) = (normalise(&committed), normalise(fresh));
        if committed != fresh {
            return Err(GenError {
                detail: Some(diff(&committed, &fresh, "committed", "fresh")),
                ..self.err(
                    Reason::FailStale,
                    "the committed file differs from a fresh build (diff below)",
                    format!("run `{}` and commit the result", self.fix),
                )
            });
        }
        Ok(())
    }

    /// Writes `fresh` unless the file already holds it. Returns whether it wrote.
    pub fn write(&self, fresh: &str) -> Result<bool, GenError> {
        if let Ok(Some(b)) = fsx::read_if_exists(&self.path)
            && b == fresh.as_bytes()
        {
            return Ok(false);
        }
        fsx::write_atomic(&self.path, fresh.as_bytes(), FileMode::Regular).map_err(|e| {
            self.err(Reason::FailWriteError, format!("cannot write it: {e}"), "check that the directory is writable")
        })?;
        Ok(true)
    }
}

/// `msd-install gen <name> --write`, plus `--content DIR` when a content dir was named.
pub fn fix_command(name: &str, content: Option<&Path>) -> String {
    match content {
        Some(dir) => format!("msd-install gen {name} --write --content {}", dir.display()),
        None => format!("msd-install gen {name} --write"),
    }
}
