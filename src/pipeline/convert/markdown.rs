//! Converters `markdown-command` and `markdown-agent`: one Markdown file per command or agent,
//! with YAML frontmatter shaped by the manifest's rules (keep, rename, add, tools format).

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use crate::pipeline::load::{Agent, Command};
use msd_core::manifest::capability::{ArtifactKind, ArtifactSpec, BodyTemplate};

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
    let fm = ctx.frontmatter(spec, &a.frontmatter, &a.stem, &a.description, None);
    let text = fm.render() + &escape_template(spec.body_template, &ctx.with_adapter(spec, &a.body));
    let suffix = spec.suffix.as_deref().unwrap_or(".md");
    ctx.file(format!("{}/{}{suffix}", spec.dest, a.stem), &text, FileKind::Agent, ctx.sources(Some(spec), &[&a.source]))
}

/// Escapes what the runtime's body template would substitute, so the text arrives as written.
/// `DollarBrace`: every `${word}` (`[A-Za-z0-9_]+`: Gemini CLI fills `\$\{(\w+)\}`, Qwen Code
/// `\$\{([a-zA-Z_]\w*)\}`) becomes `${ word }`.
pub(super) fn escape_template(syntax: BodyTemplate, body: &str) -> String {
    match syntax {
        BodyTemplate::None => body.to_string(),
        BodyTemplate::DollarBrace => {
            let mut out = String::with_capacity(body.len());
            let mut rest = body;
            while let Some(at) = rest.find("${") {
                out.push_str(&rest[..at]);
                let after = &rest[at + 2..];
                let ident = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
                if ident > 0 && after[ident..].starts_with('}') {
                    out.push_str("${ ");
                    out.push_str(&after[..ident]);
                    out.push_str(" }");
                    rest = &after[ident + 1..];
                } else {
                    out.push_str("${");
                    rest = after;
                }
            }
            out.push_str(rest);
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollar_brace_placeholders_are_escaped() {
        let body = "fetch(`${PREVIEW_URL}?u=${url}`) ${1x} ${a-b} ${ ok } $HOME ${_x9}";
        assert_eq!(
            escape_template(BodyTemplate::DollarBrace, body),
            "fetch(`${ PREVIEW_URL }?u=${ url }`) ${ 1x } ${a-b} ${ ok } $HOME ${ _x9 }"
        );
        assert_eq!(escape_template(BodyTemplate::None, body), body);
    }
}
