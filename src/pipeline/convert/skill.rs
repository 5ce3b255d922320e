//! Converter `skill`: an Agent-Skills `SKILL.md` per command.
//!
//! Flat: `<dest>/<prefix><stem>/SKILL.md`. Nested: one router per group of the content's
//! `namespaces.json`, `<dest>/<prefix><group>/SKILL.md`, listing its commands, each of which
//! lives at `<dest>/<prefix><group>/skills/<prefix><stem>/SKILL.md`. Frontmatter keeps `name`,
//! `description`, `argument-hint` and `allowed-tools` unless the manifest says otherwise.

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use crate::pipeline::load::Command;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{ArtifactSpec, Nesting};
use msd_core::markup::frontmatter::Frontmatter;

const DEFAULT_KEEP: [&str; 4] = ["name", "description", "argument-hint", "allowed-tools"];

fn one(ctx: &Ctx<'_>, spec: &ArtifactSpec, c: &Command, dir: &str) -> Result<EmittedFile, ConvertError> {
    let name = format!("{}{}", spec.prefix, c.stem);
    let fm = ctx.frontmatter(spec, &c.frontmatter, &name, &c.description, Some(&DEFAULT_KEEP));
    let text = fm.render() + &ctx.with_adapter(spec, &c.body);
    ctx.file(format!("{dir}/{name}/SKILL.md"), &text, FileKind::Skill, ctx.sources(Some(spec), &[&c.source]))
}

/// Every skill file of the artifact.
pub(super) fn skills(ctx: &Ctx<'_>, spec: &ArtifactSpec) -> Result<Vec<EmittedFile>, ConvertError> {
    let content = ctx.content;
    if spec.nesting == Nesting::Flat {
        return content.commands.iter().map(|c| one(ctx, spec, c, spec.dest.as_str())).collect();
    }
    let ns = content.namespaces.as_ref().ok_or_else(|| {
        ctx.layout_error("a nested skills layout needs the content's namespaces.json (command groups)".into())
    })?;
    let ns_source = RelPath::new("namespaces.json").expect("static");
    let mut out = Vec::new();
    for group in &ns.groups {
        let router = format!("{}{}", spec.prefix, group.name);
        let dir = format!("{}/{router}", spec.dest);
        let mut table =
            format!("# {router}\n\n{}\n\n| Command | What it does | Read |\n|---|---|---|\n", ns.instructions.trim());
        let mut sources: Vec<&RelPath> = vec![&ns_source];
        for stem in &group.commands {
            let c = content.commands.iter().find(|c| &c.stem == stem).expect("namespaces validated at load");
            let skill_name = format!("{}{stem}", spec.prefix);
            table.push_str(&format!(
                "| /msd:{stem} | {} | skills/{skill_name}/SKILL.md |\n",
                ctx.description(&c.description).replace('|', "\\|")
            ));
            sources.push(&c.source);
            out.push(one(ctx, spec, c, &format!("{dir}/skills"))?);
        }
        let mut fm = Frontmatter::default();
        fm.set_str("name", &router);
        fm.set_str("description", &ctx.description(&group.description));
        let text = fm.render() + &table;
        out.push(ctx.file(format!("{dir}/SKILL.md"), &text, FileKind::Skill, ctx.sources(Some(spec), &sources))?);
    }
    Ok(out)
}
