//! `breakerlab replay TRACE.csv`: a quick look at logged data under one breaker configuration.
//! The flags become a [`TraceOptions`] (free-form `--column` and `--trace` pairs go through the
//! same deserializer as a scenario's `[trace]` table, so both accept exactly the same values;
//! the other flags arrive typed), the trace becomes a scenario, and the run goes through
//! [`run_scenario`] like `breakerlab run`.

use super::run::{RunReport, RunSettings, run_scenario};
use crate::Result;
use crate::client::flags::ClientFlags;
use crate::scenario::{self, InputError};
use crate::time::Dur;
use crate::trace::series::SeriesSpec;
use crate::trace::{Behaviour, GapPolicy, LatencyUnit, TimeFormat, TraceFormat, TraceOptions};
use crate::traffic::TrafficSpec;
use crate::units::Positive;
use crate::units::Ratio;
use std::path::PathBuf;

/// Roles `--column ROLE=NAME` accepts: the column keys of [`TraceOptions`].
pub const COLUMN_ROLES: [&str; 13] = [
    "time",
    "count",
    "errors",
    "error_rate",
    "success_percent",
    "p50",
    "p90",
    "p95",
    "p99",
    "latency",
    "status",
    "label_column",
    "value",
];

/// What the user asked `replay` to do.
#[derive(Clone, Debug, Default)]
pub struct ReplayRequest {
    /// The trace file (optional with `series`).
    pub trace: Option<PathBuf>,
    /// The file's format (detected from its content when absent).
    pub format: Option<TraceFormat>,
    /// `ROLE[:UNIT]=FILE[@SELECTOR]` series (see [`crate::trace::series`]).
    pub series: Vec<String>,
    /// `key=glob` span filters.
    pub filters: Vec<String>,
    /// The dependency's behaviour for a volume-only trace.
    pub behaviour: Option<Behaviour>,
    /// The client's timeout, retries, backoff and fallback, over the default client.
    pub client: ClientFlags,
    /// A ground-truth file (label CSV, NAB windows JSON, fault list).
    pub labels: Option<PathBuf>,
    /// An SLO rule defining incidents.
    pub slo: Option<String>,
    /// How long each fault of a fault list lasts.
    pub fault_duration: Option<Dur>,
    /// `role=name` column mappings.
    pub columns: Vec<String>,
    /// How timestamps are written.
    pub time_format: Option<TimeFormat>,
    /// Unit of latency columns.
    pub latency_unit: Option<LatencyUnit>,
    /// What gaps mean.
    pub gaps: Option<GapPolicy>,
    /// Skip and count unparseable rows instead of refusing the file.
    pub skip_bad_rows: bool,
    /// Refuse samples and cells with no value (`NaN`, `±Inf`, `null`, empty) instead of
    /// reading them as gaps.
    pub strict: bool,
    /// Any other `[trace]` key as `key=value` (e.g. `duplicates=keep_first`).
    pub trace_sets: Vec<String>,
    /// Poisson arrival rate (requests per second) for traces without request counts.
    pub rate: Option<f64>,
    /// What to run on the trace and where to write it, as for `run`.
    pub run: RunSettings,
}

/// Builds the trace options the flags describe. Every `--column` and `--trace` value is
/// checked by the same deserializer as a scenario's `[trace]` table; a bad one names its flag,
/// and a key given by two flags is refused.
pub fn trace_options(req: &ReplayRequest) -> Result<TraceOptions, InputError> {
    let mut entries: Vec<(String, String, toml::Value)> = Vec::new();
    let text = |s: &str| toml::Value::String(s.to_string());
    for c in &req.columns {
        let flag = format!("--column {c}");
        let (role, name) = split_pair(c).ok_or_else(|| {
            InputError::argument(format!("{flag}: expected ROLE=COLUMN, e.g. p95=LatencyP95(s)"))
        })?;
        let role = if role == "value" { "p50" } else { role };
        if !COLUMN_ROLES.contains(&role) {
            return Err(InputError::argument(format!(
                "{flag}: unknown role `{role}`; expected one of {}",
                COLUMN_ROLES.join(", ")
            )));
        }
        entries.push((flag, role.to_string(), text(name)));
    }
    for t in &req.trace_sets {
        let flag = format!("--trace {t}");
        let (key, value) = split_pair(t).ok_or_else(|| {
            InputError::argument(format!("{flag}: expected KEY=VALUE, e.g. duplicates=keep_first"))
        })?;
        if key == "file" {
            return Err(InputError::argument(format!("{flag}: the trace file is the first argument")));
        }
        if ["timeout", "retries", "backoff", "fallback"].contains(&key) {
            return Err(InputError::argument(format!(
                "{flag}: `{key}` is a client setting, not a [trace] key: give it as --{key} {value}"
            )));
        }
        // A TOML value when it reads as one (numbers, booleans), else the text itself.
        let value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| text(value));
        entries.push((flag, key.to_string(), value));
    }
    let mut table = toml::Table::new();
    for (flag, key, value) in &mut entries {
        // Check each value alone, so an error names the flag that carries it. A value that read
        // as a number or boolean but is wanted as text (`--trace time=2022`) is retried as text.
        let check = |value: &toml::Value| {
            let mut one = toml::Table::new();
            one.insert(key.clone(), value.clone());
            toml::Value::Table(one).try_into::<TraceOptions>()
        };
        if let Err(e) = check(value) {
            let as_text = toml::Value::String(value.to_string());
            if value.is_str() || check(&as_text).is_err() {
                return Err(InputError::argument(format!("{flag}: {}", e.message().trim())));
            }
            *value = as_text;
        }
        if table.insert(key.clone(), value.clone()).is_some() {
            return Err(InputError::argument(format!("{flag}: `{key}` is given twice")));
        }
    }
    // The typed flags, each refused when a `--trace` pair gives the same key.
    let twice = |flag: &str, key: &str| -> Result<(), InputError> {
        match table.contains_key(key) {
            true => Err(InputError::argument(format!("{flag}: `{key}` is given twice"))),
            false => Ok(()),
        }
    };
    let mut opts = toml::Value::Table(table.clone())
        .try_into::<TraceOptions>()
        .map_err(|e| InputError::argument(format!("trace options: {}", e.message().trim())))?;
    if let Some(f) = req.format {
        twice("--format", "format")?;
        opts.format = Some(f);
    }
    if let Some(l) = &req.labels {
        twice("--labels", "labels")?;
        opts.labels = Some(l.clone());
    }
    if let Some(r) = &req.slo {
        twice("--slo", "slo")?;
        opts.slo = Some(r.clone());
    }
    if let Some(d) = req.fault_duration {
        twice("--fault-duration", "fault_duration")?;
        opts.fault_duration = Some(d);
    }
    if let Some(t) = req.time_format {
        twice("--time-format", "time_format")?;
        opts.time_format = t;
    }
    if let Some(u) = req.latency_unit {
        twice("--latency-unit", "latency_unit")?;
        opts.latency_unit = Some(u);
    }
    if let Some(g) = req.gaps {
        twice("--gaps", "gaps")?;
        opts.gaps = g;
    }
    if req.skip_bad_rows {
        twice("--skip-bad-rows", "skip_bad_rows")?;
        opts.skip_bad_rows = true;
    }
    if req.strict {
        twice("--strict", "strict")?;
        opts.strict = true;
    }
    if !req.series.is_empty() {
        twice("--series", "series")?;
        opts.series = req.series.clone();
    }
    if !req.filters.is_empty() {
        twice("--where", "where")?;
        opts.filters = req.filters.clone();
    }
    if let Some(b) = req.behaviour {
        twice("--p50", "upstream")?;
        opts.upstream = Some(b);
    }
    Ok(opts)
}

/// The behaviour `--p50`, `--p95` and `--error-rate` describe (clap makes `--p95` and
/// `--error-rate` need `--p50`; without `--p95` the import derives it from the tail spread).
pub fn behaviour(p50: Option<Dur>, p95: Option<Dur>, error_rate: Option<f64>) -> Result<Option<Behaviour>> {
    let Some(p50) = p50 else { return Ok(None) };
    let error_rate = Ratio::new(error_rate.unwrap_or(0.0))
        .map_err(|e| InputError::argument(format!("--error-rate: {e}")))?;
    Ok(Some(Behaviour { p50, p95, error_rate }))
}

fn split_pair(s: &str) -> Option<(&str, &str)> {
    let (k, v) = s.split_once('=')?;
    let (k, v) = (k.trim(), v.trim());
    (!k.is_empty() && !v.is_empty()).then_some((k, v))
}

/// Imports the trace, runs it and writes the outputs. Nothing is written on bad input.
pub fn replay(req: &ReplayRequest) -> Result<RunReport> {
    let opts = trace_options(req)?;
    let traffic = match req.rate {
        Some(r) => Some(TrafficSpec::Poisson {
            rate: Positive::new(r).map_err(|e| InputError::argument(format!("--rate {r}: {e}")))?,
        }),
        None => None,
    };
    // With --series alone, the first series file names the replay.
    let first_series = match opts.series.first() {
        Some(spec) => Some(SeriesSpec::parse(spec).map_err(|e| InputError::argument(e.to_string()))?.file),
        None => None,
    };
    let path = req
        .trace
        .clone()
        .or(first_series)
        .ok_or_else(|| InputError::argument("give a trace file, or --series ROLE=FILE[@SELECTOR]"))?;
    let mut scenario = scenario::from_trace(&path, &opts, traffic)?;
    req.client.apply(&mut scenario.client).map_err(InputError::from)?;
    let mut settings = req.run.clone();
    settings.replay = true;
    settings.truth_source = truth_source(&opts);
    if let Some(r) = req.rate {
        settings.assumptions.push(format!(
            "requests arrive as a Poisson process at {} req/s (--rate), not from the trace",
            crate::app::run::readable(r)
        ));
    }
    run_scenario(scenario, &settings)
}

/// Where the replay's ground truth comes from, as the flags or `--trace` pairs say (`None`:
/// none named; the import may still pick a label column, which its report notes).
fn truth_source(opts: &TraceOptions) -> Option<String> {
    match (&opts.slo, &opts.labels, &opts.label_column) {
        (Some(rule), _, _) => Some(format!("the SLO rule `{rule}`")),
        (None, Some(file), _) => Some(format!("the labels file {}", file.display())),
        (None, None, Some(column)) => Some(format!("the trace's label column `{column}`")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_trace_options() {
        let req = ReplayRequest {
            trace: Some("t.csv".into()),
            time_format: Some(TimeFormat::EpochS),
            columns: vec!["time=TimeStamp".into(), "p95 = LatencyP95(s)".into()],
            gaps: Some(GapPolicy::Missing),
            trace_sets: vec!["tail_sigma=0.7".into(), "duplicates=keep_first".into()],
            skip_bad_rows: true,
            ..ReplayRequest::default()
        };
        let o = trace_options(&req).unwrap();
        assert_eq!(o.time_format, TimeFormat::EpochS);
        assert_eq!(o.time.as_deref(), Some("TimeStamp"));
        assert_eq!(o.p95.as_deref(), Some("LatencyP95(s)"));
        assert_eq!(o.gaps, GapPolicy::Missing);
        assert_eq!(o.tail_sigma(), 0.7);
        assert!(o.skip_bad_rows);
        let req = ReplayRequest {
            trace_sets: vec!["time=2022".into(), "near_calls=8".into(), "utc_offset=+02:00".into()],
            ..ReplayRequest::default()
        };
        let o = trace_options(&req).unwrap();
        assert_eq!(o.time.as_deref(), Some("2022"));
        assert_eq!(o.near_calls, Some(8));
        assert_eq!(o.utc_offset.as_deref(), Some("+02:00"));
    }

    #[test]
    fn bad_flags_name_themselves() {
        let bad = |req: ReplayRequest| trace_options(&req).unwrap_err().to_string();
        let e = bad(ReplayRequest { columns: vec!["p96=x".into()], ..ReplayRequest::default() });
        assert!(e.contains("--column p96=x: unknown role `p96`"), "{e}");
        let e = bad(ReplayRequest { columns: vec!["p95".into()], ..ReplayRequest::default() });
        assert!(e.contains("expected ROLE=COLUMN"), "{e}");
        let e = bad(ReplayRequest { trace_sets: vec!["p97=x".into()], ..ReplayRequest::default() });
        assert!(e.contains("--trace p97=x: unknown field `p97`"), "{e}");
        let e = bad(ReplayRequest {
            gaps: Some(GapPolicy::Hold),
            trace_sets: vec!["gaps=missing".into()],
            ..ReplayRequest::default()
        });
        assert!(e.contains("`gaps` is given twice"), "{e}");
    }
}
