//! One failing fixture per rule, and the clean fixture green.

use super::*;

const SCHEMA: &str = r#"{"keys": [
  {"key": "mode", "type": "enum", "values": ["interactive", "yolo"], "default": "interactive", "meaning": "m"},
  {"key": "commit_docs", "type": "bool", "default": true, "meaning": "c"},
  {"key": "agent_skills.<agent>", "type": "paths", "meaning": "s"}
]}"#;

const PROFILES: &str = r#"{
  "profiles": [
    {"name": "core", "extends": null, "commands": ["plan"]},
    {"name": "full", "extends": "core", "commands": ["ship"]}
  ],
  "requires": {}
}"#;

/// A clean content tree: two commands, their workflows, one agent, the schema.
fn clean() -> Inputs {
    let mut files = BTreeMap::new();
    let mut add = |p: &str, t: &str| {
        files.insert(p.to_string(), t.to_string());
    };
    add("commands/msd/plan.md", "Run @~/.claude/msd-core/workflows/plan.md\n");
    add("commands/msd/ship.md", "Run @~/.claude/msd-core/workflows/ship.md\n");
    add("agents/msd-planner.md", "# planner\n");
    add("msd-core/templates/config-keys.json", SCHEMA);
    add(
        "msd-core/workflows/plan.md",
        "```bash\n~/.claude/msd-core/bin/msd_run query init.plan $ARGUMENTS\n\
         ~/.claude/msd-core/bin/msd_run config-get commit_docs --default true\n\
         V=$(~/.claude/msd-core/bin/msd_run config-get mode --default interactive 2>/dev/null)\n\
         ~/.claude/msd-core/bin/msd_run config-set <key> <value>\n```\n\
         Run `~/.claude/msd-core/bin/msd_run query agent-skills msd-planner` and\n\
         Task(subagent_type=\"msd-planner\")\n\
         Read `~/.claude/msd-core/references/spawning.md` and `~/.claude/msd-core/references/helper-answers.md`, then /msd:ship.\n\
         <!-- msd:section id=\"a\" when=\"always\" -->\nx\n<!-- /msd:section -->\n",
    );
    add(
        "msd-core/workflows/ship.md",
        "```bash\n~/.claude/msd-core/bin/msd_run query prompt-budget --budget 100 \\\n  --instructions-file a \\\n  --roadmap-file b --output-prompt c --output-metadata d\n```\nNext: /msd:plan (answers: `~/.claude/msd-core/references/helper-answers.md`)\n",
    );
    add("msd-core/references/spawning.md", "spawn\n");
    add("msd-core/references/helper-answers.md", "An answer of one line `@file:<path>` is that file.\n");
    let core: BTreeSet<String> = files
        .keys()
        .filter_map(|p| p.strip_prefix("msd-core/"))
        .map(str::to_string)
        .chain(["bin/msd_run".to_string()])
        .collect();
    let installed = [("claude-global".to_string(), core.clone()), ("gemini-global".to_string(), core)].into();
    Inputs { files, installed, profiles: Some(("docs/profiles.json".into(), PROFILES.into())) }
}

fn with(edit: impl FnOnce(&mut Inputs)) -> Vec<Finding> {
    let mut i = clean();
    edit(&mut i);
    check(&i)
}

fn append(i: &mut Inputs, file: &str, text: &str) {
    i.files.get_mut(file).unwrap().push_str(text);
}

/// The one finding, as (file, line, rule).
fn only(f: &[Finding]) -> (&str, usize, Rule) {
    assert_eq!(f.len(), 1, "{f:#?}");
    (f[0].file.as_str(), f[0].line, f[0].rule)
}

#[test]
fn references_clean_fixture_is_green() {
    assert_eq!(check(&clean()), Vec::<Finding>::new());
}

#[test]
fn references_helper_call_that_does_not_parse_is_red() {
    // A flag msd_run does not have, a missing value, an unknown workflow.
    let f = with(|i| {
        append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run config-get mode --fallback x`\n")
    });
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 7, Rule::Helper));
    assert!(f[0].message.contains("--fallback"), "{}", f[0]);
    let f = with(|i| append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run query init.nope`\n"));
    assert_eq!(only(&f).2, Rule::Helper);
    assert!(f[0].message.contains("no workflow `nope`"), "{}", f[0]);
    // A continuation line that breaks the call is caught through the `\` join.
    let f = with(|i| {
        let t = i.files.get_mut("msd-core/workflows/ship.md").unwrap();
        *t = t.replace("--output-metadata d", "--output-metadata");
    });
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 2, Rule::Helper));
}

#[test]
fn references_missing_core_path_is_red_per_runtime() {
    let f = with(|i| {
        i.installed.get_mut("gemini-global").unwrap().remove("references/spawning.md");
    });
    assert_eq!(only(&f), ("msd-core/workflows/plan.md", 9, Rule::Path));
    assert!(f[0].message.contains("gemini-global") && !f[0].message.contains("claude-global"), "{}", f[0]);
}

#[test]
fn references_unknown_spawned_agent_is_red() {
    let f = with(|i| append(i, "msd-core/workflows/ship.md", "Task(subagent_type=\"msd-shipper\")\n"));
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 7, Rule::Agent));
    let f = with(|i| {
        append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run query agent-skills msd-nobody`\n")
    });
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 7, Rule::Agent));
}

#[test]
fn references_unknown_next_command_is_red() {
    let f = with(|i| append(i, "commands/msd/ship.md", "Next: /msd:deploy\n"));
    assert_eq!(only(&f), ("commands/msd/ship.md", 2, Rule::Command));
    assert!(f[0].fix.contains("plan, ship"), "{}", f[0]);
}

#[test]
fn references_unknown_config_key_or_value_is_red() {
    let f = with(|i| {
        append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run config-get workflow.nope`\n")
    });
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 7, Rule::ConfigKey));
    let f =
        with(|i| append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run config-set mode fast`\n"));
    assert_eq!(only(&f).2, Rule::ConfigKey);
    let f = with(|i| {
        append(i, "msd-core/workflows/ship.md", "`~/.claude/msd-core/bin/msd_run config-set agent_skills.msd-x '[]'`\n")
    });
    assert_eq!(only(&f).2, Rule::ConfigKey);
}

#[test]
fn references_profile_that_is_not_closed_is_red() {
    // core's plan reads ship's workflow, but ship is only in full.
    let f = with(|i| append(i, "msd-core/workflows/plan.md", "Then follow ~/.claude/msd-core/workflows/ship.md\n"));
    assert_eq!(only(&f), ("docs/profiles.json", 3, Rule::Profile));
    assert!(f[0].message.contains("`plan` reads the workflow of `ship`"), "{}", f[0]);
    assert!(f[0].fix.contains("requires.plan"), "{}", f[0]);
    // Declaring the requirement closes it.
    let f = with(|i| {
        append(i, "msd-core/workflows/plan.md", "Then follow ~/.claude/msd-core/workflows/ship.md\n");
        i.profiles.as_mut().unwrap().1 = PROFILES.replace("\"requires\": {}", "\"requires\": {\"plan\": [\"ship\"]}");
    });
    assert_eq!(f, Vec::<Finding>::new());
    // A command in no profile, and a profile naming a command that does not exist.
    let f = with(|i| {
        i.files.insert("commands/msd/undo.md".into(), "x\n".into());
        i.profiles.as_mut().unwrap().1 = PROFILES.replace("[\"ship\"]", "[\"ship\", \"deploy\"]");
    });
    assert_eq!(f.len(), 2, "{f:#?}");
    assert!(f.iter().all(|x| x.rule == Rule::Profile));
}

#[test]
fn references_spill_form_explained_twice_or_not_pointed_at_is_red() {
    // A second explanation of the `@file:` form, outside its one reference.
    let f = with(|i| append(i, "msd-core/references/spawning.md", "An `@file:` answer: read the file.\n"));
    assert_eq!(only(&f), ("msd-core/references/spawning.md", 2, Rule::Answers));
    assert!(f[0].fix.contains("references/helper-answers.md"), "{}", f[0]);
    // A line that points at the reference may name the form.
    let f = with(|i| {
        append(i, "msd-core/references/spawning.md", "Read an `@file:` answer\nas references/helper-answers.md says.\n")
    });
    assert_eq!(f, Vec::<Finding>::new());
    // A workflow spine that calls the helper without naming the reference, at its first call.
    let f = with(|i| {
        let t = i.files["msd-core/workflows/ship.md"]
            .replace(" (answers: `~/.claude/msd-core/references/helper-answers.md`)", "");
        i.files.insert("msd-core/workflows/ship.md".into(), t);
    });
    assert_eq!(only(&f), ("msd-core/workflows/ship.md", 2, Rule::Answers));
    // A steps file is read under its spine: it needs no pointer of its own.
    let f = with(|i| {
        i.files.insert(
            "msd-core/workflows/plan/steps/a.md".into(),
            "`~/.claude/msd-core/bin/msd_run config-get mode --default yolo`\n".into(),
        );
    });
    assert_eq!(f, Vec::<Finding>::new());
}
