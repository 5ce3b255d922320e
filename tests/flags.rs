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
