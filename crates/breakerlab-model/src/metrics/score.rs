//! Scoring: turns one run's [`RunRecord`] into [`Metrics`] measured against its ground truth,
//! following the definitions in docs/outputs.md "Metrics", and weighs them into a cost.
//!
//! The precise definitions behind that table (times are integer microseconds; an incident
//! window is `[start, end)` and "covered" means `[start, end + tolerance)`):
//! - `false_opens`: transitions CLOSED→OPEN at a time covered by no window whose expectation is
//!   `open` or `either` (a `stay_closed` window does not excuse an open).
//! - `detection_delay_*`: per `open` incident, 0 if any instance was OPEN just before `start`
//!   (its last transition before `start` entered OPEN); otherwise the first entry into OPEN by
//!   any instance (from CLOSED or HALF_OPEN) at a covered time, minus `start`. None such: the
//!   incident is missed. p95 is the nearest rank `ceil(0.95·n)` of the sorted delays.
//! - `detection_delay_with_misses_mean_s`: the mean over every `open` incident of its delay, a
//!   missed incident counting as `end − start + tolerance` (longer than any delay that still
//!   counts as a detection), so missing an incident never reads as faster than catching it late.
//! - `recovery_lag_mean_s`: over detected `open` incidents, the time from `end` until every
//!   instance is CLOSED at once: 0 if all are CLOSED at `end` (after the transitions at `end`);
//!   else the first later instant at which all are CLOSED; if that never happens, the lag runs to
//!   the run's end (a lower bound, so a breaker that never recovers is not rewarded).
//! - `flaps`: per instance, an entry into OPEN less than `flap_window` after that instance's
//!   latest entry into CLOSED (`open_at − closed_at < flap_window`); at most one flap per entry
//!   into CLOSED (re-opens from HALF_OPEN in the same episode are not counted again). The initial
//!   CLOSED state at time 0 is not an entry. Summed over instances.
//! - `open_episodes`: transitions CLOSED→OPEN (a re-open from HALF_OPEN belongs to the same
//!   episode); `probe_failures`: transitions HALF_OPEN→OPEN. Both summed over instances.
//! - `availability` = requests answered successfully / requests; `fallback_rate` = requests that
//!   ended with a fallback / requests; `amplification` = attempts (every kind) / requests.
//!   No requests: all three empty.
//! - `latency_*_ms`: user latency, from the recorder's histogram (nearest rank, ≤ 0.79% error).
//!   Every request counts, a refused one with its ~0 ms: so these say what callers waited, not
//!   how fast the dependency was.
//! - `answered_share`, `refused_share`, `fallback_share`, `deferred_share`: how requests ended
//!   (see [`Ending`]), each / requests; they sum to 1 when every request ended by the run's end.
//!   `answered_latency_p95_ms` is the p95 of the answered ones only; `deferred_delay_p95_s` the
//!   p95 of deferral to completion of the deferred work that completed.
//! - `shed_healthy`: counted by the recorder at the rejection time, against any window
//!   `[start, end)` (no tolerance, any expectation).
//!
//! Multi-provider routing (`[[providers]]`; all three empty without it):
//! - `spend` = Σ over providers of price × tries sent to it (every kind), summed in file order.
//! - `failovers`: tries sent to the next provider after a provider failed the attempt.
//! - `failover_delay_mean_s`: for each incident window `[start, end)` expecting `open` on a
//!   provider, the time from `start` until requests stop trying that provider first: the first
//!   routing pass (a request attempt's walk over the providers; any client instance) at a time
//!   `t` in `[start, end)` that *passed the provider over* gives `t − start`. A pass passes a
//!   provider over when its breaker refused the call, or when the router ranked it below the
//!   provider that got the first try for a reason other than the random draw (`priority`: it
//!   comes later in the file; `health`: its score is strictly lower). A provider tried first
//!   until the end of the window gives `end − start` (requests kept trying it first for the
//!   whole incident). Mean over all such incidents of all providers.
//! - `provider.<name>.attempts`, `provider.<name>.successes`: tries sent to each provider and
//!   those it answered `ok` ([`Metrics::provider_columns`]; not a [`Metric`]).

use super::metric::Metric;
use super::objective::Objective;
use super::recorder::{Ending, ProviderRecord, RunRecord};
use crate::policy::State;
use crate::time::{Dur, SimTime};
use crate::truth::Expect;

/// Scoring parameters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScoringOptions {
    /// How long after an incident's end a transition still belongs to it (default 30 s).
    pub tolerance: Dur,
    /// An entry into OPEN less than this after an entry into CLOSED is a flap (default 5 min).
    pub flap_window: Dur,
    /// False when the run has no ground truth at all (a bare script, a replay without labels):
    /// the metrics that need it (false opens, incidents, detection, recovery, shed_healthy) are
    /// then empty cells instead of treating every open as false.
    pub ground_truth: bool,
}

impl Default for ScoringOptions {
    fn default() -> ScoringOptions {
        ScoringOptions { tolerance: Dur::from_secs(30), flap_window: Dur::from_secs(300), ground_truth: true }
    }
}

/// Every metric of one run. Counts are integers; metrics that can have no value are `Option`
/// (an empty CSV cell).
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// Whether the run had ground truth; without it the metrics that need it
    /// ([`Metric::needs_ground_truth`]) read as empty.
    pub ground_truth: bool,
    /// CLOSED→OPEN outside every `open`/`either` window (+tolerance).
    pub false_opens: u64,
    /// Windows expecting `open`.
    pub incidents: u64,
    /// `open` windows with no open in time.
    pub missed_incidents: u64,
    /// Mean detection delay over detected incidents, seconds.
    pub detection_delay_mean_s: Option<f64>,
    /// Mean detection delay over every `open` incident, a miss counting as its duration plus the
    /// tolerance, seconds.
    pub detection_delay_with_misses_mean_s: Option<f64>,
    /// Share of requests per [`Ending`] (answered, refused, fallback, deferred), of all
    /// requests; empty without requests.
    pub ended_shares: [Option<f64>; 4],
    /// User latency p95 of the requests the dependency answered, milliseconds.
    pub answered_latency_p95_ms: Option<f64>,
    /// p95 of deferral to completion of completed deferred work, seconds.
    pub deferred_delay_p95_s: Option<f64>,
    /// Nearest-rank p95 of detection delays, seconds.
    pub detection_delay_p95_s: Option<f64>,
    /// Largest detection delay, seconds.
    pub detection_delay_max_s: Option<f64>,
    /// Mean time from a detected incident's end until all instances are closed, seconds.
    pub recovery_lag_mean_s: Option<f64>,
    /// Re-opens soon after a close, summed over instances.
    pub flaps: u64,
    /// CLOSED→OPEN transitions.
    pub open_episodes: u64,
    /// HALF_OPEN→OPEN transitions.
    pub probe_failures: u64,
    /// Requests that arrived.
    pub requests: u64,
    /// Attempts sent upstream (first tries, retries, probes, deferred replays).
    pub attempts: u64,
    /// attempts / requests.
    pub amplification: Option<f64>,
    /// Attempts whose verdict was failure.
    pub wasted_quota: u64,
    /// Requests that ended because a breaker rejected them.
    pub shed: u64,
    /// Shed requests rejected while no incident was active.
    pub shed_healthy: u64,
    /// Requests answered successfully / requests.
    pub availability: Option<f64>,
    /// Requests ended with a fallback / requests.
    pub fallback_rate: Option<f64>,
    /// User latency p50, milliseconds.
    pub latency_p50_ms: Option<f64>,
    /// User latency p95, milliseconds.
    pub latency_p95_ms: Option<f64>,
    /// User latency p99, milliseconds.
    pub latency_p99_ms: Option<f64>,
    /// Σ weight · metric; [`score`] fills it with [`Objective::standard`], [`Metrics::set_cost`]
    /// recomputes it with a sweep's own objective.
    pub cost: f64,
    /// Attempts sent as half-open probes.
    pub probes: u64,
    /// Attempts sent as retries.
    pub retries: u64,
    /// Attempts the client saw time out.
    pub timeouts: u64,
    /// Breaker rejections (each one, first try or retry).
    pub rejections: u64,
    /// Units of work deferred to a retry queue.
    pub deferred: u64,
    /// Deferred units completed by the end.
    pub deferred_completed: u64,
    /// Deferred units still pending at the end.
    pub deferred_pending: u64,
    /// Mean deferral-to-completion time of completed deferred units, seconds.
    pub deferred_delay_mean_s: Option<f64>,
    /// Time spent OPEN, summed over instances, seconds.
    pub time_open_s: f64,
    /// Retries the client's retry budget refused.
    pub retries_refused: u64,
    /// Requests answered from a cache.
    pub fallback_cached: u64,
    /// Requests answered by a local fallback.
    pub fallback_local: u64,
    /// Time the dependency spent above its capacity, seconds (0 without a capacity model).
    pub overloaded_s: f64,
    /// Probes sent per incident expecting `open` (a fleet of process-local breakers sends one
    /// per instance per recovery attempt); empty without such incidents.
    pub probes_per_incident: Option<f64>,
    /// Attempts per second sent upstream in the minute after each `open` incident's end,
    /// averaged over those incidents: the load on a recovering dependency.
    pub recovery_load_rps: Option<f64>,
    /// Tries sent to the next provider after a provider failed the attempt (multi-provider).
    pub failovers: Option<u64>,
    /// Σ price × tries over providers (multi-provider; empty without `[[providers]]`).
    pub spend: Option<f64>,
    /// Mean time from the start of a provider's `open` incident until requests stop trying it
    /// first, seconds (see the module documentation); empty without such incidents.
    pub failover_delay_mean_s: Option<f64>,
    /// Traffic per provider, in file order (empty without `[[providers]]`).
    pub providers: Vec<ProviderTraffic>,
    /// The pool's scores, for a scenario with a pool of hosts (its `pool.*` columns).
    pub pool: Option<super::pool::PoolScores>,
}

/// One provider's traffic in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderTraffic {
    /// The provider's name.
    pub name: String,
    /// Tries sent to it.
    pub attempts: u64,
    /// Tries it answered `ok`.
    pub successes: u64,
}

impl Metrics {
    /// Column names in summary.csv order: [`Metric::NAMES`] (the main table of docs/outputs.md
    /// "Metrics" first, exactly, then the extra columns).
    pub const COLUMNS: &'static [&'static str] = Metric::NAMES;

    /// Prefix of the per-provider columns (`provider.<name>.attempts`, `provider.<name>.successes`).
    pub const PROVIDER_PREFIX: &'static str = "provider.";

    /// The per-provider columns of this run, after [`Metrics::COLUMNS`] in summary.csv:
    /// `provider.<name>.attempts` then `provider.<name>.successes` for each provider in file
    /// order (none without `[[providers]]`).
    pub fn provider_columns(&self) -> Vec<String> {
        let mut columns = Vec::with_capacity(2 * self.providers.len());
        for p in &self.providers {
            columns.push(format!("{}{}.attempts", Self::PROVIDER_PREFIX, p.name));
            columns.push(format!("{}{}.successes", Self::PROVIDER_PREFIX, p.name));
        }
        columns
    }

    /// The columns this run has after [`Metrics::COLUMNS`]: the per-provider ones
    /// ([`Metrics::provider_columns`]), then the pool's (`pool.*`, for a pool of hosts).
    pub fn extra_columns(&self) -> Vec<String> {
        let mut columns = self.provider_columns();
        if self.pool.is_some() {
            columns.extend(super::pool::PoolScores::COLUMNS.iter().map(|c| c.to_string()));
        }
        columns
    }

    /// A per-provider column's value: `None` when `column` is not one, or names a provider this
    /// run does not have.
    fn provider_value(&self, column: &str) -> Option<f64> {
        let rest = column.strip_prefix(Self::PROVIDER_PREFIX)?;
        let (name, what) = rest.rsplit_once('.')?;
        let p = self.providers.iter().find(|p| p.name == name)?;
        match what {
            "attempts" => Some(p.attempts as f64),
            "successes" => Some(p.successes as f64),
            _ => None,
        }
    }

    /// The value of one metric as a float (counts are exact integers). `None` means an empty
    /// cell: the metric has no value in this run, or needs the ground truth the run lacks.
    pub fn get(&self, metric: Metric) -> Option<f64> {
        let count = |n: u64| Some(n as f64);
        if !self.ground_truth && metric.needs_ground_truth() {
            return None;
        }
        match metric {
            Metric::FalseOpens => count(self.false_opens),
            Metric::Incidents => count(self.incidents),
            Metric::MissedIncidents => count(self.missed_incidents),
            Metric::DetectionDelayMeanS => self.detection_delay_mean_s,
            Metric::DetectionDelayWithMissesMeanS => self.detection_delay_with_misses_mean_s,
            Metric::AnsweredShare => self.ended_shares[Ending::Answered as usize],
            Metric::RefusedShare => self.ended_shares[Ending::Refused as usize],
            Metric::FallbackShare => self.ended_shares[Ending::Fallback as usize],
            Metric::DeferredShare => self.ended_shares[Ending::Deferred as usize],
            Metric::AnsweredLatencyP95Ms => self.answered_latency_p95_ms,
            Metric::DeferredDelayP95S => self.deferred_delay_p95_s,
            Metric::DetectionDelayP95S => self.detection_delay_p95_s,
            Metric::DetectionDelayMaxS => self.detection_delay_max_s,
            Metric::RecoveryLagMeanS => self.recovery_lag_mean_s,
            Metric::Flaps => count(self.flaps),
            Metric::OpenEpisodes => count(self.open_episodes),
            Metric::ProbeFailures => count(self.probe_failures),
            Metric::Requests => count(self.requests),
            Metric::Attempts => count(self.attempts),
            Metric::Amplification => self.amplification,
            Metric::WastedQuota => count(self.wasted_quota),
            Metric::Shed => count(self.shed),
            Metric::ShedHealthy => count(self.shed_healthy),
            Metric::Availability => self.availability,
            Metric::FallbackRate => self.fallback_rate,
            Metric::LatencyP50Ms => self.latency_p50_ms,
            Metric::LatencyP95Ms => self.latency_p95_ms,
            Metric::LatencyP99Ms => self.latency_p99_ms,
            Metric::Cost => Some(self.cost),
            Metric::Probes => count(self.probes),
            Metric::Retries => count(self.retries),
            Metric::Timeouts => count(self.timeouts),
            Metric::Rejections => count(self.rejections),
            Metric::Deferred => count(self.deferred),
            Metric::DeferredCompleted => count(self.deferred_completed),
            Metric::DeferredPending => count(self.deferred_pending),
            Metric::DeferredDelayMeanS => self.deferred_delay_mean_s,
            Metric::TimeOpenS => Some(self.time_open_s),
            Metric::RetriesRefused => count(self.retries_refused),
            Metric::FallbackCached => count(self.fallback_cached),
            Metric::FallbackLocal => count(self.fallback_local),
            Metric::OverloadedS => Some(self.overloaded_s),
            Metric::ProbesPerIncident => self.probes_per_incident,
            Metric::RecoveryLoadRps => self.recovery_load_rps,
            Metric::Failovers => self.failovers.map(|n| n as f64),
            Metric::Spend => self.spend,
            Metric::FailoverDelayMeanS => self.failover_delay_mean_s,
            Metric::PoolEjections
            | Metric::PoolEjectDelayMeanS
            | Metric::PoolEjectDelayMaxS
            | Metric::PoolEjectionsMissed
            | Metric::PoolBadHostRequests
            | Metric::PoolFalseEjections
            | Metric::PoolCapacityLostHostS
            | Metric::PoolPanicEpisodes
            | Metric::PoolPanicS
            | Metric::PoolDetectionsUnenforced
            | Metric::PoolDetectionsOverflow => self.pool.as_ref()?.column(metric.name()),
        }
    }

    /// The value of a summary.csv column by name: a metric ([`Metric::NAMES`]) or a per-provider
    /// column ([`Metrics::provider_columns`]); `None` for an empty cell or an unknown column.
    pub fn column(&self, column: &str) -> Option<f64> {
        match Metric::from_name(column) {
            Some(m) => self.get(m),
            None => self.provider_value(column),
        }
    }

    /// The cost of this run under `objective` (Σ weightᵢ · metricᵢ, see [`Objective`]).
    pub fn cost(&self, objective: &Objective) -> f64 {
        objective.cost(|m| self.get(m))
    }

    /// Replaces the stored `cost` with the cost under `objective`.
    pub fn set_cost(&mut self, objective: &Objective) {
        self.cost = self.cost(objective);
    }
}

/// A piecewise-constant yes/no over time: the value after each change, in time order.
struct Changes {
    initial: bool,
    points: Vec<(SimTime, bool)>,
}

impl Changes {
    /// The value just before `t` (after every change at a time `< t`).
    fn before(&self, t: SimTime) -> bool {
        let i = self.points.partition_point(|p| p.0 < t);
        if i == 0 { self.initial } else { self.points[i - 1].1 }
    }
    /// The value at `t` (after every change at a time `<= t`), and the index of the first later
    /// change.
    fn at(&self, t: SimTime) -> (bool, usize) {
        let i = self.points.partition_point(|p| p.0 <= t);
        (if i == 0 { self.initial } else { self.points[i - 1].1 }, i)
    }
}

/// Scores one run against its ground truth; see the module documentation for each definition.
/// `cost` is filled with [`Objective::standard`].
pub fn score(record: &RunRecord, opts: &ScoringOptions) -> Metrics {
    let scan = scan_transitions(record, opts);
    let detection = detect_incidents(record, opts, &scan);
    let Detection { incidents, missed, delays, with_misses, lags } = detection;
    let TransitionScan { false_opens, flaps, open_episodes, probe_failures, .. } = scan;

    let c = &record.counters;
    let per_request = |x: u64| (c.requests > 0).then(|| x as f64 / c.requests as f64);
    let pct_ms = |permille| record.latency.percentile_permille(permille).map(Dur::as_millis_f64);
    let mut m = Metrics {
        ground_truth: opts.ground_truth,
        false_opens,
        incidents,
        missed_incidents: missed,
        detection_delay_mean_s: mean_secs(&delays),
        detection_delay_with_misses_mean_s: mean_secs(&with_misses),
        ended_shares: c.ended.map(per_request),
        answered_latency_p95_ms: record.answered_latency.percentile_permille(950).map(Dur::as_millis_f64),
        deferred_delay_p95_s: record.deferred_delay.percentile_permille(950).map(Dur::as_secs_f64),
        detection_delay_p95_s: nearest_rank(&delays, 95).map(Dur::as_secs_f64),
        detection_delay_max_s: delays.last().map(|d| d.as_secs_f64()),
        recovery_lag_mean_s: mean_secs(&lags),
        flaps,
        open_episodes,
        probe_failures,
        requests: c.requests,
        attempts: c.attempts,
        amplification: per_request(c.attempts),
        wasted_quota: c.attempt_failures,
        shed: c.shed,
        shed_healthy: c.shed_healthy,
        availability: per_request(c.answered_ok),
        fallback_rate: per_request(c.fallbacks),
        latency_p50_ms: pct_ms(500),
        latency_p95_ms: pct_ms(950),
        latency_p99_ms: pct_ms(990),
        cost: 0.0,
        probes: c.probes,
        retries: c.retries,
        timeouts: c.timeouts,
        rejections: c.rejections,
        deferred: c.deferred,
        deferred_completed: c.deferred_completed,
        deferred_pending: record.deferred_pending,
        deferred_delay_mean_s: (c.deferred_completed > 0)
            .then(|| c.deferred_delay_total.as_secs_f64() / c.deferred_completed as f64),
        time_open_s: record.time_in_state.iter().map(|s| s[State::Open.index()].micros()).sum::<u64>() as f64
            / 1e6,
        retries_refused: c.retries_refused,
        fallback_cached: c.fallback_cached,
        fallback_local: c.fallback_local,
        overloaded_s: c.overloaded.as_secs_f64(),
        probes_per_incident: (incidents > 0).then(|| c.probes as f64 / incidents as f64),
        recovery_load_rps: (incidents > 0)
            .then(|| c.recovery_attempts as f64 / (incidents as f64 * super::RECOVERY_WINDOW.as_secs_f64())),
        failovers: (!record.providers.is_empty()).then_some(c.failover_attempts),
        spend: (!record.providers.is_empty())
            .then(|| record.providers.iter().map(|p| p.price * p.attempts as f64).sum()),
        failover_delay_mean_s: mean_secs(&failover_delays(&record.providers)),
        providers: record
            .providers
            .iter()
            .map(|p| ProviderTraffic { name: p.name.clone(), attempts: p.attempts, successes: p.successes })
            .collect(),
        pool: record.pool.as_ref().map(|p| p.score(&record.transitions, record.end, opts.tolerance)),
    };
    m.set_cost(&Objective::standard());
    m
}

/// What the transitions say, read once in time order.
struct TransitionScan {
    false_opens: u64,
    flaps: u64,
    open_episodes: u64,
    probe_failures: u64,
    /// Every entry into OPEN (from CLOSED or HALF_OPEN) by any instance, in time order.
    open_entries: Vec<SimTime>,
    /// Whether any instance is OPEN.
    any_open: Changes,
    /// Whether every instance is CLOSED.
    all_closed: Changes,
}

/// Counts false opens, flaps, episodes and probe failures, and follows the instances' states.
fn scan_transitions(record: &RunRecord, opts: &ScoringOptions) -> TransitionScan {
    let mut transitions: Vec<_> = record.transitions.iter().collect();
    transitions.sort_by_key(|(_, t)| t.at); // already in event order; stable, so a no-op then

    let n = record.instances.max(1);
    let mut states = vec![State::Closed; n];
    let mut last_close: Vec<Option<SimTime>> = vec![None; n];
    let (mut open_count, mut not_closed) = (0usize, 0usize);
    let mut any_open = Changes { initial: false, points: Vec::new() };
    let mut all_closed = Changes { initial: true, points: Vec::new() };
    let mut open_entries: Vec<SimTime> = Vec::new();
    let (mut false_opens, mut flaps, mut open_episodes, mut probe_failures) = (0u64, 0u64, 0u64, 0u64);
    let excuses_open = |at: SimTime| {
        record
            .truth
            .iter()
            .any(|w| matches!(w.expect, Expect::Open | Expect::Either) && w.covers(at, opts.tolerance))
    };

    for (i, t) in transitions {
        let i = *i;
        if i >= states.len() {
            states.resize(i + 1, State::Closed);
            last_close.resize(i + 1, None);
        }
        if t.to == State::Open && t.from != State::Open {
            open_entries.push(t.at);
            if let Some(closed_at) = last_close[i].take()
                && t.at - closed_at < opts.flap_window
            {
                flaps += 1;
            }
        }
        if t.from == State::Closed && t.to == State::Open {
            open_episodes += 1;
            if !excuses_open(t.at) {
                false_opens += 1;
            }
        }
        if t.from == State::HalfOpen && t.to == State::Open {
            probe_failures += 1;
        }
        if t.to == State::Closed && t.from != State::Closed {
            last_close[i] = Some(t.at);
        }
        // Occupancy counts follow the states actually entered.
        let prev = states[i];
        states[i] = t.to;
        let was_any_open = open_count > 0;
        let was_all_closed = not_closed == 0;
        if prev == State::Open {
            open_count -= 1;
        }
        if t.to == State::Open {
            open_count += 1;
        }
        if prev != State::Closed {
            not_closed -= 1;
        }
        if t.to != State::Closed {
            not_closed += 1;
        }
        if was_any_open != (open_count > 0) {
            any_open.points.push((t.at, open_count > 0));
        }
        if was_all_closed != (not_closed == 0) {
            all_closed.points.push((t.at, not_closed == 0));
        }
    }
    TransitionScan { false_opens, flaps, open_episodes, probe_failures, open_entries, any_open, all_closed }
}

/// Detection delays and recovery lags of the `open` incidents.
struct Detection {
    incidents: u64,
    missed: u64,
    /// Delays of the detected incidents, sorted.
    delays: Vec<Dur>,
    /// Every incident's delay, a miss counting as its duration plus the tolerance.
    with_misses: Vec<Dur>,
    lags: Vec<Dur>,
}

/// Matches each `open` incident with the first entry into OPEN in its window (+tolerance) and
/// the first instant every instance is closed again after it.
fn detect_incidents(record: &RunRecord, opts: &ScoringOptions, scan: &TransitionScan) -> Detection {
    let TransitionScan { open_entries, any_open, all_closed, .. } = scan;
    let mut delays: Vec<Dur> = Vec::new();
    let mut lags: Vec<Dur> = Vec::new();
    let mut with_misses: Vec<Dur> = Vec::new();
    let (mut incidents, mut missed) = (0u64, 0u64);
    for w in record.truth.iter().filter(|w| w.expect == Expect::Open) {
        incidents += 1;
        let delay = if any_open.before(w.start) {
            Some(Dur::ZERO)
        } else {
            let k = open_entries.partition_point(|at| *at < w.start);
            open_entries.get(k).filter(|at| w.covers(**at, opts.tolerance)).map(|at| *at - w.start)
        };
        let Some(delay) = delay else {
            missed += 1;
            with_misses.push((w.end - w.start) + opts.tolerance);
            continue;
        };
        delays.push(delay);
        with_misses.push(delay);
        let (closed_at_end, next) = all_closed.at(w.end);
        let lag = if closed_at_end {
            Dur::ZERO
        } else {
            match all_closed.points[next..].iter().find(|p| p.1) {
                Some(p) => p.0 - w.end,
                None => record.end - w.end,
            }
        };
        lags.push(lag);
    }
    delays.sort();
    Detection { incidents, missed, delays, with_misses, lags }
}

/// Each provider's `open` incidents' failover delays, providers in file order: from the start
/// until the first pass that passed the provider over, or the whole window when none did.
fn failover_delays(providers: &[ProviderRecord]) -> Vec<Dur> {
    providers
        .iter()
        .flat_map(|p| p.failovers.iter())
        .map(|&(start, end, failover)| failover.unwrap_or(end) - start)
        .collect()
}

/// Mean in seconds (summed exactly in microseconds), `None` for no values.
fn mean_secs(values: &[Dur]) -> Option<f64> {
    let total: u128 = values.iter().map(|d| u128::from(d.micros())).sum();
    (!values.is_empty()).then(|| total as f64 / values.len() as f64 / 1e6)
}

/// Nearest-rank percentile of sorted values: rank `ceil(pct · n / 100)`, at least 1.
fn nearest_rank(sorted: &[Dur], pct: usize) -> Option<Dur> {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Finish, Recorder, RecorderOptions};
    use crate::policy::Transition;
    use crate::truth::IncidentWindow;
    use State::{Closed, HalfOpen, Open};

    const SEC: u64 = 1_000_000;

    fn w(start_s: u64, end_s: u64, expect: Expect) -> IncidentWindow {
        IncidentWindow {
            start: SimTime(start_s * SEC),
            end: SimTime(end_s * SEC),
            kind: "outage".into(),
            expect,
        }
    }

    /// A record with the given truth and transitions `(instance, at_us, from, to)`, ended at `end_s`.
    fn run(
        instances: usize,
        truth: Vec<IncidentWindow>,
        trs: &[(usize, u64, State, State)],
        end_s: u64,
    ) -> RunRecord {
        let mut r = Recorder::new(RecorderOptions {
            horizon: SimTime(end_s * SEC),
            instances,
            timeline_bin: None,
            truth,
        });
        for &(i, at, from, to) in trs {
            r.transition(i, &Transition { at: SimTime(at), from, to, reason: "test" });
        }
        r.finish(SimTime(end_s * SEC))
    }

    fn opts() -> ScoringOptions {
        ScoringOptions::default()
    }

    #[test]
    fn false_open_at_a_blip_not_during_an_outage() {
        // Blip [100, 110) stay_closed; outage [200, 300) open; tolerance 30 s.
        let rec = run(
            1,
            vec![w(100, 110, Expect::StayClosed), w(200, 300, Expect::Open)],
            &[
                (0, 105 * SEC, Closed, Open),   // in the blip: a false open
                (0, 135 * SEC, Open, HalfOpen), //
                (0, 136 * SEC, HalfOpen, Closed),
                (0, 210 * SEC, Closed, Open), // detection 210 − 200 = 10 s; 210 − 136 = 74 s < 300 s: flap
                (0, 240 * SEC, Open, HalfOpen),
                (0, 241 * SEC, HalfOpen, Open), // probe failure (same episode, not another flap)
                (0, 300 * SEC, Open, HalfOpen),
                (0, 305 * SEC, HalfOpen, Closed), // all closed 5 s after the end: recovery lag 5 s
            ],
            400,
        );
        let m = score(&rec, &opts());
        assert_eq!((m.false_opens, m.incidents, m.missed_incidents), (1, 1, 0));
        assert_eq!(m.detection_delay_mean_s, Some(10.0));
        assert_eq!(m.detection_delay_p95_s, Some(10.0));
        assert_eq!(m.detection_delay_max_s, Some(10.0));
        assert_eq!(m.recovery_lag_mean_s, Some(5.0));
        assert_eq!((m.flaps, m.open_episodes, m.probe_failures), (1, 2, 1));
        // Open 105..135 (30 s) + 210..240 (30 s) + 241..300 (59 s) = 119 s.
        assert_eq!(m.time_open_s, 119.0);
        // Cost with defaults: 1·1 false open + 10/60 delay + 5/120 lag + 0.5·1 flap
        // = 1 + 0.1666… + 0.041666… + 0.5 = 1.708333…
        assert!((m.cost - (1.0 + 10.0 / 60.0 + 5.0 / 120.0 + 0.5)).abs() < 1e-12, "{}", m.cost);
    }

    #[test]
    fn a_miss_counts_as_its_duration_plus_the_tolerance() {
        // Outage A [100, 200) is caught 10 s in; outage B [400, 460) is never caught.
        // Plain mean: 10 s (over the one caught). With misses: (10 + (60 + 30)) / 2 = 50 s.
        // With a 5 s tolerance the miss counts 65 s: (10 + 65) / 2 = 37.5 s.
        let rec = run(
            1,
            vec![w(100, 200, Expect::Open), w(400, 460, Expect::Open)],
            &[(0, 110 * SEC, Closed, Open), (0, 150 * SEC, Open, HalfOpen), (0, 151 * SEC, HalfOpen, Closed)],
            600,
        );
        let m = score(&rec, &opts());
        assert_eq!((m.incidents, m.missed_incidents), (2, 1));
        assert_eq!(m.detection_delay_mean_s, Some(10.0));
        assert_eq!(m.detection_delay_with_misses_mean_s, Some(50.0));
        assert_eq!(m.column("detection_delay_with_misses_mean_s"), Some(50.0));
        let short = ScoringOptions { tolerance: Dur::from_secs(5), ..opts() };
        assert_eq!(score(&rec, &short).detection_delay_with_misses_mean_s, Some(37.5));
        // A miss always weighs more than the latest detection that still counts (229.999999 s).
        let late = run(1, vec![w(100, 200, Expect::Open)], &[(0, 230 * SEC - 1, Closed, Open)], 400);
        let missed = run(1, vec![w(100, 200, Expect::Open)], &[], 400);
        let (late, missed) = (score(&late, &opts()), score(&missed, &opts()));
        assert!(late.detection_delay_with_misses_mean_s < missed.detection_delay_with_misses_mean_s);
        assert!(late.cost < missed.cost);
        // Without ground truth the column is empty.
        let blind = ScoringOptions { ground_truth: false, ..opts() };
        assert_eq!(score(&rec, &blind).get(Metric::DetectionDelayWithMissesMeanS), None);
    }

    #[test]
    fn either_window_excuses_an_open() {
        let rec = run(1, vec![w(100, 200, Expect::Either)], &[(0, 150 * SEC, Closed, Open)], 300);
        let m = score(&rec, &opts());
        assert_eq!((m.false_opens, m.incidents, m.missed_incidents), (0, 0, 0));
        assert_eq!(m.detection_delay_mean_s, None);
    }

    #[test]
    fn tolerance_edge() {
        // Outage [100 s, 200 s), tolerance 30 s: covered until 230 s exclusive.
        let truth = || vec![w(100, 200, Expect::Open)];
        let inside = run(1, truth(), &[(0, 230 * SEC - 1, Closed, Open)], 400);
        let m = score(&inside, &opts());
        assert_eq!((m.false_opens, m.missed_incidents), (0, 0));
        // 230 s − 1 µs − 100 s = 129.999999 s.
        assert_eq!(m.detection_delay_max_s, Some(129.999_999));
        let outside = run(1, truth(), &[(0, 230 * SEC, Closed, Open)], 400);
        let m = score(&outside, &opts());
        assert_eq!((m.false_opens, m.missed_incidents), (1, 1));
        assert_eq!(m.detection_delay_max_s, None);
        assert_eq!(m.recovery_lag_mean_s, None);
        // A custom tolerance of 0: 200 s itself is outside.
        let zero = ScoringOptions { tolerance: Dur::ZERO, ..opts() };
        let edge = run(1, truth(), &[(0, 200 * SEC, Closed, Open)], 400);
        assert_eq!(score(&edge, &zero).missed_incidents, 1);
    }

    #[test]
    fn detection_is_zero_when_already_open() {
        // Opens at 50 s (no window: a false open), still open at 100 s when the outage starts.
        // Half-opens at 205 s and closes at 210 s: lag 210 − 200 = 10 s.
        let rec = run(
            1,
            vec![w(100, 200, Expect::Open)],
            &[(0, 50 * SEC, Closed, Open), (0, 205 * SEC, Open, HalfOpen), (0, 210 * SEC, HalfOpen, Closed)],
            300,
        );
        let m = score(&rec, &opts());
        assert_eq!((m.false_opens, m.missed_incidents), (1, 0));
        assert_eq!(m.detection_delay_mean_s, Some(0.0));
        assert_eq!(m.recovery_lag_mean_s, Some(10.0));
        // Opening exactly at the start is also a delay of 0, and not a false open.
        let at_start = run(1, vec![w(100, 200, Expect::Open)], &[(0, 100 * SEC, Closed, Open)], 300);
        let m = score(&at_start, &opts());
        assert_eq!((m.false_opens, m.detection_delay_max_s), (0, Some(0.0)));
        // Never closes: the lag runs to the run's end, 300 − 200 = 100 s.
        assert_eq!(m.recovery_lag_mean_s, Some(100.0));
    }

    #[test]
    fn missed_incident_and_empty_cells() {
        let rec = run(1, vec![w(100, 200, Expect::Open)], &[], 300);
        let m = score(&rec, &opts());
        assert_eq!((m.incidents, m.missed_incidents, m.false_opens), (1, 1, 0));
        assert_eq!(m.get(Metric::DetectionDelayMeanS), None);
        // The miss counts as its 100 s plus the 30 s tolerance.
        assert_eq!(m.get(Metric::DetectionDelayWithMissesMeanS), Some(130.0));
        assert_eq!(m.get(Metric::RecoveryLagMeanS), None);
        // One missed incident × 10, plus its 130 s of exposure at 1/60 per second.
        assert!((m.cost - (10.0 + 130.0 / 60.0)).abs() < 1e-12, "{}", m.cost);
        // No incidents and no requests: every ratio and delay is an empty cell, counts are 0.
        let m = score(&run(1, vec![], &[], 300), &opts());
        for column in [
            "detection_delay_mean_s",
            "detection_delay_with_misses_mean_s",
            "detection_delay_p95_s",
            "detection_delay_max_s",
            "recovery_lag_mean_s",
            "amplification",
            "availability",
            "fallback_rate",
            "latency_p50_ms",
            "deferred_delay_mean_s",
        ] {
            assert_eq!(m.column(column), None, "{column}");
        }
        assert_eq!(m.get(Metric::Incidents), Some(0.0));
        assert_eq!(m.get(Metric::Cost), Some(0.0));
        assert_eq!(m.column("no_such_metric"), None);
        assert_eq!(Metric::from_name("no_such_metric"), None);
    }

    #[test]
    fn flaps_at_the_window_edge_summed_over_instances() {
        // flap_window 300 s. Both instances close at 100 s. Instance 0 re-opens at 400 s − 1 µs
        // (299.999999 s later: a flap); instance 1 at 400 s (exactly 300 s: not a flap).
        let rec = run(
            2,
            vec![],
            &[
                (0, 10 * SEC, Closed, Open),
                (1, 10 * SEC, Closed, Open),
                (0, 50 * SEC, Open, HalfOpen),
                (1, 50 * SEC, Open, HalfOpen),
                (0, 100 * SEC, HalfOpen, Closed),
                (1, 100 * SEC, HalfOpen, Closed),
                (0, 400 * SEC - 1, Closed, Open),
                (1, 400 * SEC, Closed, Open),
                (0, 420 * SEC, Open, HalfOpen),
                (0, 421 * SEC, HalfOpen, Open), // same episode: not a second flap
            ],
            600,
        );
        let m = score(&rec, &opts());
        assert_eq!(m.flaps, 1);
        assert_eq!((m.open_episodes, m.probe_failures, m.false_opens), (4, 1, 4));
        // A 301 s window makes instance 1's re-open a flap too.
        let wide = ScoringOptions { flap_window: Dur::from_secs(301), ..opts() };
        assert_eq!(score(&rec, &wide).flaps, 2);
    }

    #[test]
    fn several_instances_detection_first_of_any_recovery_all_closed() {
        // Incident A [100, 200): instance 0 opens 110, instance 1 opens 120 -> delay 10 s;
        //   instance 0 closes 205, instance 1 closes 230 -> all closed at 230: lag 30 s.
        // Incident B [300, 400): instance 0 opens 310 and closes 390, instance 1 stays closed
        //   -> delay 10 s; all closed at 400: lag 0.
        // Incident C [500, 600): instance 1 opens exactly at 500 -> delay 0; never
        //   closes before the end at 700 -> lag 700 − 600 = 100 s.
        // Delays sorted [0, 10, 10]: mean 20/3 s, p95 rank ceil(2.85) = 3 -> 10 s, max 10 s.
        // Lags [30, 0, 100]: mean 130/3 s.
        let truth = vec![w(100, 200, Expect::Open), w(300, 400, Expect::Open), w(500, 600, Expect::Open)];
        let rec = run(
            2,
            truth,
            &[
                (0, 110 * SEC, Closed, Open),
                (1, 120 * SEC, Closed, Open),
                (0, 204 * SEC, Open, HalfOpen),
                (0, 205 * SEC, HalfOpen, Closed),
                (1, 229 * SEC, Open, HalfOpen),
                (1, 230 * SEC, HalfOpen, Closed),
                (0, 310 * SEC, Closed, Open),
                (0, 389 * SEC, Open, HalfOpen),
                (0, 390 * SEC, HalfOpen, Closed),
                (1, 500 * SEC, Closed, Open),
            ],
            700,
        );
        let m = score(&rec, &opts());
        assert_eq!((m.incidents, m.missed_incidents, m.false_opens, m.open_episodes), (3, 0, 0, 4));
        assert!((m.detection_delay_mean_s.unwrap() - 20.0 / 3.0).abs() < 1e-12);
        assert_eq!(m.detection_delay_p95_s, Some(10.0));
        assert_eq!(m.detection_delay_max_s, Some(10.0));
        assert!((m.recovery_lag_mean_s.unwrap() - 130.0 / 3.0).abs() < 1e-12);
        // Flaps: instance 0 closed at 205 and re-opened at 310 (105 s later): 1 flap; instance 1
        // closed at 230 and re-opened at 500 (270 s later): 1 flap. Summed: 2.
        assert_eq!(m.flaps, 2);
        // Open time: inst 0 110..204 (94) + 310..389 (79); inst 1 120..229 (109) + 500..700 (200).
        assert_eq!(m.time_open_s, 482.0);
    }

    #[test]
    fn request_ratios_shed_and_latency() {
        let mut r = Recorder::new(RecorderOptions {
            horizon: SimTime(100 * SEC),
            instances: 1,
            timeline_bin: None,
            truth: vec![w(50, 60, Expect::Open)],
        });
        use crate::metrics::AttemptKind;
        use crate::outcome::{OutcomeClass, Verdict};
        // 4 requests, 6 attempts (4 first tries, 1 retry, 1 probe): amplification 1.5.
        // Request 1 succeeds after a failed first try and a retry; request 2 is shed at 10 s
        // (healthy); request 3 is shed at 55 s (during the outage); request 4 succeeds on a probe.
        for t in [1, 10, 55, 70] {
            r.request_arrived(SimTime(t * SEC));
        }
        for (kind, verdict) in [
            (AttemptKind::First, Verdict::Failure),
            (AttemptKind::Retry, Verdict::Success),
            (AttemptKind::First, Verdict::Failure),
            (AttemptKind::First, Verdict::Failure),
            (AttemptKind::First, Verdict::Ignored),
            (AttemptKind::Probe, Verdict::Success),
        ] {
            r.attempt_sent(SimTime(SEC), 0, kind);
            r.attempt_done(SimTime(SEC), 0, OutcomeClass::Error, verdict, Dur::from_millis(5));
        }
        r.request_done(SimTime(SEC), SimTime(SEC + 100_000), Finish::Success, None); // 100 ms
        r.rejected(SimTime(10 * SEC), 0);
        let cached = Finish::Fallback(crate::metrics::FallbackKind::Cached);
        r.request_done(SimTime(10 * SEC), SimTime(10 * SEC), cached, Some(SimTime(10 * SEC))); // 0 ms
        r.rejected(SimTime(55 * SEC), 0);
        r.request_done(SimTime(55 * SEC), SimTime(55 * SEC + 1_000), cached, Some(SimTime(55 * SEC))); // 1 ms
        r.request_done(SimTime(70 * SEC), SimTime(70 * SEC + 20_000), Finish::Success, None); // 20 ms
        let m = score(&r.finish(SimTime(100 * SEC)), &opts());
        assert_eq!((m.requests, m.attempts, m.retries, m.probes), (4, 6, 1, 1));
        assert_eq!(m.amplification, Some(1.5));
        assert_eq!(m.wasted_quota, 3);
        assert_eq!((m.shed, m.shed_healthy, m.rejections), (2, 1, 2));
        assert_eq!(m.availability, Some(0.5));
        assert_eq!(m.fallback_rate, Some(0.5));
        // Latencies {0, 1, 20, 100} ms: p50 rank 2 = 1 ms = 1,000 µs, in the bucket
        // [1,000, 1,008) (125 · 8), reported as its midpoint 1,004 µs (+0.4%); p95 and p99:
        // rank 4 = n, the exact maximum 100 ms.
        assert_eq!(m.latency_p50_ms, Some(1.004));
        assert_eq!(m.latency_p95_ms, Some(100.0));
        assert_eq!(m.latency_p99_ms, Some(100.0));
        // Split: requests 1 and 4 answered by the dependency, 2 and 3 refused (their 0 and 1 ms
        // are not answers): the shares sum to 1, and the answered p95 is 100 ms, not 1 ms.
        assert_eq!(m.ended_shares, [Some(0.5), Some(0.5), Some(0.0), Some(0.0)]);
        let total: f64 =
            [Metric::AnsweredShare, Metric::RefusedShare, Metric::FallbackShare, Metric::DeferredShare]
                .iter()
                .map(|x| m.get(*x).unwrap())
                .sum();
        assert_eq!(total, 1.0);
        assert_eq!(m.answered_latency_p95_ms, Some(100.0));
        assert_eq!(m.deferred_delay_p95_s, None);
        // The outage [50, 60) was never detected: missed.
        assert_eq!(m.missed_incidents, 1);
        // Cost: 10 (missed) + (10 s + 30 s tolerance)/60 for the miss's exposure
        // + 0.01 · 1 shed_healthy + 0.001 · 3 wasted.
        assert!((m.cost - (10.013 + 40.0 / 60.0)).abs() < 1e-12, "{}", m.cost);
    }

    #[test]
    fn latency_percentiles_of_a_known_set() {
        let mut r = Recorder::new(RecorderOptions {
            horizon: SimTime(SEC),
            instances: 1,
            timeline_bin: None,
            truth: vec![],
        });
        // 200 requests with latencies 5 ms, 10 ms, ..., 1000 ms. Nearest rank:
        // p50 = rank 100 = 500 ms; p95 = rank 190 = 950 ms; p99 = rank 198 = 990 ms.
        for k in 1..=200u64 {
            r.request_arrived(SimTime::ZERO);
            r.request_done(SimTime::ZERO, SimTime(k * 5_000), Finish::Success, None);
        }
        let m = score(&r.finish(SimTime(SEC)), &opts());
        for (got, want) in [(m.latency_p50_ms, 500.0), (m.latency_p95_ms, 950.0), (m.latency_p99_ms, 990.0)] {
            let got = got.unwrap();
            assert!((got - want).abs() / want <= 0.01, "{got} vs {want}");
        }
        assert_eq!(m.availability, Some(1.0));
    }

    #[test]
    fn cost_follows_the_objective() {
        let rec = run(1, vec![w(100, 200, Expect::Open)], &[], 300);
        let mut m = score(&rec, &opts());
        assert!((m.cost - (10.0 + 130.0 / 60.0)).abs() < 1e-12, "{}", m.cost);
        m.set_cost(&Objective::new([(Metric::MissedIncidents, 2.0), (Metric::Incidents, 0.5)]));
        assert_eq!(m.cost, 2.5);
        // A metric without a value adds nothing.
        assert_eq!(m.cost(&Objective::new([(Metric::DetectionDelayMeanS, 100.0)])), 0.0);
    }
}
