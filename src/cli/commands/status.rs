//! `msd-install status`: every runtime x scope with an msd install, the global homes as they
//! resolve now and the current project's local dirs, with version, profile, file count, drift
//! (as `verify` counts it) and when it was installed. Reads only.

use std::path::PathBuf;

use serde::Serialize;

use super::{env, project_root};
use crate::apply;
use crate::apply::record::{self, FileManifest};
use crate::apply::state::InstallState;
use crate::cli::args::StatusArgs;
use crate::cli::error::Error;
use crate::cli::output::Paint;
use crate::cli::settings::{Settings, Subcommand, Takes};
use crate::pipeline;
use crate::pipeline::Sources;
use crate::pipeline::target;
use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

/// `status --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct StatusDoc {
    /// The version of this document's shape.
    pub schema_version: u32,
    /// The project whose local dirs were looked at.
    pub project: PathBuf,
    /// What marked the project (`.git`, `.planning/`, `--project`, or the current directory).
    pub project_found_by: String,
    /// One entry per runtime x scope that has an install (or an interrupted run).
    pub installs: Vec<StatusRow>,
}

/// One install.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct StatusRow {
    /// Runtime id.
    pub runtime: String,
    /// `global` or `local`.
    pub scope: String,
    /// The home.
    pub home: PathBuf,
    /// The msd-install version that wrote the install.
    pub version: String,
    /// The install was written by an msd-install older than this one: installing again updates
    /// its content.
    pub older_than_binary: bool,
    /// The profile recorded in the install state (absent before profiles existed).
    pub profile: Option<String>,
    /// Files the install manages.
    pub files: usize,
    /// Managed files whose bytes differ from the manifest.
    pub modified: usize,
    /// Managed files that are gone.
    pub missing: usize,
    /// Files in msd's directories that the manifest does not list.
    pub extra: usize,
    /// Settings files whose msd entries are missing or differ.
    pub settings_drift: usize,
    /// Whether verify would pass.
    pub clean: bool,
    /// An interrupted run awaits recovery.
    pub interrupted: bool,
    /// When the file manifest was last written (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub installed_at: Option<String>,
    /// The runtime's sunset notice, naming its successor (from its manifest).
    pub notice: Option<String>,
}

impl Subcommand for StatusArgs {
    const NAME: &'static str = "status";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `status`.
pub(crate) fn run(s: &Settings, args: &StatusArgs) -> Result<(), Error> {
    let doc = collect(args)?;
    if s.output.json {
        s.output.document(&doc);
    } else {
        s.output.text(&render(&doc, &Paint::stdout(s.output.color)));
    }
    Ok(())
}

/// Every install `status` lists.
pub(crate) fn collect(args: &StatusArgs) -> Result<StatusDoc, Error> {
    let runtimes = pipeline::load_runtimes(&Sources { content: None, runtimes: args.runtimes_dir.clone() })?;
    let mut env = env()?;
    let root = project_root(args.project.as_deref(), &env.cwd);
    let mut installs = Vec::new();
    for scope in [Scope::Global, Scope::Local] {
        if scope == Scope::Local {
            env.cwd = root.dir.clone();
        }
        for rt in &runtimes {
            let cap = &rt.capability;
            if scope == Scope::Local && cap.local.is_none() {
                continue;
            }
            let Ok(t) = target::resolve(cap, scope, None, &env) else { continue };
            // One survey of the target: what verify reports and what the row shows. Reading
            // only: a home linked into a dotfiles repository is read through its link (writing
            // through one is what `--allow-symlinks` is asked for).
            let (v, survey) = apply::verify_surveyed(cap, &t, true, &env.home)?;
            let (manifest, state) = survey.map_or((None, None), |s| (s.manifest, s.state));
            let Some(m) = manifest else {
                if v.interrupted {
                    let mut r = row(cap.id.clone(), &t, None, None, &v);
                    r.notice = cap.sunset.as_ref().map(|s| s.notice.clone());
                    installs.push(r);
                }
                continue;
            };
            let at = fsx::modified(&t.home.join(record::manifest_rel(cap, scope).as_str())).ok();
            let mut r = row(cap.id.clone(), &t, Some(&m), state.as_ref(), &v);
            r.installed_at = at.map(iso8601);
            r.notice = cap.sunset.as_ref().map(|s| s.notice.clone());
            installs.push(r);
        }
    }
    Ok(StatusDoc {
        schema_version: crate::cli::versioned::SCHEMA_VERSION,
        project: root.dir,
        project_found_by: root.found_by.to_string(),
        installs,
    })
}

fn row(
    runtime: String,
    t: &target::Target,
    m: Option<&FileManifest>,
    state: Option<&InstallState>,
    v: &apply::VerifyReport,
) -> StatusRow {
    StatusRow {
        runtime,
        scope: t.scope.as_str().to_string(),
        home: t.home.clone(),
        version: m.map_or_else(String::new, |m| m.tool_version.clone()),
        older_than_binary: m.is_some_and(|m| {
            crate::cli::version::compare(&m.tool_version, crate::cli::version::VERSION)
                == Some(std::cmp::Ordering::Less)
        }),
        profile: state.and_then(profile_of),
        files: m.map_or(0, |m| m.files.len()),
        modified: v.modified.len(),
        missing: v.missing.len(),
        extra: v.extra.len(),
        settings_drift: v.settings.len(),
        clean: v.ok,
        interrupted: v.interrupted,
        installed_at: None,
        notice: None,
    }
}

/// The profile an install recorded (none before profiles were recorded).
fn profile_of(state: &InstallState) -> Option<String> {
    state.profile.clone()
}

/// `YYYYMMDDTHHMMSSZ` -> `YYYY-MM-DDTHH:MM:SSZ`.
fn iso8601(t: std::time::SystemTime) -> String {
    let s = apply::write::timestamp_at(t);
    format!("{}-{}-{}T{}:{}:{}Z", &s[0..4], &s[4..6], &s[6..8], &s[9..11], &s[11..13], &s[13..15])
}

fn render(doc: &StatusDoc, paint: &Paint) -> String {
    if doc.installs.is_empty() {
        return format!(
            "no msd-core install found (global homes, and {} of the project {})\n\
             hint: `msd-install` installs for claude; `msd-install runtimes` lists the others\n",
            "local dirs",
            doc.project.display()
        );
    }
    let header = ["RUNTIME", "SCOPE", "VERSION", "PROFILE", "FILES", "DRIFT", "INSTALLED", "HOME"];
    let rows: Vec<[String; 8]> = doc
        .installs
        .iter()
        .map(|r| {
            let drift = if r.interrupted {
                "interrupted".to_string()
            } else if r.clean {
                "clean".to_string()
            } else {
                let mut parts = Vec::new();
                for (n, label) in [(r.modified, "modified"), (r.missing, "missing"), (r.extra, "extra")] {
                    if n > 0 {
                        parts.push(format!("{n} {label}"));
                    }
                }
                if r.settings_drift > 0 {
                    parts.push(format!("{} settings", r.settings_drift));
                }
                parts.join(", ")
            };
            [
                r.runtime.clone(),
                r.scope.clone(),
                if r.older_than_binary { format!("{} (older)", r.version) } else { r.version.clone() },
                r.profile.clone().unwrap_or_else(|| "-".into()),
                r.files.to_string(),
                drift,
                r.installed_at.clone().unwrap_or_else(|| "-".into()),
                r.home.display().to_string(),
            ]
        })
        .collect();
    let mut text = super::table(&header, &rows, |col, cell| match col {
        2 if cell.ends_with("(older)") => paint.red(cell),
        5 if cell == "clean" => paint.green(cell),
        5 => paint.red(cell),
        _ => cell.to_string(),
    });
    let mut noted = std::collections::BTreeSet::new();
    for r in &doc.installs {
        if let Some(n) = r.notice.as_ref().filter(|_| noted.insert(r.runtime.clone())) {
            text.push_str(&format!("note: {}: {n}\n", r.runtime));
        }
    }
    text.push_str(&format!("project: {} (found by {})\n", doc.project.display(), doc.project_found_by));
    for r in doc.installs.iter().filter(|r| r.older_than_binary) {
        let local = if r.scope == "local" { " --local" } else { "" };
        text.push_str(&format!(
            "hint: {} ({}) is {}, older than this msd-install {}: `msd-install -r {}{local}` updates it\n",
            r.runtime,
            r.scope,
            r.version,
            crate::cli::version::VERSION,
            r.runtime
        ));
    }
    text
}
