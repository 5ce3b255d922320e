//! `msd-install recover`: finish or undo what an interrupted run left on each target, and
//! nothing else ([`crate::apply::recover`]).

use serde_json::json;

use super::{out, resolve_targets};
use crate::apply;
use crate::cli::args::RecoverArgs;
use crate::cli::error::Error;

/// Runs `recover`.
pub(crate) fn run(args: &RecoverArgs) -> Result<(), Error> {
    let targets = resolve_targets(&args.target)?;
    let mut done = Vec::new();
    for (_, target) in &targets {
        done.push((target, apply::recover(&target.home, args.target.allow_symlinks)?));
    }
    if args.output.json {
        let list: Vec<_> =
            done.iter().map(|(t, r)| json!({"runtime": t.runtime, "home": t.home, "recovery": r})).collect();
        let doc = crate::cli::versioned::versioned(json!({"ok": true, "targets": list}));
        crate::cli::output::println(serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    let mut text = String::new();
    for (target, r) in &done {
        text.push_str(&format!("{} -> {}\n", target.runtime, target.home.display()));
        match r {
            Some(rec) => text.push_str(&super::install::recovery_line(rec)),
            None => text.push_str("  nothing to recover\n"),
        }
    }
    out(&text, &args.output);
    Ok(())
}
