//! The published JSON Schemas of every `--json` document (`msd-install schema --kind ...`).
//!
//! Documents built from typed structs (version, status, runtimes) derive theirs with schemars;
//! the documents of install, verify, uninstall and recover are assembled from the apply layer's
//! reports, so their schemas are written by hand in `schemas/*.json` and cover the top-level keys
//! (a test checks that each real document has every required key and no unlisted one).
//! `--kind project` is the schema of a project's `msd.toml` (derived from
//! [`crate::cli::project::SchemaDoc`], with the runtime ids filled in), not of a `--json` document.
//! Every document carries `"schema_version"`: [`SCHEMA_VERSION`], raised on a breaking change.

use crate::cli::args::{SchemaArgs, SchemaKind};
use crate::cli::error::Error;
use crate::cli::settings::{NO_QUIET, Settings, Subcommand, Takes};

impl Subcommand for SchemaArgs {
    const NAME: &'static str = "schema";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn quiet(&self) -> Takes {
        Takes::No(NO_QUIET)
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        let text = render(self.kind)?;
        if s.output.json || !s.output.quiet {
            crate::cli::output::print(text);
        }
        Ok(())
    }
}

/// The schema of `kind`, pretty-printed with a final newline.
pub(crate) fn render(kind: SchemaKind) -> Result<String, Error> {
    let mut s = match kind {
        SchemaKind::Project => {
            let runtimes = crate::pipeline::load_runtimes(&crate::pipeline::Sources::default())?;
            crate::cli::project::schema(&runtimes)
        }
        SchemaKind::Capability => return Ok(msd_core::manifest::capability::json_schema()),
        SchemaKind::Check => pretty(schemars::schema_for!(crate::cli::commands::project_check::CheckDoc)),
        SchemaKind::Version => pretty(schemars::schema_for!(crate::cli::version::VersionDoc)),
        SchemaKind::Status => pretty(schemars::schema_for!(crate::cli::commands::status::StatusDoc)),
        SchemaKind::Doctor => pretty(schemars::schema_for!(crate::cli::commands::doctor::DoctorDoc)),
        SchemaKind::Runtimes => pretty(schemars::schema_for!(crate::cli::commands::runtimes::RuntimesDoc)),
        SchemaKind::InstallResult => include_str!("schemas/install-result.json").trim_end().to_string(),
        SchemaKind::Verify => include_str!("schemas/verify.json").trim_end().to_string(),
        SchemaKind::Uninstall => include_str!("schemas/uninstall.json").trim_end().to_string(),
        SchemaKind::Recover => include_str!("schemas/recover.json").trim_end().to_string(),
    };
    s.push('\n');
    Ok(s)
}

fn pretty(schema: schemars::Schema) -> String {
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}
