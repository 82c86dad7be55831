//! `breakerlab check FILE`: golden tests for one breaker configuration, for a project's CI.
//!
//! A checks file names a configuration (a preset with settings), the scenarios it must survive
//! and the bounds it must keep on each (`missed_incidents == 0`, `detection_delay_max_s <= 30`,
//! `false_opens <= 1 per week`). Every bound holds in every replicate or it is broken. `check`
//! runs the scenarios, prints a table, and tells the command line whether every bound held.
//! `--update` records today's figures beside the checks file; a later run says which figures
//! moved beyond noise (paired over the same replicates, so the same request streams).
//! `--junit FILE` writes the table as a JUnit XML report for CI systems.

use crate::Result;
use crate::limits::Limits;
use crate::metrics::Metric;
use crate::policy::PolicySpec;
use crate::scenario::{InputError, Scenario, Spot};
use crate::sweep::compare::show;
use crate::sweep::constraint::{Constraint, Op, Scope};
use crate::sweep::file::{ScenarioFiles, from_toml};
use crate::sweep::runner::metric_columns;
use crate::sweep::stats::{Stat, paired};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// What the user asked `check` to do.
#[derive(Clone, Debug, Default)]
pub struct CheckRequest {
    /// The checks file (TOML).
    pub file: PathBuf,
    /// Also write a JUnit XML report here.
    pub junit: Option<PathBuf>,
    /// Record today's figures as the expected ones (the file named by `expected`).
    pub update: bool,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Memory and simulated-call limits checked before anything runs.
    pub limits: Limits,
}

/// Replicates per scenario when a checks file does not say.
pub const DEFAULT_REPLICATES: u32 = 3;

/// The time unit a rate bound (`false_opens <= 1 per week`) divides a count by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Per {
    /// Per hour of simulated time.
    Hour,
    /// Per day of simulated time.
    Day,
    /// Per week of simulated time.
    Week,
}

impl Per {
    fn seconds(self) -> f64 {
        match self {
            Per::Hour => 3_600.0,
            Per::Day => 86_400.0,
            Per::Week => 604_800.0,
        }
    }
}

/// One bound of a checks file: a constraint on a metric, as a count or as a rate per unit of
/// simulated time, that must hold in every replicate.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The metric, operator and bound.
    pub constraint: Constraint,
    /// `per week` and the like: the metric divided by the scenario's span in that unit.
    pub per: Option<Per>,
    /// The bound as written.
    pub text: String,
}

impl Bound {
    /// Parses `METRIC OP VALUE` with an optional `per hour|day|week` after the value, for count
    /// metrics only.
    pub fn parse(text: &str, columns: &[String]) -> std::result::Result<Bound, String> {
        let trimmed = text.trim();
        let units = [(" per hour", Per::Hour), (" per day", Per::Day), (" per week", Per::Week)];
        let (body, per) = units
            .iter()
            .find_map(|(suffix, per)| trimmed.strip_suffix(suffix).map(|b| (b, Some(*per))))
            .unwrap_or((trimmed, None));
        let constraint = Constraint::parse(body, columns).map_err(|e| e.to_string())?;
        if per.is_some() && !constraint.metric.is_count() {
            return Err(format!(
                "bound {trimmed:?}: `per hour|day|week` applies to counts (false_opens, flaps, ...), \
                 not to `{}`",
                constraint.metric
            ));
        }
        Ok(Bound { constraint, per, text: trimmed.to_string() })
    }

    /// The value the bound is judged on: the metric, or its rate over `span_s` seconds.
    fn value(&self, metric: Option<f64>, span_s: f64) -> Option<f64> {
        match self.per {
            None => metric,
            Some(per) => metric.map(|v| v / (span_s / per.seconds())),
        }
    }

    /// Of the replicates' values, the one to show: the first that breaks the bound, else the
    /// one nearest to breaking it (the largest under `<`/`<=`, the smallest under `>`/`>=`).
    fn worst(&self, values: &[Option<f64>]) -> Option<f64> {
        if let Some(v) = values.iter().find(|v| !self.constraint.holds(**v)) {
            return *v;
        }
        let present = values.iter().flatten().copied();
        match self.constraint.op {
            Op::Le | Op::Lt => present.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v)))),
            Op::Ge | Op::Gt => present.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v)))),
            Op::Eq | Op::Ne => values.iter().flatten().next().copied(),
        }
    }
}

/// A validated checks file.
#[derive(Clone, Debug)]
pub struct ChecksFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its name (default: the file's stem).
    pub name: String,
    /// The configuration under test.
    pub policy: PolicySpec,
    /// Replicates per scenario.
    pub replicates: u32,
    /// Base seed replacing every scenario's.
    pub seed: Option<u64>,
    /// Each scenario file with the bounds it must keep, in file order (a scenario named by two
    /// `[[checks]]` entries keeps both entries' bounds).
    pub checks: Vec<(PathBuf, Vec<Bound>)>,
    /// Where `--update` writes today's figures and a plain run reads them.
    pub expected: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChecks {
    name: Option<String>,
    replicates: Option<Spanned<i64>>,
    seed: Option<u64>,
    expected: Option<String>,
    policy: Spanned<toml::Table>,
    checks: Spanned<Vec<RawCheck>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    scenarios: Spanned<Vec<Spanned<String>>>,
    bounds: Spanned<Vec<Spanned<String>>>,
}

impl ChecksFile {
    /// Validates the checks file `text` read from `path`; `files` finds the scenario files its
    /// `[[checks]]` entries name (relative to the file's folder).
    pub fn parse(text: &str, path: &Path, files: &dyn ScenarioFiles) -> Result<ChecksFile, InputError> {
        let file = path.display().to_string();
        let raw: RawChecks = from_toml(text, &file).map_err(InputError::from)?;
        let at = |span: std::ops::Range<usize>, m: String| InputError::at_offset(path, text, span.start, m);
        let replicates = match raw.replicates {
            None => DEFAULT_REPLICATES,
            Some(r) => match u32::try_from(*r.get_ref()) {
                Ok(n) if (1..=1000).contains(&n) => n,
                _ => {
                    return Err(at(
                        r.span(),
                        format!("`replicates` must be from 1 to 1000, found {}", r.get_ref()),
                    ));
                }
            },
        };
        let base = path.parent().unwrap_or(Path::new(""));
        let policy = policy_of(raw.policy.get_ref(), base).map_err(|m| at(raw.policy.span(), m))?;
        if raw.checks.get_ref().is_empty() {
            return Err(at(raw.checks.span(), "`checks` is empty: add at least one [[checks]] entry".into()));
        }
        let columns = metric_columns();
        let mut checks: Vec<(PathBuf, Vec<Bound>)> = Vec::new();
        for entry in raw.checks.get_ref() {
            if entry.bounds.get_ref().is_empty() {
                return Err(at(entry.bounds.span(), "`bounds` is empty: name at least one bound".into()));
            }
            let bounds = entry
                .bounds
                .get_ref()
                .iter()
                .map(|b| Bound::parse(b.get_ref(), &columns).map_err(|m| at(b.span(), m)))
                .collect::<Result<Vec<Bound>, InputError>>()?;
            if entry.scenarios.get_ref().is_empty() {
                return Err(at(entry.scenarios.span(), "`scenarios` is empty: name at least one".into()));
            }
            for pattern in entry.scenarios.get_ref() {
                let found =
                    files.resolve(base, pattern.get_ref()).map_err(|e| at(pattern.span(), e.to_string()))?;
                for f in found {
                    match checks.iter_mut().find(|(p, _)| *p == f) {
                        Some((_, known)) => known.extend(bounds.iter().cloned()),
                        None => checks.push((f, bounds.clone())),
                    }
                }
            }
        }
        let stem = path.file_stem().map_or_else(|| "checks".into(), |s| s.to_string_lossy().into_owned());
        let expected = match &raw.expected {
            Some(rel) => base.join(rel),
            None => base.join(format!("{stem}.expected.csv")),
        };
        Ok(ChecksFile {
            path: path.to_path_buf(),
            name: raw.name.unwrap_or(stem),
            policy,
            replicates,
            seed: raw.seed,
            checks,
            expected,
        })
    }
}

/// The `[policy]` table: `preset` and the preset's parameters, or `config` (a library
/// configuration file, relative to `base`) and its `library`, read back as `export` writes it;
/// checked by resolving it.
fn policy_of(table: &toml::Table, base: &Path) -> std::result::Result<PolicySpec, String> {
    if let Some(config) = table.get("config") {
        return exported_policy(table, config, base);
    }
    let preset = match table.get("preset") {
        Some(toml::Value::String(p)) => p.clone(),
        Some(other) => return Err(format!("`preset` must be a string, found {other}")),
        None => return Err("`[policy]` needs `preset` (see `breakerlab presets`)".into()),
    };
    let mut spec = PolicySpec::new(&preset);
    for (k, v) in table.iter().filter(|(k, _)| k.as_str() != "preset") {
        spec.overrides.insert(k.clone(), v.clone());
    }
    spec.resolve().map_err(|e| format!("policy `{preset}`: {e}"))?;
    Ok(spec)
}

/// `[policy] config = "recommended.yaml"`, `library = "resilience4j"`: the file read back.
fn exported_policy(
    table: &toml::Table,
    config: &toml::Value,
    base: &Path,
) -> std::result::Result<PolicySpec, String> {
    let toml::Value::String(config) = config else {
        return Err(format!("`config` must be a file name, found {config}"));
    };
    if let Some(k) = table.keys().find(|k| !["config", "library"].contains(&k.as_str())) {
        return Err(format!(
            "`{k}`: a [policy] with `config` takes only `library` beside it (the file holds every setting)"
        ));
    }
    let library = match table.get("library") {
        Some(toml::Value::String(l)) => {
            crate::policy::Library::parse(l).map_err(|e| format!("`library`: {e}"))?
        }
        Some(other) => return Err(format!("`library` must be a string, found {other}")),
        None => {
            return Err(
                "`config` needs `library` (the library the file is written for, e.g. \"resilience4j\")"
                    .into(),
            );
        }
    };
    let path = base.join(config);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("`config`: {}: cannot read: {e}", path.display()))?;
    let spec = crate::deploy::import::import(&text, library)
        .map_err(|e| format!("`config`: {} ({}): {e}", path.display(), library.name()))?;
    spec.resolve().map_err(|e| format!("`config`: {} ({}): {e}", path.display(), library.name()))?;
    Ok(spec)
}

/// One bound on one scenario, judged over every replicate.
#[derive(Clone, Debug)]
pub struct BoundResult {
    /// The scenario's name.
    pub scenario: String,
    /// The bound as written.
    pub bound: String,
    /// The value shown: the first replicate that breaks it, else the nearest to breaking it.
    pub worst: Option<f64>,
    /// Replicates in which its value met the bound, of all.
    pub held_in: u32,
    /// Replicates run.
    pub replicates: u32,
    /// Whether it holds over the replicates its scope names (every one unless the bound says
    /// `in P % of replicates`, `worst` or `mean`).
    pub holds: bool,
}

impl BoundResult {
    /// Whether the bound holds.
    pub fn holds(&self) -> bool {
        self.holds
    }
}

/// A figure that moved since the expected figures were recorded.
#[derive(Clone, Debug)]
pub struct Moved {
    /// The scenario's name.
    pub scenario: String,
    /// The metric's column name.
    pub metric: String,
    /// Expected (recorded) mean over replicates.
    pub expected: Option<f64>,
    /// Today's mean over the same replicates.
    pub now: Option<f64>,
    /// Paired difference now − expected over the replicates both have.
    pub difference: Stat,
}

/// What the expected figures said, if there are any.
#[derive(Clone, Debug)]
pub enum Expected {
    /// `--update`: today's figures were written to this file.
    Recorded(PathBuf),
    /// No expected figures exist yet (run with `--update` to record them).
    None(PathBuf),
    /// Compared with the figures in this file (recorded for `policy`).
    Compared {
        /// The file.
        path: PathBuf,
        /// The configuration the figures were recorded for.
        policy: String,
        /// Figures that moved beyond noise.
        moved: Vec<Moved>,
    },
}

/// What `check` found.
#[derive(Debug)]
pub struct CheckOutcome {
    /// The checks file's name.
    pub name: String,
    /// The configuration checked, as a label.
    pub policy: String,
    /// Replicates per scenario.
    pub replicates: u32,
    /// Every bound on every scenario, in file order.
    pub results: Vec<BoundResult>,
    /// The comparison with the expected figures.
    pub expected: Expected,
    /// The JUnit report written, if asked.
    pub junit: Option<PathBuf>,
}

impl CheckOutcome {
    /// Whether every bound held in every replicate.
    pub fn passed(&self) -> bool {
        self.results.iter().all(BoundResult::holds)
    }

    /// The table, the verdict and what moved.
    pub fn render(&self) -> String {
        let mut out = format!(
            "check {}: {}, {} replicate{} per scenario; a bound holds when it holds in every replicate\n\n",
            self.name,
            self.policy,
            self.replicates,
            if self.replicates == 1 { "" } else { "s" }
        );
        let rows: Vec<[String; 4]> = self
            .results
            .iter()
            .map(|r| {
                let value = r.worst.map_or_else(|| "-".into(), crate::sweep::recommend::num);
                let verdict = if r.holds() && r.worst.is_none() {
                    "holds (no value: nothing to bound)".to_string()
                } else if r.holds() {
                    "holds".to_string()
                } else {
                    format!("BROKEN in {} of {}", r.replicates - r.held_in, r.replicates)
                };
                [r.scenario.clone(), r.bound.clone(), value, verdict]
            })
            .collect();
        let header = ["scenario", "bound", "worst", "verdict"].map(String::from);
        let widths: Vec<usize> = (0..4)
            .map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        let broken = self.results.iter().filter(|r| !r.holds()).count();
        let _ = writeln!(
            out,
            "\n{}",
            if broken == 0 {
                format!("PASS: all {} bounds hold.", self.results.len())
            } else {
                format!("FAIL: {broken} of {} bounds broken.", self.results.len())
            }
        );
        match &self.expected {
            Expected::Recorded(p) => {
                let _ = writeln!(out, "recorded today's figures as the expected ones in {}", p.display());
            }
            Expected::None(p) => {
                let _ = writeln!(
                    out,
                    "no expected figures ({} does not exist): `--update` records today's",
                    p.display()
                );
            }
            Expected::Compared { path, policy, moved } => {
                let against =
                    if *policy == self.policy { String::new() } else { format!(", recorded for {policy}") };
                if moved.is_empty() {
                    let _ = writeln!(out, "no figure moved beyond noise since {}{against}", path.display());
                } else {
                    let _ = writeln!(
                        out,
                        "moved since {}{against} (now − expected, paired over replicates, 95 % interval):",
                        path.display()
                    );
                    for m in moved {
                        let fmt = |v: Option<f64>| v.map_or_else(|| "-".into(), crate::sweep::recommend::num);
                        let _ = writeln!(
                            out,
                            "  {} {}: {} -> {} ({})",
                            m.scenario,
                            m.metric,
                            fmt(m.expected),
                            fmt(m.now),
                            show(&m.difference, true)
                        );
                    }
                }
            }
        }
        if let Some(j) = &self.junit {
            let _ = writeln!(out, "wrote {}", j.display());
        }
        out
    }
}

/// Runs every scenario of the checks file for its replicates, judges every bound, compares
/// with (or records) the expected figures and writes the JUnit report when asked.
pub fn check(req: &CheckRequest) -> Result<CheckOutcome> {
    let text = crate::scenario::read_text(&req.file)?;
    let file = ChecksFile::parse(&text, &req.file, &super::files::Disk)?;
    let config = file.policy.resolve().map_err(|e| InputError::file(&file.path, e.to_string()))?;
    let paths: Vec<PathBuf> = file.checks.iter().map(|(p, _)| p.clone()).collect();
    let scenarios = super::load_scenarios(&paths)?;
    let configs = vec![config.clone()];
    let cells = crate::sweep::runner::Cells {
        scenarios: &scenarios,
        configs: &configs,
        replicates: file.replicates,
        seed: file.seed,
    };
    let spot = Spot::in_file(&file.path, &text, None, "replicates");
    crate::limits::estimate_cells(&cells, None, &spot, &spot)?.check(&req.limits)?;
    let columns = metric_columns();
    // Every metric of every replicate of every scenario: `[scenario][replicate][column]`.
    let mut values: Vec<Vec<Vec<Option<f64>>>> = vec![Vec::new(); scenarios.len()];
    let hidden = indicatif::ProgressBar::hidden();
    cells.run_slices(&cells.all(), req.threads, &columns, &hidden, &mut |row| {
        values[row.scenario].push(row.values.to_vec());
        Ok(())
    })?;
    let mut results = Vec::new();
    for ((_, bounds), (scenario, per_replicate)) in file.checks.iter().zip(scenarios.iter().zip(&values)) {
        let span_s = scenario.duration.as_secs_f64();
        for b in bounds {
            let column = columns.iter().position(|c| c == b.constraint.metric.name()).unwrap_or(0);
            let judged: Vec<Option<f64>> = per_replicate.iter().map(|v| b.value(v[column], span_s)).collect();
            let verdict = b.constraint.judge(&judged);
            results.push(BoundResult {
                scenario: scenario.name.clone(),
                bound: b.text.clone(),
                // A bound on the mean or the worst replicate shows the value it was judged on.
                worst: match b.constraint.scope {
                    Scope::Mean | Scope::Worst => verdict.shown,
                    Scope::Every | Scope::Share(_) => b.worst(&judged),
                },
                held_in: file.replicates - verdict.breaking as u32,
                replicates: file.replicates,
                holds: verdict.holds,
            });
        }
    }
    let label = config.label();
    let figures = Figures::from_run(&label, &scenarios, &values, &columns);
    let expected = if req.update {
        write_atomically(&file.expected, figures.to_csv().as_bytes())?;
        Expected::Recorded(file.expected.clone())
    } else if file.expected.exists() {
        let recorded = Figures::read(&file.expected)?;
        Expected::Compared {
            path: file.expected.clone(),
            policy: recorded.policy.clone(),
            moved: recorded.moved(&figures),
        }
    } else {
        Expected::None(file.expected.clone())
    };
    let outcome = CheckOutcome {
        name: file.name.clone(),
        policy: label,
        replicates: file.replicates,
        results,
        expected,
        junit: req.junit.clone(),
    };
    if let Some(path) = &req.junit {
        write_atomically(path, junit_xml(&outcome).as_bytes())?;
    }
    Ok(outcome)
}

/// A scenario's name and a metric's column name.
type Key = (String, String);

/// Per-replicate figures of one check run: `(scenario, metric) -> values by replicate`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Figures {
    /// The configuration's label.
    policy: String,
    /// Values by replicate, keyed by scenario then metric, in file order of first appearance.
    values: Vec<(Key, Vec<Option<f64>>)>,
}

/// The header of the expected-figures file.
const FIGURES_HEADER: [&str; 5] = ["policy", "scenario", "metric", "replicate", "value"];

impl Figures {
    fn from_run(
        policy: &str,
        scenarios: &[Scenario],
        values: &[Vec<Vec<Option<f64>>>],
        columns: &[String],
    ) -> Figures {
        let mut out = Figures { policy: policy.to_string(), values: Vec::new() };
        for (scenario, reps) in scenarios.iter().zip(values) {
            for (i, column) in columns.iter().enumerate() {
                out.values
                    .push(((scenario.name.clone(), column.clone()), reps.iter().map(|r| r[i]).collect()));
            }
        }
        out
    }

    /// The figures as CSV, one row per (scenario, metric, replicate); an empty cell is a metric
    /// with no value.
    fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut rows = vec![FIGURES_HEADER.map(String::from).to_vec()];
        for ((scenario, metric), reps) in &self.values {
            for (r, v) in reps.iter().enumerate() {
                let value = v.map(crate::report::format_float).unwrap_or_default();
                rows.push(vec![self.policy.clone(), scenario.clone(), metric.clone(), r.to_string(), value]);
            }
        }
        for row in rows {
            // Writing to a Vec cannot fail.
            let _ = w.write_record(&row);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// Reads an expected-figures file written by [`Figures::to_csv`].
    fn read(path: &Path) -> Result<Figures, InputError> {
        let text = crate::scenario::read_text(path)?;
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().map_err(|e| InputError::file(path, e.to_string()))?.clone();
        if header.iter().ne(FIGURES_HEADER) {
            return Err(InputError::file(
                path,
                format!("line 1: expected the header `{}`", FIGURES_HEADER.join(",")),
            ));
        }
        let mut out = Figures::default();
        let mut index: BTreeMap<Key, usize> = BTreeMap::new();
        for (i, record) in reader.records().enumerate() {
            let line = i + 2;
            let bad = |m: String| InputError::file(path, format!("line {line}: {m}"));
            let record = record.map_err(|e| bad(e.to_string()))?;
            let field = |k: usize| record.get(k).unwrap_or("");
            let replicate: usize = field(3).parse().map_err(|_| {
                bad(format!("column `replicate`: expected a whole number, found {:?}", field(3)))
            })?;
            let value = match field(4) {
                "" => None,
                v => Some(v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                    bad(format!("column `value`: expected a finite number or nothing, found {v:?}"))
                })?),
            };
            out.policy = field(0).to_string();
            let key = (field(1).to_string(), field(2).to_string());
            let slot = *index.entry(key.clone()).or_insert_with(|| {
                out.values.push((key, Vec::new()));
                out.values.len() - 1
            });
            let reps = &mut out.values[slot].1;
            if replicate != reps.len() {
                return Err(bad(format!("replicate {replicate} out of order (expected {})", reps.len())));
            }
            reps.push(value);
        }
        Ok(out)
    }

    /// The figures of `now` that differ from these beyond noise: a paired 95 % interval that
    /// excludes zero, or, with one replicate, any difference at all.
    fn moved(&self, now: &Figures) -> Vec<Moved> {
        let mut out = Vec::new();
        for ((scenario, metric), reps) in &now.values {
            let Some((_, before)) = self.values.iter().find(|(k, _)| k.0 == *scenario && k.1 == *metric)
            else {
                continue;
            };
            let n = before.len().min(reps.len());
            let (before, reps) = (&before[..n], &reps[..n]);
            let difference = paired(before, reps);
            let presence_changed = before.iter().zip(reps).any(|(a, b)| a.is_some() != b.is_some());
            let beyond = match (difference.mean, difference.ci95) {
                (Some(m), Some(ci)) => m - ci > 0.0 || m + ci < 0.0,
                (Some(m), None) => m != 0.0,
                (None, _) => false,
            };
            if beyond || presence_changed {
                let mean = |v: &[Option<f64>]| crate::sweep::stats::describe(v.iter().copied()).mean;
                out.push(Moved {
                    scenario: scenario.clone(),
                    metric: metric.clone(),
                    expected: mean(before),
                    now: mean(reps),
                    difference,
                });
            }
        }
        out
    }
}

/// The outcome as a JUnit XML report: one test suite, one test case per (scenario, bound).
pub fn junit_xml(outcome: &CheckOutcome) -> String {
    let failures = outcome.results.iter().filter(|r| !r.holds()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"breakerlab check\" tests=\"{}\" failures=\"{failures}\">",
        outcome.results.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
        xml_escape(&outcome.name),
        outcome.results.len()
    );
    let _ = writeln!(
        out,
        "    <properties><property name=\"policy\" value=\"{}\"/><property name=\"replicates\" value=\"{}\"/></properties>",
        xml_escape(&outcome.policy),
        outcome.replicates
    );
    for r in &outcome.results {
        let name = format!("{}: {}", r.scenario, r.bound);
        let worst = r.worst.map_or_else(|| "-".into(), crate::sweep::recommend::num);
        if r.holds() {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"/>",
                xml_escape(&outcome.name),
                xml_escape(&name)
            );
        } else {
            let message = format!(
                "broken in {} of {} replicates (worst {worst})",
                r.replicates - r.held_in,
                r.replicates
            );
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\">\n      <failure message=\"{}\"/>\n    </testcase>",
                xml_escape(&outcome.name),
                xml_escape(&name),
                xml_escape(&message)
            );
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// `text` with the five XML special characters escaped (and other control characters dropped,
/// which XML 1.0 cannot carry).
fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so a reader never
/// sees half a file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).map_err(|e| crate::Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| crate::Error::io(path, e))
}

/// The metrics a rate bound may apply to: whole counts of events.
trait CountMetric {
    fn is_count(&self) -> bool;
}

impl CountMetric for Metric {
    fn is_count(&self) -> bool {
        matches!(
            self,
            Metric::FalseOpens
                | Metric::Flaps
                | Metric::OpenEpisodes
                | Metric::ProbeFailures
                | Metric::WastedQuota
                | Metric::Shed
                | Metric::ShedHealthy
                | Metric::Requests
                | Metric::Attempts
                | Metric::Probes
                | Metric::Retries
                | Metric::Timeouts
                | Metric::Rejections
                | Metric::Deferred
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Listed(Vec<&'static str>);

    impl ScenarioFiles for Listed {
        fn resolve(&self, base: &Path, pattern: &str) -> crate::Result<Vec<PathBuf>> {
            let found: Vec<PathBuf> =
                self.0.iter().filter(|f| **f == pattern).map(|f| base.join(f)).collect();
            if found.is_empty() {
                Err(crate::Error::invalid(format!("scenario file {pattern:?} not found")))
            } else {
                Ok(found)
            }
        }
        fn same_file(&self, a: &Path, b: &Path) -> bool {
            a == b
        }
    }

    fn parse(text: &str) -> Result<ChecksFile, InputError> {
        ChecksFile::parse(text, Path::new("ci/checks.toml"), &Listed(vec!["a.toml", "b.toml"]))
    }

    const GOOD: &str = r#"
replicates = 2
[policy]
preset = "consecutive"
failure_threshold = 3

[[checks]]
scenarios = ["a.toml", "b.toml"]
bounds = ["missed_incidents == 0"]

[[checks]]
scenarios = ["a.toml"]
bounds = ["false_opens <= 1 per week", "detection_delay_max_s <= 30"]
"#;

    #[test]
    fn a_checks_file_can_name_an_exported_library_config() {
        let dir = tempfile::tempdir().unwrap();
        let mut original = PolicySpec::new("resilience4j-time");
        original.overrides.insert("sliding_window_size".into(), toml::Value::Integer(20));
        let cfg = original.resolve().unwrap();
        let yaml = crate::policy::export::export(&cfg, crate::policy::Library::Resilience4j, "svc").unwrap();
        std::fs::write(dir.path().join("recommended.yaml"), yaml).unwrap();
        let path = dir.path().join("checks.toml");
        let with = |policy: &str| {
            let text = format!(
                "{policy}\n[[checks]]\nscenarios = [\"a.toml\"]\nbounds = [\"missed_incidents == 0\"]\n"
            );
            ChecksFile::parse(&text, &path, &Listed(vec!["a.toml"]))
        };
        let f = with("[policy]\nconfig = \"recommended.yaml\"\nlibrary = \"resilience4j\"").unwrap();
        let back = f.policy.resolve().unwrap();
        assert_eq!(back.family_config(), cfg.family_config());
        assert_eq!(back.classifier(), cfg.classifier());
        let e = with("[policy]\nconfig = \"recommended.yaml\"").unwrap_err().to_string();
        assert!(
            e.ends_with(
                "`config` needs `library` (the library the file is written for, e.g. \"resilience4j\")"
            ),
            "{e}"
        );
        let e = with("[policy]\nconfig = \"recommended.yaml\"\nlibrary = \"polly\"").unwrap_err().to_string();
        assert!(
            e.ends_with("recommended.yaml (polly): no `FailureRatio` in this polly configuration"),
            "{e}"
        );
        let e = with(
            "[policy]\nconfig = \"recommended.yaml\"\nlibrary = \"resilience4j\"\nfailure_rate_threshold = 5",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("`failure_rate_threshold`: a [policy] with `config` takes only `library` beside it"),
            "{e}"
        );
    }

    #[test]
    fn a_checks_file_merges_bounds_per_scenario_in_file_order() {
        let f = parse(GOOD).unwrap();
        assert_eq!(f.name, "checks");
        assert_eq!(f.replicates, 2);
        assert_eq!(f.policy.preset, "consecutive");
        assert_eq!(f.expected, Path::new("ci/checks.expected.csv"));
        let names: Vec<(String, Vec<&str>)> = f
            .checks
            .iter()
            .map(|(p, b)| (p.display().to_string(), b.iter().map(|b| b.text.as_str()).collect()))
            .collect();
        assert_eq!(
            names,
            [
                (
                    "ci/a.toml".to_string(),
                    vec!["missed_incidents == 0", "false_opens <= 1 per week", "detection_delay_max_s <= 30"]
                ),
                ("ci/b.toml".to_string(), vec!["missed_incidents == 0"]),
            ]
        );
        assert_eq!(f.checks[0].1[1].per, Some(Per::Week));
    }

    #[test]
    fn bad_checks_files_name_line_column_and_what_was_expected() {
        let err = |t: &str| parse(t).unwrap_err().to_string();
        let e = err(&GOOD.replace("failure_threshold = 3", "failure_threshold = 0"));
        assert!(e.starts_with("ci/checks.toml:3:1"), "{e}");
        assert!(e.contains("failure_threshold"), "{e}");
        let e = err(&GOOD.replace("missed_incidents == 0", "missed == 0"));
        assert!(e.starts_with("ci/checks.toml:9:11"), "{e}");
        assert!(e.contains("unknown metric `missed`"), "{e}");
        let e = err(&GOOD.replace("\"a.toml\", \"b.toml\"", "\"c.toml\""));
        assert!(e.starts_with("ci/checks.toml:8:14") && e.contains("not found"), "{e}");
        let e = err(&GOOD.replace("replicates = 2", "replicates = 0"));
        assert!(e.contains("`replicates` must be from 1 to 1000, found 0"), "{e}");
        let e = err(&GOOD.replace("replicates = 2", "replicate = 2"));
        assert!(e.contains("unknown field `replicate`"), "{e}");
        let e = err(&GOOD.replace("detection_delay_max_s <= 30", "availability >= 0.9 per day"));
        assert!(e.contains("applies to counts"), "{e}");
        let e = err(&GOOD.replace("preset = \"consecutive\"", ""));
        assert!(e.contains("needs `preset`"), "{e}");
    }

    #[test]
    fn rate_bounds_divide_by_the_span_and_worst_is_the_first_break() {
        let cols = metric_columns();
        let b = Bound::parse("false_opens <= 1 per week", &cols).unwrap();
        // 2 false opens over two weeks is 1 a week: holds; over one day it is 14 a week.
        assert_eq!(b.value(Some(2.0), 2.0 * 604_800.0), Some(1.0));
        assert_eq!(b.value(Some(2.0), 86_400.0), Some(14.0));
        let b = Bound::parse("detection_delay_max_s <= 30", &cols).unwrap();
        assert_eq!(b.worst(&[Some(3.0), Some(40.0), Some(50.0)]), Some(40.0));
        assert_eq!(b.worst(&[Some(3.0), None, Some(20.0)]), Some(20.0));
        let b = Bound::parse("availability >= 99%", &cols).unwrap();
        assert_eq!(b.worst(&[Some(0.999), Some(0.995)]), Some(0.995));
    }

    #[test]
    fn expected_figures_round_trip_and_only_real_moves_are_reported() {
        let fig = |vals: [Option<f64>; 3]| Figures {
            policy: "consecutive".into(),
            values: vec![(("a".into(), "false_opens".into()), vals.to_vec())],
        };
        let before = fig([Some(1.0), Some(2.0), Some(3.0)]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.csv");
        std::fs::write(&path, before.to_csv()).unwrap();
        assert_eq!(Figures::read(&path).unwrap(), before);
        // Same figures: nothing moved.
        assert!(before.moved(&before).is_empty());
        // Up by exactly 2 in every replicate: the paired interval is 2 ± 0.
        let up = before.moved(&fig([Some(3.0), Some(4.0), Some(5.0)]));
        assert_eq!(up.len(), 1);
        assert_eq!(up[0].difference.mean, Some(2.0));
        // Up in one replicate and down in another: the interval covers zero.
        assert!(before.moved(&fig([Some(3.0), Some(0.0), Some(3.0)])).is_empty());
        // A metric that lost its value moved.
        assert_eq!(before.moved(&fig([Some(1.0), None, Some(3.0)])).len(), 1);
        std::fs::write(&path, "policy,scenario,metric,replicate,value\nx,a,m,0,nan\n").unwrap();
        let e = Figures::read(&path).unwrap_err().to_string();
        assert!(e.contains("line 2: column `value`"), "{e}");
    }

    #[test]
    fn junit_reports_escape_and_mark_failures() {
        let outcome = CheckOutcome {
            name: "a<b>".into(),
            policy: "consecutive[x=\"1\"]".into(),
            replicates: 2,
            results: vec![
                BoundResult {
                    scenario: "s".into(),
                    bound: "false_opens <= 1".into(),
                    worst: Some(0.0),
                    held_in: 2,
                    replicates: 2,
                    holds: true,
                },
                BoundResult {
                    scenario: "s".into(),
                    bound: "missed_incidents == 0".into(),
                    worst: Some(1.0),
                    held_in: 1,
                    replicates: 2,
                    holds: false,
                },
            ],
            expected: Expected::None("e.csv".into()),
            junit: None,
        };
        assert!(!outcome.passed());
        let xml = junit_xml(&outcome);
        assert!(xml.contains("<testsuite name=\"a&lt;b&gt;\" tests=\"2\" failures=\"1\">"), "{xml}");
        assert!(xml.contains("value=\"consecutive[x=&quot;1&quot;]\""), "{xml}");
        assert!(
            xml.contains("<testcase classname=\"a&lt;b&gt;\" name=\"s: false_opens &lt;= 1\"/>"),
            "{xml}"
        );
        assert!(xml.contains("<failure message=\"broken in 1 of 2 replicates (worst 1)\"/>"), "{xml}");
        let text = outcome.render();
        assert!(text.contains("BROKEN in 1 of 2"), "{text}");
        assert!(text.contains("FAIL: 1 of 2 bounds broken."), "{text}");
    }
}
