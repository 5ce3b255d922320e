//! The context predicate store end to end: `msd_run query context-predicates` against an
//! installed CONTEXT.md, and `msd-install gen context-index --check|--write` with its typed
//! failure reasons (SPEC section 10, contracts section 8).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{World, copy_tree, fixture, json, repo};

fn installed(w: &World) -> PathBuf {
    w.install().args(["--content"]).arg(fixture("seams")).assert().success();
    w.home.join(".claude/msd-core")
}

fn query(w: &World, core: &Path, args: &[&str]) -> Output {
    w.run().arg("--core").arg(core).args(["query", "context-predicates"]).args(args).output().unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    v["predicates"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn predicates_query_ands_selectors_over_the_installed_store() {
    let w = World::new();
    let core = installed(&w);
    let out = query(&w, &core, &["--class", "RULE"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(v["matched"], 3);
    assert_eq!(ids(&v), ["RULE.install.atomic", "RULE.install.lock", "RULE.install.worktree"]);
    let first = &v["predicates"][0];
    assert_eq!(first["class"], "RULE");
    assert_eq!(first["section"], "Install");
    assert_eq!(first["line"], 7);
    assert!(first["value"].as_str().unwrap().starts_with("the new tree"));
    // Selectors are ANDed; --contains is case-insensitive over "id value".
    let v = json(&query(&w, &core, &["--contains", "WORKTREE"]));
    assert_eq!(ids(&v), ["RULE.install.worktree", "CONFIG.workflow.use_worktrees"]);
    let v = json(&query(&w, &core, &["--contains", "worktree", "--class", "CONFIG"]));
    assert_eq!(ids(&v), ["CONFIG.workflow.use_worktrees"]);
    let v = json(&query(&w, &core, &["--prefix=CAP.", "--contains", "57344"]));
    assert_eq!(ids(&v), ["CAP.agent.xl"]);
    // Fenced and commented declarations are never live; prose never declares.
    let v = json(&query(&w, &core, &["--class", "CAP"]));
    assert_eq!(ids(&v), ["CAP.workflow.xl", "CAP.agent.xl"]);
    assert_eq!(json(&query(&w, &core, &["--prefix", "RULE.prose"]))["matched"], 0);
    // Usage: at least one selector, no empty value.
    assert_eq!(query(&w, &core, &[]).status.code(), Some(2));
    assert_eq!(query(&w, &core, &["--class", ""]).status.code(), Some(2));
    assert_eq!(query(&w, &core, &["--class"]).status.code(), Some(2));
}

#[test]
fn predicates_query_reports_store_problems_on_stderr_and_missing_store_as_damage() {
    let w = World::new();
    let core = installed(&w);
    let store = core.join("CONTEXT.md");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("{text}\n`CAP.agent.xl=again`\n`bad..id=x`\n")).unwrap();
    let out = query(&w, &core, &["--class", "CAP"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`CAP.agent.xl` is declared 2 times"), "{err}");
    assert!(err.contains("empty-segment"), "{err}");
    std::fs::remove_file(&store).unwrap();
    let out = query(&w, &core, &["--class", "CAP"]);
    assert_eq!(out.status.code(), Some(3));
}

/// A copy of the seams content in the world, for the generator to rewrite.
fn content(w: &World) -> PathBuf {
    let dir = w.tmp.path().join("content");
    copy_tree(&fixture("seams"), &dir);
    dir
}

fn gen_index(w: &World, dir: &Path, mode: &str) -> Output {
    w.install().args(["gen", "context-index", mode, "--json", "--content"]).arg(dir).output().unwrap()
}

fn reason(out: &Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&out.stdout)));
    v["reason"].as_str().unwrap().to_string()
}

#[test]
fn predicates_index_write_check_and_byte_stability() {
    let w = World::new();
    let dir = content(&w);
    std::fs::remove_file(dir.join("CONTEXT-INDEX.json")).unwrap();
    let out = gen_index(&w, &dir, "--check");
    assert_eq!((out.status.code(), reason(&out).as_str()), (Some(1), "fail_index_missing"));
    let out = gen_index(&w, &dir, "--write");
    assert_eq!((out.status.code(), reason(&out).as_str()), (Some(0), "written"));
    let first = std::fs::read(dir.join("CONTEXT-INDEX.json")).unwrap();
    assert_eq!(first, std::fs::read(fixture("seams").join("CONTEXT-INDEX.json")).unwrap());
    let out = gen_index(&w, &dir, "--write");
    assert_eq!(reason(&out), "unchanged");
    assert_eq!(std::fs::read(dir.join("CONTEXT-INDEX.json")).unwrap(), first, "byte-identical across runs");
    let out = gen_index(&w, &dir, "--check");
    assert_eq!((out.status.code(), reason(&out).as_str()), (Some(0), "ok_up_to_date"));
    let text = String::from_utf8(first).unwrap();
    assert!(!text.contains("\"line\""), "the committed index carries no line numbers");
    // A CRLF checkout of the index is up to date.
    std::fs::write(dir.join("CONTEXT-INDEX.json"), text.replace('\n', "\r\n")).unwrap();
    assert_eq!(gen_index(&w, &dir, "--check").status.code(), Some(0));
    // Printing writes nothing.
    let out = w.install().args(["gen", "context-index", "--content"]).arg(&dir).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), text);
}

#[test]
fn predicates_index_unchanged_by_a_line_shift_and_stale_after_a_value_edit() {
    let w = World::new();
    let dir = content(&w);
    let store = dir.join("CONTEXT.md");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, text.replace("## Install\n", "## Install\n\nA new paragraph moves every line down.\n\n"))
        .unwrap();
    assert_eq!(gen_index(&w, &dir, "--check").status.code(), Some(0), "a pure line shift changes nothing");
    std::fs::write(&store, text.replace("57344 bytes", "57345 bytes")).unwrap();
    let out = gen_index(&w, &dir, "--check");
    assert_eq!((out.status.code(), reason(&out).as_str()), (Some(1), "fail_stale"));
    // Without --json the failure shows the diff and the fixing command.
    let out = w.install().args(["gen", "context-index", "--check", "--content"]).arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fail_stale") && err.contains("-      \"value\": \"57344 bytes\""), "{err}");
    assert!(err.contains("+      \"value\": \"57345 bytes\""), "{err}");
    assert!(err.contains(&format!("msd-install gen context-index --write --content {}", dir.display())), "{err}");
    // An added predicate and a changed class set are stale too.
    std::fs::write(&store, format!("{text}\n`NEW.fact=1`\n")).unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_stale");
}

#[test]
fn predicates_index_fails_on_duplicates_malformed_lines_and_bad_files() {
    let w = World::new();
    let dir = content(&w);
    let store = dir.join("CONTEXT.md");
    let text = std::fs::read_to_string(&store).unwrap();
    // A duplicate fails --check and --write, named with every line it is on.
    std::fs::write(&store, format!("{text}\n- `RULE.install.lock=again`\n")).unwrap();
    for mode in ["--check", "--write"] {
        let out = gen_index(&w, &dir, mode);
        assert_eq!((out.status.code(), reason(&out).as_str()), (Some(1), "fail_duplicate_ids"), "{mode}");
    }
    let out = w.install().args(["gen", "context-index", "--check", "--content"]).arg(&dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let last = text.lines().count() + 2;
    assert!(err.contains(&format!("RULE.install.lock declared 2 times, on lines 8, {last}")), "{err}");
    // A malformed declaration fails with its line and reason.
    std::fs::write(&store, format!("{text}\n`rule.lower=x`\n")).unwrap();
    let out = w.install().args(["gen", "context-index", "--check", "--content"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fail_malformed_predicates") && err.contains("lowercase-leading-class"), "{err}");
    // CRLF sources parse like LF ones.
    std::fs::write(&store, text.replace('\n', "\r\n")).unwrap();
    assert_eq!(gen_index(&w, &dir, "--check").status.code(), Some(0));
    // Corrupt and missing files.
    std::fs::write(dir.join("CONTEXT-INDEX.json"), "{\"predicates\": 3}").unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_index_unparseable");
    std::fs::write(dir.join("CONTEXT-INDEX.json"), "{").unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_index_unparseable");
    std::fs::remove_file(&store).unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_context_missing");
    let out = w.install().args(["gen", "context-index", "--check", "--write", "--content"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "--check and --write together are a usage error");
}

#[test]
fn predicates_real_content_index_is_current() {
    let w = World::new();
    let out = w
        .install()
        .args(["gen", "context-index", "--check", "--content"])
        .arg(repo().join("content"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
