//! [`DirCache`]: what one operation has learned about directories, so that a path is looked at
//! once per operation, not once per file: which exist (and need no `mkdir` or symlink check) and
//! which are absent (so nothing under them exists and need not be opened or stat'ed).
//!
//! Why a value and not a process-global: whether a call touches the disk must depend only on
//! what the caller passes, never on what ran before it in the process (a second install in a
//! fresh target, a test after another, a user's `mkdir` between two runs). The plain functions
//! of fsx remember nothing; the methods of a [`DirCache`] remember, for as long as the caller
//! keeps it: one survey, or one target's survey, staging and commit under its install lock.
//!
//! Absence is only claimed for directories looked up through the cache and found missing; every
//! way a [`DirCache`] method creates something (`create_dir_all`, `rename`, a link) clears the
//! created path and its ancestors first, and every removal or move through it forgets what it
//! removed. A caller that changes the tree behind its cache's back (a plain fsx call on the same
//! paths) must not use that cache afterwards.
//!
//! Keyed by the path's components joined with `/` as bytes: a memcmp per comparison, and a
//! directory's subtree is one range.

use std::collections::BTreeSet;
use std::path::{Component, Path};
use std::sync::Mutex;

/// What an operation has learned about the directories it looked at (see the module doc). Empty
/// when made; `Sync`, so one survey, staging and commit can share it across threads.
#[derive(Debug, Default)]
pub struct DirCache {
    known: Mutex<BTreeSet<Vec<u8>>>,
    absent: Mutex<BTreeSet<Vec<u8>>>,
}

impl DirCache {
    /// An empty cache: its first look at every path goes to the disk.
    pub fn new() -> DirCache {
        DirCache::default()
    }
}

/// The cache a primitive of fsx is given: `None` for the plain functions (every look goes to the
/// disk, nothing is remembered), `Some` for the methods of [`DirCache`].
pub(super) type Dirs<'a> = Option<&'a DirCache>;

/// What the primitives ask of their cache; with none, nothing is known and nothing remembered.
pub(super) trait Knows {
    /// Whether `dir` is known to be a directory.
    fn contains(self, dir: &Path) -> bool;
    /// Remembers that `dir` is a directory (and so neither it nor an ancestor is absent).
    fn insert(self, dir: &Path);
    /// Forgets `path` and everything under it.
    fn forget(self, path: &Path);
    /// Records that nothing is at `dir`.
    fn insert_absent(self, dir: &Path);
    /// Whether `path` is, or is under, a directory recorded absent.
    fn absent(self, path: &Path) -> bool;
    /// Something now exists at `path`: neither it nor an ancestor is absent any more.
    fn appeared(self, path: &Path);
    /// A whole tree now exists at `path`: nothing at or under it is absent any more.
    fn appeared_under(self, path: &Path);
}

impl Knows for Dirs<'_> {
    fn contains(self, dir: &Path) -> bool {
        let Some(c) = self else { return false };
        let k = key_ref(dir);
        c.known.lock().map(|known| known.contains(k.as_ref())).unwrap_or(false)
    }

    fn insert(self, dir: &Path) {
        let Some(c) = self else { return };
        let k = key(dir);
        c.appeared_key(&k);
        if let Ok(mut known) = c.known.lock() {
            known.insert(k);
        }
    }

    fn forget(self, path: &Path) {
        let Some(c) = self else { return };
        if let Ok(mut known) = c.known.lock() {
            subtree(&mut known, &key(path));
        }
    }

    fn insert_absent(self, dir: &Path) {
        let Some(c) = self else { return };
        if let Ok(mut absent) = c.absent.lock() {
            absent.insert(key(dir));
        }
    }

    fn absent(self, path: &Path) -> bool {
        let Some(c) = self else { return false };
        let Ok(absent) = c.absent.lock() else { return false };
        if absent.is_empty() {
            return false;
        }
        let k = key_ref(path);
        absent.contains(k.as_ref()) || memchr::memchr_iter(b'/', &k).any(|i| i > 0 && absent.contains(&k[..i]))
    }

    fn appeared(self, path: &Path) {
        let Some(c) = self else { return };
        c.appeared_key(&key(path));
    }

    fn appeared_under(self, path: &Path) {
        let Some(c) = self else { return };
        let k = key(path);
        c.appeared_key(&k);
        if let Ok(mut absent) = c.absent.lock() {
            subtree(&mut absent, &k);
        }
    }
}

impl DirCache {
    fn appeared_key(&self, k: &[u8]) {
        let Ok(mut absent) = self.absent.lock() else { return };
        if absent.is_empty() {
            return;
        }
        absent.remove(k);
        for i in memchr::memchr_iter(b'/', k).filter(|&i| i > 0) {
            absent.remove(&k[..i]);
        }
    }
}

fn key(p: &Path) -> Vec<u8> {
    key_ref(p).into_owned()
}

/// The key of `p`, borrowed when the path's bytes already are it. The paths this module is
/// given are joined from clean parts, so their bytes are the key; only a path with `//`,
/// `/./`, a leading `./` or a trailing `/` or `/.` is taken apart. (A lookup then allocates
/// nothing.)
fn key_ref(p: &Path) -> std::borrow::Cow<'_, [u8]> {
    let raw = p.as_os_str().as_encoded_bytes();
    if cfg!(unix) && is_clean(raw) {
        return std::borrow::Cow::Borrowed(raw);
    }
    std::borrow::Cow::Owned(by_components(p))
}

/// Two folds over pairs and triples of bytes with no early exit and no slice compares, which the
/// compiler turns into vector code, not a scan comparing every window as a slice: this runs for
/// every lookup, tens of thousands of times in one `--all` (it was 11% of its instructions other
/// than sha256).
#[allow(clippy::needless_bitwise_bool, reason = "no early exit, so that the folds vectorise")]
fn is_clean(b: &[u8]) -> bool {
    if b.is_empty() || b == b"." || b.starts_with(b"./") || b.ends_with(b"/") || b.ends_with(b"/.") {
        return false;
    }
    let double = b.iter().zip(&b[1..]).fold(false, |a, (&x, &y)| a | ((x == b'/') & (y == b'/')));
    let dot = b
        .iter()
        .zip(&b[1..])
        .zip(b.get(2..).unwrap_or_default())
        .fold(false, |a, ((&x, &y), &z)| a | ((x == b'/') & (y == b'.') & (z == b'/')));
    !(double | dot)
}

fn by_components(p: &Path) -> Vec<u8> {
    let mut k = Vec::with_capacity(p.as_os_str().len());
    for c in p.components() {
        let part = match c {
            Component::RootDir => {
                k.push(b'/');
                continue;
            }
            Component::CurDir => continue,
            Component::Prefix(pr) => pr.as_os_str().as_encoded_bytes(),
            Component::ParentDir => b"..".as_slice(),
            Component::Normal(n) => n.as_encoded_bytes(),
        };
        if !k.is_empty() && !k.ends_with(b"/") {
            k.push(b'/');
        }
        k.extend_from_slice(part);
    }
    k
}

/// `k` and every key under it, in a set ordered by bytes.
fn subtree(set: &mut BTreeSet<Vec<u8>>, k: &[u8]) {
    set.remove(k);
    let mut lo = k.to_vec();
    lo.push(b'/');
    let mut hi = k.to_vec();
    hi.push(b'/' + 1);
    let gone: Vec<Vec<u8>> = set.range(lo..hi).cloned().collect();
    for g in gone {
        set.remove(&g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raw_key_of_a_clean_path_is_its_key_by_components() {
        for p in [
            "/",
            "/a",
            "/a/b.md",
            "a/b",
            "a",
            ".",
            "./a",
            "a/",
            "a/.",
            "//a",
            "a//b",
            "a/./b",
            "/a/../b",
            "/a/.b",
            ".a/b",
            "..",
            "/h/.claude/.msd-install/txn/new/skills/msd-x",
        ] {
            assert_eq!(key(Path::new(p)), by_components(Path::new(p)), "{p}");
        }
        assert!(is_clean(b"/a/b") && !is_clean(b"/a//b") && !is_clean(b"/a/"));
        for (p, clean) in [
            ("/a/.b", true),
            ("/a/..", true),
            ("/a/.", false),
            ("/a/./b", false),
            ("./a", false),
            (".a/b", true),
            ("a/b/", false),
            ("/", false),
            ("", false),
        ] {
            assert_eq!(is_clean(p.as_bytes()), clean, "{p}");
        }
    }
}
