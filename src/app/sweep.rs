//! `breakerlab sweep [FILE]`: every cell of a sweep file, run in parallel, summarized, ranked and
//! written out with the recommendation.

use super::deploy::{self, Deployed};
use super::load_scenarios;
use super::output::{self, Keep, OutputDir, Page};
use crate::limits::{Limits, estimate_cells};
use crate::policy::export::Library;
use crate::report::charts::ChartOptions;
use crate::report::contents::{self, Contents};
use crate::report::folder;
use crate::report::page::{InputFile, ReportInputs};
use crate::scenario::Scenario;
use crate::scenario::{InputError, Spot};
use crate::sim::Workload;
use crate::sweep::SweepError;
use crate::sweep::auto::{AutoReport, Judge, Stages, looks};
use crate::sweep::constraint::Constraint;
pub use crate::sweep::file::Replicates;
use crate::sweep::file::SweepFile;
use crate::sweep::objective::BindToColumns;
use crate::sweep::objective::Objective;
use crate::sweep::output::{objective_toml, write_pareto, write_runs, write_summary};
use crate::sweep::recommend::{Recommendation, Rules, best_per_scenario, num, recommend_from};
use crate::sweep::review::{self, BaselineReview, Review, ScenarioFacts};
use crate::sweep::runner::{
    Cells, Configs, Labelled, check_named, default_objective, nameable_columns, progress_bar_of,
    resolved_params, result_columns, validate_policy,
};
use crate::sweep::selection::Settings;
use crate::sweep::store::Scratch;
use crate::sweep::table::{ResultTable, Summary, TableBuilder};
pub use crate::sweep::target::TargetMode;
use crate::sweep::target::{self, Deployment};
use crate::truth::Expect;
use crate::{Error, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The bundled default sweep, looked up under the working folder (the repository's root).
pub const DEFAULT_SWEEP: &str = "scenarios/sweeps/default.toml";

/// What the user asked `sweep` to do.
#[derive(Clone, Debug, Default)]
pub struct SweepRequest {
    /// The sweep file; the bundled default sweep ([`DEFAULT_SWEEP`]) when `None`.
    pub file: Option<PathBuf>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Output folder (default `output/<sweep name>`).
    pub out: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
    /// Draw the PNG charts and write the report page.
    pub charts: bool,
    /// The command line as typed, for the report page.
    pub command_line: String,
    /// Memory and simulated-call limits checked before anything runs; with
    /// `replicates = "auto"`, `max_calls` is also the budget its stages stop at.
    pub limits: Limits,
    /// `--replicates N|auto`: replaces the sweep file's `replicates`.
    pub replicates: Option<Replicates>,
    /// `--max-replicates N`: the most `replicates = "auto"` gives a configuration.
    pub max_replicates: Option<u32>,
    /// `--target LIBRARY`: replaces the sweep file's `target`.
    pub target: Option<Library>,
    /// `--target-mode exact|nearest`: replaces the sweep file's `target_mode`.
    pub target_mode: Option<TargetMode>,
}

/// What `breakerlab sweep` did.
#[derive(Debug)]
pub struct SweepReport {
    /// The sweep's name.
    pub name: String,
    /// Replicates per (scenario, configuration), or `replicates = "auto"`'s stages.
    pub ran: Ran,
    /// Metric values of every cell.
    pub table: ResultTable,
    /// Aggregates over replicates.
    pub summary: Summary,
    /// Per scenario, the best configurations (table index, mean cost) meeting the constraints.
    pub best: Vec<Vec<(usize, f64)>>,
    /// The overall recommendation.
    pub recommendation: Recommendation,
    /// How it was selected.
    pub settings: Settings,
    /// The verdict on the baseline, when the sweep names one.
    pub baseline: Option<BaselineReview>,
    /// The target's check and replacements, when the sweep has a target.
    pub deployment: Option<Deployment>,
    /// The exports of a targeted sweep.
    pub deployed: Option<Deployed>,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// The sweep file to run: the one given, else the bundled default under the working folder.
pub(super) fn sweep_path(file: Option<&Path>) -> Result<PathBuf> {
    match file {
        Some(f) => Ok(f.to_path_buf()),
        None if Path::new(DEFAULT_SWEEP).is_file() => Ok(PathBuf::from(DEFAULT_SWEEP)),
        None => Err(InputError::argument(format!(
            "no sweep file given and the bundled default sweep {DEFAULT_SWEEP} is not under the \
             working folder: run from the repository's root or name a sweep file"
        ))
        .into()),
    }
}

/// `breakerlab sweep [FILE] [--threads N] [--out DIR] [--quiet]`: reads and validates the sweep
/// file, runs every cell, writes summary.csv, runs.csv, pareto.csv, objective.toml,
/// recommendation.txt and recommended.txt to `out` (default `output/<name>`), and recommends;
/// with `charts`, also the charts and the report page.
pub fn sweep(req: &SweepRequest) -> Result<SweepReport> {
    let path = sweep_path(req.file.as_deref())?;
    let mut file =
        super::files::load_sweep(&path, &nameable_columns(), &validate_policy).map_err(InputError::from)?;
    file.set_replicates(req.replicates, req.max_replicates).map_err(InputError::argument)?;
    let deployment = targeted(&mut file, req.target, req.target_mode)?;
    let scenarios = load_scenarios(&file.scenarios)?;
    let columns = result_columns(&scenarios);
    let objective = file.objective.clone().unwrap_or_else(default_objective);
    objective.bind(&columns).map_err(InputError::from)?;
    check_named(file.constraints.iter().map(|c| c.metric), &columns).map_err(InputError::from)?;
    let out = output::out_dir(req.out.as_deref(), &file.name);
    let names: Vec<String> = scenarios.iter().map(|s| s.name.clone()).collect();
    let configs_spot = Spot::in_file(&path, "", None, "[[policies]]");
    let configs = &file.configurations;
    let slots = file.replicates;
    let cells = Cells { scenarios: &scenarios, configs, replicates: file.replicates, seed: file.seed };
    let mut calls_per_cell = 0.0;
    if !file.auto {
        // The work is estimated, and refused at the field that sizes it, before anything is made.
        let estimate = estimate_cells(&cells, None, &file.replicates_spot, &configs_spot)?;
        estimate.check(&req.limits)?;
        calls_per_cell = estimate.calls() as f64 / cells.count().max(1) as f64;
    }
    let mut rows = TableBuilder::new(names, configs.count(), columns.clone(), slots, &scratch_next_to(&out))?;
    let stages = if file.auto {
        let run =
            Staged { file: &file, scenarios: &scenarios, columns: &columns, configs_spot: &configs_spot };
        Some(run.run(&objective, req, &mut rows)?)
    } else {
        let bar = progress_bar_of(cells.count(), calls_per_cell, req.quiet);
        cells.run_slices(&cells.all(), req.threads, &columns, &bar, &mut |row| rows.put(&row, row.config))?;
        None
    };
    let table = rows.finish(Box::new(Labelled(std::mem::take(&mut file.configurations))))?;
    let inputs = ReportInputs {
        title: format!("sweep: {}", file.name),
        command_line: Some(req.command_line.clone()),
        seed: file.seed,
        // Every file the sweep read, with its SHA-256: the page and inputs.toml reproduce it alone.
        files: super::input_paths(Some(&path), &scenarios)
            .iter()
            .filter_map(|p| InputFile::read(p))
            .collect(),
        ..ReportInputs::default()
    };
    let auto = file.auto.then(|| looks(file.replicates));
    let settings = Settings { rule: file.rule, baseline: file.baseline, auto };
    let ranking =
        Ranking { objective, constraints: file.constraints, fronts: file.pareto, settings, deployment };
    let facts = scenario_facts(&scenarios, file.seed)?;
    let ran = Ran { replicates: file.replicates, stages };
    finish(file.name, ran, table, &ranking, Some(&facts), &out, req.charts.then_some(inputs))
}

/// Applies the sweep's target (the file's, or `--target`/`--target-mode`) to its grid before
/// anything runs: refusals (exit 2) or replacements.
pub(super) fn targeted(
    file: &mut SweepFile,
    library: Option<Library>,
    mode: Option<TargetMode>,
) -> Result<Option<Deployment>> {
    let target = target::chosen(file.target.clone(), library, mode).map_err(InputError::argument)?;
    Ok(target.map(|t| target::apply(file, t)).transpose().map_err(InputError::from)?)
}

/// An automatic sweep (`replicates = "auto"`) run on this machine, stage after stage.
struct Staged<'a> {
    file: &'a SweepFile,
    scenarios: &'a [Scenario],
    columns: &'a [String],
    configs_spot: &'a Spot,
}

impl Staged<'_> {
    /// Runs the stages of [`crate::sweep::auto`] into `rows` until the confidence is reached or
    /// the budget (`max_replicates`, `--max-calls`) runs out. The first stage must fit the
    /// call limit and the whole table the memory limit, or nothing runs.
    fn run(&self, objective: &Objective, req: &SweepRequest, rows: &mut TableBuilder) -> Result<AutoReport> {
        let file = self.file;
        let (configs, max) = (&file.configurations, file.replicates);
        let cells = |replicates| Cells { scenarios: self.scenarios, configs, replicates, seed: file.seed };
        let per_run = auto_budget(file, self.scenarios, self.configs_spot, &req.limits)?;
        let bound = objective.bind(self.columns).map_err(InputError::from)?;
        let columns = constraint_columns(&file.constraints, self.columns);
        let n_scenarios = self.scenarios.len() as u64;
        let mut stages =
            Stages::new(configs.count(), self.scenarios.len(), max, per_run, req.limits.max_calls);
        while let Some(stage) = stages.current() {
            let bar = progress_bar_of(stages.cells(), per_run as f64 / n_scenarios.max(1) as f64, req.quiet);
            cells(max).run_stage(
                stage.running,
                stage.replicates,
                req.threads,
                self.columns,
                &bar,
                &mut |row| rows.put(&row, row.config),
            )?;
            stages.ran(&Judge {
                table: rows.table(),
                bound: &bound,
                constraints: &file.constraints,
                columns: &columns,
                rule: file.rule,
                max,
                baseline: file.baseline,
            });
        }
        Ok(stages.into_report())
    }
}

/// Checks an automatic sweep against `limits` before anything runs (its first stage within the
/// call limit, its whole table within the memory limit) and returns the expected calls of one
/// replicate of one configuration over every scenario, what its stages' budget counts.
pub(super) fn auto_budget(
    file: &SweepFile,
    scenarios: &[Scenario],
    configs_spot: &Spot,
    limits: &Limits,
) -> Result<u64> {
    let configs = &file.configurations;
    let cells = |replicates| Cells { scenarios, configs, replicates, seed: file.seed };
    let spot = &file.replicates_spot;
    let first = estimate_cells(&cells(1), None, spot, configs_spot)?;
    first.check(&Limits { max_memory: u64::MAX, ..*limits })?;
    let whole = estimate_cells(&cells(file.replicates), None, spot, configs_spot)?;
    whole.check(&Limits { max_calls: u64::MAX, max_events: u64::MAX, ..*limits })?;
    // Every configuration simulates about the same calls on a replicate of the scenarios.
    Ok(first.calls() / (configs.count() as u64).max(1))
}

/// The column of each constraint's metric among `metrics`.
pub(super) fn constraint_columns(constraints: &[Constraint], metrics: &[String]) -> Vec<usize> {
    constraints.iter().map(|c| metrics.iter().position(|m| m == c.metric.name()).unwrap_or(0)).collect()
}

/// Each scenario's length and whether it injects an incident to ride out (a `stay_closed`
/// window of its ground truth), for the review's false opens per week.
pub(super) fn scenario_facts(scenarios: &[Scenario], seed: Option<u64>) -> Result<Vec<ScenarioFacts>> {
    scenarios
        .iter()
        .map(|s| {
            let truth = Workload::build(s, seed.unwrap_or(s.seed), 0)?.truth;
            let ride_out = truth.iter().any(|w| w.expect == Expect::StayClosed);
            Ok(ScenarioFacts { duration: s.duration, ride_out })
        })
        .collect()
}

/// Where a sweep writing to `out` spills its results: a scratch file beside the output folder
/// (in its parent), removed when done.
pub(super) fn scratch_next_to(out: &Path) -> Scratch {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => Scratch::in_dir(p),
        _ => Scratch::in_dir("."),
    }
}

/// How many replicates a sweep ran: a number, or `replicates = "auto"`'s stages.
#[derive(Debug)]
pub struct Ran {
    /// Replicates per cell, or the most `replicates = "auto"` gives a configuration.
    pub replicates: u32,
    /// The stages of `replicates = "auto"`, when it was.
    pub stages: Option<AutoReport>,
}

/// How a sweep ranks its configurations: objective, constraints, Pareto fronts and how it
/// selects.
pub struct Ranking {
    /// Cost weights.
    pub objective: Objective,
    /// Constraints a recommended configuration meets.
    pub constraints: Vec<Constraint>,
    /// Metric groups of the Pareto fronts.
    pub fronts: Vec<Vec<String>>,
    /// Confidence, indifference zone, the baseline (judged by the review) and whether the sweep
    /// was automatic.
    pub settings: Settings,
    /// The library the recommendation is deployed to, with the grid's replacements.
    pub deployment: Option<Deployment>,
}

/// Everything a sweep writes once its table is complete: summary.csv, runs.csv (streamed from
/// the table), pareto.csv, objective.toml, recommendation.txt, recommended.txt, review.toml
/// and, with `page`, the charts and the review page. `facts` are the scenarios' lengths and
/// whether they inject an incident to ride out (for the baseline's false opens per week). The unsharded sweep and `merge` both finish here, so
/// their folders hold the same bytes.
pub(super) fn finish(
    name: String,
    ran: Ran,
    table: ResultTable,
    ranking: &Ranking,
    facts: Option<&[ScenarioFacts]>,
    dir: &Path,
    page: Option<ReportInputs>,
) -> Result<SweepReport> {
    let Ranking { objective, constraints, fronts, settings, deployment } = ranking;
    let baseline = &settings.baseline;
    let bound = objective.bind(&table.metrics).map_err(InputError::from)?;
    let summary = table.summarize(&bound)?;
    let rules = Rules { params: Some(&resolved_params), settings: *settings, ..Rules::new(&validate_policy) };
    let recommendation =
        recommend_from(&table, &summary, objective, constraints, &rules).map_err(InputError::from)?;
    let mut review = Review::build(&review::Inputs {
        table: &table,
        summary: &summary,
        objective: &bound,
        recommendation: &recommendation,
        baseline: *baseline,
        scenarios: facts,
        params: &resolved_params,
    })
    .map_err(InputError::from)?;
    review.stages = ran.stages.as_ref().map(AutoReport::lines).unwrap_or_default();
    let deployed =
        deployment.as_ref().map(|d| deploy::deployed(d, &table, &recommendation, review.baseline.as_ref()));
    let mut explained = recommendation.render();
    if let Some(d) = &deployed {
        explained.push_str(&d.section);
    }
    let mut out = OutputDir::create(dir, Keep::Foreign)?;
    let summary_path = dir.join(output::SUMMARY_CSV);
    out.write_with(output::SUMMARY_CSV, |w| {
        write_summary(&table, &summary, constraints, &resolved_params, w)
            .map(drop)
            .map_err(|e| runs_error(e, &summary_path))
    })?;
    let runs = dir.join(output::RUNS_CSV);
    out.write_with(output::RUNS_CSV, |w| {
        write_runs(&table, &bound, w).map(drop).map_err(|e| runs_error(e, &runs))
    })?;
    let pareto = dir.join(output::PARETO_CSV);
    out.write_with(output::PARETO_CSV, |w| {
        write_pareto(&table, &summary, fronts, w).map(drop).map_err(|e| runs_error(e, &pareto))
    })?;
    out.write_all(&[
        (output::OBJECTIVE_TOML, objective_toml(objective, constraints, settings).into_bytes()),
        (output::RECOMMENDATION_TXT, explained.into_bytes()),
        (output::REVIEW_TOML, review.to_toml().map_err(InputError::from)?.into_bytes()),
    ])?;
    if let Some(chosen) = recommendation.chosen() {
        out.write(output::RECOMMENDED_TXT, format!("{}\n", chosen.label).as_bytes())?;
    }
    if let Some((name, text)) = deployed.as_ref().and_then(|d| d.file.as_ref()) {
        out.write(name, text.as_bytes())?;
    }
    let best = best_per_scenario(&table, &summary, constraints, 3);
    // A scratch file that failed a read would have given zeros: nothing is kept then.
    table.check()?;
    summary.check()?;
    let page = page.map(|inputs| Page { inputs: Some(inputs), charts: ChartOptions::default() });
    // The charts and the page show the summary, the fronts' first rows, the recommendation
    // and the review.
    let contents = match &page {
        Some(page) => {
            let pareto = out
                .open(output::PARETO_CSV)
                .map_err(|e| Error::io(&pareto, e))?
                .map(|text| folder::pareto_rows(&pareto, text))
                .transpose()?;
            Some(Contents {
                summary: Some(contents::sweep_summary(&table, &summary, constraints, &resolved_params)?),
                pareto,
                recommended: recommendation.chosen().map(|chosen| chosen.label.clone()),
                explanation: Some(recommendation.render().trim_end().to_string()),
                deploy: deployed.as_ref().map(|d| d.section.clone()),
                inputs: page.inputs.clone(),
                review: Some(review.clone()),
                ..Contents::default()
            })
        }
        None => None,
    };
    let files = out.finish(page.as_ref().zip(contents.as_ref()))?;
    drop(contents);
    Ok(SweepReport {
        name,
        ran,
        table,
        summary,
        best,
        recommendation,
        settings: *settings,
        baseline: review.baseline,
        deployment: deployment.clone(),
        deployed,
        files,
    })
}

/// A runs.csv or summary.csv writing error: a failed write names `path` (exit code 1), anything
/// else is what the sweep module says.
pub(super) fn runs_error(e: SweepError, path: &Path) -> Error {
    match e {
        SweepError::Io { source, .. } => Error::io(path, source),
        other => other.into(),
    }
}

impl SweepReport {
    /// The sweep's size, the best configurations per scenario, the overall recommendation and
    /// the files written.
    pub fn render(&self) -> String {
        let t = &self.table;
        let mut s = String::new();
        match &self.ran.stages {
            None => {
                let _ = writeln!(
                    s,
                    "sweep {}: {} scenario(s) x {} configuration(s) x {} replicate(s) = {} cells",
                    self.name,
                    t.scenarios.len(),
                    t.n_configs(),
                    self.ran.replicates,
                    t.n_runs()
                );
            }
            Some(auto) => {
                let _ = writeln!(
                    s,
                    "sweep {}: {} scenario(s) x {} configuration(s), replicates = \"auto\" (up to {} each):",
                    self.name,
                    t.scenarios.len(),
                    t.n_configs(),
                    self.ran.replicates
                );
                for line in auto.lines() {
                    let _ = writeln!(s, "  {line}");
                }
            }
        }
        if let Some(d) = &self.deployment {
            s.push_str(&d.render());
        }
        let _ = writeln!(s, "objective: cost = {}", objective_text(&self.recommendation.objective));
        if !self.recommendation.constraints.is_empty() {
            let texts: Vec<String> = self
                .recommendation
                .constraints
                .iter()
                .map(|c| format!("{} ({})", c.text, c.scope_words()))
                .collect();
            let _ = writeln!(s, "constraints: {}", texts.join(", "));
        }
        let _ = writeln!(
            s,
            "\nbest per scenario (cost on that scenario, mean over replicates; meeting the constraints there):"
        );
        let width = t.scenarios.iter().map(String::len).max().unwrap_or(0);
        for (sc, best) in t.scenarios.iter().zip(&self.best) {
            if best.is_empty() {
                let _ = writeln!(s, "  {sc:<width$}  no configuration meets the constraints");
            }
            for (rank, (c, cost)) in best.iter().enumerate() {
                let name = if rank == 0 { sc.as_str() } else { "" };
                let _ = writeln!(
                    s,
                    "  {name:<width$}  {}. {}  cost {}",
                    rank + 1,
                    t.config(*c).label,
                    num(*cost)
                );
            }
        }
        let _ = writeln!(s, "\noverall:");
        s.push_str(&self.recommendation.render());
        if let Some(b) = &self.baseline {
            let _ = writeln!(s, "Baseline (in use today): {}: {}.", b.label, b.verdict);
            for (i, alt) in b.alternatives.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  {}. {} (cost {}): changes {}",
                    i + 1,
                    alt.label,
                    num(alt.total_cost),
                    alt.changes.join(", ")
                );
                let _ = writeln!(s, "     worse than the baseline beyond noise, per scenario:");
                for risk in &alt.risks {
                    let _ = writeln!(s, "       {risk}");
                }
            }
            s.push('\n');
        }
        if let Some(d) = &self.deployed {
            s.push_str(d.section.trim_start());
            s.push('\n');
        }
        if let Some(wrote) = super::wrote(&self.files) {
            let _ = writeln!(s, "{wrote}");
        }
        s
    }
}

/// `1·false_opens + 0.01667·detection_delay_with_misses_mean_s + …`
fn objective_text(o: &Objective) -> String {
    let terms: Vec<String> = o.weights.iter().map(|(m, w)| format!("{}·{m}", num(*w))).collect();
    if terms.is_empty() { "0 (no weights)".into() } else { terms.join(" + ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::app::compare::{CompareRequest, compare};
    use crate::app::recommend::{RecommendRequest, recommend};

    fn bundled(name: &str) -> String {
        super::super::bundled(name).display().to_string()
    }

    fn request(file: &Path, threads: usize, out: &Path) -> SweepRequest {
        SweepRequest {
            file: Some(file.to_path_buf()),
            threads: Some(threads),
            out: Some(out.to_path_buf()),
            quiet: true,
            ..SweepRequest::default()
        }
    }

    /// A small sweep over two bundled scenarios, written to `dir`.
    fn small_sweep(dir: &Path) -> PathBuf {
        let text = format!(
            "name = \"small\"\nscenarios = [{:?}, {:?}]\nreplicates = 2\nconstraints = [\"missed_incidents == 0\"]\n\
             [[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, 10]\n\
             [[policies]]\npreset = \"node-breaker\"\n",
            bundled("blip.toml"),
            bundled("hang.toml")
        );
        let path = dir.join("small.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn outputs_are_byte_identical_for_1_2_and_8_threads() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = small_sweep(dir.path());
        let mut outputs = Vec::new();
        for threads in [1, 2, 8] {
            let out = dir.path().join(format!("out{threads}"));
            let report = super::sweep(&request(&sweep, threads, &out)).unwrap();
            assert_eq!(report.table.n_runs(), 2 * 3 * 2);
            let files: Vec<String> = ["summary.csv", "runs.csv", "pareto.csv", "objective.toml"]
                .iter()
                .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
                .collect();
            let text = report.render().replace(&out.display().to_string(), "OUT");
            outputs.push((files, text));
        }
        assert_eq!(outputs[0], outputs[1]);
        assert_eq!(outputs[0], outputs[2]);
        let runs = &outputs[0].0[1];
        let first: Vec<&str> = runs.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
        assert_eq!(first[..6], ["blip"; 6]);
        assert_eq!(first[6..], ["hang"; 6]);
        // recommend on the folder agrees with the sweep's own recommendation.
        let again =
            recommend(&RecommendRequest { path: dir.path().join("out2"), ..RecommendRequest::default() })
                .unwrap()
                .recommendation;
        let chosen = again.chosen().map(|c| c.config.id);
        assert_eq!(chosen, {
            let r = super::sweep(&request(&sweep, 2, &dir.path().join("out9"))).unwrap();
            r.recommendation.chosen().map(|c| c.config.id)
        });
        let text = outputs[0].1.clone();
        assert!(
            text.starts_with("sweep small: 2 scenario(s) x 3 configuration(s) x 2 replicate(s) = 12 cells\n"),
            "{text}"
        );
    }

    #[test]
    fn a_default_shaped_sweep_page_stays_small() {
        // The default sweep's shape in small: two families (one with a two-parameter grid, so
        // a heatmap), seed systems and no breaker, over two scenarios, with its page.
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            "name = \"shape\"\nscenarios = [{:?}, {:?}]\nreplicates = 2\n\
             [[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, 10]\nopen_duration = [\"10s\", \"2m\"]\n\
             [[policies]]\npreset = \"windowed\"\ntime_window = [\"30s\", \"2m\"]\nfailure_rate = [0.2, 0.5]\n\
             [[policies]]\npreset = \"connector-breaker\"\n[[policies]]\npreset = \"none\"\n",
            bundled("blip.toml"),
            bundled("hard-outage.toml")
        );
        let path = dir.path().join("shape.toml");
        std::fs::write(&path, text).unwrap();
        let out = dir.path().join("out");
        super::sweep(&SweepRequest { charts: true, ..request(&path, 2, &out) }).unwrap();
        let html = std::fs::read(out.join("report.html")).unwrap();
        // The default sweep's page is about 0.4 MB (4.1 MB before charts were indexed PNGs);
        // this one, of fewer scenarios, well under half of the 1 MB bound.
        assert!(html.len() < 512 * 1024, "report.html is {} bytes", html.len());
        for entry in std::fs::read_dir(&out).unwrap() {
            let p = entry.unwrap().path();
            // pareto.png's shaded clouds take more than 256 colours: it stays RGB.
            if p.extension().is_some_and(|e| e == "png") && !p.ends_with("pareto.png") {
                let bytes = std::fs::read(&p).unwrap();
                // IHDR's colour type: 3 is indexed.
                assert_eq!(bytes[25], 3, "{} is not an indexed PNG", p.display());
            }
        }
    }

    /// A grid over two bundled scenarios whose costs differ by a few hundredths: the
    /// indifference zone is one hundredth, so the selection must tell them apart.
    fn graded_sweep(dir: &Path, replicates: &str) -> PathBuf {
        let text = format!(
            "name = \"graded\"\nscenarios = [{:?}, {:?}]\nreplicates = {replicates}\nindifference = 0.01\n\
             [[policies]]\npreset = \"consecutive\"\nfailure_threshold = [2, 3, 5, 10, 40]\n\
             open_duration = [\"10s\", \"1m\", \"5m\"]\n\
             [[policies]]\npreset = \"node-breaker\"\n",
            bundled("blip.toml"),
            bundled("hard-outage.toml")
        );
        let path = dir.join(format!("graded-{}.toml", replicates.trim_matches('"')));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The output files whose bytes must not depend on the thread count.
    const FILES: [&str; 6] =
        ["summary.csv", "runs.csv", "pareto.csv", "objective.toml", "recommendation.txt", "review.toml"];

    #[test]
    fn auto_reaches_the_exhaustive_winner_in_fewer_cells_and_the_same_bytes_on_any_thread_count() {
        let dir = tempfile::tempdir().unwrap();
        let exhaustive =
            super::sweep(&request(&graded_sweep(dir.path(), "10"), 2, &dir.path().join("all"))).unwrap();
        let auto_file = graded_sweep(dir.path(), "\"auto\"");
        let mut outs = Vec::new();
        for threads in [1, 2] {
            let out = dir.path().join(format!("auto{threads}"));
            let auto = super::sweep(&request(&auto_file, threads, &out)).unwrap();
            let winner = |r: &SweepReport| r.recommendation.chosen().map(|c| c.config.id);
            assert_eq!(winner(&auto), winner(&exhaustive));
            let stages = auto.ran.stages.as_ref().unwrap();
            assert!(stages.cells() < stages.exhaustive_cells, "{:?}", stages);
            assert_eq!(stages.exhaustive_cells, exhaustive.table.n_runs() as u64);
            assert_eq!(auto.table.n_runs() as u64, stages.cells());
            assert!(stages.stages.iter().map(|s| s.screened).sum::<usize>() > 0, "{stages:?}");
            let files: Vec<String> =
                FILES.iter().map(|f| std::fs::read_to_string(out.join(f)).unwrap()).collect();
            outs.push((files, auto.render().replace(&out.display().to_string(), "OUT")));
        }
        assert_eq!(outs[0], outs[1]);
        let text = &outs[0].1;
        assert!(text.contains("replicates = \"auto\" (up to 10 each):\n  stage 1: replicate 0 of 16 configuration(s), 32 cells"), "{text}");
        // Replicate r of a configuration is the exhaustive sweep's replicate r, cell for cell.
        let all_runs = std::fs::read_to_string(dir.path().join("all/runs.csv")).unwrap();
        for line in outs[0].0[1].lines().skip(1) {
            assert!(all_runs.contains(line), "{line}");
        }
        // `recommend` on the folder re-ranks as the sweep did (objective.toml says it was auto).
        assert!(outs[0].0[3].contains("auto_looks = 3\n"), "{}", outs[0].0[3]);
        let again =
            recommend(&RecommendRequest { path: dir.path().join("auto2"), ..RecommendRequest::default() })
                .unwrap();
        assert_eq!(again.render(), outs[0].0[4]);
    }

    /// Every file of a folder, by name, with its bytes.
    fn folder(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    /// One shard of an automatic sweep's stage (`plan`: none for stage 1).
    fn stage_shard(
        file: &Path,
        k: u32,
        n: u32,
        plan: Option<&Path>,
        shards: &Path,
        limits: Limits,
    ) -> Result<()> {
        crate::app::shard::run_shard(&crate::app::shard::ShardRequest {
            file: Some(file.to_path_buf()),
            shard: crate::sweep::shard::ShardId::new(k, n).unwrap(),
            source: format!("--shard {k}/{n}"),
            from_scheduler: false,
            threads: Some(1),
            out: Some(shards.to_path_buf()),
            quiet: true,
            command_line: String::new(),
            limits,
            replicates: None,
            max_replicates: None,
            plan: plan.map(Path::to_path_buf),
        })
        .map(drop)
    }

    /// Runs an automatic sweep's stages on `n` shards each, merging after each stage into `out`
    /// until the merge finishes the sweep; returns the number of stages and the last plan.
    fn staged(
        file: &Path,
        n: u32,
        root: &Path,
        out: &Path,
        limits: Limits,
        charts: bool,
    ) -> (u32, Option<PathBuf>) {
        use crate::app::merge::{MergeReport, MergeRequest, merge};
        let shards = root.join(format!("shards{n}"));
        let mut plan: Option<PathBuf> = None;
        let mut last_plan = None;
        for stage in 1.. {
            for k in 0..n {
                stage_shard(file, k, n, plan.as_deref(), &shards, limits).unwrap();
            }
            let dirs = (1..=stage)
                .flat_map(|s| (0..n).map(move |k| (s, k)))
                .map(|(s, k)| shards.join(format!("stage-{s}/shard-{k}-of-{n}")))
                .collect();
            match merge(&MergeRequest { dirs, out: Some(out.to_path_buf()), charts }).unwrap() {
                MergeReport::Done(_) => return (stage, last_plan),
                MergeReport::Next(next) => {
                    let text = next.render();
                    assert!(
                        text.contains(&format!(" --shard 0/{n} --plan {}", next.path.display())),
                        "{text}"
                    );
                    assert!(text.contains("sbatch --array=0-"), "{text}");
                    // Kept aside: the final folder replaces the plan.
                    let kept = root.join(format!("plan-{n}-{stage}.toml"));
                    std::fs::copy(&next.path, &kept).unwrap();
                    last_plan = Some(kept);
                    plan = Some(next.path);
                }
            }
        }
        unreachable!()
    }

    #[test]
    fn auto_on_2_and_3_shards_merges_stage_by_stage_into_the_one_machine_folder() {
        let dir = tempfile::tempdir().unwrap();
        let file = graded_sweep(dir.path(), "\"auto\"");
        let one = dir.path().join("one");
        let whole = super::sweep(&SweepRequest { charts: true, ..request(&file, 2, &one) }).unwrap();
        let auto = whole.ran.stages.as_ref().unwrap();
        assert!(auto.stages.len() >= 3, "{auto:?}");
        let expected = folder(&one);
        let names: Vec<&str> = expected.iter().map(|(n, _)| n.as_str()).collect();
        for f in
            ["summary.csv", "runs.csv", "recommendation.txt", "review.toml", "report.html", "inputs.toml"]
        {
            assert!(names.contains(&f), "{names:?}");
        }
        // inputs.toml lists the sweep file and both scenario files, each with its SHA-256.
        let inputs =
            String::from_utf8(expected.iter().find(|(n, _)| n == "inputs.toml").unwrap().1.clone()).unwrap();
        for f in ["graded-auto.toml", "blip.toml", "hard-outage.toml"] {
            assert!(inputs.contains(f), "{inputs}");
        }
        assert_eq!(inputs.matches("sha256 = ").count(), 3, "{inputs}");
        let mut plan = None;
        for n in [2, 3] {
            let out = dir.path().join(format!("merged{n}"));
            let (stages, last) = staged(&file, n, dir.path(), &out, Limits::default(), true);
            assert_eq!(stages as usize, auto.stages.len());
            let got = folder(&out);
            assert_eq!(got.iter().map(|(n, _)| n).collect::<Vec<_>>(), names);
            for ((name, a), (_, b)) in expected.iter().zip(&got) {
                assert!(a == b, "{name} differs on {n} shards");
            }
            plan = last;
        }
        // An edited plan is refused by the stage's shards, before anything runs.
        let plan = plan.unwrap();
        let text = std::fs::read_to_string(&plan).unwrap();
        let edited = dir.path().join("edited.toml");
        std::fs::write(&edited, text.replacen("last_replicate = ", "last_replicate = 1", 1)).unwrap();
        let err =
            stage_shard(&file, 0, 2, Some(&edited), &dir.path().join("x"), Limits::default()).unwrap_err();
        assert!(matches!(err, Error::Input(_)), "{err}");
        assert!(err.to_string().contains("sha256: not the SHA-256 of the plan: it was edited"), "{err}");
        // A plan of another sweep is refused.
        std::fs::create_dir_all(dir.path().join("x")).unwrap();
        let other = graded_sweep(&dir.path().join("x"), "\"auto\"");
        std::fs::write(
            &other,
            std::fs::read_to_string(&other).unwrap().replace("indifference = 0.01", "indifference = 0.02"),
        )
        .unwrap();
        let err =
            stage_shard(&other, 0, 2, Some(&plan), &dir.path().join("x"), Limits::default()).unwrap_err();
        assert!(err.to_string().contains("a plan of another sweep"), "{err}");
        assert!(!dir.path().join("x/graded-shards").exists());
    }

    #[test]
    fn auto_shards_stop_at_the_call_budget_as_one_machine_does_and_refuse_a_stage_run_from_a_foreign_plan() {
        let dir = tempfile::tempdir().unwrap();
        let file = graded_sweep(dir.path(), "\"auto\"");
        let sweep_file = crate::app::files::load_sweep(&file, &nameable_columns(), &validate_policy).unwrap();
        let scenarios = load_scenarios(&sweep_file.scenarios).unwrap();
        let spot = Spot::in_file(&file, "", None, "[[policies]]");
        let per_run = auto_budget(&sweep_file, &scenarios, &spot, &Limits::default()).unwrap();
        // Stages 1 and 2 fit the budget, stage 3 not (a stage's calls: per_run a replicate of a
        // configuration, its cells over the 2 scenarios).
        let free = super::sweep(&request(&file, 1, &dir.path().join("free"))).unwrap();
        let cells: Vec<u64> = free.ran.stages.as_ref().unwrap().stages.iter().map(|s| s.cells).collect();
        let limits =
            Limits { max_calls: per_run * (cells[0] + cells[1] + cells[2]) / 2 - 1, ..Limits::default() };
        let one = dir.path().join("one");
        let whole = super::sweep(&SweepRequest { limits, ..request(&file, 1, &one) }).unwrap();
        let auto = whole.ran.stages.as_ref().unwrap();
        assert!(matches!(auto.stop, crate::sweep::auto::Stop::Calls(..)), "{auto:?}");
        assert_eq!(auto.stages.len(), 2, "{auto:?}");
        let out = dir.path().join("merged");
        staged(&file, 2, dir.path(), &out, limits, false);
        assert_eq!(folder(&out), folder(&one));
        // A stage 2 shard that ran another plan (stage 1's results edited and re-merged would
        // give one) is refused by the merge, naming the shard and the plans.
        let shards = dir.path().join("shards2");
        let m = shards.join("stage-2/shard-0-of-2/shard.toml");
        let text = std::fs::read_to_string(&m).unwrap();
        let plan_line = text.lines().find(|l| l.starts_with("plan = ")).unwrap().to_string();
        std::fs::write(&m, text.replace(&plan_line, &format!("plan = \"{}\"", "0".repeat(64)))).unwrap();
        let dirs =
            ["stage-1/shard-0-of-2", "stage-1/shard-1-of-2", "stage-2/shard-0-of-2", "stage-2/shard-1-of-2"]
                .iter()
                .map(|d| shards.join(d))
                .collect();
        let err = crate::app::merge::merge(&crate::app::merge::MergeRequest {
            dirs,
            out: Some(dir.path().join("refused")),
            charts: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("plan: this shard of stage 2 ran the plan 0000"), "{err}");
        assert!(!dir.path().join("refused").exists());
        // Stage 2's shards without stage 1's: refused, saying which stage is missing.
        let err = crate::app::merge::merge(&crate::app::merge::MergeRequest {
            dirs: vec![shards.join("stage-2/shard-1-of-2")],
            out: Some(dir.path().join("refused")),
            charts: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("no shard of stage 1 was given"), "{err}");
        // A stage number the schedule does not have (a shard.toml edited): refused, naming it.
        let m = shards.join("stage-1/shard-0-of-2/shard.toml");
        std::fs::write(&m, std::fs::read_to_string(&m).unwrap().replace("\nstage = 1\n", "\nstage = 0\n"))
            .unwrap();
        let err = crate::app::merge::merge(&crate::app::merge::MergeRequest {
            dirs: vec![shards.join("stage-1/shard-0-of-2"), shards.join("stage-1/shard-1-of-2")],
            out: Some(dir.path().join("refused")),
            charts: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("stage: 0 is not a stage of this sweep: expected 1 to 4"), "{err}");
    }

    #[test]
    fn bad_inputs_are_input_errors_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = dir.path().join("bad.toml");
        std::fs::write(
            &sweep,
            format!(
                "scenarios = [{:?}]\n[[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, -1]\n",
                bundled("blip.toml")
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let err = super::sweep(&request(&sweep, 1, &out)).unwrap_err();
        let Error::Input(input) = err else { panic!("an input error: {err}") };
        assert_eq!(input.position, Some((4, 21)));
        assert!(input.message.contains("failure_threshold"), "{input}");
        assert!(!out.exists());
        let err = super::sweep(&request(&dir.path().join("missing.toml"), 1, &out)).unwrap_err();
        assert!(err.to_string().ends_with("missing.toml: cannot read: no such file"), "{err}");
        let err = recommend(&RecommendRequest {
            path: dir.path().to_path_buf(),
            objective: vec!["flops=1".into()],
            ..RecommendRequest::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("unknown metric `flops`"), "{err}");
        let err = compare(&CompareRequest {
            scenarios: vec![PathBuf::from(bundled("blip.toml"))],
            policies: vec!["nope".into()],
            replicates: 1,
            threads: Some(1),
            ..CompareRequest::default()
        })
        .unwrap_err();
        assert!(matches!(err, Error::Input(_)), "{err}");
    }
}
