//! breakerlab's model: circuit-breaker policies, clients, dependencies and the discrete-event
//! engine that runs them, with the scores a run gets. It reads no file, writes none and starts no
//! thread of its own (the engine's parallel parts run on rayon); `breakerlab` adds the
//! importers, the scenario and sweep files, the reports and the command line.
//!
//! Data flows one way: scenario → request stream → engine (policy, client, upstream) →
//! recorder → scoring.

#![forbid(unsafe_code)]

pub mod client;
mod error;
pub mod metrics;
pub mod outcome;
pub mod policy;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod time;
pub mod trace;
pub mod traffic;
pub mod truth;
pub mod units;
pub mod upstream;

pub use error::{Error, Result};
pub use scenario::InputError;
