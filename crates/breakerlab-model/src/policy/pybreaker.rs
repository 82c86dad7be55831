//! pybreaker's `CircuitBreaker` (preset `pybreaker`), with its lock.
//!
//! Source: danielfm/pybreaker tag v1.4.1 (commit faf54de652991899768d7075feab6fcc10b72ba7),
//! src/pybreaker/__init__.py (`CircuitBreaker.call`, `calling`, `open`, `half_open`, `close`,
//! `CircuitBreakerState.call`, `generator_call`, `_handle_error`, `_handle_success`,
//! `CircuitClosedState.on_failure`, `CircuitOpenState.before_call`,
//! `CircuitHalfOpenState.on_success` / `on_failure`).
//!
//! Reproduced:
//! - `serialize = true` (the default, `breaker.call(func)`): `call()` runs the whole protected
//!   call under the breaker's `RLock`, so a call arriving while another is in flight waits for
//!   the lock ([`Admission::Wait`]) and takes it, in arrival order, when that call returns; the
//!   wait counts in its latency, and the state is checked once it holds the lock.
//!   `serialize = false` is `with breaker.calling():`: `call()` returns a generator at once,
//!   so the block runs outside the lock and calls overlap;
//! - a result is handled by the state object current when the call was admitted
//!   (`self.phase.state().call` → `generator_call`): a failure of a call admitted closed increments the
//!   counter and opens when `counter >= fail_max` (5), whatever the state is now; a failure of
//!   a call admitted half-open opens (again); `open()` always sets `opened_at = now`, so a
//!   failure while already open restarts the timeout without a visible transition;
//! - any success resets the counter; excluded exceptions count as successes (`_handle_error`
//!   calls `_handle_success`): here every class the classifier does not count as a failure,
//!   ignored classes included, is a success;
//! - OPEN → HALF_OPEN in `before_call` when `now >= opened_at + reset_timeout` (passive); the
//!   success counter is reset on entering half-open and on opening;
//! - a success of a call admitted half-open increments the success counter and closes when it
//!   reaches `success_threshold` (1), even if the circuit reopened meanwhile; closing resets
//!   both counters.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, py_seconds};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config};
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use std::fmt::Write as _;

family_config! {
    /// `CircuitBreaker(fail_max=5, reset_timeout=60, success_threshold=1)`, used through `call()`.
    PybreakerConfig {
        fail_max: u32 = 5, "calls", "fail_max: opens when the failure counter reaches it (>=)";
        reset_timeout: Dur = Dur::from_secs(60), "duration",
            "reset_timeout: open time before the next call is a trial";
        success_threshold: u32 = 1, "calls", "success_threshold: trial successes that close";
        serialize: bool = true, "bool",
            "true: breaker.call(), whose lock makes concurrent calls wait their turn; false: `with breaker.calling():`, no lock";
    }
}

impl Family for PybreakerConfig {
    type Breaker = PybreakerBreaker;
    const NAME: &'static str = "pybreaker";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "pybreaker",
        library: "pybreaker 1.4.1",
        summary: "pybreaker defaults: 5 failures (reset by any success) open it; reset_timeout 60 s; the next call is the trial; calls serialized by the breaker's lock",
        source: "danielfm/pybreaker tag v1.4.1 (faf54de652991899768d7075feab6fcc10b72ba7), src/pybreaker/__init__.py (CircuitBreaker.call, calling, open, close, CircuitBreakerState.call, generator_call, _handle_error, Circuit*State)",
        quirks: &[
            "call() holds the breaker's RLock for the whole call: concurrent calls wait for it in arrival order (the wait is part of their latency); serialize = false is `with breaker.calling():`, which runs the block outside the lock",
            "a result is handled by the state current when the call was admitted: a half-open admission's failure reopens, its success can close a circuit that reopened meanwhile; a failure while open restarts reset_timeout",
            "excluded errors count as successes and reset the failure counter (no 'ignored' outcome)",
            "opens when the counter reaches fail_max (>=); half-open at now >= opened_at + reset_timeout, on the next call",
            "the trial's failure reopens; success_threshold trial successes close (1 in the revision read)",
        ],
        config: PybreakerConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("fail_max", self.fail_max)?;
        at_least_one("success_threshold", self.success_threshold)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> PybreakerBreaker {
        PybreakerBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Pybreaker).then(|| Ok(pybreaker(input.header, input.name, self)))
    }
}

/// pybreaker's state machine behind its lock.
#[derive(Clone, Debug)]
pub struct PybreakerBreaker {
    cfg: PybreakerConfig,
    phase: Phase,
    counter: u64,
    successes: u64,
    opened_at: SimTime,
    busy: bool,
}

impl PybreakerBreaker {
    /// A closed, idle breaker.
    pub fn new(cfg: PybreakerConfig) -> PybreakerBreaker {
        PybreakerBreaker {
            cfg,
            phase: Phase::new(),
            counter: 0,
            successes: 0,
            opened_at: SimTime::ZERO,
            busy: false,
        }
    }

    /// `CircuitBreaker.open()`: `opened_at = now`, a fresh open state (success counter reset),
    /// even when already open.
    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        let ev = self.evidence_for(now, out);
        self.opened_at = now;
        self.successes = 0;
        self.phase.change(now, State::Open, reason, ev, out);
    }

    /// True while a call holds the lock.
    pub fn busy(&self) -> bool {
        self.busy
    }
}

impl Breaker for PybreakerBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.busy {
            return Admission::Wait;
        }
        if self.phase.state() == State::Open {
            if now < self.opened_at + self.cfg.reset_timeout {
                return Admission::Reject;
            }
            self.phase.change(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
            self.successes = 0;
        }
        self.busy = self.cfg.serialize;
        // The ticket remembers which state object handles the result.
        Admission::Allow(Ticket { generation: 0, probe: self.phase.state() == State::HalfOpen })
    }

    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.busy = false;
        if obs.verdict == Verdict::Failure {
            self.counter += 1;
            if ticket.probe {
                self.open(now, "probe_failed", out);
            } else if self.counter >= u64::from(self.cfg.fail_max) {
                let reason = if self.phase.state() == State::HalfOpen {
                    "probe_failed"
                } else {
                    "consecutive_failures"
                };
                self.open(now, reason, out);
            }
        } else {
            self.counter = 0;
            if ticket.probe {
                self.successes += 1;
                if self.successes >= u64::from(self.cfg.success_threshold) {
                    let reason =
                        if self.phase.state() == State::Open { "late_success" } else { "probe_successes" };
                    self.phase.change(now, State::Closed, reason, self.evidence_for(now, out), out);
                    self.successes = 0;
                }
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match self.phase.state() {
            State::Closed => {
                ev.count("fail_counter", self.counter, Test::AtLeast, "fail_max", u64::from(c.fail_max))
            }
            State::Open => {
                ev.open_for(now.since(self.opened_at), Test::AtLeast, "reset_timeout", c.reset_timeout)
            }
            State::HalfOpen => {
                ev.count(
                    "probe_successes",
                    self.successes,
                    Test::AtLeast,
                    "success_threshold",
                    u64::from(c.success_threshold),
                );
                ev.fact_count("fail_counter", self.counter);
            }
        }
    }

    fn holds(&self, _key: u64) -> bool {
        self.busy
    }
}

/// The configuration in Pybreaker's syntax.
fn pybreaker(header: &[String], name: &str, c: &PybreakerConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let _ = writeln!(s, "import pybreaker");
    let _ = writeln!(s);
    let mut args =
        vec![format!("fail_max={}", c.fail_max), format!("reset_timeout={}", py_seconds(c.reset_timeout))];
    if c.success_threshold != 1 {
        let _ = writeln!(s, "# success_threshold needs pybreaker >= 1.4");
        args.push(format!("success_threshold={}", c.success_threshold));
    }
    args.push(format!("name={name:?}"));
    let _ = writeln!(s, "breaker = pybreaker.CircuitBreaker({})", args.join(", "));
    if c.serialize {
        let _ = writeln!(s, "# use: breaker.call(func, ...)  (its lock serializes calls)");
    } else {
        let _ = writeln!(s, "# use: with breaker.calling(): ...  (no lock: calls overlap)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

    #[test]
    fn serialized_calls_open_at_fail_max_and_reopen_on_trial_failure() {
        let mut b = PybreakerBreaker::new(PybreakerConfig::default());
        let mut s = Vec::new();
        for i in 0..4 {
            s.push((i, A));
            s.push((i, A)); // blocked by the lock: waits
            s.push((i, F(1)));
        }
        s.extend([(4, A), (4, I)]); // an ignored (excluded) result is a success: counter reset
        for i in 5..10 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.push((60_008, A)); // 59 999 ms after opening at 9
        s.push((60_009, A)); // exactly reset_timeout: the trial
        s.push((60_009, A)); // lock held by the trial: waits
        s.push((60_010, F(1)));
        s.push((120_010, A));
        s.push((120_011, S(1)));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (9, C, O, "consecutive_failures"),
                (60_009, O, H, "cooldown_elapsed"),
                (60_010, H, O, "probe_failed"),
                (120_010, O, H, "cooldown_elapsed"),
                (120_011, H, C, "probe_successes"),
            ]
        );
        assert_eq!(r.admit_string(), "101010101111110101");
        assert_eq!(r.waits, vec![1, 3, 5, 7, 16]);
    }

    #[test]
    fn calling_runs_outside_the_lock_and_each_result_uses_its_admission_state() {
        // serialize = false: calls overlap. fail_max 2, reset_timeout 60 s.
        let cfg = PybreakerConfig { fail_max: 2, serialize: false, ..PybreakerConfig::default() };
        let mut b = PybreakerBreaker::new(cfg);
        let s = [
            (0, A),                          // 0: admitted closed, still running at the end
            (1, A),                          // 1
            (2, A),                          // 2: overlaps, no lock
            (3, Done(1, false, 2)),          // counter 1
            (4, Done(2, false, 2)),          // counter 2: opens at 4
            (60_004, A),                     // 3: the trial (half-open)
            (60_005, A),                     // 4: also admitted in half-open: no lock
            (60_006, Done(3, true, 2)),      // the trial succeeds: closes at 60 006
            (60_007, Done(4, false, 2)),     // a half-open admission's failure reopens a closed circuit
            (60_008, Done(0, true, 60_008)), // a closed admission's success: counter reset only
            (120_006, A),                    // 5: 59 999 ms after reopening: rejected
            (120_007, A),                    // 6: the next trial
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (4, C, O, "consecutive_failures"),
                (60_004, O, H, "cooldown_elapsed"),
                (60_006, H, C, "probe_successes"),
                (60_007, C, O, "probe_failed"),
                (120_007, O, H, "cooldown_elapsed"),
            ]
        );
        assert_eq!(r.admit_string(), "1111101");
        assert!(r.waits.is_empty());
    }

    #[test]
    fn a_late_trial_success_closes_a_reopened_circuit() {
        // serialize = false, fail_max 1: two trials in half-open; the second fails first and
        // reopens; the first's success then closes the open circuit (its state object is the
        // half-open one, whose on_success calls close()).
        let cfg = PybreakerConfig { fail_max: 1, serialize: false, ..PybreakerConfig::default() };
        let mut b = PybreakerBreaker::new(cfg);
        let s = [
            (0, A),
            (0, F(1)),
            (60_000, A),                 // 1: trial
            (60_001, A),                 // 2: trial too
            (60_002, Done(2, false, 1)), // reopens at 60 002
            (60_003, Done(1, true, 3)),  // closes at 60 003
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (60_000, O, H, "cooldown_elapsed"),
                (60_002, H, O, "probe_failed"),
                (60_003, O, C, "late_success"),
            ]
        );
    }

    #[test]
    fn success_threshold_needs_consecutive_trials() {
        let cfg = PybreakerConfig { fail_max: 1, success_threshold: 2, ..PybreakerConfig::default() };
        let mut b = PybreakerBreaker::new(cfg);
        let s = [(0, A), (0, F(1)), (60_000, A), (60_001, S(1)), (60_002, A), (60_003, S(1))];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (60_000, O, H, "cooldown_elapsed"),
                (60_003, H, C, "probe_successes")
            ]
        );
        assert!(!b.busy());
    }
}
