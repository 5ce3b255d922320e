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
        msd_run_exe: "/h/msd-core/bin/msd_run".into(),
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
/// Codex's status line: an MCP server table and the provider's pick (`runtimes/codex`).
const MCP: &str = r#"[{"id": "mcp:statusline", "kind": "key", "at": ["mcp_servers", "msd-statusline"], "value": {"command": "{{msd_run_exe}}", "args": ["mcp", "statusline"]}}, {"id": "statusline", "kind": "key", "at": ["tui", "status_line_provider"], "value": {"server": "msd-statusline", "tool": "statusline"}}]"#;
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
        name: "toml, a key into a table the user has only as a prefix of theirs",
        format: "toml",
        entries: KEY,
        before: Some("# mine\n[features.x]\ny = 1\n"),
        holds: &["[features]\nhooks = true\n# mine\n[features.x]\ny = 1\n"],
        owns: &["key:t"],
        notes: &[],
    },
    Case {
        name: "toml, an MCP server beside the user's, in their implicit table",
        format: "toml",
        entries: MCP,
        before: Some("# mine\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # theirs\n\n[tui]\nanimations = false\n"),
        holds: &[
            "# mine\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # theirs\n\n[mcp_servers.msd-statusline]\ncommand = \"/h/msd-core/bin/msd_run\"\nargs = [\"mcp\", \"statusline\"]\n\n[tui]\nanimations = false\n\n[tui.status_line_provider]\nserver = \"msd-statusline\"\ntool = \"statusline\"\n",
        ],
        owns: &["mcp:statusline", "statusline"],
        notes: &[],
    },
    Case {
        name: "toml, the user's own status line provider",
        format: "toml",
        entries: MCP,
        before: Some("[tui]\nstatus_line_provider = \"default\"\n"),
        holds: &["status_line_provider = \"default\"", "[mcp_servers.msd-statusline]\n"],
        owns: &["mcp:statusline"],
        notes: &["kept your status line \"default\""],
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

/// Issue 31: random sequences of install, user edits, re-runs, upgrades (a changed manifest:
/// entries changed, added and dropped) and a final uninstall, over every surface format, through
/// the same upsert and remove the runs use (ledger carried as the install state carries it).
/// After the uninstall every byte the user added is still there and nothing of msd's is; a file
/// msd created goes only when the user added nothing to it.
mod sequences {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        /// The same version runs again.
        Rerun,
        /// The other version of the manifest runs (upgrade, or back).
        Upgrade,
        /// The user (or the runtime) adds something of their own, at the top or the end.
        UserAdds { top: bool },
    }

    const V1: &str = r#"[
        {"id": "hook:s", "kind": "array-item", "at": ["hooks", "SessionStart"], "value": {"command": "{{core}}/bin/msd_run hook session-start"}},
        {"id": "key:t", "kind": "key", "at": ["features", "hooks"], "value": true}
    ]"#;
    const V2: &str = r#"[
        {"id": "hook:s", "kind": "array-item", "at": ["hooks", "SessionStart"], "value": {"command": "{{core}}/bin/msd_run hook session-begin", "timeout": 10}},
        {"id": "hook:g", "kind": "array-item", "at": ["hooks", "PreToolUse"], "value": {"command": "{{core}}/bin/msd_run hook guard"}}
    ]"#;
    const B1: &str = r#"[{"id": "block:a", "kind": "block", "text": "Use {{core_ref}}/workflows.\n"}]"#;
    const B2: &str = r#"[
        {"id": "block:a", "kind": "block", "text": "Use {{core_ref}}/workflows, always.\n"},
        {"id": "block:b", "kind": "block", "text": "Run {{msd_run}} when asked.\n"}
    ]"#;

    /// A user's starting file of each format (`jsonc`: JSON with comments).
    fn start(format: &str) -> &'static str {
        match format {
            "json" => "{\n  \"theme\": \"user-start\"\n}\n",
            "jsonc" => {
                "{\n  // user-start: my settings\n  \"hooks\": { \"SessionStart\": [ {\"command\": \"echo hi\"}, ] },\n}\n"
            }
            "toml" => "# user-start\nmodel = \"o3\"\n\n[features]\nother = 1\n",
            "yaml" => {
                "# user-start\nmodel:\n  default: claude\nfeatures: {}\nhooks:\n  SessionStart:\n  - command: echo hi\n"
            }
            _ => "# user-start\nBe brief.\n",
        }
    }

    /// `text` (or no file) with the user's `n`th addition.
    fn add(format: &str, text: Option<&str>, n: usize, top: bool) -> String {
        let mark = format!("user-{n}");
        let t = text.unwrap_or("");
        match format {
            "json" | "jsonc" => match t.find('{') {
                Some(i) => format!("{}\n  \"u{n}\": \"{mark}\",{}", &t[..=i], &t[i + 1..]),
                None => format!("{{\"u{n}\": \"{mark}\"}}\n"),
            },
            // Top-level keys go before the first table; YAML's at the top too, whatever the end.
            "toml" => format!("u{n} = \"{mark}\"\n{t}"),
            "yaml" => format!("u{n}: {mark}\n{t}"),
            _ if top => format!("{mark}\n{t}"),
            _ => format!("{t}\n{mark}\n"),
        }
    }

    fn run(format: &str, from: Option<&str>, steps: &[Step]) -> Result<(), TestCaseError> {
        let (wire, v1, v2) = match format {
            "md" => ("markdown", B1, B2),
            "jsonc" => ("json", V1, V2),
            f => (f, V1, V2),
        };
        let specs = [spec(wire, v1), spec(wire, v2)];
        let fresh = SurfaceLedger { format: specs[0].format, ..Default::default() };
        let fail = |what: &str, e: SettingsError| TestCaseError::fail(format!("{what}: {e}"));
        let mut text = from.map(str::to_string);
        let mut ledger = fresh.clone();
        let mut version = 0;
        let mut added = Vec::new();
        let install = |text: &mut Option<String>, ledger: &mut SurfaceLedger, v: usize| {
            let e = upsert(&specs[v], &vars(), "f", text.as_deref(), ledger, false).map_err(|e| fail("install", e))?;
            *text = e.text;
            *ledger = if e.ledger.is_empty() { fresh.clone() } else { e.ledger };
            Ok::<(), TestCaseError>(())
        };
        install(&mut text, &mut ledger, version)?;
        for step in steps {
            match step {
                Step::Rerun => install(&mut text, &mut ledger, version)?,
                Step::Upgrade => {
                    version = 1 - version;
                    install(&mut text, &mut ledger, version)?;
                }
                Step::UserAdds { top } => {
                    text = Some(add(format, text.as_deref(), added.len(), *top));
                    added.push(format!("user-{}", added.len()));
                }
            }
        }
        let gone = remove(specs[0].format, "f", text.as_deref(), &ledger).map_err(|e| fail("uninstall", e))?;
        let after = gone.text.as_deref();
        let trail = format!("{format} from {from:?} via {steps:?}: {after:?}");
        for mark in added.iter().map(String::as_str).chain(from.map(|_| "user-start")) {
            prop_assert!(after.is_some_and(|t| t.contains(mark)), "lost {mark}: {trail}");
        }
        if let Some(t) = after {
            for ours in ["msd_run", "msd-install:begin", "/h/msd-core", "~/.claude/msd-core"] {
                prop_assert!(!t.contains(ours), "{ours} left: {trail}");
            }
        }
        if added.is_empty() {
            prop_assert_eq!(after, from, "{}", trail);
        }
        Ok(())
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![Just(Step::Rerun), Just(Step::Upgrade), any::<bool>().prop_map(|top| Step::UserAdds { top })]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
        #[test]
        fn surfaces_sequences_keep_every_user_byte_and_leave_nothing_of_msd(
            format in prop::sample::select(vec!["json", "jsonc", "toml", "yaml", "md"]),
            existed: bool,
            steps in prop::collection::vec(step(), 0..7),
        ) {
            run(format, existed.then(|| start(format)), &steps)?;
        }
    }

    /// The sequence of defect 2.1 itself, in every format: created, added to, re-run, removed.
    #[test]
    fn surfaces_sequences_a_created_file_the_user_added_to_stays() {
        for format in ["json", "jsonc", "toml", "yaml", "md"] {
            run(format, None, &[Step::UserAdds { top: false }, Step::Rerun])
                .unwrap_or_else(|e| panic!("{format}: {e}"));
        }
    }
}

/// Issue 31, defect 2.7: a byte order mark is no reason to refuse a file, and it stays, in
/// every structured format, through an install, a user's edit and the uninstall's merge.
#[test]
fn surfaces_a_byte_order_mark_is_kept() {
    for (format, entries, text, edit) in [
        ("yaml", HOOK, "\u{feff}# mine\nhooks: {} # Hermes' default\n", "later: 1\n"),
        ("toml", KEY, "\u{feff}# mine\n[features]\nother = 1\n", "[later]\nx = 1\n"),
        ("json", HOOK, "\u{feff}{\"a\": 1}\n", ""),
    ] {
        let s = spec(format, entries);
        let fresh = SurfaceLedger { format: s.format, ..Default::default() };
        let installed = upsert(&s, &vars(), "f", Some(text), &fresh, false).unwrap_or_else(|e| panic!("{format}: {e}"));
        let mine = format!("{}{edit}", installed.text.unwrap());
        assert!(mine.starts_with('\u{feff}'), "{format}: {mine:?}");
        let again = upsert(&s, &vars(), "f", Some(&mine), &installed.ledger, false).unwrap();
        let removed = remove(s.format, "f", again.text.as_deref(), &again.ledger).unwrap();
        assert_eq!(removed.text.as_deref(), Some(format!("{text}{edit}").as_str()), "{format}");
    }
}
