//! The user's project as msd_run reads it: `.planning/` (ROADMAP.md phases, phase directories,
//! `config.json`) and whether it holds source code. Reads only, all through [`msd_core::fs::fsx`].
//!
//! Input: the project root (msd_run's current directory). Output: plain values the init query
//! turns into facts and paths.
//!
//! Rules (CONTENT-CONVENTIONS sections 5 and 6, the ROADMAP template, the phase-numbering
//! reference):
//! - A phase exists when ROADMAP.md has a `### Phase <N>: <Name>` heading (any level 2-6,
//!   outside fences); a trailing ` (INSERTED)` is not part of the name. Its block runs to the
//!   next heading of the same or a higher level; `**Mode:** mvp` in it marks an MVP phase.
//! - A phase directory is `.planning/phases/<NN>[-<slug>]`, matched by number (`3`, `03` and
//!   `3.0` differ only in the last: decimals are kept); the slug is the name in lower case, ASCII
//!   letters and digits joined by single hyphens, at most 40 characters.
//! - Source files are files with a programming-language extension ([`SOURCE_EXTENSIONS`]) anywhere
//!   under the root outside hidden directories and the dependency and build directories of
//!   [`SKIPPED_DIRS`]; the walk stops at the first one.
//!
//! The project is untrusted: msd_run runs in whatever repository the user opened, and what it
//! reads there goes into a model's context. So every read and write of a project file goes
//! through [`Project::confine`]: a path that leads out of the project through a symlink (git
//! stores symlinks: `.planning/config.json -> ~/.docker/config.json`) is refused with the link
//! and its target named (exit 4); a link that stays inside is followed. And files are read with
//! [`fsx::read_regular_if_exists`]: a FIFO or a device is refused at once instead of hanging.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use msd_core::fs::fsx;
use msd_core::installed::invocation::PhaseNumber;
use msd_core::markup::markers::{fence_closes, fence_opener};

/// Extensions that make a file source code.
pub(crate) const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "clj", "cpp", "cs", "cxx", "dart", "elm", "erl", "ex", "exs", "fs", "go", "h", "hpp", "hs", "java",
    "jl", "js", "jsx", "kt", "kts", "lua", "m", "mjs", "cjs", "ml", "mm", "php", "pl", "py", "r", "rb", "rs", "scala",
    "sh", "sql", "svelte", "swift", "ts", "tsx", "vue", "zig",
];

/// Directories that hold dependencies or build output, never the project's own code.
pub(crate) const SKIPPED_DIRS: &[&str] =
    &["node_modules", "target", "vendor", "dist", "build", "out", "__pycache__", "venv", "bower_components"];

/// A problem with a project file, located.
#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ProjectError {
    /// The file.
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub hint: String,
}

/// The project's planning paths, relative to the root.
pub(crate) const PLANNING: &str = ".planning";

/// A phase of ROADMAP.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RoadmapPhase {
    /// Its number.
    pub number: PhaseNumber,
    /// Its name, without ` (INSERTED)`.
    pub name: String,
    /// 1-based line of the heading.
    pub line: usize,
    /// `**Mode:** mvp` in its block.
    pub mvp: bool,
}

fn heading_level(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let level = t.bytes().take_while(|&b| b == b'#').count();
    let rest = &t[level..];
    ((1..=6).contains(&level) && (rest.is_empty() || rest.starts_with([' ', '\t']))).then(|| (level, rest.trim()))
}

/// Every `Phase <N>: <Name>` heading of a roadmap, in document order.
pub(crate) fn roadmap_phases(text: &str) -> Vec<RoadmapPhase> {
    let mut out: Vec<(RoadmapPhase, usize)> = Vec::new();
    let mut fence = None;
    let mut open: Option<usize> = None;
    for (idx, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(f) = fence {
            if fence_closes(line, f) {
                fence = None;
            }
            continue;
        }
        if let Some(f) = fence_opener(line) {
            fence = Some(f);
            continue;
        }
        if let Some((level, text)) = heading_level(line) {
            if open.is_some_and(|i| level <= out[i].1) {
                open = None;
            }
            let parsed = text.strip_prefix("Phase").filter(|r| r.starts_with([' ', '\t'])).and_then(|r| {
                let (num, name) = r.trim_start().split_once(':')?;
                let number = PhaseNumber::parse(num.trim_end())?;
                let name = name.trim();
                let name = name.strip_suffix("(INSERTED)").map_or(name, str::trim_end);
                Some((number, name.to_string()))
            });
            if let Some((number, name)) = parsed {
                out.push((RoadmapPhase { number, name, line: idx + 1, mvp: false }, level));
                open = Some(out.len() - 1);
            }
            continue;
        }
        if let Some(i) = open {
            let t = line.trim();
            let t = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)).map_or(t, str::trim_start);
            if let Some(v) = t.strip_prefix("**Mode:**")
                && v.trim().eq_ignore_ascii_case("mvp")
            {
                out[i].0.mvp = true;
            }
        }
    }
    out.into_iter().map(|(p, _)| p).collect()
}

/// The phase STATE.md's `## Current Position` names (`Phase: 3 of 8 (Auth)`, `**Phase:** 3`,
/// `Phase 3 of 8`), `None` when the section or the line is absent. The first line of the section
/// that starts with `Phase` (after list and bold markers) decides.
pub(crate) fn state_phase(text: &str) -> Option<PhaseNumber> {
    let mut in_position = false;
    for raw in text.lines() {
        if let Some((level, title)) = heading_level(raw) {
            in_position = level == 2 && title.eq_ignore_ascii_case("Current Position");
            continue;
        }
        if !in_position {
            continue;
        }
        let t = raw.trim();
        let t = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m)).unwrap_or(t).trim_start_matches('*');
        let Some(rest) = t.strip_prefix("Phase") else { continue };
        let rest = rest.trim_start_matches([':', '*', ' ', '\t']);
        let token: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        return PhaseNumber::parse(token.trim_end_matches('.'));
    }
    None
}

/// The directory slug of a phase name.
pub(crate) fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let mut s: String = s.trim_end_matches('-').chars().take(40).collect();
    while s.ends_with('-') {
        s.pop();
    }
    s
}

/// A directory under `.planning/phases/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PhaseDir {
    /// Its phase number.
    pub number: PhaseNumber,
    /// The directory name.
    pub name: String,
}

/// The project root and what it reads.
#[derive(Debug, Clone)]
pub(crate) struct Project {
    /// The root (msd_run's current directory).
    pub root: PathBuf,
}

fn io_err(path: &Path, e: std::io::Error) -> ProjectError {
    ProjectError {
        path: path.display().to_string(),
        line: None,
        message: e.to_string(),
        hint: "check that the file is readable".into(),
    }
}

impl Project {
    /// The project the current directory belongs to: the nearest ancestor (itself included)
    /// holding `.planning/`, as the CLI finds it; `None` outside any project.
    pub(crate) fn find() -> Result<Option<Project>, std::io::Error> {
        let cwd = std::env::current_dir()?;
        Ok(cwd.ancestors().find(|d| fsx::is_dir(&d.join(PLANNING))).map(|d| Project { root: d.to_path_buf() }))
    }

    /// [`Project::find`], else the current directory (where a new project would start).
    pub(crate) fn find_or_cwd() -> Result<Project, std::io::Error> {
        match Project::find()? {
            Some(p) => Ok(p),
            None => Ok(Project { root: std::env::current_dir()? }),
        }
    }

    /// The absolute path of a project-relative path.
    pub(crate) fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Whether a project-relative path exists.
    pub(crate) fn exists(&self, rel: &str) -> bool {
        fsx::exists(&self.abs(rel))
    }

    /// Reads a project-relative UTF-8 file, `None` when absent; a link out of the project or a
    /// file that is not a regular one is an error ([`Project::read_bounded`]).
    pub(crate) fn read(&self, rel: &str) -> Result<Option<String>, ProjectError> {
        Ok(self.read_bounded(rel, u64::MAX)?.map(|(text, _)| text))
    }

    /// Reads at most `max` bytes of a project-relative UTF-8 file, with the file's whole length;
    /// `None` when absent (a character the cut splits is left out). Refused: a path
    /// that leads out of the project through a symlink ([`Project::confine`]), and anything
    /// but a regular file (a FIFO or a device would hang a plain read).
    pub(crate) fn read_bounded(&self, rel: &str, max: u64) -> Result<Option<(String, u64)>, ProjectError> {
        let Some(read) = self.read_bytes(rel, max)? else { return Ok(None) };
        let cut = read.cut();
        let len = read.len;
        match String::from_utf8(read.bytes) {
            Ok(text) => Ok(Some((text, len))),
            Err(e) if cut && e.utf8_error().error_len().is_none() => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                Ok(Some((String::from_utf8(bytes).expect("valid up to here"), len)))
            }
            Err(_) => Err(ProjectError {
                path: rel.to_string(),
                line: None,
                message: "not valid UTF-8".into(),
                hint: "save the file as UTF-8".into(),
            }),
        }
    }

    /// Reads at most `max` bytes of a project-relative file ([`Project::read_bounded`], bytes).
    pub(crate) fn read_bytes(&self, rel: &str, max: u64) -> Result<Option<fsx::Bounded>, ProjectError> {
        let path = self.confine(rel)?;
        match fsx::read_regular_if_exists(&path, max) {
            Ok(read) => Ok(read),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Err(ProjectError {
                path: rel.to_string(),
                line: None,
                message: format!(
                    "is {}, not a regular file; msd_run opens only regular files of a project",
                    fsx::file_kind(&path)
                ),
                hint: format!("replace {rel} with a regular file (or remove it)"),
            }),
            Err(e) => Err(io_err(&path, e)),
        }
    }

    /// The absolute path of a project-relative path, checked not to lead out of the project:
    /// the file it names (or, when absent, its nearest existing directory), symlinks resolved,
    /// lies under the project's own resolved root. A link that stays inside is fine. Refused
    /// with the link and its target named (exit 4): msd_run neither reads nor writes there.
    pub(crate) fn confine(&self, rel: &str) -> Result<PathBuf, ProjectError> {
        let abs = self.abs(rel);
        // Plain names with no symlink among them below the root (one `lstat` each; a missing one
        // is no link): the path resolves to the resolved root joined with them, inside it,
        // whatever links the root's own path holds. Resolving both paths took a `readlink` per
        // component of each, on every hook that reads STATE.md.
        if self.no_link_below_root(rel) {
            return Ok(abs);
        }
        let root = fsx::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let mut probe = abs.as_path();
        loop {
            match fsx::canonicalize(probe) {
                Ok(real) if real.starts_with(&root) => return Ok(abs),
                Ok(real) => return Err(self.escape(rel, &root, &real)),
                // Absent (or a dangling link, which nothing can read, and a write through it
                // fails): the directory it would be made in decides.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => match probe.parent() {
                    Some(parent) if parent.starts_with(&self.root) => probe = parent,
                    _ => return Ok(abs),
                },
                Err(e) => return Err(io_err(probe, e)),
            }
        }
    }

    /// Whether `rel` is made of plain names (no `..`, not absolute) and none of the paths it
    /// goes through under the root is a symlink (`lstat`: a missing one is none).
    fn no_link_below_root(&self, rel: &str) -> bool {
        let mut at = self.root.clone();
        for part in Path::new(rel).components() {
            let std::path::Component::Normal(name) = part else { return false };
            at.push(name);
            if fsx::is_symlink(&at) {
                return false;
            }
        }
        true
    }

    /// The error for `rel`, which resolves to `real` outside `root`: names the first symlink on
    /// the way that leads out, and where it points.
    fn escape(&self, rel: &str, root: &Path, real: &Path) -> ProjectError {
        let mut at = self.root.clone();
        let mut link = None;
        for part in Path::new(rel).components() {
            at.push(part);
            if fsx::is_symlink(&at) && fsx::canonicalize(&at).is_ok_and(|r| !r.starts_with(root)) {
                link = Some(at.clone());
                break;
            }
        }
        let message = match &link {
            Some(l) => {
                let shown = l.strip_prefix(&self.root).unwrap_or(l).display().to_string();
                let target = fsx::read_link(l).map_or_else(|_| real.display().to_string(), |t| t.display().to_string());
                format!(
                    "{shown} is a symlink to {target}, outside the project {}; msd_run follows no link out of the project",
                    root.display()
                )
            }
            None => format!(
                "resolves to {}, outside the project {}; msd_run follows no link out of the project",
                real.display(),
                root.display()
            ),
        };
        ProjectError {
            path: rel.to_string(),
            line: None,
            message,
            hint: "replace the link with the file itself (or a link to a file inside the project); nothing was read or written through it".into(),
        }
    }

    /// `.planning/config.json` as a JSON object, `None` when absent.
    pub(crate) fn config(&self) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ProjectError> {
        let rel = format!("{PLANNING}/config.json");
        let Some(text) = self.read(&rel)? else { return Ok(None) };
        if let Some(d) = msd_core::fs::json::first_duplicate_key(&text) {
            return Err(ProjectError {
                path: rel,
                line: Some(d.line),
                message: format!(
                    "key `{}` occurs twice{} (only one of them would be read)",
                    d.key,
                    if d.within.is_empty() { String::new() } else { format!(" in `{}`", d.within) }
                ),
                hint: "keep one of the two and run again; nothing was written".into(),
            });
        }
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| ProjectError {
            path: rel.clone(),
            line: Some(e.line()),
            message: format!("not valid JSON: {e}"),
            hint: "fix the file by hand or with `msd_run config-set`; `{cmd:health}` finds what is wrong".into(),
        })?;
        match value {
            serde_json::Value::Object(m) => Ok(Some(m)),
            _ => Err(ProjectError {
                path: rel,
                line: Some(1),
                message: "config.json is not a JSON object".into(),
                hint: "the file holds one object of settings: {\"mode\": \"interactive\", ...}".into(),
            }),
        }
    }

    /// Every phase directory, in numeric order.
    pub(crate) fn phase_dirs(&self) -> Result<Vec<PhaseDir>, ProjectError> {
        let dir = self.confine(&format!("{PLANNING}/phases"))?;
        let mut out: Vec<PhaseDir> = fsx::list_dir(&dir)
            .map_err(|e| io_err(&dir, e))?
            .into_iter()
            .filter(|e| e.is_dir)
            .filter_map(|e| {
                let prefix = e.name.split_once('-').map_or(e.name.as_str(), |(p, _)| p);
                PhaseNumber::parse(prefix).map(|number| PhaseDir { number, name: e.name })
            })
            .collect();
        out.sort_by(|a, b| a.number.numeric_cmp(&b.number).then_with(|| a.name.cmp(&b.name)));
        Ok(out)
    }

    /// File names in a project-relative directory ending with `suffix`, sorted.
    pub(crate) fn files_ending(&self, rel_dir: &str, suffix: &str) -> Result<Vec<String>, ProjectError> {
        let dir = self.confine(rel_dir)?;
        Ok(fsx::list_dir(&dir)
            .map_err(|e| io_err(&dir, e))?
            .into_iter()
            .filter(|e| e.is_file && e.name.ends_with(suffix))
            .map(|e| e.name)
            .collect())
    }

    /// Whether the project holds source code (see the module header).
    pub(crate) fn has_source_files(&self) -> Result<bool, ProjectError> {
        let mut queue: VecDeque<PathBuf> = VecDeque::from([self.root.clone()]);
        while let Some(dir) = queue.pop_front() {
            for e in fsx::list_dir(&dir).map_err(|e| io_err(&dir, e))? {
                if e.is_dir {
                    if !e.name.starts_with('.') && !SKIPPED_DIRS.contains(&e.name.as_str()) {
                        queue.push_back(dir.join(&e.name));
                    }
                } else if e.is_file
                    && let Some((_, ext)) = e.name.rsplit_once('.')
                    && SOURCE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
                {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_roadmap_phases_names_and_modes() {
        let text = "# Roadmap\n## Phases\n- [ ] **Phase 1: Setup** - x\n## Phase Details\n### Phase 1: Setup\n**Goal:** g\n**Mode:** mvp\n### Phase 03: Auth Flow\n- **Mode:** MVP\n### Phase 3.1: Auth gap closure (INSERTED)\n**Goal:** gaps\n## Progress\n**Mode:** mvp\n```\n### Phase 9: Fenced\n```\n#### Phase 4 Not a heading\n";
        let p = roadmap_phases(text);
        let got: Vec<(String, &str, bool)> = p.iter().map(|x| (x.number.number(), x.name.as_str(), x.mvp)).collect();
        assert_eq!(
            got,
            [
                ("1".to_string(), "Setup", true),
                ("3".to_string(), "Auth Flow", true),
                ("3.1".to_string(), "Auth gap closure", false),
            ]
        );
        assert_eq!(p[0].line, 5);
    }

    #[test]
    fn project_state_phase_reads_the_current_position() {
        let state = |pos: &str| format!("# State\n\n## Current Position\n\n{pos}\n\n## Session Continuity\n");
        let n = |t: &str| state_phase(t).map(|p| p.number());
        assert_eq!(n(&state("Phase: 3 of 8 (Auth Flow)\nPlan: 1 of 2")).as_deref(), Some("3"));
        assert_eq!(n(&state("- **Phase:** 04.1 of 9")).as_deref(), Some("4.1"));
        assert_eq!(n(&state("Phase 3.")).as_deref(), Some("3"));
        assert_eq!(n(&state("Plan: 1 of 2")), None, "no phase line");
        assert_eq!(n("# State\n\nPhase: 3\n"), None, "outside Current Position");
    }

    #[test]
    fn project_slugs() {
        assert_eq!(slug("Session Expiry Fix!"), "session-expiry-fix");
        assert_eq!(slug("  Auth -- Flow  "), "auth-flow");
        assert_eq!(slug("Café au lait"), "caf-au-lait");
        assert_eq!(slug(&"word ".repeat(20)).len(), 39);
        assert!(!slug(&"abcdefghi ".repeat(5)).ends_with('-'));
    }
}
