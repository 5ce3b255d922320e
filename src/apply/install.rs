//! Install and upgrade: emit every selected runtime, take its target (check it can be written,
//! lock it, recover what an interrupted run left), run migrations, plan files, settings and
//! state, check every destination directory, then one transaction per target.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use msd_core::fs::bytes::Digests;
use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, DirCache, SharedWrites};
use msd_core::manifest::capability::{Capability, Scope};

use super::settings_plan::{HookContext, next_state, plan_settings};
use super::survey::{Reading, Survey};
use super::take::{Held, take};
use super::{ApplyError, InstallOptions, LifecycleError, TargetRun, fast, migrate, plan, txn, write};
use crate::apply::migrate::Ran;
use crate::apply::plan::{Action, Plan};
use crate::apply::state::InstallState;
use crate::apply::txn::Area;
use crate::pipeline;
use crate::pipeline::PipelineError;
use crate::pipeline::load::{Content, LoadedRuntime};
use crate::pipeline::target::{Environment, Target};

/// Installs (or upgrades) `runtimes`: resolve every target, take them all ([`take`]) (check, lock and
/// recover every home), then [`stream`] the runtimes over two workers: each runtime is emitted
/// (pure), planned ([`plan_target`]: migrations, files, settings, state), its destinations probed
/// ([`probe_destinations`]) and its transaction staged ([`write::prepare`]: nothing visible
/// changes, and its bytes are dropped), all on one worker, beside another runtime on the other
/// (every target has a home, a lock and a staging area of its own). Only when every
/// target is staged does [`commit_all`] commit them, one transaction per target, in order. A
/// failure before that discards every staged tree and reverts the migrations of this run: the
/// run changed nothing; a failure of one commit names the targets installed before it.
///
/// First, when every target has a record of the last run with this run's fingerprint, the
/// no-change fast path ([`fast`]): the targets are taken as below, and when nothing differs from
/// the records, the no-change plans are returned without emitting or reading the files;
/// otherwise the run goes on in full under the same locks.
pub fn install(
    content: &Content,
    runtimes: &[&LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<Vec<TargetRun>, ApplyError> {
    let mut taken = None;
    if let Some(candidates) = fast::candidates(runtimes, opts, env) {
        let targets: Vec<&Target> = candidates.iter().map(|c| &c.target).collect();
        let held = take(&targets, opts)?.expect("not a dry run");
        if let Some(runs) = fast::check(candidates, &held, opts, env) {
            note_version(env);
            drop(held);
            return Ok(runs);
        }
        taken = Some(held);
    }
    // What loading the content freed (its raw sources, the parse) goes back before any tree is made.
    give_back_freed_pages();
    let targets = runtimes
        .iter()
        .map(|rt| pipeline::target::resolve(&rt.capability, opts.scope, opts.config_dir, env))
        .collect::<Result<Vec<Target>, _>>()
        .map_err(PipelineError::from)?;
    let held = match taken {
        Some(h) => Some(h),
        None => take(&targets.iter().collect::<Vec<_>>(), opts)?,
    };
    // The first half of a linked pair (`migrate`), its home taken: it names the other half's
    // home in its own until the pair is done (removed when this returns), so a recovery of this
    // home, after a crash at any later point, finishes or discards the pair whole.
    let partner_notes = match (opts.linked, opts.dry_run) {
        (Some(linked), false) => targets
            .iter()
            .map(|t| Area::new(&t.home, opts.allow_symlinks).note_partner(linked.home()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(write::WriteError::from)?,
        _ => Vec::new(),
    };
    // Two targets in one home share its staging area: each is then committed as soon as it is
    // staged (no built-in runtime shares a home; overrides could make two).
    let homes: BTreeSet<&Path> = targets.iter().map(|t| t.home.as_path()).collect();
    let stage_ahead = homes.len() == targets.len();

    // The migrations each target ran, by its index, to revert if the run fails before its commit.
    let migrated: Mutex<Vec<(usize, Migrated<'_>)>> = Mutex::new(Vec::new());
    // The run's own record of the files of shared bytes it wrote (the helper: written once, then
    // linked into every other target), never one a run before it left in the process.
    let shared = Arc::new(SharedWrites::default());
    // The bytes staged (and so dropped) since freed pages were last given back (a large content).
    let freed = AtomicU64::new(0);
    // Targets in homes of their own are emitted, planned and staged on two workers at once (each
    // commits later, in order); targets sharing a home are committed one by one as they are
    // staged, so they go in order on this thread.
    let workers = if stage_ahead { workers(runtimes.len()) } else { 1 };
    let large = source_bytes(content) > LARGE_CONTENT_BYTES;
    let planned = stream(content, runtimes, opts, env, workers, large, |i, rt, e, d, turn| {
        let (mut run, dirs) = plan_target(i, rt, e, d, opts, env, held.as_ref(), &migrated)?;
        if opts.dry_run {
            run.plan.release_bytes();
            return Ok((run, None));
        }
        probe_destinations(&run.plan, opts.allow_symlinks, &dirs)?;
        // Staging drops each file's bytes as it writes them: another emission may begin.
        drop(turn);
        let bars = opts.progress.target(&label(&run));
        let area = Area::new(&run.plan.home, opts.allow_symlinks).with_caches(&dirs, &shared);
        // The staged files' stats, for the fast path's records (`fast::recording`): not for a
        // large content, whose staged targets would hold 64 bytes a file each until their commit
        // (issue 19's memory bound; its records look at the disk after the commits instead).
        let area = if large || opts.dry_run { area } else { area.keyed() };
        let (mut prepared, report) = if large {
            // The bytes of a large content's files, given back as they are staged (below).
            let puts = run.plan.ops.iter().filter(|o| matches!(o.action, Action::Add | Action::Change));
            let (files, bytes) = puts.fold((0u64, 0u64), |(n, b), o| (n + 1, b + o.bytes.unwrap_or(0)));
            let trimming = Trimming { bars: bars.as_ref(), per_file: bytes / files.max(1), freed: &freed };
            write::prepare(&mut run.plan, area, &trimming)?
        } else {
            write::prepare(&mut run.plan, area, bars.as_ref())?
        };
        if stage_ahead {
            // Its journal too, here on the worker (a linked pair's are written as the pair commits;
            // a large content's at the commit points, when no emission is held beside them).
            if opts.linked.is_none() && !large {
                prepared.journal_ahead().map_err(write::WriteError::from)?;
            }
            return Ok((run, Some((prepared, report))));
        }
        fast::forget(env, &run.target);
        prepared.commit(bars.as_ref()).map_err(write::WriteError::from)?;
        run.report = Some(report);
        Ok((run, None))
    });
    let mut migrated = migrated.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    migrated.sort_unstable_by_key(|(i, _)| *i);
    let (mut runs, staged): (Vec<TargetRun>, Vec<_>) = match planned {
        Ok(planned) => planned.into_iter().unzip(),
        Err((at, e)) => {
            // Every staged tree was discarded as it was dropped (nothing visible was written);
            // the migrations of this run are undone, but for those of targets committed one by one
            // before the failure.
            let committed = if stage_ahead { 0 } else { at };
            let undo: Vec<Migrated<'_>> =
                migrated.into_iter().filter(|(i, _)| *i >= committed).map(|(_, m)| m).collect();
            revert(&undo, opts.allow_symlinks);
            return Err(e);
        }
    };
    let migrated: Vec<Migrated<'_>> = migrated.into_iter().map(|(_, m)| m).collect();
    if !opts.dry_run {
        // Each target's fast-path record is made as the next one commits, and all are written
        // after the last commit (`fast::recording`).
        let committed = fast::recording(&runs, runtimes, opts, env, !large, |settled| {
            commit_all(&runs, staged, &migrated, opts, env, settled)
        })?;
        for (i, report) in committed {
            runs[i].report = Some(report);
        }
        note_version(env);
    }
    // The pair is done: the note goes while the home is still locked.
    drop(partner_notes);
    drop(held);
    Ok(runs)
}

/// Emits each runtime (with its digests) and hands it to `each` with its index, on `workers`
/// threads (this one and `workers - 1` more; one runtime or one worker: this thread alone),
/// each taking the next runtime not yet taken when it is done with one. So both cores emit,
/// plan and stage (the kernel's work of writing the files is most of a target's time, and each
/// target's is its own), and a target's bytes are made, staged and freed on one thread (and in
/// its allocator arena). About one emission per worker is held: made, then dropped file by file
/// as it is staged. With `one_at_a_time` (a large content), an emission begins only once no
/// other worker holds one it has not begun to stage: `each` gets the [`Turn`] and drops it when
/// its staging begins, so one whole emission is held beside one being staged (shrinking), as
/// issue 19's memory bound asks of a large tree. Results come back in the runtimes' order; see
/// [`in_order`] for failures.
fn stream<'r, U: Send>(
    content: &Content,
    runtimes: &[&'r LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
    workers: usize,
    one_at_a_time: bool,
    each: impl Fn(usize, &'r LoadedRuntime, pipeline::Emitted, Vec<Sha256>, Turn<'_>) -> Result<U, ApplyError> + Sync,
) -> Result<Vec<U>, (usize, ApplyError)> {
    let (scope, config_dir) = (opts.scope, opts.config_dir);
    // A large buffer every runtime gets is hashed once in this run.
    let memo = Digests::default();
    let turns = Mutex::new(());
    in_order(runtimes, workers, |i, &rt| {
        let turn = Turn(one_at_a_time.then(|| turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner)));
        let e = pipeline::emit(content, rt, scope, config_dir, env)?;
        let digests = plan::digests(&[&e.emission], &memo).pop().unwrap_or_default();
        each(i, rt, e, digests, turn)
    })
}

/// A worker's turn to hold a whole emission ([`stream`]): given back when dropped.
struct Turn<'a>(#[allow(dead_code, reason = "held for its drop")] Option<std::sync::MutexGuard<'a, ()>>);

/// Above this many bytes of source text (commands, agents, core files: each runtime's emission
/// is made from them, and is about as large or larger), a content is large: its emissions are
/// made one at a time (see [`stream`]) and freed pages are given back after every
/// [`TRIM_AFTER_BYTES`] staged. Generated x8 content (12.9 MiB of source, 16 MiB and more a
/// runtime) is large; the shipped content (1.6 MiB), the reference's ported (3.7 MiB) and
/// generated x4 (6.4 MiB) are not: both workers make emissions at once, two held instead of one
/// and a half.
const LARGE_CONTENT_BYTES: u64 = 8 << 20;

/// The bytes of `content`'s source text: what each runtime's emission is made from.
fn source_bytes(content: &Content) -> u64 {
    let defs = content.commands.iter().chain(&content.agents).map(|d| d.body.len());
    let core = content.core.iter().map(|f| f.text.as_ref().map_or(f.bytes.len(), String::len));
    defs.chain(core).map(|n| n as u64).sum()
}

/// At most this many workers stage targets at once: the two cores issue 37 measures on, and
/// about one emission held per worker (issue 19's memory bound follows the largest tree).
const MAX_WORKERS: usize = 2;

/// The workers for `targets` targets: [`MAX_WORKERS`], fewer on a machine with fewer cores (or
/// a CPU quota that allows fewer), never more than the targets.
fn workers(targets: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    cores.min(MAX_WORKERS).min(targets).max(1)
}

/// Runs `work` over `items` on `workers` threads (this one and `workers - 1` scoped ones), each
/// taking the next item not yet taken, and returns the results in the items' order. No item is
/// taken once one has failed; every item taken runs to its end. Items are taken in order, so
/// every item before the first failure (by index) was run and succeeded: the error returned,
/// with its item's index, is the one a run of the items in order on one thread would have met
/// first. On an error every result is dropped before this returns (a staged tree discards
/// itself when dropped).
fn in_order<T: Sync, U: Send>(
    items: &[T],
    workers: usize,
    work: impl Fn(usize, &T) -> Result<U, ApplyError> + Sync,
) -> Result<Vec<U>, (usize, ApplyError)> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let worker = || {
        let mut done = Vec::new();
        while !stop.load(Ordering::Acquire) {
            let i = next.fetch_add(1, Ordering::AcqRel);
            let Some(item) = items.get(i) else { break };
            let result = work(i, item);
            if result.is_err() {
                stop.store(true, Ordering::Release);
            }
            done.push((i, result));
        }
        done
    };
    let mut done = if workers < 2 || items.len() < 2 {
        worker()
    } else {
        std::thread::scope(|s| {
            let helpers: Vec<_> = (1..workers.min(items.len())).map(|_| s.spawn(worker)).collect();
            let mut done = worker();
            for h in helpers {
                match h.join() {
                    Ok(d) => done.extend(d),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            done
        })
    };
    done.sort_unstable_by_key(|(i, _)| *i);
    let mut out = Vec::with_capacity(done.len());
    for (i, result) in done {
        match result {
            Ok(u) => out.push(u),
            Err(e) => return Err((i, e)),
        }
    }
    Ok(out)
}

/// The progress of a large content's staging ([`LARGE_CONTENT_BYTES`]), passed on to `bars`,
/// that gives freed pages back after about every [`TRIM_AFTER_BYTES`] of files staged (each
/// staged file counted as the target's mean file size, `per_file`; the bytes in `freed`, shared
/// by the workers). Given back within a target and not only after it: the other worker makes
/// its emission meanwhile, in its own arena, so the pages this one frees would otherwise stay
/// resident beside it (generated x8: see docs/PERFORMANCE.md, issue 37).
struct Trimming<'a> {
    bars: &'a dyn txn::Progress,
    per_file: u64,
    freed: &'a AtomicU64,
}

impl txn::Progress for Trimming<'_> {
    fn staging(&self, n: usize) {
        self.bars.staging(n);
    }

    fn tick(&self) {
        self.bars.tick();
        if self.freed.fetch_add(self.per_file, Ordering::Relaxed) + self.per_file >= TRIM_AFTER_BYTES {
            self.freed.store(0, Ordering::Relaxed);
            give_back_freed_pages();
        }
    }

    fn applying(&self, n: usize) {
        self.bars.applying(n);
    }
}

/// How many bytes of staged files of a large content ([`LARGE_CONTENT_BYTES`]) are dropped
/// before [`give_back_freed_pages`] runs again: its emissions are made by whichever worker has
/// the turn, so each worker's arena would otherwise keep a whole emission's freed pages beside
/// the other's. A content that is not large never gives pages back between targets: each worker
/// makes its next emission in the pages its last one freed, and a call walks every arena and
/// `madvise`s its free pages, which the next emission faults back in (issue 37, the reference's
/// content ported: 1,856 `madvise`, each a TLB shootdown of the other core, CPU -18% and max RSS
/// +0.4 MiB without them).
const TRIM_AFTER_BYTES: u64 = 4 << 20;

/// Returns the allocator's wholly free pages to the system. glibc keeps what a run frees (the
/// content's parse, a staged target's bytes) resident in the arena it came from, and the emitter
/// thread has an arena of its own: without this, what one phase freed stays resident beside what
/// the next allocates elsewhere. Measured over generated x8 content, once after loading and once
/// per staged target: max RSS of `--all` 83 -> 77 MiB, no slower. Elsewhere a no-op.
fn give_back_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim(3) takes a padding and touches only the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn label(r: &TargetRun) -> String {
    format!("{} ({})", r.plan.runtime, r.plan.scope.as_str())
}

/// Records this installer's version in the update cache the session-start hook reads
/// ([`msd_core::installed::update_cache`]). Best effort: a cache that cannot be written costs
/// only the notice, never the install.
fn note_version(env: &Environment) {
    use msd_core::installed::update_cache::{self, UpdateCache};
    let xdg = env.vars.get("XDG_CACHE_HOME").map(String::as_str);
    let Some(dir) = update_cache::cache_dir(xdg, Some(&env.home)) else { return };
    let path = dir.join(update_cache::CACHE_FILE);
    let current: Option<UpdateCache> =
        fsx::read_if_exists(&path).ok().flatten().and_then(|b| serde_json::from_slice(&b).ok());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let next = update_cache::next(current.as_ref(), env!("CARGO_PKG_VERSION"), now);
    // A cache (the newest version seen): a power cut that loses it costs a notice, not a flush
    // of the disk on every run.
    if fsx::create_dir_all(&dir).is_ok()
        && let Ok(bytes) = serde_json::to_vec(&next)
    {
        let _ = fsx::write_atomic_unsynced(&path, &bytes);
    }
}

/// Removes the update cache [`note_version`] writes (uninstall of every runtime: no msd file is
/// left behind). Best effort, like writing it.
pub fn forget_version(env: &Environment) {
    use msd_core::installed::update_cache;
    let xdg = env.vars.get("XDG_CACHE_HOME").map(String::as_str);
    let Some(dir) = update_cache::cache_dir(xdg, Some(&env.home)) else { return };
    for f in [update_cache::CACHE_FILE, update_cache::NOTICE_FILE] {
        let _ = fsx::remove_file_if_exists(&dir.join(f));
    }
    fast::forget_all(env);
    fsx::remove_dir_if_empty(&dir);
}

/// Migrations one target ran in this install, to revert if the run fails before its write.
struct Migrated<'a> {
    home: PathBuf,
    cap: &'a Capability,
    scope: Scope,
    ran: Vec<Ran>,
}

fn revert(migrated: &[Migrated<'_>], allow_symlinks: bool) {
    for m in migrated {
        migrate::revert(&m.home, m.cap, m.scope, &m.ran, allow_symlinks);
    }
}

/// Plans target `index`: its migrations (run now unless dry, and noted in `migrated` under its
/// index), files, settings surfaces and state. Returns the plan and what its survey learned of
/// the home's directories (after the migrations), for the target's transaction to go on from.
#[allow(clippy::too_many_arguments, reason = "the run's parts a target is planned from, each borrowed")]
fn plan_target<'r>(
    index: usize,
    rt: &'r LoadedRuntime,
    emitted: pipeline::Emitted,
    digests: Vec<Sha256>,
    opts: &InstallOptions<'_>,
    env: &Environment,
    held: Option<&Held>,
    migrated: &Mutex<Vec<(usize, Migrated<'r>)>>,
) -> Result<(TargetRun, Arc<DirCache>), ApplyError> {
    let pipeline::Emitted { target, emission, report: guard, compose } = emitted;
    let cap = &rt.capability;
    let home = target.home.clone();
    let state0 = InstallState::read(&home, cap, target.scope).map_err(LifecycleError::from)?;
    let (ran, pending_migrations) = if opts.dry_run {
        (Vec::new(), migrate::pending(state0.as_ref()))
    } else {
        let ran = migrate::run(&home, cap, target.scope, state0.as_ref(), opts.allow_symlinks)
            .map_err(LifecycleError::from)?;
        let m = Migrated { home: home.clone(), cap, scope: target.scope, ran: ran.clone() };
        migrated.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((index, m));
        (ran, Vec::new())
    };
    // The survey reads the state again, after the migrations.
    drop(state0);
    let dirs = Arc::new(DirCache::new());
    let how = Reading {
        emission: Some((&emission, &digests)),
        recorded: true,
        keep_edited: true,
        runtime_surfaces: true,
        allow_symlinks: opts.allow_symlinks,
        dirs: &dirs,
    };
    let mut survey = Survey::read(&home, cap, target.scope, how)?;
    drop(digests);
    let mut plan = plan::from_survey(emission, &mut survey, cap, opts.adopt)?;
    let hooks = HookContext { mode: opts.hooks, user_home: &env.home };
    let state = survey.state.as_ref();
    let lost_ledger = state.is_none() && survey.manifest.is_some();
    let ledgers = plan_settings(&mut plan, &survey, cap, &target, lost_ledger, &hooks)?;
    let created_home = held.and_then(|h| h.created_home.get(&home).copied());
    plan.state = next_state(&plan, cap, state, &ran, ledgers, created_home, opts.hooks.portable, opts.profile)?;
    plan.migrations = ran;
    let run = TargetRun {
        recovery: held.and_then(|h| h.recoveries.get(&home).cloned()),
        pending_recovery: opts.dry_run && Area::new(&home, opts.allow_symlinks).pending(),
        pending_migrations,
        target,
        guard,
        plan,
        report: None,
        compose,
        fast: false,
    };
    Ok((run, dirs))
}

/// Commits the staged transaction of each target: every one reaches its commit point first
/// (two flushes per filesystem for all of them, [`txn::commit_points`]), then each is applied,
/// in order. When one cannot be committed or applied, the ones before it stay installed and the
/// rest are discarded, their migrations reverted; when none was committed the run changed
/// nothing. (Targets already committed, when they share a home, are skipped.) Returns the
/// report of each target it committed, by index; `settled` is told of each as it is committed,
/// with the files whose stat is still the one taken when they were staged (for the fast path's
/// records: [`txn::Settled`]).
fn commit_all(
    runs: &[TargetRun],
    staged: Vec<Option<(txn::Prepared, write::WriteReport)>>,
    migrated: &[Migrated<'_>],
    opts: &InstallOptions<'_>,
    env: &Environment,
    settled: &dyn Fn(usize, txn::Settled),
) -> Result<Vec<(usize, write::WriteReport)>, ApplyError> {
    let mut staged = staged;
    if let Some(partner) = opts.linked.and_then(|l| l.take()) {
        let report = commit_linked(runs, staged, partner, migrated, opts, env)?;
        settled(0, txn::Settled::default());
        return Ok(vec![(0, report)]);
    }
    // Which targets are installed: those committed as they were staged (sharing a home), then
    // each committed here.
    let mut installed: Vec<bool> = runs.iter().map(|r| r.report.is_some()).collect();
    let mut reports = Vec::with_capacity(runs.len());
    let mut pending: Vec<&mut txn::Prepared> = staged.iter_mut().flatten().map(|(p, _)| p).collect();
    let mut failure = None;
    if let Err(stop) = txn::commit_points(&mut pending) {
        let e = ApplyError::from(write::WriteError::from(stop.error));
        let committed = staged.iter().flatten().any(|(p, _)| p.is_committed());
        if !committed && !installed.contains(&true) {
            // Nothing is committed: the staged trees are discarded as they are dropped.
            revert(migrated, opts.allow_symlinks);
            return Err(e);
        }
        let at = staged.iter().enumerate().filter(|(_, s)| s.is_some()).nth(stop.at);
        failure = Some((at.expect("the target that failed was given").0, e));
    }
    for (i, s) in staged.into_iter().enumerate() {
        if failure.as_ref().is_some_and(|(f, _)| i >= *f) {
            // Dropped: its journal (if any) and staged tree are removed, nothing applied.
            break;
        }
        let Some((prepared, report)) = s else { continue };
        // The target's files are about to change: the record of its last run no longer holds.
        fast::forget(env, &runs[i].target);
        let bars = opts.progress.target(&label(&runs[i]));
        match prepared.commit_keyed(bars.as_ref()) {
            Ok(s) => {
                installed[i] = true;
                reports.push((i, report));
                settled(i, s);
            }
            Err(e) => {
                failure = Some((i, ApplyError::from(write::WriteError::from(e))));
                break;
            }
        }
    }
    let Some((i, e)) = failure else { return Ok(reports) };
    revert(&migrated[i..], opts.allow_symlinks);
    if runs.len() == 1 {
        return Err(e);
    }
    Err(ApplyError::Partial {
        installed: runs[..i].iter().zip(&installed).filter(|(_, done)| **done).map(|(r, _)| label(r)).collect(),
        failed: label(&runs[i]),
        not_installed: runs[i..].iter().map(label).collect(),
        source: Box::new(e),
    })
}

/// [`commit_all`] of a run with a linked transaction ([`InstallOptions::linked`]): its one
/// target and the partner are carried out as one ([`txn::commit_linked`], this install first).
/// Returns the target's report. (A failure after the install's half is applied leaves it
/// installed, its migrations kept; the run's error says what failed.)
fn commit_linked(
    runs: &[TargetRun],
    staged: Vec<Option<(txn::Prepared, write::WriteReport)>>,
    partner: txn::Prepared,
    migrated: &[Migrated<'_>],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<write::WriteReport, ApplyError> {
    let mut staged = staged;
    let (Some(Some((prepared, report))), [run]) = (staged.pop(), runs) else {
        unreachable!("a linked install has one target, staged ahead");
    };
    fast::forget(env, &run.target);
    let bars = opts.progress.target(&label(run));
    match txn::commit_linked(prepared, partner, bars.as_ref()) {
        Ok(()) => Ok(report),
        Err((installed, e)) => {
            if !installed {
                revert(migrated, opts.allow_symlinks);
            }
            Err(ApplyError::from(write::WriteError::from(e)))
        }
    }
}

/// Every directory a write of `plan` goes into must accept new files: checked before the
/// transaction, so that a read-only subdirectory stops the run before anything is written.
fn probe_destinations(plan: &Plan, allow_symlinks: bool, known: &DirCache) -> Result<(), ApplyError> {
    let home = &plan.home;
    let mut dirs = BTreeSet::new();
    let puts = plan
        .ops
        .iter()
        .filter(|o| o.action != Action::Keep)
        .map(|o| &o.path)
        .chain(plan.settings.iter().filter(|s| s.action != Action::Keep).map(|s| &s.path));
    for p in puts {
        let dest = known.confined(home, p, allow_symlinks).map_err(LifecycleError::from)?;
        let mut d = dest.parent().map(Path::to_path_buf).unwrap_or_else(|| home.clone());
        while !known.dir_exists(&d) {
            match d.parent() {
                Some(p) => d = p.to_path_buf(),
                None => break,
            }
        }
        dirs.insert(d);
    }
    if !plan.is_noop() {
        dirs.insert(home.clone());
    }
    for d in dirs {
        fsx::probe_writable(&d).map_err(|e| LifecycleError::ReadOnly { home: home.clone(), reason: e.to_string() })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Condvar;
    use std::time::Duration;

    fn failed(what: &str) -> ApplyError {
        ApplyError::from(LifecycleError::Missing { home: PathBuf::from(what), reason: "a test".into() })
    }

    /// Which items have been begun and ended, shared by the workers of a test.
    #[derive(Default)]
    struct Seen {
        begun: Vec<usize>,
        ended: Vec<usize>,
    }

    /// A shared log the test's items wait on (with a bound, never a sleep).
    #[derive(Default)]
    struct Log {
        seen: Mutex<Seen>,
        changed: Condvar,
    }

    impl Log {
        fn note(&self, f: impl FnOnce(&mut Seen)) {
            f(&mut self.seen.lock().unwrap());
            self.changed.notify_all();
        }

        /// Waits until `until` holds; false when a minute passed first.
        fn wait(&self, until: impl Fn(&Seen) -> bool) -> bool {
            let held =
                self.changed.wait_timeout_while(self.seen.lock().unwrap(), Duration::from_secs(60), |s| !until(s));
            !held.unwrap().1.timed_out()
        }
    }

    /// A result that counts its drops: what a staged tree does when it is dropped (it discards
    /// itself) is seen by the test.
    struct Made<'a>(&'a AtomicUsize);

    impl Drop for Made<'_> {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Two workers run at once (item 0 ends only after item 1 ended, which a single thread could
    /// never do), and the results come back in the items' order, not the order they ended in.
    #[test]
    fn two_workers_run_at_once_and_results_come_back_in_order() {
        let log = Log::default();
        let items: Vec<usize> = (0..6).collect();
        let out = in_order(&items, 2, |i, &item| {
            assert_eq!(i, item);
            log.note(|s| s.begun.push(i));
            if i == 0 {
                assert!(log.wait(|s| s.ended.contains(&1)), "item 1 never ended while item 0 ran: one worker");
            }
            log.note(|s| s.ended.push(i));
            Ok(i * 10)
        });
        assert_eq!(out.unwrap(), [0, 10, 20, 30, 40, 50]);
        let seen = log.seen.into_inner().unwrap();
        assert_eq!(seen.ended.iter().position(|&i| i == 1).unwrap(), 0, "{:?}", seen.ended);
    }

    /// The failure returned is the first by index (what one thread running the items in order
    /// meets first), even when a later item failed before it; every result made is dropped (a
    /// staged tree discards itself) before the error is returned.
    #[test]
    fn the_first_failure_by_index_is_returned_and_every_result_is_dropped() {
        let log = Log::default();
        let drops = AtomicUsize::new(0);
        let made = AtomicUsize::new(0);
        let items: Vec<usize> = (0..6).collect();
        let out = in_order(&items, 2, |i, _| {
            log.note(|s| s.begun.push(i));
            match i {
                // Fails only after item 2 failed on the other worker.
                1 => {
                    assert!(log.wait(|s| s.ended.contains(&2)), "item 2 never ended while item 1 ran");
                    log.note(|s| s.ended.push(i));
                    Err(failed("one"))
                }
                2 => {
                    log.note(|s| s.ended.push(i));
                    Err(failed("two"))
                }
                _ => {
                    made.fetch_add(1, Ordering::SeqCst);
                    log.note(|s| s.ended.push(i));
                    Ok(Made(&drops))
                }
            }
        });
        let Err((at, e)) = out else { panic!("a failure was returned as a success") };
        assert_eq!(at, 1);
        assert!(e.to_string().contains("one"), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), made.load(Ordering::SeqCst), "every result made is dropped");
        let begun = log.seen.into_inner().unwrap().begun;
        assert!(begun.contains(&0) && begun.contains(&1) && begun.contains(&2), "{begun:?}");
    }

    /// On one worker, nothing after a failure is begun, and every item is run on the calling
    /// thread; so is a single item on two workers.
    #[test]
    fn one_worker_runs_in_order_on_this_thread_and_stops_at_a_failure() {
        let here = std::thread::current().id();
        let begun = Mutex::new(Vec::new());
        let items: Vec<usize> = (0..5).collect();
        let out = in_order(&items, 1, |i, _| {
            assert_eq!(std::thread::current().id(), here);
            begun.lock().unwrap().push(i);
            if i == 2 { Err(failed("two")) } else { Ok(i) }
        });
        assert!(matches!(out, Err((2, _))));
        assert_eq!(begun.into_inner().unwrap(), [0, 1, 2]);
        let one = in_order(&[7usize], 2, |_, &x| {
            assert_eq!(std::thread::current().id(), here);
            Ok(x)
        });
        assert_eq!(one.unwrap(), [7]);
    }

    /// Never more workers than targets or [`MAX_WORKERS`], and always one.
    #[test]
    fn workers_are_bounded_by_targets_and_the_maximum() {
        assert_eq!(workers(1), 1);
        assert_eq!(workers(0), 1);
        assert!((1..=MAX_WORKERS).contains(&workers(19)));
    }
}
