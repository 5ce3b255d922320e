//! Stage 7, `write`: carry out a [`Plan`], and nothing else.
//!
//! Input: a plan. Output: the files on disk, the local-patch backups, and a [`WriteReport`].
//!
//! Order, as one transaction of [`txn`] (staged, journaled, swapped in by rename; all or
//! nothing): back up every file the plan marks (user edits, unmanaged files) into
//! `<home>/msd-local-patches/<timestamp>/` with a `backup-meta.json`, write each new or changed
//! file, remove retired files (pruning the directories they leave empty), edit the settings
//! surfaces, and last record the manifest and the install state. Every destination is confined
//! to the home.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::apply::plan::{Action, Plan};
use crate::apply::txn::{self, Staged};
use crate::pipeline::convert::FileKind;
use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;

/// The directory (under the home) that receives backups of edited files.
pub const PATCHES_DIR: &str = crate::pipeline::convert::PATCHES_DIR;

/// What a run wrote.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WriteReport {
    /// Where the backups went, when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_dir: Option<PathBuf>,
    /// Backed-up paths.
    pub backed_up: Vec<RelPath>,
    /// Files written.
    pub written: usize,
    /// Files removed.
    pub removed: usize,
}

/// `backup-meta.json` of a backup directory.
#[derive(Serialize)]
pub struct BackupMeta<'a> {
    /// When (the directory's timestamp).
    pub backed_up_at: &'a str,
    /// msd-install version that wrote the files.
    pub from_version: Option<&'a str>,
    /// msd-install version that backed them up.
    pub to_version: &'a str,
    /// Runtime id.
    pub runtime: &'a str,
    /// The files.
    pub files: Vec<BackupEntry<'a>>,
}

/// One backed-up file.
#[derive(Serialize)]
pub struct BackupEntry<'a> {
    /// Its path relative to the home (and to the backup directory).
    pub path: &'a RelPath,
    /// Why it was backed up.
    pub reason: crate::apply::plan::BackupReason,
    /// sha256 of the backed-up bytes.
    pub sha256: Sha256,
    /// sha256 msd-install recorded for it.
    pub recorded_sha256: Option<Sha256>,
}

/// A UTC timestamp `YYYYMMDDTHHMMSSZ`, sortable and safe in paths.
pub fn timestamp() -> String {
    timestamp_at(std::time::SystemTime::now())
}

/// `YYYYMMDDTHHMMSSZ` of `t` (UTC).
pub fn timestamp_at(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// The journal's label of `plan`'s transaction.
pub fn label(plan: &Plan) -> String {
    format!("install {} {}", plan.runtime, plan.scope.as_str())
}

/// Stages `plan`'s transaction ([`txn::prepare`]) in `area` (its home's, with what the run knows
/// of that home's disk: [`txn::Area::with_caches`]), changing nothing visible;
/// [`txn::Prepared::commit`] carries it out (as the transaction [`label`]). The report says what the commit
/// will write.
///
/// The plan gives up what only the staging needs: its files' new and old bytes (each file's
/// bytes are dropped once they are staged, so a large tree is not held whole while it is
/// written), the manifest's entries (rendered into the staged manifest; the ops hold the same
/// paths, sizes, digests and modes) and the previous manifest. What is left is its ops without
/// bytes, for the report and the fast-path record of a run that stages several targets before
/// it commits any.
pub fn prepare(
    plan: &mut Plan,
    area: txn::Area,
    progress: &dyn txn::Progress,
) -> Result<(txn::Prepared, WriteReport), WriteError> {
    let previous = plan.previous.take();
    let previous = previous.as_ref();
    let home = &plan.home;
    let mut report = WriteReport::default();
    let mut staged = Vec::new();
    let backups: Vec<Backup<'_>> = plan
        .ops
        .iter_mut()
        .filter_map(|op| {
            Some(Backup {
                path: &op.path,
                bytes: op.old_data.take()?,
                sha256: op.old_sha256?,
                reason: op.backup?,
                recorded_sha256: previous.and_then(|m| m.get(&op.path)).map(|e| e.sha256),
            })
        })
        .chain(plan.settings.iter().filter_map(|s| {
            // A settings file holding an entry of ours that the user edited.
            Some(Backup {
                path: &s.path,
                bytes: s.old_data.clone()?,
                sha256: s.old_sha256?,
                reason: crate::apply::plan::BackupReason::UserEdited,
                recorded_sha256: None,
            })
        }))
        .collect();
    if !backups.is_empty() {
        report.backed_up = backups.iter().map(|b| b.path.clone()).collect();
        let from = previous.map(|m| m.tool_version.as_str());
        let dir_rel = stage_backups(home, backups, from, &plan.runtime, &mut staged);
        report.backup_dir = Some(home.join(dir_rel.as_str()));
    }
    for op in &mut plan.ops {
        match op.action {
            Action::Add | Action::Change => {
                let data = op.data.take().expect("add/change carry data");
                let sha = op.sha256.expect("add/change carry their digest");
                let put = Staged::put_hashed(op.path.clone(), data, sha, op.mode, op.old_sha256);
                // The helper is the same binary in every runtime: one copy per filesystem.
                staged.push(if op.kind == Some(FileKind::Program) { put.shared() } else { put });
                report.written += 1;
            }
            Action::Remove => {
                let old = op.old_sha256.expect("a removal has a file on disk");
                staged.push(Staged::remove(op.path.clone(), old));
                report.removed += 1;
            }
            Action::Keep => {}
        }
    }
    for s in &plan.settings {
        match (s.action, &s.data) {
            (Action::Add | Action::Change, Some(data)) => {
                staged.push(Staged::put(s.path.clone(), data.clone(), FileMode::Regular, s.old_sha256).in_place());
            }
            (Action::Remove, _) => {
                staged.push(Staged::remove(s.path.clone(), s.old_sha256.expect("removed file exists")));
            }
            _ => {}
        }
    }
    if plan.manifest_changed {
        staged.push(Staged::put(
            plan.manifest_path.clone(),
            plan.manifest.render(),
            FileMode::Regular,
            plan.manifest_old_sha256,
        ));
    }
    plan.manifest.files = Vec::new();
    plan.ops.shrink_to_fit();
    if let Some((path, bytes, old)) = &plan.state {
        staged.push(Staged::put(path.clone(), bytes.clone(), FileMode::Regular, *old));
    }
    Ok((txn::prepare(&area, &label(plan), staged, progress)?, report))
}

/// A fresh `msd-local-patches/<timestamp>[-n]` directory name under `home`.
pub fn backup_dir(home: &Path) -> RelPath {
    let stamp = timestamp();
    let mut dir_rel = format!("{PATCHES_DIR}/{stamp}");
    let mut n = 1;
    while home.join(&dir_rel).exists() {
        n += 1;
        dir_rel = format!("{PATCHES_DIR}/{stamp}-{n}");
    }
    RelPath::new(dir_rel).expect("safe")
}

/// One file to back up before it is replaced or removed.
pub struct Backup<'a> {
    /// Its path relative to the home.
    pub path: &'a RelPath,
    /// Its current bytes.
    pub bytes: Vec<u8>,
    /// Their sha256 (already computed by whoever read them).
    pub sha256: Sha256,
    /// Why.
    pub reason: crate::apply::plan::BackupReason,
    /// What msd-install recorded for it, if anything.
    pub recorded_sha256: Option<Sha256>,
}

/// Stages `backups` and their `backup-meta.json` into a fresh
/// `<home>/msd-local-patches/<timestamp>/`, and returns that directory (relative to the home).
pub fn stage_backups(
    home: &Path,
    backups: Vec<Backup<'_>>,
    from_version: Option<&str>,
    runtime: &str,
    staged: &mut Vec<Staged>,
) -> RelPath {
    let dir_rel = backup_dir(home);
    let mut entries = Vec::new();
    for b in backups {
        entries.push(BackupEntry {
            path: b.path,
            reason: b.reason,
            sha256: b.sha256,
            recorded_sha256: b.recorded_sha256,
        });
        // A backed-up settings file may hold a key: only its owner reads the copy.
        staged.push(Staged::put_hashed(dir_rel.join(b.path), b.bytes, b.sha256, FileMode::Private, None));
    }
    let meta = BackupMeta {
        backed_up_at: dir_rel.file_name(),
        from_version,
        to_version: env!("CARGO_PKG_VERSION"),
        runtime,
        files: entries,
    };
    let mut json = serde_json::to_string_pretty(&meta).expect("serializes");
    json.push('\n');
    staged.push(Staged::put(
        dir_rel.join(&RelPath::new("backup-meta.json").expect("static")),
        json.into_bytes(),
        FileMode::Regular,
        None,
    ));
    dir_rel
}

/// Errors of the write stage.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// An io error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A destination through a symlink.
    #[error(transparent)]
    Confine(#[from] fsx::ConfineError),
    /// The transaction failed (and was rolled back).
    #[error(transparent)]
    Txn(#[from] txn::TxnError),
}
