//! A per-call log replayed onto a pool of hosts through the command line: the bundled
//! `trace-hosts` scenario (pods named in every output), its sweep giving the same bytes on any
//! thread count, and bad host columns refused with exit 2 and no output.

use crate::util::*;

#[test]
fn trace_hosts_names_its_pods_and_sweeps_to_the_same_bytes_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let assert = breakerlab(dir.path())
        .args(["run", "--out"])
        .arg(&out)
        .arg(scenario("trace-hosts.toml"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("calls name 3 hosts (pod-a, pod-b, pod-c)"), "{stdout}");
    assert_eq!(csv_field(&read(&out.join("summary.csv")), "pool.false_ejections"), "0");
    assert_eq!(csv_field(&read(&out.join("summary.csv")), "pool.ejections_missed"), "0");
    let page = read(&out.join("report.md"));
    assert!(page.contains("pod-b: opened 647ms after the start (consecutive_5xx)"), "{page}");
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("t{threads}"));
        breakerlab(dir.path())
            .args(["sweep", "--quiet", "--no-charts", "--threads", threads, "--out"])
            .arg(&out)
            .arg(scenario("sweeps/trace-hosts.toml"))
            .assert()
            .success();
        outputs.push(out);
    }
    for f in ["summary.csv", "runs.csv", "recommendation.txt"] {
        assert_same_text(&read(&outputs[0].join(f)), &read(&outputs[1].join(f)), f);
    }
    let summary = read(&outputs[0].join("summary.csv"));
    assert_eq!(summary.lines().count(), 1 + 24, "one row per configuration");
    assert!(summary.lines().next().unwrap().contains("pool.bad_host_requests"));
}

#[test]
fn bad_host_columns_exit_2_naming_the_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "calls.csv", "ts_ms,pod,latency_ms,status\n1000,a,5,200\n1100,,5,200\n");
    let refused = |args: &[&str]| {
        let assert = breakerlab(dir.path()).args(args).assert().code(2);
        assert!(!dir.path().join("output").exists(), "no partial output");
        String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
    };
    let e = refused(&["replay", "calls.csv", "--trace", "host_column=pod"]);
    assert!(e.contains("calls.csv: line 3, column `pod`: expected a host name"), "{e}");
    let e = refused(&["replay", "calls.csv", "--trace", "host_column=host"]);
    assert!(e.contains("option `host_column` names column `host`, which is not in the header"), "{e}");
}
