//! Seed 002's `CircuitBreaker` (../shared/seeds/002_b00b859d389ac923.txt), reproduced as its
//! code behaves: consecutive failures trip it, the `state` property moves open → half-open, and
//! half-open admits up to `half_open_max_calls` with a success threshold that closes it.
//!
//! Quirks reproduced (cited from `_check_state_transition`, `_record_success`, `_record_failure`,
//! `call`):
//! - open → half-open happens when the state is read after `timeout_duration` (passive: in
//!   `call`, before admission); it does not move `_last_state_change`;
//! - half-open admits while `_half_open_calls < half_open_max_calls`; the counter goes up on
//!   admission and down only on a success recorded in half-open, so failures never free a slot
//!   and late successes (calls admitted while closed) can drive it negative, admitting more;
//! - closing needs `consecutive_successes >= success_threshold`, a counter that is not reset on
//!   opening or entering half-open: late successes arriving while open count toward closing;
//! - any failure in half-open reopens; a failure while open only bumps the counters (no
//!   cooldown restart); every exception is a failure (`except (..., Exception)`), auth errors
//!   included despite the article's text, so the default classifier is every error;
//! - the call timeout is `signal.alarm(int(call_timeout))`: truncated to whole seconds, and a
//!   value under one second becomes `alarm(0)`, which means no timeout at all;
//!   [`AiServiceConfig::effective_call_timeout`] returns what the alarm enforces. (That
//!   `SIGALRM` only works in the main thread is a runtime accident, out of scope.)
//! - `total_calls` counts rejected calls too (a statistic only; no effect on decisions).

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, family_config, require};
use crate::outcome::{Classifier, Verdict};
use crate::time::{Dur, MICROS_PER_SEC, SimTime};

family_config! {
    /// Parameters of seed 002's `CircuitBreakerConfig`.
    AiServiceConfig {
        failure_threshold: u32 = 5, "calls", "consecutive failures in closed that open (seed: 5)";
        success_threshold: u32 = 2, "calls",
            "consecutive successes that close half-open; the count survives opening, so late successes count (seed: 2)";
        timeout_duration: Dur = Dur::from_secs(30), "duration",
            "open time before the next state read moves to half-open (seed: 30 s)";
        half_open_max_calls: u32 = 3, "calls",
            "half-open admits while a counter (up on admit, down only on success) is below this (seed: 3)";
        call_timeout: Dur = Dur::from_secs(10), "duration",
            "client call timeout via signal.alarm(int(seconds)): truncated to whole seconds, under 1 s means none (seed: 10 s)";
    }
}

impl AiServiceConfig {
    /// The timeout `signal.alarm(int(call_timeout))` enforces: whole seconds, `None` under 1 s.
    pub fn effective_call_timeout(&self) -> Option<Dur> {
        let secs = self.call_timeout.micros() / MICROS_PER_SEC;
        (secs > 0).then(|| Dur::from_secs(secs))
    }
}

impl Family for AiServiceConfig {
    type Breaker = AiServiceBreaker;
    const NAME: &'static str = "ai_service";
    const TITLE: &'static str = "ai_service (seed 002)";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "ai-service-breaker",
        library: "",
        summary: "seed 002: 5 consecutive failures open it; 30 s; half-open admits up to 3; 2 consecutive successes close",
        source: "seed 002, ../shared/seeds/002_b00b859d389ac923.txt (Python CircuitBreaker: state, _check_state_transition, _record_success, _record_failure, call)",
        quirks: &[
            "open -> half-open when the state is read after timeout_duration (passive, on the next call)",
            "half-open's call counter is decremented only on success: failures never free a slot, late successes can drive it negative",
            "consecutive_successes is not reset on opening or entering half-open: late successes while open count toward closing",
            "any failure in half-open reopens; a failure while open does nothing (no cooldown restart)",
            "every exception is a failure, auth errors included despite the article's text",
            "the call timeout is signal.alarm(int(call_timeout)): whole seconds, and under 1 s means no timeout",
            "SIGALRM works only in the main thread: that runtime accident is out of scope",
        ],
        config: AiServiceConfig::default,
        classifier: Classifier::EVERY_ERROR,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        for (name, v) in [
            ("failure_threshold", self.failure_threshold),
            ("success_threshold", self.success_threshold),
            ("half_open_max_calls", self.half_open_max_calls),
        ] {
            require(v != 0, name, "at least 1", "0")?;
        }
        Ok(())
    }

    fn build(&self, _seed: u64) -> AiServiceBreaker {
        AiServiceBreaker::new(self.clone())
    }

    fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
        Some(self.effective_call_timeout())
    }
}

/// Seed 002's breaker state machine.
#[derive(Clone, Debug)]
pub struct AiServiceBreaker {
    cfg: AiServiceConfig,
    phase: Phase,
    last_state_change: SimTime,
    half_open_calls: i64,
    consecutive_failures: u64,
    consecutive_successes: u64,
}

impl AiServiceBreaker {
    /// A closed breaker with zeroed counters.
    pub fn new(cfg: AiServiceConfig) -> AiServiceBreaker {
        AiServiceBreaker {
            cfg,
            phase: Phase::new(),
            last_state_change: SimTime::ZERO,
            half_open_calls: 0,
            consecutive_failures: 0,
            consecutive_successes: 0,
        }
    }

    /// `_transition_to` from `record`: the move, stamped as the last state change (the
    /// passive move to half-open in `admit` does not stamp it).
    fn stamped(&mut self, now: SimTime, to: State, reason: &'static str, out: &mut Transitions) {
        self.phase.enter(now, to, reason, self.evidence_for(now, out), out);
        self.last_state_change = now;
    }
}

impl Breaker for AiServiceBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        // `current_state = self.phase.state()` runs `_check_state_transition`.
        if self.phase.state() == State::Open && now.since(self.last_state_change) >= self.cfg.timeout_duration
        {
            self.phase.enter(now, State::HalfOpen, "cooldown_elapsed", self.evidence_for(now, out), out);
            self.half_open_calls = 0;
        }
        match self.phase.state() {
            State::Open => Admission::Reject,
            State::HalfOpen => {
                if self.half_open_calls >= i64::from(self.cfg.half_open_max_calls) {
                    return Admission::Reject;
                }
                self.half_open_calls += 1;
                Admission::Allow(self.phase.ticket(true))
            }
            State::Closed => Admission::Allow(self.phase.ticket(false)),
        }
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        // `_record_*` read `self._state` directly: no passive transition at record time.
        match obs.verdict {
            Verdict::Ignored => {}
            Verdict::Success => {
                self.consecutive_successes += 1;
                self.consecutive_failures = 0;
                if self.phase.state() == State::HalfOpen {
                    self.half_open_calls -= 1;
                    if self.consecutive_successes >= u64::from(self.cfg.success_threshold) {
                        self.stamped(now, State::Closed, "probe_successes", out);
                        self.consecutive_failures = 0;
                        self.consecutive_successes = 0;
                    }
                }
            }
            Verdict::Failure => {
                self.consecutive_failures += 1;
                self.consecutive_successes = 0;
                match self.phase.state() {
                    State::Closed => {
                        if self.consecutive_failures >= u64::from(self.cfg.failure_threshold) {
                            self.stamped(now, State::Open, "consecutive_failures", out);
                        }
                    }
                    State::HalfOpen => {
                        self.stamped(now, State::Open, "probe_failed", out);
                    }
                    State::Open => {}
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
                "consecutive_failures",
                self.consecutive_failures,
                Test::AtLeast,
                "failure_threshold",
                u64::from(c.failure_threshold),
            ),
            State::Open => ev.open_for(
                now.since(self.last_state_change),
                Test::AtLeast,
                "timeout_duration",
                c.timeout_duration,
            ),
            State::HalfOpen => {
                let calls = self.half_open_calls.max(0) as u64;
                ev.count(
                    "half_open_calls",
                    calls,
                    Test::Of,
                    "half_open_max_calls",
                    u64::from(c.half_open_max_calls),
                );
                ev.count(
                    "consecutive_successes",
                    self.consecutive_successes,
                    Test::AtLeast,
                    "success_threshold",
                    u64::from(c.success_threshold),
                );
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

    fn b() -> AiServiceBreaker {
        AiServiceBreaker::new(AiServiceConfig::default())
    }

    /// Lines of seed 002's module `circuit_breaker` in its article.
    macro_rules! seed_002 {
        ($lines:literal) => {
            concat!("seed 002, ../shared/seeds/002_b00b859d389ac923.txt, lines ", $lines)
        };
    }

    #[test]
    fn quirks_at_the_cited_lines() {
        // CircuitBreakerConfig(): 5 failures, 2 successes, 30 s, 3 half-open calls. tripped_by_five(n):
        // 5 + n calls at 0, five fail at 0 (opens), n still in flight.
        check_quirks(vec![
            Quirk {
                quirk: "the 5th consecutive failure opens; a success zeroes the count",
                source: seed_002!("91-94, 101-109"),
                breaker: b(),
                script: alternating(
                    &[false, false, false, false, true, false, false, false, false, false],
                    100,
                ),
                transitions: vec![(900, C, O, "consecutive_failures")],
                admits: "1111111111",
            },
            Quirk {
                quirk: "open -> half-open when call() reads the state at elapsed >= 30 s; up to 3 calls in flight; 2 successes in a row close",
                source: seed_002!("80-86, 136-147, 96-99"),
                breaker: b(),
                script: [
                    tripped_by_five(0),
                    vec![(29_999, A)],
                    burst(30_000, A, 4),
                    vec![(30_100, S(100)), (30_150, A), (30_200, S(100))],
                ]
                .concat(),
                transitions: vec![
                    (0, C, O, "consecutive_failures"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_200, H, C, "probe_successes"),
                ],
                admits: "11111011101",
            },
            Quirk {
                quirk: "any failure in half-open reopens; a failure while open does not restart the timeout (only _transition_to_open stamps it)",
                source: seed_002!("101-111, 116"),
                breaker: b(),
                script: [
                    tripped_by_five(0),
                    burst(30_000, A, 3),
                    vec![(30_100, F(100)), (40_000, F(10_000)), (60_099, A), (60_100, A)],
                ]
                .concat(),
                transitions: vec![
                    (0, C, O, "consecutive_failures"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_100, H, O, "probe_failed"),
                    (60_100, O, H, "cooldown_elapsed"),
                ],
                admits: "1111111101",
            },
            Quirk {
                quirk: "consecutive_successes is not reset on opening: a late success while open counts, so one probe success closes",
                source: seed_002!("93, 113-120"),
                breaker: b(),
                script: [tripped_by_five(1), vec![(10_000, S(10_000)), (30_000, A), (30_050, S(50))]]
                    .concat(),
                transitions: vec![
                    (0, C, O, "consecutive_failures"),
                    (30_000, O, H, "cooldown_elapsed"),
                    (30_050, H, C, "probe_successes"),
                ],
                admits: "1111111",
            },
            Quirk {
                quirk: "a late success of a call admitted while closed frees a half-open slot (the counter drops on any success in HALF_OPEN)",
                source: seed_002!("96-97, 144-147"),
                breaker: b(),
                script: [
                    tripped_by_five(1),
                    burst(30_000, A, 4),
                    vec![(30_010, Done(5, true, 30_010)), (30_020, A)],
                ]
                .concat(),
                transitions: vec![(0, C, O, "consecutive_failures"), (30_000, O, H, "cooldown_elapsed")],
                admits: "11111111101",
            },
        ]);
    }

    #[test]
    fn fifth_consecutive_failure_opens_success_resets() {
        let mut x = b();
        let s = alternating(&[false, false, false, false, true, false, false, false, false, false], 100);
        let r = drive(&mut x, &s);
        assert_eq!(r.tr, vec![(900, C, O, "consecutive_failures")]);
    }

    #[test]
    fn passive_half_open_limit_and_success_threshold() {
        let mut x = b();
        let mut s = tripped_by_five(0);
        s.push((29_999, A));
        s.extend(burst(30_000, A, 4)); // three admitted, the fourth rejected
        s.push((30_100, S(100))); // cs = 1, counter 3 -> 2
        s.push((30_150, A)); // counter 2 < 3: admitted
        s.push((30_200, S(100))); // cs = 2 -> closes
        let r = drive(&mut x, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_200, H, C, "probe_successes")
            ]
        );
        assert_eq!(&r.admit_string()[5..], "011101");
    }

    #[test]
    fn only_successes_free_half_open_slots() {
        let mut x =
            AiServiceBreaker::new(AiServiceConfig { success_threshold: 5, ..AiServiceConfig::default() });
        let mut s = tripped_by_five(0);
        s.extend(burst(30_000, A, 3));
        s.push((30_100, S(1)));
        s.push((30_100, S(1))); // counter 1, cs 2
        s.push((30_200, A)); // counter 2
        s.push((30_200, A)); // counter 3
        s.push((30_300, A)); // rejected
        let r = drive(&mut x, &s);
        assert_eq!(&r.admit_string()[5..], "111110");
    }

    #[test]
    fn late_success_while_open_counts_toward_closing() {
        let mut x = b();
        let mut s = tripped_by_five(1); // one call outstanding past the trip
        s.push((10_000, S(10_000))); // late success while open: cs = 1
        s.push((30_000, A));
        s.push((30_050, S(50))); // cs = 2: closes on the first probe
        let r = drive(&mut x, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_050, H, C, "probe_successes")
            ]
        );
    }

    #[test]
    fn failure_while_open_does_nothing_and_half_open_failure_reopens() {
        let mut x = b();
        let mut s = tripped_by_five(1);
        s.push((20_000, F(20_000))); // late failure while open: no cooldown restart
        s.push((30_000, A));
        s.push((30_010, F(10))); // probe fails
        s.push((59_999, A));
        s.push((60_010, A));
        let r = drive(&mut x, &s);
        assert_eq!(
            r.tr,
            vec![
                (0, C, O, "consecutive_failures"),
                (30_000, O, H, "cooldown_elapsed"),
                (30_010, H, O, "probe_failed"),
                (60_010, O, H, "cooldown_elapsed"),
            ]
        );
    }

    #[test]
    fn late_successes_in_half_open_drive_the_counter_negative() {
        let mut x =
            AiServiceBreaker::new(AiServiceConfig { success_threshold: 10, ..AiServiceConfig::default() });
        // Eight calls admitted at 0; five fail (opens) and three are outstanding.
        let mut s = tripped_by_five(3);
        s.push((30_000, A)); // half-open, counter 1
        s.extend(burst(30_001, S(30_001), 3)); // three late successes: counter 1 - 3 = -2
        s.extend(burst(30_002, A, 6)); // -2..3 admits five, rejects the sixth
        let r = drive(&mut x, &s);
        assert_eq!(&r.admit_string()[8..], "1111110");
        assert_eq!(x.half_open_calls, 3);
    }

    #[test]
    fn call_timeout_truncates_to_whole_seconds() {
        let c = |d: Dur| AiServiceConfig { call_timeout: d, ..AiServiceConfig::default() };
        assert_eq!(c(Dur::from_secs(10)).effective_call_timeout(), Some(Dur::from_secs(10)));
        assert_eq!(c(Dur::from_millis(10_900)).effective_call_timeout(), Some(Dur::from_secs(10)));
        assert_eq!(c(Dur::from_millis(999)).effective_call_timeout(), None);
        assert_eq!(c(Dur::ZERO).effective_call_timeout(), None);
    }
}
