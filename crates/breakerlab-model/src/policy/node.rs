//! Seed 003's Node.js `CircuitBreaker` (../shared/seeds/003_984450fd97c1e1b4.txt, `breaker.js`),
//! reproduced as its code behaves: a failure counter zeroed by any success, a passive cooldown,
//! and a `Promise.race` call timeout.
//!
//! Quirks reproduced (cited from `call`, `onSuccess`, `onFailure`):
//! - open → half-open on the first call after `cooldownMs` (passive, in `call`);
//! - half-open admits every call until a result arrives (the article says "exactly one probe";
//!   the code has no such limit);
//! - `onSuccess` zeroes the failure count and closes from half-open; a late success while open
//!   zeroes the count but stays open;
//! - `onFailure` increments the count and opens when in half-open or at the threshold; a late
//!   failure while open sets `openedAt` again, restarting the cooldown (no visible transition);
//! - a call at or over `timeoutMs` fails at t + `timeoutMs` (the race's timer rejects first);
//!   the underlying call is not cancelled, so the dependency still does the work:
//!   [`NodeConfig::timeout`] is the client's call timeout the engine applies.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, longer_than_zero};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// Parameters of seed 003's constructor (`failureThreshold`, `cooldownMs`, `timeoutMs`).
    NodeConfig {
        failure_threshold: u32 = 5, "calls",
            "failures, zeroed by any success, that open (seed: failureThreshold = 5)";
        cooldown: Dur = Dur::from_secs(30), "duration",
            "open time before the next call moves to half-open; a late failure while open restarts it (seed: cooldownMs = 30000)";
        timeout: Dur = Dur::from_secs(5), "duration",
            "call timeout: a call at or over it fails at t + timeout, not cancelled (seed: timeoutMs = 5000)";
    }
}

impl Family for NodeConfig {
    type Breaker = NodeBreaker;
    const NAME: &'static str = "node";
    const TITLE: &'static str = "node (seed 003)";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "node-breaker",
        library: "",
        summary: "seed 003: 5 failures (reset by any success) open it; cooldown 30 s; calls time out at 5 s",
        source: "seed 003, ../shared/seeds/003_984450fd97c1e1b4.txt (Node.js breaker.js: call, onSuccess, onFailure)",
        quirks: &[
            "open -> half-open on the first call after the cooldown (passive)",
            "half-open admits every call until a result arrives (the text says one probe)",
            "a success zeroes the failure count and closes from half-open; a late success while open zeroes the count but stays open",
            "a late failure while open restarts the cooldown (openedAt moves, no transition)",
            "a call at or over the timeout fails at t + timeout; the dependency still does the work (Promise.race does not cancel)",
        ],
        config: NodeConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        at_least_one("failure_threshold", self.failure_threshold)?;
        longer_than_zero("timeout", self.timeout)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> NodeBreaker {
        NodeBreaker::new(self.clone())
    }

    fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
        Some(Some(self.timeout))
    }
}

/// Seed 003's breaker state machine.
#[derive(Clone, Debug)]
pub struct NodeBreaker {
    cfg: NodeConfig,
    phase: Phase,
    failures: u64,
    opened_at: SimTime,
    /// Calls admitted in this half-open episode (for the evidence: the seed admits them all).
    probes_admitted: u64,
}

impl NodeBreaker {
    /// A closed breaker with no failures.
    pub fn new(cfg: NodeConfig) -> NodeBreaker {
        NodeBreaker { cfg, phase: Phase::new(), failures: 0, opened_at: SimTime::ZERO, probes_admitted: 0 }
    }
}

impl Breaker for NodeBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.phase.state() == State::Open {
            if now.since(self.opened_at) < self.cfg.cooldown {
                return Admission::Reject;
            }
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
            self.probes_admitted = 0;
        }
        let probe = self.phase.state() == State::HalfOpen;
        self.probes_admitted += u64::from(probe);
        Admission::Allow(self.phase.ticket(probe))
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        match obs.verdict {
            Verdict::Ignored => {}
            Verdict::Success => {
                if self.phase.state() == State::HalfOpen {
                    self.phase.enter(now, State::Closed, "probe_successes", self.evidence_for(now, out), out);
                }
                self.failures = 0;
            }
            Verdict::Failure => {
                self.failures += 1;
                if self.phase.state() == State::HalfOpen
                    || self.failures >= u64::from(self.cfg.failure_threshold)
                {
                    match self.phase.state() {
                        State::HalfOpen => self.phase.enter(
                            now,
                            State::Open,
                            "probe_failed",
                            self.evidence_for(now, out),
                            out,
                        ),
                        State::Closed => self.phase.enter(
                            now,
                            State::Open,
                            "consecutive_failures",
                            self.evidence_for(now, out),
                            out,
                        ),
                        State::Open => {}
                    }
                    self.opened_at = now;
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
            State::Closed => ev.count(
                "failure_count",
                self.failures,
                Test::AtLeast,
                "failure_threshold",
                u64::from(c.failure_threshold),
            ),
            State::Open => ev.open_for(now.since(self.opened_at), Test::AtLeast, "cooldown", c.cooldown),
            State::HalfOpen => {
                ev.fact_count("probes_admitted", self.probes_admitted);
                ev.fact_count("failure_count", self.failures);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{
        C, Ev::*, H, O, Quirk, alternating, burst, check_quirks, drive, tripped_by_five,
    };

    fn b() -> NodeBreaker {
        NodeBreaker::new(NodeConfig::default())
    }

    /// Lines of seed 003's `breaker.js` in its article.
    macro_rules! seed_003 {
        ($lines:literal) => {
            concat!("seed 003, ../shared/seeds/003_984450fd97c1e1b4.txt, lines ", $lines)
        };
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        // new CircuitBreaker({}): 5 failures, cooldown 30 s. tripped_by_five(n): 5 + n calls at 0, five
        // fail at 0 (opens), n still in flight.
        check_quirks(vec![
            Quirk {
                quirk: "5 failures open; any success zeroes the count",
                source: seed_003!("95, 100-101"),
                breaker: b(),
                script: alternating(
                    &[false, false, false, false, true, false, false, false, false, false],
                    10,
                ),
                transitions: vec![(90, C, O, "consecutive_failures")],
                admits: "1111111111",
            },
            Quirk {
                quirk: "open -> half-open on the first call at Date.now() - openedAt >= 30 s; half-open admits every call; the first success closes",
                source: seed_003!("71-77, 96"),
                breaker: b(),
                script: [tripped_by_five(0), vec![(29_999, A)], burst(30_000, A, 4), vec![(30_100, S(100))]]
                    .concat(),
                transitions: vec![
                    (0, C, O, "consecutive_failures"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_100, H, C, "probe_successes"),
                ],
                admits: "1111101111",
            },
            Quirk {
                quirk: "a failure in half-open reopens",
                source: seed_003!("101-103"),
                breaker: b(),
                script: [tripped_by_five(0), burst(30_000, A, 2), vec![(30_001, F(1))]].concat(),
                transitions: vec![
                    (0, C, O, "consecutive_failures"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_001, H, O, "probe_failed"),
                ],
                admits: "1111111",
            },
            Quirk {
                quirk: "a late failure while open (count still >= 5) stamps openedAt again: the cooldown runs from 20 000 ms",
                source: seed_003!("100-103"),
                breaker: b(),
                script: [tripped_by_five(1), vec![(20_000, F(20_000)), (49_999, A), (50_000, A)]].concat(),
                transitions: vec![(0, C, O, "consecutive_failures"), (50_000, O, H, "cooldown_elapsed")],
                admits: "11111101",
            },
            Quirk {
                quirk: "a late success while open zeroes the count and stays open; a late failure after it (count 1) does not restart the cooldown",
                source: seed_003!("95-96, 100-103"),
                breaker: b(),
                script: [tripped_by_five(2), vec![(10_000, S(10_000)), (20_000, F(20_000)), (30_000, A)]]
                    .concat(),
                transitions: vec![(0, C, O, "consecutive_failures"), (30_000, O, H, "cooldown_elapsed")],
                admits: "11111111",
            },
        ]);
    }

    #[test]
    fn threshold_and_success_zeroes() {
        let mut x = b();
        let s = alternating(&[false, false, false, false, true, false, false, false, false, false], 10);
        let r = drive(&mut x, &s);
        assert_eq!(r.tr, vec![(90, C, O, "consecutive_failures")]);
    }

    #[test]
    fn half_open_admits_everyone_first_result_decides() {
        let mut x = b();
        let mut s = tripped_by_five(0);
        s.push((29_999, A));
        s.extend(burst(30_000, A, 4));
        s.push((30_100, S(100))); // closes
        s.push((30_200, F(200))); // a probe's failure in closed: count 1
        let r = drive(&mut x, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_100, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[5..], "01111");
        assert_eq!(x.failures, 1);
    }

    #[test]
    fn late_failure_while_open_restarts_cooldown() {
        let mut x = b();
        let mut s = tripped_by_five(1);
        s.push((20_000, F(5_000)));
        s.push((30_000, A));
        s.push((49_999, A));
        s.push((50_000, A));
        let r = drive(&mut x, &s);
        assert_eq!(r.tr, vec![(0, C, O, "consecutive_failures"), (50_000, O, H, "cooldown_elapsed")]);
        assert_eq!(&r.admit_string()[6..], "001");
    }

    #[test]
    fn late_success_while_open_zeroes_but_stays_open() {
        let mut x = b();
        let mut s = tripped_by_five(1);
        s.push((1_000, S(1_000)));
        let r = drive(&mut x, &s);
        assert_eq!(r.tr.len(), 1);
        assert_eq!((x.state(), x.failures), (State::Open, 0));
        // A half-open failure reopens even with the count zeroed.
        let mut s2 = vec![(30_000, A), (30_001, F(1))];
        s2.push((60_000, A));
        s2.push((60_001, A));
        let r = drive(&mut x, &s2);
        assert_eq!(
            r.tr,
            vec![
                (30_000, O, H, "cooldown_elapsed"),
                (30_001, H, O, "probe_failed"),
                (60_001, O, H, "cooldown_elapsed")
            ]
        );
    }
}
