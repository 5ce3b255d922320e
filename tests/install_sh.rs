//! `./install.sh`, the first five minutes: a mistyped option stops before any build, `--bin-dir`
//! without a value is a clear error, a source build shows cargo's progress and how long it takes,
//! builds msd_run static on Linux with glibc (scripts/build-release.sh) or says why not, and on a
//! terminal the settings changes are shown and asked about before anything is written.
//! Cargo is a stand-in on PATH that records its arguments and puts the built binaries in place;
//! `rustc` (the host triple) and `cc` (where libc.a is) are stand-ins too, so every branch of the
//! build script runs in a second (the real static link is the CI job `static-helper` and the
//! real-runtime tier, which build with the script).

use std::path::{Path, PathBuf};

use crate::support::World;

/// A PATH holding a `cargo` that logs its arguments to `<tmp>/cargo.log`, prints a progress line
/// and copies the real binaries into `$CARGO_TARGET_DIR/release` (a `cargo rustc` fails as a
/// link without libc.a does when FAKE_STATIC_LINK_FAILS is set), a `rustc` whose host is
/// FAKE_HOST (default x86_64-unknown-linux-gnu), a `cc` that finds libc.a unless FAKE_NO_LIBC_A
/// is set, an `nm` that lists `main`, `gethostname` (harmless: uname) or FAKE_NM_SYMBOL; then
/// the system's tools (no curl: every build is from source).
fn fake_cargo(w: &World) -> PathBuf {
    let dir = w.tmp.path().join("fake-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let cargo = format!(
        "#!/bin/sh\necho \"$@\" >> '{log}'\necho '   Compiling msd-install (fake)' >&2\n\
         if [ \"$1\" = rustc ] && [ -n \"${{FAKE_STATIC_LINK_FAILS:-}}\" ]; then\n\
         echo 'error: linking with `cc` failed: exit status: 1' >&2; echo 'ld: cannot find -lc' >&2; exit 101\nfi\n\
         mkdir -p \"$CARGO_TARGET_DIR/release\"\ncp '{i}' '{r}' \"$CARGO_TARGET_DIR/release/\"\n",
        log = w.tmp.path().join("cargo.log").display(),
        i = assert_cmd::cargo::cargo_bin("msd-install").display(),
        r = assert_cmd::cargo::cargo_bin("msd_run").display(),
    );
    let rustc = "#!/bin/sh\necho 'rustc 1.95.0 (fake)'\necho \"host: ${FAKE_HOST:-x86_64-unknown-linux-gnu}\"\n";
    let cc = "#!/bin/sh\nif [ -n \"${FAKE_NO_LIBC_A:-}\" ]; then echo libc.a; else echo /usr/lib/x86_64-linux-gnu/libc.a; fi\n";
    let nm =
        "#!/bin/sh\nprintf '%s\\n' '0000000000001000 T main' \"${FAKE_NM_SYMBOL:-0000000000002000 W gethostname}\"\n";
    for (name, script) in [("cargo", cargo.as_str()), ("rustc", rustc), ("cc", cc), ("nm", nm)] {
        std::fs::write(dir.join(name), script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    for tool in
        ["bash", "sh", "sed", "head", "uname", "dirname", "mkdir", "cp", "chmod", "mv", "cat", "env", "sort", "tr"]
    {
        for base in ["/usr/bin", "/bin"] {
            let p = Path::new(base).join(tool);
            if p.exists() && !dir.join(tool).exists() {
                #[cfg(unix)]
                std::os::unix::fs::symlink(&p, dir.join(tool)).unwrap();
            }
        }
    }
    dir
}

/// `bash install.sh args` in `w`, with the fake cargo.
fn install_sh(w: &World, args: &[&str]) -> std::process::Command {
    let mut cmd = w.spawnable("msd-install");
    let mut sh = std::process::Command::new("/bin/bash");
    sh.arg(crate::support::repo().join("install.sh")).args(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    let _ = &mut cmd;
    sh.env("PATH", fake_cargo(w))
        .env("CARGO_TARGET_DIR", w.tmp.path().join("target"))
        .env_remove("MSD_BIN_DIR")
        .current_dir(&w.project);
    sh
}

fn cargo_log(w: &World) -> String {
    std::fs::read_to_string(w.tmp.path().join("cargo.log")).unwrap_or_default()
}

#[test]
fn install_sh_a_mistyped_option_stops_before_any_build() {
    let w = World::new();
    for (args, says) in [
        (&["--runtme", "claude"][..], "unknown option `--runtme`"),
        (&["-r", "claude", "--dryrun"][..], "unknown option `--dryrun`"),
        (&["--bin-dir"][..], "--bin-dir needs a directory"),
        (&["--bin-dir", "--local"][..], "--bin-dir needs a directory"),
        (&["--bin-dir="][..], "--bin-dir needs a directory"),
    ] {
        let out = install_sh(&w, args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(cargo_log(&w), "", "{args:?}: nothing was built");
        assert!(!w.home.join(".local/bin").exists() && !w.home.join(".claude").exists(), "{args:?}");
    }
}

#[test]
fn install_sh_its_option_list_is_msd_installs() {
    // Every option `msd-install install --help` lists is one install.sh lets through, and no other.
    let help = std::process::Command::new(assert_cmd::cargo::cargo_bin("msd-install"))
        .args(["install", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let mut from_help: Vec<String> = Vec::new();
    for line in help.lines().map(str::trim_start).filter(|l| l.starts_with('-')) {
        for word in line.replace(',', " ").split_whitespace().take_while(|w| w.starts_with('-')) {
            if word.len() > 1 && word != "-h" && word != "--help" {
                from_help.push(word.to_string());
            }
        }
    }
    let script = std::fs::read_to_string(crate::support::repo().join("install.sh")).unwrap();
    let list = |name: &str| -> Vec<String> {
        let start = script.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("{name}")) + name.len() + 2;
        let end = start + script[start..].find('"').unwrap();
        script[start..end].split_whitespace().map(str::to_string).collect()
    };
    let mut from_script = list("MSD_FLAGS");
    from_script.extend(list("MSD_VALUED"));
    from_help.sort();
    from_script.sort();
    assert_eq!(from_script, from_help, "install.sh's MSD_FLAGS + MSD_VALUED are `msd-install install --help`'s");
    // Every subcommand the completions offer is in the list, and each listed one is a subcommand
    // (hidden maintainer ones included).
    let subs = list("MSD_SUBCOMMANDS");
    for name in subcommands() {
        assert!(subs.contains(&name), "install.sh's MSD_SUBCOMMANDS lacks {name}");
    }
    for name in &subs {
        let ok = std::process::Command::new(assert_cmd::cargo::cargo_bin("msd-install"))
            .args([name, "--help"])
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "{name} in install.sh is not an msd-install subcommand");
    }
}

/// The subcommand names the fish completion script offers.
fn subcommands() -> Vec<String> {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("msd-install"))
        .args(["completions", "fish"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut names = Vec::new();
    let marker = "_needs_command\" -f -a \"";
    for line in text.lines().filter(|l| l.contains(marker)) {
        let start = line.find(marker).unwrap() + marker.len();
        let name = line[start..].split('"').next().unwrap().to_string();
        if name != "help" && !names.contains(&name) {
            names.push(name);
        }
    }
    assert!(names.len() > 10, "{text}");
    names
}

#[test]
fn install_sh_a_source_build_shows_cargos_progress_and_how_long_it_takes() {
    let w = World::new();
    let bin = w.tmp.path().join("bin");
    let out = install_sh(&w, &["--from-source", "--bin-dir", bin.to_str().unwrap(), "-q"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("usually 3 to 6 minutes"), "{err}");
    assert!(err.contains("Compiling msd-install (fake)"), "cargo's progress is shown: {err}");
    let log = cargo_log(&w);
    assert!(log.contains("build --release --locked --bin msd-install") && !log.contains("--quiet"), "{log}");
    assert!(bin.join("msd-install").exists() && w.home.join(".claude/msd-core/bin/msd_run").exists());
}

/// One build of `install_sh_links_the_helper_static_on_linux_gnu_or_says_why_not`: the FAKE_*
/// settings, what the build script must say, the builds cargo is asked for after msd-install's.
struct BuildCase {
    env: &'static [(&'static str, &'static str)],
    says: &'static [&'static str],
    builds: &'static [&'static str],
}

#[test]
fn install_sh_links_the_helper_static_on_linux_gnu_or_says_why_not() {
    // Static: msd_run through `cargo rustc` with crt-static alone; no libc.a or a failing static
    // link: the dynamic msd_run, with a note and what to install; a static msd_run that links an
    // NSS function (getaddrinfo): linked dynamic again, with a note; another host (macOS: no
    // static C library; musl: static already): the plain build, nothing said.
    const STATIC: &str = "rustc --release --locked -p msd-install --bin msd_run -- -C target-feature=+crt-static";
    const DYNAMIC: &str = "build --release --locked --bin msd_run";
    let cases = [
        BuildCase { env: &[], says: &[], builds: &[STATIC] },
        BuildCase {
            env: &[("FAKE_NO_LIBC_A", "1")],
            says: &["no static C library (libc.a)", "libc6-dev", "glibc-static"],
            builds: &[DYNAMIC],
        },
        BuildCase {
            env: &[("FAKE_STATIC_LINK_FAILS", "1")],
            says: &["cannot find -lc", "msd_run could not be linked static", "libc6-dev"],
            builds: &[STATIC, DYNAMIC],
        },
        BuildCase {
            env: &[("FAKE_NM_SYMBOL", "0000000000002000 T getaddrinfo")],
            says: &["msd_run now calls getaddrinfo", "msd_run is linked dynamic instead"],
            builds: &[STATIC, DYNAMIC],
        },
        BuildCase { env: &[("FAKE_HOST", "aarch64-apple-darwin")], says: &[], builds: &[DYNAMIC] },
    ];
    for BuildCase { env, says, builds } in cases {
        let w = World::new();
        let bin = w.tmp.path().join("bin");
        let mut cmd = install_sh(&w, &["--from-source", "--bin-dir", bin.to_str().unwrap(), "-q"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{env:?}: {err}");
        for s in says {
            assert!(err.contains(s), "{env:?}: says {s}: {err}");
        }
        if says.is_empty() {
            assert!(!err.contains("note: msd_run"), "{env:?}: nothing to say: {err}");
        }
        let log = cargo_log(&w);
        let mut want = vec!["build --release --locked --bin msd-install"];
        want.extend(builds);
        assert_eq!(log.lines().collect::<Vec<_>>(), want, "{env:?}: {err}");
        assert!(bin.join("msd_run").exists() && w.home.join(".claude/msd-core/bin/msd_run").exists(), "{env:?}");
    }
}

#[cfg(unix)]
#[test]
fn install_sh_on_a_terminal_shows_the_settings_changes_and_asks_first() {
    let w = World::new();
    let bin = w.tmp.path().join("bin");
    let run = |answer: &str| {
        let mut cmd = install_sh(&w, &["--from-source", "--bin-dir", bin.to_str().unwrap()]);
        cmd.env("TERM", "xterm").env("NO_COLOR", "1");
        let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawns on a pty");
        p.exp_string("what msd-install will change").unwrap();
        p.exp_string("settings settings.json: added hook:session-start").unwrap();
        p.exp_string("hooks included? [y/N]").unwrap();
        p.send_line(answer).unwrap();
        p.exp_eof().unwrap()
    };
    let said = run("n");
    assert!(said.contains("nothing was written"), "{said}");
    assert!(!w.home.join(".claude").exists(), "a no writes nothing");
    let said = run("y");
    assert!(said.contains("files were written"), "{said}");
    assert!(w.home.join(".claude/settings.json").exists());
    // Off a terminal it writes and says what, without asking.
    let out = install_sh(&w, &["--from-source", "--bin-dir", bin.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("[y/N]"));
}

#[test]
fn install_sh_build_script_with_require_static_fails_where_it_would_fall_back() {
    // CI's static-helper job asks for the static msd_run: a missing libc.a is then an error, not
    // a dynamic helper and a note, and nothing is built after it.
    let w = World::new();
    let cmd = install_sh(&w, &[]);
    let out = std::process::Command::new("/bin/bash")
        .arg(crate::support::repo().join("scripts/build-release.sh"))
        .args(["--helper-only", "--require-static"])
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("FAKE_NO_LIBC_A", "1")
        .current_dir(&w.project)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error: msd_run was not linked static, and --require-static was given"), "{err}");
    assert_eq!(cargo_log(&w), "", "nothing was built: {err}");
}
