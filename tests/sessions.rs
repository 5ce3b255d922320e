//! What a real session needs from an install (issue 33), checked on disk: the CLI may run the
//! installed helper without asking (an allow rule for exactly that helper, global and local,
//! gone after uninstall), the guard refuses one tool call without ending the session, and an
//! agent declares only tools its runtime has. The real CLIs prove the same in the session tier
//! (`tests/real-runtimes/run.sh --sessions`).

use std::path::Path;

use crate::support::{Install, World};

/// The first helper command line an installed workflow tells the model to run: the text from
/// the helper reference up to the end of the line or the closing backtick.
fn helper_line(core: &Path, helper_ref: &str) -> String {
    let dir = core.join("workflows");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            if let Some(at) = line.find(&format!("{helper_ref} query ")) {
                let rest = &line[at..];
                let end = rest.find(['`', '"', ')']).unwrap_or(rest.len());
                return rest[..end].trim_end().to_string();
            }
        }
    }
    panic!("no workflow under {} runs `{helper_ref} query`", dir.display());
}

/// Gemini CLI's `commandPrefix` test (bundle/chunk-JDPZ4CE3.js:290382): the command starts with
/// the prefix, followed by a space, a quote or its end.
fn gemini_prefix_matches(prefix: &str, command: &str) -> bool {
    command.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '"']))
}

/// Qwen Code's `matchesCommandPattern` for `<literal> *` (chunks/chunk-47C3HPMW.js:2453): the
/// literal alone, or followed by a space.
fn qwen_rule_matches(rule: &str, command: &str) -> bool {
    let Some(inner) = rule.strip_prefix("run_shell_command(").and_then(|r| r.strip_suffix(')')) else { return false };
    let Some(lit) = inner.strip_suffix(" *") else {
        return command == inner || command.starts_with(&format!("{inner} "));
    };
    !lit.contains('*') && (command == lit || command.starts_with(&format!("{lit} ")))
}

fn toml_rules(path: &Path) -> Vec<toml_edit::Table> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    doc.get("rule").and_then(|r| r.as_array_of_tables()).map(|a| a.iter().cloned().collect()).unwrap_or_default()
}

#[test]
fn sessions_gemini_allows_exactly_the_installed_helper() {
    // Without an allow rule a headless Gemini session in the default or auto-edit mode is
    // offered no shell tool, and an interactive one asks at every helper call. Not
    // `tools.allowed`: that also denies every other shell command (runtimes/gemini cites it).
    let w = World::new();
    let user_rule = "# mine\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git status\"\ndecision = \"allow\"\npriority = 10\n";
    std::fs::create_dir_all(w.home.join(".gemini/policies")).unwrap();
    std::fs::write(w.home.join(".gemini/policies/msd.toml"), user_rule).unwrap();
    Install::in_world(&w).runtime("gemini").run().success();
    let policies = w.home.join(".gemini/policies/msd.toml");
    let helper_ref = w.home.join(".gemini/msd-core/bin/msd_run").display().to_string();
    let line = helper_line(&w.home.join(".gemini/msd-core"), &helper_ref);
    let ours: Vec<_> = toml_rules(&policies)
        .into_iter()
        .filter(|r| r.get("commandPrefix").and_then(|v| v.as_str()) != Some("git status"))
        .collect();
    assert_eq!(ours.len(), 1, "{}: {ours:?}", policies.display());
    let r = &ours[0];
    assert_eq!(r.get("toolName").and_then(|v| v.as_str()), Some("run_shell_command"));
    assert_eq!(r.get("decision").and_then(|v| v.as_str()), Some("allow"));
    let prefix = r.get("commandPrefix").and_then(|v| v.as_str()).unwrap();
    assert_eq!(prefix, helper_ref, "the rule names exactly the installed helper");
    assert!(gemini_prefix_matches(prefix, &line), "{prefix:?} does not allow the workflow's `{line}`");
    assert!(!gemini_prefix_matches(prefix, &format!("{helper_ref}x query")), "only the helper itself");
    let p = r.get("priority").and_then(|v| v.as_integer()).unwrap();
    assert!((0..=999).contains(&p), "Gemini refuses a priority outside 0-999");
    // No settings `tools.allowed` (it would deny the user's other shell commands).
    let settings = std::fs::read_to_string(w.home.join(".gemini/settings.json")).unwrap();
    assert!(!settings.contains("\"allowed\""), "{settings}");
    // Gemini CLI 0.61.0 loads no project policies: a local install writes none and says what
    // the user can do instead.
    Install::in_world(&w).runtime("gemini").local().run().success().stdout_has("loads no project policies");
    assert!(!w.project.join(".gemini/policies").exists());
    Install::in_world(&w).uninstall().runtime("gemini").run().success();
    assert_eq!(std::fs::read_to_string(&policies).unwrap(), user_rule);
}

#[test]
fn sessions_qwen_allows_exactly_the_installed_helper_global_and_local() {
    // Qwen Code's `permissions.allow` takes `<tool>(<prefix> *)` rules; headless, only a rule naming
    // `run_shell_command` (not `Bash`) keeps the shell tool offered (runtimes/qwen cites both).
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".qwen")).unwrap();
    let user = "{\n  \"permissions\": { \"allow\": [\"Bash(git status)\"], \"deny\": [\"Bash(rm *)\"] }\n}\n";
    std::fs::write(w.home.join(".qwen/settings.json"), user).unwrap();
    Install::in_world(&w).runtime("qwen").run().success();
    Install::in_world(&w).runtime("qwen").local().run().success();
    for (settings, core, helper_ref) in [
        (
            w.home.join(".qwen/settings.json"),
            w.home.join(".qwen/msd-core"),
            w.home.join(".qwen/msd-core/bin/msd_run").display().to_string(),
        ),
        (
            w.project.join(".qwen/settings.json"),
            w.project.join(".qwen/msd-core"),
            "./.qwen/msd-core/bin/msd_run".to_string(),
        ),
    ] {
        let line = helper_line(&core, &helper_ref);
        let cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
        let allow: Vec<&str> =
            cfg["permissions"]["allow"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        let ours: Vec<_> = allow.iter().filter(|r| **r != "Bash(git status)").collect();
        assert_eq!(ours, [&format!("run_shell_command({helper_ref} *)").as_str()], "{}: {cfg}", settings.display());
        assert!(qwen_rule_matches(ours[0], &line), "{} does not allow the workflow's `{line}`", ours[0]);
        assert!(!qwen_rule_matches(ours[0], &format!("{helper_ref}x query")), "only the helper itself");
    }
    Install::in_world(&w).uninstall().runtime("qwen").run().success();
    Install::in_world(&w).uninstall().runtime("qwen").local().run().success();
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.home.join(".qwen/settings.json")).unwrap()).unwrap();
    assert_eq!(after["permissions"]["allow"], serde_json::json!(["Bash(git status)"]), "{after}");
    assert_eq!(after["permissions"]["deny"], serde_json::json!(["Bash(rm *)"]), "{after}");
}

/// The `tools:` of every agent file in `dir`, by file name.
fn agent_tools(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let (fm, _) = msd_core::markup::frontmatter::split(&p.display().to_string(), &text).unwrap();
        let Some(tools) = fm.and_then(|f| f.get_list("tools")) else { continue };
        out.push((p.file_name().unwrap().to_string_lossy().into_owned(), tools));
    }
    out.sort();
    out
}

#[test]
fn sessions_claude_agents_declare_only_tools_claude_code_has() {
    // Claude Code 2.1.332 has no Glob or Grep (runtimes/claude cites the binary): an agent that
    // names them gets neither; the manifest's tool table makes them Bash, whose find and grep
    // replace them.
    let w = World::new();
    Install::in_world(&w).runtime("claude").run().success();
    Install::in_world(&w).runtime("claude").local().run().success();
    for dir in [w.home.join(".claude/agents"), w.project.join(".claude/agents")] {
        let agents = agent_tools(&dir);
        assert!(agents.len() > 10, "{}: {agents:?}", dir.display());
        for (name, tools) in &agents {
            for gone in ["Grep", "Glob"] {
                assert!(!tools.iter().any(|t| t == gone), "{}/{name} declares {gone}: {tools:?}", dir.display());
            }
            let mut seen = tools.clone();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), tools.len(), "{name}: a tool twice: {tools:?}");
        }
        let planner = agents.iter().find(|(n, _)| n == "msd-planner.md").expect("msd-planner");
        assert!(planner.1.iter().any(|t| t == "Bash"), "{planner:?}");
    }
}

#[test]
fn sessions_qwen_local_status_line_runs_without_qwen_project_dir() {
    // Qwen runs the status-line command in the launch directory without QWEN_PROJECT_DIR (a
    // hook-only variable; runtimes/qwen cites both), so `"$QWEN_PROJECT_DIR"/.qwen/...` ran
    // `/.qwen/msd-core/bin/msd_run` (the session tier: not found).
    let w = World::new();
    std::fs::create_dir_all(w.project.join(".planning")).unwrap();
    std::fs::write(
        w.project.join(".planning/STATE.md"),
        "# Project State\n\n## Current Position\n\nPhase: 2 of 5 (Build)\nStatus: Executing\n",
    )
    .unwrap();
    Install::in_world(&w).runtime("qwen").local().run().success();
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.project.join(".qwen/settings.json")).unwrap()).unwrap();
    let cmd = cfg["ui"]["statusLine"]["command"].as_str().expect("a status-line command").to_string();
    let sub = w.project.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    for dir in [w.project.clone(), sub] {
        let mut c = std::process::Command::new("sh");
        w.isolate(&mut c);
        c.arg("-c").arg(&cmd).current_dir(&dir).env_remove("QWEN_PROJECT_DIR");
        c.stdin(std::process::Stdio::piped());
        let mut child = c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            br#"{"session_id":"s-1","model":{"display_name":"m"}}"#,
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        let line = String::from_utf8_lossy(&out.stdout);
        assert!(
            line.contains("phase 2 of 5"),
            "from {}: {line:?} {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn sessions_kilo_allows_exactly_the_installed_helper_global_and_local() {
    // Kilo asks before every bash command without a rule, and `kilo run` rejects what it would
    // ask (the session tier: `permission requested: bash (...msd_run query ...); auto-rejecting`).
    let w = World::new();
    let dir = w.home.join(".config/kilo");
    std::fs::create_dir_all(&dir).unwrap();
    let user = "{\n  \"theme\": \"dark\",\n  \"permission\": { \"bash\": { \"git *\": \"allow\" } }\n}\n";
    std::fs::write(dir.join("kilo.json"), user).unwrap();
    Install::in_world(&w).runtime("kilo").run().success();
    Install::in_world(&w).runtime("kilo").local().run().success();
    for (file, core, helper_ref) in [
        (dir.join("kilo.json"), dir.join("msd-core"), dir.join("msd-core/bin/msd_run").display().to_string()),
        (
            w.project.join(".kilo/kilo.json"),
            w.project.join(".kilo/msd-core"),
            "./.kilo/msd-core/bin/msd_run".to_string(),
        ),
    ] {
        let line = helper_line(&core, &helper_ref);
        let cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let bash = cfg["permission"]["bash"].as_object().unwrap_or_else(|| panic!("{}: {cfg}", file.display()));
        let ours: Vec<_> = bash.iter().filter(|(k, _)| k.as_str() != "git *").collect();
        assert_eq!(ours.len(), 1, "{}: {cfg}", file.display());
        let (pattern, v) = ours[0];
        assert_eq!(v, "allow");
        assert_eq!(pattern, &format!("{helper_ref} *"), "exactly the installed helper");
        // Kilo's wildcard: a trailing ` *` is the literal alone or followed by a space.
        let lit = pattern.strip_suffix(" *").unwrap();
        assert!(line == lit || line.starts_with(&format!("{lit} ")), "{pattern} does not allow `{line}`");
    }
    Install::in_world(&w).uninstall().runtime("kilo").run().success();
    Install::in_world(&w).uninstall().runtime("kilo").local().run().success();
    assert_eq!(std::fs::read_to_string(dir.join("kilo.json")).unwrap(), user);
    assert!(!w.project.join(".kilo/kilo.json").exists());
}

/// Runs a registered hook command line (`sh -c`) in `cwd` with `event` on stdin: its stdout.
fn run_hook(w: &World, cmd: &str, cwd: &Path, event: &serde_json::Value) -> String {
    let mut c = std::process::Command::new("sh");
    w.isolate(&mut c);
    c.arg("-c").arg(cmd).current_dir(cwd).env("COPILOT_PROJECT_DIR", &w.project);
    c.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `bash` lines of Copilot's `preToolUse` hooks in a settings or hook file.
fn copilot_pre_tool_use(file: &Path) -> Vec<String> {
    let cfg: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    cfg["hooks"]["preToolUse"]
        .as_array()
        .map(|a| a.iter().filter_map(|h| h["bash"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[test]
fn sessions_copilot_lets_exactly_the_installed_helper_run_global_and_local() {
    // Copilot CLI 1.0.102 has no setting that pre-approves one shell command, and `copilot -p`
    // refuses every call that needs a prompt (the session tier: `Permission denied because no
    // interactive user response was available`). msd's preToolUse guard answers
    // `permissionDecision: allow` for a `bash` call of the installed helper, and for nothing
    // else (runtimes/copilot cites both).
    let w = World::new();
    let dir = w.home.join(".copilot");
    std::fs::create_dir_all(&dir).unwrap();
    let mine = r#"{"type":"command","bash":"echo mine","timeoutSec":5}"#;
    let user = format!("{{\n  \"theme\": \"dim\",\n  \"hooks\": {{ \"preToolUse\": [{mine}] }}\n}}\n");
    std::fs::write(dir.join("settings.json"), &user).unwrap();
    let event = |cwd: &Path, tool: &str, args: serde_json::Value| serde_json::json!({"sessionId": "s-1", "timestamp": 1, "cwd": cwd, "toolName": tool, "toolArgs": args});
    let check = |file: &Path, core: &Path, helper_ref: &str| {
        // The line the session tier runs: workstreams.md's, which has no argument to fill in.
        let line = format!("{helper_ref} query init.workstreams");
        let wf = std::fs::read_to_string(core.join("workflows/workstreams.md")).unwrap();
        assert!(wf.contains(&line), "workstreams.md no longer runs `{line}`");
        let ours: Vec<_> = copilot_pre_tool_use(file).into_iter().filter(|c| c.contains("msd_run")).collect();
        assert_eq!(ours.len(), 1, "{}: {ours:?}", file.display());
        let guard = &ours[0];
        let ask = |tool: &str, command: &str| {
            run_hook(&w, guard, &w.project, &event(&w.project, tool, serde_json::json!({"command": command})))
        };
        let allowed = |out: &str| out.contains("\"permissionDecision\":\"allow\"");
        let out = ask("bash", &line);
        assert!(allowed(&out), "{}: the workflow's `{line}` is not allowed: {out:?}", file.display());
        for other in [
            format!("{line}; touch pwned"),
            format!("{line} && rm -rf x"),
            format!("{line} > out.txt"),
            format!("{line} $(id)"),
            format!("{line} `id`"),
            format!("{line}\ntouch pwned"),
            format!("{helper_ref}x query init.workstreams"),
            "ls -la".to_string(),
        ] {
            let out = ask("bash", &other);
            assert!(!allowed(&out), "{}: `{other}` must not be allowed: {out:?}", file.display());
        }
        assert!(!allowed(&ask("write_bash", &line)), "only the shell tool the manifest names");
        // The guard still refuses a .env write.
        let env = event(&w.project, "create", serde_json::json!({"path": w.project.join(".env"), "file_text": "A=1"}));
        let out = run_hook(&w, guard, &w.project, &env);
        assert!(out.contains("\"permissionDecision\":\"deny\""), "{out:?}");
    };
    Install::in_world(&w).runtime("copilot").run().success();
    check(&dir.join("settings.json"), &dir.join("msd-core"), &dir.join("msd-core/bin/msd_run").display().to_string());
    Install::in_world(&w).runtime("copilot").local().run().success();
    let local = w.project.join(".github/hooks/msd.json");
    check(&local, &w.project.join(".github/msd-core"), "./.github/msd-core/bin/msd_run");
    Install::in_world(&w).uninstall().runtime("copilot").local().run().success();
    Install::in_world(&w).uninstall().runtime("copilot").run().success();
    assert!(!local.exists());
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        after["hooks"]["preToolUse"],
        serde_json::json!([serde_json::from_str::<serde_json::Value>(mine).unwrap()])
    );
    assert_eq!(after["theme"], "dim");
}

/// The agent names (file stems) of msd-core's own copy under `<core>/agents`, without the
/// compact twins.
fn core_agent_names(core: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(core.join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".compact.md"))
        .filter_map(|n| n.strip_suffix(".md").map(str::to_string))
        .collect();
    out.sort();
    out
}

/// The tools a Cline subagent can be given (runtimes/cline cites the built-in set and the
/// filter: a config's `tools` keeps the tools of this set it names, and drops any other name).
const CLINE_AGENT_TOOLS: [&str; 8] = [
    "read_files",
    "search_codebase",
    "run_commands",
    "fetch_web_content",
    "editor",
    "apply_patch",
    "skills",
    "ask_question",
];

/// A Cline agent config's `tools` as Cline reads it: a list, or a string split at commas.
fn cline_tools(frontmatter: &yaml_serde::Value) -> Vec<String> {
    match frontmatter.get("tools") {
        Some(yaml_serde::Value::String(s)) => {
            s.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect()
        }
        Some(yaml_serde::Value::Sequence(items)) => items.iter().map(|t| t.as_str().unwrap().to_string()).collect(),
        other => panic!("no tools list: {other:?}"),
    }
}

#[test]
fn sessions_cline_agents_land_where_cline_reads_them_global_and_local() {
    // Cline reads agent configs from `<workspace>/.cline/agents` and `<CLINE_DIR or ~/.cline>/agents`,
    // only files ending `.yml`/`.yaml`, a `---` YAML frontmatter with a non-empty name and
    // description and a non-empty body (runtimes/cline cites @cline/core and @cline/shared); msd
    // installed none, so the session tier's subagent check was N/A. Their tools are Cline's
    // names: a Claude name such as `Read` is dropped by Cline without a word.
    let w = World::new();
    std::fs::write(w.project.join("README.md"), "mine\n").unwrap();
    let cline_dir = w.home.join("cline-dir");
    Install::in_world(&w).runtime("cline").env("CLINE_DIR", &cline_dir).run().success();
    Install::in_world(&w).runtime("cline").local().run().success();
    let allowed = ["name", "description", "tools", "skills", "providerId", "modelId", "maxIterations"];
    for (agents, core) in [
        (cline_dir.join("agents"), cline_dir.join("msd-core")),
        (w.project.join(".cline/agents"), w.project.join(".cline/msd-core")),
    ] {
        let want = core_agent_names(&core);
        assert_eq!(want.len(), 28, "{}: {want:?}", core.display());
        let mut got = Vec::new();
        for e in std::fs::read_dir(&agents).unwrap_or_else(|e| panic!("{}: {e}", agents.display())) {
            let p = e.unwrap().path();
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let stem =
                file.strip_suffix(".yml").unwrap_or_else(|| panic!("{}: Cline reads only .yml/.yaml", p.display()));
            let text = std::fs::read_to_string(&p).unwrap();
            assert!(text.starts_with("---\n"), "{}: no frontmatter first", p.display());
            let (fm, body) = msd_core::markup::frontmatter::split(&p.display().to_string(), &text).unwrap();
            let fm = fm.unwrap_or_else(|| panic!("{}: no frontmatter", p.display()));
            assert_eq!(fm.get_str("name"), Some(stem), "{}", p.display());
            assert!(fm.get_str("description").is_some_and(|d| !d.trim().is_empty()), "{}", p.display());
            let yaml: yaml_serde::Value = yaml_serde::from_str(text[4..].split("\n---").next().unwrap()).unwrap();
            for k in yaml.as_mapping().unwrap().keys() {
                let k = k.as_str().unwrap();
                assert!(allowed.contains(&k), "{}: key {k} is not in Cline's agent schema", p.display());
            }
            assert!(!body.trim().is_empty(), "{}: Cline refuses an empty system prompt", p.display());
            let tools = cline_tools(&yaml);
            assert!(tools.iter().any(|t| t == "read_files"), "{}: every msd agent reads: {tools:?}", p.display());
            for t in &tools {
                assert!(CLINE_AGENT_TOOLS.contains(&t.as_str()), "{}: `{t}` is no Cline tool", p.display());
            }
            if stem == "msd-planner" {
                // Read, Write, Edit, Bash, Grep, Glob: Glob is found by shell as Cline's own list_files.
                assert_eq!(tools, ["read_files", "editor", "run_commands", "search_codebase"], "{}", p.display());
            }
            got.push(stem.to_string());
        }
        got.sort();
        assert_eq!(got, want, "{}: every msd agent, as a Cline agent config", agents.display());
    }
    Install::in_world(&w).uninstall().runtime("cline").env("CLINE_DIR", &cline_dir).run().success();
    Install::in_world(&w).uninstall().runtime("cline").local().run().success();
    for dir in [cline_dir.join("agents"), w.project.join(".cline/agents")] {
        let left = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert_eq!(left, 0, "{}: uninstall leaves agents", dir.display());
    }
}

#[test]
fn sessions_cline_users_own_agents_survive_install_upgrade_and_uninstall_global_and_local() {
    // msd's agents share `<CLINE_DIR>/agents` and `<workspace>/.cline/agents` with the user's own
    // Cline agent configs: install, an upgrade that changes one agent and drops another, and
    // uninstall touch only msd's files there.
    let w = World::new();
    let v1 = w.tmp.path().join("v1");
    crate::support::copy_tree(&crate::support::fixture("starter"), &v1);
    let planner = std::fs::read_to_string(v1.join("agents/msd-planner.md")).unwrap();
    let checker = planner.replace("msd-planner", "msd-checker").replace("Writes PLAN.md files", "Checks the plans");
    std::fs::write(v1.join("agents/msd-checker.md"), checker).unwrap();
    let v2 = w.tmp.path().join("v2");
    crate::support::copy_tree(&v1, &v2);
    std::fs::remove_file(v2.join("agents/msd-checker.md")).unwrap();
    std::fs::write(v2.join("agents/msd-planner.md"), planner.replace("You plan.", "You plan, v2.")).unwrap();
    for v in [&v1, &v2] {
        Install::in_world(&w).args(["gen", "section-manifest", "--write"]).content(v).run().success();
    }
    let cline_dir = w.home.join("cline-dir");
    let dirs = [cline_dir.join("agents"), w.project.join(".cline/agents")];
    let install = |content: &Path, local: bool| {
        let i = Install::in_world(&w).runtime("cline").content(content).env("CLINE_DIR", &cline_dir);
        if local { i.local() } else { i }.run().success();
    };
    // The user's own configs, one before the first install and one (at an msd-like name) after it.
    let reviewer = "---\nname: reviewer\ndescription: My reviewer\ntools: read_files\n---\nReview.\n";
    let mine = "---\nname: msd-mine\ndescription: Mine, not msd's\n---\nMine.\n";
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("reviewer.yml"), reviewer).unwrap();
    }
    let users = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("msd-") || p.ends_with("msd-mine.yml"))
            .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
            .collect();
        out.sort();
        out
    };
    let names = |d: &Path| -> Vec<String> {
        let mut out: Vec<_> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        out.sort();
        out
    };
    for local in [false, true] {
        install(&v1, local);
    }
    for d in &dirs {
        assert_eq!(names(d), ["msd-checker.yml", "msd-planner.yml", "reviewer.yml"], "{}", d.display());
        std::fs::write(d.join("msd-mine.yml"), mine).unwrap();
    }
    let before: Vec<_> = dirs.iter().map(|d| users(d)).collect();
    assert_eq!(before[0].len(), 2);
    for local in [false, true] {
        install(&v2, local);
    }
    for (d, user) in dirs.iter().zip(&before) {
        assert_eq!(names(d), ["msd-mine.yml", "msd-planner.yml", "reviewer.yml"], "{}: the upgrade", d.display());
        assert!(std::fs::read_to_string(d.join("msd-planner.yml")).unwrap().contains("You plan, v2."));
        assert_eq!(&users(d), user, "{}: the user's configs after the upgrade", d.display());
    }
    Install::in_world(&w).uninstall().runtime("cline").env("CLINE_DIR", &cline_dir).run().success();
    Install::in_world(&w).uninstall().runtime("cline").local().run().success();
    for (d, user) in dirs.iter().zip(&before) {
        assert_eq!(names(d), ["msd-mine.yml", "reviewer.yml"], "{}: after uninstall", d.display());
        assert_eq!(&users(d), user, "{}: the user's configs after uninstall", d.display());
    }
}

/// Cline's tool name for an agent config (`Zj` of @cline/core@0.0.86:dist/index.js:563): lower
/// case, every run of characters outside `[a-z0-9]` one `_`, `subagent_` before it, at most 64.
fn cline_subagent_tool(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = format!("subagent_{}", out.trim_end_matches('_'));
    assert!(out.len() <= 64, "{out}: Cline shortens names over 64 with a hash");
    out
}

#[test]
fn sessions_cline_workflows_name_the_subagent_tool_cline_offers() {
    // Cline offers each agent config as a tool `subagent_<name>`, not as a `Task` tool; a
    // workflow that spawns an agent says which tool that is, and every agent it spawns is there.
    let w = World::new();
    Install::in_world(&w).runtime("cline").local().run().success();
    let agents = w.project.join(".cline/agents");
    let flows = w.project.join(".clinerules/workflows");
    for e in std::fs::read_dir(&flows).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.contains("call the tool `subagent_msd_<name>` (the\nagent's name with `-` written `_`)"),
            "{}: no word of Cline's subagent tools",
            p.display()
        );
    }
    let mut spawns = 0;
    for (path, bytes) in crate::support::tree(&w.project.join(".cline/msd-core/workflows")) {
        let text = String::from_utf8(bytes).unwrap();
        for part in text.split("subagent_type=\"").skip(1) {
            let name = &part[..part.find('"').unwrap()];
            if !name.starts_with("msd-") || name.contains('<') {
                continue;
            }
            let tool = cline_subagent_tool(name);
            assert_eq!(tool, format!("subagent_{}", name.replace('-', "_")), "{path}");
            assert!(agents.join(format!("{name}.yml")).is_file(), "{path}: spawns {name}, not installed");
            spawns += 1;
        }
    }
    assert!(spawns > 0, "some workflow spawns an agent");
}
