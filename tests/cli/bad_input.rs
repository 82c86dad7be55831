//! Bad input through the CLI: one clear message naming the file, line (or row) and field, exit
//! code 2, no output written, never a panic.

use crate::util::*;
use predicates::prelude::*;

const GOOD: &str = r#"
duration = "10m"
[traffic]
kind = "poisson"
rate = 2.0
[upstream]
p50 = "100ms"
p95 = "300ms"
[[incidents]]
kind = "outage"
start = "2m"
duration = "3m"
expect = "open"
"#;

/// Runs `breakerlab run` on a scenario text and checks the failure: exit 2, the expected pieces
/// in stderr, no panic, and no output folder.
fn refuses(text: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bad.toml", text);
    let assert = breakerlab(dir.path()).args(["run"]).arg(&path).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for piece in expected {
        assert!(stderr.contains(piece), "stderr lacks {piece:?}:\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(files_in(&dir.path().join("output")).is_empty(), "output written despite the error");
}

#[test]
fn the_good_scenario_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    breakerlab(dir.path()).arg("run").arg(&path).assert().success();
    assert!(dir.path().join("output/good/summary.csv").exists());
}

#[test]
fn unknown_key() {
    refuses(&GOOD.replace("rate = 2.0", "rate = 2.0\nrat = 3"), &["bad.toml:6:1", "unknown field `rat`"]);
}

#[test]
fn wrong_type() {
    refuses(&GOOD.replace("rate = 2.0", "rate = \"fast\""), &["bad.toml:5:8", "rate"]);
}

#[test]
fn negative_duration() {
    refuses(&GOOD.replace("duration = \"3m\"", "duration = \"-3m\""), &["bad.toml:12:12", "non-negative"]);
}

#[test]
fn rate_outside_unit_interval() {
    refuses(
        &GOOD.replace("p95 = \"300ms\"", "p95 = \"300ms\"\nerror_rate = 1.5"),
        &["bad.toml:9:14", "between 0 and 1"],
    );
}

#[test]
fn unknown_policy_parameter_in_file() {
    refuses(
        &format!("{GOOD}\n[policy]\npreset = \"consecutive\"\nfailure_treshold = 3\n"),
        &["bad.toml:17:1", "failure_treshold"],
    );
}

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    breakerlab(dir.path())
        .args(["run", "nowhere.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nowhere.toml: cannot read: no such file"));
    assert!(files_in(&dir.path().join("output")).is_empty());
}

#[test]
fn malformed_script_row() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write(dir.path(), "calls.csv", "t_ms,latency_ms,ok\n0,100,1\n1000,fast,1\n");
    let assert = breakerlab(dir.path()).args(["run", "--script"]).arg(&csv).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    for piece in ["calls.csv", "3", "latency_ms", "fast"] {
        assert!(stderr.contains(piece), "stderr lacks {piece:?}:\n{stderr}");
    }
    assert!(files_in(&dir.path().join("output")).is_empty());
}

#[test]
fn bad_set_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    let assert = breakerlab(dir.path())
        .args(["run", "--policy", "consecutive", "--set", "failure_threshold=-2"])
        .arg(&path)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("failure_threshold"), "{stderr}");
    assert!(files_in(&dir.path().join("output")).is_empty());
}

#[test]
fn unknown_preset() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    let assert = breakerlab(dir.path()).args(["run", "--policy", "resilience5j"]).arg(&path).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains("resilience5j") && stderr.contains("consecutive"), "{stderr}");
}

#[test]
fn traffic_too_large_for_one_run() {
    refuses(
        &GOOD.replace("rate = 2.0", "rate = 1e9"),
        &["bad.toml:5:1: [traffic] rate: would offer about", "lower the rate or the duration"],
    );
}

#[test]
fn timeline_bin_too_fine() {
    refuses(
        &format!("{GOOD}\n[scoring]\ntimeline_bin = \"1us\"\n"),
        &["bad.toml:16:1: [scoring] timeline_bin:", "use a wider bin"],
    );
}

#[test]
fn scenario_names_must_stay_inside_the_output_folder() {
    for name in ["../escape", "/tmp/breakerlab-absolute", "a/b", ".."] {
        refuses(
            &format!("name = {name:?}\n{GOOD}"),
            &["bad.toml:1:8: name: must be a plain folder name", name],
        );
    }
}

/// Runs the binary in `dir` with `args`; asserts exit 2, `expected` in stderr and no panic.
fn exits_2(dir: &std::path::Path, args: &[&str], expected: &str) {
    let assert = breakerlab(dir).args(args).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(stderr.contains(expected), "stderr lacks {expected:?}:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn output_folders_that_cannot_be_used_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    let good = path.to_str().unwrap();
    write(dir.path(), "taken", "a file");
    exits_2(dir.path(), &["run", good, "--out", "taken"], "taken: the output folder is a file");
    exits_2(dir.path(), &["run", good, "--out", "taken/below"], "cannot create the output folder");
    assert_eq!(files_in(dir.path()), ["good.toml", "taken"]);
}

#[test]
fn report_refuses_bad_folders_and_flags_and_leaves_the_folder_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    breakerlab(dir.path()).args(["run", path.to_str().unwrap(), "--out", "o"]).assert().success();
    let before: Vec<(String, Vec<u8>)> = files_in(&dir.path().join("o"))
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(dir.path().join("o").join(&n)).unwrap()))
        .collect();
    let same = || {
        let now: Vec<(String, Vec<u8>)> = files_in(&dir.path().join("o"))
            .into_iter()
            .map(|n| (n.clone(), std::fs::read(dir.path().join("o").join(&n)).unwrap()))
            .collect();
        assert!(now == before, "the folder changed");
    };
    exits_2(dir.path(), &["report", "o", "--from", "1h", "--to", "10m"], "--from 1h is not before --to 10m");
    exits_2(dir.path(), &["report", "o", "--metric", "bogus"], "--metric bogus: not a summary metric");
    same();
    exits_2(dir.path(), &["report", "nowhere"], "nowhere: not an output folder");
    // A truncated timeline.csv (cut in the middle of a row) and a malformed summary.csv.
    let timeline = read(&dir.path().join("o/timeline.csv"));
    let cut = &timeline[..timeline.len() - timeline.lines().last().unwrap().len() / 2 - 1];
    write(&dir.path().join("o"), "timeline.csv", cut);
    exits_2(dir.path(), &["report", "o"], "timeline.csv");
    write(&dir.path().join("o"), "timeline.csv", &timeline);
    write(&dir.path().join("o"), "summary.csv", "scenario,policy\n\"unterminated,x\n");
    exits_2(dir.path(), &["report", "o"], "summary.csv");
    assert!(files_in(dir.path()).iter().all(|n| !n.contains(".tmp.")), "{:?}", files_in(dir.path()));
}

#[test]
fn report_refuses_a_malformed_runs_csv_where_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "good.toml", GOOD);
    let args =
        ["compare", path.to_str().unwrap(), "--policy", "consecutive", "--replicates", "1", "--no-charts"];
    breakerlab(dir.path()).args(args).args(["--out", "c"]).assert().success();
    let runs = read(&dir.path().join("c/runs.csv"));
    let rows = runs.lines().count();
    write(&dir.path().join("c"), "runs.csv", &format!("{runs}good,x\n"));
    exits_2(dir.path(), &["report", "c"], &format!("c/runs.csv:{}:", rows + 1));
    write(&dir.path().join("c"), "runs.csv", &runs.replacen(",0,", ",zero,", 1));
    exits_2(dir.path(), &["report", "c"], "c/runs.csv:2:1:");
    write(&dir.path().join("c"), "runs.csv", &runs);
    breakerlab(dir.path()).args(["report", "c"]).assert().success();
}
