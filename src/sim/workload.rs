//! The request stream of one (scenario, replicate): arrivals, the dependency that answers them and
//! the ground truth. Built once and shared by every configuration run on it, so all of them see
//! the same arrivals and the same answer for the same request attempt (common random numbers).

use crate::outcome::{Answer, OutcomeClass};
use crate::rng::{RunSeed, Stream};
use crate::scenario::{InputError, Scenario, Source};
use crate::time::{Dur, SimTime};
use crate::truth::IncidentWindow;
use crate::upstream::script::ScriptRow;
use crate::upstream::{CapacitySpec, Dependency};

/// Where answers come from during a run.
#[derive(Debug, Clone)]
pub enum Answers {
    /// Drawn from the dependency model (baseline plus incidents).
    Model(Box<Dependency>),
    /// A script has no answers beyond its rows: it makes no retries.
    Script,
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
