//! ClassAd engine benchmarks: the three operations every tool repeats.
//!
//! - parsing a 60-attribute job ad as `condor_q -long` prints it (old syntax)
//!   and the same ad in new syntax;
//! - evaluating the default job `Requirements` against a machine ad in a
//!   match, with the match context built once and built per evaluation;
//! - printing the job ad back (new syntax, old syntax sorted and in insertion
//!   order, JSON).
//!
//! The ads live in `bench/data/` so that `bench/classad_vs_htcondor.sh` times
//! HTCondor's Python bindings on the very same text. Targets (2-core machine):
//! parsing <= 20 us per ad, a match evaluation <= 1 us.

use std::hint::black_box;
use std::rc::Rc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tern::classad::json::ad_to_json;
use tern::classad::old::parse_old_ad;
use tern::classad::unparse::{ad_to_old, ad_to_string};
use tern::classad::{ClassAd, Evaluator, MatchContext, Value, parse_ad};

const JOB_OLD: &str = include_str!("../bench/data/job.ad");
const JOB_NEW: &str = include_str!("../bench/data/job.new.ad");
const MACHINE_OLD: &str = include_str!("../bench/data/machine.ad");

fn job() -> ClassAd {
    parse_old_ad(JOB_OLD).expect("bench/data/job.ad parses")
}

fn machine() -> ClassAd {
    parse_old_ad(MACHINE_OLD).expect("bench/data/machine.ad parses")
}

fn parsing(c: &mut Criterion) {
    // Both texts must describe the same 60 attributes, or the two figures
    // would not be comparable.
    let from_new = parse_ad(JOB_NEW).expect("bench/data/job.new.ad parses");
    assert_eq!(job().len(), 60);
    assert_eq!(from_new.len(), 60);

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Elements(1));
    g.bench_function("old_syntax_job_ad", |b| {
        b.iter(|| parse_old_ad(black_box(JOB_OLD)).unwrap())
    });
    g.bench_function("new_syntax_job_ad", |b| {
        b.iter(|| parse_ad(black_box(JOB_NEW)).unwrap())
    });
    g.finish();
}

fn matching(c: &mut Criterion) {
    let job = Rc::new(job());
    let machine = Rc::new(machine());
    // A benchmark of an evaluation that silently failed would measure the
    // error path: make sure the match really succeeds, and that a machine
    // failing one clause really fails it.
    {
        let m = MatchContext::new(job.clone(), machine.clone());
        let v = m.eval_left(&mut Evaluator::new(), "requirements");
        assert!(
            matches!(v, Value::Bool(true)),
            "job Requirements gave {v:?}"
        );
        let mut arm = (*machine).clone();
        arm.insert("Arch", tern::classad::parse_expr("\"ARM\"").unwrap());
        let m = MatchContext::new(job.clone(), Rc::new(arm));
        let v = m.eval_left(&mut Evaluator::new(), "requirements");
        assert!(matches!(v, Value::Bool(false)), "ARM machine gave {v:?}");
    }

    let mut g = c.benchmark_group("match");
    g.throughput(Throughput::Elements(1));
    let ctx = MatchContext::new(job.clone(), machine.clone());
    g.bench_function("requirements_context_reused", |b| {
        b.iter(|| black_box(&ctx).eval_left(&mut Evaluator::new(), "requirements"))
    });
    g.bench_function("requirements_with_context_construction", |b| {
        b.iter(|| {
            let m = MatchContext::new(black_box(&job).clone(), black_box(&machine).clone());
            m.eval_left(&mut Evaluator::new(), "requirements")
        })
    });
    g.finish();
}

fn unparsing(c: &mut Criterion) {
    let job = job();
    let mut g = c.benchmark_group("unparse");
    g.throughput(Throughput::Elements(1));
    g.bench_function("new_syntax_job_ad", |b| {
        b.iter(|| ad_to_string(black_box(&job)))
    });
    g.bench_function("old_syntax_job_ad_sorted", |b| {
        b.iter(|| ad_to_old(black_box(&job), true))
    });
    g.bench_function("old_syntax_job_ad_unsorted", |b| {
        b.iter(|| ad_to_old(black_box(&job), false))
    });
    g.bench_function("json_job_ad", |b| b.iter(|| ad_to_json(black_box(&job), 0)));
    g.finish();
}

criterion_group!(benches, parsing, matching, unparsing);
criterion_main!(benches);
