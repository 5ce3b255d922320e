//! Capability manifests: the shipped set, strict parsing with located errors, the schema.

use crate::support::{Install, Ran, World, copy_tree, repo};

fn runtimes_copy(w: &World) -> std::path::PathBuf {
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    dir
}

fn install_with<'w>(w: &'w World, dir: &std::path::Path) -> Ran<'w> {
    Install::in_world(w).arg("--runtimes").arg(dir).starter().run()
}

#[test]
fn manifests_ship_all_nineteen_runtimes() {
    let w = World::new();
    let doc = Install::in_world(&w).arg("runtimes").json().run().success().json();
    assert_eq!(doc["schema_version"], 1, "runtimes --json is an object with a schema version");
    let rows = &doc["runtimes"];
    let ids: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut want = vec![
        "claude",
        "opencode",
        "gemini",
        "codex",
        "copilot",
        "cursor",
        "windsurf",
        "cline",
        "kilo",
        "qwen",
        "trae",
        "augment",
        "antigravity",
        "codebuddy",
        "kimi",
        "kimi-code",
        "hermes",
        "zcode",
        "pi",
    ];
    want.sort();
    assert_eq!(ids, want);
    let claude = rows.as_array().unwrap().iter().find(|r| r["id"] == "claude").unwrap();
    assert_eq!(claude["global_home"], w.home.join(".claude").display().to_string());
    assert_eq!(claude["local_dir"], ".claude");
}

#[test]
fn manifests_runtimes_listing_resolves_env_overrides() {
    let w = World::new();
    let oc = w.tmp.path().join("oc");
    let w = w.env("OPENCODE_CONFIG_DIR", &oc);
    let doc = Install::in_world(&w).arg("runtimes").json().run().json();
    let opencode = doc["runtimes"].as_array().unwrap().iter().find(|r| r["id"] == "opencode").unwrap();
    assert_eq!(opencode["global_home"], oc.display().to_string(), "the directory variable is the home");
    assert_eq!(opencode["home_source"]["name"], "OPENCODE_CONFIG_DIR");
}

#[test]
fn manifests_bad_json_is_located() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    std::fs::write(dir.join("claude/capability.json"), "{\n  \"id\": \"claude\",\n  \"title\": \n}\n").unwrap();
    install_with(&w, &dir).code(3).stderr_has("claude/capability.json:4:1:").no_file("~/.claude");
}

#[test]
fn manifests_unknown_field_is_rejected_with_its_location() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("cursor/capability.json");
    let text = std::fs::read_to_string(&p).unwrap().replacen("\"title\"", "\"titel\": \"x\",\n  \"title\"", 1);
    std::fs::write(&p, text).unwrap();
    // One bad manifest stops every install.
    install_with(&w, &dir)
        .code(3)
        .stderr_has("cursor/capability.json:4:")
        .stderr_has("unknown field `titel`")
        .stderr_has("hint: see `msd-install schema`")
        .no_file("~/.claude");
}

#[test]
fn manifests_missing_field_is_rejected() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("claude/capability.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    let mut m = v.as_object().unwrap().clone();
    m.remove("command_ref");
    std::fs::write(&p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    install_with(&w, &dir).code(3).stderr_has("claude/capability.json:").stderr_has("missing field `command_ref`");
}

#[test]
fn manifests_unknown_converter_is_rejected() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("claude/capability.json");
    let text = std::fs::read_to_string(&p).unwrap().replacen("\"converter\": \"skill\"", "\"converter\": \"skil\"", 1);
    std::fs::write(&p, text).unwrap();
    install_with(&w, &dir).code(3).stderr_has("unknown variant `skil`");
}

#[test]
fn manifests_hook_hosts_must_name_the_hosts_own_helpers() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("claude/capability.json");
    let shipped = std::fs::read_to_string(&p).unwrap();
    let moved = shipped.replacen("\".cursor/msd-core/bin/msd_run\"", "\".cursor/bin/msd_run\"", 1);
    assert_ne!(moved, shipped);
    std::fs::write(&p, moved).unwrap();
    install_with(&w, &dir)
        .code(3)
        .stderr_has("`.cursor/bin/msd_run` is not where that runtime's msd helper is installed")
        .stderr_has(".cursor/msd-core/bin/msd_run");
    std::fs::write(&p, shipped.replacen("\"runtime\": \"cursor\"", "\"runtime\": \"cursr\"", 1)).unwrap();
    install_with(&w, &dir).code(3).stderr_has("hook_hosts names runtime `cursr`, which has no manifest");
}

#[test]
fn manifests_id_must_match_directory() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    std::fs::rename(dir.join("zcode"), dir.join("zcode2")).unwrap();
    install_with(&w, &dir).code(3).stderr_has("does not match its directory `zcode2`");
}

#[test]
fn manifests_schema_is_committed_and_current() {
    let printed = Install::new().arg("schema").run().success().stdout();
    let v: serde_json::Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(v["additionalProperties"], false);
    let committed = std::fs::read_to_string(repo().join("runtimes/capability.schema.json")).unwrap();
    assert_eq!(
        committed, printed,
        "runtimes/capability.schema.json is stale: run `msd-install schema > runtimes/capability.schema.json`"
    );
}

#[test]
fn manifests_an_error_in_the_second_cap_rule_points_at_the_second() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let path = dir.join("claude/capability.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["caps"] = serde_json::json!([
        {"glob": "skills/*/SKILL.md", "max_bytes": 40000, "scopes": ["global"]},
        {"glob": "agents/?.md", "max_bytes": 40000, "scopes": ["global"]}
    ]);
    let text = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(&path, &text).unwrap();
    let line = text.lines().position(|l| l.contains("agents/?.md")).unwrap() + 1;
    install_with(&w, &dir).code(3).stderr_has(&format!("capability.json:{line}:"));
}

#[test]
fn manifests_every_runtime_names_the_public_sources_its_layout_follows() {
    for rt in msd_install::pipeline::load_runtimes(&Default::default()).unwrap() {
        let c = &rt.capability;
        assert!(!c.sources.is_empty(), "{}: add `sources` (package@version:path:line or a URL)", c.id);
        assert!(
            c.sources.iter().any(|s| s.contains("http") || s.contains('@')),
            "{}: a source names a package version or a URL",
            c.id
        );
    }
}

#[test]
fn manifests_every_problem_of_a_manifest_is_reported_at_once() {
    // Three independent mistakes in one manifest: one run names all three, each at its line, so a
    // maintainer fixes them in one edit instead of one run per mistake.
    let w = World::new();
    let dir = runtimes_copy(&w);
    let path = dir.join("claude/capability.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    doc["command_ref"] = serde_json::json!("/msd-command");
    doc["caps"] = serde_json::json!([{"glob": "agents/?.md", "max_bytes": 40000, "scopes": ["global"]}]);
    doc["rewrites"] = serde_json::json!([{"from": "", "to": "x"}]);
    let text = serde_json::to_string_pretty(&doc).unwrap();
    std::fs::write(&path, &text).unwrap();
    let at = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    install_with(&w, &dir)
        .code(3)
        .stderr_has("3 problems in")
        .stderr_has(&format!("capability.json:{}:", at("\"command_ref\"")))
        .stderr_has("lacks `{stem}`")
        .stderr_has(&format!("capability.json:{}:", at("agents/?.md")))
        .stderr_has("a rewrite has an empty `from`");
}

/// The claude manifest of a runtimes copy, edited as JSON by `edit`.
fn edit_claude(dir: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let p = dir.join("claude/capability.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// The `tools:` line of the planner a global Claude install wrote.
fn planner_tools(w: &World) -> String {
    let text = std::fs::read_to_string(w.home.join(".claude/agents/msd-planner.md")).unwrap();
    text.lines().find(|l| l.starts_with("tools:")).unwrap_or_default().to_string()
}

#[test]
fn manifests_tool_table_follows_the_version_range_of_the_tested_cli() {
    // Claude Code 2.1.117 dropped Glob and Grep (runtimes/claude: tool_versions cites both
    // binaries); the range holding tested.max applies. The shipped manifest (tested 2.1.332):
    // the planner's Grep and Glob become Bash.
    let w = World::new();
    Install::in_world(&w).runtime("claude").run().success();
    assert_eq!(planner_tools(&w), "tools: Read, Write, Edit, Bash");
    // The same manifest, tested on 2.1.116 only: Claude Code has both there, so they stay.
    let w = World::new();
    let dir = runtimes_copy(&w);
    edit_claude(&dir, |v| {
        v["tested"]["min"] = "2.1.100".into();
        v["tested"]["max"] = "2.1.116".into();
    });
    Install::in_world(&w).arg("--runtimes").arg(&dir).runtime("claude").run().success();
    assert_eq!(planner_tools(&w), "tools: Read, Write, Edit, Bash, Grep, Glob");
    // A tested range across the change would need two tool tables: refused, located.
    let w = World::new();
    let dir = runtimes_copy(&w);
    edit_claude(&dir, |v| v["tested"]["min"] = "2.1.116".into());
    Install::in_world(&w)
        .arg("--runtimes")
        .arg(&dir)
        .runtime("claude")
        .run()
        .code(3)
        .stderr_has("claude/capability.json:")
        .stderr_has("tested range 2.1.116-2.1.332 spans a change of the tool table")
        .no_file("~/.claude");
}

#[test]
fn manifests_a_bad_tool_version_range_is_refused_with_its_location() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 6] = [
        (|v| v["tool_versions"][0]["min"] = "2.1.x".into(), "tool_versions[0].min `2.1.x` is not a version"),
        (|v| v["tool_versions"][0]["max"] = "2.1.100".into(), "tool_versions[0]: the range 2.1.117-2.1.100 is empty"),
        (
            |v| {
                let mut second = v["tool_versions"][0].clone();
                second["min"] = "2.1.200".into();
                v["tool_versions"].as_array_mut().unwrap().push(second);
            },
            "tool_versions[1] (2.1.200+) overlaps tool_versions[0] (2.1.117+)",
        ),
        (|v| v["tool_versions"][0]["sources"] = serde_json::json!([]), "tool_versions[0] cites no source"),
        (|v| v["tool_versions"][0]["tools"] = serde_json::json!({}), "tool_versions[0] changes no tool"),
        (
            |v| {
                v.as_object_mut().unwrap().remove("tested");
            },
            "tool_versions needs `tested`",
        ),
    ];
    for (edit, message) in cases {
        let w = World::new();
        let dir = runtimes_copy(&w);
        edit_claude(&dir, edit);
        install_with(&w, &dir).code(3).stderr_has("claude/capability.json:").stderr_has(message).no_file("~/.claude");
    }
}
