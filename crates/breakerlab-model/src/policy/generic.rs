//! The composable breaker family: every building block of a breaker (docs/presets.md) is a parameter, so
//! one state machine covers consecutive-count, windowed-rate, slow-call and percentile breakers,
//! and a sweep can vary any block.
//!
//! Trip rules are any-of: each is optional (off at 0) and the breaker opens when any enabled
//! rule fires, checked on every result recorded while closed, in this order (the first that
//! fires names the transition): consecutive failures; failures within a sliding time window;
//! failure rate over the last N calls; over a time window (exact or epoch-aligned buckets):
//! failure rate, slow-call rate, latency percentile. Windows hold a sample while it is younger
//! than the window (a sample exactly `window` old is out). Rate and percentile rules wait for
//! `min_calls` calls in their window (the count window clamps it to its size).
//!
//! Half-open admits `probes` calls (0 = unlimited) per episode; an ignored probe gives its slot
//! back. It closes after `close_successes` consecutive successes (`close_rule = "successes"`,
//! any failure reopens) or, with `close_rule = "failure_rate"`, once `probes` results are in,
//! when their failure rate is below `probe_failure_rate` (else it reopens). `max_half_open`
//! reopens a half-open state that lasted too long (a timer).
//!
//! Open lasts `open_duration`, multiplied by `backoff_multiplier` on each consecutive reopen
//! (half-open → open) up to `max_open_duration`, then scaled by a factor drawn uniformly from
//! `[1 − jitter, 1 + jitter]` with the build seed (`rand_pcg::Pcg64Mcg`). Open → half-open is
//! passive (on the next admit) or active (a timer via `deadline()`/`on_deadline()`).
//!
//! Every state change starts a new generation. With `late_results = "drop"`, results whose
//! ticket is from an earlier generation are ignored (gobreaker, cockatiel); with `"count"` they
//! are recorded in the current state (Resilience4j, seeds). Results recorded while open update
//! the closed-state windows (when counted) but never trip or extend the open state.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{
    PolicyError, at_least_one, family_config, impossible, invalid, longer_than_zero, not_shorter, require,
};
use super::resilience4j::{Resilience4jConfig, SlidingWindowType, spring_yaml};
use super::window::{
    BucketWindow, CountWindow, Edge, ExactWindow, FailureTimes, LeastCount, Sample, Tally, Window,
};
use super::window::{nearest_rank_index, percentile_exceeds};
use crate::outcome::{Classifier, Verdict};
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How a measured value is compared with its threshold.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Comparison {
    /// Trips at the threshold (Resilience4j, failsafe-go, the seeds).
    #[serde(rename = ">=")]
    AtLeast,
    /// Trips only above it (opossum, cockatiel, gobreaker's default).
    #[serde(rename = ">")]
    Above,
}

impl Comparison {
    #[inline]
    fn int(self, value: u64, threshold: u64) -> bool {
        match self {
            Comparison::AtLeast => value >= threshold,
            Comparison::Above => value > threshold,
        }
    }
    #[inline]
    fn rate(self, num: u64, den: u64, threshold: f64) -> bool {
        let r = num as f64 / den as f64;
        match self {
            Comparison::AtLeast => r >= threshold,
            Comparison::Above => r > threshold,
        }
    }
    #[inline]
    fn dur(self, value: Dur, threshold: Dur) -> bool {
        self.int(value.micros(), threshold.micros())
    }
    /// The same comparison as an evidence test.
    fn test(self) -> Test {
        match self {
            Comparison::AtLeast => Test::AtLeast,
            Comparison::Above => Test::Above,
        }
    }
}

/// When open becomes half-open.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HalfOpenTransition {
    /// On the first admit after the open duration (the transition is at that admit).
    Passive,
    /// By a timer at the end of the open duration.
    Active,
}

/// What closes the half-open state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseRule {
    /// `close_successes` consecutive successes; any failure reopens.
    Successes,
    /// Once `probes` results are in: close when their failure rate is below `probe_failure_rate`.
    FailureRate,
}

/// What happens to results of calls admitted in an earlier generation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LateResults {
    /// Recorded in the current state.
    Count,
    /// Ignored.
    Drop,
}

family_config! {
    /// Parameters of the composable family (see the module docs for the semantics).
    GenericConfig {
        failure_threshold: u32, "calls", "consecutive failures that trip (0 = off)";
        window_failures: u32, "calls", "failures within failure_window that trip (0 = off)";
        failure_window: Dur, "duration", "sliding window of the window_failures rule";
        count_window: u32, "calls", "count window: the last N calls (0 = off)";
        count_failure_rate: f64, "ratio", "failure rate over the count window that trips";
        time_window: Dur, "duration",
            "time window of the failure_rate, slow_call_rate and latency rules (0 = off)";
        buckets: u32, "count", "epoch-aligned buckets of the time window; 0 = exact samples";
        failure_rate: f64, "ratio", "failure rate over the time window that trips (0 = off)";
        slow_call_rate: f64, "ratio", "slow-call rate over the time window that trips (0 = off)";
        slow_call_duration: Dur, "duration", "a call slower than this (strictly) is slow, success or failure";
        latency_percentile: f64, "ratio", "percentile of the latency rule, nearest rank, in (0, 1]";
        latency_threshold: Dur, "duration",
            "trips when the time window's latency percentile reaches this (0 = off)";
        min_calls: u32, "calls",
            "calls a window must hold before a rate or percentile rule decides (the count window clamps it to its size)";
        comparison: Comparison, "\">=\" | \">\"",
            "how every trip rule (and the half-open failure rate) compares with its threshold";
        open_duration: Dur, "duration", "time open before half-open";
        backoff_multiplier: f64, "factor",
            "open duration multiplied by this on each consecutive reopen; 1 = fixed";
        max_open_duration: Dur, "duration", "cap of the grown open duration (0 = no cap)";
        jitter: f64, "ratio", "open duration scaled by a uniform factor in [1 - jitter, 1 + jitter] (seeded)";
        half_open_transition: HalfOpenTransition, "passive | active",
            "passive: on the next admit; active: a timer at the end of the open duration";
        probes: u32, "calls", "calls admitted per half-open episode (0 = unlimited)";
        close_rule: CloseRule, "successes | failure_rate", "what closes half-open";
        close_successes: u32, "calls", "consecutive successes that close (close_rule = successes)";
        probe_failure_rate: f64, "ratio",
            "probe failure rate that reopens, once `probes` results are in (close_rule = failure_rate)";
        max_half_open: Dur, "duration", "longest stay in half-open before reopening (0 = no limit)";
        clear_on_close: bool, "bool", "forget the windows and counters on closing";
        late_results: LateResults, "count | drop",
            "results of calls admitted in an earlier generation: count them or drop them";
    }
}

impl GenericConfig {
    /// The `consecutive` preset: 5 consecutive failures; open 30 s; 1 probe; 1 success closes.
    pub fn consecutive() -> GenericConfig {
        GenericConfig {
            failure_threshold: 5,
            window_failures: 0,
            failure_window: Dur::from_secs(60),
            count_window: 0,
            count_failure_rate: 0.5,
            time_window: Dur::ZERO,
            buckets: 0,
            failure_rate: 0.0,
            slow_call_rate: 0.0,
            slow_call_duration: Dur::from_secs(60),
            latency_percentile: 0.95,
            latency_threshold: Dur::ZERO,
            min_calls: 10,
            comparison: Comparison::AtLeast,
            open_duration: Dur::from_secs(30),
            backoff_multiplier: 1.0,
            max_open_duration: Dur::ZERO,
            jitter: 0.0,
            half_open_transition: HalfOpenTransition::Passive,
            probes: 1,
            close_rule: CloseRule::Successes,
            close_successes: 1,
            probe_failure_rate: 0.5,
            max_half_open: Dur::ZERO,
            clear_on_close: true,
            late_results: LateResults::Count,
        }
    }

    /// The `windowed` preset: failure rate >= 0.5 over an exact 60 s window with at least 10
    /// calls; open 30 s; 1 probe; 1 success closes.
    pub fn windowed() -> GenericConfig {
        GenericConfig {
            failure_threshold: 0,
            time_window: Dur::from_secs(60),
            failure_rate: 0.5,
            ..GenericConfig::consecutive()
        }
    }

    pub fn time_rules(&self) -> bool {
        self.failure_rate > 0.0 || self.slow_call_rate > 0.0 || !self.latency_threshold.is_zero()
    }
}

fn ratio(name: &str, v: f64) -> Result<(), PolicyError> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(invalid(name, "a ratio between 0 and 1", &v.to_string()))
    }
}

impl Family for GenericConfig {
    type Breaker = GenericBreaker;
    const NAME: &'static str = "generic";
    const PRESETS: &'static [Preset<Self>] = &[
        Preset {
            name: "consecutive",
            library: "",
            summary: "opens after 5 consecutive failures; open 30 s; one probe; one success closes",
            source: "breakerlab generic family (src/policy/generic.rs); the classic consecutive-count breaker (pybreaker, cockatiel ConsecutiveBreaker)",
            quirks: &[],
            config: GenericConfig::consecutive,
            classifier: Classifier::DEFAULT,
        },
        Preset {
            name: "windowed",
            library: "",
            summary: "opens when failures are >= 50 % of at least 10 calls in the last 60 s; open 30 s; one probe",
            source: "breakerlab generic family (src/policy/generic.rs), exact time window",
            quirks: &[],
            config: GenericConfig::windowed,
            classifier: Classifier::DEFAULT,
        },
    ];

    fn validate(&self) -> Result<(), PolicyError> {
        ratio("count_failure_rate", self.count_failure_rate)?;
        ratio("failure_rate", self.failure_rate)?;
        ratio("slow_call_rate", self.slow_call_rate)?;
        ratio("jitter", self.jitter)?;
        ratio("probe_failure_rate", self.probe_failure_rate)?;
        if !(self.latency_percentile.is_finite()
            && self.latency_percentile > 0.0
            && self.latency_percentile <= 1.0)
        {
            return Err(invalid(
                "latency_percentile",
                "a quantile greater than 0 and at most 1 (0.95 for p95)",
                &self.latency_percentile.to_string(),
            ));
        }
        longer_than_zero("open_duration", self.open_duration)?;
        require(
            self.backoff_multiplier.is_finite() && self.backoff_multiplier >= 1.0,
            "backoff_multiplier",
            "a number of at least 1",
            self.backoff_multiplier,
        )?;
        if !self.max_open_duration.is_zero() {
            not_shorter("max_open_duration", self.max_open_duration, "open_duration", self.open_duration)?;
        }
        if self.window_failures > 0 && self.failure_window.is_zero() {
            return Err(impossible("window_failures needs failure_window greater than 0".into()));
        }
        if self.time_rules() && self.time_window.is_zero() {
            return Err(impossible(
                "failure_rate, slow_call_rate or latency_threshold is set but time_window is 0".into(),
            ));
        }
        if self.buckets > 0 && !self.time_window.is_zero() {
            let w = self.time_window.micros();
            if w < u64::from(self.buckets) {
                return Err(impossible(format!(
                    "time_window ({}) is smaller than one bucket of {} buckets",
                    self.time_window, self.buckets
                )));
            }
            if !w.is_multiple_of(u64::from(self.buckets)) {
                return Err(impossible(format!(
                    "time_window ({}) is not a whole number of microseconds per bucket with {} buckets",
                    self.time_window, self.buckets
                )));
            }
        }
        let any_rule = self.failure_threshold > 0
            || self.window_failures > 0
            || self.count_window > 0
            || (self.time_rules() && !self.time_window.is_zero());
        if !any_rule {
            return Err(impossible(
                "no trip rule is enabled (set failure_threshold, window_failures, count_window, or a time-window rule)"
                    .into(),
            ));
        }
        match self.close_rule {
            CloseRule::Successes => {
                at_least_one("close_successes", self.close_successes)?;
                if self.probes > 0 && self.close_successes > self.probes {
                    return Err(impossible(format!(
                        "close_successes ({}) exceeds probes ({}): half-open could never close",
                        self.close_successes, self.probes
                    )));
                }
            }
            CloseRule::FailureRate => {
                if self.probes == 0 {
                    return Err(impossible(
                        "close_rule = \"failure_rate\" decides after `probes` results: probes must be at least 1".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    fn build(&self, seed: u64) -> GenericBreaker {
        GenericBreaker::new(self.clone(), seed)
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Resilience4j)
            .then(|| as_resilience4j(self).map(|c| spring_yaml(input.header, input.name, &c)))
    }

    fn refusal(lib: Library) -> String {
        format!(
            "the generic family does not map exactly onto {} (trip timing, window alignment or late-result handling differ); start from the `{}` preset instead",
            lib.name(),
            lib.default_preset()
        )
    }
}

/// The generic state machine.
#[derive(Clone, Debug)]
pub struct GenericBreaker {
    cfg: GenericConfig,
    phase: Phase,
    consecutive: u64,
    failure_times: FailureTimes,
    count: Option<CountWindow>,
    /// The time window of the rate and percentile rules, exact or bucketed.
    time: Option<Window>,
    opened_at: SimTime,
    open_until: SimTime,
    reopens: u32,
    half_open_since: SimTime,
    probes_admitted: u32,
    probe_results: u32,
    probe_failures: u32,
    probe_successes: u32,
    /// True when consecutive failures are the only trip rule (no window kept): a result then
    /// only moves the counter. Fixed at construction, for speed alone.
    consecutive_only: bool,
    /// The counts that trip the count window's rate rule and the time window's failure-rate,
    /// slow-call-rate and percentile rules, for the windows' sizes (for speed alone).
    count_cut: LeastCount,
    failure_cut: LeastCount,
    slow_cut: LeastCount,
    over_cut: LeastCount,
    rng: Rng,
}

impl GenericBreaker {
    /// A closed breaker; `seed` drives the open-duration jitter (nothing else is random).
    pub fn new(cfg: GenericConfig, seed: u64) -> GenericBreaker {
        let count = (cfg.count_window > 0).then(|| CountWindow::new(cfg.count_window));
        let time = (cfg.time_rules() && !cfg.time_window.is_zero()).then(|| {
            if cfg.buckets == 0 {
                Window::Exact(ExactWindow::new(cfg.time_window, Edge::DropExact))
            } else {
                Window::Buckets(BucketWindow::new(cfg.time_window, cfg.buckets))
            }
        });
        let consecutive_only = cfg.window_failures == 0 && count.is_none() && time.is_none();
        GenericBreaker {
            consecutive_only,
            cfg,
            phase: Phase::new(),
            consecutive: 0,
            failure_times: FailureTimes::default(),
            count,
            time,
            opened_at: SimTime::ZERO,
            open_until: SimTime::ZERO,
            reopens: 0,
            half_open_since: SimTime::ZERO,
            probes_admitted: 0,
            probe_results: 0,
            probe_failures: 0,
            probe_successes: 0,
            count_cut: LeastCount::default(),
            failure_cut: LeastCount::default(),
            slow_cut: LeastCount::default(),
            over_cut: LeastCount::default(),
            rng: rng_from_u64(seed),
        }
    }

    /// Entries the window buffers hold without growing (memory stays flat once warmed up).
    pub fn buffer_capacity(&self) -> usize {
        self.failure_times.capacity()
            + self.count.as_ref().map_or(0, CountWindow::capacity)
            + self.time.as_ref().map_or(0, Window::capacity)
    }

    /// The length of the next open period: grown by the reopen count, capped, jittered.
    fn open_length(&mut self) -> Dur {
        let c = &self.cfg;
        let mut d = c.open_duration;
        if c.backoff_multiplier > 1.0 && self.reopens > 0 {
            d = d.mul_f64(c.backoff_multiplier.powi(self.reopens.min(1024) as i32));
        }
        if !c.max_open_duration.is_zero() && d > c.max_open_duration {
            d = c.max_open_duration;
        }
        if c.jitter > 0.0 {
            let u = unit(&mut self.rng);
            d = d.mul_f64(1.0 - c.jitter + 2.0 * c.jitter * u);
        }
        d
    }

    #[cold]
    fn open(&mut self, at: SimTime, reason: &'static str, out: &mut Transitions) {
        let ev = self.evidence_for(at, out);
        if self.phase.state() == State::HalfOpen {
            self.reopens = self.reopens.saturating_add(1);
        } else {
            self.reopens = 0;
        }
        self.phase.enter(at, State::Open, reason, ev, out);
        let len = self.open_length();
        self.opened_at = at;
        self.open_until = at + len;
    }

    fn half_open(&mut self, at: SimTime, out: &mut Transitions) {
        let ev = self.evidence_for(at, out);
        self.phase.enter(at, State::HalfOpen, "cooldown_elapsed", ev, out);
        self.half_open_since = at;
        self.probes_admitted = 0;
        self.probe_results = 0;
        self.probe_failures = 0;
        self.probe_successes = 0;
    }

    fn close(&mut self, at: SimTime, reason: &'static str, out: &mut Transitions) {
        let ev = self.evidence_for(at, out);
        self.phase.enter(at, State::Closed, reason, ev, out);
        self.reopens = 0;
        self.consecutive = 0;
        if self.cfg.clear_on_close {
            self.failure_times.clear();
            if let Some(c) = &mut self.count {
                c.clear();
            }
            if let Some(w) = &mut self.time {
                w.clear();
            }
        }
    }

    /// Applies the timer-driven transitions due by `now`, each at its own instant (none in
    /// closed, the state most calls find).
    #[inline]
    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        if self.phase.state() != State::Closed {
            self.poll_timers(now, out);
        }
    }

    /// [`GenericBreaker::poll`] outside closed.
    fn poll_timers(&mut self, now: SimTime, out: &mut Transitions) {
        loop {
            match self.phase.state() {
                State::Open
                    if self.cfg.half_open_transition == HalfOpenTransition::Active
                        && now >= self.open_until =>
                {
                    let at = self.open_until;
                    self.half_open(at, out);
                }
                State::HalfOpen
                    if !self.cfg.max_half_open.is_zero()
                        && now >= self.half_open_since + self.cfg.max_half_open =>
                {
                    let at = self.half_open_since + self.cfg.max_half_open;
                    self.open(at, "half_open_timeout", out);
                }
                _ => return,
            }
        }
    }

    /// Adds one counted result to the closed-state windows.
    #[inline(always)]
    fn observe(&mut self, now: SimTime, failed: bool, latency: Dur) {
        let c = &self.cfg;
        if failed {
            self.consecutive += 1;
        } else {
            self.consecutive = 0;
        }
        if self.consecutive_only {
            return;
        }
        let sample = Sample {
            at: now,
            failed,
            slow: latency > c.slow_call_duration,
            over: !c.latency_threshold.is_zero() && c.comparison.dur(latency, c.latency_threshold),
        };
        if c.window_failures > 0 {
            if failed {
                self.failure_times.push(now);
            }
            self.failure_times.prune(now, c.failure_window, Edge::DropExact);
        }
        if let Some(w) = &mut self.count {
            w.push(sample);
        }
        if let Some(w) = &mut self.time {
            w.push(sample);
        }
    }

    /// The first enabled trip rule that fires at `now`, if any.
    #[inline(always)]
    fn tripped(&mut self, now: SimTime) -> Option<&'static str> {
        let c = &self.cfg;
        let cmp = c.comparison;
        if c.failure_threshold > 0 && cmp.int(self.consecutive, u64::from(c.failure_threshold)) {
            return Some("consecutive_failures");
        }
        if self.consecutive_only {
            return None;
        }
        if c.window_failures > 0 && cmp.int(self.failure_times.len() as u64, u64::from(c.window_failures)) {
            return Some("failures_in_window");
        }
        if let Some(w) = &self.count {
            let t = w.tally();
            let min = u64::from(c.min_calls.min(c.count_window).max(1));
            let rate = c.count_failure_rate;
            if t.calls >= min && self.count_cut.holds(t.failures, t.calls, |f, n| cmp.rate(f, n, rate)) {
                return Some("count_failure_rate");
            }
        }
        let t: Tally = match &self.time {
            Some(w) => w.tally(now),
            None => return None,
        };
        if t.calls == 0 || t.calls < u64::from(c.min_calls) {
            return None;
        }
        let (failure_rate, slow_rate, q) = (c.failure_rate, c.slow_call_rate, c.latency_percentile);
        if failure_rate > 0.0
            && self.failure_cut.holds(t.failures, t.calls, |f, n| cmp.rate(f, n, failure_rate))
        {
            return Some("failure_rate");
        }
        if slow_rate > 0.0 && self.slow_cut.holds(t.slow, t.calls, |s, n| cmp.rate(s, n, slow_rate)) {
            return Some("slow_call_rate");
        }
        if !c.latency_threshold.is_zero()
            && self.over_cut.holds(t.over, t.calls, |o, n| percentile_exceeds(n, o, nearest_rank_index(q, n)))
        {
            return Some("latency_percentile");
        }
        None
    }

    /// What each enabled trip rule has counted against its threshold.
    fn closed_evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        let test = c.comparison.test();
        if c.failure_threshold > 0 {
            ev.count(
                "consecutive_failures",
                self.consecutive,
                test,
                "failure_threshold",
                u64::from(c.failure_threshold),
            );
        }
        if c.window_failures > 0 {
            let n = self.failure_times.len() as u64;
            ev.count("recent_failures", n, test, "window_failures", u64::from(c.window_failures));
        }
        if let Some(w) = &self.count {
            let t = w.tally();
            let min = u64::from(c.min_calls.min(c.count_window).max(1));
            let gate = if self.time.is_some() { "count_min_calls" } else { "min_calls" };
            ev.count("count_window_calls", t.calls, Test::AtLeast, gate, min);
            ev.rate(
                "count_window_failure_rate",
                t.failures,
                t.calls,
                test,
                "count_failure_rate",
                c.count_failure_rate,
            );
        }
        if let Some(w) = &self.time {
            let t = w.tally(now);
            ev.count("window_calls", t.calls, Test::AtLeast, "min_calls", u64::from(c.min_calls.max(1)));
            if c.failure_rate > 0.0 {
                ev.rate("window_failure_rate", t.failures, t.calls, test, "failure_rate", c.failure_rate);
            }
            if c.slow_call_rate > 0.0 {
                ev.rate("window_slow_rate", t.slow, t.calls, test, "slow_call_rate", c.slow_call_rate);
            }
            if !c.latency_threshold.is_zero() {
                let needed = t.calls - nearest_rank_index(c.latency_percentile, t.calls).min(t.calls);
                ev.count("calls_over_latency", t.over, Test::AtLeast, "percentile_calls", needed.max(1));
                ev.fact_time("latency_threshold", c.latency_threshold);
            }
        }
    }

    /// The probes admitted and what the close rule has counted.
    fn half_open_evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        let test = c.comparison.test();
        let admitted = u64::from(self.probes_admitted);
        if c.probes > 0 {
            ev.count("probes_admitted", admitted, Test::Of, "probes", u64::from(c.probes));
        } else {
            ev.fact_count("probes_admitted", admitted);
        }
        match c.close_rule {
            CloseRule::Successes => {
                ev.count(
                    "probe_successes",
                    u64::from(self.probe_successes),
                    Test::AtLeast,
                    "close_successes",
                    u64::from(c.close_successes),
                );
                ev.fact_count("probe_failures", u64::from(self.probe_failures));
            }
            CloseRule::FailureRate => {
                ev.count(
                    "probe_results",
                    u64::from(self.probe_results),
                    Test::AtLeast,
                    "probes",
                    u64::from(c.probes),
                );
                ev.rate(
                    "probes_failure_rate",
                    u64::from(self.probe_failures),
                    u64::from(self.probe_results),
                    test,
                    "probe_failure_rate",
                    c.probe_failure_rate,
                );
            }
        }
        if !c.max_half_open.is_zero() {
            ev.time(
                "time_half_open",
                now.since(self.half_open_since),
                Test::AtLeast,
                "max_half_open",
                c.max_half_open,
            );
        }
    }

    /// A counted result in the closed state: into the windows, then the trip rules.
    #[inline(always)]
    fn closed_result(&mut self, now: SimTime, failed: bool, latency: Dur, out: &mut Transitions) {
        self.observe(now, failed, latency);
        if let Some(reason) = self.tripped(now) {
            self.open(now, reason, out);
        }
    }

    /// [`Breaker::record`] outside the closed state (after its timers), out of line so the
    /// closed path stays small enough to inline into the run loop.
    #[inline(never)]
    fn record_rest(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        let current = ticket.generation == self.phase.generation();
        let failed = match obs.verdict {
            Verdict::Ignored => {
                if current && ticket.probe && self.phase.state() == State::HalfOpen {
                    self.probes_admitted = self.probes_admitted.saturating_sub(1);
                }
                return;
            }
            Verdict::Success => false,
            Verdict::Failure => true,
        };
        if !current && self.cfg.late_results == LateResults::Drop {
            return;
        }
        match self.phase.state() {
            State::Closed => self.closed_result(now, failed, obs.latency, out),
            State::Open => self.observe(now, failed, obs.latency),
            State::HalfOpen => match self.cfg.close_rule {
                CloseRule::Successes => {
                    if failed {
                        self.probe_failures += 1;
                        self.open(now, "probe_failed", out);
                    } else {
                        self.probe_successes += 1;
                        if self.probe_successes >= self.cfg.close_successes {
                            self.close(now, "probe_successes", out);
                        }
                    }
                }
                CloseRule::FailureRate => {
                    self.probe_results += 1;
                    self.probe_failures += u32::from(failed);
                    if self.probe_results >= self.cfg.probes {
                        let (f, n) = (u64::from(self.probe_failures), u64::from(self.probe_results));
                        if self.cfg.comparison.rate(f, n, self.cfg.probe_failure_rate) {
                            self.open(now, "probe_failure_rate", out);
                        } else {
                            self.close(now, "probe_failure_rate_below", out);
                        }
                    }
                }
            },
        }
    }
}

impl Breaker for GenericBreaker {
    #[inline]
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        if self.phase.state() == State::Open {
            if self.cfg.half_open_transition == HalfOpenTransition::Passive && now >= self.open_until {
                self.half_open(now, out);
            } else {
                return Admission::Reject;
            }
        }
        match self.phase.state() {
            State::HalfOpen => {
                if self.cfg.probes > 0 && self.probes_admitted >= self.cfg.probes {
                    return Admission::Reject;
                }
                self.probes_admitted += 1;
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Allow(self.phase.ticket(false)),
        }
    }

    /// The closed state, where most results land, inline: no timer can be due there, and an
    /// ignored result returns no probe slot. Every other state is [`GenericBreaker::record_rest`].
    #[inline]
    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        if self.phase.state() != State::Closed {
            return self.record_rest(now, ticket, obs, out);
        }
        let failed = match obs.verdict {
            Verdict::Ignored => return,
            Verdict::Success => false,
            Verdict::Failure => true,
        };
        if ticket.generation != self.phase.generation() && self.cfg.late_results == LateResults::Drop {
            return;
        }
        self.closed_result(now, failed, obs.latency, out);
    }

    #[inline]
    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        match self.phase.state() {
            State::Closed => self.closed_evidence(now, ev),
            State::Open => {
                ev.open_for(
                    now.since(self.opened_at),
                    Test::AtLeast,
                    "open_duration",
                    self.open_until.since(self.opened_at),
                );
            }
            State::HalfOpen => self.half_open_evidence(now, ev),
        }
    }

    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        match self.phase.state() {
            State::Open if self.cfg.half_open_transition == HalfOpenTransition::Active => {
                Some(self.open_until)
            }
            State::HalfOpen if !self.cfg.max_half_open.is_zero() => {
                Some(self.half_open_since + self.cfg.max_half_open)
            }
            _ => None,
        }
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

/// The generic family as Resilience4j, when it is exactly Resilience4j (rate rules over a
/// count window or 1 s buckets, `>=`, no consecutive or percentile rule, half-open deciding on
/// the same thresholds, counted late results); otherwise the first difference.
fn as_resilience4j(g: &GenericConfig) -> Result<Resilience4jConfig> {
    if !g.latency_threshold.is_zero() {
        return Err(Error::invalid(
            "it has no latency-percentile trip rule (only a slow-call rate over slowCallDurationThreshold)",
        ));
    }
    if g.failure_threshold > 0 {
        return Err(Error::invalid(
            "it has no consecutive-failure rule (use count_window with count_failure_rate)",
        ));
    }
    if g.window_failures > 0 {
        return Err(Error::invalid("it has no failures-within-a-time-window count rule"));
    }
    if g.comparison != Comparison::AtLeast {
        return Err(Error::invalid("its thresholds compare with >=, not >"));
    }
    if g.jitter > 0.0 {
        return Err(Error::invalid("its wait in open state has no jitter"));
    }
    if g.late_results != LateResults::Count {
        return Err(Error::invalid("it has no generation check: late results are always recorded"));
    }
    if !g.clear_on_close {
        return Err(Error::invalid("it starts a fresh window on every close"));
    }
    let time_rules = g.failure_rate > 0.0 || g.slow_call_rate > 0.0;
    let (kind, size, failure_rate) = match (g.count_window > 0, time_rules) {
        (true, false) => (SlidingWindowType::CountBased, g.count_window, g.count_failure_rate),
        (false, true) => {
            let secs = g.time_window.micros() / 1_000_000;
            if !g.time_window.micros().is_multiple_of(1_000_000) || g.buckets as u64 != secs {
                return Err(Error::invalid(format!(
                    "its time window is whole seconds in one-second epoch buckets: set buckets = {} with a whole-second time_window (exact windows are not expressible)",
                    secs.max(1)
                )));
            }
            (SlidingWindowType::TimeBased, secs as u32, g.failure_rate)
        }
        (true, true) => return Err(Error::invalid("it has one window, count- or time-based, not both")),
        (false, false) => return Err(Error::invalid("no rate rule is enabled")),
    };
    if kind == SlidingWindowType::CountBased && g.slow_call_rate > 0.0 {
        return Err(Error::invalid("the slow-call rule must use the same window as the failure rate"));
    }
    if g.half_open_transition != HalfOpenTransition::Active {
        return Err(Error::invalid(
            "its passive open -> half-open needs the clock strictly after the wait, the generic family's passive transition happens at it: set half_open_transition = \"active\" (automaticTransitionFromOpenToHalfOpenEnabled)",
        ));
    }
    if g.slow_call_rate > 0.0 {
        return Err(Error::invalid(
            "its half-open state also applies the slow-call rate, the generic family's half-open does not",
        ));
    }
    if g.probes == 0 {
        return Err(Error::invalid(
            "half-open always permits a fixed number of calls (probes must be at least 1)",
        ));
    }
    if g.close_rule != CloseRule::FailureRate {
        return Err(Error::invalid(
            "half-open decides on the failure rate of its calls (close_rule = \"failure_rate\")",
        ));
    }
    if g.probe_failure_rate != failure_rate {
        return Err(Error::invalid("half-open reopens at the same failure rate threshold as closed"));
    }
    if g.min_calls < g.probes {
        return Err(Error::invalid(format!(
            "half-open decides after min(minimumNumberOfCalls, permitted) results: min_calls ({}) must be at least probes ({})",
            g.min_calls, g.probes
        )));
    }
    if failure_rate == 0.0 && kind == SlidingWindowType::CountBased {
        return Err(Error::invalid("a count window needs count_failure_rate above 0"));
    }
    let pct = |r: f64| if r > 0.0 { r * 100.0 } else { 100.0 };
    Ok(Resilience4jConfig {
        sliding_window_type: kind,
        sliding_window_size: size,
        minimum_number_of_calls: g.min_calls.max(1),
        failure_rate_threshold: pct(failure_rate),
        slow_call_rate_threshold: pct(g.slow_call_rate),
        // A disabled slow-call rule: 100 % of the calls slower than a day never happens.
        slow_call_duration_threshold: if g.slow_call_rate > 0.0 {
            g.slow_call_duration
        } else {
            Dur::from_secs(86_400)
        },
        permitted_number_of_calls_in_half_open_state: g.probes,
        wait_duration_in_open_state: g.open_duration,
        exponential_backoff_multiplier: g.backoff_multiplier,
        exponential_max_wait_duration_in_open_state: g.max_open_duration,
        automatic_transition_from_open_to_half_open_enabled: g.half_open_transition
            == HalfOpenTransition::Active,
        max_wait_duration_in_half_open_state: g.max_half_open,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, burst, cyclic, drive, offer};

    fn with(f: impl FnOnce(&mut GenericConfig)) -> GenericBreaker {
        let mut c = GenericConfig::consecutive();
        f(&mut c);
        c.validate().expect("test config is valid");
        GenericBreaker::new(c, 7)
    }

    fn pairs(pattern: &str, t0: u64, step: u64) -> Vec<(u64, crate::policy::testkit::Ev)> {
        let mut v = Vec::new();
        for (i, ch) in pattern.chars().enumerate() {
            let t = t0 + step * i as u64;
            v.push((t, A));
            v.push((
                t,
                if ch == 'f' {
                    F(10)
                } else if ch == 'L' {
                    S(2_000)
                } else {
                    S(10)
                },
            ));
        }
        v
    }

    #[test]
    fn consecutive_preset_full_cycle() {
        let mut b = GenericBreaker::new(GenericConfig::consecutive(), 1);
        let mut s = pairs("ffffsfffff", 0, 100); // success at 400 resets; fifth in a row at 900
        s.push((30_899, A));
        s.extend(burst(30_900, A, 2)); // passive: one probe, one rejected
        s.push((31_000, S(100)));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (900, C, O, "consecutive_failures"),
                (30_900, O, H, "cooldown_elapsed"),
                (31_000, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[10..], "010");
    }

    #[test]
    fn strict_comparison_needs_one_more() {
        let mut b = with(|c| c.comparison = Comparison::Above);
        let r = drive(&mut b, &pairs("ffffff", 0, 10));
        assert_eq!(r.tr, vec![(50, C, O, "consecutive_failures")]);
    }

    #[test]
    fn probe_failure_reopens_and_backoff_grows_with_cap() {
        let mut b = with(|c| {
            c.backoff_multiplier = 2.0;
            c.max_open_duration = Dur::from_secs(100);
        });
        let mut s = pairs("fffff", 0, 0); // open at 0 for 30 s
        s.extend(pairs("f", 30_000, 0)); // probe fails: reopen for 60 s
        s.extend(pairs("f", 90_000, 0)); // reopen for 120 s, capped at 100 s
        s.push((189_999, A));
        s.extend(pairs("s", 190_000, 0)); // closes; the next open is 30 s again
        s.extend(pairs("fffff", 200_000, 0));
        s.push((229_999, A));
        s.push((230_000, A));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_000, H, O, "probe_failed"),
                (90_000, O, H, "cooldown_elapsed"),
                (90_000, H, O, "probe_failed"),
                (190_000, O, H, "cooldown_elapsed"),
                (190_000, H, C, "probe_successes"),
                (200_000, C, O, "consecutive_failures"),
                (230_000, O, H, "cooldown_elapsed"),
            ]
        );
    }

    #[test]
    fn jitter_is_seeded_and_bounded() {
        let cfg = GenericConfig { jitter: 0.5, ..GenericConfig::consecutive() };
        let open_len = |seed| {
            let mut b = GenericBreaker::new(cfg.clone(), seed);
            drive(&mut b, &pairs("fffff", 0, 0));
            b.open_until.micros()
        };
        assert_eq!(open_len(3), open_len(3));
        let lens: Vec<u64> = (0..20).map(open_len).collect();
        assert!(lens.iter().all(|&l| (15_000_000..=45_000_000).contains(&l)), "{lens:?}");
        assert!(lens.iter().any(|&l| l != lens[0]));
    }

    #[test]
    fn active_transition_fires_at_deadline() {
        let mut b = with(|c| c.half_open_transition = HalfOpenTransition::Active);
        let r = drive(&mut b, &pairs("fffff", 1_000, 0));
        assert_eq!(r.tr.len(), 1);
        assert_eq!(b.deadline(), Some(SimTime(31_000_000)));
        let r = drive(&mut b, &[(31_000, Tick)]);
        assert_eq!(r.tr, vec![(31_000, O, H, "cooldown_elapsed")]);
        assert_eq!(b.deadline(), None);
        // Late engine: an admit after the deadline still sees the transition at the deadline.
        let mut b = with(|c| c.half_open_transition = HalfOpenTransition::Active);
        let mut s = pairs("fffff", 1_000, 0);
        s.push((40_000, A));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr[1], (31_000, O, H, "cooldown_elapsed"));
        assert_eq!(r.admits.last(), Some(&true));
    }

    #[test]
    fn max_half_open_reopens_a_stuck_probe() {
        let mut b = with(|c| c.max_half_open = Dur::from_secs(10));
        let mut s = pairs("fffff", 0, 0);
        s.push((30_000, A)); // probe, never answered
        s.push((35_000, A)); // rejected
        s.push((40_000, Tick));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr[1..], [(30_000, O, H, "cooldown_elapsed"), (40_000, H, O, "half_open_timeout")]);
        assert_eq!(b.deadline(), None); // passive open: no timer
    }

    #[test]
    fn windowed_preset_rate_min_calls_and_edges() {
        let mut b = GenericBreaker::new(GenericConfig::windowed(), 0);
        // 9 failures: below min_calls (10): closed. The 10th call (a success) makes 9/10.
        let mut s = pairs("fffffffff", 0, 1000);
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty());
        s.extend(pairs("s", 9_000, 0));
        let mut b = GenericBreaker::new(GenericConfig::windowed(), 0);
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(9_000, C, O, "failure_rate")]);

        // Exactly 50 % opens; a sample exactly 60 s old has left the window.
        let mut b = GenericBreaker::new(GenericConfig::windowed(), 0);
        let mut s = pairs("f", 0, 0);
        s.extend(pairs("ssssfffff", 1_000, 1_000)); // 9..: at 9 s, 6 f of 10 -> opens
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(9_000, C, O, "failure_rate")]);
        let mut b = GenericBreaker::new(GenericConfig::windowed(), 0);
        let mut s = pairs("f", 0, 0);
        s.extend(pairs("sssssffff", 1_000, 1_000)); // 5 f of 10 at 9 s: exactly 0.5 opens
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(9_000, C, O, "failure_rate")]);
        let mut b = GenericBreaker::new(GenericConfig::windowed(), 0);
        let mut s = pairs("f", 0, 0);
        s.extend(pairs("sssssfff", 52_000, 1_000)); // 4 f of 9 by 59 s
        s.extend(pairs("f", 60_000, 0)); // the 0 s failure is exactly 60 s old: out, 9 calls < 10
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty(), "{:?}", r.tr);
    }

    #[test]
    fn bucketed_window_drops_whole_buckets() {
        // 60 s in 6 buckets of 10 s, min 2 calls, 50 %.
        let mut b = with(|c| {
            c.failure_threshold = 0;
            c.time_window = Dur::from_secs(60);
            c.buckets = 6;
            c.failure_rate = 0.5;
            c.min_calls = 2;
        });
        // Failure at 5 s (bucket 0); success at 61 s (bucket 6): bucket 0 is out -> 0/1.
        // Then a failure at 62 s: 1/2 = 50 % opens.
        let mut s = pairs("f", 5_000, 0);
        s.extend(pairs("s", 61_000, 0));
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty());
        let r = drive(&mut b, &pairs("f", 62_000, 0));
        assert_eq!(r.tr, vec![(62_000, C, O, "failure_rate")]);
        // With an exact window the 5 s failure is still in at 61 s: 1/2 opens there.
        let mut b = with(|c| {
            c.failure_threshold = 0;
            c.time_window = Dur::from_secs(60);
            c.failure_rate = 0.5;
            c.min_calls = 2;
        });
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(61_000, C, O, "failure_rate")]);
    }

    #[test]
    fn slow_calls_and_percentile_rules() {
        let slow = |pattern: &str| {
            let mut b = with(|c| {
                c.failure_threshold = 0;
                c.time_window = Dur::from_secs(60);
                c.slow_call_rate = 0.5;
                c.slow_call_duration = Dur::from_secs(1);
                c.min_calls = 4;
            });
            drive(&mut b, &pairs(pattern, 0, 10)).tr
        };
        assert_eq!(slow("ssLL"), vec![(30, C, O, "slow_call_rate")]);
        assert!(slow("sssL").is_empty());

        let p95 = |n_fast: usize, n_slow: usize| {
            let mut b = with(|c| {
                c.failure_threshold = 0;
                c.time_window = Dur::from_secs(600);
                c.latency_threshold = Dur::from_secs(2);
                c.min_calls = 20;
            });
            let pattern = "s".repeat(n_fast) + &"L".repeat(n_slow);
            drive(&mut b, &pairs(&pattern, 0, 10)).tr
        };
        // 20 calls: p95 is rank 19 (index 18); two slow calls reach it, one does not.
        assert!(p95(19, 1).is_empty());
        assert_eq!(p95(18, 2), vec![(190, C, O, "latency_percentile")]);
    }

    #[test]
    fn count_window_and_failures_in_window() {
        let mut b = with(|c| {
            c.failure_threshold = 0;
            c.count_window = 4;
            c.count_failure_rate = 0.75;
            c.min_calls = 100; // clamped to the window size
        });
        let r = drive(&mut b, &pairs("fsfsfsff", 0, 10));
        assert_eq!(r.tr, vec![(70, C, O, "count_failure_rate")]);

        let mut b = with(|c| {
            c.failure_threshold = 0;
            c.window_failures = 3;
            c.failure_window = Dur::from_secs(10);
        });
        // Failures at 0, 5, 10 s: the 0 s one is exactly 10 s old at 10 s: out. At 12 s: in 3.
        let mut s = pairs("ff", 0, 5_000);
        s.extend(pairs("f", 10_000, 0));
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty());
        let r = drive(&mut b, &pairs("f", 12_000, 0));
        assert_eq!(r.tr, vec![(12_000, C, O, "failures_in_window")]);
    }

    #[test]
    fn half_open_failure_rate_rule() {
        let mk = || {
            with(|c| {
                c.probes = 4;
                c.close_rule = CloseRule::FailureRate;
                c.probe_failure_rate = 0.5;
            })
        };
        let mut s = pairs("fffff", 0, 0);
        s.extend(burst(30_000, A, 5)); // four probes, the fifth rejected
        s.extend([(30_100, S(1)), (30_100, F(1)), (30_100, S(1)), (30_200, S(1))]);
        let mut b = mk();
        let r = drive(&mut b, &s);
        assert_eq!(r.tr[2], (30_200, H, C, "probe_failure_rate_below"));
        assert_eq!(&r.admit_string()[5..], "11110");
        let mut s2 = pairs("fffff", 0, 0);
        s2.extend(burst(30_000, A, 4));
        s2.extend([(30_100, S(1)), (30_100, F(1)), (30_100, S(1)), (30_200, F(1))]);
        let mut b = mk();
        let r = drive(&mut b, &s2);
        assert_eq!(r.tr[2], (30_200, H, O, "probe_failure_rate"));
    }

    #[test]
    fn late_results_count_or_drop() {
        // Six calls admitted at 0; five fail (open); the sixth succeeds late in half-open.
        let mut s = burst(0, A, 6);
        s.extend(burst(0, F(1), 5));
        s.push((30_000, A)); // the probe
        s.push((30_001, Done(5, true, 30_001))); // late success of the pre-trip call
        let mut counted = with(|c| c.late_results = LateResults::Count);
        let r = drive(&mut counted, &s);
        assert_eq!(r.tr[2], (30_001, H, C, "probe_successes"));
        let mut dropped = with(|c| c.late_results = LateResults::Drop);
        let r = drive(&mut dropped, &s);
        assert_eq!(r.tr.len(), 2);
        assert_eq!(dropped.state(), State::HalfOpen);
    }

    #[test]
    fn ignored_probe_returns_its_slot_and_keep_window_on_close() {
        let mut b = with(|c| c.clear_on_close = false);
        let mut s = pairs("fffff", 0, 0);
        s.push((30_000, A));
        s.push((30_001, I));
        s.push((30_002, A)); // the slot is back
        s.push((30_003, S(1))); // closes; the consecutive count is reset even when kept
        s.extend(pairs("ffff", 30_010, 0));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr.len(), 3);
        assert_eq!(&r.admit_string()[5..7], "11");
    }

    #[test]
    fn memory_is_flat_in_steady_state() {
        let mut b = with(|c| {
            c.window_failures = 20;
            c.failure_window = Dur::from_secs(30);
            c.count_window = 50;
            c.time_window = Dur::from_secs(60);
            c.failure_rate = 0.5;
            c.latency_threshold = Dur::from_secs(2);
            c.clear_on_close = false;
        });
        let f = cyclic(600_000, 120_000);
        let warm = offer(&mut b, 0, 3 * 60_000, 10, &f);
        assert!(warm >= 6, "{warm}");
        let cap = b.buffer_capacity();
        offer(&mut b, 1_800_000, 3 * 60_000, 10, &f);
        assert_eq!(b.buffer_capacity(), cap);
    }

    #[test]
    fn dropped_late_results_never_reach_the_closed_window() {
        // Ten calls admitted at 0 (generation 0); five fail: open; probe succeeds: closed (gen 3).
        let mut s = burst(0, A, 10);
        s.extend(burst(0, F(1), 5));
        s.push((30_000, A));
        s.push((30_001, Done(10, true, 1)));
        // The five remaining pre-trip calls fail late: dropped, so no new trip.
        s.extend(burst(30_002, F(30_002), 5));
        let mut dropped = with(|c| c.late_results = LateResults::Drop);
        let r = drive(&mut dropped, &s);
        assert_eq!(r.tr.len(), 3);
        let mut counted = with(|c| c.late_results = LateResults::Count);
        let r = drive(&mut counted, &s);
        assert_eq!(r.tr.last(), Some(&(30_002, C, O, "consecutive_failures")));
    }

    #[test]
    fn active_timers_chain_in_order() {
        // Active open -> half-open at 30 s, nobody calls, max_half_open 5 s reopens at 35 s,
        // active half-open again at 65 s: one on_deadline call at 69 s replays all three.
        let mut b = with(|c| {
            c.half_open_transition = HalfOpenTransition::Active;
            c.max_half_open = Dur::from_secs(5);
        });
        let mut s = pairs("fffff", 0, 0);
        s.push((69_000, Tick));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr[1..],
            [
                (30_000, O, H, "cooldown_elapsed"),
                (35_000, H, O, "half_open_timeout"),
                (65_000, O, H, "cooldown_elapsed"),
            ]
        );
        assert_eq!(b.deadline(), Some(SimTime(70_000_000)));
    }
}
