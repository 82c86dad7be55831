//! pybreaker's `CircuitBreaker` (preset `pybreaker`), with its lock modelled deterministically.
//!
//! Source: danielfm/pybreaker @ 0d45551e3ff23d01817987d8854be92428e47e70,
//! src/pybreaker/__init__.py (`CircuitBreaker.call`, `_handle_error`, `_handle_success`,
//! `CircuitClosedState.on_failure`, `CircuitOpenState.before_call`,
//! `CircuitHalfOpenState.on_success` / `on_failure`).
//!
//! Reproduced:
//! - `call()` runs the whole protected call under the breaker's `RLock`: calls are serialized.
//!   A second call would block until the first returns; the engine cannot hold a call, so it
//!   is rejected instead (counted as a fallback) while another call is in flight, in any state.
//!   This is the deterministic choice: a blocked caller's wait is not modelled;
//! - a failure increments the counter and opens when `counter >= fail_max` (5); any success
//!   resets it; excluded exceptions count as successes (`_handle_error` calls
//!   `_handle_success`): here every class the classifier does not count as a failure, ignored
//!   classes included, is a success;
//! - OPEN → HALF_OPEN in `before_call` when `now >= opened_at + reset_timeout` (passive; the
//!   revision compares `now < opened_at + timeout` to stay open); that call is the trial;
//! - HALF_OPEN: a failure reopens (`opened_at = now`); `success_threshold` consecutive trial
//!   successes close it (pybreaker 1.4's parameter; the revision read closes on the first
//!   success, which is the default 1); closing resets the counter.

use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, py_seconds};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{ParamMeta, PolicyError, invalid};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// `CircuitBreaker(fail_max=5, reset_timeout=60, success_threshold=1)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PybreakerConfig {
    /// `fail_max` (5): failures (reset by any success) that open.
    pub fail_max: u32,
    /// `reset_timeout` (60 s).
    pub reset_timeout: Dur,
    /// `success_threshold` (1): trial successes in a row that close.
    pub success_threshold: u32,
}

impl Default for PybreakerConfig {
    fn default() -> PybreakerConfig {
        PybreakerConfig { fail_max: 5, reset_timeout: Dur::from_secs(60), success_threshold: 1 }
    }
}

impl Family for PybreakerConfig {
    type Breaker = PybreakerBreaker;
    const NAME: &'static str = "pybreaker";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "pybreaker",
        library: "pybreaker 1.x",
        summary: "pybreaker defaults: 5 failures (reset by any success) open it; reset_timeout 60 s; the next call is the trial; calls serialized by the breaker's lock",
        source: "danielfm/pybreaker @ 0d45551e3ff23d01817987d8854be92428e47e70, src/pybreaker/__init__.py (CircuitBreaker.call, CircuitBreakerState._handle_error, Circuit*State)",
        quirks: &[
            "call() holds the breaker's RLock for the whole call: one call at a time; here a call arriving while one is in flight is rejected (the engine cannot make it wait)",
            "excluded errors count as successes and reset the failure counter (no 'ignored' outcome)",
            "opens when the counter reaches fail_max (>=); half-open at now >= opened_at + reset_timeout, on the next call",
            "the trial's failure reopens; success_threshold trial successes close (1 in the revision read)",
        ],
        config: PybreakerConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];
    const PARAMS: &'static [ParamMeta] = &[
        ParamMeta::new("fail_max", "calls", "fail_max: opens when the failure counter reaches it (>=)"),
        ParamMeta::new(
            "reset_timeout",
            "duration",
            "reset_timeout: open time before the next call is a trial",
        ),
        ParamMeta::new("success_threshold", "calls", "success_threshold: trial successes that close"),
    ];

    fn validate(&self) -> Result<(), PolicyError> {
        if self.fail_max == 0 {
            return Err(invalid("fail_max", "at least 1", "0"));
        }
        if self.success_threshold == 0 {
            return Err(invalid("success_threshold", "at least 1", "0"));
        }
        Ok(())
    }

    fn build(&self, _seed: u64) -> PybreakerBreaker {
        PybreakerBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String, String>> {
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

    /// True while a call holds the lock.
    pub fn busy(&self) -> bool {
        self.busy
    }
}

impl Breaker for PybreakerBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.busy {
            return Admission::Reject;
        }
        if self.phase.state() == State::Open {
            if now < self.opened_at + self.cfg.reset_timeout {
                return Admission::Reject;
            }
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", out);
            self.successes = 0;
        }
        self.busy = true;
        Admission::Allow(self.phase.ticket(self.phase.state() == State::HalfOpen))
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.busy = false;
        if obs.verdict == Verdict::Failure {
            self.counter += 1;
            match self.phase.state() {
                State::Closed if self.counter >= u64::from(self.cfg.fail_max) => {
                    self.phase.enter(now, State::Open, "consecutive_failures", out);
                    self.opened_at = now;
                }
                State::HalfOpen => {
                    self.phase.enter(now, State::Open, "probe_failed", out);
                    self.opened_at = now;
                }
                _ => {}
            }
        } else {
            self.counter = 0;
            if self.phase.state() == State::HalfOpen {
                self.successes += 1;
                if self.successes >= u64::from(self.cfg.success_threshold) {
                    self.phase.enter(now, State::Closed, "probe_successes", out);
                }
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
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
            s.push((i, A)); // blocked by the lock: rejected
            s.push((i, F(1)));
        }
        s.extend([(4, A), (4, I)]); // an ignored (excluded) result is a success: counter reset
        for i in 5..10 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.push((60_008, A)); // 59 999 ms after opening at 9
        s.push((60_009, A)); // exactly reset_timeout: the trial
        s.push((60_009, A)); // lock held by the trial
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
