//! `msd-install migrate --from A --to B`: moves an install from one runtime to another (Gemini
//! CLI to its successor Antigravity), in the same scope and with the same profile.
//!
//! It is two of apply's own operations in order, each atomic and recovered on its own: install
//! B (the same path as `msd-install -r B`), then uninstall A (files the user edited stay where
//! they are, with copies in a backup directory, as `uninstall` keeps them). A run stopped at any
//! point leaves A's install whole or gone and B's whole or absent, never a half-written tree;
//! running `migrate` again finishes it (the install of B is then a no-change run, and A's
//! uninstall recovers and proceeds). `msd-install status` shows both while A is still there.

use clap::Parser;

use super::env_for;
use crate::apply;
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
use crate::cli::args::{InstallArgs, MigrateArgs, UninstallArgs};
use crate::cli::error::Error;
use crate::cli::settings::{Globals, NO_JSON, Settings, Subcommand, Takes, normalize};
use crate::pipeline;
use crate::pipeline::target;

#[derive(Parser)]
struct InstallCli {
    #[command(flatten)]
    args: InstallArgs,
}

#[derive(Parser)]
struct UninstallCli {
    #[command(flatten)]
    args: UninstallArgs,
}

impl Subcommand for MigrateArgs {
    const NAME: &'static str = "migrate";
    const LOCAL: bool = true;

    fn json(&self) -> Takes {
        Takes::No(NO_JSON)
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        self.home.settings(base)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `migrate`.
pub(crate) fn run(s: &Settings, args: &MigrateArgs) -> Result<(), Error> {
    let print = |text: &str| s.output.text(text);
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let ids = normalize(&[args.from.clone(), args.to.clone()]);
    let (from, to) = (&ids[0], &ids[1]);
    if from == to {
        return Err(Error::Usage {
            message: format!("--from and --to both name `{from}`"),
            hint: "name two runtimes, e.g. --from gemini --to antigravity".into(),
        });
    }
    let chosen = pipeline::select(&runtimes, &ids, false)?;
    let scope = s.place.scope;
    for rt in &chosen {
        if scope == msd_core::manifest::capability::Scope::Local && rt.capability.local.is_none() {
            return Err(Error::Usage {
                message: format!("{} has no project-local install", rt.capability.id),
                hint: "migrate the global install (drop --local)".into(),
            });
        }
    }
    let (env, _) = env_for(&s.place)?;
    let (a, b) = (chosen[0], chosen[1]);
    let a_target = target::resolve(&a.capability, scope, None, &env)?;
    let b_target = target::resolve(&b.capability, scope, None, &env)?;
    let a_installed =
        FileManifest::read(&a_target.home, &a.capability, scope).map_err(apply::plan::PlanError::from)?.is_some();
    let b_installed =
        FileManifest::read(&b_target.home, &b.capability, scope).map_err(apply::plan::PlanError::from)?.is_some();
    let pending = apply::txn::Area::new(&a_target.home, s.allow_symlinks).pending();
    if !a_installed && !pending {
        if b_installed {
            print(&format!("nothing to migrate: {from} has no install here and {to} has one (done before)\n"));
            return Ok(());
        }
        return Err(Error::Usage {
            message: format!("no msd install of {from} ({}) to migrate", scope.as_str()),
            hint: format!("`msd-install status` lists the installs; `msd-install -r {to}` installs {to} afresh"),
        });
    }
    // The profile A recorded (absent: the default).
    let profile = InstallState::read(&a_target.home, &a.capability, scope).ok().flatten().and_then(|s| s.profile);

    let mut common: Vec<String> = Vec::new();
    if scope == msd_core::manifest::capability::Scope::Local {
        common.push("--local".into());
    }
    if let Some(p) = &s.place.project {
        common.extend(["--project".into(), p.display().to_string()]);
    }
    if let Some(d) = &s.sources.runtimes {
        common.extend(["--runtimes".into(), d.display().to_string()]);
    }
    if s.allow_symlinks {
        common.push("--allow-symlinks".into());
    }

    print(&format!("migrate {from} -> {to} ({}): 1. install {to}\n", scope.as_str()));
    let mut argv = vec!["install".to_string(), "-r".into(), to.clone(), "--yes".into()];
    argv.extend(common.iter().cloned());
    if let Some(p) = &profile {
        argv.extend(["--profile".into(), p.clone()]);
    }
    let install = InstallCli::try_parse_from(&argv).map_err(|e| usage(&e))?;
    super::install::run(&Settings::of(&install.args, s.output), &install.args)?;

    print(&format!("migrate {from} -> {to} ({}): 2. uninstall {from}\n", scope.as_str()));
    let mut argv = vec!["uninstall".to_string(), "-r".into(), from.clone()];
    argv.extend(common);
    let uninstall = UninstallCli::try_parse_from(&argv).map_err(|e| usage(&e))?;
    super::uninstall::run(&Settings::of(&uninstall.args, s.output), &uninstall.args)?;
    print(&format!(
        "migrated {from} -> {to} ({}){}; `msd-install doctor -r {to}` checks the result\n",
        scope.as_str(),
        profile.map(|p| format!(", profile {p}")).unwrap_or_default()
    ));
    Ok(())
}

fn usage(e: &clap::Error) -> Error {
    Error::Usage {
        message: e.to_string().trim().to_string(),
        hint: "report this: migrate builds these arguments".into(),
    }
}
