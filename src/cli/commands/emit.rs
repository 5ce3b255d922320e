//! `msd-install emit`: write one runtime's emitted tree into a directory, and nothing else.

use serde_json::json;

use super::{ensure_empty_dir, env, human_bytes};
use crate::cli::args::EmitArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Arity, Globals, Runtimes, Settings, Subcommand, Takes};
use crate::pipeline;
use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

impl Subcommand for EmitArgs {
    const NAME: &'static str = "emit";
    const RUNTIME: Arity = Arity::One;
    const LOCAL: bool = true;

    fn json(&self) -> Takes {
        Takes::Yes
    }

    /// `-r` and `--local` given before `emit` count as its own.
    fn settings(&self, base: Settings, g: &Globals) -> Settings {
        let mut s = base.sources(&self.sources);
        let runtime = self.runtime.iter().chain(&g.runtime).take(1).cloned().collect::<Vec<_>>();
        s = s.runtimes(&runtime, false);
        s.place.scope = if self.local || g.local { Scope::Local } else { Scope::Global };
        s.place.config_dir = self.config_dir.clone();
        s
    }

    /// `--plugin` writes a plugin marketplace ([`super::plugin`]); else one runtime's tree.
    fn run(&self, s: &Settings) -> Result<(), Error> {
        if self.plugin.is_some() { super::plugin::run(s, self) } else { run(s, self) }
    }
}

/// Runs `emit`.
pub(crate) fn run(s: &Settings, args: &EmitArgs) -> Result<(), Error> {
    let (Runtimes::Named(runtime), Some(out_arg)) = (&s.runtimes, &args.out) else {
        return Err(Error::Usage {
            message: "`msd-install emit` needs the runtime to emit: -r ID".into(),
            hint: "name one with -r ID (see `msd-install runtimes`), or pass --plugin DIR for the Claude Code plugin"
                .into(),
        });
    };
    let src = &s.sources;
    let runtimes = pipeline::load_runtimes(src)?;
    let rt = pipeline::select(&runtimes, runtime, false)?[0];
    let content = pipeline::load_content(src)?;
    let scope = s.place.scope;
    let env = env()?;
    let pipeline::Emitted { target, emission, compose, .. } =
        pipeline::emit(&content, rt, scope, s.place.config_dir.as_deref(), &env)?;
    let out_dir = env.expand(&out_arg.to_string_lossy());
    ensure_empty_dir(&out_dir)?;
    let mut bytes = 0u64;
    for f in &emission.files {
        let dest = fsx::confined(&out_dir, &f.path, false)
            .map_err(|e| Error::Io { context: "emit".into(), source: std::io::Error::other(e.to_string()) })?;
        fsx::write_atomic(&dest, &f.bytes, f.mode)
            .map_err(|e| Error::Io { context: format!("writing {}", dest.display()), source: e })?;
        bytes += f.bytes.len() as u64;
    }
    if s.output.json {
        let files: Vec<_> = emission
            .files
            .iter()
            .map(|f| json!({"path": f.path, "bytes": f.bytes.len(), "kind": f.kind, "sources": f.sources}))
            .collect();
        let doc = json!({"ok": true, "runtime": emission.runtime, "scope": scope, "rewritten_for": target.home, "out": out_dir, "files": files, "compose": compose});
        s.output.document(&doc);
    } else {
        s.output.text(&format!(
            "{} ({}) emitted {} files ({} bytes) into {} (paths rewritten for {})\n",
            emission.runtime,
            scope.as_str(),
            emission.files.len(),
            human_bytes(bytes),
            out_dir.display(),
            target.home.display()
        ));
    }
    Ok(())
}
