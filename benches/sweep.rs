//! Sweep throughput: 20 configurations of `consecutive` over a one-week scenario at 1 request/s
//! (12.1 million simulated calls per sweep), on 1 and on 2 worker threads. Throughput is in
//! simulated calls per second; the ratio of the two is the parallel speed-up.

use breakerlab::app::sweep::{SweepRequest, sweep as run_sweep};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;

fn sweep(c: &mut Criterion) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/sweep-20.toml");
    let out = tempfile::tempdir().expect("temporary folder");
    let mut group = c.benchmark_group("sweep_20_configs_week_1rps");
    group.sample_size(10);
    group.throughput(Throughput::Elements(20 * 604_800));
    for threads in [1, 2] {
        group.bench_function(format!("threads_{threads}"), |b| {
            let req = SweepRequest {
                file: Some(file.clone()),
                threads: Some(threads),
                out: Some(out.path().join("sweep")),
                quiet: true,
                ..SweepRequest::default()
            };
            b.iter(|| run_sweep(&req).expect("sweep runs"))
        });
    }
    group.finish();
}

criterion_group!(benches, sweep);
criterion_main!(benches);
