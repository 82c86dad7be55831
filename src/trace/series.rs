//! Aggregate series (Prometheus, Grafana, CloudWatch, Datadog) and the roles they play.
//!
//! Each series importer turns its file into [`Series`]: a name, labels a selector can match, and
//! sorted `(time, value)` points. `--series ROLE[:UNIT]=FILE[@SELECTOR]` picks one series per
//! role; [`load`] merges the picked series on time into interval rows: the grid step is the
//! finest series step, a coarser series holds its value for its own step, and a grid time where
//! some series have a sample and others none is left out and reported as a gap of those series.
//! A sample a little off the grid (scrape jitter: `.805` for `.804`) is moved onto it when within
//! a tenth of a step, and the moves are counted. A value that says "no value" (`NaN`, `±Inf`,
//! `null`) is a gap, counted in the report; `strict` refuses it with its place.

use super::{
    ImportReport, IntervalTrace, LatencyUnit, TraceError, TraceFormat, TraceOptions, timestamp::format_utc,
};
use crate::time::Dur;
use breakerlab_model::trace::interval::Raw;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One series of an export: what it is called, how a selector finds it, and its points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// How messages name it (`http_request_duration_seconds{job="api"}`, `Id "p95"`).
    pub name: String,
    /// Labels selectors match (Prometheus labels with `__name__`; CloudWatch `Id` and `Label`;
    /// Datadog `metric` and `scope`; Grafana `column`).
    pub labels: Vec<(String, String)>,
    /// Sample times, absolute microseconds since the epoch, ascending.
    pub times: Vec<i64>,
    /// Sample values; NaN where the export wrote `NaN`, an infinity or `null`.
    pub values: Vec<f64>,
    /// What the samples' values were written as, for messages (`"NaN"`, `null`); empty = a number.
    pub bad_text: BTreeMap<usize, String>,
    /// The latency unit the export states (metric name suffix, Datadog's unit), if any.
    pub unit: Option<LatencyUnit>,
    /// The export says the values are percentages (Datadog's unit `percent`, a `%` header).
    pub percent: bool,
    /// Where sample `i` is in the file.
    pub locate: Locator,
    /// Something the export says about this series that the import report should repeat
    /// (CloudWatch's `PartialData`, a CSV's delimiter).
    pub note: Option<String>,
}

/// Where a sample is in its file, for messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Locator {
    /// Sample `i` is element `i` of the JSON array at this path (`data.result[0].values`).
    Json(String),
    /// Sample `i` is on line `lines[i]` in this CSV column.
    Rows {
        /// Column header.
        column: String,
        /// Line of each sample.
        lines: Vec<u64>,
    },
    /// Samples are named by the series and their time (exports whose order was changed).
    #[default]
    Stamped,
}

impl Series {
    /// Where sample `i` is, e.g. `data.result[0].values[17]` or `line 19, column "p95"`.
    pub fn at(&self, i: usize) -> String {
        match &self.locate {
            Locator::Json(path) => format!("{path}[{i}]"),
            Locator::Rows { column, lines } => format!("line {}, column {column:?}", lines[i]),
            Locator::Stamped => format!("{} at {}", self.name, format_utc(self.times[i])),
        }
    }

    /// The label `key`'s value.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The median spacing of its samples, if it has two.
    pub fn step(&self) -> Option<u64> {
        let mut d: Vec<u64> =
            self.times.windows(2).map(|w| (w[1] - w[0]) as u64).filter(|d| *d > 0).collect();
        if d.is_empty() {
            return None;
        }
        let mid = d.len() / 2;
        Some(*d.select_nth_unstable(mid).1)
    }
}

/// What a series means to the replay.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Requests per second.
    Rate,
    /// Requests per sample interval.
    Requests,
    /// Latency percentile, index into [`super::quantile::QUANTILES`] (p50, p90, p95, p99).
    Percentile(usize),
    /// Fraction (or, with `:%`, percentage) of requests that failed.
    ErrorRate,
    /// Fraction (or percentage) of requests that succeeded.
    SuccessRate,
    /// Failed requests per sample interval.
    Errors,
}

impl Role {
    /// Every role with its name.
    pub const ALL: [(&'static str, Role); 10] = [
        ("rate", Role::Rate),
        ("requests", Role::Requests),
        ("p50", Role::Percentile(0)),
        ("p90", Role::Percentile(1)),
        ("p95", Role::Percentile(2)),
        ("p99", Role::Percentile(3)),
        ("error_rate", Role::ErrorRate),
        ("success_rate", Role::SuccessRate),
        ("errors", Role::Errors),
        ("requests_per_second", Role::Rate),
    ];

    /// The role's name.
    pub fn name(self) -> &'static str {
        Role::ALL.iter().find(|(_, r)| *r == self).map_or("?", |(n, _)| n)
    }
}

/// The unit a `ROLE:UNIT` names.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Unit {
    /// A latency unit.
    Latency(LatencyUnit),
    /// Values are percentages (0..100).
    Percent,
    /// Values are fractions (0..1).
    Fraction,
}

/// One `--series ROLE[:UNIT]=FILE[@SELECTOR]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesSpec {
    /// The flag as written, for messages.
    pub text: String,
    /// The role.
    pub role: Role,
    /// The unit, when written.
    pub unit: Option<Unit>,
    /// The file.
    pub file: PathBuf,
    /// The selector, when written.
    pub selector: Option<String>,
}

fn spec_err(text: &str, message: String) -> TraceError {
    TraceError::Option { option: "series", message: format!("{text:?}: {message}") }
}

impl SeriesSpec {
    /// Parses `ROLE[:UNIT]=FILE[@SELECTOR]`.
    pub fn parse(text: &str) -> Result<SeriesSpec, TraceError> {
        let (head, rest) = text.split_once('=').ok_or_else(|| {
            spec_err(text, "expected ROLE[:UNIT]=FILE[@SELECTOR], e.g. p95:s=p95.json".into())
        })?;
        let (role, unit) = match head.trim().split_once(':') {
            Some((r, u)) => (r.trim(), Some(u.trim())),
            None => (head.trim(), None),
        };
        let role = Role::ALL.iter().find(|(n, _)| *n == role).map(|(_, r)| *r).ok_or_else(|| {
            let names: Vec<&str> = Role::ALL[..9].iter().map(|(n, _)| *n).collect();
            spec_err(text, format!("unknown role `{role}`; expected one of {}", names.join(", ")))
        })?;
        let unit = match unit {
            None => None,
            Some(u) => Some(match (role, u) {
                (Role::Percentile(_), "s") => Unit::Latency(LatencyUnit::S),
                (Role::Percentile(_), "ms") => Unit::Latency(LatencyUnit::Ms),
                (Role::Percentile(_), "us") => Unit::Latency(LatencyUnit::Us),
                (Role::ErrorRate | Role::SuccessRate, "%") => Unit::Percent,
                (Role::ErrorRate | Role::SuccessRate, "ratio" | "fraction") => Unit::Fraction,
                (Role::Percentile(_), _) => {
                    return Err(spec_err(text, format!("unknown latency unit `{u}`; expected s, ms or us")));
                }
                (Role::ErrorRate | Role::SuccessRate, _) => {
                    return Err(spec_err(text, format!("unknown unit `{u}`; expected % or ratio")));
                }
                _ => {
                    return Err(spec_err(
                        text,
                        format!(
                            "role `{}` takes no unit (rates are per second, counts per sample)",
                            role.name()
                        ),
                    ));
                }
            }),
        };
        let rest = rest.trim();
        let (file, selector) = match rest.split_once('@') {
            Some((f, s)) if !s.trim().is_empty() => (f.trim(), Some(s.trim().to_string())),
            Some((f, _)) => (f.trim(), None),
            None => (rest, None),
        };
        if file.is_empty() {
            return Err(spec_err(text, "no file after `=`".into()));
        }
        Ok(SeriesSpec { text: text.to_string(), role, unit, file: PathBuf::from(file), selector })
    }

    /// The spec with its file resolved by `resolve` (a scenario's paths are relative to it).
    pub fn rewrite_file(text: &str, resolve: impl Fn(&str) -> PathBuf) -> Result<String, TraceError> {
        let spec = SeriesSpec::parse(text)?;
        let head = text.split_once('=').map_or("", |(h, _)| h.trim());
        let file = resolve(&spec.file.to_string_lossy());
        Ok(match spec.selector {
            Some(s) => format!("{head}={}@{s}", file.display()),
            None => format!("{head}={}", file.display()),
        })
    }
}

/// A series selector: Prometheus label matchers (`{job="api",code=~"5.."}`, `job=api`,
/// `name{...}`), or a plain name (a CloudWatch `Id` or `Label`, a Datadog `metric` or `scope`,
/// a CSV column, a Prometheus metric name).
#[derive(Clone, Debug)]
pub enum Selector {
    /// Every matcher must hold.
    Matchers(Vec<Matcher>),
    /// Equal to any label's value (for Prometheus: to `__name__`).
    Plain(String),
}

/// One label matcher.
#[derive(Clone, Debug)]
pub struct Matcher {
    label: String,
    negate: bool,
    regex: Option<regex::Regex>,
    value: String,
}

impl Matcher {
    fn matches(&self, series: &Series) -> bool {
        let v = series.label(&self.label).unwrap_or("");
        let hit = match &self.regex {
            Some(r) => r.is_match(v),
            None => v == self.value,
        };
        hit != self.negate
    }
}

impl Selector {
    /// Parses a selector; `text` names the flag in errors.
    pub fn parse(sel: &str, text: &str) -> Result<Selector, TraceError> {
        let s = sel.trim();
        let bad = |m: &str| spec_err(text, format!("selector `{sel}`: {m}"));
        let name_len =
            s.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b':').count();
        let (name, body) = if s[name_len..].starts_with('{') {
            let inner = s[name_len + 1..].strip_suffix('}').ok_or_else(|| bad("missing `}`"))?;
            (&s[..name_len], inner)
        } else if s.contains(['=', '~']) {
            ("", s)
        } else {
            return Ok(Selector::Plain(s.to_string()));
        };
        let mut matchers = Vec::new();
        if !name.is_empty() {
            matchers.push(Matcher {
                label: "__name__".into(),
                negate: false,
                regex: None,
                value: name.into(),
            });
        }
        let mut rest = body.trim();
        while !rest.is_empty() {
            let label_len =
                rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.').count();
            if label_len == 0 {
                return Err(bad("expected a label name"));
            }
            let label = &rest[..label_len];
            rest = rest[label_len..].trim_start();
            let (op, after) = ["=~", "!~", "!=", "="]
                .iter()
                .find_map(|op| rest.strip_prefix(op).map(|r| (*op, r)))
                .ok_or_else(|| bad(&format!("expected =, !=, =~ or !~ after `{label}`")))?;
            rest = after.trim_start();
            let (value, after) = if let Some(q) = rest.strip_prefix('"') {
                let mut out = String::new();
                let mut chars = q.char_indices();
                let mut end = None;
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => out.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = Some(i + 1);
                            break;
                        }
                        c => out.push(c),
                    }
                }
                let end = end.ok_or_else(|| bad("unterminated quote"))?;
                (out, &q[end..])
            } else {
                let len = rest.find(',').unwrap_or(rest.len());
                (rest[..len].trim().to_string(), &rest[len..])
            };
            let regex = if op.ends_with('~') {
                Some(regex::Regex::new(&format!("^(?:{value})$")).map_err(|e| bad(&e.to_string()))?)
            } else {
                None
            };
            matchers.push(Matcher { label: label.to_string(), negate: op.starts_with('!'), regex, value });
            rest = after.trim_start();
            rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        }
        Ok(Selector::Matchers(matchers))
    }

    /// Whether `series` is selected.
    pub fn matches(&self, series: &Series) -> bool {
        match self {
            Selector::Matchers(ms) => ms.iter().all(|m| m.matches(series)),
            Selector::Plain(name) => match series.label("__name__") {
                Some(n) => n == name,
                None => series.labels.iter().any(|(_, v)| v == name),
            },
        }
    }
}

/// Reads every series of a file in one of the series formats.
pub fn read_file(path: &Path, format: TraceFormat, opts: &TraceOptions) -> Result<Vec<Series>, TraceError> {
    let file = path.display().to_string();
    match format {
        TraceFormat::Grafana => super::grafana::read(&file, super::columns::open(path)?, opts),
        TraceFormat::Prometheus => super::prometheus::parse(&file, &super::json::read(path)?),
        TraceFormat::Cloudwatch => super::cloudwatch::parse(&file, &super::json::read(path)?),
        TraceFormat::Datadog => super::datadog::parse(&file, &super::json::read(path)?),
        other => Err(TraceError::Option {
            option: "series",
            message: format!("{file} is {}, not a file of series", other.describe()),
        }),
    }
}

/// The one series `selector` names (or the only one), with a message listing the series when
/// there are none or several.
pub fn pick<'s>(
    file: &str,
    all: &'s [Series],
    selector: Option<&str>,
    text: &str,
) -> Result<&'s Series, TraceError> {
    let list = |ss: &mut dyn Iterator<Item = &Series>| {
        let names: Vec<String> = ss.take(12).map(|s| s.name.clone()).collect();
        names.join("; ")
    };
    let found: Vec<&Series> = match selector {
        Some(sel) => {
            let sel = Selector::parse(sel, text)?;
            all.iter().filter(|s| sel.matches(s)).collect()
        }
        None => all.iter().collect(),
    };
    match (found.len(), selector) {
        (1, _) => Ok(found[0]),
        (0, Some(sel)) => Err(TraceError::Format {
            file: file.into(),
            message: format!(
                "no series matches `{sel}` (series missing?); the file holds {}: {}",
                all.len(),
                list(&mut all.iter())
            ),
        }),
        (0, None) => {
            Err(TraceError::Format { file: file.into(), message: "the file holds no series".into() })
        }
        (n, Some(sel)) => Err(TraceError::Format {
            file: file.into(),
            message: format!("`{sel}` matches {n} series; narrow it: {}", list(&mut found.into_iter())),
        }),
        (n, None) => Err(TraceError::Format {
            file: file.into(),
            message: format!(
                "the file holds {n} series; pick one with FILE@SELECTOR in `{text}`: {}",
                list(&mut found.into_iter())
            ),
        }),
    }
}

/// A picked series with what it is for.
struct Picked<'a> {
    spec: &'a SeriesSpec,
    series: &'a Series,
    file: String,
    /// Multiplier from the written value to the role's base unit (µs for latencies, fraction
    /// for rates).
    scale: f64,
    step: Option<u64>,
}

/// Imports the `--series` of `opts` as one interval trace.
pub fn load(opts: &TraceOptions) -> Result<IntervalTrace, TraceError> {
    let specs: Vec<SeriesSpec> =
        opts.series.iter().map(|s| SeriesSpec::parse(s)).collect::<Result<_, _>>()?;
    if let Some(w) = opts.filters.first() {
        return Err(TraceError::Option {
            option: "where",
            message: format!(
                "`{w}`: filters keep spans of a per-call log (a per-call CSV, OTLP, Jaeger, Envoy, HAR); \
                 aggregate series are picked with FILE@SELECTOR instead"
            ),
        });
    }
    let mut files: BTreeMap<PathBuf, (TraceFormat, Vec<Series>)> = BTreeMap::new();
    let mut series_formats = Vec::new();
    for spec in &specs {
        if !files.contains_key(&spec.file) {
            let (format, detected) = match opts.format.filter(|f| f.is_series()) {
                Some(f) => (f, false),
                None => (super::detect::detect(&spec.file)?, true),
            };
            let format = if format == TraceFormat::Interval { TraceFormat::Grafana } else { format };
            let series = read_file(&spec.file, format, opts)?;
            series_formats.push((spec.file.display().to_string(), format, detected));
            files.insert(spec.file.clone(), (format, series));
        }
    }
    let mut report = ImportReport {
        file: specs.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" "),
        series_formats,
        ..ImportReport::default()
    };
    let mut picked = Vec::new();
    for spec in &specs {
        let (format, all) = &files[&spec.file];
        let file = spec.file.display().to_string();
        let series = pick(&file, all, spec.selector.as_deref(), &spec.text)?;
        if series.times.is_empty() {
            return Err(TraceError::Format {
                file: file.clone(),
                message: format!("the series {} has no samples (series missing?)", series.name),
            });
        }
        if let Some(other) = specs.iter().find(|o| o.role == spec.role && !std::ptr::eq(*o, spec)) {
            return Err(spec_err(&other.text, format!("role `{}` is given twice", spec.role.name())));
        }
        let scale = scale_of(spec, series, &file, &mut report)?;
        // A CSV's note (its delimiter) once per file; a series' own note per role.
        if let Some(note) = &series.note {
            let shared = *format == TraceFormat::Grafana;
            let line =
                if shared { format!("{file}: {note}") } else { format!("{}: {note}", spec.role.name()) };
            if !report.notes.contains(&line) {
                report.notes.push(line);
            }
        }
        report
            .columns
            .push((spec.role.name().into(), format!("{file} ({}) {}", format.describe(), series.name)));
        picked.push(Picked { spec, series, file, scale, step: series.step() });
    }
    merge(&picked, opts, report)
}

/// A file of series imported without `--series`: a Grafana CSV whose column names say their
/// roles reads like an interval CSV; anything else must say which series plays which role.
pub fn load_file(path: &Path, format: TraceFormat, opts: &TraceOptions) -> Result<IntervalTrace, TraceError> {
    let file = path.display().to_string();
    let long = format == TraceFormat::Grafana
        && super::grafana::long_form(&super::records::Records::open(&file, super::columns::open(path)?)?.1)
            .is_some();
    if format == TraceFormat::Grafana && !long {
        return super::interval::from_path(path, opts).map_err(|e| match e {
            TraceError::Columns { file, message } => TraceError::Columns {
                file: file.clone(),
                message: format!(
                    "{message}; or say which column plays which role, e.g. --series p95:ms={file}@COLUMN"
                ),
            },
            e => e,
        });
    }
    let all = read_file(path, format, opts)?;
    let names: Vec<String> = all.iter().take(12).map(|s| s.name.clone()).collect();
    Err(TraceError::Format {
        file: file.clone(),
        message: format!(
            "{} holds {} series ({}); say which plays which role, e.g. --series p95:s={file}@SELECTOR \
             --series rate={file}@SELECTOR",
            format.describe(),
            all.len(),
            names.join("; ")
        ),
    })
}

/// The factor from a picked series' values to its role's base unit, from `ROLE:UNIT`, else the
/// unit the export states; a latency without either is refused, never guessed.
fn scale_of(
    spec: &SeriesSpec,
    series: &Series,
    file: &str,
    report: &mut ImportReport,
) -> Result<f64, TraceError> {
    Ok(match (spec.role, spec.unit) {
        (Role::Percentile(_), Some(Unit::Latency(u))) => u.micros(),
        (Role::Percentile(_), _) => match series.unit {
            Some(u) => {
                report.notes.push(format!(
                    "{}: unit {} read from the series ({})",
                    spec.role.name(),
                    u.as_str(),
                    series.name
                ));
                u.micros()
            }
            None => {
                return Err(spec_err(
                    &spec.text,
                    format!(
                        "{file}: the series {} does not say its unit; write {role}:s, {role}:ms or {role}:us",
                        series.name,
                        role = spec.role.name()
                    ),
                ));
            }
        },
        (Role::ErrorRate | Role::SuccessRate, Some(Unit::Percent)) => 0.01,
        (Role::ErrorRate | Role::SuccessRate, None) if series.percent => {
            report.notes.push(format!(
                "{}: values read as percentages (the series says so: {})",
                spec.role.name(),
                series.name
            ));
            0.01
        }
        (Role::ErrorRate | Role::SuccessRate, _) => {
            if let Some(i) = series.values.iter().position(|v| *v > 1.0) {
                return Err(spec_err(
                    &spec.text,
                    format!(
                        "{file}: {}: value {} is above 1; if the series is a percentage write {}:%",
                        series.at(i),
                        series.values[i],
                        spec.role.name()
                    ),
                ));
            }
            1.0
        }
        _ => 1.0,
    })
}

/// How many merged intervals one import may make (a decade of minutes).
const MAX_ROWS: u64 = 6_000_000;

fn merge(
    picked: &[Picked],
    opts: &TraceOptions,
    mut report: ImportReport,
) -> Result<IntervalTrace, TraceError> {
    let has = |f: &dyn Fn(Role) -> bool| picked.iter().any(|p| f(p.spec.role));
    if has(&|r| r == Role::Rate) && has(&|r| r == Role::Requests) {
        return Err(TraceError::Option {
            option: "series",
            message: "give `rate` or `requests`, not both".into(),
        });
    }
    let counted = has(&|r| matches!(r, Role::Rate | Role::Requests));
    if has(&|r| r == Role::Errors) && !counted {
        return Err(TraceError::Option {
            option: "series",
            message: "`errors` counts need a request volume: add --series rate=... or requests=...".into(),
        });
    }
    let error_roles = picked
        .iter()
        .filter(|p| matches!(p.spec.role, Role::Errors | Role::ErrorRate | Role::SuccessRate))
        .count();
    if error_roles > 1 {
        return Err(TraceError::Option {
            option: "series",
            message: "give one of `errors`, `error_rate` and `success_rate`".into(),
        });
    }
    let latency = has(&|r| matches!(r, Role::Percentile(_)));
    let errors_from = picked
        .iter()
        .find(|p| matches!(p.spec.role, Role::Errors | Role::ErrorRate | Role::SuccessRate))
        .map(|p| format!("the {} series", p.spec.role.name()));
    let behaviour = match (latency, opts.upstream) {
        (true, Some(_)) => {
            return Err(TraceError::Option {
                option: "upstream",
                message: "the series give latency percentiles; the dependency's behaviour comes from them"
                    .into(),
            });
        }
        (true, None) => None,
        (false, Some(b)) => {
            let what = if counted { "volume only" } else { "no latency series" };
            let (b, note) = b.checked(what, opts.tail_sigma(), errors_from.as_deref())?;
            report.notes.push(note);
            Some(b)
        }
        (false, None) if counted => {
            return Err(TraceError::Option {
                option: "series",
                message:
                    "the series give traffic volume only: say how the dependency behaves (replay: --p50, \
                          --p95, --error-rate; a scenario: [trace.upstream] p50, p95, error_rate)"
                        .into(),
            });
        }
        (false, None) => {
            return Err(TraceError::Option {
                option: "series",
                message: "no latency series (p50, p90, p95 or p99): add one, or say how the dependency answers \
                          with --p50 (and --p95; a scenario: [trace.upstream] p50, p95); request volume comes from a \
                          rate or requests series, or from --rate"
                    .into(),
            });
        }
    };
    let step = match opts.interval {
        Some(d) if !d.is_zero() => d.0,
        _ => picked.iter().filter_map(|p| p.step).min().ok_or_else(|| TraceError::Option {
            option: "interval",
            message: "every series has a single sample: set `interval` to say how long it lasts".into(),
        })?,
    };
    let steps: Vec<String> = picked
        .iter()
        .map(|p| format!("{} every {}", p.spec.role.name(), Dur(p.step.unwrap_or(step))))
        .collect();
    report.notes.push(format!("merged on a {} step ({})", Dur(step), steps.join(", ")));
    if let Some(p) = picked.iter().find(|p| p.series.values.iter().all(|v| !v.is_finite())) {
        return Err(TraceError::Format {
            file: p.file.clone(),
            message: format!(
                "the {} series {} has no number: all its {} samples are NaN, ±Inf or null",
                p.spec.role.name(),
                p.series.name,
                p.series.values.len()
            ),
        });
    }
    let t0 = picked.iter().filter_map(|p| p.series.times.first()).min().copied().unwrap_or(0);
    let (aligned, moved) = align(picked, t0, step);
    if moved.count > 0 {
        report.notes.push(format!(
            "{} samples moved onto the {} grid (by at most {}; a sample within {} of a grid time is moved)",
            moved.count,
            Dur(step),
            Dur(moved.most),
            Dur(step / 10)
        ));
    }
    let t_end = aligned.iter().filter_map(|t| t.last()).max().copied().unwrap_or(0);
    let n = (t_end - t0) as u64 / step + 1;
    if n > MAX_ROWS {
        return Err(TraceError::Option {
            option: "series",
            message: format!(
                "the series span {} at a {} step: {n} intervals, more than {MAX_ROWS}",
                Dur((t_end - t0) as u64),
                Dur(step)
            ),
        });
    }
    let mut cursor = vec![0usize; picked.len()];
    let mut rows = Vec::with_capacity(n as usize);
    report.rows = picked.iter().map(|p| p.series.times.len() as u64).sum();
    let mut gaps: Vec<(usize, i64, i64)> = Vec::new(); // (series, first missing, last missing)
    let mut open_gap: Vec<Option<(i64, i64)>> = vec![None; picked.len()];
    let mut present: Vec<Option<f64>> = vec![None; picked.len()];
    let mut last_bad: Vec<Option<usize>> = vec![None; picked.len()];
    let mut no_value: Vec<(u64, Option<String>)> = vec![(0, None); picked.len()];
    for k in 0..n {
        let t = t0 + (k * step) as i64;
        for (j, p) in picked.iter().enumerate() {
            let (s, times) = (p.series, &aligned[j]);
            let c = &mut cursor[j];
            while *c + 1 < times.len() && times[*c + 1] <= t {
                *c += 1;
            }
            let own = p.step.unwrap_or(step) as i64;
            present[j] = None;
            if times.get(*c).is_some_and(|&ti| ti <= t && t - ti < own) {
                let v = s.values[*c];
                if v.is_nan() || v.is_infinite() {
                    let shown = s.bad_text.get(c).cloned().unwrap_or_else(|| v.to_string());
                    if opts.strict {
                        return Err(TraceError::Format {
                            file: p.file.clone(),
                            message: format!(
                                "{}: expected a number, found {shown} (--strict refuses samples with no value; \
                                 without it they are gaps)",
                                s.at(*c)
                            ),
                        });
                    }
                    if last_bad[j] != Some(*c) {
                        last_bad[j] = Some(*c);
                        no_value[j].0 += 1;
                        no_value[j].1.get_or_insert_with(|| format!("{}, {shown}", s.at(*c)));
                    }
                } else {
                    present[j] = Some(check(p, *c, v * p.scale)?);
                }
            }
        }
        let got = present.iter().filter(|v| v.is_some()).count();
        if got > 0 && got < picked.len() {
            for (j, v) in present.iter().enumerate() {
                if v.is_none() {
                    let g = open_gap[j].get_or_insert((t, t));
                    g.1 = t;
                } else if let Some((a, b)) = open_gap[j].take() {
                    gaps.push((j, a, b));
                }
            }
            continue;
        }
        for (j, g) in open_gap.iter_mut().enumerate() {
            if let Some((a, b)) = g.take() {
                gaps.push((j, a, b));
            }
        }
        if got == 0 {
            continue;
        }
        rows.push(row(t, k, step, picked, &present, behaviour));
    }
    for (j, g) in open_gap.iter_mut().enumerate() {
        if let Some((a, b)) = g.take() {
            gaps.push((j, a, b));
        }
    }
    for (p, (count, first)) in picked.iter().zip(&no_value) {
        if *count > 0 {
            report.notes.push(format!(
                "gap: {count} {} samples say no value (NaN, ±Inf or null; the first: {}): left out as gaps \
                 (--strict refuses them)",
                p.spec.role.name(),
                first.as_deref().unwrap_or("")
            ));
        }
    }
    gaps.sort_by_key(|g| (g.1, g.0));
    for (j, a, b) in gaps.iter().take(5) {
        report.notes.push(format!(
            "gap: {} has no sample from {} to {} ({} {} left out)",
            picked[*j].spec.role.name(),
            format_utc(*a),
            format_utc(*b),
            (b - a) as u64 / step + 1,
            if a == b { "step" } else { "steps" }
        ));
    }
    if gaps.len() > 5 {
        report.notes.push(format!("gap: {} more gaps where a series has no sample", gaps.len() - 5));
    }
    if rows.is_empty() {
        let spans: Vec<String> = picked
            .iter()
            .map(|p| {
                let (times, values) = (&p.series.times, &p.series.values);
                let first = values.iter().position(|v| v.is_finite()).unwrap_or(0);
                let last = values.iter().rposition(|v| v.is_finite()).unwrap_or(0);
                format!("{} {} .. {}", p.spec.role.name(), format_utc(times[first]), format_utc(times[last]))
            })
            .collect();
        return Err(TraceError::Option {
            option: "series",
            message: format!(
                "the series never have a number at the same times, so no interval has every role (numbers: {})",
                spans.join("; ")
            ),
        });
    }
    let opts = TraceOptions { interval: Some(Dur(step)), ..opts.clone() };
    IntervalTrace::build(rows, &opts, opts.offset_seconds()?, report)
}

/// How many samples [`align`] moved, and the largest move (µs).
#[derive(Default)]
struct Moved {
    count: u64,
    most: u64,
}

/// Each picked series' sample times with those within a tenth of `step` of a grid time
/// (`t0 + k step`) moved onto it, unless that would reach or pass the sample before.
fn align(picked: &[Picked], t0: i64, step: u64) -> (Vec<Vec<i64>>, Moved) {
    let step_i = step as i64;
    let tolerance = step_i / 10;
    let mut moved = Moved::default();
    let aligned = picked
        .iter()
        .map(|p| {
            let mut out: Vec<i64> = Vec::with_capacity(p.series.times.len());
            for &t in &p.series.times {
                let off = t - t0;
                let grid = t0 + (off + step_i / 2).div_euclid(step_i) * step_i;
                let shift = (grid - t).unsigned_abs();
                let ok = shift > 0 && shift as i64 <= tolerance && out.last().is_none_or(|l| grid > *l);
                if ok {
                    moved.count += 1;
                    moved.most = moved.most.max(shift);
                }
                out.push(if ok { grid } else { t });
            }
            out
        })
        .collect();
    (aligned, moved)
}

/// `v` (in the role's base unit) checked against the role's range, naming the sample otherwise.
fn check(p: &Picked, i: usize, v: f64) -> Result<f64, TraceError> {
    let (ok, expected) = match p.spec.role {
        Role::ErrorRate | Role::SuccessRate => {
            ((0.0..=1.0).contains(&v), "a rate between 0 and 1 (0 % and 100 %)")
        }
        _ => (v >= 0.0, "a number that is 0 or more"),
    };
    if ok {
        Ok(v)
    } else {
        Err(super::json::bad_value(&p.file, &p.series.at(i), &p.series.values[i].to_string(), expected))
    }
}

/// One merged interval at `t` (grid index `k`) from the present values.
fn row(
    t: i64,
    k: u64,
    step: u64,
    picked: &[Picked],
    v: &[Option<f64>],
    behaviour: Option<super::Behaviour>,
) -> Raw {
    let secs = step as f64 / 1e6;
    let mut count = None;
    let mut errors_per_s = None;
    let mut error_rate = behaviour.map_or(0.0, |b| b.error_rate.0);
    let mut logged = [f64::NAN; 4];
    if let Some(b) = behaviour {
        logged[0] = b.p50.0 as f64;
        logged[2] = b.p95.map_or(f64::NAN, |d| d.0 as f64);
    }
    for (p, value) in picked.iter().zip(v) {
        let x = value.unwrap_or(0.0);
        let own = p.step.unwrap_or(step) as f64 / 1e6;
        match p.spec.role {
            Role::Rate => count = Some((x * secs).round() as u64),
            Role::Requests => count = Some((x * secs / own).round() as u64),
            Role::Percentile(q) => logged[q] = x,
            Role::ErrorRate => error_rate = x,
            Role::SuccessRate => error_rate = 1.0 - x,
            Role::Errors => errors_per_s = Some(x / own),
        }
    }
    if let (Some(e), Some(n)) = (errors_per_s, count) {
        let per_s = n as f64 / secs;
        error_rate = if per_s > 0.0 { (e / per_s).min(1.0) } else { 0.0 };
    }
    Raw { t, line: k + 1, count, error_rate, logged }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, labels: &[(&str, &str)], start: i64, step: i64, values: &[f64]) -> Series {
        Series {
            name: name.into(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            times: (0..values.len() as i64).map(|i| start + i * step).collect(),
            values: values.to_vec(),
            locate: Locator::Json(format!("{name}.values")),
            ..Series::default()
        }
    }

    #[test]
    fn specs_parse_roles_units_files_and_selectors() {
        let s = SeriesSpec::parse("p95:s=p95.json@{job=\"api\"}").unwrap();
        assert_eq!(
            (s.role, s.unit, s.file.to_str(), s.selector.as_deref()),
            (
                Role::Percentile(2),
                Some(Unit::Latency(LatencyUnit::S)),
                Some("p95.json"),
                Some("{job=\"api\"}")
            )
        );
        let s = SeriesSpec::parse("error_rate:%=g.csv@errors").unwrap();
        assert_eq!((s.role, s.unit), (Role::ErrorRate, Some(Unit::Percent)));
        let e = SeriesSpec::parse("p96=x.json").unwrap_err().to_string();
        assert!(e.contains("unknown role `p96`"), "{e}");
        let e = SeriesSpec::parse("rate:s=x.json").unwrap_err().to_string();
        assert!(e.contains("takes no unit"), "{e}");
        let e = SeriesSpec::parse("p95:min=x.json").unwrap_err().to_string();
        assert!(e.contains("unknown latency unit"), "{e}");
        assert!(SeriesSpec::parse("p95").is_err());
        let r = SeriesSpec::rewrite_file("p95:s=a.json@x", |f| PathBuf::from("dir").join(f)).unwrap();
        assert_eq!(r, format!("p95:s={}@x", PathBuf::from("dir").join("a.json").display()));
    }

    #[test]
    fn selectors_match_labels_names_and_regexes() {
        let s = series("m", &[("__name__", "http_seconds"), ("job", "api"), ("code", "503")], 0, 1, &[1.0]);
        let t = |sel: &str| Selector::parse(sel, "x").unwrap().matches(&s);
        assert!(t("{job=\"api\",code=~\"5..\"}"));
        assert!(t("job=api"));
        assert!(t("http_seconds{job=\"api\"}"));
        assert!(t("http_seconds"));
        assert!(!t("{code!~\"5..\"}"));
        assert!(!t("job=web"));
        assert!(t("{job!=\"web\"}"));
        let cw = series("Id \"p95\"", &[("Id", "p95"), ("Label", "Latency p95")], 0, 1, &[1.0]);
        assert!(Selector::parse("Latency p95", "x").unwrap().matches(&cw));
        assert!(Selector::parse("p95", "x").unwrap().matches(&cw));
        assert!(Selector::parse("{job=\"a\"", "x").is_err());
        assert!(Selector::parse("{code=~\"(\"}", "x").is_err());
    }

    fn spec(text: &str) -> SeriesSpec {
        SeriesSpec::parse(text).unwrap()
    }

    #[test]
    fn series_of_different_steps_merge_and_gaps_are_reported() {
        let m = 60_000_000;
        // p95 every minute with minute 3 missing; rate every 2 minutes.
        let mut p95 = series("p95", &[], 0, m, &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]);
        p95.times.remove(3);
        p95.values.remove(3);
        let rate = series("rate", &[], 0, 2 * m, &[10.0, 20.0, 30.0]);
        let (s1, s2) = (spec("p95:s=a@x"), spec("rate=b@y"));
        let picked = [
            Picked { spec: &s1, series: &p95, file: "a".into(), scale: 1e6, step: p95.step() },
            Picked { spec: &s2, series: &rate, file: "b".into(), scale: 1.0, step: rate.step() },
        ];
        let t = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap();
        let starts: Vec<u64> = t.intervals().iter().map(|iv| iv.start().0 / m as u64).collect();
        assert_eq!(starts, vec![0, 1, 2, 4, 5]);
        let counts: Vec<Option<u64>> = t.intervals().iter().map(|iv| iv.count()).collect();
        assert_eq!(counts, vec![Some(600), Some(600), Some(1200), Some(1800), Some(1800)]);
        assert_eq!(t.intervals()[3].percentile_us(2), Some(500_000.0));
        assert_eq!(t.step(), Dur(m as u64));
        let notes = t.report().notes.join("\n");
        assert!(
            notes
                .contains("gap: p95 has no sample from 1970-01-01 00:03:00Z to 1970-01-01 00:03:00Z (1 step"),
            "{notes}"
        );
        assert!(notes.contains("merged on a 1m step (p95 every 1m, rate every 2m)"), "{notes}");
    }

    #[test]
    fn no_value_samples_are_counted_gaps_or_refused_when_strict() {
        let mut p95 = series("p95", &[], 0, 1_000_000, &[0.1, f64::NAN, 0.3, f64::INFINITY]);
        p95.bad_text.insert(1, "\"NaN\"".into());
        p95.bad_text.insert(3, "\"+Inf\"".into());
        let s1 = spec("p95:s=a");
        let picked =
            [Picked { spec: &s1, series: &p95, file: "a.json".into(), scale: 1e6, step: p95.step() }];
        let t = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap();
        assert_eq!(t.intervals().len(), 2);
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains(
                "gap: 2 p95 samples say no value (NaN, ±Inf or null; the first: p95.values[1], \"NaN\")"
            ),
            "{notes}"
        );
        let strict = TraceOptions { strict: true, ..TraceOptions::default() };
        let e = merge(&picked, &strict, ImportReport::default()).unwrap_err().to_string();
        assert!(e.starts_with("a.json: p95.values[1]: expected a number, found \"NaN\" (--strict"), "{e}");
        // Every sample NaN: said so, not "never at the same times".
        let nan = series("p95", &[], 0, 1_000_000, &[f64::NAN, f64::NAN]);
        let picked =
            [Picked { spec: &s1, series: &nan, file: "a.json".into(), scale: 1e6, step: nan.step() }];
        let e = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap_err().to_string();
        assert!(e.contains("has no number: all its 2 samples are NaN, ±Inf or null"), "{e}");
    }

    #[test]
    fn jittered_samples_move_onto_the_grid_and_are_counted() {
        let s = 15_000_000;
        // Scrape jitter: the third sample 1 ms late, the fifth 2 ms early.
        let mut p95 = series("p95", &[], 0, s, &[0.1, 0.2, 0.3, 0.4, 0.5]);
        p95.times[2] += 1_000;
        p95.times[4] -= 2_000;
        let rate = series("rate", &[], 0, s, &[1.0, 1.0, 1.0, 1.0, 1.0]);
        let (s1, s2) = (spec("p95:s=a"), spec("rate=b"));
        let picked = [
            Picked { spec: &s1, series: &p95, file: "a".into(), scale: 1e6, step: p95.step() },
            Picked { spec: &s2, series: &rate, file: "b".into(), scale: 1.0, step: rate.step() },
        ];
        let t = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap();
        assert_eq!(t.intervals().len(), 5);
        assert_eq!(t.intervals()[2].percentile_us(2), Some(300_000.0));
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains("2 samples moved onto the 15s grid (by at most 2ms; a sample within 1s500ms"),
            "{notes}"
        );
        assert!(!notes.contains("gap:"), "{notes}");
        // Series that never overlap say where each has numbers.
        let late = series("rate", &[], 10 * s, s, &[1.0, 1.0]);
        let (a, b) = (series("p95", &[], 0, s, &[0.1, 0.2]), late);
        let picked = [
            Picked { spec: &s1, series: &a, file: "a".into(), scale: 1e6, step: a.step() },
            Picked { spec: &s2, series: &b, file: "b".into(), scale: 1.0, step: b.step() },
        ];
        let e = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap_err().to_string();
        assert!(
            e.contains(
                "(numbers: p95 1970-01-01 00:00:00Z .. 1970-01-01 00:00:15Z; rate 1970-01-01 00:02:30Z"
            ),
            "{e}"
        );
    }

    #[test]
    fn volume_only_needs_a_behaviour() {
        let req = series("req", &[], 0, 60_000_000, &[60.0, 120.0]);
        let s1 = spec("requests=a");
        let picked = [Picked { spec: &s1, series: &req, file: "a".into(), scale: 1.0, step: req.step() }];
        let e = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap_err().to_string();
        assert!(e.contains("traffic volume only"), "{e}");
        let b = super::super::Behaviour {
            p50: Dur::from_millis(20),
            p95: Some(Dur::from_millis(80)),
            error_rate: crate::units::Ratio(0.01),
        };
        let opts = TraceOptions { upstream: Some(b), ..TraceOptions::default() };
        let t = merge(&picked, &opts, ImportReport::default()).unwrap();
        assert_eq!(t.intervals()[1].count(), Some(120));
        assert_eq!(t.intervals()[0].percentile_us(2), Some(80_000.0));
        assert_eq!(t.intervals()[0].error_rate(), 0.01);
        // A success-rate series with --p50 alone and --rate: the note says where errors and p95
        // come from.
        let ok = series("ok", &[], 0, 60_000_000, &[0.9, 1.0]);
        let s2 = spec("success_rate=b");
        let picked = [Picked { spec: &s2, series: &ok, file: "b".into(), scale: 1.0, step: ok.step() }];
        let e = merge(&picked, &TraceOptions::default(), ImportReport::default()).unwrap_err().to_string();
        assert!(e.contains("no latency series") && e.contains("--p50") && e.contains("--rate"), "{e}");
        let alone = super::super::Behaviour { p95: None, ..b };
        let opts = TraceOptions { upstream: Some(alone), ..TraceOptions::default() };
        let t = merge(&picked, &opts, ImportReport::default()).unwrap();
        assert!((t.intervals()[0].error_rate() - 0.1).abs() < 1e-12);
        assert!((t.intervals()[0].percentile_us(2).unwrap() - 45_520.0).abs() < 5.0);
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains(
                "no latency series: every interval answers with p50 20ms, p95 45ms520us (p95 not given: p50 × 2.276, \
                 the lognormal of tail_sigma 0.5), errors from the success_rate series"
            ),
            "{notes}"
        );
    }

    #[test]
    fn picking_lists_what_the_file_holds() {
        let all = vec![
            series("a{job=\"x\"}", &[("job", "x")], 0, 1, &[1.0]),
            series("a{job=\"y\"}", &[("job", "y")], 0, 1, &[1.0]),
        ];
        let e = pick("f.json", &all, None, "p95=f.json").unwrap_err().to_string();
        assert!(e.contains("holds 2 series") && e.contains("a{job=\"y\"}"), "{e}");
        let e = pick("f.json", &all, Some("job=z"), "p95=f.json@job=z").unwrap_err().to_string();
        assert!(e.contains("no series matches `job=z`"), "{e}");
        assert_eq!(pick("f.json", &all, Some("job=y"), "t").unwrap().name, "a{job=\"y\"}");
    }
}
