//! `msd-install gen <target> [--check|--write]`: the repository's generated files, through the
//! one idiom of `generated`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::sources;
use crate::capability::Scope;
use crate::cli::{GenArgs, GenOpts, GenWhat};
use crate::error::Error;
use crate::generated::{self, Generated, Mode};
use crate::pipeline;
use crate::target::Environment;

/// Runs `gen`.
pub fn run(args: &GenArgs) -> Result<(), Error> {
    match &args.what {
        GenWhat::Golden(o) => finish(o, golden(o)?, "cargo run -q --bin msd-install -- gen golden --write"),
    }
}

fn mode(o: &GenOpts) -> Mode {
    if o.check {
        Mode::Check
    } else if o.write {
        Mode::Write
    } else {
        Mode::Print
    }
}

fn finish(o: &GenOpts, files: Vec<Generated>, fix: &str) -> Result<(), Error> {
    let outcome = generated::apply(&o.root, &files, mode(o), fix)?;
    match mode(o) {
        Mode::Check => eprintln!("{} generated file(s) up to date", outcome.current.len()),
        Mode::Write => {
            eprintln!("{} file(s) written, {} already up to date", outcome.stale.len(), outcome.current.len())
        }
        Mode::Print => {}
    }
    Ok(())
}

/// A fixed environment, so the golden lists do not depend on the machine.
pub fn golden_environment() -> Environment {
    Environment { vars: BTreeMap::new(), home: PathBuf::from("/home/user"), cwd: PathBuf::from("/home/user/project") }
}

/// The sorted emitted file list of every runtime x scope.
pub fn golden(o: &GenOpts) -> Result<Vec<Generated>, Error> {
    let src = sources(&o.sources);
    let runtimes = pipeline::load_runtimes(&src)?;
    let content = pipeline::load_content(&src)?;
    let env = golden_environment();
    let mut out = Vec::new();
    for rt in &runtimes {
        for scope in [Scope::Global, Scope::Local] {
            if scope == Scope::Local && rt.capability.local.is_none() {
                continue;
            }
            let (_, emission, _) = pipeline::emit_one(&content, rt, scope, None, &env)?;
            let mut text = String::new();
            for f in &emission.files {
                text.push_str(f.path.as_str());
                text.push('\n');
            }
            out.push(Generated {
                path: PathBuf::from(format!("tests/golden/{}-{}.txt", rt.capability.id, scope.as_str())),
                fresh: text,
            });
        }
    }
    Ok(out)
}
