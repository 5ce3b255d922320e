//! Where an install goes: the resolved home of a runtime for a scope, and the path prefixes that
//! content references are rewritten to.
//!
//! Input: a [`Capability`], the scope, `--config-dir`, and an [`Environment`] snapshot (the
//! variables, the user's home, the current directory). Output: a [`Target`].
//!
//! Resolution order for a global home: `--config-dir` > the manifest's env sources in order
//! (first non-blank; a leading `~` expanded; `parent` or `join` applied) > probes (first that
//! exists and contains its marker) > the default under the user's home. A local install goes
//! to `<cwd>/<local dir>`, and never into a directory that is a global home of the same runtime
//! (a project at the user's home would make `./.claude` the global `~/.claude`): that is refused
//! ([`TargetError::LocalIsGlobal`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use msd_core::fs::fsx;
use msd_core::manifest::capability::{Capability, LocalRefs, Scope};

/// A snapshot of what resolution reads from the process environment.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Environment variables.
    pub vars: BTreeMap<String, String>,
    /// The user's home directory.
    pub home: PathBuf,
    /// The current directory.
    pub cwd: PathBuf,
}

impl Environment {
    /// A fixed environment (home `/home/user`, no variables), so golden lists, inventories and
    /// attribution do not depend on the machine.
    pub fn golden() -> Environment {
        Environment {
            vars: BTreeMap::new(),
            home: PathBuf::from("/home/user"),
            cwd: PathBuf::from("/home/user/project"),
        }
    }

    /// Reads the process environment.
    pub fn from_process() -> std::io::Result<Environment> {
        let vars: BTreeMap<String, String> =
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
        let home =
            vars.get("HOME").filter(|h| !h.trim().is_empty()).map(PathBuf::from).or_else(dirs::home_dir).ok_or_else(
                || std::io::Error::new(std::io::ErrorKind::NotFound, "cannot find the home directory: set HOME"),
            )?;
        let cwd = std::env::current_dir()?;
        Ok(Environment { vars, home, cwd })
    }

    /// A non-blank variable.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.trim().is_empty())
    }

    /// Expands a leading `~` and makes the path absolute (relative to the current directory).
    pub fn expand(&self, value: &str) -> PathBuf {
        let p = if value == "~" {
            self.home.clone()
        } else if let Some(rest) = value.strip_prefix("~/") {
            self.home.join(rest)
        } else {
            PathBuf::from(value)
        };
        if p.is_absolute() { p } else { self.cwd.join(p) }
    }
}

/// How the home was found, for listings and messages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "from", content = "name")]
pub enum HomeSource {
    /// `--config-dir`.
    ConfigDir,
    /// An environment variable.
    Env(String),
    /// A probe that matched.
    Probe(String),
    /// The manifest default.
    Default,
    /// The current directory (local scope).
    Project,
}

/// A resolved install target.
#[derive(Debug, Clone)]
pub struct Target {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// The home everything is written under (absolute).
    pub home: PathBuf,
    /// How the home was found.
    pub source: HomeSource,
    /// Text that `~/.claude/` in content becomes (ends with `/`).
    pub home_ref: String,
    /// Text that `~/.claude/msd-core/` in content becomes (ends with `/`).
    pub core_ref: String,
    /// Text that `./.claude/` in content becomes (ends with `/`).
    pub local_ref: String,
}

/// Why a target cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The runtime has no local scope.
    #[error("{runtime} has no project-local install; install it globally (drop --local)")]
    NoLocalScope {
        /// Runtime id.
        runtime: String,
    },
    /// `--config-dir` with `--local`.
    #[error("--config-dir sets a global home and cannot be combined with --local")]
    ConfigDirWithLocal,
    /// A path that is not UTF-8.
    #[error("path is not valid UTF-8: {0}")]
    NotUtf8(PathBuf),
    /// The local directory of the project is the runtime's global home (the project is the
    /// user's home directory, or holds the global home).
    #[error(
        "--local would install {runtime} into {home}, which is its global home: the project ({project}) is where the global install lives, so a local install there would rewrite and remove the global one"
    )]
    LocalIsGlobal {
        /// Runtime id.
        runtime: String,
        /// The directory both scopes resolve to.
        home: PathBuf,
        /// The project directory.
        project: PathBuf,
    },
}

impl TargetError {
    /// What to do about it, when the message does not say.
    pub fn hint(&self) -> Option<String> {
        match self {
            TargetError::LocalIsGlobal { .. } => Some(
                "run inside a project (a directory with .git or .planning/), or name one with --project DIR; drop --local to install globally"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// Every directory that is or could become a global home of `cap` here: the one resolution picks
/// now, every probe, and the default (an env variable or a probe may point elsewhere later).
fn global_homes(cap: &Capability, env: &Environment) -> Vec<PathBuf> {
    let mut out = vec![global_home(cap, None, env).0, env.home.join(cap.home.default.as_str())];
    out.extend(cap.home.probes.iter().map(|p| env.home.join(p.path.as_str())));
    out
}

/// Whether `a` and `b` name one directory: equal once made absolute and free of `.`/`..`, or,
/// where both exist, with their symlinks resolved.
fn same_dir(a: &Path, b: &Path) -> bool {
    fn lexical(p: &Path) -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    if lexical(a) == lexical(b) {
        return true;
    }
    matches!((fsx::canonicalize(a), fsx::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

fn to_str(p: &Path) -> Result<String, TargetError> {
    p.to_str().map(|s| s.trim_end_matches('/').to_string()).ok_or_else(|| TargetError::NotUtf8(p.to_path_buf()))
}

/// Resolves the global home of `cap`.
pub fn global_home(cap: &Capability, config_dir: Option<&Path>, env: &Environment) -> (PathBuf, HomeSource) {
    if let Some(dir) = config_dir {
        return (env.expand(&dir.to_string_lossy()), HomeSource::ConfigDir);
    }
    for src in &cap.home.env {
        if let Some(v) = env.var(&src.var) {
            let mut p = env.expand(v);
            if src.parent {
                p = p.parent().map(Path::to_path_buf).unwrap_or(p);
            }
            if let Some(j) = &src.join {
                p = p.join(j.as_str());
            }
            return (p, HomeSource::Env(src.var.clone()));
        }
    }
    for probe in &cap.home.probes {
        let dir = env.home.join(probe.path.as_str());
        let hit = match &probe.contains {
            Some(marker) => dir.join(marker.as_str()).exists(),
            None => dir.is_dir(),
        };
        if hit {
            return (dir, HomeSource::Probe(probe.path.to_string()));
        }
    }
    (env.home.join(cap.home.default.as_str()), HomeSource::Default)
}

/// Resolves the target of `cap` for `scope`.
pub fn resolve(
    cap: &Capability,
    scope: Scope,
    config_dir: Option<&Path>,
    env: &Environment,
) -> Result<Target, TargetError> {
    let local_dir = cap.local.as_ref().map(|l| l.dir.as_str());
    let local_refs = cap.local.as_ref().map(|l| l.refs).unwrap_or_default();
    let (home, source, home_ref, core_ref) = match scope {
        Scope::Global => {
            let (home, source) = global_home(cap, config_dir, env);
            let h = to_str(&home)?;
            (home, source, format!("{h}/"), format!("{h}/{}/", cap.core_dir))
        }
        Scope::Local => {
            if config_dir.is_some() {
                return Err(TargetError::ConfigDirWithLocal);
            }
            let dir = local_dir.ok_or_else(|| TargetError::NoLocalScope { runtime: cap.id.clone() })?;
            let home = if dir == "." { env.cwd.clone() } else { env.cwd.join(dir) };
            if global_homes(cap, env).iter().any(|g| same_dir(g, &home)) {
                return Err(TargetError::LocalIsGlobal { runtime: cap.id.clone(), home, project: env.cwd.clone() });
            }
            let abs = to_str(&home)?;
            let rel = match local_refs {
                LocalRefs::Relative if dir == "." => ".".to_string(),
                LocalRefs::Relative => format!("./{dir}"),
                LocalRefs::Absolute => abs,
            };
            (home, HomeSource::Project, format!("{rel}/"), format!("{rel}/{}/", cap.core_dir(Scope::Local)))
        }
    };
    let local_ref = match (scope, local_dir, local_refs) {
        (Scope::Local, Some(_), LocalRefs::Absolute) => home_ref.clone(),
        (_, Some("."), _) => "./".to_string(),
        (_, Some(d), _) => format!("./{d}/"),
        (_, None, _) => home_ref.clone(),
    };
    Ok(Target { runtime: cap.id.clone(), scope, home, source, home_ref, core_ref, local_ref })
}
