//! Retry budgets: client-side limits on how many retries may go out, so that retries cannot
//! multiply the load on a struggling dependency. Each client instance keeps its own budget; the
//! engine asks it before every retry and tells it every result.
//!
//! - `token_bucket`: gRPC retry throttling (grpc/proposal A6-client-retries.md): the token
//!   count starts at `max_tokens`; a failed attempt takes 1, a successful one adds `token_ratio`;
//!   retries are suppressed while the count is at or below `max_tokens / 2`.
//! - `retry_quota`: the AWS SDK's standard retry quota (aws/aws-sdk-go-v2, aws/retry/standard.go
//!   and retry/retry_quota... `RetryCost` 5, `RetryTimeoutCost` 10, `NoRetryIncrement` 1, 500
//!   tokens): a retry costs 5 (10 after a timeout) and is refused when the quota cannot pay; a
//!   successful retry refunds its cost, a success at the first attempt adds 1, up to the capacity.
//! - `ratio`: Finagle's `RetryBudget` (ttl 10 s, 10 retries/s minimum, 20 % of requests): over
//!   the last `ttl`, retries may not exceed `percent` of the requests plus a reserve of
//!   `min_per_sec` × ttl.
//! - `concurrency`: Envoy's retry budget (envoy/config/cluster/v3/circuit_breaker.proto): retries
//!   in flight may not exceed max(`percent` × requests in flight, `min_concurrency`).

use crate::outcome::OutcomeClass;
use crate::time::{Dur, SimTime};
use crate::units::{Positive, Ratio};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A retry budget as written in `[client.retry.budget]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BudgetSpec {
    /// No budget: the retry ladder alone decides.
    #[default]
    None,
    /// gRPC retry throttling.
    TokenBucket {
        /// Tokens at the start and at most (gRPC `maxTokens`, 1..=1000).
        #[serde(default = "default_max_tokens")]
        max_tokens: Positive,
        /// Tokens a success adds (gRPC `tokenRatio`).
        #[serde(default = "default_token_ratio")]
        token_ratio: Positive,
    },
    /// The AWS SDK's standard retry quota.
    RetryQuota {
        /// Tokens at the start and at most.
        #[serde(default = "default_quota")]
        capacity: u32,
        /// Cost of a retry.
        #[serde(default = "default_retry_cost")]
        retry_cost: u32,
        /// Cost of a retry after a timeout.
        #[serde(default = "default_timeout_cost")]
        timeout_cost: u32,
        /// Tokens a success at the first attempt adds.
        #[serde(default = "default_no_retry_increment")]
        no_retry_increment: u32,
    },
    /// Finagle's ratio budget over a sliding time window.
    Ratio {
        /// Retries allowed per request over the window.
        #[serde(default = "default_percent")]
        percent: Ratio,
        /// A reserve of retries per second, whatever the traffic.
        #[serde(default = "default_min_per_sec")]
        min_per_sec: f64,
        /// The window (counted in whole seconds).
        #[serde(default = "default_ttl")]
        ttl: Dur,
    },
    /// Envoy's concurrency budget.
    Concurrency {
        /// Retries in flight allowed per request in flight.
        #[serde(default = "default_percent")]
        percent: Ratio,
        /// Retries in flight always allowed.
        #[serde(default = "default_min_concurrency")]
        min_concurrency: u32,
    },
}

fn default_max_tokens() -> Positive {
    Positive(10.0)
}
fn default_token_ratio() -> Positive {
    Positive(0.1)
}
fn default_quota() -> u32 {
    500
}
fn default_retry_cost() -> u32 {
    5
}
fn default_timeout_cost() -> u32 {
    10
}
fn default_no_retry_increment() -> u32 {
    1
}
fn default_percent() -> Ratio {
    Ratio(0.2)
}
fn default_min_per_sec() -> f64 {
    10.0
}
fn default_ttl() -> Dur {
    Dur::from_secs(10)
}
fn default_min_concurrency() -> u32 {
    3
}

/// Longest `ratio` window, in seconds (the window is a fixed ring of one-second slots).
pub const MAX_TTL_SECS: u64 = 3_600;

impl BudgetSpec {
    /// Cross-field checks; the message names the field.
    pub fn validate(&self) -> Result<()> {
        match self {
            BudgetSpec::RetryQuota { capacity, retry_cost, timeout_cost, .. } => {
                if *capacity == 0 || *retry_cost == 0 || *timeout_cost == 0 {
                    return Err(Error::invalid(
                        "budget: `capacity`, `retry_cost` and `timeout_cost` must be at least 1",
                    ));
                }
            }
            BudgetSpec::Ratio { min_per_sec, ttl, .. } => {
                if !min_per_sec.is_finite() || *min_per_sec < 0.0 {
                    return Err(Error::invalid(format!(
                        "budget: `min_per_sec` must be 0 or more, found {min_per_sec}"
                    )));
                }
                let secs = ttl.micros() / crate::time::MICROS_PER_SEC;
                if secs == 0 || secs > MAX_TTL_SECS {
                    return Err(Error::invalid(format!(
                        "budget: `ttl` must be between 1s and 1h, found {ttl}"
                    )));
                }
            }
            BudgetSpec::None | BudgetSpec::TokenBucket { .. } | BudgetSpec::Concurrency { .. } => {}
        }
        Ok(())
    }
}

/// A live budget for one client instance. Nothing is allocated after [`Budget::new`].
#[derive(Debug, Clone)]
pub struct Budget {
    spec: BudgetSpec,
    tokens: f64,
    quota: u32,
    /// `ratio`: requests and retries per one-second slot, a ring over the ttl.
    slots: Vec<(u64, u32, u32)>,
    /// Retries refused by the budget.
    pub refused: u64,
}

impl Budget {
    /// A full budget.
    pub fn new(spec: &BudgetSpec) -> Budget {
        let (tokens, quota, slots) = match spec {
            BudgetSpec::TokenBucket { max_tokens, .. } => (max_tokens.get(), 0, Vec::new()),
            BudgetSpec::RetryQuota { capacity, .. } => (0.0, *capacity, Vec::new()),
            BudgetSpec::Ratio { ttl, .. } => {
                let secs = (ttl.micros() / crate::time::MICROS_PER_SEC).clamp(1, MAX_TTL_SECS);
                (0.0, 0, vec![(u64::MAX, 0, 0); secs as usize])
            }
            BudgetSpec::None | BudgetSpec::Concurrency { .. } => (0.0, 0, Vec::new()),
        };
        Budget { spec: spec.clone(), tokens, quota, slots, refused: 0 }
    }

    /// A request arrived (the `ratio` budget's deposit).
    pub fn on_request(&mut self, now: SimTime) {
        if matches!(self.spec, BudgetSpec::Ratio { .. }) {
            self.slot(now).1 += 1;
        }
    }

    /// An attempt's result reached the client. `retry_cost` is what the quota charged for it
    /// when it was a retry (0 for a first attempt).
    pub fn on_result(&mut self, class: OutcomeClass, retry_cost: u32) {
        match &self.spec {
            BudgetSpec::TokenBucket { max_tokens, token_ratio } => {
                self.tokens = if class == OutcomeClass::Ok {
                    (self.tokens + token_ratio.get()).min(max_tokens.get())
                } else {
                    (self.tokens - 1.0).max(0.0)
                };
            }
            BudgetSpec::RetryQuota { capacity, no_retry_increment, .. } if class == OutcomeClass::Ok => {
                let refund = if retry_cost > 0 { retry_cost } else { *no_retry_increment };
                self.quota = (self.quota + refund).min(*capacity);
            }
            _ => {}
        }
    }

    /// May a retry after an answer of `class` go out now? On yes, the budget is charged and the
    /// returned cost (non-zero only for the quota) must be given back with the retry's result.
    /// `active_requests` and `active_retries` are this instance's requests and retries in flight.
    pub fn try_retry(
        &mut self,
        now: SimTime,
        class: OutcomeClass,
        active_requests: u64,
        active_retries: u64,
    ) -> Option<u32> {
        let granted = match &self.spec {
            BudgetSpec::None => Some(0),
            BudgetSpec::TokenBucket { max_tokens, .. } => (self.tokens > max_tokens.get() / 2.0).then_some(0),
            BudgetSpec::RetryQuota { retry_cost, timeout_cost, .. } => {
                let cost = if class == OutcomeClass::Timeout { *timeout_cost } else { *retry_cost };
                (self.quota >= cost).then(|| {
                    self.quota -= cost;
                    cost
                })
            }
            BudgetSpec::Ratio { percent, min_per_sec, ttl } => {
                let (percent, reserve) = (percent.get(), min_per_sec * (ttl.micros() / 1_000_000) as f64);
                let (requests, retries) = self.window(now);
                let allowed = (percent * requests as f64 + reserve).floor() as u64;
                (retries < allowed).then(|| {
                    self.slot(now).2 += 1;
                    0
                })
            }
            BudgetSpec::Concurrency { percent, min_concurrency } => {
                let limit = (percent.get() * active_requests as f64).floor().max(f64::from(*min_concurrency));
                ((active_retries as f64) < limit).then_some(0)
            }
        };
        if granted.is_none() {
            self.refused += 1;
        }
        granted
    }

    /// The one-second slot of `now`, reset if it last held an older second.
    fn slot(&mut self, now: SimTime) -> &mut (u64, u32, u32) {
        let second = now.micros() / crate::time::MICROS_PER_SEC;
        let n = self.slots.len() as u64;
        let slot = &mut self.slots[(second % n) as usize];
        if slot.0 != second {
            *slot = (second, 0, 0);
        }
        slot
    }

    /// Requests and retries over the window ending at `now`'s second.
    fn window(&self, now: SimTime) -> (u64, u64) {
        let second = now.micros() / crate::time::MICROS_PER_SEC;
        let n = self.slots.len() as u64;
        self.slots
            .iter()
            .filter(|(s, _, _)| *s != u64::MAX && *s + n > second)
            .fold((0, 0), |(req, ret), (_, a, b)| (req + u64::from(*a), ret + u64::from(*b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> BudgetSpec {
        toml::from_str::<BudgetSpec>(text).expect("valid budget")
    }

    const T: SimTime = SimTime(0);

    #[test]
    fn token_bucket_throttles_at_half_and_refills_with_successes() {
        // 10 tokens: failures take 1 each; at 5 tokens (<= 10/2) retries stop.
        let mut b = Budget::new(&spec("kind = \"token_bucket\""));
        for expected in [true, true, true, true, true, false] {
            assert_eq!(b.try_retry(T, OutcomeClass::Error, 1, 0).is_some(), expected);
            b.on_result(OutcomeClass::Error, 0);
        }
        assert_eq!(b.tokens, 4.0);
        // Each success adds 0.1: back above 5 after 11 successes (4 + 1.1 = 5.1).
        for _ in 0..10 {
            b.on_result(OutcomeClass::Ok, 0);
        }
        assert!(b.try_retry(T, OutcomeClass::Error, 1, 0).is_none());
        b.on_result(OutcomeClass::Ok, 0);
        assert!(b.try_retry(T, OutcomeClass::Error, 1, 0).is_some());
        assert_eq!(b.refused, 2);
    }

    #[test]
    fn retry_quota_charges_5_or_10_and_refunds_successful_retries() {
        let mut b = Budget::new(&spec("kind = \"retry_quota\"\ncapacity = 22"));
        assert_eq!(b.try_retry(T, OutcomeClass::Timeout, 1, 0), Some(10));
        assert_eq!(b.try_retry(T, OutcomeClass::Error, 1, 0), Some(5));
        assert_eq!(b.try_retry(T, OutcomeClass::Error, 1, 0), Some(5));
        assert_eq!(b.quota, 2);
        assert_eq!(b.try_retry(T, OutcomeClass::Error, 1, 0), None);
        b.on_result(OutcomeClass::Ok, 10); // the timed-out call's retry succeeded: refund 10
        assert_eq!(b.quota, 12);
        b.on_result(OutcomeClass::Ok, 0); // a first attempt succeeded: +1
        assert_eq!(b.quota, 13);
        b.on_result(OutcomeClass::Error, 5); // a failed retry refunds nothing
        assert_eq!(b.quota, 13);
        for _ in 0..20 {
            b.on_result(OutcomeClass::Ok, 0);
        }
        assert_eq!(b.quota, 22, "capped at the capacity");
    }

    #[test]
    fn ratio_allows_percent_of_recent_requests_plus_reserve() {
        // 20 % of requests over 10 s plus 0.5/s × 10 s = 5 reserved.
        let mut b = Budget::new(&spec("kind = \"ratio\"\nmin_per_sec = 0.5"));
        for _ in 0..20 {
            b.on_request(T);
        }
        let granted = (0..20).filter(|_| b.try_retry(T, OutcomeClass::Error, 0, 0).is_some()).count();
        assert_eq!(granted, 4 + 5);
        // 10 s later the window has forgotten both the requests and the retries.
        let later = SimTime(10_000_000);
        let granted = (0..20).filter(|_| b.try_retry(later, OutcomeClass::Error, 0, 0).is_some()).count();
        assert_eq!(granted, 5);
    }

    #[test]
    fn concurrency_caps_retries_in_flight() {
        let mut b = Budget::new(&spec("kind = \"concurrency\""));
        assert!(b.try_retry(T, OutcomeClass::Error, 10, 2).is_some(), "min 3 in flight");
        assert!(b.try_retry(T, OutcomeClass::Error, 10, 3).is_none());
        assert!(b.try_retry(T, OutcomeClass::Error, 100, 19).is_some(), "20 % of 100");
        assert!(b.try_retry(T, OutcomeClass::Error, 100, 20).is_none());
    }

    #[test]
    fn bad_budgets_are_refused() {
        assert!(toml::from_str::<BudgetSpec>("kind = \"ratio\"\npercent = 2.0").is_err());
        assert!(toml::from_str::<BudgetSpec>("kind = \"bucket\"").is_err());
        assert!(spec("kind = \"ratio\"\nttl = \"500ms\"").validate().is_err());
        assert!(spec("kind = \"retry_quota\"\nretry_cost = 0").validate().is_err());
        assert_eq!(spec("kind = \"none\""), BudgetSpec::None);
    }
}
