//! The `msd-install` entry: parse arguments, resolve them into settings, run the command, print
//! the result once (for people, or as one JSON document), map errors to exit codes.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::capability;
use crate::cli::{Cli, Command};
use crate::cmd;
use crate::error::{Error, Exit};

/// Runs `msd-install` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => Exit::Ok.into(),
                _ => Exit::Usage.into(),
            };
        }
    };
    let json = match &cli.command {
        None => cli.install.output.json,
        Some(Command::Install(a)) => a.output.json,
        Some(Command::Emit(a)) => a.output.json,
        Some(Command::Runtimes(a)) => a.json,
        Some(Command::Gen(a)) => a.what.opts().json,
        Some(Command::Check(a)) => match &a.what {
            crate::cli::CheckWhat::Partition(p) => p.json,
        },
        Some(Command::Schema) | Some(Command::Bench(_)) | Some(Command::Inventory(_)) => false,
        Some(Command::Uninstall(a)) => a.output.json,
        Some(Command::Verify(a)) => a.output.json,
        Some(Command::Recover(a)) => a.output.json,
        Some(Command::Attribution(a)) => a.json,
    };
    crate::txn::init_fault_hook();
    let result = match cli.command {
        None => cmd::install::run(&cli.install),
        Some(Command::Install(a)) => cmd::install::run(&a),
        Some(Command::Emit(a)) => cmd::emit::run(&a),
        Some(Command::Runtimes(a)) => cmd::runtimes::run(&a),
        Some(Command::Gen(a)) => cmd::generate::run(&a),
        Some(Command::Check(a)) => cmd::check::run(&a),
        Some(Command::Bench(a)) => cmd::bench::run(&a),
        Some(Command::Attribution(a)) => cmd::attribution::run(&a),
        Some(Command::Inventory(a)) => cmd::inventory::run(&a),
        Some(Command::Schema) => {
            print!("{}", capability::json_schema());
            Ok(())
        }
        Some(Command::Uninstall(a)) => cmd::uninstall::run(&a),
        Some(Command::Verify(a)) => cmd::verify::run(&a),
        Some(Command::Recover(a)) => cmd::recover::run(&a),
    };
    match result {
        Ok(()) => Exit::Ok.into(),
        // A failed check has already printed its report (on stdout, or as the JSON document).
        Err(Error::CheckFailed(m)) if m.is_empty() => Exit::CheckFailed.into(),
        Err(e) => {
            if json && matches!(e, crate::error::Error::CheckFailed(_)) {
                // The command already printed its JSON report (with `"ok": false`).
            } else if json {
                println!("{}", serde_json::to_string_pretty(&e.to_json()).expect("json"));
            } else {
                eprintln!("{}", e.render());
            }
            e.exit().into()
        }
    }
}
