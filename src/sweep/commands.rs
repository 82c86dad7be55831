//! The sweep commands as library functions: `sweep` ([`run_sweep`]), `compare` ([`compare`]) and
//! `recommend` ([`recommend`]). Each validates every input before anything runs, writes output
//! files atomically, and returns a report with a `render` to text; `main.rs` only parses
//! arguments and prints.

use super::compare::CompareReport;
use super::constraint::Constraint;
use super::file::SweepFile;
use super::grid::Configuration;
use super::objective::Objective;
use super::output::{
    objective_toml, pareto_csv, pareto_rows, read_objective_toml, read_runs, runs_csv, summary_csv,
};
use super::recommend::{Recommendation, best_per_scenario, num, recommend as rank};
use super::runner::{
    Cells, config_info, default_objective, metric_columns, progress_bar, spec_of, validate_policy,
};
use super::table::{ResultTable, Summary};
use crate::limits::{Limits, estimate_cells};
use crate::policy::{PolicyConfig, PolicySpec};
use crate::scenario::{InputError, Scenario, Spot};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The bundled default sweep, relative to the working folder (the repository's root).
pub const DEFAULT_SWEEP: &str = "scenarios/sweeps/default.toml";

/// Where the default sweep is: under the working folder, else in the source tree this binary
/// was built from.
pub fn default_sweep_path() -> PathBuf {
    let local = PathBuf::from(DEFAULT_SWEEP);
    if local.is_file() { local } else { Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SWEEP) }
}

/// What `breakerlab sweep` did.
#[derive(Debug)]
pub struct SweepReport {
    /// The sweep's name.
    pub name: String,
    /// Replicates per (scenario, configuration).
    pub replicates: u32,
    /// Metric values of every cell.
    pub table: ResultTable,
    /// Aggregates over replicates.
    pub summary: Summary,
    /// Per scenario, the best configurations (table index, mean cost) meeting the constraints.
    pub best: Vec<Vec<(usize, f64)>>,
    /// The overall recommendation.
    pub recommendation: Recommendation,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// Loads scenario files, refusing two with the same name (cells are identified by name).
fn load_scenarios(paths: &[PathBuf]) -> anyhow::Result<Vec<Scenario>> {
    let mut out: Vec<Scenario> = Vec::with_capacity(paths.len());
    for p in paths {
        let s = Scenario::load(p)?;
        if let Some(other) = out.iter().find(|o| o.name == s.name) {
            let first = other.path.as_deref().map_or_else(String::new, |q| q.display().to_string());
            return Err(InputError::file(
                p,
                format!("scenario name `{}` is also used by {first}: names must be unique", s.name),
            )
            .into());
        }
        out.push(s);
    }
    Ok(out)
}

/// Refuses a grid of cells too large for `limits` before anything runs, at the field that
/// drives it (see [`crate::limits`]).
fn check_limits(
    cells: &Cells,
    threads: Option<usize>,
    limits: &Limits,
    replicates: &Spot,
    policies: &Spot,
) -> Result<(), InputError> {
    let threads = threads.unwrap_or_else(rayon::current_num_threads);
    estimate_cells(cells.scenarios, cells.configs, cells.replicates, threads, replicates, policies)
        .check(limits)
}

/// Resolves every configuration (already checked while reading the sweep file).
fn resolve_all(configs: &[Configuration]) -> anyhow::Result<Vec<PolicyConfig>> {
    configs
        .iter()
        .map(|c| {
            spec_of(c)
                .resolve()
                .map_err(|e| InputError::argument(format!("policy `{}`: {e}", c.label())).into())
        })
        .collect()
}

/// `breakerlab sweep [FILE] [--threads N] [--out DIR] [--quiet]`: reads and validates the sweep
/// file (the bundled default when `None`), runs every cell, writes summary.csv, runs.csv,
/// pareto.csv, objective.toml, recommendation.txt and recommended.txt to `out` (default
/// `output/<name>`), and recommends. With `charts` (the command line as typed) it also draws the
/// charts and writes the report page.
pub fn run_sweep(
    path: Option<&Path>,
    threads: Option<usize>,
    out: Option<&Path>,
    quiet: bool,
    charts: Option<&str>,
) -> anyhow::Result<SweepReport> {
    let path = path.map_or_else(default_sweep_path, Path::to_path_buf);
    let columns = metric_columns();
    let file = SweepFile::load(&path, &columns, &validate_policy).map_err(InputError::from)?;
    let scenarios = load_scenarios(&file.scenarios)?;
    let configs = resolve_all(&file.configurations)?;
    let objective = file.objective.clone().unwrap_or_else(default_objective);
    let bound = objective.bind(&columns).map_err(InputError::argument)?;

    let cells =
        Cells { scenarios: &scenarios, configs: &configs, replicates: file.replicates, seed: file.seed };
    let policies_spot = Spot::in_file(&file.path, "", None, "[[policies]]");
    check_limits(&cells, threads, &Limits::default(), &file.replicates_spot, &policies_spot)?;
    let bar = progress_bar(cells.count(), quiet);
    let runs = cells.run(threads, &columns, &bar)?;

    let infos = file.configurations.iter().zip(&configs).map(|(c, p)| config_info(c, p)).collect();
    let names = scenarios.iter().map(|s| s.name.clone()).collect();
    let table = ResultTable::new(names, infos, columns, runs).map_err(InputError::argument)?;
    let summary = table.summarize(&bound);
    let pareto = pareto_rows(&table, &summary, &file.pareto);
    let files = vec![
        ("summary.csv", summary_csv(&table, &summary, &file.constraints).map_err(InputError::from)?),
        ("runs.csv", runs_csv(&table, &bound).map_err(InputError::from)?),
        ("pareto.csv", pareto_csv(&table, &pareto, &file.pareto).map_err(InputError::from)?),
        ("objective.toml", objective_toml(&objective, &file.constraints).into_bytes()),
    ];
    let recommendation = rank(&table, &objective, &file.constraints).map_err(InputError::argument)?;
    let mut files = files;
    files.push(("recommendation.txt", recommendation.render().into_bytes()));
    if let Some(chosen) = recommendation.chosen() {
        files.push(("recommended.txt", format!("{}\n", chosen.label).into_bytes()));
    }
    let dir = out.map_or_else(|| Path::new("output").join(&file.name), Path::to_path_buf);
    let mut files = crate::commands::write_files(&dir, &files)?;
    if let Some(command_line) = charts {
        let mut inputs = crate::report::page::ReportInputs {
            title: format!("sweep: {}", file.name),
            command_line: Some(command_line.to_string()),
            seed: file.seed,
            ..Default::default()
        };
        inputs.files.extend(crate::report::page::InputFile::read(&path));
        files.extend(crate::commands::run::draw_charts_and_report(&dir, &inputs)?);
    }
    let best = best_per_scenario(&table, &summary, &file.constraints, 3);
    Ok(SweepReport {
        name: file.name,
        replicates: file.replicates,
        table,
        summary,
        best,
        recommendation,
        files,
    })
}

impl SweepReport {
    /// The sweep's size, the best configurations per scenario, the overall recommendation and
    /// the files written.
    pub fn render(&self) -> String {
        let t = &self.table;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sweep {}: {} scenario(s) x {} configuration(s) x {} replicate(s) = {} cells",
            self.name,
            t.scenarios.len(),
            t.configs.len(),
            self.replicates,
            t.runs.len()
        );
        let _ = writeln!(s, "objective: cost = {}", objective_text(&self.recommendation.objective));
        if !self.recommendation.constraints.is_empty() {
            let texts: Vec<&str> = self.recommendation.constraints.iter().map(|c| c.text.as_str()).collect();
            let _ = writeln!(s, "constraints: {}", texts.join(", "));
        }
        let _ =
            writeln!(s, "\nbest per scenario (mean cost over replicates, meeting the constraints there):");
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
                    t.configs[*c].label,
                    num(*cost)
                );
            }
        }
        let _ = writeln!(s, "\noverall:");
        s.push_str(&self.recommendation.render());
        if let Some(dir) = self.files.first().and_then(|f| f.parent()) {
            let names: Vec<_> =
                self.files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect();
            let _ = writeln!(s, "wrote {} to {}/", names.join(", "), dir.display());
        }
        s
    }
}

/// `1·false_opens + 0.01667·detection_delay_mean_s + …`
fn objective_text(o: &Objective) -> String {
    let terms: Vec<String> = o.weights.iter().map(|(m, w)| format!("{}·{m}", num(*w))).collect();
    if terms.is_empty() { "0 (no weights)".into() } else { terms.join(" + ") }
}

/// Parses a `--policy` argument: `PRESET` or `PRESET[key=value,key=value]` (the label form
/// `run` and `sweep` print). A comma separates overrides only when a `key=` follows it, so
/// values such as `failure_on=error,timeout` keep their commas.
pub fn parse_policy_arg(text: &str) -> Result<PolicySpec, InputError> {
    let bad = |why: &str| InputError::argument(format!("--policy {text}: {why}"));
    let text_t = text.trim();
    let (preset, rest) = match text_t.split_once('[') {
        None => (text_t, None),
        Some((p, r)) => {
            let inner = r
                .strip_suffix(']')
                .ok_or_else(|| bad("expected `]` at the end, as in consecutive[failure_threshold=3]"))?;
            (p, Some(inner))
        }
    };
    if preset.is_empty() {
        return Err(bad("expected a preset name (see `breakerlab presets`)"));
    }
    let mut spec = PolicySpec::new(preset.trim());
    if let Some(inner) = rest {
        for item in split_overrides(inner) {
            let (k, v) = PolicySpec::parse_set(item).map_err(|m| bad(&m))?;
            spec.overrides.insert(k, v);
        }
    }
    Ok(spec)
}

/// The policies of `compare` from `--policy` arguments, each `--set key=value` applied to every
/// one of them (e.g. a shared `failure_on`).
pub fn policies_from_args(policies: &[String], sets: &[String]) -> Result<Vec<PolicySpec>, InputError> {
    let mut out = Vec::with_capacity(policies.len());
    for p in policies {
        let mut spec = parse_policy_arg(p)?;
        for s in sets {
            let (k, v) =
                PolicySpec::parse_set(s).map_err(|m| InputError::argument(format!("--set {s}: {m}")))?;
            spec.overrides.insert(k, v);
        }
        out.push(spec);
    }
    Ok(out)
}

/// Splits `a=1,b=x,y,c=2` into `a=1`, `b=x,y`, `c=2`.
fn split_overrides(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, _) in inner.match_indices(',') {
        let next = &inner[i + 1..];
        let key_len =
            next.trim_start().bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        if key_len > 0 && next.trim_start()[key_len..].trim_start().starts_with('=') {
            parts.push(inner[start..i].trim());
            start = i + 1;
        }
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    }
    parts
}

/// `breakerlab compare SCENARIO... --policy P...`: every policy on every scenario for
/// `replicates` replicates (base seed `seed`, else each scenario's), side by side, with paired
/// differences against the first policy. Costs use the default objective.
pub fn compare(
    scenarios: &[PathBuf],
    policies: &[PolicySpec],
    replicates: u32,
    seed: Option<u64>,
    threads: Option<usize>,
    out: Option<&Path>,
    charts: Option<&str>,
) -> anyhow::Result<(CompareReport, Vec<PathBuf>)> {
    if scenarios.is_empty() {
        return Err(InputError::argument("give at least one scenario file").into());
    }
    if policies.is_empty() {
        return Err(InputError::argument("give at least one --policy to compare").into());
    }
    if replicates == 0 {
        return Err(InputError::argument("--replicates must be at least 1").into());
    }
    let loaded = load_scenarios(scenarios)?;
    let mut configs = Vec::with_capacity(policies.len());
    let mut infos = Vec::with_capacity(policies.len());
    for (i, p) in policies.iter().enumerate() {
        let resolved =
            p.resolve().map_err(|e| InputError::argument(format!("policy `{}`: {e}", p.preset)))?;
        let config = Configuration {
            id: i,
            preset: p.preset.clone(),
            overrides: p.overrides.clone().into_iter().collect(),
        };
        infos.push(config_info(&config, &resolved));
        configs.push(resolved);
    }
    let columns = metric_columns();
    let objective = default_objective().bind(&columns).map_err(InputError::argument)?;
    let cells = Cells { scenarios: &loaded, configs: &configs, replicates, seed };
    check_limits(&cells, threads, &Limits::default(), &Spot::flag("--replicates"), &Spot::flag("--policy"))?;
    let bar = progress_bar(cells.count(), false);
    let runs = cells.run(threads, &columns, &bar)?;
    let names = loaded.iter().map(|s| s.name.clone()).collect();
    let table = ResultTable::new(names, infos, columns, runs).map_err(InputError::argument)?;
    let costs: Vec<f64> = table.runs.iter().map(|r| objective.cost(&r.values)).collect();
    let report = CompareReport::from_table(&table, replicates, &costs);
    let summary = table.summarize(&objective);
    let mut files = vec![
        ("summary.csv", summary_csv(&table, &summary, &[]).map_err(InputError::from)?),
        ("runs.csv", runs_csv(&table, &objective).map_err(InputError::from)?),
    ];
    files.extend(first_scenario_detail(&loaded[0], &configs, seed)?);
    let dir = out
        .map_or_else(|| Path::new("output").join(format!("compare-{}", loaded[0].name)), Path::to_path_buf);
    let mut written = crate::commands::write_files(&dir, &files)?;
    if let Some(command_line) = charts {
        let inputs = crate::report::page::ReportInputs {
            title: format!(
                "compare: {}",
                loaded.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            command_line: Some(command_line.to_string()),
            seed,
            files: loaded
                .iter()
                .filter_map(|s| s.path.as_deref())
                .filter_map(crate::report::page::InputFile::read)
                .collect(),
            ..Default::default()
        };
        written.extend(crate::commands::run::draw_charts_and_report(&dir, &inputs)?);
    }
    Ok((report, written))
}

/// Timeline, transitions, latency and incidents of every compared policy on the first scenario
/// (replicate 0, on the same request stream), for the side-by-side charts.
fn first_scenario_detail(
    scenario: &Scenario,
    configs: &[PolicyConfig],
    seed: Option<u64>,
) -> anyhow::Result<Vec<(&'static str, Vec<u8>)>> {
    use crate::sim::{self, RunOptions, Workload};
    let workload = Workload::build(scenario, seed.unwrap_or(scenario.seed), 0)?;
    let bin = scenario.scoring.timeline_bin.unwrap_or_else(|| sim::auto_bin(workload.duration()));
    let opts = RunOptions { timeline_bin: Some(bin) };
    let runs: Vec<(String, sim::RunResult)> =
        configs.iter().map(|c| (c.label(), sim::run(scenario, &workload, c, &opts))).collect();
    let rows: Vec<(&str, &crate::metrics::RunRecord)> =
        runs.iter().map(|(l, r)| (l.as_str(), &r.record)).collect();
    Ok(vec![
        ("timeline.csv", crate::report::timeline_csv(&rows)),
        ("transitions.csv", crate::report::transitions_csv(&rows)),
        ("latency.csv", crate::report::latency_csv(&rows)),
        ("incidents.csv", crate::report::incidents_csv(&workload.truth)),
    ])
}

/// `breakerlab recommend PATH [--objective metric=weight]... [--constraint "..."]...`.
///
/// `path` is a sweep's output folder (its runs.csv and objective.toml are read), a runs.csv
/// (shards concatenated are fine), or a sweep file (run first, its outputs written as by
/// `sweep`). `--objective` sets one weight on top of the sweep's objective; `--constraint`
/// replaces the sweep's constraints on the same metric, or adds one.
pub fn recommend(
    path: &Path,
    objective_overrides: &[String],
    constraint_overrides: &[String],
    threads: Option<usize>,
    quiet: bool,
) -> anyhow::Result<Recommendation> {
    let columns = metric_columns();
    // Check the overrides before anything runs.
    let weights = objective_overrides
        .iter()
        .map(|o| Objective::parse_override(o, &columns).map_err(InputError::argument))
        .collect::<Result<Vec<_>, _>>()?;
    let extra = constraint_overrides
        .iter()
        .map(|c| {
            Constraint::parse(c, &columns).map_err(|m| InputError::argument(format!("--constraint: {m}")))
        })
        .collect::<Result<Vec<_>, _>>()?;

    let (table, mut objective, mut constraints) =
        if path.is_dir() || path.extension().is_some_and(|e| e == "csv") {
            let runs_path = if path.is_dir() { path.join("runs.csv") } else { path.to_path_buf() };
            let text = crate::scenario::read_text(&runs_path)?;
            let table = read_runs(&text, &runs_path.display().to_string()).map_err(InputError::from)?;
            let objective_path = runs_path.with_file_name("objective.toml");
            let (objective, constraints) = if objective_path.is_file() {
                let text = crate::scenario::read_text(&objective_path)?;
                read_objective_toml(&text, &objective_path.display().to_string(), &table.metrics)
                    .map_err(InputError::from)?
            } else {
                (default_objective(), Vec::new())
            };
            (table, objective, constraints)
        } else {
            let report = run_sweep(Some(path), threads, None, quiet, None)?;
            let r = report.recommendation;
            (report.table, r.objective, r.constraints)
        };
    for (m, w) in weights {
        objective.set(&m, w);
    }
    for c in extra {
        constraints.retain(|k| k.metric != c.metric);
        constraints.push(c);
    }
    Ok(rank(&table, &objective, &constraints).map_err(InputError::argument)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_arguments_parse_in_label_form() {
        let p = parse_policy_arg("gobreaker").unwrap();
        assert_eq!((p.preset.as_str(), p.overrides.len()), ("gobreaker", 0));
        let p = parse_policy_arg("consecutive[failure_threshold=3,cooldown=30s]").unwrap();
        assert_eq!(p.preset, "consecutive");
        assert_eq!(p.overrides.get("failure_threshold"), Some(&toml::Value::Integer(3)));
        assert_eq!(p.overrides.get("cooldown"), Some(&toml::Value::String("30s".into())));
        let p = parse_policy_arg("consecutive[failure_on=error,timeout, cooldown=1m]").unwrap();
        assert_eq!(p.overrides.get("failure_on"), Some(&toml::Value::String("error,timeout".into())));
        assert_eq!(p.overrides.get("cooldown"), Some(&toml::Value::String("1m".into())));
        assert!(parse_policy_arg("consecutive[failure_threshold=3").unwrap_err().to_string().contains("`]`"));
        assert!(parse_policy_arg("[a=1]").unwrap_err().to_string().contains("preset name"));
        assert!(parse_policy_arg("consecutive[3]").unwrap_err().to_string().contains("key=value"));
        let both = policies_from_args(
            &["consecutive".into(), "windowed[min_calls=5]".into()],
            &["open_duration=1m".into()],
        )
        .unwrap();
        assert!(
            both.iter().all(|p| p.overrides.get("open_duration") == Some(&toml::Value::String("1m".into())))
        );
        assert_eq!(both[1].overrides.get("min_calls"), Some(&toml::Value::Integer(5)));
        assert!(
            policies_from_args(&["consecutive".into()], &["x".into()])
                .unwrap_err()
                .to_string()
                .contains("--set x")
        );
    }

    fn bundled(name: &str) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name).display().to_string()
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
            let report = run_sweep(Some(&sweep), Some(threads), Some(&out), true, None).unwrap();
            assert_eq!(report.table.runs.len(), 2 * 3 * 2);
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
        let again = recommend(&dir.path().join("out2"), &[], &[], None, true).unwrap();
        let chosen = again.chosen().map(|c| c.config.id);
        assert_eq!(chosen, {
            let r = run_sweep(Some(&sweep), Some(2), Some(&dir.path().join("out9")), true, None).unwrap();
            r.recommendation.chosen().map(|c| c.config.id)
        });
        let text = outputs[0].1.clone();
        assert!(
            text.starts_with("sweep small: 2 scenario(s) x 3 configuration(s) x 2 replicate(s) = 12 cells\n"),
            "{text}"
        );
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
        let err = run_sweep(Some(&sweep), Some(1), Some(&out), true, None).unwrap_err();
        let input = err.downcast_ref::<InputError>().expect("an input error");
        assert_eq!(input.position, Some((4, 21)));
        assert!(input.message.contains("failure_threshold"), "{input}");
        assert!(!out.exists());
        let err =
            run_sweep(Some(&dir.path().join("missing.toml")), Some(1), Some(&out), true, None).unwrap_err();
        assert!(err.to_string().ends_with("missing.toml: cannot read: no such file"), "{err}");
        let err = recommend(dir.path(), &["flops=1".into()], &[], None, true).unwrap_err();
        assert!(err.to_string().contains("unknown metric `flops`"), "{err}");
        let err = compare(
            &[PathBuf::from(bundled("blip.toml"))],
            &[PolicySpec::new("nope")],
            1,
            None,
            Some(1),
            None,
            None,
        )
        .unwrap_err();
        assert!(err.downcast_ref::<InputError>().is_some(), "{err}");
    }

    #[test]
    fn compare_pairs_policies_on_the_same_streams() {
        let policies = [
            parse_policy_arg("consecutive").unwrap(),
            parse_policy_arg("consecutive").unwrap(),
            parse_policy_arg("consecutive[failure_threshold=20]").unwrap(),
        ];
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cmp");
        let (r, files) =
            compare(&[PathBuf::from(bundled("blip.toml"))], &policies, 2, None, Some(2), Some(&out), None)
                .unwrap();
        let names: Vec<_> = files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect();
        assert_eq!(
            names,
            ["summary.csv", "runs.csv", "timeline.csv", "transitions.csv", "latency.csv", "incidents.csv"]
        );
        let rows = &r.scenarios[0].rows;
        let requests = rows.iter().find(|x| x.metric == "requests").unwrap();
        // Same arrivals for every policy: zero difference in offered requests.
        assert_eq!(requests.differences[0].mean, Some(0.0));
        assert_eq!(requests.differences[1].mean, Some(0.0));
        // The same policy twice: every paired difference is exactly zero.
        assert!(rows.iter().all(|x| x.differences[0].mean.is_none_or(|d| d == 0.0)));
        assert!(r.render().contains("C - A"));
    }
}
