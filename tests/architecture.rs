//! The layout the code promises (docs/ARCHITECTURE.md), checked over the sources: no import
//! cycle between the modules of one parent in any crate, the layers of msd-install depend one
//! way only (cli -> dev -> apply -> pipeline -> msd_core), msd_core never names msd-install or
//! msd_run, and msd_run depends on msd_core alone. Each rule, and each form of reference the
//! scan claims to see, has a planted fixture that must go red.
//!
//! The sources are parsed with `syn`, not scanned as text: a file's module path comes from its
//! place in `src/` (and inline `mod x { .. }` blocks nest in it); a reference is any path that
//! starts with `crate`, `super` (any number of them) or `self`, a child module's name, or a name
//! a `use` brought in (`use super::a;` then `a::f()`), wherever it is written: `use` trees with
//! their `{..}` groups, imports inside function bodies, expressions, types, patterns and the
//! token trees of macro calls. What is left out: items under `#[cfg(test)]` (only those: code
//! after them counts), `tests.rs` files, comments and string literals, visibility paths
//! (`pub(super)` names no dependency).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

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

/// Whether `attrs` hold a `#[cfg(..)]` that is on only under test (`test`, `all(test, ..)`, but
/// not `not(test)`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let syn::Meta::List(list) = &a.meta else { return false };
        if !list.path.is_ident("cfg") {
            return false;
        }
        let words: Vec<String> =
            list.tokens.to_string().split(|c: char| !(c.is_alphanumeric() || c == '_')).map(str::to_string).collect();
        words.iter().any(|w| w == "test") && !words.iter().any(|w| w == "not" || w == "any")
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item;
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// What one module's code names: paths as written (resolved later, once every `use` of the
/// module is known), and the names its `use`s bring in.
#[derive(Default)]
struct Names {
    /// Paths as written, each with the module it was written in.
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// Per module: a name brought in by `use` -> the path it stands for (as written).
    aliases: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

/// Collects [`Names`] from the syntax tree of one file, module by module.
struct Collector<'n> {
    module: Vec<String>,
    names: &'n mut Names,
}

impl Collector<'_> {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut full = prefix.clone();
                if name == "self" {
                    // `use a::b::{self}` brings in `b`.
                    if let Some(last) = full.last().cloned() {
                        self.alias(last, full.clone());
                    }
                } else {
                    full.push(name.clone());
                    self.alias(name, full.clone());
                }
                self.names.paths.push((self.module.clone(), full));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                if r.ident != "self" {
                    full.push(r.ident.to_string());
                }
                self.alias(r.rename.to_string(), full.clone());
                self.names.paths.push((self.module.clone(), full));
            }
            syn::UseTree::Glob(_) => self.names.paths.push((self.module.clone(), prefix.clone())),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn alias(&mut self, name: String, path: Vec<String>) {
        if name != "_" {
            self.names.aliases.entry(self.module.clone()).or_default().insert(name, path);
        }
    }

    /// Paths in a macro call's tokens: every `a::b::c` run of identifiers.
    fn tokens(&mut self, tokens: TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let flush = |run: &mut Vec<String>, this: &mut Self| {
            if run.len() > 1 {
                this.names.paths.push((this.module.clone(), std::mem::take(run)));
            }
            run.clear();
        };
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => {
                    if !run.is_empty() && colons != 2 {
                        flush(&mut run, self);
                    }
                    run.push(i.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => colons += 1,
                TokenTree::Group(g) => {
                    flush(&mut run, self);
                    colons = 0;
                    self.tokens(g.stream());
                }
                _ => {
                    flush(&mut run, self);
                    colons = 0;
                }
            }
        }
        flush(&mut run, self);
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if let Some((_, items)) = &m.content {
            self.module.push(m.ident.to_string());
            for i in items {
                self.visit_item(i);
            }
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.names.paths.push((self.module.clone(), segs));
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }

    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        if let syn::Stmt::Local(l) = s
            && is_test_only(&l.attrs)
        {
            return;
        }
        visit::visit_stmt(self, s);
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
}

/// The module path `path`, written in `here`, stands for; `None` when it names no module path
/// of this crate (another crate, a local item, `Self`).
fn resolve(
    here: &[String],
    path: &[String],
    aliases: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    known: &BTreeSet<Vec<String>>,
    depth: usize,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String>;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "super" | "self" => {
            base = here.to_vec();
            while let Some(s) = rest.first().filter(|s| *s == "super" || *s == "self") {
                if s == "super" {
                    base.pop()?;
                }
                rest = &rest[1..];
            }
        }
        name => {
            let mut child = here.to_vec();
            child.push(name.to_string());
            if known.contains(&child) {
                base = here.to_vec();
            } else if let Some(target) = aliases.get(here).and_then(|a| a.get(name)) {
                if depth > 8 || target.as_slice() == path {
                    return None;
                }
                let mut full = resolve(here, target, aliases, known, depth + 1)?;
                full.extend(path[1..].iter().cloned());
                return Some(full);
            } else {
                return None;
            }
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Every `.rs` file under `src`.
fn rust_files(src: &Path) -> Vec<PathBuf> {
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
    files.sort();
    files
}

/// [`parse_names`] of a crate of this repository, once per test process: three tests read the same
/// three crates, and parsing them (syn, unoptimised in the dev profile) was nearly all of their
/// CPU. The planted fixtures' temporary trees are parsed each time (a path can come back).
fn names(src: &Path) -> Arc<(Names, BTreeSet<Vec<String>>)> {
    type Parsed = Arc<(Names, BTreeSet<Vec<String>>)>;
    static PARSED: OnceLock<Mutex<HashMap<PathBuf, Parsed>>> = OnceLock::new();
    if !src.starts_with(repo()) {
        return Arc::new(parse_names(src));
    }
    let cache = PARSED.get_or_init(Mutex::default);
    if let Some(hit) = cache.lock().unwrap().get(src) {
        return Arc::clone(hit);
    }
    let parsed = Arc::new(parse_names(src));
    cache.lock().unwrap().insert(src.to_path_buf(), Arc::clone(&parsed));
    parsed
}

/// Every module of the crate whose sources are in `src` with what its code names, and the names
/// of the modules (inline ones included).
fn parse_names(src: &Path) -> (Names, BTreeSet<Vec<String>>) {
    let mut names = Names::default();
    let mut known = BTreeSet::new();
    for f in rust_files(src) {
        let Some(m) = module_of(src, &f) else { continue };
        let text = std::fs::read_to_string(&f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        struct Mods<'k>(Vec<String>, &'k mut BTreeSet<Vec<String>>);
        impl<'ast> Visit<'ast> for Mods<'_> {
            fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
                if m.content.is_some() && !is_test_only(&m.attrs) {
                    self.0.push(m.ident.to_string());
                    self.1.insert(self.0.clone());
                    visit::visit_item_mod(self, m);
                    self.0.pop();
                }
            }
        }
        known.insert(m.clone());
        Mods(m.clone(), &mut known).visit_file(&file);
        let mut c = Collector { module: m, names: &mut names };
        for item in &file.items {
            c.visit_item(item);
        }
    }
    (names, known)
}

/// Module path -> the module paths (of this crate) its code references.
fn graph(src: &Path) -> Graph {
    let parsed = names(src);
    let (names, known) = &*parsed;
    let mut g = Graph::new();
    for m in known {
        g.entry(m.clone()).or_default();
    }
    for (here, path) in &names.paths {
        let Some(r) = resolve(here, path, &names.aliases, known, 0) else { continue };
        // The longest known module the path starts with.
        if let Some(target) = (1..=r.len()).rev().map(|n| r[..n].to_vec()).find(|p| known.contains(p)) {
            g.entry(here.clone()).or_default().insert(target);
        }
    }
    g
}

/// The crates a crate's code names: the first segment of every path that is not its own.
fn external_roots(src: &Path) -> BTreeSet<String> {
    let parsed = names(src);
    let (names, known) = &*parsed;
    names
        .paths
        .iter()
        .filter(|(here, p)| resolve(here, p, &names.aliases, known, 0).is_none())
        .filter_map(|(_, p)| p.first().cloned())
        .collect()
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
        ("msd-core", "crates/msd-core/src", &["msd_install", "msd_run"][..]),
        ("msd-run", "crates/msd-run/src", &["msd_install"][..]),
    ] {
        let roots = external_roots(&repo().join(src));
        assert!(roots.contains("std"), "{name}: the scan sees the paths of its code");
        for b in banned {
            assert!(!roots.contains(*b), "{name} names {b}");
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

/// The cycles of a planted crate.
fn planted_cycles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let (_d, src) = planted(files);
    cycles(&sibling_edges(&graph(&src)))
}

fn group(names: &[&str]) -> Vec<Vec<String>> {
    vec![names.iter().map(|s| (*s).to_string()).collect()]
}

#[test]
fn architecture_a_planted_cycle_goes_red() {
    let found = planted_cycles(&[
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a.rs", "use crate::b::B;\npub struct A;\n"),
        ("b/mod.rs", "pub mod inner;\npub struct B;\n"),
        ("b/inner.rs", "use crate::{a::A};\n#[cfg(test)]\nuse crate::zzz;\n"),
    ]);
    assert_eq!(found, group(&["a", "b"]));
}

#[test]
fn architecture_a_nested_cycle_and_a_layer_breach_go_red() {
    let (_d, src) = planted(&[
        ("lib.rs", "pub mod cli;\npub mod pipeline;\n"),
        ("cli.rs", "use crate::pipeline::load;\n"),
        (
            "pipeline/mod.rs",
            "pub mod load;\npub mod convert;\n// crate::cli in a comment is not a reference\nconst S: &str = \"crate::cli in a string is not one either\";\n",
        ),
        ("pipeline/load.rs", "use super::convert::X;\n"),
        ("pipeline/convert.rs", "pub struct X;\nfn f() { crate::pipeline::load::g(); crate::cli::h(); }\n"),
    ]);
    let g = graph(&src);
    let found = cycles(&sibling_edges(&g));
    assert!(found.contains(&vec!["pipeline::convert".to_string(), "pipeline::load".to_string()]), "{found:?}");
    assert!(found.contains(&vec!["cli".to_string(), "pipeline".to_string()]), "{found:?}");
    assert_eq!(layer_violations(&g, &["cli", "pipeline"]), vec!["pipeline::convert -> cli".to_string()]);
}

/// The parent with two children `a` and `b`, `b` naming `a` plainly; `a_text` is `a.rs`.
fn two_siblings(a_text: &str) -> Vec<Vec<String>> {
    planted_cycles(&[
        ("lib.rs", "pub mod p;\n"),
        ("p/mod.rs", "pub mod a;\npub mod b;\npub fn top() {}\n"),
        ("p/a.rs", a_text),
        ("p/b.rs", "use super::a::A;\npub struct B;\npub fn g() {}\n"),
    ])
}

#[test]
fn architecture_a_use_group_of_super_goes_red() {
    assert_eq!(two_siblings("use super::{top, b::B};\npub struct A;\n"), group(&["p::a", "p::b"]));
    assert_eq!(two_siblings("use super::{top, b};\npub struct A;\n"), group(&["p::a", "p::b"]));
    assert_eq!(two_siblings("use super::{self as parent, top};\npub struct A;\n"), Vec::<Vec<String>>::new());
}

#[test]
fn architecture_super_super_goes_red() {
    let found = planted_cycles(&[
        ("lib.rs", "pub mod p;\n"),
        ("p/mod.rs", "pub mod a;\npub mod b;\n"),
        ("p/a/mod.rs", "pub mod deep;\npub struct A;\n"),
        ("p/a/deep.rs", "pub fn f() { super::super::b::g(); }\n"),
        ("p/b.rs", "use super::a::A;\npub fn g() {}\n"),
    ]);
    assert_eq!(found, group(&["p::a", "p::b"]));
}

#[test]
fn architecture_a_bare_path_through_a_use_goes_red() {
    // The use names the parent (no sibling edge); the call goes through it into `b`.
    assert_eq!(two_siblings("use crate::p;\npub struct A;\nfn f() { p::b::g(); }\n"), group(&["p::a", "p::b"]));
    // `use super::b` then `b::g()`: found, and the same through a renamed import.
    assert_eq!(two_siblings("use super::b;\npub struct A;\nfn f() { b::g(); }\n"), group(&["p::a", "p::b"]));
    assert_eq!(two_siblings("use super as up;\npub struct A;\nfn f() { up::b::g(); }\n"), group(&["p::a", "p::b"]));
}

#[test]
fn architecture_an_import_inside_a_function_goes_red() {
    assert_eq!(two_siblings("pub struct A;\nfn f() {\n    use super::b::g;\n    g();\n}\n"), group(&["p::a", "p::b"]));
    // And a path inside a macro call.
    assert_eq!(two_siblings("pub struct A;\nfn f() { println!(\"{}\", super::b::g()); }\n"), group(&["p::a", "p::b"]));
}

#[test]
fn architecture_code_after_a_test_item_goes_red() {
    // A `#[cfg(test)]` item is left out, and only it: what follows it counts.
    let test_only = "pub struct A;\n#[cfg(test)]\nmod tests {\n    use super::super::b::g;\n}\n";
    assert_eq!(two_siblings(test_only), Vec::<Vec<String>>::new());
    let after = format!("{test_only}\npub fn after() {{ super::b::g(); }}\n");
    assert_eq!(two_siblings(&after), group(&["p::a", "p::b"]));
    let after_use = "#[cfg(test)]\nuse super::b::g as h;\npub struct A;\nuse super::b::B;\n";
    assert_eq!(two_siblings(after_use), group(&["p::a", "p::b"]));
}
