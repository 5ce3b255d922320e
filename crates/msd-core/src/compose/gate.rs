//! The load-bearing contract gate (contracts section 4): deterministic, no model.
//!
//! Input: a fragment set, the budgets of a sweep and the composition to test (a closure, so the
//! gate runs the real callers: the review-prompt ladder, a document's emission). Output: a
//! [`GateReport`] or the first [`GateError`].
//!
//! The load-bearing set is derived, never listed: every verbatim or isolate fragment. Across the
//! sweep no load-bearing fragment may be omitted, shrunk or truncated, or change a byte; nothing
//! may hard-fail; the isolate prefix stays the same. A floored fragment is a success. The gate
//! is anti-vacuous: an empty load-bearing set fails, and so does a sweep that never puts the
//! composer under pressure.

use super::{ComposeError, Composition, Fragment, Report};

/// A gate failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// Nothing to guard.
    #[error("the load-bearing set is empty (no verbatim or isolate fragment): a gate over nothing proves nothing")]
    EmptyLoadBearingSet,
    /// The sweep never reached pressure.
    #[error("no budget of the sweep {budgets:?} put the composer under pressure")]
    NeverUnderPressure {
        /// The budgets tried.
        budgets: Vec<i64>,
    },
    /// A run hard-failed.
    #[error("budget {budget}: the composition hard-failed")]
    HardFailed {
        /// The budget.
        budget: i64,
    },
    /// A load-bearing fragment was touched.
    #[error("budget {budget}: load-bearing fragment `{id}` was {how}")]
    LoadBearingTouched {
        /// The budget.
        budget: i64,
        /// The fragment.
        id: String,
        /// omitted, shrunk, truncated or changed.
        how: &'static str,
    },
    /// The isolate prefix moved.
    #[error("budget {budget}: the isolate prefix differs from the declared isolate fragments")]
    IsolatePrefixChanged {
        /// The budget.
        budget: i64,
    },
    /// The composer refused the set.
    #[error(transparent)]
    Compose(#[from] ComposeError),
}

/// What the gate checked.
#[derive(Debug, Clone)]
pub struct GateReport {
    /// The load-bearing ids.
    pub load_bearing: Vec<String>,
    /// Each budget with its report.
    pub runs: Vec<(i64, Report)>,
}

/// The sweep of the contract: total x4, total+1, total, total-1, 75%, 50%, 25% (floored).
pub fn sweep(total: u64) -> Vec<i64> {
    let t = i64::try_from(total).unwrap_or(i64::MAX / 4);
    vec![t * 4, t + 1, t, t - 1, t * 3 / 4, t / 2, t / 4]
}

/// Runs `compose` at every budget and checks the contract.
pub fn run(
    fragments: &[Fragment],
    budgets: &[i64],
    compose: impl Fn(i64) -> Result<Composition, ComposeError>,
) -> Result<GateReport, GateError> {
    let load_bearing: Vec<&Fragment> = fragments.iter().filter(|f| f.is_load_bearing()).collect();
    if load_bearing.is_empty() {
        return Err(GateError::EmptyLoadBearingSet);
    }
    let prefix: String =
        fragments.iter().filter(|f| f.isolate).map(|f| format!("{}{}", f.wrapper, f.content)).collect();
    let mut runs = Vec::new();
    for &budget in budgets {
        let c = compose(budget)?;
        let r = &c.report;
        if r.hard_failed {
            return Err(GateError::HardFailed { budget });
        }
        for f in &load_bearing {
            let touched = |how| GateError::LoadBearingTouched { budget, id: f.id.clone(), how };
            if r.omitted.contains(&f.id) {
                return Err(touched("omitted"));
            }
            if r.shrunk.contains(&f.id) {
                return Err(touched("shrunk"));
            }
            if r.truncated.contains(&f.id) {
                return Err(touched("truncated"));
            }
            if c.get(&f.id).is_none_or(|p| p.content != f.content || p.wrapper != f.wrapper) {
                return Err(touched("changed"));
            }
        }
        if r.isolate_prefix != prefix {
            return Err(GateError::IsolatePrefixChanged { budget });
        }
        runs.push((budget, c.report));
    }
    if !runs.iter().any(|(_, r)| r.under_pressure) {
        return Err(GateError::NeverUnderPressure { budgets: budgets.to_vec() });
    }
    Ok(GateReport { load_bearing: load_bearing.iter().map(|f| f.id.clone()).collect(), runs })
}
