//! Envoy outlier detection by consecutive 5xx, for one host (preset `envoy-outlier`).
//!
//! Source: envoyproxy/data-plane-api, envoy/config/cluster/v3/outlier_detection.proto (the
//! defaults: consecutive_5xx 5, interval 10 s, base_ejection_time 30 s, max_ejection_time
//! 300 s); envoyproxy/envoy source/common/upstream/outlier_detection_impl.cc (copy read: index
//! file 114077890, `DetectorImpl::checkHostForUneject`).
//!
//! Reproduced:
//! - every non-5xx response resets the host's consecutive-5xx counter; the
//!   `consecutive_5xx`-th 5xx in a row ejects the host at once (a single host can always be
//!   ejected: `max_ejection_percent` lets at least one host go);
//! - the detector's interval timer fires every `interval` from time zero (a timer via
//!   `deadline()`): at each tick an ejected host returns when
//!   `min(base_ejection_time × backoff, max_ejection_time) <= now − ejected_at` — so the return
//!   happens at the first tick after the ejection time is up, not at the exact instant — and
//!   its consecutive counters are reset; a healthy host's backoff multiplier drops by one per
//!   tick (`ejectTimeBackoff()--`);
//! - each ejection raises the multiplier by one while `backoff × base < max + base`
//!   (`DetectorImpl::ejectHost`): the time grows linearly up to the cap, and the multiplier can
//!   climb one step past it (11 with the defaults), which then takes longer to decay;
//! - the consecutive-5xx counter is reset right after an ejection and again on return;
//! - the host returns to full traffic: there is no half-open state and no probe limit; the
//!   states reported are closed (in rotation) and open (ejected);
//! - responses arriving while ejected update the counter, which is reset on return.
//!
//! Success-rate and failure-percentage ejection compare hosts of a cluster: not modelled for
//! one host.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, proto_duration};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, not_shorter, require};
use crate::outcome::{Classifier, OutcomeClass, Verdict};
use crate::time::{Dur, SimTime};
use crate::{Error, Result};
use std::fmt::Write as _;

family_config! {
    /// `OutlierDetection` fields used for one host, in the proto's names.
    EnvoyConfig {
        consecutive_5xx: u32 = 5, "calls", "consecutive 5xx responses that eject the host";
        interval: Dur = Dur::from_secs(10), "duration",
            "detector sweep: returns and backoff decay happen only at these ticks";
        base_ejection_time: Dur = Dur::from_secs(30), "duration",
            "ejection time = base x multiplier (grows by one per ejection, drops by one per healthy tick)";
        max_ejection_time: Dur = Dur::from_secs(300), "duration", "cap of the ejection time";
    }
}

impl Family for EnvoyConfig {
    type Breaker = EnvoyBreaker;
    const NAME: &'static str = "envoy";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "envoy-outlier",
        library: "Envoy (config.cluster.v3 API)",
        summary: "Envoy outlier detection: 5 consecutive 5xx eject the host for 30 s x consecutive ejections (max 300 s), checked every 10 s; automatic return",
        source: "envoyproxy/data-plane-api, envoy/config/cluster/v3/outlier_detection.proto; envoyproxy/envoy source/common/upstream/outlier_detection_impl.cc (DetectorImpl::checkHostForUneject; copy read: index file 114077890)",
        quirks: &[
            "only 5xx count: 429 and other 4xx reset the consecutive counter (classifier: rate_limited and client_error are successes)",
            "the host returns at the first 10 s interval tick after its ejection time, not at the exact instant",
            "ejection time = min(base x multiplier, max); the multiplier grows by one per ejection while multiplier x base < max + base (so up to 11 with the defaults) and drops by one per healthy interval",
            "no half-open: the host returns to full traffic; no probe limit",
            "success-rate and failure-percentage ejection compare hosts of a cluster: not modelled for one host",
        ],
        config: EnvoyConfig::default,
        classifier: Classifier::EVERY_ERROR
            .with(OutcomeClass::RateLimited, Verdict::Success)
            .with(OutcomeClass::ClientError, Verdict::Success),
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("consecutive_5xx", self.consecutive_5xx)?;
        require(self.interval >= Dur::from_millis(1), "interval", "at least 1ms", self.interval)?;
        require(
            self.base_ejection_time >= Dur::from_millis(1),
            "base_ejection_time",
            "at least 1ms",
            self.base_ejection_time,
        )?;
        not_shorter(
            "max_ejection_time",
            self.max_ejection_time,
            "base_ejection_time",
            self.base_ejection_time,
        )?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> EnvoyBreaker {
        EnvoyBreaker::new(self.clone())
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        if lib != Library::Envoy {
            return None;
        }
        let c5xx = [OutcomeClass::Error, OutcomeClass::Timeout];
        let exact = OutcomeClass::ALL.iter().all(|&k| {
            let want = if c5xx.contains(&k) { Verdict::Failure } else { Verdict::Success };
            input.classifier.verdict(k) == want
        });
        if !exact {
            return Some(Err(Error::invalid(
                "consecutive_5xx counts exactly the 5xx responses (errors and gateway timeouts) and every other response resets it; failure_on/ignore must be error,timeout / none",
            )));
        }
        Some(Ok(envoy(input.header, self)))
    }
}

/// One host's outlier-detection state.
#[derive(Clone, Debug)]
pub struct EnvoyBreaker {
    cfg: EnvoyConfig,
    phase: Phase,
    consecutive: u64,
    backoff: u64,
    ejected_at: SimTime,
    next_tick: SimTime,
}

impl EnvoyBreaker {
    /// A host in rotation; the interval timer's first tick is one interval after time zero.
    pub fn new(cfg: EnvoyConfig) -> EnvoyBreaker {
        let next_tick = SimTime::ZERO + cfg.interval;
        EnvoyBreaker {
            cfg,
            phase: Phase::new(),
            consecutive: 0,
            backoff: 0,
            ejected_at: SimTime::ZERO,
            next_tick,
        }
    }

    /// The current ejection-time multiplier.
    pub fn multiplier(&self) -> u64 {
        self.backoff
    }

    fn eject_time(&self) -> Dur {
        let base = self.cfg.base_ejection_time.micros();
        Dur::from_micros(base.saturating_mul(self.backoff).min(self.cfg.max_ejection_time.micros()))
    }

    /// Runs the interval ticks due by `now`.
    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        while self.next_tick <= now {
            let tick = self.next_tick;
            if self.phase.state() == State::Open {
                if self.eject_time() <= tick.since(self.ejected_at) {
                    self.phase.enter(
                        tick,
                        State::Closed,
                        "ejection_elapsed",
                        self.evidence_for(tick, out),
                        out,
                    );
                    self.consecutive = 0;
                }
            } else if self.backoff > 0 {
                self.backoff -= 1;
            } else {
                // Healthy with nothing to decay: skip the idle ticks up to now.
                let iv = self.cfg.interval.micros();
                let ahead = now.since(tick).micros() / iv;
                self.next_tick = tick + Dur::from_micros((ahead + 1) * iv);
                continue;
            }
            self.next_tick = tick + self.cfg.interval;
        }
    }
}

impl Breaker for EnvoyBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        if self.phase.state() == State::Open {
            return Admission::Reject;
        }
        Admission::Allow(self.phase.ticket(false))
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        match obs.verdict {
            Verdict::Ignored => {}
            Verdict::Success => self.consecutive = 0,
            Verdict::Failure => {
                self.consecutive += 1;
                if self.phase.state() == State::Closed
                    && self.consecutive >= u64::from(self.cfg.consecutive_5xx)
                {
                    // DetectorImpl::ejectHost: `if (backoff * base < max + base) backoff++`.
                    let base = self.cfg.base_ejection_time.micros();
                    let max = self.cfg.max_ejection_time.micros();
                    if base.saturating_mul(self.backoff) < max.saturating_add(base) {
                        self.backoff += 1;
                    }
                    self.phase.enter(now, State::Open, "consecutive_5xx", self.evidence_for(now, out), out);
                    self.ejected_at = now;
                    // onConsecutiveErrorWorker resets the counter after ejecting.
                    self.consecutive = 0;
                }
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    /// Closed: the consecutive 5xx count (and the ejection multiplier it would use); open
    /// (ejected): the time ejected against base_ejection_time × multiplier, capped.
    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        match self.phase.state() {
            State::Open => {
                ev.time(
                    "time_ejected",
                    now.since(self.ejected_at),
                    Test::AtLeast,
                    "ejection_time",
                    self.eject_time(),
                );
                ev.fact_count("ejection_multiplier", self.backoff);
            }
            _ => {
                ev.count(
                    "consecutive_5xx_seen",
                    self.consecutive,
                    Test::AtLeast,
                    "consecutive_5xx",
                    u64::from(self.cfg.consecutive_5xx),
                );
                ev.fact_count("ejection_multiplier", self.backoff);
            }
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.phase.state() == State::Open || self.backoff > 0).then_some(self.next_tick)
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

/// The configuration in Envoy's syntax.
fn envoy(header: &[String], c: &EnvoyConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let _ = writeln!(s, "outlier_detection:");
    let _ = writeln!(s, "  consecutive_5xx: {}", c.consecutive_5xx);
    let _ = writeln!(s, "  interval: {}", proto_duration(c.interval));
    let _ = writeln!(s, "  base_ejection_time: {}", proto_duration(c.base_ejection_time));
    let _ = writeln!(s, "  max_ejection_time: {}", proto_duration(c.max_ejection_time));
    let _ = writeln!(s, "  enforcing_consecutive_5xx: 100");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, O, drive};

    fn fails(t: u64, n: usize) -> Vec<(u64, crate::policy::testkit::Ev)> {
        (0..n).flat_map(|_| [(t, A), (t, F(1))]).collect()
    }

    #[test]
    fn ejection_returns_at_the_first_tick_after_the_time_is_up() {
        let mut b = EnvoyBreaker::new(EnvoyConfig::default());
        let mut s = fails(1_000, 4);
        s.extend([(1_000, A), (1_000, S(1))]); // a success resets the counter
        s.extend(fails(2_000, 5)); // ejected at 2000 for 30 s
        s.extend([(30_000, Tick), (31_999, A), (40_000, Tick), (40_001, A)]);
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(2_000, C, O, "consecutive_5xx"), (40_000, O, C, "ejection_elapsed")]);
        assert_eq!(&r.admit_string()[10..], "01");
    }

    #[test]
    fn ejection_time_grows_with_consecutive_ejections_and_decays_per_healthy_tick() {
        let mut b = EnvoyBreaker::new(EnvoyConfig::default());
        let mut s = fails(0, 5); // ejection 1: 30 s, returns at the 30 s tick
        s.push((30_000, Tick));
        s.extend(fails(30_001, 5)); // ejection 2: 60 s (backoff 2)
        s.extend([(80_000, Tick), (90_000, Tick), (100_000, Tick)]);
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_5xx"),
                (30_000, O, C, "ejection_elapsed"),
                (30_001, C, O, "consecutive_5xx"),
                (100_000, O, C, "ejection_elapsed"),
            ]
        );
        assert_eq!(b.multiplier(), 2);
        // Two healthy ticks bring the multiplier back to 0.
        drive(&mut b, &[(110_000, Tick), (120_000, Tick)]);
        assert_eq!(b.multiplier(), 0);
        assert_eq!(b.deadline(), None);
    }

    #[test]
    fn ejection_time_is_capped_but_the_multiplier_climbs_one_past_it() {
        let cfg = EnvoyConfig { max_ejection_time: Dur::from_secs(45), ..EnvoyConfig::default() };
        let mut b = EnvoyBreaker::new(cfg);
        let mut s = fails(0, 5);
        s.push((30_000, Tick));
        s.extend(fails(30_001, 5)); // 1 x 30 < 45 + 30: multiplier 2, time min(60 s, 45 s)
        s.extend([(70_000, Tick), (80_000, Tick)]);
        s.extend(fails(80_001, 5)); // 2 x 30 < 75: multiplier 3, still 45 s
        s.extend([(130_000, Tick)]);
        let r = drive(&mut b, &s);
        let returns: Vec<u64> = r.tr.iter().filter(|t| t.2 == C).map(|t| t.0).collect();
        assert_eq!(returns, vec![30_000, 80_000, 130_000]);
        assert_eq!(b.multiplier(), 3);
        // 3 x 30 = 90 is not < 75: the next ejection keeps 3.
        drive(&mut b, &fails(130_001, 5));
        assert_eq!(b.multiplier(), 3);
    }
}
