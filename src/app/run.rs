//! `breakerlab run`: one scenario under one breaker configuration, scored and written out.
//! [`run_scenario`] also serves `replay`, whose trace becomes a scenario first.

use super::output::{self, Keep, OutputDir, Page};
use super::parse_sets;
use crate::Result;
use crate::metrics::Metrics;
use crate::policy::{PolicyConfig, PolicySpec};
use crate::report::charts::ChartOptions;
use crate::report::charts::data::{Incident, LatencyHist, SINGLE_POLICY, Series, Summary, TransitionRow};
use crate::report::contents::{self, Contents};
use crate::report::explain::MarkedRows;
use crate::report::page::{InputFile, ReportInputs};
use crate::report::{self, SummaryRow};
use crate::scenario::{self, InputError, Scenario, Source, Spot};
use crate::sim::{self, RunOptions, RunResult, Workload};
use crate::sweep::progress_log::{ProgressLog, Work};
use std::fmt::Write as _;
use std::path::PathBuf;

/// What `run` simulates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A scenario file (TOML).
    Scenario(PathBuf),
    /// A scripted CSV (`t_ms,latency_ms,ok`): exactly those calls, no retries.
    Script(PathBuf),
}

/// How to run a scenario and where to write it: shared by `run` and `replay`.
#[derive(Clone, Debug, Default)]
pub struct RunSettings {
    /// A preset replacing the scenario's `[policy]`.
    pub policy: Option<String>,
    /// `key=value` overrides of the policy's parameters.
    pub sets: Vec<String>,
    /// Base seed replacing the scenario's.
    pub seed: Option<u64>,
    /// Output folder (default `output/<scenario name>`).
    pub out: Option<PathBuf>,
    /// Draw the PNG charts and write the report page.
    pub charts: bool,
    /// The command line as typed, for the report page.
    pub command_line: String,
    /// Memory and simulated-call limits checked before the run starts.
    pub limits: crate::limits::Limits,
    /// Replicates to run (their seeds differ); the files are those of the first.
    pub replicates: u32,
    /// A replay (the page's title and opening say so).
    pub replay: bool,
    /// Where a replayed trace's ground truth came from (`SLO rule `p95 > 2s for 3m``).
    pub truth_source: Option<String>,
    /// What the command assumed that the input did not say (`Poisson arrivals at 5 req/s
    /// (--rate)`), shown with the result.
    pub assumptions: Vec<String>,
}

/// What the user asked `run` to do.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The scenario or script.
    pub input: Input,
    /// Policy, overrides, seed and outputs.
    pub settings: RunSettings,
}

/// Columns a trace scenario adds to summary.csv: data rows read, bad rows skipped, gaps found.
pub const IMPORT_COLUMNS: [&str; 3] = ["trace_rows", "bad_rows_skipped", "trace_gaps"];

/// What a run produced.
#[derive(Debug)]
pub struct RunReport {
    /// The scenario run.
    pub scenario: Scenario,
    /// The configuration run (its label; a mixed fleet is `fleet[label,...]`).
    pub label: String,
    /// The base seed used.
    pub seed: u64,
    /// Record and scores.
    pub result: RunResult,
    /// The ground-truth windows the run was scored against.
    pub truth: Vec<crate::truth::IncidentWindow>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Every replicate's scores (replicate 0 is `result`); one entry without `--replicates`.
    pub replicates: Vec<Metrics>,
    /// Where a replayed trace's ground truth came from ([`RunSettings::truth_source`]).
    pub truth_source: Option<String>,
    /// What the command assumed ([`RunSettings::assumptions`]).
    pub assumptions: Vec<String>,
}

/// Loads, validates, simulates, scores and writes. Nothing is written if any input is bad.
pub fn run(req: &RunRequest) -> Result<RunReport> {
    let scenario = match &req.input {
        Input::Scenario(path) => scenario::load(path)?,
        Input::Script(path) => scenario::from_script(path)?,
    };
    run_scenario(scenario, &req.settings)
}

/// Runs a validated scenario as `settings` say and writes the run's files into `settings.out`
/// (default `output/<scenario name>`). A trace scenario's summary also carries the import
/// counts ([`IMPORT_COLUMNS`]).
pub fn run_scenario(scenario: Scenario, settings: &RunSettings) -> Result<RunReport> {
    let sets = parse_sets(&settings.sets)?;
    // A refused parameter that came from `--set` is named as the flag the user typed.
    let located = |e: InputError| {
        let named = super::name_flag(&e.message, None, &settings.sets);
        if named.message == e.message { e } else { named }
    };
    let fleet = settings.policy.is_none() && !scenario.instance_policies.is_empty();
    let policies: Vec<PolicyConfig> = if fleet {
        let with_sets = |spec: &PolicySpec| {
            let mut spec = spec.clone();
            spec.overrides.extend(sets.iter().cloned());
            scenario.resolve_policy(&spec).map_err(located)
        };
        scenario.instance_policies.iter().map(with_sets).collect::<Result<_, _>>()?
    } else {
        vec![
            scenario
                .resolve_policy(&scenario.policy_spec(settings.policy.as_deref(), &sets))
                .map_err(located)?,
        ]
    };
    let policy_spot = match (&settings.policy, settings.sets.first()) {
        (Some(_), _) => Spot::flag("--policy"),
        (None, Some(_)) => Spot::flag("--set"),
        (None, None) if fleet => scenario.origins.instances.clone(),
        (None, None) => scenario.origins.policy.clone(),
    };
    let estimate =
        crate::limits::estimate_run(&scenario, &policies, &policy_spot, settings.replicates.max(1));
    estimate.check(&settings.limits)?;
    let calls = estimate.calls() / u64::from(settings.replicates.max(1));
    let seed = settings.seed.unwrap_or(scenario.seed);
    // The review page lists every input with its SHA-256: they are read and hashed on the other
    // core while this one simulates (a script's hash was made as it was read).
    let (written, inputs) = std::thread::scope(|s| {
        // The charts draw on rayon's pool: started on another thread now, it is ready (the
        // processors counted, its threads made) when the run is over.
        if settings.charts {
            s.spawn(rayon::current_num_threads);
        }
        let inputs =
            settings.charts.then(|| s.spawn(|| report_inputs(&scenario, seed, &settings.command_line)));
        let written = simulate_and_write(&scenario, &policies, fleet, seed, settings, calls);
        (written, inputs.map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))))
    });
    let Written { out, label, result, truth, replicates, shown } = written?;
    let mut report = RunReport {
        scenario,
        label,
        seed,
        result,
        truth,
        files: Vec::new(),
        replicates,
        truth_source: settings.truth_source.clone(),
        assumptions: settings.assumptions.clone(),
    };
    let opening = super::run_result::opening(&report, settings.replay);
    let page = inputs.zip(shown).map(|(mut inputs, shown)| {
        if settings.replay {
            inputs.title = format!("replay: {}", report.scenario.name);
        }
        if let Some(names) = host_lanes(&report.scenario, report.result.record.instances) {
            inputs.breakers = names;
        }
        inputs.opening = Some(opening.clone());
        let mut contents = shown.contents(&inputs);
        contents.opening = Some(opening);
        (Page { inputs: Some(inputs), charts: ChartOptions::default() }, contents)
    });
    report.files = out.finish(page.as_ref().map(|(page, contents)| (page, contents)))?;
    Ok(report)
}

/// A run simulated and its CSV files written into the output set, charts and page still to come.
struct Written {
    out: OutputDir,
    label: String,
    result: RunResult,
    truth: Vec<crate::truth::IncidentWindow>,
    replicates: Vec<Metrics>,
    /// What the charts and the page show (runs asked for charts only).
    shown: Option<Shown>,
}

/// What a run's charts and page show, as the run computed it: replicate 0's time bins, state
/// changes and latency, the incidents, the marks' rows and the summary.
struct Shown {
    series: Vec<Series>,
    transitions: Vec<TransitionRow>,
    incidents: Vec<Incident>,
    latency: Vec<LatencyHist>,
    marked: MarkedRows,
    summary: Summary<'static>,
}

impl Shown {
    /// The contents of the run's page, whose inputs are `inputs`.
    fn contents(self, inputs: &ReportInputs) -> Contents<'static> {
        let Shown { series, transitions, incidents, latency, marked, summary } = self;
        Contents {
            marks: marked.marks(&incidents, &inputs.breakers),
            timeline: Some(contents::timeline(series, transitions, incidents, Some(&summary), Some(inputs))),
            summary: Some(summary),
            latency: Some(latency),
            inputs: Some(inputs.clone()),
            ..Contents::default()
        }
    }
}

/// Simulates replicate 0 into a new output set, then the other replicates for their scores,
/// and writes the CSV files.
fn simulate_and_write(
    scenario: &Scenario,
    policies: &[PolicyConfig],
    fleet: bool,
    seed: u64,
    settings: &RunSettings,
    estimated_calls: u64,
) -> Result<Written> {
    let workload = Workload::build(scenario, seed, 0)?;
    let bin = scenario.scoring.timeline_bin.unwrap_or_else(|| sim::auto_bin(workload.duration()));
    let opts = RunOptions { timeline_bin: Some(bin), explain: true };
    // The folder's set is started before the run: transitions.csv and explain.csv's rows are
    // streamed into it as the run goes (a week of a breaker that trips every half minute has
    // a million of them), never held. Nothing shows in the folder until the set is complete.
    let dir = output::out_dir(settings.out.as_deref(), &scenario.name);
    let mut out = OutputDir::create(&dir, Keep::Foreign)?;
    let mut transitions = out.stream(output::TRANSITIONS_CSV)?;
    let mut explain_body = out.scratch(output::EXPLAIN_CSV)?;
    let mut explain = report::explain::ExplainWriter::new(false);
    report::transitions_header(&mut transitions, false).map_err(|e| transitions.error(e))?;
    // A scripted run's calls.csv (28 MB for a week) is written as the run hands out its
    // answered calls, a piece at a time.
    let scripted = matches!(scenario.source, Source::Script { .. });
    let mut calls = scripted.then(|| out.stream(output::CALLS_CSV)).transpose()?.map(report::CallsCsv::new);
    // The state changes and the marks' rows the charts and the page show, kept as they come.
    let incidents = contents::incidents(&workload.truth);
    let mut shown_changes: Option<(Vec<TransitionRow>, MarkedRows)> =
        settings.charts.then(|| (Vec::new(), MarkedRows::new(&incidents)));
    // Without a terminal, a long run says how far it is (stderr only).
    let fed = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let requests = (scenario.expected_requests() as u64).max(1);
    let work =
        Work { total: requests, unit: "requests", calls_per_unit: estimated_calls as f64 / requests as f64 };
    let polled = std::sync::Arc::clone(&fed);
    let progress = ProgressLog::start(work, false, move || {
        Some(polled.load(std::sync::atomic::Ordering::Relaxed).min(requests))
    });
    let result = sim::run_fleet_streaming(
        scenario,
        &workload,
        policies,
        &opts,
        |instance, t, evidence| {
            report::transition_row(&mut transitions, None, instance, t).map_err(|e| transitions.error(e))?;
            if let Some((changes, marked)) = &mut shown_changes {
                changes.push(contents::transition(SINGLE_POLICY, instance, t));
                marked.transition("", instance, t, evidence);
            }
            let body = explain_body.writer();
            explain.transition(body, "", instance, t, evidence).map_err(|e| body.error(e))
        },
        |mut piece| {
            if let Some(csv) = &mut calls {
                csv.rows(&piece).map_err(|e| csv.writer().error(e))?;
            }
            piece.clear();
            Ok(piece)
        },
        |done| fed.store(done, std::sync::atomic::Ordering::Relaxed),
    )?;
    drop(progress);
    let calls = match calls {
        Some(mut csv) => {
            let done = csv.rows(&result.record.calls).and_then(|()| csv.finish());
            done.map_err(|e| csv.writer().error(e))?;
            Some(csv.into_inner())
        }
        None => None,
    };
    for s in &result.record.snapshots {
        let body = explain_body.writer();
        explain.snapshot(body, "", s).map_err(|e| body.error(e))?;
        if let Some((_, marked)) = &mut shown_changes {
            marked.snapshot("", s);
        }
    }
    let (label, params, preset) = if fleet {
        let labels: Vec<String> = policies.iter().map(PolicyConfig::label).collect();
        let params = labels.iter().enumerate().map(|(i, l)| (format!("instance{i}"), l.clone())).collect();
        (format!("fleet[{}]", labels.join(",")), params, "fleet")
    } else {
        (policies[0].label(), policies[0].params(), policies[0].preset())
    };
    let mut replicates = vec![result.metrics.clone()];
    for r in 1..settings.replicates.max(1) {
        let w = Workload::build(scenario, seed, r)?;
        replicates.push(
            sim::run_fleet(scenario, &w, policies, &RunOptions { explain: false, ..opts.clone() }).metrics,
        );
    }
    let extra = import_columns(scenario);
    // Over several replicates summary.csv holds each metric's mean and interval, as the
    // terminal prints them.
    let stats: Vec<crate::sweep::stats::Stat> = match replicates.len() {
        1 => Vec::new(),
        _ => Metrics::COLUMNS
            .iter()
            .map(|c| crate::sweep::stats::describe(replicates.iter().map(|m| m.column(c))))
            .collect(),
    };
    let row = SummaryRow {
        scenario: &scenario.name,
        policy: &label,
        preset,
        seed,
        replicates: replicates.len() as u32,
        params: &params,
        metrics: &result.metrics,
        extra: &extra,
        stats: &stats,
    };
    let runs = [(label.as_str(), &result.record)];
    let shown = match shown_changes {
        Some((transitions, marked)) => Some(Shown {
            series: contents::series(&runs),
            transitions,
            incidents,
            latency: contents::latency(&runs),
            marked,
            summary: contents::run_summary(std::slice::from_ref(&row))?,
        }),
        None => None,
    };
    // The timeline, incidents and latency tables are made on another thread while this one
    // writes the summary and explain.csv; all are written in the order they always had.
    let tables = std::thread::scope(|s| {
        let tables = s.spawn(|| {
            [
                (output::TIMELINE_CSV, report::timeline_csv(&runs)),
                (output::INCIDENTS_CSV, report::incidents_csv(&workload.truth)),
                (output::LATENCY_CSV, report::latency_csv(&runs)),
            ]
        });
        out.write(output::SUMMARY_CSV, &report::summary_csv(&[row]))?;
        out.close(transitions)?;
        let mut body = explain_body.reader()?;
        out.write_with(output::EXPLAIN_CSV, |w| {
            explain.finish(&mut body, w).map_err(|e| explain_body.writer().error(e))
        })?;
        drop(explain_body);
        Ok::<_, crate::Error>(tables.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })?;
    out.write_all(&tables)?;
    if let Some(calls) = calls {
        out.close(calls)?;
    }
    Ok(Written { out, label, result, truth: workload.truth, replicates, shown })
}

/// The timeline's lane names when the run's breakers are outlier detectors' hosts: a pool
/// scenario whose run has one instance per (client, host).
fn host_lanes(scenario: &Scenario, instances: usize) -> Option<Vec<String>> {
    let names: Vec<String> = match &scenario.source {
        Source::Model { pool: Some(pool), .. } => (0..pool.len()).map(|h| format!("host {h}")).collect(),
        Source::Trace { trace: crate::trace::Trace::Calls(log), .. } => log.hosts()?.names.clone(),
        _ => return None,
    };
    let clients = scenario.client.instances.max(1) as usize;
    (instances > 1 && instances == clients * names.len())
        .then(|| crate::report::page::host_lane_names(clients, &names))
}

/// The import counts of a trace scenario, as summary.csv columns (none for other scenarios).
fn import_columns(scenario: &Scenario) -> Vec<(&'static str, String)> {
    let Some(import) = scenario.import_report() else { return Vec::new() };
    let values = [import.rows, import.bad_rows_skipped, import.gaps];
    IMPORT_COLUMNS.iter().zip(values).map(|(c, v)| (*c, v.to_string())).collect()
}

/// What the report page shows to reproduce a run: the command, the seed and the input files
/// (a replayed trace with what was imported of it). A script is not read again to be hashed:
/// its SHA-256 was made as it was loaded.
pub fn report_inputs(scenario: &Scenario, seed: u64, command_line: &str) -> ReportInputs {
    let files = super::input_paths(None, std::slice::from_ref(scenario))
        .iter()
        .filter_map(|p| {
            let mut file = match &scenario.source {
                Source::Script { rows, .. } if rows.path() == p => {
                    let mut file = InputFile::read_unhashed(p)?;
                    if file.sha256.is_empty() {
                        file.sha256 = crate::sweep::shard::hex(&rows.sha256());
                    }
                    file
                }
                _ => InputFile::read(p)?,
            };
            if let Some(import) = scenario.import_report()
                && matches!(&scenario.source, Source::Trace { file, .. } if file == p)
            {
                file.note = Some(import.to_string());
            }
            Some(file)
        })
        .collect();
    ReportInputs {
        title: format!("run: {}", scenario.name),
        command_line: Some(command_line.to_string()),
        seed: Some(seed),
        files,
        ..ReportInputs::default()
    }
    .with_scenario(scenario)
}

/// The short table `run` and `replay` print; a trace scenario's import report and ground truth
/// come first, replicate statistics last.
pub fn render(report: &RunReport) -> String {
    let mut s = String::new();
    if let Some(import) = report.scenario.import_report() {
        let _ = writeln!(s, "import    {import}");
        let truth = &report.truth;
        if report.result.metrics.ground_truth {
            let open = truth.iter().filter(|w| w.expect == crate::truth::Expect::Open).count();
            let from = report.truth_source.as_deref().map(|t| format!(" from {t}")).unwrap_or_default();
            let _ = writeln!(s, "truth     {} windows ({open} to open on){from}", truth.len());
        } else {
            let _ = writeln!(
                s,
                "truth     none given (--labels or --slo): scores that need it are left empty (-)"
            );
        }
    }
    let sc = &report.scenario;
    let _ = writeln!(s, "scenario  {} ({}, seed {})", sc.name, sc.duration, report.seed);
    if !sc.description.is_empty() {
        let _ = writeln!(s, "          {}", sc.description);
    }
    let _ = writeln!(s, "policy    {}", report.label);
    for a in &report.assumptions {
        let _ = writeln!(s, "assumed   {a}");
    }
    let _ = writeln!(s);
    s.push_str(&metrics_table(&report.result.metrics));
    if report.replicates.len() > 1 {
        s.push_str(&replicates_table(&report.replicates));
    }
    if let Some(wrote) = super::wrote(&report.files) {
        let _ = writeln!(s, "\n{wrote}");
    }
    s
}

/// Each metric's mean over the replicates with the half-width of its 95% confidence interval
/// (Student t, as `compare` reports), `-` where no replicate has a value.
pub fn replicates_table(runs: &[Metrics]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\nover {} replicates: mean ± 95% confidence interval", runs.len());
    let width = Metrics::COLUMNS.iter().map(|c| c.len()).max().unwrap_or(0);
    for column in Metrics::COLUMNS {
        let stat = crate::sweep::stats::describe(runs.iter().map(|m| m.column(column)));
        let value = match (stat.mean, stat.ci95) {
            (Some(m), Some(ci)) => format!("{} ± {}", readable(m), readable(ci)),
            (Some(m), None) => readable(m),
            _ => "-".to_string(),
        };
        let _ = writeln!(s, "  {column:<width$}  {value:>24}");
    }
    s
}

/// Every metric, one per line, empty ones shown as `-`.
pub fn metrics_table(m: &Metrics) -> String {
    let mut s = String::new();
    let providers = m.extra_columns();
    let columns = Metrics::COLUMNS.iter().copied().chain(providers.iter().map(String::as_str));
    let width = columns.clone().map(str::len).max().unwrap_or(0);
    for column in columns {
        let value = m.column(column).map_or_else(|| "-".to_string(), readable);
        let _ = writeln!(s, "  {column:<width$}  {value:>12}");
    }
    s
}

/// A number for people: integers as they are, others to four decimals without trailing zeros.
pub fn readable(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}
