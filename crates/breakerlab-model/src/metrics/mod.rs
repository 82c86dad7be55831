//! Metrics: the per-run recorder the engine feeds in event order, and the scoring of a finished
//! run against its ground truth (the definitions are in docs/outputs.md "Metrics").
//!
//! Use: build a [`Recorder`] with [`RecorderOptions`], call it as events happen, [`Recorder::finish`]
//! into a [`RunRecord`], then [`score`] it into [`Metrics`].

mod histogram;
mod metric;
mod objective;
pub mod pool;
mod recorder;
mod score;
mod snapshots;

pub use metric::{Metric, Unit};
pub use objective::{Objective, check_weight};
pub use recorder::{
    AttemptKind, CallRecord, Ending, FallbackKind, Finish, RECOVERY_WINDOW, Recorder, RecorderOptions,
    RunRecord, TimelineBin,
};
pub use score::{Metrics, ScoringOptions, score};
pub use snapshots::{Moment, Snapshot, Snapshots};

pub use recorder::Counters;
pub use score::ProviderTraffic;
