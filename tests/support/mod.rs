//! Test support: an isolated world per test (HOME, XDG_* and every runtime's env override
//! pointed into a TempDir) and helpers to read what landed on disk.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture path.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// Every environment variable any embedded manifest reads, so a developer's own settings
/// never leak into a test.
fn runtime_env_vars() -> Vec<String> {
    let mut vars = vec![
        "XDG_CONFIG_HOME".to_string(),
        "NO_COLOR".to_string(),
        "MSD_CORE_DIR".to_string(),
        "MSD_RUN_BIN".to_string(),
    ];
    for rt in msd_install::pipeline::load_runtimes(&Default::default()).expect("embedded manifests load") {
        for e in rt.capability.home.env {
            vars.push(e.var);
        }
    }
    vars.sort();
    vars.dedup();
    vars
}

/// An isolated world: a home and a project directory.
pub struct World {
    pub tmp: TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    extra_env: Vec<(String, String)>,
}

impl World {
    pub fn new() -> World {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let project = tmp.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        World { tmp, home, project, extra_env: Vec::new() }
    }

    /// Sets an environment variable for every spawned command.
    pub fn env(mut self, k: &str, v: impl AsRef<Path>) -> World {
        self.extra_env.push((k.to_string(), v.as_ref().display().to_string()));
        self
    }

    /// Gives `cmd` this world's environment and directory: every runtime variable cleared,
    /// HOME and XDG_* in the temp dir, the project as the current directory.
    pub fn isolate(&self, cmd: &mut std::process::Command) {
        for v in runtime_env_vars() {
            cmd.env_remove(v);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .current_dir(&self.project);
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
    }

    /// A plain `std` command of `bin` (a binary of this package) in this world, for spawning.
    pub fn spawnable(&self, bin: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin(bin));
        self.isolate(&mut cmd);
        cmd
    }

    /// `msd-install` in this world.
    pub fn install(&self) -> Command {
        Command::from_std(self.spawnable("msd-install"))
    }

    /// `msd_run` in this world.
    pub fn run(&self) -> Command {
        Command::from_std(self.spawnable("msd_run"))
    }
}

/// Every file under `root`, relative path -> bytes.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    walk(root, root, &mut out);
    out
}

/// (path -> modified time) of every file under `root`.
pub fn mtimes(root: &Path) -> BTreeMap<String, std::time::SystemTime> {
    tree(root).keys().map(|k| (k.clone(), std::fs::metadata(root.join(k)).unwrap().modified().unwrap())).collect()
}

/// Parses stdout as JSON.
pub fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Hex sha256.
pub fn sha256(b: &[u8]) -> String {
    msd_install::fsx::sha256_hex(b)
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

/// A minimal content tree under `w`'s temp dir: commands `plan` (with `plan_body`) and
/// `execute`, and the `plan` workflow.
pub fn plan_execute_tree(w: &World, name: &str, plan_body: &str) -> PathBuf {
    let dir = w.tmp.path().join(name);
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("commands/msd/plan.md", &format!("---\nname: msd:plan\ndescription: Plan a phase\n---\n{plan_body}"));
    write("commands/msd/execute.md", "---\nname: msd:execute\ndescription: Execute a phase\n---\nExecute.\n");
    write("msd-core/workflows/plan.md", "Plan.\n");
    dir
}
