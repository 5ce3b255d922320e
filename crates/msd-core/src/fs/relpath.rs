//! Validated relative paths: the only path type data (manifests, content, file manifests) may
//! carry.
//!
//! Why: the installer must never write outside the resolved target. A `RelPath` is built only
//! by [`RelPath::new`], which refuses absolute paths, `..`, `.`, empty segments, backslashes
//! and NUL, so joining one under a root can never escape it lexically (symlinks are the fs
//! module's job).

use std::fmt;
use std::sync::Arc;

/// A POSIX relative path with only normal segments, e.g. `skills/msd-help/SKILL.md`.
///
/// Shared, not owned: a plan, its manifest, the transaction and the fast-path record each hold
/// the path of every file of every target until the run ends, so a clone is a reference count,
/// not a copy (tens of thousands of paths in a large install).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelPath(Arc<str>);

/// Why a string is not a safe relative path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelPathError {
    /// Empty string.
    #[error("empty path")]
    Empty,
    /// Starts with `/` or a drive letter.
    #[error("absolute path `{0}`")]
    Absolute(String),
    /// Contains a `..` segment.
    #[error("path `{0}` contains `..`")]
    Traversal(String),
    /// Contains `.` or an empty segment (`a//b`, trailing `/`).
    #[error("path `{0}` has an empty or `.` segment")]
    BadSegment(String),
    /// Contains NUL or a backslash.
    #[error("path `{0}` contains a NUL byte or a backslash")]
    BadChar(String),
}

impl RelPath {
    /// Validates `s`.
    pub fn new(s: impl Into<String>) -> Result<Self, RelPathError> {
        let s = s.into();
        if s.is_empty() {
            return Err(RelPathError::Empty);
        }
        if s.contains('\0') || s.contains('\\') {
            return Err(RelPathError::BadChar(s.escape_debug().to_string()));
        }
        let b = s.as_bytes();
        if s.starts_with('/') || (b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic()) {
            return Err(RelPathError::Absolute(s));
        }
        for seg in s.split('/') {
            match seg {
                ".." => return Err(RelPathError::Traversal(s)),
                "" | "." => return Err(RelPathError::BadSegment(s)),
                _ => {}
            }
        }
        Ok(RelPath(s.into()))
    }

    /// The path as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `self/other`.
    pub fn join(&self, other: &RelPath) -> RelPath {
        RelPath(format!("{}/{}", self.0, other.0).into())
    }

    /// The last segment.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The parent, `None` for a single segment.
    pub fn parent(&self) -> Option<RelPath> {
        self.0.rfind('/').map(|i| RelPath(self.0[..i].into()))
    }

    /// Whether `self` is `prefix` or lies under it.
    pub fn starts_with(&self, prefix: &RelPath) -> bool {
        {
            let (s, p) = (&*self.0, &*prefix.0);
            s == p || (s.starts_with(p) && s.as_bytes().get(p.len()) == Some(&b'/'))
        }
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RelPath::new(s).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for RelPath {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RelPath".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A relative POSIX path: no leading `/`, no `..`, `.` or empty segments, no backslash or NUL.",
            "pattern": "^(?!/)(?!.*(^|/)\\.\\.?(/|$))(?!.*//)[^\\\\\\u0000]+$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relpath_accepts_normal_paths() {
        assert_eq!(RelPath::new("a/b.md").unwrap().as_str(), "a/b.md");
        assert_eq!(RelPath::new(".claude/x").unwrap().file_name(), "x");
    }

    #[test]
    fn relpath_refuses_escapes() {
        for bad in ["", "/etc/passwd", "a/../b", "..", "a//b", "a/./b", "a/", "C:/x", "a\\b", "a\0b"] {
            assert!(RelPath::new(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn relpath_starts_with_is_segment_aware() {
        let p = RelPath::new("skills/msd-x/SKILL.md").unwrap();
        assert!(p.starts_with(&RelPath::new("skills").unwrap()));
        assert!(!p.starts_with(&RelPath::new("skill").unwrap()));
    }
}
