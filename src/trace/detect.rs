//! Which format a trace file is in, from its first bytes: JSON exports by their distinctive
//! keys (a bare Prometheus `result` array by its `metric` and `values`), Envoy logs by their
//! `[START_TIME] "METHOD ...` lines (Ambassador's start with `ACCESS `), Grafana CSV by its quoted
//! `"Time"` first column or its `Series;Time;Value` long form (after a `sep=;` line if any),
//! anything else the CSV importers (interval or per-call, from the header).
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
    if body.strip_prefix(b"ACCESS ").is_some_and(envoy_line) {
        return Some(TraceFormat::Envoy);
    }
    match body.first() {
        Some(b'[') if envoy_line(body) => Some(TraceFormat::Envoy),
        Some(b'{' | b'[') => {
            if has(b"\"resourceSpans\"") {
                Some(TraceFormat::Otlp)
            } else if has(b"\"MetricDataResults\"") {
                Some(TraceFormat::Cloudwatch)
            } else if has(b"\"pointlist\"") {
                Some(TraceFormat::Datadog)
            } else if has(b"\"resultType\"") || (has(b"\"metric\"") && has(b"\"values\"")) {
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

/// Grafana's header, after a `sep=X` line if there is one: `"Time"` (quoted, as Grafana writes
/// it) then more columns, or the long form `Series;Time;Value` (quoted or not), with `,` or `;`.
fn grafana_header(body: &[u8]) -> bool {
    let mut lines = body.split(|b| *b == b'\n');
    let mut line = lines.next().unwrap_or_default();
    if line.starts_with(b"sep=") {
        line = lines.next().unwrap_or_default();
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let wide = (line.starts_with(b"\"Time\",") || line.starts_with(b"\"Time\";")) && line.len() > 8;
    let long: Vec<Vec<u8>> = line
        .split(|b| *b == b',' || *b == b';')
        .map(|f| f.trim_ascii().iter().filter(|b| **b != b'"').map(u8::to_ascii_lowercase).collect())
        .collect();
    wide || long == [&b"series"[..], b"time", b"value"]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shape_is_recognised() {
        let cases: [(&[u8], Option<TraceFormat>); 15] = [
            (
                b"ACCESS [2019-10-22T20:33:06.455Z] \"GET /backend/ HTTP/1.1\" 200 - 0 129 3 2\n",
                Some(TraceFormat::Envoy),
            ),
            (b"\xEF\xBB\xBFsep=;\r\n\"Series\";\"Time\";\"Value\"\r\n", Some(TraceFormat::Grafana)),
            (b"Series;Time;Value\n", Some(TraceFormat::Grafana)),
            (b"sep=;\n\"Time\";\"A-series\"\n", Some(TraceFormat::Grafana)),
            (b"[{\"metric\":{},\"values\":[[1700000000.1,\"1\"]]}]", Some(TraceFormat::Prometheus)),
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
