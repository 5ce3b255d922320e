//! Table-driven upsert and remove over every surface format: text and ledger in, text and
//! ledger out. Each case installs into a starting text, checks what landed and what the ledger
//! owns, then uninstalls and expects the starting text back byte for byte (or the file gone when
//! we created it).

use super::*;

fn vars() -> Vars {
    Vars {
        home: "/h".into(),
        core: "/h/msd-core".into(),
        core_ref: "~/.claude/msd-core".into(),
        msd_run: "/h/msd-core/bin/msd_run".into(),
        msd_run_powershell: "& '/h/msd-core/bin/msd_run'".into(),
        msd_run_argv: "/h/msd-core/bin/msd_run".into(),
        force_statusline: false,
        helper_ref_sh: "~/.claude/msd-core/bin/msd_run".into(),
    }
}

fn spec(format: &str, entries: &str) -> SurfaceSpec {
    let json = format!(r#"{{"file": "f", "format": "{format}", "entries": {entries}}}"#);
    serde_json::from_str(&json).expect("spec parses")
}

struct Case {
    name: &'static str,
    format: &'static str,
    entries: &'static str,
    before: Option<&'static str>,
    /// Substrings the installed text must hold.
    holds: &'static [&'static str],
    /// Owner ids the ledger must own after the install.
    owns: &'static [&'static str],
    /// Notes the install must give (substrings).
    notes: &'static [&'static str],
}

const HOOK: &str = r#"[{"id": "hook:s", "kind": "array-item", "at": ["hooks", "SessionStart"], "value": {"command": "{{core}}/bin/msd_run hook session-start"}}]"#;
const KEY: &str = r#"[{"id": "key:t", "kind": "key", "at": ["features", "hooks"], "value": true}]"#;
const BLOCK: &str = r#"[{"id": "block:a", "kind": "block", "text": "Use {{core_ref}}/workflows.\n"}]"#;

const CASES: &[Case] = &[
    Case {
        name: "yaml, absent file",
        format: "yaml",
        entries: HOOK,
        before: None,
        holds: &["hooks:\n  SessionStart:\n    - command: \"/h/msd-core/bin/msd_run hook session-start\"\n"],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "yaml, Hermes' default `hooks: {}` between commented keys",
        format: "yaml",
        entries: HOOK,
        before: Some(
            "# my hermes\nmodel:\n  default: claude # fav\n\n# hooks go here\nhooks: {}\nhooks_auto_accept: false\n",
        ),
        holds: &[
            "# my hermes\nmodel:\n  default: claude # fav\n\n# hooks go here\nhooks:\n  SessionStart:\n    - command: \"/h/msd-core/bin/msd_run hook session-start\"\nhooks_auto_accept: false\n",
        ],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "yaml, a user's hook in a compact list",
        format: "yaml",
        entries: HOOK,
        before: Some(
            "hooks:\n  SessionStart:\n  - command: echo hi # mine\n    timeout: 5\n  pre_tool_call:\n    - command: my-guard\n",
        ),
        holds: &[
            "  SessionStart:\n  - command: echo hi # mine\n    timeout: 5\n  - command: \"/h/msd-core/bin/msd_run hook session-start\"\n  pre_tool_call:\n    - command: my-guard\n",
        ],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "yaml, the user already has our item",
        format: "yaml",
        entries: HOOK,
        before: Some("hooks:\n  SessionStart:\n    - command: /h/msd-core/bin/msd_run hook session-start\n"),
        holds: &["msd_run hook session-start"],
        owns: &[],
        notes: &["already have"],
    },
    Case {
        name: "yaml, a key",
        format: "yaml",
        entries: KEY,
        before: Some("features:\n  other: 1\n"),
        holds: &["features:\n  other: 1\n  hooks: true\n"],
        owns: &["key:t"],
        notes: &[],
    },
    Case {
        name: "json, absent file",
        format: "json",
        entries: HOOK,
        before: None,
        holds: &["/h/msd-core/bin/msd_run hook session-start"],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "json, comments and a user hook",
        format: "json",
        entries: HOOK,
        before: Some(
            "{\n  // mine\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"command\": \"echo hi\"}\n    ]\n  }\n}\n",
        ),
        holds: &["// mine", "echo hi", "/h/msd-core/bin/msd_run hook session-start"],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "json, a user's array written on one line",
        format: "json",
        entries: HOOK,
        before: Some("{\"hooks\": {\"SessionStart\": [{\"command\": \"echo hi\"}]}}\n"),
        holds: &["echo hi", "/h/msd-core/bin/msd_run hook session-start"],
        owns: &["hook:s"],
        notes: &[],
    },
    Case {
        name: "json, the user already has our item",
        format: "json",
        entries: HOOK,
        before: Some(
            "{\"hooks\": {\"SessionStart\": [{\"command\": \"/h/msd-core/bin/msd_run hook session-start\"}]}}\n",
        ),
        holds: &["msd_run hook session-start"],
        owns: &[],
        notes: &["stays yours"],
    },
    Case {
        name: "json, a key the user set otherwise",
        format: "json",
        entries: KEY,
        before: Some("{\"features\": {\"hooks\": false}}\n"),
        holds: &["false"],
        owns: &[],
        notes: &["kept your value false"],
    },
    Case {
        name: "toml, a table with a comment",
        format: "toml",
        entries: KEY,
        before: Some("# my config\n[features]\nother = 1\n"),
        holds: &["# my config", "other = 1", "hooks = true"],
        owns: &["key:t"],
        notes: &[],
    },
    Case {
        name: "toml, absent file",
        format: "toml",
        entries: KEY,
        before: None,
        holds: &["hooks = true"],
        owns: &["key:t"],
        notes: &[],
    },
    Case {
        name: "markdown, user text without a final newline",
        format: "markdown",
        entries: BLOCK,
        before: Some("# My agents\nBe brief."),
        holds: &["# My agents\nBe brief.", "<!-- msd-install:begin block:a -->", "Use ~/.claude/msd-core/workflows."],
        owns: &["block:a"],
        notes: &[],
    },
    Case {
        name: "markdown, absent file",
        format: "markdown",
        entries: BLOCK,
        before: None,
        holds: &["<!-- msd-install:end block:a -->"],
        owns: &["block:a"],
        notes: &[],
    },
];

#[test]
fn surfaces_upsert_then_remove_restores_the_text() {
    for c in CASES {
        let s = spec(c.format, c.entries);
        let installed =
            upsert(&s, &vars(), "f", c.before, &SurfaceLedger { format: s.format, ..Default::default() }, false)
                .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let text = installed.text.clone().unwrap_or_else(|| panic!("{}: install removed the file", c.name));
        for h in c.holds {
            assert!(text.contains(h), "{}: installed text lacks {h:?}:\n{text}", c.name);
        }
        let owned: Vec<&str> = installed.ledger.entries.keys().map(String::as_str).collect();
        assert_eq!(owned, c.owns, "{}: ledger", c.name);
        for n in c.notes {
            assert!(
                installed.notes.iter().any(|x| x.contains(n)),
                "{}: no note {n:?} in {:?}",
                c.name,
                installed.notes
            );
        }

        let again = upsert(&s, &vars(), "f", Some(&text), &installed.ledger, false).unwrap();
        assert_eq!(again.text.as_deref(), Some(text.as_str()), "{}: a second install changes nothing", c.name);
        assert!(again.added.is_empty() && again.updated.is_empty(), "{}: {again:?}", c.name);

        let removed = remove(s.format, "f", Some(&text), &installed.ledger).unwrap();
        assert_eq!(removed.text.as_deref(), c.before, "{}: uninstall restores the bytes", c.name);
        assert!(removed.ledger.entries.is_empty(), "{}: nothing owned after uninstall", c.name);
    }
}

#[test]
fn surfaces_a_changed_entry_replaces_ours_in_place() {
    let old = spec("json", HOOK);
    let first = upsert(
        &old,
        &vars(),
        "f",
        Some("{\"hooks\": {\"SessionStart\": [{\"command\": \"mine\"}]}}"),
        &SurfaceLedger::default(),
        false,
    )
    .unwrap();
    let new = spec("json", &HOOK.replace("session-start", "session-begin"));
    let second = upsert(&new, &vars(), "f", first.text.as_deref(), &first.ledger, false).unwrap();
    let text = second.text.unwrap();
    assert_eq!(second.updated, ["hook:s"]);
    assert!(text.contains("session-begin") && !text.contains("session-start"), "{text}");
    assert!(text.find("mine").unwrap() < text.find("session-begin").unwrap(), "the user's item stays first: {text}");
}

#[test]
fn surfaces_unparseable_text_is_an_error_naming_the_line() {
    for (format, entries, text) in [("json", HOOK, "{\n  \"a\": ,\n}"), ("toml", KEY, "[features\n")] {
        let e = upsert(&spec(format, entries), &vars(), "settings.f", Some(text), &SurfaceLedger::default(), false)
            .expect_err(format);
        assert_eq!(e.path, "settings.f");
        assert!(e.line.is_some(), "{format}: {e}");
    }
}

#[test]
fn surfaces_a_lone_end_marker_is_an_error() {
    let e = upsert(
        &spec("markdown", BLOCK),
        &vars(),
        "AGENTS.md",
        Some("x\n<!-- msd-install:end block:a -->\n"),
        &SurfaceLedger::default(),
        false,
    )
    .expect_err("lone end");
    assert_eq!(e.line, Some(2));
}

/// The helper at `helper` as a POSIX shell word: relative to `$HOME` when `portable_home` is
/// given and holds it (`"$HOME"/'.claude/msd-core/bin/msd_run'`), else absolute and quoted.
fn helper_word(helper: &Path, portable_home: Option<&Path>) -> String {
    helper_command(helper, portable_home, Shell::Posix).expect("a POSIX word quotes anything but a NUL")
}

#[test]
fn surfaces_helper_word_quotes_or_goes_home_relative() {
    assert_eq!(sh_quote("/h/.claude/msd-core/bin/msd_run"), "/h/.claude/msd-core/bin/msd_run");
    assert_eq!(sh_quote("/My Home/it's/msd_run"), "'/My Home/it'\\''s/msd_run'");
    assert_eq!(sh_quote("/a/$x`y`"), "'/a/$x`y`'");
    let helper = Path::new("/My Home/.claude/msd-core/bin/msd_run");
    assert_eq!(helper_word(helper, None), "'/My Home/.claude/msd-core/bin/msd_run'");
    assert_eq!(helper_word(helper, Some(Path::new("/My Home"))), "\"$HOME\"/.claude/msd-core/bin/msd_run");
    // A helper outside the home stays absolute even under --portable-hooks.
    assert_eq!(helper_word(Path::new("/opt/x/msd_run"), Some(Path::new("/My Home"))), "/opt/x/msd_run");
}

/// `{{msd_run}}` on Windows: the helper is `msd_run.exe` and the command string is written for
/// the shell the runtime's manifest names for Windows (PowerShell calls a quoted path with `&`,
/// cmd.exe double-quotes, Git Bash takes the POSIX word). Unit-tested here because no Windows
/// runtime can run on this machine; CI builds and runs the binaries on Windows.
#[test]
fn surfaces_windows_command_strings_follow_the_runtime_shell() {
    use crate::pipeline::target::HomeSource;
    use msd_core::shell::{Os, Shell};
    use std::path::PathBuf;
    let target = |home: &str| Target {
        runtime: "gemini".into(),
        scope: msd_core::manifest::capability::Scope::Global,
        home: PathBuf::from(home),
        source: HomeSource::ConfigDir,
        home_ref: format!("{home}/"),
        core_ref: format!("{home}/msd-core/"),
        local_ref: "./.gemini/".into(),
    };
    let core = RelPath::new("msd-core").unwrap();
    let run = |home: &str, shell: Shell, portable: Option<&str>| {
        let mode = HookMode { portable: portable.is_some(), force_statusline: false };
        Vars::new(&target(home), &core, mode, portable.map(Path::new), (Os::Windows, shell)).map(|v| v.msd_run)
    };
    let home = r"C:\Users\A B\.gemini";
    let exe = format!("{home}/msd-core/bin/msd_run.exe");
    assert_eq!(run(home, Shell::PowerShell, None).unwrap(), format!("& '{exe}'"));
    assert_eq!(run(home, Shell::Cmd, None).unwrap(), format!("\"{exe}\""));
    assert_eq!(run(home, Shell::Posix, None).unwrap(), format!("'{exe}'"));
    // --portable-hooks (this test runs on Unix, where `\` is no separator: a `/` home here).
    let (home, user) = ("C:/Users/A B/.gemini", "C:/Users/A B");
    assert_eq!(run(home, Shell::PowerShell, Some(user)).unwrap(), "& \"$HOME\\.gemini/msd-core/bin/msd_run.exe\"");
    assert_eq!(run(home, Shell::Cmd, Some(user)).unwrap(), "\"%USERPROFILE%\\.gemini/msd-core/bin/msd_run.exe\"");
    // What cmd.exe cannot take is refused, naming the helper's path.
    let e = run(r"C:\100%\.gemini", Shell::Cmd, None).unwrap_err();
    assert!(e.path.ends_with("msd_run.exe") && e.message.contains("cmd.exe"), "{e}");
    // On Unix the helper keeps its name and every runtime's strings are POSIX.
    let unix = Vars::new(&target("/h/.gemini"), &core, HookMode::default(), None, (Os::Unix, Shell::Posix)).unwrap();
    assert_eq!(unix.msd_run, "/h/.gemini/msd-core/bin/msd_run");
    // `{{msd_run_powershell}}` (Copilot's `powershell` field) is a PowerShell call everywhere.
    let v = Vars::new(&target("/h/a b"), &core, HookMode::default(), None, (Os::Unix, Shell::Posix)).unwrap();
    assert_eq!(v.expand("{{msd_run_powershell}} hook guard"), "& '/h/a b/msd-core/bin/msd_run' hook guard");
}

/// The Windows shell of each runtime with command strings is manifest data, cited there.
#[test]
fn surfaces_windows_shell_is_manifest_data() {
    use msd_core::shell::{Os, Shell};
    let shell_of = |id: &str| {
        let path = format!("{}/runtimes/{id}/capability.json", env!("CARGO_MANIFEST_DIR"));
        let text = msd_core::fs::fsx::read_to_string(std::path::Path::new(&path)).expect("manifest");
        let cap: msd_core::manifest::capability::Capability = serde_json::from_str(&text).expect("parses");
        (cap.command_shell(Os::Windows), cap.command_shell(Os::Unix))
    };
    assert_eq!(shell_of("gemini"), (Shell::PowerShell, Shell::Posix));
    assert_eq!(shell_of("qwen"), (Shell::Cmd, Shell::Posix));
    assert_eq!(shell_of("claude"), (Shell::Posix, Shell::Posix));
    assert_eq!(shell_of("codex"), (Shell::Cmd, Shell::Posix));
}

/// Issue 15, item 7: install then uninstall gives back every JSON settings file byte for byte,
/// whatever its formatting (comments, trailing commas, CRLF, minified, a BOM, an empty file,
/// one-line arrays), and a file we created goes.
mod restore_bytes {
    use super::*;
    use proptest::prelude::*;

    fn variant(comment: bool, trailing: bool, crlf: bool, minified: bool, bom: bool, user_hook: bool) -> String {
        let hook = if user_hook { r#"{"command": "echo hi"}"# } else { "" };
        let sep = if trailing { "," } else { "" };
        // `[,]` is not JSON: a trailing comma in the array only after an item.
        let asep = if trailing && user_hook { "," } else { "" };
        let mut t = if minified {
            format!(r#"{{"model":"x","hooks":{{"SessionStart":[{hook}{asep}]}}{sep}}}"#)
        } else {
            let c = if comment { "  // mine\n  /* block */\n" } else { "" };
            format!("{{\n{c}  \"model\": \"x\",\n  \"hooks\": {{ \"SessionStart\": [ {hook}{asep} ] }}{sep}\n}}\n")
        };
        if crlf {
            t = t.replace('\n', "\r\n");
        }
        if bom {
            t.insert(0, '\u{feff}');
        }
        t
    }

    fn round_trip(before: Option<&str>) -> Result<(), TestCaseError> {
        let s = spec("json", HOOK);
        let installed =
            upsert(&s, &vars(), "f", before, &SurfaceLedger { format: s.format, ..Default::default() }, false)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = installed.text.clone().expect("installed");
        prop_assert!(text.contains("msd_run hook session-start"), "{text}");
        let again = upsert(&s, &vars(), "f", Some(&text), &installed.ledger, false).unwrap();
        let removed = remove(s.format, "f", Some(&text), &again.ledger).unwrap();
        prop_assert_eq!(removed.text.as_deref(), before);
        Ok(())
    }

    proptest! {
        #[test]
        fn surfaces_install_uninstall_restores_any_formatting(
            comment: bool, trailing: bool, crlf: bool, minified: bool, bom: bool, user_hook: bool,
        ) {
            round_trip(Some(&variant(comment, trailing, crlf, minified, bom, user_hook)))?;
        }
    }

    #[test]
    fn surfaces_install_uninstall_restores_empty_and_absent_files() {
        for before in [Some(""), Some("\n"), Some("   \r\n"), None] {
            round_trip(before).unwrap_or_else(|e| panic!("{before:?}: {e}"));
        }
    }
}

/// Issue 15, item 6: a duplicated msd block is refused; a user line inside our block is reported
/// as an edit (the caller backs the file up) when replaced or removed.
#[test]
fn surfaces_markdown_duplicate_and_edited_blocks() {
    let s = spec("markdown", BLOCK);
    let first = upsert(&s, &vars(), "AGENTS.md", Some("# Mine\n"), &SurfaceLedger::default(), false).unwrap();
    let text = first.text.clone().unwrap();
    let twice = format!("{text}\n{}", &text[text.find("<!--").unwrap()..]);
    let e = upsert(&s, &vars(), "AGENTS.md", Some(&twice), &first.ledger, false).expect_err("duplicate");
    assert!(e.message.contains("occurs twice"), "{e}");
    let mine = text.replace("/workflows.\n", "/workflows.\nmy own line\n");
    let again = upsert(&s, &vars(), "AGENTS.md", Some(&mine), &first.ledger, false).unwrap();
    assert_eq!(again.edited, ["block:a"]);
    assert_eq!(again.text.as_deref(), Some(text.as_str()));
    let gone = remove(s.format, "AGENTS.md", Some(&mine), &first.ledger).unwrap();
    assert_eq!(gone.edited, ["block:a"]);
}

#[test]
fn surfaces_yaml_structural_uninstall_and_refusals() {
    let s = spec("yaml", HOOK);
    let before = "# top\nhooks:\n  SessionStart:\n    - command: echo hi\n";
    let fresh = SurfaceLedger { format: s.format, ..Default::default() };
    let installed = upsert(&s, &vars(), "f", Some(before), &fresh, false).unwrap();
    // The user edits the file after the install: uninstall removes our item by value.
    let edited = format!("{}# later\n", installed.text.unwrap());
    let removed = remove(s.format, "f", Some(&edited), &installed.ledger).unwrap();
    assert_eq!(removed.text.as_deref(), Some(format!("{before}# later\n").as_str()));
    // Containers we created go again; the user's comment stays.
    let installed = upsert(&s, &vars(), "f", Some("a: 1\n"), &fresh, false).unwrap();
    let edited = format!("# mine\n{}", installed.text.unwrap());
    let removed = remove(s.format, "f", Some(&edited), &installed.ledger).unwrap();
    assert_eq!(removed.text.as_deref(), Some("# mine\na: 1\n"));
    // What cannot be edited as blocks is refused, the file untouched.
    for bad in [
        "hooks: {SessionStart: [{command: x}]}\n",
        "hooks:\n  SessionStart: [{command: x}]\n",
        "hooks: 3\n",
        "- a\n",
        "hooks:\n  SessionStart:\n    - command: [\n",
    ] {
        assert!(upsert(&s, &vars(), "f", Some(bad), &fresh, false).is_err(), "{bad:?}");
    }
}
