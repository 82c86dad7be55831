//! Sweeps: many breaker configurations on many scenarios at once, and which one to deploy.
//!
//! A sweep file ([`file`]) names scenarios, policy grids ([`grid`]), replicates, an objective
//! ([`objective`]) and constraints ([`constraint`]). Results are a table of metric values per
//! cell (scenario × configuration × replicate) ([`table`]); statistics over replicates
//! ([`stats`]), Pareto fronts ([`pareto`]) and the recommendation ([`recommend`]) work on that
//! table only, so they are tested on hand-made tables and can read a finished sweep's runs.csv.

pub mod constraint;
pub mod grid;
pub mod objective;
pub mod pareto;
pub mod stats;
