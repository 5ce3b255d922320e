//! The atomic swap: one run's changes to one target, staged, journaled, then moved into place by
//! rename, so that a run killed at any moment leaves a tree the next run can make whole.
//!
//! Input: the home and a list of [`TxnOp`]s (put these bytes at this path; remove this path),
//! each with the hash the path had when the plan was made. Output: the ops carried out, or none
//! of them.
//!
//! Protocol, all under `<home>/.msd-install/` (same filesystem as the target, so moves are
//! renames):
//! 1. stage: every new file is written to `txn/new/<path>`; nothing visible changes;
//! 2. commit: `txn/journal.json` (the op list) is written beside the staged tree (an install
//!    writes it as soon as the target is staged, [`Prepared::journal_ahead`]: it is no commit
//!    point yet), the staged tree and its journal are flushed to disk at once (`syncfs`), the
//!    journal is renamed to `journal.json` (the commit point) and the rename flushed. A run that stages several
//!    targets before it commits any takes them all to their commit points together, with those
//!    two flushes per filesystem for all of them ([`commit_points`]), before any applies an op;
//! 3. apply: each op in order: the current file is kept at `txn/old/<path>` (hard link, or a move
//!    for removals), then `txn/new/<path>` is renamed over the destination. A reader sees the old
//!    bytes or the new bytes of each file, never a mix. A staged directory that holds new files
//!    only and has nothing at its destination (most of a fresh install) moves in whole instead,
//!    with one no-replace rename;
//! 4. finish: the journal is removed, then `txn/`. (The moves are not flushed separately: the
//!    filesystem journals them in order before the journal's removal.)
//!
//! Recovery ([`recover`], run first by every command that takes the target's lock): temp files
//! a killed run left in the work dir are removed; a journal at the commit point means the new
//! tree was staged whole, so the run is completed (roll forward); if completing fails, every
//! applied op is undone from `txn/old/` (roll back). A `txn/` without one (with or without its
//! staged journal) is an interrupted staging: it is discarded and the target was never touched. An error while
//! applying (not a crash) rolls back at once. Two homes carried out as one ([`commit_linked`],
//! `migrate`) name each other (the journals' `link`, the staging's `link.json`, each home's
//! `partner.json`, written before either half stages): recovering either home recovers the pair.
//!
//! Every op checks that its destination still has the hash the plan saw (or already has the new
//! one): a file changed by someone else during the run is never overwritten; the run rolls back
//! and says so.
//!
//! Test hook: the environment variable `MSD_INSTALL_FAULT_AFTER=N` makes the process abort (as
//! a crash or SIGKILL would: no destructors, no cleanup) just before its (N+1)-th disk
//! operation in this module and in migrations, `N=0` before the first. The crash tests run an
//! install for every N until one completes. `MSD_INSTALL_FAIL_COMMIT=K` makes the K-th
//! transaction of the process (0-based) fail with an io error at its commit point, its staged
//! tree discarded, as a full disk would; the `--all` tests use it. Neither is a user option nor in `--help`,
//! and both exist only with the `fault-injection` cargo feature, which the test build enables
//! (the package's dev-dependency on itself): a release binary has neither.

use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "fault-injection")]
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, DirCache, FileMode, SharedWrites, StatKey};
use msd_core::fs::relpath::RelPath;

/// The environment variable of the fault-injection test hook.
#[cfg(feature = "fault-injection")]
pub const FAULT_ENV: &str = "MSD_INSTALL_FAULT_AFTER";

/// The environment variable of the failing-commit test hook.
#[cfg(feature = "fault-injection")]
pub const FAIL_COMMIT_ENV: &str = "MSD_INSTALL_FAIL_COMMIT";

#[cfg(feature = "fault-injection")]
static FAULT_AFTER: AtomicUsize = AtomicUsize::new(usize::MAX);
#[cfg(feature = "fault-injection")]
static FAIL_COMMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
#[cfg(feature = "fault-injection")]
static COMMITS: AtomicUsize = AtomicUsize::new(0);
#[cfg(feature = "fault-injection")]
static FAULT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Reads the fault-injection hooks from the environment (once per process, at start). Without
/// the `fault-injection` feature (every build but the tests') there is nothing to read.
pub fn init_fault_hook() {
    #[cfg(feature = "fault-injection")]
    {
        if let Some(n) = std::env::var(FAULT_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()) {
            FAULT_AFTER.store(n, Ordering::SeqCst);
        }
        if let Some(k) = std::env::var(FAIL_COMMIT_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()) {
            FAIL_COMMIT.store(k, Ordering::SeqCst);
        }
    }
}

/// A point where the writer may be stopped by the test hook: called before each disk operation.
#[inline]
pub fn fault_point() {
    #[cfg(feature = "fault-injection")]
    {
        let n = FAULT_COUNT.fetch_add(1, Ordering::SeqCst);
        if n >= FAULT_AFTER.load(Ordering::SeqCst) {
            std::process::abort();
        }
    }
}

/// The failing-commit test hook: the injected error of this process's next commit point, if it
/// is the one `MSD_INSTALL_FAIL_COMMIT` names. Never one without the `fault-injection` feature.
fn injected_commit_failure() -> Option<std::io::Error> {
    #[cfg(feature = "fault-injection")]
    if COMMITS.fetch_add(1, Ordering::SeqCst) == FAIL_COMMIT.load(Ordering::SeqCst) {
        return Some(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!("{FAIL_COMMIT_ENV}: injected failure"),
        ));
    }
    None
}

/// What one op does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum TxnAction {
    /// Write new bytes.
    Put {
        /// sha256 of the new bytes.
        sha256: Sha256,
        /// Mode of the new file.
        mode: FileMode,
        /// The destination is a user's file edited in place (a settings file): it keeps its
        /// mode and owner, and a symlink there keeps pointing where it did, the file it points
        /// to replaced ([`fsx::replace_in_place`]). Its new bytes are staged private.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        in_place: bool,
    },
    /// Remove the file.
    Remove,
}

/// One operation on one path. (Not `deny_unknown_fields`: serde cannot combine it with the
/// flattened action; paths are still validated as [`RelPath`]s.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOp {
    /// Path relative to the home.
    pub path: RelPath,
    /// What happens.
    #[serde(flatten)]
    pub action: TxnAction,
    /// sha256 of the file when the plan was made, `None` when it did not exist.
    pub old_sha256: Option<Sha256>,
}

/// The journal: the whole transaction, written at the commit point.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    /// Format version.
    pub schema_version: u32,
    /// msd-install version that wrote it.
    pub tool_version: String,
    /// What the run was (`install claude global`), for messages.
    pub label: String,
    /// The ops, in the order they are applied.
    pub ops: Vec<TxnOp>,
    /// The directories (relative to the home) that were not there when the transaction was
    /// staged and that its new files go into: a rollback removes each once it is empty again,
    /// so a failed run leaves no empty `agents/` or `msd-core/` behind. Absent from journals of
    /// 0.3.5 and older (and when the run creates no directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<RelPath>,
    /// The transaction is one half of a pair on two homes that happens whole or not at all
    /// ([`commit_linked`]): the other half's home, and which half decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// Directories (relative to the home, deepest first) removed when empty once every op is
    /// applied: those an uninstall's install had created ([`Prepared::prune_after`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prune_dirs: Vec<RelPath>,
}

impl Journal {
    /// Its text: compact JSON and a final newline. Only msd-install reads it (recovery), with
    /// serde, which reads the pretty form of 0.4.0 and older as well; pretty-printing an op per
    /// file was a third of what writing the journals cost (issue 37).
    fn render(&self) -> Vec<u8> {
        let mut text = serde_json::to_vec(self).expect("journal serializes");
        text.push(b'\n');
        text
    }
}

/// The other half of a linked transaction (see [`Journal::link`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The other half's home.
    pub home: PathBuf,
    /// This half's commit point is the pair's: it is journaled second, so the first half,
    /// journaled alone, is completed only once this one's journal exists, and discarded
    /// otherwise.
    pub decides: bool,
}

/// Errors of the swap.
#[derive(Debug, thiserror::Error)]
pub enum TxnError {
    /// An io error on a path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A destination changed between planning and writing.
    #[error("{path} changed while msd-install was running")]
    Conflict {
        /// The path.
        path: String,
    },
    /// The journal of an interrupted run is unreadable.
    #[error("{path}: the journal of an interrupted run is unreadable: {message}")]
    BadJournal {
        /// The journal.
        path: String,
        /// Why.
        message: String,
    },
    /// Completing an interrupted run failed and so did undoing it.
    #[error("an interrupted run on {home} can be neither completed ({forward}) nor undone ({back})")]
    Stuck {
        /// The home.
        home: String,
        /// Why completing failed.
        forward: String,
        /// Why undoing failed.
        back: String,
    },
    /// A path escapes the home through a symlink.
    #[error(transparent)]
    Confine(#[from] fsx::ConfineError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TxnError + '_ {
    move |source| TxnError::Io { path: path.display().to_string(), source }
}

/// What [`recover`] found and did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "recovered", rename_all = "kebab-case")]
pub enum Recovery {
    /// An interrupted run was completed.
    Completed {
        /// Its label.
        label: String,
        /// Its ops.
        ops: usize,
    },
    /// An interrupted run could not be completed and was undone.
    RolledBack {
        /// Its label.
        label: String,
        /// Why it could not be completed.
        reason: String,
    },
    /// A run stopped while staging; the target had not been touched. The staging was removed.
    Discarded,
}

/// The staging area and journal of a home, and what the transaction knows of its disk: the
/// directories it looked at ([`DirCache`]: every look and change of the transaction goes
/// through it) and the files of shared bytes already written ([`SharedWrites`]). Both are
/// values of the caller's: an install shares one set of shared writes across its targets, and
/// gives each target the cache its survey filled.
#[derive(Debug, Clone)]
pub struct Area {
    home: PathBuf,
    allow_symlinks: bool,
    dirs: Arc<DirCache>,
    shared: Arc<SharedWrites>,
    /// Each staged file's stat is taken as it is written, for [`Prepared::commit_keyed`].
    keyed: bool,
}

impl Area {
    /// The area of `home`, knowing nothing of its disk yet.
    pub fn new(home: &Path, allow_symlinks: bool) -> Area {
        Area { home: home.to_path_buf(), allow_symlinks, dirs: Arc::default(), shared: Arc::default(), keyed: false }
    }

    /// This area, looking directories up in `dirs` (what a survey of the home learned) and
    /// linking shared bytes to the files `shared` saw written (by other targets of the run).
    pub fn with_caches(self, dirs: &Arc<DirCache>, shared: &Arc<SharedWrites>) -> Area {
        Area { dirs: dirs.clone(), shared: shared.clone(), ..self }
    }

    /// This area, taking each staged file's stat as it is written (from its descriptor), for
    /// [`Prepared::commit_keyed`] to hand back: 64 bytes a file held until the commit.
    pub fn keyed(self) -> Area {
        Area { keyed: true, ..self }
    }

    fn work(&self) -> PathBuf {
        self.home.join(fsx::WORK_DIR)
    }

    /// The journal's path.
    pub fn journal_path(&self) -> PathBuf {
        self.work().join("journal.json")
    }

    fn txn(&self) -> PathBuf {
        self.work().join("txn")
    }

    /// The journal while it is written, before its commit point: inside the staging area, so
    /// that an interrupted staging is discarded with it.
    fn staged_journal(&self) -> PathBuf {
        self.txn().join("journal.json")
    }

    fn new_of(&self, p: &RelPath) -> PathBuf {
        self.in_txn("new", p)
    }

    fn old_of(&self, p: &RelPath) -> PathBuf {
        self.in_txn("old", p)
    }

    /// `txn()/<part>/<p>` in one allocation, not four joins: a path per staged file and move
    /// (23,000 in a fresh `--all`).
    fn in_txn(&self, part: &str, p: &RelPath) -> PathBuf {
        let len = self.home.as_os_str().len() + fsx::WORK_DIR.len() + part.len() + p.as_str().len() + 8;
        let mut out = PathBuf::with_capacity(len);
        for piece in
            [self.home.as_path(), Path::new(fsx::WORK_DIR), Path::new("txn"), Path::new(part), Path::new(p.as_str())]
        {
            out.push(piece);
        }
        out
    }

    fn dest(&self, p: &RelPath) -> Result<PathBuf, TxnError> {
        Ok(self.dirs.confined(&self.home, p, self.allow_symlinks)?)
    }

    /// The destination of a file that is to be new, its directories checked for symlinks but
    /// not the file itself (a no-replace move never follows or replaces what is there); `None`
    /// for a file directly in the home.
    fn dest_of_new(&self, p: &RelPath) -> Result<Option<PathBuf>, TxnError> {
        let Some(parent) = p.parent() else { return Ok(None) };
        Ok(Some(self.dirs.confined(&self.home, &parent, self.allow_symlinks)?.join(p.file_name())))
    }

    /// The staged half of a linked transaction names its other half's home here while it is
    /// staged, before any journal ([`Prepared::link_staging`]).
    fn staged_link(&self) -> PathBuf {
        self.txn().join("link.json")
    }

    /// The other half's home of a linked transaction an interrupted run left here: from the
    /// journal, else from the staging, else from the note of a first half ([`Area::note_partner`]).
    pub fn partner(&self) -> Option<PathBuf> {
        if let Ok(Some(j)) = self.journal()
            && let Some(l) = j.link
        {
            return Some(l.home);
        }
        let staged = fsx::read_if_exists(&self.staged_link()).ok().flatten();
        staged.and_then(|b| serde_json::from_slice::<Link>(&b).ok()).map(|l| l.home).or_else(|| self.noted_partner())
    }

    /// Where the first half of a linked transaction names the other half's home outside its
    /// staging area, so that it outlives this half's own journal and staging.
    fn partner_note(&self) -> PathBuf {
        self.work().join("partner.json")
    }

    /// Names `partner`, the home of the other half of a linked transaction ([`commit_linked`]),
    /// in this home, before either half stages anything and until the pair is done (the note is
    /// removed when the returned value is dropped). Both homes carry one (`migrate` writes them
    /// before the decider's staging begins): the first half finishes first, so its journal and
    /// staging are gone while the other half's may still be there, and the decider stages
    /// before the first half's home holds anything else; with the notes, a recovery of either
    /// home finds what the other holds and finishes or discards it ([`recover`]). The note alone
    /// is nothing to recover: [`Area::pending`] does not count it.
    pub fn note_partner(&self, partner: &Path) -> Result<PartnerNote, TxnError> {
        let path = self.partner_note();
        let link = Link { home: partner.to_path_buf(), decides: false };
        fault_point();
        fsx::write_atomic(&path, &serde_json::to_vec(&link).expect("link serializes"), FileMode::Regular)
            .map_err(io(&path))?;
        Ok(PartnerNote(self.clone(), partner.to_path_buf()))
    }

    /// The other half's home this home's note names ([`Area::note_partner`]).
    fn noted_partner(&self) -> Option<PathBuf> {
        let bytes = fsx::read_if_exists(&self.partner_note()).ok()??;
        serde_json::from_slice::<Link>(&bytes).ok().map(|l| l.home)
    }

    /// Removes the note of [`Area::note_partner`].
    fn forget_partner(&self) -> Result<(), TxnError> {
        let path = self.partner_note();
        if fsx::lexists(&path) {
            fault_point();
            fsx::remove_file_if_exists(&path).map_err(io(&path))?;
        }
        Ok(())
    }

    /// Removes the note of [`Area::note_partner`] when it names `home`.
    fn forget_partner_of(&self, home: &Path) -> Result<(), TxnError> {
        if self.noted_partner().is_some_and(|h| h == home) {
            self.forget_partner()?;
        }
        Ok(())
    }

    /// Whether an interrupted run left something to recover.
    pub fn pending(&self) -> bool {
        self.journal_path().exists() || self.txn().exists()
    }

    /// Reads the journal, if any.
    pub fn journal(&self) -> Result<Option<Journal>, TxnError> {
        let path = self.journal_path();
        let Some(bytes) = fsx::read_if_exists(&path).map_err(io(&path))? else { return Ok(None) };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| TxnError::BadJournal { path: path.display().to_string(), message: e.to_string() })
    }
}

/// The note of [`Area::note_partner`], removed when dropped if it still names the same partner
/// (a crash leaves it for the next recovery of either home, which follows and removes it).
#[derive(Debug)]
pub struct PartnerNote(Area, PathBuf);

impl Drop for PartnerNote {
    fn drop(&mut self) {
        let _ = self.0.forget_partner_of(&self.1);
    }
}

/// A staged op: the op and, for puts, its bytes.
#[derive(Debug, Clone)]
pub struct Staged {
    /// The op.
    pub op: TxnOp,
    /// The new bytes of a put.
    pub bytes: Option<crate::pipeline::convert::Bytes>,
    /// Many targets receive these bytes alike: stage a hard link to the copy the run
    /// already wrote, where it can ([`SharedWrites::write_new`]).
    pub shared: bool,
}

impl Staged {
    /// A put of `bytes` at `path`, which had `old_sha256` when planned.
    pub fn put(
        path: RelPath,
        bytes: impl Into<crate::pipeline::convert::Bytes>,
        mode: FileMode,
        old_sha256: Option<Sha256>,
    ) -> Staged {
        let bytes = bytes.into();
        let sha256 = bytes.sha256();
        Staged::put_hashed(path, bytes, sha256, mode, old_sha256)
    }

    /// A put whose bytes were already hashed (the plan hashes every emitted file once).
    pub fn put_hashed(
        path: RelPath,
        bytes: impl Into<crate::pipeline::convert::Bytes>,
        sha256: Sha256,
        mode: FileMode,
        old_sha256: Option<Sha256>,
    ) -> Staged {
        Staged {
            op: TxnOp { path, action: TxnAction::Put { sha256, mode, in_place: false }, old_sha256 },
            bytes: Some(bytes.into()),
            shared: false,
        }
    }

    /// This put, of a user's file edited in place ([`TxnAction::Put::in_place`]).
    pub fn in_place(mut self) -> Staged {
        if let TxnAction::Put { in_place, .. } = &mut self.op.action {
            *in_place = true;
        }
        self
    }

    /// This put, staged as a link to an identical file already written ([`Staged::shared`]).
    pub fn shared(mut self) -> Staged {
        self.shared = true;
        self
    }

    /// A removal of `path`, whose bytes hashed to `old_sha256` when planned.
    pub fn remove(path: RelPath, old_sha256: Sha256) -> Staged {
        Staged {
            op: TxnOp { path, action: TxnAction::Remove, old_sha256: Some(old_sha256) },
            bytes: None,
            shared: false,
        }
    }
}

/// Progress callbacks of a commit (the number of ops applied so far).
pub trait Progress {
    /// Staging starts: `n` files.
    fn staging(&self, n: usize);
    /// One more file staged or op applied.
    fn tick(&self);
    /// Applying starts: `n` ops.
    fn applying(&self, n: usize);
}

/// A progress sink that shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn staging(&self, _: usize) {}
    fn tick(&self) {}
    fn applying(&self, _: usize) {}
}

/// Carries out `ops` on `area` as one transaction: all of them, or (on error) none.
pub fn commit(area: &Area, label: &str, ops: Vec<Staged>, progress: &dyn Progress) -> Result<(), TxnError> {
    prepare(area, label, ops, progress)?.commit(progress)
}

/// A transaction staged whole (step 1: `txn/new/` written) and not yet carried out.
/// [`commit_points`] journals it (with others: two flushes per filesystem for all of them) and
/// [`Prepared::commit`] applies it, journaling it first if that was not done. Dropped instead,
/// its staged tree is discarded, and its journal first when it had one (no op was applied after
/// it: the next run finds an interrupted staging, or nothing). Holds the ops without their
/// bytes: a run that stages several targets before it commits any keeps no file's bytes in
/// memory.
#[derive(Debug)]
pub struct Prepared {
    area: Area,
    journal: Journal,
    /// Its journal is at its commit point ([`Area::journal_path`], durable).
    committed: bool,
    /// Its journal is written in its staging area already ([`Prepared::journal_ahead`]): not a
    /// commit point yet.
    journaled: bool,
    /// Applied, or nothing to do.
    done: bool,
    /// The [`StatKey`] of each op's staged file as it was written, by the op's index, in a
    /// [`Area::keyed`] area (`None` for removals and for files linked or copied:
    /// [`SharedWrites`] may link more names to them, which changes their status-change time).
    keys: Vec<Option<StatKey>>,
}

/// The files a committed transaction put in place whose [`StatKey`] is still the one taken when
/// they were staged ([`Prepared::commit_keyed`]), sorted by path: those moved in with a whole
/// directory (a move of a directory changes nothing of the files in it; a file moved alone gets
/// a new status-change time, so is not here). For the fast path's record, which needs the stat
/// of every installed file and so looks at the disk only for the files not here.
#[derive(Debug, Default)]
pub struct Settled(Vec<(RelPath, StatKey)>);

impl Settled {
    /// The staged stat of `path`, when it holds.
    pub fn get(&self, path: &RelPath) -> Option<StatKey> {
        let i = self.0.binary_search_by(|(p, _)| p.as_str().cmp(path.as_str())).ok()?;
        Some(self.0[i].1)
    }

    /// How many files it knows.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it knows none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Why [`commit_points`] stopped: the transaction at index `at` of those it was given failed
/// with `error`; of the ones before it, those that needed a journal reached their commit point
/// (each is to be applied or dropped; [`Prepared::is_committed`]), and none after it did.
#[derive(Debug)]
pub struct CommitPointError {
    /// The index, among the transactions given, of the one that failed.
    pub at: usize,
    /// What failed.
    pub error: TxnError,
}

/// Step 2 of several transactions at once, each its own commit point, with two flushes per
/// filesystem for all of them instead of two per transaction (a flush costs the disk's latency
/// each time whatever it carries, and targets staged before any commits usually share a disk):
/// 1. each journal is written into its staging area (`txn/journal.json`, not yet the commit
///    point), then one `syncfs` per filesystem makes the staged trees and their journals
///    durable;
/// 2. each journal is renamed to `journal.json` in its work dir (its commit point), then one
///    more flush per filesystem makes the renames durable before any transaction applies an
///    op.
///
/// A run killed in between leaves, per target, a `txn/` with or without a staged journal (an
/// interrupted staging, which the next run discards), or a whole journal whose staged tree is
/// on disk (which the next run completes). Transactions already journaled, or with nothing to
/// do, are skipped; the rest must be in order (the ones given first commit first). Returns how
/// many flushes were made. On an error in part 1 none is committed; in part 2 the ones before
/// the failing one are, and the flush of their renames is still made (a failure of that flush
/// takes every commit point back: the journals are removed, no op having been applied).
pub fn commit_points(prepared: &mut [&mut Prepared]) -> Result<usize, CommitPointError> {
    // The transactions that still need a journal, and where each stands among those given.
    let (at, mut todo): (Vec<usize>, Vec<&mut Prepared>) =
        prepared.iter_mut().map(|p| &mut **p).enumerate().filter(|(_, p)| !p.done && !p.committed).unzip();
    let Some(&first) = at.first() else { return Ok(0) };
    let none = |error| CommitPointError { at: first, error };
    for p in todo.iter().filter(|p| !p.journaled) {
        let text = p.journal.render();
        let staged = p.area.staged_journal();
        fault_point();
        p.area.dirs.write_new(&staged, &text, FileMode::Regular).map_err(|e| none(io(&staged)(e)))?;
    }
    let works: Vec<PathBuf> = todo.iter().map(|p| p.area.work()).collect();
    let mut flushes = flush(&works).map_err(none)?;
    let mut failed = None;
    for (n, p) in todo.iter_mut().enumerate() {
        let jpath = p.area.journal_path();
        let moved = if let Some(injected) = injected_commit_failure() {
            Err(injected)
        } else {
            fault_point();
            p.area.dirs.rename(&p.area.staged_journal(), &jpath)
        };
        if let Err(e) = moved {
            failed = Some((n, CommitPointError { at: at[n], error: io(&jpath)(e) }));
            break;
        }
        // The staged journal is the commit point's now.
        p.committed = true;
        p.journaled = false;
    }
    let committed = failed.as_ref().map_or(todo.len(), |(n, _)| *n);
    if committed > 0 {
        match flush(&works[..committed]) {
            Ok(n) => flushes += n,
            Err(error) => {
                for p in &mut todo[..committed] {
                    p.uncommit();
                }
                return Err(none(error));
            }
        }
    }
    match failed {
        Some((_, f)) => Err(f),
        None => Ok(flushes),
    }
}

/// Carries out two transactions on two homes as one ([`Journal::link`]): after a crash at any
/// point, recovery of either home leaves both applied or neither. Both journals are written
/// into their staging areas and flushed; `first`'s is moved to its commit point and flushed,
/// then `decider`'s (the pair's commit point) and flushed. `first` is applied and finished,
/// then `decider`. Recovery completes `first` only when `decider`'s journal exists (it is
/// removed last), and recovering `decider` completes `first` before it. Each home names the
/// other's in a note that outlives its own journal ([`Area::note_partner`], written by the
/// caller before either half is staged): a recovery of `first`'s home after `first` finished
/// still finds and finishes `decider`, and one of either home while `decider` alone was staged
/// finds and discards that staging.
///
/// An error (not a crash) before the pair's commit point, or while applying `first`, undoes
/// everything: `Err((false, e))`. An error while applying `decider` undoes `decider` only, with
/// `first` applied: `Err((true, e))`.
pub fn commit_linked(
    mut first: Prepared,
    mut decider: Prepared,
    progress: &dyn Progress,
) -> Result<(), (bool, TxnError)> {
    if first.done || decider.done {
        // One half has nothing to do: the other is a transaction of its own.
        let first_done = first.done;
        first.commit(progress).map_err(|e| (false, e))?;
        return decider.commit(progress).map_err(|e| (!first_done, e));
    }
    first.journal.link = Some(Link { home: decider.area.home.clone(), decides: false });
    decider.journal.link = Some(Link { home: first.area.home.clone(), decides: true });
    let err = |e| (false, e);
    for p in [&first, &decider] {
        let text = p.journal.render();
        let staged = p.area.staged_journal();
        fault_point();
        p.area.dirs.write_new(&staged, &text, FileMode::Regular).map_err(|e| err(io(&staged)(e)))?;
    }
    let works = [first.area.work(), decider.area.work()];
    flush(&works).map_err(err)?;
    for p in [&mut first, &mut decider] {
        let jpath = p.area.journal_path();
        let moved = match injected_commit_failure() {
            Some(injected) => Err(injected),
            None => {
                fault_point();
                p.area.dirs.rename(&p.area.staged_journal(), &jpath)
            }
        };
        moved.map_err(|e| err(io(&jpath)(e)))?;
        p.committed = true;
        flush(std::slice::from_ref(&p.area.work())).map_err(err)?;
    }
    // The pair is committed. (A dropped half takes its commit point back; not from here on.)
    first.done = true;
    decider.done = true;
    // The first half's ops, the decider's, then the first half's finish and the decider's (its
    // journal, the pair's commit point, goes last).
    let apply = |p: &Prepared| -> Result<(), TxnError> {
        progress.applying(p.journal.ops.len());
        forward(&p.area, &p.journal, progress).map(drop).or_else(|e| {
            undo(&p.area, &p.journal)?;
            Err(e)
        })
    };
    if let Err(e) = apply(&first) {
        finish(&first.area).map_err(|e| (false, e))?;
        // Nothing of `decider` was applied: its commit point is taken back.
        decider.done = false;
        decider.uncommit();
        return Err((false, e));
    }
    let second = apply(&decider);
    finish(&first.area).map_err(|e| (true, e))?;
    finish(&decider.area).map_err(|e| (true, e))?;
    second.map_err(|e| (true, e))
}

/// One flush per filesystem of the work dirs `works` ([`fsx::sync_fs_each_once`]).
fn flush(works: &[PathBuf]) -> Result<usize, TxnError> {
    let paths: Vec<&Path> = works.iter().map(PathBuf::as_path).collect();
    fsx::sync_fs_each_once(&paths).map_err(|e| TxnError::Io {
        path: works.iter().map(|w| w.display().to_string()).collect::<Vec<_>>().join(", "),
        source: e,
    })
}

/// Step 1 of [`commit`]: stages `ops` on `area` (every destination checked first) as the
/// transaction `label` (`install claude global`, for messages). On error nothing is left staged.
pub fn prepare(area: &Area, label: &str, ops: Vec<Staged>, progress: &dyn Progress) -> Result<Prepared, TxnError> {
    let area = area.clone();
    let journal = |ops, created_dirs| Journal {
        schema_version: 1,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        label: label.to_string(),
        ops,
        created_dirs,
        link: None,
        prune_dirs: Vec::new(),
    };
    if ops.is_empty() {
        let journal = journal(Vec::new(), Vec::new());
        return Ok(Prepared { area, journal, committed: false, journaled: false, done: true, keys: Vec::new() });
    }
    // A leftover from an interrupted run is recovered before planning; anything still here is
    // stale staging and is cleared.
    let txn = area.txn();
    area.dirs.remove_dir_all_if_exists(&txn).map_err(io(&txn))?;
    progress.staging(ops.iter().filter(|s| s.bytes.is_some()).count());
    let mut ops = ops;
    let keys = match stage(&area, &mut ops, progress) {
        Ok(keys) => keys,
        Err(e) => {
            let _ = area.dirs.remove_dir_all_if_exists(&txn);
            return Err(e);
        }
    };
    // Into a buffer of its own, sized to fit: collected in place, the journal would keep the
    // staged ops' larger buffer (and its growth) until the run ends.
    let mut journal_ops = Vec::with_capacity(ops.len());
    journal_ops.extend(ops.into_iter().map(|s| s.op));
    let created = created_dirs(&area, &journal_ops);
    let journal = journal(journal_ops, created);
    Ok(Prepared { area, journal, committed: false, journaled: false, done: false, keys })
}

impl Prepared {
    /// The home it is staged in.
    pub fn home(&self) -> &Path {
        &self.area.home
    }

    /// Whether its journal is at its commit point (and no op applied yet, unless committed).
    pub fn is_committed(&self) -> bool {
        self.committed
    }

    /// Steps 2 to 4: journals the staged ops (the commit point) unless [`commit_points`] did,
    /// applies them and finishes.
    pub fn commit(self, progress: &dyn Progress) -> Result<(), TxnError> {
        self.commit_keyed(progress).map(drop)
    }

    /// [`Prepared::commit`], returning the files whose stat is still the one taken as they were
    /// staged ([`Settled`]).
    pub fn commit_keyed(mut self, progress: &dyn Progress) -> Result<Settled, TxnError> {
        if self.done {
            return Ok(Settled::default());
        }
        commit_points(&mut [&mut self]).map_err(|e| e.error)?;
        self.done = true;
        let (area, journal) = (&self.area, &self.journal);
        progress.applying(journal.ops.len());
        let whole = match forward(area, journal, progress) {
            Ok(whole) => whole,
            Err(e) => {
                undo(area, journal)?;
                finish(area)?;
                return Err(e);
            }
        };
        finish(area)?;
        // The journal is done with: its paths move into the answer.
        let ops = std::mem::take(&mut self.journal.ops);
        let keys = std::mem::take(&mut self.keys);
        let mut settled: Vec<(RelPath, StatKey)> = ops
            .into_iter()
            .zip(keys)
            .zip(whole)
            .filter_map(|((op, key), whole)| Some((op.path, key.filter(|_| whole)?)))
            .collect();
        settled.sort_unstable_by(|(a, _), (b, _)| a.as_str().cmp(b.as_str()));
        Ok(Settled(settled))
    }

    /// Removes `dirs` (deepest first) when they are empty once every op is applied, as part of
    /// the transaction (a run completed by recovery removes them too).
    pub fn prune_after(&mut self, dirs: Vec<RelPath>) {
        self.journal.prune_dirs = dirs;
        // A journal written ahead no longer says all: it is written again at the commit point.
        self.journaled = false;
    }

    /// Writes its journal into its staging area now, beside the staged tree (step 2's first
    /// write, which is no commit point: a run stopped after it leaves an interrupted staging,
    /// discarded by the next run), so that [`commit_points`] only flushes and renames it. An
    /// install's workers do this as each target is staged, on both cores, instead of the one
    /// thread that commits rendering and writing every target's journal after the last is
    /// staged. The journal must not change after this but through [`Prepared::prune_after`].
    pub fn journal_ahead(&mut self) -> Result<(), TxnError> {
        if self.done || self.committed || self.journaled {
            return Ok(());
        }
        let text = self.journal.render();
        let staged = self.area.staged_journal();
        fault_point();
        self.area.dirs.write_new(&staged, &text, FileMode::Regular).map_err(io(&staged))?;
        self.journaled = true;
        Ok(())
    }

    /// Names `partner` as the other half's home while this transaction is staged, so that an
    /// interrupted staging discarded here discards the other half's too ([`recover`]).
    pub fn link_staging(&self, partner: &Path) -> Result<(), TxnError> {
        if self.done {
            return Ok(());
        }
        let link = Link { home: partner.to_path_buf(), decides: true };
        let path = self.area.staged_link();
        fault_point();
        self.area
            .dirs
            .write_new(&path, &serde_json::to_vec(&link).expect("link serializes"), FileMode::Regular)
            .map_err(io(&path))
    }

    /// Takes back a commit point no op was applied after: the journal is removed. False when
    /// that failed: the journal and its staged tree then stay for the next run to complete.
    fn uncommit(&mut self) -> bool {
        if self.committed {
            fault_point();
            if fsx::remove_file_if_exists(&self.area.journal_path()).is_err() {
                return false;
            }
            self.committed = false;
        }
        true
    }
}

impl Drop for Prepared {
    /// Not applied: the journal, if it was written, is removed (no op was applied after it),
    /// then the staged tree (best effort; the next run would discard it too).
    fn drop(&mut self) {
        if !self.done && self.uncommit() {
            let _ = self.area.dirs.remove_dir_all_if_exists(&self.area.txn());
        }
    }
}

/// The directories the new files of `ops` go into that are not in the home yet (each looked at
/// once; a directory under one that is missing is missing too), outermost first.
fn created_dirs(area: &Area, ops: &[TxnOp]) -> Vec<RelPath> {
    let mut seen: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
    for op in ops.iter().filter(|o| o.old_sha256.is_none() && matches!(o.action, TxnAction::Put { .. })) {
        let mut parent_missing = false;
        for dir in ancestors(op.path.as_str()) {
            let missing = *seen.entry(dir).or_insert_with(|| parent_missing || !fsx::lexists(&area.home.join(dir)));
            parent_missing = missing;
        }
    }
    seen.into_iter().filter(|(_, missing)| *missing).filter_map(|(d, _)| RelPath::new(d).ok()).collect()
}

/// Writes each put's bytes into the staging area and drops them (the last holder of a converted
/// file's bytes is its put: a tree is not held whole while it is staged).
/// Returns the [`StatKey`] of each op's staged file, by the op's index, where it holds until the
/// file is moved ([`Prepared::keys`]); none in an area not [`Area::keyed`].
fn stage(area: &Area, ops: &mut [Staged], progress: &dyn Progress) -> Result<Vec<Option<StatKey>>, TxnError> {
    for s in ops.iter() {
        // Destinations are checked before anything is staged.
        area.dest(&s.op.path)?;
    }
    // Only a keyed area keeps them (none: 72 bytes an op held until the commit).
    let mut keys = Vec::with_capacity(if area.keyed { ops.len() } else { 0 });
    for s in ops.iter_mut() {
        let mut key = None;
        if let (Some(bytes), TxnAction::Put { mode, sha256, in_place }) = (s.bytes.take(), &s.op.action) {
            let p = area.new_of(&s.op.path);
            // A user's file may hold a secret: its new bytes are nobody else's until they get
            // its own mode.
            let mode = if *in_place && s.op.old_sha256.is_some() { &FileMode::Private } else { mode };
            fault_point();
            // Bytes read from a file are copied from it (and checked), never loaded whole.
            if s.shared || bytes.file().is_some() {
                let dest = area.dest(&s.op.path)?;
                area.shared.write_new(&area.dirs, &p, bytes.source(), sha256, *mode, &dest).map_err(io(&p))?;
            } else if area.keyed {
                key = Some(area.dirs.write_new_keyed(&p, &bytes, *mode).map_err(io(&p))?);
            } else {
                area.dirs.write_new(&p, &bytes, *mode).map_err(io(&p))?;
            }
            drop(bytes);
            progress.tick();
        }
        if area.keyed {
            keys.push(key);
        }
    }
    Ok(keys)
}

fn finish(area: &Area) -> Result<(), TxnError> {
    let jpath = area.journal_path();
    fault_point();
    fsx::remove_file_if_exists(&jpath).map_err(io(&jpath))?;
    let txn = area.txn();
    fault_point();
    area.dirs.remove_dir_all_if_exists(&txn).map_err(io(&txn))
}

/// Applies every op not yet applied. Idempotent: an op whose destination already holds its
/// result is skipped, so a crash anywhere in here is completed by running it again. Returns, by
/// op, whether it was carried out by a move of a whole directory it is in (the file itself was
/// not moved: [`Settled`]).
fn forward(area: &Area, journal: &Journal, progress: &dyn Progress) -> Result<Vec<bool>, TxnError> {
    let mut dirs = std::collections::BTreeSet::new();
    let mut whole = WholeDirs::of(&journal.ops);
    let mut moved_whole = vec![false; journal.ops.len()];
    for (op, moved_whole) in journal.ops.iter().zip(&mut moved_whole) {
        if whole.moved(area, op, &mut dirs)? {
            *moved_whole = true;
            progress.tick();
            continue;
        }
        if op.old_sha256.is_none()
            && matches!(op.action, TxnAction::Put { .. })
            && let Some(dest) = area.dest_of_new(&op.path)?
        {
            // A new file moves in only if nothing is there (one atomic call, no look first);
            // otherwise it is checked below like any other put.
            fault_point();
            if area.dirs.rename_new(&area.new_of(&op.path), &dest).map_err(io(&dest))? {
                if let Some(parent) = dest.parent() {
                    dirs.insert(parent.to_path_buf());
                }
                progress.tick();
                continue;
            }
        }
        let dest = area.dest(&op.path)?;
        let cur = fsx::sha256_file(&dest).map_err(io(&dest))?;
        match &op.action {
            TxnAction::Put { sha256, in_place, .. } => {
                if cur == Some(*sha256) {
                    progress.tick();
                    continue;
                }
                if cur != op.old_sha256 {
                    return Err(TxnError::Conflict { path: dest.display().to_string() });
                }
                let new = area.new_of(&op.path);
                let old = area.old_of(&op.path);
                if cur.is_some() && !old.exists() {
                    // Through a symlink (allowed), the file it points to is what changes.
                    let kept = if *in_place { fsx::write_target(&dest).map_err(io(&dest))? } else { dest.clone() };
                    fault_point();
                    area.dirs.preserve(&kept, &old).map_err(io(&dest))?;
                }
                fault_point();
                if *in_place {
                    area.dirs.replace_in_place(&new, &dest).map_err(io(&dest))?;
                } else {
                    area.dirs.rename(&new, &dest).map_err(io(&dest))?;
                }
            }
            TxnAction::Remove => {
                let Some(cur) = cur else {
                    progress.tick();
                    continue;
                };
                if Some(&cur) != op.old_sha256.as_ref() {
                    return Err(TxnError::Conflict { path: dest.display().to_string() });
                }
                let old = area.old_of(&op.path);
                fault_point();
                if old.exists() {
                    fsx::remove_file_if_exists(&dest).map_err(io(&dest))?;
                } else {
                    area.dirs.rename(&dest, &old).map_err(io(&dest))?;
                }
                if let Some(parent) = dest.parent() {
                    area.dirs.prune_empty_dirs(parent, &prune_stop(&area.home, &op.path));
                }
            }
        }
        if let Some(parent) = dest.parent() {
            dirs.insert(parent.to_path_buf());
        }
        progress.tick();
    }
    for d in &journal.prune_dirs {
        let dest = area.dest(d)?;
        if fsx::is_dir(&dest) {
            fault_point();
            area.dirs.remove_dir_if_empty(&dest);
        }
    }
    // The staged bytes were flushed before the journal was written (the commit point). The
    // moves are metadata the filesystem journals in order, so the journal's removal never
    // reaches the disk before them; a power cut in between leaves the journal, and the next run
    // re-applies (every op is idempotent). Filesystems without that ordering get each
    // directory flushed.
    if !cfg!(target_os = "linux") {
        for d in &dirs {
            fsx::sync_dir(d);
        }
    }
    Ok(moved_whole)
}

/// The directories of a transaction that hold new files only: each is staged whole under
/// `txn/new/`, so where nothing is at its destination the whole directory moves in with one
/// no-replace rename instead of one per file (a fresh install makes most of its directories
/// this way, as `cp -r` would). Every op under a moved directory is then done: its destination
/// holds its new bytes, which is what [`forward`] checks when it runs again after a crash (the
/// staged file is gone, the destination has the op's hash: skipped), and [`undo`] removes them
/// file by file like any other new file.
struct WholeDirs<'j> {
    /// Directory (relative to the home) -> what it is in this pass.
    dirs: std::collections::HashMap<&'j str, Whole>,
}

/// A directory of [`WholeDirs`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Whole {
    /// Some op under it replaces or removes a file: never moved whole.
    Mixed,
    /// Every op under it puts a new file; not tried yet.
    NewOnly,
    /// Moved in whole.
    Moved,
    /// Tried and not moved (something is at the destination, or the staged one is gone).
    Stayed,
}

impl<'j> WholeDirs<'j> {
    fn of(ops: &'j [TxnOp]) -> WholeDirs<'j> {
        let mut dirs = std::collections::HashMap::new();
        for op in ops {
            let is_new = op.old_sha256.is_none() && matches!(op.action, TxnAction::Put { .. });
            for dir in ancestors(op.path.as_str()) {
                let e = dirs.entry(dir).or_insert(Whole::NewOnly);
                if !is_new {
                    *e = Whole::Mixed;
                }
            }
        }
        WholeDirs { dirs }
    }

    /// Whether `op` was carried out by moving one of its directories in whole (now or earlier in
    /// this pass), trying its new-only directories from the top down.
    fn moved(
        &mut self,
        area: &Area,
        op: &'j TxnOp,
        parents: &mut std::collections::BTreeSet<PathBuf>,
    ) -> Result<bool, TxnError> {
        if !cfg!(target_os = "linux") {
            return Ok(false);
        }
        for dir in ancestors(op.path.as_str()) {
            match self.dirs.get(dir) {
                Some(Whole::Moved) => return Ok(true),
                Some(Whole::NewOnly) => {}
                _ => continue,
            }
            let rel = RelPath::new(dir).expect("an ancestor of a valid path is valid");
            // A directory directly in the home goes to `<home>/<dir>` (the home itself is the
            // resolved target; only what is under it is checked for symlinks).
            let dest = area.dest_of_new(&rel)?.unwrap_or_else(|| area.home.join(dir));
            fault_point();
            let moved = area.dirs.rename_dir_new(&area.new_of(&rel), &dest).map_err(io(&dest))?;
            self.dirs.insert(dir, if moved { Whole::Moved } else { Whole::Stayed });
            if moved {
                if let Some(parent) = dest.parent() {
                    parents.insert(parent.to_path_buf());
                }
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The directories a relative path is in, outermost first: `a/b/c.md` -> `a`, `a/b`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// Empty directories are pruned up to the first segment of the path (`skills/msd-x/` goes,
/// `skills/` stays).
pub fn prune_stop(home: &Path, rel: &RelPath) -> PathBuf {
    home.join(rel.as_str().split('/').next().unwrap_or_default())
}

/// Undoes every applied op, last first, from the copies kept in `txn/old/`, then removes the
/// directories the transaction created that are empty again (deepest first; one that holds
/// anything, the user's file put there meanwhile, stays).
fn undo(area: &Area, journal: &Journal) -> Result<(), TxnError> {
    undo_ops(area, journal)?;
    let mut dirs: Vec<&RelPath> = journal.created_dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.as_str().matches('/').count()));
    for d in dirs {
        let dest = area.dest(d)?;
        if fsx::is_dir(&dest) {
            fault_point();
            area.dirs.remove_dir_if_empty(&dest);
        }
    }
    Ok(())
}

fn undo_ops(area: &Area, journal: &Journal) -> Result<(), TxnError> {
    for op in journal.ops.iter().rev() {
        let dest = area.dest(&op.path)?;
        let old = area.old_of(&op.path);
        let cur = fsx::sha256_file(&dest).map_err(io(&dest))?;
        match &op.action {
            TxnAction::Put { sha256, in_place, .. } => {
                if cur != Some(*sha256) {
                    continue; // never applied (or changed by someone else: leave it)
                }
                fault_point();
                if old.exists() && *in_place {
                    // Back through the link it was written through, with the mode and owner
                    // the file had (kept by the write).
                    area.dirs.replace_in_place(&old, &dest).map_err(io(&dest))?;
                } else if old.exists() {
                    area.dirs.rename(&old, &dest).map_err(io(&dest))?;
                } else if op.old_sha256.is_none() {
                    fsx::remove_file_if_exists(&dest).map_err(io(&dest))?;
                    if let Some(parent) = dest.parent() {
                        area.dirs.prune_empty_dirs(parent, &prune_stop(&area.home, &op.path));
                    }
                }
            }
            TxnAction::Remove => {
                if cur.is_none() && old.exists() {
                    fault_point();
                    area.dirs.rename(&old, &dest).map_err(io(&dest))?;
                }
            }
        }
    }
    Ok(())
}

/// Completes or rolls back what an interrupted run left in `area`; `None` when it left nothing.
/// When `area` held the first half of a linked transaction ([`Area::note_partner`]), what the
/// other half left on its home is recovered too (the pair is finished or discarded whole from
/// either home), then the note is removed.
pub fn recover(area: &Area) -> Result<Option<Recovery>, TxnError> {
    recover_beside(area, None)
}

/// [`recover`] for the install's half of a linked pair this process is carrying out
/// (`migrate`): `live` is the other half's home, which this process holds, its transaction
/// staged, and which this home's note already names. That half is no interrupted run: it is
/// neither followed nor discarded, and the note stays (the pair's recovery needs it should the
/// run be killed from here on). With `live` `None`, or naming another home, it is [`recover`].
pub fn recover_beside(area: &Area, live: Option<&Path>) -> Result<Option<Recovery>, TxnError> {
    // A run killed while writing the journal (or an older version killed while probing) left a
    // temp file in the work dir: it is never part of a transaction.
    let work = area.work();
    fsx::remove_leftovers(&work, &fsx::LEFTOVER_PREFIXES).map_err(io(&work))?;
    let noted = area.noted_partner();
    let here = recover_here(area)?;
    let Some(home) = noted else { return Ok(here) };
    if live == Some(home.as_path()) {
        return Ok(here);
    }
    // This half finished (or was discarded, or never staged) before the other: its journal or
    // staging, if it is still there and names this home, is the pair's; then its note goes too.
    let other = Area::new(&home, area.allow_symlinks);
    let theirs =
        if other.pending() && other.partner().is_some_and(|h| h == area.home) { recover(&other)? } else { None };
    other.forget_partner_of(&area.home)?;
    area.forget_partner()?;
    Ok(here.or(theirs))
}

/// [`recover`] of what `area` itself holds.
fn recover_here(area: &Area) -> Result<Option<Recovery>, TxnError> {
    if let Some(journal) = area.journal()? {
        if let Some(link) = journal.link.clone() {
            return recover_pair(area, journal, &link);
        }
        return match forward(area, &journal, &NoProgress) {
            Ok(_) => {
                finish(area)?;
                Ok(Some(Recovery::Completed { label: journal.label, ops: journal.ops.len() }))
            }
            Err(fwd) => match undo(area, &journal) {
                Ok(()) => {
                    finish(area)?;
                    Ok(Some(Recovery::RolledBack { label: journal.label, reason: fwd.to_string() }))
                }
                Err(back) => Err(TxnError::Stuck {
                    home: area.home.display().to_string(),
                    forward: fwd.to_string(),
                    back: back.to_string(),
                }),
            },
        };
    }
    let txn = area.txn();
    if txn.exists() {
        let partner = area.partner();
        fault_point();
        area.dirs.remove_dir_all_if_exists(&txn).map_err(io(&txn))?;
        if let Some(home) = partner {
            // The other half of a linked transaction staged with this one: never committed
            // either (this half had no journal), its staging goes too.
            recover(&Area::new(&home, area.allow_symlinks))?;
        }
        return Ok(Some(Recovery::Discarded));
    }
    Ok(None)
}

/// Recovery of a half of a linked transaction ([`commit_linked`]), and of its other half, in
/// the order the pair is carried out: the first half's ops, the decider's, the first half's
/// finish, the decider's. The pair committed when the decider's journal exists (it is removed
/// last); when only the first half's does, it never did and the first half is discarded.
fn recover_pair(area: &Area, journal: Journal, link: &Link) -> Result<Option<Recovery>, TxnError> {
    let other = Area::new(&link.home, area.allow_symlinks);
    let linked_to = |a: &Area, home: &Path| -> Result<Option<Journal>, TxnError> {
        Ok(a.journal()?.filter(|j| j.link.as_ref().is_some_and(|l| l.home == home)))
    };
    let other_journal = linked_to(&other, &area.home)?;
    let (first, decider) = if link.decides { (&other, area) } else { (area, &other) };
    let (first_j, decider_j) =
        if link.decides { (other_journal, Some(journal.clone())) } else { (Some(journal.clone()), other_journal) };
    let label = journal.label.clone();
    let Some(decider_j) = decider_j else {
        // Never committed: no op of either half was applied. The first half and whatever the
        // decider staged are discarded.
        finish(first)?;
        if fsx::exists(&decider.txn()) {
            fault_point();
            decider.dirs.remove_dir_all_if_exists(&decider.txn()).map_err(io(&decider.txn()))?;
        }
        first.forget_partner_of(&decider.home)?;
        return Ok(Some(Recovery::RolledBack {
            label,
            reason: format!("its other half on {} was never committed", link.home.display()),
        }));
    };
    // Committed: carried out whole (a half that cannot be completed is undone, the other kept).
    let roll = |a: &Area, j: &Journal| -> Result<Option<String>, TxnError> {
        match forward(a, j, &NoProgress) {
            Ok(_) => Ok(None),
            Err(fwd) => match undo(a, j) {
                Ok(()) => Ok(Some(fwd.to_string())),
                Err(back) => Err(TxnError::Stuck {
                    home: a.home.display().to_string(),
                    forward: fwd.to_string(),
                    back: back.to_string(),
                }),
            },
        }
    };
    let mut failed = None;
    if let Some(fj) = &first_j {
        failed = roll(first, fj)?;
    }
    if failed.is_none() {
        failed = roll(decider, &decider_j)?;
    }
    // The first half's staging is its own leftover once its journal is gone and its note names
    // this pair (it finished before the decider did); otherwise it may be another run's.
    if first_j.is_some() || first.noted_partner().is_some_and(|h| h == decider.home) {
        finish(first)?;
    }
    finish(decider)?;
    first.forget_partner_of(&decider.home)?;
    Ok(Some(match failed {
        None => Recovery::Completed { label, ops: journal.ops.len() },
        Some(reason) => Recovery::RolledBack { label, reason },
    }))
}

impl TxnError {
    /// What to do about a failed swap or recovery.
    pub fn hint(&self) -> String {
        match self {
            TxnError::Conflict { .. } => {
                "another program changed the file during the run; every change was rolled back; run again".into()
            }
            TxnError::BadJournal { path, .. } => format!(
                "an interrupted run left a damaged journal, so it can be neither completed nor undone: move {} out of the home (e.g. `mv {0} {}.msd-install-damaged`) and run the same command again: the target may be half-updated, and that run makes it whole (files you edited are backed up first)",
                Path::new(path).parent().map_or_else(|| path.clone(), |d| d.display().to_string()),
                Path::new(path).parent().and_then(Path::parent).map_or_else(String::new, |h| h.display().to_string())
            ),
            TxnError::Stuck { .. } => "fix the cause (permissions, disk space) and run `msd-install recover`".into(),
            TxnError::Confine(c) => c.hint(),
            TxnError::Io { .. } => "every change of this run was rolled back; fix the cause and run again".into(),
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::disallowed_methods, reason = "the tests set up and look at homes directly")]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn rel(s: &str) -> RelPath {
        RelPath::new(s).unwrap()
    }

    fn ino(p: &Path) -> u64 {
        std::fs::symlink_metadata(p).unwrap().ino()
    }

    /// Counts, at each staged file, the holders of that file's bytes besides the test.
    struct Holders<'a> {
        bufs: &'a [Arc<[u8]>],
        seen: std::cell::RefCell<Vec<usize>>,
    }

    impl Progress for Holders<'_> {
        fn staging(&self, _: usize) {}
        fn tick(&self) {
            let mut seen = self.seen.borrow_mut();
            let i = seen.len();
            seen.push(Arc::strong_count(&self.bufs[i]) - 1);
        }
        fn applying(&self, _: usize) {}
    }

    #[test]
    fn targets_staged_on_one_filesystem_reach_their_commit_points_with_two_flushes_in_all() {
        let tmp = tempfile::tempdir().unwrap();
        let homes: Vec<PathBuf> = (0..3).map(|i| tmp.path().join(format!("home{i}"))).collect();
        let mut prepared: Vec<Prepared> = homes
            .iter()
            .map(|h| {
                let ops = vec![Staged::put(rel("a/x.md"), b"x\n".to_vec(), FileMode::Regular, None)];
                prepare(&Area::new(h, false), "test", ops, &NoProgress).unwrap()
            })
            .collect();
        let before = fsx::flushes();
        let mut all: Vec<&mut Prepared> = prepared.iter_mut().collect();
        assert_eq!(commit_points(&mut all).unwrap(), 2);
        // One flush for the staged trees and journals, one for the renames: not one per target
        // (a journal fsynced at each commit was three more).
        assert_eq!(fsx::flushes() - before, 2);
        for h in &homes {
            assert!(h.join(".msd-install/journal.json").is_file());
            assert!(!h.join(".msd-install/txn/journal.json").exists());
        }
        // Already committed: a second call flushes nothing, and each commit only applies.
        let mut all: Vec<&mut Prepared> = prepared.iter_mut().collect();
        assert_eq!(commit_points(&mut all).unwrap(), 0);
        for p in prepared {
            p.commit(&NoProgress).unwrap();
        }
        assert_eq!(fsx::flushes() - before, 2);
        for h in &homes {
            assert_eq!(std::fs::read(h.join("a/x.md")).unwrap(), b"x\n");
            assert!(!h.join(".msd-install/journal.json").exists());
        }
    }

    #[test]
    fn a_committed_transaction_dropped_unapplied_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let ops = vec![Staged::put(rel("a/x.md"), b"x\n".to_vec(), FileMode::Regular, None)];
        let mut p = prepare(&Area::new(&home, false), "test", ops, &NoProgress).unwrap();
        commit_points(&mut [&mut p]).unwrap();
        assert!(home.join(".msd-install/journal.json").is_file());
        drop(p);
        assert!(!home.join(".msd-install/journal.json").exists());
        assert!(!home.join(".msd-install/txn").exists());
        assert!(!home.join("a").exists());
        assert!(recover(&Area::new(&home, false)).unwrap().is_none());
    }

    #[test]
    fn staging_lets_go_of_each_files_bytes_once_it_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let area = Area::new(&tmp.path().join("home"), false);
        let bufs: Vec<Arc<[u8]>> = (0..4).map(|i| Arc::from(format!("file {i}\n").into_bytes())).collect();
        let ops = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| Staged::put(rel(&format!("d/{i}.md")), b.clone(), FileMode::Regular, None))
            .collect();
        let progress = Holders { bufs: &bufs, seen: Default::default() };
        let prepared = prepare(&area, "test", ops, &progress).unwrap();
        // Each file's bytes were let go as soon as it was staged, not when the tree was done:
        // a large tree is not held whole while it is written.
        assert_eq!(*progress.seen.borrow(), [0, 0, 0, 0]);
        prepared.commit(&NoProgress).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("home/d/2.md")).unwrap(), b"file 2\n");
    }

    #[test]
    fn a_directory_of_new_files_moves_in_whole_where_nothing_is_at_its_destination() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("skills")).unwrap();
        std::fs::write(home.join("skills/mine.md"), "mine\n").unwrap();
        let area = Area::new(&home, false);
        let ops = vec![
            Staged::put(rel("agents/a.md"), b"a\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("agents/deep/b.md"), b"b\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("skills/x/SKILL.md"), b"x\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("top.md"), b"top\n".to_vec(), FileMode::Executable, None),
        ];
        let prepared = prepare(&area, "test", ops, &NoProgress).unwrap();
        let staged_agents = ino(area.new_of(&rel("agents/a.md")).parent().unwrap());
        let staged_x = ino(area.new_of(&rel("skills/x/SKILL.md")).parent().unwrap());
        let users_skills = ino(&home.join("skills"));
        prepared.commit(&NoProgress).unwrap();
        // `agents/` was absent: the staged directory itself is now there.
        assert_eq!(ino(&home.join("agents")), staged_agents);
        // `skills/` is the user's: kept, and the new `skills/x/` moved into it whole.
        assert_eq!(ino(&home.join("skills")), users_skills);
        assert_eq!(ino(&home.join("skills/x")), staged_x);
        for (p, want) in [
            ("agents/a.md", "a\n"),
            ("agents/deep/b.md", "b\n"),
            ("skills/x/SKILL.md", "x\n"),
            ("top.md", "top\n"),
            ("skills/mine.md", "mine\n"),
        ] {
            assert_eq!(std::fs::read_to_string(home.join(p)).unwrap(), want, "{p}");
        }
        assert!(!area.work().join("txn").exists() && !area.journal_path().exists());
    }

    /// The stat each staged file had when it was written is handed back for the files moved in
    /// with a whole directory, and is what the disk has after the commit; a file moved alone (a
    /// new status-change time), a replaced file, a file linked to another name (the shared bytes)
    /// and a removal are not handed back.
    #[test]
    fn a_commit_hands_back_the_staged_stat_of_the_files_moved_in_whole_and_only_those() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join("skills")).unwrap();
        std::fs::write(home.join("skills/mine.md"), "mine\n").unwrap();
        std::fs::write(home.join("old.md"), "o1\n").unwrap();
        std::fs::write(home.join("gone.md"), "g\n").unwrap();
        let area = Area::new(&home, false).with_caches(&Arc::default(), &Arc::default()).keyed();
        let ops = vec![
            Staged::put(rel("agents/a.md"), b"a\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("agents/deep/b.md"), b"b\n".to_vec(), FileMode::Executable, None),
            Staged::put(rel("bin/helper"), b"h\n".to_vec(), FileMode::Executable, None).shared(),
            Staged::remove(rel("gone.md"), fsx::sha256(b"g\n")),
            Staged::put(rel("old.md"), b"o2\n".to_vec(), FileMode::Regular, Some(fsx::sha256(b"o1\n"))),
            Staged::put(rel("skills/mine2.md"), b"m\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("skills/x/SKILL.md"), b"x\n".to_vec(), FileMode::Regular, None),
        ];
        let prepared = prepare(&area, "test", ops, &NoProgress).unwrap();
        // Time passes between the staging and the commit (the other targets are staged).
        std::thread::sleep(std::time::Duration::from_millis(20));
        let settled = prepared.commit_keyed(&NoProgress).unwrap();
        let now = |p: &str| fsx::stat_key(&home.join(p)).unwrap().unwrap();
        for p in ["agents/a.md", "agents/deep/b.md", "skills/x/SKILL.md"] {
            assert_eq!(
                settled.get(&rel(p)),
                Some(now(p)),
                "{p}: moved in with its directory, its stat is the staged one"
            );
        }
        assert_eq!(settled.len(), 3, "{settled:?}");
        for p in ["skills/mine2.md", "old.md", "bin/helper", "gone.md", "skills/mine.md"] {
            assert_eq!(settled.get(&rel(p)), None, "{p}");
        }
        assert!(!home.join("gone.md").exists());
    }

    #[test]
    fn a_directory_that_also_holds_a_replaced_file_is_not_moved_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let area = Area::new(&home, false);
        // The plan saw `agents/old.md`; it is gone by the time of the commit, so `agents/` is
        // absent, yet a whole move would put `agents/old.md` back without the check every
        // replaced file gets (its destination must still have the hash the plan saw).
        let ops = vec![
            Staged::put(rel("agents/new.md"), b"n\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("agents/old.md"), b"o2\n".to_vec(), FileMode::Regular, Some(fsx::sha256(b"o1\n"))),
        ];
        let err = prepare(&area, "test", ops, &NoProgress).unwrap().commit(&NoProgress).unwrap_err();
        assert!(matches!(err, TxnError::Conflict { .. }), "{err}");
        assert!(!home.join("agents/new.md").exists() && !home.join("agents/old.md").exists());
    }

    #[test]
    fn an_error_after_a_whole_directory_moved_in_undoes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("z.md"), "changed by someone\n").unwrap();
        let area = Area::new(&home, false);
        let ops = vec![
            Staged::put(rel("agents/msd-a/a.md"), b"a\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("z.md"), b"z2\n".to_vec(), FileMode::Regular, Some(fsx::sha256(b"z1\n"))),
        ];
        let err = prepare(&area, "test", ops, &NoProgress).unwrap().commit(&NoProgress).unwrap_err();
        assert!(matches!(err, TxnError::Conflict { .. }), "{err}");
        assert!(!home.join("agents/msd-a").exists(), "the moved directory is undone");
        assert_eq!(std::fs::read_to_string(home.join("z.md")).unwrap(), "changed by someone\n");
        assert!(!area.work().join("txn").exists() && !area.journal_path().exists());
    }

    /// A home with two files staged (`agents/a.md`, `b/c.md`) and the transaction past its
    /// commit point: what a run killed after committing leaves for recovery.
    fn two_files_past_their_commit_point() -> (tempfile::TempDir, PathBuf, Area, Prepared) {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let area = Area::new(&home, false);
        let ops = vec![
            Staged::put(rel("agents/a.md"), b"a\n".to_vec(), FileMode::Regular, None),
            Staged::put(rel("b/c.md"), b"c\n".to_vec(), FileMode::Regular, None),
        ];
        let mut prepared = prepare(&area, "test", ops, &NoProgress).unwrap();
        commit_points(&mut [&mut prepared]).unwrap();
        (tmp, home, area, prepared)
    }

    /// Recovery ran the two-file transaction forward: both files are in the home.
    fn assert_recovered_forward(area: &Area, home: &Path) {
        let got = recover(area).unwrap();
        assert_eq!(got, Some(Recovery::Completed { label: "test".into(), ops: 2 }));
        assert_eq!(std::fs::read_to_string(home.join("agents/a.md")).unwrap(), "a\n");
        assert_eq!(std::fs::read_to_string(home.join("b/c.md")).unwrap(), "c\n");
    }

    #[test]
    fn running_forward_again_after_a_whole_move_completes_without_moving_twice() {
        let (_tmp, home, area, prepared) = two_files_past_their_commit_point();
        // A run stopped right after moving `agents/` (as a crash would leave it), then recovered.
        assert!(
            area.dirs.rename_dir_new(area.new_of(&rel("agents/a.md")).parent().unwrap(), &home.join("agents")).unwrap()
        );
        std::mem::forget(prepared);
        assert_recovered_forward(&area, &home);
        assert!(!area.work().join("txn").exists());
    }

    /// Journals are written compact now; one an older version left, pretty-printed, at its
    /// commit point is still read and completed by recovery.
    #[test]
    fn a_pretty_journal_an_older_version_left_is_recovered() {
        let (_tmp, home, area, prepared) = two_files_past_their_commit_point();
        let written = std::fs::read(area.journal_path()).unwrap();
        assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 1, "one line");
        let journal: Journal = serde_json::from_slice(&written).unwrap();
        let pretty = serde_json::to_string_pretty(&journal).unwrap() + "\n";
        assert_ne!(pretty.as_bytes(), &written[..]);
        std::fs::write(area.journal_path(), pretty).unwrap();
        std::mem::forget(prepared);
        assert_recovered_forward(&area, &home);
        assert!(!area.journal_path().exists() && !area.work().join("txn").exists());
    }
}
