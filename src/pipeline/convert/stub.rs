//! Converter `workflow-stub`: a small workflow file (Windsurf) that names the command and
//! points at the command body emitted by the same layout's `commands` artifact.
//!
//! The template is a data file beside the manifest with `{name}`, `{description}`,
//! `{description_yaml}` and `{body}` placeholders. The stub's size is bounded by construction:
//! the description is cut until the stub fits `max_bytes`; a stub that cannot fit even with an
//! empty description is an error, never a silent overflow.

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use crate::pipeline::load::Command;
use msd_core::manifest::capability::{ArtifactKind, ArtifactSpec, Converter, DescriptionLimit, LengthUnit};
use msd_core::markup::frontmatter::yaml_quote;

/// The longest command name a workflow runtime accepts.
const NAME_MAX: usize = 128;

pub(super) fn workflow_stub(
    ctx: &Ctx<'_>,
    spec: &ArtifactSpec,
    layout: &[ArtifactSpec],
    c: &Command,
) -> Result<EmittedFile, ConvertError> {
    let stub = spec.stub.as_ref().expect("validated: workflow-stub has a stub");
    let body_spec = layout
        .iter()
        .find(|a| a.kind == ArtifactKind::Commands && a.converter == Converter::MarkdownCommand)
        .ok_or_else(|| {
            ctx.layout_error(
                "a workflow stub needs a markdown `commands` artifact in the same layout to point at".into(),
            )
        })?;
    let name = format!("{}{}", spec.prefix, c.stem);
    if name.len() > NAME_MAX {
        return Err(ctx.layout_error(format!("workflow name `{name}` is longer than {NAME_MAX} characters")));
    }
    let body = format!("{}{}/{}{}.md", ctx.target.home_ref, body_spec.dest, body_spec.prefix, c.stem);
    let template = ctx.data_file(&stub.template);
    let render = |d: &str| {
        ctx.rw.apply(
            &template
                .replace("{name}", &name)
                .replace("{description_yaml}", &yaml_quote(d))
                .replace("{description}", d)
                .replace("{body}", &body),
        )
    };
    let mut description = ctx.description(&c.description);
    let mut text = render(&description);
    if text.len() as u64 > stub.max_bytes {
        // Cut the description until the stub fits (binary search on its length in chars).
        let chars = description.chars().count();
        let (mut lo, mut hi) = (0usize, chars);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let limit = DescriptionLimit { max: mid + 3, unit: LengthUnit::Chars, ellipsis: "...".into() };
            if render(&super::limit_description(&description, &limit)).len() as u64 <= stub.max_bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        description = if lo == 0 {
            String::new()
        } else {
            super::limit_description(
                &description,
                &DescriptionLimit { max: lo + 3, unit: LengthUnit::Chars, ellipsis: "...".into() },
            )
        };
        text = render(&description);
        if text.len() as u64 > stub.max_bytes {
            return Err(ctx.layout_error(format!(
                "workflow stub for `{}` is {} bytes with an empty description, over its bound of {}",
                c.stem,
                text.len(),
                stub.max_bytes
            )));
        }
    }
    let suffix = spec.suffix.as_deref().unwrap_or(".md");
    let mut f = ctx.file(
        format!("{}/{name}{suffix}", spec.dest),
        "",
        FileKind::Workflow,
        ctx.sources(Some(spec), &[&c.source]),
    )?;
    f.bytes = text.into_bytes().into();
    Ok(f)
}
