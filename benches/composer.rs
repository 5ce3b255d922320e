//! Criterion benchmarks of the marker parser and the composer (SPEC section 13), on synthetic
//! documents shaped like the shipped content: prose, fenced code holding marker look-alikes,
//! multi-line comments, protected blocks and `when=`-gated sections, at three sizes so that
//! linear growth shows. `cargo bench -p msd-bench --bench composer`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use msd_core::compose::budget::{self, BudgetOptions, PlanText, Sections};
use msd_core::compose::{self, Options, Utf8Bytes};
use msd_core::markup::markers;

const ATOMS: [&str; 4] = ["flag:--prd", "state:has-prior-phases", "flag:--auto", "always"];
const SHRINK: [&str; 4] = ["drop", "head:3", "truncate:200", "verbatim"];

/// A workflow of about `kb` KiB.
fn workflow(kb: usize) -> String {
    let mut s = String::from(
        "<!-- msd:section id=\"isolate-banner\" when=\"always\" -->\nmsd-core workflow\n<!-- /msd:section -->\n",
    );
    let mut i = 0;
    while s.len() < kb * 1024 {
        s.push_str(&format!(
            "## Step {i}\n\nRead the plan, then run `msd_run query init.plan {i}` and check each task.\r\n\n"
        ));
        s.push_str("```md\n<!-- msd:section id=\"example\" when=\"always\" -->\nshown, not parsed\n```\n\n");
        s.push_str("<!--\nA maintainer's note that spans\nseveral lines.\n-->\n\n");
        s.push_str("<!-- msd:protected -->\nNever skip the verification step.\n\n");
        s.push_str(&format!(
            "<!-- msd:section id=\"s{i}\" when=\"{}\" shrink=\"{}\" priority=\"{}\" -->\n",
            ATOMS[i % 4],
            SHRINK[i % 4],
            i % 3
        ));
        for l in 0..12 {
            s.push_str(&format!("Line {l} of section {i}: what to do and why, in a sentence of ordinary length.\n"));
        }
        s.push_str("<!-- /msd:section -->\n\n");
        i += 1;
    }
    s
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("markers/parse");
    for kb in [8, 32, 96] {
        let doc = workflow(kb);
        g.throughput(Throughput::Bytes(doc.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(format!("{kb}KiB")), &doc, |b, doc| {
            b.iter(|| markers::parse("bench.md", black_box(doc)).unwrap().strip())
        });
    }
    g.finish();
}

fn compose_emission(c: &mut Criterion) {
    let mut g = c.benchmark_group("compose/emission");
    for kb in [8, 32, 96] {
        let doc = workflow(kb);
        let sections = markers::parse("bench.md", &doc).unwrap().sections;
        let fragments = compose::fragments_of(&sections);
        let total = compose::total(&fragments, &Utf8Bytes) as i64;
        let opts =
            Options { minimum_for: Some(&compose::emission_minimum), priority_cutoff: true, ..Options::default() };
        // Halfway between the smallest composition and the whole: pressure, and it fits.
        let least = compose::minimum(&fragments, &Utf8Bytes, &opts).report.total as i64;
        let budget = (least + total) / 2;
        g.throughput(Throughput::Bytes(doc.len() as u64));
        g.bench_with_input(BenchmarkId::new("midway", format!("{kb}KiB")), &fragments, |b, f| {
            b.iter(|| {
                let plan = compose::compose(black_box(f), budget, &Utf8Bytes, &opts).unwrap();
                assert!(plan.report.fits);
                compose::render_sections(f, &plan)
            })
        });
        g.bench_with_input(BenchmarkId::new("whole", format!("{kb}KiB")), &doc, |b, doc| {
            b.iter(|| compose::document("bench.md", black_box(doc)).unwrap())
        });
    }
    g.finish();
}

fn prompt_budget(c: &mut Criterion) {
    let plan = |i: usize| PlanText {
        file: format!("0{i}-PLAN.md"),
        content: (0..400).map(|l| format!("Task line {l} of plan {i} with ordinary prose.\n")).collect(),
    };
    let s = Sections {
        instructions: "Review the plans.\n".repeat(40),
        roadmap: "Phase line.\n".repeat(200),
        plans: (1..=5).map(plan).collect(),
        project_md: Some("Project line.\n".repeat(300)),
        context: Some("Context line.\n".repeat(500)),
        research: Some("Research line.\n".repeat(500)),
        requirements: Some("Requirement line.\n".repeat(300)),
    };
    let o = BudgetOptions::default();
    c.bench_function("compose/prompt-budget/5-plans", |b| b.iter(|| budget::apply(black_box(&s), 12_000, &o).unwrap()));
}

criterion_group!(benches, parse, compose_emission, prompt_budget);
criterion_main!(benches);
