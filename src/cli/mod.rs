//! The `msd-install` entry: parse arguments, resolve them into settings, run the command, print
//! the result once (for people, or as one JSON document), map errors to exit codes.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod error;
pub(crate) mod output;
pub(crate) mod project;
pub(crate) mod prompt;
pub(crate) mod release;
pub(crate) mod schemas;
pub(crate) mod settings;
pub(crate) mod version;
pub(crate) mod versioned;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::args::{Cli, Command, InstallArgs};
use crate::cli::error::{Error, Exit};
use crate::cli::settings::{Globals, Output, Stop, run};

/// Parses the command line. The flags that mean the same everywhere (`-q`, `-v`, `--json`,
/// `--color`, `-r`, `--local`, `--all`) are clap `global` args: accepted before or after the
/// subcommand, then taken or refused by it ([`settings::Subcommand`]). Any other install option goes with no subcommand only (`msd-install --dry-run
/// status` is refused, as clap's `args_conflicts_with_subcommands` would, which cannot spare
/// global args).
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let mut cmd = Cli::command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    if let Some((sub, _)) = matches.subcommand() {
        let used: Vec<String> = cmd
            .get_arguments()
            .filter(|a| !a.is_global_set())
            .filter(|a| matches.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine))
            .map(ToString::to_string)
            .collect();
        if let Some(first) = used.first() {
            return Err(cmd.error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("the subcommand '{sub}' cannot be used with '{first}' (give it after the subcommand, if the subcommand has it)"),
            ));
        }
    }
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Runs `msd-install` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => Exit::Ok.into(),
                _ => Exit::Usage.into(),
            };
        }
    };
    let output = Output::new(&cli.output, cli.verbose, cli.color);
    if cli.version {
        if output.json {
            output.document(&version::doc());
        } else {
            crate::cli::output::println(format!("msd-install {}", version::long()));
        }
        return Exit::Ok.into();
    }
    crate::apply::txn::init_fault_hook();
    let globals = Globals {
        output,
        runtime: cli.install.target.runtime.clone(),
        all: cli.install.target.all,
        local: cli.install.target.place.local,
    };
    match dispatch(cli.command, &cli.install, &globals) {
        Ok(()) => Exit::Ok.into(),
        // A flag the command has no use for: a usage error about the command line, as clap's.
        Err(Stop::Refused(e)) => {
            eprintln!("{}", e.render());
            e.exit().into()
        }
        // A failed check has already printed its report (on stdout, or as the JSON document).
        Err(Stop::Failed(Error::CheckFailed(m))) if m.is_empty() || output.json => Exit::CheckFailed.into(),
        Err(Stop::Failed(e)) => {
            if output.json {
                output.document(&e.to_json());
            } else {
                eprintln!("{}", e.render());
            }
            e.exit().into()
        }
    }
}

/// The one dispatch: each subcommand refuses the flags it has no use for, its settings are
/// resolved from its arguments and the global flags, then it runs ([`settings::run`]).
fn dispatch(command: Option<Command>, install: &InstallArgs, g: &Globals) -> Result<(), Stop> {
    match command {
        None => run(install, g),
        Some(Command::Install(a)) => run(&a, g),
        Some(Command::Emit(a)) => run(&a, g),
        Some(Command::Runtimes(a)) => run(&a, g),
        Some(Command::Status(a)) => run(&a, g),
        Some(Command::Diff(a)) => run(&a, g),
        Some(Command::Doctor(a)) => run(&a, g),
        Some(Command::Migrate(a)) => run(&a, g),
        Some(Command::Schema(a)) => run(&a, g),
        Some(Command::Completions(a)) => run(&a, g),
        Some(Command::Man(a)) => run(&a, g),
        Some(Command::SelfUpdate(a)) => run(&a, g),
        Some(Command::Gen(a)) => run(&a, g),
        Some(Command::Check(a)) => run(&a, g),
        Some(Command::InitProject(a)) => run(&a, g),
        Some(Command::Bench(a)) => run(&a, g),
        Some(Command::Uninstall(a)) => run(&a, g),
        Some(Command::Verify(a)) => run(&a, g),
        Some(Command::Recover(a)) => run(&a, g),
        Some(Command::Attribution(a)) => run(&a, g),
        Some(Command::Inventory(a)) => run(&a, g),
    }
}
