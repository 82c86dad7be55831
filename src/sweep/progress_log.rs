//! Progress lines for logs. When stderr is not a terminal (a scheduler's log file, where a
//! progress bar cannot draw), long work writes a line to stderr every 10 s or every 5 % of its
//! units, whichever comes first: units done, calls per second, the time spent and the ETA;
//! and one last line when it ends. Work done within 10 s writes none. Only stderr changes:
//! every output file and stdout are the same with or without it.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// No line before this much work, and at most this long between two lines.
const EVERY: Duration = Duration::from_secs(10);

/// A line also every this many twentieths of the work (5 %).
const STEPS: u64 = 20;

/// What is counted and how fast it goes.
#[derive(Clone, Debug)]
pub struct Work {
    /// Units in all (cells, requests).
    pub total: u64,
    /// Their name, plural (`cells`).
    pub unit: &'static str,
    /// Simulated calls per unit, for the rate (0: no rate shown).
    pub calls_per_unit: f64,
}

/// Writes progress lines while it lives (see the module documentation); dropping it ends them.
pub struct ProgressLog {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLog {
    /// Starts writing lines about `work`, whose units done `poll` says (`None` once the work is
    /// over), when stderr is not a terminal and not `quiet`; otherwise writes nothing.
    pub fn start(work: Work, quiet: bool, poll: impl Fn() -> Option<u64> + Send + 'static) -> ProgressLog {
        let stop = Arc::new(AtomicBool::new(false));
        if quiet || std::io::stderr().is_terminal() || work.total == 0 {
            return ProgressLog { stop, thread: None };
        }
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || watch(&work, &stopped, &poll))
            .ok();
        ProgressLog { stop, thread }
    }
}

/// Logs whose handles were let go ([`ProgressLog::detach`]), until [`finish_detached`].
static DETACHED: Mutex<Vec<ProgressLog>> = Mutex::new(Vec::new());

impl ProgressLog {
    /// Lets the lines go on until `poll` says the work is over, without this handle; the last
    /// line is written by then, or at the latest by [`finish_detached`].
    pub fn detach(self) {
        if self.thread.is_some() {
            DETACHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(self);
        }
    }
}

/// Ends every detached log once its work is over, each writing its last line now: the process
/// may exit before a watching thread wakes again (it looks every 250 ms).
pub fn finish_detached() {
    let logs = std::mem::take(&mut *DETACHED.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    drop(logs);
}

impl Drop for ProgressLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// The watching thread: a line whenever [`Pacer::due`] says, and a last one at the end.
fn watch(work: &Work, stop: &AtomicBool, poll: &dyn Fn() -> Option<u64>) {
    let start = Instant::now();
    let mut pacer = Pacer::default();
    let mut all_shown = false;
    while !stop.load(Ordering::Relaxed) {
        std::thread::park_timeout(Duration::from_millis(250));
        let Some(done) = poll() else { break };
        let elapsed = start.elapsed();
        if pacer.due(elapsed, done, work.total) {
            eprintln!("{}", line(work, done, elapsed));
            all_shown = done >= work.total;
        }
    }
    if pacer.lines > 0 && !all_shown {
        eprintln!("{}", line(work, work.total, start.elapsed()));
    }
}

/// When lines are due.
#[derive(Default, Debug)]
struct Pacer {
    lines: u64,
    last_at: Duration,
    last_step: u64,
}

impl Pacer {
    /// True when a line is due after `elapsed` with `done` of `total` units: none in the first
    /// [`EVERY`], then one [`EVERY`] after the last or on reaching another 5 %.
    fn due(&mut self, elapsed: Duration, done: u64, total: u64) -> bool {
        if elapsed < EVERY {
            return false;
        }
        let step =
            u64::try_from(u128::from(done) * u128::from(STEPS) / u128::from(total.max(1))).unwrap_or(0);
        let due = self.lines == 0 || elapsed.saturating_sub(self.last_at) >= EVERY || step > self.last_step;
        if due {
            self.lines += 1;
            self.last_at = elapsed;
            self.last_step = step;
        }
        due
    }
}

/// `progress: 140/2800 cells (5.0 %), 1.23e6 calls/s, 12s elapsed, ETA 3m48s`.
fn line(work: &Work, done: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-3);
    let share = done as f64 / work.total.max(1) as f64;
    let mut s = format!("progress: {done}/{} {} ({:.1} %)", work.total, work.unit, 100.0 * share);
    if work.calls_per_unit > 0.0 && done > 0 {
        s.push_str(&format!(", {:.3e} calls/s", done as f64 * work.calls_per_unit / secs));
    }
    s.push_str(&format!(", {} elapsed", whole_secs(secs)));
    if done >= work.total {
        s.push_str(", done");
    } else if done > 0 {
        s.push_str(&format!(", ETA {}", whole_secs(secs * (1.0 - share) / share)));
    }
    s
}

/// Seconds as `1h02m03s`, `4m05s` or `6s`.
fn whole_secs(secs: f64) -> String {
    let s = secs.round().min(1e12) as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_every_ten_seconds_or_five_percent_never_in_the_first_ten() {
        let mut p = Pacer::default();
        let at = |s: u64| Duration::from_secs(s);
        assert!(!p.due(at(9), 900, 1000), "short work stays silent");
        assert!(p.due(at(10), 900, 1000));
        assert!(!p.due(at(11), 901, 1000), "same 5 % step, 1 s later");
        assert!(p.due(at(12), 950, 1000), "the next 5 %");
        assert!(!p.due(at(21), 951, 1000));
        assert!(p.due(at(22), 951, 1000), "10 s after the last line");
        assert_eq!(p.lines, 3);
    }

    #[test]
    fn a_line_says_units_rate_time_and_eta() {
        let work = Work { total: 2800, unit: "cells", calls_per_unit: 1e5 };
        assert_eq!(
            line(&work, 140, Duration::from_secs(12)),
            "progress: 140/2800 cells (5.0 %), 1.167e6 calls/s, 12s elapsed, ETA 3m48s"
        );
        assert_eq!(
            line(&Work { calls_per_unit: 0.0, ..work.clone() }, 2800, Duration::from_secs(3725)),
            "progress: 2800/2800 cells (100.0 %), 1h02m05s elapsed, done"
        );
        // `sweep --shard 1/4` (or a Slurm array task) counts the cells it has left and their
        // calls from its own estimate, and says as much: 1,200 cells of 18,000 calls each.
        let shard = Work { total: 1200, unit: "cells", calls_per_unit: 18_000.0 };
        assert_eq!(
            line(&shard, 300, Duration::from_secs(45)),
            "progress: 300/1200 cells (25.0 %), 1.200e5 calls/s, 45s elapsed, ETA 2m15s"
        );
    }

    #[test]
    fn nothing_is_written_or_left_running_when_quiet() {
        let log = ProgressLog::start(Work { total: 5, unit: "cells", calls_per_unit: 1.0 }, true, || Some(1));
        assert!(log.thread.is_none());
    }
}
