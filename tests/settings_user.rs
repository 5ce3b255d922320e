//! Issue 31: what a user (or the runtime itself) put in a settings file survives every run of
//! msd-install, in every format: keys added after an install and written back by a re-run,
//! a file replaced wholesale, a file's mode and owner, a symlink into a dotfiles repository,
//! Hermes' YAML merge keys and byte order mark. Uninstall takes out msd's entries and nothing
//! else; a file goes only when nothing but what msd created is left in it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::lifecycle::{content_copy, s};
use crate::support::{Install, World, repo};

/// The text a user adds to a settings file of each format, and the word that marks it.
const MARK: &str = "kept-by-user";

/// `text` with a user's addition in the format of `file` (by its extension).
fn user_edit(file: &Path, text: &str) -> String {
    match file.extension().and_then(|e| e.to_str()) {
        Some("json") => {
            let at = text.find('{').expect("a JSON object") + 1;
            format!("{}\n  \"userKey\": \"{MARK}\",{}", &text[..at], &text[at..])
        }
        Some("toml") => format!("{text}\n[user_table]\nnote = \"{MARK}\"\n"),
        Some("yaml") => format!("{text}user_key: {MARK}\n"),
        Some("md") => format!("{text}\n## My own rules\n- {MARK}\n"),
        other => panic!("no user edit for {other:?}: {}", file.display()),
    }
}

/// The settings files an install reported, absolute, with whether it created them.
fn surfaces(ran: &crate::support::Ran<'_>) -> Vec<(PathBuf, bool)> {
    let doc = ran.json();
    let mut out = Vec::new();
    for r in doc["runtimes"].as_array().expect("runtimes") {
        let home = PathBuf::from(r["home"].as_str().expect("home"));
        for st in r["settings"].as_array().expect("settings") {
            out.push((home.join(st["path"].as_str().expect("path")), st["action"] == "add"));
        }
    }
    out
}

/// Whether `text` still holds anything of msd's: its helper, its blocks, its core dir, or the
/// one key it sets in a Codex `config.toml`.
fn holds_msd(text: &str) -> bool {
    ["msd_run", "msd-install:begin", "msd-core", "hooks = true"].iter().any(|m| text.contains(m))
}

/// Issue 31, defect 2.1: install creates the settings file, the user adds to it, a re-run
/// writes it back with ours; uninstall must take out only msd's entries. 0.3.5 recorded the
/// re-run's whole file as msd's and deleted it, in every format.
#[test]
fn settings_user_additions_to_a_file_msd_created_survive_a_rerun_and_uninstall() {
    let shipped = repo().join("content");
    // (runtime, --local, shipped content: Hermes' nested skills layout needs its groups)
    let cases: &[(&str, bool, bool)] = &[
        ("claude", false, false),
        ("claude", true, false),
        ("gemini", false, false),
        ("qwen", false, true),
        ("cursor", false, false),
        ("codex", false, false),
        ("opencode", false, false),
        ("kimi", false, false),
        ("copilot", false, false),
        ("hermes", false, true),
    ];
    let mut formats = std::collections::BTreeSet::new();
    for &(rt, local, full) in cases {
        let w = World::new();
        let c = if full { shipped.clone() } else { content_copy(&w, "content") };
        let install = || {
            let i = Install::in_world(&w).runtime(rt).content(&c).note(format!("{rt} local={local}"));
            if local { i.local() } else { i }
        };
        let ran = install().json().run().success();
        let created: Vec<PathBuf> = surfaces(&ran).into_iter().filter(|(_, add)| *add).map(|(p, _)| p).collect();
        assert!(!created.is_empty(), "{rt}: the install created no settings file");
        for f in &created {
            let text = std::fs::read_to_string(f).unwrap();
            std::fs::write(f, user_edit(f, &text)).unwrap();
            formats.insert(f.extension().unwrap().to_string_lossy().into_owned());
        }
        install().run().success();
        let un = Install::in_world(&w).uninstall().runtime(rt);
        (if local { un.local() } else { un }).run().success();
        for f in &created {
            let text = std::fs::read_to_string(f)
                .unwrap_or_else(|e| panic!("{rt}: uninstall removed {} holding the user's key: {e}", f.display()));
            assert!(text.contains(MARK), "{rt}: {} lost the user's addition:\n{text}", f.display());
            assert!(!holds_msd(&text), "{rt}: {} still holds msd's entries:\n{text}", f.display());
        }
    }
    let formats: Vec<&str> = formats.iter().map(String::as_str).collect();
    assert_eq!(formats, ["json", "md", "toml", "yaml"], "every format is covered");
}

/// Issue 31, defect 2.1: a user who replaces msd's file wholesale with their own and reinstalls
/// keeps their file through uninstall (0.3.5 deleted it: it was "created by msd").
#[test]
fn settings_user_a_file_replaced_wholesale_is_the_users() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let codex = w.home.join(".codex");
    Install::in_world(&w).runtime("claude").runtime("codex").content(&c).run().success();
    let mine = [
        (w.home.join(".claude/settings.json"), "{\n  \"theme\": \"mine\"\n}\n"),
        (codex.join("config.toml"), "# my codex\nmodel = \"o3\"\n"),
        (codex.join("AGENTS.md"), "# My agents\nBe brief.\n"),
        (codex.join("hooks.json"), "{\n  \"mine\": true\n}\n"),
    ];
    for (f, text) in &mine {
        std::fs::write(f, text).unwrap();
    }
    Install::in_world(&w).runtime("claude").runtime("codex").content(&c).run().success();
    for (f, _) in &mine {
        assert!(holds_msd(&std::fs::read_to_string(f).unwrap()), "{}: msd's entries were added", f.display());
    }
    Install::in_world(&w).uninstall().runtime("claude").runtime("codex").run().success();
    for (f, text) in &mine {
        let got = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{} was deleted: {e}", f.display()));
        assert_eq!(&got, text, "{}", f.display());
    }
}

/// Issue 31, defect 2.1: a user's own file that replaced msd's holds what msd's file also
/// held: Cursor's `"version": 1`, Hermes' `hooks: {}`. The ledger of msd's first file called
/// those msd's (it created them), so uninstall took them out of the user's file and reformatted
/// it. The user's file is theirs whole: uninstall gives it back byte for byte.
#[test]
fn settings_user_a_replacing_file_with_keys_msd_also_writes_is_kept_whole() {
    let shipped = repo().join("content");
    let cases: &[(&str, &str, &str)] = &[
        ("cursor", ".cursor/hooks.json", "{\"version\":1,\"hooks\":{\"stop\":[{\"command\":\"echo mine\"}]}}\n"),
        ("hermes", ".hermes/config.yaml", "model: mine\nhooks: {}\n"),
    ];
    for &(rt, rel, text) in cases {
        let w = World::new();
        let f = w.home.join(rel);
        Install::in_world(&w).runtime(rt).content(&shipped).run().success();
        assert!(holds_msd(&std::fs::read_to_string(&f).unwrap()), "{rt}: install wrote {rel}");
        std::fs::remove_file(&f).unwrap();
        std::fs::write(&f, text).unwrap();
        Install::in_world(&w).runtime(rt).content(&shipped).run().success();
        assert!(holds_msd(&std::fs::read_to_string(&f).unwrap()), "{rt}: the reinstall added msd's entries");
        Install::in_world(&w).uninstall().runtime(rt).run().success();
        let got = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{rt}: {rel} was deleted: {e}"));
        assert_eq!(got, text, "{rt}: {rel} is not the user's file as they wrote it");
    }
}

/// The other side of the rule above: a user who takes msd's hooks out of a file msd created but
/// leaves its status line has not replaced the file; uninstall still takes the status line out.
#[test]
fn settings_user_msd_status_line_left_alone_in_its_file_goes_at_uninstall() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let f = w.home.join(".claude/settings.json");
    Install::in_world(&w).runtime("claude").content(&c).run().success();
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("hooks");
    o.remove("permissions");
    assert!(o.contains_key("statusLine"), "msd's install set the status line: {v}");
    o.insert("userKey".into(), MARK.into());
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    Install::in_world(&w).uninstall().runtime("claude").run().success();
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.contains(MARK) && !holds_msd(&text), "{text}");
}

/// The mode bits and owner of `p`.
fn meta(p: &Path) -> (u32, u32, u32) {
    let m = std::fs::metadata(p).unwrap();
    (m.permissions().mode() & 0o7777, m.uid(), m.gid())
}

fn chown(p: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(p, Some(uid), Some(gid)).unwrap();
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

/// Issue 31, defect 2.2: a private settings file (an API key, a token) stays private through
/// install and uninstall, in JSON, TOML and Markdown; run as root over another user's file it
/// stays theirs; a read-only file stays read-only. 0.3.5 wrote them back `0644`, root-owned.
#[test]
fn settings_user_files_keep_their_mode_and_owner() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let claude = w.home.join(".claude");
    let codex = w.home.join(".codex");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    // Another user's files, as root finds them in a home it installs into.
    let (uid, gid) = if is_root() { (4242, 4343) } else { (0, 0) };
    let files = [
        (claude.join("settings.json"), "{\n  \"env\": { \"ANTHROPIC_API_KEY\": \"sk-secret\" }\n}\n", 0o600),
        (codex.join("config.toml"), "# token inside\n[mcp_servers.x]\nenv = { TOKEN = \"t0k\" }\n", 0o600),
        (codex.join("AGENTS.md"), "# Mine\nprivate notes\n", 0o640),
        (codex.join("hooks.json"), "{}\n", 0o444),
    ];
    for (f, text, mode) in &files {
        std::fs::write(f, text).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(*mode)).unwrap();
        if is_root() {
            chown(f, uid, gid);
        }
    }
    let want = |mode: u32| if is_root() { (mode, uid, gid) } else { (mode, meta(&claude).1, meta(&claude).2) };
    let check = |when: &str| {
        for (f, _, mode) in &files {
            assert_eq!(meta(f), want(*mode), "{when}: {} (mode, uid, gid)", f.display());
        }
    };
    Install::in_world(&w).runtime("claude").runtime("codex").content(&c).run().success();
    for (f, text, _) in &files {
        assert_ne!(&std::fs::read_to_string(f).unwrap(), text, "{}: msd's entries were added", f.display());
    }
    check("after install");
    // A re-run after the user's edit rewrites each file again (merged, not restored).
    let settings = claude.join("settings.json");
    let t = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, user_edit(&settings, &t)).unwrap();
    Install::in_world(&w).runtime("claude").runtime("codex").content(&c).run().success();
    check("after a re-run");
    Install::in_world(&w).uninstall().runtime("claude").runtime("codex").run().success();
    check("after uninstall");
    for (f, text, _) in &files[1..] {
        assert_eq!(&std::fs::read_to_string(f).unwrap(), text, "{}: restored", f.display());
    }
}

/// Issue 31, defect 2.3: a settings file that is a symlink into a dotfiles repository. Without
/// `--allow-symlinks` the run refuses before any write, naming the link; with it, the file the
/// link points to is written (atomically, in its own directory, keeping its mode) and the link
/// stays a link, through install and uninstall. 0.3.5 replaced the link by a plain file.
#[test]
fn settings_user_a_linked_settings_file_is_written_through_its_link() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let dots = w.tmp.path().join("dotfiles");
    let claude = w.home.join(".claude");
    let codex = w.home.join(".codex");
    for d in [&dots, &claude, &codex] {
        std::fs::create_dir_all(d).unwrap();
    }
    let files = [
        (claude.join("settings.json"), dots.join("claude-settings.json"), "{\n  \"theme\": \"dark\" // mine\n}\n"),
        (codex.join("config.toml"), dots.join("codex.toml"), "model = \"o3\"\n"),
    ];
    for (link, real, text) in &files {
        std::fs::write(real, text).unwrap();
        std::fs::set_permissions(real, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(real, link).unwrap();
    }
    let before = crate::support::tree(&dots);
    Install::in_world(&w)
        .runtime("claude")
        .content(&c)
        .run()
        .code(4)
        .stderr_has(&format!("{} is a symlink", s(&files[0].0)))
        .stderr_has("--allow-symlinks");
    assert!(!claude.join("msd-core").exists(), "nothing was written");
    assert_eq!(crate::support::tree(&dots), before);
    let run = || Install::in_world(&w).runtime("claude").runtime("codex").content(&c).arg("--allow-symlinks");
    run().run().success();
    let listing = |d: &Path| {
        let mut v: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    for (link, real, text) in &files {
        assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink(), "{} stays a link", link.display());
        assert_eq!(&std::fs::read_link(link).unwrap(), real);
        let got = std::fs::read_to_string(real).unwrap();
        assert!(holds_msd(&got) && got.contains(text.trim_end_matches('\n').lines().next().unwrap()), "{got}");
        assert_eq!(meta(real).0, 0o600, "{}", real.display());
    }
    assert_eq!(listing(&dots), ["claude-settings.json", "codex.toml"], "no temp file left beside the targets");
    run().run().success();
    Install::in_world(&w).uninstall().runtime("claude").runtime("codex").arg("--allow-symlinks").run().success();
    for (link, real, text) in &files {
        assert!(std::fs::symlink_metadata(link).unwrap().file_type().is_symlink(), "{} stays a link", link.display());
        assert_eq!(&std::fs::read_to_string(real).unwrap(), text, "{}", real.display());
        assert_eq!(meta(real).0, 0o600);
    }
}

/// Issue 31, defect 2.3: `status` reads a home that is a symlink (0.3.5 exited 4 and listed
/// nothing); reading needs no `--allow-symlinks`.
#[test]
fn settings_user_status_reads_a_linked_home() {
    let w = World::new();
    let c = content_copy(&w, "content");
    let real = w.tmp.path().join("dotfiles-claude");
    std::fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&real, w.home.join(".claude")).unwrap();
    Install::in_world(&w).content(&c).arg("--allow-symlinks").run().success();
    let ran = Install::in_world(&w).status().json().run().success();
    let rows = ran.json()["installs"].as_array().cloned().unwrap_or_default();
    assert!(rows.iter().any(|r| r["runtime"] == "claude" && r["clean"] == true), "{}", ran.stdout());
}

fn hermes_world(yaml: &str) -> (World, PathBuf) {
    let w = World::new();
    let hermes = w.home.join(".hermes");
    std::fs::create_dir_all(&hermes).unwrap();
    std::fs::write(hermes.join("config.yaml"), yaml).unwrap();
    (w, hermes.join("config.yaml"))
}

/// Issue 31, defect 2.7: a user's Hermes hook brought in by a YAML merge key is never
/// overridden by msd's entry. Where msd would have to write the merged key beside the merge
/// (which takes the merged list's place, and the user's hook stops running) it refuses and
/// leaves the file; a merge that brings in other events is edited around and given back.
#[test]
fn settings_user_hermes_merge_key_hooks_keep_running() {
    let c = repo().join("content");
    let merged =
        "base: &base\n  pre_tool_call:\n    - matcher: terminal\n      command: ~/bin/no-rm.sh\nhooks:\n  <<: *base\n";
    let (w, file) = hermes_world(merged);
    // Said as what it is: the file's syntax is fine (0.3.5's hint sent the user to fix it).
    Install::in_world(&w)
        .runtime("hermes")
        .content(&c)
        .run()
        .code(3)
        .stderr_has("merge key")
        .stderr_has("or what the error names when the syntax is fine");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), merged, "left untouched");
    // A merge bringing another event: ours go beside it, the user's hook still merged in.
    let other = "base: &base\n  post_tool_call:\n    - command: ~/bin/audit.sh\nhooks:\n  <<: *base\n";
    let (w, file) = hermes_world(other);
    Install::in_world(&w).runtime("hermes").content(&c).run().success();
    let text = std::fs::read_to_string(&file).unwrap();
    let v: serde_json::Value = {
        let mut y: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
        y.apply_merge().unwrap();
        serde_json::to_value(y).unwrap()
    };
    assert_eq!(v["hooks"]["post_tool_call"][0]["command"], "~/bin/audit.sh", "{text}");
    assert!(v["hooks"]["pre_tool_call"][0]["command"].as_str().unwrap().contains("msd_run hook guard"), "{text}");
    Install::in_world(&w).uninstall().runtime("hermes").run().success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), other);
}

/// Issue 31, defect 2.7: a Hermes `config.yaml` that starts with a byte order mark is edited
/// (0.3.5 refused it: "multi-document", or "not a block mapping"), the mark kept, and given back
/// byte for byte after the user added to it, its `hooks: {}` too.
#[test]
fn settings_user_hermes_config_with_a_bom_is_accepted_and_kept() {
    let c = repo().join("content");
    // Hermes' default `hooks: {}`, which msd opens into a block and closes again.
    let yaml = "\u{feff}model:\n  default: claude # mine\nhooks: {}\n";
    let (w, file) = hermes_world(yaml);
    Install::in_world(&w).runtime("hermes").content(&c).run().success();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("\u{feff}model:\n") && text.contains("msd_run hook guard"), "{text:?}");
    let edited = format!("{text}user_key: {MARK}\n");
    std::fs::write(&file, &edited).unwrap();
    Install::in_world(&w).runtime("hermes").content(&c).run().success();
    Install::in_world(&w).uninstall().runtime("hermes").run().success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), format!("{yaml}user_key: {MARK}\n"));
}
