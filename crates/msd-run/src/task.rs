//! `msd_run task resolve-content --plan <PLAN.md> --task-id <id> [--raw]`: the `execute:task`
//! seam of ADR-3646 (SPEC section 11). execute-plan calls it once per task, before the
//! `read_first` gate, and halts the task on any non-zero exit.
//!
//! Outcomes:
//!
//! | situation | exit | stdout |
//! |---|---|---|
//! | the task has no `tracker-id`, is a checkpoint, or no resolver is registered for its prefix | 0 | `{"resolved": false}` |
//! | the resolver answered with a non-empty `description` | 0 | `{"resolved": true, "content": {...}}` |
//! | the resolver answered with an empty or absent `description` | 0 | `{"resolved": false, "reason": "empty"}` |
//! | the resolver could not start or exited non-zero | 6 | nothing; stderr names the task, tracker, tracker id and raw error |
//! | the resolver ran past its `timeout_ms`, or a child it left behind held its output open (the whole process group is killed) | 7 | same |
//! | the resolver's stdout is not the reply JSON, or it wrote more than 4 MiB of stdout or 256 KiB of stderr (it is killed) | 8 | same, with its stdout |
//! | the tracker id starts with `-` (it would read as an option of the resolver) | 4 | nothing; stderr names the task |
//!
//! The reply is one JSON object with `description` (string), `verify` (string),
//! `acceptance_criteria` (strings), `read_first` (strings) and `done` (string), all optional;
//! any other key or type is malformed. `content` repeats the fields the tracker gave, and only
//! those: an omitted field keeps its PLAN.md value. Stderr on success is not an error.
//!
//! Resolvers come from `<core>/resolvers.json`, which the installer always writes; a missing
//! file is a damaged install (exit 3), never "no resolver".

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use clap::Subcommand;
use serde::Deserialize;
use serde_json::{Value, json};
use wait_timeout::ChildExt;

use super::error::{ResolverContext, ResolverError, ResolverFailure};
use super::{Answer, RunError, core_dir, read_core};
use crate::project::ProjectError;
use msd_core::manifest::resolver::{ID_PLACEHOLDER, INSTALLED_PATH, Installed, Resolver};
use msd_core::markup::markers::{fence_closes, fence_opener};

/// Task subcommands.
#[derive(Debug, Subcommand)]
pub enum Task {
    /// Fetch a task's content from the external tracker its `tracker-id` names.
    ResolveContent(ResolveArgs),
}

/// `task resolve-content` options.
#[derive(Debug, Clone, clap::Args)]
pub struct ResolveArgs {
    /// The plan file holding the task.
    #[arg(long, value_name = "PLAN.md")]
    pub plan: PathBuf,
    /// The task's `id` attribute (`03-01-T1`).
    #[arg(long, value_name = "ID")]
    pub task_id: String,
    /// Print the answer as one line of JSON.
    #[arg(long)]
    pub raw: bool,
}

/// Runs a task subcommand.
pub(crate) fn run(core: Option<&Path>, t: &Task) -> Result<Answer, RunError> {
    match t {
        Task::ResolveContent(a) => {
            let core = core_dir(core)?;
            let answer = resolve(&core, a)?;
            Ok(Answer::json(&answer, a.raw))
        }
    }
}

/// A `<task ...>` element of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaskTag {
    /// 1-based line of `<task`.
    pub line: usize,
    /// Attributes in order.
    pub attrs: Vec<(String, String)>,
}

impl TaskTag {
    /// An attribute's value.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Every `<task ...>` opening tag outside fenced code blocks, in order. Tags whose attributes do
/// not parse are skipped.
pub(crate) fn tasks(text: &str) -> Vec<TaskTag> {
    let mut visible = String::with_capacity(text.len());
    let mut fence = None;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let hidden = match fence {
            Some(f) => {
                if fence_closes(line, f) {
                    fence = None;
                }
                true
            }
            None => match fence_opener(line) {
                Some(f) => {
                    fence = Some(f);
                    true
                }
                None => false,
            },
        };
        if hidden {
            visible.extend(raw.chars().filter(|c| *c == '\n'));
        } else {
            visible.push_str(raw);
        }
    }
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = visible[from..].find("<task") {
        let start = from + i;
        from = start + 5;
        let rest = &visible[from..];
        if !rest.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/') {
            continue;
        }
        if let Some(attrs) = attributes(rest) {
            out.push(TaskTag { line: visible[..start].matches('\n').count() + 1, attrs });
        }
    }
    out
}

fn attributes(mut s: &str) -> Option<Vec<(String, String)>> {
    let mut attrs = Vec::new();
    loop {
        s = s.trim_start();
        if s.starts_with('>') || s.starts_with("/>") {
            return Some(attrs);
        }
        let name_len = s
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
            .map_or(s.len(), |(i, _)| i);
        if name_len == 0 {
            return None;
        }
        let name = &s[..name_len];
        s = s[name_len..].trim_start().strip_prefix('=')?.trim_start();
        let quote = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let end = s[1..].find(quote)?;
        attrs.push((name.to_string(), s[1..1 + end].to_string()));
        s = &s[end + 2..];
    }
}

/// The tracker's reply.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reply {
    description: Option<String>,
    verify: Option<String>,
    acceptance_criteria: Option<Vec<String>>,
    read_first: Option<Vec<String>>,
    done: Option<String>,
}

fn project_err(path: &Path, line: Option<usize>, message: String, hint: &str) -> RunError {
    RunError::Project(ProjectError { path: path.display().to_string(), line, message, hint: hint.to_string() })
}

/// Resolves one task, returning the stdout answer.
pub(crate) fn resolve(core: &Path, a: &ResolveArgs) -> Result<Value, RunError> {
    let text = match crate::read_named(&a.plan) {
        Ok(Some(b)) => String::from_utf8(b)
            .map_err(|_| project_err(&a.plan, None, "not valid UTF-8".into(), "save the plan as UTF-8"))?,
        Ok(None) => {
            return Err(project_err(
                &a.plan,
                None,
                "no such plan file".into(),
                "pass the path of the PLAN.md being executed",
            ));
        }
        Err(e) => return Err(e),
    };
    let all = tasks(&text);
    let matching: Vec<&TaskTag> = all.iter().filter(|t| t.get("id") == Some(a.task_id.as_str())).collect();
    let task = match matching.as_slice() {
        [t] => *t,
        [] => {
            return Err(project_err(
                &a.plan,
                None,
                format!("no <task> with id=\"{}\"", a.task_id),
                "pass the id attribute of one of the plan's <task> elements",
            ));
        }
        [_, second, ..] => {
            return Err(project_err(
                &a.plan,
                Some(second.line),
                format!("two <task> elements have id=\"{}\"", a.task_id),
                "give every task of the plan its own id",
            ));
        }
    };
    let Some(tracker_id) = task.get("tracker-id") else { return Ok(json!({"resolved": false})) };
    if task.get("type").is_some_and(|t| t.starts_with("checkpoint")) {
        eprintln!("note: task {} is a checkpoint; checkpoints always use the PLAN.md text", a.task_id);
        return Ok(json!({"resolved": false}));
    }
    let (tracker, id) =
        tracker_id.split_once(':').filter(|(p, i)| !p.is_empty() && !i.is_empty()).ok_or_else(|| {
            project_err(
                &a.plan,
                Some(task.line),
                format!("task {}: tracker-id \"{tracker_id}\" is not <prefix>:<id>", a.task_id),
                "write the tracker id as tracker-id=\"LIN:ENG-142\"",
            )
        })?;
    let installed_text = read_core(core, INSTALLED_PATH)?.ok_or_else(|| RunError::Core {
        path: core.join(INSTALLED_PATH).display().to_string(),
        message: "the installed resolver list is missing".into(),
        hint: "reinstall msd-core with msd-install (every install writes resolvers.json)".into(),
    })?;
    let installed: Installed = serde_json::from_str(&installed_text).map_err(|e| RunError::Core {
        path: core.join(INSTALLED_PATH).display().to_string(),
        message: format!("the installed resolver list is damaged: {e}"),
        hint: "reinstall msd-core with msd-install".into(),
    })?;
    if id.starts_with('-') {
        return Err(project_err(
            &a.plan,
            Some(task.line),
            format!(
                "task {}: tracker id \"{id}\" starts with `-`, which the resolver would read as an option",
                a.task_id
            ),
            "write the tracker's own id (tracker-id=\"LIN:ENG-142\")",
        ));
    }
    let Some(resolver) = installed.find(tracker) else {
        eprintln!("note: no resolver is registered for tracker `{tracker}`; task {} uses the PLAN.md text", a.task_id);
        return Ok(json!({"resolved": false}));
    };
    let ctx = ResolverContext {
        task_id: a.task_id.clone(),
        tracker: tracker.to_string(),
        tracker_id: tracker_id.to_string(),
    };
    let stdout = invoke(resolver, id, &ctx)?;
    let reply: Reply = serde_json::from_slice(&stdout.stdout).map_err(|e| {
        fail(&ctx, ResolverFailure::Malformed { error: e.to_string(), stdout: excerpt(&stdout.stdout) }, &stdout.stderr)
    })?;
    if reply.description.as_deref().is_none_or(|d| d.trim().is_empty()) {
        return Ok(json!({"resolved": false, "reason": "empty"}));
    }
    let mut content = serde_json::Map::new();
    content.insert("description".into(), json!(reply.description));
    let fields = [
        ("verify", reply.verify.map(Value::from)),
        ("acceptance_criteria", reply.acceptance_criteria.map(Value::from)),
        ("read_first", reply.read_first.map(Value::from)),
        ("done", reply.done.map(Value::from)),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            content.insert(k.into(), v);
        }
    }
    Ok(json!({"resolved": true, "content": content}))
}

fn fail(ctx: &ResolverContext, failure: ResolverFailure, stderr: &[u8]) -> RunError {
    RunError::Resolver(Box::new(ResolverError {
        ctx: ctx.clone(),
        failure,
        stderr: String::from_utf8_lossy(stderr).into_owned(),
    }))
}

fn excerpt(b: &[u8]) -> String {
    const MAX: usize = 4000;
    let s = String::from_utf8_lossy(b);
    if s.len() <= MAX {
        return s.into_owned();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[... {} more bytes]", &s[..end], s.len() - end)
}

struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn program(binary: &str) -> PathBuf {
    match (binary.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(binary),
    }
}

/// The most a resolver's reply may hold: a tracker issue is text, far below this.
const STDOUT_CAP: u64 = 4 << 20;
/// The most of a resolver's stderr kept.
const STDERR_CAP: u64 = 256 << 10;

/// Runs the resolver with `{{id}}` replaced, in the current directory, within its timeout.
fn invoke(r: &Resolver, id: &str, ctx: &ResolverContext) -> Result<Output, RunError> {
    let mut cmd = Command::new(program(&r.invoke.binary));
    cmd.args(r.invoke.args.iter().map(|a| a.replace(ID_PLACEHOLDER, id)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so a timeout kills whatever the resolver started too.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| {
        fail(ctx, ResolverFailure::Failed { status: format!("could not start `{}`: {e}", r.invoke.binary) }, b"")
    })?;
    let out_pipe = child.stdout.take().expect("piped");
    let err_pipe = child.stderr.take().expect("piped");
    // Each pipe is read by its own thread, at most its cap (and one byte to tell it went past),
    // and reports on a channel: the deadline bounds the readers too, since a child the resolver
    // left in the background can hold a pipe open after the resolver itself has exited.
    let (tx, rx) = std::sync::mpsc::channel::<(bool, Vec<u8>)>();
    for (is_out, pipe, cap) in [
        (true, Box::new(out_pipe) as Box<dyn Read + Send>, STDOUT_CAP),
        (false, Box::new(err_pipe) as Box<dyn Read + Send>, STDERR_CAP),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = pipe.take(cap + 1).read_to_end(&mut b);
            let _ = tx.send((is_out, b));
        });
    }
    drop(tx);
    let timeout = Duration::from_millis(r.invoke.timeout_ms);
    let deadline = std::time::Instant::now() + timeout;
    let (mut stdout, mut stderr) = (None::<Vec<u8>>, None::<Vec<u8>>);
    let mut status = None;
    let mut over = false;
    while status.is_none() || stdout.is_none() || stderr.is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        if stdout.is_none() || stderr.is_none() {
            match rx.recv_timeout(left.min(Duration::from_millis(20))) {
                Ok((is_out, b)) => {
                    over |= b.len() as u64 > if is_out { STDOUT_CAP } else { STDERR_CAP };
                    if is_out {
                        stdout = Some(b)
                    } else {
                        stderr = Some(b)
                    }
                    if over {
                        break;
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {}
            }
        }
        if status.is_none() {
            let wait = if stdout.is_some() && stderr.is_some() { left } else { Duration::ZERO };
            status = child.wait_timeout(wait).map_err(|e| {
                fail(
                    ctx,
                    ResolverFailure::Failed { status: format!("waiting for `{}` failed: {e}", r.invoke.binary) },
                    b"",
                )
            })?;
        }
    }
    if over || status.is_none() || stdout.is_none() || stderr.is_none() {
        // Past the deadline or the cap: the whole group goes, resolver and whatever it started.
        kill_group(&mut child);
        let _ = child.wait();
        let stderr = stderr.unwrap_or_default();
        if over {
            let out = stdout.unwrap_or_default();
            return Err(fail(
                ctx,
                ResolverFailure::Malformed {
                    error: format!(
                        "the resolver wrote more than its cap ({STDOUT_CAP} bytes of stdout, {STDERR_CAP} of stderr) and was killed"
                    ),
                    stdout: excerpt(&out[..out.len().min(STDOUT_CAP as usize)]),
                },
                &stderr[..stderr.len().min(STDERR_CAP as usize)],
            ));
        }
        return Err(fail(ctx, ResolverFailure::Timeout { timeout_ms: r.invoke.timeout_ms }, &stderr));
    }
    let (status, stdout, stderr) = (status.expect("checked"), stdout.expect("checked"), stderr.expect("checked"));
    if !status.success() {
        let status = match status.code() {
            Some(c) => format!("`{}` exited with status {c}", r.invoke.binary),
            None => format!("`{}` was killed by a signal", r.invoke.binary),
        };
        return Err(fail(ctx, ResolverFailure::Failed { status }, &stderr));
    }
    Ok(Output { stdout, stderr })
}

#[cfg(unix)]
fn kill_group(child: &mut std::process::Child) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: kill(2) with a negative pid signals the process group the child leads (it was
    // spawned with process_group(0)); it touches no memory of ours.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(child: &mut std::process::Child) {
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_tags_outside_fences_with_their_attributes() {
        let plan = "<tasks>\n<task type=\"auto\" id=\"03-01-T1\" tracker-id=\"LIN:ENG-142\">\n  <name>x</name>\n</task>\n```xml\n<task id=\"03-01-T1\">\n```\n<task\n  type='checkpoint:decision'\n  id=\"03-01-T2\">\n<task id=broken>\n</tasks>\n";
        let t = tasks(plan);
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!((t[0].line, t[0].get("tracker-id")), (2, Some("LIN:ENG-142")));
        assert_eq!((t[1].line, t[1].get("type"), t[1].get("id")), (8, Some("checkpoint:decision"), Some("03-01-T2")));
    }
}
