//! Envoy access logs in the default format
//! (`[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
//! %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
//! "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%"
//! "%UPSTREAM_HOST%"`). A line becomes a call at START_TIME lasting DURATION (ms). Response flags
//! decide before the code: `UO` means Envoy's own circuit breaker refused the call (it never
//! reached the dependency: it arrives, and is answered like the nearest call that did); `UF`,
//! `UH`, `UT`, `UC`, `URX`, `UPE` are the dependency's failures; `RL` is rate limited; otherwise
//! the HTTP code decides (0 = no response = error). Lines are written at completion, so they
//! are sorted by start here.
//!
//! `--where` keys: `service` and `authority` (`:authority`), `operation` and `path`, `method`,
//! `code`, `flags`, `upstream_host`.

use super::TraceError;
use super::records::LineReader;
use super::spans::{Collector, Span, http_class};
use super::timestamp::parse_datetime;
use crate::Result;
use crate::outcome::OutcomeClass;
use std::borrow::Cow;
use std::io::Read;

const EXPECTED: &str =
    "[START_TIME] \"METHOD PATH PROTOCOL\" CODE FLAGS BYTES_RECEIVED BYTES_SENT DURATION ...";

/// The fields of one line that a replay uses.
#[derive(Debug, PartialEq)]
struct Line<'a> {
    start_us: i64,
    method: &'a str,
    path: &'a str,
    code: u32,
    flags: &'a str,
    duration_ms: u64,
    authority: &'a str,
    upstream_host: &'a str,
}

/// Splits `rest` into tokens: `"quoted strings"` (with `\"` escapes left as written) and bare words.
fn tokens(rest: &str) -> impl Iterator<Item = &str> {
    let mut s = rest;
    std::iter::from_fn(move || {
        s = s.trim_start();
        if s.is_empty() {
            return None;
        }
        if let Some(q) = s.strip_prefix('"') {
            let mut end = q.len();
            let b = q.as_bytes();
            let mut i = 0;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => {
                        end = i;
                        break;
                    }
                    _ => i += 1,
                }
            }
            let tok = &q[..end.min(q.len())];
            s = q.get(end + 1..).unwrap_or("");
            Some(tok)
        } else {
            let end = s.find(' ').unwrap_or(s.len());
            let tok = &s[..end];
            s = &s[end..];
            Some(tok)
        }
    })
}

fn parse_line(line: &str) -> Result<Line<'_>> {
    let bad = |what: &str| crate::Error::invalid(format!("{what}; expected {EXPECTED}"));
    let rest = line.strip_prefix('[').ok_or_else(|| bad("no [START_TIME] at the start"))?;
    let close = rest.find(']').ok_or_else(|| bad("no ] after START_TIME"))?;
    let start_us = parse_datetime(&rest.as_bytes()[..close], 0)
        .map_err(|e| bad(&format!("START_TIME: expected {e}")))?;
    let mut t = tokens(&rest[close + 1..]);
    let request = t.next().ok_or_else(|| bad("no request line"))?;
    let mut parts = request.split(' ');
    let (method, path) = (parts.next().unwrap_or("-"), parts.next().unwrap_or("-"));
    let code = t.next().ok_or_else(|| bad("no RESPONSE_CODE"))?;
    let code: u32 = code.parse().map_err(|_| bad(&format!("RESPONSE_CODE {code:?} is not a number")))?;
    let flags = t.next().ok_or_else(|| bad("no RESPONSE_FLAGS"))?;
    let _rx = t.next().ok_or_else(|| bad("no BYTES_RECEIVED"))?;
    let _tx = t.next().ok_or_else(|| bad("no BYTES_SENT"))?;
    let duration = t.next().ok_or_else(|| bad("no DURATION"))?;
    let duration_ms: u64 =
        duration.parse().map_err(|_| bad(&format!("DURATION {duration:?} is not whole milliseconds")))?;
    // After DURATION: UPSTREAM_SERVICE_TIME, XFF, USER-AGENT, REQUEST-ID, AUTHORITY, UPSTREAM_HOST.
    let authority = t.nth(4).unwrap_or("-");
    let upstream_host = t.next().unwrap_or("-");
    Ok(Line { start_us, method, path, code, flags, duration_ms, authority, upstream_host })
}

/// The class of a line: flags first (see the module doc), then the code.
fn class_of(code: u32, flags: &str) -> Option<Option<OutcomeClass>> {
    let has = |f: &str| flags.split(',').any(|x| x == f);
    if has("UO") {
        return Some(None);
    }
    if ["UF", "UH", "UT", "UC", "URX", "UPE", "UMSDR"].iter().any(|f| has(f)) {
        return Some(Some(OutcomeClass::Error));
    }
    if has("RL") {
        return Some(Some(OutcomeClass::RateLimited));
    }
    http_class(code).map(Some)
}

/// Reads every line of the log into `out`: lines straight from a block buffer, nothing
/// allocated per line.
pub fn read<R: Read>(file: &str, input: R, out: &mut Collector) -> Result<(), TraceError> {
    let mut lines = LineReader::new(input);
    while let Some((n, raw)) =
        lines.next_line().map_err(|source| TraceError::Io { file: file.into(), source })?
    {
        let at = || format!("line {n}");
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| format!("not UTF-8 text (byte {})", e.valid_up_to() + 1))
            .map(str::trim_end)
            .and_then(|line| {
                if line.is_empty() {
                    return Ok(None);
                }
                let l = parse_line(line).map_err(|e| e.to_string())?;
                match class_of(l.code, l.flags) {
                    Some(c) => Ok(Some((l, c))),
                    None => Err(format!("RESPONSE_CODE {} is not an HTTP status", l.code)),
                }
            });
        let (l, class) = match parsed {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(message) => {
                out.bad(TraceError::Format { file: file.into(), message: format!("{}: {message}", at()) })?;
                continue;
            }
        };
        let span = Span { t_us: l.start_us, latency_us: l.duration_ms as f64 * 1_000.0, class };
        out.offer(span, at, |key| match key {
            "service" | "authority" => Some(Cow::Borrowed(l.authority)),
            "operation" | "path" => Some(Cow::Borrowed(l.path)),
            "method" => Some(Cow::Borrowed(l.method)),
            "code" => Some(Cow::Owned(l.code.to_string())),
            "flags" => Some(Cow::Borrowed(l.flags)),
            "upstream_host" => Some(Cow::Borrowed(l.upstream_host)),
            _ => None,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{TraceFormat, TraceOptions};

    const LOG: &str = r#"[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"
[2016-04-15T20:17:00.100Z] "GET /api/v1/users HTTP/1.1" 503 UO 0 81 0 - "-" "curl/8.0 (x86_64)" "a1" "users" "-"
[2016-04-15T20:17:01.000Z] "GET /api/v1/users HTTP/1.1" 503 UF,URX 0 91 1000 - "-" "curl/8.0" "a2" "users" "10.0.2.2:80"
[2016-04-15T20:17:02.000Z] "GET /api/v1/users HTTP/1.1" 200 - 0 10 12 10 "-" "curl/8.0" "a3" "users" "10.0.2.2:80"
"#;

    fn load(text: &str, filters: &[&str]) -> Result<crate::trace::CallTrace, TraceError> {
        crate::trace::spans::read_for_test(TraceFormat::Envoy, filters, |c| {
            read("access.log", text.as_bytes(), c)
        })
    }

    #[test]
    fn lines_parse_with_quoted_fields() {
        let l = parse_line(LOG.lines().nth(1).unwrap()).unwrap();
        assert_eq!(
            (l.method, l.path, l.code, l.flags, l.duration_ms, l.authority),
            ("GET", "/api/v1/users", 503, "UO", 0, "users")
        );
        assert_eq!(l.start_us, 1_460_751_420_100_000);
    }

    #[test]
    fn flags_decide_and_uo_takes_the_nearest_answer() {
        let t = load(LOG, &[]).unwrap();
        assert_eq!(t.len(), 4);
        // Sorted by start: the UO call at .100 is answered like the nearest call (.310, 204 ok).
        assert_eq!(t.first_answer(0).class, OutcomeClass::Ok);
        assert_eq!(t.first_answer(0).latency.0, 226_000);
        assert_eq!(t.first_answer(2).class, OutcomeClass::Error);
        assert_eq!(t.first_answer(3).class, OutcomeClass::Ok);
        let notes = t.report().notes.join("\n");
        assert!(notes.contains("1 calls were refused by the proxy's own circuit breaker (UO)"), "{notes}");
        let users = load(LOG, &["service=users", "operation=/api/v1/*"]).unwrap();
        assert_eq!(users.len(), 3);
    }

    #[test]
    fn bad_lines_are_located() {
        let e = load("[2016-04-15T20:17:00.310Z] \"GET / HTTP/1.1\" 200 - 1\n", &[]).unwrap_err().to_string();
        assert!(e.contains("access.log: line 1: no BYTES_SENT"), "{e}");
        let e = load(&format!("{LOG}[2016-04-15T20:17:03Z] \"GET / HTTP/1.1\" 200 - 0 0 NaN 1\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5: DURATION \"NaN\""), "{e}");
        let e = load("GET / 200\n", &[]).unwrap_err().to_string();
        assert!(e.contains("line 1: no [START_TIME]"), "{e}");
        let skip = TraceOptions { skip_bad_rows: true, ..TraceOptions::default() };
        let mut c = Collector::new(&skip).unwrap();
        read("a.log", format!("{LOG}garbage\n").as_bytes(), &mut c).unwrap();
        let t = c.finish("a.log", TraceFormat::Envoy, &skip).unwrap();
        assert_eq!((t.len(), t.report().bad_rows_skipped), (4, 1));
    }
}
