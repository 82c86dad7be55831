//! The load balancer a client's sidecar runs in front of a pool of hosts: which host one attempt
//! goes to, among the hosts it may use (the healthy ones, or all of them while the pool is in
//! panic, see [`Usable`]). Each client instance has its own [`Balancer`], as each Envoy sidecar
//! has its own.
//!
//! Envoy's algorithms (envoyproxy/envoy, source/extensions/load_balancing_policies/, read at
//! the commit cited in docs/service-mesh.md), unweighted:
//! - `round_robin`: `hosts[index++ % hosts.len()]`, one index per host source (the healthy
//!   hosts, or all hosts in panic), every index starting at the balancer's random seed
//!   (`EdfLoadBalancerBase::seed_`, `RoundRobinLoadBalancer::unweightedHostPick`);
//! - `least_request`: `choice_count` hosts drawn at random (with replacement), the one with the
//!   fewest requests in flight kept, the first drawn on a tie (`LeastRequestLoadBalancer::
//!   unweightedHostPick`; the power of two choices by default);
//! - `random`: one host drawn at random;
//! - `ring_hash`: each request carries a key (one of `hash_keys`, drawn per request); a ring of
//!   [`RING_POINTS`] points per host maps the key to the first point at or after its hash whose
//!   host is usable, which is what Envoy's ring rebuilt over the usable hosts answers (the key
//!   hashed as `mix(key ^ KEY_SALT)`).
//!
//! Every draw comes from `seed.draw(Stream::Balancer, request, attempt)` (the ring key from
//! attempt 0), so every configuration of a sweep draws the same numbers for the same attempt.
//! Pure model: no I/O.

use crate::rng::{Rng, RunSeed, Stream, mix};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Ring points per host (Envoy's `minimum_ring_size` of 1,024 spread over the hosts, at least
/// this many each).
pub const RING_POINTS: usize = 128;

/// Keeps a request key's hash apart from the ring's own points (`mix(host << 32 | i)`).
const KEY_SALT: u64 = 0x9E6C_63D0_876A_5B3B;

/// Which algorithm a balancer runs.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BalancerKind {
    /// Each host in turn (Envoy's default).
    #[default]
    RoundRobin,
    /// The least busy of `choice_count` hosts drawn at random (Istio's default since 1.14).
    LeastRequest,
    /// A host drawn at random.
    Random,
    /// Consistent hashing of a request key (sticky sessions).
    RingHash,
}

impl BalancerKind {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            BalancerKind::RoundRobin => "round_robin",
            BalancerKind::LeastRequest => "least_request",
            BalancerKind::Random => "random",
            BalancerKind::RingHash => "ring_hash",
        }
    }
}

/// The hosts one pick may choose from, and which host source they are (its round-robin index).
#[derive(Copy, Clone, Debug)]
pub struct Usable<'a> {
    /// Host numbers, ascending.
    pub hosts: &'a [u16],
    /// True when these are all the hosts because the pool is in panic.
    pub panic: bool,
}

/// The consistent-hash ring of a pool: `(point, host)` sorted by point. Shared by every
/// balancer of the pool (it depends on the host count only).
#[derive(Clone, Debug)]
pub struct Ring {
    points: Vec<(u64, u16)>,
}

impl Ring {
    /// The ring of `hosts` hosts: [`RING_POINTS`] points each, at `mix(host << 32 | i)`.
    pub fn new(hosts: u16) -> Ring {
        let mut points: Vec<(u64, u16)> = (0..hosts)
            .flat_map(|h| (0..RING_POINTS as u64).map(move |i| (mix((u64::from(h) << 32) | i), h)))
            .collect();
        points.sort_unstable();
        Ring { points }
    }

    /// The first usable host at or after `hash` on the ring (wrapping), `None` when no host is
    /// usable. `usable` is a bit set over hosts.
    fn host_for(&self, hash: u64, usable: &dyn Fn(u16) -> bool) -> Option<u16> {
        let start = self.points.partition_point(|p| p.0 < hash);
        let n = self.points.len();
        (0..n).map(|k| self.points[(start + k) % n].1).find(|h| usable(*h))
    }
}

/// One sidecar's balancer: its algorithm, its round-robin indices and the requests it has in
/// flight to each host.
#[derive(Clone, Debug)]
pub struct Balancer {
    kind: BalancerKind,
    choice_count: u32,
    hash_keys: u64,
    /// Round-robin index of the healthy-host source, then of the all-host source (panic).
    rr: [u64; 2],
    /// Requests in flight to each host, from this sidecar.
    active: Vec<u32>,
}

impl Balancer {
    /// The balancer of client instance `instance` over `hosts` hosts; its round-robin indices
    /// start at a draw of `seed.draw(Stream::Balancer, u64::MAX - instance, 0)`, as Envoy seeds
    /// each balancer at random.
    pub fn new(
        kind: BalancerKind,
        choice_count: u32,
        hash_keys: u64,
        hosts: u16,
        seed: &RunSeed,
        instance: u32,
    ) -> Balancer {
        let start = seed.draw(Stream::Balancer, u64::MAX - u64::from(instance), 0).next_u64() >> 1;
        Balancer {
            kind,
            choice_count: choice_count.max(1),
            hash_keys: hash_keys.max(1),
            rr: [start; 2],
            active: vec![0; usize::from(hosts)],
        }
    }

    /// The host attempt `attempt` of `request` goes to, among `usable`; `None` when there is
    /// none. Counts the request in flight to the host chosen ([`Balancer::finished`] takes it
    /// off).
    pub fn pick(
        &mut self,
        usable: Usable<'_>,
        ring: Option<&Ring>,
        seed: &RunSeed,
        request: u64,
        attempt: u32,
    ) -> Option<u16> {
        let hosts = usable.hosts;
        if hosts.is_empty() {
            return None;
        }
        let n = hosts.len() as u64;
        let host = match self.kind {
            BalancerKind::RoundRobin => {
                let index = &mut self.rr[usize::from(usable.panic)];
                let h = hosts[(*index % n) as usize];
                *index = index.wrapping_add(1);
                h
            }
            BalancerKind::Random => hosts[(draws(seed, request, attempt).next_u64() % n) as usize],
            BalancerKind::LeastRequest => {
                let mut rng = draws(seed, request, attempt);
                let mut best = hosts[(rng.next_u64() % n) as usize];
                for _ in 1..self.choice_count {
                    let h = hosts[(rng.next_u64() % n) as usize];
                    if self.active[usize::from(h)] < self.active[usize::from(best)] {
                        best = h;
                    }
                }
                best
            }
            BalancerKind::RingHash => {
                let key = seed.draw(Stream::Balancer, request, 0).next_u64() % self.hash_keys;
                let usable_host = |h: u16| hosts.binary_search(&h).is_ok();
                ring?.host_for(mix(key ^ KEY_SALT), &usable_host)?
            }
        };
        self.active[usize::from(host)] += 1;
        Some(host)
    }

    /// Counts a request sent to `host` without a pick (a replay's logged host), as
    /// [`Balancer::pick`] counts the host it picks; returns `host`.
    pub fn assign(&mut self, host: u16) -> u16 {
        self.active[usize::from(host)] += 1;
        host
    }

    /// A request to `host` picked by [`Balancer::pick`] (or [`Balancer::assign`]) finished.
    pub fn finished(&mut self, host: u16) {
        let a = &mut self.active[usize::from(host)];
        *a = a.saturating_sub(1);
    }

    /// Requests in flight to `host`.
    #[cfg(test)]
    pub fn active(&self, host: u16) -> u32 {
        self.active[usize::from(host)]
    }
}

/// The generator of one attempt's balancer draws.
fn draws(seed: &RunSeed, request: u64, attempt: u32) -> Rng {
    seed.draw(Stream::Balancer, request, attempt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> RunSeed {
        RunSeed::new(1, "pool", 0)
    }

    fn balancer(kind: BalancerKind, hosts: u16) -> Balancer {
        Balancer::new(kind, 2, 100, hosts, &seed(), 0)
    }

    #[test]
    fn round_robin_takes_each_usable_host_in_turn_with_one_index_per_source() {
        let mut b = balancer(BalancerKind::RoundRobin, 3);
        let all = [0u16, 1, 2];
        let s = seed();
        let picks: Vec<u16> =
            (0..6).map(|r| b.pick(Usable { hosts: &all, panic: false }, None, &s, r, 1).unwrap()).collect();
        let first = picks[0];
        let expected: Vec<u16> = (0..6).map(|k| (first + k) % 3).collect();
        assert_eq!(picks, expected, "each host in turn");
        // Host 1 ejected: the healthy source has two hosts, the same index runs on over them.
        let healthy = [0u16, 2];
        let next = b.pick(Usable { hosts: &healthy, panic: false }, None, &s, 6, 1).unwrap();
        let after = b.pick(Usable { hosts: &healthy, panic: false }, None, &s, 7, 1).unwrap();
        assert_ne!(next, after);
        // Panic uses the all-host source, whose index has not moved.
        let p = b.pick(Usable { hosts: &all, panic: true }, None, &s, 8, 1).unwrap();
        assert_eq!(p, first, "the panic source starts at the seed too");
        assert_eq!(b.active(0) + b.active(1) + b.active(2), 9);
    }

    #[test]
    fn least_request_keeps_the_less_busy_of_two_draws() {
        let mut b = balancer(BalancerKind::LeastRequest, 2);
        let s = seed();
        let hosts = [0u16, 1];
        // Load host 0 with in-flight requests: every pick whose two draws differ takes host 1.
        for _ in 0..5 {
            b.active[0] += 1;
        }
        let mut to_one = 0;
        for r in 0..200 {
            let h = b.pick(Usable { hosts: &hosts, panic: false }, None, &s, r, 1).unwrap();
            b.finished(h);
            to_one += usize::from(h == 1);
        }
        // Both draws hit host 0 a quarter of the time.
        assert!((130..=170).contains(&to_one), "{to_one}");
        assert_eq!(b.active(1), 0);
    }

    #[test]
    fn random_and_ring_hash_draw_from_the_attempt_alone() {
        let s = seed();
        let hosts = [0u16, 1, 2, 3];
        let mut a = balancer(BalancerKind::Random, 4);
        let mut b = balancer(BalancerKind::Random, 4);
        for r in 0..50 {
            let u = Usable { hosts: &hosts, panic: false };
            assert_eq!(a.pick(u, None, &s, r, 1), b.pick(u, None, &s, r, 1));
        }
        let ring = Ring::new(4);
        let mut h = balancer(BalancerKind::RingHash, 4);
        let u = Usable { hosts: &hosts, panic: false };
        let first: Vec<u16> = (0..40).map(|r| h.pick(u, Some(&ring), &s, r, 1).unwrap()).collect();
        let retry: Vec<u16> = (0..40).map(|r| h.pick(u, Some(&ring), &s, r, 2).unwrap()).collect();
        assert_eq!(first, retry, "a request's key sticks to its host");
        // Removing host 2 moves only its keys.
        let without = [0u16, 1, 3];
        let u = Usable { hosts: &without, panic: false };
        for (r, before) in first.iter().enumerate() {
            let after = h.pick(u, Some(&ring), &s, r as u64, 1).unwrap();
            if *before != 2 {
                assert_eq!(after, *before, "request {r}");
            } else {
                assert_ne!(after, 2);
            }
        }
        assert!(first.contains(&2));
        assert_eq!(h.pick(Usable { hosts: &[], panic: false }, Some(&ring), &s, 0, 1), None);
    }
}
