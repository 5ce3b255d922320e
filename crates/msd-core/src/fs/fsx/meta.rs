//! What is at a path without reading it: existence, kind, length, times, and the [`StatKey`]
//! that tells a file is unchanged since a run looked at it.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io;
use std::path::Path;

use super::dir_cache::{DirCache, Dirs, Knows};

/// When `path` (not followed through a symlink) was last modified.
pub fn modified(path: &Path) -> io::Result<std::time::SystemTime> {
    fs_err::symlink_metadata(path)?.modified()
}

/// Sets the modification time of the file at `path` to now.
pub fn touch(path: &Path) -> io::Result<()> {
    fs_err::OpenOptions::new().write(true).open(path)?.file().set_modified(std::time::SystemTime::now())
}

/// Whether `path` itself (not followed) is a symlink.
pub fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `path` exists (following symlinks).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// Whether something (a file, a directory, a symlink, even a dangling one) is at `path`.
pub fn lexists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Whether `path` is a directory (following symlinks).
pub fn is_dir(path: &Path) -> bool {
    path.is_dir()
}

/// Whether `path` is a regular file (following symlinks).
pub fn is_file(path: &Path) -> bool {
    path.is_file()
}

/// What kind of file `path` is, for messages: `a FIFO`, `a socket`, `a device`, ... (followed
/// through symlinks).
pub fn file_kind(path: &Path) -> String {
    let Ok(m) = std::fs::metadata(path) else { return "missing".into() };
    let ft = m.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO".into();
        }
        if ft.is_socket() {
            return "a socket".into();
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device".into();
        }
    }
    if ft.is_dir() {
        "a directory".into()
    } else if ft.is_file() {
        "a regular file".into()
    } else {
        "a special file".into()
    }
}

/// The length of the regular file at `path` (a symlink is followed); an error for anything else.
pub fn regular_file_len(path: &Path) -> io::Result<u64> {
    let m = fs_err::metadata(path)?;
    if !m.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(m.len())
}

/// What the file system says about a file, enough to tell that it has not changed since it was
/// looked at: size, modification and status-change times (nanoseconds), inode, device and mode
/// bits, of the path itself (a symlink is not followed). Any write, rename over, `chmod`, `touch`
/// or replacement changes at least one of them; the status-change time cannot be set back by a
/// user. Elsewhere than Unix: size and modification time only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct StatKey(pub [i64; 8]);

/// The [`StatKey`] of `path`, `None` when nothing is there (through a [`DirCache`], a path
/// under a directory it knows to be absent is not looked at).
pub fn stat_key(path: &Path) -> io::Result<Option<StatKey>> {
    stat_key_in(None, path)
}

pub(super) fn stat_key_in(c: Dirs<'_>, path: &Path) -> io::Result<Option<StatKey>> {
    if path.parent().is_some_and(|p| c.absent(p)) {
        return Ok(None);
    }
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    key_of(&m).map(Some)
}

/// The [`StatKey`] of what `m` describes (the metadata of a path, or of an open file: the same
/// fields either way).
pub(super) fn key_of(m: &std::fs::Metadata) -> io::Result<StatKey> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(StatKey([
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            m.ino() as i64,
            m.dev() as i64,
            i64::from(m.mode()),
        ]))
    }
    #[cfg(not(unix))]
    {
        let t = m.modified()?.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Ok(StatKey([m.len() as i64, t.as_secs() as i64, i64::from(t.subsec_nanos()), 0, 0, 0, 0, 0]))
    }
}

/// Whether `dir` is a directory (following symlinks), asked of the disk. Through a [`DirCache`]
/// ([`DirCache::dir_exists`]) it is asked once per cache: the answer, present or absent, is
/// remembered, and a path under an absent directory is absent without a look.
pub fn dir_exists(dir: &Path) -> bool {
    dir_exists_in(None, dir)
}

pub(super) fn dir_exists_in(c: Dirs<'_>, dir: &Path) -> bool {
    if c.contains(dir) {
        return true;
    }
    if c.absent(dir) {
        return false;
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {
            c.insert(dir);
            true
        }
        Ok(_) => false,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            c.insert_absent(dir);
            false
        }
        Err(_) => false,
    }
}

impl DirCache {
    /// [`stat_key`], looking up and remembering directories in this cache.
    pub fn stat_key(&self, path: &Path) -> io::Result<Option<StatKey>> {
        stat_key_in(Some(self), path)
    }

    /// [`dir_exists`], looking up and remembering directories in this cache.
    pub fn dir_exists(&self, dir: &Path) -> bool {
        dir_exists_in(Some(self), dir)
    }
}
