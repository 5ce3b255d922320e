//! The roster (issue 34): every runtime's status and tested range in `runtimes`, the ranges
//! tied to the acceptance tier's pins, the Gemini sunset notice at install, in `runtimes` and in
//! `status`, Antigravity's layout, and the manifest rules of `tested`, `sunset` and
//! `also_reads`.

use crate::support::{Install, World, copy_tree, repo};

fn runtimes_doc(w: &World) -> serde_json::Value {
    Install::in_world(w).arg("runtimes").json().run().success().json()
}

fn row<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["runtimes"].as_array().unwrap().iter().find(|r| r["id"] == id).unwrap()
}

#[test]
fn roster_runtimes_lists_each_status_and_the_tested_range_of_each_tier_pin() {
    let w = World::new();
    let doc = runtimes_doc(&w);
    for r in doc["runtimes"].as_array().unwrap() {
        let s = r["status"].as_str().unwrap();
        assert!(["primary", "supported", "experimental", "sunset"].contains(&s), "{}: {s}", r["id"]);
    }
    assert_eq!(row(&doc, "gemini")["status"], "sunset");
    assert_eq!(row(&doc, "claude")["status"], "primary");
    assert_eq!(row(&doc, "antigravity")["tested"], serde_json::Value::Null, "no CLI of it can be tested here");
    // Every probe of the acceptance tier pins a version: the manifest's tested range holds it.
    let probes = repo().join("tests/real-runtimes/probes");
    let mut n = 0;
    for e in std::fs::read_dir(&probes).unwrap() {
        let p = e.unwrap().path();
        let id = p.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        let pin = text.lines().find_map(|l| l.strip_prefix("# pin: ")).unwrap().trim();
        let (pkg, ver) = match pin.strip_prefix("pypi:") {
            Some(rest) => rest.split_once("==").map(|(p, v)| (format!("pypi:{p}"), v)).unwrap(),
            None => pin.rsplit_once('@').map(|(p, v)| (p.to_string(), v)).unwrap(),
        };
        let t = &row(&doc, &id)["tested"];
        assert_eq!(t["package"], pkg.as_str(), "{id}: tested.package is the tier's pin");
        let v = |s: &str| msd_core::manifest::capability::parse_version(s).unwrap();
        assert!(
            v(t["min"].as_str().unwrap()) <= v(ver) && v(ver) <= v(t["max"].as_str().unwrap()),
            "{id}: the pinned {ver} is inside {}..{}",
            t["min"],
            t["max"]
        );
        n += 1;
    }
    assert!(n >= 13, "the tier has a probe per CLI ({n})");
    assert_eq!(row(&doc, "pi")["tested"]["package"], "@mariozechner/pi-coding-agent");
    let text = Install::in_world(&w).arg("runtimes").run().success().stdout();
    assert!(text.lines().any(|l| l.starts_with("pi ") && l.contains("@mariozechner/pi-coding-agent 0.73.1")), "{text}");
    assert!(text.contains("gemini: Google sunset Gemini CLI"), "{text}");
}

#[test]
fn roster_readme_lists_every_runtime_with_its_tested_range() {
    let w = World::new();
    let doc = runtimes_doc(&w);
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for r in doc["runtimes"].as_array().unwrap() {
        let id = r["id"].as_str().unwrap();
        let line = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{id}` |")))
            .unwrap_or_else(|| panic!("README.md's runtime table lacks `{id}`"));
        let tested = match r["tested"].as_object() {
            Some(t) => format!("`{}` {}", t["package"].as_str().unwrap(), t["min"].as_str().unwrap()),
            None => "-".to_string(),
        };
        assert!(line.contains(&tested), "README's row of {id} says {tested}: {line}");
        assert!(line.contains(r["status"].as_str().unwrap()), "README's row of {id} gives its status: {line}");
    }
}

#[test]
fn roster_gemini_install_and_status_say_it_was_sunset_and_name_antigravity() {
    let w = World::new();
    let out = Install::in_world(&w).runtime("gemini").run().success().stdout();
    assert!(out.contains("note: Google sunset Gemini CLI for individual users on 2026-06-18"), "{out}");
    assert!(out.contains("`msd-install -r antigravity`"), "{out}");
    let doc = Install::in_world(&w).runtime("gemini").json().run().success().json();
    let notes = doc["runtimes"][0]["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("-r antigravity")), "{notes:?}");
    let status = Install::in_world(&w).status().run().success().stdout();
    assert!(status.contains("note: gemini: Google sunset Gemini CLI"), "{status}");
    let sdoc = Install::in_world(&w).status().json().run().success().json();
    assert!(sdoc["installs"][0]["notice"].as_str().unwrap().contains("antigravity"));
    // Other runtimes say nothing of it.
    let claude = Install::in_world(&w).runtime("claude").run().success().stdout();
    assert!(!claude.contains("sunset"), "{claude}");
}

#[test]
fn roster_antigravity_installs_where_agy_reads_and_still_finds_an_older_install() {
    let w = World::new();
    Install::in_world(&w).runtime("antigravity").arg("-q").run().success();
    let skill = std::fs::read_to_string(w.home.join(".gemini/config/skills/msd-help/SKILL.md")).unwrap();
    assert!(skill.contains("<runtime_adapter>") && skill.contains("view_file"), "the adapter maps agy's tools");
    assert!(!w.home.join(".gemini/config/agents").exists(), "no agent files where no source says agy reads them");
    Install::in_world(&w).runtime("antigravity").arg("-q").local().run().success();
    assert!(w.project.join(".agents/skills/msd-help/SKILL.md").is_file());
    // An install made in the older layout is found there (to update or uninstall it).
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".gemini/antigravity/msd-core")).unwrap();
    std::fs::write(w.home.join(".gemini/antigravity/msd-core/VERSION"), "0.3.4\n").unwrap();
    let doc = runtimes_doc(&w);
    assert_eq!(row(&doc, "antigravity")["global_home"], w.home.join(".gemini/antigravity").display().to_string());
}

#[test]
fn roster_manifest_rules_of_tested_sunset_and_also_reads() {
    let cases = [
        ("pi", "\"min\": \"0.73.1\"", "\"min\": \"0.73\"", "tested.min `0.73` is not a version"),
        ("pi", "\"min\": \"0.73.1\"", "\"min\": \"0.80.0\"", "tested range 0.80.0..0.73.1 is empty"),
        ("pi", "\"date\": \"2026-12-05\"", "\"date\": \"05.12.2026\"", "tested.date `05.12.2026` is not a date"),
        ("gemini", "\"successor\": \"antigravity\"", "\"successor\": \"agy\"", "sunset.successor `agy` is no runtime"),
        ("codex", "\"~/.agents/skills\",", "\"~/../skills\",", "also_reads: `~/../skills`"),
    ];
    for (id, from, to, message) in cases {
        let w = World::new();
        let dir = w.tmp.path().join("runtimes");
        copy_tree(&repo().join("runtimes"), &dir);
        let p = dir.join(id).join("capability.json");
        let text = std::fs::read_to_string(&p).unwrap();
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text, "{id}: {from}");
        std::fs::write(&p, bad).unwrap();
        Install::in_world(&w).arg("runtimes").arg("--runtimes").arg(&dir).run().code(3).stderr_has(message);
    }
}
