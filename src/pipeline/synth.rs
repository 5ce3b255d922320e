//! Files the installer adds to every emission beside the converted content: the runtime helper
//! `<core>/bin/msd_run`, `<core>/resolvers.json` and `<core>/runtime.json`.
//!
//! Why a step of its own: these files come from the build and from the manifest, not from
//! `content/`, so they are neither converted nor rewritten nor held to the content caps (the
//! pipeline adds them after the guard). Content calls the helper as
//! `~/.claude/msd-core/bin/msd_run`, which the rewriter turns into each runtime's installed path.
//!
//! Input: one [`Emission`] and its [`Capability`]. Output: the same emission with
//! `<core>/bin/msd_run` (mode 0755, the bytes of the msd_run binary built with this msd-install)
//! , `<core>/resolvers.json` (the manifest's resolvers, an empty list when it has none) and
//! `<core>/runtime.json` ([`RuntimeInfo`]: the manifest's `command_ref`, and whether the scope's
//! layout installs agents the runtime loads itself, which decides what `query agent-skills`
//! prints).
//!
//! The binary is the `msd_run` next to the running msd-install (`std::env::current_exe()`'s
//! directory), or the file [`MSD_RUN_BIN_ENV`] names. It is hashed once per process and copied
//! from its file into every runtime's tree, never held in memory. A content file at either path
//! is a collision error, never overwritten.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::pipeline::convert::{Bytes, ConvertError, Emission, EmittedFile, FileKind, js_plugin};
use msd_core::fs::fsx::FileMode;
use msd_core::fs::relpath::RelPath;
use msd_core::installed::runtime_info::{HostHelpers, RUNTIME_INFO_PATH, RuntimeInfo};
use msd_core::manifest::capability::{ArtifactKind, Capability, Scope};
use msd_core::manifest::resolver::{self, Installed};
use msd_core::manifest::surfaces::{self, HookFileFormat};
use msd_core::shell::Os;

/// Environment variable naming the msd_run binary to install (default: beside msd-install).
pub const MSD_RUN_BIN_ENV: &str = "MSD_RUN_BIN";

/// Where the helper lands on `os`, relative to the core dir: `bin/msd_run`, `bin/msd_run.exe`
/// on Windows.
pub fn helper_path(os: Os) -> RelPath {
    RelPath::new(format!("bin/{}", msd_core::shell::helper_file(os))).expect("static path")
}

/// The msd_run binary cannot be found or read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot read the msd_run binary to install at {path}: {message}")]
pub struct HelperError {
    /// Where it was looked for.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl HelperError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        format!(
            "msd-install installs the msd_run built with it: build both (`cargo build --release` builds both into target/release/), keep them in one directory, or set {MSD_RUN_BIN_ENV} to the msd_run to install"
        )
    }
}

fn locate() -> Result<PathBuf, HelperError> {
    if let Some(p) = std::env::var_os(MSD_RUN_BIN_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| HelperError { path: "<current executable>".into(), message: e.to_string() })?;
    let dir = exe.parent().ok_or_else(|| HelperError {
        path: exe.display().to_string(),
        message: "the running executable has no directory".into(),
    })?;
    Ok(dir.join(format!("msd_run{}", std::env::consts::EXE_SUFFIX)))
}

/// Where the msd_run binary to install is (not checked).
pub fn helper_location() -> Result<PathBuf, HelperError> {
    locate()
}

/// The msd_run binary to install: hashed once per process, then copied from its file into each
/// tree that receives it (hard-linked after the first), never held in memory
/// ([`Bytes::from_file`]).
pub fn helper_bytes() -> Result<Bytes, HelperError> {
    static BYTES: OnceLock<Result<Bytes, HelperError>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let path = locate()?;
            let err = |message: String| HelperError { path: path.display().to_string(), message };
            // One look at the file: its length and kind, then its hash.
            Bytes::from_file(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => err("no such file".into()),
                _ => err(e.to_string()),
            })
        })
        .clone()
}

/// Adds the synthesized files to `emission`.
pub fn add(emission: &mut Emission, cap: &Capability, manifest_source: &str) -> Result<(), SynthError> {
    let helper = helper_bytes()?;
    let resolvers = Installed { schema_version: 1, runtime: cap.id.clone(), resolvers: cap.resolvers.clone() };
    let manifest_source = format!("runtimes/{manifest_source}");
    let helper_at = cap.core_dir(emission.scope).join(&helper_path(Os::HOST));
    let hook_files: Vec<EmittedFile> = cap
        .hook_files
        .iter()
        .filter(|h| h.scopes.contains(&emission.scope))
        .map(|h| {
            let mut sources = vec![manifest_source.clone()];
            let (text, mode) = match h.format {
                HookFileFormat::Script => (surfaces::hook_script(h, &helper_at), FileMode::Executable),
                HookFileFormat::JsPlugin | HookFileFormat::PiExtension => {
                    sources.extend(js_plugin::template_sources(h.format).map(String::from));
                    (js_plugin::render(h, &helper_at), FileMode::Regular)
                }
            };
            EmittedFile {
                path: h.path.clone(),
                bytes: text.into_bytes().into(),
                mode,
                kind: FileKind::Program,
                sources,
            }
        })
        .collect();
    let info = RuntimeInfo {
        schema_version: 1,
        runtime: cap.id.clone(),
        scope: emission.scope.as_str().into(),
        command_ref: cap.command_ref.clone(),
        agents_native: cap.layout(emission.scope).iter().any(|a| a.kind == ArtifactKind::Agents),
        local_helper: local_helper(cap, emission.scope),
        hook_hosts: cap.hook_hosts.iter().map(HostHelpers::from).collect(),
    };
    let files = [
        EmittedFile {
            path: cap.core_dir(emission.scope).join(&helper_path(Os::HOST)),
            // One file for every runtime's copy.
            bytes: helper.clone(),
            mode: FileMode::Executable,
            kind: FileKind::Program,
            sources: vec!["src/bin/msd_run.rs".into()],
        },
        EmittedFile {
            path: cap.core_dir(emission.scope).join(&RelPath::new(resolver::INSTALLED_PATH).expect("static")),
            bytes: resolvers.render().into_bytes().into(),
            mode: FileMode::Regular,
            kind: FileKind::Core,
            sources: vec![manifest_source.clone()],
        },
        EmittedFile {
            path: cap.core_dir(emission.scope).join(&RelPath::new(RUNTIME_INFO_PATH).expect("static")),
            bytes: info.render().into_bytes().into(),
            mode: FileMode::Regular,
            kind: FileKind::Core,
            sources: vec![manifest_source],
        },
    ];
    for f in files.into_iter().chain(hook_files) {
        if let Some(existing) = emission.files.iter().find(|e| e.path == f.path) {
            return Err(SynthError::Convert(ConvertError::PathCollision {
                runtime: cap.id.clone(),
                path: f.path.to_string(),
                first: existing.sources.first().cloned().unwrap_or_default(),
                second: f.sources[0].clone(),
            }));
        }
        emission.files.push(f);
    }
    emission.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(())
}

/// Where a global install's helper finds its project twin: the helper of a local install,
/// relative to the project root (`.opencode/msd-core/bin/msd_run`), when the runtime has a local
/// scope. Its global home need not mirror it (`~/.config/opencode` against `.opencode`).
fn local_helper(cap: &Capability, scope: Scope) -> Option<String> {
    let local = cap.local.as_ref().filter(|_| scope == Scope::Global)?;
    let rel = cap.core_dir(Scope::Local).join(&helper_path(Os::HOST));
    Some(match local.dir.trim_matches('/') {
        "" | "." => rel.to_string(),
        dir => format!("{dir}/{rel}"),
    })
}

/// Errors of this step.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The helper binary is missing.
    #[error(transparent)]
    Helper(#[from] HelperError),
    /// A content file sits where a synthesized file goes.
    #[error(transparent)]
    Convert(#[from] ConvertError),
}
