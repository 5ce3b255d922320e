//! `msd_run config-get <key> [--default V]` and `msd_run config-set <key> <value>` on the current
//! project's `.planning/config.json`.
//!
//! The known keys, their types and defaults are the installed schema
//! (`<core>/templates/config-keys.json`, see [`msd_core::installed::config_keys`]). Rules:
//! - an unknown key, or a value the key does not allow, is a usage error (exit 2) and the file is
//!   not touched; so is an `agent_skills.<agent>` naming an agent that is not installed;
//! - `config-set` reads, edits and writes the file under a lock of `.planning/` (parallel calls
//!   lose nothing), atomically and in place, as install writes a user's file (its mode and owner
//!   kept; a new one `0644`), through a symlinked `config.json` (the link stays) when the link
//!   stays inside the project (one that leads out is refused, exit 4: nothing is read or
//!   written there), creating the nested objects a dotted key needs; a file that
//!   is not a JSON object, or a segment on the way that is not an object, is a project error
//!   (exit 4) and the file is not touched;
//! - a key that occurs twice in one object of the file is a project error (exit 4), never
//!   silently dropped;
//! - `config-get` prints strings bare and anything else as JSON; a present but invalid value is
//!   a project error (exit 4) even with `--default` (a workflow then continues with its default
//!   and mentions it); an absent key prints `--default` when given, else fails with exit 1, or
//!   with exit 4 outside a project;
//! - the project is the nearest directory upwards holding `.planning/`, as the CLI finds it.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Answer, RunError, core_dir, read_core};
use crate::project::Project;
use msd_core::fs::fsx;
use msd_core::installed::config_keys::{self, KeySpec, SCHEMA_PATH, Schema};

/// The project's config file, relative to the project root.
pub(crate) const CONFIG: &str = ".planning/config.json";

/// `config-get` arguments.
#[derive(Debug, clap::Args)]
pub struct GetArgs {
    /// A dotted key, e.g. workflow.compact_content.
    pub key: String,
    /// Print this when the key is not set (instead of failing with exit 1).
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub default: Option<String>,
}

/// `config-set` arguments.
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// A dotted key, e.g. workflow.compact_content.
    pub key: String,
    /// The value: true/false, one of an enum's values, or a JSON array of paths.
    #[arg(allow_hyphen_values = true)]
    pub value: String,
}

/// The installed schema.
pub(crate) fn schema(core: &Path) -> Result<Schema, RunError> {
    let path = core.join(SCHEMA_PATH).display().to_string();
    let text = read_core(core, SCHEMA_PATH)?.ok_or_else(|| RunError::Core {
        path: path.clone(),
        message: "the config schema is missing".into(),
        hint: "reinstall msd-core with msd-install".into(),
    })?;
    Schema::parse(&path, &text).map_err(|e| RunError::Core {
        path: e.path,
        message: format!("the installed config schema is damaged: {}", e.message),
        hint: "reinstall msd-core with msd-install".into(),
    })
}

/// Resolves `key` to its spec; unknown keys and unknown agents are usage errors.
pub(crate) fn lookup<'s>(core: &Path, schema: &'s Schema, key: &str) -> Result<&'s KeySpec, RunError> {
    let (spec, agent) = schema.lookup(key).ok_or_else(|| RunError::Usage {
        message: format!("unknown config key `{key}`"),
        hint: format!("known keys: {}", schema.key_list()),
    })?;
    if let Some(agent) = agent
        && !fsx::exists(&core.join(format!("{}/{agent}.md", msd_core::installed::compact::AGENTS_DIR)))
    {
        return Err(RunError::Usage {
            message: format!("`{key}`: no agent `{agent}` is installed"),
            hint: format!(
                "installed agents are the files of {}",
                core.join(msd_core::installed::compact::AGENTS_DIR).display()
            ),
        });
    }
    Ok(spec)
}

fn cwd_error(e: std::io::Error) -> RunError {
    RunError::Io { path: "the current directory".into(), source: e }
}

/// The project the current directory belongs to (found upwards, as the CLI does).
pub(crate) fn find_project() -> Result<Option<Project>, RunError> {
    Project::find().map_err(cwd_error)
}

/// The error of a command that needs a project, run outside one (exit 4).
pub(crate) fn no_project(hint: String) -> RunError {
    RunError::Project(crate::project::ProjectError {
        path: ".planning".into(),
        line: None,
        message: "no .planning/ directory here or in any parent directory".into(),
        hint,
    })
}

/// Reads the project's config (`.planning/config.json` of the project the current directory
/// belongs to): `None` outside a project or when the file does not exist. The one parse of that
/// file is `Project::config`.
pub(crate) fn read_config() -> Result<Option<Map<String, Value>>, RunError> {
    match find_project()? {
        Some(p) => Ok(p.config()?),
        None => Ok(None),
    }
}

/// Runs `config-get`.
pub(crate) fn get(core: Option<&Path>, a: &GetArgs) -> Result<Answer, RunError> {
    let core = core_dir(core)?;
    let schema = schema(&core)?;
    let spec = lookup(&core, &schema, &a.key)?;
    let project = find_project()?;
    let doc = Value::Object(match &project {
        Some(p) => p.config()?.unwrap_or_default(),
        None => Map::new(),
    });
    match config_keys::get(&doc, &a.key) {
        Some(v) => {
            spec.check(v).map_err(|e| {
                RunError::Project(crate::project::ProjectError {
                    path: CONFIG.into(),
                    line: None,
                    message: format!("`{}`: {e}", a.key),
                    hint: format!("allowed: {}; fix it with `msd_run config-set {} <value>`", spec.allowed(), a.key),
                })
            })?;
            Ok(Answer::line(config_keys::render(v)))
        }
        None => match &a.default {
            Some(d) => Ok(Answer::line(d)),
            // Outside a project nothing is "unset": there is no project to ask (exit 4, not 1).
            None if project.is_none() => {
                Err(no_project("run this in an msd project ({cmd:new-project} creates one), or pass --default".into()))
            }
            None => Err(RunError::Unset {
                message: format!("`{}` is not set in {CONFIG}", a.key),
                hint: match spec.default() {
                    Some(d) => {
                        format!("its default is {}; pass --default to print a fallback", config_keys::render(&d))
                    }
                    None => "it has no default; pass --default to print a fallback".into(),
                },
            }),
        },
    }
}

/// Runs `config-set`.
pub(crate) fn set(core: Option<&Path>, a: &SetArgs) -> Result<Answer, RunError> {
    let core = core_dir(core)?;
    let schema = schema(&core)?;
    let spec = lookup(&core, &schema, &a.key)?;
    let value = spec.parse(&a.value).map_err(|e| RunError::Usage {
        message: format!("invalid value for `{}`: {e}", a.key),
        hint: format!("allowed: {}", spec.allowed()),
    })?;
    let project = find_project()?
        .ok_or_else(|| no_project("run this in an msd project ({cmd:new-project} creates one)".into()))?;
    // Neither the lock nor the write goes out of the project through a symlink (`.planning` or
    // `config.json` linked to `~/.docker/config.json`): refused before anything is opened.
    let path = project.confine(CONFIG)?;
    // Read-modify-write under the lock of .planning/: parallel config-set calls on distinct keys
    // each see the previous one's write.
    let _lock =
        fsx::lock_dir(&project.abs(".planning")).map_err(|e| RunError::Io { path: ".planning".into(), source: e })?;
    let mut doc = project.config()?.unwrap_or_default();
    config_keys::set(&mut doc, &a.key, value.clone()).map_err(|e| {
        RunError::Project(crate::project::ProjectError {
            path: CONFIG.into(),
            line: None,
            message: format!("cannot set `{}`: {e}", a.key),
            hint: "repair the file by hand; nothing was written".into(),
        })
    })?;
    let text = serde_json::to_string_pretty(&Value::Object(doc)).expect("json") + "\n";
    // The user's file: its mode and owner are kept, a link inside the project stays a link.
    fsx::write_in_place(&path, text.as_bytes()).map_err(|e| RunError::Io { path: CONFIG.into(), source: e })?;
    Ok(Answer::line(config_keys::render(&value)))
}
