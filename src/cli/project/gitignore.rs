//! `gitignore = true` in msd.toml: one marked block in the project's `.gitignore` listing the
//! paths msd installs into the project, so local installs stay out of git.
//!
//! The block is msd's like any entry it owns: added by an install that follows an msd.toml with
//! `gitignore = true`, rewritten when the set of local installs changes, removed by the uninstall
//! of the last one. Everything outside the markers is the user's and stays byte for byte: a new
//! block goes first in the file (so a user's own later line, a `!` negation say, still wins), and
//! removing it takes exactly its lines. The begin line says when msd created the file, so removing
//! the block deletes a file that is then empty only when it was msd's to begin with.
//!
//! What is listed comes from the file manifests of the project's local installs (data, not
//! runtime names): for each file, its highest directory under the project whose name is in msd's
//! namespace (`msd-core/`, `commands/msd/`, `skills/msd-help/`), else the file itself
//! (`agents/msd-planner.md`, a hook script). Settings files msd only adds entries to are the
//! user's and are never listed.

use std::collections::BTreeSet;
use std::path::Path;

use msd_core::fs::fsx;
use msd_core::manifest::capability::Scope;

use super::ProjectError;
use crate::apply::record::FileManifest;
use crate::pipeline::load::LoadedRuntime;
use crate::pipeline::target::{self, Environment};

/// The file.
pub(crate) const GITIGNORE: &str = ".gitignore";

const BEGIN: &str = "# msd-install:begin local-installs";
const CREATED: &str = " (created this file)";
const END: &str = "# msd-install:end local-installs";
const ABOUT: &str =
    "# what msd-install writes into this project (msd.toml: gitignore = true); rewritten by each install";

/// The lines the block lists for the local installs of `runtimes` under `env.cwd` (the project
/// root), sorted.
pub(crate) fn entries(runtimes: &[LoadedRuntime], env: &Environment) -> Result<Vec<String>, ProjectError> {
    let mut out = BTreeSet::new();
    for rt in runtimes.iter().filter(|r| r.capability.local.is_some()) {
        let Ok(t) = target::resolve(&rt.capability, Scope::Local, None, env) else { continue };
        let manifest = FileManifest::read(&t.home, &rt.capability, Scope::Local)
            .map_err(|e| ProjectError::Io { path: e.path.clone().into(), source: std::io::Error::other(e.message) })?;
        let Some(m) = manifest else { continue };
        let Ok(prefix) = t.home.strip_prefix(&env.cwd) else { continue };
        let prefix: Vec<String> = prefix
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        for e in &m.files {
            let parts: Vec<String> =
                prefix.iter().cloned().chain(e.path.as_str().split('/').map(String::from)).collect();
            out.insert(entry(&parts));
        }
    }
    Ok(out.into_iter().collect())
}

/// The line of one installed file (path components from the project root).
fn entry(parts: &[String]) -> String {
    let dirs = &parts[..parts.len().saturating_sub(1)];
    match dirs.iter().position(|d| d.starts_with("msd")) {
        Some(i) => format!("/{}/", escape(&parts[..=i].join("/"))),
        None => format!("/{}", escape(&parts.join("/"))),
    }
}

/// A path as a literal gitignore pattern.
fn escape(path: &str) -> String {
    let mut s = String::new();
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    if s.ends_with(' ') {
        s.insert(s.len() - 1, '\\');
    }
    s
}

/// What [`edit`] does to the file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Nothing to change.
    Unchanged,
    /// The file's new text.
    Write(String),
    /// Delete the file (msd created it, and it would be empty).
    Delete,
}

/// The block in `text`: (first line index, last line index, whether msd created the file).
fn find(text: &str) -> Result<Option<(usize, usize, bool)>, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let is_begin = |l: &str| l.trim_end() == BEGIN || l.trim_end() == format!("{BEGIN}{CREATED}");
    let begins: Vec<usize> = (0..lines.len()).filter(|&i| is_begin(lines[i])).collect();
    let ends: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].trim_end() == END).collect();
    match (begins.as_slice(), ends.as_slice()) {
        ([], []) => Ok(None),
        ([b], [e]) if b < e => Ok(Some((*b, *e, lines[*b].trim_end().ends_with(CREATED)))),
        _ => Err(format!(
            "msd's block is damaged (begin lines: {}, end lines: {}); make it one `{BEGIN}` ... `{END}` pair or delete both",
            begins.len(),
            ends.len()
        )),
    }
}

/// The edit that makes `current` (None: no file) hold a block of `lines` (empty: no block).
pub(crate) fn edit(current: Option<&str>, lines: &[String]) -> Result<Edit, String> {
    let text = current.unwrap_or("");
    let found = find(text)?;
    let split: Vec<&str> = text.split_inclusive('\n').collect();
    let block = |created: bool| {
        let mut b = format!("{BEGIN}{}\n{ABOUT}\n", if created { CREATED } else { "" });
        for l in lines {
            b.push_str(l);
            b.push('\n');
        }
        b.push_str(END);
        b.push('\n');
        b
    };
    let new = match (found, lines.is_empty()) {
        (None, true) => return Ok(Edit::Unchanged),
        (None, false) => format!("{}{text}", block(current.is_none())),
        (Some((s, e, created)), true) => {
            let rest = format!("{}{}", split[..s].concat(), split[e + 1..].concat());
            if created && rest.is_empty() {
                return Ok(Edit::Delete);
            }
            rest
        }
        (Some((s, e, created)), false) => {
            format!("{}{}{}", split[..s].concat(), block(created), split[e + 1..].concat())
        }
    };
    Ok(if new == text { Edit::Unchanged } else { Edit::Write(new) })
}

/// Whether the project's `.gitignore` holds msd's block.
pub(crate) fn has_block(root: &Path) -> bool {
    fsx::read_to_string(&root.join(GITIGNORE)).ok().is_some_and(|t| find(&t).ok().flatten().is_some())
}

/// Brings the block of `root/.gitignore` in line with the project's local installs now. With
/// `add` false (an uninstall, or an install without `gitignore = true`), an absent block stays
/// absent. Returns what changed, for the summary.
pub(crate) fn sync(
    root: &Path,
    runtimes: &[LoadedRuntime],
    env: &Environment,
    add: bool,
) -> Result<Option<String>, ProjectError> {
    let path = root.join(GITIGNORE);
    let io = |source| ProjectError::Io { path: path.clone(), source };
    let current = match fsx::read_if_exists(&path).map_err(io)? {
        Some(b) => Some(String::from_utf8(b).map_err(|e| ProjectError::Invalid {
            path: path.clone(),
            line: None,
            message: format!("not UTF-8 text ({e})"),
            hint: "msd-install edits only a UTF-8 .gitignore; fix its encoding or set gitignore = false".into(),
        })?),
        None => None,
    };
    let had = current.as_deref().map(find).transpose().map_err(|m| invalid(&path, m))?.flatten().is_some();
    if !add && !had {
        return Ok(None);
    }
    let mut project_env = env.clone();
    project_env.cwd = root.to_path_buf();
    let lines = entries(runtimes, &project_env)?;
    match edit(current.as_deref(), &lines).map_err(|m| invalid(&path, m))? {
        Edit::Unchanged => Ok(None),
        Edit::Write(text) => {
            fsx::write_in_place(&path, text.as_bytes()).map_err(io)?;
            Ok(Some(if lines.is_empty() {
                format!("{}: removed msd's block (no local install left)", path.display())
            } else if had {
                format!("{}: msd's block now lists {} path(s)", path.display(), lines.len())
            } else {
                format!("{}: added msd's block ({} path(s))", path.display(), lines.len())
            }))
        }
        // A link in its place is the user's (msd never makes one): it stays, emptied.
        Edit::Delete if fsx::is_symlink(&path) => {
            fsx::write_in_place(&path, b"").map_err(io)?;
            Ok(Some(format!("{}: removed msd's block (no local install left)", path.display())))
        }
        Edit::Delete => {
            fsx::remove_file_if_exists(&path).map_err(io)?;
            Ok(Some(format!("{}: removed (msd created it; its block was all it held)", path.display())))
        }
    }
}

fn invalid(path: &Path, message: String) -> ProjectError {
    ProjectError::Invalid {
        path: path.to_path_buf(),
        line: None,
        message,
        hint: "fix the markers by hand and run again; the file was left untouched".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_block_goes_first_and_leaves_the_users_bytes_as_they_were() {
        for user in ["target/\n", "target/", "a\n\n# c\r\n", ""] {
            let Edit::Write(with) = edit(Some(user), &lines(&["/.claude/msd-core/"])).unwrap() else { panic!() };
            assert!(with.ends_with(user) && with.starts_with(BEGIN), "{with:?}");
            let Edit::Write(back) = edit(Some(&with), &[]).unwrap() else { panic!() };
            assert_eq!(back, user, "removal restores the user's bytes");
        }
    }

    #[test]
    fn a_file_msd_created_goes_with_its_block_unless_the_user_wrote_into_it() {
        let Edit::Write(t) = edit(None, &lines(&["/x/"])).unwrap() else { panic!() };
        assert_eq!(edit(Some(&t), &[]).unwrap(), Edit::Delete);
        let Edit::Write(back) = edit(Some(&format!("{t}mine\n")), &[]).unwrap() else { panic!() };
        assert_eq!(back, "mine\n");
        assert_eq!(edit(Some(&t), &lines(&["/x/"])).unwrap(), Edit::Unchanged);
        assert_eq!(edit(Some("a\n"), &[]).unwrap(), Edit::Unchanged);
    }

    #[test]
    fn a_damaged_block_is_an_error_not_a_guess() {
        assert!(edit(Some(&format!("{BEGIN}\n/x/\n")), &[]).is_err());
        assert!(edit(Some(&format!("{END}\n{BEGIN}\n")), &[]).is_err());
    }

    #[test]
    fn entries_take_the_highest_msd_directory_else_the_file() {
        let p = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
        assert_eq!(entry(&p(".claude/msd-core/workflows/plan.md")), "/.claude/msd-core/");
        assert_eq!(entry(&p(".claude/commands/msd/plan.md")), "/.claude/commands/msd/");
        assert_eq!(entry(&p(".claude/agents/msd-planner.md")), "/.claude/agents/msd-planner.md");
        assert_eq!(entry(&p(".clinerules/hooks/Pre[1]")), "/.clinerules/hooks/Pre\\[1]");
    }
}
