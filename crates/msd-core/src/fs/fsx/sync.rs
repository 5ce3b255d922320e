//! Durability: flushing a filesystem or a directory, and counting the flushes a run asked for
//! (each costs the disk's latency, so tests hold a commit to its number).

#![allow(clippy::disallowed_methods, reason = "part of fsx, the one module that touches the filesystem directly")]

use std::io::{self};
use std::path::Path;

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

pub(super) fn flushed() {
    FLUSHES.with(|c| c.set(c.get() + 1));
}
