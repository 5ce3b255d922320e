//! Where every answer of msd_run goes: the one place that writes to stdout.
//!
//! Runtimes cut long tool output, so an answer over the spill threshold is not printed. It is
//! written to a private file and the helper prints exactly `@file:<absolute path>` and a newline
//! instead (the pointer-passing channel of ADR-1671; the content's
//! `references/agent-spawning.md` says how to read it). The rules:
//!
//! - The threshold is [`DEFAULT_SPILL_BYTES`] (50 KB, the reference's); [`SPILL_ENV`] changes
//!   it, and 0 spills every non-empty answer (for tests). An answer spills when it is longer.
//! - The file lives in `<temp dir>/msd_run-<uid>/` (`TMPDIR`, else `/tmp`), which msd_run creates
//!   with mode 0700 and refuses to use unless it is a directory of this user's that no one else
//!   may enter. Its name is the sha256 of the answer plus `.txt`: repeated answers reuse one file,
//!   and no user-controlled text is ever part of the path.
//! - The file is written atomically with mode 0600 (temp file in the same directory, fsync,
//!   rename): a concurrent call with the same answer renames the same bytes over the same name,
//!   and a reader sees the whole answer either way. A reused file gets a fresh mtime.
//! - The path needs no quoting in any shell a runtime uses (sh, bash, zsh, PowerShell, cmd): it
//!   is only letters, digits and `/ . _ -` (plus `\` and `:` on Windows). A temp dir with other
//!   characters is an error, never a path the model would have to quote.
//! - A spill that cannot be written is [`RunError::Spill`] (its own exit code), never a cut or
//!   partial answer on stdout.
//! - Each call removes this user's spill files older than [`SPILL_MAX_AGE`] (a day).
//! - A closed stdout (EPIPE) is not an error: the answer is dropped quietly, exit 0.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use msd_core::fs::fsx;

use crate::RunError;

/// The environment variable that sets the spill threshold, in bytes.
pub(crate) const SPILL_ENV: &str = "MSD_RUN_SPILL_BYTES";
/// Answers longer than this many bytes spill to a file by default (50 KB).
pub(crate) const DEFAULT_SPILL_BYTES: u64 = 50 * 1024;
/// Spill files older than this are removed by the next call.
pub(crate) const SPILL_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);
/// What the helper prints before the path of a spilled answer.
pub(crate) const SPILL_PREFIX: &str = "@file:";

/// The text a subcommand answers with, printed (or spilled) by [`deliver`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer(String);

impl Answer {
    /// Nothing on stdout (the subcommand wrote files).
    pub fn none() -> Answer {
        Answer(String::new())
    }

    /// `text` exactly as given.
    pub fn text(text: impl Into<String>) -> Answer {
        Answer(text.into())
    }

    /// `text` and a newline.
    pub fn line(text: impl std::fmt::Display) -> Answer {
        Answer(format!("{text}\n"))
    }

    /// JSON, pretty or on one line when `raw`, and a newline.
    pub fn json(v: &serde_json::Value, raw: bool) -> Answer {
        let s = if raw { serde_json::to_string(v) } else { serde_json::to_string_pretty(v) };
        Answer::line(s.expect("json serializes"))
    }

    /// The bytes the answer is.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Prints `answer`, or spills it and prints its `@file:` line. Sweeps old spill files first.
pub(crate) fn deliver(answer: &Answer) -> Result<(), RunError> {
    let threshold = threshold(std::env::var_os(SPILL_ENV))?;
    let dir = spill_dir();
    sweep(&dir, SystemTime::now());
    let bytes = answer.0.as_bytes();
    let out = if !bytes.is_empty() && bytes.len() as u64 > threshold {
        let path = spill(&dir, bytes)?;
        format!("{SPILL_PREFIX}{}\n", path.display())
    } else {
        answer.0.clone()
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()) {
        // The reader went away (`msd_run query ... | head -1`): it has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| RunError::Io { path: "stdout".into(), source: e }),
    }
}

/// The threshold from [`SPILL_ENV`]'s value.
fn threshold(value: Option<std::ffi::OsString>) -> Result<u64, RunError> {
    let Some(v) = value else { return Ok(DEFAULT_SPILL_BYTES) };
    v.to_str().and_then(|s| s.trim().parse::<u64>().ok()).ok_or_else(|| RunError::Usage {
        message: format!("{SPILL_ENV} must be a whole number of bytes, not `{}`", v.to_string_lossy()),
        hint: format!("unset it for the default ({DEFAULT_SPILL_BYTES}), or set 0 to spill every answer"),
    })
}

/// `<temp dir>/msd_run-<uid>`: per user, so no one else's answers or files are ever touched.
pub(crate) fn spill_dir() -> PathBuf {
    fsx::per_user_temp_dir("msd_run")
}

/// Whether `path` can be used bare, unquoted, in every shell a runtime runs.
fn shell_safe(path: &str) -> bool {
    let extra: &[char] = if cfg!(windows) { &['\\', ':'] } else { &[] };
    !path.is_empty() && path.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c) || extra.contains(&c))
}

/// Writes `bytes` to its content-named file in `dir` (or reuses it) and returns the path.
fn spill(dir: &Path, bytes: &[u8]) -> Result<PathBuf, RunError> {
    let path = dir.join(format!("{}.txt", fsx::sha256(bytes)));
    let shown = path.display().to_string();
    let fail = |reason: String| RunError::Spill { path: shown.clone(), reason };
    if !path.is_absolute() || !shell_safe(&shown) {
        return Err(fail(
            "the temporary directory's path is relative or has characters a shell would need quoted".into(),
        ));
    }
    fsx::ensure_private_dir(dir).map_err(|e| fail(e.to_string()))?;
    // The directory is this user's alone, so what is there was written by msd_run.
    let reusable = fsx::read_if_exists(&path).ok().flatten().as_deref() == Some(bytes);
    if reusable {
        fsx::touch(&path).map_err(|e| fail(e.to_string()))?;
    } else {
        fsx::write_atomic_private(&path, bytes).map_err(|e| fail(e.to_string()))?;
    }
    Ok(path)
}

/// Removes spill files (and temp files a killed call left) older than [`SPILL_MAX_AGE`] from
/// `dir`. Best effort: a file it cannot remove stays for the next call.
fn sweep(dir: &Path, now: SystemTime) {
    let Ok(entries) = fsx::list_dir(dir) else { return };
    for e in entries.iter().filter(|e| e.is_file && is_spill_name(&e.name)) {
        let path = dir.join(&e.name);
        let old =
            fsx::modified(&path).ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|age| age > SPILL_MAX_AGE);
        if old {
            let _ = fsx::remove_file_if_exists(&path);
        }
    }
}

/// A name [`spill`] or its atomic write makes: `<64 hex>.txt` or `.msd-tmp-*`.
fn is_spill_name(name: &str) -> bool {
    let hashed = name
        .strip_suffix(".txt")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    hashed || name.starts_with(".msd-tmp-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_default_zero_and_garbage() {
        assert_eq!(threshold(None).unwrap(), DEFAULT_SPILL_BYTES);
        assert_eq!(threshold(Some("0".into())).unwrap(), 0);
        assert_eq!(threshold(Some(" 123 ".into())).unwrap(), 123);
        for bad in ["", "-1", "1e3", "lots"] {
            let e = threshold(Some(bad.into())).unwrap_err();
            assert!(matches!(e, RunError::Usage { .. }), "{bad}");
        }
    }

    #[test]
    fn shell_safe_refuses_what_a_shell_would_split_or_expand() {
        assert!(shell_safe("/tmp/msd_run-1000/ab12.txt"));
        for bad in ["/tmp/a b/x", "/tmp/$HOME/x", "/tmp/a'b", "/tmp/a\"b", "/tmp/a;b", "/tmp/*", "/tmp/a`b", ""] {
            assert!(!shell_safe(bad), "{bad}");
        }
    }

    #[test]
    fn spill_names_are_only_ours() {
        assert!(is_spill_name(&format!("{}.txt", "a".repeat(64))));
        assert!(is_spill_name(".msd-tmp-x1y2"));
        assert!(!is_spill_name(&format!("{}.txt", "g".repeat(64))));
        assert!(!is_spill_name("notes.txt"));
    }
}
