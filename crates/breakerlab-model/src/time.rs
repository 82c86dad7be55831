//! Simulation time: integer microseconds, and the one parser for durations written in files
//! and on the command line ("900ms", "15m", "7d", "1h30m", "1.5s").
//!
//! Nothing here reads the wall clock: a [`SimTime`] is microseconds since the scenario's start.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Microseconds in one second.
pub const MICROS_PER_SEC: u64 = 1_000_000;

/// A point in simulated time: microseconds since the scenario's start.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A non-negative span of simulated time in microseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl SimTime {
    /// The scenario's start.
    pub const ZERO: SimTime = SimTime(0);
    /// Microseconds since the start.
    pub fn micros(self) -> u64 {
        self.0
    }
    /// Seconds since the start, as a float (for display and charts only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    /// Zero length.
    pub const ZERO: Dur = Dur(0);
    /// The longest representable duration (used as "never").
    pub const MAX: Dur = Dur(u64::MAX);
    /// From whole microseconds.
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us)
    }
    /// From whole milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * MICROS_PER_SEC)
    }
    /// From fractional seconds, rounded to the nearest microsecond (negative and NaN give zero).
    pub fn from_secs_f64(s: f64) -> Dur {
        if s.is_nan() || s <= 0.0 {
            Dur::ZERO
        } else if s >= u64::MAX as f64 / MICROS_PER_SEC as f64 {
            Dur::MAX
        } else {
            Dur((s * MICROS_PER_SEC as f64).round() as u64)
        }
    }
    /// Microseconds.
    pub fn micros(self) -> u64 {
        self.0
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }
    /// Milliseconds as a float.
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    /// True for a zero-length duration.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Multiply by a non-negative factor, rounding to the nearest microsecond and saturating.
    pub fn mul_f64(self, k: f64) -> Dur {
        Dur::from_secs_f64(self.as_secs_f64() * k)
    }

    /// Parse a duration such as `900ms`, `15m`, `7d`, `1h30m`, `1.5s` or `0`.
    ///
    /// Units: `us` (or `µs`), `ms`, `s`, `m` (or `min`), `h`, `d`, `w`. A bare number other than
    /// zero is refused, because its unit would be a guess.
    pub fn parse(text: &str) -> Result<Dur, DurError> {
        let s = text.trim();
        if s.is_empty() {
            return Err(DurError::new(text, "an empty string"));
        }
        if s.starts_with('-') {
            return Err(DurError::new(text, "a negative duration"));
        }
        if s.chars().all(|c| c == '0' || c == '.') {
            return Ok(Dur::ZERO);
        }
        let bytes = s.as_bytes();
        let mut i = 0;
        let mut total: u128 = 0;
        while i < bytes.len() {
            while i < bytes.len() && bytes[i] == b' ' {
                i += 1;
            }
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            if start == i {
                return Err(DurError::new(text, "a number before each unit"));
            }
            let number = &s[start..i];
            let unit_start = i;
            while i < bytes.len() && !(bytes[i].is_ascii_digit() || bytes[i] == b'.' || bytes[i] == b' ') {
                i += 1;
            }
            let unit = &s[unit_start..i];
            let scale: u128 = match unit {
                "us" | "µs" => 1,
                "ms" => 1_000,
                "s" => 1_000_000,
                "m" | "min" => 60_000_000,
                "h" => 3_600_000_000,
                "d" => 86_400_000_000,
                "w" => 604_800_000_000,
                "" => return Err(DurError::new(text, "a unit after the number (us, ms, s, m, h, d, w)")),
                _ => return Err(DurError::new(text, "a unit among us, ms, s, m, h, d, w")),
            };
            total += scaled(number, scale).ok_or_else(|| DurError::new(text, "a plain decimal number"))?;
        }
        u64::try_from(total)
            .map(Dur)
            .map_err(|_| DurError::new(text, "a duration shorter than 500,000 years"))
    }
}

/// `number × scale` in whole microseconds, exact for decimals down to the microsecond.
fn scaled(number: &str, scale: u128) -> Option<u128> {
    let (int_part, frac_part) = match number.split_once('.') {
        Some((a, b)) => (a, b),
        None => (number, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return None;
    }
    let int: u128 = if int_part.is_empty() { 0 } else { int_part.parse().ok()? };
    let mut micros = int.checked_mul(scale)?;
    let mut place = scale;
    for digit in frac_part.bytes() {
        place /= 10;
        micros += u128::from(digit - b'0') * place;
    }
    Some(micros)
}

/// A duration that could not be parsed: the text and what was expected instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?}: expected {expected}")]
pub struct DurError {
    /// The text as written.
    pub text: String,
    /// What a valid duration needs.
    pub expected: &'static str,
}

impl DurError {
    fn new(text: &str, expected: &'static str) -> DurError {
        let expected = match expected {
            "an empty string" => "a duration such as \"900ms\", \"15m\" or \"7d\", not an empty string",
            "a negative duration" => "a non-negative duration such as \"900ms\" or \"15m\"",
            other => other,
        };
        DurError { text: text.to_string(), expected }
    }
}

impl fmt::Display for Dur {
    /// The shortest exact form in days down to microseconds: `900ms`, `15m`, `1h30m`, `7d`;
    /// `1.5s` is written `1s500ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("0s");
        }
        const UNITS: [(u64, &str); 6] = [
            (86_400_000_000, "d"),
            (3_600_000_000, "h"),
            (60_000_000, "m"),
            (1_000_000, "s"),
            (1_000, "ms"),
            (1, "us"),
        ];
        let mut rest = self.0;
        for (scale, unit) in UNITS {
            if rest >= scale {
                write!(f, "{}{}", rest / scale, unit)?;
                rest %= scale;
            }
        }
        Ok(())
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Dur> for SimTime {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<SimTime> for SimTime {
    type Output = Dur;
    fn sub(self, other: SimTime) -> Dur {
        self.since(other)
    }
}

impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string such as \"900ms\", \"15m\" or \"7d\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Dur, E> {
                Dur::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dur, E> {
                if v == 0 {
                    Ok(Dur::ZERO)
                } else {
                    Err(E::custom(format!(
                        "expected a duration string with a unit such as \"{v}s\" or \"{v}ms\", found the bare number {v}"
                    )))
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Dur, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_compounds() {
        assert_eq!(Dur::parse("900ms").unwrap(), Dur::from_millis(900));
        assert_eq!(Dur::parse("15m").unwrap(), Dur::from_secs(900));
        assert_eq!(Dur::parse("7d").unwrap(), Dur::from_secs(7 * 86_400));
        assert_eq!(Dur::parse("1h30m").unwrap(), Dur::from_secs(5_400));
        assert_eq!(Dur::parse("1h 30m").unwrap(), Dur::from_secs(5_400));
        assert_eq!(Dur::parse("1.5s").unwrap(), Dur::from_millis(1_500));
        assert_eq!(Dur::parse("0.25ms").unwrap(), Dur::from_micros(250));
        assert_eq!(Dur::parse("250us").unwrap(), Dur::from_micros(250));
        assert_eq!(Dur::parse("2w").unwrap(), Dur::from_secs(14 * 86_400));
        assert_eq!(Dur::parse("10min").unwrap(), Dur::from_secs(600));
        assert_eq!(Dur::parse("0").unwrap(), Dur::ZERO);
    }

    #[test]
    fn refuses_bad_text_with_reason() {
        for (text, expected) in [
            ("", "empty"),
            ("-5s", "non-negative"),
            ("5", "a unit after the number"),
            ("5x", "a unit among"),
            ("ms", "a number before each unit"),
            ("1.2.3s", "plain decimal"),
        ] {
            let err = Dur::parse(text).unwrap_err();
            assert!(err.to_string().contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn display_round_trips() {
        for text in ["900ms", "15m", "7d", "1h30m", "1s500ms", "250us", "14d", "0s"] {
            let d = Dur::parse(text).unwrap();
            assert_eq!(d.to_string(), text);
            assert_eq!(Dur::parse(&d.to_string()).unwrap(), d);
        }
    }

    #[test]
    fn time_arithmetic_saturates() {
        let t = SimTime(5) + Dur(10);
        assert_eq!(t, SimTime(15));
        assert_eq!(SimTime(3) - SimTime(10), Dur::ZERO);
        assert_eq!(SimTime(u64::MAX) + Dur(1), SimTime(u64::MAX));
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(0.0000015), Dur(2));
    }
}
