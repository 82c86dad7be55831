//! Constraints of a sweep's objective (`missed_incidents == 0`, `p99_latency <= "2s"`): parsing
//! against the known metric columns, unit conversion of durations, and evaluation on a value.
//!
//! The names a user may write (`p99_latency`, `detection_delay`) are the metrics' aliases
//! ([`Metric::aliases`]).

use crate::metrics::{Metric, Unit};
use crate::time::Dur;
use crate::{Error, Result};
use std::fmt;

/// The metric a user names (its column name or an alias, see [`Metric::aliases`]), when it is
/// one of the known metric `columns`.
pub fn resolve_metric<S: AsRef<str>>(name: &str, columns: &[S]) -> Result<Metric> {
    let name = name.trim();
    match Metric::parse(name) {
        Some(m) if columns.iter().any(|c| c.as_ref() == m.name()) => Ok(m),
        _ => {
            let known: Vec<&str> = columns.iter().map(|c| c.as_ref()).collect();
            Err(Error::invalid(format!("unknown metric `{name}` (known metrics: {})", known.join(", "))))
        }
    }
}

/// A comparison operator of a constraint.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `>`
    Gt,
}

impl Op {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
        }
    }
}

/// A validated constraint: `metric op value`, with the value in the metric's own unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// The metric it applies to.
    pub metric: Metric,
    /// The comparison.
    pub op: Op,
    /// The bound, in the metric's unit (ms for `*_ms`, seconds for `*_s`).
    pub value: f64,
    /// The constraint as the user wrote it, for messages.
    pub text: String,
}

/// Relative tolerance for `==` and `!=` on means of integer counts.
const EQ_TOLERANCE: f64 = 1e-9;

impl Constraint {
    /// Parses `<metric> <op> <value>` against the known metric `columns`.
    ///
    /// The value is a number (in the metric's unit), a duration such as `2s` or `"900ms"`
    /// (time metrics only; converted to ms or s), or a percentage such as `99.9%`.
    pub fn parse<S: AsRef<str>>(text: &str, columns: &[S]) -> Result<Constraint> {
        let fail = |why: String| Error::invalid(format!("constraint {text:?}: {why}"));
        let Some(at) = text.find(['=', '!', '<', '>']) else {
            return Err(fail(
                "expected `<metric> <op> <value>` with an operator among ==, !=, <=, <, >=, >".into(),
            ));
        };
        let (lhs, rest) = text.split_at(at);
        let (op, rhs) =
            [("==", Op::Eq), ("!=", Op::Ne), ("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)]
                .into_iter()
                .find_map(|(sym, op)| rest.strip_prefix(sym).map(|r| (op, r)))
                .ok_or_else(|| {
                    let sym: String = rest.chars().take_while(|c| "=!<>".contains(*c)).collect();
                    fail(format!("unknown operator `{sym}`: expected one of ==, !=, <=, <, >=, >"))
                })?;
        if rhs.starts_with(['=', '<', '>', '!']) {
            let sym: String = rest.chars().take_while(|c| "=!<>".contains(*c)).collect();
            return Err(fail(format!("unknown operator `{sym}`: expected one of ==, !=, <=, <, >=, >")));
        }
        let name = lhs.trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(fail(format!("expected a metric name before `{}`, found {name:?}", op.as_str())));
        }
        let metric = resolve_metric(name, columns).map_err(|e| fail(e.to_string()))?;
        let value = parse_value(rhs, metric).map_err(|e| fail(e.to_string()))?;
        Ok(Constraint { metric, op, value, text: text.trim().to_string() })
    }

    /// Whether `value` meets the constraint. A metric with no value (no incidents, so no
    /// detection delay) has nothing to violate: it meets every constraint.
    pub fn holds(&self, value: Option<f64>) -> bool {
        let Some(v) = value else { return true };
        let close = (v - self.value).abs() <= EQ_TOLERANCE * self.value.abs().max(1.0);
        match self.op {
            Op::Eq => close,
            Op::Ne => !close,
            Op::Le => v <= self.value || close,
            Op::Lt => v < self.value && !close,
            Op::Ge => v >= self.value || close,
            Op::Gt => v > self.value && !close,
        }
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.metric, self.op.as_str(), self.value)
    }
}

/// The bound of a constraint, in the unit of `metric`.
fn parse_value(raw: &str, metric: Metric) -> Result<f64> {
    let trimmed = raw.trim();
    let unquoted = trimmed
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| trimmed.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(trimmed)
        .trim();
    if unquoted.is_empty() {
        return Err(Error::invalid("expected a value after the operator"));
    }
    if let Some(pct) = unquoted.strip_suffix('%') {
        return match pct.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v / 100.0),
            _ => Err(Error::invalid(format!("expected a percentage such as 99.9%, found {unquoted:?}"))),
        };
    }
    if let Ok(v) = unquoted.parse::<f64>() {
        return if v.is_finite() {
            Ok(v)
        } else {
            Err(Error::invalid(format!("expected a finite number, found {unquoted:?}")))
        };
    }
    match (Dur::parse(unquoted), metric.unit()) {
        (Ok(d), Unit::Millis) => Ok(d.as_millis_f64()),
        (Ok(d), Unit::Seconds) => Ok(d.as_secs_f64()),
        (Ok(_), Unit::Plain) => Err(Error::invalid(format!(
            "`{metric}` is not a time metric: expected a number, found the duration {unquoted:?}"
        ))),
        (Err(e), _) => Err(Error::invalid(format!(
            "expected a number or a duration such as \"2s\", found {unquoted:?} ({e})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [&str; 7] = [
        "false_opens",
        "missed_incidents",
        "detection_delay_mean_s",
        "detection_delay_p95_s",
        "latency_p99_ms",
        "availability",
        "wasted_quota",
    ];

    #[test]
    fn parses_the_spellings_of_the_design_and_the_brief() {
        let c = Constraint::parse("missed_incidents == 0", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("missed_incidents", Op::Eq, 0.0));
        let c = Constraint::parse("false_opens<=1", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("false_opens", Op::Le, 1.0));
        let c = Constraint::parse("latency_p99_ms <= 2s", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("latency_p99_ms", Op::Le, 2000.0));
        let c = Constraint::parse("p99_latency <= \"2s\"", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("latency_p99_ms", Op::Le, 2000.0));
        let c = Constraint::parse("detection_delay < '1m30s'", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("detection_delay_mean_s", Op::Lt, 90.0));
        let c = Constraint::parse("detection_delay_p95 > 500ms", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("detection_delay_p95_s", Op::Gt, 0.5));
        let c = Constraint::parse("availability >= 99.5%", &COLS).unwrap();
        assert_eq!((c.metric.name(), c.op, c.value), ("availability", Op::Ge, 0.995));
        let c = Constraint::parse("wasted_quota != 3", &COLS).unwrap();
        assert_eq!((c.op, c.value), (Op::Ne, 3.0));
        let c = Constraint::parse("latency_p99_ms <= 2500", &COLS).unwrap();
        assert_eq!(c.value, 2500.0);
    }

    #[test]
    fn errors_name_the_constraint_and_the_problem() {
        for (text, expected) in [
            ("flops <= 1", "unknown metric `flops`"),
            ("false_opens = 1", "unknown operator `=`"),
            ("false_opens => 1", "unknown operator `=>`"),
            ("false_opens <== 1", "unknown operator `<==`"),
            ("false_opens 1", "expected `<metric> <op> <value>`"),
            ("false_opens <=", "expected a value"),
            ("false_opens <= 2s", "not a time metric"),
            ("latency_p99_ms <= fast", "expected a number or a duration"),
            ("<= 3", "expected a metric name"),
        ] {
            let err = Constraint::parse(text, &COLS).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
            assert!(err.contains(&format!("{text:?}")), "{text:?}: {err}");
        }
    }

    #[test]
    fn evaluation_follows_the_operator_and_skips_missing_values() {
        let le = Constraint::parse("false_opens <= 1", &COLS).unwrap();
        assert!(le.holds(Some(1.0)));
        assert!(le.holds(Some(0.5)));
        assert!(!le.holds(Some(1.5)));
        assert!(le.holds(None));
        let eq = Constraint::parse("missed_incidents == 0", &COLS).unwrap();
        assert!(eq.holds(Some(0.0)));
        assert!(!eq.holds(Some(0.25)));
        let lt = Constraint::parse("false_opens < 1", &COLS).unwrap();
        assert!(!lt.holds(Some(1.0)));
        assert!(lt.holds(Some(0.0)));
        let gt = Constraint::parse("availability > 0.99", &COLS).unwrap();
        assert!(gt.holds(Some(0.995)));
        assert!(!gt.holds(Some(0.99)));
        let ge = Constraint::parse("availability >= 0.99", &COLS).unwrap();
        assert!(ge.holds(Some(0.99)));
        // Mean of three replicates of 0.1 + 0.2 is not exactly 0.3, but meets == 0.3.
        let eq = Constraint::parse("wasted_quota == 0.3", &COLS).unwrap();
        assert!(eq.holds(Some(0.1 + 0.2)));
        let ne = Constraint::parse("wasted_quota != 0.3", &COLS).unwrap();
        assert!(!ne.holds(Some(0.1 + 0.2)));
    }

    #[test]
    fn aliases_resolve_to_columns() {
        assert_eq!(resolve_metric("p99_latency", &COLS).unwrap().name(), "latency_p99_ms");
        assert_eq!(resolve_metric("latency_p99", &COLS).unwrap().name(), "latency_p99_ms");
        assert_eq!(resolve_metric("detection_delay", &COLS).unwrap().name(), "detection_delay_mean_s");
        assert!(resolve_metric("p95_latency", &COLS).is_err());
        assert_eq!(Metric::LatencyP99Ms.unit(), Unit::Millis);
        assert_eq!(Metric::DetectionDelayMeanS.unit(), Unit::Seconds);
        assert_eq!(Metric::FalseOpens.unit(), Unit::Plain);
    }
}
