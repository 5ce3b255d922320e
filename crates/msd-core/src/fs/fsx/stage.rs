//! Staged files: new files written into a staging area (mode set once, flushed per filesystem
//! later), bytes that many targets share written once and hard-linked, and the old bytes of a
//! file preserved before it is replaced.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self, Write};
use std::path::Path;

use super::dir_cache::{DirCache, Dirs, Knows};
use super::dirs::create_dir_all_in;
use super::hash::hash_blocks;
use super::meta::{StatKey, key_of};
use super::sync::flushed;
use super::write::{FileMode, mode_of, set_mode};

use crate::fs::digest::Sha256;

/// Writes `bytes` to a new file at `path` (parents created). For staging areas, where the file
/// is not visible to anyone until it is renamed into place; [`sync_fs`](super::sync_fs) makes a whole staged
/// tree durable at once (on Linux; elsewhere each file is fsynced here).
pub fn write_new(path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    write_new_in(None, path, bytes, mode)
}

pub(super) fn write_new_in(c: Dirs<'_>, path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    write_new_file(c, path, bytes, mode).map(drop)
}

/// [`write_new_in`], the file left open (written, its mode set): for its [`StatKey`].
fn write_new_file(c: Dirs<'_>, path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<fs_err::File> {
    if let Some(dir) = path.parent() {
        create_dir_all_in(c, dir)?;
    }
    let (mut f, exact) = open_new(path, mode)?;
    f.write_all(bytes)?;
    close_new(&f, exact, mode)?;
    Ok(f)
}

/// Opens a staged file of [`write_new`] and [`copy_new_checked`]. A new file is created with
/// its mode, which the umask may narrow: only then is the mode set again by [`close_new`] (one
/// `fchmod` per file saved in the usual case, a umask of 022 or 002).
fn open_new(path: &Path, mode: FileMode) -> io::Result<(fs_err::File, bool)> {
    match create_new_with_mode(path, mode) {
        Ok(f) => Ok((f, umask().is_some_and(|m| m & mode.bits() == 0))),
        // Not new (only a staging area a stale run left could hold one): truncated, mode set.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok((fs_err::File::create(path)?, false)),
        Err(e) => Err(e),
    }
}

/// Finishes a file [`open_new`] opened: its mode when the umask narrowed it, and an fsync where
/// [`sync_fs`] does not make the staged tree durable at once.
fn close_new(f: &fs_err::File, exact: bool, mode: FileMode) -> io::Result<()> {
    if !exact {
        set_mode(f.file(), mode.bits())?;
    }
    if !cfg!(target_os = "linux") {
        f.sync_all()?;
        flushed();
    }
    Ok(())
}

/// Creates a file that must not exist yet, with `mode` (narrowed by the umask, as `open` does).
fn create_new_with_mode(path: &Path, mode: FileMode) -> io::Result<fs_err::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode.bits());
    #[cfg(not(unix))]
    let _ = mode;
    let f = opts.open(path).map_err(|e| io::Error::new(e.kind(), format!("creating {}: {e}", path.display())))?;
    Ok(fs_err::File::from_parts(f, path))
}

/// The process's umask, read once (`Umask:` in `/proc/self/status`, Linux 4.7 and later); `None`
/// where it cannot be read without changing it, so the mode of each new file is then set.
fn umask() -> Option<u32> {
    static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let value = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
        u32::from_str_radix(value.trim(), 8).ok()
    })
}

/// The files [`SharedWrites::write_new`] wrote, by content: what lets bytes that many targets
/// receive alike (the helper binary goes into every runtime's tree) be written once and
/// hard-linked after. A value its caller owns (the install, for all of its targets), never a
/// process-global: a link is made only to a file this value saw written. Its writes are made one
/// at a time, so targets staged on several threads at once still write the bytes once and link
/// the rest (two threads that both found nothing to link to wrote two copies).
#[derive(Debug, Default)]
pub struct SharedWrites(std::sync::Mutex<Vec<Written>>, std::sync::Mutex<()>);

#[derive(Debug)]
struct Written {
    sha256: Sha256,
    #[cfg(unix)]
    ino: (u64, u64),
    len: u64,
    names: Vec<std::path::PathBuf>,
}

#[cfg(unix)]
fn id(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

impl SharedWrites {
    /// Writes a new file at `path` like [`write_new`] (its directories through `dirs`). The first
    /// call for a `sha256` writes the file; later calls hard-link the file already written when
    /// it is on the same filesystem, is still the same inode and has the same size, and write a
    /// copy otherwise (another filesystem, or a file that moved away or changed). `also_at` is
    /// where the written file will be renamed to (its final destination), so a later call still
    /// finds it after the move. Returns whether it linked.
    ///
    /// The targets stay independent: a link is a name, so removing or replacing one target's file
    /// (uninstall, upgrade: both unlink or rename over the name) leaves every other name intact.
    ///
    /// Bytes read from a file ([`Source::File`]) are copied from it in blocks, never held whole,
    /// and the copy must have `sha256` (the file did not change since it was hashed for the plan).
    pub fn write_new(
        &self,
        dirs: &DirCache,
        path: &Path,
        src: Source<'_>,
        sha256: &Sha256,
        mode: FileMode,
        also_at: &Path,
    ) -> io::Result<bool> {
        if let Some(dir) = path.parent() {
            dirs.create_dir_all(dir)?;
        }
        let len = match src {
            Source::Bytes(b) => b.len() as u64,
            Source::File(_, len) => len,
        };
        // Held from the look for a file to link to until the file written is remembered.
        let _one_at_a_time = self.1.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.link(sha256, len, path) {
            return Ok(true);
        }
        match src {
            Source::File(from, _) => copy_new_checked(path, from, sha256, mode)?,
            Source::Bytes(b) => dirs.write_new(path, b, mode)?,
        }
        self.remember(sha256, path, also_at);
        Ok(false)
    }

    /// Links `to` to a remembered file of these bytes; false when none can be linked.
    fn link(&self, sha256: &Sha256, len: u64, to: &Path) -> bool {
        let Ok(mut written) = self.0.lock() else { return false };
        for w in written.iter_mut().filter(|w| w.sha256 == *sha256 && w.len == len) {
            let from = w.names.iter().find(|n| {
                std::fs::symlink_metadata(n).is_ok_and(|m| {
                    #[cfg(unix)]
                    let same = id(&m) == w.ino;
                    #[cfg(not(unix))]
                    let same = true;
                    m.is_file() && m.len() == len && same
                })
            });
            if let Some(from) = from.cloned()
                && std::fs::hard_link(&from, to).is_ok()
            {
                w.names.push(to.to_path_buf());
                return true;
            }
        }
        false
    }

    /// Remembers the file just written at `path` (to be renamed to `also_at`).
    fn remember(&self, sha256: &Sha256, path: &Path, also_at: &Path) {
        let Ok(m) = std::fs::symlink_metadata(path) else { return };
        if let Ok(mut written) = self.0.lock() {
            written.push(Written {
                sha256: *sha256,
                #[cfg(unix)]
                ino: id(&m),
                len: m.len(),
                names: vec![path.to_path_buf(), also_at.to_path_buf()],
            });
        }
    }
}

/// What [`SharedWrites::write_new`] writes: bytes in memory, or a file of this length to copy.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// The bytes of this file, of this length.
    File(&'a Path, u64),
}

/// Copies the file `from` to a new file at `path` (like [`write_new`]) in blocks, hashing what
/// it copies: a copy whose sha256 is not `sha256` is removed and is an error.
fn copy_new_checked(path: &Path, from: &Path, sha256: &Sha256, mode: FileMode) -> io::Result<()> {
    let mut src = fs_err::File::open(from)?;
    let (mut f, exact) = open_new(path, mode)?;
    let (sha, _) = hash_blocks(&mut src, |block| f.write_all(block))?;
    if sha != *sha256 {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(io::Error::other(format!(
            "{} changed while it was being installed (its sha256 is not the one planned); run the install again",
            from.display()
        )));
    }
    close_new(&f, exact, mode)
}

/// Keeps the current bytes of `src` at `dst` without disturbing `src`: a hard link where the
/// filesystem allows one, a copy otherwise.
pub fn preserve(src: &Path, dst: &Path) -> io::Result<()> {
    preserve_in(None, src, dst)
}

pub(super) fn preserve_in(c: Dirs<'_>, src: &Path, dst: &Path) -> io::Result<()> {
    if let Some(dir) = dst.parent() {
        create_dir_all_in(c, dir)?;
    }
    c.appeared(dst);
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(_) => {
            let bytes = fs_err::read(src)?;
            write_new_in(c, dst, &bytes, mode_of(src)?)
        }
    }
}

impl DirCache {
    /// [`write_new`], looking up and remembering directories in this cache.
    pub fn write_new(&self, path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
        write_new_in(Some(self), path, bytes, mode)
    }

    /// [`write_new`], looking up and remembering directories in this cache, and the new file's
    /// [`StatKey`] as written, from its open descriptor (no path walked again). The key holds
    /// while nothing changes the file: a move of a directory it is in leaves it whole, a move of
    /// the file itself or a new link to it changes its status-change time.
    pub fn write_new_keyed(&self, path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<StatKey> {
        let f = write_new_file(Some(self), path, bytes, mode)?;
        key_of(&f.metadata()?)
    }

    /// [`preserve`], looking up and remembering directories in this cache.
    pub fn preserve(&self, src: &Path, dst: &Path) -> io::Result<()> {
        preserve_in(Some(self), src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::super::hash::sha256;
    use super::*;

    /// Threads that stage the same bytes at once (an install's two workers, each a target) write
    /// them once and link every other name to that file: one inode for all.
    #[cfg(unix)]
    #[test]
    fn shared_bytes_written_by_threads_at_once_are_one_file() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let bytes = vec![7u8; 4 << 20];
        let sha = sha256(&bytes);
        for round in 0..4 {
            let shared = SharedWrites::default();
            let dirs = DirCache::new();
            let threads = 4;
            let start = std::sync::Barrier::new(threads);
            let paths: Vec<_> = (0..threads).map(|i| t.path().join(format!("{round}/t{i}/bin/helper"))).collect();
            std::thread::scope(|s| {
                for p in &paths {
                    let (shared, dirs, start, bytes, sha) = (&shared, &dirs, &start, &bytes, &sha);
                    s.spawn(move || {
                        start.wait();
                        shared.write_new(dirs, p, Source::Bytes(bytes), sha, FileMode::Executable, p).unwrap();
                    });
                }
            });
            let inodes: std::collections::BTreeSet<u64> =
                paths.iter().map(|p| std::fs::metadata(p).unwrap().ino()).collect();
            assert_eq!(inodes.len(), 1, "round {round}: one file for every name, not {inodes:?}");
        }
    }
}
