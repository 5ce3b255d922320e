//! Capability manifests: the shipped set, strict parsing with located errors, the schema.

use crate::support::{World, copy_tree, json, repo};

fn runtimes_copy(w: &World) -> std::path::PathBuf {
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    dir
}

fn install_with(w: &World, dir: &std::path::Path) -> std::process::Output {
    let content = crate::support::fixture("starter");
    w.install().args(["--runtimes", dir.to_str().unwrap(), "--content", content.to_str().unwrap()]).output().unwrap()
}

#[test]
fn manifests_ship_all_eighteen_runtimes() {
    let w = World::new();
    let out = w.install().args(["runtimes", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc = json(&out);
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
    let doc = json(&w.install().args(["runtimes", "--json"]).output().unwrap());
    let opencode = doc["runtimes"].as_array().unwrap().iter().find(|r| r["id"] == "opencode").unwrap();
    assert_eq!(opencode["global_home"], oc.display().to_string(), "the directory variable is the home");
    assert_eq!(opencode["home_source"]["name"], "OPENCODE_CONFIG_DIR");
}

#[test]
fn manifests_bad_json_is_located() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    std::fs::write(dir.join("claude/capability.json"), "{\n  \"id\": \"claude\",\n  \"title\": \n}\n").unwrap();
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("claude/capability.json:4:1:"), "{err}");
    assert!(!w.home.join(".claude").exists());
}

#[test]
fn manifests_unknown_field_is_rejected_with_its_location() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("cursor/capability.json");
    let text = std::fs::read_to_string(&p).unwrap().replacen("\"title\"", "\"titel\": \"x\",\n  \"title\"", 1);
    std::fs::write(&p, text).unwrap();
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cursor/capability.json:4:") && err.contains("unknown field `titel`"), "{err}");
    assert!(err.contains("hint: see `msd-install schema`"), "{err}");
    assert!(!w.home.join(".claude").exists(), "one bad manifest stops every install");
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
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("claude/capability.json:") && err.contains("missing field `command_ref`"), "{err}");
}

#[test]
fn manifests_unknown_converter_is_rejected() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    let p = dir.join("claude/capability.json");
    let text = std::fs::read_to_string(&p).unwrap().replacen("\"converter\": \"skill\"", "\"converter\": \"skil\"", 1);
    std::fs::write(&p, text).unwrap();
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown variant `skil`"), "{err}");
}

#[test]
fn manifests_id_must_match_directory() {
    let w = World::new();
    let dir = runtimes_copy(&w);
    std::fs::rename(dir.join("zcode"), dir.join("zcode2")).unwrap();
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not match its directory `zcode2`"));
}

#[test]
fn manifests_schema_is_committed_and_current() {
    let w = World::new();
    let out = w.install().arg("schema").output().unwrap();
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
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
    let out = install_with(&w, &dir);
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = text.lines().position(|l| l.contains("agents/?.md")).unwrap() + 1;
    assert!(stderr.contains(&format!("capability.json:{line}:")), "points at line {line}: {stderr}");
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
