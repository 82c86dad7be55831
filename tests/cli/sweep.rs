//! `breakerlab sweep`, `compare` and `recommend` end to end through the CLI.

use crate::util::*;

#[test]
fn sweep_writes_its_files_and_any_thread_count_gives_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        let out = dir.path().join(format!("t{threads}"));
        let assert = breakerlab(dir.path())
            .args(["sweep", "--quiet", "--no-charts", "--threads", threads, "--out"])
            .arg(&out)
            .arg(&file)
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
        assert!(stdout.contains("Recommended:") && stdout.contains("[policy]"), "{stdout}");
        outputs.push(out);
    }
    for f in ["summary.csv", "runs.csv", "pareto.csv", "recommendation.txt", "review.toml"] {
        let first = read(&outputs[0].join(f));
        for other in &outputs[1..] {
            assert_same_text(&first, &read(&other.join(f)), f);
        }
    }
    let summary = read(&outputs[0].join("summary.csv"));
    assert_eq!(summary.lines().count(), 1 + 2 * 7, "one row per scenario x configuration");
    assert!(summary.lines().next().unwrap().contains("param.failure_threshold"));
    assert_eq!(read(&outputs[0].join("runs.csv")).lines().count(), 1 + 2 * 7 * 2, "one row per cell");
}

#[test]
fn sweep_draws_charts_and_the_report_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    breakerlab(dir.path()).args(["sweep", "--quiet"]).arg(&file).assert().success();
    let names = files_in(&dir.path().join("output/small"));
    for expected in ["pareto.png", "comparison.png", "report.html", "report.md", "recommended.txt"] {
        assert!(names.iter().any(|n| n == expected), "{expected} in {names:?}");
    }
    assert!(names.iter().any(|n| n.starts_with("heatmap_")), "{names:?}");
    let html = read(&dir.path().join("output/small/report.html"));
    assert!(html.contains("data:image/png;base64,") && !html.contains("src=\"http"));
}

#[test]
fn a_bad_sweep_file_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = refused_blip_sweep(
        dir.path(),
        "bad.toml",
        "[[policies]]\npreset = \"consecutive\"\nfailure_treshold = [3, 5]\n",
    );
    assert!(
        stderr.contains("bad.toml:4:") && stderr.contains("did you mean `failure_threshold`"),
        "{stderr}"
    );
    assert!(files_in(&dir.path().join("output")).is_empty());
    let glob =
        write(dir.path(), "glob.toml", "scenarios = [\"nothing/*.toml\"]\n[[policies]]\npreset = \"none\"\n");
    let assert = breakerlab(dir.path()).args(["sweep", "--quiet"]).arg(&glob).assert().code(2);
    assert!(String::from_utf8_lossy(&assert.get_output().stderr).contains("nothing/*.toml"));
}

#[test]
fn compare_prints_paired_differences_and_writes_side_by_side_files() {
    let dir = tempfile::tempdir().unwrap();
    let assert = breakerlab(dir.path())
        .arg("compare")
        .arg(scenario("hard-outage.toml"))
        .args([
            "--policy",
            "consecutive",
            "--policy",
            "consecutive[failure_threshold=10]",
            "--replicates",
            "3",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("B - A") && stdout.contains("detection_delay_mean_s"), "{stdout}");
    let out = dir.path().join("output/compare-hard-outage");
    let timeline = read(&out.join("timeline.csv"));
    assert!(timeline.starts_with("policy,bin_start_us"), "one timeline per policy");
    assert!(out.join("timeline.png").exists() && out.join("comparison.png").exists());
}

#[test]
fn recommend_reranks_a_sweep_folder_under_new_constraints() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    breakerlab(dir.path()).args(["sweep", "--quiet", "--no-charts"]).arg(&file).assert().success();
    let assert = breakerlab(dir.path())
        .args(["recommend", "output/small", "--constraint", "false_opens <= -1"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("No configuration meets every constraint"), "{stdout}");
    assert!(stdout.contains("Binding constraint: `false_opens <= -1`"), "{stdout}");
}

#[test]
fn a_pool_sweep_weighs_and_shows_the_pool_scores() {
    // gateway#6985's ten hosts, the gateway rule's enforcement swept: the pool's scores are
    // columns of the results, the objective prices them and a constraint bounds them.
    let dir = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/mesh-gateway-6985.toml");
    let text = format!(
        "name = \"pool\"\nscenarios = [\"{}\"]\nreplicates = 1\nconstraints = [\"pool.ejections_missed <= 0\"]\n\
         [objective]\n\"pool.bad_host_requests\" = 0.01\n\"pool.false_ejections\" = 1.0\n\
         [[policies]]\npreset = \"istio-outlier\"\nconsecutive_5xx = 0\nconsecutive_gateway_failure = 3\n\
         max_ejection_percent = 50\nenforcing_consecutive_gateway_failure = [0, 100]\n",
        scenario.display()
    );
    let file = write(dir.path(), "pool.toml", &text);
    let out = dir.path().join("out");
    let assert = breakerlab(dir.path())
        .args(["sweep", "--quiet", "--no-charts", "--out"])
        .arg(&out)
        .arg(&file)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("enforcing_consecutive_gateway_failure = 100"), "{stdout}");
    let summary = read(&out.join("summary.csv"));
    let header = summary.lines().next().unwrap();
    assert!(header.contains("pool.bad_host_requests") && header.contains("pool.panic_episodes"), "{header}");
    assert!(read(&out.join("runs.csv")).lines().next().unwrap().contains("pool.false_ejections"));
    // The folder re-ranks under its objective.toml (pool.* keys quoted) and exports the pick.
    assert!(read(&out.join("objective.toml")).contains("\"pool.bad_host_requests\" = 0.01"));
    let assert = breakerlab(dir.path()).args(["recommend", "--as", "istio"]).arg(&out).assert().success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        stdout.contains("kind: DestinationRule") && stdout.contains("consecutiveGatewayErrors: 3"),
        "{stdout}"
    );
    // A pool's score named over scenarios without a pool is refused, saying why.
    let body = "constraints = [\"pool.false_ejections <= 0\"]\n[[policies]]\npreset = \"consecutive\"\n";
    let stderr = refused_blip_sweep(dir.path(), "plain.toml", body);
    assert!(stderr.contains("`pool.false_ejections` is not a column of these results"), "{stderr}");
}

/// Writes sweep file `name` over the bundled blip.toml with `body` after its `scenarios` line,
/// runs it, checks it is refused (exit 2) and returns what it printed on stderr.
fn refused_blip_sweep(dir: &std::path::Path, name: &str, body: &str) -> String {
    let text = format!("scenarios = [\"{}/blip.toml\"]\n{body}", root().join("scenarios").display());
    let file = write(dir, name, &text);
    let assert = breakerlab(dir).args(["sweep", "--quiet"]).arg(&file).assert().code(2);
    String::from_utf8_lossy(&assert.get_output().stderr).into_owned()
}
