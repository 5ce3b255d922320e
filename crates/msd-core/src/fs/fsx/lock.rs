//! Locks: the exclusive lock of a target home for the whole of a run, and directory locks for
//! read-modify-write of a file inside one.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io;
use std::path::{Path, PathBuf};

use super::dirs::create_dir_all;

/// An exclusive lock on a directory, held until dropped: `flock` on the directory itself, so
/// nothing is created in it and a killed holder releases it. Concurrent read-modify-write of a
/// file in the directory takes it first.
#[derive(Debug)]
pub struct DirLock(std::fs::File);

/// Takes the lock of `dir`, waiting for another holder to release it.
pub fn lock_dir(dir: &Path) -> io::Result<DirLock> {
    let f = std::fs::File::open(dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    f.lock().map_err(|e| io::Error::new(e.kind(), format!("locking {}: {e}", dir.display())))?;
    Ok(DirLock(f))
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The directory (under a target home) that holds the install lock, the journal and the staging
/// area of a run in progress. It exists only while a run holds the target, or after a run was
/// killed (the next run then finds its journal).
pub const WORK_DIR: &str = ".msd-install";

/// Why a target's lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("another msd-install run is working on {home} (lock {lock} is held)")]
    Busy {
        /// The target home.
        home: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The lock file (or its directory) cannot be created or locked: an io error (a full disk, a
    /// read-only filesystem, no permission, something else in the way), not another run.
    #[error("cannot create or lock {lock} for {home} (no other run holds it): {source}")]
    Io {
        /// The target home.
        home: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The exclusive lock of one target home, held for the whole of a run that writes there.
///
/// It is an OS file lock (`flock`) on `<home>/.msd-install/lock`: the OS drops it when the
/// process dies, even by SIGKILL, so a killed run never leaves a stale lock. The holder removes
/// the file when it is done; a waiter that locked a file already unlinked notices (the path no
/// longer names its file) and tries again, so two runs can never both hold a target.
#[derive(Debug)]
pub struct Lock {
    file: std::fs::File,
    path: PathBuf,
}

impl Lock {
    /// Takes the lock of `home` (created if missing), without waiting.
    pub fn acquire(home: &Path) -> Result<Lock, LockError> {
        let dir = home.join(WORK_DIR);
        let path = dir.join("lock");
        let io_err = |e: io::Error| LockError::Io { home: home.to_path_buf(), lock: path.clone(), source: e };
        for _ in 0..100 {
            create_dir_all(&dir).map_err(io_err)?;
            let file = match std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)
            {
                Ok(f) => f,
                // The holder removed the directory between our mkdir and open: try again.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(e)),
            };
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(LockError::Busy { home: home.to_path_buf(), lock: path });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io_err(e)),
            }
            if same_file(&file, &path) {
                return Ok(Lock { file, path });
            }
        }
        Err(io_err(io::Error::other(format!("{} keeps being replaced", path.display()))))
    }
}

#[cfg(unix)]
fn same_file(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &std::fs::File, path: &Path) -> bool {
    path.exists()
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Unlink while still holding the lock, then drop the work dir if nothing else is in it
        // (a journal left by a failed rollback stays, for the next run to find).
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
        let _ = self.file.unlock();
    }
}
