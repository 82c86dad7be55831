//! breakerlab: a deterministic discrete-event workbench for tuning circuit breakers.
//!
//! The workspace has two crates. [`breakerlab_model`] is the model: breaker policies, clients,
//! dependencies, the engine and scoring, without files or threads of its own. This crate adds
//! what deals with files and people: the importers ([`trace`]), scenario files ([`scenario`]),
//! sweeps, the reports and the command line. Data flows one way: scenario → request stream →
//! engine (policy, client, upstream) → recorder → scoring → report; nothing reads the wall
//! clock, and the same inputs give the same bytes.
//!
//! A program can simulate a scenario itself:
//!
//! ```
//! use breakerlab::{Metric, PolicySpec, RunOptions, Workload, scenario};
//! use std::path::Path;
//!
//! // Twenty requests a second for ten minutes; the dependency is down from minute 2 to 5.
//! let text = r#"
//!     duration = "10m"
//!     [traffic]
//!     kind = "poisson"
//!     rate = 20.0
//!     [upstream]
//!     p50 = "80ms"
//!     p95 = "300ms"
//!     [[incidents]]
//!     kind = "outage"
//!     start = "2m"
//!     duration = "3m"
//! "#;
//! let scenario = scenario::parse(Path::new("outage.toml"), text)?;
//! let policy = PolicySpec::new("resilience4j-count").resolve()?;
//! let workload = Workload::build(&scenario, scenario.seed, 0)?;
//! let result = breakerlab::run(&scenario, &workload, &policy, &RunOptions::default());
//! assert_eq!(result.metrics.get(Metric::MissedIncidents), Some(0.0));
//! # Ok::<(), breakerlab::Error>(())
//! ```
//!
//! [`sweep`] runs a sweep file (many configurations on many scenarios, and which one to deploy)
//! into an output folder, as `breakerlab sweep` does. The command line's other commands live in
//! `app`, which is the binary's and not documented here.

#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod app;
mod deploy;
mod limits;
mod positioned;
mod report;
pub mod scenario;
mod script;
mod sweep;
pub mod trace;

#[cfg(test)]
use breakerlab_model::rng;
use breakerlab_model::{client, metrics, outcome, policy, sim, time, traffic, truth, units, upstream};

pub use app::sweep::{SweepReport, SweepRequest, sweep};
pub use breakerlab_model::metrics::{Metric, Metrics};
pub use breakerlab_model::policy::{Library, PolicySpec};
pub use breakerlab_model::sim::{RunOptions, RunResult, Workload, run, simulate};
pub use breakerlab_model::time::{Dur, SimTime};
pub use breakerlab_model::{Error, InputError, Result};
pub use scenario::Scenario;
