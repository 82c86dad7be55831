//! The typed input of the charts and the review page: time bins, state changes, incidents,
//! latency splits and the summary's rows. A command hands over what it computed
//! (`report::contents`); `breakerlab report DIR` reads the same types from the folder's files
//! (`report::folder`). Values are those the files hold: a float is finite or absent, and never
//! `-0`.

use super::ChartError;
use super::comparison::COMPARISON_METRICS;
use crate::policy::State;
use crate::report::page::TABLE_METRICS;
use crate::time::Dur;
use crate::truth::Expect;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A float as the output files hold it: `None` when absent or not finite, `-0` as `0`.
pub fn held(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).map(|x| if x == 0.0 { 0.0 } else { x })
}

/// One time bin of one configuration, as in timeline.csv. Counts are per bin.
#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    /// Bin start (µs since the scenario's start).
    pub start_us: u64,
    /// Bin end (µs, exclusive).
    pub end_us: u64,
    /// Requests that arrived.
    pub offered: f64,
    /// Requests the breaker let through.
    pub admitted: f64,
    /// Requests the breaker rejected.
    pub rejected: f64,
    /// Failed attempts.
    pub failures: f64,
    /// Successful attempts.
    pub successes: f64,
    /// Share of the bin spent closed, when known.
    pub closed_frac: Option<f64>,
    /// Share of the bin spent open.
    pub open_frac: Option<f64>,
    /// Share of the bin spent half-open.
    pub half_open_frac: Option<f64>,
    /// Upstream p95 latency in the bin (ms), when any call completed.
    pub upstream_p95_ms: Option<f64>,
    /// Upstream error rate in the bin, when any call completed.
    pub upstream_error_rate: Option<f64>,
    /// The dependency's true p95 (ms) over every arrival's first answer, admitted or not.
    pub true_p95_ms: Option<f64>,
    /// The dependency's true error rate over every arrival's first answer.
    pub true_error_rate: Option<f64>,
    /// With several providers, the true (p95 ms, error rate) of each after the first, in the
    /// order of [`Series::other_providers`].
    pub other_true: Vec<(Option<f64>, Option<f64>)>,
}

/// The bins of one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The configuration's label (`run` when the file has no `policy` column).
    pub policy: String,
    /// Bins in time order.
    pub bins: Vec<Bin>,
    /// The providers after the first whose true health timeline.csv has
    /// (`provider.NAME.true_p95_ms`, `provider.NAME.true_error_rate`), in column order.
    pub other_providers: Vec<String>,
}

/// Label used when timeline.csv or transitions.csv has no `policy` column.
pub const SINGLE_POLICY: &str = "run";

/// One row of transitions.csv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransitionRow {
    /// The configuration (`run` when the file has no `policy` column).
    pub policy: String,
    /// When (µs since start).
    pub at_us: u64,
    /// Which client instance's breaker.
    pub instance: u64,
    /// State left.
    pub from: State,
    /// State entered.
    pub to: State,
    /// The rule that caused it.
    pub reason: String,
}

/// One ground-truth window from incidents.csv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incident {
    /// First instant (µs).
    pub start_us: u64,
    /// First instant after it (µs).
    pub end_us: u64,
    /// What happened (`outage`, `slowdown`, ...).
    pub kind: String,
    /// What the breaker should do.
    pub expect: Expect,
}

/// Columns of summary.csv that are text, never metrics.
const TEXT_COLUMNS: [&str; 9] =
    ["scenario", "policy", "preset", "seed", "replicates", "config_id", "family", "front", "overrides"];

/// Whether a chart or the page reads numeric column `h`: every metric, and the confidence
/// half-width (`_ci95`) of those the tables and comparison.png show; never a spread (`_sd`).
fn read_by_report(h: &str) -> bool {
    let shown = |base: &str| {
        TABLE_METRICS.iter().any(|m| m.0 == base) || COMPARISON_METRICS.iter().any(|m| m.0 == base)
    };
    !h.ends_with("_sd") && h.strip_suffix("_ci95").is_none_or(shown)
}

/// The columns of a summary the report reads, shared by its rows: the metrics (every numeric
/// column the report reads, in file order) and the parameters (without `param.`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Columns {
    metrics: Vec<String>,
    /// Position of each in `metrics`.
    index: HashMap<String, usize>,
    params: Vec<String>,
}

impl Columns {
    /// The columns of a summary.csv with `headers`.
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Columns {
        let metrics: Vec<String> = headers
            .iter()
            .map(AsRef::as_ref)
            .filter(|h| !(h.starts_with("param.") || TEXT_COLUMNS.contains(h) || *h == "feasible"))
            .filter(|h| read_by_report(h))
            .map(str::to_string)
            .collect();
        let params =
            headers.iter().filter_map(|h| h.as_ref().strip_prefix("param.")).map(str::to_string).collect();
        Columns { index: metrics.iter().enumerate().map(|(i, h)| (h.clone(), i)).collect(), metrics, params }
    }

    /// The metric columns, in file order.
    pub fn metrics(&self) -> &[String] {
        &self.metrics
    }

    /// The parameter names, in file order.
    pub fn params(&self) -> &[String] {
        &self.params
    }
}

/// One row of a summary, a configuration on a scenario. A pass over a summary hands every row
/// in turn in one reused row; a chart keeps the few it draws by cloning them.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    columns: Arc<Columns>,
    scenario: String,
    policy: String,
    family: String,
    config_id: String,
    seed: String,
    replicates: String,
    feasible: Option<bool>,
    index: usize,
    /// One value per metric column.
    metrics: Vec<Option<f64>>,
    /// One value per parameter, as written (empty when the row has none).
    params: Vec<String>,
}

/// The identity of a summary row, as its texts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity<'a> {
    /// Scenario name.
    pub scenario: &'a str,
    /// Configuration label.
    pub policy: &'a str,
    /// The policy family of a sweep's configuration (empty when none).
    pub family: &'a str,
    /// The preset the configuration derives from (empty when none).
    pub preset: &'a str,
    /// The stable configuration id of a sweep (empty when none: the label is the id).
    pub config_id: &'a str,
    /// The base seed (empty when unknown).
    pub seed: &'a str,
    /// Replicates aggregated in the row (empty when unknown).
    pub replicates: &'a str,
    /// Whether the configuration met the sweep's constraints, when known.
    pub feasible: Option<bool>,
}

impl SummaryRow {
    /// An empty row of `columns`, to be filled by [`SummaryRow::set`].
    pub fn new(columns: Arc<Columns>) -> SummaryRow {
        let (metrics, params) =
            (vec![None; columns.metrics.len()], vec![String::new(); columns.params.len()]);
        SummaryRow {
            columns,
            scenario: String::new(),
            policy: String::new(),
            family: String::new(),
            config_id: String::new(),
            seed: String::new(),
            replicates: String::new(),
            feasible: None,
            index: 0,
            metrics,
            params,
        }
    }

    /// Makes this row the row of `id`, without metrics or parameters.
    pub fn set(&mut self, id: &Identity) {
        let put = |to: &mut String, text: &str| {
            to.clear();
            to.push_str(text);
        };
        put(&mut self.scenario, id.scenario);
        put(&mut self.policy, id.policy);
        let family = [id.family, id.preset].into_iter().find(|s| !s.is_empty()).unwrap_or(id.policy);
        put(&mut self.family, family);
        put(&mut self.config_id, if id.config_id.is_empty() { id.policy } else { id.config_id });
        put(&mut self.seed, id.seed);
        put(&mut self.replicates, id.replicates);
        self.feasible = id.feasible;
        self.metrics.fill(None);
        self.params.iter_mut().for_each(String::clear);
    }

    /// Sets metric column `name` (ignored when the report does not read it) to `value` as the
    /// files hold it ([`held`]).
    pub fn set_metric(&mut self, name: &str, value: Option<f64>) {
        if let Some(&i) = self.columns.index.get(name) {
            self.set_metric_at(i, value);
        }
    }

    /// Sets parameter `name` (without `param.`; ignored when not a column) to `value`.
    pub fn set_param(&mut self, name: &str, value: &str) {
        if let Some(i) = self.columns.params.iter().position(|p| p == name) {
            self.set_param_at(i, value);
        }
    }

    /// Sets the `i`th metric column to `value` as the files hold it ([`held`]).
    pub fn set_metric_at(&mut self, i: usize, value: Option<f64>) {
        self.metrics[i] = held(value);
    }

    /// Sets the `i`th parameter to `value`.
    pub fn set_param_at(&mut self, i: usize, value: &str) {
        self.params[i].clear();
        self.params[i].push_str(value);
    }

    /// Scenario name.
    pub fn scenario(&self) -> &str {
        &self.scenario
    }

    /// Configuration label.
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// Policy family (sweeps), else the preset, else the label.
    pub fn family(&self) -> &str {
        &self.family
    }

    /// Stable configuration id (sweeps), else the label.
    pub fn config_id(&self) -> &str {
        &self.config_id
    }

    /// The base seed, as written (empty when unknown).
    pub fn seed(&self) -> &str {
        &self.seed
    }

    /// Replicates aggregated in the row, as written (empty when unknown).
    pub fn replicates(&self) -> &str {
        &self.replicates
    }

    /// Whether the configuration met the sweep's constraints, when known.
    pub fn feasible(&self) -> Option<bool> {
        self.feasible
    }

    /// The row's position among the summary's rows (from 0).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The value of metric `name`, `None` when absent.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics[*self.columns.index.get(name)?]
    }

    /// The value of parameter `name` (without `param.`) as written, `None` when the summary has
    /// no such column.
    pub fn param(&self, name: &str) -> Option<&str> {
        let i = self.columns.params.iter().position(|p| p == name)?;
        Some(&self.params[i])
    }
}

/// What fills a pass's reused row before handing it to the pass.
pub type Fill<'p> = dyn FnMut(&mut SummaryRow) -> Result<(), ChartError> + 'p;

/// The rows of a summary, handed to a pass in order, as many passes as asked for and from any
/// chart's thread: held in memory, made again from a sweep's results, or read again from
/// summary.csv.
pub type Rows<'f> = Arc<dyn Fn(&mut SummaryRow, &mut Fill) -> Result<(), ChartError> + Send + Sync + 'f>;

/// Configuration ids that are small integers (a sweep's) index a chart's per-configuration
/// totals directly; any other id is looked up by its text.
const DENSE_IDS: u32 = 1 << 24;

/// A summary as the charts and the page read it: what one pass found (columns, scenarios, row
/// count, the first row), and its rows, which every chart reads again in passes of its own
/// keeping only what it draws, so no chart holds the rows.
#[derive(Clone)]
pub struct Summary<'f> {
    rows_of: Rows<'f>,
    columns: Arc<Columns>,
    /// Metric columns some row has a value (or an empty cell) in, in file order.
    pub metric_columns: Vec<String>,
    /// Parameter names (without `param.`) in file order.
    pub param_columns: Vec<String>,
    /// Scenarios in order of first appearance.
    pub scenarios: Vec<String>,
    /// Number of rows.
    pub rows: usize,
    /// The first row.
    pub first: Option<SummaryRow>,
    /// Every configuration's rows are consecutive (one scenario): one pass folds them.
    grouped: bool,
    /// Every configuration id is an integer below [`DENSE_IDS`] and the largest is not far
    /// beyond the row count: ids index the per-configuration totals.
    dense: bool,
}

impl PartialEq for Summary<'_> {
    fn eq(&self, o: &Self) -> bool {
        (&self.columns, &self.metric_columns, &self.param_columns, &self.scenarios, self.rows, &self.first)
            == (&o.columns, &o.metric_columns, &o.param_columns, &o.scenarios, o.rows, &o.first)
            && (self.grouped, self.dense) == (o.grouped, o.dense)
    }
}

impl std::fmt::Debug for Summary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summary")
            .field("rows", &self.rows)
            .field("metric_columns", &self.metric_columns)
            .field("param_columns", &self.param_columns)
            .field("scenarios", &self.scenarios)
            .field("grouped", &self.grouped)
            .field("dense", &self.dense)
            .finish()
    }
}

/// What a first pass over a summary's rows finds ([`Survey::add`] each row in order).
pub struct Survey {
    scenarios: Vec<String>,
    known: HashSet<String>,
    seen: Seen,
    rows: usize,
    first: Option<SummaryRow>,
}

impl Default for Survey {
    fn default() -> Survey {
        Survey {
            scenarios: Vec::new(),
            known: HashSet::new(),
            seen: Seen {
                prev: String::new(),
                split: false,
                bits: Some(Vec::new()),
                texts: HashSet::new(),
                max: 0,
            },
            rows: 0,
            first: None,
        }
    }
}

impl Survey {
    /// Notes the next row.
    pub fn add(&mut self, row: &SummaryRow) {
        if !self.known.contains(row.scenario()) {
            self.known.insert(row.scenario().to_string());
            self.scenarios.push(row.scenario().to_string());
        }
        self.seen.see(row.config_id());
        if self.first.is_none() {
            self.first = Some(SummaryRow { index: 0, ..row.clone() });
        }
        self.rows += 1;
    }

    /// The summary of the rows noted, whose metric columns are `metric_columns`, read again
    /// through `rows_of`.
    pub fn finish<'f>(
        self,
        columns: Arc<Columns>,
        metric_columns: Vec<String>,
        rows_of: Rows<'f>,
    ) -> Summary<'f> {
        let dense = self.seen.bits.is_some() && (self.seen.max as usize) <= 4 * self.rows + 1024;
        Summary {
            rows_of,
            param_columns: columns.params.clone(),
            columns,
            metric_columns,
            scenarios: self.scenarios,
            rows: self.rows,
            first: self.first,
            grouped: !self.seen.split,
            dense,
        }
    }
}

/// Which configuration ids a checking pass has met, to tell whether each one's rows are
/// consecutive: one bit an id while they are small integers, else their texts.
struct Seen {
    /// The previous row's configuration.
    prev: String,
    /// Rows of a configuration met again after another one's.
    split: bool,
    /// Ids met, one bit each, while every id is a small integer.
    bits: Option<Vec<u64>>,
    /// Ids met, once one is not.
    texts: HashSet<Box<str>>,
    /// The largest integer id.
    max: u32,
}

impl Seen {
    /// A small integer id, written as such (no sign, no leading zero).
    fn dense(id: &str) -> Option<u32> {
        let canonical =
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && (id == "0" || !id.starts_with('0'));
        canonical.then(|| id.parse::<u32>().ok()).flatten().filter(|&n| n < DENSE_IDS)
    }

    fn see(&mut self, id: &str) {
        if id == self.prev && !self.prev.is_empty() {
            return;
        }
        self.prev.clear();
        self.prev.push_str(id);
        if let Some(bits) = &mut self.bits {
            if let Some(n) = Seen::dense(id) {
                self.max = self.max.max(n);
                let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
                if word >= bits.len() {
                    bits.resize(word + 1, 0);
                }
                self.split |= bits[word] & bit != 0;
                bits[word] |= bit;
                return;
            }
            // Not an integer: the ids met so far, as texts.
            for (w, word) in bits.iter().enumerate() {
                for b in (0..64).filter(|b| word & (1 << b) != 0) {
                    self.texts.insert((w * 64 + b).to_string().into());
                }
            }
            self.bits = None;
        }
        if !self.split {
            self.split = !self.texts.insert(id.into());
        }
    }
}

impl<'f> Summary<'f> {
    /// The summary of the rows `rows_of` hands over (of `columns`), surveyed in one pass; each
    /// of its metric columns is present when it has a row.
    pub fn new(columns: Arc<Columns>, rows_of: Rows<'f>) -> Result<Summary<'f>, ChartError> {
        let mut survey = Survey::default();
        let mut row = SummaryRow::new(Arc::clone(&columns));
        rows_of(&mut row, &mut |r| {
            survey.add(r);
            Ok(())
        })?;
        let metrics = if survey.rows > 0 { columns.metrics.clone() } else { Vec::new() };
        Ok(survey.finish(columns, metrics, rows_of))
    }

    /// A summary of `rows`, held (a run's or a test's few rows).
    pub fn held(columns: Arc<Columns>, rows: Vec<SummaryRow>) -> Result<Summary<'f>, ChartError> {
        let rows_of: Rows<'f> = Arc::new(move |row, fill| {
            for r in &rows {
                row.clone_from(r);
                fill(row)?;
            }
            Ok(())
        });
        Summary::new(columns, rows_of)
    }

    /// Hands every row to `each` in order, holding one row.
    pub fn for_each(
        &self,
        mut each: impl FnMut(&SummaryRow) -> Result<(), ChartError>,
    ) -> Result<(), ChartError> {
        let mut row = SummaryRow::new(Arc::clone(&self.columns));
        let mut index = 0;
        (self.rows_of)(&mut row, &mut |r| {
            r.index = index;
            index += 1;
            each(r)
        })
    }

    /// Hands every configuration (rows of one `config_id`, else of one label) to `each` in
    /// order of first appearance: its first row and its rows folded into an `A` by `fold` (in
    /// file order). When every configuration's rows are consecutive this is one pass holding
    /// one configuration; else (a sweep's scenarios one after another) a first pass folds into
    /// one `A` per configuration, so an `A` must stay a few bytes.
    pub fn configs<A: Default>(
        &self,
        mut fold: impl FnMut(&mut A, &SummaryRow),
        mut each: impl FnMut(&SummaryRow, A) -> Result<(), ChartError>,
    ) -> Result<(), ChartError> {
        if self.grouped {
            let mut group: Option<(SummaryRow, A)> = None;
            self.for_each(|row| {
                if let Some((first, acc)) = &mut group
                    && first.config_id() == row.config_id()
                {
                    fold(acc, row);
                    return Ok(());
                }
                if let Some((first, acc)) = group.take() {
                    each(&first, acc)?;
                }
                let mut acc = A::default();
                fold(&mut acc, row);
                group = Some((row.clone(), acc));
                Ok(())
            })?;
            return match group {
                Some((first, acc)) => each(&first, acc),
                None => Ok(()),
            };
        }
        // One slot per configuration: its id when dense, else in order of first appearance.
        let mut named: HashMap<Box<str>, usize> = HashMap::new();
        let dense = self.dense;
        let mut slot = |row: &SummaryRow, add: bool| -> Option<usize> {
            let id = row.config_id();
            if dense {
                return Seen::dense(id).map(|n| n as usize);
            }
            match named.get(id) {
                Some(&s) => Some(s),
                None if add => {
                    let s = named.len();
                    named.insert(id.into(), s);
                    Some(s)
                }
                None => None,
            }
        };
        let mut totals: Vec<A> = Vec::new();
        self.for_each(|row| {
            if let Some(s) = slot(row, true) {
                if s >= totals.len() {
                    totals.resize_with(s + 1, A::default);
                }
                fold(&mut totals[s], row);
            }
            Ok(())
        })?;
        let mut done = vec![0u64; totals.len().div_ceil(64)];
        self.for_each(|row| match slot(row, false) {
            Some(s) if s < totals.len() && done[s / 64] & (1 << (s % 64)) == 0 => {
                done[s / 64] |= 1 << (s % 64);
                each(row, std::mem::take(&mut totals[s]))
            }
            _ => Ok(()),
        })
    }

    /// The summary.csv `text` (tests).
    #[cfg(test)]
    pub fn of_text(text: &str) -> Summary<'static> {
        crate::report::folder::parse::summary_of_text(text).unwrap().unwrap()
    }
}

/// Reads summary.csv at `path` (tests).
#[cfg(test)]
pub fn read_summary(path: &std::path::Path) -> Result<Summary<'static>, ChartError> {
    use crate::report::folder::parse::{Opener, Reader};
    let (dir, name) = (
        path.parent().unwrap_or(std::path::Path::new("")).to_path_buf(),
        path.file_name().unwrap_or_default().to_string_lossy().into_owned(),
    );
    let owned = dir.clone();
    let open: Opener<'static> = Arc::new(move |n: &str| {
        std::fs::File::open(owned.join(n)).map(|f| Some(Box::new(std::io::BufReader::new(f)) as Reader))
    });
    crate::report::folder::parse::summary(&dir, &name, open).map(|s| s.expect("the file"))
}

/// A mean built one value at a time: the values summed in order as `Iterator::sum` sums them
/// (from -0.0), so it is the same bits as the mean of the values collected.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mean {
    sum: f64,
    values: u32,
}

impl Mean {
    /// Adds `value`, when there is one.
    pub fn add(&mut self, value: Option<f64>) {
        if let Some(v) = value {
            self.sum = if self.values == 0 { v } else { self.sum + v };
            self.values += 1;
        }
    }

    /// The mean, `None` when no value was added.
    pub fn get(&self) -> Option<f64> {
        (self.values > 0).then(|| self.sum / f64::from(self.values))
    }
}

/// One configuration's latency split from latency.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyHist {
    /// Configuration label.
    pub policy: String,
    /// User latency of the requests the dependency answered: (upper bucket edge in ms, count),
    /// sorted by edge. (A latency.csv without an `outcome` column is read as all answered.)
    pub buckets: Vec<(f64, f64)>,
    /// Requests per ending: answered, refused, fallback, deferred (all zero when the file has no
    /// count rows).
    pub ended: [f64; 4],
    /// Deferral to completion of the deferred work: (upper bucket edge in ms, count).
    pub deferred: Vec<(f64, f64)>,
}

impl LatencyHist {
    /// Every request that ended: the ending counts, or the answered histogram's total when the
    /// file gives no counts.
    pub fn total(&self) -> f64 {
        let ended: f64 = self.ended.iter().sum();
        if ended > 0.0 { ended } else { self.buckets.iter().map(|b| b.1).sum() }
    }
}

/// A sort key for parameter values: numbers and durations ("900ms", "5m") by magnitude, then
/// anything else by text.
pub fn param_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> Option<f64> {
        s.parse::<f64>().ok().filter(|v| v.is_finite()).or_else(|| Dur::parse(s).ok().map(|d| d.0 as f64))
    }
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| a.cmp(b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Configurations, their first rows and the folded totals, as `configs` hands them over.
    fn configs_of(s: &Summary) -> Vec<(String, usize, Vec<String>)> {
        let mut out = Vec::new();
        s.configs(
            |scen: &mut Vec<String>, r| scen.push(r.scenario().to_string()),
            |first, scen| {
                out.push((first.config_id().to_string(), first.index(), scen));
                Ok(())
            },
        )
        .unwrap();
        out
    }

    #[test]
    fn configurations_fold_in_first_appearance_order_whatever_the_row_order() {
        let c = |id: &str, first: usize, scenarios: &[&str]| {
            (id.to_string(), first, scenarios.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        // Consecutive rows: one pass.
        let grouped = Summary::of_text("scenario,config_id,policy\na,7,x\nb,7,x\na,3,y\nb,12,z\n");
        assert!(grouped.grouped && grouped.dense);
        assert_eq!(configs_of(&grouped), [c("7", 0, &["a", "b"]), c("3", 2, &["a"]), c("12", 3, &["b"])]);
        // Scenarios one after another (a sweep): integer ids index the totals.
        let split = Summary::of_text("scenario,config_id,policy\na,7,x\na,3,y\nb,7,x\nb,12,z\n");
        assert!(!split.grouped && split.dense);
        let want = [c("7", 0, &["a", "b"]), c("3", 1, &["a"]), c("12", 3, &["b"])];
        assert_eq!(configs_of(&split), want);
        // Labels (no config_id) and ids that are not plain integers are looked up by their text.
        let text = Summary::of_text("scenario,policy\na,x\na,y\nb,x\nb,z\n");
        assert!(!text.grouped && !text.dense);
        assert_eq!(configs_of(&text), [c("x", 0, &["a", "b"]), c("y", 1, &["a"]), c("z", 3, &["b"])]);
        let mixed = Summary::of_text("scenario,config_id,policy\na,7,x\na,07,y\nb,7,x\nb,12,z\n");
        assert!(!mixed.grouped && !mixed.dense);
        assert_eq!(configs_of(&mixed), [c("7", 0, &["a", "b"]), c("07", 1, &["a"]), c("12", 3, &["b"])]);
    }

    #[test]
    fn parameter_values_sort_by_magnitude() {
        let mut v = vec!["1m", "900ms", "30s", "10", "2", "abc"];
        v.sort_by(|a, b| param_order(a, b));
        assert_eq!(v, vec!["2", "10", "900ms", "30s", "1m", "abc"]);
    }
}
