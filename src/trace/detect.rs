//! Which format a trace file is in, from its first bytes: JSON exports by their distinctive
//! keys, Envoy logs by their `[START_TIME] "METHOD ...` lines, Grafana CSV by its quoted `"Time"`
//! first column, anything else the CSV importers (interval or per-call, from the header).
//! `--format` skips detection.

use super::{TraceError, TraceFormat};
use std::io::Read;
use std::path::Path;

/// How much of the file detection reads.
const PREFIX: u64 = 64 * 1024;

/// The format of the file at `path`, from its content.
pub fn detect(path: &Path) -> Result<TraceFormat, TraceError> {
    let file = path.display().to_string();
    let mut head = Vec::new();
    crate::scenario::open_input(path)?
        .take(PREFIX)
        .read_to_end(&mut head)
        .map_err(|source| TraceError::Io { file: file.clone(), source })?;
    detect_bytes(&head).ok_or_else(|| TraceError::Format {
        file,
        message: "a JSON file of no format breakerlab reads (expected Prometheus query_range, CloudWatch \
                  GetMetricData, Datadog query, OTLP traces, Jaeger traces or HAR; --format names one)"
            .into(),
    })
}

/// The format of a file starting with `head`; `None` for JSON of no known shape.
pub fn detect_bytes(head: &[u8]) -> Option<TraceFormat> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let body = &head[start..];
    let has = |key: &[u8]| body.windows(key.len()).any(|w| w == key);
    match body.first() {
        Some(b'[') if envoy_line(body) => Some(TraceFormat::Envoy),
        Some(b'{' | b'[') => {
            if has(b"\"resourceSpans\"") {
                Some(TraceFormat::Otlp)
            } else if has(b"\"MetricDataResults\"") {
                Some(TraceFormat::Cloudwatch)
            } else if has(b"\"pointlist\"") {
                Some(TraceFormat::Datadog)
            } else if has(b"\"resultType\"") {
                Some(TraceFormat::Prometheus)
            } else if has(b"\"entries\"") && has(b"\"log\"") {
                Some(TraceFormat::Har)
            } else if has(b"\"operationName\"") || has(b"\"processes\"") {
                Some(TraceFormat::Jaeger)
            } else {
                None
            }
        }
        _ => Some(if grafana_header(body) { TraceFormat::Grafana } else { TraceFormat::Interval }),
    }
}

/// `[2016-04-15T20:17:00.310Z] "` : a bracketed date-time, then a quoted request line.
fn envoy_line(body: &[u8]) -> bool {
    body.len() > 12
        && body[1..5].iter().all(u8::is_ascii_digit)
        && body[5] == b'-'
        && body.iter().position(|b| *b == b']').is_some_and(|end| body[end + 1..].starts_with(b" \""))
}

/// A header whose first field is `"Time"` (quoted, as Grafana writes it) with more columns.
fn grafana_header(body: &[u8]) -> bool {
    let line = body.split(|b| *b == b'\n').next().unwrap_or_default();
    line.starts_with(b"\"Time\",") && line.len() > 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_is_recognised() {
        let cases: [(&[u8], Option<TraceFormat>); 10] = [
            (
                br#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#,
                Some(TraceFormat::Prometheus),
            ),
            (b"\xEF\xBB\xBF\"Time\",\"p95\"\n1700000000000,1\n", Some(TraceFormat::Grafana)),
            (br#"{"MetricDataResults":[]}{"MetricDataResults":[]}"#, Some(TraceFormat::Cloudwatch)),
            (br#"{"status":"ok","series":[{"pointlist":[]}]}"#, Some(TraceFormat::Datadog)),
            (br#"  {"resourceSpans":[]}"#, Some(TraceFormat::Otlp)),
            (
                br#"{"data":[{"traceID":"a","spans":[{"operationName":"x"}],"processes":{}}]}"#,
                Some(TraceFormat::Jaeger),
            ),
            (
                b"[2016-04-15T20:17:00.310Z] \"POST /api HTTP/2\" 204 - 154 0 226 100\n",
                Some(TraceFormat::Envoy),
            ),
            (br#"{"log":{"version":"1.2","entries":[]}}"#, Some(TraceFormat::Har)),
            (b"timestamp,latency_ms,status\n", Some(TraceFormat::Interval)),
            (br#"{"hello":"world"}"#, None),
        ];
        for (head, expect) in cases {
            assert_eq!(detect_bytes(head), expect, "{}", String::from_utf8_lossy(head));
        }
    }
}
