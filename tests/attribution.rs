//! Emitted attribution end to end, on temporary git repositories made in each test: a small
//! content tree (`tests/fixtures/attribution`) and the real `runtimes/` committed on `main`,
//! then edited, and `msd-install attribution` run inside the repository.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use msd_core::manifest::capability::Scope;
use msd_install::pipeline::target::Environment;
use msd_install::pipeline::{self, Sources};
use msd_install::pipeline::{convert, target};
use serde_json::Value;

use crate::support::{Install, Ran, World, copy_tree, fixture, repo};

const PLAN: &str = "content/msd-core/workflows/plan.md";
const AGENT: &str = "content/agents/msd-planner.md";
const RULES: &str = "content/msd-core/references/rules.md";

/// A git repository holding the fixture content and the real runtimes, committed on `main`.
struct Repo {
    w: World,
}

impl Repo {
    fn new() -> Repo {
        let w = World::new();
        let r = Repo { w };
        r.git(&["init", "-q", "-b", "main"]);
        copy_tree(&fixture("attribution"), &r.root().join("content"));
        copy_tree(&repo().join("runtimes"), &r.root().join("runtimes"));
        r.commit("base");
        r
    }

    fn root(&self) -> &Path {
        &self.w.project
    }

    fn git(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(["-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(self.root())
            .env("HOME", &self.w.home)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    fn replace(&self, rel: &str, from: &str, to: &str) {
        let text = self.read(rel);
        assert!(text.contains(from), "{rel} lacks {from:?}");
        self.write(rel, text.replacen(from, to, 1));
    }

    fn ack(&self, name: &str, entries: &[(&str, &str)]) {
        let paths: serde_json::Map<String, Value> =
            entries.iter().map(|(k, r)| (k.to_string(), serde_json::json!({ "reason": r }))).collect();
        self.write(
            &format!("tests/emitted-drift-acks/{name}.json"),
            serde_json::to_string_pretty(&serde_json::json!({"version": 1, "paths": paths})).unwrap(),
        );
    }

    /// `msd-install attribution` in this repository, to add arguments to.
    fn cmd(&self) -> Install<'_> {
        Install::in_world(&self.w).arg("attribution")
    }

    fn attribution(&self, extra: &[&str]) -> Ran<'_> {
        self.cmd().args(extra).run()
    }

    /// `attribution --json`, asserting the exit code; the report.
    fn report(&self, extra: &[&str], code: i32) -> Value {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        self.attribution(&args).code(code).json()
    }
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

fn kinds(report: &Value) -> Vec<String> {
    report["violations"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap().to_string()).collect()
}

/// (runtime, scope, path) of every moved entry.
fn moved(report: &Value) -> BTreeSet<(String, String, String)> {
    report["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["runtime"].as_str().unwrap().into(),
                m["scope"].as_str().unwrap().into(),
                m["path"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// What every runtime x scope receives from a content tree, converted in-process independently
/// of the attribution code: (runtime, scope, path) -> bytes. The synthesized files (the msd_run
/// copy and resolvers.json) are not content and are not converted here.
fn emitted(content: &Path) -> BTreeMap<(String, String, String), Vec<u8>> {
    let src = Sources { content: Some(content.to_path_buf()), runtimes: Some(repo().join("runtimes")) };
    let loaded = pipeline::load(&src).expect("loads");
    let env = Environment::golden();
    let mut out = BTreeMap::new();
    for rt in &loaded.runtimes {
        for scope in [Scope::Global, Scope::Local] {
            if scope == Scope::Local && rt.capability.local.is_none() {
                continue;
            }
            let target = target::resolve(&rt.capability, scope, None, &env).expect("resolves");
            let emission = convert::emit(&loaded.content, rt, &target).expect("emits");
            for f in emission.files {
                out.insert(
                    (rt.capability.id.clone(), scope.as_str().to_string(), f.path.to_string()),
                    f.bytes.to_vec(),
                );
            }
        }
    }
    out
}

/// Runtime x scope emissions: every runtime's global scope, and the local one where it has one.
fn emissions() -> usize {
    pipeline::load_runtimes(&Default::default())
        .unwrap()
        .iter()
        .map(|r| 1 + usize::from(r.capability.local.is_some()))
        .sum()
}

fn runtime_ids() -> BTreeSet<String> {
    pipeline::load_runtimes(&Default::default()).unwrap().into_iter().map(|r| r.capability.id).collect()
}

#[test]
fn attribution_clean_when_nothing_changed() {
    let r = Repo::new();
    let report = r.report(&[], 0);
    assert_eq!(report["ok"], true);
    assert_eq!(report["counts"]["emissions_base"], emissions(), "every runtime x scope");
    assert_eq!(emissions(), 2 * runtime_ids().len() - 2, "kimi and kimi-code have no local scope");
    assert_eq!(report["counts"]["files_base"], report["counts"]["files_current"]);
    let c = &report["counts"];
    assert_eq!(
        c["excluded"].as_u64().unwrap() as usize,
        emissions() + 8,
        "the installed msd_run (one per emission), Cline's hook scripts (2: PreToolUse, global and local), the OpenCode and Kilo plugins (4) and Pi's extension (2) are programs: left out"
    );
    assert_eq!(
        c["unchanged"].as_u64().unwrap() as usize + emissions() + 8,
        c["files_current"].as_u64().unwrap() as usize
    );
    assert!(report["moved"].as_array().unwrap().is_empty());
    assert_eq!(report["home"], "/home/user", "both sides emit for the fixed home of gen golden");
    r.attribution(&[]).stdout_has("clean: every emitted change is explained");
    // From a subdirectory, the root is the top of the work tree; from elsewhere, --root names it.
    let out = r.cmd().json().cwd(r.root().join("content/agents")).run();
    assert_eq!(out.json()["counts"], report["counts"], "{}", out.describe());
    let root = r.root().to_str().unwrap();
    let out = r.cmd().json().args(["--root", root]).cwd(&r.w.home).run();
    assert_eq!(out.json()["counts"], report["counts"], "{}", out.describe());
}

#[test]
fn attribution_workflow_edit_moves_exactly_its_paths_in_every_runtime() {
    let r = Repo::new();
    let before = emitted(&r.root().join("content"));
    r.replace(PLAN, "Plan a phase.", "Plan phases.");
    let after = emitted(&r.root().join("content"));
    let expected: BTreeSet<_> =
        after.iter().filter(|(k, v)| before.get(*k) != Some(*v)).map(|(k, _)| k.clone()).collect();
    assert_eq!(expected.len(), emissions(), "the workflow lands once in every runtime x scope");

    let report = r.report(&[], 0);
    assert_eq!(moved(&report), expected);
    for m in report["moved"].as_array().unwrap() {
        assert_eq!(strs(&m["attributed_to"]), [PLAN], "{m}");
        assert_eq!(m["change"], "changed");
        assert_eq!(m["after"].as_u64().unwrap() + 1, m["before"].as_u64().unwrap());
    }
    let runtimes: BTreeSet<String> = expected.iter().map(|(rt, _, _)| rt.clone()).collect();
    assert_eq!(runtimes, runtime_ids(), "moved in every runtime");
    let groups = report["by_source"].as_object().unwrap();
    assert_eq!(groups.keys().collect::<Vec<_>>(), [PLAN]);
    assert_eq!(groups[PLAN]["status"], "modified");
    assert_eq!(groups[PLAN]["touched"].as_array().unwrap().len(), emissions());
    // Shrinking is reported, never gated.
    let shrunk = report["shrunk"].as_array().unwrap();
    assert_eq!(shrunk.len(), emissions());
    assert!(shrunk.iter().all(|s| s["key"] == PLAN));

    let text = r.attribution(&[]).stdout();
    assert!(
        text.contains(&format!(
            "{PLAN} (modified): {} emitted file(s) in {} runtime(s)",
            emissions(),
            runtime_ids().len()
        )),
        "{text}"
    );
    assert!(text.contains("claude       global  changed  msd-core/workflows/plan.md"), "{text}");
    assert!(text.contains("B -> "), "bytes before and after: {text}");
    assert!(text.contains(&format!("{PLAN}: shrank in {} emitted file(s), -1 B", emissions())), "{text}");
}

#[test]
fn attribution_deleted_and_added_sources_explain_removed_and_added_paths() {
    let r = Repo::new();
    std::fs::remove_file(r.root().join("content/msd-core/references/glossary.md")).unwrap();
    r.write("content/msd-core/references/style.md", "# Style\n\nShort sentences.\n");
    let report = r.report(&[], 0);
    assert_eq!(report["counts"]["removed"].as_u64().unwrap() as usize, emissions());
    assert_eq!(report["counts"]["added"].as_u64().unwrap() as usize, emissions());
    let groups = report["by_source"].as_object().unwrap();
    assert_eq!(groups["content/msd-core/references/glossary.md"]["status"], "deleted");
    assert_eq!(groups["content/msd-core/references/style.md"]["status"], "untracked");
    // Once staged, the new file is `added`.
    r.git(&["add", "-A"]);
    let report = r.report(&[], 0);
    assert_eq!(report["by_source"]["content/msd-core/references/style.md"]["status"], "added");
}

#[test]
fn attribution_growth_needs_an_acknowledgement() {
    let r = Repo::new();
    let before = emitted(&r.root().join("content"));
    r.replace(AGENT, "You plan.", "You plan, one phase at a time.");
    let after = emitted(&r.root().join("content"));
    let expected: BTreeSet<_> =
        after.iter().filter(|(k, v)| before.get(*k) != Some(*v)).map(|(k, _)| k.clone()).collect();
    let report = r.report(&[], 1);
    let growth: Vec<&Value> =
        report["violations"].as_array().unwrap().iter().filter(|v| v["kind"] == "unacknowledged_growth").collect();
    assert!(!growth.is_empty());
    assert_eq!(kinds(&report).len(), growth.len(), "growth is the only violation: {}", report["violations"]);
    for g in &growth {
        assert_eq!(g["key"], AGENT, "keyed by the content path, not a bare name");
        assert!(g["after"].as_u64() > g["before"].as_u64());
    }
    let places: BTreeSet<(String, String, String)> = growth
        .iter()
        .map(|g| {
            (
                g["runtime"].as_str().unwrap().into(),
                g["scope"].as_str().unwrap().into(),
                g["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(places, expected, "every emitted file of the agent that grew, and nothing else");
    assert_eq!(moved(&report), expected);
    let text = r.attribution(&[]).stdout();
    assert!(text.contains(&format!("{AGENT}: grew in")) && text.contains("NOT ACKNOWLEDGED"), "{text}");
    assert!(text.contains(&format!("\"{AGENT}\": {{")), "a ready fragment is suggested: {text}");

    r.ack("planner-steps", &[(AGENT, "the planner states its scope")]);
    let report = r.report(&[], 0);
    assert!(report["growth"].as_array().unwrap().iter().all(|g| g["acknowledged_by"][0]["key"] == AGENT));
    assert_eq!(report["acks"][0]["status"], "used");
    assert_eq!(report["acks"][0]["covered"].as_u64(), Some(growth.len() as u64));

    // Committed, the acknowledgement is spent: the next growth needs a new one.
    r.commit("grow the planner");
    r.replace(AGENT, "one phase at a time", "one phase at a time, never more");
    let report = r.report(&[], 1);
    assert!(kinds(&report).iter().all(|k| k == "unacknowledged_growth"), "{}", report["violations"]);
    assert_eq!(report["acks"][0]["status"], "spent");
    r.ack("planner-more", &[(AGENT, "the planner says never more")]);
    r.report(&[], 0);
}

#[test]
fn attribution_stale_acknowledgement_fails() {
    let r = Repo::new();
    r.ack("nothing", &[(AGENT, "the planner will grow")]);
    let report = r.report(&[], 1);
    assert_eq!(
        report["violations"],
        serde_json::json!([{"kind": "stale_ack", "file": "tests/emitted-drift-acks/nothing.json", "key": AGENT}])
    );
    // An acknowledgement of a move its own changed source already explains is stale too.
    r.replace(RULES, "Keep plans small.", "Keep plans short.");
    r.ack("nothing", &[(RULES, "explained by the edit itself")]);
    let report = r.report(&[], 1);
    assert_eq!(kinds(&report), ["stale_ack"]);
    let text = r.attribution(&[]).stdout();
    assert!(text.contains("STALE"), "{text}");
}

#[test]
fn attribution_new_file_cap_boundary() {
    let r = Repo::new();
    let big = "content/msd-core/workflows/big.md";
    for (size, code) in [(32_767usize, 0), (32_768, 0), (32_769, 1)] {
        let mut text = "a".repeat(size - 1);
        text.push('\n');
        r.write(big, &text);
        let report = r.report(&[], code);
        let new: Vec<&Value> = report["new_files"].as_array().unwrap().iter().collect();
        assert_eq!(new.len(), emissions(), "measured in every runtime x scope");
        assert!(new.iter().all(|n| n["key"] == big && n["bytes"] == size as u64 && n["cap"] == 32_768));
        if code == 0 {
            assert!(kinds(&report).is_empty(), "{size}: {}", report["violations"]);
        } else {
            assert_eq!(kinds(&report), vec!["new_file_cap".to_string(); emissions()], "{size}");
        }
    }
    // No acknowledgement exempts it: the acknowledgement is stale and the cap still fails.
    r.ack("big", &[(big, "it is big on purpose")]);
    let report = r.report(&[], 1);
    let k = kinds(&report);
    assert_eq!(k.iter().filter(|k| *k == "new_file_cap").count(), emissions());
    assert!(k.contains(&"stale_ack".to_string()));
}

#[test]
fn attribution_new_command_explains_the_references_it_rewrites() {
    let r = Repo::new();
    // rules.md mentions /msd:review before the command exists; adding it rewrites the mention.
    r.write(
        "content/commands/msd/review.md",
        "---\nname: msd:review\ndescription: Review a finished phase\n---\nReview the phase.\n",
    );
    r.replace("content/namespaces.json", "[\"execute\", \"plan\"]", "[\"execute\", \"plan\", \"review\"]");
    // The generated section manifest lists every command's arguments: regenerate it.
    let content = r.root().join("content");
    Install::in_world(&r.w).args(["gen", "section-manifest", "--write"]).content(&content).run().success();
    let report = r.report(&[], 0);
    let review = "content/commands/msd/review.md";
    let rules: Vec<&Value> = report["moved"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["path"].as_str().unwrap().ends_with("references/rules.md"))
        .collect();
    // Every runtime but Gemini (whose command syntax is /msd:<stem> itself) rewrites it.
    assert_eq!(rules.len(), emissions() - 2, "{rules:?}");
    assert!(rules.iter().all(|m| m["runtime"] != "gemini"));
    for m in rules {
        assert_eq!(strs(&m["attributed_to"]), [review], "{m}");
        assert!(!strs(&m["sources"]).contains(&review.to_string()), "not a direct source: {m}");
    }
    assert!(report["by_source"][review]["touched"].as_array().unwrap().len() > 32);
}

/// A base msd-install that emits differently from the same sources, as a build with other
/// emitter code does: it runs this binary with `--runtimes` swapped for a copy whose Claude
/// manifest has one more rewrite. Nothing in the repository changes.
#[cfg(unix)]
fn drifting_base_binary(r: &Repo) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let alt = r.w.tmp.path().join("alt-runtimes");
    copy_tree(&repo().join("runtimes"), &alt);
    let manifest = alt.join("claude/capability.json");
    let mut cap: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    cap["rewrites"] = serde_json::json!([{"from": "Keep plans small.", "to": "Keep plans tiny."}]);
    std::fs::write(&manifest, serde_json::to_string_pretty(&cap).unwrap()).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("msd-install");
    let script = r.w.tmp.path().join("base-msd-install");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n# Passes every argument on, the value of --runtimes replaced.\nn=$#\nnext=\nfor a do\n  if [ \"$next\" = 1 ]; then a='{alt}'; next=; elif [ \"$a\" = --runtimes ]; then next=1; fi\n  set -- \"$@\" \"$a\"\ndone\nshift \"$n\"\nexec '{bin}' \"$@\"\n",
            alt = alt.display(),
            bin = bin.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[cfg(unix)]
#[test]
fn attribution_emitter_only_change_is_unattributable_until_acknowledged() {
    let r = Repo::new();
    // One binary on both sides: a change to the emitter's code cannot move a byte.
    r.report(&[], 0);
    let base_bin = drifting_base_binary(&r);
    let bin = base_bin.to_str().unwrap();
    let report = r.report(&["--base-binary", bin], 1);
    assert_eq!(report["base"]["binary"], bin);
    let v = report["violations"].as_array().unwrap();
    let places: BTreeSet<(&str, &str, &str)> = v
        .iter()
        .map(|v| (v["runtime"].as_str().unwrap(), v["scope"].as_str().unwrap(), v["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        places,
        BTreeSet::from([
            ("claude", "global", "msd-core/references/rules.md"),
            ("claude", "local", "msd-core/references/rules.md")
        ])
    );
    for v in v {
        assert_eq!(v["kind"], "unattributable");
        assert_eq!(v["change"], "changed");
        assert_eq!(strs(&v["sources"]), [RULES, "runtimes/claude/capability.json"]);
    }
    let text = r.attribution(&["--base-binary", bin]).stdout();
    assert!(text.contains("unattributable (moved, and none of their sources changed)"), "{text}");
    assert!(text.contains(&format!("base emitted by {bin}")), "{text}");

    r.ack("claude-rewrite", &[("runtimes/claude/capability.json", "the emitter no longer rewrites this line")]);
    let report = r.report(&["--base-binary", bin], 0);
    let acked: Vec<&Value> = report["moved"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["acknowledged_by"].as_array().unwrap().is_empty())
        .collect();
    assert_eq!(acked.len(), 2);
    assert_eq!(report["acks"][0]["status"], "used");
}

#[test]
fn attribution_default_base_is_the_merge_base_with_main() {
    let r = Repo::new();
    let main = r.git(&["rev-parse", "HEAD"]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.replace(RULES, "Keep plans small.", "Keep plans short.");
    r.commit("shorter");
    let report = r.report(&[], 0);
    assert_eq!(report["base"]["commit"], main.as_str());
    assert_eq!(report["base"]["rev"], "merge-base of HEAD and main");
    assert_eq!(report["by_source"].as_object().unwrap().keys().collect::<Vec<_>>(), [RULES]);
    // origin/main, when present, is preferred (CI checkouts have no local main).
    r.git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    let report = r.report(&[], 0);
    assert_eq!(report["base"]["rev"], "merge-base of HEAD and origin/main");
    assert!(report["moved"].as_array().unwrap().is_empty());
    // --base wins over both.
    let report = r.report(&["--base", &main], 0);
    assert_eq!(report["base"]["rev"], main.as_str());
    assert_eq!(report["counts"]["changed"].as_u64().unwrap() as usize, emissions());
}

#[test]
fn attribution_rejects_malformed_acknowledgements() {
    let r = Repo::new();
    r.write(
        "tests/emitted-drift-acks/bad.json",
        "{\n  \"version\": 1,\n  \"paths\": {\n    \"__proto__\": {\"reason\": \"r\"}\n  }\n}\n",
    );
    r.attribution(&[])
        .code(3)
        .stderr_has("tests/emitted-drift-acks/bad.json:4:5: reserved key `__proto__`")
        .stderr_has("hint:");
    r.write("tests/emitted-drift-acks/bad.json", "{\"version\": 1, \"paths\": {\"a.md\": {\"reason\": \"\u{200B}\"}}}");
    let doc = r.attribution(&["--json"]).code(3).json();
    assert_eq!(doc["ok"], false);
    assert!(doc["error"].as_str().unwrap().contains("invisible character U+200B"), "{doc}");
}

#[test]
fn attribution_errors_have_distinct_exit_codes() {
    let r = Repo::new();
    r.cmd()
        .args(["--base", "no-such-rev"])
        .note("an unknown base is a usage error")
        .run()
        .code(2)
        .stderr_has("base revision `no-such-rev` does not resolve");

    Install::new()
        .args(["attribution", "--base", "HEAD"])
        .note("not a git work tree")
        .run()
        .code(2)
        .stderr_has("is not inside a git repository");

    // A base binary that is not msd-install.
    r.attribution(&["--base-binary", "/bin/true"]).code(4).stderr_has("printed no inventory document");

    // A working tree that does not install is the content error's own code.
    r.write("content/commands/msd/broken.md", "no frontmatter\n");
    r.attribution(&[]).code(3).stderr_has("working tree");
}

#[test]
fn attribution_inventory_matches_the_emitted_tree() {
    let content = fixture("attribution");
    let inv = Install::new().arg("inventory").content(&content).run().success().json();
    assert_eq!(inv["format"], "msd-emitted-inventory");
    assert_eq!(inv["version"], 1);
    assert_eq!(inv["emissions"].as_array().unwrap().len(), emissions());
    let emitted = emitted(&content);
    let helper = std::fs::read(assert_cmd::cargo::cargo_bin("msd_run")).unwrap();
    let (mut listed, mut synthesized, mut hook_scripts) = (0, 0, 0);
    for e in inv["emissions"].as_array().unwrap() {
        for f in e["files"].as_array().unwrap() {
            let key = (
                e["runtime"].as_str().unwrap().into(),
                e["scope"].as_str().unwrap().into(),
                f["path"].as_str().unwrap().into(),
            );
            let Some(bytes) = emitted.get(&key) else {
                // Added beside the content: the msd_run binary, the manifest's resolvers and
                // runtime.json, and the hook scripts a manifest declares (they call the helper).
                match f["kind"].as_str().unwrap() {
                    "program" if key.2.ends_with("/bin/msd_run") => {
                        assert_eq!(f["sha256"].as_str().unwrap(), crate::support::sha256(&helper));
                        synthesized += 1;
                    }
                    "program" => {
                        let manifest = format!("runtimes/{}/capability.json", key.0);
                        let mut want = vec![manifest.as_str()];
                        // A JS module also comes from the shared prelude and its format's template.
                        let cap: serde_json::Value =
                            serde_json::from_str(&std::fs::read_to_string(repo().join(&manifest)).unwrap()).unwrap();
                        let format = cap["hook_files"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .find(|h| h["path"] == key.2.as_str())
                            .and_then(|h| h["format"].as_str());
                        match format {
                            Some("js-plugin") => {
                                want.extend([
                                    "src/pipeline/convert/js_prelude.js",
                                    "src/pipeline/convert/js_plugin.js",
                                ]);
                            }
                            Some("pi-extension") => {
                                want.extend([
                                    "src/pipeline/convert/js_prelude.js",
                                    "src/pipeline/convert/pi_extension.js",
                                ]);
                            }
                            _ => {}
                        }
                        assert_eq!(strs(&f["sources"]), want, "{key:?}: a hook file of the manifest");
                        hook_scripts += 1;
                    }
                    _ => {
                        assert!(key.2.ends_with("/resolvers.json") || key.2.ends_with("/runtime.json"), "{key:?}");
                        synthesized += 1;
                    }
                }
                continue;
            };
            assert_eq!(f["bytes"], bytes.len() as u64);
            assert_eq!(f["sha256"].as_str().unwrap(), crate::support::sha256(bytes));
            assert!(!strs(&f["sources"]).is_empty());
            listed += 1;
        }
    }
    assert_eq!(listed, emitted.len());
    assert_eq!(synthesized, 3 * emissions(), "helper, resolvers.json and runtime.json in every emission");
    assert!(hook_scripts > 0, "Cline's global hooks are scripts");
}

#[test]
fn attribution_ci_runs_against_the_base_of_the_change() {
    let ci: Value = yaml_serde::from_str(&std::fs::read_to_string(repo().join(".github/workflows/ci.yml")).unwrap())
        .expect("ci.yml parses");
    let steps = ci["jobs"]["attribution"]["steps"].as_array().expect("an attribution job");
    assert_eq!(steps[0]["with"]["fetch-depth"], 0, "the base needs the history");
    let scripts: String = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(scripts.contains("git merge-base \"origin/$BASE_REF\" HEAD"), "pull_request: the merge-base");
    assert!(scripts.contains("$BEFORE"), "push: the commit before the push");
    assert!(scripts.contains(".ci/attribution \"$BASE\""));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(repo().join(".ci/attribution")).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, ".ci/attribution is executable");
    }
}
