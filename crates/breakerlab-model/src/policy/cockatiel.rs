//! cockatiel's `CircuitBreakerPolicy` with its three breakers (presets `cockatiel-consecutive`,
//! `cockatiel-count`, `cockatiel-sampling`).
//!
//! Source: connor4312/cockatiel tag v3.2.1 (commit 32a70686ef3470f6c94c1325fbc7982d582b8432, the
//! newest release that runs on Node 20; the conformance suite runs it): src/CircuitBreakerPolicy.ts
//! (`execute`, `halfOpen`, `open`, `close`), src/breaker/ConsecutiveBreaker.ts, CountBreaker.ts,
//! SamplingBreaker.ts (`push`, `rotateWindow`, `resetWindows`), src/backoff/. cockatiel 4.0.0
//! (f475a69) adds `halfOpenSampling`, whose default (one call) behaves the same; its other
//! settings are not modelled. Where ../shared/PRESETS.md says half-open results from a stale
//! state object are ignored, the source disagrees and wins: `execute` captures the state when
//! the call starts and reports the result to the breaker with that state.
//!
//! Reproduced:
//! - a call admitted while Closed reports `breaker.success(Closed)` / `breaker.failure(Closed)`
//!   whenever it ends; a failure the breaker answers `true` to calls `open()`, which does
//!   nothing while Open but reopens a HalfOpen circuit (a late failure can end the probe's
//!   episode);
//! - `ConsecutiveBreaker(n)`: `++count >= n`; any success zeroes it; the count is not reset on
//!   opening, so one late failure while half-open reopens at once;
//! - `CountBreaker{threshold, size, minimumNumberOfCalls = size}`: a ring of the last `size`
//!   results; trips when `failures > threshold · total` once `total >= minimumNumberOfCalls`;
//!   a half-open success clears the ring first;
//! - `SamplingBreaker{threshold, duration, minimumRps}`: `max(5, ceil(duration / 1 s))` windows
//!   of `round(duration / count)` ms; a push starts a new window when the current one is at
//!   least that old, and only one window is recycled per push, so after an idle spell older
//!   windows keep their counts until overwritten; trips when `failures > threshold · total`
//!   and `total >= duration · minimumRps` (default `minimumRps = 5 / threshold`);
//! - Open → HalfOpen on the first call once `now − openedAt >= halfOpenAfter` (passive); that
//!   call is the test. Calls arriving during the test wait for it (`await state.test`, here
//!   [`Admission::Wait`], keyed by that test) and `execute` again once that test settled: they
//!   run if it closed the circuit, are rejected if it reopened it, and the first of them
//!   becomes the next test when a late closed-state failure reopened the circuit at least
//!   `halfOpenAfter` earlier;
//! - the test's success closes, its failure reopens;
//! - `halfOpenAfter` is a constant or an `ExponentialBackoff` (src/backoff/ExponentialBackoff.ts
//!   @ 294c090a2e14e54dcba83374e447e5eaa430ec5f, ExponentialBackoffGenerators.ts @
//!   74b3c7851fb6db4ff5973245760a6fd773cae652): opening from Closed takes the factory's first
//!   delay, reopening from HalfOpen advances the episode's backoff; the generators are
//!   reproduced (decorrelated jitter: `t = attempt + random`, `next = exponent^t ·
//!   tanh(sqrt(4t))`, delay `min(max(0, next − prev) / 1.4 · initialDelay, maxDelay)`), with
//!   `Math.random` replaced by the build seed's generator. Other backoff factories are not
//!   modelled.

use super::evidence::{Evidence, Item, Test, Unit};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, js_ms, num};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{
    PolicyError, at_least_one, family_config, impossible, invalid, longer_than_zero, require,
};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Which `IBreaker` the policy uses.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CockatielKind {
    /// `ConsecutiveBreaker`.
    Consecutive,
    /// `CountBreaker`.
    Count,
    /// `SamplingBreaker`.
    Sampling,
}

/// What `halfOpenAfter` is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CockatielBackoff {
    /// A number: `ConstantBackoff(half_open_after)`.
    Constant,
    /// `new ExponentialBackoff({ initialDelay, maxDelay, exponent, generator })`.
    Exponential,
}

/// `ExponentialBackoff`'s delay generator (src/backoff/ExponentialBackoffGenerators.ts).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CockatielGenerator {
    /// `decorrelatedJitterGenerator` (the default).
    Decorrelated,
    /// `noJitterGenerator`: `min(maxDelay, initialDelay * 2^attempt)`.
    NoJitter,
    /// `fullJitterGenerator`: `floor(random * noJitter)`.
    FullJitter,
    /// `halfJitterGenerator`: `floor((d + random * d) / 2)`.
    HalfJitter,
}

family_config! {
    /// The policy's options and its breaker's constructor arguments.
    CockatielConfig {
        breaker: CockatielKind, "consecutive | count | sampling", "which IBreaker the policy uses";
        half_open_after: Dur, "duration", "halfOpenAfter: open time before the next call tests";
        consecutive_threshold: u32, "calls",
            "ConsecutiveBreaker(threshold): opens at this many failures in a row (>=)";
        threshold: f64, "ratio",
            "count/sampling threshold in (0, 1): opens when failures > threshold * total";
        size: u32, "calls", "CountBreaker size: the last N results";
        minimum_number_of_calls: u32, "calls", "CountBreaker minimumNumberOfCalls (0 = size)";
        duration: Dur, "duration", "SamplingBreaker duration: max(5, ceil(duration / 1 s)) windows";
        minimum_rps: f64, "calls/s",
            "SamplingBreaker minimumRps: at least duration * minimumRps calls to open (0 = 5 / threshold)";
        half_open_backoff: CockatielBackoff, "constant | exponential",
            "halfOpenAfter: the constant half_open_after, or an ExponentialBackoff advanced on each reopen";
        initial_delay: Dur, "duration", "ExponentialBackoff initialDelay";
        max_delay: Dur, "duration", "ExponentialBackoff maxDelay";
        exponent: f64, "factor", "ExponentialBackoff exponent (decorrelated generator only)";
        generator: CockatielGenerator, "decorrelated | no_jitter | full_jitter | half_jitter",
            "ExponentialBackoff generator; its randomness comes from the build seed";
    }
}

impl CockatielConfig {
    /// `ConsecutiveBreaker(5)`, `halfOpenAfter` 10 s.
    pub fn consecutive() -> CockatielConfig {
        CockatielConfig {
            breaker: CockatielKind::Consecutive,
            half_open_after: Dur::from_secs(10),
            consecutive_threshold: 5,
            threshold: 0.2,
            size: 100,
            minimum_number_of_calls: 0,
            duration: Dur::from_secs(30),
            minimum_rps: 0.0,
            half_open_backoff: CockatielBackoff::Constant,
            initial_delay: Dur::from_millis(128),
            max_delay: Dur::from_secs(30),
            exponent: 2.0,
            generator: CockatielGenerator::Decorrelated,
        }
    }
    /// `CountBreaker({ threshold: 0.2, size: 100 })`.
    pub fn count() -> CockatielConfig {
        CockatielConfig { breaker: CockatielKind::Count, ..Self::consecutive() }
    }
    /// `SamplingBreaker({ threshold: 0.2, duration: 30 s })`.
    pub fn sampling() -> CockatielConfig {
        CockatielConfig { breaker: CockatielKind::Sampling, ..Self::consecutive() }
    }

    /// Sampling windows: `(count, window length in ms)`.
    pub fn sampling_windows(&self) -> (usize, u64) {
        let ms = self.duration.micros() as f64 / 1000.0;
        let count = ((ms / 1000.0).ceil() as usize).max(5);
        let size = (ms / count as f64).round() as u64;
        (count, size)
    }

    /// Minimum calls of the sampling breaker: `duration · minimumRpms` (a float).
    fn sampling_minimum(&self) -> f64 {
        let (count, size) = self.sampling_windows();
        let rpms =
            if self.minimum_rps > 0.0 { self.minimum_rps / 1000.0 } else { 5.0 / (self.threshold * 1000.0) };
        (size * count as u64) as f64 * rpms
    }
}

const COCKATIEL_SOURCE: &str = "connor4312/cockatiel tag v3.2.1 (32a70686ef3470f6c94c1325fbc7982d582b8432), src/CircuitBreakerPolicy.ts (execute, halfOpen, open, close), src/breaker/ConsecutiveBreaker.ts, CountBreaker.ts, SamplingBreaker.ts (push, rotateWindow, resetWindows), src/backoff/ExponentialBackoff.ts and ExponentialBackoffGenerators.ts";
const COCKATIEL_QUIRKS: &[&str] = &[
    "halfOpenAfter has no library default: 10 s as in the README; half_open_backoff = exponential reproduces ExponentialBackoff (128 ms, 30 s, exponent 2, decorrelated jitter from the build seed), advanced on each reopen and restarted on closing",
    "a call reports its result with the state it started in: a late failure of a closed-state call can reopen a half-open circuit",
    "ConsecutiveBreaker's count is not reset on opening (>= threshold); count and sampling use strictly greater than threshold * total",
    "CountBreaker needs minimumNumberOfCalls (default size) results; a half-open success clears its ring",
    "SamplingBreaker recycles one window per result: after an idle spell old windows keep their counts until overwritten",
    "SamplingBreaker's default minimumRps is 5 / threshold: with 0.2 over 30 s it needs 750 calls",
    "calls arriving during the half-open test wait for it: they run if it closed the circuit and are rejected if it reopened it (the wait is part of their latency)",
];

impl Family for CockatielConfig {
    type Breaker = CockatielBreaker;
    const NAME: &'static str = "cockatiel";
    const PRESETS: &'static [Preset<Self>] = &[
        Preset {
            name: "cockatiel-consecutive",
            library: "cockatiel 3.2.1",
            summary: "cockatiel ConsecutiveBreaker(5): opens at the 5th failure in a row; halfOpenAfter 10 s (README); one test call",
            source: COCKATIEL_SOURCE,
            quirks: COCKATIEL_QUIRKS,
            config: CockatielConfig::consecutive,
            classifier: Classifier::EVERY_ERROR,
        },
        Preset {
            name: "cockatiel-count",
            library: "cockatiel 3.2.1",
            summary: "cockatiel CountBreaker({threshold: 0.2, size: 100}): opens when failures > 20 % of the last 100 calls (100 needed); halfOpenAfter 10 s",
            source: COCKATIEL_SOURCE,
            quirks: COCKATIEL_QUIRKS,
            config: CockatielConfig::count,
            classifier: Classifier::EVERY_ERROR,
        },
        Preset {
            name: "cockatiel-sampling",
            library: "cockatiel 3.2.1",
            summary: "cockatiel SamplingBreaker({threshold: 0.2, duration: 30 s}): opens when failures > 20 % of >= 750 calls over 30 windows of 1 s; halfOpenAfter 10 s",
            source: COCKATIEL_SOURCE,
            quirks: COCKATIEL_QUIRKS,
            config: CockatielConfig::sampling,
            classifier: Classifier::EVERY_ERROR,
        },
    ];

    fn validate(&self) -> Result<(), PolicyError> {
        longer_than_zero("half_open_after", self.half_open_after)?;
        if self.half_open_backoff == CockatielBackoff::Exponential {
            longer_than_zero("max_delay", self.max_delay)?;
            if !(self.exponent.is_finite() && self.exponent > 1.0) {
                return Err(invalid("exponent", "a number greater than 1", &self.exponent.to_string()));
            }
        }
        match self.breaker {
            CockatielKind::Consecutive => {
                at_least_one("consecutive_threshold", self.consecutive_threshold)?;
            }
            CockatielKind::Count | CockatielKind::Sampling => {
                let t = self.threshold;
                require(
                    t.is_finite() && t > 0.0 && t < 1.0,
                    "threshold",
                    "a ratio strictly between 0 and 1",
                    t,
                )?;
            }
        }
        if self.breaker == CockatielKind::Count {
            if self.size == 0 {
                return Err(invalid("size", "a positive whole number", "0"));
            }
            if self.minimum_number_of_calls > self.size {
                return Err(impossible(format!(
                    "minimum_number_of_calls ({}) is larger than size ({})",
                    self.minimum_number_of_calls, self.size
                )));
            }
        }
        if self.breaker == CockatielKind::Sampling {
            if self.duration < Dur::from_millis(5) {
                return Err(invalid("duration", "at least 5ms", &self.duration.to_string()));
            }
            require(
                self.minimum_rps.is_finite() && self.minimum_rps >= 0.0,
                "minimum_rps",
                "a number of 0 or more",
                self.minimum_rps,
            )?;
        }
        Ok(())
    }

    fn build(&self, seed: u64) -> CockatielBreaker {
        CockatielBreaker::new(self.clone(), seed)
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Cockatiel).then(|| cockatiel(input.header, self))
    }
}

#[derive(Copy, Clone, Debug, Default)]
struct SampleWindow {
    started: Option<SimTime>,
    failures: u64,
    successes: u64,
}

/// The breaker's memory, by kind.
#[derive(Clone, Debug)]
enum Memory {
    Consecutive { count: u64 },
    Count { ring: Vec<Option<bool>>, at: usize, successes: u64, failures: u64 },
    Sampling { windows: Vec<SampleWindow>, current: usize, successes: u64, failures: u64 },
}

/// cockatiel's policy state machine.
#[derive(Clone, Debug)]
pub struct CockatielBreaker {
    cfg: CockatielConfig,
    phase: Phase,
    opened_at: SimTime,
    open_for: Dur,
    backoff: (u32, f64),
    rng: Rng,
    mem: Memory,
    window_ms: u64,
    minimum: f64,
    /// Generations of the test calls not yet settled (half-open callers wait for theirs).
    tests: Vec<u64>,
}

impl CockatielBreaker {
    /// A closed policy with a fresh breaker; `seed` drives the backoff generator's randomness.
    pub fn new(cfg: CockatielConfig, seed: u64) -> CockatielBreaker {
        let (count, window_ms) = cfg.sampling_windows();
        let mem = match cfg.breaker {
            CockatielKind::Consecutive => Memory::Consecutive { count: 0 },
            CockatielKind::Count => {
                Memory::Count { ring: vec![None; cfg.size.max(1) as usize], at: 0, successes: 0, failures: 0 }
            }
            CockatielKind::Sampling => Memory::Sampling {
                windows: vec![SampleWindow::default(); count],
                current: 0,
                successes: 0,
                failures: 0,
            },
        };
        let minimum = cfg.sampling_minimum();
        CockatielBreaker {
            cfg,
            phase: Phase::new(),
            opened_at: SimTime::ZERO,
            open_for: Dur::ZERO,
            backoff: (0, 0.0),
            rng: rng_from_u64(seed),
            mem,
            window_ms,
            minimum,
            tests: Vec::with_capacity(4),
        }
    }

    /// `IBreaker.success(state)`.
    fn success(&mut self, now: SimTime, half_open: bool) {
        let window_ms = self.window_ms;
        match &mut self.mem {
            Memory::Consecutive { count } => *count = 0,
            Memory::Count { ring, at, successes, failures } => {
                if half_open {
                    ring.iter_mut().for_each(|s| *s = None);
                    *successes = 0;
                    *failures = 0;
                }
                count_sample(ring, at, successes, failures, true);
            }
            Memory::Sampling { windows, current, successes, failures } => {
                if half_open {
                    windows.iter_mut().for_each(|w| *w = SampleWindow::default());
                    *successes = 0;
                    *failures = 0;
                }
                sampling_push(windows, current, successes, failures, now, window_ms, true);
            }
        }
    }

    /// `IBreaker.failure(state)`: true when the circuit should open.
    fn failure(&mut self, now: SimTime, closed: bool) -> bool {
        let (threshold, size_min, minimum, window_ms) =
            (self.cfg.threshold, self.cfg.minimum_number_of_calls, self.minimum, self.window_ms);
        let consecutive = u64::from(self.cfg.consecutive_threshold);
        let size = u64::from(self.cfg.size);
        match &mut self.mem {
            Memory::Consecutive { count } => {
                *count += 1;
                *count >= consecutive
            }
            Memory::Count { ring, at, successes, failures } => {
                count_sample(ring, at, successes, failures, false);
                if !closed {
                    return true;
                }
                let total = *successes + *failures;
                let min = if size_min == 0 { size } else { u64::from(size_min) };
                total >= min && (*failures as f64) > threshold * total as f64
            }
            Memory::Sampling { windows, current, successes, failures } => {
                sampling_push(windows, current, successes, failures, now, window_ms, false);
                if !closed {
                    return true;
                }
                let total = *successes + *failures;
                if (total as f64) < minimum {
                    return false;
                }
                (*failures as f64) > threshold * total as f64
            }
        }
    }

    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        if self.phase.state() != State::Open {
            // From Closed the factory starts afresh; from HalfOpen the episode's backoff advances.
            if self.phase.state() == State::Closed {
                self.backoff = (0, 0.0);
            }
            self.open_for = self.next_delay();
            self.phase.enter(now, State::Open, reason, self.evidence_for(now, out), out);
            self.opened_at = now;
        }
    }

    fn uniform(&mut self) -> f64 {
        unit(&mut self.rng)
    }

    /// The next `halfOpenAfter` duration (the generator's `[delay, state]`), in milliseconds
    /// turned into the first microsecond at which `now - openedAt < delay` is false.
    fn next_delay(&mut self) -> Dur {
        let c = self.cfg.clone();
        if c.half_open_backoff == CockatielBackoff::Constant {
            return c.half_open_after;
        }
        let (initial, max) = (c.initial_delay.micros() as f64 / 1000.0, c.max_delay.micros() as f64 / 1000.0);
        let (attempt, prev) = self.backoff;
        let no_jitter = (initial * 2f64.powi(attempt.min(1023) as i32)).min(max);
        let ms = match c.generator {
            CockatielGenerator::NoJitter => no_jitter,
            CockatielGenerator::FullJitter => (self.uniform() * no_jitter).floor(),
            CockatielGenerator::HalfJitter => ((no_jitter + self.uniform() * no_jitter) / 2.0).floor(),
            CockatielGenerator::Decorrelated => {
                const P_FACTOR: f64 = 4.0;
                const RP_SCALING: f64 = 1.0 / 1.4;
                let t = f64::from(attempt) + self.uniform();
                let next = c.exponent.powf(t) * (P_FACTOR * t).sqrt().tanh();
                let intrinsic = if next.is_finite() { (next - prev).max(0.0) } else { f64::INFINITY };
                self.backoff.1 = next;
                (intrinsic * RP_SCALING * initial).min(max)
            }
        };
        self.backoff.0 = attempt.saturating_add(1);
        Dur::from_micros((ms * 1000.0).ceil() as u64)
    }

    fn trip_reason(&self) -> &'static str {
        match self.cfg.breaker {
            CockatielKind::Consecutive => "consecutive_failures",
            CockatielKind::Count => "count_failure_rate",
            CockatielKind::Sampling => "failure_rate",
        }
    }
}

fn count_sample(
    ring: &mut [Option<bool>],
    at: &mut usize,
    successes: &mut u64,
    failures: &mut u64,
    ok: bool,
) {
    match ring[*at] {
        Some(true) => *successes -= 1,
        Some(false) => *failures -= 1,
        None => {}
    }
    ring[*at] = Some(ok);
    if ok {
        *successes += 1;
    } else {
        *failures += 1;
    }
    *at = (*at + 1) % ring.len();
}

fn sampling_push(
    windows: &mut [SampleWindow],
    current: &mut usize,
    successes: &mut u64,
    failures: &mut u64,
    now: SimTime,
    window_ms: u64,
    ok: bool,
) {
    let due = windows[*current].started.is_none_or(|s| now.since(s).micros() >= window_ms * 1000);
    if due {
        let next = (*current + 1) % windows.len();
        *failures -= windows[next].failures;
        *successes -= windows[next].successes;
        windows[next] = SampleWindow { started: Some(now), failures: 0, successes: 0 };
        *current = next;
    }
    let w = &mut windows[*current];
    if ok {
        w.successes += 1;
        *successes += 1;
    } else {
        w.failures += 1;
        *failures += 1;
    }
}

impl Breaker for CockatielBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        match self.phase.state() {
            State::Closed => Admission::Allow(self.phase.ticket(false)),
            State::Open if now.since(self.opened_at) >= self.open_for => {
                self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
                self.tests.push(self.phase.generation());
                Admission::Allow(self.phase.ticket(true))
            }
            State::HalfOpen => Admission::Wait,
            State::Open => Admission::Reject,
        }
    }

    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        if ticket.probe {
            self.tests.retain(|g| *g != ticket.generation);
        }
        match (obs.verdict, ticket.probe) {
            (Verdict::Ignored, true) => {
                // A non-handled error in the test "failed successfully": close().
                if self.phase.state() == State::HalfOpen {
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                }
            }
            (Verdict::Ignored, false) => {}
            (Verdict::Success, false) => self.success(now, false),
            (Verdict::Failure, false) => {
                if self.failure(now, true) {
                    let reason = if self.phase.state() == State::HalfOpen {
                        "probe_failed"
                    } else {
                        self.trip_reason()
                    };
                    self.open(now, reason, out);
                }
            }
            (Verdict::Success, true) => {
                self.success(now, true);
                if self.phase.state() == State::HalfOpen {
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                }
            }
            (Verdict::Failure, true) => {
                self.failure(now, false);
                self.open(now, "probe_failed", out);
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match (self.phase.state(), &self.mem) {
            (State::Closed, Memory::Consecutive { count }) => ev.count(
                "consecutive_failures",
                *count,
                Test::AtLeast,
                "consecutive_threshold",
                u64::from(c.consecutive_threshold),
            ),
            (State::Closed, Memory::Count { successes, failures, .. }) => {
                let total = successes + failures;
                let min = if c.minimum_number_of_calls == 0 { c.size } else { c.minimum_number_of_calls };
                ev.count(
                    "count_window_calls",
                    total,
                    Test::AtLeast,
                    "minimum_number_of_calls",
                    u64::from(min),
                );
                ev.rate("count_window_failure_rate", *failures, total, Test::Above, "threshold", c.threshold);
            }
            (State::Closed, Memory::Sampling { successes, failures, .. }) => {
                // The windows' running totals: not pruned by time, only rotated by results.
                let total = successes + failures;
                ev.push(Item {
                    name: "window_calls",
                    unit: Unit::Count,
                    value: total as f64,
                    test: Test::AtLeast,
                    param: "minimum_calls",
                    limit: self.minimum,
                });
                ev.rate("window_failure_rate", *failures, total, Test::Above, "threshold", c.threshold);
            }
            (State::Open, _) => {
                ev.open_for(now.since(self.opened_at), Test::AtLeast, "half_open_after", self.open_for)
            }
            (State::HalfOpen, _) => {
                ev.count("probes_admitted", self.tests.len() as u64, Test::Of, "probes", 1)
            }
        }
    }

    /// The test in flight (the current generation, set on entering half-open).
    fn wait_key(&self) -> u64 {
        self.phase.generation()
    }

    fn holds(&self, key: u64) -> bool {
        self.tests.contains(&key)
    }
}

/// The configuration in Cockatiel's syntax.
fn cockatiel(header: &[String], c: &CockatielConfig) -> Result<String> {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let (import, breaker) = match c.breaker {
        CockatielKind::Consecutive => {
            ("ConsecutiveBreaker", format!("new ConsecutiveBreaker({})", c.consecutive_threshold))
        }
        CockatielKind::Count => {
            let min = if c.minimum_number_of_calls == 0 { c.size } else { c.minimum_number_of_calls };
            (
                "CountBreaker",
                format!(
                    "new CountBreaker({{ threshold: {}, size: {}, minimumNumberOfCalls: {} }})",
                    num(c.threshold),
                    c.size,
                    min
                ),
            )
        }
        CockatielKind::Sampling => {
            let rps = if c.minimum_rps > 0.0 {
                format!(", minimumRps: {}", num(c.minimum_rps))
            } else {
                String::new()
            };
            (
                "SamplingBreaker",
                format!(
                    "new SamplingBreaker({{ threshold: {}, duration: {}{rps} }})",
                    num(c.threshold),
                    js_ms(c.duration, "duration")?
                ),
            )
        }
    };
    let (half_open_after, extra) = match c.half_open_backoff {
        CockatielBackoff::Constant => (js_ms(c.half_open_after, "halfOpenAfter")?, String::new()),
        CockatielBackoff::Exponential => {
            let generator = match c.generator {
                CockatielGenerator::Decorrelated => "decorrelatedJitterGenerator",
                CockatielGenerator::NoJitter => "noJitterGenerator",
                CockatielGenerator::FullJitter => "fullJitterGenerator",
                CockatielGenerator::HalfJitter => "halfJitterGenerator",
            };
            (
                format!(
                    "new ExponentialBackoff({{ initialDelay: {}, maxDelay: {}, exponent: {}, generator: {generator} }})",
                    js_ms(c.initial_delay, "initialDelay")?,
                    js_ms(c.max_delay, "maxDelay")?,
                    num(c.exponent)
                ),
                format!(", ExponentialBackoff, {generator}"),
            )
        }
    };
    let _ = writeln!(s, "import {{ circuitBreaker, handleAll, {import}{extra} }} from 'cockatiel';");
    let _ = writeln!(s);
    let _ = writeln!(s, "export const breaker = circuitBreaker(handleAll, {{");
    let _ = writeln!(s, "  halfOpenAfter: {half_open_after},");
    let _ = writeln!(s, "  breaker: {breaker},");
    let _ = writeln!(s, "}});");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev, Ev::*, H, O, drive};

    fn calls(pattern: &str, t0: u64, step: u64) -> Vec<(u64, Ev)> {
        let mut v = Vec::new();
        for (i, ch) in pattern.chars().enumerate() {
            let t = t0 + step * i as u64;
            v.push((t, A));
            v.push((t, if ch == 'f' { F(1) } else { S(1) }));
        }
        v
    }

    #[test]
    fn consecutive_opens_at_the_threshold_passive_test_call() {
        let mut b = CockatielBreaker::new(CockatielConfig::consecutive(), 0);
        let mut s = calls("ffff", 0, 1);
        s.extend(calls("sf", 4, 0)); // a success zeroes the count
        s.extend(calls("ffff", 5, 1)); // 5 in a row at 8
        s.push((10_007, A)); // 9 999 ms after: still open
        s.push((10_008, A)); // the test call
        s.push((10_008, A)); // waits for the test
        s.push((10_009, S(1)));
        s.push((10_009, A)); // offered again once the test closed it: runs
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (8, C, O, "consecutive_failures"),
                (10_008, O, H, "cooldown_elapsed"),
                (10_009, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[10..], "0101");
        assert_eq!(r.waits, vec![12]);
    }

    #[test]
    fn half_open_waiters_are_rejected_when_the_test_reopens() {
        let mut b = CockatielBreaker::new(
            CockatielConfig { consecutive_threshold: 1, ..CockatielConfig::consecutive() },
            0,
        );
        let s = [
            (0, A),
            (0, F(5)),      // opens at 0
            (10_000, A),    // the test
            (10_001, A),    // waits
            (10_400, F(1)), // the test fails: reopens at 10 400
            (10_400, A),    // the waiter, offered again: rejected
            (20_399, A),    // rejected: 9 999 ms after reopening
            (20_400, A),    // the next test
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (10_000, O, H, "cooldown_elapsed"),
                (10_400, H, O, "probe_failed"),
                (20_400, O, H, "cooldown_elapsed"),
            ]
        );
        assert_eq!(r.admit_string(), "110001");
        assert_eq!(r.waits, vec![2]);
    }

    #[test]
    fn a_late_closed_state_failure_reopens_half_open() {
        let mut b = CockatielBreaker::new(CockatielConfig::consecutive(), 0);
        let mut s = vec![(0, A)]; // admission 0: still running when the circuit opens
        for i in 0..5 {
            s.push((1, A));
            s.push((1, Done(1 + i, false, 1)));
        }
        s.push((10_001, A)); // admission 6: the test
        s.push((10_002, Done(0, false, 10_002))); // failure(Closed): count 6 >= 5, open() from half-open
        s.push((10_003, Done(6, true, 2))); // the test's success: close() needs half-open, ignored
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (1, C, O, "consecutive_failures"),
                (10_001, O, H, "cooldown_elapsed"),
                (10_002, H, O, "probe_failed")
            ]
        );
        assert_eq!(b.state(), State::Open);
    }

    #[test]
    fn count_breaker_strictly_above_with_minimum_calls() {
        let cfg = CockatielConfig { size: 4, threshold: 0.5, ..CockatielConfig::count() };
        let mut b = CockatielBreaker::new(cfg.clone(), 0);
        // 2 of 4 failed = 0.5, not > 0.5.
        assert!(drive(&mut b, &calls("fsfs", 0, 1)).tr.is_empty());
        // Ring now f s f s; next f overwrites the oldest f: still 2 of 4. Next f overwrites s: 3 of 4.
        assert!(drive(&mut b, &calls("f", 10, 1)).tr.is_empty());
        let r = drive(&mut b, &calls("f", 20, 1));
        assert_eq!(r.tr, vec![(20, C, O, "count_failure_rate")]);
        // Minimum 3 of a size-4 window: 2 failures in 2 calls decide nothing.
        let mut b = CockatielBreaker::new(CockatielConfig { minimum_number_of_calls: 3, ..cfg }, 0);
        assert!(drive(&mut b, &calls("ff", 0, 1)).tr.is_empty());
        assert_eq!(drive(&mut b, &calls("s", 2, 1)).tr, vec![], "a success never opens");
        assert_eq!(drive(&mut b, &calls("f", 3, 1)).tr, vec![(3, C, O, "count_failure_rate")]);
    }

    #[test]
    fn sampling_windows_minimum_and_stale_windows() {
        // 5 s, threshold 0.5, minimumRps 1: 5 windows of 1000 ms, at least 5 calls.
        let cfg = CockatielConfig {
            duration: Dur::from_secs(5),
            threshold: 0.5,
            minimum_rps: 1.0,
            ..CockatielConfig::sampling()
        };
        assert_eq!(cfg.sampling_windows(), (5, 1_000));
        let mut b = CockatielBreaker::new(cfg.clone(), 0);
        assert!(drive(&mut b, &calls("ffss", 0, 100)).tr.is_empty(), "4 calls < 5");
        let r = drive(&mut b, &calls("f", 400, 1));
        assert_eq!(r.tr, vec![(400, C, O, "failure_rate")], "3 of 5 > 0.5");
        // Idle 60 s: only one window is recycled per push, the others keep their counts.
        let mut b = CockatielBreaker::new(cfg, 0);
        drive(&mut b, &calls("fff", 0, 1_000)); // three windows, one failure each
        drive(&mut b, &calls("s", 60_000, 1)); // recycles one window only
        let r = drive(&mut b, &calls("f", 60_001, 1));
        assert_eq!(r.tr, vec![(60_001, C, O, "failure_rate")], "3 stale failures + 1 of 5 calls");
    }

    #[test]
    fn exponential_half_open_after_advances_per_reopen_and_restarts_after_closing() {
        let cfg = CockatielConfig {
            consecutive_threshold: 1,
            half_open_backoff: CockatielBackoff::Exponential,
            generator: CockatielGenerator::NoJitter,
            ..CockatielConfig::consecutive()
        };
        let mut b = CockatielBreaker::new(cfg, 0);
        let s = [
            (0, A),
            (0, F(1)),   // open for 128 ms
            (127, A),    // rejected
            (128, A),    // the test
            (130, F(1)), // reopen for 256 ms
            (385, A),
            (386, A),
            (387, S(1)), // closes
            (400, A),
            (400, F(1)), // from closed: 128 ms again
            (527, A),
            (528, A),
        ];
        let r = drive(&mut b, &s);
        let opens: Vec<u64> = r.tr.iter().filter(|t| t.2 == H).map(|t| t.0).collect();
        assert_eq!(opens, vec![128, 386, 528]);
        assert_eq!(r.admit_string(), "10101101");
    }

    #[test]
    fn decorrelated_jitter_is_seeded_and_bounded() {
        let cfg = CockatielConfig {
            consecutive_threshold: 1,
            half_open_backoff: CockatielBackoff::Exponential,
            ..CockatielConfig::consecutive()
        };
        let first = |seed| {
            let mut b = CockatielBreaker::new(cfg.clone(), seed);
            drive(&mut b, &[(0, A), (0, F(1))]);
            b.open_for
        };
        assert_eq!(first(1), first(1));
        assert_ne!(first(1), first(2));
        // t in [0, 1): 2^t tanh(sqrt(4t)) / 1.4 * 128 ms is below 2 tanh(2) / 1.4 * 128 = 176.4 ms.
        for seed in 0..50 {
            assert!(first(seed) <= Dur::from_micros(176_400), "{}", first(seed));
        }
    }
}
