//! Grafana's CSV downloads. "Series joined by time" (Inspect → Data → Download CSV):
//! `"Time","<series label>",...` then one row per time, epoch milliseconds (or date-times when
//! "Formatted data" is on); each column after `Time` is a series named by its header. The long
//! form of Grafana 6-7's panel export, `"Series";"Time";"Value"`, one row per sample, series
//! after series; each distinct `Series` cell is a series. "Download for Excel" starts the file
//! with a UTF-8 BOM and a `sep=;` line and separates fields with `;` (the CSV reader takes the
//! delimiter from that line, or sniffs it from the header). An empty cell is no sample; `NaN`,
//! `null` and infinities are gaps the merge counts (`--strict` refuses them). A series' samples
//! must be in time order.

use super::columns::{Header, Row, parse_f64, says_no_value};
use super::records::Records;
use super::series::{Locator, Series};
use super::timestamp::{Resolved, TimeFormat};
use super::{TraceError, TraceOptions};
use std::io::Read;

/// Every column of a Grafana CSV as a series.
pub fn read<R: Read>(file: &str, input: R, opts: &TraceOptions) -> Result<Vec<Series>, TraceError> {
    let (mut reader, header) = Records::open(file, input)?;
    if let Some(cols) = long_form(&header) {
        let (mut out, zone) = long(file, &mut reader, &header, cols, opts)?;
        let note = assumed(&reader, zone);
        out.iter_mut().for_each(|s| s.note.clone_from(&note));
        return Ok(out);
    }
    // Grafana's `Time`; any other CSV of series (`--series requests=volume.csv`) by its time
    // column's name, as the CSV importers find it.
    let time = header.find(super::columns::Role::Time, opts.time.as_deref(), &[])?.ok_or_else(|| {
        TraceError::Columns {
            file: file.into(),
            message: format!(
                "no time column (Grafana writes `Time`; name another with --column time=NAME); columns: {}",
                header.list()
            ),
        }
    })?;
    let out: Vec<Series> = header
        .names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != time)
        .map(|(_, name)| Series {
            name: format!("column {name:?}"),
            labels: vec![("column".into(), name.clone())],
            unit: super::columns::split_header(name).unit,
            percent: super::columns::split_header(name).percent,
            locate: Locator::Rows { column: name.clone(), lines: Vec::new() },
            ..Series::default()
        })
        .collect();
    let mut columns = Columns {
        file,
        header: &header,
        time,
        offset_s: opts.offset_seconds()?,
        time_format: opts.time_format,
        format: None,
        prev: None,
        zone: None,
        rows: 0,
        out,
    };
    let mut record = csv::ByteRecord::new();
    while let Some(line) = reader.next(&mut record)? {
        columns.row(&Row { record: &record, line, header: &header })?;
    }
    if columns.rows == 0 {
        return Err(TraceError::HeaderOnly { file: file.into() });
    }
    let note = assumed(&reader, columns.zone.take());
    columns.out.iter_mut().for_each(|s| s.note.clone_from(&note));
    Ok(columns.out)
}

/// What reading the file assumed, for the report: its delimiter and its times' zone, if either.
fn assumed<R: Read>(reader: &Records<R>, zone: Option<String>) -> Option<String> {
    let said: Vec<String> = reader.assumed().into_iter().chain(zone).collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// The note on the zone of times read as date-times, from the first time cell.
fn zone_of(fmt: Resolved, column: &str, cell: &[u8], offset_s: i64) -> Option<String> {
    (fmt == Resolved::Datetime).then(|| super::timestamp::zone_note(column, cell, offset_s)).flatten()
}

/// The `Series`, `Time` and `Value` columns of the long form, if the header is that.
pub fn long_form(header: &Header) -> Option<[usize; 3]> {
    let at = |name: &str| header.names.iter().position(|h| h.eq_ignore_ascii_case(name));
    (header.names.len() == 3).then_some([at("Series")?, at("Time")?, at("Value")?])
}

/// The series of a long-form file: one per distinct `Series` cell, in first-seen order; and the
/// note on the zone its times were read in, if they name none.
fn long<R: Read>(
    file: &str,
    reader: &mut Records<R>,
    header: &Header,
    [name, time, value]: [usize; 3],
    opts: &TraceOptions,
) -> Result<(Vec<Series>, Option<String>), TraceError> {
    let offset_s = opts.offset_seconds()?;
    let mut out: Vec<Series> = Vec::new();
    let mut lines_of: Vec<Vec<u64>> = Vec::new();
    let mut format = None;
    let mut zone = None;
    let mut record = csv::ByteRecord::new();
    while let Some(line) = reader.next(&mut record)? {
        let row = Row { record: &record, line, header };
        let label = String::from_utf8_lossy(row.cell(name)?);
        let k = match out.iter().position(|s| s.labels[0].1 == label) {
            Some(k) => k,
            None => {
                let h = super::columns::split_header(&label);
                out.push(Series {
                    name: format!("series {label:?}"),
                    labels: vec![("series".into(), label.to_string())],
                    unit: h.unit,
                    percent: h.percent,
                    ..Series::default()
                });
                lines_of.push(Vec::new());
                out.len() - 1
            }
        };
        let cell = row.cell(time)?;
        let fmt = *format.get_or_insert_with(|| {
            let fmt = Resolved::resolve(opts.time_format, &header.names[time], cell);
            zone = zone_of(fmt, &header.names[time], cell, offset_s);
            fmt
        });
        let t = fmt.parse(cell, offset_s).map_err(|e| row.bad(time, e))?;
        let s = &mut out[k];
        if let Some(&last) = s.times.last()
            && t <= last
        {
            let pl = lines_of[k].last().copied().unwrap_or(0);
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "line {line}: {} goes back in time (or repeats) after line {pl}; each series' rows must be \
                     in time order (Grafana writes them so: was the file edited?)",
                    s.name
                ),
            });
        }
        let v = row.cell(value)?;
        let v = match parse_f64(v) {
            Some(x) => x,
            None if says_no_value(v) => {
                let shown = if v.is_empty() {
                    "an empty cell".into()
                } else {
                    format!("{:?}", String::from_utf8_lossy(v))
                };
                s.bad_text.insert(s.times.len(), shown);
                f64::NAN
            }
            None => return Err(row.bad(value, "a number, or null for no sample")),
        };
        s.times.push(t);
        s.values.push(v);
        lines_of[k].push(line);
    }
    if out.is_empty() {
        return Err(TraceError::HeaderOnly { file: file.into() });
    }
    for (s, lines) in out.iter_mut().zip(lines_of) {
        s.locate = Locator::Rows { column: header.names[value].clone(), lines };
    }
    Ok((out, zone))
}

/// The series being read, and what each row is checked against.
struct Columns<'h> {
    file: &'h str,
    header: &'h Header,
    time: usize,
    offset_s: i64,
    time_format: TimeFormat,
    format: Option<Resolved>,
    /// The previous row's time and line.
    prev: Option<(i64, u64)>,
    /// The zone the times were read in, when they name none.
    zone: Option<String>,
    rows: u64,
    out: Vec<Series>,
}

impl Columns<'_> {
    /// Appends one row's samples (an empty cell is no sample).
    fn row(&mut self, row: &Row<'_>) -> Result<(), TraceError> {
        self.rows += 1;
        let (line, time, header) = (row.line, self.time, self.header);
        if row.record.len() < header.names.len() {
            return Err(TraceError::Format {
                file: self.file.into(),
                message: format!(
                    "line {line}: {} fields, the header has {} (a row cut short: truncated file?)",
                    row.record.len(),
                    header.names.len()
                ),
            });
        }
        let cell = row.cell(time)?;
        let fmt = *self.format.get_or_insert_with(|| {
            let fmt = Resolved::resolve(self.time_format, &header.names[time], cell);
            self.zone = zone_of(fmt, &header.names[time], cell, self.offset_s);
            fmt
        });
        let t = fmt.parse(cell, self.offset_s).map_err(|e| row.bad(time, e))?;
        if let Some((p, pl)) = self.prev
            && t <= p
        {
            return Err(TraceError::Format {
                file: self.file.into(),
                message: format!(
                    "line {line}: column `{}` goes back in time (or repeats) after line {pl}; rows must be sorted \
                     by `{}` (Grafana writes them so: was the file edited?)",
                    header.names[time], header.names[time]
                ),
            });
        }
        self.prev = Some((t, line));
        let mut k = 0;
        for i in 0..header.names.len() {
            if i == time {
                continue;
            }
            let s = &mut self.out[k];
            k += 1;
            let cell = row.record.get(i).unwrap_or_default().trim_ascii();
            if cell.is_empty() {
                continue;
            }
            let v = match parse_f64(cell) {
                Some(v) => v,
                None if says_no_value(cell) => {
                    s.bad_text.insert(s.times.len(), format!("{:?}", String::from_utf8_lossy(cell)));
                    f64::NAN
                }
                None => {
                    return Err(row.bad(
                        i,
                        "a number (download with \"Formatted data\" off, so values carry no units)",
                    ));
                }
            };
            s.times.push(t);
            s.values.push(v);
            if let Locator::Rows { lines, .. } = &mut s.locate {
                lines.push(line);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<Vec<Series>, TraceError> {
        read("g.csv", s.as_bytes(), &TraceOptions::default())
    }

    #[test]
    fn columns_become_series_with_their_lines() {
        let s = read_str("\"Time\",\"p95 (ms)\",\"errors\"\n1700000000000,120,\n1700000060000,NaN,0.5\n")
            .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].times, vec![1_700_000_000_000_000, 1_700_000_060_000_000]);
        assert!(s[0].values[1].is_nan());
        assert_eq!(s[0].at(1), "line 3, column \"p95 (ms)\"");
        assert_eq!(s[0].unit, Some(super::super::LatencyUnit::Ms));
        assert_eq!(s[1].times, vec![1_700_000_060_000_000]);
        assert_eq!(s[1].label("column"), Some("errors"));
    }

    #[test]
    fn the_long_form_of_an_excel_download_is_one_series_per_name() {
        let data = "\u{feff}sep=;\r\n\"Series\";\"Time\";\"Value\"\r\n\"p95\";\"2024-01-01 00:00:00\";0.2\r\n\
                    \"rps\";\"2024-01-01 00:00:00\";5\r\n\"p95\";\"2024-01-01 00:01:00\";null\r\n\"p95\";\"2024-01-01 00:02:00\";";
        let s = read_str(data).unwrap();
        assert_eq!((s.len(), s[0].name.as_str(), s[1].label("series")), (2, "series \"p95\"", Some("rps")));
        assert_eq!(s[0].values.len(), 3);
        assert!(s[0].values[1].is_nan() && s[0].values[2].is_nan());
        assert_eq!((s[0].bad_text[&1].as_str(), s[0].bad_text[&2].as_str()), ("\"null\"", "an empty cell"));
        assert_eq!(s[0].at(1), "line 5, column \"Value\"");
        assert_eq!(
            s[0].note.as_deref(),
            Some(
                "fields separated by `;` (from the file's `sep=` line); times in `Time` name no zone: read as UTC \
                 (set --trace utc_offset=+02:00 if they are local)"
            )
        );
        let e = read_str("Series;Time;Value\np95;2024-01-01T00:01:00Z;1\np95;2024-01-01T00:00:00Z;1\n")
            .unwrap_err();
        assert!(e.to_string().contains("line 3: series \"p95\" goes back in time"), "{e}");
        let e = read_str("Series;Time;Value\np95;2024-01-01T00:01:00Z;fast\n").unwrap_err().to_string();
        assert!(e.contains("line 2, column `Value`: expected a number, or null for no sample"), "{e}");
    }

    #[test]
    fn bad_grafana_files_are_located() {
        let e = read_str("\"Time\",\"p95\"\n1700000060000,1\n1700000000000,2\n").unwrap_err().to_string();
        assert!(
            e.contains("line 3: column `Time` goes back in time") && e.contains("sorted by `Time`"),
            "{e}"
        );
        let e = read_str("\"Time\",\"p95\"\n1700000000000,12 ms\n").unwrap_err().to_string();
        assert!(e.contains("line 2, column `p95`") && e.contains("Formatted data"), "{e}");
        let e = read_str("\"Time\",\"p95\"\n").unwrap_err();
        assert!(matches!(e, TraceError::HeaderOnly { .. }));
        let e = read_str("\"When\",\"p95\"\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("`Time`"), "{e}");
        let e = read_str("\"Time\",\"p95\",\"rps\"\n1700000000000,1,2\n17000000").unwrap_err().to_string();
        assert!(e.contains("line 3: 1 fields, the header has 3 (a row cut short: truncated file?)"), "{e}");
        let s = read_str("timestamp,requests\n1700000000,60\n1700000060,61\n").unwrap();
        assert_eq!((s.len(), s[0].values.clone()), (1, vec![60.0, 61.0]));
    }
}
