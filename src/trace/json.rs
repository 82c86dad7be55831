//! What the JSON importers share: reading the whole file, its documents (one, or several back to
//! back: paged exports, JSON lines) deserialized with `serde_json`, errors located by line and
//! column with the shape the format needs, the message for a bad value at a JSON path, and the
//! two value types exports write loosely ([`Scalar`], [`Number`]).
//!
//! A file that breaks the shape (a wrong type, a missing field, a cut-off file) is refused with
//! `serde_json`'s line and column: those of the last character it read, which for a value of the
//! wrong type is the value's end rather than its start. Values of the right type that mean nothing (a time that
//! goes back, a number that is not one) are refused by the importers, named by their JSON path.

use super::TraceError;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// Reads `path` into memory, naming it in the error.
pub fn read(path: &Path) -> Result<String, TraceError> {
    Ok(crate::scenario::read_input_text(path, crate::scenario::MAX_DATA_BYTES)?)
}

/// A bad value at a JSON path (`data.result[2].values[17]`), with what was expected.
pub fn bad_value(file: &str, path: &str, found: &str, expected: &str) -> TraceError {
    TraceError::Format {
        file: file.to_string(),
        message: format!("{path}: expected {expected}, found {found}"),
    }
}

/// Deserializes every document of `text` (a leading byte-order mark is skipped), calling `each`
/// with each one and its index; returns how many there were. A text with none is
/// [`TraceError::Empty`]; one that breaks the shape is refused at its line and column, with
/// `shape` (the format's shape, for the message).
pub fn documents<'a, T: Deserialize<'a>>(
    file: &str,
    text: &'a str,
    shape: &str,
    mut each: impl FnMut(T, usize) -> Result<(), TraceError>,
) -> Result<usize, TraceError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let mut n = 0;
    for doc in serde_json::Deserializer::from_str(text).into_iter::<T>() {
        each(doc.map_err(|e| located(file, shape, &e))?, n)?;
        n += 1;
    }
    if n == 0 {
        return Err(TraceError::Empty { file: file.to_string() });
    }
    Ok(n)
}

/// `serde_json`'s error as a [`TraceError::Format`]: line and column, what is wrong (a file that
/// ends inside a value says it looks truncated) and the shape expected.
fn located(file: &str, shape: &str, e: &serde_json::Error) -> TraceError {
    let (line, column) = (e.line(), e.column());
    let text = e.to_string();
    let what = if e.is_eof() {
        "the file ends early (truncated?)"
    } else {
        text.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&text)
    };
    TraceError::Format {
        file: file.to_string(),
        message: format!("line {line}, column {column}: {what}; expected {shape}"),
    }
}

/// A scalar as written: exports put numbers in strings (protobuf JSON's 64-bit integers,
/// Prometheus' values) and tags may be booleans. A missing field reads as `Null`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Scalar<'a> {
    /// A JSON number that fits an `i64` exactly.
    Int(i64),
    /// Any other JSON number (a fraction, an exponent, beyond `i64`).
    Float(f64),
    /// A JSON string, unescaped (borrowed from the text unless it has escapes).
    Text(Cow<'a, str>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    #[default]
    Null,
}

impl Scalar<'_> {
    /// The value for messages: strings quoted, others as JSON writes them.
    pub fn show(&self) -> String {
        match self {
            Scalar::Text(s) => format!("{s:?}"),
            other => other.text().map_or_else(|| "null".into(), Cow::into_owned),
        }
    }

    /// The value as text (numbers and booleans as JSON writes them); `None` for null.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Scalar::Int(n) => Some(Cow::Owned(n.to_string())),
            Scalar::Float(v) => Some(Cow::Owned(v.to_string())),
            Scalar::Text(s) => Some(Cow::Borrowed(s)),
            Scalar::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            Scalar::Null => None,
        }
    }

    /// The value of a JSON number (not one in a string).
    pub fn number(&self) -> Option<f64> {
        match *self {
            Scalar::Int(n) => Some(n as f64),
            Scalar::Float(v) => Some(v),
            _ => None,
        }
    }

    /// The value as an exact integer (a whole number, or a string of one).
    pub fn integer(&self) -> Option<i64> {
        match self {
            Scalar::Int(n) => Some(*n),
            Scalar::Float(v) => (v.fract() == 0.0 && v.abs() < 9.0e18).then_some(*v as i64),
            Scalar::Text(s) => s.trim_ascii().parse().ok(),
            _ => None,
        }
    }
}

/// Reads a [`Scalar`]; `lenient` reads an array or object as `Null` instead of refusing it.
struct ScalarVisitor {
    lenient: bool,
}

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, a string, true, false or null")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar<'de>, E> {
        Ok(i64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
        Ok(Scalar::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
        if !self.lenient {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        IgnoredAny.visit_seq(seq).map(|_| Scalar::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
        if !self.lenient {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        IgnoredAny.visit_map(map).map(|_| Scalar::Null)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor { lenient: false })
    }
}

/// A value that is a [`Scalar`] when it is one; an array or object reads as `Null` (Jaeger tags
/// of other kinds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnyScalar<'a>(pub Scalar<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for AnyScalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor { lenient: true }).map(AnyScalar)
    }
}

/// A JSON number (not in a string); `Option<Number>` reads `null` as `None`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Number(pub f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Number, E> {
                Ok(Number(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_their_path() {
        let e = bad_value("f.json", "data.result[0].values[3][1]", "\"x\"", "a number").to_string();
        assert_eq!(e, "f.json: data.result[0].values[3][1]: expected a number, found \"x\"");
        let e = read(Path::new("/nonexistent/f.json")).unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/f.json: "), "{e}");
    }

    #[derive(Deserialize)]
    #[serde(expecting = "an object")]
    struct Doc<'a> {
        #[serde(borrow)]
        a: Vec<Scalar<'a>>,
    }

    fn docs(text: &str) -> Result<Vec<Vec<Scalar<'_>>>, String> {
        let mut out = Vec::new();
        documents("f.json", text, "a test", |d: Doc, _| {
            out.push(d.a);
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    #[test]
    fn scalars_as_written() {
        let got = docs(r#"{"a": [1, -2, 2.5, 1e3, 18446744073709551615, "x\"y", "é", null, true]}"#).unwrap();
        let a = &got[0];
        assert_eq!(
            (a[0].integer(), a[1].integer(), a[2].integer(), a[3].integer()),
            (Some(1), Some(-2), None, Some(1000))
        );
        assert_eq!(a[4].integer(), None);
        assert_eq!(a[5], Scalar::Text(Cow::Owned("x\"y".into())));
        assert!(matches!(&a[6], Scalar::Text(Cow::Borrowed("é"))));
        assert_eq!(
            (a[5].show(), a[2].show(), a[7].show(), a[8].show()),
            ("\"x\\\"y\"".into(), "2.5".into(), "null".into(), "true".into())
        );
        assert_eq!(Scalar::Text(" 1717243200275431914 ".into()).integer(), Some(1_717_243_200_275_431_914));
        assert_eq!(Scalar::Text("99999999999999999999".into()).integer(), None);
        let e = docs(r#"{"a": [{}]}"#).unwrap_err();
        assert_eq!(
            e,
            "f.json: line 1, column 9: invalid type: map, expected a number, a string, true, false or null; expected a test"
        );
    }

    #[test]
    fn documents_back_to_back_and_located_errors() {
        assert_eq!(docs("\u{FEFF}{\"a\": [1]}\n{\"a\": []}{\"a\": [2]}\n").unwrap().len(), 3);
        assert_eq!(docs(" \n").unwrap_err(), TraceError::Empty { file: "f.json".into() }.to_string());
        let cases = [
            ("{\n  \"a\": [1, 2", "line 2, column 12: the file ends early (truncated?)"),
            ("{\"a\": [1, x]}", "line 1, column 11: expected value"),
            ("\"x\"", "line 1, column 3: invalid type: string \"x\", expected an object"),
            ("{\"b\": 1}", "line 1, column 8: missing field `a`"),
        ];
        for (text, want) in cases {
            assert_eq!(docs(text).unwrap_err(), format!("f.json: {want}; expected a test"), "{text}");
        }
    }

    #[test]
    fn numbers_parse_exactly_as_the_standard_parser() {
        for t in [
            "0.2485",
            "1717243200.781",
            "1e-3",
            "2.5E+2",
            "9007199254740993",
            "1.7976931348623157e308",
            "5e-324",
            "0.1234567890123456789",
            "123456789012345678901234567890",
            // Numbers serde_json rounds one unit off without its `float_roundtrip` feature.
            "122.416294033786585",
            "10587.436593658975",
            "0.9215686321258545",
            "1.5777777777770001",
            "0.9999999999999999",
        ] {
            let want = t.parse::<f64>().unwrap().to_bits();
            let n: Number = serde_json::from_str(t).unwrap();
            assert_eq!(n.0.to_bits(), want, "{t}");
            let s: Scalar = serde_json::from_str(t).unwrap();
            assert_eq!(s.number().map(f64::to_bits), Some(want), "{t}");
        }
        let e = serde_json::from_str::<Number>("\"1\"").unwrap_err().to_string();
        assert!(e.starts_with("invalid type: string \"1\", expected a number"), "{e}");
    }
}
