//! `msd-install runtimes`: list every runtime and where it installs now.

use std::path::PathBuf;

use serde::Serialize;

use super::{env, table};
use crate::cli::args::ListArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Globals, NO_QUIET, Settings, Subcommand, Takes};
use crate::pipeline;
use crate::pipeline::target;
use msd_core::manifest::capability::Scope;

/// `runtimes --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RuntimesDoc {
    /// The version of this document's shape.
    pub schema_version: u32,
    /// Every runtime, sorted by id.
    pub runtimes: Vec<RuntimeRow>,
}

/// One runtime.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RuntimeRow {
    /// The id `-r` takes.
    pub id: String,
    /// Its name.
    pub title: String,
    /// Support tier (`primary`, ...).
    pub tier: String,
    /// `sunset` when the runtime's maker ended it, else the tier.
    pub status: String,
    /// What the real-runtime tier proved (package, version range, date); absent when no CLI of
    /// the runtime can be tested here.
    pub tested: Option<msd_core::manifest::capability::Tested>,
    /// The sunset notice, naming the successor.
    pub notice: Option<String>,
    /// The global home as it resolves now.
    pub global_home: PathBuf,
    /// How it was found: `{"from": "env", "name": "CLAUDE_CONFIG_DIR"}`, `{"from": "default"}`, ...
    pub home_source: serde_json::Value,
    /// What kind of path the home is (`dir`, `file-parent`, ...).
    pub home_kind: serde_json::Value,
    /// The environment variables that move the home, in precedence order.
    pub env: Vec<String>,
    /// The project-local directory, when the runtime has a local scope.
    pub local_dir: Option<String>,
    /// Artifact kinds a global install writes.
    pub global_kinds: Vec<String>,
    /// Artifact kinds a local install writes.
    pub local_kinds: Vec<String>,
}

impl Subcommand for ListArgs {
    const NAME: &'static str = "runtimes";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn quiet(&self) -> Takes {
        Takes::No(NO_QUIET)
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        base.sources(&self.sources)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s)
    }
}

/// Runs `runtimes`.
pub(crate) fn run(s: &Settings) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let env = env()?;
    let rows: Vec<RuntimeRow> = runtimes
        .iter()
        .map(|r| {
            let c = &r.capability;
            let (home, source) = target::global_home(c, None, &env);
            let kinds = |s| c.kinds(s).into_iter().map(str::to_string).collect::<Vec<_>>();
            RuntimeRow {
                id: c.id.clone(),
                title: c.title.clone(),
                tier: serde_json::to_value(c.tier)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                status: c.status().to_string(),
                tested: c.tested.clone(),
                notice: c.sunset.as_ref().map(|s| s.notice.clone()),
                global_home: home,
                home_source: serde_json::to_value(source).expect("json"),
                home_kind: serde_json::to_value(c.home.kind).expect("json"),
                env: c.home.env.iter().map(|e| e.var.clone()).collect(),
                local_dir: c.local.as_ref().map(|l| l.dir.clone()),
                global_kinds: kinds(Scope::Global),
                local_kinds: kinds(Scope::Local),
            }
        })
        .collect();
    if s.output.json {
        let doc = RuntimesDoc { schema_version: crate::cli::versioned::SCHEMA_VERSION, runtimes: rows };
        s.output.document(&doc);
        return Ok(());
    }
    let list = |k: &[String]| if k.is_empty() { "-".to_string() } else { k.join(",") };
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.id.clone(),
                r.title.clone(),
                r.status.clone(),
                r.tested.as_ref().map_or_else(|| "-".into(), |t| format!("{} {} ({})", t.package, t.range(), t.date)),
                r.global_home.display().to_string(),
                r.local_dir.clone().unwrap_or_else(|| "-".into()),
                format!("{} / {}", list(&r.global_kinds), list(&r.local_kinds)),
            ]
        })
        .collect();
    let header =
        ["ID", "TITLE", "STATUS", "TESTED", "GLOBAL HOME (resolved now)", "LOCAL DIR", "ARTIFACTS (global / local)"];
    let mut text = table(&header, &cells, |_, c| c.to_string());
    for r in &rows {
        if let Some(n) = &r.notice {
            text.push_str(&format!("{}: {n}\n", r.id));
        }
    }
    s.output.text(&text);
    Ok(())
}
