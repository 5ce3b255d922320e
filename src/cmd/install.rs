//! `msd-install [install]`: emit, guard, plan and write the selected runtimes.

use serde_json::json;

use super::{env, human_bytes, out, sources};
use crate::capability::Scope;
use crate::cli::InstallArgs;
use crate::compose::fit::FileCompose;
use crate::error::Error;
use crate::pipeline::{self, InstallOptions};
use crate::plan::{Action, Plan};

/// Runs an install.
pub fn run(args: &InstallArgs) -> Result<(), Error> {
    let t = &args.target;
    let src = sources(&args.sources);
    let runtimes = pipeline::load_runtimes(&src)?;
    let ids = if t.runtime.is_empty() && !t.all { vec!["claude".to_string()] } else { t.runtime.clone() };
    let selected = pipeline::select(&runtimes, &ids, t.all)?;
    if t.config_dir.is_some() && selected.len() > 1 {
        return Err(Error::Usage {
            message: "--config-dir names one home and cannot be used with several runtimes".into(),
            hint: "install the runtimes one at a time, each with its own --config-dir".into(),
        });
    }
    let scope = if t.local { Scope::Local } else { Scope::Global };
    let env = env()?;
    // Under --all --local, runtimes without a local scope are skipped rather than failing the set.
    let runtimes: Vec<_> = if scope == Scope::Local && t.all {
        selected.into_iter().filter(|r| r.capability.local.is_some()).collect()
    } else {
        selected
    };
    let opts = InstallOptions { scope, config_dir: t.config_dir.as_deref(), allow_symlinks: args.allow_symlinks };
    let content = pipeline::load_content(&src)?;
    let prepared = pipeline::prepare(&content, &runtimes, &opts, &env)?;
    let reports = if args.dry_run { Vec::new() } else { pipeline::write_all(&prepared, args.allow_symlinks)? };

    if args.output.json {
        let items: Vec<_> = prepared
            .iter()
            .enumerate()
            .map(|(i, p)| {
                json!({
                    "runtime": p.plan.runtime,
                    "scope": p.plan.scope,
                    "home": p.target.home,
                    "home_source": p.target.source,
                    "summary": p.plan.summary(),
                    "manifest_changed": p.plan.manifest_changed,
                    "ops": p.plan.ops,
                    "written": reports.get(i),
                    "caps": p.guard.compliant,
                    "compose": p.compose,
                })
            })
            .collect();
        let doc = json!({"ok": true, "dry_run": args.dry_run, "version": env!("CARGO_PKG_VERSION"), "runtimes": items});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    let mut text = String::new();
    for (i, p) in prepared.iter().enumerate() {
        text.push_str(&describe(&p.plan, args.dry_run));
        text.push_str(&describe_compose(&p.compose));
        if let Some(r) = reports.get(i)
            && let Some(dir) = &r.backup_dir
        {
            text.push_str(&format!(
                "  backed up {} edited file(s) to {} before replacing them:\n",
                r.backed_up.len(),
                dir.display()
            ));
            for b in &r.backed_up {
                text.push_str(&format!("    {b}\n"));
            }
        }
    }
    if args.dry_run {
        text.push_str("dry run: nothing was written\n");
    }
    out(&text, &args.output);
    Ok(())
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

fn describe(plan: &Plan, dry_run: bool) -> String {
    let s = plan.summary();
    let mut text = format!("{} ({}) -> {}\n", plan.runtime, plan.scope.as_str(), plan.home.display());
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
    text
}
