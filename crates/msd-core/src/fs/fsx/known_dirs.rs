//! What this process knows about directories, so that a path is looked at once per run, not once
//! per file: which exist (and need no `mkdir` or symlink check) and which are absent (so nothing
//! under them exists and need not be opened or stat'ed). Keyed by the path's components joined
//! with `/` as bytes: a memcmp per comparison, and a directory's subtree is one range.
//!
//! Absence is only claimed for directories this process looked up and found missing; every way
//! this module creates something ([`super::create_dir_all`], [`super::rename`], a link) clears the created path
//! and its ancestors first, and every removal or move through it forgets what it removed. The
//! target home is held under the install lock meanwhile.

use std::collections::BTreeSet;
use std::path::{Component, Path};
use std::sync::Mutex;

static KNOWN: Mutex<BTreeSet<Vec<u8>>> = Mutex::new(BTreeSet::new());
static ABSENT: Mutex<BTreeSet<Vec<u8>>> = Mutex::new(BTreeSet::new());

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

fn is_clean(b: &[u8]) -> bool {
    !b.is_empty()
        && b != b"."
        && !b.ends_with(b"/")
        && !b.ends_with(b"/.")
        && !b.starts_with(b"./")
        && !b.windows(2).any(|w| w == b"//")
        && !b.windows(3).any(|w| w == b"/./")
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

pub(super) fn contains(dir: &Path) -> bool {
    let k = key_ref(dir);
    KNOWN.lock().map(|known| known.contains(k.as_ref())).unwrap_or(false)
}

pub(super) fn insert(dir: &Path) {
    let k = key(dir);
    appeared_key(&k);
    if let Ok(mut known) = KNOWN.lock() {
        known.insert(k);
    }
}

/// Forgets `path` and everything under it.
pub(super) fn forget(path: &Path) {
    if let Ok(mut known) = KNOWN.lock() {
        subtree(&mut known, &key(path));
    }
}

/// Records that nothing is at `dir`.
pub(super) fn insert_absent(dir: &Path) {
    if let Ok(mut absent) = ABSENT.lock() {
        absent.insert(key(dir));
    }
}

/// Whether `path` is, or is under, a directory recorded absent.
pub(super) fn absent(path: &Path) -> bool {
    let Ok(absent) = ABSENT.lock() else { return false };
    if absent.is_empty() {
        return false;
    }
    let k = key_ref(path);
    absent.contains(k.as_ref()) || k.iter().enumerate().any(|(i, b)| *b == b'/' && i > 0 && absent.contains(&k[..i]))
}

/// Something now exists at `path`: neither it nor an ancestor is absent any more.
pub(super) fn appeared(path: &Path) {
    appeared_key(&key(path));
}

/// A whole tree now exists at `path`: nothing at or under it is absent any more.
pub(super) fn appeared_under(path: &Path) {
    let k = key(path);
    appeared_key(&k);
    if let Ok(mut absent) = ABSENT.lock() {
        subtree(&mut absent, &k);
    }
}

fn appeared_key(k: &[u8]) {
    let Ok(mut absent) = ABSENT.lock() else { return };
    if absent.is_empty() {
        return;
    }
    absent.remove(k);
    for (i, b) in k.iter().enumerate() {
        if *b == b'/' && i > 0 {
            absent.remove(&k[..i]);
        }
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
            "..",
            "/h/.claude/.msd-install/txn/new/skills/msd-x",
        ] {
            assert_eq!(key(Path::new(p)), by_components(Path::new(p)), "{p}");
        }
        assert!(is_clean(b"/a/b") && !is_clean(b"/a//b") && !is_clean(b"/a/"));
    }
}
