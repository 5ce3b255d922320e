//! Converters that write TOML: `gemini-command` (`<dest>/<stem>.toml` with `description` and
//! `prompt`, eager `@path` lines in the `@{path}` injection syntax, arguments as `{{args}}` via
//! the manifest's rewrites) and `codex-agent` (`<dest>/<name>.toml` with `name`,
//! `description`, `sandbox_mode` and `developer_instructions`).
//!
//! TOML is written with `toml_edit`, so every string is escaped correctly whatever it holds.

use toml_edit::{DocumentMut, value};

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use crate::pipeline::load::{Agent, Command};
use msd_core::manifest::capability::ArtifactSpec;

fn render(pairs: &[(&str, &str)]) -> String {
    let mut doc = DocumentMut::new();
    for (k, v) in pairs {
        doc[k] = value(*v);
    }
    doc.to_string()
}

/// Rewrites eager `@<path>` include lines to Gemini's `@{<path>}` file injection.
fn gemini_includes(body: &str) -> String {
    body.split_inclusive('\n')
        .map(|line| {
            let (text, nl) = match line.strip_suffix('\n') {
                Some(t) => (t, "\n"),
                None => (line, ""),
            };
            match text.strip_prefix('@') {
                Some(path) if !path.is_empty() && !path.contains(char::is_whitespace) && !path.starts_with('{') => {
                    format!("@{{{path}}}{nl}")
                }
                _ => line.to_string(),
            }
        })
        .collect()
}

/// `<dest>/<stem>.toml`.
pub(super) fn gemini_command(ctx: &Ctx<'_>, spec: &ArtifactSpec, c: &Command) -> Result<EmittedFile, ConvertError> {
    // Rewrite first so the installed paths are what gets wrapped in `@{...}`.
    let prompt = gemini_includes(&ctx.rw.apply(&ctx.with_adapter(spec, &c.body)));
    let description = ctx.rw.apply(&ctx.description(&c.description));
    let text = render(&[("description", &description), ("prompt", &prompt)]);
    let path = format!("{}/{}{}.toml", spec.dest, spec.prefix, c.stem);
    let mut f = ctx.file(path, "", FileKind::Command, ctx.sources(Some(spec), &[&c.source]))?;
    f.bytes = text.into_bytes().into();
    Ok(f)
}

/// `<dest>/<name>.toml`.
pub(super) fn codex_agent(ctx: &Ctx<'_>, spec: &ArtifactSpec, a: &Agent) -> Result<EmittedFile, ConvertError> {
    let tools = a.frontmatter.get_list("tools").unwrap_or_default();
    let sandbox = if tools.iter().any(|t| spec.write_tools.contains(t)) { "workspace-write" } else { "read-only" };
    let instructions = ctx.rw.apply(&ctx.with_adapter(spec, &a.body));
    let description = ctx.rw.apply(&ctx.description(&a.description));
    let text = render(&[
        ("name", &a.stem),
        ("description", &description),
        ("sandbox_mode", sandbox),
        ("developer_instructions", &instructions),
    ]);
    let mut f =
        ctx.file(format!("{}/{}.toml", spec.dest, a.stem), "", FileKind::Agent, ctx.sources(Some(spec), &[&a.source]))?;
    f.bytes = text.into_bytes().into();
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn convert_gemini_includes_wrap_only_include_lines() {
        assert_eq!(gemini_includes("@/a/b.md\nsee @x\n@ no\n@{c}\n"), "@{/a/b.md}\nsee @x\n@ no\n@{c}\n");
    }

    #[test]
    fn convert_toml_strings_round_trip() {
        let tricky = "line '''\n\"quoted\" \\ back\ttab\n";
        let text = render(&[("prompt", tricky)]);
        let doc: DocumentMut = text.parse().unwrap();
        assert_eq!(doc["prompt"].as_str(), Some(tricky));
    }
}
