//! `msd-install attribution [--base REV] [--base-binary PATH] [--json]`: run emitted attribution
//! and print its report, grouped by source file, or as one JSON document.
//!
//! Exit codes: 0 clean, 1 violations (the report says which), 2 an unknown base revision or no
//! git work tree, 3 a malformed acknowledgement file or a side that does not install, 4 a failing
//! git, io or base binary.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::human_bytes;
use crate::cli::args::AttributionArgs;
use crate::cli::error::Error;
use crate::cli::settings::{Settings, Subcommand, Takes};
use crate::dev::attribution::{self, AckStatus, Change, Options, Report, Violation, acks::ACK_DIR};
use crate::pipeline::target::Environment;

impl Subcommand for AttributionArgs {
    const NAME: &'static str = "attribution";

    fn json(&self) -> Takes {
        Takes::Yes
    }

    fn run(&self, s: &Settings) -> Result<(), Error> {
        run(s, self)
    }
}

/// Runs `attribution`.
pub(crate) fn run(s: &Settings, args: &AttributionArgs) -> Result<(), Error> {
    let report = attribution::run(&Options {
        root: args.root.clone(),
        base: args.base.clone(),
        base_binary: args.base_binary.clone(),
        env: Environment::golden(),
    })?;
    if s.output.json {
        s.output.document(&report);
    } else {
        s.output.text(&render(&report));
    }
    let n = report.outcome.violations.len();
    if n == 0 {
        Ok(())
    } else {
        // The report is printed; with --json the app prints no second document for CheckFailed.
        Err(Error::CheckFailed(format!("emitted attribution found {n} violation(s)")))
    }
}

fn bytes(n: Option<u64>) -> String {
    n.map_or("-".into(), |n| format!("{} B", human_bytes(n)))
}

fn delta(before: u64, after: u64) -> String {
    if after >= before {
        format!("+{}", human_bytes(after - before))
    } else {
        format!("-{}", human_bytes(before - after))
    }
}

fn sizes(change: Change, before: Option<u64>, after: Option<u64>) -> String {
    match (change, before, after) {
        (Change::Changed, Some(b), Some(a)) => format!("{} -> {} ({})", bytes(Some(b)), bytes(Some(a)), delta(b, a)),
        (Change::Added, _, a) => format!("new, {}", bytes(a)),
        (_, b, _) => format!("{}, removed", bytes(b)),
    }
}

/// Lines of a table, columns padded to their widest cell (the last column is free).
fn table(rows: &[Vec<String>], indent: &str) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|i| rows.iter().filter_map(|r| r.get(i)).map(|c| c.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let mut line = indent.to_string();
        for (i, c) in r.iter().enumerate() {
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn range(deltas: impl Iterator<Item = (u64, u64)>) -> String {
    let ds: Vec<i128> = deltas.map(|(b, a)| a as i128 - b as i128).collect();
    let (lo, hi) = (ds.iter().min().copied().unwrap_or(0), ds.iter().max().copied().unwrap_or(0));
    let show = |d: i128| if d >= 0 { format!("+{d}") } else { d.to_string() };
    if lo == hi { format!("{} B", show(lo)) } else { format!("{} to {} B", show(lo), show(hi)) }
}

/// The report for people.
pub(crate) fn render(r: &Report) -> String {
    let o = &r.outcome;
    let c = &o.counts;
    let mut s = String::new();
    let _ = writeln!(s, "emitted attribution: working tree against {} ({})", r.base.rev, r.base.commit);
    match &r.base.binary {
        Some(b) => {
            let _ = writeln!(
                s,
                "  base emitted by {b} (msd-install {}), working tree by msd-install {}, both for home {}",
                r.base.tool_version, r.tool_version, r.home
            );
        }
        None => {
            let _ = writeln!(s, "  both sides emitted by this msd-install {} for home {}", r.tool_version, r.home);
        }
    }
    let _ = writeln!(
        s,
        "  {} runtime x scope emissions at the base, {} now; {} files at the base, {} now",
        c.emissions_base, c.emissions_current, c.files_base, c.files_current
    );
    let _ = writeln!(
        s,
        "  {} changed, {} added, {} removed, {} unchanged, {} left out (bytes of the binary); {} file(s) differ from the base",
        c.changed, c.added, c.removed, c.unchanged, c.excluded, r.changed_files
    );

    if !o.by_source.is_empty() {
        s.push_str("\nby source file (the emitted files each change explains):\n");
        for (src, g) in &o.by_source {
            let runtimes: BTreeSet<&str> = g.touched.iter().map(|t| t.runtime.as_str()).collect();
            let _ = writeln!(
                s,
                "{src} ({}): {} emitted file(s) in {} runtime(s)",
                g.status.as_str(),
                g.touched.len(),
                runtimes.len()
            );
            let rows: Vec<Vec<String>> = g
                .touched
                .iter()
                .map(|t| {
                    vec![
                        t.runtime.clone(),
                        t.scope.as_str().into(),
                        t.change.as_str().into(),
                        t.path.clone(),
                        sizes(t.change, t.before, t.after),
                    ]
                })
                .collect();
            s.push_str(&table(&rows, "  "));
        }
    }

    let unexplained: Vec<_> = o.moved.iter().filter(|m| m.attributed_to.is_empty()).collect();
    if !unexplained.is_empty() {
        s.push_str("\nunattributable (moved, and none of their sources changed):\n");
        for m in unexplained {
            let status = if m.acknowledged_by.is_empty() { "NOT ACKNOWLEDGED" } else { "acknowledged" };
            let _ = writeln!(
                s,
                "  {} {} {} {}  {}  [{status}]",
                m.runtime,
                m.scope.as_str(),
                m.change.as_str(),
                m.path,
                sizes(m.change, m.before, m.after)
            );
            let _ = writeln!(s, "      sources: {}", m.sources.join(", "));
            for a in &m.acknowledged_by {
                let _ = writeln!(s, "      by {} [{}]: {}", a.file, a.key, a.reason);
            }
        }
    }

    if !o.growth.is_empty() {
        s.push_str("\ngrowth of workflows and agents (needs an acknowledgement keyed by the content path):\n");
        let mut by_key: BTreeMap<&str, Vec<&attribution::SizeChange>> = BTreeMap::new();
        for g in &o.growth {
            by_key.entry(&g.key).or_default().push(g);
        }
        for (key, items) in by_key {
            let acked: BTreeSet<String> =
                items.iter().flat_map(|g| &g.acknowledged_by).map(|a| format!("{}: {}", a.file, a.reason)).collect();
            let status = if acked.is_empty() {
                "NOT ACKNOWLEDGED".to_string()
            } else {
                format!("acknowledged by {}", join(&acked))
            };
            let _ = writeln!(
                s,
                "  {key}: grew in {} emitted file(s), {}; {status}",
                items.len(),
                range(items.iter().map(|g| (g.before, g.after)))
            );
        }
    }
    if !o.shrunk.is_empty() {
        s.push_str("\nshrunk workflows and agents (reported, never gated):\n");
        let mut by_key: BTreeMap<&str, Vec<&attribution::SizeChange>> = BTreeMap::new();
        for g in &o.shrunk {
            by_key.entry(&g.key).or_default().push(g);
        }
        for (key, items) in by_key {
            let _ = writeln!(
                s,
                "  {key}: shrank in {} emitted file(s), {}",
                items.len(),
                range(items.iter().map(|g| (g.before, g.after)))
            );
        }
    }
    if !o.new_files.is_empty() {
        s.push_str("\nnew workflows and agents (NEW_FILE_CAP: at most 32,768 B in every runtime; no acknowledgement exempts):\n");
        let mut by_key: BTreeMap<&str, Vec<&attribution::NewFile>> = BTreeMap::new();
        for n in &o.new_files {
            by_key.entry(&n.key).or_default().push(n);
        }
        for (key, items) in by_key {
            let largest = items.iter().max_by_key(|n| n.bytes).expect("non-empty");
            let over = items.iter().filter(|n| n.bytes > n.cap).count();
            let verdict = if over == 0 { "within the cap".to_string() } else { format!("OVER THE CAP in {over}") };
            let _ = writeln!(
                s,
                "  {key}: {} emitted file(s), largest {} ({} {} {}); {verdict}",
                items.len(),
                bytes(Some(largest.bytes)),
                largest.runtime,
                largest.scope.as_str(),
                largest.path
            );
        }
    }
    if !o.acks.is_empty() {
        s.push_str("\nacknowledgements:\n");
        let rows: Vec<Vec<String>> = o
            .acks
            .iter()
            .map(|a| {
                let what = match a.status {
                    AckStatus::Used => format!("covers {}: {}", a.covered, a.reason),
                    AckStatus::Stale => "STALE: matches nothing that moved unexplained or grew".into(),
                    AckStatus::Spent => "spent: present at the base, inert".into(),
                };
                vec![format!("{:?}", a.status).to_lowercase(), a.file.clone(), a.key.clone(), what]
            })
            .collect();
        s.push_str(&table(&rows, "  "));
    }

    s.push('\n');
    if o.violations.is_empty() {
        s.push_str("clean: every emitted change is explained by a changed source or acknowledged\n");
        return s;
    }
    let count = |f: fn(&Violation) -> bool| o.violations.iter().filter(|v| f(v)).count();
    let _ = writeln!(
        s,
        "{} violation(s): {} unattributable, {} unacknowledged growth, {} over NEW_FILE_CAP, {} stale acknowledgement(s)",
        o.violations.len(),
        count(|v| matches!(v, Violation::Unattributable { .. })),
        count(|v| matches!(v, Violation::UnacknowledgedGrowth { .. })),
        count(|v| matches!(v, Violation::NewFileCap { .. })),
        count(|v| matches!(v, Violation::StaleAck { .. })),
    );
    let mut keys = BTreeSet::new();
    for v in &o.violations {
        match v {
            Violation::UnacknowledgedGrowth { key, .. } => {
                keys.insert(key.clone());
            }
            Violation::Unattributable { sources, .. } => {
                if let Some(k) = sources.iter().find(|s| s.starts_with("content/")).or(sources.first()) {
                    keys.insert(k.clone());
                }
            }
            Violation::NewFileCap { .. } | Violation::StaleAck { .. } => {}
        }
    }
    if o.violations.iter().any(|v| matches!(v, Violation::NewFileCap { .. })) {
        s.push_str("a new workflow or agent over 32,768 B must be split (steps or detail parts) before it lands\n");
    }
    if o.violations.iter().any(|v| matches!(v, Violation::StaleAck { .. })) {
        s.push_str("remove stale acknowledgement entries (their change no longer moves or grows anything)\n");
    }
    if !keys.is_empty() {
        let paths: serde_json::Map<String, serde_json::Value> =
            keys.into_iter().map(|k| (k, serde_json::json!({"reason": ""}))).collect();
        let doc = serde_json::json!({"version": 1, "paths": paths});
        let _ = writeln!(
            s,
            "if the drift is intended, save this as {ACK_DIR}/<your-change>.json and give each reason:\n{}",
            serde_json::to_string_pretty(&doc).expect("json")
        );
    }
    s
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join("; ")
}
