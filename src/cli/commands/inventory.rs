//! `msd-install inventory`: what every runtime x scope receives, hashed, as one JSON document,
//! emitted for the fixed environment of `gen golden`. It is also the base side of
//! `attribution --base-binary`: another build of msd-install answers through it.

use super::{print, sources};
use crate::cli::args::InventoryArgs;
use crate::cli::error::Error;
use crate::dev::attribution::inventory;
use crate::pipeline;
use crate::pipeline::target::Environment;

/// Runs `inventory`.
pub(crate) fn run(args: &InventoryArgs) -> Result<(), Error> {
    let loaded = pipeline::load(&sources(&args.sources))?;
    let inv = inventory::build(&loaded.content, &loaded.runtimes, &Environment::golden())?;
    print(&(serde_json::to_string_pretty(&inv).expect("json") + "\n"));
    Ok(())
}
