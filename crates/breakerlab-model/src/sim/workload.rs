//! The request stream of one (scenario, replicate): arrivals, the dependency that answers them and
//! the ground truth. Built once and shared by every configuration run on it, so all of them see
//! the same arrivals and the same answer for the same request attempt (common random numbers).

use crate::outcome::{Answer, OutcomeClass};
use crate::rng::{RunSeed, Stream};
use crate::scenario::{InputError, Scenario, Source, Strategy};
use crate::time::{Dur, SimTime};
use crate::trace::{CallTrace, GapPolicy, IntervalTrace, Trace};
use crate::traffic::{ArrivalIter, TrafficSpec};
use crate::truth::{Expect, IncidentWindow};
use crate::upstream::pool::Pool;
use crate::upstream::script::{ScriptCalls, ScriptRow};
use crate::upstream::{CapacitySpec, Dependency};
use std::sync::Arc;

/// Where answers come from during a run.
#[derive(Debug, Clone)]
pub enum Answers {
    /// Drawn from the dependency model (baseline plus incidents).
    Model(Box<Dependency>),
    /// A script has no answers beyond its rows: it makes no retries.
    Script,
    /// An interval trace: first answers are precomputed; later attempts draw from the interval
    /// at their time with the run's (request, attempt) generator.
    Interval(Arc<IntervalTrace>),
    /// A per-call log: first attempts replay the logged call exactly (read straight from the log,
    /// so a long log is not copied into `first_answers`); later attempts take one of the logged
    /// calls nearest in time.
    Calls(Arc<CallTrace>),
    /// Several providers, each with its own dependency model (`[[providers]]`).
    Providers(Box<Providers>),
    /// A pool of hosts behind each client's load balancer (`[upstream] hosts`): an attempt's
    /// answer depends on the host it is sent to ([`Workload::host_answer`]).
    Pool(Box<Pool>),
}

/// The providers of a multi-provider scenario, resolved for one horizon. Provider `p` answers
/// attempt `a` of request `r` from `seed.draw(Stream::Upstream, r | p << 48, a)` (see
/// [`Workload::provider_answer`]), so every configuration sees the same answer from the same
/// provider for the same attempt.
#[derive(Debug, Clone)]
pub struct Providers {
    /// How the client orders them.
    pub strategy: Strategy,
    /// Names, in file order.
    pub names: Vec<String>,
    /// Price per call, in file order.
    pub prices: Vec<f64>,
    /// Each provider's dependency model.
    pub dependencies: Vec<Dependency>,
    /// Each provider's capacity, when limited, with its healthy median latency.
    pub capacities: Vec<Option<(CapacitySpec, Dur)>>,
    /// Each provider's incident windows `[start, end)` expecting `open`, sorted by start: the
    /// incidents whose failover delay is measured.
    pub open_windows: Vec<Vec<(SimTime, SimTime)>>,
}

impl Providers {
    /// How many providers there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there are none (a validated scenario always has at least one).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Requests in one chunk of the request stream: big enough that handing a chunk to every
/// configuration costs nothing next to simulating it, small enough (about 2.5 MB with first
/// answers) that a run's memory does not depend on its length.
pub const CHUNK_REQUESTS: usize = 1 << 16;

/// Requests in one chunk of a script's stream in a streamed run ([`Workload::streamed`]): its
/// answered calls are handed out after each chunk to be written to calls.csv, so a sixteenth of
/// [`CHUNK_REQUESTS`] keeps them few (a lower peak), at no cost to the run.
pub const SCRIPT_CHUNK_REQUESTS: usize = 1 << 12;

/// Everything a run needs that does not depend on the breaker configuration. The requests
/// themselves are not stored: [`Workload::stream`] generates them chunk by chunk as the run's
/// clock advances (every draw comes from a counter-based seed, so a chunk is the same whoever
/// generates it and whenever), and a sweep hands each chunk to every configuration.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Seeds every random draw of this (scenario, replicate).
    pub seed: RunSeed,
    /// Arrivals happen before this instant; periodic work stops here.
    pub horizon: SimTime,
    /// Where arrivals come from.
    arrivals: Arrivals,
    /// Answers to attempts.
    pub answers: Answers,
    /// Incident windows to score against, sorted by start.
    pub truth: Vec<IncidentWindow>,
    /// The dependency's capacity, when it has a limit (overload feedback), and its healthy
    /// median latency (the service time of a queued call).
    pub capacity: Option<(CapacitySpec, Dur)>,
    /// False when there is no ground truth at all (a script without incidents): scores that
    /// need it are left empty.
    pub truth_known: bool,
    /// A per-call log that names each call's host, as a pool ([`Pool::replay`]): run by an
    /// engine whose policies include an outlier detector or when the scenario named the host
    /// column ([`Pool::runs`]); any other run replays the log as one dependency.
    replay_pool: Option<Box<Pool>>,
}

/// Where a workload's arrivals come from.
#[derive(Debug, Clone)]
enum Arrivals {
    /// A traffic model over the scenario's duration.
    Traffic(TrafficSpec, Dur),
    /// The request counts of an interval trace, drawn interval by interval.
    Counts(Arc<IntervalTrace>),
    /// The logged calls of a per-call trace, exactly.
    Logged(Arc<CallTrace>),
    /// The rows of a script, exactly.
    Script(Arc<ScriptCalls>),
}

/// One chunk of the request stream: requests `first ..` arriving at `arrivals`, with the
/// answers to their first attempts when the workload draws them ahead (empty otherwise).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chunk {
    /// The id of the chunk's first request.
    pub first: u64,
    /// Arrival times, sorted.
    pub arrivals: Vec<SimTime>,
    /// The dependency's answer to each request's first attempt (the costliest draws of a run,
    /// made once per chunk and shared by every configuration), or empty.
    pub first_answers: Vec<Answer>,
}

/// The request stream of one workload, generated chunk by chunk ([`Workload::stream`]).
pub struct RequestStream<'a> {
    workload: &'a Workload,
    source: Gen,
    next_request: u64,
    chunk_len: usize,
}

/// The generator state behind a [`RequestStream`].
enum Gen {
    Traffic(Box<ArrivalIter>),
    /// Interval `next` is drawn next; `buffer[pos..]` holds the arrivals drawn but not handed out.
    Counts {
        next: usize,
        buffer: Vec<SimTime>,
        pos: usize,
    },
    /// Index of the next logged call.
    Rows(usize),
    /// Index of the next script row.
    Script(usize),
}

impl RequestStream<'_> {
    /// Fills `chunk` with the next requests (at most the stream's chunk length); false when the
    /// stream has ended (the chunk is then empty). Allocates only while the chunk's buffers grow
    /// to their working size.
    pub fn next_chunk(&mut self, chunk: &mut Chunk) -> bool {
        chunk.first = self.next_request;
        chunk.arrivals.clear();
        chunk.first_answers.clear();
        let w = self.workload;
        let keep = |at: SimTime| match &w.answers {
            Answers::Interval(t) => {
                at < w.horizon && !(t.gap_policy() == GapPolicy::Missing && t.is_missing(at))
            }
            Answers::Calls(_) => at < w.horizon,
            _ => true,
        };
        let n = self.chunk_len;
        match &mut self.source {
            Gen::Traffic(iter) => {
                while chunk.arrivals.len() < n {
                    match iter.next() {
                        Some(at) if keep(at) => chunk.arrivals.push(at),
                        Some(_) => {}
                        None => break,
                    }
                }
            }
            Gen::Counts { next, buffer, pos } => {
                let Arrivals::Counts(trace) = &w.arrivals else { unreachable!("counts stream") };
                while chunk.arrivals.len() < n {
                    if *pos == buffer.len() {
                        if *next == trace.intervals().len() {
                            break;
                        }
                        buffer.clear();
                        *pos = 0;
                        trace.interval_arrivals(w.seed.seed_for(Stream::Arrivals, 0), *next, buffer);
                        *next += 1;
                        continue;
                    }
                    let at = buffer[*pos];
                    *pos += 1;
                    if keep(at) {
                        chunk.arrivals.push(at);
                    }
                }
            }
            Gen::Script(next) => {
                // Rows and their answers together, in one pass.
                let Arrivals::Script(rows) = &w.arrivals else { unreachable!("script stream") };
                *next += read_script_chunk(rows.rows().get(*next..).unwrap_or_default(), n, chunk);
            }
            Gen::Rows(next) => {
                let times = |i: usize| match &w.arrivals {
                    Arrivals::Logged(log) => log.arrival(i),
                    _ => None,
                };
                // Sorted: stopping at the first cut keeps request i = logged call i.
                while chunk.arrivals.len() < n
                    && let Some(at) = times(*next).filter(|at| keep(*at))
                {
                    chunk.arrivals.push(at);
                    *next += 1;
                }
            }
        }
        if w.draws_first_answers() {
            let first = chunk.first;
            chunk.first_answers.extend(
                chunk.arrivals.iter().enumerate().map(|(i, &at)| w.first_answer(first + i as u64, at)),
            );
        }
        self.next_request += chunk.arrivals.len() as u64;
        !chunk.arrivals.is_empty()
    }

    /// Every remaining request, chunk by chunk (tests and benches that want the whole stream).
    pub fn collect_chunks(mut self) -> Vec<Chunk> {
        let mut out = Vec::new();
        let mut chunk = Chunk::default();
        while self.next_chunk(&mut chunk) {
            out.push(std::mem::take(&mut chunk));
        }
        out
    }
}

impl Workload {
    /// Builds the stream for `scenario` under base seed `seed`, replicate `replicate`.
    pub fn build(scenario: &Scenario, seed: u64, replicate: u32) -> Result<Workload, InputError> {
        let run_seed = RunSeed::new(seed, &scenario.name, replicate);
        let horizon = SimTime(scenario.duration.micros());
        let in_file = |m: String| match &scenario.path {
            Some(p) => InputError::file(p, m),
            None => InputError::argument(m),
        };
        let mut w = Workload {
            seed: run_seed,
            horizon,
            arrivals: Arrivals::Script(Arc::new(ScriptCalls::default())),
            answers: Answers::Script,
            truth: Vec::new(),
            capacity: None,
            truth_known: true,
            replay_pool: None,
        };
        match &scenario.source {
            Source::Model { traffic, upstream, incidents, pool: Some(pool) } => {
                let model = Pool::new(pool, incidents, horizon).map_err(|e| in_file(e.to_string()))?;
                w.truth = model.ground_truth(incidents, horizon).map_err(|e| in_file(e.to_string()))?;
                w.arrivals = Arrivals::Traffic(traffic.clone(), scenario.duration);
                w.answers = Answers::Pool(Box::new(model));
                debug_assert!(upstream.capacity.is_none(), "validated: no capacity model per host");
            }
            Source::Model { traffic, upstream, incidents, pool: None } => {
                let dependency =
                    Dependency::new(upstream, incidents, horizon).map_err(|e| in_file(e.to_string()))?;
                w.truth = dependency.ground_truth();
                w.arrivals = Arrivals::Traffic(traffic.clone(), scenario.duration);
                w.answers = Answers::Model(Box::new(dependency));
                w.capacity = upstream.capacity.clone().map(|c| (c, upstream.p50));
            }
            Source::Providers { traffic, routing, providers } => {
                let (model, truth) = Providers::build(routing.strategy, providers, horizon, in_file)?;
                w.truth = truth;
                w.arrivals = Arrivals::Traffic(traffic.clone(), scenario.duration);
                w.answers = Answers::Providers(Box::new(model));
            }
            Source::Script { rows, incidents } => {
                w.truth_known = !incidents.is_empty();
                if !incidents.is_empty() {
                    let spec = crate::upstream::UpstreamSpec::default();
                    w.truth = Dependency::new(&spec, incidents, horizon)
                        .map_err(|e| in_file(e.to_string()))?
                        .ground_truth();
                }
                w.arrivals = Arrivals::Script(Arc::clone(rows));
            }
            Source::Trace { trace, traffic, truth, balancer: replay_balancer, .. } => {
                let replay_balancer = *replay_balancer;
                w.arrivals = match (trace, traffic) {
                    (_, Some(model)) => Arrivals::Traffic(model.clone(), scenario.duration),
                    (Trace::Interval(t), None) if t.has_counts() => Arrivals::Counts(Arc::clone(t)),
                    (Trace::Interval(_), None) => {
                        return Err(in_file("the trace has no request counts: add [traffic]".to_string()));
                    }
                    (Trace::Calls(c), None) => Arrivals::Logged(Arc::clone(c)),
                };
                w.answers = match trace {
                    Trace::Interval(t) => Answers::Interval(Arc::clone(t)),
                    Trace::Calls(c) => Answers::Calls(Arc::clone(c)),
                };
                if let (Trace::Calls(c), None) = (trace, traffic) {
                    w.replay_pool = Pool::replay(c, replay_balancer).map(Box::new);
                }
                w.truth = truth.clone().unwrap_or_default();
                w.truth_known = truth.is_some();
            }
        }
        Ok(w)
    }

    /// The request stream, from the first request, in chunks of [`CHUNK_REQUESTS`].
    pub fn stream(&self) -> RequestStream<'_> {
        self.stream_in_chunks_of(CHUNK_REQUESTS)
    }

    /// The request stream of a streamed run ([`super::run_fleet_streaming`]): a script's in
    /// chunks of [`SCRIPT_CHUNK_REQUESTS`], any other in chunks of [`CHUNK_REQUESTS`].
    pub fn streamed(&self) -> RequestStream<'_> {
        match self.answers {
            Answers::Script => self.stream_in_chunks_of(SCRIPT_CHUNK_REQUESTS),
            _ => self.stream(),
        }
    }

    /// The request stream in chunks of `len` requests (at least one; a long streamed script's
    /// in chunks of at most [`SCRIPT_CHUNK_REQUESTS`], the few read ahead kept small).
    pub fn stream_in_chunks_of(&self, len: usize) -> RequestStream<'_> {
        let source = match &self.arrivals {
            Arrivals::Traffic(spec, duration) => {
                Gen::Traffic(Box::new(spec.arrival_iter(*duration, &self.seed)))
            }
            Arrivals::Counts(_) => Gen::Counts { next: 0, buffer: Vec::new(), pos: 0 },
            Arrivals::Logged(_) => Gen::Rows(0),
            Arrivals::Script(_) => Gen::Script(0),
        };
        RequestStream { workload: self, source, next_request: 0, chunk_len: len.max(1) }
    }

    /// Whether chunks carry first answers drawn here: for a model or an interval trace, whose
    /// draws are the costliest of a run (a log is read directly; a script's stream reads them
    /// with its rows; providers are drawn when each one is tried).
    fn draws_first_answers(&self) -> bool {
        matches!(self.answers, Answers::Model(_) | Answers::Interval(_))
    }

    /// The answer to the first attempt of `request`, which arrived at `arrival`: a pure function
    /// of the two, so a chunk may draw it ahead and a call that waited draws the same again.
    #[inline]
    pub fn first_answer(&self, request: u64, arrival: SimTime) -> Answer {
        self.answer(request, 1, arrival)
    }

    /// The answer to `attempt` (1 = first) of `request`, sent at `at` (a first attempt's
    /// answer is drawn at the request's arrival: pass it as `at`).
    pub fn answer(&self, request: u64, attempt: u32, at: SimTime) -> Answer {
        match &self.answers {
            Answers::Model(dependency) => {
                dependency.answer(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            // A call that waited asks again.
            Answers::Script => match &self.arrivals {
                Arrivals::Script(rows) => {
                    let row = usize::try_from(request).ok().and_then(|i| rows.rows().get(i));
                    row.map_or(NO_ROW_ANSWER, script_answer)
                }
                _ => unreachable!("a script workload streams its rows"),
            },
            Answers::Interval(trace) => {
                trace.answer(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            Answers::Calls(log) if attempt == 1 => log.first_answer(request as usize),
            Answers::Calls(log) => {
                log.answer_near(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            Answers::Providers(_) => self.provider_answer(0, request, attempt, at),
            // Without a host (the timeline's true health): host `request mod hosts`, a uniform
            // sample of the pool.
            Answers::Pool(pool) => {
                let host = (request % u64::from(pool.len())) as u16;
                self.host_answer(host, request, attempt, at).0
            }
        }
    }

    /// The answer of host `host` of the pool to `attempt` of `request`, sent at `at`, with its
    /// status code ([`Pool::answer`]): drawn from `seed.draw(Stream::Upstream, request,
    /// attempt)`, the same numbers whichever host the balancer chose. A replayed pool answers
    /// a first attempt sent to the host its log names with the logged answer, and any other
    /// attempt from that host's logged calls nearest `at`.
    #[inline]
    pub fn host_answer(&self, host: u16, request: u64, attempt: u32, at: SimTime) -> (Answer, u16) {
        match &self.answers {
            Answers::Pool(pool) => {
                pool.answer(host, at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            Answers::Calls(log) if self.replay_pool.is_some() => {
                if attempt == 1 && log.host_of(request) == Some(host) {
                    let a = log.first_answer(request as usize);
                    return (a, Pool::class_code(a.class));
                }
                let a =
                    log.answer_near_host(host, at, &mut self.seed.draw(Stream::Upstream, request, attempt));
                (a, Pool::class_code(a.class))
            }
            _ => {
                let a = self.answer(request, attempt, at);
                let code = if a.class == OutcomeClass::Error { 500 } else { 200 };
                (a, code)
            }
        }
    }

    /// The pool of hosts, for a scenario with `[upstream] hosts` or a per-call log that names
    /// hosts (which a run uses only when [`Pool::runs`]).
    pub fn pool(&self) -> Option<&Pool> {
        match &self.answers {
            Answers::Pool(p) => Some(p),
            _ => self.replay_pool.as_deref(),
        }
    }

    /// The answer of provider `provider` (file order) to `attempt` of `request`, sent at `at`:
    /// drawn from `seed.draw(Stream::Upstream, request | provider << 48, attempt)`. Without
    /// `[[providers]]` there is one provider and this is [`Workload::answer`].
    #[inline]
    pub fn provider_answer(&self, provider: u32, request: u64, attempt: u32, at: SimTime) -> Answer {
        match &self.answers {
            Answers::Providers(p) => {
                let key = request | (u64::from(provider) << 48);
                p.dependencies[provider as usize]
                    .answer(at, &mut self.seed.draw(Stream::Upstream, key, attempt))
            }
            _ => self.answer(request, attempt, at),
        }
    }

    /// The providers, for a multi-provider scenario.
    pub fn providers(&self) -> Option<&Providers> {
        match &self.answers {
            Answers::Providers(p) => Some(p),
            _ => None,
        }
    }

    /// The scenario's span.
    pub fn duration(&self) -> Dur {
        Dur(self.horizon.0)
    }
}

impl Providers {
    /// The providers of a `[[providers]]` scenario over `horizon`, and the ground truth of all
    /// of them (each window's kind prefixed with its provider's name, sorted by start).
    fn build(
        strategy: Strategy,
        providers: &[crate::scenario::ProviderSpec],
        horizon: SimTime,
        in_file: impl Fn(String) -> InputError,
    ) -> Result<(Providers, Vec<IncidentWindow>), InputError> {
        let mut dependencies = Vec::with_capacity(providers.len());
        let mut truth = Vec::new();
        let mut open_windows = Vec::with_capacity(providers.len());
        for (i, p) in providers.iter().enumerate() {
            let dependency = Dependency::new(&p.upstream, &p.incidents, horizon)
                .map_err(|m| in_file(format!("[[providers]] #{} (`{}`): {m}", i + 1, p.name)))?;
            let windows = dependency.ground_truth();
            open_windows.push(
                windows.iter().filter(|w| w.expect == Expect::Open).map(|w| (w.start, w.end)).collect(),
            );
            truth.extend(
                windows.into_iter().map(|w| IncidentWindow { kind: format!("{}:{}", p.name, w.kind), ..w }),
            );
            dependencies.push(dependency);
        }
        truth.sort_by_key(|w| w.start); // stable: equal starts keep file order
        let model = Providers {
            strategy,
            names: providers.iter().map(|p| p.name.clone()).collect(),
            prices: providers.iter().map(|p| p.price).collect(),
            dependencies,
            capacities: providers
                .iter()
                .map(|p| p.upstream.capacity.clone().map(|c| (c, p.upstream.p50)))
                .collect(),
            open_windows,
        };
        Ok((model, truth))
    }
}

/// The answer to a request past a script's rows (never asked: every request is a row).
const NO_ROW_ANSWER: Answer = Answer { latency: Dur(0), class: OutcomeClass::Error, retry_after: None };

/// Appends up to the first `n` of `rows` to `chunk`, each with its first answer; how many.
#[inline]
fn read_script_chunk(rows: &[ScriptRow], n: usize, chunk: &mut Chunk) -> usize {
    let rows = &rows[..n.min(rows.len())];
    chunk.arrivals.extend(rows.iter().map(|row| row.t));
    chunk.first_answers.extend(rows.iter().map(script_answer));
    rows.len()
}

/// A script row as an answer: ok → `ok`, otherwise a server error.
#[inline]
fn script_answer(row: &ScriptRow) -> Answer {
    let class = if row.ok { OutcomeClass::Ok } else { OutcomeClass::Error };
    Answer { latency: row.latency, class, retry_after: None }
}
