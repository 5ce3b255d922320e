//! `msd-core/workflows/section-manifest.json`: what `msd_run query init.<stem>` needs from the
//! content and cannot read from an installed tree (SPEC section 9, contracts section 6).
//!
//! Installed workflows have their markers stripped, and installed command files take a
//! different form in every runtime, so the facts msd_run selects with are generated here from
//! the source content and shipped as one file: for every top-level workflow with sections, its
//! sections in document order (`id`, `when`, and `read`, the steps file holding the body); and
//! for every command that has a workflow, its argument grammar ([`ArgSpec`], parsed from
//! `argument-hint`).
//!
//! `read` is written like every installed path in content, in its Claude form
//! (`~/.claude/msd-core/workflows/<stem>/steps/<id>.md`), so the installer's rewriter turns it
//! into the real installed path of each runtime and scope: the same path the section's pointer
//! names, valid even where the core dir is not `<home>/msd-core` (Cline's local install).
//!
//! Input: a content [`Tree`]. Output: a [`SectionManifest`] or a typed [`GenError`]:
//! `fail_source_parse_error` (a marker or frontmatter that does not parse),
//! `fail_missing_step_file` (a section whose steps file is absent), `fail_orphan_step_file` (a
//! steps file that no section names and no reachable text mentions as `steps/<name>`; reachability
//! is a fixed point from the parent workflow through the steps files it reaches).
//!
//! Invariants: a workflow with no sections has no key (its init field is `null`: nothing extra
//! to read); an empty array never occurs; keys are sorted, sections stay in document order.
//! [`verify_content`] makes an install fail when the committed file is stale or missing, so an
//! installed msd_run never selects with outdated sections.

use std::collections::{BTreeMap, BTreeSet};

use crate::pipeline::freshness::{GenError, Output, Reason, fix_command};
use crate::pipeline::load::Tree;
use msd_core::fs::relpath::RelPath;
use msd_core::installed::invocation::{self};
use msd_core::markup::markers;

pub(crate) use msd_core::installed::section_manifest::{
    Entry, INSTALLED_PREFIX, PATH, SCHEMA_VERSION, SectionManifest,
};

fn steps_prefix(stem: &str) -> String {
    format!("msd-core/workflows/{stem}/steps/")
}

fn text<'a>(tree: &'a Tree, rel: &RelPath, bytes: &'a [u8]) -> Result<&'a str, GenError> {
    std::str::from_utf8(bytes).map_err(|_| GenError {
        reason: Reason::FailSourceParseError,
        path: tree.display(rel),
        line: None,
        message: "not valid UTF-8".into(),
        detail: None,
        hint: "save the file as UTF-8".into(),
    })
}

/// Builds the manifest of a content tree.
pub(crate) fn build(tree: &Tree) -> Result<SectionManifest, GenError> {
    let mut workflows: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    let mut stems: BTreeMap<String, &str> = BTreeMap::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for (rel, bytes) in &tree.files {
        let segs: Vec<&str> = rel.as_str().split('/').collect();
        let ["msd-core", "workflows", file] = segs.as_slice() else { continue };
        let Some(stem) = file.strip_suffix(".md") else { continue };
        let src = text(tree, rel, bytes)?;
        let doc = markers::parse(&tree.display(rel), src).map_err(|e| GenError {
            reason: Reason::FailSourceParseError,
            path: e.path.clone(),
            line: Some(e.line),
            message: format!("{}: {}", e.reason, e.detail),
            detail: None,
            hint: e.hint().to_string(),
        })?;
        stems.insert(stem.to_string(), src);
        let mut entries = Vec::new();
        for s in doc.explicit_sections() {
            let steps_rel = format!("{}{}.md", steps_prefix(stem), s.id);
            let steps = RelPath::new(steps_rel.clone()).expect("ids are path-safe");
            if !tree.files.contains_key(&steps) {
                return Err(GenError {
                    reason: Reason::FailMissingStepFile,
                    path: tree.display(rel),
                    line: Some(s.start_line),
                    message: format!("section `{}` has no steps file {steps_rel}", s.id),
                    detail: None,
                    hint: format!("write the section's body to {steps_rel}, or remove the section"),
                });
            }
            let read = format!("{INSTALLED_PREFIX}{}", &steps_rel["msd-core/".len()..]);
            named.insert(steps_rel);
            entries.push(Entry { id: s.id.clone(), when: s.when.as_str().to_string(), read });
        }
        if !entries.is_empty() {
            workflows.insert(stem.to_string(), entries);
        }
    }
    orphans(tree, &stems, &named)?;
    let mut arguments = BTreeMap::new();
    for (rel, bytes) in &tree.files {
        let segs: Vec<&str> = rel.as_str().split('/').collect();
        let ["commands", "msd", file] = segs.as_slice() else { continue };
        let Some(stem) = file.strip_suffix(".md").filter(|s| stems.contains_key(*s)) else { continue };
        let disp = tree.display(rel);
        let src = text(tree, rel, bytes)?;
        let parse_err = |line: usize, message: String, hint: &str| GenError {
            reason: Reason::FailSourceParseError,
            path: disp.clone(),
            line: Some(line),
            message,
            detail: None,
            hint: hint.to_string(),
        };
        let (fm, _) = msd_core::markup::frontmatter::split(&disp, src)
            .map_err(|e| parse_err(e.line, e.message, "frontmatter is a YAML mapping between two `---` lines"))?;
        let hint = match fm.as_ref().and_then(|f| f.get("argument-hint")) {
            None => String::new(),
            Some(v) => v.as_str().map(str::to_string).ok_or_else(|| {
                parse_err(line_of(src, "argument-hint"), "`argument-hint` is not a string".into(), "quote the hint")
            })?,
        };
        let spec = invocation::parse_hint(&hint).map_err(|m| {
            parse_err(
                line_of(src, "argument-hint"),
                format!("argument-hint: {m}"),
                "balance the `[` and `]` of the hint",
            )
        })?;
        arguments.insert(stem.to_string(), spec);
    }
    Ok(SectionManifest { schema_version: SCHEMA_VERSION, workflows, arguments })
}

fn line_of(src: &str, key: &str) -> usize {
    src.lines().position(|l| l.starts_with(key)).map_or(1, |i| i + 1)
}

/// Every steps file must be named by a section or reached, as `steps/<name>`, from its parent
/// workflow's text or from a steps file already reached.
fn orphans(tree: &Tree, stems: &BTreeMap<String, &str>, named: &BTreeSet<String>) -> Result<(), GenError> {
    let mut by_stem: BTreeMap<&str, Vec<&RelPath>> = BTreeMap::new();
    for rel in tree.files.keys() {
        let s = rel.as_str();
        let Some(rest) = s.strip_prefix("msd-core/workflows/") else { continue };
        let Some((stem, tail)) = rest.split_once('/') else { continue };
        if tail.starts_with("steps/") {
            by_stem.entry(stem).or_default().push(rel);
        }
    }
    let mut lost: Vec<&RelPath> = Vec::new();
    for (stem, files) in by_stem {
        let Some(parent) = stems.get(stem) else {
            lost.extend(files);
            continue;
        };
        let prefix = steps_prefix(stem);
        let mut texts: Vec<String> = vec![parent.to_string()];
        let mut reached: BTreeSet<&RelPath> = BTreeSet::new();
        for f in &files {
            if named.contains(f.as_str()) {
                reached.insert(f);
                texts.push(String::from_utf8_lossy(&tree.files[*f]).into_owned());
            }
        }
        loop {
            let before = reached.len();
            for f in &files {
                if reached.contains(f) {
                    continue;
                }
                let needle = format!("steps/{}", &f.as_str()[prefix.len()..]);
                if texts.iter().any(|t| t.contains(&needle)) {
                    reached.insert(f);
                    texts.push(String::from_utf8_lossy(&tree.files[*f]).into_owned());
                }
            }
            if reached.len() == before {
                break;
            }
        }
        lost.extend(files.into_iter().filter(|f| !reached.contains(f)));
    }
    if let Some(first) = lost.first() {
        return Err(GenError {
            reason: Reason::FailOrphanStepFile,
            path: tree.display(first),
            line: None,
            message: format!("{} steps file(s) that no section or reachable text names", lost.len()),
            detail: Some(lost.iter().map(|f| format!("  {}", tree.display(f))).collect::<Vec<_>>().join("\n")),
            hint: "point a section of the parent workflow at the file (or mention `steps/<name>` where it is read), or delete it".into(),
        });
    }
    Ok(())
}

/// The output idiom for the manifest of a content dir on disk.
pub(crate) fn output(content_dir: &std::path::Path, fix: String) -> Output {
    Output {
        path: content_dir.join(PATH),
        fix,
        missing: Reason::FailManifestMissing,
        unparseable: Reason::FailManifestUnparseable,
        malformed_shape: Reason::FailManifestMalformedShape,
    }
}

/// Install-time check: when any workflow has sections, the tree must carry a fresh manifest;
/// when it carries one, the manifest must be fresh.
pub(crate) fn verify_content(tree: &Tree) -> Result<(), GenError> {
    let fresh = build(tree)?;
    let rel = RelPath::new(PATH).expect("static");
    let committed = tree.files.get(&rel);
    if committed.is_none() && fresh.workflows.is_empty() {
        return Ok(());
    }
    let fix = if tree.origin == "content" {
        fix_command("section-manifest", None)
    } else {
        fix_command("section-manifest", Some(std::path::Path::new(&tree.origin)))
    };
    let out = Output { path: tree.display(&rel).into(), ..output(std::path::Path::new(""), fix) };
    out.compare(committed.map(|b| &b[..]), &fresh.render(), SectionManifest::has_shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Tree {
        Tree {
            origin: "t".into(),
            files: files
                .iter()
                .map(|(p, b)| (RelPath::new(*p).unwrap(), msd_core::fs::bytes::Bytes::from(b.as_bytes().to_vec())))
                .collect(),
        }
    }

    const WF: &str = "x\n<!-- msd:section id=\"p-prd\" when=\"flag:--prd\" -->\nread steps/p-prd.md\n<!-- /msd:section -->\n<!-- msd:section id=\"p-gap\" when=\"state:gap-closure-phase\" -->\nread steps/p-gap.md\n<!-- /msd:section -->\n";

    #[test]
    fn section_manifest_lists_sections_in_order_and_arguments() {
        let t = tree(&[
            ("msd-core/workflows/p.md", WF),
            ("msd-core/workflows/p/steps/p-prd.md", "prd body, see steps/p-extra.md"),
            ("msd-core/workflows/p/steps/p-gap.md", "gap"),
            ("msd-core/workflows/p/steps/p-extra.md", "reached through p-prd"),
            ("msd-core/workflows/plain.md", "no sections"),
            ("commands/msd/p.md", "---\nname: msd:p\nargument-hint: \"[phase] [--prd <file>]\"\n---\nbody\n"),
            ("commands/msd/lonely.md", "---\nname: msd:lonely\n---\n"),
        ]);
        let m = build(&t).unwrap();
        assert_eq!(m.workflows.keys().collect::<Vec<_>>(), ["p"], "no key for a workflow without sections");
        let ids: Vec<_> = m.workflows["p"].iter().map(|e| (e.id.as_str(), e.when.as_str())).collect();
        assert_eq!(ids, [("p-prd", "flag:--prd"), ("p-gap", "state:gap-closure-phase")]);
        assert_eq!(m.workflows["p"][0].read, "~/.claude/msd-core/workflows/p/steps/p-prd.md");
        assert_eq!(m.arguments.keys().collect::<Vec<_>>(), ["p"], "only commands that have a workflow");
        assert_eq!(m.arguments["p"].value_flags["--prd"], "<file>");
        assert!(m.render().ends_with("}\n"));
        assert!(SectionManifest::has_shape(&serde_json::from_str(&m.render()).unwrap()));
    }

    #[test]
    fn section_manifest_typed_failures() {
        let reason = |files: &[(&str, &str)]| build(&tree(files)).unwrap_err().reason;
        assert_eq!(reason(&[("msd-core/workflows/p.md", WF)]), Reason::FailMissingStepFile);
        assert_eq!(
            reason(&[
                ("msd-core/workflows/p.md", WF),
                ("msd-core/workflows/p/steps/p-prd.md", "a"),
                ("msd-core/workflows/p/steps/p-gap.md", "b"),
                ("msd-core/workflows/p/steps/stray.md", "c"),
            ]),
            Reason::FailOrphanStepFile
        );
        assert_eq!(reason(&[("msd-core/workflows/gone/steps/x.md", "no parent")]), Reason::FailOrphanStepFile);
        assert_eq!(reason(&[("msd-core/workflows/p.md", "<!-- /msd:section -->\n")]), Reason::FailSourceParseError);
        assert_eq!(
            reason(&[("msd-core/workflows/p.md", "x"), ("commands/msd/p.md", "---\nargument-hint: \"[phase\"\n---\n")]),
            Reason::FailSourceParseError
        );
        let e = build(&tree(&[("msd-core/workflows/p.md", WF)])).unwrap_err();
        assert_eq!(e.line, Some(2), "the missing step is reported at its section");
    }

    #[test]
    fn section_manifest_install_check_requires_a_fresh_file() {
        let base = [
            ("msd-core/workflows/p.md", WF),
            ("msd-core/workflows/p/steps/p-prd.md", "a"),
            ("msd-core/workflows/p/steps/p-gap.md", "b"),
        ];
        assert_eq!(verify_content(&tree(&base)).unwrap_err().reason, Reason::FailManifestMissing);
        let fresh = build(&tree(&base)).unwrap().render();
        let mut files = base.to_vec();
        files.push((PATH, &fresh));
        verify_content(&tree(&files)).unwrap();
        let stale = fresh.replace("flag:--prd", "flag:--wave");
        files.pop();
        files.push((PATH, &stale));
        let e = verify_content(&tree(&files)).unwrap_err();
        assert_eq!(e.reason, Reason::FailStale);
        let detail = e.detail.unwrap();
        assert!(detail.contains("-") && detail.contains("\"when\": \"flag:--wave\""), "{detail}");
        assert!(detail.contains("+") && detail.contains("\"when\": \"flag:--prd\""), "{detail}");
        for (bad, want) in [("{", Reason::FailManifestUnparseable), ("[]", Reason::FailManifestMalformedShape)] {
            files.pop();
            files.push((PATH, bad));
            assert_eq!(verify_content(&tree(&files)).unwrap_err().reason, want);
        }
        // No sections and no file: nothing to check.
        verify_content(&tree(&[("msd-core/workflows/plain.md", "x")])).unwrap();
    }
}
