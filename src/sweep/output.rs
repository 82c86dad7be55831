//! The files of a sweep's output folder, as bytes (the output folder, `app::output`, writes them): runs.csv
//! (one row per cell), summary.csv (one row per scenario × configuration), pareto.csv, and
//! objective.toml (the objective and constraints, so `recommend` can re-rank a finished sweep).
//! Also reads runs.csv back, so shards run separately can be concatenated and recommended on.
//!
//! Numbers are written in Rust's shortest round-trip form; an empty cell means "no value".
//! Output depends only on the table, never on thread count or timing.

use super::SweepError;
use super::constraint::Constraint;
use super::grid::Configuration;
use super::objective::{BoundObjective, Objective};
use super::pareto::{Staircase, direction};
use super::selection::{Rule, Settings};
use super::store::Scratch;
use super::table::{ConfigInfo, ConfigSource, ResultTable, RunRow, Summary, TableBuilder};
use crate::{Error, Result};
use serde::Deserialize;

/// The identity columns that open every runs.csv row, in order; metrics follow, then `cost`.
pub const RUN_KEYS: [&str; 7] =
    ["scenario", "config_id", "policy", "preset", "overrides", "replicate", "seed"];

/// A number as written to CSV, as every breakerlab CSV writes it (empty when absent or not finite).
fn cell(v: Option<f64>) -> String {
    v.map(crate::report::format_float).unwrap_or_default()
}

/// Writes runs.csv one row at a time to any writer, so a shard streams its rows to the file as
/// they are computed and a merge streams the merged table, holding no file in memory.
pub struct RunsWriter<W: std::io::Write> {
    w: csv::Writer<W>,
    row: Vec<String>,
}

/// A CSV error while streaming `file`: an I/O failure names it, anything else is a formatting
/// failure.
fn write_err(file: &str, e: csv::Error) -> SweepError {
    match e.into_kind() {
        csv::ErrorKind::Io(source) => SweepError::Io { file: file.into(), source },
        other => SweepError::Invalid(format!("could not format CSV: {other:?}")),
    }
}

fn runs_err(e: csv::Error) -> SweepError {
    write_err("runs.csv", e)
}

fn summary_err(e: csv::Error) -> SweepError {
    write_err("summary.csv", e)
}

fn pareto_err(e: csv::Error) -> SweepError {
    write_err("pareto.csv", e)
}

impl<W: std::io::Write> RunsWriter<W> {
    /// Starts runs.csv: [`RUN_KEYS`], every metric, then `cost`.
    pub fn new(out: W, metrics: &[String]) -> Result<RunsWriter<W>, SweepError> {
        let mut w = csv::Writer::from_writer(out);
        let mut header: Vec<&str> = RUN_KEYS.to_vec();
        header.extend(metrics.iter().map(String::as_str));
        header.push("cost");
        w.write_record(&header).map_err(runs_err)?;
        Ok(RunsWriter { w, row: Vec::new() })
    }

    /// One cell's row: its scenario's name, configuration, replicate, seed, metric values and
    /// cost under the sweep's objective.
    pub fn row(
        &mut self,
        scenario: &str,
        info: &ConfigInfo,
        run: &RunRow,
        cost: f64,
    ) -> Result<(), SweepError> {
        let c = &info.config;
        self.row.clear();
        self.row.extend([
            scenario.to_string(),
            c.id.to_string(),
            info.label.clone(),
            c.preset.clone(),
            c.overrides_inline(),
            run.replicate.to_string(),
            run.seed.to_string(),
        ]);
        self.row.extend(run.values.iter().map(cell));
        self.row.push(cell(Some(cost)));
        self.w.write_record(&self.row).map_err(runs_err)
    }

    /// The writer the rows go to, flushed up to the last row written (a shard checkpoints its
    /// journal so).
    pub fn flushed(&mut self) -> Result<&W, SweepError> {
        self.w.flush().map_err(|source| SweepError::Io { file: "runs.csv".into(), source })?;
        Ok(self.w.get_ref())
    }

    /// Flushes and returns the writer.
    pub fn finish(self) -> Result<W, SweepError> {
        self.w.into_inner().map_err(|e| SweepError::Io { file: "runs.csv".into(), source: e.into_error() })
    }
}

/// runs.csv of a whole table, in table order, streamed to `out`.
pub fn write_runs<W: std::io::Write>(
    table: &ResultTable,
    objective: &BoundObjective,
    out: W,
) -> Result<W, SweepError> {
    let mut w = RunsWriter::new(out, &table.metrics)?;
    let mut info: Option<ConfigInfo> = None;
    for r in table.runs() {
        let current = match info.take() {
            Some(i) if table.index_of(i.config.id) == Some(r.config) => i,
            _ => table.config(r.config),
        };
        w.row(&table.scenarios[r.scenario], &current, &r, objective.cost(&r.values))?;
        info = Some(current);
    }
    table.check().map_err(|e| SweepError::Invalid(e.to_string()))?;
    w.finish()
}

/// runs.csv: [`RUN_KEYS`], every metric, then the run's `cost` under `objective`.
pub fn runs_csv(table: &ResultTable, objective: &BoundObjective) -> Result<Vec<u8>, SweepError> {
    write_runs(table, objective, Vec::new())
}

/// A configuration's resolved parameters `(name, value)`, asked for as summary.csv needs them
/// (a sweep resolves each configuration again rather than holding every one's parameters).
pub type ParamsOf<'a> = &'a dyn Fn(&ConfigInfo) -> Vec<(String, String)>;

/// Parameter column names of summary.csv: every resolved parameter of every configuration, in
/// order of first appearance (one configuration's parameters held at a time).
pub fn param_columns(configs: impl Iterator<Item = ConfigInfo>, params: ParamsOf) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for c in configs {
        let resolved = params(&c);
        let names = resolved.iter().map(|(k, _)| k).chain(c.config.overrides.iter().map(|(k, _)| k));
        for k in names {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

/// summary.csv: identity (`scenario,config_id,policy,preset,family,overrides`, where `policy` is
/// the label and `family` the sweep entry's preset), every parameter as `param.<name>`,
/// `replicates`, then for each metric `m`: `m`, `m_sd`, `m_ci95`, the same for `cost`, and
/// `feasible` (the runs meet every constraint, each on the replicates its scope names). One
/// row per (scenario, configuration) that ran.
pub fn summary_csv(
    table: &ResultTable,
    summary: &Summary,
    constraints: &[Constraint],
    params: ParamsOf,
) -> Result<Vec<u8>, SweepError> {
    write_summary(table, summary, constraints, params, Vec::new())
}

/// [`summary_csv`] streamed to `out`, row by row (the file is never held whole).
pub fn write_summary<W: std::io::Write>(
    table: &ResultTable,
    summary: &Summary,
    constraints: &[Constraint],
    params: ParamsOf,
    out: W,
) -> Result<W, SweepError> {
    // The parameters need no label: none is made.
    let columns = param_columns(
        table.configurations().map(|config| ConfigInfo { config, label: String::new() }),
        params,
    );
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<String> = ["scenario", "config_id", "policy", "preset", "family", "overrides"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(columns.iter().map(|p| format!("{}{p}", crate::report::PARAM_PREFIX)));
    header.push("replicates".into());
    for m in table.metrics.iter().map(String::as_str).chain(["cost"]) {
        header.extend([m.to_string(), format!("{m}_sd"), format!("{m}_ci95")]);
    }
    header.push("feasible".into());
    w.write_record(&header).map_err(summary_err)?;
    let mut row: Vec<String> = Vec::with_capacity(header.len());
    // The summary has one cell per group of runs, in the same order.
    for (s, group) in summary.iter().zip(table.groups()) {
        let info = table.config(s.config);
        let c = &info.config;
        let resolved = params(&info);
        row.clear();
        row.extend([
            table.scenarios[s.scenario].clone(),
            c.id.to_string(),
            info.label.clone(),
            c.preset.clone(),
            c.preset.clone(),
            c.overrides_inline(),
        ]);
        for p in &columns {
            let value = resolved.iter().find(|(k, _)| k == p).map(|(_, v)| v.clone());
            let written = c.overrides.iter().find(|(k, _)| k == p).map(|(_, v)| super::grid::plain(v));
            row.push(value.or(written).unwrap_or_default());
        }
        row.push(s.replicates.to_string());
        for st in table.metric_stats(&group).iter().chain([&s.cost]) {
            row.extend([cell(st.mean), cell(st.sd), cell(st.ci95)]);
        }
        row.push(super::recommend::meets_constraints(table, &group, constraints).to_string());
        w.write_record(&row).map_err(summary_err)?;
    }
    table.check().and_then(|()| summary.check()).map_err(|e| SweepError::Invalid(e.to_string()))?;
    w.into_inner().map_err(|e| SweepError::Io { file: "summary.csv".into(), source: e.into_error() })
}

/// One configuration on one Pareto front.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoRow {
    /// The front's metrics joined by ` vs `.
    pub front: String,
    /// A scenario name, or `all` for the means over scenarios.
    pub scenario: String,
    /// Index into the table's configs.
    pub config: usize,
    /// Mean cost on the scenario (for `all`: the total cost, summed over scenarios).
    pub cost: f64,
    /// The front's metric values (for `all`: means over the scenarios where each has a value).
    pub values: Vec<f64>,
}

/// The configurations on each front (metric groups), per scenario and over all scenarios
/// (`all`: configurations with results on every scenario, each metric averaged over the
/// scenarios where it has a value, e.g. detection delay over the scenarios with incidents).
/// Each front is kept as configurations are offered ([`Front`]), so no list of every
/// configuration's point is held.
#[cfg(test)]
pub fn pareto_rows(table: &ResultTable, summary: &Summary, fronts: &[Vec<String>]) -> Vec<ParetoRow> {
    let mut rows = Vec::new();
    let _ = each_pareto_row(table, summary, fronts, &mut |r| {
        rows.push(r);
        Ok(())
    });
    rows
}

/// [`pareto_rows`] handed to `sink` one at a time, in the same order (none held). Two passes
/// per front and scenario: the first gathers the distinct values on the front ([`Staircase`]),
/// the second hands on the configurations whose values lie on it.
fn each_pareto_row(
    table: &ResultTable,
    summary: &Summary,
    fronts: &[Vec<String>],
    sink: &mut dyn FnMut(ParetoRow) -> Result<(), SweepError>,
) -> Result<(), SweepError> {
    for metrics in fronts {
        let Some(cols) = metrics.iter().map(|m| table.column(m)).collect::<Option<Vec<usize>>>() else {
            continue;
        };
        let dirs: Vec<_> = metrics.iter().map(|m| direction(m)).collect();
        let name = metrics.join(" vs ");
        let n_s = table.scenarios.len();
        let mut point: Vec<Option<f64>> = Vec::with_capacity(cols.len());
        // Configuration c's point on scenario s (`n_s`: over all) and its cost there.
        let point_of = |s: usize, c: usize, point: &mut Vec<Option<f64>>| -> f64 {
            point.clear();
            if s == n_s {
                let (values, cost) = overall(summary, n_s, c, &cols);
                point.extend(values);
                cost
            } else {
                let cell = summary.get(s, c);
                point.extend(cols.iter().map(|&m| cell.as_ref().and_then(|x| x.means.get(m))));
                cell.and_then(|x| x.cost.mean).unwrap_or(0.0)
            }
        };
        for s in 0..=n_s {
            let mut front = Staircase::new(&dirs);
            for c in 0..table.n_configs() {
                point_of(s, c, &mut point);
                front.offer(&point);
            }
            for c in 0..table.n_configs() {
                let cost = point_of(s, c, &mut point);
                if !front.on_front(&point) {
                    continue;
                }
                sink(ParetoRow {
                    front: name.clone(),
                    scenario: if s == n_s { "all".into() } else { table.scenarios[s].clone() },
                    config: c,
                    cost,
                    values: point.iter().map(|v| v.unwrap_or(f64::NAN)).collect(),
                })?;
            }
        }
    }
    summary.check().map_err(|e| SweepError::Invalid(e.to_string()))
}

/// Configuration `c` over the `n_s` scenarios: each of metrics `cols` averaged over the
/// scenarios where it has a value (`None` unless it has results on every scenario), and its
/// total cost.
fn overall(summary: &Summary, n_s: usize, c: usize, cols: &[usize]) -> (Vec<Option<f64>>, f64) {
    let mut sums = vec![(0.0, 0usize); cols.len()];
    let (mut cost, mut complete) = (0.0, true);
    for s in 0..n_s {
        let cell = summary.get(s, c);
        for (a, &m) in sums.iter_mut().zip(cols) {
            if let Some(v) = cell.as_ref().and_then(|x| x.means.get(m)) {
                a.0 += v;
                a.1 += 1;
            }
        }
        cost += cell.as_ref().and_then(|x| x.cost.mean).unwrap_or(0.0);
        complete &= cell.is_some();
    }
    (sums.iter().map(|&(sum, n)| (complete && n > 0).then(|| sum / n as f64)).collect(), cost)
}

/// pareto.csv: `front,scenario,config_id,policy,cost,metric_1,value_1,...` (as many metric
/// pairs as the widest front).
#[cfg(test)]
pub fn pareto_csv(
    table: &ResultTable,
    rows: &[ParetoRow],
    fronts: &[Vec<String>],
) -> Result<Vec<u8>, SweepError> {
    let mut w = ParetoWriter::new(Vec::new(), fronts)?;
    for r in rows {
        w.row(table, r)?;
    }
    w.0.into_inner().map_err(|e| SweepError::Invalid(format!("could not format CSV: {e}")))
}

/// [`pareto_csv`] of the fronts of `summary`, computed and streamed to `out` row by row (no
/// row list, no file held whole).
pub fn write_pareto<W: std::io::Write>(
    table: &ResultTable,
    summary: &Summary,
    fronts: &[Vec<String>],
    out: W,
) -> Result<W, SweepError> {
    let mut w = ParetoWriter::new(out, fronts)?;
    each_pareto_row(table, summary, fronts, &mut |r| w.row(table, &r))?;
    w.0.into_inner().map_err(|e| SweepError::Io { file: "pareto.csv".into(), source: e.into_error() })
}

/// Writes pareto.csv's rows: the CSV writer and the number of metric pairs.
struct ParetoWriter<W: std::io::Write>(csv::Writer<W>, usize);

impl<W: std::io::Write> ParetoWriter<W> {
    /// Starts the file with its header.
    fn new(out: W, fronts: &[Vec<String>]) -> Result<ParetoWriter<W>, SweepError> {
        let width = fronts.iter().map(Vec::len).max().unwrap_or(2);
        let mut w = csv::Writer::from_writer(out);
        let mut header: Vec<String> =
            ["front", "scenario", "config_id", "policy", "cost"].iter().map(|s| s.to_string()).collect();
        for i in 1..=width {
            header.extend([format!("metric_{i}"), format!("value_{i}")]);
        }
        w.write_record(&header).map_err(pareto_err)?;
        Ok(ParetoWriter(w, width))
    }

    /// One configuration on one front.
    fn row(&mut self, table: &ResultTable, r: &ParetoRow) -> Result<(), SweepError> {
        let info = table.config(r.config);
        let mut row = vec![
            r.front.clone(),
            r.scenario.clone(),
            info.config.id.to_string(),
            info.label.clone(),
            cell(Some(r.cost)),
        ];
        let names: Vec<&str> = r.front.split(" vs ").collect();
        for i in 0..self.1 {
            row.push(names.get(i).map(|s| s.to_string()).unwrap_or_default());
            row.push(cell(r.values.get(i).copied()));
        }
        self.0.write_record(&row).map_err(pareto_err)
    }
}

/// objective.toml: the objective, constraints and selection settings a sweep used, for
/// `recommend DIR`.
pub fn objective_toml(objective: &Objective, constraints: &[Constraint], settings: &Settings) -> String {
    let mut s = String::from(
        "# Objective, constraints and selection of the sweep that wrote this folder (read by `breakerlab recommend`).\n",
    );
    let texts: Vec<String> =
        constraints.iter().map(|c| toml::Value::String(c.text.clone()).to_string()).collect();
    s.push_str(&format!("constraints = [{}]\n", texts.join(", ")));
    s.push_str(&format!("confidence = {}\n", toml::Value::Float(settings.rule.confidence)));
    s.push_str(&format!("indifference = {}\n", toml::Value::Float(settings.rule.indifference)));
    if let Some(b) = settings.baseline {
        s.push_str(&format!("baseline = {b}\n"));
    }
    if let Some(looks) = settings.auto {
        s.push_str(&format!("auto_looks = {looks}\n"));
    }
    s.push_str("\n[objective]\n");
    for (m, w) in &objective.weights {
        // A pool's score has a dot in its name: quoted, or TOML reads a table.
        let key = if m.name().contains('.') { format!("\"{m}\"") } else { m.name().to_string() };
        s.push_str(&format!("{key} = {}\n", toml::Value::Float(*w)));
    }
    s
}

/// Reads objective.toml (see [`objective_toml`]) against the known metric `columns`; an
/// older file without the selection's keys reads with the defaults.
pub fn read_objective_toml<S: AsRef<str>>(
    text: &str,
    file: &str,
    columns: &[S],
) -> Result<(Objective, Vec<Constraint>, Settings), SweepError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        #[serde(default)]
        constraints: Vec<String>,
        confidence: Option<f64>,
        indifference: Option<f64>,
        baseline: Option<usize>,
        auto_looks: Option<usize>,
        #[serde(default)]
        objective: toml::Table,
    }
    let at = |m: String| SweepError::File { file: file.to_string(), message: m };
    let raw: Raw = toml::from_str(text).map_err(|e| at(e.message().trim().to_string()))?;
    let mut objective = Objective::default();
    for (m, w) in &raw.objective {
        let metric = super::constraint::resolve_metric(m, columns).map_err(|e| at(e.to_string()))?;
        let weight = w.as_float().or(w.as_integer().map(|i| i as f64)).filter(|x| x.is_finite());
        objective.set(metric, weight.ok_or_else(|| at(format!("objective `{m}`: expected a number")))?);
    }
    let constraints = raw
        .constraints
        .iter()
        .map(|c| Constraint::parse(c, columns))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| at(e.to_string()))?;
    let mut rule = Rule::default();
    if let Some(c) = raw.confidence {
        if !(0.5..=0.9999).contains(&c) {
            return Err(at(format!("`confidence` must be between 0.5 and 0.9999, found {c}")));
        }
        rule.confidence = c;
    }
    if let Some(d) = raw.indifference {
        if !(d.is_finite() && d >= 0.0) {
            return Err(at(format!("`indifference` must be 0 or more, found {d}")));
        }
        rule.indifference = d;
    }
    Ok((objective, constraints, Settings { rule, baseline: raw.baseline, auto: raw.auto_looks }))
}

/// Overrides written as a TOML inline table, read back in written order.
fn parse_overrides(text: &str) -> Result<Vec<(String, toml::Value)>> {
    #[derive(Deserialize)]
    struct Doc {
        o: toml::Spanned<Ordered>,
    }
    struct Ordered(Vec<(String, toml::Value)>);
    impl<'de> Deserialize<'de> for Ordered {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
            let map: Vec<(String, toml::Spanned<toml::Value>)> = {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = Vec<(String, toml::Spanned<toml::Value>)>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("an inline table of overrides")
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut m: A,
                    ) -> Result<Self::Value, A::Error> {
                        let mut out = Vec::new();
                        while let Some(k) = m.next_key::<String>()? {
                            out.push((k, m.next_value()?));
                        }
                        Ok(out)
                    }
                }
                d.deserialize_map(V)?
            };
            let mut map = map;
            map.sort_by_key(|(_, v)| v.span().start);
            Ok(Ordered(map.into_iter().map(|(k, v)| (k, v.into_inner())).collect()))
        }
    }
    let doc: Doc = toml::from_str(&format!("o = {text}")).map_err(|e| Error::invalid(e.message().trim()))?;
    Ok(doc.o.into_inner().0)
}

/// One row of a runs.csv as read back.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedRun {
    /// The row's line in the file (1-based, the header is line 1).
    pub line: usize,
    /// Scenario name.
    pub scenario: String,
    /// Configuration id, preset and overrides.
    pub config: Configuration,
    /// The label written (the configuration's own label when the cell is empty).
    pub label: String,
    /// Replicate number.
    pub replicate: u32,
    /// The request stream's seed.
    pub seed: u64,
    /// One value per metric column.
    pub values: Vec<Option<f64>>,
}

/// Reads runs.csv rows one at a time from any reader: a merge reads each shard's file so, never
/// holding a whole file. Errors name the file, the line and the column.
pub struct RunsReader<R: std::io::Read> {
    reader: csv::Reader<R>,
    header: csv::StringRecord,
    metrics: Vec<String>,
    record: csv::StringRecord,
    file: String,
}

impl<R: std::io::Read> RunsReader<R> {
    /// Reads and checks the header.
    pub fn new(input: R, file: &str) -> Result<RunsReader<R>, SweepError> {
        let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(input);
        let at = |m: String| SweepError::At { file: file.to_string(), line: 1, col: 1, message: m };
        let header = reader.headers().map_err(|e| at(e.to_string()))?.clone();
        if header.len() < RUN_KEYS.len() || header.iter().zip(RUN_KEYS).any(|(a, b)| a != b) {
            return Err(at(format!(
                "not a runs.csv: expected the header to start with {}",
                RUN_KEYS.join(",")
            )));
        }
        let metric_end = if header.get(header.len().wrapping_sub(1)) == Some("cost") {
            header.len() - 1
        } else {
            header.len()
        };
        let metrics = header.iter().take(metric_end).skip(RUN_KEYS.len()).map(str::to_string).collect();
        Ok(RunsReader { reader, header, metrics, record: csv::StringRecord::new(), file: file.to_string() })
    }

    /// The metric columns, in order.
    pub fn metrics(&self) -> &[String] {
        &self.metrics
    }

    /// The next row (`None` at the end); a header repeated by concatenated shards is skipped.
    pub fn next_run(&mut self) -> Result<Option<ParsedRun>, SweepError> {
        loop {
            let more = self.reader.read_record(&mut self.record).map_err(|e| {
                let line = e.position().map_or(0, |p| p.line() as usize);
                let message = match e.kind() {
                    csv::ErrorKind::UnequalLengths { len, expected_len, .. } => {
                        format!("expected {expected_len} fields, found {len} (a cut or corrupt row?)")
                    }
                    _ => e.to_string(),
                };
                SweepError::At { file: self.file.clone(), line, col: 1, message }
            })?;
            if !more {
                return Ok(None);
            }
            if self.record != self.header {
                return self.parse().map(Some);
            }
        }
    }

    fn parse(&self) -> Result<ParsedRun, SweepError> {
        let record = &self.record;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let at = |m: String| SweepError::At { file: self.file.clone(), line, col: 1, message: m };
        let field = |k: usize| record.get(k).unwrap_or("");
        let number = |k: usize, name: &str| {
            field(k)
                .parse::<u64>()
                .map_err(|_| at(format!("{name}: expected an integer, found {:?}", field(k))))
        };
        let id = number(1, "config_id")? as usize;
        let replicate = u32::try_from(number(5, "replicate")?)
            .map_err(|_| at(format!("replicate: expected an integer, found {:?}", field(5))))?;
        let seed = number(6, "seed")?;
        let overrides =
            parse_overrides(field(4)).map_err(|e| at(format!("overrides {:?}: {e}", field(4))))?;
        let config = Configuration { id, preset: field(3).to_string(), overrides };
        if config.preset.is_empty() {
            return Err(at("preset: expected a preset name, found an empty cell".into()));
        }
        let label = if field(2).is_empty() { config.label() } else { field(2).to_string() };
        let mut values = Vec::with_capacity(self.metrics.len());
        for (k, name) in self.metrics.iter().enumerate() {
            let raw = field(RUN_KEYS.len() + k).trim();
            values.push(if raw.is_empty() {
                None
            } else {
                Some(
                    raw.parse::<f64>()
                        .map_err(|_| at(format!("{name}: expected a number, found {raw:?}")))?,
                )
            });
        }
        Ok(ParsedRun { line, scenario: field(0).to_string(), config, label, replicate, seed, values })
    }
}

/// Reads a runs.csv (possibly several shards concatenated, headers repeated or not) back into a
/// table. Errors name the row and column.
pub fn read_runs(text: &str, file: &str, scratch: &Scratch) -> Result<ResultTable, SweepError> {
    // First pass: the scenarios, configurations and replicates; second: the values.
    let mut reader = RunsReader::new(text.as_bytes(), file)?;
    let metrics = reader.metrics().to_vec();
    let mut scenarios: Vec<String> = Vec::new();
    let mut configs: Vec<ConfigInfo> = Vec::new();
    let mut by_id: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut replicates = 0u32;
    let mut any = false;
    while let Some(p) = reader.next_run()? {
        any = true;
        let id = p.config.id;
        match by_id.get(&id).map(|&k| &configs[k]) {
            Some(known) if *known.config != p.config || known.label != p.label => {
                return Err(SweepError::At {
                    file: file.to_string(),
                    line: p.line,
                    col: 1,
                    message: format!(
                        "config_id {id} is {:?} here but {:?} earlier: results of different sweeps?",
                        p.label, known.label
                    ),
                });
            }
            Some(_) => {}
            None => {
                by_id.insert(id, configs.len());
                configs.push(ConfigInfo { label: p.label, ..ConfigInfo::new(p.config) });
            }
        }
        if !scenarios.contains(&p.scenario) {
            scenarios.push(p.scenario);
        }
        replicates = replicates.max(p.replicate.saturating_add(1));
    }
    if !any {
        return Err(SweepError::File { file: file.to_string(), message: "no runs in the file".into() });
    }
    drop(by_id);
    configs.sort_by_key(|c| c.config.id);
    let bad = |m: crate::Error| SweepError::File { file: file.to_string(), message: m.to_string() };
    let mut reader = RunsReader::new(text.as_bytes(), file)?;
    let names = scenarios.clone();
    let mut table = TableBuilder::new(scenarios, configs.len(), metrics, replicates, scratch).map_err(bad)?;
    while let Some(p) = reader.next_run()? {
        let scenario = names.iter().position(|x| *x == p.scenario).unwrap_or(0);
        let config = configs.index_of(p.config.id).unwrap_or(0);
        let row = RunRow { scenario, config, replicate: p.replicate, seed: p.seed, values: p.values.into() };
        table.put(&row, p.config.id).map_err(bad)?;
    }
    table.finish(Box::new(configs)).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;
    use crate::sweep::objective::BindToColumns;
    use crate::sweep::table::tests::run;

    fn table() -> ResultTable {
        let configs = vec![
            ConfigInfo {
                label: "consecutive[failure_threshold=3,cooldown=30s]".into(),
                config: std::sync::Arc::new(Configuration {
                    id: 0,
                    preset: "consecutive".into(),
                    overrides: vec![
                        ("failure_threshold".into(), toml::Value::Integer(3)),
                        ("cooldown".into(), toml::Value::String("30s".into())),
                    ],
                }),
            },
            ConfigInfo {
                label: "windowed[window=1m]".into(),
                config: std::sync::Arc::new(Configuration {
                    id: 4,
                    preset: "windowed".into(),
                    overrides: vec![("window".into(), toml::Value::String("1m".into()))],
                }),
            },
        ];
        let runs = vec![
            run(0, 0, 0, &[Some(1.0), Some(12.5)]),
            run(0, 0, 1, &[Some(3.0), None]),
            run(0, 1, 0, &[Some(0.0), Some(40.0)]),
            run(0, 1, 1, &[Some(0.0), Some(20.0)]),
            run(1, 0, 0, &[Some(2.0), Some(5.0)]),
            run(1, 0, 1, &[Some(2.0), Some(5.0)]),
            run(1, 1, 0, &[Some(1.0), Some(60.0)]),
            run(1, 1, 1, &[Some(1.0), Some(50.0)]),
        ];
        ResultTable::new(
            vec!["outage".into(), "blip, short".into()],
            configs,
            vec!["false_opens".into(), "detection_delay_mean_s".into()],
            runs,
        )
        .unwrap()
    }

    fn objective() -> Objective {
        Objective::new([(Metric::FalseOpens, 10.0), (Metric::DetectionDelayMeanS, 1.0)])
    }

    #[test]
    fn runs_csv_round_trips_through_read_runs() {
        let t = table();
        let o = objective().bind(&t.metrics).unwrap();
        let bytes = runs_csv(&t, &o).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next().unwrap(),
            "scenario,config_id,policy,preset,overrides,replicate,seed,false_opens,detection_delay_mean_s,cost"
        );
        assert_eq!(
            lines.next().unwrap(),
            "outage,0,\"consecutive[failure_threshold=3,cooldown=30s]\",consecutive,\"{ failure_threshold = 3, cooldown = \"\"30s\"\" }\",0,1,1,12.5,22.5"
        );
        assert_eq!(
            lines.next().unwrap(),
            "outage,0,\"consecutive[failure_threshold=3,cooldown=30s]\",consecutive,\"{ failure_threshold = 3, cooldown = \"\"30s\"\" }\",1,1,3,,30"
        );
        let back = read_runs(&text, "runs.csv", &Scratch::memory()).unwrap();
        assert_eq!(back.scenarios, t.scenarios);
        assert_eq!(back.metrics, t.metrics);
        assert_eq!(back.runs().collect::<Vec<_>>(), t.runs().collect::<Vec<_>>());
        assert_eq!(
            back.configs().map(|c| c.config).collect::<Vec<_>>(),
            t.configs().map(|c| c.config).collect::<Vec<_>>()
        );
        // Shards concatenated with their headers merge into the same table.
        let mut shards = text.lines();
        let head = shards.next().unwrap();
        let body: Vec<&str> = shards.collect();
        let merged = format!("{head}\n{}\n{head}\n{}\n", body[4..].join("\n"), body[..4].join("\n"));
        let m = read_runs(&merged, "runs.csv", &Scratch::memory()).unwrap();
        assert_eq!(m.n_runs(), 8);
        assert_eq!(m.scenarios, vec!["blip, short".to_string(), "outage".to_string()]);
    }

    #[test]
    fn read_runs_reports_row_and_field() {
        let head = "scenario,config_id,policy,preset,overrides,replicate,seed,false_opens,cost\n";
        for (body, expected) in [
            ("s,x,consecutive,consecutive,{},0,1,1,10\n", "runs.csv:2:1: config_id: expected an integer"),
            ("s,0,consecutive,consecutive,{},0,1,many,10\n", "runs.csv:2:1: false_opens: expected a number"),
            ("s,0,x,,{},0,1,1,10\n", "preset: expected a preset name"),
            ("s,0,x,consecutive,{ a = },0,1,1,10\n", "runs.csv:2:1: overrides"),
            (
                "s,0,consecutive,consecutive,{},0,1,1,10\ns,0,windowed,windowed,{},1,1,1,10\n",
                "runs.csv:3:1: config_id 0 is",
            ),
            (
                "s,0,consecutive,consecutive,{},0,1,1,10\ns,0,consecutive,consecutive,{},0,1,1,10\n",
                "appears twice",
            ),
            ("", "no runs"),
        ] {
            let e =
                read_runs(&format!("{head}{body}"), "runs.csv", &Scratch::memory()).unwrap_err().to_string();
            assert!(e.contains(expected), "{expected:?} in {e}");
        }
        assert!(
            read_runs("a,b\n1,2\n", "runs.csv", &Scratch::memory())
                .unwrap_err()
                .to_string()
                .contains("not a runs.csv")
        );
    }

    #[test]
    fn summary_csv_has_params_and_statistics() {
        let t = table();
        let s = t.summarize(&objective().bind(&t.metrics).unwrap()).unwrap();
        let at_most_one = Constraint::parse("false_opens <= 1", &t.metrics).unwrap();
        // As if resolved: the overrides, and a default the first configuration's preset adds.
        let params = |i: &ConfigInfo| {
            let mut p: Vec<(String, String)> =
                i.config.overrides.iter().map(|(k, v)| (k.clone(), super::super::grid::plain(v))).collect();
            if i.config.id == 0 {
                p.push(("half_open_probes".into(), "1".into()));
            }
            p
        };
        let text = String::from_utf8(summary_csv(&t, &s, &[at_most_one], &params).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "scenario,config_id,policy,preset,family,overrides,param.failure_threshold,param.cooldown,param.half_open_probes,param.window,replicates,false_opens,false_opens_sd,false_opens_ci95,detection_delay_mean_s,detection_delay_mean_s_sd,detection_delay_mean_s_ci95,cost,cost_sd,cost_ci95,feasible"
        );
        assert!(
            lines[1].starts_with(
                "outage,0,\"consecutive[failure_threshold=3,cooldown=30s]\",consecutive,consecutive,"
            ),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].ends_with(
                ",3,30s,1,,2,2,1.4142135623730951,12.706204736,12.5,,,26.25,5.303300858899107,47.64826776,false"
            ),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 5);
        assert!(
            lines[4].starts_with(
                "\"blip, short\",4,windowed[window=1m],windowed,windowed,\"{ window = \"\"1m\"\" }\",,,,1m,2,1,0,0,55,"
            ),
            "{}",
            lines[4]
        );
    }

    #[test]
    fn pareto_rows_per_scenario_and_overall() {
        let t = table();
        let s = t.summarize(&objective().bind(&t.metrics).unwrap()).unwrap();
        let fronts = vec![vec!["detection_delay_mean_s".to_string(), "false_opens".to_string()]];
        let rows = pareto_rows(&t, &s, &fronts);
        let brief: Vec<(String, usize)> = rows.iter().map(|r| (r.scenario.clone(), r.config)).collect();
        // outage: (12.5, 2) vs (30, 0): both on the front; blip: (5, 2) vs (55, 1): both;
        // all: (8.75, 2) vs (42.5, 0.5): both.
        assert_eq!(
            brief,
            vec![
                ("outage".into(), 0),
                ("outage".into(), 1),
                ("blip, short".into(), 0),
                ("blip, short".into(), 1),
                ("all".into(), 0),
                ("all".into(), 1)
            ]
        );
        assert_eq!(rows[4].values, vec![8.75, 2.0]);
        // A metric empty on one scenario is averaged over the others.
        let runs = t
            .runs()
            .map(|mut r| {
                if r.scenario == 1 {
                    r.values = [r.values.get(0), None].into_iter().chain(r.values.iter().skip(2)).collect();
                }
                r
            })
            .collect();
        let t2 =
            ResultTable::new(t.scenarios.clone(), t.configs().collect(), t.metrics.clone(), runs).unwrap();
        let s2 = t2.summarize(&objective().bind(&t2.metrics).unwrap()).unwrap();
        let all: Vec<(usize, Vec<f64>)> = pareto_rows(&t2, &s2, &fronts)
            .into_iter()
            .filter(|r| r.scenario == "all")
            .map(|r| (r.config, r.values))
            .collect();
        assert_eq!(all, vec![(0, vec![12.5, 2.0]), (1, vec![30.0, 0.5])]);
        assert_eq!(rows[4].cost, 26.25 + 25.0);
        let text = String::from_utf8(pareto_csv(&t, &rows, &fronts).unwrap()).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            "front,scenario,config_id,policy,cost,metric_1,value_1,metric_2,value_2"
        );
        assert_eq!(
            text.lines().nth(6).unwrap(),
            "detection_delay_mean_s vs false_opens,all,4,windowed[window=1m],95,detection_delay_mean_s,42.5,false_opens,0.5"
        );
    }

    #[test]
    fn objective_file_round_trips() {
        let cols = ["false_opens", "detection_delay_mean_s", "latency_p99_ms"];
        let c = vec![Constraint::parse("p99_latency <= \"2s\"", &cols).unwrap()];
        let settings =
            Settings { rule: Rule { confidence: 0.9, indifference: 2.5 }, baseline: Some(7), auto: Some(3) };
        let text = objective_toml(&objective(), &c, &settings);
        let (o, back, read) = read_objective_toml(&text, "objective.toml", &cols).unwrap();
        assert_eq!(o.weight(Metric::FalseOpens), 10.0);
        assert_eq!(o.weight(Metric::DetectionDelayMeanS), 1.0);
        assert_eq!((back, read), (c, settings));
        // A file from before the selection's keys reads with the defaults.
        let (_, _, old) =
            read_objective_toml("constraints = []\n[objective]\nfalse_opens = 1\n", "objective.toml", &cols)
                .unwrap();
        assert_eq!(old, Settings::default());
        let bad = read_objective_toml("confidence = 2\n", "objective.toml", &cols).unwrap_err().to_string();
        assert!(bad.contains("`confidence` must be between"), "{bad}");
    }
}
