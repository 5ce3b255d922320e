//! `msd-install migrate --from A --to B`: moves an install from one runtime to another (Gemini
//! CLI to its successor Antigravity), in the same scope and with the same profile.
//!
//! One transaction on two homes: A's uninstall is staged first (its home locked, files the user
//! edited kept where they are with copies in a backup directory, as `uninstall` keeps them),
//! then B's install (the same path as `msd-install -r B`) commits with it as one
//! ([`apply::Linked`], `txn::commit_linked`). A run stopped at any point is recovered, by
//! `msd-install recover` or by the next command on either home, to before (A installed, B not)
//! or to after (B installed, A gone), never to both or neither. Before A's uninstall stages
//! anything, each home names the other until the pair is done (`Area::note_partner`), so a
//! command on either home recovers the pair whole, A's staging included.
//!
//! `--config-dir` is refused: it names one home, and a migrate reads two.

use clap::Parser;

use super::env_for;
use crate::apply;
use crate::apply::record::FileManifest;
use crate::apply::state::InstallState;
use crate::cli::args::{InstallArgs, MigrateArgs};
use crate::cli::error::Error;
use crate::cli::settings::{Globals, NO_JSON, Settings, Subcommand, Takes, normalize};
use crate::pipeline;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target;

#[derive(Parser)]
struct InstallCli {
    #[command(flatten)]
    args: InstallArgs,
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
    if s.place.config_dir.is_some() {
        return Err(config_dir_refused(chosen[0], chosen[1]));
    }
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
    // What an interrupted run left on either home is made whole first.
    for home in [&a_target.home, &b_target.home] {
        if let Some(r) = apply::recover(home, s.allow_symlinks)? {
            print(&format!("{}\n", super::install::recovery_line(&r)));
        }
    }
    let a_installed =
        FileManifest::read(&a_target.home, &a.capability, scope).map_err(apply::plan::PlanError::from)?.is_some();
    let b_installed =
        FileManifest::read(&b_target.home, &b.capability, scope).map_err(apply::plan::PlanError::from)?.is_some();
    if !a_installed {
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

    print(&format!("migrate {from} -> {to} ({}): install {to} and uninstall {from}, as one\n", scope.as_str()));
    let mut argv = vec!["install".to_string(), "-r".into(), to.clone(), "--yes".into()];
    argv.extend(common.iter().cloned());
    if let Some(p) = &profile {
        argv.extend(["--profile".into(), p.clone()]);
    }
    let install = InstallCli::try_parse_from(&argv).map_err(|e| usage(&e))?;
    // A's uninstall, staged (A's home locked until it is done).
    let Some(removal) = apply::stage_removal(&a.capability, &a_target, &b_target.home, s.allow_symlinks)? else {
        return Err(Error::Usage {
            message: format!("no msd install of {from} ({}) to migrate", scope.as_str()),
            hint: format!("`msd-install -r {to}` installs {to} afresh"),
        });
    };
    super::install::run_linked(&Settings::of(&install.args, s.output), &install.args, removal.linked())?;
    let report = removal.finish();
    let kept = match (&report.backup_dir, report.kept_edited.len()) {
        (Some(dir), n) if n > 0 => format!(", {n} file(s) you edited kept in place (copies in {})", dir.display()),
        _ => String::new(),
    };
    print(&format!("uninstalled {from}: {} file(s) removed{kept}\n", report.removed.len()));
    print(&format!(
        "migrated {from} -> {to} ({}){}; `msd-install doctor -r {to}` checks the result\n",
        scope.as_str(),
        profile.map(|p| format!(", profile {p}")).unwrap_or_default()
    ));
    Ok(())
}

/// `--config-dir` names one home and a migrate reads two: refused, with what selects each home
/// (the runtime's own variable, from its manifest) and the two commands that move an install
/// made with `--config-dir`.
fn config_dir_refused(a: &LoadedRuntime, b: &LoadedRuntime) -> Error {
    let (from, to) = (&a.capability.id, &b.capability.id);
    let home = |rt: &LoadedRuntime| match rt.capability.home.env.first() {
        Some(e) => format!("{} for {}", e.var, rt.capability.id),
        None => format!("{}'s default home", rt.capability.id),
    };
    Error::Usage {
        message: format!("--config-dir names one home, and migrate moves an install between two ({from}'s and {to}'s)"),
        hint: format!(
            "migrate reads each runtime's own home: point it elsewhere with {} and {}; or move an install made with \
             --config-dir in two steps: `msd-install -r {to} -c NEW_DIR`, then `msd-install uninstall -r {from} -c OLD_DIR`",
            home(a),
            home(b)
        ),
    }
}

fn usage(e: &clap::Error) -> Error {
    Error::Usage {
        message: e.to_string().trim().to_string(),
        hint: "report this: migrate builds these arguments".into(),
    }
}
