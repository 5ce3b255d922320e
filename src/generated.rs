//! The one `--check` / `--write` idiom for every generated file.
//!
//! Render in memory, normalise newlines, compare with what is committed. `--check` prints a
//! unified diff of every stale file and the exact command that fixes it, and fails; `--write`
//! writes only the files that differ (atomically); without either, the fresh text is printed.

use std::path::{Path, PathBuf};

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
