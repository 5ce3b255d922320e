//! The release channel of `msd-install self-update`: where releases are read from
//! (`MSD_INSTALL_RELEASE_URL`, else the repository's releases), which package manager installed
//! a binary, the dist manifest of a release (cargo-dist's layout: `dist-manifest.json`, one
//! archive per platform with its `.sha256`: `msd-install-<target>.tar.gz`, `.zip` on Windows;
//! the manifest's name of it says which), the archive's two binaries,
//! and their replacement on disk. No printing: `commands::self_update` says what happened.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli::version;
use msd_core::fs::fsx::{self, FileMode};

/// The variable naming the release channel.
pub(crate) const RELEASE_URL_ENV: &str = "MSD_INSTALL_RELEASE_URL";
/// The file a package puts beside the binary, naming the channel that installed it (`npm`,
/// `pypi`, `homebrew`, `cargo`, `plugin`).
pub(crate) const CHANNEL_MARKER: &str = "msd-install.channel";
/// The largest download accepted (a release archive is a few MiB).
const MAX_DOWNLOAD: u64 = 256 * 1024 * 1024;

/// The channels that update msd-install themselves: id, what it is, its update command, and the
/// path components that give it away when no marker says so.
const MANAGED: &[(&str, &str, &str, &[&str])] = &[
    ("npm", "npm", "npm install -g msd-install@latest (npx msd-install@latest runs the newest)", &["node_modules"]),
    (
        "pypi",
        "PyPI",
        "uv tool upgrade msd-install (or: pipx upgrade msd-install; pip install -U msd-install)",
        &["site-packages", "pipx", "uv/tools"],
    ),
    ("homebrew", "Homebrew", "brew upgrade msd-install", &["Cellar", "homebrew", "linuxbrew"]),
    ("cargo", "cargo install", "cargo install --locked msd-install", &[]),
    (
        "plugin",
        "the Claude Code plugin",
        "claude plugin marketplace update msd-core && claude plugin update msd-core@msd-core",
        &[".claude/plugins"],
    ),
];

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SelfUpdateError {
    /// The channel could not be read (offline, a bad URL, a missing file).
    #[error("could not read the release channel at {url}: {reason}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// Why.
        reason: String,
    },
    /// The release has no archive for this platform.
    #[error("the release {version} at {url} has no archive for this platform ({target}); it has: {available}")]
    NoArchive {
        /// The manifest's URL.
        url: String,
        /// The release's version.
        version: String,
        /// This build's target triple.
        target: String,
        /// The targets it has.
        available: String,
    },
    /// The archive's bytes are not the ones the release published.
    #[error("{url}: sha256 {actual} does not match the published {expected}; nothing was replaced")]
    Checksum {
        /// The archive's URL.
        url: String,
        /// The published digest.
        expected: String,
        /// The digest of what was downloaded.
        actual: String,
    },
    /// The release is unusable: a manifest that does not parse, an archive that cannot be read.
    #[error("{url}: {reason}; nothing was replaced")]
    BadRelease {
        /// What was read.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// Writing the new binaries failed; the old ones are in place.
    #[error("replacing {path}: {source}; the old msd-install and msd_run were kept")]
    Replace {
        /// The binary being written.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// Another channel installed this binary.
    #[error("this msd-install ({exe}) was installed by {channel}, which updates it; nothing was changed")]
    OtherChannel {
        /// The running binary.
        exe: PathBuf,
        /// The channel.
        channel: &'static str,
        /// Its update command.
        command: &'static str,
    },
    /// The binaries were updated but installing again failed.
    #[error("msd-install was updated to {version}, but installing again failed for: {failed}")]
    Reinstall {
        /// The new version.
        version: String,
        /// `claude (global)`, ...
        failed: String,
    },
}

impl SelfUpdateError {
    /// What to do.
    pub(crate) fn hint(&self) -> String {
        match self {
            SelfUpdateError::Unreachable { .. } => format!(
                "check the network, or point {RELEASE_URL_ENV} at a release directory (https://... or file:///path/to/release)"
            ),
            SelfUpdateError::NoArchive { .. } => {
                "build from source (`cargo install --locked msd-install`, or ./install.sh --from-source)".into()
            }
            SelfUpdateError::Checksum { .. } | SelfUpdateError::BadRelease { .. } => {
                "the download is damaged or the release is incomplete: try again later, or download it by hand".into()
            }
            SelfUpdateError::Replace { .. } => {
                "make the directory of msd-install writable (or run as its owner) and run self-update again".into()
            }
            SelfUpdateError::OtherChannel { command, .. } => format!("run: {command}"),
            SelfUpdateError::Reinstall { .. } => {
                "run `msd-install status` and install the failed targets again (`msd-install -r ID`)".into()
            }
        }
    }
}

/// The channel's base URL, without a trailing slash.
pub(crate) fn channel_base() -> String {
    match std::env::var(RELEASE_URL_ENV) {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_string(),
        _ => format!("{}/releases/latest/download", env!("CARGO_PKG_REPOSITORY").trim_end_matches('/')),
    }
}

/// The package manager that installed `exe`, if any: the marker beside it, else its path
/// (npm's node_modules, a Python environment, Homebrew's Cellar, the plugin cache), else
/// cargo's own record of installed crates.
pub(crate) fn managed_by(exe: &Path) -> Option<(&'static str, &'static str, &'static str, &'static [&'static str])> {
    let dir = exe.parent()?;
    if let Ok(Some(bytes)) = fsx::read_if_exists(&dir.join(CHANNEL_MARKER)) {
        let id = String::from_utf8_lossy(&bytes).trim().to_ascii_lowercase();
        if let Some(m) = MANAGED.iter().find(|m| m.0 == id) {
            return Some(*m);
        }
    }
    let path = exe.to_string_lossy().replace('\\', "/");
    if let Some(m) = MANAGED.iter().find(|m| m.3.iter().any(|p| path.contains(&format!("/{p}/")))) {
        return Some(*m);
    }
    let cargo_home =
        std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))?;
    let ours = fsx::canonicalize(&cargo_home.join("bin")).ok().is_some_and(|b| b == dir);
    let listed = fsx::read_if_exists(&cargo_home.join(".crates2.json"))
        .ok()
        .flatten()
        .is_some_and(|b| String::from_utf8_lossy(&b).contains("\"msd-install "));
    (ours && listed).then(|| *MANAGED.iter().find(|m| m.0 == "cargo").expect("listed"))
}

/// Reads `url`: a `file://` path, or over http(s).
pub(crate) fn fetch(url: &str) -> Result<Vec<u8>, SelfUpdateError> {
    let fail = |reason: String| SelfUpdateError::Unreachable { url: url.to_string(), reason };
    if let Some(path) = url.strip_prefix("file://") {
        return fsx::read(Path::new(path)).map_err(|e| fail(e.to_string()));
    }
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(fail("not a file://, https:// or http:// URL".into()));
    }
    let response = ureq::get(url).call().map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    response.into_body().into_reader().take(MAX_DOWNLOAD).read_to_end(&mut bytes).map_err(|e| fail(e.to_string()))?;
    Ok(bytes)
}

/// A release as its manifest describes it.
pub(crate) struct Release {
    pub(crate) version: String,
    /// This platform's archive.
    pub(crate) archive: Option<Archive>,
    /// Every target the release has an archive for.
    pub(crate) targets: Vec<String>,
}

/// This platform's archive of a release.
pub(crate) struct Archive {
    pub(crate) name: String,
    /// The digest inlined in the manifest, when it is.
    pub(crate) sha256: Option<String>,
    /// The checksum file beside the archive.
    pub(crate) checksum_file: String,
}

/// Reads the dist manifest: msd-install's release, its version and this platform's archive.
pub(crate) fn read_release(base: &str, url: &str) -> Result<Release, SelfUpdateError> {
    let bytes = fetch(url)?;
    let bad = |reason: &str| SelfUpdateError::BadRelease { url: url.to_string(), reason: reason.to_string() };
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| bad(&format!("not a dist manifest ({e})")))?;
    let release = doc["releases"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["app_name"] == "msd-install"))
        .ok_or_else(|| bad("no msd-install release in the manifest"))?;
    let version = release["app_version"].as_str().ok_or_else(|| bad("the release has no app_version"))?.to_string();
    let mut targets = Vec::new();
    let mut archive = None;
    let ids = release["artifacts"].as_array().cloned().unwrap_or_default();
    for id in ids.iter().filter_map(Value::as_str) {
        let a = &doc["artifacts"][id];
        if a["kind"] != "executable-zip" {
            continue;
        }
        let triples: Vec<&str> =
            a["target_triples"].as_array().map(|t| t.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        targets.extend(triples.iter().map(|t| t.to_string()));
        if triples.contains(&version::TARGET) {
            let name = a["name"].as_str().unwrap_or(id).to_string();
            if ArchiveFormat::of(&name).is_none() {
                return Err(SelfUpdateError::BadRelease {
                    url: format!("{base}/{name}"),
                    reason: format!(
                        "self-update reads {} archives, and this one is none of them",
                        ArchiveFormat::NAMES
                    ),
                });
            }
            archive = Some(Archive {
                sha256: a["checksums"]["sha256"].as_str().map(str::to_ascii_lowercase),
                checksum_file: a["checksum"].as_str().map_or_else(|| format!("{name}.sha256"), str::to_string),
                name,
            });
        }
    }
    Ok(Release { version, archive, targets })
}

/// The archive formats a release ships, by the suffix of the archive's name in the dist
/// manifest (dist-workspace.toml: `unix-archive` .tar.gz, `windows-archive` .zip). Whatever the
/// manifest names is read, on every platform: the platform decides nothing here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchiveFormat {
    /// A gzipped tarball.
    TarGz,
    /// A zip archive (deflated or stored entries).
    Zip,
}

impl ArchiveFormat {
    /// The suffixes read, for messages.
    const NAMES: &str = ".tar.gz and .zip";

    /// The format of the archive called `name`, if it is one self-update reads.
    pub(crate) fn of(name: &str) -> Option<ArchiveFormat> {
        let name = name.to_ascii_lowercase();
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if name.ends_with(".zip") {
            Some(ArchiveFormat::Zip)
        } else {
            None
        }
    }
}

/// The two binaries of the release archive at `url` (its format from its name), by file name
/// anywhere in it.
pub(crate) fn unpack(url: &str, bytes: &[u8]) -> Result<[(&'static str, Vec<u8>); 2], SelfUpdateError> {
    let bad = |reason: String| SelfUpdateError::BadRelease { url: url.to_string(), reason };
    let names = binary_names();
    let found = match ArchiveFormat::of(url) {
        Some(ArchiveFormat::TarGz) => unpack_tar_gz(bytes, &names).map_err(bad)?,
        Some(ArchiveFormat::Zip) => unpack_zip(bytes, &names).map_err(bad)?,
        None => {
            return Err(bad(format!(
                "self-update reads {} archives, and this one is none of them",
                ArchiveFormat::NAMES
            )));
        }
    };
    let [Some(install), Some(run)] = found else {
        return Err(bad(format!("the archive lacks {} or {}", names[0], names[1])));
    };
    Ok([(names[0], install), (names[1], run)])
}

/// The entries called `names` of a zip archive.
fn unpack_zip(bytes: &[u8], names: &[&str; 2]) -> Result<[Option<Vec<u8>>; 2], String> {
    let mut found: [Option<Vec<u8>>; 2] = [None, None];
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("not a .zip archive ({e})"))?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(|e| format!("a damaged archive ({e})"))?;
        let Some(path) = entry.enclosed_name() else { continue };
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if let Some(i) = names.iter().position(|n| *n == name) {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).map_err(|e| format!("a damaged archive ({e})"))?;
            found[i] = Some(data);
        }
    }
    Ok(found)
}

/// The entries called `names` of a gzipped tarball.
fn unpack_tar_gz(bytes: &[u8], names: &[&str; 2]) -> Result<[Option<Vec<u8>>; 2], String> {
    let bad = |reason: String| reason;
    let mut found: [Option<Vec<u8>>; 2] = [None, None];
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let entries = archive.entries().map_err(|e| bad(format!("not a .tar.gz archive ({e})")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("a damaged archive ({e})")))?;
        let path = entry.path().map_err(|e| bad(format!("a damaged archive ({e})")))?.into_owned();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if let Some(i) = names.iter().position(|n| *n == name) {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).map_err(|e| bad(format!("a damaged archive ({e})")))?;
            found[i] = Some(data);
        }
    }
    Ok(found)
}

/// `msd-install` and `msd_run`, with this platform's executable suffix.
pub(crate) fn binary_names() -> [&'static str; 2] {
    if cfg!(windows) { ["msd-install.exe", "msd_run.exe"] } else { ["msd-install", "msd_run"] }
}

/// Puts both binaries into `dir`: each staged beside its destination, then renamed over it,
/// `msd_run` first; when the second rename fails, the first binary's old bytes go back.
pub(crate) fn replace(dir: &Path, binaries: &[(&'static str, Vec<u8>); 2]) -> Result<(), SelfUpdateError> {
    let fail = |path: &Path, source: std::io::Error| SelfUpdateError::Replace { path: path.to_path_buf(), source };
    let [(install_name, install), (run_name, run)] = binaries;
    let (install_dest, run_dest) = (dir.join(install_name), dir.join(run_name));
    let (install_new, run_new) = (dir.join(format!(".{install_name}.new")), dir.join(format!(".{run_name}.new")));
    let run_old = fsx::read_if_exists(&run_dest).map_err(|e| fail(&run_dest, e))?;
    let cleanup = || {
        let _ = fsx::remove_file_if_exists(&install_new);
        let _ = fsx::remove_file_if_exists(&run_new);
    };
    let staged = fsx::write_atomic(&run_new, run, FileMode::Executable).map_err(|e| fail(&run_new, e)).and_then(|()| {
        fsx::write_atomic(&install_new, install, FileMode::Executable).map_err(|e| fail(&install_new, e))
    });
    if let Err(e) = staged {
        cleanup();
        return Err(e);
    }
    if let Err(e) = fsx::rename(&run_new, &run_dest) {
        cleanup();
        return Err(fail(&run_dest, e));
    }
    if let Err(e) = fsx::rename(&install_new, &install_dest) {
        match &run_old {
            Some(old) => {
                let _ = fsx::write_atomic(&run_dest, old, FileMode::Executable);
            }
            None => {
                let _ = fsx::remove_file_if_exists(&run_dest);
            }
        }
        cleanup();
        return Err(fail(&install_dest, e));
    }
    Ok(())
}
