//! Migrations through the binary: layout 1 (core tree in `<home>/msd/`) becomes layout 2
//! (`<home>/msd-core/`) without orphans or lost edits, is recorded once, is reverted when the
//! run fails, and is finished by the next run when killed half-way.

use std::path::Path;

use crate::lifecycle::{assert_whole, content_copy};
use crate::support::{Install, World, tree};

/// Turns a layout-2 install into what layout 1 left: the core tree in `msd/`, its manifest's
/// paths under `msd/`, no install state.
fn make_layout_1(home: &Path) {
    std::fs::remove_file(home.join("msd-core/msd-install-state.json")).unwrap();
    std::fs::rename(home.join("msd-core"), home.join("msd")).unwrap();
    let mpath = home.join("msd/msd-file-manifest.json");
    let m = std::fs::read_to_string(&mpath).unwrap().replace("\"msd-core/", "\"msd/");
    let mut v: serde_json::Value = serde_json::from_str(&m).unwrap();
    v["files"].as_array_mut().unwrap().sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    std::fs::write(&mpath, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
}

#[test]
fn migrations_core_dir_rename_keeps_edits_and_leaves_no_orphans() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    let fresh = tree(&home);
    let entries = |home: &Path| {
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(home.join("msd-core/msd-install-state.json")).unwrap()).unwrap();
        state["settings"]["settings.json"]["entries"].as_object().unwrap().len()
    };
    let fresh_entries = entries(&home);
    assert!(fresh_entries > 0);
    make_layout_1(&home);
    std::fs::write(home.join("msd/references/rules.md"), "my edit\n").unwrap();
    std::fs::write(home.join("msd/my-notes.md"), "notes\n").unwrap();
    let doc = Install::in_world(&w).content(&c).json().run().success().json();
    let r = &doc["runtimes"][0];
    assert_eq!(r["migrations"], serde_json::json!([{"id": "core-dir-msd-to-msd-core", "applied": true}]));
    assert!(!home.join("msd").exists(), "no orphaned layout-1 tree");
    assert_eq!(r["written"]["backed_up"], serde_json::json!(["msd-core/references/rules.md"]));
    let backup = std::path::PathBuf::from(r["written"]["backup_dir"].as_str().unwrap());
    assert_eq!(std::fs::read(backup.join("msd-core/references/rules.md")).unwrap(), b"my edit\n");
    assert_eq!(std::fs::read(home.join("msd-core/my-notes.md")).unwrap(), b"notes\n", "a user file moves along");
    assert_whole(&home);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("msd-core/msd-install-state.json")).unwrap()).unwrap();
    assert_eq!(state["migrations"][0]["id"], "core-dir-msd-to-msd-core");
    assert_eq!(state["migrations"][0]["outcome"], "applied");
    assert_eq!(
        entries(&home),
        fresh_entries,
        "settings entries of the old layout are ours again, so uninstall removes them"
    );
    // Recorded: the next run does not run it again and changes nothing.
    let doc = Install::in_world(&w).content(&c).json().run().json();
    assert_eq!(doc["runtimes"][0]["migrations"], serde_json::json!([]), "{doc}");
    assert_eq!(doc["runtimes"][0]["summary"]["added"], 0);
    for (k, v) in &fresh {
        if !k.starts_with("msd-core/msd-install-state.json") {
            assert_eq!(&std::fs::read(home.join(k)).unwrap(), v, "{k}");
        }
    }
}

#[test]
fn migrations_fresh_install_records_them_as_not_needed() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.home.join(".claude/msd-core/msd-install-state.json")).unwrap())
            .unwrap();
    assert_eq!(state["migrations"][0]["outcome"], "not-needed");
}

#[test]
fn migrations_are_reverted_when_the_run_fails() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    make_layout_1(&home);
    // Something in the way of a file the install must write: planning fails after migrating.
    std::fs::remove_file(home.join("skills/msd-plan/SKILL.md")).unwrap();
    std::fs::create_dir_all(home.join("skills/msd-plan/SKILL.md")).unwrap();
    let before = tree(&home);
    Install::in_world(&w).content(&c).run().code(4);
    assert_eq!(tree(&home), before, "layout 1 is back, byte for byte");
    assert!(home.join("msd").is_dir() && !home.join("msd-core").exists());
}

#[test]
fn migrations_killed_half_way_are_finished_by_the_next_run() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    make_layout_1(&home);
    let template = w.tmp.path().join("template");
    crate::support::copy_tree(&home, &template);
    for n in 0..3 {
        std::fs::remove_dir_all(&home).unwrap();
        crate::support::copy_tree(&template, &home);
        Install::in_world(&w).content(&c).env("MSD_INSTALL_FAULT_AFTER", n.to_string()).run().failure();
        Install::in_world(&w).content(&c).run().success();
        assert!(!home.join("msd").exists(), "N={n}");
        assert_whole(&home);
        Install::in_world(&w).verify().arg("--quiet").run().success();
    }
}
