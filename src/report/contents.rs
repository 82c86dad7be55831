//! What the charts and the review page show, typed ([`Contents`]), and how a command makes it
//! from what it computed: its runs' records, its summary rows, a sweep's results. `breakerlab
//! report DIR` makes the same from the folder's files (`report::folder`); both draw and render
//! through this one type, so a fresh run's charts are those `report DIR` redraws.

use super::charts::data::{
    Columns, Identity, Incident, LatencyHist, SINGLE_POLICY, Series, Summary, SummaryRow, TransitionRow, held,
};
use super::charts::timeline::TimelineData;
use super::explain::{Mark, MarkedRows};
use super::page::ReportInputs;
use crate::metrics::{Ending, Metric, Metrics, RunRecord};
use crate::policy::{State, Transition};
use crate::sweep::constraint::Constraint;
use crate::sweep::output::{ParamsOf, param_columns};
use crate::sweep::recommend::meets_constraints;
use crate::sweep::review::Review;
use crate::sweep::table::{ConfigInfo, ResultTable};
use crate::truth::IncidentWindow;
use std::sync::Arc;

pub use super::charts::ChartError;

/// The first rows of pareto.csv as written, and how many it has: all the page's table shows
/// (pareto.png is drawn from the summary).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParetoRows {
    /// The header.
    pub headers: Vec<String>,
    /// The first rows (at most the page's `HTML_MAX_ROWS`), their cells as written.
    pub head: Vec<Vec<String>>,
    /// The file's number of data rows.
    pub rows: usize,
}

/// What the charts and the page of an output folder show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contents<'f> {
    /// The timeline: its bins with the state changes and incidents.
    pub timeline: Option<TimelineData>,
    /// The summary, for the charts and the page to read again (never held whole).
    pub summary: Option<Summary<'f>>,
    /// pareto.csv's first rows as written (for the page's folded table) and its row count.
    pub pareto: Option<ParetoRows>,
    /// The latency splits, one per configuration.
    pub latency: Option<Vec<LatencyHist>>,
    /// The recommended configuration's label.
    pub recommended: Option<String>,
    /// The explained recommendation.
    pub explanation: Option<String>,
    /// A targeted sweep's exports (the recommendation, runner-up, baseline and alternatives in
    /// the target library's syntax), shown under the decision.
    pub deploy: Option<String>,
    /// What reproduces the run.
    pub inputs: Option<ReportInputs>,
    /// The timeline's marks with their explanations.
    pub marks: Vec<Mark>,
    /// A sweep's decision table and verdict on its baseline.
    pub review: Option<Review>,
    /// A run's, replay's or comparison's answer, shown before any chart.
    pub opening: Option<super::opening::Opening>,
}

/// The timeline of `series` with their state changes and incidents, titled after the
/// summary's first row and the inputs (its breakers' and providers' names, its start).
pub fn timeline(
    mut series: Vec<Series>,
    transitions: Vec<TransitionRow>,
    incidents: Vec<Incident>,
    summary: Option<&Summary>,
    inputs: Option<&ReportInputs>,
) -> TimelineData {
    // A single run's timeline has no labels: its one series is the configuration of the
    // summary's one row.
    if let [only] = series.as_mut_slice()
        && only.policy == SINGLE_POLICY
        && let Some(Summary { rows: 1, first: Some(row), .. }) = summary
    {
        only.policy = row.policy().to_string();
    }
    // The timeline is of the first scenario's replicate 0 (see `run` and `compare`).
    let mut context: Vec<String> = summary
        .and_then(|s| s.first.as_ref())
        .map(|r| r.scenario().to_string())
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect();
    if let Some(seed) = inputs.and_then(|i| i.seed) {
        context.push(format!("seed {seed}"));
    }
    if !context.is_empty() {
        context.push("replicate 0".into());
    }
    TimelineData {
        series,
        transitions,
        incidents,
        context: context.join(" · "),
        lanes: inputs.map(|i| i.breakers.clone()).unwrap_or_default(),
        providers: inputs.map(|i| i.providers.clone()).unwrap_or_default(),
        epoch_us: inputs.and_then(|i| i.epoch_us),
    }
}

/// The label of a run of `runs` in the files that label runs only when there are several.
fn run_label<'a>(runs: &[(&'a str, &RunRecord)], label: &'a str) -> &'a str {
    if runs.len() > 1 { label } else { SINGLE_POLICY }
}

/// The time bins of `runs` (label, record), one series per label in order of first
/// appearance, as timeline.csv holds them.
pub fn series(runs: &[(&str, &RunRecord)]) -> Vec<Series> {
    // Every run is of the same scenario: its providers are the first timeline's.
    let others: Vec<String> = runs
        .iter()
        .find_map(|(_, r)| r.timeline.as_ref())
        .map(|t| t.other_providers.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    let mut out: Vec<Series> = Vec::new();
    for &(label, record) in runs {
        let Some(timeline) = &record.timeline else { continue };
        let name = run_label(runs, label);
        let i = match out.iter().position(|s| s.policy == name) {
            Some(i) => i,
            None => {
                out.push(Series {
                    policy: name.to_string(),
                    bins: Vec::new(),
                    other_providers: others.clone(),
                });
                out.len() - 1
            }
        };
        let ms = |d: Option<crate::time::Dur>| held(d.map(|d| d.as_millis_f64()));
        out[i].bins.extend(timeline.bins.iter().enumerate().map(|(k, b)| {
            super::charts::data::Bin {
                start_us: b.start.micros(),
                end_us: b.end.micros(),
                offered: b.offered as f64,
                admitted: b.admitted as f64,
                rejected: b.rejected as f64,
                failures: b.failures as f64,
                successes: b.successes as f64,
                closed_frac: held(b.fraction(State::Closed)),
                open_frac: held(b.fraction(State::Open)),
                half_open_frac: held(b.fraction(State::HalfOpen)),
                upstream_p95_ms: ms(b.upstream_p95),
                upstream_error_rate: held(b.error_rate()),
                true_p95_ms: ms(b.true_p95),
                true_error_rate: held(b.true_error_rate()),
                other_true: (0..others.len())
                    .map(|p| {
                        let h = timeline.other_providers.get(p).and_then(|p| p.bins.get(k));
                        (ms(h.and_then(|h| h.p95)), held(h.and_then(|h| h.error_rate())))
                    })
                    .collect(),
            }
        }));
    }
    for s in &mut out {
        s.bins.sort_by_key(|b| b.start_us);
    }
    out
}

/// A state change of breaker `instance` of the configuration `policy`.
pub fn transition(policy: &str, instance: usize, t: &Transition) -> TransitionRow {
    TransitionRow {
        policy: policy.to_string(),
        at_us: t.at.micros(),
        instance: instance as u64,
        from: t.from,
        to: t.to,
        reason: t.reason.to_string(),
    }
}

/// The state changes of `runs` (label, record), runs in order.
pub fn transitions(runs: &[(&str, &RunRecord)]) -> Vec<TransitionRow> {
    runs.iter()
        .flat_map(|&(label, record)| {
            let policy = run_label(runs, label);
            record.transitions.iter().map(move |(instance, t)| transition(policy, *instance, t))
        })
        .collect()
}

/// The ground-truth windows the scoring used.
pub fn incidents(truth: &[IncidentWindow]) -> Vec<Incident> {
    truth
        .iter()
        .map(|w| Incident {
            start_us: w.start.micros(),
            end_us: w.end.micros(),
            kind: w.kind.clone(),
            expect: w.expect,
        })
        .collect()
}

/// The latency split of `runs` (label, record), one per label in order of first appearance:
/// requests per ending, then the answered requests' latency and the deferred work's delay by
/// bucket (non-empty buckets, by upper edge in ms).
pub fn latency(runs: &[(&str, &RunRecord)]) -> Vec<LatencyHist> {
    let mut out: Vec<LatencyHist> = Vec::new();
    for &(label, record) in runs {
        let i = match out.iter().position(|h| h.policy == label) {
            Some(i) => i,
            None => {
                let policy = label.to_string();
                out.push(LatencyHist { policy, buckets: Vec::new(), ended: [0.0; 4], deferred: Vec::new() });
                out.len() - 1
            }
        };
        let h = &mut out[i];
        for ending in Ending::ALL {
            h.ended[ending as usize] += record.counters.ended[ending as usize] as f64;
        }
        for (to, hist) in
            [(&mut h.buckets, &record.answered_latency), (&mut h.deferred, &record.deferred_delay)]
        {
            to.extend(hist.buckets().map(|(edge, count)| (edge.as_millis_f64(), count as f64)));
        }
    }
    for h in &mut out {
        h.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        h.deferred.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// The marks of `runs` (label, record) for `incidents`, the breakers named by `names`: every
/// run's state changes, then its incident snapshots, as explain.csv holds them.
pub fn marks(runs: &[(&str, &RunRecord)], incidents: &[Incident], names: &[String]) -> Vec<Mark> {
    let mut marked = MarkedRows::new(incidents);
    let labelled = runs.len() > 1;
    for &(label, record) in runs {
        let policy = if labelled { label } else { "" };
        for (k, (instance, t)) in record.transitions.iter().enumerate() {
            let evidence = record.evidence_of(k).unwrap_or(&crate::policy::Evidence::EMPTY);
            marked.transition(policy, *instance, t, evidence);
        }
        for s in &record.snapshots {
            marked.snapshot(policy, s);
        }
    }
    marked.marks(incidents, names)
}

/// A run's summary (summary.csv's rows as `report::summary_csv` writes them), held.
pub fn run_summary(rows: &[super::SummaryRow]) -> Result<Summary<'static>, ChartError> {
    let columns = Arc::new(Columns::new(&super::tables::summary_header(rows)));
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let (seed, replicates) = (r.seed.to_string(), r.replicates.to_string());
        let mut row = SummaryRow::new(Arc::clone(&columns));
        row.set(&Identity {
            scenario: r.scenario,
            policy: r.policy,
            preset: r.preset,
            seed: &seed,
            replicates: &replicates,
            ..Identity::default()
        });
        for (name, value) in r.params.iter().rev() {
            row.set_param(name, value);
        }
        for (i, (name, m)) in Metrics::COLUMNS.iter().zip(Metric::ALL).enumerate() {
            match r.stats.get(i) {
                Some(st) => {
                    row.set_metric(name, st.mean);
                    row.set_metric(&format!("{name}_sd"), st.sd);
                    row.set_metric(&format!("{name}_ci95"), st.ci95);
                }
                None => row.set_metric(name, r.metrics.get(*m)),
            }
        }
        for c in r.metrics.provider_columns() {
            row.set_metric(&c, r.metrics.column(&c));
        }
        for (name, value) in r.extra {
            row.set_metric(name, value.parse().ok());
        }
        out.push(row);
    }
    Summary::held(columns, out)
}

/// A sweep's (or comparison's) summary as summary.csv holds it: per (scenario, configuration)
/// that ran, its parameters (`params`, else the overrides as written), each metric's mean and
/// 95 % half-width over the replicates and the cost's, and whether it meets `constraints`.
/// Every pass reads the results again; none is held.
pub fn sweep_summary<'a>(
    table: &'a ResultTable,
    summary: &'a crate::sweep::table::Summary,
    constraints: &'a [Constraint],
    params: &'a (dyn Fn(&ConfigInfo) -> Vec<(String, String)> + Send + Sync),
) -> Result<Summary<'a>, ChartError> {
    let as_params: ParamsOf = params;
    let names = param_columns(
        table.configurations().map(|config| ConfigInfo { config, label: String::new() }),
        as_params,
    );
    let mut headers: Vec<String> = ["scenario", "config_id", "policy", "preset", "family", "overrides"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    headers.extend(names.iter().map(|p| format!("{}{p}", super::PARAM_PREFIX)));
    headers.push("replicates".into());
    for m in table.metrics.iter().map(String::as_str).chain(["cost"]) {
        headers.extend([m.to_string(), format!("{m}_sd"), format!("{m}_ci95")]);
    }
    headers.push("feasible".into());
    let columns = Arc::new(Columns::new(&headers));
    let rows = move |row: &mut SummaryRow, fill: &mut super::charts::data::Fill| {
        for (s, group) in summary.iter().zip(table.groups()) {
            let info = table.config(s.config);
            let c = &info.config;
            let (id, replicates) = (c.id.to_string(), s.replicates.to_string());
            row.set(&Identity {
                scenario: &table.scenarios[s.scenario],
                policy: &info.label,
                family: &c.preset,
                preset: &c.preset,
                config_id: &id,
                replicates: &replicates,
                feasible: Some(meets_constraints(table, &group, constraints)),
                ..Identity::default()
            });
            let resolved = params(&info);
            for p in &names {
                let value = resolved.iter().find(|(k, _)| k == p).map(|(_, v)| v.clone());
                let written =
                    c.overrides.iter().find(|(k, _)| k == p).map(|(_, v)| crate::sweep::grid::plain(v));
                row.set_param(p, &value.or(written).unwrap_or_default());
            }
            let stats = table.metric_stats(&group);
            for (m, st) in
                table.metrics.iter().map(String::as_str).chain(["cost"]).zip(stats.iter().chain([&s.cost]))
            {
                row.set_metric(m, st.mean);
                row.set_metric(&format!("{m}_ci95"), st.ci95);
            }
            fill(row)?;
        }
        table.check().and_then(|()| summary.check()).map_err(|e| ChartError::Draw(e.to_string()))
    };
    Summary::new(columns, Arc::new(rows))
}

/// Reads the output folder `dir` from disk (tests; commands hand over what they computed).
#[cfg(test)]
impl Contents<'static> {
    pub fn load(dir: &std::path::Path) -> Result<Contents<'static>, ChartError> {
        super::folder::load(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::folder::parse::{self, Table};
    use crate::sim::{RunOptions, Workload};
    use crate::sweep::objective::BindToColumns;
    use std::path::Path;

    fn read(bytes: Vec<u8>) -> Table {
        Table::from_reader(Path::new("x.csv"), bytes.as_slice()).unwrap()
    }

    /// Every row of a summary.
    fn rows(s: &Summary) -> Vec<SummaryRow> {
        let mut out = Vec::new();
        s.for_each(|r| {
            out.push(r.clone());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn what_a_run_hands_over_is_what_its_files_read_back() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenario = crate::scenario::load(&root.join("scenarios/fleet-recovery.toml")).unwrap();
        let workload = Workload::build(&scenario, scenario.seed, 0).unwrap();
        let opts = RunOptions { timeline_bin: Some(crate::time::Dur::from_secs(60)), explain: true };
        let policies = [
            scenario.policy.clone().unwrap(),
            crate::policy::PolicySpec { preset: "consecutive".into(), overrides: toml::Table::new() },
        ];
        let results: Vec<(String, crate::sim::RunResult)> = policies
            .iter()
            .map(|spec| {
                let policy = spec.resolve().unwrap();
                (policy.label(), crate::sim::run(&scenario, &workload, &policy, &opts))
            })
            .collect();
        let truth = contents_incidents(&workload.truth);
        assert!(!truth.is_empty());
        // One run (files without labels) and two (labelled).
        for n in [1, 2] {
            let runs: Vec<(&str, &RunRecord)> =
                results[..n].iter().map(|(l, r)| (l.as_str(), &r.record)).collect();
            assert!(runs.iter().all(|(_, r)| !r.transitions.is_empty()));
            assert_eq!(series(&runs), parse::timeline(&read(crate::report::timeline_csv(&runs))).unwrap());
            let changes = parse::transitions(&read(crate::report::transitions_csv(&runs))).unwrap();
            assert_eq!(transitions(&runs), changes);
            assert_eq!(latency(&runs), parse::latency(&read(crate::report::latency_csv(&runs))).unwrap());
            let explain = crate::report::explain_csv(&runs);
            let kept = crate::report::explain::read_marked_rows(explain.as_slice(), &truth).unwrap();
            let names = ["a".to_string(), "b".to_string()];
            assert_eq!(marks(&runs, &truth, &names), crate::report::explain::marks(&kept, &truth, &names));
        }
        assert_eq!(truth, parse::incidents(&read(crate::report::incidents_csv(&workload.truth))).unwrap());
        // The run's summary row, with a parameter given twice and an import count.
        let params = [
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2s".to_string()),
            ("a".into(), "3".into()),
        ];
        let extra = [("import_rows", "12".to_string())];
        let row = crate::report::SummaryRow {
            scenario: &scenario.name,
            policy: &results[0].0,
            preset: "",
            seed: 7,
            replicates: 1,
            params: &params,
            metrics: &results[0].1.metrics,
            extra: &extra,
            stats: &[],
        };
        let typed = run_summary(std::slice::from_ref(&row)).unwrap();
        let written = Summary::of_text(std::str::from_utf8(&crate::report::summary_csv(&[row])).unwrap());
        assert_eq!(typed, written);
        assert_eq!(rows(&typed), rows(&written));
        assert_eq!(
            (rows(&typed)[0].param("a"), rows(&typed)[0].metric("import_rows")),
            (Some("1"), Some(12.0))
        );
    }

    fn contents_incidents(truth: &[IncidentWindow]) -> Vec<Incident> {
        incidents(truth)
    }

    #[test]
    fn what_a_sweep_hands_over_is_what_its_summary_reads_back() {
        use crate::sweep::runner::resolved_params;
        let metrics = ["false_opens", "detection_delay_mean_s", "availability"];
        let mut text =
            format!("scenario,config_id,policy,preset,overrides,replicate,seed,{},cost\n", metrics.join(","));
        let configs = [
            (0, "consecutive[failure_threshold=3]", "consecutive", "\"{ failure_threshold = 3 }\""),
            (5, "windowed", "windowed", "\"{}\""),
        ];
        for (s, scenario) in ["outage", "blip, short"].iter().enumerate() {
            for (c, (id, label, preset, overrides)) in configs.iter().enumerate() {
                for r in 0..3 {
                    let delay = if (s + c + r) % 2 == 0 { format!("{}.25", r + c) } else { String::new() };
                    let opens = if c == 1 { "0".to_string() } else { format!("{}", s + r) };
                    text.push_str(&format!(
                        "\"{scenario}\",{id},\"{label}\",{preset},{overrides},{r},1,{opens},{delay},0.{r}{c}9,{}.5\n",
                        s * 3 + r
                    ));
                }
            }
        }
        let table =
            crate::sweep::output::read_runs(&text, "runs.csv", &crate::sweep::store::Scratch::memory())
                .unwrap();
        use crate::metrics::Metric;
        let objective = crate::sweep::objective::Objective::new([
            (Metric::FalseOpens, 10.0),
            (Metric::DetectionDelayMeanS, 1.0),
        ]);
        let bound = objective.bind(&table.metrics).unwrap();
        let summary = table.summarize(&bound).unwrap();
        let constraints = [Constraint::parse("false_opens <= 1", &table.metrics).unwrap()];
        let csv =
            crate::sweep::output::summary_csv(&table, &summary, &constraints, &resolved_params).unwrap();
        let typed = sweep_summary(&table, &summary, &constraints, &resolved_params).unwrap();
        let written = Summary::of_text(std::str::from_utf8(&csv).unwrap());
        assert_eq!(typed, written);
        let (a, b) = (rows(&typed), rows(&written));
        assert_eq!(a, b);
        assert_eq!(a.len(), 4);
        assert!(
            a.iter().any(|r| r.feasible() == Some(false)) && a.iter().any(|r| r.feasible() == Some(true))
        );
        assert!(a.iter().any(|r| r.metric("detection_delay_mean_s_ci95").is_some()));
        assert_eq!(a[0].param("failure_threshold"), Some("3"));
        // Each pass reads the results again, with the same rows.
        assert_eq!(rows(&typed), a);
    }
}
