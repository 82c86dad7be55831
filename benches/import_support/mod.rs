//! What the import benches share: timing by the process's CPU time, so that other processes on a
//! shared machine do not count (they still share its caches and memory bandwidth), while every
//! thread an import starts does (a script's first pass runs on every core; criterion's own
//! threads are idle while a sample runs).

use std::time::{Duration, Instant};

/// The process's CPU time so far, every thread's (wall time where the platform has no such clock).
pub fn cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes one timespec through a valid pointer.
        if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    thread_local!(static START: Instant = Instant::now());
    START.with(|s| s.elapsed())
}

/// Runs `f` `iters` times and returns the CPU time it took (criterion's `iter_custom`).
pub fn timed<T>(iters: u64, mut f: impl FnMut() -> T) -> Duration {
    let start = cpu_time();
    for _ in 0..iters {
        std::hint::black_box(f());
    }
    cpu_time() - start
}
