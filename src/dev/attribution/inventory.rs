//! The emitted inventory: every file every runtime x scope receives, hashed, with its
//! provenance.
//!
//! Input: loaded content and manifests, and one [`Environment`] (attribution uses the fixed one
//! of `gen golden`, so both sides are emitted for the same home and no home normalisation is
//! needed). Output: an [`Inventory`]: per runtime and scope, each file's path, bytes, sha256,
//! kind and sources. `msd-install inventory` prints it as JSON; that document is also how
//! `attribution --base-binary` reads the base side from another build of msd-install.
//!
//! Invariants: emission goes through [`pipeline::emit_one`], the same path an install takes, so
//! the inventory is what users receive; runtimes sorted by id, scopes global then local, files
//! sorted by path; a runtime without a local scope contributes its global emission only.

use rayon::prelude::*;

use crate::pipeline;
use crate::pipeline::PipelineError;
use crate::pipeline::convert::FileKind;
use crate::pipeline::load::{Content, LoadedRuntime};
use crate::pipeline::target::Environment;
use msd_core::manifest::capability::Scope;

/// The `format` field of an inventory document.
pub(crate) const FORMAT: &str = "msd-emitted-inventory";
/// The `version` field of an inventory document.
pub(crate) const VERSION: u32 = 1;

/// Every emission of one content tree and set of manifests.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Inventory {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The msd-install version that emitted it.
    pub tool_version: String,
    /// The user home the emission was rewritten for.
    pub home: String,
    /// One entry per runtime x scope.
    pub emissions: Vec<EmissionEntry>,
}

/// What one runtime receives for one scope.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EmissionEntry {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Files, sorted by path.
    pub files: Vec<FileEntry>,
}

/// One emitted file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileEntry {
    /// Path relative to the runtime's home (or project, for local).
    pub path: String,
    /// Length of the emitted bytes.
    pub bytes: u64,
    /// Hex sha256 of the emitted bytes.
    pub sha256: String,
    /// What it is.
    pub kind: FileKind,
    /// Repository-relative sources, the primary content file first.
    pub sources: Vec<String>,
}

impl FileEntry {
    /// Whether the bytes are a built program's own ([`FileKind::Program`], the installed
    /// `msd_run`): no file of the repository explains them and any build changes them.
    pub(crate) fn is_build_output(&self) -> bool {
        self.kind == FileKind::Program
    }
}

impl Inventory {
    /// An inventory of nothing (a base without content or manifests).
    pub(crate) fn empty(env: &Environment) -> Inventory {
        Inventory {
            format: FORMAT.into(),
            version: VERSION,
            tool_version: env!("CARGO_PKG_VERSION").into(),
            home: env.home.display().to_string(),
            emissions: Vec::new(),
        }
    }

    /// Every file, with its runtime and scope.
    pub(crate) fn files(&self) -> impl Iterator<Item = (&str, Scope, &FileEntry)> {
        self.emissions.iter().flat_map(|e| e.files.iter().map(move |f| (e.runtime.as_str(), e.scope, f)))
    }
}

/// Emits every runtime x scope (in parallel, per runtime).
pub(crate) fn build(
    content: &Content,
    runtimes: &[LoadedRuntime],
    env: &Environment,
) -> Result<Inventory, PipelineError> {
    let per_runtime: Vec<Vec<EmissionEntry>> = runtimes
        .par_iter()
        .map(|rt| {
            let mut out = Vec::new();
            for scope in [Scope::Global, Scope::Local] {
                if scope == Scope::Local && rt.capability.local.is_none() {
                    continue;
                }
                let emission = pipeline::emit(content, rt, scope, None, env)?.emission;
                let files = emission
                    .files
                    .iter()
                    .map(|f| FileEntry {
                        path: f.path.to_string(),
                        bytes: f.bytes.len() as u64,
                        // A file's digest (the msd_run copy) was taken once, when it was.
                        sha256: f.bytes.sha256().to_string(),
                        kind: f.kind,
                        sources: f.sources.clone(),
                    })
                    .collect();
                out.push(EmissionEntry { runtime: emission.runtime, scope, files });
            }
            Ok(out)
        })
        .collect::<Result<_, PipelineError>>()?;
    let mut inv = Inventory::empty(env);
    inv.emissions = per_runtime.into_iter().flatten().collect();
    inv.emissions.sort_by(|a, b| (&a.runtime, a.scope).cmp(&(&b.runtime, b.scope)));
    Ok(inv)
}
