//! `msd-install recover`: finish or undo what an interrupted run left on each target, and
//! nothing else ([`crate::apply::recover`]).

use serde_json::json;

use super::resolve_targets;
use crate::apply;
use crate::cli::args::RecoverArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Arity, Globals, Settings, Subcommand, Takes};

impl Subcommand for RecoverArgs {
    const NAME: &'static str = "recover";
    const RUNTIME: Arity = Arity::Many;
    const ALL: bool = true;
    const LOCAL: bool = true;

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        self.target.settings(base)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `recover`.
pub(crate) fn run(s: &Settings, _args: &RecoverArgs) -> Result<(), Error> {
    let targets = resolve_targets(s)?;
    let mut done = Vec::new();
    for (_, target) in &targets {
        done.push((target, apply::recover(&target.home, s.allow_symlinks)?));
    }
    if s.output.json {
        let list: Vec<_> =
            done.iter().map(|(t, r)| json!({"runtime": t.runtime, "home": t.home, "recovery": r})).collect();
        s.output.document(&crate::cli::versioned::versioned(json!({"ok": true, "targets": list})));
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
    s.output.text(&text);
    Ok(())
}
