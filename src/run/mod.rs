//! `msd_run`, the runtime helper that installed workflows call for facts a program can decide.
//!
//! It starts fast: no async runtime, no progress bars, nothing loaded that a subcommand does not
//! need. Every error is one clear message on stderr with a distinct exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

/// The msd-core runtime helper, called by installed workflows.
#[derive(Debug, Parser)]
#[command(name = "msd_run", version)]
pub struct RunCli {}

/// Runs `msd_run` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    match RunCli::try_parse_from(args) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = e.print();
            match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                _ => ExitCode::from(2),
            }
        }
    }
}
