//! `msd-install [install]`: emit, guard, plan and write the selected runtimes, each target under
//! its lock and in one transaction ([`crate::apply::install`]).

use serde_json::json;

use super::{env_for, human_bytes};
use crate::apply::plan::{Action, Plan};
use crate::apply::record::FileManifest;
use crate::apply::txn::Recovery;
use crate::apply::{self, InstallOptions, TargetRun};
use crate::cli::args::InstallArgs;
use crate::cli::error::Error;
use crate::cli::output::RunBars;
use crate::cli::project::{self, ProjectRoot};
use crate::cli::settings::{Arity, Globals, Output, Runtimes, Settings, Subcommand, Takes};
use crate::cli::version;
use crate::pipeline;
use crate::pipeline::fit::FileCompose;
use crate::pipeline::load::{Content, LoadedRuntime};
use crate::pipeline::target::{Environment, Target};
use msd_core::manifest::capability::Scope;

impl Subcommand for InstallArgs {
    const NAME: &'static str = "install";
    const RUNTIME: Arity = Arity::Many;
    const ALL: bool = true;
    const LOCAL: bool = true;

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn settings(&self, base: Settings, _g: &Globals) -> Settings {
        let t = &self.target;
        base.place(&t.place).runtimes(&t.runtime, t.all).sources(&self.sources).symlinks(self.allow_symlinks)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs an install; on a terminal with no runtime or scope given, asks first
/// ([`crate::cli::prompt`]).
pub(crate) fn run(s: &Settings, args: &InstallArgs) -> Result<(), Error> {
    // A project's msd.toml answers what the prompt would ask (issue 36).
    let following = follow(s, args)?;
    if let project::Plan::Follow(f) = &following {
        return execute(&Settings::of(&f.args, s.output), &f.args, false, &following);
    }
    if !crate::cli::prompt::should_ask(args, &s.output) {
        return execute(s, args, false, &following);
    }
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    let env = super::env()?;
    let project = super::project_root(None, &env.cwd);
    let Some(answered) = crate::cli::prompt::ask(args, &runtimes, &env, &project.dir.display().to_string())? else {
        eprintln!("no runtime chosen; nothing was written");
        return Ok(());
    };
    let answered_settings = Settings::of(&answered, s.output);
    if args.dry_run {
        return execute(&answered_settings, &answered, false, &following);
    }
    let mut preview = answered.clone();
    preview.dry_run = true;
    execute(&answered_settings, &preview, true, &following)?;
    if !args.yes && !crate::cli::prompt::confirm()? {
        eprintln!("nothing was written");
        return Ok(());
    }
    execute(&answered_settings, &answered, false, &following)
}

/// How the install of `args` treats the project's msd.toml ([`project::for_install`]); the
/// runtime manifests are loaded only when the project has one.
fn follow(s: &Settings, args: &InstallArgs) -> Result<project::Plan, Error> {
    let env = super::env()?;
    if project::find(s.place.project.as_deref(), &env.cwd).1.is_none() {
        return Ok(project::Plan::None);
    }
    let runtimes = pipeline::load_runtimes(&s.sources)?;
    Ok(project::for_install(args, &runtimes, &env.cwd)?)
}

/// What an install acts on: the runtimes chosen and where.
struct Targets<'a> {
    /// Every runtime the manifests define (the `.gitignore` block covers them all).
    every: &'a [LoadedRuntime],
    /// The runtimes to install.
    chosen: Vec<&'a LoadedRuntime>,
    /// Runtimes `--all --local` skipped: they have no project-local scope.
    skipped: Vec<&'a str>,
    env: Environment,
    /// The project of a local install.
    project: Option<ProjectRoot>,
}

/// What an install did, for its summary.
struct Outcome {
    /// One per target installed, with the profile it installed.
    runs: Runs,
    /// The version each runtime's install had before (`None`: none there).
    previous: Versions,
    /// The command each runtime begins with, in its own syntax (`command_ref`), when installed.
    firsts: Firsts,
    /// What the `.gitignore` block sync did.
    gitignored: Option<String>,
}

/// Runs an install of `args` with the settings `s` resolved from them; `preview` prints the
/// plan's summary only (before a confirmation). `following` is what the project's msd.toml
/// contributed (the summary says so).
fn execute(s: &Settings, args: &InstallArgs, preview: bool, following: &project::Plan) -> Result<(), Error> {
    execute_linked(s, args, preview, following, None)
}

/// The install of `args` (one runtime) with `linked` committed as one with it (`migrate`).
pub(crate) fn run_linked(s: &Settings, args: &InstallArgs, linked: &apply::Linked) -> Result<(), Error> {
    execute_linked(s, args, false, &project::Plan::None, Some(linked))
}

/// [`execute`], with what `linked` stages committed in the same transaction.
fn execute_linked(
    s: &Settings,
    args: &InstallArgs,
    preview: bool,
    following: &project::Plan,
    linked: Option<&apply::Linked>,
) -> Result<(), Error> {
    let every = pipeline::load_runtimes(&s.sources)?;
    let targets = choose(s, &every)?;
    // A run that emits every runtime hashes the helper it installs (msd_run, 4 MiB: its file is
    // copied, never held) on a second thread while this one loads the content, on a core that
    // would idle: both workers need it for their first emission, where one hashed it while the
    // other waited (docs/PERFORMANCE.md, port42). Not before a run that may take the fast path,
    // which never needs it; a missing helper is still reported where it was, after the content.
    let full = args.dry_run
        || linked.is_some()
        || !apply::fast::may_be_taken(&targets.chosen, s.place.scope, s.place.config_dir.as_deref(), &targets.env);
    // The fingerprint of a `--content` tree (a sha256 of its bytes) is taken while the content
    // is checked, on the core the check leaves idle; the embedded content's is a constant.
    let (embedded, runtimes_embedded) = (s.sources.content.is_none(), s.sources.runtimes.is_none());
    let fingerprint = |tree: &pipeline::load::Tree| apply::fast::inputs(tree, embedded, runtimes_embedded);
    let (mut content, inputs) = std::thread::scope(|t| {
        if full {
            t.spawn(|| drop(pipeline::synth::helper_bytes()));
        }
        if embedded {
            pipeline::load_content(&s.sources).map(|c| {
                let inputs = fingerprint(&c.tree);
                (c, inputs)
            })
        } else {
            pipeline::load_content_beside(&s.sources, fingerprint)
        }
    })?;
    if let project::Plan::Follow(f) = following {
        f.file.check_profile(&content)?;
    }
    // Validated and fingerprinted: from here on only the composed content is emitted.
    content.release_sources();
    let (groups, previous) = group_by_profile(s, args, &targets, &content)?;
    let bars = s.output.bars();
    let how = How { args, bars: &bars, inputs: inputs.as_deref(), linked };
    let (runs, firsts) = install_groups(s, &how, &targets, content, groups)?;
    // msd.toml's `.gitignore` block, once the installs are in place.
    let gitignored = match following {
        project::Plan::Follow(f) if f.file.gitignore && !args.dry_run => {
            project::gitignore::sync(&f.file.root.dir, targets.every, &targets.env, true)?
        }
        _ => None,
    };
    if apply::fast::traced() {
        for (r, _) in &runs {
            let taken = if r.fast { "taken" } else { "not taken" };
            eprintln!("fast path: {} ({}): {taken}", r.plan.runtime, r.plan.scope.as_str());
        }
    }
    let outcome = Outcome { runs, previous, firsts, gitignored };
    if s.output.json {
        s.output.document(&report_json(args, &targets, &outcome, following));
    } else {
        s.output.text(&report_text(s, args, preview, &targets, &outcome, following));
    }
    Ok(())
}

/// The runtimes `s` selects and where they install; refuses `--config-dir` with several.
fn choose<'a>(s: &Settings, every: &'a [LoadedRuntime]) -> Result<Targets<'a>, Error> {
    let selected = super::select(s, every)?;
    if s.place.config_dir.is_some() && selected.len() > 1 {
        return Err(Error::Usage {
            message: "--config-dir names one home and cannot be used with several runtimes".into(),
            hint: "install the runtimes one at a time, each with its own --config-dir".into(),
        });
    }
    let (env, project) = env_for(&s.place)?;
    // Under --all --local, runtimes without a local scope are skipped rather than failing the
    // set, and the summary names them.
    let (chosen, skipped): (Vec<_>, Vec<_>) = if s.place.scope == Scope::Local && s.runtimes == Runtimes::All {
        selected.into_iter().partition(|r| r.capability.local.is_some())
    } else {
        (selected, Vec::new())
    };
    let skipped = skipped.iter().map(|r| r.capability.id.as_str()).collect();
    Ok(Targets { every, chosen, skipped, env, project })
}

/// Runtimes of one profile, installed together.
type Groups<'a> = Vec<(Option<String>, Vec<&'a LoadedRuntime>)>;
/// Each runtime's id with the version its install had (`None`: nothing installed).
type Versions = Vec<(String, Option<String>)>;
/// Each target's run with the profile it installed.
type Runs = Vec<(TargetRun, Option<String>)>;
/// Each runtime's id with the command it begins with, in its syntax.
type Firsts = Vec<(String, String)>;

/// Each target's profile (the one given, else the one it recorded, else the default), the
/// runtimes grouped by it, and the version each target had; refuses a downgrade unless allowed.
fn group_by_profile<'a>(
    s: &Settings,
    args: &InstallArgs,
    targets: &Targets<'a>,
    content: &Content,
) -> Result<(Groups<'a>, Versions), Error> {
    let given = args.profile.given();
    let mut groups: Groups<'a> = Vec::new();
    let mut previous = Vec::new();
    for rt in targets.chosen.iter().copied() {
        let target =
            pipeline::target::resolve(&rt.capability, s.place.scope, s.place.config_dir.as_deref(), &targets.env)?;
        let before = installed_version(rt, &target);
        if let Some(v) = &before
            && !args.allow_downgrade
            && version::compare(v, version::VERSION) == Some(std::cmp::Ordering::Greater)
        {
            return Err(Error::Downgrade {
                target: format!("{} ({})", rt.capability.id, s.place.scope.as_str()),
                installed: v.clone(),
                binary: version::VERSION.to_string(),
            });
        }
        previous.push((rt.capability.id.clone(), before));
        let p = super::target_profile(content, given.as_deref(), rt, &target);
        match groups.iter_mut().find(|(g, _)| *g == p) {
            Some((_, list)) => list.push(rt),
            None => groups.push((p, vec![rt])),
        }
    }
    Ok((groups, previous))
}

/// How each group installs: the options, the bars, the run's identity, a staged removal that
/// commits with it.
struct How<'a> {
    args: &'a InstallArgs,
    bars: &'a RunBars,
    inputs: Option<&'a str>,
    linked: Option<&'a apply::Linked>,
}

/// Installs each group with its profile's selection of `content`; returns each target's run with
/// its profile, and the command each runtime begins with.
fn install_groups(
    s: &Settings,
    how: &How<'_>,
    targets: &Targets<'_>,
    content: Content,
    groups: Groups<'_>,
) -> Result<(Runs, Firsts), Error> {
    let args = how.args;
    let mut runs = Vec::new();
    let mut firsts = Vec::new();
    // The last group takes the content itself (usually the only group: no copy of it is made).
    let mut content = Some(content);
    let n_groups = groups.len();
    for (i, (profile, rts)) in groups.into_iter().enumerate() {
        let base =
            if i + 1 == n_groups { content.take() } else { content.clone() }.expect("taken by the last group only");
        let selected = match &profile {
            Some(p) => pipeline::profile::select(base, p).map_err(pipeline::PipelineError::from)?,
            None => base,
        };
        let opts = InstallOptions {
            scope: s.place.scope,
            config_dir: s.place.config_dir.as_deref(),
            allow_symlinks: s.allow_symlinks,
            adopt: args.adopt,
            dry_run: args.dry_run,
            progress: how.bars,
            profile: profile.as_deref(),
            hooks: apply::surfaces::HookMode { portable: args.portable_hooks, force_statusline: args.force_statusline },
            inputs: how.inputs,
            linked: how.linked,
        };
        if let Some(stem) = first_command(&selected) {
            for rt in &rts {
                firsts.push((rt.capability.id.clone(), rt.capability.command_ref.replace("{stem}", stem)));
            }
        }
        for r in apply::install(&selected, &rts, &opts, &targets.env)? {
            runs.push((r, profile.clone()));
        }
    }
    Ok((runs, firsts))
}

/// The `--json` document of an install.
fn report_json(args: &InstallArgs, targets: &Targets<'_>, o: &Outcome, following: &project::Plan) -> serde_json::Value {
    let items: Vec<_> = o
        .runs
        .iter()
        .map(|(r, profile)| {
            let p = &r.plan;
            json!({
                "runtime": p.runtime,
                "profile": profile,
                "scope": p.scope,
                "home": p.home,
                "home_source": r.target.source,
                "summary": p.summary(),
                "manifest_changed": p.manifest_changed,
                "ops": p.ops,
                "settings": p.settings,
                "migrations": p.migrations,
                "pending_migrations": r.pending_migrations,
                "recovery": r.recovery,
                "pending_recovery": r.pending_recovery,
                "written": r.report,
                "caps": r.guard.compliant,
                "compose": r.compose,
                "notes": notes(r, &targets.chosen),
            })
        })
        .collect();
    let skipped: Vec<_> = targets
        .skipped
        .iter()
        .map(|id| json!({"runtime": id, "reason": "no project-local scope: install it globally (drop --local)"}))
        .collect();
    crate::cli::versioned::versioned(json!({
        "ok": true,
        "dry_run": args.dry_run,
        "version": env!("CARGO_PKG_VERSION"),
        "runtimes": items,
        "skipped": skipped,
        "msd_toml": project::summary_json(following),
        "gitignore": o.gitignored,
    }))
}

/// The summary of an install for people; `preview` leaves out the list of files and the next
/// steps (it stands above a confirmation).
fn report_text(
    s: &Settings,
    args: &InstallArgs,
    preview: bool,
    targets: &Targets<'_>,
    o: &Outcome,
    following: &project::Plan,
) -> String {
    let mut text = project::summary_lines(following);
    if let Some(p) = &targets.project {
        text.push_str(&format!("project: {} (found by {})\n", p.dir.display(), p.found_by));
    }
    for (r, profile) in &o.runs {
        text.push_str(&describe(&s.output, r, args.dry_run, profile.as_deref(), !preview));
        let before = o.previous.iter().find(|(id, _)| *id == r.plan.runtime).and_then(|(_, v)| v.as_deref());
        text.push_str(&version_line(r, before, args.dry_run));
        text.push_str(&describe_compose(&r.compose));
        for n in notes(r, &targets.chosen) {
            text.push_str(&format!("  note: {n}\n"));
        }
    }
    if !targets.skipped.is_empty() {
        text.push_str(&format!(
            "skipped (no project-local scope): {}; install them globally (drop --local)\n",
            targets.skipped.join(", ")
        ));
    }
    if let Some(g) = &o.gitignored {
        text.push_str(&format!("{g}\n"));
    }
    if args.dry_run && !preview {
        text.push_str("dry run: nothing was written; `msd-install diff` shows each change line by line\n");
    } else if !preview {
        let runs: Vec<&TargetRun> = o.runs.iter().map(|(r, _)| r).collect();
        text.push_str(&next_steps(&runs, &o.firsts, &targets.chosen));
    }
    text
}

/// The msd-install version that wrote the install at `target`, from its file manifest; `None`
/// where nothing is installed, or where the manifest cannot be read: the install itself then
/// reports what is wrong with the target, as it always has.
fn installed_version(rt: &LoadedRuntime, target: &Target) -> Option<String> {
    FileManifest::read_tool_version(&target.home, &rt.capability, target.scope)
}

/// The command a new user begins with (`new-project`; else `help`), when the installed content
/// has it.
fn first_command(content: &Content) -> Option<&'static str> {
    ["new-project", "help"].into_iter().find(|stem| content.commands.iter().any(|c| c.stem == *stem))
}

/// `claude (global): 0.3.5 -> 0.3.6` and where the changes are described, when the install moves
/// from one version to another.
fn version_line(r: &TargetRun, before: Option<&str>, dry_run: bool) -> String {
    let Some(before) = before else { return String::new() };
    if before == version::VERSION {
        return String::new();
    }
    let when = if dry_run { " once installed" } else { "" };
    let head = format!("{} ({}): {before} -> {}{when}", r.plan.runtime, r.plan.scope.as_str(), version::VERSION);
    let what = match version::compare(before, version::VERSION) {
        Some(std::cmp::Ordering::Greater) => "a downgrade, allowed by --allow-downgrade; what each version changed",
        _ => "what changed",
    };
    format!("  {head} ({what}: {})\n", version::changelog_url())
}

/// The last lines of a summary: how to begin, in each runtime's own syntax.
fn next_steps(runs: &[&TargetRun], firsts: &[(String, String)], runtimes: &[&LoadedRuntime]) -> String {
    let mut text = String::new();
    let mut seen = Vec::new();
    for r in runs {
        if seen.contains(&r.plan.runtime) {
            continue;
        }
        seen.push(r.plan.runtime.clone());
        let Some((_, first)) = firsts.iter().find(|(id, _)| *id == r.plan.runtime) else { continue };
        let title = runtimes
            .iter()
            .find(|rt| rt.capability.id == r.plan.runtime)
            .map_or(r.plan.runtime.as_str(), |rt| rt.capability.title.as_str());
        let place = match r.plan.scope {
            Scope::Local => "in this project",
            Scope::Global => "in a project",
        };
        text.push_str(&format!("next: start {title} {place} and type {first}\n"));
    }
    text
}

/// The manifest's install notes for the run's scope, `{{home}}` filled in.
fn notes(r: &TargetRun, runtimes: &[&LoadedRuntime]) -> Vec<String> {
    let home = r.plan.home.display().to_string();
    runtimes
        .iter()
        .filter(|rt| rt.capability.id == r.plan.runtime)
        .flat_map(|rt| rt.capability.sunset.iter().map(|s| s.notice.as_str()).chain(rt.capability.notes(r.plan.scope)))
        .map(|n| n.replace("{{home}}", &home))
        .collect()
}

/// One line for what recovery did.
pub(crate) fn recovery_line(r: &Recovery) -> String {
    match r {
        Recovery::Completed { label, ops } => {
            format!("  completed an interrupted run ({label}, {ops} operations) before starting\n")
        }
        Recovery::RolledBack { label, reason } => {
            format!("  rolled back an interrupted run ({label}) that could not be completed: {reason}\n")
        }
        Recovery::Discarded => "  removed the staging area of a run interrupted before it changed anything\n".into(),
    }
}

/// One line per file that was composed to fit its cap.
fn describe_compose(files: &[FileCompose]) -> String {
    let mut text = String::new();
    for f in files.iter().filter(|f| f.budget.is_some()) {
        let Some(r) = &f.report else { continue };
        let mut what = Vec::new();
        for (label, ids) in [("omitted", &r.omitted), ("shrunk", &r.shrunk), ("truncated", &r.truncated)] {
            if !ids.is_empty() {
                what.push(format!("{label} {}", ids.join(", ")));
            }
        }
        text.push_str(&format!(
            "  composed {} to {} B to fit its cap of {} B ({} B whole): {}\n",
            f.path,
            human_bytes(f.bytes),
            human_bytes(f.cap.unwrap_or(0)),
            human_bytes(f.full_bytes),
            what.join("; ")
        ));
    }
    text
}

fn describe(o: &Output, r: &TargetRun, dry_run: bool, profile: Option<&str>, list_ops: bool) -> String {
    let plan: &Plan = &r.plan;
    let s = plan.summary();
    let paint = crate::cli::output::Paint::stdout(o.color);
    let head = format!("{} ({}) -> {}", plan.runtime, plan.scope.as_str(), plan.home.display());
    let mut text = paint.bold(&head);
    if let Some(p) = profile {
        text.push_str(&format!("  [profile {p}]"));
    }
    text.push('\n');
    if let Some(rec) = &r.recovery {
        text.push_str(&recovery_line(rec));
    }
    if r.pending_recovery {
        text.push_str("  an interrupted run left a journal here; the next run completes it first\n");
    }
    for m in plan.migrations.iter().filter(|m| m.applied) {
        text.push_str(&format!("  migrated: {}\n", m.id));
    }
    if !r.pending_migrations.is_empty() {
        text.push_str(&format!("  migrations to check first: {}\n", r.pending_migrations.join(", ")));
    }
    let verbose = o.verbose;
    if (dry_run || verbose) && list_ops {
        for op in plan.ops.iter().filter(|o| verbose || o.action != Action::Keep) {
            let size = match op.action {
                Action::Remove => format!("-{} B", human_bytes(op.old_bytes.unwrap_or(0))),
                _ => format!("{} B", human_bytes(op.bytes.unwrap_or(0))),
            };
            let backup = match op.action {
                _ if op.backup.is_some() => "  (edited: backed up first)",
                Action::Keep if verbose => "  (unchanged)",
                Action::Add if verbose => "  (new)",
                Action::Change if verbose => "  (content differs from the install)",
                Action::Remove if verbose => "  (no longer shipped)",
                _ => "",
            };
            text.push_str(&format!("  {:<7} {}  {size}{backup}\n", op.action.as_str(), op.path));
        }
    }
    for c in plan.settings.iter().filter(|c| c.action != Action::Keep) {
        let mut what = Vec::new();
        if !c.added.is_empty() {
            what.push(format!("added {}", c.added.join(", ")));
        }
        if !c.updated.is_empty() {
            what.push(format!("updated {}", c.updated.join(", ")));
        }
        if !c.removed.is_empty() {
            what.push(format!("removed {}", c.removed.join(", ")));
        }
        text.push_str(&format!("  settings {}: {}\n", c.path, what.join("; ")));
    }
    for c in &plan.settings {
        for n in &c.notes {
            text.push_str(&format!("  note: {}: {n}\n", c.path));
        }
    }
    if plan.is_noop() {
        text.push_str(&format!("  up to date: {} files, nothing changed\n", s.kept));
    } else {
        let verb = if dry_run { "would be" } else { "were" };
        text.push_str(&format!(
            "  {} added, {} changed, {} removed, {} kept ({} bytes emitted); files {verb} written\n",
            s.added,
            s.changed,
            s.removed,
            s.kept,
            human_bytes(s.bytes)
        ));
    }
    if let Some(w) = &r.report
        && let Some(dir) = &w.backup_dir
    {
        text.push_str(&format!(
            "  backed up {} edited file(s) to {} before replacing them:\n",
            w.backed_up.len(),
            dir.display()
        ));
        for b in &w.backed_up {
            text.push_str(&format!("    {b}\n"));
        }
    }
    text
}
