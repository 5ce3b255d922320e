//! `check tools`: every command may use the tools its workflows use, and every agent the tools
//! its text uses (issue 32). A command whose workflow spawns an agent without `Task` in its
//! `allowed-tools` fails at run time, and only on the branch that spawns (discuss-phase chaining
//! into plan-phase with `--auto`); this check finds that on the text.
//!
//! Input: the content's text files (content-relative path -> text). Output: one [`Finding`] per
//! tool a command or agent uses without being allowed it, each with its file, line, the use that
//! needs the tool (file:line, and the chain of workflows that led there) and the fix.
//!
//! What counts (the same detection for commands and agents):
//! - a **use**: `Task(` needs `Task`; the words `AskUserQuestion`, `WebSearch`, `WebFetch` and
//!   `TodoWrite` need themselves; a ```` ```bash ```` fence or a call of the installed helper
//!   needs `Bash`;
//! - a **command runs** the workflows its `@~/.claude/msd-core/workflows/<stem>.md` lines
//!   include; a workflow is its spine and every file under `workflows/<stem>/` (steps, detail
//!   parts); a workflow **chains into** another when, outside fenced blocks, it names
//!   `~/.claude/msd-core/workflows/<other>.md` (or a file under `workflows/<other>/`) in inline
//!   code: the orchestrator reads and follows it, so the command's tools must cover it too;
//! - an **agent** uses what its own text uses, plus what the workflows a spawn prompt tells it
//!   to follow use (a workflow path inside a fenced block that spawns it with
//!   `subagent_type="<agent>"`).
//!
//! Library code: it returns findings, the CLI prints them.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use msd_core::markup::frontmatter;

/// The tool whose call (`Task(`) is a use.
pub(crate) const CALL_TOOL: &str = "Task";
/// The tools whose name, as a whole word, is a use.
pub(crate) const WORD_TOOLS: &[&str] = &["AskUserQuestion", "WebSearch", "WebFetch", "TodoWrite"];
/// The installed workflows' path in content.
const WORKFLOWS_REF: &str = "~/.claude/msd-core/workflows/";
/// The helper's installed path in content.
const HELPER_REF: &str = "~/.claude/msd-core/bin/msd_run ";

/// One tool used without being allowed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) struct Finding {
    /// The command or agent file (content-relative).
    pub file: String,
    /// 1-based line of its tool list (1 when it has none).
    pub line: usize,
    /// The tool missing.
    pub tool: String,
    /// What is wrong: where the tool is used, and through which workflows.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: [tools] {}\n  fix: {}", self.file, self.line, self.message, self.fix)
    }
}

/// A tool use: the tool and its 1-based line.
type Use = (&'static str, usize);

/// Lines outside fenced blocks (1-based, text) and the fenced blocks (first line, lines).
struct Split<'a> {
    prose: Vec<(usize, &'a str)>,
    fences: Vec<(usize, Vec<&'a str>)>,
}

fn split(text: &str) -> Split<'_> {
    let mut out = Split { prose: Vec::new(), fences: Vec::new() };
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some((i + 1, Vec::new())),
            (Some(_), true) => out.fences.extend(open.take()),
            (Some((_, lines)), false) => lines.push(line),
            (None, false) => out.prose.push((i + 1, line)),
        }
    }
    out.fences.extend(open);
    out
}

/// The tool uses of a text (see the module header), first line of each tool.
fn uses(text: &str) -> BTreeMap<&'static str, usize> {
    let mut found: Vec<Use> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.contains(&format!("{CALL_TOOL}(")) {
            found.push((CALL_TOOL, i + 1));
        }
        for tool in WORD_TOOLS {
            let word = line.match_indices(tool).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + tool.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric()) && !after.is_some_and(|c| c.is_ascii_alphanumeric())
            });
            if word {
                found.push((tool, i + 1));
            }
        }
        if line.trim_start().starts_with("```bash") || line.contains(HELPER_REF) {
            found.push(("Bash", i + 1));
        }
    }
    let mut out = BTreeMap::new();
    for (tool, line) in found {
        out.entry(tool).or_insert(line);
    }
    out
}

/// The stem a `~/.claude/msd-core/workflows/...` reference names: `x` for `x.md` and `x/...`.
fn workflow_stems(s: &str) -> Vec<String> {
    s.match_indices(WORKFLOWS_REF)
        .filter_map(|(at, _)| {
            let rest = &s[at + WORKFLOWS_REF.len()..];
            let stem: String =
                rest.chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-').collect();
            let next = rest[stem.len()..].chars().next();
            (!stem.is_empty() && (rest[stem.len()..].starts_with(".md") || next == Some('/'))).then_some(stem)
        })
        .collect()
}

/// The workflows a workflow file chains into: inline-code references outside fenced blocks.
fn chains(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (line, l) in split(text).prose {
        for (k, span) in l.split('`').enumerate() {
            if k % 2 == 1 {
                out.extend(workflow_stems(span).into_iter().map(|s| (line, s)));
            }
        }
    }
    out
}

/// The workflows a spawn prompt tells `agent` to follow, per agent: (agent, stem, file, line).
fn spawned_follow(file: &str, text: &str) -> Vec<(String, String, String, usize)> {
    let mut out = Vec::new();
    for (first, lines) in split(text).fences {
        let block = lines.join("\n");
        let Some(at) = block.find("subagent_type=\"") else { continue };
        let agent: String = block[at + 15..].chars().take_while(|c| *c != '"').collect();
        for stem in workflow_stems(&block) {
            out.push((agent.clone(), stem, file.to_string(), first));
        }
    }
    out
}

/// The files of a workflow: its spine and everything under its directory.
fn workflow_files<'a>(files: &'a BTreeMap<String, String>, stem: &str) -> Vec<(&'a String, &'a String)> {
    let spine = format!("msd-core/workflows/{stem}.md");
    let dir = format!("msd-core/workflows/{stem}/");
    files.iter().filter(|(p, _)| **p == spine || (p.starts_with(&dir) && p.ends_with(".md"))).collect()
}

/// The frontmatter list `key` of a file and the line it starts on.
fn tool_list(path: &str, text: &str, key: &str) -> Option<(BTreeSet<String>, usize)> {
    let (fm, _) = frontmatter::split(path, text).ok()?;
    let list = fm?.get_list(key)?;
    let line = text.lines().position(|l| l.starts_with(&format!("{key}:"))).map_or(1, |i| i + 1);
    Some((list.into_iter().collect(), line))
}

/// Where a tool is first used on a command's path: the file, line and the chain to it.
struct Need {
    file: String,
    line: usize,
    chain: Vec<String>,
}

/// Runs the check over a content tree's text files.
pub(crate) fn check(files: &BTreeMap<String, String>) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut follow: BTreeMap<String, Vec<(String, String, usize)>> = BTreeMap::new();
    for (file, text) in files.iter().filter(|(p, _)| p.starts_with("msd-core/workflows/") && p.ends_with(".md")) {
        for (agent, stem, f, line) in spawned_follow(file, text) {
            follow.entry(agent).or_default().push((stem, f, line));
        }
    }
    for (file, text) in files.iter().filter(|(p, _)| p.starts_with("commands/msd/") && p.ends_with(".md")) {
        let Some((allowed, line)) = tool_list(file, text, "allowed-tools") else {
            out.push(Finding {
                file: file.clone(),
                line: 1,
                tool: String::new(),
                message: "has no `allowed-tools` list".into(),
                fix: "list the tools its workflow uses under `allowed-tools:` in the frontmatter".into(),
            });
            continue;
        };
        let mut needs: BTreeMap<&'static str, Need> = BTreeMap::new();
        let mut queue: VecDeque<(String, Vec<String>)> =
            workflow_stems(text).into_iter().map(|s| (s.clone(), vec![s])).collect();
        let mut seen = BTreeSet::new();
        while let Some((stem, chain)) = queue.pop_front() {
            if !seen.insert(stem.clone()) {
                continue;
            }
            for (wf, wtext) in workflow_files(files, &stem) {
                for (tool, l) in uses(wtext) {
                    needs.entry(tool).or_insert_with(|| Need { file: wf.clone(), line: l, chain: chain.clone() });
                }
                for (l, next) in chains(wtext) {
                    if !seen.contains(&next) {
                        let mut c = chain.clone();
                        c.push(format!("{next} (read at {wf}:{l})"));
                        queue.push_back((next, c));
                    }
                }
            }
        }
        for (tool, need) in needs.iter().filter(|(t, _)| !allowed.contains(**t)) {
            let via = if need.chain.len() > 1 {
                format!(", reached through {}", need.chain.join(" -> "))
            } else {
                String::new()
            };
            out.push(Finding {
                file: file.clone(),
                line,
                tool: tool.to_string(),
                message: format!("does not allow `{tool}`, which content/{}:{} uses{via}", need.file, need.line),
                fix: format!("add `{tool}` to its allowed-tools, or take the use out of the workflow"),
            });
        }
    }
    for (file, text) in files.iter().filter(|(p, _)| p.starts_with("agents/") && p.ends_with(".md")) {
        let name = file.trim_start_matches("agents/").trim_end_matches(".md");
        let Some((tools, line)) = tool_list(file, text, "tools") else { continue };
        let mut needs: BTreeMap<&'static str, (String, usize, String)> = BTreeMap::new();
        for (tool, l) in uses(text) {
            needs.entry(tool).or_insert((file.clone(), l, String::new()));
        }
        for (stem, spawner, at) in follow.get(name).into_iter().flatten() {
            for (wf, wtext) in workflow_files(files, stem) {
                for (tool, l) in uses(wtext) {
                    let why = format!(", which the spawn at content/{spawner}:{at} tells it to follow");
                    needs.entry(tool).or_insert((wf.clone(), l, why));
                }
            }
        }
        for (tool, (f, l, why)) in needs.iter().filter(|(t, _)| !tools.contains(**t)) {
            out.push(Finding {
                file: file.clone(),
                line,
                tool: tool.to_string(),
                message: format!("does not have `{tool}`, which content/{f}:{l} uses{why}"),
                fix: format!("add `{tool}` to its `tools:`, or take the use out of the text"),
            });
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
    }

    const CMD: &str = "---\nname: msd:a\nallowed-tools:\n  - Read\n  - Bash\n---\n@~/.claude/msd-core/workflows/a.md\n";

    #[test]
    fn tools_chain_reaches_the_spawn_of_a_followed_workflow() {
        let files = tree(&[
            ("commands/msd/a.md", CMD),
            (
                "msd-core/workflows/a.md",
                "```bash\nls\n```\nThen read `~/.claude/msd-core/workflows/b.md` and follow it.\n",
            ),
            ("msd-core/workflows/b.md", "Spawn:\n```\nTask(subagent_type=\"msd-x\")\n```\n"),
        ]);
        let f = check(&files);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].file.as_str(), f[0].line, f[0].tool.as_str()), ("commands/msd/a.md", 3, "Task"));
        assert!(f[0].message.contains("msd-core/workflows/b.md:3"), "{}", f[0].message);
        assert!(f[0].message.contains("a -> b (read at msd-core/workflows/a.md:4)"), "{}", f[0].message);
    }

    #[test]
    fn tools_paths_in_fences_and_prose_without_code_do_not_chain() {
        let files = tree(&[
            ("commands/msd/a.md", CMD),
            (
                "msd-core/workflows/a.md",
                "```\nTask(subagent_type=\"msd-x\", prompt=\"follow ~/.claude/msd-core/workflows/b.md\")\n```\n",
            ),
            ("msd-core/workflows/b.md", "Keep a TodoWrite list.\n"),
            ("agents/msd-x.md", "---\nname: msd-x\ntools: Read, Bash\n---\nNo tools named here.\n"),
        ]);
        let f = check(&files);
        let got: Vec<(&str, &str)> = f.iter().map(|x| (x.file.as_str(), x.tool.as_str())).collect();
        // The command spawns (Task) but does not follow b; the agent follows b (TodoWrite).
        assert_eq!(got, [("agents/msd-x.md", "TodoWrite"), ("commands/msd/a.md", "Task")]);
    }

    #[test]
    fn tools_words_need_whole_words() {
        let u = uses("AskUserQuestions are not AskUserQuestion.\nWebSearchy\n");
        assert_eq!(u.keys().copied().collect::<Vec<_>>(), ["AskUserQuestion"]);
        assert_eq!(u["AskUserQuestion"], 1);
    }
}
