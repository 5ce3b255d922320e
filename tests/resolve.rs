//! `msd_run task resolve-content` (ADR-3646, SPEC section 11) with a real tracker stand-in
//! (`tests/fixtures/tracker/fake-tracker.sh`): the four outcomes, timeout and malformed replies
//! as failures naming the task, the tracker and the raw error; and the install-time validation of
//! resolver declarations.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Install, Ran, World, copy_tree, fixture, json, repo};

fn tracker() -> String {
    fixture("tracker").join("fake-tracker.sh").display().to_string()
}

/// The resolvers used by most tests: FAKE answers within 20 s, SLOW must answer within 300 ms.
fn resolvers() -> Value {
    json!([
        {"kind": "resolver", "tracker_prefix": "FAKE",
         "invoke": {"binary": tracker(), "args": ["show", "{{id}}"], "timeout_ms": 20000}},
        {"kind": "resolver", "tracker_prefix": "SLOW",
         "invoke": {"binary": tracker(), "args": ["show", "{{id}}"], "timeout_ms": 300}},
    ])
}

/// `(runtime id, manifest key, value)`: one key set in one shipped manifest.
type Patch = (&'static str, &'static str, Value);

/// A runtimes tree whose manifests get `extra` merged in, by runtime id.
fn runtimes(w: &World, extra: &[Patch]) -> PathBuf {
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    for (id, key, value) in extra {
        let path = dir.join(id).join("capability.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        m[*key] = value.clone();
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    }
    dir
}

fn install<'w>(w: &'w World, runtimes: &Path) -> Ran<'w> {
    Install::in_world(w).arg("--runtimes").arg(runtimes).content(fixture("seams")).run()
}

const PLAN: &str = r#"---
phase: 01-setup
plan: 01
---
<objective>Fixture plan.</objective>
<tasks>
<task type="auto" id="01-01-T1">
  <name>No tracker</name>
  <action>inline</action>
</task>
<task type="auto" id="01-01-T2" tracker-id="FAKE:full"><name>x</name></task>
<task type="auto" id="01-01-T3" tracker-id="FAKE:empty"><name>x</name></task>
<task type="auto" id="01-01-T4" tracker-id="FAKE:absent"><name>x</name></task>
<task type="auto" id="01-01-T5" tracker-id="FAKE:missing"><name>x</name></task>
<task type="auto" id="01-01-T6" tracker-id="SLOW:slow"><name>x</name></task>
<task type="auto" id="01-01-T7" tracker-id="FAKE:garbage"><name>x</name></task>
<task type="auto" id="01-01-T8" tracker-id="OTHER:1"><name>x</name></task>
<task type="checkpoint:human-verify" id="01-01-T9" tracker-id="FAKE:full"><name>x</name></task>
<task type="auto" id="01-01-T10" tracker-id="FAKE:typo"><name>x</name></task>
<task type="auto" id="01-01-T11" tracker-id="FAKE:partial"><name>x</name></task>
<task type="auto" id="01-01-T12" tracker-id="nocolon"><name>x</name></task>
<task type="auto" id="01-01-T13" tracker-id="SLOW:background"><name>x</name></task>
<task type="auto" id="01-01-T14" tracker-id="FAKE:flood"><name>x</name></task>
<task type="auto" id="01-01-T15" tracker-id="FAKE:--help"><name>x</name></task>
</tasks>
"#;

/// Installs with `resolvers` on claude, writes the plan, and returns a runner for task ids.
fn world(resolvers: Option<Value>) -> (World, PathBuf) {
    let w = World::new();
    let extra: Vec<Patch> = resolvers.into_iter().map(|r| ("claude", "resolvers", r)).collect();
    let dir = runtimes(&w, &extra);
    install(&w, &dir).success();
    std::fs::create_dir_all(w.project.join(".planning/phases/01-setup")).unwrap();
    std::fs::write(w.project.join(".planning/phases/01-setup/01-01-PLAN.md"), PLAN).unwrap();
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    (w, helper)
}

fn resolve(w: &World, helper: &Path, task: &str) -> Output {
    std::process::Command::new(helper)
        .args([
            "task",
            "resolve-content",
            "--plan",
            ".planning/phases/01-setup/01-01-PLAN.md",
            "--task-id",
            task,
            "--raw",
        ])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap()
}

fn answer(w: &World, helper: &Path, task: &str) -> Value {
    let out = resolve(w, helper, task);
    assert_eq!(out.status.code(), Some(0), "{task}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(stdout.trim_end().lines().count(), 1, "--raw prints one line: {stdout}");
    json(&out)
}

fn failure(w: &World, helper: &Path, task: &str, code: i32) -> String {
    let out = resolve(w, helper, task);
    assert_eq!(out.status.code(), Some(code), "{task}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "a failure prints no answer");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn resolve_without_resolvers_is_resolved_false() {
    let (w, helper) = world(None);
    let installed: Value =
        serde_json::from_slice(&std::fs::read(w.home.join(".claude/msd-core/resolvers.json")).unwrap()).unwrap();
    assert_eq!(installed["resolvers"], json!([]), "every install writes the list, empty or not");
    assert_eq!(answer(&w, &helper, "01-01-T2"), json!({"resolved": false}));
    assert_eq!(answer(&w, &helper, "01-01-T1"), json!({"resolved": false}));
}

#[test]
fn resolve_content_empty_and_fallback_outcomes() {
    let (w, helper) = world(Some(resolvers()));
    // Content: every field the tracker gave, and only those.
    assert_eq!(
        answer(&w, &helper, "01-01-T2"),
        json!({"resolved": true, "content": {
            "description": "Create the session store (from the tracker)",
            "verify": "npm test -- session",
            "acceptance_criteria": ["session.ts exports createSession", "tests pass"],
            "read_first": ["src/db/schema.ts"],
            "done": "sessions persist"}})
    );
    assert_eq!(
        answer(&w, &helper, "01-01-T11"),
        json!({"resolved": true, "content": {"description": "Only the action comes from the tracker"}})
    );
    // Empty: a blank or absent description is the pre-migration fallback.
    assert_eq!(answer(&w, &helper, "01-01-T3"), json!({"resolved": false, "reason": "empty"}));
    assert_eq!(answer(&w, &helper, "01-01-T4"), json!({"resolved": false, "reason": "empty"}));
    // No resolver applies: no tracker-id, a prefix nobody registered, a checkpoint task.
    assert_eq!(answer(&w, &helper, "01-01-T1"), json!({"resolved": false}));
    assert_eq!(answer(&w, &helper, "01-01-T8"), json!({"resolved": false}));
    assert_eq!(answer(&w, &helper, "01-01-T9"), json!({"resolved": false}));
    // Without --raw the same answer is pretty-printed.
    let out = std::process::Command::new(&helper)
        .args(["task", "resolve-content", "--plan", ".planning/phases/01-setup/01-01-PLAN.md", "--task-id", "01-01-T3"])
        .current_dir(&w.project)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() > 1);
}

#[test]
fn resolve_tracker_failure_halts_naming_id_tracker_and_raw_error() {
    let (w, helper) = world(Some(resolvers()));
    let err = failure(&w, &helper, "01-01-T5", 6);
    for needle in ["task 01-01-T5", "tracker `FAKE`", "FAKE:missing", "exited with status 3"] {
        assert!(err.contains(needle), "lacks {needle}: {err}");
    }
    assert!(err.contains("fake-tracker: issue missing not found (HTTP 404)\n"), "the raw error, verbatim: {err}");
    assert!(err.contains("never fall back to the PLAN.md text"), "{err}");
}

#[test]
fn resolve_timeout_is_a_failure() {
    let (w, helper) = world(Some(resolvers()));
    let err = failure(&w, &helper, "01-01-T6", 7);
    for needle in ["task 01-01-T6", "tracker `SLOW`", "SLOW:slow", "within 300 ms"] {
        assert!(err.contains(needle), "lacks {needle}: {err}");
    }
}

/// Issue 15, item 9: the timeout bounds the whole process group and the output readers (a child
/// the resolver backgrounded holds stdout open), what is read is capped, and a tracker id that
/// starts with `-` never reaches the resolver as an option.
#[test]
fn resolve_is_bounded_in_time_and_memory() {
    let (w, helper) = world(Some(resolvers()));
    let t0 = std::time::Instant::now();
    let err = failure(&w, &helper, "01-01-T13", 7);
    assert!(t0.elapsed() < std::time::Duration::from_secs(10), "took {:?}: {err}", t0.elapsed());
    assert!(err.contains("within 300 ms"), "{err}");
    let err = failure(&w, &helper, "01-01-T14", 8);
    assert!(err.contains("more than its cap"), "{}", &err[..err.len().min(600)]);
    let err = failure(&w, &helper, "01-01-T15", 4);
    assert!(err.contains("starts with `-`"), "{err}");
}

#[test]
fn resolve_malformed_reply_is_a_failure() {
    let (w, helper) = world(Some(resolvers()));
    let err = failure(&w, &helper, "01-01-T7", 8);
    for needle in
        ["task 01-01-T7", "tracker `FAKE`", "FAKE:garbage", "malformed", "resolver stdout:\nthis is not json\n"]
    {
        assert!(err.contains(needle), "lacks {needle}: {err}");
    }
    let err = failure(&w, &helper, "01-01-T10", 8);
    assert!(err.contains("unknown field `descripton`"), "a misspelt field is not silently dropped: {err}");
}

#[test]
fn resolve_plan_and_binary_problems_have_their_own_codes() {
    let broken = json!([{"kind": "resolver", "tracker_prefix": "FAKE",
        "invoke": {"binary": "/nonexistent/tracker", "args": ["{{id}}"], "timeout_ms": 1000}}]);
    let (w, helper) = world(Some(broken));
    let err = failure(&w, &helper, "01-01-T2", 6);
    assert!(err.contains("could not start `/nonexistent/tracker`"), "{err}");
    let err = failure(&w, &helper, "01-01-T99", 4);
    assert!(err.contains("no <task> with id=\"01-01-T99\""), "{err}");
    let err = failure(&w, &helper, "01-01-T12", 4);
    assert!(err.contains("is not <prefix>:<id>"), "{err}");
    let out = std::process::Command::new(&helper)
        .args(["task", "resolve-content", "--plan", "missing.md", "--task-id", "x"])
        .current_dir(&w.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    // A damaged install (resolvers.json gone) is exit 3, never "no resolver".
    std::fs::remove_file(w.home.join(".claude/msd-core/resolvers.json")).unwrap();
    failure(&w, &helper, "01-01-T2", 3);
}

#[test]
fn resolve_validator_rejects_bad_declarations_at_install() {
    let w = World::new();
    let ok = |prefix: &str| {
        json!({"kind": "resolver", "tracker_prefix": prefix,
               "invoke": {"binary": "tracker", "args": ["{{id}}"], "timeout_ms": 1000}})
    };
    let cases: Vec<(Vec<Patch>, &str)> = vec![
        (
            vec![(
                "claude",
                "resolvers",
                json!([{"kind": "resolver", "tracker_prefix": "LIN",
                "invoke": {"binary": "t", "args": ["show"], "timeout_ms": 1000}}]),
            )],
            "never passes the task id",
        ),
        (
            vec![(
                "claude",
                "resolvers",
                json!([{"kind": "resolver", "tracker_prefix": "LIN",
                "invoke": {"binary": "t", "args": ["{{id}}"]}}]),
            )],
            "missing field `timeout_ms`",
        ),
        (
            vec![(
                "claude",
                "resolvers",
                json!([{"kind": "gate", "tracker_prefix": "LIN",
                "invoke": {"binary": "t", "args": ["{{id}}"], "timeout_ms": 1}}]),
            )],
            "unknown variant `gate`",
        ),
        (
            vec![(
                "claude",
                "resolvers",
                json!([{"kind": "resolver", "tracker_prefix": "LIN",
                "invoke": {"binary": "t", "args": ["{{ID}}", "{{id}}"], "timeout_ms": 1}}]),
            )],
            "unknown placeholder",
        ),
        (vec![("claude", "resolvers", json!([ok("LIN"), ok("lin")]))], "collides"),
        (vec![("claude", "resolvers", json!([ok("LIN")])), ("opencode", "resolvers", json!([ok("LIN")]))], "collides"),
    ];
    for (extra, needle) in cases {
        let dir = runtimes(&w, &extra);
        // It names the manifest and writes nothing.
        install(&w, &dir).code(3).stderr_has(needle).stderr_has("capability.json:").no_file("~/.claude");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn resolve_execute_plan_calls_the_seam_before_read_first() {
    // The shipped execute-plan workflow runs the seam once per task, before its read_first gate,
    // with exactly the documented flags, and treats a non-zero exit as a halt.
    let text = std::fs::read_to_string(repo().join("content/msd-core/workflows/execute-plan.md")).unwrap();
    let call = text
        .find("msd_run task resolve-content --plan <plan path> --task-id <task id> --raw")
        .expect("execute-plan calls `msd_run task resolve-content`");
    let gate = text.to_lowercase().find("read_first gate (mandatory)").expect("the read_first gate");
    assert!(call < gate, "the call precedes the read_first gate");
    assert!(text.contains("| non-zero | anything | HARD HALT"), "a non-zero exit halts");
}
