//! Confinement: the only way to turn a target root plus a relative path into a destination.
//! It refuses symlinks (unless allowed) and files where a directory must be on the way, so no
//! write ever lands outside the resolved target.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io;
use std::path::{Component, Path, PathBuf};

use super::dir_cache::{DirCache, Dirs, Knows};
use super::meta::{StatKey, stat_key_in};

use crate::fs::relpath::RelPath;

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
    confined_in(None, root, rel, allow_symlinks)
}

pub(super) fn confined_in(
    c: Dirs<'_>,
    root: &Path,
    rel: &RelPath,
    allow_symlinks: bool,
) -> Result<PathBuf, ConfineError> {
    let dest = root.join(rel.as_str());
    if allow_symlinks {
        return Ok(dest);
    }
    let mut cur = root.to_path_buf();
    let last = dest.clone();
    let check = |p: &Path| -> Result<bool, ConfineError> {
        if c.contains(p) {
            return Ok(true);
        }
        if c.absent(p) {
            return Ok(false);
        }
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                Err(ConfineError::Symlink { link: p.to_path_buf(), root: root.to_path_buf(), dest: dest.clone() })
            }
            Ok(m) => {
                if m.is_dir() {
                    c.insert(p);
                } else if p != last {
                    return Err(ConfineError::NotADirectory { path: p.to_path_buf(), dest: dest.clone() });
                }
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // A missing directory on the way: nothing under it exists either.
                if p != last {
                    c.insert_absent(p);
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

/// The [`StatKey`] of `rel` under `root`, its directories checked as [`confined`] checks them
/// (each one once per [`DirCache`], when one is given); the file itself is not followed, so a
/// symlink there has a stat of its own (another mode) rather than an error.
pub fn confined_stat(root: &Path, rel: &RelPath, allow_symlinks: bool) -> Result<Option<StatKey>, ConfineError> {
    confined_stat_in(None, root, rel, allow_symlinks)
}

pub(super) fn confined_stat_in(
    c: Dirs<'_>,
    root: &Path,
    rel: &RelPath,
    allow_symlinks: bool,
) -> Result<Option<StatKey>, ConfineError> {
    let dest = match rel.parent() {
        Some(dir) => confined_in(c, root, &dir, allow_symlinks)?.join(rel.file_name()),
        None => confined_in(c, root, rel, allow_symlinks)?,
    };
    stat_key_in(c, &dest).map_err(|source| ConfineError::Io { path: dest.clone(), source })
}

impl DirCache {
    /// [`confined`], looking up and remembering directories in this cache.
    pub fn confined(&self, root: &Path, rel: &RelPath, allow_symlinks: bool) -> Result<PathBuf, ConfineError> {
        confined_in(Some(self), root, rel, allow_symlinks)
    }

    /// [`confined_stat`], looking up and remembering directories in this cache.
    pub fn confined_stat(
        &self,
        root: &Path,
        rel: &RelPath,
        allow_symlinks: bool,
    ) -> Result<Option<StatKey>, ConfineError> {
        confined_stat_in(Some(self), root, rel, allow_symlinks)
    }
}
