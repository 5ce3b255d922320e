//! `check tools`, its prose rule (issue 33): the content's prose names no tool that some runtime
//! has under another name or not at all. A frontmatter `tools:` list is mapped per runtime and
//! version by the converters; prose is copied as it is, so "use Grep and Glob" reached Claude Code
//! 2.1.117+ (which has neither), Gemini CLI, Codex and Pi, where no tool has that name.
//!
//! Input: the content's text files (content-relative path -> text) and the runtimes' manifests.
//! Output: one [`Finding`] per tool name used as a tool in prose, with file, line, the phrase that
//! names it, the runtimes that lack it and the fix.
//!
//! Which names: every name a runtime's `tools` table or one of its `tool_versions` ranges drops
//! or maps to another name (a change of case alone is not one: `Read` and Pi's `read`; nor is
//! Kimi's `module:Grep` path for `Grep`), so the set follows the manifests. Left out are the names whose use [`super::tools`] reads as a
//! declaration (`Task(` and the words `AskUserQuestion`, `WebSearch`, `WebFetch`, `TodoWrite`):
//! they are the orchestrator's protocol, a command or agent must list them among its tools, and
//! the references say what to do where a runtime lacks them (`agent-spawning.md`,
//! `ui-brand.md`, the researchers' "when WebSearch and WebFetch are unavailable").
//!
//! When a name is "used as a tool" (case-sensitive, a whole word: `Read-only` is none), once the
//! frontmatter and code are taken out (inline code spans, fenced blocks with a code language such
//! as `bash` or `yaml`, and `tools:` lines; untyped, `markdown` and `xml` fences hold prompts and
//! templates a model reads, so they are checked):
//! - a code span that is the name alone (`` `Grep` ``), or the name called (`Grep(`);
//! - after `use`, `uses`, `using`, `used`, `with`, `via` or `through` ("use Grep", "with Edit");
//! - before `tool(s)`, `call(s)`, `look-up(s)`, `lookup(s)` ("the Write tool", "one Bash call");
//! - next to another name of the tables, joined by `/`, `,`, `or` or `and` ("Grep/Glob", "Write
//!   or Edit", "Grep or Read");
//! - before `for`, unless the name starts a sentence, list item or table cell ("..., Glob for
//!   its basename");
//! - at the start of a sentence, list item or table cell, followed by more of it on its line
//!   ("Grep the sources for X.", "- Glob for *.md", "Bash: run the tests"), unless the name is
//!   also an everyday English verb ([`ENGLISH`]: "Read the plan", "Write for them", "Edit it in
//!   place" tell the model what to do, whatever its tool for it is called). A sentence-initial
//!   English verb counts only through the other patterns ("Read tool", "Write or Edit").
//!
//! Library code: it returns findings, the CLI prints them.

use std::collections::{BTreeMap, BTreeSet};

use msd_core::manifest::capability::Capability;
use msd_core::markup::{frontmatter, markers};

use super::tools::{CALL_TOOL, WORD_TOOLS};

/// Words before a name that make it a tool ("use Grep").
const BEFORE: &[&str] = &["use", "uses", "using", "used", "with", "via", "through"];
/// Words after a name that make it a tool ("the Write tool").
const AFTER: &[&str] = &["tool", "tools", "call", "calls", "look-up", "look-ups", "lookup", "lookups"];
/// Words joining two tool names ("Grep or Glob"); `/` and `,` join them too.
const JOINS: &[&str] = &["or", "and"];
/// Fence info strings whose blocks are prose a model reads (prompts, templates); any other
/// language marks code, which is left out.
const PROSE_FENCES: &[&str] = &["", "markdown", "md", "text", "xml"];
/// Frontmatter-style tool lists (mapped per runtime), wherever they stand.
const LIST_KEYS: &[&str] = &["tools:", "allowed-tools:", "disallowed-tools:"];
/// What ends a sentence, list marker or table cell before a sentence-initial word.
const OPENERS: &[char] = &['.', ':', ';', '!', '?', '|', '(', '*', '>', '#', '-'];
/// Tool names that are also everyday English verbs: at a sentence start they are the verb (an
/// instruction that holds on every runtime), not the tool. Not a list of tools (which come from
/// the manifests): a name not here that starts a sentence is the tool ("Grep the sources").
const ENGLISH: &[&str] = &["Read", "Write", "Edit"];

/// One runtime (and version range) that has no tool of a name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Lack {
    /// The runtime id.
    pub runtime: String,
    /// The version range where a `tool_versions` entry says so (`2.1.117+`).
    pub range: Option<String>,
    /// What the runtime calls it instead; `None` when it drops it.
    pub instead: Option<String>,
}

impl std::fmt::Display for Lack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.runtime)?;
        if let Some(r) = &self.range {
            write!(f, " {r}")?;
        }
        match &self.instead {
            Some(name) => write!(f, " ({name})"),
            None => write!(f, " (none)"),
        }
    }
}

/// The names of the runtimes' tool tables.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// The guarded names (see the module header), each with the runtimes that lack it.
    pub guarded: BTreeMap<String, Vec<Lack>>,
    /// Every name a table maps, guarded or not (the partners of a joined pair).
    pub all: BTreeSet<String>,
}

/// The names of the manifests' tool tables (see the module header).
pub(crate) fn names<'a>(runtimes: impl IntoIterator<Item = &'a Capability>) -> Names {
    let mut out = Names::default();
    for cap in runtimes {
        let ranges = cap.tool_versions.iter().map(|r| (Some(r.range()), &r.tools));
        for (range, table) in std::iter::once((None, &cap.tools)).chain(ranges) {
            for (name, to) in table {
                out.all.insert(name.clone());
                let protocol = name == CALL_TOOL || WORD_TOOLS.contains(&name.as_str());
                if protocol || to.as_deref().is_some_and(|t| seen_as(t).eq_ignore_ascii_case(name)) {
                    continue;
                }
                let lack = Lack { runtime: cap.id.clone(), range: range.clone(), instead: to.clone() };
                out.guarded.entry(name.clone()).or_default().push(lack);
            }
        }
    }
    for lacks in out.guarded.values_mut() {
        lacks.sort();
        lacks.dedup();
    }
    out
}

/// The name a model sees for a table entry: Kimi's entries are `module:Class` paths whose class
/// is the tool's name (`kimi_cli.tools.file:Grep` is `Grep`); any other entry is the name.
fn seen_as(entry: &str) -> &str {
    entry.rsplit_once(':').map_or(entry, |(_, name)| name)
}

/// A tool name used as a tool in prose.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub(crate) struct Finding {
    /// The file (content-relative).
    pub file: String,
    /// 1-based line of the name.
    pub line: usize,
    /// The tool name.
    pub tool: String,
    /// The words that make it a tool ("use Grep").
    pub phrase: String,
    /// What is wrong: which runtimes have no tool of that name.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: [tool-name] {}\n  fix: {}", self.file, self.line, self.message, self.fix)
    }
}

/// Runs the rule over a content tree's text files (Markdown only: the rest is data).
pub(crate) fn check(files: &BTreeMap<String, String>, names: &Names) -> Vec<Finding> {
    let mut out = Vec::new();
    for (file, text) in files.iter().filter(|(p, _)| p.ends_with(".md")) {
        let masked = prose(file, text, &names.all);
        for (tool, lacks) in &names.guarded {
            for (at, phrase) in uses(&masked, tool, &names.all) {
                let line = masked[..at].matches('\n').count() + 1;
                let who: Vec<String> = lacks.iter().map(ToString::to_string).collect();
                out.push(Finding {
                    file: file.clone(),
                    line,
                    tool: tool.clone(),
                    message: format!(
                        "`{tool}` is named as a tool (\"{phrase}\"), but {} runtime(s) have no tool of that name: {}",
                        lacks.len(),
                        who.join(", ")
                    ),
                    fix: "say what to do, not which tool (\"search the code for the definition\", \"find files by \
                          name\", \"edit it in place\"), or name the shell command meant (`grep -rn`, `find`); \
                          frontmatter tool lists are mapped per runtime, prose is not"
                        .into(),
                    phrase,
                });
            }
        }
    }
    out.sort();
    out
}

/// The uses of `tool` as a tool in masked prose: each byte offset and the phrase that makes it one.
fn uses(text: &str, tool: &str, all: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(tool) {
        let end = at + tool.len();
        let (before, after) = (&text[..at], &text[end..]);
        let word_char = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
        if before.chars().next_back().is_some_and(word_char) || after.chars().next().is_some_and(word_char) {
            continue;
        }
        let phrase = if before.ends_with('`') && after.starts_with('`') {
            Some(format!("`{tool}`"))
        } else if after.starts_with('(') {
            Some(format!("{tool}("))
        } else if let Some(w) = word_before(before).filter(|w| BEFORE.contains(&w.to_ascii_lowercase().as_str())) {
            Some(format!("{w} {tool}"))
        } else if let Some(w) = word_after(after).filter(|w| AFTER.contains(w)) {
            Some(format!("{tool} {w}"))
        } else if let Some((join, other)) = partner_after(after).filter(|(_, o)| all.contains(*o)) {
            Some(format!("{tool}{join}{other}"))
        } else if let Some((join, other)) = partner_before(before).filter(|(_, o)| all.contains(*o)) {
            Some(format!("{other}{join}{tool}"))
        } else if word_after(after) == Some("for") && !sentence_start(before) {
            Some(format!("{tool} for"))
        } else if sentence_start(before) && !ENGLISH.contains(&tool) {
            opening(after).map(|rest| format!("{tool}{rest}"))
        } else {
            None
        };
        out.extend(phrase.map(|p| (at, p)));
    }
    out
}

/// A letter of a word (`look-ups` is one word).
fn letter(c: char) -> bool {
    c.is_alphabetic() || c == '-'
}

/// The word right before `before`'s end, across spaces and line breaks.
fn word_before(before: &str) -> Option<&str> {
    let t = before.trim_end();
    let w = &t[t.trim_end_matches(letter).len()..];
    (!w.is_empty()).then_some(w)
}

/// The word at `after`'s start, across spaces and line breaks.
fn word_after(after: &str) -> Option<&str> {
    let t = after.trim_start();
    let w = &t[..t.len() - t.trim_start_matches(letter).len()];
    (!w.is_empty()).then_some(w)
}

/// A name joined after this one (`/Glob`, ` or Glob`, `, Glob`): the join as written, the name.
fn partner_after(after: &str) -> Option<(String, &str)> {
    let (join, rest) = if let Some(rest) = after.strip_prefix('/') {
        ("/".to_string(), rest)
    } else if let Some(rest) = after.strip_prefix(',') {
        (", ".to_string(), rest.trim_start())
    } else {
        let w = word_after(after).filter(|w| JOINS.contains(w))?;
        (format!(" {w} "), after.trim_start()[w.len()..].trim_start())
    };
    let name = &rest[..rest.len() - rest.trim_start_matches(char::is_alphanumeric).len()];
    let next = rest[name.len()..].chars().next();
    (!name.is_empty() && !next.is_some_and(|c| c == '-' || c == '_')).then_some((join, name))
}

/// A name joined before this one (`Grep/`, `Grep or `, `Read, `): the join as written, the name.
fn partner_before(before: &str) -> Option<(String, &str)> {
    let (join, rest) = if let Some(rest) = before.strip_suffix('/') {
        ("/".to_string(), rest)
    } else if let Some(rest) = before.trim_end().strip_suffix(',') {
        (", ".to_string(), rest)
    } else {
        let w = word_before(before).filter(|w| JOINS.contains(w))?;
        let t = before.trim_end();
        (format!(" {w} "), t[..t.len() - w.len()].trim_end())
    };
    let start = rest.trim_end_matches(char::is_alphanumeric).len();
    let name = &rest[start..];
    let prev = rest[..start].chars().next_back();
    (!name.is_empty() && !prev.is_some_and(|c| c == '-' || c == '_')).then_some((join, name))
}

/// What follows a sentence-initial name on its line and makes it the tool: a colon ("Bash:")
/// or the next word or token ("Grep the", "Glob for", "Glob `...`"); `None` when the name ends
/// its sentence or line (a heading "## Grep", "Grep." alone).
fn opening(after: &str) -> Option<String> {
    if after.starts_with(':') {
        return Some(":".into());
    }
    let rest = after.trim_start_matches([' ', '\t']);
    if rest.len() == after.len() {
        return None;
    }
    let token = rest.split(char::is_whitespace).next().unwrap_or("");
    if token.is_empty() || token.starts_with(['.', '!', '?', ';', ',', ')', '|']) {
        return None;
    }
    Some(match token.starts_with('`') {
        true => " `...`".into(),
        false => format!(" {}", token.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '*' && c != '/')),
    })
}

/// Whether a word after `before` starts a sentence, list item or table cell.
fn sentence_start(before: &str) -> bool {
    before.trim_end().chars().next_back().is_none_or(|c| OPENERS.contains(&c))
}

/// The text a model reads as prose: frontmatter, tool lists, code fences and the inside of code
/// spans blanked (byte for byte, so offsets and lines stay); a span that is a tool name alone is
/// kept with its backticks.
fn prose(path: &str, text: &str, all: &BTreeSet<String>) -> String {
    let body_at = match frontmatter::split(path, text) {
        Ok((Some(_), body)) => text.len() - body.len(),
        _ => 0,
    };
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<(markers::Fence, bool)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        let keep = if start < body_at {
            false
        } else if let Some((f, is_prose)) = fence {
            if markers::fence_closes(bare, f) {
                fence = None;
                false
            } else {
                is_prose
            }
        } else if let Some(f) = markers::fence_opener(bare) {
            let info = bare.trim_start().trim_start_matches(['`', '~']).trim();
            let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
            fence = Some((f, PROSE_FENCES.contains(&lang.as_str())));
            false
        } else {
            true
        };
        let listed = LIST_KEYS.iter().any(|k| bare.trim_start().starts_with(k));
        out.push_str(&if keep && !listed { blank_spans(line, all) } else { blank(line) });
    }
    out
}

/// `s` with every character but a line break turned into spaces, byte for byte.
fn blank(s: &str) -> String {
    s.chars().map(|c| if c == '\n' { "\n".to_string() } else { " ".repeat(c.len_utf8()) }).collect()
}

/// A line with the inside of its code spans blanked, except a span that is a tool name alone.
fn blank_spans(line: &str, all: &BTreeSet<String>) -> String {
    let parts: Vec<&str> = line.split('`').collect();
    let mut out = String::with_capacity(line.len());
    for (k, part) in parts.iter().enumerate() {
        if k > 0 {
            out.push('`');
        }
        // An odd part is inside a span when a closing backtick follows it.
        let in_span = k % 2 == 1 && k + 1 < parts.len();
        out.push_str(&if in_span && !all.contains(*part) { blank(part) } else { (*part).to_string() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> BTreeSet<String> {
        ["Read", "Write", "Edit", "Bash", "Grep", "Glob", "Task", "AskUserQuestion"].map(String::from).into()
    }

    /// The phrases `check` would report for `tool` in `text`.
    fn found(text: &str, tool: &str) -> Vec<String> {
        let all = all();
        uses(&prose("msd-core/workflows/x.md", text, &all), tool, &all).into_iter().map(|(_, p)| p).collect()
    }

    #[test]
    fn tool_names_every_pattern_is_a_use() {
        assert_eq!(found("Use Grep to find callers.\n", "Grep"), ["Use Grep"]);
        assert_eq!(found("Check it with\nGrep first.\n", "Grep"), ["with Grep"]);
        assert_eq!(found("Call `Grep` once.\n", "Grep"), ["`Grep`"]);
        assert_eq!(found("Run Grep(pattern).\n", "Grep"), ["Grep("]);
        assert_eq!(found("Write each plan with the Write tool.\n", "Write"), ["Write tool"]);
        assert_eq!(found("Run it as one Bash call.\n", "Bash"), ["Bash call"]);
        assert_eq!(found("at most three Grep or Glob look-ups\n", "Grep"), ["Grep or Glob"]);
        assert_eq!(found("at most five Grep/Glob look-ups\n", "Glob"), ["Glob look-ups"]);
        assert_eq!(found("verify it by Grep or Read.\n", "Read"), ["Grep or Read"]);
        assert_eq!(found("Never, Write, Edit\n", "Edit"), ["Write, Edit"]);
        assert_eq!(found("(`git log`, Glob for its basename)\n", "Glob"), ["Glob for"]);
        // At a sentence, list item or table cell start: a name that is no English verb.
        assert_eq!(found("Grep the sources for X.\n", "Grep"), ["Grep the"]);
        assert_eq!(found("Done. Glob for *.md next.\n", "Glob"), ["Glob for"]);
        assert_eq!(found("- Grep for the definition\n", "Grep"), ["Grep for"]);
        assert_eq!(found("| Glob `*.md` |\n", "Glob"), ["Glob `...`"]);
        assert_eq!(found("Bash: run the tests once.\n", "Bash"), ["Bash:"]);
        assert_eq!(found("1. MultiEdit the three files.\n", "MultiEdit"), ["MultiEdit the"]);
    }

    #[test]
    fn tool_names_verbs_code_and_words_are_not_uses() {
        for text in [
            "Read the plan. Write for them: decisions first.\n",
            "- Edit it in place. Read: the plan.\n",
            "## Grep\nGrep.\n",
            "| Read-only | Write-ahead |\n",
            "Run `grep -rn Grep src/` and `Read, Write`.\n",
            "```bash\nuse Grep for it\n```\n",
            "```yaml\ntools: Read, Grep\n```\n",
            "tools: Read, Grep, Glob\n",
            "---\nname: x\ndescription: use Grep\n---\nBody.\n",
            "Grepping and Globs are words; ReadFile is not Read.\n",
            "Ask with AskUserQuestion, spawn with Task.\n",
        ] {
            for tool in ["Read", "Write", "Edit", "Bash", "Grep", "Glob"] {
                assert!(found(text, tool).is_empty(), "{tool} in {text:?}: {:?}", found(text, tool));
            }
        }
    }

    #[test]
    fn tool_names_prompt_fences_are_prose_and_lines_are_kept() {
        let text = "Spawn:\n```\nTask(prompt=\"Use Glob on src/\")\n```\n\nThen use Edit.\n";
        let all = all();
        let masked = prose("x.md", text, &all);
        assert_eq!(masked.len(), text.len());
        let lines: Vec<usize> = ["Glob", "Edit"]
            .iter()
            .flat_map(|t| uses(&masked, t, &all))
            .map(|(at, _)| masked[..at].matches('\n').count() + 1)
            .collect();
        assert_eq!(lines, [3, 6]);
    }

    #[test]
    fn tool_names_follow_the_tables_and_leave_the_protocol_words() {
        let runtimes = crate::pipeline::load_runtimes(&Default::default()).expect("the shipped manifests load");
        let n = names(runtimes.iter().map(|r| &r.capability));
        let claude = Lack { runtime: "claude".into(), range: Some("2.1.117+".into()), instead: Some("Bash".into()) };
        assert!(n.guarded["Grep"].contains(&claude), "{:?}", n.guarded["Grep"]);
        assert!(n.guarded["Glob"].iter().any(|l| l.runtime == "pi" && l.instead.as_deref() == Some("find")));
        // A change of case is the same tool: Pi's `read` is Read; Kimi's `...file:Grep` is Grep.
        assert!(!n.guarded["Read"].iter().any(|l| l.runtime == "pi"), "{:?}", n.guarded["Read"]);
        assert!(!n.guarded["Grep"].iter().any(|l| l.runtime == "kimi"), "{:?}", n.guarded["Grep"]);
        assert!(n.guarded["Read"].iter().any(|l| l.runtime == "kimi"), "Kimi's Read is ReadFile");
        for protocol in ["Task", "AskUserQuestion", "WebSearch", "WebFetch", "TodoWrite"] {
            assert!(n.all.contains(protocol) && !n.guarded.contains_key(protocol), "{protocol}");
        }
    }
}
