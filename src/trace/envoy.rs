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
//! Also read: Istio's default proxy format, which adds `%RESPONSE_CODE_DETAILS%
//! %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%"` after the flags and
//! `%UPSTREAM_CLUSTER% %UPSTREAM_LOCAL_ADDRESS% ...` at the end (told apart by the field after the
//! flags: a byte count in Envoy's, a word in Istio's), and Ambassador/Emissary lines, Envoy's
//! format after `ACCESS `. A DURATION of `-` is a call with no upstream answer: it is answered at
//! once, as its flags and code say, and counted in the report.
//!
//! `--where` keys: `service` and `authority` (`:authority`), `operation` and `path`, `method`,
//! `code`, `flags`, `upstream_host`, `cluster` (Istio's `UPSTREAM_CLUSTER`).

use super::TraceError;
use super::records::LineReader;
use super::spans::{Collector, Span, http_class};
use super::timestamp::DateCache;
use crate::Result;
use crate::outcome::OutcomeClass;
use std::borrow::Cow;
use std::io::Read;

const EXPECTED: &str =
    "[START_TIME] \"METHOD PATH PROTOCOL\" CODE FLAGS BYTES_RECEIVED BYTES_SENT DURATION ...";

/// The fields of one line that a replay uses; the text fields only when a filter needs them.
#[derive(Debug, PartialEq)]
struct Line<'a> {
    start_us: i64,
    method: &'a [u8],
    path: &'a [u8],
    code: u32,
    flags: &'a [u8],
    /// `None` for `-`: no upstream answer.
    duration_ms: Option<u64>,
    authority: &'a [u8],
    upstream_host: &'a [u8],
    cluster: &'a [u8],
    /// Istio's layout (details fields after the flags).
    istio: bool,
    /// The line started with Ambassador's `ACCESS `.
    ambassador: bool,
}

/// Splits a line into tokens: `"quoted strings"` (with `\"` escapes left as written) and bare
/// words, straight from the bytes.
struct Tokens<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a [u8];
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        while self.s.get(self.i) == Some(&b' ') {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return None;
        }
        if self.s[self.i] == b'"' {
            let start = self.i + 1;
            let mut j = start;
            loop {
                match memchr::memchr2(b'"', b'\\', &self.s[j..]) {
                    Some(k) if self.s[j + k] == b'"' => {
                        self.i = j + k + 1;
                        return Some(&self.s[start..j + k]);
                    }
                    Some(k) => j += k + 2,
                    None => {
                        self.i = self.s.len();
                        return Some(&self.s[start.min(self.s.len())..]);
                    }
                }
                if j >= self.s.len() {
                    self.i = self.s.len();
                    return Some(&self.s[start..]);
                }
            }
        }
        let start = self.i;
        let end = memchr::memchr(b' ', &self.s[start..]).map_or(self.s.len(), |k| start + k);
        self.i = end;
        Some(&self.s[start..end])
    }
}

/// A whole decimal number (optional sign).
fn integer(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

fn show(b: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(b))
}

/// One line's fields; `tail` reads the fields after DURATION too (`:authority`, upstream host).
/// START_TIME's date is read only when it differs from the previous line's (`dates`).
fn parse_line<'a>(line: &'a [u8], tail: bool, dates: &mut DateCache) -> Result<Line<'a>> {
    let bad = |what: &str| crate::Error::invalid(format!("{what}; expected {EXPECTED}"));
    let ambassador = line.starts_with(b"ACCESS [");
    let line = if ambassador { &line[7..] } else { line };
    let rest = line.strip_prefix(b"[").ok_or_else(|| bad("no [START_TIME] at the start"))?;
    let close = memchr::memchr(b']', rest).ok_or_else(|| bad("no ] after START_TIME"))?;
    let start_us = dates.parse(&rest[..close], 0).map_err(|e| bad(&format!("START_TIME: expected {e}")))?;
    let mut t = Tokens { s: &rest[close + 1..], i: 0 };
    let request = t.next().ok_or_else(|| bad("no request line"))?;
    let mut parts = request.split(|b| *b == b' ');
    let (method, path) = (parts.next().unwrap_or(b"-"), parts.next().unwrap_or(b"-"));
    let code = t.next().ok_or_else(|| bad("no RESPONSE_CODE"))?;
    let code = integer(code)
        .and_then(|c| u32::try_from(c).ok())
        .ok_or_else(|| bad(&format!("RESPONSE_CODE {} is not a number", show(code))))?;
    let flags = t.next().ok_or_else(|| bad("no RESPONSE_FLAGS"))?;
    let mut rx = t.next().ok_or_else(|| bad("no BYTES_RECEIVED"))?;
    // Istio: RESPONSE_CODE_DETAILS, CONNECTION_TERMINATION_DETAILS, "UPSTREAM_TRANSPORT_FAILURE_REASON".
    let istio = integer(rx).is_none();
    if istio {
        let _termination =
            t.next().ok_or_else(|| bad("no CONNECTION_TERMINATION_DETAILS (Istio's format)"))?;
        let _failure =
            t.next().ok_or_else(|| bad("no UPSTREAM_TRANSPORT_FAILURE_REASON (Istio's format)"))?;
        rx = t.next().ok_or_else(|| bad("no BYTES_RECEIVED"))?;
        if integer(rx).is_none() {
            return Err(bad(&format!("BYTES_RECEIVED {} is not a number", show(rx))));
        }
    }
    let _tx = t.next().ok_or_else(|| bad("no BYTES_SENT"))?;
    let duration = t.next().ok_or_else(|| bad("no DURATION"))?;
    let duration_ms = match duration {
        b"-" => None,
        d => Some(integer(d).and_then(|d| u64::try_from(d).ok()).ok_or_else(|| {
            bad(&format!("DURATION {} is not whole milliseconds (nor `-`, no upstream answer)", show(d)))
        })?),
    };
    // After DURATION: UPSTREAM_SERVICE_TIME, XFF, USER-AGENT, REQUEST-ID, AUTHORITY, UPSTREAM_HOST
    // (and in Istio's format UPSTREAM_CLUSTER ...).
    let (authority, upstream_host, cluster) = if tail {
        let authority = t.nth(4).unwrap_or(b"-");
        (authority, t.next().unwrap_or(b"-"), t.next().unwrap_or(b"-"))
    } else {
        (&b"-"[..], &b"-"[..], &b"-"[..])
    };
    Ok(Line {
        start_us,
        method,
        path,
        code,
        flags,
        duration_ms,
        authority,
        upstream_host,
        cluster,
        istio,
        ambassador,
    })
}

/// The class of a line: flags first (see the module doc), then the code.
fn class_of(code: u32, flags: &[u8]) -> Option<Option<OutcomeClass>> {
    std::str::from_utf8(flags).ok().and_then(flags_class).or_else(|| http_class(code).map(Some))
}

/// What Envoy's response flags (`UF,URX`) say by themselves: `Some(None)` for `UO` (refused by
/// Envoy's own circuit breaker, never sent), `Some(Some(class))` for a failure (`UF`, `UH`,
/// `UT`, `UC`, `UR`, `URX`, `UPE`, `UMSDR`, `NC`, `DF`) or rate limiting (`RL`), `None` when
/// they decide nothing (`-`, `DC`, `DI`, ...) and the code does. `UO` outranks a failure, which
/// outranks `RL`, whatever their order; the flags are read in one pass.
pub fn flags_class(flags: &str) -> Option<Option<OutcomeClass>> {
    if flags == "-" {
        return None;
    }
    let (mut refused, mut failed, mut limited) = (false, false, false);
    for flag in flags.split(',') {
        match flag.trim() {
            "UO" => refused = true,
            "UF" | "UH" | "UT" | "UC" | "UR" | "URX" | "UPE" | "UMSDR" | "NC" | "DF" => failed = true,
            "RL" => limited = true,
            _ => {}
        }
    }
    if refused {
        Some(None)
    } else if failed {
        Some(Some(OutcomeClass::Error))
    } else {
        limited.then_some(Some(OutcomeClass::RateLimited))
    }
}

/// Whether `cell` is written like Envoy's response flags: `-`, or upper-case codes joined by `,`.
pub fn looks_like_flags(cell: &str) -> bool {
    cell == "-"
        || (!cell.is_empty()
            && cell
                .split(',')
                .all(|f| (1..=5).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_uppercase())))
}

/// Reads every line of the log into `out`: lines straight from a block buffer, nothing
/// allocated per line.
pub fn read<R: Read>(file: &str, input: R, out: &mut Collector) -> Result<(), TraceError> {
    let mut lines = LineReader::new(input);
    let mut dates = DateCache::default();
    let (mut istio, mut ambassador, mut no_answer) = (0u64, 0u64, 0u64);
    while let Some((n, raw)) =
        lines.next_line().map_err(|source| TraceError::Io { file: file.into(), source })?
    {
        let at = || format!("line {n}");
        let line = raw.trim_ascii_end();
        if line.is_empty() {
            continue;
        }
        let parsed =
            parse_line(line, out.wants_fields(), &mut dates).map_err(|e| e.to_string()).and_then(|l| {
                match class_of(l.code, l.flags) {
                    Some(c) => Ok((l, c)),
                    None => Err(format!("RESPONSE_CODE {} is not an HTTP status", l.code)),
                }
            });
        let (l, class) = match parsed {
            Ok(v) => v,
            Err(message) => {
                out.bad(TraceError::Format { file: file.into(), message: format!("{}: {message}", at()) })?;
                continue;
            }
        };
        istio += u64::from(l.istio);
        ambassador += u64::from(l.ambassador);
        no_answer += u64::from(l.duration_ms.is_none());
        let latency_us = l.duration_ms.map_or(0.0, |d| d as f64 * 1_000.0);
        let span = Span { t_us: l.start_us, latency_us, class };
        let text = String::from_utf8_lossy;
        out.offer(span, at, |key| match key {
            "service" | "authority" => Some(text(l.authority)),
            "operation" | "path" => Some(text(l.path)),
            "method" => Some(text(l.method)),
            "code" => Some(Cow::Owned(l.code.to_string())),
            "flags" => Some(text(l.flags)),
            "upstream_host" => Some(text(l.upstream_host)),
            "cluster" => Some(text(l.cluster)),
            _ => None,
        });
    }
    if istio > 0 {
        out.note(format!(
            "{istio} lines in Istio's default proxy format (RESPONSE_CODE_DETAILS, CONNECTION_TERMINATION_DETAILS \
             and UPSTREAM_TRANSPORT_FAILURE_REASON after the flags)"
        ));
    }
    if ambassador > 0 {
        out.note(format!("{ambassador} lines start with `ACCESS ` (Ambassador/Emissary): read after it"));
    }
    if no_answer > 0 {
        out.note(format!(
            "{no_answer} calls have DURATION `-` (no upstream answer): each is answered at once, as its flags \
             and code say"
        ));
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
        let dates = &mut DateCache::default();
        let l = parse_line(LOG.lines().nth(1).unwrap().as_bytes(), true, dates).unwrap();
        assert_eq!(
            (l.method, l.path, l.code, l.flags, l.duration_ms, l.authority),
            (&b"GET"[..], &b"/api/v1/users"[..], 503, &b"UO"[..], Some(0), &b"users"[..])
        );
        let quoted = r#"[2016-04-15T20:17:00.100Z] "GET /a HTTP/1.1" 200 - 0 81 3 - "-" "say \"hi\"" "a1" "auth" "up""#;
        let l = parse_line(quoted.as_bytes(), true, dates).unwrap();
        assert_eq!((l.authority, l.upstream_host, l.duration_ms), (&b"auth"[..], &b"up"[..], Some(3)));
        assert_eq!(parse_line(quoted.as_bytes(), false, dates).unwrap().authority, b"-");
        assert_eq!(l.start_us, 1_460_751_420_100_000);
    }

    #[test]
    fn start_times_reusing_the_previous_date_match_the_full_parse() {
        let dates = &mut DateCache::default();
        for start in [
            "2016-04-15T20:17:00.310Z",
            "2016-04-15T23:59:59.999Z",
            "2016-04-16T00:00:00.000Z",
            "2016-04-16T00:00:00.000+02:00",
            "2016-04-16 01:00:00",
            "2016-04-16T25:00:00Z",
            "2016-04-16T01:00:00Z",
            "2016-02-30T01:00:00Z",
            "2016-04-16",
            "2016-04-1",
        ] {
            let line = format!("[{start}] \"GET / HTTP/1.1\" 200 - 0 0 5 -");
            let full = parse_line(line.as_bytes(), false, &mut DateCache::default()).map(|l| l.start_us);
            let cached = parse_line(line.as_bytes(), false, dates).map(|l| l.start_us);
            assert_eq!(cached.map_err(|e| e.to_string()), full.map_err(|e| e.to_string()), "{start}");
        }
    }

    #[test]
    fn flags_rank_uo_then_failures_then_rate_limits_in_any_order() {
        use OutcomeClass::*;
        for (flags, want) in [
            ("-", None),
            ("DC", None),
            ("RL", Some(Some(RateLimited))),
            ("RL,UF", Some(Some(Error))),
            ("UF, RL", Some(Some(Error))),
            ("URX,UO", Some(None)),
            (" UO ", Some(None)),
            ("DI,UMSDR", Some(Some(Error))),
            ("UFX,RLL", None),
            ("", None),
        ] {
            assert_eq!(flags_class(flags), want, "{flags}");
        }
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

    /// Istio's default format, as `kubectl logs deploy/x -c istio-proxy` prints it: a 200 via the
    /// upstream, a 503 with no healthy upstream (UH, DURATION 0) and a downstream reset with no
    /// upstream answer (DURATION `-`).
    const ISTIO: &str = r#"[2024-06-02T13:24:57.930Z] "GET /status/200 HTTP/1.1" 200 - via_upstream - "-" 0 135 4 3 "-" "curl/8.5.0" "84961386-6d84-929d-98bd-c5aee93b5c88" "httpbin:8000" "10.44.1.27:80" outbound|8000||httpbin.foo.svc.cluster.local 10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46520 - default
[2024-06-02T13:24:58.000Z] "GET /status/200 HTTP/1.1" 503 UH no_healthy_upstream - "-" 0 19 0 - "-" "curl/8.5.0" "9f69865b-eed1-409b-8c12-12436234a191" "httpbin:8000" "-" outbound|8000||httpbin.foo.svc.cluster.local - 10.0.45.184:8000 10.44.1.23:46522 - default
[2024-06-02T13:24:59.500Z] "GET /delay/5 HTTP/1.1" 0 DC downstream_remote_disconnect - "-" 0 0 - - "-" "curl/8.5.0" "1d3ec87f-d974-4521-b5ac-23404817a56a" "httpbin:8000" "10.44.1.27:80" outbound|8000||httpbin.foo.svc.cluster.local 10.44.1.23:37652 10.0.45.184:8000 10.44.1.23:46524 - default
"#;

    #[test]
    fn istio_and_ambassador_lines_are_read() {
        let t = load(ISTIO, &[]).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!((t.first_answer(0).class, t.first_answer(0).latency.0), (OutcomeClass::Ok, 4_000));
        assert_eq!((t.first_answer(1).class, t.first_answer(1).latency.0), (OutcomeClass::Error, 0));
        assert_eq!((t.first_answer(2).class, t.first_answer(2).latency.0), (OutcomeClass::Error, 0));
        let notes = t.report().notes.join("\n");
        assert!(notes.contains("3 lines in Istio's default proxy format"), "{notes}");
        assert!(notes.contains("1 calls have DURATION `-` (no upstream answer)"), "{notes}");
        let cluster = load(ISTIO, &["cluster=outbound|8000||httpbin.*", "code=200"]).unwrap();
        assert_eq!(cluster.len(), 1);
        // Emissary's default: Envoy's format after `ACCESS `.
        let log = "ACCESS [2019-10-22T20:33:06.455Z] \"GET /backend/ HTTP/1.1\" 200 - 0 129 3 2 \"10.244.0.1\" \"curl/7.54.0\" \"5c9e9a29\" \"localhost:8080\" \"10.244.0.22:8080\"\n\
                   ACCESS [2019-10-22T20:33:07.000Z] \"GET /backend/ HTTP/1.1\" 503 UF 0 91 25 - \"10.244.0.1\" \"curl/7.54.0\" \"5c9e9a30\" \"localhost:8080\" \"10.244.0.22:8080\"\n";
        let t = load(log, &["service=localhost:*"]).unwrap();
        assert_eq!(
            (t.len(), t.first_answer(1).class, t.first_answer(0).latency.0),
            (2, OutcomeClass::Error, 3_000)
        );
        assert!(t.report().notes.join("\n").contains("2 lines start with `ACCESS ` (Ambassador/Emissary)"));
    }

    #[test]
    fn bad_lines_are_located() {
        let e = load("[2016-04-15T20:17:00.310Z] \"GET / HTTP/1.1\" 200 - 1\n", &[]).unwrap_err().to_string();
        assert!(e.contains("access.log: line 1: no BYTES_SENT"), "{e}");
        let e = load(&format!("{LOG}[2016-04-15T20:17:03Z] \"GET / HTTP/1.1\" 200 - 0 0 NaN 1\n"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 5: DURATION \"NaN\" is not whole milliseconds (nor `-`"), "{e}");
        let cut = ISTIO.lines().next().unwrap().split(" \"-\" 0 135").next().unwrap();
        let e = load(&format!("{cut}\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("line 1: no UPSTREAM_TRANSPORT_FAILURE_REASON (Istio's format)"), "{e}");
        let e = load("GET / 200\n", &[]).unwrap_err().to_string();
        assert!(e.contains("line 1: no [START_TIME]"), "{e}");
        let skip = TraceOptions { skip_bad_rows: true, ..TraceOptions::default() };
        let mut c = Collector::new(&skip).unwrap();
        read("a.log", format!("{LOG}garbage\n").as_bytes(), &mut c).unwrap();
        let t = c.finish("a.log", TraceFormat::Envoy, &skip).unwrap();
        assert_eq!((t.len(), t.report().bad_rows_skipped), (4, 1));
    }
}
