//! The release archives' msd_run is linked static on Linux with glibc, as a source build's is:
//! cargo-dist builds both binaries in one `cargo build`, and the release workflow makes
//! scripts/static-helper-rustc its RUSTC_WRAPPER (.github/build-setup.yml). The wrapper adds the
//! static flag to the msd_run binary's compilation only, passes every other compilation through,
//! and fails the build where a release would otherwise ship a dynamic or NSS-calling helper.
//! `rustc`, `nm` and `readelf` are stand-ins: the "binary" the stand-in rustc links says whether
//! it got the flag, so every branch runs in milliseconds (the real link: CI's `static-helper` job
//! builds the release binaries through the wrapper and checks them).

use std::path::{Path, PathBuf};
use std::process::Output;

/// A directory with a `rustc` that logs its arguments to `rustc.log` beside it, answers `-vV`
/// with host FAKE_HOST (default x86_64-unknown-linux-gnu), and for `--emit=...link...` writes
/// `<out-dir>/<crate-name><extra-filename>`: `INTERP` unless it was given crt-static (or
/// FAKE_IGNORES_FLAG is set), plus FAKE_NSS's line; a link with crt-static fails when
/// FAKE_STATIC_LINK_FAILS is set. `nm FILE` and `readelf -lW FILE` print the file.
fn stand_ins(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let rustc = format!(
        r#"#!/bin/sh
if [ "$1" = -vV ]; then echo 'rustc 1.95.0 (fake)'; echo "host: ${{FAKE_HOST:-x86_64-unknown-linux-gnu}}"; exit 0; fi
echo "$*" >> '{log}'
name=; out=; extra=; emit=; static=; prev=
for a in "$@"; do
  case "$prev" in --crate-name) name=$a ;; --out-dir) out=$a ;; -C) case "$a" in extra-filename=*) extra=${{a#extra-filename=}} ;; target-feature=+crt-static) static=1 ;; esac ;; esac
  case "$a" in --emit=*) emit=$a ;; esac
  prev=$a
done
if [ -n "$static" ] && [ -n "${{FAKE_STATIC_LINK_FAILS:-}}" ]; then echo 'error: linking with `cc` failed' >&2; echo 'ld: cannot find -lc' >&2; exit 1; fi
case "$emit" in *link*) ;; *) exit 0 ;; esac
mkdir -p "$out"
if [ -z "$static" ] || [ -n "${{FAKE_IGNORES_FLAG:-}}" ]; then echo '  INTERP 0x318' > "$out/$name$extra"; else echo '  LOAD 0x0' > "$out/$name$extra"; fi
[ -n "${{FAKE_NSS:-}}" ] && echo "$FAKE_NSS" >> "$out/$name$extra"
exit 0
"#,
        log = dir.join("rustc.log").display()
    );
    let tools = [("rustc", rustc.as_str()), ("nm", "#!/bin/sh\ncat \"$1\"\n"), ("readelf", "#!/bin/sh\ncat \"$2\"\n")];
    for (name, script) in tools {
        std::fs::write(bin.join(name), script).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    bin
}

/// One compilation through the wrapper, as cargo runs it: `WRAPPER RUSTC ARGS...`.
fn compile(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (Output, String) {
    let bin = stand_ins(dir);
    let _ = std::fs::remove_file(dir.join("rustc.log"));
    let out_dir = dir.join("deps");
    let mut cmd = std::process::Command::new(crate::support::repo().join("scripts/static-helper-rustc"));
    cmd.arg(bin.join("rustc"))
        .args(args)
        .args(["-C", "extra-filename=-0123abcd", "--out-dir"])
        .arg(&out_dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out, std::fs::read_to_string(dir.join("rustc.log")).unwrap_or_default())
}

const HELPER_BIN: &[&str] =
    &["--crate-name", "msd_run", "--edition=2024", "src/bin/msd_run.rs", "--crate-type", "bin", "--emit=dep-info,link"];

#[test]
fn release_build_links_only_the_helper_binary_static_and_only_for_linux_gnu() {
    let tmp = tempfile::tempdir().unwrap();
    let flag = "-C target-feature=+crt-static";
    // (what is compiled, the host, gets the flag)
    let cases: [(Vec<&str>, &str, bool); 6] = [
        (HELPER_BIN.to_vec(), "x86_64-unknown-linux-gnu", true),
        ([HELPER_BIN, &["--target", "aarch64-unknown-linux-gnu"]].concat(), "x86_64-unknown-linux-gnu", true),
        // msd-install stays dynamic: it resolves host names, and its home lookup reads passwd.
        (
            vec!["--crate-name", "msd_install", "src/main.rs", "--crate-type", "bin", "--emit=dep-info,link"],
            "x86_64-unknown-linux-gnu",
            false,
        ),
        // crates/msd-run's library has the same crate name.
        (
            vec![
                "--crate-name",
                "msd_run",
                "crates/msd-run/src/lib.rs",
                "--crate-type",
                "lib",
                "--emit=dep-info,metadata,link",
            ],
            "x86_64-unknown-linux-gnu",
            false,
        ),
        ([HELPER_BIN, &["--target", "aarch64-apple-darwin"]].concat(), "x86_64-unknown-linux-gnu", false),
        (HELPER_BIN.to_vec(), "x86_64-unknown-linux-musl", false),
    ];
    for (args, host, static_) in cases {
        let (out, log) = compile(tmp.path(), &[("FAKE_HOST", host)], &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?} on {host}: {err}");
        assert_eq!(log.lines().count(), 1, "one compilation: {log}");
        assert!(log.starts_with(&args.join(" ")), "every argument passed on in order: {log}");
        assert_eq!(log.contains(flag), static_, "{args:?} on {host}: {log}");
        assert!(err.is_empty(), "nothing said: {err}");
    }
    // A check build links nothing: the flag is given, nothing is looked at.
    let (out, log) =
        compile(tmp.path(), &[], &["--crate-name", "msd_run", "--crate-type", "bin", "--emit=dep-info,metadata"]);
    assert!(out.status.success() && log.contains(flag), "{log}");
}

#[test]
fn release_build_the_release_workflow_and_the_wheel_build_through_the_wrapper() {
    // dist's build job (generated from .github/build-setup.yml; `.ci/dist-plan` fails when
    // release.yml is not what dist generates) and the channels job's maturin build of a Linux
    // glibc wheel both set the wrapper.
    let repo = crate::support::repo();
    let release = std::fs::read_to_string(repo.join(".github/workflows/release.yml")).unwrap();
    let setup = release
        .find("RUSTC_WRAPPER=$GITHUB_WORKSPACE/scripts/static-helper-rustc")
        .expect("release.yml sets the wrapper");
    let build = release.find("- name: Build artifacts").expect("release.yml builds the artifacts");
    assert!(setup < build, "the wrapper is set before dist's build");
    let packages = std::fs::read_to_string(repo.join(".ci/packages")).unwrap();
    assert!(
        packages.contains(r#"*-linux-gnu*) RUSTC_WRAPPER="$PWD/scripts/static-helper-rustc" maturin build"#),
        "the wheel's maturin build sets the wrapper on Linux glibc targets"
    );
}

#[test]
fn release_build_fails_rather_than_ship_a_dynamic_or_nss_calling_helper() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "FAKE_STATIC_LINK_FAILS",
            "1",
            &["cannot find -lc", "msd_run could not be linked static", "libc6-dev", "glibc-static"],
        ),
        ("FAKE_IGNORES_FLAG", "1", &["msd_run-0123abcd has a program interpreter: it was not linked static"]),
        ("FAKE_NSS", "0000000000002000 T getaddrinfo", &["msd_run now calls getaddrinfo", "NSS modules"]),
    ];
    for (k, v, says) in cases {
        let (out, _) = compile(tmp.path(), &[(k, v)], HELPER_BIN);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{k}: {err}");
        for s in says {
            assert!(err.contains(s), "{k}: says {s}: {err}");
        }
    }
    // The same NSS symbol in msd-install's binary is no concern of the wrapper.
    let (out, _) = compile(
        tmp.path(),
        &[("FAKE_NSS", "0000000000002000 T getaddrinfo")],
        &["--crate-name", "msd_install", "--crate-type", "bin", "--emit=dep-info,link"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
