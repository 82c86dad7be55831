//! failsafe-go's count-based `CircuitBreaker` (preset `failsafe-go`).
//!
//! Source: failsafe-go/failsafe-go @ 0e452f4ad247f2e5cb4e65bc00ee3c553cb6e6d5,
//! circuitbreaker/circuitstates.go (`closedState`, `openState`, `halfOpenState`
//! `checkThresholdAndReleasePermit`, `tryAcquirePermit`) and circuitbreaker/
//! circuitbreakerbuilder.go (`Builder`: failure threshold 1 of 1, delay 1 minute).
//!
//! Reproduced:
//! - CLOSED keeps the last `capacity` results (`failure_execution_threshold` if set, else
//!   `failure_thresholding_capacity`); after every result it opens when at least
//!   `failure_execution_threshold` results are held and `failures >= failure_threshold`. There
//!   is no minimum beyond that: "5 of 10" opens after 5 failures in the first 5 calls;
//! - OPEN → HALF_OPEN on the first call once `now − opened >= delay` (passive);
//! - HALF_OPEN permits `capacity` executions (`success_thresholding_capacity`, else the closed
//!   capacity) and releases a permit after every result; with a success threshold it closes at
//!   `successes >= success_threshold` and reopens at `failures > capacity − success_threshold`;
//!   without one it reopens at `failures >= failure_threshold` and closes at
//!   `successes > capacity − failure_threshold`;
//! - no generation check: a late result lands in the current state's stats (and, in
//!   HALF_OPEN, also releases a permit, so more probes can run than permitted).
//!
//! failsafe-go has no ignored outcome: a result or error the policy does not handle is recorded
//! as a success, so classes in `ignore` count as successes here.
//! Time-based thresholding (`WithFailureThresholdPeriod`, `WithFailureRateThreshold`) and
//! `WithDelayFn` are not modelled.

use super::presets::ParamMeta;
use super::spec::{FamilyParams, PolicyError, impossible, invalid};
use super::window::{CountWindow, Sample};
use super::{Admission, Breaker, Observation, State, Ticket, Transitions, emit};
use crate::outcome::Verdict;
use crate::time::{Dur, SimTime};
use serde::{Deserialize, Serialize};

/// The builder's count-based settings, in snake_case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailsafeConfig {
    /// `WithFailureThresholdRatio(failureThreshold, _)` (1).
    pub failure_threshold: u32,
    /// `WithFailureThresholdRatio(_, failureThresholdingCapacity)` (1).
    pub failure_thresholding_capacity: u32,
    /// `WithFailureExecutionThreshold` (0 = none).
    pub failure_execution_threshold: u32,
    /// `WithSuccessThresholdRatio(successThreshold, _)` (0 = use the failure threshold).
    pub success_threshold: u32,
    /// `WithSuccessThresholdRatio(_, successThresholdingCapacity)` (0 = the closed capacity).
    pub success_thresholding_capacity: u32,
    /// `WithDelay` (1 minute).
    pub delay: Dur,
}

impl Default for FailsafeConfig {
    fn default() -> FailsafeConfig {
        FailsafeConfig {
            failure_threshold: 1,
            failure_thresholding_capacity: 1,
            failure_execution_threshold: 0,
            success_threshold: 0,
            success_thresholding_capacity: 0,
            delay: Dur::from_secs(60),
        }
    }
}

impl FailsafeConfig {
    fn closed_capacity(&self) -> u32 {
        if self.failure_execution_threshold != 0 {
            self.failure_execution_threshold
        } else {
            self.failure_thresholding_capacity
        }
    }
    fn half_open_capacity(&self) -> u32 {
        if self.success_thresholding_capacity != 0 {
            self.success_thresholding_capacity
        } else {
            self.closed_capacity()
        }
    }
}

impl FamilyParams for FailsafeConfig {
    const PARAMS: &'static [ParamMeta] = &[
        ParamMeta::new(
            "failure_threshold",
            "calls",
            "failures among the last capacity results that open (>=)",
        ),
        ParamMeta::new("failure_thresholding_capacity", "calls", "the closed-state window: last N results"),
        ParamMeta::new(
            "failure_execution_threshold",
            "calls",
            "results needed before deciding; also the window size when set (0 = none)",
        ),
        ParamMeta::new(
            "success_threshold",
            "calls",
            "half-open successes that close (0 = derive from the failure threshold)",
        ),
        ParamMeta::new(
            "success_thresholding_capacity",
            "calls",
            "half-open permits and window (0 = the closed capacity)",
        ),
        ParamMeta::new("delay", "duration", "WithDelay: open time before the next call half-opens (>=)"),
    ];

    fn validate(&self) -> Result<(), PolicyError> {
        if self.failure_threshold == 0 {
            return Err(invalid("failure_threshold", "at least 1", "0"));
        }
        if self.closed_capacity() < self.failure_threshold {
            return Err(impossible(format!(
                "failure_threshold ({}) exceeds the thresholding capacity ({})",
                self.failure_threshold,
                self.closed_capacity()
            )));
        }
        if self.success_threshold > self.half_open_capacity() {
            return Err(impossible(format!(
                "success_threshold ({}) exceeds the half-open capacity ({})",
                self.success_threshold,
                self.half_open_capacity()
            )));
        }
        if self.delay.is_zero() {
            return Err(invalid("delay", "a duration greater than 0", "0s"));
        }
        Ok(())
    }
}

/// failsafe-go's circuit breaker.
#[derive(Clone, Debug)]
pub struct FailsafeBreaker {
    cfg: FailsafeConfig,
    state: State,
    generation: u64,
    closed: CountWindow,
    half: CountWindow,
    permits: u64,
    opened_at: SimTime,
}

impl FailsafeBreaker {
    /// A closed breaker.
    pub fn new(cfg: FailsafeConfig) -> FailsafeBreaker {
        FailsafeBreaker {
            closed: CountWindow::new(cfg.closed_capacity()),
            half: CountWindow::new(cfg.half_open_capacity()),
            cfg,
            state: State::Closed,
            generation: 0,
            permits: 0,
            opened_at: SimTime::ZERO,
        }
    }

    fn set(&mut self, at: SimTime, to: State, reason: &'static str, out: &mut Transitions) {
        emit(out, at, self.state, to, reason);
        self.state = to;
        self.generation += 1;
    }

    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        self.set(now, State::Open, reason, out);
        self.opened_at = now;
    }
}

impl Breaker for FailsafeBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.state == State::Open {
            if now.since(self.opened_at) < self.cfg.delay {
                return Admission::Reject;
            }
            self.set(now, State::HalfOpen, "cooldown_elapsed", out);
            self.half.clear();
            self.permits = u64::from(self.cfg.half_open_capacity());
        }
        if self.state == State::HalfOpen {
            if self.permits == 0 {
                return Admission::Reject;
            }
            self.permits -= 1;
            return Admission::Allow(Ticket { generation: self.generation, probe: true });
        }
        Admission::Allow(Ticket { generation: self.generation, probe: false })
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        // failsafe-go records an unhandled result or error as a success: no ignored outcome.
        let failed = obs.verdict == Verdict::Failure;
        let s = Sample { at: now, failed, slow: false, over: false };
        let c = &self.cfg;
        match self.state {
            State::Closed => {
                self.closed.push(s);
                let t = self.closed.tally();
                if t.calls >= u64::from(c.failure_execution_threshold)
                    && t.failures >= u64::from(c.failure_threshold)
                {
                    self.open(now, "failures_in_window", out);
                    self.closed.clear();
                }
            }
            State::Open => self.closed.push(s),
            State::HalfOpen => {
                self.half.push(s);
                let t = self.half.tally();
                let successes = t.calls - t.failures;
                let (close, reopen) = if c.success_threshold != 0 {
                    let cap = u64::from(c.half_open_capacity());
                    let st = u64::from(c.success_threshold);
                    (successes >= st, t.failures > cap - st)
                } else {
                    let cap = u64::from(c.closed_capacity());
                    let ft = u64::from(c.failure_threshold);
                    (successes > cap - ft, t.failures >= ft)
                };
                if close {
                    self.set(now, State::Closed, "probe_successes", out);
                    self.closed.clear();
                } else if reopen {
                    self.open(now, "probe_failed", out);
                }
                self.permits += 1;
            }
        }
    }

    fn state(&self) -> State {
        self.state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

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
}
