//! `msd-install self-update` against a `file://` release directory the test lays out as a
//! cargo-dist release (dist-manifest.json, a .tar.gz per platform, its .sha256): a newer release
//! replaces both binaries and installs again; the same or an older one changes nothing; a bad
//! checksum, a damaged archive or no archive for this platform leave the old binaries working;
//! an unreachable channel names the URL; a binary from a package manager points to it.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::support::World;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Bytes appended to the release's binaries: an executable still runs with them at its end, and
/// they tell the new binaries from the old.
const NEWER: &[u8] = b"\nmsd-test: the newer release\n";

/// A copy of the built binaries in `<tmp>/bin`, so the test's own build is never replaced.
fn binaries(w: &World) -> PathBuf {
    let bin = w.tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["msd-install", "msd_run"] {
        crate::support::copy_executable(&assert_cmd::cargo::cargo_bin(name), &bin.join(name));
    }
    bin
}

/// Runs `<bin>/msd-install args` in `w`.
fn run(w: &World, bin: &Path, args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin.join("msd-install"));
    w.isolate(&mut cmd);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// This build's target triple, as `--version --json` names it.
fn target(w: &World, bin: &Path) -> String {
    let out = run(w, bin, &["--version", "--json"], &[]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["target"].as_str().unwrap().to_string()
}

/// How a test release differs from a good one.
#[derive(Clone, Copy, PartialEq)]
enum Flaw {
    None,
    Checksum,
    Damaged,
    OtherPlatform,
}

/// The archive format of a test release (dist-workspace.toml: .tar.gz on Unix, .zip on
/// Windows; .tar.xz is dist's default, which msd does not ship).
#[derive(Clone, Copy, PartialEq)]
enum Format {
    TarGz,
    Zip,
    TarXz,
}

/// Lays out a release of `version` for `triple` in `<tmp>/release-<version>`; returns its URL.
fn release(w: &World, version: &str, triple: &str, flaw: Flaw) -> String {
    release_as(w, version, triple, flaw, Format::TarGz)
}

/// The binaries of a release: the built ones with [`NEWER`] at their end.
fn newer_binaries() -> Vec<(&'static str, Vec<u8>)> {
    ["msd-install", "msd_run"]
        .into_iter()
        .map(|bin| {
            let mut bytes = std::fs::read(assert_cmd::cargo::cargo_bin(bin)).unwrap();
            bytes.extend_from_slice(NEWER);
            (bin, bytes)
        })
        .collect()
}

/// The archive of [`newer_binaries`] under `msd-install-<triple>/`: a .zip, else a .tar.gz (also
/// the bytes of the .tar.xz case, refused by its name before it is read). Built once per process
/// and format: compressing the debug binaries (78 MB) was most of these tests' CPU, and every
/// release of one format holds the same bytes; deflate at level 1, which msd reads as any other.
fn archive_of(triple: &str, zip: bool) -> std::sync::Arc<Vec<u8>> {
    type Cache = std::sync::Mutex<std::collections::HashMap<(String, bool), std::sync::Arc<Vec<u8>>>>;
    static ARCHIVES: std::sync::OnceLock<Cache> = std::sync::OnceLock::new();
    let mut cache = ARCHIVES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let built = cache.entry((triple.to_string(), zip)).or_insert_with(|| {
        let archive = if zip {
            let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            let options = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .compression_level(Some(1))
                .unix_permissions(0o755);
            for (bin, bytes) in newer_binaries() {
                zip.start_file(format!("msd-install-{triple}/{bin}"), options).unwrap();
                zip.write_all(&bytes).unwrap();
            }
            zip.finish().unwrap().into_inner()
        } else {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            {
                let mut tar = tar::Builder::new(&mut gz);
                for (bin, bytes) in newer_binaries() {
                    let mut header = tar::Header::new_gnu();
                    header.set_size(bytes.len() as u64);
                    header.set_mode(0o755);
                    header.set_cksum();
                    tar.append_data(&mut header, format!("msd-install-{triple}/{bin}"), &bytes[..]).unwrap();
                }
                tar.finish().unwrap();
            }
            gz.finish().unwrap()
        };
        std::sync::Arc::new(archive)
    });
    built.clone()
}

/// [`release`] with its archive in `format`.
fn release_as(w: &World, version: &str, triple: &str, flaw: Flaw, format: Format) -> String {
    let dir = w.tmp.path().join(format!("release-{version}-{}-{}", flaw as u8, format as u8));
    std::fs::create_dir_all(&dir).unwrap();
    let triple = if flaw == Flaw::OtherPlatform { "riscv64gc-unknown-linux-gnu" } else { triple };
    let suffix = match format {
        Format::TarGz => "tar.gz",
        Format::Zip => "zip",
        Format::TarXz => "tar.xz",
    };
    let name = format!("msd-install-{triple}.{suffix}");
    let built = if flaw == Flaw::Damaged {
        std::sync::Arc::new(b"this is not a gzip stream".to_vec())
    } else {
        archive_of(triple, format == Format::Zip)
    };
    let archive: &[u8] = &built;
    std::fs::write(dir.join(&name), archive).unwrap();
    let sha = if flaw == Flaw::Checksum { "0".repeat(64) } else { crate::support::sha256(archive) };
    let mut f = std::fs::File::create(dir.join(format!("{name}.sha256"))).unwrap();
    writeln!(f, "{sha} *{name}").unwrap();
    let manifest = serde_json::json!({
        "dist_version": "0.33.0",
        "announcement_tag": format!("v{version}"),
        "releases": [{"app_name": "msd-install", "app_version": version, "artifacts": [name, format!("{name}.sha256")]}],
        "artifacts": {
            name.clone(): {
                "name": name, "kind": "executable-zip", "target_triples": [triple],
                "checksum": format!("{name}.sha256"),
            },
            format!("{name}.sha256"): {"name": format!("{name}.sha256"), "kind": "checksum", "target_triples": [triple]},
        },
    });
    std::fs::write(dir.join("dist-manifest.json"), serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    format!("file://{}", dir.display())
}

fn is_newer(path: &Path) -> bool {
    std::fs::read(path).unwrap().ends_with(NEWER)
}

/// Both binaries are the ones the test started with, and they still run.
fn unchanged(w: &World, bin: &Path) {
    for name in ["msd-install", "msd_run"] {
        assert!(
            std::fs::read(bin.join(name)).unwrap() == std::fs::read(assert_cmd::cargo::cargo_bin(name)).unwrap(),
            "{name} was not replaced"
        );
    }
    assert!(run(w, bin, &["--version"], &[]).status.success());
    let names: Vec<_> = std::fs::read_dir(bin).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no staged file is left behind: {names:?}");
}

#[test]
fn self_update_a_newer_release_replaces_both_binaries_and_installs_again() {
    let w = World::new();
    let bin = binaries(&w);
    assert!(run(&w, &bin, &["-r", "claude", "-q"], &[]).status.success());
    assert!(run(&w, &bin, &["-r", "gemini", "--local", "-q"], &[]).status.success());
    let url = release(&w, "99.0.0", &target(&w, &bin), Flaw::None);
    let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url.clone())]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(&format!("msd-install: {VERSION} -> 99.0.0 ({url}/msd-install-")), "{stdout}");
    assert!(stdout.contains("sha256 verified") && stdout.contains("CHANGELOG.md"), "{stdout}");
    assert!(stdout.contains("installing again the 2 install(s)"), "{stdout}");
    assert!(is_newer(&bin.join("msd-install")) && is_newer(&bin.join("msd_run")), "both replaced");
    assert!(run(&w, &bin, &["--version"], &[]).status.success(), "the new binary runs");
    // Installing again copied the new helper into each install.
    assert!(is_newer(&w.home.join(".claude/msd-core/bin/msd_run")), "the global install follows");
    assert!(is_newer(&w.project.join(".gemini/msd-core/bin/msd_run")), "the local install follows");
    let names: Vec<_> = std::fs::read_dir(&bin).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "no staged file is left behind: {names:?}");
}

#[test]
fn self_update_the_same_or_an_older_release_changes_nothing() {
    let w = World::new();
    let bin = binaries(&w);
    let triple = target(&w, &bin);
    for (version, says) in [(VERSION, "is the newest release"), ("0.0.1", "the release channel has 0.0.1, older")] {
        let url = release(&w, version, &triple, Flaw::None);
        let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains(says), "{}", text(&out.stdout));
        unchanged(&w, &bin);
    }
    let url = release(&w, VERSION, &triple, Flaw::None);
    let out = run(&w, &bin, &["self-update", "--json"], &[("MSD_INSTALL_RELEASE_URL", url)]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["updated"].as_bool(), doc["latest"].as_str()), (Some(false), Some(VERSION)), "{doc}");
}

#[test]
fn self_update_a_bad_release_leaves_the_old_binaries_working() {
    let w = World::new();
    let bin = binaries(&w);
    let triple = target(&w, &bin);
    for (flaw, says) in [
        (Flaw::Checksum, "does not match the published 0000"),
        (Flaw::Damaged, "a damaged archive (invalid gzip header)"),
        (Flaw::OtherPlatform, &format!("has no archive for this platform ({triple}); it has: riscv64gc")),
    ] {
        let url = release(&w, "99.0.0", &triple, flaw);
        let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(8), "{stderr}");
        assert!(stderr.contains(says), "{says}\n{stderr}");
        unchanged(&w, &bin);
    }
}

#[test]
fn self_update_reads_the_archive_format_the_dist_manifest_names() {
    let w = World::new();
    let bin = binaries(&w);
    let triple = target(&w, &bin);

    // A .tar.xz (dist's default, which msd does not ship) is refused by name, before a download.
    let url = release_as(&w, "99.0.0", &triple, Flaw::None, Format::TarXz);
    let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains(".tar.xz: self-update reads .tar.gz and .zip archives"), "{stderr}");
    unchanged(&w, &bin);

    // A damaged .zip (the Windows archive) leaves the old binaries.
    let url = release_as(&w, "99.0.0", &triple, Flaw::Damaged, Format::Zip);
    let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("not a .zip archive"), "{stderr}");
    unchanged(&w, &bin);

    // A .zip, whatever this platform is: the manifest's name of the archive decides.
    let url = release_as(&w, "99.0.0", &triple, Flaw::None, Format::Zip);
    let out = run(&w, &bin, &["self-update", "--no-reinstall"], &[("MSD_INSTALL_RELEASE_URL", url.clone())]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(&format!("({url}/msd-install-{triple}.zip, sha256 verified)")), "{stdout}");
    assert!(is_newer(&bin.join("msd-install")) && is_newer(&bin.join("msd_run")), "both replaced from the .zip");
    assert!(run(&w, &bin, &["--version"], &[]).status.success(), "the new binary runs");
}

#[test]
fn self_update_an_unreachable_channel_names_the_url() {
    let w = World::new();
    let bin = binaries(&w);
    let missing = format!("file://{}/no-such-release", w.tmp.path().display());
    // Port 9 (discard) on the loopback: nothing listens, the connection is refused at once.
    for url in [missing, "http://127.0.0.1:9/releases".to_string(), "ftp://example.invalid/x".to_string()] {
        let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url.clone())]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(7), "{url}: {stderr}");
        assert!(stderr.contains(&format!("{url}/dist-manifest.json")), "{url}: {stderr}");
        unchanged(&w, &bin);
    }
}

#[test]
fn self_update_a_package_managers_binary_gets_its_update_command() {
    let w = World::new();
    let bin = binaries(&w);
    let url = release(&w, "99.0.0", &target(&w, &bin), Flaw::None);
    for (marker, command) in [
        ("npm", "npm install -g msd-install@latest"),
        ("pypi", "uv tool upgrade msd-install"),
        ("homebrew", "brew upgrade msd-install"),
        ("cargo", "cargo install --locked msd-install"),
        ("plugin", "claude plugin update msd-core@msd-core"),
    ] {
        std::fs::write(bin.join("msd-install.channel"), format!("{marker}\n")).unwrap();
        let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url.clone())]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{marker}: {stderr}");
        assert!(stderr.contains(command), "{marker}: {stderr}");
        std::fs::remove_file(bin.join("msd-install.channel")).unwrap();
        unchanged(&w, &bin);
    }
    // By its path alone: npm's node_modules.
    let npm = w.tmp.path().join("prefix/lib/node_modules/msd-install-linux-x64/bin");
    std::fs::create_dir_all(&npm).unwrap();
    for name in ["msd-install", "msd_run"] {
        crate::support::copy_executable(&bin.join(name), &npm.join(name));
    }
    let out = run(&w, &npm, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("installed by npm"), "{}", text(&out.stderr));
}

#[test]
fn self_update_a_failed_write_keeps_the_old_binaries() {
    let w = World::new();
    let bin = binaries(&w);
    let url = release(&w, "99.0.0", &target(&w, &bin), Flaw::None);
    // A directory where the new msd_run is staged: the write fails before anything is replaced.
    std::fs::create_dir_all(bin.join(".msd_run.new/x")).unwrap();
    let out = run(&w, &bin, &["self-update"], &[("MSD_INSTALL_RELEASE_URL", url)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("the old msd-install and msd_run were kept"), "{stderr}");
    std::fs::remove_dir_all(bin.join(".msd_run.new")).unwrap();
    unchanged(&w, &bin);
}
