//! Polly v8's circuit breaker strategy (preset `polly`): `CircuitStateController` with the
//! `AdvancedCircuitBehavior` and its health metrics.
//!
//! Source: App-vNext/Polly, src/Polly.Core/CircuitBreaker/Controller/CircuitStateController.cs
//! @ 008b9524f9db83c76548247492282d08022913ba, Controller/AdvancedCircuitBehavior.cs and
//! Health/RollingHealthMetrics.cs @ 13428cc098f863965c41737265597ab2ba5f16d6,
//! Health/HealthMetrics.cs @ 3e58672f270c1162776f7be56dd0776bc4b7b7a9,
//! Health/SingleHealthMetrics.cs @ 18171df7c76c17c94820b6eca07c7ff3a4686de3,
//! CircuitBreakerConstants.cs @ 07124acf6b127192f687447b75cddf2b8c19b873.
//!
//! Reproduced:
//! - the trip is evaluated only on a failure while Closed: `throughput >= MinimumThroughput &&
//!   failures / throughput >= FailureRatio`; a success never trips;
//! - health windows: with `SamplingDuration >= 200 ms`, 10 sub-windows of `SamplingDuration /
//!   10` (in 100 ns ticks), each starting at the first event after the previous one ended (not
//!   aligned), dropped once `now − start >= SamplingDuration`; below 200 ms one window reset
//!   once `SamplingDuration` has passed since it started;
//! - metrics are reset when the circuit closes (not on open);
//! - Open → HalfOpen only in the pre-execute check (passive) when `now >= blockedUntil`; that
//!   call is the only probe; others are rejected while HalfOpen (a probe that never returns
//!   leaves it half-open, as the v8 controller does);
//! - in HalfOpen any success closes and any failure reopens for `BreakDuration`, whichever call
//!   it came from; results arriving while Open are counted but never extend the break.
//!
//! Polly has no ignored outcome: what `ShouldHandle` does not handle is reported through
//! `OnActionSuccess`, so classes in `ignore` count as successes here.
//! A `BreakDurationGenerator` is a user callback: not modelled (the break is fixed).

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, num, timespan};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, require};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use std::collections::VecDeque;
use std::fmt::Write as _;

family_config! {
    /// `CircuitBreakerStrategyOptions`, in snake_case.
    PollyConfig {
        failure_ratio: f64 = 0.1, "ratio", "FailureRatio: trips at >= this, checked on a failure";
        minimum_throughput: u32 = 100, "calls", "MinimumThroughput in the sampling duration (>= 2)";
        sampling_duration: Dur = Dur::from_secs(30), "duration",
            "SamplingDuration: 10 unaligned sub-windows (one window under 200 ms)";
        break_duration: Dur = Dur::from_secs(5), "duration", "BreakDuration: time open before the one probe";
    }
}

impl Family for PollyConfig {
    type Breaker = PollyBreaker;
    const NAME: &'static str = "polly";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "polly",
        library: "Polly 8.x (Polly.Core)",
        summary: "Polly v8 defaults: on a failure, opens when >= 100 calls in the last 30 s have a failure ratio >= 0.1; break 5 s; one probe",
        source: "App-vNext/Polly v8, src/Polly.Core/CircuitBreaker/Controller/CircuitStateController.cs @ 008b9524f9db83c76548247492282d08022913ba, Controller/AdvancedCircuitBehavior.cs and Health/RollingHealthMetrics.cs @ 13428cc098f863965c41737265597ab2ba5f16d6, CircuitBreakerConstants.cs @ 07124acf6b127192f687447b75cddf2b8c19b873",
        quirks: &[
            "the trip is checked only when a failure is recorded in Closed: a success never trips, even at the ratio",
            ">= for the ratio: exactly 0.1 opens",
            "10 sub-windows that start at their first event (not aligned); a sub-window leaves once SamplingDuration old",
            "metrics reset when the circuit closes, not when it opens",
            "half-open is passive: the first call after the break is the only probe; a probe that never returns leaves it half-open",
            "in half-open any success closes and any failure reopens, whichever call it came from (Polly#219)",
            "results arriving while open are counted but never extend the break",
            "no ignored outcome: what ShouldHandle does not handle is a success (classes in `ignore` count as successes)",
        ],
        config: PollyConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        let r = self.failure_ratio;
        require(
            r.is_finite() && r > 0.0 && r <= 1.0,
            "failure_ratio",
            "a ratio greater than 0 and at most 1",
            r,
        )?;
        require(
            self.minimum_throughput >= 2,
            "minimum_throughput",
            "at least 2 (CircuitBreakerConstants.MinimumValidThroughput)",
            self.minimum_throughput,
        )?;
        require(
            self.sampling_duration >= Dur::from_millis(500),
            "sampling_duration",
            "at least 500ms (the options' range)",
            self.sampling_duration,
        )?;
        require(
            self.break_duration >= Dur::from_millis(500),
            "break_duration",
            "at least 500ms (the options' range)",
            self.break_duration,
        )?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> PollyBreaker {
        PollyBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Polly).then(|| Ok(polly(input.header, self)))
    }
}

#[derive(Copy, Clone, Debug)]
struct Window {
    start: SimTime,
    successes: u64,
    failures: u64,
}

/// Polly's controller with its health metrics.
#[derive(Clone, Debug)]
pub struct PollyBreaker {
    cfg: PollyConfig,
    phase: Phase,
    windows: VecDeque<Window>,
    successes: u64,
    failures: u64,
    blocked_until: SimTime,
    rolling: bool,
}

impl PollyBreaker {
    /// A closed breaker with empty metrics.
    pub fn new(cfg: PollyConfig) -> PollyBreaker {
        let rolling = cfg.sampling_duration >= Dur::from_millis(200);
        PollyBreaker {
            cfg,
            phase: Phase::new(),
            windows: VecDeque::with_capacity(11),
            successes: 0,
            failures: 0,
            blocked_until: SimTime::ZERO,
            rolling,
        }
    }

    /// `UpdateCurrentWindow` (rolling) or `TryReset` (single), then the current window.
    fn update(&mut self, now: SimTime) {
        let sampling = self.cfg.sampling_duration;
        if !self.rolling {
            if self.windows.front().is_none_or(|w| now.since(w.start) >= sampling) {
                self.windows.clear();
                self.windows.push_back(Window { start: now, successes: 0, failures: 0 });
                self.successes = 0;
                self.failures = 0;
            }
            return;
        }
        // The window length is SamplingDuration.Ticks / 10 in 100 ns ticks, that is the
        // sampling duration's microsecond count in ticks: compare elapsed ticks with it.
        let window_ticks = sampling.micros();
        let new_window = self.windows.back().is_none_or(|w| now.since(w.start).micros() * 10 >= window_ticks);
        if new_window {
            self.windows.push_back(Window { start: now, successes: 0, failures: 0 });
        }
        while let Some(w) = self.windows.front().copied() {
            if now.since(w.start) < sampling {
                break;
            }
            self.windows.pop_front();
            self.successes -= w.successes;
            self.failures -= w.failures;
        }
    }

    fn increment(&mut self, now: SimTime, failed: bool) {
        self.update(now);
        if let Some(w) = self.windows.back_mut() {
            if failed {
                w.failures += 1;
            } else {
                w.successes += 1;
            }
        }
        if failed {
            self.failures += 1;
        } else {
            self.successes += 1;
        }
    }

    fn reset(&mut self, now: SimTime) {
        self.windows.clear();
        self.successes = 0;
        self.failures = 0;
        if !self.rolling {
            self.windows.push_back(Window { start: now, successes: 0, failures: 0 });
        }
    }

    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        self.phase.enter(now, State::Open, reason, self.evidence_for(now, out), out);
        self.blocked_until = now + self.cfg.break_duration;
    }
}

impl Breaker for PollyBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        match self.phase.state() {
            State::Closed => Admission::Allow(self.phase.ticket(false)),
            State::Open if now >= self.blocked_until => {
                self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
                self.blocked_until = now + self.cfg.break_duration;
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Reject,
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        match obs.verdict {
            // An outcome ShouldHandle does not handle is a success to Polly (OnActionSuccess).
            Verdict::Ignored | Verdict::Success => {
                self.increment(now, false);
                if self.phase.state() == State::HalfOpen {
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                    self.reset(now);
                }
            }
            Verdict::Failure => match self.phase.state() {
                State::Closed => {
                    self.increment(now, true);
                    self.update(now);
                    let total = self.successes + self.failures;
                    if total >= u64::from(self.cfg.minimum_throughput)
                        && self.failures as f64 / total as f64 >= self.cfg.failure_ratio
                    {
                        self.open(now, "failure_rate", out);
                    }
                }
                State::Open => self.increment(now, true),
                State::HalfOpen => self.open(now, "probe_failed", out),
            },
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match self.phase.state() {
            State::Closed => {
                let total = self.successes + self.failures;
                ev.count(
                    "throughput",
                    total,
                    Test::AtLeast,
                    "minimum_throughput",
                    u64::from(c.minimum_throughput),
                );
                ev.rate(
                    "window_failure_ratio",
                    self.failures,
                    total,
                    Test::AtLeast,
                    "failure_ratio",
                    c.failure_ratio,
                );
            }
            State::Open => {
                let opened = SimTime(self.blocked_until.micros().saturating_sub(c.break_duration.micros()));
                ev.open_for(now.since(opened), Test::AtLeast, "break_duration", c.break_duration);
            }
            State::HalfOpen => ev.count("probes_admitted", 1, Test::Of, "probes", 1),
        }
    }
}

/// The configuration in Polly's syntax.
fn polly(header: &[String], c: &PollyConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "using Polly;");
    let _ = writeln!(s, "using Polly.CircuitBreaker;");
    let _ = writeln!(s);
    let _ = writeln!(s, "var options = new CircuitBreakerStrategyOptions");
    let _ = writeln!(s, "{{");
    let _ = writeln!(s, "    FailureRatio = {},", num(c.failure_ratio));
    let _ = writeln!(s, "    MinimumThroughput = {},", c.minimum_throughput);
    let _ = writeln!(s, "    SamplingDuration = {},", timespan(c.sampling_duration));
    let _ = writeln!(s, "    BreakDuration = {},", timespan(c.break_duration));
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "var pipeline = new ResiliencePipelineBuilder().AddCircuitBreaker(options).Build();");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

    fn small(min: u32, ratio: f64) -> PollyBreaker {
        let c = PollyConfig {
            failure_ratio: ratio,
            minimum_throughput: min,
            sampling_duration: Dur::from_secs(10),
            break_duration: Dur::from_secs(5),
        };
        c.validate().unwrap();
        PollyBreaker::new(c)
    }

    #[test]
    fn trips_only_on_a_failure_at_exactly_the_ratio() {
        let mut b = small(3, 0.5);
        // F, F: below the minimum; S makes 2 / 3 >= 0.5 but a success never trips.
        let r = drive(&mut b, &[(0, A), (0, F(1)), (1, A), (1, F(1)), (2, A), (2, S(1))]);
        assert!(r.tr.is_empty());
        // S then F: 3 / 5 = 0.6 at a failure. Before it, with min 4: exactly 2 / 4 = 0.5.
        let mut b = small(4, 0.5);
        let r = drive(&mut b, &[(0, A), (0, S(1)), (1, A), (1, F(1)), (2, A), (2, S(1)), (3, A), (3, F(1))]);
        assert_eq!(r.tr, vec![(3, C, O, "failure_rate")]);
    }

    #[test]
    fn sub_windows_start_at_the_first_event() {
        // The first window starts at 500 ms; it is dropped once 10 s old.
        let mut kept = small(2, 0.5);
        let r = drive(&mut kept, &[(500, A), (500, F(1)), (10_499, A), (10_499, F(1))]);
        assert_eq!(r.tr, vec![(10_499, C, O, "failure_rate")]);
        let mut dropped = small(2, 0.5);
        let r = drive(&mut dropped, &[(500, A), (500, F(1)), (10_500, A), (10_500, F(1))]);
        assert!(r.tr.is_empty());
    }

    #[test]
    fn one_probe_late_results_and_reset_on_close() {
        let mut b = small(2, 0.5);
        let s = [
            (0, A), // a long call admitted while closed
            (0, A),
            (1, Done(1, false, 1)),
            (2, A),
            (2, Done(2, false, 1)), // 2 of 2 failed: opens, blocked until 5002
            (3, Done(0, false, 3)), // a late failure while open: counted, no extension
            (5_001, A),
            (5_002, A), // half-open: the probe
            (5_002, A), // rejected
            (5_003, S(1)),
            (5_004, A),
            (5_004, F(1)), // metrics were reset on close: 1 call is below the minimum
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (2, C, O, "failure_rate"),
                (5_002, O, H, "cooldown_elapsed"),
                (5_003, H, C, "probe_successes")
            ]
        );
        assert_eq!(r.admit_string(), "1110101");
    }

    #[test]
    fn a_late_failure_in_half_open_reopens() {
        let mut b = small(2, 0.5);
        let s = [
            (0, A),
            (0, A),
            (1, Done(1, false, 1)),
            (1, A),
            (1, Done(2, false, 1)),         // opens at 1
            (5_001, A),                     // probe
            (6_000, Done(0, false, 6_000)), // the call from t=0 fails: reopens until 11 000
            (10_999, A),
            (11_000, A),
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (1, C, O, "failure_rate"),
                (5_001, O, H, "cooldown_elapsed"),
                (6_000, H, O, "probe_failed"),
                (11_000, O, H, "cooldown_elapsed"),
            ]
        );
    }

    #[test]
    fn an_unhandled_outcome_is_a_success() {
        let mut b = small(2, 0.5);
        let s = [(0, A), (0, F(1)), (1, A), (1, F(1)), (5_001, A), (5_002, I)];
        let r = drive(&mut b, &s);
        assert_eq!(r.tr.last(), Some(&(5_002, H, C, "probe_successes")));
        // In closed it dilutes the ratio: F, I, F is 2 of 3 at the last failure with min 3.
        let mut b = small(3, 0.7);
        let r = drive(&mut b, &[(0, A), (0, F(1)), (1, A), (1, I), (2, A), (2, F(1))]);
        assert!(r.tr.is_empty(), "2 / 3 < 0.7");
    }

    #[test]
    fn health_windows_stay_bounded_over_a_long_run() {
        use crate::policy::testkit::{cyclic, offer};
        let mut b = PollyBreaker::new(PollyConfig::default());
        let day = 86_400_000;
        offer(&mut b, 0, 200_000, 400, cyclic(day / 4, 600_000));
        assert!(b.windows.len() <= 11, "{}", b.windows.len());
        let cap = b.windows.capacity();
        offer(&mut b, 80_000_000, 200_000, 400, cyclic(day / 4, 600_000));
        assert_eq!(b.windows.capacity(), cap, "no growth once warmed up");
    }
}
