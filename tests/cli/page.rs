//! The review page: its "Reproduce" command re-runs as pasted into a shell, giving the same
//! bytes.

use crate::util::*;
use std::path::Path;

/// Every file of a folder with its bytes, sorted by name.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_in(dir).into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap())).collect()
}

/// A per-call log: 600 calls 100 ms apart, calls 200..400 failing with 503.
fn call_log() -> String {
    let mut s = String::from("timestamp_ms,latency_ms,status\n");
    for i in 0..600u64 {
        let status = if (200..400).contains(&i) { 503 } else { 200 };
        s.push_str(&format!("{},{},{status}\n", 1_700_000_000_000 + i * 100, 10 + i % 50));
    }
    s
}

#[test]
fn the_recorded_command_re_runs_as_pasted_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "my calls.csv", &call_log());
    breakerlab(dir.path())
        .args(["replay", "my calls.csv", "--slo", "success_rate < 80% or p95 > 8s for 2s"])
        .args(["--trace", "slo_interval=1s", "--policy", "consecutive", "--set", "failure_threshold=3"])
        .args(["--out", "out dir"])
        .assert()
        .success();
    let out = dir.path().join("out dir");
    let first = contents(&out);
    let inputs: toml::Table = toml::from_str(&read(&out.join("inputs.toml"))).unwrap();
    let command = inputs["command_line"].as_str().unwrap().to_string();
    assert_eq!(
        command,
        "breakerlab replay 'my calls.csv' --slo 'success_rate < 80% or p95 > 8s for 2s' --trace \
         slo_interval=1s --policy consecutive --set failure_threshold=3 --out 'out dir'"
    );
    // The pages show it as recorded (HTML-escaped in report.html).
    assert!(read(&out.join("report.md")).contains(&format!("```sh\n{command}\n```")));
    assert!(
        read(&out.join("report.html"))
            .contains("--slo &#39;success_rate &lt; 80% or p95 &gt; 8s for 2s&#39;")
    );
    // Pasted into a shell, with `breakerlab` on the PATH, it writes the same bytes again.
    std::fs::remove_dir_all(&out).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("breakerlab");
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let status = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .env("PATH", path)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let again = contents(&out);
    assert_eq!(
        first.iter().map(|f| &f.0).collect::<Vec<_>>(),
        again.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in first.iter().zip(&again) {
        assert!(a == b, "{name} differs after re-running the recorded command");
    }
    let summary = read(&out.join("summary.csv"));
    assert_eq!(csv_field(&summary, "incidents"), "1", "the quoted SLO rule was applied");
}
