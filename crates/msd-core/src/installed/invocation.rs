//! The arguments of a workflow invocation: the grammar each command declares in its
//! `argument-hint`, and the parse of one `msd_run query init.<stem> [args...]` against it.
//!
//! Why the hint: it is the one place the content already says which flags take a value
//! (`[--prd <file>]`, `[--wave N]`) and where a phase number goes (`[phase]`, `<after>`), and the
//! same flag differs between workflows (`--auto` is a switch for plan-phase and takes an idea
//! file for new-project). Reading the hint keeps the help text the user sees and the parse the
//! workflow gets from drifting apart. `msd-install gen section-manifest` stores each command's
//! parsed [`ArgSpec`] beside its sections, because installed command files take a different form
//! in every runtime.
//!
//! Hint grammar (whitespace-separated tokens, `[...]` optional, `<...>` a placeholder):
//! - `--name` followed, inside the same bracket group, by a token that is not a flag declares a
//!   value flag; the value is optional when that token opens its own `[`. `[--name]` is a switch.
//! - A value placeholder `N` is a non-negative integer, `a|b|c` a choice, `phase` or `after` a
//!   phase number; anything else is free text.
//! - When the first positional placeholder is `phase` or `after`, the first positional argument
//!   is the phase. A value flag whose placeholder is `phase` carries the phase instead.
//!
//! Invocation rules: a flag is true when its token was passed (`--x` or `--x=v`), never "present
//! with false"; a required value that is missing or does not fit its placeholder is a usage
//! error; an optional value is taken only when the next token fits. A phase number is
//! `\d+(\.\d+)?`; it is normalised (`03.1` -> `3.1`, padded `03.1`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Placeholder names that stand for a phase number.
const PHASE_PLACEHOLDERS: [&str; 2] = ["phase", "after"];

/// The parsed argument grammar of one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// The hint as written in the command's frontmatter.
    pub hint: String,
    /// Where the phase number comes from: `"positional"`, a value flag (`"--forensic"`), or
    /// `null` when the command takes no phase.
    pub phase: Option<String>,
    /// Value flags and their placeholders as written (`"--prd": "<file>"`, `"--wave": "N"`,
    /// `"--forensic": "[phase]"`; brackets mean the value is optional).
    pub value_flags: BTreeMap<String, String>,
}

/// The `phase` value meaning "the first positional argument".
pub const PHASE_POSITIONAL: &str = "positional";

fn core(token: &str) -> &str {
    token.trim_start_matches('[').trim_end_matches(',').trim_end_matches(']').trim_end_matches(',')
}

fn placeholder_name(p: &str) -> &str {
    core(p).trim_start_matches('<').trim_end_matches('>')
}

/// Parses an `argument-hint`. The error says what is wrong.
pub fn parse_hint(hint: &str) -> Result<ArgSpec, String> {
    let tokens: Vec<&str> = hint.split_whitespace().collect();
    let mut depth: i64 = 0;
    for t in &tokens {
        depth += t.matches('[').count() as i64;
        depth -= t.matches(']').count() as i64;
        if depth < 0 {
            return Err(format!("`]` without an opening `[` in `{hint}`"));
        }
    }
    if depth != 0 {
        return Err(format!("unclosed `[` in `{hint}`"));
    }
    let mut spec = ArgSpec { hint: hint.to_string(), phase: None, value_flags: BTreeMap::new() };
    let mut first_positional = true;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let c = core(t);
        if let Some(name) = c.strip_prefix("--").map(|n| n.split('=').next().unwrap_or_default()) {
            if name.is_empty() {
                return Err(format!("a bare `--` in `{hint}`"));
            }
            let flag = format!("--{name}");
            let closed = t.ends_with(']');
            if let Some(next) = tokens.get(i + 1).filter(|n| {
                let nc = core(n);
                !closed && !nc.is_empty() && !nc.starts_with('-') && nc != "|"
            }) {
                let optional = next.starts_with('[');
                let placeholder = placeholder_name(next).to_string();
                if PHASE_PLACEHOLDERS.contains(&placeholder.as_str()) {
                    spec.phase = Some(flag.clone());
                }
                let shown = if optional { format!("[{}]", core(next)) } else { core(next).to_string() };
                spec.value_flags.insert(flag, shown);
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        if first_positional && PHASE_PLACEHOLDERS.contains(&placeholder_name(t)) && spec.phase.is_none() {
            spec.phase = Some(PHASE_POSITIONAL.to_string());
        }
        first_positional = false;
        i += 1;
    }
    Ok(spec)
}

/// What kind of value a placeholder accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Accepts {
    Phase,
    Integer,
    Choice(Vec<String>),
    Text,
}

fn accepts(placeholder: &str) -> (Accepts, bool) {
    let optional = placeholder.starts_with('[');
    let name = placeholder_name(placeholder);
    let kind = if PHASE_PLACEHOLDERS.contains(&name) {
        Accepts::Phase
    } else if name == "N" {
        Accepts::Integer
    } else if !placeholder.contains('<') && name.contains('|') {
        Accepts::Choice(name.split('|').map(str::to_string).collect())
    } else {
        Accepts::Text
    };
    (kind, optional)
}

/// A phase number as typed, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseNumber {
    int: String,
    dec: Option<String>,
}

impl PhaseNumber {
    /// Parses `\d+(\.\d+)?` (`3`, `03`, `3.1`, `03.1`, `4.0`).
    pub fn parse(s: &str) -> Option<PhaseNumber> {
        let (int, dec) = match s.split_once('.') {
            Some((i, d)) => (i, Some(d)),
            None => (s, None),
        };
        let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || dec.is_some_and(|d| !digits(d)) {
            return None;
        }
        let int = int.trim_start_matches('0');
        Some(PhaseNumber { int: if int.is_empty() { "0".into() } else { int.into() }, dec: dec.map(str::to_string) })
    }

    /// Unpadded: `3`, `3.1`.
    pub fn number(&self) -> String {
        match &self.dec {
            Some(d) => format!("{}.{d}", self.int),
            None => self.int.clone(),
        }
    }

    /// The directory form: integer part padded to two digits (`03`, `03.1`, `100`).
    pub fn padded(&self) -> String {
        let int = if self.int.len() < 2 { format!("0{}", self.int) } else { self.int.clone() };
        match &self.dec {
            Some(d) => format!("{int}.{d}"),
            None => int,
        }
    }

    /// Whether this is a decimal (gap-closure) phase.
    pub fn is_decimal(&self) -> bool {
        self.dec.is_some()
    }

    /// Numeric order: integer part, then decimal part as an integer (3 < 3.1 < 3.2 < 3.10 < 4).
    pub fn numeric_cmp(&self, other: &PhaseNumber) -> Ordering {
        fn num(a: &str, b: &str) -> Ordering {
            let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
            a.len().cmp(&b.len()).then_with(|| a.cmp(b))
        }
        num(&self.int, &other.int).then_with(|| match (&self.dec, &other.dec) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => num(a, b),
        })
    }
}

/// A parsed invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invocation {
    /// Flag tokens passed, in order of first appearance, without values (`--prd`).
    pub flags: Vec<String>,
    /// Flag values by flag (`--prd` -> `"x.md"`, `--wave` -> `2`).
    pub values: BTreeMap<String, serde_json::Value>,
    /// The phase argument, when one was given.
    pub phase: Option<PhaseNumber>,
    /// Positional arguments that are not the phase.
    pub positionals: Vec<String>,
}

fn fits(kind: &Accepts, v: &str) -> Option<serde_json::Value> {
    match kind {
        Accepts::Phase => PhaseNumber::parse(v).map(|_| serde_json::Value::String(v.to_string())),
        Accepts::Integer => v.parse::<u64>().ok().map(serde_json::Value::from),
        Accepts::Choice(c) => c.iter().any(|x| x == v).then(|| serde_json::Value::String(v.to_string())),
        Accepts::Text => (!v.is_empty()).then(|| serde_json::Value::String(v.to_string())),
    }
}

fn expectation(kind: &Accepts) -> String {
    match kind {
        Accepts::Phase => "a phase number such as 3 or 3.1".into(),
        Accepts::Integer => "a whole number".into(),
        Accepts::Choice(c) => format!("one of {}", c.join(", ")),
        Accepts::Text => "a value".into(),
    }
}

/// Parses `args` against `spec`. Without a spec (a workflow no command invokes) every flag is a
/// switch and a first positional that is a phase number is the phase.
pub fn parse(spec: Option<&ArgSpec>, args: &[String]) -> Result<Invocation, String> {
    let mut inv = Invocation::default();
    let mut positionals: Vec<String> = Vec::new();
    let mut i = 0;
    let mut only_positionals = false;
    let usage = |s: &ArgSpec| if s.hint.is_empty() { String::new() } else { format!(" (usage: {})", s.hint) };
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_positionals || !a.starts_with("--") {
            positionals.push(a.clone());
            continue;
        }
        if a == "--" {
            only_positionals = true;
            continue;
        }
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        if !inv.flags.contains(&flag) {
            inv.flags.push(flag.clone());
        }
        let declared = spec.and_then(|s| s.value_flags.get(&flag).map(|p| (s, accepts(p))));
        match (declared, inline) {
            (Some((s, (kind, _))), Some(v)) => {
                let value = fits(&kind, &v)
                    .ok_or_else(|| format!("{flag} takes {}, not `{v}`{}", expectation(&kind), usage(s)))?;
                inv.values.entry(flag).or_insert(value);
            }
            (Some((s, (kind, optional))), None) => {
                let next = args.get(i).filter(|n| !n.starts_with("--"));
                match next.map(|n| (n, fits(&kind, n))) {
                    Some((_, Some(value))) => {
                        i += 1;
                        inv.values.entry(flag).or_insert(value);
                    }
                    Some((n, None)) if !optional => {
                        return Err(format!("{flag} takes {}, not `{n}`{}", expectation(&kind), usage(s)));
                    }
                    None if !optional => {
                        return Err(format!("{flag} needs {}{}", expectation(&kind), usage(s)));
                    }
                    _ => {
                        inv.values.entry(flag).or_insert(serde_json::Value::Null);
                    }
                }
            }
            (None, Some(v)) => {
                inv.values.entry(flag).or_insert(serde_json::Value::String(v));
            }
            (None, None) => {}
        }
    }
    match spec.and_then(|s| s.phase.as_deref().map(|p| (s, p))) {
        Some((s, PHASE_POSITIONAL)) => {
            if let Some(first) = positionals.first() {
                let n = PhaseNumber::parse(first)
                    .ok_or_else(|| format!("`{first}` is not a phase number (write it as 3, 03 or 3.1){}", usage(s)))?;
                inv.phase = Some(n);
                positionals.remove(0);
            }
        }
        Some((_, flag)) => {
            inv.phase = inv.values.get(flag).and_then(|v| v.as_str()).and_then(PhaseNumber::parse);
        }
        None if spec.is_none() => {
            if let Some(n) = positionals.first().and_then(|f| PhaseNumber::parse(f)) {
                inv.phase = Some(n);
                positionals.remove(0);
            }
        }
        None => {}
    }
    inv.positionals = positionals;
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(h: &str) -> ArgSpec {
        parse_hint(h).unwrap()
    }

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn invocation_hints_of_the_content() {
        let s = spec("[phase] [--research] [--skip-research] [--prd <file>] [--reviews] [--wave N] [--auto]");
        assert_eq!(s.phase.as_deref(), Some("positional"));
        assert_eq!(s.value_flags.keys().collect::<Vec<_>>(), ["--prd", "--wave"]);
        let s = spec("[--auto <idea-file>] [--ingest <docs-dir>]");
        assert_eq!(s.phase, None);
        assert_eq!(s.value_flags["--auto"], "<idea-file>");
        let s = spec("<after> <description>");
        assert_eq!(s.phase.as_deref(), Some("positional"));
        let s = spec("[description | session slug] [--forensic [phase]]");
        assert_eq!(s.phase.as_deref(), Some("--forensic"));
        assert_eq!(s.value_flags["--forensic"], "[phase]");
        let s = spec("[phase] [--depth quick|standard|deep] [--budget <tokens>]");
        assert_eq!(s.value_flags["--depth"], "quick|standard|deep");
        for h in ["[version, e.g. 1.1]", "<description>", "[key] [value]", "", "[name] [--reset-phase-numbers]"] {
            assert_eq!(spec(h).phase, None, "{h}");
            assert!(spec(h).value_flags.is_empty(), "{h}");
        }
        assert!(parse_hint("[phase").is_err());
        assert!(parse_hint("phase]").is_err());
    }

    #[test]
    fn invocation_flags_are_token_presence_and_values_parse() {
        let s = spec("[phase] [--research] [--prd <file>] [--wave N]");
        let inv = parse(Some(&s), &args("03.1 --research --prd x.md --wave 2 --chunked")).unwrap();
        assert_eq!(inv.flags, ["--research", "--prd", "--wave", "--chunked"]);
        assert_eq!(inv.values["--prd"], "x.md");
        assert_eq!(inv.values["--wave"], 2);
        let p = inv.phase.unwrap();
        assert_eq!((p.number(), p.padded(), p.is_decimal()), ("3.1".into(), "03.1".into(), true));
        let inv = parse(Some(&s), &args("--prd=a=b.md 4")).unwrap();
        assert_eq!(inv.values["--prd"], "a=b.md");
        assert_eq!(inv.phase.unwrap().number(), "4");
    }

    #[test]
    fn invocation_usage_errors() {
        let s = spec("[phase] [--prd <file>] [--wave N] [--depth quick|deep]");
        for (a, needle) in [
            ("--prd", "--prd needs a value"),
            ("--prd --research", "--prd needs a value"),
            ("--wave two", "--wave takes a whole number"),
            ("--wave=-1", "--wave takes a whole number"),
            ("--depth huge", "one of quick, deep"),
            ("auth", "`auth` is not a phase number"),
            ("3.", "`3.` is not a phase number"),
        ] {
            let e = parse(Some(&s), &args(a)).unwrap_err();
            assert!(e.contains(needle), "{a}: {e}");
        }
    }

    #[test]
    fn invocation_optional_values_and_phase_flags() {
        let s = spec("[description | session slug] [--forensic [phase]]");
        let inv = parse(Some(&s), &args("--forensic 3 login")).unwrap();
        assert_eq!(inv.phase.unwrap().number(), "3");
        assert_eq!(inv.positionals, ["login"]);
        let inv = parse(Some(&s), &args("--forensic login fails")).unwrap();
        assert!(inv.phase.is_none());
        assert_eq!(inv.flags, ["--forensic"]);
        assert_eq!(inv.positionals, ["login", "fails"]);
        // Without a spec: switches only, and a leading phase number is the phase.
        let inv = parse(None, &args("7 --wave 2")).unwrap();
        assert_eq!(inv.phase.unwrap().number(), "7");
        assert_eq!(inv.positionals, ["2"]);
        let inv = parse(None, &args("fix 3 things")).unwrap();
        assert!(inv.phase.is_none());
        // A phase-taking spec with nothing given has no phase; `--` ends the flags.
        let s = spec("[phase]");
        assert!(parse(Some(&s), &[]).unwrap().phase.is_none());
        let inv = parse(Some(&s), &args("-- --not-a-flag")).unwrap_err();
        assert!(inv.contains("not a phase number"));
    }

    #[test]
    fn invocation_phase_numbers_normalise_and_sort() {
        let p = |s: &str| PhaseNumber::parse(s).unwrap();
        assert_eq!(p("03").number(), "3");
        assert_eq!(p("3").padded(), "03");
        assert_eq!(p("0").padded(), "00");
        assert_eq!(p("100").padded(), "100");
        assert_eq!(p("4.0").number(), "4.0");
        assert!(p("4.0").is_decimal());
        for bad in ["", ".", "3.", ".1", "3.1.1", "a", "-1", " 3"] {
            assert!(PhaseNumber::parse(bad).is_none(), "{bad:?}");
        }
        let mut v = [p("10"), p("3.10"), p("3.2"), p("3"), p("2"), p("3.1"), p("4")];
        v.sort_by(|a, b| a.numeric_cmp(b));
        let got: Vec<String> = v.iter().map(PhaseNumber::number).collect();
        assert_eq!(got, ["2", "3", "3.1", "3.2", "3.10", "4", "10"]);
        assert_eq!(p("03.1").numeric_cmp(&p("3.1")), Ordering::Equal);
    }
}
