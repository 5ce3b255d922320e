//! The layout the code promises (docs/ARCHITECTURE.md), checked over the sources: no import
//! cycle between the modules of one parent in any crate, the layers of msd-install depend one
//! way only (cli -> dev -> apply -> pipeline -> msd_core), msd_core never names msd-install or
//! msd_run, and msd_run depends on msd_core alone. Each rule has a planted fixture that must go
//! red.
//!
//! The scan is textual, like `shared/tools/cycles.py`: a file's module path comes from its
//! place in `src/`; a reference is `crate::a::b` (including `use crate::a::{b, c}` groups) or
//! `super::a`; comments and everything after a file's `#[cfg(test)]` are ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::support::repo;

/// Module path -> the module paths its code references (non-test code only).
type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.strip_suffix(".rs")?;
    if stem == "tests" {
        return None;
    }
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_string());
    }
    Some(parts)
}

fn strip(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

fn idents(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The references of one file, as raw paths (`crate::a::b::C` -> [a, b, C]).
fn references(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut push = |base: Vec<String>, rest: &str| {
        let mut p = base;
        p.extend(rest.split("::").filter(|s| !s.is_empty()).map(str::to_string));
        out.push(p);
    };
    for word in idents(code) {
        if let Some(rest) = word.strip_prefix("crate::") {
            push(Vec::new(), rest);
        } else if let Some(rest) = word.strip_prefix("super::") {
            push(module[..module.len().saturating_sub(1)].to_vec(), rest);
        }
    }
    // Groups: `crate::a::{b, c::D}` names a::b and a::c.
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let tail = &rest[i + "crate::".len()..];
        let prefix_end =
            tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(tail.len());
        let prefix = &tail[..prefix_end];
        if (prefix.is_empty() || prefix.ends_with("::")) && tail[prefix_end..].starts_with('{') {
            let close = tail[prefix_end..].find('}').map_or(tail.len(), |c| prefix_end + c);
            for item in tail[prefix_end + 1..close].split(',') {
                let item = item.trim().split(|c: char| c == '{' || c.is_whitespace()).next().unwrap_or_default();
                if !item.is_empty() && item != "self" {
                    push(Vec::new(), &format!("{prefix}{item}"));
                }
            }
        }
        rest = tail;
    }
    out
}

/// Every module of the crate whose sources are in `src`, with what it references.
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    for f in &files {
        if let Some(m) = module_of(src, f) {
            modules.entry(m).or_default().push_str(&strip(&std::fs::read_to_string(f).unwrap()));
        }
    }
    let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    let mut g = Graph::new();
    for (m, code) in &modules {
        let refs = g.entry(m.clone()).or_default();
        for r in references(m, code) {
            // The longest known module the path starts with.
            if let Some(target) = (1..=r.len()).rev().map(|n| r[..n].to_vec()).find(|p| known.contains(p)) {
                refs.insert(target);
            }
        }
    }
    g
}

/// The sibling edges: for `a::x -> a::y::z`, the edge `a::x -> a::y` between children of `a`.
fn sibling_edges(g: &Graph) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut out: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (from, tos) in g {
        for to in tos {
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                out.entry(from[..=common].to_vec()).or_default().insert(to[..=common].to_vec());
            }
        }
    }
    out
}

/// Groups of more than one module that reach each other (Tarjan).
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a [String], usize>,
        low: BTreeMap<&'a [String], usize>,
        stack: Vec<&'a [String]>,
        on: BTreeSet<&'a [String]>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a [String]) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.edges.get(v) {
            for w in ws {
                if !t.index.contains_key(w.as_slice()) {
                    visit(t, w);
                    let lw = t.low[w.as_slice()];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if t.on.contains(w.as_slice()) {
                    let iw = t.index[w.as_slice()];
                    let lv = t.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                group.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    let nodes: BTreeSet<&Vec<String>> = edges.keys().chain(edges.values().flatten()).collect();
    for n in nodes {
        if !t.index.contains_key(n.as_slice()) {
            visit(&mut t, n);
        }
    }
    t.out
}

/// Edges against the layer order (`layers[0]` may use every later one, never the reverse).
fn layer_violations(g: &Graph, layers: &[&str]) -> Vec<String> {
    let rank = |m: &[String]| m.first().and_then(|f| layers.iter().position(|l| l == f));
    let mut out = Vec::new();
    for (from, tos) in g {
        for to in tos {
            if let (Some(a), Some(b)) = (rank(from), rank(to))
                && a > b
            {
                out.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    out
}

fn crates() -> Vec<(String, PathBuf)> {
    let root = repo();
    vec![
        ("msd-install".into(), root.join("src")),
        ("msd-core".into(), root.join("crates/msd-core/src")),
        ("msd-run".into(), root.join("crates/msd-run/src")),
    ]
}

#[test]
fn architecture_no_import_cycle_in_any_crate() {
    for (name, src) in crates() {
        let found = cycles(&sibling_edges(&graph(&src)));
        assert!(found.is_empty(), "{name}: modules in a cycle: {found:?}");
    }
}

#[test]
fn architecture_layers_depend_one_way() {
    let g = graph(&repo().join("src"));
    let bad = layer_violations(&g, &["cli", "dev", "apply", "pipeline"]);
    assert!(bad.is_empty(), "msd-install layers are cli -> dev -> apply -> pipeline; against the order: {bad:?}");
}

#[test]
fn architecture_core_and_helper_stand_alone() {
    for (name, src, banned) in [
        ("msd-core", "crates/msd-core/src", &["msd_install::", "msd_run::"][..]),
        ("msd-run", "crates/msd-run/src", &["msd_install::"][..]),
    ] {
        let g = graph(&repo().join(src));
        for m in g.keys() {
            let mut path = repo().join(src);
            path.extend(m.iter());
            let text = [path.with_extension("rs"), path.join("mod.rs"), path.join("lib.rs")]
                .iter()
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .map(|t| strip(&t))
                .collect::<String>();
            for b in banned {
                assert!(!text.contains(b), "{name}: {} names {b}", m.join("::"));
            }
        }
    }
    let manifest = std::fs::read_to_string(repo().join("crates/msd-run/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap_or_default();
    assert!(!deps.contains("msd-install"), "msd-run depends on msd-core only");
    assert!(deps.contains("msd-core"), "msd-run depends on msd-core");
    let core = std::fs::read_to_string(repo().join("crates/msd-core/Cargo.toml")).unwrap();
    for heavy in ["clap", "rayon", "indicatif", "tiktoken", "msd-run", "msd-install"] {
        let deps = core.split("[dependencies]").nth(1).unwrap_or_default().split("[dev-dependencies]").next().unwrap();
        assert!(!deps.contains(heavy), "msd-core must not depend on {heavy}");
    }
}

fn planted(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    for (rel, text) in files {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    (dir, src)
}

#[test]
fn architecture_a_planted_cycle_goes_red() {
    let (_d, src) = planted(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b/mod.rs", "pub mod inner;\npub struct B;\n"),
        ("b/inner.rs", "use crate::{a::A};\n#[cfg(test)]\nuse crate::zzz;\n"),
    ]);
    let found = cycles(&sibling_edges(&graph(&src)));
    assert_eq!(found, vec![vec!["a".to_string(), "b".to_string()]]);
}

#[test]
fn architecture_a_nested_cycle_and_a_layer_breach_go_red() {
    let (_d, src) = planted(&[
        ("lib.rs", "pub mod cli;\npub mod pipeline;\n"),
        ("cli.rs", "use crate::pipeline::load;\n"),
        ("pipeline/mod.rs", "pub mod load;\npub mod convert;\n// crate::cli in a comment is not a reference\n"),
        ("pipeline/load.rs", "use super::convert::X;\n"),
        ("pipeline/convert.rs", "pub struct X;\nfn f() { crate::pipeline::load::g(); crate::cli::h(); }\n"),
    ]);
    let g = graph(&src);
    let found = cycles(&sibling_edges(&g));
    assert!(found.contains(&vec!["pipeline::convert".to_string(), "pipeline::load".to_string()]), "{found:?}");
    assert!(found.contains(&vec!["cli".to_string(), "pipeline".to_string()]), "{found:?}");
    assert_eq!(layer_violations(&g, &["cli", "pipeline"]), vec!["pipeline::convert -> cli".to_string()]);
}
