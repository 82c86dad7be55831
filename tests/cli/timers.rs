//! A breaker's own timers in the event estimate (issue 35, point 1): active health checks of
//! every host and Hystrix's window sums, which make far more events than calls, are refused
//! before anything runs, at the policy, with the figure.

use crate::util::*;
use std::time::Duration;

/// Runs `breakerlab run FILE` on a file of tests/hostile (at most 60 s) in an empty folder:
/// the exit code and stderr, and that nothing was written.
fn run(file: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = root().join("tests/hostile").join(file);
    let output =
        breakerlab(dir.path()).arg("run").arg(path).timeout(Duration::from_secs(60)).output().unwrap();
    assert!(files_in(dir.path()).is_empty(), "{file}: output written");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn timers_that_dominate_the_work_are_refused_at_the_policy_with_the_figure() {
    let (code, stderr) = run("health-checks-1ms.toml");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("health-checks-1ms.toml:21:1: [policy]: this would process about 8.640e11 events")
            && stderr
                .contains("8.640e9 active health checks (100 hosts, one every health_check_interval = 1ms)")
            && stderr.contains("--max-events"),
        "{stderr}"
    );
    let (code, stderr) = run("hystrix-1ms.toml");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("hystrix-1ms.toml:20:1: [policy]: this would process about")
            && stderr.contains("bucket sums (10000 buckets of rolling_window = 10s summed at each call)"),
        "{stderr}"
    );
}
