//! The command line resolved into one value before any command runs: how to print (JSON, quiet,
//! verbose, color), where (global or a project, a home given), which runtimes, which content
//! and manifests. `cli::main` builds the output mode from the global flags, each subcommand's
//! arguments add what they name ([`Subcommand::settings`]), and the command's run reads the
//! result; no command looks at a flag that means the same elsewhere on its own.
//!
//! Every subcommand honours the flags every subcommand is given, or refuses them: text for
//! people goes through [`Output::text`] (silent under `-q` and `--json`), documents through
//! [`Output::document`]; a subcommand without a JSON document refuses `--json`, one whose output
//! is the thing asked for refuses `-q`, one that reads no runtime or scope refuses `-r`, `--all`
//! or `--local` ([`Subcommand`]), each with a usage error (exit 2) before it runs, never
//! printing text where a script expects JSON and never ignoring a flag.

use std::path::PathBuf;

use crate::cli::args::{ColorChoice, HomeArgs, OneTargetArgs, OutputArgs, PlaceArgs, SourceArgs};
use crate::cli::error::Error;
use crate::cli::output::{Bars, RunBars};
use crate::pipeline::Sources;
use msd_core::manifest::capability::Scope;

/// How a run prints: resolved from the global flags alone, so it is known before the command's
/// own arguments are read (an error is printed the same way whatever failed).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Output {
    /// `--json`: one JSON document on stdout (errors too).
    pub json: bool,
    /// `-q`: nothing on stdout but a JSON document asked for; errors still on stderr.
    pub quiet: bool,
    /// `-v`: every step with its reason.
    pub verbose: bool,
    /// `--color`.
    pub color: ColorChoice,
}

impl Output {
    /// From the global flags.
    pub(crate) fn new(o: &OutputArgs, verbose: bool, color: ColorChoice) -> Output {
        Output { json: o.json, quiet: o.quiet, verbose, color }
    }

    /// Whether text for people is printed (neither `-q` nor `--json`).
    pub(crate) fn is_text(&self) -> bool {
        !self.quiet && !self.json
    }

    /// Prints `text` for people, unless `-q` or `--json`.
    pub(crate) fn text(&self, text: &str) {
        if self.is_text() {
            crate::cli::output::print(text);
        }
    }

    /// Prints `doc` as the run's one JSON document (pretty, a newline after it).
    #[allow(
        clippy::unused_self,
        reason = "the output mode's to print through, as `text` is: a command holds one `Output`, not free functions"
    )]
    pub(crate) fn document(&self, doc: &impl serde::Serialize) {
        crate::cli::output::println(serde_json::to_string_pretty(doc).expect("json"));
    }

    /// Progress bars for the targets of a run (on a terminal, not under `-q`).
    pub(crate) fn bars(&self) -> RunBars {
        RunBars::new(Bars::enabled(self.quiet))
    }
}

/// Which runtimes a command acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Runtimes {
    /// None named: the command's default (the primary runtime, or every install it finds).
    #[default]
    Default,
    /// The ids given with `-r`, trimmed and lower-cased (ids are case-insensitive).
    Named(Vec<String>),
    /// `--all`.
    All,
}

impl Runtimes {
    /// From `-r` ids and `--all`.
    pub(crate) fn new(ids: &[String], all: bool) -> Runtimes {
        if all {
            Runtimes::All
        } else if ids.is_empty() {
            Runtimes::Default
        } else {
            Runtimes::Named(normalize(ids))
        }
    }
}

/// Runtime ids as given, trimmed and lower-cased (ids are case-insensitive).
pub(crate) fn normalize(ids: &[String]) -> Vec<String> {
    ids.iter().map(|i| i.trim().to_ascii_lowercase()).collect()
}

/// Where: a runtime's global home (its default, or `--config-dir`) or a project.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// Global, or local with `--local`/`--project`.
    pub scope: Scope,
    /// `--config-dir`: the global home, over every environment variable.
    pub config_dir: Option<PathBuf>,
    /// `--project`: the project of a local scope (default: found from the current directory).
    pub project: Option<PathBuf>,
}

impl Default for Place {
    /// The global home, as with no flag.
    fn default() -> Place {
        Place { scope: Scope::Global, config_dir: None, project: None }
    }
}

/// A run's settings: the output mode, and what the subcommand's arguments name of place,
/// runtimes, sources and symlinks (defaults where it names nothing).
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    /// How to print.
    pub output: Output,
    /// Where.
    pub place: Place,
    /// Which runtimes.
    pub runtimes: Runtimes,
    /// Content and manifests (default: the embedded ones).
    pub sources: Sources,
    /// `--allow-symlinks`: go through symlinks between a home and a destination.
    pub allow_symlinks: bool,
}

impl Settings {
    /// The settings of a subcommand that names nothing but the output mode.
    pub(crate) fn new(output: Output) -> Settings {
        Settings { output, ..Settings::default() }
    }

    /// The settings `cmd`'s own arguments name, printing as `output`: for a command one run
    /// builds for another (migrate's install and uninstall, the install msd.toml stands for).
    pub(crate) fn of<C: Subcommand>(cmd: &C, output: Output) -> Settings {
        let none = Globals { output, runtime: Vec::new(), all: false, local: false };
        cmd.settings(Settings::new(output), &none)
    }

    /// With the place `p` names.
    pub(crate) fn place(mut self, p: &PlaceArgs) -> Settings {
        let scope = if p.local || p.project.is_some() { Scope::Local } else { Scope::Global };
        self.place = Place { scope, config_dir: p.config_dir.clone(), project: p.project.clone() };
        self
    }

    /// With the runtimes `-r` and `--all` name.
    pub(crate) fn runtimes(mut self, ids: &[String], all: bool) -> Settings {
        self.runtimes = Runtimes::new(ids, all);
        self
    }

    /// With `--content` and `--runtimes`.
    pub(crate) fn sources(mut self, s: &SourceArgs) -> Settings {
        self.sources = Sources { content: s.content.clone(), runtimes: s.runtimes_dir.clone() };
        self
    }

    /// With `--runtimes` alone (commands that read no content).
    pub(crate) fn manifests(mut self, dir: Option<&PathBuf>) -> Settings {
        self.sources.runtimes = dir.cloned();
        self
    }

    /// With `--allow-symlinks`.
    pub(crate) fn symlinks(mut self, allow: bool) -> Settings {
        self.allow_symlinks = allow;
        self
    }
}

impl HomeArgs {
    /// The settings with the place, manifests and symlinks named.
    pub(crate) fn settings(&self, base: Settings) -> Settings {
        base.place(&self.place).manifests(self.runtimes_dir.as_ref()).symlinks(self.allow_symlinks)
    }
}

impl OneTargetArgs {
    /// The settings with the runtimes, place, manifests and symlinks named.
    pub(crate) fn settings(&self, base: Settings) -> Settings {
        self.home.settings(base).runtimes(&self.runtime, self.all)
    }
}

/// What a subcommand does with a flag every subcommand is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// Honours it.
    Yes,
    /// Refuses it: why it means nothing here, and what to do.
    No(&'static str),
}

/// The refusal of `--json` by a command whose output has no JSON form.
pub(crate) const NO_JSON: &str = "has no JSON output; drop --json";
/// The refusal of `-q` by a command whose output is the very thing asked for.
pub(crate) const NO_QUIET: &str = "prints only what you asked for, so -q would leave nothing; drop -q";

/// How many runtimes a subcommand's `-r` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// It takes no `-r`.
    None,
    /// One (`emit`).
    One,
    /// Any number.
    Many,
}

/// The flags every subcommand is given (clap `global` args, accepted before or after the
/// subcommand), as the top of the command line holds them wherever they were typed.
#[derive(Debug, Clone)]
pub(crate) struct Globals {
    /// `--json`, `-q`, `-v`, `--color`.
    pub output: Output,
    /// `-r`.
    pub runtime: Vec<String>,
    /// `--all`.
    pub all: bool,
    /// `--local`.
    pub local: bool,
}

/// One subcommand: its name, which of the flags every subcommand is given it takes, what its
/// arguments add to the settings, and its run. `cli::main` dispatches once over the
/// subcommands to [`run`]; this trait is the one table of which command honours which flag.
pub(crate) trait Subcommand {
    /// As typed (`verify`).
    const NAME: &'static str;
    /// What `-r` names here.
    const RUNTIME: Arity = Arity::None;
    /// Whether `--all` means something here.
    const ALL: bool = false;
    /// Whether `--local` means something here.
    const LOCAL: bool = false;
    /// What `--json` does: prints the command's document (or the JSON it prints anyway), or is
    /// refused.
    fn json(&self) -> Takes;
    /// What `-q` does: nothing but errors on stdout, or refused.
    fn quiet(&self) -> Takes {
        Takes::Yes
    }
    /// The settings with what these arguments, and the global flags in `g`, name (default:
    /// nothing more than the output mode).
    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        base
    }
    /// Runs the command.
    fn run(&self, s: &Settings) -> Result<(), Error>;
}

/// Why a run stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A flag was refused before anything ran: a usage error about the command line, said on
    /// stderr as text even under `--json` (as clap's own usage errors are).
    Refused(Error),
    /// The command failed.
    Failed(Error),
}

/// Refuses a flag `C` has no use for, given anywhere on the line, rather than ignore it.
fn refuse<C: Subcommand>(cmd: &C, g: &Globals) -> Result<(), Error> {
    let refused = |flag: &str, why: &str| Error::Usage {
        message: format!("`msd-install {}` {why} (given: {flag})", C::NAME),
        hint: format!("see `msd-install {} --help` for what it takes", C::NAME),
    };
    for (flag, given, takes) in [("--json", g.output.json, cmd.json()), ("-q", g.output.quiet, cmd.quiet())] {
        if let (true, Takes::No(why)) = (given, takes) {
            return Err(refused(flag, why));
        }
    }
    match (C::RUNTIME, g.runtime.len()) {
        (Arity::None, 1..) => return Err(refused("-r", "takes no runtime (drop it)")),
        (Arity::One, 2..) => return Err(refused("-r twice", "takes one runtime (keep one -r)")),
        _ => {}
    }
    if g.all && !C::ALL {
        return Err(refused("--all", "has no --all (drop it)"));
    }
    if g.local && !C::LOCAL {
        return Err(refused("--local", "has no --local (drop it)"));
    }
    Ok(())
}

/// Refuses the flags `cmd` has no use for, resolves its settings in one step, then runs it.
pub(crate) fn run<C: Subcommand>(cmd: &C, g: &Globals) -> Result<(), Stop> {
    refuse(cmd, g).map_err(Stop::Refused)?;
    let settings = cmd.settings(Settings::new(g.output), g);
    cmd.run(&settings).map_err(Stop::Failed)
}
