//! failsafe-go's `CircuitBreaker` (preset `failsafe-go`): count-based and time-based
//! thresholding.
//!
//! Source: failsafe-go/failsafe-go @ 0e452f4ad247f2e5cb4e65bc00ee3c553cb6e6d5,
//! circuitbreaker/circuitstates.go (`closedState`, `openState`, `halfOpenState`
//! `checkThresholdAndReleasePermit`, `tryAcquirePermit`) and circuitbreaker/
//! circuitbreakerbuilder.go (`Builder`: failure threshold 1 of 1, delay 1 minute;
//! `WithFailureThresholdPeriod`, `WithFailureRateThreshold`); circuitbreaker/circuitstats.go @
//! 19dfc0d31d1dcbe23ee6d009930206285d2083e7 (`countingStats`, `timedStats`).
//!
//! Reproduced:
//! - CLOSED keeps the last `capacity` results (`failure_execution_threshold` if set, else
//!   `failure_thresholding_capacity`), or, with `failure_thresholding_period`, 10 buckets of a
//!   tenth of the period on a grid starting when the closed state began (a result after more
//!   than a whole period of silence restarts the grid at its own time; buckets roll only when
//!   a result is recorded; after more than 10 buckets of silence `getCurrentBucket()` calls
//!   `reset()` but returns the bucket it held before, so that result is stored in the old
//!   current bucket and leaves the counts when the roll later reaches it, not at bucket 0);
//!   after every result it opens when at least
//!   `failure_execution_threshold` results are held and either the failure rate, as
//!   `round(failures / executions · 100)`, is `>= failure_rate_threshold` (when set) or
//!   `failures >= failure_threshold`. There is no minimum beyond that: "5 of 10" opens after 5
//!   failures in the first 5 calls;
//! - OPEN → HALF_OPEN on the first call once `now − opened >= delay` (passive);
//! - HALF_OPEN permits `capacity` executions (`success_thresholding_capacity`, else the closed
//!   capacity) and releases a permit after every result; with a success threshold it closes at
//!   `successes >= success_threshold` and reopens at `failures > capacity − success_threshold`;
//!   without one, with a rate threshold, both need `failure_execution_threshold` results and it
//!   reopens at `rate >= threshold` and closes at `success rate > 100 − threshold` (rounded
//!   percentages); else it reopens at `failures >= failure_threshold` and closes at
//!   `successes > failure_thresholding_capacity − failure_threshold`;
//! - no generation check: a late result lands in the current state's stats (and, in
//!   HALF_OPEN, also releases a permit, so more probes can run than permitted).
//!
//! failsafe-go has no ignored outcome: a result or error the policy does not handle is recorded
//! as a success, so classes in `ignore` count as successes here.
//! `WithDelayFn` is not modelled.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, go_duration};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, impossible, invalid, longer_than_zero};
use super::window::{CountWindow, Sample};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use std::fmt::Write as _;

family_config! {
    /// The builder's count-based settings, in snake_case.
    FailsafeConfig {
        failure_threshold: u32 = 1, "calls", "failures among the last capacity results that open (>=)";
        failure_thresholding_capacity: u32 = 1, "calls", "the closed-state window: last N results";
        failure_execution_threshold: u32 = 0, "calls",
            "results needed before deciding; also the window size when set (0 = none)";
        success_threshold: u32 = 0, "calls",
            "half-open successes that close (0 = derive from the failure threshold)";
        success_thresholding_capacity: u32 = 0, "calls",
            "half-open permits and window (0 = success_threshold, or the closed capacity without one)";
        failure_thresholding_period: Dur = Dur::ZERO, "duration",
            "time-based thresholding over 10 buckets of period / 10 (0 = count-based)";
        failure_rate_threshold: u32 = 0, "percent",
            "WithFailureRateThreshold: opens at a rounded failure % >= this (0 = use failure_threshold)";
        delay: Dur = Dur::from_secs(60), "duration",
            "WithDelay: open time before the next call half-opens (>=)";
    }
}

impl FailsafeConfig {
    pub fn closed_capacity(&self) -> u32 {
        if self.failure_execution_threshold != 0 {
            self.failure_execution_threshold
        } else {
            self.failure_thresholding_capacity
        }
    }
    fn success_capacity(&self) -> u32 {
        if self.success_thresholding_capacity != 0 {
            self.success_thresholding_capacity
        } else {
            self.success_threshold
        }
    }
    pub fn half_open_capacity(&self) -> u32 {
        if self.success_capacity() != 0 { self.success_capacity() } else { self.closed_capacity() }
    }
}

impl Family for FailsafeConfig {
    type Breaker = FailsafeBreaker;
    const NAME: &'static str = "failsafe";
    const TITLE: &'static str = "failsafe-go";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "failsafe-go",
        library: "failsafe-go (circuitbreaker package)",
        summary: "failsafe-go defaults: count-based, opens on 1 failure of the last 1; delay 1 minute; 1 half-open execution, its success closes (time-based rate thresholds available)",
        source: "failsafe-go/failsafe-go @ 0e452f4ad247f2e5cb4e65bc00ee3c553cb6e6d5, circuitbreaker/circuitstates.go and circuitbreaker/circuitbreakerbuilder.go; circuitbreaker/circuitstats.go @ 19dfc0d31d1dcbe23ee6d009930206285d2083e7",
        quirks: &[
            "the default opens on the first failure (threshold 1 of 1)",
            "a ratio n of m has no minimum: n failures in the first n calls open it",
            "half-open permits capacity executions and frees a permit after each result",
            "without a success threshold, half-open closes at successes > capacity - failure_threshold",
            "no generation check: a late result is counted in the current state and frees a half-open permit",
            "no ignored outcome: an unhandled result is recorded as a success (classes in `ignore` count as successes)",
            "time-based thresholds: 10 buckets of period / 10 on a grid from the closed state's start, rolled only when a result is recorded; rates are rounded percentages (math.Round), compared with >=",
            "time-based thresholds: a result after more than 10 buckets of silence resets the grid but is stored in the bucket in use before the silence, and leaves the counts when the roll reaches that bucket",
            "delay functions (WithDelayFn) are not modelled",
        ],
        config: FailsafeConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("failure_threshold", self.failure_threshold)?;
        if self.failure_rate_threshold > 100 {
            return Err(invalid(
                "failure_rate_threshold",
                "a whole percentage from 0 to 100",
                &self.failure_rate_threshold.to_string(),
            ));
        }
        let period = self.failure_thresholding_period.micros();
        if period != 0 && (period < 10 || !period.is_multiple_of(10)) {
            return Err(invalid(
                "failure_thresholding_period",
                "0 or a whole number of microseconds divisible into 10 buckets",
                &self.failure_thresholding_period.to_string(),
            ));
        }
        if self.failure_rate_threshold != 0 && period == 0 {
            return Err(impossible(
                "failure_rate_threshold needs failure_thresholding_period (WithFailureRateThreshold is time-based)".into(),
            ));
        }
        if period == 0 && self.closed_capacity() < self.failure_threshold {
            return Err(impossible(format!(
                "failure_threshold ({}) exceeds the thresholding capacity ({})",
                self.failure_threshold,
                self.closed_capacity()
            )));
        }
        if self.closed_capacity() == 0 || self.half_open_capacity() == 0 {
            return Err(invalid("failure_thresholding_capacity", "at least 1", "0"));
        }
        if self.success_threshold > self.half_open_capacity() {
            return Err(impossible(format!(
                "success_threshold ({}) exceeds the half-open capacity ({})",
                self.success_threshold,
                self.half_open_capacity()
            )));
        }
        longer_than_zero("delay", self.delay)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> FailsafeBreaker {
        FailsafeBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::FailsafeGo).then(|| Ok(failsafe(input.header, self)))
    }
}

#[derive(Copy, Clone, Debug, Default)]
struct TimedBucket {
    start: Option<u64>,
    successes: u64,
    failures: u64,
}

/// `timedStats`: 10 buckets on a grid, rolled forward only when a result is recorded.
#[derive(Clone, Debug)]
struct TimedStats {
    buckets: Vec<TimedBucket>,
    bucket: u64,
    window: u64,
    current: usize,
    successes: u64,
    failures: u64,
}

impl TimedStats {
    fn new(period: Dur, now: SimTime) -> TimedStats {
        // newTimedStats: only the first bucket has a start time (the others are -1).
        let mut buckets = vec![TimedBucket::default(); 10];
        buckets[0].start = Some(now.micros());
        TimedStats {
            buckets,
            bucket: (period.micros() / 10).max(1),
            window: period.micros(),
            current: 0,
            successes: 0,
            failures: 0,
        }
    }

    /// `reset()`: the grid restarts at `now`.
    fn reset(&mut self, now: SimTime) {
        let mut start = now.micros();
        for b in &mut self.buckets {
            *b = TimedBucket { start: Some(start), successes: 0, failures: 0 };
            start += self.bucket;
        }
        self.current = 0;
        self.successes = 0;
        self.failures = 0;
    }

    /// `getCurrentBucket()` (circuitstats.go @ 19dfc0d, lines 198-227): the index of the bucket
    /// a result recorded now goes into. More than 10 buckets of silence take the `reset()`
    /// branch (line 222), yet line 226 returns the local `currentBucket` taken at line 200,
    /// before the reset: the bucket in use before the silence, not the new bucket 0.
    fn current(&mut self, now: SimTime) -> usize {
        let start = self.buckets[self.current].start.unwrap_or(0);
        let diff = now.micros().saturating_sub(start);
        if diff >= self.bucket {
            let moves = diff / self.bucket;
            if moves <= self.buckets.len() as u64 {
                for _ in 0..moves {
                    let prev_start = self.buckets[self.current].start.unwrap_or(0);
                    self.current = (self.current + 1) % self.buckets.len();
                    let b = &mut self.buckets[self.current];
                    let new_start = match b.start {
                        None => prev_start + self.bucket,
                        Some(s) => s + self.window,
                    };
                    self.successes -= b.successes;
                    self.failures -= b.failures;
                    *b = TimedBucket { start: Some(new_start), successes: 0, failures: 0 };
                }
            } else {
                let stale = self.current;
                self.reset(now);
                return stale;
            }
        }
        self.current
    }

    /// `recordFailure()` / `recordSuccess()`: counts the result in the bucket `current` names and
    /// in the totals; returns that bucket's index.
    fn record(&mut self, now: SimTime, failed: bool) -> usize {
        let i = self.current(now);
        if failed {
            self.buckets[i].failures += 1;
            self.failures += 1;
        } else {
            self.buckets[i].successes += 1;
            self.successes += 1;
        }
        i
    }
}

/// The closed state's stats.
#[derive(Clone, Debug)]
enum ClosedStats {
    Counting(CountWindow),
    Timed(TimedStats),
}

impl ClosedStats {
    fn new(cfg: &FailsafeConfig, now: SimTime) -> ClosedStats {
        if cfg.failure_thresholding_period.is_zero() {
            ClosedStats::Counting(CountWindow::new(cfg.closed_capacity()))
        } else {
            ClosedStats::Timed(TimedStats::new(cfg.failure_thresholding_period, now))
        }
    }
    fn record(&mut self, now: SimTime, failed: bool) {
        match self {
            ClosedStats::Counting(w) => w.push(Sample { at: now, failed, slow: false, over: false }),
            ClosedStats::Timed(t) => {
                t.record(now, failed);
            }
        }
    }
    /// `(executions, failures)`.
    fn counts(&self) -> (u64, u64) {
        match self {
            ClosedStats::Counting(w) => (w.tally().calls, w.tally().failures),
            ClosedStats::Timed(t) => (t.successes + t.failures, t.failures),
        }
    }
}

/// `math.Round(part / total * 100)` as failsafe-go's stats compute rates (0 when empty).
fn rounded_rate(part: u64, total: u64) -> u64 {
    if total == 0 { 0 } else { (part as f64 / total as f64 * 100.0).round() as u64 }
}

/// failsafe-go's circuit breaker.
#[derive(Clone, Debug)]
pub struct FailsafeBreaker {
    cfg: FailsafeConfig,
    phase: Phase,
    closed: ClosedStats,
    half: CountWindow,
    permits: u64,
    opened_at: SimTime,
}

impl FailsafeBreaker {
    /// A closed breaker.
    pub fn new(cfg: FailsafeConfig) -> FailsafeBreaker {
        FailsafeBreaker {
            closed: ClosedStats::new(&cfg, SimTime::ZERO),
            half: CountWindow::new(cfg.half_open_capacity()),
            cfg,
            phase: Phase::new(),
            permits: 0,
            opened_at: SimTime::ZERO,
        }
    }

    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        self.phase.enter(now, State::Open, reason, self.evidence_for(now, out), out);
        self.opened_at = now;
    }
}

impl Breaker for FailsafeBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.phase.state() == State::Open {
            if now.since(self.opened_at) < self.cfg.delay {
                return Admission::Reject;
            }
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
            self.half.clear();
            self.permits = u64::from(self.cfg.half_open_capacity());
        }
        if self.phase.state() == State::HalfOpen {
            if self.permits == 0 {
                return Admission::Reject;
            }
            self.permits -= 1;
            return Admission::Allow(self.phase.ticket(true));
        }
        Admission::Allow(self.phase.ticket(false))
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        // failsafe-go records an unhandled result or error as a success: no ignored outcome.
        let failed = obs.verdict == Verdict::Failure;
        let c = &self.cfg;
        let (exec_threshold, rate_threshold) =
            (u64::from(c.failure_execution_threshold), u64::from(c.failure_rate_threshold));
        match self.phase.state() {
            State::Closed => {
                self.closed.record(now, failed);
                let (executions, failures) = self.closed.counts();
                if executions >= exec_threshold
                    && ((rate_threshold != 0 && rounded_rate(failures, executions) >= rate_threshold)
                        || (rate_threshold == 0 && failures >= u64::from(c.failure_threshold)))
                {
                    let reason = if rate_threshold != 0 { "failure_rate" } else { "failures_in_window" };
                    self.open(now, reason, out);
                }
            }
            State::Open => self.closed.record(now, failed),
            State::HalfOpen => {
                self.half.push(Sample { at: now, failed, slow: false, over: false });
                let t = self.half.tally();
                let successes = t.calls - t.failures;
                let (close, reopen) = if c.success_threshold != 0 {
                    let cap = u64::from(c.success_capacity());
                    let st = u64::from(c.success_threshold);
                    (successes >= st, t.failures > cap.saturating_sub(st))
                } else if rate_threshold != 0 {
                    let enough = t.calls >= exec_threshold;
                    (
                        enough && rounded_rate(successes, t.calls) > 100 - rate_threshold,
                        enough && rounded_rate(t.failures, t.calls) >= rate_threshold,
                    )
                } else {
                    let cap = u64::from(c.failure_thresholding_capacity);
                    let ft = u64::from(c.failure_threshold);
                    (successes > cap.saturating_sub(ft), t.failures >= ft)
                };
                if close {
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                    self.closed = ClosedStats::new(&self.cfg, now);
                } else if reopen {
                    self.open(now, "probe_failed", out);
                }
                self.permits += 1;
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        let rate_threshold = u64::from(c.failure_rate_threshold);
        let exec_threshold = u64::from(c.failure_execution_threshold);
        match self.phase.state() {
            State::Closed => {
                let (executions, failures) = self.closed.counts();
                ev.count(
                    "executions",
                    executions,
                    Test::AtLeast,
                    "failure_execution_threshold",
                    exec_threshold,
                );
                if rate_threshold != 0 {
                    let pct = rounded_rate(failures, executions);
                    ev.count(
                        "failure_rate_percent",
                        pct,
                        Test::AtLeast,
                        "failure_rate_threshold",
                        rate_threshold,
                    );
                } else {
                    ev.count(
                        "failures_in_window",
                        failures,
                        Test::AtLeast,
                        "failure_threshold",
                        u64::from(c.failure_threshold),
                    );
                }
            }
            State::Open => ev.open_for(now.since(self.opened_at), Test::AtLeast, "delay", c.delay),
            State::HalfOpen => {
                let t = self.half.tally();
                let successes = t.calls - t.failures;
                let capacity = u64::from(c.half_open_capacity());
                ev.count(
                    "probes_admitted",
                    capacity.saturating_sub(self.permits),
                    Test::Of,
                    "half_open_capacity",
                    capacity,
                );
                if c.success_threshold != 0 {
                    ev.count(
                        "probe_successes",
                        successes,
                        Test::AtLeast,
                        "success_threshold",
                        u64::from(c.success_threshold),
                    );
                    ev.fact_count("probe_failures", t.failures);
                } else if rate_threshold != 0 {
                    ev.count(
                        "probe_results",
                        t.calls,
                        Test::AtLeast,
                        "failure_execution_threshold",
                        exec_threshold,
                    );
                    let pct = rounded_rate(t.failures, t.calls);
                    ev.count(
                        "probe_failure_rate_percent",
                        pct,
                        Test::AtLeast,
                        "failure_rate_threshold",
                        rate_threshold,
                    );
                } else {
                    ev.count(
                        "probe_failures",
                        t.failures,
                        Test::AtLeast,
                        "failure_threshold",
                        u64::from(c.failure_threshold),
                    );
                    ev.fact_count("probe_successes", successes);
                }
            }
        }
    }
}

/// The configuration in FailsafeGo's syntax.
fn failsafe(header: &[String], c: &FailsafeConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "// import \"github.com/failsafe-go/failsafe-go/circuitbreaker\"");
    let _ = writeln!(s, "cb := circuitbreaker.Builder[any]().");
    let period = c.failure_thresholding_period;
    if period.is_zero() {
        let _ = writeln!(
            s,
            "\tWithFailureThresholdRatio({}, {}).",
            c.failure_threshold, c.failure_thresholding_capacity
        );
        if c.failure_execution_threshold != 0 {
            let _ = writeln!(s, "\tWithFailureExecutionThreshold({}).", c.failure_execution_threshold);
        }
    } else if c.failure_rate_threshold != 0 {
        let _ = writeln!(
            s,
            "\tWithFailureRateThreshold({}, {}, {}).",
            c.failure_rate_threshold,
            c.failure_execution_threshold,
            go_duration(period)
        );
    } else {
        // WithFailureThresholdPeriod also sets the execution threshold to the failure threshold.
        let _ =
            writeln!(s, "\tWithFailureThresholdPeriod({}, {}).", c.failure_threshold, go_duration(period));
        let _ = writeln!(s, "\tWithFailureExecutionThreshold({}).", c.failure_execution_threshold);
    }
    if c.success_threshold != 0 {
        let cap = if c.success_thresholding_capacity == 0 {
            c.success_threshold
        } else {
            c.success_thresholding_capacity
        };
        let _ = writeln!(s, "\tWithSuccessThresholdRatio({}, {}).", c.success_threshold, cap);
    }
    let _ = writeln!(s, "\tWithDelay({}).", go_duration(c.delay));
    let _ = writeln!(s, "\tBuild()");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, Quirk, calls, check_quirks, drive, ms};

    /// failsafe-go's files at the commit the preset reproduces (0e452f4, contained in v0.3.0).
    macro_rules! at_0e452f4 {
        ($file_line:literal) => {
            concat!("failsafe-go/failsafe-go @ 0e452f4 (v0.3.0), circuitbreaker/", $file_line)
        };
    }

    /// failsafe-go's circuitstats.go at the commit the preset reproduces (19dfc0d: v0.6.7 and 9
    /// commits of renames; v0.6.8 rewrote the grid).
    macro_rules! stats_at_19dfc0d {
        ($line:literal) => {
            concat!("failsafe-go/failsafe-go @ 19dfc0d (v0.6.7+9), circuitbreaker/circuitstats.go:", $line)
        };
    }

    fn cfg(f: impl FnOnce(&mut FailsafeConfig)) -> FailsafeBreaker {
        let mut c = FailsafeConfig::default();
        f(&mut c);
        c.validate().unwrap();
        FailsafeBreaker::new(c)
    }

    /// `WithFailureThresholdRatio(3, 5)`, `WithDelay(1 s)`.
    fn three_of_five() -> FailsafeBreaker {
        cfg(|c| {
            c.failure_threshold = 3;
            c.failure_thresholding_capacity = 5;
            c.delay = Dur::from_secs(1);
        })
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        check_quirks(vec![
            Quirk {
                quirk: "Builder(): opens on the first failure (1 of 1), delay 1 minute",
                source: at_0e452f4!("circuitbreakerbuilder.go:124,127-128"),
                breaker: cfg(|_| {}),
                script: vec![(0, A), (0, F(1)), (59_999, A), (60_000, A), (60_000, A), (60_010, S(1))],
                transitions: vec![
                    (0, C, O, "failures_in_window"),
                    (60_000, O, H, "cooldown_elapsed"),
                    (60_010, H, C, "probe_successes"),
                ],
                admits: "1010",
            },
            Quirk {
                quirk: "open -> half-open on the first call at exactly opened + delay (>=)",
                source: at_0e452f4!("circuitstates.go:96"),
                breaker: three_of_five(),
                script: [calls(0, 3, 1, false), vec![(1_001, A), (1_002, A)]].concat(),
                transitions: vec![(2, C, O, "failures_in_window"), (1_002, O, H, "cooldown_elapsed")],
                admits: "11101",
            },
            Quirk {
                quirk: "a ratio has no minimum: 3 failures in the first 3 calls open 3 of 5",
                source: at_0e452f4!("circuitstates.go:56 (failureExecutionThreshold 0)"),
                breaker: three_of_five(),
                script: calls(0, 3, 1, false),
                transitions: vec![(2, C, O, "failures_in_window")],
                admits: "111",
            },
            Quirk {
                quirk: "half-open without a success threshold closes at successes > capacity - threshold (3 > 5 - 3)",
                source: at_0e452f4!("circuitstates.go:172-175"),
                breaker: three_of_five(),
                script: [calls(0, 3, 1, false), calls(1_002, 3, 1, true)].concat(),
                transitions: vec![
                    (2, C, O, "failures_in_window"),
                    (1_002, O, H, "cooldown_elapsed"),
                    (1_004, H, C, "probe_successes"),
                ],
                admits: "111111",
            },
            Quirk {
                quirk: "half-open permits the capacity (5) and a result releases a permit",
                source: at_0e452f4!("circuitstates.go:113-123,139-145,184"),
                breaker: three_of_five(),
                script: [
                    calls(0, 3, 1, false),
                    vec![(1_002, A), (1_002, A), (1_002, A), (1_002, A), (1_002, A), (1_002, A)],
                    vec![(1_003, S(1)), (1_003, A), (1_003, A)],
                ]
                .concat(),
                transitions: vec![(2, C, O, "failures_in_window"), (1_002, O, H, "cooldown_elapsed")],
                admits: "11111111010",
            },
            Quirk {
                quirk: "half-open reopens at failures >= threshold",
                source: at_0e452f4!("circuitstates.go:174,181-182"),
                breaker: three_of_five(),
                script: [calls(0, 3, 1, false), calls(1_002, 3, 1, false)].concat(),
                transitions: vec![
                    (2, C, O, "failures_in_window"),
                    (1_002, O, H, "cooldown_elapsed"),
                    (1_004, H, O, "probe_failed"),
                ],
                admits: "111111",
            },
            Quirk {
                quirk: "WithSuccessThresholdRatio(2, 3): closes at 2 successes; 1 failure is not > 3 - 2, so it stays half-open",
                source: at_0e452f4!("circuitstates.go:159-162"),
                breaker: cfg(|c| {
                    c.success_threshold = 2;
                    c.success_thresholding_capacity = 3;
                    c.delay = Dur::from_secs(1);
                }),
                script: [calls(0, 1, 1, false), calls(1_000, 1, 1, false), calls(1_001, 2, 1, true)].concat(),
                transitions: vec![
                    (0, C, O, "failures_in_window"),
                    (1_000, O, H, "cooldown_elapsed"),
                    (1_002, H, C, "probe_successes"),
                ],
                admits: "1111",
            },
            Quirk {
                quirk: "no generation check: a call admitted while closed ends in half-open, is counted there and frees a permit",
                source: at_0e452f4!("circuitbreaker.go:334-336 (cb.state.getStats())"),
                breaker: cfg(|c| c.delay = Dur::from_secs(1)),
                script: vec![
                    (0, A),
                    (1, A),
                    (1, Done(1, false, 1)),
                    (1_001, A),
                    (1_001, A),
                    (1_002, Done(0, true, 1_002)),
                ],
                transitions: vec![
                    (1, C, O, "failures_in_window"),
                    (1_001, O, H, "cooldown_elapsed"),
                    (1_002, H, C, "probe_successes"),
                ],
                admits: "1110",
            },
            Quirk {
                quirk: "a result while open goes into the closed state's stats and changes nothing: the delay is not restarted",
                source: at_0e452f4!("circuitstates.go:76,103-104"),
                breaker: cfg(|_| {}),
                script: vec![(0, A), (0, A), (0, F(1)), (30_000, F(1)), (60_000, A)],
                transitions: vec![(0, C, O, "failures_in_window"), (60_000, O, H, "cooldown_elapsed")],
                admits: "111",
            },
            Quirk {
                quirk: "no ignored outcome: a result the policy does not handle is recorded as a success",
                source: at_0e452f4!("circuitbreaker.go:325-330 and circuitbreakerexecutor.go:24-27"),
                breaker: cfg(|c| c.delay = Dur::from_secs(1)),
                script: vec![(0, A), (0, F(1)), (1_000, A), (1_001, I)],
                transitions: vec![
                    (0, C, O, "failures_in_window"),
                    (1_000, O, H, "cooldown_elapsed"),
                    (1_001, H, C, "probe_successes"),
                ],
                admits: "11",
            },
            Quirk {
                quirk: "WithFailureThresholdPeriod(3, 10 s): 3 failures in the buckets held; the roll to bucket 0 at 10 s drops the first",
                source: at_0e452f4!(
                    "circuitbreakerbuilder.go:165-169; circuitstats.go:215 (s.summary.remove)"
                ),
                breaker: cfg(|c| {
                    c.failure_threshold = 3;
                    c.failure_thresholding_capacity = 3;
                    c.failure_execution_threshold = 3;
                    c.failure_thresholding_period = Dur::from_secs(10);
                }),
                script: [
                    calls(0, 1, 1, false),
                    calls(5_000, 1, 1, false),
                    calls(10_000, 1, 1, false),
                    calls(10_500, 1, 1, false),
                ]
                .concat(),
                transitions: vec![(10_500, C, O, "failures_in_window")],
                admits: "1111",
            },
            Quirk {
                quirk: "rates are math.Round percentages compared with >=: 4 of 8 failures is 50 % and opens, 3 of 7 (43 %) does not",
                source: stats_at_19dfc0d!("246; circuitstates.go:59 @ 0e452f4"),
                breaker: cfg(|c| {
                    c.failure_execution_threshold = 4;
                    c.failure_rate_threshold = 50;
                    c.failure_thresholding_period = Dur::from_secs(10);
                }),
                script: [true, true, false, true, false, true, false, false]
                    .into_iter()
                    .enumerate()
                    .flat_map(|(i, ok)| [(i as u64 * 100, A), (i as u64 * 100, if ok { S(1) } else { F(1) })])
                    .collect(),
                transitions: vec![(700, C, O, "failure_rate")],
                admits: "11111111",
            },
        ]);
    }

    /// `WithFailureRateThreshold(50, 10, time.Minute)`: 10 buckets of 6 s.
    fn fifty_percent_of_ten_per_minute() -> FailsafeBreaker {
        cfg(|c| {
            c.failure_execution_threshold = 10;
            c.failure_rate_threshold = 50;
            c.failure_thresholding_period = Dur::from_secs(60);
        })
    }

    #[test]
    fn a_result_after_a_long_silence_is_stored_in_the_stale_bucket() {
        // failsafe-go @ 19dfc0d (v0.6.7+9), circuitbreaker/circuitstats.go, getCurrentBucket():
        // line 200 `currentBucket := previousBucket` (the bucket in use), line 222 `s.reset()` once
        // more than 10 buckets have passed, line 226 `return currentBucket`: the result after the
        // silence is stored in the bucket in use before it, and line 216
        // `s.summary.remove(currentBucket)` subtracts it when the roll reaches that bucket. The
        // same code at 0e452f4 (lines 199, 221, 225, 215). Storing it in bucket 0 instead (what
        // the preset did) keeps the 80 000 failure until the roll wraps round to bucket 0 and
        // opens at 172 500.
        let mut s = vec![(13_000, A), (13_000, S(1))]; // bucket 2 (12 000..18 000) is current
        // 68 s after bucket 2's start: 11 buckets > 10, reset at 80 000 (bucket i starts at
        // 80 000 + 6 000 i), the failure stored in bucket 2 (start 92 000).
        s.extend([(80_000, A), (80_000, F(1))]);
        // One roll, into bucket 1 (start 86 000 + 60 000 = 146 000): everything until 152 000
        // stays there. 6 successes, then 4 failures: 11 results, 5 failures, 45 %.
        s.extend(calls(87_000, 6, 1_000, true));
        s.extend(calls(93_000, 4, 1_000, false));
        // 26 500 ms after bucket 1's start: 4 rolls (to 2, 3, 4, 5); the roll into bucket 2
        // subtracts the 80 000 failure: 11 results, 5 failures (45 %).
        s.extend([(172_500, A), (172_500, F(1))]);
        // Bucket 5 (170 000..176 000): 12 results, 6 failures, 50 %: opens.
        s.extend([(173_000, A), (173_000, F(1))]);
        let times: Vec<u64> = s.iter().filter(|(_, e)| matches!(e, A)).map(|&(t, _)| t).collect();
        assert_eq!(
            times,
            [
                13_000, 80_000, 87_000, 88_000, 89_000, 90_000, 91_000, 92_000, 93_000, 94_000, 95_000,
                96_000, 172_500, 173_000
            ],
            "the 14-call hand trace"
        );
        let r = drive(&mut fifty_percent_of_ten_per_minute(), &s);
        assert_eq!(
            r.tr,
            vec![(173_000, C, O, "failure_rate")],
            "the library opens at 173 000 ms, not 172 500 ms"
        );
        assert_eq!(r.admit_string(), "1".repeat(14));
    }

    #[test]
    fn buckets_roll_after_ten_buckets_of_silence_and_reset_after_eleven() {
        // failsafe-go @ 19dfc0d (v0.6.7+9), circuitbreaker/circuitstats.go, getCurrentBucket():
        // lines 202-204 `bucketsToMove := timeDiff / bucketSize; if bucketsToMove <= len(s.buckets)`
        // rolls bucket by bucket, each one subtracted (line 216) and restarted one window later
        // (line 214), or one bucket after the previous one if it never started (line 212); more
        // than 10 take the reset branch (line 222, reset() at lines 271-281: bucket i starts at
        // now + i buckets) and keep the old bucket for the result (line 226).
        // Period 10 s, buckets of 1 s from 0; the first result, a failure at 2 500, is in bucket 2
        // (start 2 000). Each row: the results after it, then the current bucket (index, start),
        // the bucket the last result went into (index, start), executions and failures held.
        struct Case {
            what: &'static str,
            results: &'static [(u64, bool)],
            current: (usize, u64),
            stored_in: (usize, u64),
            held: (u64, u64),
        }
        let cases = [
            Case {
                what: "9 buckets and 999 ms: 9 rolls, bucket 2's failure still held",
                results: &[(11_999, false)],
                current: (1, 11_000),
                stored_in: (1, 11_000),
                held: (2, 1),
            },
            Case {
                what: "exactly 10 buckets: 10 rolls, the last one (into bucket 2) subtracts the failure",
                results: &[(12_000, false)],
                current: (2, 12_000),
                stored_in: (2, 12_000),
                held: (1, 0),
            },
            Case {
                what: "10 buckets and 999 ms: still 10 rolls",
                results: &[(12_999, false)],
                current: (2, 12_000),
                stored_in: (2, 12_000),
                held: (1, 0),
            },
            Case {
                what: "exactly 11 buckets: reset at 13 000, the result stored in the old bucket 2 (start 15 000)",
                results: &[(13_000, true)],
                current: (0, 13_000),
                stored_in: (2, 15_000),
                held: (1, 1),
            },
            Case {
                what: "after the reset the roll into bucket 1 restarts it a window later (24 000): no roll until then",
                results: &[(13_000, true), (14_000, false), (24_999, false)],
                current: (1, 24_000),
                stored_in: (1, 24_000),
                held: (3, 1),
            },
            Case {
                what: "the roll into bucket 2 at 25 000 subtracts the result stored there at 13 000",
                results: &[(13_000, true), (14_000, false), (24_999, false), (25_000, false)],
                current: (2, 25_000),
                stored_in: (2, 25_000),
                held: (3, 0),
            },
        ];
        for c in cases {
            let mut stats = TimedStats::new(Dur::from_secs(10), SimTime::ZERO);
            assert_eq!(stats.record(ms(2_500), true), 2);
            let mut stored = 0;
            for &(t, failed) in c.results {
                stored = stats.record(ms(t), failed);
            }
            let start_ms = |i: usize| stats.buckets[i].start.map(|us| us / 1000);
            assert_eq!(
                (stats.current, start_ms(stats.current)),
                (c.current.0, Some(c.current.1)),
                "{}",
                c.what
            );
            assert_eq!((stored, start_ms(stored)), (c.stored_in.0, Some(c.stored_in.1)), "{}", c.what);
            assert_eq!((stats.successes + stats.failures, stats.failures), c.held, "{}", c.what);
        }
    }

    #[test]
    fn default_opens_on_one_failure_and_closes_on_one_success() {
        let mut b = FailsafeBreaker::new(FailsafeConfig::default());
        let s = [(0, A), (0, S(1)), (1, A), (1, F(1)), (60_000, A), (60_001, A), (60_001, A), (60_002, S(1))];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (1, C, O, "failures_in_window"),
                (60_001, O, H, "cooldown_elapsed"),
                (60_002, H, C, "probe_successes")
            ]
        );
        assert_eq!(r.admit_string(), "11010");
    }

    #[test]
    fn ratio_has_no_minimum_and_half_open_uses_the_ratio() {
        let cfg = FailsafeConfig {
            failure_threshold: 3,
            failure_thresholding_capacity: 5,
            delay: Dur::from_secs(1),
            ..FailsafeConfig::default()
        };
        let mut b = FailsafeBreaker::new(cfg);
        // 3 failures in the first 3 calls open it (3 of at most 5).
        let mut s = vec![(0, A), (0, F(1)), (1, A), (1, F(1)), (2, A), (2, F(1))];
        // Half-open: 5 permits; closes when successes > 5 - 3, i.e. at the 3rd success.
        s.extend([(1_002, A), (1_002, S(1)), (1_003, A), (1_003, S(1)), (1_004, A), (1_004, S(1))]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (2, C, O, "failures_in_window"),
                (1_002, O, H, "cooldown_elapsed"),
                (1_004, H, C, "probe_successes")
            ]
        );
    }

    #[test]
    fn late_results_count_in_half_open_and_release_permits() {
        let cfg = FailsafeConfig { delay: Dur::from_secs(1), ..FailsafeConfig::default() };
        let mut b = FailsafeBreaker::new(cfg);
        let s = [
            (0, A), // admission 0: slow
            (1, A),
            (1, Done(1, false, 1)),         // opens
            (1_001, A),                     // the probe (admission 2)
            (1_001, A),                     // rejected: 1 permit
            (1_002, Done(0, false, 1_002)), // late failure: counted in half-open, reopens
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (1, C, O, "failures_in_window"),
                (1_001, O, H, "cooldown_elapsed"),
                (1_002, H, O, "probe_failed")
            ]
        );
        assert_eq!(r.admit_string(), "1110");
    }

    #[test]
    fn an_unhandled_outcome_is_a_success() {
        let cfg = FailsafeConfig { delay: Dur::from_secs(1), ..FailsafeConfig::default() };
        let mut b = FailsafeBreaker::new(cfg);
        let r = drive(&mut b, &[(0, A), (0, F(1)), (1_000, A), (1_001, I)]);
        assert_eq!(r.tr.last(), Some(&(1_001, H, C, "probe_successes")));
    }

    #[test]
    fn time_based_rate_rounds_and_buckets_roll_on_a_grid() {
        // WithFailureRateThreshold(50, 4, 10 s): buckets of 1 s from the closed state's start.
        let cfg = FailsafeConfig {
            failure_execution_threshold: 4,
            failure_rate_threshold: 50,
            failure_thresholding_period: Dur::from_secs(10),
            ..FailsafeConfig::default()
        };
        cfg.validate().unwrap();
        let mut b = FailsafeBreaker::new(cfg.clone());
        // 2 of 5 = 40 %, 3 of 7 = 42.86 % (43): stays closed; the 8th, a failure: 4 of 8 = 50 %.
        let mut s = Vec::new();
        for (i, ok) in [true, true, false, true, false, true, false].into_iter().enumerate() {
            s.push((i as u64 * 100, A));
            s.push((i as u64 * 100, if ok { S(1) } else { F(1) }));
        }
        assert!(drive(&mut b, &s).tr.is_empty());
        let r = drive(&mut b, &[(800, A), (800, F(1))]);
        assert_eq!(r.tr, vec![(800, C, O, "failure_rate")]);
        // math.Round: half away from zero.
        assert_eq!(rounded_rate(5, 11), 45);
        assert_eq!(rounded_rate(1, 200), 1);
        assert_eq!(rounded_rate(99, 200), 50, "49.5 % rounds up: 99 of 200 trips a 50 % threshold");
        // Buckets leave the window a whole bucket at a time: failures at 0 s are gone at 10 s.
        let mut b = FailsafeBreaker::new(cfg);
        let s = [(0, A), (0, F(1)), (0, A), (0, F(1)), (0, A), (0, F(1)), (10_000, A), (10_000, S(1))];
        assert!(drive(&mut b, &s).tr.is_empty(), "1 execution in the window after rolling");
    }
}
