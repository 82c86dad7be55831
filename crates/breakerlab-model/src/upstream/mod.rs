//! The dependency's behaviour: a healthy baseline (`[upstream]`) plus synthetic incidents
//! (`[[incidents]]`), resolved for one horizon into a [`Dependency`] that answers attempts and
//! states the ground truth. Scripted calls (a CSV of exact calls) live in [`script`].
//!
//! [`Dependency::answer`] is pure: it depends only on the send time and the generator it is
//! given (the engine passes `seed.draw(Stream::Upstream, request, attempt)`), so every
//! configuration of a sweep gets the same answer for the same attempt at the same time.

pub mod balancer;
pub mod capacity;
pub mod incident;
pub mod pool;
pub mod script;

pub use capacity::{CapacitySpec, Load};
pub use incident::{IncidentKind, IncidentSpec, TimeOfDay};

use crate::outcome::{Answer, OutcomeClass};
use crate::rng::Rng;
use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};
use crate::units::Ratio;
use crate::{Error, Result};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

/// The standard normal's 95th percentile, Φ⁻¹(0.95).
pub const Z95: f64 = 1.644_853_626_951_472_2;

/// Most incident occurrences a scenario may have within its horizon (all incidents together).
pub const MAX_OCCURRENCES: usize = 1_000_000;

/// The healthy dependency: latency distribution and background answer classes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct UpstreamSpec {
    /// Median latency (> 0).
    pub p50: Dur,
    /// 95th-percentile latency (>= `p50`). Latency is lognormal through these two points.
    pub p95: Dur,
    /// Probability of a server error (5xx) when healthy.
    pub error_rate: Ratio,
    /// Probability of a client error (4xx/auth): the caller's fault, not the dependency's health.
    pub client_error_rate: Ratio,
    /// Probability of a 429 when healthy.
    pub rate_limited_rate: Ratio,
    /// Retry-after carried by the background 429s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<Dur>,
    /// Overload feedback (`[upstream.capacity]`); none = unlimited capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySpec>,
    /// A pool of this many hosts behind a load balancer (see [`pool`]); none = one dependency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// The pool's load balancer (default `round_robin`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balancer: Option<balancer::BalancerKind>,
    /// least_request: hosts drawn per pick (default 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice_count: Option<u32>,
    /// ring_hash: distinct request keys (default 1,000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash_keys: Option<u64>,
}

impl Default for UpstreamSpec {
    /// p50 100 ms, p95 400 ms, no errors.
    fn default() -> UpstreamSpec {
        UpstreamSpec {
            p50: Dur::from_millis(100),
            p95: Dur::from_millis(400),
            error_rate: Ratio(0.0),
            client_error_rate: Ratio(0.0),
            rate_limited_rate: Ratio(0.0),
            retry_after: None,
            capacity: None,
            hosts: None,
            balancer: None,
            choice_count: None,
            hash_keys: None,
        }
    }
}

impl UpstreamSpec {
    /// Cross-field checks; the message names the field.
    pub fn validate(&self) -> Result<()> {
        if self.p50.is_zero() {
            return Err(Error::invalid("`p50` must be longer than 0"));
        }
        if let Some(capacity) = &self.capacity {
            capacity.validate()?;
        }
        self.validate_pool()?;
        if self.p95 < self.p50 {
            return Err(Error::invalid(format!(
                "`p95` ({}) must not be shorter than `p50` ({})",
                self.p95, self.p50
            )));
        }
        for (name, r) in [
            ("error_rate", self.error_rate),
            ("client_error_rate", self.client_error_rate),
            ("rate_limited_rate", self.rate_limited_rate),
        ] {
            Ratio::new(r.get()).map_err(|e| Error::invalid(format!("`{name}`: {e}")))?;
        }
        let total = self.error_rate.get() + self.client_error_rate.get() + self.rate_limited_rate.get();
        if total > 1.0 + 1e-12 {
            return Err(Error::invalid(format!(
                "`error_rate` + `client_error_rate` + `rate_limited_rate` must not exceed 1, found {total}"
            )));
        }
        Ok(())
    }

    /// The pool fields: `balancer`, `choice_count` and `hash_keys` need `hosts` (and their
    /// algorithm); a capacity model is not modelled per host.
    fn validate_pool(&self) -> Result<()> {
        let Some(hosts) = self.hosts else {
            for (name, set) in [
                ("balancer", self.balancer.is_some()),
                ("choice_count", self.choice_count.is_some()),
                ("hash_keys", self.hash_keys.is_some()),
            ] {
                if set {
                    return Err(Error::invalid(format!(
                        "`{name}` balances a pool of hosts: give `hosts = N` too (or [[hosts]] tables)"
                    )));
                }
            }
            return Ok(());
        };
        if hosts == 0 || hosts > pool::MAX_HOSTS {
            return Err(Error::invalid(format!(
                "`hosts` must be from 1 to {}, found {hosts}",
                pool::MAX_HOSTS
            )));
        }
        if self.capacity.is_some() {
            return Err(Error::invalid(
                "[upstream.capacity] is one dependency's limit and is not modelled per host: remove it or `hosts`",
            ));
        }
        let kind = self.balancer.unwrap_or_default();
        if self.choice_count.is_some() && kind != balancer::BalancerKind::LeastRequest {
            return Err(Error::invalid("`choice_count` applies to balancer = \"least_request\""));
        }
        if self.choice_count == Some(0) {
            return Err(Error::invalid("`choice_count` must be at least 1"));
        }
        if self.hash_keys.is_some() && kind != balancer::BalancerKind::RingHash {
            return Err(Error::invalid("`hash_keys` applies to balancer = \"ring_hash\""));
        }
        if self.hash_keys == Some(0) {
            return Err(Error::invalid("`hash_keys` must be at least 1"));
        }
        Ok(())
    }

    /// The lognormal's σ: `ln(p95 / p50) / Φ⁻¹(0.95)`.
    pub fn sigma(&self) -> f64 {
        (self.p95.micros() as f64 / self.p50.micros() as f64).ln() / Z95
    }
}

/// One incident's effect, resolved from its spec.
#[derive(Copy, Clone, Debug)]
enum Effect {
    /// Outage and blip: `error` after `latency`.
    Fail { latency: Dur },
    /// Latency extended to the window's end.
    Hang,
    /// `error` with probability `p`.
    Brownout { p: f64 },
    /// Latency × `factor`.
    Slowdown { factor: f64 },
    /// Fails like an outage during the first `fail_len` µs of each `period` µs.
    Flapping { period: u64, fail_len: u64, latency: Dur },
    /// Error probability `frac × p` and latency × `1 + frac × (factor − 1)`.
    Ramp { p: f64, factor: f64 },
    /// 429 with probability `p`, with `retry_after` (or the time left in the window).
    RateLimit { p: f64, retry_after: Option<Dur> },
    /// 401 (`client_error`) after `latency` with probability `p`.
    AuthFailure { p: f64, latency: Dur },
}

impl Effect {
    fn of(spec: &IncidentSpec) -> Effect {
        let fail_latency = spec.latency.unwrap_or(incident::DEFAULT_FAIL_LATENCY);
        match spec.kind {
            IncidentKind::Outage | IncidentKind::Blip => Effect::Fail { latency: fail_latency },
            IncidentKind::Hang => Effect::Hang,
            IncidentKind::Brownout => Effect::Brownout { p: spec.error_rate.map_or(0.0, Ratio::get) },
            IncidentKind::Slowdown => Effect::Slowdown { factor: spec.factor.map_or(1.0, |f| f.get()) },
            IncidentKind::Flapping => {
                let period = spec.period.map_or(1, Dur::micros).max(1);
                let duty = spec.duty.map_or(0.5, Ratio::get);
                let fail_len = (duty * period as f64).round() as u64;
                Effect::Flapping { period, fail_len, latency: fail_latency }
            }
            IncidentKind::Ramp => Effect::Ramp {
                p: spec.error_rate.map_or(0.0, Ratio::get),
                factor: spec.factor.map_or(1.0, |f| f.get()),
            },
            IncidentKind::RateLimit => {
                Effect::RateLimit { p: spec.rate.map_or(1.0, Ratio::get), retry_after: spec.retry_after }
            }
            IncidentKind::AuthFailure => {
                Effect::AuthFailure { p: spec.rate.map_or(1.0, Ratio::get), latency: fail_latency }
            }
        }
    }

    /// Applies this effect to `answer`, for an attempt sent at `at` within `[start, end)`.
    fn apply(self, start: SimTime, end: SimTime, at: SimTime, rng: &mut Rng, answer: &mut Answer) {
        match self {
            Effect::Fail { latency } => fail(answer, latency),
            Effect::Hang => answer.latency = (end - at) + answer.latency,
            Effect::Brownout { p } => {
                if rng.random::<f64>() < p {
                    fail(answer, answer.latency);
                }
            }
            Effect::Slowdown { factor } => answer.latency = answer.latency.mul_f64(factor),
            Effect::Flapping { period, fail_len, latency } => {
                if (at - start).micros() % period < fail_len {
                    fail(answer, latency);
                }
            }
            Effect::Ramp { p, factor } => {
                let frac = (at - start).micros() as f64 / (end - start).micros().max(1) as f64;
                if p > 0.0 && rng.random::<f64>() < frac * p {
                    fail(answer, answer.latency);
                }
                answer.latency = answer.latency.mul_f64(1.0 + frac * (factor - 1.0));
            }
            Effect::RateLimit { p, retry_after } => {
                if rng.random::<f64>() < p {
                    answer.class = OutcomeClass::RateLimited;
                    answer.retry_after = Some(retry_after.unwrap_or(end - at));
                }
            }
            Effect::AuthFailure { p, latency } => {
                if rng.random::<f64>() < p {
                    answer.class = OutcomeClass::ClientError;
                    answer.latency = latency;
                    answer.retry_after = None;
                }
            }
        }
    }
}

/// Turns `answer` into a server error after `latency`.
fn fail(answer: &mut Answer, latency: Dur) {
    answer.class = OutcomeClass::Error;
    answer.latency = latency;
    answer.retry_after = None;
}

/// One occurrence of one incident.
#[derive(Copy, Clone, Debug)]
struct Occurrence {
    start: SimTime,
    end: SimTime,
    /// Index of the incident in the scenario's list.
    incident: u32,
}

/// The dependency of one scenario, validated and resolved for one horizon.
///
/// Active incidents are looked up per call by one binary search over precomputed segments
/// (maximal intervals with a constant set of active occurrences), with no allocation.
#[derive(Clone, Debug)]
pub struct Dependency {
    /// ln of the median latency in µs.
    mu: f64,
    sigma: f64,
    /// Cumulative thresholds of the baseline classes: error, then client error, then 429.
    error_below: f64,
    client_error_below: f64,
    rate_limited_below: f64,
    retry_after: Option<Dur>,
    effects: Vec<Effect>,
    kinds: Vec<IncidentKind>,
    expects: Vec<Expect>,
    /// Every occurrence starting before the horizon, sorted by (start, incident index).
    occurrences: Vec<Occurrence>,
    /// Segment `i` is `[seg_starts[i], seg_starts[i + 1])`; the last one runs to infinity.
    seg_starts: Vec<SimTime>,
    /// Segment `i`'s active occurrences are `seg_active[seg_offsets[i]..seg_offsets[i + 1]]`.
    seg_offsets: Vec<u32>,
    /// Occurrence indices, in start order within each segment.
    seg_active: Vec<u32>,
}

impl Dependency {
    /// Validates the baseline and the incidents and resolves every occurrence that starts before
    /// `horizon` (later ones are dropped). Errors name the incident (`[[incidents]] #n`, 1-based,
    /// with its kind and label) and the field.
    pub fn new(spec: &UpstreamSpec, incidents: &[IncidentSpec], horizon: SimTime) -> Result<Dependency> {
        spec.validate().map_err(|e| Error::invalid(format!("[upstream]: {e}")))?;
        let mut occurrences = Vec::new();
        for (i, inc) in incidents.iter().enumerate() {
            let name = || format!("[[incidents]] #{} ({})", i + 1, inc.describe());
            inc.validate().map_err(|e| Error::invalid(format!("{}: {e}", name())))?;
            let limit = MAX_OCCURRENCES - occurrences.len();
            let windows =
                inc.occurrences(horizon, limit).map_err(|e| Error::invalid(format!("{}: {e}", name())))?;
            let incident = u32::try_from(i).map_err(|_| Error::invalid("too many incidents"))?;
            occurrences.extend(windows.into_iter().map(|(start, end)| Occurrence { start, end, incident }));
        }
        occurrences.sort_by_key(|o| (o.start, o.incident));
        let (seg_starts, seg_offsets, seg_active) = segments(&occurrences);
        let e = spec.error_rate.get();
        let c = e + spec.client_error_rate.get();
        Ok(Dependency {
            mu: (spec.p50.micros() as f64).ln(),
            sigma: spec.sigma(),
            error_below: e,
            client_error_below: c,
            rate_limited_below: c + spec.rate_limited_rate.get(),
            retry_after: spec.retry_after,
            effects: incidents.iter().map(Effect::of).collect(),
            kinds: incidents.iter().map(|i| i.kind).collect(),
            expects: incidents.iter().map(IncidentSpec::expect).collect(),
            occurrences,
            seg_starts,
            seg_offsets,
            seg_active,
        })
    }

    /// The dependency's answer to an attempt sent at `at` (pure: depends only on `at` and the
    /// generator). Draws, in order: one uniform for the baseline class, one standard normal for
    /// the baseline latency, then one uniform per active probabilistic incident (brownout,
    /// ramp with an error rate, rate_limit). Active incidents apply in start order.
    pub fn answer(&self, at: SimTime, rng: &mut Rng) -> Answer {
        let u: f64 = rng.random();
        let z: f64 = StandardNormal.sample(rng);
        let latency = Dur((self.mu + self.sigma * z).exp().round() as u64);
        let (class, retry_after) = if u < self.error_below {
            (OutcomeClass::Error, None)
        } else if u < self.client_error_below {
            (OutcomeClass::ClientError, None)
        } else if u < self.rate_limited_below {
            (OutcomeClass::RateLimited, self.retry_after)
        } else {
            (OutcomeClass::Ok, None)
        };
        let mut answer = Answer { latency, class, retry_after };
        for &idx in self.active(at) {
            let occ = self.occurrences[idx as usize];
            self.effects[occ.incident as usize].apply(occ.start, occ.end, at, rng, &mut answer);
        }
        answer
    }

    /// Indices of the occurrences active at `at`, in start order.
    fn active(&self, at: SimTime) -> &[u32] {
        let seg = self.seg_starts.partition_point(|s| *s <= at);
        if seg == 0 {
            return &[];
        }
        let (from, to) = (self.seg_offsets[seg - 1] as usize, self.seg_offsets[seg] as usize);
        &self.seg_active[from..to]
    }

    /// The incidents (their positions in the list given to [`Dependency::new`]) active at
    /// `at`, in start order.
    pub fn active_incidents(&self, at: SimTime) -> impl Iterator<Item = u32> + '_ {
        self.active(at).iter().map(|&o| self.occurrences[o as usize].incident)
    }

    /// True when some incident is active at `at`.
    pub fn incident_active(&self, at: SimTime) -> bool {
        !self.active(at).is_empty()
    }

    /// Ground truth for scoring: every incident occurrence that starts in `[0, horizon)`, sorted
    /// by start (then by position in the file). Ends are not clipped to the horizon.
    pub fn ground_truth(&self) -> Vec<IncidentWindow> {
        self.occurrences
            .iter()
            .map(|o| IncidentWindow {
                start: o.start,
                end: o.end,
                kind: self.kinds[o.incident as usize].as_str().to_string(),
                expect: self.expects[o.incident as usize],
            })
            .collect()
    }
}

/// Cuts the timeline at every occurrence start and end and lists, per segment, the occurrences
/// active in it (in start order). Each incident's occurrences never overlap one another, so a
/// segment holds at most one occurrence per incident.
fn segments(occurrences: &[Occurrence]) -> (Vec<SimTime>, Vec<u32>, Vec<u32>) {
    let mut bounds: Vec<SimTime> = occurrences.iter().flat_map(|o| [o.start, o.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut offsets = Vec::with_capacity(bounds.len() + 1);
    let mut flat = Vec::new();
    let mut active: Vec<u32> = Vec::new();
    let mut next = 0;
    offsets.push(0);
    for &b in &bounds {
        active.retain(|&i| occurrences[i as usize].end > b);
        while next < occurrences.len() && occurrences[next].start <= b {
            if occurrences[next].end > b {
                active.push(next as u32);
            }
            next += 1;
        }
        flat.extend_from_slice(&active);
        offsets.push(flat.len() as u32);
    }
    (bounds, offsets, flat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use crate::units::Positive;

    const S: u64 = 1_000_000;

    /// A baseline with a fixed latency (p50 = p95) and no errors, so incident effects are exact.
    fn steady() -> UpstreamSpec {
        UpstreamSpec { p50: Dur::from_millis(100), p95: Dur::from_millis(100), ..UpstreamSpec::default() }
    }

    fn dep(incidents: &[IncidentSpec]) -> Dependency {
        Dependency::new(&steady(), incidents, SimTime(3_600 * S)).unwrap()
    }

    fn at(d: &Dependency, t: u64) -> Answer {
        d.answer(SimTime(t), &mut rng_from_seed(t ^ 0xABCD))
    }

    const OK_100MS: Answer = Answer { latency: Dur(100_000), class: OutcomeClass::Ok, retry_after: None };

    /// An incident over [100 s, 200 s).
    fn window(kind: IncidentKind) -> IncidentSpec {
        IncidentSpec::new(kind, Dur::from_secs(100), Dur::from_secs(100))
    }

    fn quantile(sorted: &[u64], q: f64) -> f64 {
        sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)] as f64
    }

    #[test]
    fn lognormal_reproduces_p50_and_p95() {
        let spec =
            UpstreamSpec { p50: Dur::from_millis(900), p95: Dur::from_secs(12), ..UpstreamSpec::default() };
        let d = Dependency::new(&spec, &[], SimTime(S)).unwrap();
        let mut rng = rng_from_seed(99);
        let mut lat: Vec<u64> =
            (0..200_000).map(|_| d.answer(SimTime(0), &mut rng).latency.micros()).collect();
        lat.sort_unstable();
        let (p50, p95) = (quantile(&lat, 0.5), quantile(&lat, 0.95));
        assert!((p50 / 900_000.0 - 1.0).abs() < 0.02, "p50 {p50}");
        assert!((p95 / 12_000_000.0 - 1.0).abs() < 0.02, "p95 {p95}");
        assert!((spec.sigma() - (12.0f64 / 0.9).ln() / Z95).abs() < 1e-12);
    }

    #[test]
    fn baseline_classes_come_at_their_rates() {
        let spec = UpstreamSpec {
            error_rate: Ratio(0.1),
            client_error_rate: Ratio(0.05),
            rate_limited_rate: Ratio(0.02),
            retry_after: Some(Dur::from_secs(1)),
            ..UpstreamSpec::default()
        };
        let d = Dependency::new(&spec, &[], SimTime(S)).unwrap();
        let mut rng = rng_from_seed(5);
        let n = 100_000;
        let mut counts = [0usize; 5];
        for _ in 0..n {
            let a = d.answer(SimTime(0), &mut rng);
            counts[a.class.index()] += 1;
            assert_eq!(a.retry_after.is_some(), a.class == OutcomeClass::RateLimited);
            assert_ne!(a.class, OutcomeClass::Timeout);
        }
        for (class, p) in
            [(OutcomeClass::Error, 0.1), (OutcomeClass::ClientError, 0.05), (OutcomeClass::RateLimited, 0.02)]
        {
            let expected = n as f64 * p;
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            let got = counts[class.index()] as f64;
            assert!((got - expected).abs() < 4.0 * sigma, "{class:?}: {got}");
        }
        assert_eq!(counts, BASELINE_COUNTS);
    }

    const BASELINE_COUNTS: [usize; 5] = [83_114, 9_932, 0, 1_971, 4_983];

    #[test]
    fn same_time_and_generator_give_the_same_answer() {
        let spec = UpstreamSpec { error_rate: Ratio(0.3), ..UpstreamSpec::default() };
        let mut b = window(IncidentKind::Brownout);
        b.error_rate = Some(Ratio(0.5));
        let d = Dependency::new(&spec, &[b], SimTime(3_600 * S)).unwrap();
        for t in [0, 150 * S] {
            let a1 = d.answer(SimTime(t), &mut rng_from_seed(77));
            let a2 = d.answer(SimTime(t), &mut rng_from_seed(77));
            assert_eq!(a1, a2);
        }
    }

    #[test]
    fn outage_and_blip_fail_fast_inside_start_inclusive_end_exclusive() {
        for kind in [IncidentKind::Outage, IncidentKind::Blip] {
            let d = dep(&[window(kind)]);
            let failing =
                Answer { latency: Dur::from_millis(50), class: OutcomeClass::Error, retry_after: None };
            assert_eq!(at(&d, 100 * S - 1), OK_100MS);
            assert_eq!(at(&d, 100 * S), failing);
            assert_eq!(at(&d, 200 * S - 1), failing);
            assert_eq!(at(&d, 200 * S), OK_100MS);
        }
        let mut slow_fail = window(IncidentKind::Outage);
        slow_fail.latency = Some(Dur::from_secs(2));
        assert_eq!(at(&dep(&[slow_fail]), 150 * S).latency, Dur::from_secs(2));
    }

    #[test]
    fn hang_lasts_until_the_window_ends() {
        let d = dep(&[window(IncidentKind::Hang)]);
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        let first = at(&d, 100 * S);
        assert_eq!(first.latency, Dur(100 * S + 100_000));
        assert_eq!(first.class, OutcomeClass::Ok);
        assert_eq!(at(&d, 200 * S - 1).latency, Dur(1 + 100_000));
        assert_eq!(at(&d, 200 * S), OK_100MS);
    }

    #[test]
    fn brownout_fails_at_its_rate() {
        let mut b = window(IncidentKind::Brownout);
        b.error_rate = Some(Ratio(1.0));
        let d = dep(&[b.clone()]);
        let failing = Answer { latency: Dur(100_000), class: OutcomeClass::Error, retry_after: None };
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        assert_eq!(at(&d, 100 * S), failing);
        assert_eq!(at(&d, 200 * S - 1), failing);
        assert_eq!(at(&d, 200 * S), OK_100MS);
        b.error_rate = Some(Ratio(0.3));
        let d = dep(&[b]);
        let mut rng = rng_from_seed(1);
        let errors =
            (0..20_000).filter(|_| d.answer(SimTime(150 * S), &mut rng).class == OutcomeClass::Error).count();
        let sigma = (20_000.0f64 * 0.3 * 0.7).sqrt();
        assert!((errors as f64 - 6_000.0).abs() < 4.0 * sigma, "{errors}");
    }

    #[test]
    fn slowdown_multiplies_latency() {
        let mut s = window(IncidentKind::Slowdown);
        s.factor = Some(Positive(13.0));
        let d = dep(&[s]);
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        assert_eq!(at(&d, 100 * S), Answer { latency: Dur(1_300_000), ..OK_100MS });
        assert_eq!(at(&d, 200 * S - 1).latency, Dur(1_300_000));
        assert_eq!(at(&d, 200 * S), OK_100MS);
    }

    #[test]
    fn flapping_fails_the_first_duty_of_each_period() {
        let mut f = window(IncidentKind::Flapping);
        f.period = Some(Dur::from_secs(10));
        f.duty = Some(Ratio(0.3));
        let d = dep(&[f]);
        let class = |t| at(&d, t).class;
        assert_eq!(class(100 * S - 1), OutcomeClass::Ok);
        assert_eq!(class(100 * S), OutcomeClass::Error);
        assert_eq!(class(103 * S - 1), OutcomeClass::Error);
        assert_eq!(class(103 * S), OutcomeClass::Ok);
        assert_eq!(class(110 * S - 1), OutcomeClass::Ok);
        assert_eq!(class(110 * S), OutcomeClass::Error);
        assert_eq!(class(193 * S - 1), OutcomeClass::Error);
        assert_eq!(class(199 * S), OutcomeClass::Ok);
        assert_eq!(class(200 * S), OutcomeClass::Ok);
        assert_eq!(at(&d, 100 * S).latency, Dur::from_millis(50));
    }

    #[test]
    fn ramp_rises_linearly_across_the_window() {
        let mut r = window(IncidentKind::Ramp);
        r.factor = Some(Positive(3.0));
        let d = dep(&[r]);
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        assert_eq!(at(&d, 100 * S).latency, Dur(100_000));
        assert_eq!(at(&d, 150 * S).latency, Dur(200_000));
        assert_eq!(at(&d, 175 * S).latency, Dur(250_000));
        assert_eq!(at(&d, 200 * S - 1).latency, Dur(300_000)); // 299,999.998 µs rounds up
        assert_eq!(at(&d, 200 * S), OK_100MS);
        let mut r = window(IncidentKind::Ramp);
        r.error_rate = Some(Ratio(0.8));
        let d = dep(&[r]);
        let mut rng = rng_from_seed(2);
        let mut errors = |t: u64| {
            (0..10_000).filter(|_| d.answer(SimTime(t), &mut rng).class == OutcomeClass::Error).count()
        };
        assert_eq!(errors(100 * S), 0);
        let mid = errors(150 * S) as f64; // p = 0.4
        assert!((mid - 4_000.0).abs() < 4.0 * (10_000.0f64 * 0.4 * 0.6).sqrt(), "{mid}");
        let late = errors(200 * S - 1) as f64; // p ≈ 0.8
        assert!((late - 8_000.0).abs() < 4.0 * (10_000.0f64 * 0.8 * 0.2).sqrt(), "{late}");
        assert_eq!(errors(200 * S), 0);
    }

    #[test]
    fn rate_limit_answers_429_with_retry_after() {
        let d = dep(&[window(IncidentKind::RateLimit)]);
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        let first = at(&d, 100 * S);
        assert_eq!(first.class, OutcomeClass::RateLimited);
        assert_eq!(first.retry_after, Some(Dur::from_secs(100))); // until the quota resets
        assert_eq!(at(&d, 200 * S - 1).retry_after, Some(Dur(1)));
        assert_eq!(at(&d, 200 * S), OK_100MS);
        let mut fixed = window(IncidentKind::RateLimit);
        fixed.retry_after = Some(Dur::from_secs(30));
        assert_eq!(at(&dep(&[fixed]), 150 * S).retry_after, Some(Dur::from_secs(30)));
    }

    #[test]
    fn auth_failure_answers_401_fast_and_expects_the_breaker_to_stay_closed() {
        let d = dep(&[window(IncidentKind::AuthFailure)]);
        assert_eq!(at(&d, 100 * S - 1), OK_100MS);
        let a = at(&d, 100 * S);
        assert_eq!(
            (a.class, a.latency, a.retry_after),
            (OutcomeClass::ClientError, Dur::from_millis(50), None)
        );
        assert_eq!(at(&d, 200 * S), OK_100MS);
        assert_eq!(d.ground_truth()[0].expect, Expect::StayClosed);
    }

    #[test]
    fn overlapping_incidents_apply_in_start_order() {
        let mut slow = IncidentSpec::new(IncidentKind::Slowdown, Dur::from_secs(50), Dur::from_secs(100));
        slow.factor = Some(Positive(10.0));
        let outage = window(IncidentKind::Outage); // [100 s, 200 s)
        // Listed after in the file but started first: the slowdown applies first, then the
        // outage replaces the answer, so the failure is fast.
        let d = dep(&[outage.clone(), slow.clone()]);
        assert_eq!(at(&d, 60 * S).latency, Dur::from_secs(1));
        assert_eq!(
            at(&d, 120 * S),
            Answer { latency: Dur::from_millis(50), class: OutcomeClass::Error, retry_after: None }
        );
        assert_eq!(at(&d, 170 * S).latency, Dur::from_millis(50));
        // A slowdown starting inside the outage slows the outage's failures too.
        let mut late_slow =
            IncidentSpec::new(IncidentKind::Slowdown, Dur::from_secs(150), Dur::from_secs(100));
        late_slow.factor = Some(Positive(10.0));
        let d = dep(&[outage, late_slow]);
        assert_eq!(at(&d, 160 * S).latency, Dur::from_millis(500));
        assert_eq!(at(&d, 210 * S).latency, Dur::from_secs(1));
        assert!(d.incident_active(SimTime(249 * S)));
        assert!(!d.incident_active(SimTime(250 * S)));
    }

    #[test]
    fn ground_truth_lists_occurrences_in_start_order() {
        let mut nightly = IncidentSpec::new(IncidentKind::Slowdown, Dur::ZERO, Dur::from_secs(5_400));
        nightly.start = None;
        nightly.every = Some(Dur::from_secs(86_400));
        nightly.at = Some(TimeOfDay::parse("02:00").unwrap());
        nightly.factor = Some(Positive(13.0));
        let blip = IncidentSpec::new(IncidentKind::Blip, Dur::from_secs(3 * 86_400), Dur::from_secs(30));
        let late = IncidentSpec::new(IncidentKind::Outage, Dur::from_secs(8 * 86_400), Dur::from_secs(30));
        let d = Dependency::new(&steady(), &[blip, nightly, late], SimTime(7 * 86_400 * S)).unwrap();
        let truth = d.ground_truth();
        assert_eq!(truth.len(), 8);
        assert_eq!(truth[0].start, SimTime(7_200 * S));
        assert_eq!(truth[0].end, SimTime(12_600 * S));
        assert_eq!(truth[0].kind, "slowdown");
        assert_eq!(truth[0].expect, Expect::Open);
        assert_eq!(truth[3].start, SimTime(3 * 86_400 * S));
        assert_eq!(truth[3].kind, "blip");
        assert_eq!(truth[3].expect, Expect::StayClosed);
        assert_eq!(truth[7].start, SimTime((6 * 86_400 + 7_200) * S));
        assert!(truth.windows(2).all(|w| w[0].start <= w[1].start));
        // The nightly slowdown is active at 02:00 on day 5 and not at 03:30.
        assert_eq!(at(&d, (5 * 86_400 + 7_200) * S).latency, Dur(1_300_000));
        assert_eq!(at(&d, (5 * 86_400 + 12_600) * S), OK_100MS);
    }

    #[test]
    fn many_occurrences_resolve_and_look_up_fast() {
        let mut every_minute = IncidentSpec::new(IncidentKind::Outage, Dur::ZERO, Dur::from_secs(10));
        every_minute.start = None;
        every_minute.every = Some(Dur::from_secs(60));
        let long = IncidentSpec::new(IncidentKind::Brownout, Dur::ZERO, Dur::from_secs(7 * 86_400));
        let long = IncidentSpec { error_rate: Some(Ratio(0.0)), ..long };
        let d = Dependency::new(&steady(), &[long, every_minute], SimTime(7 * 86_400 * S)).unwrap();
        assert_eq!(d.ground_truth().len(), 1 + 7 * 1_440);
        assert!(d.seg_active.len() <= 2 * d.seg_starts.len());
        assert_eq!(at(&d, (86_400 + 65) * S).class, OutcomeClass::Error);
        assert_eq!(at(&d, (86_400 + 70) * S).class, OutcomeClass::Ok);
    }

    #[test]
    fn refuses_bad_baselines_and_names_the_incident() {
        let bad = UpstreamSpec { p95: Dur::from_millis(50), ..UpstreamSpec::default() };
        let err = Dependency::new(&bad, &[], SimTime(S)).unwrap_err();
        assert!(err.to_string().contains("`p95` (50ms) must not be shorter than `p50` (100ms)"), "{err}");
        let bad = UpstreamSpec { p50: Dur::ZERO, ..UpstreamSpec::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("`p50`"));
        let bad =
            UpstreamSpec { error_rate: Ratio(0.7), client_error_rate: Ratio(0.5), ..UpstreamSpec::default() };
        assert!(bad.validate().unwrap_err().to_string().contains("must not exceed 1"));
        let mut slow = window(IncidentKind::Slowdown);
        slow.label = Some("db".into());
        let err = Dependency::new(&steady(), &[window(IncidentKind::Outage), slow], SimTime(S)).unwrap_err();
        assert!(
            err.to_string().contains("[[incidents]] #2 (slowdown \"db\"): kind `slowdown` needs `factor`"),
            "{err}"
        );
        let mut storm = IncidentSpec::new(IncidentKind::Blip, Dur::ZERO, Dur(1));
        storm.start = None;
        storm.every = Some(Dur(2));
        let err = Dependency::new(&steady(), &[storm], SimTime(7 * 86_400 * S)).unwrap_err();
        assert!(err.to_string().contains("use kind `flapping`"), "{err}");
    }

    #[test]
    fn parses_upstream_with_defaults_and_line_numbers() {
        let spec: UpstreamSpec = toml::from_str("p95 = \"2s\"\nerror_rate = 0.01").unwrap();
        assert_eq!(spec.p50, Dur::from_millis(100));
        assert_eq!(spec.p95, Dur::from_secs(2));
        assert_eq!(spec.error_rate, Ratio(0.01));
        let err = toml::from_str::<UpstreamSpec>("p50 = \"1s\"\n\nerror_rate = 2").unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("between 0 and 1"), "{err}");
        let err = toml::from_str::<UpstreamSpec>("p99 = \"1s\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `p99`"), "{err}");
        let text = toml::to_string(&spec).unwrap();
        assert_eq!(toml::from_str::<UpstreamSpec>(&text).unwrap(), spec);
    }

    proptest::proptest! {
        /// The segment lookup finds exactly the occurrences a linear scan finds, in start order.
        #[test]
        fn segment_lookup_matches_a_linear_scan(
            windows in proptest::collection::vec((0u64..1_000, 1u64..300, 0u64..4), 1..8),
            probes in proptest::collection::vec(0u64..1_400, 50),
        ) {
            let incidents: Vec<IncidentSpec> = windows
                .iter()
                .map(|&(start, len, every)| {
                    let mut spec = IncidentSpec::new(IncidentKind::Hang, Dur(start), Dur(len));
                    if every > 0 {
                        spec.start = None;
                        spec.offset = Some(Dur(start));
                        spec.every = Some(Dur(len + every * 97));
                    }
                    spec
                })
                .collect();
            let d = Dependency::new(&steady(), &incidents, SimTime(1_200)).unwrap();
            for t in probes {
                let scan: Vec<u32> = (0..d.occurrences.len() as u32)
                    .filter(|&i| {
                        let o = d.occurrences[i as usize];
                        o.start <= SimTime(t) && SimTime(t) < o.end
                    })
                    .collect();
                proptest::prop_assert_eq!(d.active(SimTime(t)), &scan[..], "at {}", t);
            }
        }
    }
}
