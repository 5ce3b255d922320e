//! The compact-content token benchmark (ADR-4139, contracts section 10 "Benchmark"): how much
//! text each command puts into a model's context before its first step, with
//! `workflow.compact_content` off and on.
//!
//! Input: a parsed [`Content`]. Output: a [`Bench`]: per command, the eagerly loaded bytes and
//! tokens (the command file plus every file its `@` lines include; with the key off, plus the
//! detail parts those included workflows name, which the gate then reads), and the aggregate.
//! Pure and deterministic: text is measured with markers stripped, as installed before path
//! rewriting, in sorted order.
//!
//! Tokens come from a proxy tokenizer (o200k_base through the pinned `tiktoken-rs`): no runtime
//! uses exactly it, so counts are labelled a proxy; the reduction between off and on is what the
//! benchmark reports. Reporting only: it gates nothing.

use std::collections::BTreeMap;

use crate::dev::partition::part_refs;
use crate::pipeline::load::Content;
use msd_core::markup::markers;

/// The label of the token counts.
pub(crate) const TOKENIZER: &str = "o200k_base via tiktoken-rs 0.12.1 (proxy tokenizer)";

/// Bytes and tokens of one measurement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Size {
    /// UTF-8 bytes.
    pub bytes: u64,
    /// Proxy tokens.
    pub tokens: u64,
}

impl std::ops::AddAssign for Size {
    fn add_assign(&mut self, o: Size) {
        self.bytes += o.bytes;
        self.tokens += o.tokens;
    }
}

/// One command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Row {
    /// The command stem.
    pub command: String,
    /// Core files its `@` lines include (relative to the core dir).
    pub eager: Vec<String>,
    /// Detail parts those workflows name (read only with the key off).
    pub detail_parts: Vec<String>,
    /// Key off: command + includes + detail parts.
    pub off: Size,
    /// Key on: command + includes.
    pub on: Size,
}

/// The whole benchmark.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Bench {
    /// What counted the tokens.
    pub tokenizer: String,
    /// What is measured.
    pub measures: String,
    /// Per command, sorted.
    pub rows: Vec<Row>,
    /// Sum over every command.
    pub total_off: Size,
    /// Sum over every command.
    pub total_on: Size,
}

fn size(text: &str) -> Size {
    let tokens = tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as u64;
    Size { bytes: text.len() as u64, tokens }
}

/// Measures every command of `content`.
pub(crate) fn measure(content: &Content) -> Bench {
    let core: BTreeMap<&str, &str> =
        content.core.iter().filter_map(|f| f.text.as_deref().map(|t| (f.rel.as_str(), t))).collect();
    let mut rows = Vec::new();
    let (mut total_off, mut total_on) = (Size::default(), Size::default());
    for c in &content.commands {
        let raw = String::from_utf8_lossy(&content.tree.files[&c.source]).into_owned();
        let text = markers::parse(c.source.as_str(), &raw).map(|d| d.strip()).unwrap_or(raw);
        let mut on = size(&text);
        let mut eager = Vec::new();
        let mut parts: Vec<String> = Vec::new();
        for line in text.lines() {
            let Some(rel) = markers::js_trim(line).strip_prefix("@~/.claude/msd-core/") else { continue };
            let Some(body) = core.get(rel) else { continue };
            on += size(body);
            eager.push(rel.to_string());
            if rel.starts_with("workflows/") {
                for r in part_refs(body) {
                    let Some(p) = r.resolved.map(|p| format!("workflows/{p}")) else { continue };
                    if core.contains_key(p.as_str()) && !parts.contains(&p) {
                        parts.push(p);
                    }
                }
            }
        }
        let mut off = on;
        for p in &parts {
            off += size(core[p.as_str()]);
        }
        total_off += off;
        total_on += on;
        rows.push(Row { command: c.stem.clone(), eager, detail_parts: parts, off, on });
    }
    Bench {
        tokenizer: TOKENIZER.into(),
        measures: "eagerly loaded text per command: the command file and its @-included files; key off adds the detail parts the included workflows name".into(),
        rows,
        total_off,
        total_on,
    }
}

fn pct(off: u64, on: u64) -> String {
    if off == 0 {
        return "0.0%".into();
    }
    format!("{:.1}%", (off - on.min(off)) as f64 * 100.0 / off as f64)
}

/// The Markdown table: every command whose load differs between off and on, then the total.
pub(crate) fn table(b: &Bench) -> String {
    let mut s = format!(
        "Tokens: {}. Eager = the command file and its `@` includes; key off also reads the detail parts.\n\n",
        b.tokenizer
    );
    s.push_str("| command | parts | bytes off | bytes on | tokens off | tokens on | tokens saved |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|\n");
    let mut unchanged = 0;
    for r in &b.rows {
        if r.off == r.on {
            unchanged += 1;
            continue;
        }
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.command,
            r.detail_parts.len(),
            r.off.bytes,
            r.on.bytes,
            r.off.tokens,
            r.on.tokens,
            pct(r.off.tokens, r.on.tokens)
        ));
    }
    s.push_str(&format!(
        "| all {} commands ({unchanged} unchanged) | | {} | {} | {} | {} | {} |\n",
        b.rows.len(),
        b.total_off.bytes,
        b.total_on.bytes,
        b.total_off.tokens,
        b.total_on.tokens,
        pct(b.total_off.tokens, b.total_on.tokens)
    ));
    s
}
