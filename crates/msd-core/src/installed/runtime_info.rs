//! `<core>/runtime.json`: what the installer knows about the runtime it installed into and the
//! helper needs at run time (ADR-4139 stream 2, issue 18). The installer writes it from the
//! capability manifest (`src/pipeline/synth.rs`); msd_run reads it back.
//!
//! - `command_ref`: the runtime's own command syntax (`/msd-{stem}`, Gemini's `/msd:{stem}`,
//!   Codex's `$msd-{stem}`), so the helper's hints name commands the user can type.
//! - `agents_native`: whether the runtime loads `agents/<agent>.md` itself when a spawn names the
//!   agent (the scope's artifact layout has an `agents` artifact). Then `query agent-skills`
//!   prints the skills block only; otherwise it also carries the agent's instructions.
//!
//! - `local_helper` (global installs): where the project's own helper would be, so a global
//!   hook stays silent in a project with a local install (`msd_run hook`).
//! - `hook_hosts`: other runtimes that run this runtime's hooks (Cursor runs Claude's), the
//!   payload field that names each and where its own helper is: a hook stays silent inside a
//!   host that has an msd install of its own (`msd_run hook`).
//!
//! An install without the file (older installs, a `--core` pointing at raw content) reads as
//! [`RuntimeInfo::fallback`]: the canonical `/msd:{stem}` syntax and no native agents (the
//! payload then carries the body: larger, never missing anything).

use serde::{Deserialize, Serialize};

use crate::manifest::capability::HookHost;

/// Where the file lives, relative to the core dir.
pub const RUNTIME_INFO_PATH: &str = "runtime.json";

/// The placeholder a helper hint writes for a command: `{cmd:new-project}`.
pub const COMMAND_PLACEHOLDER: &str = "{cmd:";

/// The installed runtime's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeInfo {
    /// Format version (1).
    pub schema_version: u32,
    /// The runtime's id.
    pub runtime: String,
    /// The scope installed (`global` or `local`).
    pub scope: String,
    /// How a command is referenced; `{stem}` is the command stem.
    pub command_ref: String,
    /// The runtime loads agent files natively when a spawn names the agent.
    pub agents_native: bool,
    /// A global install's: where the helper of a local install of the same runtime is,
    /// relative to the project root (`.opencode/msd-core/bin/msd_run`). A global hook defers to
    /// it when the session's project has one, so the hook runs once with both installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_helper: Option<String>,
    /// Runtimes that run this runtime's hooks too, from the manifest's `hook_hosts`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hook_hosts: Vec<HostHelpers>,
}

/// What the helper needs at run time of a runtime that runs this runtime's hooks (a
/// [`HookHost`] of the manifest, without what only the installer reads): the payload field
/// only it sends, and where its own msd helper is (`~/` for the user's home, else relative to
/// the project).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostHelpers {
    /// The top-level payload field that names the host (`cursor_version`).
    pub marker: String,
    /// The host's helper paths.
    pub helpers: Vec<String>,
}

impl From<&HookHost> for HostHelpers {
    fn from(host: &HookHost) -> HostHelpers {
        HostHelpers { marker: host.marker.clone(), helpers: host.helpers.clone() }
    }
}

impl RuntimeInfo {
    /// What a tree without `runtime.json` reads as.
    pub fn fallback() -> RuntimeInfo {
        RuntimeInfo {
            schema_version: 1,
            runtime: String::new(),
            scope: String::new(),
            command_ref: "/msd:{stem}".into(),
            agents_native: false,
            local_helper: None,
            hook_hosts: Vec::new(),
        }
    }

    /// The file's text (pretty JSON, trailing newline).
    pub fn render(&self) -> String {
        serde_json::to_string_pretty(self).expect("runtime info serialises") + "\n"
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<RuntimeInfo, String> {
        let info: RuntimeInfo = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !info.command_ref.contains("{stem}") {
            return Err(format!("command_ref `{}` lacks {{stem}}", info.command_ref));
        }
        Ok(info)
    }

    /// `stem` as this runtime's command (`new-project` -> `/msd-new-project`).
    pub fn command(&self, stem: &str) -> String {
        self.command_ref.replacen("{stem}", stem, 1)
    }

    /// Replaces every `{cmd:<stem>}` of `text` with this runtime's command.
    pub fn localize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find(COMMAND_PLACEHOLDER) {
            let after = &rest[i + COMMAND_PLACEHOLDER.len()..];
            match after.find('}') {
                Some(end)
                    if after[..end].bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') =>
                {
                    out.push_str(&rest[..i]);
                    out.push_str(&self.command(&after[..end]));
                    rest = &after[end + 1..];
                }
                _ => {
                    out.push_str(&rest[..i + COMMAND_PLACEHOLDER.len()]);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(r: &str) -> RuntimeInfo {
        RuntimeInfo { command_ref: r.into(), ..RuntimeInfo::fallback() }
    }

    #[test]
    fn runtime_info_localizes_each_runtime_syntax() {
        let hint = "run {cmd:new-project}, then {cmd:health}; {cmd:Bad} and {cmd: stay";
        assert_eq!(
            info("/msd-{stem}").localize(hint),
            "run /msd-new-project, then /msd-health; {cmd:Bad} and {cmd: stay"
        );
        assert_eq!(info("/msd:{stem}").localize("{cmd:health}"), "/msd:health");
        assert_eq!(info("$msd-{stem}").localize("x {cmd:next}."), "x $msd-next.");
    }

    #[test]
    fn runtime_info_round_trips_and_rejects_a_ref_without_stem() {
        let i = RuntimeInfo { runtime: "gemini".into(), agents_native: true, ..info("/msd:{stem}") };
        assert_eq!(RuntimeInfo::parse(&i.render()).unwrap(), i);
        assert!(RuntimeInfo::parse(&info("/msd").render()).is_err());
    }
}
