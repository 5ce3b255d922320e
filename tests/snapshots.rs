//! Snapshots (insta) of what people and runtimes read: the `--help` texts, and one combined
//! snapshot per runtime x scope of every text file the starter fixture emits, paths filtered.
//! A converter or manifest change shows here as a reviewable diff (`cargo insta review`).

use crate::support::{Install, Ran, World, fixture, tree};

fn help(w: &World, bin: &str) -> String {
    let cmd = if bin == "msd_run" { Install::in_world(w).helper() } else { Install::in_world(w) };
    cmd.env("COLUMNS", "100").arg("--help").run().success().stdout().replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
}

#[test]
fn snapshots_help_texts() {
    let w = World::new();
    insta::assert_snapshot!("msd-install-help", help(&w, "msd-install"));
    insta::assert_snapshot!("msd_run-help", help(&w, "msd_run"));
}

#[test]
fn snapshots_emitted_text_per_runtime_and_scope() {
    // The starter plus the command groups nested skill layouts need.
    let base = World::new();
    let starter = base.tmp.path().join("starter");
    crate::support::copy_tree(&fixture("starter"), &starter);
    std::fs::write(
        starter.join("namespaces.json"),
        r#"{"instructions": "Pick the command from the table and read its skill file.",
  "groups": [{"name": "phase", "description": "Plan and execute a phase.", "commands": ["plan", "execute"]}]}"#,
    )
    .unwrap();
    for rt in msd_install::pipeline::load_runtimes(&Default::default()).unwrap() {
        let id = rt.capability.id.clone();
        for (scope, flag) in [("global", None), ("local", Some("--local"))] {
            if flag.is_some() && rt.capability.local.is_none() {
                continue;
            }
            let w = World::new();
            let out = w.tmp.path().join("out");
            let mut args =
                vec!["emit", "-r", id.as_str(), "--content", starter.to_str().unwrap(), "--out", out.to_str().unwrap()];
            args.extend(flag);
            Install::in_world(&w).args(&args).run().success();
            let mut text = String::new();
            for (path, bytes) in tree(&out) {
                let Ok(body) = String::from_utf8(bytes) else { continue };
                text.push_str(&format!("=== {path}\n{body}"));
                if !body.ends_with('\n') {
                    text.push('\n');
                }
            }
            let text = text
                .replace(&w.home.display().to_string(), "[HOME]")
                .replace(&w.project.display().to_string(), "[PROJECT]")
                .replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
            insta::assert_snapshot!(format!("emitted-{id}-{scope}"), text);
        }
    }
}

/// Issue 15, item 11: each message names the path, the cause and the fix, and exits with the
/// README's code. One combined snapshot, temp paths filtered.
#[test]
fn snapshots_error_messages() {
    fn case(text: &mut String, name: &str, ran: &Ran) {
        let stderr = ran
            .stderr()
            .replace(&ran.world.tmp.path().display().to_string(), "[TMP]")
            .replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
        text.push_str(&format!("=== {name} (exit {})\n{stderr}\n", ran.exit().unwrap_or(-1)));
    }
    let mut text = String::new();

    // `~/.claude/skills` is a file where skill directories go.
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".claude")).unwrap();
    std::fs::write(w.home.join(".claude/skills"), "mine\n").unwrap();
    case(&mut text, "skills dir is a file", &Install::in_world(&w).arg("-q").run());
    assert_eq!(std::fs::read(w.home.join(".claude/skills")).unwrap(), b"mine\n");

    // A symlinked `~/.claude` (the migration is the first step that looks).
    let w = World::new();
    std::fs::create_dir_all(w.home.join("dotfiles/claude")).unwrap();
    std::os::unix::fs::symlink("dotfiles/claude", w.home.join(".claude")).unwrap();
    case(&mut text, "symlinked home", &Install::in_world(&w).arg("-q").run());
    assert_eq!(std::fs::read_dir(w.home.join("dotfiles/claude")).unwrap().count(), 0, "nothing written through it");

    // HOME is relative.
    let w = World::new();
    case(&mut text, "relative HOME", &Install::in_world(&w).env("HOME", "rel").arg("-q").run());
    assert!(!w.project.join("rel").exists());

    // A symlink loop in the content tree.
    let w = World::new();
    let content = w.tmp.path().join("content");
    crate::support::copy_tree(&fixture("starter"), &content);
    std::os::unix::fs::symlink("loop.md", content.join("msd-core/loop.md")).unwrap();
    case(&mut text, "symlink loop in content", &Install::in_world(&w).arg("-q").content(&content).run());

    // A corrupt journal of an interrupted run: damaged state, exit 3, for install and recover.
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".claude/.msd-install/txn")).unwrap();
    std::fs::write(w.home.join(".claude/.msd-install/journal.json"), "{bad").unwrap();
    case(&mut text, "corrupt journal (install)", &Install::in_world(&w).arg("-q").run());
    case(&mut text, "corrupt journal (recover)", &Install::in_world(&w).recover().run());

    insta::assert_snapshot!("error-messages", text);
}
