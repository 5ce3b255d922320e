//! Caps on emitted bytes through real installs: a Windsurf-style manifest glob rule at cap-1,
//! cap and cap+1, tier caps, a dead rule and a runtime that emits nothing. Every failure exits 3
//! and writes nothing.

use std::path::Path;

use crate::support::{Install, World, fixture, plan_execute_tree};

const CAP: usize = 12_000;

fn padded(n: usize) -> String {
    format!("Plan the phase.\n{}\n", "x".repeat(n))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The size of Windsurf's local `workflows/msd-plan.md` for `content`, through `emit`.
fn emitted_plan_size(w: &World, content: &Path) -> usize {
    let out = w.tmp.path().join(format!("emit-{}", content.file_name().unwrap().to_string_lossy()));
    let runtimes = fixture("caps/windsurf-capped");
    Install::in_world(w)
        .args(["emit", "-r", "windsurf", "--local", "--runtimes", &s(&runtimes)])
        .content(content)
        .args(["--out", &s(&out)])
        .run()
        .success();
    std::fs::read(out.join("workflows/msd-plan.md")).unwrap().len()
}

#[test]
fn caps_windsurf_glob_rule_at_cap_minus_one_cap_and_cap_plus_one() {
    let probe = World::new();
    let size0 = emitted_plan_size(&probe, &plan_execute_tree(&probe, "c0", &padded(0)));
    let runtimes = fixture("caps/windsurf-capped");
    for target in [CAP - 1, CAP, CAP + 1] {
        let w = World::new();
        let c = plan_execute_tree(&w, "c", &padded(target - size0));
        let r =
            Install::in_world(&w).args(["-r", "windsurf", "--local", "--runtimes", &s(&runtimes)]).content(&c).run();
        if target <= CAP {
            let r = r.success();
            assert_eq!(r.read(".windsurf/workflows/msd-plan.md").len(), target, "{target}");
        } else {
            // Nothing is written.
            r.code(3)
                .stderr_has("windsurf (local): workflows/msd-plan.md is 12001 bytes, over its cap of 12000 (glob workflows/*.md)")
                .no_file(".windsurf");
        }
    }
}

#[test]
fn caps_rule_scoped_to_local_does_not_measure_a_global_install() {
    // The global layout has no workflows/: the rule is local only, so a global install passes.
    let w = World::new();
    let c = plan_execute_tree(&w, "c", &padded(20_000));
    let runtimes = fixture("caps/windsurf-capped");
    Install::in_world(&w).args(["-r", "windsurf", "--runtimes", &s(&runtimes)]).content(&c).run().success();
}

#[test]
fn caps_dead_rule_fails() {
    let runtimes = fixture("caps/dead-rule");
    Install::new()
        .args(["-r", "windsurf", "--runtimes", &s(&runtimes)])
        .starter()
        .run()
        .code(3)
        .stderr_has("windsurf (global): cap rule `workflows/*.md` matched no emitted file")
        .no_file("~/.codeium");
}

#[test]
fn caps_runtime_that_emits_nothing_fails() {
    Install::new()
        .args(["-r", "empty", "--runtimes", &s(&fixture("caps/empty"))])
        .content(fixture("caps/commands-only"))
        .run()
        .code(3)
        .stderr_has("empty (global): emitted no files from the content")
        .no_file("~/.empty");
}

#[test]
fn caps_workflow_tier_boundaries_through_install() {
    // LARGE = 61,440, measured in LF bytes: a CRLF counts one.
    for (bytes, crlf, ok) in
        [(61_439usize, false, true), (61_440, false, true), (61_441, false, false), (61_441, true, true)]
    {
        let w = World::new();
        let c = plan_execute_tree(&w, "c", "Plan.\n");
        std::fs::write(c.join("tiers.json"), r#"{"workflows": {"big": "LARGE", "plan": "DEFAULT"}}"#).unwrap();
        let text = if crlf { format!("{}\r\n", "x".repeat(bytes - 2)) } else { format!("{}\n", "x".repeat(bytes - 1)) };
        std::fs::write(c.join("msd-core/workflows/big.md"), &text).unwrap();
        let r = Install::in_world(&w).runtime("claude").content(&c).run();
        if ok {
            let r = r.success();
            assert_eq!(r.read("~/.claude/msd-core/workflows/big.md").len(), bytes, "{bytes} crlf={crlf}");
        } else {
            r.code(3)
                .stderr_has(&format!(
                    "msd-core/workflows/big.md is {bytes} bytes, over its cap of 61440 (workflow tier LARGE)"
                ))
                .no_file("~/.claude");
        }
    }
}
