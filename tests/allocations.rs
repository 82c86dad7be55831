//! The engine's hot path allocates nothing per call: a run ten times longer makes (almost) no
//! more allocations. Counted by dhat's allocator, in this test binary only (one test: a
//! process runs one profiler at a time).

use breakerlab::PolicySpec;
use breakerlab::Scenario;
use breakerlab::{RunOptions, Workload, simulate};
use std::path::Path;

/// dhat's counting allocator: every allocation is counted while a profiler runs.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A steady 10 requests/s with retries, a windowed breaker and a p95 rule: every hot-path piece.
fn scenario(duration: &str) -> Scenario {
    let text = format!(
        r#"
duration = "{duration}"
[traffic]
kind = "poisson"
rate = 10.0
[client]
timeout = "2s"
[client.retry]
max_attempts = 3
jitter = "full"
[client.fallback]
kind = "cached"
[upstream]
p50 = "100ms"
p95 = "400ms"
error_rate = 0.05
"#
    );
    Scenario::parse(Path::new("alloc.toml"), &text).expect("valid scenario")
}

/// Allocations made by one run (the workload is built beforehand, as a sweep does).
fn allocations(duration: &str, preset: &str) -> (u64, u64) {
    let sc = scenario(duration);
    let workload = Workload::build(&sc, 1, 0).unwrap();
    let policy = PolicySpec::new(preset).resolve().unwrap();
    let before = dhat::HeapStats::get().total_blocks;
    let record = simulate(&sc.client, &workload, &policy, &RunOptions { timeline_bin: None, explain: false });
    let after = dhat::HeapStats::get().total_blocks;
    (after - before, record.counters.attempts)
}

#[test]
fn a_ten_times_longer_run_makes_no_more_allocations_per_call() {
    let _profiler = dhat::Profiler::builder().testing().eprint_json().build();
    for preset in ["consecutive", "windowed", "connector-breaker", "resilience4j-time", "hystrix"] {
        let (short, short_calls) = allocations("1h", preset);
        let (long, long_calls) = allocations("10h", preset);
        assert!(long_calls > 9 * short_calls, "{preset}: the long run makes ten times the calls");
        assert!(short > 0, "{preset}: the allocator counts (a run's set-up allocates)");
        // Measured: the same count at both lengths (18 to 31 allocations, all at set-up); a
        // per-call allocation would add hundreds of thousands. Some slack for amortised growth.
        assert!(
            long <= short + 16,
            "{preset}: {short} allocations for {short_calls} calls, {long} for {long_calls}"
        );
    }
}
