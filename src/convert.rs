//! Stage 4, `convert`: turn parsed content into one runtime's files, in that runtime's format,
//! with every path and brand rewritten.
//!
//! Input: [`Content`] (parsed once, shared), one [`Capability`] and its [`Target`]. Output: an
//! [`Emission`]: every file the runtime receives, with its bytes, mode and provenance (which
//! content files and which manifest fed it). Pure: no I/O.
//!
//! Invariants: one converter per output format, chosen by name in the manifest; converters hold
//! no prose of their own; the [`Rewriter`] runs over every emitted text file of every format, so
//! no `~/.claude/` reference survives into another runtime's tree.

use std::collections::BTreeMap;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::capability::{ArtifactKind, ArtifactSpec, Capability, Converter, DescriptionLimit, LengthUnit, Scope};
use crate::frontmatter::Frontmatter;
use crate::fsx::FileMode;
use crate::load::{Agent, Command, Content};
use crate::relpath::RelPath;
use crate::target::Target;

/// What an emitted file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A slash command.
    Command,
    /// A skill.
    Skill,
    /// An agent.
    Agent,
    /// A workflow stub.
    Workflow,
    /// A file of the core tree.
    Core,
}

/// One emitted file.
#[derive(Debug, Clone)]
pub struct EmittedFile {
    /// Path relative to the target home.
    pub path: RelPath,
    /// The bytes to write.
    pub bytes: Vec<u8>,
    /// File mode.
    pub mode: FileMode,
    /// What it is.
    pub kind: FileKind,
    /// Repository-relative sources that fed it (`content/...`, `runtimes/<id>/capability.json`).
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
}

/// The path and brand rewriter of one runtime and scope: one pass, leftmost-longest.
pub struct Rewriter {
    ac: AhoCorasick,
    to: Vec<String>,
}

impl Rewriter {
    /// Builds the rewriter: install paths, command references, then the manifest's rewrites.
    pub fn new(cap: &Capability, target: &Target, stems: &[&str]) -> Rewriter {
        let mut rules: Vec<(String, String)> = vec![
            ("~/.claude/msd-core/".into(), target.core_ref.clone()),
            ("$HOME/.claude/msd-core/".into(), target.core_ref.clone()),
            ("~/.claude/".into(), target.home_ref.clone()),
            ("$HOME/.claude/".into(), target.home_ref.clone()),
            ("./.claude/".into(), target.local_ref.clone()),
        ];
        for stem in stems {
            rules.push((format!("/msd:{stem}"), cap.command_ref.replace("{stem}", stem)));
        }
        for r in &cap.rewrites {
            rules.push((r.from.clone(), r.to.clone()));
        }
        // Later rules with the same pattern lose: keep the first occurrence.
        let mut seen = std::collections::BTreeSet::new();
        rules.retain(|(from, _)| seen.insert(from.clone()));
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(rules.iter().map(|(f, _)| f.as_str()))
            .expect("literal patterns build");
        Rewriter { ac, to: rules.into_iter().map(|(_, t)| t).collect() }
    }

    /// Rewrites `text`.
    pub fn apply(&self, text: &str) -> String {
        self.ac.replace_all(text, &self.to)
    }
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
    let mut out = String::new();
    for c in s.chars() {
        let mut next = out.clone();
        next.push(c);
        if len(&next) > budget {
            break;
        }
        out = next;
    }
    let trimmed = out.trim_end().to_string();
    trimmed + &limit.ellipsis
}

struct Ctx<'a> {
    cap: &'a Capability,
    rw: Rewriter,
    manifest_source: String,
}

impl Ctx<'_> {
    fn description(&self, d: &str) -> String {
        match &self.cap.description_limit {
            Some(l) => limit_description(d, l),
            None => d.to_string(),
        }
    }

    fn map_tools(&self, tools: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in tools {
            let mapped = match self.cap.tools.get(t) {
                Some(Some(m)) => m.clone(),
                Some(None) => continue,
                None => t.clone(),
            };
            if !out.contains(&mapped) {
                out.push(mapped);
            }
        }
        out
    }

    fn file(&self, path: String, text: String, kind: FileKind, source: &RelPath) -> Result<EmittedFile, ConvertError> {
        let path =
            RelPath::new(path.clone()).map_err(|_| ConvertError::BadPath { runtime: self.cap.id.clone(), path })?;
        Ok(EmittedFile {
            path,
            bytes: self.rw.apply(&text).into_bytes(),
            mode: FileMode::Regular,
            kind,
            sources: vec![format!("content/{source}"), self.manifest_source.clone()],
        })
    }

    fn command(&self, spec: &ArtifactSpec, c: &Command) -> Result<Vec<EmittedFile>, ConvertError> {
        let name = format!("{}{}", spec.prefix, c.stem);
        let mut fm = c.frontmatter.clone();
        match spec.converter {
            Converter::MarkdownCommand => {
                fm.set_str("name", &name);
                fm.set_str("description", &self.description(&c.description));
                let text = fm.render() + &c.body;
                Ok(vec![self.file(format!("{}/{name}.md", spec.dest), text, FileKind::Command, &c.source)?])
            }
            Converter::ClaudeSkill => {
                let mut out = Frontmatter::default();
                out.set_str("name", &name);
                out.set_str("description", &self.description(&c.description));
                for key in ["argument-hint", "allowed-tools"] {
                    if let Some(e) = fm.entries.iter().find(|e| e.key == key) {
                        out.entries.push(e.clone());
                    }
                }
                if let Some(tools) = fm.get_list("allowed-tools") {
                    let mapped = self.map_tools(&tools);
                    if mapped != tools {
                        out.set_list("allowed-tools", &mapped);
                    }
                }
                fm = out;
                let text = fm.render() + &c.body;
                Ok(vec![self.file(format!("{}/{name}/SKILL.md", spec.dest), text, FileKind::Skill, &c.source)?])
            }
            Converter::MarkdownAgent => unreachable!("validated: agent converters take agents"),
        }
    }

    fn agent(&self, spec: &ArtifactSpec, a: &Agent) -> Result<Vec<EmittedFile>, ConvertError> {
        let mut fm = a.frontmatter.clone();
        fm.set_str("description", &self.description(&a.description));
        if let Some(tools) = fm.get_list("tools") {
            let mapped = self.map_tools(&tools);
            if mapped != tools {
                let v = yaml_serde::Value::String(mapped.join(", "));
                fm.set_raw("tools", &format!("tools: {}\n", mapped.join(", ")), v);
            }
        }
        let text = fm.render() + &a.body;
        Ok(vec![self.file(format!("{}/{}.md", spec.dest, a.name), text, FileKind::Agent, &a.source)?])
    }
}

/// Emits everything `cap` receives at `target`.
pub fn emit(
    content: &Content,
    cap: &Capability,
    manifest_source: &str,
    target: &Target,
) -> Result<Emission, ConvertError> {
    let stems: Vec<&str> = content.commands.iter().map(|c| c.stem.as_str()).collect();
    let ctx =
        Ctx { cap, rw: Rewriter::new(cap, target, &stems), manifest_source: format!("runtimes/{manifest_source}") };
    let mut files: Vec<EmittedFile> = Vec::new();
    for spec in cap.layout(target.scope) {
        match spec.kind {
            ArtifactKind::Commands | ArtifactKind::Skills | ArtifactKind::Workflows | ArtifactKind::Rules => {
                for c in &content.commands {
                    files.extend(ctx.command(spec, c)?);
                }
            }
            ArtifactKind::Agents => {
                for a in &content.agents {
                    files.extend(ctx.agent(spec, a)?);
                }
            }
        }
    }
    for f in &content.core {
        let path = cap.core_dir.join(&f.rel);
        let (bytes, kind) = match &f.text {
            Some(t) => (ctx.rw.apply(t).into_bytes(), FileKind::Core),
            None => (f.bytes.to_vec(), FileKind::Core),
        };
        files.push(EmittedFile {
            path,
            bytes,
            mode: f.mode,
            kind,
            sources: vec![format!("content/{}", f.source), ctx.manifest_source.clone()],
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut by_path: BTreeMap<&RelPath, &EmittedFile> = BTreeMap::new();
    for f in &files {
        if let Some(prev) = by_path.insert(&f.path, f) {
            return Err(ConvertError::PathCollision {
                runtime: cap.id.clone(),
                path: f.path.to_string(),
                first: prev.sources[0].clone(),
                second: f.sources[0].clone(),
            });
        }
    }
    Ok(Emission { runtime: cap.id.clone(), scope: target.scope, files })
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
