//! Git, read-only, through the `git` executable (`std::process::Command`): the checks that
//! compare against a base revision (`check partition --base REV`, `attribution --base REV`)
//! need the files at that revision (as text, or as bytes read in one `cat-file --batch`), the
//! files changed since it, and the trailers of the commits since.
//!
//! Why the executable and not a library: git is always present where these checks run (a
//! maintainer's clone, CI), and its own parsing of revisions and trailers is the definition the
//! `Boundary-Move-Declared:` contract refers to. Nothing here writes to a repository.
//!
//! Invariants: a revision that does not resolve, and a merge-base that cannot be computed, are
//! errors ([`GitError::Unresolved`], [`GitError::NoMergeBase`]), never an empty answer that would
//! let a check pass.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Errors of git access.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
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
    pub(crate) fn hint(&self) -> String {
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
pub(crate) struct Repo {
    /// The work tree's top level.
    pub root: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    // Reads only: never take the index lock, so a concurrent git in the same tree keeps working.
    cmd.arg("-C").arg(dir).args(args).env("GIT_OPTIONAL_LOCKS", "0").stdin(Stdio::null());
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Result<std::process::Output, GitError> {
    git(dir, args).output().map_err(|e| GitError::Failed {
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
    pub(crate) fn discover(dir: &Path) -> Result<Repo, GitError> {
        let out = run(dir, &["rev-parse", "--show-toplevel"])?;
        if !out.status.success() {
            return Err(GitError::NotARepo { dir: dir.display().to_string() });
        }
        Ok(Repo { root: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()) })
    }

    /// The commit `rev` names.
    pub(crate) fn resolve(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let out = run(&self.root, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec])?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || sha.is_empty() {
            return Err(GitError::Unresolved { rev: rev.to_string(), repo: self.root.display().to_string() });
        }
        Ok(sha)
    }

    /// The merge-base of `rev` and HEAD.
    pub(crate) fn merge_base(&self, rev: &str) -> Result<String, GitError> {
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
    pub(crate) fn files_at(&self, rev: &str, dir: &str) -> Result<Vec<(String, String)>, GitError> {
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
    pub(crate) fn trailers(&self, from: &str, key: &str) -> Result<Vec<String>, GitError> {
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

/// How a file differs from a base revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FileStatus {
    /// Present now, absent at the base.
    Added,
    /// Present at both, bytes or mode differ.
    Modified,
    /// Present at the base, absent now.
    Deleted,
    /// Not tracked by git (a new file not yet added, or an ignored file a build would embed).
    Untracked,
}

impl FileStatus {
    /// `added`, `modified`, `deleted`, `untracked`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Untracked => "untracked",
        }
    }
}

impl Repo {
    fn failed(&self, args: &str, message: impl Into<String>) -> GitError {
        GitError::Failed { args: args.into(), dir: self.root.display().to_string(), message: message.into() }
    }

    /// Every file under `dirs` (repository-relative) at `rev`, path -> bytes, read in one
    /// `git cat-file --batch`. A symlink is an error (source trees hold files); submodules are
    /// skipped.
    pub(crate) fn blobs_at(&self, rev: &str, dirs: &[&str]) -> Result<BTreeMap<String, Vec<u8>>, GitError> {
        let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", rev, "--"];
        args.extend_from_slice(dirs);
        let out = run(&self.root, &args)?;
        if !out.status.success() {
            return Err(self.failed(&args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        for rec in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8(rec.to_vec())
                .map_err(|_| self.failed("ls-tree", format!("a path at {rev} is not UTF-8")))?;
            let (meta, path) =
                rec.split_once('\t').ok_or_else(|| self.failed("ls-tree", format!("unexpected output `{rec}`")))?;
            let mut f = meta.split(' ');
            let (mode, kind, oid) = (f.next().unwrap_or(""), f.next().unwrap_or(""), f.next().unwrap_or(""));
            match (mode, kind) {
                ("120000", _) => {
                    return Err(self.failed("ls-tree", format!("{rev}:{path} is a symlink; source trees hold files")));
                }
                (_, "blob") => entries.push((path.to_string(), oid.to_string())),
                _ => {}
            }
        }
        let blobs = self.cat_batch(entries.iter().map(|(_, oid)| oid.as_str()))?;
        Ok(entries.into_iter().map(|(p, _)| p).zip(blobs).collect())
    }

    /// The bytes of each object, in order.
    fn cat_batch<'a>(&self, oids: impl Iterator<Item = &'a str>) -> Result<Vec<Vec<u8>>, GitError> {
        let input: String = oids.map(|o| format!("{o}\n")).collect();
        if input.is_empty() {
            return Ok(Vec::new());
        }
        const ARGS: &str = "cat-file --batch";
        let mut child = git(&self.root, &["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.failed(ARGS, e.to_string()))?;
        let mut stdin = child.stdin.take().expect("piped");
        // Write on another thread while this one drains stdout, so neither pipe fills up.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().map_err(|e| self.failed(ARGS, e.to_string()))?;
        writer.join().expect("writer thread").map_err(|e| self.failed(ARGS, e.to_string()))?;
        if !out.status.success() {
            return Err(self.failed(ARGS, String::from_utf8_lossy(&out.stderr).trim()));
        }
        let mut rest = out.stdout.as_slice();
        let mut blobs = Vec::new();
        while !rest.is_empty() {
            let nl = rest.iter().position(|&b| b == b'\n').ok_or_else(|| self.failed(ARGS, "truncated output"))?;
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| self.failed(ARGS, format!("unexpected header `{header}`")))?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(|| self.failed(ARGS, "truncated output"))?;
            blobs.push(body.to_vec());
            rest = rest.get(nl + 2 + size..).unwrap_or_default();
        }
        Ok(blobs)
    }

    /// Every file that differs between `rev` and the work tree, repository-relative: tracked
    /// changes (a rename as a deletion and an addition), untracked files, and ignored files under
    /// `embedded` (trees a build embeds whole, stray files included).
    pub(crate) fn changed_since(&self, rev: &str, embedded: &[&str]) -> Result<BTreeMap<String, FileStatus>, GitError> {
        let mut out = BTreeMap::new();
        let diff = ok_bytes(&self.root, &["diff", "--name-status", "-z", "--no-renames", rev, "--"])?;
        let mut fields = diff.split(|&b| b == 0).filter(|f| !f.is_empty());
        while let Some(status) = fields.next() {
            let path = fields.next().ok_or_else(|| self.failed("diff --name-status", "unexpected output"))?;
            let status = match status.first() {
                Some(b'A') => FileStatus::Added,
                Some(b'D') => FileStatus::Deleted,
                _ => FileStatus::Modified,
            };
            out.insert(String::from_utf8_lossy(path).into_owned(), status);
        }
        let mut untracked = ok_bytes(&self.root, &["ls-files", "-z", "--others", "--exclude-standard"])?;
        let mut args = vec!["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"];
        args.extend_from_slice(embedded);
        untracked.push(0);
        untracked.extend(ok_bytes(&self.root, &args)?);
        for p in untracked.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            out.entry(String::from_utf8_lossy(p).into_owned()).or_insert(FileStatus::Untracked);
        }
        Ok(out)
    }
}

fn ok_bytes(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let out = run(dir, args)?;
    if !out.status.success() {
        return Err(GitError::Failed {
            args: args.join(" "),
            dir: dir.display().to_string(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}
