//! `msd-install bench tokens [--check|--write]`: the compact-content token benchmark of
//! [`crate::dev::tokens`]. Without a flag it prints the Markdown table (the one README.md shows);
//! `--check` and `--write` compare or update the committed baseline
//! `bench/tokens-baseline.json` through the one idiom of [`crate::dev::generated`].
//! `bench content` and `bench port` write content trees for `bench/install.sh`: msd's own
//! scaled ([`crate::dev::scale`]), and the reference's ported ([`crate::dev::port`]).

use std::path::PathBuf;

use crate::cli::args::{BenchArgs, BenchWhat, GenOpts, PortArgs, ScaleArgs};
use crate::cli::error::Error;
use crate::cli::settings::{Globals, NO_JSON, Settings, Subcommand, Takes};
use crate::dev::generated::{Generated, Mode};
use crate::dev::tokens;
use crate::pipeline;

/// The committed baseline, relative to the repository root.
pub(crate) const BASELINE: &str = "bench/tokens-baseline.json";

impl Subcommand for BenchArgs {
    const NAME: &'static str = "bench";

    fn json(&self) -> Takes {
        Takes::No(NO_JSON)
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        match &self.what {
            BenchWhat::Tokens(o) => base.sources(&o.sources),
            BenchWhat::Content(a) => base.sources(&a.sources),
            BenchWhat::Port(_) => base,
        }
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `bench`.
pub(crate) fn run(s: &Settings, args: &BenchArgs) -> Result<(), Error> {
    match &args.what {
        BenchWhat::Tokens(o) => tokens(s, o),
        BenchWhat::Content(a) => content(s, a),
        BenchWhat::Port(a) => port(a),
    }
}

fn write_tree(tree: &crate::pipeline::load::Tree, out: &std::path::Path) -> Result<(), Error> {
    super::ensure_empty_dir(out)?;
    for (rel, bytes) in &tree.files {
        let dest = out.join(rel.as_str());
        msd_core::fs::fsx::write_atomic(&dest, bytes, msd_core::fs::fsx::FileMode::Regular)
            .map_err(|e| Error::Io { context: format!("writing {}", dest.display()), source: e })?;
    }
    Ok(())
}

fn port(a: &PortArgs) -> Result<(), Error> {
    let usage = |e: crate::dev::port::PortError| Error::Usage {
        message: e.to_string(),
        hint: "pass --reference a checkout of open-gsd/gsd-core (docs/PERFORMANCE.md names the commit)".into(),
    };
    let trees = crate::dev::port::read(&a.reference).map_err(usage)?;
    let (tree, r) = crate::dev::port::port(&trees, &crate::pipeline::load::Tree::embedded_content()).map_err(usage)?;
    write_tree(&tree, &a.out)?;
    // The port must load the way an install loads it.
    let loaded = pipeline::load_content(&crate::pipeline::Sources { content: Some(a.out.clone()), runtimes: None })?;
    let bytes_out: usize = tree.files.values().map(|b| b.len()).sum();
    let inert: Vec<String> = r.sections_inert.iter().map(|(w, n)| format!("{w} x{n}")).collect();
    eprintln!(
        "read {} files ({} bytes) of {}; wrote {} files ({bytes_out} bytes: {} commands, {} agents, router groups {}) to {}",
        r.files_in,
        r.bytes_in,
        a.reference.display(),
        tree.files.len(),
        loaded.commands.len(),
        loaded.agents.len(),
        r.groups.join(", "),
        a.out.display()
    );
    eprintln!(
        "sections: {} made msd sections, {} left as the reference's comments (a `when` msd does not know: {})",
        r.sections_ported,
        r.sections_inert.values().sum::<usize>(),
        if inert.is_empty() { "none".to_string() } else { inert.join(", ") }
    );
    Ok(())
}

fn content(s: &Settings, a: &ScaleArgs) -> Result<(), Error> {
    let src = &s.sources;
    let tree = match &src.content {
        Some(dir) => crate::pipeline::load::Tree::from_dir(dir)?,
        None => crate::pipeline::load::Tree::embedded_content(),
    };
    let scaled = crate::dev::scale::scale(&tree, a.scale)
        .map_err(|e| Error::Usage { message: e.to_string(), hint: "scale a valid content tree".into() })?;
    write_tree(&scaled, &a.out)?;
    // The copy must be as valid as the original: load it the way an install does.
    let loaded = pipeline::load_content(&crate::pipeline::Sources { content: Some(a.out.clone()), runtimes: None })?;
    eprintln!(
        "wrote {} files ({} commands, {} agents) to {}",
        scaled.files.len(),
        loaded.commands.len(),
        loaded.agents.len(),
        a.out.display()
    );
    Ok(())
}

fn tokens(s: &Settings, o: &GenOpts) -> Result<(), Error> {
    if o.write {
        super::require_repository(&o.root)?;
    }
    let content = pipeline::load_content(&s.sources)?;
    let b = tokens::measure(&content);
    let mode = if o.check {
        Mode::Check
    } else if o.write {
        Mode::Write
    } else {
        s.output.text(&tokens::table(&b));
        return Ok(());
    };
    let fresh = serde_json::to_string_pretty(&b).expect("json") + "\n";
    let files = [Generated { path: PathBuf::from(BASELINE), fresh }];
    let outcome = super::generate::apply_and_show(
        s,
        &o.root,
        &files,
        mode,
        "cargo run -q --bin msd-install -- bench tokens --write",
    )?;
    match mode {
        Mode::Check => eprintln!("{BASELINE} is up to date"),
        _ => eprintln!("{} written", outcome.stale.len() + outcome.current.len()),
    }
    eprintln!(
        "all commands: {} -> {} tokens with compact content on ({})",
        b.total_off.tokens,
        b.total_on.tokens,
        tokens::TOKENIZER
    );
    Ok(())
}
