//! Criterion benchmarks of the pipeline on the shipped content (SPEC section 13): loading and
//! parsing the content once, one runtime's emission (convert + compose + guard, no disk), and
//! the context predicate parser on the shipped CONTEXT.md and on larger synthetic stores, the
//! path and brand rewrite over every shipped text file, and the plan step of one runtime (an
//! empty home: every file an add; an installed one: every file a keep).
//! `cargo bench -p msd-bench --bench pipeline`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use msd_core::manifest::capability::Scope;
use msd_install::pipeline;
use msd_install::pipeline::target::Environment;

/// The emission adds the installed msd_run, which a bench binary does not have beside it (the
/// benches are a package of their own, without msd-install's binaries): the bench's own
/// executable stands in. Its bytes do not matter here: the helper is hashed once per process.
fn stand_in_helper() {
    let exe = std::env::current_exe().expect("the bench's executable");
    // SAFETY: set before any thread starts.
    unsafe { std::env::set_var(msd_install::pipeline::synth::MSD_RUN_BIN_ENV, exe) };
}

fn emission(c: &mut Criterion) {
    stand_in_helper();
    let sources = pipeline::Sources::default();
    let runtimes = pipeline::load_runtimes(&sources).expect("manifests");
    let content = pipeline::load_content(&sources).expect("content");
    let env = Environment::golden();
    let bytes: usize = content.tree.files.values().map(|b| b.len()).sum();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("load_content", |b| b.iter(|| pipeline::load_content(black_box(&sources)).unwrap()));
    for id in ["claude", "codex", "windsurf"] {
        let rt = runtimes.iter().find(|r| r.capability.id == id).expect("runtime");
        g.bench_with_input(BenchmarkId::new("emit_one_runtime", id), rt, |b, rt| {
            b.iter(|| pipeline::emit(&content, rt, Scope::Global, None, &env).unwrap())
        });
    }
    g.finish();
}

fn predicates(c: &mut Criterion) {
    let shipped = include_str!("../content/CONTEXT.md");
    let mut g = c.benchmark_group("predicates");
    for copies in [1usize, 4, 16] {
        // Copy k renames every class (`RULE` -> `K2RULE`), so the store holds no duplicates.
        let doc: String = (0..copies).map(|k| shipped.replace("- `", &format!("- `K{k}"))).collect();
        g.throughput(Throughput::Bytes(doc.len() as u64));
        g.bench_with_input(BenchmarkId::new("parse", format!("x{copies}")), &doc, |b, doc| {
            b.iter(|| msd_core::installed::predicates::parse(black_box(doc)))
        });
    }
    g.finish();
}

fn rewrite_and_plan(c: &mut Criterion) {
    stand_in_helper();
    let sources = pipeline::Sources::default();
    let runtimes = pipeline::load_runtimes(&sources).expect("manifests");
    let content = pipeline::load_content(&sources).expect("content");
    let env = Environment::golden();
    let rt = runtimes.iter().find(|r| r.capability.id == "opencode").expect("runtime");
    let target = pipeline::target::resolve(&rt.capability, Scope::Global, None, &env).expect("target");
    let stems: Vec<&str> = content.commands.iter().map(|c| c.stem.as_str()).collect();
    let rw = pipeline::convert::Rewriter::new(&rt.capability, &target, &stems);
    let texts: Vec<&str> = content.tree.files.values().filter_map(|b| std::str::from_utf8(b).ok()).collect();
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let mut g = c.benchmark_group("rewrite");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("opencode_all_text", |b| {
        b.iter(|| texts.iter().map(|t| rw.apply(black_box(t)).len()).sum::<usize>())
    });
    // 240 commands (content x8): one `/msd:` pattern keeps the searcher's packed path.
    let many: Vec<String> = (0..8).flat_map(|k| stems.iter().map(move |s| format!("{s}-x{k}"))).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let rw8 = pipeline::convert::Rewriter::new(&rt.capability, &target, &many);
    g.bench_function("opencode_all_text_240_commands", |b| {
        b.iter(|| texts.iter().map(|t| rw8.apply(black_box(t)).len()).sum::<usize>())
    });
    g.finish();

    let emitted = pipeline::emit(&content, rt, Scope::Global, None, &env).expect("emits");
    let build = |home: &std::path::Path| {
        msd_install::apply::plan::build(emitted.emission.clone(), &rt.capability, home, false, false).unwrap()
    };
    let empty = tempfile::tempdir().expect("tempdir");
    let installed = tempfile::tempdir().expect("tempdir");
    let mut plan = build(installed.path());
    let no_progress = &msd_install::apply::txn::NoProgress;
    let area = msd_install::apply::txn::Area::new(installed.path(), false);
    let (staged, _) = msd_install::apply::write::prepare(&mut plan, area, no_progress).expect("stages");
    staged.commit(no_progress).expect("installs");
    let mut g = c.benchmark_group("plan");
    g.throughput(Throughput::Elements(emitted.emission.files.len() as u64));
    g.bench_function("opencode_empty_home", |b| b.iter(|| build(black_box(empty.path()))));
    g.bench_function("opencode_installed_home", |b| b.iter(|| build(black_box(installed.path()))));
    g.finish();
}

criterion_group!(benches, emission, predicates, rewrite_and_plan);
criterion_main!(benches);
