//! Timestamps of trace files: epoch numbers (seconds, milliseconds, microseconds, nanoseconds)
//! and date-times, RFC 3339 and the ISO 8601 forms logs write: `2018-06-17T00:00:00Z`,
//! `2014-03-07 03:41:00.5+01:00`, `2014-03-07 03:41`, a date alone, with a zone or without (then
//! an assumed offset applies). Logs add a space before the zone, `±HHMM` and `±HH` offsets, an
//! abbreviation after the offset (`+0000 UTC`) or UTC/GMT alone, and Go's `time.Time` print form
//! with its monotonic-clock suffix (`2022-08-23 11:59:28.111401482 +0000 UTC m=+0.093837757`).
//! The cell's fields are read here (jiff's parser reads a different set of forms: basic ISO 8601,
//! hours alone, at most nine decimals, leap seconds clamped, and its errors do not say which field
//! is wrong); jiff checks the date and counts its days, and prints times back. Results are
//! absolute microseconds since 1970-01-01T00:00:00Z as `i64`; finer fractions are truncated.

use crate::{Error, Result};
use jiff::SignedDuration;
use jiff::civil::Date;
use serde::Deserialize;

/// How the time column is written.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeFormat {
    /// Decide from the column's name and first value: a plain number is epoch time (unit from a
    /// `_s`/`_ms`/`_us` header suffix, else from its magnitude), anything else a date-time.
    #[default]
    Auto,
    /// RFC 3339 (`2018-06-17T00:00:00Z`); parsed by the same lenient date-time parser.
    Rfc3339,
    /// `YYYY-MM-DD[ T]HH:MM[:SS[.fraction]]` with an optional zone.
    Datetime,
    /// Seconds since the Unix epoch (a fraction is allowed).
    EpochS,
    /// Milliseconds since the Unix epoch (a fraction is allowed).
    EpochMs,
    /// Microseconds since the Unix epoch.
    EpochUs,
    /// Nanoseconds since the Unix epoch (OpenTelemetry's `*UnixNano`); truncated to microseconds.
    EpochNs,
}

/// A time format with `Auto` resolved: what every row of one file is parsed as.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Epoch number; the value is the number of microseconds per unit.
    Epoch(i64),
    /// Epoch nanoseconds.
    EpochNs,
    /// A date-time string.
    Datetime,
}

impl Resolved {
    /// Resolves `Auto` from the header's unit suffix and the first value.
    pub fn resolve(format: TimeFormat, header: &str, first: &[u8]) -> Resolved {
        match format {
            TimeFormat::EpochS => Resolved::Epoch(1_000_000),
            TimeFormat::EpochMs => Resolved::Epoch(1_000),
            TimeFormat::EpochUs => Resolved::Epoch(1),
            TimeFormat::EpochNs => Resolved::EpochNs,
            TimeFormat::Rfc3339 | TimeFormat::Datetime => Resolved::Datetime,
            TimeFormat::Auto => {
                let s = first.trim_ascii();
                let numeric = !s.is_empty()
                    && s.iter().all(|b| b.is_ascii_digit() || *b == b'.' || *b == b'-')
                    && s.iter().any(u8::is_ascii_digit)
                    && !(s.len() >= 8 && s[4] == b'-');
                if !numeric {
                    return Resolved::Datetime;
                }
                let h = header.trim().to_ascii_lowercase();
                if h.ends_with("_ms") || h.ends_with("(ms)") || h.ends_with("millis") {
                    return Resolved::Epoch(1_000);
                }
                if h.ends_with("_us") || h.ends_with("(us)") || h.ends_with("micros") {
                    return Resolved::Epoch(1);
                }
                if h.ends_with("_ns") || h.ends_with("(ns)") || h.ends_with("nano") || h.ends_with("nanos") {
                    return Resolved::EpochNs;
                }
                if h.ends_with("_s") || h.ends_with("(s)") || h.ends_with("_sec") || h.ends_with("seconds") {
                    return Resolved::Epoch(1_000_000);
                }
                // Magnitude: seconds until the year 5138 (10 digits today), then milliseconds (13),
                // microseconds (16) and nanoseconds (19). Twenty digits and more overflow and are
                // refused by `parse` rather than guessed.
                let int_digits = s.iter().take_while(|b| b.is_ascii_digit() || **b == b'-').count();
                let magnitude = s[..int_digits].iter().filter(|b| b.is_ascii_digit()).count();
                if magnitude <= 11 {
                    Resolved::Epoch(1_000_000)
                } else if magnitude <= 14 {
                    Resolved::Epoch(1_000)
                } else if magnitude <= 17 {
                    Resolved::Epoch(1)
                } else {
                    Resolved::EpochNs
                }
            }
        }
    }

    /// Parses one value; `offset_s` is the zone assumed for date-times written without one.
    pub fn parse(self, text: &[u8], offset_s: i64) -> Result<i64, &'static str> {
        match self {
            Resolved::Epoch(unit) => parse_epoch(text, unit),
            Resolved::EpochNs => parse_epoch_ns(text),
            Resolved::Datetime => parse_datetime(text, offset_s),
        }
    }

    /// Words describing the format, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Resolved::Epoch(1_000_000) => "epoch seconds",
            Resolved::Epoch(1_000) => "epoch milliseconds",
            Resolved::Epoch(_) => "epoch microseconds",
            Resolved::EpochNs => "epoch nanoseconds",
            Resolved::Datetime => "a date-time such as 2022-08-23 11:59:28 or 2018-06-17T00:00:00Z",
        }
    }
}

/// Parses a decimal epoch number in units of `unit` microseconds, exactly (no float rounding).
pub fn parse_epoch(text: &[u8], unit: i64) -> Result<i64, &'static str> {
    const EXPECTED: &str = "an epoch number such as 1661255968 or 1661255968.25";
    let s = text.trim_ascii();
    let (negative, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = match s.iter().position(|b| *b == b'.') {
        Some(dot) => (&s[..dot], Some(&s[dot + 1..])),
        None => (s, None),
    };
    // Digits on at least one side of the point.
    if int.is_empty() && frac.is_none_or(<[u8]>::is_empty) {
        return Err(EXPECTED);
    }
    let mut micros = int
        .iter()
        .try_fold(0i64, |v, b| {
            let d = b.is_ascii_digit().then(|| i64::from(b - b'0'))?;
            v.checked_mul(10)?.checked_add(d)
        })
        .and_then(|v| v.checked_mul(unit))
        .ok_or(EXPECTED)?;
    let mut place = unit;
    for b in frac.unwrap_or_default() {
        if !b.is_ascii_digit() {
            return Err(EXPECTED);
        }
        place /= 10;
        micros = micros.checked_add(i64::from(b - b'0') * place).ok_or(EXPECTED)?;
    }
    Ok(if negative { -micros } else { micros })
}

/// Parses whole epoch nanoseconds into microseconds (truncated); more than 19 digits overflow
/// and are refused.
pub fn parse_epoch_ns(text: &[u8]) -> Result<i64, &'static str> {
    const EXPECTED: &str = "epoch nanoseconds such as 1661255968111401482 (at most 19 digits)";
    let ns = parse_digits(text.trim_ascii()).ok_or(EXPECTED)?;
    i64::try_from(ns).map(|ns| ns / 1_000).map_err(|_| EXPECTED)
}

/// A run of 1 to 19 ASCII digits (below 10^19, so it cannot overflow); `None` for anything
/// else.
#[inline]
pub fn parse_digits(cell: &[u8]) -> Option<u64> {
    if cell.is_empty() || cell.len() > 19 || !cell.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(cell.iter().fold(0, |v, b| v * 10 + u64::from(b - b'0')))
}

/// 1970-01-01, day zero of epoch time.
const EPOCH: Date = Date::constant(1970, 1, 1);

/// Absolute microseconds since the epoch written as `YYYY-MM-DD HH:MM:SS[.ffffff]Z`, for reports.
/// Any `i64` prints (years past 9999 too, as epoch numbers may reach).
pub fn format_utc(us: i64) -> String {
    let (secs, frac) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // The calendar repeats every 400 years (146,097 days): jiff dates the day within its cycle,
    // the cycles add whole 400 years.
    let (cycles, day) = (days.div_euclid(146_097), days.rem_euclid(146_097));
    let date = EPOCH + SignedDuration::from_hours(day * 24);
    let (y, m, d) = (i64::from(date.year()) + 400 * cycles, date.month(), date.day());
    let (h, mi, s) = (sod / 3600, sod % 3600 / 60, sod % 60);
    if frac == 0 {
        format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}Z")
    } else {
        let f = format!("{frac:06}");
        format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{}Z", f.trim_end_matches('0'))
    }
}

/// A length of time as a clock reads it, for reports: `2h`, `3m 0.215s`, `1d 3h 0m 12s`, `0.5s`
/// (days, hours and minutes down to seconds with up to three decimals; below a millisecond, µs).
pub fn clock(us: u64) -> String {
    if us < 1_000 {
        return format!("{us}us");
    }
    let ms = us / 1_000; // clock time: milliseconds are plenty
    let (d, h, m) = (ms / 86_400_000, ms / 3_600_000 % 24, ms / 60_000 % 60);
    let sec_ms = ms % 60_000;
    let mut parts = Vec::new();
    let mut started = false;
    for (v, unit) in [(d, "d"), (h, "h"), (m, "m")] {
        started |= v > 0;
        if started {
            parts.push(format!("{v}{unit}"));
        }
    }
    if sec_ms > 0 || parts.is_empty() {
        let secs = format!("{}.{:03}", sec_ms / 1_000, sec_ms % 1_000);
        parts.push(format!("{}s", secs.trim_end_matches('0').trim_end_matches('.')));
    }
    // Trailing zero units say nothing: `2h 0m` is `2h`.
    while parts.len() > 1 && parts.last().is_some_and(|p| p.starts_with('0') && !p.ends_with('s')) {
        parts.pop();
    }
    parts.join(" ")
}

/// A positive number to three significant digits (`1.97`, `47.9`, `1250`, `0.0123`), for rates.
pub fn three_digits(x: f64) -> String {
    if !(x.is_finite() && x > 0.0) {
        return format!("{x}");
    }
    let decimals = (2 - x.log10().floor() as i64).clamp(0, 9) as usize;
    format!("{x:.decimals$}")
}

/// Parses a date-time; `offset_s` (seconds east of UTC) applies when the text carries no zone.
/// What an import assumed about the zone of its times, for its report, from the first time
/// cell read as a date-time: `None` when it names its zone (`Z`, `+02:00`).
pub fn zone_note(column: &str, first: &[u8], offset_s: i64) -> Option<String> {
    let s = first.trim_ascii();
    let time = s.get(DATE_LEN..)?;
    let zoned = time.ends_with(b"Z") || time.ends_with(b"z") || time.iter().any(|b| matches!(b, b'+' | b'-'));
    if zoned {
        return None;
    }
    Some(if offset_s == 0 {
        format!(
            "times in `{column}` name no zone: read as UTC (set --trace utc_offset=+02:00 if they are local)"
        )
    } else {
        format!("times in `{column}` name no zone: read at the given utc_offset ({offset_s} s east of UTC)")
    })
}

pub fn parse_datetime(text: &[u8], offset_s: i64) -> Result<i64, &'static str> {
    let s = text.trim_ascii();
    time_of_day(s, midnight(s)?, offset_s)
}

/// Parses date-times one after another, remembering the last date (its ten bytes and midnight):
/// logs and HAR entries come in time order, so most share the previous one's date and only their
/// time of day and zone are read. Gives exactly what [`parse_datetime`] gives.
#[derive(Default)]
pub struct DateCache {
    date: [u8; DATE_LEN],
    midnight: Option<i64>,
}

impl DateCache {
    /// [`parse_datetime`], reusing the previous date when `text` starts with the same one.
    pub fn parse(&mut self, text: &[u8], offset_s: i64) -> Result<i64, &'static str> {
        let s = text.trim_ascii();
        let midnight = match self.midnight {
            Some(secs) if s.get(..DATE_LEN) == Some(&self.date[..]) => secs,
            _ => {
                let secs = midnight(s)?;
                self.date.copy_from_slice(&s[..DATE_LEN]);
                self.midnight = Some(secs);
                secs
            }
        };
        time_of_day(s, midnight, offset_s)
    }
}

const EXPECTED: &str = "a date-time such as 2022-08-23 11:59:28[.fraction][ zone] or 2018-06-17T00:00:00Z";

/// `YYYY-MM-DD`, the first [`DATE_LEN`] bytes of a date-time (trimmed).
const DATE_LEN: usize = 10;

/// The date at the start of `s`, checked by jiff: its midnight in epoch seconds.
fn midnight(s: &[u8]) -> Result<i64, &'static str> {
    let mut c = Cursor { s, i: 0 };
    let year = c.digits(4).ok_or(EXPECTED)?;
    let month = if c.eat(b'-') { c.digits(2).ok_or(EXPECTED)? } else { return Err(EXPECTED) };
    let day = if c.eat(b'-') { c.digits(2).ok_or(EXPECTED)? } else { return Err(EXPECTED) };
    if !(1..=12).contains(&month) {
        return Err("a month between 01 and 12");
    }
    // Four digits, and day and month of two: each fits.
    let date =
        Date::new(year as i16, month as i8, day as i8).map_err(|_| "a day that exists in its month")?;
    Ok(date.duration_since(EPOCH).as_secs())
}

/// A cursor over a date-time's bytes.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    /// Exactly `n` digits.
    fn digits(&mut self, n: usize) -> Option<u32> {
        let field = self.s.get(self.i..self.i + n)?;
        let v =
            field.iter().try_fold(0u32, |v, b| b.is_ascii_digit().then(|| v * 10 + u32::from(b - b'0')))?;
        self.i += n;
        Some(v)
    }
    fn eat(&mut self, b: u8) -> bool {
        let found = self.peek() == Some(b);
        self.i += usize::from(found);
        found
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    /// Skips spaces; true when there were any.
    fn spaces(&mut self) -> bool {
        let n = self.rest().iter().take_while(|b| **b == b' ').count();
        self.i += n;
        n > 0
    }
    fn rest(&self) -> &[u8] {
        &self.s[self.i..]
    }
}

/// The rest of a date-time after its date: time of day (`HH:MM[:SS[.fraction]]` after `T`, `t`
/// or a space), then the zone, an abbreviation and Go's monotonic-clock suffix; added to the
/// date's `midnight`.
fn time_of_day(s: &[u8], midnight: i64, offset_s: i64) -> Result<i64, &'static str> {
    let mut c = Cursor { s, i: DATE_LEN };
    let (mut seconds, mut micros) = (0, 0);
    if matches!(c.peek(), Some(b'T' | b't' | b' ')) && s.get(c.i + 1).is_some_and(u8::is_ascii_digit) {
        c.i += 1;
        let hour = c.digits(2).ok_or(EXPECTED)?;
        let minute = if c.eat(b':') { c.digits(2).ok_or(EXPECTED)? } else { return Err(EXPECTED) };
        let mut second = 0;
        if c.eat(b':') {
            second = c.digits(2).ok_or(EXPECTED)?;
            if c.eat(b'.') || c.eat(b',') {
                let fraction = c.rest().iter().take_while(|b| b.is_ascii_digit()).count();
                if fraction == 0 {
                    return Err(EXPECTED);
                }
                // Microseconds: the first six digits (padded with zeros), the rest truncated.
                let six = c.rest()[..fraction].iter().chain(b"000000").take(6);
                micros = six.fold(0, |v, b| v * 10 + i64::from(b - b'0'));
                c.i += fraction;
            }
        }
        // A leap second (:60) counts into the next minute.
        if hour > 23 || minute > 59 || second > 60 {
            return Err("a time of day between 00:00:00 and 23:59:60");
        }
        seconds = i64::from(hour * 3600 + minute * 60 + second);
    }
    // Zone: Z, ±HH:MM, ±HHMM, ±HH, optionally followed by an abbreviation (Go: "+0000 UTC"),
    // or a bare UTC/GMT; then Go's monotonic suffix "m=±secs", which is ignored.
    c.spaces();
    let mut offset = None;
    match c.peek() {
        Some(b'Z' | b'z') => {
            c.i += 1;
            offset = Some(0);
        }
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let h = c.digits(2).ok_or(EXPECTED)?;
            c.eat(b':');
            let m =
                if c.peek().is_some_and(|b| b.is_ascii_digit()) { c.digits(2).ok_or(EXPECTED)? } else { 0 };
            if h > 23 || m > 59 {
                return Err("a zone offset between -23:59 and +23:59");
            }
            let secs = i64::from(h * 3600 + m * 60);
            offset = Some(if sign == b'-' { -secs } else { secs });
        }
        _ => {}
    }
    let apart = c.spaces();
    let word = c.rest().iter().take_while(|b| b.is_ascii_alphabetic()).count();
    if word > 0 && !c.rest().starts_with(b"m=") {
        // An abbreviation stands apart ("+0000 UTC"); letters stuck to a zone ("Zjunk") are not one.
        if offset.is_some() && !apart {
            return Err(EXPECTED);
        }
        let name = &c.rest()[..word];
        if offset.is_none() {
            if !(name.eq_ignore_ascii_case(b"UTC") || name.eq_ignore_ascii_case(b"GMT")) {
                return Err("a numeric zone offset (a zone abbreviation alone is ambiguous)");
            }
            offset = Some(0);
        }
        c.i += word;
        c.spaces();
    }
    if !(c.rest().is_empty() || c.rest().starts_with(b"m=")) {
        return Err(EXPECTED);
    }
    Ok((midnight + seconds - offset.unwrap_or(offset_s)) * 1_000_000 + micros)
}

/// Parses a zone offset written `+02:00`, `-0530`, `+01` or `Z`, into seconds east of UTC.
pub fn parse_offset(text: &str) -> Result<i64> {
    let bad =
        || Error::invalid(format!("expected a zone offset such as \"+02:00\" or \"-05:30\", found {text:?}"));
    let s = text.trim();
    if s.eq_ignore_ascii_case("z") || s.eq_ignore_ascii_case("utc") {
        return Ok(0);
    }
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !(digits.len() == 2 || digits.len() == 4) {
        return Err(bad());
    }
    let h: i64 = digits[..2].parse().map_err(|_| bad())?;
    let m: i64 = if digits.len() == 4 { digits[2..].parse().map_err(|_| bad())? } else { 0 };
    if h > 23 || m > 59 {
        return Err(bad());
    }
    Ok(sign * (h * 3600 + m * 60))
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_time_and_rates_read_as_a_person_would() {
        assert_eq!(clock(7_200_000_000), "2h");
        assert_eq!(clock(180_215_122), "3m 0.215s");
        assert_eq!(clock(100_107_637), "1m 40.107s");
        assert_eq!(clock(30 * 86_400_000_000), "30d");
        assert_eq!(clock(86_400_000_000 + 5_000_000), "1d 0h 0m 5s");
        assert_eq!(clock(500_000), "0.5s");
        assert_eq!(clock(999), "999us");
        assert_eq!(three_digits(1.9734), "1.97");
        assert_eq!(three_digits(47.94), "47.9");
        assert_eq!(three_digits(1250.2), "1250");
        assert_eq!(three_digits(0.01234), "0.0123");
    }

    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn the_date_cache_gives_what_a_full_parse_gives() {
        let mut cache = DateCache::default();
        for text in [
            "2024-06-01T10:00:00.000Z",
            "2024-06-01T10:00:01.500+01:00",
            " 2024-06-01 23:59:60 ",
            "2024-06-01T24:00:00Z",
            "2024-06-01",
            "2024-06-01x",
            "2024-06-02T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2024-06-02T00:00:00 CEST",
            "2024-06",
            "2024-06-02T00:00:00.25-05:30",
        ] {
            assert_eq!(cache.parse(text.as_bytes(), 3600), parse_datetime(text.as_bytes(), 3600), "{text}");
        }
    }

    #[test]
    fn go_print_form_with_monotonic_suffix() {
        let t = parse_datetime(b"2022-08-23 11:59:28.111401482 +0000 UTC m=+0.093837757", 0).unwrap();
        assert_eq!(t, 1_661_255_968 * S + 111_401);
        let t = parse_datetime(b"2022-08-23 12:00:28.082552268 +0000 UTC m=+60.064988550", 0).unwrap();
        assert_eq!(t, 1_661_256_028 * S + 82_552);
        let t = parse_datetime(b"2022-08-23 20:00:28 +0800 CST m=+1.5", 0).unwrap();
        assert_eq!(t, 1_661_256_028 * S);
    }

    #[test]
    fn rfc3339_and_zoneless_forms() {
        assert_eq!(parse_datetime(b"2018-06-17T00:00:00Z", 0).unwrap(), 1_529_193_600 * S);
        assert_eq!(parse_datetime(b"2018-06-17T02:00:00+02:00", 0).unwrap(), 1_529_193_600 * S);
        assert_eq!(parse_datetime(b"2018-06-16T19:00:00-0500", 0).unwrap(), 1_529_193_600 * S);
        assert_eq!(parse_datetime(b"2018-06-17t00:00:00.5z", 0).unwrap(), 1_529_193_600 * S + 500_000);
        // NAB: no zone; the assumed offset applies.
        assert_eq!(parse_datetime(b"2014-03-07 03:41:00", 0).unwrap(), 1_394_163_660 * S);
        assert_eq!(parse_datetime(b"2014-03-07 04:41:00", 3600).unwrap(), 1_394_163_660 * S);
        assert_eq!(parse_datetime(b"2014-03-14 03:31:00.000000", 0).unwrap(), 1_394_767_860 * S);
        assert_eq!(parse_datetime(b"2014-03-07 03:41", 0).unwrap(), 1_394_163_660 * S);
        assert_eq!(parse_datetime(b"2014-03-07", 0).unwrap(), 1_394_150_400 * S);
        assert_eq!(parse_datetime(b"2014-03-07 03:41:00 UTC", 7200).unwrap(), 1_394_163_660 * S);
    }

    #[test]
    fn bad_datetimes_say_what_was_expected() {
        assert!(parse_datetime(b"2014-13-07 03:41:00", 0).unwrap_err().contains("month"));
        assert!(parse_datetime(b"2014-02-30 03:41:00", 0).unwrap_err().contains("day"));
        assert!(parse_datetime(b"2014-02-28 25:41:00", 0).unwrap_err().contains("time of day"));
        assert!(parse_datetime(b"2014-02-28 03:41:00 CET", 0).unwrap_err().contains("ambiguous"));
        assert!(parse_datetime(b"yesterday", 0).is_err());
        assert!(parse_datetime(b"2014-02-28 03:41:00 junk1", 0).is_err());
        // Letters stuck to a zone are not an abbreviation.
        for text in
            [&b"2014-02-28T03:41:00Zjunk"[..], b"2014-02-28T03:41:00+01:00x", b"2014-02-28T03:41:00.5Zz"]
        {
            assert_eq!(parse_datetime(text, 0), Err(EXPECTED), "{}", String::from_utf8_lossy(text));
        }
        assert!(parse_datetime(b"2014-02-28T03:41:00Z UTC", 0).is_ok());
        assert_eq!(parse_datetime(b"2024-02-29 00:00:00", 0).unwrap(), 1_709_164_800 * S);
    }

    #[test]
    fn epoch_numbers_are_exact() {
        assert_eq!(parse_epoch(b"1661255968", S).unwrap(), 1_661_255_968 * S);
        assert_eq!(parse_epoch(b"1661255968.25", S).unwrap(), 1_661_255_968 * S + 250_000);
        assert_eq!(parse_epoch(b"1661255968111", 1_000).unwrap(), 1_661_255_968_111_000);
        assert_eq!(parse_epoch(b"1500.5", 1_000).unwrap(), 1_500_500);
        assert_eq!(parse_epoch(b"-2", S).unwrap(), -2 * S);
        assert!(parse_epoch(b"12a", S).is_err());
        assert!(parse_epoch(b"", S).is_err());
        assert!(parse_epoch(b"99999999999999999999", S).is_err());
        assert!(parse_epoch(b"9223372036854.999999", S).is_err());
        assert_eq!(parse_epoch(b"12.", S), Ok(12 * S));
        assert_eq!(parse_epoch(b".5", S), Ok(S / 2));
        for bad in [&b"."[..], b"-", b"1.2.3", b"+-5", b"1e3"] {
            assert!(parse_epoch(bad, S).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn auto_resolution_uses_header_then_magnitude() {
        use TimeFormat::Auto;
        assert_eq!(Resolved::resolve(Auto, "TimeStamp", b"1661255968"), Resolved::Epoch(S));
        assert_eq!(Resolved::resolve(Auto, "ts", b"1661255968111"), Resolved::Epoch(1_000));
        assert_eq!(Resolved::resolve(Auto, "ts", b"1661255968111222"), Resolved::Epoch(1));
        // 19 digits are nanoseconds (OTel's StartTimeUnixNano), never microseconds.
        assert_eq!(Resolved::resolve(Auto, "StartTimeUnixNano", b"1661255968111401482"), Resolved::EpochNs);
        assert_eq!(Resolved::resolve(Auto, "ts", b"1661255968111401482"), Resolved::EpochNs);
        assert_eq!(Resolved::EpochNs.parse(b"1661255968111401482", 0), Ok(1_661_255_968_111_401));
        assert!(Resolved::EpochNs.parse(b"16612559681114014820", 0).is_err());
        assert!(
            Resolved::resolve(Auto, "ts", b"16612559681114014820").parse(b"16612559681114014820", 0).is_err()
        );
        assert_eq!(Resolved::resolve(Auto, "t_ms", b"1500"), Resolved::Epoch(1_000));
        assert_eq!(Resolved::resolve(Auto, "Time", b"2022-08-23 11:59:28"), Resolved::Datetime);
        assert_eq!(Resolved::resolve(TimeFormat::EpochMs, "x", b"5"), Resolved::Epoch(1_000));
    }

    #[test]
    fn utc_times_print_back() {
        assert_eq!(format_utc(1_661_255_968 * S + 111_401), "2022-08-23 11:59:28.111401Z");
        assert_eq!(format_utc(0), "1970-01-01 00:00:00Z");
        assert_eq!(format_utc(1_709_164_800 * S), "2024-02-29 00:00:00Z");
        assert_eq!(format_utc(-S), "1969-12-31 23:59:59Z");
        // Past jiff's years, in whole 400-year cycles of the calendar.
        assert_eq!(format_utc(999_999_999_999_999_000), "33658-09-27 01:46:39.999Z");
        assert_eq!(format_utc(253_402_300_800 * S), "10000-01-01 00:00:00Z");
        assert_eq!(format_utc(-62_167_219_200 * S - 1), "-001-12-31 23:59:59.999999Z");
        assert_eq!(format_utc(i64::MIN / 2), "-144169-06-28 09:59:32.612096Z");
        assert_eq!(format_utc(i64::MAX), "294247-01-10 04:00:54.775807Z");
        assert_eq!(format_utc(i64::MIN), "-290308-12-21 19:59:05.224192Z");
        for day in (-200_000..200_000).step_by(997) {
            let us = day * 86_400 * S + 3_723_000_017;
            let date = EPOCH.checked_add(jiff::Span::new().days(day)).unwrap();
            assert_eq!(format_utc(us), format!("{} 01:02:03.000017Z", date), "{day}");
        }
    }

    #[test]
    fn offsets_parse() {
        assert_eq!(parse_offset("+02:00").unwrap(), 7200);
        assert_eq!(parse_offset("-0530").unwrap(), -19_800);
        assert_eq!(parse_offset("Z").unwrap(), 0);
        assert!(parse_offset("2h").is_err());
    }
}
