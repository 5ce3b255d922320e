//! Digests of bytes and of files (read in blocks, never held whole).

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io;
use std::path::Path;

use super::known_dirs;
use super::read::read_if_exists;

use crate::fs::digest::Sha256;

/// The sha256 of `bytes`. Large inputs are remembered by content for the life of the process:
/// the same helper binary goes into every runtime's tree, and is hashed once (a copy of the
/// bytes is kept for the comparison; [`sha256_shared`] keeps a shared buffer instead).
pub fn sha256(bytes: &[u8]) -> Sha256 {
    memo::digest(bytes, || std::sync::Arc::from(bytes))
}

/// [`sha256`] of a shared buffer: a large one is remembered without a copy.
pub fn sha256_shared(bytes: &std::sync::Arc<[u8]>) -> Sha256 {
    memo::digest(bytes, || bytes.clone())
}

/// The digests of large byte strings, by content.
mod memo {
    use std::sync::{Arc, Mutex};

    use crate::fs::digest::Sha256;

    const MIN: usize = 1 << 20;
    const MAX_ENTRIES: usize = 8;
    static MEMO: Mutex<Vec<(Arc<[u8]>, Sha256)>> = Mutex::new(Vec::new());

    pub(super) fn digest(bytes: &[u8], keep: impl FnOnce() -> Arc<[u8]>) -> Sha256 {
        if bytes.len() < MIN {
            return Sha256::of(bytes);
        }
        if let Ok(memo) = MEMO.lock()
            && let Some((_, h)) = memo.iter().find(|(b, _)| std::ptr::eq(&b[..], bytes) || b[..] == *bytes)
        {
            return *h;
        }
        let s = Sha256::of(bytes);
        if let Ok(mut memo) = MEMO.lock()
            && memo.len() < MAX_ENTRIES
        {
            memo.push((keep(), s));
        }
        s
    }
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
    if path.parent().is_some_and(known_dirs::absent) {
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
