//! Stage 1, `load`: read the content tree and the runtime manifests into memory, once.
//!
//! Input: the embedded `content/` and `runtimes/` trees, or `--content DIR` / `--runtimes DIR`.
//! Output: a [`Tree`] of bytes per source, then a parsed [`Content`] (commands, agents, core
//! files, each composed whole through [`msd_core::compose::document`]: markers parsed and stripped,
//! explicit sections kept for the emission fit) and the list of [`Capability`] manifests.
//!
//! Invariants: a file is read once and parsed once, then shared by every runtime. Reading a
//! directory refuses symlinks that leave it. Every error names the file (and line where there is
//! one) and says what to do; nothing is written by this stage.

use msd_core::fs::bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{self, Capability, ManifestError, ManifestErrors};
use msd_core::manifest::caps::Tiers;
use msd_core::markup::frontmatter::{self, Frontmatter, FrontmatterError};
use msd_core::markup::markers::{MarkerError, Section};

static EMBEDDED_CONTENT: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/content");
static EMBEDDED_RUNTIMES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/runtimes");

/// A tree of files held in memory.
#[derive(Debug, Clone)]
pub struct Tree {
    /// How paths are shown in messages: `content` for the embedded tree, the directory otherwise.
    pub origin: String,
    /// Every file, by relative path.
    pub files: BTreeMap<RelPath, Bytes>,
}

/// Errors of the load stage.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// An io error on a named path.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A symlink that leaves the tree.
    #[error("{path}: symlink points outside {root}")]
    SymlinkEscape {
        /// The link.
        path: String,
        /// The tree root.
        root: String,
    },
    /// A file name that is not a safe relative path.
    #[error("{path}: unsupported file name: {reason}")]
    BadName {
        /// The path.
        path: String,
        /// Why.
        reason: String,
    },
    /// Something in a content tree that is neither a regular file nor a directory (a FIFO, a
    /// socket, a device): reading it could hang the install.
    #[error("{path}: not a regular file ({what}); content holds only files and directories")]
    NotRegular {
        /// The path.
        path: String,
        /// What it is.
        what: String,
    },
    /// A symlink that resolves to itself through other links.
    #[error("{path}: symlink loop ({source})")]
    SymlinkLoop {
        /// The link.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A manifest problem.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// Every problem of one manifest beyond its schema.
    #[error(transparent)]
    Manifests(#[from] ManifestErrors),
    /// A content problem.
    #[error(transparent)]
    Content(#[from] ContentError),
}

impl LoadError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            LoadError::Io { .. } => Some("check that the directory exists and is readable".into()),
            LoadError::SymlinkEscape { .. } => Some(
                "content and manifests must live inside their directory; copy the file in instead of linking".into(),
            ),
            LoadError::BadName { .. } => Some("rename the file: UTF-8, no backslashes".into()),
            LoadError::NotRegular { .. } => {
                Some("remove it from the content tree (or replace it with the file it stands for)".into())
            }
            LoadError::SymlinkLoop { .. } => Some("point the link at the file it should name, or remove it".into()),
            LoadError::Manifest(m) => Some(m.hint.clone()),
            LoadError::Manifests(m) => Some(m.hint()),
            LoadError::Content(c) => Some(c.hint.clone()),
        }
    }
}

/// A content problem, located.
#[derive(Debug, thiserror::Error)]
#[error("{path}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ContentError {
    /// The file (display form).
    pub path: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub hint: String,
}

impl ContentError {
    fn new(path: String, line: Option<usize>, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ContentError { path, line, message: message.into(), hint: hint.into() }
    }
}

impl From<MarkerError> for ContentError {
    fn from(e: MarkerError) -> Self {
        let hint = e.hint().to_string();
        ContentError { path: e.path, line: Some(e.line), message: format!("{}: {}", e.reason, e.detail), hint }
    }
}

impl From<FrontmatterError> for ContentError {
    fn from(e: FrontmatterError) -> Self {
        ContentError {
            path: e.path,
            line: Some(e.line),
            message: e.message,
            hint: "frontmatter is a YAML mapping between two `---` lines".into(),
        }
    }
}

impl Tree {
    /// The embedded content tree.
    pub fn embedded_content() -> Tree {
        Tree::from_embedded("content", &EMBEDDED_CONTENT)
    }

    /// The embedded runtimes tree.
    pub fn embedded_runtimes() -> Tree {
        Tree::from_embedded("runtimes", &EMBEDDED_RUNTIMES)
    }

    fn from_embedded(origin: &str, dir: &'static Dir<'static>) -> Tree {
        let mut files = BTreeMap::new();
        fn walk(d: &Dir<'static>, files: &mut BTreeMap<RelPath, Bytes>) {
            for f in d.files() {
                let p = f.path().to_str().expect("embedded paths are UTF-8").replace('\\', "/");
                files.insert(RelPath::new(p).expect("embedded paths are relative"), Bytes::from(f.contents()));
            }
            for sub in d.dirs() {
                walk(sub, files);
            }
        }
        walk(dir, &mut files);
        Tree { origin: origin.to_string(), files }
    }

    /// Reads every file under `root`.
    pub fn from_dir(root: &Path) -> Result<Tree, LoadError> {
        let io = |p: &Path, e: std::io::Error| LoadError::Io { path: p.display().to_string(), source: e };
        let canon_root = fsx::canonicalize(root).map_err(|e| io(root, e))?;
        if !canon_root.is_dir() {
            return Err(io(root, std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory")));
        }
        let mut files = BTreeMap::new();
        let mut stack: Vec<PathBuf> = vec![canon_root.clone()];
        while let Some(dir) = stack.pop() {
            let mut entries = fsx::list_existing_dir(&dir).map_err(|e| io(&dir, e))?;
            entries.sort_by(|a, b| a.os_name.cmp(&b.os_name));
            for entry in entries {
                let path = dir.join(&entry.os_name);
                let real = if entry.is_symlink {
                    let real = fsx::canonicalize(&path).map_err(|e| {
                        if e.raw_os_error() == Some(40) || e.to_string().contains("symbolic links") {
                            LoadError::SymlinkLoop { path: path.display().to_string(), source: e }
                        } else {
                            io(&path, e)
                        }
                    })?;
                    if !real.starts_with(&canon_root) {
                        return Err(LoadError::SymlinkEscape {
                            path: path.display().to_string(),
                            root: root.display().to_string(),
                        });
                    }
                    real
                } else {
                    path.clone()
                };
                // What the listing said of an entry that is no symlink (no second look at each
                // file: two `statx` of the 428 files of the reference's content, on the path
                // before any runtime can be emitted); a symlink's target is looked at.
                let (is_dir, is_file) =
                    if entry.is_symlink { (real.is_dir(), fsx::is_file(&real)) } else { (entry.is_dir, entry.is_file) };
                if is_dir {
                    if entry.is_symlink {
                        return Err(LoadError::BadName {
                            path: path.display().to_string(),
                            reason: "symlinked directories are not followed".into(),
                        });
                    }
                    stack.push(path);
                } else if !is_file {
                    return Err(LoadError::NotRegular {
                        path: path.display().to_string(),
                        what: fsx::file_kind(&real),
                    });
                } else {
                    let rel = path.strip_prefix(&canon_root).expect("under root");
                    let rel_str = rel.to_str().ok_or_else(|| LoadError::BadName {
                        path: path.display().to_string(),
                        reason: "not UTF-8".into(),
                    })?;
                    let rel = RelPath::new(rel_str.replace(std::path::MAIN_SEPARATOR, "/"))
                        .map_err(|e| LoadError::BadName { path: path.display().to_string(), reason: e.to_string() })?;
                    let bytes = fsx::read(&real).map_err(|e| io(&path, e))?;
                    files.insert(rel, Bytes::from(bytes));
                }
            }
        }
        Ok(Tree { origin: root.display().to_string(), files })
    }

    /// The display path of `rel` in messages.
    pub fn display(&self, rel: &RelPath) -> String {
        format!("{}/{}", self.origin.trim_end_matches('/'), rel)
    }
}

/// A command or agent must begin with its frontmatter: a UTF-8 byte order mark before the
/// `---` would hide it, and runtimes read such a file as having none.
fn no_bom<'s>(disp: &str, src: &'s str) -> Result<&'s str, ContentError> {
    if src.starts_with('\u{feff}') {
        return Err(ContentError::new(
            disp.to_string(),
            Some(1),
            "the file starts with a UTF-8 byte order mark (BOM), before its frontmatter",
            "save the file as UTF-8 without a BOM",
        ));
    }
    Ok(src)
}

/// A parsed manifest with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedRuntime {
    /// Display path of the manifest file.
    pub file: String,
    /// Source path relative to the runtimes tree (`claude/capability.json`).
    pub source: RelPath,
    /// The manifest.
    pub capability: Capability,
    /// Data files beside the manifest (adapters, stub templates), by file name.
    pub data: BTreeMap<String, String>,
}

/// Parses and validates every `<id>/capability.json` of `tree`, as a set.
pub fn runtimes(tree: &Tree) -> Result<Vec<LoadedRuntime>, LoadError> {
    let mut out = Vec::new();
    let mut data: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let not_utf8 = |file: String| ManifestError {
        file,
        line: 0,
        col: 0,
        message: "not UTF-8".into(),
        hint: "save the file as UTF-8".into(),
    };
    for (rel, bytes) in &tree.files {
        let file = tree.display(rel);
        let parts: Vec<&str> = rel.as_str().split('/').collect();
        match parts.as_slice() {
            [dir, "capability.json"] => {
                let text = std::str::from_utf8(bytes).map_err(|_| not_utf8(file.clone()))?;
                let cap = capability::parse(&file, text)?;
                capability::validate(&file, text, &cap, dir)?;
                out.push(LoadedRuntime { file, source: rel.clone(), capability: cap, data: BTreeMap::new() });
            }
            [dir, name] => {
                let text = std::str::from_utf8(bytes).map_err(|_| not_utf8(file.clone()))?;
                data.entry(dir.to_string()).or_default().insert(name.to_string(), text.to_string());
            }
            ["capability.schema.json"] => {}
            _ => {
                return Err(ManifestError {
                    file,
                    line: 0,
                    col: 0,
                    message: "unexpected file in the runtimes tree".into(),
                    hint: "a runtimes tree holds `<id>/capability.json` (and data files beside it)".into(),
                }
                .into());
            }
        }
    }
    for rt in &mut out {
        rt.data = data.remove(rt.capability.id.as_str()).unwrap_or_default();
        let text = std::str::from_utf8(&tree.files[&rt.source]).unwrap_or_default();
        for spec in rt.capability.artifacts.global.iter().chain(&rt.capability.artifacts.local) {
            for name in spec.adapter.iter().chain(spec.stub.as_ref().map(|s| &s.template)) {
                if !rt.data.contains_key(name) {
                    let (line, col) = msd_core::fs::json::locate(text, &format!("\"{name}\""));
                    return Err(ManifestError {
                        file: rt.file.clone(),
                        line,
                        col,
                        message: format!("data file `{name}` does not exist beside the manifest"),
                        hint: format!("add runtimes/{}/{name}", rt.capability.id),
                    }
                    .into());
                }
            }
        }
    }
    if let Some((dir, files)) = data.into_iter().next() {
        let name = files.keys().next().cloned().unwrap_or_default();
        return Err(ManifestError {
            file: format!("{}/{dir}/{name}", tree.origin),
            line: 0,
            col: 0,
            message: "a data file with no capability.json beside it".into(),
            hint: "data files live beside the manifest that uses them".into(),
        }
        .into());
    }
    let pairs: Vec<(String, Capability)> = out.iter().map(|r| (r.file.clone(), r.capability.clone())).collect();
    capability::validate_set(&pairs)?;
    Ok(out)
}

/// A command or an agent of the content: a Markdown file with frontmatter, one type for both
/// (they are loaded, composed and converted alike; only their directory and the checks of their
/// frontmatter differ, in [`content`]).
#[derive(Debug, Clone)]
pub struct Definition {
    /// The file stem: a command's (`plan-phase`, named `msd:plan-phase` in its frontmatter) or
    /// an agent's (`msd-planner`, equal to its frontmatter `name`).
    pub stem: String,
    /// Source path in the content tree.
    pub source: RelPath,
    /// Parsed frontmatter.
    pub frontmatter: Frontmatter,
    /// The body after the frontmatter, markers stripped.
    pub body: String,
    /// The description.
    pub description: String,
    /// The body's sections when it has explicit ones (empty otherwise), for the emission fit.
    pub sections: Vec<Section>,
}

/// A slash command of the content (`commands/<stem>.md`).
pub type Command = Definition;

/// An agent of the content (`agents/<stem>.md`).
pub type Agent = Definition;

/// A file of the core tree (`msd-core/**`).
#[derive(Debug, Clone)]
pub struct CoreFile {
    /// Path relative to the core dir (`workflows/plan-phase.md`).
    pub rel: RelPath,
    /// Source path in the content tree.
    pub source: RelPath,
    /// Text with markers stripped, for UTF-8 text files.
    pub text: Option<String>,
    /// The raw bytes (used as is for non-text files; empty for a text file once
    /// [`Content::release_sources`] ran).
    pub bytes: Bytes,
    /// File mode.
    pub mode: FileMode,
    /// The text's sections when it has explicit ones (empty otherwise), for the emission fit.
    pub sections: Vec<Section>,
    /// The text as one buffer, made on first use ([`CoreFile::shared_text`]); reset with the text.
    pub shared: std::sync::OnceLock<Bytes>,
}

impl CoreFile {
    /// The text as one buffer that every runtime emitting it unchanged shares: one copy for the
    /// run, and one digest (the plan remembers a shared buffer's digest by its address).
    pub fn shared_text(&self) -> Option<Bytes> {
        let text = self.text.as_ref()?;
        Some(self.shared.get_or_init(|| Bytes::from(std::sync::Arc::<[u8]>::from(text.as_bytes()))).clone())
    }
}

/// The parsed content tree.
#[derive(Debug, Clone)]
pub struct Content {
    /// The raw tree.
    pub tree: Tree,
    /// Commands, sorted by stem.
    pub commands: Vec<Command>,
    /// Agents, sorted by name.
    pub agents: Vec<Agent>,
    /// Core files, sorted by path.
    pub core: Vec<CoreFile>,
    /// Size tiers (`tiers.json`; everything DEFAULT when absent).
    pub tiers: Tiers,
    /// Command groups for nested skill layouts (`namespaces.json`).
    pub namespaces: Option<Namespaces>,
    /// The install profiles (`profiles.json`); without it every install is the whole content.
    pub profiles: Option<Profiles>,
}

impl Content {
    /// Drops what only loading and validation read, for a run that goes on to emit: the raw
    /// tree's files and the raw bytes of every text core file (each is emitted from its composed
    /// `text`; binary files keep theirs). A loaded content tree is held for the whole run, so
    /// this is the source's size less to hold next to the emissions. The tree keeps its origin
    /// for messages.
    pub fn release_sources(&mut self) {
        self.tree.files = BTreeMap::new();
        for f in self.core.iter_mut().filter(|f| f.text.is_some()) {
            f.bytes = Bytes::from(&[][..]);
        }
    }
}

/// `content/profiles.json`: which commands an install of each profile carries.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profiles {
    /// Format version.
    pub schema_version: u32,
    /// What the file is (documentation only).
    #[serde(default)]
    pub about: String,
    /// The profile of an install that names none and has none recorded.
    pub default: String,
    /// The profiles, smallest first.
    pub profiles: Vec<Profile>,
    /// Command stem -> the commands it needs installed with it.
    #[serde(default)]
    pub requires: BTreeMap<String, Vec<String>>,
    /// What `--minimal` installs.
    pub minimal: Minimal,
}

/// One profile.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Its name (`core`).
    pub name: String,
    /// The profile whose commands it adds to.
    pub extends: Option<String>,
    /// What it is for.
    pub description: String,
    /// Its own commands.
    pub commands: Vec<String>,
}

/// `--minimal`: a profile without agents.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Minimal {
    /// The profile whose commands it installs.
    pub profile: String,
    /// Whether agents are installed.
    pub agents: bool,
}

/// `content/namespaces.json`: how commands group into router skills for nested layouts.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Namespaces {
    /// What a router tells the model to do (shown above its table).
    pub instructions: String,
    /// The groups, in order.
    pub groups: Vec<NamespaceGroup>,
}

/// One router.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceGroup {
    /// Group name (the router is `<prefix><name>`).
    pub name: String,
    /// The router skill's description.
    pub description: String,
    /// Command stems, in table order.
    pub commands: Vec<String>,
}

/// Top-level entries a content tree may hold.
const TOP_LEVEL: [&str; 8] = [
    "commands",
    "agents",
    "msd-core",
    "CONTEXT.md",
    "CONTEXT-INDEX.json",
    "tiers.json",
    "namespaces.json",
    "profiles.json",
];

fn is_stem(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn text<'a>(tree: &Tree, rel: &RelPath, bytes: &'a [u8]) -> Result<&'a str, ContentError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        ContentError::new(tree.display(rel), Some(line), "not valid UTF-8", "save the file as UTF-8")
    })
}

fn required_str(fm: &Frontmatter, key: &str, path: &str) -> Result<String, ContentError> {
    match fm.get_str(key) {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(ContentError::new(
            path.to_string(),
            Some(1),
            format!("frontmatter lacks a non-empty `{key}`"),
            format!("add `{key}: ...` to the frontmatter"),
        )),
    }
}

/// What differs between reading a command and reading an agent: their messages and how the
/// frontmatter `name` spells the file stem.
struct DefinitionRules {
    /// "a command file must be named <stem>.md".
    bad_file_name: &'static str,
    /// The noun of the messages (`command`, `agent`).
    noun: &'static str,
    /// What to write when the frontmatter is missing.
    frontmatter_hint: &'static str,
    /// What the frontmatter `name` puts before the stem (`msd:` for a command).
    name_prefix: &'static str,
}

const COMMAND: DefinitionRules = DefinitionRules {
    bad_file_name: "a command file must be named <stem>.md",
    noun: "command",
    frontmatter_hint: "start the file with `---`, `name: msd:<stem>`, `description: ...`, `---`",
    name_prefix: "msd:",
};

const AGENT: DefinitionRules = DefinitionRules {
    bad_file_name: "an agent file must be named <name>.md",
    noun: "agent",
    frontmatter_hint: "start the file with `---`, `name:`, `description:`, `tools:`, `---`",
    name_prefix: "",
};

/// Reads one command or agent file (`file` is its name in its directory): the stem, the
/// frontmatter with a `name` that matches the stem and a `description`, the composed body.
fn definition(
    rules: &DefinitionRules,
    tree: &Tree,
    rel: &RelPath,
    bytes: &[u8],
    disp: String,
    file: &str,
) -> Result<Definition, ContentError> {
    let stem = file.strip_suffix(".md").filter(|s| is_stem(s)).ok_or_else(|| {
        ContentError::new(disp.clone(), None, rules.bad_file_name, "use lowercase letters, digits and hyphens")
    })?;
    let src = no_bom(&disp, text(tree, rel, bytes)?)?;
    let (fm, body) = frontmatter::split(&disp, src)?;
    let fm = fm.ok_or_else(|| {
        ContentError::new(disp.clone(), Some(1), format!("{} has no frontmatter", rules.noun), rules.frontmatter_hint)
    })?;
    let name = required_str(&fm, "name", &disp)?;
    let expected = format!("{}{stem}", rules.name_prefix);
    if name != expected {
        return Err(ContentError::new(
            disp,
            Some(2),
            format!("{} name `{name}` does not match its file", rules.noun),
            format!("write `name: {expected}`"),
        ));
    }
    let description = required_str(&fm, "description", &disp)?;
    let (body, sections) = compose(&disp, body)?;
    Ok(Definition { stem: stem.to_string(), source: rel.clone(), frontmatter: fm, body, description, sections })
}

/// The commands, agents and core files of a content tree, as parsed.
struct Parsed {
    commands: Vec<Definition>,
    agents: Vec<Definition>,
    core: Vec<CoreFile>,
}

/// Parses `files` of `tree` in order, stopping at the first error.
fn parse_files(tree: &Tree, files: &[(&RelPath, &Bytes)]) -> Result<Parsed, ContentError> {
    let mut commands = Vec::new();
    let mut agents = Vec::new();
    let mut core = Vec::new();
    for &(rel, bytes) in files {
        let disp = tree.display(rel);
        let segs: Vec<&str> = rel.as_str().split('/').collect();
        if !TOP_LEVEL.contains(&segs[0]) {
            return Err(ContentError::new(
                disp,
                None,
                "unexpected file in the content tree",
                "a content tree holds commands/msd/*.md, agents/*.md, msd-core/**, CONTEXT.md, CONTEXT-INDEX.json, tiers.json, namespaces.json and profiles.json",
            ));
        }
        match segs.as_slice() {
            ["commands", "msd", file] => commands.push(definition(&COMMAND, tree, rel, bytes, disp, file)?),
            ["agents", file] => agents.push(definition(&AGENT, tree, rel, bytes, disp, file)?),
            ["msd-core", ..] => {
                let sub = RelPath::new(segs[1..].join("/"))
                    .map_err(|e| ContentError::new(disp.clone(), None, e.to_string(), "rename the file"))?;
                let is_text = is_text_file(rel.as_str());
                let (text, sections) = if is_text {
                    let src = text(tree, rel, bytes)?;
                    if rel.as_str().ends_with(".md") {
                        let (t, s) = compose(&disp, src)?;
                        (Some(t), s)
                    } else {
                        (Some(src.to_string()), Vec::new())
                    }
                } else {
                    (None, Vec::new())
                };
                core.push(CoreFile {
                    rel: sub,
                    source: rel.clone(),
                    text,
                    bytes: bytes.clone(),
                    mode: FileMode::Regular,
                    sections,
                    shared: std::sync::OnceLock::new(),
                });
            }
            ["CONTEXT.md"] => {
                let src = text(tree, rel, bytes)?;
                let (text, sections) = compose(&disp, src)?;
                core.push(CoreFile {
                    rel: RelPath::new("CONTEXT.md").expect("static"),
                    source: rel.clone(),
                    text: Some(text),
                    bytes: bytes.clone(),
                    mode: FileMode::Regular,
                    sections,
                    shared: std::sync::OnceLock::new(),
                });
            }
            ["CONTEXT-INDEX.json"] | ["tiers.json"] | ["namespaces.json"] | ["profiles.json"] => {}
            _ => {
                return Err(ContentError::new(
                    disp,
                    None,
                    "unexpected file in the content tree",
                    "commands live in commands/msd/<stem>.md and agents in agents/<name>.md",
                ));
            }
        }
    }
    Ok(Parsed { commands, agents, core })
}

/// Parses a content tree: layout, frontmatter, markers. Everything is validated here.
pub fn content(tree: Tree) -> Result<Content, ContentError> {
    // Every file is parsed on its own: the files of the tree's second half (by bytes) on a second
    // thread, the first half here. Each half stops at its first error, so the error returned is
    // the first in the tree's order, as one pass over the files met it.
    let files: Vec<(&RelPath, &Bytes)> = tree.files.iter().collect();
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    let mut at = 0;
    let mut seen = 0;
    while at < files.len() && seen < total / 2 {
        seen += files[at].1.len();
        at += 1;
    }
    let (first, second) = files.split_at(at);
    let (a, b) = std::thread::scope(|s| {
        let b = s.spawn(|| parse_files(&tree, second));
        let a = parse_files(&tree, first);
        (a, b.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    let mut parsed = a?;
    let rest = b?;
    parsed.commands.extend(rest.commands);
    parsed.agents.extend(rest.agents);
    parsed.core.extend(rest.core);
    let Parsed { mut commands, mut agents, mut core } = parsed;
    if commands.is_empty() {
        return Err(ContentError::new(
            tree.origin.clone(),
            None,
            "the content tree has no commands",
            "add commands/msd/<stem>.md files",
        ));
    }
    commands.sort_by(|a, b| a.stem.cmp(&b.stem));
    agents.sort_by(|a, b| a.stem.cmp(&b.stem));
    core.sort_by(|a, b| a.rel.cmp(&b.rel));
    let tiers = tiers(&tree, &agents, &core)?;
    let namespaces = namespaces(&tree, &commands)?;
    let profiles = profiles(&tree, &commands)?;
    Ok(Content { tree, commands, agents, core, tiers, namespaces, profiles })
}

/// Text files are rewritten; anything else is copied byte for byte.
pub fn is_text_file(path: &str) -> bool {
    [".md", ".json", ".toml", ".yaml", ".yml", ".txt", ".sh"].iter().any(|ext| path.ends_with(ext))
}

fn compose(path: &str, src: &str) -> Result<(String, Vec<Section>), ContentError> {
    Ok(msd_core::compose::document(path, src)?)
}

impl Content {
    /// The explicit sections of the content file at `source` (`content/`-relative), if any.
    pub fn sections_of(&self, source: &RelPath) -> Option<&[Section]> {
        let s = if let Some(c) = self.commands.iter().find(|c| &c.source == source) {
            &c.sections
        } else if let Some(a) = self.agents.iter().find(|a| &a.source == source) {
            &a.sections
        } else {
            &self.core.iter().find(|f| &f.source == source)?.sections
        };
        (!s.is_empty()).then_some(s.as_slice())
    }

    /// A copy with the body (text) of each `source` replaced, for re-emitting composed files.
    pub fn with_bodies(&self, bodies: &BTreeMap<RelPath, String>) -> Content {
        let mut c = self.clone();
        for cmd in &mut c.commands {
            if let Some(b) = bodies.get(&cmd.source) {
                cmd.body = b.clone();
            }
        }
        for a in &mut c.agents {
            if let Some(b) = bodies.get(&a.source) {
                a.body = b.clone();
            }
        }
        for f in &mut c.core {
            if let Some(b) = bodies.get(&f.source) {
                f.text = Some(b.clone());
                f.shared = std::sync::OnceLock::new();
            }
        }
        c
    }
}

fn tiers(tree: &Tree, agents: &[Agent], core: &[CoreFile]) -> Result<Tiers, ContentError> {
    let rel = RelPath::new("tiers.json").expect("static");
    let Some(bytes) = tree.files.get(&rel) else { return Ok(Tiers::default()) };
    let disp = tree.display(&rel);
    let tiers: Tiers = serde_json::from_slice(bytes).map_err(|e| {
        ContentError::new(
            disp.clone(),
            Some(e.line()),
            format!("invalid tiers file: {e}"),
            "write {\"workflows\": {\"<stem>\": \"XL|LARGE|DEFAULT\"}, \"agents\": {\"<name>\": ...}}",
        )
    })?;
    for name in tiers.workflows.keys() {
        let path = format!("workflows/{name}.md");
        if !core.iter().any(|c| c.rel.as_str() == path) {
            let (line, _) =
                msd_core::fs::json::locate(std::str::from_utf8(bytes).unwrap_or_default(), &format!("\"{name}\""));
            return Err(ContentError::new(
                disp,
                Some(line),
                format!("tier given for unknown workflow `{name}`"),
                "remove the entry or add the workflow",
            ));
        }
    }
    let missing_workflow = core
        .iter()
        .filter_map(|c| c.rel.as_str().strip_prefix("workflows/")?.strip_suffix(".md"))
        .find(|w| !w.contains('/') && !tiers.workflows.contains_key(*w));
    let missing_agent = agents.iter().map(|a| a.stem.as_str()).find(|a| !tiers.agents.contains_key(*a));
    if let Some(name) = missing_workflow.or(missing_agent) {
        return Err(ContentError::new(
            disp,
            None,
            format!("`{name}` has no tier"),
            "give every top-level workflow and every agent a tier (XL, LARGE or DEFAULT)",
        ));
    }
    for name in tiers.agents.keys() {
        if !agents.iter().any(|a| &a.stem == name) {
            let (line, _) =
                msd_core::fs::json::locate(std::str::from_utf8(bytes).unwrap_or_default(), &format!("\"{name}\""));
            return Err(ContentError::new(
                disp,
                Some(line),
                format!("tier given for unknown agent `{name}`"),
                "remove the entry or add the agent",
            ));
        }
    }
    Ok(tiers)
}

/// Parses `profiles.json`: every listed command exists, each command is in one profile's own
/// list, `extends`, `requires` and `minimal` name known profiles and commands.
fn profiles(tree: &Tree, commands: &[Command]) -> Result<Option<Profiles>, ContentError> {
    let rel = RelPath::new("profiles.json").expect("static");
    let Some(bytes) = tree.files.get(&rel) else { return Ok(None) };
    let disp = tree.display(&rel);
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    let p: Profiles = serde_json::from_slice(bytes).map_err(|e| {
        ContentError::new(
            disp.clone(),
            Some(e.line()),
            format!("invalid profiles file: {e}"),
            "write {\"schema_version\": 1, \"default\", \"profiles\": [{\"name\", \"extends\", \"description\", \"commands\"}], \"requires\", \"minimal\"}",
        )
    })?;
    let at = |needle: &str| msd_core::fs::json::locate(text, &format!("\"{needle}\"")).0;
    let known = |c: &str| commands.iter().any(|cmd| cmd.stem == c);
    let names: Vec<&str> = p.profiles.iter().map(|x| x.name.as_str()).collect();
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for pr in &p.profiles {
        if let Some(e) = &pr.extends
            && !names.contains(&e.as_str())
        {
            return Err(ContentError::new(
                disp,
                Some(at(e)),
                format!("profile `{}` extends unknown `{e}`", pr.name),
                "name a profile of this file",
            ));
        }
        for c in &pr.commands {
            if !known(c) {
                return Err(ContentError::new(
                    disp,
                    Some(at(c)),
                    format!("profile `{}` lists unknown command `{c}`", pr.name),
                    "remove it or add commands/msd/<stem>.md",
                ));
            }
            if let Some(other) = owner.insert(c, &pr.name) {
                return Err(ContentError::new(
                    disp,
                    Some(at(c)),
                    format!("command `{c}` is in profiles `{other}` and `{}`", pr.name),
                    "list each command in one profile; a larger profile extends the smaller",
                ));
            }
        }
    }
    if let Some(c) = commands.iter().find(|c| !owner.contains_key(c.stem.as_str())) {
        return Err(ContentError::new(
            disp,
            None,
            format!("command `{}` is in no profile", c.stem),
            "add it to the commands of one profile",
        ));
    }
    for (c, needs) in &p.requires {
        for n in std::iter::once(c).chain(needs) {
            if !known(n) {
                return Err(ContentError::new(
                    disp,
                    Some(at(n)),
                    format!("`requires` names unknown command `{n}`"),
                    "remove it or add commands/msd/<stem>.md",
                ));
            }
        }
    }
    for n in [&p.default, &p.minimal.profile] {
        if !names.contains(&n.as_str()) {
            return Err(ContentError::new(
                disp,
                Some(at(n)),
                format!("unknown profile `{n}`"),
                "name a profile of this file",
            ));
        }
    }
    Ok(Some(p))
}

fn namespaces(tree: &Tree, commands: &[Command]) -> Result<Option<Namespaces>, ContentError> {
    let rel = RelPath::new("namespaces.json").expect("static");
    let Some(bytes) = tree.files.get(&rel) else { return Ok(None) };
    let disp = tree.display(&rel);
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    let ns: Namespaces = serde_json::from_slice(bytes).map_err(|e| {
        ContentError::new(
            disp.clone(),
            Some(e.line()),
            format!("invalid namespaces file: {e}"),
            "write {\"instructions\": \"...\", \"groups\": [{\"name\", \"description\", \"commands\": [...]}]}",
        )
    })?;
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for g in &ns.groups {
        if !is_stem(&g.name) {
            let (line, _) = msd_core::fs::json::locate(text, &format!("\"{}\"", g.name));
            return Err(ContentError::new(
                disp,
                Some(line),
                format!("invalid group name `{}`", g.name),
                "use lowercase letters, digits and hyphens",
            ));
        }
        if commands.iter().any(|cmd| cmd.stem == g.name) {
            // A nested layout writes `<prefix><group>/SKILL.md` beside the command's own
            // `<prefix><stem>` skill: two skills of one name (Qwen listed both as `msd-review`).
            let (line, _) = msd_core::fs::json::locate(text, &format!("\"{}\"", g.name));
            return Err(ContentError::new(
                disp,
                Some(line),
                format!(
                    "group `{}` has the name of the command `{}`: nested layouts would write two skills of that name",
                    g.name, g.name
                ),
                "give the group a name no command has",
            ));
        }
        for c in &g.commands {
            let (line, _) = msd_core::fs::json::locate(text, &format!("\"{c}\""));
            if !commands.iter().any(|cmd| &cmd.stem == c) {
                return Err(ContentError::new(
                    disp,
                    Some(line),
                    format!("group `{}` lists unknown command `{c}`", g.name),
                    "remove it or add commands/msd/<stem>.md",
                ));
            }
            if let Some(prev) = seen.insert(c, &g.name) {
                return Err(ContentError::new(
                    disp,
                    Some(line),
                    format!("command `{c}` is in groups `{prev}` and `{}`", g.name),
                    "list each command in one group",
                ));
            }
        }
    }
    if let Some(c) = commands.iter().find(|c| !seen.contains_key(c.stem.as_str())) {
        return Err(ContentError::new(
            disp,
            None,
            format!("command `{}` is in no group", c.stem),
            "add it to one group",
        ));
    }
    Ok(Some(ns))
}
