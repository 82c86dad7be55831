//! HTTP Archive 1.2 (a browser's "Save all as HAR", or a proxy's export):
//! `{"log":{"entries":[{"startedDateTime","time"(ms),"request":{"method","url"},"response":{"status"}}]}}`.
//! An entry becomes a call at `startedDateTime` lasting `time`; its class comes from the status
//! (0, a request that got no response, is an error).
//!
//! `--where` keys: `service` and `host` (the URL's host), `operation` and `path` (the URL's
//! path), `url`, `method`, `status`.

use super::TraceError;
use super::json::bad_value;
use super::scan::Cursor;
use super::spans::{Collector, Span, http_class};
use super::timestamp::DateCache;
use std::borrow::Cow;

const SHAPE: &str = r#"HAR 1.2: {"log":{"version":"1.2","entries":[{"startedDateTime":"2024-01-01T10:00:00.000Z","time":12.5,"request":{"method":"GET","url":"..."},"response":{"status":200}}]}}"#;

/// One entry's fields, as read.
struct Entry<'a> {
    started: &'a [u8],
    time: Option<f64>,
    method: Cow<'a, str>,
    url: Cow<'a, str>,
    status: Option<f64>,
}

/// `(host, path)` of a URL (`https://api.example.com:443/v1/x?y` → `api.example.com:443`, `/v1/x`).
fn host_path(url: &str) -> (&str, &str) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (host, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    (host, path.split(['?', '#']).next().unwrap_or(path))
}

/// Reads every entry into `out`.
pub fn read(file: &str, text: &str, out: &mut Collector) -> Result<(), TraceError> {
    let mut dates = DateCache::default();
    Cursor::new(file, text, SHAPE)
        .documents(|c, _| {
            c.member("log", |c| {
                c.member("entries", |c| c.array(|c, i| entry(c, file, i, &mut dates, out)).map(drop))
            })
        })
        .map(drop)
}

/// One entry of `log.entries`, offered to `out`.
fn entry(
    c: &mut Cursor,
    file: &str,
    i: usize,
    dates: &mut DateCache,
    out: &mut Collector,
) -> Result<(), TraceError> {
    let mut e =
        Entry { started: b"", time: None, method: Cow::Borrowed(""), url: Cow::Borrowed(""), status: None };
    let mut has_start = false;
    c.fields(&[b"startedDateTime", b"time", b"request", b"response"], |c, field| match field {
        0 => c.raw_string().map(|v| {
            e.started = v;
            has_start = true;
        }),
        1 => c.number_or_null().map(|v| e.time = v),
        2 => c.fields(&[b"method", b"url"], |c, field| {
            let v = c.string()?;
            if field == 0 {
                e.method = v;
            } else {
                e.url = v;
            }
            Ok(())
        }),
        _ => c.fields(&[b"status"], |c, _| c.number_or_null().map(|v| e.status = v)),
    })?;
    if !has_start {
        return Err(c.error(&format!("log.entries[{i}]: an entry without `startedDateTime`")));
    }
    let at = || format!("log.entries[{i}]");
    let start = match dates.parse(e.started, 0) {
        Ok(t) => t,
        Err(why) => {
            return out.bad(bad_value(
                file,
                &format!("{}.startedDateTime", at()),
                &format!("{:?}", String::from_utf8_lossy(e.started)),
                why,
            ));
        }
    };
    let time = match e.time.filter(|t| t.is_finite() && *t >= 0.0) {
        Some(t) => t,
        None => {
            let found = e.time.map_or("null (or nothing)".to_string(), |t| t.to_string());
            return out.bad(bad_value(file, &format!("{}.time", at()), &found, "milliseconds, 0 or more"));
        }
    };
    let status = e.status.filter(|s| s.fract() == 0.0 && (0.0..1000.0).contains(s)).map(|s| s as u32);
    let Some(class) = status.and_then(http_class) else {
        let found = e.status.map_or("null (or nothing)".to_string(), |s| s.to_string());
        return out.bad(bad_value(
            file,
            &format!("{}.response.status", at()),
            &found,
            "an HTTP status (0 = no response)",
        ));
    };
    let span = Span { t_us: start, latency_us: time * 1_000.0, class: Some(class) };
    let code = status.unwrap_or_default();
    out.offer(span, at, |key| match key {
        "service" | "host" => Some(Cow::Borrowed(host_path(&e.url).0)),
        "operation" | "path" => Some(Cow::Borrowed(host_path(&e.url).1)),
        "url" => Some(Cow::Borrowed(&*e.url)),
        "method" => Some(Cow::Borrowed(&*e.method)),
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
