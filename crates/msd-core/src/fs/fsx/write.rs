//! Atomic writes and moves of whole files: a temp file in the destination's directory, its mode
//! set, fsync, rename; renames (atomic, no-replace, across filesystems by an atomic copy); and
//! [`replace_in_place`], which keeps what the user set on the file it replaces (mode, owner, a
//! symlink).
//!
//! Invariant: a reader sees the old bytes or the new bytes, never a half-written file.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::dir_cache::{DirCache, Dirs, Knows};
use super::dirs::{create_dir_all, create_dir_all_in};
use super::sync::flushed;

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

/// Writes `bytes` to `dest` atomically: a temp file in the same directory, fsync, explicit
/// mode, rename over the destination. Parent directories are created.
pub fn write_atomic(dest: &Path, bytes: &[u8], mode: FileMode) -> io::Result<()> {
    write_atomic_bits(dest, bytes, mode.bits(), true)
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
pub(super) fn set_mode(file: &std::fs::File, bits: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(bits))
}

#[cfg(not(unix))]
pub(super) fn set_mode(_file: &std::fs::File, _bits: u32) -> io::Result<()> {
    Ok(())
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

/// Moves the file `staged` (written by this run, on the home's filesystem) over the user's file
/// at `dest`, keeping what the user set on it:
/// - its mode and owner: a `0600` file holding a key stays `0600`, a `0444` one read-only, and a
///   file of another user stays theirs when root runs this (where the owner cannot be kept, by a
///   user who may not give the file away, nothing is written and the error says so);
/// - a symlink at `dest` (a dotfiles manager's: stow, chezmoi, home-manager): the link stays and
///   the file it points to is replaced, atomically, by a temp file in that file's own directory
///   (which may be on another filesystem).
///
/// With nothing at `dest`, `staged` is moved there as it is. `staged` is gone afterwards. A
/// reader sees the old bytes or the new ones, never a mix.
pub fn replace_in_place(staged: &Path, dest: &Path) -> io::Result<()> {
    replace_kept(None, New::Staged(staged), dest)
}

/// Writes `bytes` over the user's file at `dest` the way [`replace_in_place`] moves a staged
/// file there (one primitive): its mode and owner are kept (a `.gitignore` of mode 664 stays
/// 664, another user's stays theirs), a symlink stays and the file it points to is replaced. A
/// new file gets `0o644`, its directories created.
pub fn write_in_place(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_kept(None, New::Bytes(bytes), dest)
}

/// The new content of a user's file: a file this run staged (moved, gone afterwards), or bytes.
#[derive(Clone, Copy)]
enum New<'a> {
    Staged(&'a Path),
    Bytes(&'a [u8]),
}

/// [`replace_in_place`] and [`write_in_place`]: `new` over the file at `dest` (through a link at
/// `dest`), with the mode and owner of the file it replaces, atomically.
fn replace_kept(c: Dirs<'_>, new: New<'_>, dest: &Path) -> io::Result<()> {
    let target = write_target(dest)?;
    let meta = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", target.display()))),
    };
    if let New::Staged(staged) = new
        && target == dest
    {
        // On the same filesystem and in place: the staged file itself gets what is kept, and moves.
        if let Some(m) = &meta {
            let f = fs_err::OpenOptions::new().read(true).open(staged)?;
            keep_meta(f.file(), m).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dest.display())))?;
        }
        return rename_in(c, staged, dest);
    }
    let dir = target.parent().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("no parent directory: {}", target.display()))
    })?;
    if meta.is_none() {
        create_dir_all_in(c, dir)?;
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".msd-tmp-")
        .tempfile_in(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("creating a temp file in {}: {e}", dir.display())))?;
    // Nobody else's until it has the mode of the file it replaces (it may hold a secret).
    set_mode(tmp.as_file(), 0o600)?;
    match new {
        New::Staged(staged) => {
            io::copy(&mut fs_err::File::open(staged)?, tmp.as_file_mut())?;
        }
        New::Bytes(bytes) => tmp.write_all(bytes)?,
    }
    if let Some(m) = &meta {
        keep_meta(tmp.as_file(), m).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", target.display())))?;
    } else {
        set_mode(tmp.as_file(), FileMode::Regular.bits())?;
    }
    tmp.as_file().sync_all()?;
    flushed();
    tmp.persist(&target)
        .map_err(|e| io::Error::new(e.error.kind(), format!("renaming into {}: {}", target.display(), e.error)))?;
    if let New::Staged(staged) = new {
        c.forget(staged);
        fs_err::remove_file(staged)?;
    }
    Ok(())
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

/// Moves `src` to `dst` by rename (parents of `dst` created), replacing `dst` atomically. When
/// the two are on different filesystems (a mount point, or a link allowed by `--allow-symlinks`),
/// falls back to an atomic copy into `dst`'s directory and removes `src`.
pub fn rename(src: &Path, dst: &Path) -> io::Result<()> {
    rename_in(None, src, dst)
}

pub(super) fn rename_in(c: Dirs<'_>, src: &Path, dst: &Path) -> io::Result<()> {
    if let Some(dir) = dst.parent() {
        create_dir_all_in(c, dir)?;
    }
    // A moved directory is no longer where it was, and the target may have been replaced.
    c.forget(src);
    c.forget(dst);
    c.appeared(dst);
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
    rename_new_in(None, src, dst)
}

pub(super) fn rename_new_in(c: Dirs<'_>, src: &Path, dst: &Path) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        if let Some(dir) = dst.parent() {
            create_dir_all_in(c, dir)?;
        }
        c.appeared(dst);
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
/// is at `dst`, `src` is gone, another device, not Linux). What a [`DirCache`] given knew about
/// directories under `src` is forgotten.
pub fn rename_dir_new(src: &Path, dst: &Path) -> io::Result<bool> {
    rename_dir_new_in(None, src, dst)
}

pub(super) fn rename_dir_new_in(c: Dirs<'_>, src: &Path, dst: &Path) -> io::Result<bool> {
    let moved = rename_new_in(c, src, dst)?;
    if moved {
        c.forget(src);
        // What was found absent under `dst` before may be in the moved tree now.
        c.appeared_under(dst);
    }
    Ok(moved)
}

/// `EXDEV`, "cross-device link", the same number on every Unix and unused elsewhere.
const EXDEV: i32 = 18;

pub(super) fn mode_of(path: &Path) -> io::Result<FileMode> {
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

impl DirCache {
    /// [`replace_in_place`], looking up and remembering directories in this cache.
    pub fn replace_in_place(&self, staged: &Path, dest: &Path) -> io::Result<()> {
        replace_kept(Some(self), New::Staged(staged), dest)
    }

    /// [`rename`], looking up and remembering directories in this cache.
    pub fn rename(&self, src: &Path, dst: &Path) -> io::Result<()> {
        rename_in(Some(self), src, dst)
    }

    /// [`rename_new`], looking up and remembering directories in this cache.
    pub fn rename_new(&self, src: &Path, dst: &Path) -> io::Result<bool> {
        rename_new_in(Some(self), src, dst)
    }

    /// [`rename_dir_new`], looking up and remembering directories in this cache.
    pub fn rename_dir_new(&self, src: &Path, dst: &Path) -> io::Result<bool> {
        rename_dir_new_in(Some(self), src, dst)
    }
}
