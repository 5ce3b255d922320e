//! The installer puts `msd_run` into every install at `<home>/msd-core/bin/msd_run`: executable,
//! recorded in the file manifest, and called by the content through its rewritten installed path
//! in every runtime and scope.

use std::path::Path;

use crate::support::{World, fixture, json, sha256};

fn built_msd_run() -> Vec<u8> {
    std::fs::read(assert_cmd::cargo::cargo_bin("msd_run")).unwrap()
}

#[test]
fn helper_is_installed_executable_and_recorded() {
    let w = World::new();
    w.install().arg("--content").arg(fixture("seams")).assert().success();
    let core = w.home.join(".claude/msd-core");
    let bytes = std::fs::read(core.join("bin/msd_run")).unwrap();
    assert_eq!(bytes, built_msd_run(), "the msd_run built beside this msd-install");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(core.join("bin/msd_run")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(core.join("msd-file-manifest.json")).unwrap()).unwrap();
    let entry = manifest["files"].as_array().unwrap().iter().find(|e| e["path"] == "msd-core/bin/msd_run").unwrap();
    assert_eq!(entry["mode"], "executable");
    assert_eq!(entry["sha256"], sha256(&bytes));
    assert_eq!(entry["bytes"], bytes.len() as u64);
    assert!(manifest["files"].as_array().unwrap().iter().any(|e| e["path"] == "msd-core/resolvers.json"));
    // A second run keeps it.
    let out = w.install().arg("--content").arg(fixture("seams")).arg("--json").output().unwrap();
    assert_eq!(json(&out)["runtimes"][0]["summary"]["added"], 0);
}

#[test]
fn helper_missing_binary_is_a_clear_error() {
    let w = World::new();
    let missing = w.tmp.path().join("no-msd_run");
    let w = w.env("MSD_RUN_BIN", &missing);
    let out = w.install().arg("--content").arg(fixture("seams")).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot read the msd_run binary to install at {}", missing.display())), "{err}");
    assert!(err.contains("MSD_RUN_BIN"), "{err}");
    assert!(!w.home.join(".claude").exists(), "nothing is written");
    // The override installs whatever file it names.
    let other = w.tmp.path().join("msd_run-copy");
    std::fs::write(&other, b"#!/bin/sh\necho stand-in\n").unwrap();
    let w = World::new().env("MSD_RUN_BIN", &other);
    w.install().arg("--content").arg(fixture("seams")).assert().success();
    assert_eq!(std::fs::read(w.home.join(".claude/msd-core/bin/msd_run")).unwrap(), b"#!/bin/sh\necho stand-in\n");
}

/// The installed path the content's init call was rewritten to, in `workflow`.
fn rewritten_helper(workflow: &Path) -> String {
    let text = std::fs::read_to_string(workflow).unwrap();
    let line = text.lines().find(|l| l.contains(" query init.plan-phase")).expect("the init call");
    line.split(" query ").next().unwrap().trim().to_string()
}

#[test]
fn helper_is_called_by_its_installed_path_in_other_runtimes_and_scopes() {
    let w = World::new();
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "### Phase 1: Setup\n").unwrap();
    // opencode, global: an absolute path under its XDG home.
    w.install().args(["--runtime", "opencode", "--content"]).arg(fixture("seams")).assert().success();
    let core = w.home.join(".config/opencode/msd-core");
    let helper = rewritten_helper(&core.join("workflows/plan-phase.md"));
    assert_eq!(Path::new(&helper), core.join("bin/msd_run"));
    let out = std::process::Command::new(&helper)
        .args(["query", "init.plan-phase", "1", "--research"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json(&out)["section_manifest"]["included"], serde_json::json!(["plan-research"]));
    // claude, local: a project-relative path that works from the project root.
    w.install().args(["--runtime", "claude", "--local", "--content"]).arg(fixture("seams")).assert().success();
    let helper = rewritten_helper(&w.project.join(".claude/msd-core/workflows/plan-phase.md"));
    assert_eq!(helper, "./.claude/msd-core/bin/msd_run");
    let out = std::process::Command::new(w.project.join(&helper))
        .args(["query", "init.plan-phase", "1"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json(&out)["phase"]["name"], "Setup");
    // cline, local: the project root is the home and the core dir is .cline/msd-core; the
    // steps paths init returns are the ones that exist there.
    w.install().args(["--runtime", "cline", "--local", "--content"]).arg(fixture("seams")).assert().success();
    let helper = rewritten_helper(&w.project.join(".cline/msd-core/workflows/plan-phase.md"));
    assert_eq!(helper, "./.cline/msd-core/bin/msd_run");
    let out = std::process::Command::new(w.project.join(&helper))
        .args(["query", "init.plan-phase", "1", "--research"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = json(&out)["section_manifest"]["read"].clone();
    assert_eq!(read, serde_json::json!(["./.cline/msd-core/workflows/plan-phase/steps/plan-research.md"]));
    assert!(w.project.join(read[0].as_str().unwrap()).is_file());
}

/// A global install of `id` and its core dir.
fn install_core(w: &World, id: &str) -> std::path::PathBuf {
    let out = w.install().args(["-r", id, "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::path::PathBuf::from(json(&out)["runtimes"][0]["home"].as_str().unwrap()).join("msd-core")
}

fn helper(w: &World, core: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = w.run().env("MSD_CORE_DIR", core).current_dir(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn helper_hints_name_commands_in_each_runtimes_own_syntax() {
    // Outside a project, config-get and config-set point at new-project as the user types it.
    for (id, command) in [("claude", "/msd-new-project"), ("gemini", "/msd:new-project"), ("codex", "$msd-new-project")]
    {
        let w = World::new();
        let core = install_core(&w, id);
        let (code, _, err) = helper(&w, &core, &w.project, &["config-get", "mode"]);
        assert_eq!(code, 4, "{id}: outside a project config-get is a project error: {err}");
        assert!(err.contains(&format!("({command} creates one)")), "{id}: {err}");
        assert!(!err.contains("{cmd:"), "{id}: {err}");
        let (code, _, err) = helper(&w, &core, &w.project, &["config-set", "mode", "yolo"]);
        assert_eq!(code, 4, "{id}: {err}");
        assert!(err.contains(command), "{id}: {err}");
        // With --default there is nothing to fail: the fallback is printed.
        assert_eq!(helper(&w, &core, &w.project, &["config-get", "mode", "--default", "x"]).1, "x\n");
    }
}

#[test]
fn helper_finds_the_project_root_from_a_subdirectory() {
    let w = World::new();
    let core = install_core(&w, "claude");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/ROADMAP.md"), "# Roadmap\n\n### Phase 1: Start\n**Goal:** a\n").unwrap();
    let sub = w.project.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let (code, out, err) = helper(&w, &core, &sub, &["query", "init.plan-phase", "1"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["exists"]["planning"], true, "{v}");
    assert_eq!(v["exists"]["roadmap"], true);
    assert_eq!(v["phase"]["name"], "Start");
    assert_eq!(
        std::path::Path::new(v["root"].as_str().unwrap()).canonicalize().unwrap(),
        w.project.canonicalize().unwrap()
    );
    // config-set from the subdirectory writes the root's config, and config-get reads it back.
    assert_eq!(helper(&w, &core, &sub, &["config-set", "mode", "yolo"]).0, 0);
    assert!(std::fs::read_to_string(w.project.join(".planning/config.json")).unwrap().contains("yolo"));
    assert!(!sub.join(".planning").exists());
    assert_eq!(helper(&w, &core, &sub, &["config-get", "mode"]).1, "yolo\n");
}

#[test]
fn helper_init_rejects_the_invalid_config_config_get_rejects() {
    let w = World::new();
    let core = install_core(&w, "gemini");
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(w.project.join(".planning/config.json"), r#"{"workflow": {"research": "yes"}}"#).unwrap();
    let (code, _, err) = helper(&w, &core, &w.project, &["config-get", "workflow.research", "--default", "true"]);
    assert_eq!(code, 4, "{err}");
    let (code, _, err) = helper(&w, &core, &w.project, &["query", "init.plan-phase", "1"]);
    assert_eq!(code, 4, "init passes no invalid config through: {err}");
    assert!(err.contains("workflow.research"), "{err}");
    assert!(err.contains("/msd:health"), "Gemini's syntax: {err}");
}
