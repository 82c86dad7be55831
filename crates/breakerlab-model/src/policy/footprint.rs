//! How much memory one breaker of a resolved configuration holds: the rings a family allocates
//! up front (sized by its parameters) plus the samples an exact time window keeps at a given call
//! rate. The resource estimate (`breakerlab`'s limits check) multiplies it by the client
//! instances, so a configuration too large for the machine is refused before any breaker is built.

use super::Policy;
use super::cockatiel::CockatielKind;
use super::registry::FamilyConfig;
use super::resilience4j::SlidingWindowType;
use super::spec::PolicyConfig;
use super::window::Sample;
use crate::time::{Dur, SimTime};
use std::mem::size_of;

/// An upper bound on one bucket of any family's ring (tallies of a few counters and an index);
/// `tests/footprint.rs` checks it against what building each family allocates.
pub const BUCKET_BYTES: u64 = 64;

/// A growable buffer may hold up to twice what it needs after its last doubling.
const GROWTH: f64 = 2.0;

impl PolicyConfig {
    /// True when the breaker can make calls wait in a line of its own with no bound (pybreaker's
    /// `call()` holds a lock for the whole call): if calls arrive faster than one call's
    /// latency lets them through, every later request may end up waiting.
    pub fn queues_calls(&self) -> bool {
        matches!(self.family_config(), FamilyConfig::Pybreaker(c) if c.serialize)
    }

    /// Events one breaker's own timers make in a run of `secs` seconds, beside its calls (the
    /// limits check counts them with the engine's events), and what makes them: an outlier
    /// detector's `interval` ticks (the client's detector and the breaker's own while it ejects)
    /// and its active health checks, one per host of `hosts` every `health_check_interval`;
    /// Hystrix's health snapshots every `health_snapshot_interval` while its window holds the
    /// request volume, which this breaker's `calls` keep up for at most `calls x rolling_window /
    /// request_volume_threshold` seconds, and the window's buckets it sums at each call. `None` for a family whose timers follow its calls (a
    /// cooldown's end: at most one per opening).
    pub fn timer_events(&self, secs: f64, hosts: u64, calls: f64) -> Option<(f64, String)> {
        let per = |d: Dur| d.as_secs_f64().max(1e-6);
        match self.family_config() {
            FamilyConfig::Envoy(c) => {
                let ticks = 2.0 * secs / per(c.interval);
                let checks = if c.health_check_interval.is_zero() {
                    0.0
                } else {
                    hosts.max(1) as f64 * secs / per(c.health_check_interval)
                };
                let what = if checks > ticks {
                    format!(
                        "{checks:.3e} active health checks ({} hosts, one every health_check_interval = {})",
                        hosts.max(1),
                        c.health_check_interval
                    )
                } else {
                    format!("{ticks:.3e} detector ticks (interval = {})", c.interval)
                };
                Some((ticks + checks, what))
            }
            FamilyConfig::Hystrix(c) => {
                let volume = f64::from(c.request_volume_threshold.max(1));
                let active = secs.min(calls * c.rolling_window.as_secs_f64() / volume);
                let snapshots = active / per(c.health_snapshot_interval);
                // Each call's result sums the window's buckets, one per snapshot interval.
                let buckets = (c.rolling_window.micros() / c.health_snapshot_interval.micros().max(1)).max(1);
                let sums = calls * buckets as f64;
                Some((
                    snapshots + sums,
                    format!(
                        "{snapshots:.3e} health snapshots (one every health_snapshot_interval = {} while the \
                         window holds {} calls) and {sums:.3e} bucket sums ({buckets} buckets of rolling_window = \
                         {} summed at each call)",
                        c.health_snapshot_interval, c.request_volume_threshold, c.rolling_window
                    ),
                ))
            }
            _ => None,
        }
    }

    /// Bytes one breaker holds at most when it records `calls_per_sec` results a second.
    pub fn footprint(&self, calls_per_sec: f64) -> u64 {
        let sample = size_of::<Sample>() as u64;
        // Samples of an exact window of length `d`: one per result recorded within it.
        let exact = |d: Dur, bytes: u64| (calls_per_sec * d.as_secs_f64() * GROWTH * bytes as f64) as u64;
        let ring = |n: u64, bytes: u64| n.saturating_mul(bytes);
        let held = match self.family_config() {
            FamilyConfig::Generic(c) => {
                let count = ring(u64::from(c.count_window), sample);
                let time = match (c.time_rules() && !c.time_window.is_zero(), c.buckets) {
                    (false, _) => 0,
                    (true, 0) => exact(c.time_window, sample),
                    (true, n) => ring(u64::from(n), BUCKET_BYTES),
                };
                let failures = if c.window_failures > 0 {
                    exact(c.failure_window, size_of::<SimTime>() as u64)
                } else {
                    0
                };
                count + time + failures
            }
            FamilyConfig::Connector(c) => exact(c.window, sample),
            FamilyConfig::Gate(c) => exact(c.window, size_of::<SimTime>() as u64),
            FamilyConfig::Resilience4j(c) => {
                let closed = match c.sliding_window_type {
                    SlidingWindowType::CountBased => ring(u64::from(c.sliding_window_size), sample),
                    SlidingWindowType::TimeBased => ring(u64::from(c.sliding_window_size), BUCKET_BYTES),
                };
                closed + ring(u64::from(c.permitted_number_of_calls_in_half_open_state), sample)
            }
            FamilyConfig::Hystrix(c) => {
                let snapshots = c.rolling_window.micros() / c.health_snapshot_interval.micros().max(1);
                ring(snapshots.max(1), BUCKET_BYTES)
            }
            FamilyConfig::Opossum(c) => ring(u64::from(c.rolling_count_buckets.max(1)), BUCKET_BYTES),
            FamilyConfig::Cockatiel(c) => match c.breaker {
                CockatielKind::Consecutive => 0,
                CockatielKind::Count => ring(u64::from(c.size.max(1)), size_of::<Option<bool>>() as u64),
                CockatielKind::Sampling => ring(c.sampling_windows().0 as u64, BUCKET_BYTES),
            },
            FamilyConfig::Failsafe(c) => {
                ring(u64::from(c.closed_capacity()) + u64::from(c.half_open_capacity()), sample)
                    + ring(10, BUCKET_BYTES)
            }
            FamilyConfig::Throttle(c) => ring(u64::from(c.buckets.max(1)), BUCKET_BYTES),
            FamilyConfig::Polly(_) => ring(16, BUCKET_BYTES),
            // No breaker, and the families that keep only counters and timers: a fixed size.
            // Named one by one, so a new family must say what it holds.
            FamilyConfig::None(_)
            | FamilyConfig::AiService(_)
            | FamilyConfig::Node(_)
            | FamilyConfig::Pybreaker(_)
            | FamilyConfig::Circuitbreaker(_)
            | FamilyConfig::Gobreaker(_)
            | FamilyConfig::Finagle(_)
            | FamilyConfig::Envoy(_) => 0,
            #[cfg(test)]
            FamilyConfig::Toy(_) => 0,
        };
        (size_of::<Policy>() as u64).saturating_add(held)
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicySpec;

    fn footprint(preset: &str, sets: &[&str], rate: f64) -> u64 {
        let mut s = PolicySpec::new(preset);
        for a in sets {
            let (k, v) = PolicySpec::parse_set(a).unwrap();
            s.overrides.insert(k, v);
        }
        s.resolve().unwrap().footprint(rate)
    }

    #[test]
    fn footprints_grow_with_the_parameters_that_size_them() {
        let small = footprint("windowed", &["count_window=100"], 0.0);
        let large = footprint("windowed", &["count_window=1000000"], 0.0);
        assert!(large > small + 10_000_000, "{small} {large}");
        // An exact time window holds every result of its span: 60 s at 1,000 calls/s.
        let busy = footprint("windowed", &[], 1_000.0);
        let idle = footprint("windowed", &[], 0.0);
        assert!(busy >= idle + 60_000 * 16, "{idle} {busy}");
        // Hystrix keeps one bucket per health snapshot of its rolling window.
        let h = footprint("hystrix", &["rolling_window=30d", "health_snapshot_interval=1ms"], 0.0);
        assert!(h > 2_592_000_000 * 64, "{h}");
        assert!(footprint("consecutive", &[], 1e6) < 4096);
    }
}
