//! `check references`: every reference the shipped content makes, checked by a program (issue 18).
//!
//! Input: the content's text files (content-relative path -> text), the core-relative file
//! lists of every runtime x scope install, the config-key schema (from the content) and the
//! profiles file. Output: one [`Finding`] per broken reference, each with its file, line, rule
//! and fix. The rules:
//!
//! - [`Rule::Helper`]: every call of the installed helper (`~/.claude/msd-core/bin/msd_run ...`,
//!   in inline code or a fenced block, `\` continuations joined) parses against msd_run's own
//!   clap definition ([`msd_run::RunCli`]); `query init.<stem>` names an installed workflow.
//!   Placeholders (`<key>`, `$ARGUMENTS`, `"$k"`) stand for a value and are not checked further.
//! - [`Rule::Path`]: every `~/.claude/msd-core/<path>` (a Read or an `@` include) exists in the
//!   installed tree of every runtime and scope.
//! - [`Rule::Agent`]: every spawned agent (`subagent_type="..."`, `query agent-skills <agent>`)
//!   is a shipped agent.
//! - [`Rule::Command`]: every command named as `/msd:<stem>` (a suggested next step) is shipped.
//! - [`Rule::ConfigKey`]: every key of a `config-get` / `config-set` call is a known key, and
//!   each literal value (and `--default`) is one the key allows.
//! - [`Rule::Answers`]: the `@file:` answer form is explained once, in [`ANSWERS_REF`]: no other
//!   file spells `@file:` (a paragraph that also names the reference points at it), and every workflow spine that calls the helper names that reference
//!   (its steps and detail parts are read under the spine, so they inherit it).
//! - [`Rule::Profile`]: the profiles file names only shipped commands, puts every command in
//!   exactly one profile, and each profile's closure (own commands, the profile it extends,
//!   closed over `requires`) holds every command whose workflow a member's workflow reads.
//!
//! Library code: it returns findings, the CLI prints them.

use std::collections::{BTreeMap, BTreeSet};

use clap::Parser;

use msd_core::installed::config_keys::{SCHEMA_PATH, Schema};
use msd_run::query::Query;
use msd_run::{RunCli, RunCommand};

/// The installed path of the core in content (rewritten per runtime at install).
pub const CORE_REF: &str = "~/.claude/msd-core/";
/// The helper's installed path in content.
pub const HELPER_REF: &str = "~/.claude/msd-core/bin/msd_run";
/// The one reference that says how to read a helper answer (the `@file:` spill form, exit codes).
pub const ANSWERS_REF: &str = "references/helper-answers.md";
/// The spill form of a helper answer (issue 20): one line, `@file:<absolute path>`.
pub const SPILL_FORM: &str = "@file:";

/// Which rule a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A helper call that does not parse, or names no installed workflow.
    Helper,
    /// A core path missing from some runtime's installed tree.
    Path,
    /// A spawned agent that is not shipped.
    Agent,
    /// A named command that is not shipped.
    Command,
    /// An unknown config key, or a value the key does not allow.
    ConfigKey,
    /// The `@file:` form explained outside its one reference, or a helper-calling workflow that
    /// does not point at it.
    Answers,
    /// A profile problem.
    Profile,
}

impl Rule {
    /// The rule's name in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Helper => "helper",
            Rule::Path => "path",
            Rule::Agent => "agent",
            Rule::Command => "command",
            Rule::ConfigKey => "config-key",
            Rule::Answers => "answers",
            Rule::Profile => "profile",
        }
    }
}

/// One broken reference.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Finding {
    /// The file (content-relative; the profiles file by its own path).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The rule.
    pub rule: Rule,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: [{}] {}\n  fix: {}", self.file, self.line, self.rule.as_str(), self.message, self.fix)
    }
}

/// What the check reads.
#[derive(Debug, Default)]
pub struct Inputs {
    /// Content text files by content-relative path.
    pub files: BTreeMap<String, String>,
    /// `<runtime>-<scope>` -> the core-relative paths that install holds.
    pub installed: BTreeMap<String, BTreeSet<String>>,
    /// The profiles file: its path for messages and its text; `None` when there is none.
    pub profiles: Option<(String, String)>,
}

/// A word of a helper call.
#[derive(Debug, Clone, PartialEq)]
enum Word {
    Literal(String),
    /// `<...>`, `$X`, `"$x"`: a value the caller fills in (its text, quotes removed).
    Placeholder(String),
}

/// The words of a command line up to the first shell operator (a pipe, `;`, `&&`, a
/// redirection, the `)` closing a `$(...)`, a comment).
fn words(s: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == '\\') {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if matches!(c, '|' | ';' | '&' | '>' | ')' | '#') {
            break;
        }
        if c == '<' {
            let mut w = String::new();
            for c in chars.by_ref() {
                w.push(c);
                if c == '>' {
                    break;
                }
            }
            out.push(Word::Placeholder(w));
            continue;
        }
        let mut w = String::new();
        let mut dynamic = false;
        while let Some(&c) = chars.peek() {
            match c {
                '\'' | '"' => {
                    chars.next();
                    for q in chars.by_ref() {
                        if q == c {
                            break;
                        }
                        dynamic |= c == '"' && q == '$';
                        w.push(q);
                    }
                }
                c if c.is_whitespace() || matches!(c, '|' | ';' | '&' | '>' | ')') => break,
                _ => {
                    dynamic |= c == '$' || c == '`';
                    w.push(c);
                    chars.next();
                }
            }
        }
        if chars.peek() == Some(&'>') && w.bytes().all(|b| b.is_ascii_digit()) {
            break; // `2>/dev/null`, `2>&1`
        }
        out.push(if dynamic { Word::Placeholder(w) } else { Word::Literal(w) });
    }
    out
}

/// Whether the byte offset `at` of `line` is inside an inline code span.
fn in_inline_code(line: &str, at: usize) -> bool {
    line[..at].matches('`').count() % 2 == 1
}

/// Every helper call: (line, text after `msd_run`).
fn helper_calls(text: &str) -> Vec<(usize, String)> {
    helper_calls_of(text, HELPER_REF)
}

/// One helper call of a text: its 1-based line and its words up to the first shell operator
/// (quotes removed, `\` continuations and wrapped inline spans joined). A word marked `true` is
/// one the caller fills in (`<phase>`, `$ARGUMENTS`, `"$k"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// 1-based line of the call.
    pub line: usize,
    /// (word, is a shell placeholder).
    pub words: Vec<(String, bool)>,
}

/// Every call of the helper installed at `helper` (the content's `~/.claude/msd-core/bin/msd_run`,
/// or an installed tree's rewritten path) in `text`: what the spawn tests run.
pub fn invocations(text: &str, helper: &str) -> Vec<Invocation> {
    helper_calls_of(text, helper)
        .into_iter()
        .map(|(line, call)| Invocation {
            line,
            words: words(&call)
                .into_iter()
                .map(|w| match w {
                    Word::Literal(s) => (s, false),
                    Word::Placeholder(s) => (s, true),
                })
                .collect(),
        })
        .collect()
}

fn helper_calls_of(text: &str, helper: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut from = 0;
        while let Some(pos) = line[from..].find(helper).map(|p| p + from) {
            let after = &line[pos + helper.len()..];
            from = pos + helper.len();
            if !after.starts_with(' ') || !after[1..].starts_with(|c: char| c.is_ascii_lowercase() || c == '-') {
                continue;
            }
            let mut j = i;
            let call = if in_inline_code(line, pos) {
                // An inline span may wrap onto the next lines: read up to its closing backtick.
                let mut call = after.to_string();
                while !call.contains('`') && j + 1 < lines.len() && !lines[j + 1].trim().is_empty() {
                    j += 1;
                    call = format!("{call} {}", lines[j]);
                }
                call.split('`').next().unwrap_or_default().to_string()
            } else {
                let mut call = after.to_string();
                while call.trim_end().ends_with('\\') && j + 1 < lines.len() {
                    j += 1;
                    call = format!("{} {}", call.trim_end().trim_end_matches('\\'), lines[j]);
                }
                call
            };
            out.push((i + 1, call));
        }
    }
    out
}

/// Occurrences of `pat` followed by a name (`[a-z0-9-]`): (line, name).
fn names_after(text: &str, pat: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (pos, _) in line.match_indices(pat) {
            let before = &line[..pos];
            if before.trim_end().ends_with("<!--") {
                continue; // `<!-- /msd:section -->` is a marker, not a command
            }
            let name: String = line[pos + pat.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect();
            let name = name.trim_end_matches('-').to_string();
            // The markup's own names (`msd:section`, `msd:protected`) are markers, not commands.
            if pat == "/msd:" && MARKER_NAMES.contains(&name.as_str()) {
                continue;
            }
            if !name.is_empty() {
                out.push((i + 1, name));
            }
        }
    }
    out
}

/// The names of the `msd:` markers (`crates/msd-core/src/markup/markers.rs`).
const MARKER_NAMES: &[&str] = &["section", "protected"];

/// Core paths referenced: (line, core-relative path).
fn core_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for (pos, _) in line.match_indices(CORE_REF) {
            let path: String = line[pos + CORE_REF.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'))
                .collect();
            let path = path.trim_end_matches('.').to_string();
            // Placeholders (`<stem>`, `{x}`, `*`) cut the path short: check what is certain only
            // when it names a file or a whole directory.
            let rest = &line[pos + CORE_REF.len() + path.len()..];
            if path.is_empty() || path == "bin/msd_run" || rest.starts_with(['<', '{', '*', '$']) {
                continue;
            }
            out.push((i + 1, path));
        }
    }
    out
}

/// The context of a run: what exists.
struct Known<'a> {
    agents: BTreeSet<String>,
    commands: BTreeSet<String>,
    workflows: BTreeSet<String>,
    schema: Option<Schema>,
    installed: &'a BTreeMap<String, BTreeSet<String>>,
}

fn stem_of<'a>(path: &'a str, dir: &str, ext: &str) -> Option<&'a str> {
    path.strip_prefix(dir)?.strip_suffix(ext).filter(|s| !s.contains('/'))
}

/// Runs every rule.
pub fn check(inputs: &Inputs) -> Vec<Finding> {
    let f = &inputs.files;
    let known = Known {
        agents: f.keys().filter_map(|p| stem_of(p, "agents/", ".md")).map(str::to_string).collect(),
        commands: f.keys().filter_map(|p| stem_of(p, "commands/msd/", ".md")).map(str::to_string).collect(),
        workflows: f.keys().filter_map(|p| stem_of(p, "msd-core/workflows/", ".md")).map(str::to_string).collect(),
        schema: f.get(&format!("msd-core/{SCHEMA_PATH}")).and_then(|t| Schema::parse(SCHEMA_PATH, t).ok()),
        installed: &inputs.installed,
    };
    let mut out = Vec::new();
    for (file, text) in f.iter().filter(|(p, _)| p.ends_with(".md")) {
        let mut push = |line: usize, rule: Rule, message: String, fix: String| {
            out.push(Finding { file: file.clone(), line, rule, message, fix });
        };
        for (line, call) in helper_calls(text) {
            check_call(&known, &call, &mut |rule, message, fix| push(line, rule, message, fix));
        }
        for (line, path) in core_paths(text) {
            let missing: Vec<&str> = known
                .installed
                .iter()
                .filter(|(_, files)| {
                    let dir = format!("{}/", path.trim_end_matches('/'));
                    !files.contains(&path) && files.range(dir.clone()..).next().is_none_or(|p| !p.starts_with(&dir))
                })
                .map(|(k, _)| k.as_str())
                .collect();
            if !missing.is_empty() {
                push(
                    line,
                    Rule::Path,
                    format!("`{CORE_REF}{path}` is not in the installed tree of {}", missing.join(", ")),
                    format!("add content/msd-core/{path}, or point at a file that exists"),
                );
            }
        }
        for (line, agent) in names_after(text, "subagent_type=\"") {
            if !known.agents.contains(&agent) {
                push(line, Rule::Agent, format!("spawns `{agent}`, which is not a shipped agent"), agent_fix(&known));
            }
        }
        let answers_file = format!("msd-core/{ANSWERS_REF}");
        if *file != answers_file {
            let lines: Vec<&str> = text.lines().collect();
            // A paragraph (lines up to a blank one) that names the reference points at it; that
            // is not a second explanation.
            let paragraph_names_ref = |i: usize| {
                let start = lines[..i].iter().rposition(|l| l.trim().is_empty()).map_or(0, |b| b + 1);
                let end = lines[i..].iter().position(|l| l.trim().is_empty()).map_or(lines.len(), |e| i + e);
                lines[start..end].iter().any(|l| l.contains(ANSWERS_REF))
            };
            for (i, l) in lines.iter().enumerate() {
                if l.contains(SPILL_FORM) && !paragraph_names_ref(i) {
                    push(
                        i + 1,
                        Rule::Answers,
                        format!(
                            "spells out the `{SPILL_FORM}` answer form, which only {CORE_REF}{ANSWERS_REF} explains"
                        ),
                        format!("say it once: drop the explanation here and point at `{CORE_REF}{ANSWERS_REF}`"),
                    );
                }
            }
        }
        let is_spine = stem_of(file, "msd-core/workflows/", ".md").is_some();
        if is_spine
            && !text.contains(&format!("{CORE_REF}{ANSWERS_REF}"))
            && let Some((line, _)) = helper_calls(text).first()
        {
            push(
                *line,
                Rule::Answers,
                format!(
                    "calls the helper but never names `{CORE_REF}{ANSWERS_REF}`, so an `{SPILL_FORM}` answer is not read"
                ),
                format!("add `{CORE_REF}{ANSWERS_REF}` to the workflow's <required_reading>"),
            );
        }
        for (line, cmd) in names_after(text, "/msd:") {
            if !known.commands.contains(&cmd) {
                push(
                    line,
                    Rule::Command,
                    format!("names `/msd:{cmd}`, which is not a shipped command"),
                    format!("add content/commands/msd/{cmd}.md, or name one of: {}", join(&known.commands)),
                );
            }
        }
    }
    if let Some((path, text)) = &inputs.profiles {
        check_profiles(&known, f, path, text, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

fn agent_fix(known: &Known) -> String {
    format!("spawn one of: {}", join(&known.agents))
}

fn check_call(known: &Known, call: &str, push: &mut dyn FnMut(Rule, String, String)) {
    let words = words(call);
    // `$ARGUMENTS` (and any placeholder) at the end may expand to nothing: drop trailing ones
    // after `init.<stem>`, where they are the workflow's arguments; elsewhere fill in a value.
    let is_init = matches!(words.get(1), Some(Word::Literal(w)) if w.starts_with("init."));
    let argv: Vec<String> = words
        .iter()
        .filter(|w| !(is_init && matches!(w, Word::Placeholder(_))))
        .map(|w| match w {
            Word::Literal(s) => s.clone(),
            Word::Placeholder(_) => PLACEHOLDER.to_string(),
        })
        .collect();
    let shown = format!("msd_run {}", argv.join(" "));
    let cli = match RunCli::try_parse_from(std::iter::once("msd_run".to_string()).chain(argv.iter().cloned())) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => return,
        // `msd_run task resolve-content` alone, in prose, names the subcommand: not a call.
        Err(e)
            if e.kind() == clap::error::ErrorKind::MissingRequiredArgument
                && words.iter().all(|w| matches!(w, Word::Literal(s) if !s.starts_with('-')))
                && words.len() <= 2 =>
        {
            return;
        }
        Err(e) => {
            let first = e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
            let sub = argv.iter().take_while(|w| !w.starts_with('-')).take(2).cloned().collect::<Vec<_>>().join(" ");
            push(
                Rule::Helper,
                format!("`{shown}` does not parse: {first}"),
                format!("write the call as `msd_run {sub} --help` describes it"),
            );
            return;
        }
    };
    let placeholder = |s: &str| s == PLACEHOLDER;
    match &cli.command {
        RunCommand::Query(Query::Other(w)) => {
            let name = w.first().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            match name.strip_prefix("init.") {
                Some(stem) if known.workflows.contains(stem) => {}
                Some(stem) => push(
                    Rule::Helper,
                    format!("`{shown}`: no workflow `{stem}` is installed"),
                    format!("add content/msd-core/workflows/{stem}.md, or query one of: {}", join(&known.workflows)),
                ),
                None => push(
                    Rule::Helper,
                    format!("`{shown}`: unknown query `{name}`"),
                    "see `msd_run query --help`".into(),
                ),
            }
        }
        RunCommand::Query(Query::AgentSkills(a)) if !placeholder(&a.agent) && !known.agents.contains(&a.agent) => {
            push(Rule::Agent, format!("`{shown}`: `{}` is not a shipped agent", a.agent), agent_fix(known));
        }
        RunCommand::ConfigGet(a) => check_key(known, &a.key, a.default.as_deref(), &shown, push),
        RunCommand::ConfigSet(a) => check_key(known, &a.key, Some(&a.value), &shown, push),
        _ => {}
    }
}

/// What a placeholder word is parsed as.
const PLACEHOLDER: &str = "PLACEHOLDER";

fn check_key(known: &Known, key: &str, value: Option<&str>, shown: &str, push: &mut dyn FnMut(Rule, String, String)) {
    let Some(schema) = &known.schema else { return };
    if key == PLACEHOLDER {
        return;
    }
    match schema.lookup(key) {
        None => push(
            Rule::ConfigKey,
            format!("`{shown}`: `{key}` is not a known config key"),
            format!("use one of: {}", schema.key_list()),
        ),
        Some((_, Some(agent))) if !known.agents.contains(&agent) => push(
            Rule::ConfigKey,
            format!("`{shown}`: `{key}` names `{agent}`, which is not a shipped agent"),
            agent_fix(known),
        ),
        Some((spec, _)) => {
            if let Some(v) = value.filter(|v| *v != PLACEHOLDER)
                && let Err(e) = spec.parse(v)
            {
                push(
                    Rule::ConfigKey,
                    format!("`{shown}`: `{v}` is not a value `{key}` allows: {e}"),
                    format!("allowed: {}", spec.allowed()),
                );
            }
        }
    }
}

/// The line of the first `"name"` in `text` (1 when absent).
fn line_of(text: &str, name: &str) -> usize {
    let quoted = format!("\"{name}\"");
    text.lines().position(|l| l.contains(&quoted)).map_or(1, |i| i + 1)
}

#[derive(serde::Deserialize)]
struct ProfilesFile {
    profiles: Vec<Profile>,
    #[serde(default)]
    requires: BTreeMap<String, Vec<String>>,
}

#[derive(serde::Deserialize)]
struct Profile {
    name: String,
    extends: Option<String>,
    commands: Vec<String>,
}

fn check_profiles(known: &Known, files: &BTreeMap<String, String>, path: &str, text: &str, out: &mut Vec<Finding>) {
    let mut push = |line: usize, message: String, fix: String| {
        out.push(Finding { file: path.to_string(), line, rule: Rule::Profile, message, fix });
    };
    let doc: ProfilesFile = match serde_json::from_str(text) {
        Ok(d) => d,
        Err(e) => {
            push(e.line(), format!("not a profiles file: {e}"), "fix the JSON".into());
            return;
        }
    };
    let mut owner: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for p in &doc.profiles {
        for c in &p.commands {
            owner.entry(c).or_default().push(&p.name);
        }
        if let Some(e) = &p.extends
            && !doc.profiles.iter().any(|q| &q.name == e)
        {
            push(
                line_of(text, e),
                format!("profile `{}` extends `{e}`, which is not a profile", p.name),
                "extend a declared profile".into(),
            );
        }
    }
    let mentioned = owner
        .keys()
        .copied()
        .chain(doc.requires.iter().flat_map(|(k, v)| std::iter::once(k.as_str()).chain(v.iter().map(String::as_str))));
    for c in mentioned.collect::<BTreeSet<_>>() {
        if !known.commands.contains(c) {
            push(
                line_of(text, c),
                format!("`{c}` is not a shipped command"),
                "remove it, or add content/commands/msd/<it>.md".into(),
            );
        }
    }
    for c in &known.commands {
        match owner.get(c.as_str()).map(Vec::len).unwrap_or(0) {
            1 => {}
            0 => push(
                1,
                format!("command `{c}` belongs to no profile"),
                "add it to the `commands` of one profile".into(),
            ),
            _ => push(
                line_of(text, c),
                format!("command `{c}` belongs to {} profiles", owner[c.as_str()].join(", ")),
                "keep it in one profile's own list".into(),
            ),
        }
    }
    // The workflows a command's workflow files read: `workflows/<other>.md` or `workflows/<other>/`.
    let reads = |c: &str| -> Vec<(String, usize, String)> {
        let mut found = Vec::new();
        for (file, t) in files.iter().filter(|(p, _)| {
            p.as_str() == format!("msd-core/workflows/{c}.md") || p.starts_with(&format!("msd-core/workflows/{c}/"))
        }) {
            for (line, p) in core_paths(t) {
                let other = p.strip_prefix("workflows/").and_then(|r| r.split(['/', '.']).next()).unwrap_or_default();
                if other != c && known.commands.contains(other) {
                    found.push((file.clone(), line, other.to_string()));
                }
            }
        }
        found
    };
    for p in &doc.profiles {
        let mut set: BTreeSet<String> = BTreeSet::new();
        let mut chain = Some(p);
        let mut seen = BTreeSet::new();
        while let Some(q) = chain {
            if !seen.insert(q.name.clone()) {
                break;
            }
            set.extend(q.commands.iter().cloned());
            chain = q.extends.as_ref().and_then(|e| doc.profiles.iter().find(|r| &r.name == e));
        }
        let mut todo: Vec<String> = set.iter().cloned().collect();
        while let Some(c) = todo.pop() {
            for r in doc.requires.get(&c).into_iter().flatten() {
                if set.insert(r.clone()) {
                    todo.push(r.clone());
                }
            }
        }
        for c in &set {
            for (file, line, other) in reads(c) {
                if !set.contains(&other) {
                    push(
                        line_of(text, &p.name),
                        format!(
                            "profile `{}` is not closed: `{c}` reads the workflow of `{other}` (content/{file}:{line}), which the profile does not install",
                            p.name
                        ),
                        format!("add \"{other}\" to requires.{c} in {path}"),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
