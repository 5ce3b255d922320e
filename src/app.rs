//! The `msd-install` entry: parse arguments, resolve them into settings, run the command, print
//! the result once (for people, or as one JSON document), map errors to exit codes.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use serde_json::json;

use crate::capability::{self, Scope};
use crate::cli::{Cli, Command, EmitArgs, InstallArgs, ListArgs, OutputArgs, SourceArgs};
use crate::error::{Error, Exit};
use crate::fsx;
use crate::pipeline::{self, InstallOptions, Sources};
use crate::plan::{Action, Plan};
use crate::target::{self, Environment};

/// Runs `msd-install` with `args` (including the program name).
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => Exit::Ok.into(),
                _ => Exit::Usage.into(),
            };
        }
    };
    let json = match &cli.command {
        None => cli.install.output.json,
        Some(Command::Install(a)) => a.output.json,
        Some(Command::Emit(a)) => a.output.json,
        Some(Command::Runtimes(a)) => a.json,
        Some(Command::Schema) => false,
    };
    let result = match cli.command {
        None => install(&cli.install),
        Some(Command::Install(a)) => install(&a),
        Some(Command::Emit(a)) => emit(&a),
        Some(Command::Runtimes(a)) => runtimes(&a),
        Some(Command::Schema) => {
            print!("{}", capability::json_schema());
            Ok(())
        }
    };
    match result {
        Ok(()) => Exit::Ok.into(),
        Err(e) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&e.to_json()).expect("json"));
            } else {
                eprintln!("{}", e.render());
            }
            e.exit().into()
        }
    }
}

fn sources(s: &SourceArgs) -> Sources {
    Sources { content: s.content.clone(), runtimes: s.runtimes_dir.clone() }
}

fn env() -> Result<Environment, Error> {
    Environment::from_process().map_err(|e| Error::Io { context: "reading the environment".into(), source: e })
}

fn out(text: &str, o: &OutputArgs) {
    if !o.quiet && !o.json {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
    }
}

fn install(args: &InstallArgs) -> Result<(), Error> {
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

fn human_bytes(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
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

fn emit(args: &EmitArgs) -> Result<(), Error> {
    let src = sources(&args.sources);
    let runtimes = pipeline::load_runtimes(&src)?;
    let rt = pipeline::select(&runtimes, std::slice::from_ref(&args.runtime), false)?[0];
    let content = pipeline::load_content(&src)?;
    let scope = if args.local { Scope::Local } else { Scope::Global };
    let env = env()?;
    let (target, emission, _) = pipeline::emit_one(&content, rt, scope, args.config_dir.as_deref(), &env)?;
    let out_dir = env.expand(&args.out.to_string_lossy());
    ensure_empty_dir(&out_dir)?;
    let mut bytes = 0u64;
    for f in &emission.files {
        let dest = fsx::confined(&out_dir, &f.path, false)
            .map_err(|e| Error::Io { context: "emit".into(), source: std::io::Error::other(e.to_string()) })?;
        fsx::write_atomic(&dest, &f.bytes, f.mode)
            .map_err(|e| Error::Io { context: format!("writing {}", dest.display()), source: e })?;
        bytes += f.bytes.len() as u64;
    }
    if args.output.json {
        let files: Vec<_> = emission
            .files
            .iter()
            .map(|f| json!({"path": f.path, "bytes": f.bytes.len(), "kind": f.kind, "sources": f.sources}))
            .collect();
        let doc = json!({"ok": true, "runtime": emission.runtime, "scope": scope, "rewritten_for": target.home, "out": out_dir, "files": files});
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        out(
            &format!(
                "{} ({}) emitted {} files ({} bytes) into {} (paths rewritten for {})\n",
                emission.runtime,
                scope.as_str(),
                emission.files.len(),
                human_bytes(bytes),
                out_dir.display(),
                target.home.display()
            ),
            &args.output,
        );
    }
    Ok(())
}

fn ensure_empty_dir(dir: &Path) -> Result<(), Error> {
    match std::fs::read_dir(dir) {
        Ok(mut it) => {
            if it.next().is_some() {
                return Err(Error::Usage {
                    message: format!("{} is not empty", dir.display()),
                    hint: "emit into a new or empty directory".into(),
                });
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io { context: format!("reading {}", dir.display()), source: e }),
    }
}

fn runtimes(args: &ListArgs) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&sources(&args.sources))?;
    let env = env()?;
    let rows: Vec<_> = runtimes
        .iter()
        .map(|r| {
            let c = &r.capability;
            let (home, source) = target::global_home(c, None, &env);
            json!({
                "id": c.id,
                "title": c.title,
                "tier": c.tier,
                "global_home": home,
                "home_source": source,
                "home_kind": c.home.kind,
                "env": c.home.env.iter().map(|e| e.var.clone()).collect::<Vec<_>>(),
                "local_dir": c.local.as_ref().map(|l| l.dir.clone()),
                "global_kinds": c.kinds(Scope::Global),
                "local_kinds": c.kinds(Scope::Local),
            })
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
        return Ok(());
    }
    let mut text = format!(
        "{:<12} {:<22} {:<40} {:<11} {}\n",
        "ID", "TITLE", "GLOBAL HOME (resolved now)", "LOCAL DIR", "ARTIFACTS (global / local)"
    );
    for r in &runtimes {
        let c = &r.capability;
        let (home, _) = target::global_home(c, None, &env);
        let local = c.local.as_ref().map_or("-".to_string(), |l| l.dir.clone());
        let kinds = |s| {
            let k = c.kinds(s);
            if k.is_empty() { "-".to_string() } else { k.join(",") }
        };
        text.push_str(&format!(
            "{:<12} {:<22} {:<40} {:<11} {} / {}\n",
            c.id,
            c.title,
            home.display(),
            local,
            kinds(Scope::Global),
            kinds(Scope::Local)
        ));
    }
    print!("{text}");
    Ok(())
}
