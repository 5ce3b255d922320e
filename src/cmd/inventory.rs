//! `msd-install inventory`: what every runtime x scope receives, hashed, as one JSON document,
//! emitted for the fixed environment of `gen golden`. It is also the base side of
//! `attribution --base-binary`: another build of msd-install answers through it.

use super::generate::golden_environment;
use super::{print, sources};
use crate::attribution::inventory;
use crate::cli::InventoryArgs;
use crate::error::Error;
use crate::pipeline;

/// Runs `inventory`.
pub fn run(args: &InventoryArgs) -> Result<(), Error> {
    let loaded = pipeline::load(&sources(&args.sources))?;
    let inv = inventory::build(&loaded.content, &loaded.runtimes, &golden_environment())?;
    print(&(serde_json::to_string_pretty(&inv).expect("json") + "\n"));
    Ok(())
}
