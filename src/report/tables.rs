//! The CSV files of a run or sweep, built in memory (written by the output folder, `app::output`):
//! summary.csv, transitions.csv, timeline.csv, incidents.csv.
//!
//! Conventions, the same in every file: a header row; `\n` line endings; a field is quoted (with
//! `"` doubled) only when it holds a comma, a quote or a line break; times are integer
//! microseconds; floats go through [`format_float`] (shortest round-trip decimal); a value that
//! does not exist is an empty cell.

use crate::metrics::{Ending, Metric, Metrics, RunRecord};
use crate::policy::{State, Transition};
use crate::truth::IncidentWindow;
use std::borrow::Cow;
use std::fmt::Write;

/// Prefix of parameter columns in summary.csv, so a parameter can never collide with a fixed or
/// metric column (a parameter named `flaps` becomes `param.flaps`).
pub const PARAM_PREFIX: &str = "param.";

/// One row of summary.csv: a scenario × configuration, aggregated over its replicates.
#[derive(Clone, Debug)]
pub struct SummaryRow<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// The configuration's label.
    pub policy: &'a str,
    /// The preset it derives from (empty when none).
    pub preset: &'a str,
    /// Base seed.
    pub seed: u64,
    /// Replicates aggregated into this row.
    pub replicates: u32,
    /// The configuration's parameters, name → value as written (a name given twice keeps the
    /// first value).
    pub params: &'a [(String, String)],
    /// The metrics.
    pub metrics: &'a Metrics,
    /// Further columns after the metrics, name and cell (a replayed trace's import counts).
    pub extra: &'a [(&'a str, String)],
    /// Over several replicates, each metric's statistics in [`Metric::ALL`] order: the metric
    /// columns then hold the means, each followed by `<metric>_sd` and `<metric>_ci95` (empty:
    /// `metrics` are one run's values, and there are no such columns).
    pub stats: &'a [crate::sweep::stats::Stat],
}

/// The one float format of every CSV: Rust's `{}` for `f64`, the shortest decimal that reads back
/// as the same number, never in exponent form (`0.1`, `2`, `0.0000015`); deterministic on every
/// platform. `-0` is written `0`; NaN and infinities, which no metric should produce, are written
/// as an empty cell rather than a token other tools misread.
pub fn format_float(x: f64) -> String {
    let mut text = String::new();
    push_float(&mut text, Some(x));
    text
}

/// Appends an optional float cell ([`format_float`]; nothing for `None`) to `out`.
fn push_float(out: &mut String, x: Option<f64>) {
    let Some(x) = x.filter(|x| x.is_finite()) else { return };
    if x == 0.0 {
        out.push('0');
    } else {
        let _ = write!(out, "{x}");
    }
}

/// A field, quoted only when it has to be.
fn field(text: &str) -> Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", text.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(text)
    }
}

/// Appends one row: fields separated by commas, then `\n`.
fn push_row<S: AsRef<str>>(out: &mut String, cells: impl IntoIterator<Item = S>) {
    for (i, cell) in cells.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&field(cell.as_ref()));
    }
    out.push('\n');
}

/// An optional float cell.
fn opt_float(x: Option<f64>) -> String {
    x.map(format_float).unwrap_or_default()
}

/// The parameter names, per-provider columns and extra columns of summary.csv's `rows`, each in
/// the order first seen.
fn summary_columns<'a>(rows: &[SummaryRow<'a>]) -> (Vec<&'a str>, Vec<String>, Vec<&'a str>) {
    let mut names: Vec<&str> = Vec::new();
    let mut provider_columns: Vec<String> = Vec::new();
    let mut extra: Vec<&str> = Vec::new();
    for row in rows {
        for (name, _) in row.extra {
            if !extra.contains(name) {
                extra.push(name);
            }
        }
        for (name, _) in row.params {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        for column in row.metrics.extra_columns() {
            if !provider_columns.contains(&column) {
                provider_columns.push(column);
            }
        }
    }
    (names, provider_columns, extra)
}

/// summary.csv's header for `rows` ([`summary_csv`]).
pub fn summary_header(rows: &[SummaryRow]) -> Vec<String> {
    let (names, provider_columns, extra) = summary_columns(rows);
    let fixed = ["scenario", "policy", "preset", "seed", "replicates"].map(String::from);
    let params = names.iter().map(|n| format!("{PARAM_PREFIX}{n}"));
    let spread = rows.iter().any(|r| !r.stats.is_empty());
    let metrics = Metrics::COLUMNS
        .iter()
        .flat_map(|c| match spread {
            true => vec![c.to_string(), format!("{c}_sd"), format!("{c}_ci95")],
            false => vec![c.to_string()],
        })
        .chain(provider_columns);
    fixed.into_iter().chain(params).chain(metrics).chain(extra.iter().map(|n| n.to_string())).collect()
}

/// summary.csv: `scenario,policy,preset,seed,replicates`, then one `param.<name>` column per
/// parameter name in the order names are first seen across the rows (a row without that
/// parameter has an empty cell), then [`Metrics::COLUMNS`], then the per-provider columns
/// ([`Metrics::provider_columns`]) of every row, in the order first seen (a row without that
/// provider has an empty cell; none at all without `[[providers]]`), then the rows' `extra`
/// columns in the order first seen.
pub fn summary_csv(rows: &[SummaryRow]) -> Vec<u8> {
    let (names, provider_columns, extra) = summary_columns(rows);
    let mut out = String::new();
    push_row(&mut out, summary_header(rows));
    for row in rows {
        let mut cells = vec![
            row.scenario.to_string(),
            row.policy.to_string(),
            row.preset.to_string(),
            row.seed.to_string(),
            row.replicates.to_string(),
        ];
        for name in &names {
            let value = row.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            cells.push(value.unwrap_or_default());
        }
        let spread = rows.iter().any(|r| !r.stats.is_empty());
        for (i, m) in Metric::ALL.iter().enumerate() {
            match (spread, row.stats.get(i)) {
                (true, Some(st)) => cells.extend([st.mean, st.sd, st.ci95].map(opt_float)),
                (true, None) => cells.extend([opt_float(row.metrics.get(*m)), String::new(), String::new()]),
                (false, _) => cells.push(opt_float(row.metrics.get(*m))),
            }
        }
        cells.extend(provider_columns.iter().map(|c| opt_float(row.metrics.column(c))));
        for name in &extra {
            cells.push(row.extra.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default());
        }
        push_row(&mut out, cells);
    }
    out.into_bytes()
}

/// transitions.csv: `at_us,instance,from,to,reason`, every run's transitions in event order,
/// runs in the given order. With more than one run a leading `policy` column holds each run's
/// label.
pub fn transitions_csv(rows: &[(&str, &RunRecord)]) -> Vec<u8> {
    let labelled = rows.len() > 1;
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = transitions_header(&mut out, labelled);
    for (label, record) in rows {
        for (instance, t) in &record.transitions {
            let _ = transition_row(&mut out, labelled.then_some(*label), *instance, t);
        }
    }
    out
}

/// transitions.csv's header (with the `policy` column when `labelled`).
pub fn transitions_header(out: &mut dyn std::io::Write, labelled: bool) -> std::io::Result<()> {
    let policy = if labelled { "policy," } else { "" };
    writeln!(out, "{policy}at_us,instance,from,to,reason")
}

/// One row of transitions.csv (`label`: the run's, when the file is labelled), written as the
/// run goes by `run` and at the end by [`transitions_csv`].
pub fn transition_row(
    out: &mut dyn std::io::Write,
    label: Option<&str>,
    instance: usize,
    t: &Transition,
) -> std::io::Result<()> {
    if let Some(label) = label {
        write!(out, "{},", field(label))?;
    }
    writeln!(out, "{},{instance},{},{},{}", t.at.micros(), t.from.as_str(), t.to.as_str(), field(t.reason))
}

/// latency.csv: `policy,outcome,le_ms,count`, for the latency chart. Per run: one row per
/// ending (`answered`, `refused`, `fallback`, `deferred`, see [`Ending`]) with an empty `le_ms`
/// and its number of requests; then the user-latency histogram of the `answered` requests and
/// the deferral-to-completion histogram of the `deferred` work (non-empty buckets only; `le_ms`
/// is the bucket's exclusive upper edge in milliseconds).
pub fn latency_csv(rows: &[(&str, &RunRecord)]) -> Vec<u8> {
    let mut out = String::from("policy,outcome,le_ms,count\n");
    for (label, record) in rows {
        for ending in Ending::ALL {
            let count = record.counters.ended[ending as usize].to_string();
            push_row(&mut out, [label, ending.as_str(), "", &count]);
        }
        for (ending, hist) in
            [(Ending::Answered, &record.answered_latency), (Ending::Deferred, &record.deferred_delay)]
        {
            for (edge, count) in hist.buckets() {
                push_row(
                    &mut out,
                    [label, ending.as_str(), &format_float(edge.as_millis_f64()), &count.to_string()],
                );
            }
        }
    }
    out.into_bytes()
}

/// Column names of timeline.csv.
pub const TIMELINE_COLUMNS: &[&str] = &[
    "bin_start_us",
    "bin_end_us",
    "offered",
    "admitted",
    "rejected",
    "successes",
    "failures",
    "closed_frac",
    "open_frac",
    "half_open_frac",
    "upstream_p95_ms",
    "upstream_error_rate",
    "true_p95_ms",
    "true_error_rate",
];

/// timeline.csv: one row per bin ([`TIMELINE_COLUMNS`], after a leading `policy` column when
/// several runs are written): counts of events in the bin; the
/// fraction of the bin each state held, averaged over instances; p95 latency (ms) and upstream
/// error rate of attempts completed in the bin (empty when none); the dependency's true p95
/// and error rate over every arrival's first answer, admitted or not (empty when none), of the
/// first provider with `[[providers]]`; then, per provider after the first,
/// `provider.NAME.true_p95_ms` and `provider.NAME.true_error_rate`, the same for what that
/// provider would have answered. A run recorded without a timeline gives the header alone.
pub fn timeline_csv(rows: &[(&str, &RunRecord)]) -> Vec<u8> {
    let labelled = rows.len() > 1;
    let mut out = String::new();
    // Every run of one file is of the same scenario: its providers are the first timeline's.
    let others: Vec<&str> = rows
        .iter()
        .find_map(|(_, r)| r.timeline.as_ref())
        .map(|t| t.other_providers.iter().map(|p| p.name.as_str()).collect())
        .unwrap_or_default();
    let provider_columns: Vec<String> = others
        .iter()
        .flat_map(|n| [format!("provider.{n}.true_p95_ms"), format!("provider.{n}.true_error_rate")])
        .collect();
    let header = labelled
        .then_some("policy")
        .into_iter()
        .chain(TIMELINE_COLUMNS.iter().copied())
        .chain(provider_columns.iter().map(String::as_str));
    push_row(&mut out, header);
    // A week has a thousand rows of twenty cells: each is written in place, none made apart
    // (numbers need no quotes).
    let mut digits = itoa::Buffer::new();
    for (label, record) in rows {
        let Some(timeline) = &record.timeline else { continue };
        let label = field(label);
        for (i, b) in timeline.bins.iter().enumerate() {
            if labelled {
                out.push_str(&label);
                out.push(',');
            }
            let counts = [b.start.micros(), b.end.micros(), b.offered, b.admitted, b.rejected, b.successes];
            for n in counts {
                out.push_str(digits.format(n));
                out.push(',');
            }
            out.push_str(digits.format(b.failures));
            let rates = [
                b.fraction(State::Closed),
                b.fraction(State::Open),
                b.fraction(State::HalfOpen),
                b.upstream_p95.map(|d| d.as_millis_f64()),
                b.error_rate(),
                b.true_p95.map(|d| d.as_millis_f64()),
                b.true_error_rate(),
            ];
            for x in rates {
                out.push(',');
                push_float(&mut out, x);
            }
            for p in 0..others.len() {
                let h = timeline.other_providers.get(p).and_then(|p| p.bins.get(i));
                out.push(',');
                push_float(&mut out, h.and_then(|h| h.p95).map(|d| d.as_millis_f64()));
                out.push(',');
                push_float(&mut out, h.and_then(|h| h.error_rate()));
            }
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// incidents.csv: `start_us,end_us,kind,expect`, the ground-truth windows the scoring used.
pub fn incidents_csv(truth: &[IncidentWindow]) -> Vec<u8> {
    let mut out = String::from("start_us,end_us,kind,expect\n");
    for w in truth {
        let _ =
            writeln!(out, "{},{},{},{}", w.start.micros(), w.end.micros(), field(&w.kind), w.expect.as_str());
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{AttemptKind, Finish, ProviderTraffic, Recorder, RecorderOptions};
    use crate::outcome::{OutcomeClass, Verdict};
    use crate::policy::Transition;
    use crate::time::{Dur, SimTime};
    use crate::truth::Expect;

    fn metrics() -> Metrics {
        Metrics {
            ground_truth: true,
            false_opens: 2,
            incidents: 1,
            missed_incidents: 0,
            detection_delay_mean_s: Some(12.5),
            detection_delay_with_misses_mean_s: Some(12.5),
            ended_shares: [Some(0.9), Some(0.05), Some(0.05), Some(0.0)],
            answered_latency_p95_ms: Some(160.0),
            deferred_delay_p95_s: None,
            detection_delay_p95_s: Some(12.5),
            detection_delay_max_s: Some(12.5),
            recovery_lag_mean_s: None,
            flaps: 1,
            open_episodes: 3,
            probe_failures: 2,
            requests: 1000,
            attempts: 1500,
            amplification: Some(1.5),
            wasted_quota: 250,
            shed: 40,
            shed_healthy: 4,
            availability: Some(0.9),
            fallback_rate: Some(0.05),
            latency_p50_ms: Some(20.0),
            latency_p95_ms: Some(150.5),
            latency_p99_ms: None,
            cost: 3.125,
            probes: 2,
            retries: 498,
            timeouts: 10,
            rejections: 45,
            deferred: 0,
            deferred_completed: 0,
            deferred_pending: 0,
            deferred_delay_mean_s: None,
            time_open_s: 90.0,
            retries_refused: 4,
            fallback_cached: 40,
            fallback_local: 0,
            overloaded_s: 0.0,
            probes_per_incident: Some(2.0),
            recovery_load_rps: None,
            failovers: None,
            spend: None,
            failover_delay_mean_s: None,
            providers: Vec::new(),
            pool: None,
        }
    }

    #[test]
    fn summary_exact_text() {
        let m = metrics();
        let p1 = [("threshold".to_string(), "5".to_string()), ("window".to_string(), "10s".to_string())];
        let p2 = [("window".to_string(), "30s".to_string()), ("probes".to_string(), "1".to_string())];
        let rows = [
            SummaryRow {
                scenario: "outage",
                policy: "r4j,count",
                preset: "resilience4j",
                seed: 7,
                replicates: 3,
                params: &p1,
                metrics: &m,
                extra: &[],
                stats: &[],
            },
            SummaryRow {
                scenario: "blip",
                policy: "plain",
                preset: "",
                seed: 7,
                replicates: 3,
                params: &p2,
                metrics: &m,
                extra: &[],
                stats: &[],
            },
        ];
        let expected = "scenario,policy,preset,seed,replicates,param.threshold,param.window,param.probes,\
false_opens,incidents,missed_incidents,detection_delay_mean_s,detection_delay_p95_s,detection_delay_max_s,\
recovery_lag_mean_s,flaps,open_episodes,probe_failures,requests,attempts,amplification,wasted_quota,shed,\
shed_healthy,availability,fallback_rate,latency_p50_ms,latency_p95_ms,latency_p99_ms,cost,\
detection_delay_with_misses_mean_s,answered_share,refused_share,fallback_share,deferred_share,\
answered_latency_p95_ms,deferred_delay_p95_s,probes,retries,timeouts,rejections,deferred,deferred_completed,deferred_pending,deferred_delay_mean_s,time_open_s,retries_refused,fallback_cached,fallback_local,overloaded_s,probes_per_incident,recovery_load_rps,\
failovers,spend,failover_delay_mean_s
outage,\"r4j,count\",resilience4j,7,3,5,10s,,2,1,0,12.5,12.5,12.5,,1,3,2,1000,1500,1.5,250,40,4,0.9,0.05,20,150.5,,3.125,12.5,0.9,0.05,0.05,0,160,,2,498,10,45,0,0,0,,90,4,40,0,0,2,,,,
blip,plain,,7,3,,30s,1,2,1,0,12.5,12.5,12.5,,1,3,2,1000,1500,1.5,250,40,4,0.9,0.05,20,150.5,,3.125,12.5,0.9,0.05,0.05,0,160,,2,498,10,45,0,0,0,,90,4,40,0,0,2,,,,
";
        assert_eq!(String::from_utf8(summary_csv(&rows)).unwrap(), expected);
    }

    #[test]
    fn extra_columns_follow_the_metrics() {
        let m = metrics();
        let extra = [("trace_rows", "10".to_string()), ("bad_rows_skipped", "2".to_string())];
        let row = SummaryRow {
            scenario: "a,b",
            policy: "c",
            preset: "",
            seed: 1,
            replicates: 1,
            params: &[],
            metrics: &m,
            extra: &extra,
            stats: &[],
        };
        let text = String::from_utf8(summary_csv(&[row])).unwrap();
        let mut lines = text.lines();
        assert!(lines.next().unwrap().ends_with(",failover_delay_mean_s,trace_rows,bad_rows_skipped"));
        let row = lines.next().unwrap();
        assert!(row.starts_with("\"a,b\",c,,1,1,") && row.ends_with(",,10,2"), "{row}");
    }

    #[test]
    fn provider_columns_are_the_union_across_rows() {
        let traffic =
            |name: &str, attempts, successes| ProviderTraffic { name: name.into(), attempts, successes };
        let routed = Metrics {
            failovers: Some(3),
            spend: Some(12.5),
            failover_delay_mean_s: Some(4.25),
            providers: vec![traffic("primary", 20, 15), traffic("secondary", 5, 5)],
            ..metrics()
        };
        let other =
            Metrics { providers: vec![traffic("backup", 1, 0), traffic("primary", 2, 2)], ..metrics() };
        let plain = metrics();
        let row = |m| SummaryRow {
            scenario: "s",
            policy: "p",
            preset: "",
            seed: 1,
            replicates: 1,
            params: &[],
            metrics: m,
            extra: &[],
            stats: &[],
        };
        let text = String::from_utf8(summary_csv(&[row(&routed), row(&plain), row(&other)])).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let tail = |line: &str, n: usize| {
            line.rsplitn(n + 1, ',').collect::<Vec<_>>()[..n]
                .iter()
                .rev()
                .copied()
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(
            tail(lines[0], 9),
            "failovers,spend,failover_delay_mean_s,provider.primary.attempts,provider.primary.successes,\
provider.secondary.attempts,provider.secondary.successes,provider.backup.attempts,provider.backup.successes"
        );
        assert_eq!(tail(lines[1], 9), "3,12.5,4.25,20,15,5,5,,");
        assert_eq!(tail(lines[2], 9), ",,,,,,,,");
        assert_eq!(tail(lines[3], 9), ",,,2,2,,,1,0");
        assert_eq!(routed.column("provider.secondary.successes"), Some(5.0));
        assert_eq!(routed.column("provider.secondary.failures"), None);
        assert_eq!(routed.column("provider.nobody.attempts"), None);
    }

    fn record(opens_at_s: u64) -> RunRecord {
        let mut r = Recorder::new(RecorderOptions {
            horizon: SimTime(20_000_000),
            instances: 1,
            timeline_bin: Some(Dur::from_secs(10)),
            truth: vec![],
        });
        r.request_arrived(SimTime(1_000_000));
        r.attempt_sent(SimTime(1_000_000), 0, AttemptKind::First);
        r.attempt_done(SimTime(2_000_000), 0, OutcomeClass::Ok, Verdict::Success, Dur::from_millis(5));
        r.request_done(SimTime(1_000_000), SimTime(2_000_000), Finish::Success, None);
        let at = SimTime(opens_at_s * 1_000_000);
        r.transition(
            0,
            &Transition { at, from: State::Closed, to: State::Open, reason: "consecutive_failures" },
        );
        r.finish(SimTime(20_000_000))
    }

    #[test]
    fn transitions_label_column_only_for_several_runs() {
        let (a, b) = (record(15), record(12));
        let one = String::from_utf8(transitions_csv(&[("a", &a)])).unwrap();
        assert_eq!(one, "at_us,instance,from,to,reason\n15000000,0,closed,open,consecutive_failures\n");
        let two = String::from_utf8(transitions_csv(&[("a", &a), ("b, tuned", &b)])).unwrap();
        assert_eq!(
            two,
            "policy,at_us,instance,from,to,reason\n\
             a,15000000,0,closed,open,consecutive_failures\n\
             \"b, tuned\",12000000,0,closed,open,consecutive_failures\n"
        );
    }

    #[test]
    fn timeline_exact_text() {
        // Bin 0 [0, 10 s): 1 offered, 1 admitted, 1 success of 5 ms, closed throughout.
        // Bin 1 [10 s, 20 s): closed 10..15, open 15..20 -> 0.5 / 0.5; nothing completed.
        let text = String::from_utf8(timeline_csv(&[("a", &record(15))])).unwrap();
        assert_eq!(
            text,
            "bin_start_us,bin_end_us,offered,admitted,rejected,successes,failures,closed_frac,open_frac,half_open_frac,\
upstream_p95_ms,upstream_error_rate,true_p95_ms,true_error_rate\n\
0,10000000,1,1,0,1,0,1,0,0,5,0,,\n\
10000000,20000000,0,0,0,0,0,0.5,0.5,0,,,,\n"
        );
        let mut without = record(15);
        without.timeline = None;
        assert_eq!(
            timeline_csv(&[("a", &without)]),
            format!("{}\n", TIMELINE_COLUMNS.join(",")).into_bytes()
        );
    }

    #[test]
    fn incidents_exact_text() {
        let truth = [
            IncidentWindow {
                start: SimTime(0),
                end: SimTime(90_000_000),
                kind: "outage".into(),
                expect: Expect::Open,
            },
            IncidentWindow {
                start: SimTime(100_000_000),
                end: SimTime(100_500_000),
                kind: "slo, \"p95\"".into(),
                expect: Expect::StayClosed,
            },
        ];
        assert_eq!(
            String::from_utf8(incidents_csv(&truth)).unwrap(),
            "start_us,end_us,kind,expect\n0,90000000,outage,open\n100000000,100500000,\"slo, \"\"p95\"\"\",stay_closed\n"
        );
    }

    #[test]
    fn float_format_is_shortest_round_trip() {
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(2.0), "2");
        assert_eq!(format_float(-0.0), "0");
        assert_eq!(format_float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_float(1.5e-6), "0.0000015");
        assert_eq!(format_float(-3.25), "-3.25");
        assert_eq!(format_float(f64::NAN), "");
        assert_eq!(format_float(f64::INFINITY), "");
        for x in [1.0 / 3.0, 12.345_678_9, 1e-9, 123_456_789.125] {
            assert_eq!(format_float(x).parse::<f64>().unwrap(), x);
        }
    }
}
