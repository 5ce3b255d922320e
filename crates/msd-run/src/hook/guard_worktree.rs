//! The worktree guard: when the session runs in a git worktree (a `.git` *file* pointing into
//! `<repo>/.git/worktrees/`, the layout msd's parallel executors use), an edit of a file
//! outside that worktree is refused: it would land in the main checkout or a sibling
//! executor's tree. Outside a worktree it allows everything.

use std::path::{Component, Path, PathBuf};

use super::reply::Reply;

/// Whether `dot_git` (the text of a `.git` file) marks a linked worktree.
pub(crate) fn is_worktree_link(dot_git: &str) -> bool {
    dot_git.lines().next().and_then(|l| l.strip_prefix("gitdir:")).is_some_and(|d| d.contains("/worktrees/"))
}

/// `p` with `.` and `..` folded, lexically.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The decision for writing `target` (absolute, resolved) when the worktree root is `root`.
pub(crate) fn decide(root: Option<&Path>, target: &Path) -> Reply {
    match root {
        Some(root) if !normalize(target).starts_with(root) => Reply::Block(format!(
            "msd: refusing to write {}: this session works in the git worktree {}; edit files inside it.",
            target.display(),
            root.display()
        )),
        _ => Reply::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_worktree_guard() {
        assert!(is_worktree_link("gitdir: /r/.git/worktrees/w1\n"));
        assert!(!is_worktree_link("gitdir: /r/.git/modules/sub\n"));
        let root = Path::new("/r-w1");
        assert_eq!(decide(Some(root), Path::new("/r-w1/src/a.rs")), Reply::Pass);
        assert!(matches!(decide(Some(root), Path::new("/r/src/a.rs")), Reply::Block(_)));
        assert!(matches!(decide(Some(root), Path::new("/r-w1/../r/src/a.rs")), Reply::Block(_)));
        assert_eq!(decide(None, Path::new("/anywhere")), Reply::Pass);
    }
}
