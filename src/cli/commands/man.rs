//! `msd-install man`: the man page, rendered by clap_mangen from the same clap structs as
//! `--help` (`msd-install man > ~/.local/share/man/man1/msd-install.1`).

use crate::cli::args::{Cli, ManArgs};
use crate::cli::error::Error;
use crate::cli::settings::{NO_JSON, NO_QUIET, Settings, Subcommand, Takes};

impl Subcommand for ManArgs {
    const NAME: &'static str = "man";

    fn json(&self) -> Takes {
        Takes::No(NO_JSON)
    }

    fn quiet(&self) -> Takes {
        Takes::No(NO_QUIET)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s)
    }
}

/// Prints the man page.
pub(crate) fn run(s: &Settings) -> Result<(), Error> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Error::Io { context: "rendering the man page".into(), source: e })?;
    s.output.text(&String::from_utf8_lossy(&buf));
    Ok(())
}
