//! `msd_run hook <name>`: the hooks msd-install registers in each runtime's settings (Claude
//! `settings.json`, Codex `hooks.json`, Gemini and Qwen `settings.json`, ...), one
//! implementation for all of them.
//!
//! Each hook is a pure decision in its own module, over the [`event::Event`] read from stdin
//! (whichever runtime's payload it is) and the few facts this shell reads from disk; the shell
//! here reads, decides and writes the [`reply::Reply`] in the runtime's protocol
//! (`--protocol`). Guards fail closed (an event they cannot read blocks the call), the others
//! fail open (silent, exit 0).
//!
//! - `session-start` ([`session_start`]): where the project stands, and a daily update notice.
//! - `context-monitor` ([`context_monitor`]): tells the model to wrap up as the context fills.
//! - `statusline` ([`statusline`]): model, phase, directory and a context bar.
//! - `guard` ([`guard_env`], [`guard_write`], [`guard_worktree`], [`guard_injection`]): all
//!   four guards in one process; `guard-env` the `.env` guard alone (older installs call it).
//! - `config-reload` ([`config_reload`]): re-announces `.planning/config.json` when it changes.
//!
//! Global and local installs together: a runtime that merges user and project settings runs
//! both registrations. The global helper stays silent when the project has its own install of
//! the same core (same path under the project as under `$HOME`), so each hook runs once.
//!
//! Another runtime that runs this one's hooks (Cursor runs Claude Code's, the installer's
//! `hook_hosts` in `<core>/runtime.json`): inside it (its marker field in the payload) the helper
//! stays silent when that host has an msd helper of its own, which answers in its own protocol.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use msd_core::fs::fsx;
use msd_core::installed::runtime_info::{HostHelpers, RuntimeInfo};
use msd_core::installed::update_cache::{self, NoticeShown, UpdateCache};

pub(crate) mod allow_helper;
pub(crate) mod config_reload;
pub(crate) mod context_monitor;
pub(crate) mod event;
pub(crate) mod guard_env;
pub(crate) mod guard_injection;
pub(crate) mod guard_worktree;
pub(crate) mod guard_write;
pub(crate) mod reply;
pub(crate) mod session_start;
pub(crate) mod statusline;

use event::{Event, Malformed};
pub(crate) use reply::Protocol;
use reply::Reply;

/// The hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Hook {
    /// Say where the project stands (.planning/STATE.md) and, once a day, whether msd is stale.
    SessionStart,
    /// After a tool call: tell the model, once per threshold, that the context is running out.
    ContextMonitor,
    /// Print the status line: model, phase, directory, context usage.
    Statusline,
    /// Before a write: the .env, planning-shrink, worktree and prompt-injection guards.
    Guard,
    /// Before a write: the .env guard alone.
    GuardEnv,
    /// After .planning/config.json changes: re-announce it.
    ConfigReload,
}

impl Hook {
    /// The event name to answer with when the runtime sent none.
    fn default_event(self) -> &'static str {
        match self {
            Hook::SessionStart => "SessionStart",
            Hook::ContextMonitor => "PostToolUse",
            Hook::Statusline => "StatusLine",
            Hook::Guard | Hook::GuardEnv => "PreToolUse",
            Hook::ConfigReload => "FileChanged",
        }
    }

    fn guards(self) -> bool {
        matches!(self, Hook::Guard | Hook::GuardEnv)
    }
}

/// `msd_run hook` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct HookArgs {
    /// Which hook.
    #[arg(value_enum)]
    pub name: Hook,
    /// The runtime's hook protocol: how a block and added context are written.
    #[arg(long, value_enum, default_value = "claude")]
    pub protocol: Protocol,
    /// session-start: ask the runtime to watch .planning/config.json (Claude's `watchPaths`,
    /// which its FileChanged event then reports).
    #[arg(long)]
    pub watch_config: bool,
    /// session-start: answer once per session id, for a runtime whose start context goes on an
    /// event that fires on every prompt (Gemini's BeforeAgent: its SessionStart context is put in
    /// front of a headless prompt, which then is no slash command).
    #[arg(long)]
    pub once_per_session: bool,
    /// guard: answer `allow` when this shell tool's command runs this very helper and nothing
    /// else (a runtime whose settings cannot pre-approve one command: Copilot CLI). Repeatable.
    #[arg(long, value_name = "TOOL")]
    pub allow_helper: Vec<String>,
}

/// Runs a hook.
pub(crate) fn run(a: &HookArgs) -> ExitCode {
    let h = a.name;
    let text = read_stdin();
    let parsed = event::parse(&text);
    let name = parsed.as_ref().ok().and_then(|e| e.name.clone()).unwrap_or_else(|| h.default_event().to_string());
    let dirs = Dirs::from_env();
    if h == Hook::SessionStart
        && let Some(state) = dirs.state()
    {
        sweep_daily(state, std::time::SystemTime::now());
    }
    let started = (a.once_per_session && h == Hook::SessionStart)
        .then(|| parsed.as_ref().ok().and_then(|e| session_file(dirs.state(), "started", e.session.as_deref())))
        .flatten();
    let mut reply = match &started {
        Some(marker) if fsx::is_file(marker) => Reply::Pass,
        _ => decide(h, parsed.clone(), &dirs),
    };
    if let (Some(marker), Reply::Context(_)) = (&started, &reply) {
        write_json(marker, &now());
    }
    let cwd = parsed.as_ref().map(event_cwd).unwrap_or_default();
    // (`decide` stayed silent for the same reasons; asked again only where it matters.)
    let silent = || defers_to_local(&cwd) || parsed.as_ref().is_ok_and(|e| host_answers_here(e, &cwd));
    if h.guards()
        && reply == Reply::Pass
        && let Ok(e) = &parsed
        && helper_call(e, &a.allow_helper, &cwd)
        && !silent()
    {
        reply = Reply::Allow("msd: the installed msd helper (msd_run), allowed by msd-install".into());
    }
    if a.watch_config && h == Hook::SessionStart && !silent() {
        let project = project_dir(&cwd);
        let config = fsx::canonicalize(&project).unwrap_or(project).join(".planning/config.json");
        reply = reply::watching(reply, config.display().to_string());
    }
    let out = reply::render(&reply, a.protocol, &name);
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    ExitCode::from(out.code)
}

/// Whether `e` is a call of one of the shell `tools` whose command runs this very helper and
/// nothing else ([`allow_helper::runs_only`]).
fn helper_call(e: &Event, tools: &[String], cwd: &Path) -> bool {
    let (Some(tool), Some(command)) = (e.tool.as_deref(), e.input.get("command").and_then(|c| c.as_str())) else {
        return false;
    };
    tools.iter().any(|t| t == tool)
        && std::env::current_exe().is_ok_and(|exe| allow_helper::runs_only(command, cwd, &exe))
}

fn read_stdin() -> String {
    let mut stdin = std::io::stdin();
    // Room for a whole event at once (a statusline's is under 1 KiB, an edit's carries its
    // text): from empty, the string grew 32, 64, 128, ... bytes, a `read` each time.
    let mut s = String::with_capacity(16 * 1024);
    if stdin.is_terminal() || stdin.read_to_string(&mut s).is_err() {
        return String::new();
    }
    s
}

/// Where the hooks keep what outlives one call.
#[derive(Debug, Clone)]
pub(crate) struct Dirs {
    /// Where the per-session files go (the context bridge, what was told, an announcement
    /// waiting for the next tool call). What they hold goes back into the model's context, so
    /// the directory is used only once [`Dirs::state`] found it private.
    state_dir: PathBuf,
    /// Whether `state_dir` is this user's alone: checked (and the directory made) at the first
    /// hook that needs it, so a guard call touches nothing.
    private: std::cell::OnceCell<bool>,
    /// The update cache's directory, when there is a home.
    pub cache: Option<PathBuf>,
}

impl Dirs {
    /// Per-session files in `state_dir`, the update cache in `cache`.
    pub(crate) fn new(state_dir: PathBuf, cache: Option<PathBuf>) -> Dirs {
        Dirs { state_dir, private: std::cell::OnceCell::new(), cache }
    }

    /// The directories of this process's environment: the state in `<temp>/msd-hooks-<uid>`.
    pub(crate) fn from_env() -> Dirs {
        Dirs::new(fsx::per_user_temp_dir("msd-hooks"), update_cache::cache_dir_from_env())
    }

    /// The per-session files' directory, created with mode 700 or checked to be this user's
    /// alone; `None` for another user's, a shared one or a symlink (the hooks then answer from
    /// the event alone).
    fn state(&self) -> Option<&Path> {
        let private = *self.private.get_or_init(|| fsx::ensure_private_dir(&self.state_dir).is_ok());
        private.then_some(self.state_dir.as_path())
    }
}

/// The decision of hook `h` for an event (the shell's reads included).
pub(crate) fn decide(h: Hook, parsed: Result<Event, Malformed>, dirs: &Dirs) -> Reply {
    let e = match parsed {
        Ok(e) => e,
        Err(m) if h.guards() => {
            return Reply::Block(format!(
                "msd: the guard could not read the hook event ({m}), so it refuses the call; run it again, or ask the user."
            ));
        }
        Err(_) => return Reply::Pass,
    };
    let cwd = event_cwd(&e);
    let project = project_dir(&cwd);
    if h != Hook::Statusline && (defers_to_local(&cwd) || host_answers_here(&e, &cwd)) {
        return Reply::Pass;
    }
    match h {
        Hook::SessionStart => session_start(&project, dirs.cache.as_deref()).map_or(Reply::Pass, Reply::Context),
        Hook::ContextMonitor => context_monitor(&e, dirs.state()),
        Hook::Statusline => statusline(&e, &project, dirs.state()),
        Hook::Guard => guard(&e, &project, true),
        Hook::GuardEnv => guard(&e, &project, false),
        Hook::ConfigReload => config_reload(&e, &project, dirs.state()),
    }
}

fn event_cwd(e: &Event) -> PathBuf {
    e.cwd.as_deref().map(PathBuf::from).or_else(|| std::env::current_dir().ok()).unwrap_or_default()
}

/// The project a session in `cwd` works on: the nearest ancestor (itself included) holding
/// `.planning/`, as `msd_run` finds it, else `cwd` (a session opened in `proj/src` is `proj`'s).
fn project_dir(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|d| fsx::is_dir(&d.join(crate::project::PLANNING))).unwrap_or(cwd).to_path_buf()
}

/// Whether this helper is a global install and `cwd` or one of its ancestors has a local
/// install of the same core (the runtime loads that project's settings from a subdirectory).
/// The local helper's place is the installer's `local_helper` in `<core>/runtime.json` (a
/// global home need not mirror the local dir: `~/.config/opencode` against `.opencode`), else
/// the helper's own path under `$HOME` taken under the project ([`local_twin`]).
fn defers_to_local(cwd: &Path) -> bool {
    let (Some(exe), Some(home)) = (own_exe(), std::env::var_os("HOME").map(PathBuf::from)) else {
        return false;
    };
    let home = fsx::canonicalize(&home).unwrap_or(home);
    let cwd = fsx::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let info = own_info();
    let declared = (info.scope == "global").then_some(info.local_helper.as_deref()).flatten();
    cwd.ancestors()
        .take_while(|d| *d != home)
        .any(|d| local_copy(exe, &home, d, declared).is_some_and(|t| fsx::is_file(&t)))
}

/// This helper's own path, symlinks resolved, looked up once per process: the local-install
/// check and [`own_info`] each resolved it (a `readlink` per component of the path, and one of
/// `/proc/self/exe`).
fn own_exe() -> Option<&'static Path> {
    static EXE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| std::env::current_exe().ok().map(|e| fsx::canonicalize(&e).unwrap_or(e))).as_deref()
}

/// This helper's own `<core>/runtime.json` (its runtime's command syntax, `local_helper`,
/// `hook_hosts`), read once per process: several decisions of one hook call need it.
fn own_info() -> &'static RuntimeInfo {
    static INFO: std::sync::OnceLock<RuntimeInfo> = std::sync::OnceLock::new();
    INFO.get_or_init(|| {
        let core = own_exe().and_then(Path::parent).and_then(Path::parent);
        match core {
            Some(core) => crate::runtime_info(Some(core)),
            None => RuntimeInfo::fallback(),
        }
    })
}

/// Whether `e` comes from a runtime that runs this helper's runtime's hooks too and has an msd
/// helper of its own there to answer (the installer's `hook_hosts` of `<core>/runtime.json`).
fn host_answers_here(e: &Event, cwd: &Path) -> bool {
    let hosts = &own_info().hook_hosts;
    if hosts.is_empty() {
        return false;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cwd = fsx::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    host_answers(&e.fields, hosts, home.as_deref(), &cwd, |p| fsx::is_file(p) || fsx::is_file(&p.with_extension("exe")))
}

/// The decision of [`host_answers_here`]: a host whose `marker` is one of the payload's
/// `fields` has one of its `helpers` (`~/` under `home`, else under `cwd` or an ancestor).
pub(crate) fn host_answers(
    fields: &[String],
    hosts: &[HostHelpers],
    home: Option<&Path>,
    cwd: &Path,
    exists: impl Fn(&Path) -> bool,
) -> bool {
    hosts.iter().filter(|h| fields.contains(&h.marker)).any(|h| {
        h.helpers.iter().any(|rel| match rel.strip_prefix("~/") {
            Some(r) => home.is_some_and(|home| exists(&home.join(r))),
            None => cwd.ancestors().any(|d| exists(&d.join(rel))),
        })
    })
}

/// Where `project`'s local install of the helper `exe` (a global one under `home`) would be:
/// `declared` (the installer's `local_helper`, relative to the project) when known, else
/// [`local_twin`]; `None` when `exe` is not a global helper.
pub(crate) fn local_copy(exe: &Path, home: &Path, project: &Path, declared: Option<&str>) -> Option<PathBuf> {
    match declared {
        Some(rel) => (!exe.starts_with(project) && project != home).then(|| project.join(rel)).filter(|t| t != exe),
        None => local_twin(exe, home, project),
    }
}

/// The path `exe` (a helper under `home`) would have in `project`'s local install; `None` when
/// `exe` is not a global one (it is inside the project, or not under `home`).
pub(crate) fn local_twin(exe: &Path, home: &Path, project: &Path) -> Option<PathBuf> {
    if exe.starts_with(project) || project == home {
        return None;
    }
    let rel = exe.strip_prefix(home).ok()?;
    Some(project.join(rel)).filter(|t| t != exe)
}

/// `.planning/STATE.md`'s position and, when it is longer than what was read, its length: read
/// as every project file is (no symlink out of the project, no FIFO or device: the hook answers
/// at once), at most [`session_start::STATE_READ_MAX`] bytes. `None` when absent.
fn state_md(project: &Path) -> Result<Option<(session_start::Position, Option<u64>)>, crate::project::ProjectError> {
    let project = crate::project::Project { root: project.to_path_buf() };
    let Some((text, len)) = project.read_bounded(STATE_MD, session_start::STATE_READ_MAX)? else { return Ok(None) };
    let whole = (len > text.len() as u64).then_some(len);
    Ok(Some((session_start::position(&text), whole)))
}

/// `.planning/STATE.md`'s phase, plan and status alone (the status line's), read as
/// [`state_md`] reads it; the lines after the three are not looked at.
fn state_fields(project: &Path) -> Option<session_start::Position> {
    let project = crate::project::Project { root: project.to_path_buf() };
    let (text, _) = project.read_bounded(STATE_MD, session_start::STATE_READ_MAX).ok()??;
    Some(session_start::fields(&text))
}

/// The project's state file.
const STATE_MD: &str = ".planning/STATE.md";

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&fsx::read_if_exists(path).ok()??).ok()
}

/// Writes a hook's own file (a per-session file, the update notice's date): atomically (a
/// reader sees the old value or the new one), mode 600, its directory made when missing, and
/// not flushed to disk: each is a cache of something a power cut at worst makes the hook say
/// again (a warning, the start summary, the update notice) or leave out once (an announcement),
/// where an `fsync` on every status-line refresh cost the statusline its place under 3 ms
/// (docs/PERFORMANCE.md, issue 37).
fn write_json<T: serde::Serialize>(path: &Path, v: &T) {
    if let Ok(bytes) = serde_json::to_vec(v) {
        let _ = fsx::write_atomic_unsynced(path, &bytes);
    }
}

fn session_start(project: &Path, cache_dir: Option<&Path>) -> Option<String> {
    // The next command in this runtime's own syntax (`command_ref` of `<core>/runtime.json`).
    let summary = match state_md(project) {
        Ok(read) => read.and_then(|(p, whole)| session_start::summary(&p, whole, |stem| own_info().command(stem))),
        // Said, not hidden: the model then knows why it has no position (and no content of it).
        Err(e) => Some(format!("msd: {e}; STATE.md was not read.")),
    };
    let notice = cache_dir.and_then(|dir| {
        let cache: Option<UpdateCache> = read_json(&dir.join(update_cache::CACHE_FILE));
        let last: Option<NoticeShown> = read_json(&dir.join(update_cache::NOTICE_FILE));
        let now = now();
        let n = session_start::update_notice(env!("CARGO_PKG_VERSION"), cache.as_ref(), last, now)?;
        write_json(&dir.join(update_cache::NOTICE_FILE), &NoticeShown { shown: now });
        Some(n)
    });
    match (summary, notice) {
        (None, None) => None,
        (s, n) => Some([s, n].into_iter().flatten().collect::<Vec<_>>().join("\n")),
    }
}

/// A per-session file of the hooks (the context bridge, what was told) in `state`.
/// The kinds of per-session files the hooks keep in the state directory.
const SESSION_FILES: [&str; 4] = ["started", "announce", "context", "warned"];

/// How long a per-session file is kept after its last write: sessions do not last a week.
const SESSION_FILE_DAYS: u64 = 7;

/// The stamp of the last [`sweep`] in the state directory (its modification time). Not a
/// `.json` file: the sweep never takes it for a session's.
pub(crate) const SWEPT_STAMP: &str = "swept";

/// How often the state directory is swept: at the first session start of a day, not at every
/// one (the sweep lists the directory and looks at every file in it; a week of sessions leaves
/// hundreds).
const SWEEP_EVERY_SECS: u64 = 86_400;

/// [`sweep`] at a session start when the last one was a day or more before `now` (or never ran,
/// or its stamp is in the future: a clock set back), then the stamp set to now.
pub(crate) fn sweep_daily(state: &Path, now: std::time::SystemTime) {
    let stamp = state.join(SWEPT_STAMP);
    let every = std::time::Duration::from_secs(SWEEP_EVERY_SECS);
    let recent = fsx::modified(&stamp).ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|age| age < every);
    if recent {
        return;
    }
    sweep(state, now);
    let _ = fsx::write_atomic_unsynced(&stamp, b"");
}

/// Removes the per-session files of `state` last written more than [`SESSION_FILE_DAYS`]
/// before `now` (only ours: `<kind>-<id>.json` regular files). Best effort; run at a session
/// start, once a day ([`sweep_daily`]).
pub(crate) fn sweep(state: &Path, now: std::time::SystemTime) {
    let Ok(entries) = fsx::list_dir(state) else { return };
    let max_age = std::time::Duration::from_secs(SESSION_FILE_DAYS * 86_400);
    for e in entries.iter().filter(|e| e.is_file && e.name.ends_with(".json")) {
        let ours = SESSION_FILES.iter().any(|k| e.name.strip_prefix(k).is_some_and(|r| r.starts_with('-')));
        let path = state.join(&e.os_name);
        let old = fsx::modified(&path).ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|age| age > max_age);
        if ours && old {
            let _ = fsx::remove_file_if_exists(&path);
        }
    }
}

fn session_file(state: Option<&Path>, kind: &str, session: Option<&str>) -> Option<PathBuf> {
    debug_assert!(SESSION_FILES.contains(&kind), "a per-session file the sweep knows: {kind}");
    let state = state?;
    let id: String =
        session?.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(80).collect();
    (!id.is_empty()).then(|| state.join(format!("{kind}-{id}.json")))
}

fn context_monitor(e: &Event, state: Option<&Path>) -> Reply {
    let announce = session_file(state, "announce", e.session.as_deref())
        .and_then(|p| read_json::<String>(&p).inspect(|_| drop(fsx::remove_file_if_exists(&p))));
    let warning = context_warning(e, state);
    match [announce, warning].into_iter().flatten().collect::<Vec<_>>() {
        v if v.is_empty() => Reply::Pass,
        v => Reply::Context(v.join("\n")),
    }
}

fn context_warning(e: &Event, state: Option<&Path>) -> Option<String> {
    let bridge = session_file(state, "context", e.session.as_deref());
    let used = e.used_pct.or_else(|| read_json::<context_monitor::Bridge>(bridge.as_ref()?).map(|b| b.used_pct));
    let warned_path = session_file(state, "warned", e.session.as_deref());
    let warned: context_monitor::Warned = warned_path.as_deref().and_then(read_json).unwrap_or_default();
    let pause = own_info().command("pause-work");
    let (level, msg) = context_monitor::decide(used?, &warned, &pause)?;
    if let Some(p) = &warned_path {
        let mut w = warned;
        w.levels.push(level);
        write_json(p, &w);
    }
    Some(msg)
}

/// A FileChanged event's output reaches no model (Claude's takes only `watchPaths`:
/// `@anthropic-ai/claude-code@2.1.332:claude@331065660`), so the announcement waits in the
/// session's state for the next `context-monitor` call (after the next tool call).
fn config_reload(e: &Event, project: &Path, state: Option<&Path>) -> Reply {
    let changed = e.changed.as_deref().unwrap_or_default();
    if !config_reload::watched(changed) {
        return Reply::Pass;
    }
    // The project's own config, read as every project file is (no link out, no FIFO), bounded.
    let project = crate::project::Project { root: project.to_path_buf() };
    let text = project.read_bounded(crate::config::CONFIG, config_reload::READ_MAX).ok().flatten();
    let text = text.filter(|(t, len)| t.len() as u64 == *len).map(|(t, _)| t);
    let Some(msg) = config_reload::decide(changed, text.as_deref()) else { return Reply::Pass };
    match session_file(state, "announce", e.session.as_deref()) {
        Some(p) => {
            write_json(&p, &msg);
            Reply::Pass
        }
        None => Reply::Context(msg),
    }
}

fn statusline(e: &Event, project: &Path, state: Option<&Path>) -> Reply {
    // The bridge is written when the usage changed: a runtime refreshes its status line far
    // more often than the usage moves, and a read is cheaper than a new file and a rename.
    if let (Some(used), Some(p)) = (e.used_pct, session_file(state, "context", e.session.as_deref()))
        && read_json::<context_monitor::Bridge>(&p).is_none_or(|b| b.used_pct != used)
    {
        write_json(&p, &context_monitor::Bridge { used_pct: used });
    }
    let pos = state_fields(project).unwrap_or_default();
    let dir = project.to_str().filter(|d| !d.is_empty());
    Reply::Status(statusline::render(e.model.as_deref(), &pos, dir, e.used_pct))
}

/// The file a path names, through symlinks: the whole path when it exists, else its parent
/// resolved and the name appended.
fn resolve(abs: &Path) -> PathBuf {
    if let Ok(r) = fsx::canonicalize(abs) {
        return r;
    }
    match (abs.parent().and_then(|d| fsx::canonicalize(d).ok()), abs.file_name()) {
        (Some(d), Some(n)) => d.join(n),
        _ => guard_worktree::normalize(abs),
    }
}

/// The worktree root when `project` lies in a linked git worktree.
fn worktree_root(project: &Path) -> Option<PathBuf> {
    let mut dir = Some(project);
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        // (Most directories on the way up have no `.git`: one look at those, not two.)
        if !fsx::exists(&dot_git) {
            dir = d.parent();
            continue;
        }
        if fsx::is_dir(&dot_git) {
            return None;
        }
        if fsx::is_file(&dot_git) {
            // (A `.git` file is one line; the bounded, non-blocking read cannot hang the guard.)
            let read = fsx::read_regular_if_exists(&dot_git, 4096).ok()??;
            let text = String::from_utf8_lossy(&read.bytes);
            return guard_worktree::is_worktree_link(&text).then(|| d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// The path from its last `.planning` component on (`.planning/STATE.md`), whichever project
/// it lies in (a runtime that sends no working directory still names the file).
pub(crate) fn planning_rel(path: &Path) -> Option<String> {
    let parts: Vec<&str> = path.iter().filter_map(|c| c.to_str()).collect();
    let i = parts.iter().rposition(|c| *c == ".planning")?;
    Some(parts[i..].join("/"))
}

fn guard(e: &Event, project: &Path, all: bool) -> Reply {
    e.targets()
        .into_iter()
        .map(|named| guard_one(e, named, project, all))
        .find(|r| *r != Reply::Pass)
        .unwrap_or(Reply::Pass)
}

/// The guards of `e` for one file it writes (or reads), `named` as the tool names it.
fn guard_one(e: &Event, named: &str, project: &Path, all: bool) -> Reply {
    let abs = guard_worktree::normalize(&project.join(named));
    let resolved = resolve(&abs);
    let first = guard_env::decide(named, Some(&resolved), e.reads_only());
    if !all || first != Reply::Pass || e.reads_only() {
        return first;
    }
    let root = fsx::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let rel = planning_rel(&resolved);
    // One stat, never a read: a FIFO or a device there would hang the guard until the runtime
    // gives up on it and lets the write through. The guard fails closed on one instead.
    // Only `.planning/` targets are looked at (the planning guards' files).
    let old = match rel.as_deref().map(|_| fsx::regular_file_len(&resolved)) {
        Some(Ok(len)) => Some(len as usize),
        Some(Err(err)) if err.kind() == std::io::ErrorKind::InvalidInput => {
            return guard_write::not_a_file(rel.as_deref(), &fsx::file_kind(&resolved));
        }
        _ => None,
    };
    if let Some(new) = e.whole_file() {
        let r = guard_write::decide(rel.as_deref(), old, new.len());
        if r != Reply::Pass {
            return r;
        }
    }
    let r = guard_injection::decide(rel.as_deref(), &e.written_texts());
    if r != Reply::Pass {
        return r;
    }
    let wt = worktree_root(&root);
    guard_worktree::decide(wt.as_deref(), &resolved)
}

#[cfg(test)]
mod tests;
