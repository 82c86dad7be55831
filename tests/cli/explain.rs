//! explain.csv and `breakerlab explain` on a scripted sequence whose evidence was computed by
//! hand: a consecutive-count breaker and a windowed failure-rate breaker gated by min_calls.
//!
//! The script (every call takes 100 ms, so each result lands at t + 0.1 s): one call every 10 s
//! from 0 to 590 s, failing from 300 s to 390 s (incident 1, 300–400 s); then one call every
//! second from 600 s to 659 s, all failing (incident 2, 600–660 s).
//!
//! - `consecutive` (5 in a row, open 30 s, one probe): the fifth failure of incident 1 lands at
//!   340.1 s and opens it; passive half-open at the next call, 380 s (open for 39.9 s of 30 s),
//!   whose failure at 380.1 s reopens it.
//! - `windowed` (failure rate >= 0.5 over an exact 60 s window, min_calls 10): at one call per
//!   10 s the window holds 6 results, so incident 1 is missed by the min_calls gate although
//!   every call fails; the rate first reaches 0.5 at 320.1 s (3 of 6), the peak. In incident 2
//!   the window at 604.1 s holds 5 successes (550.1–590.1 s) and 5 failures: 10 calls, rate
//!   0.5, it opens.

use crate::util::*;
use std::path::{Path, PathBuf};

fn script(dir: &Path) -> PathBuf {
    let mut csv = String::from("t_ms,latency_ms,ok\n");
    for t in (0..600).step_by(10) {
        let ok = !(300..400).contains(&t);
        csv.push_str(&format!("{},100,{}\n", t * 1000, u8::from(ok)));
    }
    for t in 600..660 {
        csv.push_str(&format!("{},100,0\n", t * 1000));
    }
    write(dir, "calls.csv", &csv);
    write(
        dir,
        "gates.toml",
        "name = \"gates\"\nscript = \"calls.csv\"\n\
         [[incidents]]\nkind = \"outage\"\nstart = \"300s\"\nduration = \"100s\"\nexpect = \"open\"\n\
         [[incidents]]\nkind = \"outage\"\nstart = \"600s\"\nduration = \"60s\"\nexpect = \"open\"\n\
         [policy]\npreset = \"windowed\"\n",
    )
}

fn run(dir: &Path, policy: &str) -> PathBuf {
    let out = dir.join(policy);
    breakerlab(dir)
        .args(["run", "--no-charts", "--policy", policy, "--out"])
        .arg(&out)
        .arg(script(dir))
        .assert()
        .success();
    out
}

/// explain.csv's rows as maps of column to cell.
fn rows(out: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = read(&out.join("explain.csv"));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect())
        .collect()
}

fn explain(out: &Path, args: &[&str]) -> String {
    let o = breakerlab(out).arg("explain").arg(out).args(args).assert().success();
    String::from_utf8_lossy(&o.get_output().stdout).into_owned()
}

#[test]
fn consecutive_transitions_carry_the_count_and_the_open_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "consecutive");
    let rows = rows(&out);
    let cells =
        |i: usize, cols: &[&str]| -> Vec<String> { cols.iter().map(|c| rows[i][*c].clone()).collect() };
    assert_eq!(
        cells(0, &["kind", "at_us", "from", "to", "reason", "consecutive_failures", "failure_threshold"]),
        ["transition", "340100000", "closed", "open", "consecutive_failures", "5", "5"]
    );
    assert_eq!(rows[0]["evidence"], "consecutive_failures>=failure_threshold");
    assert_eq!(
        cells(1, &["at_us", "to", "time_open", "open_duration"]),
        ["380000000", "half_open", "39s900ms", "30s"]
    );
    assert_eq!(
        cells(
            2,
            &["at_us", "to", "reason", "probes_admitted", "probes", "probe_successes", "close_successes"]
        ),
        ["380100000", "open", "probe_failed", "1", "1", "0", "1"]
    );
    assert_eq!(
        explain(&out, &["--at", "5m40.1s"]),
        "closed → open (consecutive_failures) at 5m40.1s, instance 0: failure_threshold 5 reached: 5 consecutive failures\n"
    );
    // Microseconds as in at_us pick the same transition.
    assert_eq!(explain(&out, &["--at", "340100000"]), explain(&out, &["--at", "5m40.1s"]));
    assert_eq!(explain(&out, &["--at", "5m40s100ms"]), explain(&out, &["--at", "5m40.1s"]));
    let incident = explain(&out, &["--incident", "1"]);
    assert!(incident.starts_with("incident 1: outage from 5m to 6m40s (expect open)\ninstance 0: opened 40.1s after the start (consecutive_failures)\n"), "{incident}");
}

#[test]
fn a_missed_incident_is_explained_by_the_min_calls_gate() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "windowed");
    let rows = rows(&out);
    let first = &rows[0];
    assert_eq!(
        ["kind", "at_us", "to", "reason", "window_calls", "min_calls", "window_failure_rate", "failure_rate"]
            .map(|c| first[c].as_str()),
        ["transition", "604100000", "open", "failure_rate", "10", "10", "0.5", "0.5"]
    );
    let moment = |kind: &str, incident: &str| {
        rows.iter()
            .find(|r| r["kind"] == kind && r["incident"] == incident)
            .unwrap_or_else(|| panic!("{kind}"))
    };
    let cols = ["at_us", "window_calls", "min_calls", "window_failure_rate"];
    assert_eq!(
        cols.map(|c| moment("incident_start", "1")[c].clone()),
        ["300100000", "6", "10", "0.16666666666666666"]
    );
    assert_eq!(cols.map(|c| moment("incident_peak", "1")[c].clone()), ["320100000", "6", "10", "0.5"]);
    assert_eq!(cols.map(|c| moment("incident_end", "1")[c].clone()), ["390100000", "6", "10", "1"]);
    let best = moment("incident_best", "1");
    assert_eq!(
        (best["window_calls"].as_str(), best["window_failure_rate"].as_str(), best["results"].as_str()),
        ("6", "1", "10")
    );

    let words = explain(&out, &["--incident", "1"]);
    assert_same_text(
        &words,
        "incident 1: outage from 5m to 6m40s (expect open)\n\
         instance 0: did not open (10 results recorded while closed): min_calls 10 never reached: at most 6 calls in the window\n  \
         at the incident's peak (5m20.1s): min_calls 10 not reached: 6 calls in the window; failure_rate 0.5 reached: a failure rate of 0.5 in the window\n  \
         at its start (5m0.1s): min_calls 10 not reached: 6 calls in the window; failure_rate 0.5 not reached: a failure rate of 0.1667 in the window\n  \
         at its end (6m30.1s): min_calls 10 not reached: 6 calls in the window; failure_rate 0.5 reached: a failure rate of 1 in the window\n",
        "explain --incident 1",
    );
    let caught = explain(&out, &["--incident", "2"]);
    assert!(caught.contains("instance 0: opened 4.1s after the start (failure_rate)\n  closed → open (failure_rate) at 10m4.1s, instance 0: min_calls 10 reached: 10 calls in the window; failure_rate 0.5 reached: a failure rate of 0.5 in the window\n"), "{caught}");
}

#[test]
fn explain_refuses_what_is_not_there_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), "windowed");
    let fails = |args: &[&str], needle: &str| {
        let o = breakerlab(dir.path()).arg("explain").args(args).assert().code(2);
        let err = String::from_utf8_lossy(&o.get_output().stderr).into_owned();
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    let o = out.to_str().unwrap();
    fails(&[o, "--at", "1s"], "no transition at that instant");
    fails(&[o, "--at", "1s"], "the nearest are at 10m4.1s (604100000)");
    fails(&[o, "--incident", "3"], "it has 2 (--incident 1 to 2)");
    fails(&[o, "--incident", "0"], "no such incident");
    fails(&["no-such-folder"], "not an output folder");
    std::fs::remove_file(out.join("explain.csv")).unwrap();
    fails(&[o], "no explain.csv in this folder");
}

#[test]
fn explain_csv_is_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let sc = script(dir.path());
    let csv_with = |threads: &str| {
        let out = dir.path().join(format!("t{threads}"));
        breakerlab(dir.path())
            .args([
                "compare",
                "--no-charts",
                "--policy",
                "consecutive",
                "--policy",
                "windowed",
                "--replicates",
                "2",
            ])
            .args(["--threads", threads, "--out"])
            .arg(&out)
            .arg(&sc)
            .assert()
            .success();
        read(&out.join("explain.csv"))
    };
    let one = csv_with("1");
    assert!(one.starts_with("policy,kind,at_us,"), "{one}");
    assert!(one.contains("\nwindowed,incident_best,320100000,0,closed,,,1,10,"), "{one}");
    assert_same_text(&one, &csv_with("2"), "explain.csv with --threads 1 and 2");
}

#[test]
fn the_report_page_marks_carry_the_same_words() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("page");
    breakerlab(dir.path())
        .args(["run", "--policy", "windowed", "--out"])
        .arg(&out)
        .arg(script(dir.path()))
        .assert()
        .success();
    let html = read(&out.join("report.html"));
    let missed = "<span class=\"missed\" title=\"incident 1: outage from 5m to 6m40s (expect open)&#10;\
                  instance 0: did not open (10 results recorded while closed): min_calls 10 never reached: at most 6 calls in the window&#10;";
    assert!(
        html.contains(missed),
        "{}",
        &html[html.find("class=\"marks\"").unwrap_or(0)..][..2000.min(html.len())]
    );
    assert!(html.contains(
        "title=\"closed → open (failure_rate) at 10m4.1s, instance 0: min_calls 10 reached: 10 calls in the window; \
         failure_rate 0.5 reached: a failure rate of 0.5 in the window\">10m4.1s closed → open</span>"
    ));
    assert!(html.contains(">incident 2 (outage): open</span>"), "a caught incident is not marked missed");
}

#[test]
fn a_run_with_many_transitions_streams_both_files_whole_and_leaves_no_scratch() {
    // circuit-gate trips on 1 % errors every half minute: thousands of transitions over many
    // chunks of the request stream, each row streamed to the folder as the run goes.
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(
        dir.path(),
        "trips.toml",
        "name = \"trips\"\nduration = \"1h\"\n[traffic]\nkind = \"constant\"\nrate = 300.0\n\
         [upstream]\np50 = \"300ms\"\np95 = \"900ms\"\nerror_rate = 0.01\n\
         [[incidents]]\nkind = \"outage\"\nstart = \"20m\"\nduration = \"10m\"\nexpect = \"open\"\n",
    );
    let out = dir.path().join("out");
    breakerlab(dir.path())
        .args(["run", "--policy", "circuit-gate", "--out"])
        .arg(&out)
        .arg(&scenario)
        .assert()
        .success();
    let transitions: Vec<String> =
        read(&out.join("transitions.csv")).lines().skip(1).map(String::from).collect();
    assert!(transitions.len() > 1_000, "{} transitions", transitions.len());
    // explain.csv holds the same transitions in the same order, every row as wide as its header.
    let text = read(&out.join("explain.csv"));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let width = r.headers().unwrap().len();
    let mut changes = Vec::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(rec.len(), width);
        if &rec[0] == "transition" {
            changes.push(format!("{},{},{},{},{}", &rec[1], &rec[2], &rec[3], &rec[4], &rec[5]));
        }
    }
    assert_eq!(changes, transitions);
    // Nothing of the streaming is left: no scratch file in the set, no temporary beside it.
    assert!(!files_in(&out).iter().any(|f| f.starts_with('.')), "{:?}", files_in(&out));
    assert_eq!(files_in(dir.path()).iter().filter(|f| f.contains(".tmp.")).count(), 0);
    // The page lists the first 300 marks and every incident, read from the kept rows.
    assert!(read(&out.join("report.html")).contains("incident 1"));
}
