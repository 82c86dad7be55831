//! Grafana's CSV download with "Series joined by time" (Inspect → Data → Download CSV):
//! `"Time","<series label>",...` then one row per time, epoch milliseconds (or date-times when
//! "Formatted data" is on). Each column after `Time` is a series named by its header; an empty
//! cell is no sample; `NaN`/`null` are bad samples (refused or skipped by the merge). Rows must
//! be in time order.

use super::columns::{Header, csv_error, csv_reader, parse_f64};
use super::series::{Locator, Series};
use super::timestamp::Resolved;
use super::{TraceError, TraceOptions};
use std::io::Read;

/// Every column of a Grafana CSV as a series.
pub fn read<R: Read>(file: &str, input: R, opts: &TraceOptions) -> Result<Vec<Series>, TraceError> {
    let offset_s = opts.offset_seconds()?;
    let mut reader = csv_reader(input);
    let header = Header::read(file, &mut reader)?;
    let time = header.named(opts.time.as_deref().unwrap_or("Time"), "time")?;
    let mut out: Vec<Series> = header
        .names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != time)
        .map(|(_, name)| Series {
            name: format!("column {name:?}"),
            labels: vec![("column".into(), name.clone())],
            unit: super::columns::split_header(name).unit,
            locate: Locator::Rows { column: name.clone(), lines: Vec::new() },
            ..Series::default()
        })
        .collect();
    let mut record = csv::ByteRecord::new();
    let mut format = None;
    let mut prev: Option<(i64, u64)> = None;
    let mut rows = 0u64;
    while reader.read_byte_record(&mut record).map_err(|e| csv_error(file, &e))? {
        rows += 1;
        let line = record.position().map_or(0, csv::Position::line);
        let row = super::columns::Row { record: &record, line, header: &header };
        let cell = row.cell(time)?;
        let fmt =
            *format.get_or_insert_with(|| Resolved::resolve(opts.time_format, &header.names[time], cell));
        let t = fmt.parse(cell, offset_s).map_err(|e| row.bad(time, e))?;
        if let Some((p, pl)) = prev
            && t <= p
        {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "line {line}: column `{}` goes back in time (or repeats) after line {pl}; rows must be sorted \
                     by `{}` (Grafana writes them so: was the file edited?)",
                    header.names[time], header.names[time]
                ),
            });
        }
        prev = Some((t, line));
        let mut k = 0;
        for i in 0..header.names.len() {
            if i == time {
                continue;
            }
            let s = &mut out[k];
            k += 1;
            let cell = record.get(i).unwrap_or_default().trim_ascii();
            if cell.is_empty() {
                continue;
            }
            let v = match parse_f64(cell) {
                Some(v) => v,
                None if is_not_a_number(cell) => {
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
    }
    if rows == 0 {
        return Err(TraceError::HeaderOnly { file: file.into() });
    }
    Ok(out)
}

fn is_not_a_number(cell: &[u8]) -> bool {
    [&b"nan"[..], b"null", b"inf", b"+inf", b"-inf", b"infinity"].iter().any(|w| cell.eq_ignore_ascii_case(w))
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
    }
}
