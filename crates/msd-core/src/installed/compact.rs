//! The agents' payloads in the installed tree (ADR-4139 stream 2, SPEC section 8): where the
//! canonical and compact texts live under the core dir, and [`payload`], the text
//! `msd_run query agent-skills` prints.
//!
//! Invariant: a payload is never empty; when compact mode is on and the agent has no compact
//! variant, the canonical text is served and the payload says so inside it. Where the runtime
//! loads the agent file itself (`agents_native` of `runtime.json`), the payload is the skills
//! block alone: the instructions would otherwise reach the agent twice.

/// Where the agents' payload texts live, relative to the core dir.
pub const AGENTS_DIR: &str = "agents";
/// The suffix of a compact variant.
pub const COMPACT_SUFFIX: &str = ".compact.md";

/// Which text a payload carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Compact mode off.
    Canonical,
    /// Compact mode on, and the agent has a variant.
    Compact,
    /// Compact mode on, no variant: the canonical text, disclosed.
    CanonicalSubstituted,
}

/// The payload `msd_run query agent-skills <agent>` prints: the project's skills for the agent,
/// then, when `instructions` is given (the runtime cannot load the agent file), the agent's
/// instructions in the selected variant.
pub fn payload(agent: &str, instructions: Option<(Variant, &str)>, skills: &[String]) -> String {
    let mut s = String::new();
    if skills.is_empty() {
        s.push_str(&format!("No project skills are configured for {agent} (agent_skills.{agent}).\n"));
    } else {
        s.push_str(&format!(
            "Project skills for {agent}: read each before you start; on project conventions they override your defaults.\n"
        ));
        for p in skills {
            s.push_str(&format!("- {p}\n"));
        }
    }
    let Some((variant, instructions)) = instructions else { return s };
    let name = match variant {
        Variant::Canonical | Variant::CanonicalSubstituted => "canonical",
        Variant::Compact => "compact",
    };
    // A general-purpose subagent gets this payload in place of the agent file: say what it is.
    s.push_str(&format!(
        "\nThis runtime has no agent file for {agent}: you are {agent}, and the instructions below are your whole definition. Follow them as your role.\n"
    ));
    s.push_str(&format!("<agent_instructions agent=\"{agent}\" variant=\"{name}\">\n"));
    if variant == Variant::CanonicalSubstituted {
        s.push_str(&format!(
            "Compact content mode is on, but {agent} has no compact variant: these are its canonical instructions, served in its place.\n\n"
        ));
    }
    s.push_str(instructions.trim_end());
    s.push_str("\n</agent_instructions>\n");
    s
}
