//! `msd-install doctor`: a clean install passes (a runtime CLI that is not on this machine is
//! reported, not a problem), and each planted fault is found with exit 1: a missing helper, a
//! hook whose command no longer runs, a shadowing copy, a CLI outside the tested range, a CLI
//! that does not list what msd wrote, a runtime named with -r that has no install.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{Install, Ran, World};

/// PATH of a machine without any runtime CLI, with `stubs` in front when given.
fn path_with(stubs: Option<&Path>) -> String {
    match stubs {
        Some(d) => format!("{}:/usr/bin:/bin", d.display()),
        None => "/usr/bin:/bin".to_string(),
    }
}

fn doctor<'w>(w: &'w World, stubs: Option<&Path>, runtimes: &[&str]) -> Ran<'w> {
    let mut i = Install::in_world(w).arg("doctor").env("PATH", path_with(stubs));
    for r in runtimes {
        i = i.args(["-r", r]);
    }
    i.json().run()
}

/// A stub CLI named `name` in `<tmp>/stubs`: `body` is its shell script.
fn stub(w: &World, name: &str, body: &str) -> PathBuf {
    let dir = w.tmp.path().join("stubs");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

fn findings<'a>(doc: &'a serde_json::Value, runtime: &str, check: &str) -> Vec<&'a serde_json::Value> {
    doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["runtime"] == runtime)
        .flat_map(|t| t["findings"].as_array().unwrap())
        .filter(|f| f["check"] == check)
        .collect()
}

fn problems(doc: &serde_json::Value) -> Vec<String> {
    doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["findings"].as_array().unwrap())
        .filter(|f| f["level"] == "problem")
        .map(|f| format!("{}: {}", f["check"], f["message"]))
        .collect()
}

#[test]
fn doctor_a_clean_install_passes_and_a_cli_not_on_this_machine_is_not_a_problem() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").runtime("gemini").arg("-q").run().success();
    let doc = doctor(&w, None, &[]).success().json();
    assert_eq!(doc["ok"], true, "{:?}", problems(&doc));
    let ids: Vec<&str> = doc["targets"].as_array().unwrap().iter().map(|t| t["runtime"].as_str().unwrap()).collect();
    assert_eq!(ids, ["claude", "gemini"], "every install, and only those");
    let cli = &findings(&doc, "claude", "cli")[0];
    assert_eq!(cli["level"], "not-checked");
    assert!(cli["message"].as_str().unwrap().contains("`claude` is not on PATH"));
    // The sunset notice is a note, not a problem.
    assert_eq!(findings(&doc, "gemini", "sunset")[0]["level"], "note");
    // Text: one line per finding, with what to do.
    let text = Install::in_world(&w).arg("doctor").env("PATH", path_with(None)).run().success().stdout();
    assert!(text.contains("claude global: ok (claude not on PATH)"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("  not checked [cli]: `claude` is not on PATH") && l.contains("; install"))
    );
}

#[test]
fn doctor_finds_a_missing_helper() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    std::fs::remove_file(w.home.join(".claude/msd-core/bin/msd_run")).unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    assert_eq!(doc["ok"], false);
    let helper = findings(&doc, "claude", "helper");
    assert_eq!(helper.len(), 1, "{:?}", problems(&doc));
    assert_eq!(helper[0]["level"], "problem");
    assert!(helper[0]["hint"].as_str().unwrap().contains("msd-install -r claude"));
    // The hooks that call it do not answer either.
    assert!(findings(&doc, "claude", "hook").iter().any(|f| f["message"].as_str().unwrap().contains("exit 127")));
}

#[test]
fn doctor_finds_a_hook_whose_command_no_longer_runs() {
    let w = World::new();
    Install::in_world(&w).runtime("gemini").arg("-q").run().success();
    doctor(&w, None, &["gemini"]).success();
    let settings = w.home.join(".gemini/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let broken = text.replacen("msd-core/bin/msd_run hook guard", "msd-core/gone/msd_run hook guard", 1);
    assert_ne!(broken, text, "the guard hook is registered in settings.json");
    std::fs::write(&settings, broken).unwrap();
    let doc = doctor(&w, None, &["gemini"]).code(1).json();
    let hooks = findings(&doc, "gemini", "hook");
    assert_eq!(hooks.len(), 1, "only the guard hook fails: {hooks:?}");
    let m = hooks[0]["message"].as_str().unwrap();
    assert!(m.contains("hook:guard") && m.contains("exit 127") && m.contains("gone/msd_run"), "{m}");
}

#[test]
fn doctor_finds_a_shadowing_copy() {
    let w = World::new();
    Install::in_world(&w).runtime("codex").arg("-q").run().success();
    doctor(&w, None, &[]).success();
    let copy = w.home.join(".agents/skills/msd-help");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join("SKILL.md"), "---\nname: msd-help\ndescription: mine\n---\n").unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    let shadow = findings(&doc, "codex", "shadow");
    assert_eq!(shadow.len(), 1, "{:?}", problems(&doc));
    let m = shadow[0]["message"].as_str().unwrap();
    assert!(m.contains(".agents/skills holds 1 skills") && m.contains("msd-help"), "{m}");
    assert!(copy.join("SKILL.md").exists(), "doctor reads only");
}

#[test]
fn doctor_says_when_the_cli_names_its_tools_otherwise_than_the_agents() {
    // Claude Code before 2.1.117 has Glob and Grep; msd wrote the agents for 2.1.332 (Bash).
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    let stubs = stub(&w, "claude", "echo '2.1.100 (Claude Code)'");
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let tools = findings(&doc, "claude", "tools");
    assert_eq!(tools.len(), 1, "{:?}", problems(&doc));
    let m = tools[0]["message"].as_str().unwrap();
    assert!(m.contains("claude 2.1.100") && m.contains("2.1.117+") && m.contains("Glob, Grep"), "{m}");
    // A version in the applied range: nothing about tools.
    let stubs = stub(&w, "claude", "echo '2.1.200 (Claude Code)'");
    let doc = doctor(&w, Some(&stubs), &[]).json();
    assert!(findings(&doc, "claude", "tools").is_empty(), "{:?}", problems(&doc));
}

#[test]
fn doctor_finds_a_cli_outside_the_tested_range() {
    let w = World::new();
    Install::in_world(&w).runtime("gemini").arg("-q").run().success();
    let stubs = stub(&w, "gemini", "echo 0.99.0");
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let t = &doc["targets"][0];
    assert_eq!((t["cli"]["version"].as_str(), t["cli"]["in_range"].as_bool()), (Some("0.99.0"), Some(false)));
    let cli = findings(&doc, "gemini", "cli");
    assert!(cli[0]["message"].as_str().unwrap().contains("outside the range msd was tested with"), "{cli:?}");
    // The tested version passes; Gemini has no offline listing msd knows: not checked.
    let stubs = stub(&w, "gemini", "echo 0.61.0");
    let doc = doctor(&w, Some(&stubs), &[]).success().json();
    assert_eq!(doc["targets"][0]["cli"]["in_range"], true);
    assert_eq!(findings(&doc, "gemini", "listing")[0]["level"], "not-checked");
}

#[test]
fn doctor_compares_what_the_cli_lists_with_what_msd_wrote() {
    let w = World::new();
    Install::in_world(&w).runtime("pi").arg("-q").run().success();
    // Pi's RPC mode: the request arrives on stdin (held open), the answer is one JSON line
    // listing every prompt msd wrote (from the disk, as Pi does); the stub then waits for more
    // requests, as Pi does, and doctor stops it. The offline env of the probe is set.
    let lists_all = r#"case "$1" in --version) echo 0.73.1 ;; *) read -r req; case "$req" in *get_commands*) ;; *) exit 3 ;; esac; [ "$PI_OFFLINE" = 1 ] || exit 4; printf '{"type":"response","command":"get_commands","success":true,"data":{"commands":['; sep=; for f in "$HOME"/.pi/agent/prompts/*.md; do n=${f##*/}; printf '%s{"name":"%s","source":"prompt"}' "$sep" "${n%.md}"; sep=,; done; printf ']}}\n'; sleep 600 ;; esac"#;
    let stubs = stub(&w, "pi", lists_all);
    let started = std::time::Instant::now();
    let doc = doctor(&w, Some(&stubs), &[]).success().json();
    assert!(findings(&doc, "pi", "listing").is_empty(), "{:?}", problems(&doc));
    assert!(started.elapsed().as_secs() < 30, "the answer ends the call, not the timeout");
    // One that lost a prompt, and lists a stray one in msd's namespace.
    let loses_help =
        lists_all.replace("do n=${f##*/}; printf", "do n=${f##*/}; [ \"$n\" = msd-help.md ] && n=msd-stray.md; printf");
    assert_ne!(loses_help, lists_all);
    let stubs = stub(&w, "pi", &loses_help);
    let doc = doctor(&w, Some(&stubs), &[]).code(1).json();
    let l: Vec<&str> = findings(&doc, "pi", "listing").iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(l.len(), 2, "one finding per missing and per extra name: {l:?}");
    assert!(l[0].starts_with("pi did not load the command `msd-help` msd wrote"), "{l:?}");
    assert!(l[1].starts_with("pi loads a command `msd-stray` that no msd install of Pi here wrote"), "{l:?}");
}

/// `copilot skill list` as the CLI prints it: the skills under ~/.copilot/skills in the
/// Personal section, `extra` added there, `drop` left out.
fn copilot_stub(w: &World, drop: &str, extra: &str) -> PathBuf {
    let body = format!(
        r#"case "$1" in --version) echo 1.0.102 ;; skill) [ "$COPILOT_OFFLINE" = true ] || exit 5; echo "Builtin skills:"; echo "  msd-builtin  not ours"; echo "Personal skills:"; for d in "$HOME"/.copilot/skills/*/; do n=${{d%/}}; n=${{n##*/}}; [ "$n" = "{drop}" ] || printf '  %s  a skill\n    of two lines\n' "$n"; done; [ -z "{extra}" ] || echo "  {extra}  stray"; echo "Project skills:"; echo "  msd-local  elsewhere" ;; esac"#
    );
    stub(w, "copilot", &body)
}

#[test]
fn doctor_finds_a_skill_the_cli_did_not_load_and_one_it_loads_that_msd_did_not_write() {
    let w = World::new();
    Install::in_world(&w).runtime("copilot").arg("-q").run().success();
    let doc = doctor(&w, Some(&copilot_stub(&w, "", "")), &[]).success().json();
    assert!(findings(&doc, "copilot", "listing").is_empty(), "{:?}", problems(&doc));
    // A planted missing skill, and a stray one: one finding each; the other sections' msd-like
    // names are not this install's.
    let doc = doctor(&w, Some(&copilot_stub(&w, "msd-help", "msd-stray")), &[]).code(1).json();
    let l: Vec<&str> = findings(&doc, "copilot", "listing").iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(l.len(), 2, "{l:?}");
    assert!(l[0].contains("did not load the skill `msd-help`") && l[0].contains("`copilot skill list`"), "{l:?}");
    assert!(l[1].contains("loads a skill `msd-stray`"), "{l:?}");
}

#[test]
fn doctor_stops_a_cli_listing_that_hangs_and_reports_it() {
    let w = World::new();
    Install::in_world(&w).runtime("opencode").arg("-q").run().success();
    // The version answers; the listing never does (a child process keeps the pipes open too).
    let stubs = stub(&w, "opencode", "case \"$1\" in --version) echo 1.18.33 ;; *) sleep 600 & sleep 600 ;; esac");
    let started = std::time::Instant::now();
    let doc = Install::in_world(&w)
        .args(["doctor", "--timeout", "1"])
        .env("PATH", path_with(Some(&stubs)))
        .json()
        .run()
        .code(1)
        .json();
    assert!(started.elapsed().as_secs() < 30, "bounded: {:?}", started.elapsed());
    let l = findings(&doc, "opencode", "listing");
    assert_eq!(l.len(), 2, "both listing calls time out: {l:?}");
    let m = l[0]["message"].as_str().unwrap();
    assert!(m.contains("`opencode debug config` failed: no answer within 1 s"), "{m}");
    assert!(l[0]["hint"].as_str().unwrap().contains("--timeout"));
}

/// `opencode debug config` prints ~400 KB and calls `process.exit()`: written to a pipe, what the
/// pipe had not taken is lost (seen from opencode 1.18.33: 65,536 bytes of 415,484 reached a slow
/// reader). The stub prints the whole config to a file and a cut one to a pipe, as the real CLI
/// does when its reader lags; doctor must read all of it, and a listing it cannot read is one
/// finding, not one per name.
#[test]
fn doctor_reads_a_large_listing_whole_and_a_cut_one_is_one_finding() {
    let w = World::new();
    Install::in_world(&w).runtime("opencode").arg("-q").run().success();
    let body = r#"case "$1" in --version) echo 1.18.33 ;; debug) case "$2" in skill) echo '[]' ;; config) o=$(mktemp); { printf '{"pad":"%s","command":{' "$(head -c 200000 /dev/zero | tr '\0' x)"; s=; for f in "$HOME"/.config/opencode/commands/*.md; do n=${f##*/}; printf '%s"%s":{}' "$s" "${n%.md}"; s=,; done; printf '},"agent":{'; s=; for f in "$HOME"/.config/opencode/agents/*.md; do n=${f##*/}; printf '%s"%s":{}' "$s" "${n%.md}"; s=,; done; printf '}}\n'; } > $o; if [ -p /dev/stdout ]; then head -c 65536 $o; else cat $o; fi; rm -f $o ;; esac ;; esac"#;
    let doc = doctor(&w, Some(&stub(&w, "opencode", body)), &[]).success().json();
    assert!(findings(&doc, "opencode", "listing").is_empty(), "read whole: {:?}", problems(&doc));
    // Cut whatever stdout is: one finding saying the output could not be read.
    let cut = body.replace("if [ -p /dev/stdout ]; then head -c 65536 $o; else cat $o; fi", "head -c 65536 $o");
    assert_ne!(cut, body);
    let doc = doctor(&w, Some(&stub(&w, "opencode", &cut)), &[]).code(1).json();
    let l: Vec<&str> = findings(&doc, "opencode", "listing").iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(l.len(), 1, "{l:?}");
    assert!(l[0].contains("`opencode debug config` could not be read") && l[0].contains("not JSON"), "{l:?}");
}

#[test]
fn doctor_with_r_reports_a_runtime_without_an_install() {
    let w = World::new();
    let doc = doctor(&w, None, &["pi"]).code(1).json();
    let f = findings(&doc, "pi", "install");
    assert!(f[0]["message"].as_str().unwrap().contains("msd is not installed for Pi"), "{f:?}");
    // Without -r and without installs nothing is wrong.
    doctor(&w, None, &[]).success();
}

#[test]
fn doctor_json_has_a_published_schema() {
    let w = World::new();
    let schema: serde_json::Value =
        serde_json::from_str(&Install::in_world(&w).args(["schema", "--kind", "doctor"]).run().success().stdout())
            .unwrap();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    let doc = doctor(&w, None, &[]).success().json();
    let props = schema["properties"].as_object().unwrap();
    for k in doc.as_object().unwrap().keys() {
        assert!(props.contains_key(k), "`{k}` is in the schema");
    }
    for k in schema["required"].as_array().unwrap() {
        assert!(doc.get(k.as_str().unwrap()).is_some(), "required `{k}` is in the document");
    }
}

/// Adds `patch` (a JSON object) into the settings file at `path`, key by key (arrays appended).
fn plant(path: &Path, patch: serde_json::Value) {
    fn merge(into: &mut serde_json::Value, patch: &serde_json::Value) {
        match (into, patch) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    match a.get_mut(k) {
                        Some(x) => merge(x, v),
                        None => {
                            a.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            (serde_json::Value::Array(a), serde_json::Value::Array(b)) => a.extend(b.iter().cloned()),
            (slot, v) => *slot = v.clone(),
        }
    }
    let mut doc: serde_json::Value =
        std::fs::read_to_string(path).ok().map_or_else(|| serde_json::json!({}), |t| serde_json::from_str(&t).unwrap());
    merge(&mut doc, &patch);
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
}

fn conflict_messages(doc: &serde_json::Value, runtime: &str, level: &str) -> Vec<String> {
    findings(doc, runtime, "conflict")
        .iter()
        .filter(|f| f["level"] == level)
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn doctor_finds_settings_of_other_tools_that_conflict_with_msds() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").runtime("gemini").arg("-q").run().success();
    let doc = doctor(&w, None, &[]).success().json();
    assert!(findings(&doc, "claude", "conflict").is_empty() && findings(&doc, "gemini", "conflict").is_empty());
    // Claude: a deny rule over the helper (in the project's local settings too: Claude reads the
    // user's and the project's), and hooks switched off; an unrelated deny rule is fine.
    let claude = w.home.join(".claude/settings.json");
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    plant(
        &claude,
        serde_json::json!({"permissions": {"deny": ["Bash(rm:*)", format!("Bash({}:*)", helper.display())]}, "disableAllHooks": true}),
    );
    // Gemini: the shell tool excluded.
    plant(&w.home.join(".gemini/settings.json"), serde_json::json!({"tools": {"exclude": ["run_shell_command"]}}));
    // Another tool's guard on the same event and matcher as msd's: a note.
    plant(
        &claude,
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Write|Edit|MultiEdit|NotebookEdit", "hooks": [{"type": "command", "command": "other-guard --strict"}]}, {"matcher": "Bash", "hooks": [{"type": "command", "command": "other-bash"}]}]}}),
    );
    let doc = doctor(&w, None, &[]).code(1).json();
    let c = conflict_messages(&doc, "claude", "problem");
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c.iter().any(|m| m.contains(&format!("`Bash({}:*)` in `permissions.deny`", helper.display()))), "{c:?}");
    assert!(c.iter().any(|m| m.contains("sets `disableAllHooks` to true")), "{c:?}");
    let g = conflict_messages(&doc, "gemini", "problem");
    assert_eq!(g.len(), 1, "{g:?}");
    assert!(g[0].contains("`run_shell_command` in `tools.exclude`"), "{g:?}");
    let notes = conflict_messages(&doc, "claude", "note");
    assert_eq!(notes.len(), 1, "only the entry on msd's event and matcher: {notes:?}");
    assert!(notes[0].contains("`other-guard --strict` on PreToolUse (Write|Edit|MultiEdit|NotebookEdit)"), "{notes:?}");
    // Doctor reads only.
    let text = std::fs::read_to_string(&claude).unwrap();
    assert!(text.contains("disableAllHooks") && text.contains("other-guard"));
}

#[test]
fn doctor_finds_a_helper_older_than_the_installed_content() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    // An older helper: it says an older version and otherwise does what the real one does.
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    let real = w.tmp.path().join("msd_run.real");
    std::fs::rename(&helper, &real).unwrap();
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\ncase \"$1\" in --version) echo 'msd_run 0.3.9' ;; *) exec '{}' \"$@\" ;; esac\n",
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    let h = findings(&doc, "claude", "helper");
    assert_eq!(h.len(), 1, "{:?}", problems(&doc));
    let content = std::fs::read_to_string(w.home.join(".claude/msd-core/VERSION")).unwrap();
    let want = format!("the helper says `msd_run 0.3.9` but the installed content is {}", content.trim());
    assert!(h[0]["message"].as_str().unwrap().contains(&want), "{h:?}");
    // Its hooks still answer: only the version is wrong.
    assert!(findings(&doc, "claude", "hook").is_empty(), "{:?}", problems(&doc));
}

#[test]
fn doctor_runs_each_hook_with_its_event_and_finds_one_that_refuses_a_harmless_call() {
    let w = World::new();
    Install::in_world(&w).runtime("claude").arg("-q").run().success();
    // The guard's entry now answers a refusal whatever it is asked (a tool edited it), and
    // still names msd's hook at its end.
    let settings = w.home.join(".claude/settings.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    let ours = format!("{} hook guard", helper.display());
    assert!(text.contains(&ours), "{text}");
    let refusing = text.replacen(
        &format!("\"{ours}\""),
        &format!("\"printf '{{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"no\\\"}}' || {ours}\""),
        1,
    );
    assert_ne!(refusing, text);
    std::fs::write(&settings, refusing).unwrap();
    let doc = doctor(&w, None, &[]).code(1).json();
    let hooks = findings(&doc, "claude", "hook");
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    let m = hooks[0]["message"].as_str().unwrap();
    assert!(m.contains("hook `hook:guard`") && m.contains("refuses a harmless read of"), "{m}");
}

#[test]
fn doctor_starts_codexs_status_line_server_and_finds_one_that_does_not_answer() {
    // Codex's status line is an MCP server msd registered in config.toml: doctor starts it from
    // the command the file holds and reads its status line with a sample thread state.
    let w = World::new();
    Install::in_world(&w).runtime("codex").arg("-q").run().success();
    let doc = doctor(&w, None, &["codex"]).json();
    assert!(findings(&doc, "codex", "mcp").is_empty(), "{:?}", findings(&doc, "codex", "mcp"));
    let cfg = w.home.join(".codex/config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    let broken = text.replace("args = [\"mcp\", \"statusline\"]", "args = [\"mcp\", \"nope\"]");
    assert_ne!(broken, text, "{text}");
    std::fs::write(&cfg, &broken).unwrap();
    let doc = doctor(&w, None, &["codex"]).code(1).json();
    let mcp = findings(&doc, "codex", "mcp");
    assert_eq!(mcp.len(), 1, "{mcp:?}");
    let m = mcp[0]["message"].as_str().unwrap();
    assert!(m.contains("msd-statusline") && m.contains("mcp nope") && m.contains("exit 2"), "{m}");
    assert!(mcp[0]["hint"].as_str().unwrap().contains("msd-install -r codex"));
    std::fs::write(&cfg, text.replace("[mcp_servers.msd-statusline]", "[mcp_servers.gone]")).unwrap();
    let doc = doctor(&w, None, &["codex"]).code(1).json();
    let mcp = findings(&doc, "codex", "mcp");
    assert!(mcp[0]["message"].as_str().unwrap().contains("no longer in"), "{mcp:?}");
}
