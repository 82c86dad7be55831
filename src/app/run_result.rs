//! What a `run` or `replay` page says first ([`Opening`]): the scores in one sentence (their
//! means and 95 % intervals when there were replicates), the key metrics in a table, then what
//! they rest on: the ground truth used, the import report of a replayed trace and every
//! assumption the command made.

use super::run::RunReport;
use crate::metrics::Metrics;
use crate::report::charts::style::{fmt_num, fmt_pct};
use crate::report::opening::Opening;
use crate::scenario::Source;
use crate::sweep::stats::{Stat, describe};

/// The metrics the opening's table shows, in order: (column, what it is).
const KEY_METRICS: [(&str, &str); 14] = [
    ("incidents", "incidents to open on"),
    ("missed_incidents", "incidents missed"),
    ("false_opens", "false opens"),
    ("open_episodes", "open episodes (closed → open)"),
    ("probe_failures", "re-opens after a failed probe"),
    ("flaps", "flaps"),
    ("detection_delay_mean_s", "detection delay, mean (s)"),
    ("detection_delay_p95_s", "detection delay, p95 (s)"),
    ("recovery_lag_mean_s", "recovery lag, mean (s)"),
    ("availability", "availability"),
    ("answered_latency_p95_ms", "latency p95 of answered requests (ms)"),
    ("shed", "requests shed by the breaker"),
    ("deferred_share", "share of requests deferred"),
    ("cost", "cost (default objective)"),
];

/// The replicates' statistics of `column`.
fn stat(runs: &[Metrics], column: &str) -> Stat {
    describe(runs.iter().map(|m| m.column(column)))
}

/// `0.8282` as `82.8%` for ratios, else to three significant digits (as the charts).
fn value(column: &str, v: f64) -> String {
    if column == "availability" || column.ends_with("_share") { fmt_pct(v) } else { fmt_num(v) }
}

/// `3 ± 1.2` (`-` when no replicate has a value).
fn mean_ci(column: &str, s: &Stat) -> String {
    match (s.mean, s.ci95) {
        (Some(m), Some(ci)) if ci > 0.0 => format!("{} ± {}", value(column, m), value(column, ci)),
        (Some(m), _) => value(column, m),
        _ => "-".into(),
    }
}

/// The scores in one sentence: `3 of 7 incidents missed, 1 false open, 9 open episodes,
/// detection delay mean 24.25 s, availability 98.16 %, cost 39.14` (means ± 95 % intervals over
/// several replicates).
fn scores(report: &RunReport) -> String {
    let runs = &report.replicates;
    let many = runs.len() > 1;
    let show = |c: &str| -> Option<String> {
        if many {
            stat(runs, c).mean.map(|_| mean_ci(c, &stat(runs, c)))
        } else {
            report.result.metrics.column(c).map(|v| value(c, v))
        }
    };
    let mut parts = Vec::new();
    if report.result.metrics.ground_truth {
        if let (Some(missed), Some(incidents)) = (show("missed_incidents"), show("incidents")) {
            parts.push(format!("missed {missed} of {incidents} incident(s) to open on"));
        }
        if let Some(f) = show("false_opens") {
            parts.push(format!("{f} false open(s)"));
        }
    }
    if let Some(e) = show("open_episodes") {
        parts.push(format!("{e} open episode(s)"));
    }
    if let Some(d) = show("detection_delay_mean_s") {
        parts.push(format!("detection delay mean {d} s"));
    }
    if let Some(a) = show("availability") {
        parts.push(format!("availability {a}"));
    }
    if let Some(c) = show("cost") {
        parts.push(format!("cost {c}"));
    }
    let over = if many {
        format!(" (means ± 95 % intervals over {} replicates)", runs.len())
    } else {
        String::new()
    };
    format!("`{}` on {}: {}{over}.", report.label, report.scenario.name, parts.join(", "))
}

/// Where the ground truth came from and what it holds.
fn truth(report: &RunReport) -> String {
    let windows = &report.truth;
    let open = windows.iter().filter(|w| w.expect == crate::truth::Expect::Open).count();
    let count = format!("{} window(s), {open} to open on", windows.len());
    match &report.scenario.source {
        Source::Trace { truth: None, .. } => {
            "Ground truth: none given (--labels or --slo): the scores that need it are left empty.".into()
        }
        Source::Trace { .. } => match &report.truth_source {
            Some(source) => format!("Ground truth: {source}: {count}."),
            None => format!("Ground truth: the trace's [trace] settings in the scenario file: {count}."),
        },
        Source::Script { .. } => format!("Ground truth: the script's incidents: {count}."),
        _ => format!("Ground truth: the scenario file's incidents ([[incidents]]): {count}."),
    }
}

/// The opening of a run's page (`replay`: of a replay's).
pub fn opening(report: &RunReport, replay: bool) -> Opening {
    let runs = &report.replicates;
    let many = runs.len() > 1;
    let mut statements = vec![scores(report)];
    let sc = &report.scenario;
    statements.push(format!(
        "Scenario {} ({}, seed {}){}.",
        sc.name,
        sc.duration,
        report.seed,
        if sc.description.is_empty() { String::new() } else { format!(": {}", sc.description) }
    ));
    let mut headings = vec!["metric".to_string()];
    headings.push(if many { "replicate 0".into() } else { "value".into() });
    if many {
        headings.push(format!("mean ± 95 % over {} replicates", runs.len()));
    }
    let rows = KEY_METRICS
        .iter()
        .filter(|(c, _)| {
            report.result.metrics.ground_truth
                || !crate::metrics::Metric::from_name(c).is_some_and(|m| m.needs_ground_truth())
        })
        .map(|(c, name)| {
            let mut row = vec![name.to_string()];
            row.push(report.result.metrics.column(c).map_or_else(|| "-".into(), |v| value(c, v)));
            if many {
                row.push(mean_ci(c, &stat(runs, c)));
            }
            row
        })
        .collect();
    let mut basis = vec![truth(report)];
    if let Some(import) = sc.import_report() {
        let text = import.to_string();
        let mut lines = text.lines().map(str::trim);
        if let Some(first) = lines.next() {
            basis.push(format!("Import: {first}."));
        }
        basis.extend(lines.map(|l| format!("Import {l}.")));
        if import.epoch_offset_us != 0 {
            basis.push(
                "Times are UTC, the trace's clock: the charts' axis and the state changes below.".into(),
            );
        }
    }
    basis.extend(report.assumptions.iter().map(|a| format!("Assumed: {a}.")));
    Opening {
        heading: if replay { "Replay result".into() } else { "Result".into() },
        statements,
        headings,
        rows,
        table_note: "Every metric is in summary.csv and in the terminal's list; open episodes count \
                     closed → open, as the timeline's lanes do."
            .into(),
        basis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::run::{Input, RunRequest, RunSettings, run};

    /// A run of the bundled hard-outage scenario over `replicates` replicates into a new folder.
    fn hard_outage(replicates: u32, charts: bool) -> (tempfile::TempDir, RunReport) {
        let dir = tempfile::tempdir().unwrap();
        let report = run(&RunRequest {
            input: Input::Scenario(crate::app::bundled("hard-outage.toml")),
            settings: RunSettings {
                out: Some(dir.path().join("out")),
                replicates,
                charts,
                ..RunSettings::default()
            },
        })
        .unwrap();
        (dir, report)
    }

    #[test]
    fn replicates_put_the_terminals_means_and_intervals_in_summary_csv_and_the_opening() {
        let (dir, report) = hard_outage(3, false);
        let mut csv = csv::Reader::from_path(dir.path().join("out/summary.csv")).unwrap();
        let header = csv.headers().unwrap().clone();
        let row = csv.records().next().unwrap().unwrap();
        let cell = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_string();
        assert_eq!(cell("replicates"), "3");
        for column in ["detection_delay_mean_s", "requests", "cost"] {
            let s = describe(report.replicates.iter().map(|m| m.column(column)));
            assert_eq!(cell(column).parse::<f64>().unwrap(), s.mean.unwrap(), "{column}");
            let ci: f64 = cell(&format!("{column}_ci95")).parse().unwrap();
            assert_eq!(ci, s.ci95.unwrap(), "{column}");
            assert!(ci > 0.0, "{column}: three replicates on other streams differ");
        }
        // The terminal prints the same means.
        let terminal = crate::app::run::render(&report);
        let requests = describe(report.replicates.iter().map(|m| m.column("requests")));
        assert!(terminal.contains(&crate::app::run::readable(requests.mean.unwrap())), "{terminal}");
        // And the page's opening: its table's third column is mean ± interval.
        let o = opening(&report, false);
        assert_eq!(o.headings[2], "mean ± 95 % over 3 replicates");
        assert!(o.statements[0].contains("(means ± 95 % intervals over 3 replicates)"), "{:?}", o.statements);
        assert_eq!(Opening::from_toml(std::path::Path::new("opening"), &o.to_toml().unwrap()).unwrap(), o);
        // One run keeps one value per metric and no spread columns.
        let (one, _) = hard_outage(1, false);
        let text = std::fs::read_to_string(one.path().join("out/summary.csv")).unwrap();
        assert!(!text.lines().next().unwrap().contains("_ci95"));
    }

    #[test]
    fn a_run_page_opens_on_its_scores_and_ground_truth_before_any_chart() {
        let (dir, report) = hard_outage(1, true);
        // inputs.toml keeps the opening: `report DIR` rebuilds the page on the same answer.
        let read = crate::report::folder::load(&dir.path().join("out")).unwrap();
        assert_eq!(read.opening, Some(opening(&report, false)));
        let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("{s} not in the page"));
        assert!(at("<h2 id=\"result\">Result</h2>") < at("<h2 id=\"charts\">"));
        assert!(at("<code>consecutive</code> on hard-outage: missed 0 of 1 incident(s)") < at("<img"));
        assert!(
            at("Ground truth: the scenario file&#39;s incidents ([[incidents]]): 1 window(s)") < at("<img")
        );
    }
}
