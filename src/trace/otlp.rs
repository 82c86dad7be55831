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
use super::json::{Scalar, bad_value, documents};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

const SHAPE: &str = r#"OTLP JSON traces: {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"..."}}]},"scopeSpans":[{"spans":[{"name":"...","kind":3,"startTimeUnixNano":"...","endTimeUnixNano":"...","status":{"code":0}}]}]}]}"#;

/// One `ExportTraceServiceRequest`.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct Request<'a> {
    #[serde(borrow)]
    resource_spans: Vec<ResourceSpans<'a>>,
}

/// One `resourceSpans[i]`: a resource and its spans.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct ResourceSpans<'a> {
    #[serde(default, borrow)]
    resource: Resource<'a>,
    /// `instrumentationLibrarySpans` before OTLP 0.15.
    #[serde(default, borrow, alias = "instrumentationLibrarySpans")]
    scope_spans: Vec<ScopeSpans<'a>>,
}

/// A resource: its attributes.
#[derive(Default, Deserialize)]
#[serde(expecting = "an object")]
struct Resource<'a> {
    #[serde(default, borrow)]
    attributes: Vec<KeyValue<'a>>,
}

/// One `scopeSpans[j]`.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct ScopeSpans<'a> {
    #[serde(default, borrow)]
    spans: Vec<OtlpSpan<'a>>,
}

/// The fields of a span read.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct OtlpSpan<'a> {
    #[serde(default, borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Scalar<'a>,
    #[serde(default, borrow)]
    start_time_unix_nano: Scalar<'a>,
    #[serde(default, borrow)]
    end_time_unix_nano: Scalar<'a>,
    #[serde(default, borrow)]
    attributes: Vec<KeyValue<'a>>,
    #[serde(default, borrow)]
    status: Status<'a>,
}

/// A span's `status`.
#[derive(Default, Deserialize)]
#[serde(expecting = "an object")]
struct Status<'a> {
    #[serde(default, borrow)]
    code: Scalar<'a>,
}

/// `{"key":"...","value":{"stringValue":"..."}}`.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct KeyValue<'a> {
    #[serde(default, borrow)]
    key: Cow<'a, str>,
    #[serde(default, borrow)]
    value: AnyValue<'a>,
}

/// An attribute's value (`{"stringValue":"..."}`): a scalar kind's value; arrays, maps and bytes
/// read as null.
#[derive(Default)]
struct AnyValue<'a>(Scalar<'a>);

/// The members of an attribute's value.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum ValueKind {
    StringValue,
    IntValue,
    BoolValue,
    DoubleValue,
    #[serde(other)]
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for AnyValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyValue<'de>, A::Error> {
                let mut value = Scalar::Null;
                while let Some(kind) = map.next_key()? {
                    match kind {
                        ValueKind::Other => drop(map.next_value::<IgnoredAny>()?),
                        _ => value = map.next_value()?,
                    }
                }
                Ok(AnyValue(value))
            }
        }
        d.deserialize_map(V)
    }
}

/// The value of the first attribute named `key`.
fn attr<'v, 'a>(attrs: &'v [KeyValue<'a>], key: &str) -> Option<&'v Scalar<'a>> {
    attrs.iter().find(|kv| kv.key == key).map(|kv| &kv.value.0)
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
fn class_of(code: &Scalar, attrs: &[KeyValue]) -> OutcomeClass {
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

/// Reads every span of the request(s) into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    documents(file, text, SHAPE, |r: Request, doc| {
        for (i, rs) in r.resource_spans.iter().enumerate() {
            for (j, ss) in rs.scope_spans.iter().enumerate() {
                for (k, sp) in ss.spans.iter().enumerate() {
                    span(sp, &rs.resource.attributes, file, (doc, i, j, k), out)?;
                }
            }
        }
        Ok(())
    })
    .map(drop)
}

/// One span, offered to `out`; `(doc, i, j, k)` place it for messages.
fn span(
    sp: &OtlpSpan,
    resource: &[KeyValue],
    file: &str,
    (doc, i, j, k): (usize, usize, usize, usize),
    out: &mut Collector,
) -> Result<(), TraceError> {
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
    let times = nanos(&sp.start_time_unix_nano, "startTimeUnixNano")
        .and_then(|s| Ok((s, nanos(&sp.end_time_unix_nano, "endTimeUnixNano")?)));
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
        class: Some(class_of(&sp.status.code, &sp.attributes)),
    };
    out.offer(span, at, |key| match key {
        "service" => attr(resource, "service.name").and_then(Scalar::text),
        "operation" => Some(Cow::Borrowed(&*sp.name)),
        "kind" => Some(Cow::Borrowed(kind_name(&sp.kind))),
        other => attr(&sp.attributes, other).or_else(|| attr(resource, other)).and_then(Scalar::text),
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
