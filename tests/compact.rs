//! Compact content mode: the five partition checks (a RED and a GREEN fixture each, synthetic
//! trees and temporary git repositories), the shipped splits, `msd_run config-get/config-set`,
//! `msd_run query agent-skills` on an installed tree with the key off and on, and the token
//! benchmark against its committed baseline.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use crate::support::{Install, NO_NATIVE_AGENTS, Ran, World, assert_no_native_agents, fixture, json, repo};

const GATE: &str =
    "Detail parts: follow `~/.claude/msd-core/references/compact-content-gate.md` for the parts named below.\n";

/// A content tree with the gate and any workflow files, relative to msd-core/workflows.
fn tree(root: &Path, files: &[(&str, &str)]) {
    let gate = root.join("msd-core/references/compact-content-gate.md");
    std::fs::create_dir_all(gate.parent().unwrap()).unwrap();
    std::fs::write(&gate, "# Gate\n\nThe one rule about detail parts lives here.\n").unwrap();
    for (rel, text) in files {
        let p = root.join("msd-core/workflows").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn remove(root: &Path, rel: &str) {
    std::fs::remove_file(root.join("msd-core/workflows").join(rel)).unwrap();
}

fn spine(body: &str, parts: &[&str]) -> String {
    let mut s = format!("<purpose>\nDo the thing.\n</purpose>\n\n{GATE}\n{body}");
    for p in parts {
        s.push_str(&format!("Elaboration: read the detail part `~/.claude/msd-core/workflows/{p}`.\n"));
    }
    s
}

/// Runs `check partition --json` and returns (exit code, violation kinds).
fn partition(w: &World, content: &Path, base: Option<&str>) -> (i32, Vec<String>, serde_json::Value) {
    let mut cmd = Install::in_world(w).args(["check", "partition"]).json().content(content);
    if let Some(b) = base {
        cmd = cmd.args(["--base", b]);
    }
    let out = cmd.run().out;
    let code = out.status.code().unwrap();
    if code > 1 {
        return (code, vec![], serde_json::Value::Null);
    }
    let doc = json(&out);
    let kinds = doc["violations"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap().to_string()).collect();
    (code, kinds, doc)
}

fn git(dir: &Path, args: &[&str]) {
    let out = StdCommand::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A repository whose first commit holds an unsplit workflow; returns (repo, content dir).
fn repo_with(w: &World, unsplit: &str) -> (PathBuf, PathBuf) {
    let root = w.tmp.path().join("repo");
    let content = root.join("content");
    tree(&content, &[("flow.md", unsplit)]);
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    (root, content)
}

fn commit(root: &Path, message: &str) {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", message]);
}

const UNSPLIT: &str = "<purpose>\nDo the thing.\n</purpose>\n\nDetail parts: follow `~/.claude/msd-core/references/compact-content-gate.md` for the parts named below.\n\n<!-- msd:protected -->\n**Never** delete the user's files without asking.\n\nStep one: read the plan and list its tasks in order.\nStep two: run each task and record its outcome.\nExample: a plan with three tasks produces three outcome lines, one per task.\nRationale: outcomes recorded as you go survive an interrupted run.\n";

fn split_ok(content: &Path) {
    let spine_text = UNSPLIT
        .replace("Example: a plan with three tasks produces three outcome lines, one per task.\n", "")
        .replace("Rationale: outcomes recorded as you go survive an interrupted run.\n", "")
        + "Elaboration: read the detail part `~/.claude/msd-core/workflows/flow/detail/why.md`.\n";
    tree(
        content,
        &[
            ("flow.md", &spine_text),
            (
                "flow/detail/why.md",
                "# flow: why\n\nExample: a plan with three tasks produces three outcome lines, one per task.\nRationale: outcomes recorded as you go survive an interrupted run.\n",
            ),
        ],
    );
}

const TRAILER: &str =
    "split flow\n\nBoundary-Move-Declared: content/msd-core/workflows/flow.md — examples and rationale move to a part";

#[test]
fn compact_completeness_green_when_every_line_is_carried() {
    let w = World::new();
    let (root, content) = repo_with(&w, UNSPLIT);
    split_ok(&content);
    commit(&root, TRAILER);
    let (code, kinds, doc) = partition(&w, &content, Some("HEAD~1"));
    assert_eq!((code, kinds), (0, vec![]), "{doc}");
    assert_eq!(doc["new_splits"], serde_json::json!(["flow"]));
    assert_eq!(doc["checks_run"].as_array().unwrap().len(), 5);
}

#[test]
fn compact_completeness_red_on_a_dropped_line_and_a_spine_not_smaller() {
    let w = World::new();
    let (root, content) = repo_with(&w, UNSPLIT);
    split_ok(&content);
    let part = content.join("msd-core/workflows/flow/detail/why.md");
    std::fs::write(
        &part,
        "# flow: why\n\nExample: a plan with three tasks produces three outcome lines, one per task.\n",
    )
    .unwrap();
    commit(&root, TRAILER);
    let (code, kinds, doc) = partition(&w, &content, Some("HEAD~1"));
    assert_eq!((code, kinds), (1, vec!["incomplete_split".to_string()]), "{doc}");
    let v = &doc["violations"][0];
    assert_eq!(v["spine"], "flow.md");
    assert_eq!(v["line"], 13, "the line of the old spine");
    assert_eq!(v["detail"], "Rationale: outcomes recorded as you go survive an interrupted run.");

    // A split that moves lines but grows the spine fails too.
    let grown = std::fs::read_to_string(content.join("msd-core/workflows/flow.md")).unwrap()
        + &"padding line that makes the spine bigger than before\n".repeat(10);
    std::fs::write(content.join("msd-core/workflows/flow.md"), grown).unwrap();
    std::fs::write(&part, "# flow: why\n\nExample: a plan with three tasks produces three outcome lines, one per task.\nRationale: outcomes recorded as you go survive an interrupted run.\n").unwrap();
    commit(&root, "grow");
    let (code, kinds, _) = partition(&w, &content, Some("HEAD~2"));
    assert_eq!((code, kinds), (1, vec!["spine_not_smaller".to_string()]));
}

#[test]
fn compact_disjointness_red_on_a_duplicated_line_green_when_rewritten() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    let dup = "Run the tests before every commit, and stop on the first failure.\n";
    tree(&c, &[("flow.md", &spine(dup, &["flow/detail/a.md"])), ("flow/detail/a.md", &format!("# a\n\n{dup}"))]);
    let (code, kinds, doc) = partition(&w, &c, None);
    assert_eq!((code, kinds), (1, vec!["duplicated_line".to_string()]));
    assert_eq!(doc["violations"][0]["part"], "flow/detail/a.md");
    assert_eq!(doc["violations"][0]["line"], 3);
    tree(&c, &[("flow/detail/a.md", "# a\n\nWhy: a failing test found early costs one revert, not a bisect.\n")]);
    assert_eq!(partition(&w, &c, None).0, 0);
    // A spine that restates the gate fails as well.
    tree(&c, &[("other.md", "Intro.\nThe one rule about detail parts lives here.\n")]);
    assert_eq!(partition(&w, &c, None).1, vec!["gate_restated".to_string()]);
}

#[test]
fn compact_registration_red_on_orphans_unreferenced_and_dangling_parts() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    tree(
        &c,
        &[
            ("flow.md", &spine("Step one.\n", &["flow/detail/a.md"])),
            ("flow/detail/a.md", "# a\n\nMore about step one.\n"),
        ],
    );
    assert_eq!(partition(&w, &c, None).0, 0, "a referenced part is green");

    tree(&c, &[("gone/detail/x.md", "# x\n\nA part of nothing.\n")]);
    assert_eq!(partition(&w, &c, None).1, vec!["orphan_detail".to_string()]);
    remove(&c, "gone/detail/x.md");

    tree(&c, &[("flow/detail/b.md", "# b\n\nNamed by nobody.\n")]);
    let (_, kinds, doc) = partition(&w, &c, None);
    assert_eq!(kinds, vec!["unreferenced_detail".to_string()]);
    assert_eq!(doc["violations"][0]["part"], "flow/detail/b.md");
    remove(&c, "flow/detail/b.md");

    tree(
        &c,
        &[("flow.md", &spine("Step one.\n", &["flow/detail/a.md", "flow/detail/missing.md", "other/detail/a.md"]))],
    );
    assert_eq!(partition(&w, &c, None).1, vec!["dangling_reference".to_string(), "dangling_reference".to_string()]);

    tree(&c, &[("flow.md", &spine("Step one.\n", &["flow/detail/a.md"]).replace(GATE, ""))]);
    assert_eq!(partition(&w, &c, None).1, vec!["gate_reference".to_string()]);

    tree(
        &c,
        &[
            ("flow.md", &spine("Step one.\n", &["flow/detail/a.md"])),
            ("flow/detail/a.md", "# a\n\n@~/.claude/msd-core/references/x.md\n"),
        ],
    );
    assert_eq!(partition(&w, &c, None).1, vec!["include_in_part".to_string()]);
}

#[test]
fn compact_registration_part_size_cap_minus_one_green_cap_and_cap_plus_one_red() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    let cap = msd_core::manifest::caps::DETAIL_PART_CAP as usize;
    for (size, code) in [(cap - 1, 0), (cap, 1), (cap + 1, 1)] {
        let head = "# a\n\n";
        let body = format!("{head}{}\n", "x".repeat(size - head.len() - 1));
        assert_eq!(body.len(), size);
        tree(&c, &[("flow.md", &spine("Step one.\n", &["flow/detail/a.md"])), ("flow/detail/a.md", &body)]);
        let (got, kinds, _) = partition(&w, &c, None);
        assert_eq!(got, code, "{size} bytes: {kinds:?}");
        if code == 1 {
            assert_eq!(kinds, vec!["part_too_large".to_string()]);
        }
    }
}

#[test]
fn compact_protected_red_when_a_part_holds_a_sentinel() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    tree(
        &c,
        &[
            ("flow.md", &spine("Step one.\n", &["flow/detail/a.md"])),
            ("flow/detail/a.md", "# a\n\n<!-- msd:protected -->\nNever push to main.\n"),
        ],
    );
    assert_eq!(partition(&w, &c, None).1, vec!["protected_in_part".to_string()]);
}

#[test]
fn compact_protected_red_when_deleted_or_relocated_green_when_present() {
    let w = World::new();
    let (root, content) = repo_with(&w, UNSPLIT);
    split_ok(&content);
    commit(&root, TRAILER);
    let base = "HEAD";
    assert_eq!(partition(&w, &content, Some(base)).0, 0, "protected line present: green");

    let spine_path = content.join("msd-core/workflows/flow.md");
    let spine_text = std::fs::read_to_string(&spine_path).unwrap();
    let protected = "**Never** delete the user's files without asking.\n";
    std::fs::write(&spine_path, spine_text.replace(protected, "")).unwrap();
    let (code, kinds, _) = partition(&w, &content, Some(base));
    assert_eq!((code, kinds), (1, vec!["protected_deleted".to_string()]));

    let part = content.join("msd-core/workflows/flow/detail/why.md");
    let part_text = std::fs::read_to_string(&part).unwrap();
    std::fs::write(&part, format!("{part_text}{protected}")).unwrap();
    commit(
        &root,
        "move the rule\n\nBoundary-Move-Declared: content/msd-core/workflows/flow.md — a trailer cannot excuse it",
    );
    let (code, kinds, doc) = partition(&w, &content, Some("HEAD~1"));
    assert_eq!((code, kinds), (1, vec!["protected_relocated".to_string()]), "{doc}");
    assert_eq!(doc["violations"][0]["part"], "flow/detail/why.md", "names the destination");
}

#[test]
fn compact_boundary_moves_red_without_the_trailer_green_with_it() {
    let w = World::new();
    let (root, content) = repo_with(&w, UNSPLIT);
    split_ok(&content);
    commit(&root, "split flow without saying so");
    let (code, kinds, doc) = partition(&w, &content, Some("HEAD~1"));
    assert_eq!((code, kinds), (1, vec!["undeclared_boundary_move".to_string()]), "{doc}");
    assert_eq!(doc["violations"][0]["part"], "flow/detail/why.md");

    git(&root, &["commit", "-q", "--allow-empty", "-m", TRAILER]);
    assert_eq!(partition(&w, &content, Some("HEAD~2")).0, 0);

    // A malformed trailer is reported, not ignored.
    git(
        &root,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x\n\nBoundary-Move-Declared: content/msd-core/workflows/flow.md - no em dash",
        ],
    );
    assert_eq!(partition(&w, &content, Some("HEAD~3")).1, vec!["trailer_error".to_string()]);
}

#[test]
fn compact_base_that_does_not_resolve_is_an_error_not_a_pass() {
    let w = World::new();
    let (_, content) = repo_with(&w, UNSPLIT);
    Install::in_world(&w)
        .args(["check", "partition"])
        .content(&content)
        .args(["--base", "no-such-branch"])
        .run()
        .code(2)
        .stderr_has("does not resolve");
    // Outside any repository, --base cannot be honoured either.
    let c = w.tmp.path().join("plain");
    tree(&c, &[("flow.md", "x\n")]);
    Install::in_world(&w).args(["check", "partition"]).content(&c).args(["--base", "HEAD"]).run().code(2);
}

#[test]
fn compact_shipped_content_passes_the_partition_check() {
    let w = World::new();
    let content = repo().join("content");
    let (code, kinds, doc) = partition(&w, &content, None);
    assert_eq!((code, kinds), (0, vec![]), "{doc}");
    let names: Vec<&str> = doc["splits"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    for name in ["discuss-phase", "execute-phase", "new-project", "plan-phase", "verify-work"] {
        assert!(names.contains(&name), "{name} is split: {names:?}");
    }
    // Every spine references the gate once, and the gate itself holds the rule SPEC section 8 gives.
    let gate = std::fs::read_to_string(content.join("msd-core/references/compact-content-gate.md")).unwrap();
    assert!(gate.contains("config-get workflow.compact_content --default false"));
    assert!(gate.contains("Output `true`: compact mode is **on**. Do not read any detail part."));
    assert!(gate.contains("A missed read degrades to the spine, never to nothing."));
    let new_project = std::fs::read_to_string(content.join("msd-core/workflows/new-project.md")).unwrap();
    assert!(
        new_project.contains("| Compact |") && new_project.contains("`workflow.compact_content`"),
        "new-project asks"
    );
    let settings = std::fs::read_to_string(content.join("msd-core/workflows/settings.md")).unwrap();
    assert!(settings.contains("<step name=\"compact_content\">"), "settings toggles");
}

// ---- msd_run config-get / config-set ----

/// An installed Claude core from the shipped content, and a project with `.planning/`.
fn installed() -> (World, PathBuf) {
    let w = World::new();
    Install::in_world(&w).arg("-q").run().success();
    let core = w.home.join(".claude/msd-core");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    let w = w.env("MSD_CORE_DIR", &core);
    (w, core)
}

/// A global install for `id` (its core found from `--json`), a `.planning/` in the project and
/// `MSD_CORE_DIR` set. [`NO_NATIVE_AGENTS`] has no agent files of its own, so its payloads carry
/// the agents' instructions; Claude and Gemini load `agents/<agent>.md` natively.
fn installed_on(id: &str) -> (World, PathBuf) {
    let w = World::new();
    let ran = Install::in_world(&w).runtime(id).json().run().success();
    let core = PathBuf::from(ran.json()["runtimes"][0]["home"].as_str().unwrap()).join("msd-core");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    let w = w.env("MSD_CORE_DIR", &core);
    (w, core)
}

/// [`installed_on`] for the runtime without agent files, its premise checked.
fn installed_without_native_agents() -> (World, PathBuf) {
    let (w, core) = installed_on(NO_NATIVE_AGENTS);
    assert_no_native_agents(&core);
    (w, core)
}

fn run<'w>(w: &'w World, args: &[&str]) -> Ran<'w> {
    Install::in_world(w).helper().args(args).run()
}

#[test]
fn compact_config_key_persists_and_reads_back() {
    let (w, _) = installed();
    // Unset without --default.
    run(&w, &["config-get", "workflow.compact_content"]).code(1);
    run(&w, &["config-get", "workflow.compact_content", "--default", "false"]).stdout_is("false\n");
    run(&w, &["config-set", "workflow.compact_content", "true"]).code(0);
    run(&w, &["config-get", "workflow.compact_content"]).code(0).stdout_is("true\n").stderr_empty();
    run(&w, &["config-set", "mode", "yolo"]);
    run(&w, &["config-set", "agent_skills.msd-executor", r#"["skills/testing"]"#]);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.project.join(".planning/config.json")).unwrap()).unwrap();
    assert_eq!(
        doc,
        serde_json::json!({"workflow": {"compact_content": true}, "mode": "yolo", "agent_skills": {"msd-executor": ["skills/testing"]}}),
        "dotted keys create nested objects"
    );
    run(&w, &["config-get", "mode"]).stdout_is("yolo\n");
    run(&w, &["config-get", "agent_skills.msd-executor"]).stdout_is("[\"skills/testing\"]\n");
}

#[test]
fn compact_config_rejects_invalid_values_and_unknown_keys_leaving_the_file_untouched() {
    let (w, _) = installed();
    let file = w.project.join(".planning/config.json");
    std::fs::write(&file, "{\n  \"mode\": \"interactive\"\n}\n").unwrap();
    let before = std::fs::read(&file).unwrap();
    for args in [
        ["config-set", "workflow.compact_content", "yes"],
        ["config-set", "workflow.compact_content", "\"true\""],
        ["config-set", "mode", "fast"],
        ["config-set", "workflow.nope", "true"],
        ["config-set", "agent_skills.msd-executor", "skills/x"],
        ["config-set", "agent_skills.msd-executor", r#"["../outside"]"#],
        ["config-set", "agent_skills.msd-nobody", "[]"],
    ] {
        run(&w, &args).code(2).stderr_has("hint:");
        assert_eq!(std::fs::read(&file).unwrap(), before, "{args:?} left the file as it was");
    }
    run(&w, &["config-get", "workflow.nope"]).code(2);
    // A stored value of the wrong type fails config-get, even with --default.
    std::fs::write(&file, "{\"workflow\": {\"compact_content\": \"yes\"}}").unwrap();
    run(&w, &["config-get", "workflow.compact_content", "--default", "false"]).code(4);
    // A broken file is not overwritten.
    std::fs::write(&file, "{ not json").unwrap();
    run(&w, &["config-set", "mode", "yolo"]).code(4);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
    // No .planning/ here: nothing is created.
    std::fs::remove_dir_all(w.project.join(".planning")).unwrap();
    run(&w, &["config-set", "mode", "yolo"]).code(4);
    assert!(!w.project.join(".planning").exists());
}

#[test]
fn compact_install_rejects_a_template_that_disagrees_with_the_schema() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    crate::support::copy_tree(&fixture("starter"), &c);
    std::fs::create_dir_all(c.join("msd-core/templates")).unwrap();
    std::fs::write(
        c.join("msd-core/templates/config-keys.json"),
        r#"{"keys": [{"key": "workflow.compact_content", "type": "bool", "default": false, "meaning": "m"}]}"#,
    )
    .unwrap();
    std::fs::write(c.join("msd-core/templates/config.json"), r#"{"workflow": {"compact_content": true}}"#).unwrap();
    Install::in_world(&w).content(&c).run().code(3).stderr_has("must be present with its default false");
    std::fs::write(c.join("msd-core/templates/config.json"), r#"{"workflow": {"compact_content": false}}"#).unwrap();
    Install::in_world(&w).content(&c).run().success();
}

#[test]
fn compact_install_rejects_agent_variants_that_drop_protected_text_grow_or_have_no_agent() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    crate::support::copy_tree(&fixture("starter"), &c);
    let agent = c.join("agents/msd-planner.md");
    let canonical = std::fs::read_to_string(&agent).unwrap();
    let with_rule = format!("{canonical}\n<!-- msd:protected -->\nNever plan work the user did not ask for.\n");
    std::fs::write(&agent, &with_rule).unwrap();
    let variants = c.join("msd-core/agents");
    std::fs::create_dir_all(&variants).unwrap();
    let install = |expect: Option<i32>| {
        let ran = Install::in_world(&w).dry_run().content(&c).run();
        assert_eq!(ran.exit(), expect, "{}", ran.describe());
        ran.stderr()
    };
    std::fs::write(variants.join("msd-planner.compact.md"), "Plan.\n").unwrap();
    assert!(install(Some(3)).contains("drops protected line"));
    std::fs::write(variants.join("msd-planner.compact.md"), format!("{with_rule}{with_rule}")).unwrap();
    assert!(install(Some(3)).contains("not smaller"));
    std::fs::write(variants.join("msd-planner.compact.md"), "Plan.\nNever plan work the user did not ask for.\n")
        .unwrap();
    install(Some(0));
    std::fs::write(variants.join("msd-ghost.compact.md"), "x\n").unwrap();
    assert!(install(Some(3)).contains("unknown agent `msd-ghost`"));
}

// ---- installed tree, key off and on ----

/// The part paths a spine names, as a workflow reads them: the literal installed paths.
fn named_parts(spine: &str, core: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}/workflows/", core.display());
    let mut out: Vec<PathBuf> = Vec::new();
    for (i, _) in spine.match_indices(&prefix) {
        let rest = &spine[i..];
        let end = rest.find('`').unwrap();
        let p = PathBuf::from(&rest[..end]);
        if p.to_string_lossy().contains("/detail/") && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

#[test]
fn compact_installed_gate_and_parts_serve_the_key_off_and_on() {
    let (w, core) = installed();
    let gate = std::fs::read_to_string(core.join("references/compact-content-gate.md")).unwrap();
    let call = gate.lines().find(|l| l.contains("config-get workflow.compact_content")).unwrap().trim().to_string();
    assert!(call.starts_with(&core.display().to_string()), "the gate calls the installed helper: {call}");
    let spine = std::fs::read_to_string(core.join("workflows/plan-phase.md")).unwrap();
    assert_eq!(spine.matches("references/compact-content-gate.md").count(), 1);
    let parts = named_parts(&spine, &core);
    assert_eq!(parts.len(), 4, "{parts:?}");

    // Key off (unset, then false): the gate's call prints false, and every named part is there to read.
    let gate_call = |w: &World| run(w, &["config-get", "workflow.compact_content", "--default", "false"]).stdout();
    assert_eq!(gate_call(&w), "false\n");
    run(&w, &["config-set", "workflow.compact_content", "false"]);
    assert_eq!(gate_call(&w), "false\n");
    for p in &parts {
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(text.contains("<detail name="), "{}", p.display());
        assert!(!text.lines().any(|l| l.trim_start().starts_with('@')), "no @ line in {}", p.display());
    }
    // Key on: the call prints true, nothing is reinstalled, and the spine alone is what the
    // workflow holds: nothing of a part reaches it (no include of a part, none of a block's text),
    // so skipping the parts shrinks the context by every byte they hold.
    let before: Vec<Vec<u8>> = parts.iter().map(|p| std::fs::read(p).unwrap()).collect();
    run(&w, &["config-set", "workflow.compact_content", "true"]);
    assert_eq!(gate_call(&w), "true\n");
    let spine_on = std::fs::read_to_string(core.join("workflows/plan-phase.md")).unwrap();
    assert_eq!(spine_on, spine, "turning the key on rewrites no installed file");
    for (p, bytes) in parts.iter().zip(&before) {
        assert_eq!(&std::fs::read(p).unwrap(), bytes, "{}", p.display());
    }
    assert!(
        !spine_on.lines().any(|l| l.trim_start().starts_with('@') && l.contains("/detail/")),
        "the spine includes no part eagerly"
    );
    let mut blocks = 0;
    for p in &parts {
        let text = std::fs::read_to_string(p).unwrap();
        for block in text.split("<detail name=").skip(1) {
            let body = block.split_once('>').map_or("", |(_, b)| b);
            let first = body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
            assert!(!first.is_empty(), "a block with a body in {}", p.display());
            assert!(!spine_on.contains(first), "{}: the spine repeats block text `{first}`", p.display());
            blocks += 1;
        }
    }
    assert!(blocks >= parts.len(), "every part holds a block");
}

#[test]
fn compact_agent_skills_payload_follows_the_key() {
    let (w, core) = installed_without_native_agents();
    let canonical = std::fs::read_to_string(core.join("agents/msd-ui-researcher.md")).unwrap();
    let compact = std::fs::read_to_string(core.join("agents/msd-ui-researcher.compact.md")).unwrap();
    assert!(compact.len() < canonical.len());
    let payload = |agent: &str| {
        Install::in_world(&w).helper().args(["query", "agent-skills", agent, "--json"]).run().success().json()
    };
    // Off (unset): canonical, with no skills configured and saying so.
    let p = payload("msd-ui-researcher");
    assert_eq!(p["variant"], "canonical");
    let text = p["payload"].as_str().unwrap();
    assert!(text.contains(canonical.trim_end()) && text.contains("No project skills are configured"));

    // On: the compact variant; an agent without one gets its canonical text, disclosed.
    std::fs::create_dir_all(w.project.join("skills/testing")).unwrap();
    std::fs::write(w.project.join("skills/testing/SKILL.md"), "# testing\n").unwrap();
    run(&w, &["config-set", "agent_skills.msd-ui-researcher", r#"["skills/testing", "skills/missing"]"#]);
    run(&w, &["config-set", "workflow.compact_content", "true"]);
    let p = payload("msd-ui-researcher");
    assert_eq!(p["variant"], "compact");
    let text = p["payload"].as_str().unwrap();
    assert!(text.contains(compact.trim_end()) && !text.contains(canonical.trim_end()));
    assert!(text.contains("- skills/testing/SKILL.md") && !text.contains("skills/missing"));
    assert_eq!(p["warnings"].as_array().unwrap().len(), 1, "the missing skill is a warning");
    // Every shipped agent has a variant; take one away to see the substitution.
    std::fs::remove_file(core.join("agents/msd-executor.compact.md")).unwrap();
    let p = payload("msd-executor");
    assert_eq!(p["variant"], "canonical_substituted");
    assert!(p["payload"].as_str().unwrap().contains("has no compact variant"));

    // Plain output is the payload itself; an unknown agent is an error.
    let out = run(&w, &["query", "agent-skills", "msd-executor"]).code(0).stdout();
    assert!(!out.trim().is_empty());
    run(&w, &["query", "agent-skills", "msd-nobody"]).code(2);
    run(&w, &["query", "agent-skills", "../etc"]).code(2);
}

/// The cap every compact variant stays under (NEW_FILE_CAP): 32,768 bytes fails.
const VARIANT_CAP: u64 = 32_768;

/// Runs `msd_run query agent-skills --json` for every agent installed in `core`, with compact
/// content off and then on, and returns one line per violation: a compact-mode payload larger
/// than the canonical one, or a variant file of 32,768 bytes or more. Leaves the key on.
fn compact_payload_violations(w: &World, core: &Path) -> Vec<String> {
    let dir = core.join("agents");
    let mut agents: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".compact.md"))
        .filter_map(|n| n.strip_suffix(".md").map(str::to_string))
        .collect();
    agents.sort();
    assert!(!agents.is_empty(), "no agents in {}", dir.display());
    let payloads = |on: bool| -> Vec<(String, usize)> {
        run(w, &["config-set", "workflow.compact_content", if on { "true" } else { "false" }]).code(0);
        agents
            .iter()
            .map(|a| {
                // Whole answers, never the @file: spill (issue 20) that a 52 KB payload takes.
                let out = w
                    .run()
                    .env("MSD_RUN_SPILL_BYTES", "100000000")
                    .args(["query", "agent-skills", a, "--json"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{a}: {}", String::from_utf8_lossy(&out.stderr));
                let doc = json(&out);
                (doc["variant"].as_str().unwrap().to_string(), doc["payload"].as_str().unwrap().len())
            })
            .collect()
    };
    let off = payloads(false);
    let on = payloads(true);
    let mut violations = Vec::new();
    for (i, agent) in agents.iter().enumerate() {
        let ((_, canonical), (variant, compact)) = (&off[i], &on[i]);
        if compact > canonical {
            violations
                .push(format!("{agent}: compact payload ({variant}) {compact} bytes > canonical {canonical} bytes"));
        }
        if let Ok(meta) = std::fs::metadata(dir.join(format!("{agent}.compact.md")))
            && meta.len() >= VARIANT_CAP
        {
            violations.push(format!("{agent}: variant {} bytes reaches {VARIANT_CAP}", meta.len()));
        }
    }
    violations
}

#[test]
fn compact_mode_never_grows_an_agent_payload_and_every_agent_has_a_variant_under_the_cap() {
    let (w, core) = installed_without_native_agents();
    assert_eq!(compact_payload_violations(&w, &core), Vec::<String>::new());
    // Every shipped agent is served its own compact variant, never the disclosed substitute.
    for entry in std::fs::read_dir(repo().join("content/agents")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().trim_end_matches(".md").to_string();
        let doc = Install::in_world(&w).helper().args(["query", "agent-skills", &name, "--json"]).run().json();
        assert_eq!(doc["variant"], "compact", "{name} has no compact variant");
    }
}

#[test]
fn compact_payload_check_goes_red_on_a_grown_payload_and_a_variant_at_the_cap() {
    let (w, core) = installed_without_native_agents();
    let agents = core.join("agents");
    let canonical = |a: &str| std::fs::read_to_string(agents.join(format!("{a}.md"))).unwrap();
    // A variant larger than its canonical text.
    let grown = format!("{}\nOne more paragraph the canonical text does not have.\n", canonical("msd-verifier"));
    std::fs::write(agents.join("msd-verifier.compact.md"), grown).unwrap();
    // No variant: the substitution notice makes the compact-mode payload larger than the canonical.
    std::fs::remove_file(agents.join("msd-roadmapper.compact.md")).unwrap();
    // The planner's canonical text is over the cap, so its variant can reach the cap while staying smaller.
    assert!(canonical("msd-planner").len() as u64 > VARIANT_CAP + 1);
    std::fs::write(agents.join("msd-planner.compact.md"), "x".repeat(VARIANT_CAP as usize)).unwrap();
    let v = compact_payload_violations(&w, &core);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(v[0].starts_with("msd-planner: variant 32768 bytes reaches 32768"), "{v:#?}");
    assert!(v[1].starts_with("msd-roadmapper: compact payload (canonical_substituted)"), "{v:#?}");
    assert!(v[2].starts_with("msd-verifier: compact payload (compact)"), "{v:#?}");
    // One byte under the cap, the variant is green; restoring the others turns the check green.
    std::fs::write(agents.join("msd-planner.compact.md"), "x".repeat(VARIANT_CAP as usize - 1)).unwrap();
    std::fs::write(agents.join("msd-verifier.compact.md"), "Verify.\n").unwrap();
    std::fs::write(agents.join("msd-roadmapper.compact.md"), "Map the roadmap.\n").unwrap();
    assert_eq!(compact_payload_violations(&w, &core), Vec::<String>::new());
}

#[test]
fn compact_payloads_exist_for_runtimes_whose_agents_are_not_markdown() {
    // Codex agents are TOML and Kimi's YAML; the payload texts in the core are the same Markdown,
    // and they are what the payload carries where the runtime has no agent files (Hermes).
    {
        let id = "hermes";
        let w = World::new();
        let ran = Install::in_world(&w).runtime(id).json().run().success();
        let home = PathBuf::from(ran.json()["runtimes"][0]["home"].as_str().unwrap());
        let core = home.join("msd-core");
        std::fs::create_dir_all(w.project.join(".planning")).unwrap();
        let w = w.env("MSD_CORE_DIR", &core);
        run(&w, &["config-set", "workflow.compact_content", "true"]);
        let text = run(&w, &["query", "agent-skills", "msd-code-reviewer"]).code(0).stdout();
        assert!(text.contains("variant=\"compact\"") && !text.contains("~/.claude"), "{id}: {text}");
    }
}

#[test]
fn compact_payload_is_the_skills_block_only_where_the_runtime_loads_agent_files() {
    for id in ["claude", "gemini", "codex"] {
        let (w, core) = installed_on(id);
        let info: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(core.join("runtime.json")).unwrap()).unwrap();
        assert_eq!(info["agents_native"], true, "{id}: {info}");
        let canonical = std::fs::read_to_string(core.join("agents/msd-executor.md")).unwrap();
        for on in ["false", "true"] {
            run(&w, &["config-set", "workflow.compact_content", on]);
            let p = Install::in_world(&w)
                .helper()
                .args(["query", "agent-skills", "msd-executor", "--json"])
                .note(id)
                .run()
                .success()
                .json();
            let text = p["payload"].as_str().unwrap();
            assert_eq!(p["instructions_included"], false, "{id}");
            assert!(!text.contains("<agent_instructions"), "{id}: the body is not repeated: {text}");
            assert!(text.contains("No project skills are configured for msd-executor"), "{id}: {text}");
            assert!(text.len() < 512 && text.len() * 10 < canonical.len(), "{id}: {} bytes", text.len());
        }
    }
    // A runtime without agent files: its payload carries the instructions.
    let (w, _) = installed_without_native_agents();
    let text = run(&w, &["query", "agent-skills", "msd-executor"]).code(0).stdout();
    assert!(text.contains("<agent_instructions agent=\"msd-executor\" variant=\"canonical\">"), "{text}");
    // A general-purpose subagent receives it in place of the agent file: the payload says so.
    assert!(text.contains("no agent file for msd-executor: you are msd-executor"), "{text}");
}

// ---- token benchmark ----

#[test]
fn compact_bench_tokens_check_is_green_twice_and_shows_the_reduction() {
    let w = World::new();
    for _ in 0..2 {
        Install::in_world(&w).args(["bench", "tokens", "--check", "--root"]).arg(repo()).run().success();
    }
    let baseline: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("bench/tokens-baseline.json")).unwrap()).unwrap();
    assert!(baseline["tokenizer"].as_str().unwrap().contains("proxy"));
    for name in ["plan-phase", "execute-phase", "new-project", "verify-work", "discuss-phase"] {
        let row = baseline["rows"].as_array().unwrap().iter().find(|r| r["command"] == name).unwrap();
        let (off, on) = (row["off"]["tokens"].as_u64().unwrap(), row["on"]["tokens"].as_u64().unwrap());
        assert!(on * 100 < off * 95, "{name}: {off} -> {on} tokens is at least a 5% reduction");
    }
    assert!(baseline["total_on"]["tokens"].as_u64() < baseline["total_off"]["tokens"].as_u64());
    // The README shows the table the command prints.
    let table = Install::in_world(&w).args(["bench", "tokens"]).run().stdout();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(table.trim()), "README.md shows the current bench tokens table");
}

#[test]
fn compact_bench_tokens_check_fails_on_a_stale_baseline() {
    let w = World::new();
    let root = w.tmp.path().join("r");
    std::fs::create_dir_all(root.join("bench")).unwrap();
    std::fs::write(root.join("bench/tokens-baseline.json"), "{}\n").unwrap();
    Install::in_world(&w)
        .args(["bench", "tokens", "--check", "--root", root.to_str().unwrap()])
        .run()
        .code(1)
        .stderr_has("bench tokens --write");
}

/// Issue 15, item 2: parallel `config-set` calls on distinct keys lose nothing; a symlinked
/// config.json stays a symlink; a key that occurs twice is an error.
#[test]
fn compact_config_set_in_parallel_loses_no_key_and_keeps_links() {
    let (w, _) = installed();
    let keys = [
        "commit_docs",
        "workflow.research",
        "workflow.plan_check",
        "workflow.verifier",
        "workflow.auto_advance",
        "workflow.code_review",
        "workflow.ui_phase",
        "workflow.compact_content",
        "workflow.plan_chunked",
        "workflow.use_worktrees",
        "workflow.mvp_mode",
    ];
    let file = w.project.join(".planning/config.json");
    for round in 0..3 {
        let _ = std::fs::remove_file(&file);
        let children: Vec<_> =
            keys.iter().map(|k| w.spawnable("msd_run").args(["config-set", k, "true"]).spawn().unwrap()).collect();
        for mut c in children {
            assert!(c.wait().unwrap().success());
        }
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        for k in keys {
            let v = k.split('.').fold(&doc, |d, seg| &d[seg]);
            assert_eq!(v, &serde_json::json!(true), "round {round}: {k} lost in {doc}");
        }
    }
    // A symlinked config.json is written through and stays a link.
    let real = w.project.join("real-config.json");
    std::fs::write(&real, "{\"mode\": \"yolo\"}\n").unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&real, &file).unwrap();
    run(&w, &["config-set", "commit_docs", "false"]).code(0);
    assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink(), "still a link");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    assert_eq!(doc, serde_json::json!({"mode": "yolo", "commit_docs": false}));
    // A duplicated key is an error, for get and set, and the file is untouched.
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&file, "{\"mode\": \"yolo\",\n \"mode\": \"interactive\"}\n").unwrap();
    let before = std::fs::read(&file).unwrap();
    run(&w, &["config-set", "commit_docs", "true"]).code(4).stderr_has("config.json").stderr_has("`mode` occurs twice");
    run(&w, &["config-get", "mode"]).code(4);
    assert_eq!(std::fs::read(&file).unwrap(), before);
}
