//! Directories: creating them (and private ones), removing files and trees, pruning emptied
//! directories, probing writability and clearing what a killed run left.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self};
use std::path::{Path, PathBuf};

use super::dir_cache::{DirCache, Dirs, Knows};
use super::walk::list_dir;

/// Creates `dir` (its parent must exist) with mode `0o700`, or checks that an existing one is
/// private: a directory, not a symlink, owned by this user, with no group or other permissions.
/// Another user's or a shared directory is refused (`PermissionDenied`), never written into.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
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

/// Creates a directory and its parents.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    create_dir_all_in(None, dir)
}

pub(super) fn create_dir_all_in(c: Dirs<'_>, dir: &Path) -> io::Result<()> {
    if c.contains(dir) {
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
            create_dir_all_in(c, parent)?;
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
        c.insert(dir);
    } else if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("creating {}: something that is not a directory is there", dir.display()),
        ));
    }
    Ok(())
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
pub fn prune_empty_dirs(dir: &Path, stop: &Path) {
    prune_empty_dirs_in(None, dir, stop)
}

pub(super) fn prune_empty_dirs_in(c: Dirs<'_>, mut dir: &Path, stop: &Path) {
    while dir != stop && dir.starts_with(stop) {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
        c.forget(dir);
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
}

/// Removes a directory tree; a missing one is not an error.
pub fn remove_dir_all_if_exists(dir: &Path) -> io::Result<()> {
    remove_dir_all_if_exists_in(None, dir)
}

pub(super) fn remove_dir_all_if_exists_in(c: Dirs<'_>, dir: &Path) -> io::Result<()> {
    c.forget(dir);
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io::Error::new(e.kind(), format!("removing {}: {e}", dir.display()))),
    }
}

/// Removes `dir` if it is an empty directory; reports whether it did.
pub fn remove_dir_if_empty(dir: &Path) -> bool {
    remove_dir_if_empty_in(None, dir)
}

pub(super) fn remove_dir_if_empty_in(c: Dirs<'_>, dir: &Path) -> bool {
    let removed = std::fs::remove_dir(dir).is_ok();
    if removed {
        c.forget(dir);
    }
    removed
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

impl DirCache {
    /// [`create_dir_all`], looking up and remembering directories in this cache.
    pub fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        create_dir_all_in(Some(self), dir)
    }

    /// [`prune_empty_dirs`], looking up and remembering directories in this cache.
    pub fn prune_empty_dirs(&self, dir: &Path, stop: &Path) {
        prune_empty_dirs_in(Some(self), dir, stop)
    }

    /// [`remove_dir_all_if_exists`], looking up and remembering directories in this cache.
    pub fn remove_dir_all_if_exists(&self, dir: &Path) -> io::Result<()> {
        remove_dir_all_if_exists_in(Some(self), dir)
    }

    /// [`remove_dir_if_empty`], looking up and remembering directories in this cache.
    pub fn remove_dir_if_empty(&self, dir: &Path) -> bool {
        remove_dir_if_empty_in(Some(self), dir)
    }
}
