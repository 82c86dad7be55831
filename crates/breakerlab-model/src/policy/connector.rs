//! Seed 000's `ConnectorBreaker` (../shared/seeds/000_f673d46eee20f6c2.txt), reproduced as its
//! code behaves: an error-rate and p95-latency window of 15 minutes that decides on every
//! `record`, a passive cooldown, and a half-open state that admits every call.
//!
//! Quirks reproduced (each cited from the seed's `allow`/`record`/`_prune`/`_p95_latency`):
//! - thresholds are checked on every `record` once `min_samples` are held, whatever the outcome:
//!   it can open on a success; comparisons are `>=` (exactly 50 % errors opens it);
//! - p95 is the sorted window's element at `max(0, int(n * 0.95) - 1)`: with 8 samples one slow
//!   call is ignored (index 6 of 0..7);
//! - `_prune` drops samples with `ts < now - window_sec`: a sample exactly `window` old stays;
//! - open → half-open happens only in `allow`, when `now - opened_at >= cooldown_sec`;
//! - half-open admits every call; `half_open_success` consecutive successes close it; any failure
//!   reopens it; half-open ignores latency (slow successes count as successes);
//! - the window is never cleared: after closing, the outage's samples are still in it and the
//!   next `record` re-opens it until they age out (flapping);
//! - a result recorded while open re-evaluates the thresholds and, when still exceeded, moves
//!   `opened_at` to now (restarting the cooldown) without any visible transition.
//!
//! Two knobs that are not in the seed (their defaults are the seed's behaviour) let a user price
//! the quirks: `half_open_max_calls` (probes in flight in half-open, 0 = unlimited) and
//! `clear_window_on_close`.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, invalid, longer_than_zero};
use super::window::{Edge, ExactWindow, LeastCount, Sample, connector_p95_index, percentile_exceeds};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// Parameters of seed 000's breaker (names follow the seed's fields, durations as `Dur`).
    ConnectorConfig {
        window: Dur = Dur::from_secs(900), "duration",
            "observation window (seed: window_sec = 900); a sample exactly this old is still in it";
        min_samples: u32 = 8, "calls", "no decision while the window holds fewer samples (seed: 8)";
        error_rate_open: f64 = 0.5, "ratio",
            "opens when failures/samples >= this, checked on every record (seed: 0.5)";
        p95_open: Dur = Dur::from_secs(8), "duration",
            "opens when the window's p95 (index max(0, floor(0.95 n) - 1)) >= this (seed: p95_open_ms = 8000)";
        cooldown: Dur = Dur::from_secs(300), "duration",
            "time open before the next allow() moves to half-open; a bad record while open restarts it (seed: 300 s)";
        half_open_success: u32 = 3, "calls", "consecutive half-open successes that close (seed: 3)";
        half_open_max_calls: u32 = 0, "calls",
            "not in the seed: probes in flight in half-open; 0 = unlimited, as the seed";
        clear_window_on_close: bool = false, "bool",
            "not in the seed: clear the window on closing; false = keep it, as the seed";
    }
}

impl Family for ConnectorConfig {
    type Breaker = ConnectorBreaker;
    const NAME: &'static str = "connector";
    const TITLE: &'static str = "connector (seed 000)";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "connector-breaker",
        library: "",
        summary: "seed 000: error rate >= 0.5 or p95 >= 8 s over 15 min (8 samples min); cooldown 5 min; 3 successes close",
        source: "seed 000, ../shared/seeds/000_f673d46eee20f6c2.txt (Python ConnectorBreaker: allow, record, _prune, _p95_latency)",
        quirks: &[
            "thresholds are checked on every record once min_samples are held, whatever the outcome: it can open on a success",
            "comparisons are >=: exactly 50 % errors opens it",
            "p95 is the sorted window's element at max(0, floor(0.95 n) - 1): with 8 samples one slow call is ignored",
            "a sample exactly `window` old is still in the window (pruned only when strictly older)",
            "open -> half-open only inside allow() (passive), when now - opened_at >= cooldown",
            "half-open admits every call (no probe limit; override: half_open_max_calls)",
            "half-open ignores latency: slow successes count as successes",
            "the window is never cleared: after closing, the outage's failures re-open it until they age out (override: clear_window_on_close)",
            "a result recorded while open re-evaluates the thresholds and, if still exceeded, moves opened_at (restarts the cooldown, no transition)",
        ],
        config: ConnectorConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        longer_than_zero("window", self.window)?;
        if !(self.error_rate_open.is_finite() && (0.0..=1.0).contains(&self.error_rate_open)) {
            return Err(invalid(
                "error_rate_open",
                "a ratio between 0 and 1",
                &self.error_rate_open.to_string(),
            ));
        }
        at_least_one("half_open_success", self.half_open_success)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> ConnectorBreaker {
        ConnectorBreaker::new(self.clone())
    }

    fn carry_samples(old: &ConnectorBreaker, fresh: &mut ConnectorBreaker, now: SimTime) {
        fresh.load_samples(old, now);
    }
}

/// Seed 000's breaker state machine.
#[derive(Clone, Debug)]
pub struct ConnectorBreaker {
    cfg: ConnectorConfig,
    phase: Phase,
    opened_at: SimTime,
    probe_success: u32,
    samples: ExactWindow,
    probes_in_flight: u32,
    /// Calls admitted in this half-open episode (for the evidence: the seed admits them all).
    probes_admitted: u32,
    /// The failures and the calls over `p95_open` that open it, for the window's size.
    error_cut: LeastCount,
    p95_cut: LeastCount,
}

impl ConnectorBreaker {
    /// A closed breaker with an empty window.
    pub fn new(cfg: ConnectorConfig) -> ConnectorBreaker {
        let samples = ExactWindow::new(cfg.window, Edge::KeepExact);
        ConnectorBreaker {
            cfg,
            phase: Phase::new(),
            opened_at: SimTime::ZERO,
            probe_success: 0,
            samples,
            probes_in_flight: 0,
            probes_admitted: 0,
            error_cut: LeastCount::default(),
            p95_cut: LeastCount::default(),
        }
    }

    /// Seed 000's `load_samples` into this (fresh) breaker: the saved window's samples, pruned at
    /// `now`; the state is not carried.
    pub fn load_samples(&mut self, saved: &ConnectorBreaker, now: SimTime) {
        self.samples = saved.samples.clone();
        self.samples.prune(now);
    }

    #[cold]
    fn set(&mut self, now: SimTime, to: State, reason: &'static str, out: &mut Transitions) {
        let ev = self.evidence_for(now, out);
        self.phase.enter(now, to, reason, ev, out);
        self.probes_in_flight = 0;
        self.probes_admitted = 0;
    }

    /// Samples the window's buffer holds without growing (memory stays flat once warmed up).
    pub fn buffer_capacity(&self) -> usize {
        self.samples.capacity()
    }

    /// The seed's two open conditions, error rate first (Python's `or` short-circuits).
    #[inline]
    fn exceeded(&mut self) -> Option<&'static str> {
        let t = self.samples.tally();
        if t.calls == 0 {
            return None;
        }
        let rate = self.cfg.error_rate_open;
        // Thresholds not kept are found from their closed forms: about ceil(rate · n) errors,
        // and exactly n − index slow calls (the sorted window's first n − index are under it).
        let near_rate = |n: u64| Some((rate * n as f64).ceil() as u64);
        if self.error_cut.holds_near(t.failures, t.calls, near_rate, |f, n| f as f64 / n as f64 >= rate) {
            return Some("error_rate");
        }
        let near_p95 = |n: u64| Some(n.saturating_sub(connector_p95_index(n)));
        if self
            .p95_cut
            .holds_near(t.over, t.calls, near_p95, |o, n| percentile_exceeds(n, o, connector_p95_index(n)))
        {
            return Some("p95_latency");
        }
        None
    }
}

impl Breaker for ConnectorBreaker {
    const TIMED: bool = false;

    /// Inlined into the run loop with [`Breaker::record`] (every call asks both).
    #[inline(always)]
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        self.samples.prune(now);
        if self.phase.state() == State::Open {
            if now.since(self.opened_at) < self.cfg.cooldown {
                return Admission::Reject;
            }
            self.set(now, State::HalfOpen, "cooldown_elapsed", out);
            self.probe_success = 0;
        }
        if self.phase.state() == State::HalfOpen {
            if self.cfg.half_open_max_calls > 0 {
                if self.probes_in_flight >= self.cfg.half_open_max_calls {
                    return Admission::Reject;
                }
                self.probes_in_flight += 1;
            }
            self.probes_admitted += 1;
            return Admission::Allow(self.phase.ticket(true));
        }
        Admission::Allow(self.phase.ticket(false))
    }

    #[inline(always)]
    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        if ticket.probe
            && ticket.generation == self.phase.generation()
            && self.phase.state() == State::HalfOpen
        {
            self.probes_in_flight = self.probes_in_flight.saturating_sub(1);
        }
        let ok = match obs.verdict {
            Verdict::Ignored => return,
            Verdict::Success => true,
            Verdict::Failure => false,
        };
        let over = obs.latency >= self.cfg.p95_open;
        self.samples.push(Sample { at: now, failed: !ok, slow: false, over });

        if self.phase.state() == State::HalfOpen {
            if ok {
                self.probe_success += 1;
                if self.probe_success >= self.cfg.half_open_success {
                    self.set(now, State::Closed, "probe_successes", out);
                    if self.cfg.clear_window_on_close {
                        self.samples.clear();
                    }
                }
            } else {
                self.set(now, State::Open, "probe_failed", out);
                self.opened_at = now;
            }
            return;
        }

        if self.samples.tally().calls < u64::from(self.cfg.min_samples) {
            return;
        }
        if let Some(reason) = self.exceeded() {
            if self.phase.state() == State::Closed {
                self.set(now, State::Open, reason, out);
            }
            // Already open: the seed assigns state and opened_at again; only the cooldown moves.
            self.opened_at = now;
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match self.phase.state() {
            State::Closed => {
                let t = self.samples.tally();
                ev.count("window_calls", t.calls, Test::AtLeast, "min_samples", u64::from(c.min_samples));
                ev.rate(
                    "window_error_rate",
                    t.failures,
                    t.calls,
                    Test::AtLeast,
                    "error_rate_open",
                    c.error_rate_open,
                );
                let needed = t.calls - connector_p95_index(t.calls).min(t.calls);
                ev.count("calls_over_latency", t.over, Test::AtLeast, "percentile_calls", needed.max(1));
                ev.fact_time("p95_open", c.p95_open);
            }
            State::Open => ev.open_for(now.since(self.opened_at), Test::AtLeast, "cooldown", c.cooldown),
            State::HalfOpen => {
                let admitted = u64::from(self.probes_admitted);
                if c.half_open_max_calls > 0 {
                    ev.count(
                        "probes_admitted",
                        admitted,
                        Test::Of,
                        "half_open_max_calls",
                        u64::from(c.half_open_max_calls),
                    );
                } else {
                    ev.fact_count("probes_admitted", admitted);
                }
                ev.count(
                    "probe_successes",
                    u64::from(self.probe_success),
                    Test::AtLeast,
                    "half_open_success",
                    u64::from(c.half_open_success),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, Quirk, burst, check_quirks, cyclic, drive, offer};
    use proptest::prelude::*;

    /// Lines of seed 000's code (`ConnectorBreaker`) in its article.
    macro_rules! seed_000 {
        ($lines:literal) => {
            concat!("seed 000, ../shared/seeds/000_f673d46eee20f6c2.txt, lines ", $lines)
        };
    }

    /// The seed's defaults: window 900 s, 8 samples, 50 %, p95 8 s, cooldown 300 s, 3 successes.
    fn seed() -> ConnectorBreaker {
        ConnectorBreaker::new(ConnectorConfig::default())
    }

    /// Eight failures at 0..7 s: opens at 7 000 ms (8 of 8).
    fn tripped() -> Vec<(u64, crate::policy::testkit::Ev)> {
        calls("ffffffff", 0, 1000)
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        check_quirks(vec![
            Quirk {
                quirk: "thresholds are checked on every record once 8 samples are held: the 8th, a success, opens at exactly 50 % (>=)",
                source: seed_000!("94-99"),
                breaker: seed(),
                script: calls("ffffssss", 0, 1000),
                transitions: vec![(7_000, C, O, "error_rate")],
                admits: "11111111",
            },
            Quirk {
                quirk: "p95 is the sorted window's element max(0, int(0.95 n) - 1): one call of 9 s in 8 is ignored",
                source: seed_000!("56-58, 97"),
                breaker: seed(),
                script: calls("Lsssssss", 0, 1000),
                transitions: vec![],
                admits: "11111111",
            },
            Quirk {
                quirk: "p95 is the sorted window's element max(0, int(0.95 n) - 1): two calls of 9 s in 8 open it",
                source: seed_000!("56-58, 97"),
                breaker: seed(),
                script: calls("LLssssss", 0, 1000),
                transitions: vec![(7_000, C, O, "p95_latency")],
                admits: "11111111",
            },
            Quirk {
                quirk: "_prune keeps a sample exactly window_sec old (ts < now - window): 4 failures at 0 still count at 900 000 ms",
                source: seed_000!("42-45"),
                breaker: seed(),
                script: [calls("ffff", 0, 0), calls("sss", 1_000, 1_000), calls("s", 900_000, 0)].concat(),
                transitions: vec![(900_000, C, O, "error_rate")],
                admits: "11111111",
            },
            Quirk {
                quirk: "_prune drops them one ms later: 4 samples, under min_samples, no decision",
                source: seed_000!("42-45, 94-95"),
                breaker: seed(),
                script: [calls("ffff", 0, 0), calls("sss", 1_000, 1_000), calls("s", 900_001, 0)].concat(),
                transitions: vec![],
                admits: "11111111",
            },
            Quirk {
                quirk: "open -> half-open only inside allow(), at now - opened_at >= cooldown (300 s); half-open admits every call; 3 successes close",
                source: seed_000!("70-76, 84-88"),
                breaker: seed(),
                script: [
                    tripped(),
                    vec![(306_999, A), (307_000, A), (307_000, A), (307_000, A)],
                    vec![(307_001, S(100)), (307_002, S(100)), (307_003, S(100))],
                ]
                .concat(),
                transitions: vec![
                    (7_000, C, O, "error_rate"),
                    (307_000, O, H, "cooldown_elapsed"),
                    (307_003, H, C, "probe_successes"),
                ],
                admits: "111111110111",
            },
            Quirk {
                quirk: "half-open ignores latency: three successes of 9 s close it",
                source: seed_000!("84-88"),
                breaker: seed(),
                script: [tripped(), calls("LLL", 307_000, 1)].concat(),
                transitions: vec![
                    (7_000, C, O, "error_rate"),
                    (307_000, O, H, "cooldown_elapsed"),
                    (307_002, H, C, "probe_successes"),
                ],
                admits: "11111111111",
            },
            Quirk {
                quirk: "any failure in half-open reopens, after successes too",
                source: seed_000!("89-91"),
                breaker: seed(),
                script: [tripped(), calls("ssf", 307_000, 1)].concat(),
                transitions: vec![
                    (7_000, C, O, "error_rate"),
                    (307_000, O, H, "cooldown_elapsed"),
                    (307_002, H, O, "probe_failed"),
                ],
                admits: "11111111111",
            },
            Quirk {
                quirk: "the window is not cleared on closing: the next record, a success, reopens on the outage's failures (8 of 12)",
                source: seed_000!("88, 94-99"),
                breaker: seed(),
                script: [tripped(), calls("sss", 307_000, 1), calls("s", 307_003, 0)].concat(),
                transitions: vec![
                    (7_000, C, O, "error_rate"),
                    (307_000, O, H, "cooldown_elapsed"),
                    (307_002, H, C, "probe_successes"),
                    (307_003, C, O, "error_rate"),
                ],
                admits: "111111111111",
            },
            Quirk {
                quirk: "a failure recorded while open re-evaluates and moves opened_at: the cooldown restarts at 100 000 ms, no transition",
                source: seed_000!("94-99 (the OPEN state falls through to them)"),
                breaker: seed(),
                script: [
                    burst(0, A, 9),
                    burst(0, F(100), 8),
                    vec![(100_000, F(100)), (399_999, A), (400_000, A)],
                ]
                .concat(),
                transitions: vec![(0, C, O, "error_rate"), (400_000, O, H, "cooldown_elapsed")],
                admits: "11111111101",
            },
        ]);
    }

    fn small() -> ConnectorBreaker {
        // window 60 s, 4 samples, 50 %, p95 8 s, cooldown 10 s, 2 successes close.
        ConnectorBreaker::new(ConnectorConfig {
            window: Dur::from_secs(60),
            min_samples: 4,
            cooldown: Dur::from_secs(10),
            half_open_success: 2,
            ..ConnectorConfig::default()
        })
    }

    fn calls(pattern: &str, t0: u64, step: u64) -> Vec<(u64, crate::policy::testkit::Ev)> {
        // One admit + result per char: 's' success 100 ms, 'f' failure, 'L' slow success (9 s).
        let mut v = Vec::new();
        for (i, c) in pattern.chars().enumerate() {
            let t = t0 + step * i as u64;
            v.push((t, A));
            v.push((
                t,
                match c {
                    's' => S(100),
                    'f' => F(100),
                    'L' => S(9_000),
                    _ => unreachable!(),
                },
            ));
        }
        v
    }

    #[test]
    fn exactly_half_errors_opens_at_min_samples() {
        let mut b = small();
        // 3 samples: 2 failures (67 %) but under min_samples: no decision.
        let mut s = calls("ffs", 0, 1000);
        // 4th sample is a success: 2/4 = 50 % >= 0.5 opens it, on a success.
        s.extend(calls("s", 3000, 0));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(3000, C, O, "error_rate")]);
    }

    #[test]
    fn below_half_stays_closed() {
        let mut b = small();
        let r = drive(&mut b, &calls("fsssfsss", 0, 1000));
        assert!(r.tr.is_empty(), "{:?}", r.tr);
    }

    #[test]
    fn p95_index_rounds_down_and_ignores_one_slow_call_in_eight() {
        // 8 samples, one slow: index 6 of the sorted window is fast -> stays closed.
        let mut b = ConnectorBreaker::new(ConnectorConfig { min_samples: 8, ..ConnectorConfig::default() });
        let r = drive(&mut b, &calls("sssssssL", 0, 1000));
        assert!(r.tr.is_empty());
        // Two slow in 8: index 6 is slow -> opens at the 8th record.
        let mut b = ConnectorBreaker::new(ConnectorConfig { min_samples: 8, ..ConnectorConfig::default() });
        let r = drive(&mut b, &calls("ssssssLL", 0, 1000));
        assert_eq!(r.tr, vec![(7000, C, O, "p95_latency")]);
    }

    #[test]
    fn latency_exactly_at_threshold_counts() {
        let mut b = ConnectorBreaker::new(ConnectorConfig { min_samples: 1, ..ConnectorConfig::default() });
        let r = drive(&mut b, &[(0, A), (5, S(8_000))]);
        assert_eq!(r.tr, vec![(5, C, O, "p95_latency")]);
        let mut b = ConnectorBreaker::new(ConnectorConfig { min_samples: 1, ..ConnectorConfig::default() });
        let r = drive(&mut b, &[(0, A), (5, S(7_999))]);
        assert!(r.tr.is_empty());
    }

    #[test]
    fn sample_exactly_window_old_stays() {
        let mut b = small();
        // Failures at 0 and 1 s, successes at 30 and 60 s: at 60 s the 0 s failure is exactly
        // 60 s old, still in: 2/4 opens.
        let mut s = calls("ff", 0, 1000);
        s.extend(calls("s", 30_000, 0));
        s.extend(calls("s", 60_000, 0));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(60_000, C, O, "error_rate")]);
        // One microsecond later the first failure has gone: only 3 samples, no decision.
        let mut b = small();
        let mut s = calls("ff", 0, 1000);
        s.extend(calls("s", 30_000, 0));
        s.extend(calls("s", 60_001, 0));
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty(), "{:?}", r.tr);
    }

    #[test]
    fn passive_half_open_admits_everyone_and_closes_after_k() {
        let mut b = small();
        let mut s = calls("ffff", 0, 0); // opens at 0 (the 4th record)
        s.push((9_999, A)); // still open
        s.extend(burst(10_000, A, 5)); // cooldown elapsed: half-open admits all five
        s.push((10_100, S(100)));
        s.push((10_200, S(100))); // second success closes
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "error_rate"),
                (10_000, O, H, "cooldown_elapsed"),
                (10_200, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[4..], "011111");
    }

    #[test]
    fn closes_then_reopens_from_stale_window() {
        let mut b = small();
        let mut s = calls("ffff", 0, 0);
        s.extend(burst(10_000, A, 3));
        s.push((10_100, S(100)));
        s.push((10_200, S(100))); // closes; window: 4 f + 2 s
        s.push((10_300, S(100))); // the third (late) success: 4/7 failures -> opens again on a success
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "error_rate"),
                (10_000, O, H, "cooldown_elapsed"),
                (10_200, H, C, "probe_successes"),
                (10_300, C, O, "error_rate"),
            ]
        );
        // With the override the window is cleared on close and the late success keeps it closed.
        let mut b = ConnectorBreaker::new(ConnectorConfig { clear_window_on_close: true, ..b.cfg.clone() });
        let r = drive(&mut b, &s);
        assert_eq!(r.tr.len(), 3);
    }

    #[test]
    fn record_while_open_restarts_cooldown_silently() {
        let mut b = small();
        let mut s = burst(0, A, 5);
        s.extend(burst(0, F(100), 4)); // opens at 0 with one call still outstanding
        s.push((5_000, S(100))); // late success: 4/5 still bad -> opened_at = 5 s, no transition
        s.push((10_000, A)); // would have been half-open; now rejected
        s.push((14_999, A));
        s.push((15_000, A)); // 10 s after the late record
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(0, C, O, "error_rate"), (15_000, O, H, "cooldown_elapsed")]);
        assert_eq!(&r.admit_string()[5..], "001");
    }

    #[test]
    fn half_open_failure_reopens_and_ignores_latency() {
        let mut b = small();
        let mut s = calls("ffff", 0, 0);
        s.push((10_000, A));
        s.push((10_000, A));
        s.push((10_500, S(60_000))); // a very slow success still counts as a success
        s.push((10_600, F(10)));
        s.push((15_000, A)); // reopened at 10.6 s: rejected until 20.6 s
        s.push((20_600, A));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "error_rate"),
                (10_000, O, H, "cooldown_elapsed"),
                (10_600, H, O, "probe_failed"),
                (20_600, O, H, "cooldown_elapsed"),
            ]
        );
    }

    #[test]
    fn half_open_max_calls_limits_probes_in_flight() {
        let mut b = ConnectorBreaker::new(ConnectorConfig { half_open_max_calls: 1, ..small().cfg });
        let mut s = calls("ffff", 0, 0);
        s.extend(burst(10_000, A, 3)); // only the first is admitted
        s.push((10_100, S(100)));
        s.push((10_200, A)); // the slot is free again
        s.push((10_300, S(100))); // second success closes
        let r = drive(&mut b, &s);
        assert_eq!(&r.admit_string()[4..], "1001");
        assert_eq!(r.tr.last(), Some(&(10_300, H, C, "probe_successes")));
    }

    #[test]
    fn ignored_results_are_not_samples() {
        let mut b = small();
        let mut s = calls("fff", 0, 0);
        s.push((0, A));
        s.push((0, I));
        let r = drive(&mut b, &s);
        assert!(r.tr.is_empty());
    }

    #[test]
    fn memory_is_flat_in_steady_state() {
        let mut b = ConnectorBreaker::new(ConnectorConfig::default());
        // A 2-hour cycle with a 20-minute outage, a call every 100 ms.
        let f = cyclic(7_200_000, 1_200_000);
        let warm = offer(&mut b, 0, 3 * 72_000, 100, &f);
        assert!(warm >= 6, "the cycle should open and close the breaker: {warm}");
        let cap = b.buffer_capacity();
        offer(&mut b, 3 * 7_200_000, 3 * 72_000, 100, &f);
        assert_eq!(b.buffer_capacity(), cap);
    }

    /// The seed's code transliterated naively (a list of samples, a sort per p95), as the
    /// reference the counting implementation must match.
    struct Reference {
        cfg: ConnectorConfig,
        state: State,
        opened_at: u64,
        probe_success: u32,
        samples: Vec<(bool, u64, u64)>, // ok, latency us, ts us
    }

    impl Reference {
        fn prune(&mut self, now: u64) {
            let w = self.cfg.window.micros();
            self.samples.retain(|&(_, _, ts)| !(now >= w && ts < now - w));
        }
        fn allow(&mut self, now: u64, tr: &mut Vec<(u64, State)>) -> bool {
            self.prune(now);
            if self.state == State::Open {
                if now - self.opened_at >= self.cfg.cooldown.micros() {
                    self.state = State::HalfOpen;
                    tr.push((now, State::HalfOpen));
                    self.probe_success = 0;
                    return true;
                }
                return false;
            }
            true
        }
        fn record(&mut self, ok: bool, lat: u64, now: u64, tr: &mut Vec<(u64, State)>) {
            self.samples.push((ok, lat, now));
            self.prune(now);
            if self.state == State::HalfOpen {
                if ok {
                    self.probe_success += 1;
                    if self.probe_success >= self.cfg.half_open_success {
                        self.state = State::Closed;
                        tr.push((now, State::Closed));
                    }
                } else {
                    self.state = State::Open;
                    tr.push((now, State::Open));
                    self.opened_at = now;
                }
                return;
            }
            if self.samples.len() < self.cfg.min_samples as usize {
                return;
            }
            let failed = self.samples.iter().filter(|s| !s.0).count();
            let rate = failed as f64 / self.samples.len() as f64;
            let mut values: Vec<u64> = self.samples.iter().map(|s| s.1).collect();
            values.sort();
            let idx = ((values.len() as f64 * 0.95) as usize).saturating_sub(1);
            if rate >= self.cfg.error_rate_open || values[idx] >= self.cfg.p95_open.micros() {
                if self.state != State::Open {
                    tr.push((now, State::Open));
                }
                self.state = State::Open;
                self.opened_at = now;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Random scripts of admits and records: same admissions, same transitions.
        #[test]
        fn matches_a_sort_based_transliteration_of_the_seed(
            ops in proptest::collection::vec((0u64..1_500, any::<bool>(), any::<bool>(), 0u64..1_200), 1..400),
            min_samples in 0u32..6,
        ) {
            let cfg = ConnectorConfig {
                window: Dur::from_secs(10),
                min_samples,
                error_rate_open: 0.5,
                p95_open: Dur::from_millis(800),
                cooldown: Dur::from_secs(2),
                half_open_success: 2,
                ..ConnectorConfig::default()
            };
            let mut fast = ConnectorBreaker::new(cfg.clone());
            let mut reference = Reference { cfg, state: State::Closed, opened_at: 0, probe_success: 0, samples: Vec::new() };
            let (mut out, mut tr) = (Transitions::new(), Vec::new());
            let mut now = 0u64;
            for (dt_ms, is_admit, ok, lat_ms) in ops {
                now += dt_ms * 1000;
                if is_admit {
                    let a = fast.admit(SimTime(now), &mut out);
                    prop_assert_eq!(matches!(a, Admission::Allow(_)), reference.allow(now, &mut tr));
                } else {
                    let verdict = if ok { Verdict::Success } else { Verdict::Failure };
                    let obs = Observation { verdict, latency: Dur::from_millis(lat_ms) };
                    fast.record(SimTime(now), Ticket::default(), obs, &mut out);
                    reference.record(ok, lat_ms * 1000, now, &mut tr);
                }
                prop_assert_eq!(fast.state(), reference.state);
            }
            let ours: Vec<(u64, State)> = out.iter().map(|t| (t.at.micros(), t.to)).collect();
            prop_assert_eq!(ours, tr);
        }
    }
}
