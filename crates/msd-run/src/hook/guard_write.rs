//! The write guard: refuses a whole-file write that shrinks a `.planning/` artifact
//! catastrophically (to under a quarter of a file of at least 1 KiB), the usual sign of an
//! agent that rewrote STATE.md or a PLAN.md from a truncated memory of it. Edits are not
//! checked: they change what they name. And any write to a `.planning/` path that is not a
//! regular file (a FIFO, a device: a write or a read there blocks) is refused.

use super::reply::Reply;

/// Files under this size may be rewritten freely.
pub(crate) const MIN_GUARDED: usize = 1024;
/// A rewrite keeping less than `1 / SHRINK` of the old bytes is refused.
pub(crate) const SHRINK: usize = 4;

/// The decision for rewriting `rel` (relative to the project; `None` outside it) from `old`
/// bytes to `new` bytes (`old` is `None` for a new file).
pub(crate) fn decide(rel: Option<&str>, old: Option<usize>, new: usize) -> Reply {
    let Some(rel) = rel.filter(|r| r.starts_with(".planning/")) else { return Reply::Pass };
    match old {
        Some(old) if old >= MIN_GUARDED && new * SHRINK < old => Reply::Block(format!(
            "msd: refusing to overwrite {rel} ({old} bytes) with {new} bytes: that would lose most of a planning artifact. Read it and change it with Edit, or ask the user."
        )),
        _ => Reply::Pass,
    }
}

/// The decision for writing `rel` (relative to the project; `None` outside it), which is `kind`
/// (a FIFO, a device, a directory: [`msd_core::fs::fsx::file_kind`]) and not a regular file.
pub(crate) fn not_a_file(rel: Option<&str>, kind: &str) -> Reply {
    match rel.filter(|r| r.starts_with(".planning/")) {
        Some(rel) => Reply::Block(format!(
            "msd: refusing to write {rel}: it is {kind}, not a regular file, and writing there can hang. Ask the user to replace it with a regular file."
        )),
        None => Reply::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_write_guard_thresholds() {
        assert!(matches!(decide(Some(".planning/STATE.md"), Some(4000), 900), Reply::Block(_)));
        assert_eq!(decide(Some(".planning/STATE.md"), Some(4000), 1000), Reply::Pass);
        assert_eq!(decide(Some(".planning/STATE.md"), Some(1000), 10), Reply::Pass);
        assert_eq!(decide(Some(".planning/STATE.md"), None, 10), Reply::Pass);
        assert_eq!(decide(Some("src/main.rs"), Some(40000), 1), Reply::Pass);
        assert_eq!(decide(None, Some(40000), 1), Reply::Pass);
        assert!(matches!(not_a_file(Some(".planning/STATE.md"), "a FIFO"), Reply::Block(_)));
        assert_eq!(not_a_file(None, "a FIFO"), Reply::Pass);
    }
}
