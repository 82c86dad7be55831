//! opossum's `CircuitBreaker` (preset `opossum`), with its wall-clock timers modelled in
//! simulation time.
//!
//! Source: nodeshift/opossum (10.x), lib/circuit.js (`fire`, `fail`, `_startTimer`, the
//! `success` handler) and lib/status.js (`Status`: buckets rotated by `setInterval`). The
//! index's copy of `fail()` read here: file id 741075302 (`if ((stats.fires <
//! circuit.volumeThreshold) && !circuit.halfOpen) return; const errorRate = stats.failures /
//! stats.fires * 100; if (errorRate > errorThresholdPercentage || circuit.halfOpen) open()`);
//! status.js @ 0045b3717a9bd3fa4bc60e20e3162edcc292e022.
//!
//! Reproduced:
//! - `fires` is counted when `fire()` is called, before the open check: rejected calls and
//!   calls still in flight are in the denominator; `failures` (timeouts included) when a call
//!   fails;
//! - the rolling window is `rolling_count_buckets` buckets of `floor(rolling_count_timeout /
//!   buckets)`, rotated by a `setInterval` started with the breaker: modelled as buckets aligned
//!   on multiples of the bucket length from time zero (an event at exactly a rotation instant
//!   goes into the new bucket);
//! - only a failure can trip: `failures / fires · 100 > error_threshold_percentage` (strictly
//!   greater), once `fires >= volume_threshold`; with `fires` rotated out it divides by zero,
//!   which JavaScript makes `Infinity`: it trips;
//! - stats are never reset (not on open, not on close): after closing, the outage's failures
//!   are still in the window;
//! - OPEN → HALF_OPEN by a timer `reset_timeout` after opening (active, via `deadline()`); the
//!   first call after it goes through (`pendingClose`), the others are rejected until it ends;
//! - in HALF_OPEN any success closes and any failure reopens (restarting the timer), whichever
//!   call it came from (late results decide); a late failure while OPEN changes nothing;
//! - `allow_warm_up`: no trip during the first `rolling_count_timeout`;
//! - `timeout` (10 s) is the client's call timeout; the action is not cancelled.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, js_ms, num};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, invalid, longer_than_zero, require};
use super::ring::CountRing;
use crate::Result;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};
use std::fmt::Write as _;

family_config! {
    /// opossum's options, in snake_case.
    OpossumConfig {
        timeout: Dur = Dur::from_secs(10), "duration", "timeout: the call timeout; a timeout is a failure";
        reset_timeout: Dur = Dur::from_secs(30), "duration",
            "resetTimeout: a timer from opening to half-open";
        error_threshold_percentage: f64 = 50.0, "percent",
            "errorThresholdPercentage: trips when failures / fires * 100 is strictly above";
        rolling_count_timeout: Dur = Dur::from_secs(10), "duration", "rollingCountTimeout: the stats window";
        rolling_count_buckets: u32 = 10, "count", "rollingCountBuckets: buckets of the window";
        volume_threshold: u32 = 0, "calls", "volumeThreshold: fires needed before it can trip";
        allow_warm_up: bool = false, "bool", "allowWarmUp: no trip during the first window";
    }
}

impl Family for OpossumConfig {
    type Breaker = OpossumBreaker;
    const NAME: &'static str = "opossum";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "opossum",
        library: "opossum 10.x",
        summary: "opossum 10 defaults: on a failure, opens when failures / fires > 50 % over 10 s (10 buckets); a timer half-opens after 30 s; one probe; 10 s call timeout",
        source: "nodeshift/opossum 10.x, lib/circuit.js (fire, fail, _startTimer; copy read: index file 741075302) and lib/status.js @ 0045b3717a9bd3fa4bc60e20e3162edcc292e022",
        quirks: &[
            "strictly greater: exactly 50 % does not open",
            "fires counts every fire(): rejected calls and calls still in flight dilute the error rate",
            "volumeThreshold 0: one failure after idle opens it (opossum#232)",
            "only a failure can trip; a failure whose fire has rotated out divides by zero (Infinity) and trips",
            "stats are never reset: after closing, the outage's counts stay in the 10 s window",
            "half-open is active (a timer after resetTimeout); the first call is the probe, the rest are rejected",
            "in half-open any success closes and any failure reopens, whichever call it came from",
            "buckets rotate on a setInterval from the breaker's creation: modelled as buckets aligned on time zero",
            "timeout 10 s is imposed on every call; the action is not cancelled",
        ],
        config: OpossumConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        let p = self.error_threshold_percentage;
        if !(p.is_finite() && (0.0..=100.0).contains(&p)) {
            return Err(invalid("error_threshold_percentage", "a percentage from 0 to 100", &p.to_string()));
        }
        at_least_one("rolling_count_buckets", self.rolling_count_buckets)?;
        let bucket_ms = self.rolling_count_timeout.micros() / 1000 / u64::from(self.rolling_count_buckets);
        require(
            bucket_ms != 0,
            "rolling_count_timeout",
            "at least 1ms per bucket",
            self.rolling_count_timeout,
        )?;
        longer_than_zero("reset_timeout", self.reset_timeout)?;
        longer_than_zero("timeout", self.timeout)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> OpossumBreaker {
        OpossumBreaker::new(self.clone())
    }

    fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
        Some(Some(self.timeout))
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        (lib == Library::Opossum).then(|| opossum(input.header, input.name, self))
    }
}

/// opossum's state machine and status window.
#[derive(Clone, Debug)]
pub struct OpossumBreaker {
    cfg: OpossumConfig,
    phase: Phase,
    /// `(fires, failures)` per bucket.
    ring: CountRing,
    bucket_len: u64,
    opened_at: SimTime,
    pending_close: bool,
}

impl OpossumBreaker {
    /// A closed breaker; its bucket timer starts at time zero.
    pub fn new(cfg: OpossumConfig) -> OpossumBreaker {
        let n = cfg.rolling_count_buckets.max(1);
        let bucket_len = (cfg.rolling_count_timeout.micros() / 1000 / u64::from(n)).max(1) * 1000;
        OpossumBreaker {
            ring: CountRing::new(n as usize),
            bucket_len,
            cfg,
            phase: Phase::new(),
            opened_at: SimTime::ZERO,
            pending_close: false,
        }
    }

    fn count(&mut self, now: SimTime, fires: u64, failures: u64) {
        self.ring.add(now.micros() / self.bucket_len, (fires, failures));
    }

    fn stats(&self, now: SimTime) -> (u64, u64) {
        self.ring.window(now.micros() / self.bucket_len)
    }

    fn open(&mut self, at: SimTime, reason: &'static str, out: &mut Transitions) {
        self.pending_close = false;
        if self.phase.state() != State::Open {
            self.phase.enter(at, State::Open, reason, self.evidence_for(at, out), out);
            self.opened_at = at;
        }
    }

    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        if self.phase.state() == State::Open && now >= self.opened_at + self.cfg.reset_timeout {
            let at = self.opened_at + self.cfg.reset_timeout;
            self.phase.enter(at, State::HalfOpen, "cooldown_elapsed", self.evidence_for(at, out), out);
            self.pending_close = true;
        }
    }
}

impl Breaker for OpossumBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        self.count(now, 1, 0);
        match self.phase.state() {
            State::Closed => Admission::Allow(self.phase.ticket(false)),
            State::HalfOpen if self.pending_close => {
                self.pending_close = false;
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Reject,
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        match obs.verdict {
            Verdict::Ignored => {}
            Verdict::Success => {
                if self.phase.state() == State::HalfOpen {
                    self.pending_close = false;
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                }
            }
            Verdict::Failure => {
                self.count(now, 0, 1);
                if self.cfg.allow_warm_up && now < SimTime::ZERO + self.cfg.rolling_count_timeout {
                    return;
                }
                let half_open = self.phase.state() == State::HalfOpen;
                let (fires, failures) = self.stats(now);
                if fires < u64::from(self.cfg.volume_threshold) && !half_open {
                    return;
                }
                // failures / 0 is Infinity in JavaScript: above any threshold.
                let above = fires == 0
                    || failures as f64 / fires as f64 * 100.0 > self.cfg.error_threshold_percentage;
                if half_open {
                    self.open(now, "probe_failed", out);
                } else if above {
                    self.open(now, "error_percentage", out);
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
                let (fires, failures) = self.stats(now);
                // failures / 0 is Infinity in JavaScript: shown as 100 per failure.
                let pct =
                    if fires == 0 { failures as f64 * 100.0 } else { failures as f64 / fires as f64 * 100.0 };
                ev.count("fires", fires, Test::AtLeast, "volume_threshold", u64::from(c.volume_threshold));
                ev.ratio(
                    "error_percentage",
                    pct,
                    Test::Above,
                    "error_threshold_percentage",
                    c.error_threshold_percentage,
                );
                if c.allow_warm_up {
                    ev.time(
                        "time_since_start",
                        now.since(SimTime::ZERO),
                        Test::AtLeast,
                        "rolling_count_timeout",
                        c.rolling_count_timeout,
                    );
                }
            }
            State::Open => {
                ev.open_for(now.since(self.opened_at), Test::AtLeast, "reset_timeout", c.reset_timeout)
            }
            State::HalfOpen => {
                ev.count("probes_admitted", u64::from(!self.pending_close), Test::Of, "probes", 1)
            }
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.phase.state() == State::Open).then(|| self.opened_at + self.cfg.reset_timeout)
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

/// The configuration in Opossum's syntax.
fn opossum(header: &[String], name: &str, c: &OpossumConfig) -> Result<String> {
    let mut s = String::new();
    commented(&mut s, "//", header);
    let _ = writeln!(s, "const CircuitBreaker = require('opossum');");
    let _ = writeln!(s);
    let _ = writeln!(s, "const options = {{");
    let _ = writeln!(s, "  name: {name:?},");
    let _ = writeln!(s, "  timeout: {},", js_ms(c.timeout, "timeout")?);
    let _ = writeln!(s, "  resetTimeout: {},", js_ms(c.reset_timeout, "resetTimeout")?);
    let _ = writeln!(s, "  errorThresholdPercentage: {},", num(c.error_threshold_percentage));
    let _ = writeln!(s, "  rollingCountTimeout: {},", js_ms(c.rolling_count_timeout, "rollingCountTimeout")?);
    let _ = writeln!(s, "  rollingCountBuckets: {},", c.rolling_count_buckets);
    let _ = writeln!(s, "  volumeThreshold: {},", c.volume_threshold);
    let _ = writeln!(s, "  allowWarmUp: {},", c.allow_warm_up);
    let _ = writeln!(s, "}};");
    let _ = writeln!(s, "const breaker = new CircuitBreaker(action, options);");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

    #[test]
    fn one_failure_after_idle_trips_with_volume_zero() {
        let mut b = OpossumBreaker::new(OpossumConfig::default());
        let r = drive(&mut b, &[(0, A), (5, F(5))]);
        assert_eq!(r.tr, vec![(5, C, O, "error_percentage")]);
    }

    #[test]
    fn strictly_greater_and_in_flight_calls_dilute_the_rate() {
        let mut b = OpossumBreaker::new(OpossumConfig::default());
        // 4 fires; 1 success, then failures: 1 / 4, then 2 / 4 = 50 % (not > 50), then 3 / 4.
        let s = [(0, A), (0, A), (0, A), (0, A), (1, S(1)), (2, F(1)), (3, F(1)), (4, F(1))];
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(4, C, O, "error_percentage")]);
    }

    #[test]
    fn stats_survive_closing() {
        let fast = |volume| OpossumConfig {
            volume_threshold: volume,
            reset_timeout: Dur::from_secs(2),
            ..OpossumConfig::default()
        };
        // Volume 3: the outage's fires and failures carried past the close let one failure trip.
        let mut b = OpossumBreaker::new(fast(3));
        let s = [
            (0, A),
            (0, A),
            (0, A),
            (0, F(1)), // 1 / 3
            (0, F(1)), // 2 / 3: opens; the third call is still running
            (2_000, Tick),
            (2_001, A),    // the probe
            (2_002, S(1)), // the call from t=0 succeeds late: closes
            (2_003, F(1)), // the probe fails in closed: 3 failures / 4 fires
        ];
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "error_percentage"),
                (2_000, O, H, "cooldown_elapsed"),
                (2_002, H, C, "probe_successes"),
                (2_003, C, O, "error_percentage"),
            ]
        );
    }

    #[test]
    fn rejected_calls_count_as_fires() {
        let cfg = OpossumConfig { reset_timeout: Dur::from_secs(2), ..OpossumConfig::default() };
        let mut b = OpossumBreaker::new(cfg);
        let mut s = vec![(0, A), (0, F(1))]; // 1 / 1: opens
        s.extend([(1, A); 5]); // five rejected fires
        s.extend([(2_000, Tick), (2_001, A), (2_002, S(1)), (2_003, A), (2_003, F(1))]);
        let r = drive(&mut b, &s);
        // 2 failures / 8 fires = 25 %: stays closed (without the rejections it would be 2 / 3).
        assert_eq!(r.tr.len(), 3);
        assert_eq!(b.state(), State::Closed);
        assert_eq!(r.admit_string(), "10000011");
    }

    #[test]
    fn half_open_failure_reopens_and_restarts_the_timer() {
        let mut b = OpossumBreaker::new(OpossumConfig::default());
        let r = drive(
            &mut b,
            &[(0, A), (0, F(1)), (30_000, Tick), (30_001, A), (30_002, F(1)), (60_001, Tick), (60_002, Tick)],
        );
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "error_percentage"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_002, H, O, "probe_failed"),
                (60_002, O, H, "cooldown_elapsed"),
            ]
        );
    }

    #[test]
    fn rotated_out_fires_divide_by_zero_and_warm_up_suppresses() {
        let mut b = OpossumBreaker::new(OpossumConfig { volume_threshold: 0, ..OpossumConfig::default() });
        // Fired at 0, fails at 12 s: its fire has rotated out, failures / 0 = Infinity.
        let r = drive(&mut b, &[(0, A), (12_000, F(12_000))]);
        assert_eq!(r.tr, vec![(12_000, C, O, "error_percentage")]);
        let mut w = OpossumBreaker::new(OpossumConfig { allow_warm_up: true, ..OpossumConfig::default() });
        let r = drive(&mut w, &[(0, A), (1, F(1)), (10_000, A), (10_000, F(1))]);
        assert_eq!(r.tr, vec![(10_000, C, O, "error_percentage")]);
    }
}
