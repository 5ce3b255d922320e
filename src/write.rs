//! Stage 7, `write`: carry out a [`Plan`], and nothing else.
//!
//! Input: a plan. Output: the files on disk, the local-patch backups, and a [`WriteReport`].
//!
//! Order: back up every file the plan marks (user edits, unmanaged files) into
//! `<home>/msd-local-patches/<timestamp>/` with a `backup-meta.json`, then write each new or
//! changed file atomically, then remove retired files (pruning the directories they leave
//! empty), and last record the manifest. Every destination is confined to the home.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::fsx::{self, FileMode};
use crate::plan::{Action, Plan};
use crate::relpath::RelPath;

/// The directory (under the home) that receives backups of edited files.
pub const PATCHES_DIR: &str = "msd-local-patches";

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

#[derive(Serialize)]
struct BackupMeta<'a> {
    backed_up_at: &'a str,
    from_version: Option<&'a str>,
    to_version: &'a str,
    runtime: &'a str,
    files: Vec<BackupEntry<'a>>,
}

#[derive(Serialize)]
struct BackupEntry<'a> {
    path: &'a RelPath,
    reason: crate::plan::BackupReason,
    sha256: String,
    recorded_sha256: Option<&'a str>,
}

/// A UTC timestamp `YYYYMMDDTHHMMSSZ`, sortable and safe in paths.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
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

/// Carries out `plan`.
pub fn apply(plan: &Plan, allow_symlinks: bool) -> Result<WriteReport, WriteError> {
    let home = &plan.home;
    let previous = plan.previous.as_ref();
    let mut report = WriteReport::default();
    let backups: Vec<_> = plan.ops.iter().filter(|o| o.backup.is_some()).collect();
    if !backups.is_empty() {
        let stamp = timestamp();
        let mut dir_rel = format!("{PATCHES_DIR}/{stamp}");
        let mut n = 1;
        while home.join(&dir_rel).exists() {
            n += 1;
            dir_rel = format!("{PATCHES_DIR}/{stamp}-{n}");
        }
        let dir_rel = RelPath::new(dir_rel).expect("safe");
        let mut entries = Vec::new();
        for op in &backups {
            let old = op.old_data.as_deref().unwrap_or_default();
            let dest = fsx::confined(home, &dir_rel.join(&op.path), allow_symlinks)?;
            fsx::write_atomic(&dest, old, FileMode::Regular).map_err(|e| WriteError::io(&dest, e))?;
            entries.push(BackupEntry {
                path: &op.path,
                reason: op.backup.expect("filtered"),
                sha256: fsx::sha256_hex(old),
                recorded_sha256: previous.and_then(|m| m.get(&op.path)).map(|e| e.sha256.as_str()),
            });
            report.backed_up.push(op.path.clone());
        }
        let meta = BackupMeta {
            backed_up_at: &stamp,
            from_version: previous.map(|m| m.tool_version.as_str()),
            to_version: env!("CARGO_PKG_VERSION"),
            runtime: &plan.runtime,
            files: entries,
        };
        let meta_path =
            fsx::confined(home, &dir_rel.join(&RelPath::new("backup-meta.json").expect("static")), allow_symlinks)?;
        let mut json = serde_json::to_string_pretty(&meta).expect("serializes");
        json.push('\n');
        fsx::write_atomic(&meta_path, json.as_bytes(), FileMode::Regular).map_err(|e| WriteError::io(&meta_path, e))?;
        report.backup_dir = Some(home.join(dir_rel.as_str()));
    }
    for op in &plan.ops {
        let dest = fsx::confined(home, &op.path, allow_symlinks)?;
        match op.action {
            Action::Add | Action::Change => {
                let data = op.data.as_deref().expect("add/change carry data");
                fsx::write_atomic(&dest, data, op.mode).map_err(|e| WriteError::io(&dest, e))?;
                report.written += 1;
            }
            Action::Remove => {
                fsx::remove_file_if_exists(&dest).map_err(|e| WriteError::io(&dest, e))?;
                if let Some(parent) = dest.parent() {
                    fsx::prune_empty_dirs(parent, &prune_stop(home, &op.path));
                }
                report.removed += 1;
            }
            Action::Keep => {}
        }
    }
    if plan.manifest_changed {
        let dest = fsx::confined(home, &plan.manifest_path, allow_symlinks)?;
        fsx::write_atomic(&dest, &plan.manifest.render(), FileMode::Regular).map_err(|e| WriteError::io(&dest, e))?;
    }
    Ok(report)
}

/// Empty directories are pruned up to the first segment of the path (`skills/msd-x/` goes,
/// `skills/` stays).
fn prune_stop(home: &Path, rel: &RelPath) -> PathBuf {
    home.join(rel.as_str().split('/').next().unwrap_or_default())
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
}

impl WriteError {
    fn io(path: &Path, source: std::io::Error) -> WriteError {
        WriteError::Io { path: path.display().to_string(), source }
    }
}
