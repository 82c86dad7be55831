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

/// summary.csv's rows as maps of column to cell.
fn csv_rows(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect())
        .collect()
}

#[test]
fn a_real_sweeps_decision_table_agrees_with_its_summary_and_opens_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_sweep(dir.path());
    breakerlab(dir.path()).args(["sweep", "--quiet"]).arg(&file).assert().success();
    let out = dir.path().join("output/small");
    // Per configuration, from summary.csv: label, preset, total cost, qualifies, and the sums.
    struct Config {
        label: String,
        preset: String,
        cost: f64,
        qualifies: bool,
        sums: [f64; 3],
    }
    let mut configs: Vec<(String, Config)> = Vec::new();
    for row in csv_rows(&read(&out.join("summary.csv"))) {
        let num = |c: &str| row[c].parse::<f64>().unwrap_or_else(|_| panic!("{c} = {:?}", row[c]));
        let i = match configs.iter().position(|(id, _)| *id == row["config_id"]) {
            Some(i) => i,
            None => {
                let c = Config {
                    label: row["policy"].clone(),
                    preset: row["preset"].clone(),
                    cost: 0.0,
                    qualifies: true,
                    sums: [0.0; 3],
                };
                configs.push((row["config_id"].clone(), c));
                configs.len() - 1
            }
        };
        let c = &mut configs[i].1;
        c.cost += num("cost");
        c.qualifies &= row["feasible"] == "true";
        for (s, col) in c.sums.iter_mut().zip(["missed_incidents", "false_opens", "flaps"]) {
            *s += num(col);
        }
    }
    assert_eq!(configs.len(), 7);
    // The ranking a reviewer would make by hand: qualifying first, then the cheapest; the
    // recommendation is the cheapest unless the selection cannot tell it from others, when the
    // tie-break picks among them (the pick first, the rest in order).
    let mut ranked: Vec<&Config> = configs.iter().map(|(_, c)| c).collect();
    ranked.sort_by(|a, b| (!a.qualifies).cmp(&!b.qualifies).then(a.cost.total_cmp(&b.cost)));
    let review: toml::Table = toml::from_str(&read(&out.join("review.toml"))).unwrap();
    let selection = review["selection"].as_table().unwrap();
    let recommended = read(&out.join("recommended.txt")).trim().to_string();
    if selection["separated"].as_bool() == Some(true) {
        assert_eq!(recommended, ranked[0].label);
    } else {
        let tied: Vec<&str> =
            selection["listed"].as_array().unwrap().iter().map(|t| t["label"].as_str().unwrap()).collect();
        assert!(tied.contains(&recommended.as_str()) && tied.contains(&ranked[0].label.as_str()), "{tied:?}");
        assert!(
            selection["tie_break"].as_str().unwrap().starts_with("tie-break: the closest to the baseline")
        );
    }
    let at = ranked.iter().position(|c| c.label == recommended).unwrap();
    let chosen = ranked.remove(at);
    ranked.insert(0, chosen);
    let (best, second) = (ranked[0], ranked[1]);
    assert!(best.qualifies && second.qualifies, "the small sweep has two qualifying configurations");
    assert_eq!(review["recommended"].as_str(), Some(best.label.as_str()));
    let rows = review["decision"].as_array().unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
    let float = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).unwrap();
    let mut seen = Vec::new();
    for row in rows {
        let label = row["label"].as_str().unwrap();
        let c = configs.iter().map(|(_, c)| c).find(|c| c.label == label).unwrap();
        let roles: Vec<&str> = row["roles"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
        let why = |role: &str| roles.contains(&role);
        assert!(!roles.is_empty(), "{label}: every row says why it is there");
        assert!(close(float(&row["total_cost"]), c.cost), "{label}: total cost");
        assert!(close(float(&row["difference"]), c.cost - best.cost), "{label}: difference");
        assert!(close(float(&row["ratio"]), c.cost / best.cost), "{label}: ratio");
        assert_eq!(row["qualifies"].as_bool(), Some(c.qualifies), "{label}");
        assert_eq!(row.get("broken").is_some(), !c.qualifies, "{label}: a broken constraint iff ruled out");
        for (k, col) in ["missed_incidents", "false_opens", "flaps"].iter().enumerate() {
            assert!(close(float(&row[*col]), c.sums[k]), "{label}: {col}");
        }
        assert_eq!(why("recommended"), std::ptr::eq(c, best), "{label}");
        assert_eq!(why("runner-up"), std::ptr::eq(c, second), "{label}");
        // Best of its family: the first of its preset in the ranking.
        let family_best = ranked.iter().find(|r| r.preset == c.preset).unwrap();
        assert_eq!(why(&format!("best {}", c.preset)), std::ptr::eq(c, *family_best), "{label}");
        assert_eq!(why("baseline"), label == "consecutive[failure_threshold=5,open_duration=30s]", "{label}");
        seen.push(label.to_string());
    }
    assert_eq!(seen[0], best.label, "the recommendation is the first row");
    // Every family's best and the baseline have a row.
    for preset in ["consecutive", "windowed"] {
        let b = ranked.iter().find(|r| r.preset == preset).unwrap();
        assert!(seen.contains(&b.label), "best {preset} missing from {seen:?}");
    }
    assert!(seen.iter().any(|l| l == "consecutive[failure_threshold=5,open_duration=30s]"));

    // The page opens with the verdict on the baseline, then this table, then the charts; the
    // long tables come last, folded.
    let html = read(&out.join("report.html"));
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("{needle} not on the page"));
    let (verdict, decision, charts) = (at("<strong>Verdict:</strong>"), at("id=\"decision\""), at("<img"));
    assert!(verdict < decision && decision < charts);
    for label in &seen {
        let cell = format!(">{}<", label.replace('\'', "&#39;"));
        let pos = html[decision..].find(&cell).map(|p| p + decision);
        assert!(pos.is_some_and(|p| p < charts), "{label} in the decision table before the charts");
    }
    let results = at("id=\"results\"");
    assert!(results > charts && html[results..].contains("<details"), "the long tables last, folded");
    assert!(html[..charts].matches("<tr").count() > seen.len(), "a header row and one row each");
}
