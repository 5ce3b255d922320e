//! `msd_run query init.<workflow>`: the paths, flags, facts and section selection of SPEC
//! section 9, over combinations of flags and `.planning/` state, against the `seams` fixture's
//! core tree (and, last, an installed msd_run).

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::support::{Install, Ran, World, fixture, json};

fn core() -> PathBuf {
    fixture("seams").join("msd-core")
}

fn helper(w: &World) -> Install<'_> {
    Install::in_world(w).helper()
}

fn init<'w>(w: &'w World, workflow: &str, args: &[&str]) -> Ran<'w> {
    helper(w).arg("--core").arg(core()).args(["query", &format!("init.{workflow}")]).args(args).run()
}

fn ok(w: &World, workflow: &str, args: &[&str]) -> Value {
    init(w, workflow, args).success().json()
}

fn list(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn included(v: &Value) -> Vec<String> {
    list(&v["section_manifest"]["included"])
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const ROADMAP: &str = "# Roadmap\n\n## Phase Details\n\n### Phase 2: Setup\n**Goal:** a\n\n### Phase 3: Auth Flow\n**Goal:** b\n\n### Phase 4: Billing\n**Goal:** c\n\n### Phase 4.1: Billing gap closure (INSERTED)\n**Goal:** d\n\n## Progress\n";

fn project(w: &World) {
    write(&w.project, ".planning/ROADMAP.md", ROADMAP);
    write(&w.project, ".planning/STATE.md", "# State\n");
}

#[test]
fn init_plan_phase_prd_research_gives_paths_flags_and_sections() {
    let w = World::new();
    project(&w);
    write(&w.project, ".planning/phases/03-auth-flow/03-CONTEXT.md", "# ctx\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-02-PLAN.md", "plan\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-01-PLAN.md", "plan\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-01-SUMMARY.md", "sum\n");
    let v = ok(&w, "plan-phase", &["03", "--prd", "docs/prd.md", "--research"]);
    assert_eq!(v["workflow"], "plan-phase");
    assert_eq!(
        v["phase"],
        serde_json::json!({"number": "3", "padded": "03", "name": "Auth Flow", "slug": "auth-flow",
                           "dir": ".planning/phases/03-auth-flow", "is_gap_closure": false})
    );
    assert_eq!(list(&v["flags"]), ["--prd", "--research"]);
    assert_eq!(v["args"], serde_json::json!({"phase": "3", "prd": "docs/prd.md", "wave": null}));
    assert_eq!(v["paths"]["context"], ".planning/phases/03-auth-flow/03-CONTEXT.md");
    assert_eq!(
        list(&v["paths"]["plans"]),
        [".planning/phases/03-auth-flow/03-01-PLAN.md", ".planning/phases/03-auth-flow/03-02-PLAN.md"]
    );
    assert_eq!(list(&v["paths"]["summaries"]), [".planning/phases/03-auth-flow/03-01-SUMMARY.md"]);
    assert_eq!(v["exists"]["context"], true);
    assert_eq!(v["exists"]["phase_research"], false);
    assert_eq!(v["exists"]["roadmap"], true);
    assert_eq!(v["exists"]["project"], false);
    assert_eq!(v["config"]["workflow"]["research"], true, "template defaults fill the config");
    let sm = &v["section_manifest"];
    assert_eq!(sm["workflow"], "plan-phase");
    assert_eq!(included(&v), ["plan-prd", "plan-research"], "document order");
    assert_eq!(
        list(&sm["excluded"]),
        [
            "plan-gap-closure",
            "plan-reviews",
            "plan-prior-phases",
            "plan-codebase-map",
            "plan-validate",
            "plan-mvp",
            "plan-chunked"
        ]
    );
    assert_eq!(
        list(&sm["read"]),
        [
            "~/.claude/msd-core/workflows/plan-phase/steps/plan-prd.md",
            "~/.claude/msd-core/workflows/plan-phase/steps/plan-research.md"
        ],
        "the fixture's core is not installed, so its paths keep their content form"
    );
}

#[test]
fn init_flag_combinations_select_exactly_their_sections() {
    let w = World::new();
    project(&w);
    let flags: [(&[&str], &str); 5] = [
        (&["--prd", "p.md"], "plan-prd"),
        (&["--research"], "plan-research"),
        (&["--reviews"], "plan-reviews"),
        (&["--validate"], "plan-validate"),
        (&["--chunked"], "plan-chunked"),
    ];
    let order = [
        "plan-gap-closure",
        "plan-reviews",
        "plan-prd",
        "plan-prior-phases",
        "plan-research",
        "plan-validate",
        "plan-chunked",
    ];
    for mask in 0u32..(1 << flags.len()) {
        let mut args: Vec<&str> = vec!["3"];
        let mut want: Vec<&str> = Vec::new();
        // Pass the flags in reverse order: selection follows the document, not the command line.
        for (i, (tokens, section)) in flags.iter().enumerate().rev() {
            if mask & (1 << i) != 0 {
                args.extend(tokens.iter());
                want.push(section);
            }
        }
        want.sort_by_key(|s| order.iter().position(|o| o == s));
        let v = ok(&w, "plan-phase", &args);
        assert_eq!(included(&v), want, "{args:?}");
        let all = included(&v).len() + list(&v["section_manifest"]["excluded"]).len();
        assert_eq!(all, 9, "an exact partition of the sections");
    }
}

#[test]
fn init_gap_closure_edge_cases() {
    let w = World::new();
    project(&w);
    let gap = |args: &[&str]| included(&ok(&w, "plan-phase", args)).contains(&"plan-gap-closure".to_string());
    assert!(gap(&["4.1"]));
    assert!(gap(&["04.1"]));
    assert!(gap(&["4.0"]), "a decimal part of 0 is still a decimal phase");
    assert!(!gap(&["4"]));
    assert!(!gap(&["04"]));
    assert!(!gap(&[]), "no phase, no gap closure");
    // A decimal phase not yet in ROADMAP.md: `phase` is null, the fact still holds (plan-phase
    // creates the entry and re-runs init).
    let v = ok(&w, "plan-phase", &["7.2"]);
    assert_eq!(v["phase"], Value::Null);
    assert_eq!(v["args"]["phase"], "7.2");
    assert!(included(&v).contains(&"plan-gap-closure".to_string()));
    let v = ok(&w, "plan-phase", &["04.1"]);
    assert_eq!(v["phase"]["number"], "4.1");
    assert_eq!(v["phase"]["padded"], "04.1");
    assert_eq!(v["phase"]["name"], "Billing gap closure", "the (INSERTED) marker is not part of the name");
    assert_eq!(v["phase"]["dir"], ".planning/phases/04.1-billing-gap-closure");
    assert_eq!(v["phase"]["is_gap_closure"], true);
    let v = ok(&w, "execute-phase", &["4.1"]);
    assert!(included(&v).contains(&"execute-gap-closure".to_string()));
    for bad in [".", "4.", ".1", "4.1.1", "four"] {
        init(&w, "plan-phase", &[bad]).code(2).stderr_has("is not a phase number");
    }
}

#[test]
fn init_state_facts_from_planning_dir_and_config() {
    let w = World::new();
    project(&w);
    let has = |args: &[&str], id: &str| included(&ok(&w, "plan-phase", args)).contains(&id.to_string());

    // Prior phases: a lower-numbered phase with a SUMMARY.
    assert!(!has(&["3"], "plan-prior-phases"));
    write(&w.project, ".planning/phases/02-setup/02-01-PLAN.md", "p\n");
    assert!(!has(&["3"], "plan-prior-phases"), "a plan without a summary is not a prior phase");
    write(&w.project, ".planning/phases/02-setup/02-01-SUMMARY.md", "s\n");
    assert!(has(&["3"], "plan-prior-phases"));
    assert!(!has(&["2"], "plan-prior-phases"), "only lower-numbered phases count");
    assert!(has(&["2.1"], "plan-prior-phases"), "2 < 2.1");

    // Needs a codebase map: source files and no .planning/codebase/.
    assert!(!has(&["3"], "plan-codebase-map"), "no source files yet");
    write(&w.project, "node_modules/x/index.js", "x\n");
    write(&w.project, ".hidden/tool.py", "x\n");
    assert!(!has(&["3"], "plan-codebase-map"), "dependency and hidden dirs are not the project's code");
    write(&w.project, "app/src/main.rs", "fn main() {}\n");
    assert!(has(&["3"], "plan-codebase-map"));
    std::fs::create_dir_all(w.project.join(".planning/codebase")).unwrap();
    let v = ok(&w, "plan-phase", &["3"]);
    assert!(!included(&v).contains(&"plan-codebase-map".to_string()));
    assert_eq!(v["exists"]["codebase_map"], true);

    // MVP mode: the phase's ROADMAP block, or the config.
    assert!(!has(&["3"], "plan-mvp"));
    write(&w.project, ".planning/ROADMAP.md", &ROADMAP.replace("**Goal:** b\n", "**Goal:** b\n**Mode:** mvp\n"));
    assert!(has(&["3"], "plan-mvp"));
    assert!(!has(&["4"], "plan-mvp"), "the mode line belongs to phase 3's block only");
    write(&w.project, ".planning/ROADMAP.md", ROADMAP);

    // Config facts count only when they are JSON true.
    let config = |workflow: &str| {
        write(&w.project, ".planning/config.json", &format!("{{\"mode\": \"yolo\", \"workflow\": {workflow}}}"));
    };
    config(r#"{"mvp_mode": "true", "plan_chunked": 1}"#);
    assert!(!has(&["3"], "plan-mvp"));
    assert!(!has(&["3"], "plan-chunked"));
    config(r#"{"mvp_mode": true, "plan_chunked": true}"#);
    let v = ok(&w, "plan-phase", &["3"]);
    assert!(included(&v).contains(&"plan-mvp".to_string()));
    assert!(included(&v).contains(&"plan-chunked".to_string()), "chunked = --chunked OR config");
    assert_eq!(v["config"]["mode"], "yolo", "the project's config overrides the template");
    assert_eq!(v["config"]["workflow"]["research"], true, "unset keys keep their defaults");
    config(r#"{"use_worktrees": true}"#);
    assert!(included(&ok(&w, "execute-phase", &["3"])).contains(&"execute-worktrees".to_string()));
    config(r#"{"use_worktrees": false}"#);
    assert!(!included(&ok(&w, "execute-phase", &["3"])).contains(&"execute-worktrees".to_string()));
}

#[test]
fn init_value_flags_follow_each_commands_hint() {
    let w = World::new();
    project(&w);
    // execute-phase: `--wave N` takes a whole number; `always` sections are always included.
    let v = ok(&w, "execute-phase", &["3", "--wave", "2", "--auto"]);
    assert_eq!(v["args"]["wave"], 2);
    assert_eq!(v["phase"]["number"], "3");
    assert_eq!(included(&v), ["execute-summary-contract", "execute-wave-filter", "execute-auto-advance"]);
    init(&w, "execute-phase", &["3", "--wave"]).code(2).stderr_has("--wave needs a whole number");
    init(&w, "execute-phase", &["3", "--wave", "two"]).code(2);
    // plan-phase: `--prd` needs its file; `--auto` is a switch, so `3` after it is the phase.
    init(&w, "plan-phase", &["3", "--prd"]).code(2).stderr_has("--prd needs a value");
    let v = ok(&w, "plan-phase", &["--auto", "3"]);
    assert_eq!(v["phase"]["number"], "3");
    // new-project: `--auto <idea-file>` takes a value there.
    let v = ok(&w, "new-project", &["--auto", "idea.md", "--ingest=docs"]);
    assert_eq!(v["args"]["auto"], "idea.md");
    assert_eq!(v["args"]["ingest"], "docs");
    assert_eq!(v["phase"], Value::Null);
    assert_eq!(included(&v), ["new-project-auto", "new-project-ingest"]);
    // debug: the phase rides on `--forensic [phase]`, taken only when it is a phase number.
    let v = ok(&w, "debug", &["--forensic", "3", "login"]);
    assert_eq!(v["phase"]["number"], "3");
    assert_eq!(included(&v), ["debug-forensic"]);
    let v = ok(&w, "debug", &["--forensic", "login", "fails"]);
    assert_eq!(v["phase"], Value::Null);
    assert_eq!(v["args"]["forensic"], Value::Null);
    assert_eq!(included(&v), ["debug-forensic"]);
    // add-phase takes a description: a leading number is not a phase.
    let v = ok(&w, "add-phase", &["3", "reports"]);
    assert_eq!(v["phase"], Value::Null);
}

#[test]
fn init_workflows_without_sections_give_null() {
    let w = World::new();
    project(&w);
    let v = ok(&w, "progress", &["3"]);
    assert_eq!(v["section_manifest"], Value::Null);
    assert_eq!(v["phase"]["name"], "Auth Flow");
    // A workflow no command runs: switches only, and a leading phase number is the phase.
    let v = ok(&w, "execute-plan", &["2", "--wave", "1"]);
    assert_eq!(v["section_manifest"], Value::Null);
    assert_eq!(v["phase"]["number"], "2");
    assert_eq!(list(&v["flags"]), ["--wave"]);
    // Without a project every phase path is null and nothing exists.
    let empty = World::new();
    let v = ok(&empty, "plan-phase", &["3"]);
    assert_eq!(v["phase"], Value::Null);
    assert_eq!(v["paths"]["context"], Value::Null);
    assert_eq!(v["exists"]["planning"], false);
    assert_eq!(list(&v["paths"]["plans"]).len(), 0);
}

/// Issue 32 defect 4: `/msd:execute-phase` without a number used to answer `phase: null` and
/// bounce to progress. The helper picks the phase work waits on, from STATE.md and ROADMAP.md.
#[test]
fn init_execute_phase_without_a_number_picks_the_current_phase() {
    let w = World::new();
    project(&w);
    // Phase 2 is done, phase 3 has one plan left, phase 4 is planned and not started.
    write(&w.project, ".planning/phases/02-setup/02-01-PLAN.md", "plan\n");
    write(&w.project, ".planning/phases/02-setup/02-01-SUMMARY.md", "sum\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-01-PLAN.md", "plan\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-01-SUMMARY.md", "sum\n");
    write(&w.project, ".planning/phases/03-auth-flow/03-02-PLAN.md", "plan\n");
    write(&w.project, ".planning/phases/04-billing/04-01-PLAN.md", "plan\n");
    // STATE.md names phase 4: it has work waiting, so it wins over the roadmap order.
    write(
        &w.project,
        ".planning/STATE.md",
        "# State\n\n## Current Position\n\nPhase: 4 of 5 (Billing)\nPlan: 0 of 1\n",
    );
    let v = ok(&w, "execute-phase", &[]);
    assert_eq!(v["phase"]["number"], "4");
    assert_eq!(v["phase"]["dir"], ".planning/phases/04-billing");
    assert_eq!(v["phase_picked_from"], "STATE.md");
    assert_eq!(v["args"]["phase"], Value::Null, "args keep what was passed");
    assert_eq!(list(&v["paths"]["plans"]), [".planning/phases/04-billing/04-01-PLAN.md"]);
    // STATE.md names a finished phase: the first phase in ROADMAP.md order with a plan left.
    write(&w.project, ".planning/STATE.md", "# State\n\n## Current Position\n\n- **Phase:** 2 of 5 (Setup)\n");
    let v = ok(&w, "execute-phase", &["--wave", "1"]);
    assert_eq!(v["phase"]["number"], "3");
    assert_eq!(v["phase"]["name"], "Auth Flow");
    assert_eq!(v["phase_picked_from"], "ROADMAP.md");
    assert_eq!(list(&v["paths"]["summaries"]), [".planning/phases/03-auth-flow/03-01-SUMMARY.md"]);
    // A number passed is the phase, picked by nobody.
    let v = ok(&w, "execute-phase", &["2"]);
    assert_eq!(v["phase"]["number"], "2");
    assert_eq!(v["phase_picked_from"], Value::Null);
    // Other workflows do not pick: plan-phase chooses in its own text.
    assert_eq!(ok(&w, "plan-phase", &[])["phase"], Value::Null);
    // Nothing waiting: null, and the workflow routes to progress.
    write(&w.project, ".planning/phases/03-auth-flow/03-02-SUMMARY.md", "sum\n");
    write(&w.project, ".planning/phases/04-billing/04-01-SUMMARY.md", "sum\n");
    let v = ok(&w, "execute-phase", &[]);
    assert_eq!(v["phase"], Value::Null);
    assert_eq!(v["phase_picked_from"], Value::Null);
}

#[test]
fn init_errors_have_distinct_exit_codes() {
    let w = World::new();
    project(&w);
    init(&w, "no-such-workflow", &[]).code(2).stderr_has("no workflow `no-such-workflow`").stderr_has("plan-phase");
    init(&w, "../plan-phase", &[]).code(2);
    helper(&w).arg("--core").arg(core()).args(["query", "nonsense"]).run().code(2);
    // The build in target/ is not an installed tree: exit 3 naming the way out.
    helper(&w).args(["query", "init.plan-phase"]).run().code(3).stderr_has("--core");
    // MSD_CORE_DIR works like --core.
    helper(&w).env("MSD_CORE_DIR", core()).args(["query", "init.progress"]).run().success();
    // A broken config is the project's problem: exit 4 with file and line.
    write(&w.project, ".planning/config.json", "{\n  \"mode\": \"yolo\",\n}\n");
    init(&w, "plan-phase", &["3"]).code(4).stderr_has(".planning/config.json:3");
    // A damaged installed manifest is the install's problem: exit 3.
    let broken = w.tmp.path().join("core");
    crate::support::copy_tree(&core(), &broken);
    std::fs::write(broken.join("workflows/section-manifest.json"), "{\"workflows\": 1}").unwrap();
    std::fs::remove_file(w.project.join(".planning/config.json")).unwrap();
    helper(&w).arg("--core").arg(&broken).args(["query", "init.plan-phase"]).run().code(3);
}

#[test]
fn init_help_documents_every_exit_code() {
    use msd_run::RunExit;
    let w = World::new();
    let mut r = helper(&w).arg("--help").run().success();
    for code in RunExit::ALL {
        r = r.stdout_has(&format!("\n{:>3}  ", code as u8));
    }
    r.stdout_has("MSD_CORE_DIR").stdout_has("MSD_RUN_SPILL_BYTES").stdout_has("@file:");
    helper(&w).args(["query", "--help"]).run().stdout_has("init.<workflow> [args...]").stdout_has("context-predicates");
}

#[test]
fn init_installed_msd_run_answers_plan_phase_prd() {
    let w = World::new();
    project(&w);
    let content = fixture("seams");
    Install::in_world(&w).runtime("claude").content(&content).run().success();
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    let out = std::process::Command::new(&helper)
        .args(["query", "init.plan-phase", "3", "--prd", "x.md"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(included(&v), ["plan-prd"]);
    assert_eq!(v["args"]["prd"], "x.md");
    // The paths it names are the installed steps files.
    let read = list(&v["section_manifest"]["read"]);
    assert_eq!(read, [w.home.join(".claude/msd-core/workflows/plan-phase/steps/plan-prd.md").display().to_string()]);
    assert!(Path::new(&read[0]).is_file());
}

#[test]
fn init_installed_real_content_answers_plan_phase_prd() {
    // The shipped content, installed for Claude Code into a temporary HOME.
    let w = World::new();
    project(&w);
    Install::in_world(&w).runtime("claude").run().success();
    let helper = w.home.join(".claude/msd-core/bin/msd_run");
    let out = std::process::Command::new(&helper)
        .args(["query", "init.plan-phase", "3", "--prd", "docs/prd.md"])
        .current_dir(&w.project)
        .env_remove("MSD_CORE_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    let inc = included(&v);
    assert!(inc.contains(&"plan-prd".to_string()), "{inc:?}");
    let excluded = list(&v["section_manifest"]["excluded"]);
    for flagged in ["plan-research", "plan-reviews", "plan-validate", "plan-gap-closure", "plan-chunked"] {
        assert!(excluded.contains(&flagged.to_string()), "{flagged} is not asked for: {excluded:?}");
    }
    assert_eq!(v["args"]["prd"], "docs/prd.md");
    assert_eq!(v["phase"]["dir"], ".planning/phases/03-auth-flow");
    for read in list(&v["section_manifest"]["read"]) {
        assert!(read.starts_with(&w.home.join(".claude/msd-core/").display().to_string()), "{read}");
        assert!(Path::new(&read).is_file(), "{read}");
    }
}
