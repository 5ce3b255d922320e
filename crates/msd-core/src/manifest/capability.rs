//! Capability manifests: what each host runtime is, where it lives and what it accepts.
//!
//! Input: `runtimes/<id>/capability.json` (embedded, or `--runtimes DIR`). Output: validated
//! [`Capability`] values. Every runtime difference the pipeline acts on is a field here, never
//! an `if runtime == ...` in code.
//!
//! Invariants: parsing is strict (`deny_unknown_fields`, closed enums for kinds and converters),
//! so a typo is an error with file:line:col, not a silently ignored key. [`validate_set`] checks
//! what serde cannot (unique ids, safe paths, kind-specific home rules) before anything is
//! written.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::{ManifestError, ManifestErrors, Scope};
use crate::fs::json::{Seg, locate_path};
use crate::fs::relpath::RelPath;

/// One runtime's capability manifest.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    /// Optional JSON Schema reference for editors; not interpreted.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Runtime id: lowercase, digits and hyphens; equals the directory name.
    pub id: String,
    /// Human name of the runtime.
    pub title: String,
    /// How well msd-core supports this runtime.
    pub tier: SupportTier,
    /// Where the runtime's global configuration home is.
    pub home: HomeSpec,
    /// The project-local directory; absent when the runtime has no local scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalSpec>,
    /// Directory (relative to the scope's home) that receives the msd-core tree.
    #[serde(default = "default_core_dir")]
    pub core_dir: RelPath,
    /// What is written where, per scope.
    pub artifacts: ArtifactLayouts,
    /// How a slash command is referenced in this runtime; `{stem}` is the command stem
    /// (`/msd:plan-phase` in content becomes this).
    pub command_ref: String,
    /// Literal text replacements applied to every emitted text file, in order, after the path
    /// rewrites (brand names, instruction-file names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrites: Vec<Rewrite>,
    /// Source tool name -> this runtime's tool name (`null` drops the tool).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Option<String>>,
    /// Entries over `tools` for a range of the runtime's versions, where it changed its tools
    /// (Claude Code 2.1.117 dropped `Glob` and `Grep`). The range that holds `tested.max` (the
    /// newest version the real-runtime tier proved) applies: an install is made for that version
    /// (see [`Capability::tool_for`]), not for the CLI found on the machine, so that what is
    /// emitted stays the same on every machine (golden lists, `verify`, drift).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_versions: Vec<ToolVersions>,
    /// How MCP tool names in Claude's form (`mcp__<server>__<tool>`) in an agent's tools are
    /// written for this runtime (an entry of `tools` for the exact name wins).
    #[serde(default, skip_serializing_if = "is_default")]
    pub mcp_tools: McpTools,
    /// Description length limit for skills, commands and agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_limit: Option<DescriptionLimit>,
    /// Byte caps on emitted files, by glob over emitted paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caps: Vec<CapRule>,
    /// Names and marks that identify this runtime (product names, instruction file names). No
    /// other runtime's emitted files may contain them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brands: Vec<String>,
    /// Task-content resolvers (ADR-3646): external trackers that own the content of tasks whose
    /// `tracker-id` carries their prefix. Installed to `<core>/resolvers.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolvers: Vec<crate::manifest::resolver::Resolver>,
    /// Settings and config surfaces that get msd entries (hooks, permissions, options, blocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<crate::manifest::surfaces::SurfaceSpec>,
    /// Hooks a runtime runs as files of their own: executable scripts (Cline: one file per event
    /// in a hooks directory, each a two-line script running `msd_run hook ...`) or a JS plugin
    /// module (OpenCode, Kilo: `plugin/msd.js`, spawning `msd_run hook ...` per hook point).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hook_files: Vec<crate::manifest::surfaces::HookFile>,
    /// The shell the runtime runs its command strings (settings hooks, the status line) with on
    /// Windows: `posix` (Git Bash), `powershell` or `cmd`. On every other platform it is a POSIX
    /// shell. Cite the runtime's source in `sources`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub windows_shell: crate::shell::Shell,
    /// What the install summary tells the user after installing this runtime (a step the
    /// runtime asks of them, what it loads and what it does not), per scope.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub install_notes: Vec<InstallNote>,
    /// Other runtimes that run this runtime's hooks too (Cursor runs Claude Code's
    /// `settings.json` hooks as "third-party hooks"). Inside such a host, this runtime's hooks
    /// stay silent when the host has an msd install of its own, so a user with both installs
    /// gets each answer once. Written to `<core>/runtime.json` for `msd_run hook`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hook_hosts: Vec<HookHost>,
    /// What the real-runtime tier proved against the runtime's own CLI: its package, the version
    /// range that passed and when (`tests/real-runtimes`); `msd-install runtimes` shows it and
    /// `msd-install doctor` checks the CLI on this machine against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tested: Option<Tested>,
    /// The runtime's maker ended it (or its consumer edition): msd still installs it, and says
    /// so at install, in `runtimes` and in `status`, naming the successor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sunset: Option<Sunset>,
    /// Directories of other tools the runtime reads too (`~/.agents/skills`): a file there with
    /// the name of one msd wrote shadows or duplicates it; `msd-install doctor` reports it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_reads: Vec<AlsoReads>,
    /// Settings of the runtime that, set by the user or another tool, stop what msd installed
    /// from working (a deny rule covering the helper, hooks switched off): `msd-install doctor`
    /// reports each one it finds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<Conflict>,
    /// The public sources this manifest follows, one fact each: `package@version:path:line`
    /// of the runtime's packaged tool (or `@<byte offset>` in a single binary), or the URL of
    /// its documentation. Not interpreted; kept next to the data it backs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// A runtime that runs another runtime's hooks (see [`Capability::hook_hosts`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookHost {
    /// The host runtime's id.
    pub runtime: String,
    /// A top-level field of the hook's JSON payload that only this host sends
    /// (`cursor_version`): the event comes from the host, not from this runtime.
    pub marker: String,
    /// Where the host's own msd helper is when it has an install: `~/<path>` under the user's
    /// home (global), or a path relative to the project (local). Each must be the host's helper
    /// path (checked against its manifest).
    pub helpers: Vec<String>,
    /// The host's source for each fact (`package@version:path@offset`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

/// What the real-runtime tier proved (see [`Capability::tested`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tested {
    /// The package the tier installs: an npm name, or `pypi:<name>`.
    pub package: String,
    /// The executable the package puts on PATH (`gemini`); absent when the tier drives a
    /// library rather than a CLI (then no version on this machine can be checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<String>,
    /// Arguments that make the CLI print its version (the first `N.N.N` of its output is read).
    #[serde(default = "default_version_args")]
    pub version_args: Vec<String>,
    /// The oldest version that passed (`N.N.N`).
    pub min: String,
    /// The newest version that passed (`N.N.N`).
    pub max: String,
    /// When the tier last passed on `max` (`YYYY-MM-DD`).
    pub date: String,
    /// Offline calls of the CLI that list what it loaded (run in the project, stdin given, no
    /// model; the same calls the real-runtime tier's probe makes): `msd-install doctor` runs
    /// each, bounded in time, and compares the names it lists with the names msd wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listings: Vec<Listing>,
}

fn default_version_args() -> Vec<String> {
    vec!["--version".to_string()]
}

/// Tool-name entries that hold for a range of a runtime's versions (see
/// [`Capability::tool_versions`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolVersions {
    /// The first version these entries hold for (`N.N.N`).
    pub min: String,
    /// The last version they hold for (`N.N.N`); absent: every version from `min` on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// Source tool name -> this runtime's tool name (`null` drops the tool), over `tools`.
    pub tools: BTreeMap<String, Option<String>>,
    /// Where the change is seen in the runtime's packaged source (`package@version:path:line`
    /// or `@<byte offset>`), and where it is announced.
    pub sources: Vec<String>,
}

impl ToolVersions {
    /// Whether `version` lies in the range; `None` when a bound or `version` does not parse.
    pub fn contains(&self, version: &str) -> Option<bool> {
        let v = parse_version(version)?;
        let upper = match &self.max {
            Some(m) => v <= parse_version(m)?,
            None => true,
        };
        Some(parse_version(&self.min)? <= v && upper)
    }

    /// `min-max`, or `min+` when open.
    pub fn range(&self) -> String {
        match &self.max {
            Some(m) => format!("{}-{m}", self.min),
            None => format!("{}+", self.min),
        }
    }
}

impl Capability {
    /// The entries of [`Capability::tool_versions`] that apply: the range holding `tested.max`.
    pub fn tool_range(&self) -> Option<&ToolVersions> {
        let at = &self.tested.as_ref()?.max;
        self.tool_versions.iter().find(|r| r.contains(at) == Some(true))
    }

    /// What `tool` is called in this runtime: `Some(Some(name))`, `Some(None)` when the runtime
    /// lacks it and nothing replaces it (dropped), `None` when neither table names it (kept as
    /// it is). The applying version range wins over `tools`.
    pub fn tool_for(&self, tool: &str) -> Option<&Option<String>> {
        self.tool_range().and_then(|r| r.tools.get(tool)).or_else(|| self.tools.get(tool))
    }
}

/// An offline listing call of a runtime's CLI (see [`Tested::listings`]). In `args` and `stdin`,
/// `{{project}}` is the project's path.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Listing {
    /// Arguments after the CLI's name.
    pub args: Vec<String>,
    /// Text written to its stdin.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdin: String,
    /// Environment variables the call gets on top of the user's: the ones the tier's probe sets
    /// to keep the CLI offline (no update check, no telemetry, no model download). Never a key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A CLI that serves requests on stdin until it is closed (an RPC mode): stdin stays open
    /// until a line of its output holds this text (the answer to the last request), then the
    /// CLI is stopped. Absent: stdin is closed once written and the CLI exits on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// What its output lists, one entry per artifact kind.
    pub lists: Vec<Listed>,
    /// Where the fact comes from (`package@version:path:line`, the probe that makes the call).
    pub source: String,
}

/// The names of one artifact kind in a listing's output: exactly one of `json` and `text`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    /// The artifact kind whose names these are.
    pub kind: ArtifactKind,
    /// The output is JSON (one document, or one per line): the names are the strings at this
    /// path, `.`-separated keys, `*` for each element of an array or value of an object,
    /// `*key` for each key of an object (`command.*key`, `data.commands.*.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<String>,
    /// The output is text, one item a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextListing>,
}

/// A text listing (see [`Listed::text`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextListing {
    /// An item is a line that starts with this text and then a name (no space); the name is its
    /// first word.
    pub indent: String,
    /// Text that follows the name on an item's line (` [args...]`), when the CLI writes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Per scope, the heading (a line starting with no space) over that scope's items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<PerScope>,
    /// Per scope, the text in an item's lines (up to the next item) that says its scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marks: Option<PerScope>,
}

/// One text per scope.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerScope {
    /// For the global scope.
    pub global: String,
    /// For the project-local scope.
    pub local: String,
}

impl PerScope {
    /// The text of `scope`.
    pub fn of(&self, scope: Scope) -> &str {
        match scope {
            Scope::Global => &self.global,
            Scope::Local => &self.local,
        }
    }
}

impl Tested {
    /// Whether `version` (`N.N.N`, anything after ignored) lies in `min..=max`; `None` when it
    /// does not parse.
    pub fn contains(&self, version: &str) -> Option<bool> {
        let v = parse_version(version)?;
        Some(parse_version(&self.min)? <= v && v <= parse_version(&self.max)?)
    }

    /// `min` or `min-max`.
    pub fn range(&self) -> String {
        if self.min == self.max { self.min.clone() } else { format!("{}-{}", self.min, self.max) }
    }
}

/// The first `N.N.N` (digits and dots, three parts) of `text`, as numbers.
pub fn parse_version(text: &str) -> Option<[u64; 3]> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.')).find_map(|w| {
        let parts: Vec<&str> = w.trim_matches('.').split('.').collect();
        if parts.len() < 3 {
            return None;
        }
        let n = |i: usize| parts[i].parse::<u64>().ok();
        Some([n(0)?, n(1)?, n(2)?])
    })
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// Directories a runtime reads besides its own (see [`Capability::also_reads`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlsoReads {
    /// What it reads there: `skills` (`<dir>/<name>/SKILL.md`) or `commands` (`<dir>/<name>.md`).
    pub kind: ArtifactKind,
    /// The directories: `~/<path>` under the user's home, or a path relative to the project.
    pub dirs: Vec<String>,
    /// The runtime's source for it (`package@version:path:line` or a URL).
    pub source: String,
}

/// A setting that conflicts with msd's install (see [`Capability::conflicts`]): found when the
/// value at `at` in one of `files` is `equals`, or is (or holds) a string that one of `matches`
/// matches.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Conflict {
    /// The settings files (JSON or JSONC) the runtime reads it from: `~/<path>` under the
    /// user's home, or a path relative to the install's home.
    pub files: Vec<String>,
    /// The keys to the value.
    pub at: Vec<String>,
    /// Patterns of a string value or of an array's strings; `*` matches any text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<String>,
    /// The value that conflicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<serde_json::Value>,
    /// What it blocks, for the finding (`the helper msd's workflows and hooks run`).
    pub blocks: String,
    /// The runtime's source for it.
    pub source: String,
}

/// Whether `text` matches `pattern`, whose `*` matches any text (the rest literally).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return pattern == text };
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A runtime's end (see [`Capability::sunset`]).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sunset {
    /// When it ended (`YYYY-MM-DD`).
    pub date: String,
    /// The runtime id that replaces it, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
    /// What the user is told (at install, in `runtimes` and `status`).
    pub notice: String,
    /// The public source of the fact.
    pub source: String,
}

/// A note the install summary prints for a runtime.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InstallNote {
    /// The scopes it applies to (default both).
    #[serde(default = "both_scopes")]
    pub scopes: Vec<Scope>,
    /// The text; `{{home}}` is the installed home.
    pub text: String,
}

/// How an MCP tool name in Claude's form (`mcp__<server>__<tool>`) is written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum McpTools {
    /// Left out: the runtime has no way (or no known way) to name an MCP tool in an agent.
    #[default]
    Drop,
    /// Written as is: the runtime reads Claude's form.
    Keep,
    /// Written by a template with `{server}` and `{tool}` (e.g. `mcp_{server}_{tool}`); a name
    /// without a tool part (`mcp__<server>`) is left out.
    Rename(String),
}

impl McpTools {
    /// `name` written for the runtime: `None` when it is not an MCP name, `Some(None)` when it
    /// is dropped.
    pub fn map(&self, name: &str) -> Option<Option<String>> {
        let rest = name.strip_prefix("mcp__")?;
        Some(match self {
            McpTools::Drop => None,
            McpTools::Keep => Some(name.to_string()),
            McpTools::Rename(template) => rest
                .split_once("__")
                .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
                .map(|(server, tool)| template.replace("{server}", server).replace("{tool}", tool)),
        })
    }
}

impl Capability {
    /// `sunset` when the manifest says so, else the tier (`primary`, `supported`,
    /// `experimental`).
    pub fn status(&self) -> &'static str {
        if self.sunset.is_some() {
            return "sunset";
        }
        match self.tier {
            SupportTier::Primary => "primary",
            SupportTier::Supported => "supported",
            SupportTier::Experimental => "experimental",
        }
    }

    /// The shell that runs this runtime's command strings on `os`.
    pub fn command_shell(&self, os: crate::shell::Os) -> crate::shell::Shell {
        match os {
            crate::shell::Os::Unix => crate::shell::Shell::Posix,
            crate::shell::Os::Windows => self.windows_shell,
        }
    }
}

fn default_core_dir() -> RelPath {
    RelPath::new("msd-core").expect("static path")
}

/// Support tier of a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SupportTier {
    /// The reference runtime; every feature lands here first.
    Primary,
    /// Fully supported.
    Supported,
    /// Installs and is tested, with gaps in the runtime's own support.
    Experimental,
}

/// How the global home is resolved.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HomeSpec {
    /// The resolution kind; constrains which sources are allowed.
    pub kind: HomeKind,
    /// Default home, relative to the user's home directory (e.g. `.claude`).
    pub default: RelPath,
    /// Environment overrides, first non-blank wins (after `--config-dir`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvSource>,
    /// Candidate homes tried, in order, after the environment and before the default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<Probe>,
}

/// Home resolution kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HomeKind {
    /// `~/<name>` overridden by plain env vars holding the directory.
    DotHome,
    /// XDG style: a dir var, a config-file var (its parent), `XDG_CONFIG_HOME/<name>`.
    Xdg,
    /// A home nested in another tool's home, found by probing candidates.
    Nested,
    /// A shared agents root, the first candidate that contains a marker path.
    AgentsRoot,
}

/// One environment override.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvSource {
    /// Variable name.
    pub var: String,
    /// Use the value's parent directory (the variable names a file).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parent: bool,
    /// Append this path to the value (e.g. `opencode` under `XDG_CONFIG_HOME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<RelPath>,
}

/// A candidate home, relative to the user's home directory.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Candidate directory relative to the user's home.
    pub path: RelPath,
    /// The candidate is chosen only if this path exists inside it; absent = the directory exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<RelPath>,
}

/// The project-local scope.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalSpec {
    /// Directory under the project root (`.` for the project root itself).
    pub dir: String,
    /// Core dir of a local install, when it differs from the global `core_dir` (for runtimes
    /// whose local dir is the project root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_dir: Option<RelPath>,
    /// How installed content names the local install's own files.
    #[serde(default, skip_serializing_if = "is_default")]
    pub refs: LocalRefs,
}

/// How a local install's content and settings name its own files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LocalRefs {
    /// `./<dir>/...`, relative to the project root: for runtimes that resolve includes and run
    /// commands from the project root whatever directory they were started in.
    #[default]
    Relative,
    /// `<absolute project path>/<dir>/...`: for runtimes that resolve `@path` includes and run
    /// shell commands from the launch directory, so a session started in a subdirectory still
    /// finds them (reinstall after moving the project).
    Absolute,
}

/// Artifact layout for each scope.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactLayouts {
    /// Layout of a global install.
    pub global: Vec<ArtifactSpec>,
    /// Layout of a local install (must be empty when `local` is absent).
    #[serde(default)]
    pub local: Vec<ArtifactSpec>,
}

/// One kind of artifact and where and how it is written.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactSpec {
    /// What is emitted.
    pub kind: ArtifactKind,
    /// Destination directory relative to the scope's home.
    pub dest: RelPath,
    /// The output format.
    pub converter: Converter,
    /// Prefix of emitted names (commands, skills, workflow stubs).
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// File name ending of emitted files (default `.md`; Copilot agents use `.agent.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suffix: Option<String>,
    /// Skills: one directory per command (`flat`) or routers per namespace (`nested`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub nesting: Nesting,
    /// Frontmatter rules of the emitted files.
    #[serde(default, skip_serializing_if = "is_default")]
    pub frontmatter: FrontmatterRules,
    /// A data file beside the manifest (`runtimes/<id>/<file>`) prepended to every body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// How a tools list is written in frontmatter.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tools_format: ToolsFormat,
    /// Workflow stubs: a data file beside the manifest with `{name}`, `{description}` and
    /// `{body}` placeholders, and the stub's byte bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stub: Option<StubSpec>,
    /// Codex agents: tools that make an agent need `workspace-write`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_tools: Vec<String>,
    /// The template syntax the runtime fills in the emitted body (agents' system prompts):
    /// text of content that would read as a placeholder is escaped so it arrives as written.
    #[serde(default, skip_serializing_if = "is_default")]
    pub body_template: BodyTemplate,
}

/// A template syntax a runtime substitutes in an emitted body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BodyTemplate {
    /// The body is sent as written.
    #[default]
    None,
    /// `${identifier}` is a placeholder and an unknown one fails the agent (Gemini CLI, Qwen
    /// Code: `templateString` over `/\$\{(\w+)\}/g`); content's `${NAME}` is written `${ NAME }`,
    /// which the pattern does not match and which reads the same in JavaScript.
    DollarBrace,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn default_prefix() -> String {
    "msd-".to_string()
}

/// Skill layout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Nesting {
    /// `<dest>/<prefix><stem>/SKILL.md`.
    #[default]
    Flat,
    /// `<dest>/<prefix><group>/SKILL.md` routers, each with `skills/<prefix><stem>/SKILL.md` inside
    /// (groups from the content's `namespaces.json`).
    Nested,
}

/// How tools are listed in frontmatter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolsFormat {
    /// `tools: Read, Write` (a comma-separated string).
    #[default]
    Comma,
    /// A YAML block list.
    List,
    /// A flow list of quoted names: `tools: ['read', 'edit']`.
    Flow,
    /// A map of names to `true`: `tools:\n  read: true`.
    Map,
}

/// Frontmatter rules.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrontmatterRules {
    /// Source keys carried over (absent: every source key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<Vec<String>>,
    /// Source key renames, e.g. `allowed-tools` -> `tools`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
    /// Keys added with fixed scalar values (string, number, bool).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub add: BTreeMap<String, serde_json::Value>,
}

/// A workflow stub.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StubSpec {
    /// Template file beside the manifest.
    pub template: String,
    /// The stub never exceeds this many bytes: the description is cut to fit.
    pub max_bytes: u64,
}

/// Artifact kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    /// Slash commands.
    Commands,
    /// Skills (one directory per command).
    Skills,
    /// Subagents.
    Agents,
    /// Workflow files the runtime lists as commands (Windsurf stubs, Cline workflows).
    Workflows,
}

impl ArtifactKind {
    /// The name used in manifests and output.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::Commands => "commands",
            ArtifactKind::Skills => "skills",
            ArtifactKind::Agents => "agents",
            ArtifactKind::Workflows => "workflows",
        }
    }
}

/// The closed set of output formats. Each is one converter in `convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Converter {
    /// A Markdown file per command with YAML frontmatter (commands, Cline workflows).
    MarkdownCommand,
    /// An Agent-Skills `SKILL.md` per command (flat or nested).
    Skill,
    /// A Markdown agent file with YAML frontmatter, tools mapped.
    MarkdownAgent,
    /// A Codex agent: `<name>.toml` with the instructions inside.
    CodexAgent,
    /// A Gemini CLI command: `<stem>.toml` with `description` and `prompt`.
    GeminiCommand,
    /// A small workflow stub pointing at the command body (Windsurf).
    WorkflowStub,
    /// Kimi agents: a root `<prefix>.yaml` + `.md` and one YAML + Markdown per subagent.
    KimiAgents,
}

impl Converter {
    /// Which artifact kinds this converter can produce.
    pub fn accepts(self, kind: ArtifactKind) -> bool {
        matches!(
            (self, kind),
            (Converter::MarkdownCommand, ArtifactKind::Commands | ArtifactKind::Workflows)
                | (Converter::Skill, ArtifactKind::Skills)
                | (Converter::MarkdownAgent | Converter::CodexAgent | Converter::KimiAgents, ArtifactKind::Agents)
                | (Converter::GeminiCommand, ArtifactKind::Commands)
                | (Converter::WorkflowStub, ArtifactKind::Workflows)
        )
    }
}

/// A literal replacement.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rewrite {
    /// Text to find (non-empty).
    pub from: String,
    /// Replacement.
    pub to: String,
}

/// A description length limit.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DescriptionLimit {
    /// Maximum length, in `unit`s, including the ellipsis.
    pub max: usize,
    /// What the runtime counts.
    pub unit: LengthUnit,
    /// Appended when the description is cut.
    #[serde(default = "default_ellipsis")]
    pub ellipsis: String,
}

fn default_ellipsis() -> String {
    "...".to_string()
}

/// Units a runtime counts lengths in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LengthUnit {
    /// Unicode scalar values.
    Chars,
    /// UTF-8 bytes.
    Bytes,
    /// UTF-16 code units (JavaScript string length).
    Utf16,
}

/// A byte cap on emitted files.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapRule {
    /// Glob over emitted paths relative to the home: `*` within a segment, `**` across.
    pub glob: String,
    /// Maximum bytes (inclusive).
    pub max_bytes: u64,
    /// Scopes the rule applies to (default both).
    #[serde(default = "both_scopes")]
    pub scopes: Vec<Scope>,
}

fn both_scopes() -> Vec<Scope> {
    vec![Scope::Global, Scope::Local]
}

impl Capability {
    /// The core dir of `scope`.
    pub fn core_dir(&self, scope: Scope) -> &RelPath {
        match (scope, self.local.as_ref().and_then(|l| l.core_dir.as_ref())) {
            (Scope::Local, Some(d)) => d,
            _ => &self.core_dir,
        }
    }

    /// The artifact layout of `scope`.
    pub fn layout(&self, scope: Scope) -> &[ArtifactSpec] {
        match scope {
            Scope::Global => &self.artifacts.global,
            Scope::Local => &self.artifacts.local,
        }
    }

    /// The install notes of `scope`.
    pub fn notes(&self, scope: Scope) -> impl Iterator<Item = &str> {
        self.install_notes.iter().filter(move |n| n.scopes.contains(&scope)).map(|n| n.text.as_str())
    }

    /// The artifact kinds of a scope, for listings.
    pub fn kinds(&self, scope: Scope) -> Vec<&'static str> {
        let set: BTreeSet<_> = self.layout(scope).iter().map(|a| a.kind).collect();
        set.into_iter().map(ArtifactKind::as_str).collect()
    }
}

const SCHEMA_HINT: &str = "see `msd-install schema` for every allowed field and value";

/// Parses one manifest. `file` is used in error messages.
pub fn parse(file: &str, text: &str) -> Result<Capability, ManifestError> {
    // A UTF-8 byte order mark (some editors write one) is accepted; serde would call it an
    // unexpected token. Lines and columns are unchanged by it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str::<Capability>(text).map_err(|e| ManifestError {
        file: file.to_string(),
        line: e.line(),
        col: e.column(),
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_string(),
        hint: SCHEMA_HINT.to_string(),
    })
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Checks one parsed manifest beyond its schema. `dir_name` is the directory it came from.
/// Reports every problem found, in the manifest's line order, not only the first: one edit of a
/// manifest fixes them all.
pub fn validate(file: &str, text: &str, cap: &Capability, dir_name: &str) -> Result<(), ManifestErrors> {
    let mut errs: Vec<ManifestError> = Vec::new();
    let err = |path: &[Seg<'_>], message: String, hint: &str| {
        let (line, col) = locate_path(text, path);
        ManifestError { file: file.to_string(), line, col, message, hint: hint.to_string() }
    };
    if !is_id(&cap.id) {
        errs.push(err(
            &[Seg::Key("id")],
            format!("invalid runtime id `{}`", cap.id),
            "use lowercase letters, digits and hyphens",
        ));
    } else if cap.id != dir_name {
        errs.push(err(
            &[Seg::Key("id")],
            format!("runtime id `{}` does not match its directory `{dir_name}`", cap.id),
            "rename the directory or the id so they agree",
        ));
    }
    for (i, e) in cap.home.env.iter().enumerate() {
        if e.var.is_empty() || !e.var.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
            errs.push(err(
                &[Seg::Key("home"), Seg::Key("env"), Seg::Index(i), Seg::Key("var")],
                format!("invalid environment variable name `{}`", e.var),
                "use UPPER_SNAKE_CASE",
            ));
        }
        if cap.home.kind == HomeKind::DotHome && e.parent {
            errs.push(err(
                &[Seg::Key("home"), Seg::Key("env"), Seg::Index(i), Seg::Key("parent")],
                format!("home kind `dot-home` takes directory variables, but `{}` has `parent`", e.var),
                "use kind `xdg` for variables that name a config file",
            ));
        }
        if e.parent && e.join.is_some() {
            errs.push(err(
                &[Seg::Key("home"), Seg::Key("env"), Seg::Index(i)],
                format!("`{}` has both `parent` and `join`", e.var),
                "use one of them",
            ));
        }
    }
    match cap.home.kind {
        HomeKind::DotHome | HomeKind::Xdg if !cap.home.probes.is_empty() => {
            errs.push(err(
                &[Seg::Key("home"), Seg::Key("probes")],
                "probes are only allowed for `nested` and `agents-root` homes".into(),
                "remove `probes` or change `kind`",
            ));
        }
        HomeKind::AgentsRoot if cap.home.probes.is_empty() || cap.home.probes.iter().any(|p| p.contains.is_none()) => {
            errs.push(err(
                &[Seg::Key("home"), Seg::Key("probes")],
                "an `agents-root` home needs probes, each with `contains`".into(),
                "list the candidate roots and the path that marks the right one",
            ));
        }
        _ => {}
    }
    if let Some(local) = &cap.local {
        if local.dir != "."
            && let Err(e) = RelPath::new(local.dir.clone())
        {
            errs.push(err(
                &[Seg::Key("local"), Seg::Key("dir")],
                format!("local dir: {e}"),
                "use a relative directory such as `.claude`, or `.`",
            ));
        }
    } else if !cap.artifacts.local.is_empty() {
        errs.push(err(
            &[Seg::Key("artifacts"), Seg::Key("local")],
            "a local layout is given but `local` is absent".into(),
            "add `\"local\": {\"dir\": ...}` or remove `artifacts.local`",
        ));
    }
    if !cap.command_ref.contains("{stem}") {
        errs.push(err(
            &[Seg::Key("command_ref")],
            format!("`command_ref` `{}` lacks `{{stem}}`", cap.command_ref),
            "write e.g. \"/msd-{stem}\"",
        ));
    }
    for (scope, layout) in [(Scope::Global, &cap.artifacts.global), (Scope::Local, &cap.artifacts.local)] {
        let mut seen = BTreeSet::new();
        for (i, a) in layout.iter().enumerate() {
            let at =
                |key: &'static str| [Seg::Key("artifacts"), Seg::Key(scope.as_str()), Seg::Index(i), Seg::Key(key)];
            if !a.converter.accepts(a.kind) {
                errs.push(err(
                    &at("converter"),
                    format!(
                        "converter `{:?}` cannot produce {} ({} layout)",
                        a.converter,
                        a.kind.as_str(),
                        scope.as_str()
                    ),
                    "pick a converter made for this artifact kind (see `msd-install schema`)",
                ));
            }
            if !seen.insert(a.kind) {
                errs.push(err(
                    &at("kind"),
                    format!("artifact kind `{}` listed twice in the {} layout", a.kind.as_str(), scope.as_str()),
                    "list each kind once per scope",
                ));
            }
            if !a.prefix.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
                errs.push(err(
                    &at("prefix"),
                    format!("invalid prefix `{}`", a.prefix),
                    "use lowercase letters, digits and hyphens",
                ));
            }
            for file in a.adapter.iter().chain(a.stub.as_ref().map(|s| &s.template)) {
                if RelPath::new(file.clone()).map_or(true, |p| p.as_str().contains('/')) {
                    errs.push(err(
                        &at(if a.adapter.as_ref() == Some(file) { "adapter" } else { "stub" }),
                        format!("data file `{file}` must be a plain file name beside the manifest"),
                        "name a file in the runtime's directory",
                    ));
                }
            }
            if (a.converter == Converter::WorkflowStub) != a.stub.is_some() {
                errs.push(err(
                    &at("stub"),
                    "`stub` goes with the `workflow-stub` converter, and that converter needs it".into(),
                    "add or remove `stub`",
                ));
            }
            if let Some(suffix) = &a.suffix
                && (!suffix.starts_with('.') || suffix.contains('/'))
            {
                errs.push(err(
                    &at("suffix"),
                    format!("suffix `{suffix}` must start with `.` and hold no `/`"),
                    "write e.g. \".agent.md\"",
                ));
            }
        }
    }
    for (i, r) in cap.rewrites.iter().enumerate() {
        if r.from.is_empty() {
            errs.push(err(
                &[Seg::Key("rewrites"), Seg::Index(i), Seg::Key("from")],
                "a rewrite has an empty `from`".into(),
                "remove it or give the text to replace",
            ));
        }
    }
    if let Some(d) = &cap.description_limit
        && d.max <= d.ellipsis.chars().count()
    {
        errs.push(err(
            &[Seg::Key("description_limit"), Seg::Key("max")],
            format!("description limit {} leaves no room for the ellipsis", d.max),
            "raise `max`",
        ));
    }
    for (i, c) in cap.caps.iter().enumerate() {
        if let Err(m) = crate::manifest::caps::check_glob(&c.glob) {
            errs.push(err(
                &[Seg::Key("caps"), Seg::Index(i), Seg::Key("glob")],
                m,
                "use `*` within a segment and `**` across segments, relative paths only",
            ));
        }
        if c.scopes.is_empty() {
            errs.push(err(
                &[Seg::Key("caps"), Seg::Index(i), Seg::Key("scopes")],
                "a cap rule with no scopes guards nothing".into(),
                "list `global`, `local` or both",
            ));
        }
    }
    if let McpTools::Rename(template) = &cap.mcp_tools
        && !template.contains("{tool}")
    {
        errs.push(err(
            &[Seg::Key("mcp_tools"), Seg::Key("rename")],
            format!("MCP name template `{template}` lacks `{{tool}}`"),
            "write e.g. \"mcp_{server}_{tool}\"",
        ));
    }
    if let Some(t) = &cap.tested {
        let at = |key: &'static str| [Seg::Key("tested"), Seg::Key(key)];
        let mut versions = true;
        for (key, v) in [("min", &t.min), ("max", &t.max)] {
            if parse_version(v).is_none() || v.bytes().any(|b| !(b.is_ascii_digit() || b == b'.')) {
                errs.push(err(&at(key), format!("tested.{key} `{v}` is not a version"), "write N.N.N"));
                versions = false;
            }
        }
        if versions && t.contains(&t.min) != Some(true) {
            errs.push(err(
                &at("min"),
                format!("tested range {}..{} is empty", t.min, t.max),
                "min is the oldest version that passed, max the newest",
            ));
        }
        if !is_date(&t.date) {
            errs.push(err(&at("date"), format!("tested.date `{}` is not a date", t.date), "write YYYY-MM-DD"));
        }
        if let Some(cli) = &t.cli
            && (cli.is_empty() || cli.contains(['/', '\\', ' ']))
        {
            errs.push(err(&at("cli"), format!("tested.cli `{cli}` is not a command name"), "name the executable"));
        }
        if !t.listings.is_empty() && t.cli.is_none() {
            errs.push(err(&at("listings"), "a listing needs `cli`".into(), "name the executable the listing runs"));
        }
        for (i, l) in t.listings.iter().enumerate() {
            let at = |k: &'static str| [Seg::Key("tested"), Seg::Key("listings"), Seg::Index(i), Seg::Key(k)];
            if l.lists.is_empty() {
                errs.push(err(&at("lists"), "a listing lists nothing".into(), "name the kinds its output lists"));
            }
            for (j, x) in l.lists.iter().enumerate() {
                let path = [Seg::Key("tested"), Seg::Key("listings"), Seg::Index(i), Seg::Key("lists"), Seg::Index(j)];
                match (&x.json, &x.text) {
                    (Some(p), None) if p.is_empty() || p.split('.').any(str::is_empty) => errs.push(err(
                        &path,
                        format!("listing path `{p}` has an empty part"),
                        "write keys, `*` or `*key` separated by `.`",
                    )),
                    (Some(_), None) => {}
                    (None, Some(t)) if t.indent.chars().any(|c| c != ' ') => errs.push(err(
                        &path,
                        format!("text listing indent `{}` is not spaces", t.indent),
                        "items under a heading are indented: write the spaces before a name",
                    )),
                    (None, Some(_)) => {}
                    _ => errs.push(err(
                        &path,
                        "a listed kind needs one of `json` and `text`".into(),
                        "write exactly one",
                    )),
                }
            }
        }
    }
    for (i, c) in cap.conflicts.iter().enumerate() {
        let at = [Seg::Key("conflicts"), Seg::Index(i)];
        if c.files.is_empty() || c.at.is_empty() {
            errs.push(err(&at, "a conflict names no file or no key".into(), "write `files` and `at`"));
        }
        if c.matches.is_empty() == c.equals.is_none() {
            errs.push(err(&at, "a conflict needs one of `matches` and `equals`".into(), "write exactly one"));
        }
    }
    validate_tool_versions(cap, &err, &mut errs);
    for (i, a) in cap.also_reads.iter().enumerate() {
        let bad = a.dirs.iter().find(|d| {
            let rel = d.strip_prefix("~/").unwrap_or(d);
            RelPath::new(rel.to_string()).is_err()
        });
        if a.dirs.is_empty() || bad.is_some() || !matches!(a.kind, ArtifactKind::Skills | ArtifactKind::Commands) {
            errs.push(err(
                &[Seg::Key("also_reads"), Seg::Index(i)],
                format!(
                    "also_reads: `{}` is not a relative or `~/` directory of skills or commands",
                    bad.map_or("", |s| s)
                ),
                "write e.g. {\"kind\": \"skills\", \"dirs\": [\"~/.agents/skills\"], \"source\": ...}",
            ));
        }
    }
    if let Some(s) = &cap.sunset
        && !is_date(&s.date)
    {
        errs.push(err(
            &[Seg::Key("sunset"), Seg::Key("date")],
            format!("sunset.date `{}` is not a date", s.date),
            "write YYYY-MM-DD",
        ));
    }
    if let Err(e) = crate::manifest::resolver::validate(file, text, &cap.resolvers) {
        errs.push(e);
    }
    if let Err(m) = crate::manifest::surfaces::validate(&cap.settings) {
        errs.push(err(
            &[Seg::Key("settings")],
            m,
            "see `msd-install schema` for settings surfaces and their entry kinds",
        ));
    }
    if let Err(m) = crate::manifest::surfaces::validate_hook_files(&cap.hook_files) {
        errs.push(err(
            &[Seg::Key("hook_files")],
            m,
            "each hook file names a path, its scopes and `msd_run hook` arguments",
        ));
    }
    // In the order a reader meets them (a stable sort: problems of one place keep the checks' order).
    errs.sort_by_key(|e| (e.line, e.col));
    if errs.is_empty() { Ok(()) } else { Err(ManifestErrors(errs)) }
}

/// `tool_versions`: each range well formed and non-empty, no two overlapping, each with entries
/// and a source; the choice among them needs `tested`, and `tested` must not straddle two
/// tables (its oldest and newest version would need different tool names).
fn validate_tool_versions(
    cap: &Capability,
    err: &impl Fn(&[Seg<'_>], String, &str) -> ManifestError,
    errs: &mut Vec<ManifestError>,
) {
    if cap.tool_versions.is_empty() {
        return;
    }
    let at = |i: usize, key: &'static str| [Seg::Key("tool_versions"), Seg::Index(i), Seg::Key(key)];
    let is_version = |v: &str| parse_version(v).is_some() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let mut ranges: Vec<(usize, [u64; 3], [u64; 3])> = Vec::new();
    for (i, r) in cap.tool_versions.iter().enumerate() {
        let mut ok = true;
        for (key, v) in [("min", Some(&r.min)), ("max", r.max.as_ref())] {
            if let Some(v) = v
                && !is_version(v)
            {
                errs.push(err(&at(i, key), format!("tool_versions[{i}].{key} `{v}` is not a version"), "write N.N.N"));
                ok = false;
            }
        }
        if ok && r.contains(&r.min) != Some(true) {
            errs.push(err(
                &at(i, "max"),
                format!("tool_versions[{i}]: the range {} is empty", r.range()),
                "min is the first version the entries hold for, max the last (or leave max out)",
            ));
            ok = false;
        }
        if r.tools.is_empty() {
            errs.push(err(
                &at(i, "tools"),
                format!("tool_versions[{i}] changes no tool"),
                "name the tools that changed",
            ));
        }
        if r.sources.is_empty() {
            errs.push(err(
                &at(i, "sources"),
                format!("tool_versions[{i}] cites no source"),
                "cite where the runtime's packaged source shows the change (package@version:path:line)",
            ));
        }
        if ok {
            let hi = r.max.as_deref().map_or(Some([u64::MAX; 3]), parse_version);
            if let (Some(lo), Some(hi)) = (parse_version(&r.min), hi) {
                ranges.push((i, lo, hi));
            }
        }
    }
    ranges.sort_by_key(|r| r.1);
    for w in ranges.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if b.1 <= a.2 {
            errs.push(err(
                &at(b.0, "min"),
                format!(
                    "tool_versions[{}] ({}) overlaps tool_versions[{}] ({})",
                    b.0,
                    cap.tool_versions[b.0].range(),
                    a.0,
                    cap.tool_versions[a.0].range()
                ),
                "one version range per change; end the earlier one before the later begins",
            ));
        }
    }
    match &cap.tested {
        None => errs.push(err(
            &[Seg::Key("tool_versions")],
            "tool_versions needs `tested`: the range holding tested.max is the one an install applies".into(),
            "add the tested range the real-runtime tier proved",
        )),
        Some(t) => {
            let pick = |v: &str| cap.tool_versions.iter().position(|r| r.contains(v) == Some(true));
            if pick(&t.min) != pick(&t.max) {
                errs.push(err(
                    &[Seg::Key("tested"), Seg::Key("min")],
                    format!(
                        "tested range {} spans a change of the tool table (tool_versions): its versions need different tool names",
                        t.range()
                    ),
                    "narrow the tested range to one side of the change",
                ));
            }
        }
    }
}

/// Checks a set of manifests together: unique ids.
pub fn validate_set(caps: &[(String, Capability)]) -> Result<(), ManifestError> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for (file, cap) in caps {
        if let Some(prev) = seen.insert(&cap.id, file) {
            return Err(ManifestError {
                file: file.clone(),
                line: 1,
                col: 1,
                message: format!("runtime id `{}` is also defined in {prev}", cap.id),
                hint: "each runtime id must be unique".into(),
            });
        }
    }
    if caps.is_empty() {
        return Err(ManifestError {
            file: "runtimes/".into(),
            line: 0,
            col: 0,
            message: "no runtime manifests found".into(),
            hint: "a runtimes directory holds `<id>/capability.json` files".into(),
        });
    }
    crate::manifest::resolver::validate_set(caps.iter().map(|(f, c)| (f.as_str(), &c.resolvers[..])))?;
    for (file, cap) in caps {
        if let Some(next) = cap.sunset.as_ref().and_then(|s| s.successor.as_ref())
            && !caps.iter().any(|(_, c)| &c.id == next && c.sunset.is_none())
        {
            return Err(ManifestError {
                file: file.clone(),
                line: 1,
                col: 1,
                message: format!("sunset.successor `{next}` is no runtime of this set, or is sunset too"),
                hint: "name the id of a runtime that replaces it".into(),
            });
        }
        for host in &cap.hook_hosts {
            validate_hook_host(file, host, caps)?;
        }
    }
    Ok(())
}

/// A host's helpers as [`HookHost::helpers`] names them: `~/<home>/<core>/bin/msd_run` and
/// `<local dir>/<core>/bin/msd_run`.
pub fn host_helpers(host: &Capability) -> Vec<String> {
    let bin = "bin/msd_run";
    let mut out = vec![format!("~/{}/{}/{bin}", host.home.default, host.core_dir(Scope::Global))];
    if let Some(local) = &host.local {
        let core = host.core_dir(Scope::Local);
        out.push(match local.dir.trim_matches('/') {
            "" | "." => format!("{core}/{bin}"),
            dir => format!("{dir}/{core}/{bin}"),
        });
    }
    out
}

fn validate_hook_host(file: &str, host: &HookHost, caps: &[(String, Capability)]) -> Result<(), ManifestError> {
    let err = |message: String, hint: String| ManifestError { file: file.to_string(), line: 1, col: 1, message, hint };
    let Some((_, cap)) = caps.iter().find(|(_, c)| c.id == host.runtime) else {
        return Err(err(
            format!("hook_hosts names runtime `{}`, which has no manifest", host.runtime),
            "name a runtime of runtimes/".into(),
        ));
    };
    if host.marker.is_empty() || host.helpers.is_empty() {
        return Err(err(
            format!("hook_hosts `{}` needs a marker and at least one helper", host.runtime),
            "the marker is a payload field only the host sends; helpers are its msd_run paths".into(),
        ));
    }
    let valid = host_helpers(cap);
    if let Some(bad) = host.helpers.iter().find(|h| !valid.contains(h)) {
        return Err(err(
            format!("hook_hosts `{}`: `{bad}` is not where that runtime's msd helper is installed", host.runtime),
            format!("its helpers are {}", valid.join(", ")),
        ));
    }
    Ok(())
}

/// The JSON Schema of a capability manifest, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Capability);
    let mut s = serde_json::to_string_pretty(&schema).expect("schema serializes");
    s.push('\n');
    s
}
