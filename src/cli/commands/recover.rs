//! `msd-install recover`: finish or undo what an interrupted run left on one target, and
//! nothing else ([`crate::apply::recover`]).

use serde_json::json;

use super::{out, resolve_one};
use crate::apply;
use crate::cli::args::RecoverArgs;
use crate::cli::error::Error;

/// Runs `recover`.
pub fn run(args: &RecoverArgs) -> Result<(), Error> {
    let (_, target) = resolve_one(&args.target)?;
    let r = apply::recover(&target.home, args.target.allow_symlinks)?;
    if args.output.json {
        let doc = json!({"ok": true, "home": target.home, "recovery": r});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    let mut text = format!("{} -> {}\n", target.runtime, target.home.display());
    match &r {
        Some(rec) => text.push_str(&super::install::recovery_line(rec)),
        None => text.push_str("  nothing to recover\n"),
    }
    out(&text, &args.output);
    Ok(())
}
