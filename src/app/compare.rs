//! `breakerlab compare SCENARIO... --policy P...`: policies side by side on the same request
//! streams, with paired differences against the first, and the first scenario's timelines.

use super::load_scenarios;
use super::output::{self, Keep, OutputDir, Page};
use super::sweep::TargetMode;
use crate::Result;
use crate::deploy::nearest::nearest;
use crate::limits::{Limits, estimate_cells};
use crate::policy::export::{Library, export};
use crate::policy::{PolicyConfig, PolicySpec};
use crate::report::charts::ChartOptions;
use crate::report::contents::{self, Contents};
use crate::report::opening::Opening;
use crate::report::page::{InputFile, ReportInputs};
use crate::scenario::{InputError, Scenario, Spot};
use crate::sweep::compare::CompareReport;
use crate::sweep::constraint::Constraint;
use crate::sweep::grid::Configuration;
use crate::sweep::objective::{BindToColumns, BoundObjective};
use crate::sweep::output::{runs_csv, summary_csv};
use crate::sweep::runner::{
    Cells, config_info, default_objective, progress_bar_of, resolved_params, result_columns,
};
use crate::sweep::table::{ResultTable, Summary, TableBuilder};
use std::path::PathBuf;

/// What the user asked `compare` to do.
#[derive(Clone, Debug, Default)]
pub struct CompareRequest {
    /// Scenario files.
    pub scenarios: Vec<PathBuf>,
    /// Policies: `PRESET` or `PRESET[key=value,...]`.
    pub policies: Vec<String>,
    /// `key=value` overrides applied to every policy.
    pub sets: Vec<String>,
    /// Replicates per (scenario, policy).
    pub replicates: u32,
    /// Constraints each policy must meet on every scenario, each on the replicates its scope
    /// names (empty: the default, [`DEFAULT_CONSTRAINTS`]).
    pub constraints: Vec<String>,
    /// Base seed (replaces each scenario's).
    pub seed: Option<u64>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Output folder (default `output/compare-<first scenario name>`).
    pub out: Option<PathBuf>,
    /// Draw the PNG charts and write the report page.
    pub charts: bool,
    /// The command line as typed, for the report page.
    pub command_line: String,
    /// Memory and simulated-call limits checked before anything runs.
    pub limits: Limits,
    /// `--target`: every policy must be one this library expresses (else refused, or with
    /// `--target-mode nearest` replaced by the nearest one it does, listed).
    pub target: Option<Library>,
    /// `--target-mode`.
    pub target_mode: Option<TargetMode>,
}

/// What `compare` did: the side-by-side table and the files written.
#[derive(Debug)]
pub struct CompareOutcome {
    /// Every metric per scenario and policy, with paired differences.
    pub report: CompareReport,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// With `--target-mode nearest`, the policies replaced and what differs.
    pub replaced: Vec<String>,
}

impl CompareOutcome {
    /// The replacements, the table, then the files written.
    pub fn render(&self) -> String {
        let head: String = self.replaced.iter().map(|l| format!("{l}\n")).collect();
        format!("{head}{}\nwrote {}\n", self.report.render(), super::list(&self.files))
    }
}

/// Checks every policy against `--target`: refuses those the library cannot express, or with
/// `nearest` replaces each by the nearest one it can; returns the policies to run and the
/// replacement lines.
fn targeted(
    policies: Vec<PolicySpec>,
    target: Option<Library>,
    mode: Option<TargetMode>,
) -> Result<(Vec<PolicySpec>, Vec<String>)> {
    let Some(lib) = target else {
        if mode.is_some() {
            return Err(InputError::argument("--target-mode applies with --target LIBRARY only").into());
        }
        return Ok((policies, vec![]));
    };
    let (mut out, mut notes, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for (i, spec) in policies.into_iter().enumerate() {
        let cfg =
            spec.resolve().map_err(|e| InputError::argument(format!("policy `{}`: {e}", spec.preset)))?;
        if spec.preset == "none" || export(&cfg, lib, "x").is_ok() {
            out.push(spec);
            continue;
        }
        if mode == Some(TargetMode::Nearest) {
            let n = nearest(&cfg, &spec, lib)?;
            notes.push(format!(
                "--policy {} {} -> {} (the nearest {} expresses):",
                i + 1,
                cfg.label(),
                n.config.label(),
                lib.name()
            ));
            notes.extend(n.differences.iter().map(|d| format!("    {d}")));
            out.push(n.spec);
        } else if let Err(e) = export(&cfg, lib, "x") {
            refused.push(format!("  --policy {} {e}", i + 1));
        }
    }
    if !refused.is_empty() {
        return Err(InputError::argument(format!(
            "--target {}: {} of the policies cannot be expressed (--target-mode nearest runs the nearest expressible \
             configuration instead):\n{}",
            lib.name(),
            refused.len(),
            refused.join("\n")
        ))
        .into());
    }
    Ok((out, notes))
}

/// Every policy on every scenario for `replicates` replicates (base seed `seed`, else each
/// scenario's), side by side, with paired differences against the first policy. Costs use the
/// default objective.
pub fn compare(req: &CompareRequest) -> Result<CompareOutcome> {
    let (policies, replaced) =
        targeted(policies_from_args(&req.policies, &req.sets)?, req.target, req.target_mode)?;
    let (replicates, seed) = (req.replicates, req.seed);
    if req.scenarios.is_empty() {
        return Err(InputError::argument("give at least one scenario file").into());
    }
    if policies.is_empty() {
        return Err(InputError::argument("give at least one --policy to compare").into());
    }
    if replicates == 0 {
        return Err(InputError::argument("--replicates must be at least 1").into());
    }
    let loaded = load_scenarios(&req.scenarios)?;
    let columns = result_columns(&loaded);
    let constraints = constraints_from_args(&req.constraints, &columns)?;
    let name = format!("compare-{}", loaded[0].name);
    let dir = output::out_dir(req.out.as_deref(), &name);
    let run = Paired {
        scenarios: &loaded,
        replicates,
        seed,
        threads: req.threads,
        limits: req.limits,
        quiet: false,
        flags: (&req.policies, &req.sets),
    };
    let (configs, table, summary, objective) = run.run(&policies, &super::sweep::scratch_next_to(&dir))?;
    let report =
        CompareReport::from_table(&table, replicates, &objective).with_verdicts(&table, &constraints);
    let mut files = vec![
        (
            output::SUMMARY_CSV,
            summary_csv(&table, &summary, &constraints, &resolved_params).map_err(InputError::from)?,
        ),
        (output::RUNS_CSV, runs_csv(&table, &objective).map_err(InputError::from)?),
    ];
    let (detail, truth) = first_scenario_detail(&loaded[0], &configs, seed)?;
    let runs: Vec<(&str, &crate::metrics::RunRecord)> =
        detail.iter().map(|(l, r)| (l.as_str(), &r.record)).collect();
    files.extend([
        (output::TIMELINE_CSV, crate::report::timeline_csv(&runs)),
        (output::TRANSITIONS_CSV, crate::report::transitions_csv(&runs)),
        (output::EXPLAIN_CSV, crate::report::explain_csv(&runs)),
        (output::LATENCY_CSV, crate::report::latency_csv(&runs)),
        (output::INCIDENTS_CSV, crate::report::incidents_csv(&truth)),
    ]);
    table.check()?;
    summary.check()?;
    let mut out = OutputDir::create(&dir, Keep::Foreign)?;
    out.write_all(&files)?;
    let page = req.charts.then(|| Page {
        inputs: Some(
            ReportInputs {
                title: format!(
                    "compare: {}",
                    loaded.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                command_line: Some(req.command_line.clone()),
                // The timeline is of the first scenario: its seed names the run in the title.
                seed: Some(seed.unwrap_or(loaded[0].seed)),
                files: super::input_paths(None, &loaded).iter().filter_map(|p| InputFile::read(p)).collect(),
                opening: Some(opening(&report)),
                ..ReportInputs::default()
            }
            .with_scenario(&loaded[0]),
        ),
        charts: ChartOptions::default(),
    });
    // The charts and the page show the summary and the first scenario's runs.
    let contents = match &page {
        Some(page) => {
            let summary = contents::sweep_summary(&table, &summary, &constraints, &resolved_params)?;
            let incidents = contents::incidents(&truth);
            let names = page.inputs.as_ref().map(|i| i.breakers.clone()).unwrap_or_default();
            Some(Contents {
                timeline: Some(contents::timeline(
                    contents::series(&runs),
                    contents::transitions(&runs),
                    incidents.clone(),
                    Some(&summary),
                    page.inputs.as_ref(),
                )),
                marks: contents::marks(&runs, &incidents, &names),
                latency: Some(contents::latency(&runs)),
                opening: Some(opening(&report)),
                summary: Some(summary),
                inputs: page.inputs.clone(),
                ..Contents::default()
            })
        }
        None => None,
    };
    let files = out.finish(page.as_ref().zip(contents.as_ref()))?;
    Ok(CompareOutcome { report, files, replaced })
}

/// Policies run side by side on the same request streams: what `compare` runs, and what
/// `export --nearest` runs to say what the nearest configuration changes.
pub(super) struct Paired<'a> {
    /// The scenarios.
    pub scenarios: &'a [Scenario],
    /// Replicates per (scenario, policy).
    pub replicates: u32,
    /// Base seed (replaces each scenario's).
    pub seed: Option<u64>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Memory and simulated-call limits checked before anything runs.
    pub limits: Limits,
    /// No progress bar.
    pub quiet: bool,
    /// The `--policy` and `--set` arguments the policies came from, named in a refusal.
    pub flags: (&'a [String], &'a [String]),
}

impl Paired<'_> {
    /// Every policy on every scenario, under the default objective: the resolved policies, the
    /// results, their summary and the objective they were costed with.
    pub fn run(
        &self,
        policies: &[PolicySpec],
        scratch: &crate::sweep::store::Scratch,
    ) -> Result<(Vec<PolicyConfig>, ResultTable, Summary, BoundObjective)> {
        let mut configs = Vec::with_capacity(policies.len());
        let mut infos = Vec::with_capacity(policies.len());
        for (i, p) in policies.iter().enumerate() {
            let (args, sets) = self.flags;
            let resolved = p.resolve().map_err(|e| {
                super::name_flag(format!("policy `{}`: {e}", p.preset), args.get(i).map(String::as_str), sets)
            })?;
            let config = Configuration {
                id: i,
                preset: p.preset.clone(),
                overrides: p.overrides.clone().into_iter().collect(),
            };
            infos.push(config_info(&config, &resolved));
            configs.push(resolved);
        }
        let columns = result_columns(self.scenarios);
        let objective = default_objective().bind(&columns).map_err(InputError::from)?;
        let (replicates, seed) = (self.replicates, self.seed);
        let cells = Cells { scenarios: self.scenarios, configs: &configs, replicates, seed };
        let estimate = estimate_cells(&cells, None, &Spot::flag("--replicates"), &Spot::flag("--policy"))?;
        estimate.check(&self.limits)?;
        let per_cell = estimate.calls() as f64 / cells.count().max(1) as f64;
        let bar = progress_bar_of(cells.count(), per_cell, self.quiet);
        let names = self.scenarios.iter().map(|s| s.name.clone()).collect();
        let mut rows = TableBuilder::new(names, infos.len(), columns.clone(), replicates, scratch)?;
        cells
            .run_slices(&cells.all(), self.threads, &columns, &bar, &mut |row| rows.put(&row, row.config))?;
        let table = rows.finish(Box::new(infos))?;
        let summary = table.summarize(&objective)?;
        Ok((configs, table, summary, objective))
    }
}

/// The page's opening: the cost differences from A with what they say, in total then per
/// scenario, the policies' letters and any constraint broken.
pub fn opening(report: &CompareReport) -> Opening {
    let c = &report.confidence;
    let mut statements = c.statements();
    if statements.is_empty() {
        statements.push("one policy: nothing to compare it with".into());
    }
    let letters: Vec<String> = report
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} = `{p}`", crate::sweep::compare_confidence::letter(i)))
        .collect();
    statements.push(format!("Policies: {}.", letters.join(", ")));
    statements.extend(report.broken_lines().into_iter().map(|l| format!("{l}.")));
    let (headings, rows) = if c.totals.is_empty() { (Vec::new(), Vec::new()) } else { c.table() };
    let mut basis = Vec::new();
    if !report.constraints.is_empty() {
        basis.push(format!("Constraints applied on each scenario: {}.", report.constraints.join(", ")));
    }
    basis.push(
        "Every metric of every policy, with each difference from A, is in the terminal's tables and in \
         summary.csv and runs.csv."
            .into(),
    );
    Opening {
        heading: "Result: each policy against A".into(),
        statements,
        headings,
        rows,
        table_note: c.method(),
        basis,
    }
}

/// The compared policies' runs on the first scenario (label, result), with its incidents.
type Detail = (Vec<(String, crate::sim::RunResult)>, Vec<crate::truth::IncidentWindow>);

/// Every compared policy's run on the first scenario (replicate 0, on the same request
/// stream), labelled, with the scenario's incidents: the side-by-side timelines' runs.
fn first_scenario_detail(scenario: &Scenario, configs: &[PolicyConfig], seed: Option<u64>) -> Result<Detail> {
    use crate::sim::{self, RunOptions, Workload};
    let workload = Workload::build(scenario, seed.unwrap_or(scenario.seed), 0)?;
    let bin = scenario.scoring.timeline_bin.unwrap_or_else(|| sim::auto_bin(workload.duration()));
    let opts = RunOptions { timeline_bin: Some(bin), explain: true };
    let runs = configs.iter().map(|c| (c.label(), sim::run(scenario, &workload, c, &opts))).collect();
    Ok((runs, workload.truth))
}

/// The constraints `compare` applies without `--constraint`: a sweep's default (no incident
/// missed in any replicate), so a policy that misses incidents never reads "meets constraints".
pub const DEFAULT_CONSTRAINTS: [&str; 1] = [crate::sweep::constraint::DEFAULT_CONSTRAINT];

/// Parses `--constraint` arguments ([`DEFAULT_CONSTRAINTS`] when there are none).
fn constraints_from_args(texts: &[String], columns: &[String]) -> Result<Vec<Constraint>, InputError> {
    let parse = |t: &str| {
        Constraint::parse(t, columns).map_err(|e| InputError::argument(format!("--constraint: {e}")))
    };
    if texts.is_empty() {
        DEFAULT_CONSTRAINTS.iter().map(|t| parse(t)).collect()
    } else {
        texts.iter().map(|t| parse(t)).collect()
    }
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
            let (k, v) = PolicySpec::parse_set(item).map_err(|m| bad(&m.to_string()))?;
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

    #[test]
    fn the_page_opens_on_the_stated_confidence() {
        use crate::sweep::table::ResultTable;
        use crate::sweep::table::tests::{cfg, run};
        // B costs 10 less than A in every replicate; C is A give or take noise.
        let (a, b, c) = ([20.0, 22.0, 19.0, 21.0], [10.5, 11.0, 9.0, 11.5], [21.0, 20.0, 20.0, 22.5]);
        let mut runs = Vec::new();
        for (p, costs) in [a, b, c].iter().enumerate() {
            for (r, v) in costs.iter().enumerate() {
                runs.push(run(0, p, r as u32, &[Some(*v)]));
            }
        }
        let configs =
            vec![cfg(0, "consecutive", "x", 1), cfg(1, "windowed", "y", 2), cfg(2, "consecutive", "x", 3)];
        let t = ResultTable::new(vec!["outage".into()], configs, vec!["false_opens".into()], runs).unwrap();
        let objective = crate::metrics::Objective::new([(crate::metrics::Metric::FalseOpens, 1.0)])
            .bind(&t.metrics)
            .unwrap();
        let report = CompareReport::from_table(&t, 4, &objective);
        let o = opening(&report);
        assert!(
            o.statements[0].starts_with("B is better than A with 95 % confidence (total cost B − A = -10 ± ")
        );
        assert!(
            o.statements[1].starts_with("A and C cannot be told apart at 4 replicates"),
            "{:?}",
            o.statements
        );
        assert_eq!(o.rows[0][0], "outage");
        assert!(
            o.rows[0][1].ends_with("(B better)") && o.rows[0][2].ends_with("(cannot tell)"),
            "{:?}",
            o.rows
        );
        let mut html = String::new();
        o.html(&mut html);
        assert!(html.contains("<strong>B is better than A with 95 % confidence"), "{html}");
        // The terminal says the same first.
        let text = report.render();
        let result = text.find("result:\n  B is better than A with 95 % confidence").unwrap();
        assert!(result < text.find("scenario outage").unwrap(), "{text}");
    }

    #[test]
    fn compare_pairs_policies_on_the_same_streams() {
        let policies = ["consecutive", "consecutive", "consecutive[failure_threshold=20]"];
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cmp");
        let CompareOutcome { report: r, files, .. } = compare(&CompareRequest {
            scenarios: vec![super::super::bundled("blip.toml")],
            policies: policies.map(String::from).to_vec(),
            replicates: 2,
            threads: Some(2),
            out: Some(out),
            ..CompareRequest::default()
        })
        .unwrap();
        let names: Vec<_> = files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect();
        assert_eq!(
            names,
            [
                "summary.csv",
                "runs.csv",
                "timeline.csv",
                "transitions.csv",
                "explain.csv",
                "latency.csv",
                "incidents.csv"
            ]
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
