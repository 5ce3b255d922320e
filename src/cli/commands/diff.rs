//! `msd-install diff`: the unified diff of every file an install would change, a file the user
//! edited included (their edit is the `-` side, what would replace it the `+` side), and the
//! files an install would remove, as the install's own plan decides from the target's survey.
//! Colored on a terminal (`--color`); reads only.

use similar::TextDiff;

use super::env_for;
use crate::apply::survey::{Class, Disk, Reading, Survey};
use crate::cli::args::DiffArgs;
use crate::cli::error::Error;
use crate::cli::output::Paint;
use crate::cli::settings::{Arity, Globals, Runtimes, Settings, Subcommand, Takes};
use crate::pipeline;
use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

impl Subcommand for DiffArgs {
    const NAME: &'static str = "diff";
    const RUNTIME: Arity = Arity::Many;
    const ALL: bool = true;
    const LOCAL: bool = true;

    fn json(&self) -> Takes {
        Takes::No("prints a unified diff, which has no JSON form; drop --json")
    }

    fn quiet(&self) -> Takes {
        Takes::No("prints only the diff you asked for; drop -q (for the exit status alone: --exit-code)")
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        base.place(&self.target.place).runtimes(&self.target.runtime, self.target.all).sources(&self.sources)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `diff`.
pub(crate) fn run(s: &Settings, args: &DiffArgs) -> Result<(), Error> {
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let scope = s.place.scope;
    let all = s.runtimes == Runtimes::All;
    let selected: Vec<_> = super::select(s, &runtimes)?
        .into_iter()
        .filter(|r| !(all && scope == Scope::Local && r.capability.local.is_none()))
        .collect();
    let config_dir = s.place.config_dir.as_deref();
    let (env, _) = env_for(&s.place)?;
    let content = pipeline::load_content(&s.sources)?;
    let paint = Paint::stdout(s.output.color);
    let mut text = String::new();
    let mut changed = 0usize;
    let memo = msd_core::fs::bytes::Digests::default();
    for rt in selected {
        let cap = &rt.capability;
        let target = pipeline::target::resolve(cap, scope, config_dir, &env)?;
        // The profile the install would use: given, recorded, else the default.
        let selected = match super::target_profile(&content, args.profile.given().as_deref(), rt, &target) {
            Some(p) => pipeline::profile::select(content.clone(), &p).map_err(pipeline::PipelineError::from)?,
            None => content.clone(),
        };
        let e = pipeline::emit(&selected, rt, scope, config_dir, &env)?;
        let home = &e.target.home;
        // The survey an install would take (read-only: links followed, as a look does), and
        // from it what the install's plan writes: every emitted file whose bytes differ, and
        // every recorded file it no longer ships that is still there (an edited one is backed up
        // and removed too).
        let digests = crate::apply::plan::digests(&[&e.emission], &memo).pop().unwrap_or_default();
        let how = Reading {
            emission: Some((&e.emission, &digests)),
            recorded: true,
            keep_edited: false,
            runtime_surfaces: false,
            allow_symlinks: true,
            dirs: &fsx::DirCache::new(),
        };
        let survey = Survey::read(home, cap, scope, how).map_err(crate::apply::ApplyError::from)?;
        let read = |path: &msd_core::fs::relpath::RelPath| {
            fsx::read_if_exists(&home.join(path.as_str()))
                .map_err(|err| Error::Io { context: format!("reading {path}"), source: err })
        };
        for (fact, f) in survey.files.iter().zip(&e.emission.files) {
            if matches!(fact.disk, Disk::File { same_as_new: true, .. }) {
                continue;
            }
            changed += 1;
            let label = format!("{}/{}", cap.id, f.path);
            text.push_str(&unified(&paint, &label, read(&f.path)?.as_deref(), Some(&f.bytes), args.context));
        }
        for fact in survey.files.iter().skip(e.emission.files.len()) {
            if !matches!(fact.class, Class::Unchanged | Class::Edited) {
                continue;
            }
            let Some(bytes) = read(&fact.path)? else { continue };
            changed += 1;
            let label = format!("{}/{}", cap.id, fact.path);
            text.push_str(&unified(&paint, &label, Some(&bytes), None, args.context));
        }
    }
    if changed == 0 {
        text.push_str("no differences: an install would change no file\n");
    }
    s.output.text(&text);
    if args.exit_code && changed > 0 { Err(Error::CheckFailed(String::new())) } else { Ok(()) }
}

/// A `diff -u` of one file (`None` is an absent side); binary files are named, not shown.
fn unified(paint: &Paint, label: &str, old: Option<&[u8]>, new: Option<&[u8]>, context: usize) -> String {
    let a = if old.is_some() { format!("a/{label}") } else { "/dev/null".to_string() };
    let b = if new.is_some() { format!("b/{label}") } else { "/dev/null".to_string() };
    let (Ok(old_text), Ok(new_text)) =
        (std::str::from_utf8(old.unwrap_or_default()), std::str::from_utf8(new.unwrap_or_default()))
    else {
        return paint.bold(&format!("Binary files {a} and {b} differ\n"));
    };
    let diff = TextDiff::from_lines(old_text, new_text);
    let mut out = String::new();
    out.push_str(&paint.bold(&format!("--- {a}\n+++ {b}\n")));
    for hunk in diff.unified_diff().context_radius(context).iter_hunks() {
        out.push_str(&paint.cyan(&format!("{}\n", hunk.header())));
        for change in hunk.iter_changes() {
            let line = format!("{}{}", change.tag(), change.value());
            let line = if line.ends_with('\n') { line } else { format!("{line}\n\\ No newline at end of file\n") };
            out.push_str(&match change.tag() {
                similar::ChangeTag::Delete => paint.red(&line),
                similar::ChangeTag::Insert => paint.green(&line),
                similar::ChangeTag::Equal => line,
            });
        }
    }
    out
}
