//! Byte caps every emission is held to: `NEW_FILE_CAP`, the detail-part cap, the size tiers of
//! `content/tiers.json` and the shape of a manifest cap glob (SPEC section 5). Pure data and
//! arithmetic: the guard stage, the partition check and attribution apply them.

use std::collections::BTreeMap;

/// An emitted workflow or agent absent at the base fails above this (32,768 passes).
pub const NEW_FILE_CAP: u64 = 32_768;
/// A compact detail part fails at this or more.
pub const DETAIL_PART_CAP: u64 = 32_768;

/// Size tiers of workflows and agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Deserialize, serde::Serialize)]
pub enum Tier {
    /// The largest.
    #[serde(rename = "XL")]
    Xl,
    /// Large.
    #[serde(rename = "LARGE")]
    Large,
    /// Everything else.
    #[serde(rename = "DEFAULT")]
    Default,
}

impl Tier {
    /// Byte cap of a workflow of this tier.
    pub fn workflow_cap(self) -> u64 {
        match self {
            Tier::Xl => 98_304,
            Tier::Large => 61_440,
            Tier::Default => 40_960,
        }
    }

    /// Byte cap of an agent of this tier.
    pub fn agent_cap(self) -> u64 {
        match self {
            Tier::Xl => 57_344,
            Tier::Large => 49_152,
            Tier::Default => 24_576,
        }
    }

    /// `XL`, `LARGE`, `DEFAULT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Xl => "XL",
            Tier::Large => "LARGE",
            Tier::Default => "DEFAULT",
        }
    }
}

/// `content/tiers.json`.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Tiers {
    /// Workflow stem -> tier.
    #[serde(default)]
    pub workflows: BTreeMap<String, Tier>,
    /// Agent name -> tier.
    #[serde(default)]
    pub agents: BTreeMap<String, Tier>,
}

impl Tiers {
    /// Tier of a workflow (DEFAULT when unlisted).
    pub fn workflow(&self, stem: &str) -> Tier {
        self.workflows.get(stem).copied().unwrap_or(Tier::Default)
    }

    /// Tier of an agent (DEFAULT when unlisted).
    pub fn agent(&self, name: &str) -> Tier {
        self.agents.get(name).copied().unwrap_or(Tier::Default)
    }
}

/// Checks a cap glob: relative, no `..`, only `*` and `**` as wildcards.
pub fn check_glob(glob: &str) -> Result<(), String> {
    if glob.is_empty() || glob.starts_with('/') {
        return Err(format!("cap glob `{glob}` must be a non-empty relative pattern"));
    }
    if glob.split('/').any(|s| s == ".." || s == "." || s.is_empty()) {
        return Err(format!("cap glob `{glob}` has a `..`, `.` or empty segment"));
    }
    if glob.contains(['?', '[', ']', '{', '}', '\\', '!']) {
        return Err(format!("cap glob `{glob}` uses a wildcard other than `*` and `**`"));
    }
    Ok(())
}

/// The bytes a manifest cap rule measures: the emitted bytes as written.
pub fn rule_bytes(bytes: &[u8]) -> u64 {
    bytes.len() as u64
}

/// An emitted workflow or agent absent at the base fails `NEW_FILE_CAP` when it is over it
/// (exactly 32,768 passes).
pub fn exceeds_new_file_cap(bytes: u64) -> bool {
    bytes > NEW_FILE_CAP
}

/// A compact detail part fails `DETAIL_PART_CAP` at 32,768 bytes or more (each part is < 32,768).
pub fn exceeds_detail_part_cap(bytes: u64) -> bool {
    bytes >= DETAIL_PART_CAP
}
