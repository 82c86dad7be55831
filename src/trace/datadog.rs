//! Datadog v1 `query` JSON (`GET /api/v1/query?from=...&to=...&query=...`, or a notebook's
//! "Download as JSON"): `{"series":[{"metric","scope","pointlist":[[epoch_ms, value or null],...],
//! "interval","unit":[{"name":"second",...},null]}]}`. A `null` point is a bad sample (refused or
//! skipped by the merge). Selectors name a `metric` or a `scope` (or match `display_name`,
//! `expression`). The latency unit comes from the series' `unit` when Datadog gives one.

use super::json::bad_value;
use super::scan::Cursor;
use super::series::{Locator, Series};
use super::{LatencyUnit, TraceError};
use std::borrow::Cow;

const SHAPE: &str = r#"Datadog v1 query JSON: {"status":"ok","series":[{"metric":"...","scope":"...","pointlist":[[1700000000000.0,0.25],...],"interval":60}]}"#;

/// Every series of the response (several responses may be concatenated).
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    Cursor::new(file, text, SHAPE).documents(|c, _| {
        let (mut status, mut error) = (None, None);
        let first = out.len();
        c.object(|c, key| match key {
            b"status" => {
                status = Some(c.string()?);
                Ok(())
            }
            b"error" | b"errors" if c.peek() == Some(b'"') => {
                error = Some(c.string()?);
                Ok(())
            }
            b"series" => c
                .array(|c, i| {
                    out.push(series(c, file, format!("series[{i}].pointlist"))?);
                    Ok(())
                })
                .map(drop),
            _ => c.skip(),
        })?;
        if status.as_deref() == Some("error") || error.is_some() {
            out.truncate(first);
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "Datadog answered with an error: {}",
                    error.as_deref().unwrap_or("(no message)")
                ),
            });
        }
        Ok(())
    })?;
    Ok(out)
}

/// One entry of `series`: its names, unit and points.
fn series(c: &mut Cursor, file: &str, path: String) -> Result<Series, TraceError> {
    let mut names: [Cow<str>; 4] = Default::default(); // metric, scope, display_name, expression
    let mut unit = None;
    let mut s = Series::default();
    let mut metric_seen = false;
    c.object(|c, key| {
        let slot = match key {
            b"metric" => 0,
            b"scope" => 1,
            b"display_name" => 2,
            b"expression" => 3,
            b"pointlist" => return points(c, file, &path, &mut s),
            b"unit" => {
                unit = unit_of(c)?;
                return Ok(());
            }
            _ => return c.skip(),
        };
        if c.peek() == Some(b'n') {
            return c.skip(); // null
        }
        metric_seen |= slot == 0;
        names[slot] = c.string()?;
        Ok(())
    })?;
    if !metric_seen {
        return Err(c.error(&format!("{path}: a series without `metric`")));
    }
    let [metric, scope, display_name, expression] = names;
    s.name = format!("{metric} ({scope})");
    s.unit = unit.or_else(|| super::columns::split_header(&metric).unit);
    s.labels = vec![
        ("metric".into(), metric.into_owned()),
        ("scope".into(), scope.into_owned()),
        ("display_name".into(), display_name.into_owned()),
        ("expression".into(), expression.into_owned()),
    ];
    s.locate = Locator::Json(path);
    Ok(s)
}

/// `"unit":[{"name":"second",...},null]` (or null): the first unit's latency unit, if it is one.
fn unit_of(c: &mut Cursor) -> Result<Option<LatencyUnit>, TraceError> {
    if c.peek() != Some(b'[') {
        return c.skip().map(|_| None);
    }
    let mut unit = None;
    c.array(|c, k| {
        if k > 0 || c.peek() != Some(b'{') {
            return c.skip();
        }
        c.object(|c, key| match key {
            b"name" if c.peek() == Some(b'"') => {
                unit = match &*c.string()? {
                    "second" => Some(LatencyUnit::S),
                    "millisecond" => Some(LatencyUnit::Ms),
                    "microsecond" => Some(LatencyUnit::Us),
                    _ => None,
                };
                Ok(())
            }
            _ => c.skip(),
        })
    })?;
    Ok(unit)
}

/// `[[epoch_ms, value or null],...]`; a null is a bad sample (refused or skipped by the merge).
fn points(c: &mut Cursor, file: &str, path: &str, s: &mut Series) -> Result<(), TraceError> {
    c.array(|c, j| {
        c.array(|c, k| match k {
            0 => {
                let t = c.number()?;
                let us = (t * 1e3).round();
                if !(us.is_finite() && us.abs() < 9.0e18) || s.times.last().is_some_and(|l| us as i64 <= *l) {
                    return Err(bad_value(
                        file,
                        &format!("{path}[{j}][0]"),
                        &t.to_string(),
                        "epoch milliseconds later than the point before",
                    ));
                }
                s.times.push(us as i64);
                Ok(())
            }
            1 => {
                let v = c.number_or_null()?;
                if v.is_none() {
                    s.bad_text.insert(j, "null".into());
                }
                s.values.push(v.unwrap_or(f64::NAN));
                Ok(())
            }
            _ => Err(c.error("a point is [epoch_ms, value]")),
        })?;
        if s.values.len() != j + 1 || s.times.len() != j + 1 {
            return Err(c.error("a point is [epoch_ms, value]"));
        }
        Ok(())
    })
    .map(drop)
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
