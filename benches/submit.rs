//! How long the submit language takes to turn `queue 100000` into one
//! cluster ad plus the per-proc differences (`tern::submit::parse` then
//! `tern::submit::materialize`). The target is 0.5 s for each case.
//!
//! Two cases: every proc the same but its ProcId (the cluster ad is built
//! once), and an `arguments` that depends on `$(Process)`, so that every
//! proc is built and compared with the cluster ad. Printing the ads is not
//! measured here; bench/submit_100k.sh times the whole `tern_submit
//! -dry-run`, output included.
//!
//! Run: `cargo bench --bench submit`.

use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use tern::config::Config;
use tern::submit::{self, SubmitOptions};

const PROCS: usize = 100_000;

fn options() -> SubmitOptions {
    SubmitOptions {
        cluster: 1,
        qdate: 1_700_000_000,
        owner: "alice".into(),
        cwd: std::env::temp_dir(),
        environ: Vec::new(),
        batch_name: None,
    }
}

fn expand(text: &str, config: &Config, opts: &SubmitOptions) -> usize {
    let file = submit::parse(text, "bench.sub", Path::new("."), config).expect("parses");
    let cluster = submit::materialize(&file, config, opts).expect("materialises");
    assert_eq!(cluster.procs.len(), PROCS);
    cluster.procs.len()
}

fn queue_100k(c: &mut Criterion) {
    // The defaults only: no configuration file of the machine running the
    // benchmark takes part.
    let config = Config::defaults();
    let opts = options();
    let cases = [
        (
            "same_procs",
            format!("executable = /bin/echo\narguments = x\nqueue {PROCS}\n"),
        ),
        (
            "per_proc_arguments",
            format!("executable = /bin/echo\narguments = $(Process)\nqueue {PROCS}\n"),
        ),
    ];
    let mut group = c.benchmark_group("submit_queue_100k");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for (name, text) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| expand(black_box(text), &config, &opts))
        });
    }
    group.finish();
}

criterion_group!(benches, queue_100k);
criterion_main!(benches);
