//! `msd-install verify`: compare installs with their manifests and report drift
//! ([`crate::apply::verify`]). Exit 0 only when every target is clean; reads only.

use serde_json::json;

use super::{env, resolve_targets};
use crate::apply;
use crate::cli::args::VerifyArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Arity, Globals, Settings, Subcommand, Takes};

impl Subcommand for VerifyArgs {
    const NAME: &'static str = "verify";
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

/// Runs `verify`.
pub(crate) fn run(s: &Settings, _args: &VerifyArgs) -> Result<(), Error> {
    let targets = resolve_targets(s)?;
    let home = env()?.home;
    let mut reports = Vec::new();
    for (rt, target) in &targets {
        reports.push((apply::verify(&rt.capability, target, s.allow_symlinks, &home)?, target));
    }
    let ok = reports.iter().all(|(r, _)| r.ok);
    if s.output.json {
        let list: Vec<_> = reports.iter().map(|(r, _)| r).collect();
        s.output.document(&crate::cli::versioned::versioned(json!({"ok": ok, "targets": list})));
    } else {
        let mut text = String::new();
        if reports.is_empty() {
            text.push_str("no msd-core install found in this scope; nothing to verify\n");
        }
        for (r, target) in &reports {
            text.push_str(&format!("{} ({}) -> {}\n", r.runtime, target.scope.as_str(), r.home.display()));
            if !r.installed {
                text.push_str("  not installed: no msd file manifest here\n");
            }
            if r.interrupted {
                text.push_str("  an interrupted run awaits recovery: run `msd-install recover` or install again\n");
            }
            for (label, list) in [("modified", &r.modified), ("missing", &r.missing), ("extra", &r.extra)] {
                for p in list {
                    text.push_str(&format!("  {label:<8} {p}\n"));
                }
            }
            for p in &r.user {
                text.push_str(&format!("  yours    {p} (no manifest lists it: left alone, not drift)\n"));
            }
            for c in &r.settings {
                let mut what: Vec<String> = Vec::new();
                if !c.added.is_empty() {
                    what.push(format!("missing {}", c.added.join(", ")));
                }
                if !c.updated.is_empty() {
                    what.push(format!("differs {}", c.updated.join(", ")));
                }
                if !c.removed.is_empty() {
                    what.push(format!("stale {}", c.removed.join(", ")));
                }
                what.extend(c.notes.iter().cloned());
                text.push_str(&format!("  settings {}: {}\n", c.path, what.join("; ")));
            }
            if r.ok {
                text.push_str("  clean: every managed file matches the manifest\n");
            }
        }
        s.output.text(&text);
    }
    if ok { Ok(()) } else { Err(Error::CheckFailed(String::new())) }
}
