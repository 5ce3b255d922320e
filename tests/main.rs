//! The one integration-test binary: spawns the real `msd-install` and `msd_run` into temporary
//! homes and projects and inspects what lands on disk. One module per feature.

#![allow(clippy::disallowed_methods, reason = "tests build fixtures and inspect trees with std::fs")]
#![allow(
    unreachable_pub,
    reason = "a test binary exports nothing: `pub` shares helpers between its modules (the workspace lint is for the libraries)"
)]

mod support;

mod architecture;
mod attribution;
mod caps;
mod cli;
mod compact;
mod compose;
mod content;
mod crash;
mod delivery;
mod doctor;
mod errors;
mod flags;
mod r#gen;
mod helper;
mod hooks;
mod init;
mod install;
mod install_sh;
mod lifecycle;
mod lints;
mod manifests;
mod migrate_cmd;
mod migrations;
mod plugin;
mod predicates;
mod project;
mod prompt_budget;
mod refport;
mod release_build;
mod resolve;
mod roster;
mod runtimes;
mod safety;
mod self_update;
mod sessions;
mod settings;
mod settings_user;
mod ship;
mod smoke;
mod snapshots;
mod versions;
