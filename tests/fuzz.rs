//! Property tests for hostile input: every parser is fed mutated copies of the bundled, valid
//! inputs (scenarios, sweep files, scripts, traces in each format, label files, SLO rules,
//! `--where` filters, `--set` values), with extreme values spliced in. Whatever the input, a
//! command must return `Ok` or a typed input error (exit 2), write nothing when it refuses, and
//! never panic or abort; an accepted run must stay within the limits its estimate was checked
//! against. `cargo test` runs a few dozen cases per parser; `BREAKERLAB_FUZZ_CASES=N` runs N.

use breakerlab::Scenario;
use breakerlab::app::Limits;
use breakerlab::app::replay::{ReplayRequest, replay};
use breakerlab::app::run::{Input, RunRequest, RunSettings, run, run_scenario};
use breakerlab::app::sweep::{SweepRequest, sweep};
use breakerlab::trace::SloRule;
use breakerlab::trace::spans::Filter;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use std::path::{Path, PathBuf};

/// Values that break naive parsers: zero, negatives, overflow of every integer width, float
/// edge cases, empty and wrong-typed TOML values, absurd durations and percentages.
const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e-320",
    "nan",
    "inf",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "0.0000001",
    "\"\"",
    "[]",
    "{}",
    "true",
    "\"1us\"",
    "\"99999999999h\"",
    "\"-5s\"",
    "1000%",
    "-5%",
    "\u{0}",
    "\"\u{feff}\"",
];

/// Calls a fuzzed run may simulate: enough for the small inputs to run whole, small enough that
/// `cargo test` stays fast (bigger estimates are refused before anything runs, which is itself
/// a property under test).
const FUZZ_LIMITS: Limits = Limits { max_memory: 512 << 20, max_calls: 200_000, max_events: 2_000_000 };

/// One edit of an input's bytes; indices wrap around the input's length.
#[derive(Clone, Debug)]
enum Mutation {
    /// Overwrites one byte.
    Byte(usize, u8),
    /// Removes a run of up to 16 bytes.
    Delete(usize, usize),
    /// Replaces the n-th number in the text with an extreme value.
    Number(usize, &'static str),
    /// Multiplies the n-th number by ten to the given power (the text stays well-formed).
    Scale(usize, i32),
    /// Inserts an extreme value.
    Insert(usize, &'static str),
    /// Repeats the n-th line.
    DuplicateLine(usize),
    /// Removes the n-th line.
    DropLine(usize),
    /// Cuts the input short.
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let extreme = prop::sample::select(EXTREMES);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        (any::<usize>(), 1..16usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), extreme.clone()).prop_map(|(i, v)| Mutation::Number(i, v)),
        (any::<usize>(), -6..13i32).prop_map(|(i, k)| Mutation::Scale(i, k)),
        (any::<usize>(), -6..13i32).prop_map(|(i, k)| Mutation::Scale(i, k)),
        (any::<usize>(), extreme).prop_map(|(i, v)| Mutation::Insert(i, v)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::DropLine),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Up to three edits, applied in order.
fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..4)
}

/// Byte ranges of the numbers in `text` (digits with an optional sign, fraction and exponent).
fn numbers(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = if i > 0 && text[i - 1] == b'-' { i - 1 } else { i };
            while i < text.len() && (text[i].is_ascii_digit() || matches!(text[i], b'.' | b'e' | b'E')) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn lines(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.iter().enumerate() {
        if *b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// Numbers the cases of a property (their files and output folders).
#[derive(Default)]
struct Counter(std::sync::atomic::AtomicUsize);

impl Counter {
    fn next(&self) -> usize {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// `text` with the edits applied.
fn mutate(text: &[u8], edits: &[Mutation]) -> Vec<u8> {
    let mut t = text.to_vec();
    for edit in edits {
        if t.is_empty() {
            break;
        }
        let at = |i: usize, t: &Vec<u8>| i % t.len();
        match edit {
            Mutation::Byte(i, b) => {
                let i = at(*i, &t);
                t[i] = *b;
            }
            Mutation::Delete(i, n) => {
                let i = at(*i, &t);
                let end = (i + n).min(t.len());
                t.drain(i..end);
            }
            Mutation::Number(i, v) => {
                let found = numbers(&t);
                if let Some(&(s, e)) = found.get(i % found.len().max(1)) {
                    t.splice(s..e, v.bytes());
                }
            }
            Mutation::Scale(i, k) => {
                let found = numbers(&t);
                if let Some(&(s, e)) = found.get(i % found.len().max(1)) {
                    let scaled = std::str::from_utf8(&t[s..e])
                        .ok()
                        .and_then(|n| n.parse::<f64>().ok())
                        .map(|v| format!("{}", v * 10f64.powi(*k)));
                    if let Some(scaled) = scaled {
                        t.splice(s..e, scaled.into_bytes());
                    }
                }
            }
            Mutation::Insert(i, v) => {
                let i = at(*i, &t);
                t.splice(i..i, v.bytes());
            }
            Mutation::DuplicateLine(i) => {
                let ls = lines(&t);
                let (s, e) = ls[i % ls.len()];
                let line = t[s..e].to_vec();
                t.splice(e..e, line);
            }
            Mutation::DropLine(i) => {
                let ls = lines(&t);
                let (s, e) = ls[i % ls.len()];
                t.drain(s..e);
            }
            Mutation::Truncate(i) => {
                let i = at(*i, &t);
                t.truncate(i);
            }
        }
    }
    t
}

/// The repository's root (bundled inputs are read from there, never written).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Cases per property: a few dozen under `cargo test`, `BREAKERLAB_FUZZ_CASES` for a long run.
/// The cases are drawn from a fixed seed, so `cargo test` (and CI) runs the same cases every
/// time; `BREAKERLAB_FUZZ_SEED=N` draws another fixed set, `BREAKERLAB_FUZZ_SEED=random` a fresh
/// one (the failure message then names the case; rerun it with the seed printed below).
fn runner() -> TestRunner {
    let cases = std::env::var("BREAKERLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let seed = match std::env::var("BREAKERLAB_FUZZ_SEED").as_deref() {
        Ok("random") => rand_seed(),
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("BREAKERLAB_FUZZ_SEED={text}: expected a number or `random`")),
        Err(_) => DEFAULT_SEED,
    };
    eprintln!("fuzz cases drawn from BREAKERLAB_FUZZ_SEED={seed}");
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..Config::default()
    })
}

/// The seed `cargo test` draws its cases from.
const DEFAULT_SEED: u64 = 20_261_203;

/// A seed from the clock, for `BREAKERLAB_FUZZ_SEED=random`.
fn rand_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.as_secs() ^ u64::from(now.subsec_nanos())
}

/// The bundled files under `dir` whose names end in `ext`, sorted.
fn bundled(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {ext} files in {dir}");
    files
}

/// A command's result is acceptable: `Ok` within the limits, or an input error (exit 2)
/// that left no output folder behind.
fn acceptable(result: breakerlab::Result<u64>, out: &Path, what: &str) -> Result<(), TestCaseError> {
    match result {
        Ok(attempts) => {
            // Poisson draws may exceed the expected count the estimate uses, not twice over.
            prop_assert!(
                attempts <= 2 * FUZZ_LIMITS.max_calls,
                "{what}: accepted, then simulated {attempts} calls against a limit of {}",
                FUZZ_LIMITS.max_calls
            );
            Ok(())
        }
        Err(e) => {
            prop_assert_eq!(e.exit_code(), 2, "{}: not an input error: {}", what, e);
            prop_assert!(!out.exists(), "{what}: refused ({e}) but wrote {}", out.display());
            Ok(())
        }
    }
}

fn settings(out: &Path) -> RunSettings {
    RunSettings { out: Some(out.to_path_buf()), limits: FUZZ_LIMITS, replicates: 1, ..RunSettings::default() }
}

/// Attempts simulated by every replicate of a run.
fn attempts(report: &breakerlab::app::run::RunReport) -> u64 {
    report.replicates.iter().map(|m| m.attempts).sum()
}

#[test]
fn mutated_scenarios_run_or_are_refused() {
    let mut seeds = bundled("scenarios", ".toml");
    seeds.extend(bundled("tests/hostile", ".toml"));
    let texts: Vec<(PathBuf, Vec<u8>)> =
        seeds.into_iter().map(|p| (p.clone(), std::fs::read(p).unwrap())).collect();
    let dir = tempfile::tempdir().unwrap();
    let n = Counter::default();
    runner()
        .run(&(0..texts.len(), mutations()), |(i, edits)| {
            let (path, text) = &texts[i];
            let text = String::from_utf8_lossy(&mutate(text, &edits)).into_owned();
            let n = n.next();
            let out = dir.path().join(format!("out{n}"));
            // Parsed as if at the original path, so its relative trace and script paths resolve.
            let result = Scenario::parse(path, &text)
                .map_err(breakerlab::Error::from)
                .and_then(|s| run_scenario(s, &settings(&out)))
                .map(|r| attempts(&r));
            acceptable(result, &out, &format!("{} edited by {edits:?}", path.display()))
        })
        .unwrap();
}

#[test]
fn mutated_scripts_run_or_are_refused() {
    let seeds = bundled("scenarios/scripted", ".csv");
    let texts: Vec<Vec<u8>> = seeds.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let n = Counter::default();
    runner()
        .run(&(0..texts.len(), mutations()), |(i, edits)| {
            let n = n.next();
            let script = dir.path().join(format!("script{n}.csv"));
            std::fs::write(&script, mutate(&texts[i], &edits)).unwrap();
            let out = dir.path().join(format!("out{n}"));
            let req = RunRequest { input: Input::Script(script), settings: settings(&out) };
            acceptable(
                run(&req).map(|r| attempts(&r)),
                &out,
                &format!("{} edited by {edits:?}", seeds[i].display()),
            )
        })
        .unwrap();
}

/// One replay of a bundled trace: the file mutated, the flags its README example uses.
struct TraceCase {
    /// The bundled file, relative to the repository's root.
    file: &'static str,
    /// Builds the request for the mutated copy at the given path.
    request: fn(PathBuf) -> ReplayRequest,
}

fn spans(trace: PathBuf, filters: &[&str], slo: &str, interval: &str) -> ReplayRequest {
    ReplayRequest {
        trace: Some(trace),
        filters: filters.iter().map(|s| s.to_string()).collect(),
        slo: Some(slo.into()),
        trace_sets: vec![format!("slo_interval={interval}")],
        ..ReplayRequest::default()
    }
}

fn series(roles: &[(&str, &str)], file: &Path, slo: &str) -> ReplayRequest {
    ReplayRequest {
        series: roles.iter().map(|(role, sel)| format!("{role}={}@{sel}", file.display())).collect(),
        slo: Some(slo.into()),
        ..ReplayRequest::default()
    }
}

const SLO: &str = "p95 > 2s or error_rate > 5% for 3m";

const TRACES: &[TraceCase] = &[
    TraceCase {
        file: "scenarios/traces/nezha-2022-08-23/front_service.csv",
        request: |t| ReplayRequest { trace: Some(t), rate: Some(1.0), ..ReplayRequest::default() },
    },
    TraceCase {
        file: "tests/hostile/small.csv",
        request: |t| ReplayRequest {
            trace: Some(t),
            slo: Some("p95 > 300ms for 2m".into()),
            ..ReplayRequest::default()
        },
    },
    TraceCase {
        file: "scenarios/traces/formats/otlp.json",
        request: |t| spans(t, &["service=front*", "kind=client"], "error_rate > 50% for 20s", "10s"),
    },
    TraceCase {
        file: "scenarios/traces/formats/jaeger.json",
        request: |t| spans(t, &["service=redis", "kind=client"], "error_rate > 50% for 20s", "10s"),
    },
    TraceCase {
        file: "scenarios/traces/formats/envoy-access.log",
        request: |t| spans(t, &["service=currencyservice*"], "error_rate > 50% for 20s", "10s"),
    },
    TraceCase {
        file: "scenarios/traces/formats/shop.har",
        request: |t| spans(t, &["service=api.*"], "error_rate > 50% for 15s", "15s"),
    },
    TraceCase {
        file: "scenarios/traces/formats/grafana.csv",
        request: |t| {
            series(&[("p95:s", "p95"), ("error_rate", "error ratio"), ("rate", "requests/s")], &t, SLO)
        },
    },
    TraceCase {
        file: "scenarios/traces/formats/cloudwatch.json",
        request: |t| series(&[("p95:s", "p95"), ("errors", "errors"), ("requests", "RequestCount")], &t, SLO),
    },
    TraceCase {
        file: "scenarios/traces/formats/datadog.json",
        request: |t| {
            let roles = [
                ("p95", "trace.http.request.duration"),
                ("errors", "trace.http.request.errors"),
                ("requests", "trace.http.request.hits"),
            ];
            series(&roles, &t, SLO)
        },
    },
    TraceCase {
        file: "scenarios/traces/formats/prometheus-p95.json",
        request: |t| ReplayRequest {
            series: vec![format!("p95:s={}", t.display())],
            behaviour: None,
            slo: Some("p95 > 2s for 3m".into()),
            rate: Some(1.0),
            ..ReplayRequest::default()
        },
    },
];

#[test]
fn mutated_traces_replay_or_are_refused() {
    let texts: Vec<Vec<u8>> = TRACES.iter().map(|c| std::fs::read(root().join(c.file)).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let n = Counter::default();
    runner()
        .run(&(0..TRACES.len(), mutations()), |(i, edits)| {
            let n = n.next();
            let case = &TRACES[i];
            let name = Path::new(case.file).file_name().unwrap();
            let folder = dir.path().join(format!("in{n}"));
            std::fs::create_dir(&folder).unwrap();
            let trace = folder.join(name);
            std::fs::write(&trace, mutate(&texts[i], &edits)).unwrap();
            let out = dir.path().join(format!("out{n}"));
            let mut req = (case.request)(trace);
            req.run = settings(&out);
            acceptable(
                replay(&req).map(|r| attempts(&r)),
                &out,
                &format!("{} edited by {edits:?}", case.file),
            )
        })
        .unwrap();
}

#[test]
fn mutated_label_files_replay_or_are_refused() {
    let cases = [(
        "scenarios/traces/nezha-2022-08-23/front_service.csv",
        "scenarios/traces/nezha-2022-08-23/2022-08-23-fault_list.json",
    )];
    let texts: Vec<Vec<u8>> = cases.iter().map(|(_, l)| std::fs::read(root().join(l)).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let n = Counter::default();
    runner()
        .run(&(0..cases.len(), mutations()), |(i, edits)| {
            let n = n.next();
            let labels = dir.path().join(format!("labels{n}.json"));
            std::fs::write(&labels, mutate(&texts[i], &edits)).unwrap();
            let out = dir.path().join(format!("out{n}"));
            let req = ReplayRequest {
                trace: Some(root().join(cases[i].0)),
                labels: Some(labels),
                fault_duration: Some(breakerlab::Dur::from_secs(180)),
                rate: Some(1.0),
                run: settings(&out),
                ..ReplayRequest::default()
            };
            acceptable(
                replay(&req).map(|r| attempts(&r)),
                &out,
                &format!("{} edited by {edits:?}", cases[i].1),
            )
        })
        .unwrap();
}

/// A sweep file small enough to run under the fuzz limits, in a folder beside links to the
/// bundled scenarios so its relative paths resolve.
const SMALL_SWEEP: &str = r#"name = "fuzz"
scenarios = ["../blip.toml", "../hang.toml"]
replicates = 1
seed = 7
constraints = ["missed_incidents <= 0.5"]
pareto = [["detection_delay_mean_s", "false_opens"]]

[[policies]]
preset = "consecutive"
grid = { failure_threshold = [3, 5], open_duration = { from = "5s", to = "60s", steps = 2, scale = "log" } }

[[policies]]
preset = "windowed"
"#;

#[test]
fn mutated_sweep_files_run_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for scenario in bundled("scenarios", ".toml") {
        std::os::unix::fs::symlink(&scenario, dir.path().join(scenario.file_name().unwrap())).unwrap();
    }
    let sweeps = dir.path().join("sweeps");
    std::fs::create_dir(&sweeps).unwrap();
    let texts = [
        SMALL_SWEEP.as_bytes().to_vec(),
        std::fs::read(root().join("scenarios/sweeps/default.toml")).unwrap(),
    ];
    let n = Counter::default();
    runner()
        .run(&(0..texts.len(), mutations()), |(i, edits)| {
            let n = n.next();
            let file = sweeps.join(format!("sweep{n}.toml"));
            std::fs::write(&file, mutate(&texts[i], &edits)).unwrap();
            let out = dir.path().join(format!("out{n}"));
            let req = SweepRequest {
                file: Some(file),
                threads: Some(1),
                out: Some(out.clone()),
                quiet: true,
                charts: false,
                command_line: String::new(),
                limits: FUZZ_LIMITS,
                ..SweepRequest::default()
            };
            let result = sweep(&req).map(|_| 0);
            acceptable(result, &out, &format!("sweep {i} edited by {edits:?}"))
        })
        .unwrap();
}

/// Texts built from a rule's or flag's vocabulary and extreme values, and mutated valid ones.
fn words(vocabulary: &'static [&'static str]) -> impl Strategy<Value = String> {
    let word = prop_oneof![prop::sample::select(vocabulary), prop::sample::select(EXTREMES)];
    prop::collection::vec(word, 0..8).prop_map(|w| w.join(" "))
}

#[test]
fn slo_rules_parse_or_are_refused() {
    const VOCABULARY: &[&str] = &[
        "p50",
        "p95",
        "p99",
        "error_rate",
        "success_rate",
        "requests",
        ">",
        "<",
        ">=",
        "or",
        "and",
        "for",
        "2s",
        "5%",
        "3m",
        "0.2",
        "80%",
        "8s",
    ];
    let valid = ["error_rate > 0.2 or p95 > 8s for 3m", "success_rate < 80% or p95 > 8s for 2m"];
    runner()
        .run(&(words(VOCABULARY), 0..valid.len(), mutations()), |(text, i, edits)| {
            // Parsing either way must return, never panic; a refusal is a typed trace error.
            let _ = SloRule::parse(&text);
            let mutated = String::from_utf8_lossy(&mutate(valid[i].as_bytes(), &edits)).into_owned();
            let _ = SloRule::parse(&mutated);
            Ok(())
        })
        .unwrap();
}

#[test]
fn where_filters_parse_or_are_refused() {
    const VOCABULARY: &[&str] =
        &["service", "kind", "operation", "=", "*", "?", "[", "]", "front*", "client", "a=b"];
    runner()
        .run(&prop::collection::vec(words(VOCABULARY), 0..4), |texts| {
            let _ = Filter::parse(&texts);
            Ok(())
        })
        .unwrap();
}

#[test]
fn set_values_run_or_are_refused() {
    const KEYS: &[&str] = &[
        "failure_threshold",
        "open_duration",
        "window",
        "min_calls",
        "failure_rate",
        "half_open_max_calls",
        "success_threshold",
        "slow_call_duration",
        "buckets",
        "unknown_key",
    ];
    let scenario = root().join("scenarios/scripted-outage.toml");
    let dir = tempfile::tempdir().unwrap();
    let n = Counter::default();
    let set = (
        prop::sample::select(KEYS),
        prop_oneof![prop::sample::select(EXTREMES).prop_map(String::from), "[0-9a-z%.]{0,8}"],
    );
    runner()
        .run(
            &(
                prop::collection::vec(set, 1..3),
                prop::sample::select(&["consecutive", "windowed", "resilience4j"][..]),
            ),
            |(sets, policy)| {
                let n = n.next();
                let out = dir.path().join(format!("out{n}"));
                let req = RunRequest {
                    input: Input::Scenario(scenario.clone()),
                    settings: RunSettings {
                        policy: Some(policy.to_string()),
                        sets: sets.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                        ..settings(&out)
                    },
                };
                acceptable(
                    run(&req).map(|r| attempts(&r)),
                    &out,
                    &format!("--policy {policy} --set {sets:?}"),
                )
            },
        )
        .unwrap();
}

#[test]
fn mutation_reaches_numbers_and_lines() {
    // The mutator itself: a number is replaced, a line dropped and repeated, as the names say.
    let text = b"a = 12\nb = -3.5e2\n";
    assert_eq!(mutate(text, &[Mutation::Number(1, "inf")]), b"a = 12\nb = inf\n");
    assert_eq!(mutate(text, &[Mutation::Scale(0, 3)]), b"a = 12000\nb = -3.5e2\n");
    assert_eq!(mutate(text, &[Mutation::DropLine(0)]), b"b = -3.5e2\n");
    assert_eq!(mutate(text, &[Mutation::DuplicateLine(2)]), b"a = 12\na = 12\nb = -3.5e2\n");
    assert_eq!(mutate(text, &[Mutation::Truncate(3)]), b"a =");
}
