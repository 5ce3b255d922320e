//! `msd-install inventory`: what every runtime x scope receives, hashed, as one JSON document,
//! emitted for the fixed environment of `gen golden`. It is also the base side of
//! `attribution --base-binary`: another build of msd-install answers through it.

use crate::cli::args::InventoryArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Settings, Subcommand};
use crate::dev::attribution::inventory;
use crate::pipeline;
use crate::pipeline::target::Environment;

impl Subcommand for InventoryArgs {
    const NAME: &'static str = "inventory";
    const JSON: bool = true;

    fn settings(&self, base: Settings) -> Settings {
        base.sources(&self.sources)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s)
    }
}

/// Runs `inventory`: its output is a JSON document, with or without `--json` (not under `-q`).
pub(crate) fn run(s: &Settings) -> Result<(), Error> {
    let loaded = pipeline::load(&s.sources)?;
    let inv = inventory::build(&loaded.content, &loaded.runtimes, &Environment::golden())?;
    if s.output.json || !s.output.quiet {
        s.output.document(&inv);
    }
    Ok(())
}
