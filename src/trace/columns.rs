//! Column mapping shared by the importers: opening a CSV, reading its header, finding each role's
//! column by explicit name or by auto-detection of common headers (with units read from suffixes
//! such as `(s)` or `_ms`), and allocation-free cell parsing with precise bad-value errors.

use super::{LatencyUnit, TraceError};
use csv::ByteRecord;
use std::io::Read;
use std::path::Path;

/// What a column means to an importer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Timestamp.
    Time,
    /// Requests in the interval.
    Count,
    /// Errors in the interval.
    Errors,
    /// Error fraction.
    ErrorRate,
    /// Success percentage (or fraction when the header carries no `%`).
    Success,
    /// Latency percentile, index into [`super::quantile::QUANTILES`].
    Percentile(usize),
    /// A single unnamed signal (`value`), mapped to p50 by default.
    Value,
    /// Per-call latency.
    Latency,
    /// Per-call status.
    Status,
    /// A 0/1 label column.
    Label,
    /// When a call ended (span files: `EndTimeUnixNano`), read in the time column's format.
    End,
}

impl Role {
    /// The option name that sets this role's column.
    pub fn option(self) -> &'static str {
        match self {
            Role::Time => "time",
            Role::Count => "count",
            Role::Errors => "errors",
            Role::ErrorRate => "error_rate",
            Role::Success => "success_percent",
            Role::Percentile(k) => super::quantile::QUANTILE_NAMES[k],
            Role::Value => "p50",
            Role::Latency => "latency",
            Role::Status => "status",
            Role::Label => "label_column",
            Role::End => "end",
        }
    }

    fn candidates(self) -> &'static [&'static str] {
        match self {
            Role::Time => &[
                "timestamp",
                "time",
                "ts",
                "datetime",
                "date",
                "epoch",
                "t",
                "at",
                "start",
                "starttime",
                "starttimeunixnano",
                "timeunixnano",
                "startedat",
                "timestampns",
            ],
            Role::Count => &["count", "requests", "requestcount", "reqs", "calls", "total", "hits", "n"],
            Role::Errors => &["errors", "errorcount", "failures", "failurecount", "failed", "errs"],
            Role::ErrorRate => &["errorrate", "failurerate", "errrate", "errorratio"],
            Role::Success => &["successrate", "successratio", "success", "availability"],
            Role::Percentile(0) => &["p50", "median"],
            Role::Percentile(1) => &["p90"],
            Role::Percentile(2) => &["p95"],
            Role::Percentile(_) => &["p99"],
            Role::Value => &["value"],
            Role::Latency => {
                &["latency", "duration", "elapsed", "responsetime", "rt", "took", "time_taken", "latencyms"]
            }
            Role::Status => &[
                "status",
                "statuscode",
                "code",
                "httpstatus",
                "httpstatuscode",
                "httpcode",
                "httpresponsestatuscode",
                "responsecode",
                "responsestatus",
                "responseflags",
                "grpcstatus",
                "grpcstatuscode",
                "grpccode",
                "rpcgrpcstatuscode",
                "otelstatuscode",
                "outcome",
                "result",
                "ok",
                "error",
            ],
            Role::Label => &["label", "anomaly", "islabel", "isanomaly"],
            Role::End => {
                &["endtimeunixnano", "endtime", "end", "endedat", "finishtime", "finishedat", "endtimestamp"]
            }
        }
    }
}

/// A header split into its lower-case alphanumeric base, a unit suffix and a percent mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderName {
    /// Lower-case letters and digits only (`LatencyP95(s)` → `latencyp95`).
    pub base: String,
    /// Unit from a suffix: `(s)`, `(ms)`, `_ms`, `_seconds`, ...
    pub unit: Option<LatencyUnit>,
    /// The header mentions a percentage (`%`, `pct`, `percent`).
    pub percent: bool,
}

/// Splits a header into base, unit and percent mark.
pub fn split_header(header: &str) -> HeaderName {
    let lower = header.trim().to_ascii_lowercase();
    let percent = lower.contains('%') || lower.contains("pct") || lower.contains("percent");
    const SUFFIXES: [(&str, LatencyUnit); 17] = [
        ("(s)", LatencyUnit::S),
        ("(ms)", LatencyUnit::Ms),
        ("(us)", LatencyUnit::Us),
        ("[s]", LatencyUnit::S),
        ("[ms]", LatencyUnit::Ms),
        ("[us]", LatencyUnit::Us),
        ("_seconds", LatencyUnit::S),
        ("_secs", LatencyUnit::S),
        ("_sec", LatencyUnit::S),
        ("_millis", LatencyUnit::Ms),
        ("_micros", LatencyUnit::Us),
        ("_ms", LatencyUnit::Ms),
        ("_us", LatencyUnit::Us),
        ("_s", LatencyUnit::S),
        (" ms", LatencyUnit::Ms),
        (" s", LatencyUnit::S),
        (" us", LatencyUnit::Us),
    ];
    let mut unit = None;
    let mut stem: &str = &lower;
    for (suffix, u) in SUFFIXES {
        if let Some(s) = lower.strip_suffix(suffix) {
            unit = Some(u);
            stem = s;
            break;
        }
    }
    let base: String = stem.chars().filter(char::is_ascii_alphanumeric).collect();
    HeaderName { base, unit, percent }
}

/// The latency unit a metric name states: a word `seconds`, `milliseconds` or `microseconds`
/// anywhere in it (`http_request_duration_seconds_p95`, `latency.milliseconds.avg`), else a unit
/// suffix as [`split_header`] reads it.
pub fn unit_in_name(name: &str) -> Option<LatencyUnit> {
    let lower = name.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find_map(|word| match word {
            "seconds" => Some(LatencyUnit::S),
            "milliseconds" => Some(LatencyUnit::Ms),
            "microseconds" => Some(LatencyUnit::Us),
            _ => None,
        })
        .or_else(|| split_header(name).unit)
}

/// The header line of a CSV, with each header's parsed name.
pub struct Header {
    /// The file's name, for messages.
    pub file: String,
    /// Headers as written.
    pub names: Vec<String>,
    parsed: Vec<HeaderName>,
}

impl Header {
    /// Reads the header line; an empty file is an error.
    pub fn read<R: Read>(file: &str, reader: &mut csv::Reader<R>) -> Result<Header, TraceError> {
        let record = reader.byte_headers().map_err(|e| csv_error(file, &e))?;
        Header::from_record(file, record)
    }

    /// The header from its fields as read; an empty one is an error.
    pub fn from_record(file: &str, record: &ByteRecord) -> Result<Header, TraceError> {
        if record.is_empty() || (record.len() == 1 && record[0].is_empty()) {
            return Err(TraceError::Empty { file: file.to_string() });
        }
        let names: Vec<String> =
            record.iter().map(|h| String::from_utf8_lossy(h).trim().to_string()).collect();
        let parsed = names.iter().map(|n| split_header(n)).collect();
        Ok(Header { file: file.to_string(), names, parsed })
    }

    /// The parsed name of column `idx`.
    pub fn parsed(&self, idx: usize) -> &HeaderName {
        &self.parsed[idx]
    }

    /// The column named `name` (exactly, then ignoring case and surrounding spaces).
    pub fn named(&self, name: &str, option: &str) -> Result<usize, TraceError> {
        if let Some(i) = self.names.iter().position(|h| h == name) {
            return Ok(i);
        }
        if let Some(i) = self.names.iter().position(|h| h.trim().eq_ignore_ascii_case(name.trim())) {
            return Ok(i);
        }
        Err(TraceError::Columns {
            file: self.file.clone(),
            message: format!(
                "option `{option}` names column `{name}`, which is not in the header (columns: {})",
                self.list()
            ),
        })
    }

    /// The column for `role`: the explicit name when given, else the first header whose base
    /// matches one of the role's common names (in priority order), skipping columns in `taken`.
    pub fn find(
        &self,
        role: Role,
        explicit: Option<&str>,
        taken: &[usize],
    ) -> Result<Option<usize>, TraceError> {
        if let Some(name) = explicit {
            return self.named(name, role.option()).map(Some);
        }
        for cand in role.candidates() {
            let hit = self.parsed.iter().enumerate().position(|(i, h)| {
                !taken.contains(&i)
                    && match role {
                        // Percentile names may be embedded: LatencyP95, p95_latency.
                        Role::Percentile(_) => h.base.contains(cand),
                        _ => h.base == *cand,
                    }
            });
            if hit.is_some() {
                return Ok(hit);
            }
        }
        Ok(None)
    }

    /// The headers, comma-separated, for messages.
    pub fn list(&self) -> String {
        self.names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    }
}

/// A CSV reader with the settings every importer uses: header line, rows may have fewer or
/// more fields (reported per row).
pub fn csv_reader<R: Read>(input: R) -> csv::Reader<R> {
    csv_builder().has_headers(true).from_reader(input)
}

/// The settings of [`csv_reader`]: rows may have fewer or more fields; only headers are trimmed
/// by the reader (its record trimming allocates a new record per row); cells are trimmed in
/// place by [`Row::cell`].
pub fn csv_builder() -> csv::ReaderBuilder {
    let mut builder = csv::ReaderBuilder::new();
    builder.flexible(true).trim(csv::Trim::Headers);
    builder
}

/// `cell` without leading and trailing ASCII whitespace (a sub-slice: no copy).
#[inline]
pub fn trim_cell(cell: &[u8]) -> &[u8] {
    cell.trim_ascii()
}

/// Opens a file for one of the importers, naming it in the error.
pub fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, TraceError> {
    Ok(std::io::BufReader::with_capacity(1 << 16, crate::scenario::open_input(path)?))
}

/// A CSV-level error as a [`TraceError`].
pub fn csv_error(file: &str, e: &csv::Error) -> TraceError {
    let line = e.position().map_or(0, csv::Position::line);
    TraceError::Csv { file: file.to_string(), line, message: e.to_string() }
}

/// One row being parsed: its fields and where it is, so a bad cell can be named exactly.
pub struct Row<'a> {
    /// The fields.
    pub record: &'a ByteRecord,
    /// Its line number in the file.
    pub line: u64,
    /// The header.
    pub header: &'a Header,
}

impl Row<'_> {
    /// The raw bytes of column `idx`, or an error when the row is too short.
    #[inline]
    pub fn cell(&self, idx: usize) -> Result<&[u8], TraceError> {
        self.record.get(idx).map(trim_cell).ok_or_else(|| TraceError::BadValue {
            file: self.header.file.clone(),
            line: self.line,
            column: self.header.names[idx].clone(),
            value: String::new(),
            expected: format!(
                "a value (the row has {} fields, the header {})",
                self.record.len(),
                self.header.names.len()
            ),
        })
    }

    /// A bad-value error for column `idx`.
    #[cold]
    pub fn bad(&self, idx: usize, expected: &str) -> TraceError {
        TraceError::BadValue {
            file: self.header.file.clone(),
            line: self.line,
            column: self.header.names[idx].clone(),
            value: String::from_utf8_lossy(self.record.get(idx).unwrap_or_default().trim_ascii())
                .into_owned(),
            expected: expected.to_string(),
        }
    }

    /// Column `idx` as a finite number.
    pub fn number(&self, idx: usize) -> Result<f64, TraceError> {
        let cell = self.cell(idx)?;
        parse_f64(cell).ok_or_else(|| self.bad(idx, "a number"))
    }

    /// Column `idx` as a finite number that is at least zero.
    pub fn non_negative(&self, idx: usize) -> Result<f64, TraceError> {
        let cell = self.cell(idx)?;
        parse_f64(cell).filter(|v| *v >= 0.0).ok_or_else(|| self.bad(idx, "a number that is 0 or more"))
    }
}

/// A whole number of up to 15 digits (exact as `f64` too).
#[inline]
pub fn parse_whole(cell: &[u8]) -> Option<u64> {
    if cell.len() > 15 {
        return None;
    }
    parse_digits(cell)
}

pub use super::timestamp::parse_digits;

/// A finite decimal number, without allocating.
pub fn parse_f64(cell: &[u8]) -> Option<f64> {
    // Whole numbers of up to 15 digits (most logged latencies) are exact as f64: read directly.
    if let Some(v) = parse_whole(cell) {
        return Some(v as f64);
    }
    let v: f64 = std::str::from_utf8(cell.trim_ascii()).ok()?.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Whether `cell` says "no value": empty, or `null`, `NaN`, an infinity (as exports write gaps).
pub fn says_no_value(cell: &[u8]) -> bool {
    let cell = cell.trim_ascii();
    cell.is_empty()
        || [&b"nan"[..], b"null", b"inf", b"+inf", b"-inf", b"infinity", b"+infinity", b"-infinity"]
            .iter()
            .any(|w| cell.eq_ignore_ascii_case(w))
}

/// A 0/1-style truth value (`1`, `0`, `true`, `false`, `yes`, `no`), without allocating.
pub fn parse_flag(cell: &[u8]) -> Option<bool> {
    const TRUE: [&[u8]; 4] = [b"1", b"true", b"yes", b"1.0"];
    const FALSE: [&[u8]; 4] = [b"0", b"false", b"no", b"0.0"];
    if TRUE.iter().any(|w| cell.eq_ignore_ascii_case(w)) {
        Some(true)
    } else if FALSE.iter().any(|w| cell.eq_ignore_ascii_case(w)) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_split_into_base_unit_and_percent() {
        let h = split_header("LatencyP95(s)");
        assert_eq!((h.base.as_str(), h.unit, h.percent), ("latencyp95", Some(LatencyUnit::S), false));
        let h = split_header("SuccessRate(%)");
        assert_eq!((h.base.as_str(), h.unit, h.percent), ("successrate", None, true));
        let h = split_header("latency_ms");
        assert_eq!((h.base.as_str(), h.unit), ("latency", Some(LatencyUnit::Ms)));
        let h = split_header("TimeStamp");
        assert_eq!((h.base.as_str(), h.unit), ("timestamp", None));
    }

    #[test]
    fn auto_detection_prefers_common_names() {
        let data = "Time,TimeStamp,ServiceName,SuccessRate(%),LatencyP50(s),LatencyP90(s)\n";
        let mut rdr = csv_reader(data.as_bytes());
        let h = Header::read("x.csv", &mut rdr).unwrap();
        assert_eq!(h.find(Role::Time, None, &[]).unwrap(), Some(1));
        assert_eq!(h.find(Role::Success, None, &[]).unwrap(), Some(3));
        assert_eq!(h.find(Role::Percentile(0), None, &[]).unwrap(), Some(4));
        assert_eq!(h.find(Role::Percentile(1), None, &[]).unwrap(), Some(5));
        assert_eq!(h.find(Role::Percentile(3), None, &[]).unwrap(), None);
        assert_eq!(h.find(Role::Time, Some("time"), &[]).unwrap(), Some(0));
        let err = h.find(Role::Percentile(2), Some("p95"), &[]).unwrap_err().to_string();
        assert!(err.contains("option `p95` names column `p95`") && err.contains("`TimeStamp`"), "{err}");
    }

    #[test]
    fn whole_numbers_are_runs_of_digits() {
        assert_eq!(parse_whole(b"1700000000123"), Some(1_700_000_000_123));
        assert_eq!(parse_whole(b"999999999999999"), Some(999_999_999_999_999));
        assert_eq!(parse_whole(b"1000000000000000"), None);
        for cell in [&b""[..], b"1234567/", b"12345678:", b" 1", b"-1", b"1.0"] {
            assert_eq!(parse_whole(cell), None, "{}", String::from_utf8_lossy(cell));
        }
        assert_eq!(parse_digits(b"\xff\xff\xff1234567812345678"), None);
        assert_eq!(parse_digits(b"9999999999999999999"), Some(9_999_999_999_999_999_999));
        assert_eq!(parse_digits(b"99999999999999999999"), None);
        assert_eq!(parse_digits(b"123"), Some(123));
    }

    #[test]
    fn flags_and_numbers() {
        assert_eq!(parse_flag(b"TRUE"), Some(true));
        assert_eq!(parse_flag(b"0"), Some(false));
        assert_eq!(parse_flag(b"2"), None);
        assert_eq!(parse_f64(b" 1.5 "), Some(1.5));
        assert_eq!(parse_f64(b"NaN"), None);
        assert_eq!(parse_f64(b""), None);
        assert_eq!(parse_f64(b"inf"), None);
        assert_eq!(parse_f64(b"1e400"), None);
        assert_eq!(
            (parse_f64(b"1e3"), parse_f64(b".5"), parse_f64(b"-0.25")),
            (Some(1e3), Some(0.5), Some(-0.25))
        );
        assert_eq!(parse_f64(b"0.1").map(f64::to_bits), Some(0.1f64.to_bits()));
    }
}
