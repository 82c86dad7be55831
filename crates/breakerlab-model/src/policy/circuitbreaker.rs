//! The PyPI package `circuitbreaker` (fabfuel/circuitbreaker, preset `circuitbreaker`), the other
//! widely used Python breaker.
//!
//! Source: fabfuel/circuitbreaker tag 2.1.3 (commit 75f967a3fbec7fbf872abe5b978bd15f22eaae7c),
//! circuitbreaker.py (`CircuitBreaker.__init__`, `__exit__`, `_decorate_sync`, `reset`,
//! `__call_failed`, `state`, `open_remaining`, `build_failure_predicate`).
//!
//! Reproduced:
//! - defaults `FAILURE_THRESHOLD = 5`, `RECOVERY_TIMEOUT = 30` (seconds), `EXPECTED_EXCEPTION =
//!   Exception`: every error is a failure. `expected_exception` maps to the outcome classes
//!   counted as failures (`failure_on`); any other outcome, an ignored one included, leaves the
//!   `with` block without an expected exception and so calls `reset()`, like a success;
//! - no lock: calls overlap. A decorated call first reads `opened` (the state) and is refused
//!   only when it reads OPEN;
//! - the state is derived: OPEN while `open_remaining > 0`, i.e. while
//!   `(opened + recovery_timeout) − monotonic() > 0` in float seconds (computed here in `f64`
//!   exactly as Python does, so a boundary lands on the same millisecond), then it reads
//!   HALF_OPEN and admits every call: no single trial. breakerlab reports OPEN → HALF_OPEN when a
//!   call first reads it (passive);
//! - any success, from any call in any state, `reset()`s: CLOSED with the count at 0 (a late
//!   success while open closes at once, `late_success`);
//! - a failure adds one to the count and opens when it is `>= failure_threshold`, restamping
//!   `opened`: in half-open the count is still at the threshold, so one failure reopens, and a
//!   late failure while open restarts the recovery timeout (no visible transition);
//! - `failure_threshold = 0` or `recovery_timeout = 0` silently fall back to the defaults in the
//!   library (`or`); here they are refused as errors instead.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, longer_than_zero};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// `CircuitBreaker(failure_threshold=5, recovery_timeout=30, expected_exception=Exception)`.
    CircuitbreakerConfig {
        failure_threshold: u32 = 5, "calls",
            "failure_threshold: opens when the failure count (reset by any success) reaches it (>=)";
        recovery_timeout: Dur = Dur::from_secs(30), "duration",
            "recovery_timeout: open time before the state reads half-open and lets every call through";
    }
}

impl Family for CircuitbreakerConfig {
    type Breaker = CircuitbreakerBreaker;
    const NAME: &'static str = "circuitbreaker";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "circuitbreaker",
        library: "circuitbreaker 2.1.3 (PyPI, fabfuel)",
        summary: "PyPI circuitbreaker defaults: 5 failures (reset by any success) open it; recovery_timeout 30 s; then every call is let through until one fails",
        source: "fabfuel/circuitbreaker tag 2.1.3 (75f967a3fbec7fbf872abe5b978bd15f22eaae7c), circuitbreaker.py (CircuitBreaker.__exit__, reset, __call_failed, state, open_remaining)",
        quirks: &[
            "half-open is only a derived state: after recovery_timeout every call is admitted (no single trial)",
            "any success resets to closed from any state: a late success while open closes at once",
            "the failure count is not reset on opening: in half-open one failure reopens; a late failure while open restarts the timeout",
            "expected_exception decides what counts (default Exception: every error); anything else resets like a success, so failure_on/ignore both map non-failures to resets",
            "the timeout is compared in float seconds of monotonic(): breakerlab does the same arithmetic",
        ],
        config: CircuitbreakerConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("failure_threshold", self.failure_threshold)?;
        longer_than_zero("recovery_timeout", self.recovery_timeout)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> CircuitbreakerBreaker {
        CircuitbreakerBreaker::new(self.clone())
    }
}

/// The breaker's state: a failure count and when it last opened.
#[derive(Clone, Debug)]
pub struct CircuitbreakerBreaker {
    cfg: CircuitbreakerConfig,
    phase: Phase,
    count: u64,
    /// `_opened`, in float seconds as `monotonic()` gives it.
    opened: f64,
}

/// Simulation time as `monotonic()` float seconds.
fn seconds(t: SimTime) -> f64 {
    t.micros() as f64 / 1e6
}

impl CircuitbreakerBreaker {
    /// A closed breaker.
    pub fn new(cfg: CircuitbreakerConfig) -> CircuitbreakerBreaker {
        CircuitbreakerBreaker { cfg, phase: Phase::new(), count: 0, opened: 0.0 }
    }

    /// `open_remaining <= 0`: the recovery timeout has run out.
    fn recovered(&self, now: SimTime) -> bool {
        (self.opened + seconds(SimTime::ZERO + self.cfg.recovery_timeout)) - seconds(now) <= 0.0
    }
}

impl Breaker for CircuitbreakerBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.phase.state() == State::Open {
            if !self.recovered(now) {
                return Admission::Reject;
            }
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
        }
        Admission::Allow(self.phase.ticket(self.phase.state() == State::HalfOpen))
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        if obs.verdict == Verdict::Failure {
            self.count += 1;
            if self.count >= u64::from(self.cfg.failure_threshold) {
                self.opened = seconds(now);
                let reason = match self.phase.state() {
                    State::HalfOpen => "probe_failed",
                    _ => "consecutive_failures",
                };
                self.phase.change(now, State::Open, reason, self.evidence_for(now, out), out);
            }
        } else {
            let reason = match self.phase.state() {
                State::Open => "late_success",
                _ => "probe_successes",
            };
            self.phase.change(now, State::Closed, reason, self.evidence_for(now, out), out);
            self.count = 0;
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    /// The failure count in every state (a success anywhere closes; in half-open the count is
    /// still at the threshold, so one failure reopens); in open, the time since `_opened`.
    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let threshold = u64::from(self.cfg.failure_threshold);
        if self.phase.state() == State::Open {
            let since = Dur::from_micros(now.micros().saturating_sub((self.opened * 1e6).round() as u64));
            ev.open_for(since, Test::AtLeast, "recovery_timeout", self.cfg.recovery_timeout);
        }
        ev.count("consecutive_failures", self.count, Test::AtLeast, "failure_threshold", threshold);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

    #[test]
    fn opens_at_the_threshold_and_half_open_admits_everyone() {
        let mut b = CircuitbreakerBreaker::new(CircuitbreakerConfig::default());
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.extend([
            (30_003, A),    // 29.999 s after opening at 4: rejected
            (30_004, A),    // the timeout ran out: half-open, admitted
            (30_004, A),    // admitted too: no single trial
            (30_010, F(1)), // the count is still 5: one failure reopens at 30 010
            (30_020, S(1)), // the other call's success resets it: closed at once
        ]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (4, C, O, "consecutive_failures"),
                (30_004, O, H, "cooldown_elapsed"),
                (30_010, H, O, "probe_failed"),
                (30_020, O, C, "late_success"),
            ]
        );
        assert_eq!(&r.admit_string()[5..], "011");
    }

    #[test]
    fn late_results_while_open_close_it_or_restart_the_timeout() {
        let cfg = CircuitbreakerConfig { failure_threshold: 2, recovery_timeout: Dur::from_secs(10) };
        let mut b = CircuitbreakerBreaker::new(cfg);
        let s = [
            (0, A),                      // 0: slow
            (1, A),                      // 1: slow
            (2, A),                      // 2
            (3, A),                      // 3
            (4, Done(2, false, 2)),      // count 1
            (5, Done(3, false, 2)),      // count 2: open at 5
            (8_000, Done(0, false, 8)),  // late failure: count 3, the timeout restarts at 8 000
            (15_000, A),                 // 10 s after 5, but not after 8 000: rejected
            (18_000, A),                 // half-open
            (18_001, Done(1, true, 18)), // the other late call succeeds: reset, closed
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (5, C, O, "consecutive_failures"),
                (18_000, O, H, "cooldown_elapsed"),
                (18_001, H, C, "probe_successes"),
            ]
        );
        assert_eq!(r.admit_string(), "111101");
        // A late success while open closes at once, skipping half-open.
        let mut b = CircuitbreakerBreaker::new(CircuitbreakerConfig { failure_threshold: 1, ..cfg_10s() });
        let r = drive(&mut b, &[(0, A), (1, A), (2, Done(1, false, 1)), (3, Done(0, true, 3))]);
        assert_eq!(r.tr, vec![(2, C, O, "consecutive_failures"), (3, O, C, "late_success")]);
    }

    fn cfg_10s() -> CircuitbreakerConfig {
        CircuitbreakerConfig { recovery_timeout: Dur::from_secs(10), ..CircuitbreakerConfig::default() }
    }

    #[test]
    fn the_timeout_is_compared_in_float_seconds_as_python_does() {
        // For some opening times a, (a + 0.3) − (a + 300 ms) in float seconds is still above 0:
        // Python's circuitbreaker then stays open at exactly the timeout, and so does this.
        let rt = Dur::from_millis(300);
        let cfg = CircuitbreakerConfig { failure_threshold: 1, recovery_timeout: rt };
        let below = (1..10_000u64)
            .find(|a| (*a as f64 / 1000.0 + 0.3) - (*a + 300) as f64 / 1000.0 > 0.0)
            .expect("some start rounds up");
        let mut b = CircuitbreakerBreaker::new(cfg);
        let r = drive(&mut b, &[(below, A), (below, F(1)), (below + 300, A), (below + 301, A)]);
        assert_eq!(r.admit_string(), "101", "at exactly the timeout the float remainder is still > 0");
        assert_eq!(r.tr[1], (below + 301, O, H, "cooldown_elapsed"));
    }
}
