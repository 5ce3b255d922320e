//! The update cache: the installer's note of the newest msd-install that ran on this machine,
//! which msd_run's session-start hook compares with its own version to say, at most once a day,
//! that an install is older than the installer the user already has (run it again to update).
//! No hook goes to the network for it.
//!
//! One small JSON file, `$XDG_CACHE_HOME/msd/update.json` (else `$HOME/.cache/msd/update.json`):
//! `{"version": "0.3.0", "at": 1764584000}` (the installer's version, Unix seconds). Beside it,
//! `update-notice.json` holds when the hook last said so (`{"shown": <secs>}`), written by the
//! hook.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file name of the cache.
pub const CACHE_FILE: &str = "update.json";
/// The file name of the hook's last-notice record.
pub const NOTICE_FILE: &str = "update-notice.json";

/// What the installer records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpdateCache {
    /// The msd-install version that last installed here (the newest one seen).
    pub version: String,
    /// When, in Unix seconds.
    pub at: u64,
}

/// When the hook last gave the notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeShown {
    /// Unix seconds.
    pub shown: u64,
}

/// The cache directory from the environment's `XDG_CACHE_HOME` and `HOME` values.
pub fn cache_dir(xdg_cache_home: Option<&str>, home: Option<&Path>) -> Option<PathBuf> {
    match xdg_cache_home.filter(|x| Path::new(x).is_absolute()) {
        Some(x) => Some(Path::new(x).join("msd")),
        None => home.map(|h| h.join(".cache/msd")),
    }
}

/// The cache directory of this process's environment.
pub fn cache_dir_from_env() -> Option<PathBuf> {
    let xdg = std::env::var("XDG_CACHE_HOME").ok();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    cache_dir(xdg.as_deref(), home.as_deref())
}

/// Numeric parts of a `MAJOR.MINOR.PATCH[-pre]` version (the pre-release part is ignored).
pub fn version_key(v: &str) -> Option<Vec<u64>> {
    let core = v.trim().trim_start_matches('v').split(['-', '+']).next()?;
    core.split('.').map(|p| p.parse().ok()).collect()
}

/// Whether version `a` is newer than `b` (false when either does not parse).
pub fn newer(a: &str, b: &str) -> bool {
    matches!((version_key(a), version_key(b)), (Some(x), Some(y)) if x > y)
}

/// The cache to write after installing `version` at `now`, given the one on disk: the newer
/// version wins, so installing an old release somewhere does not hide a newer one.
pub fn next(current: Option<&UpdateCache>, version: &str, now: u64) -> UpdateCache {
    match current {
        Some(c) if newer(&c.version, version) => c.clone(),
        _ => UpdateCache { version: version.to_string(), at: now },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_cache_versions_compare_numerically() {
        assert!(newer("0.10.0", "0.9.9"));
        assert!(!newer("0.9.9", "0.10.0"));
        assert!(!newer("1.0.0", "1.0.0"));
        assert!(!newer("x", "1.0.0"));
        assert_eq!(next(Some(&UpdateCache { version: "2.0.0".into(), at: 1 }), "1.0.0", 5).version, "2.0.0");
        assert_eq!(next(Some(&UpdateCache { version: "1.0.0".into(), at: 1 }), "1.1.0", 5).at, 5);
    }

    #[test]
    fn update_cache_dir_prefers_absolute_xdg() {
        assert_eq!(cache_dir(Some("/x"), Some(Path::new("/h"))), Some(PathBuf::from("/x/msd")));
        assert_eq!(cache_dir(Some("rel"), Some(Path::new("/h"))), Some(PathBuf::from("/h/.cache/msd")));
        assert_eq!(cache_dir(None, None), None);
    }
}
