//! One client's outlier detector over a pool of hosts: Envoy's `DetectorImpl` (and gRPC's
//! balancer, [`super::grpc`]) fed each attempt's result with its host, ticking on its interval
//! timer. It reports each host's ejection and return as a state change (closed = in rotation,
//! open = ejected) and every detection, enforced or not, as a [`Detection`].
//!
//! Envoy's rules, from source/common/upstream/outlier_detection_impl.cc at the release tag
//! v1.28.0 (function names and lines as in that file; 1.26's and 1.27's at v1.26.0 and v1.27.0):
//! - `putHttpResponseCode` (:68-95): a 5xx adds one to the host's consecutive-5xx counter, a gateway
//!   error (502, 503, 504) to its gateway counter too (any other 5xx resets the gateway
//!   counter); a rule fires when its counter *equals* its threshold (`++n == threshold`, so a
//!   threshold of 0 is off); any other status resets both; every response counts in the
//!   external success-rate bucket. Without `split_external_local_origin_errors`, a connect
//!   failure is a 503 and a timeout a 504 (`resultToHttpCode`); with it they are local-origin
//!   failures (`localOriginFailure`) and an answered request is a local-origin success.
//! - `onConsecutiveErrorWorker` (:570-609): a host already ejected is left alone, counter included (it goes
//!   on climbing past the threshold, so it cannot fire again before the return resets it);
//!   otherwise `ejectHost`, then the rule's counter back to 0, ejected or not.
//! - `ejectHost` (:472-528): the limit ([`ejection::envoy_may_eject`]); when it allows, the rule's
//!   `enforcing_*` % decides (`enforceEjection`); an unenforced detection is only logged
//!   (`logEject(..., false)`). An ejection draws the jitter and grows the multiplier.
//! - `onIntervalTimer` (:742-776), every `interval` from the start: each ejected host whose
//!   `min(base × multiplier, max) + jitter` has passed since its ejection returns (counters
//!   reset); every bucket is swapped; the success-rate and failure-percentage rules run
//!   (external origin, then local origin); then each host in rotation that returned at least an
//!   interval ago loses one multiplier step (:759-773). Up to 1.27 the step is lost first
//!   thing in the tick, by every host in rotation (`checkHostForUneject`, v1.26.0 :356-361), which is why repeated
//!   failure-percentage ejections never grow (envoy#26758).
//! - `processSuccessRateEjections` (:641-740): nothing when the pool has fewer hosts than both minimums;
//!   hosts in rotation with a rate in the last interval and at least the request volume count;
//!   the success-rate rule ejects below `mean − stdev_factor / 1000 × stdev` (population stdev)
//!   when enough hosts count; the failure-percentage rule ejects at `100 − rate >= threshold`.
//!   Both lists are made before either rule ejects, so a host failing both is ejected twice in
//!   one tick: the second ejection counts once more towards the limit and is never undone (the
//!   guard against it is a debug assertion), as in a release build.

use super::super::envoy::{EnvoyConfig, EnvoyVersion, Implementation};
use super::super::evidence::{Evidence, Test};
use super::super::machine::{State, Transition};
use super::ejection;
use super::health::HealthChecks;
use super::monitor::Monitor;
use crate::outcome::OutcomeClass;
use crate::rng::{Rng, rng_from_u64, unit};
use crate::time::{Dur, SimTime};

/// What detected an outlier (Envoy's `OutlierEjectionType`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `consecutive_5xx`.
    Consecutive5xx,
    /// `consecutive_gateway_failure`.
    ConsecutiveGateway,
    /// `consecutive_local_origin_failure`.
    ConsecutiveLocalOrigin,
    /// The success-rate rule over external-origin results.
    SuccessRate,
    /// The success-rate rule over local-origin results.
    SuccessRateLocalOrigin,
    /// The failure-percentage rule over external-origin results.
    FailurePercentage,
    /// The failure-percentage rule over local-origin results.
    FailurePercentageLocalOrigin,
}

impl Kind {
    /// The name in transitions.csv and the docs (Envoy's event type in snake case).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Consecutive5xx => "consecutive_5xx",
            Kind::ConsecutiveGateway => "consecutive_gateway_failure",
            Kind::ConsecutiveLocalOrigin => "consecutive_local_origin_failure",
            Kind::SuccessRate => "success_rate",
            Kind::SuccessRateLocalOrigin => "success_rate_local_origin",
            Kind::FailurePercentage => "failure_percentage",
            Kind::FailurePercentageLocalOrigin => "failure_percentage_local_origin",
        }
    }
}

/// What came of a detection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The host was ejected (`enforced: true`).
    Ejected,
    /// Its `enforcing_*` draw said no (`enforced: false` in Envoy's event log).
    NotEnforced,
    /// The ejection limit said no (`ejections_overflow`).
    Overflow,
}

/// One detection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    /// When.
    pub at: SimTime,
    /// Which host.
    pub host: u16,
    /// Which rule.
    pub kind: Kind,
    /// What came of it.
    pub outcome: Outcome,
}

/// One host's ejection or return, with what the rule saw.
#[derive(Copy, Clone, Debug)]
pub struct HostChange {
    /// Which host.
    pub host: u16,
    /// closed → open (ejected, reason the rule) or open → closed (`ejection_elapsed`).
    pub transition: Transition,
    /// The rule's evidence (empty unless the run explains).
    pub evidence: Evidence,
}

/// A rule's measure at a detection, for its evidence: a counter against its threshold, or a
/// rate against its limit.
#[derive(Copy, Clone, Debug)]
pub(super) enum Seen {
    /// A consecutive counter.
    Count(u64),
    /// A success or failure percentage and the limit it crossed.
    Percent(f64, f64),
}

/// One client's detector over the pool. See the module documentation.
#[derive(Clone, Debug)]
pub struct Detector {
    pub(super) cfg: EnvoyConfig,
    pub(super) hosts: Vec<Monitor>,
    /// Envoy's `ejections_active_helper_` (gRPC: the addresses ejected).
    pub(super) active: u32,
    next_tick: SimTime,
    pub(super) rng: Rng,
    explain: bool,
    /// One more at every ejection or return.
    version: u64,
    detections: Vec<Detection>,
    /// Active health checks, when configured ([`Detector::start_health_checks`]).
    health: Option<HealthChecks>,
}

impl Detector {
    /// A detector of `cfg` over `hosts` hosts, all in rotation, its first tick one interval
    /// after time zero; `seed` feeds its enforcement and jitter draws; `explain` keeps the
    /// evidence of each change.
    pub fn new(cfg: &EnvoyConfig, hosts: u16, seed: u64, explain: bool) -> Detector {
        Detector {
            cfg: cfg.clone(),
            hosts: vec![Monitor::default(); usize::from(hosts)],
            active: 0,
            next_tick: SimTime::ZERO + cfg.interval,
            rng: rng_from_u64(seed),
            explain,
            version: 0,
            detections: Vec::new(),
            health: None,
        }
    }

    /// Starts the active health checks of the configuration (`health_check_interval` > 0;
    /// nothing otherwise), each check's answer drawn by `draw` (host, sent at, check number →
    /// class, status, latency).
    pub fn start_health_checks(
        &mut self,
        draw: &mut dyn FnMut(u16, SimTime, u64) -> (OutcomeClass, u16, Dur),
    ) {
        let c = &self.cfg;
        if c.health_check_interval.is_zero() {
            return;
        }
        let thresholds = (c.health_check_unhealthy_threshold, c.health_check_healthy_threshold);
        let n = self.hosts.len() as u16;
        self.health =
            Some(HealthChecks::new(n, c.health_check_interval, c.health_check_timeout, thresholds, draw));
    }

    /// The next instant the detector acts on its own: its interval tick or a health check's
    /// completion.
    pub fn next_event(&self) -> SimTime {
        self.health.as_ref().map_or(self.next_tick, |h| h.next_due().min(self.next_tick))
    }

    /// Runs what is due at `now` (the instant [`Detector::next_event`] gave): the interval
    /// tick, then the health checks completing, in host order. A host marked failed by its
    /// checks leaves rotation; with `successful_active_health_check_uneject_host`, a check
    /// completing while its host is not marked failed returns the host if ejected
    /// (`DetectorImpl::initialize`, outlier_detection_impl.cc :311-321 at v1.28.0: the
    /// callback runs after every check, passed or not).
    pub fn advance(
        &mut self,
        now: SimTime,
        draw: &mut dyn FnMut(u16, SimTime, u64) -> (OutcomeClass, u16, Dur),
        out: &mut Vec<HostChange>,
    ) {
        if now == self.next_tick {
            self.tick(now, out);
        }
        let Some(mut health) = self.health.take() else { return };
        if health.next_due() == now {
            let mut completed = Vec::new();
            health.complete(now, draw, &mut |h, changed| completed.push((h, changed)));
            for (h, changed) in completed {
                if changed {
                    self.version += 1;
                }
                let back = self.cfg.successful_active_health_check_uneject_host && !health.failed(h);
                if back && self.hosts[usize::from(h)].ejected {
                    self.uneject(now, h, "active_health_check", out);
                }
            }
        }
        self.health = Some(health);
    }

    /// True when `host` is out of rotation: ejected, or marked failed by its health checks.
    #[inline]
    pub fn out_of_rotation(&self, host: u16) -> bool {
        self.hosts[usize::from(host)].ejected || self.health.as_ref().is_some_and(|h| h.failed(host))
    }

    /// The instant of the next interval tick.
    #[cfg(test)]
    pub fn next_tick(&self) -> SimTime {
        self.next_tick
    }

    /// True when `host` is ejected.
    #[cfg(test)]
    pub fn is_ejected(&self, host: u16) -> bool {
        self.hosts[usize::from(host)].ejected
    }

    /// Changes at every ejection and return: a cached set of hosts in rotation is stale when
    /// this moved.
    #[inline]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// `host`'s ejection-time multiplier.
    #[cfg(test)]
    pub fn multiplier(&self, host: u16) -> u64 {
        self.hosts[usize::from(host)].multiplier
    }

    /// Envoy's count of active ejections (it can exceed the hosts ejected, see the module
    /// documentation).
    #[cfg(test)]
    pub fn active_ejections(&self) -> u32 {
        self.active
    }

    /// Hands out the detections made since the last call.
    pub fn take_detections(&mut self) -> std::vec::Drain<'_, Detection> {
        self.detections.drain(..)
    }

    /// An attempt to `host` ended at `now` as `class` with status `code` (0: a connect
    /// failure; a timeout is a local-origin timeout).
    pub fn record(
        &mut self,
        now: SimTime,
        host: u16,
        class: OutcomeClass,
        code: u16,
        out: &mut Vec<HostChange>,
    ) {
        if self.cfg.implementation == Implementation::Grpc {
            // gRPC counts calls, not status codes: any non-OK status is a failure.
            self.hosts[usize::from(host)].external.add(class == OutcomeClass::Ok);
            return;
        }
        let local_failure = class == OutcomeClass::Timeout || code == crate::upstream::pool::CONNECT_FAILURE;
        if self.cfg.split_external_local_origin_errors {
            if local_failure {
                self.local_origin(now, host, false, out);
            } else {
                self.local_origin(now, host, true, out);
                self.http(now, host, code, out);
            }
        } else {
            let code = match (class, local_failure) {
                (OutcomeClass::Timeout, _) => 504,
                (_, true) => 503,
                _ => code,
            };
            self.http(now, host, code, out);
        }
    }

    /// `putHttpResponseCode`.
    fn http(&mut self, now: SimTime, host: u16, code: u16, out: &mut Vec<HostChange>) {
        let (th_5xx, th_gw) = (self.cfg.consecutive_5xx, self.cfg.consecutive_gateway_failure);
        let m = &mut self.hosts[usize::from(host)];
        let five_xx = (500..=599).contains(&code);
        m.external.add(!five_xx);
        if !five_xx {
            m.consecutive_5xx = 0;
            m.consecutive_gateway = 0;
            return;
        }
        let mut fire_gw = false;
        if matches!(code, 502..=504) {
            m.consecutive_gateway = m.consecutive_gateway.wrapping_add(1);
            fire_gw = m.consecutive_gateway == th_gw;
        } else {
            m.consecutive_gateway = 0;
        }
        m.consecutive_5xx = m.consecutive_5xx.wrapping_add(1);
        let fire_5xx = m.consecutive_5xx == th_5xx;
        let (gw_seen, fxx_seen) = (m.consecutive_gateway, m.consecutive_5xx);
        if fire_gw {
            self.consecutive(now, host, Kind::ConsecutiveGateway, u64::from(gw_seen), out);
        }
        if fire_5xx {
            self.consecutive(now, host, Kind::Consecutive5xx, u64::from(fxx_seen), out);
        }
    }

    /// `localOriginFailure` / `localOriginNoFailure`.
    fn local_origin(&mut self, now: SimTime, host: u16, success: bool, out: &mut Vec<HostChange>) {
        let th = self.cfg.consecutive_local_origin_failure;
        let m = &mut self.hosts[usize::from(host)];
        m.local.add(success);
        if success {
            m.consecutive_local = 0;
            return;
        }
        m.consecutive_local = m.consecutive_local.wrapping_add(1);
        if m.consecutive_local == th {
            let seen = u64::from(m.consecutive_local);
            self.consecutive(now, host, Kind::ConsecutiveLocalOrigin, seen, out);
        }
    }

    /// `onConsecutiveErrorWorker`.
    fn consecutive(&mut self, now: SimTime, host: u16, kind: Kind, seen: u64, out: &mut Vec<HostChange>) {
        if self.hosts[usize::from(host)].ejected {
            return;
        }
        self.eject(now, host, kind, Seen::Count(seen), out);
        let m = &mut self.hosts[usize::from(host)];
        match kind {
            Kind::Consecutive5xx => m.consecutive_5xx = 0,
            Kind::ConsecutiveGateway => m.consecutive_gateway = 0,
            _ => m.consecutive_local = 0,
        }
    }

    /// The `enforcing_*` percentage of `kind`.
    fn enforcing(&self, kind: Kind) -> u32 {
        let c = &self.cfg;
        match kind {
            Kind::Consecutive5xx => c.enforcing_consecutive_5xx,
            Kind::ConsecutiveGateway => c.enforcing_consecutive_gateway_failure,
            Kind::ConsecutiveLocalOrigin => c.enforcing_consecutive_local_origin_failure,
            Kind::SuccessRate => c.enforcing_success_rate,
            Kind::SuccessRateLocalOrigin => c.enforcing_local_origin_success_rate,
            Kind::FailurePercentage => c.enforcing_failure_percentage,
            Kind::FailurePercentageLocalOrigin => c.enforcing_failure_percentage_local_origin,
        }
    }

    /// A draw under percentage `pct` (`runtime featureEnabled`): always at 100, never at 0,
    /// otherwise with one uniform draw.
    pub(super) fn chance(&mut self, pct: u32) -> bool {
        pct >= 100 || (pct > 0 && unit(&mut self.rng) * 100.0 < f64::from(pct))
    }

    /// Envoy's `ejectHost`.
    pub(super) fn eject(
        &mut self,
        now: SimTime,
        host: u16,
        kind: Kind,
        seen: Seen,
        out: &mut Vec<HostChange>,
    ) {
        let c = &self.cfg;
        let n = self.hosts.len() as u16;
        if !ejection::envoy_may_eject(
            c.envoy_version,
            c.always_eject_one_host,
            c.max_ejection_percent,
            self.active,
            n,
        ) {
            self.record_detection(Detection { at: now, host, kind, outcome: Outcome::Overflow });
            return;
        }
        if !self.chance(self.enforcing(kind)) {
            self.record_detection(Detection { at: now, host, kind, outcome: Outcome::NotEnforced });
            return;
        }
        let jitter_ms = self.cfg.max_ejection_time_jitter.micros() / 1000;
        let jitter = if jitter_ms == 0 {
            Dur::ZERO
        } else {
            use rand::Rng as _;
            Dur::from_millis(self.rng.next_u64() % (jitter_ms + 1))
        };
        let (base, max) = (self.cfg.base_ejection_time, self.cfg.max_ejection_time);
        let multiplier = ejection::grown(base, max, self.hosts[usize::from(host)].multiplier);
        self.put_out(now, host, kind, seen, multiplier, jitter, out);
    }

    /// Ejects `host` at `now` for `kind` with its new multiplier and jitter (`eject` and the
    /// ejection half of `ejectHost`; gRPC's "To eject an address"): one more active ejection,
    /// and a state change unless it was already ejected.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put_out(
        &mut self,
        now: SimTime,
        host: u16,
        kind: Kind,
        seen: Seen,
        multiplier: u64,
        jitter: Dur,
        out: &mut Vec<HostChange>,
    ) {
        self.active += 1;
        let again = self.hosts[usize::from(host)].ejected;
        let m = &mut self.hosts[usize::from(host)];
        m.ejected = true;
        m.ejections += 1;
        m.ejected_at = now;
        m.jitter = jitter;
        m.multiplier = multiplier;
        self.detections.push(Detection { at: now, host, kind, outcome: Outcome::Ejected });
        if !again {
            let evidence =
                if self.explain { self.ejection_evidence(host, kind, seen) } else { Evidence::EMPTY };
            self.version += 1;
            let transition =
                Transition { at: now, from: State::Closed, to: State::Open, reason: kind.name() };
            out.push(HostChange { host, transition, evidence });
        }
    }

    /// Notes a detection that did not eject.
    pub(super) fn record_detection(&mut self, d: Detection) {
        self.detections.push(d);
    }

    /// The evidence of an ejection by `kind`, which saw `seen`.
    fn ejection_evidence(&self, host: u16, kind: Kind, seen: Seen) -> Evidence {
        let c = &self.cfg;
        let mut ev = Evidence::EMPTY;
        match (kind, seen) {
            (Kind::Consecutive5xx, Seen::Count(n)) => {
                ev.count(
                    "consecutive_5xx_seen",
                    n,
                    Test::AtLeast,
                    "consecutive_5xx",
                    u64::from(c.consecutive_5xx),
                );
            }
            (Kind::ConsecutiveGateway, Seen::Count(n)) => ev.count(
                "consecutive_gateway_failures_seen",
                n,
                Test::AtLeast,
                "consecutive_gateway_failure",
                u64::from(c.consecutive_gateway_failure),
            ),
            (_, Seen::Count(n)) => ev.count(
                "consecutive_local_origin_failures_seen",
                n,
                Test::AtLeast,
                "consecutive_local_origin_failure",
                u64::from(c.consecutive_local_origin_failure),
            ),
            (Kind::SuccessRate | Kind::SuccessRateLocalOrigin, Seen::Percent(v, limit)) => {
                ev.ratio(
                    "host_success_rate",
                    v / 100.0,
                    Test::Below,
                    "success_rate_threshold",
                    limit / 100.0,
                );
            }
            (_, Seen::Percent(v, limit)) => {
                ev.ratio(
                    "host_failure_rate",
                    v / 100.0,
                    Test::AtLeast,
                    "failure_percentage_threshold",
                    limit / 100.0,
                );
            }
        }
        ev.fact_count("ejection_multiplier", self.hosts[usize::from(host)].multiplier);
        ev.fact_count("ejected_hosts", u64::from(self.active));
        ev
    }

    /// Host `host` returns at `now` for `reason` (`unejectHost`): counters reset.
    pub(super) fn uneject(
        &mut self,
        now: SimTime,
        host: u16,
        reason: &'static str,
        out: &mut Vec<HostChange>,
    ) {
        let evidence = if self.explain { self.return_evidence(now, host, reason) } else { Evidence::EMPTY };
        self.active = self.active.saturating_sub(1);
        let m = &mut self.hosts[usize::from(host)];
        m.ejected = false;
        m.reset_consecutive();
        m.returned_at = Some(now);
        self.version += 1;
        let transition = Transition { at: now, from: State::Open, to: State::Closed, reason };
        out.push(HostChange { host, transition, evidence });
    }

    /// The evidence of a return at `now` for `reason`: the time ejected against the ejection
    /// time, or only the time ejected when a health check brought the host back early.
    fn return_evidence(&self, now: SimTime, host: u16, reason: &str) -> Evidence {
        let m = &self.hosts[usize::from(host)];
        let mut ev = Evidence::EMPTY;
        let elapsed = now.since(m.ejected_at);
        if reason == "ejection_elapsed" {
            ev.time("time_ejected", elapsed, Test::AtLeast, "ejection_time", self.ejection_time(host));
        } else {
            ev.fact_time("time_ejected", elapsed);
        }
        ev.fact_count("ejection_multiplier", m.multiplier);
        ev
    }

    /// How long `host`'s latest ejection lasts.
    pub fn ejection_time(&self, host: u16) -> Dur {
        let m = &self.hosts[usize::from(host)];
        let (base, max) = (self.cfg.base_ejection_time, self.cfg.max_ejection_time);
        match self.cfg.implementation {
            Implementation::Envoy => ejection::time(base, max, m.multiplier, m.jitter),
            Implementation::Grpc => ejection::grpc_time(base, max, m.multiplier),
        }
    }

    /// Runs the interval tick due at `now`.
    pub fn tick(&mut self, now: SimTime, out: &mut Vec<HostChange>) {
        debug_assert_eq!(now, self.next_tick);
        self.next_tick = now + self.cfg.interval;
        match self.cfg.implementation {
            Implementation::Envoy => self.envoy_tick(now, out),
            Implementation::Grpc => self.grpc_tick(now, out),
        }
    }

    /// Envoy's `onIntervalTimer`.
    fn envoy_tick(&mut self, now: SimTime, out: &mut Vec<HostChange>) {
        let old_decay = self.cfg.envoy_version < EnvoyVersion::V1_28;
        for h in 0..self.hosts.len() as u16 {
            let i = usize::from(h);
            if !self.hosts[i].ejected {
                if old_decay {
                    self.hosts[i].multiplier = self.hosts[i].multiplier.saturating_sub(1);
                }
            } else if self.ejection_time(h) <= now.since(self.hosts[i].ejected_at) {
                self.uneject(now, h, "ejection_elapsed", out);
            }
            self.hosts[i].swap_buckets();
        }
        self.success_rate_rules(now, false, out);
        self.success_rate_rules(now, true, out);
        if !old_decay {
            let interval = self.cfg.interval;
            for m in self.hosts.iter_mut().filter(|m| !m.ejected) {
                if m.returned_at.is_some_and(|r| now.since(r) >= interval) {
                    m.multiplier = m.multiplier.saturating_sub(1);
                }
            }
        }
    }

    /// `processSuccessRateEjections` over external (`local` false) or local-origin results.
    fn success_rate_rules(&mut self, now: SimTime, local: bool, out: &mut Vec<HostChange>) {
        let c = &self.cfg;
        let n = self.hosts.len() as u64;
        let (sr_hosts, sr_volume) =
            (u64::from(c.success_rate_minimum_hosts), u64::from(c.success_rate_request_volume));
        let (fp_hosts, fp_volume) =
            (u64::from(c.failure_percentage_minimum_hosts), u64::from(c.failure_percentage_request_volume));
        if n < sr_hosts && n < fp_hosts {
            return;
        }
        let mut valid_sr: Vec<(u16, f64)> = Vec::new();
        let mut valid_fp: Vec<(u16, f64)> = Vec::new();
        for (h, m) in self.hosts.iter().enumerate() {
            if m.ejected {
                continue;
            }
            let acc = if local { &m.local } else { &m.external };
            let Some((rate, volume)) = acc.rate_and_volume() else { continue };
            if volume >= sr_volume {
                valid_sr.push((h as u16, rate));
            }
            if volume >= fp_volume {
                valid_fp.push((h as u16, rate));
            }
        }
        if !valid_sr.is_empty() && valid_sr.len() as u64 >= sr_hosts {
            let factor = f64::from(c.success_rate_stdev_factor) / 1000.0;
            let threshold = super::stats::success_rate_threshold(&valid_sr, factor);
            let kind = if local { Kind::SuccessRateLocalOrigin } else { Kind::SuccessRate };
            for &(h, rate) in &valid_sr {
                if rate < threshold {
                    self.eject(now, h, kind, Seen::Percent(rate, threshold), out);
                }
            }
        }
        if !valid_fp.is_empty() && valid_fp.len() as u64 >= fp_hosts {
            let threshold = f64::from(self.cfg.failure_percentage_threshold);
            let kind = if local { Kind::FailurePercentageLocalOrigin } else { Kind::FailurePercentage };
            for &(h, rate) in &valid_fp {
                if 100.0 - rate >= threshold {
                    self.eject(now, h, kind, Seen::Percent(100.0 - rate, threshold), out);
                }
            }
        }
    }
}
