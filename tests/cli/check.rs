//! `breakerlab check`: a checks file's bounds judged in every replicate, exit codes 0/1/2, the
//! JUnit report, and expected figures recorded with `--update` then compared.

use crate::util::*;

/// A checks file in `dir` naming bundled scenarios by absolute path.
fn checks(dir: &std::path::Path, policy: &str, bounds: &str) -> std::path::PathBuf {
    checks_on(dir, "hard-outage.toml", policy, bounds)
}

/// A checks file in `dir` with `bounds` on the bundled scenario `name`.
fn checks_on(dir: &std::path::Path, name: &str, policy: &str, bounds: &str) -> std::path::PathBuf {
    let text = format!(
        "replicates = 2\n[policy]\n{policy}\n\n[[checks]]\nscenarios = [{:?}]\nbounds = [{bounds}]\n",
        scenario(name).display().to_string()
    );
    write(dir, "checks.toml", &text)
}

#[test]
fn the_bundled_checks_file_passes_and_writes_a_junit_report() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = breakerlab(dir.path())
        .arg("check")
        .arg(root().join("scenarios/checks/ai-service.toml"))
        .arg("--junit")
        .arg(&junit)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("PASS: all 12 bounds hold."), "{text}");
    assert!(text.contains("no figure moved beyond noise since"), "{text}");
    let xml = read(&junit);
    assert_eq!(xml.matches("<testcase ").count(), 12, "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
}

#[test]
fn a_broken_bound_exits_1_and_names_the_replicates() {
    let dir = tempfile::tempdir().unwrap();
    // A breaker that counts only failures misses an incident that is slow, not down.
    let file = checks_on(
        dir.path(),
        "slow-not-down.toml",
        "preset = \"consecutive\"",
        "\"missed_incidents == 0\", \"false_opens == 0\"",
    );
    let junit = dir.path().join("j.xml");
    let out = breakerlab(dir.path()).arg("check").arg(&file).arg("--junit").arg(&junit).assert().code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("slow-not-down  missed_incidents == 0  1      BROKEN in 2 of 2"), "{text}");
    assert!(text.contains("FAIL: 1 of 2 bounds broken."), "{text}");
    assert!(read(&junit).contains("<failure message=\"broken in 2 of 2 replicates (worst 1)\"/>"));
}

#[test]
fn update_records_figures_and_a_changed_config_reports_what_moved() {
    let dir = tempfile::tempdir().unwrap();
    let file = checks(dir.path(), "preset = \"consecutive\"", "\"missed_incidents == 0\"");
    let out = breakerlab(dir.path()).arg("check").arg(&file).arg("--update").assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("recorded today's figures"), "{text}");
    let expected = dir.path().join("checks.expected.csv");
    assert!(read(&expected).starts_with("policy,scenario,metric,replicate,value\nconsecutive,hard-outage,"));
    let out = breakerlab(dir.path()).arg("check").arg(&file).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("no figure moved beyond noise"), "{text}");
    checks(dir.path(), "preset = \"consecutive\"\nopen_duration = \"5m\"", "\"missed_incidents == 0\"");
    let out = breakerlab(dir.path()).arg("check").arg(&file).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(text.contains("recorded for consecutive (now − expected"), "{text}");
    assert!(text.contains("hard-outage probe_failures: 39 -> 3 (-36 ± 0 *)"), "{text}");
}

#[test]
fn bad_checks_files_exit_2_with_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = checks(dir.path(), "preset = \"consecutive\"", "\"missed_incidents === 0\"");
    let out = breakerlab(dir.path()).arg("check").arg(&file).assert().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("checks.toml:7:"), "{err}");
    assert!(err.contains("unknown operator `===`"), "{err}");
    let file = checks(dir.path(), "preset = \"nosuch\"", "\"missed_incidents == 0\"");
    let err = breakerlab(dir.path()).arg("check").arg(&file).assert().code(2).get_output().stderr.clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.contains("checks.toml:2:1") && err.contains("nosuch"), "{err}");
    assert!(!dir.path().join("checks.expected.csv").exists(), "nothing written on bad input");
}
