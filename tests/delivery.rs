//! The flags that mean the same everywhere are honoured by every subcommand, wherever they are
//! given: `msd-install --json <sub>` prints one JSON document or refuses with a usage error that
//! says the command has no JSON, never plain text; `-q <sub>` prints nothing on stdout or
//! refuses likewise; `-r`, `--all` and `--local` before a subcommand that has no use for them
//! are refused, and reach the ones that do (`-r ID emit`, `-r ID doctor`).

use crate::support::{Install, World};

/// What a subcommand does with a global flag.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Takes {
    /// Honours it.
    Yes,
    /// Refuses it (exit 2, the message says to drop it).
    Refused,
}
use Takes::{Refused, Yes};

/// A world with claude installed globally and locally, an msd.toml in the project, and a
/// release channel that cannot be read (self-update then fails with its own error).
fn world() -> World {
    let w = World::new().env("MSD_INSTALL_RELEASE_URL", "file:///nonexistent/msd-release");
    Install::in_world(&w).args(["-r", "claude", "-q"]).run().success();
    Install::in_world(&w).args(["-r", "claude", "--local", "-q"]).run().success();
    Install::in_world(&w).args(["init-project"]).run().success();
    w
}

/// Every subcommand a user types (and the maintainers' ones that run outside the repository),
/// with arguments that make it run here, and whether it has JSON and honours -q.
fn commands(w: &World) -> Vec<(Vec<String>, Takes, Takes)> {
    let tmp = w.tmp.path().display().to_string();
    let rows: Vec<(&str, Takes, Takes)> = vec![
        ("", Yes, Yes),
        ("install -r claude", Yes, Yes),
        ("install -r claude --dry-run", Yes, Yes),
        ("emit -r claude --out {tmp}/emit-{flag}", Yes, Yes),
        ("emit --plugin {tmp}/plugin-{flag}", Yes, Yes),
        ("runtimes", Yes, Refused),
        ("status", Yes, Yes),
        ("diff -r claude", Refused, Refused),
        ("doctor -r claude", Yes, Yes),
        ("verify -r claude", Yes, Yes),
        ("recover -r claude", Yes, Yes),
        ("uninstall -r claude --local --dry-run", Yes, Yes),
        ("check", Yes, Yes),
        ("check tools", Yes, Yes),
        ("init-project --force", Refused, Yes),
        ("migrate --from claude --to codex --local", Refused, Yes),
        ("schema", Yes, Refused),
        ("schema --kind status", Yes, Refused),
        ("inventory", Yes, Refused),
        ("completions bash", Refused, Refused),
        ("man", Refused, Refused),
        ("self-update --no-reinstall", Yes, Yes),
        ("gen golden", Refused, Yes),
        ("bench tokens", Refused, Yes),
    ];
    rows.into_iter()
        .map(|(line, json, quiet)| {
            let args = line.split_whitespace().map(|a| a.replace("{tmp}", &tmp)).collect();
            (args, json, quiet)
        })
        .collect()
}

#[test]
fn delivery_json_before_any_subcommand_is_one_document_or_a_usage_error() {
    let w = world();
    for (args, takes, _) in commands(&w) {
        // Before the subcommand and after it.
        for at in [0, args.len()] {
            let mut line: Vec<String> = args.iter().map(|a| a.replace("{flag}", &format!("json{at}"))).collect();
            line.insert(at, "--json".into());
            let r = Install::in_world(&w).args(&line).run();
            let out = r.stdout();
            match takes {
                Yes => {
                    assert_ne!(r.exit(), Some(2), "{line:?} is accepted\n{}", r.describe());
                    let doc: Result<serde_json::Value, _> = serde_json::from_str(&out);
                    assert!(doc.is_ok(), "{line:?} prints one JSON document\n{}", r.describe());
                }
                Refused => {
                    let r = r.code(2).stderr_has("drop --json");
                    assert_eq!(r.stdout(), "", "{line:?} prints nothing when it refuses\n{}", r.describe());
                }
            }
        }
    }
}

#[test]
fn delivery_quiet_before_any_subcommand_prints_nothing_or_is_a_usage_error() {
    let w = world();
    for (args, _, takes) in commands(&w) {
        let args: Vec<String> = args.iter().map(|a| a.replace("{flag}", "quiet")).collect();
        let mut line = args.clone();
        line.insert(0, "-q".into());
        let r = Install::in_world(&w).args(&line).run();
        match takes {
            Yes => {
                assert_ne!(r.exit(), Some(2), "{line:?} is accepted\n{}", r.describe());
                assert_eq!(r.stdout(), "", "{line:?} prints nothing on stdout\n{}", r.describe());
            }
            Refused => {
                r.code(2).stderr_has("drop -q").stdout_empty();
            }
        }
    }
    // What -q kept quiet was done: the migration and the project file.
    assert!(w.project.join(".codex/msd-core").is_dir(), "migrate -q moved the install to codex");
    assert!(w.project.join("msd.toml").is_file());
}

#[test]
fn delivery_scope_flags_reach_the_subcommands_that_take_them_and_are_refused_by_the_others() {
    let w = world();
    // -r before `emit` and `doctor` reaches them.
    let out = w.tmp.path().join("emitted");
    Install::in_world(&w).args(["-r", "codex", "emit", "--out"]).arg(&out).args(["-q"]).run().success();
    assert!(out.join("msd-core").is_dir() || out.read_dir().unwrap().next().is_some(), "emit wrote the codex tree");
    let r = Install::in_world(&w).args(["--json", "-r", "claude", "doctor"]).run();
    let doc: serde_json::Value = serde_json::from_str(&r.stdout()).unwrap_or_else(|_| panic!("{}", r.describe()));
    let text = doc.to_string();
    assert!(text.contains("claude") && !text.contains("\"codex\""), "doctor checked claude only: {text}");
    // `emit` without a runtime, given nowhere, is still an error.
    Install::in_world(&w).args(["emit", "--out"]).arg(w.tmp.path().join("none")).run().code(2).stderr_has("-r ID");

    // A flag a subcommand has no use for is refused, before or after it, rather than ignored.
    for (line, needle) in [
        (&["--local", "status"][..], "has no --local"),
        (&["status", "--local"][..], "has no --local"),
        (&["--all", "doctor"][..], "has no --all"),
        (&["-r", "claude", "runtimes"][..], "takes no runtime"),
        (&["runtimes", "-r", "claude"][..], "takes no runtime"),
        (&["-r", "claude", "self-update"][..], "takes no runtime"),
        (&["--local", "init-project"][..], "has no --local"),
        (&["-r", "claude", "-r", "codex", "emit", "--out", "x"][..], "takes one runtime"),
    ] {
        Install::in_world(&w).args(line).run().code(2).stderr_has(needle);
    }
}
