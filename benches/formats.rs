//! Import speed of each tool export (issue 12): samples or spans per second (criterion's
//! elements/s) for Prometheus, Grafana, CloudWatch, Datadog, OTLP, Jaeger, Envoy and HAR, parsed
//! from memory; and a week of per-minute series (p95, error rate and request rate, 10,080 minutes
//! each) imported from files into a replayable trace, per series format. Inputs are generated
//! once, outside the timing, by a fixed generator.
//!
//! Time is the process's CPU time (see `import_support`): the machine these run on is shared, and
//! wall time would count the neighbours' builds too.

use breakerlab::trace::spans::Collector;
use breakerlab::trace::{
    TraceFormat, TraceOptions, cloudwatch, datadog, envoy, grafana, har, jaeger, otlp, prometheus,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

mod import_support;
use import_support::timed;

/// Samples per series format, spans per span format.
const N: usize = 200_000;
/// One week of minutes.
const WEEK: usize = 7 * 24 * 60;
const T0: u64 = 1_717_243_200;

fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn value(state: &mut u64) -> f64 {
    (next(state) % 100_000) as f64 / 1e5
}

fn prometheus_doc(n: usize, seed: u64) -> String {
    let mut st = seed;
    let mut s = String::from(
        r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"api"},"values":["#,
    );
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(s, "{sep}[{},\"{}\"]", T0 + 60 * i as u64, value(&mut st));
    }
    s.push_str("]}]}}");
    s
}

fn grafana_doc(n: usize) -> String {
    let mut st = 3;
    let mut s = String::from("\"Time\",\"p95\",\"error ratio\",\"requests/s\"\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "{},{},{},{}",
            (T0 + 60 * i as u64) * 1000,
            value(&mut st),
            value(&mut st) / 10.0,
            40.0 + value(&mut st)
        );
    }
    s
}

fn cloudwatch_doc(n: usize) -> String {
    let mut st = 5;
    let mut s = String::from(r#"{"MetricDataResults":["#);
    for (k, id) in ["p95", "errors", "requests"].iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(s, r#"{sep}{{"Id":"{id}","Label":"{id}","Timestamps":["#);
        for i in (0..n).rev() {
            let sep = if i == n - 1 { "" } else { "," };
            let t = T0 + 60 * i as u64;
            let _ = write!(s, "{sep}{t}");
        }
        s.push_str(r#"],"Values":["#);
        for i in 0..n {
            let sep = if i == 0 { "" } else { "," };
            let v = if k == 2 {
                3_000.0
            } else if k == 1 {
                3.0
            } else {
                value(&mut st)
            };
            let _ = write!(s, "{sep}{v}");
        }
        s.push_str(r#"],"StatusCode":"Complete"}"#);
    }
    s.push_str("]}");
    s
}

fn datadog_doc(n: usize) -> String {
    let mut st = 9;
    let mut s = String::from(r#"{"status":"ok","series":["#);
    for (k, m) in ["trace.http.request.duration", "trace.http.request.errors", "trace.http.request.hits"]
        .iter()
        .enumerate()
    {
        let sep = if k == 0 { "" } else { "," };
        let _ = write!(s, r#"{sep}{{"metric":"{m}","scope":"service:web","pointlist":["#);
        for i in 0..n {
            let sep = if i == 0 { "" } else { "," };
            let v = if k == 2 {
                3_000.0
            } else if k == 1 {
                3.0
            } else {
                value(&mut st)
            };
            let _ = write!(s, "{sep}[{}.0,{v}]", (T0 + 60 * i as u64) * 1000);
        }
        s.push_str(r#"],"interval":60}"#);
    }
    s.push_str("]}");
    s
}

fn otlp_doc(n: usize) -> String {
    let mut st = 13;
    let mut s = String::from(
        r#"{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"frontend"}}]},"scopeSpans":[{"scope":{"name":"otelgrpc"},"spans":["#,
    );
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        let start = T0 * 1_000_000_000 + i as u64 * 10_000_000;
        let end = start + next(&mut st) % 50_000_000;
        let _ = write!(
            s,
            r#"{sep}{{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"hipstershop.CurrencyService/Convert","kind":3,"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{{"key":"rpc.grpc.status_code","value":{{"intValue":"0"}}}}],"status":{{}}}}"#
        );
    }
    s.push_str("]}]}]}");
    s
}

fn jaeger_doc(n: usize) -> String {
    let mut st = 17;
    let mut s = String::from(r#"{"data":[{"traceID":"t","spans":["#);
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            s,
            r#"{sep}{{"traceID":"t","spanID":"s{i}","operationName":"GetDriver","references":[],"startTime":{},"duration":{},"tags":[{{"key":"span.kind","type":"string","value":"client"}}],"logs":[],"processID":"p1","warnings":null}}"#,
            T0 * 1_000_000 + i as u64 * 10_000,
            next(&mut st) % 50_000
        );
    }
    s.push_str(r#"],"processes":{"p1":{"serviceName":"redis","tags":[]}}}]}"#);
    s
}

fn envoy_doc(n: usize) -> String {
    let mut st = 19;
    let mut s = String::new();
    for i in 0..n {
        let ms = i as u64 * 10;
        let _ = writeln!(
            s,
            r#"[2024-06-01T{:02}:{:02}:{:02}.{:03}Z] "POST /api/v1/convert HTTP/2" 200 - 52 31 {} 10 "10.4.0.12" "grpc-go/1.59.0" "efc2c08e-44dd-607c-74aa-5fd4e9514b91" "currencyservice:7000" "10.4.1.7:7000""#,
            (ms / 3_600_000) % 24,
            (ms / 60_000) % 60,
            (ms / 1_000) % 60,
            ms % 1_000,
            next(&mut st) % 50
        );
    }
    s
}

fn har_doc(n: usize) -> String {
    let mut st = 23;
    let mut s =
        String::from(r#"{"log":{"version":"1.2","creator":{"name":"bench","version":"1"},"entries":["#);
    for i in 0..n {
        let sep = if i == 0 { "" } else { "," };
        let ms = i as u64 * 10;
        let _ = write!(
            s,
            r#"{sep}{{"startedDateTime":"2024-06-01T{:02}:{:02}:{:02}.{:03}Z","time":{},"request":{{"method":"GET","url":"https://api.example.com/v1/cart"}},"response":{{"status":200}},"timings":{{"wait":1}}}}"#,
            (ms / 3_600_000) % 24,
            (ms / 60_000) % 60,
            (ms / 1_000) % 60,
            ms % 1_000,
            next(&mut st) % 50
        );
    }
    s.push_str("]}}");
    s
}

fn spans(read: impl Fn(&mut Collector)) -> usize {
    let opts = TraceOptions::default();
    let mut c = Collector::new(&opts).unwrap();
    read(&mut c);
    c.finish("bench", TraceFormat::Otlp, &opts).unwrap().len()
}

fn throughput(c: &mut Criterion) {
    let mut g = c.benchmark_group("format_parse");
    g.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(N as u64));
    let doc = prometheus_doc(N, 1);
    g.bench_function("prometheus", |b| {
        b.iter_custom(|n| timed(n, || prometheus::parse("b", black_box(&doc)).unwrap().len()))
    });
    let doc = grafana_doc(N / 3);
    g.bench_function("grafana", |b| {
        b.iter_custom(|n| {
            timed(n, || {
                grafana::read("b", black_box(doc.as_bytes()), &TraceOptions::default()).unwrap().len()
            })
        })
    });
    let doc = cloudwatch_doc(N / 3);
    g.bench_function("cloudwatch", |b| {
        b.iter_custom(|n| timed(n, || cloudwatch::parse("b", black_box(&doc)).unwrap().len()))
    });
    let doc = datadog_doc(N / 3);
    g.bench_function("datadog", |b| {
        b.iter_custom(|n| timed(n, || datadog::parse("b", black_box(&doc)).unwrap().len()))
    });
    let doc = otlp_doc(N);
    g.bench_function("otlp", |b| {
        b.iter_custom(|n| timed(n, || spans(|c| otlp::read("b", black_box(&doc), c).unwrap())))
    });
    let doc = jaeger_doc(N);
    g.bench_function("jaeger", |b| {
        b.iter_custom(|n| timed(n, || spans(|c| jaeger::read("b", black_box(&doc), c).unwrap())))
    });
    let doc = envoy_doc(N);
    g.bench_function("envoy", |b| {
        b.iter_custom(|n| timed(n, || spans(|c| envoy::read("b", black_box(doc.as_bytes()), c).unwrap())))
    });
    let doc = har_doc(N);
    g.bench_function("har", |b| {
        b.iter_custom(|n| timed(n, || spans(|c| har::read("b", black_box(&doc), c).unwrap())))
    });
    g.finish();
}

/// A week of per-minute p95, error and volume series, imported from files into a trace.
fn week(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let w = |name: &str, text: String| {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let mut errors = prometheus_doc(WEEK, 2);
    errors = errors.replace("\"0.", "\"0.00");
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("prometheus", {
            let (p, e, r) = (
                w("p.json", prometheus_doc(WEEK, 1)),
                w("e.json", errors),
                w("r.json", prometheus_doc(WEEK, 3)),
            );
            vec![format!("p95:s={p}"), format!("error_rate={e}"), format!("rate={r}")]
        }),
        ("grafana", {
            let g = w("g.csv", grafana_doc(WEEK));
            vec![
                format!("p95:s={g}@p95"),
                format!("error_rate={g}@error ratio"),
                format!("rate={g}@requests/s"),
            ]
        }),
        ("cloudwatch", {
            let cw = w("cw.json", cloudwatch_doc(WEEK));
            vec![format!("p95:s={cw}@p95"), format!("errors={cw}@errors"), format!("requests={cw}@requests")]
        }),
        ("datadog", {
            let dd = w("dd.json", datadog_doc(WEEK));
            vec![
                format!("p95:s={dd}@trace.http.request.duration"),
                format!("errors={dd}@trace.http.request.errors"),
                format!("requests={dd}@trace.http.request.hits"),
            ]
        }),
    ];
    let mut g = c.benchmark_group("week_per_minute_series");
    g.sample_size(10).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(3 * WEEK as u64));
    for (name, series) in cases {
        let opts = TraceOptions { series, ..TraceOptions::default() };
        let any = d.join("p.json");
        g.bench_function(name, |b| {
            b.iter_custom(|n| timed(n, || breakerlab::trace::load(&any, black_box(&opts)).unwrap().horizon()))
        });
    }
    g.finish();
}

criterion_group!(benches, throughput, week);
criterion_main!(benches);
