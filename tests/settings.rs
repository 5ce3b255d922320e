//! Settings and config surfaces through the binary: a user's JSONC and TOML files keep their
//! comments, keys and entries through install, reinstall and uninstall; ours are upserted by
//! owner id, never duplicated; a malformed file is left untouched.

use crate::lifecycle::{content_copy, s};
use crate::support::{Install, World, copy_tree, repo};

const USER_SETTINGS: &str = r#"{
  // Personal settings: keep these comments.
  "theme": "dark", /* inline */
  "hooks": {
    "SessionStart": [
      { "hooks": [ { "type": "command", "command": "echo hello" } ] } // my greeting
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "my-guard" }],
      },
    ],
  },
  "permissions": {
    "allow": ["Bash(git status)"],
    "deny": ["Read(./secrets/**)"]
  },
  "unknownKey": { "nested": [1, 2, 3] }
}
"#;

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn settings_jsonc_survives_install_reinstall_and_uninstall() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let claude = w.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let file = claude.join("settings.json");
    std::fs::write(&file, USER_SETTINGS).unwrap();
    Install::in_world(&w).content(&c).run().success();
    let after = std::fs::read_to_string(&file).unwrap();
    for keep in [
        "// Personal settings: keep these comments.",
        "/* inline */",
        "// my greeting",
        "\"command\": \"echo hello\"",
        "my-guard",
        "Bash(git status)",
        "Read(./secrets/**)",
        "\"unknownKey\": { \"nested\": [1, 2, 3] }",
    ] {
        assert!(after.contains(keep), "lost {keep}:\n{after}");
    }
    let core = claude.join("msd-core");
    let hook = format!("\"{}/bin/msd_run hook session-start --watch-config\"", core.display());
    assert_eq!(count(&after, &hook), 1, "{after}");
    assert_eq!(count(&after, "hook guard\""), 1);
    assert_eq!(count(&after, &format!("Bash({}/bin/msd_run:*)", core.display())), 1);
    // Still valid JSONC that a strict parser reads once comments are gone: the structure holds.
    let v = jsonc(&after);
    assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
    assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Write|Edit|MultiEdit|NotebookEdit");
    // Reinstall: byte-identical, no duplicates.
    let ran = Install::in_world(&w).content(&c).json().run().success();
    assert_eq!(ran.json()["runtimes"][0]["settings"][0]["action"], "keep");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
    // An upgrade that moves the home changes our entries in place, still once each.
    let moved = w.tmp.path().join("moved-claude");
    copy_tree(&claude, &moved);
    Install::in_world(&w).content(&c).args(["--config-dir", &s(&moved)]).run().success();
    let m = std::fs::read_to_string(moved.join("settings.json")).unwrap();
    assert_eq!(count(&m, "hook session-start"), 1, "{m}");
    assert!(m.contains(&format!("{}/msd-core/bin/msd_run", moved.display())));
    assert!(!m.contains(&format!("{}/bin/msd_run", core.display())), "the old entry was replaced: {m}");
    // Uninstall: exactly the user's file again.
    Install::in_world(&w).uninstall().run().success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), USER_SETTINGS);
    Install::in_world(&w).uninstall().args(["--config-dir", &s(&moved)]).run().success();
    assert_eq!(std::fs::read_to_string(moved.join("settings.json")).unwrap(), USER_SETTINGS);
}

fn jsonc(text: &str) -> serde_json::Value {
    let root = jsonc_parser::cst::CstRootNode::parse(text, &Default::default()).unwrap();
    root.value().unwrap().to_serde_value().unwrap()
}

#[test]
fn settings_malformed_file_is_left_untouched() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let claude = w.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let bad = "{\n  \"theme\": \"dark\",,\n  // oops\n}\n";
    std::fs::write(claude.join("settings.json"), bad).unwrap();
    Install::in_world(&w)
        .content(&c)
        .run()
        .code(3)
        .stderr_has("settings.json:2: not valid JSON")
        .stderr_has("hint: fix the file's syntax");
    assert_eq!(std::fs::read_to_string(claude.join("settings.json")).unwrap(), bad);
    assert!(!claude.join("msd-core").exists(), "nothing was written");
    // Not an object at the top.
    std::fs::write(claude.join("settings.json"), "[1, 2]\n").unwrap();
    Install::in_world(&w).content(&c).run().code(3).stderr_has("top level is not an object");
    // `hooks` of the wrong shape is refused too, not overwritten.
    std::fs::write(claude.join("settings.json"), "{\"hooks\": [\"x\"]}\n").unwrap();
    Install::in_world(&w).content(&c).run().code(3);
    assert_eq!(std::fs::read_to_string(claude.join("settings.json")).unwrap(), "{\"hooks\": [\"x\"]}\n");
}

#[test]
fn settings_an_entry_the_user_already_has_stays_theirs() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let claude = w.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let mine = format!(
        "{{\n  \"permissions\": {{ \"allow\": [\"Bash({}/msd-core/bin/msd_run:*)\"] }}\n}}\n",
        claude.display()
    );
    std::fs::write(claude.join("settings.json"), &mine).unwrap();
    Install::in_world(&w).content(&c).run().success().stdout_has("it stays yours");
    let after = std::fs::read_to_string(claude.join("settings.json")).unwrap();
    assert_eq!(count(&after, "msd_run:*)"), 1, "not duplicated: {after}");
    Install::in_world(&w).uninstall().run().success();
    assert_eq!(std::fs::read_to_string(claude.join("settings.json")).unwrap(), mine, "the user's entry stays");
}

#[test]
fn settings_codex_toml_and_hooks_json() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let codex = w.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let toml = "# my codex\nmodel = \"o3\" # favourite\n\n[features]\n# search on\nweb_search = true\n\n[profiles.fast]\nmodel = \"mini\"\n";
    std::fs::write(codex.join("config.toml"), toml).unwrap();
    Install::in_world(&w).runtime("codex").content(&c).run().success();
    let after = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(
        after.starts_with(
            "# my codex\nmodel = \"o3\" # favourite\n\n[features]\n# search on\nweb_search = true\nhooks = true\n"
        ),
        "{after}"
    );
    assert!(after.contains("[profiles.fast]\nmodel = \"mini\"\n"));
    let hooks: serde_json::Value = serde_json::from_slice(&std::fs::read(codex.join("hooks.json")).unwrap()).unwrap();
    assert_eq!(
        hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        format!("{}/msd-core/bin/msd_run hook session-start", codex.display())
    );
    Install::in_world(&w).runtime("codex").content(&c).run().success();
    assert_eq!(std::fs::read_to_string(codex.join("config.toml")).unwrap(), after, "reinstall changes nothing");
    Install::in_world(&w).uninstall().runtime("codex").run().success();
    assert_eq!(std::fs::read_to_string(codex.join("config.toml")).unwrap(), toml);
    assert!(!codex.join("hooks.json").exists(), "a file we created and emptied is removed");
}

#[test]
fn settings_kimi_cli_config_toml_gets_only_our_hook_table() {
    // Kimi CLI reads `[[hooks]]` tables of `~/.kimi/config.toml` (kimi-cli@1.52.0:
    // kimi_cli/config.py:241): ours is appended after the user's own, theirs and every comment
    // stay byte-for-byte, and uninstall gives the file back as it was.
    let w = World::new();
    let c = content_copy(&w, "content");
    let kimi = w.home.join(".kimi");
    std::fs::create_dir_all(&kimi).unwrap();
    let toml = "# my kimi\ndefault_model = \"k2\" # favourite\n\n[models.k2]\nprovider = \"moonshot\"\nmodel = \"kimi-k2\"\nmax_context_size = 262144\n\n[providers.moonshot]\ntype = \"kimi\"\nbase_url = \"https://api.moonshot.ai/v1\"\napi_key = \"sk-x\"\n\n# my audit hook\n[[hooks]]\nevent = \"PostToolUse\" # after every tool\ncommand = \"my-audit\"\n";
    std::fs::write(kimi.join("config.toml"), toml).unwrap();
    Install::in_world(&w).runtime("kimi").content(&c).run().success();
    let after = std::fs::read_to_string(kimi.join("config.toml")).unwrap();
    assert!(after.starts_with(toml), "{after}");
    let ours = &after[toml.len()..];
    let helper = format!("{}/msd-core/bin/msd_run", kimi.display());
    assert_eq!(
        ours,
        format!(
            "\n[[hooks]]\nevent = \"PreToolUse\"\nmatcher = \"^(WriteFile|StrReplaceFile|ReadFile)$\"\ncommand = \"{helper} hook guard\"\ntimeout = 10\n"
        ),
        "{after}"
    );
    Install::in_world(&w).verify().runtime("kimi").run().success();
    Install::in_world(&w).runtime("kimi").content(&c).run().success();
    assert_eq!(std::fs::read_to_string(kimi.join("config.toml")).unwrap(), after, "reinstall changes nothing");
    Install::in_world(&w).uninstall().runtime("kimi").run().success();
    assert_eq!(std::fs::read_to_string(kimi.join("config.toml")).unwrap(), toml);
}

#[test]
fn settings_hermes_config_yaml_gets_only_our_hooks() {
    // Hermes reads shell hooks from `hooks:` in `~/.hermes/config.yaml` (hermes-agent@0.19.0:
    // agent/shell_hooks.py:305): ours go under its events beside the user's, every comment and
    // other key stays byte-for-byte, and uninstall gives the file back as it was, also after the
    // user edited it.
    let w = World::new();
    // The shipped content: Hermes' nested skills layout needs its command groups.
    let c = repo().join("content");
    let hermes = w.home.join(".hermes");
    std::fs::create_dir_all(&hermes).unwrap();
    let yaml = "# my hermes\nmodel:\n  default: anthropic/claude-sonnet-4 # fav\n\nhooks:\n  # audit every tool\n  post_tool_call:\n  - command: ~/bin/audit.sh\n  pre_tool_call:\n    - matcher: terminal\n      command: ~/bin/no-rm.sh\n      timeout: 5\nhooks_auto_accept: false\n";
    std::fs::write(hermes.join("config.yaml"), yaml).unwrap();
    Install::in_world(&w).runtime("hermes").content(&c).run().success().stdout_has("answer y to its prompt");
    let after = std::fs::read_to_string(hermes.join("config.yaml")).unwrap();
    let helper = format!("{}/msd-core/bin/msd_run", hermes.display());
    let want = format!(
        "# my hermes\nmodel:\n  default: anthropic/claude-sonnet-4 # fav\n\nhooks:\n  # audit every tool\n  post_tool_call:\n  - command: ~/bin/audit.sh\n  pre_tool_call:\n    - matcher: terminal\n      command: ~/bin/no-rm.sh\n      timeout: 5\n    - matcher: \"write_file|patch|read_file\"\n      command: \"{helper} hook guard --protocol hermes\"\n      timeout: 10\n  pre_llm_call:\n    - command: \"{helper} hook session-start --once-per-session --protocol hermes\"\n      timeout: 10\nhooks_auto_accept: false\n"
    );
    assert_eq!(after, want);
    Install::in_world(&w).verify().runtime("hermes").run().success();
    Install::in_world(&w).runtime("hermes").content(&c).run().success();
    assert_eq!(std::fs::read_to_string(hermes.join("config.yaml")).unwrap(), after, "reinstall changes nothing");
    // The user adds a key after the install: uninstall takes out exactly our two items.
    std::fs::write(hermes.join("config.yaml"), format!("{after}# later\n")).unwrap();
    Install::in_world(&w).uninstall().runtime("hermes").run().success();
    assert_eq!(std::fs::read_to_string(hermes.join("config.yaml")).unwrap(), format!("{yaml}# later\n"));
}

#[test]
fn settings_hermes_flow_style_hooks_are_left_untouched() {
    let w = World::new();
    // The shipped content: Hermes' nested skills layout needs its command groups.
    let c = repo().join("content");
    let hermes = w.home.join(".hermes");
    std::fs::create_dir_all(&hermes).unwrap();
    let yaml = "hooks: {pre_tool_call: [{command: mine}]}\n";
    std::fs::write(hermes.join("config.yaml"), yaml).unwrap();
    Install::in_world(&w).runtime("hermes").content(&c).run().code(3).stderr_has("config.yaml");
    assert_eq!(std::fs::read_to_string(hermes.join("config.yaml")).unwrap(), yaml);
}

#[test]
fn settings_codex_legacy_codex_hooks_key_is_replaced_by_features_hooks_on_upgrade() {
    // Codex 0.171.0 reads `[features] codex_hooks` as a deprecated alias of `hooks` and says so
    // in every session: an install that wrote the old key moves to the new one.
    let w = World::new();
    let c = content_copy(&w, "content");
    let old = w.tmp.path().join("old-runtimes");
    copy_tree(&repo().join("runtimes"), &old);
    let p = old.join("codex/capability.json");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("\"feature:hooks\"", "\"feature:codex-hooks\"")
        .replace("\"features\",\n            \"hooks\"", "\"features\",\n            \"codex_hooks\"");
    assert!(text.contains("codex_hooks"), "the old manifest is built");
    std::fs::write(&p, text).unwrap();
    Install::in_world(&w).runtime("codex").content(&c).args(["--runtimes", &s(&old)]).run().success();
    let codex = w.home.join(".codex");
    assert!(std::fs::read_to_string(codex.join("config.toml")).unwrap().contains("codex_hooks = true"));
    Install::in_world(&w).runtime("codex").content(&c).run().success();
    let after = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    let doc: toml_edit::DocumentMut = after.parse().unwrap();
    assert_eq!(doc["features"]["hooks"].as_bool(), Some(true), "{after}");
    assert!(!after.contains("codex_hooks"), "{after}");
}

#[test]
fn settings_a_user_value_wins_over_ours() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let codex = w.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let toml = "[features]\nhooks = false\n";
    std::fs::write(codex.join("config.toml"), toml).unwrap();
    Install::in_world(&w).runtime("codex").content(&c).run().success().stdout_has("kept your value false");
    let installed = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(installed.starts_with(toml) && installed.matches("hooks =").count() == 1, "{installed}");
    Install::in_world(&w).uninstall().runtime("codex").run().success();
    assert_eq!(std::fs::read_to_string(codex.join("config.toml")).unwrap(), toml);
}

#[test]
fn settings_malformed_toml_is_left_untouched() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let codex = w.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let bad = "model = \"o3\"\n[features\n";
    std::fs::write(codex.join("config.toml"), bad).unwrap();
    Install::in_world(&w).runtime("codex").content(&c).run().code(3).stderr_has("config.toml:2: not valid TOML");
    assert_eq!(std::fs::read_to_string(codex.join("config.toml")).unwrap(), bad);
    assert!(!codex.join("msd-core").exists());
}

/// The runtimes tree with one extra surface on claude: a marked block in CLAUDE.md.
fn runtimes_with_block(w: &World) -> std::path::PathBuf {
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    let path = dir.join("claude/capability.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["settings"].as_array_mut().unwrap().push(serde_json::json!({
        "file": "CLAUDE.md",
        "format": "markdown",
        "entries": [{"id": "msd-core", "kind": "block", "text": "msd-core lives in {{core}}; start with /msd-help.\n"}]
    }));
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    dir
}

#[test]
fn settings_marked_block_in_an_instruction_file() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let rt = runtimes_with_block(&w);
    let claude = w.home.join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let mine = "# My instructions\n\nBe terse.";
    std::fs::write(claude.join("CLAUDE.md"), mine).unwrap();
    let args = ["--content", &s(&c), "--runtimes", &s(&rt)];
    Install::in_world(&w).args(args).run().success();
    let after = std::fs::read_to_string(claude.join("CLAUDE.md")).unwrap();
    assert_eq!(
        after,
        format!(
            "{mine}\n\n<!-- msd-install:begin msd-core -->\nmsd-core lives in {}/msd-core; start with /msd-help.\n<!-- msd-install:end msd-core -->\n",
            claude.display()
        )
    );
    Install::in_world(&w).args(args).run().success();
    assert_eq!(std::fs::read_to_string(claude.join("CLAUDE.md")).unwrap(), after, "no second block");
    Install::in_world(&w).uninstall().args(["--runtimes", &s(&rt)]).run().success();
    assert_eq!(std::fs::read_to_string(claude.join("CLAUDE.md")).unwrap(), mine);
    // A begin marker without its end is an error that leaves the file alone.
    let broken = "x\n<!-- msd-install:begin msd-core -->\ny\n";
    std::fs::write(claude.join("CLAUDE.md"), broken).unwrap();
    Install::in_world(&w).args(args).run().code(3).stderr_has("CLAUDE.md:2:");
    assert_eq!(std::fs::read_to_string(claude.join("CLAUDE.md")).unwrap(), broken);
}

#[test]
fn settings_bad_surface_in_a_manifest_is_refused() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    let path = dir.join("claude/capability.json");
    let text = std::fs::read_to_string(&path).unwrap().replace("{{msd_run}} hook guard\"", "{{nope}} hook guard\"");
    std::fs::write(&path, text).unwrap();
    Install::in_world(&w).content(&c).args(["--runtimes", &s(&dir)]).run().code(3).stderr_has("unknown placeholder");
    assert!(!w.home.join(".claude").exists());
    // The helper's bare path is for a field no shell reads: inside a command string it is refused.
    copy_tree(&repo().join("runtimes"), &dir);
    let codex = dir.join("codex/capability.json");
    let text = std::fs::read_to_string(&codex).unwrap().replacen("\"{{msd_run_exe}}\"", "\"{{msd_run_exe}} --x\"", 1);
    std::fs::write(&codex, text).unwrap();
    Install::in_world(&w)
        .runtime("codex")
        .content(&c)
        .args(["--runtimes", &s(&dir)])
        .run()
        .code(3)
        .stderr_has("stands alone");
}

/// Issue 15, item 6: an owned entry the user edited (a changed timeout) is found by its owner,
/// reported and backed up, never duplicated nor left dangling; a file with two `"hooks"` keys
/// is refused, located; a duplicated msd block is refused.
#[test]
fn settings_edited_owned_entries_and_duplicates() {
    let r = Install::new().run().success();
    let path = r.path("~/.claude/settings.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("\"timeout\": 10", "\"timeout\": 99", 1);
    assert_ne!(edited, text);
    std::fs::write(&path, &edited).unwrap();
    let r = r.then().json().run().success();
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after.matches("msd_run hook session-start").count(), 1, "not duplicated:\n{after}");
    let doc = r.json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(written["backed_up"], serde_json::json!(["settings.json"]), "{doc}");
    let backup = std::path::PathBuf::from(written["backup_dir"].as_str().unwrap()).join("settings.json");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), edited);
    let notes = doc["runtimes"][0]["settings"][0]["notes"].to_string();
    assert!(notes.contains("you edited msd's `hook:session-start`"), "{notes}");
    // Edited again, then uninstalled: no msd hook is left pointing at the removed helper.
    std::fs::write(&path, std::fs::read_to_string(&path).unwrap().replacen("\"timeout\": 10", "\"timeout\": 7", 1))
        .unwrap();
    let r = r.then().arg("uninstall").run().success();
    if let Ok(left) = std::fs::read_to_string(&path) {
        assert!(!left.contains("msd_run"), "dangling:\n{left}");
    }
    // Two "hooks" keys: refused with the line, the file untouched.
    let twice = "{\n  \"hooks\": {},\n  \"model\": \"x\",\n  \"hooks\": {\"Stop\": []}\n}\n";
    std::fs::write(&path, twice).unwrap();
    let r = r.then().run().code(3).stderr_has("settings.json:4").stderr_has("`hooks` occurs twice");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), twice);
    drop(r);
}
