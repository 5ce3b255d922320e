//! The questions of an install on a terminal, when no runtime and no scope were given: which
//! runtimes (those whose home exists pre-selected), global or local, then a confirmation under the
//! plan's summary (`--yes` skips it). Off a terminal, or with `--json`/`--quiet`, nothing is asked
//! and the defaults stand (the primary runtime, global).

use std::io::IsTerminal;

use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, MultiSelect, Select};

use crate::cli::args::InstallArgs;
use crate::cli::error::Error;
use crate::cli::settings::Output;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Environment};
use msd_core::fs::fsx;
use msd_core::manifest::capability::SupportTier;

/// Whether to ask: a person at a terminal (stdin and stderr), and nothing given that answers.
pub(crate) fn should_ask(a: &InstallArgs, output: &Output) -> bool {
    let t = &a.target;
    let answered = !t.runtime.is_empty()
        || t.all
        || t.place.global
        || t.place.local
        || t.place.config_dir.is_some()
        || t.place.project.is_some();
    !answered && output.is_text() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

fn io(e: dialoguer::Error) -> Error {
    let dialoguer::Error::IO(source) = e;
    Error::Io { context: "asking on the terminal".into(), source }
}

fn theme() -> ColorfulTheme {
    ColorfulTheme::default()
}

/// Asks for the runtimes and the scope; returns `args` answered. `None` when nothing was chosen.
pub(crate) fn ask(
    args: &InstallArgs,
    runtimes: &[LoadedRuntime],
    env: &Environment,
    project: &str,
) -> Result<Option<InstallArgs>, Error> {
    let items: Vec<String> =
        runtimes.iter().map(|r| format!("{:<12} {}", r.capability.id, r.capability.title)).collect();
    let detected: Vec<bool> =
        runtimes.iter().map(|r| fsx::is_dir(&target::global_home(&r.capability, None, env).0)).collect();
    let defaults: Vec<bool> = if detected.iter().any(|d| *d) {
        detected
    } else {
        runtimes.iter().map(|r| r.capability.tier == SupportTier::Primary).collect()
    };
    let chosen = MultiSelect::with_theme(&theme())
        .with_prompt("Runtimes to install for (space toggles, enter accepts; found on this machine are selected)")
        .items(&items)
        .defaults(&defaults)
        .interact()
        .map_err(io)?;
    if chosen.is_empty() {
        return Ok(None);
    }
    let scopes =
        ["global: each runtime's home (e.g. ~/.claude)".to_string(), format!("local: this project ({project})")];
    let scope = Select::with_theme(&theme()).with_prompt("Where").items(&scopes).default(0).interact().map_err(io)?;
    let mut out = args.clone();
    out.target.runtime = chosen.into_iter().map(|i| runtimes[i].capability.id.clone()).collect();
    out.target.place.local = scope == 1;
    Ok(Some(out))
}

/// Asks to go on after the plan's summary.
pub(crate) fn confirm() -> Result<bool, Error> {
    Confirm::with_theme(&theme()).with_prompt("Install?").default(true).interact().map_err(io)
}
