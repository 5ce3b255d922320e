//! Composition at emit through real installs: no marker survives in any runtime; the isolate
//! prefix is byte-identical everywhere; a file over its manifest cap is composed to fit (and
//! reported with `--json`), or fails naming artifact, runtime, budget and smallest size.

use std::path::Path;

use crate::support::{Install, World, fixture, plan_execute_tree, tree};

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Marker text that must never reach an emitted file. The fixture also holds marker-shaped
/// lines inside a fence and a comment: those are content, and they carry none of these.
const MARKER_TEXT: [&str; 9] = [
    "msd:protected",
    "/msd:section",
    "id=\"prd-mode\"",
    "id=\"examples\"",
    "id=\"isolate-banner\"",
    "id=\"review-prd\"",
    "id=\"checklist\"",
    "id=\"background\"",
    "shrink=",
];

#[test]
fn compose_no_marker_survives_in_any_runtime() {
    let w = World::new();
    let content = fixture("composer");
    Install::in_world(&w).all().content(&content).run().success();
    Install::in_world(&w).all().local().content(&content).run().success();
    let mut files = 0;
    let mut workflows = Vec::new();
    for root in [&w.home, &w.project] {
        for (path, bytes) in tree(root) {
            // The helper binary is ours, not content: scanning 36 copies of it was most of the
            // suite's time.
            if path.ends_with("/bin/msd_run") {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            for m in MARKER_TEXT {
                assert!(!text.contains(m), "{path} keeps `{m}`");
                assert!(!text.contains(&m.replace('"', "\\\"")), "{path} keeps an escaped `{m}`");
            }
            if !path.ends_with(".json") {
                let doc = msd_core::markup::markers::parse(&path, &text).unwrap();
                assert!(!doc.has_markers(), "{path} has a marker line");
            }
            if path.ends_with("workflows/review.md") {
                workflows.push((path.clone(), bytes.clone()));
            }
            files += 1;
        }
    }
    assert!(files > 100, "the installs wrote {files} files");
    // The section bodies, protected text and content-only marker look-alikes are all there.
    let (path, review) = &workflows[0];
    let review = String::from_utf8_lossy(review);
    for needle in [
        "Read `",
        "1. Goal covered.\n2. Tasks small.\n3. Verify",
        "A review never edits the plans itself.",
        "id=\"inside-comment\"",
    ] {
        assert!(review.contains(needle), "{path} lacks {needle}:\n{review}");
    }
    // The isolate prefix is byte-identical in every runtime's emission, global and local.
    assert!(workflows.len() >= 18, "{} review workflows", workflows.len());
    for (path, bytes) in &workflows {
        assert!(bytes.starts_with(b"msd-core review workflow, v1\r\n<purpose>"), "{path}");
    }
}

#[test]
fn compose_report_is_in_install_json() {
    let doc = Install::new().args(["-r", "claude"]).content(fixture("composer")).json().run().success().json();
    let compose = doc["runtimes"][0]["compose"].as_array().unwrap();
    let review = compose.iter().find(|c| c["path"] == "msd-core/workflows/review.md").unwrap();
    assert_eq!(review["source"], "content/msd-core/workflows/review.md");
    assert_eq!(review["report"]["isolate_prefix"], "msd-core review workflow, v1\r\n");
    assert_eq!(review["report"]["omitted"], serde_json::json!([]));
    assert_eq!(review["cap"], serde_json::Value::Null);
    // Files without sections and without a cap are not listed.
    assert!(!compose.iter().any(|c| c["path"] == "msd-core/workflows/review/steps/review-prd.md"));
}

fn section(id: &str, shrink: &str, body: &str) -> String {
    format!("<!-- msd:section id=\"{id}\" when=\"always\" shrink=\"{shrink}\" -->\n{body}<!-- /msd:section -->\n")
}

fn lines(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix} {i:04} {}\n", "-".repeat(40))).collect()
}

#[test]
fn compose_fits_a_file_over_its_manifest_cap() {
    let w = World::new();
    // 3,240 + 12,240 bytes of sections: over 12,000. The walk drops `examples`, then cuts
    // `notes` proportionally down to what is left, never below 100 bytes.
    let body = format!(
        "Intro: plan the phase.\n{}{}Tail: hand over to execute.\n",
        section("examples", "drop", &lines("example", 60)),
        section("notes", "truncate:100", &lines("note", 240)),
    );
    let c = plan_execute_tree(&w, "c", &body);
    let runtimes = fixture("caps/windsurf-capped");
    let capped = || Install::in_world(&w).args(["-r", "windsurf", "--local", "--runtimes", &s(&runtimes)]).content(&c);
    let r = capped().json().run().success();
    let doc = r.json();
    let plan = r.read(".windsurf/workflows/msd-plan.md");
    assert!(plan.len() <= 12_000 && plan.len() > 11_900, "{} bytes", plan.len());
    assert!(plan.contains("Intro: plan the phase.\nnote 0000"), "verbatim text and the head of the notes stay");
    assert!(plan.ends_with("\nTail: hand over to execute.\n"), "the cut section gets its line end back");
    assert!(!plan.contains("example 0000"));
    let entry = doc["runtimes"][0]["compose"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "workflows/msd-plan.md")
        .unwrap()
        .clone();
    assert_eq!(entry["cap"], 12_000);
    assert_eq!(entry["rule"], "workflows/*.md");
    assert_eq!(entry["bytes"].as_u64().unwrap() as usize, plan.len());
    assert!(entry["full_bytes"].as_u64().unwrap() > 15_000);
    assert_eq!(entry["report"]["omitted"], serde_json::json!(["examples"]));
    assert_eq!(entry["report"]["truncated"], serde_json::json!(["notes"]));
    // The text summary says so too.
    capped().dry_run().run().stdout_has("composed workflows/msd-plan.md to");
    // A runtime without the cap gets the whole text.
    let whole = Install::in_world(&w)
        .args(["-r", "claude", "--local"])
        .content(&c)
        .run()
        .success()
        .read(".claude/commands/msd-plan.md");
    assert!(whole.contains("example 0059") && whole.contains("note 0239"));
}

#[test]
fn compose_fails_when_the_unshrinkable_parts_exceed_the_cap() {
    let w = World::new();
    let verbatim = lines("rule", 300); // 15,300 bytes that may not shrink
    let c = plan_execute_tree(&w, "c", &format!("{verbatim}{}", section("examples", "drop", &lines("example", 10))));
    // The smallest reachable size is the file without the droppable section: emit that variant
    // with the same manifest, its cap removed.
    let bare = plan_execute_tree(&w, "bare", &verbatim);
    let uncapped = w.tmp.path().join("uncapped");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("caps/windsurf-capped/windsurf/capability.json")).unwrap())
            .unwrap();
    manifest.as_object_mut().unwrap().remove("caps");
    std::fs::create_dir_all(uncapped.join("windsurf")).unwrap();
    std::fs::write(uncapped.join("windsurf/capability.json"), manifest.to_string()).unwrap();
    let out_dir = w.tmp.path().join("bare-out");
    Install::in_world(&w)
        .args(["emit", "-r", "windsurf", "--local", "--runtimes", &s(&uncapped)])
        .content(&bare)
        .args(["--out", &s(&out_dir)])
        .run()
        .success();
    let smallest = std::fs::read(out_dir.join("workflows/msd-plan.md")).unwrap().len();
    let runtimes = fixture("caps/windsurf-capped");
    // Nothing is written.
    Install::in_world(&w)
        .args(["-r", "windsurf", "--local", "--runtimes", &s(&runtimes)])
        .content(&c)
        .run()
        .code(3)
        .stderr_has("windsurf (local): workflows/msd-plan.md (from content/commands/msd/plan.md)")
        .stderr_has("over its cap of 12000 (glob workflows/*.md)")
        .stderr_has(&format!("it is still {smallest} bytes (section budget "))
        .stderr_has("hint: mark more of content/commands/msd/plan.md shrinkable")
        .no_file(".windsurf");
}
