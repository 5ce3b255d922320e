//! Build facts for `msd-install --version`, and a rebuild when the embedded trees change
//! (`include_dir!` does not see added or removed files).
//!
//! The commit and its date come from `git` when the package is built inside its repository
//! (`cargo build`, `cargo install --git`, `cargo install --path .`); a build from a published
//! crate has no repository, so they come from `MSD_BUILD_COMMIT` / `MSD_BUILD_DATE` when set and
//! are left out otherwise. No build-info crate: two `git` calls are all it takes.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    if s.is_empty() { None } else { Some(s) }
}

fn main() {
    println!("cargo:rerun-if-changed=content");
    println!("cargo:rerun-if-changed=runtimes");
    println!("cargo:rerun-if-env-changed=MSD_BUILD_COMMIT");
    println!("cargo:rerun-if-env-changed=MSD_BUILD_DATE");
    // Only a repository at the package root counts: a crate unpacked inside another repository
    // must not report that repository's commit.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let top = git(&["-C", &manifest_dir, "rev-parse", "--show-toplevel"]);
    let ours = top.as_deref().is_some_and(|t| std::path::Path::new(t) == std::path::Path::new(&manifest_dir));
    let (mut commit, mut date) = (None, None);
    if ours {
        commit = git(&["-C", &manifest_dir, "rev-parse", "--short=7", "HEAD"]);
        date = git(&["-C", &manifest_dir, "log", "-1", "--format=%cs", "HEAD"]);
        // Rebuild when HEAD moves (a commit, a checkout): HEAD and the ref it names.
        if let Some(head) = git(&["-C", &manifest_dir, "rev-parse", "--git-path", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", abs(&manifest_dir, &head));
        }
        if let Some(r) = git(&["-C", &manifest_dir, "symbolic-ref", "-q", "HEAD"])
            && let Some(p) = git(&["-C", &manifest_dir, "rev-parse", "--git-path", &r])
        {
            println!("cargo:rerun-if-changed={}", abs(&manifest_dir, &p));
        }
    }
    let commit = std::env::var("MSD_BUILD_COMMIT").ok().filter(|s| !s.is_empty()).or(commit);
    let date = std::env::var("MSD_BUILD_DATE").ok().filter(|s| !s.is_empty()).or(date);
    println!("cargo:rustc-env=MSD_BUILD_COMMIT={}", commit.unwrap_or_default());
    println!("cargo:rustc-env=MSD_BUILD_DATE={}", date.unwrap_or_default());
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=MSD_BUILD_TARGET={target}");
}

fn abs(base: &str, p: &str) -> String {
    let path = std::path::Path::new(p);
    if path.is_absolute() { p.to_string() } else { std::path::Path::new(base).join(path).display().to_string() }
}
