//! `msd-install doctor`: a clean install passes (a runtime CLI that is not on this machine is
//! reported, not a problem), and each planted fault is found with exit 1: a missing helper, a
//! hook whose command no longer runs, a shadowing copy, a CLI outside the tested range, a CLI
//! that does not list what msd wrote, a runtime named with -r that has no install.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{Install, Ran, World};

/// PATH of a machine without any runtime CLI, with `stubs` in front when given.
fn path_with(stubs: Option<&Path>) -> String {
    match stubs {
        Some(d) => format!("{}:/usr/bin:/bin", d.display()),
        None => "/usr/bin:/bin".to_string(),
    }
}

fn doctor<'w>(w: &'w World, stubs: Option<&Path>, runtimes: &[&str]) -> Ran<'w> {
    let mut i = Install::in_world(w).arg("doctor").env("PATH", path_with(stubs));
    for r in runtimes {
        i = i.args(["-r", r]);
    }
    i.json().run()
}

/// A stub CLI named `name` in `<tmp>/stubs`: `body` is its shell script.
fn stub(w: &World, name: &str, body: &str) -> PathBuf {
    let dir = w.tmp.path().join("stubs");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn findings<'a>(doc: &'a serde_json::Value, runtime: &str, check: &str) -> Vec<&'a serde_json::Value> {
    doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["runtime"] == runtime)
        .flat_map(|t| t["findings"].as_array().unwrap())
        .filter(|f| f["check"] == check)
        .collect()
}

fn problems(doc: &serde_json::Value) -> Vec<String> {
    doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["findings"].as_array().unwrap())
        .filter(|f| f["level"] == "problem")
        .map(|f| format!("{}: {}", f["check"], f["message"]))
        .collect()
}

#[test]
fn doctor_a_clean_install_passes_and_a_cli_not_on_this_machine_is_not_a_problem() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").runtime("gemini").arg("-q").run().success();
    let doc = doctor(&w, None, &[]).success().json();
    assert_eq!(doc["ok"], true, "{:?}", problems(&doc));
    let ids: Vec<&str> = doc["targets"].as_array().unwrap().iter().map(|t| t["runtime"].as_str().unwrap()).collect();
    assert_eq!(ids, ["claude", "gemini"], "every install, and only those");
    let cli = &findings(&doc, "claude", "cli")[0];
    assert_eq!(cli["level"], "not-checked");
    assert!(cli["message"].as_str().unwrap().contains("`claude` is not on PATH"));
    // The sunset notice is a note, not a problem.
    assert_eq!(findings(&doc, "gemini", "sunset")[0]["level"], "note");
    // Text: one line per finding, with what to do.
    let text = Install::in_world(&w).arg("doctor").env("PATH", path_with(None)).run().success().stdout();
    assert!(text.contains("claude global: ok (claude not on PATH)"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("  not checked [cli]: `claude` is not on PATH") && l.contains("; install"))
    );
}

#[test]
fn doctor_finds_a_missing_helper() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    std::fs::remove_file(w.home.join(".claude/msd-core/bin/msd_run")).unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    assert_eq!(doc["ok"], false);
    let helper = findings(&doc, "claude", "helper");
    assert_eq!(helper.len(), 1, "{:?}", problems(&doc));
    assert_eq!(helper[0]["level"], "problem");
    assert!(helper[0]["hint"].as_str().unwrap().contains("msd-install -r claude"));
    // The hooks that call it do not answer either.
    assert!(findings(&doc, "claude", "hook").iter().any(|f| f["message"].as_str().unwrap().contains("exit 127")));
}

#[test]
fn doctor_finds_a_hook_whose_command_no_longer_runs() {
    let w = World::new();
    Install::in_world(&w).runtime("gemini").arg("-q").run().success();
    doctor(&w, None, &["gemini"]).success();
    let settings = w.home.join(".gemini/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let broken = text.replacen("msd-core/bin/msd_run hook guard", "msd-core/gone/msd_run hook guard", 1);
    assert_ne!(broken, text, "the guard hook is registered in settings.json");
    std::fs::write(&settings, broken).unwrap();
    let doc = doctor(&w, None, &["gemini"]).code(1).json();
    let hooks = findings(&doc, "gemini", "hook");
    assert_eq!(hooks.len(), 1, "only the guard hook fails: {hooks:?}");
    let m = hooks[0]["message"].as_str().unwrap();
    assert!(m.contains("hook:guard") && m.contains("exit 127") && m.contains("gone/msd_run"), "{m}");
}

#[test]
fn doctor_finds_a_shadowing_copy() {
    let w = World::new();
    Install::in_world(&w).runtime("codex").arg("-q").run().success();
    doctor(&w, None, &[]).success();
    let copy = w.home.join(".agents/skills/msd-help");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join("SKILL.md"), "---\nname: msd-help\ndescription: mine\n---\n").unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    let shadow = findings(&doc, "codex", "shadow");
    assert_eq!(shadow.len(), 1, "{:?}", problems(&doc));
    let m = shadow[0]["message"].as_str().unwrap();
    assert!(m.contains(".agents/skills holds 1 skills") && m.contains("msd-help"), "{m}");
    assert!(copy.join("SKILL.md").exists(), "doctor reads only");
}

#[test]
fn doctor_says_when_the_cli_names_its_tools_otherwise_than_the_agents() {
    // Claude Code before 2.1.117 has Glob and Grep; msd wrote the agents for 2.1.332 (Bash).
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    let stubs = stub(&w, "claude", "echo '2.1.100 (Claude Code)'");
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let tools = findings(&doc, "claude", "tools");
    assert_eq!(tools.len(), 1, "{:?}", problems(&doc));
    let m = tools[0]["message"].as_str().unwrap();
    assert!(m.contains("claude 2.1.100") && m.contains("2.1.117+") && m.contains("Glob, Grep"), "{m}");
    // A version in the applied range: nothing about tools.
    let stubs = stub(&w, "claude", "echo '2.1.200 (Claude Code)'");
    let doc = doctor(&w, Some(&stubs), &[]).json();
    assert!(findings(&doc, "claude", "tools").is_empty(), "{:?}", problems(&doc));
}

#[test]
fn doctor_finds_a_cli_outside_the_tested_range() {
    let w = World::new();
    Install::in_world(&w).runtime("gemini").arg("-q").run().success();
    let stubs = stub(&w, "gemini", "echo 0.99.0");
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let t = &doc["targets"][0];
    assert_eq!((t["cli"]["version"].as_str(), t["cli"]["in_range"].as_bool()), (Some("0.99.0"), Some(false)));
    let cli = findings(&doc, "gemini", "cli");
    assert!(cli[0]["message"].as_str().unwrap().contains("outside the range msd was tested with"), "{cli:?}");
    // The tested version passes; Gemini has no offline listing msd knows: not checked.
    let stubs = stub(&w, "gemini", "echo 0.61.0");
    let doc = doctor(&w, Some(&stubs), &[]).success().json();
    assert_eq!(doc["targets"][0]["cli"]["in_range"], true);
    assert_eq!(findings(&doc, "gemini", "listing")[0]["level"], "not-checked");
}

#[test]
fn doctor_compares_what_the_cli_lists_with_what_msd_wrote() {
    let w = World::new();
    Install::in_world(&w).runtime("pi").arg("-q").run().success();
    // A CLI that lists every prompt msd wrote (from the disk, as Pi does), then one that lost one.
    let lists_all = r#"case "$1" in --version) echo 0.73.1 ;; *) cat >/dev/null; for f in "$HOME"/.pi/agent/prompts/*.md; do n=${f##*/}; printf '{"name":"%s","source":"prompt"}\n' "${n%.md}"; done ;; esac"#;
    let stubs = stub(&w, "pi", lists_all);
    let doc = doctor(&w, Some(&stubs), &[]).success().json();
    assert!(findings(&doc, "pi", "listing").is_empty(), "{:?}", problems(&doc));
    let loses_help = lists_all.replace("do n=${f##*/}; printf", "do n=${f##*/}; [ \"$n\" = msd-help.md ] || printf");
    assert_ne!(loses_help, lists_all);
    let stubs = stub(&w, "pi", &loses_help);
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let l = findings(&doc, "pi", "listing");
    let written = std::fs::read_dir(w.home.join(".pi/agent/prompts")).unwrap().count();
    let want = format!("did not load 1 of the {written} commands msd wrote (msd-help)");
    assert!(l[0]["message"].as_str().unwrap().contains(&want), "{l:?}");
}

#[test]
fn doctor_with_r_reports_a_runtime_without_an_install() {
    let w = World::new();
    let doc = doctor(&w, None, &["pi"]).code(1).json();
    let f = findings(&doc, "pi", "install");
    assert!(f[0]["message"].as_str().unwrap().contains("msd is not installed for Pi"), "{f:?}");
    // Without -r and without installs nothing is wrong.
    doctor(&w, None, &[]).success();
}

#[test]
fn doctor_json_has_a_published_schema() {
    let w = World::new();
    let schema: serde_json::Value =
        serde_json::from_str(&Install::in_world(&w).args(["schema", "--kind", "doctor"]).run().success().stdout())
            .unwrap();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    let doc = doctor(&w, None, &[]).success().json();
    let props = schema["properties"].as_object().unwrap();
    for k in doc.as_object().unwrap().keys() {
        assert!(props.contains_key(k), "`{k}` is in the schema");
    }
    for k in schema["required"].as_array().unwrap() {
        assert!(doc.get(k.as_str().unwrap()).is_some(), "required `{k}` is in the document");
    }
}
