//! `msd-install init-project`: writes the project's msd.toml from the local installs found in it
//! now (each runtime with a file manifest under its local dir), so a team can commit what one
//! person set up. Refuses to replace an existing msd.toml without `--force`.
//!
//! What it can read back: the runtimes, the profile their install states recorded (one for all:
//! msd.toml has one profile), whether `.gitignore` holds msd's block. What it cannot: which content
//! tree an install came from; `content` is written as a comment to fill in. `version` accepts this
//! binary's minor series (`>=0.3, <0.4`; `>=1.2, <2` from 1.0 on).

use std::collections::BTreeSet;

use msd_core::fs::fsx::{self, FileMode};
use msd_core::manifest::capability::Scope;

use super::{env, project_root};
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
use crate::cli::args::InitProjectArgs;
use crate::cli::error::Error;
use crate::cli::project::{self, FILE_NAME, ProjectError};
use crate::cli::settings::{NO_JSON, Settings, Subcommand, Takes};
use crate::pipeline::target;
use crate::pipeline::{self, Sources};

impl Subcommand for InitProjectArgs {
    const NAME: &'static str = "init-project";

    fn json(&self) -> Takes {
        Takes::No(NO_JSON)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `init-project`.
pub(crate) fn run(s: &Settings, args: &InitProjectArgs) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&Sources::default())?;
    let mut env = env()?;
    let root = project_root(args.project.as_deref(), &env.cwd);
    let path = root.dir.join(FILE_NAME);
    if fsx::lexists(&path) && !args.force {
        return Err(ProjectError::Exists { path }.into());
    }
    env.cwd = root.dir.clone();
    let mut ids = Vec::new();
    let mut profiles = BTreeSet::new();
    let mut unrecorded = Vec::new();
    for rt in runtimes.iter().filter(|r| r.capability.local.is_some()) {
        let cap = &rt.capability;
        let Ok(t) = target::resolve(cap, Scope::Local, None, &env) else { continue };
        if FileManifest::read(&t.home, cap, Scope::Local).map_err(crate::apply::plan::PlanError::from)?.is_none() {
            continue;
        }
        ids.push(cap.id.clone());
        let state = InstallState::read(&t.home, cap, Scope::Local).map_err(crate::apply::LifecycleError::from)?;
        match state.and_then(|s| s.profile) {
            Some(p) => {
                profiles.insert((p, cap.id.clone()));
            }
            None => unrecorded.push(cap.id.clone()),
        }
    }
    if ids.is_empty() {
        return Err(ProjectError::Nothing {
            message: format!("no local msd install in the project {} (found by {}); nothing was written", root.dir.display(), root.found_by),
            hint: "install for your runtimes first (`msd-install -r claude -r codex --local --profile core`), then run init-project".into(),
        }
        .into());
    }
    let names: BTreeSet<&str> = profiles.iter().map(|(p, _)| p.as_str()).collect();
    if names.len() > 1 {
        let each: Vec<String> = profiles.iter().map(|(p, id)| format!("{id}: {p}")).collect();
        return Err(ProjectError::Nothing {
            message: format!("the local installs have different profiles ({}); msd.toml states one; nothing was written", each.join(", ")),
            hint: "install them with one profile (`msd-install --local -r <id> --profile <name>`), then run init-project again".into(),
        }
        .into());
    }
    let profile = names.into_iter().next();
    let v = semver::Version::parse(env!("CARGO_PKG_VERSION")).expect("the package version is semver");
    let version = if v.major == 0 {
        format!(">=0.{}, <0.{}", v.minor, v.minor + 1)
    } else {
        format!(">={}.{}, <{}", v.major, v.minor, v.major + 1)
    };
    let quoted: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
    let mut text = String::from(
        "# What msd-install installs into this project (`msd-install schema --kind project`).\n\
         # `msd-install` here installs it locally; `msd-install check` tells CI whether the installs match.\n\
         [install]\n",
    );
    text.push_str(&format!("runtimes = [{}]\n", quoted.join(", ")));
    match profile {
        Some(p) => text.push_str(&format!("profile = \"{p}\"\n")),
        None => text.push_str("# profile = \"full\"   # core | standard | full (default full)\n"),
    }
    text.push_str(&format!("version = \"{version}\"\n"));
    text.push_str("# content = \"path/to/content\"   # a content tree in the repository instead of the embedded one\n");
    if project::gitignore::has_block(&root.dir) {
        text.push_str("gitignore = true\n");
    } else {
        text.push_str(
            "# gitignore = true   # keep the local install paths out of git (a marked block in .gitignore)\n",
        );
    }
    // What it writes, it reads back.
    project::parse(&path, &text, root.clone(), &runtimes)?;
    fsx::write_atomic(&path, text.as_bytes(), FileMode::Regular)
        .map_err(|source| ProjectError::Io { path: path.clone(), source })?;
    let mut out = format!("wrote {}: runtimes {}", path.display(), ids.join(", "));
    if let Some(p) = profile {
        out.push_str(&format!(", profile {p}"));
    }
    out.push_str(&format!(", version {version}\n"));
    if !unrecorded.is_empty() {
        out.push_str(&format!(
            "note: {} recorded no profile (installed before profiles were recorded); msd.toml's default is full\n",
            unrecorded.join(", ")
        ));
    }
    out.push_str("commit it; `msd-install check` in CI tells whether the installs match\n");
    s.output.text(&out);
    Ok(())
}
