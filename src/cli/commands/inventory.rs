//! `msd-install inventory`: what every runtime x scope receives, hashed, as one JSON document,
//! emitted for the fixed environment of `gen golden`. It is also the base side of
//! `attribution --base-binary`: another build of msd-install answers through it.

use crate::cli::args::InventoryArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Globals, NO_QUIET, Settings, Subcommand, Takes};
use crate::dev::attribution::inventory;
use crate::pipeline;
use crate::pipeline::target::Environment;

impl Subcommand for InventoryArgs {
    const NAME: &'static str = "inventory";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn quiet(&self) -> Takes {
        Takes::No(NO_QUIET)
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
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
