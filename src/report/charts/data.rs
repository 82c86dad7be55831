//! Parses an output folder's CSV files into what the charts and the page show (the folder's one
//! reader, `report::folder`, hands them over). Columns are found by header name and extra
//! columns are ignored, so the charts survive new columns; an empty cell means "no value".
//! Errors name the file, the line and the column.

use super::ChartError;
use super::comparison::COMPARISON_METRICS;
use crate::policy::State;
use crate::report::page::TABLE_METRICS;
use crate::time::Dur;
use crate::truth::Expect;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A CSV file held as text cells, with the line number of every row for error messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The file read.
    pub path: PathBuf,
    /// Header names, trimmed.
    pub headers: Vec<String>,
    rows: Vec<Vec<String>>,
    lines: Vec<u64>,
}

impl Table {
    /// Reads `path` (header row required): tests only, commands read through the folder reader.
    #[cfg(test)]
    pub fn read(path: &Path) -> Result<Table, ChartError> {
        let file = std::fs::File::open(path)
            .map_err(|source| ChartError::Io { path: path.to_path_buf(), source })?;
        Table::from_reader(path, file)
    }

    /// Parses CSV text from `reader`; `path` is used in errors only.
    pub fn from_reader<R: std::io::Read>(path: &Path, reader: R) -> Result<Table, ChartError> {
        Table::chunks(path, reader, usize::MAX, |_| Ok(()))
    }

    /// Parses CSV text from `reader` handing each full chunk of `rows` data rows (a table with
    /// the file's header and its rows' own line numbers) to `each`, and returns the rest: a file
    /// too large to hold as text (a week's million state changes) is read holding one chunk.
    /// `path` is used in errors only.
    pub fn chunks<R: std::io::Read>(
        path: &Path,
        reader: R,
        rows: usize,
        mut each: impl FnMut(&Table) -> Result<(), ChartError>,
    ) -> Result<Table, ChartError> {
        let csv_err = |e: csv::Error| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            ChartError::Csv { path: path.to_path_buf(), line, message: e.to_string() }
        };
        let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(reader);
        let headers: Vec<String> =
            r.headers().map_err(csv_err)?.iter().map(|h| h.trim().to_string()).collect();
        let mut chunk = Table { path: path.to_path_buf(), headers, rows: Vec::new(), lines: Vec::new() };
        for rec in r.records() {
            let rec = rec.map_err(csv_err)?;
            chunk.lines.push(rec.position().map(|p| p.line()).unwrap_or(0));
            chunk.rows.push(rec.iter().map(|c| c.trim().to_string()).collect());
            if chunk.rows.len() >= rows {
                each(&chunk)?;
                chunk.rows.clear();
                chunk.lines.clear();
            }
        }
        Ok(chunk)
    }

    /// Parses CSV text from `reader` keeping only its first `max` data rows, handing every
    /// chunk of rows to `check` first; returns them and the file's number of data rows, so a
    /// long file is read holding one chunk and the rows kept. `path` is used in errors only.
    pub fn head<R: std::io::Read>(
        path: &Path,
        reader: R,
        max: usize,
        mut check: impl FnMut(&Table) -> Result<(), ChartError>,
    ) -> Result<(Table, usize), ChartError> {
        let mut kept: Option<Table> = None;
        let mut total = 0;
        let mut take = |t: &Table| -> Result<(), ChartError> {
            check(t)?;
            total += t.len();
            let k = kept.get_or_insert_with(|| Table {
                path: t.path.clone(),
                headers: t.headers.clone(),
                rows: Vec::new(),
                lines: Vec::new(),
            });
            let n = max.saturating_sub(k.len()).min(t.len());
            k.rows.extend_from_slice(&t.rows[..n]);
            k.lines.extend_from_slice(&t.lines[..n]);
            Ok(())
        };
        let rest = Table::chunks(path, reader, 1024, &mut take)?;
        take(&rest)?;
        Ok((kept.unwrap_or(rest), total))
    }

    /// Number of data rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Index of column `name`, if present.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h == name)
    }

    /// Index of column `name`, or an error naming the file and the column.
    pub fn require(&self, name: &str) -> Result<usize, ChartError> {
        self.col(name)
            .ok_or_else(|| ChartError::MissingColumn { path: self.path.clone(), column: name.to_string() })
    }

    /// The text of a cell (empty when the row is short).
    pub fn str(&self, row: usize, col: usize) -> &str {
        self.rows[row].get(col).map(String::as_str).unwrap_or("")
    }

    /// The text of a cell in the named column, empty when the column is absent.
    pub fn str_by(&self, row: usize, name: &str) -> &str {
        self.col(name).map(|c| self.str(row, c)).unwrap_or("")
    }

    fn bad(&self, row: usize, col: usize, expected: &'static str) -> ChartError {
        ChartError::BadValue {
            path: self.path.clone(),
            line: self.lines[row],
            column: self.headers.get(col).cloned().unwrap_or_default(),
            value: self.str(row, col).to_string(),
            expected,
        }
    }

    /// A number cell: `None` when empty, an error when not a finite number.
    pub fn f64(&self, row: usize, col: usize) -> Result<Option<f64>, ChartError> {
        let s = self.str(row, col);
        if s.is_empty() {
            return Ok(None);
        }
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            _ => Err(self.bad(row, col, "a finite number or an empty cell")),
        }
    }

    /// A non-negative integer cell: `None` when empty.
    pub fn u64(&self, row: usize, col: usize) -> Result<Option<u64>, ChartError> {
        let s = self.str(row, col);
        if s.is_empty() {
            return Ok(None);
        }
        s.parse::<u64>().map(Some).map_err(|_| self.bad(row, col, "a non-negative integer"))
    }

    /// A required non-negative integer cell.
    pub fn u64_req(&self, row: usize, col: usize) -> Result<u64, ChartError> {
        self.u64(row, col)?.ok_or_else(|| self.bad(row, col, "a non-negative integer"))
    }

    /// A count cell: empty means 0; fractional counts (means over replicates) are accepted.
    pub fn count(&self, row: usize, col: usize) -> Result<f64, ChartError> {
        match self.f64(row, col)? {
            Some(v) if v >= 0.0 => Ok(v),
            Some(_) => Err(self.bad(row, col, "a non-negative count")),
            None => Ok(0.0),
        }
    }

    /// A state cell (`closed`, `open`, `half_open`).
    pub fn state(&self, row: usize, col: usize) -> Result<State, ChartError> {
        match self.str(row, col) {
            "closed" => Ok(State::Closed),
            "open" => Ok(State::Open),
            "half_open" => Ok(State::HalfOpen),
            _ => Err(self.bad(row, col, "closed, open or half_open")),
        }
    }
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

/// Parses timeline.csv: one series per configuration, in order of first appearance.
pub fn timeline(t: &Table) -> Result<Vec<Series>, ChartError> {
    let policy = t.col("policy");
    let c = |n: &str| t.require(n);
    let (bs, be) = (c("bin_start_us")?, c("bin_end_us")?);
    let (off, adm, rej, fail) = (c("offered")?, c("admitted")?, c("rejected")?, c("failures")?);
    let succ = t.col("successes");
    let (cf, of, hf) = (t.col("closed_frac"), t.col("open_frac"), t.col("half_open_frac"));
    let (p95, er) = (t.col("upstream_p95_ms"), t.col("upstream_error_rate"));
    let (tp95, ter) = (t.col("true_p95_ms"), t.col("true_error_rate"));
    // Per provider after the first: its name and its two columns.
    let others: Vec<(String, usize, Option<usize>)> = t
        .headers
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let name = h.strip_prefix("provider.")?.strip_suffix(".true_p95_ms")?;
            Some((name.to_string(), i, t.col(&format!("provider.{name}.true_error_rate"))))
        })
        .collect();
    let names: Vec<String> = others.iter().map(|o| o.0.clone()).collect();
    let opt = |row: usize, col: Option<usize>| match col {
        Some(col) => t.f64(row, col),
        None => Ok(None),
    };
    let mut out: Vec<Series> = Vec::new();
    for row in 0..t.len() {
        let name = policy.map(|p| t.str(row, p)).unwrap_or(SINGLE_POLICY);
        let bin = Bin {
            start_us: t.u64_req(row, bs)?,
            end_us: t.u64_req(row, be)?,
            offered: t.count(row, off)?,
            admitted: t.count(row, adm)?,
            rejected: t.count(row, rej)?,
            failures: t.count(row, fail)?,
            successes: match succ {
                Some(s) => t.count(row, s)?,
                None => 0.0,
            },
            closed_frac: opt(row, cf)?,
            open_frac: opt(row, of)?,
            half_open_frac: opt(row, hf)?,
            upstream_p95_ms: opt(row, p95)?,
            upstream_error_rate: opt(row, er)?,
            true_p95_ms: opt(row, tp95)?,
            true_error_rate: opt(row, ter)?,
            other_true: others
                .iter()
                .map(|&(_, p95, err)| Ok((opt(row, Some(p95))?, opt(row, err)?)))
                .collect::<Result<_, ChartError>>()?,
        };
        if bin.end_us <= bin.start_us {
            return Err(t.bad(row, be, "bin_end_us greater than bin_start_us"));
        }
        match out.iter_mut().find(|s| s.policy == name) {
            Some(s) => s.bins.push(bin),
            None => {
                out.push(Series { policy: name.to_string(), bins: vec![bin], other_providers: names.clone() })
            }
        }
    }
    for s in &mut out {
        s.bins.sort_by_key(|b| b.start_us);
    }
    Ok(out)
}

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

/// Parses transitions.csv in file order.
pub fn transitions(t: &Table) -> Result<Vec<TransitionRow>, ChartError> {
    let policy = t.col("policy");
    let (at, from, to) = (t.require("at_us")?, t.require("from")?, t.require("to")?);
    let (inst, reason) = (t.col("instance"), t.col("reason"));
    let mut out = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        out.push(TransitionRow {
            policy: policy.map(|p| t.str(row, p)).unwrap_or(SINGLE_POLICY).to_string(),
            at_us: t.u64_req(row, at)?,
            instance: match inst {
                Some(i) => t.u64(row, i)?.unwrap_or(0),
                None => 0,
            },
            from: t.state(row, from)?,
            to: t.state(row, to)?,
            reason: reason.map(|r| t.str(row, r)).unwrap_or("").to_string(),
        });
    }
    Ok(out)
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

/// Parses incidents.csv.
pub fn incidents(t: &Table) -> Result<Vec<Incident>, ChartError> {
    let (s, e, k, x) = (t.require("start_us")?, t.require("end_us")?, t.col("kind"), t.require("expect")?);
    let mut out = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        let expect = match t.str(row, x) {
            "open" => Expect::Open,
            "stay_closed" => Expect::StayClosed,
            "either" => Expect::Either,
            _ => return Err(t.bad(row, x, "open, stay_closed or either")),
        };
        out.push(Incident {
            start_us: t.u64_req(row, s)?,
            end_us: t.u64_req(row, e)?,
            kind: k.map(|k| t.str(row, k)).unwrap_or("").to_string(),
            expect,
        });
    }
    Ok(out)
}

/// Columns of summary.csv that are text, never metrics.
const TEXT_COLUMNS: [&str; 8] =
    ["scenario", "policy", "preset", "seed", "replicates", "config_id", "family", "front"];

/// The numeric and parameter columns of one summary.csv or pareto.csv, shared by its rows so a
/// row holds its values only (8 bytes a metric), never the column names.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Columns {
    /// Candidate numeric columns (every column but the text and parameter ones), in file order.
    numeric: Vec<String>,
    /// Position of each in `numeric`.
    index: HashMap<String, usize>,
    /// Parameter names (without `param.`), in file order.
    params: Vec<String>,
}

/// Whether a chart or the page reads numeric column `h`: every metric, and the confidence
/// half-width (`_ci95`) of those the tables and comparison.png show; never a spread (`_sd`).
fn read_by_report(h: &str) -> bool {
    let shown = |base: &str| {
        TABLE_METRICS.iter().any(|m| m.0 == base) || COMPARISON_METRICS.iter().any(|m| m.0 == base)
    };
    !h.ends_with("_sd") && h.strip_suffix("_ci95").is_none_or(shown)
}

impl Columns {
    /// The columns of a file with `headers`; of the numeric ones only those the report reads.
    fn new(headers: &[String]) -> Columns {
        let numeric: Vec<String> = headers
            .iter()
            .filter(|h| !(h.starts_with("param.") || TEXT_COLUMNS.contains(&h.as_str()) || *h == "feasible"))
            .filter(|h| read_by_report(h))
            .cloned()
            .collect();
        let index = numeric.iter().enumerate().map(|(i, h)| (h.clone(), i)).collect();
        let params = headers.iter().filter_map(|h| h.strip_prefix("param.")).map(str::to_string).collect();
        Columns { numeric, index, params }
    }
}

/// A numeric cell as a row keeps it: the value's bits, or one of two tags.
type Packed = u64;
/// An empty (or non-finite) cell: no value.
const EMPTY: Packed = 0x7ff8_0000_0000_0b1a;
/// A cell that is not a number: the column is not a metric in this row.
const TEXT: Packed = 0x7ff8_0000_0000_07e7;

/// A row's numeric cells: two bits a column say empty, not a number, zero or a value, and only
/// the values are stored (a sweep's row is mostly empty half-widths and zero counts).
#[derive(Clone, Debug, PartialEq)]
struct Cells {
    /// The columns' tags, 32 to a word.
    tags: Box<[u64]>,
    /// The bits of each value tagged [`Cells::VALUE`], in column order.
    values: Box<[Packed]>,
}

impl Cells {
    const EMPTY: u64 = 0;
    const TEXT: u64 = 1;
    const ZERO: u64 = 2;
    const VALUE: u64 = 3;

    /// Packs `cells` (a column's bits, [`EMPTY`] or [`TEXT`] each).
    fn new(cells: impl Iterator<Item = Packed>) -> Cells {
        let (mut tags, mut values) = (Vec::new(), Vec::new());
        for (i, bits) in cells.enumerate() {
            let tag = match bits {
                EMPTY => Cells::EMPTY,
                TEXT => Cells::TEXT,
                0 => Cells::ZERO,
                _ => {
                    values.push(bits);
                    Cells::VALUE
                }
            };
            if i % 32 == 0 {
                tags.push(0);
            }
            tags[i / 32] |= tag << (2 * (i % 32));
        }
        Cells { tags: tags.into(), values: values.into() }
    }

    /// Column `i`'s cell as packed (`i` one of the row's columns).
    fn get(&self, i: usize) -> Option<Packed> {
        let word = *self.tags.get(i / 32)?;
        let shift = 2 * (i % 32);
        // The columns tagged VALUE before `i`: both of their bits set.
        let values = |w: u64| (w & (w >> 1) & 0x5555_5555_5555_5555).count_ones() as usize;
        Some(match (word >> shift) & 3 {
            Cells::EMPTY => EMPTY,
            Cells::TEXT => TEXT,
            Cells::ZERO => 0,
            _ => {
                let before = self.tags[..i / 32].iter().map(|&w| values(w)).sum::<usize>()
                    + values(word & ((1u64 << shift) - 1));
                self.values[before]
            }
        })
    }
}

/// One row of summary.csv (or pareto.csv): a configuration on a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// Scenario name (shared by the rows that have it, like `family`, `front`, `seed` and
    /// `replicates`).
    pub scenario: Arc<str>,
    /// Configuration label.
    pub policy: String,
    /// Policy family (sweeps), else the preset, else the label.
    pub family: Arc<str>,
    /// Stable configuration id (sweeps), else the label.
    pub config_id: String,
    /// The file's columns (shared by every row).
    columns: Arc<Columns>,
    /// Parameter values as written, in [`Columns`]' parameter order, one after another.
    params: Box<str>,
    /// Where each parameter value ends in `params`.
    param_ends: Box<[u32]>,
    /// Every numeric column's cell, in [`Columns`]' numeric order.
    metrics: Cells,
    /// Whether the configuration met the sweep's constraints, when the file says.
    pub feasible: Option<bool>,
    /// The Pareto front the row belongs to (pareto.csv's `front`, e.g. `wasted_quota vs
    /// availability`); empty in summary.csv.
    pub front: Arc<str>,
    /// The base seed, as written (empty when the file has no `seed` column).
    pub seed: Arc<str>,
    /// Replicates aggregated in the row, as written (empty when absent).
    pub replicates: Arc<str>,
}

impl SummaryRow {
    /// The value of metric `name`, `None` when absent or empty.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let bits = self.metrics.get(*self.columns.index.get(name)?)?;
        (bits != EMPTY && bits != TEXT).then(|| f64::from_bits(bits))
    }

    /// Whether column `name` holds a number or an empty cell in this row.
    fn has_metric(&self, name: &str) -> bool {
        self.columns.index.get(name).is_some_and(|&i| self.metrics.get(i) != Some(TEXT))
    }

    /// The value of parameter `name` (without `param.`) as written, `None` when the file has no
    /// such column.
    pub fn param(&self, name: &str) -> Option<&str> {
        let i = self.columns.params.iter().position(|p| p == name)?;
        let start = i.checked_sub(1).map_or(0, |j| self.param_ends[j] as usize);
        self.params.get(start..*self.param_ends.get(i)? as usize)
    }
}

/// The texts that repeat down a file (scenario, family, seed, ...), one copy shared by the rows.
#[derive(Default)]
struct Shared(HashSet<Arc<str>>);

impl Shared {
    /// The shared copy of `text`.
    fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(a) = self.0.get(text) {
            return Arc::clone(a);
        }
        let a: Arc<str> = text.into();
        self.0.insert(Arc::clone(&a));
        a
    }
}

/// `rows` grouped by configuration (`config_id`), configurations in order of first appearance
/// and each one's rows in file order: one pass, whatever the number of configurations.
pub fn by_config<'a>(rows: impl Iterator<Item = &'a SummaryRow>) -> Vec<Vec<&'a SummaryRow>> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<&SummaryRow>> = Vec::new();
    for r in rows {
        let i = *at.entry(&r.config_id).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push(r);
    }
    groups
}

/// The mean of metric `name` over the `rows` where it has a value (`None` when none has).
pub fn mean_of(rows: &[&SummaryRow], name: &str) -> Option<f64> {
    let v: Vec<f64> = rows.iter().filter_map(|r| r.metric(name)).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The rows of summary.csv with the metric columns in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Rows in file order.
    pub rows: Vec<SummaryRow>,
    /// Numeric column names in file order (parameters and text columns excluded).
    pub metric_columns: Vec<String>,
    /// Parameter names (without `param.`) in file order.
    pub param_columns: Vec<String>,
}

/// Reads summary.csv or pareto.csv.
#[cfg(test)]
pub fn read_summary(path: &Path) -> Result<Summary, ChartError> {
    summary(&Table::read(path)?)
}

/// Parses summary.csv or pareto.csv.
pub fn summary(t: &Table) -> Result<Summary, ChartError> {
    let columns = Arc::new(Columns::new(&t.headers));
    let rows = rows(t, &columns, &mut Shared::default())?;
    let mut s = Summary { rows, metric_columns: Vec::new(), param_columns: Vec::new() };
    s.find_columns(&columns);
    Ok(s)
}

/// The rows of `t`, their values packed against `columns` (the columns of `t`'s header).
fn rows(t: &Table, columns: &Arc<Columns>, shared: &mut Shared) -> Result<Vec<SummaryRow>, ChartError> {
    let policy = t.require("policy")?;
    let feasible = t.col("feasible");
    let numeric: Vec<usize> = columns.numeric.iter().filter_map(|h| t.col(h)).collect();
    let params: Vec<usize> = columns.params.iter().filter_map(|p| t.col(&format!("param.{p}"))).collect();
    let mut rows = Vec::with_capacity(t.len());
    for row in 0..t.len() {
        let metrics = Cells::new(numeric.iter().map(|&c| {
            let s = t.str(row, c);
            if s.is_empty() {
                EMPTY
            } else {
                s.parse::<f64>().map_or(TEXT, |v| if v.is_finite() { v.to_bits() } else { EMPTY })
            }
        }));
        let label = t.str(row, policy).to_string();
        let preset = t.str_by(row, "preset");
        let family = shared.get(
            [t.str_by(row, "family"), preset, label.as_str()]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or(""),
        );
        let config_id = match t.str_by(row, "config_id") {
            "" => label.clone(),
            id => id.to_string(),
        };
        let feasible = match feasible.map(|f| t.str(row, f)) {
            None | Some("") => None,
            Some("true" | "1" | "yes") => Some(true),
            Some("false" | "0" | "no") => Some(false),
            Some(_) => return Err(t.bad(row, feasible.unwrap_or(0), "true or false")),
        };
        let mut text = String::new();
        let param_ends = params
            .iter()
            .map(|&c| {
                text.push_str(t.str(row, c));
                text.len() as u32
            })
            .collect();
        rows.push(SummaryRow {
            scenario: shared.get(t.str_by(row, "scenario")),
            policy: label,
            family,
            config_id,
            columns: Arc::clone(columns),
            params: text.into_boxed_str(),
            param_ends,
            metrics,
            feasible,
            front: shared.get(t.str_by(row, "front")),
            seed: shared.get(t.str_by(row, "seed")),
            replicates: shared.get(t.str_by(row, "replicates")),
        });
    }
    Ok(rows)
}

impl Summary {
    /// Parses summary.csv or pareto.csv from `reader` a chunk of rows at a time: the file's
    /// text is never held whole, only its parsed rows (their values packed, the column names
    /// shared).
    pub fn read(path: &Path, reader: impl std::io::Read) -> Result<Summary, ChartError> {
        let mut all = Vec::new();
        let mut columns: Option<Arc<Columns>> = None;
        let mut shared = Shared::default();
        let mut add = |t: &Table| -> Result<(), ChartError> {
            let cols = columns.get_or_insert_with(|| Arc::new(Columns::new(&t.headers)));
            all.extend(rows(t, cols, &mut shared)?);
            Ok(())
        };
        let rest = Table::chunks(path, reader, 1024, &mut add)?;
        add(&rest)?;
        let columns = columns.unwrap_or_default();
        let mut s = Summary { rows: all, metric_columns: Vec::new(), param_columns: Vec::new() };
        s.find_columns(&columns);
        Ok(s)
    }

    /// The parameter columns, and the numeric ones some row has a value (or an empty cell) in,
    /// in file order.
    fn find_columns(&mut self, columns: &Columns) {
        self.param_columns = columns.params.clone();
        self.metric_columns =
            columns.numeric.iter().filter(|h| self.rows.iter().any(|r| r.has_metric(h))).cloned().collect();
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

/// Parses latency.csv, one split per configuration in order of first appearance.
pub fn latency(t: &Table) -> Result<Vec<LatencyHist>, ChartError> {
    let policy = t.col("policy");
    let outcome = t.col("outcome");
    let (le, count) = (t.require("le_ms")?, t.require("count")?);
    let mut out: Vec<LatencyHist> = Vec::new();
    for row in 0..t.len() {
        let name = policy.map(|p| t.str(row, p)).unwrap_or(SINGLE_POLICY);
        let i = match out.iter().position(|h| h.policy == name) {
            Some(i) => i,
            None => {
                let empty = LatencyHist {
                    policy: name.to_string(),
                    buckets: Vec::new(),
                    ended: [0.0; 4],
                    deferred: Vec::new(),
                };
                out.push(empty);
                out.len() - 1
            }
        };
        let ending = match outcome.map(|o| t.str(row, o)) {
            None => 0,
            Some(text) => match text {
                "answered" => 0,
                "refused" => 1,
                "fallback" => 2,
                "deferred" => 3,
                _ => return Err(t.bad(row, outcome.unwrap_or(0), "answered, refused, fallback or deferred")),
            },
        };
        let n = t.count(row, count)?;
        let h = &mut out[i];
        match t.f64(row, le)? {
            None if outcome.is_some() => h.ended[ending] += n,
            Some(edge) if edge > 0.0 && ending == 0 => h.buckets.push((edge, n)),
            Some(edge) if edge > 0.0 && ending == 3 => h.deferred.push((edge, n)),
            _ => {
                return Err(t.bad(
                    row,
                    le,
                    "a positive bucket edge in ms (answered and deferred rows), or empty",
                ));
            }
        }
    }
    for h in &mut out {
        h.buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        h.deferred.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(out)
}

/// The first non-empty line of a text such as recommended.txt.
pub fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
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

    fn table(text: &str) -> Table {
        Table::from_reader(Path::new("t.csv"), text.as_bytes()).unwrap()
    }

    #[test]
    fn columns_by_name_and_empty_cells() {
        let t = table("b,a,extra\n1,,x\n2,3.5,y\n");
        let a = t.require("a").unwrap();
        assert_eq!(t.f64(0, a).unwrap(), None);
        assert_eq!(t.f64(1, a).unwrap(), Some(3.5));
        assert_eq!(t.u64_req(1, t.col("b").unwrap()).unwrap(), 2);
        let err = t.require("missing").unwrap_err().to_string();
        assert!(err.contains("t.csv") && err.contains("missing"), "{err}");
    }

    #[test]
    fn bad_cells_name_line_and_column() {
        let t = table("at_us,from\n5,closed\nx,opn\n");
        let err = t.u64_req(1, 0).unwrap_err().to_string();
        assert!(err.contains("line 3") && err.contains("at_us") && err.contains("\"x\""), "{err}");
        let err = t.state(1, 1).unwrap_err().to_string();
        assert!(err.contains("closed, open or half_open"), "{err}");
    }

    #[test]
    fn summary_splits_params_metrics_and_feasibility() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.csv");
        std::fs::write(
            &p,
            "scenario,policy,preset,seed,replicates,config_id,family,param.threshold,param.open_for,\
             false_opens,false_opens_sd,false_opens_ci95,detection_delay_mean_s,probes,probes_ci95,feasible,note\n\
             s1,c1,,1,3,c1,count,5,30s,2,0.7,0.5,,1,0.1,true,ok\n\
             s1,c2,,1,3,c2,count,10,1m,0,0,0,4.5,2,0.2,false,ok\n",
        )
        .unwrap();
        let s = summary(&Table::read(&p).unwrap()).unwrap();
        assert_eq!(s.param_columns, vec!["threshold", "open_for"]);
        // Spreads and the half-widths nothing shows are not kept.
        assert_eq!(
            s.metric_columns,
            vec!["false_opens", "false_opens_ci95", "detection_delay_mean_s", "probes"]
        );
        assert_eq!((s.rows[0].metric("false_opens_sd"), s.rows[0].metric("probes_ci95")), (None, None));
        assert_eq!(s.rows[0].metric("false_opens_ci95"), Some(0.5));
        assert_eq!(s.rows[0].metric("detection_delay_mean_s"), None);
        assert_eq!(s.rows[1].metric("detection_delay_mean_s"), Some(4.5));
        assert_eq!(s.rows[1].param("open_for"), Some("1m"));
        assert_eq!(s.rows[0].feasible, Some(true));
        assert_eq!(s.rows[1].feasible, Some(false));
        assert_eq!(&*s.rows[0].family, "count");
        // One copy of a repeated text, shared.
        assert!(Arc::ptr_eq(&s.rows[0].scenario, &s.rows[1].scenario));
    }

    #[test]
    fn cells_keep_every_kind_across_words() {
        let kinds = |i: u64| match i % 5 {
            0 => EMPTY,
            1 => TEXT,
            2 => 0,
            3 => (-0.0f64).to_bits(),
            _ => (i as f64 * 1.5).to_bits(),
        };
        let cells = Cells::new((0..70).map(kinds));
        assert_eq!(cells.tags.len(), 3);
        assert_eq!(cells.values.len(), 28);
        for i in 0..70 {
            assert_eq!(cells.get(i as usize), Some(kinds(i)), "column {i}");
        }
    }

    #[test]
    fn timeline_groups_by_policy_in_first_appearance_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("timeline.csv");
        std::fs::write(
            &p,
            "policy,bin_start_us,bin_end_us,offered,admitted,rejected,failures,successes,closed_frac,\
             open_frac,half_open_frac,upstream_p95_ms,upstream_error_rate\n\
             zeta,0,10,5,5,0,1,4,1,0,0,12.5,0.2\n\
             alpha,0,10,5,3,2,0,3,0.5,0.5,0,,\n\
             zeta,10,20,6,6,0,0,6,1,0,0,10,0\n",
        )
        .unwrap();
        let s = timeline(&Table::read(&p).unwrap()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].policy, "zeta");
        assert_eq!(s[0].bins.len(), 2);
        assert_eq!(s[1].bins[0].upstream_p95_ms, None);
        assert_eq!(s[0].bins[0].upstream_p95_ms, Some(12.5));
        assert_eq!(s[1].bins[0].rejected, 2.0);
    }

    #[test]
    fn parameter_values_sort_by_magnitude() {
        let mut v = vec!["1m", "900ms", "30s", "10", "2", "abc"];
        v.sort_by(|a, b| param_order(a, b));
        assert_eq!(v, vec!["2", "10", "900ms", "30s", "1m", "abc"]);
    }
}
