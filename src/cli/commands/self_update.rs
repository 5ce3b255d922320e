//! `msd-install self-update`: moves this binary and its `msd_run` to the newest release, then
//! installs again every target `status` lists, so the content follows the binary.
//!
//! Order of work ([`crate::cli::release`] does each step): read the channel's manifest, compare
//! versions, pick this platform's archive, verify its sha256, take both binaries out of it in
//! memory, and only then replace them on disk, each by an atomic rename, the first put back if
//! the second fails: a failed update leaves the old pair working. A binary that a package
//! manager installed (npm, PyPI, Homebrew, cargo, the Claude Code plugin) is that manager's to
//! update: its own command is printed instead, and nothing is touched.

use std::path::Path;

use super::status;
use crate::cli::args::{SelfUpdateArgs, StatusArgs};
use crate::cli::error::Error;
use crate::cli::release::{self, SelfUpdateError};
use crate::cli::settings::{Output, Settings, Subcommand, Takes};
use crate::cli::version;
use msd_core::fs::fsx;

impl Subcommand for SelfUpdateArgs {
    const NAME: &'static str = "self-update";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s.output, self)
    }
}

/// Runs `self-update`.
pub(crate) fn run(output: Output, args: &SelfUpdateArgs) -> Result<(), Error> {
    let exe = std::env::current_exe()
        .and_then(|e| fsx::canonicalize(&e))
        .map_err(|e| Error::Io { context: "finding the running msd-install".into(), source: e })?;
    if let Some((_, channel, command, _)) = release::managed_by(&exe) {
        return Err(SelfUpdateError::OtherChannel { exe, channel, command }.into());
    }
    let say = |line: String| {
        output.text(&format!("{line}\n"));
    };
    let base = release::channel_base();
    let manifest_url = format!("{base}/dist-manifest.json");
    let latest = release::read_release(&base, &manifest_url)?;
    let order = version::compare(&latest.version, version::VERSION);
    if order != Some(std::cmp::Ordering::Greater) {
        let why = match order {
            Some(std::cmp::Ordering::Less) => format!("the release channel has {}, older", latest.version),
            _ => format!("{} is the newest release", latest.version),
        };
        say(format!("msd-install {}: up to date ({why}; {manifest_url})", version::VERSION));
        return report(output, &latest.version, false, &[]);
    }
    let Some(archive) = latest.archive else {
        return Err(SelfUpdateError::NoArchive {
            url: manifest_url,
            version: latest.version,
            target: version::TARGET.into(),
            available: if latest.targets.is_empty() { "none".into() } else { latest.targets.join(", ") },
        }
        .into());
    };
    let archive_url = format!("{base}/{}", archive.name);
    let bytes = release::fetch(&archive_url)?;
    let expected = match archive.sha256 {
        Some(s) => s,
        None => {
            let url = format!("{base}/{}", archive.checksum_file);
            let text = String::from_utf8_lossy(&release::fetch(&url)?).into_owned();
            text.split_whitespace()
                .next()
                .map(str::to_ascii_lowercase)
                .ok_or(SelfUpdateError::BadRelease { url, reason: "the checksum file is empty".into() })?
        }
    };
    let actual = fsx::sha256(&bytes).to_string();
    if actual != expected {
        return Err(SelfUpdateError::Checksum { url: archive_url, expected, actual }.into());
    }
    let binaries = release::unpack(&archive_url, &bytes)?;
    let dir = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    release::replace(&dir, &binaries)?;
    say(format!("msd-install: {} -> {} ({archive_url}, sha256 verified)", version::VERSION, latest.version));
    say(format!("  replaced {} and {}", dir.join(binaries[0].0).display(), dir.join(binaries[1].0).display()));
    say(format!("  what changed: {}", version::changelog_url()));
    let reinstalled = if args.no_reinstall { Vec::new() } else { reinstall(output, &exe, &latest.version, &say)? };
    report(output, &latest.version, true, &reinstalled)
}

/// The `--json` document.
fn report(output: Output, latest: &str, updated: bool, reinstalled: &[String]) -> Result<(), Error> {
    if output.json {
        let doc = crate::cli::versioned::versioned(serde_json::json!({
            "ok": true,
            "version": version::VERSION,
            "latest": latest,
            "updated": updated,
            "channel": release::channel_base(),
            "reinstalled": reinstalled,
        }));
        output.document(&doc);
    }
    Ok(())
}

/// Installs again, with the new binary, every target `status` lists; returns them.
fn reinstall(output: Output, exe: &Path, new_version: &str, say: &dyn Fn(String)) -> Result<Vec<String>, Error> {
    let doc = status::collect(&StatusArgs { project: None, runtimes_dir: None })?;
    if doc.installs.is_empty() {
        say("  no install to update (`msd-install status` lists none)".into());
        return Ok(Vec::new());
    }
    say(format!("installing again the {} install(s) `msd-install status` lists:", doc.installs.len()));
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for row in &doc.installs {
        let label = format!("{} ({})", row.runtime, row.scope);
        let mut cmd = std::process::Command::new(exe);
        cmd.args(["install", "--yes", "-r", &row.runtime]);
        if row.scope == "local" {
            cmd.arg("--project").arg(&doc.project);
        }
        if !output.is_text() {
            cmd.arg("--quiet");
        }
        if output.json {
            cmd.stdout(std::process::Stdio::null());
        }
        match cmd.status() {
            Ok(s) if s.success() => done.push(label),
            _ => failed.push(label),
        }
    }
    if !failed.is_empty() {
        return Err(SelfUpdateError::Reinstall { version: new_version.to_string(), failed: failed.join(", ") }.into());
    }
    Ok(done)
}
