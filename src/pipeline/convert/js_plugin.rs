//! The `js-plugin` hook file format (OpenCode, Kilo): a JavaScript module their plugin loader
//! imports, which spawns the installed helper for each hook point the manifest lists.
//!
//! Input: one [`HookFile`] of format `js-plugin` and the helper's path (both relative to the
//! scope's home). Output: the module's text, the template `js_plugin.js` with the helper's
//! relative path and the hook table filled in as JSON literals (valid JavaScript whatever the
//! home is called: the module finds the helper from its own `import.meta.url`, so no absolute
//! path, quote or `$(...)` of a home is ever written into it, and it spawns with an argv array,
//! never a shell). The shim decides nothing: `msd_run hook <name> --protocol opencode` does.

use msd_core::fs::relpath::RelPath;
use msd_core::manifest::surfaces::{HookFile, helper_from};

const TEMPLATE: &str = include_str!("js_plugin.js");

/// The template, as emitted files name their sources.
pub const TEMPLATE_SOURCE: &str = "src/pipeline/convert/js_plugin.js";

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
    TEMPLATE.replacen("__HELPER__", &helper, 1).replacen("__HOOKS__", &serde_json::Value::Object(table).to_string(), 1)
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
}
