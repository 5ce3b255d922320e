//! Spawn-install tests of every runtime x scope with the shipped content: layout and names,
//! every TOML/JSON/YAML parses, no foreign runtime path or brand, no marker, counts equal the
//! content's, the golden file list holds, and a second run changes nothing.
//!
//! One module per runtime (`runtimes::<id>::global`, `runtimes::<id>::local`) so CI runs them
//! as a matrix, one job per runtime.

use std::collections::BTreeMap;
use std::path::Path;

use msd_core::manifest::capability::{ArtifactKind, Capability, Converter, Nesting, Scope};
use msd_install::pipeline::load::{Content, LoadedRuntime};

use crate::support::{Install, World, files, repo, tree};

/// Directories that belong to the user's project, not to one runtime, even though a runtime
/// uses them as its local dir: finding them in another runtime's output is not a leak.
const SHARED_PROJECT_DIRS: [&str; 3] = [".github", ".agents", "."];

fn runtimes() -> Vec<LoadedRuntime> {
    msd_install::pipeline::load_runtimes(&Default::default()).expect("embedded manifests")
}

fn content() -> &'static Content {
    crate::support::shipped_content()
}

macro_rules! runtime_tests {
    ($($module:ident => $id:literal),* $(,)?) => {
        $(
            mod $module {
                #[test]
                fn global() {
                    super::check($id, msd_core::manifest::capability::Scope::Global);
                }
                #[test]
                fn local() {
                    super::check($id, msd_core::manifest::capability::Scope::Local);
                }
            }
        )*
        const TESTED: &[&str] = &[$($id),*];
    };
}

runtime_tests!(
    antigravity => "antigravity",
    augment => "augment",
    claude => "claude",
    cline => "cline",
    codebuddy => "codebuddy",
    codex => "codex",
    copilot => "copilot",
    cursor => "cursor",
    gemini => "gemini",
    hermes => "hermes",
    kilo => "kilo",
    kimi => "kimi",
    kimi_code => "kimi-code",
    opencode => "opencode",
    pi => "pi",
    qwen => "qwen",
    trae => "trae",
    windsurf => "windsurf",
    zcode => "zcode",
);

#[test]
fn runtimes_every_manifest_has_spawn_tests() {
    let ids: Vec<String> = runtimes().into_iter().map(|r| r.capability.id).collect();
    assert_eq!(ids, TESTED, "add the new runtime to runtime_tests! and to the CI matrix");
    let ci = std::fs::read_to_string(repo().join(".github/workflows/ci.yml")).expect("CI config");
    for id in TESTED {
        let module = id.replace('-', "_");
        assert!(ci.contains(&format!("          - {module}\n")), "the CI matrix lacks {module}");
    }
}

fn check(id: &str, scope: Scope) {
    let rts = runtimes();
    let rt = rts.iter().find(|r| r.capability.id == id).unwrap();
    let cap = &rt.capability;
    let w = World::new();
    let mut args = vec!["--runtime", id, "--json"];
    if scope == Scope::Local {
        args.push("--local");
    }
    let ran = Install::in_world(&w).args(&args).note(format!("{id} {scope:?}")).run();
    if scope == Scope::Local && cap.local.is_none() {
        // No local scope: a usage error.
        ran.code(2).stdout_has("has no project-local install");
        return;
    }
    let doc = ran.success().json();
    let home = std::path::PathBuf::from(doc["runtimes"][0]["home"].as_str().unwrap());
    let expected_home = match scope {
        Scope::Global => w.home.join(cap.home.default.as_str()),
        Scope::Local => w.project.join(&cap.local.as_ref().unwrap().dir),
    };
    assert_eq!(
        home.canonicalize().unwrap(),
        expected_home.canonicalize().unwrap(),
        "{id}: installed where the manifest says"
    );

    let files = tree(&home);
    let content = content();
    check_layout(cap, scope, content, &files);
    check_formats(id, &files);
    check_no_leaks(id, cap, scope, &home, &rts, &files);
    check_golden(id, scope, cap, &files);

    // A second run changes nothing.
    let again = Install::in_world(&w).args(&args).run().json();
    let s = &again["runtimes"][0]["summary"];
    assert_eq!(
        (s["added"].as_u64(), s["changed"].as_u64(), s["removed"].as_u64()),
        (Some(0), Some(0), Some(0)),
        "{id}: second run"
    );
    assert_eq!(again["runtimes"][0]["manifest_changed"], false);
}

fn count(files: &BTreeMap<String, Vec<u8>>, pred: impl Fn(&str) -> bool) -> usize {
    files.keys().filter(|p| pred(p)).count()
}

fn check_layout(cap: &Capability, scope: Scope, content: &Content, files: &BTreeMap<String, Vec<u8>>) {
    let id = &cap.id;
    let n_cmd = content.commands.len();
    let n_agents = content.agents.len();
    for spec in cap.layout(scope) {
        let dest = spec.dest.as_str();
        let p = &spec.prefix;
        let direct = |path: &str, ext: &str| {
            path.strip_prefix(dest)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|r| !r.contains('/') && r.starts_with(p.as_str()) && r.ends_with(ext))
        };
        match (spec.kind, spec.converter) {
            (
                ArtifactKind::Commands | ArtifactKind::Workflows,
                Converter::MarkdownCommand | Converter::WorkflowStub,
            ) => {
                assert_eq!(
                    count(files, |f| direct(f, ".md")),
                    n_cmd,
                    "{id}: one {} file per command in {dest}",
                    spec.kind.as_str()
                );
                for c in &content.commands {
                    assert!(files.contains_key(&format!("{dest}/{p}{}.md", c.stem)), "{id}: {dest}/{p}{}.md", c.stem);
                }
            }
            (ArtifactKind::Commands, Converter::GeminiCommand) => {
                assert_eq!(count(files, |f| direct(f, ".toml")), n_cmd, "{id}: one TOML command per command");
            }
            (ArtifactKind::Skills, Converter::Skill) if spec.nesting == Nesting::Flat => {
                for c in &content.commands {
                    assert!(files.contains_key(&format!("{dest}/{p}{}/SKILL.md", c.stem)), "{id}: skill of {}", c.stem);
                }
                assert_eq!(
                    count(files, |f| f.starts_with(&format!("{dest}/")) && f.ends_with("/SKILL.md")),
                    n_cmd,
                    "{id}: skills == commands"
                );
            }
            (ArtifactKind::Skills, Converter::Skill) => {
                let ns = content.namespaces.as_ref().expect("namespaces");
                for g in &ns.groups {
                    let router = format!("{dest}/{p}{}/SKILL.md", g.name);
                    let text = String::from_utf8_lossy(&files[&router]).to_string();
                    for c in &g.commands {
                        let rel = format!("skills/{p}{c}/SKILL.md");
                        assert!(text.contains(&rel), "{id}: router {router} lists {rel}");
                        assert!(files.contains_key(&format!("{dest}/{p}{}/{rel}", g.name)), "{id}: nested skill {c}");
                    }
                }
                assert_eq!(
                    count(files, |f| f.starts_with(&format!("{dest}/")) && f.ends_with("/SKILL.md")),
                    n_cmd + ns.groups.len(),
                    "{id}: one skill per command plus one router per group"
                );
            }
            (ArtifactKind::Agents, Converter::MarkdownAgent) => {
                let suffix = spec.suffix.as_deref().unwrap_or(".md");
                for a in &content.agents {
                    assert!(files.contains_key(&format!("{dest}/{}{suffix}", a.stem)), "{id}: agent {}", a.stem);
                }
                assert_eq!(count(files, |f| direct(f, suffix)), n_agents, "{id}: agents == content agents");
            }
            (ArtifactKind::Agents, Converter::CodexAgent) => {
                assert_eq!(count(files, |f| direct(f, ".toml")), n_agents, "{id}: one TOML agent per agent");
            }
            (ArtifactKind::Agents, Converter::KimiAgents) => {
                assert_eq!(
                    count(files, |f| f.starts_with(&format!("{dest}/subagents/")) && f.ends_with(".yaml")),
                    n_agents
                );
                let root = spec.prefix.trim_end_matches('-');
                assert!(
                    files.contains_key(&format!("{dest}/{root}.yaml"))
                        && files.contains_key(&format!("{dest}/{root}.md"))
                );
            }
            (kind, conv) => panic!("{id}: untested layout {kind:?} / {conv:?}"),
        }
    }
    let core = cap.core_dir(scope).as_str();
    for f in &content.core {
        assert!(files.contains_key(&format!("{core}/{}", f.rel)), "{id}: core file {}", f.rel);
    }
    assert!(files.contains_key(&format!("{core}/msd-file-manifest.json")));
}

/// The msd_run binary every install carries: a program, not emitted content, and the same
/// bytes for every runtime, so the text checks below do not apply to it (tests/helper.rs checks it).
fn is_program(path: &str) -> bool {
    path.ends_with(&format!("/{}", msd_install::pipeline::synth::helper_path(msd_core::shell::Os::HOST)))
}

fn check_formats(id: &str, files: &BTreeMap<String, Vec<u8>>) {
    for (path, bytes) in files.iter().filter(|(p, _)| !is_program(p)) {
        let text = std::str::from_utf8(bytes).unwrap_or_else(|_| panic!("{id}: {path} is not UTF-8"));
        if path.ends_with(".toml") {
            text.parse::<toml_edit::DocumentMut>().unwrap_or_else(|e| panic!("{id}: {path}: {e}"));
        } else if path.ends_with(".json") {
            serde_json::from_str::<serde_json::Value>(text).unwrap_or_else(|e| panic!("{id}: {path}: {e}"));
        } else if path.ends_with(".yaml") {
            let v: yaml_serde::Value = yaml_serde::from_str(text).unwrap_or_else(|e| panic!("{id}: {path}: {e}"));
            assert!(v.is_mapping(), "{id}: {path} is a mapping");
        } else if path.ends_with(".md") && text.starts_with("---\n") {
            let (fm, _) = msd_core::markup::frontmatter::split(path, text).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert!(fm.is_some());
        }
        for marker in ["<!-- msd:", "<!-- /msd:section", "<!--msd:"] {
            assert!(!text.contains(marker), "{id}: {path} keeps a marker");
        }
    }
}

/// Whether `needle`, found in `text` at byte `at`, is glued to a letter, digit or `_` on a side
/// where it begins or ends with one (so it is part of a longer word, not the word itself).
fn glued(text: &str, at: usize, needle: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let before = text[..at].chars().next_back();
    let after = text[at + needle.len()..].chars().next();
    let needle_starts_word = needle.chars().next().is_some_and(is_word);
    let needle_ends_word = needle.chars().next_back().is_some_and(is_word);
    (needle_starts_word && before.is_some_and(is_word)) || (needle_ends_word && after.is_some_and(is_word))
}

fn word_at(text: &str, needle: &str) -> Option<usize> {
    let mut start = 0;
    while let Some(i) = text[start..].find(needle) {
        let at = start + i;
        if !glued(text, at, needle) {
            return Some(at);
        }
        start = at + needle.len();
    }
    None
}

fn check_no_leaks(
    id: &str,
    cap: &Capability,
    scope: Scope,
    home: &Path,
    all: &[LoadedRuntime],
    files: &BTreeMap<String, Vec<u8>>,
) {
    let own_home = home.display().to_string();
    let own_local = cap.local.as_ref().map(|l| format!("./{}/", l.dir));
    let own_brands: Vec<&str> = cap.brands.iter().map(String::as_str).collect();
    let mut foreign_paths: Vec<String> = Vec::new();
    let mut foreign_brands: Vec<&str> = Vec::new();
    for other in all.iter().map(|r| &r.capability).filter(|c| c.id != cap.id) {
        foreign_paths.push(format!("/{}/", other.home.default));
        foreign_paths.push(format!("~/{}/", other.home.default));
        if let Some(l) = &other.local
            && !SHARED_PROJECT_DIRS.contains(&l.dir.as_str())
        {
            foreign_paths.push(format!("./{}/", l.dir));
        }
        foreign_brands.extend(other.brands.iter().map(String::as_str).filter(|b| !own_brands.contains(b)));
    }
    let patterns: Vec<&str> = foreign_paths.iter().map(String::as_str).chain(foreign_brands.iter().copied()).collect();
    let needles = aho_corasick::AhoCorasick::new(&patterns).expect("the needles build an automaton");
    for (path, bytes) in files.iter().filter(|(p, _)| !is_program(p)) {
        let mut text = String::from_utf8_lossy(bytes).replace(&own_home, "<HOME>");
        if let Some(l) = &own_local {
            text = text.replace(l.as_str(), "<LOCAL>/");
        }
        assert!(
            !text.contains("~/.claude") && !text.contains("$HOME/.claude"),
            "{id} {scope:?}: {path} keeps a ~/.claude path"
        );
        // `runtime.json`'s `hook_hosts` names, by design, where a runtime that runs this one's
        // hooks keeps its own helper (Claude's names Cursor's `~/.cursor/msd-core/bin/msd_run`).
        let hosts = cap.hook_hosts.iter().flat_map(|h| &h.helpers).map(|h| h.replacen("~/", "", 1)).collect::<Vec<_>>();
        if path.ends_with("/runtime.json") {
            for h in &hosts {
                text = text.replace(h.as_str(), "<HOST-HELPER>");
            }
        }
        // Every occurrence of every foreign path and brand, in one pass (a `find` per needle per
        // file was a third of these tests' CPU): a path anywhere is a leak, a brand where it is a
        // word of its own (not glued to letters around it).
        for m in needles.find_overlapping_iter(&text) {
            let (at, needle) = (m.start(), &patterns[m.pattern().as_usize()]);
            let context = || {
                text[..at].chars().rev().take(60).collect::<Vec<_>>().into_iter().rev().collect::<String>()
                    + &text[at..].chars().take(60).collect::<String>()
            };
            assert!(
                m.pattern().as_usize() >= foreign_paths.len(),
                "{id} {scope:?}: {path} holds foreign path `{needle}`: …{}…",
                context()
            );
            assert!(glued(&text, at, needle), "{id} {scope:?}: {path} holds foreign brand `{needle}`: …{}…", context());
        }
    }
}

fn check_golden(id: &str, scope: Scope, cap: &Capability, files: &BTreeMap<String, Vec<u8>>) {
    let golden_path = repo().join(format!("tests/golden/{id}-{}.txt", scope.as_str()));
    let golden = std::fs::read_to_string(&golden_path).unwrap_or_else(|_| panic!("missing {}", golden_path.display()));
    // Metadata and the user's settings surfaces are installed but not emitted.
    let mut not_emitted = vec![
        format!("{}/msd-file-manifest.json", cap.core_dir(scope)),
        format!("{}/msd-install-state.json", cap.core_dir(scope)),
    ];
    not_emitted.extend(msd_core::manifest::surfaces::for_scope(&cap.settings, scope).map(|s| s.file.to_string()));
    let installed: Vec<&str> =
        files.keys().map(String::as_str).filter(|p| !not_emitted.iter().any(|n| n == p)).collect();
    let golden: Vec<&str> = golden.lines().collect();
    assert_eq!(
        installed,
        golden,
        "{id} {scope:?}: layout drift against {}; if intended, run `cargo run -q --bin msd-install -- gen golden --write`",
        golden_path.display()
    );
}

#[test]
fn runtimes_golden_lists_are_current() {
    let w = World::new();
    Install::in_world(&w).args(["gen", "golden", "--check", "--root", repo().to_str().unwrap()]).run().success();
}

#[test]
fn runtimes_golden_check_fails_on_drift_with_the_fix() {
    let w = World::new();
    let root = w.tmp.path().join("repo");
    crate::support::copy_tree(&repo().join("tests/golden"), &root.join("tests/golden"));
    let p = root.join("tests/golden/cursor-local.txt");
    let text = std::fs::read_to_string(&p).unwrap().replacen("skills/msd-help/SKILL.md\n", "", 1);
    std::fs::write(&p, text).unwrap();
    Install::in_world(&w)
        .args(["gen", "golden", "--check", "--root", root.to_str().unwrap()])
        .run()
        .code(1)
        .stderr_has("+skills/msd-help/SKILL.md")
        .stderr_has("gen golden --write");
}

#[test]
fn runtimes_foreign_brand_scan_goes_red() {
    // The scan itself must be able to fail: a brand inside a word does not count, a brand does.
    assert_eq!(word_at("Declines to run", "Cline"), None);
    assert_eq!(word_at("run it in Cline today", "Cline"), Some(10));
    assert_eq!(word_at("see CLAUDE.md.", "CLAUDE.md"), Some(4));
}

#[test]
fn runtimes_windsurf_stub_fits_its_cap_whatever_the_description() {
    let w = World::new();
    let content = w.tmp.path().join("content");
    crate::support::copy_tree(&crate::support::fixture("starter"), &content);
    let long = "word ".repeat(5_000);
    std::fs::write(
        content.join("commands/msd/execute.md"),
        format!("---\nname: msd:execute\ndescription: \"{long}\"\n---\nbody\n"),
    )
    .unwrap();
    Install::in_world(&w).runtime("windsurf").local().content(&content).run().success();
    let stub = std::fs::read(w.project.join(".windsurf/workflows/msd-execute.md")).unwrap();
    assert!(stub.len() <= 12_000, "stub is {} bytes", stub.len());
    assert!(String::from_utf8_lossy(&stub).contains("./.windsurf/msd-core/commands/execute.md"));
}

#[test]
fn runtimes_env_overrides_reach_paths_inside_content() {
    // The reference rewrote Codex and Antigravity content paths to hard-coded homes; here the
    // override decides both where files go and what the content says.
    for (id, var) in
        [("codex", "CODEX_HOME"), ("antigravity", "ANTIGRAVITY_CONFIG_DIR"), ("kimi-code", "KIMI_CODE_HOME")]
    {
        let w = World::new();
        let custom = w.tmp.path().join(format!("custom-{id}"));
        let w = w.env(var, &custom);
        Install::in_world(&w).runtime(id).run().success();
        let files = tree(&custom);
        assert!(!files.is_empty(), "{id}: installed under {var}");
        let any_ref = files
            .values()
            .any(|b| String::from_utf8_lossy(b).contains(&format!("{}/msd-core/workflows/", custom.display())));
        assert!(any_ref, "{id}: content points at the overridden home");
        assert!(
            !w.home.join(".codex").exists() && !w.home.join(".gemini").exists() && !w.home.join(".kimi-code").exists()
        );
    }
}

#[test]
fn runtimes_all_installs_every_runtime_and_several_flags_a_set() {
    let w = World::new();
    Install::in_world(&w).all().arg("-q").run().success();
    for rt in runtimes() {
        assert!(
            w.home.join(rt.capability.home.default.as_str()).join("msd-core/msd-file-manifest.json").exists(),
            "{}",
            rt.capability.id
        );
    }
    let w = World::new();
    let out = Install::in_world(&w).runtime("cursor").runtime("qwen").local().json().run().json();
    let ids: Vec<&str> = out["runtimes"].as_array().unwrap().iter().map(|r| r["runtime"].as_str().unwrap()).collect();
    assert_eq!(ids, ["cursor", "qwen"]);
    assert!(w.project.join(".cursor/skills").is_dir() && w.project.join(".qwen/skills").is_dir());
    let w = World::new();
    let out = Install::in_world(&w).all().local().json().run().json();
    let (all, local) = (runtimes().len(), runtimes().iter().filter(|r| r.capability.local.is_some()).count());
    assert_eq!(
        (out["runtimes"].as_array().unwrap().len(), out["skipped"].as_array().unwrap().len()),
        (local, all - local),
        "--all --local skips the runtimes without a local scope"
    );
    assert!(all - local >= 2, "kimi and kimi-code have no local scope");
}

#[test]
fn runtimes_description_limits_count_the_runtime_unit() {
    // 100 emoji: 100 characters, 200 UTF-16 units, 400 bytes.
    let emoji = "😀".repeat(100);
    let w = World::new();
    let content = w.tmp.path().join("content");
    crate::support::copy_tree(&crate::support::fixture("starter"), &content);
    std::fs::write(
        content.join("commands/msd/execute.md"),
        format!("---\nname: msd:execute\ndescription: \"{emoji}\"\n---\nbody\n"),
    )
    .unwrap();
    let c = content.to_str().unwrap();
    let description = |path: std::path::PathBuf| -> String {
        let text = std::fs::read_to_string(&path).unwrap();
        let (fm, _) = msd_core::markup::frontmatter::split("x", &text).unwrap();
        fm.unwrap().get_str("description").unwrap().to_string()
    };
    // Cursor counts UTF-16 units (limit 180): 88 emoji (176 units) and the ellipsis.
    Install::in_world(&w).runtime("cursor").content(c).run().success();
    let d = description(w.home.join(".cursor/skills/msd-execute/SKILL.md"));
    assert_eq!(d, format!("{}...", "😀".repeat(88)));
    assert_eq!(d.encode_utf16().count(), 179);
    // Windsurf counts characters (limit 180): 100 characters fit whole.
    Install::in_world(&w).runtime("windsurf").local().content(c).run().success();
    assert_eq!(description(w.project.join(".windsurf/workflows/msd-execute.md")), emoji);
}

// What the real runtimes showed (issue 14): each test fails on the code before its fix.

/// The starter content with one agent whose tools hold an MCP tool in Claude's form.
fn content_with_mcp_agent(w: &World) -> std::path::PathBuf {
    let content = w.tmp.path().join("content");
    crate::support::copy_tree(&crate::support::fixture("starter"), &content);
    std::fs::write(
        content.join("namespaces.json"),
        r#"{"instructions": "Pick the command from the table.",
  "groups": [{"name": "phase", "description": "Plan and execute a phase.", "commands": ["plan", "execute"]}]}"#,
    )
    .unwrap();
    let p = content.join("agents/msd-planner.md");
    let text = std::fs::read_to_string(&p).unwrap().replacen(
        "tools: Read, Write, Bash, Grep",
        "tools: Read, mcp__context7__resolve-library-id, Bash, mcp__context7",
        1,
    );
    std::fs::write(&p, text).unwrap();
    content
}

#[test]
fn runtimes_gemini_global_lists_its_core_in_include_directories_and_uninstall_removes_only_that() {
    // gemini-cli@0.61.0 refuses `@{/abs}` outside the workspace; context.includeDirectories
    // widens it (runtimes/gemini/capability.json cites the lines).
    let w = World::new();
    let gemini = w.home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let user = "{\n  \"theme\": \"dark\",\n  \"context\": { \"includeDirectories\": [\"/srv/docs\"] }\n}\n";
    std::fs::write(gemini.join("settings.json"), user).unwrap();
    Install::in_world(&w).runtime("gemini").run().success();
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(gemini.join("settings.json")).unwrap()).unwrap();
    let dirs: Vec<&str> = settings["context"]["includeDirectories"]
        .as_array()
        .expect("an array")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let core = gemini.join("msd-core").display().to_string();
    assert_eq!(dirs, ["/srv/docs", core.as_str()]);
    // Every command's include lies inside that directory.
    let cmd = std::fs::read_to_string(gemini.join("commands/msd/help.toml")).unwrap();
    assert!(cmd.contains(&format!("@{{{core}/")), "{cmd}");
    // A local install adds no includeDirectories entry (its includes are inside the workspace);
    // its settings.json holds the hooks only.
    Install::in_world(&w).runtime("gemini").local().run().success();
    let local: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.project.join(".gemini/settings.json")).unwrap()).unwrap();
    assert!(local.get("context").is_none(), "{local}");
    assert!(local["hooks"].is_object(), "{local}");
    Install::in_world(&w).uninstall().runtime("gemini").run().success();
    assert_eq!(std::fs::read_to_string(gemini.join("settings.json")).unwrap(), user);
}

#[test]
fn runtimes_qwen_agents_get_qwen_tool_names() {
    let w = World::new();
    Install::in_world(&w).runtime("qwen").run().success();
    let agents = tree(&w.home.join(".qwen/agents"));
    assert!(!agents.is_empty());
    // Qwen Code 0.24.4 resolves agent tools by its own names or display names only.
    let qwen_names =
        ["read_file", "write_file", "edit", "run_shell_command", "grep_search", "glob", "web_fetch", "web_search"];
    let mut seen = 0;
    for (path, bytes) in &agents {
        let (fm, _) = msd_core::markup::frontmatter::split(path, std::str::from_utf8(bytes).unwrap()).unwrap();
        let Some(tools) = fm.unwrap().get_list("tools") else { continue };
        for t in &tools {
            assert!(
                qwen_names.contains(&t.as_str()) || ["todo_write", "agent", "ask_user_question"].contains(&t.as_str()),
                "{path}: `{t}` is not a Qwen tool name"
            );
        }
        seen += tools.len();
    }
    assert!(seen > 0, "some agent declares tools");
}

#[test]
fn runtimes_env_overrides_are_the_ones_the_tools_read() {
    // The variable each real CLI reads moves msd-install too.
    for (id, var, default) in
        [("qwen", "QWEN_HOME", ".qwen"), ("cline", "CLINE_DIR", ".cline"), ("copilot", "COPILOT_HOME", ".copilot")]
    {
        let w = World::new();
        let custom = w.tmp.path().join(format!("custom-{id}"));
        let w = w.env(var, &custom);
        Install::in_world(&w).runtime(id).run().success();
        assert!(custom.join("msd-core/VERSION").is_file(), "{id}: {var} moves the home");
        assert!(!w.home.join(default).exists(), "{id}: nothing in the default home");
    }
    // Variables no tool reads move nothing (QWEN_CONFIG_DIR, CLINE_CONFIG_DIR,
    // COPILOT_CONFIG_DIR, AUGMENT_CONFIG_DIR appear in none of the packages; OPENCODE_CONFIG and
    // KILO_CONFIG name a config file whose directory is not scanned).
    for (id, var, default) in [
        ("qwen", "QWEN_CONFIG_DIR", ".qwen"),
        ("cline", "CLINE_CONFIG_DIR", ".cline"),
        ("copilot", "COPILOT_CONFIG_DIR", ".copilot"),
        ("augment", "AUGMENT_CONFIG_DIR", ".augment"),
        ("opencode", "OPENCODE_CONFIG", ".config/opencode"),
        ("kilo", "KILO_CONFIG", ".config/kilo"),
    ] {
        let w = World::new();
        let custom = w.tmp.path().join(format!("custom-{id}/config.json"));
        let w = w.env(var, &custom);
        Install::in_world(&w).runtime(id).run().success();
        assert!(w.home.join(default).join("msd-core/VERSION").is_file(), "{id}: {var} is ignored, as the tool does");
        assert!(!w.tmp.path().join(format!("custom-{id}")).exists(), "{id}: nothing under {var}");
    }
}

#[test]
fn runtimes_opencode_and_kilo_commands_carry_no_tools_key() {
    // Their command schema is template, description, agent, model, variant, subtask.
    for (id, dir) in [("opencode", ".config/opencode/commands"), ("kilo", ".config/kilo/command")] {
        let w = World::new();
        Install::in_world(&w).runtime(id).run().success();
        let cmds = tree(&w.home.join(dir));
        assert!(!cmds.is_empty(), "{id}: commands written");
        for (path, bytes) in &cmds {
            let (fm, _) = msd_core::markup::frontmatter::split(path, std::str::from_utf8(bytes).unwrap()).unwrap();
            let fm = fm.unwrap();
            let keys: Vec<&str> = fm.entries.iter().map(|e| e.key.as_str()).collect();
            assert!(
                keys.iter().all(|k| ["description", "agent", "model", "subtask"].contains(k)),
                "{id} {path}: {keys:?}"
            );
        }
    }
}

#[test]
fn runtimes_cline_workflows_keep_no_literal_arguments_placeholder() {
    let w = World::new();
    Install::in_world(&w).runtime("cline").local().run().success();
    let flows = tree(&w.project.join(".clinerules/workflows"));
    assert!(!flows.is_empty());
    let help = String::from_utf8_lossy(&flows["msd-help.md"]).to_string();
    // Cline appends the text after `/msd-help` to the workflow: the adapter says so.
    assert!(help.contains("Arguments: ARGUMENTS") && help.contains("Cline appends"), "{help}");
    for (path, bytes) in &flows {
        assert!(!String::from_utf8_lossy(bytes).contains("$ARGUMENTS"), "{path} keeps $ARGUMENTS");
    }
}

#[test]
fn runtimes_cline_commands_are_slash_commands_in_both_scopes() {
    // Cline runs `<CLINE_DIR>/workflows/*.md` and `.clinerules/workflows/*.md` as `/msd-<name>`;
    // it scans skills one level deep, so the global routers with nested command skills left
    // `/msd-new-project`, which the install summary tells the user to type, no command there.
    for local in [false, true] {
        let w = World::new();
        let mut install = Install::in_world(&w);
        install = install.runtime("cline");
        if local {
            install = install.local();
        }
        let ran = install.run().success();
        let out = ran.stdout();
        let next = out.lines().find(|l| l.starts_with("next:")).unwrap_or_default().to_string();
        let typed = next.split_whitespace().find(|w| w.starts_with('/')).expect("a command to type");
        let dir = if local { w.project.join(".clinerules/workflows") } else { w.home.join(".cline/workflows") };
        let file = dir.join(format!("{}.md", &typed[1..]));
        assert!(file.is_file(), "local {local}: `{next}` names {}, which is not installed", file.display());
        let flows = tree(&dir);
        assert_eq!(flows.keys().filter(|k| k.starts_with("msd-")).count(), content().commands.len(), "local {local}");
        let skills = w.home.join(".cline/skills");
        assert!(!skills.exists() || tree(&skills).is_empty(), "local {local}: msd writes no Cline skills");
    }
}

#[test]
fn runtimes_mcp_tool_names_are_mapped_or_dropped_per_runtime() {
    let w = World::new();
    let content = content_with_mcp_agent(&w);
    let c = content.to_str().unwrap();
    let tools_of = |path: std::path::PathBuf| -> Vec<String> {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (fm, _) = msd_core::markup::frontmatter::split("x", &text).unwrap();
        fm.unwrap().get_list("tools").unwrap()
    };
    for id in ["claude", "gemini", "copilot", "qwen", "opencode", "kimi", "cline"] {
        Install::in_world(&w).runtime(id).content(c).run().success();
    }
    let h = &w.home;
    // Claude and Qwen take Claude's form (qwen-code@0.24.4 exempts `mcp__` names).
    assert_eq!(
        tools_of(h.join(".claude/agents/msd-planner.md")),
        ["Read", "mcp__context7__resolve-library-id", "Bash", "mcp__context7"]
    );
    assert_eq!(
        tools_of(h.join(".qwen/agents/msd-planner.md")),
        ["read_file", "mcp__context7__resolve-library-id", "run_shell_command", "mcp__context7"]
    );
    // Gemini names MCP tools `mcp_<server>_<tool>` and rejects an agent with `mcp__`.
    assert_eq!(
        tools_of(h.join(".gemini/agents/msd-planner.md")),
        ["read_file", "mcp_context7_resolve-library-id", "run_shell_command"]
    );
    // Copilot takes `<server>/<tool>`.
    assert_eq!(
        tools_of(h.join(".copilot/agents/msd-planner.agent.md")),
        ["read", "context7/resolve-library-id", "execute"]
    );
    // OpenCode: no known agent spelling, dropped.
    let oc = std::fs::read_to_string(h.join(".config/opencode/agents/msd-planner.md")).unwrap();
    assert!(!oc.contains("mcp") && !oc.contains("context7"), "{oc}");
    // A Cline subagent is given built-in tools only (runtimes/cline): MCP names are dropped.
    assert_eq!(tools_of(h.join(".cline/agents/msd-planner.yml")), ["read_files", "run_commands"]);
    // Kimi's module list has no MCP entries.
    let kimi = tree(&h.join(".kimi/agents"));
    for (path, bytes) in kimi.iter().filter(|(p, _)| p.ends_with(".yaml")) {
        assert!(!String::from_utf8_lossy(bytes).contains("context7"), "kimi {path}");
    }
}

#[test]
fn runtimes_kimi_and_codex_never_see_each_others_skills_in_either_order() {
    // kimi-cli@1.52.0 reads the first of ~/.kimi/skills, ~/.claude/skills, ~/.codex/skills and
    // the first of ~/.config/agents/skills, ~/.agents/skills; Codex reads $CODEX_HOME/skills and
    // ~/.agents/skills. Kimi's skills go to ~/.kimi/skills, Codex's to ~/.codex/skills: one owner
    // per file, and neither reads the other's.
    for order in [["kimi", "codex"], ["codex", "kimi"]] {
        let w = World::new();
        // A user's own ~/.agents/skills (it used to send Kimi there).
        std::fs::create_dir_all(w.home.join(".agents/skills/mine")).unwrap();
        for id in order {
            Install::in_world(&w).runtime(id).run().success();
        }
        let kimi = w.home.join(".kimi/skills/msd-help/SKILL.md");
        let codex = w.home.join(".codex/skills/msd-help/SKILL.md");
        assert!(kimi.is_file() && codex.is_file(), "{order:?}");
        // Each holds its own flavour (Codex's skills carry its adapter).
        assert!(!String::from_utf8_lossy(&std::fs::read(&kimi).unwrap()).contains("<runtime_adapter>"));
        assert!(String::from_utf8_lossy(&std::fs::read(&codex).unwrap()).contains("<runtime_adapter>"));
        let shared: Vec<String> = tree(&w.home.join(".agents")).into_keys().collect();
        assert!(shared.is_empty(), "{order:?}: nothing of ours in ~/.agents: {shared:?}");
        assert!(!w.home.join(".config/agents").exists(), "{order:?}");
        // Uninstalling either leaves the other whole.
        let before = tree(&w.home.join(".kimi"));
        Install::in_world(&w).uninstall().runtime("codex").run().success();
        assert!(!w.home.join(".codex/skills/msd-help").exists());
        assert_eq!(tree(&w.home.join(".kimi")), before, "{order:?}: Kimi untouched by Codex's uninstall");
        Install::in_world(&w).runtime("codex").run().success();
        let before = tree(&w.home.join(".codex"));
        Install::in_world(&w).uninstall().runtime("kimi").run().success();
        assert!(!w.home.join(".kimi/skills/msd-help").exists());
        assert_eq!(tree(&w.home.join(".codex")), before, "{order:?}: Codex untouched by Kimi's uninstall");
        assert!(w.home.join(".agents/skills/mine").is_dir());
    }
}

#[test]
fn runtimes_codex_summary_says_hooks_need_review_and_what_an_untrusted_project_loads() {
    let w = World::new();
    let ran = Install::in_world(&w).runtime("codex").run();
    let text = ran.stdout();
    assert!(text.contains("`untrusted`") && text.contains("run `/hooks`"), "{text}");
    assert!(text.contains(&format!("{}/hooks.json", w.home.join(".codex").display())), "{text}");
    let doc = Install::in_world(&w).runtime("codex").local().json().run().json();
    let notes = doc["runtimes"][0]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("loads only the skills")), "{notes:?}");
}

#[test]
fn runtimes_all_local_names_the_runtimes_without_a_local_scope() {
    let w = World::new();
    let ran = Install::in_world(&w).all().local().run().success();
    let text = ran.stdout() + &ran.stderr();
    assert!(text.contains("skipped (no project-local scope): kimi, kimi-code"), "{text}");
    let w = World::new();
    let doc = Install::in_world(&w).all().local().json().run().json();
    let skipped: Vec<&str> =
        doc["skipped"].as_array().unwrap().iter().map(|s| s["runtime"].as_str().unwrap()).collect();
    assert_eq!(skipped, ["kimi", "kimi-code"]);
}

/// Skill names under `roots` (each `<root>/**/SKILL.md`), with repeats.
fn skill_names(roots: &[std::path::PathBuf]) -> Vec<String> {
    let mut names = Vec::new();
    for root in roots {
        for path in files(root).into_iter().filter(|p| p.ends_with("SKILL.md")) {
            let name = path.trim_end_matches("/SKILL.md").rsplit('/').next().unwrap().to_string();
            names.push(name);
        }
    }
    names
}

#[test]
fn runtimes_opencode_and_kilo_see_no_duplicate_skill_names_beside_claude() {
    // Both scan their own {skill,skills}/ plus .claude/skills and .agents/skills, globally and in
    // the project, and warn `duplicate skill name` for a repeat (runtimes/<id>/capability.json).
    for (id, home, local) in [("opencode", ".config/opencode", ".opencode"), ("kilo", ".config/kilo", ".kilo")] {
        let w = World::new();
        for scope in [None, Some("--local")] {
            for rt in ["claude", id] {
                let mut args = vec!["-r", rt];
                args.extend(scope);
                Install::in_world(&w).args(&args).run().success();
            }
        }
        let h = &w.home;
        let p = &w.project;
        let roots = [
            h.join(home).join("skill"),
            h.join(home).join("skills"),
            h.join(".claude/skills"),
            h.join(".agents/skills"),
            p.join(local).join("skill"),
            p.join(local).join("skills"),
            p.join(".claude/skills"),
            p.join(".agents/skills"),
        ];
        let mut names = skill_names(&roots);
        assert!(names.iter().any(|n| n == "msd-help"), "{id} still sees msd's skills (Claude's)");
        let total = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), total, "{id}: a skill name is loaded twice");
        // Commands and agents are OpenCode's own.
        assert!(h.join(home).join(if id == "kilo" { "command/msd-help.md" } else { "commands/msd-help.md" }).is_file());
    }
}

/// Every `${word}` a JavaScript template filling `/\$\{(\w+)\}/g` would take as a placeholder.
fn dollar_brace_placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let n = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        if n > 0 && after[n..].starts_with('}') {
            out.push(after[..n].to_string());
        }
        rest = after;
    }
    out
}

/// A copy of the starter fixture whose `plan` and `execute` commands form the group `name`.
fn starter_with_group(w: &World, name: &str) -> std::path::PathBuf {
    let content = w.tmp.path().join("content");
    crate::support::copy_tree(&crate::support::fixture("starter"), &content);
    let groups = serde_json::json!({
        "instructions": "Pick the command from the table.",
        "groups": [{"name": name, "description": "Plan and execute a phase.", "commands": ["plan", "execute"]}],
    });
    std::fs::write(content.join("namespaces.json"), groups.to_string()).unwrap();
    content
}

#[test]
fn runtimes_gemini_and_qwen_agent_bodies_hold_no_template_placeholder() {
    // Gemini CLI and Qwen Code fill `${NAME}` in an agent's body and fail the agent on an
    // unknown NAME (runtimes/{gemini,qwen}/capability.json cite templateString). A fixture
    // agent with a JavaScript template literal and a shell `${VAR}` must arrive escaped.
    let w = World::new();
    let content = starter_with_group(&w, "phase");
    let p = content.join("agents/msd-planner.md");
    let text = std::fs::read_to_string(&p).unwrap() + "\nExample: fetch(`${PREVIEW_URL}?u=${url}`); echo \"${HOME}\"\n";
    std::fs::write(&p, text).unwrap();
    let c = content.display().to_string();
    for (id, home) in [("gemini", ".gemini"), ("qwen", ".qwen")] {
        for local in [false, true] {
            let mut args = vec!["-r", id, "--content", c.as_str()];
            if local {
                args.push("--local");
            }
            Install::in_world(&w).args(&args).run().success();
            let root = if local { w.project.join(home) } else { w.home.join(home) };
            let agent = std::fs::read_to_string(root.join("agents/msd-planner.md")).unwrap();
            assert_eq!(dollar_brace_placeholders(&agent), Vec::<String>::new(), "{id} local={local}: {agent}");
            assert!(agent.contains("fetch(`${ PREVIEW_URL }?u=${ url }`)"), "{id}: {agent}");
            // The shipped agents too (msd-code-reviewer's example was the real case).
            for (path, bytes) in tree(&root.join("agents")) {
                let found = dollar_brace_placeholders(std::str::from_utf8(&bytes).unwrap());
                assert!(found.is_empty(), "{id}: {path} holds ${{...}} placeholders {found:?}");
            }
        }
    }
    // Claude reads bodies as written: the text stays as the content has it.
    Install::in_world(&w).runtime("claude").content(&c).run().success();
    let claude = std::fs::read_to_string(w.home.join(".claude/agents/msd-planner.md")).unwrap();
    assert!(claude.contains("fetch(`${PREVIEW_URL}?u=${url}`)"), "{claude}");
}

#[test]
fn runtimes_claude_local_names_its_files_by_the_project_path_and_writes_no_color() {
    // Claude resolves `@./path` and runs Bash from the launch directory, so a session started in
    // a subdirectory of the project missed the workflow of every command (real-runtime probe,
    // claude local step 6). And Copilot CLI reads the project's .claude/agents and warns on
    // Claude's `color` key.
    let w = World::new();
    Install::in_world(&w).runtime("claude").local().run().success();
    let root = w.project.join(".claude");
    let core = root.join("msd-core").display().to_string();
    let help = std::fs::read_to_string(root.join("commands/msd-help.md")).unwrap();
    assert!(help.contains(&format!("@{core}/workflows/help.md")), "{help}");
    let mut relative = Vec::new();
    for dir in ["commands", "agents", "msd-core/workflows"] {
        for (path, bytes) in tree(&root.join(dir)) {
            if String::from_utf8_lossy(&bytes).contains("./.claude/") {
                relative.push(format!("{dir}/{path}"));
            }
        }
    }
    assert!(relative.is_empty(), "cwd-relative ./.claude/ references: {relative:?}");
    let settings = std::fs::read_to_string(root.join("settings.local.json")).unwrap();
    assert!(settings.contains(&format!("Bash({core}/bin/msd_run:*)")), "{settings}");
    for (path, bytes) in tree(&root.join("agents")) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let (fm, _) = msd_core::markup::frontmatter::split(&path, &text).unwrap();
        assert!(fm.unwrap().get("color").is_none(), "{path} keeps color");
    }
    // The global install keeps Claude's own key.
    Install::in_world(&w).runtime("claude").run().success();
    let g = std::fs::read_to_string(w.home.join(".claude/agents/msd-code-reviewer.md")).unwrap();
    assert!(g.contains("\ncolor: "), "{g}");
}

#[test]
fn runtimes_augment_hook_timeouts_are_milliseconds() {
    // Auggie reads a hook's `timeout` in milliseconds (runtimes/augment cites augment.mjs:5785);
    // `10` made the real CLI kill msd's SessionStart hook after 10 ms.
    let w = World::new();
    for local in [false, true] {
        let mut args = vec!["-r", "augment"];
        if local {
            args.push("--local");
        }
        Install::in_world(&w).args(&args).run().success();
        let file = if local { w.project.join(".augment/settings.json") } else { w.home.join(".augment/settings.json") };
        let settings: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let mut seen = 0;
        for (event, groups) in settings["hooks"].as_object().expect("hooks") {
            for group in groups.as_array().unwrap() {
                for hook in group["hooks"].as_array().unwrap() {
                    let ms = hook["timeout"].as_u64().expect("a timeout");
                    assert!(ms >= 1000, "{event}: timeout {ms} ms is too short for msd_run (local={local})");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 2, "{settings}");
    }
}

#[test]
fn runtimes_opencode_global_allows_reading_its_core_and_uninstall_removes_only_that() {
    // `opencode run` rejects a read outside the worktree (permission external_directory), so a
    // global install's workflows could not read their own references; the install allows
    // `<core>/*` in opencode.json (runtimes/opencode cites the binary).
    let w = World::new();
    let dir = w.home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let user = "{\n  \"theme\": \"dark\",\n  \"permission\": { \"bash\": \"ask\" }\n}\n";
    std::fs::write(dir.join("opencode.json"), user).unwrap();
    Install::in_world(&w).runtime("opencode").run().success();
    let cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("opencode.json")).unwrap()).unwrap();
    let core = format!("{}/*", dir.join("msd-core").display());
    assert_eq!(cfg["permission"]["external_directory"][&core], "allow", "{cfg}");
    assert_eq!(cfg["permission"]["bash"], "ask", "{cfg}");
    // A local install's files are inside the project: no such entry.
    Install::in_world(&w).runtime("opencode").local().run().success();
    assert!(!w.project.join(".opencode/opencode.json").exists());
    Install::in_world(&w).uninstall().runtime("opencode").run().success();
    assert_eq!(std::fs::read_to_string(dir.join("opencode.json")).unwrap(), user);
}

#[test]
fn runtimes_a_group_named_like_a_command_is_refused_and_the_shipped_skill_names_are_unique() {
    // Qwen listed two skills `msd-review`: the router of the group `review` and the nested
    // command `review` (real-runtime probe, qwen global). The loader refuses such a group.
    let w = World::new();
    let content = starter_with_group(&w, "plan");
    let c = content.display().to_string();
    Install::in_world(&w)
        .runtime("qwen")
        .content(&c)
        .run()
        .failure()
        .stderr_has("group `plan` has the name of the command `plan`");
    // The shipped content: every SKILL.md of a nested install has its own name.
    Install::in_world(&w).runtime("qwen").run().success();
    let mut names = BTreeMap::new();
    for (path, bytes) in tree(&w.home.join(".qwen/skills")).into_iter().filter(|(p, _)| p.ends_with("SKILL.md")) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let (fm, _) = msd_core::markup::frontmatter::split(&path, &text).unwrap();
        let name = fm.unwrap().get("name").and_then(|v| v.as_str().map(str::to_string)).expect("a name");
        if let Some(prev) = names.insert(name.clone(), path.clone()) {
            panic!("two skills named {name}: {prev} and {path}");
        }
    }
    assert!(names.len() > 30);
}
