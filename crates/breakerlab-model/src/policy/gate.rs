//! Seed 001's `CircuitGate` (../shared/seeds/001_c8f3fdb67a80a5ac.txt, `circuit_gate.py`),
//! reproduced as its code behaves: failures within a sliding 60 s window trip it, a cooloff, and
//! a half-open state with exactly one probe.
//!
//! Quirks reproduced (cited from `allow`, `record`, `_open`, `_reset`):
//! - in closed, failures are timestamped when recorded and it opens when their count reaches
//!   `max_failures`; the list is cleared on open and on close;
//! - old failures are pruned only in `allow`, and only when strictly older than the window
//!   (`now - failures[0] > window_secs`): a failure exactly `window` old still counts; `allow`
//!   in closed returns `len(failures) < max_failures` after pruning (always true with
//!   `max_failures >= 1`, because reaching it opens the gate; reproduced anyway);
//! - after the cooloff, `allow` moves to half-open and admits exactly one probe until a result
//!   is recorded; a probe never recorded leaves it stuck in half-open;
//! - any result recorded while not closed acts as the probe's result (`probe_sent = False`, then
//!   close or open): a late success from a call admitted before the trip closes the gate at once
//!   (open → closed, reason `late_success`, skipping cooloff and half-open); a late failure while
//!   open restarts the cooloff (no visible transition); a late result while half-open decides
//!   it and frees the probe slot, so a second probe can start while the first is in flight.
//! - The seed's usage wrapper records only `TimeoutError`s and successes; any other exception
//!   escapes unrecorded. The preset's default classifier counts every error (the class itself
//!   takes any `ok=False`); to model the wrapper, set `failure_on = ["timeout"]` and
//!   `ignore = ["error", "rate_limited", "client_error"]`: ignored results are not recorded, so
//!   an ignored probe leaves the gate stuck, exactly as in the seed.
//! - `time.monotonic()` is process-local; restarts lose the state (the engine's restart model).

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, longer_than_zero, require};
use super::window::{Edge, FailureTimes};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, SimTime};

family_config! {
    /// Parameters of seed 001's `GateConfig`.
    GateConfig {
        window: Dur = Dur::from_secs(60), "duration",
            "failures recorded within this span (inclusive) count; pruned only in allow() (seed: window_secs = 60)";
        max_failures: u32 = 5, "calls", "failures in the window that open the gate (seed: 5)";
        cooloff: Dur = Dur::from_secs(30), "duration",
            "time open before the next allow() moves to half-open; a late failure while open restarts it (seed: cooloff_secs = 30)";
    }
}

impl Family for GateConfig {
    type Breaker = CircuitGate;
    const NAME: &'static str = "gate";
    const TITLE: &'static str = "gate (seed 001)";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "circuit-gate",
        library: "",
        summary: "seed 001: 5 failures within 60 s open it; cooloff 30 s; exactly one probe",
        source: "seed 001, ../shared/seeds/001_c8f3fdb67a80a5ac.txt (Python circuit_gate.py: CircuitGate.allow, record, _open, _reset)",
        quirks: &[
            "old failures are pruned only in allow(), and only when strictly older than the window: a failure exactly 60 s old still counts",
            "the failure list is cleared on open and on close; successes in closed do not reset it",
            "half-open admits exactly one probe until a result is recorded: a probe never recorded leaves it stuck",
            "any result recorded while not closed acts as the probe's result: a late success closes at once (open -> closed, skipping half-open)",
            "a late failure while open restarts the cooloff (no transition)",
            "allow() in closed returns len(failures) < max_failures after pruning (always true once max_failures >= 1)",
            "the seed's usage wrapper records only timeouts and successes; model it with failure_on = [\"timeout\"], ignore = [\"error\", \"rate_limited\", \"client_error\"]",
        ],
        config: GateConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        require(
            self.max_failures != 0,
            "max_failures",
            "at least 1 (0 would reject every call while closed)",
            "0",
        )?;
        longer_than_zero("window", self.window)?;
        Ok(())
    }

    fn build(&self, _seed: u64) -> CircuitGate {
        CircuitGate::new(self.clone())
    }

    fn carry_samples(old: &CircuitGate, fresh: &mut CircuitGate, _now: SimTime) {
        fresh.load_failures(old);
    }
}

/// Seed 001's gate state machine.
#[derive(Clone, Debug)]
pub struct CircuitGate {
    cfg: GateConfig,
    phase: Phase,
    failures: FailureTimes,
    opened_at: SimTime,
    probe_sent: bool,
}

impl CircuitGate {
    /// The failure times of `saved` carried into this (fresh) gate; pruned by the next `allow`
    /// as the gate always does.
    pub fn load_failures(&mut self, saved: &CircuitGate) {
        self.failures = saved.failures.clone();
    }

    /// A closed gate with no failures.
    pub fn new(cfg: GateConfig) -> CircuitGate {
        CircuitGate {
            cfg,
            phase: Phase::new(),
            failures: FailureTimes::default(),
            opened_at: SimTime::ZERO,
            probe_sent: false,
        }
    }

    /// Failure times the buffer holds without growing (memory stays flat once warmed up).
    pub fn buffer_capacity(&self) -> usize {
        self.failures.capacity()
    }

    /// `_open`: state open, cooloff from now, failures cleared (a no-op transition when open).
    fn open(&mut self, now: SimTime, reason: &'static str, out: &mut Transitions) {
        if self.phase.state() != State::Open {
            let ev = self.evidence_for(now, out);
            self.phase.enter(now, State::Open, reason, ev, out);
        }
        self.opened_at = now;
        self.failures.clear();
    }
}

impl Breaker for CircuitGate {
    const TIMED: bool = false;

    #[inline(always)]
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        if self.phase.state() == State::Open {
            if now.since(self.opened_at) < self.cfg.cooloff {
                return Admission::Reject;
            }
            let ev = self.evidence_for(now, out);
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", ev, out);
            self.probe_sent = false;
        }
        if self.phase.state() == State::HalfOpen {
            if !self.probe_sent {
                self.probe_sent = true;
                return Admission::Allow(self.phase.ticket(true));
            }
            return Admission::Reject;
        }
        self.failures.prune(now, self.cfg.window, Edge::KeepExact);
        if self.failures.len() < self.cfg.max_failures as usize {
            Admission::Allow(self.phase.ticket(false))
        } else {
            Admission::Reject
        }
    }

    #[inline(always)]
    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        let ok = match obs.verdict {
            Verdict::Ignored => return,
            Verdict::Success => true,
            Verdict::Failure => false,
        };
        if self.phase.state() == State::Closed {
            if !ok {
                self.failures.push(now);
                if self.failures.len() >= self.cfg.max_failures as usize {
                    self.open(now, "failures_in_window", out);
                }
            }
            return;
        }
        self.probe_sent = false;
        if ok {
            let reason = if self.phase.state() == State::Open { "late_success" } else { "probe_successes" };
            let ev = self.evidence_for(now, out);
            self.phase.enter(now, State::Closed, reason, ev, out);
            self.failures.clear();
        } else {
            self.open(now, "probe_failed", out);
        }
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let c = &self.cfg;
        match self.phase.state() {
            // The failures as the gate counts them: pruned only in `allow`, so some may be older.
            State::Closed => ev.count(
                "failures_in_window",
                self.failures.len() as u64,
                Test::AtLeast,
                "max_failures",
                u64::from(c.max_failures),
            ),
            State::Open => ev.open_for(now.since(self.opened_at), Test::AtLeast, "cooloff", c.cooloff),
            State::HalfOpen => ev.count("probes_admitted", u64::from(self.probe_sent), Test::Of, "probes", 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, H, O, Quirk, burst, calls, check_quirks, cyclic, drive, offer};

    fn gate() -> CircuitGate {
        CircuitGate::new(GateConfig::default())
    }

    /// Lines of seed 001's `circuit_gate.py` in its article.
    macro_rules! seed_001 {
        ($lines:literal) => {
            concat!("seed 001, ../shared/seeds/001_c8f3fdb67a80a5ac.txt, lines ", $lines)
        };
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        // GateConfig(): window 60 s, 5 failures, cooloff 30 s. tripped_at_zero(): opens at 0 with
        // one call still in flight.
        check_quirks(vec![
            Quirk {
                quirk: "failures are stamped at record() and the 5th in the window opens; successes do not clear them",
                source: seed_001!("54-58"),
                breaker: gate(),
                script: [calls(0, 2, 1_000, false), calls(2_000, 1, 1, true), calls(3_000, 3, 1_000, false)]
                    .concat(),
                transitions: vec![(5_000, C, O, "failures_in_window")],
                admits: "111111",
            },
            Quirk {
                quirk: "old failures are pruned only in allow(), when strictly older than the window: one exactly 60 s old still counts",
                source: seed_001!("50-52"),
                breaker: gate(),
                script: [calls(0, 4, 0, false), calls(60_000, 1, 1, false)].concat(),
                transitions: vec![(60_000, C, O, "failures_in_window")],
                admits: "11111",
            },
            Quirk {
                quirk: "one ms later allow() has pruned them: the 5th failure finds none",
                source: seed_001!("50-52"),
                breaker: gate(),
                script: [calls(0, 4, 0, false), calls(60_001, 1, 1, false)].concat(),
                transitions: vec![],
                admits: "11111",
            },
            Quirk {
                quirk: "after the cooloff (>=) allow() half-opens and lets exactly one probe through; its success closes",
                source: seed_001!("39-49, 60-62"),
                breaker: gate(),
                script: [
                    calls(0, 5, 0, false),
                    vec![(29_999, A), (30_000, A), (30_000, A), (30_010, S(10)), (30_011, A)],
                ]
                .concat(),
                transitions: vec![
                    (0, C, O, "failures_in_window"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_010, H, C, "probe_successes"),
                ],
                admits: "111110101",
            },
            Quirk {
                quirk: "a probe that is never recorded leaves the gate half-open for ever",
                source: seed_001!("45-49"),
                breaker: gate(),
                script: [calls(0, 5, 0, false), vec![(30_000, A), (60_000, A), (36_000_000, A)]].concat(),
                transitions: vec![(0, C, O, "failures_in_window"), (30_000, O, H, "cooldown_elapsed")],
                admits: "11111100",
            },
            Quirk {
                quirk: "a late success while open closes at once (open -> closed), skipping the cooloff",
                source: seed_001!("60-62, 69-72"),
                breaker: gate(),
                script: [tripped_at_zero(), vec![(5_000, S(5_000))]].concat(),
                transitions: vec![(0, C, O, "failures_in_window"), (5_000, O, C, "late_success")],
                admits: "111111",
            },
            Quirk {
                quirk: "a late failure while open restarts the cooloff (_open stamps opened_at), no transition",
                source: seed_001!("63-67"),
                breaker: gate(),
                script: [tripped_at_zero(), vec![(20_000, F(20_000)), (49_999, A), (50_000, A)]].concat(),
                transitions: vec![(0, C, O, "failures_in_window"), (50_000, O, H, "cooldown_elapsed")],
                admits: "11111101",
            },
            Quirk {
                quirk: "the failure list is cleared on opening and on closing: 4 failures after closing do not reopen",
                source: seed_001!("68, 71"),
                breaker: gate(),
                script: [calls(0, 5, 0, false), calls(30_000, 1, 1, true), calls(30_001, 4, 1, false)]
                    .concat(),
                transitions: vec![
                    (0, C, O, "failures_in_window"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_000, H, C, "probe_successes"),
                ],
                admits: "1111111111",
            },
        ]);
    }

    #[test]
    fn opens_at_fifth_failure_in_window() {
        let mut b = gate();
        let mut s = Vec::new();
        for i in 0..5u64 {
            s.push((i * 1000, A));
            s.push((i * 1000 + 10, F(10)));
        }
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(4010, C, O, "failures_in_window")]);
    }

    #[test]
    fn failure_exactly_window_old_still_counts_pruned_only_in_allow() {
        // Failures at 0..4 s (4 of them), then an admit at 60 s: the 0 s failure is exactly
        // 60 s old and stays; the fifth failure at 60 s opens.
        let mut b = gate();
        let mut s = Vec::new();
        for i in 0..4u64 {
            s.push((i * 1000, A));
            s.push((i * 1000, F(10)));
        }
        s.push((60_000, A));
        s.push((60_000, F(10)));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(60_000, C, O, "failures_in_window")]);

        // Admit at 60.001 s prunes the 0 s failure: the fifth failure leaves four.
        let mut b = gate();
        let mut s2: Vec<_> = s[..8].to_vec();
        s2.push((60_001, A));
        s2.push((60_001, F(10)));
        let r = drive(&mut b, &s2);
        assert!(r.tr.is_empty());

        // Without an admit in between, nothing is pruned: five calls admitted at 0..4 s fail at
        // 10..13 s and at 200 s; the last one still sees the other four and opens.
        let mut b = gate();
        let mut s3 = Vec::new();
        for i in 0..5u64 {
            s3.push((i * 1000, A));
        }
        for i in 0..4u64 {
            s3.push((10_000 + i * 1000, F(10)));
        }
        s3.push((200_000, F(10)));
        let r = drive(&mut b, &s3);
        assert_eq!(r.tr, vec![(200_000, C, O, "failures_in_window")]);
    }

    fn tripped_at_zero() -> Vec<(u64, crate::policy::testkit::Ev)> {
        // Six calls admitted at 0; five fail at 0 (opens), the sixth is still outstanding.
        let mut s = burst(0, A, 6);
        s.extend(burst(0, F(10), 5));
        s
    }

    #[test]
    fn one_probe_after_cooloff_and_success_closes() {
        let mut b = gate();
        let mut s = vec![(0, A), (0, F(1)), (0, A), (0, F(1)), (0, A), (0, F(1)), (0, A), (0, F(1))];
        s.extend([(0, A), (0, F(1))]);
        s.push((29_999, A));
        s.extend(burst(30_000, A, 3)); // one probe, two rejected
        s.push((30_500, S(500)));
        s.push((30_600, A));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "failures_in_window"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_500, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[5..], "01001");
    }

    #[test]
    fn probe_never_recorded_leaves_it_stuck() {
        let mut b = gate();
        let mut s = tripped_at_zero();
        s.push((0, S(1))); // late success: closes at once (see below); make it trip again
        s.extend(burst(1, A, 5));
        s.extend(burst(1, F(1), 5));
        s.push((31_001, A)); // probe admitted and never recorded
        s.push((100_000, A));
        s.push((1_000_000, A));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr.last(), Some(&(31_001, O, H, "cooldown_elapsed")));
        assert_eq!(&r.admit_string()[11..], "100");
        assert_eq!(b.state(), State::HalfOpen);
    }

    #[test]
    fn late_success_closes_immediately() {
        let mut b = gate();
        let mut s = tripped_at_zero();
        s.push((5_000, S(5_000))); // the sixth call, admitted before the trip
        s.push((5_001, A));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(0, C, O, "failures_in_window"), (5_000, O, C, "late_success")]);
        assert_eq!(r.admits.last(), Some(&true));
    }

    #[test]
    fn late_failure_restarts_cooloff() {
        let mut b = gate();
        let mut s = tripped_at_zero();
        s.push((20_000, F(20_000))); // opened_at = 20 s, no transition
        s.push((30_000, A)); // rejected
        s.push((49_999, A));
        s.push((50_000, A));
        let r = drive(&mut b, &s);
        assert_eq!(r.tr, vec![(0, C, O, "failures_in_window"), (50_000, O, H, "cooldown_elapsed")]);
        assert_eq!(&r.admit_string()[6..], "001");
    }

    #[test]
    fn late_result_in_half_open_decides_and_frees_the_slot() {
        let mut b = gate();
        let mut s = tripped_at_zero();
        s.push((30_000, A)); // probe (admission 6)
        s.push((30_001, Done(5, false, 30_001))); // late failure of the pre-trip call: reopens
        s.push((60_001, A)); // half-open again, probe 7
        s.push((60_002, Done(6, true, 30_002))); // the first probe's late success closes
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "failures_in_window"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_001, H, O, "probe_failed"),
                (60_001, O, H, "cooldown_elapsed"),
                (60_002, H, C, "probe_successes"),
            ]
        );
    }

    #[test]
    fn failed_probe_reopens_and_successes_in_closed_do_not_reset() {
        let mut b = gate();
        let mut s = tripped_at_zero();
        s.push((0, S(1))); // closes (late success)
        // Four failures, a success, a fifth failure: successes do not reset the count.
        for i in 0..4u64 {
            s.push((1000 + i, A));
            s.push((1000 + i, F(1)));
        }
        s.push((2000, A));
        s.push((2000, S(1)));
        s.push((3000, A));
        s.push((3000, F(1)));
        s.push((33_000, A));
        s.push((33_100, F(100)));
        let r = drive(&mut b, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "failures_in_window"),
                (0, O, C, "late_success"),
                (3000, C, O, "failures_in_window"),
                (33_000, O, H, "cooldown_elapsed"),
                (33_100, H, O, "probe_failed"),
            ]
        );
    }

    #[test]
    fn memory_is_flat_in_steady_state() {
        let mut b = gate();
        let f = cyclic(600_000, 120_000);
        let warm = offer(&mut b, 0, 3 * 60_000, 10, &f);
        assert!(warm >= 6, "{warm}");
        let cap = b.buffer_capacity();
        offer(&mut b, 1_800_000, 3 * 60_000, 10, &f);
        assert_eq!(b.buffer_capacity(), cap);
    }
}
