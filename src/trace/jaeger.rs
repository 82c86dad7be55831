//! Jaeger JSON (the UI's "Download JSON", or `/api/traces`): `{"data":[{"traceID","spans":[{
//! "operationName","startTime"(µs),"duration"(µs),"tags":[{"key","type","value"}],"processID"}],
//! "processes":{"p1":{"serviceName","tags"}}}]}`. A span's class: tag `error=true` or
//! `otel.status_code=ERROR` fails; else an HTTP status tag (`http.status_code`,
//! `http.response.status_code`); else `rpc.grpc.status_code`; else ok.
//!
//! `--where` keys: `service` (the process's `serviceName`), `operation` (`operationName`),
//! `kind` (the `span.kind` tag), and any span or process tag.

use super::TraceError;
use super::json::bad_value;
use super::scan::{Cursor, Scalar};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use std::borrow::Cow;
use std::ops::Range;

const SHAPE: &str = r#"Jaeger JSON: {"data":[{"traceID":"...","spans":[{"operationName":"...","startTime":1700000000000000,"duration":1200,"tags":[...],"processID":"p1"}],"processes":{"p1":{"serviceName":"..."}}}]}"#;

/// Tags as read (key as written, value), all of a trace's in one reused list.
type Tags<'a> = Vec<(&'a [u8], Scalar<'a>)>;

fn tag<'v, 'a>(tags: &'v [(&'a [u8], Scalar<'a>)], key: &str) -> Option<&'v Scalar<'a>> {
    tags.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| v)
}

fn class_of(tags: &[(&[u8], Scalar)]) -> OutcomeClass {
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

/// A span read, waiting for its trace's `processes` (which Jaeger writes after the spans).
struct Pending<'a> {
    operation: Cow<'a, str>,
    start: Scalar<'a>,
    duration: Scalar<'a>,
    process: Cow<'a, str>,
    tags: Range<usize>,
}

/// A process: its service and tags (a range of the trace's tag list).
struct Process<'a> {
    id: Cow<'a, str>,
    service: Cow<'a, str>,
    tags: Range<usize>,
}

/// `[{"key":"...","type":"...","value":...},...]` appended to `tags`; returns their range.
fn read_tags<'a>(c: &mut Cursor<'a>, tags: &mut Tags<'a>) -> Result<Range<usize>, TraceError> {
    let first = tags.len();
    c.key_values(tags, |c| match c.peek() {
        Some(b'[' | b'{') => c.skip().map(|_| Scalar::Null),
        _ => c.scalar(),
    })?;
    Ok(first..tags.len())
}

/// Reads every span of every trace into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    let (mut spans, mut processes, mut tags) = (Vec::new(), Vec::new(), Vec::new());
    Cursor::new(file, text, SHAPE)
        .documents(|c, _| {
            c.member("data", |c| {
                c.array(|c, i| {
                    spans.clear();
                    processes.clear();
                    tags.clear();
                    trace(c, &mut spans, &mut processes, &mut tags)?;
                    offer(file, i, &spans, &processes, &tags, out)
                })
                .map(drop)
            })
        })
        .map(drop)
}

/// One trace of `data`: its spans and processes, as read.
fn trace<'a>(
    c: &mut Cursor<'a>,
    spans: &mut Vec<Pending<'a>>,
    processes: &mut Vec<Process<'a>>,
    tags: &mut Tags<'a>,
) -> Result<(), TraceError> {
    c.object(|c, key| match key {
        b"spans" => c
            .array(|c, _| {
                let mut p = Pending {
                    operation: Cow::Borrowed(""),
                    start: Scalar::Null,
                    duration: Scalar::Null,
                    process: Cow::Borrowed(""),
                    tags: 0..0,
                };
                c.object(|c, k| match k {
                    b"operationName" => {
                        p.operation = c.string()?;
                        Ok(())
                    }
                    b"startTime" => {
                        p.start = c.scalar()?;
                        Ok(())
                    }
                    b"duration" => {
                        p.duration = c.scalar()?;
                        Ok(())
                    }
                    b"processID" => {
                        p.process = c.string()?;
                        Ok(())
                    }
                    b"tags" => {
                        p.tags = read_tags(c, tags)?;
                        Ok(())
                    }
                    _ => c.skip(),
                })?;
                spans.push(p);
                Ok(())
            })
            .map(drop),
        b"processes" => c.object(|c, id| {
            let mut p = Process { id: String::from_utf8_lossy(id), service: Cow::Borrowed(""), tags: 0..0 };
            c.object(|c, k| match k {
                b"serviceName" => {
                    p.service = c.string()?;
                    Ok(())
                }
                b"tags" => {
                    p.tags = read_tags(c, tags)?;
                    Ok(())
                }
                _ => c.skip(),
            })?;
            processes.push(p);
            Ok(())
        }),
        _ => c.skip(),
    })
}

/// Offers the spans of trace `i`, each with its process.
fn offer(
    file: &str,
    i: usize,
    spans: &[Pending],
    processes: &[Process],
    tags: &Tags,
    out: &mut Collector,
) -> Result<(), TraceError> {
    for (j, sp) in spans.iter().enumerate() {
        let at = || format!("data[{i}].spans[{j}]");
        let field = |v: &Scalar, name: &str| {
            v.integer().filter(|n| *n >= 0).ok_or_else(|| {
                let shown = if *v == Scalar::Null { "null (or nothing)".into() } else { v.show() };
                bad_value(file, &format!("{}.{name}", at()), &shown, "whole microseconds")
            })
        };
        let (start, duration) =
            match field(&sp.start, "startTime").and_then(|s| Ok((s, field(&sp.duration, "duration")?))) {
                Ok(v) => v,
                Err(e) => {
                    out.bad(e)?;
                    continue;
                }
            };
        let process = processes.iter().find(|p| p.id == sp.process);
        if process.is_none() && out.filters() {
            out.bad(bad_value(
                file,
                &format!("{}.processID", at()),
                &format!("{:?}", sp.process),
                "a key of the trace's `processes`",
            ))?;
            continue;
        }
        let own = &tags[sp.tags.clone()];
        let theirs = process.map_or(&[][..], |p| &tags[p.tags.clone()]);
        let span = Span { t_us: start, latency_us: duration as f64, class: Some(class_of(own)) };
        out.offer(span, at, |key| match key {
            "service" => process.map(|p| Cow::Borrowed(&*p.service)),
            "operation" => Some(Cow::Borrowed(&*sp.operation)),
            "kind" => tag(own, "span.kind").and_then(Scalar::text),
            other => tag(own, other).or_else(|| tag(theirs, other)).and_then(Scalar::text),
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
