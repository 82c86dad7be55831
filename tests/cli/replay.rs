//! `breakerlab replay` and trace scenarios end to end: each bundled trace, per-call logs, ground
//! truth, bad rows (refused with file/line/column/value, or skipped and counted in summary.csv).

use crate::util::{breakerlab, csv_field, read, root, scenario, write};
use predicates::prelude::*;
use std::path::PathBuf;

fn traces() -> PathBuf {
    root().join("scenarios/traces")
}

fn nezha() -> PathBuf {
    traces().join("nezha-2022-08-23/front_service.csv")
}

/// A per-call log: 2,000 calls 100 ms apart, calls 500..700 failing with 503, every 10th
/// other call with 500, latencies 10..59 ms.
fn call_log() -> String {
    let mut s = String::from("timestamp_ms,latency_ms,status\n");
    for i in 0..2_000u64 {
        let status =
            if (500..700).contains(&i) || i % 10 == 3 { if i % 10 == 3 { 500 } else { 503 } } else { 200 };
        s.push_str(&format!("{},{},{status}\n", 1_700_000_000_000 + i * 100, 10 + i % 50));
    }
    s
}

#[test]
fn nezha_day_replays_with_the_fault_list() {
    let dir = tempfile::tempdir().unwrap();
    let labels = traces().join("nezha-2022-08-23/2022-08-23-fault_list.json");
    let out = breakerlab(dir.path())
        .arg("replay")
        .arg(nezha())
        .arg("--labels")
        .arg(&labels)
        .args(["--fault-duration", "3m", "--rate", "2", "--policy", "connector-breaker", "--out", "o"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("front_service.csv: 721 rows, 721 used; columns: time=TimeStamp"), "{stdout}");
    assert!(stdout.contains("truth     32 windows (32 to open on)"), "{stdout}");
    assert!(stdout.contains("policy    connector-breaker"), "{stdout}");
    let summary = read(&dir.path().join("o/summary.csv"));
    assert_eq!(csv_field(&summary, "incidents"), "32");
    assert_eq!(csv_field(&summary, "trace_rows"), "721");
    assert_eq!(csv_field(&summary, "bad_rows_skipped"), "0");
    assert_eq!(csv_field(&summary, "trace_gaps"), "0");
    let incidents = read(&dir.path().join("o/incidents.csv"));
    assert_eq!(incidents.lines().count(), 33);
    // The first fault was injected at 12:01:25, 117 s after the first row (11:59:28).
    assert!(incidents.lines().nth(1).unwrap().starts_with("117000000,297000000,"), "{incidents}");
}

#[test]
fn every_bundled_trace_scenario_runs() {
    for (file, incidents, rows, gaps) in [
        ("trace-nezha.toml", "32", "721", "0"),
        ("trace-ms-outbound.toml", "2", "720", "0"),
        ("trace-nab-ec2.toml", "3", "4032", "2"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        breakerlab(dir.path()).arg("run").arg(scenario(file)).args(["--out", "o"]).assert().success();
        let summary = read(&dir.path().join("o/summary.csv"));
        assert_eq!(csv_field(&summary, "incidents"), incidents, "{file}");
        assert_eq!(csv_field(&summary, "trace_rows"), rows, "{file}");
        assert_eq!(csv_field(&summary, "trace_gaps"), gaps, "{file}");
        assert!(!csv_field(&summary, "false_opens").is_empty(), "{file}: ground truth was given");
    }
}

#[test]
fn single_signal_traces_replay_from_flags() {
    let dir = tempfile::tempdir().unwrap();
    let outbound = traces().join("ms-outbound-01/outbound-01.csv");
    let out = breakerlab(dir.path())
        .arg("replay")
        .arg(&outbound)
        .args(["--column", "p50=Value", "--latency-unit", "ms", "--trace", "label_column=Label"])
        .args(["--rate", "0.02", "--out", "ms"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("720 rows, 720 used; columns: time=TimeStamp, p50=Value (ms)"), "{stdout}");
    assert!(stdout.contains("truth     2 windows (2 to open on)"), "{stdout}");

    let nab = traces().join("nab-ec2/ec2_request_latency_system_failure.csv");
    let windows = traces().join("nab-ec2/ec2_request_latency_system_failure.windows.json");
    // Without duplicates handling the daylight-saving repeat is refused, naming both lines.
    breakerlab(dir.path())
        .arg("replay")
        .arg(&nab)
        .args(["--rate", "0.1", "--out", "nab"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 559: timestamp \"2014-03-09 03:00:00\" repeats line 558"));
    assert!(!dir.path().join("nab").exists());
    let out = breakerlab(dir.path())
        .arg("replay")
        .arg(&nab)
        .arg("--labels")
        .arg(&windows)
        .args(["--trace", "duplicates=keep_first", "--gaps", "missing", "--column", "value=value"])
        .args(["--trace", "latency_scale=10", "--latency-unit", "ms", "--rate", "0.1", "--out", "nab"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("4032 rows, 4021 used, 11 duplicate timestamps dropped, 2 gaps"), "{stdout}");
    assert!(stdout.contains("truth     3 windows"), "{stdout}");
}

#[test]
fn per_call_logs_replay_first_attempts_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "calls.csv", &call_log());
    // No breaker, no retries: every logged call is made once and answers as logged.
    let out = breakerlab(dir.path())
        .args(["replay", "calls.csv", "--policy", "none", "--out", "none"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("calls.csv: 2000 rows, 2000 used; columns: time=timestamp_ms"), "{stdout}");
    assert!(stdout.contains("truth     none given"), "{stdout}");
    let summary = read(&dir.path().join("none/summary.csv"));
    assert_eq!(csv_field(&summary, "requests"), "2000");
    assert_eq!(csv_field(&summary, "attempts"), "2000");
    // 200 outage calls plus 180 of the other 1,800 (every 10th) failed.
    assert_eq!(csv_field(&summary, "wasted_quota"), "380");
    assert_eq!(csv_field(&summary, "availability"), "0.81");
    assert_eq!(csv_field(&summary, "false_opens"), "", "no ground truth: empty cell");
    // The report page records the import beside the log (small enough to embed: see the size
    // rule's own test).
    let inputs = read(&dir.path().join("none/inputs.toml"));
    assert!(inputs.contains("note = \"\"\"\ncalls.csv: 2000 rows, 2000 used"), "{inputs}");
    assert!(inputs.contains(&format!("bytes = {}", call_log().len())), "{inputs}");
    // With an SLO rule the outage is the one incident; a consecutive breaker catches it.
    breakerlab(dir.path())
        .arg("replay")
        .arg(&log)
        .args(["--slo", "error_rate > 50% for 10s", "--trace", "slo_interval=10s", "--out", "slo"])
        .assert()
        .success()
        .stdout(predicate::str::contains("truth     1 windows (1 to open on)"));
    let summary = read(&dir.path().join("slo/summary.csv"));
    assert_eq!(csv_field(&summary, "incidents"), "1");
    assert_eq!(csv_field(&summary, "missed_incidents"), "0");
    // The log's calls are its arrivals: an arrival model is refused.
    breakerlab(dir.path())
        .args(["replay", "calls.csv", "--rate", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("calls.csv is a per-call log: its calls are the arrivals"));
}

#[test]
fn replays_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "calls.csv", &call_log());
    for out in ["a", "b"] {
        breakerlab(dir.path())
            .args(["replay", "calls.csv", "--set", "failure_threshold=3", "--seed", "9", "--out", out])
            .assert()
            .success();
    }
    for file in ["summary.csv", "transitions.csv", "timeline.csv", "incidents.csv"] {
        crate::util::assert_same_text(
            &read(&dir.path().join("a").join(file)),
            &read(&dir.path().join("b").join(file)),
            file,
        );
    }
}

#[test]
fn bad_rows_are_refused_naming_file_row_column_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = call_log();
    log = log.replacen("1700000000500,15,200", "1700000000500,fast,200", 1);
    write(dir.path(), "calls.csv", &log);
    breakerlab(dir.path())
        .args(["replay", "calls.csv", "--out", "o"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: calls.csv: line 7, column `latency_ms`: expected a number that is 0 or more, found \"fast\"",
        ));
    assert!(!dir.path().join("o").exists(), "nothing is written on bad input");

    let out = breakerlab(dir.path())
        .args(["replay", "calls.csv", "--skip-bad-rows", "--out", "o"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("calls.csv: 2000 rows, 1999 used, 1 bad rows skipped"), "{stdout}");
    assert!(stdout.contains("first skipped: calls.csv: line 7, column `latency_ms`"), "{stdout}");
    let summary = read(&dir.path().join("o/summary.csv"));
    assert_eq!(csv_field(&summary, "bad_rows_skipped"), "1");
    assert_eq!(csv_field(&summary, "requests"), "1999");
}

#[test]
fn bad_files_and_flags_get_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "empty.csv", "");
    write(dir.path(), "header.csv", "ts,p95_ms,error_rate\n");
    write(dir.path(), "back.csv", "ts,p95_ms,error_rate\n1000,80,0\n1060,80,0\n1030,80,0\n");
    write(dir.path(), "good.csv", "ts,p95_ms,error_rate\n1000,80,0\n1060,80,0\n1120,80,0\n");
    let refuses = |args: &[&str], message: &str| {
        breakerlab(dir.path())
            .arg("replay")
            .args(args)
            .args(["--out", "o"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
        assert!(!dir.path().join("o").exists());
    };
    refuses(&["empty.csv", "--rate", "1"], "empty.csv: the file is empty");
    refuses(&["header.csv", "--rate", "1"], "header.csv: the file has a header but no data rows");
    refuses(
        &["back.csv", "--rate", "1"],
        "back.csv: line 4: column `ts`: timestamp \"1030\" is earlier than \"1060\" on line 3",
    );
    refuses(&["missing.csv", "--rate", "1"], "missing.csv");
    refuses(&["good.csv"], "good.csv has no request-count column");
    refuses(&["good.csv", "--rate=-1"], "--rate -1");
    refuses(
        &["good.csv", "--rate", "1", "--time-format", "iso"],
        "'--time-format <FORMAT>': unknown variant `iso`",
    );
    refuses(
        &["good.csv", "--rate", "1", "--fault-duration", "3 minutes"],
        "'--fault-duration <DUR>': invalid duration",
    );
    refuses(&["good.csv", "--rate", "1", "--column", "p96=x"], "--column p96=x: unknown role `p96`");
    refuses(&["good.csv", "--rate", "1", "--slo", "p95 >> 1s"], "SLO rule \"p95 >> 1s\"");
    refuses(&["good.csv", "--rate", "1", "--policy", "nope"], "nope");
    refuses(&["good.csv", "--rate", "1", "--labels", "nowhere.csv"], "nowhere.csv");
}

#[test]
fn scenario_files_reference_traces_relative_to_themselves() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    write(&dir.path().join("data"), "calls.csv", &call_log());
    let toml = "name = \"logged\"\n\n[trace]\nfile = \"data/calls.csv\"\nslo = \"error_rate > 50%\"\n\
                slo_interval = \"10s\"\n\n[client.retry]\nmax_attempts = 3\nbase = \"50ms\"\ncap = \"200ms\"\n";
    write(dir.path(), "logged.toml", toml);
    let elsewhere = tempfile::tempdir().unwrap();
    breakerlab(elsewhere.path())
        .arg("run")
        .arg(dir.path().join("logged.toml"))
        .args(["--out", "o"])
        .assert()
        .success();
    let summary = read(&elsewhere.path().join("o/summary.csv"));
    assert_eq!(csv_field(&summary, "scenario"), "logged");
    assert_eq!(csv_field(&summary, "incidents"), "1");
    // Retries of failed calls are attempts the log never saw: more attempts than calls made.
    let attempts: u64 = csv_field(&summary, "attempts").parse().unwrap();
    let shed: u64 = csv_field(&summary, "shed").parse().unwrap();
    assert!(attempts > 2_000 - shed, "attempts {attempts}, shed {shed}");

    // A bad row in the referenced trace is reported through the scenario.
    let mut log = call_log();
    log = log.replacen("1700000000500,15,200", "1700000000500,15,maybe", 1);
    write(&dir.path().join("data"), "calls.csv", &log);
    breakerlab(elsewhere.path())
        .arg("run")
        .arg(dir.path().join("logged.toml"))
        .args(["--out", "p"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("logged.toml:3:1: [trace]:"))
        .stderr(
            predicate::str::contains("line 7, column `status`").and(predicate::str::contains("\"maybe\"")),
        );
    assert!(!elsewhere.path().join("p").exists());
}
