//! Stage 5, `guard`: caps on emitted bytes, per runtime, before anything is written.
//!
//! Input: one [`Emission`], its manifest's cap rules and the content's tiers. Output: a
//! [`GuardReport`] (what was measured against what) or the list of every violation.
//!
//! Rules (SPEC section 5): tier caps on top-level workflows and agents (pass at `<=`, LF
//! bytes); per-runtime glob rules from the manifest (first matching rule wins, pass at `<=`);
//! a rule that matched nothing is an error (a guard guarding nothing), and so is a runtime that
//! emitted nothing. `NEW_FILE_CAP` and the detail-part cap live here as constants; attribution
//! and the partition check apply them.

use globset::{GlobBuilder, GlobMatcher};

use crate::pipeline::convert::{Emission, FileKind};
use msd_core::compose::measure::lf_bytes;
use msd_core::manifest::capability::{CapRule, Capability, Scope};
use msd_core::manifest::caps::{Tiers, rule_bytes};

fn matcher(glob: &str) -> GlobMatcher {
    GlobBuilder::new(glob).literal_separator(true).build().expect("validated glob").compile_matcher()
}

/// The manifest's cap rules of one scope, compiled. The first matching rule wins.
pub(crate) struct Rules<'c> {
    rules: Vec<(&'c CapRule, GlobMatcher)>,
}

impl<'c> Rules<'c> {
    /// The rules of `cap` that apply to `scope`.
    pub(crate) fn new(cap: &'c Capability, scope: Scope) -> Rules<'c> {
        Rules { rules: cap.caps.iter().filter(|r| r.scopes.contains(&scope)).map(|r| (r, matcher(&r.glob))).collect() }
    }

    /// The index and rule that govern `path`, if any.
    pub(crate) fn first_match(&self, path: &str) -> Option<(usize, &'c CapRule)> {
        self.rules.iter().position(|(_, m)| m.is_match(path)).map(|i| (i, self.rules[i].0))
    }

    /// How many rules there are.
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// The `i`-th rule.
    pub(crate) fn rule(&self, i: usize) -> &'c CapRule {
        self.rules[i].0
    }
}

/// One measured file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Measured {
    /// Emitted path.
    pub path: String,
    /// Bytes measured.
    pub bytes: u64,
    /// The cap.
    pub cap: u64,
    /// Which rule: `tier:XL`, `glob:workflows/*.md`.
    pub rule: String,
}

/// What the guard checked for one runtime.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct GuardReport {
    /// Files within their caps.
    pub compliant: Vec<Measured>,
}

/// One violation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Violation {
    /// An emitted file above its cap.
    OverCap {
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: String,
        /// Emitted path.
        path: String,
        /// Bytes.
        bytes: u64,
        /// Cap.
        cap: u64,
        /// Rule.
        rule: String,
    },
    /// A cap rule that matched nothing.
    DeadRule {
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: String,
        /// The glob.
        glob: String,
    },
    /// A runtime that emitted nothing from the content (its own VERSION file does not count).
    NoArtifacts {
        /// Runtime id.
        runtime: String,
        /// Scope.
        scope: String,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::OverCap { runtime, scope, path, bytes, cap, rule } => {
                write!(f, "{runtime} ({scope}): {path} is {bytes} bytes, over its cap of {cap} ({rule})")
            }
            Violation::DeadRule { runtime, scope, glob } => {
                write!(f, "{runtime} ({scope}): cap rule `{glob}` matched no emitted file")
            }
            Violation::NoArtifacts { runtime, scope } => {
                write!(f, "{runtime} ({scope}): emitted no files from the content")
            }
        }
    }
}

/// Every violation of one run.
#[derive(Debug, thiserror::Error)]
#[error("{} cap violation(s):\n{}", .0.len(), .0.iter().map(|v| format!("  {v}")).collect::<Vec<_>>().join("\n"))]
pub struct GuardError(pub Vec<Violation>);

/// Checks an emission against tier caps and the manifest's rules.
pub(crate) fn check(emission: &Emission, cap: &Capability, tiers: &Tiers) -> Result<GuardReport, GuardError> {
    let scope = emission.scope;
    let rt = emission.runtime.clone();
    let sc = scope.as_str().to_string();
    let mut violations = Vec::new();
    let mut report = GuardReport::default();
    // The tool's own files (VERSION) do not count: a layout that emits no content is broken.
    if !emission.files.iter().any(|f| f.sources.iter().any(|s| s.starts_with("content/"))) {
        return Err(GuardError(vec![Violation::NoArtifacts { runtime: rt, scope: sc }]));
    }
    let mut measure = |path: &str, bytes: u64, cap_bytes: u64, rule: String| {
        if bytes > cap_bytes {
            violations.push(Violation::OverCap {
                runtime: rt.clone(),
                scope: sc.clone(),
                path: path.to_string(),
                bytes,
                cap: cap_bytes,
                rule,
            });
        } else {
            report.compliant.push(Measured { path: path.to_string(), bytes, cap: cap_bytes, rule });
        }
    };
    let workflows_dir = format!("{}/workflows/", cap.core_dir(emission.scope));
    for f in &emission.files {
        let p = f.path.as_str();
        if f.kind == FileKind::Core
            && let Some(name) = p.strip_prefix(&workflows_dir).and_then(|r| r.strip_suffix(".md"))
            && !name.contains('/')
        {
            let tier = tiers.workflow(name);
            measure(p, lf_bytes(&f.bytes), tier.workflow_cap(), format!("workflow tier {}", tier.as_str()));
        }
        // An agent file is measured against its agent's tier when one content agent feeds it; a
        // runtime's aggregate of every agent (Kimi's root agent) is not one agent's text.
        let agent_sources: Vec<&str> =
            f.sources.iter().filter_map(|s| s.strip_prefix("content/agents/")?.strip_suffix(".md")).collect();
        if f.kind == FileKind::Agent
            && let [name] = agent_sources.as_slice()
        {
            let tier = tiers.agent(name);
            measure(p, lf_bytes(&f.bytes), tier.agent_cap(), format!("agent tier {}", tier.as_str()));
        }
    }
    let rules = Rules::new(cap, scope);
    let mut hits = vec![0usize; rules.len()];
    for f in &emission.files {
        if let Some((i, rule)) = rules.first_match(f.path.as_str()) {
            hits[i] += 1;
            measure(f.path.as_str(), rule_bytes(&f.bytes), rule.max_bytes, format!("glob {}", rule.glob));
        }
    }
    for (i, r) in (0..rules.len()).map(|i| (i, rules.rule(i))) {
        if hits[i] == 0 {
            violations.push(Violation::DeadRule {
                runtime: emission.runtime.clone(),
                scope: scope.as_str().into(),
                glob: r.glob.clone(),
            });
        }
    }
    if violations.is_empty() { Ok(report) } else { Err(GuardError(violations)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::convert::EmittedFile;
    use msd_core::fs::fsx::FileMode;
    use msd_core::fs::relpath::RelPath;
    use msd_core::manifest::caps::{
        DETAIL_PART_CAP, NEW_FILE_CAP, Tier, exceeds_detail_part_cap, exceeds_new_file_cap,
    };

    fn manifest(caps: &str) -> Capability {
        let text = format!(
            r#"{{"id": "t", "title": "T", "tier": "experimental", "home": {{"kind": "dot-home", "default": ".t"}},
               "artifacts": {{"global": []}}, "command_ref": "/msd-{{stem}}", "caps": [{caps}]}}"#
        );
        msd_core::manifest::capability::parse("t.json", &text).unwrap()
    }

    fn file(path: &str, kind: FileKind, source: &str, bytes: Vec<u8>) -> EmittedFile {
        EmittedFile {
            path: RelPath::new(path).unwrap(),
            bytes: bytes.into(),
            mode: FileMode::Regular,
            kind,
            sources: vec![source.to_string()],
        }
    }

    fn emission(files: Vec<EmittedFile>) -> Emission {
        Emission { runtime: "t".into(), scope: Scope::Global, files }
    }

    fn over(r: Result<GuardReport, GuardError>) -> Vec<(String, u64, u64, String)> {
        match r {
            Ok(_) => Vec::new(),
            Err(GuardError(v)) => v
                .into_iter()
                .map(|v| match v {
                    Violation::OverCap { path, bytes, cap, rule, .. } => (path, bytes, cap, rule),
                    other => panic!("unexpected {other}"),
                })
                .collect(),
        }
    }

    #[test]
    fn guard_new_file_cap_boundaries() {
        assert_eq!(NEW_FILE_CAP, 32_768);
        assert!(!exceeds_new_file_cap(32_767));
        assert!(!exceeds_new_file_cap(32_768), "exactly the cap passes for an emitted file");
        assert!(exceeds_new_file_cap(32_769));
    }

    #[test]
    fn guard_detail_part_cap_boundaries() {
        assert_eq!(DETAIL_PART_CAP, 32_768);
        assert!(!exceeds_detail_part_cap(32_767));
        assert!(exceeds_detail_part_cap(32_768), "a detail part fails at the cap");
        assert!(exceeds_detail_part_cap(32_769));
    }

    #[test]
    fn guard_every_tier_cap_at_cap_minus_one_cap_and_cap_plus_one() {
        let cap = manifest("");
        let cases = [
            ("workflow", Tier::Xl, 98_304u64),
            ("workflow", Tier::Large, 61_440),
            ("workflow", Tier::Default, 40_960),
            ("agent", Tier::Xl, 57_344),
            ("agent", Tier::Large, 49_152),
            ("agent", Tier::Default, 24_576),
        ];
        for (kind, tier, limit) in cases {
            let mut tiers = Tiers::default();
            let name = "msd-thing";
            if tier != Tier::Default {
                match kind {
                    "workflow" => tiers.workflows.insert(name.into(), tier),
                    _ => tiers.agents.insert(name.into(), tier),
                };
            }
            for bytes in [limit - 1, limit, limit + 1] {
                let f = match kind {
                    "workflow" => file(
                        &format!("msd-core/workflows/{name}.md"),
                        FileKind::Core,
                        "content/msd-core/workflows/msd-thing.md",
                        vec![b'x'; bytes as usize],
                    ),
                    _ => file(
                        &format!("agents/{name}.md"),
                        FileKind::Agent,
                        "content/agents/msd-thing.md",
                        vec![b'x'; bytes as usize],
                    ),
                };
                let got = over(check(&emission(vec![f]), &cap, &tiers));
                if bytes <= limit {
                    assert!(got.is_empty(), "{kind} {tier:?} at {bytes}: {got:?}");
                } else {
                    let path = if kind == "workflow" {
                        format!("msd-core/workflows/{name}.md")
                    } else {
                        format!("agents/{name}.md")
                    };
                    assert_eq!(got, [(path, bytes, limit, format!("{kind} tier {}", tier.as_str()))]);
                }
            }
        }
    }

    #[test]
    fn guard_tier_caps_count_lf_bytes_and_only_top_level_workflows() {
        let cap = manifest("");
        let tiers = Tiers::default();
        // 40,961 raw bytes with one CRLF are 40,960 LF bytes: within DEFAULT.
        let mut bytes = vec![b'x'; 40_959];
        bytes.extend_from_slice(b"\r\n");
        assert!(
            over(check(
                &emission(vec![file(
                    "msd-core/workflows/w.md",
                    FileKind::Core,
                    "content/msd-core/workflows/w.md",
                    bytes
                )]),
                &cap,
                &tiers
            ))
            .is_empty()
        );
        // A step file under a workflow's directory is not a tiered workflow.
        let step = file(
            "msd-core/workflows/w/steps/s.md",
            FileKind::Core,
            "content/msd-core/workflows/w/steps/s.md",
            vec![b'x'; 50_000],
        );
        assert!(over(check(&emission(vec![step]), &cap, &tiers)).is_empty());
    }

    #[test]
    fn guard_glob_rule_boundaries_and_first_match() {
        let cap = manifest(
            r#"{"glob": "workflows/*.md", "max_bytes": 12000}, {"glob": "workflows/**", "max_bytes": 10}, {"glob": "other/*.md", "max_bytes": 1}"#,
        );
        let tiers = Tiers::default();
        for (bytes, fails) in [(11_999usize, false), (12_000, false), (12_001, true)] {
            let files = vec![
                file("workflows/msd-a.md", FileKind::Workflow, "content/commands/msd/a.md", vec![b'x'; bytes]),
                // Matched by the second rule only (the first does not cross segments).
                file("workflows/sub/b.md", FileKind::Workflow, "content/commands/msd/b.md", vec![b'x'; 10]),
                file("other/c.md", FileKind::Command, "content/commands/msd/c.md", vec![b'x'; 1]),
                // Unmeasured: no rule matches.
                file("skills/x/SKILL.md", FileKind::Skill, "content/commands/msd/x.md", vec![b'x'; 100_000]),
            ];
            let got = over(check(&emission(files), &cap, &tiers));
            if fails {
                assert_eq!(
                    got,
                    [("workflows/msd-a.md".to_string(), 12_001, 12_000, "glob workflows/*.md".to_string())]
                );
            } else {
                assert!(got.is_empty(), "{bytes}: {got:?}");
            }
        }
        // Rule caps measure raw bytes: a CRLF counts two.
        let crlf = file(
            "workflows/msd-a.md",
            FileKind::Workflow,
            "content/commands/msd/a.md",
            [vec![b'x'; 11_999], b"\r\n".to_vec()].concat(),
        );
        let other = file("workflows/sub/b.md", FileKind::Workflow, "s", vec![b'x'; 1]);
        let c = file("other/c.md", FileKind::Command, "s", vec![b'x'; 1]);
        assert_eq!(over(check(&emission(vec![crlf, other, c]), &cap, &tiers)).len(), 1);
    }

    #[test]
    fn guard_dead_rule_and_empty_emission_fail() {
        let cap = manifest(r#"{"glob": "workflows/*.md", "max_bytes": 12000}"#);
        let tiers = Tiers::default();
        let Err(GuardError(v)) = check(
            &emission(vec![file("agents/a.md", FileKind::Agent, "content/agents/a.md", b"a".to_vec())]),
            &cap,
            &tiers,
        ) else {
            panic!("a rule that matches nothing must fail");
        };
        assert_eq!(
            v,
            [Violation::DeadRule { runtime: "t".into(), scope: "global".into(), glob: "workflows/*.md".into() }]
        );
        let Err(GuardError(v)) = check(&emission(Vec::new()), &manifest(""), &tiers) else {
            panic!("an empty emission must fail");
        };
        assert_eq!(v, [Violation::NoArtifacts { runtime: "t".into(), scope: "global".into() }]);
        // The tool's own VERSION file is not an artifact of the content.
        let version = file("msd-core/VERSION", FileKind::Core, "Cargo.toml", b"0.1.0\n".to_vec());
        assert!(check(&emission(vec![version]), &manifest(""), &tiers).is_err());
    }
}
