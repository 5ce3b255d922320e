//! The one filesystem module: every read and write of the installer goes through here.
//!
//! Why: io errors must name their path (`fs-err`), every write must be atomic (temp file in the
//! same directory, fsync, rename, explicit mode), and every destination must stay inside the
//! resolved target. Keeping these rules in one place is what makes them true everywhere.
//!
//! Callers use the flat paths re-exported here (`fsx::write_atomic`, `fsx::confined`); the
//! submodules split the rules by concern:
//! - [`write`]: atomic writes and moves of whole files, and replacing a user's file in place;
//! - [`confine`]: turning a root plus a relative path into a destination;
//! - [`read`], [`meta`], [`walk`]: reading files, what is at a path, listings;
//! - [`dirs`]: creating and removing directories and files;
//! - [`stage`]: files of a staging area, shared bytes written once;
//! - [`hash`], [`sync`], [`lock`]: digests, durability, locks.
//!
//! Invariants:
//! - [`write_atomic`] never leaves a half-written destination: a reader sees the old bytes or the
//!   new bytes.
//! - [`confined`] is the only way to turn a root plus a relative path into a destination; it
//!   refuses `..`, absolute paths, NUL and (unless allowed) symlinks between root and destination.

pub mod confine;
pub mod dirs;
pub mod hash;
mod known_dirs;
pub mod lock;
pub mod meta;
pub mod read;
pub mod stage;
pub mod sync;
pub mod walk;
pub mod write;

pub use confine::*;
pub use dirs::*;
pub use hash::*;
pub use lock::*;
pub use meta::*;
pub use read::*;
pub use stage::*;
pub use sync::*;
pub use walk::*;
pub use write::*;

#[allow(clippy::disallowed_methods, reason = "tests set up files with std::fs")]
#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::fs::relpath::RelPath;

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
