//! A pool of hosts behind a load balancer (`[upstream] hosts = N`, `[[hosts]]`): each host a
//! dependency of its own (the `[upstream]` baseline, overridden per host), incidents that name
//! the hosts they hit (`hosts = [2]`, `"one"`, `"all"` or a fraction), and the status code an
//! answer carries for an outlier detector (500 by default; an incident's `status`, such as a
//! gateway error 503 or `"connect_failure"`, a local-origin failure).
//!
//! [`Pool::answer`] is pure, as [`Dependency::answer`] is: the engine passes
//! `seed.draw(Stream::Upstream, request, attempt)`, so every configuration of a sweep gets the
//! same answer for the same attempt to the same host. Pure model: no I/O.

use super::balancer::{BalancerKind, Ring};
use super::{Dependency, IncidentSpec, UpstreamSpec};
use crate::outcome::{Answer, OutcomeClass};
use crate::rng::Rng;
use crate::time::{Dur, SimTime};
use crate::trace::CallTrace;
use crate::truth::{Expect, IncidentWindow};
use crate::units::Ratio;
use crate::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::Arc;

/// Most hosts a pool may have.
pub const MAX_HOSTS: u32 = 1_000;

/// The code of an answer that is a local-origin connection failure (no HTTP status: Envoy's
/// `LocalOriginConnectFailed`, seen as a 503 when local and external errors are not split).
pub const CONNECT_FAILURE: u16 = 0;

/// Which hosts of the pool an incident hits.
#[derive(Clone, Debug, PartialEq)]
pub enum HostSelector {
    /// These hosts (0-based).
    List(Vec<u32>),
    /// One host: host 0.
    One,
    /// Every host (the same as leaving `hosts` out).
    All,
    /// The first `round(fraction × hosts)` hosts, at least one.
    Fraction(f64),
}

impl HostSelector {
    /// The hosts it names in a pool of `hosts`, ascending; an error names what is out of range.
    pub fn resolve(&self, hosts: u32) -> Result<Vec<u16>> {
        let all = || (0..hosts as u16).collect::<Vec<u16>>();
        match self {
            HostSelector::All => Ok(all()),
            HostSelector::One => Ok(vec![0]),
            HostSelector::Fraction(f) => {
                let k = ((f * f64::from(hosts)).round() as u32).clamp(1, hosts);
                Ok((0..k as u16).collect())
            }
            HostSelector::List(list) => {
                if list.is_empty() {
                    return Err(Error::invalid("`hosts` lists no host: name at least one, e.g. hosts = [0]"));
                }
                let mut out = Vec::with_capacity(list.len());
                for &h in list {
                    if h >= hosts {
                        return Err(Error::invalid(format!(
                            "`hosts` names host {h}, but the pool has {hosts} host{} (numbered 0 to {})",
                            if hosts == 1 { "" } else { "s" },
                            hosts - 1
                        )));
                    }
                    out.push(h as u16);
                }
                out.sort_unstable();
                out.dedup();
                Ok(out)
            }
        }
    }
}

impl<'de> Deserialize<'de> for HostSelector {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<HostSelector, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            List(Vec<i64>),
            Word(String),
            Number(f64),
        }
        const EXPECTED: &str = "expected a list of host numbers such as [2], \"one\", \"all\" or a fraction of the pool in (0, 1]";
        let raw = Raw::deserialize(d).map_err(|_| serde::de::Error::custom(EXPECTED))?;
        match raw {
            Raw::List(list) => list
                .into_iter()
                .map(|h| {
                    u32::try_from(h)
                        .map_err(|_| serde::de::Error::custom(format!("{EXPECTED}, found host {h}")))
                })
                .collect::<std::result::Result<Vec<u32>, D::Error>>()
                .map(HostSelector::List),
            Raw::Word(w) if w == "one" => Ok(HostSelector::One),
            Raw::Word(w) if w == "all" => Ok(HostSelector::All),
            Raw::Word(w) => Err(serde::de::Error::custom(format!("{EXPECTED}, found {w:?}"))),
            Raw::Number(f) if f > 0.0 && f <= 1.0 => Ok(HostSelector::Fraction(f)),
            Raw::Number(f) => Err(serde::de::Error::custom(format!("{EXPECTED}, found {f}"))),
        }
    }
}

impl Serialize for HostSelector {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            HostSelector::List(l) => l.serialize(s),
            HostSelector::One => s.serialize_str("one"),
            HostSelector::All => s.serialize_str("all"),
            HostSelector::Fraction(f) => s.serialize_f64(*f),
        }
    }
}

/// The status an incident's failing answers carry: an HTTP 5xx code, or a local-origin
/// connection failure ([`CONNECT_FAILURE`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Status(pub u16);

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Status, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Code(i64),
            Word(String),
        }
        const EXPECTED: &str = "expected an HTTP status from 500 to 599 (502, 503 and 504 are gateway errors) or \"connect_failure\"";
        match Raw::deserialize(d).map_err(|_| serde::de::Error::custom(EXPECTED))? {
            Raw::Code(c) if (500..=599).contains(&c) => Ok(Status(c as u16)),
            Raw::Code(c) => Err(serde::de::Error::custom(format!("{EXPECTED}, found {c}"))),
            Raw::Word(w) if w == "connect_failure" => Ok(Status(CONNECT_FAILURE)),
            Raw::Word(w) => Err(serde::de::Error::custom(format!("{EXPECTED}, found {w:?}"))),
        }
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if self.0 == CONNECT_FAILURE { s.serialize_str("connect_failure") } else { s.serialize_u16(self.0) }
    }
}

/// One `[[hosts]]` table: a host whose behaviour differs from the `[upstream]` baseline.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostOverride {
    /// Which host (0-based); without it, the table's position among the `[[hosts]]`.
    pub host: Option<u32>,
    /// Median latency.
    pub p50: Option<Dur>,
    /// 95th-percentile latency.
    pub p95: Option<Dur>,
    /// Probability of a server error when healthy.
    pub error_rate: Option<Ratio>,
    /// Probability of a client error.
    pub client_error_rate: Option<Ratio>,
    /// Probability of a 429.
    pub rate_limited_rate: Option<Ratio>,
}

/// How the hosts are balanced, from `[upstream]` (`balancer`, `choice_count`, `hash_keys`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BalancerSpec {
    /// The algorithm.
    pub kind: BalancerKind,
    /// least_request: hosts drawn per pick (Envoy's `choice_count`, default 2).
    pub choice_count: u32,
    /// ring_hash: how many distinct request keys there are (default 1,000).
    pub hash_keys: u64,
}

impl BalancerSpec {
    /// The balancer `[upstream]` names: `round_robin` by default, 2 choices, 1,000 keys.
    pub fn of(upstream: &UpstreamSpec) -> BalancerSpec {
        BalancerSpec {
            kind: upstream.balancer.unwrap_or_default(),
            choice_count: upstream.choice_count.unwrap_or(2),
            hash_keys: upstream.hash_keys.unwrap_or(1_000),
        }
    }
}

impl Default for BalancerSpec {
    /// Round robin, Envoy's default.
    fn default() -> BalancerSpec {
        BalancerSpec::of(&UpstreamSpec::default())
    }
}

/// The pool of a scenario, validated: every host's baseline and the balancer.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolSpec {
    /// Each host's baseline, host 0 first.
    pub hosts: Vec<UpstreamSpec>,
    /// The balancer every client runs.
    pub balancer: BalancerSpec,
}

impl PoolSpec {
    /// The pool of `[upstream]` (which has `hosts`) with the `[[hosts]]` overrides; an error
    /// names the `[[hosts]]` entry (1-based) and the field.
    pub fn new(upstream: &UpstreamSpec, overrides: &[HostOverride]) -> Result<PoolSpec> {
        let n = match upstream.hosts {
            Some(n) => n,
            None => overrides.len() as u32,
        };
        if n == 0 || n > MAX_HOSTS {
            return Err(Error::invalid(format!("`hosts` must be from 1 to {MAX_HOSTS}, found {n}")));
        }
        let mut base = upstream.clone();
        base.hosts = None;
        base.balancer = None;
        base.choice_count = None;
        base.hash_keys = None;
        let mut hosts = vec![base; n as usize];
        let mut seen = vec![false; n as usize];
        for (i, o) in overrides.iter().enumerate() {
            let entry = || format!("[[hosts]] #{}", i + 1);
            let h = o.host.unwrap_or(i as u32);
            if h >= n {
                return Err(Error::invalid(format!(
                    "{}: host {h} is not in the pool of {n} (numbered 0 to {})",
                    entry(),
                    n - 1
                )));
            }
            if std::mem::replace(&mut seen[h as usize], true) {
                return Err(Error::invalid(format!("{}: host {h} is described twice", entry())));
            }
            let spec = &mut hosts[h as usize];
            if let Some(v) = o.p50 {
                spec.p50 = v;
            }
            if let Some(v) = o.p95 {
                spec.p95 = v;
            }
            if let Some(v) = o.error_rate {
                spec.error_rate = v;
            }
            if let Some(v) = o.client_error_rate {
                spec.client_error_rate = v;
            }
            if let Some(v) = o.rate_limited_rate {
                spec.rate_limited_rate = v;
            }
            spec.validate().map_err(|e| Error::invalid(format!("{} (host {h}): {e}", entry())))?;
        }
        Ok(PoolSpec { hosts, balancer: BalancerSpec::of(upstream) })
    }

    /// How many hosts.
    pub fn len(&self) -> u16 {
        self.hosts.len() as u16
    }

    /// True for a pool without hosts (a validated pool has at least one).
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }
}

/// One incident occurrence with the hosts it hits: the pool's ground truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostWindow {
    /// First instant.
    pub start: SimTime,
    /// First instant after it.
    pub end: SimTime,
    /// The hosts it hits, ascending.
    pub hosts: Vec<u16>,
    /// What a detector should do.
    pub expect: Expect,
}

/// Where a pool's hosts' answers come from.
#[derive(Clone, Debug)]
enum Hosts {
    /// Each host's dependency model (its baseline and the incidents that hit it), with the
    /// status of each of its incidents (in the order given to its dependency).
    Model { dependencies: Vec<Dependency>, statuses: Vec<Vec<Option<Status>>> },
    /// A per-call log naming each call's host (see [`Pool::replay`]).
    Replay(Arc<CallTrace>),
}

/// The pool of one scenario resolved for one horizon.
#[derive(Clone, Debug)]
pub struct Pool {
    /// Where the hosts' answers come from.
    hosts: Hosts,
    /// The balancer every client runs.
    pub balancer: BalancerSpec,
    /// The ring, for `ring_hash`.
    pub ring: Option<Ring>,
    /// Every incident occurrence with its hosts, sorted by start.
    pub windows: Vec<HostWindow>,
}

impl Pool {
    /// Resolves `spec` and `incidents` over `horizon`; errors name the incident.
    pub fn new(spec: &PoolSpec, incidents: &[IncidentSpec], horizon: SimTime) -> Result<Pool> {
        let n = spec.len();
        let mut targets = Vec::with_capacity(incidents.len());
        for (i, inc) in incidents.iter().enumerate() {
            let hosts = match &inc.hosts {
                Some(sel) => sel.resolve(u32::from(n)),
                None => Ok((0..n).collect()),
            };
            targets.push(hosts.map_err(|e| {
                Error::invalid(format!("[[incidents]] #{} ({}): {e}", i + 1, inc.describe()))
            })?);
        }
        let mut hosts = Vec::with_capacity(usize::from(n));
        let mut statuses = Vec::with_capacity(usize::from(n));
        for h in 0..n {
            let mine: Vec<IncidentSpec> = incidents
                .iter()
                .zip(&targets)
                .filter(|(_, t)| t.binary_search(&h).is_ok())
                .map(|(inc, _)| inc.clone())
                .collect();
            statuses.push(mine.iter().map(|inc| inc.status).collect());
            let dep = Dependency::new(&spec.hosts[usize::from(h)], &mine, horizon)
                .map_err(|e| Error::invalid(format!("host {h}: {e}")))?;
            hosts.push(dep);
        }
        let mut windows = Vec::new();
        for (inc, t) in incidents.iter().zip(&targets) {
            let occ = inc.occurrences(horizon, super::MAX_OCCURRENCES)?;
            windows.extend(occ.into_iter().map(|(start, end)| HostWindow {
                start,
                end,
                hosts: t.clone(),
                expect: inc.expect(),
            }));
        }
        windows.sort_by_key(|w| (w.start, w.end));
        let ring = (spec.balancer.kind == BalancerKind::RingHash).then(|| Ring::new(n));
        let hosts = Hosts::Model { dependencies: hosts, statuses };
        Ok(Pool { hosts, balancer: spec.balancer, ring, windows })
    }

    /// The pool of a per-call log that names each call's host ([`CallTrace::hosts`]), behind
    /// `balancer`: host `h` answers from its own logged calls ([`CallTrace::answer_near_host`]),
    /// its ground truth the log's per-host windows. `None` when the log names no hosts.
    pub fn replay(log: &Arc<CallTrace>, balancer: BalancerSpec) -> Option<Pool> {
        let hosts = log.hosts()?;
        let ring = (balancer.kind == BalancerKind::RingHash).then(|| Ring::new(hosts.len()));
        Some(Pool { windows: hosts.windows.clone(), hosts: Hosts::Replay(Arc::clone(log)), balancer, ring })
    }

    /// The log a replayed pool answers from (`None` for a modelled pool).
    pub fn log(&self) -> Option<&Arc<CallTrace>> {
        match &self.hosts {
            Hosts::Replay(log) => Some(log),
            Hosts::Model { .. } => None,
        }
    }

    /// Whether a run of policies that include an outlier detector (`detects`) or not runs this
    /// pool: a modelled pool always; a replayed one when a detector runs or the scenario named
    /// its host column (otherwise the log replays as one dependency, exactly as without hosts).
    pub fn runs(&self, detects: bool) -> bool {
        match &self.hosts {
            Hosts::Model { .. } => true,
            Hosts::Replay(log) => detects || log.hosts().is_some_and(|h| h.explicit),
        }
    }

    /// How many hosts.
    pub fn len(&self) -> u16 {
        match &self.hosts {
            Hosts::Model { dependencies, .. } => dependencies.len() as u16,
            Hosts::Replay(log) => log.hosts().map_or(0, |h| h.len()),
        }
    }

    /// True for a pool without hosts (never, once built).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Host `host`'s answer to an attempt sent at `at`, with its code: 200 for a success, 429,
    /// 400 for a client error, and for a server error the `status` of the latest-starting
    /// incident hitting the host at `at` that has one, else 500. A replayed host answers from
    /// its logged calls nearest `at`.
    pub fn answer(&self, host: u16, at: SimTime, rng: &mut Rng) -> (Answer, u16) {
        let answer = match &self.hosts {
            Hosts::Model { dependencies, .. } => dependencies[usize::from(host)].answer(at, rng),
            Hosts::Replay(log) => log.answer_near_host(host, at, rng),
        };
        (answer, self.code(host, answer.class, at))
    }

    /// The status code of an answer of `class` from `host` to an attempt sent at `at`: 200 for
    /// a success (and a client-side timeout), 429, 400 for a client error, and for a server
    /// error the `status` of the latest-starting incident hitting the host at `at` that has
    /// one, else 500.
    pub fn code(&self, host: u16, class: OutcomeClass, at: SimTime) -> u16 {
        match (class, &self.hosts) {
            (OutcomeClass::Error, Hosts::Model { dependencies, statuses }) => {
                let statuses = &statuses[usize::from(host)];
                let dep = &dependencies[usize::from(host)];
                dep.active_incidents(at).filter_map(|i| statuses[i as usize]).last().map_or(500, |s| s.0)
            }
            _ => Pool::class_code(class),
        }
    }

    /// The status code a replayed answer of `class` carries: 200 for a success (and a
    /// client-side timeout), 429, 400 for a client error, 500 for a server error (a log keeps
    /// each call's class, not its code).
    pub fn class_code(class: OutcomeClass) -> u16 {
        match class {
            OutcomeClass::Ok | OutcomeClass::Timeout => 200,
            OutcomeClass::RateLimited => 429,
            OutcomeClass::ClientError => 400,
            OutcomeClass::Error => 500,
        }
    }

    /// The ground truth for scoring: every occurrence as an incident window, its kind prefixed
    /// with the hosts it hits when they are not the whole pool (`h2:outage`, `h0+h3:slowdown`).
    pub fn ground_truth(&self, incidents: &[IncidentSpec], horizon: SimTime) -> Result<Vec<IncidentWindow>> {
        let n = self.len();
        let mut out = Vec::new();
        for inc in incidents {
            let hosts = match &inc.hosts {
                Some(sel) => sel.resolve(u32::from(n))?,
                None => (0..n).collect(),
            };
            let kind = if hosts.len() == usize::from(n) {
                inc.kind.as_str().to_string()
            } else {
                let names: Vec<String> = hosts.iter().map(|h| format!("h{h}")).collect();
                format!("{}:{}", names.join("+"), inc.kind.as_str())
            };
            for (start, end) in inc.occurrences(horizon, super::MAX_OCCURRENCES)? {
                out.push(IncidentWindow { start, end, kind: kind.clone(), expect: inc.expect() });
            }
        }
        out.sort_by_key(|w| (w.start, w.end));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::rng_from_seed;
    use crate::upstream::IncidentKind;

    fn steady(hosts: u32) -> UpstreamSpec {
        UpstreamSpec {
            p50: Dur::from_millis(100),
            p95: Dur::from_millis(100),
            hosts: Some(hosts),
            ..UpstreamSpec::default()
        }
    }

    #[test]
    fn selectors_resolve_against_the_pool() {
        assert_eq!(HostSelector::List(vec![2, 0, 2]).resolve(3).unwrap(), vec![0, 2]);
        assert_eq!(HostSelector::One.resolve(5).unwrap(), vec![0]);
        assert_eq!(HostSelector::All.resolve(3).unwrap(), vec![0, 1, 2]);
        assert_eq!(HostSelector::Fraction(0.3).resolve(10).unwrap(), vec![0, 1, 2]);
        assert_eq!(HostSelector::Fraction(0.01).resolve(10).unwrap(), vec![0]);
        let err = HostSelector::List(vec![3]).resolve(3).unwrap_err().to_string();
        assert!(err.contains("names host 3, but the pool has 3 hosts (numbered 0 to 2)"), "{err}");
        #[derive(Deserialize, Debug)]
        struct Doc {
            hosts: HostSelector,
        }
        let d: Doc = toml::from_str("hosts = [1, 4]").unwrap();
        assert_eq!(d.hosts, HostSelector::List(vec![1, 4]));
        let d: Doc = toml::from_str("hosts = \"one\"").unwrap();
        assert_eq!(d.hosts, HostSelector::One);
        let d: Doc = toml::from_str("hosts = 0.5").unwrap();
        assert_eq!(d.hosts, HostSelector::Fraction(0.5));
        let err = toml::from_str::<Doc>("hosts = \"two\"").unwrap_err().to_string();
        assert!(err.contains("\"one\", \"all\"") && err.contains("line 1"), "{err}");
        let err = toml::from_str::<Doc>("hosts = 1.5").unwrap_err().to_string();
        assert!(err.contains("fraction"), "{err}");
    }

    #[test]
    fn overrides_change_one_host_and_are_checked() {
        let slow = HostOverride {
            host: Some(2),
            p50: Some(Dur::from_secs(2)),
            p95: Some(Dur::from_secs(4)),
            ..HostOverride::default()
        };
        let spec = PoolSpec::new(&steady(4), std::slice::from_ref(&slow)).unwrap();
        assert_eq!(spec.len(), 4);
        assert_eq!(spec.hosts[2].p50, Dur::from_secs(2));
        assert_eq!(spec.hosts[1].p50, Dur::from_millis(100));
        assert_eq!(spec.hosts[0].hosts, None, "a host's own spec has no pool fields");
        let err = PoolSpec::new(&steady(4), &[slow.clone(), slow]).unwrap_err().to_string();
        assert!(err.contains("[[hosts]] #2: host 2 is described twice"), "{err}");
        let bad = HostOverride { p95: Some(Dur::from_millis(10)), ..HostOverride::default() };
        let err = PoolSpec::new(&steady(2), &[bad]).unwrap_err().to_string();
        assert!(err.contains("[[hosts]] #1 (host 0): `p95` (10ms) must not be shorter than `p50`"), "{err}");
        // Without `hosts`, the [[hosts]] tables are the pool.
        let implicit =
            PoolSpec::new(&UpstreamSpec::default(), &[HostOverride::default(), HostOverride::default()]);
        assert_eq!(implicit.unwrap().len(), 2);
    }

    #[test]
    fn incidents_hit_their_hosts_with_their_status() {
        let mut down = IncidentSpec::new(IncidentKind::Outage, Dur::from_secs(10), Dur::from_secs(10));
        down.hosts = Some(HostSelector::List(vec![1]));
        down.status = Some(Status(503));
        let mut all = IncidentSpec::new(IncidentKind::Outage, Dur::from_secs(30), Dur::from_secs(10));
        all.status = Some(Status(CONNECT_FAILURE));
        let spec = PoolSpec::new(&steady(3), &[]).unwrap();
        let pool = Pool::new(&spec, &[down.clone(), all.clone()], SimTime(60_000_000)).unwrap();
        let at = |h: u16, s: u64| pool.answer(h, SimTime(s * 1_000_000), &mut rng_from_seed(s));
        assert_eq!(at(1, 15).1, 503);
        assert_eq!(at(1, 15).0.class, OutcomeClass::Error);
        assert_eq!(at(0, 15).1, 200);
        assert_eq!(at(2, 35).1, CONNECT_FAILURE);
        assert_eq!(
            at(1, 25),
            (Answer { latency: Dur::from_millis(100), class: OutcomeClass::Ok, retry_after: None }, 200)
        );
        assert_eq!(pool.windows.len(), 2);
        assert_eq!(pool.windows[0].hosts, vec![1]);
        let truth = pool.ground_truth(&[down, all], SimTime(60_000_000)).unwrap();
        let kinds: Vec<&str> = truth.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, vec!["h1:outage", "outage"]);
        let mut far = IncidentSpec::new(IncidentKind::Outage, Dur::ZERO, Dur::from_secs(1));
        far.hosts = Some(HostSelector::List(vec![7]));
        let err = Pool::new(&spec, &[far], SimTime(1)).unwrap_err().to_string();
        assert!(err.contains("[[incidents]] #1 (outage): `hosts` names host 7"), "{err}");
    }
}
