//! What the JSON importers share: reading the whole file (JSON exports are read in one piece and
//! deserialized borrowing from it, so no string of the file is copied), a located error for a
//! file that is not of the expected shape, and the small value types several exports use.

use super::TraceError;
use serde::Deserialize;
use std::borrow::Cow;
use std::path::Path;

/// Reads `path` into memory, naming it in the error.
pub fn read(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path)
        .map_err(|source| TraceError::Io { file: path.display().to_string(), source })
}

/// A JSON syntax or shape error, located by line and column, with the shape the format needs.
pub fn shape_error(file: &str, e: &serde_json::Error, shape: &str) -> TraceError {
    let what = match e.classify() {
        serde_json::error::Category::Eof => "the file ends early (truncated?)".to_string(),
        _ => e.to_string(),
    };
    TraceError::Format {
        file: file.to_string(),
        message: format!("line {}, column {}: {what}; expected {shape}", e.line(), e.column()),
    }
}

/// A bad value at a JSON path (`data.result[2].values[17]`), with what was expected.
pub fn bad_value(file: &str, path: &str, found: &str, expected: &str) -> TraceError {
    TraceError::Format {
        file: file.to_string(),
        message: format!("{path}: expected {expected}, found {found}"),
    }
}

/// Deserializes every JSON document in `text` (one, or several concatenated: paged exports, or
/// JSON lines from a collector), calling `each` on each in order.
pub fn each_document<'a, T: Deserialize<'a>>(
    file: &str,
    text: &'a str,
    shape: &str,
    mut each: impl FnMut(usize, T) -> Result<(), TraceError>,
) -> Result<usize, TraceError> {
    let mut n = 0;
    for doc in serde_json::Deserializer::from_str(text).into_iter::<T>() {
        let doc = doc.map_err(|e| shape_error(file, &e, shape))?;
        each(n, doc)?;
        n += 1;
    }
    if n == 0 {
        return Err(TraceError::Empty { file: file.to_string() });
    }
    Ok(n)
}

/// A scalar: a number that exports write either as a JSON number or as a string (protobuf JSON writes
/// 64-bit integers as strings: `"startTimeUnixNano": "1700000000000000000"`). Deserialized by
/// hand: serde's untagged enums buffer every value first, which is slow on a hot path.
#[derive(Debug, Clone, PartialEq)]
pub enum NumOrText<'a> {
    /// A whole JSON number.
    Int(i64),
    /// A JSON number with a fraction or exponent.
    Float(f64),
    /// A JSON string.
    Text(Cow<'a, str>),
    /// A JSON boolean (Jaeger tags).
    Bool(bool),
}

impl<'de: 'a, 'a> Deserialize<'de> for NumOrText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = NumOrText<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(NumOrText::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(NumOrText::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v).map(NumOrText::Int).map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(NumOrText::Float(v))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(NumOrText::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NumOrText::Text(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl NumOrText<'_> {
    /// The value as written, for messages.
    pub fn show(&self) -> String {
        match self {
            NumOrText::Int(v) => v.to_string(),
            NumOrText::Float(v) => v.to_string(),
            NumOrText::Text(s) => format!("{s:?}"),
            NumOrText::Bool(b) => b.to_string(),
        }
    }
    /// The value as text (strings as they are, numbers and booleans printed).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            NumOrText::Text(s) => Cow::Borrowed(s),
            other => Cow::Owned(other.show()),
        }
    }
    /// The value as an exact integer (a whole JSON number, or a string of digits).
    pub fn integer(&self) -> Option<i64> {
        match self {
            NumOrText::Int(v) => Some(*v),
            NumOrText::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(*v as i64),
            NumOrText::Float(_) => None,
            NumOrText::Text(s) => s.trim().parse().ok(),
            NumOrText::Bool(_) => None,
        }
    }
    /// The value as a number (a JSON number, or a string holding one; `NaN` and `Inf` included).
    pub fn number(&self) -> Option<f64> {
        match self {
            NumOrText::Int(v) => Some(*v as f64),
            NumOrText::Float(v) => Some(*v),
            NumOrText::Text(s) => s.trim().parse().ok(),
            NumOrText::Bool(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_texts_read_exactly() {
        let v: Vec<NumOrText> =
            serde_json::from_str(r#"[1700000000000000001, "1700000000000000001", 1.5, "NaN", "x\"y"]"#)
                .unwrap();
        assert_eq!(v[0].integer(), Some(1_700_000_000_000_000_001));
        assert_eq!(v[1].integer(), Some(1_700_000_000_000_000_001));
        assert_eq!(v[2].number(), Some(1.5));
        assert!(v[3].number().unwrap().is_nan());
        assert_eq!(v[4].show(), "\"x\\\"y\"");
        let e = serde_json::from_str::<NumOrText>("[1]").unwrap_err().to_string();
        assert!(e.contains("a number or a string"), "{e}");
    }

    #[test]
    fn truncated_documents_are_located() {
        let e =
            each_document::<Vec<i64>>("f.json", "[1, 2", "a list", |_, _| Ok(())).unwrap_err().to_string();
        assert!(e.starts_with("f.json: line 1, column 5: the file ends early"), "{e}");
        let n = each_document::<Vec<i64>>("f.json", "[1]\n[2, 3]\n", "a list", |_, _| Ok(())).unwrap();
        assert_eq!(n, 2);
        assert!(matches!(
            each_document::<Vec<i64>>("f.json", " ", "a list", |_, _| Ok(())),
            Err(TraceError::Empty { .. })
        ));
    }
}
