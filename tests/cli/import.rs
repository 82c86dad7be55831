//! Import fixes seen as a user sees them: `--where` on a plain per-call CSV, a JSON export forced
//! through the CSV reader, and the import report's format, span (clock time) and rate.

use crate::util::{breakerlab, root, write};
use predicates::prelude::*;

fn stdout(dir: &std::path::Path, args: &[&str]) -> String {
    let out = breakerlab(dir).arg("replay").args(args).args(["--out", "o", "--no-charts"]).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn where_filters_a_per_call_csv_by_any_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("ts_ms,service,operation,duration_ms\n");
    for i in 0..600u64 {
        let service = ["frontend-7f9", "cart", "frontend-2c1"][(i % 3) as usize];
        let operation = if i % 2 == 0 { "hipstershop.CurrencyService/Convert" } else { "GetCart" };
        csv.push_str(&format!("{},{service},{operation},{}\n", 1_717_243_200_000u64 + i * 100, 5 + i % 7));
    }
    write(dir.path(), "calls.csv", &csv);
    let out = stdout(
        dir.path(),
        &[
            "calls.csv",
            "--where",
            "service=frontend*",
            "--where",
            "operation=hipstershop.CurrencyService/Convert",
        ],
    );
    assert!(out.contains("calls.csv: 600 rows, 200 used"), "{out}");
    assert!(out.contains("format: per-call CSV (detected from the content)"), "{out}");
    assert!(out.contains("--where left out 400 of 600 rows; the first: line 3: service \"cart\""), "{out}");
    assert!(out.contains("note: no status column: every call is ok"), "{out}");
    breakerlab(dir.path())
        .args(["replay", "calls.csv", "--where", "region=eu", "--out", "x", "--no-charts"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("option `where` names column `region`, which is not in the header"));
}

#[test]
fn a_prometheus_export_forced_through_the_csv_reader_is_named_not_split() {
    let dir = tempfile::tempdir().unwrap();
    let prom = root().join("scenarios/traces/formats/prometheus-p95.json");
    for format in ["interval", "calls"] {
        breakerlab(dir.path())
            .args(["replay", prom.to_str().unwrap(), "--format", format, "--rate", "5", "--out", "o"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "this file holds Prometheus query_range JSON (detected from the content), not CSV",
            ))
            .stderr(predicate::str::contains("columns:").not());
        assert!(!dir.path().join("o").exists());
    }
}

#[test]
fn span_reports_give_clock_time_and_rate() {
    let dir = tempfile::tempdir().unwrap();
    let otlp = root().join("scenarios/traces/formats/otlp.json");
    let out = stdout(dir.path(), &[otlp.to_str().unwrap(), "--where", "service=front*"]);
    assert!(
        out.contains("span: 2024-06-01 12:00:00.275431Z .. 2024-06-01 12:03:00.490553Z (3m 0.215s), "),
        "{out}"
    );
    assert!(out.contains(" calls/s\n"), "{out}");
}
