//! The workspace's lints are set in one place: the root Cargo.toml's `[workspace.lints]`, which
//! every crate takes (`[lints] workspace = true`); no crate root sets its own, and an `allow`
//! left in the code says why.

use crate::support::repo;
use std::path::Path;

fn manifest(path: &Path) -> toml_edit::DocumentMut {
    std::fs::read_to_string(path).unwrap().parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("fixtures") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn lints_every_crate_takes_the_workspace_table() {
    let root = manifest(&repo().join("Cargo.toml"));
    let lints = &root["workspace"]["lints"];
    assert!(lints["rust"]["missing_docs"].is_value(), "missing_docs is set for the workspace");
    assert!(lints["rust"]["unreachable_pub"].is_value(), "unreachable_pub is set for the workspace");
    assert!(lints["clippy"]["pedantic"].is_inline_table(), "clippy's pedantic group is on, below what it allows");
    let members = root["workspace"]["members"].as_array().expect("members");
    let dirs = std::iter::once(".").chain(members.iter().map(|m| m.as_str().unwrap()));
    for dir in dirs {
        let m = manifest(&repo().join(dir).join("Cargo.toml"));
        assert_eq!(m["lints"]["workspace"].as_bool(), Some(true), "{dir}/Cargo.toml: `[lints] workspace = true`");
    }
}

#[test]
fn lints_no_crate_sets_its_own_and_each_allow_says_why() {
    let mut files = Vec::new();
    for dir in ["src", "crates", "tests", "benches"] {
        rust_files(&repo().join(dir), &mut files);
    }
    assert!(files.len() > 100, "the sources were found");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let at = format!("{}:{}", file.display(), n + 1);
            for level in ["#![deny(", "#![warn(", "#![forbid("] {
                assert!(!line.starts_with(level), "{at}: a crate-level lint belongs in [workspace.lints]");
            }
            if line.starts_with("#![allow(") {
                let attr: String = text.lines().skip(n).take(4).collect();
                assert!(attr.contains("reason ="), "{at}: a module-wide allow says why (`reason = ...`)");
            }
        }
    }
}
