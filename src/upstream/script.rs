//! Scripted calls: a CSV with header `t_ms,latency_ms,ok`, one row per call. The client makes
//! exactly these calls (at `t_ms`, taking `latency_ms`, succeeding when `ok`), with no retries;
//! tests and comparisons with other implementations use it.
//!
//! Times are decimal milliseconds, exact to the microsecond (at most 3 decimals), so a script
//! round-trips through integer time without rounding.

use crate::time::{Dur, SimTime};
use crate::trace::records::LineReader;
use std::fs::File;
#[cfg(not(unix))]
use std::io::Read;
use std::io::Seek;
use std::path::{Path, PathBuf};

/// The header a script must start with, exactly.
pub const SCRIPT_HEADER: [&str; 3] = ["t_ms", "latency_ms", "ok"];

/// One scripted call. Packed (17 bytes, not 24): a week's 600,000 rows are held at once.
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
/// A plain file (the exact header, unquoted valid rows in time order) is read at memory speed:
/// whole and parsed in parts at once ([`read_in_parts`]) up to [`IN_PARTS_LIMIT`], a block at a
/// time beyond it or when a line is not plain ([`read_plain`]); anything else is read again, from
/// the same handle rewound, by the general CSV reader, which accepts what the plain readers do
/// not (quotes, spaces around the header) and names every error.
pub fn load_script(path: &Path) -> Result<Vec<ScriptRow>, ScriptError> {
    let owned = || path.to_path_buf();
    let file = File::open(path).map_err(|error| ScriptError::Read { path: owned(), error })?;
    if let Some(size) = file.metadata().ok().map(|m| m.len()).filter(|n| *n <= IN_PARTS_LIMIT) {
        let parts = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let read = read_in_parts(&file, size as usize, parts);
        if let Some(rows) = read.map_err(|error| ScriptError::Read { path: owned(), error })? {
            return Ok(rows);
        }
        (&file).rewind().map_err(|error| ScriptError::Read { path: owned(), error })?;
    }
    if let Some(rows) = read_plain(&file).map_err(|error| ScriptError::Read { path: owned(), error })? {
        return Ok(rows);
    }
    (&file).rewind().map_err(|error| ScriptError::Read { path: owned(), error })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(std::io::BufReader::new(file));
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

/// The largest script read whole into memory to be parsed in parts at once (larger ones are read
/// a block at a time).
const IN_PARTS_LIMIT: u64 = 256 << 20;

/// The rows of a script of `size` bytes whose every line after the exact header is a plain row
/// ([`fast_row`], `\n`-terminated) in time order, read and parsed in `parts` pieces at once,
/// each on a thread of its own ([`read_pieces`], [`parse_in_parts`]); `None` for any other file
/// (or one whose length changed), which the other readers then read.
fn read_in_parts(file: &File, size: usize, parts: usize) -> std::io::Result<Option<Vec<ScriptRow>>> {
    let Some((bytes, line_ends)) = read_pieces(file, size, parts)? else { return Ok(None) };
    Ok(parse_in_parts(&bytes, &line_ends))
}

/// The first `size` bytes of `file` read in `parts` even pieces at once, each on a thread of its
/// own (the copy and the fresh pages it fills are shared out), with the line ends each piece
/// holds; `None` when the file is no longer `size` bytes long.
fn read_pieces(file: &File, size: usize, parts: usize) -> std::io::Result<Option<(Vec<u8>, Vec<usize>)>> {
    // Zeroed memory comes fresh from the system: no page is touched before its piece is read.
    let mut bytes = vec![0u8; size];
    let parts = parts.clamp(1, size.max(1));
    let mut pieces = Vec::with_capacity(parts);
    let mut rest = bytes.as_mut_slice();
    for k in 0..parts {
        let (piece, after) = rest.split_at_mut(size * (k + 1) / parts - size * k / parts);
        pieces.push((size * k / parts, piece));
        rest = after;
    }
    let read = std::thread::scope(|s| {
        let reading: Vec<_> = pieces
            .into_iter()
            .map(|(at, piece)| {
                s.spawn(move || {
                    read_exact_at(file, piece, at as u64)?;
                    Ok(memchr::memchr_iter(b'\n', piece).count())
                })
            })
            .collect();
        reading
            .into_iter()
            .map(|r| r.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect::<std::io::Result<Vec<usize>>>()
    });
    match read {
        Ok(line_ends) => {
            let mut probe = [0u8; 1];
            // A file that grew since its length was taken is read by the other readers.
            let longer = read_at(file, &mut probe, size as u64)? > 0;
            Ok((!longer).then_some((bytes, line_ends)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads `buf.len()` bytes of `file` from `offset` on, without moving its cursor.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Reads up to `buf.len()` bytes of `file` from `offset` on; how many were read.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Reads `buf.len()` bytes of `file` from `offset` on (a clone of the handle, so the pieces are
/// read one after the other where positioned reads are not available).
#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut f = file.try_clone()?;
    f.seek(std::io::SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Reads up to `buf.len()` bytes of `file` from `offset` on; how many were read.
#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut f = file.try_clone()?;
    f.seek(std::io::SeekFrom::Start(offset))?;
    f.read(buf)
}

/// The rows of a script held in memory (as [`read_in_parts`] takes them), parsed in pieces cut
/// at line ends, each on a thread of its own, straight into its share of one array (the rows do
/// not depend on the cuts). `line_ends[k]` is the number of `\n` in the `k`-th of
/// `line_ends.len()` even pieces of `bytes` (the ones [`read_pieces`] read), so each piece's
/// share is known before any row is parsed.
fn parse_in_parts(bytes: &[u8], line_ends: &[usize]) -> Option<Vec<ScriptRow>> {
    let parts = line_ends.len().max(1);
    let size = bytes.len();
    let nominal = |k: usize| size * k / parts;
    let bom = if bytes.starts_with("\u{feff}".as_bytes()) { 3 } else { 0 };
    let header = SCRIPT_HEADER.join(",");
    let after_header = bytes[bom..].strip_prefix(header.as_bytes())?.strip_prefix(b"\n")?;
    let body_start = size - after_header.len();
    // Line ends before byte `x`: those of the even pieces before the one holding `x`, then
    // counted up to `x` (a cut lies a line at most past its piece's start).
    let ends_before = |x: usize| {
        if x >= size {
            return line_ends.iter().sum::<usize>();
        }
        let j = (0..parts).rev().find(|j| nominal(*j) <= x).unwrap_or(0);
        line_ends[..j].iter().sum::<usize>() + memchr::memchr_iter(b'\n', &bytes[nominal(j)..x]).count()
    };
    let mut cuts = vec![body_start];
    for k in 1..parts {
        let at = nominal(k).max(cuts[k - 1]);
        cuts.push(memchr::memchr(b'\n', &bytes[at..]).map_or(size, |i| at + i + 1));
    }
    cuts.push(size);
    let ends: Vec<usize> = cuts.iter().map(|c| ends_before(*c)).collect();
    let lines: Vec<usize> = ends.windows(2).map(|w| w[1] - w[0]).collect();
    let total: usize = lines.iter().sum();
    if total == 0 {
        return None;
    }
    let mut rows: Vec<ScriptRow> = Vec::with_capacity(total);
    let mut shares = Vec::with_capacity(parts);
    let mut rest = &mut rows.spare_capacity_mut()[..total];
    for n in &lines {
        let (share, after) = rest.split_at_mut(*n);
        shares.push(share);
        rest = after;
    }
    let spans = std::thread::scope(|s| {
        let parsing: Vec<_> = cuts
            .windows(2)
            .zip(shares)
            .map(|(cut, share)| s.spawn(move || plain_rows(&bytes[cut[0]..cut[1]], share)))
            .collect();
        parsing
            .into_iter()
            .map(|p| p.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect::<Option<Vec<Option<(u64, u64)>>>>()
    })?;
    // Each piece is in order; so is the whole when each starts no earlier than the last ended.
    let mut last = 0;
    for (first, end) in spans.into_iter().flatten() {
        if first < last {
            return None;
        }
        last = end;
    }
    // SAFETY: the shares cover the first `total` places of the spare capacity, and every
    // `plain_rows` call returned `Some`, which it does only after writing each place of its share.
    unsafe { rows.set_len(total) };
    Some(rows)
}

/// Parses `b`, whose lines are as many as `rows`, into `rows`, each line a plain row and in time
/// order: the first and last row's times (`None` inside for no rows); `None` for anything else.
fn plain_rows(b: &[u8], rows: &mut [std::mem::MaybeUninit<ScriptRow>]) -> Option<Option<(u64, u64)>> {
    let mut i = 0;
    let mut previous = 0;
    let mut first = None;
    for row in rows {
        let (t, latency, ok, n) = b.get(i..).and_then(fast_row)?;
        if t < previous {
            return None;
        }
        previous = t;
        first.get_or_insert(t);
        row.write(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
        i += n;
    }
    (i == b.len()).then_some(first.map(|f| (f, previous)))
}

/// The plain reader: the rows of a script whose header is exactly `t_ms,latency_ms,ok` and whose
/// rows are three unquoted valid fields in time order, parsed from the bytes without allocating
/// per row; `None` for any other file (the general reader then reads it and names the error).
fn read_plain(file: &File) -> std::io::Result<Option<Vec<ScriptRow>>> {
    let size = file.metadata().map_or(0, |m| m.len());
    let mut lines = LineReader::new(file);
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
            let (t, latency, ok, n) = fast_row(b)?;
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

/// Milliseconds at `b[start..]` as [`parse_ms`] reads them, when written plainly (up to 15
/// whole digits, then at most 3 decimals), and the byte after them; `None` otherwise. The whole
/// digits are read one at a time: a script's fields are short, and a plain loop the compiler
/// keeps in registers is cheaper for them than a word at a time.
#[inline(always)]
fn fast_ms(b: &[u8], start: usize) -> Option<(u64, usize)> {
    let mut i = start;
    let mut ms = 0u64;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        // Wraps past 19 digits, which are refused below anyway.
        ms = ms.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    if i == start || i - start > 15 {
        return None;
    }
    let mut micros = ms * 1_000;
    if b.get(i) == Some(&b'.') {
        let (frac, end) = crate::trace::columns::digit_run(b, i + 1);
        micros += frac * [0, 100, 10, 1].get(end - i - 1).filter(|p| **p > 0)?;
        i = end;
    }
    Some((micros, i))
}

/// A row `t_ms,latency_ms,ok\n` written plainly (see [`fast_ms`]; `ok` a bare 0 or 1) at the
/// start of `b`: its values and length with the `\n`; `None` for anything else.
#[inline]
fn fast_row(b: &[u8]) -> Option<(u64, u64, bool, usize)> {
    let (t, i) = fast_ms(b, 0)?;
    let (latency, i) = fast_ms(b, i.checked_add(1).filter(|_| b.get(i) == Some(&b','))?)?;
    match b.get(i..i + 3)? {
        [b',', ok @ (b'0' | b'1'), b'\n'] => Some((t, latency, *ok == b'1', i + 3)),
        _ => None,
    }
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

    fn load(content: &str) -> Result<Vec<ScriptRow>, String> {
        let f = write(content.as_bytes());
        load_script(f.path()).map_err(|e| e.to_string())
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
        let fast = read_plain(&File::open(f.path()).unwrap()).unwrap().expect("plain file");
        assert_eq!(fast, load(plain).unwrap());
        // Quotes and a spaced header go to the general reader, with the same result.
        let quoted = "t_ms, latency_ms ,ok\n\"0\",12.5,1\n1000.001,900,true\n\n2500,\"30000\",0\n";
        let f = write(quoted.as_bytes());
        assert_eq!(read_plain(&File::open(f.path()).unwrap()).unwrap(), None);
        assert_eq!(load(quoted).unwrap(), fast);
    }

    /// `bytes` parsed by [`parse_in_parts`] in `parts` even pieces.
    fn in_parts(bytes: &[u8], parts: usize) -> Option<Vec<ScriptRow>> {
        let size = bytes.len();
        let parts = parts.clamp(1, size.max(1));
        let line_ends: Vec<usize> = (0..parts)
            .map(|k| memchr::memchr_iter(b'\n', &bytes[size * k / parts..size * (k + 1) / parts]).count())
            .collect();
        parse_in_parts(bytes, &line_ends)
    }

    #[test]
    fn scripts_read_in_parts_match_the_block_reader_however_cut() {
        let mut text = String::from("\u{feff}t_ms,latency_ms,ok\n");
        for i in 0..5_000u64 {
            text +=
                &format!("{}{},{}.{},{}\n", i * 37 / 3, [".5", ""][(i % 2) as usize], i % 900, i % 10, i % 2);
        }
        let f = write(text.as_bytes());
        let whole = read_plain(&File::open(f.path()).unwrap()).unwrap().expect("plain file");
        assert_eq!(whole.len(), 5_000);
        for parts in [1, 2, 3, 7, 64, 10_000] {
            assert_eq!(in_parts(text.as_bytes(), parts).as_ref(), Some(&whole), "{parts} parts");
            let file = File::open(f.path()).unwrap();
            let read = read_in_parts(&file, text.len(), parts).unwrap();
            assert_eq!(read.as_ref(), Some(&whole), "{parts} parts read");
        }
        assert_eq!(load_script(f.path()).unwrap(), whole);
        // Anything but plain rows in order, in any piece or across two (the last case cuts
        // between its rows), is left to the other readers.
        let header = "t_ms,latency_ms,ok\n";
        let late =
            format!("{header}{}", (0..1000).map(|i| format!("{},5,1\n", 1000 - i / 600)).collect::<String>());
        for other in [
            header.to_string(),
            format!("{header}5,1,1"),
            format!("{header}5,1,1\n\n6,1,1\n"),
            late,
            format!("{header}10,1,1\n9,1,1\n"),
        ] {
            for parts in [1, 2, 3] {
                assert_eq!(in_parts(other.as_bytes(), parts), None, "{other:?} in {parts} parts");
            }
        }
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
