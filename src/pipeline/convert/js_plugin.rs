//! The JavaScript hook file formats: `js-plugin` (OpenCode, Kilo: a module their plugin loader
//! imports) and `pi-extension` (Pi: a module its extension loader imports, whose default export
//! registers handlers with `pi.on`). Each spawns the installed helper for each hook point the
//! manifest lists.
//!
//! Input: one [`HookFile`] of either format and the helper's path (both relative to the
//! scope's home). Output: the module's text, the format's template (`js_plugin.js`,
//! `pi_extension.js`) with the helper's
//! relative path and the hook table filled in as JSON literals (valid JavaScript whatever the
//! home is called: the module finds the helper from its own `import.meta.url`, so no absolute
//! path, quote or `$(...)` of a home is ever written into it, and it spawns with an argv array,
//! never a shell). The shim decides nothing: `msd_run hook <name> --protocol opencode` does
//! (both shims read the same JSON answer, `{context}` or `{block}`).

use msd_core::fs::relpath::RelPath;
use msd_core::manifest::surfaces::{HookFile, HookFileFormat, helper_from};

/// The template of `format` (`script` has none: it is not a module).
fn template(format: HookFileFormat) -> &'static str {
    match format {
        HookFileFormat::PiExtension => include_str!("pi_extension.js"),
        HookFileFormat::JsPlugin | HookFileFormat::Script => include_str!("js_plugin.js"),
    }
}

/// The template of `format`, as emitted files name their sources.
pub fn template_source(format: HookFileFormat) -> &'static str {
    match format {
        HookFileFormat::PiExtension => "src/pipeline/convert/pi_extension.js",
        HookFileFormat::JsPlugin | HookFileFormat::Script => "src/pipeline/convert/js_plugin.js",
    }
}

/// The module of `f`, whose helper is at `helper`.
pub fn render(f: &HookFile, helper: &RelPath) -> String {
    let table: serde_json::Map<String, serde_json::Value> = f
        .plugin
        .iter()
        .map(|(hook, args)| {
            let argv: Vec<&str> = std::iter::once("hook").chain(args.split_whitespace()).collect();
            (hook.as_str().to_string(), argv.into())
        })
        .collect();
    let helper = serde_json::Value::from(helper_from(f, helper)).to_string();
    template(f.format).replacen("__HELPER__", &helper, 1).replacen(
        "__HOOKS__",
        &serde_json::Value::Object(table).to_string(),
        1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use msd_core::manifest::surfaces::{HookFileFormat, PluginHook};

    #[test]
    fn js_plugin_fills_the_helper_and_the_hook_table_as_json() {
        let f = HookFile {
            path: RelPath::new("plugin/msd.js").unwrap(),
            scopes: vec![msd_core::manifest::Scope::Global],
            format: HookFileFormat::JsPlugin,
            args: String::new(),
            plugin: [(PluginHook::ToolBefore, "guard --protocol opencode".to_string())].into(),
            sources: vec![],
        };
        let js = render(&f, &RelPath::new("msd-core/bin/msd_run").unwrap());
        assert!(js.contains(r#"new URL("../msd-core/bin/msd_run", import.meta.url)"#), "{js}");
        assert!(
            js.contains(r#"const HOOKS = {"tool.execute.before":["hook","guard","--protocol","opencode"]};"#),
            "{js}"
        );
        assert!(!js.contains("__HELPER__") && !js.contains("__HOOKS__"));
    }

    #[test]
    fn pi_extension_fills_its_own_template() {
        let f = HookFile {
            path: RelPath::new("extensions/msd.js").unwrap(),
            scopes: vec![msd_core::manifest::Scope::Global],
            format: HookFileFormat::PiExtension,
            args: String::new(),
            plugin: [(PluginHook::PiToolCall, "guard --protocol opencode".to_string())].into(),
            sources: vec![],
        };
        let js = render(&f, &RelPath::new("msd-core/bin/msd_run").unwrap());
        assert!(js.contains(r#"new URL("../msd-core/bin/msd_run", import.meta.url)"#), "{js}");
        assert!(js.contains(r#"const HOOKS = {"tool_call":["hook","guard","--protocol","opencode"]};"#), "{js}");
        assert!(js.contains("pi.on(\"tool_call\""), "{js}");
        assert!(!js.contains("__HELPER__") && !js.contains("__HOOKS__"));
    }
}
