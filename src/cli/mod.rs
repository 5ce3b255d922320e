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
pub(crate) mod version;
pub(crate) mod versioned;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::args::{Cli, Command};
use crate::cli::error::{Error, Exit};

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
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    cli.settle_globals().map_err(|why| cmd.error(clap::error::ErrorKind::ArgumentConflict, why))?;
    Ok(cli)
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
    output::set_color(cli.color);
    output::set_verbose(cli.verbose);
    if cli.version {
        if cli.install.output.json {
            crate::cli::output::println(serde_json::to_string_pretty(&version::doc()).expect("json"));
        } else {
            crate::cli::output::println(format!("msd-install {}", version::long()));
        }
        return Exit::Ok.into();
    }
    // The effective --json and -q, given before or after the subcommand (`Cli::settle_globals`).
    let json = cli.install.output.json;
    output::set_quiet(cli.install.output.quiet && !json);
    crate::apply::txn::init_fault_hook();
    let result = match cli.command {
        None => commands::install::run(&cli.install),
        Some(Command::Install(a)) => commands::install::run(&a),
        Some(Command::Emit(a)) if a.plugin.is_some() => commands::plugin::run(&a),
        Some(Command::Emit(a)) => commands::emit::run(&a),
        Some(Command::Runtimes(a)) => commands::runtimes::run(&a),
        Some(Command::Gen(a)) => commands::generate::run(&a),
        Some(Command::Check(a)) => commands::check::run(&a),
        Some(Command::Bench(a)) => commands::bench::run(&a),
        Some(Command::Attribution(a)) => commands::attribution::run(&a),
        Some(Command::Inventory(a)) => commands::inventory::run(&a),
        Some(Command::Schema(a)) => schemas::render(a.kind).map(crate::cli::output::print),
        Some(Command::InitProject(a)) => commands::init_project::run(&a),
        Some(Command::Status(a)) => commands::status::run(&a),
        Some(Command::Doctor(a)) => commands::doctor::run(&a),
        Some(Command::Migrate(a)) => commands::migrate::run(&a),
        Some(Command::Diff(a)) => commands::diff::run(&a),
        Some(Command::Completions(a)) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(a.shell, &mut cmd, "msd-install", &mut buf);
            commands::print(&String::from_utf8_lossy(&buf));
            Ok(())
        }
        Some(Command::Man) => commands::man::run(),
        Some(Command::Uninstall(a)) => commands::uninstall::run(&a),
        Some(Command::Verify(a)) => commands::verify::run(&a),
        Some(Command::Recover(a)) => commands::recover::run(&a),
        Some(Command::SelfUpdate(a)) => commands::self_update::run(&a),
    };
    match result {
        Ok(()) => Exit::Ok.into(),
        // A failed check has already printed its report (on stdout, or as the JSON document).
        Err(Error::CheckFailed(m)) if m.is_empty() => Exit::CheckFailed.into(),
        Err(e) => {
            if json && matches!(e, crate::cli::error::Error::CheckFailed(_)) {
                // The command already printed its JSON report (with `"ok": false`).
            } else if json {
                crate::cli::output::println(serde_json::to_string_pretty(&e.to_json()).expect("json"));
            } else {
                eprintln!("{}", e.render());
            }
            e.exit().into()
        }
    }
}
