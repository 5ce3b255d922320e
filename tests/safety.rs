//! Never write outside the resolved target: traversal, absolute paths and NUL in any data are
//! refused, symlinks between the home and a destination are refused unless allowed, and a
//! missing or read-only target is a clear error with nothing written.

use std::path::Path;

use crate::lifecycle::{content_copy, s};
use crate::support::{Install, World, copy_tree, files, repo, tree};

fn runtimes_with(w: &World, edit: impl Fn(&str) -> String) -> std::path::PathBuf {
    let dir = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &dir);
    let path = dir.join("claude/capability.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = edit(&text);
    assert_ne!(text, edited, "the edit applies");
    std::fs::write(&path, edited).unwrap();
    dir
}

/// Nothing at all was written: the world's home and project hold only `keep`.
fn nothing_written(w: &World, keep: &[&str]) {
    let mut all: Vec<String> = tree(&w.home).into_keys().map(|k| format!("home/{k}")).collect();
    all.extend(tree(&w.project).into_keys().map(|k| format!("project/{k}")));
    all.retain(|k| !keep.contains(&k.as_str()));
    assert!(all.is_empty(), "written: {all:?}");
}

#[test]
fn safety_manifest_paths_that_escape_are_refused() {
    let cases: [(&str, &str, &str); 5] = [
        ("\"dest\": \"skills\"", "\"dest\": \"../escape\"", "contains `..`"),
        ("\"dest\": \"agents\"", "\"dest\": \"/tmp/abs-agents\"", "absolute path"),
        ("\"dest\": \"skills\"", "\"dest\": \"skills\\u0000x\"", "NUL"),
        ("\"file\": \"settings.json\"", "\"file\": \"../settings.json\"", "contains `..`"),
        ("\"file\": \"settings.json\"", "\"file\": \"/etc/msd-settings.json\"", "absolute path"),
    ];
    for (from, to, why) in cases {
        let w = World::new();
        let c = content_copy(&w, "content");
        let rt = runtimes_with(&w, |t| t.replacen(from, to, 1));
        Install::in_world(&w)
            .content(&c)
            .args(["--runtimes", &s(&rt)])
            .note(to)
            .run()
            .code(3)
            .stderr_has("claude/capability.json:")
            .stderr_has(why);
        nothing_written(&w, &[]);
        assert!(!w.tmp.path().join("escape").exists() && !Path::new("/tmp/abs-agents").exists());
    }
}

#[test]
fn safety_content_symlink_out_of_the_tree_is_refused() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let secret = w.tmp.path().join("secret.md");
    std::fs::write(&secret, "# secret\n").unwrap();
    std::os::unix::fs::symlink(&secret, c.join("msd-core/references/leak.md")).unwrap();
    Install::in_world(&w).content(&c).run().code(3).stderr_has("symlink points outside");
    nothing_written(&w, &[]);
}

#[test]
fn safety_a_tampered_file_manifest_cannot_reach_outside() {
    let w = World::new();
    let c = content_copy(&w, "content");
    Install::in_world(&w).content(&c).run().success();
    let home = w.home.join(".claude");
    let outside = w.home.join("precious.txt");
    std::fs::write(&outside, "keep me\n").unwrap();
    let mpath = home.join("msd-core/msd-file-manifest.json");
    let m = std::fs::read_to_string(&mpath).unwrap();
    let tampered = m.replacen("\"agents/msd-planner.md\"", "\"../precious.txt\"", 1);
    std::fs::write(&mpath, &tampered).unwrap();
    let before = tree(&w.home);
    for args in [vec!["--content", &s(&c)], vec!["uninstall"], vec!["verify"]] {
        Install::in_world(&w).args(&args).note(format!("{args:?}")).run().code(3).stderr_has("contains `..`");
        assert_eq!(tree(&w.home), before, "{args:?} wrote something");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    // The same for the install state and a leftover journal.
    std::fs::write(&mpath, &m).unwrap();
    let spath = home.join("msd-core/msd-install-state.json");
    let state = std::fs::read_to_string(&spath).unwrap();
    std::fs::write(&spath, state.replacen("\"agents\"", "\"/etc\"", 1)).unwrap();
    Install::in_world(&w).content(&c).run().code(3).stderr_has("absolute path");
    std::fs::write(&spath, &state).unwrap();
    std::fs::create_dir_all(home.join(".msd-install")).unwrap();
    std::fs::write(
        home.join(".msd-install/journal.json"),
        r#"{"schema_version":1,"tool_version":"0","label":"x","ops":[{"path":"../precious.txt","action":"remove","old_sha256":"x"}]}"#,
    )
    .unwrap();
    Install::in_world(&w).content(&c).run().failure().stderr_has("journal of an interrupted run is unreadable");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
}

#[test]
fn safety_symlink_between_home_and_destination() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let home = w.home.join(".claude");
    let elsewhere = w.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, home.join("skills")).unwrap();
    Install::in_world(&w)
        .content(&c)
        .run()
        .code(4)
        .stderr_has("refusing to write through a symlink")
        .stderr_has("--allow-symlinks");
    assert!(tree(&elsewhere).is_empty() && !home.join("msd-core").exists(), "nothing written");
    Install::in_world(&w).content(&c).arg("--allow-symlinks").run().success();
    assert!(elsewhere.join("msd-plan/SKILL.md").exists(), "allowed: written through the link");
    // The home itself a link.
    let w2 = World::new();
    let real = w2.tmp.path().join("dotfiles-claude");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, w2.home.join(".claude")).unwrap();
    Install::in_world(&w2).content(&c).run().code(4);
    assert!(tree(&real).is_empty());
}

/// Makes `dir` refuse new files, whoever we run as: permission bits first; if we are root (they
/// do not stop root), the immutable attribute. Returns a guard that undoes it.
struct Unwritable(std::path::PathBuf, bool);

impl Unwritable {
    fn new(dir: &Path) -> Unwritable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        if !writable(dir) {
            return Unwritable(dir.to_path_buf(), false);
        }
        let ok = std::process::Command::new("chattr").arg("+i").arg(dir).status().is_ok_and(|s| s.success());
        assert!(
            ok && !writable(dir),
            "cannot make {} unwritable here (running as root without chattr support)",
            dir.display()
        );
        Unwritable(dir.to_path_buf(), true)
    }
}

fn writable(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let ok = std::fs::write(&probe, "x").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.1 {
            let _ = std::process::Command::new("chattr").arg("-i").arg(&self.0).status();
        }
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn safety_read_only_target_writes_nothing() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let home = w.home.join(".claude");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("settings.json"), "{}\n").unwrap();
    {
        let _ro = Unwritable::new(&home);
        Install::in_world(&w).content(&c).run().code(4).stderr_has("is not writable").stderr_has("nothing was written");
    }
    assert_eq!(tree(&home).into_keys().collect::<Vec<_>>(), ["settings.json"]);
    // A read-only directory inside the target stops the run before anything is written.
    Install::in_world(&w).content(&c).run().success();
    let c2 = content_copy(&w, "content2");
    std::fs::write(c2.join("msd-core/references/rules.md"), "v2\n").unwrap();
    std::fs::write(c2.join("agents/msd-planner.md"), "---\nname: msd-planner\ndescription: v2\n---\nv2\n").unwrap();
    let before = tree(&home);
    {
        let _ro = Unwritable::new(&home.join("agents"));
        Install::in_world(&w).content(&c2).run().code(4);
    }
    assert_eq!(tree(&home), before, "not even the writable parts changed");
}

#[test]
fn safety_missing_target_is_a_clear_error() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let missing = w.tmp.path().join("no/such/dir/claude");
    Install::in_world(&w)
        .content(&c)
        .args(["--config-dir", &s(&missing)])
        .run()
        .code(4)
        .stderr_has("cannot be created")
        .stderr_has("does not exist");
    assert!(!w.tmp.path().join("no").exists());
    // A file where the home should be.
    std::fs::write(w.home.join(".claude"), "not a dir").unwrap();
    Install::in_world(&w).content(&c).run().code(4).stderr_has("is not a directory");
    nothing_written(&w, &["home/.claude"]);
}

/// Issue 15, item 1: a user's own file at a path msd installs to is never replaced or deleted.
#[test]
fn safety_a_users_file_at_an_msd_path_is_refused_not_taken() {
    let w = World::new();
    let home = w.home.join(".claude");
    std::fs::create_dir_all(home.join("agents")).unwrap();
    std::fs::write(home.join("agents/msd-planner.md"), "my own planner\n").unwrap();
    let r = Install::with(w).run().code(4).stderr_has("agents/msd-planner.md").stderr_has("--adopt");
    assert_eq!(r.read("~/.claude/agents/msd-planner.md"), "my own planner\n");
    assert!(!r.path("~/.claude/msd-core").exists(), "nothing else was written");
    // Uninstall finds nothing of ours and leaves the file.
    let r = r.then().arg("uninstall").run().success();
    assert_eq!(r.read("~/.claude/agents/msd-planner.md"), "my own planner\n");
    // --adopt takes it over, with a backup; uninstall then removes ours, the backup stays.
    let r = r.then().arg("--adopt").json().run().success();
    let backup = r.json()["runtimes"][0]["written"]["backup_dir"].as_str().unwrap().to_string();
    assert_eq!(std::fs::read_to_string(Path::new(&backup).join("agents/msd-planner.md")).unwrap(), "my own planner\n");
    assert_ne!(r.read("~/.claude/agents/msd-planner.md"), "my own planner\n");
}

/// Issue 15, item 3: what a killed run left outside msd's files (a writability probe beside or
/// in the home, a half-written journal temp file) is cleaned by the next run; nothing is probed
/// by creating files.
#[test]
fn safety_leftovers_of_a_killed_run_are_cleaned_by_the_next() {
    let r = Install::new().run().success();
    let home = r.path("~/.claude");
    let leftovers =
        [r.path("~/.msd-probe-Ab12Cd"), home.join(".msd-probe-Xy34Zw"), home.join(".msd-install/.msd-tmp-Qr56St")];
    std::fs::create_dir_all(home.join(".msd-install")).unwrap();
    for l in &leftovers {
        std::fs::write(l, "").unwrap();
    }
    let r = r.then().run().success();
    for l in &leftovers {
        assert!(!l.exists(), "{} is left", l.display());
    }
    assert!(!home.join(".msd-install").exists(), "the work dir is gone once empty");
    r.then().arg("verify").run().success();
}

/// Issue 15, item 4: installed paths reach the shell as one word. A home with a space, a quote
/// and `$(...)`: the settings hook command run through `sh -c` and a workflow's helper call both
/// run the helper, and nothing the home's name spells is executed.
#[test]
fn safety_installed_paths_are_shell_quoted() {
    let w = World::new();
    let weird = w.tmp.path().join("my home's $(touch pwned) `touch pwned2`");
    std::fs::create_dir_all(&weird).unwrap();
    let w = w.env("HOME", &weird);
    let r = Install::with(w).run().success();
    let claude = weird.join(".claude");
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(claude.join("settings.json")).unwrap()).unwrap();
    let cmd = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    let project = &r.world.project;
    let sh = |script: &str| {
        let mut c = std::process::Command::new("sh");
        c.arg("-c").arg(script).current_dir(project).env("HOME", &weird).stdin(std::process::Stdio::null());
        c.output().unwrap()
    };
    let out = sh(&cmd);
    assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
    // A workflow's call, as the model runs it.
    let wf = std::fs::read_to_string(claude.join("msd-core/workflows/add-todo.md")).unwrap();
    let line =
        wf.lines().find(|l| l.contains("msd_run' config-get commit_docs --default true")).unwrap().trim().to_string();
    std::fs::create_dir_all(project.join(".planning")).unwrap();
    let out = sh(&line);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "true\n", "{line}: {}", String::from_utf8_lossy(&out.stderr));
    for p in ["pwned", "pwned2"] {
        assert!(!project.join(p).exists() && !weird.join(p).exists(), "{p}: the home's name was executed");
    }
}

/// Issue 15, item 5: content emitted onto msd-install's own metadata is refused, located, before
/// anything is written.
#[test]
fn safety_emitted_files_cannot_take_msd_metadata_paths() {
    for name in ["msd-file-manifest.json", "msd-install-state.json"] {
        let w = World::new();
        let c = content_copy(&w, "content");
        std::fs::write(c.join("msd-core").join(name), "{}\n").unwrap();
        Install::in_world(&w)
            .content(&c)
            .note(name)
            .run()
            .code(3)
            .stderr_has(&format!("msd-core/{name}"))
            .stderr_has("msd-install's own metadata");
        nothing_written(&w, &[]);
    }
}

/// Issue 15, item 12: an install killed before it wrote anything leaves only its work dir; the
/// next run treats that home as its own, so uninstall removes it again.
#[test]
fn safety_a_home_left_by_a_killed_run_is_still_ours() {
    let w = World::new();
    let home = w.home.join(".claude");
    std::fs::create_dir_all(home.join(".msd-install")).unwrap();
    std::fs::write(home.join(".msd-install/lock"), "").unwrap();
    let r = Install::with(w).run().success();
    let r = r.then().arg("uninstall").run().success();
    assert!(!home.exists(), "left: {:?}", files(&home));
    drop(r);
    // Killed between creating the home and its work dir: an empty home is ours too.
    let w = World::new();
    let home = w.home.join(".claude");
    std::fs::create_dir_all(&home).unwrap();
    let r = Install::with(w).run().success();
    let r = r.then().arg("uninstall").run().success();
    assert!(!home.exists(), "an empty home left by a killed run is removed by uninstall");
    drop(r);
}

/// Issue 15, item 10: a FIFO in a content tree is refused, located, instead of hanging the
/// install; an unknown `<!-- msd:... -->` marker is an error; a manifest and a command with a
/// UTF-8 BOM installs, a command with one is reported as a BOM.
#[test]
fn safety_content_input_gaps() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let fifo = c.join("msd-core/references/pipe.md");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child =
        w.spawnable("msd-install").args(["--content", &s(&c)]).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // Waited on by its exit (a bound, not a poll): a hang shows as the bound passing.
    if wait_timeout::ChildExt::wait_timeout(&mut child, std::time::Duration::from_secs(20)).unwrap().is_none() {
        let _ = child.kill();
        panic!("the install hangs on a FIFO");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("references/pipe.md") && err.contains("a FIFO"), "{err}");
    nothing_written(&w, &[]);
    std::fs::remove_file(&fifo).unwrap();
    // An unknown marker.
    let wf = c.join("msd-core/workflows/execute.md");
    let text = std::fs::read_to_string(&wf).unwrap();
    std::fs::write(&wf, format!("{text}\n<!-- msd:sectoin id=\"x\" -->\n")).unwrap();
    Install::in_world(&w).content(&c).run().code(3).stderr_has("unknown_marker");
    std::fs::write(&wf, &text).unwrap();
    // A BOM in a manifest and in a command.
    let rt = runtimes_with(&w, |t| format!("\u{feff}{t}"));
    let cmd = c.join("commands/msd/plan.md");
    let body = std::fs::read_to_string(&cmd).unwrap();
    std::fs::write(&cmd, format!("\u{feff}{body}")).unwrap();
    // A BOM is named.
    Install::in_world(&w)
        .content(&c)
        .args(["--runtimes", &s(&rt)])
        .run()
        .code(3)
        .stderr_has("commands/msd/plan.md:1")
        .stderr_has("byte order mark");
    std::fs::write(&cmd, &body).unwrap();
    Install::in_world(&w).content(&c).args(["--runtimes", &s(&rt)]).run().success();
}

/// Issue 31 (the survey reads every managed path): a FIFO where msd-install manages a file is
/// refused, named, without opening it; 0.3.5 opened it and waited forever (install, verify,
/// uninstall, status). Each run gets 60 seconds.
#[cfg(unix)]
#[test]
fn safety_a_fifo_at_a_managed_path_is_refused_not_waited_on() {
    use std::os::unix::fs::FileTypeExt;
    let w = World::new();
    Install::in_world(&w).arg("--quiet").run().success();
    let home = w.home.join(".claude");
    let rel = "msd-core/references/rules.md";
    let managed = if home.join(rel).exists() {
        home.join(rel)
    } else {
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(home.join("msd-core/msd-file-manifest.json")).unwrap()).unwrap();
        home.join(m["files"][0]["path"].as_str().unwrap())
    };
    std::fs::remove_file(&managed).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&managed).status().unwrap().success());
    for args in [&[][..], &["verify"][..], &["uninstall"][..], &["status"][..]] {
        let mut cmd = w.spawnable("msd-install");
        cmd.args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let Some(status) =
            wait_timeout::ChildExt::wait_timeout(&mut child, std::time::Duration::from_secs(60)).unwrap()
        else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("msd-install {args:?} waited on the FIFO");
        };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(4), "{args:?}: {stderr}");
        assert!(stderr.contains("is a FIFO, where msd-install manages a file"), "{args:?}: {stderr}");
    }
    assert!(std::fs::symlink_metadata(&managed).unwrap().file_type().is_fifo(), "the FIFO is left as it was");
}
