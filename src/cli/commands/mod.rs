//! One module per `msd-install` subcommand; shared helpers for them live here.

use std::path::Path;

use crate::cli::error::Error;
use crate::cli::settings::{Place, Runtimes, Settings};
use crate::pipeline;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Environment, Target};
use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

pub(crate) mod attribution;
pub(crate) mod bench;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod emit;
pub(crate) mod generate;
pub(crate) mod init_project;
pub(crate) mod install;
pub(crate) mod inventory;
pub(crate) mod man;
pub(crate) mod migrate;
pub(crate) mod plugin;
pub(crate) mod project_check;
pub(crate) mod recover;
pub(crate) mod report;
pub(crate) mod runtimes;
pub(crate) mod self_update;
pub(crate) mod status;
pub(crate) mod uninstall;
pub(crate) mod verify;

pub(crate) use crate::cli::project::{ProjectRoot, project_root};

pub(crate) fn env() -> Result<Environment, Error> {
    let env =
        Environment::from_process().map_err(|e| Error::Io { context: "reading the environment".into(), source: e })?;
    // A relative HOME would put every global home (and `~/` in content) under the current
    // directory, named by nothing the user typed.
    if !env.home.is_absolute() {
        return Err(Error::Usage {
            message: format!(
                "HOME is `{}`, a relative path: every runtime's global home is found from it, so it must be absolute",
                env.home.display()
            ),
            hint: "set HOME to your home directory as an absolute path (`export HOME=/home/you`) and run again; nothing was written".into(),
        });
    }
    Ok(env)
}

/// `1234567` -> `1,234,567`.
pub(crate) fn human_bytes(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The environment with its working directory moved to the project root when the scope is local.
pub(crate) fn env_for(place: &Place) -> Result<(Environment, Option<ProjectRoot>), Error> {
    let mut env = env()?;
    if place.scope == Scope::Local {
        let root = project_root(place.project.as_deref(), &env.cwd);
        env.cwd = root.dir.clone();
        return Ok((env, Some(root)));
    }
    Ok((env, None))
}

/// The runtimes `s` selects among `runtimes`: those named with `-r`, every one with `--all`,
/// else the primary one.
pub(crate) fn select<'a>(s: &Settings, runtimes: &'a [LoadedRuntime]) -> Result<Vec<&'a LoadedRuntime>, Error> {
    let ids = match &s.runtimes {
        Runtimes::Named(ids) => ids.clone(),
        Runtimes::Default => vec![pipeline::primary(runtimes)?],
        Runtimes::All => Vec::new(),
    };
    Ok(pipeline::select(runtimes, &ids, s.runtimes == Runtimes::All)?)
}

/// Resolves the runtimes and targets of `uninstall`, `verify` and `recover`: the `-r` ids given
/// (default: the primary runtime), or with `--all` every runtime that has an install (or an
/// interrupted run) in the scope.
pub(crate) fn resolve_targets(s: &Settings) -> Result<Vec<(LoadedRuntime, Target)>, Error> {
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let (env, _) = env_for(&s.place)?;
    let scope = s.place.scope;
    let config_dir = s.place.config_dir.as_deref();
    if s.runtimes == Runtimes::All {
        let mut out = Vec::new();
        for rt in &runtimes {
            if scope == Scope::Local && rt.capability.local.is_none() {
                continue;
            }
            let t = target::resolve(&rt.capability, scope, config_dir, &env)?;
            let installed = crate::apply::record::FileManifest::read(&t.home, &rt.capability, scope)
                .map_err(crate::apply::plan::PlanError::from)?
                .is_some();
            if installed || crate::apply::txn::Area::new(&t.home, s.allow_symlinks).pending() {
                out.push((rt.clone(), t));
            }
        }
        return Ok(out);
    }
    let ids = match &s.runtimes {
        Runtimes::Named(ids) => ids.clone(),
        Runtimes::Default | Runtimes::All => vec![pipeline::primary(&runtimes)?],
    };
    if config_dir.is_some() && ids.len() > 1 {
        return Err(Error::Usage {
            message: "--config-dir names one home and cannot be used with several runtimes".into(),
            hint: "name one runtime with -r, each with its own --config-dir".into(),
        });
    }
    let mut out = Vec::new();
    for rt in pipeline::select(&runtimes, &ids, false)? {
        let t = target::resolve(&rt.capability, scope, config_dir, &env)?;
        out.push((rt.clone(), t));
    }
    Ok(out)
}

/// A table whose columns are as wide as their widest cell (two spaces apart, the last column
/// unpadded); `style` colors a cell after it is padded, so escapes never skew the alignment.
pub(crate) fn table<const N: usize>(
    header: &[&str; N],
    rows: &[[String; N]],
    style: impl Fn(usize, &str) -> String,
) -> String {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>, styled: bool| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = if i + 1 == N { 0 } else { widths[i] - c.chars().count() + 2 };
            s.push_str(&if styled { style(i, c) } else { c.clone() });
            s.push_str(&" ".repeat(pad));
        }
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut text = line(header.iter().map(|h| h.to_string()).collect(), false);
    for r in rows {
        text.push_str(&line(r.to_vec(), true));
    }
    text
}

/// Refuses to write into `dir` unless it is empty or absent (`emit`, `emit --plugin`, `bench
/// content`).
pub(crate) fn ensure_empty_dir(dir: &Path) -> Result<(), Error> {
    match fsx::is_empty_dir(dir) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::Usage {
            message: format!("{} is not empty", dir.display()),
            hint: "emit into a new or empty directory".into(),
        }),
        Err(e) => Err(Error::Io { context: format!("reading {}", dir.display()), source: e }),
    }
}

/// Refuses a maintainer command that writes repository files (`tests/golden/`, the token
/// baseline) outside the msd-install repository: `root` must hold `content/` and the
/// `Cargo.toml` of the msd-install package, so a run from elsewhere never creates them there.
pub(crate) fn require_repository(root: &Path) -> Result<(), Error> {
    let manifest = fsx::read_if_exists(&root.join("Cargo.toml")).ok().flatten().unwrap_or_default();
    let ours = String::from_utf8_lossy(&manifest).lines().any(|l| l.trim().replace(' ', "") == "name=\"msd-install\"");
    if ours && fsx::is_dir(&root.join("content")) {
        return Ok(());
    }
    let shown = if root == Path::new(".") { "the current directory".to_string() } else { root.display().to_string() };
    Err(Error::Usage {
        message: format!(
            "{shown} is not the msd-install repository (no content/ and Cargo.toml of msd-install there); nothing was written"
        ),
        hint: "run maintainer commands from the repository's top directory, or pass --root DIR".into(),
    })
}

/// The profile a target installs (see [`pipeline::profile::choose`]): the one given, else the one
/// its install state recorded, else the content's default; `None` without profiles.
pub(crate) fn target_profile(
    content: &crate::pipeline::load::Content,
    given: Option<&str>,
    rt: &LoadedRuntime,
    target: &Target,
) -> Option<String> {
    let recorded = crate::apply::state::InstallState::read(&target.home, &rt.capability, target.scope)
        .ok()
        .flatten()
        .and_then(|s| s.profile);
    pipeline::profile::choose(content, given, recorded.as_deref())
}
