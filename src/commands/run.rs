//! `breakerlab run`: one scenario under one breaker configuration, scored and written out.

use super::{out_dir, parse_sets, write_files};
use crate::metrics::Metrics;
use crate::policy::{PolicyConfig, PolicySpec};
use crate::report::page::{InputFile, ReportInputs};
use crate::report::{self, SummaryRow, charts, page};
use crate::scenario::{InputError, Scenario, Spot};
use crate::sim::{self, RunOptions, RunResult, Workload};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What the user asked `run` to do.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    /// A scenario file.
    pub scenario: Option<PathBuf>,
    /// A scripted CSV (`t_ms,latency_ms,ok`) instead of a scenario.
    pub script: Option<PathBuf>,
    /// A preset replacing the scenario's `[policy]`.
    pub policy: Option<String>,
    /// `key=value` overrides of the policy's parameters.
    pub sets: Vec<String>,
    /// Base seed replacing the scenario's.
    pub seed: Option<u64>,
    /// Output folder (default `output/<scenario name>`).
    pub out: Option<PathBuf>,
    /// Skip the PNG charts and the report page.
    pub no_charts: bool,
    /// The command line as typed, for the report page.
    pub command_line: String,
    /// Memory and simulated-call limits checked before the run starts.
    pub limits: crate::limits::Limits,
}

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
}

/// Loads, validates, simulates, scores and writes. Nothing is written if any input is bad.
pub fn run(req: &RunRequest) -> anyhow::Result<RunReport> {
    let scenario = match (&req.scenario, &req.script) {
        (Some(path), None) => Scenario::load(path)?,
        (None, Some(path)) => Scenario::from_script(path)?,
        (Some(_), Some(_)) => {
            return Err(InputError::argument("give a scenario file or --script, not both").into());
        }
        (None, None) => return Err(InputError::argument("give a scenario file, or --script FILE.csv").into()),
    };
    run_scenario(scenario, req)
}

/// Runs a validated scenario as `req` says (its policy, sets, seed, out, no_charts and
/// command_line; `req.scenario` and `req.script` are not read) and writes the run's files into
/// `req.out` (default `output/<scenario name>`). Shared by `run` and `replay`; a trace
/// scenario's summary also carries the import counts ([`super::replay::IMPORT_COLUMNS`]).
pub fn run_scenario(scenario: Scenario, req: &RunRequest) -> anyhow::Result<RunReport> {
    let sets = parse_sets(&req.sets)?;
    // A refused parameter that came from `--set` is named as the flag the user typed.
    let located = |e: InputError| match req
        .sets
        .iter()
        .zip(&sets)
        .find(|(_, (k, _))| e.message.contains(&format!("`{k}`")))
    {
        Some((arg, _)) => InputError::argument(format!("--set {arg}: {}", e.message)),
        None => e,
    };
    let fleet = req.policy.is_none() && !scenario.instance_policies.is_empty();
    let policies: Vec<PolicyConfig> = if fleet {
        let with_sets = |spec: &PolicySpec| {
            let mut spec = spec.clone();
            spec.overrides.extend(sets.iter().cloned());
            scenario.resolve_policy(&spec).map_err(located)
        };
        scenario.instance_policies.iter().map(with_sets).collect::<Result<_, _>>()?
    } else {
        vec![scenario.resolve_policy(&scenario.policy_spec(req.policy.as_deref(), &sets)).map_err(located)?]
    };
    let policy_spot = match (&req.policy, req.sets.first()) {
        (Some(_), _) => Spot::flag("--policy"),
        (None, Some(_)) => Spot::flag("--set"),
        (None, None) if fleet => scenario.origins.instances.clone(),
        (None, None) => scenario.origins.policy.clone(),
    };
    crate::limits::estimate_run(&scenario, &policies, &policy_spot).check(&req.limits)?;
    let seed = req.seed.unwrap_or(scenario.seed);
    let workload = Workload::build(&scenario, seed, 0)?;
    let bin = scenario.scoring.timeline_bin.unwrap_or_else(|| sim::auto_bin(workload.duration()));
    let result = sim::run_fleet(&scenario, &workload, &policies, &RunOptions { timeline_bin: Some(bin) });
    let (label, params, preset) = if fleet {
        let labels: Vec<String> = policies.iter().map(PolicyConfig::label).collect();
        let params = labels.iter().enumerate().map(|(i, l)| (format!("instance{i}"), l.clone())).collect();
        (format!("fleet[{}]", labels.join(",")), params, "fleet")
    } else {
        (policies[0].label(), policies[0].params(), policies[0].preset())
    };
    let row = SummaryRow {
        scenario: &scenario.name,
        policy: &label,
        preset,
        seed,
        replicates: 1,
        params: &params,
        metrics: &result.metrics,
    };
    let mut summary = report::summary_csv(&[row]);
    if let Some(import) = scenario.import_report() {
        summary = super::replay::with_import_columns(&summary, import)?;
    }
    let runs = [(label.as_str(), &result.record)];
    let files = [
        ("summary.csv", summary),
        ("transitions.csv", report::transitions_csv(&runs)),
        ("timeline.csv", report::timeline_csv(&runs)),
        ("incidents.csv", report::incidents_csv(&workload.truth)),
        ("latency.csv", report::latency_csv(&runs)),
    ];
    let dir = out_dir(req.out.as_deref(), &scenario.name);
    let mut files = write_files(&dir, &files)?;
    if !req.no_charts {
        let inputs = report_inputs(&scenario, seed, &req.command_line);
        files.extend(draw_charts_and_report(&dir, &inputs)?);
    }
    Ok(RunReport { scenario, label, seed, result, truth: workload.truth, files })
}

/// What the report page shows to reproduce a run: the command, the seed and the input files.
pub fn report_inputs(scenario: &Scenario, seed: u64, command_line: &str) -> ReportInputs {
    let files = scenario
        .path
        .iter()
        .filter_map(|p| {
            if let Some(import) = scenario.import_report()
                && matches!(&scenario.source, crate::scenario::Source::Trace { file, .. } if file == p)
            {
                // A replayed trace is data, possibly millions of rows: record what was imported.
                let text = import.to_string().lines().map(|l| format!("# {l}\n")).collect();
                return Some(InputFile { name: p.display().to_string(), text });
            }
            InputFile::read(p)
        })
        .collect();
    ReportInputs {
        title: format!("run: {}", scenario.name),
        command_line: Some(command_line.to_string()),
        seed: Some(seed),
        files,
        ..ReportInputs::default()
    }
}

/// Draws every chart the folder's CSVs allow, saves the inputs and writes report.html and
/// report.md; returns the files written.
pub fn draw_charts_and_report(dir: &Path, inputs: &ReportInputs) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = charts::draw_all(dir)?;
    files.push(inputs.save(dir)?);
    let pages = page::write_report(dir, inputs)?;
    files.extend([pages.html, pages.md]);
    Ok(files)
}

/// The short table `run` prints.
pub fn render(report: &RunReport) -> String {
    let mut s = String::new();
    let sc = &report.scenario;
    let _ = writeln!(s, "scenario  {} ({}, seed {})", sc.name, sc.duration, report.seed);
    if !sc.description.is_empty() {
        let _ = writeln!(s, "          {}", sc.description);
    }
    let _ = writeln!(s, "policy    {}", report.label);
    let _ = writeln!(s);
    s.push_str(&metrics_table(&report.result.metrics));
    if let Some(dir) = report.files.first().and_then(|f| f.parent()) {
        let names: Vec<_> =
            report.files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect();
        let _ = writeln!(s, "\nwrote {} to {}", names.join(", "), display_dir(dir));
    }
    s
}

/// Every metric, one per line, empty ones shown as `-`.
pub fn metrics_table(m: &Metrics) -> String {
    let mut s = String::new();
    let providers = m.provider_columns();
    let columns = Metrics::COLUMNS.iter().copied().chain(providers.iter().map(String::as_str));
    let width = columns.clone().map(str::len).max().unwrap_or(0);
    for column in columns {
        let value = m.get(column).map_or_else(|| "-".to_string(), readable);
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

fn display_dir(dir: &Path) -> String {
    format!("{}/", dir.display())
}
