//! msd-install: the installer and emitter for the msd-core prompt framework.
//!
//! The library is the pipeline of SPEC section 5, one module per stage:
//! [`load`] (content and manifests) -> validate ([`capability`], [`markers`], [`frontmatter`]) ->
//! [`compose`] ([`markers`], [`when`]; [`budget`] is the review-prompt ladder on the same
//! composer) -> [`convert`] -> [`guard`] -> [`plan`] -> [`write`] -> [`record`]. [`pipeline`]
//! runs them in order; [`attribution`] traces emitted drift to its sources; [`app`] and [`run`]
//! are the two binaries' entries, kept thin.
//!
//! The seams msd_run serves: [`section_manifest`] and [`invocation`] (which sections an
//! invocation needs), [`project`] (the user's `.planning/` state), [`predicates`] (the context
//! fact store), [`resolver`] (task content from external trackers); [`synth`] installs the
//! helper and its data; [`generated`] is the one `--check` / `--write` idiom.

#![deny(missing_docs)]

pub mod app;
pub mod attribution;
pub mod bench;
pub mod budget;
pub mod capability;
pub mod cli;
pub mod cmd;
pub mod compact;
pub mod compose;
pub mod config_keys;
pub mod convert;
pub mod error;
pub mod frontmatter;
pub mod fsx;
pub mod generated;
pub mod gitx;
pub mod guard;
pub mod invocation;
pub mod lifecycle;
pub mod load;
pub mod markers;
pub mod migrate;
pub mod partition;
pub mod pipeline;
pub mod plan;
pub mod predicates;
pub mod progress;
pub mod project;
pub mod record;
pub mod relpath;
pub mod resolver;
pub mod run;
pub mod scale;
pub mod section_manifest;
pub mod settings;
pub mod state;
pub mod synth;
pub mod target;
pub mod txn;
pub mod when;
pub mod write;
