//! Versions are visible: an install that moves a target from one version to another says so and
//! where the changes are described, `status` marks installs older than the binary, a binary
//! older than an install refuses to downgrade it; and every summary ends with how to begin.

use crate::support::{Install, World, plan_execute_tree};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const MANIFEST: &str = ".claude/msd-core/msd-file-manifest.json";

/// Rewrites the version recorded in `w`'s Claude Code install, as if `version` had written it.
fn recorded_as(w: &World, version: &str) {
    let path = w.home.join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap();
    let needle = format!("\"tool_version\": \"{VERSION}\"");
    assert!(text.contains(&needle), "{text}");
    std::fs::write(&path, text.replace(&needle, &format!("\"tool_version\": \"{version}\""))).unwrap();
}

fn recorded(w: &World) -> String {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(w.home.join(MANIFEST)).unwrap()).unwrap();
    doc["tool_version"].as_str().unwrap().to_string()
}

#[test]
fn versions_an_upgrade_names_both_versions_and_the_changelog() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").run().success().stdout_lacks(" -> 0.");
    recorded_as(&w, "0.0.1");

    let status = Install::in_world(&w).status().run().success();
    status.stdout_has("0.0.1 (older)").stdout_has(&format!(
        "hint: claude (global) is 0.0.1, older than this msd-install {VERSION}: `msd-install -r claude` updates it"
    ));
    let doc = Install::in_world(&w).status().json().run().success().json();
    assert_eq!(doc["installs"][0]["older_than_binary"], true, "{doc}");

    let changelog = format!("{}/blob/main/CHANGELOG.md", env!("CARGO_PKG_REPOSITORY"));
    Install::in_world(&w)
        .runtime("claude")
        .dry_run()
        .run()
        .success()
        .stdout_has(&format!("claude (global): 0.0.1 -> {VERSION} once installed"));
    assert_eq!(recorded(&w), "0.0.1", "a dry run writes nothing");
    Install::in_world(&w)
        .runtime("claude")
        .run()
        .success()
        .stdout_has(&format!("claude (global): 0.0.1 -> {VERSION} (what changed: {changelog})"));
    assert_eq!(recorded(&w), VERSION);
    let doc = Install::in_world(&w).status().json().run().success().json();
    assert_eq!(doc["installs"][0]["older_than_binary"], false, "{doc}");
    Install::in_world(&w).status().run().success().stdout_lacks("(older)").stdout_lacks("hint:");
}

#[test]
fn versions_a_newer_install_is_not_downgraded_unless_asked() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").run().success();
    recorded_as(&w, "999.0.0");
    let before = crate::support::tree(&w.home.join(".claude"));
    Install::in_world(&w)
        .runtime("claude")
        .run()
        .code(6)
        .stderr_has(&format!("claude (global) was installed by msd-install 999.0.0, newer than this one ({VERSION})"))
        .stderr_has("--allow-downgrade");
    assert!(before == crate::support::tree(&w.home.join(".claude")), "the refused run wrote nothing");
    let doc = Install::in_world(&w).runtime("claude").json().run().code(6).json();
    assert_eq!(doc["exit_code"], 6, "{doc}");
    Install::in_world(&w)
        .runtime("claude")
        .arg("--allow-downgrade")
        .run()
        .success()
        .stdout_has(&format!("claude (global): 999.0.0 -> {VERSION} (a downgrade, allowed by --allow-downgrade"));
    assert_eq!(recorded(&w), VERSION);
}

#[test]
fn versions_the_summary_ends_with_each_runtimes_way_to_begin() {
    let w = World::new();
    let text = Install::in_world(&w).all().run().success().stdout();
    let runtimes = msd_install::pipeline::load_runtimes(&Default::default()).unwrap();
    assert!(runtimes.len() > 10);
    for rt in &runtimes {
        let first = rt.capability.command_ref.replace("{stem}", "new-project");
        let line = format!("next: start {} in a project and type {first}\n", rt.capability.title);
        assert!(text.contains(&line), "{}: `{line}` in\n{text}", rt.capability.id);
    }
    // The syntaxes differ, each the runtime's own.
    for (title, first) in [
        ("Claude Code", "/msd-new-project"),
        ("Codex", "$msd-new-project"),
        ("Gemini CLI", "/msd:new-project"),
        ("Kimi CLI", "/skill:msd-new-project"),
    ] {
        assert!(text.contains(&format!("next: start {title} in a project and type {first}\n")), "{title}\n{text}");
    }
    assert_eq!(text.matches("next: ").count(), runtimes.len(), "{text}");
    assert!(text.trim_end().lines().last().unwrap().starts_with("next: "), "the summary ends with it\n{text}");

    // Local: this project; content without the command: no line; dry run: none.
    Install::in_world(&w)
        .runtime("gemini")
        .local()
        .run()
        .success()
        .stdout_has("next: start Gemini CLI in this project and type /msd:new-project\n");
    let tree = plan_execute_tree(&w, "small", "Plan.\n");
    Install::in_world(&w).runtime("codex").content(&tree).run().success().stdout_lacks("next:");
    Install::in_world(&w).runtime("claude").dry_run().run().success().stdout_lacks("next:");
}

#[test]
fn versions_the_readme_names_each_runtimes_way_to_begin_and_locked_cargo_installs() {
    let readme = std::fs::read_to_string(crate::support::repo().join("README.md")).unwrap();
    for rt in msd_install::pipeline::load_runtimes(&Default::default()).unwrap() {
        let c = &rt.capability;
        let row = format!("| {} | `{}` | `{}` |", c.title, c.id, c.command_ref.replace("{stem}", "new-project"));
        assert!(readme.contains(&row), "README.md's runtimes table has `{row}`");
    }
    for line in readme.lines().filter(|l| l.contains("cargo install ")) {
        assert!(line.contains("cargo install --locked"), "`cargo install` lines carry --locked: {line}");
    }
}
