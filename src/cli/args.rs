//! The command line of `msd-install`, as clap derive structs that mirror it and nothing else.
//! Doc comments are the help text. [`crate::cli::settings`] resolves them into one value before
//! any command runs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Install msd-core, the spec-driven development framework, into AI coding runtimes.
///
/// With no subcommand, installs for the runtimes given (default: claude) into their global home,
/// or with --local into the current project. A second identical run changes nothing; files you
/// edited are backed up to <home>/msd-local-patches/<timestamp>/ before they are replaced.
#[derive(Debug, Parser)]
#[command(
    name = "msd-install",
    disable_version_flag = true,
    after_help = AFTER_HELP
)]
pub(crate) struct Cli {
    /// Print the version and the commit and date it was built from (with --json: as JSON).
    #[arg(short = 'V', long)]
    pub version: bool,
    /// When to color output: auto (a terminal without NO_COLOR), always or never.
    #[arg(long, value_name = "WHEN", default_value = "auto", global = true)]
    pub color: ColorChoice,
    /// Say what each step did: every file with the reason it is added, changed, removed or kept.
    #[arg(short = 'v', long, global = true)]
    pub verbose: bool,
    /// `--json` and `-q`, for every subcommand.
    #[command(flatten)]
    pub output: OutputArgs,
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
    "  msd-install status                  every install on this machine and this project\n",
    "  msd-install diff -r claude          what an install would change, as a unified diff\n",
    "  msd-install check                   CI: do this project's installs match its msd.toml?\n",
    "  msd-install init-project            write msd.toml from what is installed in this project\n",
    "  msd-install self-update             the newest release, then every install updated\n\n",
    "In a project with an msd.toml (see `msd-install schema --kind project`), `msd-install` with no\n",
    "runtime or scope flags installs what it says, locally; flags given win and the summary says so.\n\n",
    "Maintainer commands (run inside the msd-install repository; see `msd-install <cmd> --help`):\n",
    "  gen          generated files of this repository: print, --check or --write\n",
    "  check        checks of a content tree that are not part of an install (`check` alone:\n",
    "               the project's installs against its msd.toml, see above)\n",
    "  bench        offline measurements of the content, against a committed baseline\n",
    "  attribution  trace emitted drift since a base revision to its sources\n",
    "  inventory    what every runtime x scope receives, as one JSON document\n\n",
    "Exit codes:\n",
    "  0  success\n",
    "  1  a check found problems (verify drift, stale generated file, guard or attribution violations)\n",
    "  2  usage error\n",
    "  3  invalid input: manifest, content, marker, cap violation, unparseable settings file or\n",
    "     install state (nothing written)\n",
    "  4  filesystem error (unreadable source; missing, read-only or unsafe target; a failed\n",
    "     write, rolled back)\n",
    "  5  another msd-install run holds the target's lock\n",
    "  6  this msd-install's version is not one the target accepts: outside the project's\n",
    "     msd.toml `version`, or older than the install (refused unless --allow-downgrade);\n",
    "     nothing was written\n",
    "  7  self-update could not read its release channel (offline or a bad URL; the URL is named)\n",
    "  8  self-update found no usable release: no archive for this platform, a checksum that does\n",
    "     not match, or a damaged archive (nothing was replaced)"
);

/// Subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Install msd-core (what runs when no subcommand is given).
    Install(InstallArgs),
    /// Write one runtime's emitted tree into a directory, and nothing else.
    Emit(EmitArgs),
    /// List every runtime: id, title, global home as resolved now, local dir, artifact kinds.
    Runtimes(ListArgs),
    /// Every install on this machine and in this project: runtime, scope, version, profile,
    /// file count, drift and when it was installed.
    Status(StatusArgs),
    /// The unified diff of every file an install would change, your edits included.
    Diff(DiffArgs),
    /// Does msd work in my runtimes, on this machine? Per runtime x scope with an install (or
    /// each -r): the CLI on PATH and its version against the tested range; what the CLI itself
    /// lists as loaded, asked offline (bounded by --timeout), against what msd wrote, one line
    /// per missing or stray name; every msd hook run the way the runtime runs it, with an event
    /// of its protocol; the helper's version against the content's; copies that shadow msd's;
    /// settings of other tools that block msd (a deny rule over the helper, hooks switched
    /// off). --json: `msd-install schema --kind doctor`. Exit 0 only when nothing is wrong.
    Doctor(DoctorArgs),
    /// Move an install from one runtime to another (`--from gemini --to antigravity`): the same
    /// scope and profile; files you edited stay with copies in a backup directory. The install
    /// of the new one and the uninstall of the old one are one transaction: stopped at any
    /// point, `msd-install recover` (or the next command on either) makes it whole, before or
    /// after, never both or neither.
    #[command(mut_arg("config_dir", |a| a.hide(true)))]
    Migrate(MigrateArgs),
    /// Print the JSON Schema of a document: runtimes/<id>/capability.json (the default) or the
    /// --json output of a command.
    Schema(SchemaArgs),
    /// Print a shell completion script (e.g. `msd-install completions bash > ~/.local/share/bash-completion/completions/msd-install`).
    Completions(CompletionsArgs),
    /// Print the man page (roff) of msd-install.
    Man(ManArgs),
    /// Update msd-install and msd_run to the newest release (MSD_INSTALL_RELEASE_URL, else the
    /// repository's releases), checksum verified, then install again every target `status`
    /// lists. A binary from npm, PyPI, Homebrew, cargo or the Claude Code plugin is updated by
    /// that channel: its command is printed instead.
    SelfUpdate(SelfUpdateArgs),
    /// Generated files of this repository: print, --check (fail with a diff) or --write.
    #[command(hide = true)]
    Gen(GenArgs),
    /// Without a subcommand, for CI: whether every runtime the project's msd.toml lists is
    /// installed locally, by an accepted version, with its profile and content, without drift
    /// (exit 1 listing what differs). With one: checks of a content tree (maintainers).
    // Hidden from the user's commands: `--help` names it under Examples and the maintainer commands.
    #[command(hide = true)]
    Check(CheckArgs),
    /// Write the project's msd.toml from what is installed in it now (refuses to replace one
    /// without --force).
    InitProject(InitProjectArgs),
    /// Offline, deterministic measurements of the content, against a committed baseline.
    #[command(hide = true)]
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
    #[command(hide = true)]
    Attribution(AttributionArgs),
    /// Print what every runtime x scope receives (path, bytes, sha256, kind, sources) as one
    /// JSON document, emitted for the fixed home /home/user.
    #[command(hide = true)]
    Inventory(InventoryArgs),
}

/// `check` options.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct CheckArgs {
    /// Which check (none: the project's installs against its msd.toml).
    #[command(subcommand)]
    pub what: Option<CheckWhat>,
    /// The project check's options.
    #[command(flatten)]
    pub project: ProjectCheckArgs,
}

/// `check` (the project check) options.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct ProjectCheckArgs {
    /// The project [default: the nearest parent with .git or .planning/, else the current
    /// directory]; its msd.toml is checked.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// `init-project` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct InitProjectArgs {
    /// The project [default: the nearest parent with .git or .planning/, else the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Replace an existing msd.toml.
    #[arg(long)]
    pub force: bool,
}

/// The checks.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum CheckWhat {
    /// The compact-content partition of spines and detail parts (five checks; see
    /// docs/PARTITION-RULES.md). Without --base: disjointness, registration and the parts of the
    /// protected check that need no history. With --base: all five, against the merge-base.
    Partition(PartitionArgs),
    /// Every reference the content makes (issue 18): each `msd_run` call parses against msd_run's
    /// own CLI, each `~/.claude/msd-core/` path exists in every runtime's installed tree, each
    /// spawned agent and named `/msd:` command is shipped, each config key is known, and each
    /// profile's closure is complete. Every failure is file:line with its fix; exit 1 on any.
    References(ReferencesArgs),
    /// Every tool a command's workflows use (`Task(`, AskUserQuestion, WebSearch, WebFetch,
    /// TodoWrite, bash blocks), through every workflow they read and follow, is in the command's
    /// `allowed-tools`; every agent has the tools its text and the workflows its spawns tell it
    /// to follow use; and no prose names as a tool one that some runtime's tool table drops or
    /// renames ("use Grep", "with Edit"). Every failure is file:line with the use and its fix;
    /// exit 1 on any.
    Tools(ToolsArgs),
}

/// `check tools` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct ToolsArgs {
    /// The content tree to check, read as text without the install's validation (default: the
    /// embedded content).
    #[arg(long, value_name = "DIR")]
    pub content: Option<PathBuf>,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones (their
    /// tool tables say which tool names prose must not use).
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
}

/// `check references` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReferencesArgs {
    /// Content and runtime manifests to check (default: the embedded ones).
    #[command(flatten)]
    pub sources: SourceArgs,
    /// The profiles file [default: <content>/profiles.json when the content has one, else
    /// docs/profiles.json beside the content (or in the current directory for the embedded
    /// content)]. Absent, the profile rule is skipped and the report says so.
    #[arg(long, value_name = "FILE")]
    pub profiles: Option<PathBuf>,
}

/// `check partition` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct PartitionArgs {
    /// Compare against the merge-base of REV and HEAD (completeness of new splits, protected lines
    /// kept, boundary moves declared by `Boundary-Move-Declared:` trailers since the merge-base).
    /// A REV that does not resolve is an error, never a pass.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The content tree to check (its msd-core/workflows/ and the gate in msd-core/references/).
    #[arg(long, value_name = "DIR", default_value = "content")]
    pub content: PathBuf,
}

/// `attribution` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct AttributionArgs {
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
}

/// `bench` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct BenchArgs {
    /// Which benchmark.
    #[command(subcommand)]
    pub what: BenchWhat,
}

/// The benchmarks.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum BenchWhat {
    /// Eagerly loaded bytes and proxy tokens per command with compact content off and on. Prints
    /// the table; --check compares with bench/tokens-baseline.json, --write updates it.
    Tokens(GenOpts),
    /// Write a synthetic content tree N times the shipped one (distinct files, same shape) into
    /// DIR, for the whole-install benchmark (`bench/install.sh --scale N`).
    Content(ScaleArgs),
    /// Port the reference framework's own Markdown (a checkout of open-gsd/gsd-core) to msd's
    /// content conventions into DIR, so `bench/install.sh --reference` times both installers on
    /// the same content. Nothing of the reference is kept: the tree is for one bench run.
    Port(PortArgs),
}

/// `bench port` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct PortArgs {
    /// The reference checkout (its `commands/gsd/`, `agents/` and `gsd-core/` are read).
    #[arg(long, value_name = "DIR")]
    pub reference: PathBuf,
    /// Where to write the ported content tree (created; must be empty if it exists).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `bench content` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScaleArgs {
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
pub(crate) struct InventoryArgs {
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `gen` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct GenArgs {
    /// Which generated files.
    #[command(subcommand)]
    pub what: GenWhat,
}

/// The generated files.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum GenWhat {
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
    pub(crate) fn opts(&self) -> &GenOpts {
        match self {
            GenWhat::Golden(o) | GenWhat::SectionManifest(o) | GenWhat::ContextIndex(o) => o,
        }
    }
}

/// Options shared by every `gen` target.
#[derive(Debug, Clone, Args)]
pub(crate) struct GenOpts {
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
}

/// Runtimes and where, for the commands that act on installs.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct OneTargetArgs {
    /// The runtime; repeat for several (default: the primary one, claude). See `msd-install runtimes`.
    #[arg(short = 'r', long = "runtime", value_name = "ID", global = true)]
    pub runtime: Vec<String>,
    /// Every runtime that has an install in this scope.
    #[arg(long, conflicts_with = "runtime", global = true)]
    pub all: bool,
    /// Where, the manifests and symlinks.
    #[command(flatten)]
    pub home: HomeArgs,
}

/// Where an install is and how its homes are read: the options `uninstall`, `verify`, `recover`
/// and `migrate` share.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct HomeArgs {
    /// Scope and home.
    #[command(flatten)]
    pub place: PlaceArgs,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
    /// Go through symlinks between a home and a destination inside it (refused by default).
    #[arg(long)]
    pub allow_symlinks: bool,
}

/// `uninstall` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct UninstallArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
    /// Print what would be removed and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `verify` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct VerifyArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
}

/// `recover` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct RecoverArgs {
    /// Runtime and scope.
    #[command(flatten)]
    pub target: OneTargetArgs,
}

/// Where content and manifests come from.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct SourceArgs {
    /// Install this content tree instead of the embedded one (layout: commands/msd/, agents/, msd-core/).
    #[arg(long, value_name = "DIR")]
    pub content: Option<PathBuf>,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
}

/// Output options.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct OutputArgs {
    /// Print the result as one JSON document on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// Which runtimes and where.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct TargetArgs {
    /// Runtime to install for; repeat for several (default: claude). See `msd-install runtimes`.
    #[arg(short = 'r', long = "runtime", value_name = "ID", global = true)]
    pub runtime: Vec<String>,
    /// Every runtime.
    #[arg(long, conflicts_with = "runtime", global = true)]
    pub all: bool,
    /// Scope and home.
    #[command(flatten)]
    pub place: PlaceArgs,
}

/// Where: the global home (the default, or `--config-dir`) or the current project.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct PlaceArgs {
    /// Use the runtime's global home (the default).
    #[arg(short, long, conflicts_with = "local")]
    pub global: bool,
    /// Use the current project (e.g. ./.claude) instead of the global home.
    #[arg(short, long, global = true)]
    pub local: bool,
    /// Use DIR as the global home, over every environment variable.
    #[arg(short = 'c', long, value_name = "DIR", conflicts_with = "local")]
    pub config_dir: Option<PathBuf>,
    /// The project of --local (implies it) [default: the nearest parent with .git or .planning/,
    /// else the current directory].
    #[arg(long, value_name = "DIR", conflicts_with_all = ["global", "config_dir"])]
    pub project: Option<PathBuf>,
}

/// Which part of msd-core.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct ProfileArgs {
    /// What to install: core (the main loop), standard (everyday commands) or full (everything);
    /// commands pull in the commands they require. Default: the profile this target has
    /// recorded, else full.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// The core profile without agents.
    #[arg(long, conflicts_with = "profile")]
    pub minimal: bool,
}

impl ProfileArgs {
    /// The profile named on the command line, if any.
    pub(crate) fn given(&self) -> Option<String> {
        if self.minimal { Some("minimal".into()) } else { self.profile.as_ref().map(|p| p.trim().to_ascii_lowercase()) }
    }
}

/// `install` options.
#[derive(Debug, Clone, Args, Default)]
pub(crate) struct InstallArgs {
    /// Runtimes and scope.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Profile.
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Print the plan (add / change / remove / keep, with bytes) and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation on a terminal (with no runtime or scope given, an install on a
    /// terminal asks which runtimes and where, then shows the plan and asks to go on).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Write through symlinks between the home and a destination (refused by default).
    #[arg(long)]
    pub allow_symlinks: bool,
    /// Write hook commands relative to $HOME (for a dotfile repo shared across machines).
    #[arg(long)]
    pub portable_hooks: bool,
    /// Replace your own status line with msd's (it comes back on uninstall).
    #[arg(long)]
    pub force_statusline: bool,
    /// Take over files at msd's paths that msd-install never wrote: each is backed up to
    /// msd-local-patches/ and replaced (refused by default; they are yours).
    #[arg(long)]
    pub adopt: bool,
    /// Install over an install a newer msd-install wrote (refused by default: it would put older
    /// files and settings in place of newer ones).
    #[arg(long)]
    pub allow_downgrade: bool,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `emit` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct EmitArgs {
    /// The runtime to emit (with --plugin: the runtime whose emission the plugin carries,
    /// default claude).
    // Required without --plugin: checked when it runs, so that a `-r` given before `emit`
    // counts (clap's requirement would not see that one).
    #[arg(short = 'r', long = "runtime", value_name = "ID")]
    pub runtime: Option<String>,
    /// Write a Claude Code plugin marketplace into DIR instead: DIR/.claude-plugin/marketplace.json
    /// and the plugin in DIR/plugins/msd-core (plugin.json, the emission, hooks/hooks.json, the
    /// helper of this platform). Add it with `claude plugin marketplace add DIR`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "local", "config_dir"])]
    pub plugin: Option<PathBuf>,
    /// Emit the project-local layout.
    #[arg(short, long)]
    pub local: bool,
    /// Rewrite paths as if installed under this global home.
    #[arg(short = 'c', long, value_name = "DIR", conflicts_with = "local")]
    pub config_dir: Option<PathBuf>,
    /// The directory to write into (created; must be empty if it exists).
    #[arg(long, value_name = "DIR", required_unless_present = "plugin")]
    pub out: Option<PathBuf>,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `runtimes` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct ListArgs {
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `status` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct StatusArgs {
    /// The project whose local installs to list [default: the nearest parent with .git or
    /// .planning/, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
}

/// `migrate` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct MigrateArgs {
    /// The runtime whose install moves.
    #[arg(long, value_name = "ID")]
    pub from: String,
    /// The runtime it moves to.
    #[arg(long, value_name = "ID")]
    pub to: String,
    /// Where, the manifests and symlinks.
    #[command(flatten)]
    pub home: HomeArgs,
}

/// `doctor` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct DoctorArgs {
    /// Check this runtime (repeat for several) [default: every runtime with an install].
    #[arg(short = 'r', long = "runtime", value_name = "ID")]
    pub runtime: Vec<String>,
    /// The project whose local installs to check [default: the nearest parent with .git or
    /// .planning/, else the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Read runtime manifests from DIR/<id>/capability.json instead of the embedded ones.
    #[arg(long = "runtimes", value_name = "DIR")]
    pub runtimes_dir: Option<PathBuf>,
    /// Stop a runtime CLI that has not answered after SECS seconds (its version, its offline
    /// listing) and report it.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,
}

/// `diff` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct DiffArgs {
    /// Runtimes and scope.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Profile.
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Sources.
    #[command(flatten)]
    pub sources: SourceArgs,
    /// Lines of context around each change.
    #[arg(short = 'U', long, value_name = "N", default_value_t = 3)]
    pub context: usize,
    /// Exit 1 when there is a difference (like `diff`).
    #[arg(long)]
    pub exit_code: bool,
}

/// `schema` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct SchemaArgs {
    /// Which document.
    #[arg(long, value_enum, default_value = "capability")]
    pub kind: SchemaKind,
}

/// The documents with a published schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SchemaKind {
    /// runtimes/<id>/capability.json.
    Capability,
    /// `msd-install --version --json`.
    Version,
    /// `msd-install status --json`.
    Status,
    /// `msd-install doctor --json`.
    Doctor,
    /// `msd-install runtimes --json`.
    Runtimes,
    /// `msd-install [install] --json`.
    InstallResult,
    /// `msd-install verify --json`.
    Verify,
    /// `msd-install uninstall --json`.
    Uninstall,
    /// `msd-install recover --json`.
    Recover,
    /// A project's msd.toml (issue 36).
    Project,
    /// `msd-install check --json` (the project check).
    Check,
}

/// `self-update` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct SelfUpdateArgs {
    /// Replace the binaries only; leave the installs as they are (`msd-install status` lists
    /// them, and installing each again updates it).
    #[arg(long)]
    pub no_reinstall: bool,
}

/// `man` options (none).
#[derive(Debug, Clone, Args)]
pub(crate) struct ManArgs {}

/// `completions` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
