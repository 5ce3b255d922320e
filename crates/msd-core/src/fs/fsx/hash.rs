//! Digests of bytes and of files (read in blocks, never held whole).

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io;
use std::path::Path;

use super::dir_cache::{DirCache, Dirs, Knows};
use super::read::read_if_exists;

use crate::fs::digest::Sha256;

/// The sha256 of `bytes`, computed every time: a caller that meets the same large buffer
/// again (a reference every runtime gets) keeps a [`crate::fs::bytes::Digests`] of its own.
pub fn sha256(bytes: &[u8]) -> Sha256 {
    Sha256::of(bytes)
}

/// Lower-case hex of `bytes` (a digest).
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Reads `src` to its end in blocks, hashing each and handing it to `each`: the hex sha256 and
/// the length read.
pub(super) fn hash_blocks(
    src: &mut fs_err::File,
    mut each: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<(Sha256, u64)> {
    use sha2::Digest as _;
    use std::io::Read;
    let mut hasher = sha2::Sha256::new();
    let (mut buf, mut len) = (vec![0u8; 1 << 16], 0u64);
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        each(&buf[..n])?;
        len += n as u64;
    }
    Ok((Sha256::from_hasher(hasher), len))
}

/// [`sha256_of_file`] of the file at `path`, `None` when there is none (an error for a
/// directory, as [`read_if_exists`]).
pub fn sha256_of_file_if_exists(path: &Path) -> io::Result<Option<(Sha256, u64)>> {
    sha256_of_file_if_exists_in(None, path)
}

pub(super) fn sha256_of_file_if_exists_in(c: Dirs<'_>, path: &Path) -> io::Result<Option<(Sha256, u64)>> {
    if path.parent().is_some_and(|p| c.absent(p)) {
        return Ok(None);
    }
    match sha256_of_file(path) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::IsADirectory || path.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("expected a file, found a directory: {}", path.display()),
        )),
        Err(e) => Err(e),
    }
}

/// The sha256 and length of the file at `path`, read in blocks.
pub fn sha256_of_file(path: &Path) -> io::Result<(Sha256, u64)> {
    hash_blocks(&mut fs_err::File::open(path)?, |_| Ok(()))
}

/// sha256 of the file at `path`, `None` when it does not exist.
pub fn sha256_file(path: &Path) -> io::Result<Option<Sha256>> {
    Ok(read_if_exists(path)?.map(|b| sha256(&b)))
}

impl DirCache {
    /// [`sha256_of_file_if_exists`], looking up and remembering directories in this cache.
    pub fn sha256_of_file_if_exists(&self, path: &Path) -> io::Result<Option<(Sha256, u64)>> {
        sha256_of_file_if_exists_in(Some(self), path)
    }
}
