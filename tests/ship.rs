//! ship's review branch (issue 32 defect 1): ship used to push the working branch, carrying every
//! `.planning/` commit into the pull request. It now builds the branch with pr-branch. These tests
//! walk the git part of ship on a scratch repository with planning and code commits, running the
//! build block of `workflows/pr-branch.md` exactly as the workflow tells a model to (its three
//! values filled in, the rest verbatim), and inspect the branch it made.

use std::path::Path;
use std::process::Command;

use crate::support::{World, repo};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join("content").join(rel)).unwrap()
}

/// The text of `<step name="<name>">` of a workflow.
fn step<'a>(text: &'a str, name: &str) -> &'a str {
    let open = format!("<step name=\"{name}\">");
    let start = text.find(&open).unwrap_or_else(|| panic!("no step `{name}`"));
    let end = text[start..].find("</step>").expect("step closes") + start;
    &text[start..end]
}

/// The first ```bash block of a text.
fn bash_block(text: &str) -> String {
    let start = text.find("```bash\n").expect("a bash block") + "```bash\n".len();
    let end = text[start..].find("```").expect("the block closes") + start;
    text[start..end].to_string()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").current_dir(dir).args(args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn commit(dir: &Path, files: &[(&str, &str)], message: &str) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        git(dir, &["add", rel]);
    }
    git(dir, &["commit", "-q", "-m", message]);
}

/// A repository on `work`, branched from `main`, with the commits a phase leaves: new-project's
/// unscoped docs commits, plans, code, a commit that changes code and STATE.md together,
/// summaries and the verification.
fn scratch_repo(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Test"]);
    git(root, &["config", "user.email", "test@example.com"]);
    git(root, &["config", "commit.gpgsign", "false"]);
    commit(root, &[("README.md", "# app\n"), ("src/app.txt", "app v1\n")], "initial");
    git(root, &["switch", "-q", "-c", "work"]);
    commit(
        root,
        &[(".planning/PROJECT.md", "# Project\n"), (".planning/config.json", "{}\n")],
        "docs: initialize project",
    );
    commit(root, &[(".planning/REQUIREMENTS.md", "- AUTH-01\n")], "docs: define v1 requirements");
    commit(
        root,
        &[(".planning/ROADMAP.md", "# Roadmap\n### Phase 3: Authentication\n"), (".planning/STATE.md", "# State\n")],
        "docs: create roadmap",
    );
    commit(root, &[(".planning/phases/03-authentication/03-01-PLAN.md", "plan\n")], "docs(03): create phase plan");
    commit(root, &[("src/session.txt", "session\n")], "feat(03-01): create session store");
    commit(
        root,
        &[("src/login.txt", "login\n"), ("src/app.txt", "app v2\n"), (".planning/STATE.md", "# State\nPlan 2 of 2\n")],
        "feat(03-02): add the login form",
    );
    commit(
        root,
        &[(".planning/phases/03-authentication/03-01-SUMMARY.md", "sum\n"), (".planning/STATE.md", "# State\ndone\n")],
        "docs(03-01): complete session plan",
    );
    commit(root, &[(".planning/phases/03-authentication/03-VERIFICATION.md", "passed\n")], "docs(03): verification");
}

/// Runs pr-branch's build block with this run's values, as the workflow says.
fn build(root: &Path, base: &str, review: &str, keep_state: &str) -> std::process::Output {
    let block = bash_block(step(&read("msd-core/workflows/pr-branch.md"), "build"));
    let mut lines: Vec<String> = block.lines().map(str::to_string).collect();
    for (name, value) in [("base", base), ("review", review), ("keep_state", keep_state)] {
        let i = lines.iter().position(|l| l.starts_with(&format!("{name}="))).unwrap_or_else(|| panic!("no `{name}=`"));
        lines[i] = format!("{name}=\"{value}\"");
    }
    Command::new("bash").current_dir(root).arg("-c").arg(lines.join("\n")).output().expect("bash runs")
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().filter(|l| !l.is_empty()).collect()
}

#[test]
fn ship_review_branch_holds_the_code_commits_only() {
    // ship builds its branch with pr-branch's steps, and pushes that branch.
    let ship = read("msd-core/workflows/ship.md");
    let branch = step(&ship, "branch");
    assert!(branch.contains("`~/.claude/msd-core/workflows/pr-branch.md`"), "ship's branch step follows pr-branch");
    for s in ["`select`", "`build`"] {
        assert!(branch.contains(s), "ship runs pr-branch's step {s}");
    }
    assert!(step(&ship, "publish").contains("git push -u origin msd/pr/phase-"), "ship pushes the review branch");

    let w = World::new();
    let root = &w.project;
    std::fs::create_dir_all(root).unwrap();
    scratch_repo(root);
    let head = git(root, &["rev-parse", "HEAD"]);
    // Step `select` lists the commits with their code files: planning-only ones show 0.
    let select = bash_block(step(&read("msd-core/workflows/pr-branch.md"), "select")).replace("origin/main", "main");
    let listed = Command::new("bash").current_dir(root).arg("-c").arg(&select).output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let zero: Vec<&str> = listed.lines().filter(|l| l.ends_with("| code files: 0")).collect();
    assert_eq!(zero.len(), 6, "six planning-only commits:\n{listed}");
    assert!(listed.contains("feat(03-02): add the login form | code files: 2"), "{listed}");
    let out = build(root, "main", "msd/pr/phase-03-authentication", "no");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the build block failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.ends_with("built   msd/pr/phase-03-authentication\n"), "{stdout}");

    let review = "msd/pr/phase-03-authentication";
    assert_eq!(
        lines(&git(root, &["log", "--reverse", "--format=%s", &format!("main..{review}")])),
        ["feat(03-01): create session store", "feat(03-02): add the login form"],
        "the code commits, in order, and nothing else"
    );
    assert_eq!(
        lines(&git(root, &["diff", "--name-only", &format!("main...{review}")])),
        ["src/app.txt", "src/login.txt", "src/session.txt"],
        "no .planning/ file reaches the review branch, not even from a mixed commit"
    );
    assert_eq!(git(root, &["show", &format!("{review}:src/app.txt")]), "app v2\n");
    let author = git(root, &["log", "-1", "--format=%an <%ae> %s", review]);
    assert_eq!(
        author, "Test <test@example.com> feat(03-02): add the login form\n",
        "commit -C keeps author and message"
    );
    // The working branch, its checkout and the worktree list are as they were.
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(root, &["rev-parse", "--abbrev-ref", "HEAD"]), "work\n");
    assert_eq!(git(root, &["status", "--porcelain"]), "");
    assert_eq!(lines(&git(root, &["worktree", "list"])).len(), 1, "the temporary worktree is gone");
    for dropped in ["docs: initialize project", "docs(03-01): complete session plan", "docs(03): verification"] {
        assert!(stdout.contains(&format!(" {dropped}\n")), "reported as dropped: {dropped}\n{stdout}");
    }

    // The user asks for STATE.md and ROADMAP.md: one last commit with exactly those two.
    let out = build(root, "main", "msd/pr/phase-03-with-state", "yes");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let files = git(root, &["diff", "--name-only", "main...msd/pr/phase-03-with-state", "--", ".planning"]);
    assert_eq!(lines(&files), [".planning/ROADMAP.md", ".planning/STATE.md"]);
    assert_eq!(git(root, &["show", "msd/pr/phase-03-with-state:.planning/STATE.md"]), "# State\ndone\n");
    assert_eq!(lines(&git(root, &["log", "--format=%s", "main..msd/pr/phase-03-with-state"])).len(), 3);

    // A replay that cannot apply stops with no branch and no worktree left.
    git(root, &["switch", "-q", "main"]);
    commit(root, &[("src/session.txt", "someone else's session\n")], "conflicting work on main");
    git(root, &["switch", "-q", "work"]);
    let out = build(root, "main", "msd/pr/phase-03-conflict", "no");
    assert!(!out.status.success(), "a conflicting replay fails");
    assert!(git(root, &["branch", "--list", "msd/pr/phase-03-conflict"]).is_empty(), "no half-built branch");
    assert_eq!(lines(&git(root, &["worktree", "list"])).len(), 1, "the temporary worktree is gone");
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head);
}
