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
use crate::cli::settings::{Output, run};

/// Parses the command line. The flags that mean the same everywhere (`-q`, `-v`, `--json`,
/// `--color`, `-r`, `--local`, `--all`) are clap `global` args: accepted before or after the
/// subcommand. Any other install option goes with no subcommand only (`msd-install --dry-run
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
    match dispatch(cli.command, &cli.install, output) {
        Ok(()) => Exit::Ok.into(),
        // A failed check has already printed its report (on stdout, or as the JSON document).
        Err(Error::CheckFailed(m)) if m.is_empty() => Exit::CheckFailed.into(),
        Err(e) => {
            if output.json && matches!(e, Error::CheckFailed(_)) {
                // The command already printed its JSON report (with `"ok": false`).
            } else if output.json {
                output.document(&e.to_json());
            } else {
                eprintln!("{}", e.render());
            }
            e.exit().into()
        }
    }
}

/// The one dispatch: each subcommand's settings are resolved from its arguments and the output
/// mode, then it runs ([`settings::run`]).
fn dispatch(command: Option<Command>, install: &InstallArgs, output: Output) -> Result<(), Error> {
    match command {
        None => run(install, output),
        Some(Command::Install(a)) => run(&a, output),
        Some(Command::Emit(a)) => run(&a, output),
        Some(Command::Runtimes(a)) => run(&a, output),
        Some(Command::Status(a)) => run(&a, output),
        Some(Command::Diff(a)) => run(&a, output),
        Some(Command::Doctor(a)) => run(&a, output),
        Some(Command::Migrate(a)) => run(&a, output),
        Some(Command::Schema(a)) => run(&a, output),
        Some(Command::Completions(a)) => run(&a, output),
        Some(Command::Man(a)) => run(&a, output),
        Some(Command::SelfUpdate(a)) => run(&a, output),
        Some(Command::Gen(a)) => run(&a, output),
        Some(Command::Check(a)) => run(&a, output),
        Some(Command::InitProject(a)) => run(&a, output),
        Some(Command::Bench(a)) => run(&a, output),
        Some(Command::Uninstall(a)) => run(&a, output),
        Some(Command::Verify(a)) => run(&a, output),
        Some(Command::Recover(a)) => run(&a, output),
        Some(Command::Attribution(a)) => run(&a, output),
        Some(Command::Inventory(a)) => run(&a, output),
    }
}
