//! Every trace format end to end: each sample export in scenarios/traces/formats/ (made in the
//! shape the tool itself exports) replays as written, and bad inputs (truncated, wrong shape, a
//! series missing, NaN, nulls, unsorted) are refused with a located message and exit 2, writing
//! nothing.

use crate::util::{breakerlab, read, root, write};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

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
    refuses(d, &["nulls.json"], "spans[0].startTimeUnixNano: expected epoch nanoseconds");
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
    refuses(d, &[s(&sample("grafana.csv")), "--where", "service=x"], "filters apply to per-call logs");
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
        breakerlab(dir.path()).args(["replay", "ns.csv", "--out", "ok", "--no-charts"]).assert().success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // The span in clock time and the rate it gives: a wrong unit shows at once.
    assert!(out.contains("(2m 59.005s), 1.01 calls/s"), "{out}");
    assert!(out.contains("format: per-call CSV (detected from the content)"), "{out}");
    assert!(out.contains("no status column: every call is ok"), "{out}");
    assert!(out.contains("time column `StartTimeUnixNano` read as epoch nanoseconds"), "{out}");
    assert!(out.contains("span: 2023-11-14 22:13:20Z"), "{out}");
    // A per-call log out of order is sorted in memory and says so; an interval CSV is refused
    // with a hint that keeps the header first.
    write(dir.path(), "unsorted.csv", "ts,latency_ms\n1700000001,5\n1700000000,5\n");
    let out = breakerlab(dir.path())
        .args(["replay", "unsorted.csv", "--out", "u", "--no-charts"])
        .assert()
        .success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        out.contains("the 2 calls were sorted by `ts` in memory")
            && out.contains("span: 2023-11-14 22:13:20Z"),
        "{out}"
    );
    write(dir.path(), "unsorted-intervals.csv", "ts,p95_ms\n1700000060,5\n1700000000,5\n");
    refuses(
        dir.path(),
        &["unsorted-intervals.csv"],
        "(head -n 1 unsorted-intervals.csv; tail -n +2 unsorted-intervals.csv | sort -t, -k1,1) > sorted.csv",
    );
}

const SLO: &str = "p95 > 2s or error_rate > 5% for 3m";

#[test]
fn each_series_format_replays_its_sample_and_finds_the_incident() {
    let f = |name: &str, sel: &str| format!("{}{sel}", s(&sample(name)));
    let cases: [(&str, Vec<String>); 4] = [
        (
            "Prometheus",
            vec![
                format!("p95:s={}", f("prometheus-p95.json", "")),
                format!("error_rate={}", f("prometheus-errors.json", "")),
                format!("rate={}", f("prometheus-rps.json", "@{job=\"api\"}")),
            ],
        ),
        (
            "Grafana",
            vec![
                format!("p95:s={}", f("grafana.csv", "@p95")),
                format!("error_rate={}", f("grafana.csv", "@error ratio")),
                format!("rate={}", f("grafana.csv", "@requests/s")),
            ],
        ),
        (
            "CloudWatch",
            vec![
                format!("p95:s={}", f("cloudwatch.json", "@p95")),
                format!("errors={}", f("cloudwatch.json", "@errors")),
                format!("requests={}", f("cloudwatch.json", "@RequestCount")),
            ],
        ),
        (
            "Datadog",
            vec![
                format!("p95={}", f("datadog.json", "@trace.http.request.duration")),
                format!("errors={}", f("datadog.json", "@trace.http.request.errors")),
                format!("requests={}", f("datadog.json", "@trace.http.request.hits")),
            ],
        ),
    ];
    for (name, series) in cases {
        let mut args: Vec<&str> = Vec::new();
        for sp in &series {
            args.extend(["--series", sp.as_str()]);
        }
        args.extend(["--slo", SLO]);
        let (out, dir) = replay(&args);
        assert!(out.contains(name), "{name}: {out}");
        // Each file's format, and how it was known, on a line of its own.
        let file = series[0].split_once('=').unwrap().1.split('@').next().unwrap();
        let line = format!("\n  format: {file}: {name}");
        assert!(out.contains(&line) && out.contains("(detected from the content)"), "{name}: {out}");
        assert!(out.contains("span: 2024-06-01 12:00:00Z .. 2024-06-01 14:00:00Z (2h)"), "{name}: {out}");
        assert!(out.contains("step: 1m"), "{name}: {out}");
        assert!(out.contains("truth     2 windows (1 to open on)"), "{name}: {out}");
        assert_eq!(metric(&out, "incidents"), 1.0, "{name}: {out}");
        assert_eq!(metric(&out, "missed_incidents"), 0.0, "{name}: {out}");
        // About 50 requests/s for two hours.
        let requests = metric(&out, "requests");
        assert!((300_000.0..420_000.0).contains(&requests), "{name}: {requests}");
        assert!(dir.path().join("o/summary.csv").exists());
    }
}

#[test]
fn series_bad_input_is_located_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p95 = read(&sample("prometheus-p95.json"));
    write(d, "cut.json", &p95[..p95.len() / 2]);
    refuses(d, &["--series", "p95:s=cut.json"], "cut.json: line 1, column");
    refuses(d, &["--series", "p95:s=cut.json"], "the file ends early (truncated?)");
    write(d, "vector.json", r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#);
    refuses(d, &["--series", "p95:s=vector.json"], "an instant query");
    let rps = s(&sample("prometheus-rps.json")).to_string();
    refuses(d, &["--series", &format!("rate={rps}@{{job=\"db\"}}")], "no series matches `{job=\"db\"}`");
    refuses(d, &["--series", &format!("rate={rps}")], "holds 2 series");
    let i = p95.find(",\"0.").unwrap() + 2;
    let j = i + p95[i..].find('"').unwrap();
    write(d, "nan.json", &format!("{}NaN{}", &p95[..i], &p95[j..]));
    refuses(
        d,
        &["--series", "p95:s=nan.json", "--rate", "5", "--strict"],
        "data.result[0].values[0]: expected a number, found \"NaN\" (--strict refuses",
    );
    let dd = read(&sample("datadog.json"));
    let i = dd.find(".0, 0.").unwrap() + 4;
    let j = i + dd[i..].find(']').unwrap();
    let nulls = format!("{}null{}", &dd[..i], &dd[j..]);
    assert_ne!(nulls, dd);
    write(d, "nulls.json", &nulls);
    let strict = ["--series", "p95=nulls.json@trace.http.request.duration", "--rate", "5", "--strict"];
    refuses(d, &strict, "series[0].pointlist[");
    refuses(d, &strict, "found null");
    // Without --strict the null sample is a gap, counted and located.
    let out = breakerlab(d)
        .args(["replay", "--series", "p95=nulls.json@trace.http.request.duration", "--rate", "5"])
        .args(["--out", "skip", "--no-charts"])
        .assert()
        .success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        out.contains("gap: 1 p95 samples say no value (NaN, ±Inf or null; the first: series[0]"),
        "{out}"
    );
    refuses(
        d,
        &["--series", "p95=nulls.json@trace.http.request.hits", "--rate", "5"],
        "does not say its unit",
    );
    refuses(d, &["--series", "p97=nulls.json"], "unknown role `p97`");
    refuses(d, &["--series", "requests=nulls.json@trace.http.request.hits"], "traffic volume only");
    write(d, "g.csv", "\"Time\",\"p95\"\n1717243260000,0.2\n1717243200000,0.3\n");
    refuses(d, &["--series", "p95:s=g.csv@p95", "--rate", "1"], "line 3: column `Time` goes back in time");
}

#[test]
fn volume_only_series_drive_arrivals_with_flagged_behaviour() {
    let cw = format!("requests={}@requests", s(&sample("cloudwatch.json")));
    let (out, _d) = replay(&["--series", &cw, "--p50", "80ms", "--p95", "250ms", "--error-rate", "0.01"]);
    assert!(
        out.contains("volume only: every interval answers with p50 80ms, p95 250ms, error rate 0.01"),
        "{out}"
    );
    let requests = metric(&out, "requests");
    assert!((300_000.0..420_000.0).contains(&requests), "{requests}");
    let availability = metric(&out, "availability");
    assert!((0.98..1.0).contains(&availability), "{availability}");
}

#[test]
fn client_flags_and_replicates() {
    let f = s(&sample("otlp.json")).to_string();
    let (plain, _d) = replay(&[&f, "--where", "service=frontend"]);
    let (tight, _d) = replay(&[
        &f,
        "--where",
        "service=frontend",
        "--timeout",
        "5ms",
        "--retries",
        "2",
        "--backoff",
        "10ms*2",
    ]);
    assert!(metric(&tight, "timeouts") > metric(&plain, "timeouts"), "{tight}");
    assert!(metric(&tight, "retries") > 0.0 && metric(&plain, "retries") == 0.0, "{tight}");
    let (cached, _d) =
        replay(&[&f, "--where", "service=frontend", "--timeout", "5ms", "--fallback", "cached"]);
    assert!(metric(&cached, "fallback_cached") > 0.0, "{cached}");
    let (rep, _d) = replay(&[&f, "--where", "service=frontend", "--retries", "1", "--replicates", "3"]);
    assert!(rep.contains("over 3 replicates: mean ± 95% confidence interval"), "{rep}");
    let dir = tempfile::tempdir().unwrap();
    refuses(dir.path(), &[&f, "--fallback", "cache"], "expected none, cached");
    refuses(dir.path(), &[&f, "--timeout", "0s"], "timeout");
}

#[test]
fn run_prints_the_import_report_of_a_trace_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out = breakerlab(dir.path())
        .arg("run")
        .arg(root().join("scenarios/trace-prometheus.toml"))
        .args(["--out", "o", "--no-charts", "--replicates", "2"])
        .assert()
        .success();
    let out = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(out.starts_with("import    p95:s="), "{out}");
    assert!(out.contains("format") || out.contains("step: 1m"), "{out}");
    assert!(out.contains("gap: p95 has no sample from 2024-06-01 13:40:00Z"), "{out}");
    assert!(out.contains("over 2 replicates"), "{out}");
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/data/formats").join(name)
}

/// The other shapes tools write (tests/data/formats/make_fixtures.py): Prometheus pretty with
/// float-second stamps, its unit from `__name__`, `NaN` and `+Inf`; Datadog with a `null`;
/// CloudWatch SDK pages back to back, newest first; OTLP pretty with text span kinds.
#[test]
fn other_export_shapes_replay_and_their_bad_samples_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let (p95, err) = (fixture("prometheus-pretty-nan.json"), fixture("prometheus-errors.json"));
    let (p95_role, err_role) = (format!("p95={}", s(&p95)), format!("error_rate={}", s(&err)));
    let slo = ["--slo", "p95 > 2s or error_rate > 5% for 3m", "--rate", "5"];
    let mut args = vec!["--series", &p95_role, "--series", &err_role];
    args.extend(slo);
    let mut strict = args.clone();
    strict.push("--strict");
    refuses(dir.path(), &strict, "data.result[0].values[7]: expected a number, found \"NaN\"");
    let (out, _d) = replay(&args);
    assert!(out.contains("p95: unit s read from the series (http_request_duration_seconds"), "{out}");
    assert!(
        out.contains("gap: 2 p95 samples say no value (NaN, ±Inf or null; the first: data.result[0].values[7], \"NaN\")"),
        "{out}"
    );
    assert!(out.contains("gap: p95 has no sample from"), "{out}");
    assert_eq!((metric(&out, "incidents"), metric(&out, "missed_incidents")), (1.0, 0.0), "{out}");

    let dd = format!("p95={}", s(&fixture("datadog-nulls.json")));
    refuses(
        dir.path(),
        &["--series", &dd, "--rate", "5", "--strict"],
        "series[0].pointlist[12]: expected a number, found null",
    );
    let (out, _d) = replay(&["--series", &dd, "--rate", "5"]);
    assert!(out.contains("gap: 1 p95 samples say no value"), "{out}");

    let cw = s(&fixture("cloudwatch-sdk.json")).to_string();
    let (out, _d) = replay(&[
        "--series",
        &format!("p95:s={cw}@p95"),
        "--series",
        &format!("requests={cw}@RequestCount"),
        "--slo",
        "p95 > 2s for 3m",
    ]);
    assert!(out.contains("span: 2025-12-01 12:00:00Z .. 2025-12-01 13:00:00Z (1h)"), "{out}");
    assert_eq!((metric(&out, "incidents"), metric(&out, "requests")), (1.0, 180_000.0), "{out}");

    let forced = ["--series", &dd, "--rate", "5", "--format", "datadog"];
    let (out, _d) = replay(&forced);
    let line = format!("format: {}: Datadog", s(&fixture("datadog-nulls.json")));
    assert!(out.contains(&line) && out.contains("(forced with --format)"), "{out}");

    let otlp = fixture("otlp-pretty.json");
    let (out, _d) = replay(&[
        s(&otlp),
        "--where",
        "kind=client",
        "--where",
        "operation=*/Convert",
        "--slo",
        "error_rate > 50% for 10s",
        "--trace",
        "slo_interval=5s",
    ]);
    assert!(out.contains("60 used") && out.contains("--where left out 60 of 120 spans"), "{out}");
    assert_eq!((metric(&out, "incidents"), metric(&out, "missed_incidents")), (1.0, 0.0), "{out}");
    assert!((0.3..0.7).contains(&metric(&out, "availability")), "{out}");
}

/// Status read from an `http_code` or Envoy `response_flags` column without naming it; request
/// counts alone drive arrivals; what used to be ignored or misread is refused with a pointer.
#[test]
fn status_columns_volume_csvs_and_misplaced_options() {
    let calls = fixture("calls-http-flags.csv");
    let (out, _d) = replay(&[s(&calls)]);
    assert!(out.contains("status=http_code") && out.contains("read as epoch nanoseconds"), "{out}");
    assert!(out.contains("span: 2025-12-01 12:00:00Z .. 2025-12-01 12:00:59.012Z (59.012s)"), "{out}");
    let availability = metric(&out, "availability");
    assert!((0.3..0.7).contains(&availability), "{out}");
    let (out, _d) = replay(&[s(&calls), "--column", "status=response_flags"]);
    assert!(out.contains("status=response_flags (Envoy response flags"), "{out}");
    assert_eq!(metric(&out, "availability"), availability, "{out}");

    let vol = fixture("volume.csv");
    let (out, _d) = replay(&[s(&vol), "--p50", "80ms", "--p95", "250ms", "--error-rate", "0.02"]);
    assert!(out.contains("count=requests") && out.contains("volume only: every interval answers"), "{out}");
    assert!((180_000.0..200_000.0).contains(&metric(&out, "requests")), "{out}");
    let role = format!("requests={}", s(&vol));
    let (out, _d) = replay(&["--series", &role, "--p50", "80ms", "--p95", "250ms"]);
    assert!((180_000.0..200_000.0).contains(&metric(&out, "requests")), "{out}");

    let dir = tempfile::tempdir().unwrap();
    refuses(dir.path(), &[s(&vol)], "--p50, --p95, --error-rate or [trace.upstream]");
    refuses(
        dir.path(),
        &["--series", &role, "--where", "service=x", "--p50", "1ms", "--p95", "2ms"],
        "picked with FILE@SELECTOR",
    );
    refuses(dir.path(), &[s(&calls), "--trace", "timeout=250ms"], "give it as --timeout 250ms");
    write(
        dir.path(),
        "cut.csv",
        "\"Time\",\"p95\",\"rps\"\n1764590400000,0.1,5\n1764590460000,0.1,5\n17645905",
    );
    refuses(
        dir.path(),
        &["--series", "p95:s=cut.csv@p95", "--rate", "1"],
        "cut.csv: line 4: 1 fields, the header has 3 (a row cut short: truncated file?)",
    );
    write(
        dir.path(),
        "empty.json",
        r#"{"MetricDataResults":[{"Id":"a","Label":"a","Timestamps":[],"Values":[]}]}"#,
    );
    refuses(
        dir.path(),
        &["--series", "p95:s=empty.json", "--rate", "1"],
        "the series Id \"a\" (Label \"a\") has no samples",
    );
    refuses(
        dir.path(),
        &["--series", &format!("p95={}", s(&fixture("prometheus-errors.json"))), "--rate", "1"],
        "write p95:s, p95:ms or p95:us",
    );
}

/// Exports as users save them (tests/data/formats/make_fixtures.py, each in its tool's shape):
/// Grafana's "Download for Excel" in both forms, CloudWatch SEARCH results, a bare Prometheus
/// result array with scrape jitter, Datadog percentages, Istio's and Emissary's access logs, and
/// Nezha's unsorted span CSV. Each replays as pasted, and its import report says what it assumed.
#[test]
fn grafana_excel_downloads_replay_in_both_forms() {
    let long = s(&fixture("grafana-excel-long.csv")).to_string();
    let roles = [
        format!("p95:s={long}@p95 latency"),
        format!("error_rate={long}@error ratio"),
        format!("rate={long}@requests/s"),
    ];
    let mut args: Vec<&str> = roles.iter().flat_map(|r| ["--series", r.as_str()]).collect();
    args.extend(["--slo", "p95 > 2s or error_rate > 5% for 3m"]);
    let (out, _d) = replay(&args);
    assert!(out.contains(": 90 rows, 29 used, 1 gaps;"), "{out}");
    // 29 one-minute intervals at 50 requests/s over the 30-minute span: 87,000 / 1,800 s.
    assert!(out.contains("(30m), 48.3 requests/s (from the counts)"), "{out}");
    assert_eq!(out.matches("fields separated by `;` (from the file's `sep=` line)").count(), 1, "{out}");
    assert!(out.contains("gap: 1 p95 samples say no value (NaN, ±Inf or null; the first: line 25, column \"Value\", \"null\")"), "{out}");
    assert_eq!((metric(&out, "incidents"), metric(&out, "missed_incidents")), (1.0, 0.0), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let mut strict = args.clone();
    strict.push("--strict");
    refuses(dir.path(), &strict, "line 25, column \"Value\": expected a number, found \"null\"");
    refuses(
        dir.path(),
        &[&long],
        "holds 3 series (series \"p95 latency\"; series \"error ratio\"; series \"requests/s\")",
    );
    let text = read(&fixture("grafana-excel-long.csv"));
    write(
        dir.path(),
        "back.csv",
        &text.replacen("2025-12-01T14:01:00+02:00", "2025-12-01T13:59:00+02:00", 1),
    );
    refuses(
        dir.path(),
        &["--series", "p95:s=back.csv@p95 latency", "--rate", "1"],
        "line 4: series \"p95 latency\" goes back in time",
    );
    write(dir.path(), "units.csv", &text.replacen(";0.1", ";\"0.1 s\"", 1));
    refuses(
        dir.path(),
        &["--series", "p95:s=units.csv@p95 latency", "--rate", "1"],
        "expected a number, or null for no sample",
    );

    let wide = fixture("grafana-excel-wide.csv");
    let (out, _d) = replay(&[s(&wide), "--rate", "5"]);
    assert!(
        out.contains(": 30 rows, 28 used, 1 gaps; columns: time=Time, count=requests, p95=p95 (s)"),
        "{out}"
    );
    assert!(out.contains("format: Grafana CSV (series joined by time) (detected from the content)"), "{out}");
    // 28 rows of 3,000 requests over 30 minutes.
    assert!(
        out.contains("span: 2025-12-01 14:00:00Z .. 2025-12-01 14:30:00Z (30m), 46.7 requests/s"),
        "{out}"
    );
    assert!(
        out.contains("times in `Time` name no zone: read as UTC (set --trace utc_offset=+02:00"),
        "{out}"
    );
    assert!(out.contains("gap: 2 rows have a value cell that says no value (empty, null, NaN; the first: line 25, column `p95 (s)`: \"null\")"), "{out}");
    let (out, _d) = replay(&[s(&wide), "--rate", "5", "--trace", "utc_offset=+02:00"]);
    assert!(out.contains("span: 2025-12-01 12:00:00Z .. 2025-12-01 12:30:00Z"), "{out}");
    refuses(dir.path(), &[s(&wide), "--rate", "5", "--strict"], "line 25, column `p95 (s)`: expected");
}

#[test]
fn cloudwatch_search_prometheus_arrays_and_datadog_percentages_replay() {
    let dir = tempfile::tempdir().unwrap();
    let cw = s(&fixture("cloudwatch-search.json")).to_string();
    let (p95, req) =
        (format!("p95:s={cw}@api-a TargetResponseTime"), format!("requests={cw}@api-a RequestCount"));
    let (out, _d) = replay(&["--series", &p95, "--series", &req]);
    assert!(
        out.contains(": 60 rows, 30 used;") && out.contains("Id \"q1\" (Label \"api-a RequestCount\")"),
        "{out}"
    );
    assert!(out.contains("(30m), 50.0 requests/s (from the counts)"), "{out}");
    refuses(dir.path(), &["--series", &format!("p95:s={cw}@q1"), "--rate", "1"], "`q1` matches 3 series");

    let prom = s(&fixture("prometheus-result.json")).to_string();
    let roles = [
        format!("p95={prom}@http_request_duration_seconds_p95"),
        format!("error_rate={prom}@http_requests_error_ratio"),
    ];
    let args = ["--series", roles[0].as_str(), "--series", roles[1].as_str(), "--rate", "5"];
    let (out, _d) = replay(&args);
    assert!(
        out.contains("format: ")
            && out.contains("prometheus-result.json: Prometheus query_range JSON (detected"),
        "{out}"
    );
    assert!(
        out.contains("p95: unit s read from the series (http_request_duration_seconds_p95{job=\"api\"})"),
        "{out}"
    );
    // Two samples of each series are 1 ms late (.805 for .804): moved, not lost as gaps.
    assert!(out.contains("4 samples moved onto the 1m grid (by at most 1ms; a sample within 6s"), "{out}");
    assert!(
        out.contains(
            "gap: 2 p95 samples say no value (NaN, ±Inf or null; the first: [0].values[3], \"NaN\")"
        ),
        "{out}"
    );
    assert!(out.contains(": 60 rows, 28 used, 2 gaps;"), "{out}");
    let mut strict = args.to_vec();
    strict.push("--strict");
    refuses(dir.path(), &strict, "[0].values[3]: expected a number, found \"NaN\"");
    write(
        dir.path(),
        "allnan.json",
        r#"[{"metric":{"__name__":"x_seconds"},"values":[[1,"NaN"],[2,"NaN"]]}]"#,
    );
    refuses(
        dir.path(),
        &["--series", "p95=allnan.json", "--rate", "1"],
        "has no number: all its 2 samples are NaN, ±Inf or null",
    );
    write(dir.path(), "cut.json", &read(&fixture("prometheus-result.json"))[..300]);
    refuses(dir.path(), &["--series", "p95=cut.json", "--rate", "1"], "the file ends early (truncated?)");

    // A success rate in percent with --p50 alone and --rate: the report says where p95 and the
    // errors come from.
    let dd = format!("success_rate={}", s(&fixture("datadog-percent.json")));
    let (out, _d) = replay(&["--series", &dd, "--p50", "80ms", "--rate", "5"]);
    assert!(out.contains("success_rate: values read as percentages (the series says so"), "{out}");
    assert!(out.contains("no latency series: every interval answers with p50 80ms, p95 182ms81us (p95 not given: p50 × 2.276, the lognormal of tail_sigma 0.5), errors from the success_rate series"), "{out}");
    assert!(out.contains("gap: 1 success_rate samples say no value (NaN, ±Inf or null; the first: series[0].pointlist[6], null)"), "{out}");
    // Poisson arrivals at 5/s for 30 minutes: 9,000 expected, sd 95.
    assert!((8_700.0..9_300.0).contains(&metric(&out, "requests")), "{out}");
    refuses(
        dir.path(),
        &["--series", &dd, "--rate", "5"],
        "no latency series (p50, p90, p95 or p99): add one, or say how the dependency answers with --p50",
    );
}

#[test]
fn istio_emissary_and_nezha_span_logs_replay() {
    let dir = tempfile::tempdir().unwrap();
    let slo = ["--slo", "error_rate > 50% for 20s", "--trace", "slo_interval=10s"];
    let istio = fixture("istio-access.log");
    let mut args = vec![s(&istio)];
    args.extend(slo);
    let (out, _d) = replay(&args);
    assert!(
        out.contains(": 60 rows, 60 used;") && out.contains("60 lines in Istio's default proxy format"),
        "{out}"
    );
    assert!(
        out.contains("10 calls have DURATION `-` (no upstream answer): each is answered at once"),
        "{out}"
    );
    assert_eq!((metric(&out, "incidents"), metric(&out, "missed_incidents")), (1.0, 0.0), "{out}");
    let (out, _d) =
        replay(&[s(&istio), "--where", "cluster=outbound|8000||httpbin.*", "--where", "code=200"]);
    assert!(out.contains("--where left out 20 of 60 spans"), "{out}");
    let first = read(&istio).lines().next().unwrap().to_string();
    write(dir.path(), "cut.log", &format!("{}\n", &first[..first.find(" 0 135").unwrap()]));
    refuses(dir.path(), &["cut.log"], "cut.log: line 1: no BYTES_RECEIVED");

    let emissary = fixture("ambassador-access.log");
    let mut args = vec![s(&emissary), "--where", "service=localhost:*"];
    args.extend(slo);
    let (out, _d) = replay(&args);
    assert!(
        out.contains("format: Envoy access log")
            && out.contains("60 lines start with `ACCESS ` (Ambassador/Emissary)"),
        "{out}"
    );
    assert_eq!(
        (metric(&out, "requests"), metric(&out, "incidents"), metric(&out, "missed_incidents")),
        (60.0, 1.0, 0.0),
        "{out}"
    );

    let nezha = fixture("nezha-spans.csv");
    let (out, _d) = replay(&[s(&nezha)]);
    assert!(out.contains("column `Duration` read as microseconds: on line 2 it is 9728 and `EndTimeUnixNano` − `StartTimeUnixNano` is 9ms728us"), "{out}");
    assert!(out.contains("rows are not in time order (the first out of order: line 4, \"1764590400001023456\" after \"1764590400001163456\" on line 3): the 180 calls were sorted by `StartTimeUnixNano` in memory"), "{out}");
    let (out, _d) = replay(&[
        s(&nezha),
        "--timeout",
        "1s",
        "--where",
        "PodName=productcatalogservice-*",
        "--slo",
        "p95 > 1s for 20s",
        "--trace",
        "slo_interval=10s",
    ]);
    assert!(out.contains("180 rows, 60 used") && out.contains("latency=Duration (us)"), "{out}");
    assert_eq!((metric(&out, "incidents"), metric(&out, "missed_incidents")), (1.0, 0.0), "{out}");
    let no_duration: String =
        read(&nezha).lines().map(|l| format!("{}\n", l.rsplit_once(',').unwrap().0)).collect();
    write(dir.path(), "spans.csv", &no_duration);
    let (out, _d) = replay(&[dir.path().join("spans.csv").to_str().unwrap()]);
    assert!(out.contains("latency=EndTimeUnixNano − StartTimeUnixNano") && out.contains("180 used"), "{out}");
    write(dir.path(), "bad.csv", &no_duration.replacen("1764590400009851687", "1764590399009851687", 1));
    refuses(
        dir.path(),
        &["bad.csv"],
        "bad.csv: line 2, column `EndTimeUnixNano`: expected an end time no earlier than the start",
    );
}
