//! Prometheus HTTP API `query_range` JSON (`curl .../api/v1/query_range?...`, or Grafana's
//! query inspector "Data" → download of the raw response):
//! `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}}`,
//! or its bare `result` array (`jq .data.result`, or prometheus-api-client-python's
//! `custom_query_range` saved with `json.dump`): `[{"metric":{...},"values":[...]}]`.
//! Times are float seconds; values are strings and may be `NaN` or `±Inf` (kept as samples with
//! no value: gaps for the merge, refused under `strict`). A series' unit comes from its metric
//! name (`_seconds`, `_milliseconds` anywhere in it, e.g. `http_request_duration_seconds_p95`),
//! which `histogram_quantile` drops, hence `p95:s=...`.

use super::TraceError;
use super::json::{Number, Scalar, bad_value, documents};
use super::series::{Locator, Series};
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

const SHAPE: &str = r#"Prometheus query_range JSON: {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[1700000000,"0.25"],...]}]}}, or its result array [{"metric":{...},"values":[...]}]"#;

/// One document: a response, or a bare `result` array.
enum Document<'a> {
    Response(Response<'a>),
    Result(Vec<Matrix<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Document<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Document<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a response (an object) or a result array")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Document<'de>, A::Error> {
                Response::deserialize(MapAccessDeserializer::new(map)).map(Document::Response)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Document<'de>, A::Error> {
                let mut result = Vec::new();
                while let Some(m) = seq.next_element()? {
                    result.push(m);
                }
                Ok(Document::Result(result))
            }
        }
        d.deserialize_any(V)
    }
}

/// One response.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Response<'a> {
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    data: Option<Data<'a>>,
}

/// Its `data`.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct Data<'a> {
    #[serde(default, borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    result: Vec<Matrix<'a>>,
}

/// One series of the matrix.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Matrix<'a> {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    #[serde(default, borrow)]
    values: Vec<Sample<'a>>,
}

/// One `[time, "value"]`: float seconds, and the value as written in its string.
struct Sample<'a> {
    time: f64,
    value: Cow<'a, str>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Sample<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Sample<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sample [time, \"value\"]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sample<'de>, A::Error> {
                let shape = || de::Error::custom("a sample is [time, \"value\"]");
                let Number(time) = seq.next_element()?.ok_or_else(shape)?;
                let value = match seq.next_element::<Scalar>()?.ok_or_else(shape)? {
                    Scalar::Text(value) => value,
                    _ => {
                        return Err(de::Error::custom(
                            "a sample's value must be a number in a string, e.g. \"0.25\"",
                        ));
                    }
                };
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(shape());
                }
                Ok(Sample { time, value })
            }
        }
        d.deserialize_seq(V)
    }
}

/// Every series of a `query_range` response or `result` array (several may be concatenated).
pub fn parse(file: &str, text: &str) -> Result<Vec<Series>, TraceError> {
    let mut out = Vec::new();
    documents(file, text, SHAPE, |d: Document, doc| match d {
        Document::Response(r) => response(r, file, doc, &mut out),
        Document::Result(result) => {
            for (i, m) in result.into_iter().enumerate() {
                let path =
                    if doc == 0 { format!("[{i}].values") } else { format!("array {doc}: [{i}].values") };
                out.push(series(m, file, path)?);
            }
            Ok(())
        }
    })?;
    Ok(out)
}

/// One response: an instant query is refused, then its status checked (an error answer has no
/// data), then its matrix read.
fn response(r: Response, file: &str, doc: usize, out: &mut Vec<Series>) -> Result<(), TraceError> {
    if let Some(t) = r.data.as_ref().and_then(|d| d.result_type.as_deref()).filter(|t| *t != "matrix") {
        return Err(TraceError::Format {
            file: file.into(),
            message: format!(
                "resultType {t:?}: an instant query; export a range query (query_range, resultType \"matrix\")"
            ),
        });
    }
    match (&*r.status, r.data) {
        ("success", Some(data)) => {
            for (i, m) in data.result.into_iter().enumerate() {
                let path = if doc == 0 {
                    format!("data.result[{i}].values")
                } else {
                    format!("response {doc}: data.result[{i}].values")
                };
                out.push(series(m, file, path)?);
            }
            Ok(())
        }
        ("success", None) => Err(TraceError::Format {
            file: file.into(),
            message: format!("no `data` in response {doc}; expected {SHAPE}"),
        }),
        (s, _) => Err(TraceError::Format {
            file: file.into(),
            message: format!(
                "status {s:?}: Prometheus answered with an error: {}",
                r.error.as_deref().unwrap_or("(no message)")
            ),
        }),
    }
}

/// One `{"metric":{...},"values":[[t,"v"],...]}`: float seconds, values in strings (`NaN`,
/// `±Inf` kept as bad samples for the merge to refuse or skip).
fn series(m: Matrix, file: &str, path: String) -> Result<Series, TraceError> {
    let mut s = Series::default();
    for (i, sample) in m.values.iter().enumerate() {
        let t = sample.time;
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
        let v = &sample.value;
        let value = match v.parse::<f64>() {
            Ok(x) if x.is_finite() => x,
            Ok(_) => {
                s.bad_text.insert(i, format!("{v:?}"));
                f64::NAN
            }
            Err(_) => {
                return Err(bad_value(
                    file,
                    &format!("{path}[{i}][1]"),
                    &format!("{v:?}"),
                    "a number in a string, e.g. \"0.25\"",
                ));
            }
        };
        s.values.push(value);
    }
    let labels = m.metric;
    let name = labels.get("__name__").cloned().unwrap_or_default();
    let rest: Vec<String> =
        labels.iter().filter(|(k, _)| *k != "__name__").map(|(k, v)| format!("{k}={v:?}")).collect();
    s.name = format!("{name}{{{}}}", rest.join(","));
    s.unit = super::columns::unit_in_name(&name);
    s.labels = labels.into_iter().collect();
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
    fn a_bare_result_array_with_the_unit_inside_the_name() {
        // prometheus-api-client-python: json.dump(prom.custom_query_range(...), f)
        let doc = r#"[{"metric": {"__name__": "http_request_duration_seconds_p95", "job": "api"}, "values": [[1700000000.804, "0.2"], [1700000015.805, "NaN"]]}]"#;
        let s = parse("r.json", doc).unwrap();
        assert_eq!(s[0].unit, Some(super::super::LatencyUnit::S));
        assert_eq!(s[0].times, vec![1_700_000_000_804_000, 1_700_000_015_805_000]);
        assert_eq!(s[0].at(1), "[0].values[1]");
        assert!(s[0].values[1].is_nan());
        let ms = r#"[{"metric":{"__name__":"api_latency_milliseconds_bucket_p99"},"values":[[1,"2"]]}]"#;
        assert_eq!(parse("r.json", ms).unwrap()[0].unit, Some(super::super::LatencyUnit::Ms));
        let e = parse("r.json", r#"[{"metric":{},"values":[[1,2]]}]"#).unwrap_err().to_string();
        assert!(e.contains("a number in a string") && e.contains("result array"), "{e}");
        let e = parse("r.json", "[1]").unwrap_err().to_string();
        assert!(e.contains("line 1, column 2"), "{e}");
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
