//! Jaeger JSON (the UI's "Download JSON", or `/api/traces`): `{"data":[{"traceID","spans":[{
//! "operationName","startTime"(µs),"duration"(µs),"tags":[{"key","type","value"}],"processID"}],
//! "processes":{"p1":{"serviceName","tags"}}}]}`. A span's class: tag `error=true` or
//! `otel.status_code=ERROR` fails; else an HTTP status tag (`http.status_code`,
//! `http.response.status_code`); else `rpc.grpc.status_code`; else ok.
//!
//! `--where` keys: `service` (the process's `serviceName`), `operation` (`operationName`),
//! `kind` (the `span.kind` tag), and any span or process tag.

use super::TraceError;
use super::json::{NumOrText, bad_value, each_document};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;

const SHAPE: &str = r#"Jaeger JSON: {"data":[{"traceID":"...","spans":[{"operationName":"...","startTime":1700000000000000,"duration":1200,"tags":[...],"processID":"p1"}],"processes":{"p1":{"serviceName":"..."}}}]}"#;

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(borrow)]
    data: Vec<Trace<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Trace<'a> {
    #[serde(default, borrow)]
    spans: Vec<JSpan<'a>>,
    #[serde(default, borrow)]
    processes: HashMap<Cow<'a, str>, Process<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JSpan<'a> {
    #[serde(default, borrow)]
    operation_name: Cow<'a, str>,
    start_time: Option<NumOrText<'a>>,
    duration: Option<NumOrText<'a>>,
    #[serde(default, borrow)]
    tags: Vec<Tag<'a>>,
    #[serde(default, borrow, rename = "processID")]
    process_id: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Process<'a> {
    #[serde(default, borrow)]
    service_name: Cow<'a, str>,
    #[serde(default, borrow)]
    tags: Vec<Tag<'a>>,
}

#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(borrow)]
    value: NumOrText<'a>,
}

fn tag<'t>(tags: &'t [Tag], key: &str) -> Option<&'t NumOrText<'t>> {
    tags.iter().find(|t| t.key == key).map(|t| &t.value)
}

fn class_of(tags: &[Tag]) -> OutcomeClass {
    let error = match tag(tags, "error") {
        Some(NumOrText::Bool(b)) => *b,
        Some(NumOrText::Text(t)) => t.eq_ignore_ascii_case("true"),
        _ => false,
    };
    if error || tag(tags, "otel.status_code").is_some_and(|v| v.text().eq_ignore_ascii_case("error")) {
        return OutcomeClass::Error;
    }
    let http = tag(tags, "http.status_code").or_else(|| tag(tags, "http.response.status_code"));
    if let Some(c) =
        http.and_then(NumOrText::integer).and_then(|c| u32::try_from(c).ok()).and_then(http_class)
    {
        return c;
    }
    tag(tags, "rpc.grpc.status_code").and_then(NumOrText::integer).map_or(OutcomeClass::Ok, grpc_class)
}

/// Reads every span of every trace into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    each_document(file, text, SHAPE, |_, r: Response| {
        for (i, trace) in r.data.iter().enumerate() {
            for (j, sp) in trace.spans.iter().enumerate() {
                let at = || format!("data[{i}].spans[{j}]");
                let field = |v: &Option<NumOrText>, name: &str| {
                    v.as_ref().and_then(NumOrText::integer).filter(|n| *n >= 0).ok_or_else(|| {
                        bad_value(
                            file,
                            &format!("{}.{name}", at()),
                            &v.as_ref().map_or("nothing".into(), NumOrText::show),
                            "whole microseconds",
                        )
                    })
                };
                let (start, duration) = match field(&sp.start_time, "startTime")
                    .and_then(|s| Ok((s, field(&sp.duration, "duration")?)))
                {
                    Ok(v) => v,
                    Err(e) => {
                        out.bad(e)?;
                        continue;
                    }
                };
                let process = trace.processes.get(&sp.process_id);
                if process.is_none() && out.filters() {
                    out.bad(bad_value(
                        file,
                        &format!("{}.processID", at()),
                        &format!("{:?}", sp.process_id),
                        "a key of the trace's `processes`",
                    ))?;
                    continue;
                }
                let span = Span { t_us: start, latency_us: duration as f64, class: Some(class_of(&sp.tags)) };
                out.offer(span, at, |key| match key {
                    "service" => process.map(|p| Cow::Owned(p.service_name.to_string())),
                    "operation" => Some(Cow::Owned(sp.operation_name.to_string())),
                    "kind" => tag(&sp.tags, "span.kind").map(|v| Cow::Owned(v.text().into_owned())),
                    other => tag(&sp.tags, other)
                        .or_else(|| process.and_then(|p| tag(&p.tags, other)))
                        .map(|v| Cow::Owned(v.text().into_owned())),
                });
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceFormat;

    const DOC: &str = r#"{"data":[{"traceID":"t1","spans":[
      {"traceID":"t1","spanID":"s2","operationName":"/GetDriver","references":[],"startTime":1700000000200000,"duration":5000,"tags":[{"key":"span.kind","type":"string","value":"client"},{"key":"error","type":"bool","value":true}],"logs":[],"processID":"p1","warnings":null},
      {"traceID":"t1","spanID":"s1","operationName":"HTTP GET /dispatch","references":[],"startTime":1700000000000000,"duration":700000,"tags":[{"key":"span.kind","type":"string","value":"server"},{"key":"http.status_code","type":"int64","value":200}],"logs":[],"processID":"p2","warnings":null}],
      "processes":{"p1":{"serviceName":"redis","tags":[{"key":"hostname","type":"string","value":"h1"}]},"p2":{"serviceName":"frontend","tags":[]}},"warnings":null}],
      "total":0,"limit":0,"offset":0,"errors":null}"#;

    fn load(text: &str, filters: &[&str]) -> Result<crate::trace::CallTrace, TraceError> {
        crate::trace::spans::read_for_test(TraceFormat::Jaeger, filters, |c| read("j.json", text, c))
    }

    #[test]
    fn spans_tags_and_processes() {
        let t = load(DOC, &[]).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.first_answer(0).class, OutcomeClass::Ok);
        assert_eq!(t.first_answer(0).latency.0, 700_000);
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        assert_eq!(t.arrivals()[1].0, 200_000);
        let t = load(DOC, &["service=redis", "kind=client", "hostname=h*"]).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t.first_answer(0).latency.0, 5_000);
    }

    #[test]
    fn bad_traces_are_located() {
        let e = load(&DOC[..120], &[]).unwrap_err().to_string();
        assert!(e.contains("ends early"), "{e}");
        let e = load(&DOC.replace("\"duration\":5000", "\"duration\":null"), &[]).unwrap_err().to_string();
        assert!(e.contains("data[0].spans[0].duration: expected whole microseconds, found nothing"), "{e}");
        let e = load(r#"{"data":{}}"#, &[]).unwrap_err().to_string();
        assert!(e.contains("expected Jaeger JSON"), "{e}");
    }
}
