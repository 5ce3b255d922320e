//! `msd_run query prompt-budget`: flags, outputs and exit codes through the real binary. Its
//! codes are the helper's (2 usage, 5 a file, 10 no fit), not the reference's 1 and 2.
//! The arithmetic is characterised in `src/budget/tests.rs`; these cases pin the CLI contract.

use std::path::{Path, PathBuf};

use crate::support::{Install, Ran, World};

struct Files {
    dir: PathBuf,
}

impl Files {
    fn new(w: &World) -> Files {
        let dir = w.tmp.path().join("review");
        std::fs::create_dir_all(dir.join("plans/03")).unwrap();
        std::fs::write(dir.join("instructions.md"), "i".repeat(40)).unwrap();
        std::fs::write(dir.join("ROADMAP.md"), "r".repeat(40)).unwrap();
        std::fs::write(dir.join("plans/03/03-01-PLAN.md"), "p".repeat(40)).unwrap();
        Files { dir }
    }

    fn p(&self, rel: &str) -> String {
        self.dir.join(rel).display().to_string()
    }

    /// The required flags, with `budget`.
    fn args(&self, budget: &str) -> Vec<String> {
        vec![
            "query".into(),
            "prompt-budget".into(),
            "--budget".into(),
            budget.into(),
            "--instructions-file".into(),
            self.p("instructions.md"),
            "--roadmap-file".into(),
            self.p("ROADMAP.md"),
            "--plan-file".into(),
            self.p("plans/03/03-01-PLAN.md"),
            "--output-prompt".into(),
            self.p("out/prompt.md"),
            "--output-metadata".into(),
            self.p("out/meta.json"),
        ]
    }

    fn prompt(&self) -> String {
        std::fs::read_to_string(self.dir.join("out/prompt.md")).unwrap()
    }

    fn meta_text(&self) -> String {
        std::fs::read_to_string(self.dir.join("out/meta.json")).unwrap()
    }

    fn meta(&self) -> serde_json::Value {
        serde_json::from_str(&self.meta_text()).unwrap()
    }
}

fn run<'w>(w: &'w World, args: &[String]) -> Ran<'w> {
    Install::in_world(w).helper().args(args).run()
}

#[test]
fn prompt_budget_writes_prompt_and_exact_metadata() {
    let w = World::new();
    let f = Files::new(&w);
    // Budget 100, margin 10: effective 90; total 41, no pressure; the heading is the basename.
    // Prompt 40 + 2 + 52 + 2 + (10 + 19 + 40) = 165 chars = 42 tokens.
    run(&w, &f.args("100")).code(0);
    assert_eq!(
        f.prompt(),
        format!(
            "{}\n\n## Roadmap\n\n{}\n\n## Plans\n\n### 03-01-PLAN.md\n\n{}",
            "i".repeat(40),
            "r".repeat(40),
            "p".repeat(40)
        )
    );
    assert_eq!(
        f.meta_text(),
        "{\n  \"budget\": 100,\n  \"effectiveBudget\": 90,\n  \"estimatedTokens\": 42,\n  \"omitted\": [],\n  \"projectMdShrunk\": false,\n  \"planTruncationPct\": 0,\n  \"hardFailed\": false,\n  \"noteInjected\": false\n}"
    );
}

#[test]
fn prompt_budget_hard_fail_writes_both_files_and_exits_ten() {
    let w = World::new();
    let f = Files::new(&w);
    // Budget 30, margin 10: effective 27 < minimum set 10 + 10 + 10. The smallest prompt is
    // 40 + 2 + (12 + 40) + 2 + (10 + 19 + 40) = 165 chars = 42 tokens, and that is what is
    // reported (never "needs 0").
    run(&w, &f.args("30"))
        .code(10)
        .stderr_has("no review prompt fits 30 tokens")
        .stderr_has("the smallest prompt needs 42");
    assert_eq!(f.prompt(), "");
    let m = f.meta();
    assert_eq!(
        (m["hardFailed"].as_bool(), m["estimatedTokens"].as_u64(), m["effectiveBudget"].as_i64()),
        (Some(true), Some(42), Some(27))
    );
}

#[test]
fn prompt_budget_drops_context_and_injects_the_shipped_note() {
    let w = World::new();
    let f = Files::new(&w);
    std::fs::write(f.dir.join("CONTEXT.md"), "c".repeat(400)).unwrap();
    let mut args = f.args("150");
    args.extend(["--context-file".into(), f.p("CONTEXT.md"), "--research-file".into(), f.p("missing.md")]);
    // The plan's heading "### 03-01-PLAN.md\n\n" is 19 chars = 5 tokens: total 41 + 103 = 144 >
    // effective 135: content budget 55; context dropped (41). The note is 313 chars: the prompt
    // is 40+2+313+2+52+2+69 = 480 chars = 120 tokens.
    run(&w, &args).code(0);
    let m = f.meta();
    assert_eq!(m["omitted"], serde_json::json!(["context"]));
    assert_eq!(m["noteInjected"], true);
    assert_eq!(m["estimatedTokens"], 120);
    assert!(
        f.prompt()
            .contains("<note>\nThis prompt was trimmed to fit a budget of 150 tokens.\nOmitted sections: context.\n")
    );
    assert!(!f.prompt().contains("## Research"), "a missing optional file is absent");
}

#[test]
fn prompt_budget_first_occurrence_wins() {
    let w = World::new();
    let f = Files::new(&w);
    let mut args = f.args("100");
    args.extend([
        "--budget".into(),
        "1".into(),
        "--safety-margin-pct".into(),
        "0".into(),
        "--safety-margin-pct".into(),
        "50".into(),
    ]);
    run(&w, &args).code(0);
    assert_eq!((f.meta()["budget"].as_i64(), f.meta()["effectiveBudget"].as_i64()), (Some(100), Some(100)));
}

#[test]
fn prompt_budget_usage_errors_exit_two() {
    let w = World::new();
    let f = Files::new(&w);
    let without = |flag: &str| {
        let mut a = f.args("100");
        let i = a.iter().position(|x| x == flag).unwrap();
        a.drain(i..i + 2);
        a
    };
    for flag in ["--budget", "--instructions-file", "--roadmap-file", "--output-prompt", "--output-metadata"] {
        run(&w, &without(flag)).code(2).stderr_has(flag);
    }
    for budget in ["0", "-5", "abc", "1.5", ""] {
        run(&w, &f.args(budget)).code(2).stderr_has("--budget must be a positive integer");
    }
    let mut unknown = f.args("100");
    unknown.push("--frobnicate".into());
    run(&w, &unknown).code(2);
    assert!(!Path::new(&f.p("out/meta.json")).exists(), "nothing is written on a usage error");
}

#[test]
fn prompt_budget_unreadable_files_exit_five() {
    let w = World::new();
    let f = Files::new(&w);
    // A required file that does not exist.
    let mut args = f.args("100");
    let i = args.iter().position(|x| x == "--roadmap-file").unwrap();
    args[i + 1] = f.p("nope.md");
    run(&w, &args).code(5).stderr_has("nope.md");
    // An optional file that exists but cannot be read (a directory).
    let mut args = f.args("100");
    args.extend(["--project-file".into(), f.p("plans")]);
    run(&w, &args).code(5);
    // Not UTF-8.
    std::fs::write(f.dir.join("bad.md"), [0xff, 0xfe, 0x00]).unwrap();
    let mut args = f.args("100");
    args.extend(["--context-file".into(), f.p("bad.md")]);
    run(&w, &args).code(5);
}

#[test]
fn prompt_budget_without_plans_is_a_review_without_a_plans_section() {
    let w = World::new();
    let f = Files::new(&w);
    let mut args = f.args("100");
    let i = args.iter().position(|x| x == "--plan-file").unwrap();
    args.drain(i..i + 2);
    // Zero --plan-file is valid.
    run(&w, &args).code(0);
    assert_eq!(f.prompt(), format!("{}\n\n## Roadmap\n\n{}", "i".repeat(40), "r".repeat(40)));
}

#[test]
fn prompt_budget_note_template_file_replaces_the_shipped_note() {
    let w = World::new();
    let f = Files::new(&w);
    std::fs::write(f.dir.join("CONTEXT.md"), "c".repeat(400)).unwrap();
    std::fs::write(f.dir.join("note.md"), "<trimmed budget={budget} omitted={omittedList}>").unwrap();
    let mut args = f.args("150");
    args.extend(["--context-file".into(), f.p("CONTEXT.md")]);
    args.extend(["--note-template-file".into(), f.p("note.md")]);
    run(&w, &args).code(0);
    assert!(f.prompt().contains("<trimmed budget=150 omitted=context>"), "{}", f.prompt());
    assert!(!f.prompt().contains("This prompt was trimmed"), "the shipped note is replaced");
    let mut missing = f.args("150");
    missing.extend(["--note-template-file".into(), f.p("nope.md")]);
    // An unreadable file is exit 5.
    run(&w, &missing).code(5).stderr_has("--note-template-file");
}
