//! Sweeps: many breaker configurations on many scenarios at once, and which one to deploy.
//!
//! A sweep file ([`mod@file`]) names scenarios, policy grids ([`grid`]), replicates, an objective
//! ([`objective`]) and constraints ([`constraint`]). Results are a table of metric values per
//! cell (scenario × configuration × replicate) ([`table`]); statistics over replicates
//! ([`stats`]), Pareto fronts ([`pareto`]) and the recommendation ([`mod@recommend`]) work on that
//! table only, so they are tested on hand-made tables and can read a finished sweep's runs.csv.
//! [`review`] gathers what the review page opens with (decision table, verdict on a baseline).
//! [`runner`] fills the table by simulation; [`output`] formats the files as bytes. Nothing
//! here writes a file: the commands `sweep`, `compare` and `recommend` live in `app`.
//!
//! Rules a user relies on:
//! - Cells run in parallel but are collected in grid order (scenario, configuration,
//!   replicate) and every reduction is sequential: outputs are byte-identical for any
//!   `--threads`. Request streams are built once per (scenario, replicate) and shared.
//! - Cell identity is (scenario name, `config_id`, replicate): runs.csv files of shards run
//!   separately can be concatenated and given to `recommend`.
//! - A configuration's total cost is the sum over scenarios of its mean cost over replicates;
//!   constraints are checked on each scenario's mean; a metric with no value breaks none.
//! - summary.csv: per (scenario, configuration) every resolved parameter, then for each metric
//!   `m`: `m` (mean), `m_sd`, `m_ci95` (half-width, Student t, n − 1 df), and the same for cost.

pub mod auto;
pub mod compare;
pub mod compare_confidence;
pub mod constraint;
pub mod coverage;
pub mod file;
pub mod grid;
pub mod integrity;
pub mod merge;
pub mod objective;
pub mod output;
pub mod pareto;
pub mod progress_log;
pub mod recommend;
pub mod regress;
pub mod review;
pub mod runner;
pub mod selection;
pub mod shard;
pub mod stage_plan;
pub use breakerlab_model::stats;
pub mod store;
pub mod table;
pub mod target;

/// An error of a sweep, compare or recommend command: where (file, line, column) and what.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// A problem at a place in a file.
    #[error("{file}:{line}:{col}: {message}")]
    At {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A problem with a file as a whole.
    #[error("{file}: {message}")]
    File {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// Invalid input given on the command line or in a request.
    #[error("{0}")]
    Invalid(String),
}

impl From<SweepError> for crate::scenario::InputError {
    /// Sweep, results and argument errors are the user's input: the CLI exits with code 2.
    fn from(e: SweepError) -> crate::scenario::InputError {
        use crate::scenario::InputError;
        match e {
            SweepError::At { file, line, col, message } => {
                InputError { path: Some(file.into()), position: Some((line, col)), message }
            }
            SweepError::File { file, message } => InputError::file(std::path::Path::new(&file), message),
            SweepError::Io { file, source } => {
                let why = match source.kind() {
                    std::io::ErrorKind::NotFound => "no such file".to_string(),
                    std::io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
                    _ => source.to_string(),
                };
                InputError::file(std::path::Path::new(&file), format!("cannot read: {why}"))
            }
            SweepError::Invalid(message) => InputError::argument(message),
        }
    }
}

impl From<SweepError> for crate::Error {
    fn from(e: SweepError) -> crate::Error {
        crate::Error::Input(e.into())
    }
}
