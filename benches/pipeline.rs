//! Criterion benchmarks of the pipeline on the shipped content (SPEC section 13): loading and
//! parsing the content once, one runtime's emission (convert + compose + guard, no disk), and
//! the context predicate parser on the shipped CONTEXT.md and on larger synthetic stores.
//! `cargo bench --bench pipeline`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use msd_core::manifest::capability::Scope;
use msd_install::pipeline;
use msd_install::pipeline::target::Environment;

fn emission(c: &mut Criterion) {
    // SAFETY: set before any thread starts; the emission adds the installed msd_run, which a
    // bench binary does not have beside it.
    unsafe { std::env::set_var(msd_install::pipeline::synth::MSD_RUN_BIN_ENV, env!("CARGO_BIN_EXE_msd_run")) };
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

criterion_group!(benches, emission, predicates);
criterion_main!(benches);
