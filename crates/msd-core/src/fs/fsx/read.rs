//! Reading files: whole, if they exist, bounded (a file msd did not write is never waited on),
//! links and canonical paths; every error names its path.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self};
use std::path::{Path, PathBuf};

use super::dir_cache::{DirCache, Dirs, Knows};
use super::meta::file_kind;

/// Reads a whole file.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    fs_err::read(path)
}

/// Reads a whole file, `None` when it does not exist.
pub fn read_if_exists(path: &Path) -> io::Result<Option<Vec<u8>>> {
    read_if_exists_in(None, path)
}

pub(super) fn read_if_exists_in(c: Dirs<'_>, path: &Path) -> io::Result<Option<Vec<u8>>> {
    if path.parent().is_some_and(|p| c.absent(p)) {
        return Ok(None);
    }
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
            Err(io::Error::new(e.kind(), format!("expected a file, found a directory: {}", path.display())))
        }
        Err(e) => fs_err::read(path).map(Some).or(Err(e)),
    }
}

/// The canonical, absolute form of `path` (symlinks resolved); the error names the path.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    fs_err::canonicalize(path)
}

/// Reads a UTF-8 file; the error names the path.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    fs_err::read_to_string(path)
}

/// What [`read_regular_if_exists`] read: at most the bytes asked for, and the file's whole length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    /// The first bytes of the file (all of them when `len` is no more than the limit).
    pub bytes: Vec<u8>,
    /// The file's length when it was opened.
    pub len: u64,
}

impl Bounded {
    /// Whether the file holds more than was read.
    pub fn cut(&self) -> bool {
        self.len > self.bytes.len() as u64
    }
}

/// Reads at most `max` bytes of the regular file at `path` (a symlink is followed), `None` when
/// nothing is there. Anything but a regular file (a FIFO, a device, a socket, a directory) is
/// refused (`InvalidInput`, the message naming what it is) without waiting on it: its type is
/// looked at before it is opened, the open does not block (a FIFO swapped in between opens at
/// once), and the opened file is looked at again.
///
/// For files of a project msd did not write (a FIFO there would hang a plain read forever).
pub fn read_regular_if_exists(path: &Path, max: u64) -> io::Result<Option<Bounded>> {
    use std::io::Read;
    let not_regular =
        |what: String| io::Error::new(io::ErrorKind::InvalidInput, format!("{} is {what}", path.display()));
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(not_regular(format!("{}, not a regular file", file_kind(path)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        opts.custom_flags(flags.bits() as i32);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    let meta = file.metadata().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(not_regular("no longer a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", path.display())))?;
    Ok(Some(Bounded { bytes, len: meta.len() }))
}

/// What the symlink at `path` points to, as written in the link.
pub fn read_link(path: &Path) -> io::Result<PathBuf> {
    fs_err::read_link(path)
}

impl DirCache {
    /// [`read_if_exists`], looking up and remembering directories in this cache.
    pub fn read_if_exists(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        read_if_exists_in(Some(self), path)
    }
}
