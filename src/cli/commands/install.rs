//! `msd-install [install]`: emit, guard, plan and write the selected runtimes, each target under
//! its lock and in one transaction ([`crate::apply::install`]).

use serde_json::json;

use super::{env, human_bytes, out, sources};
use crate::apply::plan::{Action, Plan};
use crate::apply::txn::Recovery;
use crate::apply::{self, InstallOptions, TargetRun};
use crate::cli::args::InstallArgs;
use crate::cli::error::Error;
use crate::cli::output::{Bars, RunBars};
use crate::pipeline;
use crate::pipeline::fit::FileCompose;
use msd_core::manifest::capability::Scope;

/// Runs an install.
pub fn run(args: &InstallArgs) -> Result<(), Error> {
    let t = &args.target;
    let src = sources(&args.sources);
    let runtimes = pipeline::load_runtimes(&src)?;
    let ids = if t.runtime.is_empty() && !t.all { vec![pipeline::primary(&runtimes)?] } else { t.runtime.clone() };
    let selected = pipeline::select(&runtimes, &ids, t.all)?;
    if t.place.config_dir.is_some() && selected.len() > 1 {
        return Err(Error::Usage {
            message: "--config-dir names one home and cannot be used with several runtimes".into(),
            hint: "install the runtimes one at a time, each with its own --config-dir".into(),
        });
    }
    let scope = t.place.scope();
    let env = env()?;
    // Under --all --local, runtimes without a local scope are skipped rather than failing the set.
    let runtimes: Vec<_> = if scope == Scope::Local && t.all {
        selected.into_iter().filter(|r| r.capability.local.is_some()).collect()
    } else {
        selected
    };
    let opts = InstallOptions {
        scope,
        config_dir: t.place.config_dir.as_deref(),
        allow_symlinks: args.allow_symlinks,
        adopt: args.adopt,
        dry_run: args.dry_run,
        progress: &RunBars { enabled: Bars::enabled(args.output.quiet) },
    };
    let content = pipeline::load_content(&src)?;
    let runs = apply::install(&content, &runtimes, &opts, &env)?;

    if args.output.json {
        let items: Vec<_> = runs
            .iter()
            .map(|r| {
                let p = &r.plan;
                json!({
                    "runtime": p.runtime,
                    "scope": p.scope,
                    "home": p.home,
                    "home_source": r.target.source,
                    "summary": p.summary(),
                    "manifest_changed": p.manifest_changed,
                    "ops": p.ops,
                    "settings": p.settings,
                    "migrations": p.migrations,
                    "pending_migrations": r.pending_migrations,
                    "recovery": r.recovery,
                    "pending_recovery": r.pending_recovery,
                    "written": r.report,
                    "caps": r.guard.compliant,
                    "compose": r.compose,
                })
            })
            .collect();
        let doc = json!({"ok": true, "dry_run": args.dry_run, "version": env!("CARGO_PKG_VERSION"), "runtimes": items});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    let mut text = String::new();
    for r in &runs {
        text.push_str(&describe(r, args.dry_run));
        text.push_str(&describe_compose(&r.compose));
    }
    if args.dry_run {
        text.push_str("dry run: nothing was written\n");
    }
    out(&text, &args.output);
    Ok(())
}

/// One line for what recovery did.
pub(crate) fn recovery_line(r: &Recovery) -> String {
    match r {
        Recovery::Completed { label, ops } => {
            format!("  completed an interrupted run ({label}, {ops} operations) before starting\n")
        }
        Recovery::RolledBack { label, reason } => {
            format!("  rolled back an interrupted run ({label}) that could not be completed: {reason}\n")
        }
        Recovery::Discarded => "  removed the staging area of a run interrupted before it changed anything\n".into(),
    }
}

/// One line per file that was composed to fit its cap.
fn describe_compose(files: &[FileCompose]) -> String {
    let mut text = String::new();
    for f in files.iter().filter(|f| f.budget.is_some()) {
        let Some(r) = &f.report else { continue };
        let mut what = Vec::new();
        for (label, ids) in [("omitted", &r.omitted), ("shrunk", &r.shrunk), ("truncated", &r.truncated)] {
            if !ids.is_empty() {
                what.push(format!("{label} {}", ids.join(", ")));
            }
        }
        text.push_str(&format!(
            "  composed {} to {} B to fit its cap of {} B ({} B whole): {}\n",
            f.path,
            human_bytes(f.bytes),
            human_bytes(f.cap.unwrap_or(0)),
            human_bytes(f.full_bytes),
            what.join("; ")
        ));
    }
    text
}

fn describe(r: &TargetRun, dry_run: bool) -> String {
    let plan: &Plan = &r.plan;
    let s = plan.summary();
    let mut text = format!("{} ({}) -> {}\n", plan.runtime, plan.scope.as_str(), plan.home.display());
    if let Some(rec) = &r.recovery {
        text.push_str(&recovery_line(rec));
    }
    if r.pending_recovery {
        text.push_str("  an interrupted run left a journal here; the next run completes it first\n");
    }
    for m in plan.migrations.iter().filter(|m| m.applied) {
        text.push_str(&format!("  migrated: {}\n", m.id));
    }
    if !r.pending_migrations.is_empty() {
        text.push_str(&format!("  migrations to check first: {}\n", r.pending_migrations.join(", ")));
    }
    if dry_run {
        for op in plan.ops.iter().filter(|o| o.action != Action::Keep) {
            let size = match op.action {
                Action::Remove => format!("-{} B", human_bytes(op.old_bytes.unwrap_or(0))),
                _ => format!("{} B", human_bytes(op.bytes.unwrap_or(0))),
            };
            let backup = if op.backup.is_some() { "  (edited: backed up first)" } else { "" };
            text.push_str(&format!("  {:<7} {}  {size}{backup}\n", op.action.as_str(), op.path));
        }
    }
    for c in plan.settings.iter().filter(|c| c.action != Action::Keep) {
        let mut what = Vec::new();
        if !c.added.is_empty() {
            what.push(format!("added {}", c.added.join(", ")));
        }
        if !c.updated.is_empty() {
            what.push(format!("updated {}", c.updated.join(", ")));
        }
        if !c.removed.is_empty() {
            what.push(format!("removed {}", c.removed.join(", ")));
        }
        text.push_str(&format!("  settings {}: {}\n", c.path, what.join("; ")));
    }
    for c in &plan.settings {
        for n in &c.notes {
            text.push_str(&format!("  note: {}: {n}\n", c.path));
        }
    }
    if plan.is_noop() {
        text.push_str(&format!("  up to date: {} files, nothing changed\n", s.kept));
    } else {
        let verb = if dry_run { "would be" } else { "were" };
        text.push_str(&format!(
            "  {} added, {} changed, {} removed, {} kept ({} bytes emitted); files {verb} written\n",
            s.added,
            s.changed,
            s.removed,
            s.kept,
            human_bytes(s.bytes)
        ));
    }
    if let Some(w) = &r.report
        && let Some(dir) = &w.backup_dir
    {
        text.push_str(&format!(
            "  backed up {} edited file(s) to {} before replacing them:\n",
            w.backed_up.len(),
            dir.display()
        ));
        for b in &w.backed_up {
            text.push_str(&format!("    {b}\n"));
        }
    }
    text
}
