//! The closed `when=` grammar: a fixed table of atoms ([`ATOMS`]), each mapped by hand to one
//! predicate over the facts of an invocation.
//!
//! Why a literal table: the grammar must stay closed (no operators, no negation, no nesting) and
//! a predicate must never be derived by slicing its atom string. [`ATOMS`] lists every atom with
//! its spelling; [`Atom::holds`] is a hand-written match. A test proves the two agree both ways
//! and that each `flag:` predicate reads its own token.
//!
//! Compound conditions are resolved upstream into one fact (`chunked_mode` is `--chunked` OR
//! config `workflow.plan_chunked`), never in the grammar.

use std::collections::BTreeSet;

/// One `when=` atom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// `always`
    Always,
    /// `flag:--wave`
    FlagWave,
    /// `flag:--auto`
    FlagAuto,
    /// `flag:--discuss`
    FlagDiscuss,
    /// `flag:--forensic`
    FlagForensic,
    /// `flag:--full`
    FlagFull,
    /// `flag:--research`
    FlagResearch,
    /// `flag:--reset-phase-numbers`
    FlagResetPhaseNumbers,
    /// `flag:--validate`
    FlagValidate,
    /// `flag:--ingest`
    FlagIngest,
    /// `flag:--prd`
    FlagPrd,
    /// `flag:--research-phase`
    FlagResearchPhase,
    /// `flag:--reviews`
    FlagReviews,
    /// `state:gap-closure-phase`
    StateGapClosurePhase,
    /// `state:has-prior-phases`
    StateHasPriorPhases,
    /// `state:needs-codebase-map`
    StateNeedsCodebaseMap,
    /// `state:phase-mvp-mode`
    StatePhaseMvpMode,
    /// `state:worktrees-enabled`
    StateWorktreesEnabled,
    /// `state:chunked-mode`
    StateChunkedMode,
}

/// Every atom with its spelling, in the order of SPEC section 3.
pub const ATOMS: &[(&str, Atom)] = &[
    ("always", Atom::Always),
    ("flag:--wave", Atom::FlagWave),
    ("flag:--auto", Atom::FlagAuto),
    ("flag:--discuss", Atom::FlagDiscuss),
    ("flag:--forensic", Atom::FlagForensic),
    ("flag:--full", Atom::FlagFull),
    ("flag:--research", Atom::FlagResearch),
    ("flag:--reset-phase-numbers", Atom::FlagResetPhaseNumbers),
    ("flag:--validate", Atom::FlagValidate),
    ("flag:--ingest", Atom::FlagIngest),
    ("flag:--prd", Atom::FlagPrd),
    ("flag:--research-phase", Atom::FlagResearchPhase),
    ("flag:--reviews", Atom::FlagReviews),
    ("state:gap-closure-phase", Atom::StateGapClosurePhase),
    ("state:has-prior-phases", Atom::StateHasPriorPhases),
    ("state:needs-codebase-map", Atom::StateNeedsCodebaseMap),
    ("state:phase-mvp-mode", Atom::StatePhaseMvpMode),
    ("state:worktrees-enabled", Atom::StateWorktreesEnabled),
    ("state:chunked-mode", Atom::StateChunkedMode),
];

/// The facts of one invocation that atoms are evaluated over.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Facts {
    /// Flag tokens passed (`--prd`), present only when passed (never "present with false").
    pub flags: BTreeSet<String>,
    /// The phase number as written (`"3"`, `"3.1"`), if the workflow has a phase.
    pub phase_number: Option<String>,
    /// A lower-numbered phase has a SUMMARY.
    pub has_prior_phases: bool,
    /// Source files exist and `.planning/codebase/` does not.
    pub needs_codebase_map: bool,
    /// Config `workflow.mvp_mode`, or the phase is marked `**Mode:** mvp`.
    pub phase_mvp_mode: bool,
    /// Config `workflow.use_worktrees`.
    pub worktrees_enabled: bool,
    /// `--chunked` OR config `workflow.plan_chunked`.
    pub chunked_mode: bool,
}

impl Atom {
    /// Parses an atom exactly (case-sensitive, untrimmed).
    pub fn parse(s: &str) -> Option<Atom> {
        ATOMS.iter().find(|(name, _)| *name == s).map(|(_, a)| *a)
    }

    /// The atom's spelling.
    pub fn as_str(self) -> &'static str {
        ATOMS.iter().find(|(_, a)| *a == self).map(|(n, _)| *n).expect("every atom is in ATOMS")
    }

    /// Whether the atom holds for `facts`. Hand-written per atom on purpose.
    pub fn holds(self, facts: &Facts) -> bool {
        let flag = |t: &str| facts.flags.contains(t);
        match self {
            Atom::Always => true,
            Atom::FlagWave => flag("--wave"),
            Atom::FlagAuto => flag("--auto"),
            Atom::FlagDiscuss => flag("--discuss"),
            Atom::FlagForensic => flag("--forensic"),
            Atom::FlagFull => flag("--full"),
            Atom::FlagResearch => flag("--research"),
            Atom::FlagResetPhaseNumbers => flag("--reset-phase-numbers"),
            Atom::FlagValidate => flag("--validate"),
            Atom::FlagIngest => flag("--ingest"),
            Atom::FlagPrd => flag("--prd"),
            Atom::FlagResearchPhase => flag("--research-phase"),
            Atom::FlagReviews => flag("--reviews"),
            Atom::StateGapClosurePhase => facts.phase_number.as_deref().is_some_and(|p| p.contains('.')),
            Atom::StateHasPriorPhases => facts.has_prior_phases,
            Atom::StateNeedsCodebaseMap => facts.needs_codebase_map,
            Atom::StatePhaseMvpMode => facts.phase_mvp_mode,
            Atom::StateWorktreesEnabled => facts.worktrees_enabled,
            Atom::StateChunkedMode => facts.chunked_mode,
        }
    }
}

/// The result of selecting sections: an exact partition of the input ids, in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Selection {
    /// Ids whose atom holds.
    pub included: Vec<String>,
    /// Ids whose atom does not hold.
    pub excluded: Vec<String>,
}

/// Partitions `sections` (`(id, atom)` in document order) by `facts`.
pub fn select<'a>(sections: impl IntoIterator<Item = (&'a str, Atom)>, facts: &Facts) -> Selection {
    let mut sel = Selection::default();
    for (id, atom) in sections {
        if atom.holds(facts) {
            sel.included.push(id.to_string());
        } else {
            sel.excluded.push(id.to_string());
        }
    }
    sel
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exhaustive over the enum: adding a variant without listing it here fails to compile.
    fn all_variants() -> Vec<Atom> {
        let mut v = Vec::new();
        for a in ATOMS.iter().map(|(_, a)| *a) {
            match a {
                Atom::Always
                | Atom::FlagWave
                | Atom::FlagAuto
                | Atom::FlagDiscuss
                | Atom::FlagForensic
                | Atom::FlagFull
                | Atom::FlagResearch
                | Atom::FlagResetPhaseNumbers
                | Atom::FlagValidate
                | Atom::FlagIngest
                | Atom::FlagPrd
                | Atom::FlagResearchPhase
                | Atom::FlagReviews
                | Atom::StateGapClosurePhase
                | Atom::StateHasPriorPhases
                | Atom::StateNeedsCodebaseMap
                | Atom::StatePhaseMvpMode
                | Atom::StateWorktreesEnabled
                | Atom::StateChunkedMode => v.push(a),
            }
        }
        v
    }

    #[test]
    fn when_atoms_and_predicates_match_both_ways() {
        let variants: BTreeSet<Atom> = all_variants().into_iter().collect();
        assert_eq!(variants.len(), ATOMS.len(), "ATOMS lists every variant exactly once");
        let names: BTreeSet<&str> = ATOMS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names.len(), ATOMS.len(), "no duplicate spellings");
        for &(name, atom) in ATOMS {
            assert_eq!(Atom::parse(name), Some(atom));
            assert_eq!(atom.as_str(), name);
        }
    }

    #[test]
    fn when_each_flag_predicate_reads_its_own_token() {
        for (name, atom) in ATOMS {
            let Some(token) = name.strip_prefix("flag:") else { continue };
            let mut facts = Facts::default();
            assert!(!atom.holds(&facts), "{name} holds with no flags");
            facts.flags.insert(token.to_string());
            assert!(atom.holds(&facts), "{name} does not read {token}");
            for (other, other_atom) in ATOMS {
                if other != name && other.starts_with("flag:") {
                    assert!(!other_atom.holds(&facts), "{other} fires on {token}");
                }
            }
        }
    }

    #[test]
    fn when_parse_is_exact() {
        for bad in [" flag:--auto", "flag:--auto ", "FLAG:--auto", "flag:--auto&&always", "!always", "flag:--fix", ""] {
            assert_eq!(Atom::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn when_gap_closure_edge_cases() {
        let f = |p: Option<&str>| Facts { phase_number: p.map(str::to_string), ..Facts::default() };
        assert!(Atom::StateGapClosurePhase.holds(&f(Some("."))));
        assert!(Atom::StateGapClosurePhase.holds(&f(Some("4.0"))));
        assert!(Atom::StateGapClosurePhase.holds(&f(Some("04.1"))));
        assert!(!Atom::StateGapClosurePhase.holds(&f(Some("4"))));
        assert!(!Atom::StateGapClosurePhase.holds(&f(Some(""))));
        assert!(!Atom::StateGapClosurePhase.holds(&f(None)));
    }

    fn facts() -> impl proptest::strategy::Strategy<Value = Facts> {
        use proptest::prelude::*;
        let flags = proptest::collection::btree_set(
            prop_oneof![
                proptest::sample::select(ATOMS.iter().filter_map(|(n, _)| n.strip_prefix("flag:")).collect::<Vec<_>>())
                    .prop_map(str::to_string),
                Just("--chunked".to_string()),
                Just("--fix".to_string()),
            ],
            0..6,
        );
        (
            flags,
            proptest::option::of(prop_oneof![Just("3".to_string()), Just("3.1".to_string()), Just(".".to_string())]),
            proptest::array::uniform5(proptest::bool::ANY),
        )
            .prop_map(|(flags, phase_number, b)| Facts {
                flags,
                phase_number,
                has_prior_phases: b[0],
                needs_codebase_map: b[1],
                phase_mvp_mode: b[2],
                worktrees_enabled: b[3],
                chunked_mode: b[4],
            })
    }

    proptest::proptest! {
        /// `select` is an exact partition in document order: every id lands in exactly one list,
        /// the one its atom decides, and merging the two lists by position gives the input back.
        #[test]
        fn when_prop_selection_is_an_exact_partition(
            atoms in proptest::collection::vec(0..ATOMS.len(), 0..30),
            facts in facts(),
        ) {
            let sections: Vec<(String, Atom)> = atoms.iter().enumerate().map(|(i, a)| (format!("s{i}"), ATOMS[*a].1)).collect();
            let sel = select(sections.iter().map(|(id, a)| (id.as_str(), *a)), &facts);
            proptest::prop_assert_eq!(sel.included.len() + sel.excluded.len(), sections.len());
            let (mut inc, mut exc) = (sel.included.iter().peekable(), sel.excluded.iter().peekable());
            for (id, atom) in &sections {
                let list = if atom.holds(&facts) { &mut inc } else { &mut exc };
                proptest::prop_assert_eq!(list.next(), Some(id), "order or membership of {}", id);
            }
            proptest::prop_assert!(sections.iter().all(|(id, a)| *a != Atom::Always || sel.included.contains(id)));
        }

        /// More flags never include fewer sections.
        #[test]
        fn when_prop_more_flags_never_include_fewer(atoms in proptest::collection::vec(0..ATOMS.len(), 0..30), facts in facts(), extra in "--[a-z-]{1,20}") {
            let sections: Vec<(String, Atom)> = atoms.iter().enumerate().map(|(i, a)| (format!("s{i}"), ATOMS[*a].1)).collect();
            let before = select(sections.iter().map(|(id, a)| (id.as_str(), *a)), &facts);
            let mut more = facts.clone();
            more.flags.insert(extra);
            let after = select(sections.iter().map(|(id, a)| (id.as_str(), *a)), &more);
            proptest::prop_assert!(before.included.iter().all(|id| after.included.contains(id)));
        }
    }
}
