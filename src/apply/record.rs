//! Stage 8, `record`: the file manifest `<home>/<core>/msd-file-manifest.json`.
//!
//! It lists every file an install wrote: relative path, bytes and sha256 of the emitted bytes.
//! The next run compares it with the disk to tell a pristine file (safe to replace or remove)
//! from one the user edited (backed up first), and uninstall and verify read it.
//!
//! Invariants: entries sorted by path; no timestamp inside, so an identical install writes an
//! identical manifest and touches nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};

/// The file name of the manifest inside the core dir.
pub(crate) const MANIFEST_NAME: &str = crate::pipeline::convert::MANIFEST_NAME;

/// Version of this file's format.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// One written file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Path relative to the home.
    pub path: RelPath,
    /// Size in bytes.
    pub bytes: u64,
    /// sha256 of the emitted bytes (lowercase hex in the file).
    pub sha256: Sha256,
    /// File mode.
    pub mode: FileMode,
}

/// The manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileManifest {
    /// Format version.
    pub schema_version: u32,
    /// msd-install version that wrote it.
    pub tool_version: String,
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Every written file, sorted by path.
    pub files: Vec<Entry>,
}

/// A manifest that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct RecordError {
    /// The manifest path.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The manifest's path relative to the home.
pub(crate) fn manifest_rel(cap: &Capability, scope: Scope) -> RelPath {
    cap.core_dir(scope).join(&RelPath::new(MANIFEST_NAME).expect("static"))
}

impl FileManifest {
    /// The manifest this version of msd-install writes for `runtime` and `scope`.
    pub fn new(runtime: String, scope: Scope, files: Vec<Entry>) -> FileManifest {
        FileManifest {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            runtime,
            scope,
            files,
        }
    }

    /// The entry of `path`.
    pub fn get(&self, path: &RelPath) -> Option<&Entry> {
        self.files.binary_search_by(|e| e.path.cmp(path)).ok().map(|i| &self.files[i])
    }

    /// Serialised form (pretty JSON, final newline): what `serde_json::to_string_pretty` writes,
    /// byte for byte (an identical install writes an identical manifest, whichever version
    /// wrote the last one), written by hand ([`super::jsonw`]): it is made for every target on
    /// every run, and again to compare it with the one on disk.
    pub fn render(&self) -> Vec<u8> {
        use super::jsonw;
        // Every field by name: a new one does not compile until it is written here too.
        let FileManifest { schema_version, tool_version, runtime, scope, files } = self;
        let mut out = Vec::with_capacity(200 + files.len() * 180);
        out.extend_from_slice(b"{\n  \"schema_version\": ");
        jsonw::uint(&mut out, u64::from(*schema_version));
        out.extend_from_slice(b",\n  \"tool_version\": ");
        jsonw::string(&mut out, tool_version);
        out.extend_from_slice(b",\n  \"runtime\": ");
        jsonw::string(&mut out, runtime);
        out.extend_from_slice(b",\n  \"scope\": ");
        jsonw::string(&mut out, scope.as_str());
        out.extend_from_slice(b",\n  \"files\": [");
        for (i, e) in files.iter().enumerate() {
            let Entry { path, bytes, sha256, mode } = e;
            out.extend_from_slice(if i == 0 { b"\n    {\n      \"path\": " } else { b",\n    {\n      \"path\": " });
            jsonw::string(&mut out, path.as_str());
            out.extend_from_slice(b",\n      \"bytes\": ");
            jsonw::uint(&mut out, *bytes);
            out.extend_from_slice(b",\n      \"sha256\": ");
            jsonw::sha256(&mut out, sha256);
            out.extend_from_slice(b",\n      \"mode\": ");
            jsonw::mode(&mut out, *mode);
            out.extend_from_slice(b"\n    }");
        }
        if !files.is_empty() {
            out.extend_from_slice(b"\n  ");
        }
        out.extend_from_slice(b"]\n}\n");
        out
    }

    /// Parses a manifest.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<FileManifest, RecordError> {
        let mut m: FileManifest = serde_json::from_slice(bytes).map_err(|e| RecordError {
            path: path.display().to_string(),
            message: format!("not a valid msd file manifest ({e})"),
        })?;
        if m.schema_version != SCHEMA_VERSION {
            return Err(RecordError {
                path: path.display().to_string(),
                message: format!(
                    "manifest schema version {} is not supported (this msd-install reads {SCHEMA_VERSION})",
                    m.schema_version
                ),
            });
        }
        m.files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(m)
    }

    /// The msd-install version that wrote the manifest under `home`; `None` where there is none,
    /// or it cannot be read or is of another schema (as [`FileManifest::read`] would fail).
    /// Parses the two fields alone: the whole manifest (every file's path and sha256) was read
    /// for its version before each install, one more full parse per target on every run.
    pub fn read_tool_version(home: &Path, cap: &Capability, scope: Scope) -> Option<String> {
        #[derive(Deserialize)]
        struct Head {
            schema_version: u32,
            tool_version: String,
        }
        let path = home.join(manifest_rel(cap, scope).as_str());
        let bytes = fsx::read_if_exists(&path).ok()??;
        let head: Head = serde_json::from_slice(&bytes).ok()?;
        (head.schema_version == SCHEMA_VERSION).then_some(head.tool_version)
    }

    /// Reads the manifest under `home`, `None` when there is none.
    pub fn read(home: &Path, cap: &Capability, scope: Scope) -> Result<Option<FileManifest>, RecordError> {
        let path = home.join(manifest_rel(cap, scope).as_str());
        match fsx::read_if_exists(&path) {
            Ok(None) => Ok(None),
            Ok(Some(b)) => FileManifest::parse(&path, &b).map(Some),
            Err(e) => Err(RecordError { path: path.display().to_string(), message: e.to_string() }),
        }
    }
}

/// What a backup directory's `backup-meta.json` says, as far as [`kept_edits`] reads it (the
/// writer is `write::stage_backups`; other fields are ignored).
#[derive(Deserialize)]
struct BackupMetaRead {
    runtime: String,
    files: Vec<BackupEntryRead>,
}

#[derive(Deserialize)]
struct BackupEntryRead {
    path: RelPath,
    reason: String,
    sha256: Sha256,
    recorded_sha256: Option<Sha256>,
}

/// The files of `runtime` that msd-install wrote, the user edited, and a run kept in place after
/// backing them up (an uninstall does: the manifest that listed them is gone with it): each
/// path with the sha256 of the bytes kept. Read from the `backup-meta.json` of every directory
/// in `<home>/msd-local-patches/`; a backup that cannot be read counts for nothing (its file is
/// then the user's, as without this). Read only when a file at one of our paths is unlisted.
pub(crate) fn kept_edits(home: &Path, runtime: &str) -> BTreeMap<RelPath, BTreeSet<Sha256>> {
    let mut out: BTreeMap<RelPath, BTreeSet<Sha256>> = BTreeMap::new();
    let dir = home.join(crate::pipeline::convert::PATCHES_DIR);
    let Ok(entries) = fsx::list_dir(&dir) else { return out };
    for e in entries.into_iter().filter(|e| e.is_dir) {
        let Ok(Some(bytes)) = fsx::read_if_exists(&dir.join(&e.name).join("backup-meta.json")) else { continue };
        let Ok(meta) = serde_json::from_slice::<BackupMetaRead>(&bytes) else { continue };
        if meta.runtime != runtime {
            continue;
        }
        for f in meta.files.into_iter().filter(|f| f.reason == "user_edited" && f.recorded_sha256.is_some()) {
            out.entry(f.path).or_default().insert(f.sha256);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, bytes: u64, mode: FileMode) -> Entry {
        Entry { path: RelPath::new(path).unwrap(), bytes, sha256: Sha256::of(path.as_bytes()), mode }
    }

    /// The manifest is written by hand: its bytes must stay serde_json's pretty form, which every
    /// version before wrote, so an identical install still writes an identical manifest (and
    /// touches nothing) over one an older version left, and either reads the other's.
    #[test]
    fn render_is_serde_jsons_pretty_form_and_reads_back() {
        let manifests = [
            FileManifest::new("claude".into(), Scope::Global, Vec::new()),
            FileManifest::new("codex".into(), Scope::Local, vec![entry("AGENTS.md", 0, FileMode::Regular)]),
            FileManifest::new(
                "gemini".into(),
                Scope::Global,
                vec![
                    entry("agents/é “quoted”.md", 12_345, FileMode::Regular),
                    entry("msd-core/bin/msd_run", u64::from(u32::MAX) + 7, FileMode::Executable),
                    entry("msd-core/with \"quote\"/tab\there.md", 1, FileMode::Private),
                ],
            ),
        ];
        for m in manifests {
            let old = serde_json::to_string_pretty(&m).unwrap() + "\n";
            assert_eq!(String::from_utf8(m.render()).unwrap(), old);
            assert_eq!(FileManifest::parse(Path::new("m.json"), old.as_bytes()).unwrap(), m);
        }
    }
}
