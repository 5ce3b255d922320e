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

#![allow(clippy::disallowed_methods, reason = "the one module that touches the filesystem directly")]

use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use crate::fs::digest::Sha256;
use crate::fs::relpath::RelPath;

/// Unix permission bits of an emitted file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    /// `0o644`.
    Regular,
    /// `0o755`.
    Executable,
    /// `0o600`: a copy of a user's file that may hold a secret (a settings file's API key), staged
    /// or backed up before it gets the mode of the file it replaces ([`replace_in_place`]).
    Private,
}

impl FileMode {
    /// The permission bits.
    pub fn bits(self) -> u32 {
        match self {
            FileMode::Regular => 0o644,
            FileMode::Executable => 0o755,
            FileMode::Private => 0o600,
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
    /// A file (not a directory) sits where a directory on the way must be: `~/.claude/skills`
    /// being a file when `skills/msd-help/SKILL.md` is to be written.
    #[error("{path} is a file, not a directory: {dest} cannot be written under it")]
    NotADirectory {
        /// The file in the way.
        path: PathBuf,
        /// The destination asked for.
        dest: PathBuf,
    },
    /// An io error while inspecting a path on the way.
    #[error("{path}: {source}")]
    Io {
        /// The path inspected.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl ConfineError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ConfineError::Symlink { link, .. } => format!(
                "{} is a symlink; msd-install writes through one only when told: pass --allow-symlinks if the link is intended (a home linked into a dotfiles repository), or replace the link with a directory; nothing was written",
                link.display()
            ),
            ConfineError::NotADirectory { path, .. } => format!(
                "msd-install needs a directory at {}: move the file aside (e.g. `mv {0} {0}.bak`) and run again; nothing was written",
                path.display()
            ),
            ConfineError::Io { path, .. } => {
                format!("check that {} exists and is readable (permissions), then run again", path.display())
            }
        }
    }
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
    let last = dest.clone();
    let check = |p: &Path| -> Result<bool, ConfineError> {
        if known_dirs::contains(p) {
            return Ok(true);
        }
        if known_dirs::absent(p) {
            return Ok(false);
        }
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                Err(ConfineError::Symlink { link: p.to_path_buf(), root: root.to_path_buf(), dest: dest.clone() })
            }
            Ok(m) => {
                if m.is_dir() {
                    known_dirs::insert(p);
                } else if p != last {
                    return Err(ConfineError::NotADirectory { path: p.to_path_buf(), dest: dest.clone() });
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A missing directory on the way: nothing under it exists either.
                if p != last {
                    known_dirs::insert_absent(p);
                }
                Ok(false)
            }
            Err(source) => Err(ConfineError::Io { path: p.to_path_buf(), source }),
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
    if path.parent().is_some_and(known_dirs::absent) {
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

/// Writes `bytes` to `dest` atomically: a temp file in the same directory, fsync, explicit
/// mode, rename over the destination. Parent directories are created.
pub fn write_atomic(dest: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    write_atomic_bits(dest, bytes, mode.bits(), true)
}

/// Writes `bytes` to `dest` like [`write_atomic`], keeping the permission bits of the file it
/// replaces (a user's `.gitignore` of mode 664 stays 664); a new file gets `0o644`. When `dest`
/// is a symlink, the file it points to is replaced and the link stays a link.
pub fn write_atomic_keeping_mode(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = write_target(dest)?;
    let dest = target.as_path();
    #[cfg(unix)]
    let bits = {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(dest) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(e) if e.kind() == io::ErrorKind::NotFound => FileMode::Regular.bits(),
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", dest.display()))),
        }
    };
    #[cfg(not(unix))]
    let bits = FileMode::Regular.bits();
    write_atomic_bits(dest, bytes, bits, true)
}

/// Writes like [`write_atomic`] with mode `0o600`: a file only this user may read.
pub fn write_atomic_private(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_bits(dest, bytes, 0o600, true)
}

/// Writes `bytes` to `dest` like [`write_atomic_private`] (temp file, rename: a reader sees the
/// old bytes or the new ones), without the flush: for caches, where what a power cut leaves (the
/// old file, or an empty or missing one) only costs the cache.
pub fn write_atomic_unsynced(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_bits(dest, bytes, 0o600, false)
}

fn write_atomic_bits(dest: &Path, bytes: &[u8], bits: u32, sync: bool) -> io::Result<()> {
    let dir = dest.parent().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("no parent directory: {}", dest.display()))
    })?;
    create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".msd-tmp-")
        .tempfile_in(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("creating a temp file in {}: {e}", dir.display())))?;
    tmp.write_all(bytes)?;
    set_mode(tmp.as_file(), bits)?;
    if sync {
        tmp.as_file().sync_all()?;
        flushed();
    }
    tmp.persist(dest)
        .map_err(|e| io::Error::new(e.error.kind(), format!("renaming into {}: {}", dest.display(), e.error)))?;
    Ok(())
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File, bits: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
fn set_mode(_file: &std::fs::File, _bits: u32) -> io::Result<()> {
    Ok(())
}

/// Creates `dir` (its parent must exist) with mode `0o700`, or checks that an existing one is
/// private: a directory, not a symlink, owned by this user, with no group or other permissions.
/// Another user's or a shared directory is refused (`PermissionDenied`), never written into.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    known_dirs::appeared(dir);
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io::Error::new(e.kind(), format!("creating {}: {e}", dir.display()))),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse =
        |why: String| Err(io::Error::new(io::ErrorKind::PermissionDenied, format!("{}: {why}", dir.display())));
    if !meta.is_dir() {
        return refuse("exists and is not a directory (a symlink or a file)".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return refuse(format!("owned by uid {}, not by this user ({me})", meta.uid()));
        }
        if meta.mode() & 0o077 != 0 {
            return refuse(format!("mode {:o} lets other users in (expected 700)", meta.mode() & 0o777));
        }
    }
    Ok(())
}

/// `<temp dir>/<stem>-<uid>`: a directory name of this user's own in the shared temp dir (`<stem>`
/// where there are no user ids, whose temp dir is per user already). Make it with
/// [`ensure_private_dir`] before trusting what is in it: anyone can create the name first.
pub fn per_user_temp_dir(stem: &str) -> PathBuf {
    let name = match current_uid() {
        Some(uid) => format!("{stem}-{uid}"),
        None => stem.to_string(),
    };
    std::env::temp_dir().join(name)
}

/// The effective user id, `None` where there is none (not Unix).
pub fn current_uid() -> Option<u32> {
    #[cfg(unix)]
    return Some(rustix::process::geteuid().as_raw());
    #[cfg(not(unix))]
    None
}

/// When `path` (not followed through a symlink) was last modified.
pub fn modified(path: &Path) -> io::Result<std::time::SystemTime> {
    fs_err::symlink_metadata(path)?.modified()
}

/// Sets the modification time of the file at `path` to now.
pub fn touch(path: &Path) -> io::Result<()> {
    fs_err::OpenOptions::new().write(true).open(path)?.file().set_modified(std::time::SystemTime::now())
}

/// Like [`write_atomic`], but when `dest` is a symlink the file it points to is replaced (the
/// link stays a link); a dangling link is an error naming it.
pub fn write_atomic_through(dest: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    if std::fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink()) {
        let target = std::fs::canonicalize(dest).map_err(|e| {
            io::Error::new(e.kind(), format!("{} is a symlink to a file that does not exist: {e}", dest.display()))
        })?;
        return write_atomic(&target, bytes, mode);
    }
    write_atomic(dest, bytes, mode)
}

/// Where a write to `path` lands: the file a symlink at `path` points to (every link on the way
/// resolved), or `path` itself when it is no symlink. A dangling link is an error naming it.
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(path.to_path_buf());
    }
    std::fs::canonicalize(path).map_err(|e| {
        io::Error::new(e.kind(), format!("{} is a symlink to a file that does not exist: {e}", path.display()))
    })
}

/// Whether `path` itself (not followed) is a symlink.
pub fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Moves the file `staged` (written by this run, on the home's filesystem) over the user's file
/// at `dest`, keeping what the user set on it:
/// - its mode and owner: a `0600` file holding a key stays `0600`, a `0444` one read-only, and a
///   file of another user stays theirs when root runs this;
/// - a symlink at `dest` (a dotfiles manager's: stow, chezmoi, home-manager): the link stays and
///   the file it points to is replaced, atomically, by a temp file in that file's own directory
///   (which may be on another filesystem).
///
/// With nothing at `dest`, `staged` is moved there as it is. `staged` is gone afterwards. A
/// reader sees the old bytes or the new ones, never a mix.
pub fn replace_in_place(staged: &Path, dest: &Path) -> io::Result<()> {
    let target = write_target(dest)?;
    let meta = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", target.display()))),
    };
    if target == dest {
        if let Some(m) = &meta {
            let f = fs_err::OpenOptions::new().read(true).open(staged)?;
            keep_meta(f.file(), m).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dest.display())))?;
        }
        return rename(staged, dest);
    }
    let dir = target.parent().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("no parent directory: {}", target.display()))
    })?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".msd-tmp-")
        .tempfile_in(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("creating a temp file in {}: {e}", dir.display())))?;
    set_mode(tmp.as_file(), 0o600)?;
    io::copy(&mut fs_err::File::open(staged)?, tmp.as_file_mut())?;
    if let Some(m) = &meta {
        keep_meta(tmp.as_file(), m).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", target.display())))?;
    } else {
        set_mode(tmp.as_file(), FileMode::Regular.bits())?;
    }
    tmp.as_file().sync_all()?;
    flushed();
    tmp.persist(&target)
        .map_err(|e| io::Error::new(e.error.kind(), format!("renaming into {}: {}", target.display(), e.error)))?;
    known_dirs::forget(staged);
    fs_err::remove_file(staged)
}

/// Gives the open file `f` the owner and permission bits of `like`. The owner first: a change
/// of owner clears the set-id bits, which the mode then puts back. Another group that this user
/// may not give is left as it is (the owner and the mode are what keep a file private).
#[cfg(unix)]
fn keep_meta(f: &std::fs::File, like: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let have = f.metadata()?;
    if have.uid() != like.uid() {
        std::os::unix::fs::fchown(f, Some(like.uid()), Some(like.gid()))
            .map_err(|e| io::Error::new(e.kind(), format!("cannot keep the file's owner (uid {}): {e}", like.uid())))?;
    } else if have.gid() != like.gid() {
        let _ = std::os::unix::fs::fchown(f, None, Some(like.gid()));
    }
    f.set_permissions(std::fs::Permissions::from_mode(like.mode() & 0o7777))
}

#[cfg(not(unix))]
fn keep_meta(f: &std::fs::File, like: &std::fs::Metadata) -> io::Result<()> {
    f.set_permissions(like.permissions())
}

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

/// Creates a directory and its parents.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if known_dirs::contains(dir) {
        return Ok(());
    }
    // A directory `mkdir` just made is one (no look needed); one that was already there is
    // looked at: a real directory is remembered, a symlink to one is accepted (as
    // `std::fs::create_dir_all` does) but not remembered, so confinement still sees it.
    let made = match std::fs::create_dir(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) else {
                return Err(io::Error::new(e.kind(), format!("creating {}: {e}", dir.display())));
            };
            create_dir_all(parent)?;
            match std::fs::create_dir(dir) {
                Ok(()) => true,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
                Err(e) => return Err(io::Error::new(e.kind(), format!("creating {}: {e}", dir.display()))),
            }
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(io::Error::new(e.kind(), format!("creating {}: {e}", dir.display()))),
    };
    if made || std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        known_dirs::insert(dir);
    } else if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("creating {}: something that is not a directory is there", dir.display()),
        ));
    }
    Ok(())
}

/// What this process knows about directories, so that a path is looked at once per run, not once
/// per file: which exist (and need no `mkdir` or symlink check) and which are absent (so nothing
/// under them exists and need not be opened or stat'ed). Keyed by the path's components joined
/// with `/` as bytes: a memcmp per comparison, and a directory's subtree is one range.
///
/// Absence is only claimed for directories this process looked up and found missing; every way
/// this module creates something ([`create_dir_all`], [`rename`], a link) clears the created path
/// and its ancestors first, and every removal or move through it forgets what it removed. The
/// target home is held under the install lock meanwhile.
mod known_dirs {
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
        absent.contains(k.as_ref())
            || k.iter().enumerate().any(|(i, b)| *b == b'/' && i > 0 && absent.contains(&k[..i]))
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
}

/// Whether `dir` is a directory (following symlinks), asked of the disk once per process: the
/// answer, present or absent, is remembered (see `known_dirs`), and a path under an absent
/// directory is absent without a look.
pub fn dir_exists(dir: &Path) -> bool {
    if known_dirs::contains(dir) {
        return true;
    }
    if known_dirs::absent(dir) {
        return false;
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {
            known_dirs::insert(dir);
            true
        }
        Ok(_) => false,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            known_dirs::insert_absent(dir);
            false
        }
        Err(_) => false,
    }
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
        known_dirs::forget(dir);
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
}

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

/// Whether `path` exists (following symlinks).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The file name (lossy UTF-8).
    pub name: String,
    /// A directory (not followed through a symlink).
    pub is_dir: bool,
    /// A regular file (not followed through a symlink).
    pub is_file: bool,
    /// A symlink.
    pub is_symlink: bool,
    /// The file name as the OS gave it (for names that are not UTF-8).
    pub os_name: std::ffi::OsString,
}

/// Lists `dir`, sorted by name; a missing directory lists as empty.
pub fn list_dir(dir: &Path) -> io::Result<Vec<DirEntry>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.kind() == io::ErrorKind::NotADirectory => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(io::Error::new(e.kind(), format!("listing {}: {e}", dir.display()))),
    };
    let mut out = Vec::new();
    for entry in rd {
        let entry = entry.map_err(|e| io::Error::new(e.kind(), format!("listing {}: {e}", dir.display())))?;
        let ft = entry.file_type().map_err(|e| io::Error::new(e.kind(), format!("listing {}: {e}", dir.display())))?;
        out.push(DirEntry {
            name: entry.file_name().to_string_lossy().into_owned(),
            is_dir: ft.is_dir(),
            is_file: ft.is_file(),
            is_symlink: ft.is_symlink(),
            os_name: entry.file_name(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Lists `dir` like [`list_dir`], but a missing directory is an error.
pub fn list_existing_dir(dir: &Path) -> io::Result<Vec<DirEntry>> {
    fs_err::metadata(dir)?;
    list_dir(dir)
}

/// Whether `dir` holds no entry (a missing directory is empty; a file is an error).
pub fn is_empty_dir(dir: &Path) -> io::Result<bool> {
    match fs_err::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(e),
    }
}

/// The canonical, absolute form of `path` (symlinks resolved); the error names the path.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    fs_err::canonicalize(path)
}

/// Whether something (a file, a directory, a symlink, even a dangling one) is at `path`.
pub fn lexists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Reads a UTF-8 file; the error names the path.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    fs_err::read_to_string(path)
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

/// The directory (under a target home) that holds the install lock, the journal and the staging
/// area of a run in progress. It exists only while a run holds the target, or after a run was
/// killed (the next run then finds its journal).
pub const WORK_DIR: &str = ".msd-install";

/// Writes `bytes` to a new file at `path` (parents created). For staging areas, where the file
/// is not visible to anyone until it is renamed into place; [`sync_fs`] makes a whole staged
/// tree durable at once (on Linux; elsewhere each file is fsynced here).
pub fn write_new(path: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    let (mut f, exact) = open_new(path, mode)?;
    f.write_all(bytes)?;
    close_new(f, exact, mode)
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
fn close_new(f: fs_err::File, exact: bool, mode: FileMode) -> io::Result<()> {
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

/// Writes a new file at `path` like [`write_new`], for bytes that many targets receive alike (the
/// helper binary goes into every runtime's tree). The first call for a `sha256` writes the file;
/// later calls hard-link the file already written when it is on the same filesystem, is still the
/// same inode and has the same size, and write a copy otherwise (another filesystem, or a file
/// that moved away or changed). `also_at` is where the written file will be renamed to (its
/// final destination), so a later call still finds it after the move. Returns whether it linked.
///
/// The targets stay independent: a link is a name, so removing or replacing one target's file
/// (uninstall, upgrade: both unlink or rename over the name) leaves every other name intact.
///
/// Bytes read from a file ([`Source::File`]) are copied from it in blocks, never held whole, and
/// the copy must have `sha256` (the file did not change since it was hashed for the plan).
pub fn write_new_shared(
    path: &Path,
    src: Source<'_>,
    sha256: &Sha256,
    mode: FileMode,
    also_at: &Path,
) -> io::Result<bool> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    let len = match src {
        Source::Bytes(b) => b.len() as u64,
        Source::File(_, len) => len,
    };
    if shared::link(sha256, len, path) {
        return Ok(true);
    }
    match src {
        Source::File(from, _) => copy_new_checked(path, from, sha256, mode)?,
        Source::Bytes(b) => write_new(path, b, mode)?,
    }
    shared::remember(sha256, path, also_at);
    Ok(false)
}

/// What [`write_new_shared`] writes: bytes in memory, or a file of this length to copy.
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
    close_new(f, exact, mode)
}

/// Reads `src` to its end in blocks, hashing each and handing it to `each`: the hex sha256 and
/// the length read.
fn hash_blocks(src: &mut fs_err::File, mut each: impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<(Sha256, u64)> {
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

/// The length of the regular file at `path` (a symlink is followed); an error for anything else.
pub fn regular_file_len(path: &Path) -> io::Result<u64> {
    let m = fs_err::metadata(path)?;
    if !m.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display())));
    }
    Ok(m.len())
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

/// The files [`write_new_shared`] wrote in this process, by content.
mod shared {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    use crate::fs::digest::Sha256;

    struct Written {
        sha256: Sha256,
        #[cfg(unix)]
        ino: (u64, u64),
        len: u64,
        names: Vec<PathBuf>,
    }

    static WRITTEN: Mutex<Vec<Written>> = Mutex::new(Vec::new());

    #[cfg(unix)]
    fn id(m: &std::fs::Metadata) -> (u64, u64) {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    }

    /// Links `to` to a remembered file of these bytes; false when none can be linked.
    pub(super) fn link(sha256: &Sha256, len: u64, to: &Path) -> bool {
        let Ok(mut written) = WRITTEN.lock() else { return false };
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
    pub(super) fn remember(sha256: &Sha256, path: &Path, also_at: &Path) {
        let Ok(m) = std::fs::symlink_metadata(path) else { return };
        if let Ok(mut written) = WRITTEN.lock() {
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

/// [`sync_fs`] of every path, one call per filesystem: on Linux a call flushes the whole
/// filesystem, so the first path on each device covers the others (elsewhere each path is
/// flushed). Returns how many flushes were made.
pub fn sync_fs_each_once(paths: &[&Path]) -> io::Result<usize> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let mut devices = std::collections::BTreeSet::new();
        for p in paths {
            if devices.insert(fs_err::metadata(p)?.dev()) {
                sync_fs(p)?;
            }
        }
        Ok(devices.len())
    }
    #[cfg(not(target_os = "linux"))]
    {
        for p in paths {
            sync_fs(p)?;
        }
        Ok(paths.len())
    }
}

/// Flushes the filesystem holding `path` to disk (`syncfs`), so that everything written there
/// so far survives a power cut: one call for a staged tree instead of an fsync per file.
pub fn sync_fs(path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let f = fs_err::File::open(path)?;
        rustix::fs::syncfs(f.file()).map_err(io::Error::from)?;
        flushed();
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        sync_dir(path);
        Ok(())
    }
}

/// sha256 of the file at `path`, `None` when it does not exist.
pub fn sha256_file(path: &Path) -> io::Result<Option<Sha256>> {
    Ok(read_if_exists(path)?.map(|b| sha256(&b)))
}

/// What the file system says about a file, enough to tell that it has not changed since it was
/// looked at: size, modification and status-change times (nanoseconds), inode, device and mode
/// bits, of the path itself (a symlink is not followed). Any write, rename over, `chmod`, `touch`
/// or replacement changes at least one of them; the status-change time cannot be set back by a
/// user. Elsewhere than Unix: size and modification time only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct StatKey(pub [i64; 8]);

/// The [`StatKey`] of `path`, `None` when nothing is there (a path under a directory known to be
/// absent is not looked at).
pub fn stat_key(path: &Path) -> io::Result<Option<StatKey>> {
    if path.parent().is_some_and(known_dirs::absent) {
        return Ok(None);
    }
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(Some(StatKey([
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
            m.ino() as i64,
            m.dev() as i64,
            i64::from(m.mode()),
        ])))
    }
    #[cfg(not(unix))]
    {
        let t = m.modified()?.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Ok(Some(StatKey([m.len() as i64, t.as_secs() as i64, i64::from(t.subsec_nanos()), 0, 0, 0, 0, 0])))
    }
}

/// The [`StatKey`] of `rel` under `root`, its directories checked as [`confined`] checks them
/// (each one once per process); the file itself is not followed, so a symlink there has a stat of
/// its own (another mode) rather than an error.
pub fn confined_stat(root: &Path, rel: &RelPath, allow_symlinks: bool) -> Result<Option<StatKey>, ConfineError> {
    let dest = match rel.parent() {
        Some(dir) => confined(root, &dir, allow_symlinks)?.join(rel.file_name()),
        None => confined(root, rel, allow_symlinks)?,
    };
    stat_key(&dest).map_err(|source| ConfineError::Io { path: dest.clone(), source })
}

/// Keeps the current bytes of `src` at `dst` without disturbing `src`: a hard link where the
/// filesystem allows one, a copy otherwise.
pub fn preserve(src: &Path, dst: &Path) -> io::Result<()> {
    if let Some(dir) = dst.parent() {
        create_dir_all(dir)?;
    }
    known_dirs::appeared(dst);
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(_) => {
            let bytes = fs_err::read(src)?;
            write_new(dst, &bytes, mode_of(src)?)
        }
    }
}

fn mode_of(path: &Path) -> io::Result<FileMode> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let m = fs_err::metadata(path)?.permissions().mode();
        // A copy of a file only its owner may read stays so.
        Ok(if m & 0o111 != 0 {
            FileMode::Executable
        } else if m & 0o044 == 0 {
            FileMode::Private
        } else {
            FileMode::Regular
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(FileMode::Regular)
    }
}

/// Moves `src` to `dst` by rename (parents of `dst` created), replacing `dst` atomically. When
/// the two are on different filesystems (a mount point, or a link allowed by `--allow-symlinks`),
/// falls back to an atomic copy into `dst`'s directory and removes `src`.
pub fn rename(src: &Path, dst: &Path) -> io::Result<()> {
    if let Some(dir) = dst.parent() {
        create_dir_all(dir)?;
    }
    // A moved directory is no longer where it was, and the target may have been replaced.
    known_dirs::forget(src);
    known_dirs::forget(dst);
    known_dirs::appeared(dst);
    match std::fs::rename(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(EXDEV) => {
            let bytes = fs_err::read(src)?;
            write_atomic(dst, &bytes, mode_of(src)?)?;
            fs_err::remove_file(src)
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("moving {} to {}: {e}", src.display(), dst.display()))),
    }
}

/// Moves `src` to `dst` (parents of `dst` created) only if nothing is at `dst`, atomically
/// (`renameat2` with `RENAME_NOREPLACE` on Linux). `Ok(false)` when it did not move: something
/// is at `dst`, `src` is gone, or the filesystem cannot (another device, no such flag, not
/// Linux); the caller then looks at `dst` and moves it with [`rename`].
pub fn rename_new(src: &Path, dst: &Path) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        if let Some(dir) = dst.parent() {
            create_dir_all(dir)?;
        }
        known_dirs::appeared(dst);
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, src, CWD, dst, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST | rustix::io::Errno::NOENT | rustix::io::Errno::XDEV)
            | Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP) => Ok(false),
            Err(e) => Err(io::Error::new(
                io::Error::from(e).kind(),
                format!("moving {} to {}: {e}", src.display(), dst.display()),
            )),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (src, dst);
        Ok(false)
    }
}

/// Moves the directory `src` to `dst` (parents of `dst` created) only if nothing is at `dst`,
/// atomically, like [`rename_new`] does for a file: `Ok(false)` when it did not move (something
/// is at `dst`, `src` is gone, another device, not Linux). What this process knew about
/// directories under `src` is forgotten.
pub fn rename_dir_new(src: &Path, dst: &Path) -> io::Result<bool> {
    let moved = rename_new(src, dst)?;
    if moved {
        known_dirs::forget(src);
        // What was found absent under `dst` before may be in the moved tree now.
        known_dirs::appeared_under(dst);
    }
    Ok(moved)
}

/// `EXDEV`, "cross-device link", the same number on every Unix and unused elsewhere.
const EXDEV: i32 = 18;

/// Fsyncs a directory so the renames inside it survive a power cut (a no-op where directories
/// cannot be opened).
pub fn sync_dir(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
        flushed();
    }
}

thread_local! {
    static FLUSHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many flushes (an fsync of a file or directory, a `syncfs`) this thread has asked of the
/// disk so far. Each costs the disk's latency whatever it carries, so a run counts them: the
/// tests hold a commit to its number of flushes.
pub fn flushes() -> usize {
    FLUSHES.with(std::cell::Cell::get)
}

fn flushed() {
    FLUSHES.with(|c| c.set(c.get() + 1));
}

/// Removes a directory tree; a missing one is not an error.
pub fn remove_dir_all_if_exists(dir: &Path) -> io::Result<()> {
    known_dirs::forget(dir);
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io::Error::new(e.kind(), format!("removing {}: {e}", dir.display()))),
    }
}

/// Removes `dir` if it is an empty directory; reports whether it did.
pub fn remove_dir_if_empty(dir: &Path) -> bool {
    let removed = std::fs::remove_dir(dir).is_ok();
    if removed {
        known_dirs::forget(dir);
    }
    removed
}

/// Every regular file under `dir` (recursively, symlinks not followed), as paths relative to it
/// with `/` separators, sorted. A missing directory has no files.
pub fn list_files(dir: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = match std::fs::read_dir(&d) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io::Error::new(e.kind(), format!("reading {}: {e}", d.display()))),
        };
        for entry in rd {
            let entry = entry?;
            let ft = entry.file_type()?;
            let p = entry.path();
            if ft.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(dir) {
                out.push(rel.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Proves that files can be created in `dir` without creating any: the kernel is asked
/// (`faccessat(W_OK|X_OK, AT_EACCESS)`), which answers for the effective user, root, immutable
/// flags and read-only mounts alike; the permission bits alone do not tell. Nothing is left
/// behind, whenever the process is killed.
#[cfg(unix)]
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    use rustix::fs::{Access, AtFlags, CWD, accessat};
    accessat(CWD, dir, Access::WRITE_OK | Access::EXEC_OK, AtFlags::EACCESS)
        .map_err(|e| io::Error::new(io::Error::from(e).kind(), format!("{} is not writable: {e}", dir.display())))
}

/// See the unix version; elsewhere a temp file is created and removed.
#[cfg(not(unix))]
pub fn probe_writable(dir: &Path) -> io::Result<()> {
    tempfile::Builder::new()
        .prefix(LEFTOVER_PREFIXES[1])
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| io::Error::new(e.kind(), format!("{} is not writable: {e}", dir.display())))
}

/// Name prefixes of the temp files msd creates (atomic writes, writability probes): a file
/// with one of them was left by a killed run, never written by a user.
pub const LEFTOVER_PREFIXES: [&str; 2] = [".msd-tmp-", ".msd-probe-"];

/// Removes from `dir` (not recursively) the regular files whose names start with one of
/// `prefixes` (some of [`LEFTOVER_PREFIXES`]): temp files a killed run left. Returns their
/// names. A missing directory holds none. The caller holds whatever lock keeps a live run from
/// writing such a file there.
pub fn remove_leftovers(dir: &Path, prefixes: &[&str]) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    for e in list_dir(dir)? {
        if e.is_file && prefixes.iter().any(|p| e.name.starts_with(p)) {
            remove_file_if_exists(&dir.join(&e.name))?;
            out.push(e.name);
        }
    }
    Ok(out)
}

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
        if let Some(dir) = self.path.parent()
            && std::fs::remove_dir(dir).is_ok()
        {
            // Removed: a later lock of the same home in this process makes it again.
            known_dirs::forget(dir);
        }
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsx_a_directory_moved_in_whole_clears_what_was_absent_under_it() {
        let tmp = tempfile::tempdir().unwrap();
        let staged = tmp.path().join("staged/msd-a");
        std::fs::create_dir_all(staged.join("refs")).unwrap();
        let dst = tmp.path().join("home/msd-a");
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        assert!(!dir_exists(&dst.join("refs")), "absent before, and remembered so");
        assert!(rename_dir_new(&staged, &dst).unwrap());
        assert!(dir_exists(&dst.join("refs")), "the moved tree is seen");
    }

    #[test]
    fn fsx_absent_directories_are_looked_at_once_and_cleared_by_creation() {
        let t = tempfile::tempdir().unwrap();
        let gone = t.path().join("gone");
        assert!(!dir_exists(&gone));
        assert!(known_dirs::absent(&gone.join("a/b.md")), "under an absent directory");
        assert!(!known_dirs::absent(&t.path().join("gone-too")), "a sibling is not under it");
        assert_eq!(read_if_exists(&gone.join("x")).unwrap(), None);
        // Creating anything under it clears it and its ancestors.
        write_atomic(&gone.join("a/b.md"), b"x", FileMode::Regular).unwrap();
        assert!(!known_dirs::absent(&gone.join("a/b.md")) && dir_exists(&gone));
        assert_eq!(read_if_exists(&gone.join("a/b.md")).unwrap().as_deref(), Some(&b"x"[..]));
        // confined() records a missing component, and a rename into it clears it.
        let other = t.path().join("other");
        let rel = RelPath::new("d/e/f.md").unwrap();
        confined(&other, &rel, false).unwrap();
        assert!(known_dirs::absent(&other.join("d")));
        std::fs::create_dir(t.path().join("src")).unwrap();
        rename(&t.path().join("src"), &other.join("d")).unwrap();
        assert!(!known_dirs::absent(&other.join("d")) && dir_exists(&other.join("d")));
    }

    #[test]
    fn fsx_forgetting_a_directory_forgets_exactly_its_subtree() {
        for d in ["/k/a", "/k/a/b", "/k/a/b/c", "/k/ab", "/k/b"] {
            known_dirs::insert(Path::new(d));
        }
        known_dirs::forget(Path::new("/k/a"));
        for (d, known) in [("/k/a", false), ("/k/a/b", false), ("/k/a/b/c", false), ("/k/ab", true), ("/k/b", true)] {
            assert_eq!(known_dirs::contains(Path::new(d)), known, "{d}");
        }
    }
}
