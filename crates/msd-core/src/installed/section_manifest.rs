//! `workflows/section-manifest.json` in the installed core: each workflow's sections in document
//! order (`id`, `when`, `read`) and each command's argument grammar, as `msd_run query
//! init.<stem>` reads them (SPEC section 9, contracts section 6). The installer generates it from
//! the source content (`msd_install::pipeline::section_manifest`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::installed::invocation::ArgSpec;

/// Where the manifest lives, relative to the content root.
pub const PATH: &str = "msd-core/workflows/section-manifest.json";

/// Where the manifest lives, relative to the installed core dir.
pub const CORE_PATH: &str = "workflows/section-manifest.json";

/// Format version.
pub const SCHEMA_VERSION: u32 = 1;

/// How content names the installed core dir; the installer rewrites it per runtime and scope.
pub const INSTALLED_PREFIX: &str = "~/.claude/msd-core/";

/// The manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionManifest {
    /// Format version.
    pub schema_version: u32,
    /// Workflow stem -> its sections in document order (only workflows that have sections).
    pub workflows: BTreeMap<String, Vec<Entry>>,
    /// Workflow stem -> the argument grammar of the command that runs it.
    pub arguments: BTreeMap<String, ArgSpec>,
}

/// One section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Section id.
    pub id: String,
    /// Its `when=` atom.
    pub when: String,
    /// The steps file holding its body, as an installed path in Claude form (rewritten at install).
    pub read: String,
}

impl SectionManifest {
    /// The committed form: pretty JSON with a final newline.
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("manifest serializes");
        s.push('\n');
        s
    }

    /// Whether `v` has the manifest's shape.
    pub fn has_shape(v: &serde_json::Value) -> bool {
        serde_json::from_value::<SectionManifest>(v.clone()).is_ok()
    }
}
