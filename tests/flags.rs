//! The flags that mean the same everywhere (`-q`, `-v`, `--json`, `--color`, `-r`, `--local`,
//! `--all`) work before the subcommand as well as after it, and mean the same in both places.

use crate::support::{Install, World};

/// Runs `before ++ [sub] ++ rest` and `[sub] ++ before ++ rest` in `w`; both must exit alike and
/// print the same stdout, which is returned.
fn both_positions(w: &World, flags: &[&str], sub: &str, rest: &[&str]) -> String {
    let mut first: Vec<&str> = flags.to_vec();
    first.push(sub);
    first.extend(rest);
    let mut second = vec![sub];
    second.extend(flags);
    second.extend(rest);
    let a = Install::in_world(w).args(&first).run();
    let b = Install::in_world(w).args(&second).run();
    assert_eq!(a.exit(), b.exit(), "{first:?} and {second:?} exit alike\n{}\n{}", a.describe(), b.describe());
    assert_ne!(a.exit(), Some(2), "{first:?} is accepted\n{}", a.describe());
    assert_eq!(a.stdout(), b.stdout(), "{first:?} and {second:?} print the same");
    a.stdout()
}

#[test]
fn flags_global_ones_work_before_and_after_the_subcommand() {
    let w = World::new();
    Install::in_world(&w).args(["-r", "claude", "-r", "codex", "-q"]).run().success().stdout_empty();
    Install::in_world(&w).args(["-r", "gemini", "--local", "-q"]).run().success();

    // -q: nothing on stdout; without it status prints its table.
    assert!(!Install::in_world(&w).status().run().success().stdout().is_empty());
    assert_eq!(both_positions(&w, &["-q"], "status", &[]), "");
    assert_eq!(both_positions(&w, &["-q"], "verify", &["-r", "codex"]), "");

    // --json: one document.
    let text = both_positions(&w, &["--json"], "status", &[]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("status --json is JSON");
    assert_eq!(doc["installs"].as_array().map(Vec::len), Some(3), "{doc}");

    // -r: the runtime named, not the default one.
    let text = both_positions(&w, &["-r", "codex"], "verify", &[]);
    assert!(text.contains("codex (global)") && !text.contains("claude"), "{text}");

    // --local: the project's install.
    let text = both_positions(&w, &["--local", "-r", "gemini"], "verify", &[]);
    assert!(text.contains("gemini (local)"), "{text}");

    // --all: every install of the scope.
    let text = both_positions(&w, &["--all"], "verify", &[]);
    assert!(text.contains("claude (global)") && text.contains("codex (global)"), "{text}");

    // -v: every file with its reason.
    let text = both_positions(&w, &["-v"], "install", &["-r", "codex", "--dry-run"]);
    assert!(text.contains("(unchanged)"), "{text}");

    // --color always: escapes even off a terminal.
    let text = both_positions(&w, &["--color", "always"], "status", &[]);
    assert!(text.contains('\u{1b}'), "{text}");

    // Options of the install alone are refused before a subcommand, as before.
    Install::in_world(&w).args(["--dry-run", "status"]).run().code(2).stderr_has("cannot be used with '--dry-run'");
}

/// Every subcommand that prints, with arguments that run in a world with a claude and a gemini
/// install, whether it takes `--json` and whether it takes `-q`.
fn every_subcommand(w: &World) -> Vec<(Vec<String>, bool, bool)> {
    let out = |name: &str| w.tmp.path().join(name).display().to_string();
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        (s(&["install", "-r", "claude"]), true, true),
        (s(&["status"]), true, true),
        (s(&["verify"]), true, true),
        (s(&["recover"]), true, true),
        (s(&["uninstall", "-r", "codex", "--dry-run"]), true, true),
        (s(&["runtimes"]), true, false),
        (vec!["emit".into(), "-r".into(), "claude".into(), "--out".into(), out("emitted")], true, true),
        (s(&["schema", "--kind", "status"]), true, false),
        (s(&["diff", "-r", "claude"]), false, false),
        (s(&["migrate", "--from", "gemini", "--to", "antigravity"]), false, true),
        (s(&["init-project"]), false, true),
        (s(&["completions", "bash"]), false, false),
        (s(&["man"]), false, false),
    ]
}

/// Issue 37: the output mode is resolved once, and every subcommand honours it or refuses it.
/// `--json` prints one JSON document, or is refused (exit 2, on stderr, before anything runs)
/// by a command without one; `-q` prints nothing on stdout, or is refused by a command whose
/// output is the thing asked for. Before, `diff`, `migrate`, `init-project`, `completions` and
/// `man` printed their text under both.
#[test]
fn flags_every_subcommand_honours_the_global_output_mode() {
    let w = World::new();
    Install::in_world(&w).args(["-r", "claude", "-r", "gemini", "-q"]).run().success();
    Install::in_world(&w).args(["-r", "claude", "--local", "-q"]).run().success();
    let runtimes = |w: &World| -> Vec<String> {
        let doc = Install::in_world(w).status().json().run().success().json();
        let mut ids: Vec<String> = doc["installs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["scope"] == "global")
            .map(|r| r["runtime"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    for (args, json, _) in every_subcommand(&w) {
        let ran = Install::in_world(&w).arg("--json").args(&args).run();
        if json {
            let doc: Result<serde_json::Value, _> = serde_json::from_str(&ran.stdout());
            assert!(doc.is_ok(), "--json {args:?} prints one JSON document\n{}", ran.describe());
            assert_eq!(ran.exit(), Some(0), "{}", ran.describe());
        } else {
            ran.code(2).stderr_has("drop --json").stdout_empty();
        }
    }
    assert!(!w.project.join("msd.toml").exists(), "a refused init-project wrote nothing");
    assert_eq!(runtimes(&w), ["claude", "gemini"], "a refused migrate moved nothing");

    for (args, _, quiet) in every_subcommand(&w) {
        if args[0] == "emit" {
            std::fs::remove_dir_all(w.tmp.path().join("emitted")).unwrap();
        }
        let ran = Install::in_world(&w).arg("-q").args(&args).run();
        if quiet {
            assert_eq!(ran.exit(), Some(0), "-q {args:?} runs\n{}", ran.describe());
            assert_eq!(ran.stdout(), "", "-q {args:?} prints nothing on stdout");
        } else {
            ran.code(2).stderr_has("drop -q").stdout_empty();
        }
    }
    assert!(w.project.join("msd.toml").is_file(), "init-project ran under -q");
    assert_eq!(runtimes(&w), ["antigravity", "claude"], "migrate ran under -q");
}
