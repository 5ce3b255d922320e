//! `msd_run`, the runtime helper that installed workflows call for facts a program can decide.
//!
//! It starts fast: no async runtime, no progress bars, nothing loaded that a subcommand does not
//! need. Every error is one clear message on stderr with a distinct exit code ([`error`]).
//!
//! One module per subcommand: [`config`] (`config-get`, `config-set`), [`query`] (its variants
//! in their own modules: `init.<workflow>` in [`init`], `context-predicates` in
//! [`context_predicates`], `agent-skills` in [`agent_skills`], `prompt-budget` in
//! [`prompt_budget`], `update-check` in [`update_check`]), [`task`], [`hook`] and [`mcp`] (a
//! stdio MCP server: Codex's status line). Each returns its [`Answer`]; [`answer::deliver`]
//! alone writes stdout, spilling a long answer to an `@file:` file. The exit codes mean the same
//! for every subcommand ([`error`]); `hook` and `mcp` alone speak their runtime's protocols.
//!
//! The installed tree: msd_run lives at `<core>/bin/msd_run` and reads `<core>/` (the workflows,
//! the section manifest, `CONTEXT.md`, `resolvers.json`, `runtime.json` (the runtime's command
//! syntax for hints, and whether it loads agent files itself), the config schema, the agents'
//! payloads). `--core DIR` or `MSD_CORE_DIR` override that, for tests and for running a build
//! from `target/`. The project is the current directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use msd_core::installed::runtime_info::RuntimeInfo;

pub(crate) mod agent_skills;
pub(crate) mod answer;
pub(crate) mod config;
pub(crate) mod context_predicates;
pub(crate) mod error;
pub(crate) mod hook;
pub(crate) mod init;
pub(crate) mod mcp;
pub(crate) mod project;
pub(crate) mod prompt_budget;
pub mod query;
pub(crate) mod task;
pub(crate) mod update_check;

pub use answer::Answer;
pub use error::{RunError, RunExit};

/// The msd-core runtime helper, called by installed workflows.
///
/// Prints answers on stdout; errors go to stderr with the exit codes below.
#[derive(Debug, Parser)]
#[command(name = "msd_run", version, after_help = error::EXIT_CODES)]
pub struct RunCli {
    /// The installed msd-core tree (default: the parent of the directory holding msd_run).
    #[arg(long, global = true, env = "MSD_CORE_DIR", value_name = "DIR")]
    pub core: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: RunCommand,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Print the value of a key of .planning/config.json (strings bare, the rest as JSON).
    ConfigGet(config::GetArgs),
    /// Validate a value against the known keys and write it into .planning/config.json.
    ConfigSet(config::SetArgs),
    /// Answer a question about the project or the installed content.
    #[command(subcommand, after_help = query::AFTER_HELP)]
    Query(query::Query),
    /// Per-task steps of execute-plan.
    #[command(subcommand)]
    Task(task::Task),
    /// Run a hook msd-install registered in the runtime's settings (event JSON on stdin; exit 2
    /// is the hook protocol's "block this tool call", with the reason on stderr).
    Hook(hook::HookArgs),
    /// Serve an MCP server on stdio (one JSON-RPC message per line) for a runtime that takes a
    /// feature only from one: `statusline`, Codex's custom status line.
    Mcp(mcp::McpArgs),
}

/// The arguments of `msd_run hook ...` in the forms msd-install registers (`hook <name>`, then
/// `--protocol P` or `--protocol=P`, `--watch-config`, `--once-per-session`, `--allow-helper T`
/// or `--allow-helper=T`, each flag once), read word by word; `None` for anything else or more
/// (another subcommand, `--core`, `--help`, a flag twice, a value that starts with `-` or is
/// empty, a mistake), which the whole CLI's parser then answers as it always has. A runtime runs
/// a hook on every tool call: clap building the whole CLI first was a quarter of a guard's
/// instructions, and building the hook's subcommand alone still a ninth (docs/PERFORMANCE.md,
/// issue 37). The names and values are clap's own ([`clap::ValueEnum`]), and a test holds the
/// two parsers to the same reading.
fn hook_args(args: &[OsString]) -> Option<hook::HookArgs> {
    use clap::ValueEnum;
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    if words.next()? != Some("hook") {
        return None;
    }
    let name = hook::Hook::from_str(words.next()??, false).ok()?;
    let mut a = hook::HookArgs {
        name,
        protocol: hook::Protocol::default(),
        watch_config: false,
        once_per_session: false,
        allow_helper: Vec::new(),
    };
    let mut protocol_given = false;
    while let Some(word) = words.next() {
        let (flag, inline) = match word?.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (word?, None),
        };
        let mut value = || match inline {
            Some(v) => Some(v),
            None => words.next()?,
        };
        let ok = |v: &str| !v.is_empty() && !v.starts_with('-');
        match flag {
            "--protocol" if !protocol_given => {
                a.protocol = value().filter(|v| ok(v)).and_then(|v| hook::Protocol::from_str(v, false).ok())?;
                protocol_given = true;
            }
            "--allow-helper" => a.allow_helper.push(value().filter(|v| ok(v))?.to_string()),
            "--watch-config" if inline.is_none() && !a.watch_config => a.watch_config = true,
            "--once-per-session" if inline.is_none() && !a.once_per_session => a.once_per_session = true,
            _ => return None,
        }
    }
    Some(a)
}

/// Runs `msd_run` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    if let Some(a) = hook_args(&args) {
        return hook::run(&a);
    }
    let cli = match RunCli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => RunExit::Ok.into(),
                _ => RunExit::Usage.into(),
            };
        }
    };
    let core = cli.core.as_deref();
    let result = match &cli.command {
        RunCommand::ConfigGet(a) => config::get(core, a),
        RunCommand::ConfigSet(a) => config::set(core, a),
        RunCommand::Query(q) => query::run(core, q),
        RunCommand::Task(t) => task::run(core, t),
        RunCommand::Hook(a) => return hook::run(a),
        RunCommand::Mcp(a) => return mcp::run(a),
    };
    match result.and_then(|answer| answer::deliver(&answer)) {
        Ok(()) => RunExit::Ok.into(),
        Err(e) => {
            // Hints name commands as `{cmd:<stem>}`: print them in this runtime's own syntax.
            eprintln!("{}", runtime_info(core).localize(&e.render()));
            e.exit().into()
        }
    }
}

/// The installed runtime's facts (`<core>/runtime.json`); a tree without the file, or one that
/// cannot be found or read, gets [`RuntimeInfo::fallback`].
pub fn runtime_info(core: Option<&Path>) -> RuntimeInfo {
    use msd_core::installed::runtime_info::RUNTIME_INFO_PATH;
    core_dir(core)
        .ok()
        .and_then(|c| read_core(&c, RUNTIME_INFO_PATH).ok().flatten())
        .and_then(|t| RuntimeInfo::parse(&t).ok())
        .unwrap_or_else(RuntimeInfo::fallback)
}

/// The installed core dir: `--core` / `MSD_CORE_DIR`, else the parent of the directory holding
/// this executable. It must contain `workflows/`.
pub fn core_dir(given: Option<&Path>) -> Result<PathBuf, RunError> {
    let (dir, how) = match given {
        Some(d) => (d.to_path_buf(), "given by --core or MSD_CORE_DIR"),
        None => {
            let exe = std::env::current_exe().map_err(|e| RunError::Core {
                path: "msd_run".into(),
                message: format!("cannot locate the running executable: {e}"),
                hint: "pass --core DIR or set MSD_CORE_DIR".into(),
            })?;
            let core = exe.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
            (core, "the parent of the directory holding msd_run")
        }
    };
    if !msd_core::fs::fsx::is_dir(&dir.join("workflows")) {
        return Err(RunError::Core {
            path: dir.display().to_string(),
            message: format!("no installed msd-core tree here ({how}; it has no workflows/)"),
            hint: "run the msd_run installed at <home>/msd-core/bin/msd_run, or pass --core <home>/msd-core".into(),
        });
    }
    Ok(dir)
}

/// Reads an installed file as UTF-8; absent or unreadable is a damaged install.
pub(crate) fn read_core(core: &Path, rel: &str) -> Result<Option<String>, RunError> {
    let path = core.join(rel);
    let damaged = |message: String| RunError::Core {
        path: path.display().to_string(),
        message,
        hint: "reinstall msd-core with msd-install".into(),
    };
    match msd_core::fs::fsx::read_if_exists(&path) {
        Ok(None) => Ok(None),
        Ok(Some(b)) => String::from_utf8(b).map(Some).map_err(|_| damaged("not valid UTF-8".into())),
        Err(e) => Err(RunError::Io { path: path.display().to_string(), source: e }),
    }
}

/// A path a workflow named (a PLAN.md, a prompt-budget input or output; relative to the current
/// directory), absolute, and the project it lies in. When it lies in the project the current
/// directory belongs to, it is checked as a project file is ([`project::Project::confine`]: no
/// symlink out of the project, exit 4); a path outside the project was named on purpose and is
/// taken as given.
pub(crate) fn confine_named(path: &Path) -> Result<(PathBuf, Option<(project::Project, String)>), RunError> {
    let io = |source: std::io::Error| RunError::Io { path: path.display().to_string(), source };
    let cwd = std::env::current_dir().map_err(io)?;
    let abs = hook::guard_worktree::normalize(&cwd.join(path));
    if let Some(project) = project::Project::find().map_err(io)? {
        let real_root = msd_core::fs::fsx::canonicalize(&project.root).ok();
        let rel = abs.strip_prefix(&project.root).ok().or_else(|| abs.strip_prefix(real_root.as_ref()?).ok());
        if let Some(rel) = rel.and_then(Path::to_str).filter(|r| !r.is_empty()).map(str::to_string) {
            project.confine(&rel)?;
            return Ok((abs, Some((project, rel))));
        }
    }
    Ok((abs, None))
}

/// Reads a file a workflow named ([`confine_named`]), `None` when absent. Anything but a regular
/// file is refused instead of hanging on a FIFO: as a project file is (exit 4) in the project,
/// else as a file that cannot be read (exit 5).
pub(crate) fn read_named(path: &Path) -> Result<Option<Vec<u8>>, RunError> {
    match confine_named(path)? {
        (_, Some((project, rel))) => Ok(project.read_bytes(&rel, u64::MAX)?.map(|b| b.bytes)),
        (abs, None) => msd_core::fs::fsx::read_regular_if_exists(&abs, u64::MAX)
            .map(|b| b.map(|b| b.bytes))
            .map_err(|source| RunError::Io { path: path.display().to_string(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<OsString> {
        std::iter::once("msd_run").chain(s.split(' ')).map(OsString::from).collect()
    }

    /// The hook's own parser takes what runtimes pass (every form msd-install registers) and
    /// reads it as the whole CLI does; what it does not take is left to the whole CLI.
    #[test]
    fn a_hook_is_parsed_alone_as_the_whole_cli_parses_it() {
        let taken = [
            "hook guard",
            "hook guard-env",
            "hook session-start --watch-config",
            "hook session-start --protocol gemini --once-per-session",
            "hook guard --protocol=copilot --allow-helper bash --allow-helper shell",
            "hook guard --allow-helper=bash --protocol copilot --allow-helper=shell",
            "hook session-start --once-per-session --watch-config --protocol=claude",
            "hook context-monitor --protocol cursor",
            "hook statusline",
            "hook config-reload --protocol opencode",
        ];
        for line in taken {
            let args = argv(line);
            let alone = hook_args(&args).unwrap_or_else(|| panic!("{line}: not taken"));
            let Ok(RunCli { command: RunCommand::Hook(whole), .. }) = RunCli::try_parse_from(&args) else {
                panic!("{line}: the whole CLI refuses it")
            };
            assert_eq!(format!("{alone:?}"), format!("{whole:?}"), "{line}");
        }
        for line in [
            "hook",
            "hook nope",
            "hook guard --help",
            "hook guard --core /x",
            "hook guard --protocol nope",
            "hook guard --protocol",
            "hook guard --protocol=",
            "hook guard --protocol claude --protocol gemini",
            "hook guard --allow-helper",
            "hook guard --allow-helper --watch-config",
            "hook session-start --watch-config --watch-config",
            "hook session-start --watch-config=true",
            "hook guard -h",
            "hook guard extra",
            "hook Guard",
            "query init.plan",
            "--core /x hook guard",
        ] {
            assert!(hook_args(&argv(line)).is_none(), "{line}: left to the whole CLI");
        }
    }
}
