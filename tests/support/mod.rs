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
        World::with_home("home")
    }

    /// A world whose home directory is called `name` (a space, a quote, `$(...)`).
    pub fn with_home(name: &str) -> World {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join(name);
        let project = tmp.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(tmp.path().join("tmp")).unwrap();
        World { tmp, home, project, extra_env: Vec::new() }
    }

    /// Sets an environment variable for every spawned command.
    pub fn env(mut self, k: &str, v: impl AsRef<Path>) -> World {
        self.extra_env.push((k.to_string(), v.as_ref().display().to_string()));
        self
    }

    /// Gives `cmd` this world's environment and directory: every runtime variable cleared,
    /// HOME, XDG_* and TMPDIR in the temp dir, the project as the current directory.
    pub fn isolate(&self, cmd: &mut std::process::Command) {
        for v in runtime_env_vars() {
            cmd.env_remove(v);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("TMPDIR", self.tmp_dir())
            .env_remove("MSD_RUN_SPILL_BYTES")
            .current_dir(&self.project);
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
    }

    /// This world's temporary directory (`TMPDIR` of every spawn), where msd_run spills.
    pub fn tmp_dir(&self) -> PathBuf {
        self.tmp.path().join("tmp")
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
    msd_core::fs::fsx::sha256_hex(b)
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

/// One `msd-install` run, built fluently in the style of just's test harness:
/// `Install::new().runtime("opencode").local().run().success().file(".opencode/...")`.
/// Every run gets its own [`World`] unless one is given ([`Install::with`]), so a test that
/// installs twice passes the world on with [`Ran::then`].
pub struct Install {
    world: World,
    args: Vec<String>,
}

impl Install {
    /// A run in a fresh world.
    pub fn new() -> Install {
        Install::with(World::new())
    }

    /// A run in `world`.
    pub fn with(world: World) -> Install {
        Install { world, args: Vec::new() }
    }

    /// `--runtime ID` (repeatable).
    pub fn runtime(self, id: &str) -> Install {
        self.args(["--runtime", id])
    }

    /// `--all`.
    pub fn all(self) -> Install {
        self.arg("--all")
    }

    /// `--local`.
    pub fn local(self) -> Install {
        self.arg("--local")
    }

    /// `--content DIR`.
    pub fn content(self, dir: impl AsRef<Path>) -> Install {
        let dir = dir.as_ref().display().to_string();
        self.args(["--content", &dir])
    }

    /// The starter fixture as content.
    pub fn starter(self) -> Install {
        self.content(fixture("starter"))
    }

    /// `--json`.
    pub fn json(self) -> Install {
        self.arg("--json")
    }

    /// Any other argument.
    pub fn arg(mut self, a: &str) -> Install {
        self.args.push(a.to_string());
        self
    }

    /// Any other arguments.
    pub fn args<'a>(mut self, a: impl IntoIterator<Item = &'a str>) -> Install {
        self.args.extend(a.into_iter().map(str::to_string));
        self
    }

    /// Runs it.
    pub fn run(self) -> Ran {
        let out = self.world.install().args(&self.args).output().expect("msd-install runs");
        Ran { world: self.world, args: self.args, out }
    }
}

/// A finished run: its world, its arguments and what it printed.
pub struct Ran {
    pub world: World,
    pub args: Vec<String>,
    pub out: std::process::Output,
}

impl Ran {
    fn describe(&self) -> String {
        format!(
            "msd-install {}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.args.join(" "),
            self.out.status.code(),
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr)
        )
    }

    /// Asserts exit 0.
    pub fn success(self) -> Ran {
        assert!(self.out.status.success(), "expected success\n{}", self.describe());
        self
    }

    /// Asserts the exit code.
    pub fn code(self, code: i32) -> Ran {
        assert_eq!(self.out.status.code(), Some(code), "{}", self.describe());
        self
    }

    /// Asserts stderr holds `needle`.
    pub fn stderr_has(self, needle: &str) -> Ran {
        assert!(
            String::from_utf8_lossy(&self.out.stderr).contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stdout holds `needle`.
    pub fn stdout_has(self, needle: &str) -> Ran {
        assert!(
            String::from_utf8_lossy(&self.out.stdout).contains(needle),
            "stdout lacks {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// The path of `rel` under the world (`~/...` is under the home, the rest under the project).
    pub fn path(&self, rel: &str) -> PathBuf {
        match rel.strip_prefix("~/") {
            Some(r) => self.world.home.join(r),
            None => self.world.project.join(rel),
        }
    }

    /// Asserts a file exists (`~/...` under the home, the rest under the project).
    pub fn file(self, rel: &str) -> Ran {
        assert!(self.path(rel).is_file(), "{rel} is not a file\n{}", self.describe());
        self
    }

    /// Asserts nothing is at `rel`.
    pub fn no_file(self, rel: &str) -> Ran {
        assert!(!self.path(rel).exists(), "{rel} exists\n{}", self.describe());
        self
    }

    /// The text of a file (see [`Ran::path`]).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}\n{}", self.describe()))
    }

    /// Stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        json(&self.out)
    }

    /// Another run in the same world.
    pub fn then(self) -> Install {
        Install::with(self.world)
    }
}
