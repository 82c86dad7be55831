//! The request stream of one (scenario, replicate): arrivals, the dependency that answers them and
//! the ground truth. Built once and shared by every configuration run on it, so all of them see
//! the same arrivals and the same answer for the same request attempt (common random numbers).

use crate::outcome::{Answer, OutcomeClass};
use crate::rng::{RunSeed, Stream};
use crate::scenario::{InputError, Scenario, Source, Strategy};
use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};
use crate::upstream::script::ScriptRow;
use crate::upstream::{CapacitySpec, Dependency};

/// Where answers come from during a run.
#[derive(Debug, Clone)]
pub enum Answers {
    /// Drawn from the dependency model (baseline plus incidents).
    Model(Box<Dependency>),
    /// A script has no answers beyond its rows: it makes no retries.
    Script,
    /// Several providers, each with its own dependency model (`[[providers]]`).
    Providers(Box<Providers>),
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

/// Everything a run needs that does not depend on the breaker configuration.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Seeds every random draw of this (scenario, replicate).
    pub seed: RunSeed,
    /// Arrivals happen before this instant; periodic work stops here.
    pub horizon: SimTime,
    /// Request arrival times, sorted; request `i` arrives at `arrivals[i]`.
    pub arrivals: Vec<SimTime>,
    /// The dependency's answer to each request's first attempt, drawn once and shared by every
    /// configuration (the costliest draws of a run, and exactly common by construction).
    pub first_answers: Vec<Answer>,
    /// Answers to later attempts (retries, deferred work).
    pub answers: Answers,
    /// Incident windows to score against, sorted by start.
    pub truth: Vec<IncidentWindow>,
    /// The dependency's capacity, when it has a limit (overload feedback), and its healthy
    /// median latency (the service time of a queued call).
    pub capacity: Option<(CapacitySpec, Dur)>,
    /// False when there is no ground truth at all (a script without incidents): scores that
    /// need it are left empty.
    pub truth_known: bool,
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
        match &scenario.source {
            Source::Model { traffic, upstream, incidents } => {
                let dependency = Dependency::new(upstream, incidents, horizon).map_err(in_file)?;
                let truth = dependency.ground_truth();
                let arrivals = traffic.arrivals(scenario.duration, &run_seed);
                let first_answers = arrivals
                    .iter()
                    .enumerate()
                    .map(|(i, &at)| dependency.answer(at, &mut run_seed.draw(Stream::Upstream, i as u64, 1)))
                    .collect();
                let answers = Answers::Model(Box::new(dependency));
                Ok(Workload {
                    seed: run_seed,
                    horizon,
                    arrivals,
                    first_answers,
                    answers,
                    truth,
                    capacity: upstream.capacity.clone().map(|c| (c, upstream.p50)),
                    truth_known: true,
                })
            }
            Source::Providers { traffic, routing, providers } => {
                let mut dependencies = Vec::with_capacity(providers.len());
                let mut truth = Vec::new();
                let mut open_windows = Vec::with_capacity(providers.len());
                for (i, p) in providers.iter().enumerate() {
                    let dependency = Dependency::new(&p.upstream, &p.incidents, horizon)
                        .map_err(|m| in_file(format!("[[providers]] #{} (`{}`): {m}", i + 1, p.name)))?;
                    let windows = dependency.ground_truth();
                    open_windows.push(
                        windows
                            .iter()
                            .filter(|w| w.expect == Expect::Open)
                            .map(|w| (w.start, w.end))
                            .collect(),
                    );
                    truth.extend(
                        windows
                            .into_iter()
                            .map(|w| IncidentWindow { kind: format!("{}:{}", p.name, w.kind), ..w }),
                    );
                    dependencies.push(dependency);
                }
                truth.sort_by_key(|w| w.start); // stable: equal starts keep file order
                let arrivals = traffic.arrivals(scenario.duration, &run_seed);
                let model = Providers {
                    strategy: routing.strategy,
                    names: providers.iter().map(|p| p.name.clone()).collect(),
                    prices: providers.iter().map(|p| p.price).collect(),
                    dependencies,
                    capacities: providers
                        .iter()
                        .map(|p| p.upstream.capacity.clone().map(|c| (c, p.upstream.p50)))
                        .collect(),
                    open_windows,
                };
                Ok(Workload {
                    seed: run_seed,
                    horizon,
                    arrivals,
                    first_answers: Vec::new(),
                    answers: Answers::Providers(Box::new(model)),
                    truth,
                    capacity: None,
                    truth_known: true,
                })
            }
            Source::Script { rows, incidents } => {
                let truth_known = !incidents.is_empty();
                let truth = if incidents.is_empty() {
                    Vec::new()
                } else {
                    let spec = crate::upstream::UpstreamSpec::default();
                    Dependency::new(&spec, incidents, horizon).map_err(in_file)?.ground_truth()
                };
                let arrivals = rows.iter().map(|r| r.t).collect();
                let first_answers = rows.iter().map(script_answer).collect();
                Ok(Workload {
                    seed: run_seed,
                    horizon,
                    arrivals,
                    first_answers,
                    answers: Answers::Script,
                    truth,
                    capacity: None,
                    truth_known,
                })
            }
        }
    }

    /// The answer to `attempt` (1 = first) of `request`, sent at `at`.
    pub fn answer(&self, request: u64, attempt: u32, at: SimTime) -> Answer {
        if attempt == 1
            && let Some(a) = self.first_answers.get(request as usize)
        {
            return *a;
        }
        match &self.answers {
            Answers::Model(dependency) => {
                dependency.answer(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            Answers::Script => self.first_answers[request as usize],
            Answers::Providers(_) => self.provider_answer(0, request, attempt, at),
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

/// A script row as an answer: ok → `ok`, otherwise a server error.
fn script_answer(row: &ScriptRow) -> Answer {
    let class = if row.ok { OutcomeClass::Ok } else { OutcomeClass::Error };
    Answer { latency: row.latency, class, retry_after: None }
}
