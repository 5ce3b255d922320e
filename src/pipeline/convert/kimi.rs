//! Converter `kimi-agents`: Kimi's YAML agent files.
//!
//! A root agent `<dest>/<name>.yaml` (name = the prefix without its trailing `-`) that extends
//! the default agent and lists every msd agent as a subagent, its system prompt
//! `<dest>/<name>.md` (the artifact's adapter data file), and per agent
//! `<dest>/subagents/<agent>.yaml` + `.md`, tools mapped to Kimi's tool paths by the manifest.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{ConvertError, Ctx, EmittedFile, FileKind};
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::ArtifactSpec;

#[derive(Serialize)]
struct AgentFile<'a> {
    version: u32,
    agent: AgentSpec<'a>,
}

#[derive(Serialize)]
struct AgentSpec<'a> {
    extend: &'a str,
    name: &'a str,
    system_prompt_path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    subagents: BTreeMap<&'a str, Subagent>,
}

#[derive(Serialize)]
struct Subagent {
    path: String,
    description: String,
}

fn yaml(v: &impl Serialize) -> String {
    yaml_serde::to_string(v).expect("agent files serialize")
}

pub(super) fn agents(ctx: &Ctx<'_>, spec: &ArtifactSpec) -> Result<Vec<EmittedFile>, ConvertError> {
    let root = spec.prefix.trim_end_matches('-');
    if root.is_empty() {
        return Err(ctx.layout_error("kimi-agents needs a prefix naming the root agent".into()));
    }
    let dest = spec.dest.as_str();
    let mut out = Vec::new();
    let mut subagents = BTreeMap::new();
    for a in &ctx.content.agents {
        let tools = ctx.map_tools(&a.frontmatter.get_list("tools").unwrap_or_default());
        let file = AgentFile {
            version: 1,
            agent: AgentSpec {
                extend: "default",
                name: &a.stem,
                system_prompt_path: format!("./{}.md", a.stem),
                tools: Some(tools),
                subagents: BTreeMap::new(),
            },
        };
        let sources = ctx.sources(Some(spec), &[&a.source]);
        out.push(ctx.file(
            format!("{dest}/subagents/{}.yaml", a.stem),
            &yaml(&file),
            FileKind::Agent,
            sources.clone(),
        )?);
        out.push(ctx.file(format!("{dest}/subagents/{}.md", a.stem), &a.body, FileKind::Agent, sources)?);
        subagents.insert(
            a.stem.as_str(),
            Subagent {
                path: format!("./subagents/{}.yaml", a.stem),
                description: ctx.rw.apply(&ctx.description(&a.description)),
            },
        );
    }
    let root_file = AgentFile {
        version: 1,
        agent: AgentSpec {
            extend: "default",
            name: root,
            system_prompt_path: format!("./{root}.md"),
            tools: None,
            subagents,
        },
    };
    let all: Vec<&RelPath> = ctx.content.agents.iter().map(|a| &a.source).collect();
    out.push(ctx.file(
        format!("{dest}/{root}.yaml"),
        &yaml(&root_file),
        FileKind::Agent,
        ctx.sources(Some(spec), &all),
    )?);
    let prompt = spec.adapter.as_deref().map(|a| ctx.data_file(a)).unwrap_or_default();
    out.push(ctx.file(format!("{dest}/{root}.md"), prompt, FileKind::Agent, ctx.sources(Some(spec), &[]))?);
    Ok(out)
}
