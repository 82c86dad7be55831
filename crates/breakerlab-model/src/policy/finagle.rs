//! Finagle's `FailureAccrualFactory` with its default policy (preset `finagle`).
//!
//! Source: twitter/finagle, finagle-core/src/main/scala/com/twitter/finagle/liveness/
//! FailureAccrualFactory.scala (copy read: index file 3128568080: `defaultPolicy`,
//! `jitteredBackoff = Backoff.equalJittered(5.seconds, 300.seconds)`, the Alive / Dead /
//! ProbeOpen / ProbeClosed machine, `didFail`, `didSucceed`, `didReceiveIgnorable`) and
//! FailureAccrualPolicy.scala @ 06ace3be6feaac3013375503a8930fc337021d2f
//! (`SuccessRateFailureAccrualPolicy`, `successRateWithinDuration`, `consecutiveFailures`).
//!
//! Reproduced:
//! - the default policy is `successRateWithinDuration(0.8, 30 s, backoff, 5).orElse(
//!   consecutiveFailures(5, backoff))`: every success updates both, every failure asks both
//!   (the longer dead time wins when both fire; each advances its own backoff stream);
//! - success rate: an exponentially weighted moving average over time (Finagle's `Ema`: weight
//!   `exp(−Δt / window)` with millisecond stamps since creation or revival); a failure marks
//!   the endpoint dead when the stamp is at least `window`, the rate is below the requirement
//!   and (newer Finagle's `minRequestThreshold`) at least `min_request_threshold` requests
//!   arrived in the last `window` (counted exactly here);
//! - consecutive failures: `>= consecutive_failures`;
//! - the dead time comes from an equal-jittered backoff: 5 s first, then for the n-th
//!   `e/2 + uniform(0, e/2)` with `e = min(300 s, 5 s · 2^n)`, drawn from the build seed; both
//!   streams restart when a probe revives the endpoint;
//! - Dead → ProbeOpen by a timer (active); the first request then is the only probe
//!   (ProbeClosed is `Busy`); a success while probing revives (Alive), a failure asks the
//!   policy again (dead again, or back to ProbeOpen when it does not fire); an ignorable result
//!   returns to ProbeOpen. Results arriving while Dead or ProbeOpen are not counted, except
//!   successes, which always feed `recordSuccess`;
//! - Finagle "fails open" (a lone endpoint still gets requests while Dead, the load balancer
//!   merely avoids it): modelled as rejection, the load balancer's view of a dead endpoint.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, impossible, invalid, longer_than_zero, not_shorter, require};
use super::window::{Edge, FailureTimes};
use crate::outcome::{Classifier, Verdict};
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};

family_config! {
    /// The default failure-accrual policy's parameters.
    FinagleConfig {
        success_rate: f64 = 0.8, "ratio", "required EMA success rate (0 = success-rate policy off)";
        success_rate_window: Dur = Dur::from_secs(30), "duration",
            "EMA time constant and minimum age before deciding";
        min_request_threshold: u32 = 5, "calls", "requests in the last window before the rate decides";
        consecutive_failures: u32 = 5, "calls", "consecutive failures that mark dead (0 = off)";
        backoff_start: Dur = Dur::from_secs(5), "duration", "first dead time of Backoff.equalJittered";
        backoff_max: Dur = Dur::from_secs(300), "duration", "cap of Backoff.equalJittered";
    }
}

impl Family for FinagleConfig {
    type Breaker = FinagleBreaker;
    const NAME: &'static str = "finagle";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "finagle",
        library: "Finagle (finagle-core liveness)",
        summary: "Finagle FailureAccrual default: EMA success rate < 0.8 over 30 s (5 requests min) or 5 consecutive failures mark dead for an equal-jittered 5 s..300 s; one probe",
        source: "twitter/finagle, finagle-core/src/main/scala/com/twitter/finagle/liveness/FailureAccrualFactory.scala (copy read: index file 3128568080) and FailureAccrualPolicy.scala @ 06ace3be6feaac3013375503a8930fc337021d2f",
        quirks: &[
            "the success rate is an exponentially weighted moving average over time, not a window count",
            "no success-rate decision in the first 30 s after start or after a revival",
            "the dead time is an equal-jittered backoff (5 s, then 5-10 s, 10-20 s, ... capped at 300 s) drawn from the build seed; it restarts on revival",
            "dead -> probing by a timer; one probe; a probe failure the policy does not act on returns to probing",
            "results arriving while dead are ignored, except successes, which always feed the policy",
            "Finagle fails open (a lone endpoint is still used); modelled as rejection, as the load balancer sees it",
        ],
        config: FinagleConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        let r = self.success_rate;
        require(r.is_finite() && (0.0..=1.0).contains(&r), "success_rate", "a ratio between 0 and 1", r)?;
        if r > 0.0 && self.success_rate_window < Dur::from_millis(1) {
            return Err(invalid(
                "success_rate_window",
                "at least 1ms",
                &self.success_rate_window.to_string(),
            ));
        }
        if r == 0.0 && self.consecutive_failures == 0 {
            return Err(impossible("both policies are off: set success_rate or consecutive_failures".into()));
        }
        longer_than_zero("backoff_start", self.backoff_start)?;
        not_shorter("backoff_max", self.backoff_max, "backoff_start", self.backoff_start)?;
        Ok(())
    }

    fn build(&self, seed: u64) -> FinagleBreaker {
        FinagleBreaker::new(self.clone(), seed)
    }
}

/// Finagle's `Ema` over millisecond stamps.
#[derive(Clone, Debug)]
struct Ema {
    window_ms: f64,
    stamp: Option<u64>,
    value: f64,
}

impl Ema {
    fn update(&mut self, stamp: u64, x: f64) -> f64 {
        match self.stamp {
            None => self.value = x,
            Some(prev) => {
                let w = (-((stamp - prev) as f64) / self.window_ms).exp();
                self.value = x * (1.0 - w) + self.value * w;
            }
        }
        self.stamp = Some(stamp);
        self.value
    }
}

/// One backoff stream: the number of dead times handed out since the last revival.
#[derive(Copy, Clone, Debug, Default)]
struct Stream {
    handed: u32,
}

/// The failure-accrual factory with the default policy.
#[derive(Clone, Debug)]
pub struct FinagleBreaker {
    cfg: FinagleConfig,
    phase: Phase,
    probing: bool,
    epoch: SimTime,
    ema: Ema,
    requests: FailureTimes,
    consecutive: u64,
    sr_stream: Stream,
    cf_stream: Stream,
    dead_since: SimTime,
    dead_until: SimTime,
    rng: Rng,
}

impl FinagleBreaker {
    /// An alive endpoint; `seed` drives the backoff jitter.
    pub fn new(cfg: FinagleConfig, seed: u64) -> FinagleBreaker {
        let window_ms = cfg.success_rate_window.micros() as f64 / 1000.0;
        FinagleBreaker {
            cfg,
            phase: Phase::new(),
            probing: false,
            epoch: SimTime::ZERO,
            ema: Ema { window_ms, stamp: None, value: 0.0 },
            requests: FailureTimes::default(),
            consecutive: 0,
            sr_stream: Stream::default(),
            cf_stream: Stream::default(),
            dead_since: SimTime::ZERO,
            dead_until: SimTime::ZERO,
            rng: rng_from_u64(seed),
        }
    }

    fn stamp(&self, now: SimTime) -> u64 {
        now.since(self.epoch).micros() / 1000
    }

    /// The next duration of a backoff stream (and advances it).
    fn next_dead(&mut self, which: bool) -> Dur {
        let s = if which { &mut self.sr_stream } else { &mut self.cf_stream };
        let n = s.handed;
        s.handed = s.handed.saturating_add(1);
        if n == 0 {
            return self.cfg.backoff_start;
        }
        let e = self.cfg.backoff_start.mul_f64(2f64.powi(n.min(62) as i32)).min(self.cfg.backoff_max);
        let half = e.micros() / 2;
        let u = unit(&mut self.rng);
        Dur::from_micros(half + (half as f64 * u) as u64)
    }

    fn record_success(&mut self, now: SimTime) {
        if self.cfg.success_rate > 0.0 {
            let st = self.stamp(now);
            self.ema.update(st, 1.0);
        }
        self.consecutive = 0;
    }

    /// `markDeadOnFailure()` of `successRate.orElse(consecutive)`.
    fn mark_dead_on_failure(&mut self, now: SimTime) -> Option<(Dur, &'static str)> {
        let mut sr = None;
        if self.cfg.success_rate > 0.0 {
            let st = self.stamp(now);
            let rate = self.ema.update(st, 0.0);
            let enough = self.requests.len() as u64 >= u64::from(self.cfg.min_request_threshold);
            if st >= self.cfg.success_rate_window.micros() / 1000 && rate < self.cfg.success_rate && enough {
                sr = Some(self.next_dead(true));
            }
        }
        let mut cf = None;
        if self.cfg.consecutive_failures > 0 {
            self.consecutive += 1;
            if self.consecutive >= u64::from(self.cfg.consecutive_failures) {
                cf = Some(self.next_dead(false));
            }
        }
        match (sr, cf) {
            (Some(a), Some(b)) => Some((a.max(b), "success_rate")),
            (Some(a), None) => Some((a, "success_rate")),
            (None, Some(b)) => Some((b, "consecutive_failures")),
            (None, None) => None,
        }
    }

    fn revived(&mut self, now: SimTime) {
        self.consecutive = 0;
        self.sr_stream = Stream::default();
        self.cf_stream = Stream::default();
        self.epoch = now;
        self.ema.stamp = None;
        self.ema.value = 0.0;
    }

    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        if self.phase.state() == State::Open && now >= self.dead_until {
            let at = self.dead_until;
            self.phase.enter(at, State::HalfOpen, "cooldown_elapsed", self.evidence_for(at, out), out);
            self.probing = false;
        }
    }
}

impl Breaker for FinagleBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        match self.phase.state() {
            State::Open => Admission::Reject,
            State::HalfOpen if self.probing => Admission::Reject,
            State::HalfOpen => {
                self.probing = true;
                Admission::Allow(self.phase.ticket(true))
            }
            State::Closed => {
                if self.cfg.success_rate > 0.0 {
                    self.requests.push(now);
                    self.requests.prune(now, self.cfg.success_rate_window, Edge::DropExact);
                }
                Admission::Allow(self.phase.ticket(false))
            }
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        if self.cfg.success_rate > 0.0 {
            self.requests.prune(now, self.cfg.success_rate_window, Edge::DropExact);
        }
        let probe_closed = self.phase.state() == State::HalfOpen && self.probing;
        match obs.verdict {
            Verdict::Ignored => {
                if probe_closed {
                    self.probing = false;
                }
            }
            Verdict::Success => {
                if probe_closed {
                    self.revived(now);
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                }
                self.record_success(now);
            }
            Verdict::Failure => {
                if self.phase.state() == State::Closed || probe_closed {
                    match self.mark_dead_on_failure(now) {
                        Some((d, reason)) => {
                            let reason = if probe_closed { "probe_failed" } else { reason };
                            self.phase.enter(now, State::Open, reason, self.evidence_for(now, out), out);
                            self.dead_since = now;
                            self.dead_until = now + d;
                        }
                        None if probe_closed => self.probing = false,
                        None => {}
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
        match self.phase.state() {
            State::Closed => {
                if c.success_rate > 0.0 {
                    ev.ratio("success_rate_ema", self.ema.value, Test::Below, "success_rate", c.success_rate);
                    let requests = self.requests.len() as u64;
                    ev.count(
                        "window_requests",
                        requests,
                        Test::AtLeast,
                        "min_request_threshold",
                        u64::from(c.min_request_threshold),
                    );
                    ev.time(
                        "time_since_revival",
                        now.since(self.epoch),
                        Test::AtLeast,
                        "success_rate_window",
                        c.success_rate_window,
                    );
                }
                if c.consecutive_failures > 0 {
                    ev.count(
                        "consecutive_failure_count",
                        self.consecutive,
                        Test::AtLeast,
                        "consecutive_failures",
                        u64::from(c.consecutive_failures),
                    );
                }
            }
            State::Open => ev.time(
                "time_dead",
                now.since(self.dead_since),
                Test::AtLeast,
                "dead_time",
                self.dead_until.since(self.dead_since),
            ),
            State::HalfOpen => ev.count("probes_admitted", u64::from(self.probing), Test::Of, "probes", 1),
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.phase.state() == State::Open).then_some(self.dead_until)
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, drive};

    fn consecutive_only() -> FinagleBreaker {
        FinagleBreaker::new(FinagleConfig { success_rate: 0.0, ..FinagleConfig::default() }, 3)
    }

    #[test]
    fn five_consecutive_failures_mark_dead_for_five_seconds_then_one_probe() {
        let mut b = consecutive_only();
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.extend([(5_003, Tick), (5_004, Tick), (5_005, A), (5_005, A), (5_006, F(1))]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (4, C, O, "consecutive_failures"),
                (5_004, O, H, "cooldown_elapsed"),
                (5_006, H, O, "probe_failed"),
            ]
        );
        assert_eq!(&r.admit_string()[5..], "10");
        // The second dead time is equal-jittered in [5 s, 10 s] and seeded.
        let d = b.deadline().unwrap().since(SimTime(5_006_000));
        assert!(d >= Dur::from_secs(5) && d <= Dur::from_secs(10), "{d}");
        let mut again = consecutive_only();
        drive(&mut again, &s);
        assert_eq!(again.deadline(), b.deadline(), "same seed, same jitter");
    }

    #[test]
    fn success_rate_needs_the_window_age_and_minimum_requests() {
        let cfg = FinagleConfig { consecutive_failures: 0, ..FinagleConfig::default() };
        let mut b = FinagleBreaker::new(cfg.clone(), 1);
        // Failures before 30 s never mark dead, whatever the rate.
        let mut s = Vec::new();
        for i in 0..10 {
            s.push((i * 1_000, A));
            s.push((i * 1_000, F(1)));
        }
        assert!(drive(&mut b, &s).tr.is_empty());
        // At 30 s the EMA is 0 and 10 requests are in the window.
        let r = drive(&mut b, &[(30_000, A), (30_000, F(1))]);
        assert_eq!(r.tr, vec![(30_000, C, O, "success_rate")]);
        // With only 4 requests in the last 30 s it does not decide.
        let mut b = FinagleBreaker::new(cfg, 1);
        let r = drive(&mut b, &[(0, A), (0, S(1)), (40_000, A), (40_000, F(1)), (40_001, A), (40_001, F(1))]);
        assert!(r.tr.is_empty(), "2 requests in the window");
    }

    #[test]
    fn a_late_success_while_probing_revives() {
        let mut b = consecutive_only();
        let mut s = vec![(0, A)];
        for i in 0..5 {
            s.push((1, A));
            s.push((1, Done(1 + i, false, 1)));
        }
        s.extend([(5_001, Tick), (5_002, A), (5_003, Done(0, true, 5_003))]);
        let r = drive(&mut b, &s);
        assert_eq!(r.tr.last(), Some(&(5_003, H, C, "probe_successes")));
    }
}
