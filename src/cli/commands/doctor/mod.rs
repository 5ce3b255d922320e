//! `msd-install doctor`: does msd work in my runtimes, on this machine?
//!
//! For each runtime x scope with an msd install (or each runtime named with `-r`) it checks what
//! a user otherwise finds out mid-session: the runtime's CLI on PATH and whether its version is
//! inside the range the real-runtime tier proved (`tested` in the manifest); what the CLI itself
//! lists as loaded, where the manifest names an offline listing call, against the names msd
//! wrote; every hook msd registered, run the way the runtime runs it (its shell, a sample event
//! on stdin) with the answer checked; every MCP server msd registered (Codex's status line),
//! started as the runtime starts it and asked for its tools and its line; the helper's version against the installed content's;
//! copies that shadow msd's in directories the runtime reads too (`also_reads`); missing files
//! and settings entries (as `verify` counts them). One line per finding with what to do;
//! `--json` is [`DoctorDoc`]. Exit 0 only when no finding is a problem: a CLI that is not on
//! this machine leaves checks undone (reported) and is not a problem by itself.
//!
//! Reads only: it runs the runtime's CLI and msd's hooks, which write nothing msd owns.

mod call;
mod conflicts;
mod listing;
mod mcp;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::Serialize;

use super::{env, project_root};
use crate::apply;
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
use crate::cli::args::DoctorArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Arity, Globals, Runtimes, Settings, Subcommand, Takes};
use crate::pipeline;
use crate::pipeline::Sources;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Environment, Target};
use call::call;
use msd_core::fs::fsx;
use msd_core::manifest::capability::{ArtifactKind, Capability, Listing, Scope, parse_version};
use msd_core::shell::Os;

/// How long a hook may take (the runtimes' own defaults are 10-60 s; msd's hooks answer in ms).
const HOOK_TIMEOUT: Duration = Duration::from_secs(15);

/// `doctor --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct DoctorDoc {
    /// The version of this document's shape.
    pub schema_version: u32,
    /// No finding is a problem.
    pub ok: bool,
    /// The project whose local installs were looked at.
    pub project: PathBuf,
    /// One entry per runtime x scope checked.
    pub targets: Vec<DoctorTarget>,
}

/// One runtime x scope.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct DoctorTarget {
    /// Runtime id.
    pub runtime: String,
    /// `global` or `local`.
    pub scope: String,
    /// The home.
    pub home: PathBuf,
    /// Whether msd is installed there.
    pub installed: bool,
    /// The runtime's CLI on this machine.
    pub cli: Option<CliReport>,
    /// What was found, one line each.
    pub findings: Vec<Finding>,
}

/// The runtime's CLI as found on PATH.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct CliReport {
    /// The executable's name.
    pub command: String,
    /// Where it is on PATH (absent: not on PATH).
    pub path: Option<PathBuf>,
    /// The version it printed.
    pub version: Option<String>,
    /// The range the tier proved, `min` or `min-max`.
    pub tested: String,
    /// Whether `version` is inside `tested`.
    pub in_range: Option<bool>,
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Level {
    /// Something is wrong: doctor exits 1.
    Problem,
    /// A check that could not be made here (no CLI on PATH, no listing call known).
    NotChecked,
    /// Worth knowing, nothing to fix (a sunset runtime).
    Note,
}

/// One finding.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Finding {
    /// How much it matters.
    pub level: Level,
    /// Which check: `install`, `cli`, `listing`, `hook`, `mcp`, `helper`, `shadow`, `conflict`,
    /// `files`, `settings`, `sunset`.
    pub check: String,
    /// What was found.
    pub message: String,
    /// What to do.
    pub hint: String,
}

fn finding(level: Level, check: &str, message: String, hint: impl Into<String>) -> Finding {
    Finding { level, check: check.to_string(), message, hint: hint.into() }
}

impl Subcommand for DoctorArgs {
    const NAME: &'static str = "doctor";
    const RUNTIME: Arity = Arity::Many;

    fn json(&self) -> Takes {
        Takes::Yes
    }

    /// `-r` given before `doctor` counts as its own.
    fn settings(&self, base: Settings, g: &Globals) -> Settings {
        base.runtimes(if self.runtime.is_empty() { &g.runtime } else { &self.runtime }, false)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `doctor`.
pub(crate) fn run(s: &Settings, args: &DoctorArgs) -> Result<(), Error> {
    let doc = collect(s, args)?;
    if s.output.json {
        s.output.document(&doc);
    } else {
        s.output.text(&render(&doc));
    }
    if doc.ok { Ok(()) } else { Err(Error::CheckFailed(String::new())) }
}

fn collect(s: &Settings, args: &DoctorArgs) -> Result<DoctorDoc, Error> {
    let runtimes = pipeline::load_runtimes(&Sources { content: None, runtimes: args.runtimes_dir.clone() })?;
    let env = env()?;
    let root = project_root(args.project.as_deref(), &env.cwd);
    let named = match &s.runtimes {
        Runtimes::Named(ids) => ids.clone(),
        Runtimes::Default | Runtimes::All => Vec::new(),
    };
    let timeout = Duration::from_secs(args.timeout.max(1));
    let chosen: Vec<&LoadedRuntime> =
        if named.is_empty() { runtimes.iter().collect() } else { pipeline::select(&runtimes, &named, false)? };
    let mut targets = Vec::new();
    for rt in chosen {
        let cap = &rt.capability;
        // Every install of the runtime here first: a CLI lists both scopes at once.
        let mut installs = Vec::new();
        for scope in [Scope::Global, Scope::Local] {
            if scope == Scope::Local && cap.local.is_none() {
                continue;
            }
            let mut senv = env.clone();
            if scope == Scope::Local {
                senv.cwd = root.dir.clone();
            }
            let Ok(t) = target::resolve(cap, scope, None, &senv) else { continue };
            let manifest = FileManifest::read(&t.home, cap, scope).map_err(apply::plan::PlanError::from)?;
            let Some(m) = manifest else { continue };
            installs.push((t, m, senv));
        }
        for (i, (t, m, senv)) in installs.iter().enumerate() {
            let others: Vec<(Scope, &FileManifest)> =
                installs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, (ot, om, _))| (ot.scope, om)).collect();
            let run = Run { env: senv, project: &root.dir, timeout };
            targets.push(check_target(cap, t, m, &others, &run)?);
        }
        if installs.is_empty() && !named.is_empty() {
            let (home, _) = target::global_home(cap, None, &env);
            targets.push(DoctorTarget {
                runtime: cap.id.clone(),
                scope: "global".into(),
                home,
                installed: false,
                cli: None,
                findings: vec![finding(
                    Level::Problem,
                    "install",
                    format!("msd is not installed for {} (global, or local in {})", cap.title, root.dir.display()),
                    format!("`msd-install -r {}` installs it (add --local for this project)", cap.id),
                )],
            });
        }
    }
    let ok = targets.iter().all(|t| t.findings.iter().all(|f| f.level != Level::Problem));
    Ok(DoctorDoc { schema_version: crate::cli::versioned::SCHEMA_VERSION, ok, project: root.dir, targets })
}

/// What every check of one target runs with.
struct Run<'a> {
    /// The environment the target was resolved in (and the CLI and hooks run with).
    env: &'a Environment,
    /// The project, where the CLI and hooks run.
    project: &'a Path,
    /// How long one CLI call may take.
    timeout: Duration,
}

fn check_target(
    cap: &Capability,
    t: &Target,
    m: &FileManifest,
    others: &[(Scope, &FileManifest)],
    run: &Run<'_>,
) -> Result<DoctorTarget, Error> {
    let (env, project) = (run.env, run.project);
    let mut findings = Vec::new();
    let reinstall =
        format!("`msd-install -r {}{}` writes it again", cap.id, if t.scope == Scope::Local { " --local" } else { "" });
    if let Some(s) = &cap.sunset {
        findings.push(finding(Level::Note, "sunset", s.notice.clone(), "see `msd-install runtimes`"));
    }

    // Files and settings entries, as `verify` counts them.
    let v = apply::verify(cap, t, false, &env.home)?;
    if !v.missing.is_empty() {
        findings.push(finding(
            Level::Problem,
            "files",
            format!("{} file(s) msd wrote are gone (first: {})", v.missing.len(), v.missing[0]),
            reinstall.clone(),
        ));
    }
    if !v.settings.is_empty() {
        findings.push(finding(
            Level::Problem,
            "settings",
            format!("msd's entries in {} settings file(s) are missing or changed", v.settings.len()),
            format!("`msd-install verify -r {}` shows them; {reinstall}", cap.id),
        ));
    }

    // The helper against the installed content.
    let core = t.home.join(cap.core_dir(t.scope).as_str());
    let helper_rel = format!("{}/{}", cap.core_dir(t.scope), crate::pipeline::synth::helper_path(Os::HOST));
    if m.files.iter().any(|f| f.path.as_str() == helper_rel) {
        let helper = t.home.join(&helper_rel);
        let content = fsx::read_to_string(&core.join("VERSION")).map(|s| s.trim().to_string()).unwrap_or_default();
        match call(Command::new(&helper).arg("--version"), "", None, run.timeout) {
            Err(e) => findings.push(finding(
                Level::Problem,
                "helper",
                format!("the helper {} does not run ({e}): installed workflows and hooks call it", helper.display()),
                reinstall.clone(),
            )),
            Ok(out) => match parse_version(&out.stdout) {
                Some(v) if format!("{}.{}.{}", v[0], v[1], v[2]) == content => {}
                _ => findings.push(finding(
                    Level::Problem,
                    "helper",
                    format!(
                        "the helper says `{}` but the installed content is {content}",
                        out.stdout.trim().lines().next().unwrap_or("")
                    ),
                    reinstall.clone(),
                )),
            },
        }
    }

    // The CLI, its version and what it loads.
    let cli = check_cli(cap, t, m, others, run, &mut findings);

    // Hooks, run the way the runtime runs them.
    check_hooks(cap, t, run, &reinstall, &mut findings);
    // MCP servers (Codex's status line), started the way the runtime starts them.
    mcp::check(cap, t, run, &reinstall, &mut findings);

    // Other entries in the settings files that stop msd's from working.
    conflicts::check(cap, t, &env.home, &mut findings);
    conflicts::rival_hooks(cap, t, &mut findings);

    // Copies that shadow msd's.
    for a in &cap.also_reads {
        let names = written_names(cap, t.scope, m, a.kind);
        for dir in &a.dirs {
            let base = match dir.strip_prefix("~/") {
                Some(rel) => env.home.join(rel),
                None => project.join(dir),
            };
            let copies: Vec<&String> = names
                .iter()
                .filter(|name| {
                    let p = match a.kind {
                        ArtifactKind::Skills => base.join(name),
                        _ => base.join(format!("{name}.md")),
                    };
                    fsx::exists(&p) && !is_inside(&p, &t.home)
                })
                .collect();
            if copies.is_empty() {
                continue;
            }
            let first: Vec<&str> = copies.iter().take(3).map(|s| s.as_str()).collect();
            findings.push(finding(
                Level::Problem,
                "shadow",
                format!(
                    "{} holds {} {} with the names msd wrote ({}{}): {} reads {dir} too and sees each twice",
                    base.display(),
                    copies.len(),
                    a.kind.as_str(),
                    first.join(", "),
                    if copies.len() > first.len() { ", ..." } else { "" },
                    cap.title
                ),
                "remove those copies; when another runtime's msd install wrote them, keep one of the two installs",
            ));
        }
    }
    Ok(DoctorTarget {
        runtime: cap.id.clone(),
        scope: t.scope.as_str().to_string(),
        home: t.home.clone(),
        installed: true,
        cli,
        findings,
    })
}

/// A problem when the CLI's `version` lies in another range of the manifest's `tool_versions`
/// than the one the install applied (the range holding `tested.max`): the agents msd wrote name
/// tools as that version does not.
fn tool_table_finding(cap: &Capability, command: &str, version: &str) -> Option<Finding> {
    let applied = cap.tool_range();
    let here = cap.tool_versions.iter().find(|r| r.contains(version) == Some(true));
    if applied == here {
        return None;
    }
    let mut names: Vec<&str> =
        applied.into_iter().chain(here).flat_map(|r| r.tools.keys().map(String::as_str)).collect();
    names.sort_unstable();
    names.dedup();
    let written = match applied {
        Some(r) => format!("the tool names of {} {}", command, r.range()),
        None => "the tool names of the versions outside every listed range".to_string(),
    };
    let ranges: Vec<String> = cap.tool_versions.iter().map(|r| r.range()).collect();
    Some(finding(
        Level::Problem,
        "tools",
        format!(
            "{command} {version} names its tools otherwise than the version msd wrote its agents for: they use {written} ({} differ; ranges {})",
            names.join(", "),
            ranges.join(", ")
        ),
        format!(
            "use {command} {} (what msd was tested with), or expect the agents to declare tools this version calls otherwise",
            cap.tested.as_ref().map_or("", |t| t.max.as_str())
        ),
    ))
}

fn check_cli(
    cap: &Capability,
    t: &Target,
    m: &FileManifest,
    others: &[(Scope, &FileManifest)],
    run: &Run<'_>,
    findings: &mut Vec<Finding>,
) -> Option<CliReport> {
    let (env, project) = (run.env, run.project);
    let Some(tested) = &cap.tested else {
        findings.push(finding(
            Level::NotChecked,
            "cli",
            format!(
                "no CLI of {} is tested by msd's real-runtime tier: its version and what it loads were not checked",
                cap.title
            ),
            "see `msd-install runtimes` (TESTED)",
        ));
        return None;
    };
    let Some(command) = &tested.cli else {
        findings.push(finding(
            Level::NotChecked,
            "cli",
            format!(
                "{} is tested through {}, not a CLI: no version on this machine was checked",
                cap.title, tested.package
            ),
            "nothing to do",
        ));
        return None;
    };
    let mut report =
        CliReport { command: command.clone(), path: None, version: None, tested: tested.range(), in_range: None };
    let Some(path) = on_path(command, env) else {
        findings.push(finding(
            Level::NotChecked,
            "cli",
            format!("`{command}` is not on PATH: its version and what it loads were not checked"),
            format!(
                "install {} ({}) to check them, or ignore this if you do not use it here",
                tested.package,
                tested.range()
            ),
        ));
        return Some(report);
    };
    report.path = Some(path.clone());
    match call(Command::new(&path).args(&tested.version_args).current_dir(project), "", None, run.timeout) {
        Err(e) => findings.push(finding(
            Level::Problem,
            "cli",
            format!("`{command} {}` failed: {e}", tested.version_args.join(" ")),
            format!("check the {command} install"),
        )),
        Ok(out) => {
            let text = format!("{}{}", out.stdout, out.stderr);
            match parse_version(&text) {
                None => findings.push(finding(
                    Level::Problem,
                    "cli",
                    format!("`{command} {}` printed no version", tested.version_args.join(" ")),
                    format!("check the {command} install"),
                )),
                Some(v) => {
                    let version = format!("{}.{}.{}", v[0], v[1], v[2]);
                    let inside = tested.contains(&version);
                    if inside == Some(false) {
                        findings.push(finding(
                            Level::Problem,
                            "cli",
                            format!(
                                "{command} {version} is outside the range msd was tested with ({} {}, {}): its layout or hooks may have moved",
                                tested.package,
                                tested.range(),
                                tested.date
                            ),
                            format!(
                                "use {}@{} or check for a newer msd-install; report what breaks",
                                tested.package, tested.max
                            ),
                        ));
                    }
                    if let Some(f) = tool_table_finding(cap, command, &version) {
                        findings.push(f);
                    }
                    report.version = Some(version);
                    report.in_range = inside;
                }
            }
        }
    }
    if tested.listings.is_empty() {
        findings.push(finding(
            Level::NotChecked,
            "listing",
            format!("{command} has no offline listing msd knows: what it loaded was not compared with what msd wrote"),
            "nothing to do",
        ));
    }
    for l in &tested.listings {
        check_listing(cap, t, m, others, run, command, &path, l, findings);
    }
    Some(report)
}

/// Runs one listing call of the CLI and reports, per kind it lists, each name msd wrote that it
/// did not list and each name in msd's namespace that it listed and no msd install here wrote.
#[allow(clippy::too_many_arguments)]
fn check_listing(
    cap: &Capability,
    t: &Target,
    m: &FileManifest,
    others: &[(Scope, &FileManifest)],
    run: &Run<'_>,
    command: &str,
    path: &Path,
    l: &Listing,
    findings: &mut Vec<Finding>,
) {
    let project = run.project.display().to_string();
    let fill = |s: &str| s.replace("{{project}}", &project);
    let args: Vec<String> = l.args.iter().map(|a| fill(a)).collect();
    let shown = format!("`{command} {}`", args.join(" "));
    let mut cmd = Command::new(path);
    cmd.args(&args).current_dir(run.project).envs(&l.env);
    let out = match call(&mut cmd, &fill(&l.stdin), l.until.as_deref(), run.timeout) {
        Ok(out) if out.code.is_none_or(|c| c == 0) => out,
        Ok(out) => {
            findings.push(finding(
                Level::Problem,
                "listing",
                format!("{shown} exited {}{}", out.code.unwrap_or(-1), tail_of(&out.stderr)),
                format!("run it in {project} and read its errors"),
            ));
            return;
        }
        Err(e) => {
            findings.push(finding(
                Level::Problem,
                "listing",
                format!("{shown} failed: {e}"),
                format!(
                    "run it in {project}: a CLI that waits (for a login, a network, an update) is stopped after {} s (`--timeout`)",
                    run.timeout.as_secs()
                ),
            ));
            return;
        }
    };
    for listed in &l.lists {
        let kind = listed.kind;
        let written = written_names(cap, t.scope, m, kind);
        let other: Vec<String> = others.iter().flat_map(|(s, om)| written_names(cap, *s, om, kind)).collect();
        let items = match listing::items(listed, &out.stdout) {
            Ok(items) => items,
            Err(e) => {
                findings.push(finding(
                    Level::Problem,
                    "listing",
                    format!("{shown} could not be read: {e}"),
                    format!("run it in {project} and read what it prints"),
                ));
                // One finding for the call, not one per kind it lists.
                break;
            }
        };
        // This install's names of its other kinds: a CLI may list a skill as a command too.
        let also: Vec<String> =
            [ArtifactKind::Commands, ArtifactKind::Skills, ArtifactKind::Agents, ArtifactKind::Workflows]
                .into_iter()
                .filter(|k| *k != kind)
                .flat_map(|k| written_names(cap, t.scope, m, k))
                .collect();
        let c = listing::compare(&items, listing::scoped(listed), t.scope, &written, &also, &other);
        let what = kind.as_str().trim_end_matches('s');
        for name in &c.missing {
            findings.push(finding(
                Level::Problem,
                "listing",
                format!("{command} did not load the {what} `{name}` msd wrote ({shown} does not list it)"),
                format!(
                    "start {command} in {project} and read its warnings; `msd-install verify -r {}` shows changed files",
                    cap.id
                ),
            ));
        }
        for name in &c.extra {
            findings.push(finding(
                Level::Problem,
                "listing",
                format!(
                    "{command} loads a {what} `{name}` that no msd install of {} here wrote ({shown}): a leftover or another tool's copy",
                    cap.title
                ),
                format!("find it where {command} reads {} and remove it, or reinstall the msd that wrote it", kind.as_str()),
            ));
        }
    }
}

/// Every hook command msd registered in the settings files of `t`, as the file holds it now,
/// run with a sample event.
fn check_hooks(cap: &Capability, t: &Target, run: &Run<'_>, reinstall: &str, findings: &mut Vec<Finding>) {
    let (env, project, hook_timeout) = (run.env, run.project, HOOK_TIMEOUT.min(run.timeout));
    let Ok(Some(state)) = InstallState::read(&t.home, cap, t.scope) else { return };
    for (file, ledger) in &state.settings {
        let path = t.home.join(file.as_str());
        let current: Option<serde_json::Value> =
            fsx::read_to_string(&path).ok().and_then(|s| serde_json::from_str(&s).ok());
        for (id, entry) in ledger.entries.iter().filter(|(id, _)| id.starts_with("hook:")) {
            let mut ours = Vec::new();
            commands(&entry.value, None, &mut ours);
            // What the runtime runs: the file's command at the entry's place (the user may have
            // changed it), matched by the `msd_run ...` words after the helper.
            let mut theirs = Vec::new();
            if let Some(v) = &current {
                let mut at = v;
                for k in &entry.at {
                    at = at.get(k).unwrap_or(&serde_json::Value::Null);
                }
                commands(at, None, &mut theirs);
            }
            for cmd in ours {
                let run = if current.is_none() || theirs.contains(&cmd) {
                    Some(cmd.clone())
                } else {
                    let tail = cmd.split("msd_run").nth(1).map(str::trim);
                    theirs.iter().find(|c| tail.is_some_and(|tl| c.trim_end().ends_with(tl))).cloned()
                };
                let Some(run) = run else {
                    findings.push(finding(
                        Level::Problem,
                        "hook",
                        format!("msd's hook `{id}` is no longer in {}", path.display()),
                        reinstall.to_string(),
                    ));
                    continue;
                };
                if cfg!(windows) {
                    findings.push(finding(
                        Level::NotChecked,
                        "hook",
                        format!("hook `{id}` was not run (doctor runs hooks on Unix only)"),
                        "nothing to do",
                    ));
                    continue;
                }
                let mut c = Command::new("sh");
                c.arg("-c").arg(&run).current_dir(project).env("HOME", &env.home);
                for var in project_dir_vars(&run) {
                    c.env(var, project);
                }
                // The event the runtime sends there (the entry's key: `PreToolUse`,
                // `BeforeTool`, `SessionStart`), a harmless read of the project's README, with
                // the fields of each protocol msd_run reads (Claude's and Gemini's snake_case,
                // Copilot's camelCase).
                let readme = project.join("README.md");
                let event = serde_json::json!({
                    "session_id": "msd-doctor",
                    "sessionId": "msd-doctor",
                    "timestamp": 0,
                    "cwd": project,
                    "hook_event_name": entry.at.last().map_or("SessionStart", String::as_str),
                    "tool_name": "Read",
                    "tool_input": {"file_path": readme},
                    "toolName": "view",
                    "toolArgs": serde_json::json!({"path": readme}).to_string(),
                    "transcript_path": "",
                });
                match call(&mut c, &format!("{event}\n"), None, hook_timeout) {
                    Ok(out) if out.code == Some(0) && refuses(&out.stdout) => findings.push(finding(
                        Level::Problem,
                        "hook",
                        format!(
                            "hook `{id}` ({}) refuses a harmless read of {}: `{}`",
                            path.display(),
                            readme.display(),
                            out.stdout.trim()
                        ),
                        format!("`msd-install verify -r {}` shows whether its settings changed; {reinstall}", cap.id),
                    )),
                    Ok(out) if out.code == Some(0) && answer_parses(&out.stdout) => {}
                    Ok(out) => findings.push(finding(
                        Level::Problem,
                        "hook",
                        format!(
                            "hook `{id}` ({}) answered {}{}: `{run}`",
                            path.display(),
                            out.code.map_or_else(|| "no exit code".to_string(), |c| format!("exit {c}")),
                            tail_of(&out.stderr)
                        ),
                        reinstall.to_string(),
                    )),
                    Err(e) => findings.push(finding(
                        Level::Problem,
                        "hook",
                        format!("hook `{id}` ({}) did not answer: {e}", path.display()),
                        reinstall.to_string(),
                    )),
                }
            }
        }
    }
}

/// A hook's stdout is empty, text, or (when it starts with `{`) one JSON value.
fn answer_parses(stdout: &str) -> bool {
    let s = stdout.trim();
    !s.starts_with('{') || serde_json::from_str::<serde_json::Value>(s).is_ok()
}

/// A hook's JSON answer refuses the call, in any protocol msd_run speaks (`decision: block`,
/// `permissionDecision: deny`, `permission: deny`, `cancel: true`, `action: block`).
fn refuses(stdout: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(stdout.trim()) else { return false };
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(o) => o.iter().any(|(k, x)| {
                matches!(
                    (k.as_str(), x.as_str()),
                    ("decision" | "action", Some("block" | "deny"))
                        | ("permissionDecision" | "permission", Some("deny"))
                ) || (k == "cancel" && x == &serde_json::Value::Bool(true))
                    || walk(x)
            }),
            _ => false,
        }
    }
    walk(&v)
}

fn tail_of(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        return String::new();
    }
    let start = s.char_indices().rev().nth(200).map_or(0, |(i, _)| i);
    format!(" ({})", s[start..].replace('\n', " "))
}

/// `$X_PROJECT_DIR` / `${X_PROJECT_DIR}` variables a command names: the runtime sets them to
/// the project.
fn project_dir_vars(cmd: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in cmd.split('$').skip(1) {
        let name: String =
            part.trim_start_matches('{').chars().take_while(|c| c.is_ascii_uppercase() || *c == '_').collect();
        if name.ends_with("_PROJECT_DIR") {
            out.insert(name);
        }
    }
    out
}

/// The shell command strings in a hook entry (`command`, and Copilot's `bash`).
fn commands(v: &serde_json::Value, key: Option<&str>, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| commands(x, Some(k), out)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| commands(x, key, out)),
        serde_json::Value::String(s) if matches!(key, Some("command" | "bash")) && s.contains("msd_run") => {
            out.push(s.clone())
        }
        _ => {}
    }
}

/// The names msd wrote of `kind` in this install: a skill's directory, a command's or agent's
/// file stem (a nested command is `dir:stem`).
fn written_names(cap: &Capability, scope: Scope, m: &FileManifest, kind: ArtifactKind) -> Vec<String> {
    let mut out = Vec::new();
    for a in cap.layout(scope).iter().filter(|a| a.kind == kind) {
        let dest = a.dest.as_str().trim_end_matches('/');
        for f in &m.files {
            let Some(rest) = (if dest == "." { Some(f.path.as_str()) } else { f.path.as_str().strip_prefix(dest) })
                .map(|r| r.trim_start_matches('/'))
            else {
                continue;
            };
            let name = match kind {
                ArtifactKind::Skills => match rest.strip_suffix("/SKILL.md") {
                    Some(d) if !d.contains('/') => d.to_string(),
                    _ => continue,
                },
                _ => {
                    if rest.contains('/') && kind == ArtifactKind::Agents {
                        continue;
                    }
                    let stem = rest.rsplit_once('.').map_or(rest, |(s, _)| s);
                    let stem = a.suffix.as_deref().and_then(|x| rest.strip_suffix(x)).unwrap_or(stem);
                    stem.replace('/', ":")
                }
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn is_inside(p: &Path, home: &Path) -> bool {
    let canon = |x: &Path| fsx::canonicalize(x).unwrap_or_else(|_| x.to_path_buf());
    canon(p).starts_with(canon(home))
}

/// `command` on the PATH of `env` (the first file of that name, as a shell finds it).
fn on_path(command: &str, env: &Environment) -> Option<PathBuf> {
    let path = env.vars.get("PATH")?;
    std::env::split_paths(path).map(|d| d.join(command)).find(|p| fsx::is_file(p))
}

fn render(doc: &DoctorDoc) -> String {
    let mut text = String::new();
    if doc.targets.is_empty() {
        text.push_str(&format!(
            "no msd install found (global homes, and the local dirs of {})\nhint: `msd-install doctor -r <id>` checks one runtime; `msd-install runtimes` lists them\n",
            doc.project.display()
        ));
        return text;
    }
    for t in &doc.targets {
        let cli = t.cli.as_ref().map_or_else(String::new, |c| match (&c.path, &c.version) {
            (Some(_), Some(v)) => format!(
                " ({} {v}, tested {}{})",
                c.command,
                c.tested,
                if c.in_range == Some(false) { ", OUTSIDE" } else { "" }
            ),
            _ => format!(" ({} not on PATH)", c.command),
        });
        let problems = t.findings.iter().filter(|f| f.level == Level::Problem).count();
        text.push_str(&format!(
            "{} {}: {}{cli}\n",
            t.runtime,
            t.scope,
            if problems == 0 { "ok".to_string() } else { format!("{problems} problem(s)") }
        ));
        for f in &t.findings {
            let level = match f.level {
                Level::Problem => "problem",
                Level::NotChecked => "not checked",
                Level::Note => "note",
            };
            text.push_str(&format!("  {level} [{}]: {}; {}\n", f.check, f.message, f.hint));
        }
    }
    text.push_str(&format!(
        "{}\n",
        if doc.ok { "doctor: nothing is wrong" } else { "doctor: problems found (exit 1)" }
    ));
    text
}
