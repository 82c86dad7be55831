//! Parses an output folder's CSV files into what the charts and the page show (the folder's one
//! reader, `report::folder`, hands them over). Columns are found by header name and extra
//! columns are ignored, so the charts survive new columns; an empty cell means "no value".
//! Errors name the file, the line and the column.

use super::ChartError;
use super::comparison::COMPARISON_METRICS;
use crate::policy::State;
use crate::report::folder::Reader;
use crate::report::page::TABLE_METRICS;
use crate::time::Dur;
use crate::truth::Expect;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A CSV file held as text cells, with the line number of every row for error messages. The
/// cells, trimmed, are held end to end in one text (no allocation per cell or per row).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The file read.
    pub path: PathBuf,
    /// Header names, trimmed.
    pub headers: Vec<String>,
    /// Every cell's text, one after the other.
    text: String,
    /// Where each cell ends in `text`.
    cells: Vec<usize>,
    /// Where each row's cells end in `cells`.
    rows: Vec<usize>,
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
        let mut chunk = Table::empty(path.to_path_buf(), headers);
        let mut rec = csv::StringRecord::new();
        while r.read_record(&mut rec).map_err(csv_err)? {
            chunk.lines.push(rec.position().map(|p| p.line()).unwrap_or(0));
            for cell in &rec {
                chunk.text.push_str(cell.trim());
                chunk.cells.push(chunk.text.len());
            }
            chunk.rows.push(chunk.cells.len());
            if chunk.rows.len() >= rows {
                each(&chunk)?;
                chunk.text.clear();
                chunk.cells.clear();
                chunk.rows.clear();
                chunk.lines.clear();
            }
        }
        Ok(chunk)
    }

    /// A table of `headers` without rows, read from `path`.
    fn empty(path: PathBuf, headers: Vec<String>) -> Table {
        Table { path, headers, text: String::new(), cells: Vec::new(), rows: Vec::new(), lines: Vec::new() }
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
            let k = kept.get_or_insert_with(|| Table::empty(t.path.clone(), t.headers.clone()));
            let n = max.saturating_sub(k.len()).min(t.len());
            // The first `n` rows of `t`, their cells' ends shifted past the kept ones.
            let cells = n.checked_sub(1).map_or(0, |last| t.rows[last]);
            let text = cells.checked_sub(1).map_or(0, |last| t.cells[last]);
            let (text_base, cells_base) = (k.text.len(), k.cells.len());
            k.text.push_str(&t.text[..text]);
            k.cells.extend(t.cells[..cells].iter().map(|end| end + text_base));
            k.rows.extend(t.rows[..n].iter().map(|end| end + cells_base));
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
        let first = row.checked_sub(1).map_or(0, |previous| self.rows[previous]);
        let cell = first + col;
        if cell >= self.rows[row] {
            return "";
        }
        let start = cell.checked_sub(1).map_or(0, |previous| self.cells[previous]);
        &self.text[start..self.cells[cell]]
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

/// Where each column the charts and the page read is in one summary.csv or pareto.csv, shared
/// by the rows read from it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Columns {
    /// Candidate numeric columns (every column but the text and parameter ones), in file order.
    numeric: Vec<String>,
    /// Position of each in `numeric`.
    index: HashMap<String, usize>,
    /// The file column of each numeric column.
    numeric_at: Vec<usize>,
    /// Parameter names (without `param.`), in file order.
    params: Vec<String>,
    /// The file column of each parameter.
    params_at: Vec<usize>,
    /// The file columns of the text columns (`policy` is required).
    policy: usize,
    scenario: Option<usize>,
    preset: Option<usize>,
    family: Option<usize>,
    config_id: Option<usize>,
    feasible: Option<usize>,
    seed: Option<usize>,
    replicates: Option<usize>,
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
    /// The columns of a file (`path`, for errors) with `headers`; of the numeric ones only those
    /// the report reads. A file without a `policy` column is refused.
    fn new(path: &Path, headers: &[String]) -> Result<Columns, ChartError> {
        let at = |name: &str| headers.iter().position(|h| h == name);
        let numeric: Vec<String> = headers
            .iter()
            .filter(|h| !(h.starts_with("param.") || TEXT_COLUMNS.contains(&h.as_str()) || *h == "feasible"))
            .filter(|h| read_by_report(h))
            .cloned()
            .collect();
        let params: Vec<String> =
            headers.iter().filter_map(|h| h.strip_prefix("param.")).map(str::to_string).collect();
        Ok(Columns {
            index: numeric.iter().enumerate().map(|(i, h)| (h.clone(), i)).collect(),
            numeric_at: numeric.iter().filter_map(|h| at(h)).collect(),
            params_at: params.iter().filter_map(|p| at(&format!("param.{p}"))).collect(),
            numeric,
            params,
            policy: at("policy").ok_or_else(|| ChartError::MissingColumn {
                path: path.to_path_buf(),
                column: "policy".into(),
            })?,
            scenario: at("scenario"),
            preset: at("preset"),
            family: at("family"),
            config_id: at("config_id"),
            feasible: at("feasible"),
            seed: at("seed"),
            replicates: at("replicates"),
        })
    }

    /// The `feasible` cell of `rec` (line `line` of `path`): `None` when absent or empty.
    fn feasible(&self, rec: &csv::StringRecord, path: &Path) -> Result<Option<bool>, ChartError> {
        match self.feasible.map(|f| cell(rec, Some(f))) {
            None | Some("") => Ok(None),
            Some("true" | "1" | "yes") => Ok(Some(true)),
            Some("false" | "0" | "no") => Ok(Some(false)),
            Some(value) => Err(ChartError::BadValue {
                path: path.to_path_buf(),
                line: rec.position().map_or(0, |p| p.line()),
                column: "feasible".into(),
                value: value.to_string(),
                expected: "true or false",
            }),
        }
    }

    /// The configuration of `rec`: its `config_id`, else its label.
    fn config<'r>(&self, rec: &'r csv::StringRecord) -> &'r str {
        match cell(rec, self.config_id) {
            "" => cell(rec, Some(self.policy)),
            id => id,
        }
    }
}

/// The trimmed text of column `at` of `rec` (empty when absent or short).
fn cell(rec: &csv::StringRecord, at: Option<usize>) -> &str {
    at.and_then(|i| rec.get(i)).map_or("", str::trim)
}

/// One row of summary.csv (or pareto.csv), a configuration on a scenario, as read: its cells
/// are parsed when asked for. A pass over the file hands every row in turn in one reused row;
/// a chart keeps the few it draws by cloning them.
#[derive(Debug, PartialEq)]
pub struct SummaryRow {
    rec: csv::StringRecord,
    columns: Arc<Columns>,
    feasible: Option<bool>,
    index: usize,
}

impl Clone for SummaryRow {
    /// A copy holding the row's text and nothing more (the reused row keeps the room of the
    /// longest row read, several times a row's text).
    fn clone(&self) -> SummaryRow {
        let mut rec = csv::StringRecord::with_capacity(self.rec.as_slice().len(), self.rec.len());
        for field in &self.rec {
            rec.push_field(field);
        }
        rec.set_position(self.rec.position().cloned());
        SummaryRow { rec, columns: Arc::clone(&self.columns), feasible: self.feasible, index: self.index }
    }
}

impl SummaryRow {
    /// Scenario name.
    pub fn scenario(&self) -> &str {
        cell(&self.rec, self.columns.scenario)
    }

    /// Configuration label.
    pub fn policy(&self) -> &str {
        cell(&self.rec, Some(self.columns.policy))
    }

    /// Policy family (sweeps), else the preset, else the label.
    pub fn family(&self) -> &str {
        let c = &self.columns;
        [c.family, c.preset]
            .into_iter()
            .map(|at| cell(&self.rec, at))
            .find(|s| !s.is_empty())
            .unwrap_or(self.policy())
    }

    /// Stable configuration id (sweeps), else the label.
    pub fn config_id(&self) -> &str {
        self.columns.config(&self.rec)
    }

    /// The base seed, as written (empty when the file has no `seed` column).
    pub fn seed(&self) -> &str {
        cell(&self.rec, self.columns.seed)
    }

    /// Replicates aggregated in the row, as written (empty when absent).
    pub fn replicates(&self) -> &str {
        cell(&self.rec, self.columns.replicates)
    }

    /// Whether the configuration met the sweep's constraints, when the file says.
    pub fn feasible(&self) -> Option<bool> {
        self.feasible
    }

    /// The row's position among the file's data rows (from 0).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The value of metric `name`, `None` when absent, empty, not a number or not finite.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let at = self.columns.numeric_at.get(*self.columns.index.get(name)?)?;
        cell(&self.rec, Some(*at)).parse::<f64>().ok().filter(|v| v.is_finite())
    }

    /// The value of parameter `name` (without `param.`) as written, `None` when the file has no
    /// such column.
    pub fn param(&self, name: &str) -> Option<&str> {
        let i = self.columns.params.iter().position(|p| p == name)?;
        Some(cell(&self.rec, Some(*self.columns.params_at.get(i)?)))
    }
}

/// Checks the rows of a chunk of pareto.csv as summary rows (a `policy` column, `feasible`
/// cells that say true or false).
pub fn check_rows(t: &Table) -> Result<(), ChartError> {
    let columns = Columns::new(&t.path, &t.headers)?;
    if let Some(f) = columns.feasible {
        for row in 0..t.len() {
            if !matches!(t.str(row, f), "" | "true" | "1" | "yes" | "false" | "0" | "no") {
                return Err(t.bad(row, f, "true or false"));
            }
        }
    }
    Ok(())
}

/// A file of an output folder opened anew for every pass over it (`None`: no such file), from
/// any chart's thread.
pub type Opener<'f> = Arc<dyn Fn(&str) -> std::io::Result<Option<Reader<'f>>> + Send + Sync + 'f>;

/// Configuration ids that are small integers (a sweep's) index a chart's per-configuration
/// totals directly; any other id is looked up by its text.
const DENSE_IDS: u32 = 1 << 24;

/// summary.csv as the charts and the page read it: what one checking pass found (columns,
/// scenarios, row count, the first row), and the file itself, which every chart reads again in
/// passes of its own keeping only what it draws, so no chart holds the rows.
#[derive(Clone)]
pub struct Summary<'f> {
    /// The file, for errors.
    path: PathBuf,
    /// Its name in the folder.
    name: String,
    open: Opener<'f>,
    columns: Arc<Columns>,
    /// Numeric column names some row has a value (or an empty cell) in, in file order
    /// (parameters and text columns excluded).
    pub metric_columns: Vec<String>,
    /// Parameter names (without `param.`) in file order.
    pub param_columns: Vec<String>,
    /// Scenarios in order of first appearance.
    pub scenarios: Vec<String>,
    /// Number of data rows.
    pub rows: usize,
    /// The first data row.
    pub first: Option<SummaryRow>,
    /// Every configuration's rows are consecutive (one scenario): one pass folds them.
    grouped: bool,
    /// Every configuration id is an integer below [`DENSE_IDS`] and the largest is not far
    /// beyond the row count: ids index the per-configuration totals.
    dense: bool,
}

impl PartialEq for Summary<'_> {
    fn eq(&self, o: &Self) -> bool {
        (&self.path, &self.name, &self.columns, &self.metric_columns, &self.param_columns)
            == (&o.path, &o.name, &o.columns, &o.metric_columns, &o.param_columns)
            && (&self.scenarios, self.rows, &self.first, self.grouped, self.dense)
                == (&o.scenarios, o.rows, &o.first, o.grouped, o.dense)
    }
}

impl std::fmt::Debug for Summary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summary")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .field("metric_columns", &self.metric_columns)
            .field("param_columns", &self.param_columns)
            .field("scenarios", &self.scenarios)
            .field("grouped", &self.grouped)
            .field("dense", &self.dense)
            .finish()
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
    /// Reads the file `name` of the folder `dir` (for errors) that `open` opens, in one
    /// checking pass holding one row; `None` when the folder has no such file.
    pub fn read(dir: &Path, name: &str, open: Opener<'f>) -> Result<Option<Summary<'f>>, ChartError> {
        let path = dir.join(name);
        let Some(reader) = open(name).map_err(|source| ChartError::Io { path: path.clone(), source })? else {
            return Ok(None);
        };
        let mut r = csv_reader(reader);
        let headers: Vec<String> =
            r.headers().map_err(|e| csv_error(&path, e))?.iter().map(|h| h.trim().to_string()).collect();
        let columns = Arc::new(Columns::new(&path, &headers)?);
        let mut present = vec![false; columns.numeric.len()];
        let mut scenarios: Vec<String> = Vec::new();
        let mut known: HashSet<String> = HashSet::new();
        let mut seen =
            Seen { prev: String::new(), split: false, bits: Some(Vec::new()), texts: HashSet::new(), max: 0 };
        let (mut rows, mut first) = (0, None);
        let mut rec = csv::StringRecord::new();
        while r.read_record(&mut rec).map_err(|e| csv_error(&path, e))? {
            let feasible = columns.feasible(&rec, &path)?;
            for (p, &at) in present.iter_mut().zip(&columns.numeric_at).filter(|(p, _)| !**p) {
                let text = cell(&rec, Some(at));
                *p = text.is_empty() || text.parse::<f64>().is_ok();
            }
            let scenario = cell(&rec, columns.scenario);
            if !known.contains(scenario) {
                known.insert(scenario.to_string());
                scenarios.push(scenario.to_string());
            }
            seen.see(columns.config(&rec));
            if first.is_none() {
                first =
                    Some(SummaryRow { rec: rec.clone(), columns: Arc::clone(&columns), feasible, index: 0 });
            }
            rows += 1;
        }
        let metric_columns = columns
            .numeric
            .iter()
            .filter(|h| columns.index.get(*h).is_some_and(|&i| present[i]))
            .cloned()
            .collect();
        let dense = seen.bits.is_some() && (seen.max as usize) <= 4 * rows + 1024;
        Ok(Some(Summary {
            path,
            name: name.to_string(),
            open,
            param_columns: columns.params.clone(),
            columns,
            metric_columns,
            scenarios,
            rows,
            first,
            grouped: !seen.split,
            dense,
        }))
    }

    /// Hands every row to `each` in file order, holding one row.
    pub fn for_each(
        &self,
        mut each: impl FnMut(&SummaryRow) -> Result<(), ChartError>,
    ) -> Result<(), ChartError> {
        let io = |source| ChartError::Io { path: self.path.clone(), source };
        let reader =
            (self.open)(&self.name).map_err(io)?.ok_or_else(|| io(std::io::ErrorKind::NotFound.into()))?;
        let mut r = csv_reader(reader);
        let mut row = SummaryRow {
            rec: csv::StringRecord::new(),
            columns: Arc::clone(&self.columns),
            feasible: None,
            index: 0,
        };
        while r.read_record(&mut row.rec).map_err(|e| csv_error(&self.path, e))? {
            row.feasible = self.columns.feasible(&row.rec, &self.path)?;
            each(&row)?;
            row.index += 1;
        }
        Ok(())
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

    /// The summary in `bytes` (tests).
    #[cfg(test)]
    pub fn of_text(text: &str) -> Summary<'static> {
        let bytes: Arc<[u8]> = text.as_bytes().into();
        let open: Opener<'static> =
            Arc::new(move |_: &str| Ok(Some(Box::new(std::io::Cursor::new(Arc::clone(&bytes))) as Reader)));
        Summary::read(Path::new(""), "summary.csv", open).unwrap().unwrap()
    }
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

/// A CSV reader of `reader` that refuses rows of the wrong length.
fn csv_reader<R: std::io::Read>(reader: R) -> csv::Reader<R> {
    csv::ReaderBuilder::new().flexible(false).from_reader(reader)
}

/// A CSV error of the file `path`, with its line.
fn csv_error(path: &Path, e: csv::Error) -> ChartError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    ChartError::Csv { path: path.to_path_buf(), line, message: e.to_string() }
}

/// Reads summary.csv or pareto.csv at `path` (tests).
#[cfg(test)]
pub fn read_summary(path: &Path) -> Result<Summary<'static>, ChartError> {
    let (dir, name) = (
        path.parent().unwrap_or(Path::new("")).to_path_buf(),
        path.file_name().unwrap_or_default().to_string_lossy().into_owned(),
    );
    let open: Opener<'static> = Arc::new(move |n: &str| {
        std::fs::File::open(dir.join(n)).map(|f| Some(Box::new(std::io::BufReader::new(f)) as Reader))
    });
    Summary::read(path.parent().unwrap_or(Path::new("")), &name, open).map(|s| s.expect("the file"))
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
    fn a_head_keeps_the_first_rows_across_chunks_trimmed() {
        let mut text = String::from(" a , b\n");
        for i in 0..2500 {
            text.push_str(&format!(" {i} ,x{i}\n"));
        }
        let (head, rows) = Table::head(Path::new("t.csv"), text.as_bytes(), 1500, |_| Ok(())).unwrap();
        assert_eq!((head.len(), rows), (1500, 2500));
        assert_eq!(head.headers, ["a", "b"]);
        assert_eq!(
            (head.str(0, 0), head.str(1024, 1), head.str(1499, 1), head.str(1499, 2)),
            ("0", "x1024", "x1499", "")
        );
        let all = table(&text);
        assert_eq!(all.len(), 2500);
        assert!((0..1500).all(|r| (0..2).all(|c| all.str(r, c) == head.str(r, c))));
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
        let s = Summary::of_text(
            "scenario,policy,preset,seed,replicates,config_id,family,param.threshold,param.open_for,\
             false_opens,false_opens_sd,false_opens_ci95,detection_delay_mean_s,probes,probes_ci95,feasible,note\n\
             s1,c1,,1,3,c1,count,5,30s,2,0.7,0.5,,1,0.1,true,ok\n\
             s1,c2,,1,3,c2,count,10,1m,0,0,0,4.5,2,0.2,false,ok\n",
        );
        assert_eq!(s.param_columns, vec!["threshold", "open_for"]);
        // Spreads and the half-widths nothing shows are not read.
        assert_eq!(
            s.metric_columns,
            vec!["false_opens", "false_opens_ci95", "detection_delay_mean_s", "probes"]
        );
        let mut rows = Vec::new();
        s.for_each(|r| {
            rows.push(r.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!((rows[0].metric("false_opens_sd"), rows[0].metric("probes_ci95")), (None, None));
        assert_eq!(rows[0].metric("false_opens_ci95"), Some(0.5));
        assert_eq!(rows[0].metric("detection_delay_mean_s"), None);
        assert_eq!(rows[1].metric("detection_delay_mean_s"), Some(4.5));
        assert_eq!(rows[1].param("open_for"), Some("1m"));
        assert_eq!(rows[0].feasible(), Some(true));
        assert_eq!(rows[1].feasible(), Some(false));
        assert_eq!(rows[0].family(), "count");
        assert_eq!(
            (s.rows, s.scenarios.as_slice(), s.first.as_ref()),
            (2, &["s1".to_string()][..], Some(&rows[0]))
        );
        // A bad feasibility cell names its line.
        let bad = "scenario,policy,feasible\ns,a,true\ns,b,maybe\n";
        let e = read_text(bad).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("maybe"), "{e}");
        assert!(read_text("scenario,cost\ns,1\n").unwrap_err().to_string().contains("`policy`"));
    }

    fn read_text(text: &str) -> Result<Option<Summary<'static>>, ChartError> {
        let bytes: Arc<[u8]> = text.as_bytes().into();
        let open: Opener<'static> =
            Arc::new(move |_: &str| Ok(Some(Box::new(std::io::Cursor::new(Arc::clone(&bytes))) as Reader)));
        Summary::read(Path::new(""), "summary.csv", open)
    }

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
