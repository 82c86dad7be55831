//! Synthetic incidents: one `[[incidents]]` table each. An incident has a kind (what goes wrong),
//! its kind's parameters, an expectation for the breaker, and a window that is either absolute
//! (`start` + `duration`) or repeating (`every` + `at`/`offset` + `duration`, optionally bounded
//! by `until` or `count`).

use crate::time::{Dur, SimTime};
use crate::truth::Expect;
use crate::units::{Positive, Ratio, de_at_least_one, de_positive_dur, de_positive_dur_opt};
use crate::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Microseconds in one day.
#[cfg(test)]
const DAY_US: u64 = 86_400_000_000;

/// What goes wrong during an incident. Parameters are fields of [`IncidentSpec`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IncidentKind {
    /// Every attempt fails fast: class `error` after exactly `latency` (default 50 ms).
    Outage,
    /// No answer until the window ends: latency = (end − sent) + a baseline draw, class as the
    /// baseline would answer, so any client timeout shorter than the rest of the window fires.
    Hang,
    /// A short outage (same parameter `latency`); its usual expectation is `stay_closed`, and
    /// that is its default.
    Blip,
    /// Partial failure: each attempt fails with `error` with probability `error_rate`
    /// (required), on top of the baseline's own errors; latency as the baseline.
    Brownout,
    /// "Not down, just slow": every latency is multiplied by `factor` (required; a p95 going
    /// from ~900 ms to ~12 s is a factor of ~13).
    Slowdown,
    /// Alternating failure and health: within each `period` (required, from the window's start)
    /// the first `duty × period` (duty default 0.5) fails like an outage (`latency`, default
    /// 50 ms), the rest is healthy.
    Flapping,
    /// Gradual degradation: across the window the extra error probability rises linearly from 0
    /// to `error_rate`, and the latency multiplier from 1 to `factor` (at least one required).
    Ramp,
    /// Quota exhausted: each attempt is answered 429 (`rate_limited`) with probability `rate`
    /// (default 1), carrying `retry_after` (default: the time left until the window ends, when
    /// the quota resets); latency as the baseline.
    RateLimit,
    /// Expired or revoked credentials: each attempt is answered 401 (`client_error`) with
    /// probability `rate` (default 1), fast (`latency`, default 50 ms). The dependency is
    /// healthy: a breaker that counts client errors as failures opens for nothing, so its usual
    /// expectation, and the default, is `stay_closed` (seed 002: "auth errors must not trip").
    AuthFailure,
}

impl IncidentKind {
    /// The name used in files (and in ground-truth windows).
    pub fn as_str(self) -> &'static str {
        match self {
            IncidentKind::Outage => "outage",
            IncidentKind::Hang => "hang",
            IncidentKind::Blip => "blip",
            IncidentKind::Brownout => "brownout",
            IncidentKind::Slowdown => "slowdown",
            IncidentKind::Flapping => "flapping",
            IncidentKind::Ramp => "ramp",
            IncidentKind::RateLimit => "rate_limit",
            IncidentKind::AuthFailure => "auth_failure",
        }
    }

    /// The expectation when the file does not give one: `stay_closed` for a blip (retries
    /// should absorb it), `open` for every other kind.
    pub fn default_expect(self) -> Expect {
        match self {
            IncidentKind::Blip | IncidentKind::AuthFailure => Expect::StayClosed,
            _ => Expect::Open,
        }
    }

    /// The parameters this kind accepts.
    fn parameters(self) -> &'static [&'static str] {
        match self {
            IncidentKind::Outage | IncidentKind::Blip => &["latency"],
            IncidentKind::Hang => &[],
            IncidentKind::Brownout => &["error_rate"],
            IncidentKind::Slowdown => &["factor"],
            IncidentKind::Flapping => &["period", "duty", "latency"],
            IncidentKind::Ramp => &["error_rate", "factor"],
            IncidentKind::RateLimit => &["rate", "retry_after"],
            IncidentKind::AuthFailure => &["rate", "latency"],
        }
    }
}

/// A time of day written `HH:MM` (or `HH:MM:SS`), counted from the scenario's start: day 0
/// starts at 00:00.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeOfDay(Dur);

impl TimeOfDay {
    /// Parses `HH:MM` or `HH:MM:SS` with hours 0–23 (one or two digits), minutes and seconds
    /// 00–59 (two digits).
    pub fn parse(text: &str) -> Result<TimeOfDay> {
        let expected = || {
            Error::invalid(format!(
                "expected a time of day \"HH:MM\" between 00:00 and 23:59, found {text:?}"
            ))
        };
        let parts: Vec<&str> = text.trim().split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(expected());
        }
        let mut values = [0u64; 3];
        for (i, (slot, part)) in values.iter_mut().zip(&parts).enumerate() {
            let width_ok = if i == 0 { (1..=2).contains(&part.len()) } else { part.len() == 2 };
            if !width_ok || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(expected());
            }
            *slot = part.parse().map_err(|_| expected())?;
        }
        let [h, m, s] = values;
        if h > 23 || m > 59 || s > 59 {
            return Err(expected());
        }
        Ok(TimeOfDay(Dur::from_secs(h * 3_600 + m * 60 + s)))
    }

    /// Time since midnight.
    pub fn since_midnight(self) -> Dur {
        self.0
    }
}

impl fmt::Display for TimeOfDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.micros() / 1_000_000;
        let (h, m, s) = (secs / 3_600, secs / 60 % 60, secs % 60);
        if s == 0 { write!(f, "{h:02}:{m:02}") } else { write!(f, "{h:02}:{m:02}:{s:02}") }
    }
}

impl Serialize for TimeOfDay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeOfDay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TimeOfDay, D::Error> {
        let text = String::deserialize(d)?;
        TimeOfDay::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// One `[[incidents]]` table: kind, parameters, expectation and window.
///
/// Window, absolute: `start` and `duration`. Repeating: `every` and `duration`, first at `at`
/// (a time of day) or `offset` (a duration; default 0), then every `every`; optional `until`
/// (no occurrence starts at or after it) and `count` (at most this many occurrences).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncidentSpec {
    /// What goes wrong.
    pub kind: IncidentKind,
    /// What the breaker should do (default: [`IncidentKind::default_expect`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// A name for reports and error messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Absolute window: start since the scenario's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// Length of each occurrence (> 0).
    #[serde(deserialize_with = "de_positive_dur")]
    pub duration: Dur,
    /// Repeating window: period between occurrence starts (> `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de_positive_dur_opt")]
    pub every: Option<Dur>,
    /// Repeating window: time of day of the first occurrence (day 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<TimeOfDay>,
    /// Repeating window: start of the first occurrence, as a duration since the scenario's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Dur>,
    /// Repeating window: no occurrence starts at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Dur>,
    /// Repeating window: at most this many occurrences (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de_count")]
    pub count: Option<u32>,
    /// outage, blip, flapping: latency of the failing answers (default 50 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Dur>,
    /// brownout: error probability; ramp: error probability reached at the window's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<Ratio>,
    /// slowdown: latency multiplier; ramp: multiplier reached at the window's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<Positive>,
    /// flapping: length of one fail-then-recover cycle (> 0, <= `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de_positive_dur_opt")]
    pub period: Option<Dur>,
    /// flapping: failing fraction of each period, strictly between 0 and 1 (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duty: Option<Ratio>,
    /// rate_limit: probability that an attempt is answered 429 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Ratio>,
    /// rate_limit: retry-after carried by the 429s (default: time left in the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<Dur>,
    /// With a pool of hosts: the hosts it hits (default: every host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<super::pool::HostSelector>,
    /// With a pool of hosts: the status its failing answers carry for an outlier detector (a
    /// 5xx code, or `"connect_failure"`; default 500). Kinds that fail: outage, blip, brownout,
    /// flapping, ramp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<super::pool::Status>,
}

/// Default latency of the failing answers of outages, blips and flapping.
pub const DEFAULT_FAIL_LATENCY: Dur = Dur::from_millis(50);

impl IncidentSpec {
    /// An absolute incident of `kind` over `[start, start + duration)` with no parameters set
    /// (for building incidents in code; set the kind's parameters on the result).
    pub fn new(kind: IncidentKind, start: Dur, duration: Dur) -> IncidentSpec {
        IncidentSpec {
            kind,
            expect: None,
            label: None,
            start: Some(start),
            duration,
            every: None,
            at: None,
            offset: None,
            until: None,
            count: None,
            latency: None,
            error_rate: None,
            factor: None,
            period: None,
            duty: None,
            rate: None,
            retry_after: None,
            hosts: None,
            status: None,
        }
    }

    /// The expectation, the kind's default if none was given.
    pub fn expect(&self) -> Expect {
        self.expect.unwrap_or(self.kind.default_expect())
    }

    /// How error messages name this incident: its kind and label.
    pub fn describe(&self) -> String {
        match &self.label {
            Some(label) => format!("{} {label:?}", self.kind.as_str()),
            None => self.kind.as_str().to_string(),
        }
    }

    /// Cross-field checks; the message names the field and what was expected.
    pub fn validate(&self) -> Result<()> {
        if self.duration.is_zero() {
            return Err(Error::invalid("`duration` must be longer than 0"));
        }
        self.validate_window()?;
        self.validate_parameters()
    }

    fn validate_window(&self) -> Result<()> {
        match (self.start, self.every) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "give either `start` (one window) or `every` (a repeating window), not both",
                ));
            }
            (None, None) => {
                return Err(Error::invalid(
                    "needs a window: `start` and `duration`, or `every`, `at`/`offset` and `duration`",
                ));
            }
            (Some(_), None) => {
                for (name, set) in [
                    ("at", self.at.is_some()),
                    ("offset", self.offset.is_some()),
                    ("until", self.until.is_some()),
                    ("count", self.count.is_some()),
                ] {
                    if set {
                        return Err(Error::invalid(format!(
                            "`{name}` applies only to a repeating window (with `every`)"
                        )));
                    }
                }
            }
            (None, Some(every)) => {
                if every <= self.duration {
                    return Err(Error::invalid(format!(
                        "`every` ({every}) must be longer than `duration` ({}): occurrences may not overlap",
                        self.duration
                    )));
                }
                if self.at.is_some() && self.offset.is_some() {
                    return Err(Error::invalid(
                        "give either `at` (a time of day) or `offset` (a duration), not both",
                    ));
                }
                if let Some(at) = self.at
                    && at.since_midnight() >= every
                {
                    return Err(Error::invalid(format!(
                        "`at` ({at}) must come before the end of the first period `every` ({every})"
                    )));
                }
                if self.count == Some(0) {
                    return Err(Error::invalid("`count` must be at least 1"));
                }
            }
        }
        Ok(())
    }

    fn validate_parameters(&self) -> Result<()> {
        if self.status.is_some()
            && matches!(
                self.kind,
                IncidentKind::Hang
                    | IncidentKind::Slowdown
                    | IncidentKind::RateLimit
                    | IncidentKind::AuthFailure
            )
        {
            return Err(Error::invalid(format!(
                "`status` applies to kinds whose answers fail (outage, blip, brownout, flapping, ramp), not `{}`",
                self.kind.as_str()
            )));
        }
        let allowed = self.kind.parameters();
        for (name, set) in [
            ("latency", self.latency.is_some()),
            ("error_rate", self.error_rate.is_some()),
            ("factor", self.factor.is_some()),
            ("period", self.period.is_some()),
            ("duty", self.duty.is_some()),
            ("rate", self.rate.is_some()),
            ("retry_after", self.retry_after.is_some()),
        ] {
            if set && !allowed.contains(&name) {
                let list = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
                };
                return Err(Error::invalid(format!(
                    "`{name}` does not apply to kind `{}` (its parameters: {list})",
                    self.kind.as_str()
                )));
            }
        }
        for (name, value) in [("error_rate", self.error_rate), ("duty", self.duty), ("rate", self.rate)] {
            if let Some(r) = value {
                Ratio::new(r.get()).map_err(|e| Error::invalid(format!("`{name}`: {e}")))?;
            }
        }
        if let Some(f) = self.factor {
            Positive::new(f.get()).map_err(|e| Error::invalid(format!("`factor`: {e}")))?;
        }
        match self.kind {
            IncidentKind::Brownout if self.error_rate.is_none() => Err(Error::invalid(
                "kind `brownout` needs `error_rate` (the probability that an attempt fails)",
            )),
            IncidentKind::Slowdown if self.factor.is_none() => {
                Err(Error::invalid("kind `slowdown` needs `factor` (the latency multiplier, e.g. 13)"))
            }
            IncidentKind::Ramp if self.factor.is_none() && self.error_rate.is_none() => Err(Error::invalid(
                "kind `ramp` needs `error_rate` and/or `factor` (the values reached at the window's end)",
            )),
            IncidentKind::Flapping => {
                let Some(period) = self.period else {
                    return Err(Error::invalid(
                        "kind `flapping` needs `period` (the length of one fail-then-recover cycle)",
                    ));
                };
                if period.is_zero() || period > self.duration {
                    return Err(Error::invalid(format!(
                        "`period` ({period}) must be longer than 0 and at most `duration` ({})",
                        self.duration
                    )));
                }
                if let Some(duty) = self.duty
                    && !(duty.get() > 0.0 && duty.get() < 1.0)
                {
                    return Err(Error::invalid(format!(
                        "`duty` must be strictly between 0 and 1, found {}",
                        duty.get()
                    )));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The occurrences `[start, end)` that start before `horizon`, in time order (ends are not
    /// clipped). At most `limit` are produced; more is an error. Call [`IncidentSpec::validate`]
    /// first.
    pub fn occurrences(&self, horizon: SimTime, limit: usize) -> Result<Vec<(SimTime, SimTime)>> {
        let mut out = Vec::new();
        let d = self.duration;
        match (self.start, self.every) {
            (Some(start), _) => {
                if start.micros() < horizon.micros() {
                    out.push((SimTime(start.micros()), SimTime(start.micros()) + d));
                }
            }
            (None, Some(every)) => {
                let first = match (self.at, self.offset) {
                    (Some(at), _) => at.since_midnight(),
                    (None, Some(offset)) => offset,
                    (None, None) => Dur::ZERO,
                };
                let stop = self.until.map_or(horizon.micros(), |u| u.micros().min(horizon.micros()));
                let count = self.count.map_or(u64::MAX, u64::from);
                let mut start = first.micros();
                let mut k = 0u64;
                while start < stop && k < count {
                    if out.len() == limit {
                        return Err(Error::invalid(format!(
                            "repeats more than {limit} times within the horizon; use kind `flapping` for fast alternation"
                        )));
                    }
                    out.push((SimTime(start), SimTime(start) + d));
                    k += 1;
                    match start.checked_add(every.micros()) {
                        Some(next) => start = next,
                        None => break,
                    }
                }
            }
            (None, None) => {}
        }
        Ok(out)
    }
}

/// The `at` convention in one place: day `n` at `at` is `n × 1d + at` since the scenario's start.
#[cfg(test)]
pub fn day_at(day: u64, at: TimeOfDay) -> SimTime {
    SimTime(day * DAY_US + at.since_midnight().micros())
}

fn de_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    de_at_least_one(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<IncidentSpec, String> {
        toml::from_str::<IncidentSpec>(text).map_err(|e| e.to_string())
    }

    fn check(text: &str) -> Result<IncidentSpec, String> {
        let spec = parse(text)?;
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    #[test]
    fn time_of_day_parses_and_prints() {
        assert_eq!(TimeOfDay::parse("02:00").unwrap().since_midnight(), Dur::from_secs(7_200));
        assert_eq!(TimeOfDay::parse("23:59:30").unwrap().since_midnight(), Dur::from_secs(86_370));
        assert_eq!(TimeOfDay::parse("00:00").unwrap().since_midnight(), Dur::ZERO);
        assert_eq!(TimeOfDay::parse("2:00").unwrap().to_string(), "02:00");
        assert_eq!(TimeOfDay::parse("07:05").unwrap().to_string(), "07:05");
        assert_eq!(TimeOfDay::parse("07:05:09").unwrap().to_string(), "07:05:09");
        for bad in ["24:00", "002:00", "02:6", "02:60", "02", "02:00:00:00", "ab:cd", "", "-1:00", "+2:00"] {
            assert!(TimeOfDay::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn nightly_window_over_a_week_lands_on_exact_microseconds() {
        let spec =
            check("kind = \"slowdown\"\nfactor = 13\nevery = \"1d\"\nat = \"02:00\"\nduration = \"90m\"")
                .unwrap();
        let occ = spec.occurrences(SimTime(7 * DAY_US), 1_000).unwrap();
        let want: Vec<(SimTime, SimTime)> = (0..7)
            .map(|d| {
                let start = d * DAY_US + 7_200_000_000;
                (SimTime(start), SimTime(start + 5_400_000_000))
            })
            .collect();
        assert_eq!(occ, want);
        assert_eq!(occ[3].0, day_at(3, TimeOfDay::parse("02:00").unwrap()));
        assert_eq!(spec.expect(), Expect::Open);
    }

    #[test]
    fn repeating_windows_respect_offset_until_count_and_horizon() {
        let every_hour = "kind = \"blip\"\nevery = \"1h\"\nduration = \"30s\"";
        let spec = check(&format!("{every_hour}\noffset = \"10m\"")).unwrap();
        let occ = spec.occurrences(SimTime(3 * 3_600_000_000), 100).unwrap();
        assert_eq!(occ.iter().map(|o| o.0.0 / 60_000_000).collect::<Vec<_>>(), [10, 70, 130]);
        assert_eq!(spec.expect(), Expect::StayClosed);
        let spec = check(&format!("{every_hour}\ncount = 2")).unwrap();
        assert_eq!(spec.occurrences(SimTime(10 * 3_600_000_000), 100).unwrap().len(), 2);
        let spec = check(&format!("{every_hour}\nuntil = \"2h\"")).unwrap();
        let occ = spec.occurrences(SimTime(10 * 3_600_000_000), 100).unwrap();
        assert_eq!(
            occ,
            [(SimTime(0), SimTime(30_000_000)), (SimTime(3_600_000_000), SimTime(3_630_000_000))]
        );
        // An occurrence starting before the horizon is kept whole; one starting at it is dropped.
        let occ = spec.occurrences(SimTime(3_600_000_010), 100).unwrap();
        assert_eq!(occ.len(), 2);
        assert_eq!(occ[1].1, SimTime(3_630_000_000));
        assert_eq!(spec.occurrences(SimTime(3_600_000_000), 100).unwrap().len(), 1);
        let err = spec.occurrences(SimTime(10 * 3_600_000_000), 1).unwrap_err();
        assert!(err.to_string().contains("more than 1 times"), "{err}");
        let abs = check("kind = \"outage\"\nstart = \"2h\"\nduration = \"5m\"").unwrap();
        assert!(abs.occurrences(SimTime(7_200_000_000), 10).unwrap().is_empty());
        assert_eq!(abs.occurrences(SimTime(7_200_000_001), 10).unwrap().len(), 1);
    }

    #[test]
    fn refuses_bad_windows_and_parameters() {
        for (text, expected) in [
            ("kind = \"outage\"\nstart = \"1h\"\nduration = \"0s\"", "line 3"),
            ("kind = \"outage\"\nstart = \"1h\"\nduration = \"0s\"", "longer than 0"),
            ("kind = \"outage\"\nduration = \"1m\"", "needs a window"),
            ("kind = \"outage\"\nstart = \"1h\"\nevery = \"1d\"\nduration = \"1m\"", "not both"),
            ("kind = \"outage\"\nstart = \"1h\"\nat = \"02:00\"\nduration = \"1m\"", "`at` applies only"),
            (
                "kind = \"outage\"\nevery = \"1h\"\nduration = \"1h\"",
                "`every` (1h) must be longer than `duration` (1h)",
            ),
            (
                "kind = \"outage\"\nevery = \"1d\"\nat = \"24:00\"\nduration = \"1m\"",
                "between 00:00 and 23:59",
            ),
            (
                "kind = \"outage\"\nevery = \"1h\"\nat = \"02:00\"\nduration = \"1m\"",
                "`at` (02:00) must come before",
            ),
            (
                "kind = \"outage\"\nevery = \"1h\"\nat = \"00:10\"\noffset = \"1m\"\nduration = \"1m\"",
                "not both",
            ),
            ("kind = \"outage\"\nevery = \"1h\"\ncount = 0\nduration = \"1m\"", "at least 1"),
            (
                "kind = \"outage\"\nstart = \"0s\"\nduration = \"1m\"\nfactor = 3",
                "`factor` does not apply to kind `outage`",
            ),
            ("kind = \"hang\"\nstart = \"0s\"\nduration = \"1m\"\nlatency = \"1s\"", "its parameters: none"),
            ("kind = \"brownout\"\nstart = \"0s\"\nduration = \"1m\"", "needs `error_rate`"),
            ("kind = \"brownout\"\nstart = \"0s\"\nduration = \"1m\"\nerror_rate = 1.2", "between 0 and 1"),
            ("kind = \"slowdown\"\nstart = \"0s\"\nduration = \"1m\"", "needs `factor`"),
            ("kind = \"slowdown\"\nstart = \"0s\"\nduration = \"1m\"\nfactor = 0", "greater than 0"),
            ("kind = \"ramp\"\nstart = \"0s\"\nduration = \"1m\"", "`error_rate` and/or `factor`"),
            ("kind = \"flapping\"\nstart = \"0s\"\nduration = \"1m\"", "needs `period`"),
            ("kind = \"flapping\"\nstart = \"0s\"\nduration = \"1m\"\nperiod = \"2m\"", "at most `duration`"),
            (
                "kind = \"flapping\"\nstart = \"0s\"\nduration = \"1m\"\nperiod = \"10s\"\nduty = 1",
                "strictly between",
            ),
            ("kind = \"meltdown\"\nstart = \"0s\"\nduration = \"1m\"", "unknown variant `meltdown`"),
            (
                "kind = \"outage\"\nstart = \"0s\"\nduration = \"1m\"\nexpect = \"maybe\"",
                "unknown variant `maybe`",
            ),
            ("kind = \"outage\"\nstart = \"0s\"\nduraton = \"1m\"", "unknown field `duraton`"),
        ] {
            let err = check(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn round_trips_through_toml() {
        let spec = check(
            "kind = \"rate_limit\"\nlabel = \"quota\"\nexpect = \"either\"\nevery = \"1d\"\nat = \"09:30\"\nduration = \"1h\"\nrate = 0.8\nretry_after = \"30s\"",
        )
        .unwrap();
        let text = toml::to_string(&spec).unwrap();
        assert_eq!(parse(&text).unwrap(), spec);
        assert_eq!(spec.describe(), "rate_limit \"quota\"");
        assert_eq!(spec.expect(), Expect::Either);
    }
}
