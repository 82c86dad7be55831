//! Datadog v1 `query` JSON (`GET /api/v1/query?from=...&to=...&query=...`, or a notebook's
//! "Download as JSON"): `{"series":[{"metric","scope","pointlist":[[epoch_ms, value or null],...],
//! "interval","unit":[{"name":"second",...},null]}]}`. A `null` point is a bad sample (refused or
//! skipped by the merge). Selectors name a `metric` or a `scope` (or match `display_name`,
//! `expression`). The latency unit comes from the series' `unit` when Datadog gives one.

use super::json::{bad_value, each_document};
use super::series::{Locator, Series};
use super::{LatencyUnit, TraceError};
use serde::Deserialize;
use std::borrow::Cow;

const SHAPE: &str = r#"Datadog v1 query JSON: {"status":"ok","series":[{"metric":"...","scope":"...","pointlist":[[1700000000000.0,0.25],...],"interval":60}]}"#;

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(default, borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    series: Vec<DdSeries<'a>>,
}

#[derive(Deserialize)]
struct DdSeries<'a> {
    #[serde(borrow)]
    metric: Cow<'a, str>,
    #[serde(default, borrow)]
    scope: Cow<'a, str>,
    #[serde(default, borrow)]
    display_name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    expression: Option<Cow<'a, str>>,
    pointlist: Vec<(f64, Option<f64>)>,
    #[serde(default, borrow)]
    unit: Option<Vec<Option<DdUnit<'a>>>>,
}

#[derive(Deserialize)]
struct DdUnit<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// Every series of the response.
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    each_document(file, text, SHAPE, |_, r: Response| {
        if r.status.as_deref() == Some("error") || r.error.is_some() {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "Datadog answered with an error: {}",
                    r.error.as_deref().unwrap_or("(no message)")
                ),
            });
        }
        for (i, d) in r.series.into_iter().enumerate() {
            let path = format!("series[{i}].pointlist");
            let unit = d
                .unit
                .as_ref()
                .and_then(|u| u.first())
                .and_then(Option::as_ref)
                .and_then(|u| match &*u.name {
                    "second" => Some(LatencyUnit::S),
                    "millisecond" => Some(LatencyUnit::Ms),
                    "microsecond" => Some(LatencyUnit::Us),
                    _ => None,
                })
                .or_else(|| super::columns::split_header(&d.metric).unit);
            let mut s = Series {
                name: format!("{} ({})", d.metric, d.scope),
                labels: vec![
                    ("metric".into(), d.metric.to_string()),
                    ("scope".into(), d.scope.to_string()),
                    ("display_name".into(), d.display_name.as_deref().unwrap_or("").to_string()),
                    ("expression".into(), d.expression.as_deref().unwrap_or("").to_string()),
                ],
                unit,
                times: Vec::with_capacity(d.pointlist.len()),
                values: Vec::with_capacity(d.pointlist.len()),
                locate: Locator::Json(path.clone()),
                ..Series::default()
            };
            for (j, (t, v)) in d.pointlist.iter().enumerate() {
                let us = (t * 1e3).round();
                let at = || format!("{path}[{j}][0]");
                if !(us.is_finite() && us.abs() < 9.0e18) || s.times.last().is_some_and(|l| us as i64 <= *l) {
                    return Err(bad_value(
                        file,
                        &at(),
                        &t.to_string(),
                        "epoch milliseconds later than the point before",
                    ));
                }
                if v.is_none() {
                    s.bad_text.insert(j, "null".into());
                }
                s.times.push(us as i64);
                s.values.push(v.unwrap_or(f64::NAN));
            }
            out.push(s);
        }
        Ok(())
    })?;
    Ok(out)
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
