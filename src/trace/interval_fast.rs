//! Interval rows read straight from the reader's buffer, by a column layout fixed once from the
//! header: each needed field parsed in place (the time, plain decimals), the others skipped, no
//! copy and no allocation per row. It reads only what it can read exactly as the general path
//! does, bit for bit: epoch integers, `YYYY-MM-DD[T t ]HH:MM:SS[.fraction][Z z ±HH:MM]` (the date
//! converted once per day) and unsigned decimals of up to 19 digits whose value is exactly
//! `mantissa / 10^k` with a mantissa below 2^53 (one correctly rounded division, as the general
//! parser rounds). Anything else (a sign, an exponent, spaces, a quote, a short row, ...) is
//! declined, and the general path reads that row with its own messages.

use super::columns::digit_run;
use super::row_shapes::{NEEDED, Pattern, RowShapes};
use super::timestamp::{Resolved, parse_datetime};

/// Most fields a row may be read up to (the last column needed, plus one).
pub(super) const MAX_FIELDS: usize = 16;

/// A row's numbers by column, with room past the last for a group of four converted at once
/// (see [`RowShapes`]).
pub(super) type Values = [f64; MAX_FIELDS + 3];

/// A dense row whose numbers end before this many bytes is read from a fixed window of the
/// buffer, without a bounds check per number (see [`FastRows::read_dense`]).
const WINDOW: usize = 128;

/// Powers of ten, exact as `u64` up to 10^19.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// Powers of ten, exact as `f64` up to 10^22 (only those up to 10^19 are used).
pub(super) const POW10_F64: [f64; 20] = {
    let mut p = [1.0f64; 20];
    let mut k = 1;
    while k < 20 {
        p[k] = p[k - 1] * 10.0;
        k += 1;
    }
    p
};

/// What a field of the layout holds.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Op {
    Skip,
    Time,
    Number,
}

/// How the time column is written, as far as this reader reads it.
#[derive(Copy, Clone)]
enum Time {
    /// Whole epoch units of this many µs.
    Epoch(i64),
    /// Whole epoch nanoseconds.
    EpochNs,
    /// A date-time; `offset_s` applies when it has no zone.
    Datetime { offset_s: i64 },
}

/// A row read: its time (absolute µs), where its time cell is, and its length with the line
/// end; its numbers are in [`FastRows::values`].
pub(super) struct FastRow {
    pub(super) t: i64,
    pub(super) time_cell: (usize, usize),
    pub(super) len: usize,
}

/// The column layout, the last date read and the last row's numbers.
pub(super) struct FastRows {
    ops: [Op; MAX_FIELDS],
    upto: usize,
    /// The time is the first field and every other one up to `upto` a number (the usual
    /// layout, read without looking at `ops`).
    dense: bool,
    time: Time,
    /// The last date's ten bytes and its midnight in µs.
    day: Option<([u8; 10], i64)>,
    /// The last date-time cell's form, read without parsing while the hour lasts.
    form: Option<TimeForm>,
    /// Forms learned and cells read by one (wrapping: only a heuristic): a file whose cells
    /// rarely repeat a form (hourly rows, varying fractions) stops learning them.
    forms: u32,
    form_hits: u32,
    /// The numbers of the last row read, by column (other entries are stale).
    pub(super) values: Values,
    /// The shapes of the last two differently written numbers read in each column of the
    /// dense layout, the latest first.
    shapes: [[Shape; 2]; MAX_FIELDS],
    /// The shapes of the last few differently written rows of the dense layout.
    rows: RowShapes,
}

impl FastRows {
    /// The layout for a time column `time` read as `format` and the numeric columns `numbers`;
    /// `None` when a row would be read past [`MAX_FIELDS`] fields or a column is both.
    pub(super) fn new(
        time: usize,
        numbers: impl Iterator<Item = usize>,
        format: Resolved,
        offset_s: i64,
    ) -> Option<FastRows> {
        let mut ops = [Op::Skip; MAX_FIELDS];
        *ops.get_mut(time)? = Op::Time;
        let mut upto = time + 1;
        for i in numbers {
            match ops.get_mut(i)? {
                Op::Time => return None,
                op => *op = Op::Number,
            }
            upto = upto.max(i + 1);
        }
        let dense = time == 0 && ops[1..upto].iter().all(|op| *op == Op::Number);
        let time = match format {
            Resolved::Epoch(unit) => Time::Epoch(unit),
            Resolved::EpochNs => Time::EpochNs,
            Resolved::Datetime => Time::Datetime { offset_s },
        };
        let shapes = [[Shape::NONE; 2]; MAX_FIELDS];
        let rows = RowShapes::new(upto - 1)?;
        Some(FastRows {
            ops,
            upto,
            dense,
            time,
            day: None,
            form: None,
            forms: 0,
            form_hits: 0,
            values: [0.0; MAX_FIELDS + 3],
            shapes,
            rows,
        })
    }

    /// Column `i` of the last row read (every column it reads is below [`MAX_FIELDS`]: the
    /// index is wrapped rather than checked).
    #[inline]
    pub(super) fn value(&self, i: usize) -> f64 {
        self.values[i % MAX_FIELDS]
    }

    /// Columns `first..first + 4` of the last row read (wrapped as [`value`](Self::value)
    /// wraps; the values have room past the last column).
    #[inline]
    pub(super) fn run(&self, first: usize) -> [f64; 4] {
        let values: &[f64; MAX_FIELDS + 3] = &self.values;
        let at = first % MAX_FIELDS;
        [values[at], values[at + 1], values[at + 2], values[at + 3]]
    }

    /// The row at the start of `b`, or `None` when it is not one this reader reads exactly (or
    /// does not end in `b`).
    #[inline]
    pub(super) fn read(&mut self, b: &[u8]) -> Option<FastRow> {
        let (t, time_cell, end, line_ends) = if self.dense { self.read_dense(b)? } else { self.read_any(b)? };
        let len = if line_ends { end + 1 } else { line_end(b, end)? };
        Some(FastRow { t, time_cell, len })
    }

    /// [`read`](Self::read) for the dense layout: time, where its cell is, where the last field
    /// ends and whether a line feed is known to follow. A row written as one of the last few
    /// ([`RowShapes`]) is read by its shape, any other by [`numbers`](Self::numbers).
    #[inline]
    fn read_dense(&mut self, b: &[u8]) -> Option<(i64, (usize, usize), usize, bool)> {
        let (t, i) = self.time(b, 0)?;
        if b.get(i) != Some(&b',') {
            return None;
        }
        if let Some(span) = b.get(i..).and_then(<[u8]>::first_chunk::<NEEDED>)
            && let Some((end, line_ends)) = self.rows.read(span, &mut self.values)
        {
            return Some((t, (0, i), i + end, line_ends));
        }
        Some((t, (0, i), self.numbers(b, i)?, false))
    }

    /// The numbers of a dense row after the comma at `i`, not read by shape: where the last
    /// one ends. With [`WINDOW`] bytes and a word buffered, they are read from words at
    /// indices kept inside the window by a mask; positions only grow, so when the last number
    /// ends inside the window every read was where it says. A number the window loop does not
    /// read (longer than a word, or not one) and the ones after it are read with checks. Not
    /// inlined: the shapes' path keeps its registers.
    #[inline(never)]
    fn numbers(&mut self, b: &[u8], i: usize) -> Option<usize> {
        let (from, at) = match b.first_chunk::<{ WINDOW + 8 }>().map(|window| self.numbers_in(window, i)) {
            Some(Ok(end)) if end < WINDOW - 1 => return Some(end),
            Some(Err((k, at))) if at < WINDOW - 1 => (k, at),
            _ => (1, i),
        };
        self.numbers_checked(b, from, at)
    }

    /// The numbers after the comma at `i`, read from `window` (the start of the buffer) at
    /// masked indices: where the last one ends (meaningful only when inside the window), or
    /// the number it stopped at and the comma before it. A number shaped as one of its column's
    /// last two is checked and converted by that [`Shape`]; another is read by
    /// [`short_decimal`] and its shape kept.
    #[inline]
    fn numbers_in(&mut self, window: &[u8; WINDOW + 8], mut i: usize) -> Result<usize, (usize, usize)> {
        let upto = self.upto;
        let (Some(values), Some(shapes)) = (self.values.get_mut(1..upto), self.shapes.get_mut(1..upto))
        else {
            return Err((1, i));
        };
        for (k, (value, shapes)) in (1..).zip(values.iter_mut().zip(shapes)) {
            let at = (i + 1) % WINDOW;
            let Some(word) = window[at..].first_chunk::<8>().map(|w| u64::from_le_bytes(*w)) else {
                return Err((k, i));
            };
            let read = match shapes[0].read(word).or_else(|| shapes[1].read(word)) {
                Some(read) => read,
                None => reshape(shapes, word, k + 1 == upto).ok_or((k, i))?,
            };
            *value = read.0;
            i += read.1;
        }
        Ok(i)
    }

    /// The numbers from column `from` on, the first after the comma at `i`, with every access
    /// checked: where the last one ends.
    #[inline(never)]
    fn numbers_checked(&mut self, b: &[u8], from: usize, mut i: usize) -> Option<usize> {
        for k in from..self.upto {
            if b.get(i) != Some(&b',') {
                return None;
            }
            (self.values[k % MAX_FIELDS], i) = decimal(b, i + 1)?;
        }
        Some(i)
    }

    /// [`read`](Self::read) for any layout, field by field.
    #[inline]
    fn read_any(&mut self, b: &[u8]) -> Option<(i64, (usize, usize), usize, bool)> {
        let (mut t, mut cell) = (0, (0, 0));
        let mut i = 0;
        for k in 0..self.upto {
            if k > 0 {
                if b.get(i) != Some(&b',') {
                    return None;
                }
                i += 1;
            }
            match self.ops[k] {
                Op::Number => (self.values[k], i) = decimal(b, i)?,
                Op::Time => {
                    let start = i;
                    (t, i) = self.time(b, i)?;
                    cell = (start, i);
                }
                Op::Skip => i = skip_field(b, i)?,
            }
        }
        Some((t, cell, i, false))
    }

    /// The time cell at `b[i..]`: absolute µs and where it ends.
    #[inline(always)]
    fn time(&mut self, b: &[u8], i: usize) -> Option<(i64, usize)> {
        match self.time {
            Time::Epoch(unit) => {
                let (v, end) = digit_run(b, i);
                if end == i || end - i > 15 {
                    return None;
                }
                Some(((v as i64).checked_mul(unit)?, end))
            }
            Time::EpochNs => {
                let (v, end) = digit_run(b, i);
                if end == i || end - i > 19 {
                    return None;
                }
                Some((i64::try_from(v).ok()? / 1_000, end))
            }
            Time::Datetime { offset_s } => self.datetime(b, i, offset_s),
        }
    }

    /// `YYYY-MM-DD[T t ]HH:MM:SS[.fraction][Z z ±HH:MM]` at `b[i..]`, as `parse_datetime`
    /// reads it: by the last cell's [`TimeForm`] when it has it, else parsed (and its form
    /// learned).
    #[inline(always)]
    fn datetime(&mut self, b: &[u8], i: usize, offset_s: i64) -> Option<(i64, usize)> {
        let cell = b.get(i..).and_then(<[u8]>::first_chunk::<NEEDED>);
        if let (Some(form), Some(cell)) = (&self.form, cell)
            && let Some(t) = form.read(cell)
        {
            self.form_hits = self.form_hits.wrapping_add(1);
            return Some((t, i + form.len));
        }
        let (t, end) = self.parse_datetime(b, i, offset_s)?;
        if let Some(cell) = cell
            && self.forms != u32::MAX
        {
            self.learn(cell, end - i, t);
        }
        Some((t, end))
    }

    /// The form of `cell`, which [`parse_datetime`](Self::parse_datetime) read as `t` (`len`
    /// bytes), kept for the next cells; learning stops (`forms` at `u32::MAX`) once forms
    /// outnumber an eighth of the cells read by them, after the first 16.
    #[cold]
    #[inline(never)]
    fn learn(&mut self, cell: &[u8; NEEDED], len: usize, t: i64) {
        self.forms += 1;
        self.form = TimeForm::new(cell, len, t);
        if self.forms > 16 && self.forms > self.form_hits / 8 {
            (self.forms, self.form) = (u32::MAX, None);
        }
    }

    /// [`datetime`](Self::datetime) parsed: the date from the cache when its ten bytes repeat,
    /// the time of day eight bytes at once.
    #[inline(always)]
    fn parse_datetime(&mut self, b: &[u8], i: usize, offset_s: i64) -> Option<(i64, usize)> {
        let head: &[u8; 19] = b.get(i..)?.first_chunk()?;
        let date: &[u8; 10] = head.first_chunk()?;
        let day_us = match self.day {
            Some((d, us)) if d == *date => us,
            _ => {
                let us = parse_datetime(date, 0).ok()?;
                self.day = Some((*date, us));
                us
            }
        };
        if !matches!(head[10], b'T' | b't' | b' ') {
            return None;
        }
        let tod = clock(u64::from_le_bytes(*head[11..].first_chunk()?))?;
        let mut j = i + 19;
        let mut micros = 0;
        if b.get(j) == Some(&b'.') {
            let (v, end) = digit_run(b, j + 1);
            let n = end - j - 1;
            if n == 0 || n > 19 {
                return None;
            }
            micros = if n <= 6 { v * POW10[6 - n] } else { v / POW10[n - 6] } as i64;
            j = end;
        }
        let offset = match b.get(j) {
            Some(b'Z' | b'z') => {
                j += 1;
                0
            }
            Some(sign @ (b'+' | b'-')) => {
                let zone: &[u8; 5] = b.get(j + 1..)?.first_chunk()?;
                let (h, m) = (two_digits(zone[0], zone[1])?, two_digits(zone[3], zone[4])?);
                if zone[2] != b':' || h > 23 || m > 59 {
                    return None;
                }
                j += 6;
                let secs = i64::from(h * 3600 + m * 60);
                if *sign == b'-' { -secs } else { secs }
            }
            _ => offset_s,
        };
        Some((day_us + (tod - offset) * 1_000_000 + micros, j))
    }
}

/// A date-time cell as the last one learned was written: the same bytes (the byte after the
/// cell included: it is where the parser stopped) but for the digits of its minutes and
/// seconds, so the same time but for those. A minute's or a second's rows share their date,
/// hour, fraction and zone, and are read with one pattern match and two numbers.
struct TimeForm {
    /// The cell's bytes and the one after it, the minutes' and seconds' any digits.
    pattern: Pattern,
    /// The cell's length (at most 31).
    len: usize,
    /// The time at minute and second zero.
    base: i64,
}

impl TimeForm {
    /// The bits of the minutes' and seconds' digits in `YYYY-MM-DDTHH:MM:SS`.
    const DIGITS: u64 = 1 << 14 | 1 << 15 | 1 << 17 | 1 << 18;

    /// The form of `cell` (a date-time of `len` bytes read as `t`; its minutes and seconds at
    /// bytes 14-15 and 17-18); `None` when it is too long for two 16-byte chunks.
    fn new(cell: &[u8; NEEDED], len: usize, t: i64) -> Option<TimeForm> {
        let pattern = Pattern::new(cell.get(..=len).filter(|_| len < 32)?, Self::DIGITS);
        let (m, s) = Self::minutes_seconds(cell)?;
        Some(TimeForm { pattern, len, base: t - (m * 60 + s) * 1_000_000 })
    }

    /// The time of `cell` when it has this form.
    #[inline(always)]
    fn read(&self, cell: &[u8; NEEDED]) -> Option<i64> {
        if !self.pattern.matches(cell, 2) {
            return None;
        }
        let (m, s) = Self::minutes_seconds(cell)?;
        Some(self.base + (m * 60 + s) * 1_000_000)
    }

    /// The minutes and seconds of a cell whose bytes 14-15 and 17-18 are digits, when they
    /// are at most 59 and 60 (a leap second, as the general parser allows).
    #[inline(always)]
    fn minutes_seconds(cell: &[u8; NEEDED]) -> Option<(i64, i64)> {
        // `:MM:SS` and two more bytes: digits become 0..=9 and colons 10; each byte becomes ten
        // times itself plus the next (no carry out of the first six), minutes in byte 1, seconds
        // in byte 4.
        let x = u64::from_le_bytes(*cell[13..].first_chunk()?) ^ ZEROS;
        let pairs = x.wrapping_mul(10).wrapping_add(x >> 8);
        let (m, s) = ((pairs >> 8) & 0xFF, (pairs >> 32) & 0xFF);
        (m <= 59 && s <= 60).then_some((m as i64, s as i64))
    }
}

/// `HH:MM:SS` in eight bytes (little-endian) as seconds into the day, when it is one
/// (`SS` up to 60, a leap second, as the general parser allows).
#[inline]
fn clock(w: u64) -> Option<i64> {
    const PATTERN: u64 = u64::from_le_bytes(*b"00:00:00");
    const COLONS: u64 = u64::from_le_bytes([0, 0, 0xFF, 0, 0, 0xFF, 0, 0]);
    // Digits become 0..=9 and colons 0; a byte of 10 or more sets its high bit after adding 0x76
    // (no carry leaves a byte below 0x80, and one at 0x80 or above is caught as it is).
    let v = w ^ PATTERN;
    if ((v.wrapping_add(0x7676_7676_7676_7676) | v) & 0x8080_8080_8080_8080) != 0 || v & COLONS != 0 {
        return None;
    }
    // Each byte becomes ten times itself plus the next: hours, minutes and seconds in bytes 0, 3, 6.
    let pairs = v * 10 + (v >> 8);
    let (h, m, s) = (pairs & 0xFF, (pairs >> 24) & 0xFF, (pairs >> 48) & 0xFF);
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some((h * 3600 + m * 60 + s) as i64)
}

/// A column's number in `word` when its shape is neither of the column's last two
/// (`shapes`): its value and its length with the comma, its shape kept (the older one
/// dropped). `None` when it does not end in the word, or is not followed by a comma in a
/// column before the `last`.
#[cold]
#[inline(never)]
fn reshape(shapes: &mut [Shape; 2], word: u64, last: bool) -> Option<(f64, usize)> {
    let (v, len, after) = short_decimal(word)?;
    if !last && after != COMMA {
        return None;
    }
    shapes[1] = std::mem::replace(&mut shapes[0], Shape::new(word, len));
    Some((v, len + 1))
}

/// Two ASCII digits as a number.
#[inline]
fn two_digits(a: u8, b: u8) -> Option<u32> {
    let (a, b) = (a.wrapping_sub(b'0'), b.wrapping_sub(b'0'));
    (a <= 9 && b <= 9).then(|| u32::from(a) * 10 + u32::from(b))
}

/// An unsigned decimal `digits[.digits]` at `b[i..]` and where it ends, when its value is
/// exactly representable as the general parser's: whole numbers of up to 19 digits (rounded to
/// nearest, ties to even, as `u64 as f64` does), decimals with at most 19 digits in all and a
/// mantissa up to 2^53 (both operands exact: one correctly rounded division). A number that
/// ends within eight bytes (`4523`, `199.5`) is read from one word.
#[inline(always)]
pub(super) fn decimal(b: &[u8], i: usize) -> Option<(f64, usize)> {
    match b.get(i..).and_then(<[u8]>::first_chunk::<8>).and_then(|w| short_decimal(u64::from_le_bytes(*w))) {
        Some((v, len, _)) => Some((v, i + len)),
        None => long_decimal(b, i),
    }
}

/// A comma as [`short_decimal`] gives the byte after a number (`^ b'0'`).
const COMMA: u8 = b',' ^ b'0';
/// ASCII digits as the values 0..=9 (`^`).
pub(super) const ZEROS: u64 = 0x3030_3030_3030_3030;
/// Added to digit values (0..=9) sets no high bit; added to any other byte (or by itself),
/// the byte has its high bit set.
const NON_DIGIT: u64 = 0x7676_7676_7676_7676;

/// Where a number's digits, dot and end are in its 8-byte word: what a word must hold to be
/// read the same way (each digit byte a digit, the dot and the byte after the number as they
/// were) and how to convert it. Numbers in a column are mostly written alike, so checking a
/// word against the last one's shape is cheaper than finding them anew.
#[derive(Copy, Clone)]
struct Shape {
    /// High bits of the digit bytes: none may be set once `^ b'0'` and [`NON_DIGIT`] is added.
    digits: u64,
    /// The bytes of the dot and of the byte after the number (a comma, or the line end seen
    /// in the last column) ...
    fixed_mask: u64,
    /// ... and what they must be (`^ b'0'`).
    fixed: u64,
    /// The bytes before the dot (all of them when there is none): the rest move down a byte.
    low: u64,
    /// Left shift moving the digits (without the dot) to the top of the word.
    shift: u32,
    /// The number's length with the byte after it.
    step: usize,
    /// 10 to the number of fraction digits.
    scale: f64,
}

impl Shape {
    /// A shape no word has (its first byte should be both a digit and not one).
    const NONE: Shape =
        Shape { digits: 0x80, fixed_mask: 0xFF, fixed: 0x80, low: 0, shift: 0, step: 0, scale: 1.0 };

    /// The shape of the number of length `len` (at most 7) at the start of `word`, which
    /// [`short_decimal`] read.
    fn new(word: u64, len: usize) -> Shape {
        let bytes = |n: usize| (1u64 << (8 * n)) - 1;
        let x = word ^ ZEROS;
        // The dot, if any: the first byte that is not a digit.
        let first = ((x | x.wrapping_add(NON_DIGIT)) & 0x8080_8080_8080_8080).trailing_zeros() as usize / 8;
        let dot = (first < len).then_some(first);
        let mut digits = bytes(len) & 0x8080_8080_8080_8080;
        let mut fixed_mask = 0xFFu64 << (8 * len);
        let mut fixed = x & fixed_mask;
        let (low, frac) = match dot {
            Some(j) => {
                digits &= !(0xFFu64 << (8 * j));
                fixed_mask |= 0xFFu64 << (8 * j);
                fixed |= u64::from(b'.' ^ b'0') << (8 * j);
                (bytes(j), len - j - 1)
            }
            None => (u64::MAX, 0),
        };
        let count = len - usize::from(dot.is_some());
        Shape {
            digits,
            fixed_mask,
            fixed,
            low,
            shift: (64 - 8 * count) as u32,
            step: len + 1,
            scale: POW10_F64[frac],
        }
    }

    /// The number at the start of `word` when it has this shape: its value (as
    /// [`short_decimal`] reads it) and its length with the byte after it.
    #[inline(always)]
    fn read(&self, word: u64) -> Option<(f64, usize)> {
        let x = word ^ ZEROS;
        if (x.wrapping_add(NON_DIGIT) | x) & self.digits != 0 || x & self.fixed_mask != self.fixed {
            return None;
        }
        let joined = (x & self.low) | ((x >> 8) & !self.low);
        Some((digit_values(joined << self.shift) as i64 as f64 / self.scale, self.step))
    }
}

/// [`decimal`] of the eight bytes `word` (little-endian) when the number ends inside them:
/// its value, its length and the byte after it, `^ b'0'` (a comma is [`COMMA`]). `None` for
/// anything else, which [`long_decimal`] reads (or declines).
#[inline(always)]
fn short_decimal(word: u64) -> Option<(f64, usize, u8)> {
    const DOT: u8 = b'.' ^ b'0';
    // Digits become 0..=9; any other byte has its high bit set here, by itself or after adding
    // 0x76. A carry out of a byte comes only from one already flagged and only reaches later
    // bytes, so the first flag, and in ASCII text the first past a dot, are exact.
    let x = word ^ ZEROS;
    let flags = (x | x.wrapping_add(NON_DIGIT)) & 0x8080_8080_8080_8080;
    let int = flags.trailing_zeros() as usize / 8;
    if int == 0 || int == 8 {
        return None;
    }
    let low = |n: usize| (1u64 << (8 * n)) - 1;
    // The digit values below byte `n` as a number (1 <= n <= 7): moved to the top, the bytes
    // below become leading zeros. (Values below 10^7 convert exactly through `i64`, one
    // instruction where `u64` takes several.)
    let value = |x: u64, n: usize| digit_values(x << (64 - 8 * n)) as i64 as f64;
    let after = (x >> (8 * int)) as u8;
    if after != DOT {
        return Some((value(x, int), int, after));
    }
    let frac = ((flags >> (8 * int)) >> 8).trailing_zeros() as usize / 8;
    let end = int + 1 + frac;
    if frac == 0 || end > 7 {
        return None;
    }
    // The integer digits followed by the fraction's, the dot taken out.
    let joined = (x & low(int)) | ((x >> 8) & !low(int));
    Some((value(joined, end - 1) / POW10_F64[frac], end, (x >> (8 * end)) as u8))
}

/// Eight digit values (0..=9, the first in the lowest byte) as one number, with three
/// multiplications (the "SWAR" method of simdjson and fast_float).
#[inline(always)]
pub(super) fn digit_values(v: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = v * 10 + (v >> 8);
    ((v & MASK).wrapping_mul(MUL1).wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2))) >> 32
}

/// [`decimal`] for a number that does not end within eight bytes (or is not one).
#[cold]
fn long_decimal(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let (int, j) = digit_run(b, i);
    let n = j - i;
    if n == 0 || n > 19 {
        return None;
    }
    if b.get(j) != Some(&b'.') {
        return Some((int as f64, j));
    }
    let (frac, end) = digit_run(b, j + 1);
    let f = end - j - 1;
    if f == 0 || n + f > 19 {
        return None;
    }
    let mantissa = int * POW10[f] + frac;
    if mantissa > 1 << 53 {
        return None;
    }
    Some((mantissa as f64 / POW10_F64[f], end))
}

/// Skips a field that is not read: its end (at a comma), or `None` at a quote or a line end.
#[inline]
fn skip_field(b: &[u8], mut i: usize) -> Option<usize> {
    while let Some(&c) = b.get(i) {
        match c {
            b',' => return Some(i),
            b'"' | b'\r' | b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// The length of the line whose last needed field ends at `b[i]`, with its `\n` (or `\r\n`);
/// `None` when what follows holds a quote or a lone `\r`, or the line does not end in `b`.
#[inline]
fn line_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'\n' => Some(i + 1),
        b'\r' => (b.get(i + 1) == Some(&b'\n')).then_some(i + 2),
        b',' => {
            let at = i + memchr::memchr3(b'\n', b'"', b'\r', &b[i..])?;
            match b[at] {
                b'\n' => Some(at + 1),
                b'\r' => (b.get(at + 1) == Some(&b'\n')).then_some(at + 2),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::columns::parse_f64;
    use proptest::prelude::*;

    /// What the general path reads from a cell: the same number, or the row is declined.
    fn agrees(cell: &str) {
        let line = format!("{cell},");
        let fast = decimal(line.as_bytes(), 0).filter(|(_, end)| *end == cell.len()).map(|(v, _)| v);
        if let Some(v) = fast {
            let general = parse_f64(cell.as_bytes()).filter(|v| *v >= 0.0);
            assert_eq!(Some(v.to_bits()), general.map(f64::to_bits), "{cell}");
        }
    }

    #[test]
    fn decimals_read_exactly_or_not_at_all() {
        for cell in [
            "0",
            "95.0",
            "199.5",
            "0.1",
            "0.3",
            "00012",
            "0012.50",
            "9007199254740993",
            "9007199254740992.5",
            "18446744073709551615",
            "1844674407370955161",
            "9999999999999999999",
            "0.0000000000000000001",
            "123456789.123456789",
            "4503599627370497.5",
            "1.",
            ".5",
            "1e3",
            "-1",
            "+1",
            "1.2.3",
        ] {
            agrees(cell);
        }
        assert_eq!(decimal(b"95.0,", 0), Some((95.0, 4)));
        assert_eq!(decimal(b"1.,", 0), None);
        assert_eq!(decimal(b".5,", 0), None);
        assert_eq!(decimal(b"99999999999999999999,", 0), None);
    }

    proptest! {
        #[test]
        fn random_decimals_agree_with_the_general_parser(
            int in "[0-9]{1,4}|[0-9]{5,20}",
            frac in proptest::option::of("[0-9]{0,3}|[0-9]{4,22}"),
            exp in proptest::option::of(-30i32..30),
        ) {
            let mut cell = int;
            if let Some(f) = frac {
                cell.push('.');
                cell.push_str(&f);
            }
            if let Some(e) = exp {
                cell.push_str(&format!("e{e}"));
            }
            agrees(&cell);
        }

        #[test]
        fn random_times_agree_with_the_general_parser(
            y in 1900u32..2100, mo in 0u32..14, d in 0u32..33, h in 0u32..26, mi in 0u32..61, s in 0u32..62,
            sep in prop::sample::select(vec!["T", "t", " ", "_"]),
            frac in proptest::option::of("[0-9]{0,21}"),
            zone in prop::sample::select(vec!["", "Z", "z", "+02:00", "-05:30", "+24:00", "+0200", "+01", " UTC", "Zx"]),
            offset_s in prop::sample::select(vec![0i64, 3600, -19_800]),
        ) {
            let mut cell = format!("{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}");
            if let Some(f) = frac {
                cell.push('.');
                cell.push_str(&f);
            }
            cell.push_str(zone);
            // Twice, alone and followed by more rows: the second read takes the date from the
            // cache, or the time from the first one's form.
            times_agree(&[cell.clone(), cell], offset_s, false)?;
        }

        /// Cells of one or two dates and hours, minutes and seconds in and out of range or
        /// not digits, the zone and fraction mostly alike, read one after another by one
        /// reader (its forms learned and used) with the time first and second.
        #[test]
        fn times_read_by_their_form_agree_with_the_general_parser(
            cells in prop::collection::vec((
                0u32..2, 0u32..2, 0u32..62, 0u32..62, 0usize..3,
                proptest::option::of((0usize..7, prop::sample::select(vec!['a', ' ', ':', '/', ';', '\u{ff}', '.', '7']))),
            ), 1..60),
            zones in prop::sample::subsequence(vec!["", "Z", "z", "+02:00", "-05:30", ".5Z", ".000", ".123456789+01:00", "Zx", " UTC"], 3),
            sep in prop::sample::select(vec!["T", " "]),
            offset_s in prop::sample::select(vec![0i64, 3600, -19_800]),
        ) {
            let texts: Vec<String> = cells
                .iter()
                .map(|&(d, h, mi, s, zone, mangle)| {
                    let mut cell = format!("2026-03-{:02}{sep}{:02}:{mi:02}:{s:02}{}", 30 + d, 23 * h, zones[zone]);
                    if let Some((k, c)) = mangle {
                        let at = [14, 15, 17, 18, 13, 16, 19][k];
                        cell = match cell.get(at + 1..) {
                            Some(rest) => format!("{}{c}{rest}", &cell[..at]),
                            None => format!("{cell}{c}"),
                        };
                    }
                    cell
                })
                .collect();
            let plain = zones.iter().all(|z| !z.contains(['x', 'U'])) && cells.iter().all(|c| c.5.is_none());
            times_agree(&texts, offset_s, plain)?;
        }
    }

    /// Reads `cells` as the time of rows one after another (each with a number after it, then
    /// alone or followed by more rows), the time first and second: every time read is the
    /// general parser's, of the whole cell. With `all`, every row followed by more is read
    /// when the general parser reads every cell.
    fn times_agree(cells: &[String], offset_s: i64, all: bool) -> Result<(), TestCaseError> {
        let padding = "2026-01-01T00:00:00Z,1\n".repeat(4);
        for time_first in [true, false] {
            let (time, number) = if time_first { (0, 1) } else { (1, 0) };
            for followed in [false, true] {
                let mut rows =
                    FastRows::new(time, [number].into_iter(), Resolved::Datetime, offset_s).unwrap();
                let mut read = 0;
                for cell in cells {
                    let line = if time_first { format!("{cell},5\n") } else { format!("5,{cell}\n") };
                    let text = if followed { format!("{line}{padding}") } else { line };
                    let Some(row) = rows.read(text.as_bytes()) else { continue };
                    read += 1;
                    let start = usize::from(!time_first) * 2;
                    prop_assert_eq!(row.time_cell, (start, start + cell.len()), "{}", cell);
                    prop_assert_eq!(Ok(row.t), parse_datetime(cell.as_bytes(), offset_s), "{}", cell);
                    prop_assert_eq!(rows.values[number], 5.0);
                }
                if all && followed && cells.iter().all(|c| parse_datetime(c.as_bytes(), offset_s).is_ok()) {
                    prop_assert_eq!(read, cells.len(), "{:?}", cells);
                }
            }
        }
        Ok(())
    }

    /// A word's number read by [`short_decimal`] is the one [`long_decimal`] reads there.
    fn word_agrees(text: &[u8]) {
        let mut padded = text.to_vec();
        padded.resize(padded.len().max(8), b'x');
        let word = u64::from_le_bytes(*padded.first_chunk().unwrap());
        if let Some((v, len, after)) = short_decimal(word) {
            let long = long_decimal(&padded, 0);
            assert_eq!(long.map(|(v, end)| (v.to_bits(), end)), Some((v.to_bits(), len)), "{padded:?}");
            assert_eq!(after, padded[len] ^ b'0', "{padded:?}");
        }
    }

    proptest! {
        #[test]
        fn words_read_as_the_long_reader_reads_them(bytes in prop::collection::vec(
            prop::sample::select(b"0123456789..,,\n\r-+e x\xff\x80\xfa\x2f\x3a".to_vec()), 0..12)
        ) {
            word_agrees(&bytes);
        }

        #[test]
        fn dense_rows_read_the_same_from_the_window_and_with_checks(
            numbers in prop::collection::vec("[0-9]{1,9}(\\.[0-9]{1,9})?|[0-9]{1,3}\\.[0-9]|-1|1e3|", 1..15),
            end in prop::sample::select(vec!["\n", "\r\n", ",x\n", "\r", ""]),
        ) {
            let mut line = String::from("1700000000");
            for n in &numbers {
                line.push(',');
                line.push_str(n);
            }
            line.push_str(end);
            let read = |b: &[u8]| {
                let mut rows =
                    FastRows::new(0, 1..=numbers.len(), Resolved::Epoch(1_000_000), 0).unwrap();
                rows.read(b).map(|r| (r.t, r.time_cell, r.len, rows.values.map(f64::to_bits)))
            };
            // At the end of the buffer (checked) and followed by more rows (the window).
            let alone = read(line.as_bytes());
            let followed = read(format!("{line}{}", "1,2,3\n".repeat(40)).as_bytes());
            if alone.is_some() {
                prop_assert_eq!(&alone, &followed, "{}", line);
            } else {
                prop_assert!(followed.is_none() || !end.contains('\n') || end.is_empty(), "{}", line);
            }
            if let Some((_, _, _, values)) = followed.filter(|_| end.contains('\n')) {
                for (k, n) in numbers.iter().enumerate() {
                    let general = parse_f64(n.as_bytes()).map(f64::to_bits);
                    prop_assert_eq!(Some(values[k + 1]), general, "{}", n);
                }
            }
        }
    }

    /// A word read by another word's [`Shape`] is read as [`short_decimal`] reads it, with the
    /// same byte after it.
    fn shape_agrees(first: &[u8], second: &[u8]) {
        let word = |text: &[u8]| {
            let mut padded = text.to_vec();
            padded.resize(8, b'x');
            u64::from_le_bytes(*padded.first_chunk().unwrap())
        };
        let read = |w: u64| short_decimal(w).map(|(v, len, after)| (v.to_bits(), len + 1, after));
        let (a, b) = (word(first), word(second));
        let Some((_, step, after)) = read(a) else { return };
        let shape = Shape::new(a, step - 1);
        assert_eq!(shape.read(a).map(|(v, step)| (v.to_bits(), step, after)), read(a), "{first:?}");
        if let Some((v, step)) = shape.read(b) {
            assert_eq!(Some((v.to_bits(), step, after)), read(b), "{first:?} {second:?}");
        }
    }

    proptest! {
        #[test]
        fn words_read_by_a_shape_as_the_word_reader_reads_them(
            first in prop::collection::vec(prop::sample::select(b"0123456789..,,\n\r-e x\xff\x80\xfa\x2f\x3a".to_vec()), 0..9),
            second in prop::collection::vec(prop::sample::select(b"0123456789..,,\n\r-e x\xff\x80\xfa\x2f\x3a".to_vec()), 0..9),
        ) {
            shape_agrees(&first, &second);
        }

        #[test]
        fn numbers_of_one_shape_read_alike(
            int in "[0-9]{1,4}", frac in "[0-9]{0,3}", end in "[,\n\r.e]", other in "[0-9]{1,4}(\\.[0-9]{1,3})?[,\n\r.e]",
        ) {
            let first = if frac.is_empty() { format!("{int}{end}") } else { format!("{int}.{frac}{end}") };
            shape_agrees(first.as_bytes(), other.as_bytes());
        }
    }

    proptest! {
        /// Rows read one after another by one reader (so each column's shapes carry over)
        /// give every number as the general parser reads it, or are declined.
        #[test]
        fn consecutive_rows_read_as_the_general_parser_reads_them(
            rows in prop::collection::vec(prop::collection::vec(
                "[0-9]{1,3}|[0-9]{1,2}\\.[0-9]{1,2}|[0-9]{1,4}\\.[0-9]|[0-9]{5,9}(\\.[0-9]{1,3})?|[0-9]\\.|-1|1e3|", 4), 1..40),
            end in prop::sample::select(vec!["\n", "\r\n", ",x\n"]),
        ) {
            let text: String = rows.iter().enumerate().map(|(k, cells)| format!("{},{}{end}", 1_700_000_000 + k, cells.join(","))).collect();
            let mut reader = FastRows::new(0, 1..=4, Resolved::Epoch(1_000_000), 0).unwrap();
            let mut at = 0;
            for (k, cells) in rows.iter().enumerate() {
                let b = &text.as_bytes()[at..];
                let line = format!("{},{}{end}", 1_700_000_000 + k, cells.join(","));
                if let Some(row) = reader.read(b) {
                    prop_assert_eq!(row.len, line.len(), "{}", line);
                    for (c, cell) in cells.iter().enumerate() {
                        let general = parse_f64(cell.as_bytes()).filter(|v| *v >= 0.0).map(f64::to_bits);
                        prop_assert_eq!(Some(reader.values[c + 1].to_bits()), general, "{}", line);
                    }
                }
                at += line.len();
            }
        }
    }

    #[test]
    fn shapes_read_only_their_own_numbers() {
        for (first, second) in [
            (&b"95.3,"[..], &b"96.1,"[..]),
            (b"95.3,", b"196.1,"),
            (b"95.3,", b"9.31,"),
            (b"95.3,", b"95.3\n"),
            (b"95.3\n", b"95.37\n"),
            (b"95.3\n", b"95.3e1"),
            (b"72\n", b"18.23\n"),
            (b"4523,", b"452,"),
            (b"4523,", b"45.3,"),
            (b"4523,", b"4\xff23,"),
            (b"17,", b"\xff7,"),
            (b"1234567,", b"7654321,"),
            (b"123.456\n", b"654.321\r"),
        ] {
            shape_agrees(first, second);
        }
        let word = |t: &[u8; 8]| u64::from_le_bytes(*t);
        let shape = Shape::new(word(b"95.3,xxx"), 4);
        assert_eq!(shape.read(word(b"12.5,yyy")), Some((12.5, 5)));
        assert_eq!(shape.read(word(b"12.5\nyyy")), None);
        assert_eq!(Shape::new(word(b"72\nxxxxx"), 2).read(word(b"18.23\nxx")), None);
        assert!(Shape::NONE.read(word(b"00000000")).is_none());
        assert!(Shape::NONE.read(word(b"0,000000")).is_none());
    }

    #[test]
    fn words_of_every_length_and_ending_read_exactly() {
        for text in [
            &b"1,"[..],
            b"1234567,",
            b"12345678",
            b"1234.567",
            b"123456.7",
            b"123456.\n",
            b"1.2.3,,,",
            b".5,",
            b"0.000001",
            b"00000.1\n",
            b"9\xff",
            b"12\x80.5,",
            b"5.\xfa9,",
        ] {
            word_agrees(text);
        }
        assert_eq!(short_decimal(u64::from_le_bytes(*b"199.5,xx")), Some((199.5, 5, COMMA)));
        assert_eq!(short_decimal(u64::from_le_bytes(*b"4523\n170")), Some((4523.0, 4, b'\n' ^ b'0')));
        assert_eq!(short_decimal(u64::from_le_bytes(*b"12345678")), None);
        assert_eq!(short_decimal(u64::from_le_bytes(*b"123456.7")), None);
    }

    #[test]
    fn rows_follow_the_layout_and_decline_what_they_cannot_read() {
        let mut rows = FastRows::new(1, [3, 4].into_iter(), Resolved::Epoch(1_000_000), 0).unwrap();
        let row = rows.read(b"x y,1700000000,host,2.5,40,more,x\nnext").unwrap();
        assert_eq!((row.t, row.time_cell, row.len), (1_700_000_000_000_000, (4, 14), 34));
        assert_eq!((rows.values[3], rows.values[4]), (2.5, 40.0));
        assert_eq!(rows.read(b"x,1700000000,h,2.5,40\r\n").map(|r| r.len), Some(23));
        for declined in [
            &b"x,1700000000,h,2.5,40"[..],
            b"x,1700000000,h,2.5,40\r",
            b"x,1700000000,h,2.5,40,\"a\"\n",
            b"x,1700000000,h,2.5\n",
            b"\"x\",1700000000,h,2.5,40\n",
            b"x,1700000000,h, 2.5,40\n",
            b"x,1700000000,h,2.5,4e1\n",
            b"x,-1700000000,h,2.5,40\n",
            b"\n",
        ] {
            assert!(rows.read(declined).is_none(), "{}", String::from_utf8_lossy(declined));
        }
        assert!(FastRows::new(1, [1].into_iter(), Resolved::Datetime, 0).is_none());
        assert!(FastRows::new(0, [MAX_FIELDS].into_iter(), Resolved::Datetime, 0).is_none());
    }
}
