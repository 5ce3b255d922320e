//! `msd-install bench port`: the reference framework's content ported to msd's conventions at
//! bench time (issue 37, "the same content"). The fixture `tests/fixtures/reference-shaped` is
//! msd's own text in the reference checkout's shape; the port must turn it into a content tree
//! that `msd-install --all` installs for every runtime.

use crate::support::{Install, World, fixture};

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn refport_ports_the_reference_layout_names_and_markers_and_installs_for_every_runtime() {
    let w = World::new();
    let src = fixture("reference-shaped");
    let out = w.tmp.path().join("ported");
    Install::in_world(&w)
        .args(["bench", "port", "--reference"])
        .arg(&src)
        .arg("--out")
        .arg(&out)
        .run()
        .success()
        .stderr_has("1 made msd sections, 1 left as the reference's comments (a `when` msd does not know: state:moon-is-full x1)");

    // Layout: commands and agents under msd's names, the core directory renamed; the router is
    // a group of namespaces.json, not a command; the reference's helper and its section
    // manifest are not carried; nothing outside the ported trees is read.
    for f in [
        "commands/msd/alpha.md",
        "commands/msd/beta.md",
        "commands/msd/gamma.md",
        "agents/msd-helper.md",
        "msd-core/workflows/alpha.md",
        "msd-core/workflows/alpha/steps/alpha-prd.md",
        "msd-core/workflows/alpha/steps/alpha-odd.md",
        "msd-core/references/notes.md",
        "msd-core/templates/plan.md",
        "msd-core/templates/config.json",
        "msd-core/contexts/dev.md",
        "namespaces.json",
        "tiers.json",
        "msd-core/workflows/section-manifest.json",
    ] {
        assert!(out.join(f).is_file(), "{f} is ported");
    }
    for f in
        ["commands/msd/ns-things.md", "msd-core/bin/tool.cjs", "README.md", "agents/gsd-helper.md", "agents/notes.txt"]
    {
        assert!(!out.join(f).exists(), "{f} is not");
    }

    // Names: msd's where they name a command, an agent or the core directory; the reference's
    // helper and its own markers keep theirs. The renames keep every byte count.
    let wf = read(&out.join("msd-core/workflows/alpha.md"));
    assert!(wf.contains("<!-- msd:section id=\"alpha-prd\" when=\"flag:--prd\" -->\n"), "{wf}");
    assert!(wf.contains("`~/.claude/msd-core/workflows/alpha/steps/alpha-prd.md` now.\n<!-- /msd:section -->"), "{wf}");
    assert!(wf.contains("<!-- gsd:section id=\"alpha-odd\" when=\"state:moon-is-full\" -->"), "{wf}");
    assert!(wf.contains("<!-- gsd:loop-host\n"), "{wf}");
    assert!(wf.contains("hand it to /msd:beta") && wf.contains("Spawn msd-helper"), "{wf}");
    assert!(wf.contains("\"$HOME/.claude/msd-core/bin/gsd-tools.cjs\""), "{wf}");
    assert!(!wf.contains("gsd-core") && !wf.contains("gsd-helper"), "{wf}");
    let cmd = read(&out.join("commands/msd/alpha.md"));
    assert!(cmd.starts_with("---\nname: msd:alpha\n"), "{cmd}");
    assert!(cmd.contains("@~/.claude/msd-core/workflows/alpha.md"), "{cmd}");
    let notes = read(&out.join("msd-core/references/notes.md"));
    assert!(notes.contains("The\nhelper msd-helper writes them; gsd-tools is the reference's own helper"), "{notes}");
    for (from, to) in [
        ("gsd-core/workflows/alpha.md", "msd-core/workflows/alpha.md"),
        ("agents/gsd-helper.md", "agents/msd-helper.md"),
        ("gsd-core/references/notes.md", "msd-core/references/notes.md"),
    ] {
        assert_eq!(read(&src.join(from)).len(), read(&out.join(to)).len(), "{from} keeps its size");
    }

    // Indexes: the router's commands form its group, the rest one more; msd's section manifest
    // lists the section msd knows and not the other; every workflow and agent has a tier.
    let ns: serde_json::Value = serde_json::from_str(&read(&out.join("namespaces.json"))).unwrap();
    assert_eq!(ns["groups"][0]["name"], "things");
    assert_eq!(ns["groups"][0]["commands"], serde_json::json!(["alpha", "beta"]));
    assert_eq!(ns["groups"][1]["commands"], serde_json::json!(["gamma"]));
    let sm = read(&out.join("msd-core/workflows/section-manifest.json"));
    assert!(sm.contains("alpha-prd") && !sm.contains("alpha-odd") && !sm.contains("generated_by"), "{sm}");
    let tiers: serde_json::Value = serde_json::from_str(&read(&out.join("tiers.json"))).unwrap();
    assert_eq!(tiers["workflows"]["alpha"], "DEFAULT");
    assert_eq!(tiers["agents"]["msd-helper"], "DEFAULT");

    // The ported tree installs for every runtime.
    Install::in_world(&w).args(["-q", "--all"]).content(&out).run().success();
    let claude = w.home.join(".claude");
    assert!(claude.join("skills/msd-alpha/SKILL.md").is_file());
    assert!(claude.join("agents/msd-helper.md").is_file());
    let installed = read(&claude.join("msd-core/workflows/alpha.md"));
    let core = claude.join("msd-core").display().to_string();
    assert!(installed.contains(&format!("`{core}/workflows/alpha/steps/alpha-prd.md` now.\n")), "{installed}");
    assert!(!installed.contains("msd:section"), "msd's markers are stripped at install: {installed}");
    assert!(installed.contains("<!-- gsd:section id=\"alpha-odd\""), "the reference's comment is text: {installed}");
    // A nested layout writes the router of the ported group.
    assert!(w.home.join(".qwen/skills/msd-things/SKILL.md").is_file(), "qwen's router of the group `things`");
}

#[test]
fn refport_refuses_a_directory_that_is_not_a_reference_checkout() {
    let w = World::new();
    let out = w.tmp.path().join("ported");
    Install::in_world(&w)
        .args(["bench", "port", "--reference"])
        .arg(fixture("reference-shaped/gsd-core"))
        .arg("--out")
        .arg(&out)
        .run()
        .code(2)
        .stderr_has("no commands here: not a checkout of the reference");
    assert!(!out.exists(), "nothing is written");
}
