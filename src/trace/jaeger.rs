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

/// A span read, waiting for its trace's `processes` (which Jaeger writes after the spans):
/// only when a `--where` needs its process; otherwise it is offered at once.
struct Pending<'a> {
    j: usize,
    operation: Cow<'a, str>,
    span: Span,
    process: &'a [u8],
    tags: Range<usize>,
}

/// A process: its id (as written), service and tags (a range of the trace's tag list).
struct Process<'a> {
    id: &'a [u8],
    service: Cow<'a, str>,
    tags: Range<usize>,
}

/// What the reader reuses from trace to trace: spans held for a `--where`, processes, tags, and
/// the process ids spans offered at once named (`(id, first span, spans)`, so a trace's spans
/// cost one comparison each), and spans whose process is missing.
struct State<'a> {
    held: Vec<Pending<'a>>,
    processes: Vec<Process<'a>>,
    tags: Tags<'a>,
    named: Vec<(&'a [u8], usize, u64)>,
    unknown: u64,
    first_unknown: Option<String>,
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
    let mut st = State {
        held: Vec::new(),
        processes: Vec::new(),
        tags: Vec::new(),
        named: Vec::new(),
        unknown: 0,
        first_unknown: None,
    };
    Cursor::new(file, text, SHAPE).documents(|c, _| {
        c.member("data", |c| {
            c.array(|c, i| {
                st.held.clear();
                st.processes.clear();
                st.tags.clear();
                st.named.clear();
                trace(c, file, i, &mut st, out)?;
                offer_held(file, i, &mut st, out)
            })
            .map(drop)
        })
    })?;
    if st.unknown > 0 {
        out.note(format!(
            "warning: {} spans name a processID missing from their trace's `processes` (the first: {}): \
             imported without a service or process tags (with a --where such spans are refused)",
            st.unknown,
            st.first_unknown.as_deref().unwrap_or("")
        ));
    }
    Ok(())
}

/// One trace of `data`: spans are offered as they are read (held until its `processes` only
/// when a `--where` may need them).
fn trace<'a>(
    c: &mut Cursor<'a>,
    file: &str,
    i: usize,
    st: &mut State<'a>,
    out: &mut Collector,
) -> Result<(), TraceError> {
    c.fields(&[b"spans", b"processes"], |c, field| match field {
        0 => c.array(|c, j| span(c, file, (i, j), st, out)).map(drop),
        _ => c.object(|c, id| {
            let mut p = Process { id, service: Cow::Borrowed(""), tags: 0..0 };
            c.fields(&[b"serviceName", b"tags"], |c, field| match field {
                0 => c.string().map(|v| p.service = v),
                _ => {
                    p.tags = read_tags(c, &mut st.tags)?;
                    Ok(())
                }
            })?;
            st.processes.push(p);
            Ok(())
        }),
    })?;
    for &(id, j, n) in &st.named {
        if !st.processes.iter().any(|p| p.id == id) {
            st.unknown += n;
            st.first_unknown
                .get_or_insert_with(|| format!("data[{i}].spans[{j}] {:?}", String::from_utf8_lossy(id)));
        }
    }
    Ok(())
}

/// The fields of a span read, in the order Jaeger writes them.
const SPAN_FIELDS: [&[u8]; 5] = [b"operationName", b"startTime", b"duration", b"tags", b"processID"];

/// One span of trace `i`: read, then offered (or held for a `--where`).
fn span<'a>(
    c: &mut Cursor<'a>,
    file: &str,
    (i, j): (usize, usize),
    st: &mut State<'a>,
    out: &mut Collector,
) -> Result<(), TraceError> {
    let (mut operation, mut start, mut duration, mut process) =
        (Cow::Borrowed(""), Scalar::Null, Scalar::Null, &b""[..]);
    let first_tag = st.tags.len();
    c.fields(&SPAN_FIELDS, |c, field| match field {
        0 => c.string().map(|v| operation = v),
        1 => c.scalar().map(|v| start = v),
        2 => c.scalar().map(|v| duration = v),
        3 => read_tags(c, &mut st.tags).map(drop),
        _ => c.raw_string().map(|v| process = v),
    })?;
    let at = || format!("data[{i}].spans[{j}]");
    let field = |v: &Scalar, name: &str| {
        v.integer().filter(|n| *n >= 0).ok_or_else(|| {
            let shown = if *v == Scalar::Null { "null (or nothing)".into() } else { v.show() };
            bad_value(file, &format!("{}.{name}", at()), &shown, "whole microseconds")
        })
    };
    let (start, duration) =
        match field(&start, "startTime").and_then(|s| Ok((s, field(&duration, "duration")?))) {
            Ok(v) => v,
            Err(e) => {
                st.tags.truncate(first_tag);
                return out.bad(e);
            }
        };
    let tags = first_tag..st.tags.len();
    let span =
        Span { t_us: start, latency_us: duration as f64, class: Some(class_of(&st.tags[tags.clone()])) };
    if out.filters() {
        st.held.push(Pending { j, operation, span, process, tags });
        return Ok(());
    }
    st.tags.truncate(first_tag);
    match st.named.last_mut() {
        Some((id, _, n)) if *id == process => *n += 1,
        _ => match st.named.iter_mut().find(|(id, _, _)| *id == process) {
            Some((_, _, n)) => *n += 1,
            None => st.named.push((process, j, 1)),
        },
    }
    out.offer(span, at, |_| None);
    Ok(())
}

/// Offers the spans of trace `i` held for a `--where`, each with its process; a span whose
/// process is missing cannot answer the filter's questions and is refused, located.
fn offer_held(file: &str, i: usize, st: &mut State, out: &mut Collector) -> Result<(), TraceError> {
    for sp in &st.held {
        let j = sp.j;
        let at = || format!("data[{i}].spans[{j}]");
        let Some(process) = st.processes.iter().find(|p| p.id == sp.process) else {
            out.bad(bad_value(
                file,
                &format!("{}.processID", at()),
                &format!("{:?}", String::from_utf8_lossy(sp.process)),
                "a key of the trace's `processes`",
            ))?;
            continue;
        };
        let own = &st.tags[sp.tags.clone()];
        let theirs = &st.tags[process.tags.clone()];
        out.offer(sp.span, at, |key| match key {
            "service" => Some(Cow::Borrowed(&*process.service)),
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
