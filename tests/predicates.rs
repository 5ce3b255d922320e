//! The context predicate store end to end: `msd_run query context-predicates` against an
//! installed CONTEXT.md, and `msd-install gen context-index --check|--write` with its typed
//! failure reasons (SPEC section 10, contracts section 8).

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::support::{Install, Ran, World, copy_tree, fixture, repo};

fn installed(w: &World) -> PathBuf {
    Install::in_world(w).content(fixture("seams")).run().success();
    w.home.join(".claude/msd-core")
}

fn query<'w>(w: &'w World, core: &Path, args: &[&str]) -> Ran<'w> {
    Install::in_world(w).helper().arg("--core").arg(core).args(["query", "context-predicates"]).args(args).run()
}

fn ids(v: &Value) -> Vec<String> {
    v["predicates"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn predicates_query_ands_selectors_over_the_installed_store() {
    let w = World::new();
    let core = installed(&w);
    let v = query(&w, &core, &["--class", "RULE"]).success().json();
    assert_eq!(v["matched"], 3);
    assert_eq!(ids(&v), ["RULE.install.atomic", "RULE.install.lock", "RULE.install.worktree"]);
    let first = &v["predicates"][0];
    assert_eq!(first["class"], "RULE");
    assert_eq!(first["section"], "Install");
    assert_eq!(first["line"], 7);
    assert!(first["value"].as_str().unwrap().starts_with("the new tree"));
    // Selectors are ANDed; --contains is case-insensitive over "id value".
    let v = query(&w, &core, &["--contains", "WORKTREE"]).json();
    assert_eq!(ids(&v), ["RULE.install.worktree", "CONFIG.workflow.use_worktrees"]);
    let v = query(&w, &core, &["--contains", "worktree", "--class", "CONFIG"]).json();
    assert_eq!(ids(&v), ["CONFIG.workflow.use_worktrees"]);
    let v = query(&w, &core, &["--prefix=CAP.", "--contains", "57344"]).json();
    assert_eq!(ids(&v), ["CAP.agent.xl"]);
    // Fenced and commented declarations are never live; prose never declares.
    let v = query(&w, &core, &["--class", "CAP"]).json();
    assert_eq!(ids(&v), ["CAP.workflow.xl", "CAP.agent.xl"]);
    assert_eq!(query(&w, &core, &["--prefix", "RULE.prose"]).json()["matched"], 0);
    // Usage: at least one selector, no empty value.
    query(&w, &core, &[]).code(2);
    query(&w, &core, &["--class", ""]).code(2);
    query(&w, &core, &["--class"]).code(2);
}

#[test]
fn predicates_query_reports_store_problems_on_stderr_and_missing_store_as_damage() {
    let w = World::new();
    let core = installed(&w);
    let store = core.join("CONTEXT.md");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, format!("{text}\n`CAP.agent.xl=again`\n`bad..id=x`\n")).unwrap();
    query(&w, &core, &["--class", "CAP"])
        .success()
        .stderr_has("`CAP.agent.xl` is declared 2 times")
        .stderr_has("empty-segment");
    std::fs::remove_file(&store).unwrap();
    query(&w, &core, &["--class", "CAP"]).code(3);
}

/// A copy of the seams content in the world, for the generator to rewrite.
fn content(w: &World) -> PathBuf {
    let dir = w.tmp.path().join("content");
    copy_tree(&fixture("seams"), &dir);
    dir
}

fn gen_index<'w>(w: &'w World, dir: &Path, mode: &str) -> Ran<'w> {
    Install::in_world(w).args(["gen", "context-index", mode, "--json"]).content(dir).run()
}

/// `msd-install gen context-index [MODE] --content DIR` without `--json`.
fn gen_index_text<'w>(w: &'w World, dir: &Path, modes: &[&str]) -> Ran<'w> {
    Install::in_world(w).args(["gen", "context-index"]).args(modes).content(dir).run()
}

fn reason(r: &Ran<'_>) -> String {
    r.json()["reason"].as_str().unwrap_or_else(|| panic!("no reason\n{}", r.describe())).to_string()
}

#[test]
fn predicates_index_write_check_and_byte_stability() {
    let w = World::new();
    let dir = content(&w);
    std::fs::remove_file(dir.join("CONTEXT-INDEX.json")).unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check").code(1)), "fail_index_missing");
    assert_eq!(reason(&gen_index(&w, &dir, "--write").code(0)), "written");
    let first = std::fs::read(dir.join("CONTEXT-INDEX.json")).unwrap();
    assert_eq!(first, std::fs::read(fixture("seams").join("CONTEXT-INDEX.json")).unwrap());
    assert_eq!(reason(&gen_index(&w, &dir, "--write")), "unchanged");
    assert_eq!(std::fs::read(dir.join("CONTEXT-INDEX.json")).unwrap(), first, "byte-identical across runs");
    assert_eq!(reason(&gen_index(&w, &dir, "--check").code(0)), "ok_up_to_date");
    let text = String::from_utf8(first).unwrap();
    assert!(!text.contains("\"line\""), "the committed index carries no line numbers");
    // A CRLF checkout of the index is up to date.
    std::fs::write(dir.join("CONTEXT-INDEX.json"), text.replace('\n', "\r\n")).unwrap();
    gen_index(&w, &dir, "--check").code(0);
    // Printing writes nothing.
    let r = gen_index_text(&w, &dir, &[]);
    assert_eq!(String::from_utf8_lossy(&r.out.stdout), text, "{}", r.describe());
}

#[test]
fn predicates_index_unchanged_by_a_line_shift_and_stale_after_a_value_edit() {
    let w = World::new();
    let dir = content(&w);
    let store = dir.join("CONTEXT.md");
    let text = std::fs::read_to_string(&store).unwrap();
    std::fs::write(&store, text.replace("## Install\n", "## Install\n\nA new paragraph moves every line down.\n\n"))
        .unwrap();
    // A pure line shift changes nothing.
    gen_index(&w, &dir, "--check").code(0);
    std::fs::write(&store, text.replace("57344 bytes", "57345 bytes")).unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check").code(1)), "fail_stale");
    // Without --json the failure shows the diff and the fixing command.
    gen_index_text(&w, &dir, &["--check"])
        .stderr_has("fail_stale")
        .stderr_has("-      \"value\": \"57344 bytes\"")
        .stderr_has("+      \"value\": \"57345 bytes\"")
        .stderr_has(&format!("msd-install gen context-index --write --content {}", dir.display()));
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
        assert_eq!(reason(&gen_index(&w, &dir, mode).code(1)), "fail_duplicate_ids", "{mode}");
    }
    let last = text.lines().count() + 2;
    gen_index_text(&w, &dir, &["--check"])
        .stderr_has(&format!("RULE.install.lock declared 2 times, on lines 8, {last}"));
    // A malformed declaration fails with its line and reason.
    std::fs::write(&store, format!("{text}\n`rule.lower=x`\n")).unwrap();
    gen_index_text(&w, &dir, &["--check"])
        .code(1)
        .stderr_has("fail_malformed_predicates")
        .stderr_has("lowercase-leading-class");
    // CRLF sources parse like LF ones.
    std::fs::write(&store, text.replace('\n', "\r\n")).unwrap();
    gen_index(&w, &dir, "--check").code(0);
    // Corrupt and missing files.
    std::fs::write(dir.join("CONTEXT-INDEX.json"), "{\"predicates\": 3}").unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_index_unparseable");
    std::fs::write(dir.join("CONTEXT-INDEX.json"), "{").unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_index_unparseable");
    std::fs::remove_file(&store).unwrap();
    assert_eq!(reason(&gen_index(&w, &dir, "--check")), "fail_context_missing");
    // --check and --write together are a usage error.
    gen_index_text(&w, &dir, &["--check", "--write"]).code(2);
}

#[test]
fn predicates_real_content_index_is_current() {
    Install::new().args(["gen", "context-index", "--check"]).content(repo().join("content")).run().success();
}
