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

/// The fingerprint of installing `rt` into `target` with `opts`, `None` when it cannot be taken.
fn fingerprint(rt: &LoadedRuntime, target: &Target, opts: &InstallOptions<'_>, env: &Environment) -> Option<String> {
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
    let exe = std::env::current_exe().ok()?;
    let helper = crate::pipeline::synth::helper_location().ok()?;
    let mut h = Fp::default();
    h.text("msd-install fast path 1");
    h.text(env!("CARGO_PKG_VERSION"));
    h.text(&file_identity(&exe)?);
    h.text(&file_identity(&helper)?);
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
    let mut out = Vec::new();
    for rt in runtimes {
        let target = crate::pipeline::target::resolve(&rt.capability, opts.scope, opts.config_dir, env).ok()?;
        let fp = fingerprint(rt, &target, opts, env)?;
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

/// After a successful full run: the record of each target, as the next run will find it. A
/// target whose kept files changed during the run (their stat is not the one taken before they
/// were read) gets none. Best effort: a record that cannot be written costs the next run its
/// fast path only.
pub(super) fn record_all(
    runs: &[TargetRun],
    runtimes: &[&LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
) {
    if opts.dry_run || opts.inputs.is_none() || disabled() {
        return;
    }
    // One stat per installed file, after the last commit: the emitter's thread is done by then,
    // so the targets are split over two (a tenth of a fresh `--all`'s time was these stats, on
    // the thread every other step waits for).
    halves(
        runs.iter().collect(),
        |r| r.plan.ops.len(),
        |r| {
            let Some(rt) = runtimes.iter().find(|rt| rt.capability.id == r.plan.runtime) else { return };
            let Some(path) = record_path(env, &r.target) else { return };
            let Some(rec) = record_of(r, rt, opts, env) else { return };
            let Ok(bytes) = serde_json::to_vec(&rec) else { return };
            if let Some(dir) = path.parent()
                && fsx::create_dir_all(dir).is_ok()
            {
                let _ = fsx::write_atomic_unsynced(&path, &bytes);
            }
        },
    );
}

fn record_of(r: &TargetRun, rt: &LoadedRuntime, opts: &InstallOptions<'_>, env: &Environment) -> Option<Record> {
    let plan = &r.plan;
    let fingerprint = fingerprint(rt, &r.target, opts, env)?;
    // A plain `lstat` of each path, without the confinement walk of its directories: the record
    // is a cache, and the next run checks every stat with `confined_stat` (a directory made a
    // symlink since then fails there and takes the full path). The walk was a third of these
    // stats' time.
    let stat_of = |rel: &RelPath| fsx::stat_key(&plan.home.join(rel.as_str())).ok()?;
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
        files.push(FileRecord {
            path: op.path.clone(),
            bytes: op.bytes?,
            sha256: op.sha256?,
            mode: op.mode,
            kind: op.kind?,
            stat,
        });
    }
    Some(Record {
        schema_version: SCHEMA_VERSION,
        fingerprint,
        manifest,
        files,
        guard: r.guard.clone(),
        compose: r.compose.clone(),
    })
}
