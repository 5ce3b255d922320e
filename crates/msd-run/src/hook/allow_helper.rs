//! The guard's `--allow-helper <tool>`: approve a shell call that runs this very helper and
//! nothing else, for a runtime whose settings hold no rule that pre-approves one command.
//!
//! GitHub Copilot CLI 1.0.102 reads no user setting that allows one shell command (its
//! `--allow-tool 'shell(...)'` is a command-line flag; `-p` refuses every call that needs a
//! prompt), but a `preToolUse` hook that answers `permissionDecision: allow` lets the call run
//! unasked (`runtimes/copilot/capability.json` cites both). So the guard msd registers there
//! answers `allow` when the shell tool's command is the installed helper followed by plain
//! arguments: no operator, redirection, substitution, expansion or escape, so the line can run
//! nothing but the helper. Anything else gets no answer and goes through the runtime's prompt.

use std::path::{Path, PathBuf};

use msd_core::fs::fsx;

/// Bytes an argument may hold: letters, digits, quotes and the punctuation of paths, options
/// and plain text. No `; & | < > $ \` \ ( ) { } * ? [ ] ~ # !` or newline: nothing the shell
/// would read as more than words.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || " \t'\"_./:=,@%+-".contains(c)
}

/// The command's first word, its surrounding quotes taken off, and the rest of the line.
fn split_first(command: &str) -> Option<(&str, &str)> {
    let s = command.trim();
    let (word, rest) = match s.chars().next()? {
        q @ ('"' | '\'') => {
            let end = s[1..].find(q)? + 1;
            (&s[1..end], &s[end + 1..])
        }
        _ => s.split_at(s.find([' ', '\t']).unwrap_or(s.len())),
    };
    // A word glued to more after its closing quote (`"a"b`) is not one plain path.
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((word, rest))
}

/// Whether `command`, run by a shell in `cwd`, runs the file `exe` and nothing else.
pub(crate) fn runs_only(command: &str, cwd: &Path, exe: &Path) -> bool {
    let Some((word, rest)) = split_first(command) else {
        return false;
    };
    // A relative helper (a local install's `./.github/msd-core/bin/msd_run`) runs from `cwd`;
    // a bare name would be looked up on PATH, which is not this helper's business.
    if word.is_empty() || !word.contains('/') || !word.chars().all(plain) || word.contains(['\'', '"']) {
        return false;
    }
    if !rest.chars().all(plain) || rest.matches('\'').count() % 2 == 1 || rest.matches('"').count() % 2 == 1 {
        return false;
    }
    let named = PathBuf::from(word);
    let named = if named.is_absolute() { named } else { cwd.join(named) };
    let canon = |p: &Path| fsx::canonicalize(p).ok();
    matches!((canon(&named), canon(exe)), (Some(a), Some(b)) if a == b)
}

#[cfg(test)]
mod tests {
    use super::split_first;

    #[test]
    fn allow_helper_splits_the_first_word() {
        assert_eq!(split_first("  /h/msd_run query x"), Some(("/h/msd_run", " query x")));
        assert_eq!(split_first("'/a b/msd_run' query"), Some(("/a b/msd_run", " query")));
        assert_eq!(split_first("\"/a b/msd_run\"x query"), None);
        assert_eq!(split_first("/h/msd_run"), Some(("/h/msd_run", "")));
        assert_eq!(split_first(""), None);
    }
}
