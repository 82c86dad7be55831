//! OpenTelemetry OTLP JSON traces: one `ExportTraceServiceRequest`
//! (`{"resourceSpans":[{"resource":{"attributes":[...]},"scopeSpans":[{"spans":[...]}]}]}`), or
//! the collector's file exporter output (one request per line). A span becomes a call: start
//! `startTimeUnixNano`, latency `endTimeUnixNano − startTimeUnixNano` (nanoseconds, as strings
//! or numbers), class from `status.code` (ERROR fails), else from an HTTP status attribute
//! (`http.response.status_code`, `http.status_code`), else from `rpc.grpc.status_code`, else ok.
//!
//! `--where` keys: `service` (resource `service.name`), `operation` (span `name`), `kind`
//! (`client`, `server`, `internal`, `producer`, `consumer`), and any span or resource attribute.

use super::TraceError;
use super::json::bad_value;
use super::scan::{Cursor, Scalar};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use std::borrow::Cow;

const SHAPE: &str = r#"OTLP JSON traces: {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"..."}}]},"scopeSpans":[{"spans":[{"name":"...","kind":3,"startTimeUnixNano":"...","endTimeUnixNano":"...","status":{"code":0}}]}]}]}"#;

/// Attributes as read: key as written, value.
type Attrs<'a> = Vec<(&'a [u8], Scalar<'a>)>;

fn attr<'v, 'a>(attrs: &'v Attrs<'a>, key: &str) -> Option<&'v Scalar<'a>> {
    attrs.iter().find(|(k, _)| *k == key.as_bytes()).map(|(_, v)| v)
}

const KINDS: [&str; 6] = ["unspecified", "internal", "server", "client", "producer", "consumer"];

fn kind_name(k: &Scalar) -> &'static str {
    match k {
        Scalar::Text(s) => {
            let s = s.strip_prefix("SPAN_KIND_").unwrap_or(s);
            KINDS.iter().find(|k| k.eq_ignore_ascii_case(s)).copied().unwrap_or("unspecified")
        }
        n => n.integer().and_then(|i| KINDS.get(usize::try_from(i).ok()?)).copied().unwrap_or("unspecified"),
    }
}

/// `status.code` ERROR fails; else an HTTP status attribute; else the gRPC status; else ok.
fn class_of(code: &Scalar, attrs: &Attrs) -> OutcomeClass {
    let error = match code {
        Scalar::Text(t) => t.ends_with("ERROR"),
        n => n.integer() == Some(2),
    };
    if error {
        return OutcomeClass::Error;
    }
    let http = attr(attrs, "http.response.status_code").or_else(|| attr(attrs, "http.status_code"));
    if let Some(c) = http.and_then(Scalar::integer).and_then(|c| u32::try_from(c).ok()).and_then(http_class) {
        return c;
    }
    match attr(attrs, "rpc.grpc.status_code").and_then(Scalar::integer) {
        Some(code) => grpc_class(code),
        None => OutcomeClass::Ok,
    }
}

/// `[{"key":"...","value":{"stringValue":"..."}},...]` into `out` (cleared first; other value
/// kinds, arrays and maps, are kept as null).
fn attributes<'a>(c: &mut Cursor<'a>, out: &mut Attrs<'a>) -> Result<(), TraceError> {
    out.clear();
    c.key_values(out, |c| {
        let mut value = Scalar::Null;
        c.fields(&[b"stringValue", b"intValue", b"boolValue", b"doubleValue"], |c, _| {
            c.scalar().map(|v| value = v)
        })?;
        Ok(value)
    })
}

/// What the reader keeps between spans: the resource's attributes and one span's, reused.
struct State<'a> {
    resource: Attrs<'a>,
    span: Attrs<'a>,
}

/// Reads every span of the request(s) into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    let mut st = State { resource: Vec::new(), span: Vec::new() };
    Cursor::new(file, text, SHAPE)
        .documents(|c, doc| {
            c.member("resourceSpans", |c| {
                c.array(|c, i| resource_spans(c, file, doc, i, out, &mut st)).map(drop)
            })
        })
        .map(drop)
}

/// One `resourceSpans[i]`: its resource first (exporters write it first; if not, the spans are
/// read again once it is known).
fn resource_spans<'a>(
    c: &mut Cursor<'a>,
    file: &str,
    doc: usize,
    i: usize,
    out: &mut Collector,
    st: &mut State<'a>,
) -> Result<(), TraceError> {
    st.resource.clear();
    let mut seen_resource = false;
    let mut later: Option<usize> = None;
    c.fields(&[b"resource", b"scopeSpans", b"instrumentationLibrarySpans"], |c, field| match field {
        0 => {
            seen_resource = true;
            c.fields(&[b"attributes"], |c, _| attributes(c, &mut st.resource))
        }
        _ if !seen_resource => {
            later = Some(c.position());
            c.skip()
        }
        _ => scope_spans(c, (file, doc, i), out, st),
    })?;
    if let Some(at) = later {
        let end = c.position();
        c.seek(at);
        scope_spans(c, (file, doc, i), out, st)?;
        c.seek(end);
    }
    Ok(())
}

/// `scopeSpans` of `resourceSpans[i]` of request `doc`: every span, offered to `out`.
fn scope_spans<'a>(
    c: &mut Cursor<'a>,
    (file, doc, i): (&str, usize, usize),
    out: &mut Collector,
    st: &mut State<'a>,
) -> Result<(), TraceError> {
    c.array(|c, j| {
        c.fields(&[b"spans"], |c, _| c.array(|c, k| span(c, file, (doc, i, j, k), out, st)).map(drop))
    })
    .map(drop)
}

/// The fields of a span read, in the order exporters write them.
const SPAN_FIELDS: [&[u8]; 6] =
    [b"name", b"kind", b"startTimeUnixNano", b"endTimeUnixNano", b"attributes", b"status"];

/// One span, offered to `out`; `(doc, i, j, k)` place it for messages.
fn span<'a>(
    c: &mut Cursor<'a>,
    file: &str,
    (doc, i, j, k): (usize, usize, usize, usize),
    out: &mut Collector,
    st: &mut State<'a>,
) -> Result<(), TraceError> {
    let (mut name, mut kind, mut start, mut end, mut code) =
        (Cow::Borrowed(""), Scalar::Null, Scalar::Null, Scalar::Null, Scalar::Null);
    st.span.clear();
    c.fields(&SPAN_FIELDS, |c, field| match field {
        0 => c.string().map(|v| name = v),
        1 => c.scalar().map(|v| kind = v),
        2 => c.scalar().map(|v| start = v),
        3 => c.scalar().map(|v| end = v),
        4 => attributes(c, &mut st.span),
        _ => c.fields(&[b"code"], |c, _| c.scalar().map(|v| code = v)),
    })?;
    let at = || {
        let line = if doc > 0 { format!("request {}: ", doc + 1) } else { String::new() };
        format!("{line}resourceSpans[{i}].scopeSpans[{j}].spans[{k}]")
    };
    let nanos = |v: &Scalar, field: &str| {
        v.integer().filter(|n| *n > 0).ok_or_else(|| {
            let shown = if *v == Scalar::Null { "null (or nothing)".into() } else { v.show() };
            bad_value(
                file,
                &format!("{}.{field}", at()),
                &shown,
                "epoch nanoseconds, e.g. \"1700000000000000000\"",
            )
        })
    };
    let times = nanos(&start, "startTimeUnixNano").and_then(|s| Ok((s, nanos(&end, "endTimeUnixNano")?)));
    let (start, end) = match times {
        Ok((s, e)) if e >= s => (s, e),
        Ok((s, e)) => {
            return out.bad(bad_value(
                file,
                &format!("{}.endTimeUnixNano", at()),
                &e.to_string(),
                &format!("a time no earlier than startTimeUnixNano {s}"),
            ));
        }
        Err(e) => return out.bad(e),
    };
    let span = Span {
        t_us: start / 1_000,
        latency_us: (end - start) as f64 / 1_000.0,
        class: Some(class_of(&code, &st.span)),
    };
    let (resource, attrs) = (&st.resource, &st.span);
    out.offer(span, at, |key| match key {
        "service" => attr(resource, "service.name").and_then(Scalar::text),
        "operation" => Some(Cow::Borrowed(&*name)),
        "kind" => Some(Cow::Borrowed(kind_name(&kind))),
        other => attr(attrs, other).or_else(|| attr(resource, other)).and_then(Scalar::text),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceFormat;

    const DOC: &str = r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"frontend"}}]},"scopeSpans":[{"scope":{"name":"grpc"},"spans":[
      {"traceId":"a","spanId":"1","name":"hipstershop.CurrencyService/Convert","kind":3,"startTimeUnixNano":"1700000000500000000","endTimeUnixNano":"1700000000512000000","attributes":[{"key":"rpc.grpc.status_code","value":{"intValue":"14"}}],"status":{}},
      {"traceId":"a","spanId":"2","name":"hipstershop.CurrencyService/Convert","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000010000000","status":{"code":"STATUS_CODE_OK"}},
      {"traceId":"b","spanId":"3","name":"GET /","kind":2,"startTimeUnixNano":1700000001000000000,"endTimeUnixNano":1700000001300000000,"attributes":[{"key":"http.response.status_code","value":{"intValue":503}}]},
      {"traceId":"c","spanId":"4","name":"hipstershop.CurrencyService/Convert","kind":3,"startTimeUnixNano":"1700000002000000000","endTimeUnixNano":"1700000002020000000","status":{"code":2}}
    ]}]},{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"cart"}}]},"scopeSpans":[{"spans":[
      {"name":"hipstershop.CurrencyService/Convert","kind":3,"startTimeUnixNano":"1700000000100000000","endTimeUnixNano":"1700000000101000000"}]}]}]}"#;

    fn load(text: &str, filters: &[&str]) -> Result<crate::trace::CallTrace, TraceError> {
        crate::trace::spans::read_for_test(TraceFormat::Otlp, filters, |c| read("t.json", text, c))
    }

    #[test]
    fn spans_become_sorted_calls_with_classes() {
        let t = load(DOC, &[]).unwrap();
        assert_eq!(t.len(), 5);
        assert_eq!(t.epoch_offset_us(), 1_700_000_000_000_000);
        let a: Vec<u64> = t.arrivals().iter().map(|x| x.0).collect();
        assert_eq!(a, vec![0, 100_000, 500_000, 1_000_000, 2_000_000]);
        use OutcomeClass::*;
        let classes: Vec<_> = (0..5).map(|i| t.first_answer(i).class).collect();
        assert_eq!(classes, vec![Ok, Ok, Error, Error, Error]);
        assert_eq!(t.first_answer(2).latency.0, 12_000);
    }

    #[test]
    fn where_keeps_one_services_client_spans_of_one_operation() {
        let t =
            load(DOC, &["service=front*", "operation=hipstershop.CurrencyService/Convert", "kind=client"])
                .unwrap();
        assert_eq!(t.len(), 3);
        let notes = t.report().notes.join("\n");
        assert!(notes.contains("--where left out 2 of 5 spans"), "{notes}");
        let e = load(DOC, &["service=nobody"]).unwrap_err().to_string();
        assert!(e.contains("no span matches --where") && e.contains("service \"frontend\""), "{e}");
    }

    #[test]
    fn bad_spans_are_located() {
        let e = load(&DOC[..300], &[]).unwrap_err().to_string();
        assert!(e.contains("ends early"), "{e}");
        let e = load(&DOC.replace("\"1700000000000000000\"", "null"), &[]).unwrap_err().to_string();
        assert!(
            e.contains(
                "resourceSpans[0].scopeSpans[0].spans[1].startTimeUnixNano: expected epoch nanoseconds"
            ),
            "{e}"
        );
        let e = load(&DOC.replace("\"1700000000010000000\"", "\"1600000000010000000\""), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("spans[1].endTimeUnixNano") && e.contains("no earlier than"), "{e}");
        let e = load(r#"{"resourceSpans":{}}"#, &[]).unwrap_err().to_string();
        assert!(e.contains("expected OTLP JSON traces"), "{e}");
        let e = load(r#"{"resourceSpans":[]}"#, &[]).unwrap_err().to_string();
        assert!(e.contains("no spans found"), "{e}");
    }
}
