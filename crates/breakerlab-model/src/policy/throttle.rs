//! Client-side adaptive throttling from Google's SRE book (preset `sre-throttle`): not a
//! breaker, a probabilistic local rejection that tracks how often the backend accepts.
//!
//! Source: "Handling Overload", Site Reliability Engineering (O'Reilly, 2016), chapter 21,
//! section "Client-Side Throttling": reject locally with probability
//! `max(0, (requests − K · accepts) / (requests + 1))`, K = 2, over about two minutes of
//! history (../shared/PRESETS.md, "Client-side throttles and retry budgets").
//!
//! Modelled as:
//! - `requests` counts every call the application attempts (locally rejected ones included),
//!   `accepts` every call the backend answered without a failure verdict (ignored classes
//!   such as client errors were accepted by the backend and count as accepts);
//! - the history is `window / buckets` epoch-aligned buckets (default 120 of 1 s);
//! - the probability is computed at each attempt from the history before it; the draw uses a
//!   `Pcg64Mcg` seeded with the build seed, one draw per attempt while the probability is
//!   above zero (none otherwise), so runs are reproducible;
//! - the reported state is `open` while the probability is above zero (throttling active)
//!   and `closed` otherwise; it never reports half-open. Transitions are emitted when an
//!   attempt or a result finds the probability crossing zero.

use super::evidence::{Evidence, Item, Test, Unit};
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::param::{PolicyError, at_least_one, family_config, impossible, require};
use super::ring::CountRing;
use crate::outcome::{Classifier, Verdict};
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};

family_config! {
    /// The throttle's parameters.
    ThrottleConfig {
        k: f64 = 2.0, "factor", "K: rejects once requests exceed K x accepts (lower is more aggressive)";
        window: Dur = Dur::from_secs(120), "duration", "history of requests and accepts";
        buckets: u32 = 120, "count", "epoch-aligned buckets of the history";
    }
}

impl Family for ThrottleConfig {
    type Breaker = SreThrottle;
    const NAME: &'static str = "throttle";
    const TITLE: &'static str = "sre-throttle";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "sre-throttle",
        library: "Google SRE book, 2016",
        summary: "Google SRE client-side adaptive throttling: reject with probability max(0, (requests - 2 accepts) / (requests + 1)) over 2 minutes",
        source: "Site Reliability Engineering (O'Reilly 2016), ch. 21 Handling Overload, Client-Side Throttling; ../shared/PRESETS.md",
        quirks: &[
            "not a breaker: it rejects a fraction of calls, drawn from the build seed, whenever requests exceed K x accepts",
            "requests count locally rejected attempts too, so the probability keeps rising while the backend fails",
            "reported state: open while the probability is above zero, closed otherwise; never half-open",
            "history in 120 epoch-aligned 1 s buckets",
        ],
        config: ThrottleConfig::default,
        classifier: Classifier::DEFAULT,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        require(self.k.is_finite() && self.k >= 1.0, "k", "a number of at least 1", self.k)?;
        at_least_one("buckets", self.buckets)?;
        let w = self.window.micros();
        if w < u64::from(self.buckets) || !w.is_multiple_of(u64::from(self.buckets)) {
            return Err(impossible(format!(
                "window ({}) is not a whole number of microseconds per bucket with {} buckets",
                self.window, self.buckets
            )));
        }
        Ok(())
    }

    fn build(&self, seed: u64) -> SreThrottle {
        SreThrottle::new(self.clone(), seed)
    }
}

/// The adaptive throttle.
#[derive(Clone, Debug)]
pub struct SreThrottle {
    cfg: ThrottleConfig,
    phase: Phase,
    /// `(requests, accepts)` per bucket.
    ring: CountRing,
    bucket_len: u64,
    rng: Rng,
}

impl SreThrottle {
    /// An empty history; `seed` drives the rejection draws.
    pub fn new(cfg: ThrottleConfig, seed: u64) -> SreThrottle {
        let n = cfg.buckets.max(1);
        let bucket_len = (cfg.window.micros() / u64::from(n)).max(1);
        SreThrottle {
            ring: CountRing::new(n as usize),
            bucket_len,
            cfg,
            phase: Phase::new(),
            rng: rng_from_u64(seed),
        }
    }

    fn count(&mut self, now: SimTime, requests: u64, accepts: u64) {
        self.ring.add(now.micros() / self.bucket_len, (requests, accepts));
    }

    /// `(requests, accepts)` over the history at `now`.
    fn totals(&self, now: SimTime) -> (u64, u64) {
        self.ring.window(now.micros() / self.bucket_len)
    }

    /// The rejection probability at `now`.
    pub fn probability(&self, now: SimTime) -> f64 {
        let (r, a) = self.totals(now);
        ((r as f64 - self.cfg.k * a as f64) / (r as f64 + 1.0)).max(0.0)
    }

    fn update_state(&mut self, now: SimTime, p: f64, out: &mut Transitions) {
        let want = if p > 0.0 { State::Open } else { State::Closed };
        let reason = if want == State::Open { "throttling" } else { "throttle_released" };
        self.phase.change(now, want, reason, self.evidence_for(now, out), out);
    }
}

impl Breaker for SreThrottle {
    const TIMED: bool = false;

    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        let p = self.probability(now);
        self.update_state(now, p, out);
        self.count(now, 1, 0);
        if p > 0.0 {
            let u = unit(&mut self.rng);
            if u < p {
                return Admission::Reject;
            }
        }
        Admission::Allow(Ticket::default())
    }

    fn record(&mut self, now: SimTime, _ticket: Ticket, obs: Observation, out: &mut Transitions) {
        if obs.verdict != Verdict::Failure {
            self.count(now, 0, 1);
        }
        let p = self.probability(now);
        self.update_state(now, p, out);
    }

    fn state(&self) -> State {
        self.phase.state()
    }

    /// Throttling is on while requests exceed K × accepts over the history (in any state).
    fn evidence(&self, now: SimTime, ev: &mut Evidence) {
        let (r, a) = self.totals(now);
        let limit = self.cfg.k * a as f64;
        ev.push(Item {
            name: "requests",
            unit: Unit::Count,
            value: r as f64,
            test: Test::Above,
            param: "k_times_accepts",
            limit,
        });
        ev.fact_count("accepts", a);
        ev.fact_ratio("rejection_probability", self.probability(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, O, drive, ms};

    #[test]
    fn probability_follows_the_formula_and_history_ages_out() {
        let mut t = SreThrottle::new(ThrottleConfig::default(), 9);
        // 2 accepted calls, then 3 failures: until r > 2a nothing is rejected.
        let mut s = vec![(0, A), (0, S(1)), (0, A), (0, S(1))];
        for _ in 0..3 {
            s.push((1, A));
            s.push((1, F(1)));
        }
        s.push((1, A));
        let r = drive(&mut t, &s);
        // After the 5th result r = 5, a = 2: p = (5 - 4) / 6 > 0.
        assert_eq!(r.tr, vec![(1, C, O, "throttling")]);
        assert_eq!(&r.admit_string()[..5], "11111");
        assert!((t.probability(ms(1)) - (6.0 - 4.0) / 7.0).abs() < 1e-12);
        // Two minutes later the history is gone: closed at the next attempt.
        let r = drive(&mut t, &[(121_000, A)]);
        assert_eq!(r.tr, vec![(121_000, O, C, "throttle_released")]);
        assert_eq!(r.admit_string(), "1");
    }

    #[test]
    fn rejection_rate_follows_the_probability_and_is_seeded() {
        let run = |seed| {
            let mut t = SreThrottle::new(ThrottleConfig::default(), seed);
            let mut out = Transitions::new();
            let mut allowed = String::new();
            for i in 0..300u64 {
                let now = ms(i);
                match t.admit(now, &mut out) {
                    Admission::Allow(tk) => {
                        allowed.push('1');
                        let obs = Observation { verdict: Verdict::Failure, latency: Dur::from_millis(1) };
                        t.record(now, tk, obs, &mut out);
                    }
                    Admission::Reject | Admission::Wait => allowed.push('0'),
                }
            }
            allowed
        };
        let a = run(5);
        assert_eq!(a, run(5));
        assert_ne!(a, run(6));
        // No accepts: p = r / (r + 1) at the r-th attempt, so about sum 1 / (r + 1) pass:
        // ln(301) ~ 5.7 expected; far fewer than the 300 attempts.
        let passed = a.chars().filter(|&c| c == '1').count();
        assert!((1..=20).contains(&passed), "{passed}");
        assert!(a.starts_with('1'), "the first attempt has p = 0");
    }
}
