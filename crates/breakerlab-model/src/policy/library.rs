//! The breaker libraries `export` writes for, what it is given, why it refuses, and the value
//! syntaxes their configuration files use (durations, numbers). A leaf: each family's exporter
//! uses it without importing the rest of `policy`.

use crate::outcome::Classifier;
use crate::time::Dur;
use crate::{Error, Result};
use std::fmt::Write as _;

/// A library `export` can write for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Library {
    /// Spring Boot `resilience4j.circuitbreaker.instances.<name>` YAML.
    Resilience4j,
    /// Polly v8 C# `CircuitBreakerStrategyOptions`.
    Polly,
    /// opossum options object (JavaScript).
    Opossum,
    /// cockatiel TypeScript `circuitBreaker(...)`.
    Cockatiel,
    /// pybreaker constructor call (Python).
    Pybreaker,
    /// gobreaker v2 `Settings` (Go).
    Gobreaker,
    /// failsafe-go circuit breaker builder (Go).
    FailsafeGo,
    /// Envoy cluster `outlier_detection` YAML.
    Envoy,
    /// Istio `DestinationRule` YAML (`trafficPolicy.outlierDetection`).
    Istio,
    /// gRPC service config JSON (the `outlier_detection_experimental` balancer, gRFC A50).
    Grpc,
}

impl Library {
    /// Every library, in a fixed order.
    pub const ALL: [Library; 10] = [
        Library::Resilience4j,
        Library::Polly,
        Library::Opossum,
        Library::Cockatiel,
        Library::Pybreaker,
        Library::Gobreaker,
        Library::FailsafeGo,
        Library::Envoy,
        Library::Istio,
        Library::Grpc,
    ];

    /// The name used with `--as`.
    pub fn name(self) -> &'static str {
        match self {
            Library::Resilience4j => "resilience4j",
            Library::Polly => "polly",
            Library::Opossum => "opossum",
            Library::Cockatiel => "cockatiel",
            Library::Pybreaker => "pybreaker",
            Library::Gobreaker => "gobreaker",
            Library::FailsafeGo => "failsafe-go",
            Library::Envoy => "envoy",
            Library::Istio => "istio",
            Library::Grpc => "grpc",
        }
    }

    /// Parses a `--as` value.
    pub fn parse(name: &str) -> Result<Library, ExportError> {
        Library::ALL.into_iter().find(|l| l.name() == name.trim()).ok_or_else(|| {
            ExportError::UnknownLibrary {
                name: name.to_string(),
                known: Library::ALL.iter().map(|l| l.name()).collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// The preset exported when no `--policy` is given.
    pub fn default_preset(self) -> &'static str {
        match self {
            Library::Resilience4j => "resilience4j-count",
            Library::Polly => "polly",
            Library::Opossum => "opossum",
            Library::Cockatiel => "cockatiel-consecutive",
            Library::Pybreaker => "pybreaker",
            Library::Gobreaker => "gobreaker",
            Library::FailsafeGo => "failsafe-go",
            Library::Envoy => "envoy-outlier",
            Library::Istio => "istio-outlier",
            Library::Grpc => "grpc-outlier",
        }
    }
}

/// Why a configuration cannot be exported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// `--as` named no known library.
    #[error("unknown library `{name}` for --as; known libraries: {known}")]
    UnknownLibrary {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// The library cannot express the configuration.
    #[error("{library} cannot express policy `{label}`: {reason}")]
    Unsupported {
        /// The target library.
        library: &'static str,
        /// The policy's label (preset and overrides).
        label: String,
        /// What it lacks.
        reason: String,
    },
}

/// What a family's exporter is given besides its own parameters.
#[derive(Copy, Clone, Debug)]
pub struct ExportInput<'a> {
    /// The comment lines every export starts with (without the comment marker).
    pub header: &'a [String],
    /// The breaker instance's name, where the syntax has one.
    pub name: &'a str,
    /// What counts as a failure and what is ignored.
    pub classifier: Classifier,
}

pub fn commented(out: &mut String, marker: &str, header: &[String]) {
    for h in header {
        let _ = writeln!(out, "{marker} {h}");
    }
}

/// A float as configuration files write it: `50`, `12.5`, `0.1`.
pub fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") }
}

/// `us` microseconds in the largest of `units` (`(microseconds, format)`, largest first, the
/// last of 1 µs) that divides it: `format` with `{}` replaced by the count.
fn in_largest_unit(us: u64, units: &[(u64, &str)]) -> String {
    let (size, format) =
        units.iter().find(|(size, _)| us.is_multiple_of(*size)).unwrap_or(&units[units.len() - 1]);
    format.replace("{}", &(us / size).to_string())
}

/// Spring Boot's single-unit duration: `60s`, `1500ms`, `250us`.
pub fn spring_duration(d: Dur) -> String {
    in_largest_unit(d.micros(), &[(1_000_000, "{}s"), (1000, "{}ms"), (1, "{}us")])
}

/// A protobuf Duration in YAML: `10s`, `0.500s`.
pub fn proto_duration(d: Dur) -> String {
    let us = d.micros();
    let (s, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        format!("{s}s")
    } else {
        let f = format!("{frac:06}");
        format!("{s}.{}s", f.trim_end_matches('0'))
    }
}

/// A Go duration expression: `60 * time.Second`, `1500 * time.Millisecond`.
pub fn go_duration(d: Dur) -> String {
    if d.is_zero() {
        return "0".into();
    }
    let units = [
        (60_000_000, "{} * time.Minute"),
        (1_000_000, "{} * time.Second"),
        (1000, "{} * time.Millisecond"),
        (1, "{} * time.Microsecond"),
    ];
    in_largest_unit(d.micros(), &units)
}

/// A C# TimeSpan expression.
pub fn timespan(d: Dur) -> String {
    let us = d.micros();
    if us.is_multiple_of(1000) {
        in_largest_unit(
            us,
            &[(1_000_000, "TimeSpan.FromSeconds({})"), (1000, "TimeSpan.FromMilliseconds({})")],
        )
    } else {
        format!("TimeSpan.FromTicks({})", us * 10)
    }
}

/// Whole milliseconds for the JavaScript libraries.
pub fn js_ms(d: Dur, field: &str) -> Result<String> {
    let us = d.micros();
    if !us.is_multiple_of(1000) {
        return Err(Error::invalid(format!("{field} takes whole milliseconds; {d} is not")));
    }
    Ok((us / 1000).to_string())
}

/// Python seconds: `60`, `0.5`.
pub fn py_seconds(d: Dur) -> String {
    let us = d.micros();
    if us.is_multiple_of(1_000_000) { (us / 1_000_000).to_string() } else { num(us as f64 / 1e6) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_in_the_largest_whole_unit() {
        let us = Dur::from_micros;
        let spring: Vec<String> = [0, 60_000_000, 1_500_000, 250].map(|u| spring_duration(us(u))).into();
        assert_eq!(spring, ["0s", "60s", "1500ms", "250us"]);
        let go: Vec<String> = [0, 120_000_000, 90_000_000, 1_500_000, 7].map(|u| go_duration(us(u))).into();
        assert_eq!(
            go,
            ["0", "2 * time.Minute", "90 * time.Second", "1500 * time.Millisecond", "7 * time.Microsecond"]
        );
        let cs: Vec<String> = [5_000_000, 1_500_000, 1_500].map(|u| timespan(us(u))).into();
        assert_eq!(
            cs,
            ["TimeSpan.FromSeconds(5)", "TimeSpan.FromMilliseconds(1500)", "TimeSpan.FromTicks(15000)"]
        );
    }
}
