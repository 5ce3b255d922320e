//! Converters `markdown-command` and `markdown-agent`: one Markdown file per command or agent,
//! with YAML frontmatter shaped by the manifest's rules (keep, rename, add, tools format).

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use crate::pipeline::load::{Agent, Command};
use msd_core::manifest::capability::{ArtifactKind, ArtifactSpec};

/// `<dest>/<prefix><stem><suffix>`.
pub(super) fn command(ctx: &Ctx<'_>, spec: &ArtifactSpec, c: &Command) -> Result<EmittedFile, ConvertError> {
    let name = format!("{}{}", spec.prefix, c.stem);
    let fm = ctx.frontmatter(spec, &c.frontmatter, &name, &c.description, None);
    let text = fm.render() + &ctx.with_adapter(spec, &c.body);
    let suffix = spec.suffix.as_deref().unwrap_or(".md");
    let kind = if spec.kind == ArtifactKind::Workflows { FileKind::Workflow } else { FileKind::Command };
    ctx.file(format!("{}/{name}{suffix}", spec.dest), &text, kind, ctx.sources(Some(spec), &[&c.source]))
}

/// `<dest>/<agent name><suffix>`.
pub(super) fn agent(ctx: &Ctx<'_>, spec: &ArtifactSpec, a: &Agent) -> Result<EmittedFile, ConvertError> {
    let fm = ctx.frontmatter(spec, &a.frontmatter, &a.name, &a.description, None);
    let text = fm.render() + &ctx.with_adapter(spec, &a.body);
    let suffix = spec.suffix.as_deref().unwrap_or(".md");
    ctx.file(format!("{}/{}{suffix}", spec.dest, a.name), &text, FileKind::Agent, ctx.sources(Some(spec), &[&a.source]))
}
