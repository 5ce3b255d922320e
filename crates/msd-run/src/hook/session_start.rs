//! `session-start`: one line naming where the project stands (phase, status, the next msd
//! command) from `.planning/STATE.md`, its continuity lines (`Stopped at`, `Resume file`), and
//! at most once a day a notice that the installer on this machine is newer than this install
//! (from the update cache, [`msd_core::installed::update_cache`]; no network). Silent when
//! there is nothing to say.

use msd_core::installed::update_cache::{self, NoticeShown, UpdateCache};

/// Seconds between two update notices.
pub(crate) const NOTICE_EVERY: u64 = 86_400;

/// The `## Current Position` fields of STATE.md that matter at a session's start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Position {
    /// `Phase: 2 of 4 (API)`'s value.
    pub phase: Option<String>,
    /// `Plan:`'s value.
    pub plan: Option<String>,
    /// `Status:`'s value.
    pub status: Option<String>,
    /// `Stopped at:` and `Resume file:` lines.
    pub continuity: Vec<String>,
}

/// Reads the position out of STATE.md's text.
pub(crate) fn position(state_md: &str) -> Position {
    let mut p = Position::default();
    let mut in_position = false;
    for line in state_md.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            in_position = h.trim() == "Current Position";
            continue;
        }
        let t = line.trim();
        let field = |k: &str| t.strip_prefix(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        if in_position {
            p.phase = p.phase.take().or_else(|| field("Phase:"));
            p.plan = p.plan.take().or_else(|| field("Plan:"));
            p.status = p.status.take().or_else(|| field("Status:"));
        }
        if t.starts_with("Stopped at:") || t.starts_with("Resume file:") {
            p.continuity.push(t.to_string());
        }
    }
    p
}

/// The msd command that moves a phase of `status` on: its stem and arguments.
pub(crate) fn next_command(status: &str) -> (&'static str, &'static str) {
    let s = status.to_ascii_lowercase();
    let table: &[(&str, (&str, &str))] = &[
        ("paused", ("resume-work", "")),
        ("ready to discuss", ("discuss-phase", "")),
        ("ready to plan", ("plan-phase", "")),
        ("planned", ("execute-phase", "")),
        ("ready to execute", ("execute-phase", "")),
        ("executing", ("execute-phase", "")),
        ("in progress", ("execute-phase", "")),
        ("ready to verify", ("verify-work", "")),
        ("verifying", ("verify-work", "")),
        ("gaps found", ("plan-phase", " --gaps")),
        ("phase complete", ("discuss-phase", "")),
        ("milestone", ("complete-milestone", "")),
    ];
    table.iter().find(|(k, _)| s.starts_with(k)).map_or(("progress", ""), |(_, c)| *c)
}

/// The summary of a position: one line, then the continuity lines; the next command written
/// as the runtime writes its commands (`command`: `/msd-plan-phase`, Gemini's `/msd:plan-phase`).
pub(crate) fn summary(p: &Position, command: impl Fn(&str) -> String) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(ph) = &p.phase {
        parts.push(format!("phase {ph}"));
    }
    if let Some(pl) = &p.plan {
        parts.push(format!("plan {pl}"));
    }
    if let Some(st) = &p.status {
        parts.push(st.to_lowercase());
    }
    if parts.is_empty() && p.continuity.is_empty() {
        return None;
    }
    let (stem, args) = next_command(p.status.as_deref().unwrap_or(""));
    let mut out = format!("msd: {}; next: {}{args} (from .planning/STATE.md)", parts.join(", "), command(stem));
    for c in &p.continuity {
        out.push('\n');
        out.push_str(c);
    }
    Some(out)
}

/// The update notice for an install of version `own`, given the cache and the last notice, at
/// `now` (Unix seconds); `None` when there is nothing to say or it was said within a day.
pub(crate) fn update_notice(
    own: &str,
    cache: Option<&UpdateCache>,
    last: Option<NoticeShown>,
    now: u64,
) -> Option<String> {
    let c = cache?;
    if !update_cache::newer(&c.version, own) {
        return None;
    }
    if last.is_some_and(|l| now.saturating_sub(l.shown) < NOTICE_EVERY) {
        return None;
    }
    Some(format!(
        "msd: this msd-core is {own}; msd-install {} is on this machine: run it again for this runtime to update (the user decides).",
        c.version
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = "# Project State\n\n## Current Position\n\nPhase: 2 of 4 (API)\nPlan: 1 of 3\nStatus: Executing\n\n## Performance\nPlans: 3\n\n## Session Continuity\n\nLast session: x\nStopped at: plan 2-3 task 4\nResume file: None\n";

    #[test]
    fn hook_session_start_one_line_and_next_command() {
        let colon = |stem: &str| format!("/msd:{stem}");
        let s = summary(&position(STATE), colon).unwrap();
        assert_eq!(
            s,
            "msd: phase 2 of 4 (API), plan 1 of 3, executing; next: /msd:execute-phase (from .planning/STATE.md)\nStopped at: plan 2-3 task 4\nResume file: None"
        );
        assert_eq!(summary(&position("# nothing here\n"), colon), None);
        assert_eq!(next_command("Ready to discuss"), ("discuss-phase", ""));
        assert_eq!(next_command("odd"), ("progress", ""));
        let gaps = "## Current Position\n\nStatus: Gaps found\n";
        let dash = |stem: &str| format!("/msd-{stem}");
        assert!(summary(&position(gaps), dash).unwrap().contains("next: /msd-plan-phase --gaps ("));
    }

    #[test]
    fn hook_session_start_update_notice_once_a_day() {
        let c = UpdateCache { version: "0.9.0".into(), at: 0 };
        assert!(update_notice("0.8.1", Some(&c), None, 100).unwrap().contains("0.9.0"));
        assert_eq!(update_notice("0.8.1", Some(&c), Some(NoticeShown { shown: 100 }), 100 + 3600), None);
        assert!(update_notice("0.8.1", Some(&c), Some(NoticeShown { shown: 100 }), 100 + NOTICE_EVERY).is_some());
        assert_eq!(update_notice("0.9.0", Some(&c), None, 100), None);
        assert_eq!(update_notice("1.0.0", Some(&c), None, 100), None);
        assert_eq!(update_notice("0.8.1", None, None, 100), None);
    }
}
