//! The command line of `msd-install`, as clap derive structs that mirror it and nothing else.
//! Doc comments are the help text. `app` turns these into validated settings and runs them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Install msd-core, the spec-driven development framework, into AI coding runtimes.
///
/// With no subcommand, installs for the runtimes given (default: claude) into their global home,
/// or with --local into the current project. A second identical run changes nothing; files you
/// edited are backed up to <home>/msd-local-patches/<timestamp>/ before they are replaced.
#[derive(Debug, Parser)]
#[command(name = "msd-install", version, args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct Cli {
    /// What to do (default: install).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Install options, when no subcommand is given.
    #[command(flatten)]
    pub install: InstallArgs,
}

const AFTER_HELP: &str = concat!(
    "Examples:\n",
    "  msd-install                         install for Claude Code into ~/.claude\n",
    "  msd-install -r opencode --local     install into ./.opencode of this project\n",
    "  msd-install --all --dry-run         show what every runtime would get\n",
    "  msd-install runtimes                list runtimes and where they install\n",
    "  msd-install verify -r codex         check an install against its manifest\n",
    "  msd-install uninstall --local       remove msd-core from ./.claude, keeping your files\n",
    "  msd-install attribution             trace emitted drift since main to its sources\n\n",
    "Exit codes:\n",
    "  0  success\n",
    "  1  a check found problems (verify drift, stale generated file, guard or attribution violations)\n",
    "  2  usage error\n",
    "  3  invalid input: manifest, content, marker, cap violation, unparseable settings file or\n",
    "     install state (nothing written)\n",
    "  4  filesystem error (unreadable source; missing, read-only or unsafe target; a failed\n",
    "     write, rolled back)\n",
    "  5  another msd-install run holds the target's lock"
);

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Install msd-core (what runs when no subcommand is given).
    Install(InstallArgs),
    /// Write one runtime's emitted tree into a directory, and nothing else.
    Emit(EmitArgs),
    /// List every runtime: id, title, global home as resolved now, local dir, artifact kinds.
    Runtimes(ListArgs),
    /// Print the JSON Schema of runtimes/<id>/capability.json.
    Schema,
    /// Generated files of this repository: print, --check (fail with a diff) or --write.
    Gen(GenArgs),
    /// Checks of a content tree that are not part of an install (exit 1 on violations).
    Check(CheckArgs),
    /// Offline, deterministic measurements of the content, against a committed baseline.
    Bench(BenchArgs),
    /// Remove msd-core from a runtime: the files the manifest lists that you did not edit
    /// (edited ones are backed up and stay), msd's settings entries, msd's metadata, and the
    /// directories msd-install created when they are empty. Your files and settings stay.
    Uninstall(UninstallArgs),
    /// Compare an install with its manifest: modified, missing and extra files, and msd's
    /// settings entries. Exit 0 only when everything matches.
    Verify(VerifyArgs),
    /// Finish (or undo) what an interrupted msd-install run left on a target, and nothing else.
    /// Every install and uninstall does this first by itself.
    Recover(RecoverArgs),
    /// Trace every change in emitted files since a base revision to the source file that caused
    /// it, or to an acknowledgement in tests/emitted-drift-acks/ (run inside the repository).
    ///
    /// Emits content/ and runtimes/ at the base and in the working tree for every runtime and
    /// scope, compares them path by path, and fails (exit 1) on a moved file no changed source
    /// explains, a workflow or agent that grew without an acknowledgement, a new workflow or
    /// agent over 32,768 bytes, or a stale acknowledgement.
    Attribution(AttributionArgs),
    /// Print what every runtime x scope receives (path, bytes, sha256, kind, sources) as one
    /// JSON document, emitted for the fixed home /home/user.
    Inventory(InventoryArgs),
}

/// `check` options.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Which check.
    #[command(subcommand)]
    pub what: CheckWhat,
}

/// The checks.
#[derive(Debug, Clone, Subcommand)]
pub enum CheckWhat {
    /// The compact-content partition of spines and detail parts (five checks; see
    /// docs/PARTITION-RULES.md). Without --base: disjointness, registration and the parts of the
    /// protected check that need no history. With --base: all five, against the merge-base.
    Partition(PartitionArgs),
}

/// `check partition` options.
#[derive(Debug, Clone, Args)]
pub struct PartitionArgs {
    /// Compare against the merge-base of REV and HEAD (completeness of new splits, protected lines
    /// kept, boundary moves declared by `Boundary-Move-Declared:` trailers since the merge-base).
    /// A REV that does not resolve is an error, never a pass.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The content tree to check (its msd-core/workflows/ and the gate in msd-core/references/).
    #[arg(long, value_name = "DIR", default_value = "content")]
    pub content: PathBuf,
    /// Print the report as one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `attribution` options.
#[derive(Debug, Clone, Args)]
pub struct AttributionArgs {
    /// The base revision [default: the merge-base of HEAD with origin/main, or with main].
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Emit the base side with this msd-install (one built from the base revision), so that
    /// changes to the emitter's own code show up; by default this binary emits both sides.
    #[arg(long, value_name = "PATH")]
    pub base_binary: Option<PathBuf>,
    /// A directory of the repository [default: the current one]; content/, runtimes/ and
    /// tests/emitted-drift-acks/ are at the top of its git work tree.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print the report as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `bench` options.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Which benchmark.
    #[command(subcommand)]
    pub what: BenchWhat,
}

/// The benchmarks.
#[derive(Debug, Clone, Subcommand)]
pub enum BenchWhat {
    /// Eagerly loaded bytes and proxy tokens per command with compact content off and on. Prints
    /// the table; --check compares with bench/tokens-baseline.json, --write updates it.
    Tokens(GenOpts),
    /// Write a synthetic content tree N times the shipped one (distinct files, same shape) into
    /// DIR, for the whole-install benchmark (`bench/install.sh --scale N`).
    Content(ScaleArgs),
}

/// `bench content` options.
#[derive(Debug, Clone, Args)]
pub struct ScaleArgs {
    /// How many times the source tree (1 copies it as is).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub scale: usize,
    /// Where to write the tree (created; must be empty if it exists).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `inventory` options.
#[derive(Debug, Clone, Args)]
pub struct InventoryArgs {
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `gen` options.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// Which generated files.
    #[command(subcommand)]
    pub what: GenWhat,
}

/// The generated files.
#[derive(Debug, Clone, Subcommand)]
pub enum GenWhat {
    /// tests/golden/<runtime>-<scope>.txt: the sorted file list every runtime x scope receives.
    Golden(GenOpts),
    /// <content>/msd-core/workflows/section-manifest.json: each workflow's sections and each
    /// command's argument grammar, read by `msd_run query init.<workflow>`.
    SectionManifest(GenOpts),
    /// <content>/CONTEXT-INDEX.json: the predicates of CONTEXT.md, sorted, without line numbers.
    /// Duplicate ids and malformed declarations fail.
    ContextIndex(GenOpts),
}

impl GenWhat {
    /// The options of whichever target.
    pub fn opts(&self) -> &GenOpts {
        match self {
            GenWhat::Golden(o) | GenWhat::SectionManifest(o) | GenWhat::ContextIndex(o) => o,
        }
    }
}

/// Options shared by every `gen` target.
#[derive(Debug, Clone, Args)]
pub struct GenOpts {
    /// Fail (exit 1) with a diff when a committed file differs from a fresh render.
    #[arg(long, conflicts_with = "write")]
    pub check: bool,
    /// Write the files that differ.
    #[arg(long)]
    pub write: bool,
    /// Repository root the paths are relative to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Sources (content generators read `--content DIR`, default `<root>/content`).
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Print the outcome, or the failure and its typed reason, as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// One runtime and where.
#[derive(Debug, Clone, Args, Default)]
pub struct OneTargetArgs {
    /// The runtime (default: the primary one, claude). See `msd-install runtimes`.
    #[arg(short = 'r', long = "runtime", value_name = "ID")]
    pub runtime: Option<String>,
    /// Scope and home.
    #[command(flatten)]
    pub place: PlaceArgs,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
    /// Go through symlinks between the home and a destination (refused by default).
    #[arg(long)]
    pub allow_symlinks: bool,
}

/// `uninstall` options.
#[derive(Debug, Clone, Args)]
pub struct UninstallArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
    /// Print what would be removed and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `verify` options.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `recover` options.
#[derive(Debug, Clone, Args)]
pub struct RecoverArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where content and manifests come from.
#[derive(Debug, Clone, Args, Default)]
pub struct SourceArgs {
    /// Install this content tree instead of the embedded one (layout: commands/msd/, agents/, msd-core/).
    #[arg(long, value_name = "DIR")]
    pub content: Option<PathBuf>,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
}

/// Output options.
#[derive(Debug, Clone, Args, Default)]
pub struct OutputArgs {
    /// Print the result as one JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Which runtimes and where.
#[derive(Debug, Clone, Args, Default)]
pub struct TargetArgs {
    /// Runtime to install for; repeat for several (default: claude). See `msd-install runtimes`.
    #[arg(short = 'r', long = "runtime", value_name = "ID")]
    pub runtime: Vec<String>,
    /// Every runtime.
    #[arg(long, conflicts_with = "runtime")]
    pub all: bool,
    /// Scope and home.
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// Where: the global home (the default, or `--config-dir`) or the current project.
#[derive(Debug, Clone, Args, Default)]
pub struct PlaceArgs {
    /// Use the runtime's global home (the default).
    #[arg(short, long, conflicts_with = "local")]
    pub global: bool,
    /// Use the current project (e.g. ./.claude) instead of the global home.
    #[arg(short, long)]
    pub local: bool,
    /// Use DIR as the global home, over every environment variable.
    #[arg(short = 'c', long, value_name = "DIR", conflicts_with = "local")]
    pub config_dir: Option<PathBuf>,
}

impl PlaceArgs {
    /// The scope asked for.
    pub fn scope(&self) -> msd_core::manifest::capability::Scope {
        if self.local {
            msd_core::manifest::capability::Scope::Local
        } else {
            msd_core::manifest::capability::Scope::Global
        }
    }
}

/// `install` options.
#[derive(Debug, Clone, Args, Default)]
pub struct InstallArgs {
    /// Runtimes and scope.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Print the plan (add / change / remove / keep, with bytes) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Write through symlinks between the home and a destination (refused by default).
    #[arg(long)]
    pub allow_symlinks: bool,
    /// Take over files at msd's paths that msd-install never wrote: each is backed up to
    /// msd-local-patches/ and replaced (refused by default; they are yours).
    #[arg(long)]
    pub adopt: bool,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `emit` options.
#[derive(Debug, Clone, Args)]
pub struct EmitArgs {
    /// The runtime to emit.
    #[arg(short = 'r', long = "runtime", value_name = "ID")]
    pub runtime: String,
    /// Emit the project-local layout.
    #[arg(short, long)]
    pub local: bool,
    /// Rewrite paths as if installed under this global home.
    #[arg(short = 'c', long, value_name = "DIR", conflicts_with = "local")]
    pub config_dir: Option<PathBuf>,
    /// The directory to write into (created; must be empty if it exists).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Output.
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `runtimes` options.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}
