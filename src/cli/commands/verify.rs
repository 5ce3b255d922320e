//! `msd-install verify`: compare an install with its manifest and report drift
//! ([`crate::apply::verify`]). Exit 0 only when it is clean; reads only.

use super::{env, out, resolve_one};
use crate::apply;
use crate::cli::args::VerifyArgs;
use crate::cli::error::Error;

/// Runs `verify`.
pub fn run(args: &VerifyArgs) -> Result<(), Error> {
    let (rt, target) = resolve_one(&args.target)?;
    let r = apply::verify(&rt.capability, &target, args.target.allow_symlinks, &env()?.home)?;
    if args.output.json {
        println!("{}", serde_json::to_string_pretty(&r).expect("json"));
    } else {
        let mut text = format!("{} ({}) -> {}\n", r.runtime, target.scope.as_str(), r.home.display());
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
        out(&text, &args.output);
    }
    if r.ok { Ok(()) } else { Err(Error::CheckFailed(String::new())) }
}
