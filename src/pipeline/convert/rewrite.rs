//! The path and brand rewriter of one runtime and scope.
//!
//! One pass, leftmost-longest, over literal patterns: install paths first (`~/.claude/msd-core/`
//! and friends become the real installed path; the helper `~/.claude/msd-core/bin/msd_run`, run
//! by a shell, becomes that path quoted for sh when it needs quoting), then `/msd:<stem>` command references in the
//! runtime's own style, then the manifest's literal rewrites. A single pass means a replacement
//! is never rewritten again.

use std::collections::BTreeSet;

use aho_corasick::{AhoCorasick, MatchKind};
use msd_core::shell::Shell;

use crate::pipeline::target::Target;
use msd_core::manifest::capability::Capability;

/// The rewriter.
pub struct Rewriter {
    ac: AhoCorasick,
    to: Vec<String>,
}

impl Rewriter {
    /// Builds the rewriter: install paths, command references, then the manifest's rewrites.
    pub fn new(cap: &Capability, target: &Target, stems: &[&str]) -> Rewriter {
        // The helper is run by a shell: its path is quoted when it needs it (a home with a
        // space, a quote or `$(...)`), and reads as before when it does not.
        let helper = msd_core::shell::quote_path(&format!("{}bin/msd_run", target.core_ref), Shell::Posix)
            .expect("an OS path holds no NUL")
            .into_owned();
        let mut rules: Vec<(String, String)> = vec![
            ("~/.claude/msd-core/bin/msd_run".into(), helper.clone()),
            ("$HOME/.claude/msd-core/bin/msd_run".into(), helper),
            ("~/.claude/msd-core/".into(), target.core_ref.clone()),
            ("$HOME/.claude/msd-core/".into(), target.core_ref.clone()),
            ("~/.claude/".into(), target.home_ref.clone()),
            ("$HOME/.claude/".into(), target.home_ref.clone()),
            ("./.claude/".into(), target.local_ref.clone()),
        ];
        for stem in stems {
            rules.push((format!("/msd:{stem}"), cap.command_ref.replace("{stem}", stem)));
        }
        for r in &cap.rewrites {
            rules.push((r.from.clone(), r.to.clone()));
        }
        // A later rule with the same pattern loses: keep the first.
        let mut seen = BTreeSet::new();
        rules.retain(|(from, _)| seen.insert(from.clone()));
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(rules.iter().map(|(f, _)| f.as_str()))
            .expect("literal patterns build");
        Rewriter { ac, to: rules.into_iter().map(|(_, t)| t).collect() }
    }

    /// Rewrites `text`.
    pub fn apply(&self, text: &str) -> String {
        self.ac.replace_all(text, &self.to)
    }
}
