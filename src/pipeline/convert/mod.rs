//! Stage 4, `convert`: turn parsed content into one runtime's files, in that runtime's format,
//! with every path and brand rewritten.
//!
//! Input: [`Content`] (parsed once, shared), one [`LoadedRuntime`] (manifest + data files) and
//! its [`Target`]. Output: an [`Emission`]: every file the runtime receives, with its bytes,
//! mode and provenance (which content files and which manifest fed it). Pure: no I/O.
//!
//! Invariants: one converter per output format, chosen by name in the manifest
//! ([`Converter`]); converters hold no prose of their own (adapters and stub templates are data
//! files beside the manifest); the [`Rewriter`] runs over every emitted text file of every
//! format, so no `~/.claude/` reference survives into another runtime's tree.

pub mod js_plugin;
mod kimi;
mod markdown;
mod rewrite;
mod skill;
mod stub;
mod toml_formats;

use std::collections::BTreeMap;

pub use rewrite::Rewriter;

use crate::pipeline::load::{Content, LoadedRuntime};
use crate::pipeline::target::Target;
use msd_core::fs::fsx::{self, FileMode};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{
    ArtifactKind, ArtifactSpec, Capability, Converter, DescriptionLimit, LengthUnit, Scope, ToolsFormat,
};
use msd_core::markup::frontmatter::{Frontmatter, yaml_quote};

/// What an emitted file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A slash command.
    Command,
    /// A skill (or a namespace router skill).
    Skill,
    /// An agent.
    Agent,
    /// A workflow file the runtime lists as a command.
    Workflow,
    /// A file of the core tree.
    Core,
    /// A program: the helper the installed content calls (`<core>/bin/msd_run`, copied byte for
    /// byte), or a hook script a runtime runs (`hook_files`).
    Program,
}

/// The bytes of an emitted file, shared: a file several runtimes get unchanged is one buffer
/// however many trees it goes into, the shipped content is borrowed from the executable, and the
/// helper binary every runtime gets is copied from its file, never held in memory.
pub use msd_core::fs::bytes::Bytes;

/// One emitted file.
#[derive(Debug, Clone)]
pub struct EmittedFile {
    /// Path relative to the target home.
    pub path: RelPath,
    /// The bytes to write.
    pub bytes: Bytes,
    /// File mode.
    pub mode: FileMode,
    /// What it is.
    pub kind: FileKind,
    /// Repository-relative sources that fed it (`content/...`, `runtimes/<id>/...`, `Cargo.toml`).
    pub sources: Vec<String>,
}

/// Everything one runtime receives for one scope.
#[derive(Debug, Clone)]
pub struct Emission {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: Scope,
    /// Files sorted by path.
    pub files: Vec<EmittedFile>,
}

/// Conversion errors.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// An emitted file sits on a path msd-install reserves.
    #[error("{from}: {runtime}: the emitted file {path} collides with {what}; rename or move the source")]
    Reserved {
        /// Runtime id.
        runtime: String,
        /// The path.
        path: String,
        /// The source that emits it.
        from: String,
        /// What the path is reserved for.
        what: String,
    },
    /// Two artifacts map to one path.
    #[error("{runtime}: two artifacts are emitted to {path} ({first} and {second})")]
    PathCollision {
        /// Runtime id.
        runtime: String,
        /// The path.
        path: String,
        /// First source.
        first: String,
        /// Second source.
        second: String,
    },
    /// An emitted name is not a safe path.
    #[error("{runtime}: emitted path `{path}` is not a safe relative path")]
    BadPath {
        /// Runtime id.
        runtime: String,
        /// The path.
        path: String,
    },
    /// A layout that cannot be emitted with this content.
    #[error("{runtime} ({scope}): {message}")]
    Layout {
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: String,
        /// What is wrong.
        message: String,
    },
}

/// Cuts `s` to `limit`, counting the runtime's unit, appending the ellipsis when cut.
pub fn limit_description(s: &str, limit: &DescriptionLimit) -> String {
    let len = |t: &str| match limit.unit {
        LengthUnit::Chars => t.chars().count(),
        LengthUnit::Bytes => t.len(),
        LengthUnit::Utf16 => t.encode_utf16().count(),
    };
    if len(s) <= limit.max {
        return s.to_string();
    }
    let budget = limit.max - len(&limit.ellipsis);
    let mut used = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        let w = match limit.unit {
            LengthUnit::Chars => 1,
            LengthUnit::Bytes => c.len_utf8(),
            LengthUnit::Utf16 => c.len_utf16(),
        };
        if used + w > budget {
            break;
        }
        used += w;
        end = i + c.len_utf8();
    }
    format!("{}{}", s[..end].trim_end(), limit.ellipsis)
}

/// Everything a converter needs about the runtime being emitted.
pub(crate) struct Ctx<'a> {
    pub cap: &'a Capability,
    pub data: &'a BTreeMap<String, String>,
    pub content: &'a Content,
    pub target: &'a Target,
    pub rw: Rewriter,
    pub manifest_source: String,
}

impl Ctx<'_> {
    pub(crate) fn description(&self, d: &str) -> String {
        match &self.cap.description_limit {
            Some(l) => limit_description(d, l),
            None => d.to_string(),
        }
    }

    /// Maps tool names through the manifest's table (its version range's entries first, then
    /// `tools`; MCP names by its `mcp_tools` rule), dropping `null`s and duplicates.
    pub(crate) fn map_tools(&self, tools: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in tools {
            let mapped = match (self.cap.tool_for(t), self.cap.mcp_tools.map(t)) {
                (Some(Some(m)), _) => m.clone(),
                (Some(None), _) | (None, Some(None)) => continue,
                (None, Some(Some(m))) => m,
                (None, None) => t.clone(),
            };
            if !out.contains(&mapped) {
                out.push(mapped);
            }
        }
        out
    }

    /// A data file beside the manifest (validated to exist at load).
    pub(crate) fn data_file(&self, name: &str) -> &str {
        self.data.get(name).map_or("", String::as_str)
    }

    /// Repository-relative path of a data file, for provenance.
    pub(crate) fn data_source(&self, name: &str) -> String {
        format!("runtimes/{}/{name}", self.cap.id)
    }

    /// `adapter + body` when the artifact has an adapter.
    pub(crate) fn with_adapter(&self, spec: &ArtifactSpec, body: &str) -> String {
        match &spec.adapter {
            Some(a) => format!("{}\n{body}", self.data_file(a).trim_end()),
            None => body.to_string(),
        }
    }

    /// Sources of an artifact: its content file(s), the manifest, and the adapter if any.
    pub(crate) fn sources(&self, spec: Option<&ArtifactSpec>, content_sources: &[&RelPath]) -> Vec<String> {
        let mut s: Vec<String> = content_sources.iter().map(|p| format!("content/{p}")).collect();
        s.push(self.manifest_source.clone());
        if let Some(a) = spec.and_then(|s| s.adapter.as_ref()) {
            s.push(self.data_source(a));
        }
        if let Some(t) = spec.and_then(|s| s.stub.as_ref()) {
            s.push(self.data_source(&t.template));
        }
        s
    }

    /// A rewritten text file.
    pub(crate) fn file(
        &self,
        path: String,
        text: &str,
        kind: FileKind,
        sources: Vec<String>,
    ) -> Result<EmittedFile, ConvertError> {
        let path =
            RelPath::new(path.clone()).map_err(|_| ConvertError::BadPath { runtime: self.cap.id.clone(), path })?;
        Ok(EmittedFile { path, bytes: self.rw.apply(text).into_bytes().into(), mode: FileMode::Regular, kind, sources })
    }

    pub(crate) fn layout_error(&self, message: String) -> ConvertError {
        ConvertError::Layout { runtime: self.cap.id.clone(), scope: self.target.scope.as_str().into(), message }
    }

    /// Applies the artifact's frontmatter rules to `source`: renames, keep-list, the emitted
    /// name (when the output keeps a name), the limited description, mapped tools, added keys.
    pub(crate) fn frontmatter(
        &self,
        spec: &ArtifactSpec,
        source: &Frontmatter,
        name: &str,
        description: &str,
        default_keep: Option<&[&str]>,
    ) -> Frontmatter {
        let mut fm = source.clone();
        for (from, to) in &spec.frontmatter.rename {
            fm.rename(from, to);
        }
        match (&spec.frontmatter.keep, default_keep) {
            (Some(keep), _) => {
                let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
                fm.retain(&keep);
            }
            (None, Some(keep)) => fm.retain(keep),
            (None, None) => {}
        }
        let keeps = |k: &str| match (&spec.frontmatter.keep, default_keep) {
            (Some(keep), _) => keep.iter().any(|x| x == k),
            (None, Some(keep)) => keep.contains(&k),
            (None, None) => true,
        };
        if keeps("name") {
            fm.set_str("name", name);
        }
        if keeps("description") {
            fm.set_str("description", &self.description(description));
        }
        for key in ["tools", "allowed-tools"] {
            if let Some(tools) = fm.get_list(key) {
                let mapped = self.map_tools(&tools);
                set_tools(&mut fm, key, &mapped, spec.tools_format);
            }
        }
        for (k, v) in &spec.frontmatter.add {
            let text = match v {
                serde_json::Value::String(s) => yaml_quote(s),
                other => other.to_string(),
            };
            let value: yaml_serde::Value = yaml_serde::from_str(&text).unwrap_or(yaml_serde::Value::Null);
            fm.set_raw(k, &format!("{k}: {text}\n"), value);
        }
        // `name` and `description` lead, as every runtime's docs show them.
        fm.entries.sort_by_key(|e| match e.key.as_str() {
            "name" => 0,
            "description" => 1,
            _ => 2,
        });
        fm
    }
}

/// Writes a tools list in the runtime's format.
fn set_tools(fm: &mut Frontmatter, key: &str, tools: &[String], format: ToolsFormat) {
    let seq = yaml_serde::Value::Sequence(tools.iter().map(|t| yaml_serde::Value::String(t.clone())).collect());
    match format {
        ToolsFormat::Comma => {
            let joined = tools.join(", ");
            fm.set_raw(key, &format!("{key}: {joined}\n"), yaml_serde::Value::String(joined.clone()));
        }
        ToolsFormat::List => fm.set_list(key, tools),
        ToolsFormat::Flow => {
            let items: Vec<String> = tools.iter().map(|t| format!("'{}'", t.replace('\'', "''"))).collect();
            fm.set_raw(key, &format!("{key}: [{}]\n", items.join(", ")), seq);
        }
        ToolsFormat::Map => {
            let mut raw = format!("{key}:\n");
            for t in tools {
                raw.push_str(&format!("  {}: true\n", msd_core::markup::frontmatter::yaml_quote_if_needed(t)));
            }
            if tools.is_empty() {
                raw = format!("{key}: {{}}\n");
            }
            fm.set_raw(key, &raw, seq);
        }
    }
}

/// Emits everything `rt` receives at `target`.
pub fn emit(content: &Content, rt: &LoadedRuntime, target: &Target) -> Result<Emission, ConvertError> {
    let cap = &rt.capability;
    let stems: Vec<&str> = content.commands.iter().map(|c| c.stem.as_str()).collect();
    let ctx = Ctx {
        cap,
        data: &rt.data,
        content,
        target,
        rw: Rewriter::new(cap, target, &stems),
        manifest_source: format!("runtimes/{}", rt.source),
    };
    let layout = cap.layout(target.scope);
    let mut files: Vec<EmittedFile> = Vec::new();
    for spec in layout {
        match (spec.kind, spec.converter) {
            (ArtifactKind::Commands | ArtifactKind::Workflows, Converter::MarkdownCommand) => {
                for c in &content.commands {
                    files.push(markdown::command(&ctx, spec, c)?);
                }
            }
            (ArtifactKind::Commands, Converter::GeminiCommand) => {
                for c in &content.commands {
                    files.push(toml_formats::gemini_command(&ctx, spec, c)?);
                }
            }
            (ArtifactKind::Workflows, Converter::WorkflowStub) => {
                for c in &content.commands {
                    files.push(stub::workflow_stub(&ctx, spec, layout, c)?);
                }
            }
            (ArtifactKind::Skills, Converter::Skill) => files.extend(skill::skills(&ctx, spec)?),
            (ArtifactKind::Agents, Converter::MarkdownAgent) => {
                for a in &content.agents {
                    files.push(markdown::agent(&ctx, spec, a)?);
                }
            }
            (ArtifactKind::Agents, Converter::CodexAgent) => {
                for a in &content.agents {
                    files.push(toml_formats::codex_agent(&ctx, spec, a)?);
                }
            }
            (ArtifactKind::Agents, Converter::KimiAgents) => files.extend(kimi::agents(&ctx, spec)?),
            (kind, conv) => {
                return Err(ctx.layout_error(format!("converter {conv:?} cannot produce {}", kind.as_str())));
            }
        }
    }
    for f in &content.core {
        let path = cap.core_dir(target.scope).join(&f.rel);
        let bytes = match &f.text {
            Some(t) => match ctx.rw.apply_cow(t) {
                std::borrow::Cow::Owned(t) => t.into_bytes().into(),
                std::borrow::Cow::Borrowed(_) => f.shared_text().expect("a text file"),
            },
            None => f.bytes.clone(),
        };
        files.push(EmittedFile {
            path,
            bytes,
            mode: f.mode,
            kind: FileKind::Core,
            sources: ctx.sources(None, &[&f.source]),
        });
    }
    // Canonical agent payloads for `msd_run query agent-skills`, whatever format the runtime's
    // own agent files use (see `compact`).
    for (rel, text, source) in crate::pipeline::compact::canonical_payloads(content) {
        files.push(EmittedFile {
            path: cap.core_dir(target.scope).join(&rel),
            bytes: ctx.rw.apply(text).into_bytes().into(),
            mode: FileMode::Regular,
            kind: FileKind::Core,
            sources: ctx.sources(None, &[source]),
        });
    }
    files.push(EmittedFile {
        path: cap.core_dir(target.scope).join(&RelPath::new("VERSION").expect("static")),
        bytes: format!("{}\n", env!("CARGO_PKG_VERSION")).into_bytes().into(),
        mode: FileMode::Regular,
        kind: FileKind::Core,
        sources: vec!["Cargo.toml".into()],
    });
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for pair in files.windows(2) {
        if pair[0].path == pair[1].path {
            return Err(ConvertError::PathCollision {
                runtime: cap.id.clone(),
                path: pair[0].path.to_string(),
                first: pair[0].sources[0].clone(),
                second: pair[1].sources[0].clone(),
            });
        }
    }
    reserved(cap, target.scope, &files)?;
    Ok(Emission { runtime: cap.id.clone(), scope: target.scope, files })
}

/// File names msd-install keeps its own metadata under, in a runtime's core dir.
pub const MANIFEST_NAME: &str = "msd-file-manifest.json";
/// See [`MANIFEST_NAME`].
pub const STATE_NAME: &str = "msd-install-state.json";
/// Where edited files are backed up, under the home.
pub const PATCHES_DIR: &str = "msd-local-patches";

/// No emitted file may sit where msd-install keeps its own metadata (the file manifest, the
/// install state, the work dir, the backups) or where a settings surface of this scope is
/// edited in place: either would orphan the install on the next run.
fn reserved(cap: &Capability, scope: Scope, files: &[EmittedFile]) -> Result<(), ConvertError> {
    let core = cap.core_dir(scope);
    let meta = [MANIFEST_NAME, STATE_NAME].map(|n| core.join(&RelPath::new(n).expect("static")));
    let surfaces: Vec<&RelPath> =
        msd_core::manifest::surfaces::for_scope(&cap.settings, scope).map(|s| &s.file).collect();
    for f in files {
        let p = f.path.as_str();
        let what = if meta.contains(&f.path) {
            Some("msd-install's own metadata".to_string())
        } else if [fsx::WORK_DIR, PATCHES_DIR].iter().any(|d| p == *d || p.starts_with(&format!("{d}/"))) {
            Some("msd-install's work and backup directories".to_string())
        } else if surfaces.contains(&&f.path) {
            Some(format!("a settings surface of runtimes/{}/capability.json (edited in place)", cap.id))
        } else {
            None
        };
        if let Some(what) = what {
            return Err(ConvertError::Reserved {
                runtime: cap.id.clone(),
                path: f.path.to_string(),
                from: f.sources.first().cloned().unwrap_or_default(),
                what,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convert_description_limit_counts_the_runtime_unit() {
        let l = |max, unit| DescriptionLimit { max, unit, ellipsis: "...".into() };
        assert_eq!(limit_description("abcdef", &l(6, LengthUnit::Chars)), "abcdef");
        assert_eq!(limit_description("abcdefg", &l(6, LengthUnit::Chars)), "abc...");
        // "é" is one char, two bytes.
        assert_eq!(limit_description("éééééé", &l(6, LengthUnit::Chars)), "éééééé");
        assert_eq!(limit_description("ééééééé", &l(6, LengthUnit::Chars)), "ééé...");
        assert_eq!(limit_description("ééééé", &l(7, LengthUnit::Bytes)), "éé...");
        // An astral char is one char, two UTF-16 units.
        assert_eq!(limit_description("😀😀😀😀", &l(7, LengthUnit::Utf16)), "😀😀...");
        assert_eq!(limit_description("😀😀😀😀", &l(7, LengthUnit::Chars)), "😀😀😀😀");
    }
}
