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

/// Where the changes of every version are described: CHANGELOG.md on the main branch of the
/// repository Cargo.toml names.
pub(crate) fn changelog_url() -> String {
    format!("{}/blob/main/CHANGELOG.md", env!("CARGO_PKG_REPOSITORY").trim_end_matches('/'))
}

/// Compares two versions as semver orders them (`MAJOR.MINOR.PATCH[-PRE][+BUILD]`; a pre-release
/// before its release, pre-releases compared as text); `None` when either does not parse, so an
/// unreadable version is never called older or newer.
pub(crate) fn compare(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    fn parse(v: &str) -> Option<([u64; 3], Option<&str>)> {
        let v = v.trim().trim_start_matches('v');
        let v = v.split_once('+').map_or(v, |(core, _)| core);
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (v, None),
        };
        let mut parts = core.split('.');
        let mut n = [0u64; 3];
        for slot in &mut n {
            *slot = parts.next()?.parse().ok()?;
        }
        parts.next().is_none().then_some((n, pre))
    }
    let (an, ap) = parse(a)?;
    let (bn, bp) = parse(b)?;
    Some(an.cmp(&bn).then_with(|| match (ap, bp) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.cmp(y),
    }))
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering::{Equal, Greater, Less};

    use super::compare;

    #[test]
    fn versions_compare_as_semver() {
        assert_eq!(compare("0.3.5", "0.3.6"), Some(Less));
        assert_eq!(compare("0.10.0", "0.9.9"), Some(Greater));
        assert_eq!(compare("v1.0.0", "1.0.0+abc"), Some(Equal));
        assert_eq!(compare("1.0.0-rc.1", "1.0.0"), Some(Less));
        assert_eq!(compare("1.0", "1.0.0"), None);
        assert_eq!(compare("", "1.0.0"), None);
    }
}
