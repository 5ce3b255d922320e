//! `msd-install bench tokens [--check|--write]`: the compact-content token benchmark of
//! [`crate::bench`]. Without a flag it prints the Markdown table (the one README.md shows);
//! `--check` and `--write` compare or update the committed baseline
//! `bench/tokens-baseline.json` through the one idiom of [`crate::generated`].

use std::path::PathBuf;

use super::sources;
use crate::bench;
use crate::cli::{BenchArgs, BenchWhat, GenOpts};
use crate::error::Error;
use crate::generated::{self, Generated, Mode};
use crate::pipeline;

/// The committed baseline, relative to the repository root.
pub const BASELINE: &str = "bench/tokens-baseline.json";

/// Runs `bench`.
pub fn run(args: &BenchArgs) -> Result<(), Error> {
    match &args.what {
        BenchWhat::Tokens(o) => tokens(o),
    }
}

fn tokens(o: &GenOpts) -> Result<(), Error> {
    let content = pipeline::load_content(&sources(&o.sources))?;
    let b = bench::measure(&content);
    let mode = if o.check {
        Mode::Check
    } else if o.write {
        Mode::Write
    } else {
        print!("{}", bench::table(&b));
        return Ok(());
    };
    let fresh = serde_json::to_string_pretty(&b).expect("json") + "\n";
    let files = [Generated { path: PathBuf::from(BASELINE), fresh }];
    let outcome = generated::apply(&o.root, &files, mode, "cargo run -q --bin msd-install -- bench tokens --write")?;
    match mode {
        Mode::Check => eprintln!("{BASELINE} is up to date"),
        _ => eprintln!("{} written", outcome.stale.len() + outcome.current.len()),
    }
    eprintln!(
        "all commands: {} -> {} tokens with compact content on ({})",
        b.total_off.tokens,
        b.total_on.tokens,
        bench::TOKENIZER
    );
    Ok(())
}
