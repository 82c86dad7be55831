//! Prometheus HTTP API `query_range` JSON (`curl .../api/v1/query_range?...`, or Grafana's
//! query inspector "Data" → download of the raw response):
//! `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`.
//! Times are float seconds; values are strings and may be `NaN` or `±Inf` (kept as bad samples,
//! refused or skipped by the merge). A series' unit comes from its metric name (`_seconds`,
//! `_ms`), which `histogram_quantile` drops, hence `p95:s=...`.

use super::TraceError;
use super::json::each_document;
use super::series::{Locator, Series};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

const SHAPE: &str = r#"Prometheus query_range JSON: {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[1700000000,"0.25"],...]}]}}"#;

#[derive(Deserialize)]
struct Response<'a> {
    status: Cow<'a, str>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(rename = "resultType")]
    result_type: Cow<'a, str>,
    #[serde(borrow)]
    result: Vec<Matrix<'a>>,
}

#[derive(Deserialize)]
struct Matrix<'a> {
    #[serde(default, borrow)]
    metric: BTreeMap<Cow<'a, str>, Cow<'a, str>>,
    #[serde(borrow)]
    values: Vec<(f64, &'a str)>,
}

/// Every series of a `query_range` response (several responses may be concatenated).
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    each_document(file, text, SHAPE, |doc, r: Response| {
        if r.status != "success" {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "status {:?}: Prometheus answered with an error: {}",
                    r.status,
                    r.error.as_deref().unwrap_or("(no message)")
                ),
            });
        }
        let data = r.data.ok_or_else(|| TraceError::Format {
            file: file.into(),
            message: format!("no `data` in response {doc}; expected {SHAPE}"),
        })?;
        if data.result_type != "matrix" {
            return Err(TraceError::Format {
                file: file.into(),
                message: format!(
                    "resultType {:?}: an instant query; export a range query (query_range, resultType \"matrix\")",
                    data.result_type
                ),
            });
        }
        for (i, m) in data.result.into_iter().enumerate() {
            let path = if doc == 0 {
                format!("data.result[{i}].values")
            } else {
                format!("response {doc}: data.result[{i}].values")
            };
            out.push(series(file, m, path)?);
        }
        Ok(())
    })?;
    Ok(out)
}

fn series(file: &str, m: Matrix, path: String) -> Result<Series, TraceError> {
    let name = m.metric.get("__name__").map(|n| n.to_string()).unwrap_or_default();
    let rest: Vec<String> =
        m.metric.iter().filter(|(k, _)| *k != "__name__").map(|(k, v)| format!("{k}={v:?}")).collect();
    let mut s = Series {
        name: format!("{name}{{{}}}", rest.join(",")),
        labels: m.metric.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        unit: super::columns::split_header(&name).unit,
        times: Vec::with_capacity(m.values.len()),
        values: Vec::with_capacity(m.values.len()),
        ..Series::default()
    };
    for (i, (t, v)) in m.values.iter().enumerate() {
        let us = (t * 1e6).round();
        if !(us.is_finite() && us.abs() < 9.0e18) {
            return Err(super::json::bad_value(
                file,
                &format!("{path}[{i}][0]"),
                &t.to_string(),
                "a time in epoch seconds",
            ));
        }
        let us = us as i64;
        if s.times.last().is_some_and(|last| us <= *last) {
            return Err(super::json::bad_value(
                file,
                &format!("{path}[{i}][0]"),
                &t.to_string(),
                "a time later than the sample before (samples must be sorted)",
            ));
        }
        let value = match v.parse::<f64>() {
            Ok(x) if x.is_finite() => x,
            Ok(_) => {
                s.bad_text.insert(i, format!("{v:?}"));
                f64::NAN
            }
            Err(_) => {
                return Err(super::json::bad_value(
                    file,
                    &format!("{path}[{i}][1]"),
                    &format!("{v:?}"),
                    "a number in a string, e.g. \"0.25\"",
                ));
            }
        };
        s.times.push(us);
        s.values.push(value);
    }
    s.locate = Locator::Json(path);
    Ok(s)
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
