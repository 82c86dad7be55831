//! HTTP Archive 1.2 (a browser's "Save all as HAR", or a proxy's export):
//! `{"log":{"entries":[{"startedDateTime","time"(ms),"request":{"method","url"},"response":{"status"}}]}}`.
//! An entry becomes a call at `startedDateTime` lasting `time`; its class comes from the status
//! (0, a request that got no response, is an error).
//!
//! `--where` keys: `service` and `host` (the URL's host), `operation` and `path` (the URL's
//! path), `url`, `method`, `status`.

use super::TraceError;
use super::json::{Number, bad_value, documents};
use super::spans::{Collector, Span, http_class};
use super::timestamp::parse_datetime;
use serde::Deserialize;
use std::borrow::Cow;

const SHAPE: &str = r#"HAR 1.2: {"log":{"version":"1.2","entries":[{"startedDateTime":"2024-01-01T10:00:00.000Z","time":12.5,"request":{"method":"GET","url":"..."},"response":{"status":200}}]}}"#;

/// The archive.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Har<'a> {
    #[serde(borrow)]
    log: Log<'a>,
}

/// Its `log`.
#[derive(Deserialize)]
#[serde(expecting = "an object")]
struct Log<'a> {
    #[serde(borrow)]
    entries: Vec<Entry<'a>>,
}

/// One entry's fields, as read.
#[derive(Deserialize)]
#[serde(expecting = "an object", rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow)]
    started_date_time: Cow<'a, str>,
    #[serde(default)]
    time: Option<Number>,
    #[serde(default, borrow)]
    request: Request<'a>,
    #[serde(default)]
    response: Response,
}

/// An entry's `request`.
#[derive(Default, Deserialize)]
#[serde(expecting = "an object")]
struct Request<'a> {
    #[serde(default, borrow)]
    method: Cow<'a, str>,
    #[serde(default, borrow)]
    url: Cow<'a, str>,
}

/// An entry's `response`.
#[derive(Default, Deserialize)]
#[serde(expecting = "an object")]
struct Response {
    #[serde(default)]
    status: Option<Number>,
}

/// `(host, path)` of a URL (`https://api.example.com:443/v1/x?y` → `api.example.com:443`, `/v1/x`).
fn host_path(url: &str) -> (&str, &str) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    (host, path.split(['?', '#']).next().unwrap_or(path))
}

/// Reads every entry into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    documents(file, text, SHAPE, |h: Har, _| {
        h.log.entries.iter().enumerate().try_for_each(|(i, e)| entry(e, file, i, out))
    })
    .map(drop)
}

/// One entry of `log.entries`, offered to `out`.
fn entry(e: &Entry, file: &str, i: usize, out: &mut Collector) -> Result<(), TraceError> {
    let at = || format!("log.entries[{i}]");
    let start = match parse_datetime(e.started_date_time.as_bytes(), 0) {
        Ok(t) => t,
        Err(why) => {
            return out.bad(bad_value(
                file,
                &format!("{}.startedDateTime", at()),
                &format!("{:?}", e.started_date_time),
                why,
            ));
        }
    };
    let time = e.time.map(|n| n.0);
    let time = match time.filter(|t| t.is_finite() && *t >= 0.0) {
        Some(t) => t,
        None => {
            let found = time.map_or("null (or nothing)".to_string(), |t| t.to_string());
            return out.bad(bad_value(file, &format!("{}.time", at()), &found, "milliseconds, 0 or more"));
        }
    };
    let status = e.response.status.map(|n| n.0);
    let code = status.filter(|s| s.fract() == 0.0 && (0.0..1000.0).contains(s)).map(|s| s as u32);
    let Some(class) = code.and_then(http_class) else {
        let found = status.map_or("null (or nothing)".to_string(), |s| s.to_string());
        return out.bad(bad_value(
            file,
            &format!("{}.response.status", at()),
            &found,
            "an HTTP status (0 = no response)",
        ));
    };
    let span = Span { t_us: start, latency_us: time * 1_000.0, class: Some(class) };
    let code = code.unwrap_or_default();
    let url = &*e.request.url;
    out.offer(span, at, |key| match key {
        "service" | "host" => Some(Cow::Borrowed(host_path(url).0)),
        "operation" | "path" => Some(Cow::Borrowed(host_path(url).1)),
        "url" => Some(Cow::Borrowed(url)),
        "method" => Some(Cow::Borrowed(&*e.request.method)),
        "status" => Some(Cow::Owned(code.to_string())),
        _ => None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::OutcomeClass;
    use crate::trace::TraceFormat;

    const DOC: &str = r#"{"log":{"version":"1.2","creator":{"name":"Firefox","version":"120.0"},"pages":[],"entries":[
      {"startedDateTime":"2024-01-01T10:00:00.000+01:00","time":120.5,"request":{"method":"GET","url":"https://api.example.com/v1/items?page=2","httpVersion":"HTTP/2","headers":[]},"response":{"status":200,"statusText":"OK"},"cache":{},"timings":{"send":0,"wait":120,"receive":0.5}},
      {"startedDateTime":"2024-01-01T10:00:01.500+01:00","time":30,"request":{"method":"GET","url":"https://cdn.example.com/app.js"},"response":{"status":0,"statusText":""},"timings":{}}]}}"#;

    fn load(text: &str, filters: &[&str]) -> Result<crate::trace::CallTrace, TraceError> {
        crate::trace::spans::read_for_test(TraceFormat::Har, filters, |c| read("x.har", text, c))
    }

    #[test]
    fn entries_become_calls() {
        let t = load(DOC, &[]).unwrap();
        assert_eq!(t.epoch_offset_us(), 1_704_099_600_000_000);
        assert_eq!(t.first_answer(0).latency.0, 120_500);
        assert_eq!(t.first_answer(1).class, OutcomeClass::Error);
        assert_eq!(t.arrivals()[1].0, 1_500_000);
        let api = load(DOC, &["service=api.*", "operation=/v1/*"]).unwrap();
        assert_eq!(api.len(), 1);
        assert_eq!(host_path("http://h:8080"), ("h:8080", "/"));
    }

    #[test]
    fn bad_entries_are_located() {
        let e = load(&DOC[..100], &[]).unwrap_err().to_string();
        assert!(e.contains("ends early"), "{e}");
        let e = load(&DOC.replace("\"time\":30", "\"time\":null"), &[]).unwrap_err().to_string();
        assert!(e.contains("log.entries[1].time: expected milliseconds"), "{e}");
        let e = load(&DOC.replace("\"status\":0", "\"status\":-1"), &[]).unwrap_err().to_string();
        assert!(e.contains("log.entries[1].response.status"), "{e}");
        let e = load(r#"{"log":{"entries":{}}}"#, &[]).unwrap_err().to_string();
        assert!(e.contains("expected HAR 1.2"), "{e}");
    }
}
