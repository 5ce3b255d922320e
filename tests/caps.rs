//! Caps on emitted bytes through real installs: a Windsurf-style manifest glob rule at cap-1,
//! cap and cap+1, tier caps, a dead rule and a runtime that emits nothing. Every failure exits 3
//! and writes nothing.

use std::path::Path;

use crate::support::{World, fixture, plan_execute_tree};

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
    w.install()
        .args([
            "emit",
            "-r",
            "windsurf",
            "--local",
            "--runtimes",
            &s(&runtimes),
            "--content",
            &s(content),
            "--out",
            &s(&out),
        ])
        .assert()
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
        let out = w
            .install()
            .args(["-r", "windsurf", "--local", "--runtimes", &s(&runtimes), "--content", &s(&c)])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if target <= CAP {
            assert!(out.status.success(), "{target}: {stderr}");
            assert_eq!(std::fs::read(w.project.join(".windsurf/workflows/msd-plan.md")).unwrap().len(), target);
        } else {
            assert_eq!(out.status.code(), Some(3), "{stderr}");
            assert!(
                stderr.contains("windsurf (local): workflows/msd-plan.md is 12001 bytes, over its cap of 12000 (glob workflows/*.md)"),
                "{stderr}"
            );
            assert!(!w.project.join(".windsurf").exists(), "nothing is written");
        }
    }
}

#[test]
fn caps_rule_scoped_to_local_does_not_measure_a_global_install() {
    // The global layout has no workflows/: the rule is local only, so a global install passes.
    let w = World::new();
    let c = plan_execute_tree(&w, "c", &padded(20_000));
    let runtimes = fixture("caps/windsurf-capped");
    w.install().args(["-r", "windsurf", "--runtimes", &s(&runtimes), "--content", &s(&c)]).assert().success();
}

#[test]
fn caps_dead_rule_fails() {
    let w = World::new();
    let runtimes = fixture("caps/dead-rule");
    let out = w
        .install()
        .args(["-r", "windsurf", "--runtimes", &s(&runtimes), "--content", &s(&fixture("starter"))])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("windsurf (global): cap rule `workflows/*.md` matched no emitted file"), "{stderr}");
    assert!(!w.home.join(".codeium").exists());
}

#[test]
fn caps_runtime_that_emits_nothing_fails() {
    let w = World::new();
    let out = w
        .install()
        .args([
            "-r",
            "empty",
            "--runtimes",
            &s(&fixture("caps/empty")),
            "--content",
            &s(&fixture("caps/commands-only")),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("empty (global): emitted no files from the content"), "{stderr}");
    assert!(!w.home.join(".empty").exists());
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
        let out = w.install().args(["-r", "claude", "--content", &s(&c)]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if ok {
            assert!(out.status.success(), "{bytes} crlf={crlf}: {stderr}");
            assert_eq!(std::fs::read(w.home.join(".claude/msd-core/workflows/big.md")).unwrap().len(), bytes);
        } else {
            assert_eq!(out.status.code(), Some(3), "{stderr}");
            assert!(
                stderr.contains(&format!(
                    "msd-core/workflows/big.md is {bytes} bytes, over its cap of 61440 (workflow tier LARGE)"
                )),
                "{stderr}"
            );
            assert!(!w.home.join(".claude").exists());
        }
    }
}
