//! Install and upgrade: emit every selected runtime, take its target (check it can be written,
//! lock it, recover what an interrupted run left), run migrations, plan files, settings and
//! state, check every destination directory, then one transaction per target.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
/// recover every home), then [`stream`] the runtimes: each is emitted (pure, on a thread of its
/// own while the one before is staged) and, in order, planned ([`plan_target`]: migrations,
/// files, settings, state), its destinations probed ([`probe_destinations`]) and its transaction staged
/// ([`write::prepare`]: nothing visible changes, and its bytes are dropped). Only when every
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

    let mut migrated: Vec<Migrated<'_>> = Vec::new();
    let mut staged: Vec<Option<(txn::Prepared, write::WriteReport)>> = Vec::new();
    // The run's own record of the files of shared bytes it wrote (the helper: written once, then
    // linked into every other target), never one a run before it left in the process.
    let shared = Arc::new(SharedWrites::default());
    // The bytes staged (and so dropped) since freed pages were last given back.
    let mut freed = 0u64;
    let planned = stream(content, runtimes, opts, env, |rt, (e, d), next| {
        if opts.dry_run || held_bytes(&e.emission) <= EARLY_BEGIN_BYTES {
            // Nothing is staged (a dry run: every plan keeps its bytes), or this emission is small:
            // the next one is made while this one is planned too, for at most this one's bytes
            // more. A large one lets it begin only when its staging drops its bytes (below).
            next.begin();
        }
        let (mut run, dirs) = plan_target(rt, e, d, opts, env, held.as_ref(), &mut migrated)?;
        if opts.dry_run {
            run.plan.release_bytes();
        } else {
            probe_destinations(&run.plan, opts.allow_symlinks, &dirs)?;
            // Staging drops each file's bytes as it writes them: the next emission is made
            // meanwhile, so about one tree's bytes are held, not two.
            next.begin();
            let bars = opts.progress.target(&label(&run));
            // Staged: the plan keeps its ops' hashes and sizes, not the bytes.
            let written: u64 = run.plan.ops.iter().filter(|o| o.action != Action::Keep).filter_map(|o| o.bytes).sum();
            let area = Area::new(&run.plan.home, opts.allow_symlinks).with_caches(&dirs, &shared);
            let (prepared, report) = write::prepare(&mut run.plan, area, bars.as_ref())?;
            freed += written;
            if freed >= TRIM_AFTER_BYTES {
                give_back_freed_pages();
                freed = 0;
            }
            if stage_ahead {
                staged.push(Some((prepared, report)));
            } else {
                fast::forget(env, &run.target);
                prepared.commit(bars.as_ref()).map_err(write::WriteError::from)?;
                run.report = Some(report);
                staged.push(None);
            }
        }
        Ok(run)
    });
    let mut runs = match planned {
        Ok(runs) => runs,
        Err(e) => {
            // Every staged tree is discarded (nothing visible was written), then the
            // migrations of this run are undone.
            let committed = staged.iter().take_while(|s| s.is_none()).count();
            drop(staged);
            revert(&migrated[committed.min(migrated.len())..], opts.allow_symlinks);
            return Err(e);
        }
    };
    if !opts.dry_run {
        commit_all(&mut runs, staged, &migrated, opts, env)?;
        fast::record_all(&runs, runtimes, opts, env);
        note_version(env);
    }
    // The pair is done: the note goes while the home is still locked.
    drop(partner_notes);
    drop(held);
    Ok(runs)
}

/// Emits each runtime on a thread of its own (one runtime: on this one) and hands it (with its
/// digests) to `each` in order, with a [`Next`] that lets the emission of the next runtime
/// begin. `each` calls [`Next::begin`] once it no longer needs the time of the emitter (the install: when it starts
/// staging, whose writes drop each file's bytes as they go); it is called for it when `each`
/// returns. So the next runtime is made while this one is staged, and the bytes held are those
/// of the emission being staged (fewer with every file written) and of the one being made: about
/// one tree, where an emitter running a whole runtime ahead held two. Stops at the first error of
/// either side.
fn stream<'r, F>(
    content: &Content,
    runtimes: &[&'r LoadedRuntime],
    opts: &InstallOptions<'_>,
    env: &Environment,
    each: F,
) -> Result<Vec<TargetRun>, ApplyError>
where
    F: FnMut(&'r LoadedRuntime, (pipeline::Emitted, Vec<Sha256>), &Next) -> Result<TargetRun, ApplyError>,
{
    let (scope, config_dir) = (opts.scope, opts.config_dir);
    // A large buffer every runtime gets is hashed once in this run.
    let memo = Digests::default();
    let emit = |rt: &LoadedRuntime| {
        pipeline::emit(content, rt, scope, config_dir, env).map_err(ApplyError::from).map(|e| {
            let digests = plan::digests(&[&e.emission], &memo).pop().unwrap_or_default();
            (e, digests)
        })
    };
    pipelined(runtimes, emit, each)
}

/// Lets the emitter begin the next runtime; see [`stream`]. Holds its signal until it is given
/// (none where there is no emitter to wait).
struct Next(std::cell::Cell<Option<std::sync::mpsc::Sender<()>>>);

impl Next {
    /// Lets the next emission begin (once; later calls do nothing).
    fn begin(&self) {
        if let Some(go) = self.0.take() {
            // The emitter is gone only after an error of its own, which the next receive reports.
            let _ = go.send(());
        }
    }
}

/// [`stream`]'s two sides: `make` on a thread of its own (for two items or more), item `i + 1`
/// begun only once item `i`'s [`Next::begin`] was called (or `each` returned), and `each` on this
/// thread, in order.
fn pipelined<'r, R: Sync + ?Sized, T: Send, U>(
    items: &[&'r R],
    make: impl Fn(&'r R) -> Result<T, ApplyError> + Sync,
    each: impl FnMut(&'r R, T, &Next) -> Result<U, ApplyError>,
) -> Result<Vec<U>, ApplyError> {
    pipelined_observed(items, make, each, |_| {})
}

/// [`pipelined`], with `waits(i)` called on the maker's thread just before it waits for leave
/// to make item `i`: the tests' explicit handle on the order of the two sides (no sleeps).
fn pipelined_observed<'r, R: Sync + ?Sized, T: Send, U>(
    items: &[&'r R],
    make: impl Fn(&'r R) -> Result<T, ApplyError> + Sync,
    mut each: impl FnMut(&'r R, T, &Next) -> Result<U, ApplyError>,
    waits: impl Fn(usize) + Sync,
) -> Result<Vec<U>, ApplyError> {
    if let [item] = items {
        // Nothing to overlap: made on this thread, without a second one (and the allocator
        // arena it would fill).
        return Ok(vec![each(item, make(item)?, &Next(std::cell::Cell::new(None)))?]);
    }
    std::thread::scope(|s| {
        // One made item can wait in the channel while the maker waits to begin the next.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (make, waits) = (&make, &waits);
        s.spawn(move || {
            for (i, item) in items.iter().enumerate() {
                // Gone senders: this side stopped (an error), nothing more to make.
                if i > 0 {
                    waits(i);
                    if wait.recv().is_err() {
                        break;
                    }
                }
                let made = make(item);
                let failed = made.is_err();
                if tx.send(made).is_err() || failed {
                    break;
                }
            }
        });
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let made = rx.recv().expect("the maker sends one result per item until an error")?;
            let next = Next(std::cell::Cell::new(Some(go.clone())));
            out.push(each(item, made, &next)?);
            next.begin();
        }
        Ok(out)
    })
}

/// An emission holding at most this many bytes lets the next one begin as soon as it is handed
/// over, not when its staging begins. With the shipped content (about 2 MiB a runtime) making an
/// emission took longer than staging one, and the next emission began only after this one was
/// planned (its survey, settings and state: a fifth of the main thread's time per target), so
/// that planning ran beside nothing. Above this (generated x4 and up, 8 MiB and more a runtime)
/// the bytes of a second whole emission are not worth it: staging is the slower side there.
const EARLY_BEGIN_BYTES: u64 = 4 << 20;

/// The bytes an emission holds in memory (a file's, such as the helper's, are not loaded).
fn held_bytes(e: &pipeline::convert::Emission) -> u64 {
    e.files.iter().filter(|f| f.bytes.file().is_none()).map(|f| f.bytes.len() as u64).sum()
}

/// How many bytes of staged files are dropped before [`give_back_freed_pages`] runs again. Each
/// call walks every arena and `madvise`s its free pages, which the next emission then faults
/// back in: once per staged target it was 1,300 `madvise` calls and 2-3% of a shipped `--all`
/// (about 2 MiB a target) for pages that were about to be used again. A large target (generated
/// x8 content: 16 MiB and more) still gives its pages back as soon as it is staged.
const TRIM_AFTER_BYTES: u64 = 8 << 20;

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

/// Plans one target: its migrations (run now unless dry), files, settings surfaces and state.
/// Returns the plan and what its survey learned of the home's directories (after the
/// migrations), for the target's transaction to go on from.
fn plan_target<'r>(
    rt: &'r LoadedRuntime,
    emitted: pipeline::Emitted,
    digests: Vec<Sha256>,
    opts: &InstallOptions<'_>,
    env: &Environment,
    held: Option<&Held>,
    migrated: &mut Vec<Migrated<'r>>,
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
        migrated.push(Migrated { home: home.clone(), cap, scope: target.scope, ran: ran.clone() });
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
/// nothing. (Targets already committed, when they share a home, are skipped.)
fn commit_all(
    runs: &mut [TargetRun],
    staged: Vec<Option<(txn::Prepared, write::WriteReport)>>,
    migrated: &[Migrated<'_>],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<(), ApplyError> {
    let mut staged = staged;
    if let Some(partner) = opts.linked.and_then(|l| l.take()) {
        return commit_linked(runs, staged, partner, migrated, opts, env);
    }
    let mut pending: Vec<&mut txn::Prepared> = staged.iter_mut().flatten().map(|(p, _)| p).collect();
    let mut failure = None;
    if let Err(stop) = txn::commit_points(&mut pending) {
        let e = ApplyError::from(write::WriteError::from(stop.error));
        let committed = staged.iter().flatten().any(|(p, _)| p.is_committed());
        if !committed && runs.iter().all(|r| r.report.is_none()) {
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
        match prepared.commit(bars.as_ref()) {
            Ok(()) => runs[i].report = Some(report),
            Err(e) => {
                failure = Some((i, ApplyError::from(write::WriteError::from(e))));
                break;
            }
        }
    }
    let Some((i, e)) = failure else { return Ok(()) };
    revert(&migrated[i..], opts.allow_symlinks);
    if runs.len() == 1 {
        return Err(e);
    }
    Err(ApplyError::Partial {
        installed: runs[..i].iter().filter(|r| r.report.is_some()).map(label).collect(),
        failed: label(&runs[i]),
        not_installed: runs[i..].iter().map(label).collect(),
        source: Box::new(e),
    })
}

/// [`commit_all`] of a run with a linked transaction ([`InstallOptions::linked`]): its one
/// target and the partner are carried out as one ([`txn::commit_linked`], this install first).
fn commit_linked(
    runs: &mut [TargetRun],
    staged: Vec<Option<(txn::Prepared, write::WriteReport)>>,
    partner: txn::Prepared,
    migrated: &[Migrated<'_>],
    opts: &InstallOptions<'_>,
    env: &Environment,
) -> Result<(), ApplyError> {
    let mut staged = staged;
    let (Some(Some((prepared, report))), [run]) = (staged.pop(), &mut *runs) else {
        unreachable!("a linked install has one target, staged ahead");
    };
    fast::forget(env, &run.target);
    let bars = opts.progress.target(&label(run));
    match txn::commit_linked(prepared, partner, bars.as_ref()) {
        Ok(()) => {
            run.report = Some(report);
            Ok(())
        }
        Err((installed, e)) => {
            if installed {
                run.report = Some(report);
            } else {
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
    use std::sync::Mutex;

    fn failed(what: &str) -> ApplyError {
        ApplyError::from(LifecycleError::Missing { home: PathBuf::from(what), reason: "a test".into() })
    }

    /// What the two sides of a [`pipelined_observed`] run did, in order, and which items the
    /// maker has reached its wait for.
    #[derive(Default)]
    struct Seen {
        log: Vec<String>,
        waiting: Vec<usize>,
    }

    /// Runs [`pipelined_observed`] over 0..4 and returns what happened in order. `each` holds
    /// its item until the maker has either made the next one (an emitter that ran ahead: the
    /// log shows it before this item's begin) or stopped at its wait for it: the order is
    /// settled by the maker's own signal, never by a sleep.
    fn run(begin_in_each: bool, fail_make: Option<u32>, fail_each: Option<u32>) -> (Vec<String>, bool) {
        let seen = Mutex::new(Seen::default());
        let changed = std::sync::Condvar::new();
        let note = |s: String| {
            seen.lock().unwrap().log.push(s);
            changed.notify_all();
        };
        let items: Vec<&u32> = [0, 1, 2, 3].iter().collect();
        let result = pipelined_observed(
            &items,
            |&i| {
                note(format!("make {i}"));
                if fail_make == Some(i) { Err(failed("make")) } else { Ok(i * 10) }
            },
            |&i, made, next| {
                assert_eq!(made, i * 10, "items are handed over in order");
                if fail_each == Some(i) {
                    return Err(failed("each"));
                }
                let after = i as usize + 1;
                if after < items.len() {
                    let made_next = format!("make {after}");
                    let held =
                        changed.wait_timeout_while(seen.lock().unwrap(), std::time::Duration::from_secs(60), |s| {
                            !s.waiting.contains(&after) && !s.log.contains(&made_next)
                        });
                    assert!(!held.unwrap().1.timed_out(), "the maker neither waited for nor made item {after}");
                }
                note(format!("begin {i}"));
                if begin_in_each {
                    next.begin();
                    next.begin();
                }
                Ok(i)
            },
            |i| {
                seen.lock().unwrap().waiting.push(i);
                changed.notify_all();
            },
        );
        let ok = result.as_ref().is_ok_and(|out| out == &[0, 1, 2, 3]);
        (seen.into_inner().unwrap().log, ok)
    }

    fn position(log: &[String], what: &str) -> Option<usize> {
        log.iter().position(|l| l == what)
    }

    /// The next item is made only once the one before it let it begin: an install holds the
    /// emission it stages and the one being made, never two made ones beside a staged one.
    #[test]
    fn the_next_emission_begins_only_when_the_one_before_lets_it() {
        for begin_in_each in [true, false] {
            let (log, ok) = run(begin_in_each, None, None);
            assert!(ok, "{log:?}");
            for i in 0..3 {
                let begun = position(&log, &format!("begin {i}")).unwrap();
                let made = position(&log, &format!("make {}", i + 1)).unwrap();
                assert!(begun < made, "item {} made before item {i} let it begin: {log:?}", i + 1);
            }
        }
    }

    /// A single item is made on the calling thread: there is nothing to overlap.
    #[test]
    fn a_single_item_is_made_on_the_calling_thread() {
        let here = std::thread::current().id();
        let items = [&1u32];
        let made_on = Mutex::new(None);
        let out = pipelined(
            &items,
            |&i| {
                *made_on.lock().unwrap() = Some(std::thread::current().id());
                Ok(i)
            },
            |_, made, next| {
                next.begin();
                Ok(made)
            },
        );
        assert_eq!(out.unwrap(), [1]);
        assert_eq!(made_on.into_inner().unwrap(), Some(here));
    }

    /// A failure of either side stops the other: nothing is made after a failing `each`, and
    /// `each` sees nothing after a failing make.
    #[test]
    fn a_failure_of_either_side_stops_the_pipeline() {
        let (log, ok) = run(true, None, Some(1));
        assert!(!ok);
        assert_eq!(log, ["make 0", "begin 0", "make 1"], "nothing is made after item 1 failed");
        let (log, ok) = run(true, Some(2), None);
        assert!(!ok);
        assert_eq!(log, ["make 0", "begin 0", "make 1", "begin 1", "make 2"]);
    }
}
