//! The engine's side of a pool of hosts (`[upstream] hosts`): per client instance (sidecar), a
//! load balancer and, when the policy is outlier detection, a detector, with the set of hosts
//! in rotation it allows and whether the pool is in panic. The engine asks [`PoolRun::pick`]
//! for each attempt's host, tells [`PoolRun::finished`] each result and runs
//! [`PoolRun::tick`] on each detector's interval timer; the changes of host state come back as
//! [`HostChange`]s for the recorder, each host of each client a breaker instance numbered
//! `client × hosts + host`.

use crate::metrics::pool::PoolRecorder;
use crate::outcome::OutcomeClass;
use crate::policy::outlier::{Detector, HostChange, in_rotation};
use crate::policy::{Evidence, PolicyConfig, Transition};
use crate::rng::{RunSeed, Stream};
use crate::time::{Dur, SimTime};
use crate::trace::CallTrace;
use crate::upstream::balancer::{Balancer, Ring, Usable};
use crate::upstream::pool::Pool;
use std::sync::Arc;

/// One client instance's view of the pool.
struct Sidecar {
    balancer: Balancer,
    detector: Option<Detector>,
    /// The hosts the balancer may use now (ascending), and whether that is all of them because
    /// the pool is in panic.
    usable: Vec<u16>,
    panic: bool,
    /// The detector's [`Detector::version`] `usable` was computed at.
    seen: u64,
    /// The panic threshold of its policy (percent).
    panic_threshold: f64,
}

/// The pool as the run's clients see it.
pub(super) struct PoolRun {
    hosts: u16,
    sidecars: Vec<Sidecar>,
    /// The consistent-hash ring, for `ring_hash`.
    ring: Option<Ring>,
    /// A replayed pool's log: a first attempt goes to the host it names while that host is in
    /// rotation.
    log: Option<Arc<CallTrace>>,
    /// What the pool scores need, besides the transitions.
    pub(super) record: PoolRecorder,
    /// Changes reported by the detectors, handed to the recorder by the engine.
    pub(super) changes: Vec<HostChange>,
}

impl PoolRun {
    /// The pool of `workload`'s `pool` for `slots` breaker slots, slot `s` running
    /// `policies[s % len]`: a detector per slot whose policy is outlier detection.
    pub(super) fn new(
        pool: &Pool,
        slots: usize,
        policies: &[&PolicyConfig],
        seed: &RunSeed,
        explain: bool,
    ) -> PoolRun {
        let hosts = pool.len();
        let b = pool.balancer;
        let sidecars = (0..slots)
            .map(|s| {
                let policy = policies[s % policies.len()];
                let detector = policy.outlier().map(|cfg| {
                    let mut d = Detector::new(cfg, hosts, seed.seed_for(Stream::Policy, s as u64), explain);
                    d.start_health_checks(&mut |h, at, k| health_check(pool, seed, s as u32, h, at, k));
                    d
                });
                let panic_threshold = policy.outlier().map_or(0.0, |c| c.healthy_panic_threshold);
                Sidecar {
                    balancer: Balancer::new(b.kind, b.choice_count, b.hash_keys, hosts, seed, s as u32),
                    detector,
                    usable: (0..hosts).collect(),
                    panic: false,
                    seen: 0,
                    panic_threshold,
                }
            })
            .collect();
        PoolRun {
            hosts,
            sidecars,
            ring: pool.ring.clone(),
            log: pool.log().cloned(),
            record: PoolRecorder::new(pool, slots),
            changes: Vec::new(),
        }
    }

    /// How many hosts.
    #[inline]
    pub(super) fn hosts(&self) -> u16 {
        self.hosts
    }

    /// True when some slot runs a detector.
    pub(super) fn detects(&self) -> bool {
        self.sidecars.iter().any(|s| s.detector.is_some())
    }

    /// The next time slot `slot`'s detector acts on its own (its interval tick or a health
    /// check's completion), if it has one.
    pub(super) fn deadline(&self, slot: u32) -> Option<SimTime> {
        self.sidecars[slot as usize].detector.as_ref().map(Detector::next_event)
    }

    /// The host attempt `attempt` of `request` from slot `slot` goes to at `now`; `None` when
    /// no host may be used (every host ejected, no panic). A replay's first attempt goes to the
    /// host its log names while that host is in rotation (or the pool in panic); otherwise the
    /// balancer picks among the hosts in rotation.
    pub(super) fn pick(
        &mut self,
        slot: u32,
        now: SimTime,
        seed: &RunSeed,
        request: u64,
        attempt: u32,
    ) -> Option<u16> {
        let sc = &mut self.sidecars[slot as usize];
        let logged = match &self.log {
            Some(log) if attempt == 1 => log.host_of(request).filter(|h| sc.usable.binary_search(h).is_ok()),
            _ => None,
        };
        let host = match logged {
            Some(h) => sc.balancer.assign(h),
            None => {
                let usable = Usable { hosts: &sc.usable, panic: sc.panic };
                sc.balancer.pick(usable, self.ring.as_ref(), seed, request, attempt)?
            }
        };
        self.record.sent(now, host);
        Some(host)
    }

    /// An attempt of slot `slot` to `host` ended at `now` as `class` with status `code`.
    pub(super) fn finished(&mut self, slot: u32, host: u16, now: SimTime, class: OutcomeClass, code: u16) {
        let sc = &mut self.sidecars[slot as usize];
        sc.balancer.finished(host);
        if let Some(d) = &mut sc.detector {
            d.record(now, host, class, code, &mut self.changes);
            self.record.detections(slot, d.take_detections());
            self.refresh(slot, now);
        }
    }

    /// What slot `slot`'s detector has due at `now`: its interval tick, its health checks of
    /// `pool`'s hosts completing (the next ones drawn under `seed`).
    pub(super) fn tick(&mut self, slot: u32, now: SimTime, pool: &Pool, seed: &RunSeed) {
        if let Some(d) = &mut self.sidecars[slot as usize].detector {
            d.advance(now, &mut |h, at, k| health_check(pool, seed, slot, h, at, k), &mut self.changes);
            self.record.detections(slot, d.take_detections());
            self.refresh(slot, now);
        }
    }

    /// Recomputes slot `slot`'s hosts in rotation after its detector changed a host's state,
    /// noting when the pool enters or leaves panic.
    fn refresh(&mut self, slot: u32, now: SimTime) {
        let hosts = self.hosts;
        let sc = &mut self.sidecars[slot as usize];
        let Some(d) = &sc.detector else { return };
        if d.version() == sc.seen {
            return;
        }
        sc.seen = d.version();
        let was = sc.panic;
        sc.panic = in_rotation(d, hosts, sc.panic_threshold, &mut sc.usable);
        if sc.panic != was {
            self.record.panic(now, slot, sc.panic);
        }
    }

    /// The changes reported since the last call, each with its breaker instance (`slot ×
    /// hosts + host`).
    pub(super) fn drain_changes(
        &mut self,
        slot: u32,
    ) -> impl Iterator<Item = (usize, Transition, Evidence)> + '_ {
        let hosts = usize::from(self.hosts);
        self.changes
            .drain(..)
            .map(move |c| (slot as usize * hosts + usize::from(c.host), c.transition, c.evidence))
    }
}

/// Host `host`'s answer to slot `slot`'s `k`-th health check of it, sent at `at`: the host's
/// own answer model at that instant (class, status, latency), drawn from the health-check
/// stream keyed by (check, host, slot), so the requests' answers are untouched.
fn health_check(
    pool: &Pool,
    seed: &RunSeed,
    slot: u32,
    host: u16,
    at: SimTime,
    k: u64,
) -> (OutcomeClass, u16, Dur) {
    let mut rng = seed.draw(Stream::HealthCheck, (k << 16) | u64::from(host), slot);
    let (answer, code) = pool.answer(host, at, &mut rng);
    (answer.class, code, answer.latency)
}
