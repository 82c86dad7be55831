//! A JSON pull scanner for the export importers: walks a document in place, hands out the
//! values an importer asks for (strings borrowed from the text, numbers parsed straight from
//! the bytes) and skips everything else without building it. Exports are large arrays of small
//! records of which an importer needs a few fields, so skipping fast (strings by `memchr`, nested
//! values by bracket depth) is most of the work; nothing is allocated per record.
//!
//! Skipped values are checked only for balance (brackets and string quotes), not parsed: an
//! export that is malformed inside a field no importer reads still imports. Everything read is
//! checked, and every error names the line and column and the shape the format needs; a file
//! that ends inside a value says it looks truncated.

use super::TraceError;
use std::borrow::Cow;

/// A position in a JSON text, with the file's name and shape for messages.
pub struct Cursor<'a> {
    /// The text as given, so that a string between two quotes is sliced out without checking
    /// its UTF-8 again (the quotes are ASCII, so both ends are character boundaries).
    src: &'a str,
    text: &'a [u8],
    pos: usize,
    file: &'a str,
    shape: &'a str,
    quotes: QuoteFinder,
}

/// A scalar as written: exports put numbers in strings (protobuf JSON's 64-bit integers,
/// Prometheus' values) and tags may be booleans.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar<'a> {
    /// A JSON number, as written.
    Number(&'a str),
    /// A JSON string, unescaped.
    Text(Cow<'a, str>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

impl Scalar<'_> {
    /// The value as written, for messages.
    pub fn show(&self) -> String {
        match self {
            Scalar::Number(n) => n.to_string(),
            Scalar::Text(s) => format!("{s:?}"),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Null => "null".into(),
        }
    }
    /// The value as text (numbers and booleans as written); `None` for null.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Scalar::Number(n) => Some(Cow::Borrowed(n)),
            Scalar::Text(s) => Some(Cow::Borrowed(s)),
            Scalar::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            Scalar::Null => None,
        }
    }
    /// The value as an exact integer (a whole number, or a string of one).
    pub fn integer(&self) -> Option<i64> {
        match self {
            Scalar::Number(n) => parse_integer(n.as_bytes()).or_else(|| {
                let v = parse_number(n.as_bytes())?;
                (v.fract() == 0.0 && v.abs() < 9.0e18).then_some(v as i64)
            }),
            Scalar::Text(s) => parse_integer(s.as_bytes().trim_ascii()),
            _ => None,
        }
    }
    /// The value as a number (a JSON number, or a string holding one, `NaN` and `Inf` included).
    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Number(n) => parse_number(n.as_bytes()),
            Scalar::Text(s) => parse_number(s.as_bytes().trim_ascii()),
            _ => None,
        }
    }
}

/// Which bytes end a bare literal (number, `true`, `null`): one table look a byte.
static ENDS_LITERAL: [bool; 256] = byte_set(b",]} \n\r\t:");

/// Which bytes matter when skipping a nested value: quotes and brackets.
static NESTING: [bool; 256] = byte_set(b"\"{}[]");

const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        set[bytes[i] as usize] = true;
        i += 1;
    }
    set
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text` (a leading byte-order mark is skipped).
    pub fn new(file: &'a str, text: &'a str, shape: &'a str) -> Cursor<'a> {
        let src = text;
        let text = text.as_bytes();
        let pos = if text.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
        Cursor { src, text, pos, file, shape, quotes: QuoteFinder::new() }
    }

    /// The error at the cursor: line and column, what is wrong, and the shape expected. Kept
    /// out of line (cold) so the readers that may fail stay small.
    #[cold]
    #[inline(never)]
    pub fn error(&self, what: &str) -> TraceError {
        let truncated = self.pos >= self.text.len();
        self.located(if truncated { "the file ends early (truncated?)" } else { what })
    }

    /// The error at the cursor saying `what` even at the end of the text (for what is wrong
    /// with a value read whole, such as an object without a required member).
    #[cold]
    #[inline(never)]
    fn located(&self, what: &str) -> TraceError {
        let upto = &self.text[..self.pos.min(self.text.len())];
        let line = 1 + memchr::memchr_iter(b'\n', upto).count();
        let column = 1 + upto.len() - upto.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        TraceError::Format {
            file: self.file.to_string(),
            message: format!("line {line}, column {column}: {what}; expected {}", self.shape),
        }
    }

    #[inline(always)]
    fn ws(&mut self) {
        // Exports written compactly have no white space between tokens: one look decides.
        if self.text.get(self.pos).is_some_and(|b| *b > b' ') {
            return;
        }
        while let Some(b) = self.text.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.pos += 1;
        }
    }

    /// The next byte that is not white space, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.text.get(self.pos).copied()
    }

    /// Reads every document of the text (one, or several back to back: paged exports, JSON
    /// lines), calling `doc` with each one's index; a text with none is [`TraceError::Empty`].
    pub fn documents(
        &mut self,
        mut doc: impl FnMut(&mut Self, usize) -> Result<(), TraceError>,
    ) -> Result<usize, TraceError> {
        let mut n = 0;
        while !self.at_end() {
            doc(self, n)?;
            n += 1;
        }
        if n == 0 {
            return Err(TraceError::Empty { file: self.file.to_string() });
        }
        Ok(n)
    }

    /// Reads an object that must have member `name`, calling `read` at its value and skipping
    /// the other members; an object without it is an error naming it.
    pub fn member(
        &mut self,
        name: &str,
        mut read: impl FnMut(&mut Self) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        let mut found = false;
        self.fields(&[name.as_bytes()], |c, _| {
            found = true;
            read(c)
        })?;
        if found { Ok(()) } else { Err(self.located(&format!("missing field `{name}`"))) }
    }

    /// Reads `[{"key":"...","value":...},...]` (OTLP attributes, Jaeger tags) onto `out`, each
    /// value read by `value`; keys are kept as written.
    #[inline]
    pub fn key_values(
        &mut self,
        out: &mut Vec<(&'a [u8], Scalar<'a>)>,
        mut value: impl FnMut(&mut Self) -> Result<Scalar<'a>, TraceError>,
    ) -> Result<(), TraceError> {
        self.array(|c, _| {
            let (mut key, mut v): (&[u8], Scalar) = (b"", Scalar::Null);
            c.fields(&[b"key", b"value"], |c, field| {
                if field == 0 {
                    key = c.raw_string()?;
                } else {
                    v = value(c)?;
                }
                Ok(())
            })?;
            out.push((key, v));
            Ok(())
        })
        .map(drop)
    }

    /// The byte offset of the cursor (for [`seek`](Self::seek)).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves the cursor back (or on) to an offset from [`position`](Self::position).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// Whether only white space is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    #[inline]
    fn eat(&mut self, b: u8, what: &str) -> Result<(), TraceError> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    /// Reads an object, calling `member` with each key (as written, unescaped keys only matter
    /// here) and the cursor at its value, which `member` must read or [`skip`](Self::skip).
    #[inline]
    pub fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a [u8]) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        self.members(|c| {
            let key = c.raw_string()?;
            c.eat(b':', "expected `:` after a key")?;
            member(c, key)
        })
    }

    /// Reads an object, matching each key in place against `names` (as written: a key with an
    /// escape matches none) without reading it as a string: calls `member` with the index of the
    /// name and the cursor at its value, which `member` must read; any other member's value is
    /// skipped unread.
    #[inline]
    pub fn fields(
        &mut self,
        names: &[&[u8]],
        mut member: impl FnMut(&mut Self, usize) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        self.members(|c| {
            let known = c.known_key(names);
            if known.is_none() {
                c.raw_string()?;
            }
            c.eat(b':', "expected `:` after a key")?;
            match known {
                Some(i) => member(c, i),
                None => c.skip(),
            }
        })
    }

    /// At a key's opening quote: the index of the name of `names` the key is, with the cursor
    /// moved past its closing quote; `None` (the cursor not moved) for any other key.
    #[inline(always)]
    fn known_key(&mut self, names: &[&[u8]]) -> Option<usize> {
        let rest = &self.text[self.pos + 1..];
        let i = names.iter().position(|n| rest.get(n.len()) == Some(&b'"') && rest.starts_with(n))?;
        self.pos += names[i].len() + 2;
        Some(i)
    }

    /// Reads an object's braces and commas, calling `member` at each member's key (an opening
    /// quote) to read the key and its value.
    #[inline(always)]
    fn members(
        &mut self,
        mut member: impl FnMut(&mut Self) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        self.eat(b'{', "expected an object `{`")?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key in quotes"));
            }
            member(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected `,` or `}` in an object")),
            }
        }
    }

    /// Reads an array, calling `element` with each element's index and the cursor at it;
    /// returns how many there were.
    #[inline]
    pub fn array(
        &mut self,
        mut element: impl FnMut(&mut Self, usize) -> Result<(), TraceError>,
    ) -> Result<usize, TraceError> {
        self.eat(b'[', "expected an array `[`")?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let mut i = 0;
        loop {
            element(self, i)?;
            i += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(i);
                }
                _ => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    /// A string's bytes as written between the quotes (escapes left in).
    #[inline(always)]
    pub fn raw_string(&mut self) -> Result<&'a [u8], TraceError> {
        let (start, end, _) = self.string_span()?;
        Ok(&self.text[start..end])
    }

    /// Reads a string: where its content starts and ends, and whether it has escapes. Inlined
    /// into every reader: called out of line, saving and restoring registers around the vector
    /// search cost as much as the search itself (18 strings a span in OTLP).
    #[inline(always)]
    fn string_span(&mut self) -> Result<(usize, usize, bool), TraceError> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string"));
        }
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            match self.quotes.find(&self.text[self.pos..]) {
                Some(i) if self.text[self.pos + i] == b'"' => {
                    let end = self.pos + i;
                    self.pos = end + 1;
                    return Ok((start, end, escaped));
                }
                Some(i) => {
                    escaped = true;
                    self.pos += i + 2;
                    if self.pos > self.text.len() {
                        self.pos = self.text.len();
                        return Err(self.error("an unterminated string"));
                    }
                }
                None => {
                    self.pos = self.text.len();
                    return Err(self.error("an unterminated string"));
                }
            }
        }
    }

    /// A string, unescaped (borrowed unless it has escapes).
    #[inline]
    pub fn string(&mut self) -> Result<Cow<'a, str>, TraceError> {
        let at = self.pos;
        let (start, end, escaped) = self.string_span()?;
        if !escaped {
            return Ok(Cow::Borrowed(&self.src[start..end]));
        }
        serde_json::from_slice::<String>(&self.text[start - 1..end + 1]).map(Cow::Owned).map_err(|_| {
            self.pos = self.ws_from(at);
            self.error("a string with a bad escape")
        })
    }

    fn ws_from(&self, mut at: usize) -> usize {
        while matches!(self.text.get(at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            at += 1;
        }
        at
    }

    /// A bare literal's bytes (a number, `true`, `false`, `null`). Every literal an importer
    /// reads is inside an array or object, so one that runs to the end of the text was cut off.
    #[inline]
    fn literal(&mut self) -> Result<&'a [u8], TraceError> {
        self.ws();
        let start = self.pos;
        while self.text.get(self.pos).is_some_and(|b| !ENDS_LITERAL[usize::from(*b)]) {
            self.pos += 1;
        }
        if self.pos >= self.text.len() {
            return Err(self.error("the file ends early (truncated?)"));
        }
        Ok(&self.text[start..self.pos])
    }

    /// Any scalar (a number, string, boolean or null); an object or array is an error.
    #[inline]
    pub fn scalar(&mut self) -> Result<Scalar<'a>, TraceError> {
        match self.peek() {
            Some(b'"') => Ok(Scalar::Text(self.string()?)),
            Some(b'{' | b'[') | None => Err(self.error("expected a number, a string, true, false or null")),
            Some(_) => {
                let at = self.pos;
                let lit = self.literal()?;
                match lit {
                    b"true" => Ok(Scalar::Bool(true)),
                    b"false" => Ok(Scalar::Bool(false)),
                    b"null" => Ok(Scalar::Null),
                    // A number's text (parsed when asked for: [`Scalar::integer`], [`Scalar::number`]).
                    // ASCII, so both ends are character boundaries: sliced without a UTF-8 check.
                    _ if lit.first().is_some_and(|b| *b == b'-' || b.is_ascii_digit()) && lit.is_ascii() => {
                        Ok(Scalar::Number(&self.src[self.pos - lit.len()..self.pos]))
                    }
                    _ => {
                        self.pos = at;
                        Err(self.error("expected a number, a string, true, false or null"))
                    }
                }
            }
        }
    }

    /// A JSON number (not in a string); `null` is `None`.
    #[inline]
    pub fn number_or_null(&mut self) -> Result<Option<f64>, TraceError> {
        self.ws();
        let at = self.pos;
        let lit = self.literal()?;
        if lit == b"null" {
            return Ok(None);
        }
        match lit.first() {
            Some(b'-' | b'0'..=b'9') => {}
            _ => {
                self.pos = at;
                return Err(self.error("expected a number"));
            }
        }
        parse_number(lit).map(Some).ok_or_else(|| {
            self.pos = at;
            self.error("expected a number")
        })
    }

    /// A JSON number (not in a string).
    #[inline]
    pub fn number(&mut self) -> Result<f64, TraceError> {
        let at = self.pos;
        self.number_or_null()?.ok_or_else(|| {
            self.pos = at;
            self.ws();
            self.error("expected a number, found null")
        })
    }

    /// Skips one value of any kind, checking only that its brackets and quotes balance.
    pub fn skip(&mut self) -> Result<(), TraceError> {
        match self.peek() {
            Some(b'"') => self.raw_string().map(drop),
            // `{}` and `[]` (a closing bracket is its opening one + 2 in ASCII) at one look.
            Some(open @ (b'{' | b'[')) if self.text.get(self.pos + 1) == Some(&(open + 2)) => {
                self.pos += 2;
                Ok(())
            }
            Some(b'{' | b'[') => self.skip_nested(),
            Some(_) => {
                let at = self.pos;
                if self.literal()?.is_empty() {
                    self.pos = at;
                    return Err(self.error("expected a value"));
                }
                Ok(())
            }
            None => Err(self.error("expected a value")),
        }
    }

    /// Skips an object or array by counting brackets, jumping over strings and over the bytes
    /// between (numbers, commas, colons) by table.
    fn skip_nested(&mut self) -> Result<(), TraceError> {
        let mut depth = 0usize;
        while let Some(&b) = self.text.get(self.pos) {
            match b {
                b'"' => {
                    self.raw_string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                _ => {
                    self.pos += 1;
                    while self.text.get(self.pos).is_some_and(|b| !NESTING[usize::from(*b)]) {
                        self.pos += 1;
                    }
                    continue;
                }
            }
            self.pos += 1;
        }
        Err(self.error("the file ends early (truncated?)"))
    }
}

/// Finds the first `"` or `\\` of a slice: 16 bytes at a time with SSE2 (part of every x86-64
/// processor) through `memchr`'s safe vector searcher, searching the rest of the document rather
/// than the string alone so that a short string costs one vector compare; elsewhere `memchr2`.
#[derive(Clone, Copy)]
struct QuoteFinder {
    #[cfg(target_arch = "x86_64")]
    two: memchr::arch::x86_64::sse2::memchr::Two,
}

impl QuoteFinder {
    fn new() -> QuoteFinder {
        QuoteFinder {
            #[cfg(target_arch = "x86_64")]
            two: memchr::arch::x86_64::sse2::memchr::Two::new(b'"', b'\\')
                .expect("SSE2 is part of every x86-64 processor"),
        }
    }

    #[inline(always)]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        return self.two.find(hay);
        #[cfg(not(target_arch = "x86_64"))]
        return memchr::memchr2(b'"', b'\\', hay);
    }
}

/// Powers of ten exactly representable as `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// A whole decimal number (optional sign), exactly; `None` for anything else or an overflow.
#[inline]
pub fn parse_integer(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let v = super::columns::parse_digits(digits)?;
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// A decimal number (`-12.5`, `1e-3`, `1717243200.781`), or `NaN`/`Inf` as Prometheus writes
/// them; correctly rounded. Short numbers (up to 15 significant digits and a small exponent, as
/// exports write them) take an exact fast path; others go through the standard parser.
#[inline]
pub fn parse_number(s: &[u8]) -> Option<f64> {
    let mut i = 0;
    let neg = match s.first()? {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mant: u64 = 0;
    let mut digits = 0u32;
    let mut exp: i32 = 0;
    let int_start = i;
    while let Some(&b) = s.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        mant = mant.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        digits += u32::from(mant != 0);
        i += 1;
    }
    let mut any = i > int_start;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while let Some(&b) = s.get(i) {
            if !b.is_ascii_digit() {
                break;
            }
            mant = mant.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            digits += u32::from(mant != 0);
            exp -= 1;
            i += 1;
        }
        any |= i > frac_start;
    }
    if !any {
        return slow(s);
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        let eneg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i32 = 0;
        while let Some(&b) = s.get(i) {
            if !b.is_ascii_digit() || e > 10_000 {
                break;
            }
            e = e * 10 + i32::from(b - b'0');
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += if eneg { -e } else { e };
    }
    if i != s.len() {
        return slow(s);
    }
    if digits > 15 || !(-22..=22).contains(&exp) {
        return slow(s);
    }
    let m = mant as f64;
    let v = if exp >= 0 { m * POW10[exp as usize] } else { m / POW10[(-exp) as usize] };
    Some(if neg { -v } else { v })
}

#[cold]
fn slow(s: &[u8]) -> Option<f64> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_exactly_as_the_standard_parser() {
        for t in [
            "0",
            "-0",
            "1",
            "0.2485",
            "1717243200.781",
            "1435781430.781",
            "1e-3",
            "2.5E+2",
            "123456789012345678",
            "0.1",
            "3.0",
            "-12.75",
            "9007199254740993",
            "1.7976931348623157e308",
            "5e-324",
            "NaN",
            "+Inf",
            "-Inf",
            "1717243200000.0",
            "00012",
            "0.000001234",
        ] {
            let want: f64 = t.parse().unwrap();
            let got = parse_number(t.as_bytes()).unwrap();
            assert!(got == want || (got.is_nan() && want.is_nan()), "{t}: {got} != {want}");
        }
        for bad in ["", "-", ".", "1.2.3", "1e", "abc", "1,5"] {
            assert_eq!(parse_number(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(parse_integer(b"1717243200275431914"), Some(1_717_243_200_275_431_914));
        assert_eq!(parse_integer(b"-5"), Some(-5));
        assert_eq!(parse_integer(b"99999999999999999999"), None);
        assert_eq!(parse_integer(b"1.5"), None);
    }

    #[test]
    fn quotes_and_backslashes_are_found_at_every_offset() {
        let f = QuoteFinder::new();
        for n in 0..70 {
            for c in [b'"', b'\\'] {
                let mut v = vec![b'a'; n];
                v.push(c);
                v.extend_from_slice(b"zz\"");
                assert_eq!(f.find(&v), Some(n), "{n} {c}");
            }
            assert_eq!(f.find(&vec![0xC3u8; n]), None);
        }
        assert_eq!(f.find("é\"".as_bytes()), Some(2));
        let mut c = Cursor::new("f.json", r#""abc\\"#, "a test");
        assert!(c.raw_string().unwrap_err().to_string().contains("ends early"));
    }

    #[test]
    fn objects_arrays_and_skipping() {
        let text =
            r#" {"a": [1, 2.5, "x\"y", null, true], "skip": {"n": [{"]": "}"}], "s": "\\"}, "b": "é"} "#;
        let mut c = Cursor::new("f.json", text, "a test");
        let (mut nums, mut b) = (Vec::new(), String::new());
        c.object(|c, key| match key {
            b"a" => c
                .array(|c, _| {
                    nums.push(c.scalar()?);
                    Ok(())
                })
                .map(drop),
            b"b" => {
                b = c.string()?.into_owned();
                Ok(())
            }
            _ => c.skip(),
        })
        .unwrap();
        assert!(c.at_end());
        assert_eq!(b, "é");
        assert_eq!(nums[0].integer(), Some(1));
        assert_eq!(nums[1].number(), Some(2.5));
        assert_eq!(nums[2], Scalar::Text(Cow::Owned("x\"y".into())));
        assert_eq!((nums[3].clone(), nums[4].clone()), (Scalar::Null, Scalar::Bool(true)));
    }

    /// Reads `text` with `fields(["a", "b"])`, collecting what each known key held.
    fn read_fields(text: &str) -> Result<Vec<(usize, String)>, String> {
        let mut c = Cursor::new("f.json", text, "a test");
        let mut got = Vec::new();
        c.fields(&[b"a", br#"b\"c"#], |c, i| {
            got.push((i, c.scalar()?.show()));
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        if c.at_end() { Ok(got) } else { Err("not at the end".into()) }
    }

    #[test]
    fn fields_match_known_keys_in_place_and_skip_the_rest() {
        let text = r#"{"ab": 1, "x": {"a": [1, {"a": "}"}], "s": "\\"}, "a": "v\"w", "": [[], {}],
            "b\"c": 2.5, "a\u0062": 3, "y": [1, -2e3, "]", null, true, false, {"z": {}}], "a" : null}"#;
        assert_eq!(
            read_fields(text).unwrap(),
            vec![(0, r#""v\"w""#.into()), (1, "2.5".into()), (0, "null".into())]
        );
        assert_eq!(read_fields("{}").unwrap(), vec![]);
        assert_eq!(read_fields(" { \"b\" : 1 } ").unwrap(), vec![]);
        // A known name that is only the start of a key, or a key with an escape, is another key.
        assert_eq!(read_fields(r#"{"ax": 1, "\u0061": 2, "a\"": 3}"#).unwrap(), vec![]);
        let mut c = Cursor::new("f.json", r#"{"log": {"entries": [1]}, "log2": 0}"#, "a test");
        let mut n = 0;
        c.member("log", |c| c.member("entries", |c| c.array(|c, _| c.number().map(|_| n += 1)).map(drop)))
            .unwrap();
        assert_eq!(n, 1);
        let e = Cursor::new("f.json", "{\"logs\": {}}\n", "a test").member("log", |c| c.skip()).unwrap_err();
        assert!(e.to_string().contains("missing field `log`"), "{e}");
        // An object that ends the file is complete: what is wrong is the member it lacks.
        let e = Cursor::new("f.json", "{\"logs\": {}}", "a test").member("log", |c| c.skip()).unwrap_err();
        assert_eq!(e.to_string(), "f.json: line 1, column 13: missing field `log`; expected a test");
    }

    #[test]
    fn fields_errors_are_located() {
        let cases = [
            ("{\"x\": {\"a\": [1, 2}", "line 1, column 19: the file ends early (truncated?)"),
            ("{\"x\": \"abc", "line 1, column 11: the file ends early (truncated?)"),
            ("{\"a\": 1,\n \"x", "line 2, column 4: the file ends early (truncated?)"),
            ("{\"a\"", "line 1, column 5: the file ends early (truncated?)"),
            ("{\"a\": 1 \"b\": 2}", "line 1, column 9: expected `,` or `}` in an object"),
            ("{\"a\" 1}", "line 1, column 6: expected `:` after a key"),
            ("{\"x\" 1}", "line 1, column 6: expected `:` after a key"),
            ("{a: 1}", "line 1, column 2: expected a key in quotes"),
            ("[1]", "line 1, column 1: expected an object `{`"),
            ("{\"a\": [1]}", "line 1, column 7: expected a number, a string, true, false or null"),
            ("{\"x\": ,}", "line 1, column 7: expected a value"),
        ];
        for (text, want) in cases {
            let e = read_fields(text).unwrap_err();
            assert_eq!(e, format!("f.json: {want}; expected a test"), "{text}");
        }
    }

    #[test]
    fn errors_name_line_column_and_truncation() {
        let mut c = Cursor::new("f.json", "{\n  \"a\": [1, 2", "a test");
        let e = c.object(|c, _| c.array(|c, _| c.number().map(drop)).map(drop)).unwrap_err().to_string();
        assert_eq!(e, "f.json: line 2, column 13: the file ends early (truncated?); expected a test");
        let mut c = Cursor::new("f.json", "{\"a\": [1, x]}", "a test");
        let e = c.object(|c, _| c.array(|c, _| c.number().map(drop)).map(drop)).unwrap_err().to_string();
        assert_eq!(e, "f.json: line 1, column 11: expected a number; expected a test");
        let mut c = Cursor::new("f.json", "{\"a\": {\"b\": [1, 2}", "a test");
        assert!(c.object(|c, _| c.skip()).unwrap_err().to_string().contains("ends early"));
        let mut c = Cursor::new("f.json", "[null]", "a test");
        let e = c.array(|c, _| c.number().map(drop)).unwrap_err().to_string();
        assert!(e.contains("column 2: expected a number, found null"), "{e}");
    }
}
