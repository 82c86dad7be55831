//! Every trace format end to end: each sample export in scenarios/traces/formats/ (made in the
//! shape the tool itself exports) replays as written, and bad inputs (truncated, wrong shape, a
//! series missing, NaN, nulls, unsorted) are refused with a located message and exit 2, writing
//! nothing.

mod util;

use predicates::prelude::*;
use std::path::{Path, PathBuf};
use util::{breakerlab, read, root, write};

fn sample(name: &str) -> PathBuf {
    root().join("scenarios/traces/formats").join(name)
}

/// Runs `replay ARGS --out o` in a fresh folder and returns its stdout and the folder.
fn replay(args: &[&str]) -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = breakerlab(dir.path())
        .arg("replay")
        .args(args)
        .args(["--out", "o", "--no-charts"])
        .assert()
        .success();
    (String::from_utf8(out.get_output().stdout.clone()).unwrap(), dir)
}

/// `replay ARGS` must fail with exit 2, say `message`, and write nothing.
fn refuses(dir: &Path, args: &[&str], message: &str) {
    breakerlab(dir)
        .arg("replay")
        .args(args)
        .args(["--out", "o", "--no-charts"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(message));
    assert!(!dir.join("o").exists(), "output written for {args:?}");
}

fn metric(stdout: &str, name: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in\n{stdout}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap_or(f64::NAN)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn otlp_spans_replay_one_services_client_calls() {
    let f = sample("otlp.json");
    let (out, dir) = replay(&[
        s(&f),
        "--where",
        "service=front*",
        "--where",
        "operation=hipstershop.CurrencyService/Convert",
        "--slo",
        "error_rate > 50% for 20s",
        "--trace",
        "slo_interval=10s",
    ]);
    assert!(out.contains("format: OpenTelemetry OTLP JSON traces (detected from the content)"), "{out}");
    assert!(out.contains("--where left out"), "{out}");
    assert!(out.contains("span: 2024-06-01 12:00:00"), "{out}");
    assert_eq!(metric(&out, "incidents"), 1.0, "{out}");
    assert_eq!(metric(&out, "missed_incidents"), 0.0, "{out}");
    let summary = read(&dir.path().join("o/summary.csv"));
    assert!(summary.lines().count() == 2, "{summary}");
}

#[test]
fn jaeger_envoy_and_har_replay_as_exported() {
    let (out, _d) =
        replay(&[s(&sample("jaeger.json")), "--where", "service=redis", "--where", "kind=client"]);
    assert!(out.contains("Jaeger JSON traces (detected"), "{out}");
    assert!(out.contains("200 rows") || out.contains("400 rows"), "{out}");
    assert_eq!(metric(&out, "requests"), 200.0, "{out}");
    let (out, _d) = replay(&[s(&sample("envoy-access.log")), "--where", "service=currencyservice*"]);
    assert!(out.contains("Envoy access log (default format) (detected"), "{out}");
    assert!(out.contains("refused by the proxy's own circuit breaker (UO)"), "{out}");
    let (out, _d) =
        replay(&[s(&sample("shop.har")), "--where", "service=api.*", "--slo", "error_rate > 50%"]);
    assert!(out.contains("HAR 1.2 (detected"), "{out}");
    assert_eq!(metric(&out, "requests"), 90.0, "{out}");
    assert!(metric(&out, "incidents") >= 1.0, "{out}");
}

#[test]
fn span_formats_refuse_bad_input_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let otlp = read(&sample("otlp.json"));
    write(d, "cut.json", &otlp[..otlp.len() / 2]);
    refuses(d, &["cut.json"], "the file ends early (truncated?)");
    write(
        d,
        "nulls.json",
        &otlp.replacen("\"startTimeUnixNano\":\"", "\"startTimeUnixNano\":null,\"x\":\"", 1),
    );
    refuses(d, &["nulls.json"], "spans[0].startTimeUnixNano: expected epoch nanoseconds, found nothing");
    write(d, "shape.json", r#"{"resourceSpans":{"spans":[]}}"#);
    refuses(d, &["shape.json"], "expected OTLP JSON traces");
    refuses(d, &[s(&sample("otlp.json")), "--where", "service=nobody"], "no span matches --where");
    let har = read(&sample("shop.har"));
    write(d, "nan.har", &har.replacen("\"time\": ", "\"time\": \"NaN\", \"t\": ", 1));
    refuses(d, &["nan.har"], "nan.har: line");
    write(d, "bad.log", "[2024-06-01T12:00:00.000Z] \"GET / HTTP/1.1\" 200 - 0 0 NaN -\n");
    refuses(d, &["bad.log"], "bad.log: line 1: DURATION \"NaN\" is not whole milliseconds");
    let jaeger = read(&sample("jaeger.json"));
    write(d, "j.json", &jaeger.replacen("\"duration\": ", "\"duration\": null, \"d\": ", 1));
    refuses(d, &["j.json"], "data[0].spans[0].duration: expected whole microseconds");
    refuses(d, &[s(&sample("grafana.csv")), "--where", "service=x"], "filters apply to span logs");
}

#[test]
fn a_19_digit_epoch_is_nanoseconds_and_the_span_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("StartTimeUnixNano,latency_ms\n");
    for i in 0..180u64 {
        csv.push_str(&format!("{},5\n", 1_700_000_000_000_000_000u64 + i * 1_000_000_000));
    }
    write(dir.path(), "ns.csv", &csv);
    let out =
        breakerlab(dir.path()).args(["replay", "ns.csv", "--out", "o", "--no-charts"]).assert().success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(out.contains("(2m59s005ms)") || out.contains("2m59s5ms"), "{out}");
    assert!(out.contains("no status column: every call is ok"), "{out}");
    assert!(out.contains("time column `StartTimeUnixNano` read as epoch nanoseconds"), "{out}");
    assert!(out.contains("span: 2023-11-14 22:13:20Z"), "{out}");
    write(dir.path(), "unsorted.csv", "ts,latency_ms\n1700000001,5\n1700000000,5\n");
    refuses(dir.path(), &["unsorted.csv"], "rows must be sorted by `ts`");
}
