//! Scripted calls: a CSV with header `t_ms,latency_ms,ok`, one row per call. The client makes
//! exactly these calls (at `t_ms`, taking `latency_ms`, succeeding when `ok`), with no retries;
//! tests and comparisons with other implementations use it.
//!
//! Times are decimal milliseconds, exact to the microsecond (at most 3 decimals), so a script
//! round-trips through integer time without rounding.

mod plain;
mod row16;
mod streamed;

pub use streamed::{Rehash, StreamCursor, StreamedScript};

use crate::time::{Dur, SimTime};
use crate::trace::records::LineReader;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

/// The header a script must start with, exactly.
pub const SCRIPT_HEADER: [&str; 3] = ["t_ms", "latency_ms", "ok"];

/// One scripted call. Packed (17 bytes, not 24): a script read into memory holds all of them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub struct ScriptRow {
    /// When the call is made.
    pub t: SimTime,
    /// How long the dependency takes to answer.
    pub latency: Dur,
    /// Whether it succeeds (otherwise it is a server error).
    pub ok: bool,
}

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
    /// The file changed while it was read: the rows read again as the run went were not those
    /// checked before it started.
    #[error(
        "script {}, line {line}: the file changed while it was read ({why}); run again once it is complete",
        path.display()
    )]
    Changed {
        /// The script's path.
        path: PathBuf,
        /// Line of the first row found changed (or of its block's first row).
        line: u64,
        /// What was found.
        why: String,
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

/// A script's calls, as a run reads them: in order, by index.
#[derive(Debug)]
pub enum ScriptCalls {
    /// Read into memory: a script the plain pass declines (see [`load_script`]), or one a
    /// scenario file names ([`ScriptCalls::held`]).
    Held(Vec<ScriptRow>),
    /// A plain script, checked and indexed, read from its file as the run goes.
    Streamed(StreamedScript),
}

/// Where a reader of [`ScriptCalls`] is.
#[derive(Debug)]
pub enum ScriptCursor {
    /// The index of the next row held.
    Held(usize),
    /// The place in the file.
    Streamed(StreamCursor),
}

impl ScriptCalls {
    /// Rows in the script.
    pub fn len(&self) -> u64 {
        match self {
            ScriptCalls::Held(rows) => rows.len() as u64,
            ScriptCalls::Streamed(s) => s.len(),
        }
    }

    /// True when it has no rows (a loaded script always has some).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The latest end of a call (time plus latency), in microseconds.
    pub fn latest_end(&self) -> u64 {
        match self {
            ScriptCalls::Held(rows) => rows.iter().map(|r| (r.t + r.latency).0).max().unwrap_or(0),
            ScriptCalls::Streamed(s) => s.latest_end(),
        }
    }

    /// Row `i`; `None` past the end, or when a streamed script's file changed (then
    /// [`ScriptCalls::check`] says why).
    #[inline]
    pub fn get(&self, i: u64) -> Option<ScriptRow> {
        match self {
            ScriptCalls::Held(rows) => rows.get(usize::try_from(i).ok()?).copied(),
            ScriptCalls::Streamed(s) => s.get(i),
        }
    }

    /// A reader from the first row on.
    pub fn cursor(&self) -> ScriptCursor {
        match self {
            ScriptCalls::Held(_) => ScriptCursor::Held(0),
            ScriptCalls::Streamed(s) => ScriptCursor::Streamed(s.cursor()),
        }
    }

    /// Reads up to `n` rows from `c` on (a cursor of this script), handing each to `each`; how
    /// many were read, fewer only at the end or when a streamed script's file changed.
    #[inline]
    pub fn read(&self, c: &mut ScriptCursor, n: usize, mut each: impl FnMut(ScriptRow)) -> usize {
        match (self, c) {
            (ScriptCalls::Held(rows), ScriptCursor::Held(next)) => {
                let taken = rows.get(*next..).unwrap_or_default().iter().take(n);
                let count = taken.len();
                taken.for_each(|r| each(*r));
                *next += count;
                count
            }
            (ScriptCalls::Streamed(s), ScriptCursor::Streamed(c)) => s.read(c, n, each),
            _ => 0,
        }
    }

    /// Whether every row read so far is the one checked before the run: an error once a
    /// streamed script's file changed under the run.
    pub fn check(&self) -> Result<(), ScriptError> {
        match self {
            ScriptCalls::Held(_) => Ok(()),
            ScriptCalls::Streamed(s) => s.check(),
        }
    }

    /// The script read from its file as the run goes, when it is.
    pub fn streamed(&self) -> Option<&StreamedScript> {
        match self {
            ScriptCalls::Held(_) => None,
            ScriptCalls::Streamed(s) => Some(s),
        }
    }

    /// The same calls held in memory (a streamed script is read whole once more).
    pub fn held(self) -> Result<ScriptCalls, ScriptError> {
        let ScriptCalls::Streamed(s) = self else { return Ok(self) };
        let mut rows = Vec::with_capacity(usize::try_from(s.len()).unwrap_or(0));
        s.read(&mut s.cursor(), usize::MAX, |r| rows.push(r));
        s.check()?;
        Ok(ScriptCalls::Held(rows))
    }
}

const MS_EXPECTED: &str = "a non-negative number of milliseconds below 10^15 (about 31,700 years) with at most 3 decimals, such as 12 or 0.25";

/// The largest time or latency a script may give, in microseconds: what fits in 15 whole digits
/// of milliseconds (the fast reader's limit), so a row's end never overflows a clock.
const MAX_MICROS: u64 = 1_000_000_000_000_000_000 - 1;
const OK_EXPECTED: &str = "0, 1, true or false";

/// Parses decimal milliseconds into whole microseconds; extra decimals must be zeros. One pass
/// over the bytes, no floating point.
fn parse_ms(text: &[u8]) -> Option<u64> {
    // Whole milliseconds of up to 15 digits (the common case) cannot overflow: no checks.
    if let Some(ms) = crate::trace::columns::parse_whole(text) {
        return Some(ms * 1_000);
    }
    let mut int: u64 = 0;
    let mut i = 0;
    while let Some(d) = text.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        int = int.checked_mul(10)?.checked_add(u64::from(d))?;
        i += 1;
    }
    let micros = int.checked_mul(1_000)?;
    let Some(rest) = text.get(i..).filter(|r| !r.is_empty()) else {
        return (i > 0 && micros <= MAX_MICROS).then_some(micros); // more than 15 whole digits
    };
    let frac = rest.strip_prefix(b".")?;
    if i == 0 && frac.is_empty() || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if frac.len() > 3 && !frac[3..].iter().all(|b| *b == b'0') {
        return None;
    }
    let mut place = 100;
    let mut micros = micros;
    for digit in frac.iter().take(3) {
        micros = micros.checked_add(u64::from(digit - b'0') * place)?;
        place /= 10;
    }
    Some(micros).filter(|m| *m <= MAX_MICROS)
}

fn parse_ok(text: &[u8]) -> Option<bool> {
    match text {
        b"1" => Some(true),
        b"0" => Some(false),
        t if t.eq_ignore_ascii_case(b"true") => Some(true),
        t if t.eq_ignore_ascii_case(b"false") => Some(false),
        _ => None,
    }
}

/// Reads a script file. Errors name the file, the row's line, the column, the value and what was
/// expected.
///
/// A plain file (the exact header, then plain rows ([`plain`]) in time order, each ending with
/// `\n`) is checked and indexed by one pass on every core and then read from the file as the run
/// goes ([`StreamedScript`]). Any other is read into memory: a block at a time when its lines are
/// plain or simply written ([`read_plain`]: blank lines, `true`, spaces, CRLF), otherwise by the
/// general CSV reader, which accepts what the plain readers do not (quotes, spaces around the
/// header) and names every error.
pub fn load_script(path: &Path) -> Result<ScriptCalls, ScriptError> {
    let read_error = |error| ScriptError::Read { path: path.to_path_buf(), error };
    let file = File::open(path).map_err(read_error)?;
    let file = match StreamedScript::scan(file, path).map_err(read_error)? {
        Ok(script) => return Ok(ScriptCalls::Streamed(script)),
        Err(file) => file,
    };
    let size = file.metadata().map_err(read_error)?;
    if !size.is_file() {
        // A pipe cannot be read twice (by the plain reader, then the general one): its bytes are
        // taken whole first (never scanned, nothing of it was read yet).
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes).map_err(read_error)?;
        let size = bytes.len() as u64;
        return read_rows(path, std::io::Cursor::new(bytes), size).map(ScriptCalls::Held);
    }
    // Positioned reads leave the cursor at the start on unix; elsewhere they move it.
    #[cfg(not(unix))]
    (&file).rewind().map_err(read_error)?;
    read_rows(path, file, size.len()).map(ScriptCalls::Held)
}

/// The rows of the script `input` (at `path`, `size` bytes), read into memory by the plain
/// reader, or else by the general one from the same input rewound.
fn read_rows(path: &Path, mut input: impl Read + Seek, size: u64) -> Result<Vec<ScriptRow>, ScriptError> {
    let owned = || path.to_path_buf();
    if let Some(rows) =
        read_plain(&mut input, size).map_err(|error| ScriptError::Read { path: owned(), error })?
    {
        return Ok(rows);
    }
    input.rewind().map_err(|error| ScriptError::Read { path: owned(), error })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(std::io::BufReader::new(input));
    let mut record = csv::StringRecord::new();
    let malformed = |e: csv::Error| match e.kind() {
        csv::ErrorKind::Io(_) => match e.into_kind() {
            csv::ErrorKind::Io(error) => ScriptError::Read { path: owned(), error },
            _ => unreachable!("kind checked above"),
        },
        _ => ScriptError::Malformed {
            path: owned(),
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        },
    };
    if !reader.read_record(&mut record).map_err(malformed)? {
        return Err(ScriptError::Empty { path: owned() });
    }
    let header_line = record.position().map_or(1, |p| p.line());
    let header: Vec<&str> = record
        .iter()
        .enumerate()
        .map(|(i, f)| if i == 0 { f.trim_start_matches('\u{feff}') } else { f })
        .collect();
    if header != SCRIPT_HEADER {
        return Err(ScriptError::Header { path: owned(), line: header_line, found: header.join(",") });
    }
    let mut rows = Vec::new();
    let mut previous: Option<(u64, String)> = None;
    while reader.read_record(&mut record).map_err(malformed)? {
        let line = record.position().map_or(0, |p| p.line());
        if record.len() != 3 {
            return Err(ScriptError::FieldCount { path: owned(), line, found: record.len() });
        }
        let value_error = |column: &'static str, value: &str, expected: &'static str| ScriptError::Value {
            path: owned(),
            line,
            column,
            value: value.to_string(),
            expected,
        };
        let cell = |i: usize| record[i].as_bytes();
        let t = parse_ms(cell(0)).ok_or_else(|| value_error("t_ms", &record[0], MS_EXPECTED))?;
        let latency = parse_ms(cell(1)).ok_or_else(|| value_error("latency_ms", &record[1], MS_EXPECTED))?;
        let ok = parse_ok(cell(2)).ok_or_else(|| value_error("ok", &record[2], OK_EXPECTED))?;
        if let Some((prev, prev_text)) = &previous
            && t < *prev
        {
            return Err(ScriptError::Decreasing {
                path: owned(),
                line,
                value: record[0].to_string(),
                previous: prev_text.clone(),
            });
        }
        previous = Some((t, record[0].to_string()));
        rows.push(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
    }
    if rows.is_empty() {
        return Err(ScriptError::NoRows { path: owned() });
    }
    Ok(rows)
}

/// The plain reader: the rows of a script whose header is exactly `t_ms,latency_ms,ok` and whose
/// rows are three unquoted valid fields in time order, parsed from the bytes without allocating
/// per row; `None` for any other file (the general reader then reads it and names the error).
fn read_plain(input: impl Read, size: u64) -> std::io::Result<Option<Vec<ScriptRow>>> {
    let mut lines = LineReader::new(input);
    let Some((_, header)) = lines.next_line()? else { return Ok(None) };
    if header.strip_prefix("\u{feff}".as_bytes()).unwrap_or(header) != SCRIPT_HEADER.join(",").as_bytes() {
        return Ok(None);
    }
    // Room for every row at once, estimated from the first block's line length.
    let mut rows = Vec::with_capacity(lines.estimate_lines(size));
    let mut previous = 0;
    loop {
        // Rows of plain whole or short decimal numbers straight from the buffer; the first
        // other line (an empty one, `true`, spaces, a CR) is read below, then this resumes.
        lines.each_line(|_, b| {
            let (t, latency, ok, n) = plain::fast_row(b)?;
            if t < previous {
                return None;
            }
            previous = t;
            rows.push(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
            Some(n)
        })?;
        let Some((_, line)) = lines.next_line()? else { break };
        if line.is_empty() {
            continue;
        }
        let Some((t, latency, ok)) = three_fields(line) else { return Ok(None) };
        let (Some(t), Some(latency), Some(ok)) = (parse_ms(t), parse_ms(latency), parse_ok(ok)) else {
            return Ok(None);
        };
        if t < previous {
            return Ok(None);
        }
        previous = t;
        rows.push(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
    }
    rows.shrink_to_fit();
    Ok((!rows.is_empty()).then_some(rows))
}

/// The three comma-separated fields of a line, each trimmed; `None` for any other count.
fn three_fields(line: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let a = line.iter().position(|b| *b == b',')?;
    let rest = &line[a + 1..];
    let b = rest.iter().position(|b| *b == b',')?;
    let ok = &rest[b + 1..];
    if ok.contains(&b',') {
        return None;
    }
    Some((line[..a].trim_ascii(), rest[..b].trim_ascii(), ok.trim_ascii()))
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

    /// Every row of `calls`, read by a cursor (and checked).
    pub(super) fn all_rows(calls: &ScriptCalls) -> Vec<ScriptRow> {
        let mut rows = Vec::new();
        calls.read(&mut calls.cursor(), usize::MAX, |r| rows.push(r));
        calls.check().unwrap();
        rows
    }

    /// The script `content` loaded: its rows, and whether they were streamed.
    fn load_as(content: &str) -> Result<(Vec<ScriptRow>, bool), String> {
        let f = write(content.as_bytes());
        let calls = load_script(f.path()).map_err(|e| e.to_string())?;
        Ok((all_rows(&calls), matches!(calls, ScriptCalls::Streamed(_))))
    }

    fn load(content: &str) -> Result<Vec<ScriptRow>, String> {
        load_as(content).map(|(rows, _)| rows)
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
    fn plain_files_take_the_fast_reader_and_others_read_the_same() {
        let plain = "t_ms,latency_ms,ok\n0,12.5,1\n1000.001,900,true\n\n2500,30000,0\n";
        let f = write(plain.as_bytes());
        let fast =
            read_plain(File::open(f.path()).unwrap(), plain.len() as u64).unwrap().expect("plain file");
        assert_eq!(fast, load(plain).unwrap());
        // Quotes and a spaced header go to the general reader, with the same result.
        let quoted = "t_ms, latency_ms ,ok\n\"0\",12.5,1\n1000.001,900,true\n\n2500,\"30000\",0\n";
        let f = write(quoted.as_bytes());
        assert_eq!(read_plain(File::open(f.path()).unwrap(), quoted.len() as u64).unwrap(), None);
        assert_eq!(load(quoted).unwrap(), fast);
    }

    #[test]
    fn plain_scripts_are_streamed_and_others_held_with_the_same_rows() {
        let header = "t_ms,latency_ms,ok\n";
        let mut plain = String::from(header);
        for i in 0..3_000u64 {
            plain +=
                &format!("{}{},{}.{},{}\n", i * 37 / 3, [".5", ""][(i % 2) as usize], i % 900, i % 10, i % 2);
        }
        let (rows, streamed) = load_as(&plain).unwrap();
        assert!(streamed);
        assert_eq!(rows.len(), 3_000);
        assert_eq!(rows[1], ScriptRow { t: SimTime(12_000), latency: Dur(1_100), ok: true });
        // The same rows written otherwise are read into memory, with the same result: CRLF line
        // ends, a blank line, `true`, spaces, quotes, no final line end.
        for (other, how) in [
            (plain.replace('\n', "\r\n"), "CRLF"),
            (plain.replacen("\n12,", "\n\n12,", 1), "a blank line"),
            (plain.replace(",1\n", ",true\n"), "true"),
            (plain.replace(",0\n", ", 0\n"), "spaces"),
            (plain.replacen("t_ms,", "\"t_ms\",", 1), "a quoted header"),
            (plain.trim_end().to_string(), "no final line end"),
        ] {
            let (held, streamed) = load_as(&other).unwrap();
            assert!(!streamed, "{how}");
            assert_eq!(held, rows, "{how}");
        }
        // A scenario file's script is held.
        let f = write(plain.as_bytes());
        let held = load_script(f.path()).and_then(ScriptCalls::held).unwrap();
        assert!(matches!(&held, ScriptCalls::Held(h) if *h == rows));
        assert_eq!(held.latest_end(), load_script(f.path()).unwrap().latest_end());
    }

    #[test]
    fn errors_are_the_general_readers_wherever_the_row() {
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
        // The largest time below 10^15 ms is streamed; 10^15 is refused.
        let (rows, streamed) =
            load_as("t_ms,latency_ms,ok\n999999999999999,999999999999999.999,1\n").unwrap();
        assert!(streamed);
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
    fn rows_read_straight_from_the_buffer_match_the_general_reader() {
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
        assert_eq!(rows, load(&plain.replace("t_ms,", "t_ms ,")).unwrap());
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

    /// A pipe (a FIFO) is read whole, whatever reader its rows need, with the same rows and
    /// errors as a file.
    #[cfg(unix)]
    #[test]
    fn a_piped_script_takes_any_reader() {
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
            let piped = load_script(&fifo).map(|c| all_rows(&c)).map_err(|e| e.to_string());
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
        let f = write(b"t_ms,latency_ms,ok\n1,\xff\xfe,1\n");
        let err = load_script(f.path()).unwrap_err();
        assert!(matches!(err, ScriptError::Malformed { line: 2, .. }), "{err:?}");
    }
}
