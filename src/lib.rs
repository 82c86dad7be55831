//! breakerlab: a deterministic discrete-event workbench for tuning circuit breakers.
//!
//! Data flows one way: scenario → request stream → engine (policy, client, upstream) →
//! recorder → scoring → report. Only `report` writes files; nothing reads the wall clock.

pub mod client;
pub mod commands;
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
