//! The review report of an output folder: report.html, one self-contained page (charts embedded
//! as base64 data URIs, inline CSS, nothing fetched from the network), and report.md with the
//! same tables for pasting into a pull request. Both are built from the folder's contents (typed,
//! `report::contents`: what the command computed, or what `report DIR` read) and its charts,
//! in memory, plus the inputs needed to reproduce the
//! run ([`ReportInputs`], kept beside them in inputs.toml so `breakerlab report DIR` can rebuild
//! the page later).

use super::charts::data::{Summary, SummaryRow};
use super::charts::style::{fmt_num, fmt_pct};
use super::charts::{self, Chart, ChartError};
use super::contents::{Contents, ParetoRows};
use crate::InputError;
use crate::scenario::{Scenario, Source};
use crate::sweep::review::{BaselineReview, Difference, Review};
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// File name of the HTML report.
pub const REPORT_HTML: &str = "report.html";
/// File name of the Markdown report.
pub const REPORT_MD: &str = "report.md";
/// File in the output folder that keeps the run's [`ReportInputs`].
pub const INPUTS_FILE: &str = "inputs.toml";
/// Most summary rows in report.md (a pull request comment must stay short); the HTML page
/// shows up to [`HTML_MAX_ROWS`].
pub const MD_MAX_ROWS: usize = 30;
/// Most summary rows in report.html, and most Pareto rows in either page.
pub const HTML_MAX_ROWS: usize = 2000;

/// Inputs up to this many bytes are embedded (in inputs.toml and both pages); a larger one, a
/// week-long trace or script, is recorded by path, size and SHA-256 only, so it is not copied
/// three times into the folder.
pub const EMBED_LIMIT: u64 = 256 * 1024;

/// One input file of the run: its name, size and SHA-256, and its text when it is UTF-8 text of
/// at most [`EMBED_LIMIT`] bytes. [`InputFile::read`] and [`InputFile::of_text`] are the one
/// place that rule is applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The name or path as given on the command line.
    pub name: String,
    /// Its size in bytes.
    #[serde(default)]
    pub bytes: u64,
    /// SHA-256 of its bytes, hex (what `sha256sum` prints).
    #[serde(default)]
    pub sha256: String,
    /// The file's text, when embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// What the run made of it (a replayed trace's import counts), shown beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl InputFile {
    /// The file at `path`, named as written; `None` when it cannot be read (the report then
    /// simply lists fewer inputs: the run itself already read it). A large file is hashed in
    /// blocks, never held in memory.
    pub fn read(path: &Path) -> Option<InputFile> {
        InputFile::read_as(path, true)
    }

    /// As [`InputFile::read`], but a file too large to embed is not hashed: its `sha256` is left
    /// empty for whoever hashes it.
    pub fn read_unhashed(path: &Path) -> Option<InputFile> {
        InputFile::read_as(path, false)
    }

    fn read_as(path: &Path, hash: bool) -> Option<InputFile> {
        let name = path.display().to_string();
        // Not a pipe or a device (a piped script was read once, by the run).
        let bytes = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?.len();
        if bytes <= EMBED_LIMIT {
            return std::fs::read(path).ok().map(|b| InputFile::of_bytes(name, &b));
        }
        let sha256 = if hash {
            let file = std::fs::File::open(path).ok()?;
            // Read a MiB at a time: 8 KiB reads cost a week's script (9 MB) over a thousand calls.
            crate::sweep::shard::sha256_reader(std::io::BufReader::with_capacity(1 << 20, file)).ok()?
        } else {
            String::new()
        };
        Some(InputFile { name, bytes, sha256, text: None, note: None })
    }

    /// A file known by its text (a sweep file kept in a shard's manifest), under the same rule.
    pub fn of_text(name: String, text: &str) -> InputFile {
        InputFile::of_bytes(name, text.as_bytes())
    }

    fn of_bytes(name: String, bytes: &[u8]) -> InputFile {
        let text = (bytes.len() as u64 <= EMBED_LIMIT)
            .then(|| std::str::from_utf8(bytes).ok().map(str::to_string))
            .flatten();
        let sha256 = crate::sweep::shard::sha256_hex(bytes);
        InputFile { name, bytes: bytes.len() as u64, sha256, text, note: None }
    }

    /// Why the text is not shown, and how to check one has the same file.
    fn not_embedded(&self) -> String {
        let why = if self.bytes > EMBED_LIMIT {
            format!("larger than {} KiB", EMBED_LIMIT / 1024)
        } else {
            "not UTF-8 text".to_string()
        };
        format!("not embedded ({why}): {} bytes, SHA-256 {}", self.bytes, self.sha256)
    }
}

/// What a reader needs to reproduce the run: shown in the report and saved in inputs.toml.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportInputs {
    /// A heading for the report ("sweep: thresholds.toml"); the folder name when empty.
    #[serde(default)]
    pub title: String,
    /// The command line that produced the folder, as typed.
    #[serde(default)]
    pub command_line: Option<String>,
    /// The base seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Version of breakerlab that ran the simulation.
    pub version: String,
    /// The breakers of the timeline's run, one name per breaker in transitions.csv's
    /// `instance` order (`primary`, `secondary`; `instance 3`), when there are several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakers: Vec<String>,
    /// The providers of the timeline's run, in priority order (empty without `[[providers]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    /// The absolute time of the run's time zero (µs since the Unix epoch) when its input had
    /// absolute timestamps (a replayed trace): the timeline's axis then shows UTC clock time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_us: Option<i64>,
    /// The scenario, sweep and other input files, in the order given.
    #[serde(default)]
    pub files: Vec<InputFile>,
    /// What a run's, replay's or comparison's page opens on, kept so `breakerlab report DIR`
    /// opens the rebuilt page on the same answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<super::opening::Opening>,
}

impl Default for ReportInputs {
    fn default() -> Self {
        ReportInputs {
            title: String::new(),
            command_line: None,
            seed: None,
            version: env!("CARGO_PKG_VERSION").to_string(),
            breakers: Vec::new(),
            providers: Vec::new(),
            epoch_us: None,
            files: Vec::new(),
            opening: None,
        }
    }
}

impl ReportInputs {
    /// These inputs with what the timeline needs to know about `scenario`'s run: its breakers'
    /// names, its providers and the absolute time of its time zero.
    pub fn with_scenario(mut self, scenario: &Scenario) -> ReportInputs {
        self.providers = match &scenario.source {
            Source::Providers { providers, .. } => providers.iter().map(|p| p.name.clone()).collect(),
            _ => Vec::new(),
        };
        self.breakers =
            breaker_names(scenario.client.instances, scenario.client.shared_breaker, &self.providers);
        self.epoch_us = scenario.import_report().map(|r| r.epoch_offset_us).filter(|e| *e != 0);
        self
    }

    /// The text of inputs.toml.
    pub fn to_toml(&self) -> Result<String, ChartError> {
        toml::to_string(self).map_err(|e| ChartError::Draw(format!("inputs.toml: {e}")))
    }

    /// Parses the text of inputs.toml; `path` names it in errors.
    pub fn from_toml(path: &Path, text: &str) -> Result<ReportInputs, ChartError> {
        toml::from_str(text).map_err(|e| ChartError::Toml(InputError::from_toml(path, text, &e)))
    }
}

/// The names of a run's breakers in the engine's order (client instance by instance, each
/// with one breaker per provider); empty when there is only one.
pub fn breaker_names(instances: u32, shared: bool, providers: &[String]) -> Vec<String> {
    let slots = if shared { 1 } else { instances.max(1) as usize };
    if slots * providers.len().max(1) <= 1 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for slot in 0..slots {
        match providers {
            [] => out.push(format!("instance {slot}")),
            _ if slots == 1 => out.extend(providers.iter().cloned()),
            _ => out.extend(providers.iter().map(|p| format!("instance {slot} · {p}"))),
        }
    }
    out
}

/// The lanes of a run whose breakers are one outlier detector's hosts per client (instance
/// `client × hosts + host`), each host named by `hosts` (`host 3`, or a replayed log's value
/// such as `pod-b`): the host's name with one client, `client 1 · host 3` with several.
pub fn host_lane_names(clients: usize, hosts: &[String]) -> Vec<String> {
    (0..clients)
        .flat_map(|c| {
            hosts.iter().map(move |h| if clients == 1 { h.clone() } else { format!("client {c} · {h}") })
        })
        .collect()
}

/// Summary columns shown in the tables: (column, heading).
pub(crate) const TABLE_METRICS: [(&str, &str); 13] = [
    ("false_opens", "false opens"),
    ("missed_incidents", "missed incidents"),
    ("detection_delay_mean_s", "detection delay mean (s)"),
    ("detection_delay_p95_s", "detection delay p95 (s)"),
    ("recovery_lag_mean_s", "recovery lag mean (s)"),
    ("flaps", "flaps"),
    ("wasted_quota", "wasted quota (attempts)"),
    ("amplification", "amplification"),
    ("shed_healthy", "shed while healthy"),
    ("availability", "availability"),
    ("latency_p95_ms", "latency p95 (ms)"),
    ("latency_p99_ms", "latency p99 (ms)"),
    ("cost", "cost"),
];

/// A table ready to print: headings and text cells.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TextTable {
    pub(super) headings: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
    /// Index of the recommended row, when it is in the table.
    pub(super) highlight: Option<usize>,
    /// Rows left out.
    pub(super) omitted: usize,
    /// Where the rows left out are, and which were kept: the end of "N more rows in …".
    pub(super) omitted_note: &'static str,
    /// Per column, true for text (left-aligned), false for numbers.
    pub(super) left: Vec<bool>,
}

fn cell(row: &SummaryRow, col: &str) -> String {
    let Some(v) = row.metric(col) else { return "–".to_string() };
    let main = if col == "availability" { fmt_pct(v) } else { fmt_num(v) };
    match row.metric(&format!("{col}_ci95")) {
        Some(ci) if ci > 0.0 => {
            let ci = if col == "availability" { fmt_pct(ci) } else { fmt_num(ci) };
            format!("{main} ± {ci}")
        }
        _ => main,
    }
}

/// A summary row and where it ranks for the pages' tables: the recommended configuration's
/// rows first, then the lowest cost (none last), then file order.
#[derive(Clone, Debug)]
struct Rank {
    recommended: bool,
    cost: f64,
    index: usize,
    row: SummaryRow,
}

impl PartialEq for Rank {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}

impl Eq for Rank {}

impl Ord for Rank {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.recommended.cmp(&self.recommended).then(self.cost.total_cmp(&o.cost)).then(self.index.cmp(&o.index))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// What the pages' summary tables show of summary.csv, from one pass over it: the best
/// [`HTML_MAX_ROWS`] rows by [`Rank`], how many there are, the parameters that vary and
/// whether the file says which rows qualify.
#[derive(Clone, Debug, PartialEq)]
struct SummaryRows {
    /// The rows kept, best first.
    kept: Vec<SummaryRow>,
    /// Rows in the file.
    total: usize,
    /// Parameters that take several values within one family (a preset without the parameter,
    /// an empty cell, is no variation).
    varying: Vec<String>,
    /// Some row says whether it meets the constraints.
    feasible: bool,
    /// The metric columns shown: (column, heading).
    metrics: Vec<(&'static str, &'static str)>,
}

impl SummaryRows {
    /// Reads `s` keeping at most [`HTML_MAX_ROWS`] rows.
    fn read(s: &Summary, recommended: Option<&str>) -> Result<SummaryRows, ChartError> {
        use std::collections::{BinaryHeap, HashMap};
        let params = &s.param_columns;
        let mut heap: BinaryHeap<Rank> = BinaryHeap::new();
        // Per family, the first value of each parameter; and which parameters vary.
        let mut first: HashMap<String, Vec<Option<String>>> = HashMap::new();
        let mut varies = vec![false; params.len()];
        let mut feasible = false;
        s.for_each(|r| {
            feasible |= r.feasible().is_some();
            let values = match first.get_mut(r.family()) {
                Some(v) => v,
                None => first.entry(r.family().to_string()).or_insert(vec![None; params.len()]),
            };
            for ((p, seen), varies) in params.iter().zip(values).zip(&mut varies) {
                match (r.param(p).filter(|x| !x.is_empty()), seen.as_deref()) {
                    (Some(v), None) => *seen = Some(v.to_string()),
                    (Some(v), Some(w)) => *varies |= v != w,
                    (None, _) => {}
                }
            }
            let (recommended, cost) =
                (recommended == Some(r.policy()), r.metric("cost").unwrap_or(f64::INFINITY));
            let better = |w: &Rank| {
                let worst = (!w.recommended, w.cost, w.index);
                (!recommended)
                    .cmp(&worst.0)
                    .then(cost.total_cmp(&worst.1))
                    .then(r.index().cmp(&worst.2))
                    .is_lt()
            };
            if heap.len() < HTML_MAX_ROWS || heap.peek().is_some_and(better) {
                heap.push(Rank { recommended, cost, index: r.index(), row: r.clone() });
                if heap.len() > HTML_MAX_ROWS {
                    heap.pop();
                }
            }
            Ok(())
        })?;
        Ok(SummaryRows {
            kept: heap.into_sorted_vec().into_iter().map(|k| k.row).collect(),
            total: s.rows,
            varying: params.iter().zip(varies).filter(|(_, v)| *v).map(|(p, _)| p.clone()).collect(),
            feasible,
            metrics: TABLE_METRICS
                .iter()
                .copied()
                .filter(|(c, _)| s.metric_columns.iter().any(|m| m == c))
                .collect(),
        })
    }
}

/// The summary as a text table: scenario, configuration, parameters that vary, feasibility,
/// then the metrics present. With more than `max` rows (at most [`HTML_MAX_ROWS`]), the `max`
/// lowest-cost rows are kept (file order when there is no cost), the recommended row always
/// among them.
fn summary_table(s: &SummaryRows, recommended: Option<&str>, max: usize) -> TextTable {
    let mut headings = vec!["scenario".to_string(), "configuration".to_string()];
    headings.extend(s.varying.iter().cloned());
    if s.feasible {
        headings.push("meets constraints".into());
    }
    headings.extend(s.metrics.iter().map(|m| m.1.to_string()));
    let mut order: Vec<&SummaryRow> = s.kept.iter().collect();
    let mut omitted = 0;
    if s.total > max {
        let cost = |r: &SummaryRow| r.metric("cost").unwrap_or(f64::INFINITY);
        order.truncate(max);
        order.sort_by(|a, b| cost(a).total_cmp(&cost(b)).then(a.index().cmp(&b.index())));
        omitted = s.total - max;
    } else {
        order.sort_by_key(|r| r.index());
    }
    let mut highlight = None;
    let rows = order
        .iter()
        .enumerate()
        .map(|(k, r)| {
            if recommended == Some(r.policy()) && highlight.is_none() {
                highlight = Some(k);
            }
            let mut row = vec![r.scenario().to_string(), r.policy().to_string()];
            row.extend(s.varying.iter().map(|p| r.param(p).unwrap_or_default().to_string()));
            if s.feasible {
                row.push(match r.feasible() {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "–".into(),
                });
            }
            row.extend(s.metrics.iter().map(|(c, _)| cell(r, c)));
            row
        })
        .collect();
    let left = (0..headings.len()).map(|i| i < 2).collect();
    TextTable { headings, rows, highlight, omitted, omitted_note: SUMMARY_OMITTED, left }
}

/// The charts in the order the report shows them: timeline, comparison, Pareto, heatmaps by
/// name, latency.
fn chart_order(charts: &[Chart]) -> Vec<&Chart> {
    let named = |n: &'static str| charts.iter().filter(move |c| c.name == n);
    let mut heatmaps: Vec<&Chart> = charts.iter().filter(|c| c.name.starts_with("heatmap_")).collect();
    heatmaps.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out: Vec<&Chart> = Vec::new();
    for n in [charts::TIMELINE_PNG, charts::COMPARISON_PNG, charts::PARETO_PNG] {
        out.extend(named(n));
    }
    out.extend(heatmaps);
    out.extend(named(charts::LATENCY_PNG));
    out
}

fn chart_caption(name: &str) -> String {
    match name {
        charts::TIMELINE_PNG => "Timeline: dependency health, breaker states and traffic".into(),
        charts::COMPARISON_PNG => {
            "Metrics of the compared configurations, with 95% confidence intervals".into()
        }
        charts::PARETO_PNG => {
            "Trade-offs between configurations, ringed: the front among those that qualify".into()
        }
        charts::LATENCY_PNG => "User-perceived latency distribution".into(),
        n => format!("Heatmap {}", n.trim_start_matches("heatmap_").trim_end_matches(".png")),
    }
}

/// Escapes text for HTML element content and attribute values.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes prose for HTML, its Markdown code spans (`` `missed_incidents <= 0.5` ``) becoming
/// `<code>` (an unpaired backtick stays as it is), so the HTML page reads as the Markdown one.
pub(super) fn esc_prose(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len() < 3 {
        return esc(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        let closed = i % 2 == 1 && i + 1 < parts.len();
        match (i % 2, closed) {
            (1, true) => {
                out.push_str("<code>");
                out.push_str(&esc(part));
                out.push_str("</code>");
            }
            (1, false) => {
                out.push('`');
                out.push_str(&esc(part));
            }
            _ => out.push_str(&esc(part)),
        }
    }
    out
}

/// Escapes a Markdown table cell (pipes and line breaks).
pub(super) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A fence for `text` longer than any backtick run inside it.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn lang_of(name: &str) -> &'static str {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        Some("toml") => "toml",
        Some("csv") => "csv",
        Some("json") => "json",
        _ => "",
    }
}

/// Everything the pages show.
struct View<'a> {
    title: String,
    review: Option<&'a Review>,
    summary: Option<SummaryRows>,
    pareto: Option<&'a ParetoRows>,
    recommended: Option<&'a str>,
    explanation: Option<&'a str>,
    deploy: Option<&'a str>,
    charts: Vec<&'a Chart>,
    marks: &'a [super::explain::Mark],
    opening: Option<&'a super::opening::Opening>,
}

fn view<'a>(
    c: &'a Contents,
    charts: &'a [Chart],
    inputs: &ReportInputs,
    dir: &Path,
) -> Result<View<'a>, ChartError> {
    let title = if inputs.title.is_empty() {
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
    } else {
        inputs.title.clone()
    };
    Ok(View {
        title,
        review: c.review.as_ref(),
        summary: c.summary.as_ref().map(|s| SummaryRows::read(s, c.recommended.as_deref())).transpose()?,
        pareto: c.pareto.as_ref(),
        recommended: c.recommended.as_deref(),
        explanation: c.explanation.as_deref(),
        deploy: c.deploy.as_deref(),
        charts: chart_order(charts),
        marks: &c.marks,
        opening: c.opening.as_ref(),
    })
}

/// Where the summary table's rows left out are.
const SUMMARY_OMITTED: &str = "more rows in summary.csv (lowest cost shown)";

/// pareto.csv as a text table (every column but the configuration id), the recommended
/// configuration's rows highlighted (the first of them). Beyond `max` rows (a sweep of many
/// configurations with many ties on a front), the first `max` are shown and the rest counted.
fn pareto_table(p: &ParetoRows, recommended: Option<&str>, max: usize) -> TextTable {
    let cols: Vec<usize> = (0..p.headers.len()).filter(|&c| p.headers[c] != "config_id").collect();
    let policy = p.headers.iter().position(|h| h == "policy");
    fn text(r: &[String], c: usize) -> &str {
        r.get(c).map_or("", String::as_str)
    }
    let mut highlight = None;
    let rows = p.head[..p.head.len().min(max)]
        .iter()
        .enumerate()
        .map(|(k, r)| {
            if highlight.is_none() && recommended.is_some() && policy.map(|c| text(r, c)) == recommended {
                highlight = Some(k);
            }
            cols.iter()
                .map(|&c| match text(r, c).parse::<f64>() {
                    Ok(v) if p.headers[c] == "cost" || p.headers[c].starts_with("value_") => fmt_num(v),
                    _ => text(r, c).to_string(),
                })
                .collect()
        })
        .collect();
    let headings: Vec<String> = cols.iter().map(|&c| p.headers[c].clone()).collect();
    let left = headings.iter().map(|h| h != "cost" && !h.starts_with("value_")).collect();
    let omitted = p.rows.saturating_sub(max.min(p.head.len()));
    TextTable {
        headings,
        rows,
        highlight,
        omitted,
        omitted_note: "more rows in pareto.csv (the first shown)",
        left,
    }
}

/// The page's style. Narrow screens (420 px) work: tables scroll sideways in their own box (the
/// decision table and a page's opening become one card per row instead),
/// charts shrink to the width or show their narrow rendering (each links to its full-size PNG),
/// long commands scroll in theirs.
const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;\
margin:1.5em auto;max-width:1680px;padding:0 1em;color:#1b1b1b;line-height:1.45;overflow-wrap:break-word}\
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
.meta{color:#555}.rec{background:#eef6f1;border-left:5px solid #009E73;padding:.8em 1.2em;white-space:pre-wrap;\
overflow-x:auto}.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:.88em;\
font-variant-numeric:tabular-nums}th,td{border:1px solid #d0d0d0;padding:.3em .6em;text-align:right;\
white-space:nowrap}th{background:#f3f3f3}td.t,th.t{text-align:left}td.t{white-space:normal;\
overflow-wrap:break-word;min-width:8em;max-width:24em}td.t:first-child{overflow-wrap:anywhere}tr.best td{background:#fff3c4;\
font-weight:600}figure{margin:1.5em 0}img{max-width:100%;height:auto;border:1px solid #e3e3e3}\
figcaption{color:#444;font-size:.9em}pre{background:#f6f6f6;padding:.8em;overflow-x:auto;max-width:100%}\
code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace}details{margin:.6em 0}summary{cursor:pointer}\
nav a{margin-right:1em;display:inline-block}.verdict{padding:.6em 1em;border-left:5px solid}\
.verdict.fine{background:#eef6f1;border-color:#009E73}.verdict.warn{background:#fff4e5;border-color:#E69F00}.verdict.said{background:#f3f3f3;border-color:#777}\
.alts li{margin:.5em 0}.k{color:#555}.answer{font-size:1.2em}\
@media (max-width:640px){table.stack thead{display:none}table.stack,table.stack tbody,table.stack tr,\
table.stack td{display:block}table.stack tr{margin:.5em 0;border:1px solid #d0d0d0}table.stack td{border:none;\
border-bottom:1px solid #eee;white-space:normal;max-width:none;min-width:0;text-align:right;overflow-wrap:anywhere}\
table.stack td::before{content:attr(data-label);float:left;margin-right:.8em;color:#555;font-weight:400;\
text-align:left}table.stack td.t{text-align:right}table.stack td:first-child{text-align:left;font-weight:600;\
background:#f3f3f3}table.stack td:first-child::before{content:none}}.hint{display:none}\
@media (max-width:700px){figure.pan>div{overflow-x:auto;max-width:100%}figure.pan img{max-width:none;width:960px}\
.hint{display:inline}}";

pub(super) fn html_table(out: &mut String, t: &TextTable) {
    html_table_as(out, t, false);
}

/// [`html_table`] that a narrow screen shows as one card per row, each cell under its heading
/// (`data-label`), so nothing scrolls sideways: for tables read row by row (the decision
/// table, a page's opening).
pub(super) fn html_table_stacked(out: &mut String, t: &TextTable) {
    html_table_as(out, t, true);
}

fn html_table_as(out: &mut String, t: &TextTable, stacked: bool) {
    let class = |i: usize| if t.left.get(i) == Some(&true) { " class=\"t\"" } else { "" };
    out.push_str(if stacked {
        "<div class=\"scroll\"><table class=\"stack\">\n<thead><tr>"
    } else {
        "<div class=\"scroll\"><table>\n<thead><tr>"
    });
    for (i, h) in t.headings.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(i), esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, r) in t.rows.iter().enumerate() {
        out.push_str(if t.highlight == Some(i) { "<tr class=\"best\">" } else { "<tr>" });
        for (j, c) in r.iter().enumerate() {
            match (stacked, t.headings.get(j)) {
                (true, Some(h)) => {
                    let _ = write!(out, "<td{} data-label=\"{}\">{}</td>", class(j), esc(h), esc_prose(c));
                }
                _ => {
                    let _ = write!(out, "<td{}>{}</td>", class(j), esc_prose(c));
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    if t.omitted > 0 {
        let _ = writeln!(out, "<p class=\"meta\">{} {}.</p>", t.omitted, t.omitted_note);
    }
}

pub(super) fn md_table(out: &mut String, t: &TextTable) {
    let _ = writeln!(out, "| {} |", t.headings.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | "));
    let left = |i: usize| t.left.get(i) == Some(&true);
    let aligns: Vec<&str> = (0..t.headings.len()).map(|i| if left(i) { ":---" } else { "---:" }).collect();
    let _ = writeln!(out, "| {} |", aligns.join(" | "));
    // The configuration's column is bold in the highlighted row.
    let label = t.headings.iter().position(|h| h == "policy" || h == "configuration").unwrap_or(0);
    for (i, r) in t.rows.iter().enumerate() {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(j, c)| {
                if t.highlight == Some(i) && j == label { format!("**{}**", md_cell(c)) } else { md_cell(c) }
            })
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    if t.omitted > 0 {
        let _ = writeln!(out, "\n_{} {}._", t.omitted, t.omitted_note);
    }
}

/// A signed number: `+45.9`, `-3`, `0`.
fn signed(v: f64) -> String {
    if v > 0.0 { format!("+{}", fmt_num(v)) } else { fmt_num(v) }
}

/// The decision table (hyperfine's relative table, in cost): each configuration worth reading,
/// against the recommendation.
fn decision_table(r: &Review) -> TextTable {
    let headings = [
        "configuration",
        "shown as",
        "total cost",
        "− recommended",
        "× recommended",
        "qualifies",
        "first broken constraint",
        "missed incidents",
        "false opens",
        "flaps",
    ];
    let opt = |v: Option<f64>| v.map_or_else(|| "–".to_string(), fmt_num);
    let rows: Vec<Vec<String>> = r
        .decision
        .iter()
        .map(|d| {
            let missed = match (d.missed_incidents, d.incidents) {
                (Some(m), Some(i)) => format!("{} of {}", fmt_num(m), fmt_num(i)),
                (m, _) => opt(m),
            };
            let missed = super::selection::with_missed_in(missed, d.missed_in.as_deref());
            vec![
                d.label.clone(),
                d.roles.join(", "),
                fmt_num(d.total_cost),
                d.difference.map_or_else(|| "–".to_string(), signed),
                d.ratio.map_or_else(|| "–".to_string(), |x| format!("{x:.2}")),
                if d.qualifies { "yes" } else { "no" }.to_string(),
                d.broken.clone().unwrap_or_else(|| "–".to_string()),
                missed,
                opt(d.false_opens),
                opt(d.flaps),
            ]
        })
        .collect();
    let highlight = r.decision.iter().position(|d| d.roles.iter().any(|x| x == "recommended"));
    // Text columns wrap; "missed incidents" too, as it says where a configuration missed.
    let mut left = vec![false; headings.len()];
    for i in [0, 1, 6, 7] {
        left[i] = true;
    }
    TextTable {
        headings: headings.map(String::from).to_vec(),
        rows,
        highlight,
        omitted: 0,
        omitted_note: "",
        left,
    }
}

/// The paired differences of each alternative against the baseline, one row per metric.
fn differences_table(b: &BaselineReview) -> TextTable {
    let mut headings = vec!["metric".to_string()];
    headings.extend((1..=b.alternatives.len()).map(|i| format!("#{i} − baseline")));
    let metrics: Vec<&str> = b
        .alternatives
        .first()
        .map(|a| a.differences.iter().map(|d| d.metric.as_str()).collect())
        .unwrap_or_default();
    let rows = metrics
        .iter()
        .map(|m| {
            let mut row = vec![m.to_string()];
            row.extend(b.alternatives.iter().map(|a| {
                a.differences
                    .iter()
                    .find(|d| d.metric == *m)
                    .map_or_else(|| "–".to_string(), Difference::text)
            }));
            row
        })
        .collect();
    let mut left = vec![false; headings.len()];
    left[0] = true;
    TextTable { headings, rows, highlight: None, omitted: 0, omitted_note: "", left }
}

const DIFFERENCES_NOTE: &str = "Paired by replicate (every configuration saw the same request streams): the \
mean difference over replicates ± the half-width of its 95% confidence interval; * where the interval \
excludes zero. Negative is better, but for availability.";

const DECISION_NOTE: &str = "Total cost is the sum over scenarios of the mean cost over replicates (lower is \
better); missed incidents, false opens and flaps are summed the same way.";

/// A sweep's review, opening on its answer: the verdict on today's configuration (when there is
/// one), the recommendation, then where the recommendation is worse (before any total), the
/// confidence and the decision table; the alternatives to today's configuration after it.
fn html_review(h: &mut String, r: &Review, explanation: Option<&str>) {
    if let Some(b) = &r.baseline {
        let _ = writeln!(h, "<h2 id=\"baseline\">Today's configuration: {}</h2>", esc(&b.label));
        let _ = writeln!(
            h,
            "<p class=\"verdict {}\"><strong>Verdict:</strong> {}</p>",
            if b.fine { "fine" } else { "warn" },
            esc(&b.verdict)
        );
        if !b.findings.is_empty() {
            h.push_str("<ul>\n");
            for f in &b.findings {
                let _ = writeln!(h, "<li>{}</li>", esc_prose(f));
            }
            h.push_str("</ul>\n");
        }
    }
    h.push_str("<h2 id=\"decision\">Decision</h2>\n");
    match &r.recommended {
        Some(label) => {
            let _ = writeln!(
                h,
                "<p class=\"answer\">Recommended configuration: <strong>{}</strong></p>",
                esc(label)
            );
        }
        None => {
            h.push_str("<p class=\"answer\"><strong>No configuration meets every constraint.</strong></p>\n")
        }
    }
    super::selection::html_regressions(h, r);
    super::selection::html_confidence(h, r);
    for note in &r.bounds {
        let _ = writeln!(
            h,
            "<p class=\"verdict warn\"><strong>A bound decided:</strong> {}</p>",
            esc_prose(note)
        );
    }
    html_table_stacked(h, &decision_table(r));
    let _ = writeln!(h, "<p class=\"meta\">{DECISION_NOTE}</p>");
    if let Some(e) = explanation {
        let _ = writeln!(
            h,
            "<details><summary>Why this one: the recommendation explained (recommendation.txt)</summary>\
             <div class=\"rec\">{}</div></details>",
            esc(e)
        );
    }
    if let Some(b) = r.baseline.as_ref().filter(|b| !b.alternatives.is_empty()) {
        let _ = writeln!(
            h,
            "<h3 id=\"alternatives\">The {} best alternatives to today's configuration</h3>\n<ol class=\"alts\">",
            b.alternatives.len()
        );
        for a in &b.alternatives {
            let _ = writeln!(
                h,
                "<li><strong>{}</strong> · total cost {}<br><span class=\"k\">changes:</span> {}<br>\
                 <span class=\"k\">worse than today's beyond noise:</span>{}</li>",
                esc(&a.label),
                fmt_num(a.total_cost),
                esc(&a.changes.join("; ")),
                super::selection::html_risks(&a.risks)
            );
        }
        h.push_str("</ol>\n");
        let _ = writeln!(h, "<p class=\"meta\">{DIFFERENCES_NOTE}</p>");
        html_table(h, &differences_table(b));
    }
}

/// A targeted sweep's exports, ready to paste (shown open, under the decision).
fn html_deploy(h: &mut String, deploy: Option<&str>) {
    if let Some(d) = deploy {
        let _ = writeln!(h, "<h2 id=\"deploy\">Deploy</h2>\n<div class=\"rec\">{}</div>", esc(d.trim()));
    }
}

fn md_review(m: &mut String, r: &Review, explanation: Option<&str>) {
    if let Some(b) = &r.baseline {
        let _ = writeln!(m, "## Today's configuration: {}\n", b.label);
        // The page's green or amber box: a mark a text reader sees too.
        let mark = if b.fine { "✔" } else { "⚠" };
        let _ = writeln!(m, "> {mark} **Verdict:** {}\n", b.verdict);
        for f in &b.findings {
            let _ = writeln!(m, "- {f}");
        }
        if !b.findings.is_empty() {
            m.push('\n');
        }
    }
    m.push_str("## Decision\n\n");
    match &r.recommended {
        Some(label) => {
            let _ = writeln!(m, "Recommended configuration: **{label}**\n");
        }
        None => m.push_str("**No configuration meets every constraint.**\n\n"),
    }
    super::selection::md_regressions(m, r);
    super::selection::md_confidence(m, r);
    for note in &r.bounds {
        let _ = writeln!(m, "> **A bound decided:** {note}\n");
    }
    md_table(m, &decision_table(r));
    let _ = writeln!(m, "\n_{DECISION_NOTE}_\n");
    if let Some(e) = explanation {
        m.push_str(
            "<details><summary>Why this one: the recommendation explained (recommendation.txt)</summary>\n\n",
        );
        for line in e.lines() {
            let _ = writeln!(m, "> {line}");
        }
        m.push_str("\n</details>\n\n");
    }
    if let Some(b) = r.baseline.as_ref().filter(|b| !b.alternatives.is_empty()) {
        let _ = writeln!(m, "### The {} best alternatives to today's configuration\n", b.alternatives.len());
        for (i, a) in b.alternatives.iter().enumerate() {
            let _ = writeln!(
                m,
                "{}. **{}** · total cost {}  \n   changes: {}  \n   worse than today's beyond noise:{}",
                i + 1,
                a.label,
                fmt_num(a.total_cost),
                a.changes.join("; "),
                super::selection::md_risks(&a.risks)
            );
        }
        let _ = writeln!(m, "\n{DIFFERENCES_NOTE}\n");
        md_table(m, &differences_table(b));
        m.push('\n');
    }
}

/// One chart: shrinks to the page's width and links to its full-size PNG beside the page; a
/// page narrower than [`NARROW_PAGE_PX`] shows the chart's narrow rendering instead. The one
/// place a chart's HTML is built, so what a chart's figure carries besides the image (the
/// timeline's marks with their tooltips) goes here.
fn html_figure(h: &mut String, chart: &Chart) {
    let name = &chart.name;
    if let Some(sentence) = &chart.sentence {
        let _ = writeln!(h, "<p class=\"verdict warn\">{}</p>", esc(sentence));
        return;
    }
    // A phone-width page shows the narrow rendering, drawn for it (the picture's source).
    let narrow = match chart.narrow.is_empty() {
        true => String::new(),
        false => format!(
            "<source media=\"(max-width: {NARROW_PAGE_PX}px)\" srcset=\"data:image/png;base64,{}\">",
            BASE64_STANDARD.encode(&chart.narrow)
        ),
    };
    // A chart without one (the timeline) is panned sideways in its own box at a readable scale
    // there, rather than shrunk to a quarter; the page itself never scrolls sideways.
    let pan = if chart.narrow.is_empty() { " class=\"pan\"" } else { "" };
    let _ = writeln!(
        h,
        "<figure id=\"{id}\"{pan}><div><a href=\"{name}\"><picture>{narrow}<img src=\"data:image/png;base64,{}\" \
         alt=\"{cap}\" title=\"{name}\"></picture></a></div><figcaption>{cap} (<a href=\"{name}\">{name}</a>, \
         full size{hint})</figcaption></figure>",
        BASE64_STANDARD.encode(&chart.png),
        hint = if pan.is_empty() {
            ""
        } else {
            "<span class=\"hint\">; on a narrow screen, scroll it sideways</span>"
        },
        id = esc(name.trim_end_matches(".png")),
        cap = esc(&chart_caption(name)),
        name = esc(name),
    );
}

/// Widest page (CSS px) that shows a chart's narrow rendering instead of the full-size one (and
/// pans a chart without one in its box: [`CSS`]'s `max-width:700px`).
const NARROW_PAGE_PX: u32 = 700;

/// Most marks listed unfolded under the timeline.
const MARKS_OPEN: usize = 24;

/// Under the timeline, its incidents and state changes in time order, each with what
/// `breakerlab explain` says as its tooltip (hover; missed incidents stand out).
fn html_marks(h: &mut String, marks: &[super::explain::Mark], epoch_us: Option<i64>) {
    if marks.is_empty() {
        return;
    }
    let marks: Vec<super::explain::Mark> = marks.iter().map(|m| m.on_clock(epoch_us)).collect();
    let mut sorted: Vec<&super::explain::Mark> = marks.iter().collect();
    sorted.sort_by_key(|m| m.at_us);
    let _ = write!(
        h,
        "<style>.marks span{{display:inline-block;margin:.15em .3em;padding:0 .35em;border:1px solid #bbb;\
         border-radius:3px;cursor:help;font-size:.85em}}.marks span.missed{{border-color:#D55E00;color:#D55E00;\
         font-weight:600}}</style><details class=\"marks\"{}><summary>Why it opened, or did not: hover a mark \
         ({})</summary><p>",
        // A long list would bury the page (at 420 px one mark a line): folded beyond a screenful.
        if marks.len() <= MARKS_OPEN { " open" } else { "" },
        marks.len()
    );
    for m in sorted {
        let class = if m.missed { " class=\"missed\"" } else { "" };
        let _ = write!(
            h,
            "<span{class} title=\"{}\">{}</span> ",
            esc(&m.title).replace('\n', "&#10;"),
            esc(&m.label)
        );
    }
    h.push_str("</p></details>\n");
}

/// Most state changes report.md lists under the timeline (report.html lists up to
/// [`super::explain::MAX_MARKS`]; `breakerlab explain DIR` prints them all).
pub const MD_MAX_MARKS: usize = 30;

/// [`html_marks`] for report.md: every incident (missed ones marked), then the first
/// [`MD_MAX_MARKS`] state changes, each with what `breakerlab explain` says.
fn md_marks(m: &mut String, marks: &[super::explain::Mark], epoch_us: Option<i64>) {
    if marks.is_empty() {
        return;
    }
    let marks: Vec<super::explain::Mark> = marks.iter().map(|k| k.on_clock(epoch_us)).collect();
    let mut sorted: Vec<&super::explain::Mark> = marks.iter().collect();
    sorted.sort_by_key(|k| k.at_us);
    let incident = |k: &&super::explain::Mark| k.label.starts_with("incident");
    let changes = sorted.iter().filter(|k| !incident(k)).count();
    let count = super::explain::count_of(marks.len() as u64, "mark");
    let _ = writeln!(m, "<details><summary>Why it opened, or did not ({count})</summary>\n");
    let mut listed = 0;
    for k in &sorted {
        if !incident(k) {
            if listed == MD_MAX_MARKS {
                continue;
            }
            listed += 1;
        }
        let label = if k.missed {
            format!("⚠ **{}**", md_cell(&k.label))
        } else {
            format!("**{}**", md_cell(&k.label))
        };
        let lines: Vec<String> = k.title.lines().map(|l| md_cell(l.trim())).collect();
        let _ = writeln!(m, "- {label}: {}", lines.join("  \n  "));
    }
    if changes > listed {
        let _ = writeln!(
            m,
            "\n_{} more state changes: `breakerlab explain` on this folder prints every one._",
            changes - listed
        );
    }
    m.push_str("\n</details>\n\n");
}

const SUMMARY_NOTE: &str = "One row per scenario × configuration; values are means over replicates, ± the 95% \
confidence half-width where there were several. – means no value (e.g. no incident to detect). All columns \
are in summary.csv.";
const PARETO_NOTE: &str = "Per front (a pair of metrics) and scenario, the configurations no other \
configuration beats on both metrics at once, ruled out or not (pareto.png rings only the front among \
those that qualify).";

fn render_html(c: &View, inputs: &ReportInputs) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>breakerlab: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&c.title)
    );
    let _ = writeln!(h, "<h1>breakerlab report: {}</h1>", esc(&c.title));
    let _ = writeln!(
        h,
        "<p class=\"meta\">breakerlab {}{} · report drawn by breakerlab {}</p>",
        esc(&inputs.version),
        inputs.seed.map(|s| format!(" · seed {s}")).unwrap_or_default(),
        env!("CARGO_PKG_VERSION")
    );
    let decided = c.recommended.is_some() || c.explanation.is_some();
    let tables = c.summary.is_some() || c.pareto.is_some();
    h.push_str("<nav>");
    if c.opening.is_some() {
        h.push_str("<a href=\"#result\">Result</a>");
    }
    if c.review.is_some_and(|r| r.baseline.is_some()) {
        h.push_str("<a href=\"#baseline\">Today's configuration</a>");
    }
    if c.review.is_some() {
        h.push_str("<a href=\"#decision\">Decision</a>");
    } else if decided {
        h.push_str("<a href=\"#recommendation\">Recommendation</a>");
    }
    if !c.charts.is_empty() {
        h.push_str("<a href=\"#charts\">Charts</a>");
    }
    if tables {
        h.push_str("<a href=\"#results\">All results</a>");
    }
    h.push_str("<a href=\"#reproduce\">Reproduce</a></nav>\n");
    if let Some(o) = c.opening {
        o.html(&mut h);
    }
    if let Some(r) = c.review {
        html_review(&mut h, r, c.explanation);
        html_deploy(&mut h, c.deploy);
    } else if decided {
        h.push_str("<h2 id=\"recommendation\">Recommendation</h2>\n");
        if let Some(r) = &c.recommended {
            let _ = writeln!(h, "<p>Recommended configuration: <strong>{}</strong></p>", esc(r));
        }
        if let Some(e) = &c.explanation {
            let _ = writeln!(h, "<div class=\"rec\">{}</div>", esc(e));
        }
    }
    if !c.charts.is_empty() {
        h.push_str("<h2 id=\"charts\">Charts</h2>\n");
        for chart in &c.charts {
            html_figure(&mut h, chart);
            if chart.name == super::charts::TIMELINE_PNG {
                html_marks(&mut h, c.marks, inputs.epoch_us);
            }
        }
    }
    if tables {
        h.push_str("<h2 id=\"results\">All results</h2>\n");
    }
    if let Some(s) = &c.summary {
        let t = summary_table(s, c.recommended, HTML_MAX_ROWS);
        let _ = writeln!(
            h,
            "<details id=\"summary\"><summary>Summary: every scenario × configuration ({} rows)</summary>\n\
             <p class=\"meta\">{SUMMARY_NOTE}</p>",
            t.rows.len() + t.omitted
        );
        html_table(&mut h, &t);
        h.push_str("</details>\n");
    }
    if let Some(p) = &c.pareto {
        let _ = writeln!(
            h,
            "<details id=\"pareto\"><summary>Pareto fronts ({} rows)</summary>\n<p class=\"meta\">{PARETO_NOTE}</p>",
            p.rows
        );
        html_table(&mut h, &pareto_table(p, c.recommended, HTML_MAX_ROWS));
        h.push_str("</details>\n");
    }
    h.push_str("<h2 id=\"reproduce\">Reproduce</h2>\n<ul>\n");
    let _ = writeln!(h, "<li>breakerlab version: <code>{}</code></li>", esc(&inputs.version));
    if let Some(seed) = inputs.seed {
        let _ = writeln!(h, "<li>seed: <code>{seed}</code></li>");
    }
    h.push_str("</ul>\n");
    if let Some(cmd) = &inputs.command_line {
        let _ = writeln!(
            h,
            "<p>Command (paste into a shell, from the same folder):</p><pre><code>{}</code></pre>",
            esc(cmd)
        );
    }
    for f in &inputs.files {
        let sha = f.sha256.get(..16).map_or(String::new(), |s| format!(", SHA-256 {s}…"));
        let _ =
            write!(h, "<details><summary><code>{}</code> ({} bytes{sha})</summary>", esc(&f.name), f.bytes);
        if let Some(note) = &f.note {
            let _ = write!(h, "<pre class=\"meta\">{}</pre>", esc(note));
        }
        match &f.text {
            Some(text) => {
                let _ = write!(h, "<pre><code>{}</code></pre>", esc(text));
            }
            None => {
                let _ = write!(h, "<p>{}</p>", esc(&f.not_embedded()));
            }
        }
        h.push_str("</details>\n");
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn render_md(c: &View, inputs: &ReportInputs) -> String {
    let mut m = String::new();
    let _ = writeln!(m, "# breakerlab report: {}\n", c.title);
    let _ = writeln!(
        m,
        "breakerlab {}{} · report drawn by breakerlab {}\n",
        inputs.version,
        inputs.seed.map(|s| format!(" · seed {s}")).unwrap_or_default(),
        env!("CARGO_PKG_VERSION")
    );
    if let Some(o) = c.opening {
        o.md(&mut m);
    }
    if let Some(r) = c.review {
        md_review(&mut m, r, c.explanation);
        if let Some(d) = c.deploy {
            let _ = writeln!(m, "## Deploy\n\n```text\n{}\n```\n", d.trim());
        }
    } else if c.recommended.is_some() || c.explanation.is_some() {
        m.push_str("## Recommendation\n\n");
        if let Some(r) = &c.recommended {
            let _ = writeln!(m, "Recommended configuration: **{}**\n", r);
        }
        if let Some(e) = &c.explanation {
            for line in e.lines() {
                let _ = writeln!(m, "> {line}");
            }
            m.push('\n');
        }
    }
    if !c.charts.is_empty() {
        m.push_str("## Charts\n\n");
        for chart in &c.charts {
            if let Some(sentence) = &chart.sentence {
                let _ = writeln!(m, "> {sentence}\n");
                continue;
            }
            let cap = chart_caption(&chart.name);
            let _ = writeln!(
                m,
                "[![{cap}]({name})]({name})  \n_{cap}_ ([{name}]({name}), full size)\n",
                name = chart.name
            );
            if chart.name == super::charts::TIMELINE_PNG {
                md_marks(&mut m, c.marks, inputs.epoch_us);
            }
        }
    }
    if c.summary.is_some() || c.pareto.is_some() {
        m.push_str("## All results\n\n");
    }
    if let Some(s) = &c.summary {
        let t = summary_table(s, c.recommended, MD_MAX_ROWS);
        let _ = writeln!(
            m,
            "<details><summary>Summary: every scenario × configuration ({} rows)</summary>\n\n{SUMMARY_NOTE}\n",
            t.rows.len() + t.omitted
        );
        md_table(&mut m, &t);
        m.push_str("\n</details>\n\n");
    }
    if let Some(p) = &c.pareto {
        let _ = writeln!(m, "<details><summary>Pareto fronts ({} rows)</summary>\n\n{PARETO_NOTE}\n", p.rows);
        md_table(&mut m, &pareto_table(p, c.recommended, HTML_MAX_ROWS));
        m.push_str("\n</details>\n\n");
    }
    m.push_str("## Reproduce\n\n");
    let _ = writeln!(m, "- breakerlab version: `{}`", inputs.version);
    if let Some(seed) = inputs.seed {
        let _ = writeln!(m, "- seed: `{seed}`");
    }
    if let Some(cmd) = &inputs.command_line {
        let f = fence(cmd);
        let _ = writeln!(m, "- command (paste into a shell, from the same folder):\n\n{f}sh\n{cmd}\n{f}");
    }
    for file in &inputs.files {
        let _ = writeln!(m, "\n`{}` ({} bytes):\n", file.name, file.bytes);
        if let Some(note) = &file.note {
            let f = fence(note);
            let _ = writeln!(m, "{f}\n{note}\n{f}\n");
        }
        match &file.text {
            Some(text) => {
                let f = fence(text);
                let _ = writeln!(m, "{f}{}\n{}\n{f}", lang_of(&file.name), text.trim_end());
            }
            None => {
                let _ = writeln!(m, "{}", file.not_embedded());
            }
        }
    }
    m
}

/// report.html and report.md of the output folder `dir`, from its contents and charts (one more
/// pass over summary.csv keeps the rows its tables show).
pub fn render_report(
    c: &Contents,
    charts: &[Chart],
    inputs: &ReportInputs,
    dir: &Path,
) -> Result<(String, String), ChartError> {
    let v = view(c, charts, inputs, dir)?;
    Ok((render_html(&v, inputs), render_md(&v, inputs)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::fixtures;
    use crate::report::folder::parse::Table;

    #[test]
    fn host_lanes_follow_the_detectors_instance_order() {
        let numbered = |n: u16| (0..n).map(|h| format!("host {h}")).collect::<Vec<_>>();
        assert_eq!(host_lane_names(1, &numbered(3)), vec!["host 0", "host 1", "host 2"]);
        assert_eq!(host_lane_names(2, &["pod-a".to_string()]), vec!["client 0 · pod-a", "client 1 · pod-a"]);
        let two = host_lane_names(2, &numbered(2));
        assert_eq!(
            two,
            vec!["client 0 · host 0", "client 0 · host 1", "client 1 · host 0", "client 1 · host 1"]
        );
    }

    #[test]
    fn a_long_pareto_table_is_cut_and_says_how_many_more_rows_pareto_csv_has() {
        let mut text = String::from("front,scenario,config_id,policy,cost,metric_1,value_1\n");
        for i in 0..5 {
            text.push_str(&format!("a vs b,s,{i},c{i},{i}.5,a,{i}\n"));
        }
        let read = |max: usize| {
            let (head, rows) =
                Table::head(Path::new("pareto.csv"), text.as_bytes(), max, |_| Ok(())).unwrap();
            let cells = (0..head.len())
                .map(|r| (0..head.headers.len()).map(|c| head.str(r, c).to_string()).collect());
            ParetoRows { head: cells.collect(), headers: head.headers.clone(), rows }
        };
        // Only the rows shown are kept, the others counted.
        let p = read(2);
        assert_eq!((p.head.len(), p.rows), (2, 5));
        let cut = pareto_table(&p, Some("c3"), 2);
        assert_eq!((cut.rows.len(), cut.omitted, cut.highlight), (2, 3, None));
        assert_eq!(cut.rows[1][2], "c1");
        let mut html = String::new();
        html_table(&mut html, &cut);
        assert!(html.contains("3 more rows in pareto.csv (the first shown)."), "{html}");
        let whole = pareto_table(&read(5), Some("c3"), 5);
        assert_eq!((whole.rows.len(), whole.omitted, whole.highlight), (5, 0, Some(3)));
    }

    /// The charts and the two pages of the folder `dir`, with [`inputs`].
    fn page(dir: &Path) -> (Vec<Chart>, String, String) {
        let contents = Contents::load(dir).unwrap();
        let charts = charts::draw_all(&contents, &charts::ChartOptions::default()).unwrap();
        let (html, md) = render_report(&contents, &charts, &inputs(), dir).unwrap();
        (charts, html, md)
    }

    fn inputs() -> ReportInputs {
        ReportInputs {
            title: "compare: outage <blip>".into(),
            command_line: Some("breakerlab compare scenarios/outage.toml --seed 42".into()),
            seed: Some(42),
            files: vec![InputFile::of_text("scenarios/outage.toml".into(), "name = \"outage\"\n")],
            ..ReportInputs::default()
        }
    }

    #[test]
    fn code_spans_become_code_elements_in_html() {
        assert_eq!(
            esc_prose("`missed_incidents <= 0.5` on a (missed_incidents = 7)"),
            "<code>missed_incidents &lt;= 0.5</code> on a (missed_incidents = 7)"
        );
        assert_eq!(esc_prose("plain <b>"), "plain &lt;b&gt;");
        assert_eq!(esc_prose("`a` and `b` but `c"), "<code>a</code> and <code>b</code> but `c");
    }

    #[test]
    fn html_page_is_self_contained_with_table_and_every_chart() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        let (charts, html, _) = page(dir.path());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<table>") && html.contains("<th>false opens</th>"));
        assert!(html.contains("<td class=\"t\">resilience4j-default</td>"));
        assert!(html.contains("<td>1 ± 0.4</td>"), "false opens with their CI");
        for c in &charts {
            let name = &c.name;
            assert!(html.contains(&format!("title=\"{name}\"")), "{name} missing");
            assert!(html.contains(&format!("<a href=\"{name}\"><picture>")), "{name} links to its PNG");
            let b64 = BASE64_STANDARD.encode(&c.png);
            assert!(
                html.contains(&format!("<img src=\"data:image/png;base64,{b64}\"")),
                "{name} not embedded"
            );
            // Every chart but the timeline has its narrow rendering for a phone-width page.
            assert_eq!(c.narrow.is_empty(), name == "timeline.png", "{name}");
            if !c.narrow.is_empty() {
                let narrow = BASE64_STANDARD.encode(&c.narrow);
                assert!(html.contains(&format!(
                    "<source media=\"(max-width: {NARROW_PAGE_PX}px)\" srcset=\"data:image/png;base64,{narrow}\">"
                )));
                let (w, _) = crate::report::charts::tests::png_size(&c.narrow);
                assert_eq!(w, crate::report::charts::style::NARROW_WIDTH, "{name}");
            }
        }
        let narrow = charts.iter().filter(|c| !c.narrow.is_empty()).count();
        // The timeline has none: on a narrow page it pans in its own box at a readable scale.
        assert!(html.contains("<figure id=\"timeline\" class=\"pan\"><div><a href=\"timeline.png\">"));
        assert!(html.contains("<figure id=\"comparison\"><div><a href=\"comparison.png\">"));
        assert!(
            CSS.contains(&format!("@media (max-width:{NARROW_PAGE_PX}px){{figure.pan>div{{overflow-x:auto"))
        );
        assert_eq!(html.matches("data:image/png;base64,").count(), charts.len() + narrow);
        // Nothing is fetched: no external URL in any src or href.
        assert!(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("<link"));
        // Inputs to reproduce, escaped.
        assert!(html.contains("compare: outage &lt;blip&gt;"));
        assert!(html.contains("seed: <code>42</code>"));
        assert!(html.contains("breakerlab compare scenarios/outage.toml --seed 42"));
        assert!(html.contains("name = &quot;outage&quot;"));
        assert!(html.contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn markdown_has_the_same_tables_and_links_every_chart() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::sweep_dir(dir.path());
        std::fs::write(
            dir.path().join("pareto.csv"),
            "front,scenario,config_id,policy,cost,metric_1,value_1,metric_2,value_2\n\
             detection_delay_mean_s vs false_opens,steady-outage,3,\"window(rate=0.8,win=10s,min=10)\",\
             4.25,detection_delay_mean_s,3.5,false_opens,0\n",
        )
        .unwrap();
        let (charts, _, md) = page(dir.path());
        assert!(md.contains("<summary>Summary: every scenario × configuration (28 rows)</summary>"), "{md}");
        assert!(md.contains("<summary>Pareto fronts (1 rows)"), "{md}");
        // The long tables come after the charts, folded.
        assert!(md.find("## Charts").unwrap() < md.find("<summary>Summary").unwrap());
        assert!(
            md.contains(
                "| front | scenario | policy | cost | metric_1 | value_1 | metric_2 | value_2 |\n\
             | :--- | :--- | :--- | ---: |"
            ),
            "{md}"
        );
        assert!(md.contains("| detection_delay_mean_s vs false_opens | steady-outage | **window(rate=0.8,win=10s,min=10)** | 4.25 | detection_delay_mean_s | 3.5 |"), "{md}");
        assert!(md.contains("| scenario | configuration | failure_threshold | open_for |"), "{md}");
        assert!(md.contains("**window(rate=0.8,win=10s,min=10)**"), "recommended row is bold");
        assert!(md.contains("Recommended configuration: **window(rate=0.8,win=10s,min=10)**"));
        assert!(md.contains("> It meets every constraint"));
        for c in &charts {
            let name = &c.name;
            assert!(md.contains(&format!("]({name})]({name})")), "{name} not linked");
        }
        // 28 configurations: the Markdown table keeps the 28 (≤ 30), the HTML too.
        let summary_rows =
            md.split("<summary>Pareto fronts").next().unwrap().matches("\n| steady-outage").count();
        assert_eq!(summary_rows, 28);
        assert!(md.contains("```toml\nname = \"outage\"\n```"));
    }

    #[test]
    fn long_summaries_keep_the_lowest_cost_rows_and_the_recommendation() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::sweep_dir(dir.path());
        let s = crate::report::charts::data::read_summary(&dir.path().join("summary.csv")).unwrap();
        let rec = Some("window(rate=0.2,win=60s,min=50)");
        let t = summary_table(&SummaryRows::read(&s, rec).unwrap(), rec, 5);
        assert_eq!(t.rows.len(), 5);
        assert_eq!(t.omitted, 23);
        let labels: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
        assert!(labels.contains(&"window(rate=0.2,win=60s,min=50)"), "{labels:?}");
        assert!(t.highlight.is_some());
    }

    #[test]
    fn inputs_round_trip_and_report_dir_uses_them() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::compare_dir(dir.path());
        assert_eq!(Contents::load(dir.path()).unwrap().inputs, None);
        std::fs::write(dir.path().join(INPUTS_FILE), inputs().to_toml().unwrap()).unwrap();
        let loaded = Contents::load(dir.path()).unwrap().inputs.unwrap();
        assert_eq!(loaded, inputs());
        let (_, _, md) = page(dir.path());
        assert!(md.contains("seed: `42`"));
        std::fs::write(dir.path().join(INPUTS_FILE), "version = \"0.1.0\"\nsede = 3\n").unwrap();
        let err = Contents::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("inputs.toml") && err.contains("sede"), "{err}");
    }

    #[test]
    fn inputs_up_to_256_kib_are_embedded_larger_ones_recorded_by_size_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let row = "0,10,1\n";
        let make = |name: &str, len: usize| {
            let path = dir.path().join(name);
            let mut text = String::from("t_ms,latency_ms,ok\n");
            while text.len() + row.len() <= len {
                text.push_str(row);
            }
            text.push_str(&"#".repeat(len - text.len()));
            assert_eq!(text.len(), len);
            std::fs::write(&path, &text).unwrap();
            (path, text)
        };
        let limit = EMBED_LIMIT as usize;
        let (under, under_text) = make("under.csv", limit);
        let (over, over_text) = make("over.csv", limit + 1);
        let small = InputFile::read(&under).unwrap();
        assert_eq!(small.text.as_deref(), Some(under_text.as_str()));
        assert_eq!(small.bytes, EMBED_LIMIT);
        let large = InputFile::read(&over).unwrap();
        assert_eq!(large.text, None);
        assert_eq!(large.bytes, EMBED_LIMIT + 1);
        assert_eq!(large.sha256, crate::sweep::shard::sha256_hex(over_text.as_bytes()));
        // The same rule for a file known by its text.
        assert_eq!(InputFile::of_text(over.display().to_string(), &over_text), large);
        // Nothing of the large file reaches inputs.toml or the pages but its size and hash.
        let inputs = ReportInputs { files: vec![small, large.clone()], ..inputs() };
        let toml = inputs.to_toml().unwrap();
        assert!(toml.len() < limit + 2_000 && toml.contains(&large.sha256), "{}", toml.len());
        let out = tempfile::tempdir().unwrap();
        fixtures::compare_dir(out.path());
        let contents = Contents::load(out.path()).unwrap();
        let (html, md) = render_report(&contents, &[], &inputs, out.path()).unwrap();
        for page in [&html, &md] {
            assert_eq!(page.matches(&under_text[..40]).count(), 1);
            assert!(!page.contains(&over_text[over_text.len() - 40..]));
            assert!(page.contains(&format!(
                "not embedded (larger than 256 KiB): {} bytes, SHA-256 {}",
                limit + 1,
                large.sha256
            )));
        }
        assert_eq!(ReportInputs::from_toml(Path::new("inputs.toml"), &toml).unwrap(), inputs);
    }

    /// A review.toml as a sweep with a baseline writes it.
    const REVIEW: &str = r#"
recommended = "window(rate=0.8,win=10s,min=10)"
bounds = ["min_calls = 10 is the highest value swept (5, 10): the best may lie above it; extend the range to 15 or further."]

[[decision]]
label = "window(rate=0.8,win=10s,min=10)"
config_id = 3
roles = ["recommended", "best windowed"]
total_cost = 42.5
difference = 0.0
ratio = 1.0
qualifies = true
missed_incidents = 0.0
incidents = 4.0
false_opens = 0.5
flaps = 0.0

[[decision]]
label = "consecutive(th=3,open=10s)"
config_id = 0
roles = ["baseline"]
total_cost = 97.8
difference = 55.3
ratio = 2.3
qualifies = false
broken = "`missed_incidents == 0` on slow (missed_incidents = 1)"
missed_incidents = 1.0
incidents = 4.0
false_opens = 6.0
flaps = 2.0

[baseline]
label = "consecutive(th=3,open=10s)"
fine = false
verdict = "opens on noise: 6 false opens a week"
findings = ["opens on noise: 6 false opens a week (blip 4, brownout 2)", "misses incidents: 1 of 4"]

[[baseline.alternatives]]
label = "window(rate=0.8,win=10s,min=10)"
total_cost = 42.5
changes = ["preset consecutive → window", "rate = 0.8"]
risks = ["detection delay (s): +3.5 ± 1.2 *"]

[[baseline.alternatives.differences]]
metric = "false opens (sum)"
n = 5
mean = -5.5
ci95 = 1.25
"#;

    #[test]
    fn a_sweep_page_opens_with_the_verdict_then_the_decision_table() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::sweep_dir(dir.path());
        std::fs::write(dir.path().join("review.toml"), REVIEW).unwrap();
        let (_, html, md) = page(dir.path());
        for (page, verdict, decision, charts) in [
            (
                &html,
                "<strong>Verdict:</strong> opens on noise: 6 false opens a week</p>",
                "<h2 id=\"decision\">",
                "<h2 id=\"charts\">",
            ),
            (&md, "**Verdict:** opens on noise: 6 false opens a week\n", "## Decision\n", "## Charts\n"),
        ] {
            let at = |what: &str| page.find(what).unwrap_or_else(|| panic!("{what} missing:\n{page}"));
            // Verdict, alternatives and differences, then the decision, the charts, and the
            // long tables last.
            assert!(at(verdict) < at(decision));
            assert!(at(decision) < at(charts) && at(charts) < at("Summary: every scenario"));
            // The recommendation is said right under the verdict; the alternatives to today's
            // configuration follow the decision table.
            let recommended = at("Recommended configuration:");
            assert!(at(decision) < recommended && recommended < at(DECISION_NOTE));
            assert!(at(DECISION_NOTE) < at("The 1 best alternatives to today"));
            assert!(
                page.contains("changes:</span> preset consecutive → window; rate = 0.8")
                    || page.contains("changes: preset consecutive → window; rate = 0.8")
            );
            assert!(page.contains("-5.5 ± 1.25 *"), "the paired difference as compare prints it");
            assert!(page.contains("A bound decided:"));
            assert!(page.contains("min_calls = 10 is the highest value swept (5, 10)"));
        }
        // The decision table: relative to the recommendation, the first broken constraint.
        assert!(md.contains(
            "| **window(rate=0.8,win=10s,min=10)** | recommended, best windowed | 42.5 | 0 | 1.00 | yes | – | 0 of 4 | 0.5 | 0 |"
        ), "{md}");
        assert!(md.contains(
            "| consecutive(th=3,open=10s) | baseline | 97.8 | +55.3 | 2.30 | no | `missed_incidents == 0` on slow (missed_incidents = 1) | 1 of 4 | 6 | 2 |"
        ), "{md}");
        assert!(html.contains("<p class=\"verdict warn\"><strong>Verdict:</strong>"));
        // report.md carries the page's marks: the amber verdict, the cost note.
        assert!(md.contains("> ⚠ **Verdict:** opens on noise"), "{md}");
        assert!(md.contains(&format!("_{DECISION_NOTE}_")) && html.contains(DECISION_NOTE));
        assert!(html.contains(
            "<tr class=\"best\"><td class=\"t\" data-label=\"configuration\">window(rate=0.8,win=10s,min=10)</td>"
        ));
        // A narrow screen shows the decision table as one card per configuration.
        assert!(html.contains("<table class=\"stack\">") && html.contains("table.stack td::before"));
        assert!(html.contains("<details id=\"summary\"><summary>"));
        // A broken review.toml is refused with its line.
        std::fs::write(dir.path().join("review.toml"), "decision = 1\n").unwrap();
        let e = Contents::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("review.toml:1:12: "), "{e}");
    }
}
