//! `msd-install emit --plugin DIR`: a Claude Code plugin marketplace of one plugin, `msd-core`,
//! built from the same emission an install writes.
//!
//! Layout: `DIR/.claude-plugin/marketplace.json` names the plugin at `./plugins/msd-core`; there,
//! `.claude-plugin/plugin.json`, the runtime's global emission (commands, agents, skills, the
//! core with the helper of this platform) with paths rewritten for the plugin's directory, and
//! `hooks/hooks.json`: the `hooks` entries of the runtime's global settings surfaces (data from
//! its capability manifest), `{{msd_run}}` pointing at the helper under `${CLAUDE_PLUGIN_ROOT}`.
//!
//! Claude Code copies an installed plugin into its cache (`~/.claude/plugins/cache/...`), so no
//! file may name the directory `emit --plugin` wrote. The emission is rendered for a placeholder
//! root, which every text file then names as `${CLAUDE_PLUGIN_ROOT}`. What Claude Code 2.1.332
//! (`@anthropic-ai/claude-code`, the probe's pin; the JS is bundled in the native `claude`
//! binary, so places are byte offsets of `claude-code-linux-x64/claude`) fills in:
//! - skills and commands: the body, at prompt time (`NDn` -> `a$e`, offset 341549746, which
//!   replaces `/\$\{CLAUDE_PLUGIN_ROOT\}/g`, offset 335533918), and `allowed-tools` (`kZ`,
//!   offset 341534993), so `@${CLAUDE_PLUGIN_ROOT}/msd-core/workflows/x.md` includes resolve;
//! - agents: the body, when loaded (`cXn`, `sn=a$e(Se.trim(),...)`, offset 342434336);
//! - hooks: the command text and the hook's environment (`CLAUDE_PLUGIN_ROOT`, offset 345579062).
//!
//! Files Claude Code only reads (workflows, references, templates under `msd-core/`) are not
//! expanded: their shell lines name the helper as `${CLAUDE_PLUGIN_ROOT}/...`, which bash expands
//! because a SessionStart hook of the plugin appends `export CLAUDE_PLUGIN_ROOT=...` to
//! `$CLAUDE_ENV_FILE`, the script Claude Code sources before each Bash command (offset
//! 339357096); a path the model reads there (a nested `@` include, a reference) stays the
//! literal `${CLAUDE_PLUGIN_ROOT}/...`, the same root the expanded skill text shows it.
//! What a plugin cannot carry is left out and said: settings other than hooks (the status line,
//! permission rules), and everything an install does beyond writing files (backups of edited
//! files, other runtimes, uninstall).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{ensure_empty_dir, env, human_bytes};
use crate::cli::args::EmitArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Runtimes, Settings};
use crate::pipeline;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::manifest::capability::Scope;
use msd_core::manifest::surfaces::EntrySpec;

/// The plugin's (and its marketplace's) name.
const NAME: &str = "msd-core";
/// How a hook command of the plugin names its root (Claude Code expands it).
const ROOT: &str = "${CLAUDE_PLUGIN_ROOT}";
/// The root the emission is rendered for, then replaced by [`ROOT`] in every text file: a path
/// no shell or JSON quoting changes, which no content names by itself.
const PLACEHOLDER: &str = "/msd-plugin-root.9b1c7e";
/// The SessionStart hook that gives the model's Bash commands `$CLAUDE_PLUGIN_ROOT`: Claude Code
/// sources `$CLAUDE_ENV_FILE` before each one (see the module header).
/// Claude Code runs it with `/bin/sh` (so no `printf %q`); a root holding `'` is not supported.
const ENV_HOOK: &str = r#"[ -z "$CLAUDE_ENV_FILE" ] || printf "export CLAUDE_PLUGIN_ROOT='%s'\n" "$CLAUDE_PLUGIN_ROOT" >> "$CLAUDE_ENV_FILE""#;

/// `bytes` with every [`PLACEHOLDER`] named as [`ROOT`]; bytes that are not text (the helper)
/// are kept as they are.
fn relocate(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match std::str::from_utf8(bytes) {
        Ok(text) if text.contains(PLACEHOLDER) => text.replace(PLACEHOLDER, ROOT).into_bytes().into(),
        _ => bytes.into(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::Io { context: format!("writing {}", path.display()), source: e }
}

fn write_json(path: &Path, doc: &Value) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(doc).expect("json");
    text.push('\n');
    fsx::write_atomic(path, text.as_bytes(), FileMode::Regular).map_err(io(path))
}

/// Runs `emit --plugin DIR`.
pub(crate) fn run(s: &Settings, args: &EmitArgs) -> Result<(), Error> {
    let dir = args.plugin.as_deref().expect("dispatched for --plugin");
    let src = &s.sources;
    let runtimes = pipeline::load_runtimes(src)?;
    let id = match &s.runtimes {
        Runtimes::Named(ids) => ids[0].clone(),
        Runtimes::Default | Runtimes::All => pipeline::primary(&runtimes)?,
    };
    let rt = pipeline::select(&runtimes, &[id], false)?[0];
    let content = pipeline::load_content(src)?;
    let env = env()?;
    let market = env.expand(&dir.to_string_lossy());
    let market = if market.is_absolute() { market } else { env.cwd.join(market) };
    ensure_empty_dir(&market)?;
    let root = market.join("plugins").join(NAME);
    let placeholder = Path::new(PLACEHOLDER);
    let pipeline::Emitted { emission, .. } = pipeline::emit(&content, rt, Scope::Global, Some(placeholder), &env)?;
    let mut bytes = 0u64;
    for f in &emission.files {
        let dest = fsx::confined(&root, &f.path, false)
            .map_err(|e| Error::Io { context: "emit".into(), source: std::io::Error::other(e.to_string()) })?;
        let body = relocate(&f.bytes);
        fsx::write_atomic(&dest, &body, f.mode).map_err(io(&dest))?;
        bytes += body.len() as u64;
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
    hooks
        .entry("SessionStart")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .expect("array")
        .push(json!({ "hooks": [{ "type": "command", "command": ENV_HOOK }] }));
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
            "author": { "name": NAME },
        }),
    )?;
    let readme = root.join("README.md");
    let text = format!(
        "# {NAME}\n\n{description}: its commands as skills (`/{NAME}:msd-new-project` to begin), its \
         agents, its hooks and the `msd_run` helper they call, built by `msd-install emit --plugin` \
         {version}. The plugin carries Claude Code alone; `msd-install` installs the same framework \
         into other runtimes, keeps backups of files you edited and uninstalls per project.\n"
    );
    fsx::write_atomic(&readme, text.as_bytes(), FileMode::Regular).map_err(io(&readme))?;
    write_json(
        &market.join(".claude-plugin/marketplace.json"),
        &json!({
            "name": NAME,
            "owner": { "name": NAME },
            "description": description,
            "plugins": [{ "name": NAME, "source": format!("./plugins/{NAME}"), "description": description, "version": version }],
        }),
    )?;
    if s.output.json {
        let doc = json!({"ok": true, "runtime": cap.id, "marketplace": market, "plugin": root, "files": emission.files.len(), "hooks": hooks.keys().collect::<Vec<_>>(), "left_out": left_out});
        s.output.document(&doc);
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
    s.output.text(&text);
    Ok(())
}
