//! Markdown surfaces (a shared `AGENTS.md`, Copilot's instructions): our text lives between
//! `<!-- msd-install:begin ID -->` and `<!-- msd-install:end ID -->` lines; everything outside
//! them is the user's and stays byte for byte.

use msd_core::manifest::surfaces::EntryKind;
use serde_json::Value;

use super::{Edit, SettingsError, WantedBlock};
use crate::apply::state::{LedgerEntry, SurfaceLedger};

fn begin(id: &str) -> String {
    format!("<!-- msd-install:begin {id} -->")
}

fn end(id: &str) -> String {
    format!("<!-- msd-install:end {id} -->")
}

/// Finds block `id`: (first line index, last line index), both marker lines.
fn find_block(display: &str, lines: &[&str], id: &str) -> Result<Option<(usize, usize)>, SettingsError> {
    let (b, e) = (begin(id), end(id));
    let Some(start) = lines.iter().position(|l| l.trim_end() == b) else {
        if let Some(i) = lines.iter().position(|l| l.trim_end() == e) {
            return Err(SettingsError {
                path: display.into(),
                line: Some(i + 1),
                message: format!("`{e}` without its begin line"),
            });
        }
        return Ok(None);
    };
    match lines[start + 1..].iter().position(|l| l.trim_end() == e) {
        Some(off) => {
            let stop = start + 1 + off;
            if let Some(again) = lines[stop + 1..].iter().position(|l| l.trim_end() == b) {
                return Err(SettingsError {
                    path: display.into(),
                    line: Some(stop + 2 + again),
                    message: format!(
                        "msd's block `{id}` occurs twice (lines {} and {}); delete one of them",
                        start + 1,
                        stop + 2 + again
                    ),
                });
            }
            Ok(Some((start, stop)))
        }
        None => Err(SettingsError {
            path: display.into(),
            line: Some(start + 1),
            message: format!("`{b}` has no matching `{e}`"),
        }),
    }
}

/// Whether the lines between a block's markers are the body we recorded.
fn same_body(inner: &str, recorded: &Value) -> bool {
    let Value::String(body) = recorded else { return false };
    inner == body || inner.strip_suffix('\n') == Some(body.as_str())
}

/// Upserts the blocks `want` into `current` and removes the blocks of `prev` no longer wanted.
pub(super) fn blocks(
    display: &str,
    current: Option<&str>,
    want: &[WantedBlock],
    prev: &SurfaceLedger,
) -> Result<Edit, SettingsError> {
    let mut text = current.unwrap_or("").to_string();
    let mut edit = Edit::default();
    let mut ledger = SurfaceLedger { created_file: prev.created_file || current.is_none(), ..Default::default() };
    // Check every marker we might touch before changing anything.
    {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for id in want.iter().map(|w| &w.id).chain(prev.entries.keys()) {
            find_block(display, &lines, id)?;
        }
    }
    for WantedBlock { id, text: body } in want {
        let mut block = format!("{}\n{}", begin(id), body);
        if !block.ends_with('\n') {
            block.push('\n');
        }
        block.push_str(&end(id));
        block.push('\n');
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut separator = prev.entries.get(id).and_then(|e| e.separator.clone());
        match find_block(display, &lines, id)? {
            Some((s, e)) => {
                let old: String = lines[s..=e].concat();
                if let Some(ours) = prev.entries.get(id)
                    && !same_body(&lines[s + 1..e].concat(), &ours.value)
                {
                    edit.edited.push(id.clone());
                    edit.notes
                        .push(format!("you edited msd's block `{id}`; it was backed up with the file and replaced"));
                }
                if old != block {
                    text = format!("{}{}{}", lines[..s].concat(), block, lines[e + 1..].concat());
                    edit.updated.push(id.clone());
                }
            }
            None => {
                // Separated from the user's text by one blank line, recorded so that removal
                // takes exactly what was added.
                let sep = if text.is_empty() || text.ends_with("\n\n") {
                    ""
                } else if text.ends_with('\n') {
                    "\n"
                } else {
                    "\n\n"
                };
                text = format!("{text}{sep}{block}");
                separator = (!sep.is_empty()).then(|| sep.to_string());
                edit.added.push(id.clone());
            }
        }
        ledger.entries.insert(
            id.clone(),
            LedgerEntry {
                kind: EntryKind::Block,
                at: Vec::new(),
                value: Value::String(body.clone()),
                separator,
                replaced: None,
            },
        );
    }
    let wanted: std::collections::BTreeSet<&String> = want.iter().map(|w| &w.id).collect();
    for (id, old) in prev.entries.iter().filter(|(id, _)| !wanted.contains(id)) {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let Some((s, e)) = find_block(display, &lines, id)? else { continue };
        if !same_body(&lines[s + 1..e].concat(), &old.value) {
            edit.edited.push(id.clone());
            edit.notes.push(format!("you edited msd's block `{id}`; it was backed up with the file and removed"));
        }
        let mut head = lines[..s].concat();
        if let Some(sep) = &old.separator
            && e + 1 == lines.len()
            && head.ends_with(sep.as_str())
        {
            head.truncate(head.len() - sep.len());
        }
        text = format!("{head}{}", lines[e + 1..].concat());
        edit.removed.push(id.clone());
    }
    edit.text = if ledger.created_file && text.is_empty() { None } else { Some(text) };
    if ledger.entries.is_empty() {
        ledger.created_file = false;
    }
    edit.ledger = ledger;
    Ok(edit)
}
