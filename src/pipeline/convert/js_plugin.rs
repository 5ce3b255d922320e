//! The JavaScript hook file formats: `js-plugin` (OpenCode, Kilo: a module their plugin loader
//! imports) and `pi-extension` (Pi: a module its extension loader imports, whose default export
//! registers handlers with `pi.on`). Each spawns the installed helper for each hook point the
//! manifest lists.
//!
//! Input: one [`HookFile`] of either format and the helper's path (both relative to the
//! scope's home). Output: the module's text, the format's template (`js_plugin.js`,
//! `pi_extension.js`, each a header line, the `__PRELUDE__` line and its handlers) with the
//! shared prelude (`js_prelude.js`: how the helper is run, `run`, and its answer read, `reply`)
//! in place of `__PRELUDE__`, and the helper's
//! relative path and the hook table filled in as JSON literals (valid JavaScript whatever the
//! home is called: the module finds the helper from its own `import.meta.url`, so no absolute
//! path, quote or `$(...)` of a home is ever written into it, and it spawns with an argv array,
//! never a shell). The shim decides nothing: `msd_run hook <name> --protocol opencode` does
//! (both shims read the same JSON answer, `{context}` or `{block}`).

use msd_core::fs::relpath::RelPath;
use msd_core::manifest::surfaces::{HookFile, HookFileFormat, helper_from};

/// What every module starts with, in place of the template's `__PRELUDE__` line.
const PRELUDE: &str = include_str!("js_prelude.js");

/// The line of a template the prelude replaces.
const PRELUDE_LINE: &str = "__PRELUDE__\n";

/// The prelude, as emitted files name their sources.
const PRELUDE_SOURCE: &str = "src/pipeline/convert/js_prelude.js";

/// The template of `format` (`script` has none: it is not a module).
fn template(format: HookFileFormat) -> &'static str {
    match format {
        HookFileFormat::PiExtension => include_str!("pi_extension.js"),
        HookFileFormat::JsPlugin | HookFileFormat::Script => include_str!("js_plugin.js"),
    }
}

/// The files a module of `format` is made from, as emitted files name their sources: the
/// prelude, then the format's template.
pub fn template_sources(format: HookFileFormat) -> [&'static str; 2] {
    let template = match format {
        HookFileFormat::PiExtension => "src/pipeline/convert/pi_extension.js",
        HookFileFormat::JsPlugin | HookFileFormat::Script => "src/pipeline/convert/js_plugin.js",
    };
    [PRELUDE_SOURCE, template]
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
    template(f.format).replacen(PRELUDE_LINE, PRELUDE, 1).replacen("__HELPER__", &helper, 1).replacen(
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

    fn hook_file(format: HookFileFormat, hook: PluginHook) -> HookFile {
        HookFile {
            path: RelPath::new("x/msd.js").unwrap(),
            scopes: vec![msd_core::manifest::Scope::Global],
            format,
            args: String::new(),
            plugin: [(hook, "guard --protocol opencode".to_string())].into(),
            sources: vec![],
        }
    }

    #[test]
    fn js_plugin_shim_is_written_once_in_the_prelude() {
        for format in [HookFileFormat::JsPlugin, HookFileFormat::PiExtension] {
            let t = template(format);
            assert_eq!(t.matches(PRELUDE_LINE).count(), 1, "{format:?}: one prelude line");
            for shared in ["function run(", "function reply(", "import { spawn }", "const HELPER"] {
                assert!(!t.contains(shared), "{format:?}: `{shared}` belongs to the prelude only");
                assert_eq!(PRELUDE.matches(shared).count(), 1, "{shared}");
            }
        }
    }

    #[test]
    fn js_plugin_every_emitted_line_comes_from_its_sources() {
        let helper = RelPath::new("msd-core/bin/msd_run").unwrap();
        for (format, hook) in
            [(HookFileFormat::JsPlugin, PluginHook::ToolBefore), (HookFileFormat::PiExtension, PluginHook::PiToolCall)]
        {
            let js = render(&hook_file(format, hook), &helper);
            // The sources as the emitted file names them, read from the repository.
            let [prelude, template] = template_sources(format).map(|s| {
                msd_core::fs::fsx::read_to_string(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(s)).unwrap()
            });
            let (header, handlers) = template.split_once(PRELUDE_LINE).expect("the template has a prelude line");
            let want: Vec<&str> = header.lines().chain(prelude.lines()).chain(handlers.lines()).collect();
            let got: Vec<&str> = js.lines().collect();
            assert_eq!(got.len(), want.len(), "{format:?}: the header, the prelude, the handlers");
            for (got, want) in got.iter().zip(&want) {
                let filled = ["__HELPER__", "__HOOKS__"]
                    .iter()
                    .find_map(|p| want.split_once(p))
                    .is_some_and(|(before, after)| got.starts_with(before) && got.ends_with(after));
                assert!(got == want || filled, "{format:?}: emitted `{got}` is not its source's `{want}`");
            }
        }
    }
}
