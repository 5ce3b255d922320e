//! Characterisation of the review-prompt ladder, case family by case family (contracts
//! section 2). Every expected number is derived by hand in the comment above it; tokens are
//! `ceil(UTF-16 units / 4)`.
//!
//! Reference sizes used throughout: instructions "i"x40 = 10 tokens; roadmap "r"x40 = 10 plus
//! its wrapper "## Roadmap\n\n" (12 chars) = 3; "## Plans\n\n" (10) = 3; "### a.md\n\n" (10) = 3;
//! "## Context\n\n" (12) = 3; "## Research\n\n" (13) = 4; "## Requirements\n\n" (17) = 5;
//! "## Project\n\n" (12) = 3.

use super::*;
use crate::compose::gate;

/// A short template so that note lengths are easy to count: `<note>` + list + ` ` + pct +
/// `</note>` = 14 chars + list + pct.
const NOTE: &str = "<note>{omittedList} {planTruncationPct}</note>";

fn base(plans: &[(&str, String)]) -> Sections {
    Sections {
        instructions: "i".repeat(40),
        roadmap: "r".repeat(40),
        plans: plans.iter().map(|(f, c)| PlanText { file: f.to_string(), content: c.clone() }).collect(),
        ..Sections::default()
    }
}

fn small() -> Sections {
    base(&[("a.md", "p".repeat(40))])
}

fn opts(margin: f64) -> BudgetOptions {
    BudgetOptions { safety_margin_pct: margin, note_template: Some(NOTE.into()), ..BudgetOptions::default() }
}

fn run(s: &Sections, budget: i64, margin: f64) -> Outcome {
    apply(s, budget, &opts(margin)).unwrap()
}

/// (hardFailed, estimatedTokens, omitted, noteInjected)
fn brief(o: &Outcome) -> (bool, u64, Vec<String>, bool) {
    (o.metadata.hard_failed, o.metadata.estimated_tokens, o.metadata.omitted.clone(), o.metadata.note_injected)
}

fn none() -> Vec<String> {
    Vec::new()
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// A1-A3: the small set totals 10 + 13 + 3 + 13 = 39; its prompt is 40 + 2 + 52 + 2 + 60 = 156
// chars = 39 tokens.

#[test]
fn budget_a1_exact_cap_passes_untouched() {
    let o = run(&small(), 39, 0.0);
    assert_eq!(brief(&o), (false, 39, none(), false));
    assert_eq!(
        o.prompt,
        format!("{}\n\n## Roadmap\n\n{}\n\n## Plans\n\n### a.md\n\n{}", "i".repeat(40), "r".repeat(40), "p".repeat(40))
    );
    assert_eq!(o.metadata.effective_budget, 39);
}

#[test]
fn budget_a2_cap_minus_one_is_pressure_that_cannot_be_relieved() {
    // 39 > 38: pressure, content budget 38 - 80 = -42; the plans' group budget is negative, so
    // truncation is skipped; nothing else can move; the 39-token prompt fails the check.
    let o = run(&small(), 38, 0.0);
    assert_eq!(brief(&o), (true, 39, none(), false));
    assert_eq!(o.prompt, "");
}

#[test]
fn budget_a3_cap_plus_one_passes() {
    assert_eq!(brief(&run(&small(), 40, 0.0)), (false, 39, none(), false));
}

fn with_context() -> Sections {
    Sections { context: Some("c".repeat(40)), ..small() }
}

#[test]
fn budget_a3b_total_on_the_cap_is_not_pressure_but_the_prompt_is_over() {
    // total 39 + 13 = 52 = budget: no pressure, nothing dropped; the prompt adds a separator and
    // the context block: 156 + 2 + 52 = 210 chars = 53 tokens > 52: hard fail after assembly.
    let o = run(&with_context(), 52, 0.0);
    assert_eq!(brief(&o), (true, 53, none(), false));
    assert_eq!(brief(&run(&with_context(), 53, 0.0)), (false, 53, none(), false));
}

#[test]
fn budget_a3c_one_below_drops_the_droppable_and_injects_the_note() {
    // 52 > 51: context dropped (total 39); note "<note>context 0</note>" = 14 + 7 + 1 = 22 chars.
    // Prompt 40 + 2 + 22 + 2 + 52 + 2 + 60 = 180 chars = 45 tokens.
    let o = run(&with_context(), 51, 0.0);
    assert_eq!(brief(&o), (false, 45, ids(&["context"]), true));
    assert!(o.prompt.starts_with(&format!("{}\n\n<note>context 0</note>\n\n## Roadmap", "i".repeat(40))));
}

#[test]
fn budget_a4_reserve_band_is_not_taken_without_pressure() {
    // total 52 (with context); budget = 52 + k, no pressure for any k >= 0, so the 80-token
    // reserve never applies and context always stays. k = 0 fails only the assembled check (53).
    for k in [0i64, 1, 2, 39, 40, 79, 80, 81] {
        let o = run(&with_context(), 52 + k, 0.0);
        assert_eq!(brief(&o), (k == 0, 53, none(), false), "k = {k}");
    }
}

/// 10 + 13 + 3 + (3 + 2000) + (3 + 100) = 2132 tokens.
fn big() -> Sections {
    Sections { context: Some("c".repeat(400)), ..base(&[("a.md", "p".repeat(8000))]) }
}

#[test]
fn budget_a10_pressure_band_edges() {
    // budget = 2132 - k: content budget 2052 - k; overhead 132; group budget 1920 - k; the plan
    // keeps (1920 - k) * 4 chars and the total lands exactly on the content budget, so context
    // stays. Prompt chars = 40+2+19+2+52+2+(20+share)+2+412 = 551 + share.
    // k: share, pct = (8000 - share) / 80, rounded, tokens = ceil((551 + share) / 4)
    let table = [
        (1i64, 7676usize, 4.05, 4, 2057u64),
        (2, 7672, 4.1, 4, 2056),
        (40, 7520, 6.0, 6, 2018),
        (79, 7364, 7.95, 8, 1979),
        (80, 7360, 8.0, 8, 1978),
        (81, 7356, 8.05, 8, 1977),
    ];
    for (k, share, pct, rounded, tokens) in table {
        let o = run(&big(), 2132 - k, 0.0);
        assert_eq!(brief(&o), (false, tokens, none(), true), "k = {k}");
        assert!((o.metadata.plan_truncation_pct.0 - pct).abs() < 1e-9, "k = {k}: {:?}", o.metadata.plan_truncation_pct);
        assert!(o.prompt.contains(&format!("<note>none {rounded}</note>")), "k = {k}");
        assert!(o.prompt.contains(&format!("### a.md\n\n{}\n\n## Context", "p".repeat(share))), "k = {k}");
    }
}

#[test]
fn budget_a11_a13_margin_rounds_down_in_f64() {
    assert_eq!(run(&small(), 95, 10.0).metadata.effective_budget, 85);
    assert_eq!(run(&small(), 93, 15.0).metadata.effective_budget, 79);
    assert_eq!(run(&small(), 100, 10.0).metadata.effective_budget, 90);
    // 43 at 10%: 38.7 -> 38 < 39: pressure and a failed check, as in A2.
    assert_eq!(brief(&run(&small(), 43, 10.0)), (true, 39, none(), false));
    assert_eq!(brief(&run(&small(), 44, 10.0)), (false, 39, none(), false), "44 * 0.9 = 39.6 -> 39");
}

#[test]
fn budget_zero_and_negative_fail_on_the_minimum_set() {
    // minimum set: 10 + 10 + 10 = 30 > 0 and > -45.
    for (budget, eff) in [(0i64, 0i64), (-50, -45)] {
        let o = run(&small(), budget, 10.0);
        // A hard fail reports the real size of the smallest prompt, never 0 (issue 18).
        assert_eq!(brief(&o), (true, 39, none(), false), "{budget}");
        assert_eq!(o.metadata.effective_budget, eff);
        assert_eq!(o.prompt, "");
    }
}

#[test]
fn budget_c_minimum_set_versus_post_assembly_hard_fail() {
    // 30 = minimum set: the composer runs, the prompt (39) fails after assembly.
    assert_eq!(brief(&run(&small(), 30, 0.0)), (true, 39, none(), false));
    // 29 < minimum set: hard fail before assembly; estimatedTokens is the real size of the
    // smallest prompt (the 39 above), not 0.
    assert_eq!(brief(&run(&small(), 29, 0.0)), (true, 39, none(), false));
}

fn with_project(lines: usize) -> Sections {
    Sections { project_md: Some("xxxxxxx\n".repeat(lines)), ..small() }
}

#[test]
fn budget_b_head_shrink_engaged() {
    // project: 50 lines of 8 chars = 100 tokens + 3: total 142. Budget 141: content budget 61;
    // head(40) = 319 chars = 80 tokens: total 122; the note "<note>none 0</note>" (19).
    // Prompt 40+2+19+2+52+2+(12+319)+2+60 = 510 chars = 128 tokens.
    let o = run(&with_project(50), 141, 0.0);
    assert_eq!(brief(&o), (false, 128, none(), true));
    assert!(o.metadata.project_md_shrunk);
    assert!(o.prompt.contains(&format!("## Project\n\n{}\n\n## Plans", "xxxxxxx\n".repeat(40).trim_end())));
}

#[test]
fn budget_b_head_shrink_no_op_and_zero_lines() {
    // 10 lines (< 40): nothing to cut even under pressure; total 62; prompt
    // 40+2+52+2+92+2+60 = 250 chars = 63 tokens > 61.
    let o = run(&with_project(10), 61, 0.0);
    assert_eq!(brief(&o), (true, 63, none(), false));
    assert!(!o.metadata.project_md_shrunk);
    // Zero head lines: the project goes (shrunk to nothing, not omitted); total 39; prompt
    // 40+2+19+2+52+2+60 = 177 chars = 45 tokens.
    let zero = BudgetOptions { project_md_head_lines: 0, ..opts(0.0) };
    let o = apply(&with_project(50), 141, &zero).unwrap();
    assert_eq!(brief(&o), (false, 45, none(), true));
    assert!(o.metadata.project_md_shrunk);
    assert!(!o.prompt.contains("## Project"));
}

fn two_plans() -> Sections {
    // 10 + 13 + 3 + (3 + 2000) + (3 + 500) = 2532.
    base(&[("a.md", "a".repeat(8000)), ("b.md", "b".repeat(2000))])
}

#[test]
fn budget_b_share_above_the_floor() {
    // Budget 2000: content budget 1920, overhead 32, group budget 1888 = 7552 chars; shares
    // floor(0.8 * 7552) = 6041 and floor(0.2 * 7552) = 1510 (above 1024). pct = 2449 / 100 =
    // 24.49 -> 24. Prompt 118 + (10+10+6041+2+10+1510) = 7701 chars = 1926 tokens.
    let o = run(&two_plans(), 2000, 0.0);
    assert_eq!(brief(&o), (false, 1926, none(), true));
    assert!((o.metadata.plan_truncation_pct.0 - 24.49).abs() < 1e-9);
    assert!(o.prompt.contains(&format!("### a.md\n\n{}\n\n### b.md\n\n{}", "a".repeat(6041), "b".repeat(1510))));
    assert!(o.prompt.ends_with(&"b".repeat(1510)));
}

#[test]
fn budget_b_floor_binds_and_may_exceed_the_budget() {
    // Budget 800: content budget 720, group budget 688 = 2752 chars; shares 2201 and 550, the
    // floor lifts b to 1024. pct = 6775 / 100 = 67.75 -> 68. Prompt 118 + (10+10+2201+2+10+1024)
    // = 3375 chars = 844 tokens > 800: hard fail after assembly, trim metadata kept.
    let o = run(&two_plans(), 800, 0.0);
    assert_eq!(brief(&o), (true, 844, none(), true));
    assert!((o.metadata.plan_truncation_pct.0 - 67.75).abs() < 1e-9);
}

#[test]
fn budget_b_zero_size_plans_are_never_truncated() {
    // a.md is empty (required: its wrapper counts 3); context 103: total 132. Budget 100: content
    // budget 20; group content 0: skipped; context dropped: 29. Note "<note>context 0</note>".
    // Prompt 40+2+22+2+52+2+20 = 140 chars = 35 tokens.
    let s = Sections { context: Some("c".repeat(400)), ..base(&[("a.md", String::new())]) };
    let o = run(&s, 100, 0.0);
    assert_eq!(brief(&o), (false, 35, ids(&["context"]), true));
    assert_eq!(o.metadata.plan_truncation_pct, Pct(0.0));
    assert!(o.prompt.ends_with("## Plans\n\n### a.md\n\n"));
}

#[test]
fn budget_b_non_positive_group_budget_skips_truncation() {
    // context 1600 chars = 403: total 2432, overhead 432. Budget 500: content budget 420, group
    // budget -12: skipped. Context dropped: 2029. Prompt 40+2+22+2+52+2+(20+8000) = 8140 chars
    // = 2035 tokens > 500.
    let s = Sections { context: Some("c".repeat(1600)), ..base(&[("a.md", "p".repeat(8000))]) };
    let o = run(&s, 500, 0.0);
    assert_eq!(brief(&o), (true, 2035, ids(&["context"]), true));
    assert_eq!(o.metadata.plan_truncation_pct, Pct(0.0));
}

fn droppables(context: Option<String>) -> Sections {
    // 10 + 13 + 3 + 13 + 103 + 104 + 105 = 351 (context present).
    Sections { context, research: Some("r".repeat(400)), requirements: Some("q".repeat(400)), ..small() }
}

#[test]
fn budget_b_drop_order_context_research_requirements() {
    let s = droppables(Some("c".repeat(400)));
    // 330: content budget 250; context out (248 <= 250). Prompt 40+2+22+2+52+2+60+2+413+2+417
    // = 1014 chars = 254 tokens.
    assert_eq!(brief(&run(&s, 330, 0.0)), (false, 254, ids(&["context"]), true));
    // 250: content budget 170; context, research out (144). Note 14 + 17 + 1 = 32. Prompt
    // 40+2+32+2+52+2+60+2+417 = 609 chars = 153 tokens.
    assert_eq!(brief(&run(&s, 250, 0.0)), (false, 153, ids(&["context", "research"]), true));
    // 150: content budget 70; all three out (39). Note 14 + 31 + 1 = 46. Prompt
    // 40+2+46+2+52+2+60 = 204 chars = 51 tokens.
    assert_eq!(brief(&run(&s, 150, 0.0)), (false, 51, ids(&["context", "research", "requirements"]), true));
}

#[test]
fn budget_b_null_and_empty_droppables_behave_alike() {
    // Without context: total 248; 240 -> content budget 160; research out (144).
    let a = run(&droppables(None), 240, 0.0);
    let b = run(&droppables(Some(String::new())), 240, 0.0);
    assert_eq!(a, b);
    assert_eq!(a.metadata.omitted, ids(&["research"]));
    assert!(!a.prompt.contains("## Context"));
}

#[test]
fn budget_c_default_note_template() {
    // The drop-order case at 330 with the shipped template: 313 chars of note. Prompt
    // 40+2+313+2+52+2+60+2+413+2+417 = 1305 chars = 327 tokens.
    let s = droppables(Some("c".repeat(400)));
    let o = apply(&s, 330, &BudgetOptions { safety_margin_pct: 0.0, ..BudgetOptions::default() }).unwrap();
    let note = "<note>\nThis prompt was trimmed to fit a budget of 330 tokens.\nOmitted sections: context.\nPlan text was cut by 0%; every plan keeps at least its first 1024 characters.\nJudge only what is shown, and name the omitted material you would need.\nDo not assume that omitted or cut text is absent from the project.\n</note>";
    assert_eq!(brief(&o), (false, 327, ids(&["context"]), true));
    assert!(o.prompt.starts_with(&format!("{}\n\n{note}\n\n## Roadmap\n\n", "i".repeat(40))));
}

#[test]
fn budget_c_custom_template_replaces_first_occurrences_and_says_none() {
    let t = BudgetOptions {
        note_template: Some("{budget} {budget} [{omittedList}] {planTruncationPct}%".into()),
        ..opts(0.0)
    };
    let o = apply(&with_project(50), 141, &t).unwrap();
    assert!(o.prompt.contains("\n\n141 {budget} [none] 0%\n\n"), "{}", o.prompt);
    // No trim, no note.
    assert!(!run(&small(), 39, 0.0).metadata.note_injected);
}

#[test]
fn budget_d_assembly_order_with_every_section() {
    let s = Sections {
        instructions: "I".into(),
        roadmap: "R".into(),
        plans: vec![
            PlanText { file: "1.md".into(), content: "P1".into() },
            PlanText { file: "2.md".into(), content: "P2".into() },
        ],
        project_md: Some("PR".into()),
        context: Some("C".into()),
        research: Some("RS".into()),
        requirements: Some("RQ".into()),
    };
    let o = run(&s, 1000, 10.0);
    assert_eq!(
        o.prompt,
        "I\n\n## Roadmap\n\nR\n\n## Project\n\nPR\n\n## Plans\n\n### 1.md\n\nP1\n\n### 2.md\n\nP2\n\n## Context\n\nC\n\n## Research\n\nRS\n\n## Requirements\n\nRQ"
    );
    assert!(!o.metadata.note_injected);
}

#[test]
fn budget_d_crlf_counts_and_head_keeps_the_cr() {
    // project "l1\r\nl2\r\n" + 200 x + "\r\n" = 210 chars (CR counts) = 53 tokens + 3: total 95.
    let s = Sections { project_md: Some(format!("l1\r\nl2\r\n{}\r\n", "x".repeat(200))), ..small() };
    let two = BudgetOptions { project_md_head_lines: 2, ..opts(0.0) };
    // No pressure at 200: prompt 40+2+52+2+(12+210)+2+60 = 380 chars = 95 tokens.
    assert_eq!(brief(&apply(&s, 200, &two).unwrap()), (false, 95, none(), false));
    // 94: pressure; head(2) = "l1\r\nl2\r" (7 chars = 2 tokens): total 44. Note 19. Prompt
    // 40+2+19+2+52+2+(12+7)+2+60 = 198 chars = 50 tokens.
    let o = apply(&s, 94, &two).unwrap();
    assert_eq!(brief(&o), (false, 50, none(), true));
    assert!(o.metadata.project_md_shrunk);
    assert!(o.prompt.contains("## Project\n\nl1\r\nl2\r\n\n## Plans"));
}

#[test]
fn budget_d_unicode_counts_utf16_and_never_splits_a_pair() {
    // plan "a" + 3000 emoji = 6001 units = 1501 tokens: total 1530. Budget 1000: content budget
    // 920, overhead 29, group budget 891 = 3564 units; "a" + 1781 emoji = 3563 units (the next
    // pair would reach 3565). pct = 2438 / 6001 * 100 = 40.63 -> 41. Prompt
    // 40+2+20+2+52+2+(20+3563) = 3701 units = 926 tokens.
    let s = base(&[("u.md", format!("a{}", "😀".repeat(3000)))]);
    let o = run(&s, 1000, 0.0);
    assert_eq!(brief(&o), (false, 926, none(), true));
    assert!(o.prompt.ends_with(&format!("a{}", "😀".repeat(1781))));
    assert!((o.metadata.plan_truncation_pct.0 - 2438.0 / 6001.0 * 100.0).abs() < 1e-9);
}

#[test]
fn budget_d_filename_wrapper_counts() {
    // A 42-char name: "### <name>\n\n" is 48 chars = 12 tokens instead of 3: total 48.
    let name = "n".repeat(39) + ".md";
    let s = base(&[(name.as_str(), "p".repeat(40))]);
    assert_eq!(build_fragments(&s, &opts(0.0))[4].wrapper.len(), 48);
    // Prompt 40+2+52+2+(10+48+40) = 194 chars = 49 tokens; at 48 it fails, at 49 it passes.
    assert_eq!(brief(&run(&s, 48, 0.0)), (true, 49, none(), false));
    assert_eq!(brief(&run(&s, 49, 0.0)), (false, 49, none(), false));
}

#[test]
fn budget_plan_ids_are_unique() {
    let s = base(&[("a.md", "x".into()), ("a.md", "y".into())]);
    let ids: Vec<String> = build_fragments(&s, &opts(0.0)).into_iter().map(|f| f.id).collect();
    assert_eq!(
        ids,
        [
            "instructions",
            "roadmap",
            "projectMd",
            "plans-header",
            "plan:a.md",
            "plan:1:a.md",
            "context",
            "research",
            "requirements"
        ]
    );
}

#[test]
fn budget_metadata_serialises_with_the_reference_keys() {
    let o = run(&big(), 2131, 0.0);
    let json = serde_json::to_string_pretty(&o.metadata).unwrap();
    let keys: Vec<String> =
        serde_json::from_str::<serde_json::Value>(&json).unwrap().as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "budget",
            "effectiveBudget",
            "estimatedTokens",
            "omitted",
            "projectMdShrunk",
            "planTruncationPct",
            "hardFailed",
            "noteInjected"
        ]
    );
    assert!(json.contains("\"planTruncationPct\": 4.05"), "{json}");
    assert!(serde_json::to_string(&Pct(8.0)).unwrap() == "8");
}

// The load-bearing contract gate over the real fragment list (contracts section 4).

fn gate_sections() -> Sections {
    Sections {
        project_md: Some("project line\n".repeat(80)),
        context: Some("c".repeat(2000)),
        research: Some("r".repeat(1200)),
        requirements: Some("q".repeat(800)),
        ..base(&[("01-PLAN.md", "p".repeat(6000)), ("02-PLAN.md", "s".repeat(3000))])
    }
}

fn gate_run(s: &Sections, budgets: &[i64]) -> Result<gate::GateReport, gate::GateError> {
    let o = BudgetOptions::default();
    let fragments = build_fragments(s, &o);
    gate::run(&fragments, budgets, |b| compose::compose(&fragments, b, &Tokens, &options(&o)))
}

#[test]
fn budget_gate_holds_across_the_sweep() {
    let s = gate_sections();
    let total = compose::total(&build_fragments(&s, &BudgetOptions::default()), &Tokens);
    let budgets = gate::sweep(total);
    let report = gate_run(&s, &budgets).unwrap();
    assert_eq!(report.load_bearing, ["instructions", "roadmap", "plans-header"]);
    let at = |b: i64| &report.runs.iter().find(|(x, _)| *x == b).unwrap().1;
    // The ladder works: at 25% the first droppable is gone.
    assert!(at(budgets[6]).omitted.contains(&"context".to_string()));
    // The boundary budgets hold (no hard fail is checked by the gate itself).
    for b in [total as i64 - 1, total as i64, total as i64 + 1] {
        assert!(!at(b).hard_failed);
    }
}

#[test]
fn budget_gate_fails_on_an_empty_load_bearing_set() {
    let fragments =
        vec![Fragment::new("x", "xxxx", Strategy::Drop), Fragment::new("y", "yy\nyy", Strategy::Head { max_lines: 1 })];
    let err =
        gate::run(&fragments, &[1, 2], |b| compose::compose(&fragments, b, &Tokens, &compose::Options::default()))
            .unwrap_err();
    assert_eq!(err, gate::GateError::EmptyLoadBearingSet);
}

#[test]
fn budget_gate_fails_on_a_sweep_without_pressure() {
    let s = gate_sections();
    let total = compose::total(&build_fragments(&s, &BudgetOptions::default()), &Tokens) as i64;
    assert!(matches!(gate_run(&s, &[total * 4]), Err(gate::GateError::NeverUnderPressure { .. })));
}

#[test]
fn budget_gate_catches_a_composer_that_touches_load_bearing_text() {
    // The gate's assertions can go red: a broken composition that trims the roadmap, and one
    // that moves the isolate prefix, are caught.
    let o = BudgetOptions::default();
    let fragments = build_fragments(&gate_sections(), &o);
    let broken = |b: i64| {
        let mut c = compose::compose(&fragments, b, &Tokens, &options(&o))?;
        if c.report.under_pressure {
            c.fragments[1].content.truncate(5);
        }
        Ok(c)
    };
    let total = compose::total(&fragments, &Tokens);
    assert!(
        matches!(gate::run(&fragments, &gate::sweep(total), broken), Err(gate::GateError::LoadBearingTouched { ref id, how: "changed", .. }) if id == "roadmap")
    );

    let mut with_isolate = vec![Fragment::new("isolate-head", "HEAD", Strategy::Verbatim).isolate()];
    with_isolate.extend(fragments.iter().cloned());
    let ok =
        gate::run(&with_isolate, &gate::sweep(total), |b| compose::compose(&with_isolate, b, &Tokens, &options(&o)))
            .unwrap();
    assert!(ok.load_bearing.contains(&"isolate-head".to_string()));
    let moved = |b: i64| {
        let mut c = compose::compose(&with_isolate, b, &Tokens, &options(&o))?;
        c.report.isolate_prefix.push('!');
        Ok(c)
    };
    assert!(matches!(
        gate::run(&with_isolate, &gate::sweep(total), moved),
        Err(gate::GateError::IsolatePrefixChanged { .. })
    ));
}
