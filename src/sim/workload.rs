//! The request stream of one (scenario, replicate): arrivals, the dependency that answers them and
//! the ground truth. Built once and shared by every configuration run on it, so all of them see
//! the same arrivals and the same answer for the same request attempt (common random numbers).

use crate::outcome::{Answer, OutcomeClass};
use crate::rng::{RunSeed, Stream};
use crate::scenario::{InputError, Scenario, Source, Strategy};
use crate::time::{Dur, SimTime};
use crate::trace::{CallTrace, GapPolicy, IntervalTrace, Trace};
use crate::truth::{Expect, IncidentWindow};
use crate::upstream::script::ScriptRow;
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
            Source::Trace { trace, traffic, truth, .. } => {
                let mut arrivals = match (trace, traffic) {
                    (_, Some(model)) => model.arrivals(scenario.duration, &run_seed),
                    (Trace::Interval(t), None) => {
                        let seed = run_seed.seed_for(Stream::Arrivals, 0);
                        t.arrivals(seed).ok_or_else(|| {
                            in_file("the trace has no request counts: add [traffic]".to_string())
                        })?
                    }
                    (Trace::Calls(c), None) => c.arrivals(),
                };
                // Sorted: cutting the tail keeps request i = logged call i for a per-call log.
                arrivals.truncate(arrivals.partition_point(|t| *t < horizon));
                let (first_answers, answers) = match trace {
                    Trace::Interval(t) => {
                        if t.gap_policy() == GapPolicy::Missing {
                            // Missing data: nothing arrives in a gap, so nothing there is scored.
                            arrivals.retain(|at| !t.is_missing(*at));
                        }
                        let first = arrivals
                            .iter()
                            .enumerate()
                            .map(|(i, &at)| t.answer(at, &mut run_seed.draw(Stream::Upstream, i as u64, 1)))
                            .collect();
                        (first, Answers::Interval(Arc::clone(t)))
                    }
                    Trace::Calls(c) => (Vec::new(), Answers::Calls(Arc::clone(c))),
                };
                Ok(Workload {
                    seed: run_seed,
                    horizon,
                    arrivals,
                    first_answers,
                    answers,
                    truth: truth.clone().unwrap_or_default(),
                    capacity: None,
                    truth_known: truth.is_some(),
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
            Answers::Interval(trace) => {
                trace.answer(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
            Answers::Calls(log) if attempt == 1 => log.first_answer(request as usize),
            Answers::Calls(log) => {
                log.answer_near(at, &mut self.seed.draw(Stream::Upstream, request, attempt))
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(dir: &Path, file: &str, data: &str, extra: &str) -> Scenario {
        std::fs::write(dir.join(file), data).unwrap();
        let text = format!("[trace]\nfile = \"{file}\"\n{extra}");
        Scenario::parse(&dir.join("s.toml"), &text).unwrap()
    }

    #[test]
    fn per_call_logs_replay_arrivals_and_first_answers_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let data = "ts_ms,latency_ms,status\n1000,5,200\n1000,7,503\n1250,9,429\n4000,11,200\n";
        let s = scenario(dir.path(), "calls.csv", data, "");
        let w = Workload::build(&s, 3, 0).unwrap();
        assert_eq!(w.arrivals, vec![SimTime(0), SimTime(0), SimTime(250_000), SimTime(3_000_000)]);
        assert!(w.first_answers.is_empty(), "first answers are read from the log, not copied");
        let classes = [OutcomeClass::Ok, OutcomeClass::Error, OutcomeClass::RateLimited, OutcomeClass::Ok];
        for (i, class) in classes.iter().enumerate() {
            let a = w.answer(i as u64, 1, w.arrivals[i]);
            assert_eq!((a.latency, a.class), (Dur::from_millis(5 + 2 * i as u64), *class));
        }
        // A retry at 3.9 s draws from the calls nearest in time: all four are candidates.
        let retry = w.answer(2, 2, SimTime(3_900_000));
        assert!([5_000, 7_000, 9_000, 11_000].contains(&retry.latency.0));
        assert_eq!(retry, w.answer(2, 2, SimTime(3_900_000)), "same draw for the same attempt");
        assert!(!w.truth_known);
        assert_eq!(w.horizon, SimTime(4_000_000));
    }

    #[test]
    fn interval_traces_use_counts_or_traffic_and_skip_missing_gaps() {
        let dir = tempfile::tempdir().unwrap();
        // Minutes 0, 1, then a gap until minute 5.
        let data =
            "ts,requests,error_rate,p50_ms,p95_ms\n0,30,0,100,300\n60,20,1,100,300\n300,10,0,100,300\n";
        let extra = "gaps = \"missing\"\ninterval = \"1m\"\nslo = \"error_rate > 0.5\"\n";
        let s = scenario(dir.path(), "agg.csv", data, extra);
        let w = Workload::build(&s, 1, 0).unwrap();
        assert_eq!(w.arrivals.len(), 60, "exactly the logged counts, nothing in the gap");
        assert_eq!(w.arrivals.iter().filter(|t| **t >= SimTime(60_000_000)).count(), 30);
        assert_eq!(w.first_answers.len(), 60);
        // Minute 1 logs 100 % errors: every answer there fails, retries included.
        for (i, at) in w.arrivals.iter().enumerate().filter(|(_, t)| (60..120).contains(&(t.0 / 1_000_000))) {
            assert_eq!(w.first_answers[i].class, OutcomeClass::Error);
            assert_eq!(w.answer(i as u64, 2, *at).class, OutcomeClass::Error);
        }
        assert!(w.truth_known);
        assert_eq!((w.truth[0].start, w.truth[0].end), (SimTime(60_000_000), SimTime(120_000_000)));
        // A traffic model replaces the counts; arrivals in the missing gap are dropped.
        let s = scenario(
            dir.path(),
            "agg.csv",
            data,
            "gaps = \"missing\"\ninterval = \"1m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n",
        );
        let w = Workload::build(&s, 1, 0).unwrap();
        assert_eq!(w.arrivals.len(), 120 + 60, "0..120 s and 300..360 s, one a second");
        assert!(!w.truth_known);
    }
}
