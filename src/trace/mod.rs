//! Importers for logged data, one module per format: per-interval aggregates (CSV, Prometheus,
//! Grafana, CloudWatch, Datadog), per-call logs (CSV, OTLP, Jaeger, Envoy, HAR) and ground truth
//! ([`labels`]). Each gives the model's [`IntervalTrace`] or [`CallTrace`] with its
//! [`ImportReport`]; [`load`] picks the importer from the options or the file's content.
//!
//! A scenario file names its trace in a `[trace]` table that deserializes into [`TraceOptions`]
//! (paths relative to the scenario file; see `crate::scenario`):
//!
//! ```toml
//! [trace]
//! file = "traces/nezha-2022-08-23/front_service.csv"
//! time = "TimeStamp"            # optional: auto-detected
//! gaps = "hold"                 # hold | healthy | missing
//! labels = "traces/nezha-2022-08-23/2022-08-23-fault_list.json"
//! fault_duration = "3m"
//! ```

pub mod calls;
pub mod cloudwatch;
pub(crate) mod columns;
pub mod datadog;
pub(crate) mod detect;
pub mod envoy;
pub mod grafana;
pub mod har;
#[cfg(test)]
mod host_replay_tests;
pub mod interval;
pub mod jaeger;
pub(crate) mod json;
pub(crate) mod labels;
pub mod otlp;
pub mod prometheus;
pub(crate) mod records;
#[cfg(test)]
mod replay_tests;
pub(crate) mod series;
pub(crate) mod slo;
pub mod spans;

pub use breakerlab_model::trace::{
    Behaviour, CallTrace, DuplicatePolicy, Gap, GapPolicy, ImportReport, Interval, IntervalTrace, LabelKind,
    LatencyUnit, StatusKind, TimeBase, TimeFormat, Trace, TraceError, TraceFormat, TraceOptions,
};
pub(crate) use breakerlab_model::trace::{quantile, timestamp, to_sim};
pub use slo::SloRule;

use crate::time::{Dur, SimTime};
use crate::truth::IncidentWindow;
use crate::upstream::pool::HostWindow;
use std::path::Path;
use std::sync::Arc;

/// Imports `path` as the format the options name, or as detected from its header: a file with
/// latency and status columns and no percentile or `value` column is a per-call log,
/// anything else an interval trace.
/// Every other format is detected from the file's content ([`detect`]) or forced by
/// `format`; `opts.series`, when given, replaces the file.
pub fn load(path: &Path, opts: &TraceOptions) -> Result<Trace, TraceError> {
    if !opts.series.is_empty() {
        let mut t = series::load(opts)?;
        t.report.span = t.horizon() - SimTime::ZERO;
        t.report.step = Some(t.step());
        let mut trace = Trace::Interval(Arc::new(t));
        let rate = trace.rate();
        if let Some(r) = trace.report_mut() {
            r.rate = rate;
        }
        return Ok(trace);
    }
    let (mut format, detected) = match opts.format {
        Some(f) => (f, false),
        None => (detect::detect(path)?, true),
    };
    if matches!(format, TraceFormat::Interval | TraceFormat::Calls) && opts.format.is_none() {
        format = detect_format(path, opts)?;
    }
    if !opts.filters.is_empty()
        && !matches!(
            format,
            TraceFormat::Calls
                | TraceFormat::Otlp
                | TraceFormat::Jaeger
                | TraceFormat::Envoy
                | TraceFormat::Har
        )
    {
        return Err(TraceError::Option {
            option: "where",
            message: format!(
                "filters apply to per-call logs (a per-call CSV, OTLP, Jaeger, Envoy, HAR); {} is {}",
                path.display(),
                format.describe()
            ),
        });
    }
    let trace = match format {
        TraceFormat::Interval => {
            let mut t = interval::from_path(path, opts)?;
            t.report.step = Some(t.step());
            Trace::Interval(Arc::new(t))
        }
        TraceFormat::Calls => Trace::Calls(Arc::new(calls::from_path(path, opts)?)),
        f if f.is_series() => {
            let mut t = series::load_file(path, f, opts)?;
            t.report.step = Some(t.step());
            Trace::Interval(Arc::new(t))
        }
        f => Trace::Calls(Arc::new(spans::load(path, f, opts)?)),
    };
    let mut trace = trace;
    let span = trace.horizon() - SimTime::ZERO;
    let rate = trace.rate();
    if let Some(r) = trace.report_mut() {
        r.format = Some((format, detected));
        r.span = span;
        r.rate = rate;
    }
    Ok(trace)
}

/// The ground truth the options name (see [`labels::load`]), `None` when they name none. A
/// CSV trace with a label column (`Label`) and no other ground truth uses that column. The
/// import report notes the column picked and any label windows outside the trace.
pub fn ground_truth(
    trace: &mut Trace,
    path: &Path,
    opts: &TraceOptions,
) -> Result<Option<Vec<IncidentWindow>>, TraceError> {
    let csv = matches!(trace.report().format, Some((TraceFormat::Interval | TraceFormat::Calls, _)));
    let named = opts.labels.is_some() || opts.label_column.is_some() || opts.slo.is_some();
    let mut notes = Vec::new();
    let picked;
    let opts = match (csv && !named && opts.series.is_empty())
        .then(|| labels::auto_label_column(path))
        .transpose()?
        .flatten()
    {
        Some(column) => {
            notes.push(format!("ground truth from column `{column}` (runs of 1 are incidents; --labels or --slo to use another)"));
            picked = TraceOptions { label_column: Some(column), ..opts.clone() };
            &picked
        }
        None => opts,
    };
    let mut windows = windows(trace, path, opts)?;
    if let Some(per_host) = host_truth(trace, path, opts, windows.as_deref())? {
        windows = Some(per_host);
    }
    if let (Some(kept), Some(_)) = (&windows, &opts.labels) {
        let everywhere =
            TimeBase { epoch_us: i64::MIN / 4, horizon: SimTime(u64::MAX / 2), ..trace.time_base() };
        let all = labels::load(opts, path, &everywhere, None)?.map_or(0, |w| w.len());
        if all > kept.len() {
            let end =
                trace.report().epoch_offset_us.saturating_add(i64::try_from(trace.horizon().0).unwrap_or(0));
            notes.push(format!(
                "warning: {} of {all} label windows fall outside the trace ({} .. {}) and are ignored: check \
                 the zone (--trace utc_offset=...) and that the labels belong to this trace",
                all - kept.len(),
                timestamp::format_utc(trace.report().epoch_offset_us),
                timestamp::format_utc(end)
            ));
        }
    }
    if let Some(r) = trace.report_mut() {
        r.notes.extend(notes);
    }
    Ok(windows)
}

fn windows(
    trace: &Trace,
    path: &Path,
    opts: &TraceOptions,
) -> Result<Option<Vec<IncidentWindow>>, TraceError> {
    match trace {
        Trace::Interval(t) => labels::load(opts, path, &trace.time_base(), Some(t.as_ref())),
        Trace::Calls(c) if opts.slo.is_some() => {
            // The last bucket may reach past the log's end: clip to it.
            let buckets = c.aggregate(opts.slo_interval.unwrap_or(Dur::from_secs(60)))?;
            let windows = labels::load(opts, path, &trace.time_base(), Some(&buckets))?;
            let horizon = c.horizon();
            Ok(windows.map(|ws| {
                ws.into_iter()
                    .filter(|w| w.start < horizon)
                    .map(|w| IncidentWindow { end: w.end.min(horizon), ..w })
                    .collect()
            }))
        }
        Trace::Calls(_) => labels::load(opts, path, &trace.time_base(), None),
    }
}

/// The ground truth of each host of a per-call log that names hosts: an SLO rule read over each
/// host's own calls (bucketed on the log's grid), so a window names the host that broke it;
/// labels, a label column or any other windows (`whole`) hit every host. Under a named host
/// column (the log then always replays as a pool), also the run's ground truth: each per-host
/// window as an incident whose kind names its host (`pod-b:slo`), as a modelled pool's do.
fn host_truth(
    trace: &mut Trace,
    path: &Path,
    opts: &TraceOptions,
    whole: Option<&[IncidentWindow]>,
) -> Result<Option<Vec<IncidentWindow>>, TraceError> {
    let Trace::Calls(log) = trace else { return Ok(None) };
    let Some(hosts) = log.hosts() else { return Ok(None) };
    let (names, explicit) = (hosts.names.clone(), hosts.explicit);
    let n = hosts.len();
    let mut out = Vec::new();
    let mut kinds = Vec::new();
    if opts.slo.is_some() {
        let step = opts.slo_interval.unwrap_or(Dur::from_secs(60));
        for h in 0..n {
            let Some(sub) = log.host_calls(h) else { continue };
            let buckets = sub.aggregate(step)?;
            // The buckets start at the host's first call: move their windows to the log's base.
            let shift = Dur(u64::try_from(buckets.epoch_offset_us() - log.epoch_offset_us()).unwrap_or(0));
            let windows = labels::load(opts, path, &buckets.time_base(), Some(&buckets))?.unwrap_or_default();
            for w in windows {
                let (start, end) = (w.start + shift, (w.end + shift).min(log.horizon()));
                if start < end {
                    out.push(HostWindow { start, end, hosts: vec![h], expect: w.expect });
                    kinds.push(format!("{}:{}", names[usize::from(h)], w.kind));
                }
            }
        }
    } else if let Some(whole) = whole {
        let all: Vec<u16> = (0..n).collect();
        out.extend(whole.iter().map(|w| HostWindow {
            start: w.start,
            end: w.end,
            hosts: all.clone(),
            expect: w.expect,
        }));
        kinds.extend(whole.iter().map(|w| w.kind.clone()));
    }
    let mut order: Vec<usize> = (0..out.len()).collect();
    order.sort_by_key(|&i| (out[i].start, out[i].end, out[i].hosts.first().copied()));
    let truth = (explicit && (opts.slo.is_some() || whole.is_some())).then(|| {
        order
            .iter()
            .map(|&i| IncidentWindow {
                start: out[i].start,
                end: out[i].end,
                kind: kinds[i].clone(),
                expect: out[i].expect,
            })
            .collect()
    });
    let sorted: Vec<HostWindow> = order.iter().map(|&i| out[i].clone()).collect();
    if let Some(hosts) = Arc::get_mut(log).and_then(CallTrace::hosts_mut) {
        hosts.windows = sorted;
    }
    Ok(truth)
}

/// The import report's line for a log whose calls name their hosts.
pub(crate) fn hosts_note(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut list = names.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        list.push_str(&format!(", ... ({} more)", names.len() - SHOWN));
    }
    format!(
        "calls name {} host{} ({list}): numbered in sorted order, they replay as a pool (each call to its \
         logged host while that host is in rotation)",
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    )
}

/// The format the options name, or the one `path`'s header suggests (see [`load`]).
pub fn detect_format(path: &Path, opts: &TraceOptions) -> Result<TraceFormat, TraceError> {
    if let Some(f) = opts.format {
        return Ok(f);
    }
    if opts.latency.is_some() || opts.status.is_some() {
        return Ok(TraceFormat::Calls);
    }
    let file = path.display().to_string();
    let (_, header) = records::Records::open(&file, columns::open(path)?)?;
    let has = |role| header.find(role, None, &[]).map(|c| c.is_some());
    let pct = (0..4).map(|k| has(columns::Role::Percentile(k))).collect::<Result<Vec<_>, _>>()?;
    if pct.contains(&true) || has(columns::Role::Value)? {
        return Ok(TraceFormat::Interval);
    }
    if has(columns::Role::Latency)? || (has(columns::Role::End)? && has(columns::Role::Time)?) {
        return Ok(TraceFormat::Calls);
    }
    Ok(TraceFormat::Interval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Scenario {
        trace: TraceOptions,
    }

    #[test]
    fn trace_table_deserializes_and_refuses_unknown_keys() {
        let doc = r#"
            [trace]
            file = "front_service.csv"
            format = "interval"
            time = "TimeStamp"
            time_format = "epoch_s"
            p95 = "LatencyP95(s)"
            latency_unit = "s"
            gaps = "missing"
            duplicates = "keep_last"
            skip_bad_rows = true
            labels = "faults.json"
            fault_duration = "3m"
            tail_sigma = 0.7
        "#;
        let s: Scenario = toml::from_str(doc).unwrap();
        assert_eq!(s.trace.format, Some(TraceFormat::Interval));
        assert_eq!(s.trace.time_format, TimeFormat::EpochS);
        assert_eq!(s.trace.gaps, GapPolicy::Missing);
        assert_eq!(s.trace.duplicates, DuplicatePolicy::KeepLast);
        assert_eq!(s.trace.fault_duration, Some(Dur::from_secs(180)));
        assert_eq!(s.trace.tail_sigma(), 0.7);
        let err = toml::from_str::<Scenario>("[trace]\np96 = \"x\"\n").err().unwrap().to_string();
        assert!(err.contains("unknown field `p96`") && err.contains("line 2"), "{err}");
        let err = toml::from_str::<Scenario>("[trace]\ntail_sigma = 0\n").err().unwrap().to_string();
        assert!(err.contains("greater than 0"), "{err}");
        let bad = TraceOptions { utc_offset: Some("CET".into()), ..TraceOptions::default() };
        assert!(bad.offset_seconds().unwrap_err().to_string().contains("utc_offset"));
    }

    #[test]
    fn the_rate_of_counts_near_the_largest_integer_does_not_overflow() {
        // A volume series of 10^30 a minute: each count saturates at u64::MAX, their sum must not.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.csv");
        std::fs::write(&path, "timestamp,requests,p95\n1700000000,1e30,0.2\n1700000060,1e30,0.2\n").unwrap();
        let p = path.display();
        let series = vec![format!("requests={p}@requests"), format!("p95:s={p}@p95")];
        let t = crate::trace::load(&path, &TraceOptions { series, ..TraceOptions::default() }).unwrap();
        let (rate, what) = t.rate().unwrap();
        assert_eq!(what, "requests/s (from the counts)");
        assert!(rate > 1e17 && rate.is_finite(), "{rate}");
    }

    #[test]
    fn formats_are_detected_from_headers() {
        let dir = tempfile::tempdir().unwrap();
        let calls = dir.path().join("calls.csv");
        std::fs::write(&calls, "timestamp,latency_ms,status\n1000,5,200\n1001,6,500\n").unwrap();
        let mut t = crate::trace::load(&calls, &TraceOptions::default()).unwrap();
        assert!(matches!(&t, Trace::Calls(c) if c.len() == 2));
        assert_eq!(t.horizon(), SimTime(1_006_000));
        assert_eq!(ground_truth(&mut t, &calls, &TraceOptions::default()).unwrap(), None);
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces");
        let nezha = root.join("nezha-2022-08-23/front_service.csv");
        let opts = TraceOptions {
            slo: Some("success_rate < 80% or p95 > 2s for 3m".into()),
            ..TraceOptions::default()
        };
        let mut t = crate::trace::load(&nezha, &opts).unwrap();
        assert!(matches!(t, Trace::Interval(_)));
        let truth = ground_truth(&mut t, &nezha, &opts).unwrap().unwrap();
        assert!(truth.iter().any(|w| w.expect == crate::truth::Expect::Open));
        assert!(
            t.report()
                .to_string()
                .starts_with(&format!("{}: 721 rows, 721 used; columns: time=TimeStamp", nezha.display()))
        );
        let outbound = root.join("ms-outbound-01/outbound-01.csv");
        assert_eq!(detect_format(&outbound, &TraceOptions::default()).unwrap(), TraceFormat::Interval);
        // An SLO rule over a per-call log reads it per minute: 1 of 2 calls failed at second 1000.
        let slo = TraceOptions { slo: Some("error_rate >= 50%".into()), ..TraceOptions::default() };
        let w = ground_truth(&mut crate::trace::load(&calls, &slo).unwrap(), &calls, &slo).unwrap().unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(
            (w[0].start, w[0].end, w[0].expect),
            (SimTime::ZERO, SimTime(1_006_000), crate::truth::Expect::Open)
        );
    }
}
