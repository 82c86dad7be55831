//! Validated numbers read from files: a ratio in [0, 1] and a positive rate. Validation happens
//! while deserializing, so a bad value is reported at its own line and column.

use crate::time::Dur;
use crate::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize};

/// A checked `f64` newtype: `new` refuses a value `ok` rejects ("expected `expected`, found
/// ..."), and deserializing checks the same way, so a bad value is reported at its place.
macro_rules! checked_number {
    ($(#[$attr:meta])* $name:ident: |$v:ident| $ok:expr, $expected:literal) => {
        $(#[$attr])*
        #[derive(Copy, Clone, Debug, PartialEq, PartialOrd, Serialize)]
        #[serde(transparent)]
        pub struct $name(pub f64);

        impl $name {
            #[doc = concat!("Checks that `v` is ", $expected, ".")]
            pub fn new($v: f64) -> Result<$name> {
                if $ok { Ok($name($v)) } else { Err(Error::invalid(format!("expected {}, found {}", $expected, $v))) }
            }
            /// The value.
            pub fn get(self) -> f64 {
                self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                $name::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
            }
        }
    };
}

checked_number! {
    /// A fraction in `[0, 1]` (an error rate, a threshold, a duty cycle).
    #[derive(Default)]
    Ratio: |v| v.is_finite() && (0.0..=1.0).contains(&v), "a ratio between 0 and 1"
}

checked_number! {
    /// A strictly positive, finite number (a request rate per second, a multiplier).
    Positive: |v| v.is_finite() && v > 0.0, "a number greater than 0"
}

/// A duration longer than zero (a timeout, a period), for `#[serde(deserialize_with)]`.
pub fn de_positive_dur<'de, D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
    let v = Dur::deserialize(d)?;
    if v.is_zero() {
        return Err(serde::de::Error::custom("expected a duration longer than 0"));
    }
    Ok(v)
}

/// As [`de_positive_dur`], for an optional field.
pub fn de_positive_dur_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Dur>, D::Error> {
    de_positive_dur(d).map(Some)
}

/// A whole number from 1 to `u32::MAX` (a count, a number of instances).
pub fn de_at_least_one<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = i64::deserialize(d)?;
    if !(1..=i64::from(u32::MAX)).contains(&v) {
        return Err(serde::de::Error::custom(format!("expected a whole number of at least 1, found {v}")));
    }
    Ok(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Doc {
        r: Ratio,
    }

    #[test]
    fn ratio_bounds_are_checked_while_parsing() {
        let ok: Doc = toml::from_str("r = 0.5").unwrap();
        assert_eq!(ok.r.get(), 0.5);
        let ok: Doc = toml::from_str("r = 1").unwrap();
        assert_eq!(ok.r.get(), 1.0);
        let err = toml::from_str::<Doc>("r = 1.5").err().unwrap().to_string();
        assert!(err.contains("between 0 and 1"), "{err}");
        assert!(err.contains("line 1"), "{err}");
        assert!(Positive::new(0.0).is_err());
        assert!(Positive::new(f64::NAN).is_err());
    }
}
