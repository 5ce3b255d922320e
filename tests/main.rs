//! The one integration-test binary: spawns the real `msd-install` and `msd_run` into temporary
//! homes and projects and inspects what lands on disk. One module per feature.

mod support;

mod attribution;
mod cli;
mod compact;
mod content;
mod r#gen;
mod helper;
mod init;
mod install;
mod manifests;
mod predicates;
mod resolve;
mod runtimes;
