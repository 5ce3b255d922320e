//! Git, read-only, through the `git` executable (`std::process::Command`): the checks that
//! compare against a base revision (`check partition --base REV`) need the files at that
//! revision and the trailers of the commits since.
//!
//! Why the executable and not a library: git is always present where these checks run (a
//! maintainer's clone, CI), and its own parsing of revisions and trailers is the definition the
//! `Boundary-Move-Declared:` contract refers to. Nothing here writes to a repository.
//!
//! Invariants: a revision that does not resolve, and a merge-base that cannot be computed, are
//! errors ([`GitError::Unresolved`], [`GitError::NoMergeBase`]), never an empty answer that would
//! let a check pass.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Errors of git access.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be run, or failed.
    #[error("git {args} (in {dir}): {message}")]
    Failed {
        /// The arguments.
        args: String,
        /// Where it ran.
        dir: String,
        /// stderr or the spawn error.
        message: String,
    },
    /// The directory is not inside a git work tree.
    #[error("{dir} is not inside a git repository")]
    NotARepo {
        /// The directory.
        dir: String,
    },
    /// The base revision does not resolve to a commit.
    #[error("base revision `{rev}` does not resolve to a commit in {repo}")]
    Unresolved {
        /// What was given.
        rev: String,
        /// The repository.
        repo: String,
    },
    /// No merge-base between the base and HEAD.
    #[error("no merge-base between `{rev}` and HEAD in {repo}: {message}")]
    NoMergeBase {
        /// The base.
        rev: String,
        /// The repository.
        repo: String,
        /// git's message.
        message: String,
    },
}

impl GitError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            GitError::Failed { .. } => "check that git is installed and the repository is readable".into(),
            GitError::NotARepo { .. } => {
                "run from a clone of the repository (or drop --base to run the checks that need no history)".into()
            }
            GitError::Unresolved { .. } => {
                "pass a branch, tag or commit that exists here (e.g. --base main); fetch it first in a shallow clone"
                    .into()
            }
            GitError::NoMergeBase { .. } => {
                "the base shares no history with HEAD; fetch full history or pick another base".into()
            }
        }
    }
}

/// A repository, by its top-level directory.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The work tree's top level.
    pub root: PathBuf,
}

fn run(dir: &Path, args: &[&str]) -> Result<std::process::Output, GitError> {
    Command::new("git").arg("-C").arg(dir).args(args).output().map_err(|e| GitError::Failed {
        args: args.join(" "),
        dir: dir.display().to_string(),
        message: e.to_string(),
    })
}

fn ok_stdout(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = run(dir, args)?;
    if !out.status.success() {
        return Err(GitError::Failed {
            args: args.join(" "),
            dir: dir.display().to_string(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Repo {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let out = run(dir, &["rev-parse", "--show-toplevel"])?;
        if !out.status.success() {
            return Err(GitError::NotARepo { dir: dir.display().to_string() });
        }
        Ok(Repo { root: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()) })
    }

    /// The commit `rev` names.
    pub fn resolve(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let out = run(&self.root, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || sha.is_empty() {
            return Err(GitError::Unresolved { rev: rev.to_string(), repo: self.root.display().to_string() });
        }
        Ok(sha)
    }

    /// The merge-base of `rev` and HEAD.
    pub fn merge_base(&self, rev: &str) -> Result<String, GitError> {
        let out = run(&self.root, &["merge-base", rev, "HEAD"])?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || sha.is_empty() {
            return Err(GitError::NoMergeBase {
                rev: rev.to_string(),
                repo: self.root.display().to_string(),
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(sha)
    }

    /// Every file under `dir` (repository-relative) at `rev`, repository-relative, with its text
    /// (non-UTF-8 bytes replaced).
    pub fn files_at(&self, rev: &str, dir: &str) -> Result<Vec<(String, String)>, GitError> {
        let list = ok_stdout(&self.root, &["ls-tree", "-r", "-z", "--name-only", rev, "--", &format!("{dir}/")])?;
        let mut out = Vec::new();
        for path in list.split('\0').filter(|p| !p.is_empty()) {
            let blob = run(&self.root, &["cat-file", "blob", &format!("{rev}:{path}")])?;
            if !blob.status.success() {
                return Err(GitError::Failed {
                    args: format!("cat-file blob {rev}:{path}"),
                    dir: self.root.display().to_string(),
                    message: String::from_utf8_lossy(&blob.stderr).trim().to_string(),
                });
            }
            out.push((path.to_string(), String::from_utf8_lossy(&blob.stdout).into_owned()));
        }
        Ok(out)
    }

    /// The values of trailer `key` on every commit of `from..HEAD`, as git parses trailers
    /// (unfolded).
    pub fn trailers(&self, from: &str, key: &str) -> Result<Vec<String>, GitError> {
        let format = format!("--format=%(trailers:key={key},valueonly=true,unfold=true,separator=%x00)%x1e");
        let text = ok_stdout(&self.root, &["log", &format, &format!("{from}..HEAD")])?;
        Ok(text
            .split(['\x1e', '\0'])
            .map(|v| v.trim_matches(|c: char| c == '\n' || c == '\r'))
            .filter(|v| !v.trim().is_empty())
            .map(str::to_string)
            .collect())
    }
}
