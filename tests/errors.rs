//! Errors print their cause chain as uv does (issue 37): `error: <what>`, one `  Caused by:
//! <why>` per level below it, then `hint: <what to do>`; `--json` carries the same levels as the
//! array `chain`. Real failures, spawned: a settings file that cannot be read, a bad runtime
//! manifest, a target whose lock is held or cannot be taken.

use crate::support::{Install, Ran, World};

/// The stderr of `ran`, temp paths filtered, under a heading with the exit code.
fn case(text: &mut String, name: &str, ran: &Ran) {
    let stderr = ran.stderr().replace(&ran.world.tmp.path().display().to_string(), "[TMP]");
    text.push_str(&format!("=== {name} (exit {})\n{stderr}\n", ran.exit().unwrap_or(-1)));
}

/// Each line of a rendered error is `error:` first, `  Caused by:` lines next, `hint:` last.
fn assert_layout(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("error: ")), "{stderr}");
    assert!(lines.last().is_some_and(|l| l.starts_with("hint: ")), "{stderr}");
    let middle = &lines[1..lines.len() - 1];
    assert!(middle.iter().all(|l| l.starts_with("  Caused by: ")), "{stderr}");
    let mut levels = vec![lines[0].trim_start_matches("error: ").to_string()];
    levels.extend(middle.iter().map(|l| l.trim_start_matches("  Caused by: ").to_string()));
    levels
}

/// `--json` gives the same levels as the text, as an array, with the exit code.
fn assert_json_chain(json: &Ran, levels: &[String], code: i32) {
    let doc: serde_json::Value = serde_json::from_str(&json.stdout()).expect("one JSON document");
    assert_eq!(doc["ok"], false, "{doc}");
    assert_eq!(doc["exit_code"], code, "{doc}");
    let chain: Vec<String> =
        doc["chain"].as_array().expect("chain is an array").iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(chain, levels, "the JSON chain is the text's");
}

#[test]
fn errors_print_their_cause_chain_with_a_hint() {
    let mut text = String::new();

    // A settings file that cannot be read as a file (a directory where settings.json goes).
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".claude/settings.json")).unwrap();
    let ran = Install::in_world(&w).arg("-q").run().code(4);
    let levels = assert_layout(&ran.stderr());
    assert_eq!(levels.len(), 2, "the path, then why it cannot be read: {levels:?}");
    assert!(levels[1].contains("directory"), "{levels:?}");
    case(&mut text, "unreadable settings file", &ran);
    assert_json_chain(&Install::in_world(&w).arg("--json").run().code(4), &levels, 4);
    assert!(w.home.join(".claude/settings.json").is_dir(), "left as it was");

    // A runtime manifest that does not parse: one level, its position, a hint.
    let w = World::new();
    let rts = w.tmp.path().join("rts");
    std::fs::create_dir_all(rts.join("claude")).unwrap();
    std::fs::write(rts.join("claude/capability.json"), "{\"id\": \"claude\",\n").unwrap();
    let ran = Install::in_world(&w).arg("-q").arg("--runtimes").arg(&rts).run().code(3);
    let levels = assert_layout(&ran.stderr());
    assert!(levels[0].contains("capability.json:2"), "{levels:?}");
    case(&mut text, "bad manifest", &ran);
    assert_json_chain(&Install::in_world(&w).arg("--json").arg("--runtimes").arg(&rts).run().code(3), &levels, 3);

    // Another run holds the target's lock.
    let w = World::new();
    let home = w.home.join(".claude");
    std::fs::create_dir_all(&home).unwrap();
    let lock = msd_core::fs::fsx::Lock::acquire(&home).unwrap();
    let ran = Install::in_world(&w).arg("-q").run().code(5);
    let levels = assert_layout(&ran.stderr());
    case(&mut text, "lock held", &ran);
    assert_json_chain(&Install::in_world(&w).arg("--json").run().code(5), &levels, 5);
    drop(lock);

    // The lock cannot be taken: something else is where its directory goes.
    let w = World::new();
    std::fs::create_dir_all(w.home.join(".claude")).unwrap();
    std::fs::write(w.home.join(".claude/.msd-install"), "mine\n").unwrap();
    let ran = Install::in_world(&w).arg("-q").run().code(4);
    let levels = assert_layout(&ran.stderr());
    assert_eq!(levels.len(), 2, "what could not be done, then why: {levels:?}");
    case(&mut text, "lock cannot be taken", &ran);
    assert_json_chain(&Install::in_world(&w).arg("--json").run().code(4), &levels, 4);
    assert_eq!(std::fs::read(w.home.join(".claude/.msd-install")).unwrap(), b"mine\n");

    insta::assert_snapshot!("error-chains", text);
}
