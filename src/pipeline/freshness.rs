//! Typed failures of a generated file held by the content (the section manifest, the context
//! index) and the comparison of a committed copy with a fresh build: the install-time check that
//! an installed msd_run never selects with stale data, and what `msd-install gen --check`
//! reports. Each failure carries a stable [`Reason`], so tests and scripts match reasons, never
//! prose.

use std::path::{Path, PathBuf};

use msd_core::fs::fsx::{self, FileMode};
use serde::Serialize;
use similar::TextDiff;

/// Normalises newlines before comparing.
pub(crate) fn normalise(s: &str) -> String {
    s.replace("\r\n", "\n")
}

/// Why a generated file or its sources failed. Each generator uses a subset; tests lock them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)] // the names are the `reason` strings of --json (fail_...)
pub(crate) enum Reason {
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
    pub(crate) fn as_str(self) -> &'static str {
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
pub(crate) struct GenError {
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
pub(crate) struct Output {
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
pub(crate) fn diff(old: &str, new: &str, old_label: &str, new_label: &str) -> String {
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
    pub(crate) fn check(&self, fresh: &str, shape: impl Fn(&serde_json::Value) -> bool) -> Result<(), GenError> {
        match fsx::read_if_exists(&self.path) {
            Ok(committed) => self.compare(committed.as_deref(), fresh, shape),
            Err(e) => Err(self.err(self.unparseable, format!("cannot read it: {e}"), format!("run `{}`", self.fix))),
        }
    }

    /// Compares `committed` (`None` when absent) with `fresh`.
    pub(crate) fn compare(
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
    pub(crate) fn write(&self, fresh: &str) -> Result<bool, GenError> {
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
pub(crate) fn fix_command(name: &str, content: Option<&Path>) -> String {
    match content {
        Some(dir) => format!("msd-install gen {name} --write --content {}", dir.display()),
        None => format!("msd-install gen {name} --write"),
    }
}
