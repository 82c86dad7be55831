//! Parses an output folder's CSV files into the charts' typed input (`charts::data`):
//! timeline.csv, transitions.csv, incidents.csv, latency.csv, summary.csv and pareto.csv's first
//! rows. Columns are found by header name and extra columns are ignored, so the charts survive
//! new columns; an empty cell means "no value". Errors name the file, the line and the column.

use crate::policy::State;
use crate::report::charts::ChartError;
use crate::report::charts::data::{
    Bin, Columns, Identity, Incident, LatencyHist, SINGLE_POLICY, Series, Summary, SummaryRow, Survey,
    TransitionRow,
};
use crate::truth::Expect;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file of the folder, open for reading.
pub type Reader<'f> = Box<dyn std::io::Read + 'f>;

/// A file of an output folder opened anew for every pass over it (`None`: no such file), from
/// any chart's thread.
pub type Opener<'f> = Arc<dyn Fn(&str) -> std::io::Result<Option<Reader<'f>>> + Send + Sync + 'f>;

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

/// Where summary.csv's (or pareto.csv's) columns are.
struct Layout {
    columns: Arc<Columns>,
    /// The file column of each metric column.
    metrics_at: Vec<usize>,
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

/// The trimmed text of column `at` of `rec` (empty when absent or short).
fn cell(rec: &csv::StringRecord, at: Option<usize>) -> &str {
    at.and_then(|i| rec.get(i)).map_or("", str::trim)
}

impl Layout {
    /// The columns of a file (`path`, for errors) with `headers`. A file without a `policy`
    /// column is refused.
    fn new(path: &Path, headers: &[String]) -> Result<Layout, ChartError> {
        let at = |name: &str| headers.iter().position(|h| h == name);
        let columns = Arc::new(Columns::new(headers));
        Ok(Layout {
            metrics_at: columns.metrics().iter().filter_map(|h| at(h)).collect(),
            params_at: columns.params().iter().filter_map(|p| at(&format!("param.{p}"))).collect(),
            columns,
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

    /// The `feasible` cell of `rec` (a row of `path`): `None` when absent or empty.
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

    /// Makes `row` the row `rec` of `path`: a metric cell that is not a finite number has no
    /// value.
    fn fill(&self, rec: &csv::StringRecord, path: &Path, row: &mut SummaryRow) -> Result<(), ChartError> {
        row.set(&Identity {
            scenario: cell(rec, self.scenario),
            policy: cell(rec, Some(self.policy)),
            family: cell(rec, self.family),
            preset: cell(rec, self.preset),
            config_id: cell(rec, self.config_id),
            seed: cell(rec, self.seed),
            replicates: cell(rec, self.replicates),
            feasible: self.feasible(rec, path)?,
        });
        for (i, &at) in self.metrics_at.iter().enumerate() {
            row.set_metric_at(i, cell(rec, Some(at)).parse().ok());
        }
        for (i, &at) in self.params_at.iter().enumerate() {
            row.set_param_at(i, cell(rec, Some(at)));
        }
        Ok(())
    }
}

/// Checks the rows of a chunk of pareto.csv as summary rows (a `policy` column, `feasible`
/// cells that say true or false).
pub fn check_rows(t: &Table) -> Result<(), ChartError> {
    let _ = Layout::new(&t.path, &t.headers)?;
    if let Some(f) = t.col("feasible") {
        for row in 0..t.len() {
            if !matches!(t.str(row, f), "" | "true" | "1" | "yes" | "false" | "0" | "no") {
                return Err(t.bad(row, f, "true or false"));
            }
        }
    }
    Ok(())
}

/// Reads summary.csv (or a file of its form), `name` in the folder `dir` (for errors) that
/// `open` opens, in one checking pass holding one row; `None` when the folder has no such file.
/// Every pass the charts make reads the file again.
pub fn summary<'f>(dir: &Path, name: &str, open: Opener<'f>) -> Result<Option<Summary<'f>>, ChartError> {
    let path = dir.join(name);
    let Some(reader) = open(name).map_err(|source| ChartError::Io { path: path.clone(), source })? else {
        return Ok(None);
    };
    let mut r = csv_reader(reader);
    let headers: Vec<String> =
        r.headers().map_err(|e| csv_error(&path, e))?.iter().map(|h| h.trim().to_string()).collect();
    let layout = Arc::new(Layout::new(&path, &headers)?);
    // A metric column is one some row has a number (or an empty cell) in.
    let mut present = vec![false; layout.metrics_at.len()];
    let mut survey = Survey::default();
    let mut row = SummaryRow::new(Arc::clone(&layout.columns));
    let mut rec = csv::StringRecord::new();
    while r.read_record(&mut rec).map_err(|e| csv_error(&path, e))? {
        layout.fill(&rec, &path, &mut row)?;
        for (p, &at) in present.iter_mut().zip(&layout.metrics_at).filter(|(p, _)| !**p) {
            let text = cell(&rec, Some(at));
            *p = text.is_empty() || text.parse::<f64>().is_ok();
        }
        survey.add(&row);
    }
    let metric_columns =
        layout.columns.metrics().iter().zip(&present).filter(|(_, p)| **p).map(|(m, _)| m.clone()).collect();
    let (columns, name) = (Arc::clone(&layout.columns), name.to_string());
    let rows_of = move |row: &mut SummaryRow, fill: &mut crate::report::charts::data::Fill| {
        let io = |source| ChartError::Io { path: path.clone(), source };
        let reader = open(&name).map_err(io)?.ok_or_else(|| io(std::io::ErrorKind::NotFound.into()))?;
        let mut r = csv_reader(reader);
        let mut rec = csv::StringRecord::new();
        while r.read_record(&mut rec).map_err(|e| csv_error(&path, e))? {
            layout.fill(&rec, &path, row)?;
            fill(row)?;
        }
        Ok(())
    };
    Ok(Some(survey.finish(columns, metric_columns, Arc::new(rows_of))))
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

/// summary.csv's `text`, read (tests).
#[cfg(test)]
pub fn summary_of_text(text: &str) -> Result<Option<Summary<'static>>, ChartError> {
    let bytes: Arc<[u8]> = text.as_bytes().into();
    let open: Opener<'static> =
        Arc::new(move |_: &str| Ok(Some(Box::new(std::io::Cursor::new(Arc::clone(&bytes))) as Reader)));
    summary(Path::new(""), "summary.csv", open)
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
        let e = summary_of_text(bad).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("maybe"), "{e}");
        assert!(summary_of_text("scenario,cost\ns,1\n").unwrap_err().to_string().contains("`policy`"));
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
}
