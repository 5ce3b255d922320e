//! The survey of a target: what is there, read once, so that every operation decides from the
//! same facts. Install and upgrade, uninstall, verify, status, diff and the no-change fast path
//! each compute their plan from a [`Survey`]; none reads the target on its own.
//!
//! What it reads, under the target's lock when the operation writes: the recorded file manifest
//! and the install state; for each path the manifest lists or the new emission writes, what the
//! disk holds there (absent, or a file: its size and sha256, whether it is the new bytes, and
//! its stat before it was read); the settings surfaces (the runtime's, and those the state
//! records entries in), as text. Splitting a surface into msd's entries and the user's is the
//! surfaces' own rule (`apply::surfaces::upsert` / `remove`), applied by the plans.
//!
//! Each path is given one [`Class`]: msd's and unchanged, msd's and edited by the user, msd's and
//! missing, a user file at a path msd installs to, or not there yet (msd creates it); with
//! [`PathFacts::shipped`] false a recorded path is no longer shipped. A file no manifest lists
//! but whose bytes a backup of this runtime recorded as msd's file edited by the user (what an
//! uninstall keeps) is msd's and edited, not the user's own ([`record::kept_edits`]).
//!
//! The cheap form ([`Survey::by_stat`]) is the same survey when the last run's record says what
//! every path held: a stat per path instead of reading it, every path as the last run left it
//! or no survey at all (the run takes the full form).
//!
//! Cost: each emitted file is read once and compared with the new bytes; hashed only when they
//! differ (bytes copied from a file are hashed as they are read, never held). A recorded file
//! is hashed once. Bytes are kept only where a plan backs them up.

use std::collections::BTreeSet;
use std::path::Path;

use msd_core::fs::digest::Sha256;
use msd_core::fs::fsx::{self, DirCache, FileMode, StatKey};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{Capability, Scope};

use super::record::{self, Entry, FileManifest, RecordError};
use super::state::InstallState;
use super::{LifecycleError, lio, state, surfaces};
use crate::pipeline::convert::{Emission, FileKind};

/// What one path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// msd's (the manifest lists it), as msd wrote it.
    Unchanged,
    /// msd's, and its bytes are not the ones msd wrote: the user edited it (or an uninstall kept
    /// it edited: no manifest lists it, a backup does).
    Edited,
    /// msd's, and gone from the disk.
    Missing,
    /// No manifest lists it and it is there: the user's file at a path msd installs to.
    UsersAtOurPath,
    /// No manifest lists it and nothing is there: msd creates it.
    Created,
}

/// A file the new emission writes (its bytes stay with the emission).
#[derive(Debug, Clone)]
pub(crate) struct NewFile {
    /// Size.
    pub(crate) len: u64,
    /// sha256.
    pub(crate) sha256: Sha256,
    /// Mode.
    pub(crate) mode: FileMode,
    /// Kind.
    pub(crate) kind: FileKind,
}

/// What the disk holds at one path.
#[derive(Debug, Clone)]
pub(crate) enum Disk {
    /// Nothing.
    Absent,
    /// A file, read.
    File {
        /// Its size.
        len: u64,
        /// Its sha256.
        sha256: Sha256,
        /// Whether it holds the new bytes exactly.
        same_as_new: bool,
        /// Its bytes, where a plan backs them up (edited, or the user's), when read whole.
        bytes: Option<Vec<u8>>,
    },
    /// Looked at by stat only (the cheap form): as the last run left it.
    AsLeft,
}

impl Disk {
    /// The file's sha256, when it was read.
    pub(crate) fn sha256(&self) -> Option<Sha256> {
        match self {
            Disk::File { sha256, .. } => Some(*sha256),
            _ => None,
        }
    }

    /// The file's size, when it was read.
    pub(crate) fn len(&self) -> Option<u64> {
        match self {
            Disk::File { len, .. } => Some(*len),
            _ => None,
        }
    }
}

/// One path of the target.
#[derive(Debug, Clone)]
pub(crate) struct PathFacts {
    /// The path, relative to the home.
    pub(crate) path: RelPath,
    /// What the manifest recorded for it.
    pub(crate) recorded: Option<Entry>,
    /// What the new emission writes there (installs only).
    pub(crate) new: Option<NewFile>,
    /// Whether the new emission still has it (always true when there is no emission).
    pub(crate) shipped: bool,
    /// What is there.
    pub(crate) disk: Disk,
    /// Its stat, taken before it was read (kept only where the fast path's record needs it).
    pub(crate) stat: Option<StatKey>,
    /// What it is.
    pub(crate) class: Class,
}

/// A settings surface as read: its text, sha256 and display name, or why it cannot be read.
#[derive(Debug, Clone)]
pub(crate) struct SurfaceText {
    /// The file, relative to the home.
    pub(crate) file: RelPath,
    /// Its text (`None`: absent, or not UTF-8).
    pub(crate) text: Option<String>,
    /// It is there and is not UTF-8: not a settings file msd can read ([`SurfaceText::read`]).
    pub(crate) not_utf8: bool,
    /// sha256 of its bytes.
    pub(crate) sha256: Option<Sha256>,
    /// Its path, as messages name it.
    pub(crate) display: String,
}

/// Everything an operation plans from, for one target.
#[derive(Debug)]
pub(crate) struct Survey {
    /// The home.
    pub(crate) home: std::path::PathBuf,
    /// Scope.
    pub(crate) scope: Scope,
    /// The recorded file manifest.
    pub(crate) manifest: Option<FileManifest>,
    /// The install state.
    pub(crate) state: Option<InstallState>,
    /// Every path the manifest lists or the emission writes: the emission's in its order, then
    /// the recorded ones it no longer ships.
    pub(crate) files: Vec<PathFacts>,
    /// The settings surfaces read.
    pub(crate) surfaces: Vec<SurfaceText>,
}

/// What a survey reads besides the manifest and the state.
#[derive(Clone, Copy)]
pub(crate) struct Reading<'e> {
    /// The new emission and the sha256 of each of its files (installs).
    pub(crate) emission: Option<(&'e Emission, &'e [Sha256])>,
    /// Read the recorded files (uninstall, verify, and an install's no-longer-shipped ones).
    pub(crate) recorded: bool,
    /// Keep the bytes of edited recorded files (they are backed up: uninstall, upgrade).
    pub(crate) keep_edited: bool,
    /// Read the runtime's own surfaces (install, verify), not only those the state records.
    pub(crate) runtime_surfaces: bool,
    /// `--allow-symlinks`.
    pub(crate) allow_symlinks: bool,
    /// What the survey learns of the home's directories (a missing one is looked at once, not
    /// once per file under it): the caller's, for the transaction that follows to go on from.
    pub(crate) dirs: &'e DirCache,
}

/// Errors of the survey.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SurveyError {
    /// Reading a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The manifest is unreadable.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A path passes through a symlink.
    #[error(transparent)]
    Confine(#[from] fsx::ConfineError),
    /// The state, or a settings surface.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
}

impl Survey {
    /// Reads `cap`'s target at `home` in `scope`.
    pub(crate) fn read(home: &Path, cap: &Capability, scope: Scope, how: Reading<'_>) -> Result<Survey, SurveyError> {
        let manifest = FileManifest::read(home, cap, scope)?;
        let state = InstallState::read(home, cap, scope).map_err(LifecycleError::from)?;
        let mut files = Vec::new();
        let mut emitted = BTreeSet::new();
        if let Some((emission, digests)) = how.emission {
            debug_assert_eq!(digests.len(), emission.files.len());
            files.reserve(emission.files.len());
            for (f, sha) in emission.files.iter().zip(digests) {
                emitted.insert(&f.path);
                let recorded = manifest.as_ref().and_then(|m| m.get(&f.path)).cloned();
                let new = NewFile { len: f.bytes.len() as u64, sha256: *sha, mode: f.mode, kind: f.kind };
                let dest = how.dirs.confined(home, &f.path, how.allow_symlinks)?;
                let stat = how.dirs.stat_key(&dest)?;
                refuse_special(&dest, stat.as_ref())?;
                let disk = read_against_new(how.dirs, &dest, &f.bytes, &new, recorded.as_ref())?;
                let class = classify(recorded.as_ref(), &disk);
                files.push(PathFacts {
                    path: f.path.clone(),
                    recorded,
                    new: Some(new),
                    shipped: true,
                    disk,
                    stat,
                    class,
                });
            }
        }
        if how.recorded
            && let Some(m) = &manifest
        {
            for e in m.files.iter().filter(|e| !emitted.contains(&e.path)) {
                let dest = how.dirs.confined(home, &e.path, how.allow_symlinks)?;
                refuse_special(&dest, how.dirs.stat_key(&dest)?.as_ref())?;
                let disk = read_recorded(how.dirs, &dest, e, how.keep_edited)?;
                let class = classify(Some(e), &disk);
                files.push(PathFacts {
                    path: e.path.clone(),
                    recorded: Some(e.clone()),
                    new: None,
                    shipped: how.emission.is_none(),
                    disk,
                    stat: None,
                    class,
                });
            }
        }
        // A file at one of our paths that no manifest lists: msd's, edited, when a backup of
        // an uninstall says so (read only when there is one).
        if files.iter().any(|f| f.class == Class::UsersAtOurPath) {
            let kept = record::kept_edits(home, &cap.id);
            for f in files.iter_mut().filter(|f| f.class == Class::UsersAtOurPath) {
                if f.disk.sha256().is_some_and(|d| kept.get(&f.path).is_some_and(|shas| shas.contains(&d))) {
                    f.class = Class::Edited;
                }
            }
        }
        let mut names: Vec<RelPath> = Vec::new();
        if how.runtime_surfaces {
            names.extend(msd_core::manifest::surfaces::for_scope(&cap.settings, scope).map(|s| s.file.clone()));
        }
        for file in state.iter().flat_map(|s| s.settings.keys()) {
            if !names.contains(file) {
                names.push(file.clone());
            }
        }
        let surfaces =
            names.into_iter().map(|f| read_surface(home, f, how.allow_symlinks)).collect::<Result<_, _>>()?;
        Ok(Survey { home: home.to_path_buf(), scope, manifest, state, files, surfaces })
    }

    /// The cheap form, for a target whose last run left `files` (each path with the stat it had
    /// after that run) and a manifest with stat `manifest_stat`: `None` as soon as one stat
    /// differs (the run then takes the full survey). Settings surfaces and the state are read
    /// as the full form reads them (they are small, and runtimes edit their settings).
    pub(crate) fn by_stat(
        home: &Path,
        cap: &Capability,
        scope: Scope,
        manifest_stat: StatKey,
        files: impl Iterator<Item = (Entry, FileKind, StatKey)>,
        allow_symlinks: bool,
    ) -> Option<Survey> {
        let state = InstallState::read(home, cap, scope).ok()?;
        let manifest_path = record::manifest_rel(cap, scope);
        let dirs = DirCache::new();
        if dirs.confined_stat(home, &manifest_path, allow_symlinks).ok()? != Some(manifest_stat) {
            return None;
        }
        let mut out = Vec::new();
        for (e, kind, stat) in files {
            if dirs.confined_stat(home, &e.path, allow_symlinks).ok()? != Some(stat) {
                return None;
            }
            let new = NewFile { len: e.bytes, sha256: e.sha256, mode: e.mode, kind };
            out.push(PathFacts {
                path: e.path.clone(),
                recorded: Some(e),
                new: Some(new),
                shipped: true,
                disk: Disk::AsLeft,
                stat: Some(stat),
                class: Class::Unchanged,
            });
        }
        let entries = out.iter().filter_map(|f| f.recorded.clone()).collect();
        let manifest = Some(FileManifest::new(cap.id.clone(), scope, entries));
        let mut names: Vec<RelPath> =
            msd_core::manifest::surfaces::for_scope(&cap.settings, scope).map(|s| s.file.clone()).collect();
        for file in state.iter().flat_map(|s| s.settings.keys()) {
            if !names.contains(file) {
                names.push(file.clone());
            }
        }
        let surfaces =
            names.into_iter().map(|f| read_surface(home, f, allow_symlinks)).collect::<Result<_, _>>().ok()?;
        Some(Survey { home: home.to_path_buf(), scope, manifest, state, files: out, surfaces })
    }

    /// The surface `file` as read.
    pub(crate) fn surface(&self, file: &RelPath) -> &SurfaceText {
        self.surfaces.iter().find(|s| &s.file == file).expect("every surface a plan edits was surveyed")
    }

    /// Whether a file msd wrote is on record here (a manifest or a state).
    pub(crate) fn installed(&self) -> bool {
        self.manifest.is_some() || self.state.is_some()
    }

    /// The state's and the manifest's paths (msd's metadata, never the user's).
    pub(crate) fn metadata(cap: &Capability, scope: Scope) -> [RelPath; 2] {
        [record::manifest_rel(cap, scope), state::state_rel(cap, scope)]
    }
}

/// Refuses a FIFO, a socket or a device where msd-install reads a file (opening a FIFO waits
/// for a writer forever), from the `lstat` already taken (`stat`): no extra call for a regular
/// file or a directory (whose read fails with its own message); a symlink (`--allow-symlinks`)
/// is followed once to see what it names.
fn refuse_special(dest: &Path, stat: Option<&StatKey>) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        const S_IFMT: i64 = 0o170_000;
        const S_IFREG: i64 = 0o100_000;
        const S_IFDIR: i64 = 0o040_000;
        const S_IFLNK: i64 = 0o120_000;
        let Some(stat) = stat else { return Ok(()) };
        let kind = stat.0[7] & S_IFMT;
        let what = match kind {
            S_IFREG | S_IFDIR => return Ok(()),
            S_IFLNK => match fsx::file_kind(dest) {
                k if k == "a regular file" || k == "a directory" || k == "missing" => return Ok(()),
                k => k,
            },
            _ => fsx::file_kind(dest),
        };
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} is {what}, where msd-install manages a file: it was not opened (reading it could wait forever); move it aside and run again",
                dest.display()
            ),
        ))
    }
    #[cfg(not(unix))]
    {
        let _ = (dest, stat);
        Ok(())
    }
}

/// The files no manifest lists, found where msd installs: [`Survey::unlisted`].
#[derive(Debug, Default)]
pub(crate) struct Unlisted {
    /// Inside a directory msd owns (the core dir, a `skills/msd-help/` the manifest lists files
    /// of): not msd's, where only msd's should be (drift).
    pub(crate) in_ours: Vec<RelPath>,
    /// The user's own files at msd-like names (`skills/msd-mine/`, `agents/msd-own.md`) that no
    /// manifest lists: never msd's, never touched.
    pub(crate) users_own: Vec<RelPath>,
}

impl Survey {
    /// The files at the places msd installs to (the core dir, and each artifact directory's
    /// entries with msd's prefix) that no manifest lists, the manifest and state aside: in a
    /// directory msd owns, or the user's own. Lists directories (no file is read).
    pub(crate) fn unlisted(&self, cap: &Capability) -> Result<Unlisted, LifecycleError> {
        let home = &self.home;
        let listed: BTreeSet<&str> = self.manifest.iter().flat_map(|m| &m.files).map(|e| e.path.as_str()).collect();
        let ours = Survey::metadata(cap, self.scope);
        // Each area with whether msd owns it: the core dir does; an entry at an artifact's prefix
        // does when the manifest lists it or files under it.
        let owned =
            |rel: &str| listed.iter().any(|l| *l == rel || l.strip_prefix(rel).is_some_and(|r| r.starts_with('/')));
        let mut areas: Vec<(RelPath, bool)> = vec![(cap.core_dir(self.scope).clone(), true)];
        for spec in cap.layout(self.scope) {
            let dir = home.join(spec.dest.as_str());
            let Ok(entries) = fsx::list_dir(&dir) else { continue };
            for entry in entries {
                let name = entry.name;
                if name.starts_with(&spec.prefix)
                    && let Ok(rel) = RelPath::new(format!("{}/{name}", spec.dest))
                {
                    let own = owned(rel.as_str());
                    areas.push((rel, own));
                }
            }
        }
        let mut out = Unlisted::default();
        for (area, own) in areas {
            let dir = home.join(area.as_str());
            let files = if fsx::is_dir(&dir) {
                fsx::list_files(&dir).map_err(lio(&dir))?.into_iter().map(|f| format!("{area}/{f}")).collect()
            } else if fsx::is_file(&dir) {
                vec![area.to_string()]
            } else {
                Vec::new()
            };
            for f in files {
                let list = if own { &mut out.in_ours } else { &mut out.users_own };
                if !listed.contains(f.as_str())
                    && !ours.iter().any(|o| o.as_str() == f)
                    && let Ok(rel) = RelPath::new(f)
                    && !list.contains(&rel)
                {
                    list.push(rel);
                }
            }
        }
        out.in_ours.sort();
        out.users_own.sort();
        Ok(out)
    }
}

/// The class of a path from what was recorded and what is there.
fn classify(recorded: Option<&Entry>, disk: &Disk) -> Class {
    match (recorded, disk) {
        (_, Disk::AsLeft) => Class::Unchanged,
        (Some(_), Disk::Absent) => Class::Missing,
        (Some(r), Disk::File { sha256, .. }) if *sha256 == r.sha256 => Class::Unchanged,
        (Some(_), Disk::File { .. }) => Class::Edited,
        (None, Disk::Absent) => Class::Created,
        (None, Disk::File { .. }) => Class::UsersAtOurPath,
    }
}

/// Reads the file at `dest` against the new bytes: equal ones are not hashed; bytes copied from
/// a file (the helper) are compared by hash, the disk's read in blocks. The disk's bytes are
/// kept when they would be backed up (they differ from the new ones and from what was recorded).
fn read_against_new(
    dirs: &DirCache,
    dest: &Path,
    bytes: &crate::pipeline::convert::Bytes,
    new: &NewFile,
    recorded: Option<&Entry>,
) -> Result<Disk, SurveyError> {
    let backed_up = |sha: &Sha256| recorded.is_none_or(|r| r.sha256 != *sha);
    if bytes.file().is_some() {
        return Ok(match dirs.sha256_of_file_if_exists(dest)? {
            None => Disk::Absent,
            Some((sha256, len)) => {
                let same_as_new = len == new.len && sha256 == new.sha256;
                // Read again, whole, only for a backup (the helper edited by hand: rare).
                let bytes = if !same_as_new && backed_up(&sha256) { dirs.read_if_exists(dest)? } else { None };
                Disk::File { len, sha256, same_as_new, bytes }
            }
        });
    }
    let Some(disk) = dirs.read_if_exists(dest)? else { return Ok(Disk::Absent) };
    let same_as_new = disk[..] == bytes[..];
    let sha256 = if same_as_new { new.sha256 } else { fsx::sha256(&disk) };
    let len = disk.len() as u64;
    let bytes = (!same_as_new && backed_up(&sha256)).then_some(disk);
    Ok(Disk::File { len, sha256, same_as_new, bytes })
}

/// Reads a recorded file the emission does not write (or every recorded file, when there is no
/// emission): hashed; its bytes kept when it was edited and `keep_edited`.
fn read_recorded(dirs: &DirCache, dest: &Path, e: &Entry, keep_edited: bool) -> Result<Disk, SurveyError> {
    if !keep_edited {
        return Ok(match dirs.sha256_of_file_if_exists(dest)? {
            None => Disk::Absent,
            Some((sha256, len)) => Disk::File { len, sha256, same_as_new: false, bytes: None },
        });
    }
    let Some(disk) = dirs.read_if_exists(dest)? else { return Ok(Disk::Absent) };
    let sha256 = fsx::sha256(&disk);
    let len = disk.len() as u64;
    let bytes = (sha256 != e.sha256).then_some(disk);
    Ok(Disk::File { len, sha256, same_as_new: false, bytes })
}

/// Reads a settings surface: its text, sha256 and display name (a file that is not UTF-8 is
/// kept as its error: an operation that edits it fails there, verify reports it).
pub(crate) fn read_surface(home: &Path, file: RelPath, allow_symlinks: bool) -> Result<SurfaceText, LifecycleError> {
    let dest = fsx::confined(home, &file, allow_symlinks)?;
    let display = dest.display().to_string();
    let bytes = fsx::read_if_exists(&dest).map_err(lio(&dest))?;
    let sha256 = bytes.as_deref().map(fsx::sha256);
    let (text, not_utf8) = match bytes.map(String::from_utf8) {
        None => (None, false),
        Some(Ok(t)) => (Some(t), false),
        Some(Err(_)) => (None, true),
    };
    Ok(SurfaceText { file, text, not_utf8, sha256, display })
}

impl SurfaceText {
    /// Its text for an edit: `None` when absent, an error when it cannot be read as settings.
    pub(crate) fn read(&self) -> Result<Option<&str>, surfaces::SettingsError> {
        if self.not_utf8 {
            return Err(surfaces::SettingsError {
                path: self.display.clone(),
                line: None,
                message: "not UTF-8".into(),
            });
        }
        Ok(self.text.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(sha: &[u8]) -> Entry {
        Entry { path: RelPath::new("a.md").unwrap(), bytes: 1, sha256: fsx::sha256(sha), mode: FileMode::Regular }
    }

    fn file(bytes: &[u8]) -> Disk {
        Disk::File { len: bytes.len() as u64, sha256: fsx::sha256(bytes), same_as_new: false, bytes: None }
    }

    /// Every combination of recorded and on disk has its one class.
    #[test]
    fn survey_classes_cover_recorded_and_disk() {
        let r = entry(b"ours");
        assert_eq!(classify(Some(&r), &file(b"ours")), Class::Unchanged);
        assert_eq!(classify(Some(&r), &file(b"edited")), Class::Edited);
        assert_eq!(classify(Some(&r), &Disk::Absent), Class::Missing);
        assert_eq!(classify(None, &file(b"theirs")), Class::UsersAtOurPath);
        assert_eq!(classify(None, &Disk::Absent), Class::Created);
        assert_eq!(classify(Some(&r), &Disk::AsLeft), Class::Unchanged);
    }

    /// The disk's bytes are kept exactly where a plan backs them up: they differ from the new
    /// bytes and from what was recorded (an edit, or the user's own file).
    #[test]
    fn survey_keeps_bytes_only_for_a_backup() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.md");
        let new_bytes: crate::pipeline::convert::Bytes = b"new".to_vec().into();
        let new = NewFile { len: 3, sha256: fsx::sha256(b"new"), mode: FileMode::Regular, kind: FileKind::Core };
        let kept = |disk: &[u8], recorded: Option<&Entry>| {
            fsx::write_atomic_unsynced(&dest, disk).unwrap();
            match read_against_new(&DirCache::new(), &dest, &new_bytes, &new, recorded).unwrap() {
                Disk::File { bytes, same_as_new, .. } => (bytes.is_some(), same_as_new),
                d => panic!("{d:?}"),
            }
        };
        assert_eq!(kept(b"new", None), (false, true), "the new bytes already: nothing to back up");
        assert_eq!(kept(b"old", Some(&entry(b"old"))), (false, false), "as msd wrote it: replaced, not backed up");
        assert_eq!(kept(b"edit", Some(&entry(b"old"))), (true, false), "edited: backed up");
        assert_eq!(kept(b"theirs", None), (true, false), "the user's own: backed up (with --adopt)");
        fsx::remove_file_if_exists(&dest).unwrap();
        assert!(matches!(read_against_new(&DirCache::new(), &dest, &new_bytes, &new, None).unwrap(), Disk::Absent));
    }
}
