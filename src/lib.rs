//! breakerlab: a deterministic discrete-event workbench for tuning circuit breakers.
//!
//! Data flows one way: scenario → request stream → engine (policy, client, upstream) →
//! recorder → scoring → report. The application layer ([`app`]) is the one place that writes
//! files; nothing reads the wall clock, the environment or the command line.

pub mod app;
pub mod client;
mod error;
pub mod limits;
pub mod metrics;
pub mod outcome;
pub mod policy;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod time;
pub mod trace;
pub mod traffic;
pub mod truth;
pub mod units;
pub mod upstream;

pub use error::{Error, Result};
