//! The one printer of every `check`: a report is a JSON document and a text for people; the
//! output mode picks one, and findings make it a failed check (exit 1). `check` (the project's
//! installs against msd.toml) and its maintainer subcommands print through it.

use crate::cli::error::Error;
use crate::cli::settings::Settings;

/// What a check found, ready to print: the one printer of every `check`.
pub(crate) struct Report {
    /// Nothing was found.
    pub ok: bool,
    /// The `--json` document (its `ok` included).
    pub doc: serde_json::Value,
    /// The report for people.
    pub text: String,
    /// What failed, counted (`3 broken reference(s)`), said on stderr under the report.
    pub failed: String,
}

impl Report {
    /// Prints the report as the output mode asks; a report with findings is a failed check
    /// (exit 1).
    pub(crate) fn finish(self, s: &Settings) -> Result<(), Error> {
        if s.output.json {
            s.output.document(&self.doc);
        } else {
            s.output.text(&self.text);
        }
        if self.ok { Ok(()) } else { Err(Error::CheckFailed(self.failed)) }
    }
}

/// The text of a list of findings: one per line, then `notes`, then `ok` when there is none.
pub(crate) fn listing(findings: &[impl std::fmt::Display], notes: &[String], ok: String) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!("{f}\n"));
    }
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if findings.is_empty() {
        out.push_str(&format!("ok: {ok}\n"));
    }
    out
}
