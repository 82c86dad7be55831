//! The hostile-input corpus (`tests/hostile/`, minimised reproducers of issue 15): sizes that
//! once reached the allocator and aborted, runs that ran away, and inputs that were accepted in
//! silence. Each must exit 0 with its result or exit 2 with a located message (file and line, or
//! the flag), never abort or panic, and write nothing on exit 2.

use crate::util::*;
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    root().join("tests/hostile").join(name)
}

/// Runs `breakerlab ARGS --out DIR/out` in a fresh folder (arguments naming a corpus file are
/// replaced by its path) and checks the exit code and that stderr holds every piece.
fn case(args: &[&str], code: i32, pieces: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args: Vec<String> = args
        .iter()
        .map(|a| if corpus(a).exists() { corpus(a).display().to_string() } else { a.to_string() })
        .collect();
    let command = args.join(" ");
    let output = breakerlab(dir.path()).args(&args).arg("--out").arg(&out).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{command}:\n{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("memory allocation"), "{command}:\n{stderr}");
    for piece in pieces {
        assert!(stderr.contains(piece), "{command}: stderr lacks {piece:?}:\n{stderr}");
    }
    if code == 2 {
        assert!(!out.exists() || files_in(&out).is_empty(), "{command}: output written despite exit 2");
        assert!(!Path::new(&dir.path().join("output")).exists(), "{command}: default output written");
    }
}

#[test]
fn sizes_that_once_aborted_are_refused_at_their_field() {
    case(&["run", "instances.toml"], 2, &["instances.toml:15:1: [client] instances:", "--max-memory"]);
    case(&["run", "hystrix.toml"], 2, &["hystrix.toml:7:1:", "`rolling_window`", "at most 30d"]);
    case(&["run", "cockatiel.toml"], 2, &["cockatiel.toml:7:1:", "`duration`", "at most 30d"]);
    case(&["run", "capacity.toml"], 2, &["capacity.toml:27:1: [upstream] p95:", "timeline bins"]);
    case(
        &["run", "base.toml", "--set", "count_window=4000000000"],
        2,
        &["--set count_window=4000000000:", "at most 1000000 calls"],
    );
    for (preset, param) in [
        ("resilience4j-count", "sliding_window_size"),
        ("resilience4j-count", "permitted_number_of_calls_in_half_open_state"),
        ("failsafe-go", "failure_thresholding_capacity"),
        ("failsafe-go", "success_thresholding_capacity"),
    ] {
        let set = format!("{param}=4000000000");
        case(&["run", "base.toml", "--policy", preset, "--set", &set], 2, &[&format!("--set {set}:")]);
    }
    case(
        &["run", "pybreaker-week.toml", "--policy", "pybreaker"],
        2,
        &["--policy: this needs about", "up to 1.814e8 requests may wait in line"],
    );
}

#[test]
fn traces_too_large_for_one_run_are_refused_before_they_run() {
    case(&["replay", "count1e12.csv"], 2, &["count1e12.csv: the trace's rows:", "1.000e12 requests"]);
    case(&["replay", "jump.csv"], 2, &["jump.csv: the trace's rows:", "over 3650d"]);
    case(&["replay", "eightday.csv", "--rate", "400"], 2, &["--rate: would offer about 2.765e8 requests"]);
    case(&["replay", "small.csv", "--rate", "1e12"], 2, &["--rate: would offer about"]);
}

#[test]
fn script_times_past_any_clock_are_refused_and_far_ones_run_in_bounded_bins() {
    // 18446744073709551 ms overflowed the run's end and grew the timeline without bound.
    case(
        &["run", "--script", "script-overflow.csv", "--policy", "circuit-gate"],
        2,
        &["script-overflow.csv, line 3, column `t_ms`: expected", "below 10^15", "18446744073709551"],
    );
    // 31,700 years in two calls: at most 200,000 timeline bins.
    case(&["run", "--script", "script-far.csv", "--policy", "circuit-gate", "--no-charts"], 0, &[]);
}

#[test]
fn sweeps_and_comparisons_too_large_are_refused_at_their_field() {
    // 65535 replicates fit in memory now (the streams are generated a few at a time, in
    // chunks): the 7e9 calls are what a lower --max-calls refuses, at the same field.
    case(
        &["sweep", "sweep-reps.toml", "--quiet", "--max-calls", "1e9"],
        2,
        &["sweep-reps.toml:3:14: replicates: this would simulate about 7.078e9 calls", "65535 replicates"],
    );
    case(&["sweep", "sweep-reps4e9.toml", "--quiet"], 2, &["sweep-reps4e9.toml:3:14: replicates:"]);
    // With the progress bar (no --quiet), and as a shard: refused before anything is planned.
    // The result rows go to a scratch file, so the calls, not the memory, are what is refused.
    case(
        &["sweep", "sweep-reps4e9.toml"],
        2,
        &["sweep-reps4e9.toml:3:14: replicates:", "x 4000000000 replicates"],
    );
    case(
        &["sweep", "sweep-reps4e9.toml", "--shard", "0/4"],
        2,
        &["sweep-reps4e9.toml:3:14: replicates: 4000000000 cells"],
    );
    case(
        &["sweep", "sweep-reps.toml", "--quiet", "--shard", "1/4", "--max-calls", "1e8"],
        2,
        &[
            "sweep-reps.toml:3:14: replicates: this would simulate about 1.769e9 calls",
            "16384 of this shard's cells",
        ],
    );
    case(
        &["sweep", "sweep-badset.toml", "--quiet"],
        2,
        &["sweep-badset.toml:5:16:", "at most 1000000 calls"],
    );
    case(
        &["compare", "base.toml", "--policy", "consecutive", "--replicates", "4000000000"],
        2,
        &["--replicates:", "--max-calls"],
    );
    case(&["run", "base.toml", "--no-charts", "--max-memory", "1MiB"], 2, &["--max-memory"]);
}

#[test]
fn silent_acceptance_is_refused_with_a_location() {
    case(&["run", "late-incident.toml"], 2, &["late-incident.toml:5:1: [[incidents]] #1:", "never happens"]);
    case(&["run", "until-before.toml"], 2, &["until-before.toml:6:1: [[incidents]] #1: `until` (1h)"]);
    case(&["run", "both.toml"], 2, &["both.toml:5:1: [policy]:", "would never run"]);
    case(&["run", "fleet-mismatch.toml"], 2, &["fleet-mismatch.toml:7:1: [client] instances:"]);
    case(&["run", "empty-name.toml"], 2, &["empty-name.toml:1:8: name: must not be empty"]);
    case(&["run", "bin.toml"], 2, &["bin.toml:6:1: [scoring] timeline_bin:"]);
    case(&["run", "traffic-size.toml"], 2, &["traffic-size.toml:4:1: [traffic] rate:"]);
    case(
        &["replay", "small.csv", "--labels", "other.windows.json"],
        2,
        &["other.windows.json:", "belong to another trace"],
    );
}

#[test]
fn wrong_kinds_of_input_say_what_is_wrong() {
    case(&["run", "a-folder"], 2, &["a-folder: is a folder, not a file"]);
    case(
        &["sweep", "sweep-self.toml", "--quiet"],
        2,
        &["sweep-self.toml:2:14:", "matches this sweep file itself"],
    );
    case(&["replay", "small.csv", "--labels", "faults.txt"], 2, &["faults.txt:", "--fault-duration"]);
    case(&["run", "base.toml", "--seed", "-1"], 2, &["seeds are unsigned"]);
}

#[test]
fn the_good_cases_run() {
    case(&["replay", "small.csv", "--labels", "faults.txt", "--fault-duration", "1m", "--no-charts"], 0, &[]);
    case(&["run", "base.toml", "--no-charts"], 0, &[]);
}

#[test]
fn events_beyond_the_calls_are_foreseen_and_refused_at_their_field() {
    // A retry queue cycling every microsecond across a 20-minute outage: 3.6e4 requests, but
    // each deferred one is offered again every cycle until the outage ends.
    case(
        &["run", "retry-queue-1us.toml", "--no-charts"],
        2,
        &["retry-queue-1us.toml:23:1: [client.fallback] cycle: this would process about 4.3", "--max-events"],
    );
    // The same queue every 100 ms runs; a lower --max-events refuses it at the same field.
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(corpus("retry-queue-1us.toml")).unwrap().replace("\"1us\"", "\"100ms\"");
    let every_100ms = write(dir.path(), "rq.toml", &text);
    let path = every_100ms.display().to_string();
    case(&["run", &path, "--no-charts"], 0, &[]);
    case(
        &["run", &path, "--no-charts", "--max-events", "1e5"],
        2,
        &["rq.toml:23:1: [client.fallback] cycle:"],
    );
    // A sweep over it multiplies the events by its cells.
    let sweep = write(
        dir.path(),
        "sw.toml",
        "scenarios = [\"rq.toml\"]\nreplicates = 3\n[[policies]]\npreset = \"consecutive\"\n",
    );
    case(
        &["sweep", &sweep.display().to_string(), "--quiet", "--max-events", "3e5"],
        2,
        &["rq.toml:23:1: [client.fallback] cycle:", "3 runs, each: a retry queue"],
    );
}

/// The waiting line of a breaker that lets one call through at a time costs a constant per
/// freed lock: four times the run takes about four times as long, not sixteen (the ratio of two
/// runs on one machine, so the test does not depend on its speed).
#[test]
fn a_serialized_breakers_waiting_line_grows_linearly() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(corpus("pybreaker-queue.toml")).unwrap();
    let time = |duration: &str| {
        let path = write(
            dir.path(),
            &format!("q{duration}.toml"),
            &text.replace("\"2m\"", &format!("\"{duration}\"")),
        );
        let out = dir.path().join(format!("out{duration}"));
        let start = std::time::Instant::now();
        breakerlab(dir.path())
            .arg("run")
            .arg(&path)
            .args(["--no-charts", "--out"])
            .arg(&out)
            .assert()
            .success();
        start.elapsed().as_secs_f64()
    };
    let (short, long) = (time("2m"), time("8m"));
    assert!(long < 9.0 * short.max(0.05), "2m: {short:.2} s, 8m: {long:.2} s (quadratic would be 16x)");
}
