//! What the import benches share: timing by the process's CPU time, so that other processes on a
//! shared machine do not count (they still share its caches and memory bandwidth), while every
//! thread an import starts does (a script's first pass runs on every core; criterion's own
//! threads are idle while a sample runs).

use std::time::Duration;

/// The process's CPU time so far, every thread's (wall time where the platform has no such clock).
pub fn cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        thread_local!(static START: std::time::Instant = std::time::Instant::now());
        START.with(|s| s.elapsed())
    }
}

/// Runs `f` `iters` times and returns the CPU time it took (criterion's `iter_custom`).
pub fn timed<T>(iters: u64, mut f: impl FnMut() -> T) -> Duration {
    let start = cpu_time();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    cpu_time() - start
}
