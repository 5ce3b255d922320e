//! `msd_run query update-check [--available <version>]`: whether a newer msd-core build than the
//! installed one is at hand, decided by comparing versions numerically (`0.10.0` is newer than
//! `0.9.0`), never by string equality. `/msd:update` asks it instead of comparing text itself.
//!
//! The installed version is the helper's own: msd-install copies the msd_run built with it into
//! every install, so the helper's version is the install's. The available version is the newer
//! of `--available` (what `msd-install --version` printed: a bare `0.3.0` or the whole line
//! `msd-install 0.3.0 (abc1234 2026-12-03)`) and the installer's note in the update cache
//! ([`msd_core::installed::update_cache`]: the newest msd-install that ran on this machine). No
//! network.
//!
//! Output (snake_case, like every helper answer): `{"schema_version": 1, "installed": "0.2.0",
//! "available": "0.3.0" | null, "available_from": "argument" | "update_cache" | null, "status":
//! "update_available" | "current" | "installed_is_newer" | "unknown"}`; `unknown` when no
//! available version is known.

use std::path::PathBuf;

use msd_core::fs::fsx;
use msd_core::installed::update_cache::{self, UpdateCache};
use serde_json::json;

use super::{Answer, RunError};

/// The version to compare with.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The newest installer's version: a version or the line `msd-install --version` prints.
    #[arg(long, value_name = "VERSION")]
    pub available: Option<String>,
}

/// The first word of `text` that reads as a `MAJOR.MINOR.PATCH` version.
pub(crate) fn version_in(text: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_start_matches('v'))
        .find(|w| update_cache::version_key(w).is_some_and(|k| k.len() >= 2))
        .map(str::to_string)
}

/// The answer for `installed`, the `--available` text and the cached installer version.
pub(crate) fn decide(
    installed: &str,
    argument: Option<&str>,
    cached: Option<&str>,
) -> Result<serde_json::Value, RunError> {
    let argument = match argument {
        Some(text) => Some(version_in(text).ok_or_else(|| RunError::Usage {
            message: format!("--available {text:?} holds no version (MAJOR.MINOR.PATCH)"),
            hint: "pass what `msd-install --version` prints, or a version such as 0.3.0".into(),
        })?),
        None => None,
    };
    let cached = cached.and_then(version_in);
    let (available, from) = match (argument, cached) {
        (Some(a), Some(c)) if update_cache::newer(&c, &a) => (Some(c), Some("update_cache")),
        (Some(a), _) => (Some(a), Some("argument")),
        (None, Some(c)) => (Some(c), Some("update_cache")),
        (None, None) => (None, None),
    };
    let status = match &available {
        None => "unknown",
        Some(a) if update_cache::newer(a, installed) => "update_available",
        Some(a) if update_cache::newer(installed, a) => "installed_is_newer",
        Some(_) => "current",
    };
    Ok(json!({
        "schema_version": 1,
        "installed": installed,
        "available": available,
        "available_from": from,
        "status": status,
    }))
}

/// Runs the query.
pub(crate) fn run(args: &Args) -> Result<Answer, RunError> {
    let cached = update_cache::cache_dir_from_env()
        .map(|d| d.join(update_cache::CACHE_FILE))
        .and_then(|p: PathBuf| fsx::read_if_exists(&p).ok().flatten())
        .and_then(|b| serde_json::from_slice::<UpdateCache>(&b).ok())
        .map(|c| c.version);
    let doc = decide(env!("CARGO_PKG_VERSION"), args.available.as_deref(), cached.as_deref())?;
    Ok(Answer::json(&doc, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_check_compares_versions_numerically() {
        let status = |i: &str, a: Option<&str>, c: Option<&str>| decide(i, a, c).unwrap()["status"].clone();
        assert_eq!(status("0.9.0", Some("0.10.0"), None), "update_available");
        assert_eq!(status("0.10.0", Some("0.9.0"), None), "installed_is_newer");
        assert_eq!(status("0.2.0", Some("msd-install 0.2.0 (abc1234 2026-12-03)"), None), "current");
        assert_eq!(status("0.2.0", Some("msd-install 0.3.0 (abc1234 2026-12-03)"), None), "update_available");
        assert_eq!(status("0.2.0", None, None), "unknown");
        // The cache's newer version wins over an older installer on the PATH.
        let d = decide("0.2.0", Some("0.2.0"), Some("0.4.1")).unwrap();
        assert_eq!((d["available"].as_str(), d["available_from"].as_str()), (Some("0.4.1"), Some("update_cache")));
        assert_eq!(d["status"], "update_available");
        assert!(decide("0.2.0", Some("msd-install (unknown)"), None).is_err());
    }
}
