//! Stage 6, `plan`: compare the last manifest, the disk and the new emission, and decide, file
//! by file, what to do.
//!
//! Input: an [`Emission`], the target home, the previous [`FileManifest`]. Output: a [`Plan`],
//! a value that `--dry-run` prints, `--json` serialises and the writer executes; nothing else
//! decides what is written.
//!
//! Rules (SPEC section 6): identical bytes are kept (a second identical run changes nothing); a
//! file whose disk hash differs from what we recorded was edited by the user and is backed up
//! before it is replaced or removed; a file we never recorded that sits where we must write is
//! the user's: the plan is refused ([`PlanError::Unmanaged`]) unless the run adopts such files
//! (`--adopt`: backed up, then replaced); files the old version wrote and the new one does not
//! are removed; files we never wrote are never touched. Reads only.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::apply::record::{self, Entry, FileManifest};
use crate::apply::survey::{Class, Disk, PathFacts, Reading, Survey, SurveyError};
use crate::pipeline::convert::{Bytes, Emission, FileKind};
use msd_core::fs::bytes::Digests;
use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, DirCache, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};

/// What happens to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A new file.
    Add,
    /// An existing file gets new bytes.
    Change,
    /// A file of the previous install that is no longer emitted.
    Remove,
    /// Already up to date.
    Keep,
}

impl Action {
    /// `add`, `change`, `remove`, `keep`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Change => "change",
            Action::Remove => "remove",
            Action::Keep => "keep",
        }
    }
}

/// Why a file is backed up before it is replaced or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BackupReason {
    /// Its hash differs from the one we recorded.
    UserEdited,
    /// We never recorded it, but we must write where it is (only with `--adopt`).
    Unmanaged,
}

/// One operation.
#[derive(Debug, Clone, Serialize)]
pub struct Op {
    /// What happens.
    pub action: Action,
    /// Path relative to the home.
    pub path: RelPath,
    /// Size of the new bytes (add, change, keep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Size on disk before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_bytes: Option<u64>,
    /// Set when the current file is copied to the local-patches directory first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<BackupReason>,
    /// The kind of file (absent for removals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<FileKind>,
    /// sha256 of the new bytes (add, change, keep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<Sha256>,
    /// New bytes (shared with the emission).
    #[serde(skip)]
    pub data: Option<Bytes>,
    /// Current bytes when they are backed up.
    #[serde(skip)]
    pub old_data: Option<Vec<u8>>,
    /// Mode of the new file.
    #[serde(skip)]
    pub mode: FileMode,
    /// sha256 of the file on disk when planned (`None` when absent).
    #[serde(skip)]
    pub old_sha256: Option<Sha256>,
    /// A kept file's [`fsx::StatKey`], taken just before it was read for the plan: when its stat
    /// is the same after the run, it was not touched in between ([`crate::apply::fast`]). Boxed and
    /// kept only for kept files (nothing else compares it): every op is held until the run ends.
    #[serde(skip)]
    pub disk_stat: Option<Box<fsx::StatKey>>,
}

/// The install state to write: its path, bytes and the sha256 of the file it replaces.
pub type StateWrite = (RelPath, Vec<u8>, Option<Sha256>);

/// One settings surface edit: our entries upserted into (or removed from) a user's file.
#[derive(Debug, Clone, Serialize)]
pub struct SettingsChange {
    /// The file, relative to the home.
    pub path: RelPath,
    /// What happens to the file.
    pub action: Action,
    /// Entry ids added.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Entry ids whose value changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub updated: Vec<String>,
    /// Entry ids removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Notes for the user (their value kept over ours, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// New bytes (absent for a removal or a keep).
    #[serde(skip)]
    pub data: Option<Vec<u8>>,
    /// sha256 of the file when planned.
    #[serde(skip)]
    pub old_sha256: Option<Sha256>,
    /// The file's current bytes, backed up first because an entry of ours in it was edited by
    /// the user and is replaced or removed.
    #[serde(skip)]
    pub old_data: Option<Vec<u8>>,
}

/// The whole plan for one runtime and scope.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// The home everything is written under.
    pub home: PathBuf,
    /// Operations sorted by path.
    pub ops: Vec<Op>,
    /// The manifest to record.
    #[serde(skip)]
    pub manifest: FileManifest,
    /// The manifest's path relative to the home.
    #[serde(skip)]
    pub manifest_path: RelPath,
    /// Whether the manifest on disk differs from the new one.
    pub manifest_changed: bool,
    /// The manifest of the install being replaced.
    #[serde(skip)]
    pub previous: Option<FileManifest>,
    /// sha256 of the manifest file on disk when planned.
    #[serde(skip)]
    pub manifest_old_sha256: Option<Sha256>,
    /// The manifest file's stat taken just before it was read for the plan.
    #[serde(skip)]
    pub manifest_disk_stat: Option<fsx::StatKey>,
    /// Settings surfaces edited.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingsChange>,
    /// Migrations run on the target before planning.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<crate::apply::migrate::Ran>,
    /// The install state to record, when it changes: its path, bytes and the old file's sha256.
    #[serde(skip)]
    pub state: Option<StateWrite>,
}

/// Counts of a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Files added.
    pub added: usize,
    /// Files changed.
    pub changed: usize,
    /// Files removed.
    pub removed: usize,
    /// Files kept.
    pub kept: usize,
    /// Files backed up first.
    pub backed_up: usize,
    /// Bytes of all emitted files.
    pub bytes: u64,
}

/// Planning errors.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// Reading the disk failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The previous manifest is unreadable.
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// A destination passes through a symlink.
    #[error(transparent)]
    Confine(#[from] fsx::ConfineError),
    /// Files msd-install never wrote sit where it must write: they are the user's.
    #[error("{}: {} file(s) at paths msd-install installs to were not written by it and are left untouched: {}", home.display(), paths.len(), paths.iter().map(RelPath::as_str).collect::<Vec<_>>().join(", "))]
    Unmanaged {
        /// The home.
        home: PathBuf,
        /// The files, relative to the home.
        paths: Vec<RelPath>,
    },
}

impl Plan {
    /// Lets go of the bytes to write and to back up, the manifest's entries and the previous
    /// manifest, as staging does ([`crate::apply::write::prepare`]): a plan that is only reported
    /// (a dry run) keeps its ops' sizes and digests, not a tree per target.
    pub fn release_bytes(&mut self) {
        for op in &mut self.ops {
            op.data = None;
            op.old_data = None;
        }
        self.manifest.files = Vec::new();
        self.previous = None;
    }

    /// Counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for op in &self.ops {
            match op.action {
                Action::Add => s.added += 1,
                Action::Change => s.changed += 1,
                Action::Remove => s.removed += 1,
                Action::Keep => s.kept += 1,
            }
            if op.backup.is_some() {
                s.backed_up += 1;
            }
            s.bytes += op.bytes.unwrap_or(0);
        }
        s
    }

    /// Whether running it would write anything.
    pub fn is_noop(&self) -> bool {
        !self.manifest_changed
            && self.state.is_none()
            && self.ops.iter().all(|o| o.action == Action::Keep)
            && self.settings.iter().all(|s| s.action == Action::Keep)
    }
}

/// Builds the plan of `emission` into `home`. A file at one of our paths that the previous
/// manifest does not list and whose bytes differ from ours is the user's: refused unless
/// `adopt` (then it is backed up and replaced).
pub fn build(
    emission: Emission,
    cap: &Capability,
    home: &Path,
    allow_symlinks: bool,
    adopt: bool,
) -> Result<Plan, PlanError> {
    let digests = digests(&[&emission], &Digests::default()).pop().unwrap_or_default();
    build_hashed(emission, digests, cap, home, allow_symlinks, adopt)
}

/// The sha256 of every file of `emissions` (`[emission][file]`), each distinct byte string
/// hashed once, on the calling thread: an install hashes on its emitter thread while the main
/// thread writes the previous target (`install::stream`), so the two cores are already busy; a
/// rayon pool beside them measured more CPU, not less time (its idle workers spun in
/// `sched_yield`, 867 calls per `--all`). A reference or template that most runtimes get unchanged, or the
/// helper binary every runtime gets, costs one digest however many trees it goes into (across
/// calls, a large buffer once per `memo`: the caller's, one per run). Equal
/// byte strings are found by length and a few bytes of each end, then compared in full (a
/// comparison is a fraction of a digest and stops at the first difference).
pub fn digests(emissions: &[&Emission], memo: &Digests) -> Vec<Vec<Sha256>> {
    let (unique, slots) = distinct(emissions);
    let hashed: Vec<Sha256> = unique.iter().map(|b| memo.sha256(b)).collect();
    slots.into_iter().map(|s| s.into_iter().map(|i| hashed[i]).collect()).collect()
}

/// The distinct byte strings of `emissions`, and for each file the index of its own.
fn distinct<'a>(emissions: &[&'a Emission]) -> (Vec<&'a Bytes>, Vec<Vec<usize>>) {
    fn key(b: &Bytes) -> (usize, [u8; 16]) {
        let mut k = [0u8; 16];
        if b.file().is_some() {
            // Not read for a key: files are few (the helper) and share one.
            return (b.len(), k);
        }
        let n = b.len().min(8);
        k[..n].copy_from_slice(&b[..n]);
        k[8..8 + n].copy_from_slice(&b[b.len() - n..]);
        (b.len(), k)
    }
    let mut seen: std::collections::HashMap<(usize, [u8; 16]), Vec<usize>> = std::collections::HashMap::new();
    let mut unique: Vec<&'a Bytes> = Vec::new();
    let slots = emissions
        .iter()
        .map(|e| {
            e.files
                .iter()
                .map(|f| {
                    let b = &f.bytes;
                    let same = seen.entry(key(b)).or_default();
                    // Bytes shared by several files (the helper) are one source: equal without a look.
                    match same.iter().find(|&&i| unique[i] == b) {
                        Some(&i) => i,
                        None => {
                            unique.push(b);
                            same.push(unique.len() - 1);
                            unique.len() - 1
                        }
                    }
                })
                .collect()
        })
        .collect();
    (unique, slots)
}

/// [`build`] with the digests of `emission`'s files already taken ([`digests`]): the target's
/// [`Survey`] ([`Survey::read`]), then [`from_survey`].
pub fn build_hashed(
    emission: Emission,
    digests: Vec<Sha256>,
    cap: &Capability,
    home: &Path,
    allow_symlinks: bool,
    adopt: bool,
) -> Result<Plan, PlanError> {
    let how = Reading {
        emission: Some((&emission, &digests)),
        recorded: true,
        keep_edited: true,
        runtime_surfaces: false,
        allow_symlinks,
        dirs: &DirCache::new(),
    };
    let mut survey = Survey::read(home, cap, emission.scope, how).map_err(PlanError::from_survey)?;
    from_survey(emission, &mut survey, cap, adopt)
}

/// The file plan of installing `emission` over what `survey` found (taken with this emission):
/// each path's action from its class. The emitted files: the new bytes where nothing is (add);
/// kept where the disk holds them already (and the recorded mode is theirs); else changed, the
/// disk's bytes backed up first when the user edited msd's file, and refused as the user's own
/// file ([`PlanError::Unmanaged`]) unless `adopt` (then backed up too). Recorded files no longer
/// shipped are removed (backed up first when edited); missing ones are left missing. The
/// backed-up bytes move from the survey into the plan. Reads the manifest file (is it the new
/// one?) and nothing else.
pub(crate) fn from_survey(
    emission: Emission,
    survey: &mut Survey,
    cap: &Capability,
    adopt: bool,
) -> Result<Plan, PlanError> {
    let home = survey.home.clone();
    let manifest_path = record::manifest_rel(cap, emission.scope);
    let mut ops = Vec::with_capacity(emission.files.len() + 1);
    let mut entries = Vec::with_capacity(emission.files.len());
    let mut foreign = Vec::new();
    let mut facts = survey.files.iter_mut();
    for f in emission.files {
        let fact = facts.next().expect("the survey has every emitted file, in order");
        debug_assert_eq!(fact.path, f.path);
        let new = fact.new.as_ref().expect("an emitted file");
        entries.push(Entry { path: f.path.clone(), bytes: new.len, sha256: new.sha256, mode: new.mode });
        let (action, backup) = file_action(fact);
        if backup == Some(BackupReason::Unmanaged) {
            foreign.push(f.path.clone());
        }
        let old_data = match (&mut fact.disk, backup) {
            (Disk::File { bytes, .. }, Some(_)) => bytes.take(),
            _ => None,
        };
        ops.push(Op {
            action,
            path: f.path,
            bytes: Some(new.len),
            old_bytes: fact.disk.len(),
            backup,
            kind: Some(f.kind),
            sha256: Some(new.sha256),
            old_sha256: fact.disk.sha256(),
            old_data,
            // A kept file is not written: its bytes need not be held until the write.
            data: (action != Action::Keep).then_some(f.bytes),
            mode: f.mode,
            disk_stat: fact.stat.filter(|_| action == Action::Keep).map(Box::new),
        });
    }
    for fact in facts.filter(|f| !f.shipped) {
        let Some(old) = &fact.recorded else { continue };
        let edited = match fact.class {
            Class::Unchanged => false,
            Class::Edited => true,
            _ => continue,
        };
        let old_data = match &mut fact.disk {
            Disk::File { bytes, .. } if edited => bytes.take(),
            _ => None,
        };
        ops.push(Op {
            action: Action::Remove,
            path: old.path.clone(),
            bytes: None,
            old_bytes: fact.disk.len(),
            backup: edited.then_some(BackupReason::UserEdited),
            kind: None,
            sha256: None,
            data: None,
            old_data,
            mode: old.mode,
            old_sha256: fact.disk.sha256(),
            disk_stat: None,
        });
    }
    if !foreign.is_empty() && !adopt {
        foreign.sort();
        return Err(PlanError::Unmanaged { home, paths: foreign });
    }
    ops.sort_by(|a, b| a.path.cmp(&b.path));
    let manifest = FileManifest::new(emission.runtime.clone(), emission.scope, entries);
    let manifest_disk_stat = fsx::stat_key(&home.join(manifest_path.as_str()))?;
    let manifest_disk = fsx::read_if_exists(&home.join(manifest_path.as_str()))?;
    let previous = survey.manifest.clone();
    let manifest_changed =
        previous.as_ref() != Some(&manifest) || manifest_disk.as_deref() != Some(&manifest.render()[..]);
    Ok(Plan {
        runtime: emission.runtime,
        scope: emission.scope,
        home,
        ops,
        manifest,
        manifest_path,
        manifest_changed,
        previous,
        manifest_old_sha256: manifest_disk.as_deref().map(fsx::sha256),
        manifest_disk_stat,
        settings: Vec::new(),
        migrations: Vec::new(),
        state: None,
    })
}

/// What becomes of a path the new emission writes, from what the survey found there: added
/// where nothing is; kept where the disk holds the new bytes (and the recorded mode is theirs);
/// else changed, backed up first when the user edited msd's file or when it is the user's own.
fn file_action(fact: &PathFacts) -> (Action, Option<BackupReason>) {
    let new = fact.new.as_ref().expect("an emitted file");
    let same = matches!(fact.disk, Disk::File { same_as_new: true, .. } | Disk::AsLeft);
    match fact.class {
        Class::Created | Class::Missing => (Action::Add, None),
        _ if same && fact.recorded.as_ref().is_none_or(|r| r.mode == new.mode) => (Action::Keep, None),
        Class::Unchanged | Class::Edited | Class::UsersAtOurPath if same => (Action::Change, None),
        Class::Unchanged => (Action::Change, None),
        Class::Edited => (Action::Change, Some(BackupReason::UserEdited)),
        Class::UsersAtOurPath => (Action::Change, Some(BackupReason::Unmanaged)),
    }
}

/// The no-change plan of a target surveyed in the cheap form ([`Survey::by_stat`]: every path
/// as the last run left it, its new file the recorded one): every file kept, by the same rule as
/// [`from_survey`]; `None` when that rule would do anything else.
pub(crate) fn unchanged(survey: &Survey, cap: &Capability, manifest_stat: fsx::StatKey) -> Option<Plan> {
    let manifest = survey.manifest.clone()?;
    let mut ops = Vec::with_capacity(survey.files.len());
    for fact in &survey.files {
        if file_action(fact) != (Action::Keep, None) {
            return None;
        }
        let new = fact.new.as_ref()?;
        ops.push(Op {
            action: Action::Keep,
            path: fact.path.clone(),
            bytes: Some(new.len),
            old_bytes: Some(new.len),
            backup: None,
            kind: Some(new.kind),
            sha256: Some(new.sha256),
            data: None,
            old_data: None,
            mode: new.mode,
            old_sha256: Some(new.sha256),
            disk_stat: fact.stat.map(Box::new),
        });
    }
    Some(Plan {
        runtime: cap.id.clone(),
        scope: survey.scope,
        home: survey.home.clone(),
        ops,
        manifest: manifest.clone(),
        manifest_path: record::manifest_rel(cap, survey.scope),
        manifest_changed: false,
        previous: Some(manifest),
        manifest_old_sha256: None,
        manifest_disk_stat: Some(manifest_stat),
        settings: Vec::new(),
        migrations: Vec::new(),
        state: None,
    })
}

impl PlanError {
    /// A survey's error, as planning reports it (the state and the settings surfaces are not read
    /// by [`build_hashed`], so a lifecycle error is only an io error here).
    pub(crate) fn from_survey(e: SurveyError) -> PlanError {
        match e {
            SurveyError::Io(e) => PlanError::Io(e),
            SurveyError::Record(e) => PlanError::Record(e),
            SurveyError::Confine(e) => PlanError::Confine(e),
            SurveyError::Lifecycle(e) => PlanError::Io(std::io::Error::other(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emission(files: &[&[u8]]) -> Emission {
        Emission {
            runtime: "x".into(),
            scope: Scope::Global,
            files: files
                .iter()
                .enumerate()
                .map(|(i, b)| crate::pipeline::convert::EmittedFile {
                    path: RelPath::new(format!("f{i}.md")).unwrap(),
                    bytes: b.to_vec().into(),
                    mode: FileMode::Regular,
                    kind: FileKind::Core,
                    sources: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn plan_each_distinct_byte_string_of_every_emission_is_hashed_once() {
        // Same length and ends, other middle; short; empty; repeated across emissions.
        let a = emission(&[b"head-AAAA-middle-one-tail", b"head-AAAA-middle-two-tail", b"x", b"", b"x"]);
        let b = emission(&[b"head-AAAA-middle-two-tail", b"", b"y", b"head-AAAA-middle-one-tail"]);
        let (unique, slots) = distinct(&[&a, &b]);
        assert_eq!(unique.len(), 5, "digests computed: one per distinct byte string");
        assert_eq!(slots, vec![vec![0, 1, 2, 3, 2], vec![1, 3, 4, 0]]);
        let d = digests(&[&a, &b], &Digests::default());
        for (e, de) in [(&a, &d[0]), (&b, &d[1])] {
            for (f, sha) in e.files.iter().zip(de) {
                assert_eq!(*sha, fsx::sha256(&f.bytes));
            }
        }
    }

    /// A dry run reports its plans and drops their bytes: what is reported does not change.
    #[test]
    fn a_released_plan_holds_no_bytes_and_reports_the_same() {
        let rts = crate::pipeline::load_runtimes(&crate::pipeline::Sources::default()).unwrap();
        let cap = &rts.iter().find(|r| r.capability.id == "claude").unwrap().capability;
        let home = tempfile::tempdir().unwrap();
        let mut plan = build(emission(&[b"one", b"two"]), cap, home.path(), false, false).unwrap();
        assert!(plan.ops.iter().all(|o| o.data.is_some()), "an install plan carries its bytes");
        let before = (plan.summary(), serde_json::to_value(&plan).unwrap());
        plan.release_bytes();
        assert!(plan.ops.iter().all(|o| o.data.is_none() && o.old_data.is_none()));
        assert!(plan.manifest.files.is_empty() && plan.previous.is_none());
        assert_eq!((plan.summary(), serde_json::to_value(&plan).unwrap()), before);
    }
}
