//! Resilience4j's `CircuitBreakerStateMachine` (presets `resilience4j-count` and
//! `resilience4j-time`), as its source behaves.
//!
//! Source: resilience4j/resilience4j tag v2.4.0 (commit f1c3be8e79d09c70d457b2f89c3f89d03f1b5720,
//! the latest 2.x release; first read at 1a4a716, a 1.7.1-SNAPSHOT commit: between the two the
//! metrics only gained lock-free variants of the same windows and the state machine an optional
//! `transitionToStateAfterWaitDuration`, whose default OPEN is what is modelled),
//! resilience4j-circuitbreaker/src/main/java/io/github/resilience4j/circuitbreaker/internal/
//! CircuitBreakerStateMachine.java (ClosedState, OpenState, HalfOpenState, transitionTo*) and
//! CircuitBreakerMetrics.java (onSuccess, onError, checkIfThresholdsExceeded, forHalfOpen);
//! resilience4j-core/.../metrics/SlidingTimeWindowMetrics.java (moveWindowToCurrentEpochSecond).
//!
//! What is reproduced:
//! - every recorded result in CLOSED re-evaluates: below `minimum_number_of_calls` in the window
//!   nothing is decided (COUNT_BASED clamps the minimum to the window size, TIME_BASED does not);
//!   it opens when `failures·100/calls >= failure_rate_threshold` or
//!   `slow·100/calls >= slow_call_rate_threshold` (float percentages, `>=`);
//! - a call is slow when its duration is strictly above `slow_call_duration_threshold`, success
//!   or failure;
//! - COUNT_BASED: ring of the last N results; TIME_BASED: N buckets of one epoch-aligned second
//!   (simulation time zero is the epoch); a fresh window on every entry into CLOSED;
//! - OPEN lasts `waitIntervalFunctionInOpenState(attempts)`; `attempts` is 1 on CLOSED → OPEN and
//!   grows by one on each HALF_OPEN → OPEN; the default interval function is constant, the
//!   exponential one is `wait × multiplier^(attempts − 1)` capped at its maximum;
//! - OPEN → HALF_OPEN is passive and needs the clock to be strictly after the wait
//!   (`clock.instant().isAfter(retryAfterWaitDuration)`), or a timer exactly at the wait end
//!   when `automatic_transition_from_open_to_half_open_enabled`;
//! - results arriving while OPEN are recorded in the window carried into OPEN, without effect;
//! - HALF_OPEN permits `permitted_number_of_calls_in_half_open_state` calls and records every
//!   result (late ones from calls admitted while CLOSED too, no generation check) in a count
//!   window of that size; it decides as soon as `min(minimum_number_of_calls, permitted)`
//!   results are in (resilience4j#1523): above a threshold → OPEN, else → CLOSED;
//! - an ignored result releases a permission in whatever state is current (a late ignored
//!   result in HALF_OPEN hands out one more probe);
//! - `max_wait_duration_in_half_open_state` (0 = off) reopens HALF_OPEN by a timer.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, num, spring_duration};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, invalid, not_shorter, require};
use super::window::{BucketWindow, CountWindow, Sample, Tally, Window};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Resilience4j's `SlidingWindowType`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlidingWindowType {
    /// The last N results.
    CountBased,
    /// N epoch-aligned one-second buckets.
    TimeBased,
}

family_config! {
    /// `CircuitBreakerConfig`, with Spring Boot property names in snake_case.
    Resilience4jConfig {
        sliding_window_type: SlidingWindowType, "count_based | time_based", "slidingWindowType";
        sliding_window_size: u32, "calls | seconds",
            "slidingWindowSize: last N calls (count_based) or N one-second epoch-aligned buckets (time_based)";
        minimum_number_of_calls: u32, "calls",
            "minimumNumberOfCalls before any decision (count_based clamps it to the window size)";
        failure_rate_threshold: f64, "percent", "failureRateThreshold: opens at >= this";
        slow_call_rate_threshold: f64, "percent", "slowCallRateThreshold: opens at >= this";
        slow_call_duration_threshold: Dur, "duration",
            "slowCallDurationThreshold: a call strictly longer is slow (success or failure)";
        permitted_number_of_calls_in_half_open_state: u32, "calls",
            "permittedNumberOfCallsInHalfOpenState: probes and the half-open window size";
        wait_duration_in_open_state: Dur, "duration", "waitDurationInOpenState";
        exponential_backoff_multiplier: f64, "factor",
            "exponentialBackoffMultiplier: wait x multiplier^(attempts - 1); 1 = constant wait";
        exponential_max_wait_duration_in_open_state: Dur, "duration",
            "exponentialMaxWaitDurationInOpenState: cap of the grown wait (0 = none)";
        automatic_transition_from_open_to_half_open_enabled: bool, "bool",
            "automaticTransitionFromOpenToHalfOpenEnabled: a timer instead of the next call";
        max_wait_duration_in_half_open_state: Dur, "duration",
            "maxWaitDurationInHalfOpenState: reopen half-open after this (0 = off)";
    }
}

impl Resilience4jConfig {
    /// The library's defaults with a COUNT_BASED window.
    pub fn count_based() -> Resilience4jConfig {
        Resilience4jConfig {
            sliding_window_type: SlidingWindowType::CountBased,
            sliding_window_size: 100,
            minimum_number_of_calls: 100,
            failure_rate_threshold: 50.0,
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: Dur::from_secs(60),
            permitted_number_of_calls_in_half_open_state: 10,
            wait_duration_in_open_state: Dur::from_secs(60),
            exponential_backoff_multiplier: 1.0,
            exponential_max_wait_duration_in_open_state: Dur::ZERO,
            automatic_transition_from_open_to_half_open_enabled: false,
            max_wait_duration_in_half_open_state: Dur::ZERO,
        }
    }

    /// The library's defaults with a TIME_BASED window (`slidingWindowSize` 100 seconds).
    pub fn time_based() -> Resilience4jConfig {
        Resilience4jConfig { sliding_window_type: SlidingWindowType::TimeBased, ..Self::count_based() }
    }

    /// The open duration for `attempts` (1-based), as `IntervalFunction` computes it.
    pub fn wait_for(&self, attempts: u32) -> Dur {
        let mut d = self.wait_duration_in_open_state;
        if self.exponential_backoff_multiplier > 1.0 && attempts > 1 {
            d = d.mul_f64(self.exponential_backoff_multiplier.powi((attempts - 1).min(1024) as i32));
            let cap = self.exponential_max_wait_duration_in_open_state;
            if !cap.is_zero() && d > cap {
                d = cap;
            }
        }
        d
    }
}

fn percent(name: &str, v: f64) -> Result<(), PolicyError> {
    if v.is_finite() && v > 0.0 && v <= 100.0 {
        Ok(())
    } else {
        Err(invalid(name, "a percentage greater than 0 and at most 100", &v.to_string()))
    }
}

const R4J_SOURCE: &str = "resilience4j/resilience4j tag v2.4.0 (f1c3be8e79d09c70d457b2f89c3f89d03f1b5720), resilience4j-circuitbreaker/src/main/java/io/github/resilience4j/circuitbreaker/internal/CircuitBreakerStateMachine.java and CircuitBreakerMetrics.java; resilience4j-core/.../metrics/SlidingTimeWindowMetrics.java";
const R4J_QUIRKS: &[&str] = &[
    "evaluated on every recorded result, success or failure; >= for both rates (float percentages)",
    "count_based clamps minimum_number_of_calls to the window size; time_based does not (a 10 s window with minimum 100 needs 100 calls in it)",
    "time_based buckets are epoch-aligned whole seconds: the window spans between size - 1 and size seconds",
    "slow = duration strictly above slow_call_duration_threshold, failures included",
    "open -> half-open on the first call strictly after the wait (isAfter), or by a timer exactly at it when automatic",
    "half-open decides as soon as min(minimum_number_of_calls, permitted) results are in, not after all permitted calls (resilience4j#1523)",
    "late results are not generation-checked: a call admitted while closed that ends in half-open is a probe result",
    "an ignored result releases a half-open permission even when its call was admitted before half-open",
    "the wait grows only on half-open -> open (attempts + 1) with an exponential interval function; a fresh window on closing",
];

impl Family for Resilience4jConfig {
    type Breaker = Resilience4jBreaker;
    const NAME: &'static str = "resilience4j";
    const PRESETS: &'static [Preset<Self>] = &[
        Preset {
            name: "resilience4j-count",
            library: "Resilience4j 2.4.0 (resilience4j-circuitbreaker)",
            summary: "Resilience4j 2.x defaults: failure rate >= 50 % (or slow-call rate >= 100 %) over the last 100 calls, 100 calls minimum; open 60 s; 10 half-open calls",
            source: R4J_SOURCE,
            quirks: R4J_QUIRKS,
            config: Resilience4jConfig::count_based,
            classifier: Classifier::EVERY_ERROR,
        },
        Preset {
            name: "resilience4j-time",
            library: "Resilience4j 2.4.0 (resilience4j-circuitbreaker)",
            summary: "Resilience4j 2.x defaults with a TIME_BASED window: 100 epoch-aligned 1 s buckets, 100 calls minimum (not clamped); open 60 s; 10 half-open calls",
            source: R4J_SOURCE,
            quirks: R4J_QUIRKS,
            config: Resilience4jConfig::time_based,
            classifier: Classifier::EVERY_ERROR,
        },
    ];

    fn validate(&self) -> Result<(), PolicyError> {
        percent("failure_rate_threshold", self.failure_rate_threshold)?;
        percent("slow_call_rate_threshold", self.slow_call_rate_threshold)?;
        at_least_one("sliding_window_size", self.sliding_window_size)?;
        at_least_one("minimum_number_of_calls", self.minimum_number_of_calls)?;
        at_least_one(
            "permitted_number_of_calls_in_half_open_state",
            self.permitted_number_of_calls_in_half_open_state,
        )?;
        if self.wait_duration_in_open_state < Dur::from_millis(1) {
            return Err(invalid(
                "wait_duration_in_open_state",
                "at least 1ms",
                &self.wait_duration_in_open_state.to_string(),
            ));
        }
        require(
            self.exponential_backoff_multiplier.is_finite() && self.exponential_backoff_multiplier >= 1.0,
            "exponential_backoff_multiplier",
            "a number of at least 1",
            self.exponential_backoff_multiplier,
        )?;
        let cap = self.exponential_max_wait_duration_in_open_state;
        if !cap.is_zero() {
            let base = self.wait_duration_in_open_state;
            not_shorter(
                "exponential_max_wait_duration_in_open_state",
                cap,
                "wait_duration_in_open_state",
                base,
            )?;
        }
        Ok(())
    }

    fn build(&self, _seed: u64) -> Resilience4jBreaker {
        Resilience4jBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Resilience4j).then(|| Ok(spring_yaml(input.header, input.name, self)))
    }
}

/// `checkIfThresholdsExceeded`'s verdict.
enum Check {
    BelowMinimum,
    Below,
    Above(&'static str),
}

/// Resilience4j's state machine.
#[derive(Clone, Debug)]
pub struct Resilience4jBreaker {
    cfg: Resilience4jConfig,
    phase: Phase,
    closed: Window,
    half: CountWindow,
    attempts: u32,
    retry_after: SimTime,
    half_open_since: SimTime,
    permits: u64,
}

impl Resilience4jBreaker {
    /// A closed breaker with an empty window.
    pub fn new(cfg: Resilience4jConfig) -> Resilience4jBreaker {
        let closed = match cfg.sliding_window_type {
            SlidingWindowType::CountBased => Window::Count(CountWindow::new(cfg.sliding_window_size)),
            SlidingWindowType::TimeBased => Window::Buckets(BucketWindow::new(
                Dur::from_secs(u64::from(cfg.sliding_window_size)),
                cfg.sliding_window_size,
            )),
        };
        let half = CountWindow::new(cfg.permitted_number_of_calls_in_half_open_state);
        Resilience4jBreaker {
            cfg,
            phase: Phase::new(),
            closed,
            half,
            attempts: 0,
            retry_after: SimTime::ZERO,
            half_open_since: SimTime::ZERO,
            permits: 0,
        }
    }

    fn check(&self, t: Tally, min: u64) -> Check {
        if t.calls == 0 || t.calls < min {
            return Check::BelowMinimum;
        }
        let calls = t.calls as f32;
        if t.failures as f32 * 100.0 / calls >= self.cfg.failure_rate_threshold as f32 {
            return Check::Above("failure_rate");
        }
        if t.slow as f32 * 100.0 / calls >= self.cfg.slow_call_rate_threshold as f32 {
            return Check::Above("slow_call_rate");
        }
        Check::Below
    }

    fn open(&mut self, at: SimTime, reason: &'static str, out: &mut Transitions) {
        self.attempts = self.attempts.saturating_add(1);
        self.phase.enter(at, State::Open, reason, self.evidence_for(at, out), out);
        self.retry_after = at + self.cfg.wait_for(self.attempts);
    }

    fn half_open(&mut self, at: SimTime, out: &mut Transitions) {
        self.phase.enter(at, State::HalfOpen, "cooldown_elapsed", self.evidence_for(at, out), out);
        self.half.clear();
        self.permits = u64::from(self.cfg.permitted_number_of_calls_in_half_open_state);
        self.half_open_since = at;
    }

    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        loop {
            match self.deadline() {
                Some(d) if d <= now => match self.phase.state() {
                    State::Open => self.half_open(d, out),
                    State::HalfOpen => self.open(d, "half_open_timeout", out),
                    State::Closed => return,
                },
                _ => return,
            }
        }
    }

    fn sample(&self, now: SimTime, failed: bool, latency: Dur) -> Sample {
        Sample { at: now, failed, slow: latency > self.cfg.slow_call_duration_threshold, over: false }
    }
}

impl Breaker for Resilience4jBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        if self.phase.state() == State::Open {
            if now > self.retry_after {
                self.half_open(now, out);
            } else {
                return Admission::Reject;
            }
        }
        match self.phase.state() {
            State::HalfOpen => {
                if self.permits == 0 {
                    return Admission::Reject;
                }
                self.permits -= 1;
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Allow(self.phase.ticket(false)),
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        let failed = match obs.verdict {
            Verdict::Ignored => {
                // releasePermission() of the current state: only HALF_OPEN counts permissions.
                if self.phase.state() == State::HalfOpen {
                    self.permits += 1;
                }
                return;
            }
            Verdict::Success => false,
            Verdict::Failure => true,
        };
        let s = self.sample(now, failed, obs.latency);
        match self.phase.state() {
            State::Closed => {
                self.closed.push(s);
                let min = match self.cfg.sliding_window_type {
                    SlidingWindowType::CountBased => {
                        self.cfg.minimum_number_of_calls.min(self.cfg.sliding_window_size)
                    }
                    SlidingWindowType::TimeBased => self.cfg.minimum_number_of_calls,
                };
                if let Check::Above(reason) = self.check(self.closed.tally(now), u64::from(min)) {
                    self.open(now, reason, out);
                }
            }
            State::Open => self.closed.push(s),
            State::HalfOpen => {
                self.half.push(s);
                let permitted = self.cfg.permitted_number_of_calls_in_half_open_state;
                let min = u64::from(self.cfg.minimum_number_of_calls.min(permitted));
                match self.check(self.half.tally(), min) {
                    Check::BelowMinimum => {}
                    Check::Above(_) => self.open(now, "probe_failure_rate", out),
                    Check::Below => {
                        self.phase.enter(
                            now,
                            State::Closed,
                            "probe_failure_rate_below",
                            self.evidence_for(now, out),
                            out,
                        );
                        self.attempts = 0;
                        self.closed.clear();
                    }
                }
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        let rates = |ev: &mut Evidence, t: Tally, min: u32, gate: &'static str| {
            let pct = |n: u64| if t.calls == 0 { 0.0 } else { f64::from(n as f32 * 100.0 / t.calls as f32) };
            ev.count("window_calls", t.calls, Test::AtLeast, gate, u64::from(min.max(1)));
            ev.ratio(
                "failure_rate_percent",
                pct(t.failures),
                Test::AtLeast,
                "failure_rate_threshold",
                c.failure_rate_threshold,
            );
            ev.ratio(
                "slow_call_rate_percent",
                pct(t.slow),
                Test::AtLeast,
                "slow_call_rate_threshold",
                c.slow_call_rate_threshold,
            );
        };
        match self.phase.state() {
            State::Closed => {
                let min = match c.sliding_window_type {
                    SlidingWindowType::CountBased => c.minimum_number_of_calls.min(c.sliding_window_size),
                    SlidingWindowType::TimeBased => c.minimum_number_of_calls,
                };
                rates(ev, self.closed.tally(now), min, "minimum_number_of_calls");
            }
            State::Open => {
                let wait = c.wait_for(self.attempts);
                let opened = SimTime(self.retry_after.micros().saturating_sub(wait.micros()));
                ev.open_for(now.since(opened), Test::Above, "wait_duration_in_open_state", wait);
            }
            State::HalfOpen => {
                let permitted = c.permitted_number_of_calls_in_half_open_state;
                let admitted = u64::from(permitted).saturating_sub(self.permits);
                ev.count(
                    "probes_admitted",
                    admitted,
                    Test::Of,
                    "permitted_number_of_calls_in_half_open_state",
                    u64::from(permitted),
                );
                rates(
                    ev,
                    self.half.tally(),
                    c.minimum_number_of_calls.min(permitted),
                    "minimum_number_of_calls",
                );
                if c.max_wait_duration_in_half_open_state >= Dur::from_millis(1) {
                    let waited = now.since(self.half_open_since);
                    ev.time(
                        "time_half_open",
                        waited,
                        Test::AtLeast,
                        "max_wait_duration_in_half_open_state",
                        c.max_wait_duration_in_half_open_state,
                    );
                }
            }
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        match self.phase.state() {
            State::Open if self.cfg.automatic_transition_from_open_to_half_open_enabled => {
                Some(self.retry_after)
            }
            State::HalfOpen if self.cfg.max_wait_duration_in_half_open_state >= Dur::from_millis(1) => {
                Some(self.half_open_since + self.cfg.max_wait_duration_in_half_open_state)
            }
            _ => None,
        }
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

/// Spring Boot `resilience4j.circuitbreaker.instances.<name>` YAML (also the generic
/// family's export when its blocks are exactly Resilience4j's).
pub fn spring_yaml(header: &[String], name: &str, c: &Resilience4jConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let kind = match c.sliding_window_type {
        SlidingWindowType::CountBased => "COUNT_BASED",
        SlidingWindowType::TimeBased => "TIME_BASED",
    };
    let _ = writeln!(s, "resilience4j:");
    let _ = writeln!(s, "  circuitbreaker:");
    let _ = writeln!(s, "    instances:");
    let _ = writeln!(s, "      {name}:");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "        {k}: {v}");
    };
    kv("slidingWindowType", kind.into());
    kv("slidingWindowSize", c.sliding_window_size.to_string());
    kv("minimumNumberOfCalls", c.minimum_number_of_calls.to_string());
    kv("failureRateThreshold", num(c.failure_rate_threshold));
    kv("slowCallRateThreshold", num(c.slow_call_rate_threshold));
    kv("slowCallDurationThreshold", spring_duration(c.slow_call_duration_threshold));
    kv("permittedNumberOfCallsInHalfOpenState", c.permitted_number_of_calls_in_half_open_state.to_string());
    kv("waitDurationInOpenState", spring_duration(c.wait_duration_in_open_state));
    kv(
        "automaticTransitionFromOpenToHalfOpenEnabled",
        c.automatic_transition_from_open_to_half_open_enabled.to_string(),
    );
    kv("maxWaitDurationInHalfOpenState", spring_duration(c.max_wait_duration_in_half_open_state));
    if c.exponential_backoff_multiplier > 1.0 {
        kv("enableExponentialBackoff", "true".into());
        kv("exponentialBackoffMultiplier", num(c.exponential_backoff_multiplier));
        if !c.exponential_max_wait_duration_in_open_state.is_zero() {
            kv(
                "exponentialMaxWaitDurationInOpenState",
                spring_duration(c.exponential_max_wait_duration_in_open_state),
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{self, C, Ev, Ev::*, H, O, Quirk, check_quirks, drive};

    /// Resilience4j's files at the tag the preset reproduces.
    macro_rules! at_v2_4_0 {
        ($file_line:literal) => {
            concat!("resilience4j v2.4.0 (f1c3be8), ", $file_line)
        };
    }

    fn r4j(base: fn() -> Resilience4jConfig, f: impl FnOnce(&mut Resilience4jConfig)) -> Resilience4jBreaker {
        let mut c = base();
        f(&mut c);
        c.validate().unwrap();
        Resilience4jBreaker::new(c)
    }

    /// `ones` admissions, then the pattern of the rest (`1` admitted, `0` refused).
    fn admits(ones: usize, rest: &str) -> &'static str {
        format!("{}{rest}", "1".repeat(ones)).leak()
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        check_quirks(vec![
            Quirk {
                quirk: "TIME_BASED defaults: 100 results in the 100 s window, 50 % failures open (>=); open 60 s, half-open strictly after; 10 probes decide (min(100, 10)), all successes close",
                source: at_v2_4_0!(
                    "CircuitBreakerMetrics.java:58,148,170-175,77-80 and CircuitBreakerStateMachine.java:725,1072-1076,1175-1176"
                ),
                breaker: r4j(Resilience4jConfig::time_based, |_| {}),
                script: [
                    testkit::calls(0, 50, 1_000, true),
                    testkit::calls(50_000, 50, 1_000, false),
                    vec![(159_000, A)],
                    testkit::calls(159_001, 10, 1, true),
                ]
                .concat(),
                transitions: vec![
                    (99_000, C, O, "failure_rate"),
                    (159_001, O, H, "cooldown_elapsed"),
                    (159_010, H, C, "probe_failure_rate_below"),
                ],
                admits: admits(100, "01111111111"),
            },
            Quirk {
                quirk: "TIME_BASED: the minimum is not clamped to the window: a 10 s window needs 100 results in it",
                source: at_v2_4_0!("CircuitBreakerMetrics.java:58 (COUNT_BASED clamps at 50-51)"),
                breaker: r4j(Resilience4jConfig::time_based, |c| c.sliding_window_size = 10),
                script: testkit::calls(0, 100, 99, false),
                transitions: vec![(9_801, C, O, "failure_rate")],
                admits: admits(100, ""),
            },
            Quirk {
                quirk: "COUNT_BASED clamps the minimum to the window: 10 of 10 failures open a window of 10",
                source: at_v2_4_0!("CircuitBreakerMetrics.java:50-51"),
                breaker: r4j(Resilience4jConfig::count_based, |c| c.sliding_window_size = 10),
                script: testkit::calls(0, 10, 1, false),
                transitions: vec![(9, C, O, "failure_rate")],
                admits: admits(10, ""),
            },
            Quirk {
                quirk: "TIME_BASED buckets are whole epoch seconds: failures 9.001 s apart (999 ms, 10 000 ms) are never in one 10 s window",
                source: at_v2_4_0!("SlidingTimeWindowMetrics.java:112-125"),
                breaker: r4j(Resilience4jConfig::time_based, |c| {
                    c.sliding_window_size = 10;
                    c.minimum_number_of_calls = 2;
                }),
                script: [testkit::calls(999, 1, 1, false), testkit::calls(10_000, 1, 1, false)].concat(),
                transitions: vec![],
                admits: "11",
            },
            Quirk {
                quirk: "TIME_BASED buckets are whole epoch seconds: failures 9.999 s apart (0, 9 999 ms) are",
                source: at_v2_4_0!("SlidingTimeWindowMetrics.java:112-125"),
                breaker: r4j(Resilience4jConfig::time_based, |c| {
                    c.sliding_window_size = 10;
                    c.minimum_number_of_calls = 2;
                }),
                script: [testkit::calls(0, 1, 1, false), testkit::calls(9_999, 1, 1, false)].concat(),
                transitions: vec![(9_999, C, O, "failure_rate")],
                admits: "11",
            },
            Quirk {
                quirk: "a call is slow when strictly longer than the threshold (1 s): 4 calls of 1 000 ms are not slow (4 of 4 would open), 4 more of 1 001 ms make 4 of 8 (50 %) and open",
                source: at_v2_4_0!("CircuitBreakerMetrics.java:111,156"),
                breaker: small(|c| {
                    c.slow_call_rate_threshold = 50.0;
                    c.slow_call_duration_threshold = Dur::from_secs(1);
                }),
                script: (0..8).flat_map(|t| [(t, A), (t, S(if t < 4 { 1_000 } else { 1_001 }))]).collect(),
                transitions: vec![(7, C, O, "slow_call_rate")],
                admits: "11111111",
            },
            Quirk {
                quirk: "no generation check: a failure admitted while closed that ends in half-open is a probe result",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:215,1144-1147"),
                breaker: small(|c| c.minimum_number_of_calls = 1),
                script: vec![
                    (0, A),
                    (1, A),
                    (1, Done(1, false, 1)),
                    (10_002, A),
                    (10_003, Done(0, false, 10_003)),
                ],
                transitions: vec![
                    (1, C, O, "failure_rate"),
                    (10_002, O, H, "cooldown_elapsed"),
                    (10_003, H, O, "probe_failure_rate"),
                ],
                admits: "111",
            },
            Quirk {
                quirk: "a result while open is recorded in the closed window and changes nothing",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:757-773"),
                breaker: small(|c| c.minimum_number_of_calls = 1),
                script: vec![(0, A), (0, A), (0, F(1)), (5_000, S(1)), (10_000, A), (10_001, A)],
                transitions: vec![(0, C, O, "failure_rate"), (10_001, O, H, "cooldown_elapsed")],
                admits: "1101",
            },
            Quirk {
                quirk: "an ignored result releases a permission in the current state: a late one in half-open hands out one more probe",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:206-210,1138-1141"),
                breaker: small(|c| {
                    c.minimum_number_of_calls = 1;
                    c.permitted_number_of_calls_in_half_open_state = 1;
                }),
                script: vec![
                    (0, A),
                    (1, A),
                    (1, Done(1, false, 1)),
                    (10_002, A),
                    (10_002, A),
                    (10_003, I),
                    (10_004, A),
                ],
                transitions: vec![(1, C, O, "failure_rate"), (10_002, O, H, "cooldown_elapsed")],
                admits: "11101",
            },
            Quirk {
                quirk: "the wait grows on half-open -> open only: 10 s, then 20 s (multiplier 2), back to 10 s after closing",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:346,637-639,680-681"),
                breaker: small(|c| {
                    c.minimum_number_of_calls = 1;
                    c.permitted_number_of_calls_in_half_open_state = 1;
                    c.exponential_backoff_multiplier = 2.0;
                }),
                script: [
                    testkit::calls(0, 1, 1, false),
                    testkit::calls(10_001, 1, 1, false),
                    vec![(30_001, A)],
                    testkit::calls(30_002, 1, 1, true),
                    testkit::calls(30_003, 1, 1, false),
                    vec![(40_003, A), (40_004, A)],
                ]
                .concat(),
                transitions: vec![
                    (0, C, O, "failure_rate"),
                    (10_001, O, H, "cooldown_elapsed"),
                    (10_001, H, O, "probe_failure_rate"),
                    (30_002, O, H, "cooldown_elapsed"),
                    (30_002, H, C, "probe_failure_rate_below"),
                    (30_003, C, O, "failure_rate"),
                    (40_004, O, H, "cooldown_elapsed"),
                ],
                admits: "1101101",
            },
            Quirk {
                quirk: "automatic transition: a timer half-opens exactly at the end of the wait, without a call",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:705-708"),
                breaker: small(|c| {
                    c.minimum_number_of_calls = 1;
                    c.automatic_transition_from_open_to_half_open_enabled = true;
                }),
                script: [testkit::calls(0, 1, 1, false), vec![(10_000, Tick)]].concat(),
                transitions: vec![(0, C, O, "failure_rate"), (10_000, O, H, "cooldown_elapsed")],
                admits: "1",
            },
            Quirk {
                quirk: "maxWaitDurationInHalfOpenState: a timer reopens half-open after it",
                source: at_v2_4_0!("CircuitBreakerStateMachine.java:1080-1085"),
                breaker: small(|c| {
                    c.minimum_number_of_calls = 1;
                    c.max_wait_duration_in_half_open_state = Dur::from_secs(5);
                }),
                script: [testkit::calls(0, 1, 1, false), vec![(10_001, A), (15_001, Tick)]].concat(),
                transitions: vec![
                    (0, C, O, "failure_rate"),
                    (10_001, O, H, "cooldown_elapsed"),
                    (15_001, H, O, "half_open_timeout"),
                ],
                admits: "11",
            },
        ]);
    }

    fn small(f: impl FnOnce(&mut Resilience4jConfig)) -> Resilience4jBreaker {
        let mut c = Resilience4jConfig::count_based();
        c.sliding_window_size = 10;
        c.minimum_number_of_calls = 4;
        c.permitted_number_of_calls_in_half_open_state = 3;
        c.wait_duration_in_open_state = Dur::from_secs(10);
        f(&mut c);
        c.validate().unwrap();
        Resilience4jBreaker::new(c)
    }

    fn calls(pattern: &str, t0: u64, step: u64) -> Vec<(u64, Ev)> {
        let mut v = Vec::new();
        for (i, ch) in pattern.chars().enumerate() {
            let t = t0 + step * i as u64;
            v.push((t, A));
            v.push((t, if ch == 'f' { F(10) } else { S(10) }));
        }
        v
    }

    #[test]
    fn exactly_the_threshold_opens_once_minimum_calls_are_in() {
        // 3 results: below the minimum of 4 even at 100 % failures.
        let mut b = small(|_| {});
        let r = drive(&mut b, &calls("fff", 0, 100));
        assert!(r.tr.is_empty());
        // 2 failures of 4 = 50 % >= 50 %: opens at the 4th result.
        let mut b = small(|_| {});
        let r = drive(&mut b, &calls("sfsf", 0, 100));
        assert_eq!(r.tr, vec![(300, C, O, "failure_rate")]);
    }

    #[test]
    fn count_based_clamps_the_minimum_to_the_window_time_based_does_not() {
        let mut b = small(|c| {
            c.sliding_window_size = 2;
            c.minimum_number_of_calls = 100;
        });
        let r = drive(&mut b, &calls("sf", 0, 100));
        assert_eq!(r.tr, vec![(100, C, O, "failure_rate")]);
        let mut b = small(|c| {
            c.sliding_window_type = SlidingWindowType::TimeBased;
            c.sliding_window_size = 2;
            c.minimum_number_of_calls = 3;
        });
        // Epoch-aligned seconds: at 2000 ms the bucket [0 s, 1 s) has left the 2 s window, so
        // the failures at 0 and 500 no longer count; the third call alone is below the minimum.
        let r = drive(&mut b, &[(0, A), (0, F(1)), (500, A), (500, F(1)), (2_000, A), (2_000, F(1))]);
        assert!(r.tr.is_empty());
        let r = drive(&mut b, &[(2_100, A), (2_100, F(1))]);
        assert!(r.tr.is_empty(), "2 failures held, minimum 3");
        let r = drive(&mut b, &[(2_999, A), (2_999, S(1))]);
        assert_eq!(r.tr, vec![(2_999, C, O, "failure_rate")]);
    }

    #[test]
    fn slow_calls_count_strictly_above_the_duration() {
        let mut b = small(|c| {
            c.slow_call_duration_threshold = Dur::from_secs(1);
            c.slow_call_rate_threshold = 50.0;
        });
        let s = [(0, A), (0, S(1_000)), (1, A), (1, S(1_000)), (2, A), (2, S(1_001)), (3, A), (3, S(5))];
        assert!(drive(&mut b, &s).tr.is_empty(), "one slow of four is 25 %");
        // A slow failure is slow too: 2 of 5 = 40 %, failures 1 of 5.
        assert!(drive(&mut b, &[(4, A), (4, F(1_001))]).tr.is_empty());
        // 3 of 6 = 50 % >= 50 %.
        let r = drive(&mut b, &[(5, A), (5, S(2_000))]);
        assert_eq!(r.tr, vec![(5, C, O, "slow_call_rate")]);
    }

    #[test]
    fn open_is_passive_strictly_after_the_wait_and_half_open_decides_after_min_calls() {
        let mut b = small(|c| c.minimum_number_of_calls = 2);
        let mut s = calls("ff", 0, 0);
        s.push((10_000, A)); // exactly at the wait end: still open (isAfter is strict)
        s.push((10_001, A)); // half-open, probe 1
        s.push((10_001, A)); // probe 2
        s.push((10_001, A)); // probe 3
        s.push((10_001, A)); // rejected: 3 permitted
        s.push((10_002, S(5)));
        s.push((10_003, S(5))); // min(2, 3) = 2 results: 0 % < 50 % closes
        s.push((10_004, F(5))); // the third probe's failure lands in the fresh closed window
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "failure_rate"),
                (10_001, O, H, "cooldown_elapsed"),
                (10_003, H, C, "probe_failure_rate_below")
            ]
        );
        assert_eq!(&r.admit_string()[2..], "01110");
        assert_eq!(b.state(), State::Closed);
    }

    #[test]
    fn late_results_land_in_half_open_and_wait_grows_per_attempt() {
        let mut b = small(|c| {
            c.minimum_number_of_calls = 2;
            c.exponential_backoff_multiplier = 2.0;
            c.exponential_max_wait_duration_in_open_state = Dur::from_secs(30);
        });
        let s = [
            (0, A), // a call admitted while closed, still running
            (1, A),
            (1, Done(1, false, 1)),
            (1, A),
            (1, Done(2, false, 1)), // 2 of 2 failed: open, attempts 1, wait 10 s
            (10_002, A),            // half-open, probe
            (10_003, Done(0, false, 10_003)), // the late failure is a half-open result
            (10_004, Done(3, false, 2)), // 2 of 2 failed: reopen, attempts 2, wait 20 s
            (30_004, A),            // not strictly after
            (30_005, A),            // half-open
            (30_006, A),
            (30_007, Done(5, false, 2)),
            (30_007, Done(6, false, 1)), // attempts 3: 40 s capped at 30 s
            (60_007, A),
            (60_008, A),
        ];
        let r = drive(&mut b, &s);
        let at = |to| r.tr.iter().filter(|t| t.2 == to).map(|t| t.0).collect::<Vec<u64>>();
        assert_eq!(at(O), vec![1, 10_004, 30_007]);
        assert_eq!(at(H), vec![10_002, 30_005, 60_008]);
        assert_eq!(r.admit_string(), "111101101");
    }

    #[test]
    fn automatic_transition_and_half_open_timeout() {
        let mut b = small(|c| {
            c.minimum_number_of_calls = 1;
            c.automatic_transition_from_open_to_half_open_enabled = true;
            c.max_wait_duration_in_half_open_state = Dur::from_secs(5);
        });
        let r = drive(&mut b, &calls("f", 0, 0));
        assert_eq!(r.tr.len(), 1);
        assert_eq!(b.deadline(), Some(SimTime(10_000_000)));
        let r = drive(&mut b, &[(10_000, Tick)]);
        assert_eq!(r.tr, vec![(10_000, O, H, "cooldown_elapsed")]);
        assert_eq!(b.deadline(), Some(SimTime(15_000_000)));
        let r = drive(&mut b, &[(15_000, Tick)]);
        assert_eq!(r.tr, vec![(15_000, H, O, "half_open_timeout")]);
        assert_eq!(b.deadline(), Some(SimTime(25_000_000)));
    }

    #[test]
    fn ignored_late_result_hands_out_another_probe() {
        let mut b = small(|c| {
            c.minimum_number_of_calls = 10;
            c.permitted_number_of_calls_in_half_open_state = 1;
            c.sliding_window_size = 1;
        });
        let s = [
            (0, A),
            (1, A),
            (1, Done(1, false, 1)), // window of 1, minimum clamped to 1: opens
            (10_002, A),            // the one probe
            (10_002, A),            // rejected
            (10_003, I),            // call 0 ends ignored: releasePermission in half-open
            (10_004, A),            // a second probe
            (10_004, A),
        ];
        let r = drive(&mut b, &s);
        assert_eq!(r.admit_string(), "111010");
        assert_eq!(r.tr.len(), 2);
    }
}
