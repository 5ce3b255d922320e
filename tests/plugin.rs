//! `msd-install emit --plugin DIR`: a Claude Code marketplace with one plugin carrying the
//! Claude Code emission, its hooks (from the manifest's settings entries) and the helper.

use std::path::Path;

use crate::support::{Install, World};

#[test]
fn plugin_emit_writes_a_marketplace_the_emission_its_hooks_and_the_helper() {
    let w = World::new();
    let dir = w.tmp.path().join("market");
    Install::in_world(&w)
        .args(["emit", "--plugin"])
        .arg(&dir)
        .run()
        .success()
        .stdout_has("not in the plugin (settings a plugin cannot carry): settings.json: statusline")
        .stdout_has(&format!("claude plugin marketplace add {}", dir.display()));
    let read = |rel: &str| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))).unwrap()
    };
    let market = read(".claude-plugin/marketplace.json");
    assert_eq!(market["plugins"][0]["source"], "./plugins/msd-core", "{market}");
    let plugin = read("plugins/msd-core/.claude-plugin/plugin.json");
    assert_eq!(plugin["version"], env!("CARGO_PKG_VERSION"));
    let hooks = read("plugins/msd-core/hooks/hooks.json");
    // Every hook event of Claude Code's global settings entries, the helper under the plugin root.
    let cap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(crate::support::repo().join("runtimes/claude/capability.json")).unwrap())
            .unwrap();
    let mut events = Vec::new();
    for s in cap["settings"].as_array().unwrap() {
        for e in s["entries"].as_array().unwrap() {
            if e["at"][0] == "hooks" && s["scopes"].as_array().is_none_or(|v| v.iter().any(|x| x == "global")) {
                events.push(e["at"][1].as_str().unwrap().to_string());
            }
        }
    }
    assert!(!events.is_empty());
    for ev in &events {
        let cmd = hooks["hooks"][ev][0]["hooks"][0]["command"].as_str().unwrap_or_else(|| panic!("{ev}: {hooks}"));
        assert!(cmd.starts_with("\"${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run\" hook "), "{cmd}");
    }
    let helper = dir.join("plugins/msd-core/msd-core/bin/msd_run");
    let out = std::process::Command::new(&helper).arg("--version").output().unwrap();
    assert!(out.status.success(), "the plugin's helper runs");
    for rel in ["plugins/msd-core/skills/msd-new-project/SKILL.md", "plugins/msd-core/agents"] {
        assert!(dir.join(rel).exists(), "{rel}");
    }
    // Never into a directory that holds something.
    Install::in_world(&w).args(["emit", "--plugin"]).arg(&dir).run().code(2).stderr_has("is not empty");
}

/// Claude Code copies an installed plugin into its cache, so no file of the plugin may name the
/// directory `emit --plugin` wrote: each names its root as `${CLAUDE_PLUGIN_ROOT}`, which Claude
/// Code fills in for skills, agents and hooks (`src/cli/commands/plugin.rs` says where). Moved
/// elsewhere and expanded as Claude Code expands it, every include of every skill still resolves.
#[test]
fn plugin_emit_names_no_path_of_where_it_was_written() {
    let w = World::new();
    let dir = w.tmp.path().join("market");
    Install::in_world(&w).args(["emit", "--plugin"]).arg(&dir).run().success();
    let written = dir.to_string_lossy().into_owned();
    let root = dir.join("plugins/msd-core");
    // Claude Code's copy: somewhere else, the marketplace directory gone.
    let cache = w.tmp.path().join("cache/msd-core/0.3.5");
    std::fs::create_dir_all(cache.parent().unwrap()).unwrap();
    std::fs::rename(&root, &cache).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut naming = Vec::new();
    let mut includes = 0;
    let mut stack = vec![cache.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else { continue };
            if text.contains(&written) || text.contains("msd-plugin-root") {
                naming.push(p.strip_prefix(&cache).unwrap().display().to_string());
            }
            let rel = p.strip_prefix(&cache).unwrap().to_string_lossy().into_owned();
            if rel.starts_with("skills/") || rel.starts_with("agents/") {
                // What Claude Code sends: `${CLAUDE_PLUGIN_ROOT}` replaced by the plugin's path.
                let expanded = text.replace("${CLAUDE_PLUGIN_ROOT}", &cache.to_string_lossy());
                for line in expanded.lines().filter(|l| l.starts_with('@')) {
                    includes += 1;
                    assert!(Path::new(&line[1..]).is_file(), "{rel}: {line} is no file of the moved plugin");
                }
            }
        }
    }
    assert!(naming.is_empty(), "{} files name {written}: {:?}", naming.len(), &naming[..naming.len().min(5)]);
    assert!(includes > 50, "the skills include their workflows ({includes})");
    let help = std::fs::read_to_string(cache.join("skills/msd-help/SKILL.md")).unwrap();
    assert!(help.contains("\n@${CLAUDE_PLUGIN_ROOT}/msd-core/workflows/help.md\n"), "{help}");
    // Shell lines of the workflows name the helper under $CLAUDE_PLUGIN_ROOT, which a
    // SessionStart hook exports to Claude Code's Bash commands through $CLAUDE_ENV_FILE.
    let progress = std::fs::read_to_string(cache.join("msd-core/workflows/progress.md")).unwrap();
    assert!(progress.contains("${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run "), "{progress}");
    let hooks: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cache.join("hooks/hooks.json")).unwrap()).unwrap();
    let start = hooks["hooks"]["SessionStart"].as_array().unwrap();
    let env_hook = start
        .iter()
        .filter_map(|h| h["hooks"][0]["command"].as_str())
        .find(|c| c.contains("CLAUDE_ENV_FILE"))
        .unwrap_or_else(|| panic!("no SessionStart hook exports the root: {hooks}"));
    // Run as Claude Code runs it (`/bin/sh`, the root in its environment): a line bash sources.
    let env_file = w.tmp.path().join("env.sh");
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", env_hook])
        .env("CLAUDE_ENV_FILE", &env_file)
        .env("CLAUDE_PLUGIN_ROOT", &cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let helper = std::process::Command::new("/bin/sh")
        .args(["-c", ". \"$1\" && \"${CLAUDE_PLUGIN_ROOT}/msd-core/bin/msd_run\" --version", "sh"])
        .arg(&env_file)
        .env_remove("CLAUDE_PLUGIN_ROOT")
        .output()
        .unwrap();
    assert!(helper.status.success(), "the helper runs from the moved plugin: {helper:?}");
}
