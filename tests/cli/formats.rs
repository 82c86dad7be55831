//! Every trace format end to end: each sample export in scenarios/traces/formats/ (made in the
//! shape the tool itself exports) replays as written, and bad inputs (truncated, wrong shape, a
//! series missing, NaN, nulls, unsorted) are refused with a located message and exit 2, writing
//! nothing.

use crate::util::{breakerlab, root, write};
use predicates::prelude::*;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
fn sample(name: &str) -> PathBuf {
    root().join("scenarios/traces/formats").join(name)
}

/// Runs `replay ARGS --out o` in a fresh folder and returns its stdout and the folder.
#[allow(dead_code)]
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

#[allow(dead_code)]
fn metric(stdout: &str, name: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in\n{stdout}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap_or(f64::NAN)
}

#[allow(dead_code)]
fn s(p: &Path) -> &str {
    p.to_str().unwrap()
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
    assert!(out.contains("(2m59s005ms)") || out.contains("2m59s5ms"), "{out}");
    assert!(out.contains("no status column: every call is ok"), "{out}");
    assert!(out.contains("time column `StartTimeUnixNano` read as epoch nanoseconds"), "{out}");
    assert!(out.contains("span: 2023-11-14 22:13:20Z"), "{out}");
    write(dir.path(), "unsorted.csv", "ts,latency_ms\n1700000001,5\n1700000000,5\n");
    refuses(dir.path(), &["unsorted.csv"], "rows must be sorted by `ts`");
}
