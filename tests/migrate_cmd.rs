//! `msd-install migrate --from gemini --to antigravity`: the same scope and profile, the user's
//! edited file kept with a backup copy, the old install gone; stopped at any point, a second run
//! finishes it and nothing of the user's is lost.

use crate::support::{Install, World};

const EDIT: &str = "\n# my own line\n";

fn with_gemini(w: &World) -> std::path::PathBuf {
    Install::in_world(w).runtime("gemini").args(["--profile", "core", "-q"]).run().success();
    let help = w.home.join(".gemini/commands/msd/help.toml");
    let mut text = std::fs::read_to_string(&help).unwrap();
    text.push_str(EDIT);
    std::fs::write(&help, &text).unwrap();
    help
}

fn migrated(w: &World, help: &std::path::Path) {
    let status = Install::in_world(w).status().json().run().success().json();
    let rows: Vec<(String, String, Option<String>)> = status["installs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["runtime"].as_str().unwrap().to_string(),
                r["scope"].as_str().unwrap().to_string(),
                r["profile"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(rows, [("antigravity".to_string(), "global".to_string(), Some("core".to_string()))], "{status}");
    Install::in_world(w).verify().runtime("antigravity").run().success();
    // The user's edit survives where it was, and a copy of it is in the backup directory.
    assert!(std::fs::read_to_string(help).unwrap().ends_with(EDIT), "the edited file stays");
    let backups = w.home.join(".gemini/msd-local-patches");
    let copies: Vec<_> = walk(&backups).into_iter().filter(|p| p.ends_with("commands/msd/help.toml")).collect();
    assert!(
        copies.iter().any(|p| std::fs::read_to_string(p).unwrap().ends_with(EDIT)),
        "a backup of the edited file: {copies:?}"
    );
    assert!(!w.home.join(".gemini/msd-core").exists(), "gemini's install is gone");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn migrate_moves_a_gemini_install_to_antigravity_keeping_scope_profile_and_edits() {
    let w = World::new();
    let help = with_gemini(&w);
    let out = Install::in_world(&w).args(["migrate", "--from", "gemini", "--to", "antigravity"]).run().success();
    out.stdout_has("migrated gemini -> antigravity (global), profile core");
    migrated(&w, &help);
    // The install's half left the fast path's record, as an install does: the next install of the
    // same target, with nothing changed, takes it.
    Install::in_world(&w)
        .runtime("antigravity")
        .env("MSD_INSTALL_FAST", "trace")
        .run()
        .success()
        .stderr_has("fast path: antigravity (global): taken");
    // Done: a second run says so and changes nothing.
    Install::in_world(&w)
        .args(["migrate", "--from", "gemini", "--to", "antigravity"])
        .run()
        .success()
        .stdout_has("nothing to migrate");
    // Nothing to move from: a usage error.
    let w = World::new();
    Install::in_world(&w)
        .args(["migrate", "--from", "gemini", "--to", "antigravity"])
        .run()
        .code(2)
        .stderr_has("no msd install of gemini (global) to migrate");
}

/// The installs `status` lists: (runtime, scope).
fn installs(w: &World) -> Vec<String> {
    let status = Install::in_world(w).status().json().run().success().json();
    status["installs"].as_array().unwrap().iter().map(|r| r["runtime"].as_str().unwrap().to_string()).collect()
}

/// Files (not directories) under `dir`.
fn files_under(dir: &std::path::Path) -> usize {
    walk(dir).len()
}

/// A migrate killed at disk operation `n`: `None` when it completed.
fn killed_at(w: &World, n: usize) -> Option<()> {
    let ran = Install::in_world(w)
        .args(["migrate", "--from", "gemini", "--to", "antigravity"])
        .env("MSD_INSTALL_FAULT_AFTER", n.to_string())
        .run();
    (ran.exit() != Some(0)).then_some(())
}

/// Whether gemini's home holds the uninstall's staging (no journal yet) and antigravity's
/// holds no staging or journal of the install: killed while the uninstall's half stages.
fn a_staging_only(w: &World) -> bool {
    let (a, b) = (w.home.join(".gemini/.msd-install"), w.home.join(".gemini/config/.msd-install"));
    a.join("txn").exists()
        && !a.join("journal.json").exists()
        && !["txn", "journal.json"].iter().any(|f| b.join(f).exists())
}

/// After the recovery of a killed migrate by a command on one of the two homes: exactly one
/// install, whole: gemini's (before) or antigravity's (after), the user's edit kept either way;
/// nothing of the pair left for a command on the other home to find, at every kill point (0.4.0
/// left gemini's journal, "interrupted, 0 files", when killed after the install's half had
/// finished, and the uninstall's unjournaled staging when killed while it was staged: a
/// recovery of antigravity's home saw neither). Returns whether it is after.
fn whole_after_recovery(w: &World, help: &std::path::Path, n: usize) -> bool {
    let status = Install::in_world(w).status().json().run().success().json();
    for r in status["installs"].as_array().unwrap() {
        assert_ne!(
            r["interrupted"], true,
            "kill point {n}: the recovery of either home finishes the pair whole: {status}"
        );
    }
    for work in [".gemini/.msd-install", ".gemini/config/.msd-install"] {
        for left in ["txn", "journal.json"] {
            assert!(!w.home.join(work).join(left).exists(), "kill point {n}: {work}/{left} left after the recovery");
        }
    }
    // The installs of the same `status` (nothing runs between: a second `status` was a spawn
    // per kill point that said the same).
    let rows: Vec<String> =
        status["installs"].as_array().unwrap().iter().map(|r| r["runtime"].as_str().unwrap().to_string()).collect();
    assert!(
        rows == ["gemini"] || rows == ["antigravity"],
        "kill point {n}: one install, never both or neither: {rows:?}"
    );
    let after = rows == ["antigravity"];
    // Whole: nothing missing; the one change is the user's edit.
    let v = Install::in_world(w).verify().runtime(&rows[0]).run().stdout();
    assert!(!v.contains("awaits recovery"), "kill point {n}: {v}");
    let changed: Vec<&str> = v.lines().skip(1).collect();
    let want: &[&str] = if after {
        &["  clean: every managed file matches the manifest"]
    } else {
        &["  modified commands/msd/help.toml"]
    };
    assert_eq!(changed, want, "kill point {n}: {v}");
    assert!(std::fs::read_to_string(help).unwrap().ends_with(EDIT), "kill point {n}: the edit stays");
    let gemini_core = w.home.join(".gemini/msd-core");
    if after {
        assert_eq!(files_under(&gemini_core), 0, "kill point {n}: gemini's core is gone");
        let copies = walk(&w.home.join(".gemini/msd-local-patches"));
        assert!(
            copies
                .iter()
                .any(|p| p.ends_with("commands/msd/help.toml") && std::fs::read_to_string(p).unwrap().ends_with(EDIT)),
            "kill point {n}: the edit has its backup copy"
        );
    } else {
        assert!(!w.home.join(".gemini/config/msd-core").exists(), "kill point {n}: no half antigravity");
    }
    after
}

fn b_journal(w: &World) -> bool {
    w.home.join(".gemini/config/.msd-install/journal.json").exists()
}

fn a_journal(w: &World) -> bool {
    w.home.join(".gemini/.msd-install/journal.json").exists()
}

/// Past the install's commit point: its journal, or what follows it (the uninstall's journal,
/// antigravity's manifest).
fn past_commit(w: &World) -> bool {
    b_journal(w) || a_journal(w) || w.home.join(".gemini/config/msd-core/msd-file-manifest.json").exists()
}

/// What a migrate killed at one disk operation leaves, in a fresh world with gemini installed
/// (the searches of the kill sweep below; each reads what its own run of the point read).
#[derive(Clone, Copy, Debug)]
struct Probe {
    /// The run completed: the point is past its last disk operation.
    completed: bool,
    /// [`past_commit`].
    past_commit: bool,
    /// [`b_journal`]: the install's journal.
    b_journal: bool,
    /// Antigravity's home holds the install's staging.
    b_staging: bool,
    /// Gemini's home holds the uninstall's staging.
    a_staging: bool,
}

impl Probe {
    /// A fresh world with gemini installed (the edited file's path beside it), a migrate killed
    /// at `n` in it, and what it left.
    fn run(n: usize) -> (Probe, World, std::path::PathBuf) {
        let w = World::new();
        let help = with_gemini(&w);
        let completed = killed_at(&w, n).is_none();
        let probe = Probe {
            completed,
            past_commit: past_commit(&w),
            b_journal: b_journal(&w),
            b_staging: w.home.join(".gemini/config/.msd-install/txn").exists(),
            a_staging: w.home.join(".gemini/.msd-install/txn").exists(),
        };
        (probe, w, help)
    }
}

#[test]
fn migrate_killed_at_any_point_recovers_to_before_or_after_never_half() {
    // Every search below reads the same state: what a migrate killed at point `n` leaves in a
    // fresh world with gemini installed. Each point is run once and read once for all of them (a
    // point the searches share was run again by each of them). The world of each point stays,
    // untouched, for the sample below, which recovers it.
    let probes = std::cell::RefCell::new(std::collections::BTreeMap::new());
    let at = |n: usize| -> Probe { probes.borrow_mut().entry(n).or_insert_with(|| Probe::run(n)).0 };
    // The first kill point at which the install's half reached its commit point and the
    // uninstall's (the pair's) had not: found by bisection, then the points around it.
    // Past the install's commit point, or the run done: that holds at every later point, so the
    // first is found by doubling and bisection.
    let first = crate::crash::first_point_where(16, |n| {
        let p = at(n as usize);
        p.completed || p.past_commit
    }) as usize;
    {
        let p = at(first);
        assert!(!p.completed, "the run completed before its commit point at {first}");
        assert!(p.b_journal, "kill point {first}: the first point past the commit point is the install's journal");
    }
    // The end: the first kill point past the run's last disk operation (the run completes).
    let completes = |n: usize| at(n).completed;
    let (mut lo, mut hi) = (first, first + 64);
    while !completes(hi) {
        (lo, hi) = (hi, hi * 2);
    }
    while hi - lo > 1 {
        let mid = usize::midpoint(lo, hi);
        if completes(mid) { hi = mid } else { lo = mid }
    }
    let end = hi;
    // The first kill point at which the install's half had begun staging (or anything after):
    // before it, from the first disk operation of the uninstall's staging, only gemini's home
    // holds the pair's staging.
    let b_staging = crate::crash::first_point_where(16, |n| {
        let p = at(n as usize);
        p.completed || p.b_staging || p.past_commit
    }) as usize;
    let (mut before, mut after) = (0, 0);
    // Around the commit points, then spread over the writes of both halves, recovered by a
    // command on one home or the other in turn; then the last points (the two halves' finish,
    // where 0.4.0 left the uninstall's journal alone), recovered from each home; and points while
    // the uninstall's half alone is staged (where 0.4.0 left it to the next command on gemini's
    // home), recovered from each home. With `MSD_FULL_SWEEPS=1` (the `kill-campaign` job) every
    // point below; in the suite a fixed sample: each side of the commit point, both halves
    // journaled, the spread, the last three, three in the uninstall's staging.
    let full = crate::support::full_sweeps();
    let mut points: Vec<usize> = if full {
        (first.saturating_sub(3)..first + 6).collect()
    } else {
        (first.saturating_sub(1)..first + 3).collect()
    };
    if full {
        points.extend([0, 5, first / 2, first + 20, first + 60, first + 120, first + 200, first + 300]);
    } else {
        points.extend([0, first / 2, first + 20, first + 60]);
    }
    let mut cases: Vec<(usize, &str)> =
        points.into_iter().enumerate().map(|(i, n)| (n, if i % 2 == 0 { "antigravity" } else { "gemini" })).collect();
    for n in end.saturating_sub(if full { 6 } else { 3 })..end {
        cases.extend([(n, "antigravity"), (n, "gemini")]);
    }
    // The first kill point at which gemini's home holds the uninstall's staging (before it, the
    // two homes' notes only).
    let a_staged = (0..b_staging)
        .find(|&n| {
            let p = at(n);
            !p.completed && p.a_staging
        })
        .expect("the uninstall's half stages before the install's");
    let staging_only: Vec<(usize, &str)> = if full {
        (a_staged..b_staging).flat_map(|n| [(n, "antigravity"), (n, "gemini")]).collect()
    } else {
        vec![(a_staged, "antigravity"), (a_staged, "gemini"), (b_staging - 1, "antigravity")]
    };
    cases.extend(staging_only.iter().copied());
    if full {
        cases.extend((0..a_staged).flat_map(|n| [(n, "antigravity"), (n, "gemini")]));
    }
    // A point searched above is recovered in the world the search left (read, never changed);
    // a point sampled twice, or not searched, is run again in a fresh one.
    let mut searched = probes.into_inner();
    searched.retain(|n, _| cases.iter().any(|(c, _)| c == n));
    for (n, side) in cases {
        let (probe, w, help) = searched.remove(&n).unwrap_or_else(|| Probe::run(n));
        if probe.completed {
            migrated(&w, &help);
            continue;
        }
        if staging_only.contains(&(n, side)) {
            assert!(
                a_staging_only(&w),
                "kill point {n}: the uninstall's half alone is staged (install staged from {b_staging})"
            );
        }
        if n == first {
            assert!(b_journal(&w) && !a_journal(&w), "kill point {n}: between the two commit points");
        }
        let recovered_after = if n == first + 1 {
            // Committed, nothing applied yet: the next command on the install's home (an
            // install of antigravity) completes the whole pair first.
            assert!(b_journal(&w) && a_journal(&w), "kill point {n}: both halves journaled");
            Install::in_world(&w).runtime("antigravity").args(["--profile", "core", "-q"]).run().success();
            let recovered_after = whole_after_recovery(&w, &help, n);
            assert!(recovered_after, "kill point {n}: the pair was committed: after");
            recovered_after
        } else {
            Install::in_world(&w).args(["recover", "-r", side]).run().success();
            whole_after_recovery(&w, &help, n)
        };
        match recovered_after {
            true => after += 1,
            false => before += 1,
        }
        // `whole_after_recovery` held the installs to exactly one, gemini's (before) or
        // antigravity's (after), from the `status` of this state: nothing ran since.
        if n == first {
            assert!(!recovered_after, "kill point {n}: the pair was not committed: back to before (gemini)");
        }
        if n >= end - 6 {
            assert!(recovered_after, "kill point {n}: every op was applied: after (antigravity)");
        }
        // The next run finishes the move either way.
        Install::in_world(&w).args(["migrate", "--from", "gemini", "--to", "antigravity"]).run().success();
        migrated(&w, &help);
    }
    assert!(before >= 3 && after >= 3, "kills before and after the commit point: {before} before, {after} after");
}

/// `--config-dir` names one home and migrate moves an install between two: it was accepted and
/// ignored (the move went to and from the default homes). Refused before anything is read or
/// written (exit 2), the hint naming each runtime's own home variable and the two-step way; not
/// offered in `migrate --help`.
#[test]
fn migrate_refuses_config_dir() {
    let w = World::new();
    with_gemini(&w);
    let elsewhere = w.tmp.path().join("elsewhere");
    let before = crate::support::tree(&w.home);
    for flag in ["-c", "--config-dir"] {
        Install::in_world(&w)
            .args(["migrate", "--from", "gemini", "--to", "antigravity", flag])
            .arg(&elsewhere)
            .run()
            .code(2)
            .stderr_has("--config-dir names one home")
            .stderr_has("GEMINI_CLI_HOME")
            .stderr_has("ANTIGRAVITY_CONFIG_DIR")
            .stderr_has("uninstall -r gemini -c");
    }
    assert_eq!(crate::support::tree(&w.home), before, "nothing moved");
    assert!(!elsewhere.exists());
    assert_eq!(installs(&w), ["gemini"]);
    Install::in_world(&w).args(["migrate", "--help"]).run().success().stdout_lacks("--config-dir");
}

/// A migrate that fails (not a crash: the install's commit point cannot be written, as on a full
/// disk) changes nothing and leaves no trace: gemini's install as it was, the user's edit in it,
/// and no directory of antigravity's home, which the run created, nor a note in either home.
#[test]
fn migrate_that_fails_leaves_no_trace() {
    let w = World::new();
    let help = with_gemini(&w);
    let before = crate::support::tree(&w.home);
    assert!(!w.home.join(".gemini/config").exists(), "antigravity's home is not there before");
    Install::in_world(&w)
        .args(["migrate", "--from", "gemini", "--to", "antigravity"])
        .env("MSD_INSTALL_FAIL_COMMIT", "0")
        .run()
        .failure();
    assert_eq!(crate::support::tree(&w.home), before, "every file as it was");
    assert!(!w.home.join(".gemini/config").exists(), "the home the run created is gone");
    assert!(!w.home.join(".gemini/.msd-install").exists(), "no work dir left in gemini's home");
    assert!(std::fs::read_to_string(help).unwrap().ends_with(EDIT));
}
