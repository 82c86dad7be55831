//! Reading an importer's CSV with the `csv` crate: the delimiter (named by a first line `sep=;`,
//! which is skipped, else sniffed from a header with no comma), the header, then each row into
//! one reused [`ByteRecord`] with the line it starts on, counted as an editor counts lines (blank
//! lines and `\r\n` line ends included; the crate itself numbers a row from where the row
//! before it ended).
//! Also [`LineReader`], the lines of a text file one at a time.

use super::TraceError;
use super::columns::Header;
use csv::ByteRecord;
use std::io::{BufRead, BufReader, Chain, Cursor, Read};

/// How much of the input is read before the CSV reader starts: what tells a JSON file given as
/// CSV by its content.
const HEAD: u64 = 1 << 18;

/// The input, with the bytes of its last block kept: the byte before where a record ended says
/// whether the record's line feed was read with it.
struct LastBlock<R> {
    input: R,
    /// Where `block` starts in the input.
    start: u64,
    block: Vec<u8>,
}

impl<R: Read> Read for LastBlock<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        // At the end of the input the last block stays: the last record ends in it.
        if n > 0 {
            self.start += self.block.len() as u64;
            self.block.clear();
            self.block.extend_from_slice(&buf[..n]);
        }
        Ok(n)
    }
}

impl<R> LastBlock<R> {
    /// The input's byte at `at`, if it is in the last block.
    fn byte(&self, at: u64) -> Option<u8> {
        let i = usize::try_from(at.checked_sub(self.start)?).ok()?;
        self.block.get(i).copied()
    }
}

/// The rows of an importer's CSV.
pub struct Records<R: Read> {
    reader: csv::Reader<LastBlock<Chain<Cursor<Vec<u8>>, R>>>,
    file: String,
    /// Lines before the header the CSV reader does not see (a `sep=;` line).
    skipped_lines: u64,
    /// The field delimiter, when it is not a comma: what it is and how it was found.
    delimiter: Option<(u8, &'static str)>,
}

/// The field delimiter of a CSV whose head is `head`, and the bytes before its header: a first
/// line `sep=X` (as spreadsheet-minded exports such as Grafana's "Download for Excel" write it)
/// names it and is skipped; else a header with no comma outside quotes but a `;` (or a tab) is
/// split on that. `None` for a comma.
fn delimiter(head: &[u8]) -> (Option<(u8, &'static str)>, usize) {
    let bom = if head.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let body = &head[bom..];
    let end = body.iter().position(|b| *b == b'\n').unwrap_or(body.len());
    let first = body[..end].strip_suffix(b"\r").unwrap_or(&body[..end]);
    if let Some(sep) = first.strip_prefix(b"sep=")
        && let [d] = sep
        && d.is_ascii()
        && !d.is_ascii_alphanumeric()
        && *d != b'"'
    {
        return (Some((*d, "from the file's `sep=` line")), (bom + end + 1).min(head.len()));
    }
    let mut quoted = false;
    let (mut commas, mut semicolons, mut tabs) = (0, 0, 0);
    for b in first {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => commas += 1,
            b';' if !quoted => semicolons += 1,
            b'\t' if !quoted => tabs += 1,
            _ => {}
        }
    }
    let sniffed = "sniffed: the header has no comma";
    match (commas, semicolons, tabs) {
        (0, s, _) if s > 0 => (Some((b';', sniffed)), 0),
        (0, 0, t) if t > 0 => (Some((b'\t', sniffed)), 0),
        _ => (None, 0),
    }
}

impl<R: Read> Records<R> {
    /// Opens `input` (named `file` in messages) and reads its header. A file whose first line is
    /// blank is empty; one whose first line opens a JSON value is refused, naming the format its
    /// content shows.
    pub fn open(file: &str, mut input: R) -> Result<(Records<R>, Header), TraceError> {
        let mut head = Vec::new();
        input
            .by_ref()
            .take(HEAD)
            .read_to_end(&mut head)
            .map_err(|source| TraceError::Io { file: file.to_string(), source })?;
        let first_line = head.split(|b| *b == b'\n').next().unwrap_or_default();
        if matches!(first_line.trim_ascii_start().first(), Some(b'{' | b'[')) {
            let what = match super::detect::detect_bytes(&head) {
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
        // The CSV reader skips blank lines: a blank first line is no header.
        if matches!(first_line, b"" | b"\r") {
            return Err(TraceError::Empty { file: file.to_string() });
        }
        let (found, skip) = delimiter(&head);
        let head = head.split_off(skip);
        if skip > 0 && matches!(head.split(|b| *b == b'\n').next(), Some(b"" | b"\r") | None) {
            return Err(TraceError::Empty { file: file.to_string() });
        }
        let input = LastBlock { input: Cursor::new(head).chain(input), start: 0, block: Vec::new() };
        // Rows may have fewer or more fields than the header: the importers name the cell.
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .delimiter(found.map_or(b',', |(d, _)| d))
            .from_reader(input);
        let header = reader.byte_headers().map_err(|e| read_error(file, e))?;
        let header = Header::from_record(file, header)?;
        let skipped_lines = u64::from(skip > 0);
        let delimiter = found.filter(|(d, _)| *d != b',');
        Ok((Records { reader, file: file.to_string(), skipped_lines, delimiter }, header))
    }

    /// What the import assumed about the file's layout, for its report: the delimiter when it is
    /// not a comma, and how it was found (`None` for a plain comma CSV).
    pub fn assumed(&self) -> Option<String> {
        let (d, how) = self.delimiter?;
        let shown = if d == b'\t' { "tab".to_string() } else { format!("`{}`", d as char) };
        Some(format!("fields separated by {shown} ({how})"))
    }

    /// Reads the next row into `record`; its line number, or `None` at the end.
    pub fn next(&mut self, record: &mut ByteRecord) -> Result<Option<u64>, TraceError> {
        let skipped = self.skipped_lines;
        let read = self.reader.read_byte_record(record).map_err(|e| match read_error(&self.file, e) {
            TraceError::Csv { file, line, message } => {
                TraceError::Csv { file, line: line + skipped, message }
            }
            e => e,
        });
        if !read? {
            return Ok(None);
        }
        // The reader has counted the line feeds up to the record's end: take off those inside
        // it (in quoted cells) and the one that ended it, if one did.
        let end = self.reader.position();
        let inside = record.as_slice().iter().filter(|b| **b == b'\n').count() as u64;
        let last = end.byte().checked_sub(1).and_then(|at| self.reader.get_ref().byte(at));
        let line = end.line().saturating_sub(inside + u64::from(last == Some(b'\n')));
        Ok(Some(line + self.skipped_lines))
    }
}

/// An error of the CSV reader: the input's own (as when the file is read), or the CSV's.
fn read_error(file: &str, e: csv::Error) -> TraceError {
    let line = e.position().map_or(0, csv::Position::line);
    let message = e.to_string();
    match e.into_kind() {
        csv::ErrorKind::Io(source) => TraceError::Io { file: file.to_string(), source },
        _ => TraceError::Csv { file: file.to_string(), line, message },
    }
}

/// Lines of a byte stream, each without its `\n` (nor a `\r` before it), with its number from 1.
pub struct LineReader<R> {
    input: BufReader<R>,
    /// The last line read, with its `\n`.
    line: Vec<u8>,
    number: u64,
}

impl<R: Read> LineReader<R> {
    /// A reader over `input`.
    pub fn new(input: R) -> LineReader<R> {
        LineReader { input: BufReader::with_capacity(1 << 16, input), line: Vec::new(), number: 0 }
    }

    /// The next line and its number, or `None` at the end of the input.
    pub fn next_line(&mut self) -> std::io::Result<Option<(u64, &[u8])>> {
        self.line.clear();
        if self.input.read_until(b'\n', &mut self.line)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        Ok(Some((self.number, line.strip_suffix(b"\r").unwrap_or(line))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows' line numbers and fields.
    type Rows = Vec<(u64, Vec<String>)>;

    /// The header's names, and every row's line number and fields.
    fn rows(data: &[u8]) -> (Vec<String>, Rows) {
        let (mut records, header) = Records::open("t.csv", data).unwrap();
        let mut out = Vec::new();
        let mut record = ByteRecord::new();
        while let Some(line) = records.next(&mut record).unwrap() {
            out.push((line, record.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect()));
        }
        (header.names, out)
    }

    #[test]
    fn rows_are_numbered_by_the_line_they_start_on() {
        let row =
            |line: u64, fields: &[&str]| (line, fields.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        let cases: [(&[u8], Rows); 6] = [
            (b"a,b\n1,2\n3,4\n", vec![row(2, &["1", "2"]), row(3, &["3", "4"])]),
            // Line ends of \r\n, blank lines and a last line without a line end.
            (
                b"a,b\r\n1,2\r\n\r\n\n4, 5 \r\n6,7",
                vec![row(2, &["1", "2"]), row(5, &["4", " 5 "]), row(6, &["6", "7"])],
            ),
            // A quoted cell over two lines, then a quoted cell with a comma.
            (
                b"a,b\n1,2\n\"multi\nline\",3\n\"x,y\",4\n",
                vec![row(2, &["1", "2"]), row(3, &["multi\nline", "3"]), row(5, &["x,y", "4"])],
            ),
            // A lone \r ends a row too (old Mac line ends).
            (b"a,b\n1,2\r3,4\n5,6\n", vec![row(2, &["1", "2"]), row(2, &["3", "4"]), row(3, &["5", "6"])]),
            // Rows of other lengths than the header's.
            (b"\xef\xbb\xbfa,b\n1\n2,3,4\n", vec![row(2, &["1"]), row(3, &["2", "3", "4"])]),
            (b"\"a\",\"b\"\n1,2\n", vec![row(2, &["1", "2"])]),
        ];
        for (data, expected) in cases {
            let (names, read) = rows(data);
            assert_eq!(names, ["a", "b"], "{}", String::from_utf8_lossy(data));
            assert_eq!(read, expected, "{}", String::from_utf8_lossy(data));
        }
    }

    #[test]
    fn long_inputs_keep_their_line_numbers_across_blocks() {
        let mut data = String::from("a,b\n");
        for i in 0..40_000 {
            data.push_str(if i % 3 == 0 { "\r\n" } else { "" });
            data.push_str(&format!("{i},\"{}\"\n", "x".repeat(i % 50)));
        }
        let (_, read) = rows(data.as_bytes());
        let mut line = 1;
        for (i, (n, fields)) in read.iter().enumerate() {
            line += 1 + u64::from(i % 3 == 0);
            assert_eq!((*n, fields[0].as_str()), (line, i.to_string().as_str()));
        }
        assert_eq!(read.len(), 40_000);
    }

    #[test]
    fn a_sep_line_or_a_header_without_commas_sets_the_delimiter() {
        // Grafana's "Download for Excel": BOM, `sep=;`, `;` between quoted fields, \r\n.
        let data = b"\xef\xbb\xbfsep=;\r\n\"Series\";\"Time\";\"Value\"\r\n\"p95\";\"2020-06-01T12:00:00+02:00\";0.25\r\n\"p95\";\"x;y\";null";
        let (mut records, header) = Records::open("t.csv", &data[..]).unwrap();
        assert_eq!(header.names, ["Series", "Time", "Value"]);
        assert_eq!(records.assumed().unwrap(), "fields separated by `;` (from the file's `sep=` line)");
        let mut record = ByteRecord::new();
        assert_eq!(records.next(&mut record).unwrap(), Some(3));
        assert_eq!(&record[2], b"0.25");
        assert_eq!(records.next(&mut record).unwrap(), Some(4));
        assert_eq!(&record[1], b"x;y");
        let (names, read) = rows(b"a;\"b,c\"\n1;2\n");
        assert_eq!(
            (names, read[0].1.clone()),
            (vec!["a".to_string(), "b,c".into()], vec!["1".into(), "2".into()])
        );
        let (records, _) = Records::open("t.csv", &b"a\tb\n1\t2\n"[..]).unwrap();
        assert_eq!(records.assumed().unwrap(), "fields separated by tab (sniffed: the header has no comma)");
        let (records, _) = Records::open("t.csv", &b"sep=,\na,b\n1,2\n"[..]).unwrap();
        assert_eq!(records.assumed(), None);
        let (records, _) = Records::open("t.csv", &b"a,b;c\n1,2\n"[..]).unwrap();
        assert_eq!(records.assumed(), None);
        let e = Records::open("t.csv", &b"sep=;\n\n"[..]).err().unwrap();
        assert!(matches!(e, TraceError::Empty { .. }), "{e}");
    }

    #[test]
    fn blank_and_json_first_lines_are_refused() {
        for data in [&b""[..], b"\n1,2\n", b"\r\nx\n"] {
            let e = Records::open("t.csv", data).err().unwrap();
            assert!(matches!(e, TraceError::Empty { .. }), "{e}");
        }
        let e = Records::open("t.csv", &b"  {\"resourceSpans\": []}"[..]).err().unwrap().to_string();
        assert!(e.contains("OpenTelemetry OTLP JSON traces (detected from the content), not CSV"), "{e}");
    }

    #[test]
    fn lines_lose_their_line_ends() {
        let mut lines = LineReader::new(&b"1\n22\r\n\n4"[..]);
        let mut read = Vec::new();
        while let Some((n, line)) = lines.next_line().unwrap() {
            read.push((n, line.to_vec()));
        }
        assert_eq!(read, [(1, b"1".to_vec()), (2, b"22".to_vec()), (3, Vec::new()), (4, b"4".to_vec())]);
    }
}
