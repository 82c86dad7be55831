//! Hystrix 1.5's `HystrixCircuitBreakerImpl` (preset `hystrix`), with its health-count stream
//! modelled deterministically in simulation time.
//!
//! Source: Netflix/Hystrix @ 001526b797310fa0b5befa767750cb20e82376a1,
//! hystrix-core/src/main/java/com/netflix/hystrix/HystrixCircuitBreaker.java (OpenState,
//! HalfOpenState, subscribeToStream, isAfterSleepWindow), HystrixCommandMetrics.java
//! (HealthCounts: `errorPercentage = (int) ((double) errorCount / totalCount * 100)`),
//! metric/consumer/HealthCountsStream.java and BucketedRollingCounterStream.java.
//!
//! The real breaker never looks at a result when it happens: it subscribes to a health stream
//! that emits, every `metrics.healthSnapshot.intervalInMilliseconds` (500 ms), the sums of the
//! last `rollingStats.timeInMilliseconds / interval` buckets of that length. Modelled here as:
//! - bucket `k` holds the results recorded in `[origin + k·I, origin + (k + 1)·I)`; the snapshot
//!   at `origin + k·I` (k ≥ 1) sums buckets `k − n .. k − 1` (a result at exactly a snapshot
//!   instant falls into the next snapshot); `origin` is the breaker's creation (time 0) and is
//!   moved to the closing instant on every close, because closing calls `metrics.resetStream()`,
//!   which discards the counts and restarts the bucket timer;
//! - at a snapshot, while CLOSED: trips when `total >= request_volume_threshold` and the
//!   truncated integer error percentage `>= error_threshold_percentage` (the double division is
//!   reproduced: 57 of 100 is 56 %);
//! - snapshots are driven through [`Breaker::deadline`] / [`Breaker::on_deadline`]; while the
//!   window cannot reach the volume threshold no timer is asked for (the skipped snapshots
//!   could not have tripped);
//! - every result is counted in the buckets, whatever the state (short-circuited calls are not);
//! - OPEN → HALF_OPEN on the first call strictly after `sleep_window` (`currentTime >
//!   circuitOpened + sleepWindow`), which is the single test request; others are rejected;
//! - in HALF_OPEN any success closes (`markSuccess`) and any failure reopens from now
//!   (`markNonSuccess`), whichever call it came from: a late result decides;
//! - `execution_timeout` (1 s) is the client's call timeout (0 = timeouts disabled).

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, impossible, longer_than_zero, require};
use super::ring::CountRing;
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// `HystrixCommandProperties` that drive the breaker, in snake_case.
    HystrixConfig {
        request_volume_threshold: u32 = 20, "calls",
            "circuitBreaker.requestVolumeThreshold: results a snapshot needs before it can trip";
        error_threshold_percentage: u32 = 50, "percent",
            "circuitBreaker.errorThresholdPercentage: trips when the truncated error % is >= this";
        sleep_window: Dur = Dur::from_secs(5), "duration",
            "circuitBreaker.sleepWindowInMilliseconds: open time before one test request (strictly after)";
        rolling_window: Dur = Dur::from_secs(10), "duration", "metrics.rollingStats.timeInMilliseconds";
        health_snapshot_interval: Dur = Dur::from_millis(500), "duration",
            "metrics.healthSnapshot.intervalInMilliseconds: the breaker decides only at these instants";
        execution_timeout: Dur = Dur::from_secs(1), "duration",
            "execution.isolation.thread.timeoutInMilliseconds: the call timeout (0 = disabled)";
    }
}

impl Family for HystrixConfig {
    type Breaker = HystrixBreaker;
    const NAME: &'static str = "hystrix";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "hystrix",
        library: "Hystrix 1.5.18 (hystrix-core)",
        summary: "Hystrix 1.5.18 defaults: every 500 ms, opens when >= 20 results in the last 10 s have an error % >= 50; sleep 5 s; one test request; 1 s execution timeout",
        source: "Netflix/Hystrix @ 001526b797310fa0b5befa767750cb20e82376a1, hystrix-core/src/main/java/com/netflix/hystrix/HystrixCircuitBreaker.java (+ HystrixCommandMetrics.HealthCounts, metric/consumer/HealthCountsStream.java)",
        quirks: &[
            "decides only at health snapshots every 500 ms (a burst of failures trips up to 500 ms late), modelled as timer events in simulation time",
            "error % is (int)((double) errors / total * 100): truncated, so 57 of 100 is 56 %",
            "the 20-call volume threshold applies to the whole 10 s window",
            "open -> half-open on the first call strictly after the sleep window; exactly one test request",
            "in half-open any success closes and any failure reopens, even from a call admitted before the trip",
            "closing resets the metrics stream: counts discarded and the 500 ms snapshot clock restarts at the close",
            "execution timeout 1 s is imposed on every call (set execution_timeout=0 to disable)",
        ],
        config: HystrixConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        require(
            self.error_threshold_percentage <= 100,
            "error_threshold_percentage",
            "a whole percentage from 0 to 100",
            self.error_threshold_percentage,
        )?;
        require(
            self.health_snapshot_interval >= Dur::from_millis(1),
            "health_snapshot_interval",
            "at least 1ms",
            self.health_snapshot_interval,
        )?;
        longer_than_zero("sleep_window", self.sleep_window)?;
        let (w, i) = (self.rolling_window.micros(), self.health_snapshot_interval.micros());
        if w < i || !w.is_multiple_of(i) {
            return Err(impossible(format!(
                "rolling_window ({}) must be a whole multiple of health_snapshot_interval ({})",
                self.rolling_window, self.health_snapshot_interval
            )));
        }
        Ok(())
    }

    fn build(&self, _seed: u64) -> HystrixBreaker {
        HystrixBreaker::new(self.clone())
    }

    fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
        Some((!self.execution_timeout.is_zero()).then_some(self.execution_timeout))
    }
}

/// Hystrix's breaker plus its health-count buckets.
#[derive(Clone, Debug)]
pub struct HystrixBreaker {
    cfg: HystrixConfig,
    phase: Phase,
    origin: SimTime,
    next_snapshot: u64,
    /// `(total, errors)` per health-snapshot interval.
    ring: CountRing,
    opened_at: SimTime,
}

impl HystrixBreaker {
    /// A closed breaker whose health stream starts at time zero.
    pub fn new(cfg: HystrixConfig) -> HystrixBreaker {
        let n = (cfg.rolling_window.micros() / cfg.health_snapshot_interval.micros().max(1)).max(1) as usize;
        HystrixBreaker {
            cfg,
            phase: Phase::new(),
            origin: SimTime::ZERO,
            next_snapshot: 1,
            ring: CountRing::new(n),
            opened_at: SimTime::ZERO,
        }
    }

    fn interval(&self) -> u64 {
        self.cfg.health_snapshot_interval.micros()
    }

    fn snapshot_at(&self, k: u64) -> SimTime {
        self.origin + Dur::from_micros(k * self.interval())
    }

    /// Sums of the buckets with index in `[lo, hi)`.
    fn sum(&self, lo: u64, hi: u64) -> (u64, u64) {
        self.ring.sum(lo, hi)
    }

    /// Could any snapshot from `next_snapshot` on trip without further results?
    fn could_trip(&self) -> bool {
        let n = self.ring.len();
        let (total, _) = self.sum(self.next_snapshot.saturating_sub(n), u64::MAX);
        total >= u64::from(self.cfg.request_volume_threshold) && total > 0
    }

    /// Runs the health snapshots due by `now` (only CLOSED reacts to them).
    fn poll(&mut self, now: SimTime, out: &mut Transitions) {
        let n = self.ring.len();
        while self.phase.state() == State::Closed && self.snapshot_at(self.next_snapshot) <= now {
            if !self.could_trip() {
                self.next_snapshot = now.since(self.origin).micros() / self.interval() + 1;
                return;
            }
            let k = self.next_snapshot;
            self.next_snapshot += 1;
            let (total, errors) = self.sum(k.saturating_sub(n), k);
            if total == 0 || total < u64::from(self.cfg.request_volume_threshold) {
                continue;
            }
            let pct = ((errors as f64 / total as f64) * 100.0) as u32;
            if pct >= self.cfg.error_threshold_percentage {
                let at = self.snapshot_at(k);
                self.phase.enter(at, State::Open, "error_percentage", self.evidence_for(at, out), out);
                self.opened_at = at;
            }
        }
    }

    fn count(&mut self, now: SimTime, failed: bool) {
        let k = now.since(self.origin).micros() / self.interval();
        self.ring.add(k, (1, u64::from(failed)));
    }

    fn close(&mut self, now: SimTime, out: &mut Transitions) {
        self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
        // metrics.resetStream(): counts discarded, the bucket timer restarts now.
        self.origin = now;
        self.next_snapshot = 1;
        self.ring.clear();
    }
}

impl Breaker for HystrixBreaker {
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.poll(now, out);
        match self.phase.state() {
            State::Closed => Admission::Allow(self.phase.ticket(false)),
            State::Open if now > self.opened_at + self.cfg.sleep_window => {
                self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
                Admission::Allow(self.phase.ticket(true))
            }
            _ => Admission::Reject,
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        self.poll(now, out);
        let failed = match obs.verdict {
            Verdict::Ignored => return,
            Verdict::Success => false,
            Verdict::Failure => true,
        };
        self.count(now, failed);
        if self.phase.state() == State::HalfOpen {
            if failed {
                self.phase.enter(now, State::Open, "probe_failed", self.evidence_for(now, out), out);
                self.opened_at = now;
            } else {
                self.close(now, out);
            }
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    /// Closed: the latest health snapshot the breaker read (buckets `[k − n, k)` of snapshot
    /// `k`), as Hystrix decides only on those.
    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match self.phase.state() {
            State::Closed => {
                let k = self.next_snapshot.saturating_sub(1);
                let (total, errors) = self.sum(k.saturating_sub(self.ring.len()), k);
                let pct = if total == 0 { 0 } else { ((errors as f64 / total as f64) * 100.0) as u64 };
                ev.count(
                    "request_volume",
                    total,
                    Test::AtLeast,
                    "request_volume_threshold",
                    u64::from(c.request_volume_threshold),
                );
                ev.count(
                    "error_percentage",
                    pct,
                    Test::AtLeast,
                    "error_threshold_percentage",
                    u64::from(c.error_threshold_percentage),
                );
            }
            State::Open => {
                ev.open_for(now.since(self.opened_at), Test::Above, "sleep_window", c.sleep_window)
            }
            State::HalfOpen => ev.count("probes_admitted", 1, Test::Of, "probes", 1),
        }
    }

    fn deadline(&self) -> Option<SimTime> {
        (self.phase.state() == State::Closed && self.could_trip())
            .then(|| self.snapshot_at(self.next_snapshot))
    }

    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        self.poll(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev, Ev::*, H, O, drive};

    fn mixed(t: u64, fails: usize, oks: usize) -> Vec<(u64, Ev)> {
        let mut v = Vec::new();
        for i in 0..fails + oks {
            v.push((t, A));
            v.push((t, if i < fails { F(5) } else { S(5) }));
        }
        v
    }

    #[test]
    fn decides_only_at_snapshot_instants() {
        let mut b = HystrixBreaker::new(HystrixConfig::default());
        let r = drive(&mut b, &mixed(100, 10, 10));
        assert!(r.tr.is_empty(), "nothing happens at the results themselves");
        assert_eq!(b.deadline(), Some(SimTime(500_000)));
        let r = drive(&mut b, &[(499, A), (500, Tick), (501, A)]);
        assert_eq!(r.tr, vec![(500, C, O, "error_percentage")]);
        assert_eq!(r.admit_string(), "10");
    }

    #[test]
    fn volume_threshold_and_result_at_the_snapshot_instant() {
        // 19 failures: below the volume of 20, no timer at all.
        let mut b = HystrixBreaker::new(HystrixConfig::default());
        drive(&mut b, &mixed(100, 19, 0));
        assert_eq!(b.deadline(), None);
        // The 20th lands exactly at 500 ms: it belongs to the next bucket, so the 500 ms
        // snapshot sees 19 and the 1000 ms one sees 20.
        let r = drive(&mut b, &[(500, A), (500, F(1)), (500, Tick), (999, A), (1_000, Tick)]);
        assert_eq!(r.tr, vec![(1_000, C, O, "error_percentage")]);
    }

    #[test]
    fn error_percentage_is_truncated_double_arithmetic() {
        // 57 of 100: (double) 57 / 100 * 100 = 56.99999999999999, truncated to 56.
        let cfg = HystrixConfig { error_threshold_percentage: 57, ..HystrixConfig::default() };
        let mut b = HystrixBreaker::new(cfg.clone());
        drive(&mut b, &mixed(0, 57, 43));
        let r = drive(&mut b, &[(500, Tick)]);
        assert!(r.tr.is_empty());
        let mut b = HystrixBreaker::new(HystrixConfig { error_threshold_percentage: 56, ..cfg });
        drive(&mut b, &mixed(0, 57, 43));
        let r = drive(&mut b, &[(500, Tick)]);
        assert_eq!(r.tr.len(), 1);
    }

    #[test]
    fn sleep_window_is_strict_one_test_request_and_close_restarts_the_stream() {
        let mut b = HystrixBreaker::new(HystrixConfig::default());
        drive(&mut b, &mixed(0, 20, 0));
        let mut s = vec![(500, Tick), (5_500, A), (5_501, A), (5_501, A), (5_600, S(99))];
        // After closing at 5600 the counts are gone and snapshots fall at 5600 + k * 500.
        s.extend(mixed(5_700, 20, 0));
        s.push((6_000, Tick)); // not a snapshot instant any more
        s.push((6_100, Tick));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (500, C, O, "error_percentage"),
                (5_501, O, H, "cooldown_elapsed"),
                (5_600, H, C, "probe_successes"),
                (6_100, C, O, "error_percentage"),
            ]
        );
        assert_eq!(&r.admit_string()[..3], "010");
    }

    #[test]
    fn a_late_result_decides_half_open_and_a_failure_reopens_from_now() {
        let mut b = HystrixBreaker::new(HystrixConfig::default());
        // mixed() resolves the oldest call first, so its last call (admission 20) is left running.
        let mut s = vec![(0, A)];
        s.extend(mixed(1, 20, 0));
        s.push((500, Tick));
        s.push((5_501, A)); // the test request
        s.push((6_000, Done(20, false, 5_999))); // the late failure of a closed-state call reopens
        s.push((11_000, A)); // 5 s after 6000: not strictly after
        s.push((11_001, A));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (500, C, O, "error_percentage"),
                (5_501, O, H, "cooldown_elapsed"),
                (6_000, H, O, "probe_failed"),
                (11_001, O, H, "cooldown_elapsed"),
            ]
        );
    }
}
