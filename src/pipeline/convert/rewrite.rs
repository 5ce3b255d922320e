//! The path and brand rewriter of one runtime and scope.
//!
//! One pass, leftmost-longest, over literal patterns: install paths first (`~/.claude/msd-core/`
//! and friends become the real installed path; the helper `~/.claude/msd-core/bin/msd_run`, run
//! by a shell, becomes that path quoted for sh when it needs quoting), then `/msd:<stem>` command references in the
//! runtime's own style, then the manifest's literal rewrites. A single pass means a replacement
//! is never rewritten again.
//!
//! Command references are one pattern, `/msd:`, whatever the number of commands: the stem after
//! it is looked up (the longest known stem wins, as a pattern per stem would). The searcher then
//! holds a dozen patterns and stays on its packed (SIMD) path, which takes at most 64: with a
//! pattern per stem, content x8 (240 commands) pushed it onto the slower automaton, and the cost
//! of a rewrite followed the size of the command set instead of the bytes. A manifest rewrite
//! that could overlap `/msd:` (one starting with a piece of it) keeps the pattern per stem, so
//! the output is the same either way.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::{AhoCorasick, Input, MatchKind};
use msd_core::shell::Shell;

use crate::pipeline::target::Target;
use msd_core::manifest::capability::Capability;

/// The rewriter.
pub struct Rewriter {
    ac: AhoCorasick,
    to: Vec<String>,
    /// The stem lookup behind the one `/msd:` pattern; `None` when every stem has its pattern.
    commands: Option<Commands>,
}

/// Command references behind the one `/msd:` pattern.
struct Commands {
    /// The pattern index of `/msd:`.
    pattern: usize,
    /// Each known stem and its reference in the runtime's style.
    refs: HashMap<String, String, BuildHasherDefault<Fnv>>,
    /// The distinct stem lengths, longest first (the longest known stem wins).
    lens: Vec<usize>,
}

/// The one pattern every command reference starts with.
const COMMAND: &str = "/msd:";

/// FNV-1a, the hash of the stem lookup: `apply` tries each stem length at every `/msd:` (174,000
/// lookups in a fresh `--all`), the keys are short and come from the content, not from an
/// adversary, and std's SipHash was 6% of that run's instructions other than sha256.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl Rewriter {
    /// Builds the rewriter: install paths, command references, then the manifest's rewrites.
    pub fn new(cap: &Capability, target: &Target, stems: &[&str]) -> Rewriter {
        // The helper is run by a shell: its path is quoted when it needs it (a home with a
        // space, a quote or `$(...)`), and reads as before when it does not.
        let helper = msd_core::shell::quote_path(&format!("{}bin/msd_run", target.core_ref), Shell::Posix)
            .expect("an OS path holds no NUL")
            .into_owned();
        let paths: Vec<(String, String)> = vec![
            ("~/.claude/msd-core/bin/msd_run".into(), helper.clone()),
            ("$HOME/.claude/msd-core/bin/msd_run".into(), helper),
            ("~/.claude/msd-core/".into(), target.core_ref.clone()),
            ("$HOME/.claude/msd-core/".into(), target.core_ref.clone()),
            ("~/.claude/".into(), target.home_ref.clone()),
            ("$HOME/.claude/".into(), target.home_ref.clone()),
            ("./.claude/".into(), target.local_ref.clone()),
        ];
        let rewrites: Vec<(String, String)> = cap.rewrites.iter().map(|r| (r.from.clone(), r.to.clone())).collect();
        let one_pattern = !rewrites.iter().any(|(from, _)| overlaps_command(from));
        Rewriter::build(paths, stems, &cap.command_ref, rewrites, one_pattern)
    }

    fn build(
        mut rules: Vec<(String, String)>,
        stems: &[&str],
        command_ref: &str,
        rewrites: Vec<(String, String)>,
        one_pattern: bool,
    ) -> Rewriter {
        // The built-in path patterns never overlap `/msd:` (they start with `~`, `$` or `.`).
        debug_assert!(!rules.iter().any(|(from, _)| overlaps_command(from)));
        let mut commands = None;
        if one_pattern {
            let mut refs = HashMap::default();
            for stem in stems {
                refs.entry((*stem).to_string()).or_insert_with(|| command_ref.replace("{stem}", stem));
            }
            let mut lens: Vec<usize> = refs.keys().map(String::len).collect::<BTreeSet<_>>().into_iter().collect();
            lens.reverse();
            commands = Some(Commands { pattern: rules.len(), refs, lens });
            // Replaced by the stem's reference in `apply`.
            rules.push((COMMAND.into(), String::new()));
        } else {
            for stem in stems {
                rules.push((format!("{COMMAND}{stem}"), command_ref.replace("{stem}", stem)));
            }
        }
        rules.extend(rewrites);
        // A later rule with the same pattern loses: keep the first.
        let mut seen = BTreeSet::new();
        rules.retain(|(from, _)| seen.insert(from.clone()));
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(rules.iter().map(|(f, _)| f.as_str()))
            .expect("literal patterns build");
        Rewriter { ac, to: rules.into_iter().map(|(_, t)| t).collect(), commands }
    }

    /// Rewrites `text`.
    pub fn apply(&self, text: &str) -> String {
        self.apply_cow(text).into_owned()
    }

    /// Rewrites `text`, borrowing it back when no pattern occurs in it: a file no rewrite
    /// touches is the same for every runtime, and its caller can share one buffer among them
    /// (about half the core files of the reference's ported content, `bench port`).
    pub fn apply_cow<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(first) = self.ac.find(text) else { return Cow::Borrowed(text) };
        let Some(cmds) = &self.commands else {
            return Cow::Owned(self.ac.replace_all(text, &self.to));
        };
        let mut out = String::with_capacity(text.len() + text.len() / 16);
        let mut last = 0;
        let mut next = Some(first);
        // Each search starts where the last replacement ended (a stem runs past the match).
        while let Some(m) = next.take().or_else(|| self.ac.find(Input::new(text).range(last..))) {
            out.push_str(&text[last..m.start()]);
            last = m.end();
            if m.pattern().as_usize() != cmds.pattern {
                out.push_str(&self.to[m.pattern().as_usize()]);
                continue;
            }
            let rest = &text[last..];
            let hit = cmds
                .lens
                .iter()
                .filter(|&&n| rest.is_char_boundary(n))
                .find_map(|&n| cmds.refs.get_key_value(&rest[..n]));
            match hit {
                Some((stem, to)) => {
                    out.push_str(to);
                    last += stem.len();
                }
                None => out.push_str(COMMAND),
            }
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }
}

/// Whether a pattern could meet `/msd:` at a position where leftmost-longest would choose
/// differently between one `/msd:` pattern and a pattern per stem: it starts with a piece of
/// `/msd:` from some point on (`/msd:x`, `msd:`, `:`), or is such a piece's prefix (`/`, `ms`).
fn overlaps_command(from: &str) -> bool {
    (0..COMMAND.len()).any(|i| {
        let tail = &COMMAND[i..];
        from.starts_with(tail) || tail.starts_with(from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(stems: &[&str], rewrites: &[(&str, &str)]) -> (Rewriter, Rewriter) {
        let paths = vec![("~/.claude/msd-core/".to_string(), "/h/.x/msd-core/".to_string())];
        let rw: Vec<(String, String)> = rewrites.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        (
            Rewriter::build(paths.clone(), stems, "$msd-{stem}", rw.clone(), true),
            Rewriter::build(paths, stems, "$msd-{stem}", rw, false),
        )
    }

    #[test]
    fn rewrite_one_command_pattern_writes_what_a_pattern_per_stem_writes() {
        let stems = ["plan", "plan-phase", "plan-phase-x", "help", "é"];
        let (one, per_stem) = both(&stems, &[("CLAUDE.md", "AGENTS.md")]);
        assert!(one.commands.is_some() && per_stem.commands.is_none());
        for text in [
            "",
            "/msd:",
            "run /msd:plan-phase 3, then /msd:plan, /msd:plan-phases and /msd:plan-phase-x.",
            "/msd:/msd:help/msd:help",
            "/msd:unknown /msd:hel /msd:help",
            "/msd:é and /msd:éé, /msd:\u{1F600}",
            "see ~/.claude/msd-core/x and CLAUDE.md next to /msd:help~/.claude/msd-core/",
            "ends with /msd:pla",
        ] {
            assert_eq!(one.apply(text), per_stem.apply(text), "{text:?}");
        }
        assert_eq!(one.apply("/msd:plan-phases"), "$msd-plan-phases");
        assert_eq!(one.apply("/msd:nope"), "/msd:nope");
    }

    #[test]
    fn rewrite_borrows_back_a_text_no_pattern_occurs_in() {
        let stems = ["help"];
        let (one, per_stem) = both(&stems, &[("CLAUDE.md", "AGENTS.md")]);
        for rw in [&one, &per_stem] {
            for text in ["", "plain text, /msd without a colon, ~/.claude without its core"] {
                assert!(matches!(rw.apply_cow(text), Cow::Borrowed(t) if t == text), "{text:?}");
            }
            for text in ["/msd:help", "see CLAUDE.md", "x ~/.claude/msd-core/y"] {
                let out = rw.apply_cow(text);
                assert!(matches!(out, Cow::Owned(_)), "{text:?}");
                assert_eq!(out, rw.apply(text));
            }
        }
        assert_eq!(one.apply_cow("a /msd:help b CLAUDE.md c"), "a $msd-help b AGENTS.md c");
        // An unknown command is the one pattern's match, written back as it was.
        assert_eq!(one.apply_cow("/msd:nope"), "/msd:nope");
    }

    #[test]
    fn rewrite_a_manifest_pattern_overlapping_the_command_prefix_keeps_a_pattern_per_stem() {
        for from in ["/msd:help", "msd:", ":", "/", "/ms", "d:x"] {
            assert!(overlaps_command(from), "{from}");
        }
        for from in ["CLAUDE.md", "$ARGUMENTS", "Bash(", "~/.claude/", "x/msd:"] {
            assert!(!overlaps_command(from), "{from}");
        }
        let stems = ["help"];
        let (_, per_stem) = both(&stems, &[(":", ";")]);
        assert_eq!(per_stem.apply("/msd:help /msd:nope"), "$msd-help /msd;nope");
    }

    #[test]
    fn rewrite_many_commands_keep_the_searcher_on_a_dozen_patterns() {
        let names: Vec<String> = (0..240).map(|i| format!("cmd-{i}")).collect();
        let stems: Vec<&str> = names.iter().map(String::as_str).collect();
        let (one, per_stem) = both(&stems, &[("CLAUDE.md", "AGENTS.md")]);
        assert_eq!(one.ac.patterns_len(), 3);
        assert_eq!(per_stem.ac.patterns_len(), 242);
        let text: String = names.iter().map(|n| format!("/msd:{n} ")).collect();
        assert_eq!(one.apply(&text), per_stem.apply(&text));
    }
}
