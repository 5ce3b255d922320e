//! The one filesystem module: every read and write of the installer goes through here.
//!
//! Why: io errors must name their path (`fs-err`), every write must be atomic (temp file in the
//! same directory, fsync, rename, explicit mode), and every destination must stay inside the
//! resolved target. Keeping these rules in one place is what makes them true everywhere.
//!
//! Callers use the flat paths re-exported here (`fsx::write_atomic`, `fsx::confined`); the
//! submodules split the rules by concern:
//! - `write`: atomic writes and moves of whole files, and replacing a user's file in place;
//! - `confine`: turning a root plus a relative path into a destination;
//! - `read`, `meta`, `walk`: reading files, what is at a path, listings;
//! - `dirs`: creating and removing directories and files;
//! - `stage`: files of a staging area, shared bytes written once ([`SharedWrites`]);
//! - `hash`, `sync`, `lock`: digests, durability, locks;
//! - `dir_cache`: [`DirCache`], what an operation learned of the directories it looked at.
//!
//! Invariants:
//! - [`write_atomic`] never leaves a half-written destination: a reader sees the old bytes or the
//!   new bytes.
//! - [`confined`] is the only way to turn a root plus a relative path into a destination; it
//!   refuses `..`, absolute paths, NUL and (unless allowed) symlinks between root and destination.
//! - No process-global memory: whether a call touches the disk depends only on its arguments.
//!   The plain functions remember nothing; what an operation learns lives in values it owns and
//!   passes ([`DirCache`], [`SharedWrites`], [`crate::fs::bytes::Digests`]). Process-wide are only
//!   the umask (read once: the process's own, not the disk's) and the count of flushes per thread
//!   (a counter the tests read, no cache).

mod confine;
mod dir_cache;
mod dirs;
mod hash;
mod lock;
mod meta;
mod read;
mod stage;
mod sync;
mod walk;
mod write;

pub use confine::{ConfineError, confined, confined_stat};
pub use dir_cache::DirCache;
pub use dirs::{
    LEFTOVER_PREFIXES, create_dir_all, current_uid, ensure_private_dir, per_user_temp_dir, probe_writable,
    prune_empty_dirs, remove_dir_all_if_exists, remove_dir_if_empty, remove_file_if_exists, remove_leftovers,
};
pub use hash::{hex, sha256, sha256_file, sha256_of_file, sha256_of_file_if_exists};
pub use lock::{DirLock, Lock, LockError, WORK_DIR, lock_dir};
pub use meta::{
    StatKey, dir_exists, exists, file_kind, is_dir, is_file, is_symlink, lexists, modified, regular_file_len, stat_key,
    touch,
};
pub use read::{Bounded, canonicalize, read, read_if_exists, read_link, read_regular_if_exists, read_to_string};
pub use stage::{SharedWrites, Source, preserve, write_new};
pub use sync::{flushes, sync_dir, sync_fs, sync_fs_each_once};
pub use walk::{DirEntry, is_empty_dir, list_dir, list_existing_dir, list_files};
pub use write::{
    FileMode, rename, rename_dir_new, rename_new, replace_in_place, write_atomic, write_atomic_private,
    write_atomic_through, write_atomic_unsynced, write_in_place, write_target,
};

#[allow(clippy::disallowed_methods, reason = "tests set up files with std::fs")]
#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use super::dir_cache::Knows;

    use crate::fs::relpath::RelPath;

    #[test]
    fn fsx_a_directory_moved_in_whole_clears_what_was_absent_under_it() {
        let tmp = tempfile::tempdir().unwrap();
        let staged = tmp.path().join("staged/msd-a");
        std::fs::create_dir_all(staged.join("refs")).unwrap();
        let dst = tmp.path().join("home/msd-a");
        std::fs::create_dir_all(tmp.path().join("home")).unwrap();
        let c = DirCache::new();
        assert!(!c.dir_exists(&dst.join("refs")), "absent before, and remembered so");
        assert!(c.rename_dir_new(&staged, &dst).unwrap());
        assert!(c.dir_exists(&dst.join("refs")), "the moved tree is seen");
    }

    #[test]
    fn fsx_absent_directories_are_looked_at_once_and_cleared_by_creation() {
        let t = tempfile::tempdir().unwrap();
        let c = DirCache::new();
        let k = Some(&c);
        let gone = t.path().join("gone");
        assert!(!c.dir_exists(&gone));
        assert!(k.absent(&gone.join("a/b.md")), "under an absent directory");
        assert!(!k.absent(&t.path().join("gone-too")), "a sibling is not under it");
        assert_eq!(c.read_if_exists(&gone.join("x")).unwrap(), None);
        // Creating anything under it through the cache clears it and its ancestors.
        c.write_new(&gone.join("a/b.md"), b"x", FileMode::Regular).unwrap();
        assert!(!k.absent(&gone.join("a/b.md")) && c.dir_exists(&gone));
        assert_eq!(c.read_if_exists(&gone.join("a/b.md")).unwrap().as_deref(), Some(&b"x"[..]));
        // confined() records a missing component, and a rename into it clears it.
        let other = t.path().join("other");
        let rel = RelPath::new("d/e/f.md").unwrap();
        c.confined(&other, &rel, false).unwrap();
        assert!(k.absent(&other.join("d")));
        std::fs::create_dir(t.path().join("src")).unwrap();
        c.rename(&t.path().join("src"), &other.join("d")).unwrap();
        assert!(!k.absent(&other.join("d")) && c.dir_exists(&other.join("d")));
    }

    #[test]
    fn fsx_forgetting_a_directory_forgets_exactly_its_subtree() {
        let c = DirCache::new();
        let k = Some(&c);
        for d in ["/k/a", "/k/a/b", "/k/a/b/c", "/k/ab", "/k/b"] {
            k.insert(Path::new(d));
        }
        k.forget(Path::new("/k/a"));
        for (d, known) in [("/k/a", false), ("/k/a/b", false), ("/k/a/b/c", false), ("/k/ab", true), ("/k/b", true)] {
            assert_eq!(k.contains(Path::new(d)), known, "{d}");
        }
    }

    /// Whether a call touches the disk depends only on what its caller passes: a first run (with
    /// a cache of its own) learns that a directory is missing and makes another; the user then
    /// adds a file where it found nothing and removes what it made. A second run in the same
    /// process, by plain calls or with a fresh cache, sees the disk as it is: the user's file is
    /// read (not taken as absent, which would let an install overwrite it unbacked) and the
    /// directories are made again (not taken as there, which would fail the write).
    #[test]
    fn fsx_a_second_run_sees_the_disk_not_what_a_first_run_learned() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let mine = home.join("agents/a.md");
        let helper = b"the same bytes in every tree";
        let first = DirCache::new();
        first.confined(&home, &RelPath::new("agents/a.md").unwrap(), false).unwrap();
        assert_eq!(first.read_if_exists(&mine).unwrap(), None);
        assert!(!first.dir_exists(&home.join("agents")));
        first.create_dir_all(&home.join("skills/x")).unwrap();
        let shared = SharedWrites::default();
        let at = home.join("bin/helper");
        assert!(
            !shared.write_new(&first, &at, Source::Bytes(helper), &sha256(helper), FileMode::Regular, &at).unwrap()
        );
        // Between the runs, by hand.
        std::fs::create_dir(home.join("agents")).unwrap();
        std::fs::write(&mine, b"mine").unwrap();
        std::fs::remove_dir_all(home.join("skills")).unwrap();

        // The plain calls remember nothing.
        assert_eq!(read_if_exists(&mine).unwrap().as_deref(), Some(&b"mine"[..]));
        assert!(sha256_of_file_if_exists(&mine).unwrap().is_some());
        assert!(stat_key(&mine).unwrap().is_some());
        assert!(dir_exists(&home.join("agents")));
        write_atomic(&home.join("skills/x/f.md"), b"x", FileMode::Regular).unwrap();
        std::fs::remove_dir_all(home.join("skills")).unwrap();
        // A fresh cache knows nothing of the first run's.
        let second = DirCache::new();
        assert_eq!(second.read_if_exists(&mine).unwrap().as_deref(), Some(&b"mine"[..]));
        assert!(second.confined_stat(&home, &RelPath::new("agents/a.md").unwrap(), false).unwrap().is_some());
        second.write_new(&home.join("skills/x/g.md"), b"x", FileMode::Regular).unwrap();
        // Nor does a fresh set of shared writes: the second target gets a file of its own, not
        // a link to the first one's.
        let other = t.path().join("other/bin/helper");
        let fresh = SharedWrites::default();
        assert!(
            !fresh
                .write_new(&second, &other, Source::Bytes(helper), &sha256(helper), FileMode::Regular, &other)
                .unwrap()
        );
        assert!(
            shared
                .write_new(
                    &second,
                    &t.path().join("third"),
                    Source::Bytes(helper),
                    &sha256(helper),
                    FileMode::Regular,
                    &t.path().join("third")
                )
                .unwrap(),
            "the first run's set still links"
        );
    }
}
