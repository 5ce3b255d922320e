//! `msd-install man`: the man page, rendered by clap_mangen from the same clap structs as
//! `--help` (`msd-install man > ~/.local/share/man/man1/msd-install.1`).

use super::print;
use crate::cli::args::Cli;
use crate::cli::error::Error;

/// Runs `man`.
pub(crate) fn run() -> Result<(), Error> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Error::Io { context: "rendering the man page".into(), source: e })?;
    print(&String::from_utf8_lossy(&buf));
    Ok(())
}
