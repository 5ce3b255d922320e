//! `msd-install uninstall`: remove msd-core from one runtime and scope
//! ([`crate::apply::uninstall`]), keeping the user's files, edits and settings.

use serde_json::json;

use super::resolve_targets;
use crate::apply;
use crate::cli::args::UninstallArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Arity, Globals, Runtimes, Settings, Subcommand, Takes};

impl Subcommand for UninstallArgs {
    const NAME: &'static str = "uninstall";
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

/// Runs `uninstall`.
pub(crate) fn run(s: &Settings, args: &UninstallArgs) -> Result<(), Error> {
    let targets = resolve_targets(s)?;
    let (_, root) = super::env_for(&s.place)?;
    let mut reports = Vec::new();
    for (rt, target) in &targets {
        let r = apply::uninstall(&rt.capability, target, s.allow_symlinks, args.dry_run, &s.output.bars())?;
        reports.push((r, target));
    }
    if !args.dry_run {
        // The no-change records of the targets uninstalled (a cache outside the homes).
        let env = super::env()?;
        for (_, target) in &reports {
            apply::fast::forget(&env, target);
        }
        let parents: Vec<_> = reports.iter().flat_map(|(r, _)| r.created_parents.iter().cloned()).collect();
        apply::remove_created_parents(&parents);
    }
    if s.runtimes == Runtimes::All && !args.dry_run {
        apply::forget_version(&super::env()?);
    }
    // msd.toml's `.gitignore` block follows the local installs (gone with the last one).
    let gitignored = match &root {
        Some(root) if !args.dry_run => {
            let runtimes = crate::pipeline::load_runtimes(&s.sources)?;
            crate::cli::project::gitignore::sync(&root.dir, &runtimes, &super::env()?, false)?
        }
        _ => None,
    };
    if s.output.json {
        let list: Vec<_> = reports.iter().map(|(r, _)| r).collect();
        s.output.document(&crate::cli::versioned::versioned(
            json!({"ok": true, "dry_run": args.dry_run, "targets": list, "gitignore": gitignored}),
        ));
        return Ok(());
    }
    let mut text = String::new();
    if reports.is_empty() {
        text.push_str("no msd-core install found in this scope; nothing to do\n");
    }
    for (r, target) in &reports {
        text.push_str(&describe(r, target, args.dry_run));
    }
    if let Some(g) = &gitignored {
        text.push_str(&format!("{g}\n"));
    }
    if args.dry_run {
        text.push_str("dry run: nothing was written\n");
    }
    s.output.text(&text);
    Ok(())
}

fn describe(r: &apply::UninstallReport, target: &crate::pipeline::target::Target, dry_run: bool) -> String {
    let mut text = format!("{} ({}) -> {}\n", r.runtime, target.scope.as_str(), r.home.display());
    if let Some(rec) = &r.recovery {
        text.push_str(&super::install::recovery_line(rec));
    }
    if !r.installed {
        text.push_str("  msd-core is not installed here; nothing to do\n");
        return text;
    }
    let verb = if dry_run { "would be removed" } else { "removed" };
    text.push_str(&format!("  {} file(s) {verb}\n", r.removed.len()));
    if !r.kept_edited.is_empty() {
        text.push_str(&format!("  {} file(s) you edited stay in place", r.kept_edited.len()));
        if let Some(dir) = &r.backup_dir {
            text.push_str(&format!(" (copies in {})", dir.display()));
        }
        text.push_str(":\n");
        for p in &r.kept_edited {
            text.push_str(&format!("    {p}\n"));
        }
        text.push_str("  (an install here later backs them up again and replaces them, as an upgrade does)\n");
    }
    for c in &r.settings {
        if !c.removed.is_empty() {
            text.push_str(&format!("  settings {}: removed {}\n", c.path, c.removed.join(", ")));
        }
    }
    if !r.dirs_removed.is_empty() {
        let dirs: Vec<_> = r.dirs_removed.iter().map(ToString::to_string).collect();
        text.push_str(&format!("  empty directories removed: {}\n", dirs.join(", ")));
    }
    if !dry_run {
        text.push_str("  your other files and settings were not touched\n");
    }
    text
}
