//! The install lifecycle through the binary: upgrades that keep the user's work, uninstall,
//! verify, recovery, progress output and exit codes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::{Install, World, copy_tree, fixture, sha256, tree};

/// A writable copy of the starter content.
pub fn content_copy(w: &World, name: &str) -> PathBuf {
    let dir = w.tmp.path().join(name);
    copy_tree(&fixture("starter"), &dir);
    dir
}

/// Regenerates a modified content tree's section manifest (a dropped command leaves it).
pub fn regen(w: &World, content: &Path) {
    Install::in_world(w).args(["gen", "section-manifest", "--write"]).content(content).run().success();
}

pub fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Every manifest entry matches the disk, byte for byte.
pub fn assert_whole(home: &Path) {
    assert_whole_except(home, &[]);
}

/// Every manifest entry but the user-edited `except` matches the disk, byte for byte.
pub fn assert_whole_except(home: &Path, except: &[&str]) {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.join("msd-core/msd-file-manifest.json")).unwrap()).unwrap();
    for f in m["files"].as_array().unwrap() {
        let p = f["path"].as_str().unwrap();
        if except.contains(&p) {
            continue;
        }
        let bytes = std::fs::read(home.join(p)).unwrap_or_else(|e| panic!("{p} missing: {e}"));
        assert_eq!(f["sha256"].as_str().unwrap(), sha256(&bytes), "{p} differs from the manifest");
    }
}

#[test]
fn lifecycle_upgrade_backs_up_keeps_and_removes_byte_for_byte() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    // Between installs the user edits two managed files (one the new version changes, one it
    // drops), deletes a third, and adds files of their own, inside and outside our directories.
    std::fs::write(home.join("msd-core/references/rules.md"), "my rules\n").unwrap();
    std::fs::write(home.join("skills/msd-execute/SKILL.md"), "my execute\n").unwrap();
    std::fs::remove_file(home.join("msd-core/workflows/plan/steps/plan-prd.md")).unwrap();
    std::fs::write(home.join("msd-core/my-notes.md"), "notes\n").unwrap();
    std::fs::create_dir_all(home.join("skills/mine")).unwrap();
    std::fs::write(home.join("skills/mine/SKILL.md"), "mine\n").unwrap();
    let user_before: BTreeMap<_, _> =
        tree(&home).into_iter().filter(|(k, _)| k == "msd-core/my-notes.md" || k.starts_with("skills/mine")).collect();
    // The new version changes rules.md, drops the execute command and adds a reference.
    std::fs::write(c.join("msd-core/references/rules.md"), "# Rules v2\n").unwrap();
    std::fs::remove_file(c.join("commands/msd/execute.md")).unwrap();
    std::fs::write(c.join("msd-core/references/new.md"), "# New\n").unwrap();
    regen(&w, &c);
    // No progress bars when stderr is piped.
    let doc = Install::in_world(&w).content(&c).json().run().success().stderr_empty().json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(
        written["backed_up"],
        serde_json::json!(["msd-core/references/rules.md", "skills/msd-execute/SKILL.md"])
    );
    let backup = PathBuf::from(written["backup_dir"].as_str().unwrap());
    let backed: BTreeMap<_, _> = tree(&backup);
    assert_eq!(backed["msd-core/references/rules.md"], b"my rules\n");
    assert_eq!(backed["skills/msd-execute/SKILL.md"], b"my execute\n");
    assert_eq!(backed.len(), 3, "the two edits and backup-meta.json: {:?}", backed.keys());
    let meta: serde_json::Value = serde_json::from_slice(&backed["backup-meta.json"]).unwrap();
    assert_eq!(meta["from_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(meta["files"][0]["reason"], "user_edited");
    assert_eq!(meta["files"][0]["sha256"], sha256(b"my rules\n"));
    // New bytes landed, the retired file and its directory are gone, the deleted one is back.
    assert_eq!(std::fs::read(home.join("msd-core/references/rules.md")).unwrap(), b"# Rules v2\n");
    assert_eq!(std::fs::read(home.join("msd-core/references/new.md")).unwrap(), b"# New\n");
    assert!(!home.join("skills/msd-execute").exists());
    assert!(home.join("msd-core/workflows/plan/steps/plan-prd.md").exists());
    // The user's own files are byte-identical.
    for (k, v) in &user_before {
        assert_eq!(&std::fs::read(home.join(k)).unwrap(), v, "{k} was touched");
    }
    assert_whole(&home);
    assert!(!home.join(".msd-install").exists(), "no lock or journal is left behind");
}

#[test]
fn lifecycle_uninstall_removes_exactly_ours_and_keeps_edits() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let claude = w.home.join(".claude");
    std::fs::create_dir_all(claude.join("skills/mine")).unwrap();
    std::fs::write(claude.join("skills/mine/SKILL.md"), "mine\n").unwrap();
    let settings = "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(claude.join("settings.json"), settings).unwrap();
    Install::in_world(&w).content(&c).run().success();
    std::fs::write(claude.join("msd-core/references/rules.md"), "edited\n").unwrap();
    let doc = Install::in_world(&w).uninstall().runtime("claude").json().run().success().json();
    assert_eq!(doc["targets"][0]["kept_edited"], serde_json::json!(["msd-core/references/rules.md"]));
    let left = tree(&claude);
    let backup_dir = PathBuf::from(doc["targets"][0]["backup_dir"].as_str().unwrap());
    let rel_backup = backup_dir.strip_prefix(&claude).unwrap().display().to_string();
    let names: Vec<String> = left.keys().cloned().collect();
    let mut want = vec![
        "msd-core/references/rules.md".to_string(),
        format!("{rel_backup}/backup-meta.json"),
        format!("{rel_backup}/msd-core/references/rules.md"),
        "settings.json".into(),
        "skills/mine/SKILL.md".into(),
    ];
    want.sort();
    assert_eq!(names, want);
    assert_eq!(left["msd-core/references/rules.md"], b"edited\n", "an edited file stays in place");
    assert_eq!(left["settings.json"], settings.as_bytes(), "user settings are byte-identical");
    assert_eq!(left["skills/mine/SKILL.md"], b"mine\n");
    assert!(!claude.join("agents").exists(), "directories we created and emptied are gone");
    assert!(claude.join("skills").exists(), "the user's skills dir stays");
    // A second uninstall finds nothing and says so.
    Install::in_world(&w).uninstall().runtime("claude").run().success().stdout_has("not installed");
}

#[test]
fn lifecycle_uninstall_of_a_fresh_install_leaves_nothing() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).local().run().success();
    assert!(w.project.join(".claude/settings.local.json").exists());
    Install::in_world(&w).uninstall().local().run().success();
    assert!(!w.project.join(".claude").exists(), "a home we created is removed when empty");
    assert!(tree(&w.project).is_empty());
}

#[test]
fn lifecycle_uninstall_dry_run_writes_nothing() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let before = tree(&w.home);
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(w.home.join(".claude/msd-core/msd-file-manifest.json")).unwrap())
            .unwrap();
    let n = m["files"].as_array().unwrap().len();
    Install::in_world(&w).uninstall().dry_run().run().success().stdout_has(&format!("{n} file(s) would be removed"));
    assert_eq!(tree(&w.home), before);
}

#[test]
fn lifecycle_verify_reports_modified_missing_extra() {
    let w = World::new();
    let c = content_copy(&w, "content");
    // Nothing installed is not clean.
    Install::in_world(&w).verify().run().code(1).stdout_has("not installed");
    Install::in_world(&w).content(&c).run().success();
    Install::in_world(&w).verify().runtime("claude").run().code(0);
    let home = w.home.join(".claude");
    std::fs::write(home.join("msd-core/workflows/plan.md"), "changed\n").unwrap();
    std::fs::remove_file(home.join("agents/msd-planner.md")).unwrap();
    std::fs::write(home.join("msd-core/stray.md"), "x\n").unwrap();
    std::fs::create_dir_all(home.join("skills/msd-stray")).unwrap();
    std::fs::write(home.join("skills/msd-stray/SKILL.md"), "x\n").unwrap();
    std::fs::create_dir_all(home.join("skills/other")).unwrap();
    std::fs::write(home.join("skills/other/SKILL.md"), "not ours\n").unwrap();
    let doc = Install::in_world(&w).verify().json().run().code(1).json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["ok"], false);
    let r = &doc["targets"][0];
    assert_eq!(r["ok"], false);
    assert_eq!(r["modified"], serde_json::json!(["msd-core/workflows/plan.md"]));
    assert_eq!(r["missing"], serde_json::json!(["agents/msd-planner.md"]));
    assert_eq!(r["extra"], serde_json::json!(["msd-core/stray.md"]));
    // The user's own skill at an msd-like name is theirs: reported apart, not drift (issue 15,
    // item 12).
    assert_eq!(r["user"], serde_json::json!(["skills/msd-stray/SKILL.md"]));
    // Settings drift: our hook removed by hand.
    std::fs::write(home.join("settings.json"), "{}\n").unwrap();
    let r = Install::in_world(&w).verify().json().run().json()["targets"][0].clone();
    assert_eq!(r["settings"][0]["path"], "settings.json");
    assert_eq!(
        r["settings"][0]["added"],
        serde_json::json!([
            "hook:session-start",
            "hook:guard",
            "hook:context-monitor",
            "hook:config-reload",
            "statusline",
            "permission:msd-run"
        ])
    );
    std::fs::write(home.join("settings.json"), "{ broken\n").unwrap();
    let r = Install::in_world(&w).verify().json().run().json()["targets"][0].clone();
    assert_eq!(r["settings"][0]["path"], "settings.json");
    assert!(r["settings"][0]["notes"][0].as_str().unwrap().contains("not valid JSON"), "{r}");
    // --quiet prints nothing.
    Install::in_world(&w).verify().arg("--quiet").run().code(1).stdout_empty().stderr_empty();
}

#[test]
fn lifecycle_progress_bars_only_on_a_terminal() {
    let w = World::new();
    let c = content_copy(&w, "content");
    // Under a pseudo-terminal (util-linux `script`), stderr is a terminal: the bar is drawn.
    let bin = assert_cmd::cargo::cargo_bin("msd-install");
    let cmd = format!("'{}' -r claude --yes --content '{}'", bin.display(), s(&c));
    let mut script = std::process::Command::new("script");
    script.args(["-qec", &cmd, "/dev/null"]);
    w.isolate(&mut script);
    let out = script.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(shown.contains("claude (global) applying") || shown.contains("claude (global) staging"), "{shown}");
    // --quiet under the same terminal: nothing at all.
    let c2 = content_copy(&w, "content2");
    std::fs::write(c2.join("msd-core/references/rules.md"), "v2\n").unwrap();
    let cmd = format!("'{}' -r claude --yes --quiet --content '{}'", bin.display(), s(&c2));
    let mut script = std::process::Command::new("script");
    script.args(["-qec", &cmd, "/dev/null"]);
    w.isolate(&mut script);
    let out = script.output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "--quiet: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(std::fs::read(w.home.join(".claude/msd-core/references/rules.md")).unwrap(), b"v2\n");
}

#[test]
fn lifecycle_recover_with_nothing_to_do() {
    let w = World::new();
    Install::in_world(&w).recover().run().success().stdout_has("nothing to recover");
}

/// The starter with the command groups nested skill layouts need, so `--all` installs it.
fn grouped_starter(w: &World) -> PathBuf {
    let dir = content_copy(w, "grouped");
    std::fs::write(
        dir.join("namespaces.json"),
        r#"{"instructions": "Pick the command from the table and read its skill file.",
  "groups": [{"name": "phase", "description": "Plan and execute a phase.", "commands": ["plan", "execute"]}]}"#,
    )
    .unwrap();
    dir
}

/// Every file under `root` whose path or text names msd.
fn msd_files(root: &Path) -> Vec<String> {
    tree(root)
        .into_iter()
        .filter(|(p, b)| p.contains("msd") || String::from_utf8_lossy(b).contains("msd"))
        .map(|(p, _)| p)
        .collect()
}

#[test]
fn lifecycle_status_lists_every_install_after_all_and_counts_drift() {
    let w = World::new();
    let c = grouped_starter(&w);
    Install::in_world(&w).all().arg("--quiet").content(&c).run().success();
    Install::in_world(&w).runtime("claude").local().arg("--quiet").content(&c).run().success();
    std::fs::write(w.home.join(".claude/msd-core/workflows/plan.md"), "edited\n").unwrap();
    let doc = Install::in_world(&w).status().json().run().success().json();
    assert_eq!(doc["schema_version"], 1);
    let rows = doc["installs"].as_array().unwrap();
    let runtimes = msd_install::pipeline::load_runtimes(&Default::default()).unwrap();
    let global: Vec<&str> =
        rows.iter().filter(|r| r["scope"] == "global").map(|r| r["runtime"].as_str().unwrap()).collect();
    assert_eq!(global.len(), runtimes.len(), "every runtime's global install is listed: {doc}");
    let local: Vec<_> = rows.iter().filter(|r| r["scope"] == "local").collect();
    assert_eq!(local.len(), 1, "{doc}");
    assert_eq!(local[0]["home"], w.project.join(".claude").display().to_string());
    let claude = rows.iter().find(|r| r["runtime"] == "claude" && r["scope"] == "global").unwrap();
    assert_eq!(claude["modified"], 1, "{claude}");
    assert_eq!(claude["clean"], false);
    assert_eq!(claude["version"], env!("CARGO_PKG_VERSION"));
    assert!(claude["files"].as_u64().unwrap() > 5);
    assert!(claude["installed_at"].as_str().unwrap().ends_with('Z'));
    let opencode = rows.iter().find(|r| r["runtime"] == "opencode").unwrap();
    assert_eq!(opencode["clean"], true, "{opencode}");
    // The table: one line per install, columns aligned.
    let text = Install::in_world(&w).status().run().stdout();
    assert!(text.starts_with("RUNTIME"), "{text}");
    assert!(text.contains("1 modified"), "{text}");
    let col = text.lines().next().unwrap().find("SCOPE").unwrap();
    for line in text.lines().skip(1).take(rows.len()) {
        assert!(line[col..].starts_with("global") || line[col..].starts_with("local "), "aligned: {line}");
    }
}

#[test]
fn lifecycle_diff_shows_the_users_edit_against_what_replaces_it() {
    let w = World::new();
    let c = fixture("starter");
    Install::in_world(&w).arg("--quiet").content(&c).run().success();
    Install::in_world(&w).diff().content(&c).run().success().stdout_has("no differences");
    let plan = w.home.join(".claude/msd-core/workflows/plan.md");
    let original = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, format!("{original}my own note\n")).unwrap();
    // --exit-code fails on a difference.
    let text = Install::in_world(&w).diff().content(&c).arg("--exit-code").run().code(1).stdout();
    assert!(
        text.contains("--- a/claude/msd-core/workflows/plan.md\n+++ b/claude/msd-core/workflows/plan.md\n"),
        "{text}"
    );
    assert!(text.contains("\n-my own note\n"), "the edit is the side that goes: {text}");
    assert!(!text.contains('\u{1b}'), "no color off a terminal: {text:?}");
    // --color always colors.
    Install::in_world(&w).diff().content(&c).args(["--color", "always"]).run().stdout_has("\u{1b}[31m-my own note");
    // Nothing was written by diff.
    assert!(std::fs::read_to_string(&plan).unwrap().ends_with("my own note\n"));
    // The dry run points to it.
    Install::in_world(&w).dry_run().content(&c).run().stdout_has("`msd-install diff`");
}

#[test]
fn lifecycle_uninstall_all_leaves_no_msd_file() {
    let w = World::new();
    let c = grouped_starter(&w);
    Install::in_world(&w).all().arg("--quiet").content(&c).run().success();
    Install::in_world(&w).runtime("opencode").local().arg("--quiet").content(&c).run().success();
    assert!(!msd_files(&w.home).is_empty());
    let doc = Install::in_world(&w).uninstall().all().json().run().success().json();
    assert_eq!(doc["schema_version"], 1);
    let n = msd_install::pipeline::load_runtimes(&Default::default()).unwrap().len();
    assert_eq!(doc["targets"].as_array().unwrap().len(), n);
    assert_eq!(msd_files(&w.home), Vec::<String>::new(), "no msd file is left in the homes");
    // Nor a directory the installs created above their homes (`~/.codeium` of windsurf,
    // `~/.config` of kilo and opencode): the home holds what it held before, the update cache's
    // parent aside.
    let left: Vec<String> = std::fs::read_dir(&w.home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".cache")
        .collect();
    assert_eq!(left, Vec::<String>::new(), "left in the home after uninstall --all");
    assert!(!msd_files(&w.project).is_empty(), "--all is per scope: the local install stays");
    Install::in_world(&w).uninstall().all().local().arg("--quiet").run().success();
    assert_eq!(msd_files(&w.project), Vec::<String>::new());
    // Nothing left: --all finds nothing and says so.
    Install::in_world(&w).uninstall().all().run().stdout_has("no msd-core install found");
}

#[test]
fn lifecycle_verify_and_recover_take_repeated_runtimes() {
    let w = World::new();
    let c = fixture("starter");
    Install::in_world(&w).runtime("claude").runtime("codex").arg("--quiet").content(&c).run().success();
    let doc = Install::in_world(&w).verify().runtime("Claude").runtime("codex").json().run().json();
    let ids: Vec<&str> = doc["targets"].as_array().unwrap().iter().map(|t| t["runtime"].as_str().unwrap()).collect();
    assert_eq!(ids, ["claude", "codex"]);
    assert_eq!(doc["ok"], true);
    let doc = Install::in_world(&w).verify().all().json().run().json();
    assert_eq!(doc["targets"].as_array().unwrap().len(), 2, "--all is the runtimes that have an install");
    let doc = Install::in_world(&w).recover().all().json().run().json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["targets"].as_array().unwrap().len(), 2);
    assert!(doc["targets"][0]["recovery"].is_null());
}

/// Issue 15, item 12: what no manifest lists is the user's. Their own `skills/msd-*` and
/// `agents/msd-*` are reported apart and are no drift (verify exits 0); a stray file inside a
/// skill directory msd wrote still is.
#[test]
fn lifecycle_verify_reports_the_users_own_msd_named_files_apart() {
    let w = World::new();
    Install::in_world(&w).arg("-q").run().success();
    let home = w.home.join(".claude");
    std::fs::create_dir_all(home.join("skills/msd-mine")).unwrap();
    std::fs::write(home.join("skills/msd-mine/SKILL.md"), "mine\n").unwrap();
    std::fs::write(home.join("agents/msd-own.md"), "mine\n").unwrap();
    // The user's files are no drift.
    Install::in_world(&w).verify().run().code(0).stdout_has("yours    skills/msd-mine/SKILL.md").stdout_lacks("extra");
    let r = Install::in_world(&w).verify().json().run().json()["targets"][0].clone();
    assert_eq!(r["user"], serde_json::json!(["agents/msd-own.md", "skills/msd-mine/SKILL.md"]));
    assert_eq!(r["extra"], serde_json::json!([]));
    // A file inside a skill directory msd wrote is drift.
    let ours = std::fs::read_dir(home.join("skills")).unwrap().flatten().find(|e| e.file_name() != "msd-mine").unwrap();
    std::fs::write(ours.path().join("stray.md"), "x\n").unwrap();
    let ran = Install::in_world(&w).verify().run().code(1);
    assert!(ran.stdout().contains(&format!("extra    skills/{}/stray.md", ours.file_name().to_string_lossy())));
}

/// Defect 2.8 of issue 31: an io error making the lock file (here its directory is taken by a
/// file; a full disk or a read-only mount fail the same way) is said as what it is, not as a
/// lock another run holds.
#[test]
fn lifecycle_an_io_error_at_lock_time_is_not_another_run() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let home = w.home.join(".claude");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".msd-install"), "mine\n").unwrap();
    for op in [Install::in_world(&w).content(&c), Install::in_world(&w).uninstall(), Install::in_world(&w).recover()] {
        op.run()
            .code(4)
            .stderr_has("cannot create or lock")
            .stderr_has("no other run holds it")
            .stderr_has(&format!("{}", home.join(".msd-install/lock").display()))
            .stderr_has("hint: something that is not msd-install's is in the way")
            .stderr_lacks("wait for the other run")
            .stderr_lacks("another msd-install run");
    }
    assert_eq!(std::fs::read(home.join(".msd-install")).unwrap(), b"mine\n", "the user's file is kept");
    assert!(!home.join("msd-core").exists(), "nothing was written");
}

/// Defect 2.4 of issue 31: `--local` run in the home directory (no project above it) would make
/// `./.claude` the global `~/.claude`. It is refused, says why and what to do, and writes
/// nothing; the global install stays whole, and `status` there still lists it (once).
#[test]
fn lifecycle_local_in_the_home_directory_is_refused() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    let before = tree(&home);
    for local in [
        Install::in_world(&w).content(&c).local().cwd(&w.home),
        Install::in_world(&w).content(&c).args(["--project", &s(&w.home)]),
        Install::in_world(&w).uninstall().local().cwd(&w.home),
        Install::in_world(&w).content(&c).local().dry_run().cwd(&w.home),
    ] {
        local
            .run()
            .code(2)
            .stderr_has("which is its global home")
            .stderr_has("hint: run inside a project")
            .stderr_has("--project DIR");
        assert_eq!(tree(&home), before, "the global install is untouched");
    }
    let doc = Install::in_world(&w).status().json().cwd(&w.home).run().success().json();
    let installs = doc["installs"].as_array().unwrap();
    assert_eq!(installs.len(), 1, "{doc}");
    assert_eq!(installs[0]["scope"], "global");
    // Inside a project the same command installs locally, as it did.
    std::fs::create_dir_all(w.home.join("work/.git")).unwrap();
    Install::in_world(&w).content(&c).local().cwd(w.home.join("work")).run().success();
    assert!(w.home.join("work/.claude/msd-core").is_dir());
    assert_eq!(tree(&home), before);
}

/// Defect 2.5 of issue 31: uninstall keeps a managed file the user edited (backed up, and says
/// so); the next install knows msd wrote it: backed up again and replaced, as an upgrade does,
/// not refused as the user's own until --adopt. A file msd never wrote is still refused.
#[test]
fn lifecycle_reinstall_after_uninstall_kept_an_edit() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    let rel = "msd-core/references/rules.md";
    let shipped = std::fs::read(home.join(rel)).unwrap();
    std::fs::write(home.join(rel), "my rules\n").unwrap();
    Install::in_world(&w)
        .uninstall()
        .run()
        .success()
        .stdout_has("1 file(s) you edited stay in place")
        .stdout_has("an install here later backs them up again and replaces them");
    assert_eq!(std::fs::read(home.join(rel)).unwrap(), b"my rules\n");
    let doc = Install::in_world(&w).content(&c).json().run().success().json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(written["backed_up"], serde_json::json!([rel]), "{doc}");
    let backup = PathBuf::from(written["backup_dir"].as_str().unwrap());
    assert_eq!(std::fs::read(backup.join(rel)).unwrap(), b"my rules\n");
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(backup.join("backup-meta.json")).unwrap()).unwrap();
    assert_eq!(meta["files"][0]["reason"], "user_edited");
    assert_eq!(std::fs::read(home.join(rel)).unwrap(), shipped, "replaced by what msd ships");
    assert_whole(&home);
    // Another managed path holding a file msd never wrote (no backup names it) stays the user's.
    Install::in_world(&w).uninstall().run().success();
    std::fs::create_dir_all(home.join("msd-core/references")).unwrap();
    std::fs::write(home.join(rel), "written by hand\n").unwrap();
    Install::in_world(&w).content(&c).run().code(4).stderr_has("were not written by it");
    assert_eq!(std::fs::read(home.join(rel)).unwrap(), b"written by hand\n");
}

/// Issue 31: diff, verify and the install decide from one survey, so they agree. A file the new
/// version no longer ships, which the user edited, is backed up and removed by the install:
/// diff shows that removal (0.3.5's diff said it stays), verify called it modified before.
#[test]
fn lifecycle_diff_verify_and_install_agree_on_an_edited_file_no_longer_shipped() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    let dropped = "skills/msd-execute/SKILL.md";
    std::fs::write(home.join(dropped), "my execute\n").unwrap();
    Install::in_world(&w).verify().json().run().code(1).stdout_has(dropped);
    std::fs::remove_file(c.join("commands/msd/execute.md")).unwrap();
    regen(&w, &c);
    let text = Install::in_world(&w).diff().content(&c).run().success().stdout();
    assert!(text.contains(&format!("--- a/claude/{dropped}\n+++ /dev/null\n")), "{text}");
    assert!(text.contains("\n-my execute\n"), "{text}");
    let doc = Install::in_world(&w).content(&c).json().run().success().json();
    let written = &doc["runtimes"][0]["written"];
    assert_eq!(written["backed_up"], serde_json::json!([dropped]), "{doc}");
    assert!(!home.join(dropped).exists(), "the install removed it, as diff said");
    Install::in_world(&w).diff().content(&c).run().success().stdout_has("no differences");
}

/// A runtime whose local home is the project itself (Cline): an empty project the user made is
/// not a home msd created, and uninstall leaves it (it removed the project directory, then
/// failed reading the environment from a cwd that no longer existed).
#[test]
fn lifecycle_uninstall_keeps_an_empty_project_that_is_the_runtimes_home() {
    let w = World::new();
    assert!(std::fs::read_dir(&w.project).unwrap().next().is_none(), "the project starts empty");
    Install::in_world(&w).runtime("cline").local().arg("-q").run().success();
    Install::in_world(&w).uninstall().runtime("cline").local().arg("-q").run().success();
    assert!(w.project.is_dir(), "the user's project directory survives uninstall");
    assert!(std::fs::read_dir(&w.project).unwrap().next().is_none(), "and holds nothing of msd's");
}
