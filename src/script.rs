//! Reading a script of calls (`t_ms,latency_ms,ok`, one row per call; see
//! [`crate::upstream::script`] for what the engine does with it).
//!
//! Times are decimal milliseconds, exact to the microsecond (at most 3 decimals), so a script
//! round-trips through integer time without rounding.
//!
//! [`load_script`] reads the file once, with the `csv` crate: each row is checked and parsed as
//! it comes, and the bytes are hashed (SHA-256, for the review page) as they are read.

use crate::time::{Dur, SimTime};
use crate::upstream::script::{SCRIPT_HEADER, ScriptCalls, ScriptRow};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a script could not be loaded: the file, and where and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be opened or read.
    #[error("cannot read script {}: {error}", path.display())]
    Read {
        /// The script's path.
        path: PathBuf,
        /// The operating system's reason.
        error: std::io::Error,
    },
    /// The file has nothing in it.
    #[error("script {} is empty: expected the header `t_ms,latency_ms,ok` and then one row per call", path.display())]
    Empty {
        /// The script's path.
        path: PathBuf,
    },
    /// The file has a header but no calls.
    #[error("script {} has a header but no rows: expected one row per call after `t_ms,latency_ms,ok`", path.display())]
    NoRows {
        /// The script's path.
        path: PathBuf,
    },
    /// The first line is not the expected header.
    #[error("script {}, line {line}: expected the header `t_ms,latency_ms,ok`, found `{found}`", path.display())]
    Header {
        /// The script's path.
        path: PathBuf,
        /// Line of the header.
        line: u64,
        /// The header as written.
        found: String,
    },
    /// A row does not have exactly three fields.
    #[error("script {}, line {line}: expected 3 fields (t_ms,latency_ms,ok), found {found}", path.display())]
    FieldCount {
        /// The script's path.
        path: PathBuf,
        /// Line of the row.
        line: u64,
        /// Number of fields in the row.
        found: usize,
    },
    /// A field could not be read.
    #[error("script {}, line {line}, column `{column}`: expected {expected}, found {value:?}", path.display())]
    Value {
        /// The script's path.
        path: PathBuf,
        /// Line of the row.
        line: u64,
        /// The column's name.
        column: &'static str,
        /// The field as written.
        value: String,
        /// What a valid field looks like.
        expected: &'static str,
    },
    /// `t_ms` went backwards.
    #[error(
        "script {}, line {line}, column `t_ms`: expected rows in time order, found {value} after {previous}",
        path.display()
    )]
    Decreasing {
        /// The script's path.
        path: PathBuf,
        /// Line of the row.
        line: u64,
        /// This row's `t_ms` as written.
        value: String,
        /// The previous row's `t_ms` as written.
        previous: String,
    },
    /// The CSV itself is malformed (for example not UTF-8).
    #[error("script {}, line {line}: {message}", path.display())]
    Malformed {
        /// The script's path.
        path: PathBuf,
        /// Line where reading failed.
        line: u64,
        /// The CSV reader's description.
        message: String,
    },
}

const MS_EXPECTED: &str = "a non-negative number of milliseconds below 10^15 (about 31,700 years) with at most 3 decimals, such as 12 or 0.25";

/// The largest time or latency a script may give, in microseconds: what fits in 15 whole digits
/// of milliseconds, so a row's end never overflows a clock.
const MAX_MICROS: u64 = 1_000_000_000_000_000_000 - 1;
const OK_EXPECTED: &str = "0, 1, true or false";

/// Parses decimal milliseconds (`12`, `0.25`, `.5`, `7.`) into whole microseconds; decimals past
/// the third must be zeros. One pass over the digits, no floating point.
fn parse_ms(text: &str) -> Option<u64> {
    let (whole, decimals) = match text.bytes().position(|b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, ""),
    };
    if whole.is_empty() && decimals.is_empty() {
        return None;
    }
    let (kept, rest) = decimals.split_at(decimals.len().min(3));
    if rest.bytes().any(|b| b != b'0') {
        return None;
    }
    // The digits as one number, then scaled to three decimals.
    let mut micros: u64 = 0;
    for b in whole.bytes().chain(kept.bytes()) {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        micros = micros.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    micros = micros.checked_mul(10u64.pow(3 - kept.len() as u32))?;
    (micros <= MAX_MICROS).then_some(micros)
}

fn parse_ok(text: &str) -> Option<bool> {
    match text {
        "1" => Some(true),
        "0" => Some(false),
        t if t.eq_ignore_ascii_case("true") => Some(true),
        t if t.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// A reader that hashes (SHA-256) every byte read through it.
pub struct Hashing<R> {
    /// What is read.
    pub inner: R,
    /// The hash of every byte read so far.
    pub sha: Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }
}

/// Reads a script file in one pass: its rows and the SHA-256 of its bytes. Errors name the file,
/// the row's line, the column, the value and what was expected.
///
/// Fields are trimmed of whitespace, may be quoted, and blank lines are skipped; a byte-order
/// mark and CRLF line ends are fine.
pub fn load_script(path: &Path) -> Result<ScriptCalls, ScriptError> {
    let owned = || path.to_path_buf();
    let file = crate::scenario::open_stream(path, crate::scenario::MAX_DATA_BYTES)
        .map_err(|e| ScriptError::Read { path: owned(), error: std::io::Error::other(e.message) })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(1 << 16)
        .from_reader(Hashing { inner: file, sha: Sha256::new() });
    let mut record = csv::ByteRecord::new();
    let mut next = |record: &mut csv::ByteRecord| match reader.read_byte_record(record) {
        Ok(more) => utf8(record, path).map(|()| more),
        Err(e) => Err(csv_error(e, path)),
    };
    if !next(&mut record)? {
        return Err(ScriptError::Empty { path: owned() });
    }
    let header_line = record.position().map_or(1, |p| p.line());
    let header: Vec<&str> = (0..record.len())
        .map(|i| field(&record, i))
        .enumerate()
        .map(|(i, f)| if i == 0 { f.trim_start_matches('\u{feff}') } else { f })
        .collect();
    if header != SCRIPT_HEADER {
        return Err(ScriptError::Header { path: owned(), line: header_line, found: header.join(",") });
    }
    let mut rows = Vec::new();
    // The previous row's time, and its `t_ms` as written (for an error).
    let (mut previous, mut previous_text) = (0, String::new());
    while next(&mut record)? {
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != 3 {
            return Err(ScriptError::FieldCount { path: owned(), line, found: record.len() });
        }
        let (t_text, latency_text, ok_text) = (field(&record, 0), field(&record, 1), field(&record, 2));
        let value_error = |column: &'static str, value: &str, expected: &'static str| ScriptError::Value {
            path: owned(),
            line,
            column,
            value: value.to_string(),
            expected,
        };
        let t = parse_ms(t_text).ok_or_else(|| value_error("t_ms", t_text, MS_EXPECTED))?;
        let latency =
            parse_ms(latency_text).ok_or_else(|| value_error("latency_ms", latency_text, MS_EXPECTED))?;
        let ok = parse_ok(ok_text).ok_or_else(|| value_error("ok", ok_text, OK_EXPECTED))?;
        if t < previous {
            return Err(ScriptError::Decreasing {
                path: owned(),
                line,
                value: t_text.to_string(),
                previous: previous_text,
            });
        }
        previous = t;
        previous_text.clear();
        previous_text.push_str(t_text);
        rows.push(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
    }
    if rows.is_empty() {
        return Err(ScriptError::NoRows { path: owned() });
    }
    rows.shrink_to_fit();
    let sha256 = reader.into_inner().sha.finalize().into();
    Ok(ScriptCalls::new(rows, owned(), sha256))
}

/// Field `i` of a record checked to be UTF-8 ([`utf8`]), trimmed of whitespace (Unicode's, as
/// the csv crate trims a text record).
fn field(record: &csv::ByteRecord, i: usize) -> &str {
    std::str::from_utf8(&record[i]).map_or("", str::trim)
}

/// An error unless every field of `record` is UTF-8: the csv crate's, as its reader of trimmed
/// text records reports it (the fields' ASCII whitespace trimmed before they are checked).
fn utf8(record: &csv::ByteRecord, path: &Path) -> Result<(), ScriptError> {
    if record.as_slice().is_ascii() {
        return Ok(());
    }
    let trimmed: csv::ByteRecord = record.iter().map(<[u8]>::trim_ascii).collect();
    let Err(e) = csv::StringRecord::from_byte_record(trimmed) else { return Ok(()) };
    let (record_index, line, byte) =
        record.position().map_or((0, 0, 0), |p| (p.record(), p.line(), p.byte()));
    let e = e.utf8_error();
    Err(ScriptError::Malformed {
        path: path.to_path_buf(),
        line,
        message: format!(
            "CSV parse error: record {record_index} (line {line}, field: {}, byte: {byte}): {e}",
            e.field()
        ),
    })
}

/// A csv reader's error: the file could not be read, or the CSV is malformed.
fn csv_error(e: csv::Error, path: &Path) -> ScriptError {
    let line = e.position().map_or(0, |p| p.line());
    let message = e.to_string();
    match e.into_kind() {
        csv::ErrorKind::Io(error) => ScriptError::Read { path: path.to_path_buf(), error },
        _ => ScriptError::Malformed { path: path.to_path_buf(), line, message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f
    }

    fn load(content: &str) -> Result<Vec<ScriptRow>, String> {
        let f = write(content.as_bytes());
        load_script(f.path()).map(|c| c.rows().to_vec()).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_rows_exactly_to_the_microsecond() {
        let rows =
            load("t_ms,latency_ms,ok\n0,12.5,1\n1000.001, 900 ,true\n1000.001,0.0010,false\n2500,30000,0\n")
                .unwrap();
        assert_eq!(
            rows,
            [
                ScriptRow { t: SimTime(0), latency: Dur(12_500), ok: true },
                ScriptRow { t: SimTime(1_000_001), latency: Dur(900_000), ok: true },
                ScriptRow { t: SimTime(1_000_001), latency: Dur(1), ok: false },
                ScriptRow { t: SimTime(2_500_000), latency: Dur(30_000_000), ok: false },
            ]
        );
        // A byte-order mark, CRLF line ends and a trailing blank line are fine.
        let rows = load("\u{feff}t_ms,latency_ms,ok\r\n5,1,TRUE\r\n\r\n").unwrap();
        assert_eq!(rows, [ScriptRow { t: SimTime(5_000), latency: Dur(1_000), ok: true }]);
    }

    #[test]
    fn milliseconds_parse_exactly_or_not_at_all() {
        for (text, micros) in [
            ("0", Some(0)),
            ("12", Some(12_000)),
            ("7.", Some(7_000)),
            (".5", Some(500)),
            ("0.0010", Some(1)),
            ("1.1000", Some(1_100)),
            ("0000000000000000000000001.25", Some(1_250)),
            ("999999999999999.999", Some(MAX_MICROS)),
            ("1000000000000000", None),
            ("99999999999999999999", None),
            ("1.0001", None),
            ("1.2.3", None),
            ("", None),
            (".", None),
            ("-1", None),
            ("1e3", None),
            ("1,5", None),
        ] {
            assert_eq!(parse_ms(text), micros, "{text:?}");
        }
    }

    #[test]
    fn the_same_rows_however_written_and_the_hash_of_the_bytes_read() {
        let header = "t_ms,latency_ms,ok\n";
        let mut plain = String::from(header);
        for i in 0..3_000u64 {
            plain +=
                &format!("{}{},{}.{},{}\n", i * 37 / 3, [".5", ""][(i % 2) as usize], i % 900, i % 10, i % 2);
        }
        let f = write(plain.as_bytes());
        let calls = load_script(f.path()).unwrap();
        let rows = calls.rows().to_vec();
        assert_eq!(rows.len(), 3_000);
        assert_eq!(rows[1], ScriptRow { t: SimTime(12_000), latency: Dur(1_100), ok: true });
        assert_eq!(calls.latest_end(), rows.iter().map(|r| (r.t + r.latency).0).max().unwrap());
        assert_eq!(calls.sha256(), <[u8; 32]>::from(Sha256::digest(plain.as_bytes())));
        // CRLF line ends, a blank line, `true`, spaces (ASCII or not), quotes, a byte-order mark,
        // no final line end: the same rows, and each file's own hash.
        for (other, how) in [
            (plain.replace('\n', "\r\n"), "CRLF"),
            (plain.replacen("\n12,", "\n\n12,", 1), "a blank line"),
            (plain.replace(",1\n", ",true\n"), "true"),
            (plain.replace(",0\n", ", 0\n"), "spaces"),
            (plain.replace(",0\n", ",\u{a0}0\u{2003}\n"), "Unicode spaces"),
            (plain.replacen("\n12,", "\n\"12\",", 1), "a quoted field"),
            (plain.replacen("t_ms,", "\"t_ms\" ,", 1), "a quoted, spaced header"),
            (format!("\u{feff}{plain}"), "a byte-order mark"),
            (plain.trim_end().to_string(), "no final line end"),
        ] {
            let f = write(other.as_bytes());
            let calls = load_script(f.path()).unwrap();
            assert_eq!(calls.rows(), rows, "{how}");
            assert_eq!(calls.sha256(), <[u8; 32]>::from(Sha256::digest(other.as_bytes())), "{how}");
        }
    }

    #[test]
    fn errors_name_the_line_wherever_the_row() {
        let mut plain = String::from("t_ms,latency_ms,ok\n");
        for i in 0..2_000u64 {
            plain += &format!("{},{},{}\n", i * 10, i % 50, i % 2);
        }
        let lines: Vec<&str> = plain.lines().collect();
        for (at, line) in [(2, 1), (1_000, 2), (2_001, 3)] {
            let mut bad: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            bad[at - 1] = match line {
                1 => "5,x,1".to_string(),
                2 => format!("{},1000000000000000,1", (at - 2) * 10),
                _ => "1,2,1".to_string(),
            };
            let err = load(&(bad.join("\n") + "\n")).unwrap_err();
            let expected = match line {
                1 => format!("line {at}, column `latency_ms`: expected a non-negative number"),
                2 => format!(
                    "line {at}, column `latency_ms`: expected a non-negative number of milliseconds below 10^15"
                ),
                _ => format!("line {at}, column `t_ms`: expected rows in time order, found 1 after 19980"),
            };
            assert!(err.contains(&expected), "{err}");
        }
        // The largest time below 10^15 ms is read; 10^15 is refused.
        let rows = load("t_ms,latency_ms,ok\n999999999999999,999999999999999.999,1\n").unwrap();
        assert_eq!({ rows[0].latency }, Dur(MAX_MICROS));
        let err = load("t_ms,latency_ms,ok\n1000000000000000,1,1\n").unwrap_err();
        assert!(
            err.contains("line 2, column `t_ms`: expected a non-negative number of milliseconds below 10^15"),
            "{err}"
        );
        // A file cut short in the middle of a row.
        let cut = &plain[..plain.len() - 3];
        let err = load(cut).unwrap_err();
        assert!(err.contains("line 2001: expected 3 fields (t_ms,latency_ms,ok), found 2"), "{err}");
    }

    #[test]
    fn decimals_of_every_shape() {
        let mut plain = String::from("t_ms,latency_ms,ok\n");
        for i in 0..2_000u64 {
            match i % 300 {
                5 => plain.push_str(&format!("{i}.5000,{},true\n", i % 7)),
                6 => plain.push_str(&format!("{i}.,.5,0\n")),
                7 => plain.push('\n'),
                _ => plain.push_str(&format!("{i}.{},{},{}\n", i % 1000, i % 7, i % 2)),
            }
        }
        let rows = load(&plain).unwrap();
        assert_eq!(rows.len(), 1_993);
        assert_eq!(rows[5], ScriptRow { t: SimTime(5_500), latency: Dur(5_000), ok: true });
        assert_eq!(rows[6], ScriptRow { t: SimTime(6_000), latency: Dur(500), ok: false });
        assert_eq!(rows[7], ScriptRow { t: SimTime(8_800), latency: Dur(1_000), ok: false });
        let err = load(&plain.replace("\n1000.0,", "\n999.0,")).unwrap_err();
        assert!(
            err.contains("line 1002, column `t_ms`: expected rows in time order, found 999.0 after 999.999"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_name_file_line_column_value_and_expectation() {
        let f = write(b"t_ms,latency_ms,ok\n0,10,1\n5,-3,1\n");
        let err = load_script(f.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&f.path().display().to_string()), "{text}");
        assert!(text.contains("line 3, column `latency_ms`: expected a non-negative number"), "{text}");
        assert!(text.contains("found \"-3\""), "{text}");
        match err {
            ScriptError::Value { line, column, value, .. } => {
                assert_eq!((line, column, value.as_str()), (3, "latency_ms", "-3"));
            }
            other => panic!("{other:?}"),
        }
        for (content, expected) in [
            ("t_ms,latency_ms,ok\n1e3,10,1\n", "line 2, column `t_ms`"),
            ("t_ms,latency_ms,ok\n1.0001,10,1\n", "at most 3 decimals"),
            ("t_ms,latency_ms,ok\n.,10,1\n", "column `t_ms`"),
            ("t_ms,latency_ms,ok\n1.2.3,10,1\n", "column `t_ms`"),
            ("t_ms,latency_ms,ok\n+1,10,1\n", "column `t_ms`"),
            (
                "t_ms,latency_ms,ok\n1,10,yes\n",
                "line 2, column `ok`: expected 0, 1, true or false, found \"yes\"",
            ),
            ("t_ms,latency_ms,ok\n1,10\n", "line 2: expected 3 fields (t_ms,latency_ms,ok), found 2"),
            ("t_ms,latency_ms,ok\n1,10,1,4\n", "found 4"),
            ("t_ms,latency_ms,ok\n99999999999999999999,10,1\n", "column `t_ms`"),
        ] {
            let err = load(content).unwrap_err();
            assert!(err.contains(expected), "{content:?}: {err}");
        }
    }

    /// A pipe (a FIFO) is read as a file is, with the same rows and errors.
    #[cfg(unix)]
    #[test]
    fn a_piped_script_reads_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("script.pipe");
        for content in [
            "\"t_ms\",latency_ms,ok\n0,12.5,1\n1000.001,900,true\n".to_string(),
            "t_ms,latency_ms,ok\r\n0,12.5,1\r\n1000.001, 900 ,true\r\n".to_string(),
            "t_ms,latency_ms,ok\n0,12.5,1\n1000.001,900,1\n".to_string(),
            "t_ms,latency_ms,ok\n0,12.5,1\n\"1000.001\",x,1\n".to_string(),
        ] {
            let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(status.success());
            let writer = {
                let (fifo, content) = (fifo.clone(), content.clone());
                std::thread::spawn(move || std::fs::write(fifo, content))
            };
            let piped = load_script(&fifo).map(|c| c.rows().to_vec()).map_err(|e| e.to_string());
            writer.join().unwrap().unwrap();
            std::fs::remove_file(&fifo).unwrap();
            let from_file = load(&content).map_err(|e| e.replace(&e[..e.find(',').unwrap_or(0)], ""));
            let piped = piped.map_err(|e| e.replace(&e[..e.find(',').unwrap_or(0)], ""));
            assert_eq!(piped, from_file, "{content:?}");
        }
    }

    #[test]
    fn file_level_problems_are_explained() {
        let err = load_script(Path::new("/nonexistent/calls.csv")).unwrap_err().to_string();
        assert!(err.contains("cannot read script /nonexistent/calls.csv"), "{err}");
        assert!(load("").unwrap_err().contains("is empty"));
        assert!(load("t_ms,latency_ms,ok\n").unwrap_err().contains("has a header but no rows"));
        let err = load("time,latency,ok\n1,2,1\n").unwrap_err();
        assert!(
            err.contains("line 1: expected the header `t_ms,latency_ms,ok`, found `time,latency,ok`"),
            "{err}"
        );
        let err = load("t_ms,latency_ms,ok\n10,1,1\n10,1,1\n9.999,1,1\n").unwrap_err();
        assert!(
            err.contains("line 4, column `t_ms`: expected rows in time order, found 9.999 after 10"),
            "{err}"
        );
    }

    /// A field that is not UTF-8 (in the header or a row, before a field count that is wrong
    /// too) is reported in the csv crate's own words for a text record.
    #[test]
    fn text_that_is_not_utf8_is_reported_as_the_csv_crate_does() {
        for content in [
            &b"t_ms,latency_ms,ok\n1,\xff\xfe,1\n"[..],
            b"t_ms,latency_ms,ok\n1, \t\xff ,1\n",
            b"t_\xffms,latency_ms,ok\n1,2,1\n",
            b"t_ms,latency_ms,ok\n1,2,1\n\n2,3,\xc3\n",
            b"t_ms,latency_ms,ok\n1,2,1\n2,\xe2\x80\n",
        ] {
            let f = write(content);
            let err = load_script(f.path()).unwrap_err();
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .trim(csv::Trim::All)
                .from_reader(content);
            let csv_error = reader.records().find_map(Result::err).unwrap();
            let line = csv_error.position().unwrap().line();
            match err {
                ScriptError::Malformed { line: l, message, .. } => {
                    assert_eq!((l, message), (line, csv_error.to_string()), "{content:?}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
