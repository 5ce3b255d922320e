//! A team's msd in the repository (issue 36): `msd.toml` at the project root says which runtimes
//! every teammate installs locally, with which profile and content, and which msd-install
//! versions the project accepts.
//!
//! This module finds the file (at the project `--local` finds), parses it strictly (unknown keys,
//! unknown runtimes, a bad requirement or profile: an error with the file, the line and what to
//! do, before anything is written), checks this binary's version against it, and turns it into
//! the install arguments it stands for, with the command line's flags winning. The `.gitignore`
//! block lives in [`gitignore`]; the commands are `check` (no subcommand,
//! [`crate::cli::commands::project_check`]) and `init-project`
//! ([`crate::cli::commands::init_project`]). This module depends on no command and not on the
//! CLI's error type: its errors are its own ([`ProjectError`]).

pub(crate) mod gitignore;

use std::path::{Path, PathBuf};

use msd_core::fs::fsx;

use crate::cli::args::InstallArgs;
use crate::pipeline::load::{Content, LoadedRuntime};

/// The file's name at the project root.
pub(crate) const FILE_NAME: &str = "msd.toml";

/// The profile an `msd.toml` without `profile` installs.
pub(crate) const DEFAULT_PROFILE: &str = "full";

/// What is wrong with a project's `msd.toml`, or with this binary for it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProjectError {
    /// The file is malformed or names something unknown; nothing was written.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The msd.toml.
        path: PathBuf,
        /// The 1-based line, where there is one.
        line: Option<usize>,
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// This msd-install's version is outside the project's `version`.
    #[error(
        "this is msd-install {have}; the project accepts `{required}` ({}:{line}); nothing was written",
        path.display()
    )]
    Version {
        /// The msd.toml.
        path: PathBuf,
        /// The line of `version`.
        line: usize,
        /// The requirement as written.
        required: String,
        /// This binary's version.
        have: String,
    },
    /// A command that needs an msd.toml found none.
    #[error("no {FILE_NAME} in the project {} (found by {found_by})", dir.display())]
    Missing {
        /// The project root.
        dir: PathBuf,
        /// What marked it.
        found_by: &'static str,
    },
    /// `init-project` would replace an existing msd.toml.
    #[error("{} exists; nothing was written", path.display())]
    Exists {
        /// The msd.toml.
        path: PathBuf,
    },
    /// `init-project` found nothing (or nothing it can say in one file) to write.
    #[error("{message}")]
    Nothing {
        /// What it found.
        message: String,
        /// What to do.
        hint: String,
    },
    /// Reading or writing a project file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl ProjectError {
    /// What to do about it.
    pub(crate) fn hint(&self) -> String {
        match self {
            ProjectError::Invalid { hint, .. } | ProjectError::Nothing { hint, .. } => hint.clone(),
            ProjectError::Version { required, .. } => format!(
                "install an msd-install that matches `{required}` (`cargo install --git <repository> msd-install --tag v<version>`, \
                 or a release archive of that version), or change `version` in {FILE_NAME} if the team moves on"
            ),
            ProjectError::Missing { .. } => {
                "write one from what is installed here with `msd-install init-project`, or by hand \
                 (see `msd-install schema --kind project`); run from inside the project or pass --project DIR"
                    .into()
            }
            ProjectError::Exists { .. } => "pass --force to replace it (your file is then overwritten)".into(),
            ProjectError::Io { .. } => "check that the file is readable and its directory writable".into(),
        }
    }
}

/// A parsed, validated `msd.toml`.
#[derive(Debug, Clone)]
pub(crate) struct ProjectFile {
    /// The file.
    pub path: PathBuf,
    /// The project it belongs to.
    pub root: ProjectRoot,
    /// Runtime ids, lower-case, in the file's order, without duplicates.
    pub runtimes: Vec<String>,
    /// The profile (absent: [`DEFAULT_PROFILE`]) and its line.
    pub profile: Option<(String, usize)>,
    /// The requirement as written, parsed, and its line.
    pub version: Option<(String, semver::VersionReq, usize)>,
    /// The content tree (absolute: the file's relative path under the project root).
    pub content: Option<PathBuf>,
    /// Keep a marked block of the local install paths in `.gitignore`.
    pub gitignore: bool,
}

/// The JSON Schema of `msd.toml` (`msd-install schema --kind project`): derived from this shape.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "msd.toml", description = "A project's msd-install settings, at the project root (issue 36).")]
pub(crate) struct SchemaDoc {
    /// What every teammate installs into this project with `msd-install` (no flags).
    pub install: SchemaInstall,
}

/// The `[install]` table.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SchemaInstall {
    /// Runtime ids as `msd-install runtimes` lists them; each is installed locally (it must have a
    /// project-local scope).
    #[schemars(length(min = 1))]
    pub runtimes: Vec<String>,
    /// What to install: core, standard or full (the content's profiles; default full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The msd-install versions this project accepts, a semver requirement (`">=0.4, <0.5"`); a
    /// binary outside it refuses to install (exit 6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A content tree in the repository (relative to the project root) instead of the embedded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Keep the paths msd installs out of git: one marked block in the project's `.gitignore`.
    #[serde(default)]
    pub gitignore: bool,
}

/// The schema, with the runtime ids that have a local scope as the enum of `runtimes`.
pub(crate) fn schema(runtimes: &[LoadedRuntime]) -> String {
    let mut v = serde_json::to_value(schemars::schema_for!(SchemaDoc)).expect("schema serializes");
    let ids: Vec<&str> =
        runtimes.iter().filter(|r| r.capability.local.is_some()).map(|r| r.capability.id.as_str()).collect();
    if let Some(items) = v.pointer_mut("/$defs/SchemaInstall/properties/runtimes/items") {
        items["enum"] = serde_json::json!(ids);
    }
    // TOML has no null: an optional key is absent, never `null`.
    if let Some(serde_json::Value::Object(props)) = v.pointer_mut("/$defs/SchemaInstall/properties") {
        for prop in props.values_mut() {
            if let Some(serde_json::Value::Array(types)) = prop.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    prop["type"] = types[0].clone();
                }
            }
        }
    }
    serde_json::to_string_pretty(&v).expect("json")
}

/// The project of `--local`: `--project DIR`, else the nearest parent of the current directory
/// holding `.git` or `.planning/`, else the current directory itself.
pub(crate) fn project_root(project: Option<&Path>, cwd: &Path) -> ProjectRoot {
    if let Some(p) = project {
        let dir = if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
        return ProjectRoot { dir, found_by: "--project" };
    }
    for dir in cwd.ancestors() {
        if fsx::lexists(&dir.join(".git")) {
            return ProjectRoot { dir: dir.to_path_buf(), found_by: ".git" };
        }
        if fsx::is_dir(&dir.join(".planning")) {
            return ProjectRoot { dir: dir.to_path_buf(), found_by: ".planning/" };
        }
    }
    ProjectRoot { dir: cwd.to_path_buf(), found_by: "the current directory" }
}

/// Where `--local` installs and why.
#[derive(Debug, Clone)]
pub(crate) struct ProjectRoot {
    /// The directory.
    pub dir: PathBuf,
    /// What marked it (`.git`, `.planning/`, `--project`, or the current directory).
    pub found_by: &'static str,
}

/// The project of `--project DIR` (or the one `--local` finds from `cwd`) and its msd.toml, if
/// it has one.
pub(crate) fn find(project: Option<&Path>, cwd: &Path) -> (ProjectRoot, Option<PathBuf>) {
    let root = project_root(project, cwd);
    let path = root.dir.join(FILE_NAME);
    let found = fsx::is_file(&path).then_some(path);
    (root, found)
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1
}

/// Reads and parses `path` (the msd.toml of `root`) strictly against `runtimes`.
pub(crate) fn load(path: &Path, root: ProjectRoot, runtimes: &[LoadedRuntime]) -> Result<ProjectFile, ProjectError> {
    let bytes = fsx::read(path).map_err(|source| ProjectError::Io { path: path.to_path_buf(), source })?;
    let text = String::from_utf8(bytes).map_err(|e| ProjectError::Invalid {
        path: path.to_path_buf(),
        line: None,
        message: format!("not UTF-8 text ({e})"),
        hint: "save the file as UTF-8".into(),
    })?;
    parse(path, &text, root, runtimes)
}

/// Parses the text of an msd.toml. Every rule fails with the line it concerns.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    root: ProjectRoot,
    runtimes: &[LoadedRuntime],
) -> Result<ProjectFile, ProjectError> {
    let err = |line: Option<usize>, message: String, hint: &str| ProjectError::Invalid {
        path: path.to_path_buf(),
        line,
        message,
        hint: hint.to_string(),
    };
    let at = |span: Option<std::ops::Range<usize>>| span.map(|s| line_of(text, s.start));
    let doc = toml_edit::Document::parse(text).map_err(|e| {
        err(
            at(e.span()),
            format!("not valid TOML: {}", e.message()),
            "fix the syntax (see `msd-install schema --kind project`)",
        )
    })?;
    let top = doc.as_table();
    for (key, _) in top.iter() {
        if key != "install" {
            let line = at(top.key(key).and_then(|k| k.span()));
            return Err(err(
                line,
                format!("unknown key `{key}`"),
                "msd.toml has one table, [install] (see `msd-install schema --kind project`)",
            ));
        }
    }
    let Some(install) = top.get("install") else {
        return Err(err(
            Some(1),
            "no [install] table".into(),
            "add [install] with `runtimes = [\"claude\"]` (see `msd-install schema --kind project`)",
        ));
    };
    let Some(install) = install.as_table_like() else {
        return Err(err(at(install.span()), "`install` must be a table".into(), "write it as [install]"));
    };
    let key_line = |k: &str| at(install.get_key_value(k).and_then(|(key, _)| key.span()));
    let known = ["runtimes", "profile", "version", "content", "gitignore"];
    for (key, _) in install.iter() {
        if !known.contains(&key) {
            let hint = format!("the keys of [install] are {}", known.join(", "));
            return Err(err(key_line(key), format!("unknown key `install.{key}`"), &hint));
        }
    }
    let string = |k: &str| -> Result<Option<(String, usize)>, ProjectError> {
        let Some(item) = install.get(k) else { return Ok(None) };
        let line = key_line(k).unwrap_or(1);
        match item.as_str() {
            Some(s) => Ok(Some((s.to_string(), line))),
            None => Err(err(Some(line), format!("`{k}` must be a string"), "quote it: key = \"value\"")),
        }
    };
    // runtimes
    let Some(item) = install.get("runtimes") else {
        return Err(err(
            at(install.get_key_value("runtimes").and_then(|(k, _)| k.span())).or(Some(1)),
            "[install] has no `runtimes`".into(),
            "list the runtimes the team uses: runtimes = [\"claude\", \"codex\"] (ids as `msd-install runtimes` lists them)",
        ));
    };
    let rt_line = key_line("runtimes").unwrap_or(1);
    let Some(list) = item.as_array() else {
        return Err(err(
            Some(rt_line),
            "`runtimes` must be an array of runtime ids".into(),
            "write runtimes = [\"claude\"]",
        ));
    };
    let mut ids = Vec::new();
    for v in list.iter() {
        let line = at(v.span()).or(Some(rt_line));
        let Some(id) = v.as_str() else {
            return Err(err(line, "`runtimes` must hold strings".into(), "write runtimes = [\"claude\"]"));
        };
        let id = id.trim().to_ascii_lowercase();
        let valid: Vec<&str> =
            runtimes.iter().filter(|r| r.capability.local.is_some()).map(|r| r.capability.id.as_str()).collect();
        match runtimes.iter().find(|r| r.capability.id == id) {
            None => {
                return Err(err(
                    line,
                    format!("unknown runtime `{id}`"),
                    &format!("runtimes with a project-local install: {}", valid.join(", ")),
                ));
            }
            Some(r) if r.capability.local.is_none() => {
                return Err(err(
                    line,
                    format!("runtime `{id}` has no project-local install, and msd.toml installs into the project"),
                    &format!(
                        "remove it from msd.toml (install it globally by hand); runtimes with a project-local install: {}",
                        valid.join(", ")
                    ),
                ));
            }
            Some(_) => {}
        }
        if ids.contains(&id) {
            return Err(err(line, format!("runtime `{id}` is listed twice"), "list each runtime once"));
        }
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(err(
            Some(rt_line),
            "`runtimes` is empty".into(),
            "list at least one runtime, e.g. runtimes = [\"claude\"]",
        ));
    }
    // profile: its name is checked against the content's profiles once the content is loaded.
    let profile = string("profile")?.map(|(p, l)| (p.trim().to_ascii_lowercase(), l));
    if let Some((p, l)) = &profile
        && (p.is_empty() || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(err(Some(*l), format!("`{p}` is not a profile name"), "use core, standard or full"));
    }
    // version
    let version = match string("version")? {
        None => None,
        Some((req, line)) => match semver::VersionReq::parse(&req) {
            Ok(parsed) => Some((req, parsed, line)),
            Err(e) => {
                return Err(err(
                    Some(line),
                    format!("`{req}` is not a version requirement ({e})"),
                    "write a semver requirement such as \">=0.4, <0.5\" or \"^0.4\"",
                ));
            }
        },
    };
    // content
    let content = match string("content")? {
        None => None,
        Some((rel, line)) => {
            let p = Path::new(&rel);
            if rel.is_empty() || p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(err(
                    Some(line),
                    format!("`content = \"{rel}\"` must be a relative path inside the project"),
                    "name the content tree relative to the project root, e.g. content = \"tools/msd-content\"",
                ));
            }
            let dir = root.dir.join(p);
            if !fsx::is_dir(&dir) {
                return Err(err(
                    Some(line),
                    format!("the content tree {} does not exist", dir.display()),
                    "commit the content tree at that path, or remove `content` to install the embedded content",
                ));
            }
            Some(dir)
        }
    };
    // gitignore
    let gitignore = match install.get("gitignore") {
        None => false,
        Some(item) => match item.as_bool() {
            Some(b) => b,
            None => {
                return Err(err(
                    key_line("gitignore"),
                    "`gitignore` must be true or false".into(),
                    "write gitignore = true (unquoted)",
                ));
            }
        },
    };
    Ok(ProjectFile { path: path.to_path_buf(), root, runtimes: ids, profile, version, content, gitignore })
}

impl ProjectFile {
    /// The profile this file installs.
    pub(crate) fn profile_name(&self) -> &str {
        self.profile.as_ref().map(|(p, _)| p.as_str()).unwrap_or(DEFAULT_PROFILE)
    }

    /// Refuses when this binary's version is outside `version`.
    pub(crate) fn check_version(&self) -> Result<(), ProjectError> {
        let Some((req, parsed, line)) = &self.version else { return Ok(()) };
        let have = env!("CARGO_PKG_VERSION");
        if accepts(parsed, have) {
            return Ok(());
        }
        Err(ProjectError::Version { path: self.path.clone(), line: *line, required: req.clone(), have: have.into() })
    }

    /// Whether the requirement accepts `version` (any version without a requirement).
    pub(crate) fn accepts(&self, version: &str) -> bool {
        self.version.as_ref().is_none_or(|(_, parsed, _)| accepts(parsed, version))
    }

    /// Refuses a `profile` the content does not have (at its line).
    pub(crate) fn check_profile(&self, content: &Content) -> Result<(), ProjectError> {
        let Some((p, line)) = &self.profile else { return Ok(()) };
        let Some(profiles) = &content.profiles else { return Ok(()) };
        let mut valid: Vec<String> = profiles.profiles.iter().map(|x| x.name.clone()).collect();
        valid.push(crate::pipeline::profile::MINIMAL.into());
        if valid.contains(p) {
            return Ok(());
        }
        Err(ProjectError::Invalid {
            path: self.path.clone(),
            line: Some(*line),
            message: format!("unknown profile `{p}`"),
            hint: format!("profiles of the content: {}", valid.join(", ")),
        })
    }
}

fn accepts(req: &semver::VersionReq, version: &str) -> bool {
    semver::Version::parse(version).is_ok_and(|v| req.matches(&v))
}

/// An install that follows an msd.toml: the arguments it stands for, and what the command line
/// changed.
#[derive(Debug, Clone)]
pub(crate) struct Following {
    /// The file.
    pub file: ProjectFile,
    /// The install arguments: the file's, with the command line's flags over them.
    pub args: InstallArgs,
    /// What the command line changed (`--profile full (msd.toml: core)`).
    pub overridden: Vec<String>,
}

/// What an install does with a project's msd.toml.
#[derive(Debug)]
pub(crate) enum Plan {
    /// No msd.toml in the project: the command line alone.
    None,
    /// An msd.toml the command line sets aside (`--global`, `--config-dir`): the reason.
    Ignored {
        /// The file.
        path: PathBuf,
        /// Which flag.
        flag: &'static str,
    },
    /// Follow it.
    Follow(Box<Following>),
}

/// Decides how an install of `args` treats the project's msd.toml: parses and checks it (an
/// error before anything is written), and merges it under the command line.
pub(crate) fn for_install(args: &InstallArgs, runtimes: &[LoadedRuntime], cwd: &Path) -> Result<Plan, ProjectError> {
    let t = &args.target;
    let (root, path) = find(t.place.project.as_deref(), cwd);
    let Some(path) = path else { return Ok(Plan::None) };
    if t.place.global || t.place.config_dir.is_some() {
        let flag = if t.place.global { "--global" } else { "--config-dir" };
        return Ok(Plan::Ignored { path, flag });
    }
    let file = load(&path, root, runtimes)?;
    file.check_version()?;
    let mut a = args.clone();
    let mut overridden = Vec::new();
    if t.all {
        overridden.push(format!("--all (msd.toml: {})", file.runtimes.join(", ")));
    } else if !t.runtime.is_empty() {
        let given: Vec<String> = t.runtime.iter().map(|i| i.trim().to_ascii_lowercase()).collect();
        if given != file.runtimes {
            overridden.push(format!(
                "--runtime {} (msd.toml: {})",
                given.join(" --runtime "),
                file.runtimes.join(", ")
            ));
        }
    } else {
        a.target.runtime = file.runtimes.clone();
    }
    a.target.place.local = true;
    match args.profile.given() {
        Some(p) if p != file.profile_name() => {
            overridden.push(format!("--profile {p} (msd.toml: {})", file.profile_name()));
        }
        Some(_) => {}
        None => a.profile.profile = Some(file.profile_name().to_string()),
    }
    match (&args.sources.content, &file.content) {
        (Some(c), Some(f)) if c != f => {
            overridden.push(format!("--content {} (msd.toml: {})", c.display(), f.display()));
        }
        (Some(c), None) => overridden.push(format!("--content {} (msd.toml: the embedded content)", c.display())),
        (None, Some(f)) => a.sources.content = Some(f.clone()),
        _ => {}
    }
    Ok(Plan::Follow(Box::new(Following { file, args: a, overridden })))
}

/// The summary's first lines for an install that follows (or sets aside) an msd.toml.
pub(crate) fn summary_lines(plan: &Plan) -> String {
    match plan {
        Plan::None => String::new(),
        Plan::Ignored { path, flag } => {
            format!("not following {}: {flag} installs outside the project\n", path.display())
        }
        Plan::Follow(f) => {
            let file = &f.file;
            let mut s = format!(
                "following {}: {} locally, profile {}, {} content\n",
                file.path.display(),
                file.runtimes.join(", "),
                file.profile_name(),
                if file.content.is_some() { "the project's" } else { "the embedded" }
            );
            for o in &f.overridden {
                s.push_str(&format!("  the command line wins: {o}\n"));
            }
            s
        }
    }
}

/// The `msd_toml` value of `install --json`.
pub(crate) fn summary_json(plan: &Plan) -> serde_json::Value {
    match plan {
        Plan::None => serde_json::Value::Null,
        Plan::Ignored { path, flag } => serde_json::json!({"path": path, "followed": false, "ignored_because": flag}),
        Plan::Follow(f) => serde_json::json!({
            "path": f.file.path,
            "followed": true,
            "runtimes": f.file.runtimes,
            "profile": f.file.profile_name(),
            "content": f.file.content,
            "gitignore": f.file.gitignore,
            "overridden": f.overridden,
        }),
    }
}
