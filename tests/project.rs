//! A team's msd in the repository (issue 36): `msd.toml` at the project root, installs that follow
//! it, `msd-install check` for CI, the `.gitignore` block, `init-project`, its schema.

use std::path::Path;

use crate::support::{Install, World, fixture, tree};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A requirement that accepts this binary (`>=0.3, <0.4` for 0.3.5).
fn accepting() -> String {
    let v: Vec<u64> = VERSION.split('.').map(|p| p.parse().unwrap()).collect();
    format!(">={}.{}, <{}.{}", v[0], v[1], v[0], v[1] + 1)
}

fn write(w: &World, rel: &str, text: &str) {
    let p = w.project.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The team's file of the issue: claude and codex, profile core, this binary's series.
fn team_file(w: &World, extra: &str) {
    write(
        w,
        "msd.toml",
        &format!(
            "[install]\nruntimes = [\"claude\", \"codex\"]   # ids as `msd-install runtimes` lists them\nprofile = \"core\"\nversion = \"{}\"\n{extra}",
            accepting()
        ),
    );
}

fn state(root: &Path, home: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root.join(home).join("msd-core/msd-install-state.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The project check as JSON: (exit code, document).
fn check(w: &World) -> (i32, serde_json::Value) {
    let r = Install::in_world(w).args(["check", "--json"]).run();
    (r.exit().unwrap(), r.json())
}

/// The problem kinds of `runtime` in a check document.
fn kinds(doc: &serde_json::Value, runtime: &str) -> Vec<String> {
    let rt = doc["runtimes"].as_array().unwrap().iter().find(|r| r["runtime"] == runtime).unwrap();
    rt["problems"].as_array().unwrap().iter().map(|p| p["kind"].as_str().unwrap().to_string()).collect()
}

#[test]
fn project_msd_toml_installs_each_runtime_locally_with_its_profile_and_says_so() {
    let w = World::new();
    team_file(&w, "");
    Install::in_world(&w)
        .run()
        .success()
        .stdout_has(&format!("following {}", w.project.join("msd.toml").display()))
        .stdout_has("claude, codex locally, profile core")
        .file(".claude/msd-core/msd-file-manifest.json")
        .file(".codex/msd-core/msd-file-manifest.json")
        .file(".claude/commands/msd-plan-phase.md")
        // core only: a command of the full profile is not there
        .no_file(".claude/commands/msd-add-phase.md");
    assert_eq!(state(&w.project, ".claude")["profile"], "core");
    assert_eq!(state(&w.project, ".codex")["profile"], "core");
    assert!(!w.home.join(".claude").exists(), "nothing global was written");
    assert!(!w.project.join(".gitignore").exists(), "without gitignore = true, .gitignore is not touched");
    // From a subdirectory, the project is found the way --local finds it.
    std::fs::create_dir_all(w.project.join(".git")).unwrap();
    std::fs::create_dir_all(w.project.join("src/deep")).unwrap();
    Install::in_world(&w).cwd(w.project.join("src/deep")).run().success().stdout_has("up to date");
    assert!(!w.project.join("src/deep/.claude").exists());
    // Flags win, and the summary says which.
    let doc = Install::in_world(&w).args(["--profile", "full", "--dry-run", "--json"]).run().success().json();
    assert_eq!(doc["msd_toml"]["followed"], true);
    assert_eq!(doc["msd_toml"]["overridden"][0], "--profile full (msd.toml: core)");
    assert_eq!(doc["runtimes"].as_array().unwrap().len(), 2);
    assert_eq!(doc["runtimes"][0]["profile"], "full");
    Install::in_world(&w)
        .args(["-r", "gemini", "--dry-run"])
        .run()
        .success()
        .stdout_has("the command line wins: --runtime gemini (msd.toml: claude, codex)")
        .stdout_has("gemini (local)");
    Install::in_world(&w)
        .args(["--global", "--dry-run"])
        .run()
        .success()
        .stdout_has("not following")
        .stdout_has("--global installs outside the project");
}

#[test]
fn project_content_path_installs_that_tree() {
    let w = World::new();
    crate::support::copy_tree(&fixture("starter"), &w.project.join("tools/msd-content"));
    write(&w, "msd.toml", "[install]\nruntimes = [\"claude\"]\ncontent = \"tools/msd-content\"\n");
    let starter = tree(&fixture("starter"));
    let command = starter.keys().find(|k| k.starts_with("commands/msd/")).unwrap().clone();
    let stem = command.trim_start_matches("commands/msd/").trim_end_matches(".md");
    Install::in_world(&w)
        .run()
        .success()
        .stdout_has("the project's content")
        .file(&format!(".claude/commands/msd-{stem}.md"));
    Install::in_world(&w).arg("check").run().success();
    // The tree moves on: the install no longer matches it.
    let src = w.project.join("tools/msd-content").join(&command);
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, format!("{text}\nOne more line.\n")).unwrap();
    let (code, doc) = check(&w);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(kinds(&doc, "claude"), ["content"], "{doc}");
}

#[test]
fn project_malformed_msd_toml_is_refused_before_any_write() {
    let cases: &[(&str, &str, &str)] = &[
        ("[install]\nruntimes = [\"claude\"]\nprofle = \"core\"\n", "msd.toml:3", "unknown key `install.profle`"),
        ("[install]\nruntimes = [\"claude\",\n  \"claudee\"]\n", "msd.toml:3", "unknown runtime `claudee`"),
        ("[install]\nruntimes = [\"kimi\"]\n", "msd.toml:2", "no project-local install"),
        ("[install]\nruntimes = [\"claude\"]\nversion = \"0.4 or later\"\n", "msd.toml:3", "not a version requirement"),
        ("[install]\nruntimes = [\"claude\"]\nprofile = \"huge\"\n", "msd.toml:3", "unknown profile `huge`"),
        (
            "[install]\nruntimes = [\"claude\"]\ngitignore = \"yes\"\n",
            "msd.toml:3",
            "`gitignore` must be true or false",
        ),
        ("[install]\nruntimes = [\"claude\"]\n[extra]\n", "msd.toml:3", "unknown key `extra`"),
        ("[install]\nruntimes = \"claude\"\n", "msd.toml:2", "must be an array"),
        ("[install]\nprofile = \"core\"\n", "msd.toml", "has no `runtimes`"),
        ("[install\n", "msd.toml:1", "not valid TOML"),
        (
            "[install]\nruntimes = [\"claude\"]\ncontent = \"../elsewhere\"\n",
            "msd.toml:3",
            "relative path inside the project",
        ),
    ];
    for (text, at, what) in cases {
        let w = World::new();
        write(&w, "msd.toml", text);
        let before = tree(&w.project);
        Install::in_world(&w).note(text).run().code(3).stderr_has(at).stderr_has(what).stderr_has("hint:");
        Install::in_world(&w).note(text).arg("check").run().code(3).stderr_has(what);
        let doc = Install::in_world(&w).note(text).args(["check", "--json"]).run().code(3).json();
        assert_eq!(doc["file"], w.project.join("msd.toml").display().to_string(), "{text}");
        if let Some((_, line)) = at.split_once(':') {
            assert_eq!(doc["line"], line.parse::<u64>().unwrap(), "{text}");
        }
        assert_eq!(tree(&w.project), before, "{text}: nothing was written in the project");
        assert!(tree(&w.home).is_empty(), "{text}: nothing was written in the home");
    }
}

#[test]
fn project_a_version_outside_the_requirement_refuses_with_its_own_exit_code() {
    let w = World::new();
    write(&w, "msd.toml", "[install]\nruntimes = [\"claude\"]\nversion = \">=99.1, <99.2\"\n");
    Install::in_world(&w)
        .run()
        .code(6)
        .stderr_has(&format!("this is msd-install {VERSION}"))
        .stderr_has("accepts `>=99.1, <99.2`")
        .stderr_has("msd.toml:3")
        .stderr_has("hint: install an msd-install that matches");
    assert_eq!(tree(&w.project).len(), 1, "only msd.toml");
    let doc = Install::in_world(&w).arg("--json").run().code(6).json();
    assert_eq!(
        (&doc["exit_code"], &doc["required"], &doc["version"]),
        (&6.into(), &">=99.1, <99.2".into(), &VERSION.into())
    );
    Install::in_world(&w).arg("check").run().code(6);
    // The help's exit code table names it.
    Install::in_world(&w)
        .arg("--help")
        .run()
        .success()
        .stdout_has("  6  this msd-install's version is not one the target accepts");
}

#[test]
fn project_check_passes_then_fails_after_an_edit_a_removed_runtime_a_wrong_profile_and_an_old_version() {
    let w = World::new();
    team_file(&w, "");
    // Nothing installed yet.
    let (code, doc) = check(&w);
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc, "claude"), ["not-installed"]);
    Install::in_world(&w).run().success();
    let (code, doc) = check(&w);
    assert_eq!((code, doc["ok"].as_bool()), (0, Some(true)), "{doc}");
    Install::in_world(&w).arg("check").run().success().stdout_has("ok: every runtime msd.toml lists");

    // An edit.
    let edited = w.project.join(".claude/commands/msd-plan-phase.md");
    std::fs::write(&edited, "mine\n").unwrap();
    let (code, doc) = check(&w);
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc, "claude"), ["drift"], "{doc}");
    assert_eq!(kinds(&doc, "codex"), Vec::<String>::new());
    let paths = &doc["runtimes"][0]["problems"][0]["paths"];
    assert_eq!(paths[0], "modified commands/msd-plan-phase.md", "{doc}");
    Install::in_world(&w).arg("check").run().code(1).stdout_has("FAIL  claude").stdout_has("drift:");
    Install::in_world(&w).run().success();
    assert_eq!(check(&w).0, 0);

    // A removed runtime.
    Install::in_world(&w).args(["uninstall", "--local", "-r", "codex"]).run().success();
    let (code, doc) = check(&w);
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc, "codex"), ["not-installed"]);
    Install::in_world(&w).run().success();
    assert_eq!(check(&w).0, 0);

    // A wrong profile: installed full, msd.toml says core.
    Install::in_world(&w).args(["-r", "codex", "--profile", "full"]).run().success();
    let (code, doc) = check(&w);
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc, "codex"), ["profile"], "{doc}");
    Install::in_world(&w).run().success();
    assert_eq!(check(&w).0, 0);

    // An install by a version outside the requirement.
    let manifest = w.project.join(".codex/msd-core/msd-file-manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace(&format!("\"tool_version\": \"{VERSION}\""), "\"tool_version\": \"0.0.1\""))
        .unwrap();
    let (code, doc) = check(&w);
    assert_eq!(code, 1);
    assert!(kinds(&doc, "codex").contains(&"version".to_string()), "{doc}");
    // And the binary itself outside it: refused, exit 6.
    team_file(&w, "");
    let text = std::fs::read_to_string(w.project.join("msd.toml")).unwrap();
    write(&w, "msd.toml", &text.replace(&accepting(), ">=99"));
    Install::in_world(&w).args(["check", "--json"]).run().code(6);
}

#[test]
fn project_check_without_msd_toml_says_how_to_write_one() {
    let w = World::new();
    Install::in_world(&w).arg("check").run().code(2).stderr_has("no msd.toml").stderr_has("init-project");
    // The content checks are still subcommands of check.
    Install::in_world(&w).args(["check", "references", "--help"]).run().success();
}

#[test]
fn project_gitignore_block_is_added_and_removed_exactly() {
    let w = World::new();
    // A user's .gitignore without a final newline, and a mode of its own.
    let mine = "target/\n# my notes\n!keep.log";
    write(&w, ".gitignore", mine);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(w.project.join(".gitignore"), std::fs::Permissions::from_mode(0o664)).unwrap();
    }
    team_file(&w, "");
    Install::in_world(&w).run().success();
    assert_eq!(std::fs::read_to_string(w.project.join(".gitignore")).unwrap(), mine, "no gitignore key: untouched");

    team_file(&w, "gitignore = true\n");
    Install::in_world(&w).run().success().stdout_has("added msd's block");
    let text = std::fs::read_to_string(w.project.join(".gitignore")).unwrap();
    assert!(text.ends_with(mine), "the user's bytes follow the block unchanged: {text}");
    let block: Vec<&str> = text.lines().collect();
    assert_eq!(block[0], "# msd-install:begin local-installs");
    for line in ["/.claude/msd-core/", "/.codex/msd-core/", "/.claude/commands/msd-plan-phase.md"] {
        assert!(block.contains(&line), "{line} listed: {text}");
    }
    assert_eq!(text.matches("msd-install:begin").count(), 1, "one block");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(w.project.join(".gitignore")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o664, "the file's mode stays the user's");
    }
    // git agrees that the installed paths are ignored and the user's are not.
    let git = |args: &[&str]| std::process::Command::new("git").args(args).current_dir(&w.project).output().unwrap();
    if git(&["init", "-q"]).status.success() {
        let out = git(&["check-ignore", ".claude/msd-core/VERSION", ".codex/skills/msd-help/SKILL.md", "keep.log"]);
        let ignored = String::from_utf8_lossy(&out.stdout);
        assert!(ignored.contains(".claude/msd-core/VERSION") && ignored.contains(".codex/skills/msd-help/SKILL.md"));
        assert!(!ignored.contains("keep.log"), "the user's own negation still wins: {ignored}");
        std::fs::remove_dir_all(w.project.join(".git")).unwrap();
    }
    // A second run changes nothing; the uninstall of one runtime shrinks the block, of the last removes it.
    Install::in_world(&w).run().success().stdout_lacks(".gitignore");
    assert_eq!(std::fs::read_to_string(w.project.join(".gitignore")).unwrap(), text);
    Install::in_world(&w).args(["uninstall", "--local", "-r", "codex"]).run().success().stdout_has("now lists");
    let shrunk = std::fs::read_to_string(w.project.join(".gitignore")).unwrap();
    assert!(!shrunk.contains("/.codex/") && shrunk.contains("/.claude/msd-core/"), "{shrunk}");
    Install::in_world(&w)
        .args(["uninstall", "--local", "-r", "claude"])
        .run()
        .success()
        .stdout_has("removed msd's block");
    assert_eq!(std::fs::read(w.project.join(".gitignore")).unwrap(), mine.as_bytes(), "byte for byte");

    // A .gitignore msd created goes with its block.
    let w = World::new();
    team_file(&w, "gitignore = true\n");
    Install::in_world(&w).run().success();
    assert!(w.project.join(".gitignore").exists());
    Install::in_world(&w).args(["uninstall", "--local", "--all"]).run().success();
    assert!(!w.project.join(".gitignore").exists(), "msd created it, and only its block was in it");

    // A .gitignore that is a symlink stays one; the file it points to gets the block, then loses it.
    #[cfg(unix)]
    {
        let w = World::new();
        write(&w, "shared/ignore", "node_modules/\n");
        std::os::unix::fs::symlink("shared/ignore", w.project.join(".gitignore")).unwrap();
        team_file(&w, "gitignore = true\n");
        Install::in_world(&w).run().success();
        assert!(std::fs::symlink_metadata(w.project.join(".gitignore")).unwrap().file_type().is_symlink());
        let through = std::fs::read_to_string(w.project.join("shared/ignore")).unwrap();
        assert!(through.contains("/.claude/msd-core/") && through.ends_with("node_modules/\n"), "{through}");
        Install::in_world(&w).args(["uninstall", "--local", "--all"]).run().success();
        assert!(std::fs::symlink_metadata(w.project.join(".gitignore")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(w.project.join("shared/ignore")).unwrap(), "node_modules/\n");
    }
}

/// The `.gitignore` edit keeps what the user set on the file as a settings file's edit does (one
/// primitive, `fsx::write_in_place`): its mode and its owner (run as root over another user's
/// project, the file stays theirs), through install and uninstall, and through a symlink the
/// file it points to keeps them. Before, only the mode was kept: root left a root-owned file.
#[cfg(unix)]
#[test]
fn project_gitignore_keeps_its_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let is_root = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
    let meta = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.permissions().mode() & 0o7777, m.uid(), m.gid())
    };
    for linked in [false, true] {
        let w = World::new();
        let real = if linked { "shared/ignore" } else { ".gitignore" };
        write(&w, real, "target/\n");
        if linked {
            std::os::unix::fs::symlink(real, w.project.join(".gitignore")).unwrap();
        }
        let file = w.project.join(real);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        // Another user's file, as root finds it in a project it installs into.
        let want = if is_root {
            std::os::unix::fs::chown(&file, Some(4242), Some(4343)).unwrap();
            (0o640, 4242, 4343)
        } else {
            meta(&file)
        };
        team_file(&w, "gitignore = true\n");
        Install::in_world(&w).run().success().stdout_has("added msd's block");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("/.claude/msd-core/") && text.ends_with("target/\n"), "{text}");
        assert_eq!(meta(&file), want, "after install (linked: {linked}): mode, uid, gid");
        Install::in_world(&w).args(["uninstall", "--local", "--all"]).run().success();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "target/\n");
        assert_eq!(meta(&file), want, "after uninstall (linked: {linked}): mode, uid, gid");
        if linked {
            assert!(std::fs::symlink_metadata(w.project.join(".gitignore")).unwrap().file_type().is_symlink());
        }
    }
}

#[test]
fn project_init_project_writes_msd_toml_from_the_installs_and_keeps_an_existing_one() {
    let w = World::new();
    Install::in_world(&w).arg("init-project").run().code(2).stderr_has("no local msd install");
    Install::in_world(&w).args(["-r", "claude", "-r", "gemini", "--local", "--profile", "standard"]).run().success();
    Install::in_world(&w).arg("init-project").run().success().stdout_has("wrote");
    let text = std::fs::read_to_string(w.project.join("msd.toml")).unwrap();
    assert!(text.contains("runtimes = [\"claude\", \"gemini\"]"), "{text}");
    assert!(text.contains("profile = \"standard\""), "{text}");
    assert!(text.contains(&format!("version = \"{}\"", accepting())), "{text}");
    // What it wrote is what is installed: the check passes, an install changes nothing.
    Install::in_world(&w).arg("check").run().success();
    Install::in_world(&w).run().success().stdout_has("up to date").stdout_lacks("added");
    // An existing file is kept without --force.
    write(&w, "msd.toml", "# mine\n[install]\nruntimes = [\"claude\"]\n");
    Install::in_world(&w).arg("init-project").run().code(2).stderr_has("exists").stderr_has("--force");
    assert_eq!(
        std::fs::read_to_string(w.project.join("msd.toml")).unwrap(),
        "# mine\n[install]\nruntimes = [\"claude\"]\n"
    );
    Install::in_world(&w).args(["init-project", "--force"]).run().success();
    assert!(std::fs::read_to_string(w.project.join("msd.toml")).unwrap().contains("gemini"));
    // Different profiles cannot be one file.
    Install::in_world(&w).args(["-r", "gemini", "--local", "--profile", "core"]).run().success();
    Install::in_world(&w).args(["init-project", "--force"]).run().code(2).stderr_has("different profiles");
}

#[test]
fn project_schema_describes_the_file() {
    let w = World::new();
    let schema = Install::in_world(&w).args(["schema", "--kind", "project"]).run().success().json();
    let install = &schema["$defs"]["SchemaInstall"];
    assert_eq!(install["additionalProperties"], false, "{schema}");
    assert_eq!(schema["additionalProperties"], false);
    let ids = install["properties"]["runtimes"]["items"]["enum"].as_array().unwrap();
    assert!(ids.iter().any(|i| i == "claude") && !ids.iter().any(|i| i == "kimi"), "local runtimes only: {ids:?}");
    for key in ["runtimes", "profile", "version", "content", "gitignore"] {
        assert!(install["properties"].get(key).is_some(), "{key}");
    }
    insta::assert_snapshot!("schema-project", serde_json::to_string_pretty(&schema).unwrap());
}
