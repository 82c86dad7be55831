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
use super::json::{NumOrText, bad_value, each_document};
use super::spans::{Collector, Span, grpc_class, http_class};
use crate::outcome::OutcomeClass;
use serde::Deserialize;
use std::borrow::Cow;

const SHAPE: &str = r#"OTLP JSON traces: {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"..."}}]},"scopeSpans":[{"spans":[{"name":"...","kind":3,"startTimeUnixNano":"...","endTimeUnixNano":"...","status":{"code":0}}]}]}]}"#;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request<'a> {
    #[serde(borrow)]
    resource_spans: Vec<ResourceSpans<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans<'a> {
    #[serde(default, borrow)]
    resource: Option<Resource<'a>>,
    #[serde(default, borrow, alias = "instrumentationLibrarySpans")]
    scope_spans: Vec<ScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct Resource<'a> {
    #[serde(default, borrow)]
    attributes: Vec<KeyValue<'a>>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(default, borrow)]
    spans: Vec<OtlpSpan<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OtlpSpan<'a> {
    #[serde(default, borrow)]
    name: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Option<NumOrText<'a>>,
    #[serde(borrow)]
    start_time_unix_nano: Option<NumOrText<'a>>,
    #[serde(borrow)]
    end_time_unix_nano: Option<NumOrText<'a>>,
    #[serde(default, borrow)]
    attributes: Vec<KeyValue<'a>>,
    #[serde(default, borrow)]
    status: Option<Status<'a>>,
}

#[derive(Deserialize)]
struct Status<'a> {
    #[serde(default, borrow)]
    code: Option<NumOrText<'a>>,
}

#[derive(Deserialize)]
struct KeyValue<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(default, borrow)]
    value: AnyValue<'a>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AnyValue<'a> {
    #[serde(default, borrow)]
    string_value: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    int_value: Option<NumOrText<'a>>,
    #[serde(default)]
    bool_value: Option<bool>,
    #[serde(default)]
    double_value: Option<f64>,
}

impl AnyValue<'_> {
    fn text(&self) -> Option<Cow<'_, str>> {
        if let Some(s) = &self.string_value {
            return Some(Cow::Borrowed(s));
        }
        if let Some(i) = &self.int_value {
            return i.integer().map(|v| Cow::Owned(v.to_string()));
        }
        self.bool_value
            .map(|b| Cow::Owned(b.to_string()))
            .or_else(|| self.double_value.map(|d| Cow::Owned(d.to_string())))
    }
    fn integer(&self) -> Option<i64> {
        self.int_value
            .as_ref()
            .and_then(NumOrText::integer)
            .or_else(|| self.string_value.as_ref().and_then(|s| s.parse().ok()))
    }
}

fn attr<'v>(attrs: &'v [KeyValue], key: &str) -> Option<&'v AnyValue<'v>> {
    attrs.iter().find(|kv| kv.key == key).map(|kv| &kv.value)
}

const KINDS: [&str; 6] = ["unspecified", "internal", "server", "client", "producer", "consumer"];

fn kind_name(k: Option<&NumOrText>) -> &'static str {
    match k {
        None => "unspecified",
        Some(NumOrText::Text(s)) => {
            let s = s.strip_prefix("SPAN_KIND_").unwrap_or(s);
            KINDS.iter().find(|k| k.eq_ignore_ascii_case(s)).copied().unwrap_or("unspecified")
        }
        Some(n) => {
            n.integer().and_then(|i| KINDS.get(usize::try_from(i).ok()?)).copied().unwrap_or("unspecified")
        }
    }
}

fn class_of(span: &OtlpSpan) -> OutcomeClass {
    let error = match span.status.as_ref().and_then(|s| s.code.as_ref()) {
        Some(NumOrText::Text(t)) => t.ends_with("ERROR"),
        Some(n) => n.integer() == Some(2),
        None => false,
    };
    if error {
        return OutcomeClass::Error;
    }
    let http = attr(&span.attributes, "http.response.status_code")
        .or_else(|| attr(&span.attributes, "http.status_code"));
    if let Some(c) = http.and_then(AnyValue::integer).and_then(|c| u32::try_from(c).ok()).and_then(http_class)
    {
        return c;
    }
    match attr(&span.attributes, "rpc.grpc.status_code").and_then(AnyValue::integer) {
        Some(code) => grpc_class(code),
        None => OutcomeClass::Ok,
    }
}

/// Reads every span of the request(s) into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    each_document(file, text, SHAPE, |doc, req: Request| {
        for (i, rs) in req.resource_spans.iter().enumerate() {
            let resource: &[KeyValue] = rs.resource.as_ref().map_or(&[], |r| &r.attributes);
            let service = attr(resource, "service.name").and_then(AnyValue::text);
            for (j, ss) in rs.scope_spans.iter().enumerate() {
                for (k, sp) in ss.spans.iter().enumerate() {
                    let at = || {
                        let line = if doc > 0 { format!("request {}: ", doc + 1) } else { String::new() };
                        format!("{line}resourceSpans[{i}].scopeSpans[{j}].spans[{k}]")
                    };
                    let nanos = |v: &Option<NumOrText>, field: &str| {
                        v.as_ref().and_then(NumOrText::integer).filter(|n| *n > 0).ok_or_else(|| {
                            bad_value(
                                file,
                                &format!("{}.{field}", at()),
                                &v.as_ref().map_or("nothing".into(), NumOrText::show),
                                "epoch nanoseconds, e.g. \"1700000000000000000\"",
                            )
                        })
                    };
                    let times = nanos(&sp.start_time_unix_nano, "startTimeUnixNano")
                        .and_then(|s| Ok((s, nanos(&sp.end_time_unix_nano, "endTimeUnixNano")?)));
                    let (start, end) = match times {
                        Ok((s, e)) if e >= s => (s, e),
                        Ok((s, e)) => {
                            out.bad(bad_value(
                                file,
                                &format!("{}.endTimeUnixNano", at()),
                                &e.to_string(),
                                &format!("a time no earlier than startTimeUnixNano {s}"),
                            ))?;
                            continue;
                        }
                        Err(e) => {
                            out.bad(e)?;
                            continue;
                        }
                    };
                    let span = Span {
                        t_us: start / 1_000,
                        latency_us: (end - start) as f64 / 1_000.0,
                        class: Some(class_of(sp)),
                    };
                    out.offer(span, at, |key| match key {
                        "service" => service.clone(),
                        "operation" => Some(Cow::Borrowed(&*sp.name)),
                        "kind" => Some(Cow::Borrowed(kind_name(sp.kind.as_ref()))),
                        other => attr(&sp.attributes, other)
                            .or_else(|| attr(resource, other))
                            .and_then(AnyValue::text)
                            .map(|c| Cow::Owned(c.into_owned())),
                    });
                }
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
