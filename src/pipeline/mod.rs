//! The pipeline end to end: `load` -> `validate` -> `compose` -> `convert` -> `guard` ->
//! `plan` -> `write` -> `record`. Documents are composed whole at load; [`emit`] is the
//! one place where a file over its manifest cap is composed again to fit it.
//!
//! Everything before `write` is pure (the plan reads the disk, never writes it); `lifecycle`
//! runs it per runtime in parallel; the content is loaded and parsed once and shared. Nothing is written
//! until every selected runtime has been emitted, guarded and planned.

pub(crate) mod compact;
pub mod convert;
pub(crate) mod error;
pub(crate) mod fit;
pub(crate) mod freshness;
pub(crate) mod guard;
pub mod load;
pub(crate) mod profile;
pub(crate) mod section_manifest;
pub mod synth;
pub mod target;

use std::path::{Path, PathBuf};

use crate::pipeline::convert::Emission;
use crate::pipeline::fit::FileCompose;
use crate::pipeline::guard::GuardReport;
use crate::pipeline::load::{Content, ContentError, LoadedRuntime, Tree};
use msd_core::manifest::capability::Scope;

use crate::pipeline::target::{Environment, Target};

pub use error::PipelineError;

/// Where content and manifests come from.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--content DIR` (embedded when `None`).
    pub content: Option<PathBuf>,
    /// `--runtimes DIR` (embedded when `None`).
    pub runtimes: Option<PathBuf>,
}

/// Content and manifests, loaded and validated.
#[derive(Debug)]
pub struct Loaded {
    /// The content.
    pub content: Content,
    /// The runtimes, sorted by id.
    pub runtimes: Vec<LoadedRuntime>,
}

/// Loads and validates the runtime manifests only.
pub fn load_runtimes(sources: &Sources) -> Result<Vec<LoadedRuntime>, PipelineError> {
    let tree = match &sources.runtimes {
        Some(dir) => Tree::from_dir(dir)?,
        None => Tree::embedded_runtimes(),
    };
    runtimes_from_tree(&tree)
}

/// Parses and validates the manifests of a runtimes tree already in memory, sorted by id.
pub fn runtimes_from_tree(tree: &Tree) -> Result<Vec<LoadedRuntime>, PipelineError> {
    let mut runtimes = load::runtimes(tree)?;
    runtimes.sort_by(|a, b| a.capability.id.cmp(&b.capability.id));
    Ok(runtimes)
}

/// Loads and validates the content tree only, including the freshness of its generated
/// section manifest (an installed msd_run must never select with stale sections).
pub fn load_content(sources: &Sources) -> Result<Content, PipelineError> {
    content_from_tree(tree_of(sources)?)
}

/// [`load_content`], with `beside` run over the loaded tree on a second thread while the
/// content is checked (an install's fingerprint of a `--content` tree: the check and the hash
/// are both on the path before any runtime is emitted). Its result is dropped when the content
/// fails.
pub fn load_content_beside<T: Send>(
    sources: &Sources,
    beside: impl FnOnce(&Tree) -> T + Send,
) -> Result<(Content, T), PipelineError> {
    let content = load::content(tree_of(sources)?)?;
    let (checked, t) = std::thread::scope(|s| {
        let t = s.spawn(|| beside(&content.tree));
        let checked = check(&content);
        (checked, t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    });
    checked?;
    Ok((content, t))
}

/// The content tree `sources` name: a directory, read, or the embedded one.
fn tree_of(sources: &Sources) -> Result<Tree, PipelineError> {
    Ok(match &sources.content {
        Some(dir) => Tree::from_dir(dir)?,
        None => Tree::embedded_content(),
    })
}

/// Parses and validates a content tree already in memory, as [`load_content`] does.
pub fn content_from_tree(tree: Tree) -> Result<Content, PipelineError> {
    let content = load::content(tree)?;
    check(&content)?;
    Ok(content)
}

/// The checks of a parsed content: its section manifest is fresh, its agents' variants valid.
fn check(content: &Content) -> Result<(), PipelineError> {
    section_manifest::verify_content(&content.tree).map_err(|g| ContentError {
        path: g.path,
        line: g.line,
        message: format!("{}: {}{}", g.reason, g.message, g.detail.map(|d| format!("\n{d}")).unwrap_or_default()),
        hint: g.hint,
    })?;
    crate::pipeline::compact::validate(content)?;
    Ok(())
}

/// Loads and validates manifests and content.
pub fn load(sources: &Sources) -> Result<Loaded, PipelineError> {
    let runtimes = load_runtimes(sources)?;
    let content = load_content(sources)?;
    Ok(Loaded { content, runtimes })
}

/// The runtime used when none is named: the one whose manifest says `"tier": "primary"`.
pub fn primary(runtimes: &[LoadedRuntime]) -> Result<String, PipelineError> {
    runtimes
        .iter()
        .find(|r| r.capability.tier == msd_core::manifest::capability::SupportTier::Primary)
        .map(|r| r.capability.id.clone())
        .ok_or(PipelineError::NoPrimary)
}

/// Picks runtimes by id (in the order given, duplicates removed) or all of them.
pub fn select<'a>(
    runtimes: &'a [LoadedRuntime],
    ids: &[String],
    all: bool,
) -> Result<Vec<&'a LoadedRuntime>, PipelineError> {
    if all {
        return Ok(runtimes.iter().collect());
    }
    let mut out: Vec<&LoadedRuntime> = Vec::new();
    for id in ids {
        let rt = runtimes.iter().find(|r| &r.capability.id == id).ok_or_else(|| PipelineError::UnknownRuntime {
            given: id.clone(),
            valid: runtimes.iter().map(|r| r.capability.id.clone()).collect(),
        })?;
        if !out.iter().any(|r| r.capability.id == rt.capability.id) {
            out.push(rt);
        }
    }
    Ok(out)
}

/// One runtime x scope, emitted and guarded: what an install plans from.
#[derive(Debug)]
pub struct Emitted {
    /// Where it installs.
    pub target: Target,
    /// Every file, converted, fitted and with the synthesized files added.
    pub emission: Emission,
    /// What the guard measured.
    pub report: GuardReport,
    /// How each file over a manifest cap was composed to fit it.
    pub compose: Vec<FileCompose>,
}

/// Resolves, emits (composing every file over a manifest cap to fit it), guards one runtime and
/// adds the synthesized files (reads only). The one place emission meets the composer.
pub fn emit(
    content: &Content,
    rt: &LoadedRuntime,
    scope: Scope,
    config_dir: Option<&Path>,
    env: &Environment,
) -> Result<Emitted, PipelineError> {
    let target = target::resolve(&rt.capability, scope, config_dir, env)?;
    let (mut emission, compose) =
        fit::fit(content, &rt.capability, scope, |c: &Content| -> Result<Emission, PipelineError> {
            Ok(convert::emit(c, rt, &target)?)
        })?;
    let report = guard::check(&emission, &rt.capability, &content.tiers)?;
    synth::add(&mut emission, &rt.capability, rt.source.as_str())?;
    Ok(Emitted { target, emission, report, compose })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An install emits from its content after [`Content::release_sources`]: every runtime's
    /// files, in both scopes, are the ones the whole content gives, byte for byte.
    #[test]
    fn released_content_emits_every_file_as_the_whole_content_does() {
        // With a file that is not text, which keeps its bytes (the shipped content has none).
        let mut tree = Tree::embedded_content();
        let binary = msd_core::fs::relpath::RelPath::new("msd-core/assets/logo.png").unwrap();
        tree.files.insert(binary, convert::Bytes::from(vec![0x89, b'P', b'N', b'G', 0, 0xff]));
        let full = content_from_tree(tree).unwrap();
        let mut released = full.clone();
        released.release_sources();
        assert!(released.tree.files.is_empty());
        assert!(released.core.iter().filter(|f| f.text.is_some()).all(|f| f.bytes.is_empty()));
        let env = Environment::golden();
        for rt in &load_runtimes(&Sources::default()).unwrap() {
            let scopes = [Scope::Global].into_iter().chain(rt.capability.local.as_ref().map(|_| Scope::Local));
            for scope in scopes {
                let target = target::resolve(&rt.capability, scope, None, &env).unwrap();
                let emit = |c: &Content| {
                    let convert =
                        |c: &Content| -> Result<Emission, PipelineError> { Ok(convert::emit(c, rt, &target)?) };
                    let files = fit::fit(c, &rt.capability, scope, convert).unwrap().0.files;
                    files.into_iter().map(|f| (f.path, f.bytes, f.mode, f.kind)).collect::<Vec<_>>()
                };
                let (whole, after) = (emit(&full), emit(&released));
                assert_eq!(whole.len(), after.len(), "{} {scope:?}", rt.capability.id);
                for (w, a) in whole.iter().zip(&after) {
                    assert!(w == a, "{} {scope:?}: {} differs after release_sources", rt.capability.id, w.0);
                }
            }
        }
    }
}
