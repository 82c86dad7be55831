//! Envoy outlier detection (presets `envoy-outlier`, `istio-outlier`, `grpc-outlier`): the
//! family's parameters in the proto's names, its presets and exports, and its one-host model.
//!
//! On a scenario with a pool of hosts (`[upstream] hosts = N`) the engine runs the whole
//! detector of [`super::outlier`] per client (every detector, the ejection limit, the panic
//! threshold). Without a pool, the dependency is one host and this file's [`EnvoyBreaker`]
//! runs: the consecutive-5xx rule alone, an ejected host refusing calls (as Envoy answers
//! "no healthy upstream" with the panic threshold off, Istio's default). That one-host model is
//! unchanged from the first version of this preset, so existing scenarios give the same bytes.
//!
//! Sources: envoyproxy/data-plane-api, envoy/config/cluster/v3/outlier_detection.proto (the
//! defaults); envoyproxy/envoy source/common/upstream/outlier_detection_impl.cc (read at
//! the release tags v1.26.0, v1.27.0 and v1.28.0; `DetectorImpl::checkHostForUneject`,
//! `DetectorImpl::ejectHost`); the rules are cited line by line in [`super::outlier`] and docs/service-mesh.md.
//!
//! One-host model, reproduced:
//! - every non-5xx response resets the host's consecutive-5xx counter; the
//!   `consecutive_5xx`-th 5xx in a row ejects the host at once (a single host can always be
//!   ejected, as before Envoy 1.28), with probability `enforcing_consecutive_5xx` %;
//! - the interval timer fires every `interval` from time zero: at each tick an ejected host
//!   returns when `min(base_ejection_time × backoff, max_ejection_time) <= now − ejected_at` —
//!   so the return happens at the first tick after the ejection time is up — and its counter is
//!   reset; a healthy host's backoff multiplier drops by one per tick;
//! - each ejection raises the multiplier by one while `backoff × base < max + base`;
//! - no half-open state and no probe limit: the states reported are closed and open.

use super::evidence::{Evidence, Test};
use super::family::{Family, Preset};
use super::library::{ExportInput, Library, commented, proto_duration};
use super::machine::{Admission, Breaker, Observation, Phase, State, Ticket, Transitions};
use super::outlier::ejection;
use super::param::{PolicyError, family_config, impossible, not_shorter, require};
use crate::outcome::{Classifier, OutcomeClass, Verdict};
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Whose outlier detection runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Implementation {
    /// Envoy's `DetectorImpl` (and Istio's, which configures Envoy).
    #[default]
    Envoy,
    /// gRPC's `outlier_detection` balancer (gRFC A50): success rate and failure percentage only.
    Grpc,
}

/// The Envoy release whose rules run: the ejection limit changed in 1.27 and again in 1.28, and
/// the multiplier's decay in 1.28 (outlier_detection_impl.cc at v1.26.0, v1.27.0, v1.28.0). Written `"1.26"` or `1.26` (`--set envoy_version=1.26`
/// reads a number).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum EnvoyVersion {
    /// Up to 1.26: `100 × ejected / hosts < max_ejection_percent`, so one host can always be
    /// ejected; the multiplier drops first thing in every tick for every host in rotation.
    #[serde(rename = "1.26")]
    V1_26,
    /// 1.27: `100 × (ejected + 1) / hosts <= max_ejection_percent`, or no host ejected yet;
    /// the old decay.
    #[serde(rename = "1.27")]
    V1_27,
    /// 1.28 and later: `100 × (ejected + 1) / hosts <= max_ejection_percent` alone (with
    /// `always_eject_one_host` from 1.31, PR #34796); the
    /// multiplier drops after the tick's ejections, once the host has been back an interval.
    #[default]
    #[serde(rename = "1.28")]
    V1_28,
}

impl<'de> Deserialize<'de> for EnvoyVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<EnvoyVersion, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Number(f64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Text(t) => t,
            Raw::Number(n) => format!("{n}"),
        };
        match text.trim() {
            "1.26" => Ok(EnvoyVersion::V1_26),
            "1.27" => Ok(EnvoyVersion::V1_27),
            "1.28" => Ok(EnvoyVersion::V1_28),
            other => Err(serde::de::Error::custom(format!(
                "expected \"1.26\" (up to 1.26), \"1.27\" or \"1.28\" (1.28 and later), found {other:?}"
            ))),
        }
    }
}

family_config! {
    /// `OutlierDetection` fields in the proto's names, the cluster's panic threshold, and which
    /// implementation and release run them.
    EnvoyConfig {
        consecutive_5xx: u32 = 5, "calls", "consecutive 5xx responses that eject the host (0 = off)";
        interval: Dur = Dur::from_secs(10), "duration",
            "detector sweep: returns and backoff decay happen only at these ticks";
        base_ejection_time: Dur = Dur::from_secs(30), "duration",
            "ejection time = base x multiplier (grows by one per ejection, drops by one per healthy tick)";
        max_ejection_time: Dur = Dur::from_secs(300), "duration", "cap of the ejection time";
        max_ejection_time_jitter: Dur = Dur::ZERO, "duration",
            "random extra ejection time, uniform in whole ms from 0 to this";
        max_ejection_percent: u32 = 10, "percent",
            "most of the pool ejected at once (checked as 100 x (ejected + 1) / hosts from 1.27; from 1.28 even the first)";
        enforcing_consecutive_5xx: u32 = 100, "percent", "chance a consecutive-5xx detection ejects";
        consecutive_gateway_failure: u32 = 5, "calls",
            "consecutive 502/503/504 (and local-origin failures unless split) that detect (0 = off)";
        enforcing_consecutive_gateway_failure: u32 = 0, "percent",
            "chance a consecutive-gateway-failure detection ejects";
        split_external_local_origin_errors: bool = false, "bool",
            "count connect failures and timeouts apart from the host's HTTP status";
        consecutive_local_origin_failure: u32 = 5, "calls",
            "consecutive local-origin failures that detect, when split (0 = off)";
        enforcing_consecutive_local_origin_failure: u32 = 100, "percent",
            "chance a consecutive-local-origin detection ejects";
        success_rate_minimum_hosts: u32 = 5, "count", "hosts with enough volume for the success-rate rule";
        success_rate_request_volume: u32 = 100, "calls", "requests in the last interval for a host to count";
        success_rate_stdev_factor: u32 = 1900, "count",
            "threshold = mean - (factor / 1000) x population stdev of the hosts' success rates";
        enforcing_success_rate: u32 = 100, "percent", "chance a success-rate detection ejects";
        enforcing_local_origin_success_rate: u32 = 100, "percent",
            "chance a local-origin success-rate detection ejects (split only)";
        failure_percentage_threshold: u32 = 85, "percent", "a host failing this % of the last interval is detected";
        failure_percentage_minimum_hosts: u32 = 5, "count", "hosts the pool needs for the failure-percentage rule";
        failure_percentage_request_volume: u32 = 50, "calls", "requests in the last interval for a host to count";
        enforcing_failure_percentage: u32 = 0, "percent", "chance a failure-percentage detection ejects";
        enforcing_failure_percentage_local_origin: u32 = 0, "percent",
            "chance a local-origin failure-percentage detection ejects (split only)";
        always_eject_one_host: bool = false, "bool", "eject one host whatever max_ejection_percent says (1.31+)";
        healthy_panic_threshold: f64 = 50.0, "percent",
            "below this % of hosts in rotation the balancer uses every host, ejected ones too (0 = off)";
        health_check_interval: Dur = Dur::ZERO, "duration",
            "active HTTP health checks of every host, the next sent this long after each completes (0 = none)";
        health_check_timeout: Dur = Dur::from_secs(1), "duration",
            "a health check slower than this fails as a network failure";
        health_check_unhealthy_threshold: u32 = 3, "count",
            "timeouts or connection failures in a row that mark a host failed (any other non-200 marks it at once)";
        health_check_healthy_threshold: u32 = 2, "count", "200s in a row that mark a failed host healthy again";
        successful_active_health_check_uneject_host: bool = true, "bool",
            "a health check completing while its host is not marked failed returns the host if ejected";
        envoy_version: EnvoyVersion = EnvoyVersion::V1_28, "1.26 | 1.27 | 1.28",
            "release rules: 1.26 and 1.27 eject one host always; 1.28 checks max_ejection_percent on the first too and changed the decay";
        implementation: Implementation = Implementation::Envoy, "envoy | grpc",
            "envoy: DetectorImpl; grpc: gRFC A50 (success rate and failure percentage only)";
    }
}

/// The classifier of every preset: 5xx (errors, gateway timeouts) count; 429 and other 4xx are
/// successes to the detector.
const FIVE_XX: Classifier = Classifier::EVERY_ERROR
    .with(OutcomeClass::RateLimited, Verdict::Success)
    .with(OutcomeClass::ClientError, Verdict::Success);

/// Istio's translation of a `DestinationRule` `outlierDetection` with its documented defaults
/// (istio/istio pilot/pkg/networking/core/cluster_traffic_policy.go @ 011b88b,
/// `applyOutlierDetection`): success-rate enforcement forced to 0, the panic threshold from
/// `minHealthPercent` (0: off), enforcement 100 for an error type the rule sets (a gateway
/// threshold left at 0 is off).
fn istio() -> EnvoyConfig {
    EnvoyConfig {
        consecutive_gateway_failure: 0,
        enforcing_consecutive_gateway_failure: 100,
        enforcing_success_rate: 0,
        enforcing_local_origin_success_rate: 0,
        healthy_panic_threshold: 0.0,
        ..EnvoyConfig::default()
    }
}

/// gRPC's `outlier_detection` balancer as xDS configures it from Envoy's defaults (gRFC A50,
/// grpc/proposal A50-xds-outlier-detection.md @ 00fa54f): success rate on, failure percentage
/// off (its enforcement 0), no consecutive rules, no panic threshold.
fn grpc() -> EnvoyConfig {
    EnvoyConfig {
        implementation: Implementation::Grpc,
        healthy_panic_threshold: 0.0,
        ..EnvoyConfig::default()
    }
}

impl Family for EnvoyConfig {
    type Breaker = EnvoyBreaker;
    const NAME: &'static str = "envoy";
    const PRESETS: &'static [Preset<Self>] = &[
        Preset {
            name: "envoy-outlier",
            library: "Envoy (config.cluster.v3 API)",
            summary: "Envoy outlier detection: 5 consecutive 5xx eject the host for 30 s x consecutive ejections (max 300 s), checked every 10 s; automatic return",
            source: "envoyproxy/data-plane-api, envoy/config/cluster/v3/outlier_detection.proto; envoyproxy/envoy source/common/upstream/outlier_detection_impl.cc at v1.28.0 (DetectorImpl::ejectHost :472-528, checkHostForUneject :354-370, onIntervalTimer :742-776; the 1.26 and 1.27 rules at v1.26.0 and v1.27.0)",
            quirks: &[
                "only 5xx count: 429 and other 4xx reset the consecutive counter (classifier: rate_limited and client_error are successes)",
                "the host returns at the first 10 s interval tick after its ejection time, not at the exact instant",
                "ejection time = min(base x multiplier, max); the multiplier grows by one per ejection while multiplier x base < max + base (so up to 11 with the defaults) and drops by one per healthy interval",
                "no half-open: the host returns to full traffic; no probe limit",
                "with [upstream] hosts = N every client runs the whole detector (success rate, failure percentage, gateway and local-origin rules, max_ejection_percent, the 50 % panic threshold); without a pool only the consecutive-5xx rule runs, an ejected host refusing calls",
                "from 1.28 (runtime guard check_mep_on_first_eject) max_ejection_percent 10 ejects nothing in a pool of fewer than 10 hosts; envoy_version = \"1.26\" or \"1.27\" ejects one host always",
            ],
            config: EnvoyConfig::default,
            classifier: FIVE_XX,
        },
        Preset {
            name: "istio-outlier",
            library: "Istio DestinationRule outlierDetection (Envoy underneath)",
            summary: "Istio's translation: consecutive 5xx 5, gateway errors only when set, success rate off, panic threshold off (minHealthPercent 0), max ejection 10 %",
            source: "istio/istio pilot/pkg/networking/core/cluster_traffic_policy.go @ 011b88b (applyOutlierDetection); Envoy rules as envoy-outlier",
            quirks: &[
                "enforcing_success_rate is forced to 0: the success-rate rule never ejects",
                "the panic threshold is minHealthPercent, 0 by default: with every host ejected the sidecar answers 503 (no healthy upstream)",
                "a consecutiveGatewayErrors set in the rule is enforced at 100 %; consecutive5xxErrors keeps Envoy's 5 unless set (0 turns it off)",
                "max_ejection_percent 10 with Envoy 1.28+ ejects nothing in pools under 10 hosts",
            ],
            config: istio,
            classifier: FIVE_XX,
        },
        Preset {
            name: "grpc-outlier",
            library: "gRPC outlier_detection balancer (gRFC A50)",
            summary: "gRPC's outlier detection: success rate (and failure percentage when enforced) every 10 s, ejection at the tick's time, the multiplier dropping on every tick a host is in rotation",
            source: "grpc/grpc-go xds/internal/balancer/outlierdetection/balancer.go at v1.60.0 (intervalTimerAlgorithm :737-778, successRateAlgorithm :825-846, failurePercentageAlgorithm :853-873); grpc/proposal A50-xds-outlier-detection.md @ 00fa54f",
            quirks: &[
                "no consecutive rules: gRPC does not see HTTP status codes; every non-OK status is a failure",
                "the ejection timestamp is the tick's time; a host returns at the first tick strictly after it plus its ejection time",
                "each rule stops as soon as 100 x ejected / addresses >= max_ejection_percent (grpc-go; gRFC A50 says greater than)",
                "failure percentage ejects above the threshold (strictly) and needs minimum_hosts addresses with the request volume; the multiplier drops on every tick a host is not ejected",
            ],
            config: grpc,
            classifier: FIVE_XX,
        },
    ];

    fn validate(&self) -> Result<(), PolicyError> {
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
        for (name, v) in [
            ("max_ejection_percent", self.max_ejection_percent),
            ("enforcing_consecutive_5xx", self.enforcing_consecutive_5xx),
            ("enforcing_consecutive_gateway_failure", self.enforcing_consecutive_gateway_failure),
            ("enforcing_consecutive_local_origin_failure", self.enforcing_consecutive_local_origin_failure),
            ("enforcing_success_rate", self.enforcing_success_rate),
            ("enforcing_local_origin_success_rate", self.enforcing_local_origin_success_rate),
            ("failure_percentage_threshold", self.failure_percentage_threshold),
            ("enforcing_failure_percentage", self.enforcing_failure_percentage),
            ("enforcing_failure_percentage_local_origin", self.enforcing_failure_percentage_local_origin),
        ] {
            require(v <= 100, name, "a percentage from 0 to 100", v)?;
        }
        let p = self.healthy_panic_threshold;
        require(
            p.is_finite() && (0.0..=100.0).contains(&p),
            "healthy_panic_threshold",
            "a percentage from 0 to 100",
            p,
        )?;
        if !self.health_check_interval.is_zero() {
            for (name, d) in [
                ("health_check_interval", self.health_check_interval),
                ("health_check_timeout", self.health_check_timeout),
            ] {
                require(d >= Dur::from_millis(1), name, "at least 1ms", d)?;
            }
            for (name, v) in [
                ("health_check_unhealthy_threshold", self.health_check_unhealthy_threshold),
                ("health_check_healthy_threshold", self.health_check_healthy_threshold),
            ] {
                require(v >= 1, name, "at least 1", v)?;
            }
            if self.implementation == Implementation::Grpc {
                return Err(impossible(
                    "health_check_interval: gRPC's outlier_detection balancer has no active health checks; set it to 0 or use implementation = \"envoy\"".into(),
                ));
            }
        }
        if self.always_eject_one_host && self.envoy_version < EnvoyVersion::V1_28 {
            return Err(impossible(
                "always_eject_one_host came with Envoy 1.31 (PR #34796): use envoy_version = \"1.28\" (1.28 and later)".into(),
            ));
        }
        Ok(())
    }

    fn build(&self, seed: u64) -> EnvoyBreaker {
        EnvoyBreaker::new(self.clone(), seed)
    }

    fn export(&self, lib: Library, input: &ExportInput) -> Option<Result<String>> {
        if !matches!(lib, Library::Envoy | Library::Istio | Library::Grpc) {
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
        Some(match lib {
            Library::Istio => super::outlier::export::destination_rule(input, self),
            Library::Grpc => super::outlier::export::grpc_service_config(input, self),
            _ => super::outlier::export::envoy_cluster(input, self),
        })
    }
}

/// One host's outlier-detection state (the one-host model, see the module documentation).
#[derive(Clone, Debug)]
pub struct EnvoyBreaker {
    cfg: EnvoyConfig,
    phase: Phase,
    consecutive: u64,
    backoff: u64,
    ejected_at: SimTime,
    next_tick: SimTime,
    /// Draws the enforcement of a detection when it is neither 0 nor 100 %.
    rng: Rng,
}

impl EnvoyBreaker {
    /// A host in rotation; the interval timer's first tick is one interval after time zero.
    pub fn new(cfg: EnvoyConfig, seed: u64) -> EnvoyBreaker {
        let next_tick = SimTime::ZERO + cfg.interval;
        EnvoyBreaker {
            cfg,
            phase: Phase::new(),
            consecutive: 0,
            backoff: 0,
            ejected_at: SimTime::ZERO,
            next_tick,
            rng: rng_from_u64(seed),
        }
    }

    /// The current ejection-time multiplier.
    pub fn multiplier(&self) -> u64 {
        self.backoff
    }

    fn eject_time(&self) -> Dur {
        ejection::time(self.cfg.base_ejection_time, self.cfg.max_ejection_time, self.backoff, Dur::ZERO)
    }

    /// True when the consecutive-5xx rule can eject at all in the one-host model.
    fn detects(&self) -> bool {
        self.cfg.implementation == Implementation::Envoy
            && self.cfg.consecutive_5xx > 0
            && self.cfg.enforcing_consecutive_5xx > 0
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
                    && self.detects()
                    && self.consecutive >= u64::from(self.cfg.consecutive_5xx)
                {
                    let pct = self.cfg.enforcing_consecutive_5xx;
                    if pct >= 100 || unit(&mut self.rng) * 100.0 < f64::from(pct) {
                        self.backoff = ejection::grown(
                            self.cfg.base_ejection_time,
                            self.cfg.max_ejection_time,
                            self.backoff,
                        );
                        self.phase.enter(
                            now,
                            State::Open,
                            "consecutive_5xx",
                            self.evidence_for(now, out),
                            out,
                        );
                        self.ejected_at = now;
                    }
                    // onConsecutiveErrorWorker resets the counter whether or not it ejects.
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

/// The Envoy cluster `outlier_detection` block: the fields the first exporter wrote, then every
/// field that differs from Envoy's default (the panic threshold as the cluster's
/// `common_lb_config`).
pub(super) fn envoy_block(header: &[String], c: &EnvoyConfig) -> String {
    let mut s = String::new();
    commented(&mut s, "#", header);
    let _ = writeln!(s, "outlier_detection:");
    let _ = writeln!(s, "  consecutive_5xx: {}", c.consecutive_5xx);
    let _ = writeln!(s, "  interval: {}", proto_duration(c.interval));
    let _ = writeln!(s, "  base_ejection_time: {}", proto_duration(c.base_ejection_time));
    let _ = writeln!(s, "  max_ejection_time: {}", proto_duration(c.max_ejection_time));
    let _ = writeln!(s, "  enforcing_consecutive_5xx: {}", c.enforcing_consecutive_5xx);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{C, Ev::*, O, drive};

    fn fails(t: u64, n: usize) -> Vec<(u64, crate::policy::testkit::Ev)> {
        (0..n).flat_map(|_| [(t, A), (t, F(1))]).collect()
    }

    fn breaker(cfg: EnvoyConfig) -> EnvoyBreaker {
        EnvoyBreaker::new(cfg, 0)
    }

    #[test]
    fn ejection_returns_at_the_first_tick_after_the_time_is_up() {
        let mut b = breaker(EnvoyConfig::default());
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
        let mut b = breaker(EnvoyConfig::default());
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
        let mut b = breaker(cfg);
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

    #[test]
    fn the_one_host_model_ejects_only_when_its_rule_is_on_and_enforced() {
        for cfg in [
            EnvoyConfig { consecutive_5xx: 0, ..EnvoyConfig::default() },
            EnvoyConfig { enforcing_consecutive_5xx: 0, ..EnvoyConfig::default() },
            grpc(),
        ] {
            let mut b = breaker(cfg);
            assert!(drive(&mut b, &fails(0, 20)).tr.is_empty());
        }
        // At 50 %, about half the detections eject; a detection resets the counter either way.
        let mut b = breaker(EnvoyConfig { enforcing_consecutive_5xx: 50, ..EnvoyConfig::default() });
        let mut ejections = 0;
        for k in 0..200u64 {
            let t = k * 100_000;
            let r = drive(&mut b, &fails(t, 5));
            ejections += r.tr.len();
            drive(&mut b, &[(t + 99_000, Tick)]);
            if b.state() == State::Open {
                drive(&mut b, &[(t + 99_500, Tick)]);
            }
        }
        assert!((70..=130).contains(&ejections), "{ejections}");
    }

    #[test]
    fn presets_validate_and_differ_where_istio_and_grpc_do() {
        let i = istio();
        assert_eq!(
            (i.enforcing_success_rate, i.healthy_panic_threshold, i.consecutive_gateway_failure),
            (0, 0.0, 0)
        );
        assert_eq!(grpc().implementation, Implementation::Grpc);
        for c in [EnvoyConfig::default(), istio(), grpc()] {
            c.validate().unwrap();
        }
        let bad = EnvoyConfig { max_ejection_percent: 101, ..EnvoyConfig::default() };
        assert!(
            bad.validate().unwrap_err().to_string().contains("`max_ejection_percent`: expected a percentage")
        );
        let bad = EnvoyConfig {
            always_eject_one_host: true,
            envoy_version: EnvoyVersion::V1_26,
            ..EnvoyConfig::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("PR #34796"));
    }
}
