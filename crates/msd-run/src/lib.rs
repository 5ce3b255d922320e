//! `msd_run`, the runtime helper that installed workflows call for facts a program can decide.
//!
//! It starts fast: no async runtime, no progress bars, nothing loaded that a subcommand does not
//! need. Every error is one clear message on stderr with a distinct exit code ([`error`]).
//!
//! One module per subcommand: [`config`] (`config-get`, `config-set`), [`query`] (its variants
//! in their own modules: `init.<workflow>` in [`init`], `context-predicates` in
//! [`context_predicates`], `agent-skills` in [`agent_skills`], `prompt-budget` in
//! [`prompt_budget`]), [`task`] and [`hook`]. Answers go to stdout.
//!
//! `query prompt-budget` keeps the exit codes of its reference contract (1: usage or an
//! unreadable file, 2: no prompt fits), so it is run from here and its usage errors, clap's
//! included, exit 1.
//!
//! The installed tree: msd_run lives at `<core>/bin/msd_run` and reads `<core>/` (the workflows,
//! the section manifest, `CONTEXT.md`, `resolvers.json`, the config schema, the agents'
//! payloads). `--core DIR` or `MSD_CORE_DIR` override that, for tests and for running a build
//! from `target/`. The project is the current directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod agent_skills;
pub mod config;
pub mod context_predicates;
pub mod error;
pub mod hook;
pub mod init;
pub mod project;
pub mod prompt_budget;
pub mod query;
pub mod task;

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
    Hook {
        /// Which hook.
        #[arg(value_enum)]
        name: hook::Hook,
        /// session-start: stay silent when the project (the event's `cwd` or one of its parents)
        /// has its own install at this relative core dir, whose hook runs too (a global install
        /// under a local one: one report per session).
        #[arg(long, value_name = "CORE_DIR")]
        defer_to: Option<PathBuf>,
    },
}

/// Runs `msd_run` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match RunCli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => RunExit::Ok.into(),
                _ if is_prompt_budget(&args) => ExitCode::from(prompt_budget::EXIT_USAGE),
                _ => RunExit::Usage.into(),
            };
        }
    };
    if let RunCommand::Query(query::Query::PromptBudget(a)) = &cli.command {
        return prompt_budget::run(a);
    }
    let core = cli.core.as_deref();
    let result = match &cli.command {
        RunCommand::ConfigGet(a) => config::get(core, a),
        RunCommand::ConfigSet(a) => config::set(core, a),
        RunCommand::Query(q) => query::run(core, q),
        RunCommand::Task(t) => task::run(core, t),
        RunCommand::Hook { name, defer_to } => return hook::run(*name, defer_to.as_deref()),
    };
    match result {
        Ok(()) => RunExit::Ok.into(),
        Err(e) => {
            eprintln!("{}", e.render());
            e.exit().into()
        }
    }
}

/// Whether the command line is `msd_run [--core DIR] query prompt-budget ...`.
fn is_prompt_budget(args: &[OsString]) -> bool {
    let words: Vec<&str> =
        args.iter().skip(1).filter_map(|a| a.to_str()).filter(|a| !a.starts_with('-')).take(3).collect();
    words.windows(2).any(|w| w == ["query", "prompt-budget"])
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

/// Prints a JSON answer: pretty, or on one line when `raw`.
pub(crate) fn print_json(v: &serde_json::Value, raw: bool) {
    let s = if raw { serde_json::to_string(v) } else { serde_json::to_string_pretty(v) };
    println!("{}", s.expect("json serializes"));
}
