//! The results of a sweep as a table of metric values: one row per cell (scenario ×
//! configuration × replicate), one column per metric. Everything downstream (summary.csv,
//! Pareto fronts, recommendation, `compare`) reads this table only, so it is the same whether
//! the cells were just run or read back from a (possibly merged) runs.csv.

use super::grid::Configuration;
use super::objective::BoundObjective;
use super::stats::{Stat, describe};
use super::store::{Records, Scratch};
use crate::{Error, Result};
use std::sync::Arc;

/// Metric values packed 8 bytes each (a value's bits, or a NaN tag for "no value") instead of
/// 16 for an `Option<f64>`: a sweep holds one per cell and one per (scenario, configuration).
/// Shared, not copied, when cloned: a one-replicate summary holds its run's values.
#[derive(Clone, PartialEq, Eq)]
pub struct Values(Arc<[u64]>);

/// The tag of "no value": a NaN no arithmetic produces.
const NO_VALUE: u64 = 0x7ff8_dead_beef_0001;

impl Values {
    /// Value `i` (`None`: no value, or `i` out of range).
    pub fn get(&self, i: usize) -> Option<f64> {
        self.0.get(i).filter(|b| **b != NO_VALUE).map(|b| f64::from_bits(*b))
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every value in order.
    pub fn iter(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The values unpacked.
    pub fn to_vec(&self) -> Vec<Option<f64>> {
        self.iter().collect()
    }
}

impl FromIterator<Option<f64>> for Values {
    fn from_iter<I: IntoIterator<Item = Option<f64>>>(values: I) -> Values {
        Values(values.into_iter().map(|v| v.map_or(NO_VALUE, f64::to_bits)).collect())
    }
}

impl From<Vec<Option<f64>>> for Values {
    fn from(values: Vec<Option<f64>>) -> Values {
        values.into_iter().collect()
    }
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A configuration as results carry it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigInfo {
    /// Identity, preset and overrides (its `id` is the grid position written to the CSVs).
    pub config: Arc<Configuration>,
    /// The label shown in tables (the resolved policy's label when run, else the written one).
    /// Its resolved parameters are not kept: summary.csv asks for them row by row.
    pub label: String,
}

/// The configurations of a table, by position: a list, or a grid that makes each one again
/// when asked (a sweep holds no list of its configurations).
pub trait ConfigSource: Send + Sync {
    /// How many.
    fn len(&self) -> usize;
    /// Configuration `i` (in range) with its label.
    fn info(&self, i: usize) -> ConfigInfo;
    /// The position of the configuration of id `id`.
    fn index_of(&self, id: usize) -> Option<usize>;
    /// Configuration `i` (in range) without its label, which may cost more to make.
    fn config(&self, i: usize) -> Arc<Configuration> {
        self.info(i).config
    }
}

/// A list sorted by id.
impl ConfigSource for Vec<ConfigInfo> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn info(&self, i: usize) -> ConfigInfo {
        self[i].clone()
    }

    fn index_of(&self, id: usize) -> Option<usize> {
        self.binary_search_by_key(&id, |c| c.config.id).ok()
    }
}

/// One cell's metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Index into [`ResultTable::scenarios`].
    pub scenario: usize,
    /// Index into the table's configurations.
    pub config: usize,
    /// Replicate number, from 0.
    pub replicate: u32,
    /// The seed the replicate's request stream was built from.
    pub seed: u64,
    /// One value per metric column (`None`: the metric has no value in this run).
    pub values: Values,
}

/// Metric values of every cell, kept in (scenario, configuration, replicate) order as
/// fixed-width records ([`Records`]: in a scratch file when large), read back in passes.
pub struct ResultTable {
    /// Scenario names, in sweep order.
    pub scenarios: Vec<String>,
    /// Metric column names (without `cost`, which depends on the objective).
    pub metrics: Vec<String>,
    configs: Box<dyn ConfigSource>,
    /// How many configurations the slots are laid out for.
    n_configs: usize,
    /// Replicate slots per (scenario, configuration): one more than the highest replicate.
    replicates: u32,
    /// One record per slot: `1 + replicate` (0: no run), seed, then the metric values.
    runs: Records,
    /// How many runs are present.
    count: usize,
    /// Where the summary's records go.
    scratch: Scratch,
}

impl std::fmt::Debug for ResultTable {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.debug_struct("ResultTable")
            .field("scenarios", &self.scenarios)
            .field("configs", &self.configs.len())
            .field("metrics", &self.metrics.len())
            .field("runs", &self.count)
            .finish()
    }
}

/// Fills a [`ResultTable`] one run at a time, in any order; its configurations are given at
/// the end (a merge learns them from the rows).
pub struct TableBuilder {
    table: ResultTable,
    n_configs: usize,
    /// One bit per slot: filled already.
    seen: Vec<u64>,
    record: Vec<u64>,
}

impl TableBuilder {
    /// An empty table of `replicates` slots per (scenario, configuration), its records in
    /// `scratch`.
    pub fn new(
        scenarios: Vec<String>,
        n_configs: usize,
        metrics: Vec<String>,
        replicates: u32,
        scratch: &Scratch,
    ) -> Result<TableBuilder> {
        let slots = scenarios.len().saturating_mul(n_configs).saturating_mul(replicates as usize);
        if slots as u64 > super::runner::MAX_CELLS {
            return Err(Error::invalid(format!(
                "{} scenario(s) x {n_configs} configuration(s) x {replicates} replicate(s) is more than the {} cells one table may hold",
                scenarios.len(),
                super::runner::MAX_CELLS
            )));
        }
        let runs = Records::new(2 + metrics.len(), slots, 1, scratch);
        let record = Vec::with_capacity(runs.width());
        let table = ResultTable {
            scenarios,
            metrics,
            configs: Box::new(Vec::<ConfigInfo>::new()),
            n_configs,
            replicates,
            runs,
            count: 0,
            scratch: scratch.clone(),
        };
        Ok(TableBuilder { table, n_configs, seen: vec![0; slots.div_ceil(64)], record })
    }

    /// Adds one run (of the configuration of id `id`, for messages): indices in range, one
    /// value per metric, its cell not seen before.
    pub fn put(&mut self, r: &RunRow, id: usize) -> Result<()> {
        let t = &mut self.table;
        if r.scenario >= t.scenarios.len() || r.config >= self.n_configs || r.replicate >= t.replicates {
            return Err(Error::invalid(format!(
                "a run refers to scenario {} / configuration {} / replicate {} which do not exist",
                r.scenario, r.config, r.replicate
            )));
        }
        if r.values.len() != t.metrics.len() {
            return Err(Error::invalid(format!(
                "a run has {} values for {} metrics",
                r.values.len(),
                t.metrics.len()
            )));
        }
        let slot = (r.scenario * self.n_configs + r.config) * t.replicates as usize + r.replicate as usize;
        let (word, mask) = (slot / 64, 1u64 << (slot % 64));
        if self.seen[word] & mask != 0 {
            return Err(Error::invalid(format!(
                "the cell (scenario {}, configuration {}, replicate {}) appears twice",
                t.scenarios[r.scenario], id, r.replicate
            )));
        }
        self.seen[word] |= mask;
        self.record.clear();
        self.record.extend([u64::from(r.replicate) + 1, r.seed]);
        self.record.extend_from_slice(&r.values.0);
        t.runs.put(slot, &self.record).map_err(scratch_error)?;
        t.count += 1;
        Ok(())
    }

    /// The table filled so far, without its configurations (their labels come with
    /// [`TableBuilder::finish`]): its runs, groups and columns, for a sweep that decides what to
    /// run next from what it ran (`replicates = "auto"`).
    pub fn table(&self) -> &ResultTable {
        &self.table
    }

    /// The table of configurations `configs` (as many as announced).
    pub fn finish(mut self, configs: Box<dyn ConfigSource>) -> Result<ResultTable> {
        if configs.len() != self.n_configs {
            return Err(Error::Internal(format!(
                "{} configurations for a table of {}",
                configs.len(),
                self.n_configs
            )));
        }
        self.table.configs = configs;
        Ok(self.table)
    }
}

/// A scratch file's I/O error (its message names the file's folder).
fn scratch_error(e: std::io::Error) -> Error {
    Error::Internal(format!("cannot hold the results in {e}"))
}

/// Aggregates over replicates of one (scenario, configuration).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryCell {
    /// Index into the table's scenarios.
    pub scenario: usize,
    /// Index into the table's configs.
    pub config: usize,
    /// How many replicates ran.
    pub replicates: usize,
    /// The mean over replicates of each metric column (`None`: no run has a value). The
    /// spreads are not kept: summary.csv computes them again as it writes the row
    /// ([`ResultTable::metric_stats`]).
    pub means: Values,
    /// Statistic of the per-run cost.
    pub cost: Stat,
    /// Per objective term (in objective order): weight × mean over runs of the metric (an empty
    /// value counts 0), so the terms add up to the mean cost.
    pub contributions: Vec<f64>,
}

/// Every (scenario, configuration) that has runs, scenario-major, as records
/// (`replicates` (0: no runs), cost n, mean, sd, ci95, the means, the contributions).
pub struct Summary {
    /// Number of configurations in the table (row stride).
    pub n_configs: usize,
    n_metrics: usize,
    cells: Records,
}

impl std::fmt::Debug for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Summary {{ n_configs: {}, cells: {:?} }}", self.n_configs, self.cells)
    }
}

/// An optional value as one word.
fn pack(v: Option<f64>) -> u64 {
    v.map_or(NO_VALUE, f64::to_bits)
}

fn unpack(b: u64) -> Option<f64> {
    (b != NO_VALUE).then(|| f64::from_bits(b))
}

impl Summary {
    /// The aggregate of one (scenario, configuration), if it ran.
    pub fn get(&self, scenario: usize, config: usize) -> Option<SummaryCell> {
        let i = scenario * self.n_configs + config;
        if config >= self.n_configs || i >= self.cells.len() {
            return None;
        }
        let mut w = vec![0u64; self.cells.width()];
        self.cells.get(i, &mut w);
        if w[0] == 0 {
            return None;
        }
        let m = self.n_metrics;
        Some(SummaryCell {
            scenario,
            config,
            replicates: w[0] as usize,
            cost: Stat { n: w[1] as usize, mean: unpack(w[2]), sd: unpack(w[3]), ci95: unpack(w[4]) },
            means: Values(w[5..5 + m].into()),
            contributions: w[5 + m..].iter().map(|b| f64::from_bits(*b)).collect(),
        })
    }

    /// Every aggregate, scenario-major then configuration.
    pub fn iter(&self) -> impl Iterator<Item = SummaryCell> + '_ {
        let n = self.n_configs.max(1);
        (0..self.cells.len()).filter_map(move |i| self.get(i / n, i % n))
    }

    /// The first I/O error met reading the summary back, if any.
    pub fn check(&self) -> Result<()> {
        self.cells.check().map_err(scratch_error)
    }
}

impl ConfigInfo {
    /// A configuration labelled from its preset and overrides, with no resolved parameters.
    pub fn new(config: Configuration) -> ConfigInfo {
        ConfigInfo { label: config.label(), config: Arc::new(config) }
    }
}

impl ResultTable {
    /// A table held in memory: indices in range, one value per metric, no cell twice.
    pub fn new(
        scenarios: Vec<String>,
        configs: Vec<ConfigInfo>,
        metrics: Vec<String>,
        runs: Vec<RunRow>,
    ) -> Result<ResultTable> {
        let replicates = runs.iter().map(|r| r.replicate.saturating_add(1)).max().unwrap_or(0);
        let mut b = TableBuilder::new(scenarios, configs.len(), metrics, replicates, &Scratch::memory())?;
        for r in &runs {
            let id = configs.get(r.config).map_or(r.config, |c| c.config.id);
            b.put(r, id)?;
        }
        b.finish(Box::new(configs))
    }

    /// The first record of (scenario, configuration).
    fn slot(&self, scenario: usize, config: usize) -> usize {
        (scenario * self.n_configs + config) * self.replicates as usize
    }

    /// How many configurations.
    pub fn n_configs(&self) -> usize {
        self.n_configs
    }

    /// Configuration `i` (a position, in range) with its label.
    pub fn config(&self, i: usize) -> ConfigInfo {
        self.configs.info(i)
    }

    /// Every configuration, in order, made one at a time.
    pub fn configs(&self) -> impl Iterator<Item = ConfigInfo> + '_ {
        (0..self.configs.len()).map(|i| self.configs.info(i))
    }

    /// Configuration `i` (a position, in range) without its label.
    pub fn configuration(&self, i: usize) -> Arc<Configuration> {
        self.configs.config(i)
    }

    /// Every configuration without its label, in order, made one at a time.
    pub fn configurations(&self) -> impl Iterator<Item = Arc<Configuration>> + '_ {
        (0..self.configs.len()).map(|i| self.configs.config(i))
    }

    /// The position of the configuration of id `id`.
    pub fn index_of(&self, id: usize) -> Option<usize> {
        self.configs.index_of(id)
    }

    /// How many runs.
    pub fn n_runs(&self) -> usize {
        self.count
    }

    /// One more than the highest replicate.
    pub fn replicates(&self) -> u32 {
        self.replicates
    }

    /// Index of a metric column.
    pub fn column(&self, metric: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == metric)
    }

    /// The runs of one (scenario, configuration), by replicate.
    pub fn group(&self, scenario: usize, config: usize) -> Vec<RunRow> {
        let mut w = vec![0u64; self.runs.width()];
        let first = self.slot(scenario, config);
        (0..self.replicates as usize)
            .filter_map(|r| {
                self.runs.get(first + r, &mut w);
                (w[0] != 0).then(|| RunRow {
                    scenario,
                    config,
                    replicate: (w[0] - 1) as u32,
                    seed: w[1],
                    values: Values(w[2..].into()),
                })
            })
            .collect()
    }

    /// The runs of each (scenario, configuration) that has some, in table order.
    pub fn groups(&self) -> impl Iterator<Item = Vec<RunRow>> + '_ {
        let n = self.n_configs;
        (0..self.scenarios.len() * n).map(move |i| self.group(i / n, i % n)).filter(|g| !g.is_empty())
    }

    /// Every run, in table order.
    pub fn runs(&self) -> impl Iterator<Item = RunRow> + '_ {
        self.groups().flatten()
    }

    /// The first I/O error met reading the runs back, if any.
    pub fn check(&self) -> Result<()> {
        self.runs.check().map_err(scratch_error)
    }

    /// Mean, sd and CI95 over the runs of `group` (one (scenario, configuration)) of every metric.
    pub fn metric_stats(&self, group: &[RunRow]) -> Vec<Stat> {
        (0..self.metrics.len()).map(|m| describe(group.iter().map(|r| r.values.get(m)))).collect()
    }

    /// Means over replicates of every metric, and mean, sd and CI95 of the cost, per (scenario,
    /// configuration). Sequential, in table order.
    pub fn summarize(&self, objective: &BoundObjective) -> Result<Summary> {
        let n_configs = self.n_configs;
        let width = 5 + self.metrics.len() + objective.terms().len();
        let mut cells =
            Records::new(width, self.scenarios.len() * n_configs, self.scenarios.len(), &self.scratch);
        let mut w: Vec<u64> = Vec::with_capacity(width);
        for group in self.groups() {
            let (s, c) = (group[0].scenario, group[0].config);
            let cost = describe(group.iter().map(|r| Some(objective.cost(&r.values))));
            w.clear();
            w.extend([group.len() as u64, cost.n as u64, pack(cost.mean), pack(cost.sd), pack(cost.ci95)]);
            w.extend(
                (0..self.metrics.len()).map(|m| pack(describe(group.iter().map(|r| r.values.get(m))).mean)),
            );
            w.extend(objective.terms().iter().map(|&(m, wt)| {
                let mut sum = 0.0;
                for r in &group {
                    sum += r.values.get(m).unwrap_or(0.0);
                }
                (wt * sum / group.len() as f64).to_bits()
            }));
            cells.put(s * n_configs + c, &w).map_err(scratch_error)?;
        }
        self.check()?;
        Ok(Summary { n_configs, n_metrics: self.metrics.len(), cells })
    }

    /// The values of `metric` per replicate for one (scenario, configuration), indexed by
    /// replicate number up to `replicates` (`None` where the run is missing or has no value).
    pub fn replicate_values(
        &self,
        scenario: usize,
        config: usize,
        metric: usize,
        replicates: u32,
    ) -> Vec<Option<f64>> {
        let mut out = vec![None; replicates as usize];
        for r in self.group(scenario, config) {
            if let Some(slot) = out.get_mut(r.replicate as usize) {
                *slot = r.values.get(metric);
            }
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metrics::Metric;
    use crate::sweep::objective::BindToColumns;
    use crate::sweep::objective::Objective;

    /// A configuration of `preset` with one integer override `k = v`.
    pub(crate) fn cfg(id: usize, preset: &str, k: &str, v: i64) -> ConfigInfo {
        let overrides = vec![(k.into(), toml::Value::Integer(v))];
        let config = Configuration { id, preset: preset.into(), overrides };
        ConfigInfo::new(config)
    }

    pub(crate) fn run(scenario: usize, config: usize, replicate: u32, values: &[Option<f64>]) -> RunRow {
        RunRow { scenario, config, replicate, seed: 1, values: values.iter().copied().collect() }
    }

    /// One scenario, two configurations, columns false_opens and detection_delay_mean_s.
    fn two_configs(runs: Vec<RunRow>) -> ResultTable {
        ResultTable::new(
            vec!["outage".into()],
            vec![
                cfg(0, "consecutive", "failure_threshold", 3),
                cfg(1, "consecutive", "failure_threshold", 5),
            ],
            vec!["false_opens".into(), "detection_delay_mean_s".into()],
            runs,
        )
        .unwrap()
    }

    #[test]
    fn summary_aggregates_replicates_and_costs() {
        let t = two_configs(vec![
            run(0, 1, 1, &[Some(0.0), Some(30.0)]),
            run(0, 0, 0, &[Some(2.0), Some(10.0)]),
            run(0, 0, 1, &[Some(4.0), None]),
            run(0, 1, 0, &[Some(0.0), Some(20.0)]),
        ]);
        assert_eq!(t.runs().next().unwrap().config, 0);
        let o = Objective::new([(Metric::FalseOpens, 10.0), (Metric::DetectionDelayMeanS, 1.0)])
            .bind(&t.metrics)
            .unwrap();
        let s = t.summarize(&o).unwrap();
        let a = s.get(0, 0).unwrap();
        assert_eq!(a.replicates, 2);
        assert_eq!(a.means.to_vec(), vec![Some(3.0), Some(10.0)]);
        let stats: Vec<Vec<Stat>> = t.groups().map(|g| t.metric_stats(&g)).collect();
        assert_eq!(stats[0][1].n, 1);
        assert_eq!(a.cost.mean, Some(35.0)); // (30 + 40) / 2
        assert_eq!(a.contributions, vec![30.0, 5.0]);
        let b = s.get(0, 1).unwrap();
        assert_eq!(b.cost.mean, Some(25.0));
        assert_eq!(stats[1][0].sd, Some(0.0));
        assert_eq!(s.iter().count(), 2);
        assert_eq!(t.replicate_values(0, 1, 1, 3), vec![Some(20.0), Some(30.0), None]);
    }

    #[test]
    fn a_one_replicate_mean_is_its_value_but_for_the_sign_of_zero() {
        // -0.0 + 0.0 is 0.0: that mean differs from its run bit for bit.
        let t = two_configs(vec![run(0, 0, 0, &[Some(2.0), None]), run(0, 1, 0, &[Some(-0.0), Some(1.0)])]);
        let s = t.summarize(&Objective::new([(Metric::FalseOpens, 1.0)]).bind(&t.metrics).unwrap()).unwrap();
        let (a, b) = (s.get(0, 0).unwrap(), s.get(0, 1).unwrap());
        assert_eq!(a.means.to_vec(), vec![Some(2.0), None]);
        assert_eq!(b.means.get(0).map(f64::to_bits), Some(0.0f64.to_bits()));
        assert_eq!((a.replicates, b.cost.n, s.get(1, 0), s.get(0, 2)), (1, 1, None, None));
    }

    #[test]
    fn a_spilled_table_and_summary_read_back_as_held_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch { dir: Some(dir.path().to_path_buf()), threshold: 0 };
        let configs: Vec<ConfigInfo> =
            (0..300).map(|i| cfg(i, "consecutive", "failure_threshold", i as i64)).collect();
        let runs: Vec<RunRow> = (0..3)
            .flat_map(|s| (0..300).flat_map(move |c| (0..2).map(move |r| (s, c, r))))
            .filter(|(s, c, r)| !(s + c + *r as usize).is_multiple_of(7))
            .map(|(s, c, r)| run(s, c, r, &[Some((s * c) as f64), (r == 1).then_some(c as f64 / 3.0)]))
            .collect();
        let metrics = vec!["false_opens".to_string(), "detection_delay_mean_s".to_string()];
        let names = vec!["a".to_string(), "b".into(), "c".into()];
        let held = ResultTable::new(names.clone(), configs.clone(), metrics.clone(), runs.clone()).unwrap();
        let mut b = TableBuilder::new(names, 300, metrics, 2, &scratch).unwrap();
        for r in runs.iter().rev() {
            b.put(r, r.config).unwrap();
        }
        let spilled = b.finish(Box::new(configs)).unwrap();
        assert!(format!("{:?}", spilled.runs).contains("spilled: true"));
        assert_eq!(spilled.runs().collect::<Vec<_>>(), runs);
        assert_eq!(held.runs().collect::<Vec<_>>(), runs);
        let o = Objective::new([(Metric::FalseOpens, 2.0)]).bind(&held.metrics).unwrap();
        let (sh, ss) = (held.summarize(&o).unwrap(), spilled.summarize(&o).unwrap());
        assert!(format!("{ss:?}").contains("spilled: true"));
        assert_eq!(sh.iter().collect::<Vec<_>>(), ss.iter().collect::<Vec<_>>());
        // Read across scenarios, configuration by configuration, as the ranking does.
        for c in 0..300 {
            for s in 0..3 {
                assert_eq!(sh.get(s, c), ss.get(s, c));
            }
        }
        ss.check().unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_cell_holds_8_bytes_a_metric_and_keeps_every_value() {
        let n = crate::sweep::runner::metric_columns().len();
        let values: Values = (0..n).map(|i| (i % 3 != 0).then_some(i as f64 - 1.5)).collect();
        let row = RunRow { scenario: 0, config: 0, replicate: 0, seed: 1, values };
        // The row itself and its values' heap block: 48 + 8 per metric (it was 48 + 16 per metric).
        assert!(std::mem::size_of::<RunRow>() <= 48, "{}", std::mem::size_of::<RunRow>());
        assert_eq!(std::mem::size_of_val(&*row.values.0), 8 * n);
        assert_eq!(row.values.get(0), None);
        assert_eq!(row.values.get(1), Some(-0.5));
        assert_eq!(row.values.get(n), None);
        let odd: Values = vec![Some(f64::NAN), Some(-0.0), None].into();
        assert!(odd.get(0).unwrap().is_nan());
        assert!(odd.get(1).unwrap().is_sign_negative());
        assert_eq!((odd.get(2), odd.len()), (None, 3));
    }

    #[test]
    fn bad_tables_are_refused() {
        let c = vec![cfg(0, "consecutive", "failure_threshold", 3)];
        let m = vec!["false_opens".to_string()];
        let dup = ResultTable::new(
            vec!["s".into()],
            c.clone(),
            m.clone(),
            vec![run(0, 0, 0, &[None]), run(0, 0, 0, &[None])],
        );
        assert!(dup.unwrap_err().to_string().contains("appears twice"));
        let out = ResultTable::new(vec!["s".into()], c.clone(), m.clone(), vec![run(1, 0, 0, &[None])]);
        assert!(out.unwrap_err().to_string().contains("do not exist"));
        let width = ResultTable::new(vec!["s".into()], c, m, vec![run(0, 0, 0, &[None, None])]);
        assert!(width.unwrap_err().to_string().contains("2 values for 1 metrics"));
    }
}
