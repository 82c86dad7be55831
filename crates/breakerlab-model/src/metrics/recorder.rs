//! The recorder: what the engine tells it during one run (arrivals, rejections, attempts,
//! results, state changes, final answers), kept as counters, the transition list, a user-latency
//! histogram and optional timeline bins. Calls come in event order; nothing is allocated per call
//! (the transition list and the timeline grow amortised).

use super::histogram::{LatencyHistogram, PercentileHistogram};
use crate::outcome::{OutcomeClass, Verdict};
use crate::policy::{Evidence, State, Transition};
use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};
use crate::{Error, Result};

/// Most timeline bins [`Recorder::new`] will lay out for the horizon; a finer bin is widened to
/// `ceil(horizon / MAX_TIMELINE_BINS)`. [`RecorderOptions::validate`] reports it as an error
/// instead, for callers that prefer to refuse such a scenario.
pub const MAX_TIMELINE_BINS: u64 = 200_000;

/// What a recorder needs to know before the run starts.
#[derive(Clone, Debug)]
pub struct RecorderOptions {
    /// The scenario's length (arrivals stop there; calls may complete a little later).
    pub horizon: SimTime,
    /// Number of breaker instances (at least one is assumed).
    pub instances: usize,
    /// Width of a timeline bin, `None` for no timeline. Zero also means no timeline.
    pub timeline_bin: Option<Dur>,
    /// Ground truth (sorted by start here if it was not), used for `shed_healthy` and kept in the
    /// record for scoring.
    pub truth: Vec<IncidentWindow>,
}

impl RecorderOptions {
    /// Checks the timeline bin: not zero, and at most [`MAX_TIMELINE_BINS`] bins over the horizon.
    pub fn validate(&self) -> Result<()> {
        if let Some(bin) = self.timeline_bin {
            if bin.is_zero() {
                return Err(Error::invalid(
                    "timeline bin: expected a positive duration such as \"1m\", found 0",
                ));
            }
            let bins = self.horizon.micros().div_ceil(bin.micros());
            if bins > MAX_TIMELINE_BINS {
                return Err(Error::invalid(format!(
                    "timeline bin {bin}: expected at most {MAX_TIMELINE_BINS} bins over the horizon, \
                     found {bins}; use a wider bin"
                )));
            }
        }
        Ok(())
    }
}

/// Which fallback answered a request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FallbackKind {
    /// A cached answer.
    Cached,
    /// A local substitute (a smaller model, a default).
    Local,
    /// The work was put on a retry queue: the caller got a quick "queued", the work itself is
    /// done later ([`Recorder::deferred_done`]).
    Deferred,
}

/// How a request ended, as the latency split counts it: each request ends in exactly one.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The dependency's own answer (success, or its error) reached the caller.
    Answered,
    /// A breaker refused it; the caller got an error or an immediate fallback (never the
    /// dependency's answer, so its ~0 ms is not speed).
    Refused,
    /// The dependency failed it and a cached or local fallback answered.
    Fallback,
    /// Its work went to a retry queue, to be done later (whether a breaker refused it or the
    /// dependency failed it).
    Deferred,
}

impl Ending {
    /// Every ending, in column order.
    pub const ALL: [Ending; 4] = [Ending::Answered, Ending::Refused, Ending::Fallback, Ending::Deferred];

    /// Its name in latency.csv (`answered`, `refused`, `fallback`, `deferred`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Ending::Answered => "answered",
            Ending::Refused => "refused",
            Ending::Fallback => "fallback",
            Ending::Deferred => "deferred",
        }
    }

    /// How a request that ended with `finish` (`shed`: a breaker refused it) is counted.
    pub fn of(finish: Finish, shed: bool) -> Ending {
        match (finish, shed) {
            (Finish::Fallback(FallbackKind::Deferred), _) => Ending::Deferred,
            (_, true) => Ending::Refused,
            (Finish::Fallback(_), false) => Ending::Fallback,
            (Finish::Success | Finish::Error, false) => Ending::Answered,
        }
    }
}

/// Why an attempt went upstream.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AttemptKind {
    /// The request's first try.
    First,
    /// A retry after a failure.
    Retry,
    /// A half-open probe (the policy's ticket said so).
    Probe,
    /// Work replayed from a retry queue (a deferred fallback).
    Deferred,
    /// The same attempt sent to the next provider after a provider failed it (multi-provider
    /// routing fails over at once, without backoff).
    Failover,
}

/// How a request ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The dependency answered it successfully.
    Success,
    /// The client served a fallback (breaker rejection, or failure with a fallback configured).
    Fallback(FallbackKind),
    /// The caller got an error.
    Error,
}

/// Run-wide counts, one field per thing counted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Requests that arrived.
    pub requests: u64,
    /// Attempts sent upstream (every kind).
    pub attempts: u64,
    /// Attempts that were a request's first try.
    pub first_attempts: u64,
    /// Attempts that were retries.
    pub retries: u64,
    /// Attempts that were half-open probes.
    pub probes: u64,
    /// Attempts replayed from a retry queue.
    pub deferred_attempts: u64,
    /// Tries sent to the next provider after a provider failed the attempt.
    pub failover_attempts: u64,
    /// Breaker rejections (each one, first try or retry).
    pub rejections: u64,
    /// Attempts whose result the client saw as a timeout.
    pub timeouts: u64,
    /// Completed attempts the policy counted as failures (`wasted_quota`).
    pub attempt_failures: u64,
    /// Completed attempts the policy counted as successes.
    pub attempt_successes: u64,
    /// Completed attempts the policy ignored.
    pub attempt_ignored: u64,
    /// Requests answered successfully by the dependency.
    pub answered_ok: u64,
    /// Requests that ended with a fallback.
    pub fallbacks: u64,
    /// Requests that ended with an error.
    pub errors: u64,
    /// Requests that ended because a breaker rejected them.
    pub shed: u64,
    /// Shed requests whose rejection happened while no incident window was active.
    pub shed_healthy: u64,
    /// Units of work deferred to a retry queue.
    pub deferred: u64,
    /// Deferred units that later completed (either way).
    pub deferred_completed: u64,
    /// Deferred units that later completed successfully.
    pub deferred_succeeded: u64,
    /// Sum of (completion − deferral) over completed deferred units.
    pub deferred_delay_total: Dur,
    /// Retries the client's retry budget refused.
    pub retries_refused: u64,
    /// Requests answered from a cache.
    pub fallback_cached: u64,
    /// Requests answered by a local fallback (e.g. a local model).
    pub fallback_local: u64,
    /// Time the dependency spent above its capacity (with a capacity model).
    pub overloaded: Dur,
    /// Requests per [`Ending`] ([`Ending::ALL`] order); they sum to the requests that ended.
    pub ended: [u64; 4],
    /// Attempts sent in the [`RECOVERY_WINDOW`] after the end of an incident expecting `open`
    /// (the load a fleet puts on a recovering dependency).
    pub recovery_attempts: u64,
}

/// One provider's share of a multi-provider run.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderRecord {
    /// Its name.
    pub name: String,
    /// Price per call.
    pub price: f64,
    /// Tries sent to it (every kind).
    pub attempts: u64,
    /// Tries it answered `ok`.
    pub successes: u64,
    /// Its incidents expecting `open`, as `(start, end, failover)`: `failover` is the first
    /// routing pass at or after `start` and before `end` that passed this provider over (see
    /// [`Recorder::routed`]), `None` when none did.
    pub failovers: Vec<(SimTime, SimTime, Option<SimTime>)>,
}

/// Per-provider state while a multi-provider run is recorded.
#[derive(Debug)]
struct Routing {
    /// One record per provider, in file order.
    providers: Vec<ProviderRecord>,
    /// Per provider: index of the first incident whose window may still be ahead.
    cursors: Vec<usize>,
}

/// How long after an incident's end its recovery load is measured.
pub const RECOVERY_WINDOW: Dur = Dur::from_secs(60);

/// One timeline bin `[start, end)`. Counts are of events whose time falls in the bin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimelineBin {
    /// First instant of the bin.
    pub start: SimTime,
    /// First instant after it (the last bin ends at the later of the horizon and the run's end).
    pub end: SimTime,
    /// Requests that arrived.
    pub offered: u64,
    /// Attempts sent upstream.
    pub admitted: u64,
    /// Breaker rejections.
    pub rejected: u64,
    /// Attempts completed with a success verdict.
    pub successes: u64,
    /// Attempts completed with a failure verdict.
    pub failures: u64,
    /// Attempts completed (any verdict).
    pub completed: u64,
    /// Completed attempts whose class was `error`, `timeout` or `rate_limited` (the dependency's
    /// health, whatever the policy's classifier says).
    pub upstream_errors: u64,
    /// p95 of the latency (as the client saw it) of attempts completed in the bin.
    pub upstream_p95: Option<Dur>,
    /// Time spent in each state ([`State::index`] order), summed over instances.
    pub occupancy: [Dur; 3],
    /// Instance-time observed in the bin: the part of the bin before the run's end, times the
    /// number of instances. The occupancy fractions divide by it.
    pub observed: Dur,
    /// The dependency's true health, whatever the breaker did: requests that arrived in the
    /// bin, each with the answer the dependency gives its first attempt at arrival.
    pub true_answers: u64,
    /// Of those, answers of class `error` or `rate_limited`.
    pub true_errors: u64,
    /// p95 of the dependency's latency over those answers (not cut by the client's timeout).
    pub true_p95: Option<Dur>,
}

impl TimelineBin {
    /// Fraction of the bin spent in `state`, averaged over instances; `None` when the bin lies
    /// after the run's end.
    pub fn fraction(&self, state: State) -> Option<f64> {
        (!self.observed.is_zero())
            .then(|| self.occupancy[state.index()].micros() as f64 / self.observed.micros() as f64)
    }

    /// Upstream error rate of attempts completed in the bin; `None` when none completed.
    pub fn error_rate(&self) -> Option<f64> {
        (self.completed > 0).then(|| self.upstream_errors as f64 / self.completed as f64)
    }

    /// The dependency's true error rate in the bin (every arrival's first answer, admitted or
    /// not); `None` when nothing arrived.
    pub fn true_error_rate(&self) -> Option<f64> {
        (self.true_answers > 0).then(|| self.true_errors as f64 / self.true_answers as f64)
    }
}

/// Per-bin counts over the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Bin width.
    pub bin: Dur,
    /// Bins in time order, starting at 0.
    pub bins: Vec<TimelineBin>,
    /// With `[[providers]]`: the true health of each provider after the first (file order;
    /// the bins' own `true_*` fields are the first's), bin for bin.
    pub other_providers: Vec<ProviderHealth>,
}

/// One provider's true health per timeline bin: every arrival's first answer as this provider
/// would give it, whether or not the breaker or the router sent the request there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderHealth {
    /// The provider's name.
    pub name: String,
    /// Per bin, in the timeline's order.
    pub bins: Vec<HealthBin>,
}

/// The true health of one bin: answers, errors among them, and their p95 latency.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthBin {
    /// Requests that arrived in the bin.
    pub answers: u64,
    /// Of those, answers of class `error` or `rate_limited`.
    pub errors: u64,
    /// p95 of their latency.
    pub p95: Option<Dur>,
}

impl HealthBin {
    /// The error rate; `None` when nothing arrived.
    pub fn error_rate(&self) -> Option<f64> {
        (self.answers > 0).then(|| self.errors as f64 / self.answers as f64)
    }
}

/// A provider after the first, while recording: its bins, and the histogram of the bin
/// `bin` being filled.
#[derive(Clone, Debug)]
struct ProviderHealthRecorder {
    health: ProviderHealth,
    histogram: LatencyHistogram,
    bin: usize,
}

/// Everything one run recorded, handed to [`super::score`] and the CSV writers.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The scenario's horizon.
    pub horizon: SimTime,
    /// The time the run ended ([`Recorder::finish`]'s `end`).
    pub end: SimTime,
    /// Number of breaker instances.
    pub instances: usize,
    /// Ground truth, sorted by start.
    pub truth: Vec<IncidentWindow>,
    /// Run-wide counts.
    pub counters: Counters,
    /// Every state change in event order, with its instance.
    pub transitions: Vec<(usize, Transition)>,
    /// The evidence of each state change, in the same order (empty unless the run explains):
    /// `evidence[k]` belongs to `transitions[evidence_base + k]`.
    pub evidence: Vec<Evidence>,
    /// Evidence already handed out while the run went on ([`Recorder::drain_transitions`]) and
    /// no longer held; 0 unless the run streamed it.
    pub evidence_base: usize,
    /// Transitions already handed out while the run went on (they stay in `transitions`, for
    /// scoring); [`RunRecord::drain_transitions`] hands out the rest.
    pub drained: usize,
    /// User latency: arrival to final answer, retries and backoff included.
    pub latency: LatencyHistogram,
    /// User latency of the requests the dependency answered ([`Ending::Answered`]).
    pub answered_latency: LatencyHistogram,
    /// Deferral to completion of the deferred work that completed.
    pub deferred_delay: LatencyHistogram,
    /// Per-bin counts, when a bin width was given.
    pub timeline: Option<Timeline>,
    /// Each instance's state at the end.
    pub final_states: Vec<State>,
    /// Time each instance spent in each state ([`State::index`] order).
    pub time_in_state: Vec<[Dur; 3]>,
    /// Deferred work not completed by the end.
    pub deferred_pending: u64,
    /// Per-provider traffic and failovers, in file order (empty without `[[providers]]`).
    pub providers: Vec<ProviderRecord>,
    /// What happened to each scripted call, in script order (empty unless the run was scripted):
    /// the calls from number `calls_from` on, those before having been handed out as the run went.
    pub calls: Vec<CallRecord>,
    /// The number of the first call in `calls` (0 unless the run streamed its call log).
    pub calls_from: u64,
    /// Each breaker's evidence at each incident's moments (empty unless the run explains).
    pub snapshots: Vec<super::Snapshot>,
    /// What the pool of hosts went through, for a scenario with `[upstream] hosts`.
    pub pool: Option<super::pool::PoolRecord>,
}

/// One scripted call: when it arrived, when the breaker let it start (later than its arrival
/// when it waited; `None` when rejected) and when the caller had its answer. Three words (24
/// bytes, not 40): a time not yet known is held as [`CallRecord::UNSET`], which no run reaches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// The script row's `t_ms`.
    pub arrival: SimTime,
    start: SimTime,
    end: SimTime,
}

impl CallRecord {
    /// The place of a time not (yet) known.
    const UNSET: SimTime = SimTime(u64::MAX);

    /// A call arrived at `arrival`, neither started nor answered.
    #[inline]
    pub fn new(arrival: SimTime) -> CallRecord {
        CallRecord { arrival, start: CallRecord::UNSET, end: CallRecord::UNSET }
    }

    /// A call with the given times.
    #[inline]
    pub fn with(arrival: SimTime, start: Option<SimTime>, end: Option<SimTime>) -> CallRecord {
        let or_unset = |t: Option<SimTime>| t.unwrap_or(CallRecord::UNSET);
        CallRecord { arrival, start: or_unset(start), end: or_unset(end) }
    }

    /// When the call was sent upstream, if it was.
    #[inline]
    pub fn start(&self) -> Option<SimTime> {
        (self.start != CallRecord::UNSET).then_some(self.start)
    }

    /// When the caller had its answer (the result, or the rejection), if it has.
    #[inline]
    pub fn end(&self) -> Option<SimTime> {
        (self.end != CallRecord::UNSET).then_some(self.end)
    }

    /// Notes when the call was sent upstream.
    #[inline]
    pub fn set_start(&mut self, t: SimTime) {
        self.start = t;
    }

    /// Notes when the caller had its answer.
    #[inline]
    pub fn set_end(&mut self, t: SimTime) {
        self.end = t;
    }
}

/// Collects one run's events. See the module documentation.
#[derive(Debug)]
pub struct Recorder {
    horizon: SimTime,
    truth: Vec<IncidentWindow>,
    counters: Counters,
    transitions: Vec<(usize, Transition)>,
    evidence: Vec<Evidence>,
    /// See [`RunRecord::evidence_base`].
    evidence_base: usize,
    /// See [`RunRecord::drained`].
    drained: usize,
    /// User latency of the requests that ended otherwise than [`Ending::Answered`]: with
    /// `answered_latency`, the run's user latency (merged at the end, so an answered request
    /// is recorded once).
    unanswered_latency: LatencyHistogram,
    answered_latency: LatencyHistogram,
    deferred_delay: LatencyHistogram,
    states: Vec<State>,
    since: Vec<SimTime>,
    time_in_state: Vec<[Dur; 3]>,
    /// Index of the first truth window not yet started, for `shed_healthy`.
    truth_cursor: usize,
    /// The minutes after the `open` incidents' ends ([`RECOVERY_WINDOW`]), merged, in time
    /// order (for `recovery_attempts`).
    recovery: Vec<(SimTime, SimTime)>,
    /// First of `recovery` not yet over.
    recovery_cursor: usize,
    /// Whether the last attempt's time was in a recovery minute, and until when that answer
    /// holds: attempts come in time order, so most are answered by one comparison.
    recovering: bool,
    recovering_until: SimTime,
    /// Latest end among the windows already started.
    started_max_end: SimTime,
    bin: Option<Dur>,
    /// The bin width in µs, `u64::MAX` without a timeline (then every event is in bin 0).
    width: u64,
    bins: Vec<TimelineBin>,
    /// The bin events fall in now, `bins[cur_idx]` from `cur_start` (µs) on: events come in
    /// time order, so its counts are kept in `cur` and added to `bins` when an event falls
    /// after it ([`Recorder::roll`]) and at the end: one comparison per event.
    cur_start: u64,
    cur_idx: usize,
    cur: TimelineBin,
    /// The counts of the bins before the current one, with or without a timeline: the run's
    /// requests, attempts, rejections and attempt verdicts are their sums ([`Recorder::finish`]),
    /// not counted twice per event.
    totals: TimelineBin,
    /// Latencies of attempts completed in the current bin, folded into its p95 when it ends.
    scratch: PercentileHistogram,
    /// The same for the true answers ([`Recorder::request_arrived_answering`]).
    health: PercentileHistogram,
    /// The true health of the providers after the first (multi-provider runs with a timeline).
    other_health: Vec<ProviderHealthRecorder>,
    /// Multi-provider bookkeeping, when enabled.
    routing: Option<Routing>,
}

impl Recorder {
    /// A recorder for one run. Allocates here: the timeline bins over the horizon, the
    /// histograms, per-instance state.
    pub fn new(opts: RecorderOptions) -> Recorder {
        let instances = opts.instances.max(1);
        let mut truth = opts.truth;
        truth.sort_by_key(|w| (w.start, w.end));
        let recovery = recovery_minutes(&truth);
        let bin = opts.timeline_bin.filter(|b| !b.is_zero()).map(|b| {
            let min_width = opts.horizon.micros().div_ceil(MAX_TIMELINE_BINS);
            Dur(b.micros().max(min_width))
        });
        let mut bins = Vec::new();
        if let Some(b) = bin {
            let n = opts.horizon.micros().div_ceil(b.micros()).max(1) as usize;
            bins.reserve_exact(n);
            for i in 0..n as u64 {
                bins.push(empty_bin(i, b));
            }
        }
        Recorder {
            horizon: opts.horizon,
            truth,
            counters: Counters::default(),
            transitions: Vec::with_capacity(64),
            evidence: Vec::new(),
            evidence_base: 0,
            drained: 0,
            unanswered_latency: LatencyHistogram::new(),
            answered_latency: LatencyHistogram::new(),
            deferred_delay: LatencyHistogram::new(),
            states: vec![State::Closed; instances],
            since: vec![SimTime::ZERO; instances],
            time_in_state: vec![[Dur::ZERO; 3]; instances],
            truth_cursor: 0,
            started_max_end: SimTime::ZERO,
            recovery,
            recovery_cursor: 0,
            recovering: false,
            recovering_until: SimTime::ZERO,
            bin,
            width: bin.map_or(u64::MAX, Dur::micros),
            bins,
            cur_start: 0,
            cur_idx: 0,
            cur: TimelineBin::default(),
            totals: TimelineBin::default(),
            scratch: PercentileHistogram::new(),
            health: PercentileHistogram::new(),
            other_health: Vec::new(),
            routing: None,
        }
    }

    /// Records per-provider traffic for a multi-provider run: `names` and `prices` in file
    /// order, and each provider's incident windows `[start, end)` expecting `open` (sorted by
    /// start), whose failover delay is measured. Instance `i` is then provider
    /// `i % names.len()` (the engine numbers breakers `slot · providers + provider`).
    pub fn enable_routing(
        &mut self,
        names: &[String],
        prices: &[f64],
        open_windows: &[Vec<(SimTime, SimTime)>],
    ) {
        let providers = names
            .iter()
            .enumerate()
            .map(|(i, name)| ProviderRecord {
                name: name.clone(),
                price: prices.get(i).copied().unwrap_or(0.0),
                attempts: 0,
                successes: 0,
                failovers: open_windows
                    .get(i)
                    .map(|w| w.iter().map(|&(start, end)| (start, end, None)).collect())
                    .unwrap_or_default(),
            })
            .collect::<Vec<_>>();
        let cursors = vec![0; providers.len()];
        self.routing = Some(Routing { providers, cursors });
        if self.bin.is_some() {
            self.other_health = names
                .iter()
                .skip(1)
                .map(|name| ProviderHealthRecorder {
                    health: ProviderHealth {
                        name: name.clone(),
                        bins: vec![HealthBin::default(); self.bins.len()],
                    },
                    histogram: LatencyHistogram::new(),
                    bin: 0,
                })
                .collect();
        }
    }

    /// A routing pass started at `at` and passed over the providers in the `passed_over` mask
    /// (bit `p` for provider `p`): their breaker refused the call, or the router ranked them
    /// below the provider that got the first try for a reason other than the random draw. The
    /// first such pass inside an incident's window is that incident's failover. Passes come in
    /// time order, so each provider's cursor only moves forward. Allocates nothing.
    pub fn routed(&mut self, at: SimTime, passed_over: u64) {
        let Some(routing) = &mut self.routing else { return };
        for (p, record) in routing.providers.iter_mut().enumerate() {
            if p >= 64 || passed_over & (1u64 << p) == 0 {
                continue;
            }
            let cursor = &mut routing.cursors[p];
            while record.failovers.get(*cursor).is_some_and(|w| w.1 <= at) {
                *cursor += 1;
            }
            for w in record.failovers[*cursor..].iter_mut() {
                if w.0 > at {
                    break;
                }
                if at < w.1 && w.2.is_none() {
                    w.2 = Some(at);
                }
            }
        }
    }

    /// The provider of breaker instance `instance`, in a multi-provider run.
    #[inline]
    fn provider_mut(&mut self, instance: usize) -> Option<&mut ProviderRecord> {
        let routing = self.routing.as_mut()?;
        let n = routing.providers.len().max(1);
        routing.providers.get_mut(instance % n)
    }

    /// Timeline bin `idx` of width `b`, created if the run went past the horizon.
    fn bin_at(&mut self, idx: usize, b: Dur) -> &mut TimelineBin {
        while self.bins.len() <= idx {
            let i = self.bins.len() as u64;
            self.bins.push(empty_bin(i, b));
        }
        &mut self.bins[idx]
    }

    /// The counts of the timeline bin holding `at`: the current one, unless `at` is past it.
    /// Without a timeline, counts that are never read.
    #[inline(always)]
    fn tally(&mut self, at: SimTime) -> &mut TimelineBin {
        if at.micros().wrapping_sub(self.cur_start) >= self.width {
            self.roll(at);
        }
        &mut self.cur
    }

    /// Ends the current bin ([`Recorder::close_bin`]) and makes the one holding `at` current.
    #[cold]
    #[inline(never)]
    fn roll(&mut self, at: SimTime) {
        if self.bin.is_none() {
            return;
        }
        self.close_bin();
        let idx = at.micros() / self.width;
        self.cur_start = idx * self.width;
        self.cur_idx = idx as usize;
    }

    /// Adds the current bin's counts to the totals and to its place in `bins`, and stores the
    /// p95 of the latencies recorded in it (when any were), emptying both.
    fn close_bin(&mut self) {
        let c = std::mem::take(&mut self.cur);
        add_counts(&mut self.totals, &c);
        let Some(b) = self.bin else { return };
        let upstream_p95 = self.scratch.take_percentile(950);
        let true_p95 = self.health.take_percentile(950);
        let bin = self.bin_at(self.cur_idx, b);
        add_counts(bin, &c);
        if upstream_p95.is_some() {
            bin.upstream_p95 = upstream_p95;
        }
        if true_p95.is_some() {
            bin.true_p95 = true_p95;
        }
    }

    /// A request arrived.
    #[inline(always)]
    pub fn request_arrived(&mut self, at: SimTime) {
        self.tally(at).offered += 1;
    }

    /// A breaker rejected an attempt (each rejection, first try or retry).
    #[inline]
    pub fn rejected(&mut self, at: SimTime, _instance: usize) {
        self.tally(at).rejected += 1;
    }

    /// The retry budget refused a retry.
    pub fn retry_refused(&mut self, _at: SimTime) {
        self.counters.retries_refused += 1;
    }

    /// The dependency spent `span` above its capacity.
    pub fn overloaded_for(&mut self, span: Dur) {
        self.counters.overloaded = self.counters.overloaded + span;
    }

    /// An attempt went upstream.
    #[inline(always)]
    pub fn attempt_sent(&mut self, at: SimTime, instance: usize, kind: AttemptKind) {
        let c = &mut self.counters;
        match kind {
            AttemptKind::First => c.first_attempts += 1,
            AttemptKind::Retry => c.retries += 1,
            AttemptKind::Probe => c.probes += 1,
            AttemptKind::Deferred => c.deferred_attempts += 1,
            AttemptKind::Failover => c.failover_attempts += 1,
        }
        if let Some(p) = self.provider_mut(instance) {
            p.attempts += 1;
        }
        self.tally(at).admitted += 1;
        if self.in_recovery_window(at) {
            self.counters.recovery_attempts += 1;
        }
    }

    /// True when `at` falls in the minute after an `open` incident's end. Attempts come in time
    /// order, so the answer holds until the next edge of a recovery minute, and minutes that
    /// have passed are skipped for good.
    #[inline]
    fn in_recovery_window(&mut self, at: SimTime) -> bool {
        if at >= self.recovering_until {
            self.next_recovery_edge(at);
        }
        self.recovering
    }

    /// Finds whether `at` is in a recovery minute and the next instant that may change it.
    fn next_recovery_edge(&mut self, at: SimTime) {
        while self.recovery.get(self.recovery_cursor).is_some_and(|m| m.1 <= at) {
            self.recovery_cursor += 1;
        }
        (self.recovering, self.recovering_until) = match self.recovery.get(self.recovery_cursor) {
            Some(&(start, end)) if start <= at => (true, end),
            Some(&(start, _)) => (false, start),
            None => (false, SimTime(u64::MAX)),
        };
    }

    /// An attempt's result reached the client: class as seen (`Timeout` if it timed out), the
    /// policy's verdict, latency as the client saw it.
    #[inline(always)]
    pub fn attempt_done(
        &mut self,
        at: SimTime,
        instance: usize,
        class: OutcomeClass,
        verdict: Verdict,
        latency: Dur,
    ) {
        self.count_attempt_done(at, instance, class, verdict);
        if self.bin.is_some() {
            self.scratch.record(latency);
        }
    }

    /// [`Recorder::attempt_done`] of an `ok` attempt, then [`Recorder::request_done`] of its
    /// request (arrived at `arrival`) as a success: when the attempt's latency is the request's
    /// (its only attempt, sent as it arrived), it goes into both histograms at once.
    #[inline(always)]
    pub fn answered_by_attempt(
        &mut self,
        arrival: SimTime,
        at: SimTime,
        instance: usize,
        verdict: Verdict,
        latency: Dur,
    ) {
        if self.bin.is_none() || at - arrival != latency {
            self.attempt_done(at, instance, OutcomeClass::Ok, verdict, latency);
            self.request_done(arrival, at, Finish::Success, None);
            return;
        }
        self.count_attempt_done(at, instance, OutcomeClass::Ok, verdict);
        self.count_request_done(Finish::Success, None);
        self.scratch.record_with(&mut self.answered_latency, latency);
    }

    /// The counts of [`Recorder::attempt_done`].
    #[inline(always)]
    fn count_attempt_done(&mut self, at: SimTime, instance: usize, class: OutcomeClass, verdict: Verdict) {
        if class == OutcomeClass::Ok
            && let Some(p) = self.provider_mut(instance)
        {
            p.successes += 1;
        }
        if class == OutcomeClass::Timeout {
            self.counters.timeouts += 1;
        }
        let upstream_error =
            matches!(class, OutcomeClass::Error | OutcomeClass::Timeout | OutcomeClass::RateLimited);
        let bin = self.tally(at);
        bin.completed += 1;
        bin.successes += u64::from(verdict == Verdict::Success);
        bin.failures += u64::from(verdict == Verdict::Failure);
        bin.upstream_errors += u64::from(upstream_error);
    }

    /// Whether the run keeps a timeline, so the engine should report each arrival's true
    /// answer ([`Recorder::request_arrived_answering`]); sweeps without a timeline skip that draw.
    #[inline]
    pub fn records_health(&self) -> bool {
        self.bin.is_some()
    }

    /// A request arrived at `at` ([`Recorder::request_arrived`]), and the dependency's answer
    /// to its first attempt, as it would be at its arrival, whether or not the breaker lets it
    /// through: the true health the timeline shows even while the breaker is open (ignored
    /// without a timeline). Arrivals come in time order. Allocates nothing.
    #[inline(always)]
    pub fn request_arrived_answering(&mut self, at: SimTime, class: OutcomeClass, latency: Dur) {
        let timeline = self.bin.is_some();
        let bin = self.tally(at);
        bin.offered += 1;
        if timeline {
            bin.true_answers += 1;
            bin.true_errors += u64::from(matches!(class, OutcomeClass::Error | OutcomeClass::RateLimited));
            // After the bin's roll, which takes the closed bin's p95.
            self.health.record(latency);
        }
    }

    /// The answer provider `provider` (file order, 1 or more; 0's goes with
    /// [`Recorder::request_arrived_answering`]) gives a request's first attempt at its arrival
    /// `at`, wherever the request went. Ignored without routing or a timeline. Allocates nothing
    /// (the bins are laid out over the horizon; an arrival after it is not binned).
    pub fn true_answer_of(&mut self, provider: usize, at: SimTime, class: OutcomeClass, latency: Dur) {
        let (Some(b), Some(p)) = (self.bin, provider.checked_sub(1)) else { return };
        let Some(rec) = self.other_health.get_mut(p) else { return };
        let idx = (at.micros() / b.micros()) as usize;
        if idx >= rec.health.bins.len() {
            return;
        }
        if idx != rec.bin {
            fold_provider(rec);
            rec.bin = idx;
        }
        rec.histogram.record(latency);
        let bin = &mut rec.health.bins[idx];
        bin.answers += 1;
        if matches!(class, OutcomeClass::Error | OutcomeClass::RateLimited) {
            bin.errors += 1;
        }
    }

    /// A breaker instance changed state.
    pub fn transition(&mut self, instance: usize, t: &Transition) {
        if instance >= self.states.len() {
            // More instances than announced: track them too rather than lose their time.
            self.states.resize(instance + 1, State::Closed);
            self.since.resize(instance + 1, SimTime::ZERO);
            self.time_in_state.resize(instance + 1, [Dur::ZERO; 3]);
        }
        self.transitions.push((instance, *t));
        self.close_occupancy(instance, t.at);
        self.states[instance] = t.to;
    }

    /// [`Recorder::transition`], with what the breaker's rules saw (explain.csv).
    pub fn transition_explained(&mut self, instance: usize, t: &Transition, evidence: &Evidence) {
        self.transition(instance, t);
        self.evidence.push(*evidence);
    }

    /// Hands each transition recorded since the last call to `f`, in event order, with its
    /// evidence ([`Evidence::EMPTY`] when the run keeps none), then drops that evidence: a long
    /// run streams transitions.csv and explain.csv as it goes rather than holding every
    /// transition's evidence to the end. The transitions themselves stay, for scoring.
    pub fn drain_transitions<E>(
        &mut self,
        f: impl FnMut(usize, &Transition, &Evidence) -> Result<(), E>,
    ) -> Result<(), E> {
        drain(&self.transitions, &mut self.evidence, &mut self.drained, &mut self.evidence_base, f)
    }

    /// Adds instance `i`'s time in its current state from `since[i]` to `until`.
    fn close_occupancy(&mut self, i: usize, until: SimTime) {
        let from = self.since[i];
        if until <= from {
            return;
        }
        let s = self.states[i].index();
        self.time_in_state[i][s] = self.time_in_state[i][s] + (until - from);
        self.since[i] = until;
        let Some(b) = self.bin else { return };
        let mut t = from.micros();
        while t < until.micros() {
            let bin_end = (t / b.micros() + 1).saturating_mul(b.micros());
            let seg_end = bin_end.min(until.micros());
            let bin = self.bin_at((t / b.micros()) as usize, b);
            bin.occupancy[s] = bin.occupancy[s] + Dur(seg_end - t);
            t = seg_end;
        }
    }

    /// True when some incident window `[start, end)` contains `t` (`t` must not decrease between
    /// calls: a cursor walks the windows sorted by start, keeping the latest end seen).
    fn incident_active(&mut self, t: SimTime) -> bool {
        while let Some(w) = self.truth.get(self.truth_cursor) {
            if w.start > t {
                break;
            }
            self.started_max_end = self.started_max_end.max(w.end);
            self.truth_cursor += 1;
        }
        t < self.started_max_end
    }

    /// A request got its final answer at `at`; `shed` is `Some(t)` when it ended because a
    /// breaker rejected it at `t` (the fallback may answer a little later, at `at`). Rejection
    /// times arrive in event order, so the incident cursor only moves forward.
    /// Allocates nothing.
    #[inline(always)]
    pub fn request_done(&mut self, arrival: SimTime, at: SimTime, finish: Finish, shed: Option<SimTime>) {
        let latency = if self.count_request_done(finish, shed) == Ending::Answered {
            &mut self.answered_latency
        } else {
            &mut self.unanswered_latency
        };
        latency.record(at - arrival);
    }

    /// The counts of [`Recorder::request_done`]; returns how the request ended.
    #[inline(always)]
    fn count_request_done(&mut self, finish: Finish, shed: Option<SimTime>) -> Ending {
        let c = &mut self.counters;
        match finish {
            Finish::Success => c.answered_ok += 1,
            Finish::Fallback(kind) => {
                c.fallbacks += 1;
                match kind {
                    FallbackKind::Cached => c.fallback_cached += 1,
                    FallbackKind::Local => c.fallback_local += 1,
                    FallbackKind::Deferred => c.deferred += 1,
                }
            }
            Finish::Error => c.errors += 1,
        }
        let ending = Ending::of(finish, shed.is_some());
        c.ended[ending as usize] += 1;
        if let Some(rejected_at) = shed {
            self.counters.shed += 1;
            if !self.incident_active(rejected_at) {
                self.counters.shed_healthy += 1;
            }
        }
        ending
    }

    /// Deferred work (deferred at `deferred_at`) completed at `at`.
    pub fn deferred_done(&mut self, deferred_at: SimTime, at: SimTime, success: bool) {
        let c = &mut self.counters;
        c.deferred_completed += 1;
        if success {
            c.deferred_succeeded += 1;
        }
        c.deferred_delay_total = c.deferred_delay_total + (at - deferred_at);
        self.deferred_delay.record(at - deferred_at);
    }

    /// Ends the run at `end`: closes every instance's state occupancy at `end`, folds the last
    /// timeline bin's p95, and fixes each bin's observed time.
    pub fn finish(mut self, end: SimTime) -> RunRecord {
        for i in 0..self.states.len() {
            self.close_occupancy(i, end);
        }
        self.close_bin();
        self.other_health.iter_mut().for_each(fold_provider);
        let instances = self.states.len();
        let timeline = self.bin.map(|b| {
            let span_end = end.max(self.horizon);
            let n = span_end.micros().div_ceil(b.micros()).max(1) as usize;
            while self.bins.len() < n {
                let i = self.bins.len() as u64;
                self.bins.push(empty_bin(i, b));
            }
            let last = self.bins.len() - 1;
            for (i, bin) in self.bins.iter_mut().enumerate() {
                if i == last {
                    bin.end = bin.end.min(span_end).max(bin.start);
                }
                let seen = bin.end.min(end).micros().saturating_sub(bin.start.micros());
                bin.observed = Dur(seen.saturating_mul(instances as u64));
            }
            let other_providers = std::mem::take(&mut self.other_health)
                .into_iter()
                .map(|mut r| {
                    r.health.bins.resize(self.bins.len(), HealthBin::default());
                    r.health
                })
                .collect();
            Timeline { bin: b, bins: self.bins, other_providers }
        });
        let t = &self.totals;
        let c = Counters {
            requests: t.offered,
            attempts: t.admitted,
            rejections: t.rejected,
            attempt_successes: t.successes,
            attempt_failures: t.failures,
            attempt_ignored: t.completed.saturating_sub(t.successes + t.failures),
            ..self.counters
        };
        let mut latency = self.unanswered_latency;
        latency.merge(&self.answered_latency);
        RunRecord {
            horizon: self.horizon,
            end,
            instances,
            truth: self.truth,
            counters: c,
            transitions: self.transitions,
            evidence: self.evidence,
            evidence_base: self.evidence_base,
            drained: self.drained,
            latency,
            answered_latency: self.answered_latency,
            deferred_delay: self.deferred_delay,
            timeline,
            final_states: self.states,
            time_in_state: self.time_in_state,
            deferred_pending: c.deferred.saturating_sub(c.deferred_completed),
            providers: self.routing.map(|r| r.providers).unwrap_or_default(),
            calls: Vec::new(),
            calls_from: 0,
            snapshots: Vec::new(),
            pool: None,
        }
    }
}

impl RunRecord {
    /// [`Recorder::drain_transitions`] for what the run had not handed out when it ended.
    pub fn drain_transitions<E>(
        &mut self,
        f: impl FnMut(usize, &Transition, &Evidence) -> Result<(), E>,
    ) -> Result<(), E> {
        drain(&self.transitions, &mut self.evidence, &mut self.drained, &mut self.evidence_base, f)
    }

    /// The evidence of `transitions[k]`, if the record still holds it.
    pub fn evidence_of(&self, k: usize) -> Option<&Evidence> {
        k.checked_sub(self.evidence_base).and_then(|j| self.evidence.get(j))
    }
}

/// Hands `transitions[*drained..]` to `f` with their evidence (`evidence[k]` belongs to
/// transition `*base + k`), then forgets that evidence and moves both marks on.
fn drain<E>(
    transitions: &[(usize, Transition)],
    evidence: &mut Vec<Evidence>,
    drained: &mut usize,
    base: &mut usize,
    mut f: impl FnMut(usize, &Transition, &Evidence) -> Result<(), E>,
) -> Result<(), E> {
    for (k, (instance, t)) in transitions.iter().enumerate().skip(*drained) {
        let ev = k.checked_sub(*base).and_then(|j| evidence.get(j)).unwrap_or(&Evidence::EMPTY);
        f(*instance, t, ev)?;
        *drained = k + 1;
    }
    *base += evidence.len();
    evidence.clear();
    Ok(())
}

/// The minute after each `open` incident's end, `[end, end + RECOVERY_WINDOW)`, merged where
/// they overlap or touch, in time order.
fn recovery_minutes(truth: &[IncidentWindow]) -> Vec<(SimTime, SimTime)> {
    let mut minutes: Vec<(SimTime, SimTime)> =
        truth.iter().filter(|w| w.expect == Expect::Open).map(|w| (w.end, w.end + RECOVERY_WINDOW)).collect();
    minutes.sort();
    let mut merged: Vec<(SimTime, SimTime)> = Vec::with_capacity(minutes.len());
    for (start, end) in minutes {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Stores a provider's histogram p95 in the bin it was filled for and empties it.
fn fold_provider(rec: &mut ProviderHealthRecorder) {
    if rec.histogram.count() == 0 {
        return;
    }
    if let Some(bin) = rec.health.bins.get_mut(rec.bin) {
        bin.p95 = rec.histogram.percentile_permille(950);
    }
    rec.histogram.clear();
}

/// Adds the event counts of bin `c` to `to`.
fn add_counts(to: &mut TimelineBin, c: &TimelineBin) {
    to.offered += c.offered;
    to.admitted += c.admitted;
    to.rejected += c.rejected;
    to.successes += c.successes;
    to.failures += c.failures;
    to.completed += c.completed;
    to.upstream_errors += c.upstream_errors;
    to.true_answers += c.true_answers;
    to.true_errors += c.true_errors;
}

/// Bin `i` of width `b`, all counts zero.
fn empty_bin(i: u64, b: Dur) -> TimelineBin {
    let start = i.saturating_mul(b.micros());
    TimelineBin {
        start: SimTime(start),
        end: SimTime(start.saturating_add(b.micros())),
        ..TimelineBin::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::truth::Expect;

    fn window(start_s: u64, end_s: u64, expect: Expect) -> IncidentWindow {
        IncidentWindow {
            start: SimTime(start_s * 1_000_000),
            end: SimTime(end_s * 1_000_000),
            kind: "outage".into(),
            expect,
        }
    }

    fn tr(at_s: u64, from: State, to: State) -> Transition {
        Transition { at: SimTime(at_s * 1_000_000), from, to, reason: "test" }
    }

    fn s(secs: u64) -> SimTime {
        SimTime(secs * 1_000_000)
    }

    #[test]
    fn shed_healthy_uses_the_truth_cursor() {
        // Windows [10 s, 20 s) and [15 s, 40 s) overlap; [50 s, 60 s) is a blip (any window counts).
        let mut r = Recorder::new(RecorderOptions {
            horizon: s(100),
            instances: 1,
            timeline_bin: None,
            truth: vec![
                window(50, 60, Expect::StayClosed),
                window(10, 20, Expect::Open),
                window(15, 40, Expect::Open),
            ],
        });
        // Shed at 5 (healthy), 10 (active), 39 (active via the second window), 40 (healthy: end
        // is exclusive), 55 (blip active), 70 (healthy). Not shed at 80: not counted at all.
        for (t, shed) in [(5, true), (10, true), (39, true), (40, true), (55, true), (70, true), (80, false)]
        {
            r.request_arrived(s(t));
            r.request_done(s(t), s(t), Finish::Fallback(FallbackKind::Cached), shed.then_some(s(t)));
        }
        let rec = r.finish(s(100));
        assert_eq!(rec.counters.shed, 6);
        assert_eq!(rec.counters.shed_healthy, 3);
        assert_eq!(rec.counters.fallbacks, 7);
        assert_eq!(rec.truth[0].start, s(10), "truth sorted by start");
    }

    #[test]
    fn counters_and_state_time() {
        let mut r = Recorder::new(RecorderOptions {
            horizon: s(60),
            instances: 2,
            timeline_bin: None,
            truth: vec![],
        });
        r.request_arrived(s(1));
        r.attempt_sent(s(1), 0, AttemptKind::First);
        r.attempt_done(s(2), 0, OutcomeClass::Timeout, Verdict::Failure, Dur::from_secs(1));
        r.attempt_sent(s(3), 0, AttemptKind::Retry);
        r.attempt_done(s(4), 0, OutcomeClass::ClientError, Verdict::Ignored, Dur::from_millis(5));
        r.request_done(s(1), s(4), Finish::Error, None);
        r.transition(1, &tr(10, State::Closed, State::Open));
        r.transition(1, &tr(40, State::Open, State::HalfOpen));
        r.rejected(s(11), 1);
        for t in [11, 12] {
            r.request_arrived(s(t));
            r.request_done(s(t), s(t), Finish::Fallback(FallbackKind::Deferred), Some(s(t)));
        }
        r.deferred_done(s(11), s(50), true);
        let rec = r.finish(s(60));
        let c = rec.counters;
        assert_eq!((c.requests, c.attempts, c.first_attempts, c.retries), (3, 2, 1, 1));
        // The dependency's error answered request 1; the two queued ones ended deferred.
        assert_eq!(c.ended, [1, 0, 0, 2]);
        assert_eq!(rec.deferred_delay.percentile_permille(500), Some(Dur::from_secs(39)));
        assert_eq!((c.timeouts, c.attempt_failures, c.attempt_ignored, c.errors), (1, 1, 1, 1));
        assert_eq!((c.rejections, c.deferred, c.deferred_completed, rec.deferred_pending), (1, 2, 1, 1));
        assert_eq!(c.deferred_delay_total, Dur::from_secs(39));
        assert_eq!(rec.time_in_state[0], [Dur::from_secs(60), Dur::ZERO, Dur::ZERO]);
        // Instance 1: closed 0..10, open 10..40, half-open 40..60.
        assert_eq!(rec.time_in_state[1], [Dur::from_secs(10), Dur::from_secs(30), Dur::from_secs(20)]);
        assert_eq!(rec.final_states, vec![State::Closed, State::HalfOpen]);
        assert_eq!(rec.latency.percentile_permille(1000), Some(Dur::from_secs(3)));
        assert_eq!(rec.answered_latency.count(), 1);
        assert!(rec.timeline.is_none());
    }

    #[test]
    fn timeline_bins_count_split_occupancy_and_p95() {
        // 2 instances, 10 s bins, horizon 30 s, run ends at 25 s.
        let mut r = Recorder::new(RecorderOptions {
            horizon: s(30),
            instances: 2,
            timeline_bin: Some(Dur::from_secs(10)),
            truth: vec![],
        });
        r.request_arrived(s(1));
        r.request_arrived(s(12));
        r.attempt_sent(s(1), 0, AttemptKind::First);
        for ms in 1..=20u64 {
            // 20 attempts completing in bin 0 with latencies 1..20 ms (plus one of 7 ms below).
            r.attempt_done(s(2), 0, OutcomeClass::Ok, Verdict::Success, Dur::from_millis(ms));
        }
        r.attempt_done(s(3), 0, OutcomeClass::Error, Verdict::Failure, Dur::from_millis(7));
        // Instance 0 opens at 5 s and half-opens at 15 s; instance 1 stays closed.
        r.transition(0, &tr(5, State::Closed, State::Open));
        r.attempt_done(s(13), 1, OutcomeClass::RateLimited, Verdict::Ignored, Dur::from_millis(40));
        r.rejected(s(14), 0);
        r.transition(0, &tr(15, State::Open, State::HalfOpen));
        let rec = r.finish(s(25));
        let tl = rec.timeline.unwrap();
        assert_eq!(tl.bins.len(), 3);
        let b0 = &tl.bins[0];
        assert_eq!((b0.offered, b0.admitted, b0.successes, b0.failures, b0.completed), (1, 1, 20, 1, 21));
        assert_eq!(b0.upstream_errors, 1);
        // 21 values: p95 = rank ceil(19.95) = 20 = 19 ms = 19,000 µs, in the bucket
        // [18,944, 19,200) (74 · 256), reported as its midpoint 19,072 µs (+0.38%).
        assert_eq!(b0.upstream_p95, Some(Dur(19_072)));
        // Bin 0: instance 0 closed 5 s + open 5 s, instance 1 closed 10 s, over 20 instance-s.
        assert_eq!(b0.fraction(State::Closed), Some(0.75));
        assert_eq!(b0.fraction(State::Open), Some(0.25));
        let b1 = &tl.bins[1];
        assert_eq!((b1.offered, b1.rejected, b1.completed, b1.failures), (1, 1, 1, 0));
        assert_eq!(b1.error_rate(), Some(1.0));
        assert_eq!(b1.upstream_p95, Some(Dur::from_millis(40)));
        // Bin 1: instance 0 open 5 s + half-open 5 s; instance 1 closed 10 s.
        assert_eq!(b1.fraction(State::HalfOpen), Some(0.25));
        // Bin 2 [20, 30): observed only until 25 s: 2 × 5 s; instance 0 half-open, 1 closed.
        let b2 = &tl.bins[2];
        assert_eq!(b2.observed, Dur::from_secs(10));
        assert_eq!(b2.fraction(State::HalfOpen), Some(0.5));
        assert_eq!(b2.error_rate(), None);
        assert_eq!(b2.upstream_p95, None);
        assert_eq!((b2.start, b2.end), (s(20), s(30)));
    }

    #[test]
    fn other_providers_true_health_is_binned_apart() {
        let mut r = Recorder::new(RecorderOptions {
            horizon: s(20),
            instances: 2,
            timeline_bin: Some(Dur::from_secs(10)),
            truth: vec![],
        });
        let names = ["primary".to_string(), "secondary".to_string()];
        r.enable_routing(&names, &[1.0, 2.0], &[vec![], vec![]]);
        // The first provider's answers go to the bins' own fields, the second's apart.
        r.request_arrived_answering(s(1), OutcomeClass::Error, Dur::from_millis(5));
        r.true_answer_of(1, s(1), OutcomeClass::Ok, Dur::from_millis(100));
        r.true_answer_of(1, s(2), OutcomeClass::RateLimited, Dur::from_millis(300));
        r.true_answer_of(1, s(12), OutcomeClass::Ok, Dur::from_millis(50));
        // Provider 0 is not an "other" provider, and one past the last is ignored.
        r.true_answer_of(0, s(3), OutcomeClass::Ok, Dur::from_millis(1));
        r.true_answer_of(2, s(3), OutcomeClass::Ok, Dur::from_millis(1));
        let tl = r.finish(s(20)).timeline.unwrap();
        assert_eq!((tl.bins[0].true_answers, tl.bins[0].true_errors), (1, 1));
        let [other] = tl.other_providers.as_slice() else { panic!("{:?}", tl.other_providers) };
        assert_eq!(other.name, "secondary");
        assert_eq!(other.bins.len(), tl.bins.len());
        assert_eq!((other.bins[0].answers, other.bins[0].errors), (2, 1));
        assert_eq!(other.bins[0].error_rate(), Some(0.5));
        let p95 = other.bins[0].p95.unwrap().as_millis_f64();
        assert!((p95 - 300.0).abs() <= 300.0 * 0.01, "{p95}");
        assert_eq!((other.bins[1].answers, other.bins[1].error_rate()), (1, Some(0.0)));
        // Without a timeline nothing is kept.
        let mut none = Recorder::new(RecorderOptions {
            horizon: s(20),
            instances: 2,
            timeline_bin: None,
            truth: vec![],
        });
        none.enable_routing(&names, &[1.0, 2.0], &[vec![], vec![]]);
        none.true_answer_of(1, s(1), OutcomeClass::Ok, Dur::from_millis(1));
        assert!(none.finish(s(20)).timeline.is_none());
    }

    #[test]
    fn true_health_is_binned_from_every_arrival_whatever_the_breaker_did() {
        let mut r = Recorder::new(RecorderOptions {
            horizon: s(20),
            instances: 1,
            timeline_bin: Some(Dur::from_secs(10)),
            truth: vec![],
        });
        assert!(r.records_health());
        // Bin 0: 4 arrivals, one error (the breaker may have refused them all: no attempt here).
        for (t, class, ms) in [
            (1, OutcomeClass::Ok, 10),
            (2, OutcomeClass::Error, 20),
            (3, OutcomeClass::Ok, 30),
            (4, OutcomeClass::ClientError, 40),
        ] {
            r.request_arrived_answering(s(t), class, Dur::from_millis(ms));
        }
        r.request_arrived_answering(s(15), OutcomeClass::RateLimited, Dur::from_millis(5));
        let tl = r.finish(s(20)).timeline.unwrap();
        assert_eq!((tl.bins[0].true_answers, tl.bins[0].true_errors), (4, 1));
        assert_eq!(tl.bins[0].true_error_rate(), Some(0.25));
        assert_eq!(tl.bins[0].true_p95, Some(Dur::from_millis(40)));
        assert_eq!(tl.bins[0].completed, 0);
        assert_eq!(tl.bins[1].true_error_rate(), Some(1.0));
        let none = Recorder::new(RecorderOptions {
            horizon: s(20),
            instances: 1,
            timeline_bin: None,
            truth: vec![],
        });
        assert!(!none.records_health());
    }

    #[test]
    fn timeline_grows_past_the_horizon_and_validates() {
        let opts = RecorderOptions {
            horizon: s(20),
            instances: 1,
            timeline_bin: Some(Dur::from_secs(10)),
            truth: vec![],
        };
        assert!(opts.validate().is_ok());
        let mut r = Recorder::new(opts);
        r.attempt_done(s(33), 0, OutcomeClass::Ok, Verdict::Success, Dur::from_millis(3));
        let tl = r.finish(s(35)).timeline.unwrap();
        assert_eq!(tl.bins.len(), 4);
        assert_eq!((tl.bins[3].start, tl.bins[3].end), (s(30), s(35)));
        assert_eq!(tl.bins[3].fraction(State::Closed), Some(1.0));
        let zero =
            RecorderOptions { horizon: s(20), instances: 1, timeline_bin: Some(Dur::ZERO), truth: vec![] };
        assert!(zero.validate().unwrap_err().to_string().contains("positive"));
        let fine = RecorderOptions {
            horizon: s(86_400 * 7),
            instances: 1,
            timeline_bin: Some(Dur(1)),
            truth: vec![],
        };
        assert!(fine.validate().unwrap_err().to_string().contains("at most 200000 bins"));
        assert!(Recorder::new(zero).finish(s(20)).timeline.is_none());
    }
}
