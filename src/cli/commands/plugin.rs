//! `msd-install emit --plugin DIR`: a Claude Code plugin marketplace of one plugin, `msd-core`,
//! built from the same emission an install writes.
//!
//! Layout: `DIR/.claude-plugin/marketplace.json` names the plugin at `./plugins/msd-core`; there,
//! `.claude-plugin/plugin.json`, the runtime's global emission (commands, agents, skills, the
//! core with the helper of this platform) with paths rewritten for the plugin's directory, and
//! `hooks/hooks.json`: the `hooks` entries of the runtime's global settings surfaces (data from
//! its capability manifest), `{{msd_run}}` pointing at the helper under `${CLAUDE_PLUGIN_ROOT}`.
//! What a plugin cannot carry is left out and said: settings other than hooks (the status line,
//! permission rules), and everything an install does beyond writing files (backups of edited
//! files, other runtimes, uninstall).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::emit::ensure_empty_dir;
use super::{env, human_bytes, out, sources};
use crate::cli::args::EmitArgs;
use crate::cli::error::Error;
use crate::pipeline;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::manifest::capability::Scope;
use msd_core::manifest::surfaces::EntrySpec;

/// The plugin's (and its marketplace's) name.
const NAME: &str = "msd-core";
/// How a hook command of the plugin names its root (Claude Code expands it).
const ROOT: &str = "${CLAUDE_PLUGIN_ROOT}";

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::Io { context: format!("writing {}", path.display()), source: e }
}

fn write_json(path: &Path, doc: &Value) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(doc).expect("json");
    text.push('\n');
    fsx::write_atomic(path, text.as_bytes(), FileMode::Regular).map_err(io(path))
}

/// Runs `emit --plugin DIR`.
pub(crate) fn run(args: &EmitArgs) -> Result<(), Error> {
    let dir = args.plugin.as_deref().expect("dispatched for --plugin");
    let src = sources(&args.sources);
    let runtimes = pipeline::load_runtimes(&src)?;
    let id = args.runtime.clone().map_or_else(|| pipeline::primary(&runtimes), Ok)?;
    let rt = pipeline::select(&runtimes, &[id], false)?[0];
    let content = pipeline::load_content(&src)?;
    let env = env()?;
    let market = env.expand(&dir.to_string_lossy());
    let market = if market.is_absolute() { market } else { env.cwd.join(market) };
    ensure_empty_dir(&market)?;
    let root = market.join("plugins").join(NAME);
    let pipeline::Emitted { emission, .. } = pipeline::emit(&content, rt, Scope::Global, Some(&root), &env)?;
    let mut bytes = 0u64;
    for f in &emission.files {
        let dest = fsx::confined(&root, &f.path, false)
            .map_err(|e| Error::Io { context: "emit".into(), source: std::io::Error::other(e.to_string()) })?;
        fsx::write_atomic(&dest, &f.bytes, f.mode).map_err(io(&dest))?;
        bytes += f.bytes.len() as u64;
    }
    let cap = &rt.capability;
    let core = format!("{ROOT}/{}", cap.core_dir(Scope::Global));
    let helper = format!("\"{core}/bin/msd_run{}\"", std::env::consts::EXE_SUFFIX);
    let fill = |v: &Value| -> Value {
        let text = serde_json::to_string(v).expect("json");
        let text = text
            .replace("{{msd_run}}", &helper.replace('"', "\\\""))
            .replace("{{core}}", &core)
            .replace("{{home}}", ROOT);
        serde_json::from_str(&text).expect("still json")
    };
    let mut hooks = Map::new();
    let mut left_out = Vec::new();
    for surface in cap.settings.iter().filter(|s| s.scopes.contains(&Scope::Global)) {
        for entry in &surface.entries {
            match entry {
                EntrySpec::ArrayItem { at, value, .. } if at.len() == 2 && at[0] == "hooks" => {
                    let list = hooks.entry(at[1].clone()).or_insert_with(|| Value::Array(Vec::new()));
                    list.as_array_mut().expect("array").push(fill(value));
                }
                other => left_out.push(format!("{}: {}", surface.file, other.id())),
            }
        }
    }
    let hooks_json = root.join("hooks/hooks.json");
    write_json(&hooks_json, &json!({ "description": "msd-core's hooks (msd_run)", "hooks": hooks }))?;
    let version = crate::cli::version::VERSION;
    let description = format!("msd-core, the spec-driven development framework, as {} receives it", cap.title);
    write_json(
        &root.join(".claude-plugin/plugin.json"),
        &json!({
            "name": NAME,
            "version": version,
            "description": description,
            "homepage": env!("CARGO_PKG_HOMEPAGE"),
            "repository": env!("CARGO_PKG_REPOSITORY"),
            "license": env!("CARGO_PKG_LICENSE"),
        }),
    )?;
    write_json(
        &market.join(".claude-plugin/marketplace.json"),
        &json!({
            "name": NAME,
            "owner": { "name": NAME },
            "plugins": [{ "name": NAME, "source": format!("./plugins/{NAME}"), "description": description, "version": version }],
        }),
    )?;
    if args.output.json {
        let doc = json!({"ok": true, "runtime": cap.id, "marketplace": market, "plugin": root, "files": emission.files.len(), "hooks": hooks.keys().collect::<Vec<_>>(), "left_out": left_out});
        crate::cli::output::println(serde_json::to_string_pretty(&doc).expect("json"));
        return Ok(());
    }
    let mut text = format!(
        "{} plugin {NAME} {version}: {} files ({} bytes) and {} hook event(s) in {}\n",
        cap.title,
        emission.files.len(),
        human_bytes(bytes),
        hooks.len(),
        root.display()
    );
    if !left_out.is_empty() {
        text.push_str(&format!("  not in the plugin (settings a plugin cannot carry): {}\n", left_out.join(", ")));
    }
    text.push_str(&format!(
        "next: claude plugin marketplace add {} && claude plugin install {NAME}@{NAME}\n",
        market.display()
    ));
    out(&text, &args.output);
    Ok(())
}
