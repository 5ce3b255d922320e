//! The few git questions attribution asks, through the `git` program.
//!
//! Input: a directory inside a work tree. Output: a resolved base commit, the files of
//! `content/`, `runtimes/` and the acknowledgement directory at that commit (bytes, read from the
//! object store, never checked out), and the files that differ between that commit and the work
//! tree (tracked changes, deletions, untracked files, and ignored files inside the source trees,
//! which a build would embed).
//!
//! Why the `git` program rather than a library: it is already on every machine that has a
//! clone, and what it prints with `-z` is stable plumbing. Every path is relative to the root
//! given (`--relative`, and `-C root` for the rest), so a repository nested in a larger one
//! works. Reads only: nothing here writes to the repository or the work tree.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::AttributionError;

/// The branches the default base is the merge-base with, in order of preference.
pub const DEFAULT_BASE_REFS: [&str; 2] = ["refs/remotes/origin/main", "refs/heads/main"];

/// How a changed file differs from the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
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
    /// `added`, `modified`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Untracked => "untracked",
        }
    }
}

/// A work tree.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
}

impl Git {
    /// Opens the work tree that contains `root`; fails when git is missing or `root` is not in
    /// a work tree.
    pub fn open(root: &Path) -> Result<Git, AttributionError> {
        let git = Git { root: root.to_path_buf() };
        let out = git.run(&["rev-parse", "--is-inside-work-tree"])?;
        if String::from_utf8_lossy(&out).trim() != "true" {
            return Err(AttributionError::Git {
                command: "git rev-parse --is-inside-work-tree".into(),
                message: format!("{} is not inside a git work tree", root.display()),
            });
        }
        Ok(git)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.root).args(args);
        // Reads only: never take the index lock (a concurrent git in the same tree keeps working).
        cmd.env("GIT_OPTIONAL_LOCKS", "0");
        cmd
    }

    fn run(&self, args: &[&str]) -> Result<Vec<u8>, AttributionError> {
        let shown = format!("git {}", args.join(" "));
        let out = self
            .command(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| AttributionError::Git { command: shown.clone(), message: format!("cannot run git: {e}") })?;
        if !out.status.success() {
            return Err(AttributionError::Git {
                command: shown,
                message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(out.stdout)
    }

    /// The top directory of the work tree.
    pub fn toplevel(&self) -> Result<PathBuf, AttributionError> {
        let out = self.run(&["rev-parse", "--show-toplevel"])?;
        Ok(PathBuf::from(String::from_utf8_lossy(&out).trim_end_matches(['\n', '\r'])))
    }

    /// The commit `rev` names.
    pub fn resolve(&self, rev: &str) -> Result<String, AttributionError> {
        let spec = format!("{rev}^{{commit}}");
        let out =
            self.command(&["rev-parse", "--verify", "--quiet", "--end-of-options", &spec]).output().map_err(|e| {
                AttributionError::Git { command: "git rev-parse".into(), message: format!("cannot run git: {e}") }
            })?;
        if !out.status.success() {
            return Err(AttributionError::UnknownRev { rev: rev.to_string() });
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The default base: the merge-base of `HEAD` with the first of [`DEFAULT_BASE_REFS`] that
    /// exists. Returns (a label for people, the commit).
    pub fn default_base(&self) -> Result<(String, String), AttributionError> {
        for r in DEFAULT_BASE_REFS {
            if self.resolve(r).is_ok() {
                let out = self.run(&["merge-base", "HEAD", r])?;
                let commit = String::from_utf8_lossy(&out).trim().to_string();
                let short = r.trim_start_matches("refs/heads/").trim_start_matches("refs/remotes/");
                return Ok((format!("merge-base of HEAD and {short}"), commit));
            }
        }
        Err(AttributionError::NoDefaultBase)
    }

    /// Every file under `dirs` at `commit`, path (relative to the root) -> bytes. Symlinks are
    /// refused (a source tree holds files); submodules are skipped.
    pub fn files_at(&self, commit: &str, dirs: &[&str]) -> Result<BTreeMap<String, Vec<u8>>, AttributionError> {
        let mut args = vec!["ls-tree", "-r", "-z", commit, "--"];
        args.extend_from_slice(dirs);
        let listing = self.run(&args)?;
        let mut entries: Vec<(String, String)> = Vec::new();
        for rec in listing.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8(rec.to_vec()).map_err(|_| AttributionError::Git {
                command: "git ls-tree".into(),
                message: "a path at the base is not UTF-8".into(),
            })?;
            let (meta, path) = rec.split_once('\t').ok_or_else(|| AttributionError::Git {
                command: "git ls-tree".into(),
                message: format!("unexpected output `{rec}`"),
            })?;
            let mut f = meta.split(' ');
            let (mode, kind, oid) = (f.next().unwrap_or(""), f.next().unwrap_or(""), f.next().unwrap_or(""));
            match (mode, kind) {
                ("120000", _) => {
                    return Err(AttributionError::SymlinkAtBase { commit: commit.to_string(), path: path.to_string() });
                }
                (_, "blob") => entries.push((path.to_string(), oid.to_string())),
                _ => {}
            }
        }
        let blobs = self.blobs(entries.iter().map(|(_, oid)| oid.as_str()))?;
        Ok(entries.into_iter().map(|(p, _)| p).zip(blobs).collect())
    }

    /// The bytes of each blob, in order (`git cat-file --batch`).
    fn blobs<'a>(&self, oids: impl Iterator<Item = &'a str>) -> Result<Vec<Vec<u8>>, AttributionError> {
        let input: String = oids.map(|o| format!("{o}\n")).collect();
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let err = |message: String| AttributionError::Git { command: "git cat-file --batch".into(), message };
        let mut child = self
            .command(&["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| err(format!("cannot run git: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        // Write on another thread while this one drains stdout, so neither pipe fills up.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().map_err(|e| err(e.to_string()))?;
        writer.join().expect("writer thread").map_err(|e| err(e.to_string()))?;
        if !out.status.success() {
            return Err(err(String::from_utf8_lossy(&out.stderr).trim().to_string()));
        }
        let mut rest = out.stdout.as_slice();
        let mut blobs = Vec::new();
        while !rest.is_empty() {
            let nl = rest.iter().position(|&b| b == b'\n').ok_or_else(|| err("truncated output".into()))?;
            let header = String::from_utf8_lossy(&rest[..nl]).to_string();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| err(format!("unexpected header `{header}`")))?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(|| err("truncated output".into()))?;
            blobs.push(body.to_vec());
            rest = rest.get(nl + 2 + size..).unwrap_or_default();
        }
        Ok(blobs)
    }

    /// Every file that differs between `commit` and the work tree, relative to the root:
    /// tracked changes (renames as a deletion and an addition), untracked files, and ignored
    /// files under `embedded` (the trees a build embeds, so their stray files are emitted too).
    pub fn changed(&self, commit: &str, embedded: &[&str]) -> Result<BTreeMap<String, FileStatus>, AttributionError> {
        let mut out = BTreeMap::new();
        let diff = self.run(&["diff", "--name-status", "-z", "--no-renames", "--relative", commit, "--"])?;
        let mut fields = diff.split(|&b| b == 0).filter(|f| !f.is_empty());
        while let Some(status) = fields.next() {
            let path = fields.next().ok_or_else(|| AttributionError::Git {
                command: "git diff --name-status".into(),
                message: "unexpected output".into(),
            })?;
            let status = match status.first() {
                Some(b'A') => FileStatus::Added,
                Some(b'D') => FileStatus::Deleted,
                _ => FileStatus::Modified,
            };
            out.insert(String::from_utf8_lossy(path).to_string(), status);
        }
        let mut untracked = self.run(&["ls-files", "-z", "--others", "--exclude-standard"])?;
        let mut args = vec!["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--"];
        args.extend_from_slice(embedded);
        untracked.push(0);
        untracked.extend(self.run(&args)?);
        for p in untracked.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            out.entry(String::from_utf8_lossy(p).to_string()).or_insert(FileStatus::Untracked);
        }
        Ok(out)
    }
}
