//! What `msd-install --version` says: the package version and the commit and date it was built
//! from (set by `build.rs`; empty in a build without a repository).

use serde::Serialize;

/// The version of this build.
pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The short commit it was built from, or empty.
pub(crate) const COMMIT: &str = env!("MSD_BUILD_COMMIT");
/// The commit's date (YYYY-MM-DD), or empty.
pub(crate) const DATE: &str = env!("MSD_BUILD_DATE");
/// The target triple.
pub(crate) const TARGET: &str = env!("MSD_BUILD_TARGET");

/// `0.2.0 (abc1234 2026-12-03)`, or `0.2.0` without build facts.
pub(crate) fn long() -> String {
    match (COMMIT.is_empty(), DATE.is_empty()) {
        (true, _) => VERSION.to_string(),
        (false, true) => format!("{VERSION} ({COMMIT})"),
        (false, false) => format!("{VERSION} ({COMMIT} {DATE})"),
    }
}

/// `--version --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct VersionDoc {
    /// The version of this document's shape.
    pub schema_version: u32,
    /// The package name.
    pub name: &'static str,
    /// The package version (semver).
    pub version: &'static str,
    /// The short commit hash, when built from a repository.
    pub commit: Option<&'static str>,
    /// The commit date (YYYY-MM-DD), when built from a repository.
    pub date: Option<&'static str>,
    /// The target triple it was built for.
    pub target: &'static str,
}

/// The `--version --json` document.
pub(crate) fn doc() -> VersionDoc {
    let opt = |s: &'static str| (!s.is_empty()).then_some(s);
    VersionDoc {
        schema_version: super::versioned::SCHEMA_VERSION,
        name: "msd-install",
        version: VERSION,
        commit: opt(COMMIT),
        date: opt(DATE),
        target: TARGET,
    }
}
