//! `msd-install runtimes`: list every runtime and where it installs now.

use serde_json::json;

use super::{env, sources};
use crate::cli::args::ListArgs;
use crate::cli::error::Error;
use crate::pipeline;
use crate::pipeline::target;
use msd_core::manifest::capability::Scope;

/// Runs `runtimes`.
pub fn run(args: &ListArgs) -> Result<(), Error> {
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
