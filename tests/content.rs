//! The shipped content is a coherent framework: every include, path and agent a file names
//! exists; sections and steps files match; every `when=` atom is used; sizes, tiers and counts
//! hold; the core process uses one set of planning file names.

use std::collections::{BTreeMap, BTreeSet};

use msd_core::manifest::caps::Tier;
use msd_core::markup::markers;
use msd_core::markup::when::ATOMS;
use msd_install::pipeline::load::Content;

use std::path::Path;

use crate::support::{Install, Ran, World, copy_tree, repo};

fn content() -> &'static Content {
    crate::support::shipped_content()
}

/// Every file of the content tree as text.
fn texts(c: &Content) -> BTreeMap<String, String> {
    c.tree.files.iter().map(|(p, b)| (p.to_string(), String::from_utf8(b.to_vec()).expect("UTF-8"))).collect()
}

/// Tokens after `prefix` up to the first character that cannot be in a path.
fn paths_after<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let tail = &rest[i + prefix.len()..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || "-_./".contains(c))).unwrap_or(tail.len());
        let p = tail[..end].trim_end_matches(['.', '/']);
        if !p.is_empty() {
            out.push(p);
        }
        rest = &tail[end..];
    }
    out
}

/// Every `~/.claude/msd-core/<path>` that names nothing in the tree.
fn missing_core_paths(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut missing = BTreeSet::new();
    for (file, text) in files {
        for p in paths_after(text, "~/.claude/msd-core/") {
            // The installer adds the helper binary.
            if p == "bin/msd_run" {
                continue;
            }
            let exact = format!("msd-core/{p}");
            let as_dir = format!("msd-core/{p}/");
            if !files.contains_key(&exact) && !files.keys().any(|k| k.starts_with(&as_dir)) {
                missing.insert(format!("{file}: ~/.claude/msd-core/{p}"));
            }
        }
    }
    missing.into_iter().collect()
}

/// Agents spawned with `subagent_type="..."` that do not exist.
fn unknown_agents(files: &BTreeMap<String, String>) -> (Vec<String>, BTreeSet<String>) {
    let agents: BTreeSet<String> =
        files.keys().filter_map(|k| k.strip_prefix("agents/")?.strip_suffix(".md").map(str::to_string)).collect();
    let mut unknown = Vec::new();
    let mut spawned = BTreeSet::new();
    for (file, text) in files {
        for name in paths_after(text, "subagent_type=\"") {
            if !agents.contains(name) {
                unknown.push(format!("{file} spawns unknown agent {name}"));
            }
            spawned.insert(name.to_string());
        }
    }
    (unknown, spawned)
}

/// Sections without a (big enough) steps file, steps files without a section, atoms used.
fn section_problems(files: &BTreeMap<String, String>) -> (Vec<String>, BTreeSet<&'static str>) {
    let mut problems = Vec::new();
    let mut atoms_used = BTreeSet::new();
    let mut expected_steps = BTreeSet::new();
    for (file, text) in files {
        let Some(stem) =
            file.strip_prefix("msd-core/workflows/").and_then(|f| f.strip_suffix(".md")).filter(|s| !s.contains('/'))
        else {
            continue;
        };
        let doc = markers::parse(file, text).expect("markers parse");
        for s in doc.explicit_sections() {
            let steps = format!("msd-core/workflows/{stem}/steps/{}.md", s.id);
            match files.get(&steps) {
                None => problems.push(format!("{file}: section {} has no {steps}", s.id)),
                Some(body) if body.len() < 400 => problems.push(format!("{steps} is {} bytes, under 400", body.len())),
                Some(_) => {}
            }
            if !s.body.contains(&format!("workflows/{stem}/steps/{}.md", s.id)) {
                problems.push(format!("{file}: section {} does not point at its steps file", s.id));
            }
            atoms_used.insert(s.when.as_str());
            expected_steps.insert(steps);
        }
    }
    for k in files.keys().filter(|k| k.contains("/steps/")) {
        if !expected_steps.contains(k) {
            problems.push(format!("{k} belongs to no section"));
        }
    }
    (problems, atoms_used)
}

#[test]
fn content_every_named_core_path_exists() {
    let missing = missing_core_paths(&texts(content()));
    assert!(missing.is_empty(), "paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn content_checks_go_red_on_a_broken_tree() {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    files.insert("agents/msd-planner.md".into(), "x".into());
    files.insert(
        "msd-core/workflows/plan.md".into(),
        "Read `~/.claude/msd-core/references/gone.md`.\nTask(subagent_type=\"msd-ghost\")\n<!-- msd:section id=\"plan-prd\" when=\"flag:--prd\" -->\nsee workflows/plan/steps/plan-prd.md\n<!-- /msd:section -->\n".into(),
    );
    files.insert("msd-core/workflows/plan/steps/plan-prd.md".into(), "too short".into());
    files.insert("msd-core/workflows/plan/steps/orphan.md".into(), "x".repeat(500));
    assert_eq!(missing_core_paths(&files), ["msd-core/workflows/plan.md: ~/.claude/msd-core/references/gone.md"]);
    assert_eq!(unknown_agents(&files).0, ["msd-core/workflows/plan.md spawns unknown agent msd-ghost"]);
    let (problems, atoms) = section_problems(&files);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("under 400") && problems[1].contains("orphan.md belongs to no section"));
    assert_eq!(atoms.into_iter().collect::<Vec<_>>(), ["flag:--prd"]);
}

#[test]
fn content_commands_include_their_workflow_eagerly() {
    let c = content();
    let files = texts(c);
    for cmd in &c.commands {
        let text = &files[cmd.source.as_str()];
        let include = format!("@~/.claude/msd-core/workflows/{}.md", cmd.stem);
        let ctx = text
            .split("<execution_context>")
            .nth(1)
            .and_then(|t| t.split("</execution_context>").next())
            .unwrap_or_default();
        assert!(ctx.lines().any(|l| l.trim() == include), "{}: <execution_context> lacks `{include}`", cmd.source);
        for key in ["name", "description", "argument-hint", "allowed-tools"] {
            assert!(cmd.frontmatter.get(key).is_some(), "{}: frontmatter lacks {key}", cmd.source);
        }
        for line in text.lines().filter(|l| l.starts_with('@')) {
            let p = line.trim_start_matches("@~/.claude/");
            assert!(files.contains_key(p), "{}: include {line} does not exist", cmd.source);
        }
    }
    // Only commands carry eager includes.
    for (file, text) in &files {
        if !file.starts_with("commands/") {
            assert!(!text.lines().any(|l| l.starts_with("@~/") || l.starts_with("@/")), "{file} has an @ include line");
        }
    }
}

#[test]
fn content_every_spawned_agent_exists() {
    let (unknown, spawned) = unknown_agents(&texts(content()));
    assert!(unknown.is_empty(), "{unknown:?}");
    assert!(spawned.len() >= 10, "workflows spawn most agents: {spawned:?}");
}

#[test]
fn content_sections_and_steps_files_match_and_every_atom_is_used() {
    let (problems, atoms_used) = section_problems(&texts(content()));
    assert!(problems.is_empty(), "{problems:#?}");
    let all: BTreeSet<&str> = ATOMS.iter().map(|(n, _)| *n).collect();
    assert_eq!(atoms_used, all, "every when= atom is used by a section");
}

fn canonical_bytes(files: &BTreeMap<String, String>, stem: &str) -> usize {
    let spine = files[&format!("msd-core/workflows/{stem}.md")].len();
    let detail = format!("msd-core/workflows/{stem}/detail/");
    spine + files.iter().filter(|(k, _)| k.starts_with(&detail)).map(|(_, v)| v.len()).sum::<usize>()
}

#[test]
fn content_sizes_tiers_and_counts() {
    let c = content();
    let files = texts(c);
    for stem in ["plan-phase", "execute-phase"] {
        let n = canonical_bytes(&files, stem);
        assert!(n > 61_440 && n < 98_304, "{stem}: canonical {n} bytes, XL is above 61,440 and below 98,304");
        assert_eq!(c.tiers.workflow(stem), Tier::Xl);
    }
    let large: Vec<&str> =
        c.tiers.workflows.iter().filter(|(_, t)| **t == Tier::Large).map(|(k, _)| k.as_str()).collect();
    assert!(large.len() >= 4, "at least four LARGE workflows: {large:?}");
    for stem in &large {
        let n = canonical_bytes(&files, stem);
        assert!(n > 40_960, "{stem}: canonical {n} bytes is not LARGE");
    }
    let xl_agents: Vec<_> =
        c.agents.iter().filter(|a| files[a.source.as_str()].len() > 49_152).map(|a| a.stem.clone()).collect();
    assert!(xl_agents.len() >= 2, "two XL agents: {xl_agents:?}");
    for a in &xl_agents {
        assert_eq!(c.tiers.agent(a), Tier::Xl, "{a} is XL-sized and tiered so");
    }
    for name in [
        "planner",
        "executor",
        "verifier",
        "plan-checker",
        "phase-researcher",
        "project-researcher",
        "roadmapper",
        "debugger",
        "codebase-mapper",
        "code-reviewer",
        "doc-writer",
        "ui-researcher",
    ] {
        assert!(c.agents.iter().any(|a| a.stem == format!("msd-{name}")), "agent msd-{name}");
    }
    for stem in [
        "new-project",
        "discuss-phase",
        "plan-phase",
        "execute-phase",
        "verify-work",
        "progress",
        "help",
        "settings",
        "quick",
        "debug",
        "map-codebase",
        "new-milestone",
        "complete-milestone",
        "audit-milestone",
        "add-phase",
        "insert-phase",
        "remove-phase",
        "pause-work",
        "resume-work",
        "add-todo",
        "check-todos",
        "code-review",
        "autonomous",
        "update",
        "docs-update",
        "health",
        "ui-phase",
        "research-phase",
        "cleanup",
        "stats",
        // Issue 32: what users route to.
        "pr-branch",
        "audit-uat",
        "sketch",
        "forensics",
        "onboard",
    ] {
        assert!(c.commands.iter().any(|cmd| cmd.stem == stem), "command {stem}");
        assert!(files.contains_key(&format!("msd-core/workflows/{stem}.md")), "workflow {stem}");
    }
    let refs = files.keys().filter(|k| k.starts_with("msd-core/references/")).count();
    let templates = files.keys().filter(|k| k.starts_with("msd-core/templates/")).count();
    assert!(refs >= 12 && files.contains_key("msd-core/references/compact-content-gate.md"), "references: {refs}");
    assert!(templates >= 12, "templates: {templates}");
    let total: usize = files.values().map(String::len).sum();
    assert!(total >= 600 * 1024, "content is {total} bytes");
}

#[test]
fn content_large_workflows_protect_their_guardrails() {
    let c = content();
    let files = texts(c);
    for (stem, tier) in &c.tiers.workflows {
        if *tier == Tier::Default {
            continue;
        }
        let file = format!("msd-core/workflows/{stem}.md");
        let doc = markers::parse(&file, &files[&file]).unwrap();
        let paired = doc.protected.iter().filter(|p| p.paired).count();
        let single = doc.protected.len() - paired;
        assert!(paired >= 2 && single >= 1, "{file}: {paired} paired and {single} single protected blocks");
    }
}

#[test]
fn content_fact_store_is_large_and_varied() {
    let text = std::fs::read_to_string(repo().join("content/CONTEXT.md")).unwrap();
    let mut in_fence = false;
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let t = line.trim().trim_start_matches("- ");
        if in_fence || !(t.starts_with('`') && t.ends_with('`') && t.contains('=')) {
            continue;
        }
        let class = t.trim_matches('`').split(['.', '=']).next().unwrap().to_string();
        *classes.entry(class).or_default() += 1;
    }
    let n: usize = classes.values().sum();
    assert!(n >= 150 && classes.len() >= 8, "{n} predicates in {} classes", classes.len());
    // The installed store holds what the framework cites; the installer's own facts, authoring
    // rules and the reference's defects are maintainers' facts (docs/MAINTAINER-FACTS.md).
    for class in ["RUNTIME", "DEFECT", "MARKER", "ATOM"] {
        assert!(!classes.contains_key(class), "CONTEXT.md still ships {class} facts");
    }
    for prefix in ["`RULE.install.", "`RULE.context.", "`PATH.content.", "`PATH.tests."] {
        assert!(!text.contains(prefix), "CONTEXT.md still ships {prefix}* facts");
    }
    assert!(text.len() < 30_000, "CONTEXT.md is {} bytes", text.len());
}

#[test]
fn content_help_lists_every_command() {
    let c = content();
    let help = texts(c)["msd-core/workflows/help.md"].clone();
    for cmd in &c.commands {
        assert!(help.contains(&format!("/msd:{}", cmd.stem)), "help does not list /msd:{}", cmd.stem);
    }
    // And every command is a step some other command's workflow (or command file) names, so a
    // user finds it from where they are, not only from help.
    let files = texts(c);
    let unreached: Vec<&str> = c
        .commands
        .iter()
        .map(|cmd| cmd.stem.as_str())
        .filter(|stem| {
            let own = |p: &str| {
                p == format!("msd-core/workflows/{stem}.md")
                    || p.starts_with(&format!("msd-core/workflows/{stem}/"))
                    || p == format!("commands/msd/{stem}.md")
                    || p == "msd-core/workflows/help.md"
                    || p == "commands/msd/help.md"
            };
            let named = format!("/msd:{stem}");
            !files.iter().any(|(p, t)| {
                (p.starts_with("msd-core/workflows/") || p.starts_with("commands/msd/"))
                    && !own(p)
                    && t.match_indices(&named).any(|(i, _)| {
                        !t[i + named.len()..].starts_with(|ch: char| ch.is_ascii_lowercase() || ch == '-')
                    })
            })
        })
        .collect();
    assert!(unreached.is_empty(), "no other command names {unreached:?}");
}

#[test]
fn content_core_process_shares_one_set_of_planning_files() {
    // new-project -> plan-phase -> execute-phase -> verify-work: the files one writes are the
    // files the next reads, under the same names.
    let c = content();
    let files = texts(c);
    let wf = |s: &str| files[&format!("msd-core/workflows/{s}.md")].clone();
    let (np, pp, ep, vw) = (wf("new-project"), wf("plan-phase"), wf("execute-phase"), wf("verify-work"));
    for f in [
        ".planning/PROJECT.md",
        ".planning/REQUIREMENTS.md",
        ".planning/ROADMAP.md",
        ".planning/STATE.md",
        ".planning/config.json",
    ] {
        assert!(np.contains(f), "new-project writes {f}");
    }
    for (name, text) in [("plan-phase", &pp), ("execute-phase", &ep), ("verify-work", &vw)] {
        assert!(text.contains("msd_run query init."), "{name} starts from the init facts");
        assert!(
            text.contains("STATE.md") && text.contains("ROADMAP.md"),
            "{name} keeps STATE.md and ROADMAP.md current"
        );
    }
    assert!(pp.contains("-PLAN.md") && ep.contains("-PLAN.md"), "plan-phase writes and execute-phase reads PLAN.md");
    assert!(
        ep.contains("-SUMMARY.md") && vw.contains("SUMMARY"),
        "execute-phase writes and verify-work reads SUMMARY.md"
    );
    assert!(ep.contains("VERIFICATION.md") && vw.contains("VERIFICATION.md"), "verification report shared");
    assert!(vw.contains("-UAT.md"), "verify-work records UAT.md");
    assert!(pp.contains("/msd:execute-phase") && ep.contains("/msd:verify-work"), "each step routes to the next");
    // No planning file outside the documented set is invented anywhere.
    let allowed = [
        "PROJECT.md",
        "REQUIREMENTS.md",
        "ROADMAP.md",
        "STATE.md",
        "config.json",
        "research",
        "codebase",
        "phases",
        "todos",
        "debug",
        "quick",
        "milestones",
        "MILESTONES.md",
        "INTEGRATION-CHECK.md",
        "notes",
        "BACKLOG.md",
        "spikes",
        "LEARNINGS.md",
        "WORKSTREAMS.md",
    ];
    for (file, text) in &files {
        for p in paths_after(text, ".planning/") {
            let first = p.split('/').next().unwrap();
            assert!(allowed.contains(&first), "{file}: unknown planning path .planning/{p}");
        }
    }
}

/// Runs `msd-install check references` on `content` (the shipped runtimes).
fn check_references<'w>(w: &'w World, content: &Path) -> Ran<'w> {
    Install::in_world(w).args(["check", "references"]).content(content).run()
}

#[test]
fn content_check_references_is_green_on_the_shipped_content_and_red_on_a_planted_break() {
    let w = World::new();
    check_references(&w, &repo().join("content")).success().stdout_has("ok: ").stdout_has("install(s)");
    // A copy with one broken reference of each kind a workflow can make, planted at known lines.
    let planted = w.tmp.path().join("content");
    copy_tree(&repo().join("content"), &planted);
    let ship = planted.join("msd-core/workflows/ship.md");
    let text = std::fs::read_to_string(&ship).unwrap();
    let first = text.lines().count() + 1;
    let broken = "Read `~/.claude/msd-core/references/no-such-reference.md` first.\n\
                  `~/.claude/msd-core/bin/msd_run config-get mode --fallback x`\n\
                  Task(subagent_type=\"msd-ghost-writer\")\n\
                  Then run /msd:deploy.\n\
                  An `@file:` answer is a file: read it.\n";
    std::fs::write(&ship, format!("{text}{broken}")).unwrap();
    let mut ran = check_references(&w, &planted).code(1);
    for (offset, rule) in ["path", "helper", "agent", "command", "answers"].iter().enumerate() {
        ran = ran.stdout_has(&format!("msd-core/workflows/ship.md:{}: [{rule}]", first + offset));
    }
    ran.stdout_has("fix: ");
}

/// Issue 32 defect 2: discuss-phase chains into plan-phase (which spawns agents) without `Task`
/// among its tools. `check tools` is green on the shipped content and red on the fixture that
/// restores that command and plants an agent using a tool it lacks.
#[test]
fn content_check_tools_is_green_on_the_shipped_content_and_red_on_its_fixture() {
    let w = World::new();
    let tools = |content: &Path| Install::in_world(&w).args(["check", "tools"]).content(content).run();
    tools(&repo().join("content")).success().stdout_has("ok: ").stdout_has("have the tools they use");
    let planted = w.tmp.path().join("content");
    copy_tree(&repo().join("content"), &planted);
    for dir in ["commands", "agents"] {
        copy_tree(&crate::support::fixture("tools").join(dir), &planted.join(dir));
    }
    tools(&planted)
        .code(1)
        .stdout_has("commands/msd/discuss-phase.md:5: [tools] does not allow `Task`")
        .stdout_has("reached through discuss-phase -> plan-phase (read at msd-core/workflows/discuss-phase.md:")
        .stdout_has("agents/msd-fixture-searcher.md:4: [tools] does not have `WebSearch`")
        .stdout_has("fix: add `Task` to its allowed-tools");
    let v = Install::in_world(&w).args(["check", "tools", "--json"]).content(&planted).run().code(1).json();
    assert_eq!(v["ok"], false);
    let missing: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap().to_string(), f["tool"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        missing,
        [
            ("agents/msd-fixture-searcher.md".to_string(), "WebSearch".to_string()),
            ("commands/msd/discuss-phase.md".to_string(), "Task".to_string())
        ]
    );
}

/// Issue 33, tool names that do not exist: prose copied as it is told the model to "use Grep and
/// Glob" in runtimes with no tool of that name (Claude Code 2.1.117+, Gemini CLI, Pi...). `check
/// tools` flags a tool name some runtime's table drops or renames, used as a tool in prose, at its
/// file and line, mid-sentence or at a sentence start ("Grep the sources", which passed before);
/// verbs, code and the protocol words pass; the names come from the manifests.
#[test]
fn content_check_tools_flags_tool_names_in_prose_that_some_runtime_lacks() {
    let w = World::new();
    let planted = w.tmp.path().join("content");
    copy_tree(&repo().join("content"), &planted);
    let quick = planted.join("msd-core/workflows/quick.md");
    let text = std::fs::read_to_string(&quick).unwrap();
    let first = text.lines().count() + 1;
    let lines = [
        "Use Grep to find the callers.",                     // flagged: Grep
        "Read the plan. Write for them, in plain words.",    // verbs: no
        "Run `grep -rn Grep src/` and keep `tools: Read`.",  // code spans: no
        "Locate it with at most two Grep or Glob look-ups.", // flagged: Grep and Glob
        "Ask with AskUserQuestion; spawn with Task(...).",   // protocol words: no
        "Update STATE.md with\nEdit, in place.",             // flagged across the line break: Edit
        "Grep the sources for the caller.",                  // flagged at a sentence start: Grep
        "- Glob for *.md under the phase directory.",        // flagged at a list item's start: Glob
        "Bash: run the tests once. Edit it in place.",       // flagged: Bash; the verb Edit: no
    ];
    std::fs::write(&quick, format!("{text}{}\n", lines.join("\n"))).unwrap();
    let tools = |content: &Path, runtimes: Option<&Path>| {
        let mut i = Install::in_world(&w).args(["check", "tools", "--json"]).content(content);
        if let Some(r) = runtimes {
            i = i.arg("--runtimes").arg(r);
        }
        i.run()
    };
    let v = tools(&planted, None).code(1).json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0, "the allowed-tools rule has nothing to say: {v}");
    let got: Vec<(String, u64, String)> = v["prose"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("file"), f["line"].as_u64().unwrap(), s("tool"))
        })
        .collect();
    let at = |offset: usize| u64::try_from(first + offset).unwrap();
    let quick_md = "msd-core/workflows/quick.md".to_string();
    assert_eq!(
        got,
        [
            (quick_md.clone(), at(0), "Grep".to_string()),
            (quick_md.clone(), at(3), "Glob".to_string()),
            (quick_md.clone(), at(3), "Grep".to_string()),
            (quick_md.clone(), at(6), "Edit".to_string()),
            (quick_md.clone(), at(7), "Grep".to_string()),
            (quick_md.clone(), at(8), "Glob".to_string()),
            (quick_md.clone(), at(9), "Bash".to_string()),
        ]
    );
    // The text names the file, the line, the phrase, the runtimes that lack the tool, and the fix.
    Install::in_world(&w)
        .args(["check", "tools"])
        .content(&planted)
        .run()
        .code(1)
        .stdout_has(&format!(
            "msd-core/workflows/quick.md:{first}: [tool-name] `Grep` is named as a tool (\"Use Grep\")"
        ))
        .stdout_has("claude 2.1.117+ (Bash)")
        .stdout_has("fix: say what to do, not which tool");
    // Data, not a list in the code: with no table renaming or dropping Grep and Glob, they pass.
    let runtimes = w.tmp.path().join("runtimes");
    copy_tree(&repo().join("runtimes"), &runtimes);
    for entry in std::fs::read_dir(&runtimes).unwrap() {
        let manifest = entry.unwrap().path().join("capability.json");
        let Ok(raw) = std::fs::read_to_string(&manifest) else { continue };
        let mut m: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let drop = |table: &mut serde_json::Value| {
            let t = table.as_object_mut().unwrap();
            t.remove("Grep");
            t.remove("Glob");
            t.is_empty()
        };
        if let Some(table) = m.get_mut("tools") {
            drop(table);
        }
        if let Some(serde_json::Value::Array(ranges)) = m.get_mut("tool_versions") {
            // A range left with no entry is no range (the manifest refuses an empty one).
            ranges.retain_mut(|r| !drop(&mut r["tools"]));
        }
        std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    }
    let v = tools(&planted, Some(&runtimes)).code(1).json();
    let left: Vec<&str> = v["prose"].as_array().unwrap().iter().map(|f| f["tool"].as_str().unwrap()).collect();
    assert_eq!(left, ["Edit", "Bash"], "{v}");
}

/// Issue 32 defect 3: with VERIFICATION.md missing, ship sent the user to verify-work, which sent
/// them on to execute-phase. The route is stated once, in the continuation table, and every
/// workflow that meets the state points at that row instead of naming a command of its own.
#[test]
fn content_a_missing_verification_has_one_route() {
    let files = texts(content());
    let table = &files["msd-core/references/continuation-format.md"];
    let row: Vec<&str> =
        table.lines().filter(|l| l.starts_with("| all plans executed, no `<NN>-VERIFICATION.md`")).collect();
    assert_eq!(row.len(), 1, "one row states the route");
    assert!(row[0].contains("`/msd:execute-phase N`"), "execute-phase runs the verifier: {}", row[0]);
    for wf in ["ship", "verify-work", "progress"] {
        let text = &files[&format!("msd-core/workflows/{wf}.md")];
        assert!(text.contains("\"no VERIFICATION.md\" row"), "{wf} points at the row");
        // No paragraph about a missing verification names a command of its own.
        for para in text.split("\n\n").filter(|p| p.contains("no VERIFICATION.md") || p.contains("Missing while")) {
            for item in para.split(". ") {
                let missing = item.contains("Missing while") || item.contains("missing one");
                assert!(
                    !(missing && (item.contains("/msd:verify-work") || item.contains("/msd:execute-phase"))),
                    "{wf} restates the route: {item}"
                );
            }
        }
    }
}

/// Issue 32 defect 7: new-project asked about research in its preferences and again before the
/// research step. One question decides it: the preference row, which the research step reads.
#[test]
fn content_new_project_asks_about_research_once() {
    let files = texts(content());
    let asks: Vec<String> = files
        .iter()
        .filter(|(p, _)| {
            p.as_str() == "msd-core/workflows/new-project.md" || p.starts_with("msd-core/workflows/new-project/")
        })
        .flat_map(|(p, t)| {
            t.lines()
                .enumerate()
                .filter(|(_, l)| l.starts_with("| Research |") || l.contains("header \"Research\")"))
                .map(move |(i, l)| format!("{p}:{}: {l}", i + 1))
        })
        .collect();
    assert_eq!(asks.len(), 1, "one research question: {asks:#?}");
}

/// Issue 32 defect 7: plan-phase's steps files point into the spine by "item N of step M"; each
/// such pointer names an item that exists, and the gap-closure file starts where its section is.
#[test]
fn content_plan_phase_item_pointers_name_existing_items() {
    let files = texts(content());
    let spine = &files["msd-core/workflows/plan-phase.md"];
    // Step number -> its top-level numbered items.
    let mut items: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut step = 0;
    for l in spine.lines() {
        if let Some(rest) = l.strip_prefix("**Step ") {
            // `Step 7b.` is a step of its own: its items are not step 7's.
            step = rest.split('.').next().unwrap().parse().unwrap_or(u32::MAX);
        } else if let Some((n, _)) = l.split_once(". ")
            && let Ok(n) = n.parse::<u32>()
        {
            items.entry(step).or_default().insert(n);
        }
    }
    let num = |s: &str| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u32>().ok();
    let mut bad = Vec::new();
    for (p, t) in files.iter().filter(|(p, _)| p.starts_with("msd-core/workflows/plan-phase")) {
        let flat = t.replace('\n', " ");
        for (at, _) in flat.match_indices("item ") {
            let rest = &flat[at + 5..];
            let Some(item) = num(rest) else { continue };
            let after = rest.trim_start_matches(char::is_numeric);
            let Some(step) = after.strip_prefix(" of step ").and_then(num) else { continue };
            if !items.get(&step).is_some_and(|s| s.contains(&item)) {
                bad.push(format!("{p}: item {item} of step {step}"));
            }
        }
    }
    assert!(bad.is_empty(), "pointers to items that do not exist: {bad:?}");
    let gap = &files["msd-core/workflows/plan-phase/steps/plan-gap-closure.md"];
    assert!(!gap.contains("it replaces steps 4-6"), "the file's own item 5 runs parts of steps 4-6");
    let step2 = &spine[spine.find("**Step 2.").unwrap()..spine.find("**Step 3.").unwrap()];
    assert!(step2.contains("6. **Gap closure.**") && step2.contains("id=\"plan-gap-closure\""));
}

/// Issue 32 defect 6: no agent or workflow mentioned the project's instruction file, so the
/// planner, checker and executor never saw the project's rules. They read it, the planner cites
/// it and the checker judges by it; and each runtime gets its own file's name.
#[test]
fn content_project_rules_reach_the_planner_checker_and_executor() {
    let files = texts(content());
    let rules = "~/.claude/msd-core/references/project-rules.md";
    assert!(files.contains_key("msd-core/references/project-rules.md"));
    for agent in ["msd-planner", "msd-plan-checker", "msd-executor"] {
        for text in [&files[&format!("agents/{agent}.md")], &files[&format!("msd-core/agents/{agent}.compact.md")]] {
            assert!(text.contains("`CLAUDE.md`") && text.contains(rules), "{agent} reads the project's rules");
        }
    }
    assert!(files["agents/msd-planner.md"].contains("cites it in its `<action>`"), "the planner's plans cite a rule");
    assert!(files["agents/msd-plan-checker.md"].contains("**11. project_rules.**"), "the checker's verdicts cite it");
    let plan_phase = &files["msd-core/workflows/plan-phase.md"];
    assert!(plan_phase.contains("| project rules | `CLAUDE.md`"), "plan-phase hands it to the planner");
    assert!(files["msd-core/workflows/execute-phase.md"].contains("- project rules: CLAUDE.md"));
    // Installed for a runtime whose instruction file has another name, the agents name that one.
    let ran = Install::new().runtime("codex").run().success();
    let tree = crate::support::tree(&ran.world.home);
    let planner = tree.iter().find(|(p, _)| p.ends_with("msd-core/agents/msd-planner.md")).expect("installed planner");
    let text = String::from_utf8_lossy(planner.1);
    assert!(text.contains("`AGENTS.md`") && !text.contains("CLAUDE.md"), "codex's planner reads AGENTS.md");
}

/// Issue 32 section 2: the checker names at least twelve dimensions (full and compact alike),
/// among them a dropped or shrunk user decision, the threat model and the pattern map; plans
/// carry a threat model; plan-phase maps patterns before planning and ui-phase checks its spec.
#[test]
fn content_planner_and_checker_catch_what_plans_miss() {
    let files = texts(content());
    let names = |text: &str, full: bool| -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                let rest = if full {
                    l.strip_prefix("**")?
                } else {
                    l.split_once(". **").filter(|(n, _)| n.parse::<u32>().is_ok())?.1
                };
                let rest = if full { rest.split_once(". ")?.1 } else { rest };
                let name = rest.split(['.', '*']).next()?;
                (!name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')).then(|| name.to_string())
            })
            .collect()
    };
    let full = names(&files["agents/msd-plan-checker.md"], true);
    let compact = names(&files["msd-core/agents/msd-plan-checker.compact.md"], false);
    assert!(full.len() >= 12, "at least twelve named dimensions: {full:?}");
    assert_eq!(full, compact, "the compact variant checks the same dimensions");
    for d in ["decision_fidelity", "threat_model", "patterns", "project_rules", "data_contracts", "research_resolution"]
    {
        assert!(full.iter().any(|n| n == d), "dimension {d}: {full:?}");
    }
    assert!(files["msd-core/templates/PLAN.md"].contains("<threat_model>"));
    assert!(files["agents/msd-planner.md"].contains("**Never shrink a decision quietly.**"));
    let plan_phase = &files["msd-core/workflows/plan-phase.md"];
    let (mapper, planner) = (
        plan_phase.find("subagent_type=\"msd-pattern-mapper\"").unwrap(),
        plan_phase.find("subagent_type=\"msd-planner\"").unwrap(),
    );
    assert!(mapper < planner, "patterns are mapped before the planner runs");
    assert!(files["msd-core/workflows/ui-phase.md"].contains("subagent_type=\"msd-ui-checker\""));
}

/// Issue 32 section 2: each new command has a workflow that starts with its own init call, a
/// line in help, and the counts follow (at least 60 commands and 28 agents, every agent with a
/// compact variant and a tier).
#[test]
fn content_new_commands_are_complete_and_the_counts_follow() {
    let c = content();
    let files = texts(c);
    let help = &files["msd-core/workflows/help.md"];
    for stem in ["pr-branch", "audit-uat", "sketch", "forensics", "onboard"] {
        let wf = &files[&format!("msd-core/workflows/{stem}.md")];
        assert!(wf.contains(&format!("msd_run query init.{stem} $ARGUMENTS")), "{stem} starts with its init call");
        assert!(
            wf.contains("<success_criteria>") && wf.contains("<!-- msd:protected"),
            "{stem} has criteria and guardrails"
        );
        assert!(help.contains(&format!("| `/msd:{stem}")), "help lists {stem}");
    }
    assert!(c.commands.len() >= 60, "{} commands", c.commands.len());
    let agents: Vec<&String> = files.keys().filter(|k| k.starts_with("agents/")).collect();
    assert!(agents.len() >= 28, "{} agents", agents.len());
    let tiers = &files["tiers.json"];
    for a in agents {
        let name = a.trim_start_matches("agents/").trim_end_matches(".md");
        assert!(files.contains_key(&format!("msd-core/agents/{name}.compact.md")), "{name} has a compact variant");
        assert!(tiers.contains(&format!("\"{name}\"")), "{name} has a tier");
    }
    assert!(files["msd-core/workflows/progress.md"].contains("`/msd:audit-uat` when a phase before the current one"));
}

/// What a `<...>` or shell placeholder of a helper call stands for in the scratch project.
fn fill(word: &str) -> Option<&'static str> {
    Some(match word.trim_matches('"') {
        "<phase>" => "3",
        "<key>" | "$k" => "mode",
        "<PLAN.md>" | "<plan path>" => ".planning/phases/03-authentication/03-01-PLAN.md",
        "<id>" | "<task id>" => "03-01-T1",
        // What the shell substitutes: the installer's `--version` line.
        "$(msd-install --version)" => "msd-install 0.2.0 (972d2df 2026-12-01)",
        _ => return None,
    })
}

/// A scratch project every shipped helper call can run in: the planning files, phase 3 with two
/// plans, and the review inputs the prompt-budget examples name.
fn scratch_project(root: &Path) {
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(".planning/PROJECT.md", "# Project\n\nA scratch project.\n");
    write(".planning/REQUIREMENTS.md", "# Requirements\n\n- AUTH-01: sign in\n");
    write(
        ".planning/ROADMAP.md",
        "# Roadmap\n\n## Phase Details\n\n### Phase 1: Setup\n**Goal:** a\n\n### Phase 2: Data\n**Goal:** b\n\n\
         ### Phase 3: Authentication\n**Goal:** c\n\n### Phase 4: Billing\n**Goal:** d\n\n## Progress\n",
    );
    write(".planning/STATE.md", "# State\n\n## Current Position\n\nPhase 3.\n");
    let plan = "---\nphase: 03\nplan: 01\n---\n<task id=\"03-01-T1\" type=\"auto\">\n<name>Sign in</name>\n\
                <action>Add the form.</action>\n</task>\n";
    let dir = ".planning/phases/03-authentication";
    write(&format!("{dir}/03-01-PLAN.md"), plan);
    write(&format!("{dir}/03-02-PLAN.md"), &plan.replace("01", "02"));
    write(&format!("{dir}/03-CONTEXT.md"), "# Context\n");
    write(&format!("{dir}/03-RESEARCH.md"), "# Research\n");
    for f in ["review-work/instructions.md", "review-work/batch-1-instructions.md"] {
        write(&format!("{dir}/{f}"), "Review the plans.\n");
    }
}

/// Installs the shipped content for `runtime`, extracts every helper call of every installed
/// text file, and runs each in a scratch project with the helper the install put there. None
/// may fail with a usage error (an unknown subcommand, flag, key, agent or workflow: exit 2) or
/// a damaged-install error (3); each exits with a code its subcommand documents.
fn every_installed_call_runs(runtime: &str, local: bool) {
    let mut install = Install::new().runtime(runtime);
    if local {
        install = install.local();
    }
    let ran = install.run().success();
    let w = &ran.world;
    // The install's runtime directory: where its helper landed (under the project when local).
    let base = if local { &w.project } else { &w.home };
    let found: Vec<String> = crate::support::tree(base)
        .into_keys()
        .filter_map(|k| k.strip_suffix("/msd-core/bin/msd_run").map(str::to_string))
        .collect();
    assert_eq!(found.len(), 1, "one helper expected under {}: {found:?}", base.display());
    let root = base.join(&found[0]);
    // How the installed text names the helper: by its absolute path (Claude's local installs too:
    // its manifest's `local.refs` is `absolute`).
    let helper = root.join("msd-core/bin/msd_run").display().to_string();
    scratch_project(&w.project);
    // A planted call the helper does not know proves the runner goes red: it must be the one
    // failure reported.
    let planted = root.join("msd-core/references/zz-planted.md");
    std::fs::write(&planted, format!("Run `{helper} config-get mode --no-such-flag`.\n")).unwrap();
    let config = w.project.join(".planning/config.json");
    let mut calls = BTreeMap::new();
    for (rel, bytes) in crate::support::tree(&root) {
        // The installed text: commands, skills, agents, workflows, references (Markdown or TOML);
        // settings files register hooks, not calls a workflow makes.
        let Ok(text) = String::from_utf8(bytes) else { continue };
        if !(rel.ends_with(".md") || rel.ends_with(".toml")) {
            continue;
        }
        for inv in msd_install::dev::references::invocations(&text, &helper) {
            let is_init = inv.words.get(1).is_some_and(|(w, _)| w.starts_with("init."));
            let mut argv = Vec::new();
            for (word, placeholder) in &inv.words {
                // A workflow's own arguments (`$ARGUMENTS`, Gemini's `{{args}}`) may be empty.
                if is_init && (*placeholder || word == "{{args}}") {
                    continue;
                }
                // A value placeholder takes a value its key allows.
                let value = match (word.as_str(), argv.get(1).map(String::as_str)) {
                    ("<value>" | "<default>", Some("model_profile")) => Some("balanced"),
                    ("<value>" | "<default>", Some("mode")) => Some("interactive"),
                    _ => fill(word),
                };
                match (placeholder, value) {
                    (false, _) => argv.push(word.clone()),
                    (true, Some(v)) => argv.push(v.to_string()),
                    (true, None) => panic!("{rel}:{}: no value for the placeholder `{word}`", inv.line),
                }
            }
            calls.entry(argv).or_insert_with(|| format!("{rel}:{}", inv.line));
        }
    }
    assert!(calls.len() >= 80, "only {} distinct helper calls found in the {runtime} install", calls.len());
    let mut failures = Vec::new();
    for (argv, at) in &calls {
        std::fs::write(&config, "{\"mode\": \"interactive\"}\n").unwrap();
        let mut cmd = std::process::Command::new(root.join("msd-core/bin/msd_run"));
        w.isolate(&mut cmd);
        let out = cmd.args(argv).output().unwrap();
        let code = out.status.code();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Prose that names a subcommand (`msd_run task resolve-content` exits non-zero...) is a
        // mention, not a call: two bare words the helper answers with "arguments missing".
        if argv.len() <= 2
            && argv.iter().all(|a| !a.starts_with('-'))
            && stderr.contains("required arguments were not provided")
        {
            continue;
        }
        // config-get without --default may answer "unset" (1); every other call answers.
        let allowed: &[i32] = if argv.first().map(String::as_str) == Some("config-get") { &[0, 1] } else { &[0] };
        if !code.is_some_and(|c| allowed.contains(&c)) || stderr.contains("unexpected argument") {
            failures.push(format!("{at}: msd_run {} -> exit {code:?}\n  {}", argv.join(" "), stderr.trim()));
        }
    }
    let planted_failure = |f: &String| {
        f.starts_with("msd-core/references/zz-planted.md:1: msd_run config-get mode --no-such-flag -> exit Some(2)")
    };
    assert!(failures.iter().any(planted_failure), "the planted bad call was not reported: {failures:#?}");
    failures.retain(|f| !planted_failure(f));
    assert!(
        failures.is_empty(),
        "{runtime}: {} of {} helper calls fail:\n{}",
        failures.len(),
        calls.len(),
        failures.join("\n")
    );
}

#[test]
fn content_spawn_every_helper_call_of_the_claude_install_runs() {
    every_installed_call_runs("claude", true);
}

#[test]
fn content_spawn_every_helper_call_of_the_gemini_install_runs() {
    every_installed_call_runs("gemini", false);
}

#[test]
fn content_every_agent_has_a_model_profile_row() {
    // The orchestrator picks each spawn's tier from this table: an agent without a row gets none.
    let c = content();
    let files = texts(c);
    let table = &files["msd-core/references/model-profiles.md"];
    let missing: Vec<String> = files
        .keys()
        .filter_map(|k| k.strip_prefix("agents/")?.strip_suffix(".md"))
        .filter(|a| !table.lines().any(|l| l.starts_with(&format!("| {a} |"))))
        .map(str::to_string)
        .collect();
    assert!(missing.is_empty(), "model-profiles.md has no row for {missing:?}");
}

/// An agent's `color` must be one the runtimes that read it accept: Qwen Code 0.24.4 warns and
/// drops any other (`COLOR_VALUES`, @qwen-code/qwen-code@0.24.4:chunks/chunk-DPEB6S2R.js:125656,
/// the warning at :127114), and the acceptance tier fails on that warning. `msd-ui-checker`
/// shipped `magenta`.
#[test]
fn content_every_agent_color_is_one_qwen_code_accepts() {
    const COLORS: [&str; 9] = ["red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan", "auto"];
    let mut bad = Vec::new();
    for (path, text) in texts(content()) {
        if !path.starts_with("agents/") {
            continue;
        }
        for line in text.lines().take_while(|l| !l.is_empty()).filter_map(|l| l.strip_prefix("color:")) {
            if !COLORS.contains(&line.trim()) {
                bad.push(format!("{path}: color {}", line.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "agent colors Qwen Code drops: {bad:?}");
}

/// The content's files are parsed in two halves at once (issue 37): with a broken file in each,
/// the error reported is still the one first in the tree's order, and once it is mended the
/// other is.
#[test]
fn content_reports_the_first_broken_file_in_tree_order() {
    let w = World::new();
    let c = w.tmp.path().join("content");
    copy_tree(&repo().join("content"), &c);
    let mut files: Vec<String> = Vec::new();
    for dir in ["agents", "msd-core/workflows"] {
        for e in std::fs::read_dir(c.join(dir)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    let (first, last) = (files.first().unwrap().clone(), files.last().unwrap().clone());
    assert!(first.starts_with("agents/") && last.starts_with("msd-core/"), "{first} {last}");
    let agent = std::fs::read_to_string(c.join(&first)).unwrap();
    let body = agent.splitn(3, "---").nth(2).expect("an agent has frontmatter");
    std::fs::write(c.join(&first), body).unwrap();
    let workflow = std::fs::read_to_string(c.join(&last)).unwrap();
    std::fs::write(c.join(&last), format!("{workflow}\n<!-- msd:sectoin id=\"x\" -->\n")).unwrap();
    for _ in 0..3 {
        let ran = Install::in_world(&w).content(&c).arg("--all").run().code(3).stderr_has(&first);
        assert!(!ran.stderr().contains(&last), "the first broken file only: {}", ran.stderr());
    }
    std::fs::write(c.join(&first), agent).unwrap();
    Install::in_world(&w).content(&c).arg("--all").run().code(3).stderr_has(&last).stderr_has("unknown_marker");
}
