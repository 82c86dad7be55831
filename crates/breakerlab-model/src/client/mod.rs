//! The client's configuration (`[client]` in a scenario) and the pure parts of its logic: which
//! answers are retried, how long to back off before each retry, and what the fallback answers.
//!
//! The engine owns the client's state (attempt counters, timers, the retry queue); everything here
//! is a function of its arguments, so it can be tested exactly.

use crate::outcome::OutcomeClass;
use crate::rng::Rng;
use crate::time::{Dur, SimTime};
use crate::units::{de_at_least_one, de_positive_dur, de_positive_dur_opt};
use crate::{Error, Result};
use rand::RngExt;
use serde::{Deserialize, Deserializer, Serialize};

mod budget;
pub mod flags;
mod process;

pub use budget::{Budget, BudgetSpec};
pub use process::{Persist, ProcessSpec};

/// How the client calls the dependency: timeout, instances, retries, fallback.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientSpec {
    /// Per-attempt call timeout: an answer slower than this is a `timeout` at `sent + timeout`.
    #[serde(deserialize_with = "de_positive_dur")]
    pub timeout: Dur,
    /// Client instances (processes), each with its own breaker unless `shared_breaker`.
    #[serde(deserialize_with = "de_at_least_one")]
    pub instances: u32,
    /// One breaker shared by every instance (a breaker in a shared store) instead of one each.
    pub shared_breaker: bool,
    /// The retry ladder.
    pub retry: RetrySpec,
    /// What the user gets when the call is refused or fails for good.
    pub fallback: FallbackSpec,
    /// The client as a scheduled job restarting on a schedule (`[client.process]`), if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessSpec>,
}

impl Default for ClientSpec {
    /// Timeout 10 s, one instance, no retries, no fallback.
    fn default() -> ClientSpec {
        ClientSpec {
            timeout: Dur::from_secs(10),
            instances: 1,
            shared_breaker: false,
            retry: RetrySpec::default(),
            fallback: FallbackSpec::None,
            process: None,
        }
    }
}

impl ClientSpec {
    /// The client of a scripted run: exactly the listed calls, no timeout of its own (a preset's
    /// call timeout still applies), no retries, no fallback.
    pub fn scripted() -> ClientSpec {
        ClientSpec { timeout: Dur::MAX, ..ClientSpec::default() }
    }

    /// Cross-field checks (and the field checks, for a spec built in code); the message names
    /// the field.
    pub fn validate(&self) -> Result<()> {
        if self.timeout.is_zero() {
            return Err(Error::invalid("`timeout` must be longer than 0"));
        }
        if self.instances == 0 {
            return Err(Error::invalid("`instances` must be at least 1"));
        }
        self.retry.validate().map_err(|e| Error::invalid(format!("retry: {e}")))?;
        if let Some(process) = &self.process {
            process.validate()?;
        }
        self.fallback.validate().map_err(|e| Error::invalid(format!("fallback: {e}")))
    }
}

/// How the delay before a retry is randomised (see [`RetrySpec::delay`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// The exponential delay itself: synchronised clients retry in lockstep.
    #[default]
    None,
    /// Uniform in `[0, expo]` ("full jitter").
    Full,
    /// `expo / 2` plus uniform in `[0, expo / 2]` ("equal jitter").
    Equal,
    /// Uniform in `[base, 3 × previous]`, capped ("decorrelated jitter"); ignores `multiplier`.
    Decorrelated,
}

/// The retry ladder: how many attempts, on which answers, and the backoff between them.
///
/// The jitter formulas are those of the AWS Architecture Blog's "Exponential Backoff And Jitter"
/// (aws-samples/aws-arch-backoff-simulator, `src/backoff_simulator.py`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrySpec {
    /// Attempts per request including the first (1 = no retries).
    #[serde(deserialize_with = "de_at_least_one")]
    pub max_attempts: u32,
    /// Delay before the first retry.
    pub base: Dur,
    /// Growth of the delay per retry (>= 1).
    #[serde(deserialize_with = "de_multiplier")]
    pub multiplier: f64,
    /// Upper bound of the exponential delay.
    pub cap: Dur,
    /// Randomisation of the delay.
    pub jitter: Jitter,
    /// Answer classes that are retried (`ok` never is).
    #[serde(deserialize_with = "de_retry_on")]
    pub retry_on: Vec<OutcomeClass>,
    /// Wait at least a rate-limited answer's retry-after before retrying.
    pub honour_retry_after: bool,
    /// Retry (through the breaker again, after the backoff) when the breaker refuses an attempt.
    pub retry_on_reject: bool,
    /// A limit on retries across requests (`[client.retry.budget]`), none by default.
    pub budget: BudgetSpec,
}

impl Default for RetrySpec {
    /// One attempt; if retries are enabled: 100 ms doubling to at most 10 s, no jitter, on
    /// errors, timeouts and 429s, honouring retry-after.
    fn default() -> RetrySpec {
        RetrySpec {
            max_attempts: 1,
            base: Dur::from_millis(100),
            multiplier: 2.0,
            cap: Dur::from_secs(10),
            jitter: Jitter::None,
            retry_on: vec![OutcomeClass::Error, OutcomeClass::Timeout, OutcomeClass::RateLimited],
            honour_retry_after: true,
            retry_on_reject: false,
            budget: BudgetSpec::None,
        }
    }
}

impl RetrySpec {
    /// Cross-field checks; the message names the field.
    pub fn validate(&self) -> Result<()> {
        if self.max_attempts == 0 {
            return Err(Error::invalid("`max_attempts` must be at least 1 (1 means no retries)"));
        }
        check_multiplier(self.multiplier)?;
        check_retry_on(&self.retry_on)?;
        if self.base > self.cap {
            return Err(Error::invalid(format!(
                "`base` ({}) must not be longer than `cap` ({})",
                self.base, self.cap
            )));
        }
        self.budget.validate()
    }

    /// Whether an attempt that came back as `class` is retried, after `attempts_made` attempts
    /// of this request (the one that just failed included).
    pub fn retries(&self, class: OutcomeClass, attempts_made: u32) -> bool {
        class != OutcomeClass::Ok && attempts_made < self.max_attempts && self.retry_on.contains(&class)
    }

    /// Whether an attempt refused by the breaker is retried, after `attempts_made` attempts of
    /// this request (the refused one included).
    pub fn retries_rejection(&self, attempts_made: u32) -> bool {
        self.retry_on_reject && attempts_made < self.max_attempts
    }

    /// The un-jittered delay before retry number `retry` (1 = first retry):
    /// `min(cap, base × multiplier^(retry − 1))`, rounded to the microsecond.
    pub fn backoff(&self, retry: u32) -> Dur {
        let exponent = retry.saturating_sub(1).min(4_096) as i32;
        let us = self.base.micros() as f64 * self.multiplier.powi(exponent);
        let cap = self.cap.micros() as f64;
        if us.is_nan() || us >= cap { self.cap } else { Dur(us.round() as u64) }
    }

    /// Delay before retry number `retry` (1 = first retry); `previous` is the delay before the
    /// previous retry (zero before the first; only decorrelated jitter uses it):
    /// - none: `expo = min(cap, base × multiplier^(retry − 1))`;
    /// - full: uniform in `[0, expo]`;
    /// - equal: `expo / 2` plus uniform in `[0, expo − expo / 2]`;
    /// - decorrelated: `min(cap, uniform in [base, max(base, 3 × previous)])`, with `previous`
    ///   taken as `base` before the first retry.
    ///
    /// Uniform draws are integer microseconds. When `honour_retry_after` is set, a retry-after
    /// hint is a lower bound on the delay (it may exceed `cap`: the server asked for it).
    pub fn delay(&self, retry: u32, previous: Dur, retry_after: Option<Dur>, rng: &mut Rng) -> Dur {
        let jittered = match self.jitter {
            Jitter::None => self.backoff(retry),
            Jitter::Full => {
                let expo = self.backoff(retry).micros();
                Dur(rng.random_range(0..=expo))
            }
            Jitter::Equal => {
                let expo = self.backoff(retry).micros();
                let half = expo / 2;
                Dur(half + rng.random_range(0..=expo - half))
            }
            Jitter::Decorrelated => {
                let base = self.base.micros();
                let previous = if previous.is_zero() { base } else { previous.micros() };
                let high = previous.saturating_mul(3).max(base);
                Dur(rng.random_range(base..=high)).min(self.cap)
            }
        };
        match retry_after {
            Some(hint) if self.honour_retry_after => jittered.max(hint),
            _ => jittered,
        }
    }
}

/// What the user gets instead when the breaker refuses a call or the call fails for good.
///
/// Read from a flat table (`kind`, `latency`, `cycle`) so a bad value is reported at its own
/// line and column.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", try_from = "RawFallback")]
pub enum FallbackSpec {
    /// No fallback: the user sees the error (or the refusal).
    #[default]
    None,
    /// A cached answer (stale but useful), served after `latency` (default 1 ms).
    Cached {
        /// Time to serve the cached answer.
        latency: Dur,
    },
    /// A local, degraded computation, served after `latency` (default 50 ms).
    Local {
        /// Time to compute the local answer.
        latency: Dur,
    },
    /// The work is queued and retried later (seed 000's nightly retry queue): refused or failed
    /// work is deferred to the next multiple of `cycle` since the scenario's start and attempted
    /// again then; the user is told "queued" after `latency` (default 1 ms).
    RetryQueue {
        /// Period of the queue's retry runs (e.g. "15m"); > 0.
        cycle: Dur,
        /// Time to tell the user the work was queued.
        latency: Dur,
    },
}

impl FallbackSpec {
    /// Checks the fields (for a spec built in code); the message names the field.
    pub fn validate(&self) -> Result<()> {
        match self {
            FallbackSpec::RetryQueue { cycle, .. } if cycle.is_zero() => {
                Err(Error::invalid("`cycle` must be longer than 0"))
            }
            _ => Ok(()),
        }
    }

    /// Time to give the user the fallback answer; `None` when there is no fallback.
    pub fn latency(&self) -> Option<Dur> {
        match self {
            FallbackSpec::None => None,
            FallbackSpec::Cached { latency }
            | FallbackSpec::Local { latency }
            | FallbackSpec::RetryQueue { latency, .. } => Some(*latency),
        }
    }

    /// For a retry queue: when work deferred at `now` is attempted again, the first multiple of
    /// `cycle` strictly after `now`. `None` for other fallbacks.
    pub fn next_cycle(&self, now: SimTime) -> Option<SimTime> {
        match self {
            FallbackSpec::RetryQueue { cycle, .. } if !cycle.is_zero() => {
                let c = cycle.micros();
                Some(SimTime((now.micros() / c).saturating_add(1).saturating_mul(c)))
            }
            _ => None,
        }
    }
}

/// The names of the fallback kinds, as written in files.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FallbackKind {
    None,
    Cached,
    Local,
    RetryQueue,
}

/// The `[client.fallback]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFallback {
    kind: FallbackKind,
    latency: Option<Dur>,
    #[serde(default, deserialize_with = "de_positive_dur_opt")]
    cycle: Option<Dur>,
}

impl TryFrom<RawFallback> for FallbackSpec {
    type Error = crate::Error;
    fn try_from(raw: RawFallback) -> Result<FallbackSpec> {
        if raw.kind != FallbackKind::RetryQueue && raw.cycle.is_some() {
            return Err(Error::invalid("`cycle` applies only to kind `retry_queue`"));
        }
        match raw.kind {
            FallbackKind::None if raw.latency.is_some() => {
                Err(Error::invalid("`latency` does not apply to kind `none` (there is no fallback answer)"))
            }
            FallbackKind::None => Ok(FallbackSpec::None),
            FallbackKind::Cached => {
                Ok(FallbackSpec::Cached { latency: raw.latency.unwrap_or(Dur::from_millis(1)) })
            }
            FallbackKind::Local => {
                Ok(FallbackSpec::Local { latency: raw.latency.unwrap_or(Dur::from_millis(50)) })
            }
            FallbackKind::RetryQueue => match raw.cycle {
                Some(cycle) => Ok(FallbackSpec::RetryQueue {
                    cycle,
                    latency: raw.latency.unwrap_or(Dur::from_millis(1)),
                }),
                None => Err(Error::invalid("kind `retry_queue` needs `cycle` (e.g. \"15m\")")),
            },
        }
    }
}

fn check_multiplier(v: f64) -> Result<()> {
    if v.is_finite() && v >= 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!("`multiplier` must be a number >= 1 (delays never shrink), found {v}")))
    }
}

fn de_multiplier<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    check_multiplier(v).map_err(serde::de::Error::custom)?;
    Ok(v)
}

fn check_retry_on(classes: &[OutcomeClass]) -> Result<()> {
    if classes.contains(&OutcomeClass::Ok) {
        return Err(Error::invalid("`retry_on` cannot contain `ok`: a good answer is never retried"));
    }
    Ok(())
}

fn de_retry_on<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<OutcomeClass>, D::Error> {
    let v = Vec::<OutcomeClass>::deserialize(d)?;
    check_retry_on(&v).map_err(serde::de::Error::custom)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;

    fn retry(jitter: Jitter) -> RetrySpec {
        RetrySpec { max_attempts: 5, jitter, ..RetrySpec::default() }
    }

    fn parse(text: &str) -> Result<ClientSpec, String> {
        toml::from_str::<ClientSpec>(text).map_err(|e| e.to_string())
    }

    #[test]
    fn exponential_backoff_is_capped() {
        let r = retry(Jitter::None);
        let got: Vec<u64> = (1..=9).map(|n| r.backoff(n).micros()).collect();
        assert_eq!(
            got,
            [100_000, 200_000, 400_000, 800_000, 1_600_000, 3_200_000, 6_400_000, 10_000_000, 10_000_000]
        );
        assert_eq!(r.backoff(0), Dur::from_millis(100));
        assert_eq!(r.backoff(u32::MAX), Dur::from_secs(10));
        let mut rng = rng_from_seed(1);
        assert_eq!(r.delay(3, Dur::ZERO, None, &mut rng), Dur::from_millis(400));
        let flat = RetrySpec { multiplier: 1.0, ..r };
        assert_eq!(flat.backoff(20), Dur::from_millis(100));
        let odd = RetrySpec { base: Dur::from_micros(3), multiplier: 1.5, ..RetrySpec::default() };
        assert_eq!(odd.backoff(2), Dur::from_micros(5)); // 4.5 rounds to 5 (half away from zero)
    }

    #[test]
    fn full_jitter_stays_in_zero_to_expo() {
        let r = retry(Jitter::Full);
        let mut rng = rng_from_seed(11);
        for n in 1..=9 {
            let expo = r.backoff(n);
            for _ in 0..200 {
                let d = r.delay(n, Dur::ZERO, None, &mut rng);
                assert!(d <= expo, "retry {n}: {d} > {expo}");
            }
        }
        let mut rng = rng_from_seed(5);
        let first: Vec<u64> = (1..=4).map(|n| r.delay(n, Dur::ZERO, None, &mut rng).micros()).collect();
        assert_eq!(first, FULL_GOLDEN);
    }

    #[test]
    fn equal_jitter_stays_in_half_to_expo() {
        let r = retry(Jitter::Equal);
        let mut rng = rng_from_seed(12);
        for n in 1..=9 {
            let expo = r.backoff(n);
            for _ in 0..200 {
                let d = r.delay(n, Dur::ZERO, None, &mut rng);
                assert!(d.micros() >= expo.micros() / 2 && d <= expo, "retry {n}: {d}");
            }
        }
        let mut rng = rng_from_seed(5);
        let first: Vec<u64> = (1..=4).map(|n| r.delay(n, Dur::ZERO, None, &mut rng).micros()).collect();
        assert_eq!(first, EQUAL_GOLDEN);
    }

    #[test]
    fn decorrelated_jitter_grows_from_previous_and_is_capped() {
        let r = retry(Jitter::Decorrelated);
        let mut rng = rng_from_seed(13);
        let mut previous = Dur::ZERO;
        for n in 1..=50 {
            let d = r.delay(n, previous, None, &mut rng);
            let prev = if previous.is_zero() { r.base } else { previous };
            assert!(d >= r.base, "retry {n}: {d}");
            assert!(d.micros() <= (3 * prev.micros()).max(r.base.micros()), "retry {n}: {d} after {prev}");
            assert!(d <= r.cap);
            previous = d;
        }
        // Deep in the ladder the cap binds for most draws.
        let capped = (0..100).filter(|_| r.delay(9, Dur::from_secs(9), None, &mut rng) == r.cap).count();
        assert!(capped > 50, "{capped}");
        let mut rng = rng_from_seed(5);
        let mut previous = Dur::ZERO;
        let mut first = Vec::new();
        for n in 1..=4 {
            previous = r.delay(n, previous, None, &mut rng);
            first.push(previous.micros());
        }
        assert_eq!(first, DECORRELATED_GOLDEN);
    }

    const FULL_GOLDEN: [u64; 4] = [2_299, 161_454, 374_534, 329_590];
    const EQUAL_GOLDEN: [u64; 4] = [51_149, 180_727, 387_267, 564_795];
    const DECORRELATED_GOLDEN: [u64; 4] = [104_598, 272_590, 772_072, 1_013_054];

    #[test]
    fn retry_after_is_a_lower_bound_when_honoured() {
        let mut rng = rng_from_seed(3);
        let r = retry(Jitter::None);
        let hint = Some(Dur::from_secs(30));
        assert_eq!(r.delay(1, Dur::ZERO, hint, &mut rng), Dur::from_secs(30)); // above the cap too
        assert_eq!(r.delay(1, Dur::ZERO, Some(Dur::from_millis(20)), &mut rng), Dur::from_millis(100));
        let deaf = RetrySpec { honour_retry_after: false, ..r };
        assert_eq!(deaf.delay(1, Dur::ZERO, hint, &mut rng), Dur::from_millis(100));
        let full = retry(Jitter::Full);
        for _ in 0..100 {
            assert!(full.delay(2, Dur::ZERO, Some(Dur::from_millis(150)), &mut rng) >= Dur::from_millis(150));
        }
    }

    #[test]
    fn retry_on_and_attempt_budget() {
        let r = RetrySpec { max_attempts: 3, ..RetrySpec::default() };
        assert!(r.retries(OutcomeClass::Error, 1));
        assert!(r.retries(OutcomeClass::Timeout, 2));
        assert!(!r.retries(OutcomeClass::Timeout, 3));
        assert!(r.retries(OutcomeClass::RateLimited, 1));
        assert!(!r.retries(OutcomeClass::ClientError, 1));
        assert!(!r.retries(OutcomeClass::Ok, 1));
        assert!(!RetrySpec::default().retries(OutcomeClass::Error, 1));
        let only_timeouts = RetrySpec { retry_on: vec![OutcomeClass::Timeout], ..r.clone() };
        assert!(!only_timeouts.retries(OutcomeClass::Error, 1));
        assert!(!r.retries_rejection(1));
        let on_reject = RetrySpec { retry_on_reject: true, ..r };
        assert!(on_reject.retries_rejection(2));
        assert!(!on_reject.retries_rejection(3));
    }

    #[test]
    fn fallback_answers_and_retry_queue_cycles() {
        assert_eq!(FallbackSpec::None.latency(), None);
        let q = FallbackSpec::RetryQueue { cycle: Dur::from_secs(900), latency: Dur::from_millis(1) };
        assert_eq!(q.latency(), Some(Dur::from_millis(1)));
        assert_eq!(q.next_cycle(SimTime(0)), Some(SimTime(900_000_000)));
        assert_eq!(q.next_cycle(SimTime(899_999_999)), Some(SimTime(900_000_000)));
        assert_eq!(q.next_cycle(SimTime(900_000_000)), Some(SimTime(1_800_000_000)));
        assert_eq!(FallbackSpec::Cached { latency: Dur::from_millis(1) }.next_cycle(SimTime(5)), None);
    }

    #[test]
    fn parses_with_defaults() {
        let c = parse("").unwrap();
        assert_eq!(c, ClientSpec::default());
        assert!(c.validate().is_ok());
        let text = toml::to_string(&c).unwrap();
        assert!(text.contains("kind = \"none\""), "{text}");
        assert_eq!(parse(&text).unwrap(), c);
        let c = parse(
            r#"
            timeout = "2s"
            instances = 3
            shared_breaker = true
            [retry]
            max_attempts = 4
            jitter = "decorrelated"
            retry_on = ["timeout"]
            [fallback]
            kind = "retry_queue"
            cycle = "15m"
            "#,
        )
        .unwrap();
        assert_eq!(c.timeout, Dur::from_secs(2));
        assert_eq!(c.instances, 3);
        assert_eq!(c.retry.max_attempts, 4);
        assert_eq!(c.retry.base, Dur::from_millis(100));
        assert_eq!(c.retry.jitter, Jitter::Decorrelated);
        assert_eq!(c.retry.retry_on, vec![OutcomeClass::Timeout]);
        assert_eq!(
            c.fallback,
            FallbackSpec::RetryQueue { cycle: Dur::from_secs(900), latency: Dur::from_millis(1) }
        );
        let text = toml::to_string(&c).unwrap();
        assert_eq!(parse(&text).unwrap(), c);
        let cached = parse("[fallback]\nkind = \"cached\"").unwrap();
        assert_eq!(cached.fallback, FallbackSpec::Cached { latency: Dur::from_millis(1) });
        let local = parse("[fallback]\nkind = \"local\"").unwrap();
        assert_eq!(local.fallback.latency(), Some(Dur::from_millis(50)));
    }

    #[test]
    fn refuses_bad_settings_naming_the_field() {
        for (text, expected, line) in [
            ("timeout = \"0s\"", "longer than 0", 1),
            ("\ninstances = 0", "at least 1", 2),
            ("[retry]\nmax_attempts = 0", "at least 1", 2),
            ("[retry]\nmultiplier = 0.5", "`multiplier` must be a number >= 1", 2),
            ("[retry]\nretry_on = [\"ok\"]", "cannot contain `ok`", 2),
            ("[retry]\njitter = \"wild\"", "unknown variant `wild`", 2),
            ("[retry]\nmax_attemps = 3", "unknown field `max_attemps`", 2),
            ("[fallback]\nkind = \"retry_queue\"\ncycle = \"0s\"", "longer than 0", 3),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.contains(&format!("line {line}")), "{text:?}: {err}");
        }
        for (text, expected) in [
            ("[fallback]\nkind = \"retry_queue\"", "needs `cycle`"),
            ("[fallback]\nkind = \"cached\"\ncycle = \"1m\"", "only to kind `retry_queue`"),
            ("[fallback]\nkind = \"none\"\nlatency = \"1ms\"", "does not apply"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
        let built = ClientSpec {
            retry: RetrySpec { base: Dur::from_secs(20), ..RetrySpec::default() },
            ..ClientSpec::default()
        };
        assert!(
            built
                .validate()
                .unwrap_err()
                .to_string()
                .contains("`base` (20s) must not be longer than `cap` (10s)")
        );
        let built = ClientSpec { instances: 0, ..ClientSpec::default() };
        assert!(built.validate().unwrap_err().to_string().contains("`instances`"));
    }
}
