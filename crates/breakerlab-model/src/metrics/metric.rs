//! The metrics of a run, as one enum: each with its column name in summary.csv, its unit,
//! whether it needs ground truth, and the other names a user may write for it. Scoring, the
//! summary columns, objectives and constraints all address metrics through [`Metric`].

/// The unit a metric is expressed in.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds (`*_ms`).
    Millis,
    /// Seconds (`*_s`).
    Seconds,
    /// A count, ratio or other plain number.
    Plain,
}

macro_rules! metrics {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $unit:ident, truth: $truth:literal, aliases: [$($alias:literal),*]; )*
     @pool $( $(#[$pdoc:meta])* $pvariant:ident = $pname:literal, $punit:ident; )*) => {
        /// One metric of a run, in summary.csv column order (docs/outputs.md "Metrics": the main
        /// table, then the extras), then a pool's scores (`pool.*`, columns of pool scenarios
        /// only).
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric {
            $( $(#[$doc])* $variant, )*
            $( $(#[$pdoc])* $pvariant, )*
        }

        impl Metric {
            /// Every metric every run has, in summary.csv column order.
            pub const ALL: &'static [Metric] = &[$(Metric::$variant),*];

            /// Every such metric's column name, in summary.csv column order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// A pool's scores, in summary.csv column order after the others: columns of the
            /// runs and sweeps whose scenarios have a pool of hosts.
            pub const POOL: &'static [Metric] = &[$(Metric::$pvariant),*];

            /// The column name in summary.csv, e.g. `detection_delay_mean_s`.
            pub const fn name(self) -> &'static str {
                match self { $( Metric::$variant => $name, )* $( Metric::$pvariant => $pname, )* }
            }

            /// The unit its values are in.
            pub const fn unit(self) -> Unit {
                match self { $( Metric::$variant => Unit::$unit, )* $( Metric::$pvariant => Unit::$punit, )* }
            }

            /// True when the metric means nothing without ground truth (incident windows): it is
            /// then an empty cell. A pool's scores read the pool's own incidents.
            pub const fn needs_ground_truth(self) -> bool {
                match self { $( Metric::$variant => $truth, )* $( Metric::$pvariant => false, )* }
            }

            /// Other names accepted for it in objectives and constraints (`p99_latency`,
            /// `detection_delay`).
            pub const fn aliases(self) -> &'static [&'static str] {
                match self { $( Metric::$variant => &[$($alias),*], )* $( Metric::$pvariant => &[], )* }
            }
        }
    };
}

metrics! {
    /// CLOSED→OPEN outside every `open`/`either` window (+tolerance).
    FalseOpens = "false_opens", Plain, truth: true, aliases: [];
    /// Windows expecting `open`.
    Incidents = "incidents", Plain, truth: true, aliases: [];
    /// `open` windows with no open in time.
    MissedIncidents = "missed_incidents", Plain, truth: true, aliases: [];
    /// Mean detection delay over detected incidents.
    DetectionDelayMeanS = "detection_delay_mean_s", Seconds, truth: true, aliases: ["detection_delay_mean", "detection_delay"];
    /// Nearest-rank p95 of detection delays.
    DetectionDelayP95S = "detection_delay_p95_s", Seconds, truth: true, aliases: ["detection_delay_p95"];
    /// Largest detection delay.
    DetectionDelayMaxS = "detection_delay_max_s", Seconds, truth: true, aliases: ["detection_delay_max"];
    /// Mean time from a detected incident's end until all instances are closed.
    RecoveryLagMeanS = "recovery_lag_mean_s", Seconds, truth: true, aliases: ["recovery_lag_mean", "recovery_lag"];
    /// Re-opens soon after a close, summed over instances.
    Flaps = "flaps", Plain, truth: false, aliases: [];
    /// CLOSED→OPEN transitions.
    OpenEpisodes = "open_episodes", Plain, truth: false, aliases: [];
    /// HALF_OPEN→OPEN transitions.
    ProbeFailures = "probe_failures", Plain, truth: false, aliases: [];
    /// Requests that arrived.
    Requests = "requests", Plain, truth: false, aliases: [];
    /// Attempts sent upstream.
    Attempts = "attempts", Plain, truth: false, aliases: [];
    /// attempts / requests.
    Amplification = "amplification", Plain, truth: false, aliases: [];
    /// Attempts whose verdict was failure.
    WastedQuota = "wasted_quota", Plain, truth: false, aliases: [];
    /// Requests that ended because a breaker rejected them.
    Shed = "shed", Plain, truth: false, aliases: [];
    /// Shed requests rejected while no incident was active.
    ShedHealthy = "shed_healthy", Plain, truth: true, aliases: [];
    /// Requests answered successfully / requests.
    Availability = "availability", Plain, truth: false, aliases: [];
    /// Requests ended with a fallback / requests.
    FallbackRate = "fallback_rate", Plain, truth: false, aliases: [];
    /// User latency p50.
    LatencyP50Ms = "latency_p50_ms", Millis, truth: false, aliases: ["latency_p50", "p50_latency"];
    /// User latency p95.
    LatencyP95Ms = "latency_p95_ms", Millis, truth: false, aliases: ["latency_p95", "p95_latency"];
    /// User latency p99.
    LatencyP99Ms = "latency_p99_ms", Millis, truth: false, aliases: ["latency_p99", "p99_latency"];
    /// Σ weight · metric under the objective.
    Cost = "cost", Plain, truth: false, aliases: [];
    /// Mean detection delay over every `open` incident, a missed one counting as its whole
    /// duration plus the tolerance (so a miss never looks faster than a late detection).
    DetectionDelayWithMissesMeanS = "detection_delay_with_misses_mean_s", Seconds, truth: true, aliases: ["detection_delay_with_misses_mean", "detection_delay_with_misses"];
    /// Requests the dependency itself answered (its success or its error) / requests.
    AnsweredShare = "answered_share", Plain, truth: false, aliases: [];
    /// Requests a breaker refused (error or immediate fallback, not queued) / requests.
    RefusedShare = "refused_share", Plain, truth: false, aliases: [];
    /// Requests the dependency failed and a cached or local fallback answered / requests.
    FallbackShare = "fallback_share", Plain, truth: false, aliases: [];
    /// Requests whose work went to a retry queue / requests.
    DeferredShare = "deferred_share", Plain, truth: false, aliases: [];
    /// User latency p95 of the requests the dependency answered.
    AnsweredLatencyP95Ms = "answered_latency_p95_ms", Millis, truth: false, aliases: ["answered_latency_p95"];
    /// p95 of deferral to completion of the deferred work that completed.
    DeferredDelayP95S = "deferred_delay_p95_s", Seconds, truth: false, aliases: ["deferred_delay_p95"];
    /// Attempts sent as half-open probes.
    Probes = "probes", Plain, truth: false, aliases: [];
    /// Attempts sent as retries.
    Retries = "retries", Plain, truth: false, aliases: [];
    /// Attempts the client saw time out.
    Timeouts = "timeouts", Plain, truth: false, aliases: [];
    /// Breaker rejections.
    Rejections = "rejections", Plain, truth: false, aliases: [];
    /// Units of work deferred to a retry queue.
    Deferred = "deferred", Plain, truth: false, aliases: [];
    /// Deferred units completed by the end.
    DeferredCompleted = "deferred_completed", Plain, truth: false, aliases: [];
    /// Deferred units still pending at the end.
    DeferredPending = "deferred_pending", Plain, truth: false, aliases: [];
    /// Mean deferral-to-completion time of completed deferred units.
    DeferredDelayMeanS = "deferred_delay_mean_s", Seconds, truth: false, aliases: ["deferred_delay_mean", "deferred_delay"];
    /// Time spent OPEN, summed over instances.
    TimeOpenS = "time_open_s", Seconds, truth: false, aliases: ["time_open"];
    /// Retries the client's retry budget refused.
    RetriesRefused = "retries_refused", Plain, truth: false, aliases: [];
    /// Requests answered from a cache.
    FallbackCached = "fallback_cached", Plain, truth: false, aliases: [];
    /// Requests answered by a local fallback.
    FallbackLocal = "fallback_local", Plain, truth: false, aliases: [];
    /// Time the dependency spent above its capacity.
    OverloadedS = "overloaded_s", Seconds, truth: false, aliases: ["overloaded"];
    /// Probes sent per incident expecting `open`.
    ProbesPerIncident = "probes_per_incident", Plain, truth: true, aliases: [];
    /// Attempts per second upstream in the minute after each `open` incident.
    RecoveryLoadRps = "recovery_load_rps", Plain, truth: true, aliases: [];
    /// Tries sent to the next provider after a provider failed the attempt.
    Failovers = "failovers", Plain, truth: false, aliases: [];
    /// Σ price × tries over providers.
    Spend = "spend", Plain, truth: false, aliases: [];
    /// Mean time from a provider's `open` incident start until requests stop trying it first.
    FailoverDelayMeanS = "failover_delay_mean_s", Seconds, truth: false, aliases: ["failover_delay_mean", "failover_delay"];
    @pool
    /// Hosts ejected, summed over clients.
    PoolEjections = "pool.ejections", Plain;
    /// Mean time from an incident's start to each client's first ejection of each host it hits.
    PoolEjectDelayMeanS = "pool.eject_delay_mean_s", Seconds;
    /// The largest of those.
    PoolEjectDelayMaxS = "pool.eject_delay_max_s", Seconds;
    /// (incident, host, client) with no ejection in time.
    PoolEjectionsMissed = "pool.ejections_missed", Plain;
    /// Attempts sent to a host while an incident hit it.
    PoolBadHostRequests = "pool.bad_host_requests", Plain;
    /// Ejections of a host outside every incident hitting it.
    PoolFalseEjections = "pool.false_ejections", Plain;
    /// Host-seconds ejected while healthy, averaged over clients.
    PoolCapacityLostHostS = "pool.capacity_lost_host_s", Seconds;
    /// Entries into panic, summed over clients.
    PoolPanicEpisodes = "pool.panic_episodes", Plain;
    /// Time in panic, summed over clients.
    PoolPanicS = "pool.panic_s", Seconds;
    /// Detections whose enforcement said no.
    PoolDetectionsUnenforced = "pool.detections_unenforced", Plain;
    /// Detections the ejection limit refused.
    PoolDetectionsOverflow = "pool.detections_overflow", Plain;
}

impl Metric {
    /// The metric whose column name is exactly `name` (a pool's scores included).
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.iter().chain(Metric::POOL).copied().find(|m| m.name() == name)
    }

    /// The metric named `name` as a user may write it: its column name or one of its aliases.
    pub fn parse(name: &str) -> Option<Metric> {
        let name = name.trim();
        Metric::ALL
            .iter()
            .chain(Metric::POOL)
            .copied()
            .find(|m| m.name() == name || m.aliases().contains(&name))
    }

    /// True for a pool's scores ([`Metric::POOL`]).
    pub fn is_pool(self) -> bool {
        Metric::POOL.contains(&self)
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_aliases_resolve() {
        for (i, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(Metric::ALL.iter().position(|x| x.name() == m.name()), Some(i));
            assert_eq!(Metric::parse(m.name()), Some(*m));
            for a in m.aliases() {
                assert_eq!(Metric::parse(a), Some(*m), "{a}");
            }
            let unit = match m.name() {
                n if n.ends_with("_ms") => Unit::Millis,
                n if n.ends_with("_s") => Unit::Seconds,
                _ => Unit::Plain,
            };
            assert_eq!(m.unit(), unit, "{m}");
        }
        assert_eq!(Metric::parse("p99_latency"), Some(Metric::LatencyP99Ms));
        assert_eq!(Metric::parse("nope"), None);
        assert_eq!(Metric::from_name("p99_latency"), None);
        assert_eq!(Metric::NAMES.len(), Metric::ALL.len());
        // A pool's scores resolve by their column names and are not summary.csv's main columns.
        let pool: Vec<&str> = Metric::POOL.iter().map(|m| m.name()).collect();
        assert_eq!(pool, crate::metrics::pool::PoolScores::COLUMNS);
        assert_eq!(Metric::parse("pool.bad_host_requests"), Some(Metric::PoolBadHostRequests));
        assert!(Metric::PoolPanicS.is_pool() && !Metric::FalseOpens.is_pool());
        assert!(!Metric::NAMES.contains(&"pool.ejections"));
        assert_eq!(Metric::PoolCapacityLostHostS.unit(), Unit::Seconds);
    }
}
