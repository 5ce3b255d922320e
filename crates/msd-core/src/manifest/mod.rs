//! Capability manifests (`runtimes/<id>/capability.json`, SPEC section 4): [`capability`] (the
//! types, parsing and validation), [`caps`] (byte caps and size tiers), [`surfaces`] (the
//! settings files a runtime is given entries in), [`resolver`] (task-content resolvers).

pub mod capability;
pub mod caps;
pub mod resolver;
pub mod surfaces;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Install scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The runtime's global home.
    Global,
    /// The current project.
    Local,
}

impl Scope {
    /// `global` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Local => "local",
        }
    }
}

/// A manifest problem, located.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct ManifestError {
    /// The manifest file (display form).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

/// Every problem of one manifest (never empty), in the order of its lines. Prints one per line.
#[derive(Debug)]
pub struct ManifestErrors(pub Vec<ManifestError>);

impl std::fmt::Display for ManifestErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.len() > 1 {
            writeln!(f, "{} problems in {}:", self.0.len(), self.0[0].file)?;
        }
        for (n, e) in self.0.iter().enumerate() {
            if n > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestErrors {}

impl ManifestErrors {
    /// What to do: the one hint of a single problem; each problem's hint, by its place, for several.
    pub fn hint(&self) -> String {
        match self.0.as_slice() {
            [one] => one.hint.clone(),
            all => all.iter().map(|e| format!("{}:{}: {}", e.line, e.col, e.hint)).collect::<Vec<_>>().join("\n"),
        }
    }
}

impl From<ManifestError> for ManifestErrors {
    fn from(e: ManifestError) -> Self {
        ManifestErrors(vec![e])
    }
}
