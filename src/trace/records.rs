//! Reading an importer's rows fast: a plain CSV (no quotes, `\n` or `\r\n` line ends, as every
//! exporter writes logs) is split on commas straight from a block buffer, about four times faster
//! than the general CSV reader; the first line with a quote or a lone `\r` hands the rest of the
//! input (from that line on) to the `csv` crate's reader, so quoted files read exactly as before.
//! Either way a row lands in one reused [`ByteRecord`] with its line number: nothing is allocated
//! per row, and the importers' per-row code (and its error messages) is the same for both.
//! Importers that want every last nanosecond take plain lines split in place in the buffer
//! ([`Records::next_split`], only the fields they need); both row kinds answer [`Cells`], so the
//! per-row code is still shared.

use super::TraceError;
use super::columns::{Header, csv_builder, csv_error};
use csv::ByteRecord;
use std::cell::Cell;
use std::io::{Chain, Cursor, Read};
use std::ops::{Deref, DerefMut};

/// Size of one block read from the input; grows only for a longer line.
const BLOCK: usize = 1 << 18;

thread_local! {
    /// The block of the last [`LineReader`] dropped on this thread, for the next one to take.
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A reader's block buffer: a fresh one is allocated and zeroed only when its thread holds no
/// spare; a block of the usual size goes back to the thread on drop. Reading a file many times
/// in one process (a sweep's trace per worker, the import bench) then allocates and zeroes no
/// 256 KiB per import. Its old bytes are never read: only what the input put there is.
struct Block(Vec<u8>);

impl Block {
    fn new() -> Block {
        let spare = SPARE.try_with(Cell::take).unwrap_or_default();
        Block(if spare.len() == BLOCK { spare } else { vec![0; BLOCK] })
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.0.len() == BLOCK {
            let block = std::mem::take(&mut self.0);
            // At thread exit the spare is gone already: the block is simply freed.
            let _ = SPARE.try_with(|spare| spare.set(block));
        }
    }
}

impl Deref for Block {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl DerefMut for Block {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

/// Lines of a byte stream, read in blocks: each line without its `\n` (nor a `\r` before it),
/// with its 1-based number. Allocates only when a line is longer than the buffer.
pub struct LineReader<R> {
    input: R,
    buf: Block,
    pos: usize,
    len: usize,
    eof: bool,
    line: u64,
    /// Start of the last line returned, so it can be handed back ([`LineReader::into_rest`]).
    last_start: usize,
    /// The buffer holds no quote and no `\r` from the last line's start up to here.
    clean_to: usize,
}

/// A reader of one line's answer (its length with the line end, or `None`) as a reader of
/// lines' ([`LineReader::each_lines`]: how many lines and their bytes).
#[inline(always)]
fn one_line(n: Option<usize>) -> (u64, usize) {
    n.map_or((0, 0), |n| (1, n))
}

impl<R: Read> LineReader<R> {
    /// A reader over `input`.
    pub fn new(input: R) -> LineReader<R> {
        LineReader {
            input,
            buf: Block::new(),
            pos: 0,
            len: 0,
            eof: false,
            line: 0,
            last_start: 0,
            clean_to: 0,
        }
    }

    /// The next line and its number, or `None` at the end of the input.
    pub fn next_line(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        let (start, end) = loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.pos..self.len]) {
                let start = self.pos;
                self.pos += i + 1;
                break (start, start + i);
            }
            if self.eof {
                if self.pos == self.len {
                    return Ok(None);
                }
                let start = self.pos;
                self.pos = self.len;
                break (start, self.len);
            }
            self.refill()?;
        };
        self.last_start = start;
        self.line += 1;
        let line = &self.buf[start..end];
        Ok(Some((self.line, line.strip_suffix(b"\r").unwrap_or(line))))
    }

    /// Reads lines in place for a caller's own parser: `each` gets the next line's number and
    /// the buffered bytes from its start, and returns how many bytes it read (its whole line,
    /// the `\n` included), or `None` for a line it does not read or one that does not end in the
    /// buffer. Stops at the first line `each` does not read (or the end of the input), which
    /// [`next_line`](Self::next_line) then returns as usual; returns how many lines it read. No memory search per line: the
    /// parser finds each line's end as it reads it.
    pub fn each_line(&mut self, mut each: impl FnMut(u64, &[u8]) -> Option<usize>) -> std::io::Result<u64> {
        self.each_lines(|line, block| one_line(each(line, block)))
    }

    /// [`each_line`](Self::each_line) with `each` reading as many lines as it can from the
    /// buffered bytes at once: it gets the next line's number and the bytes from its start, and
    /// returns how many whole lines it read and their bytes (none: as `None` above).
    #[inline]
    pub fn each_lines(&mut self, mut each: impl FnMut(u64, &[u8]) -> (u64, usize)) -> std::io::Result<u64> {
        let first = self.line;
        loop {
            let block = &self.buf[self.pos..self.len];
            match each(self.line + 1, block) {
                (0, _) if self.eof || memchr::memchr(b'\n', block).is_some() => return Ok(self.line - first),
                (0, _) => self.refill()?,
                (lines, n) => {
                    self.pos += n;
                    self.line += lines;
                    self.last_start = self.pos;
                }
            }
        }
    }

    /// True when the last line returned (ending at `end` in the buffer) holds no quote and no
    /// `\r`. One `memchr2` covers a whole block: the lines before the first such byte need no
    /// look of their own.
    #[inline]
    fn last_is_clean(&mut self, end: usize) -> bool {
        if end <= self.clean_to {
            return true;
        }
        let start = self.last_start;
        let first = memchr::memchr2(b'"', b'\r', &self.buf[start..self.len]).map_or(self.len, |i| start + i);
        self.clean_to = first;
        first >= end
    }

    /// Moves the unread bytes to the front and reads more (growing the buffer for a long line).
    fn refill(&mut self) -> std::io::Result<()> {
        self.clean_to = 0;
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.last_start = self.last_start.saturating_sub(self.pos);
        self.pos = 0;
        if self.len == self.buf.len() {
            let doubled = self.buf.len() * 2;
            self.buf.resize(doubled, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// About how many lines an input of `size` bytes holds, from the first 8 KiB buffered (for
    /// sizing arrays once), at most 2^28.
    pub fn estimate_lines(&self, size: u64) -> usize {
        let seen = self.buffered();
        let seen = &seen[..seen.len().min(8 << 10)];
        let per_line = seen.len() / memchr::memchr_iter(b'\n', seen).count().max(1);
        (size as usize / per_line.max(1)).saturating_add(16).min(1 << 28)
    }

    /// What has been read so far and not yet returned, from the last line returned on (the
    /// first block, just after the header: what format detection looks at).
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.last_start..self.len]
    }

    /// The input from the start of the last line returned on, and that line's number minus one.
    fn into_rest(mut self) -> (Chain<Cursor<Vec<u8>>, R>, u64) {
        let mut rest = std::mem::take(&mut self.buf.0);
        rest.truncate(self.len);
        rest.drain(..self.last_start);
        (Cursor::new(rest).chain(self.input), self.line.saturating_sub(1))
    }
}

/// The fields of a row, however it was split.
pub trait Cells {
    /// Field `i`, untrimmed, if the row has it.
    fn field(&self, i: usize) -> Option<&[u8]>;
    /// How many fields the row has.
    fn count(&self) -> usize;
}

impl Cells for ByteRecord {
    #[inline]
    fn field(&self, i: usize) -> Option<&[u8]> {
        self.get(i)
    }
    fn count(&self) -> usize {
        self.len()
    }
}

/// A plain line split on commas up to the last field an importer needs: the fields are
/// sub-slices of the line (nothing copied); `ends` is a buffer reused from row to row.
pub struct Split<'a> {
    line: &'a [u8],
    ends: &'a [u32],
}

/// The ends of the first `upto` fields of a line known to hold no quote, stopping at the last
/// comma needed: eight bytes at a time (a comma is a zero byte of `chunk ^ ",,,,,,,,"`, found
/// exactly with the carry-free test of Hacker's Delight 6-1), the tail a byte at a time.
#[inline]
fn commas(line: &[u8], upto: usize, ends: &mut Vec<u32>) {
    const COMMAS: u64 = 0x2C2C_2C2C_2C2C_2C2C;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    ends.clear();
    let mut at = 0;
    while let Some(chunk) = line.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk) ^ COMMAS;
        let mut zeros = !(((x & LOW7) + LOW7) | x | LOW7);
        while zeros != 0 {
            ends.push((at + zeros.trailing_zeros() as usize / 8) as u32);
            if ends.len() == upto {
                return;
            }
            zeros &= zeros - 1;
        }
        at += 8;
    }
    for (i, &b) in line.iter().enumerate().skip(at) {
        if b == b',' {
            ends.push(i as u32);
            if ends.len() == upto {
                return;
            }
        }
    }
    ends.push(line.len() as u32);
}

/// One pass over a line: the ends of its first `upto` fields into `ends`; false when the line
/// holds a quote or a lone `\r` (the general reader must read it). A byte at a time beats a
/// `memchr` per comma on lines of a few dozen bytes.
#[inline]
fn scan(line: &[u8], upto: usize, ends: &mut Vec<u32>) -> bool {
    ends.clear();
    let mut special = false;
    for (i, &b) in line.iter().enumerate() {
        if b == b',' {
            if ends.len() < upto {
                ends.push(i as u32);
            }
        } else {
            special |= b == b'"' || b == b'\r';
        }
    }
    if ends.len() < upto {
        ends.push(line.len() as u32);
    }
    !special
}

impl Cells for Split<'_> {
    #[inline]
    fn field(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize + 1 };
        Some(&self.line[start..end])
    }
    fn count(&self) -> usize {
        memchr::memchr_iter(b',', self.line).count() + 1
    }
}

/// What [`Records::next_split`] found.
pub enum NextSplit<'a> {
    /// A plain line, split, and its number.
    Line(u64, Split<'a>),
    /// The rest of the input needs the general reader: read it with [`Records::next`].
    General,
    /// The end of the input.
    End,
}

/// The rows of an importer's CSV, plain or general (see the module documentation).
pub struct Records<R: Read> {
    plain: Option<LineReader<R>>,
    csv: Option<csv::Reader<Chain<Cursor<Vec<u8>>, R>>>,
    /// Lines before the general reader's first line (it counts from 1 again).
    line_offset: u64,
    file: String,
}

/// The general reader, with the importers' settings.
fn general<R: Read>(input: R, headers: bool) -> csv::Reader<R> {
    csv_builder().has_headers(headers).from_reader(input)
}

/// True when a line cannot be split on commas as it stands.
fn needs_general(line: &[u8]) -> bool {
    memchr::memchr2(b'"', b'\r', line).is_some()
}

impl<R: Read> Records<R> {
    /// Opens `input` (named `file` in messages) and reads its header.
    pub fn open(file: &str, input: R) -> Result<(Records<R>, Header), TraceError> {
        let io_err = |source| TraceError::Io { file: file.to_string(), source };
        let mut lines = LineReader::new(input);
        let first = lines.next_line().map_err(io_err)?.map(|(_, l)| l);
        if let Some(line) = first
            && matches!(line.trim_ascii_start().first(), Some(b'{' | b'['))
        {
            let what = match super::detect::detect_bytes(lines.buffered()) {
                Some(f) if !matches!(f, super::TraceFormat::Interval | super::TraceFormat::Grafana) => {
                    format!("{} (detected from the content)", f.describe())
                }
                _ => "JSON (or a log) of no shape breakerlab reads".to_string(),
            };
            return Err(TraceError::Format {
                file: file.to_string(),
                message: format!(
                    "this file holds {what}, not CSV: it cannot be read as an interval or per-call CSV \
                     (drop --format / `format` to have the format detected)"
                ),
            });
        }
        let mut records = Records { plain: None, csv: None, line_offset: 0, file: file.to_string() };
        match first {
            Some(line) if !needs_general(line) => {
                let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
                let header = ByteRecord::from(line.split(|b| *b == b',').collect::<Vec<_>>());
                let header = Header::from_record(file, &header)?;
                records.plain = Some(lines);
                Ok((records, header))
            }
            // A quoted header on one line (Grafana's `"Time","p95"`): the general reader reads
            // that line alone; the rows may still be plain.
            Some(line) if !line.contains(&b'\r') && line.iter().filter(|b| **b == b'"').count() % 2 == 0 => {
                let mut one = general(line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line), false);
                let mut header = ByteRecord::new();
                one.read_byte_record(&mut header).map_err(|e| csv_error(file, &e))?;
                drop(one);
                let header = Header::from_record(file, &header)?;
                records.plain = Some(lines);
                Ok((records, header))
            }
            _ => {
                let (rest, _) = lines.into_rest();
                let mut reader = general(rest, true);
                let header = reader.byte_headers().map_err(|e| csv_error(file, &e))?.clone();
                records.csv = Some(reader);
                Ok((records, Header::from_record(file, &header)?))
            }
        }
    }

    /// The next row split in place (its first `upto` fields, see [`Split`]) while the input is
    /// plain, in one pass over the line (no allocation: `ends` is reused).
    #[inline]
    pub fn next_split<'s>(
        &'s mut self,
        upto: usize,
        ends: &'s mut Vec<u32>,
    ) -> Result<NextSplit<'s>, TraceError> {
        let Some(lines) = &mut self.plain else {
            return Ok(if self.csv.is_some() { NextSplit::General } else { NextSplit::End });
        };
        loop {
            let next =
                lines.next_line().map_err(|source| TraceError::Io { file: self.file.clone(), source })?;
            let Some((n, line)) = next else { return Ok(NextSplit::End) };
            if line.is_empty() {
                continue;
            }
            let (at, len) = (line.as_ptr() as usize, line.len());
            let end = at - lines.buf.as_ptr() as usize + len;
            if lines.last_is_clean(end) {
                commas(&lines.buf[end - len..end], upto, ends);
            } else if !scan(&lines.buf[end - len..end], upto, ends) {
                break;
            }
            // Hand the line out through a second borrow of the buffer (returning the first would
            // keep the reader borrowed past the loop).
            let buf = &self.plain.as_ref().expect("plain reader").buf;
            let start = at - buf.as_ptr() as usize;
            return Ok(NextSplit::Line(n, Split { line: &buf[start..start + len], ends }));
        }
        let lines = self.plain.take().expect("plain reader checked above");
        let (rest, before) = lines.into_rest();
        self.line_offset = before;
        self.csv = Some(general(rest, false));
        Ok(NextSplit::General)
    }

    /// About how many rows an input of `size` bytes holds (see [`LineReader::estimate_lines`]);
    /// 0 once the general reader reads it.
    pub fn estimate_rows(&self, size: u64) -> usize {
        self.plain.as_ref().map_or(0, |l| l.estimate_lines(size))
    }

    /// While the input is plain, hands the buffered lines to a caller's own parser (see
    /// [`LineReader::each_line`]); the line it stops at is the next one
    /// [`next_split`](Self::next_split) returns. Returns how many lines `each` read.
    pub fn each_plain(
        &mut self,
        mut each: impl FnMut(u64, &[u8]) -> Option<usize>,
    ) -> Result<u64, TraceError> {
        self.each_plain_lines(|line, block| one_line(each(line, block)))
    }

    /// [`each_plain`](Self::each_plain) with `each` reading many lines at once (see
    /// [`LineReader::each_lines`]).
    pub fn each_plain_lines(
        &mut self,
        each: impl FnMut(u64, &[u8]) -> (u64, usize),
    ) -> Result<u64, TraceError> {
        match &mut self.plain {
            Some(lines) => {
                lines.each_lines(each).map_err(|source| TraceError::Io { file: self.file.clone(), source })
            }
            None => Ok(0),
        }
    }

    /// Reads the next row into `record`; its line number, or `None` at the end.
    pub fn next(&mut self, record: &mut ByteRecord) -> Result<Option<u64>, TraceError> {
        if let Some(lines) = &mut self.plain {
            loop {
                let next =
                    lines.next_line().map_err(|source| TraceError::Io { file: self.file.clone(), source })?;
                let Some((n, line)) = next else { return Ok(None) };
                if line.is_empty() {
                    continue; // the general reader skips empty lines too
                }
                if needs_general(line) {
                    break;
                }
                record.clear();
                for field in line.split(|b| *b == b',') {
                    record.push_field(field);
                }
                return Ok(Some(n));
            }
            let lines = self.plain.take().expect("plain reader checked above");
            let (rest, before) = lines.into_rest();
            self.line_offset = before;
            self.csv = Some(general(rest, false));
        }
        let Some(reader) = &mut self.csv else { return Ok(None) };
        match reader.read_byte_record(record) {
            Ok(true) => Ok(Some(record.position().map_or(0, csv::Position::line) + self.line_offset)),
            Ok(false) => Ok(None),
            Err(e) => {
                let mut err = csv_error(&self.file, &e);
                if let TraceError::Csv { line, .. } = &mut err {
                    *line += self.line_offset;
                }
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header's names, and every row's line number and fields.
    type Read = (Vec<String>, Vec<(u64, Vec<Vec<u8>>)>);

    /// Every row with its line number, read with the plain splitter where it can.
    fn rows(data: &[u8]) -> Read {
        let (mut records, header) = Records::open("t.csv", data).unwrap();
        let mut out = Vec::new();
        let mut ends = Vec::new();
        while let NextSplit::Line(line, split) = records.next_split(64, &mut ends).unwrap() {
            let fields = (0..split.count()).map(|i| split.field(i).unwrap().to_vec()).collect();
            out.push((line, fields));
        }
        let mut record = ByteRecord::new();
        while let Some(line) = records.next(&mut record).unwrap() {
            out.push((line, record.iter().map(<[u8]>::to_vec).collect()));
        }
        (header.names, out)
    }

    /// The same with the general reader only.
    fn general_rows(data: &[u8]) -> Read {
        let mut reader = general(data, true);
        let header = reader.byte_headers().unwrap().clone();
        let names = Header::from_record("t.csv", &header).unwrap().names;
        let mut out = Vec::new();
        let mut record = ByteRecord::new();
        while reader.read_byte_record(&mut record).unwrap() {
            let line = record.position().unwrap().line();
            out.push((line, record.iter().map(<[u8]>::to_vec).collect()));
        }
        (names, out)
    }

    #[test]
    fn plain_and_general_readers_agree_on_rows_and_line_numbers() {
        let cases: [&[u8]; 8] = [
            b"a,b,c\n1,2,3\n4,5,6\n",
            b"a,b,c\r\n1,2,3\r\n\r\n4, 5 ,6",
            b"\xef\xbb\xbfa,b\n1,2\n",
            b"a,b\n1,2\n\n\n3\n4,5,6,7\n",
            b"a,b\n1,2\n\"x,y\",3\n4,5\n",
            b"\"a\",b\n1,2\n3,4\n",
            b"a,b\n1,2\n\"multi\nline\",3\n4,5\n",
            b"a,b\n1,2\r3,4\n5,6\n",
        ];
        for data in cases {
            let (plain, general) = (rows(data), general_rows(data));
            let fields = |(h, r): &Read| (h.clone(), r.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>());
            assert_eq!(fields(&plain), fields(&general), "{}", String::from_utf8_lossy(data));
            let lines: Vec<u64> = plain.1.iter().map(|r| r.0).collect();
            if data.windows(2).any(|w| w == b"\r\n" || w == b"\n\n") {
                // The general reader numbers a row after a blank line, or in a CRLF file, from
                // where the previous row ended: too early. The plain reader counts real lines.
                assert!(lines == [2, 4] || lines == [2, 5, 6], "{lines:?}");
            } else {
                assert_eq!(plain, general, "{}", String::from_utf8_lossy(data));
            }
        }
    }

    #[test]
    fn commas_eight_at_a_time_agree_with_a_scan() {
        let mut state = 11u64;
        let (mut fast, mut slow) = (Vec::new(), Vec::new());
        for _ in 0..5_000 {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let len = (state >> 58) as usize % 40;
            let line: Vec<u8> =
                (0..len).map(|i| b",-+.0a\xAC\x2D"[((state >> (i % 61)) as usize + i) % 8]).collect();
            let upto = 1 + (state >> 40) as usize % 6;
            commas(&line, upto, &mut fast);
            assert!(scan(&line, upto, &mut slow));
            assert_eq!(fast, slow, "{line:?} upto {upto}");
        }
    }

    #[test]
    fn split_keeps_only_the_fields_asked_for() {
        let mut ends = Vec::new();
        assert!(scan(b"a,bb,,d", 2, &mut ends));
        let split = Split { line: b"a,bb,,d", ends: &ends };
        assert_eq!(
            (split.field(0), split.field(1), split.field(2), split.count()),
            (Some(&b"a"[..]), Some(&b"bb"[..]), None, 4)
        );
        assert!(scan(b"x", 3, &mut ends));
        assert_eq!(ends, [1]);
        assert!(!scan(b"1,\"2\"", 1, &mut ends));
        assert!(!scan(b"1,2\r3", 1, &mut ends));
    }

    #[test]
    fn lines_longer_than_a_block_are_read_whole() {
        let long = "x".repeat(3 * BLOCK);
        let data = format!("a,b\n{long},1\n2,3\n");
        let (_, out) = rows(data.as_bytes());
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1[0].len(), 3 * BLOCK);
        assert_eq!(out[1], (3, vec![b"2".to_vec(), b"3".to_vec()]));
    }

    #[test]
    fn rows_after_a_switch_keep_their_line_numbers() {
        let data = b"a,b\n1,2\n3,4\n\"x\xff,\"5\n";
        let (mut records, _) = Records::open("t.csv", &data[..]).unwrap();
        let mut record = ByteRecord::new();
        assert_eq!(records.next(&mut record).unwrap(), Some(2));
        assert_eq!(records.next(&mut record).unwrap(), Some(3));
        assert_eq!(records.next(&mut record).unwrap(), Some(4));
    }
}
