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

#[test]
fn migrate_stopped_at_any_point_finishes_on_the_next_run() {
    // Kill points across both steps (the run does about 250 disk operations): in the install of
    // antigravity (only gemini's install is whole) and in the uninstall of gemini (both are).
    let (mut in_install, mut in_uninstall) = (0, 0);
    for n in [1usize, 10, 40, 80, 110, 130, 150, 180, 210, 240, 280] {
        let w = World::new();
        let help = with_gemini(&w);
        let ran = Install::in_world(&w)
            .args(["migrate", "--from", "gemini", "--to", "antigravity"])
            .env("MSD_INSTALL_FAULT_AFTER", n.to_string())
            .run();
        if ran.exit() != Some(0) {
            match w.home.join(".gemini/config/msd-core/msd-file-manifest.json").exists() {
                true => in_uninstall += 1,
                false => in_install += 1,
            }
            // The edit is never lost, whatever was done.
            assert!(std::fs::read_to_string(&help).unwrap().ends_with(EDIT), "kill point {n}: the edit stays");
        }
        Install::in_world(&w).args(["migrate", "--from", "gemini", "--to", "antigravity"]).run().success();
        migrated(&w, &help);
    }
    assert!(
        in_install >= 2 && in_uninstall >= 2,
        "kills in both steps: {in_install} in the install, {in_uninstall} in the uninstall"
    );
}
