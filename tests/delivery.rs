//! The flags that mean the same everywhere are honoured by every subcommand, wherever they are
//! given: `msd-install --json <sub>` prints one JSON document or refuses with a usage error that
//! says the command has no JSON, never plain text; `-q <sub>` prints nothing on stdout or
//! refuses likewise; `-r`, `--all` and `--local` before a subcommand that has no use for them
//! are refused, and reach the ones that do (`-r ID emit`, `-r ID doctor`). And the release's
//! targets are listed once (dist-workspace.toml), every channel following them.

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

/// The release's targets are listed once, in dist-workspace.toml: the release workflow's
/// channels job takes its matrix from the dist manifest, and no workflow or packaging script
/// names a target triple of its own. Every workflow is valid YAML.
#[test]
fn delivery_the_release_targets_are_listed_once_and_every_channel_follows_them() {
    let root = crate::support::repo();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let dist: toml_edit::DocumentMut = read("dist-workspace.toml").parse().unwrap();
    let targets: Vec<String> = dist["dist"]["targets"]
        .as_array()
        .expect("dist-workspace.toml lists its targets")
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(targets.len() >= 5 && targets.iter().any(|t| t.contains("windows")), "{targets:?}");
    assert_eq!(dist["dist"]["windows-archive"].as_str(), Some(".zip"), "what self-update reads on Windows is said");
    assert_eq!(dist["dist"]["unix-archive"].as_str(), Some(".tar.gz"));
    let jobs = dist["dist"]["global-artifacts-jobs"].as_array().expect("the channels job is dist's");
    assert!(jobs.iter().any(|j| j.as_str() == Some("./channels")), "{jobs:?}");

    for entry in std::fs::read_dir(root.join(".github/workflows")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let _: yaml_serde::Value = yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for t in &targets {
            assert!(!text.contains(t.as_str()), "{} names {t}: the targets are dist-workspace.toml's", path.display());
        }
    }
    let channels: yaml_serde::Value = yaml_serde::from_str(&read(".github/workflows/channels.yml")).unwrap();
    let matrix = channels["jobs"]["platform"]["strategy"]["matrix"].as_str().unwrap_or_default();
    assert_eq!(matrix, "${{ fromJson(inputs.plan).ci.github.artifacts_matrix }}", "the dist manifest's matrix");
    let release: yaml_serde::Value = yaml_serde::from_str(&read(".github/workflows/release.yml")).unwrap();
    assert_eq!(release["jobs"]["custom-channels"]["uses"].as_str(), Some("./.github/workflows/channels.yml"));
    for script in [".ci/packages", ".ci/channels.py", ".ci/npm/msd-install.js"] {
        let text = read(script);
        for t in &targets {
            assert!(!text.contains(t.as_str()), "{script} names {t}: it reads the targets from the dist manifest");
        }
    }

    // The targets as .ci/channels.py reads them (what the launcher and the formula are made from).
    let out = std::process::Command::new("python3")
        .arg(root.join(".ci/channels.py"))
        .args(["targets"])
        .arg(root.join("dist-workspace.toml"))
        .output()
        .expect("python3 runs");
    let mut read_back: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    let mut want = targets.clone();
    read_back.sort();
    want.sort();
    assert_eq!(read_back, want, "{}", String::from_utf8_lossy(&out.stderr));

    // The wheel is maturin's, with both binaries of the root crate.
    let py: toml_edit::DocumentMut = read("pyproject.toml").parse().unwrap();
    assert_eq!(py["build-system"]["build-backend"].as_str(), Some("maturin"));
    assert_eq!(py["tool"]["maturin"]["bindings"].as_str(), Some("bin"));
    assert!(!root.join(".ci/wheel.py").exists(), "no hand-written wheel builder");
}
