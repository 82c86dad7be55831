//! Logged data as the engine replays it: per-interval aggregates ([`IntervalTrace`]) and
//! per-call logs ([`CallTrace`]), the options that map a file's columns ([`TraceOptions`]), what
//! an import did ([`ImportReport`]) and its errors ([`TraceError`]). The importers (one per
//! format) are `breakerlab`'s `trace` module.
//!
//! Time base: a trace's time zero is the timestamp of its first data row; the absolute epoch
//! time of that row is kept (`epoch_offset_us`) so reports can print real dates and label files
//! written in absolute time can be moved into the trace's time base ([`TimeBase`]).
//!
//! Engine contract: [`IntervalTrace::answer`] / [`CallTrace::answer_near`] take the attempt's
//! time and generator and allocate nothing; [`IntervalTrace::arrivals`] and
//! [`CallTrace::arrivals`] give sorted arrival times.

pub mod calls;
pub mod hosts;
pub mod interval;
pub mod quantile;
pub mod timestamp;

pub use calls::CallTrace;
pub use interval::{Gap, Interval, IntervalTrace};
pub use timestamp::TimeFormat;

use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};
use crate::units::Positive;
use serde::Deserialize;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Which kind of trace a file holds: the two CSV shapes, or a tool's own export.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// CSV, one row per interval: timestamp, optional count, errors, latency percentiles.
    Interval,
    /// CSV, one row per call: timestamp, latency, optional status.
    Calls,
    /// Prometheus HTTP API `query_range` JSON (a matrix of series).
    Prometheus,
    /// Grafana's "Series joined by time" CSV (`"Time"` then one column per series).
    Grafana,
    /// CloudWatch `GetMetricData` JSON (pages may be concatenated).
    Cloudwatch,
    /// Datadog v1 `query` JSON.
    Datadog,
    /// OpenTelemetry OTLP JSON traces (one request, or JSON lines from the collector's file exporter).
    Otlp,
    /// Jaeger JSON (the UI's download or `/api/traces`).
    Jaeger,
    /// Envoy access log in its default format.
    Envoy,
    /// HTTP Archive 1.2 (a browser's "Save all as HAR").
    Har,
}

impl TraceFormat {
    /// How reports name the format.
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::Interval => "interval CSV",
            TraceFormat::Calls => "per-call CSV",
            TraceFormat::Prometheus => "Prometheus query_range JSON",
            TraceFormat::Grafana => "Grafana CSV (series joined by time)",
            TraceFormat::Cloudwatch => "CloudWatch GetMetricData JSON",
            TraceFormat::Datadog => "Datadog v1 query JSON",
            TraceFormat::Otlp => "OpenTelemetry OTLP JSON traces",
            TraceFormat::Jaeger => "Jaeger JSON traces",
            TraceFormat::Envoy => "Envoy access log (default format)",
            TraceFormat::Har => "HAR 1.2",
        }
    }

    /// Formats that hold aggregate series (picked with `--series`).
    pub fn is_series(self) -> bool {
        matches!(
            self,
            TraceFormat::Prometheus | TraceFormat::Grafana | TraceFormat::Cloudwatch | TraceFormat::Datadog
        )
    }
}

/// The dependency's behaviour for a trace without latency (`--series requests=...` alone, or an
/// error series with `--rate`): every interval answers with this lognormal latency and error
/// rate; arrivals follow the volume (or `--rate`).
#[derive(Copy, Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Behaviour {
    /// Median latency.
    pub p50: Dur,
    /// 95th-percentile latency (at least `p50`); when absent, the lognormal of the trace's tail
    /// spread (`tail_sigma`, default 0.5) through `p50`.
    #[serde(default)]
    pub p95: Option<Dur>,
    /// Fraction of calls that fail.
    #[serde(default)]
    pub error_rate: crate::units::Ratio,
}

impl Behaviour {
    /// The behaviour checked (`0 < p50 <= p95`) with its p95 filled in, and the import report's
    /// note saying it is used: `what` the trace lacks (`volume only`), `sigma` the tail spread a
    /// missing p95 comes from, `errors_from` the series or column that gives the errors instead
    /// of `error_rate`, if one does.
    pub fn checked(
        self,
        what: &str,
        sigma: f64,
        errors_from: Option<&str>,
    ) -> Result<(Behaviour, String), TraceError> {
        let (p95, derived) = match self.p95 {
            Some(p95) => (p95, String::new()),
            None => {
                // The 95th percentile of a lognormal is its median times e^(1.645 sigma).
                let factor = (1.644_853_626_951_472_2 * sigma).exp();
                let p95 = Dur((self.p50.0 as f64 * factor).round() as u64);
                (p95, format!(" (p95 not given: p50 × {factor:.3}, the lognormal of tail_sigma {sigma})"))
            }
        };
        if p95 < self.p50 || self.p50.is_zero() {
            return Err(TraceError::Option { option: "upstream", message: "expected 0 < p50 <= p95".into() });
        }
        let errors = match errors_from {
            Some(source) => format!("errors from {source}"),
            None => format!("error rate {}", self.error_rate.0),
        };
        let note =
            format!("{what}: every interval answers with p50 {}, p95 {p95}{derived}, {errors}", self.p50);
        Ok((Behaviour { p95: Some(p95), ..self }, note))
    }
}

/// Unit of the latency columns.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyUnit {
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl LatencyUnit {
    /// Microseconds per unit.
    pub fn micros(self) -> f64 {
        match self {
            LatencyUnit::Us => 1.0,
            LatencyUnit::Ms => 1_000.0,
            LatencyUnit::S => 1_000_000.0,
        }
    }
    /// The unit's symbol.
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyUnit::Us => "us",
            LatencyUnit::Ms => "ms",
            LatencyUnit::S => "s",
        }
    }
}

/// What an interval trace does where rows are missing (a gap longer than 1.5 intervals).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapPolicy {
    /// The last logged interval continues until the next row (rate of arrivals included).
    #[default]
    Hold,
    /// The gap is healthy: no errors, each percentile the trace's median of that percentile,
    /// arrivals at the trace's median rate.
    Healthy,
    /// Missing data: no arrivals are generated inside the gap, answers hold the last interval,
    /// and [`IntervalTrace::is_missing`] tells scoring to leave the gap out.
    Missing,
}

/// What to do with a row whose timestamp equals the previous row's (interval traces; per-call
/// logs allow equal timestamps).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DuplicatePolicy {
    /// Refuse the file, naming both rows.
    #[default]
    Error,
    /// Keep the first row of each timestamp, drop (and count) the others.
    KeepFirst,
    /// Keep the last row of each timestamp, drop (and count) the others.
    KeepLast,
}

/// How a per-call status column is read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusKind {
    /// HTTP codes, words (ok, error, timeout, ...) and 0/1 where 1 means ok, unless the column's
    /// name says it flags errors (`error`, `is_error`, `failed`), then 1 means error.
    #[default]
    Auto,
    /// 1 (or true) means the call succeeded.
    OkFlag,
    /// 1 (or true) means the call failed.
    ErrorFlag,
}

/// Where the ground truth of a replay comes from, when given by a file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelKind {
    /// CSV `start,end,expectation[,kind]`.
    Csv,
    /// NAB's windows JSON (`{"file.csv": [[start, end], ...]}`).
    NabWindows,
    /// A list of fault instants (Nezha's JSON, or a CSV/text list), each lasting `fault_duration`.
    FaultList,
}

/// How to read a trace file: column names, formats, units and policies. The CLI fills it from
/// flags; a scenario file's `[trace]` table deserializes into it (unknown keys are errors).
/// Every field is optional; unset columns are found by header auto-detection.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceOptions {
    /// The trace file (scenario files only; the CLI passes it as an argument).
    pub file: Option<PathBuf>,
    /// Interval aggregates or per-call log; detected from the columns when unset.
    pub format: Option<TraceFormat>,
    /// Timestamp column.
    pub time: Option<String>,
    /// How timestamps are written.
    #[serde(default)]
    pub time_format: TimeFormat,
    /// Zone assumed for date-times written without one, e.g. "+02:00" (default UTC).
    pub utc_offset: Option<String>,
    /// Request-count column (interval traces).
    pub count: Option<String>,
    /// Error-count column (interval traces; needs `count`).
    pub errors: Option<String>,
    /// Error-rate column, a fraction in [0, 1] (interval traces).
    pub error_rate: Option<String>,
    /// Success-percentage column, 0..100 (interval traces).
    pub success_percent: Option<String>,
    /// p50 latency column; a single-signal trace maps its value column here.
    pub p50: Option<String>,
    /// p90 latency column.
    pub p90: Option<String>,
    /// p95 latency column.
    pub p95: Option<String>,
    /// p99 latency column.
    pub p99: Option<String>,
    /// Latency column (per-call logs).
    pub latency: Option<String>,
    /// Status column (per-call logs).
    pub status: Option<String>,
    /// How the status column is read.
    #[serde(default)]
    pub status_kind: StatusKind,
    /// Unit of every latency column; overrides units read from headers (default ms otherwise).
    pub latency_unit: Option<LatencyUnit>,
    /// Factor applied to latency values before the unit (maps a health signal onto latency).
    pub latency_scale: Option<Positive>,
    /// Length of one interval; detected as the median spacing of rows when unset.
    pub interval: Option<Dur>,
    /// What gaps in an interval trace mean.
    #[serde(default)]
    pub gaps: GapPolicy,
    /// What to do with repeated timestamps in an interval trace.
    #[serde(default)]
    pub duplicates: DuplicatePolicy,
    /// Skip (and count) rows that cannot be parsed instead of refusing the file.
    #[serde(default)]
    pub skip_bad_rows: bool,
    /// Refuse a sample or cell that says "no value" (`NaN`, `±Inf`, `null`, an empty cell)
    /// instead of reading it as a gap.
    #[serde(default)]
    pub strict: bool,
    /// Log-spread used for tails the logged percentiles do not determine (default 0.5).
    pub tail_sigma: Option<Positive>,
    /// How many logged calls nearest in time an unlogged attempt draws from (default 16).
    pub near_calls: Option<usize>,
    /// Ground-truth file.
    pub labels: Option<PathBuf>,
    /// Kind of the ground-truth file; detected from its extension and content when unset.
    pub labels_kind: Option<LabelKind>,
    /// Key of the NAB windows JSON to use (default: the only key, or the one ending with the
    /// trace's file name).
    pub labels_key: Option<String>,
    /// How long each fault of a fault list lasts.
    pub fault_duration: Option<Dur>,
    /// A 0/1 column of the trace itself whose runs of 1 are incidents (e.g. `Label`).
    pub label_column: Option<String>,
    /// An SLO rule that defines incidents, e.g. `error_rate > 0.2 or p95 > 8s for 3m`.
    pub slo: Option<String>,
    /// Bucket length over which an SLO rule reads a per-call log (default 1m).
    pub slo_interval: Option<Dur>,
    /// Aggregate series and their roles, `ROLE[:UNIT]=FILE[@SELECTOR]` (see [`series`]); when
    /// given, they are the trace and `file` is not read.
    #[serde(default)]
    pub series: Vec<String>,
    /// The column (per-call CSV) or field (span formats) naming the host each call went to
    /// (`pod`, `k8s.pod.name`): its values become the hosts of a pool, and the log replays as
    /// one whatever the policy. Without it, a format's own host field (Envoy's `upstream_host`,
    /// a span's `server.address` or `net.peer.name`) is used by outlier-detector policies.
    pub host_column: Option<String>,
    /// Span filters `key=glob` (all must match), e.g. `service=frontend*` (see [`spans`]).
    #[serde(default, rename = "where")]
    pub filters: Vec<String>,
    /// The dependency's behaviour when the series give only traffic volume.
    pub upstream: Option<Behaviour>,
}

impl TraceOptions {
    /// The tail spread in effect.
    pub fn tail_sigma(&self) -> f64 {
        self.tail_sigma.map_or(0.5, Positive::get)
    }
    /// The zone offset for zone-less date-times, in seconds east of UTC.
    pub fn offset_seconds(&self) -> Result<i64, TraceError> {
        match &self.utc_offset {
            None => Ok(0),
            Some(text) => timestamp::parse_offset(text)
                .map_err(|e| TraceError::Option { option: "utc_offset", message: e.to_string() }),
        }
    }
}

/// Everything that can go wrong while importing a trace or its ground truth.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The CSV structure is broken (e.g. an unterminated quote).
    #[error("{file}: line {line}: {message}")]
    Csv {
        /// The file.
        file: String,
        /// Line number (1 = header).
        line: u64,
        /// The CSV reader's message.
        message: String,
    },
    /// A cell that cannot be read.
    #[error("{file}: line {line}, column `{column}`: expected {expected}, found {value:?}")]
    BadValue {
        /// The file.
        file: String,
        /// Line number (1 = header).
        line: u64,
        /// Column header.
        column: String,
        /// The cell as written.
        value: String,
        /// What the cell should hold.
        expected: String,
    },
    /// A timestamp earlier than the one before it.
    #[error(
        "{file}: line {line}: column `{column}`: timestamp {value:?} is earlier than {previous:?} on line \
         {previous_line}; rows must be sorted by `{column}` (column {position}: sort the rows below the header, \
         e.g. `(head -n 1 {file}; tail -n +2 {file} | sort -t, -k{position},{position}) > sorted.csv`, or name \
         the column that holds the time: --column time=NAME)"
    )]
    NonMonotonic {
        /// The file.
        file: String,
        /// The time column.
        column: String,
        /// Its position in the header, from 1 (as `sort -k` counts).
        position: usize,
        /// Line of the offending row.
        line: u64,
        /// Its timestamp as written.
        value: String,
        /// Line of the previous row.
        previous_line: u64,
        /// The previous row's timestamp as written.
        previous: String,
    },
    /// Two interval rows with one timestamp.
    #[error(
        "{file}: line {line}: timestamp {value:?} repeats line {previous_line}; each interval needs its \
         own timestamp (set duplicates = \"keep_first\" or \"keep_last\" to drop repeats)"
    )]
    Duplicate {
        /// The file.
        file: String,
        /// Line of the repeat.
        line: u64,
        /// The timestamp as written.
        value: String,
        /// Line of the first row with it.
        previous_line: u64,
    },
    /// Nothing in the file.
    #[error("{file}: the file is empty (expected a header line and data rows)")]
    Empty {
        /// The file.
        file: String,
    },
    /// A header but no data rows.
    #[error("{file}: the file has a header but no data rows")]
    HeaderOnly {
        /// The file.
        file: String,
    },
    /// Every row was bad and skipped.
    #[error("{file}: all {skipped} data rows were bad and skipped; the first: {first}")]
    NoGoodRows {
        /// The file.
        file: String,
        /// Rows skipped.
        skipped: u64,
        /// The first bad row's error.
        first: String,
    },
    /// Columns missing, unknown or ambiguous.
    #[error("{file}: {message}")]
    Columns {
        /// The file.
        file: String,
        /// What is wrong, with the headers found.
        message: String,
    },
    /// An option with a bad value.
    #[error("trace option `{option}`: {message}")]
    Option {
        /// The option's name.
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A ground-truth file that cannot be used.
    #[error("{file}: {message}")]
    Labels {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A file that is not of the shape its format needs (JSON syntax, missing fields, bad values),
    /// with the place (line and column, or the JSON path) named in the message.
    #[error("{file}: {message}")]
    Format {
        /// The file.
        file: String,
        /// What is wrong and where.
        message: String,
    },
    /// A file that is not a regular file, too large, or not UTF-8 text (the root crate's
    /// `scenario::open_input`).
    #[error(transparent)]
    Input(#[from] crate::scenario::InputError),
    /// An SLO rule that cannot be parsed or does not fit the trace.
    #[error("SLO rule {rule:?}: {message}")]
    Slo {
        /// The rule as written.
        rule: String,
        /// What is wrong.
        message: String,
    },
}

/// What an import did: counts, the column mapping and assumptions, for the run summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// The file's name as given.
    pub file: String,
    /// Data rows read (not counting the header).
    pub rows: u64,
    /// Rows that became part of the model.
    pub rows_used: u64,
    /// Unparseable rows skipped under `skip_bad_rows`.
    pub bad_rows_skipped: u64,
    /// The first skipped row's error, if any.
    pub first_bad_row: Option<String>,
    /// Rows dropped as repeated timestamps.
    pub duplicates_dropped: u64,
    /// Intervals whose logged percentiles decreased with q and were raised to stay monotone.
    pub repaired_intervals: u64,
    /// Gaps found (interval traces).
    pub gaps: u64,
    /// Absolute time of time zero (the first row), microseconds since the Unix epoch.
    pub epoch_offset_us: i64,
    /// The column chosen for each role, e.g. `("p95", "LatencyP95(s)", "s")`.
    pub columns: Vec<(String, String)>,
    /// Assumptions made (defaults chosen, auto-detected meanings), one sentence each.
    pub notes: Vec<String>,
    /// The format read, and whether it was detected (or forced with `--format`).
    pub format: Option<(TraceFormat, bool)>,
    /// Each file of a `--series` import, its format, and whether that was detected.
    pub series_formats: Vec<(String, TraceFormat, bool)>,
    /// Length of the trace from time zero to its end.
    pub span: Dur,
    /// Interval length (interval traces).
    pub step: Option<Dur>,
    /// The mean request rate the trace gives and its unit (see [`Trace::rate`]).
    pub rate: Option<(f64, &'static str)>,
}

impl fmt::Display for ImportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} rows, {} used", self.file, self.rows, self.rows_used)?;
        if self.bad_rows_skipped > 0 {
            write!(f, ", {} bad rows skipped", self.bad_rows_skipped)?;
        }
        if self.duplicates_dropped > 0 {
            write!(f, ", {} duplicate timestamps dropped", self.duplicates_dropped)?;
        }
        if self.gaps > 0 {
            write!(f, ", {} gaps", self.gaps)?;
        }
        if self.repaired_intervals > 0 {
            write!(f, ", {} intervals with non-monotone percentiles repaired", self.repaired_intervals)?;
        }
        let cols: Vec<String> = self.columns.iter().map(|(role, col)| format!("{role}={col}")).collect();
        write!(f, "; columns: {}", cols.join(", "))?;
        let how =
            |detected: bool| if detected { "detected from the content" } else { "forced with --format" };
        if let Some((format, detected)) = self.format {
            write!(f, "\n  format: {} ({})", format.describe(), how(detected))?;
        }
        for (file, format, detected) in &self.series_formats {
            write!(f, "\n  format: {file}: {} ({})", format.describe(), how(*detected))?;
        }
        if !self.span.is_zero() {
            let start = self.epoch_offset_us;
            let end = start.saturating_add(i64::try_from(self.span.0).unwrap_or(i64::MAX));
            write!(
                f,
                "\n  span: {} .. {} ({})",
                timestamp::format_utc(start),
                timestamp::format_utc(end),
                timestamp::clock(self.span.0)
            )?;
            if let Some((rate, unit)) = self.rate {
                write!(f, ", {} {unit}", timestamp::three_digits(rate))?;
            }
        }
        if let Some(step) = self.step {
            write!(f, "\n  step: {step}")?;
        }
        if let Some(first) = &self.first_bad_row {
            write!(f, "\n  first skipped: {first}")?;
        }
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}

/// An imported trace of either kind, for callers that take whatever file the user gives. Shared
/// (`Arc`) so every workload built from one scenario reuses one import, however large.
#[derive(Clone, Debug)]
pub enum Trace {
    /// Per-interval aggregates.
    Interval(Arc<IntervalTrace>),
    /// Per-call log.
    Calls(Arc<CallTrace>),
}

impl Trace {
    /// The mean request rate the trace itself gives, per second, and what it counts: calls of a
    /// per-call log, or the request counts of an interval trace (`None` without counts).
    pub fn rate(&self) -> Option<(f64, &'static str)> {
        let secs = (self.horizon() - SimTime::ZERO).as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        match self {
            Trace::Calls(t) => Some((t.len() as f64 / secs, "calls/s")),
            Trace::Interval(t) => {
                // Summed wide: counts near u64::MAX (a hostile trace) must not overflow.
                let counts =
                    t.intervals().iter().try_fold(0u128, |sum, i| Some(sum + u128::from(i.count()?)));
                counts.map(|n| (n as f64 / secs, "requests/s (from the counts)"))
            }
        }
    }

    /// What the import did.
    pub fn report(&self) -> &ImportReport {
        match self {
            Trace::Interval(t) => t.report(),
            Trace::Calls(t) => t.report(),
        }
    }

    /// The import report, to add what the loader knows, while the import is not yet shared.
    pub fn report_mut(&mut self) -> Option<&mut ImportReport> {
        match self {
            Trace::Interval(t) => Arc::get_mut(t).map(|t| &mut t.report),
            Trace::Calls(t) => Arc::get_mut(t).map(|t| &mut t.report),
        }
    }

    /// End of the trace.
    pub fn horizon(&self) -> SimTime {
        match self {
            Trace::Interval(t) => t.horizon(),
            Trace::Calls(t) => t.horizon(),
        }
    }

    /// What label files need to move absolute times into this trace's time base.
    pub fn time_base(&self) -> TimeBase {
        match self {
            Trace::Interval(t) => t.time_base(),
            Trace::Calls(t) => t.time_base(),
        }
    }
}

/// Converts an absolute epoch time to the trace's time base (time zero = first row).
pub fn to_sim(abs_us: i64, epoch_us: i64) -> SimTime {
    SimTime(u64::try_from(abs_us.saturating_sub(epoch_us)).unwrap_or(0))
}

/// What it takes to move absolute label times into a trace's time base.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeBase {
    /// Absolute time of the trace's time zero, microseconds since the Unix epoch.
    pub epoch_us: i64,
    /// End of the trace.
    pub horizon: SimTime,
    /// Zone assumed for date-times written without one, seconds east of UTC.
    pub utc_offset_s: i64,
    /// Length of one interval (zero for per-call logs): how long the last row of a label run lasts.
    pub step: Dur,
}

impl TimeBase {
    /// The window `[start, end)` (absolute µs) in trace time, clipped; `None` when outside.
    pub fn window(&self, start: i64, end: i64, kind: &str, expect: Expect) -> Option<IncidentWindow> {
        let s = to_sim(start, self.epoch_us);
        let e = to_sim(end, self.epoch_us).min(self.horizon);
        (end > self.epoch_us && s < self.horizon && e > s).then(|| IncidentWindow {
            start: s,
            end: e,
            kind: kind.to_string(),
            expect,
        })
    }
}
