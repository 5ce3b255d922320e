//! Composing emitted files to their runtime's caps (SPEC section 5).
//!
//! Input: the content, one manifest and scope, and the runtime's converter as a closure (so the
//! converters stay a black box: whatever format they write, the bytes that are measured are the
//! bytes that land). Output: the emission, with every file that a manifest cap rule governs and
//! that was over its cap re-emitted from a composed body, and a [`FileCompose`] report per file
//! that has sections or a cap; or a [`FitError`] when even the smallest composition is over.
//!
//! How: a file over its rule's cap whose source has explicit sections is composed to a byte
//! budget of `cap - (file bytes - body bytes)` (the converter's overhead), re-emitted, and the
//! budget lowered by the overshoot until it fits (rewrites and escaping make the overhead an
//! estimate). The smallest composition ([`msd_core::compose::minimum`]) is tried first: when it is over, the
//! error names artifact, runtime, cap, budget and the smallest size reachable; after a bounded
//! number of rounds it is the result. Composition is per source and runtime: the tightest cap
//! among a source's emitted files decides its body for that runtime. A file over its cap
//! without sections is left to the guard, which reports it.

use std::collections::BTreeMap;

use crate::pipeline::convert::Emission;
use crate::pipeline::guard::Rules;
use crate::pipeline::load::Content;
use msd_core::fs::relpath::RelPath;
use msd_core::manifest::capability::{CapRule, Capability, Scope};
use msd_core::manifest::caps::rule_bytes;

use msd_core::compose::{Composition, Fragment, Options, Report, Utf8Bytes, compose, emission_minimum, fragments_of};

/// Rounds of compose -> emit -> measure before falling back to the smallest composition.
const MAX_ROUNDS: usize = 16;

/// What composition did to one emitted file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileCompose {
    /// Emitted path.
    pub path: String,
    /// Content source (`content/...`).
    pub source: String,
    /// The governing cap rule's glob, if any.
    pub rule: Option<String>,
    /// Its cap.
    pub cap: Option<u64>,
    /// Bytes with every section whole.
    pub full_bytes: u64,
    /// Bytes emitted.
    pub bytes: u64,
    /// The body budget the sections were composed to, when the cap forced a composition.
    pub budget: Option<i64>,
    /// The composer's report (absent when the source has no sections).
    pub report: Option<Report>,
}

/// Even the smallest composition is over the cap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{runtime} ({scope}): {path} (from {artifact}) is {full} bytes, over its cap of {cap} (glob {rule}); with every shrinkable section at its smallest it is still {smallest} bytes (section budget {budget})"
)]
pub struct FitError {
    /// Runtime id.
    pub runtime: String,
    /// Scope.
    pub scope: String,
    /// Emitted path.
    pub path: String,
    /// The artifact: its content source.
    pub artifact: String,
    /// The cap rule's glob.
    pub rule: String,
    /// The cap.
    pub cap: u64,
    /// The budget left for the sections.
    pub budget: i64,
    /// Bytes with every section whole.
    pub full: u64,
    /// The smallest size reachable.
    pub smallest: u64,
}

impl FitError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        format!(
            "mark more of {} shrinkable (shrink=\"drop|head:N|truncate:FLOOR\" on a section), move text into steps or detail parts, or raise the cap in the manifest",
            self.artifact
        )
    }
}

fn options() -> Options<'static> {
    Options { minimum_for: Some(&emission_minimum), priority_cutoff: true, monotone: true, ..Options::default() }
}

/// One source being composed.
struct Source<'c> {
    fragments: Vec<Fragment>,
    full_body: u64,
    /// (file index, rule) of every emitted file of this source that a rule caps.
    capped: Vec<(usize, &'c CapRule)>,
    budget: i64,
    plan: Option<Composition>,
}

fn source_of(path: &str) -> Option<RelPath> {
    path.strip_prefix("content/").and_then(|p| RelPath::new(p).ok())
}

/// Emits with `emit`, composing every over-cap file with sections to fit its cap.
pub(crate) fn fit<E: From<FitError>>(
    content: &Content,
    cap: &Capability,
    scope: Scope,
    emit: impl Fn(&Content) -> Result<Emission, E>,
) -> Result<(Emission, Vec<FileCompose>), E> {
    let first = emit(content)?;
    let rules = Rules::new(cap, scope);
    let full_bytes: BTreeMap<String, u64> =
        first.files.iter().map(|f| (f.path.to_string(), rule_bytes(&f.bytes))).collect();

    // Sources with sections that have at least one emitted file over its cap.
    let mut sources: BTreeMap<RelPath, Source<'_>> = BTreeMap::new();
    for (i, f) in first.files.iter().enumerate() {
        let Some((_, rule)) = rules.first_match(f.path.as_str()) else { continue };
        let Some(src) = f.sources.first().and_then(|s| source_of(s)) else { continue };
        let Some(sections) = content.sections_of(&src) else { continue };
        let entry = sources.entry(src).or_insert_with(|| {
            let fragments = fragments_of(sections);
            let full_body = msd_core::compose::total(&fragments, &Utf8Bytes);
            Source { fragments, full_body, capped: Vec::new(), budget: i64::MAX, plan: None }
        });
        entry.capped.push((i, rule));
    }
    sources.retain(|_, s| s.capped.iter().any(|(i, r)| rule_bytes(&first.files[*i].bytes) > r.max_bytes));

    let mut emission = first;
    if !sources.is_empty() {
        let path_of = |e: &Emission, i: usize| e.files[i].path.to_string();
        let bytes_at = |e: &Emission, path: &str| {
            e.files.iter().find(|f| f.path.as_str() == path).map_or(0, |f| rule_bytes(&f.bytes))
        };
        let capped_paths: BTreeMap<RelPath, Vec<(String, &CapRule)>> = sources
            .iter()
            .map(|(k, s)| (k.clone(), s.capped.iter().map(|(i, r)| (path_of(&emission, *i), *r)).collect()))
            .collect();
        for (src, s) in sources.iter_mut() {
            s.budget = capped_paths[src]
                .iter()
                .map(|(p, r)| {
                    let overhead = i128::from(full_bytes[p]) - i128::from(s.full_body);
                    i64::try_from(i128::from(r.max_bytes) - overhead).unwrap_or(i64::MIN)
                })
                .min()
                .unwrap_or(i64::MAX);
        }

        // The smallest composition first: when it is over, nothing will fit.
        let minimum: BTreeMap<RelPath, Composition> = sources
            .iter()
            .map(|(k, s)| (k.clone(), msd_core::compose::minimum(&s.fragments, &Utf8Bytes, &options())))
            .collect();
        let smallest = emit(&content.with_bodies(&render_all(&sources, &minimum)))?;
        for (src, s) in &sources {
            for (path, rule) in &capped_paths[src] {
                let b = bytes_at(&smallest, path);
                if b > rule.max_bytes {
                    return Err(FitError {
                        runtime: cap.id.clone(),
                        scope: scope.as_str().to_string(),
                        path: path.clone(),
                        artifact: format!("content/{src}"),
                        rule: rule.glob.clone(),
                        cap: rule.max_bytes,
                        budget: s.budget,
                        full: full_bytes[path],
                        smallest: b,
                    }
                    .into());
                }
            }
        }

        let mut settled = false;
        for _ in 0..MAX_ROUNDS {
            let mut plans = BTreeMap::new();
            for (src, s) in sources.iter_mut() {
                let c = compose(&s.fragments, s.budget, &Utf8Bytes, &options()).expect("parsed sections compose");
                let c = if c.report.hard_failed || !c.report.fits { minimum[src].clone() } else { c };
                plans.insert(src.clone(), c.clone());
                s.plan = Some(c);
            }
            let e = emit(&content.with_bodies(&render_all(&sources, &plans)))?;
            let mut all_fit = true;
            for (src, s) in sources.iter_mut() {
                let overshoot = capped_paths[src]
                    .iter()
                    .map(|(p, r)| bytes_at(&e, p).saturating_sub(r.max_bytes))
                    .max()
                    .unwrap_or(0);
                if overshoot > 0 {
                    all_fit = false;
                    s.budget = s.budget.saturating_sub(i64::try_from(overshoot).unwrap_or(i64::MAX));
                }
            }
            emission = e;
            if all_fit {
                settled = true;
                break;
            }
        }
        if !settled {
            for (src, s) in sources.iter_mut() {
                s.plan = Some(minimum[src].clone());
            }
            emission = smallest;
        }
    }

    let mut reports = Vec::new();
    for f in &emission.files {
        let path = f.path.to_string();
        let rule = rules.first_match(&path).map(|(_, r)| r);
        let src = f.sources.first().and_then(|s| source_of(s));
        let composed = src.as_ref().and_then(|s| sources.get(s));
        let report = match (composed, src.as_ref().and_then(|s| content.sections_of(s))) {
            (Some(s), _) => s.plan.as_ref().map(|p| p.report.clone()),
            (None, Some(sections)) => {
                // Composed at its own size: nothing moves, the report shows what could.
                let fragments = fragments_of(sections);
                let whole = i64::try_from(msd_core::compose::total(&fragments, &Utf8Bytes)).unwrap_or(i64::MAX);
                Some(compose(&fragments, whole, &Utf8Bytes, &options()).expect("parsed sections compose").report)
            }
            (None, None) => None,
        };
        if rule.is_none() && report.is_none() {
            continue;
        }
        reports.push(FileCompose {
            path: path.clone(),
            source: f.sources.first().cloned().unwrap_or_default(),
            rule: rule.map(|r| r.glob.clone()),
            cap: rule.map(|r| r.max_bytes),
            full_bytes: full_bytes.get(&path).copied().unwrap_or(0),
            bytes: rule_bytes(&f.bytes),
            budget: composed.map(|s| s.budget),
            report,
        });
    }
    Ok((emission, reports))
}

fn render_all(
    sources: &BTreeMap<RelPath, Source<'_>>,
    plans: &BTreeMap<RelPath, Composition>,
) -> BTreeMap<RelPath, String> {
    sources.iter().map(|(k, s)| (k.clone(), msd_core::compose::render_sections(&s.fragments, &plans[k]))).collect()
}
