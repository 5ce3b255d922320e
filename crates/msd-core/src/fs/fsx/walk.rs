//! Listing directories: one level sorted by name, or every file of a tree.

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self};
use std::path::Path;

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
