//! [`Bytes`]: the bytes of a file to install, shared and never copied without need.
//!
//! Three sources, one type:
//! - a buffer made at run time (a converted file), shared by every tree that receives it;
//! - bytes embedded in the executable (the shipped content), borrowed where they lie instead of
//!   copied onto the heap;
//! - a file on disk (the msd_run helper every runtime receives): its length is known, its sha256
//!   is taken once by reading it in blocks, and it is copied into place from the file
//!   ([`Bytes::source`], [`fsx::SharedWrites::write_new`]), so the install never holds it in
//!   memory. Only a caller that needs the bytes themselves (`diff`, `emit`, the maintainers'
//!   tools) loads it, once, through [`std::ops::Deref`].

use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::fs::digest::Sha256;
use crate::fs::fsx;

/// The bytes of a file to install; cheap to clone (a reference count or a borrow).
#[derive(Clone)]
pub struct Bytes(Repr);

#[derive(Clone)]
enum Repr {
    Shared(Arc<[u8]>),
    /// A buffer taken as it was made: wrapping it copies nothing (an `Arc<[u8]>` would copy every
    /// converted file once more, and leave the freed buffer behind in the allocator).
    Owned(Arc<Vec<u8>>),
    Static(&'static [u8]),
    File(Arc<OnDisk>),
}

struct OnDisk {
    path: PathBuf,
    len: u64,
    sha256: Sha256,
    loaded: OnceLock<Box<[u8]>>,
}

impl Bytes {
    /// The bytes of the regular file at `path`, hashed now (read in blocks) and otherwise read
    /// only when needed; a copy checks that the file still has this hash.
    pub fn from_file(path: &Path) -> std::io::Result<Bytes> {
        fsx::regular_file_len(path)?;
        let (sha256, len) = fsx::sha256_of_file(path)?;
        Ok(Bytes(Repr::File(Arc::new(OnDisk { path: path.to_path_buf(), len, sha256, loaded: OnceLock::new() }))))
    }

    /// The file these bytes are read from, when they are not held in memory.
    pub fn file(&self) -> Option<&Path> {
        match &self.0 {
            Repr::File(f) => Some(&f.path),
            _ => None,
        }
    }

    /// What to write them from: the file, or the bytes in memory.
    pub fn source(&self) -> fsx::Source<'_> {
        match &self.0 {
            Repr::File(f) => fsx::Source::File(&f.path, f.len),
            _ => fsx::Source::Bytes(self),
        }
    }

    /// The length in bytes, without reading a file.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Shared(b) => b.len(),
            Repr::Owned(b) => b.len(),
            Repr::Static(b) => b.len(),
            Repr::File(f) => usize::try_from(f.len).unwrap_or(usize::MAX),
        }
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sha256 of the bytes (a file's was taken when it was; others are hashed on every call:
    /// [`Digests`] remembers the large ones).
    pub fn sha256(&self) -> Sha256 {
        match &self.0 {
            Repr::Shared(b) => fsx::sha256(b),
            Repr::Owned(b) => fsx::sha256(b),
            Repr::Static(b) => fsx::sha256(b),
            Repr::File(f) => f.sha256,
        }
    }

    /// Whether both are the same source (one buffer, one borrow or one file): equal without a
    /// look at the bytes.
    pub fn ptr_eq(a: &Bytes, b: &Bytes) -> bool {
        match (&a.0, &b.0) {
            (Repr::Shared(x), Repr::Shared(y)) => Arc::ptr_eq(x, y),
            (Repr::Owned(x), Repr::Owned(y)) => Arc::ptr_eq(x, y),
            (Repr::Static(x), Repr::Static(y)) => std::ptr::eq(*x, *y),
            (Repr::File(x), Repr::File(y)) => Arc::ptr_eq(x, y) || (x.path == y.path && x.sha256 == y.sha256),
            _ => false,
        }
    }
}

/// The digests of large byte strings an operation has hashed, by content: a buffer of a megabyte
/// or more that many runtimes receive alike is hashed once per operation, however many trees it
/// goes into. A shared buffer ([`Bytes`] made from an `Arc<[u8]>`: the content's, which every
/// runtime emitting a file unchanged receives) is remembered by its address at any size; the
/// memo holds a clone of it, so the address is never reused for other bytes while it is known.
/// A value its caller owns (an install, for all of its targets), never a process-global: what
/// one operation hashed is not known to the next.
#[derive(Debug, Default)]
pub struct Digests {
    /// Large buffers, compared by content.
    large: std::sync::Mutex<Vec<(Bytes, Sha256)>>,
    /// Shared buffers, by address.
    shared: std::sync::Mutex<std::collections::HashMap<usize, (Bytes, Sha256)>>,
}

impl Digests {
    /// Byte strings shorter than this are hashed every time (a comparison would cost about as
    /// much as the digest).
    const MIN: usize = 1 << 20;
    /// At most this many are remembered (the large ones are few: a comparison of each new one
    /// against them all stays cheap).
    const MAX_ENTRIES: usize = 8;

    /// The sha256 of `bytes`: a file's as taken, a large buffer's from this memo when it was
    /// hashed before (the same buffer, or equal bytes), any other computed.
    pub fn sha256(&self, bytes: &Bytes) -> Sha256 {
        if let Repr::Shared(b) = &bytes.0 {
            let at = b.as_ptr() as usize;
            if let Ok(memo) = self.shared.lock()
                && let Some((_, h)) = memo.get(&at)
            {
                return *h;
            }
            let s = bytes.sha256();
            if let Ok(mut memo) = self.shared.lock() {
                memo.insert(at, (bytes.clone(), s));
            }
            return s;
        }
        if bytes.len() < Self::MIN || bytes.file().is_some() {
            return bytes.sha256();
        }
        if let Ok(memo) = self.large.lock()
            && let Some((_, h)) = memo.iter().find(|(b, _)| Bytes::ptr_eq(b, bytes) || b == bytes)
        {
            return *h;
        }
        let s = bytes.sha256();
        if let Ok(mut memo) = self.large.lock()
            && memo.len() < Self::MAX_ENTRIES
        {
            memo.push((bytes.clone(), s));
        }
        s
    }
}

#[cfg(test)]
impl Bytes {
    /// Whether a file's bytes were read into memory.
    pub(crate) fn loaded(&self) -> bool {
        matches!(&self.0, Repr::File(f) if f.loaded.get().is_some())
    }
}

/// The error of a file that no longer has the length it had when it was taken.
fn changed(path: &Path, was: u64, now: u64) -> std::io::Error {
    std::io::Error::other(format!(
        "{} changed while it was being installed ({was} bytes when taken, {now} now); run the install again",
        path.display()
    ))
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            Repr::Shared(b) => b,
            Repr::Owned(b) => b,
            Repr::Static(b) => b,
            // Reached only by callers that need the bytes themselves; the file was a regular file
            // of this length when taken, so failing to read it now means it was removed or
            // changed during the run, which no caller can go on from.
            Repr::File(f) => f.loaded.get_or_init(|| match fsx::read(&f.path) {
                Ok(b) if b.len() as u64 == f.len => b.into_boxed_slice(),
                Ok(b) => panic!("{}", changed(&f.path, f.len, b.len() as u64)),
                Err(e) => panic!("cannot read {} (it was there when the run began): {e}", f.path.display()),
            }),
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        // A file is compared by its hash, never read for it.
        Bytes::ptr_eq(self, other)
            || (self.len() == other.len()
                && match (self.file(), other.file()) {
                    (None, None) => self[..] == other[..],
                    _ => self.sha256() == other.sha256(),
                })
    }
}

impl Eq for Bytes {}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::File(d) => write!(f, "Bytes(file {}, {} bytes)", d.path.display(), d.len),
            _ => write!(f, "Bytes({} bytes)", self.len()),
        }
    }
}

/// A shared buffer: once hashed, a [`Digests`] memo keeps it alive for its whole operation, so
/// make one only of bytes that live that long anyway (the content's).
impl From<Arc<[u8]>> for Bytes {
    fn from(b: Arc<[u8]>) -> Bytes {
        Bytes(Repr::Shared(b))
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(mut b: Vec<u8>) -> Bytes {
        // Held for the rest of the run: no growth slack (shrinking a buffer does not move it).
        b.shrink_to_fit();
        Bytes(Repr::Owned(Arc::new(b)))
    }
}

impl From<String> for Bytes {
    fn from(s: String) -> Bytes {
        s.into_bytes().into()
    }
}

impl From<&'static [u8]> for Bytes {
    fn from(b: &'static [u8]) -> Bytes {
        Bytes(Repr::Static(b))
    }
}

impl From<&'static str> for Bytes {
    fn from(s: &'static str) -> Bytes {
        s.as_bytes().into()
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests set up files with std::fs")]
mod tests {
    use super::*;

    #[test]
    fn bytes_of_every_source_agree() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("helper");
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let file = Bytes::from_file(&p).unwrap();
        let shared = Bytes::from(data.clone());
        let leaked: &'static [u8] = Box::leak(data.clone().into_boxed_slice());
        let borrowed = Bytes::from(leaked);
        assert_eq!(file.file(), Some(p.as_path()));
        // What an install asks of a file never reads it into memory.
        let _ = (file.len(), file.sha256(), file.source(), file == file.clone(), file == shared);
        let to = tmp.path().join("copy");
        fsx::SharedWrites::default()
            .write_new(&fsx::DirCache::new(), &to, file.source(), &file.sha256(), fsx::FileMode::Regular, &to)
            .unwrap();
        assert!(!file.loaded(), "a file is hashed, compared and copied without being held");
        assert_eq!(std::fs::read(&to).unwrap(), data);
        assert_eq!(shared.file(), None);
        for b in [&file, &shared, &borrowed] {
            assert_eq!(b.len(), data.len());
            assert_eq!(b.sha256(), fsx::sha256(&data));
        }
        assert_eq!(file, shared);
        assert_eq!(&file[..], &data[..]);
        assert!(Bytes::ptr_eq(&file, &file.clone()));
        assert!(!Bytes::ptr_eq(&shared, &Bytes::from(data)));
    }

    #[test]
    fn a_file_that_changed_since_it_was_taken_is_never_copied() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("helper");
        std::fs::write(&p, b"one").unwrap();
        let file = Bytes::from_file(&p).unwrap();
        std::fs::write(&p, b"two").unwrap();
        let (shared, dirs) = (fsx::SharedWrites::default(), fsx::DirCache::new());
        let to = tmp.path().join("stage/helper");
        let e =
            shared.write_new(&dirs, &to, file.source(), &file.sha256(), fsx::FileMode::Executable, &to).unwrap_err();
        assert!(e.to_string().contains("changed while it was being installed"), "{e}");
        assert!(!to.exists(), "the wrong copy is removed");
        std::fs::write(&p, b"one").unwrap();
        shared.write_new(&dirs, &to, file.source(), &file.sha256(), fsx::FileMode::Executable, &to).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"one");
    }

    #[test]
    fn digests_remember_a_shared_buffer_by_address_and_nothing_else_small() {
        let memo = Digests::default();
        let shared = Bytes::from(Arc::<[u8]>::from(&b"a reference no runtime rewrites"[..]));
        let owned = Bytes::from(b"a reference no runtime rewrites".to_vec());
        for b in [&shared, &shared.clone(), &owned, &owned] {
            assert_eq!(memo.sha256(b), fsx::sha256(&owned));
        }
        let known = memo.shared.lock().unwrap();
        assert_eq!(known.len(), 1, "one entry for the shared buffer and its clone");
        assert!(Bytes::ptr_eq(&known.values().next().unwrap().0, &shared), "held, so its address stays its own");
        assert!(memo.large.lock().unwrap().is_empty(), "a small owned buffer is hashed each time, not held");
    }

    #[test]
    fn only_a_regular_file_is_taken() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(Bytes::from_file(tmp.path()).is_err());
        assert!(Bytes::from_file(&tmp.path().join("missing")).is_err());
    }
}
