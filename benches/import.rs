//! Trace import speed: a per-call CSV of 10 million generated rows (`ts_ms,latency_ms,status`,
//! about a day at 115 calls/s, 2 % errors) and a scripted CSV of as many (`t_ms,latency_ms,ok`,
//! read into a scenario as `run --script` does), reported in rows per second (criterion's
//! elements/s), and a week of per-minute aggregates (10,080 rows with count, errors and four
//! percentiles). The files are generated once into a temporary folder, outside the timing.
//!
//! Time is the thread's CPU time (see `import_support`): on a machine shared with other builds, wall
//! time measures the neighbours too; a single-threaded import's CPU time is its cost per core.

use breakerlab::trace::TraceOptions;
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Duration;

mod import_support;
use import_support::timed;

/// Rows of the per-call file under `cargo bench`; `cargo test` runs each benchmark once as a
/// check, on a file small enough for any disk.
fn call_rows() -> u64 {
    if std::env::args().any(|a| a == "--bench") { 10_000_000 } else { 10_000 }
}
/// Rows of the per-minute file: one week.
const WEEK_MINUTES: u64 = 7 * 24 * 60;

/// A small deterministic generator (SplitMix64) so the file is the same on every machine.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn write_calls(path: &Path, rows: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create calls file"));
    writeln!(out, "timestamp_ms,latency_ms,status").unwrap();
    let mut state = 7;
    let mut t: u64 = 1_700_000_000_000;
    for _ in 0..rows {
        let r = next(&mut state);
        t += r % 18; // mean spacing 8.5 ms
        let latency = 5 + (r >> 8) % 400;
        let status = if (r >> 20).is_multiple_of(50) { 503 } else { 200 };
        writeln!(out, "{t},{latency},{status}").unwrap();
    }
    out.flush().unwrap();
}

fn write_script(path: &Path, rows: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create script"));
    writeln!(out, "t_ms,latency_ms,ok").unwrap();
    let mut state = 5;
    let mut t: u64 = 0;
    for _ in 0..rows {
        let r = next(&mut state);
        t += r % 18;
        let latency = 5 + (r >> 8) % 400;
        let ok = u8::from(!(r >> 20).is_multiple_of(50));
        writeln!(out, "{t},{latency},{ok}").unwrap();
    }
    out.flush().unwrap();
}

fn write_week(path: &Path) {
    let mut out = BufWriter::new(std::fs::File::create(path).expect("create week file"));
    writeln!(out, "timestamp,requests,errors,p50_ms,p90_ms,p95_ms,p99_ms").unwrap();
    let mut state = 11;
    for m in 0..WEEK_MINUTES {
        let r = next(&mut state);
        let count = 3_000 + r % 3_000;
        let errors = (r >> 16) % 60;
        let p50 = 80.0 + ((r >> 24) % 40) as f64;
        writeln!(
            out,
            "2026-03-{:02}T{:02}:{:02}:00Z,{count},{errors},{p50:.1},{:.1},{:.1},{:.1}",
            2 + m / 1_440,
            (m / 60) % 24,
            m % 60,
            p50 * 2.1,
            p50 * 3.0,
            p50 * 6.5
        )
        .unwrap();
    }
    out.flush().unwrap();
}

fn import(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let calls = dir.path().join("calls.csv");
    let rows = call_rows();
    write_calls(&calls, rows);
    let opts = TraceOptions::default();

    let mut group = c.benchmark_group("import");
    group.sample_size(10).measurement_time(Duration::from_secs(20)).sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(rows));
    group.bench_function("calls_10M_rows", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                let t = breakerlab::trace::calls::from_path(&calls, &opts).expect("generated file imports");
                assert_eq!(t.len() as u64, rows);
                t
            })
        })
    });
    std::fs::remove_file(&calls).ok();
    let script = dir.path().join("script.csv");
    write_script(&script, rows);
    group.bench_function("script_10M_rows", |b| {
        b.iter_custom(|iters| {
            timed(iters, || breakerlab::scenario::from_script(&script).expect("generated script loads"))
        })
    });
    std::fs::remove_file(&script).ok();
    group.finish();

    // A week of minutes: the date-time column is the realistic (slower) case.
    let week = dir.path().join("week.csv");
    write_week(&week);
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(WEEK_MINUTES));
    group.bench_function("week_of_minutes", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                let t = breakerlab::trace::interval::from_path(&week, &opts).expect("generated file imports");
                assert_eq!(t.intervals().len() as u64, WEEK_MINUTES);
                t
            })
        })
    });
    group.finish();
}

criterion_group!(benches, import);
criterion_main!(benches);
