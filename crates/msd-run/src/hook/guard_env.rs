//! The `.env` guard: refuses writes to `.env` files, and reads where the runtime sends reads to
//! the guard too (OpenCode's and Kilo's plugin shim sends every tool call: a `.env` read would
//! put the secrets into the model's context) (`.env`, `.env.local`, `.ENV.Production`,
//! ...; `.env.example`, `.env.sample`, `.env.template` and `.env.dist` are allowed): they hold
//! secrets an agent should not rewrite. The name is compared case-insensitively, and both the
//! path the tool names and the file it resolves to (through symlinks) are checked, so a link
//! `notes.txt -> .env` is refused too.

use std::path::Path;

use super::reply::Reply;

/// Whether `path` names a `.env` file an agent must not write.
pub(crate) fn is_secret_env(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    let name = name.to_ascii_lowercase();
    if name == ".env" {
        return true;
    }
    match name.strip_prefix(".env.") {
        Some(rest) => !["example", "sample", "template", "dist"].contains(&rest),
        None => false,
    }
}

/// The decision for a write to `named` (a read when `read`), which resolves to `resolved` (when
/// it exists).
pub(crate) fn decide(named: &str, resolved: Option<&Path>, read: bool) -> Reply {
    let hit = if is_secret_env(Path::new(named)) {
        Some(named.to_string())
    } else {
        resolved.filter(|r| is_secret_env(r)).map(|r| format!("{named} (a link to {})", r.display()))
    };
    match (hit, read) {
        (Some(what), false) => Reply::Block(format!(
            "msd: refusing to write {what}: .env files hold secrets. Ask the user to edit it, or write a .env.example instead."
        )),
        (Some(what), true) => Reply::Block(format!(
            "msd: refusing to read {what}: .env files hold secrets. Ask the user for what you need, or read a .env.example instead."
        )),
        (None, _) => Reply::Pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_env_names() {
        for p in [".env", "a/.env", ".env.local", "/x/.env.production", ".ENV", "a/.Env.Local"] {
            assert!(is_secret_env(Path::new(p)), "{p}");
        }
        for p in [".env.example", "env", ".envrc", "a/.env.sample", "x.env", ".env.template", ".ENV.EXAMPLE"] {
            assert!(!is_secret_env(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn hook_env_symlink_target_is_checked() {
        assert!(
            matches!(decide("notes.txt", Some(Path::new("/p/.env")), false), Reply::Block(m) if m.contains("a link to"))
        );
        assert_eq!(decide("notes.txt", Some(Path::new("/p/notes.txt")), false), Reply::Pass);
        assert!(matches!(decide(".env", None, true), Reply::Block(m) if m.contains("refusing to read")));
    }
}
