//! Emitted attribution: every change in what users receive since a base revision, traced to the
//! source that caused it or to an acknowledgement (SPEC section 7).
//!
//! Input: a git work tree (its `content/`, `runtimes/` and `tests/emitted-drift-acks/`), a base
//! revision, optionally another msd-install build for the base side. Output: a [`Report`].
//!
//! How: the content and manifests at the base are read from git's object store, the current
//! ones from the work tree; both are emitted for every runtime x scope with one fixed
//! environment (the `gen golden` one, so no home normalisation is needed) into an
//! [`inventory::Inventory`], by this binary or, for the base with `--base-binary`, by the given
//! one. Emitted paths are compared by sha256. Each path that changed, appeared or disappeared is
//! attributed through its provenance (the sources the emitter records, on both sides, plus the
//! commands its sources reference by `/msd:<stem>`, whose rewriting depends on the command
//! existing) to the files changed since the base (`git diff` plus untracked files).
//!
//! Rules, each a [`Violation`] when broken:
//! - a moved path with no changed source is unattributable unless a live acknowledgement names
//!   one of its sources;
//! - a workflow or agent (an emitted file made from one top-level `content/msd-core/workflows/*.md`
//!   or one `content/agents/*.md`) that grew needs a live acknowledgement keyed by that content
//!   path; shrinking is reported, never gated;
//! - a workflow or agent absent at the base (no emitted file had it as its content source)
//!   fails `NEW_FILE_CAP` in any runtime where its emitted bytes exceed 32,768; no
//!   acknowledgement exempts it;
//! - a live acknowledgement that matched nothing is stale; one present at the base is spent and
//!   inert.
//!
//! Why a base binary: with one binary on both sides, a change to the emitter's code cannot move
//! an emitted byte, so only content and manifest changes are visible. `--base-binary` emits the
//! base with the build of the base (CI builds it in a worktree), and then an emitter-only
//! change shows up as moves with no changed source: unattributable until acknowledged. Files
//! whose bytes are a built program (kind [`FileKind::Program`], the installed `msd_run`) are
//! left out: no repository file explains them and every build changes them.

pub(crate) mod acks;
pub(crate) mod inventory;

use msd_core::fs::bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use aho_corasick::{AhoCorasick, MatchKind};

use crate::dev::gitx::{FileStatus, GitError, Repo};
use crate::pipeline;
use crate::pipeline::PipelineError;
use crate::pipeline::convert::FileKind;
use crate::pipeline::load::Tree;
use crate::pipeline::target::Environment;
use acks::{ACK_DIR, Ack, AckError};
use inventory::{FileEntry, Inventory};
use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::Scope;
use msd_core::manifest::caps::NEW_FILE_CAP;

/// The source trees a build embeds, relative to the repository root.
pub(crate) const SOURCE_DIRS: [&str; 2] = ["content", "runtimes"];

/// Errors of an attribution run (violations are not errors: they are in the [`Report`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AttributionError {
    /// Git could not answer.
    #[error(transparent)]
    Git(#[from] GitError),
    /// No `--base` and no branch to take the merge-base with.
    #[error("no base revision given, and neither origin/main nor main exists")]
    NoDefaultBase,
    /// A malformed acknowledgement file.
    #[error(transparent)]
    Ack(#[from] AckError),
    /// An io error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The base binary failed or printed something that is not an inventory.
    #[error("base binary {binary}: {message}")]
    BaseBinary {
        /// The binary.
        binary: String,
        /// What went wrong.
        message: String,
    },
    /// One side could not be loaded or emitted.
    #[error("{side}: {source}")]
    Side {
        /// `base <rev>` or `working tree`.
        side: String,
        /// The error.
        source: Box<PipelineError>,
    },
}

/// What to compare.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// A directory in the repository (`None`: the current one); `content/`, `runtimes/` and
    /// the acknowledgements are at the top of its work tree.
    pub root: Option<PathBuf>,
    /// The base revision (`None`: the merge-base of HEAD with origin/main, else main).
    pub base: Option<String>,
    /// Another msd-install build to emit the base side with.
    pub base_binary: Option<PathBuf>,
    /// The environment both sides are emitted for.
    pub env: Environment,
}

/// How an emitted path moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Change {
    /// New at this path.
    Added,
    /// Gone from this path.
    Removed,
    /// Different bytes.
    Changed,
}

impl Change {
    /// `added`, `removed`, `changed`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
        }
    }
}

/// An acknowledgement that applied.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct AckRef {
    /// The fragment.
    pub file: String,
    /// The key that matched.
    pub key: String,
    /// Its reason.
    pub reason: String,
}

/// An emitted path whose bytes moved.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Moved {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Emitted path.
    pub path: String,
    /// What it is.
    pub kind: FileKind,
    /// How it moved.
    pub change: Change,
    /// Bytes at the base.
    pub before: Option<u64>,
    /// Bytes now.
    pub after: Option<u64>,
    /// Its sources on either side.
    pub sources: Vec<String>,
    /// The changed files that explain it (its own sources first, then referenced commands).
    pub attributed_to: Vec<String>,
    /// The acknowledgements that cover it when nothing explains it.
    pub acknowledged_by: Vec<AckRef>,
}

/// A workflow or agent whose emitted size changed.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SizeChange {
    /// The content path of the workflow or agent (the acknowledgement key).
    pub key: String,
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Emitted path.
    pub path: String,
    /// Bytes at the base.
    pub before: u64,
    /// Bytes now.
    pub after: u64,
    /// The acknowledgements of a growth.
    pub acknowledged_by: Vec<AckRef>,
}

/// An emitted file of a workflow or agent absent at the base, measured against `NEW_FILE_CAP`.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct NewFile {
    /// The content path of the workflow or agent.
    pub key: String,
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Emitted path.
    pub path: String,
    /// Emitted bytes.
    pub bytes: u64,
    /// The cap.
    pub cap: u64,
}

/// What became of an acknowledgement entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AckStatus {
    /// It covered at least one move or growth.
    Used,
    /// It covered nothing: a violation.
    Stale,
    /// Present at the base: inert.
    Spent,
}

/// An acknowledgement entry and its fate.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct AckUse {
    /// The fragment.
    pub file: String,
    /// The key.
    pub key: String,
    /// The reason.
    pub reason: String,
    /// What became of it.
    pub status: AckStatus,
    /// How many moves and growths it covered.
    pub covered: usize,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Violation {
    /// A moved path with no changed source and no acknowledgement.
    Unattributable {
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: Scope,
        /// Emitted path.
        path: String,
        /// How it moved.
        change: Change,
        /// Its sources, none of which changed.
        sources: Vec<String>,
    },
    /// A workflow or agent grew without an acknowledgement.
    UnacknowledgedGrowth {
        /// The content path (the key an acknowledgement needs).
        key: String,
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: Scope,
        /// Emitted path.
        path: String,
        /// Bytes at the base.
        before: u64,
        /// Bytes now.
        after: u64,
    },
    /// A new workflow or agent over `NEW_FILE_CAP`.
    NewFileCap {
        /// The content path.
        key: String,
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: Scope,
        /// Emitted path.
        path: String,
        /// Emitted bytes.
        bytes: u64,
        /// The cap.
        cap: u64,
    },
    /// An acknowledgement that covered nothing.
    StaleAck {
        /// The fragment.
        file: String,
        /// The key.
        key: String,
    },
}

/// One emitted file an edit touched, as listed under its source.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Touch {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Emitted path.
    pub path: String,
    /// How it moved.
    pub change: Change,
    /// Bytes at the base.
    pub before: Option<u64>,
    /// Bytes now.
    pub after: Option<u64>,
}

/// A changed source file and the emitted files it explains.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SourceGroup {
    /// How the source differs from the base.
    pub status: FileStatus,
    /// The emitted files it explains.
    pub touched: Vec<Touch>,
}

/// Counts of the comparison.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Counts {
    /// Runtime x scope emissions at the base.
    pub emissions_base: usize,
    /// Runtime x scope emissions now.
    pub emissions_current: usize,
    /// Emitted files at the base.
    pub files_base: usize,
    /// Emitted files now.
    pub files_current: usize,
    /// Paths with identical bytes.
    pub unchanged: usize,
    /// Paths with different bytes.
    pub changed: usize,
    /// Paths only now.
    pub added: usize,
    /// Paths only at the base.
    pub removed: usize,
    /// Paths left out because their bytes are the built binary.
    pub excluded: usize,
}

/// The comparison of two inventories under the rules.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Outcome {
    /// No violation.
    pub ok: bool,
    /// Counts.
    pub counts: Counts,
    /// Changed source files and what each explains, by path.
    pub by_source: BTreeMap<String, SourceGroup>,
    /// Every moved path, by runtime, scope and path.
    pub moved: Vec<Moved>,
    /// Workflows and agents that grew.
    pub growth: Vec<SizeChange>,
    /// Workflows and agents that shrank (reported only).
    pub shrunk: Vec<SizeChange>,
    /// Emitted files of workflows and agents absent at the base.
    pub new_files: Vec<NewFile>,
    /// Every acknowledgement entry.
    pub acks: Vec<AckUse>,
    /// Every broken rule.
    pub violations: Vec<Violation>,
}

/// The base side as resolved.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct BaseInfo {
    /// How it was chosen (`--base` as given, or the merge-base description).
    pub rev: String,
    /// The commit.
    pub commit: String,
    /// The binary that emitted it (`null`: this one).
    pub binary: Option<String>,
    /// Its msd-install version.
    pub tool_version: String,
}

/// The result of an attribution run.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Report {
    /// The base.
    pub base: BaseInfo,
    /// The msd-install version that emitted the working tree.
    pub tool_version: String,
    /// The home both sides were emitted for.
    pub home: String,
    /// Files that differ from the base (any, not only sources).
    pub changed_files: usize,
    /// The comparison.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The commands each source file references by `/msd:<stem>`: the rewriter turns such a
/// reference into the runtime's own syntax only when the command exists, so adding or removing
/// a command moves the bytes of every file that mentions it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Refs {
    by_source: BTreeMap<String, BTreeSet<String>>,
}

impl Refs {
    /// Scans every file of a side's content and runtimes trees.
    pub(crate) fn scan(content: &Tree, runtimes: &Tree) -> Refs {
        let commands: Vec<(String, String)> = content
            .files
            .keys()
            .filter_map(|p| {
                let stem = p.as_str().strip_prefix("commands/msd/")?.strip_suffix(".md")?;
                (!stem.contains('/')).then(|| (format!("/msd:{stem}"), format!("content/{p}")))
            })
            .collect();
        let mut by_source = BTreeMap::new();
        if commands.is_empty() {
            return Refs { by_source };
        }
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(commands.iter().map(|(p, _)| p))
            .expect("literal patterns build");
        for (prefix, tree) in [("content", content), ("runtimes", runtimes)] {
            for (rel, bytes) in &tree.files {
                let hits: BTreeSet<String> =
                    ac.find_iter(bytes.as_ref()).map(|m| commands[m.pattern()].1.clone()).collect();
                if !hits.is_empty() {
                    by_source.insert(format!("{prefix}/{rel}"), hits);
                }
            }
        }
        Refs { by_source }
    }

    fn of<'a>(&'a self, sources: &'a [String]) -> impl Iterator<Item = &'a String> {
        sources.iter().filter_map(|s| self.by_source.get(s)).flatten()
    }
}

/// One side of the comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    /// Its emission.
    pub inventory: &'a Inventory,
    /// The commands its sources reference.
    pub refs: &'a Refs,
}

/// The workflow or agent an emitted file is made from, by its content source: a file with one
/// content source that is a top-level workflow (a core file) or an agent (an agent file, or the
/// agent's canonical copy in the core tree that `msd_run query agent-skills` serves).
pub(crate) fn subject(kind: FileKind, sources: &[String]) -> Option<&str> {
    let mut content = sources.iter().filter(|s| s.starts_with("content/"));
    let first = content.next()?;
    if content.next().is_some() {
        return None;
    }
    let is_md = |rest: &str| rest.strip_suffix(".md").is_some_and(|n| !n.is_empty() && !n.contains('/'));
    match kind {
        FileKind::Core if first.strip_prefix("content/msd-core/workflows/").is_some_and(is_md) => Some(first),
        FileKind::Agent | FileKind::Core if first.strip_prefix("content/agents/").is_some_and(is_md) => Some(first),
        _ => None,
    }
}

type Key<'a> = (&'a str, Scope, &'a str);

fn index(inv: &Inventory) -> BTreeMap<Key<'_>, &FileEntry> {
    inv.files().map(|(rt, scope, f)| ((rt, scope, f.path.as_str()), f)).collect()
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Compares two emissions under the rules (pure).
pub(crate) fn attribute(
    base: Side<'_>,
    current: Side<'_>,
    changed: &BTreeMap<String, FileStatus>,
    acks: &[Ack],
) -> Outcome {
    let before = index(base.inventory);
    let after = index(current.inventory);
    let mut run = Attribution {
        base: &base,
        current: &current,
        changed,
        acks,
        used: vec![0; acks.len()],
        outcome: Outcome {
            counts: Counts {
                emissions_base: base.inventory.emissions.len(),
                emissions_current: current.inventory.emissions.len(),
                files_base: before.len(),
                files_current: after.len(),
                ..Counts::default()
            },
            ..Outcome::default()
        },
    };
    let keys: BTreeSet<Key<'_>> = before.keys().chain(after.keys()).copied().collect();
    for key in keys {
        run.file(key, before.get(&key).copied(), after.get(&key).copied());
    }
    run.new_files(&before, &after);
    run.finish()
}

/// One attribution in progress: the two sides, what changed, the acknowledgements and how often
/// each was used, and the outcome so far. Each step handles one part of the rules.
struct Attribution<'r, 'a> {
    base: &'r Side<'a>,
    current: &'r Side<'a>,
    changed: &'r BTreeMap<String, FileStatus>,
    acks: &'r [Ack],
    used: Vec<usize>,
    outcome: Outcome,
}

impl Attribution<'_, '_> {
    /// The unspent acknowledgements whose key is one of `keys`, counted as used.
    fn cover<'k>(&mut self, keys: impl IntoIterator<Item = &'k str>) -> Vec<AckRef> {
        let keys: BTreeSet<&str> = keys.into_iter().collect();
        let mut refs = Vec::new();
        for (i, a) in self.acks.iter().enumerate() {
            if !a.spent && keys.contains(a.key.as_str()) {
                self.used[i] += 1;
                refs.push(AckRef { file: a.file.clone(), key: a.key.clone(), reason: a.reason.clone() });
            }
        }
        refs
    }

    /// One emitted path on either side: counted, and when it moved, traced to a changed source
    /// (its own or one its commands reference) or an acknowledgement, with its size change.
    fn file(&mut self, (runtime, scope, path): Key<'_>, b: Option<&FileEntry>, a: Option<&FileEntry>) {
        let counts = &mut self.outcome.counts;
        if b.is_some_and(FileEntry::is_build_output) || a.is_some_and(FileEntry::is_build_output) {
            counts.excluded += 1;
            return;
        }
        let change = match (b, a) {
            (Some(b), Some(a)) if b.sha256 == a.sha256 => {
                counts.unchanged += 1;
                return;
            }
            (Some(_), Some(_)) => Change::Changed,
            (None, Some(_)) => Change::Added,
            _ => Change::Removed,
        };
        match change {
            Change::Changed => counts.changed += 1,
            Change::Added => counts.added += 1,
            Change::Removed => counts.removed += 1,
        }
        let mut sources = Vec::new();
        for s in a.iter().chain(b.iter()).flat_map(|f| &f.sources) {
            push_unique(&mut sources, s);
        }
        let attributed_to = self.changed_sources(&sources, b, a);
        let acknowledged_by =
            if attributed_to.is_empty() { self.cover(sources.iter().map(String::as_str)) } else { Vec::new() };
        if attributed_to.is_empty() && acknowledged_by.is_empty() {
            self.outcome.violations.push(Violation::Unattributable {
                runtime: runtime.into(),
                scope,
                path: path.into(),
                change,
                sources: sources.clone(),
            });
        }
        for s in &attributed_to {
            self.outcome
                .by_source
                .entry(s.clone())
                .or_insert_with(|| SourceGroup { status: self.changed[s], touched: Vec::new() })
                .touched
                .push(Touch {
                    runtime: runtime.into(),
                    scope,
                    path: path.into(),
                    change,
                    before: b.map(|f| f.bytes),
                    after: a.map(|f| f.bytes),
                });
        }
        if let (Some(b), Some(a)) = (b, a) {
            self.size_change((runtime, scope, path), b, a);
        }
        self.outcome.moved.push(Moved {
            runtime: runtime.into(),
            scope,
            path: path.into(),
            kind: a.or(b).map(|f| f.kind).expect("one side has it"),
            change,
            before: b.map(|f| f.bytes),
            after: a.map(|f| f.bytes),
            sources,
            attributed_to,
            acknowledged_by,
        });
    }

    /// The changed files among `sources` and the sources their commands reference.
    fn changed_sources(&self, sources: &[String], b: Option<&FileEntry>, a: Option<&FileEntry>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in sources {
            if self.changed.contains_key(s) {
                push_unique(&mut out, s);
            }
        }
        let referenced = a
            .map(|f| self.current.refs.of(&f.sources).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain(b.map(|f| self.base.refs.of(&f.sources).collect::<Vec<_>>()).unwrap_or_default());
        for s in referenced {
            if self.changed.contains_key(s) {
                push_unique(&mut out, s);
            }
        }
        out
    }

    /// A workflow or agent whose size moved: growth needs an acknowledgement.
    fn size_change(&mut self, (runtime, scope, path): Key<'_>, b: &FileEntry, a: &FileEntry) {
        let Some(subj) = subject(a.kind, &a.sources) else { return };
        if subject(b.kind, &b.sources) != Some(subj) || a.bytes == b.bytes {
            return;
        }
        let mut size = SizeChange {
            key: subj.to_string(),
            runtime: runtime.into(),
            scope,
            path: path.into(),
            before: b.bytes,
            after: a.bytes,
            acknowledged_by: Vec::new(),
        };
        if a.bytes > b.bytes {
            size.acknowledged_by = self.cover(std::iter::once(subj));
            if size.acknowledged_by.is_empty() {
                self.outcome.violations.push(Violation::UnacknowledgedGrowth {
                    key: subj.into(),
                    runtime: runtime.into(),
                    scope,
                    path: path.into(),
                    before: b.bytes,
                    after: a.bytes,
                });
            }
            self.outcome.growth.push(size);
        } else {
            self.outcome.shrunk.push(size);
        }
    }

    /// NEW_FILE_CAP: workflows and agents no emitted file had as its source at the base.
    fn new_files(&mut self, before: &BTreeMap<Key<'_>, &FileEntry>, after: &BTreeMap<Key<'_>, &FileEntry>) {
        let known: BTreeSet<&str> = before.values().filter_map(|f| subject(f.kind, &f.sources)).collect();
        for ((runtime, scope, path), f) in after {
            if f.is_build_output() {
                continue;
            }
            let Some(subj) = subject(f.kind, &f.sources) else { continue };
            if known.contains(subj) {
                continue;
            }
            if f.bytes > NEW_FILE_CAP {
                self.outcome.violations.push(Violation::NewFileCap {
                    key: subj.into(),
                    runtime: (*runtime).into(),
                    scope: *scope,
                    path: (*path).into(),
                    bytes: f.bytes,
                    cap: NEW_FILE_CAP,
                });
            }
            self.outcome.new_files.push(NewFile {
                key: subj.into(),
                runtime: (*runtime).into(),
                scope: *scope,
                path: (*path).into(),
                bytes: f.bytes,
                cap: NEW_FILE_CAP,
            });
        }
    }

    /// Every acknowledgement's status (a stale one is a violation), and the verdict.
    fn finish(mut self) -> Outcome {
        for (i, a) in self.acks.iter().enumerate() {
            let status = match (a.spent, self.used[i]) {
                (true, _) => AckStatus::Spent,
                (false, 0) => AckStatus::Stale,
                _ => AckStatus::Used,
            };
            if status == AckStatus::Stale {
                self.outcome.violations.push(Violation::StaleAck { file: a.file.clone(), key: a.key.clone() });
            }
            self.outcome.acks.push(AckUse {
                file: a.file.clone(),
                key: a.key.clone(),
                reason: a.reason.clone(),
                status,
                covered: self.used[i],
            });
        }
        self.outcome.ok = self.outcome.violations.is_empty();
        self.outcome
    }
}

fn io(path: &Path, source: std::io::Error) -> AttributionError {
    AttributionError::Io { path: path.display().to_string(), source }
}

/// The source trees and acknowledgement fragments of one commit.
struct BaseTrees {
    content: Tree,
    runtimes: Tree,
    /// `tests/emitted-drift-acks/<name>.json` -> bytes.
    fragments: BTreeMap<String, Vec<u8>>,
}

/// Splits the files of a commit into the content tree, the runtimes tree and the fragments.
fn split_base(label: &str, files: BTreeMap<String, Vec<u8>>) -> Result<BaseTrees, AttributionError> {
    let mut content = BTreeMap::new();
    let mut runtimes = BTreeMap::new();
    let mut fragments = BTreeMap::new();
    for (path, bytes) in files {
        let bad = |reason: String| AttributionError::Io {
            path: format!("{label}:{path}"),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, reason),
        };
        if let Some(rest) = path.strip_prefix("content/") {
            content.insert(RelPath::new(rest).map_err(|e| bad(e.to_string()))?, Bytes::from(bytes));
        } else if let Some(rest) = path.strip_prefix("runtimes/") {
            runtimes.insert(RelPath::new(rest).map_err(|e| bad(e.to_string()))?, Bytes::from(bytes));
        } else if let Some(name) = path.strip_prefix(&format!("{ACK_DIR}/"))
            && name.ends_with(".json")
            && !name.contains('/')
        {
            fragments.insert(path.clone(), bytes);
        }
    }
    Ok(BaseTrees {
        content: Tree { origin: format!("{label}:content"), files: content },
        runtimes: Tree { origin: format!("{label}:runtimes"), files: runtimes },
        fragments,
    })
}

/// Loads content and manifests from two trees, as the pipeline does.
fn load_trees(content: Tree, runtimes: &Tree) -> Result<pipeline::Loaded, PipelineError> {
    let runtimes = pipeline::runtimes_from_tree(runtimes)?;
    Ok(pipeline::Loaded { content: pipeline::content_from_tree(content)?, runtimes })
}

/// The fragments of the work tree, `tests/emitted-drift-acks/<name>.json` -> text.
fn fragments_now(root: &Path) -> Result<BTreeMap<String, String>, AttributionError> {
    let dir = root.join(ACK_DIR);
    let mut out = BTreeMap::new();
    for entry in fsx::list_dir(&dir).map_err(|e| io(&dir, e))? {
        if !entry.is_file || !entry.name.ends_with(".json") {
            continue;
        }
        let path = dir.join(&entry.name);
        let file = format!("{ACK_DIR}/{}", entry.name);
        let bytes = fsx::read(&path).map_err(|e| io(&path, e))?;
        let text = String::from_utf8(bytes).map_err(|_| AckError {
            file: file.clone(),
            line: 1,
            col: 1,
            message: "not UTF-8".into(),
            hint: "save the file as UTF-8".into(),
        })?;
        out.insert(file, text);
    }
    Ok(out)
}

/// Writes a tree under `dir` (for a base binary to read).
fn materialise(tree: &Tree, dir: &Path) -> Result<(), AttributionError> {
    fsx::create_dir_all(dir).map_err(|e| io(dir, e))?;
    for (rel, bytes) in &tree.files {
        let dest = dir.join(rel.as_str());
        fsx::write_atomic(&dest, bytes, FileMode::Regular).map_err(|e| io(&dest, e))?;
    }
    Ok(())
}

/// Runs `<binary> inventory` on the base trees and reads its document.
fn base_inventory_from(
    binary: &Path,
    content: &Tree,
    runtimes: &Tree,
    env: &Environment,
) -> Result<Inventory, AttributionError> {
    let shown = binary.display().to_string();
    let fail = |message: String| AttributionError::BaseBinary { binary: shown.clone(), message };
    let tmp =
        tempfile::Builder::new().prefix("msd-attribution-").tempdir().map_err(|e| io(&std::env::temp_dir(), e))?;
    let (c, r) = (tmp.path().join("content"), tmp.path().join("runtimes"));
    materialise(content, &c)?;
    materialise(runtimes, &r)?;
    let out = std::process::Command::new(binary)
        .arg("inventory")
        .arg("--content")
        .arg(&c)
        .arg("--runtimes")
        .arg(&r)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run it: {e}")))?;
    if !out.status.success() {
        let code = out.status.code().map_or("a signal".to_string(), |c| format!("exit code {c}"));
        return Err(fail(format!("`inventory` failed with {code}: {}", String::from_utf8_lossy(&out.stderr).trim())));
    }
    let inv: Inventory = serde_json::from_slice(&out.stdout)
        .map_err(|e| fail(format!("`inventory` printed no inventory document: {e}")))?;
    if inv.format != inventory::FORMAT || inv.version != inventory::VERSION {
        return Err(fail(format!(
            "inventory format {} v{}, expected {} v{}",
            inv.format,
            inv.version,
            inventory::FORMAT,
            inventory::VERSION
        )));
    }
    let home = env.home.display().to_string();
    if inv.home != home {
        return Err(fail(format!("it emitted for home {}, this binary for {home}", inv.home)));
    }
    Ok(inv)
}

/// The branches the default base is the merge-base with, in order of preference (a CI checkout
/// has `origin/main` and no local `main`).
pub(crate) const DEFAULT_BASE_REFS: [&str; 2] = ["refs/remotes/origin/main", "refs/heads/main"];

/// The merge-base of HEAD with the first of [`DEFAULT_BASE_REFS`] that exists: (a label for
/// people, the commit).
fn default_base(git: &Repo) -> Result<(String, String), AttributionError> {
    for r in DEFAULT_BASE_REFS {
        if git.resolve(r).is_ok() {
            let short = r.trim_start_matches("refs/heads/").trim_start_matches("refs/remotes/");
            return Ok((format!("merge-base of HEAD and {short}"), git.merge_base(r)?));
        }
    }
    Err(AttributionError::NoDefaultBase)
}

/// Runs an attribution: resolve the base, emit both sides, compare, apply the rules.
pub(crate) fn run(opts: &Options) -> Result<Report, AttributionError> {
    let git = Repo::discover(opts.root.as_deref().unwrap_or(Path::new(".")))?;
    let root = git.root.clone();
    let (rev, commit) = match &opts.base {
        Some(r) => (r.clone(), git.resolve(r)?),
        None => default_base(&git)?,
    };
    let short: String = commit.chars().take(12).collect();
    let mut dirs: Vec<&str> = SOURCE_DIRS.to_vec();
    dirs.push(ACK_DIR);
    let BaseTrees { content: base_content, runtimes: base_runtimes, fragments: base_fragments } =
        split_base(&short, git.blobs_at(&commit, &dirs)?)?;
    let changed = git.changed_since(&commit, &SOURCE_DIRS)?;
    let acks = acks::load(&fragments_now(&root)?, &base_fragments)?;

    let current_side = |e: PipelineError| AttributionError::Side { side: "working tree".into(), source: Box::new(e) };
    let base_side = |e: PipelineError| AttributionError::Side { side: format!("base {short}"), source: Box::new(e) };
    let tree_now = |dir: &str| Tree::from_dir(&root.join(dir)).map_err(|e| current_side(e.into()));
    let (content_now, runtimes_now) = (tree_now("content")?, tree_now("runtimes")?);
    let refs_now = Refs::scan(&content_now, &runtimes_now);
    let refs_base = Refs::scan(&base_content, &base_runtimes);

    let loaded = load_trees(content_now, &runtimes_now).map_err(current_side)?;
    let now = inventory::build(&loaded.content, &loaded.runtimes, &opts.env).map_err(current_side)?;
    let base = if base_content.files.is_empty() || base_runtimes.files.is_empty() {
        Inventory::empty(&opts.env)
    } else if let Some(bin) = &opts.base_binary {
        base_inventory_from(bin, &base_content, &base_runtimes, &opts.env)?
    } else {
        let loaded = load_trees(base_content, &base_runtimes).map_err(base_side)?;
        inventory::build(&loaded.content, &loaded.runtimes, &opts.env).map_err(base_side)?
    };
    let outcome = attribute(
        Side { inventory: &base, refs: &refs_base },
        Side { inventory: &now, refs: &refs_now },
        &changed,
        &acks,
    );
    Ok(Report {
        base: BaseInfo {
            rev,
            commit,
            binary: opts.base_binary.as_ref().map(|b| b.display().to_string()),
            tool_version: base.tool_version.clone(),
        },
        tool_version: now.tool_version.clone(),
        home: now.home.clone(),
        changed_files: changed.len(),
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, bytes: u64, hash: &str, kind: FileKind, sources: &[&str]) -> FileEntry {
        FileEntry {
            path: path.into(),
            bytes,
            sha256: hash.into(),
            kind,
            sources: sources.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn inv(emissions: Vec<(&str, Vec<FileEntry>)>) -> Inventory {
        let mut i = Inventory::empty(&crate::pipeline::target::Environment::golden());
        i.emissions = emissions
            .into_iter()
            .map(|(rt, files)| inventory::EmissionEntry { runtime: rt.into(), scope: Scope::Global, files })
            .collect();
        i
    }

    fn run(base: &Inventory, now: &Inventory, changed: &[(&str, FileStatus)], acks: &[Ack]) -> Outcome {
        let changed: BTreeMap<String, FileStatus> = changed.iter().map(|(p, s)| (p.to_string(), *s)).collect();
        let refs = Refs::default();
        attribute(Side { inventory: base, refs: &refs }, Side { inventory: now, refs: &refs }, &changed, acks)
    }

    const WF: &str = "content/msd-core/workflows/plan.md";

    #[test]
    fn attribution_subject_is_a_top_level_workflow_or_an_agent() {
        let s = |kind, sources: &[&str]| {
            subject(kind, &sources.iter().map(|s| s.to_string()).collect::<Vec<_>>()).map(str::to_string)
        };
        let m = "runtimes/x/capability.json";
        assert_eq!(s(FileKind::Core, &[WF, m]).as_deref(), Some(WF));
        assert_eq!(s(FileKind::Core, &["content/msd-core/workflows/plan/steps/a.md", m]), None);
        assert_eq!(s(FileKind::Core, &["content/msd-core/references/a.md", m]), None);
        assert_eq!(s(FileKind::Core, &["content/msd-core/workflows/.md", m]), None);
        assert_eq!(s(FileKind::Agent, &["content/agents/msd-a.md", m]).as_deref(), Some("content/agents/msd-a.md"));
        assert_eq!(s(FileKind::Core, &["content/agents/msd-a.md", m]).as_deref(), Some("content/agents/msd-a.md"));
        assert_eq!(s(FileKind::Core, &["content/msd-core/agents/msd-a.compact.md", m]), None);
        // Kimi's root agent lists every agent: it is none of them.
        assert_eq!(s(FileKind::Agent, &["content/agents/msd-a.md", "content/agents/msd-b.md", m]), None);
        assert_eq!(s(FileKind::Agent, &[m, "runtimes/x/prompt.md"]), None);
        assert_eq!(s(FileKind::Skill, &["content/commands/msd/plan.md", m]), None);
        assert_eq!(s(FileKind::Workflow, &["content/commands/msd/plan.md", m]), None);
    }

    #[test]
    fn attribution_new_runtime_does_not_make_existing_workflows_new() {
        let big = NEW_FILE_CAP + 10_000;
        let base = inv(vec![(
            "a",
            vec![file("core/workflows/plan.md", big, "h1", FileKind::Core, &[WF, "runtimes/a/capability.json"])],
        )]);
        let now = inv(vec![
            ("a", vec![file("core/workflows/plan.md", big, "h1", FileKind::Core, &[WF, "runtimes/a/capability.json"])]),
            ("b", vec![file("core/workflows/plan.md", big, "h1", FileKind::Core, &[WF, "runtimes/b/capability.json"])]),
        ]);
        let o = run(&base, &now, &[("runtimes/b/capability.json", FileStatus::Added)], &[]);
        assert!(o.ok, "{:?}", o.violations);
        assert!(o.new_files.is_empty(), "plan.md existed at the base: growth rules it, not NEW_FILE_CAP");
        assert_eq!(o.moved[0].attributed_to, ["runtimes/b/capability.json"]);
        assert_eq!(o.moved[0].change, Change::Added);
    }

    #[test]
    fn attribution_removed_paths_are_attributed_through_their_base_sources() {
        let src = "content/msd-core/references/old.md";
        let base = inv(vec![(
            "a",
            vec![file("core/references/old.md", 5, "h", FileKind::Core, &[src, "runtimes/a/capability.json"])],
        )]);
        let now = inv(vec![("a", vec![])]);
        let o = run(&base, &now, &[(src, FileStatus::Deleted)], &[]);
        assert!(o.ok);
        assert_eq!(o.counts.removed, 1);
        assert_eq!(o.by_source[src].status, FileStatus::Deleted);
        let o = run(&base, &now, &[], &[]);
        assert!(matches!(o.violations[..], [Violation::Unattributable { change: Change::Removed, .. }]));
    }

    #[test]
    fn attribution_leaves_out_the_bytes_of_the_binary() {
        let bin = |hash| file("core/bin/msd_run", 100, hash, FileKind::Program, &["src/bin/msd_run.rs"]);
        let o = run(&inv(vec![("a", vec![bin("old")])]), &inv(vec![("a", vec![bin("new")])]), &[], &[]);
        assert!(o.ok, "{:?}", o.violations);
        assert_eq!((o.counts.excluded, o.moved.len()), (1, 0));
    }

    #[test]
    fn attribution_spent_acks_cover_nothing() {
        let wf = |bytes, hash| {
            file("core/workflows/plan.md", bytes, hash, FileKind::Core, &[WF, "runtimes/a/capability.json"])
        };
        let base = inv(vec![("a", vec![wf(10, "h1")])]);
        let now = inv(vec![("a", vec![wf(11, "h2")])]);
        let ack = |spent| Ack { file: "f.json".into(), key: WF.into(), reason: "r".into(), spent };
        let o = run(&base, &now, &[(WF, FileStatus::Modified)], &[ack(true)]);
        assert_eq!(o.violations.len(), 1, "spent: growth unacknowledged, and the ack is not stale");
        assert!(matches!(o.violations[0], Violation::UnacknowledgedGrowth { before: 10, after: 11, .. }));
        assert_eq!(o.acks[0].status, AckStatus::Spent);
        let o = run(&base, &now, &[(WF, FileStatus::Modified)], &[ack(false)]);
        assert!(o.ok);
        assert_eq!((o.acks[0].status, o.acks[0].covered), (AckStatus::Used, 1));
    }
}
