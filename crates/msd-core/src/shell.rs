//! Quoting for the shells that run what msd writes: a path we put into content (a workflow's
//! `<core>/bin/msd_run query ...`) or into a command string (a settings hook run through
//! `sh -c`) must reach the program as one word, whatever the home holds (a space, a quote,
//! `$(...)`, a backtick).
//!
//! The API is two functions over a closed set of shells:
//! - [`quote`] one word for a shell, unchanged when it needs no quoting (so an ordinary path reads
//!   as it always did);
//! - [`quote_path`] the same for a path that may start with `~/` (the tilde stays outside the
//!   quotes, where the shell expands it).
//!
//! - [`invocation`] a program path as the first word of a command string: the shell's call
//!   syntax around the quoted path (PowerShell needs `& '...'`, a quoted string alone is an
//!   expression there).
//!
//! Which shell runs a runtime's command strings on which platform is data: the manifest's
//! `windows_shell` ([`Os`] picks it), and the helper's file name follows the platform too
//! ([`helper_file`]: `msd_run.exe` on Windows).
//!
//! A word with a NUL cannot be passed to any shell: [`quote`] refuses it; `cmd.exe` cannot take
//! a `"` or a `%` inside a quoted word at all, so those are refused for it too.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A shell that runs a command string msd writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    /// POSIX `sh` (and bash, zsh, dash, Git Bash on Windows): what `sh -c` and a Markdown
    /// ```bash block run.
    #[default]
    Posix,
    /// PowerShell (`powershell.exe`, `pwsh`): single quotes, a `'` doubled, `&` to call.
    PowerShell,
    /// `cmd.exe /d /s /c`: double quotes; a word with `"` or `%` cannot be quoted.
    Cmd,
}

/// The platform an install is for: it decides the helper's file name and which of a runtime's
/// shells runs its command strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux, macOS and the other Unixes.
    Unix,
    /// Windows.
    Windows,
}

impl Os {
    /// The platform this binary was built for (an install is for the machine it runs on).
    pub const HOST: Os = if cfg!(windows) { Os::Windows } else { Os::Unix };
}

/// The helper's file name on `os`: `msd_run`, or `msd_run.exe` on Windows.
pub fn helper_file(os: Os) -> &'static str {
    match os {
        Os::Unix => "msd_run",
        Os::Windows => "msd_run.exe",
    }
}

/// `program` (already a word of `shell`, from [`quote`] or a `$HOME`-relative form) as the
/// start of a command: PowerShell calls it with `&` (a quoted path alone would be a string
/// expression there; a bare one works either way); the others run it as is.
pub fn invocation(program: &str, shell: Shell) -> String {
    match shell {
        Shell::PowerShell => format!("& {program}"),
        _ => program.to_string(),
    }
}

/// A word that cannot be quoted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{word:?} cannot be passed to the shell that runs it: it contains a NUL byte (or, for cmd.exe, a `\"` or a `%`)"
)]
pub struct QuoteError {
    /// The word.
    pub word: String,
}

/// Characters that mean nothing to any supported shell anywhere in a word.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ',' | ':' | '@' | '%' | '=')
}

/// `word` as one word for `shell`: itself when every character is plain (letters, digits and
/// `/._-+,:@%=`), else single-quoted (POSIX: a `'` becomes `'\''`; PowerShell: `''`).
pub fn quote(word: &str, shell: Shell) -> Result<Cow<'_, str>, QuoteError> {
    let cmd_unquotable = shell == Shell::Cmd && word.contains(['"', '%']);
    if word.contains('\0') || cmd_unquotable {
        return Err(QuoteError { word: word.to_string() });
    }
    // `%` expands in cmd.exe even outside quotes; `=` and `,` separate arguments there.
    let plain = |c: char| is_plain(c) && !(shell == Shell::Cmd && matches!(c, '%' | '=' | ','));
    if !word.is_empty() && word.chars().all(plain) {
        return Ok(Cow::Borrowed(word));
    }
    Ok(Cow::Owned(match shell {
        Shell::Posix => format!("'{}'", word.replace('\'', r"'\''")),
        Shell::PowerShell => format!("'{}'", word.replace('\'', "''")),
        Shell::Cmd => format!("\"{word}\""),
    }))
}

/// Like [`quote`], but a leading `~/` stays unquoted so that the shell still expands it.
pub fn quote_path(path: &str, shell: Shell) -> Result<Cow<'_, str>, QuoteError> {
    match path.strip_prefix("~/") {
        Some(rest) if !rest.is_empty() => Ok(match quote(rest, shell)? {
            Cow::Borrowed(_) => Cow::Borrowed(path),
            Cow::Owned(q) => Cow::Owned(format!("~/{q}")),
        }),
        _ => quote(path, shell),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh -c 'printf %s <quoted>'` prints is the word itself, for hostile words.
    #[test]
    fn shell_posix_quote_round_trips_through_sh() {
        for w in
            ["/home/u/.claude/msd-core/bin/msd_run", "/h/a b/x", "/h/it's", "/h/$(touch pwned)", "/h/`id`", "", "-x"]
        {
            let q = quote(w, Shell::Posix).unwrap();
            let out = std::process::Command::new("sh").arg("-c").arg(format!("printf %s {q}")).output().unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), w, "{q}");
        }
        assert_eq!(quote("/plain/path", Shell::Posix).unwrap(), "/plain/path");
        assert_eq!(quote("a'b", Shell::PowerShell).unwrap(), "'a''b'");
        assert_eq!(quote_path("~/a b/c", Shell::Posix).unwrap(), "~/'a b/c'");
        assert_eq!(quote_path("~/ab/c", Shell::Posix).unwrap(), "~/ab/c");
        assert!(quote("a\0b", Shell::Posix).is_err());
    }

    /// Windows command strings: the helper is `msd_run.exe`, PowerShell calls a quoted path
    /// with `&`, cmd.exe double-quotes and refuses what it cannot quote. (Not run through a real
    /// PowerShell or cmd.exe here: none exists on this machine; CI builds on Windows.)
    #[test]
    fn shell_windows_words_and_invocations() {
        assert_eq!(helper_file(Os::Windows), "msd_run.exe");
        assert_eq!(helper_file(Os::Unix), "msd_run");
        let exe = r"C:\Users\A B\.gemini\msd-core\bin\msd_run.exe";
        let ps = quote(exe, Shell::PowerShell).unwrap();
        assert_eq!(ps, r"'C:\Users\A B\.gemini\msd-core\bin\msd_run.exe'");
        assert_eq!(invocation(&ps, Shell::PowerShell), format!("& {ps}"));
        assert_eq!(invocation("C:/plain/msd_run.exe", Shell::PowerShell), "& C:/plain/msd_run.exe");
        assert_eq!(quote(r"C:\it's\$(x)", Shell::PowerShell).unwrap(), r"'C:\it''s\$(x)'");
        let cmd = quote(exe, Shell::Cmd).unwrap();
        assert_eq!(cmd, format!("\"{exe}\""));
        assert_eq!(invocation(&cmd, Shell::Cmd), cmd);
        assert_eq!(quote("C:/a=b", Shell::Cmd).unwrap(), "\"C:/a=b\"");
        assert!(quote(r"C:\100%\msd_run.exe", Shell::Cmd).is_err());
        assert!(quote(r#"C:\a"b"#, Shell::Cmd).is_err());
        // Git Bash (a POSIX shell) takes a quoted Windows path as one word.
        assert_eq!(quote(exe, Shell::Posix).unwrap(), format!("'{exe}'"));
        assert_eq!(invocation("'/a b/msd_run'", Shell::Posix), "'/a b/msd_run'");
    }
}
