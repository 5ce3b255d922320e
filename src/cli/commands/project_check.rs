//! `msd-install check` (no subcommand), for CI: does every runtime the project's msd.toml lists
//! have a local install, written by an accepted msd-install version, of the stated profile and
//! content, without drift? Exit 0 when all of that holds; otherwise every difference is listed
//! and the exit is 1. Reads only.
//!
//! Each runtime is checked on its own, in this order: installed at all; the file manifest's
//! `tool_version` inside `version`; the install state's profile; drift, as `verify` counts it
//! (modified, missing, extra files, msd's settings entries, an interrupted run); and the content:
//! a dry run of the install msd.toml stands for (nothing locked or written) must record the same
//! files, bytes and modes as the install's manifest. A profile that differs already says why the
//! files differ, so the content is compared only when the profile matches.

use std::path::PathBuf;

use serde::Serialize;

use super::env;
use super::report::Report;
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
use crate::apply::{self, InstallOptions};
use crate::cli::error::Error;
use crate::cli::project::{self, ProjectError, ProjectFile};
use crate::cli::settings::Settings;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Target};
use crate::pipeline::{self, Sources};
use msd_core::manifest::capability::Scope;

/// `check --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct CheckDoc {
    /// The version of this document's shape.
    pub schema_version: u32,
    /// Every listed runtime matches msd.toml.
    pub ok: bool,
    /// The msd.toml checked.
    pub msd_toml: PathBuf,
    /// The profile it states (absent: the content has no profiles and installs whole).
    pub profile: Option<String>,
    /// The requirement it states.
    pub version: Option<String>,
    /// One entry per listed runtime, in the file's order.
    pub runtimes: Vec<RuntimeCheck>,
}

/// One runtime's result.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct RuntimeCheck {
    /// Runtime id.
    pub runtime: String,
    /// Its local home.
    pub home: PathBuf,
    /// Whether a local install exists.
    pub installed: bool,
    /// The msd-install version that wrote it.
    pub installed_by: Option<String>,
    /// The profile it recorded.
    pub profile: Option<String>,
    /// Files its manifest lists.
    pub files: usize,
    /// What differs from msd.toml (empty: this runtime passes).
    pub problems: Vec<Problem>,
}

/// One difference.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Problem {
    /// `not-installed`, `version`, `profile`, `drift`, `interrupted` or `content`.
    pub kind: &'static str,
    /// What differs.
    pub message: String,
    /// The paths concerned (relative to the home), where there are some.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

fn problem(kind: &'static str, message: String) -> Problem {
    Problem { kind, message, paths: Vec::new() }
}

/// Runs the project check.
pub(crate) fn run(s: &Settings, project: Option<&std::path::Path>) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&Sources::default())?;
    let mut env = env()?;
    let (root, path) = project::find(project, &env.cwd);
    let Some(path) = path else {
        return Err(ProjectError::Missing { dir: root.dir, found_by: root.found_by }.into());
    };
    let file = project::load(&path, root, &runtimes)?;
    file.check_version()?;
    let mut content = pipeline::load_content(&Sources { content: file.content.clone(), runtimes: None })?;
    file.check_profile(&content)?;
    env.cwd = file.root.dir.clone();
    // A content tree without profiles installs whole, and records none.
    let profile = content.profiles.is_some().then(|| file.profile_name().to_string());
    let mut checks = Vec::new();
    let mut compare: Vec<(usize, &LoadedRuntime, bool)> = Vec::new();
    for id in &file.runtimes {
        let rt = runtimes.iter().find(|r| &r.capability.id == id).expect("msd.toml's runtimes are known");
        let t = target::resolve(&rt.capability, Scope::Local, None, &env)?;
        let (check, portable) = one(&file, rt, &t, profile.as_deref(), &env.home)?;
        if check.installed && check.profile == profile {
            compare.push((checks.len(), rt, portable));
        }
        checks.push(check);
    }
    // The content: what a run of msd.toml would record, against what each install recorded.
    if !compare.is_empty() {
        content.release_sources();
        let selected = match &profile {
            Some(p) => pipeline::profile::select(content, p).map_err(pipeline::PipelineError::from)?,
            None => content,
        };
        for (i, rt, portable) in compare {
            let opts = InstallOptions {
                scope: Scope::Local,
                config_dir: None,
                allow_symlinks: false,
                adopt: true,
                dry_run: true,
                progress: &apply::Silent,
                profile: profile.as_deref(),
                hooks: apply::surfaces::HookMode { portable, force_statusline: false },
                inputs: None,
                linked: None,
            };
            let recorded = FileManifest::read(&checks[i].home, &rt.capability, Scope::Local)
                .map_err(apply::plan::PlanError::from)?;
            for run in apply::install(&selected, &[rt], &opts, &env)? {
                let differ = differing(&run.plan.ops, recorded.as_ref());
                if !differ.is_empty() {
                    let what = match &file.content {
                        Some(dir) => format!("the content tree {}", dir.display()),
                        None => format!("the content embedded in msd-install {}", env!("CARGO_PKG_VERSION")),
                    };
                    checks[i].problems.push(Problem {
                        kind: "content",
                        message: format!(
                            "{} file(s) differ from what {what} installs{}",
                            differ.len(),
                            profile.as_ref().map(|p| format!(" with profile {p}")).unwrap_or_default()
                        ),
                        paths: differ,
                    });
                }
            }
        }
    }
    let ok = checks.iter().all(|c| c.problems.is_empty());
    let doc = CheckDoc {
        schema_version: crate::cli::versioned::SCHEMA_VERSION,
        ok,
        msd_toml: file.path.clone(),
        profile,
        version: file.version.as_ref().map(|(r, _, _)| r.clone()),
        runtimes: checks,
    };
    let n = doc.runtimes.iter().filter(|c| !c.problems.is_empty()).count();
    Report {
        ok,
        doc: serde_json::to_value(&doc).expect("json"),
        text: render(&doc),
        failed: format!("{n} runtime(s) differ from msd.toml"),
    }
    .finish(s)
}

/// Everything but the content; also the hook mode the install recorded.
fn one(
    file: &ProjectFile,
    rt: &LoadedRuntime,
    t: &Target,
    profile: Option<&str>,
    user_home: &std::path::Path,
) -> Result<(RuntimeCheck, bool), Error> {
    let cap = &rt.capability;
    let manifest = FileManifest::read(&t.home, cap, Scope::Local).map_err(apply::plan::PlanError::from)?;
    let mut c = RuntimeCheck {
        runtime: cap.id.clone(),
        home: t.home.clone(),
        installed: manifest.is_some(),
        installed_by: manifest.as_ref().map(|m| m.tool_version.clone()),
        profile: None,
        files: manifest.as_ref().map_or(0, |m| m.files.len()),
        problems: Vec::new(),
    };
    let verify = apply::verify(cap, t, false, user_home)?;
    if verify.interrupted {
        c.problems.push(problem(
            "interrupted",
            "an interrupted msd-install run left a journal here (`msd-install recover --local` finishes it)".into(),
        ));
    }
    let Some(m) = manifest else {
        c.problems.push(problem("not-installed", format!("no local install in {}", t.home.display())));
        return Ok((c, false));
    };
    if !file.accepts(&m.tool_version) {
        let (req, _, line) = file.version.as_ref().expect("accepts() holds without a requirement");
        c.problems.push(problem(
            "version",
            format!("installed by msd-install {}, outside `{req}` ({}:{line})", m.tool_version, file.path.display()),
        ));
    }
    let state = InstallState::read(&t.home, cap, Scope::Local).map_err(apply::LifecycleError::from)?;
    c.profile = state.as_ref().and_then(|s| s.profile.clone());
    if let Some(profile) = profile
        && c.profile.as_deref() != Some(profile)
    {
        c.problems.push(problem(
            "profile",
            format!(
                "installed with profile {}, msd.toml says {profile}",
                c.profile.as_deref().unwrap_or("(not recorded)")
            ),
        ));
    }
    let mut drift: Vec<String> = Vec::new();
    drift.extend(verify.modified.iter().map(|p| format!("modified {p}")));
    drift.extend(verify.missing.iter().map(|p| format!("missing {p}")));
    drift.extend(verify.extra.iter().map(|p| format!("extra {p}")));
    drift.extend(verify.settings.iter().map(|s| format!("settings {}", s.path)));
    if !drift.is_empty() {
        c.problems.push(Problem {
            kind: "drift",
            message: format!(
                "{} difference(s) from what msd-install wrote (see `msd-install verify --local -r {}`)",
                drift.len(),
                cap.id
            ),
            paths: drift,
        });
    }
    Ok((c, state.is_some_and(|s| s.portable_hooks)))
}

/// Paths whose bytes or mode the plan would record differently from `have`, or that only one
/// of them lists. A dry run keeps each op's digest and mode (not the manifest it would write).
fn differing(ops: &[apply::plan::Op], have: Option<&FileManifest>) -> Vec<String> {
    let mut out = Vec::new();
    for op in ops.iter().filter(|o| o.action != apply::plan::Action::Remove) {
        match have.and_then(|m| m.get(&op.path)) {
            Some(h) if Some(h.sha256) == op.sha256 && h.mode == op.mode => {}
            _ => out.push(op.path.to_string()),
        }
    }
    out.extend(ops.iter().filter(|o| o.action == apply::plan::Action::Remove).map(|o| o.path.to_string()));
    out.sort();
    out.dedup();
    out
}

fn render(doc: &CheckDoc) -> String {
    let mut s = format!(
        "{}: {}{}{}\n",
        doc.msd_toml.display(),
        doc.runtimes.iter().map(|c| c.runtime.as_str()).collect::<Vec<_>>().join(", "),
        doc.profile.as_ref().map(|p| format!(", profile {p}")).unwrap_or_default(),
        doc.version.as_ref().map(|v| format!(", version {v}")).unwrap_or_default()
    );
    for c in &doc.runtimes {
        if c.problems.is_empty() {
            s.push_str(&format!(
                "  ok    {} -> {} (msd-install {}{}, {} files)\n",
                c.runtime,
                c.home.display(),
                c.installed_by.as_deref().unwrap_or("?"),
                c.profile.as_ref().map(|p| format!(", profile {p}")).unwrap_or_default(),
                c.files
            ));
            continue;
        }
        s.push_str(&format!("  FAIL  {} -> {}\n", c.runtime, c.home.display()));
        for p in &c.problems {
            s.push_str(&format!("    {}: {}\n", p.kind, p.message));
            for path in p.paths.iter().take(10) {
                s.push_str(&format!("      {path}\n"));
            }
            if p.paths.len() > 10 {
                s.push_str(&format!("      ... and {} more (--json lists them all)\n", p.paths.len() - 10));
            }
        }
    }
    if doc.ok {
        s.push_str("ok: every runtime msd.toml lists is installed as it says\n");
    } else {
        s.push_str("hint: run `msd-install` in the project to install what msd.toml says (your edited files are backed up first)\n");
    }
    s
}
