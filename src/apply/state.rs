//! The install state `<home>/<core>/msd-install-state.json`: what an install did besides writing
//! the files of its manifest.
//!
//! It records the migrations already run on this target (in order, each once), the settings
//! entries msd-install owns in each settings surface (so upgrades replace them in place and
//! uninstall removes exactly them), and the directories the install created (so uninstall can
//! remove them when they are empty).
//!
//! Invariants: parsed strictly (unknown fields rejected, every path a [`RelPath`]); rendered
//! deterministically, so an identical run writes an identical state and touches nothing.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use msd_core::fs::fsx;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};
use msd_core::manifest::surfaces::{EntryKind, SurfaceFormat};

/// The file name of the state inside the core dir.
pub(crate) const STATE_NAME: &str = crate::pipeline::convert::STATE_NAME;

/// Version of this file's format.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The state of one installed target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InstallState {
    /// Format version.
    pub schema_version: u32,
    /// Migrations run on this target, in the order they ran.
    #[serde(default)]
    pub migrations: Vec<MigrationRecord>,
    /// Settings entries we own, per settings file (relative to the home).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<RelPath, SurfaceLedger>,
    /// Directories that did not exist before msd-install wrote into them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<RelPath>,
    /// Whether the home itself was created by the first install.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_home: bool,
    /// How many directories above the home the first install created with it (`~/.codeium` of
    /// `~/.codeium/windsurf`): uninstall removes them again when they are empty.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub created_above: usize,
    /// Whether the hook commands were written relative to `$HOME` (`--portable-hooks`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub portable_hooks: bool,
    /// The profile last installed (`core`, `standard`, `full`, `minimal`); the next install
    /// without `--profile` or `--minimal` installs it again. Absent in states of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

impl Default for InstallState {
    fn default() -> Self {
        InstallState {
            schema_version: SCHEMA_VERSION,
            migrations: Vec::new(),
            settings: BTreeMap::new(),
            created_dirs: Vec::new(),
            created_home: false,
            created_above: 0,
            portable_hooks: false,
            profile: None,
        }
    }
}

/// One migration that ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MigrationRecord {
    /// The migration id.
    pub id: String,
    /// What it found to do.
    pub outcome: MigrationOutcome,
    /// msd-install version that ran it.
    pub by_version: String,
    /// When (UTC, `YYYYMMDDTHHMMSSZ`).
    pub at: String,
}

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MigrationOutcome {
    /// It changed the target.
    Applied,
    /// The target did not have what it migrates (a fresh install, or already current).
    NotNeeded,
}

/// What we own in one settings surface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SurfaceLedger {
    /// The file's format (so that uninstall needs no manifest).
    #[serde(default)]
    pub format: SurfaceFormat,
    /// The file did not exist before we wrote our entries into it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_file: bool,
    /// Containers (objects, tables, arrays) we created, as key paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<Vec<String>>,
    /// Our entries by owner id, with where they are and the exact value we wrote.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub entries: BTreeMap<String, LedgerEntry>,
    /// The file's text before we first wrote into it (absent when we created it, or when the
    /// user changed the file since we last wrote it: their text is then not ours to restore).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// sha256 of the text we last wrote: uninstall restores `before` byte for byte only when
    /// the file still holds exactly that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<msd_core::fs::digest::Sha256>,
    /// The user's lines that held an empty inline value (`hooks: {}` in YAML) and that we
    /// opened into a block to add under: each is put back as it was once its block is empty
    /// again, so that uninstall leaves the user's bytes and not just their meaning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opened: Vec<OpenedLine>,
}

/// A user's line we opened into a block ([`SurfaceLedger::opened`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenedLine {
    /// The key path of the key on that line.
    pub at: Vec<String>,
    /// The line as the user had it.
    pub line: String,
}

/// One entry we own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LedgerEntry {
    /// What it is.
    pub kind: EntryKind,
    /// Its key path (array or key; empty for blocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<String>,
    /// The exact value (or block text) we wrote.
    pub value: serde_json::Value,
    /// The text we put before a block to separate it from the user's (removed with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// The user's value of a key we replaced (`--force-statusline`), put back when ours goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<serde_json::Value>,
}

impl SurfaceLedger {
    /// Whether we own nothing in this surface.
    pub(crate) fn is_empty(&self) -> bool {
        !self.created_file && self.containers.is_empty() && self.entries.is_empty()
    }
}

/// A state file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct StateError {
    /// The state file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The state's path relative to the home.
pub(crate) fn state_rel(cap: &Capability, scope: Scope) -> RelPath {
    cap.core_dir(scope).join(&RelPath::new(STATE_NAME).expect("static"))
}

impl InstallState {
    /// Serialised form (pretty JSON, final newline).
    pub(crate) fn render(&self) -> Vec<u8> {
        let mut s = serde_json::to_string_pretty(self).expect("state serializes");
        s.push('\n');
        s.into_bytes()
    }

    /// Parses a state file.
    pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<InstallState, StateError> {
        let s: InstallState = serde_json::from_slice(bytes).map_err(|e| StateError {
            path: path.display().to_string(),
            message: format!("not a valid msd install state ({e})"),
        })?;
        if s.schema_version != SCHEMA_VERSION {
            return Err(StateError {
                path: path.display().to_string(),
                message: format!(
                    "state schema version {} is not supported (this msd-install reads {SCHEMA_VERSION})",
                    s.schema_version
                ),
            });
        }
        Ok(s)
    }

    /// Reads the state under `home`, `None` when there is none.
    pub(crate) fn read(home: &Path, cap: &Capability, scope: Scope) -> Result<Option<InstallState>, StateError> {
        let path = home.join(state_rel(cap, scope).as_str());
        match fsx::read_if_exists(&path) {
            Ok(None) => Ok(None),
            Ok(Some(b)) => InstallState::parse(&path, &b).map(Some),
            Err(e) => Err(StateError { path: path.display().to_string(), message: e.to_string() }),
        }
    }

    /// Whether migration `id` already ran here.
    pub(crate) fn has_migration(&self, id: &str) -> bool {
        self.migrations.iter().any(|m| m.id == id)
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
