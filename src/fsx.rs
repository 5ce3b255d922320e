//! The one filesystem module: every read and write of the installer goes through here.
//!
//! Why: io errors must name their path (`fs-err`), every write must be atomic (temp file in the
//! same directory, fsync, rename, explicit mode), and every destination must stay inside the
//! resolved target. Keeping these rules in one place is what makes them true everywhere.
//!
//! Invariants:
//! - [`write_atomic`] never leaves a half-written destination: a reader sees the old bytes or the
//!   new bytes.
//! - [`confined`] is the only way to turn a root plus a relative path into a destination; it
//!   refuses `..`, absolute paths, NUL and (unless allowed) symlinks between root and destination.

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::relpath::RelPath;

/// Unix permission bits of an emitted file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    /// `0o644`.
    Regular,
    /// `0o755`.
    Executable,
}

impl FileMode {
    /// The permission bits.
    pub fn bits(self) -> u32 {
        match self {
            FileMode::Regular => 0o644,
            FileMode::Executable => 0o755,
        }
    }
}

/// Errors of path confinement.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// A symlink sits between the root and the destination.
    #[error("refusing to write through a symlink: {link} (between {root} and {dest})")]
    Symlink {
        /// The symlink found.
        link: PathBuf,
        /// The target root.
        root: PathBuf,
        /// The destination asked for.
        dest: PathBuf,
    },
    /// An io error while inspecting the path.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Joins `rel` under `root`, refusing symlinked components between them unless
/// `allow_symlinks` is set. `rel` is already validated (no `..`, not absolute, no NUL).
///
/// The root itself being a symlink counts as a symlink between the two: a user who keeps
/// `~/.claude` as a link into a dotfiles repo must say so (`--allow-symlinks`).
pub fn confined(root: &Path, rel: &RelPath, allow_symlinks: bool) -> Result<PathBuf, ConfineError> {
    let dest = root.join(rel.as_str());
    if allow_symlinks {
        return Ok(dest);
    }
    let mut cur = root.to_path_buf();
    let check = |p: &Path| -> Result<bool, ConfineError> {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                Err(ConfineError::Symlink { link: p.to_path_buf(), root: root.to_path_buf(), dest: dest.clone() })
            }
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(ConfineError::Io(e)),
        }
    };
    if !check(&cur)? {
        return Ok(dest);
    }
    for comp in Path::new(rel.as_str()).components() {
        if let Component::Normal(c) = comp {
            cur.push(c);
            if !check(&cur)? {
                break;
            }
        }
    }
    Ok(dest)
}

/// Reads a whole file.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    fs_err::read(path)
}

/// Reads a whole file, `None` when it does not exist.
pub fn read_if_exists(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
            Err(io::Error::new(e.kind(), format!("expected a file, found a directory: {}", path.display())))
        }
        Err(e) => fs_err::read(path).map(Some).or(Err(e)),
    }
}

/// Writes `bytes` to `dest` atomically: a temp file in the same directory, fsync, explicit
/// mode, rename over the destination. Parent directories are created.
pub fn write_atomic(dest: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    let dir = dest.parent().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("no parent directory: {}", dest.display()))
    })?;
    create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".msd-tmp-")
        .tempfile_in(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("creating a temp file in {}: {e}", dir.display())))?;
    tmp.write_all(bytes)?;
    set_mode(tmp.as_file(), mode)?;
    tmp.as_file().sync_all()?;
    tmp.persist(dest)
        .map_err(|e| io::Error::new(e.error.kind(), format!("renaming into {}: {}", dest.display(), e.error)))?;
    Ok(())
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, mode: FileMode) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(mode.bits()))
}

#[cfg(not(unix))]
fn set_mode(_file: &std::fs::File, _mode: FileMode) -> io::Result<()> {
    Ok(())
}

/// Creates a directory and its parents.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    fs_err::create_dir_all(dir)
}

/// Removes a file; a missing file is not an error.
pub fn remove_file_if_exists(path: &Path) -> io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io::Error::new(e.kind(), format!("removing {}: {e}", path.display()))),
    }
}

/// Removes `dir` and then each parent up to (not including) `stop`, as long as they are empty.
pub fn prune_empty_dirs(mut dir: &Path, stop: &Path) {
    while dir != stop && dir.starts_with(stop) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
}

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest.iter() {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Whether `path` exists (following symlinks).
pub fn exists(path: &Path) -> bool {
    path.exists()
}
