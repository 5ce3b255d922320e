//! The no-change fast path of an install: a re-run whose inputs and installed files are exactly
//! as the last run left them reports "up to date" without emitting anything or reading the
//! installed files.
//!
//! After every successful install of a target, its [`Record`] is written to the machine's cache
//! (`$XDG_CACHE_HOME/msd/install/<key>.json`, else `~/.cache/msd/install/`): a fingerprint of
//! everything that decides the emission, the plan's files (path, size, sha256, mode, kind) with
//! the [`StatKey`] of each installed file and of the file manifest, and the guard's and the
//! composer's reports. The next install of the same target with the same fingerprint takes the
//! target exactly as the full path does (checks, lock, recovery), then checks: no recovery ran, no
//! migration is pending, and every recorded stat is the disk's. The settings surfaces and the
//! install state are planned for real, as the full path plans them (they are small, and
//! runtimes edit their settings files themselves). When all of it holds, the run's plan is the
//! full path's no-change plan (every file kept), built from the record; anything else (a file
//! edited, touched, removed or replaced, a settings file changed, another flag, profile, content,
//! binary or environment) takes the full path, which removes a target's record before it writes
//! there and writes a new one after it succeeds.
//!
//! What the fingerprint covers: this msd-install (version, and the path and stat of its
//! executable, whose embedded content and manifests it carries), the helper it installs (path
//! and stat), the content (embedded, or the sha256 of a `--content` tree as loaded), the runtime
//! and scope, the resolved [`Target`] (home, how it was found, the rewrite prefixes: everything
//! resolution reads from the environment and the disk ends up there), `--config-dir`, the
//! user's home (hook commands), the profile, `--adopt`, `--allow-symlinks` and the hook modes.
//! `--runtimes DIR` runs have no fast path (see [`inputs`]).
//!
//! Why not in the install state: the state is written inside the transaction and rendered
//! deterministically, so an identical run writes nothing; the stat of a file is known only after
//! the transaction and differs on every machine and every write. It is also strictly parsed by
//! older versions. The record is a cache: losing it costs one full run, never a wrong answer.
//!
//! The one thing a stat cannot see: a write of the same size within the same clock tick as
//! msd-install's own look at the file (it renamed the file into place, or read it for the plan),
//! with the times set back. Everything else changes the stat.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, FileMode, StatKey};
use msd_core::fs::relpath::RelPath;

use super::plan::{self, Action};
use super::record::Entry;
use super::settings_plan::{HookContext, next_state, plan_settings};
use super::surfaces::HookMode;
use super::survey::Survey;
use super::take::Held;
use super::txn::Settled;
use super::write::WriteReport;
use super::{InstallOptions, TargetRun, migrate};
use crate::pipeline::convert::FileKind;
use crate::pipeline::fit::FileCompose;
use crate::pipeline::guard::GuardReport;
use crate::pipeline::load::{LoadedRuntime, Tree};
use crate::pipeline::target::{Environment, Target};

/// Version of the record's format.
const SCHEMA_VERSION: u32 = 1;

/// Environment variable: `0` turns the fast path off (every run plans in full), `trace` makes
/// the CLI say on stderr which targets took it. For tests and measurements.
pub(crate) const FAST_ENV: &str = "MSD_INSTALL_FAST";

/// Whether [`FAST_ENV`] turns the fast path off.
pub(crate) fn disabled() -> bool {
    std::env::var(FAST_ENV).is_ok_and(|v| v == "0")
}

/// Whether [`FAST_ENV`] asks for a trace.
pub(crate) fn traced() -> bool {
    std::env::var(FAST_ENV).is_ok_and(|v| v == "trace")
}

/// What one install left in one target, as the next run would find it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Record {
    schema_version: u32,
    fingerprint: String,
    manifest: StatKey,
    files: Vec<FileRecord>,
    guard: GuardReport,
    compose: Vec<FileCompose>,
}

impl Record {
    /// Its JSON ([`View::render`]).
    #[cfg(test)]
    fn render(&self) -> Vec<u8> {
        let Record { schema_version, fingerprint, manifest, files, guard, compose } = self;
        let files = files
            .iter()
            .map(|f| {
                let FileRecord { path, bytes, sha256, mode, kind, stat } = f;
                FileView { path, bytes: *bytes, sha256: *sha256, mode: *mode, kind: *kind, stat: *stat }
            })
            .collect();
        View { schema_version: *schema_version, fingerprint, manifest: *manifest, files, guard, compose }.render()
    }
}

/// A [`Record`] to write, borrowed from the run it records (a fresh `--all` records every
/// installed file: a copy of each path and of the guard's and composer's reports, only to be
/// written and dropped, was most of the time a record took).
struct View<'a> {
    schema_version: u32,
    fingerprint: &'a str,
    manifest: StatKey,
    files: Vec<FileView<'a>>,
    guard: &'a GuardReport,
    compose: &'a [FileCompose],
}

/// A [`FileRecord`] to write.
struct FileView<'a> {
    path: &'a RelPath,
    bytes: u64,
    sha256: Sha256,
    mode: FileMode,
    kind: FileKind,
    stat: StatKey,
}

impl View<'_> {
    /// Its JSON: what `serde_json::to_vec` writes of the [`Record`] it is, byte for byte (the next
    /// run, of this version or an older one, reads it with serde), its files written by hand
    /// ([`super::jsonw`]: a fresh `--all` records every installed file).
    fn render(&self) -> Vec<u8> {
        use super::jsonw;
        let stat = |out: &mut Vec<u8>, k: &StatKey| {
            out.push(b'[');
            for (i, n) in k.0.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                jsonw::int(out, *n);
            }
            out.push(b']');
        };
        let View { schema_version, fingerprint, manifest, files, guard, compose } = self;
        let mut out = Vec::with_capacity(1024 + files.len() * 360);
        out.extend_from_slice(b"{\"schema_version\":");
        jsonw::uint(&mut out, u64::from(*schema_version));
        out.extend_from_slice(b",\"fingerprint\":");
        jsonw::string(&mut out, fingerprint);
        out.extend_from_slice(b",\"manifest\":");
        stat(&mut out, manifest);
        out.extend_from_slice(b",\"files\":[");
        for (i, f) in files.iter().enumerate() {
            // Every field by name: a new one does not compile until it is written here too.
            let FileView { path, bytes, sha256, mode, kind, stat: st } = f;
            out.extend_from_slice(if i == 0 { b"{\"path\":" } else { b",{\"path\":" });
            jsonw::string(&mut out, path.as_str());
            out.extend_from_slice(b",\"bytes\":");
            jsonw::uint(&mut out, *bytes);
            out.extend_from_slice(b",\"sha256\":");
            jsonw::sha256(&mut out, sha256);
            out.extend_from_slice(b",\"mode\":");
            jsonw::mode(&mut out, *mode);
            out.extend_from_slice(b",\"kind\":");
            jsonw::kind(&mut out, *kind);
            out.extend_from_slice(b",\"stat\":");
            stat(&mut out, st);
            out.push(b'}');
        }
        // The guard's report has an entry per file too.
        let GuardReport { compliant } = guard;
        out.extend_from_slice(b"],\"guard\":{\"compliant\":[");
        for (i, m) in compliant.iter().enumerate() {
            let crate::pipeline::guard::Measured { path, bytes, cap, rule } = m;
            out.extend_from_slice(if i == 0 { b"{\"path\":" } else { b",{\"path\":" });
            jsonw::string(&mut out, path);
            out.extend_from_slice(b",\"bytes\":");
            jsonw::uint(&mut out, *bytes);
            out.extend_from_slice(b",\"cap\":");
            jsonw::uint(&mut out, *cap);
            out.extend_from_slice(b",\"rule\":");
            jsonw::string(&mut out, rule);
            out.push(b'}');
        }
        out.extend_from_slice(b"]}");
        out.extend_from_slice(b",\"compose\":");
        serde_json::to_writer(&mut out, *compose).expect("the composer's report serializes");
        out.push(b'}');
        out
    }
}

/// One installed file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRecord {
    path: RelPath,
    bytes: u64,
    sha256: Sha256,
    mode: FileMode,
    kind: FileKind,
    stat: StatKey,
}

/// The identity of a run's content and manifests: `Some` for the embedded manifests (they are
/// part of the executable, in the fingerprint), with the embedded content or the sha256 of a
/// `--content` tree (every path and its bytes, as loaded); `None` (no fast path) for
/// `--runtimes DIR`.
pub(crate) fn inputs(content: &Tree, content_embedded: bool, runtimes_embedded: bool) -> Option<String> {
    if !runtimes_embedded {
        return None;
    }
    if content_embedded {
        return Some("content: embedded".into());
    }
    let mut h = Fp::default();
    for (path, bytes) in &content.files {
        h.field(path.as_str().as_bytes());
        h.field(bytes);
    }
    Some(format!("content: {}", h.finish()))
}

/// A sha256 over length-prefixed fields, streamed: a `--content` tree is hashed as it is fed,
/// never copied into one buffer.
#[derive(Default)]
struct Fp(sha2::Sha256);

impl Fp {
    fn field(&mut self, b: &[u8]) {
        use sha2::Digest as _;
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
    }

    fn text(&mut self, s: &str) {
        self.field(s.as_bytes());
    }

    fn finish(self) -> String {
        use sha2::Digest as _;
        fsx::hex(&self.0.finalize())
    }
}

/// The path and stat of a file, for the fingerprint (`None` when it cannot be looked at: no
/// fast path).
fn file_identity(path: &Path) -> Option<String> {
    let st = fsx::stat_key(path).ok()??;
    Some(format!("{}\0{:?}", path.display(), st.0))
}

/// What the fingerprint of every target of one run shares: this executable's and the helper's
/// path and stat, looked at once per run (they were looked at once per target, twice: a
/// `readlink` of `/proc/self/exe` and two `statx` each). `None` when either cannot be looked at
/// (no fast path).
struct Binaries {
    exe: String,
    helper: String,
}

impl Binaries {
    fn now() -> Option<Binaries> {
        let exe = std::env::current_exe().ok()?;
        let helper = crate::pipeline::synth::helper_location().ok()?;
        Some(Binaries { exe: file_identity(&exe)?, helper: file_identity(&helper)? })
    }
}

/// The fingerprint of installing `rt` into `target` with `opts`, `None` when it cannot be taken.
fn fingerprint(
    rt: &LoadedRuntime,
    target: &Target,
    opts: &InstallOptions<'_>,
    env: &Environment,
    bins: &Binaries,
) -> Option<String> {
    // Every option is named here, none with `..`: a new one does not compile until it is
    // either part of the fingerprint or said not to change what is emitted.
    let InstallOptions {
        scope,
        config_dir,
        allow_symlinks,
        adopt,
        dry_run: _, // a dry run never takes the fast path (`candidates`)
        hooks: HookMode { portable, force_statusline },
        progress: _, // only what is drawn
        profile,
        inputs,
        linked: _, // a linked run never takes the fast path (`candidates`)
    } = opts;
    let inputs = (*inputs)?;
    let mut h = Fp::default();
    h.text("msd-install fast path 1");
    h.text(env!("CARGO_PKG_VERSION"));
    h.text(&bins.exe);
    h.text(&bins.helper);
    h.text(inputs);
    h.text(&rt.capability.id);
    h.text(rt.source.as_str());
    h.text(scope.as_str());
    h.text(&format!("{config_dir:?}"));
    // What emission reads of the target (how the home was found is only shown, and comes
    // from this run's resolution).
    h.text(&format!("{}", target.home.display()));
    h.text(&target.home_ref);
    h.text(&target.core_ref);
    h.text(&target.local_ref);
    h.text(&format!("{}", env.home.display()));
    h.text(&format!("{profile:?}"));
    h.text(&format!("adopt={adopt} symlinks={allow_symlinks} portable={portable} statusline={force_statusline}"));
    h.text(&format!("{:?}", msd_core::shell::Os::HOST));
    Some(h.finish())
}

/// Where the record of `target` lives.
fn record_path(env: &Environment, target: &Target) -> Option<PathBuf> {
    let xdg = env.vars.get("XDG_CACHE_HOME").map(String::as_str);
    let dir = msd_core::installed::update_cache::cache_dir(xdg, Some(&env.home))?.join("install");
    let key =
        fsx::sha256(format!("{}\0{}\0{}", target.runtime, target.scope.as_str(), target.home.display()).as_bytes());
    Some(dir.join(format!("{}.json", &key.to_string()[..32])))
}

fn read_record(env: &Environment, target: &Target) -> Option<Record> {
    let bytes = fsx::read_if_exists(&record_path(env, target)?).ok()??;
    let r: Record = serde_json::from_slice(&bytes).ok()?;
    (r.schema_version == SCHEMA_VERSION).then_some(r)
}

/// Removes the record of `target` (before a full run changes it, and after an uninstall), and
/// the records' directory when it is left empty. Best effort.
pub(crate) fn forget(env: &Environment, target: &Target) {
    if let Some(p) = record_path(env, target) {
        let _ = fsx::remove_file_if_exists(&p);
        if let Some(dir) = p.parent() {
            fsx::remove_dir_if_empty(dir);
        }
    }
}

/// Removes every record (uninstall of every runtime: no msd file is left in the cache either; an
/// install left in the other scope costs its next run the fast path only). Best effort.
pub(crate) fn forget_all(env: &Environment) {
    let xdg = env.vars.get("XDG_CACHE_HOME").map(String::as_str);
    if let Some(dir) = msd_core::installed::update_cache::cache_dir(xdg, Some(&env.home)) {
        let _ = fsx::remove_dir_all_if_exists(&dir.join("install"));
    }
}

/// A target whose record's fingerprint matches this run.
pub(super) struct Candidate<'r> {
    pub(super) rt: &'r LoadedRuntime,
    pub(super) target: Target,
    record: Record,
}

/// Whether a run of `runtimes` could take the fast path: it is not turned off and every target
/// has a record (looked for, not read: [`candidates`] reads them). `false` says the run emits
/// every runtime, so what only a full run needs can begin before the content is loaded (the
/// helper's hash: `cli::commands::install`).
pub(crate) fn may_be_taken(
    runtimes: &[&LoadedRuntime],
    scope: msd_core::manifest::capability::Scope,
    config_dir: Option<&Path>,
    env: &Environment,
) -> bool {
    !disabled()
        && runtimes.iter().all(|rt| {
            crate::pipeline::target::resolve(&rt.capability, scope, config_dir, env)
                .ok()
                .and_then(|t| record_path(env, &t))
                .is_some_and(|p| fsx::is_file(&p))
        })
}

/// The targets of this run, when every one of them has a record with this run's fingerprint
/// (reads only the records; `None` sends the run down the full path).
pub(super) fn candidates<'r>(
    runtimes: &[&'r LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Option<Vec<Candidate<'r>>> {
    if opts.dry_run || opts.inputs.is_none() || opts.linked.is_some() || disabled() {
        return None;
    }
    let bins = Binaries::now()?;
    let mut out = Vec::new();
    for rt in runtimes {
        let target = crate::pipeline::target::resolve(&rt.capability, opts.scope, opts.config_dir, env).ok()?;
        let fp = fingerprint(rt, &target, opts, env, &bins)?;
        let record = read_record(env, &target)?;
        if record.fingerprint != fp {
            return None;
        }
        out.push(Candidate { rt, target, record });
    }
    Some(out)
}

/// Under the targets' locks (`held`, taken as the full path takes them): the no-change runs of
/// every candidate, or `None` when any target differs from its record.
pub(super) fn check(
    candidates: Vec<Candidate<'_>>,
    held: &Held,
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Option<Vec<TargetRun>> {
    if !held.recoveries.is_empty() {
        return None;
    }
    // On two threads: the stat of every file is most of the work.
    halves(candidates, |c| c.record.files.len(), |c| check_one(c, held, opts, env)).into_iter().collect()
}

/// `f` of every item, in order: the items up to half of the total `weight` on a thread of its
/// own, the rest on this one. Two, not a pool: a run has two cores' worth of stats at most to
/// spread (a rayon pool here spun its idle workers in `sched_yield` for longer than the work
/// took), and one spawn costs tens of microseconds against milliseconds of stats.
fn halves<T: Send, R: Send>(items: Vec<T>, weight: impl Fn(&T) -> usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let total: usize = items.iter().map(&weight).sum();
    if items.len() < 2 || total < HALVES_MIN {
        return items.into_iter().map(f).collect();
    }
    let mut acc = 0;
    let cut = items.iter().position(|i| {
        acc += weight(i);
        acc * 2 >= total
    });
    let mut first = items;
    let second = first.split_off(cut.map_or(1, |c| c + 1).min(first.len() - 1).max(1));
    let f = &f;
    std::thread::scope(|s| {
        let theirs = s.spawn(move || first.into_iter().map(f).collect::<Vec<R>>());
        let mine: Vec<R> = second.into_iter().map(f).collect();
        let mut out = theirs.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        out.extend(mine);
        out
    })
}

/// Below this many files in all, [`halves`] keeps to this thread.
const HALVES_MIN: usize = 256;

fn check_one(c: Candidate<'_>, held: &Held, opts: &InstallOptions<'_>, env: &Environment) -> Option<TargetRun> {
    let Candidate { rt, target, record } = c;
    let cap = &rt.capability;
    let home = &target.home;
    if held.created_home.contains_key(home) {
        return None;
    }
    // The survey's cheap form: a stat per recorded path, each as the last run left it.
    let files = record
        .files
        .into_iter()
        .map(|f| (Entry { path: f.path, bytes: f.bytes, sha256: f.sha256, mode: f.mode }, f.kind, f.stat));
    let survey = Survey::by_stat(home, cap, target.scope, record.manifest, files, opts.allow_symlinks)?;
    if !migrate::pending(survey.state.as_ref()).is_empty() {
        return None;
    }
    let mut plan = plan::unchanged(&survey, cap, record.manifest)?;
    let hooks = HookContext { mode: opts.hooks, user_home: &env.home };
    let state = survey.state.as_ref();
    let ledgers = plan_settings(&mut plan, &survey, cap, &target, state.is_none(), &hooks).ok()?;
    if plan.settings.iter().any(|s| s.action != Action::Keep) {
        return None;
    }
    let next = next_state(&plan, cap, state, &[], ledgers, None, opts.hooks.portable, opts.profile).ok()?;
    if next.is_some() || !plan.is_noop() {
        return None;
    }
    Some(TargetRun {
        target,
        guard: record.guard,
        plan,
        recovery: None,
        pending_recovery: false,
        pending_migrations: Vec::new(),
        report: Some(WriteReport::default()),
        compose: record.compose,
        fast: true,
    })
}

/// Runs `commit` (the commits of a full run's targets, in order), and after it succeeds writes
/// the record of each target, as the next run will find it. `commit` tells of each target it
/// commits (its index in `runs`, and the files whose stat is still the one taken as they were
/// staged); that target's record is made then, on a thread of its own while the next target
/// commits, and kept until every commit is done: the records are written after the last commit
/// as before, and none when `commit` fails (a run stopped between two commits leaves no record
/// it would not have left). A target whose kept files changed during the run (their stat is not
/// the one taken before they were read) gets none. Best effort: a record that cannot be written
/// costs the next run its fast path only.
///
/// Not `ahead` (a large content: its areas take no stats, and its records, tens of MiB of text,
/// are not held), every record is made and written after the last commit, two at a time.
pub(super) fn recording<T, E>(
    runs: &[TargetRun],
    runtimes: &[&LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
    ahead: bool,
    commit: impl FnOnce(&dyn Fn(usize, Settled)) -> Result<T, E>,
) -> Result<T, E> {
    let Some(maker) = Maker::new(runs, runtimes, opts, env) else { return commit(&|_, _| {}) };
    if !ahead {
        let out = commit(&|_, _| {})?;
        if maker.make_dirs() {
            let none = Settled::default();
            halves(
                (0..runs.len()).collect(),
                |&i| runs[i].plan.ops.len(),
                |i| {
                    if let (Some(Some(path)), Some(text)) = (maker.paths.get(i), maker.make(i, &none)) {
                        let _ = fsx::write_atomic_unsynced(path, &text);
                    }
                },
            );
        }
        return Ok(out);
    }
    let made: Vec<Option<Vec<u8>>> = runs.iter().map(|_| None).collect();
    let made = std::sync::Mutex::new(made);
    let keep = |i: usize, settled: &Settled| {
        let text = maker.make(i, settled);
        if let Some(slot) = made.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_mut(i) {
            *slot = text;
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let out = if cores < 2 || runs.len() < 2 {
        // One core, or one target: each record made right after its commit, on this thread.
        commit(&|i, settled| keep(i, &settled))?
    } else {
        // The committing thread is the run's critical path from here on; the other core is idle.
        // After the last commit, this thread makes the records still to make beside it.
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Settled)>();
        let rx = std::sync::Mutex::new(rx);
        let drain = || {
            loop {
                let next = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                let Ok((i, settled)) = next else { break };
                keep(i, &settled);
            }
        };
        std::thread::scope(|s| {
            // Dropped with this closure, also when `commit` panics: the worker's `recv` then ends.
            let tx = tx;
            let worker = s.spawn(drain);
            let out = commit(&|i, settled| {
                let _ = tx.send((i, settled));
            });
            drop(tx);
            if out.is_ok() {
                drain();
            }
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
            out
        })?
    };
    // Targets committed as they were staged (in a home they share) were not told of: made now.
    let mut made = made.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    for (i, slot) in made.iter_mut().enumerate() {
        if slot.is_none() && runs[i].report.is_some() {
            *slot = maker.make(i, &Settled::default());
        }
    }
    let writes: Vec<(&PathBuf, Vec<u8>)> =
        maker.paths.iter().zip(made).filter_map(|(path, text)| Some((path.as_ref()?, text?))).collect();
    if !maker.make_dirs() {
        return Ok(out);
    }
    // Split over two threads by size (a file's entry is about 256 bytes of a record).
    halves(
        writes,
        |(_, text)| text.len() / 256,
        |(path, text)| {
            let _ = fsx::write_atomic_unsynced(path, &text);
        },
    );
    Ok(out)
}

/// What the records of one run's targets are made from ([`recording`]).
struct Maker<'a> {
    runs: &'a [TargetRun],
    runtimes: &'a [&'a LoadedRuntime],
    opts: &'a InstallOptions<'a>,
    env: &'a Environment,
    bins: Binaries,
    /// Where each target's record goes.
    paths: Vec<Option<PathBuf>>,
}

impl<'a> Maker<'a> {
    /// `None` when this run writes no records.
    fn new(
        runs: &'a [TargetRun],
        runtimes: &'a [&'a LoadedRuntime],
        opts: &'a InstallOptions<'a>,
        env: &'a Environment,
    ) -> Option<Maker<'a>> {
        if opts.dry_run || opts.inputs.is_none() || disabled() {
            return None;
        }
        let bins = Binaries::now()?;
        let paths: Vec<Option<PathBuf>> = runs.iter().map(|r| record_path(env, &r.target)).collect();
        Some(Maker { runs, runtimes, opts, env, bins, paths })
    }

    /// Makes the records' directory, once for every target (each record made it, a `statx` and a
    /// `mkdir` per directory of the path per target), and only once every commit is done. False
    /// when it cannot be made.
    fn make_dirs(&self) -> bool {
        let dirs: BTreeSet<&Path> = self.paths.iter().flatten().filter_map(|p| p.parent()).collect();
        dirs.iter().all(|d| fsx::create_dir_all(d).is_ok())
    }

    /// The text of the record of target `i`, just committed.
    fn make(&self, i: usize, settled: &Settled) -> Option<Vec<u8>> {
        let r = self.runs.get(i)?;
        self.paths.get(i)?.as_ref()?;
        let rt = self.runtimes.iter().find(|rt| rt.capability.id == r.plan.runtime)?;
        record_of(r, settled, rt, self.opts, self.env, &self.bins)
    }
}

fn record_of(
    r: &TargetRun,
    settled: &Settled,
    rt: &LoadedRuntime,
    opts: &InstallOptions<'_>,
    env: &Environment,
    bins: &Binaries,
) -> Option<Vec<u8>> {
    let plan = &r.plan;
    let fingerprint = fingerprint(rt, &r.target, opts, env, bins)?;
    // The stat taken as the file was staged, when it still holds (nothing moved the file itself
    // or linked it since: the disk's stat is that one, and it is of the bytes this run wrote);
    // else a plain `lstat` of the path, without the confinement walk of its directories: the
    // record is a cache, and the next run checks every stat with `confined_stat` (a directory
    // made a symlink since then fails there and takes the full path). The walk was a third of
    // these stats' time.
    let stat_of = |rel: &RelPath| settled.get(rel).or_else(|| fsx::stat_key(&plan.home.join(rel.as_str())).ok()?);
    let manifest = stat_of(&plan.manifest_path)?;
    if !plan.manifest_changed && plan.manifest_disk_stat != Some(manifest) {
        return None;
    }
    // The emitted files are the ops that are not removals (sorted by path, like the manifest;
    // the staged plan keeps no manifest entries of its own, see `write::prepare`).
    let mut files = Vec::with_capacity(plan.ops.len());
    for op in plan.ops.iter().filter(|o| o.action != Action::Remove) {
        let stat = stat_of(&op.path)?;
        if op.action == Action::Keep && op.disk_stat.as_deref() != Some(&stat) {
            return None;
        }
        files.push(FileView {
            path: &op.path,
            bytes: op.bytes?,
            sha256: op.sha256?,
            mode: op.mode,
            kind: op.kind?,
            stat,
        });
    }
    let view = View {
        schema_version: SCHEMA_VERSION,
        fingerprint: &fingerprint,
        manifest,
        files,
        guard: &r.guard,
        compose: &r.compose,
    };
    Some(view.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::guard::Measured;

    /// The record is written by hand: its bytes must be what serde_json wrote for it (the
    /// format of records already in users' caches), and it must read back as the next run reads it.
    #[test]
    fn render_is_serde_jsons_compact_form_and_reads_back() {
        let file = |path: &str, mode, kind, n: i64| FileRecord {
            path: RelPath::new(path).unwrap(),
            bytes: n as u64 * 1000,
            sha256: Sha256::of(path.as_bytes()),
            mode,
            kind,
            stat: StatKey([n, -n, i64::MAX, i64::MIN, 0, 1_764_000_000_123_456_789, 2049, 0o100_644]),
        };
        let measured =
            |path: &str| Measured { path: path.into(), bytes: 10, cap: 40_000, rule: "tier:XL \"q\"".into() };
        let compose = FileCompose {
            path: "commands/msd/plan.md".into(),
            source: "content/commands/plan.md".into(),
            rule: Some("commands/**".into()),
            cap: Some(12_000),
            full_bytes: 15_000,
            bytes: 11_900,
            budget: Some(-3),
            report: None,
        };
        let records = [
            Record {
                schema_version: SCHEMA_VERSION,
                fingerprint: "0123abc".into(),
                manifest: StatKey([0; 8]),
                files: Vec::new(),
                guard: GuardReport::default(),
                compose: Vec::new(),
            },
            Record {
                schema_version: SCHEMA_VERSION,
                fingerprint: "fp with \"quotes\" and \\ and \n".into(),
                manifest: StatKey([1, 2, 3, 4, 5, 6, 7, 8]),
                files: vec![
                    file("agents/é.md", FileMode::Regular, FileKind::Agent, 1),
                    file("msd-core/bin/msd_run", FileMode::Executable, FileKind::Program, 2),
                    file("commands/msd/x\ty.md", FileMode::Private, FileKind::Command, 3),
                ],
                guard: GuardReport { compliant: vec![measured("agents/é.md"), measured("a\"b")] },
                compose: vec![compose],
            },
        ];
        for r in records {
            let bytes = r.render();
            assert_eq!(String::from_utf8(bytes.clone()).unwrap(), serde_json::to_string(&r).unwrap());
            let back: Record = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(format!("{back:?}"), format!("{r:?}"));
        }
    }
}
