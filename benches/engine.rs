//! Engine throughput: a one-week scenario at 1 request/s (604,800 calls), no retries, under
//! `consecutive`, `connector-breaker` (p95 over a 15-minute window), `windowed` and `none`.
//! Throughput is reported in simulated calls per second (criterion's elements/s).
//!
//! The request stream is generated beforehand (a sweep generates each chunk once for all its
//! configurations; `stream` measures that generation). `floor` is the limit any engine runs
//! under: it only streams the same arrivals and sums their first answers' latencies, with no
//! breaker, no client and no event queue. docs/performance.md reads each preset against it.
//! `week_1rps_retry` runs the same week with one retry allowed, off the direct path.

use breakerlab::PolicySpec;
use breakerlab::Scenario;
use breakerlab::{RunOptions, Workload};
use breakerlab_model::sim::{Chunk, Simulation};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
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
    let chunks = workload.stream().collect_chunks();
    let calls = chunks.iter().map(|c| c.arrivals.len() as u64).sum();
    let mut group = c.benchmark_group("week_1rps");
    group.sample_size(10);
    group.throughput(Throughput::Elements(calls));
    group.bench_function("floor", |b| b.iter(|| floor(black_box(&chunks))));
    presets(
        &mut group,
        &scenario,
        &workload,
        &chunks,
        &["consecutive", "connector-breaker", "windowed", "none"],
    );
    group.bench_function("stream", |b| {
        b.iter(|| {
            let mut stream = workload.stream();
            let mut chunk = Chunk::default();
            let mut n = 0;
            while stream.next_chunk(&mut chunk) {
                n += chunk.arrivals.len();
            }
            n
        })
    });
    group.finish();
    general(c, &scenario);
}

/// The same week with two attempts per request (one retry on failure): the run leaves the
/// direct path, so every attempt goes through the general routing pass and completion, where
/// the pool of hosts hooks in (a scenario without hosts must not pay for it).
fn general(c: &mut Criterion, week: &Scenario) {
    let text = WEEK.replace("timeout = \"30s\"", "timeout = \"30s\"\n[client.retry]\nmax_attempts = 2");
    let scenario = Scenario::parse(Path::new("week-retry.toml"), &text).expect("bench scenario is valid");
    assert_eq!(scenario.duration, week.duration);
    let workload = Workload::build(&scenario, 1, 0).expect("workload builds");
    let chunks = workload.stream().collect_chunks();
    let calls = chunks.iter().map(|c| c.arrivals.len() as u64).sum();
    let mut group = c.benchmark_group("week_1rps_retry");
    group.sample_size(10);
    group.throughput(Throughput::Elements(calls));
    presets(&mut group, &scenario, &workload, &chunks, &["consecutive", "none"]);
    group.finish();
}

/// One benchmark per preset: a whole run of the pre-generated `chunks`, scored.
fn presets(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scenario: &Scenario,
    workload: &Workload,
    chunks: &[Chunk],
    names: &[&str],
) {
    for preset in names {
        let policy = PolicySpec::new(preset).resolve().expect("preset resolves");
        let opts = RunOptions { timeline_bin: None, explain: false };
        group.bench_function(*preset, |b| {
            b.iter(|| {
                let mut run =
                    Simulation::new(&scenario.client, workload, std::slice::from_ref(&policy), &opts);
                for chunk in chunks {
                    run.feed(chunk);
                }
                breakerlab_model::sim::scored(scenario, workload, run.finish()).metrics
            })
        });
    }
}

/// The floor: read every arrival and its first answer, sum the latencies. Nothing simulated.
fn floor(chunks: &[Chunk]) -> u64 {
    let mut sum = 0u64;
    for chunk in chunks {
        for (at, answer) in chunk.arrivals.iter().zip(&chunk.first_answers) {
            sum = sum.wrapping_add(at.micros()).wrapping_add(answer.latency.micros());
        }
    }
    sum
}

criterion_group!(benches, engine);
criterion_main!(benches);
