//! `msd_run query context-predicates [--class C] [--prefix P] [--contains S]`: the predicates of
//! the installed `CONTEXT.md` that match every given selector (SPEC section 10, contracts 8.4).
//!
//! It reads the store live (never the index), so an answer always reflects the installed text.
//! At least one selector is required; they are ANDed. A value that starts with `--` is passed as
//! `--prefix=--x`. Output: `{"matched": N, "predicates": [{id, class, value, line, section}]}`.
//! Duplicate ids or malformed lines in the store are reported on stderr and do not fail the
//! query (the installer's `gen context-index --check` is where they fail).

use std::path::Path;

use clap::builder::NonEmptyStringValueParser;
use serde_json::json;

use super::{Answer, RunError, core_dir, read_core};
use msd_core::installed::predicates::{self, Selector};

/// Selectors, ANDed.
#[derive(Debug, Clone, clap::Args)]
#[group(required = true, multiple = true)]
pub struct Args {
    /// The class (the id's first segment), matched exactly: `--class RULE`.
    #[arg(long = "class", value_name = "C", value_parser = NonEmptyStringValueParser::new())]
    pub class: Option<String>,
    /// A raw prefix of the id (not segment-aware): `--prefix RULE.install`.
    #[arg(long, value_name = "P", value_parser = NonEmptyStringValueParser::new())]
    pub prefix: Option<String>,
    /// A case-insensitive substring of "<id> <value>": `--contains worktree`.
    #[arg(long, value_name = "S", value_parser = NonEmptyStringValueParser::new())]
    pub contains: Option<String>,
}

/// Runs the query.
pub(crate) fn run(core: Option<&Path>, args: &Args) -> Result<Answer, RunError> {
    let core = core_dir(core)?;
    let text = read_core(&core, "CONTEXT.md")?.ok_or_else(|| RunError::Core {
        path: core.join("CONTEXT.md").display().to_string(),
        message: "the installed predicate store CONTEXT.md is missing".into(),
        hint: "reinstall msd-core with msd-install".into(),
    })?;
    let parsed = predicates::parse(&text);
    for d in &parsed.duplicates {
        let lines: Vec<String> = d.lines.iter().map(usize::to_string).collect();
        eprintln!("warning: CONTEXT.md: `{}` is declared {} times (lines {})", d.id, d.count, lines.join(", "));
    }
    for m in &parsed.malformed {
        eprintln!("warning: CONTEXT.md:{}: {}: {}", m.line, m.reason, m.text);
    }
    let selector = Selector { class: args.class.clone(), prefix: args.prefix.clone(), contains: args.contains.clone() };
    let matched = selector.select(&parsed.predicates);
    Ok(Answer::json(&json!({"matched": matched.len(), "predicates": matched}), false))
}
