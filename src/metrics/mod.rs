//! Metrics: the per-run recorder the engine feeds in event order, and the scoring of a finished
//! run against its ground truth (DESIGN.md "Metrics (per run): definitions").
//!
//! Use: build a [`Recorder`] with [`RecorderOptions`], call it as events happen, [`Recorder::finish`]
//! into a [`RunRecord`], then [`score`] it into [`Metrics`].

mod histogram;
mod metric;
mod objective;
mod recorder;
mod score;
mod snapshots;

pub use histogram::{BUCKETS as LATENCY_BUCKETS, LatencyHistogram};
pub use metric::{Metric, Unit};
pub use objective::{Objective, check_weight};
pub use recorder::{
    AttemptKind, CallRecord, Counters, Ending, FallbackKind, Finish, MAX_TIMELINE_BINS, ProviderRecord,
    RECOVERY_WINDOW, Recorder, RecorderOptions, RunRecord, Timeline, TimelineBin,
};
pub use score::{Metrics, ProviderTraffic, ScoringOptions, score};
pub use snapshots::{Moment, Snapshot, Snapshots};
