//! The `settings` list of a manifest: which settings files of a runtime msd-install edits, in
//! which format, and the entries it owns there (each with an owner id). Wire types and their
//! validation only; editing the files is the installer's `apply::surfaces`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fs::relpath::RelPath;
use crate::manifest::Scope;

/// One settings surface of a runtime.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SurfaceSpec {
    /// The file, relative to the scope's home.
    pub file: RelPath,
    /// Scopes that get it (default both).
    #[serde(default = "both_scopes")]
    pub scopes: Vec<Scope>,
    /// How the file is edited.
    pub format: SurfaceFormat,
    /// Our entries, each with an owner id unique within the file.
    pub entries: Vec<EntrySpec>,
    /// What the user must do once our entries are added or changed here (Codex runs a new hook
    /// only after the user trusts it); shown in the install summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Where the file, its keys and its events come from: the runtime's packaged source
    /// (`package@version:path:line`, or `@<byte offset>` in a compiled binary) or its public
    /// documentation (a URL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

fn both_scopes() -> Vec<Scope> {
    vec![Scope::Global, Scope::Local]
}

/// File formats of settings surfaces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SurfaceFormat {
    /// JSON with comments (JSONC); comments and formatting are kept.
    #[default]
    Json,
    /// TOML; comments and formatting are kept.
    Toml,
    /// Block-style YAML (Hermes `config.yaml`); comments and formatting are kept, an edit that
    /// would need a flow collection or a multi-line scalar rewritten is refused.
    Yaml,
    /// A text file (Markdown instructions) holding marked blocks.
    Markdown,
}

/// One entry we own in a surface, by kind (`"kind"` in the manifest).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum EntrySpec {
    /// One item of an array (a hook group, a permission rule), in a JSON, TOML or YAML surface.
    ArrayItem {
        /// Owner id, unique within the file (`hook:session-start`).
        id: String,
        /// Key path to the array.
        at: Vec<String>,
        /// The item. Strings may hold `{{home}}`, `{{core}}` (absolute paths), `{{core_ref}}`
        /// (the core path as content references it), `{{msd_run}}` (the installed helper as a
        /// shell word: absolute and quoted, or `"$HOME"/...` under `--portable-hooks`, for the
        /// shell the runtime runs commands with on this platform), `{{msd_run_powershell}}`
        /// (the same, always as a PowerShell call, for a field the runtime runs in PowerShell
        /// whatever the platform, such as Copilot's `powershell`), `{{msd_run_argv}}` (the
        /// helper for a runtime that splits the command into words like sh and runs it without a
        /// shell, expanding only a leading `~`, such as Hermes: absolute and quoted, or `~/...`
        /// under `--portable-hooks`), and
        /// `{{helper_ref_sh}}` (`<core_ref>bin/msd_run` quoted for POSIX sh by `msd_core::shell`,
        /// for permission rules that must match the command content runs), and `{{msd_run_exe}}`
        /// (the helper's absolute path as a plain string, for a field the runtime executes
        /// without a shell, such as Codex's `mcp_servers.<name>.command`; a string holding it is
        /// exactly it, and it stays absolute under `--portable-hooks`: no shell expands it).
        /// A `command` string may not hold a raw path.
        value: Value,
    },
    /// One key's value, set only when the user has not set it, in a JSON, TOML or YAML surface. The
    /// entry with id `statusline` replaces a user's value under `--force-statusline` (their
    /// value comes back on uninstall).
    Key {
        /// Owner id, unique within the file.
        id: String,
        /// Key path to the key; a key may hold the placeholders of `value` (OpenCode's
        /// `permission.external_directory."<core>/*"`).
        at: Vec<String>,
        /// The value, placeholders as for `array-item`.
        value: Value,
    },
    /// A block between `<!-- msd-install:begin ID -->` and `<!-- msd-install:end ID -->` lines
    /// of a Markdown surface.
    Block {
        /// Owner id, unique within the file.
        id: String,
        /// The block's text, placeholders as for `array-item`.
        text: String,
    },
}

impl EntrySpec {
    /// The owner id.
    pub fn id(&self) -> &str {
        match self {
            EntrySpec::ArrayItem { id, .. } | EntrySpec::Key { id, .. } | EntrySpec::Block { id, .. } => id,
        }
    }

    /// The kind.
    pub fn kind(&self) -> EntryKind {
        match self {
            EntrySpec::ArrayItem { .. } => EntryKind::ArrayItem,
            EntrySpec::Key { .. } => EntryKind::Key,
            EntrySpec::Block { .. } => EntryKind::Block,
        }
    }
}

/// Entry kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EntryKind {
    /// One item of an array (a hook group, a permission rule).
    ArrayItem,
    /// One key's value, set only when the user has not set it.
    Key,
    /// A block between `<!-- msd-install:begin ID -->` and `<!-- msd-install:end ID -->` lines.
    Block,
}

const PLACEHOLDERS: [&str; 8] = [
    "{{home}}",
    "{{core}}",
    "{{core_ref}}",
    "{{msd_run}}",
    "{{msd_run_powershell}}",
    "{{msd_run_argv}}",
    "{{helper_ref_sh}}",
    "{{msd_run_exe}}",
];

/// The helper's path for a field executed without a shell: a string holding it is exactly it.
const EXE: &str = "{{msd_run_exe}}";

/// The id of the status-line key, which `--force-statusline` lets replace a user's.
pub const STATUSLINE_ID: &str = "statusline";
/// Placeholders that expand to a raw (unquoted) path.
const RAW_PATHS: [&str; 3] = ["{{home}}", "{{core}}", "{{core_ref}}"];

/// The first `command` string of `v` that holds a raw path placeholder.
fn raw_command(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) => o.iter().find_map(|(k, x)| match x {
            Value::String(s) if k == "command" && RAW_PATHS.iter().any(|p| s.contains(p)) => Some(s.as_str()),
            _ => raw_command(x),
        }),
        Value::Array(a) => a.iter().find_map(raw_command),
        _ => None,
    }
}

/// Checks a surface list of a manifest; the message says what is wrong, the caller locates it.
pub fn validate(specs: &[SurfaceSpec]) -> Result<(), String> {
    let mut files = std::collections::BTreeSet::new();
    for s in specs {
        if s.scopes.is_empty() {
            return Err(format!("settings surface `{}` has no scopes", s.file));
        }
        for scope in &s.scopes {
            if !files.insert((s.file.clone(), *scope)) {
                return Err(format!("settings surface `{}` is listed twice for the {} scope", s.file, scope.as_str()));
            }
        }
        if s.entries.is_empty() {
            return Err(format!("settings surface `{}` has no entries", s.file));
        }
        let mut ids = std::collections::BTreeSet::new();
        for e in &s.entries {
            let id = e.id();
            if id.trim().is_empty() || !ids.insert(id) {
                return Err(format!("settings surface `{}`: entry id `{id}` is empty or repeated", s.file));
            }
            let ok = match (s.format, e) {
                (SurfaceFormat::Markdown, EntrySpec::Block { .. }) => true,
                (
                    SurfaceFormat::Json | SurfaceFormat::Toml | SurfaceFormat::Yaml,
                    EntrySpec::ArrayItem { at, .. } | EntrySpec::Key { at, .. },
                ) => !at.is_empty(),
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "settings surface `{}`: entry `{id}` does not fit its format (json, toml and yaml take `array-item` and `key` with a non-empty `at` and a `value`; markdown takes `block` with `text`)",
                    s.file
                ));
            }
            let mut strings = Vec::new();
            match e {
                EntrySpec::ArrayItem { value, .. } | EntrySpec::Key { value, .. } => {
                    if s.format == SurfaceFormat::Toml && has_null(value) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` holds null, which TOML cannot",
                            s.file
                        ));
                    }
                    if let Some(cmd) = raw_command(value) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` puts an unquoted path into the shell command `{cmd}`; use {{{{msd_run}}}} (the helper, quoted for sh)",
                            s.file
                        ));
                    }
                    collect_strings(value, &mut strings);
                }
                EntrySpec::Block { text, .. } => {
                    strings.push(text.as_str());
                    if text.contains("<!-- msd-install:") {
                        return Err(format!("settings surface `{}`: block `{id}` contains a block marker", s.file));
                    }
                }
            }
            for text in strings {
                if text.contains(EXE) && text != EXE {
                    return Err(format!(
                        "settings surface `{}`: entry `{id}` puts {EXE} into `{text}`; it is an executable's path for a field run without a shell and stands alone (a shell command takes {{{{msd_run}}}})",
                        s.file
                    ));
                }
                let mut rest = text;
                while let Some(i) = rest.find("{{") {
                    let tail = &rest[i..];
                    if !PLACEHOLDERS.iter().any(|p| tail.starts_with(p)) {
                        return Err(format!(
                            "settings surface `{}`: entry `{id}` has an unknown placeholder in `{text}` (known: {})",
                            s.file,
                            PLACEHOLDERS.join(", ")
                        ));
                    }
                    rest = &tail[2..];
                }
            }
        }
    }
    Ok(())
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// A hook file msd-install writes whole (an emitted file of the install manifest: install writes
/// it, uninstall removes it, `verify` checks it), in one of three formats:
/// - `script` (Cline: one executable per event in a hooks directory): `#!/bin/sh` + `exec <the
///   helper, found relative to the script> hook <args>`;
/// - `js-plugin` (OpenCode, Kilo: a JS module their plugin loader imports): a small shim that
///   spawns the helper (found relative to the module, no shell) with the event as JSON on stdin
///   for each hook point of `plugin`, and acts on its reply (`--protocol opencode`);
/// - `pi-extension` (Pi: a JS module its extension loader imports, whose default export
///   registers handlers on Pi's events): the same shim, for Pi's hook points.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookFile {
    /// The file, relative to the scope's home (`hooks/PreToolUse`, `plugin/msd.js`).
    pub path: RelPath,
    /// Scopes that get it (default both).
    #[serde(default = "both_scopes")]
    pub scopes: Vec<Scope>,
    /// What the file is.
    #[serde(default, skip_serializing_if = "is_default")]
    pub format: HookFileFormat,
    /// `script`: the arguments after `msd_run hook` (`guard --protocol cline`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub args: String,
    /// `js-plugin`, `pi-extension`: for each hook point the module serves, the arguments after
    /// `msd_run hook`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub plugin: BTreeMap<PluginHook, String>,
    /// Where the file name, its events and its protocol come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// The formats of a hook file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HookFileFormat {
    /// An executable POSIX shell script running the helper.
    #[default]
    Script,
    /// A JavaScript plugin module (OpenCode's plugin API) spawning the helper.
    JsPlugin,
    /// A JavaScript extension module (Pi's extension API) spawning the helper.
    PiExtension,
}

/// The hook points a JS shim serves: an OpenCode-style plugin's (`@opencode-ai/plugin`'s
/// `Hooks`; `opencode-linux-x64@1.18.33:bin/opencode@104030106`) and a Pi extension's events
/// (`@mariozechner/pi-coding-agent@0.73.1:dist/core/extensions/types.d.ts:796`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema)]
pub enum PluginHook {
    /// Each model request's system prompt: the helper's context is added to it, asked once per
    /// session.
    #[serde(rename = "experimental.chat.system.transform")]
    SystemTransform,
    /// Before a tool call: a block from the helper throws, which fails the call.
    #[serde(rename = "tool.execute.before")]
    ToolBefore,
    /// After a tool call: the helper's context is appended to the tool's output.
    #[serde(rename = "tool.execute.after")]
    ToolAfter,
    /// The `file.edited` bus event: the helper's context goes with the next tool output.
    #[serde(rename = "event.file.edited")]
    FileEdited,
    /// Pi, before a tool runs: a block from the helper is returned as `{block, reason}`
    /// (`@mariozechner/pi-coding-agent@0.73.1:dist/core/extensions/types.d.ts:714`).
    #[serde(rename = "tool_call")]
    PiToolCall,
    /// Pi, before the agent answers each prompt: the helper's context, asked once per session,
    /// is appended to that turn's system prompt (`types.d.ts:735`).
    #[serde(rename = "before_agent_start")]
    PiBeforeAgentStart,
}

impl PluginHook {
    /// The name in manifests and in the emitted plugin.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginHook::SystemTransform => "experimental.chat.system.transform",
            PluginHook::ToolBefore => "tool.execute.before",
            PluginHook::ToolAfter => "tool.execute.after",
            PluginHook::FileEdited => "event.file.edited",
            PluginHook::PiToolCall => "tool_call",
            PluginHook::PiBeforeAgentStart => "before_agent_start",
        }
    }

    /// The hook file format whose module serves this hook point.
    pub fn format(self) -> HookFileFormat {
        match self {
            PluginHook::PiToolCall | PluginHook::PiBeforeAgentStart => HookFileFormat::PiExtension,
            _ => HookFileFormat::JsPlugin,
        }
    }
}

impl HookFileFormat {
    /// The name in manifests.
    pub fn as_str(self) -> &'static str {
        match self {
            HookFileFormat::Script => "script",
            HookFileFormat::JsPlugin => "js-plugin",
            HookFileFormat::PiExtension => "pi-extension",
        }
    }
}

fn plain_args(path: &RelPath, args: &str) -> Result<(), String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || " -_.".contains(c);
    if args.trim().is_empty() || !args.chars().all(safe) {
        return Err(format!("hook file `{path}`: args `{args}` must be plain words (letters, digits, `-`, `_`, `.`)"));
    }
    Ok(())
}

/// Checks the hook files of a manifest.
pub fn validate_hook_files(files: &[HookFile]) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        if f.scopes.is_empty() {
            return Err(format!("hook file `{}` has no scopes", f.path));
        }
        for scope in &f.scopes {
            if !seen.insert((f.path.clone(), *scope)) {
                return Err(format!("hook file `{}` is listed twice for the {} scope", f.path, scope.as_str()));
            }
        }
        match f.format {
            HookFileFormat::Script => {
                if !f.plugin.is_empty() {
                    return Err(format!(
                        "hook file `{}`: `plugin` is for the js-plugin and pi-extension formats",
                        f.path
                    ));
                }
                plain_args(&f.path, &f.args)?;
            }
            HookFileFormat::JsPlugin | HookFileFormat::PiExtension => {
                let format = f.format.as_str();
                if !f.args.is_empty() || f.plugin.is_empty() {
                    return Err(format!(
                        "hook file `{}`: a {format} names its hook points in `plugin`, not `args`",
                        f.path
                    ));
                }
                for (hook, args) in &f.plugin {
                    if hook.format() != f.format {
                        return Err(format!(
                            "hook file `{}`: `{}` is a hook point of the {} format, not of {format}",
                            f.path,
                            hook.as_str(),
                            hook.format().as_str()
                        ));
                    }
                    plain_args(&f.path, args)?;
                }
            }
        }
    }
    Ok(())
}

/// The path from hook file `f` to `helper` (both relative to the same home), as a relative
/// reference (`../msd-core/bin/msd_run`).
pub fn helper_from(f: &HookFile, helper: &RelPath) -> String {
    let depth = f.path.as_str().matches('/').count();
    format!("{}{helper}", "../".repeat(depth))
}

/// The script of hook file `f` whose helper is `helper` (both relative to the same home): the
/// helper is found from the script's own directory, so the file works wherever the home is.
pub fn hook_script(f: &HookFile, helper: &RelPath) -> String {
    format!("#!/bin/sh\nexec \"$(dirname \"$0\")/{}\" hook {}\n", helper_from(f, helper), f.args)
}

/// The surfaces of `specs` that apply to `scope`.
pub fn for_scope(specs: &[SurfaceSpec], scope: Scope) -> impl Iterator<Item = &SurfaceSpec> {
    specs.iter().filter(move |s| s.scopes.contains(&scope))
}
