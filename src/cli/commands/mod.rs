//! One module per `msd-install` subcommand; shared helpers for them live here.

use std::io::Write;

use crate::cli::args::{OneTargetArgs, OutputArgs, SourceArgs};
use crate::cli::error::Error;
use crate::pipeline;
use crate::pipeline::Sources;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Environment, Target};

pub mod attribution;
pub mod bench;
pub mod check;
pub mod emit;
pub mod generate;
pub mod install;
pub mod inventory;
pub mod recover;
pub mod runtimes;
pub mod uninstall;
pub mod verify;

pub(crate) fn sources(s: &SourceArgs) -> Sources {
    Sources { content: s.content.clone(), runtimes: s.runtimes_dir.clone() }
}

pub(crate) fn env() -> Result<Environment, Error> {
    Environment::from_process().map_err(|e| Error::Io { context: "reading the environment".into(), source: e })
}

pub(crate) fn out(text: &str, o: &OutputArgs) {
    if !o.quiet && !o.json {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
    }
}

/// `1234567` -> `1,234,567`.
pub(crate) fn human_bytes(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Resolves the one runtime and target of `uninstall`, `verify` and `recover`.
pub(crate) fn resolve_one(a: &OneTargetArgs) -> Result<(LoadedRuntime, Target), Error> {
    let runtimes = pipeline::load_runtimes(&Sources { content: None, runtimes: a.runtimes_dir.clone() })?;
    let id = match &a.runtime {
        Some(id) => id.clone(),
        None => pipeline::primary(&runtimes)?,
    };
    let rt = pipeline::select(&runtimes, &[id], false)?[0].clone();
    let t = target::resolve(&rt.capability, a.place.scope(), a.place.config_dir.as_deref(), &env()?)?;
    Ok((rt, t))
}

/// Prints `text` on stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
}
