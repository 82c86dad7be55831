//! Scoring: turns one run's [`RunRecord`] into [`Metrics`] measured against its ground truth,
//! following DESIGN.md "Metrics (per run): definitions", and weighs them into a cost.
//!
//! Precise definitions where DESIGN leaves a choice (times are integer microseconds; an incident
//! window is `[start, end)` and "covered" means `[start, end + tolerance)`):
//! - `false_opens`: transitions CLOSED→OPEN at a time covered by no window whose expectation is
//!   `open` or `either` (a `stay_closed` window does not excuse an open).
//! - `detection_delay_*`: per `open` incident, 0 if any instance was OPEN just before `start`
//!   (its last transition before `start` entered OPEN); otherwise the first entry into OPEN by
//!   any instance (from CLOSED or HALF_OPEN) at a covered time, minus `start`. None such: the
//!   incident is missed. p95 is the nearest rank `ceil(0.95·n)` of the sorted delays.
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
//! - `shed_healthy`: counted by the recorder at the rejection time, against any window
//!   `[start, end)` (no tolerance, any expectation).

use super::recorder::RunRecord;
use crate::policy::State;
use crate::time::{Dur, SimTime};
use crate::truth::Expect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Scoring parameters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScoringOptions {
    /// How long after an incident's end a transition still belongs to it (default 30 s).
    pub tolerance: Dur,
    /// An entry into OPEN less than this after an entry into CLOSED is a flap (default 5 min).
    pub flap_window: Dur,
}

impl Default for ScoringOptions {
    fn default() -> ScoringOptions {
        ScoringOptions { tolerance: Dur::from_secs(30), flap_window: Dur::from_secs(300) }
    }
}

/// Every metric of one run. Counts are integers; metrics that can have no value are `Option`
/// (an empty CSV cell).
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics {
    /// CLOSED→OPEN outside every `open`/`either` window (+tolerance).
    pub false_opens: u64,
    /// Windows expecting `open`.
    pub incidents: u64,
    /// `open` windows with no open in time.
    pub missed_incidents: u64,
    /// Mean detection delay over detected incidents, seconds.
    pub detection_delay_mean_s: Option<f64>,
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
    /// Σ weight · metric; [`score`] fills it with [`CostWeights::default`], [`Metrics::set_cost`]
    /// recomputes it with a sweep's own weights.
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
}

impl Metrics {
    /// Column names in summary.csv order: DESIGN's names first, exactly, then the extras.
    pub const COLUMNS: &'static [&'static str] = &[
        "false_opens",
        "incidents",
        "missed_incidents",
        "detection_delay_mean_s",
        "detection_delay_p95_s",
        "detection_delay_max_s",
        "recovery_lag_mean_s",
        "flaps",
        "open_episodes",
        "probe_failures",
        "requests",
        "attempts",
        "amplification",
        "wasted_quota",
        "shed",
        "shed_healthy",
        "availability",
        "fallback_rate",
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "cost",
        "probes",
        "retries",
        "timeouts",
        "rejections",
        "deferred",
        "deferred_completed",
        "deferred_pending",
        "deferred_delay_mean_s",
        "time_open_s",
    ];

    /// True when `column` is one of [`Metrics::COLUMNS`].
    pub fn is_column(column: &str) -> bool {
        Metrics::COLUMNS.contains(&column)
    }

    /// The value of one column as a float (counts are exact integers). `None` means an empty cell:
    /// the metric has no value in this run, or `column` is not a metric name (check with
    /// [`Metrics::is_column`] when the difference matters).
    pub fn get(&self, column: &str) -> Option<f64> {
        let count = |n: u64| Some(n as f64);
        match column {
            "false_opens" => count(self.false_opens),
            "incidents" => count(self.incidents),
            "missed_incidents" => count(self.missed_incidents),
            "detection_delay_mean_s" => self.detection_delay_mean_s,
            "detection_delay_p95_s" => self.detection_delay_p95_s,
            "detection_delay_max_s" => self.detection_delay_max_s,
            "recovery_lag_mean_s" => self.recovery_lag_mean_s,
            "flaps" => count(self.flaps),
            "open_episodes" => count(self.open_episodes),
            "probe_failures" => count(self.probe_failures),
            "requests" => count(self.requests),
            "attempts" => count(self.attempts),
            "amplification" => self.amplification,
            "wasted_quota" => count(self.wasted_quota),
            "shed" => count(self.shed),
            "shed_healthy" => count(self.shed_healthy),
            "availability" => self.availability,
            "fallback_rate" => self.fallback_rate,
            "latency_p50_ms" => self.latency_p50_ms,
            "latency_p95_ms" => self.latency_p95_ms,
            "latency_p99_ms" => self.latency_p99_ms,
            "cost" => Some(self.cost),
            "probes" => count(self.probes),
            "retries" => count(self.retries),
            "timeouts" => count(self.timeouts),
            "rejections" => count(self.rejections),
            "deferred" => count(self.deferred),
            "deferred_completed" => count(self.deferred_completed),
            "deferred_pending" => count(self.deferred_pending),
            "deferred_delay_mean_s" => self.deferred_delay_mean_s,
            "time_open_s" => Some(self.time_open_s),
            _ => None,
        }
    }

    /// Σ weightᵢ · metricᵢ over the weighted columns, summed in column-name order (so the float
    /// result is reproducible). A metric with no value (e.g. no detection delay when there were
    /// no incidents) contributes 0: a missed incident is priced by `missed_incidents` instead.
    pub fn cost(&self, weights: &CostWeights) -> f64 {
        weights.0.iter().map(|(column, w)| w * self.get(column).unwrap_or(0.0)).sum()
    }

    /// Replaces the stored `cost` with the cost under `weights`.
    pub fn set_cost(&mut self, weights: &CostWeights) {
        self.cost = self.cost(weights);
    }
}

/// Weights of the cost objective: metric column → weight (any finite number; negative rewards
/// a metric). Columns must be [`Metrics::COLUMNS`] other than `cost`; unknown names are refused
/// when built or deserialized, so a typo cannot silently drop a term.
///
/// The defaults price everything in "false opens" for a run at a few requests per second:
/// - `false_opens` 1: the unit. A false open sheds healthy traffic for one open period and pages
///   someone for nothing.
/// - `detection_delay_mean_s` 1/60: a minute of late detection costs about one false open (a
///   minute of failing calls at a few rps is a couple of hundred failed user requests, roughly
///   what a 30 to 60 s false open sheds).
/// - `missed_incidents` 10: missing a real incident is ten false opens; it leaves callers
///   exposed for the whole incident (typically 10 min or more, i.e. more than the 10 min of delay
///   the detection-delay weight would charge).
/// - `recovery_lag_mean_s` 1/120: half the detection rate; lingering open after the dependency
///   recovered sheds traffic, which `shed_healthy` also prices.
/// - `flaps` 0.5: a quick re-trip is churn on top of an episode already counted.
/// - `shed_healthy` 0.01: 100 healthy requests shed (what a false open of ~30 s sheds at 3 rps)
///   ≈ one false open.
/// - `wasted_quota` 0.001: 1,000 attempts sent into a failing dependency ≈ one false open
///   (quota and load on a dependency that is already down).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, f64>", into = "BTreeMap<String, f64>")]
pub struct CostWeights(BTreeMap<String, f64>);

/// Why a set of cost weights was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CostWeightsError {
    /// A name that is not a metric column.
    #[error("unknown metric `{0}` in cost weights: expected one of {list}", list = weighable_list())]
    UnknownColumn(String),
    /// `cost` cannot be a term of itself.
    #[error("`cost` cannot be weighted: expected a metric column other than `cost`")]
    CostItself,
    /// A weight that is NaN or infinite.
    #[error("cost weight for `{0}`: expected a finite number, found {1}")]
    NotFinite(String, f64),
}

/// The columns a weight may name, comma separated (for error messages).
fn weighable_list() -> String {
    Metrics::COLUMNS.iter().filter(|c| **c != "cost").copied().collect::<Vec<_>>().join(", ")
}

impl CostWeights {
    /// Checks every name and weight. A name given twice keeps its last weight.
    pub fn new<I, S>(pairs: I) -> Result<CostWeights, CostWeightsError>
    where
        I: IntoIterator<Item = (S, f64)>,
        S: Into<String>,
    {
        let mut map = BTreeMap::new();
        for (name, w) in pairs {
            let name = name.into();
            if name == "cost" {
                return Err(CostWeightsError::CostItself);
            }
            if !Metrics::is_column(&name) {
                return Err(CostWeightsError::UnknownColumn(name));
            }
            if !w.is_finite() {
                return Err(CostWeightsError::NotFinite(name, w));
            }
            map.insert(name, w);
        }
        Ok(CostWeights(map))
    }

    /// The weight of one column (0 when not weighted).
    pub fn get(&self, column: &str) -> f64 {
        self.0.get(column).copied().unwrap_or(0.0)
    }

    /// The weighted columns and their weights, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

impl Default for CostWeights {
    /// See the type's documentation for the reasoning behind each weight.
    fn default() -> CostWeights {
        CostWeights(
            [
                ("false_opens", 1.0),
                ("detection_delay_mean_s", 1.0 / 60.0),
                ("missed_incidents", 10.0),
                ("recovery_lag_mean_s", 1.0 / 120.0),
                ("flaps", 0.5),
                ("shed_healthy", 0.01),
                ("wasted_quota", 0.001),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        )
    }
}

impl TryFrom<BTreeMap<String, f64>> for CostWeights {
    type Error = CostWeightsError;
    fn try_from(map: BTreeMap<String, f64>) -> Result<CostWeights, CostWeightsError> {
        CostWeights::new(map)
    }
}

impl From<CostWeights> for BTreeMap<String, f64> {
    fn from(w: CostWeights) -> BTreeMap<String, f64> {
        w.0
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
/// `cost` is filled with [`CostWeights::default`].
pub fn score(record: &RunRecord, opts: &ScoringOptions) -> Metrics {
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
            if let Some(closed_at) = last_close[i].take() {
                if t.at - closed_at < opts.flap_window {
                    flaps += 1;
                }
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

    let mut delays: Vec<Dur> = Vec::new();
    let mut lags: Vec<Dur> = Vec::new();
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
            continue;
        };
        delays.push(delay);
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

    let c = &record.counters;
    let per_request = |x: u64| (c.requests > 0).then(|| x as f64 / c.requests as f64);
    let pct_ms = |permille| record.latency.percentile_permille(permille).map(Dur::as_millis_f64);
    let mut m = Metrics {
        false_opens,
        incidents,
        missed_incidents: missed,
        detection_delay_mean_s: mean_secs(&delays),
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
    };
    m.set_cost(&CostWeights::default());
    m
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
