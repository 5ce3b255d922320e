//! The installed core's contract with msd_run: what the installer writes under `<core>/` and the
//! helper reads back. [`section_manifest`] (sections and argument grammars per workflow),
//! [`invocation`] (the argument grammar itself), [`compact`] (agent payloads),
//! [`config_keys`] (the keys of `.planning/config.json`), [`predicates`] (the `CONTEXT.md` fact
//! store), [`update_cache`] (the installer's version note the session-start hook reads),
//! [`runtime_info`] (the installed runtime's command syntax and agent loading).

pub mod compact;
pub mod config_keys;
pub mod invocation;
pub mod predicates;
pub mod runtime_info;
pub mod section_manifest;
pub mod update_cache;
