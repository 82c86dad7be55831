//! Engine throughput: a one-week scenario at 1 request/s (604,800 calls), no retries, under
//! `consecutive` and under `connector-breaker` (p95 over a 15-minute window). Throughput is
//! reported in simulated calls per second (criterion's elements/s).

use breakerlab::policy::PolicySpec;
use breakerlab::scenario::Scenario;
use breakerlab::sim::{self, RunOptions, Workload};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;

const WEEK: &str = r#"
duration = "7d"
[traffic]
kind = "constant"
rate = 1.0
[client]
timeout = "30s"
[upstream]
p50 = "300ms"
p95 = "900ms"
error_rate = 0.01
[[incidents]]
kind = "slowdown"
every = "1d"
at = "02:00"
duration = "90m"
factor = 13.0
expect = "open"
[[incidents]]
kind = "outage"
every = "1d"
at = "14:00"
duration = "10m"
expect = "open"
"#;

fn engine(c: &mut Criterion) {
    let scenario = Scenario::parse(Path::new("week.toml"), WEEK).expect("bench scenario is valid");
    let workload = Workload::build(&scenario, 1, 0).expect("workload builds");
    let calls = workload.arrivals.len() as u64;
    let mut group = c.benchmark_group("week_1rps");
    group.sample_size(10);
    group.throughput(Throughput::Elements(calls));
    for preset in ["consecutive", "connector-breaker", "windowed", "none"] {
        let policy = PolicySpec::new(preset).resolve().expect("preset resolves");
        group.bench_function(preset, |b| {
            b.iter(|| sim::run(&scenario, &workload, &policy, &RunOptions { timeline_bin: None }).metrics)
        });
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
