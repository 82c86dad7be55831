//! breakerlab: a deterministic discrete-event workbench for tuning circuit breakers.
//!
//! Data flows one way: scenario → request stream → engine (policy, client, upstream) →
//! recorder → scoring → report. The application layer ([`app`]) is the one place that writes
//! files; nothing reads the wall clock, the environment or the command line.
//!
//! The public face: the commands ([`app`], each a typed request and report), the one error type
//! ([`Error`], with [`Error::exit_code`]), what a program needs to build and simulate a scenario
//! itself ([`Scenario`], [`PolicySpec`], [`Workload`], [`run`], [`simulate`], [`Metrics`]), the
//! values the command line parses ([`Dur`], [`Limits`], [`ClientFlags`], [`ShardId`],
//! [`Library`]) and the trace importers ([`trace`], one module per format). Every other module
//! (engine, policies, scoring, sweep machinery, renderers, the upstream model) is private.

pub mod app;
mod client;
mod deploy;
mod error;
#[cfg(test)]
mod fuzz;
mod limits;
mod metrics;
mod outcome;
mod policy;
mod positioned;
mod report;
mod rng;
mod scenario;
mod sim;
mod sweep;
mod time;
pub mod trace;
mod traffic;
mod truth;
mod units;
mod upstream;

pub use client::flags::{ClientFlags, parse_backoff, parse_fallback};
pub use client::{BudgetSpec, FallbackSpec, Persist};
pub use error::{Error, Result};
pub use limits::{Limits, parse_bytes, parse_calls};
pub use metrics::{Metric, Metrics, RunRecord};
pub use outcome::{OutcomeClass, Verdict};
pub use policy::{Library, PolicyConfig, PolicySpec};
pub use scenario::{InputError, Scenario, Source, Strategy, parse_seed};
pub use sim::{Chunk, RunOptions, RunResult, Simulation, Workload, run, scored, simulate, simulate_fleet};
pub use sweep::shard::{SCHEDULER_VARIABLES, ShardId};
pub use time::{Dur, SimTime};
