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
//! A word with a NUL cannot be passed to any shell: [`quote`] refuses it.

use std::borrow::Cow;

/// A shell that runs a command string msd writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// POSIX `sh` (and bash, zsh, dash): what `sh -c` and a Markdown ```bash block run.
    Posix,
    /// PowerShell: single quotes, a `'` doubled.
    PowerShell,
}

/// A word that cannot be quoted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{word:?} cannot be passed to a shell: it contains a NUL byte")]
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
    if word.contains('\0') {
        return Err(QuoteError { word: word.to_string() });
    }
    if !word.is_empty() && word.chars().all(is_plain) {
        return Ok(Cow::Borrowed(word));
    }
    let escaped = match shell {
        Shell::Posix => word.replace('\'', r"'\''"),
        Shell::PowerShell => word.replace('\'', "''"),
    };
    Ok(Cow::Owned(format!("'{escaped}'")))
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
}
