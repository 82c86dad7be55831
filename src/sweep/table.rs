//! The results of a sweep as a table of metric values: one row per cell (scenario ×
//! configuration × replicate), one column per metric. Everything downstream (summary.csv,
//! Pareto fronts, recommendation, `compare`) reads this table only, so it is the same whether
//! the cells were just run or read back from a (possibly merged) runs.csv.

use super::grid::Configuration;
use super::objective::BoundObjective;
use super::stats::{Stat, describe};
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
    /// Identity, preset and overrides (its `id` is the grid position written to the CSVs),
    /// shared with the recommendation's ranking rather than copied.
    pub config: Arc<Configuration>,
    /// The label shown in tables (the resolved policy's label when run, else the written one).
    /// Its resolved parameters are not kept: summary.csv asks for them row by row.
    pub label: String,
}

/// One cell's metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Index into [`ResultTable::scenarios`].
    pub scenario: usize,
    /// Index into [`ResultTable::configs`].
    pub config: usize,
    /// Replicate number, from 0.
    pub replicate: u32,
    /// The seed the replicate's request stream was built from.
    pub seed: u64,
    /// One value per metric column (`None`: the metric has no value in this run).
    pub values: Values,
}

/// Metric values of every cell, sorted by (scenario, configuration, replicate).
#[derive(Clone, Debug, PartialEq)]
pub struct ResultTable {
    /// Scenario names, in sweep order.
    pub scenarios: Vec<String>,
    /// Configurations, in grid order.
    pub configs: Vec<ConfigInfo>,
    /// Metric column names (without `cost`, which depends on the objective).
    pub metrics: Vec<String>,
    /// The cells.
    pub runs: Vec<RunRow>,
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
    /// ([`ResultTable::metric_stats`]), so a sweep holds 16 bytes a metric, not 56.
    pub means: Values,
    /// Statistic of the per-run cost.
    pub cost: Stat,
    /// Per objective term (in objective order): weight × mean over runs of the metric (an empty
    /// value counts 0), so the terms add up to the mean cost.
    pub contributions: Vec<f64>,
}

/// Every (scenario, configuration) that has runs, scenario-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Number of configurations in the table (row stride).
    pub n_configs: usize,
    /// Cells indexed `scenario * n_configs + config` (`None`: no runs).
    pub cells: Vec<Option<SummaryCell>>,
}

impl Summary {
    /// The aggregate of one (scenario, configuration), if it ran.
    pub fn get(&self, scenario: usize, config: usize) -> Option<&SummaryCell> {
        self.cells.get(scenario * self.n_configs + config).and_then(Option::as_ref)
    }

    /// Every aggregate, scenario-major then configuration.
    pub fn iter(&self) -> impl Iterator<Item = &SummaryCell> {
        self.cells.iter().flatten()
    }
}

impl ConfigInfo {
    /// A configuration labelled from its preset and overrides, with no resolved parameters.
    pub fn new(config: Configuration) -> ConfigInfo {
        ConfigInfo { label: config.label(), config: Arc::new(config) }
    }
}

impl ResultTable {
    /// Checks and sorts a table: indices in range, one value per metric, no cell twice.
    pub fn new(
        scenarios: Vec<String>,
        configs: Vec<ConfigInfo>,
        metrics: Vec<String>,
        mut runs: Vec<RunRow>,
    ) -> Result<ResultTable> {
        for r in &runs {
            if r.scenario >= scenarios.len() || r.config >= configs.len() {
                return Err(Error::invalid(format!(
                    "a run refers to scenario {} / configuration {} which do not exist",
                    r.scenario, r.config
                )));
            }
            if r.values.len() != metrics.len() {
                return Err(Error::invalid(format!(
                    "a run has {} values for {} metrics",
                    r.values.len(),
                    metrics.len()
                )));
            }
        }
        runs.sort_by_key(|r| (r.scenario, r.config, r.replicate));
        if let Some(w) = runs.windows(2).find(|w| {
            (w[0].scenario, w[0].config, w[0].replicate) == (w[1].scenario, w[1].config, w[1].replicate)
        }) {
            return Err(Error::invalid(format!(
                "the cell (scenario {}, configuration {}, replicate {}) appears twice",
                scenarios[w[0].scenario], configs[w[0].config].config.id, w[0].replicate
            )));
        }
        Ok(ResultTable { scenarios, configs, metrics, runs })
    }

    /// Index of a metric column.
    pub fn column(&self, metric: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m == metric)
    }

    /// The runs of each (scenario, configuration), in table order.
    pub fn groups(&self) -> impl Iterator<Item = &[RunRow]> {
        self.runs.chunk_by(|a, b| (a.scenario, a.config) == (b.scenario, b.config))
    }

    /// Mean, sd and CI95 over the runs of `group` (one (scenario, configuration)) of every metric.
    pub fn metric_stats(&self, group: &[RunRow]) -> Vec<Stat> {
        (0..self.metrics.len()).map(|m| describe(group.iter().map(|r| r.values.get(m)))).collect()
    }

    /// Means over replicates of every metric, and mean, sd and CI95 of the cost, per (scenario,
    /// configuration). Sequential, in table order.
    pub fn summarize(&self, objective: &BoundObjective) -> Summary {
        let n_configs = self.configs.len();
        let mut cells: Vec<Option<SummaryCell>> = vec![None; self.scenarios.len() * n_configs];
        for group in self.groups() {
            let (s, c) = (group[0].scenario, group[0].config);
            let means: Values = (0..self.metrics.len())
                .map(|m| describe(group.iter().map(|r| r.values.get(m))).mean)
                .collect();
            // One run's means are its values (checked bit for bit): share them.
            let means = match group {
                [one] if one.values == means => one.values.clone(),
                _ => means,
            };
            let cost = describe(group.iter().map(|r| Some(objective.cost(&r.values))));
            let contributions = objective
                .terms()
                .iter()
                .map(|&(m, w)| {
                    let mut sum = 0.0;
                    for r in group {
                        sum += r.values.get(m).unwrap_or(0.0);
                    }
                    w * sum / group.len() as f64
                })
                .collect();
            cells[s * n_configs + c] = Some(SummaryCell {
                scenario: s,
                config: c,
                replicates: group.len(),
                means,
                cost,
                contributions,
            });
        }
        Summary { n_configs, cells }
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
        for r in self.runs.iter().filter(|r| r.scenario == scenario && r.config == config) {
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
        assert_eq!(t.runs[0].config, 0);
        let o = Objective::new([(Metric::FalseOpens, 10.0), (Metric::DetectionDelayMeanS, 1.0)])
            .bind(&t.metrics)
            .unwrap();
        let s = t.summarize(&o);
        let a = s.get(0, 0).unwrap();
        assert_eq!(a.replicates, 2);
        assert_eq!(a.means.to_vec(), vec![Some(3.0), Some(10.0)]);
        let stats: Vec<Vec<Stat>> = t.groups().map(|g| t.metric_stats(g)).collect();
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
    fn a_one_replicate_summary_shares_its_runs_values_when_they_are_its_means() {
        // -0.0 + 0.0 is 0.0: that mean differs from its run bit for bit and is not shared.
        let t = two_configs(vec![run(0, 0, 0, &[Some(2.0), None]), run(0, 1, 0, &[Some(-0.0), Some(1.0)])]);
        let s = t.summarize(&Objective::new([(Metric::FalseOpens, 1.0)]).bind(&t.metrics).unwrap());
        let (a, b) = (s.get(0, 0).unwrap(), s.get(0, 1).unwrap());
        assert!(Arc::ptr_eq(&a.means.0, &t.runs[0].values.0));
        assert_eq!(a.means.to_vec(), vec![Some(2.0), None]);
        assert!(!Arc::ptr_eq(&b.means.0, &t.runs[1].values.0));
        assert_eq!(b.means.get(0).map(f64::to_bits), Some(0.0f64.to_bits()));
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
