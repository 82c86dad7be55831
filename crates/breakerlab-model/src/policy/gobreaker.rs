//! sony/gobreaker v2's `CircuitBreaker` (preset `gobreaker`).
//!
//! Source: sony/gobreaker tag v2.4.0 (commit 0ae90251b774f890e7586c96ea82d61eb74d556d, the latest
//! release), v2/gobreaker.go (`NewCircuitBreaker`, `beforeRequest`, `afterRequest`, `onSuccess`,
//! `onFailure`, `onExclusion`, `currentState`, `setState`, `toNewGeneration`,
//! `defaultReadyToTrip`), v2/counter.go (`Counts`, `validRequests`).
//!
//! Reproduced:
//! - `MaxRequests` 0 means 1; `Timeout` 0 means 60 s; the default `ReadyToTrip` is
//!   `ConsecutiveFailures > 5` (the 6th failure in a row opens), here
//!   `ready_to_trip_consecutive_failures` (trips when strictly more);
//! - every state change starts a new generation and clears the counts; `afterRequest` drops a
//!   result whose generation is not the current one (late results are ignored);
//! - CLOSED with `Interval > 0`: once the clock is strictly after the expiry, the next request
//!   or result (`currentState(now)`) clears the counts and starts a new generation at `now`
//!   (in-flight results are then dropped too), so the next interval is timed from that call,
//!   not from a fixed grid; `Interval` 0 never clears them. The rolling `BucketPeriod` variant
//!   is not modelled (`bucket_period` is not a parameter);
//! - OPEN → HALF_OPEN when the clock is strictly after `opened + Timeout` (`expiry.Before(now)`),
//!   checked on the next request (passive);
//! - HALF_OPEN admits while `validRequests() = Requests − TotalExclusions < MaxRequests`: a
//!   finished probe does not free its slot, an excluded one does; `ConsecutiveSuccesses >=
//!   MaxRequests` closes; any failure reopens;
//! - an ignored result (`IsExcluded`) only counts as an exclusion.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, go_duration};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, invalid};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use std::fmt::Write as _;

family_config! {
    /// gobreaker's `Settings`, in snake_case.
    GobreakerConfig {
        max_requests: u32 = 0, "calls", "MaxRequests: half-open probes and the successes that close (0 = 1)";
        interval: Dur = Dur::ZERO, "duration",
            "Interval: closed-state counts cleared (new generation) each interval (0 = never)";
        timeout: Dur = Dur::ZERO, "duration", "Timeout: open time before half-open, strictly after (0 = 60s)";
        ready_to_trip_consecutive_failures: u32 = 5, "calls",
            "default ReadyToTrip: opens when ConsecutiveFailures > this";
    }
}

impl GobreakerConfig {
    /// `MaxRequests` as the breaker uses it.
    pub fn effective_max_requests(&self) -> u32 {
        self.max_requests.max(1)
    }
    /// `Timeout` as the breaker uses it.
    pub fn effective_timeout(&self) -> Dur {
        if self.timeout.is_zero() { Dur::from_secs(60) } else { self.timeout }
    }
}

impl Family for GobreakerConfig {
    type Breaker = GobreakerBreaker;
    const NAME: &'static str = "gobreaker";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "gobreaker",
        library: "gobreaker v2.4.0",
        summary: "sony/gobreaker v2 defaults: opens at ConsecutiveFailures > 5 (the 6th); Timeout 60 s; MaxRequests 1 probe; counts never cleared while closed",
        source: "sony/gobreaker tag v2.4.0 (0ae90251b774f890e7586c96ea82d61eb74d556d), v2/gobreaker.go (beforeRequest, afterRequest, currentState, toNewGeneration) and v2/counter.go",
        quirks: &[
            "ReadyToTrip default is ConsecutiveFailures > 5: six failures in a row, not five",
            "every state change starts a new generation: results of calls admitted earlier are dropped",
            "Interval > 0: the first request or result after the interval expired clears the counts and starts the next interval at that moment (not on a fixed grid)",
            "Interval 0: closed-state counts are never cleared (only a success resets the consecutive count)",
            "half-open after the clock is strictly past opened + Timeout, on the next request",
            "half-open admits MaxRequests calls in total per episode; finished probes do not free slots, excluded ones do; any failure reopens",
            "the rolling BucketPeriod window is not modelled",
        ],
        config: GobreakerConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        if self.interval > Dur::ZERO && self.interval < Dur::from_millis(1) {
            return Err(invalid("interval", "0 or at least 1ms", &self.interval.to_string()));
        }
        Ok(())
    }

    fn build(&self, _seed: u64) -> GobreakerBreaker {
        GobreakerBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Gobreaker).then(|| Ok(gobreaker(input.header, input.name, self)))
    }
}

/// gobreaker's state machine.
#[derive(Clone, Debug)]
pub struct GobreakerBreaker {
    cfg: GobreakerConfig,
    phase: Phase,
    requests: u64,
    exclusions: u64,
    consecutive_successes: u64,
    consecutive_failures: u64,
    expiry: Option<SimTime>,
}

impl GobreakerBreaker {
    /// A closed breaker at generation 0 (its first interval starts at time zero).
    pub fn new(cfg: GobreakerConfig) -> GobreakerBreaker {
        let expiry = (!cfg.interval.is_zero()).then(|| SimTime::ZERO + cfg.interval);
        GobreakerBreaker {
            cfg,
            phase: Phase::new(),
            requests: 0,
            exclusions: 0,
            consecutive_successes: 0,
            consecutive_failures: 0,
            expiry,
        }
    }

    /// `toNewGeneration` without a state change (a closed-state interval ended).
    fn new_generation(&mut self, now: SimTime) {
        self.phase.next_generation();
        self.clear_counts(now);
    }

    /// The counts and expiry `toNewGeneration` resets, for the state now current.
    fn clear_counts(&mut self, now: SimTime) {
        self.requests = 0;
        self.exclusions = 0;
        self.consecutive_successes = 0;
        self.consecutive_failures = 0;
        self.expiry = match self.phase.state() {
            State::Closed => (!self.cfg.interval.is_zero()).then(|| now + self.cfg.interval),
            State::Open => Some(now + self.cfg.effective_timeout()),
            State::HalfOpen => None,
        };
    }

    fn set(&mut self, now: SimTime, to: State, reason: &'static str, out: &mut Transitions) {
        if self.phase.change(now, to, reason, self.evidence_for(now, out), out) {
            self.clear_counts(now);
        }
    }

    /// `currentState(now)`.
    fn current(&mut self, now: SimTime, out: &mut Transitions) {
        match (self.phase.state(), self.expiry) {
            (State::Closed, Some(e)) if e < now => self.new_generation(now),
            (State::Open, Some(e)) if e < now => self.set(now, State::HalfOpen, "cooldown_elapsed", out),
            _ => {}
        }
    }
}

impl Breaker for GobreakerBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.current(now, out);
        match self.phase.state() {
            State::Open => return Admission::Reject,
            State::HalfOpen
                if self.requests.saturating_sub(self.exclusions)
                    >= u64::from(self.cfg.effective_max_requests()) =>
            {
                return Admission::Reject;
            }
            _ => {}
        }
        self.requests += 1;
        Admission::Allow(self.phase.ticket(self.phase.state() == State::HalfOpen))
    }

    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.current(now, out);
        if ticket.generation != self.phase.generation() {
            return;
        }
        match obs.verdict {
            Verdict::Ignored => self.exclusions += 1,
            Verdict::Success => {
                self.consecutive_successes += 1;
                self.consecutive_failures = 0;
                if self.phase.state() == State::HalfOpen
                    && self.consecutive_successes >= u64::from(self.cfg.effective_max_requests())
                {
                    self.set(now, State::Closed, "probe_successes", out);
                }
            }
            Verdict::Failure => {
                self.consecutive_failures += 1;
                self.consecutive_successes = 0;
                match self.phase.state() {
                    State::Closed
                        if self.consecutive_failures
                            > u64::from(self.cfg.ready_to_trip_consecutive_failures) =>
                    {
                        self.set(now, State::Open, "consecutive_failures", out);
                    }
                    State::HalfOpen => self.set(now, State::Open, "probe_failed", out),
                    _ => {}
                }
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        let max_requests = u64::from(c.effective_max_requests());
        match self.phase.state() {
            State::Closed => {
                ev.count(
                    "consecutive_failures",
                    self.consecutive_failures,
                    Test::Above,
                    "ready_to_trip_consecutive_failures",
                    u64::from(c.ready_to_trip_consecutive_failures),
                );
                ev.fact_count("requests", self.requests);
            }
            State::Open => {
                let timeout = c.effective_timeout();
                let opened = self
                    .expiry
                    .map_or(SimTime::ZERO, |e| SimTime(e.micros().saturating_sub(timeout.micros())));
                ev.open_for(now.since(opened), Test::Above, "timeout", timeout);
            }
            State::HalfOpen => {
                let admitted = self.requests.saturating_sub(self.exclusions);
                ev.count("probes_admitted", admitted, Test::Of, "max_requests", max_requests);
                ev.count(
                    "consecutive_successes",
                    self.consecutive_successes,
                    Test::AtLeast,
                    "max_requests",
                    max_requests,
                );
            }
        }
    }
}

/// The configuration in Gobreaker's syntax.
fn gobreaker(header: &[String], name: &str, c: &GobreakerConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "// import \"github.com/sony/gobreaker/v2\"");
    let _ = writeln!(s, "cb := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{{");
    let _ = writeln!(s, "\tName:        {name:?},");
    let _ = writeln!(s, "\tMaxRequests: {},", c.max_requests);
    let _ = writeln!(s, "\tInterval:    {},", go_duration(c.interval));
    let _ = writeln!(s, "\tTimeout:     {},", go_duration(c.timeout));
    let _ = writeln!(s, "\tReadyToTrip: func(counts gobreaker.Counts) bool {{");
    let _ = writeln!(s, "\t\treturn counts.ConsecutiveFailures > {}", c.ready_to_trip_consecutive_failures);
    let _ = writeln!(s, "\t}},");
    let _ = writeln!(s, "}})");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, Quirk, calls, check_quirks, drive};

    /// sony/gobreaker's files at the tag the preset reproduces.
    macro_rules! at_v2_4_0 {
        ($file_line:literal) => {
            concat!("sony/gobreaker v2.4.0 (0ae9025), v2/", $file_line)
        };
    }

    fn gobreaker(f: impl FnOnce(&mut GobreakerConfig)) -> GobreakerBreaker {
        let mut c = GobreakerConfig::default();
        f(&mut c);
        c.validate().unwrap();
        GobreakerBreaker::new(c)
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        check_quirks(vec![
            Quirk {
                quirk: "defaults: the 6th failure in a row opens (ConsecutiveFailures > 5); half-open strictly after 60 s; MaxRequests 0 means 1 probe, whose success closes",
                source: at_v2_4_0!("gobreaker.go:122-123,145-146,175,177-179,282,313"),
                breaker: gobreaker(|_| {}),
                script: [calls(0, 6, 1, false), vec![(60_005, A), (60_006, A), (60_006, A), (60_010, S(1))]]
                    .concat(),
                transitions: vec![
                    (5, C, O, "consecutive_failures"),
                    (60_006, O, H, "cooldown_elapsed"),
                    (60_010, H, C, "probe_successes"),
                ],
                admits: "111111010",
            },
            Quirk {
                quirk: "five failures in a row do not open",
                source: at_v2_4_0!("gobreaker.go:178"),
                breaker: gobreaker(|_| {}),
                script: calls(0, 5, 1, false),
                transitions: vec![],
                admits: "11111",
            },
            Quirk {
                quirk: "a success zeroes ConsecutiveFailures: 5 failures, a success, 5 failures never open",
                source: at_v2_4_0!("counter.go:20-24"),
                breaker: gobreaker(|_| {}),
                script: [calls(0, 5, 1, false), calls(5, 1, 1, true), calls(6, 5, 1, false)].concat(),
                transitions: vec![],
                admits: "11111111111",
            },
            Quirk {
                quirk: "Interval 0: closed counts are never cleared: the 6th failure opens 10 hours after the 5th",
                source: at_v2_4_0!("gobreaker.go:356-357 (expiry zero), 307"),
                breaker: gobreaker(|_| {}),
                script: [calls(0, 5, 1, false), calls(36_000_004, 1, 1, false)].concat(),
                transitions: vec![(36_000_004, C, O, "consecutive_failures")],
                admits: "111111",
            },
            Quirk {
                quirk: "Interval 10 s: a result exactly at the expiry is in the same generation (Before is strict)",
                source: at_v2_4_0!("gobreaker.go:307,359"),
                breaker: gobreaker(|c| c.interval = Dur::from_secs(10)),
                script: [calls(9_995, 5, 1, false), calls(10_000, 1, 1, false)].concat(),
                transitions: vec![(10_000, C, O, "consecutive_failures")],
                admits: "111111",
            },
            Quirk {
                quirk: "Interval 10 s: one ms past the expiry the counts are cleared and the next interval starts then",
                source: at_v2_4_0!("gobreaker.go:307-308,350-351,359"),
                breaker: gobreaker(|c| c.interval = Dur::from_secs(10)),
                script: [calls(9_995, 5, 1, false), calls(10_001, 6, 1, false)].concat(),
                transitions: vec![(10_006, C, O, "consecutive_failures")],
                admits: "11111111111",
            },
            Quirk {
                quirk: "a result of an earlier generation is dropped: a failure admitted while closed does not reopen half-open",
                source: at_v2_4_0!("gobreaker.go:259-262"),
                breaker: gobreaker(|c| c.timeout = Dur::from_secs(1)),
                script: [
                    vec![(0, A)], // admission 0, in flight across the trip
                    (1..=6).flat_map(|n| [(n, A), (n, Done(n as usize, false, 1))]).collect(),
                    vec![(1_007, A), (1_008, Done(0, false, 1_008)), (1_009, S(1))],
                ]
                .concat(),
                transitions: vec![
                    (6, C, O, "consecutive_failures"),
                    (1_007, O, H, "cooldown_elapsed"),
                    (1_009, H, C, "probe_successes"),
                ],
                admits: "11111111",
            },
            Quirk {
                quirk: "half-open admits MaxRequests in all: a finished probe keeps its slot; MaxRequests successes close",
                source: at_v2_4_0!("gobreaker.go:246,282; counter.go:36-41"),
                breaker: gobreaker(|c| {
                    c.max_requests = 2;
                    c.timeout = Dur::from_secs(1);
                }),
                script: [
                    calls(0, 6, 1, false),
                    vec![(1_006, A), (1_006, A), (1_007, S(1)), (1_008, A), (1_009, S(1))],
                ]
                .concat(),
                transitions: vec![
                    (5, C, O, "consecutive_failures"),
                    (1_006, O, H, "cooldown_elapsed"),
                    (1_009, H, C, "probe_successes"),
                ],
                admits: "111111110",
            },
            Quirk {
                quirk: "any failure in half-open reopens, after a success too",
                source: at_v2_4_0!("gobreaker.go:295-296"),
                breaker: gobreaker(|c| {
                    c.max_requests = 3;
                    c.timeout = Dur::from_secs(1);
                }),
                script: [calls(0, 6, 1, false), calls(1_006, 1, 1, true), calls(1_007, 1, 1, false)].concat(),
                transitions: vec![
                    (5, C, O, "consecutive_failures"),
                    (1_006, O, H, "cooldown_elapsed"),
                    (1_007, H, O, "probe_failed"),
                ],
                admits: "11111111",
            },
            Quirk {
                quirk: "an excluded result only counts an exclusion, which frees its half-open slot",
                source: at_v2_4_0!("gobreaker.go:264-266,300-302; counter.go:36-41"),
                breaker: gobreaker(|c| c.timeout = Dur::from_secs(1)),
                script: [
                    calls(0, 6, 1, false),
                    vec![(1_006, A), (1_006, A), (1_007, I), (1_008, A), (1_009, S(1))],
                ]
                .concat(),
                transitions: vec![
                    (5, C, O, "consecutive_failures"),
                    (1_006, O, H, "cooldown_elapsed"),
                    (1_009, H, C, "probe_successes"),
                ],
                admits: "111111101",
            },
        ]);
    }

    #[test]
    fn sixth_consecutive_failure_opens_and_late_results_are_dropped() {
        let mut b = GobreakerBreaker::new(GobreakerConfig::default());
        let mut s = vec![(0, A)]; // admission 0: a slow call of generation 0
        for i in 0..6 {
            s.push((1 + i, A));
            s.push((1 + i, Done(1 + i as usize, false, 1)));
        }
        s.push((60_006, A)); // exactly at expiry: not strictly after
        s.push((60_007, A)); // half-open: the one probe (admission 8)
        s.push((60_007, A)); // MaxRequests 1 reached
        s.push((60_008, Done(0, false, 60_008))); // generation 0: dropped
        s.push((60_009, Done(8, true, 2))); // 1 success >= MaxRequests: closes
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (6, C, O, "consecutive_failures"),
                (60_007, O, H, "cooldown_elapsed"),
                (60_009, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[7..], "010");
        // Five in a row do not open (> 5).
        let mut b = GobreakerBreaker::new(GobreakerConfig::default());
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        assert!(drive(&mut b, &s).tr.is_empty());
    }

    #[test]
    fn interval_clears_counts_and_drops_in_flight_results() {
        let cfg = GobreakerConfig { interval: Dur::from_secs(10), ..GobreakerConfig::default() };
        let mut b = GobreakerBreaker::new(cfg);
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((9_000 + i, A));
            s.push((9_000 + i, F(1)));
        }
        s.push((9_999, A)); // admission 5, in flight across the interval end
        s.push((10_000, A)); // expiry 10 000 is not before 10 000: same generation
        s.push((10_000, Done(6, false, 1))); // 6th failure in a row: opens
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(10_000, C, O, "consecutive_failures")]);
        let cfg = GobreakerConfig { interval: Dur::from_secs(10), ..GobreakerConfig::default() };
        let mut b = GobreakerBreaker::new(cfg);
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((9_000 + i, A));
            s.push((9_000 + i, F(1)));
        }
        s.push((9_999, A)); // admission 5
        s.push((10_001, Done(5, false, 2))); // after the interval end: new generation, dropped
        s.push((10_002, A));
        s.push((10_002, F(1))); // the first failure of the new interval
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty());
    }

    #[test]
    fn the_next_interval_starts_at_the_first_call_after_expiry() {
        // Interval 10 s from 0: the expiry is 10 000. A call at 25 000 finds it expired and starts
        // a new generation there, expiring at 35 000 (a fixed grid would have restarted at 20 000
        // and cleared the counts again at 30 000). Its failure and five more at 34 000..34 004
        // are six in one generation: open at 34 004.
        let mut b = GobreakerBreaker::new(cfg_interval_10s());
        let mut s = vec![(25_000, A), (25_000, F(1))];
        for i in 0..5 {
            s.push((34_000 + i, A));
            s.push((34_000 + i, F(1)));
        }
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(34_004, C, O, "consecutive_failures")]);
        assert_eq!(b.expiry, Some(SimTime(34_004_000) + Dur::from_secs(60)), "open: expiry = now + Timeout");
        // The same calls one millisecond past 35 000 fall in the next generation: no open.
        let mut b = GobreakerBreaker::new(cfg_interval_10s());
        let mut s = vec![(25_000, A), (25_000, F(1))];
        for i in 0..5 {
            s.push((35_001 + i, A));
            s.push((35_001 + i, F(1)));
        }
        assert!(drive(&mut b, &s).tr.is_empty());
    }

    fn cfg_interval_10s() -> GobreakerConfig {
        GobreakerConfig { interval: Dur::from_secs(10), ..GobreakerConfig::default() }
    }

    #[test]
    fn an_excluded_probe_frees_its_half_open_slot() {
        let mut b = GobreakerBreaker::new(GobreakerConfig::default());
        let mut s = Vec::new();
        for i in 0..6 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        // Open at 5; half-open strictly after 65 005.
        s.extend([(65_006, A), (65_006, A), (65_007, I), (65_008, A), (65_009, S(1))]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (5, C, O, "consecutive_failures"),
                (65_006, O, H, "cooldown_elapsed"),
                (65_009, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[6..], "101", "the excluded probe's slot is free again at 65 008");
    }

    #[test]
    fn max_requests_probes_and_any_failure_reopens() {
        let cfg =
            GobreakerConfig { max_requests: 2, timeout: Dur::from_secs(5), ..GobreakerConfig::default() };
        let mut b = GobreakerBreaker::new(cfg);
        let mut s = Vec::new();
        for i in 0..6 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.extend([(5_006, A), (5_006, A), (5_006, A), (5_007, S(1)), (5_008, F(1))]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (5, C, O, "consecutive_failures"),
                (5_006, O, H, "cooldown_elapsed"),
                (5_008, H, O, "probe_failed")
            ]
        );
        assert_eq!(&r.admit_string()[6..], "110");
    }
}
