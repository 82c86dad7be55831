//! Prometheus HTTP API `query_range` JSON (`curl .../api/v1/query_range?...`, or Grafana's
//! query inspector "Data" → download of the raw response):
//! `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`.
//! Times are float seconds; values are strings and may be `NaN` or `±Inf` (kept as bad samples,
//! refused or skipped by the merge). A series' unit comes from its metric name (`_seconds`,
//! `_ms`), which `histogram_quantile` drops, hence `p95:s=...`.

use super::TraceError;
use super::json::bad_value;
use super::scan::{Cursor, parse_number};
use super::series::{Locator, Series};
use std::borrow::Cow;
use std::collections::BTreeMap;

const SHAPE: &str = r#"Prometheus query_range JSON: {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[1700000000,"0.25"],...]}]}}"#;

/// Every series of a `query_range` response (several responses may be concatenated).
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    Cursor::new(file, text, SHAPE).documents(|c, doc| response(c, file, doc, &mut out))?;
    Ok(out)
}

/// One response: its status is checked first (an error answer has no data), then its matrix.
fn response(c: &mut Cursor, file: &str, doc: usize, out: &mut Vec<Series>) -> Result<(), TraceError> {
    let (mut status, mut error, mut data) = (None, None, false);
    let first = out.len();
    c.object(|c, key| match key {
        b"status" => {
            status = Some(c.string()?);
            Ok(())
        }
        b"error" => {
            error = Some(c.string()?);
            Ok(())
        }
        b"data" => {
            data = true;
            c.object(|c, key| match key {
                b"resultType" => {
                    let t = c.string()?;
                    if t != "matrix" {
                        return Err(TraceError::Format {
                            file: file.into(),
                            message: format!(
                                "resultType {t:?}: an instant query; export a range query (query_range, resultType \"matrix\")"
                            ),
                        });
                    }
                    Ok(())
                }
                b"result" => c
                    .array(|c, i| {
                        let path = if doc == 0 {
                            format!("data.result[{i}].values")
                        } else {
                            format!("response {doc}: data.result[{i}].values")
                        };
                        out.push(series(c, file, path)?);
                        Ok(())
                    })
                    .map(drop),
                _ => c.skip(),
            })
        }
        _ => c.skip(),
    })?;
    match status.as_deref() {
        Some("success") if data => Ok(()),
        Some("success") => Err(TraceError::Format {
            file: file.into(),
            message: format!("no `data` in response {doc}; expected {SHAPE}"),
        }),
        Some(s) => {
            out.truncate(first);
            Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "status {s:?}: Prometheus answered with an error: {}",
                    error.as_deref().unwrap_or("(no message)")
                ),
            })
        }
        None => Err(c.error("no `status` in the response")),
    }
}

/// One `{"metric":{...},"values":[[t,"v"],...]}`.
fn series(c: &mut Cursor, file: &str, path: String) -> Result<Series, TraceError> {
    let mut labels: BTreeMap<Cow<str>, Cow<str>> = BTreeMap::new();
    let mut s = Series::default();
    c.object(|c, key| match key {
        b"metric" => c.object(|c, key| {
            let v = c.string()?;
            labels.insert(String::from_utf8_lossy(key), v);
            Ok(())
        }),
        b"values" => values(c, file, &path, &mut s).map(drop),
        _ => c.skip(),
    })?;
    let name = labels.get("__name__").map(|n| n.to_string()).unwrap_or_default();
    let rest: Vec<String> =
        labels.iter().filter(|(k, _)| *k != "__name__").map(|(k, v)| format!("{k}={v:?}")).collect();
    s.name = format!("{name}{{{}}}", rest.join(","));
    s.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    s.unit = super::columns::split_header(&name).unit;
    s.locate = Locator::Json(path);
    Ok(s)
}

/// The `[[t,"v"],...]` samples: float seconds, values in strings (`NaN`, `±Inf` kept as bad
/// samples for the merge to refuse or skip).
fn values(c: &mut Cursor, file: &str, path: &str, s: &mut Series) -> Result<usize, TraceError> {
    c.array(|c, i| {
        c.array(|c, k| match k {
            0 => {
                let t = c.number()?;
                let us = (t * 1e6).round();
                if !(us.is_finite() && us.abs() < 9.0e18) {
                    return Err(bad_value(
                        file,
                        &format!("{path}[{i}][0]"),
                        &t.to_string(),
                        "a time in epoch seconds",
                    ));
                }
                let us = us as i64;
                if s.times.last().is_some_and(|last| us <= *last) {
                    return Err(bad_value(
                        file,
                        &format!("{path}[{i}][0]"),
                        &t.to_string(),
                        "a time later than the sample before (samples must be sorted)",
                    ));
                }
                s.times.push(us);
                Ok(())
            }
            1 => {
                if c.peek() != Some(b'"') {
                    return Err(c.error("a sample's value must be a number in a string, e.g. \"0.25\""));
                }
                let v = c.raw_string()?;
                let value = match parse_number(v) {
                    Some(x) if x.is_finite() => x,
                    Some(_) => {
                        s.bad_text.insert(i, format!("{:?}", String::from_utf8_lossy(v)));
                        f64::NAN
                    }
                    None => {
                        return Err(bad_value(
                            file,
                            &format!("{path}[{i}][1]"),
                            &format!("{:?}", String::from_utf8_lossy(v)),
                            "a number in a string, e.g. \"0.25\"",
                        ));
                    }
                };
                s.values.push(value);
                Ok(())
            }
            _ => Err(c.error("a sample is [time, \"value\"]")),
        })?;
        if s.values.len() != i + 1 {
            return Err(c.error("a sample is [time, \"value\"]"));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"http_request_duration_seconds","job":"api","quantile":"0.95"},"values":[[1435781430.781,"1"],[1435781445.781,"NaN"],[1435781460.781,"+Inf"]]},
      {"metric":{},"values":[[1435781430,"0.5"]]}]}}"#;

    #[test]
    fn matrix_series_with_labels_units_and_bad_samples() {
        let s = parse("p.json", DOC).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "http_request_duration_seconds{job=\"api\",quantile=\"0.95\"}");
        assert_eq!(s[0].times, vec![1_435_781_430_781_000, 1_435_781_445_781_000, 1_435_781_460_781_000]);
        assert_eq!(s[0].values[0], 1.0);
        assert!(s[0].values[1].is_nan() && s[0].values[2].is_nan());
        assert_eq!(s[0].bad_text[&2], "\"+Inf\"");
        assert_eq!(s[0].unit, Some(super::super::LatencyUnit::S));
        assert_eq!(s[0].at(1), "data.result[0].values[1]");
        assert_eq!(s[1].name, "{}");
        assert_eq!(s[1].unit, None);
    }

    #[test]
    fn wrong_shapes_are_named() {
        let e = parse("p.json", &DOC[..200]).unwrap_err().to_string();
        assert!(e.starts_with("p.json: line 2, column") && e.contains("ends early"), "{e}");
        let e = parse("p.json", r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("parse error"), "{e}");
        let e = parse("p.json", r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("instant query"), "{e}");
        let e = parse("p.json", r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}}"#).unwrap_err().to_string();
        assert!(e.contains("data.result[0].values[0][1]: expected a number in a string"), "{e}");
        let e = parse("p.json", r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,null]]}]}}"#).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("expected Prometheus query_range JSON"), "{e}");
        let e = parse("p.json", r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[2,"1"],[1,"1"]]}]}}"#).unwrap_err().to_string();
        assert!(e.contains("values[1][0]") && e.contains("sorted"), "{e}");
    }
}
