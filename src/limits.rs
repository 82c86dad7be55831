//! Resource limits, checked before anything runs. From the inputs alone (validated scenarios,
//! resolved policies, replicates, threads) it estimates the memory and the simulated calls of a
//! whole command (run, replay, sweep, compare), and refuses one that passes a limit with the
//! file, line and field that drive it. The defaults suit a 24 GiB, 2-core machine;
//! `--max-memory`, `--max-calls` and `--max-events` change them.
//!
//! Events are the engine's work beyond the calls themselves: every cycle of a retry queue
//! (`[client.fallback] kind = "retry_queue"`) offers each deferred request again, so a short
//! `cycle` across a long incident makes far more events than calls; a breaker that lets one
//! call through at a time (pybreaker's lock) offers each waiting call again when it frees.
//!
//! The estimate follows what the engine holds: each (scenario, replicate)'s request stream, in
//! chunks (the chunk being simulated and the next one being generated; a sweep generates a few
//! streams side by side and shares each with every configuration), per running simulation the
//! breakers of every client instance, the timeline bins and the calls in flight, and for a
//! sweep each cell's metric values and each (scenario, configuration)'s summary.

use crate::outcome::Answer;
use crate::policy::PolicyConfig;
use crate::scenario::{InputError, Scenario, Source, Spot};
use crate::sim::CHUNK_REQUESTS;
use crate::sim::auto_bin;
use crate::sweep::runner::{CHUNK_CELLS, Cells, SIMULATIONS_AT_ONCE, STREAMS_AT_ONCE};
use crate::sweep::shard::Slice;
use crate::sweep::store::SPILL_ABOVE;
use crate::time::{Dur, SimTime};
use crate::trace::Trace;
use crate::{Error, Result};
use std::fmt;
use std::mem::size_of;

/// Default memory limit: two thirds of a 24 GiB machine, leaving room for the system.
pub const DEFAULT_MAX_MEMORY: u64 = 16 << 30;

/// Default limit on simulated calls (attempts) for one command: about half an hour on two
/// cores at the engine's 10 million calls per second per core.
pub const DEFAULT_MAX_CALLS: u64 = 20_000_000_000;

/// Default limit on the engine's events (calls, retry-queue cycles and their deferred attempts,
/// waiting calls offered again) for one command: about half an hour on two cores at the 50 to
/// 100 million cheap events per second (most of them refusals) a retry queue's cycles run at.
pub const DEFAULT_MAX_EVENTS: u64 = 200_000_000_000;

/// How long a breaker may stay open after an incident ends, for a retry queue's estimate: the
/// presets' open durations are 5 s to 60 s.
const RECOVERY: Dur = Dur::from_secs(60);

/// Bytes per request of a request stream: its arrival time and its first attempt's answer.
const REQUEST_BYTES: u64 = (size_of::<SimTime>() + size_of::<Answer>()) as u64;

/// Per client instance outside its breaker: the recorder's state bookkeeping and the
/// client's retry state.
const INSTANCE_BYTES: u64 = 512;

/// Per call in flight: the engine's call record and its queued events.
const IN_FLIGHT_BYTES: u64 = 256;

/// Latency histograms, counters and buffers of one simulation, whatever its size.
const RUN_BASE_BYTES: u64 = 1 << 20;

/// Per result row of a sweep or comparison (one per cell): the metric values kept for
/// aggregation (in memory up to [`SPILL_ABOVE`] bytes, else in a scratch file, where each
/// costs a bit of memory: whether it was filled).
const CELL_BYTES: u64 = 64 * 16;

/// Per (scenario, configuration) of a sweep: its summary (the means and the cost), in memory
/// up to [`SPILL_ABOVE`] bytes, else in a scratch file read through a cache of blocks.
const SUMMARY_BYTES: u64 = 64 * 16;

/// Bytes of the scratch files' read cache per scenario.
const CACHE_BYTES: u64 = 32 << 10;

/// Limits on one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes the command may hold at once.
    pub max_memory: u64,
    /// Most calls (attempts) it may simulate in all.
    pub max_calls: u64,
    /// Most events the engine may process in all (calls included).
    pub max_events: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_memory: DEFAULT_MAX_MEMORY,
            max_calls: DEFAULT_MAX_CALLS,
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}

/// One contribution to an estimate, with the field that sets it.
#[derive(Clone, Debug)]
struct Part {
    memory: u64,
    calls: u64,
    /// Events beyond the calls (retry-queue cycles, waiting calls offered again).
    events: u64,
    spot: Spot,
    what: String,
}

/// The memory and simulated calls a command needs, as a sum of located parts.
#[derive(Clone, Debug, Default)]
pub struct Estimate {
    parts: Vec<Part>,
}

impl Estimate {
    /// Bytes held at most at once.
    pub fn memory(&self) -> u64 {
        self.parts.iter().fold(0, |a, p| a.saturating_add(p.memory))
    }

    /// Calls (attempts) simulated in all.
    pub fn calls(&self) -> u64 {
        self.parts.iter().fold(0, |a, p| a.saturating_add(p.calls))
    }

    /// Events processed in all: the calls and the events beyond them.
    pub fn events(&self) -> u64 {
        self.parts.iter().fold(0, |a, p| a.saturating_add(p.calls).saturating_add(p.events))
    }

    fn push(&mut self, memory: u64, calls: u64, spot: &Spot, what: String) {
        self.parts.push(Part { memory, calls, events: 0, spot: spot.clone(), what });
    }

    fn push_events(&mut self, events: u64, spot: &Spot, what: String) {
        self.parts.push(Part { memory: 0, calls: 0, events, spot: spot.clone(), what });
    }

    /// Refuses an estimate over a limit, at the field of its largest part.
    pub fn check(&self, limits: &Limits) -> Result<(), InputError> {
        let largest = |key: fn(&Part) -> u64| self.parts.iter().max_by_key(|p| key(p)).cloned();
        if self.memory() > limits.max_memory
            && let Some(p) = largest(|p| p.memory)
        {
            return Err(p.spot.error(format!(
                "this needs about {} of memory, more than the limit of {} (--max-memory); the largest part: {}",
                Bytes(self.memory()),
                Bytes(limits.max_memory),
                p.what
            )));
        }
        if self.calls() > limits.max_calls
            && let Some(p) = largest(|p| p.calls)
        {
            return Err(p.spot.error(format!(
                "this would simulate about {:.3e} calls, more than the limit of {:.3e} (--max-calls); \
                 the largest part: {}",
                self.calls() as f64,
                limits.max_calls as f64,
                p.what
            )));
        }
        if self.events() > limits.max_events
            && let Some(p) = largest(|p| p.calls.saturating_add(p.events))
        {
            return Err(p.spot.error(format!(
                "this would process about {:.3e} events (calls, retry-queue cycles and the deferred \
                 requests they offer again, waiting calls, breaker timers), more than the limit of {:.3e} (--max-events); \
                 the largest part: {}",
                self.events() as f64,
                limits.max_events as f64,
                p.what
            )));
        }
        Ok(())
    }
}

/// The size of one simulation of a scenario, apart from the request stream it shares.
struct RunSize {
    /// Mean requests offered and the field that sets them.
    requests: f64,
    /// The request stream's bytes.
    stream: u64,
    /// Calls simulated (requests times the most attempts each may make).
    calls: u64,
    /// Bytes one simulation holds beside the stream: breakers, timeline, calls in flight.
    engine: u64,
    /// The field that drives `engine` most, and how.
    engine_spot: Spot,
    engine_what: String,
    /// Bytes of an imported trace (held for the whole command).
    trace: u64,
    /// Events beyond the calls, each with the field that drives it and how.
    events: Vec<Events>,
}

/// Events of one run beyond its calls, of one kind.
struct Events {
    count: u64,
    spot: Spot,
    what: String,
}

fn run_size(scenario: &Scenario, policies: &[PolicyConfig], policy_spot: &Spot) -> RunSize {
    let o = &scenario.origins;
    let requests = scenario.expected_requests();
    let secs = scenario.duration.as_secs_f64().max(1e-6);
    let client = &scenario.client;
    let attempts = match scenario.source {
        Source::Script { .. } => 1,
        _ => client.retry.max_attempts.max(1),
    };
    let rate = requests / secs * f64::from(attempts);
    let instances = u64::from(client.instances.max(1));
    let breakers: u64 = if client.shared_breaker {
        policies.first().map_or(0, |p| p.footprint(rate))
    } else if policies.len() > 1 {
        policies.iter().map(|p| p.footprint(rate / instances as f64)).fold(0, u64::saturating_add)
    } else {
        policies.first().map_or(0, |p| p.footprint(rate / instances as f64)).saturating_mul(instances)
    };
    let per_instance = instances.saturating_mul(INSTANCE_BYTES).saturating_add(breakers);
    let (bins, drain) = timeline_bins(scenario, requests * f64::from(attempts));
    let bin_bytes = bins.saturating_mul(size_of::<crate::metrics::TimelineBin>() as u64);
    // Little's law: calls in flight = call rate x time each is in flight (at most the client's
    // timeout, and never more calls than the run makes).
    let in_flight_secs = client.timeout.as_secs_f64().clamp(1.0, secs.max(1.0));
    let in_flight =
        ((rate * in_flight_secs).min(requests * f64::from(attempts)) * IN_FLIGHT_BYTES as f64) as u64;
    // A breaker that lets one call through at a time may leave every later request waiting.
    let queuing = policies.iter().find(|p| p.queues_calls());
    let queued = queuing.map_or(0, |_| (requests * IN_FLIGHT_BYTES as f64) as u64);
    let (engine_spot, engine_what) = if let Some(policy) =
        queuing.filter(|_| queued > per_instance.max(bin_bytes))
    {
        let label = policy.label();
        (
            policy_spot.clone(),
            format!(
                "the breaker `{label}` lets one call through at a time (`serialize = true`, pybreaker's \
                 call() lock): up to {requests:.3e} requests may wait in line ({}); set serialize = false \
                 (calling()) or offer fewer requests",
                Bytes(queued)
            ),
        )
    } else if bin_bytes > per_instance && drain > Dur::ZERO {
        (
            o.latency.clone(),
            format!(
                "calls can take up to about {drain} with [upstream.capacity] holding them, so the run lasts that \
                 much longer: {bins} timeline bins ({})",
                Bytes(bin_bytes)
            ),
        )
    } else if bin_bytes > per_instance {
        (o.timeline_bin.clone(), format!("{bins} timeline bins ({})", Bytes(bin_bytes)))
    } else if instances > 1 && breakers > 0 {
        (
            o.instances.clone(),
            format!("{instances} client instances, each with its own breaker: {}", Bytes(per_instance)),
        )
    } else {
        let label = policies.first().map_or_else(String::new, PolicyConfig::label);
        (policy_spot.clone(), format!("the breaker `{label}` holds {}", Bytes(per_instance)))
    };
    let trace = match &scenario.source {
        Source::Trace { trace: Trace::Calls(c), .. } => c.len() as u64 * 16,
        Source::Trace { trace: Trace::Interval(t), .. } => t.intervals().len() as u64 * 256,
        Source::Script { rows, .. } => rows.len() as u64 * 32,
        _ => 0,
    };
    let mut events: Vec<Events> = retry_queue_events(scenario, requests).into_iter().collect();
    if queuing.is_some() {
        events.push(Events {
            count: requests as u64,
            spot: policy_spot.clone(),
            what: format!("up to {requests:.3e} waiting calls offered again as the breaker frees"),
        });
    }
    events.extend(timer_events(scenario, policies, policy_spot, requests * f64::from(attempts)));
    RunSize {
        events,
        requests,
        stream: stream_bytes(requests),
        calls: (requests * f64::from(attempts)) as u64,
        engine: RUN_BASE_BYTES
            .saturating_add(per_instance)
            .saturating_add(bin_bytes)
            .saturating_add(in_flight)
            .saturating_add(queued),
        engine_spot,
        engine_what,
        trace,
    }
}

/// A retry queue's events in one run: one per cycle while deferred work waits (every cycle of
/// the run, at most), and each cycle offers every deferred request again until it succeeds,
/// which is after the incident ends and the breaker has closed again, `R` later: a request
/// deferred at `t` into an incident of length `L` is offered about `(L + R - t) / cycle` times,
/// the incident's `rate · (L² / 2 + L · R) / cycle` in all. `R` is taken as the longer of a
/// tenth of the incident and [`RECOVERY`]. `None` without a retry queue.
fn retry_queue_events(scenario: &Scenario, requests: f64) -> Option<Events> {
    let crate::client::FallbackSpec::RetryQueue { cycle, .. } = scenario.client.fallback else { return None };
    let c = cycle.as_secs_f64().max(1e-6);
    let secs = scenario.duration.as_secs_f64().max(1e-6);
    let rate = requests / secs;
    let cycles = secs / c;
    let horizon = SimTime(scenario.duration.micros());
    let spans = |incidents: &[crate::upstream::IncidentSpec]| -> Vec<f64> {
        incidents
            .iter()
            .flat_map(|i| i.occurrences(horizon, 100_000).unwrap_or_default())
            .map(|(start, end)| {
                end.micros().min(horizon.micros()).saturating_sub(start.micros()) as f64 / 1e6
            })
            .collect()
    };
    let failing: Vec<f64> = match &scenario.source {
        Source::Model { incidents, .. } => spans(incidents),
        Source::Providers { providers, .. } => providers.iter().flat_map(|p| spans(&p.incidents)).collect(),
        Source::Trace { truth: Some(windows), .. } => windows
            .iter()
            .map(|w| w.end.micros().min(horizon.micros()).saturating_sub(w.start.micros()) as f64 / 1e6)
            .collect(),
        _ => Vec::new(),
    };
    let recovery = |l: f64| (l / 10.0).max(RECOVERY.as_secs_f64());
    let deferred: f64 = failing.iter().map(|l| rate * (l * l / 2.0 + l * recovery(*l)) / c).sum();
    let longest = failing.iter().copied().fold(0.0, f64::max);
    let events = (cycles + deferred).min(1.8e19) as u64;
    let what = format!(
        "a retry queue with cycle = {cycle}: {cycles:.3e} cycles, offering again about {deferred:.3e} deferred \
         requests (those deferred during {} incidents of up to {}, each offered every cycle until it succeeds); \
         a longer cycle makes fewer",
        failing.len(),
        Dur::from_secs_f64(longest)
    );
    Some(Events { count: events, spot: scenario.origins.cycle.clone(), what })
}

/// The events the breakers' own timers make in one run, whatever the traffic: an outlier
/// detector's ticks and active health checks (one per host every `health_check_interval`,
/// across the whole run), Hystrix's health snapshots ([`PolicyConfig::timer_events`]). One
/// breaker per client instance (one in all when they share it), each recording its share of
/// the `calls`.
fn timer_events(
    scenario: &Scenario,
    policies: &[PolicyConfig],
    policy_spot: &Spot,
    calls: f64,
) -> Option<Events> {
    let secs = scenario.duration.as_secs_f64();
    let client = &scenario.client;
    let breakers = if client.shared_breaker { 1 } else { u64::from(client.instances.max(1)) };
    let providers = match &scenario.source {
        Source::Providers { providers, .. } => providers.len().max(1) as u64,
        _ => 1,
    };
    let hosts = match &scenario.source {
        Source::Model { pool: Some(pool), .. } => pool.hosts.len() as u64,
        _ => 1,
    };
    let per_breaker = calls / (breakers * providers) as f64;
    // Client instance i runs policies[i % len] (a fleet), or the one policy.
    let n = policies.len().max(1) as u64;
    let (mut count, mut largest) = (0.0f64, None::<(f64, String)>);
    for (j, policy) in policies.iter().enumerate() {
        let share = (breakers / n + u64::from((j as u64) < breakers % n)) * providers;
        let Some((each, what)) = policy.timer_events(secs, hosts, per_breaker).filter(|_| share > 0) else {
            continue;
        };
        let all = each * share as f64;
        count += all;
        if largest.as_ref().is_none_or(|(most, _)| all > *most) {
            largest = Some((all, format!("`{}` on {share} breakers, each: {what}", policy.label())));
        }
    }
    let (_, what) = largest?;
    Some(Events { count: count.min(1.8e19) as u64, spot: policy_spot.clone(), what })
}

/// The bytes of one request stream being simulated: two chunks of at most [`CHUNK_REQUESTS`]
/// requests (the one fed to the simulations and the next, generated meanwhile), whatever the
/// run's length.
fn stream_bytes(requests: f64) -> u64 {
    (2.0 * requests.min(CHUNK_REQUESTS as f64) * REQUEST_BYTES as f64) as u64
}

/// Timeline bins a run fills, and how long after the horizon it may go on: with a capacity
/// limit the dependency keeps working on every call until it answers, so the run lasts until
/// the slowest of `calls` draws of its latency (lognormal through p50 and p95) is done.
fn timeline_bins(scenario: &Scenario, calls: f64) -> (u64, Dur) {
    let bin = scenario.scoring.timeline_bin.unwrap_or_else(|| auto_bin(scenario.duration)).micros().max(1);
    let drain = match &scenario.source {
        Source::Model { upstream, .. } if upstream.capacity.is_some() => {
            slowest_of(upstream.p50, upstream.p95, calls)
        }
        Source::Providers { providers, .. } => providers
            .iter()
            .filter(|p| p.upstream.capacity.is_some())
            .map(|p| slowest_of(p.upstream.p50, p.upstream.p95, calls))
            .max()
            .unwrap_or(Dur::ZERO),
        _ => Dur::ZERO,
    };
    let span = scenario.duration.micros().saturating_add(drain.micros());
    (span.div_ceil(bin), drain)
}

/// The expected largest of `n` lognormal draws with median `p50` and 95th percentile `p95`:
/// `p50 · (p95/p50)^(z/1.645)` with `z = √(2 ln n)`, the normal's typical maximum of `n` draws.
fn slowest_of(p50: Dur, p95: Dur, n: f64) -> Dur {
    let (p50, p95) = (p50.as_secs_f64().max(1e-6), p95.as_secs_f64().max(1e-6));
    let z = (2.0 * n.max(2.0).ln()).sqrt();
    let secs = p50 * (p95 / p50).powf(z / 1.644_853_6);
    if secs.is_finite() && secs < 1e12 { Dur::from_secs_f64(secs) } else { Dur::from_secs(1_000_000_000_000) }
}

/// The estimate of one run (`run`, `replay`) of `replicates` replicates, one after the other
/// (the first's request stream is kept beside the current one): `policies` holds one
/// configuration, or one per client instance of a fleet; `policy_spot` says where the
/// configuration was given.
pub fn estimate_run(
    scenario: &Scenario,
    policies: &[PolicyConfig],
    policy_spot: &Spot,
    replicates: u32,
) -> Estimate {
    let size = run_size(scenario, policies, policy_spot);
    let mut e = Estimate::default();
    let requests_spot = scenario.requests_spot();
    e.push(
        size.stream,
        size.calls,
        requests_spot,
        format!(
            "about {:.3e} requests over {} ({} of request stream, up to {:.3e} calls with retries)",
            size.requests,
            scenario.duration,
            Bytes(size.stream),
            size.calls as f64
        ),
    );
    e.push(size.engine, 0, &size.engine_spot, size.engine_what);
    for part in size.events {
        e.push_events(part.count.saturating_mul(u64::from(replicates.max(1))), &part.spot, part.what);
    }
    if replicates > 1 {
        let more = u64::from(replicates - 1);
        e.push(
            size.stream.saturating_add(size.engine),
            size.calls.saturating_mul(more),
            &Spot::flag("--replicates"),
            format!("{more} more replicates of about {:.3e} calls each", size.calls as f64),
        );
    }
    e.push(size.trace, 0, &scenario.origins.calls, format!("the imported calls ({})", Bytes(size.trace)));
    e
}

/// The estimate of a grid of cells (`sweep`, `compare`): every scenario under every
/// configuration, `cells.replicates` times. Up to [`STREAMS_AT_ONCE`] request streams of a scenario are generated side by side, each fed
/// to up to [`SIMULATIONS_AT_ONCE`] simulations; `replicates_spot` and `configs_spot` say where
/// the replicate count and the configurations were given. Each configuration is resolved once,
/// one at a time. `plan` is the cells that run: a shard's, whose rows are streamed to its
/// runs.csv; `None` for every cell, whose result rows and summaries are held to the end.
pub fn estimate_cells(
    cells: &Cells,
    plan: Option<&[Slice]>,
    replicates_spot: &Spot,
    configs_spot: &Spot,
) -> Result<Estimate, crate::Error> {
    let (scenarios, configs, replicates) = (cells.scenarios, cells.configs, cells.replicates);
    let mut e = Estimate::default();
    let reps = u64::from(replicates);
    let n_configs = configs.count() as u64;
    // The simulations of a batch are all alive at once, whatever the thread count.
    let running = n_configs.saturating_mul(reps).clamp(1, SIMULATIONS_AT_ONCE as u64);
    // Per scenario, the configuration whose simulation holds the most (the stream, the calls
    // and the trace are the scenario's, the same under any configuration).
    let mut largest: Vec<Option<RunSize>> = scenarios.iter().map(|_| None).collect();
    for i in 0..configs.count() {
        let policy = configs.resolve(i)?;
        for (k, scenario) in scenarios.iter().enumerate() {
            let size = run_size(scenario, std::slice::from_ref(&policy), configs_spot);
            if largest[k].as_ref().is_none_or(|l| size.engine > l.engine) {
                largest[k] = Some(size);
            }
        }
    }
    let mut peak = (0u64, None::<(Spot, String)>);
    let mut traces = 0u64;
    for (k, (scenario, biggest)) in scenarios.iter().zip(&largest).enumerate() {
        let Some(biggest) = biggest else { continue };
        let first = biggest;
        traces = traces.saturating_add(first.trace);
        let streams = first.stream.saturating_mul(reps.min(STREAMS_AT_ONCE as u64));
        let engines = biggest.engine.saturating_mul(running);
        let held = streams.saturating_add(engines);
        let run: u64 = match plan {
            Some(plan) => plan.iter().filter(|sl| sl.scenario == k).map(|sl| sl.configs.len() as u64).sum(),
            None => n_configs.saturating_mul(reps),
        };
        let calls = first.calls.saturating_mul(run);
        for part in &first.events {
            e.push_events(
                part.count.saturating_mul(run),
                &part.spot,
                format!("`{}`, {run} runs, each: {}", scenario.name, part.what),
            );
        }
        e.push(
            0,
            calls,
            replicates_spot,
            match plan {
                None => format!(
                    "`{}`: about {:.3e} calls per run x {n_configs} configurations x {replicates} replicates",
                    scenario.name, first.calls as f64
                ),
                Some(_) => format!(
                    "`{}`: about {:.3e} calls per run x {run} of this shard's cells",
                    scenario.name, first.calls as f64
                ),
            },
        );
        if held > peak.0 {
            let why = if streams >= engines {
                (
                    replicates_spot.clone(),
                    format!(
                        "`{}`: {} request streams generated side by side, {} each ({:.3e} requests)",
                        scenario.name,
                        reps.min(STREAMS_AT_ONCE as u64),
                        Bytes(first.stream),
                        first.requests
                    ),
                )
            } else {
                (
                    biggest.engine_spot.clone(),
                    format!("`{}`: {running} runs at once, each: {}", scenario.name, biggest.engine_what),
                )
            };
            peak = (held, Some(why));
        }
    }
    if let Some((spot, what)) = peak.1 {
        e.push(peak.0, 0, &spot, what);
    }
    let (kept, pairs) = match plan {
        Some(plan) => (plan.iter().map(|sl| sl.configs.len() as u64).sum::<u64>().min(CHUNK_CELLS as u64), 0),
        None => (
            (scenarios.len() as u64).saturating_mul(n_configs).saturating_mul(reps),
            (scenarios.len() as u64).saturating_mul(n_configs),
        ),
    };
    let spill = SPILL_ABOVE as u64;
    let rows = if plan.is_some() {
        kept.saturating_mul(CELL_BYTES)
    } else {
        kept.saturating_mul(CELL_BYTES).min(spill) + kept / 8
    };
    e.push(rows, 0, replicates_spot, format!("{kept} result rows ({} in memory)", Bytes(rows)));
    let cache = (scenarios.len() as u64 + 2).saturating_mul(CACHE_BYTES);
    let summaries = pairs.saturating_mul(SUMMARY_BYTES).min(spill).saturating_add(cache);
    e.push(
        summaries,
        0,
        configs_spot,
        format!("{pairs} summary rows, one per scenario and configuration ({})", Bytes(summaries)),
    );
    e.push(traces, 0, configs_spot, format!("the imported traces ({})", Bytes(traces)));
    Ok(e)
}

/// Parses a memory size: a number with an optional unit `B`, `K`/`KiB`, `M`/`MiB`, `G`/`GiB`,
/// `T`/`TiB` (powers of 1024; `KB`, `MB`, `GB`, `TB` are powers of 1000).
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| {
        Error::invalid(format!("expected a size such as \"8GiB\" or \"512MiB\", found {text:?}"))
    })?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        other => {
            return Err(Error::invalid(format!(
                "unknown size unit {other:?} in {text:?}: use B, KiB, MiB, GiB or TiB"
            )));
        }
    };
    let bytes = value * scale;
    if !(1.0..=1.8e19).contains(&bytes) {
        return Err(Error::invalid(format!("expected a size of at least 1 byte, found {text:?}")));
    }
    Ok(bytes as u64)
}

/// Parses a call count: a whole number, also in exponent form (`2e10`).
pub fn parse_calls(text: &str) -> Result<u64> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| Error::invalid(format!("expected a number of calls such as 2e10, found {text:?}")))?;
    if !(1.0..=1.8e19).contains(&value) || value.fract() != 0.0 {
        return Err(Error::invalid(format!("expected a whole number of calls, at least 1, found {text:?}")));
    }
    Ok(value as u64)
}

/// A byte count in binary units, for messages.
struct Bytes(u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut unit = 0;
        while v >= 1024.0 && unit < UNITS.len() - 1 {
            v /= 1024.0;
            unit += 1;
        }
        if unit == 0 { write!(f, "{} B", self.0) } else { write!(f, "{v:.1} {}", UNITS[unit]) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;
    use std::path::Path;

    fn scenario(text: &str) -> Scenario {
        Scenario::parse(Path::new("s.toml"), text).unwrap()
    }

    fn policy(preset: &str, sets: &[&str]) -> PolicyConfig {
        let mut s = PolicySpec::new(preset);
        for a in sets {
            let (k, v) = PolicySpec::parse_set(a).unwrap();
            s.overrides.insert(k, v);
        }
        s.resolve().unwrap()
    }

    const SMALL: &str = "duration = \"1h\"\n[traffic]\nkind = \"poisson\"\nrate = 5.0\n";

    #[test]
    fn a_small_run_fits_and_its_calls_scale_with_traffic_not_its_stream() {
        let s = scenario(SMALL);
        let e = estimate_run(&s, &[policy("consecutive", &[])], &Spot::flag("--policy"), 1);
        assert!(e.check(&Limits::default()).is_ok());
        assert_eq!(e.calls(), 18_000);
        let stream = |e: &Estimate| e.parts[0].memory;
        // 18,000 requests fit in one chunk: the stream holds them twice over at most.
        assert_eq!(stream(&e), 2 * 18_000 * REQUEST_BYTES);
        let big = scenario(&SMALL.replace("rate = 5.0", "rate = 500.0"));
        let e100 = estimate_run(&big, &[policy("consecutive", &[])], &Spot::flag("--policy"), 1);
        assert_eq!(e100.calls(), 100 * e.calls());
        // 1.8 million requests: still two chunks, as the engine generates them.
        assert_eq!(stream(&e100), 2 * CHUNK_REQUESTS as u64 * REQUEST_BYTES);
    }

    #[test]
    fn over_the_limit_names_the_field_that_drives_it() {
        let s = scenario(&format!("{SMALL}[client]\ntimeout = \"1s\"\ninstances = 100000\n"));
        let e =
            estimate_run(&s, &[policy("windowed", &["count_window=1000000"])], &Spot::flag("--policy"), 1);
        let err = e.check(&Limits::default()).unwrap_err().to_string();
        assert!(err.starts_with("s.toml:7:1: [client] instances: this needs about"), "{err}");
        assert!(err.contains("100000 client instances") && err.contains("--max-memory"), "{err}");
        // The same run fits in a larger limit.
        assert!(e.check(&Limits { max_memory: 1 << 50, ..Limits::default() }).is_ok());
        let tight = Limits { max_calls: 1000, ..Limits::default() };
        let err = estimate_run(&scenario(SMALL), &[policy("consecutive", &[])], &Spot::flag("--policy"), 1)
            .check(&tight)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("s.toml:4:1: [traffic] rate: this would simulate about 1.800e4 calls"),
            "{err}"
        );
    }

    #[test]
    fn a_breaker_that_serializes_calls_counts_every_request_as_possibly_waiting() {
        // A week at 300 requests/s: 181 million requests, each of which may wait on pybreaker's
        // lock (256 bytes each, 43 GiB); with calling() (serialize = false) nothing waits.
        let week = scenario(&SMALL.replace("1h", "7d").replace("rate = 5.0", "rate = 300.0"));
        let spot = Spot::flag("--policy");
        let err = estimate_run(&week, &[policy("pybreaker", &[])], &spot, 1)
            .check(&Limits::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--policy: this needs about"), "{err}");
        assert!(err.contains("up to 1.814e8 requests may wait in line (43.3 GiB)"), "{err}");
        let calling = estimate_run(&week, &[policy("pybreaker", &["serialize=false"])], &spot, 1);
        assert!(calling.check(&Limits::default()).is_ok());
        // An hour at 5 requests/s waits in line in a few MB.
        assert!(
            estimate_run(&scenario(SMALL), &[policy("pybreaker", &[])], &spot, 1)
                .check(&Limits::default())
                .is_ok()
        );
    }

    #[test]
    fn a_capacity_limit_with_a_huge_latency_tail_is_refused_at_p95() {
        let text = format!(
            "{}[upstream]\np50 = \"120ms\"\np95 = \"1d\"\n[upstream.capacity]\nconcurrency = 14\n",
            SMALL.replace("1h", "2h")
        );
        let e = estimate_run(&scenario(&text), &[policy("consecutive", &[])], &Spot::flag("--policy"), 1);
        let err = e.check(&Limits::default()).unwrap_err().to_string();
        assert!(err.starts_with("s.toml:7:1: [upstream] p95:") && err.contains("timeline bins"), "{err}");
        let fine = text.replace("p95 = \"1d\"", "p95 = \"2s\"");
        let e = estimate_run(&scenario(&fine), &[policy("consecutive", &[])], &Spot::flag("--policy"), 1);
        assert!(e.check(&Limits::default()).is_ok());
    }

    #[test]
    fn sweeps_are_refused_at_their_replicates_and_hold_a_few_streams() {
        let s = scenario(&SMALL.replace("1h", "7d").replace("5.0", "100.0"));
        let configs = vec![policy("consecutive", &[])];
        let spot = Spot { path: Some("sw.toml".into()), position: Some((3, 14)), field: "replicates".into() };
        let grid = |replicates| Cells {
            scenarios: std::slice::from_ref(&s),
            configs: &configs,
            replicates,
            seed: None,
        };
        let e = estimate_cells(&grid(65_535), None, &spot, &Spot::flag("--policy")).unwrap();
        let err = e.check(&Limits::default()).unwrap_err().to_string();
        assert!(err.starts_with("sw.toml:3:14: replicates: this would simulate about"), "{err}");
        assert!(err.contains("x 65535 replicates"), "{err}");
        // The streams are generated in chunks, a few at a time: memory does not follow the
        // replicates' length, only their result rows do.
        let (three, many) = (
            estimate_cells(&grid(3), None, &spot, &Spot::flag("--policy")).unwrap(),
            estimate_cells(&grid(65_535), None, &spot, &Spot::flag("--policy")).unwrap(),
        );
        assert!(three.check(&Limits::default()).is_ok(), "{:?}", three.check(&Limits::default()));
        assert!(many.memory() < 1 << 30, "{}", Bytes(many.memory()));
        assert!(three.memory() < 64 << 20, "{}", Bytes(three.memory()));
    }

    /// What a run of `s` under `p` did, from its counters: the calls (attempts sent and
    /// refused) and the engine's events that can be counted (the requests' arrivals beside them;
    /// a retry queue's re-offers are attempts or refusals).
    fn actual(s: &Scenario, p: &PolicyConfig) -> (f64, f64) {
        let workload = crate::sim::Workload::build(s, s.seed, 0).unwrap();
        let c = crate::sim::run(s, &workload, p, &crate::sim::RunOptions::default()).record.counters;
        let calls = (c.attempts + c.rejections) as f64;
        (calls, calls + c.requests as f64)
    }

    /// The estimate is never below what the run does, and at most `factor` times above it.
    fn within(what: &str, estimate: u64, actual: f64, factor: f64) {
        let e = estimate as f64;
        assert!(e >= actual && e <= factor * actual, "{what}: estimate {e:.3e}, actual {actual:.3e}");
    }

    const OUTAGE: &str = "[client.retry]\nmax_attempts = 3\nbase = \"200ms\"\n\
        [[incidents]]\nkind = \"outage\"\nstart = \"10m\"\nduration = \"20m\"\n";

    #[test]
    fn the_estimate_of_calls_and_events_stays_within_a_stated_factor_of_the_run() {
        // Half-open probes are calls: a 10 ms open duration with 50 probes per half-open episode
        // through a 20-minute outage makes the breaker cycle thousands of times, and still no
        // more calls than requests x attempts.
        let spot = Spot::flag("--policy");
        let probing = policy("consecutive", &["open_duration=10ms", "probes=50", "close_successes=50"]);
        let s = scenario(&format!("{SMALL}{OUTAGE}"));
        let e = estimate_run(&s, std::slice::from_ref(&probing), &spot, 1);
        let (calls, events) = actual(&s, &probing);
        within("probes: calls", e.calls(), calls, 3.0);
        within("probes: events", e.events(), events, 3.0);
        // A retry queue's cycles: each deferred request is offered again every 100 ms until the
        // outage ends, far more events than requests (the estimate within a factor of 3).
        let queue = format!("{SMALL}{OUTAGE}[client.fallback]\nkind = \"retry_queue\"\ncycle = \"100ms\"\n");
        let s = scenario(&queue);
        let consecutive = policy("consecutive", &[]);
        let e = estimate_run(&s, std::slice::from_ref(&consecutive), &spot, 1);
        let (_, events) = actual(&s, &consecutive);
        assert!(events > 50.0 * s.expected_requests(), "the cycles dominate: {events:.3e}");
        within("retry queue: events", e.events(), events, 3.0);
        // pybreaker's lock: every waiting call is offered again as it frees.
        let s = scenario(&format!("{SMALL}{OUTAGE}"));
        let pybreaker = policy("pybreaker", &[]);
        let e = estimate_run(&s, std::slice::from_ref(&pybreaker), &spot, 1);
        let (calls, events) = actual(&s, &pybreaker);
        within("pybreaker: calls", e.calls(), calls, 3.0);
        within("pybreaker: events", e.events(), events, 3.0);
    }

    #[test]
    fn probes_cycles_and_timers_that_dominate_are_refused_with_the_figure() {
        let spot = Spot::flag("--policy");
        let tight = Limits { max_events: 1_000_000, ..Limits::default() };
        // A retry queue cycling every microsecond: refused at its cycle.
        let s =
            scenario(&format!("{SMALL}{OUTAGE}[client.fallback]\nkind = \"retry_queue\"\ncycle = \"1us\"\n"));
        let err =
            estimate_run(&s, &[policy("consecutive", &[])], &spot, 1).check(&Limits::default()).unwrap_err();
        let err = err.to_string();
        assert!(err.starts_with("s.toml: [client.fallback] cycle: this would process about"), "{err}");
        assert!(err.contains("--max-events") && err.contains("a retry queue with cycle = 1us"), "{err}");
        // Probes are calls: refused above --max-calls with the figure.
        let probing = policy("consecutive", &["open_duration=1ms", "probes=1000"]);
        let err = estimate_run(&scenario(&format!("{SMALL}{OUTAGE}")), &[probing], &spot, 1)
            .check(&Limits { max_calls: 10_000, ..Limits::default() })
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("this would simulate about 5.400e4 calls") && err.contains("--max-calls"),
            "{err}"
        );
        // Active health checks of every host by every client, every millisecond, for a day.
        let pool = "duration = \"1d\"\n[traffic]\nkind = \"poisson\"\nrate = 0.01\n[client]\ninstances = 100\n\
            [upstream]\nhosts = 100\n";
        let checking = policy("envoy-outlier", &["health_check_interval=1ms"]);
        let err = estimate_run(&scenario(pool), std::slice::from_ref(&checking), &spot, 1)
            .check(&Limits::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--policy: this would process about 8.640e11 events"), "{err}");
        assert!(err.contains("8.640e9 active health checks (100 hosts"), "{err}");
        // Without them, only the detectors' ticks (every 10 s, for each of 100 clients): fine.
        let ticking = estimate_run(&scenario(pool), &[policy("envoy-outlier", &[])], &spot, 1);
        assert!(ticking.check(&Limits::default()).is_ok() && ticking.events() < 2_000_000);
        // Hystrix sums its window's buckets at every call: 10,000 of them with 1 ms snapshots.
        let hystrix = policy("hystrix", &["health_snapshot_interval=1ms"]);
        let e = estimate_run(&scenario(SMALL), &[hystrix], &spot, 1);
        let err = e.check(&tight).unwrap_err().to_string();
        assert!(err.contains("1.800e8 bucket sums (10000 buckets"), "{err}");
        assert!(estimate_run(&scenario(SMALL), &[policy("hystrix", &[])], &spot, 1).check(&tight).is_ok());
    }

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_bytes("16GiB").ok(), Some(16 << 30));
        assert_eq!(parse_bytes("512M").ok(), Some(512 << 20));
        assert_eq!(parse_bytes("2GB").ok(), Some(2_000_000_000));
        assert_eq!(parse_bytes("1.5 KiB").ok(), Some(1536));
        assert_eq!(parse_bytes("4096").ok(), Some(4096));
        assert!(parse_bytes("lots").unwrap_err().to_string().contains("8GiB"));
        assert!(parse_bytes("3 parsecs").unwrap_err().to_string().contains("unknown size unit"));
        assert!(parse_bytes("0").is_err());
        assert_eq!(Bytes(3 << 30).to_string(), "3.0 GiB");
        assert_eq!(parse_calls("2e10").ok(), Some(20_000_000_000));
        assert_eq!(parse_calls("1000").ok(), Some(1000));
        assert!(parse_calls("-5").is_err() && parse_calls("1.5").is_err() && parse_calls("x").is_err());
    }
}
