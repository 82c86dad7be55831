//! breakerlab: a deterministic discrete-event workbench for tuning circuit breakers.
//!
//! Data flows one way: scenario → request stream → engine (policy, client, upstream) →
//! recorder → scoring → report. The application layer ([`app`]) is the one place that writes
//! files; nothing reads the wall clock, the environment or the command line.
//!
//! The public face: the commands ([`app`], each a typed request and report), the one error type
//! ([`Error`], with [`Error::exit_code`]), and what a program needs to build and simulate a
//! scenario itself ([`Scenario`], [`PolicySpec`], [`Workload`], [`sim::run`], [`Metrics`]).
//! Renderers, sweep machinery and the upstream model stay private.

pub mod app;
pub mod client;
mod error;
#[cfg(test)]
mod fuzz;
pub mod limits;
pub mod metrics;
pub mod outcome;
pub mod policy;
mod report;
mod rng;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod time;
pub mod trace;
mod traffic;
mod truth;
mod units;
mod upstream;

pub use error::{Error, Result};
pub use metrics::Metrics;
pub use policy::{PolicyConfig, PolicySpec};
pub use scenario::{InputError, Scenario};
pub use sim::{RunOptions, RunResult, Workload};
pub use time::Dur;
