//! `msd-install gen <target> [--check|--write]`: the repository's generated files, through the
//! one idiom of `generated`.
//!
//! - `golden`: the emitted file list of every runtime x scope (`tests/golden/`).
//! - `section-manifest`: `<content>/msd-core/workflows/section-manifest.json`
//!   ([`crate::pipeline::section_manifest`]).
//! - `context-index`: `<content>/CONTEXT-INDEX.json` from `CONTEXT.md` ([`msd_core::installed::predicates`]).
//!   Duplicate ids and malformed declarations fail both `--check` and `--write`: an index of a
//!   store with two values for one fact would answer either.
//!
//! The content generators read `--content DIR` (default `<root>/content`); their failures carry
//! a typed reason (`--json` prints it as `reason`), and exit 1.

use std::path::PathBuf;

use std::path::Path;

use serde_json::json;

use crate::cli::args::{GenArgs, GenOpts, GenWhat};
use crate::cli::error::Error;
use crate::cli::settings::{Globals, Settings, Subcommand, Takes};
use crate::dev::generated::{self, GenError, Generated, Mode, Outcome, Output, Reason};
use crate::pipeline;
use crate::pipeline::load::Tree;
use crate::pipeline::section_manifest::{self, SectionManifest};
use crate::pipeline::target::Environment;
use msd_core::fs::fsx;
use msd_core::installed::predicates::{self, Index};
use msd_core::manifest::capability::Scope;

impl Subcommand for GenArgs {
    const NAME: &'static str = "gen";

    /// JSON is the outcome of `--check` or `--write` of a content file; the golden lists and
    /// printing have none.
    fn json(&self) -> Takes {
        let o = self.what.opts();
        if matches!(self.what, GenWhat::Golden(_)) || !(o.check || o.write) {
            Takes::No(
                "prints the generated text, which has no JSON form here (JSON is the outcome of --check or --write of section-manifest and context-index); drop --json",
            )
        } else {
            Takes::Yes
        }
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        base.sources(&self.what.opts().sources)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `gen`.
pub(crate) fn run(s: &Settings, args: &GenArgs) -> Result<(), Error> {
    match &args.what {
        GenWhat::Golden(o) => {
            // Refuse before the work: the golden lists take every runtime x scope to compute.
            if mode(o) == Mode::Write {
                super::require_repository(&o.root)?;
            }
            finish(s, o, golden(&s.sources)?, "cargo run -q --bin msd-install -- gen golden --write")
        }
        GenWhat::SectionManifest(o) => content_file(s, o, Target::SectionManifest),
        GenWhat::ContextIndex(o) => content_file(s, o, Target::ContextIndex),
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

/// Applies `mode` to `files` and shows the result: the fresh text on stdout (print), the diffs of
/// stale files on stderr and a failure naming `fix` (check).
pub(crate) fn apply_and_show(
    s: &Settings,
    root: &Path,
    files: &[Generated],
    mode: Mode,
    fix: &str,
) -> Result<Outcome, Error> {
    let applied = generated::apply(root, files, mode)?;
    if mode == Mode::Print {
        s.output.text(&applied.text);
    } else {
        eprint!("{}", applied.text);
    }
    if applied.failed(mode) {
        return Err(Error::CheckFailed(format!(
            "{} generated file(s) are stale; run `{fix}` and commit the result",
            applied.outcome.stale.len()
        )));
    }
    Ok(applied.outcome)
}

fn finish(s: &Settings, o: &GenOpts, files: Vec<Generated>, fix: &str) -> Result<(), Error> {
    if mode(o) == Mode::Write {
        super::require_repository(&o.root)?;
    }
    let outcome = apply_and_show(s, &o.root, &files, mode(o), fix)?;
    match mode(o) {
        Mode::Check => eprintln!("{} generated file(s) up to date", outcome.current.len()),
        Mode::Write => {
            eprintln!("{} file(s) written, {} already up to date", outcome.stale.len(), outcome.current.len())
        }
        Mode::Print => {}
    }
    Ok(())
}

/// The sorted emitted file list of every runtime x scope.
pub(crate) fn golden(src: &pipeline::Sources) -> Result<Vec<Generated>, Error> {
    let runtimes = pipeline::load_runtimes(src)?;
    let content = pipeline::load_content(src)?;
    let env = Environment::golden();
    let mut out = Vec::new();
    for rt in &runtimes {
        for scope in [Scope::Global, Scope::Local] {
            if scope == Scope::Local && rt.capability.local.is_none() {
                continue;
            }
            let emission = pipeline::emit(&content, rt, scope, None, &env)?.emission;
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

/// The context index, relative to the content root.
pub(crate) const CONTEXT_INDEX: &str = "CONTEXT-INDEX.json";

#[derive(Debug, Clone, Copy)]
enum Target {
    SectionManifest,
    ContextIndex,
}

/// A generated file of the content tree, checked, written or printed.
fn content_file(s: &Settings, args: &GenOpts, what: Target) -> Result<(), Error> {
    let dir = args.sources.content.clone().unwrap_or_else(|| args.root.join("content"));
    if !fsx::is_dir(&dir) {
        return Err(Error::Usage {
            message: format!("no content directory at {}", dir.display()),
            hint: "run from the repository root (where content/ is), or pass --root DIR or --content DIR".into(),
        });
    }
    let named = args.sources.content.as_deref().or((args.root != Path::new(".")).then_some(dir.as_path()));
    let (name, fresh, out_spec, shape): (&str, String, Output, fn(&serde_json::Value) -> bool) = match what {
        Target::SectionManifest => {
            let fix = generated::fix_command("section-manifest", named);
            let tree = Tree::from_dir(&dir)?;
            let fresh = section_manifest::build(&tree)?.render();
            ("section-manifest", fresh, section_manifest::output(&dir, fix), SectionManifest::has_shape)
        }
        Target::ContextIndex => {
            let fix = generated::fix_command("context-index", named);
            let fresh = context_index(&dir)?;
            let out = Output {
                path: dir.join(CONTEXT_INDEX),
                fix,
                missing: Reason::FailIndexMissing,
                unparseable: Reason::FailIndexUnparseable,
                malformed_shape: Reason::FailIndexUnparseable,
            };
            ("context-index", fresh, out, |v| serde_json::from_value::<Index>(v.clone()).is_ok())
        }
    };
    let path = out_spec.path.display().to_string();
    let (state, text) = if args.check {
        out_spec.check(&fresh, shape)?;
        ("ok_up_to_date", format!("{path} is up to date\n"))
    } else if args.write {
        if out_spec.write(&fresh)? {
            ("written", format!("wrote {path}\n"))
        } else {
            ("unchanged", format!("{path} was already up to date\n"))
        }
    } else {
        s.output.text(&fresh);
        return Ok(());
    };
    if s.output.json {
        s.output.document(&json!({"ok": true, "gen": name, "reason": state, "path": path}));
    } else {
        eprint!("{text}");
    }
    Ok(())
}

/// Parses `<dir>/CONTEXT.md` and renders its index; duplicates and malformed lines fail.
fn context_index(dir: &Path) -> Result<String, GenError> {
    let path = dir.join("CONTEXT.md");
    let disp = path.display().to_string();
    let err = |reason: Reason, line: Option<usize>, message: String, detail: Option<String>, hint: &str| GenError {
        reason,
        path: disp.clone(),
        line,
        message,
        detail,
        hint: hint.to_string(),
    };
    let bytes = match fsx::read_if_exists(&path) {
        Ok(Some(b)) => b,
        Ok(None) => {
            return Err(err(
                Reason::FailContextMissing,
                None,
                "CONTEXT.md is missing".into(),
                None,
                "the predicate store lives at content/CONTEXT.md",
            ));
        }
        Err(e) => {
            return Err(err(Reason::FailContextUnreadable, None, e.to_string(), None, "check the file's permissions"));
        }
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        err(Reason::FailContextUnreadable, None, "not valid UTF-8".into(), None, "save the file as UTF-8")
    })?;
    let parsed = predicates::parse(&text);
    if let Some(first) = parsed.duplicates.first() {
        let detail = parsed
            .duplicates
            .iter()
            .map(|d| {
                let lines: Vec<String> = d.lines.iter().map(usize::to_string).collect();
                format!("  {} declared {} times, on lines {}", d.id, d.count, lines.join(", "))
            })
            .collect::<Vec<_>>()
            .join("\n");
        return Err(err(
            Reason::FailDuplicateIds,
            first.lines.get(1).copied(),
            format!("{} predicate id(s) declared more than once", parsed.duplicates.len()),
            Some(detail),
            "keep one declaration per id (merge the values or rename one), then run the fixing command",
        ));
    }
    if let Some(first) = parsed.malformed.first() {
        let detail = parsed
            .malformed
            .iter()
            .map(|m| format!("  line {}: {}: {}", m.line, m.reason, m.text))
            .collect::<Vec<_>>()
            .join("\n");
        return Err(err(
            Reason::FailMalformedPredicates,
            Some(first.line),
            format!("{} malformed declaration(s); first: {}", parsed.malformed.len(), first.reason),
            Some(detail),
            first.reason.hint(),
        ));
    }
    Ok(Index::build(&parsed.predicates).render())
}
