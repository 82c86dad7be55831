//! The engine's hot path allocates nothing per call: a run ten times longer makes (almost) no
//! more allocations. Counted with a global allocator wrapper in this test binary only.

use breakerlab::PolicySpec;
use breakerlab::Scenario;
use breakerlab::{RunOptions, Workload, simulate};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let record = simulate(&sc.client, &workload, &policy, &RunOptions { timeline_bin: None, explain: false });
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    (after - before, record.counters.attempts)
}

#[test]
fn a_ten_times_longer_run_makes_no_more_allocations_per_call() {
    for preset in ["consecutive", "windowed", "connector-breaker", "resilience4j-time", "hystrix"] {
        let (short, short_calls) = allocations("1h", preset);
        let (long, long_calls) = allocations("10h", preset);
        assert!(long_calls > 9 * short_calls, "{preset}: the long run makes ten times the calls");
        // Measured: the same count at both lengths (18 to 31 allocations, all at set-up); a
        // per-call allocation would add hundreds of thousands. Some slack for amortised growth.
        assert!(
            long <= short + 16,
            "{preset}: {short} allocations for {short_calls} calls, {long} for {long_calls}"
        );
    }
}
