//! Constraints of a sweep's objective (`missed_incidents == 0`, `p99_latency <= "2s"`): parsing
//! against the known metric columns, unit conversion of durations, and evaluation on the
//! replicates of one (scenario, configuration).
//!
//! A constraint holds per replicate unless it says otherwise:
//! - `missed_incidents == 0`: in every replicate (the default scope);
//! - `missed_incidents == 0 in 95 % of replicates`: in at least that share of them;
//! - `worst latency_p99_ms <= 2s`: on the replicate worst for the metric (the highest value, or
//!   the lowest for `availability`);
//! - `mean missed_incidents <= 0.5`: on the mean over replicates.
//!
//! A run in which the metric has no value (no incident, so no detection delay) breaks nothing.
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

/// Which replicates of a (scenario, configuration) a constraint is checked on.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scope {
    /// Every replicate (the default).
    Every,
    /// At least this share of the replicates, in (0, 1].
    Share(f64),
    /// The replicate worst for the metric (highest value; lowest for `availability`).
    Worst,
    /// The mean over replicates.
    Mean,
}

/// The constraint the sweeps and `compare` apply when none is given: no incident missed, in
/// any replicate.
pub const DEFAULT_CONSTRAINT: &str = "missed_incidents == 0";

/// A validated constraint: `metric op value` on a scope of replicates, with the value in the
/// metric's own unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// The metric it applies to.
    pub metric: Metric,
    /// The comparison.
    pub op: Op,
    /// The bound, in the metric's unit (ms for `*_ms`, seconds for `*_s`).
    pub value: f64,
    /// Which replicates it is checked on.
    pub scope: Scope,
    /// The constraint as the user wrote it, for messages.
    pub text: String,
}

/// A constraint checked on the replicates of one (scenario, configuration).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Judged {
    /// Whether it holds.
    pub holds: bool,
    /// Replicates whose value breaks the bound.
    pub breaking: usize,
    /// Replicates looked at.
    pub replicates: usize,
    /// The value to show: the mean (`mean`), the worst replicate's (`worst`), else the value of
    /// the breaking replicate farthest from the bound (`None` when nothing breaks it and
    /// nothing is to show).
    pub shown: Option<f64>,
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
        let (scope, body) = split_scope(text).map_err(|e| fail(e.to_string()))?;
        let Some(at) = body.find(['=', '!', '<', '>']) else {
            return Err(fail(
                "expected `<metric> <op> <value>` with an operator among ==, !=, <=, <, >=, >".into(),
            ));
        };
        let (lhs, rest) = body.split_at(at);
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
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
            return Err(fail(format!("expected a metric name before `{}`, found {name:?}", op.as_str())));
        }
        let metric = resolve_metric(name, columns).map_err(|e| fail(e.to_string()))?;
        let value = parse_value(rhs, metric).map_err(|e| fail(e.to_string()))?;
        Ok(Constraint { metric, op, value, scope, text: text.trim().to_string() })
    }

    /// The scope in words: `in every replicate`, `in at least 95 % of replicates`, `on the
    /// worst replicate`, `on the mean over replicates`.
    pub fn scope_words(&self) -> String {
        match self.scope {
            Scope::Every => "in every replicate".into(),
            Scope::Share(p) => format!("in at least {} % of replicates", super::recommend::num(100.0 * p)),
            Scope::Worst => "on the worst replicate".into(),
            Scope::Mean => "on the mean over replicates".into(),
        }
    }

    /// Checks the constraint on the replicates of one (scenario, configuration): `values` are
    /// the metric's value in each replicate (`None`: no value there, which breaks nothing).
    pub fn judge(&self, values: &[Option<f64>]) -> Judged {
        let replicates = values.len();
        let present: Vec<f64> = values.iter().flatten().copied().collect();
        let breaking: Vec<f64> = present.iter().copied().filter(|v| !self.holds(Some(*v))).collect();
        let farthest =
            breaking.iter().copied().max_by(|a, b| (a - self.value).abs().total_cmp(&(b - self.value).abs()));
        let (holds, shown) = match self.scope {
            Scope::Every => (breaking.is_empty(), farthest),
            Scope::Share(p) => {
                let meeting = (replicates - breaking.len()) as f64;
                (meeting >= p * replicates as f64 - EQ_TOLERANCE, farthest)
            }
            Scope::Worst => {
                let maximise =
                    super::pareto::direction(self.metric.name()) == super::pareto::Direction::Maximise;
                let worst = present
                    .iter()
                    .copied()
                    .reduce(|a, b| if (maximise && b < a) || (!maximise && b > a) { b } else { a });
                (self.holds(worst), worst)
            }
            Scope::Mean => {
                let mean = super::stats::describe(values.iter().copied()).mean;
                (self.holds(mean), mean)
            }
        };
        Judged { holds, breaking: breaking.len(), replicates, shown }
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
        write!(f, "{} {} {} {}", self.metric, self.op.as_str(), self.value, self.scope_words())
    }
}

/// Splits a constraint's scope from its `<metric> <op> <value>`: a leading `mean` or `worst`,
/// or a trailing `in P % of replicates` (or `in every replicate`).
fn split_scope(text: &str) -> Result<(Scope, &str)> {
    let trimmed = text.trim();
    let word = |w: &str| {
        trimmed.strip_prefix(w).filter(|rest| rest.starts_with(char::is_whitespace)).map(str::trim_start)
    };
    let (prefix, body) = match (word("mean"), word("worst")) {
        (Some(rest), _) => (Some(Scope::Mean), rest),
        (_, Some(rest)) => (Some(Scope::Worst), rest),
        _ => (None, trimmed),
    };
    let lower = body.to_ascii_lowercase();
    let suffix = [" in every replicate", " in all replicates"]
        .iter()
        .find(|s| lower.ends_with(*s))
        .map(|s| (Scope::Every, body.len() - s.len()));
    let suffix = match suffix {
        Some(found) => Some(found),
        None => share_suffix(body)?,
    };
    match (prefix, suffix) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "give one scope: `mean` or `worst` before the metric, or `in P % of replicates` after the value",
        )),
        (Some(scope), None) => Ok((scope, body)),
        (None, Some((scope, end))) => Ok((scope, body[..end].trim_end())),
        (None, None) => Ok((Scope::Every, body)),
    }
}

/// A trailing `in P % of replicates` (or `in P% of the replicates`): the share and where the
/// suffix starts; an error when P is not in (0, 100].
fn share_suffix(body: &str) -> Result<Option<(Scope, usize)>> {
    let lower = body.to_ascii_lowercase();
    let Some(rest) = lower.strip_suffix("replicates") else { return Ok(None) };
    let rest = rest.trim_end();
    let rest = rest.strip_suffix("the").map_or(rest, str::trim_end);
    let Some(rest) = rest.strip_suffix("of") else { return Ok(None) };
    let Some(rest) = rest.trim_end().strip_suffix('%') else { return Ok(None) };
    let rest = rest.trim_end();
    let digits = rest.len() - rest.bytes().rev().take_while(|b| b.is_ascii_digit() || *b == b'.').count();
    let number = &rest[digits..];
    let Some(start) = rest[..digits].trim_end().strip_suffix("in").map(str::len) else { return Ok(None) };
    if !rest[..start].ends_with(char::is_whitespace) {
        return Ok(None);
    }
    match number.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(Some((Scope::Share(p / 100.0), start))),
        _ => Err(Error::invalid(format!(
            "`in {number} % of replicates`: expected a percentage above 0 and at most 100"
        ))),
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
    fn scopes_parse_from_either_end_and_default_to_every_replicate() {
        let scope = |t: &str| Constraint::parse(t, &COLS).map(|c| (c.scope, c.metric.name(), c.value));
        assert_eq!(scope("missed_incidents == 0").unwrap(), (Scope::Every, "missed_incidents", 0.0));
        assert_eq!(scope("mean missed_incidents <= 0.5").unwrap(), (Scope::Mean, "missed_incidents", 0.5));
        assert_eq!(scope("worst p99_latency <= 2s").unwrap(), (Scope::Worst, "latency_p99_ms", 2000.0));
        assert_eq!(
            scope("missed_incidents == 0 in 95 % of replicates").unwrap(),
            (Scope::Share(0.95), "missed_incidents", 0.0)
        );
        assert_eq!(
            scope("false_opens <= \"1\" in 50% of the replicates").unwrap(),
            (Scope::Share(0.5), "false_opens", 1.0)
        );
        assert_eq!(scope("false_opens <= 1 in every replicate").unwrap().0, Scope::Every);
        // A metric named like a scope word is still a metric.
        assert!(scope("meanwhile <= 1").unwrap_err().to_string().contains("unknown metric `meanwhile`"));
        for (text, expected) in [
            ("missed_incidents == 0 in 0 % of replicates", "expected a percentage above 0"),
            ("missed_incidents == 0 in 150 % of replicates", "expected a percentage above 0"),
            ("mean missed_incidents == 0 in 95 % of replicates", "give one scope"),
            ("mean", "expected `<metric> <op> <value>`"),
        ] {
            let e = Constraint::parse(text, &COLS).unwrap_err().to_string();
            assert!(e.contains(expected) && e.contains(&format!("{text:?}")), "{text}: {e}");
        }
        let c = Constraint::parse("missed_incidents == 0 in 95 % of replicates", &COLS).unwrap();
        assert_eq!(c.scope_words(), "in at least 95 % of replicates");
        assert_eq!(c.text, "missed_incidents == 0 in 95 % of replicates");
    }

    #[test]
    fn a_constraint_is_judged_on_every_replicate_unless_it_says_otherwise() {
        let judge = |t: &str, v: &[Option<f64>]| Constraint::parse(t, &COLS).unwrap().judge(v);
        // One miss in three replicates: a mean of 0.33 meets `<= 0.5`, every replicate does not.
        let missed = [Some(0.0), Some(1.0), Some(0.0)];
        let every = judge("missed_incidents == 0", &missed);
        assert_eq!((every.holds, every.breaking, every.replicates, every.shown), (false, 1, 3, Some(1.0)));
        assert!(judge("mean missed_incidents <= 0.5", &missed).holds);
        assert_eq!(judge("mean missed_incidents <= 0.5", &missed).shown, Some(1.0 / 3.0));
        assert!(!judge("worst missed_incidents <= 0.5", &missed).holds);
        assert!(judge("missed_incidents == 0 in 60 % of replicates", &missed).holds);
        assert!(!judge("missed_incidents == 0 in 70 % of replicates", &missed).holds);
        // The worst replicate of a maximised metric is its lowest.
        let avail = [Some(0.999), Some(0.98), None];
        let worst = judge("worst availability >= 99%", &avail);
        assert_eq!((worst.holds, worst.shown), (false, Some(0.98)));
        // No value breaks nothing.
        let none = judge("detection_delay <= 10", &[None, None]);
        assert_eq!((none.holds, none.breaking, none.shown), (true, 0, None));
        assert!(judge("detection_delay <= 10", &[None, Some(4.0)]).holds);
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
