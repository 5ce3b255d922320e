//! Taking a target before anything reads it for a plan: check it can be written, lock it (every
//! home of a run, in path order), and finish or undo what an interrupted run left there. Every
//! operation that writes (install, uninstall, recover) takes its targets here, and the no-change
//! fast path takes them exactly as the full path does. What a run created of a home and finds
//! empty when it lets go is removed again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use msd_core::fs::fsx::{self, Lock};
use msd_core::manifest::capability::Scope;

use super::{InstallOptions, LifecycleError, lio, txn};
use crate::apply::txn::{Area, Recovery};
use crate::pipeline::target::{HomeSource, Target};

pub(super) struct Held {
    _locks: Vec<Lock>,
    pub(super) recoveries: BTreeMap<PathBuf, Recovery>,
    /// Homes this run created, each with how many directories above it it created too.
    pub(super) created_home: BTreeMap<PathBuf, usize>,
}

impl Drop for Held {
    /// Unlocks, then removes a home this run created when it stayed empty (a run that failed
    /// before writing leaves no trace). Deepest first, so a home inside another this run created
    /// (`~/.gemini/config` in `~/.gemini`) goes before it, and a directory created above two
    /// homes (`~/.config` over `kilo/` and `opencode/`) once both are gone: in path order, a
    /// failed `--all` left both behind, empty.
    fn drop(&mut self) {
        self._locks.clear();
        let mut homes: Vec<(&PathBuf, usize)> = self.created_home.iter().map(|(h, a)| (h, *a)).collect();
        homes.sort_by_key(|(h, _)| std::cmp::Reverse(h.components().count()));
        let left: Vec<PathBuf> = homes.into_iter().flat_map(|(h, above)| remove_created(h, above)).collect();
        remove_created_parents(&left);
    }
}

/// Removes `home` when it is empty, then up to `above` directories over it while each is empty:
/// what an install created and nothing else filled. Returns those of the `above` that are still
/// there because something else is in them (another runtime's home, to be removed after it).
pub(super) fn remove_created(home: &Path, above: usize) -> Vec<PathBuf> {
    if !fsx::remove_dir_if_empty(home) {
        return Vec::new();
    }
    let mut left = Vec::new();
    for dir in home.ancestors().skip(1).take(above) {
        if !left.is_empty() || !fsx::remove_dir_if_empty(dir) {
            left.push(dir.to_path_buf());
        }
    }
    left
}

/// After several uninstalls: removes each directory an install created above its home that is
/// empty now, deepest first (`~/.config` once both `kilo/` and `opencode/` in it are gone).
pub fn remove_created_parents(dirs: &[PathBuf]) {
    let mut dirs: Vec<&PathBuf> = dirs.iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs.dedup();
    for d in dirs {
        fsx::remove_dir_if_empty(d);
    }
}

/// Checks that `home` exists or can be created, and can be written, writing nothing visible.
fn preflight(target: &Target) -> Result<(), LifecycleError> {
    let home = &target.home;
    if target.source == HomeSource::ConfigDir
        && let Some(parent) = home.parent()
        && !fsx::is_dir(parent)
    {
        return Err(LifecycleError::Missing {
            home: home.clone(),
            reason: format!("{} does not exist (--config-dir names a directory in an existing one)", parent.display()),
        });
    }
    let mut probe = home.as_path();
    while !probe.exists() {
        if fsx::lexists(probe) {
            return Err(LifecycleError::Missing {
                home: home.clone(),
                reason: format!("{} is a dangling symlink", probe.display()),
            });
        }
        match probe.parent() {
            Some(p) => probe = p,
            None => break,
        }
    }
    if !probe.is_dir() {
        return Err(LifecycleError::Missing {
            home: home.clone(),
            reason: format!("{} is not a directory", probe.display()),
        });
    }
    fsx::probe_writable(probe).map_err(|e| LifecycleError::ReadOnly { home: home.clone(), reason: e.to_string() })
}

/// Locks every distinct home (in path order, so two runs on overlapping sets cannot deadlock),
/// creating missing homes, and recovers what interrupted runs left. `live`: the home of the
/// other half of a linked pair this process holds and has staged (`migrate`,
/// [`super::Linked`]): neither locked again nor recovered ([`txn::recover_beside`]).
pub(super) fn hold(homes: &[&Path], allow_symlinks: bool, live: Option<&Path>) -> Result<Held, LifecycleError> {
    let set: BTreeSet<&Path> = homes.iter().copied().collect();
    // The other half of a linked transaction an interrupted run left (`migrate`) is recovered
    // with this one: its home is locked too.
    let partners: BTreeSet<PathBuf> = set
        .iter()
        .filter_map(|h| Area::new(h, allow_symlinks).partner())
        .filter(|h| !set.contains(h.as_path()) && h.is_dir() && live != Some(h.as_path()))
        .collect();
    let mut held = Held { _locks: Vec::new(), recoveries: BTreeMap::new(), created_home: BTreeMap::new() };
    for home in &partners {
        held._locks.push(Lock::acquire(home)?);
    }
    for home in set {
        // A home holding nothing but our work dir, or nothing at all, is one a run created and
        // was killed in before it wrote anything (between its mkdir and its lock, or before
        // the destructor removed it): it is ours, as if absent. An empty directory holds
        // nothing of the user's to lose.
        let only_work_dir = fsx::list_dir(home).is_ok_and(|es| es.iter().all(|e| e.name == fsx::WORK_DIR && e.is_dir));
        if !home.exists() || only_work_dir {
            // The directories above a missing home that the lock's mkdir will create too (after
            // a killed run they exist already and are not counted: the user may own them).
            let above = if home.exists() { 0 } else { home.ancestors().skip(1).take_while(|a| !a.exists()).count() };
            held.created_home.insert(home.to_path_buf(), above);
        }
        held._locks.push(Lock::acquire(home)?);
        // Writability probes that older versions left, when killed, beside and in the home.
        for dir in home.parent().into_iter().chain([home]) {
            fsx::remove_leftovers(dir, &fsx::LEFTOVER_PREFIXES[1..]).map_err(lio(dir))?;
        }
        if let Some(r) = txn::recover_beside(&Area::new(home, allow_symlinks), live)? {
            held.recoveries.insert(home.to_path_buf(), r);
        }
    }
    Ok(held)
}

/// Checks that every target can be written, then locks and recovers them all (none for a dry
/// run).
pub(super) fn take(targets: &[&Target], opts: &InstallOptions<'_>) -> Result<Option<Held>, LifecycleError> {
    if opts.dry_run {
        return Ok(None);
    }
    for t in targets {
        preflight(t)?;
    }
    // A local home that is there already, even empty, is the user's: a runtime's local home can
    // be the project itself (Cline), which uninstall must not remove as one msd created.
    let users: Vec<&Path> =
        targets.iter().filter(|t| t.scope == Scope::Local && t.home.is_dir()).map(|t| t.home.as_path()).collect();
    let homes: Vec<&Path> = targets.iter().map(|t| t.home.as_path()).collect();
    let mut held = hold(&homes, opts.allow_symlinks, opts.linked.map(super::Linked::home))?;
    for home in users {
        held.created_home.remove(home);
    }
    Ok(Some(held))
}
