//! msd-install: the installer and emitter for the msd-core prompt framework.
//!
//! Layers depend one way only: [`cli`] -> [`dev`] -> [`apply`] -> [`pipeline`] -> `msd_core`.
//!
//! - [`pipeline`]: the pure stages of SPEC section 5, per runtime: load (content and manifests),
//!   validate, compose to fit (fit), convert (format, path and brand rewrites), guard (caps),
//!   synth (the helper and its data), target (where a runtime and scope install);
//! - [`apply`]: what touches a target: plan (add / change / remove / keep / back up), write
//!   (staged, journaled, atomic), record (the file manifest), state and migrations, settings
//!   surfaces, and the install / uninstall / verify / recover operations over them;
//! - [`dev`]: maintainers' tools: emitted attribution, the partition check, the token benchmark,
//!   the scaled content generator, git, the `--check` / `--write` idiom of generated files;
//! - [`cli`]: arguments, commands, the one error type with its exit codes, output.
//!
//! `msd_core` holds what msd_run shares (fs, markup, manifests, the installed-tree contract, the
//! composer); `msd_run` is the runtime helper, on `msd_core` only. docs/ARCHITECTURE.md is the map.

pub mod apply;
pub mod cli;
pub mod dev;
pub mod pipeline;
