//! Test support: an isolated world per test (HOME, XDG_* and every runtime's env override
//! pointed into a TempDir) and helpers to read what landed on disk.

#![allow(dead_code, reason = "each test module uses part of the support, none all of it")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A runtime whose install writes no agent files, so `agents_native` is false in its
/// `<core>/runtime.json` and `msd_run query agent-skills` carries each agent's instructions
/// (Hermes reads skills only: runtimes/hermes). Tests of that payload use it; they check the
/// premise with [`assert_no_native_agents`], so a runtime that gains agents fails there first.
pub const NO_NATIVE_AGENTS: &str = "hermes";

/// Fails unless the installed core at `core` says its runtime loads no agent files.
pub fn assert_no_native_agents(core: &Path) {
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(core.join("runtime.json")).expect("runtime.json")).unwrap();
    assert_eq!(info["agents_native"], false, "{}: a runtime without native agents is needed: {info}", core.display());
}

/// A fixture path.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// Where the tests' temporary worlds live: `MSD_TEST_TMPDIR` when set, else `/dev/shm` when
/// the machine has a writable one, else the system's temp dir.
///
/// Every install ends with a `syncfs` of the filesystem it wrote to (a power cut never leaves a
/// half-written file behind the journal). On a disk that flushes whatever else the machine has
/// dirty, a parallel build's output included, and made a third of the suite's wall time; on tmpfs
/// it costs nothing. Nothing the suite checks depends on the disk: the kill -9 tests kill the
/// process, not the power. `MSD_TEST_TMPDIR=/tmp cargo test` runs it on the disk.
pub fn scratch_base() -> PathBuf {
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        if let Some(dir) = std::env::var_os("MSD_TEST_TMPDIR") {
            return PathBuf::from(dir);
        }
        let shm = Path::new("/dev/shm");
        if tempfile::tempdir_in(shm).is_ok() {
            return shm.to_path_buf();
        }
        std::env::temp_dir()
    })
    .clone()
}

/// Whether the fault-point sweeps run whole (`MSD_FULL_SWEEPS=1`, the `kill-campaign` job of
/// `.github/workflows/ci.yml`) or a fixed sample of their points (the suite): every point of a
/// sweep is a spawned run and its recovery, and the whole sweeps were a sixth of the suite's CPU.
/// A sample keeps each sweep's structure (the first points, the commit point and those around
/// it, the completing run) and every assertion; the job runs every point.
pub fn full_sweeps() -> bool {
    std::env::var_os("MSD_FULL_SWEEPS").is_some_and(|v| v == "1")
}

/// A new temporary directory under [`scratch_base`].
pub fn scratch() -> TempDir {
    tempfile::Builder::new().prefix("msd-test-").tempdir_in(scratch_base()).expect("tempdir")
}

/// Every environment variable any embedded manifest reads, so a developer's own settings
/// never leak into a test.
fn runtime_env_vars() -> &'static [String] {
    static VARS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    VARS.get_or_init(runtime_env_vars_uncached)
}

fn runtime_env_vars_uncached() -> Vec<String> {
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
        let tmp = scratch();
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

/// The shipped content, loaded once per test process (it is embedded: every load is the same
/// value; loading it in each of the tests that read it cost each of them as much as an install).
pub fn shipped_content() -> &'static msd_install::pipeline::load::Content {
    static CONTENT: std::sync::OnceLock<msd_install::pipeline::load::Content> = std::sync::OnceLock::new();
    CONTENT.get_or_init(|| msd_install::pipeline::load_content(&Default::default()).expect("the shipped content loads"))
}

/// Every file under `root`, relative path -> bytes.
pub fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    files(root).into_iter().map(|rel| (rel.clone(), std::fs::read(root.join(&rel)).unwrap())).collect()
}

/// Every file under `root` (the paths of [`tree`], sorted), none of them read: for a test that
/// looks at names only (an `--all` world holds a copy of the helper per runtime).
pub fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    walk(root, root, &mut out);
    out.sort();
    out
}

/// (path -> modified time) of every file under `root`.
pub fn mtimes(root: &Path) -> BTreeMap<String, std::time::SystemTime> {
    files(root)
        .into_iter()
        .map(|k| (k.clone(), std::fs::metadata(root.join(&k)).unwrap().modified().unwrap()))
        .collect()
}

/// Parses stdout as JSON.
pub fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Hex sha256.
pub fn sha256(b: &[u8]) -> String {
    msd_core::fs::fsx::sha256(b).to_string()
}

/// Copies a directory tree.
pub fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in tree(from) {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
}

/// Copies an executable the test then runs, by a `cp` process: the test binary runs tests on
/// many threads, and a copy made in it holds a writable descriptor of the new file while other
/// threads start processes; a child forked in that window keeps the descriptor until its own
/// exec, and running the copy then fails with "Text file busy" (ETXTBSY). A `cp` process holds
/// that descriptor alone, and has exited when this returns.
pub fn copy_executable(from: &Path, to: &Path) {
    let out = std::process::Command::new("cp").arg(from).arg(to).output().unwrap();
    assert!(out.status.success(), "cp {} {}: {}", from.display(), to.display(), String::from_utf8_lossy(&out.stderr));
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

/// One `msd-install` (or `msd_run`) run, built fluently in the style of just's test harness:
/// `Install::new().runtime("opencode").local().run().success().file(".opencode/...")`.
/// Every run gets its own [`World`] unless one is given: [`Install::with`] hands it over,
/// [`Install::in_world`] borrows it (a test that keeps its `World` and runs several commands in
/// it), and [`Ran::then`] passes it on to the next run.
pub struct Install<'w> {
    world: Place<'w>,
    bin: &'static str,
    args: Vec<String>,
    env: Vec<(String, String)>,
    env_remove: Vec<String>,
    cwd: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    note: Option<String>,
}

/// The world a run happens in: its own, or a test's.
pub enum Place<'w> {
    Owned(World),
    Borrowed(&'w World),
}

impl std::ops::Deref for Place<'_> {
    type Target = World;
    fn deref(&self) -> &World {
        match self {
            Place::Owned(w) => w,
            Place::Borrowed(w) => w,
        }
    }
}

impl Install<'static> {
    /// A run in a fresh world.
    pub fn new() -> Install<'static> {
        Install::with(World::new())
    }

    /// A run in `world`, which the run (and its [`Ran`]) then owns.
    pub fn with(world: World) -> Install<'static> {
        Install::at(Place::Owned(world))
    }
}

impl<'w> Install<'w> {
    /// A run in a world the test keeps.
    pub fn in_world(world: &'w World) -> Install<'w> {
        Install::at(Place::Borrowed(world))
    }

    fn at(world: Place<'w>) -> Install<'w> {
        Install {
            world,
            bin: "msd-install",
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cwd: None,
            stdin: None,
            note: None,
        }
    }

    /// Runs the `msd_run` helper instead of `msd-install`.
    pub fn helper(mut self) -> Install<'w> {
        self.bin = "msd_run";
        self
    }

    /// `--runtime ID` (repeatable).
    pub fn runtime(self, id: &str) -> Install<'w> {
        self.args(["--runtime", id])
    }

    /// `--all`.
    pub fn all(self) -> Install<'w> {
        self.arg("--all")
    }

    /// `--local`.
    pub fn local(self) -> Install<'w> {
        self.arg("--local")
    }

    /// `--dry-run`.
    pub fn dry_run(self) -> Install<'w> {
        self.arg("--dry-run")
    }

    /// `--content DIR`.
    pub fn content(self, dir: impl AsRef<Path>) -> Install<'w> {
        let dir = dir.as_ref().display().to_string();
        self.args(["--content", &dir])
    }

    /// The starter fixture as content.
    pub fn starter(self) -> Install<'w> {
        self.content(fixture("starter"))
    }

    /// `--json`.
    pub fn json(self) -> Install<'w> {
        self.arg("--json")
    }

    /// The `uninstall` subcommand (give it first).
    pub fn uninstall(self) -> Install<'w> {
        self.arg("uninstall")
    }

    /// The `verify` subcommand (give it first).
    pub fn verify(self) -> Install<'w> {
        self.arg("verify")
    }

    /// The `status` subcommand (give it first).
    pub fn status(self) -> Install<'w> {
        self.arg("status")
    }

    /// The `diff` subcommand (give it first).
    pub fn diff(self) -> Install<'w> {
        self.arg("diff")
    }

    /// The `recover` subcommand (give it first).
    pub fn recover(self) -> Install<'w> {
        self.arg("recover")
    }

    /// Any other argument.
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Install<'w> {
        self.args.push(a.as_ref().to_string_lossy().into_owned());
        self
    }

    /// Any other arguments.
    pub fn args<I, S>(mut self, a: I) -> Install<'w>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.args.extend(a.into_iter().map(|s| s.as_ref().to_string_lossy().into_owned()));
        self
    }

    /// An environment variable for this run only (after the world's isolation).
    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Install<'w> {
        self.env.push((k.to_string(), v.as_ref().to_string_lossy().into_owned()));
        self
    }

    /// Removes an environment variable for this run only.
    pub fn env_remove(mut self, k: &str) -> Install<'w> {
        self.env_remove.push(k.to_string());
        self
    }

    /// Runs in `dir` instead of the world's project.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Install<'w> {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Feeds `bytes` on stdin (else stdin is empty).
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Install<'w> {
        self.stdin = Some(bytes.into());
        self
    }

    /// What this run is (a loop's case, say), printed first by every failing assertion.
    pub fn note(mut self, note: impl std::fmt::Display) -> Install<'w> {
        self.note = Some(note.to_string());
        self
    }

    /// Runs it.
    pub fn run(self) -> Ran<'w> {
        let mut cmd = self.world.spawnable(self.bin);
        cmd.args(&self.args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        for k in &self.env_remove {
            cmd.env_remove(k);
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        let mut cmd = Command::from_std(cmd);
        if let Some(bytes) = &self.stdin {
            cmd.write_stdin(bytes.clone());
        }
        let out = cmd.output().unwrap_or_else(|e| panic!("{} {} runs: {e}", self.bin, self.args.join(" ")));
        Ran { world: self.world, bin: self.bin, args: self.args, env: self.env, note: self.note, out }
    }
}

/// A finished run: its world, its arguments and what it printed.
pub struct Ran<'w> {
    pub world: Place<'w>,
    pub bin: &'static str,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub note: Option<String>,
    pub out: std::process::Output,
}

impl<'w> Ran<'w> {
    /// The command, its exit code, stdout and stderr: every assertion's failure message.
    pub fn describe(&self) -> String {
        let env: String = self.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        let note = self.note.as_ref().map(|n| format!("{n}\n")).unwrap_or_default();
        format!(
            "{note}{env}{} {}\nexit: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.bin,
            self.args.join(" "),
            self.out.status.code(),
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr)
        )
    }

    /// Stdout, which must be UTF-8.
    pub fn stdout(&self) -> String {
        String::from_utf8(self.out.stdout.clone())
            .unwrap_or_else(|e| panic!("stdout is not UTF-8 ({e})\n{}", self.describe()))
    }

    /// Stderr, lossily decoded.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    /// The exit code (`None` when killed by a signal).
    pub fn exit(&self) -> Option<i32> {
        self.out.status.code()
    }

    /// Asserts exit 0.
    pub fn success(self) -> Ran<'w> {
        assert!(self.out.status.success(), "expected success\n{}", self.describe());
        self
    }

    /// Asserts a non-zero exit.
    pub fn failure(self) -> Ran<'w> {
        assert!(!self.out.status.success(), "expected failure\n{}", self.describe());
        self
    }

    /// Asserts the exit code.
    pub fn code(self, code: i32) -> Ran<'w> {
        assert_eq!(self.out.status.code(), Some(code), "{}", self.describe());
        self
    }

    /// Asserts stderr holds `needle`.
    pub fn stderr_has(self, needle: &str) -> Ran<'w> {
        assert!(self.stderr().contains(needle), "stderr lacks {needle:?}\n{}", self.describe());
        self
    }

    /// Asserts stderr does not hold `needle`.
    pub fn stderr_lacks(self, needle: &str) -> Ran<'w> {
        assert!(!self.stderr().contains(needle), "stderr holds {needle:?}\n{}", self.describe());
        self
    }

    /// Asserts stderr is empty.
    pub fn stderr_empty(self) -> Ran<'w> {
        assert!(self.out.stderr.is_empty(), "stderr is not empty\n{}", self.describe());
        self
    }

    /// Asserts stdout holds `needle`.
    pub fn stdout_has(self, needle: &str) -> Ran<'w> {
        assert!(
            String::from_utf8_lossy(&self.out.stdout).contains(needle),
            "stdout lacks {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stdout does not hold `needle`.
    pub fn stdout_lacks(self, needle: &str) -> Ran<'w> {
        assert!(
            !String::from_utf8_lossy(&self.out.stdout).contains(needle),
            "stdout holds {needle:?}\n{}",
            self.describe()
        );
        self
    }

    /// Asserts stdout is exactly `expected`.
    pub fn stdout_is(self, expected: &str) -> Ran<'w> {
        assert_eq!(String::from_utf8_lossy(&self.out.stdout), expected, "{}", self.describe());
        self
    }

    /// Asserts stdout is empty.
    pub fn stdout_empty(self) -> Ran<'w> {
        assert!(self.out.stdout.is_empty(), "stdout is not empty\n{}", self.describe());
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
    pub fn file(self, rel: &str) -> Ran<'w> {
        assert!(self.path(rel).is_file(), "{rel} is not a file\n{}", self.describe());
        self
    }

    /// Asserts nothing is at `rel`.
    pub fn no_file(self, rel: &str) -> Ran<'w> {
        assert!(!self.path(rel).exists(), "{rel} exists\n{}", self.describe());
        self
    }

    /// The text of a file (see [`Ran::path`]).
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}\n{}", self.describe()))
    }

    /// Stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", self.describe()))
    }

    /// Another run in the same world.
    pub fn then(self) -> Install<'w> {
        Install::at(self.world)
    }
}
