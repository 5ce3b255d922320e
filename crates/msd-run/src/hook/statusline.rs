//! `statusline` (Claude's and Qwen Code's `statusLine` command; both send the session's model,
//! directory and `context_window.*` on stdin: `@anthropic-ai/claude-code@2.1.332:
//! claude@341511681`, `@qwen-code/qwen-code@0.24.4:chunks/chunk-DPEB6S2R.js:64483`): one line
//! of the model, the project's phase and status, the directory and a context-usage bar. It
//! leaves the usage in the session's bridge file for `context-monitor`.

use super::session_start::Position;

/// Cells of the usage bar.
pub(crate) const BAR: usize = 10;

/// The usage bar for `pct` percent used.
pub(crate) fn bar(pct: f64) -> String {
    let pct = pct.clamp(0.0, 100.0);
    let full = ((pct / 100.0) * BAR as f64).round() as usize;
    format!("{}{} {}%", "█".repeat(full), "░".repeat(BAR - full), pct.round())
}

/// The line: `model │ phase 2 of 4 · executing │ dir │ bar`, parts that are unknown left out.
pub(crate) fn render(model: Option<&str>, pos: &Position, dir: Option<&str>, used: Option<f64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = model {
        parts.push(m.to_string());
    }
    let mut work = Vec::new();
    if let Some(ph) = &pos.phase {
        work.push(format!("phase {ph}"));
    }
    if let Some(pl) = &pos.plan {
        work.push(format!("plan {pl}"));
    }
    if let Some(st) = &pos.status {
        work.push(st.to_lowercase());
    }
    if !work.is_empty() {
        parts.push(work.join(" · "));
    }
    if let Some(d) = dir {
        let base = std::path::Path::new(d).file_name().and_then(|n| n.to_str()).unwrap_or(d);
        parts.push(base.to_string());
    }
    if let Some(u) = used {
        parts.push(bar(u));
    }
    parts.join(" │ ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_statusline_line() {
        let pos =
            Position { phase: Some("2 of 4 (API)".into()), status: Some("Executing".into()), ..Position::default() };
        assert_eq!(
            render(Some("Opus"), &pos, Some("/w/shop"), Some(42.0)),
            "Opus │ phase 2 of 4 (API) · executing │ shop │ ████░░░░░░ 42%"
        );
        assert_eq!(render(None, &Position::default(), None, None), "");
        assert_eq!(bar(150.0), "██████████ 100%");
    }
}
