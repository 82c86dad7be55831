//! Ground truth for a replay, in the trace's time base: an incident label CSV
//! (`start,end,expectation[,kind]`), NAB's windows JSON, a fault list of instants with a fixed
//! duration (Nezha's JSON, or one instant per line), a 0/1 label column of the trace itself
//! (runs of 1s), or an SLO rule ([`super::slo`]). Every loader returns windows sorted by start.
//!
//! Absolute times are moved into the trace's time base ([`TimeBase`]): windows that end before
//! the trace's first row or start at or after its horizon are dropped, partly covered ones are
//! clipped; if every window falls outside the trace, that is an error (usually a zone mistake).

use super::columns::{Header, Role, Row, csv_error, csv_reader, open, parse_flag};
use super::timestamp::{Resolved, TimeFormat, parse_datetime, parse_epoch};
use super::{IntervalTrace, LabelKind, TimeBase, TraceError, TraceOptions};
use crate::time::{Dur, SimTime};
use crate::truth::{Expect, IncidentWindow};
use serde_json::Value;
use std::path::Path;

fn labels_err(file: &str, message: String) -> TraceError {
    TraceError::Labels { file: file.to_string(), message }
}

fn finish(
    file: &str,
    mut windows: Vec<IncidentWindow>,
    total: usize,
    base: &TimeBase,
) -> Result<Vec<IncidentWindow>, TraceError> {
    if total > 0 && windows.is_empty() {
        return Err(labels_err(
            file,
            format!(
                "all {total} windows fall outside the trace (which spans {} from epoch {} s); check the zone \
                 (utc_offset) and that the labels belong to this trace",
                base.horizon - SimTime::ZERO,
                base.epoch_us.div_euclid(1_000_000)
            ),
        ));
    }
    windows.sort_by_key(|w| (w.start, w.end));
    Ok(windows)
}

/// An absolute timestamp written as epoch seconds/ms (by magnitude) or a date-time.
fn absolute(cell: &[u8], base: &TimeBase) -> Result<i64, &'static str> {
    Resolved::resolve(TimeFormat::Auto, "", cell).parse(cell, base.utc_offset_s)
}

fn parse_expect(cell: &[u8]) -> Option<Expect> {
    const WORDS: [(&[u8], Expect); 7] = [
        (b"open", Expect::Open),
        (b"incident", Expect::Open),
        (b"stay_closed", Expect::StayClosed),
        (b"stay-closed", Expect::StayClosed),
        (b"closed", Expect::StayClosed),
        (b"blip", Expect::StayClosed),
        (b"either", Expect::Either),
    ];
    WORDS.iter().find(|(w, _)| cell.eq_ignore_ascii_case(w)).map(|(_, e)| *e)
}

/// Reads an incident label CSV with header `start,end[,expect|expectation][,kind]`. Times are
/// absolute (epoch numbers or date-times) or durations from the trace's start (`15m`, `1h30m`).
/// A missing expectation column means `open`.
pub fn from_label_csv(path: &Path, base: &TimeBase) -> Result<Vec<IncidentWindow>, TraceError> {
    let file = path.display().to_string();
    label_csv(&file, open(path)?, base)
}

/// [`from_label_csv`] over any reader; `file` names it in messages.
pub fn label_csv<R: std::io::Read>(
    file: &str,
    input: R,
    base: &TimeBase,
) -> Result<Vec<IncidentWindow>, TraceError> {
    let mut reader = csv_reader(input);
    let header = Header::read(file, &mut reader)?;
    let col =
        |names: &[&str]| header.names.iter().position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n)));
    let (Some(start), Some(end)) = (col(&["start", "from", "begin"]), col(&["end", "to", "until"])) else {
        return Err(TraceError::Columns {
            file: file.into(),
            message: if header.names.len() == 1 {
                // One column of instants: a fault list, whose faults need a length.
                format!(
                    "a label file needs `start` and `end` columns, but this one has a single column ({}): \
                     if it lists fault instants, one per line, give fault_duration (`--fault-duration 3m`) \
                     to say how long each fault lasts",
                    header.list()
                )
            } else {
                format!("a label file needs `start` and `end` columns; columns: {}", header.list())
            },
        });
    };
    let expect_col = col(&["expect", "expectation"]);
    let kind_col = col(&["kind", "type"]);
    let mut record = csv::ByteRecord::new();
    let (mut windows, mut total) = (Vec::new(), 0);
    while reader.read_byte_record(&mut record).map_err(|e| csv_error(file, &e))? {
        let line = record.position().map_or(0, csv::Position::line);
        let row = Row { record: &record, line, header: &header };
        let time = |idx: usize| -> Result<i64, TraceError> {
            let cell = row.cell(idx)?;
            let text = std::str::from_utf8(cell).unwrap_or("");
            if text.bytes().last().is_some_and(|b| b.is_ascii_alphabetic())
                && let Ok(d) = Dur::parse(text)
            {
                return Ok(base.epoch_us.saturating_add(i64::try_from(d.0).unwrap_or(i64::MAX)));
            }
            absolute(cell, base)
                .map_err(|e| row.bad(idx, &format!("{e}, or a duration from the trace's start such as 15m")))
        };
        let (s, e) = (time(start)?, time(end)?);
        if e <= s {
            return Err(row.bad(end, "an end later than the start"));
        }
        let expect = match expect_col {
            None => Expect::Open,
            Some(i) => parse_expect(row.cell(i)?).ok_or_else(|| row.bad(i, "open, stay_closed or either"))?,
        };
        let kind =
            match kind_col.and_then(|i| record.get(i)).map(<[u8]>::trim_ascii).filter(|k| !k.is_empty()) {
                Some(k) => String::from_utf8_lossy(k).into_owned(),
                None => "label".to_string(),
            };
        total += 1;
        windows.extend(base.window(s, e, &kind, expect));
    }
    if total == 0 {
        return Err(TraceError::HeaderOnly { file: file.into() });
    }
    finish(file, windows, total, base)
}

fn read_json(path: &Path) -> Result<Value, TraceError> {
    serde_json::from_str(&super::json::read(path)?).map_err(|e| {
        let file = path.display().to_string();
        labels_err(&file, format!("invalid JSON at line {} column {}: {e}", e.line(), e.column()))
    })
}

/// Reads NAB's windows JSON (`{"dir/file.csv": [["2014-03-14 03:31:00.000000", "..."], ...]}`):
/// each window is an `open` incident. `key` picks the entry; without it, the only entry, or the
/// one whose file name equals `trace_name`'s.
pub fn from_nab_windows(
    path: &Path,
    key: Option<&str>,
    trace_name: Option<&str>,
    base: &TimeBase,
) -> Result<Vec<IncidentWindow>, TraceError> {
    let file = path.display().to_string();
    let json = read_json(path)?;
    let Value::Object(map) = json else {
        return Err(labels_err(
            &file,
            "expected a JSON object mapping data files to lists of [start, end]".into(),
        ));
    };
    let keys: Vec<&String> = map.keys().collect();
    let trace_file =
        trace_name.map(|name| Path::new(name).file_name().and_then(|n| n.to_str()).unwrap_or(name));
    let chosen = match (key, trace_file) {
        (Some(k), _) => map.get_key_value(k).map(|(k, _)| k),
        (None, Some(name)) => keys.iter().copied().find(|k| k.rsplit('/').next() == Some(name)),
        (None, None) if map.len() == 1 => keys.first().copied(),
        (None, None) => None,
    };
    if let (None, None, Some(name), [only]) = (chosen, key, trace_file, keys.as_slice()) {
        // Windows keyed for another data file: applying them would score against another trace.
        return Err(labels_err(
            &file,
            format!(
                "its windows are for {only:?}, not for this trace ({name}): these labels belong to another \
                 trace; set labels_key = {only:?} (--trace labels_key=...) to use them anyway"
            ),
        ));
    }
    let Some(chosen) = chosen else {
        return Err(labels_err(
            &file,
            format!(
                "cannot tell which entry to use: set labels_key to one of {}",
                keys.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    let Some(list) = map[chosen].as_array() else {
        return Err(labels_err(&file, format!("entry {chosen:?}: expected a list of [start, end] pairs")));
    };
    let mut windows = Vec::new();
    for (i, pair) in list.iter().enumerate() {
        let bad = |what: &str| labels_err(&file, format!("entry {chosen:?}, window {}: {what}", i + 1));
        let (Some(s), Some(e)) = (pair.get(0).and_then(Value::as_str), pair.get(1).and_then(Value::as_str))
        else {
            return Err(bad("expected a pair of date-time strings"));
        };
        let s = parse_datetime(s.as_bytes(), base.utc_offset_s)
            .map_err(|e| bad(&format!("start: expected {e}")))?;
        let e = parse_datetime(e.as_bytes(), base.utc_offset_s)
            .map_err(|e| bad(&format!("end: expected {e}")))?;
        if e <= s {
            return Err(bad("the end is not after the start"));
        }
        windows.extend(base.window(s, e, "label", Expect::Open));
    }
    finish(&file, windows, list.len(), base)
}

/// Reads a fault list: instants at which a fault was injected, each an `open` incident lasting
/// `duration`. JSON (Nezha's shape: objects with `inject_timestamp` epoch seconds or
/// `inject_time`, and `inject_type` as the kind, at any depth, e.g. grouped by hour keys), or text
/// with one instant per line and an optional `,kind` (a first line that is not a time is a header).
pub fn from_fault_list(
    path: &Path,
    duration: Dur,
    base: &TimeBase,
) -> Result<Vec<IncidentWindow>, TraceError> {
    let file = path.display().to_string();
    if duration.is_zero() {
        return Err(TraceError::Option {
            option: "fault_duration",
            message: "expected a positive duration".into(),
        });
    }
    let dur = i64::try_from(duration.0).unwrap_or(i64::MAX);
    let mut instants: Vec<(i64, String)> = Vec::new();
    if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        fn walk(v: &Value, out: &mut Vec<Value>) {
            match v {
                Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                Value::Object(map)
                    if ["inject_timestamp", "inject_time", "timestamp", "time"]
                        .iter()
                        .any(|k| map.contains_key(*k)) =>
                {
                    out.push(v.clone())
                }
                Value::Object(map) => map.values().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        let mut faults = Vec::new();
        walk(&read_json(path)?, &mut faults);
        for (i, fault) in faults.iter().enumerate() {
            let bad = |what: String| labels_err(&file, format!("fault {}: {what}", i + 1));
            let t = if let Some(v) = fault.get("inject_timestamp").or_else(|| fault.get("timestamp")) {
                let text = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return Err(bad("expected inject_timestamp as epoch seconds".into())),
                };
                parse_epoch(text.as_bytes(), 1_000_000)
                    .map_err(|e| bad(format!("expected {e}, found {text:?}")))?
            } else {
                let text = fault
                    .get("inject_time")
                    .or_else(|| fault.get("time"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                parse_datetime(text.as_bytes(), base.utc_offset_s)
                    .map_err(|e| bad(format!("expected {e}, found {text:?}")))?
            };
            let kind = fault
                .get("inject_type")
                .or_else(|| fault.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("fault");
            instants.push((t, kind.to_string()));
        }
    } else {
        let text = crate::scenario::read_input_text(path, crate::scenario::MAX_DATA_BYTES)?;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (time, kind) = line.split_once(',').map_or((line, "fault"), |(t, k)| (t.trim(), k.trim()));
            let time = time.trim_matches('"');
            match absolute(time.as_bytes(), base) {
                Ok(t) => instants.push((t, if kind.is_empty() { "fault".into() } else { kind.to_string() })),
                Err(_) if n == 0 => {} // a header line
                Err(e) => {
                    return Err(labels_err(&file, format!("line {}: expected {e}, found {time:?}", n + 1)));
                }
            }
        }
    }
    if instants.is_empty() {
        return Err(labels_err(&file, "no fault instants found".into()));
    }
    let total = instants.len();
    let windows = instants
        .iter()
        .filter_map(|(t, kind)| base.window(*t, t.saturating_add(dur), kind, Expect::Open))
        .collect();
    finish(&file, windows, total, base)
}

/// The trace CSV's own label column (a header such as `Label` or `is_anomaly`), used as ground
/// truth when no other is named.
pub fn auto_label_column(path: &Path) -> Result<Option<String>, TraceError> {
    let file = path.display().to_string();
    let mut reader = csv_reader(open(path)?);
    let header = Header::read(&file, &mut reader)?;
    Ok(header.find(Role::Label, None, &[])?.map(|i| header.names[i].clone()))
}

/// Reads a 0/1 label column of the trace file itself (e.g. ms-outbound's `Label`): each run of
/// 1s is an `open` incident from its first row to the next row (or, for a run that reaches the
/// end, one interval past its last row). Column and time options are those of the trace.
pub fn from_label_column(
    path: &Path,
    opts: &TraceOptions,
    base: &TimeBase,
) -> Result<Vec<IncidentWindow>, TraceError> {
    let file = path.display().to_string();
    let offset = opts.offset_seconds()?;
    let mut reader = csv_reader(open(path)?);
    let header = Header::read(&file, &mut reader)?;
    let time = header.find(Role::Time, opts.time.as_deref(), &[])?.ok_or_else(|| TraceError::Columns {
        file: file.clone(),
        message: format!("no timestamp column found (set `time`); columns: {}", header.list()),
    })?;
    let label = header.find(Role::Label, opts.label_column.as_deref(), &[time])?.ok_or_else(|| {
        TraceError::Columns {
            file: file.clone(),
            message: format!("no label column found (set `label_column`); columns: {}", header.list()),
        }
    })?;
    let mut record = csv::ByteRecord::new();
    let mut format = None;
    let (mut windows, mut total, mut run_start, mut last) = (Vec::new(), 0usize, None::<i64>, 0i64);
    while reader.read_byte_record(&mut record).map_err(|e| csv_error(&file, &e))? {
        let line = record.position().map_or(0, csv::Position::line);
        let row = Row { record: &record, line, header: &header };
        let fmt = *format.get_or_insert_with(|| {
            Resolved::resolve(opts.time_format, &header.names[time], record.get(time).unwrap_or(b""))
        });
        let parsed = (|| {
            let t = fmt.parse(row.cell(time)?, offset).map_err(|e| row.bad(time, e))?;
            let flag = parse_flag(row.cell(label)?).ok_or_else(|| row.bad(label, "0 or 1"))?;
            Ok::<_, TraceError>((t, flag))
        })();
        let (t, flag) = match parsed {
            Ok(v) => v,
            Err(_) if opts.skip_bad_rows => continue,
            Err(e) => return Err(e),
        };
        match (flag, run_start) {
            (true, None) => run_start = Some(t),
            (false, Some(s)) => {
                total += 1;
                windows.extend(base.window(s, t, "label", Expect::Open));
                run_start = None;
            }
            _ => {}
        }
        last = t;
    }
    if let Some(s) = run_start {
        total += 1;
        let end = last.saturating_add(i64::try_from(base.step.0).unwrap_or(0).max(1));
        windows.extend(base.window(s, end, "label", Expect::Open));
    }
    finish(&file, windows, total, base)
}

/// Loads the ground truth the options name (`labels`, `label_column` or `slo`; at most one), or
/// `None` when they name none (the replay then reports what needs no ground truth). `trace_path`
/// is the trace file (for `label_column` and NAB key matching); `trace` is needed for `slo`.
pub fn load(
    opts: &TraceOptions,
    trace_path: &Path,
    base: &TimeBase,
    trace: Option<&IntervalTrace>,
) -> Result<Option<Vec<IncidentWindow>>, TraceError> {
    let given = [opts.labels.is_some(), opts.label_column.is_some(), opts.slo.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(TraceError::Option {
            option: "labels",
            message: "give only one of `labels`, `label_column` and `slo`".into(),
        });
    }
    if let Some(rule) = &opts.slo {
        let Some(trace) = trace else {
            return Err(TraceError::Option {
                option: "slo",
                message: "an SLO rule needs an interval trace".into(),
            });
        };
        return super::SloRule::parse(rule)?.windows(trace).map(Some);
    }
    if opts.label_column.is_some() {
        return from_label_column(trace_path, opts, base).map(Some);
    }
    let Some(path) = &opts.labels else { return Ok(None) };
    let kind = match opts.labels_kind {
        Some(k) => k,
        None if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) => {
            if opts.fault_duration.is_some() {
                LabelKind::FaultList
            } else {
                let text = read_json(path)?.to_string();
                if text.contains("\"inject_timestamp\"") || text.contains("\"inject_time\"") {
                    return Err(TraceError::Option {
                        option: "fault_duration",
                        message: format!(
                            "{} is a fault list: set fault_duration to how long each fault lasts (e.g. \"3m\")",
                            path.display()
                        ),
                    });
                }
                LabelKind::NabWindows
            }
        }
        None if opts.fault_duration.is_some() => LabelKind::FaultList,
        None => LabelKind::Csv,
    };
    match kind {
        LabelKind::Csv => from_label_csv(path, base),
        LabelKind::NabWindows => {
            from_nab_windows(path, opts.labels_key.as_deref(), trace_path.to_str(), base)
        }
        LabelKind::FaultList => {
            let Some(d) = opts.fault_duration else {
                return Err(TraceError::Option {
                    option: "fault_duration",
                    message: "a fault list needs fault_duration (e.g. \"3m\")".into(),
                });
            };
            from_fault_list(path, d, base)
        }
    }
    .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{DuplicatePolicy, LatencyUnit};
    use std::path::PathBuf;

    fn traces() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces")
    }

    fn secs(s: u64) -> SimTime {
        SimTime(s * 1_000_000)
    }

    #[test]
    fn nezha_fault_list_becomes_32_windows() {
        let trace_path = traces().join("nezha-2022-08-23/front_service.csv");
        let trace = crate::trace::interval::from_path(&trace_path, &TraceOptions::default()).unwrap();
        let faults = traces().join("nezha-2022-08-23/2022-08-23-fault_list.json");
        let w = from_fault_list(&faults, Dur::from_secs(180), &trace.time_base()).unwrap();
        assert_eq!(w.len(), 32);
        // First fault: 1661256085 − 1661255968 = 117 s after the first row.
        assert_eq!((w[0].start, w[0].end, w[0].kind.as_str()), (secs(117), secs(297), "cpu_contention"));
        assert_eq!((w[1].start, w[1].kind.as_str()), (secs(653), "return"));
        assert_eq!((w[31].start, w[31].kind.as_str()), (secs(1_661_272_857 - 1_661_255_968), "cpu_consumed"));
        assert!(w.iter().all(|x| x.expect == Expect::Open && x.end - x.start == Dur::from_secs(180)));
        assert!(w.windows(2).all(|p| p[0].start < p[1].start));
        // Through the dispatcher: a .json with fault_duration is a fault list; without, an error.
        let no_duration = TraceOptions { labels: Some(faults.clone()), ..TraceOptions::default() };
        let err = load(&no_duration, &trace_path, &trace.time_base(), Some(&trace)).unwrap_err().to_string();
        assert!(err.contains("is a fault list: set fault_duration"), "{err}");
        let opts = TraceOptions {
            labels: Some(faults),
            fault_duration: Some(Dur::from_secs(180)),
            ..TraceOptions::default()
        };
        assert_eq!(load(&opts, &trace_path, &trace.time_base(), Some(&trace)).unwrap().unwrap(), w);
    }

    #[test]
    fn nab_windows_json() {
        let trace_path = traces().join("nab-ec2/ec2_request_latency_system_failure.csv");
        let opts = TraceOptions { duplicates: DuplicatePolicy::KeepFirst, ..TraceOptions::default() };
        let trace = crate::trace::interval::from_path(&trace_path, &opts).unwrap();
        let labels = traces().join("nab-ec2/ec2_request_latency_system_failure.windows.json");
        let w = from_nab_windows(&labels, None, None, &trace.time_base()).unwrap();
        // First row 2014-03-07 03:41:00; windows from NAB's combined_windows.json.
        let at =
            |day: u64, h: u64, m: u64| secs((day - 7) * 86_400 + h * 3600 + m * 60 - (3 * 3600 + 41 * 60));
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start, w[0].end), (at(14, 3, 31), at(14, 14, 41)));
        assert_eq!((w[1].start, w[1].end), (at(18, 17, 6), at(19, 4, 16)));
        // The last window ends with the trace (its last row 2014-03-21 03:41 + 5 min horizon).
        assert_eq!((w[2].start, w[2].end), (at(20, 21, 26), at(21, 3, 41)));
        assert!(w.iter().all(|x| x.expect == Expect::Open && x.kind == "label"));
        let opts = TraceOptions { labels: Some(labels), ..opts };
        assert_eq!(load(&opts, &trace_path, &trace.time_base(), None).unwrap().unwrap(), w);
    }

    #[test]
    fn label_column_runs_of_ones() {
        let path = traces().join("ms-outbound-01/outbound-01.csv");
        let opts = TraceOptions {
            p50: Some("Value".into()),
            latency_unit: Some(LatencyUnit::Ms),
            ..TraceOptions::default()
        };
        let trace = crate::trace::interval::from_path(&path, &opts).unwrap();
        let w = from_label_column(&path, &opts, &trace.time_base()).unwrap();
        // Rows 2018-06-21 04:00..06:00 and 2018-07-01 23:00..07-02 03:00 are labelled 1.
        let h = |hours: u64| secs(hours * 3600);
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].start, w[0].end), (h(4 * 24 + 4), h(4 * 24 + 7)));
        assert_eq!((w[1].start, w[1].end), (h(14 * 24 + 23), h(15 * 24 + 4)));
        let opts = TraceOptions { label_column: Some("Label".into()), ..opts };
        assert_eq!(load(&opts, &path, &trace.time_base(), None).unwrap().unwrap(), w);
    }

    fn base() -> TimeBase {
        TimeBase {
            epoch_us: 1_700_000_000_000_000,
            horizon: secs(3600),
            utc_offset_s: 0,
            step: Dur::from_secs(60),
        }
    }

    #[test]
    fn label_csv_absolute_relative_and_clipped() {
        let data = "start,end,expectation,kind\n\
                    10m,13m,open,outage\n\
                    1700000060,1700000090,stay_closed,\n\
                    2023-11-14 22:13:20,2023-11-14 22:23:20,either,slowdown\n\
                    59m,2h,open,late\n\
                    3h,4h,open,outside\n";
        let w = label_csv("labels.csv", data.as_bytes(), &base()).unwrap();
        assert_eq!(w.len(), 4);
        assert_eq!(
            (w[0].start, w[0].end, w[0].expect, w[0].kind.as_str()),
            (secs(0), secs(600), Expect::Either, "slowdown")
        );
        assert_eq!(
            (w[1].start, w[1].end, w[1].expect, w[1].kind.as_str()),
            (secs(60), secs(90), Expect::StayClosed, "label")
        );
        assert_eq!((w[2].start, w[2].end, w[2].expect), (secs(600), secs(780), Expect::Open));
        assert_eq!((w[3].start, w[3].end), (secs(3540), secs(3600)));
    }

    #[test]
    fn label_csv_errors() {
        let err = label_csv("l.csv", "start,end\n10m,5m\n".as_bytes(), &base()).unwrap_err().to_string();
        assert!(err.contains("line 2, column `end`: expected an end later than the start"), "{err}");
        let err = label_csv("l.csv", "start,end,expect\n1m,2m,maybe\n".as_bytes(), &base())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("column `expect`: expected open, stay_closed or either, found \"maybe\""),
            "{err}"
        );
        let err = label_csv("l.csv", "begin,stop\n".as_bytes(), &base()).unwrap_err().to_string();
        assert!(err.contains("needs `start` and `end`"), "{err}");
        let err = label_csv("l.csv", "start,end\n2020-01-01,2020-01-02\n".as_bytes(), &base())
            .unwrap_err()
            .to_string();
        assert!(err.contains("all 1 windows fall outside the trace"), "{err}");
        let err = label_csv("l.csv", "start,end\n".as_bytes(), &base()).unwrap_err();
        assert!(matches!(err, TraceError::HeaderOnly { .. }));
    }

    #[test]
    fn text_fault_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("faults.csv");
        std::fs::write(&path, "time,kind\n1700000120,cpu\n2023-11-14T22:13:20Z,\n").unwrap();
        let w = from_fault_list(&path, Dur::from_secs(90), &base()).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].start, w[0].end, w[0].kind.as_str()), (secs(0), secs(90), "fault"));
        assert_eq!((w[1].start, w[1].end, w[1].kind.as_str()), (secs(120), secs(210), "cpu"));
        let err = from_fault_list(&path, Dur::ZERO, &base()).unwrap_err().to_string();
        assert!(err.contains("fault_duration"), "{err}");
    }
}
