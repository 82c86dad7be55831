//! Jaeger JSON (the UI's "Download JSON", or `/api/traces`): `{"data":[{"traceID","spans":[{
//! "operationName","startTime"(µs),"duration"(µs),"tags":[{"key","type","value"}],"processID"}],
//! "processes":{"p1":{"serviceName","tags"}}}]}`. A span's class: tag `error=true` or
//! `otel.status_code=ERROR` fails; else an HTTP status tag (`http.status_code`,
//! `http.response.status_code`); else `rpc.grpc.status_code`; else ok.
//!
//! `--where` keys: `service` (the process's `serviceName`), `operation` (`operationName`),
//! `kind` (the `span.kind` tag), and any span or process tag.

use super::TraceError;
use super::json::{AnyScalar, Scalar, bad_value, documents};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;

const SHAPE: &str = r#"Jaeger JSON: {"data":[{"traceID":"...","spans":[{"operationName":"...","startTime":1700000000000000,"duration":1200,"tags":[...],"processID":"p1"}],"processes":{"p1":{"serviceName":"..."}}}]}"#;

/// One download (or `/api/traces` answer).
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Download<'a> {
    #[serde(borrow)]
    data: Vec<Trace<'a>>,
}

/// One trace: its spans and the processes they name.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Trace<'a> {
    #[serde(default, borrow)]
    spans: Vec<JaegerSpan<'a>>,
    #[serde(default, borrow)]
    processes: HashMap<String, Process<'a>>,
}

/// The fields of a span read.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct JaegerSpan<'a> {
    #[serde(default, borrow)]
    operation_name: Cow<'a, str>,
    #[serde(default, borrow)]
    start_time: Scalar<'a>,
    #[serde(default, borrow)]
    duration: Scalar<'a>,
    #[serde(default, borrow)]
    tags: Vec<Tag<'a>>,
    #[serde(default, borrow, rename = "processID")]
    process_id: Cow<'a, str>,
}

/// A process: its service and tags.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct Process<'a> {
    #[serde(default, borrow)]
    service_name: Cow<'a, str>,
    #[serde(default, borrow)]
    tags: Vec<Tag<'a>>,
}

/// `{"key":"...","type":"...","value":...}`; a value of another kind than a scalar is null.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Tag<'a> {
    #[serde(default, borrow)]
    key: Cow<'a, str>,
    #[serde(default, borrow)]
    value: AnyScalar<'a>,
}

/// The value of the first tag named `key`.
fn tag<'v, 'a>(tags: &'v [Tag<'a>], key: &str) -> Option<&'v Scalar<'a>> {
    tags.iter().find(|t| t.key == key).map(|t| &t.value.0)
}

fn class_of(tags: &[Tag]) -> OutcomeClass {
    let error = match tag(tags, "error") {
        Some(Scalar::Bool(b)) => *b,
        Some(Scalar::Text(t)) => t.eq_ignore_ascii_case("true"),
        _ => false,
    };
    if error
        || tag(tags, "otel.status_code")
            .and_then(Scalar::text)
            .is_some_and(|v| v.eq_ignore_ascii_case("error"))
    {
        return OutcomeClass::Error;
    }
    let http = tag(tags, "http.status_code").or_else(|| tag(tags, "http.response.status_code"));
    if let Some(c) = http.and_then(Scalar::integer).and_then(|c| u32::try_from(c).ok()).and_then(http_class) {
        return c;
    }
    tag(tags, "rpc.grpc.status_code").and_then(Scalar::integer).map_or(OutcomeClass::Ok, grpc_class)
}

/// Spans whose `processID` is missing from their trace's `processes`: how many, and the first.
#[derive(Default)]
struct Unknown {
    count: u64,
    first: Option<String>,
}

/// Reads every span of every trace into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    let mut unknown = Unknown::default();
    documents(file, text, SHAPE, |d: Download, _| {
        d.data.iter().enumerate().try_for_each(|(i, t)| trace(t, file, i, &mut unknown, out))
    })?;
    if unknown.count > 0 {
        out.note(format!(
            "warning: {} spans name a processID missing from their trace's `processes` (the first: {}): \
             imported without a service or process tags (with a --where such spans are refused)",
            unknown.count,
            unknown.first.as_deref().unwrap_or("")
        ));
    }
    Ok(())
}

/// Trace `i` of `data`: each span read, then offered; when a `--where` may ask for the span's
/// process, after the trace's other spans are read (so that bad spans are met in file order).
fn trace(
    t: &Trace,
    file: &str,
    i: usize,
    unknown: &mut Unknown,
    out: &mut Collector,
) -> Result<(), TraceError> {
    let mut held = Vec::new();
    for (j, sp) in t.spans.iter().enumerate() {
        let at = || format!("data[{i}].spans[{j}]");
        let field = |v: &Scalar, name: &str| {
            v.integer().filter(|n| *n >= 0).ok_or_else(|| {
                let shown = if *v == Scalar::Null { "null (or nothing)".into() } else { v.show() };
                bad_value(file, &format!("{}.{name}", at()), &shown, "whole microseconds")
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
        let span = Span { t_us: start, latency_us: duration as f64, class: Some(class_of(&sp.tags)) };
        if out.filters() {
            held.push((j, sp, span));
            continue;
        }
        if !t.processes.contains_key(&*sp.process_id) {
            unknown.count += 1;
            unknown.first.get_or_insert_with(|| format!("{} {:?}", at(), sp.process_id));
        }
        let process = t.processes.get(&*sp.process_id);
        out.offer(span, at, |key| {
            tag(&sp.tags, key).or_else(|| process.and_then(|p| tag(&p.tags, key))).and_then(Scalar::text)
        });
    }
    for (j, sp, span) in held {
        let at = || format!("data[{i}].spans[{j}]");
        let Some(process) = t.processes.get(&*sp.process_id) else {
            out.bad(bad_value(
                file,
                &format!("{}.processID", at()),
                &format!("{:?}", sp.process_id),
                "a key of the trace's `processes`",
            ))?;
            continue;
        };
        out.offer(span, at, |key| match key {
            "service" => Some(Cow::Borrowed(&*process.service_name)),
            "operation" => Some(Cow::Borrowed(&*sp.operation_name)),
            "kind" => tag(&sp.tags, "span.kind").and_then(Scalar::text),
            other => tag(&sp.tags, other).or_else(|| tag(&process.tags, other)).and_then(Scalar::text),
        });
    }
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
    fn spans_of_a_missing_process_are_counted_or_refused_under_a_filter() {
        let doc = DOC.replace("\"processID\":\"p2\"", "\"processID\":\"p9\"");
        let t = load(&doc, &[]).unwrap();
        assert_eq!(t.len(), 2);
        let notes = t.report().notes.join("\n");
        assert!(
            notes.contains("warning: 1 spans name a processID missing from their trace's `processes` (the first: data[0].spans[1] \"p9\")"),
            "{notes}"
        );
        assert!(!load(DOC, &[]).unwrap().report().notes.iter().any(|n| n.contains("processID")));
        let e = load(&doc, &["operation=*"]).unwrap_err().to_string();
        assert!(
            e.contains("data[0].spans[1].processID: expected a key of the trace's `processes`, found \"p9\""),
            "{e}"
        );
    }

    #[test]
    fn bad_traces_are_located() {
        let e = load(&DOC[..120], &[]).unwrap_err().to_string();
        assert!(e.contains("ends early"), "{e}");
        let e = load(&DOC.replace("\"duration\":5000", "\"duration\":null"), &[]).unwrap_err().to_string();
        assert!(
            e.contains("data[0].spans[0].duration: expected whole microseconds, found null (or nothing)"),
            "{e}"
        );
        let e = load(r#"{"data":{}}"#, &[]).unwrap_err().to_string();
        assert!(e.contains("expected Jaeger JSON"), "{e}");
    }
}
