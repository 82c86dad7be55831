//! `breakerlab run` end to end: files written, byte-identical reruns, seeds, common random
//! numbers, and a small scripted case whose scores were computed by hand.

use crate::util::*;
use breakerlab::Metric;
use breakerlab::PolicySpec;
use breakerlab::{RunOptions, Workload};

const OUTPUTS: [&str; 11] = [
    "explain.csv",
    "incidents.csv",
    "inputs.toml",
    "latency.csv",
    "latency_cdf.png",
    "report.html",
    "report.md",
    "summary.csv",
    "timeline.csv",
    "timeline.png",
    "transitions.csv",
];

#[test]
fn run_writes_every_output_and_reruns_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let sc = scenario("hard-outage.toml");
    let a = dir.path().join("a");
    let c = dir.path().join("c");
    breakerlab(dir.path()).arg("run").arg(&sc).arg("--out").arg(&a).assert().success();
    assert_eq!(files_in(&a), OUTPUTS);
    let first: Vec<Vec<u8>> = OUTPUTS.iter().map(|f| std::fs::read(a.join(f)).unwrap()).collect();
    breakerlab(dir.path()).arg("run").arg(&sc).arg("--out").arg(&a).assert().success();
    for (f, bytes) in OUTPUTS.iter().zip(&first) {
        assert!(std::fs::read(a.join(f)).unwrap() == *bytes, "{f} differs on a rerun");
    }
    breakerlab(dir.path()).arg("run").arg(&sc).args(["--seed", "2", "--out"]).arg(&c).assert().success();
    assert_ne!(read(&a.join("summary.csv")), read(&c.join("summary.csv")), "another seed changes the run");
    assert_ne!(
        std::fs::read(a.join("timeline.png")).unwrap(),
        std::fs::read(c.join("timeline.png")).unwrap()
    );
    assert_eq!(
        read(&a.join("incidents.csv")),
        read(&c.join("incidents.csv")),
        "ground truth does not depend on the seed"
    );
}

#[test]
fn default_output_folder_is_output_slash_name() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        breakerlab(dir.path()).arg("run").arg(scenario("blip.toml")).arg("--no-charts").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.contains("false_opens"), "{stdout}");
    let csvs: Vec<&str> = OUTPUTS.iter().copied().filter(|f| f.ends_with(".csv")).collect();
    assert_eq!(files_in(&dir.path().join("output/blip")), csvs, "--no-charts writes the CSVs only");
}

/// Two policies on the same scenario and seed see the same arrivals and the same upstream answer
/// for the same request attempt: a breaker that never trips changes nothing at all.
#[test]
fn common_random_numbers_make_a_silent_breaker_identical_to_none() {
    let sc = breakerlab::scenario::load(&scenario("brownout.toml")).unwrap();
    let workload = Workload::build(&sc, 7, 0).unwrap();
    let again = Workload::build(&sc, 7, 0).unwrap();
    assert_eq!(workload.stream().collect_chunks(), again.stream().collect_chunks());
    let none = PolicySpec::new("none").resolve().unwrap();
    let mut silent = PolicySpec::new("consecutive");
    silent.overrides.insert("failure_threshold".into(), toml::Value::Integer(1_000_000));
    let silent = silent.resolve().unwrap();
    let opts = RunOptions { timeline_bin: None, explain: false };
    let a = breakerlab::run(&sc, &workload, &none, &opts).metrics;
    let b = breakerlab::run(&sc, &workload, &silent, &opts).metrics;
    for &metric in Metric::ALL {
        assert_eq!(a.get(metric), b.get(metric), "{metric}");
    }
    // Retries drew their answers by (request, attempt): the brownout made some.
    assert!(a.get(Metric::Attempts).unwrap() > a.get(Metric::Requests).unwrap());
}

/// One call per second for a minute; calls at 10 s..19 s fail (100 ms each), the rest succeed
/// (100 ms). Ground truth: an outage over [10 s, 20 s) that should open the breaker.
/// `consecutive` (5 failures, open 30 s, one probe, one success closes), worked by hand:
/// - the 5th failure (call at 14 s) completes at 14.1 s: closed → open at 14,100,000 µs;
/// - calls at 15..44 s are rejected (30 shed); the call at 45 s finds the 30 s elapsed:
///   open → half_open at 45,000,000 µs, it is the probe, succeeds: half_open → closed at 45.1 s;
/// - detection delay 14.1 − 10 = 4.1 s; recovery lag 45.1 − 20 = 25.1 s;
/// - shed 30, of which 25 (20..44 s) while no incident was active;
/// - attempts 30 (0..14 s and 45..59 s), wasted quota 5, availability 25/60.
#[test]
fn scripted_outage_scores_match_the_hand_computation() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("t_ms,latency_ms,ok\n");
    for s in 0..60 {
        let ok = !(10..20).contains(&s);
        csv.push_str(&format!("{},100,{}\n", s * 1000, u8::from(ok)));
    }
    write(dir.path(), "calls.csv", &csv);
    let toml = r#"
script = "calls.csv"
[[incidents]]
kind = "outage"
start = "10s"
duration = "10s"
expect = "open"
[policy]
preset = "consecutive"
"#;
    let path = write(dir.path(), "scripted.toml", toml);
    breakerlab(dir.path()).arg("run").arg(&path).assert().success();
    let out = dir.path().join("output/scripted");
    let transitions = read(&out.join("transitions.csv"));
    assert_same_text(
        &transitions,
        "at_us,instance,from,to,reason\n\
         14100000,0,closed,open,consecutive_failures\n\
         45000000,0,open,half_open,cooldown_elapsed\n\
         45100000,0,half_open,closed,probe_successes\n",
        "transitions.csv",
    );
    let summary = read(&out.join("summary.csv"));
    for (column, expected) in [
        ("false_opens", 0.0),
        ("incidents", 1.0),
        ("missed_incidents", 0.0),
        ("detection_delay_mean_s", 4.1),
        ("recovery_lag_mean_s", 25.1),
        ("open_episodes", 1.0),
        ("flaps", 0.0),
        ("probe_failures", 0.0),
        ("requests", 60.0),
        ("attempts", 30.0),
        ("wasted_quota", 5.0),
        ("shed", 30.0),
        ("shed_healthy", 25.0),
        ("availability", 25.0 / 60.0),
    ] {
        let got: f64 = csv_field(&summary, column).parse().unwrap_or_else(|_| panic!("{column} is a number"));
        assert!((got - expected).abs() < 1e-6, "{column}: {got} != {expected}");
    }
}

/// A bare script has no ground truth: scores that need it are empty cells, the rest are there.
#[test]
fn a_script_without_ground_truth_leaves_truth_scores_empty() {
    let dir = tempfile::tempdir().unwrap();
    let csv = scenario("scripted/outage.csv");
    breakerlab(dir.path()).args(["run", "--policy", "node-breaker", "--script"]).arg(&csv).assert().success();
    let summary = read(&dir.path().join("output/outage/summary.csv"));
    for column in ["false_opens", "incidents", "detection_delay_mean_s", "shed_healthy"] {
        assert_eq!(csv_field(&summary, column), "", "{column}");
    }
    assert_eq!(csv_field(&summary, "requests"), "240");
    assert_eq!(csv_field(&summary, "open_episodes"), "1");
}

#[test]
fn every_provider_has_its_true_health_on_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    breakerlab(dir.path())
        .args(["run", "--no-charts", "--out"])
        .arg(&out)
        .arg(scenario("multi-provider.toml"))
        .assert()
        .success();
    let text = read(&out.join("timeline.csv"));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert!(
        header.ends_with(&[
            "provider.secondary.true_p95_ms".into(),
            "provider.secondary.true_error_rate".into()
        ])
    );
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (start, primary, secondary) =
        (col("bin_start_us"), col("true_error_rate"), col("provider.secondary.true_error_rate"));
    // The primary's outage runs 30m..50m: there its true error rate is total in every bin,
    // while the secondary, which the router now sends everything to, stays healthy (0.2 %
    // errors at baseline); after it both are healthy again.
    let (mut inside, mut after) = (Vec::new(), Vec::new());
    for rec in r.records() {
        let rec = rec.unwrap();
        let t: u64 = rec[start].parse().unwrap();
        let rate = |i: usize| rec[i].parse::<f64>().ok();
        let (Some(p), Some(s)) = (rate(primary), rate(secondary)) else { continue };
        if (31 * 60_000_000..49 * 60_000_000).contains(&t) {
            assert_eq!(p, 1.0, "at {t}: the primary fails every request in its outage");
            inside.push(s);
        } else if t >= 52 * 60_000_000 {
            after.push((p, s));
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(inside.len() > 100 && after.len() > 100, "{} bins inside, {} after", inside.len(), after.len());
    assert!(mean(&inside) < 0.02, "secondary during the primary's outage: {}", mean(&inside));
    let (p, s): (Vec<f64>, Vec<f64>) = after.into_iter().unzip();
    assert!(mean(&p) < 0.02 && mean(&s) < 0.02, "after: primary {}, secondary {}", mean(&p), mean(&s));
}

/// A 1 h scenario at a constant 5 requests/s, no retries, a 10 min outage from minute 20
/// under `consecutive` (5 failures, open 30 s), with the fallback `fallback`.
fn ending_scenario(dir: &std::path::Path, fallback: &str) -> std::path::PathBuf {
    write(
        dir,
        "ends.toml",
        &format!(
            "name = \"ends\"\nduration = \"1h\"\n[traffic]\nkind = \"constant\"\nrate = 5.0\n\
             [client]\ntimeout = \"2s\"\n[client.retry]\nmax_attempts = 1\n\
             [client.fallback]\n{fallback}\n\
             [upstream]\np50 = \"100ms\"\np95 = \"300ms\"\nerror_rate = 0.0\n\
             [[incidents]]\nkind = \"outage\"\nstart = \"20m\"\nduration = \"10m\"\nexpect = \"open\"\n\
             [policy]\npreset = \"consecutive\"\nfailure_threshold = 5\nopen_duration = \"30s\"\n"
        ),
    )
}

/// (summary.csv's four shares, requests, shed, deferred_delay_p95_s) and latency.csv's
/// ending counts and answered-histogram total.
fn endings(out: &std::path::Path) -> ([f64; 4], f64, f64, Option<f64>, [f64; 4], f64) {
    let summary = read(&out.join("summary.csv"));
    let num = |c: &str| csv_field(&summary, c).parse::<f64>().ok();
    let shares =
        ["answered_share", "refused_share", "fallback_share", "deferred_share"].map(|c| num(c).unwrap());
    let latency = read(&out.join("latency.csv"));
    let mut counts = [0.0; 4];
    let mut answered_hist = 0.0;
    for rec in csv::Reader::from_reader(latency.as_bytes()).records() {
        let cells = rec.unwrap();
        let n: f64 = cells[3].parse().unwrap();
        let i = ["answered", "refused", "fallback", "deferred"].iter().position(|o| **o == cells[1]).unwrap();
        if cells[2].is_empty() {
            counts[i] = n;
        } else if i == 0 {
            answered_hist += n;
        }
    }
    (
        shares,
        num("requests").unwrap(),
        num("shed").unwrap(),
        num("deferred_delay_p95_s"),
        counts,
        answered_hist,
    )
}

#[test]
fn how_requests_ended_splits_refused_fallback_and_deferred_from_answered() {
    let dir = tempfile::tempdir().unwrap();
    // Cached fallback: the breaker's refusals are refused (an immediate fallback, never a fast
    // answer); the outage's failures that reached the dependency are answered by the cache.
    let out = dir.path().join("cached");
    let file = ending_scenario(dir.path(), "kind = \"cached\"\nlatency = \"2ms\"");
    breakerlab(dir.path()).args(["run", "--no-charts", "--out"]).arg(&out).arg(&file).assert().success();
    let (shares, requests, shed, deferred_p95, counts, answered_hist) = endings(&out);
    assert_eq!(requests, 18_000.0);
    assert_eq!(counts.iter().sum::<f64>(), requests, "every request ended one way");
    for i in 0..4 {
        assert!((shares[i] - counts[i] / requests).abs() < 1e-9, "share {i}: {shares:?} vs {counts:?}");
    }
    assert_eq!(counts[1], shed, "refused = shed by the breaker");
    // 10 min at 5/s = 3,000 requests in the outage, plus at most one open period (30 s, 150
    // requests) after it before the probe closes the breaker: most refused while open, the
    // rest (the 5 that trip it, one failed probe every 30 s) failed upstream and answered by
    // the cache.
    let failed = counts[1] + counts[2];
    assert!(counts[1] > 2_500.0 && (5.0..=30.0).contains(&counts[2]), "{counts:?}");
    assert!((3_000.0..=3_150.0).contains(&failed), "{counts:?}");
    assert_eq!((counts[3], deferred_p95), (0.0, None));
    assert_eq!(answered_hist, counts[0], "the CDF is of the answered requests only");

    // A retry queue every 5 min: the same refusals and failures become deferred work, done
    // within the next cycles, with its delay reported.
    let out = dir.path().join("queued");
    let file = ending_scenario(dir.path(), "kind = \"retry_queue\"\ncycle = \"5m\"");
    breakerlab(dir.path()).args(["run", "--no-charts", "--out"]).arg(&out).arg(&file).assert().success();
    let (shares, requests, _, deferred_p95, counts, answered_hist) = endings(&out);
    assert_eq!(counts.iter().sum::<f64>(), requests);
    assert_eq!((counts[1], counts[2]), (0.0, 0.0), "{counts:?}");
    assert!((3_000.0..=3_150.0).contains(&counts[3]), "{counts:?}");
    assert!((shares[3] - counts[3] / requests).abs() < 1e-9);
    let p95 = deferred_p95.expect("deferred work has a delay");
    assert!(p95 > 0.0 && p95 <= 20.0 * 60.0, "deferred p95 {p95} s");
    assert_eq!(answered_hist, counts[0]);
}
