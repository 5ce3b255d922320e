//! Never write outside the resolved target: traversal, absolute paths and NUL in any data are
//! refused, symlinks between the home and a destination are refused unless allowed, and a
//! missing or read-only target is a clear error with nothing written.

use std::path::Path;

use crate::lifecycle::{content_copy, s};
use crate::support::{World, copy_tree, repo, tree};

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
        let out = w.install().args(["--content", &s(&c), "--runtimes", &s(&rt)]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{to}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("claude/capability.json:") && err.contains(why), "{to}: {err}");
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
    let out = w.install().args(["--content", &s(&c)]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symlink points outside"));
    nothing_written(&w, &[]);
}

#[test]
fn safety_a_tampered_file_manifest_cannot_reach_outside() {
    let w = World::new();
    let c = content_copy(&w, "content");
    w.install().args(["--content", &s(&c)]).assert().success();
    let home = w.home.join(".claude");
    let outside = w.home.join("precious.txt");
    std::fs::write(&outside, "keep me\n").unwrap();
    let mpath = home.join("msd-core/msd-file-manifest.json");
    let m = std::fs::read_to_string(&mpath).unwrap();
    let tampered = m.replacen("\"agents/msd-planner.md\"", "\"../precious.txt\"", 1);
    std::fs::write(&mpath, &tampered).unwrap();
    let before = tree(&w.home);
    for args in [vec!["--content", &s(&c)], vec!["uninstall"], vec!["verify"]] {
        let out = w.install().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("contains `..`"), "{args:?}");
        assert_eq!(tree(&w.home), before, "{args:?} wrote something");
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    // The same for the install state and a leftover journal.
    std::fs::write(&mpath, &m).unwrap();
    let spath = home.join("msd-core/msd-install-state.json");
    let state = std::fs::read_to_string(&spath).unwrap();
    std::fs::write(&spath, state.replacen("\"agents\"", "\"/etc\"", 1)).unwrap();
    let out = w.install().args(["--content", &s(&c)]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("absolute path"));
    std::fs::write(&spath, &state).unwrap();
    std::fs::create_dir_all(home.join(".msd-install")).unwrap();
    std::fs::write(
        home.join(".msd-install/journal.json"),
        r#"{"schema_version":1,"tool_version":"0","label":"x","ops":[{"path":"../precious.txt","action":"remove","old_sha256":"x"}]}"#,
    )
    .unwrap();
    let out = w.install().args(["--content", &s(&c)]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("journal of an interrupted run is unreadable"));
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
    let out = w.install().args(["--content", &s(&c)]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to write through a symlink") && err.contains("--allow-symlinks"), "{err}");
    assert!(tree(&elsewhere).is_empty() && !home.join("msd-core").exists(), "nothing written");
    w.install().args(["--content", &s(&c), "--allow-symlinks"]).assert().success();
    assert!(elsewhere.join("msd-plan/SKILL.md").exists(), "allowed: written through the link");
    // The home itself a link.
    let w2 = World::new();
    let real = w2.tmp.path().join("dotfiles-claude");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, w2.home.join(".claude")).unwrap();
    let out = w2.install().args(["--content", &s(&c)]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
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
        let out = w.install().args(["--content", &s(&c)]).output().unwrap();
        assert_eq!(out.status.code(), Some(4));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not writable") && err.contains("nothing was written"), "{err}");
    }
    assert_eq!(tree(&home).into_keys().collect::<Vec<_>>(), ["settings.json"]);
    // A read-only directory inside the target stops the run before anything is written.
    w.install().args(["--content", &s(&c)]).assert().success();
    let c2 = content_copy(&w, "content2");
    std::fs::write(c2.join("msd-core/references/rules.md"), "v2\n").unwrap();
    std::fs::write(c2.join("agents/msd-planner.md"), "---\nname: msd-planner\ndescription: v2\n---\nv2\n").unwrap();
    let before = tree(&home);
    {
        let _ro = Unwritable::new(&home.join("agents"));
        let out = w.install().args(["--content", &s(&c2)]).output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(tree(&home), before, "not even the writable parts changed");
}

#[test]
fn safety_missing_target_is_a_clear_error() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let missing = w.tmp.path().join("no/such/dir/claude");
    let out = w.install().args(["--content", &s(&c), "--config-dir", &s(&missing)]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be created") && err.contains("does not exist"), "{err}");
    assert!(!w.tmp.path().join("no").exists());
    // A file where the home should be.
    std::fs::write(w.home.join(".claude"), "not a dir").unwrap();
    let out = w.install().args(["--content", &s(&c)]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    nothing_written(&w, &["home/.claude"]);
}
