//! Per-call CSV import: one row per call (a timestamp, a latency, an optional status), read
//! with the `csv` crate into the model's [`CallTrace`]; status cells are read as HTTP codes,
//! gRPC codes or names, OpenTelemetry statuses, 0/1 flags or words. Rows out of time order
//! (span files list spans by trace) are sorted in memory once read, and the report says so.
//!
//! Span files (`StartTimeUnixNano,EndTimeUnixNano[,Duration]`): without a latency column, a
//! call's latency is its end minus its start; with one, the first row's duration is checked
//! against end − start and its unit (ns, µs, ms or s) taken from that, unless `latency_unit`
//! names it.

use super::columns::{Header, Role, Row, open, parse_digits};
use super::records::Records;
use super::timestamp::{Resolved, TimeFormat};
use super::{CallTrace, ImportReport, LatencyUnit, StatusKind, TraceError, TraceOptions, to_sim};
use crate::outcome::OutcomeClass;
use breakerlab_model::trace::calls::round_non_negative;
use breakerlab_model::trace::hosts::HostIds;

use std::io::Read;
use std::path::Path;

/// How a status column is read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct StatusRead {
    /// A 0/1 flag where 1 means failure.
    error_flag: bool,
    /// Numbers are gRPC status codes (the column's name says `grpc`).
    grpc: bool,
    /// The column holds Envoy's response flags (its name says `flags`).
    envoy_flags: bool,
}

/// gRPC status names (grpc/doc/statuscodes.md) and their codes.
const GRPC: [(&[u8], i64); 17] = [
    (b"ok", 0),
    (b"cancelled", 1),
    (b"unknown", 2),
    (b"invalid_argument", 3),
    (b"deadline_exceeded", 4),
    (b"not_found", 5),
    (b"already_exists", 6),
    (b"permission_denied", 7),
    (b"resource_exhausted", 8),
    (b"failed_precondition", 9),
    (b"aborted", 10),
    (b"out_of_range", 11),
    (b"unimplemented", 12),
    (b"internal", 13),
    (b"unavailable", 14),
    (b"data_loss", 15),
    (b"unauthenticated", 16),
];

/// Reads one status cell: an HTTP code, a gRPC code (numbers, in a `grpc` column) or name, an
/// OpenTelemetry status (`STATUS_CODE_ERROR`, `Unset`), a 0/1 flag or a word.
fn parse_status(cell: &[u8], how: StatusRead) -> Option<OutcomeClass> {
    use OutcomeClass::*;
    if how.envoy_flags
        && let Some(text) = std::str::from_utf8(cell).ok()
        && super::envoy::looks_like_flags(text)
    {
        // `UO` (Envoy's own breaker refused the call) counts as a failure here: a CSV row cannot
        // be answered from its neighbours as the Envoy importer does.
        return Some(super::envoy::flags_class(text).map_or(Ok, |c| c.unwrap_or(Error)));
    }
    if how.grpc
        && let Some(code) = super::columns::parse_whole(cell).filter(|c| *c <= 16)
    {
        return Some(super::spans::grpc_class(code as i64));
    }
    if cell.len() == 3 && cell.iter().all(u8::is_ascii_digit) {
        let code = cell.iter().fold(0u32, |v, b| v * 10 + u32::from(b - b'0'));
        return (code >= 100).then(|| super::spans::http_class(code)).flatten();
    }
    if let Some(flag) = super::columns::parse_flag(cell) {
        return Some(if flag != how.error_flag { Ok } else { Error });
    }
    const WORDS: [(&[u8], OutcomeClass); 21] = [
        (b"ok", Ok),
        (b"success", Ok),
        (b"succeeded", Ok),
        (b"pass", Ok),
        (b"unset", Ok),
        (b"error", Error),
        (b"err", Error),
        (b"fail", Error),
        (b"failed", Error),
        (b"failure", Error),
        (b"exception", Error),
        (b"timeout", Error),
        (b"timed_out", Error),
        (b"timedout", Error),
        (b"rate_limited", RateLimited),
        (b"ratelimited", RateLimited),
        (b"throttled", RateLimited),
        (b"client_error", ClientError),
        (b"bad_request", ClientError),
        (b"unauthorized", ClientError),
        (b"forbidden", ClientError),
    ];
    // OpenTelemetry writes `STATUS_CODE_ERROR`; gRPC names may come as `StatusCode.UNAVAILABLE`.
    let word = strip_prefix_ignore_case(cell, b"status_code_")
        .or_else(|| strip_prefix_ignore_case(cell, b"statuscode."))
        .unwrap_or(cell);
    WORDS.iter().find(|(w, _)| word.eq_ignore_ascii_case(w)).map(|(_, c)| *c).or_else(|| {
        GRPC.iter().find(|(w, _)| word.eq_ignore_ascii_case(w)).map(|(_, c)| super::spans::grpc_class(*c))
    })
}

fn strip_prefix_ignore_case<'a>(cell: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    (cell.len() > prefix.len() && cell[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &cell[prefix.len()..])
}

/// How a unit of `micros` microseconds is named in the report.
fn unit_name(micros: f64) -> &'static str {
    match micros {
        m if m < 1.0 => "ns",
        1.0 => "us",
        1_000.0 => "ms",
        _ => "s",
    }
}

/// The unit of the duration column `[start, end, duration]` of `first` (a row on `line`), as
/// microseconds per value: the one of ns, µs, ms and s that makes the duration end − start within
/// a tenth. `None` (and a note) when none does or the row cannot tell.
fn duration_unit(
    first: &csv::ByteRecord,
    line: u64,
    header: &Header,
    [start, end, duration]: [usize; 3],
    [start_fmt, end_fmt]: [Resolved; 2],
    offset_s: i64,
    report: &mut ImportReport,
) -> Option<f64> {
    let cell = |i: usize| first.get(i).unwrap_or_default().trim_ascii();
    let t0 = start_fmt.parse(cell(start), offset_s).ok()?;
    let t1 = end_fmt.parse(cell(end), offset_s).ok()?;
    let d = super::columns::parse_f64(cell(duration))?;
    let span_us = (t1 - t0) as f64;
    let names = (&header.names[duration], &header.names[end], &header.names[start]);
    if span_us <= 0.0 || d <= 0.0 {
        return None;
    }
    let found = [(0.001, "nanoseconds"), (1.0, "microseconds"), (1_000.0, "milliseconds"), (1e6, "seconds")]
        .into_iter()
        .find(|(micros, _)| ((d * micros) / span_us - 1.0).abs() <= 0.1);
    let span = crate::time::Dur(span_us as u64);
    match found {
        Some((micros, name)) => {
            report.notes.push(format!(
                "column `{}` read as {name}: on line {line} it is {} and `{}` − `{}` is {span}",
                names.0,
                String::from_utf8_lossy(cell(duration)),
                names.1,
                names.2
            ));
            Some(micros)
        }
        None => {
            report.notes.push(format!(
                "warning: column `{}` ({} on line {line}) is not `{}` − `{}` ({span}) in any unit: read by its \
                 name's unit (set latency_unit)",
                names.0,
                String::from_utf8_lossy(cell(duration)),
                names.1,
                names.2
            ));
            None
        }
    }
}

/// The per-row state of a per-call CSV import: the columns and how to read them, the trace
/// being built, and what the report needs (previous row, clipped latencies, `--where`).
struct Loader<'h> {
    header: &'h Header,
    time: usize,
    /// The latency column; `None` when latency is end − start.
    latency: Option<usize>,
    /// The end-time column and its format, when latency is end − start.
    end: Option<(usize, Resolved)>,
    /// Every call so far, `(absolute µs, latency µs, class, host)`, once a row came out of time
    /// order (the trace then waits until all are read and sorted).
    unsorted: Option<Vec<(i64, u32, OutcomeClass, u16)>>,
    /// The host column (`host_column`), and the host of each call kept, in file order.
    host: Option<usize>,
    hosts: HostIds,
    /// The first row out of time order, for the report.
    first_unsorted: Option<String>,
    status: Option<usize>,
    how: StatusRead,
    time_format: TimeFormat,
    offset_s: i64,
    /// Microseconds per latency unit when that is whole and no scale applies (integer path).
    whole_micros: Option<u64>,
    micros_per_value: f64,
    skip_bad: bool,
    /// `--where`: column, key as written, glob.
    filters: Vec<(usize, String, String)>,
    filtered: u64,
    first_filtered: Option<String>,
    format: Option<Resolved>,
    epoch: Option<i64>,
    prev_t: i64,
    prev_line: u64,
    /// The previous row's time cell as written, at most its first 48 bytes (for the
    /// unsorted-row message), copied into a fixed buffer: no allocation per row.
    prev_text: [u8; 48],
    prev_len: usize,
    clipped: u64,
    trace: CallTrace,
}

impl Loader<'_> {
    /// Reads one row: filters, parses, checks order, appends.
    #[inline]
    fn row(&mut self, row: &Row<'_>) -> Result<(), TraceError> {
        self.trace.report.rows += 1;
        if !self.filters.is_empty() && self.left_out(row) {
            return Ok(());
        }
        let time_cell = match row.cell(self.time) {
            Ok(c) => c,
            Err(e) => return self.bad(e),
        };
        let fmt = *self.format.get_or_insert_with(|| {
            Resolved::resolve(self.time_format, &self.header.names[self.time], time_cell)
        });
        let (t, lat, class) = match self.parse(row, fmt, time_cell) {
            Ok(v) => v,
            Err(e) => return self.bad(e),
        };
        let host = match self.host.map(|h| self.host_id(row, h)).transpose() {
            Ok(h) => h.unwrap_or(0),
            Err(e) => return self.bad(e),
        };
        if t < self.prev_t && self.unsorted.is_none() {
            // Keep every call from here on with its absolute time; sorted once all are read.
            let epoch = self.epoch.unwrap_or(t);
            let calls = (0..self.trace.len())
                .map(|i| {
                    let at = self.trace.arrival(i).map_or(0, |a| a.0);
                    let answer = self.trace.first_answer(i);
                    let host = self.hosts.of_call.get(i).copied().unwrap_or(0);
                    (epoch.saturating_add(at as i64), answer.latency.0 as u32, answer.class, host)
                })
                .collect();
            self.unsorted = Some(calls);
            self.first_unsorted = Some(format!(
                "line {}, {:?} after {:?} on line {}",
                row.line,
                String::from_utf8_lossy(time_cell),
                String::from_utf8_lossy(&self.prev_text[..self.prev_len]),
                self.prev_line
            ));
        }
        if t != self.prev_t {
            self.prev_len = time_cell.len().min(self.prev_text.len());
            self.prev_text[..self.prev_len].copy_from_slice(&time_cell[..self.prev_len]);
        }
        self.push(row.line, t, lat, class, host);
        Ok(())
    }

    /// The number of the host row `row` names in column `column`: a cell that is empty (or
    /// `-`) is refused, as is a host beyond the pool's limit.
    fn host_id(&mut self, row: &Row<'_>, column: usize) -> Result<u16, TraceError> {
        let cell = row.cell(column)?;
        if cell.is_empty() || cell == b"-" {
            return Err(
                row.bad(column, "a host name (the column `host_column` names; every call needs its host)")
            );
        }
        let value = String::from_utf8_lossy(cell);
        self.hosts.id(&value).map_err(|message| TraceError::Format {
            file: self.header.file.clone(),
            message: format!("line {}, column `{}`: {message}", row.line, self.header.names[column]),
        })
    }

    /// Appends a row: `t` absolute µs, `lat` whole µs.
    #[inline]
    fn push(&mut self, line: u64, t: i64, lat: u64, class: OutcomeClass, host: u16) {
        self.prev_t = t;
        self.prev_line = line;
        let epoch = *self.epoch.get_or_insert(t);
        if lat > u64::from(u32::MAX) {
            self.clipped += 1;
        }
        let lat = lat.min(u64::from(u32::MAX)) as u32;
        if let Some(calls) = &mut self.unsorted {
            calls.push((t, lat, class, host));
            return;
        }
        if self.host.is_some() {
            self.hosts.of_call.push(host);
        }
        let at = to_sim(t, epoch);
        let trace = &mut self.trace;
        trace.push(at, lat, class);
    }

    /// A row that cannot be read: refused, or skipped and counted under `skip_bad_rows`.
    #[cold]
    fn bad(&mut self, e: TraceError) -> Result<(), TraceError> {
        if !self.skip_bad {
            return Err(e);
        }
        self.trace.report.bad_rows_skipped += 1;
        self.trace.report.first_bad_row.get_or_insert_with(|| e.to_string());
        Ok(())
    }

    /// True (and counted) when a `--where` clause does not match the row.
    fn left_out(&mut self, row: &Row<'_>) -> bool {
        for (col, key, glob) in &self.filters {
            let cell = row.record.get(*col).map(<[u8]>::trim_ascii).unwrap_or_default();
            if !super::spans::glob_match(glob.as_bytes(), cell) {
                self.filtered += 1;
                self.first_filtered.get_or_insert_with(|| {
                    format!(
                        "line {}: {}",
                        row.line,
                        super::spans::mismatch(key, &String::from_utf8_lossy(cell), glob)
                    )
                });
                return true;
            }
        }
        false
    }

    /// Time (absolute µs), latency (whole µs, rounded) and class of a row.
    #[inline]
    fn parse(
        &self,
        row: &Row<'_>,
        fmt: Resolved,
        time_cell: &[u8],
    ) -> Result<(i64, u64, OutcomeClass), TraceError> {
        let t = fmt.parse(time_cell, self.offset_s).map_err(|e| row.bad(self.time, e))?;
        let lat = match (self.latency, self.end) {
            (Some(latency), _) => {
                let cell = row.cell(latency)?;
                match self.whole_micros.zip(super::columns::parse_whole(cell)) {
                    Some((per, v)) => v.saturating_mul(per),
                    None => {
                        let v = round_non_negative(row.non_negative(latency)? * self.micros_per_value);
                        if v >= 18_446_744_073_709_551_615.0 { u64::MAX } else { v as u64 }
                    }
                }
            }
            (None, Some((end, end_fmt))) => {
                let end_cell = row.cell(end)?;
                let end_t = end_fmt.parse(end_cell, self.offset_s).map_err(|e| row.bad(end, e))?;
                let early = || row.bad(end, "an end time no earlier than the start");
                if (fmt, end_fmt) == (Resolved::EpochNs, Resolved::EpochNs)
                    && let (Some(a), Some(b)) = (parse_digits(time_cell), parse_digits(end_cell))
                {
                    // Both in nanoseconds: the difference to the nearest microsecond.
                    (b.checked_sub(a).ok_or_else(early)? + 500) / 1_000
                } else {
                    end_t.checked_sub(t).filter(|d| *d >= 0).ok_or_else(early)? as u64
                }
            }
            (None, None) => 0,
        };
        let class = match self.status {
            None => OutcomeClass::Ok,
            Some(i) => parse_status(row.cell(i)?, self.how).ok_or_else(|| {
                row.bad(
                    i,
                    "an HTTP status code, a gRPC or OpenTelemetry status, 0/1, or a word such as ok, error, \
                     timeout, rate_limited",
                )
            })?,
        };
        Ok((t, lat, class))
    }
}

/// Imports a per-call CSV from a file.
pub fn from_path(path: &Path, opts: &TraceOptions) -> Result<CallTrace, TraceError> {
    from_reader(&path.display().to_string(), open(path)?, opts)
}

/// Imports a per-call CSV from any reader; `file` names it in messages. `--where` clauses
/// (`opts.filters`) name columns of the file: a row is kept when each clause's glob matches
/// its column's cell.
pub fn from_reader<R: Read>(file: &str, input: R, opts: &TraceOptions) -> Result<CallTrace, TraceError> {
    let offset_s = opts.offset_seconds()?;
    let near = opts.near_calls.unwrap_or(16);
    if near == 0 {
        return Err(TraceError::Option { option: "near_calls", message: "expected at least 1".into() });
    }
    let mut report = ImportReport { file: file.to_string(), ..ImportReport::default() };
    let (mut reader, header) = Records::open(file, input)?;
    let cols_err = |message: String| TraceError::Columns { file: file.to_string(), message };
    let time = header.find(Role::Time, opts.time.as_deref(), &[])?.ok_or_else(|| {
        cols_err(format!("no timestamp column found (set `time`); columns: {}", header.list()))
    })?;
    let latency = header.find(Role::Latency, opts.latency.as_deref(), &[time])?;
    let end = header.find(Role::End, None, &[time])?.filter(|e| Some(*e) != latency);
    if latency.is_none() && end.is_none() {
        return Err(cols_err(format!(
            "no latency column found (set `latency`), nor an end time (EndTimeUnixNano) to take it from; \
             columns: {}",
            header.list()
        )));
    }
    let mut first = csv::ByteRecord::new();
    let first_line = reader.next(&mut first)?;
    let first_time_cell = first.get(time).unwrap_or_default().trim_ascii();
    let time_fmt = Resolved::resolve(opts.time_format, &header.names[time], first_time_cell);
    let end_fmt = end.map(|e| {
        let cell = first.get(e).unwrap_or_default().trim_ascii();
        (e, Resolved::resolve(opts.time_format, &header.names[e], cell))
    });
    // A duration column next to start and end: its unit is the one that makes it end − start.
    let checked_unit = match (latency, end_fmt, first_line) {
        (Some(l), Some((e, end_f)), Some(line)) if opts.latency_unit.is_none() => {
            duration_unit(&first, line, &header, [time, e, l], [time_fmt, end_f], offset_s, &mut report)
        }
        _ => None,
    };
    let taken: Vec<usize> = [Some(time), latency, end].into_iter().flatten().collect();
    let status = header.find(Role::Status, opts.status.as_deref(), &taken)?;
    if status.is_none() {
        report.notes.push(format!(
            "no status column: every call is ok (name one with --column status=NAME); columns: {}",
            header.list()
        ));
    }
    let unit = match (opts.latency_unit, latency.and_then(|l| header.parsed(l).unit), latency) {
        (Some(u), _, _) | (None, Some(u), _) => u,
        (None, None, None) => LatencyUnit::Us,
        (None, None, Some(_)) if checked_unit.is_some() => LatencyUnit::Us,
        (None, None, Some(l)) => {
            report.notes.push(format!(
                "column `{}` has no unit in its name: read as milliseconds (set latency_unit)",
                header.names[l]
            ));
            LatencyUnit::Ms
        }
    };
    // The checked unit, as microseconds per value (nanoseconds are a thousandth).
    let micros_per_unit = checked_unit.unwrap_or(unit.micros());
    let base = |i: usize| header.parsed(i).base.clone();
    let error_flag = match opts.status_kind {
        StatusKind::OkFlag => false,
        StatusKind::ErrorFlag => true,
        StatusKind::Auto => status.is_some_and(|i| {
            let base = base(i);
            !base.contains("grpc") && (base.contains("error") || base.contains("fail"))
        }),
    };
    let how = StatusRead {
        error_flag,
        grpc: status.is_some_and(|i| base(i).contains("grpc")),
        envoy_flags: status.is_some_and(|i| base(i).contains("flags")),
    };
    let micros_per_value = opts.latency_scale.map_or(1.0, |s| s.get()) * micros_per_unit;
    let latency_shown = match (latency, end) {
        (Some(l), _) => format!("{} ({})", header.names[l], unit_name(micros_per_unit)),
        (None, Some(e)) => format!("{} − {}", header.names[e], header.names[time]),
        (None, None) => String::new(),
    };
    report.columns = vec![("time".into(), header.names[time].clone()), ("latency".into(), latency_shown)];
    if let Some(i) = status {
        let flag = if error_flag {
            " (1 = error)"
        } else if how.grpc {
            " (gRPC codes)"
        } else if how.envoy_flags {
            " (Envoy response flags: UF, UH, UT, UC, UR, URX, UPE fail, UO counts as a failure, RL is rate limited)"
        } else {
            ""
        };
        report.columns.push(("status".into(), format!("{}{flag}", header.names[i])));
    }
    let host = opts.host_column.as_deref().map(|name| header.named(name, "host_column")).transpose()?;
    if let Some(h) = host {
        report.columns.push(("host".into(), header.names[h].clone()));
    }
    let mut filters = Vec::new();
    for clause in super::spans::Filter::parse(&opts.filters)?.clauses() {
        let (key, glob) = clause;
        filters.push((header.named(key, "where")?, key.clone(), glob.clone()));
    }

    let mut load = Loader {
        header: &header,
        time,
        latency,
        end: end_fmt.filter(|_| latency.is_none()),
        unsorted: None,
        first_unsorted: None,
        host,
        hosts: HostIds::new(),
        status,
        how,
        time_format: opts.time_format,
        offset_s,
        whole_micros: (opts.latency_scale.is_none() && micros_per_unit >= 1.0)
            .then_some(micros_per_unit as u64),
        micros_per_value,
        skip_bad: opts.skip_bad_rows,
        filters,
        filtered: 0,
        first_filtered: None,
        format: Some(time_fmt),
        epoch: None,
        prev_t: i64::MIN,
        prev_line: 0,
        prev_text: [0; 48],
        prev_len: 0,
        clipped: 0,
        trace: CallTrace::new(near, offset_s, report),
    };
    if let Some(line) = first_line {
        load.row(&Row { record: &first, line, header: &header })?;
    }
    let mut record = csv::ByteRecord::new();
    while let Some(line) = reader.next(&mut record)? {
        load.row(&Row { record: &record, line, header: &header })?;
    }
    let Loader {
        mut trace,
        format,
        epoch,
        clipped,
        filtered,
        first_filtered,
        unsorted,
        first_unsorted,
        host,
        mut hosts,
        ..
    } = load;
    trace.report.notes.extend(reader.assumed());
    if format == Some(Resolved::Datetime) {
        trace.report.notes.extend(super::timestamp::zone_note(
            &header.names[time],
            first_time_cell,
            offset_s,
        ));
    }
    if filtered > 0 {
        trace.report.notes.push(format!(
            "--where left out {filtered} of {} rows; the first: {}",
            trace.report.rows,
            first_filtered.as_deref().unwrap_or("")
        ));
    }
    if trace.is_empty() {
        return Err(match (trace.report.first_bad_row.take(), first_filtered) {
            (_, Some(first)) if trace.report.bad_rows_skipped == 0 => TraceError::Format {
                file: file.into(),
                message: format!(
                    "no row matches --where ({} read; the first left out: {first})",
                    trace.report.rows
                ),
            },
            (Some(first), _) => {
                TraceError::NoGoodRows { file: file.into(), skipped: trace.report.bad_rows_skipped, first }
            }
            (None, _) => TraceError::HeaderOnly { file: file.into() },
        });
    }
    if clipped > 0 {
        trace.report.notes.push(format!("{clipped} latencies above 71m34s were clipped to 71m34s"));
    }
    if let Some(fmt) = format.filter(|f| *f != Resolved::Datetime) {
        trace.report.notes.push(format!("time column `{}` read as {}", header.names[time], fmt.describe()));
    }
    if let Some(mut calls) = unsorted {
        calls.sort_by_key(|c| c.0); // stable: calls at one time keep file order
        let mut report = std::mem::take(&mut trace.report);
        report.notes.push(format!(
            "rows are not in time order (the first out of order: {}): the {} calls were sorted by `{}` in memory",
            first_unsorted.as_deref().unwrap_or(""),
            calls.len(),
            header.names[time]
        ));
        hosts.of_call = calls.iter().map(|c| c.3).collect();
        let mut trace =
            CallTrace::from_calls(report, calls.into_iter().map(|(t, l, c, _)| (t, f64::from(l), c)), opts)?;
        if host.is_some() {
            attach_hosts(&mut trace, hosts)?;
        }
        return Ok(trace);
    }
    trace.report.epoch_offset_us = epoch.unwrap_or(0);
    trace.report.rows_used = trace.len() as u64;
    trace.shrink_to_fit();
    if host.is_some() {
        attach_hosts(&mut trace, hosts)?;
    }
    Ok(trace)
}

/// Gives `trace` the hosts of its calls from a named host column, and says so in its report.
fn attach_hosts(trace: &mut CallTrace, hosts: HostIds) -> Result<(), TraceError> {
    trace.set_hosts(hosts, true)?;
    let names = trace.hosts().map(|h| h.names.clone()).unwrap_or_default();
    trace.report.notes.push(super::hosts_note(&names));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Answer;
    use crate::time::{Dur, SimTime};

    fn parse(data: &str, opts: &TraceOptions) -> Result<CallTrace, TraceError> {
        crate::trace::calls::from_reader("calls.csv", data.as_bytes(), opts)
    }

    const LOG: &str = "timestamp,latency_ms,status
2024-05-01T10:00:00.000Z,12.5,200
2024-05-01T10:00:00.000Z,30,503
2024-05-01T10:00:01.250Z,5000,timeout
2024-05-01T10:00:02Z,1,429
2024-05-01T10:00:03Z,2,404
2024-05-01T10:00:04Z,40,OK
2024-05-01T10:00:05Z,41,error
";

    #[test]
    fn first_attempts_and_arrivals_replay_exactly() {
        let t = parse(LOG, &TraceOptions::default()).unwrap();
        assert_eq!(t.len(), 7);
        assert_eq!(t.epoch_offset_us(), 1_714_557_600_000_000);
        let s = |ms: u64| SimTime(ms * 1_000);
        assert_eq!(t.arrivals(), vec![s(0), s(0), s(1_250), s(2_000), s(3_000), s(4_000), s(5_000)]);
        let expect = [
            (12_500, OutcomeClass::Ok),
            (30_000, OutcomeClass::Error),
            (5_000_000, OutcomeClass::Error),
            (1_000, OutcomeClass::RateLimited),
            (2_000, OutcomeClass::ClientError),
            (40_000, OutcomeClass::Ok),
            (41_000, OutcomeClass::Error),
        ];
        for (i, (us, class)) in expect.into_iter().enumerate() {
            assert_eq!(t.first_answer(i), Answer { latency: Dur(us), class, retry_after: None }, "call {i}");
        }
        // The timeout logged at 1.25 s (5 s) completes last.
        assert_eq!(t.horizon(), s(6_250));
        assert_eq!(t.report().columns[1].1, "latency_ms (ms)");
    }

    #[test]
    fn generated_log_replays_every_row_exactly() {
        let mut csv = String::from("ts_ms,duration,code\n");
        let mut expect = Vec::new();
        for i in 0..5_000u64 {
            let t = 1_700_000_000_000 + i * 7 + (i % 3);
            let lat = (i * 37) % 2_000;
            let code = [200, 200, 500, 429, 401, 204][(i % 6) as usize];
            csv.push_str(&format!("{t},{lat}.5,{code}\n"));
            expect.push((t, lat * 1_000 + 500, code));
        }
        let opts = TraceOptions { latency_unit: Some(LatencyUnit::Ms), ..TraceOptions::default() };
        let t = parse(&csv, &opts).unwrap();
        let arrivals = t.arrivals();
        for (i, (ts, lat, code)) in expect.into_iter().enumerate() {
            assert_eq!(arrivals[i], SimTime((ts - 1_700_000_000_000) * 1_000));
            let a = t.first_answer(i);
            assert_eq!(a.latency, Dur(lat));
            let class = match code {
                200 | 204 => OutcomeClass::Ok,
                500 => OutcomeClass::Error,
                429 => OutcomeClass::RateLimited,
                _ => OutcomeClass::ClientError,
            };
            assert_eq!(a.class, class, "row {i}");
        }
    }

    #[test]
    fn rows_of_every_shape_are_read_and_unsorted_ones_are_sorted() {
        // Whole numbers mixed with decimals, spaces, a word status, a blank line and an extra
        // column.
        let mut csv = String::from("ts_ms,latency_ms,code\n");
        for i in 0..3_000u64 {
            let t = 1_700_000_000_000 + i * 3;
            match i % 500 {
                7 => csv.push_str(&format!("{t},{}.5,200\n", i % 40)),
                8 => csv.push_str(&format!(" {t} ,{},503\n", i % 40)),
                9 => csv.push_str(&format!("{t},{},timeout\n", i % 40)),
                10 => csv.push('\n'),
                11 => csv.push_str(&format!("{t},{},429,extra\n", i % 40)),
                _ => csv.push_str(&format!("{t},{},{}\n", i % 40, [200, 503, 404][(i % 3) as usize])),
            }
        }
        let t = parse(&csv, &TraceOptions::default()).unwrap();
        assert_eq!((t.len(), t.report.rows), (2_994, 2_994));
        // Rows 1503 to 1509 follow three blank lines.
        assert_eq!(t.arrival(1_500), Some(SimTime(1_503 * 3_000)));
        assert_eq!(
            (t.first_answer(1_504), t.first_answer(1_505).class, t.first_answer(1_506).class),
            (
                Answer { latency: Dur(27_500), class: OutcomeClass::Ok, retry_after: None },
                OutcomeClass::Error,
                OutcomeClass::Error
            )
        );
        // Out of order: the message names the line and the previous value.
        let bad = csv.replace("1700000000060,20,", "1700000000001,20,");
        let u = parse(&bad, &TraceOptions::default()).unwrap();
        assert_eq!(u.len(), 2_994);
        let times: Vec<SimTime> = u.arrivals();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!((times[1], u.first_answer(1).latency), (SimTime(1_000), Dur(20_000)));
        let notes = u.report().notes.join("\n");
        assert!(
            notes.contains(
                "rows are not in time order (the first out of order: line 22, \"1700000000001\" after \"1700000000057\" \
                 on line 21): the 2994 calls were sorted by `ts_ms` in memory"
            ),
            "{notes}"
        );
        // Nanoseconds (19 digits) and a bad latency on a later line.
        let ns = "timestamp_ns,latency_us,status\n1700000000000000000,5,200\n1700000000000001999,7,500\n1700000000000002000,x,200\n";
        let e = parse(ns, &TraceOptions::default()).unwrap_err().to_string();
        assert!(e.contains("line 4, column `latency_us`"), "{e}");
        let t = parse(&ns.replace(",x,", ",9,"), &TraceOptions::default()).unwrap();
        assert_eq!(t.arrivals(), vec![SimTime(0), SimTime(1), SimTime(2)]);
        assert_eq!(
            t.first_answer(1),
            Answer { latency: Dur(7), class: OutcomeClass::Error, retry_after: None }
        );
    }

    #[test]
    fn http_codes_and_envoy_flags_are_found_and_read_as_status() {
        let t =
            parse("ts,latency_ms,http_code\n1700000000,5,200\n1700000001,5,503\n", &TraceOptions::default())
                .unwrap();
        assert_eq!(t.report().columns[2].1, "http_code");
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        let log = "ts,latency_ms,response_flags\n1700000000,5,-\n1700000001,5,UF,URX\n1700000002,5,UO\n\
                   1700000003,5,RL\n1700000004,5,DC\n";
        let log = log.replace("UF,URX", "\"UF,URX\"");
        let t = parse(&log, &TraceOptions::default()).unwrap();
        let classes: Vec<OutcomeClass> = (0..5).map(|i| t.first_answer(i).class).collect();
        use OutcomeClass::*;
        assert_eq!(classes, vec![Ok, Error, Error, RateLimited, Ok]);
        assert!(
            t.report().columns[2].1.starts_with("response_flags (Envoy response flags"),
            "{:?}",
            t.report()
        );
    }

    /// Every call's logged latency in µs, in time order.
    fn latencies(t: &CallTrace) -> Vec<u64> {
        (0..t.len()).map(|i| t.first_answer(i).latency.0).collect()
    }

    /// Nezha's span files (IntelligentDDS/Nezha rca_data/2022-08-23/trace/*.csv): grouped by
    /// trace, not sorted; `Duration` in microseconds next to nanosecond start and end times.
    const NEZHA: &str = "TraceID,SpanID,ParentID,PodName,OperationName,StartTimeUnixNano,EndTimeUnixNano,Duration
0614a31f4ec5c1ec1eb71943899c4f26,734e8b2cfde651b6,root,frontend-579b9bff58-t2dbm,hipstershop.Frontend/Recv.,1661256099750950941,1661256100951532472,1200581
0614a31f4ec5c1ec1eb71943899c4f26,331684207de7f4c8,734e8b2cfde651b6,frontend-579b9bff58-t2dbm,hipstershop.ProductCatalogService/GetProduct,1661256099751486825,1661256099851230825,99744
0614a31f4ec5c1ec1eb71943899c4f26,4de44a2e9516f9a8,331684207de7f4c8,productcatalogservice-668d5f85fb-jhwx9,hipstershop.ProductCatalogService/GetProduct,1661256099755481913,1661256099759170348,3688
0614a31f4ec5c1ec1eb71943899c4f26,26eb6fe3dd454342,4de44a2e9516f9a8,productcatalogservice-668d5f85fb-jhwx9,sql.conn.query,1661256099758224479,1661256099758930996,706
0bedab715c66cc57797884ddac1faa6f,bd83f32cf3518cec,c1f5914b288833ea,frontend-579b9bff58-t2dbm,hipstershop.ProductCatalogService/GetProduct,1661256111351037151,1661256111451048318,100011
0bedab715c66cc57797884ddac1faa6f,35c19fa8fad383eb,bd83f32cf3518cec,productcatalogservice-668d5f85fb-jhwx9,hipstershop.ProductCatalogService/GetProduct,1661256111354478701,1661256111358397583,3918
09e553ecbd080ba4ce384391ab1d15cc,c364056e2e7a373f,e30a7a0413de1655,frontend-579b9bff58-t2dbm,hipstershop.ProductCatalogService/GetProduct,1661256120956959854,1661256121050881836,93921
";

    #[test]
    fn span_files_check_the_duration_unit_and_are_sorted() {
        let t = parse(NEZHA, &TraceOptions::default()).unwrap();
        assert_eq!(t.len(), 7);
        // Sorted by start: the sql span (706 us) started before the second trace's spans.
        assert_eq!(latencies(&t), vec![1_200_581, 99_744, 3_688, 706, 100_011, 3_918, 93_921]);
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains(
                "column `Duration` read as microseconds: on line 2 it is 1200581 and `EndTimeUnixNano` − \
                 `StartTimeUnixNano` is 1s200ms582us"
            ),
            "{notes}"
        );
        assert!(!notes.contains("read as milliseconds"), "{notes}");
        assert!(!notes.contains("not in time order"), "{notes}");
        assert_eq!(t.report().columns[1].1, "Duration (us)");
        // Grouped by trace: the second trace's child span starts before its parent's row.
        let mut rows: Vec<&str> = NEZHA.lines().collect();
        rows.swap(5, 6);
        let t = parse(&(rows.join("\n") + "\n"), &TraceOptions::default()).unwrap();
        assert!(
            t.report()
                .notes
                .join("\n")
                .contains("line 7, \"1661256111351037151\" after \"1661256111354478701\" on line 6")
        );
        assert_eq!(latencies(&t)[4], 100_011);
        // No Duration column: latency is end − start.
        let no_duration: String =
            NEZHA.lines().map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n").collect();
        let t = parse(&no_duration, &TraceOptions::default()).unwrap();
        assert_eq!(latencies(&t), vec![1_200_582, 99_744, 3_688, 707, 100_011, 3_919, 93_922]);
        assert_eq!(t.report().columns[1].1, "EndTimeUnixNano − StartTimeUnixNano");
        assert_eq!(
            super::super::detect_format(
                &{
                    let dir = tempfile::tempdir().unwrap();
                    let p = dir.keep().join("spans.csv");
                    std::fs::write(&p, &no_duration).unwrap();
                    p
                },
                &TraceOptions::default()
            )
            .unwrap(),
            super::super::TraceFormat::Calls
        );
        // Bad inputs: an end before its start; a duration that is end − start in no unit.
        let bad = no_duration.replace("1661256099851230825", "1661256099001230825");
        let e = parse(&bad, &TraceOptions::default()).unwrap_err().to_string();
        assert!(
            e.contains("line 3, column `EndTimeUnixNano`: expected an end time no earlier than the start"),
            "{e}"
        );
        let odd = NEZHA.replacen(",1200581\n", ",5\n", 1);
        let t = parse(&odd, &TraceOptions::default()).unwrap();
        assert!(
            t.report().notes.join("\n").contains("warning: column `Duration` (5 on line 2) is not"),
            "{t:?}"
        );
        let e = parse("TraceID,SpanID\na,b\n", &TraceOptions::default()).unwrap_err().to_string();
        assert!(e.contains("no timestamp column"), "{e}");
    }

    #[test]
    fn unsorted_interval_rows_keep_the_header_in_the_hint() {
        let e = crate::trace::interval::from_reader(
            "i.csv",
            "id,ts,p95_ms\n1,1700000060,5\n2,1700000000,5\n".as_bytes(),
            &TraceOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("(column 2: sort the rows below the header, e.g. `(head -n 1 i.csv; tail -n +2 i.csv | sort -t, -k2,2) > sorted.csv`"),
            "{e}"
        );
    }

    #[test]
    fn unlogged_attempts_draw_from_the_nearest_calls() {
        let opts = TraceOptions { near_calls: Some(2), ..TraceOptions::default() };
        let t = parse(LOG, &opts).unwrap();
        let mut rng = crate::rng::rng_from_u64(9);
        // At 3.9 s the two nearest calls are 4 s (40 ms ok) and 3 s (2 ms client error).
        let mut seen = [0usize; 2];
        for _ in 0..1_000 {
            let a = t.answer_near(SimTime(3_900_000), &mut rng);
            match a.latency.0 {
                40_000 => seen[0] += 1,
                2_000 => seen[1] += 1,
                other => panic!("drew {other} µs from outside the two nearest calls"),
            }
        }
        assert!(seen[0] > 400 && seen[1] > 400, "{seen:?}");
        // Past the end and before the start: the nearest calls at that edge.
        for _ in 0..100 {
            assert!([40_000, 41_000].contains(&t.answer_near(SimTime(60_000_000), &mut rng).latency.0));
            assert!([12_500, 30_000].contains(&t.answer_near(SimTime::ZERO, &mut rng).latency.0));
        }
        let one = TraceOptions { near_calls: Some(1), ..TraceOptions::default() };
        let t = parse(LOG, &one).unwrap();
        // Equidistant (2.5 s between 2 s and 3 s): the earlier call wins the tie.
        assert_eq!(t.answer_near(SimTime(2_500_000), &mut rng).class, OutcomeClass::RateLimited);
    }

    #[test]
    fn the_scripted_call_format_reads_as_a_call_log() {
        let t = parse("t_ms,latency_ms,ok\n0,5,1\n250,900,0\n", &TraceOptions::default()).unwrap();
        assert_eq!(t.arrivals(), vec![SimTime(0), SimTime(250_000)]);
        assert_eq!(
            t.first_answer(1),
            Answer { latency: Dur(900_000), class: OutcomeClass::Error, retry_after: None }
        );
        assert_eq!(t.report().notes, vec!["time column `t_ms` read as epoch milliseconds".to_string()]);
    }

    #[test]
    fn flags_words_and_epoch_seconds() {
        let ok = "t,latency(s),ok\n1700000000.5,0.25,1\n1700000001,0.5,0\n";
        let t = parse(ok, &TraceOptions::default()).unwrap();
        assert_eq!(t.first_answer(0).class, OutcomeClass::Ok);
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        assert_eq!(t.first_answer(1).latency, Dur::from_millis(500));
        assert_eq!(t.arrivals()[1], SimTime(500_000));
        let err = "time,latency_us,is_error\n2024-01-01 00:00:00,100,1\n2024-01-01 00:00:00,100,false\n";
        let opts = TraceOptions { status: Some("is_error".into()), ..TraceOptions::default() };
        let t = parse(err, &opts).unwrap();
        assert_eq!(t.first_answer(0).class, OutcomeClass::Error);
        assert_eq!(t.first_answer(1).class, OutcomeClass::Ok);
        assert_eq!(t.first_answer(0).latency, Dur(100));
        let flipped = TraceOptions { status_kind: StatusKind::OkFlag, ..opts };
        assert_eq!(parse(err, &flipped).unwrap().first_answer(0).class, OutcomeClass::Ok);
    }

    #[test]
    fn cells_are_trimmed_without_the_readers_allocating_trim() {
        let t = parse(
            "timestamp , latency_ms , status\n 1000 , 5 , ok \n1001,\t6, 500\n",
            &TraceOptions::default(),
        )
        .unwrap();
        assert_eq!(
            t.first_answer(0),
            Answer { latency: Dur(5_000), class: OutcomeClass::Ok, retry_after: None }
        );
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        assert_eq!(t.arrivals(), vec![SimTime(0), SimTime(1_000_000)]);
    }

    #[test]
    fn aggregates_into_intervals_for_slo_rules() {
        let mut csv = String::from("timestamp,latency_ms,status\n");
        // Minute 0: 100 ok calls at 1..=100 ms; minute 1: none; minute 2: 10 calls, 4 errors.
        for i in 1..=100u64 {
            csv.push_str(&format!("{},{i},200\n", 1_000 + i * 500));
        }
        for i in 0..10u64 {
            csv.push_str(&format!("{},7,{}\n", 1_000 + 150_000 + i, if i < 4 { 503 } else { 200 }));
        }
        let opts = TraceOptions { time_format: crate::trace::TimeFormat::EpochMs, ..TraceOptions::default() };
        let t = parse(&csv, &opts).unwrap();
        let agg = t.aggregate(Dur::from_secs(60)).unwrap();
        assert_eq!(agg.intervals().len(), 2);
        let first = &agg.intervals()[0];
        assert_eq!(first.count(), Some(100));
        assert_eq!(
            [0, 1, 2, 3].map(|k| first.percentile_us(k).unwrap()),
            [50_000.0, 90_000.0, 95_000.0, 99_000.0]
        );
        let second = &agg.intervals()[1];
        assert_eq!(
            (second.start(), second.count(), second.error_rate()),
            (SimTime(120_000_000), Some(10), 0.4)
        );
        assert_eq!(agg.gaps().len(), 1);
        assert!(agg.is_missing(SimTime(70_000_000)));
        assert!(!agg.is_missing(SimTime(120_000_000)));
        let w = crate::trace::SloRule::parse("error_rate > 0.2").unwrap().windows(&agg).unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].start, w[0].end), (SimTime(120_000_000), SimTime(180_000_000)));
    }

    #[test]
    fn where_keeps_rows_whose_columns_match_in_any_csv() {
        let log = "ts_ms,service,operation,latency_ms,status\n\
                   1000,frontend-1,Convert,5,200\n\
                   1001,cart,Convert,x,200\n\
                   1002,frontend-2,GetCart,7,200\n\
                   1003,frontend-2,Convert,9,503\n";
        let opts = |w: &[&str]| TraceOptions {
            filters: w.iter().map(|s| s.to_string()).collect(),
            ..TraceOptions::default()
        };
        // The cart row's bad latency does not matter: it is left out before it is read.
        let t = parse(log, &opts(&["service=frontend*", "operation=Convert"])).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        assert_eq!((t.report().rows, t.report().rows_used), (4, 2));
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains("--where left out 2 of 4 rows; the first: line 3: service \"cart\" does not match \"frontend*\""),
            "{notes}"
        );
        let e = parse(log, &opts(&["service=nobody"])).unwrap_err().to_string();
        assert!(e.contains("no row matches --where (4 read; the first left out: line 2"), "{e}");
        let e = parse(log, &opts(&["region=eu"])).unwrap_err().to_string();
        assert!(e.contains("option `where` names column `region`, which is not in the header"), "{e}");
    }

    #[test]
    fn grpc_and_opentelemetry_statuses() {
        let t = parse(
            "t_ms,latency_ms,grpc_status\n1,5,0\n2,5,14\n3,5,8\n4,5,5\n5,5,UNAVAILABLE\n",
            &TraceOptions::default(),
        )
        .unwrap();
        use OutcomeClass::*;
        let classes: Vec<_> = (0..5).map(|i| t.first_answer(i).class).collect();
        assert_eq!(classes, vec![Ok, Error, RateLimited, ClientError, Error]);
        assert_eq!(t.report().columns[2].1, "grpc_status (gRPC codes)");
        let t = parse(
            "t_ms,latency_ms,status\n1,5,STATUS_CODE_ERROR\n2,5,STATUS_CODE_UNSET\n3,5,Ok\n4,5,DEADLINE_EXCEEDED\n",
            &TraceOptions::default(),
        )
        .unwrap();
        let classes: Vec<_> = (0..4).map(|i| t.first_answer(i).class).collect();
        assert_eq!(classes, vec![Error, Ok, Ok, Error]);
    }

    #[test]
    fn rounding_matches_the_library() {
        for x in
            [0.0, 0.4999999999999999, 0.5, 1.5, 2.5, 12_345.499_999, 7.5e15, 1e300, 4_503_599_627_370_495.5]
        {
            assert_eq!(round_non_negative(x), x.round(), "{x}");
        }
    }

    #[test]
    fn json_is_never_read_as_csv() {
        let prom = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        let e = parse(prom, &TraceOptions::default()).unwrap_err().to_string();
        assert!(
            e.contains("this file holds Prometheus query_range JSON (detected from the content), not CSV"),
            "{e}"
        );
        let e = parse("[\n1, 2]\n", &TraceOptions::default()).unwrap_err().to_string();
        assert!(e.contains("of no shape breakerlab reads, not CSV"), "{e}");
    }

    #[test]
    fn bad_rows_and_order() {
        let data = "timestamp,latency_ms,status\n1000,5,200\n1001,5,teapot\n1002,x,200\n1003,5,200\n";
        let err = parse(data, &TraceOptions::default()).unwrap_err().to_string();
        assert!(err.starts_with("calls.csv: line 3, column `status`: expected an HTTP status code"), "{err}");
        assert!(err.ends_with("found \"teapot\""), "{err}");
        let skip = TraceOptions { skip_bad_rows: true, ..TraceOptions::default() };
        let t = parse(data, &skip).unwrap();
        assert_eq!((t.len(), t.report().bad_rows_skipped), (2, 2));
        let t =
            parse("timestamp,latency_ms,status\n1000,5,200\n999,7,200\n", &TraceOptions::default()).unwrap();
        assert_eq!((t.report().epoch_offset_us, t.first_answer(0).latency), (999_000_000, Dur(7_000)));
        assert_eq!(t.horizon(), SimTime(1_005_000));
        let err = parse("timestamp,latency_ms,status\n", &TraceOptions::default()).unwrap_err();
        assert!(matches!(err, TraceError::HeaderOnly { .. }));
        let err = parse("timestamp,status\n1,200\n", &TraceOptions::default()).unwrap_err().to_string();
        assert!(err.contains("no latency column"), "{err}");
        let err = parse("a,b,c\n1,2,3\n", &TraceOptions::default()).unwrap_err().to_string();
        assert!(err.contains("no timestamp column"), "{err}");
    }
}
