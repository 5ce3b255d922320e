//! `msd-install emit --plugin DIR`: a Claude Code marketplace with one plugin carrying the
//! Claude Code emission, its hooks (from the manifest's settings entries) and the helper.

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
