//! Datadog v1 `query` JSON (`GET /api/v1/query?from=...&to=...&query=...`, or a notebook's
//! "Download as JSON"): `{"series":[{"metric","scope","pointlist":[[epoch_ms, value or null],...],
//! "interval","unit":[{"name":"second",...},null]}]}`. A `null` point is a gap the merge counts
//! (`strict` refuses it). Selectors name a `metric` or a `scope` (or match `display_name`,
//! `expression`). The latency unit comes from the series' `unit` when Datadog gives one (or a
//! unit word in the metric's name); a `unit` of `percent` marks percentages.

use super::json::{Number, bad_value, documents};
use super::series::{Locator, Series};
use super::{LatencyUnit, TraceError};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

const SHAPE: &str = r#"Datadog v1 query JSON: {"status":"ok","series":[{"metric":"...","scope":"...","pointlist":[[1700000000000.0,0.25],...],"interval":60}]}"#;

/// One response.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Response<'a> {
    #[serde(default, borrow)]
    status: Option<Cow<'a, str>>,
    /// A message when it is a string (`errors` may also be a list).
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    errors: Option<Value>,
    #[serde(default, borrow)]
    series: Vec<DatadogSeries<'a>>,
}

/// One entry of `series`.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct DatadogSeries<'a> {
    #[serde(borrow)]
    metric: Cow<'a, str>,
    #[serde(default, borrow)]
    scope: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    display_name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    expression: Option<Cow<'a, str>>,
    #[serde(default)]
    pointlist: Vec<Point>,
    /// `[{"name":"second",...},null]`, or null.
    #[serde(default)]
    unit: Option<Value>,
}

/// One `[epoch_ms, value or null]`.
struct Point {
    ms: f64,
    value: Option<f64>,
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Point;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a point [epoch_ms, value]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Point, A::Error> {
                let shape = || de::Error::custom("a point is [epoch_ms, value]");
                let Number(ms) = seq.next_element()?.ok_or_else(shape)?;
                let value: Option<Number> = seq.next_element()?.ok_or_else(shape)?;
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(shape());
                }
                Ok(Point { ms, value: value.map(|n| n.0) })
            }
        }
        d.deserialize_seq(V)
    }
}

/// Every series of the response (several responses may be concatenated).
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    documents(file, text, SHAPE, |r: Response, _| {
        let error = [&r.error, &r.errors].into_iter().flatten().find_map(Value::as_str);
        if r.status.as_deref() == Some("error") || error.is_some() {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!("Datadog answered with an error: {}", error.unwrap_or("(no message)")),
            });
        }
        for (i, s) in r.series.into_iter().enumerate() {
            out.push(series(s, file, format!("series[{i}].pointlist"))?);
        }
        Ok(())
    })?;
    Ok(out)
}

/// One entry of `series`: its names, unit and points.
fn series(d: DatadogSeries, file: &str, path: String) -> Result<Series, TraceError> {
    let mut s = Series::default();
    for (j, p) in d.pointlist.iter().enumerate() {
        let us = (p.ms * 1e3).round();
        if !(us.is_finite() && us.abs() < 9.0e18) || s.times.last().is_some_and(|l| us as i64 <= *l) {
            return Err(bad_value(
                file,
                &format!("{path}[{j}][0]"),
                &p.ms.to_string(),
                "epoch milliseconds later than the point before",
            ));
        }
        s.times.push(us as i64);
        if p.value.is_none() {
            s.bad_text.insert(j, "null".into());
        }
        s.values.push(p.value.unwrap_or(f64::NAN));
    }
    let name = |n: Option<Cow<str>>| n.map(Cow::into_owned).unwrap_or_default();
    let (metric, scope) = (d.metric.into_owned(), name(d.scope));
    s.name = format!("{metric} ({scope})");
    s.unit = unit_of(d.unit.as_ref()).or_else(|| super::columns::unit_in_name(&metric));
    s.percent = unit_name(d.unit.as_ref()) == Some("percent");
    s.labels = vec![
        ("metric".into(), metric),
        ("scope".into(), scope),
        ("display_name".into(), name(d.display_name)),
        ("expression".into(), name(d.expression)),
    ];
    s.locate = Locator::Json(path);
    Ok(s)
}

/// The name of `"unit":[{"name":"second",...},null]`'s first entry.
fn unit_name(unit: Option<&Value>) -> Option<&str> {
    unit?.get(0)?.get("name")?.as_str()
}

/// The latency unit of `"unit":[{"name":"second",...},null]`'s first entry, if it is one.
fn unit_of(unit: Option<&Value>) -> Option<LatencyUnit> {
    match unit_name(unit)? {
        "second" => Some(LatencyUnit::S),
        "millisecond" => Some(LatencyUnit::Ms),
        "microsecond" => Some(LatencyUnit::Us),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"status":"ok","res_type":"time_series","series":[{"metric":"trace.http.request.duration","display_name":"trace.http.request.duration","scope":"service:web","expression":"p95:trace.http.request.duration{service:web}","pointlist":[[1700000000000.0,0.25],[1700000060000.0,null]],"interval":60,"unit":[{"family":"time","name":"second","short_name":"s"},null]}],"from_date":1700000000000,"to_date":1700000120000,"query":"p95:trace.http.request.duration{service:web}"}"#;

    #[test]
    fn pointlists_with_units_and_nulls() {
        let s = parse("dd.json", DOC).unwrap();
        assert_eq!(s[0].name, "trace.http.request.duration (service:web)");
        assert_eq!(s[0].times, vec![1_700_000_000_000_000, 1_700_000_060_000_000]);
        assert!(s[0].values[1].is_nan());
        assert_eq!(s[0].bad_text[&1], "null");
        assert_eq!(s[0].unit, Some(LatencyUnit::S));
        assert_eq!(s[0].at(1), "series[0].pointlist[1]");
        assert_eq!(s[0].label("scope"), Some("service:web"));
    }

    #[test]
    fn a_percent_unit_marks_percentages() {
        let doc = DOC.replace(
            r#"{"family":"time","name":"second","short_name":"s"}"#,
            r#"{"family":"percentage","name":"percent","short_name":"%"}"#,
        );
        let s = parse("dd.json", &doc).unwrap();
        assert!(s[0].percent);
        assert_eq!(s[0].unit, None);
        assert!(!parse("dd.json", DOC).unwrap()[0].percent);
    }

    #[test]
    fn bad_responses_are_named() {
        let e = parse(
            "dd.json",
            r#"{"status":"error","error":"Rate limit of 300 requests in 3600 seconds reached"}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("Rate limit"), "{e}");
        let e = parse("dd.json", &DOC[..150]).unwrap_err().to_string();
        assert!(e.contains("ends early"), "{e}");
        let e = parse("dd.json", &DOC.replace("1700000060000.0", "1600000060000.0")).unwrap_err().to_string();
        assert!(e.contains("series[0].pointlist[1][0]"), "{e}");
        let e =
            parse("dd.json", r#"{"series":[{"metric":"m","pointlist":[[1,"x"]]}]}"#).unwrap_err().to_string();
        assert!(e.contains("line 1, column") && e.contains("expected Datadog v1 query JSON"), "{e}");
    }
}
