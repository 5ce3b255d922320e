//! `context-monitor` (after each tool call): reads the context usage the runtime reports (in
//! the event, as Claude's and Qwen's status-line input `context_window.*` does, or from the
//! bridge file the `statusline` hook leaves for the session, since Claude's PostToolUse event
//! carries none: `@anthropic-ai/claude-code@2.1.332:claude@341511681`) and tells the model once
//! per threshold to wrap up: at [`WARN`] percent used to finish the current task, at
//! [`CRITICAL`] to stop and pause the work (`pause-work` in the runtime's command syntax). Advisory: silent on anything odd.

use serde::{Deserialize, Serialize};

/// Percent used at which the model is told to finish what it is doing.
pub(crate) const WARN: f64 = 65.0;
/// Percent used at which the model is told to pause now.
pub(crate) const CRITICAL: f64 = 75.0;

/// The thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    /// Past [`WARN`].
    Warn,
    /// Past [`CRITICAL`].
    Critical,
}

/// What one session was told so far (kept in the hooks' state dir per session).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Warned {
    /// Levels already told.
    pub levels: Vec<Level>,
}

/// The context usage the statusline saw last, per session (the bridge file).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Bridge {
    /// Percent used.
    pub used_pct: f64,
}

/// The message for `used` percent, given what was told already; `None` when nothing new.
/// `pause` is the pause command as the runtime writes it (`/msd-pause-work`).
pub(crate) fn decide(used: f64, warned: &Warned, pause: &str) -> Option<(Level, String)> {
    let level = if used >= CRITICAL {
        Level::Critical
    } else if used >= WARN {
        Level::Warn
    } else {
        return None;
    };
    if warned.levels.iter().any(|l| *l >= level) {
        return None;
    }
    let left = (100.0 - used).round();
    let msg = match level {
        Level::Warn => format!(
            "msd: context {left}% left. Finish the current task, keep STATE.md current, and start no new plan in this session."
        ),
        Level::Critical => format!(
            "msd: context {left}% left. Stop after this step: run {pause} now so the next session resumes cleanly."
        ),
    };
    Some((level, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_context_monitor_once_per_threshold() {
        let decide = |used: f64, w: &Warned| super::decide(used, w, "/msd-pause-work");
        let mut w = Warned::default();
        assert_eq!(decide(40.0, &w), None);
        let (l, m) = decide(66.0, &w).unwrap();
        assert_eq!(l, Level::Warn);
        assert!(m.contains("34% left"));
        w.levels.push(l);
        assert_eq!(decide(70.0, &w), None);
        let (l, m) = decide(80.0, &w).unwrap();
        assert_eq!(l, Level::Critical);
        assert!(m.contains("run /msd-pause-work now"));
        w.levels.push(l);
        assert_eq!(decide(95.0, &w), None);
        // Jumping straight past both thresholds says the critical one only, once.
        assert_eq!(decide(90.0, &Warned::default()).unwrap().0, Level::Critical);
        assert_eq!(decide(50.0, &Warned { levels: vec![Level::Critical] }), None);
    }
}
