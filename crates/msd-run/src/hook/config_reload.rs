//! `config-reload` (Claude's `FileChanged` event, which names the changed file:
//! `@anthropic-ai/claude-code@2.1.332:claude@331057369`): after `.planning/config.json`
//! changes, tells the model its new content, so the session stops acting on the old settings.
//! Advisory: silent for other files, a deleted file or an odd event.

/// The message for a change of `changed` (a path) whose new text is `text`.
pub(crate) fn decide(changed: &str, text: Option<&str>) -> Option<String> {
    let norm = changed.replace('\\', "/");
    if !(norm == ".planning/config.json" || norm.ends_with("/.planning/config.json")) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text?).ok()?;
    Some(format!("msd: .planning/config.json changed; use these settings from now on: {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_config_reload_only_for_the_config() {
        let m = decide("/p/.planning/config.json", Some("{\"mode\": \"yolo\"}")).unwrap();
        assert!(m.ends_with("{\"mode\":\"yolo\"}"), "{m}");
        assert_eq!(decide("/p/src/config.json", Some("{}")), None);
        assert_eq!(decide("/p/.planning/config.json", Some("{broken")), None);
        assert_eq!(decide("/p/.planning/config.json", None), None);
    }
}
