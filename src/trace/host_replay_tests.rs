//! Per-call logs replayed onto a pool of hosts (`[trace] host_column`, Envoy's
//! `upstream_host`): the host each call goes to, ejection times, answers drawn from the other
//! hosts, per-host ground truth, and the refusals of bad host columns.

use crate::outcome::OutcomeClass;
use crate::policy::State;
use crate::scenario::Scenario;
use crate::sim::{RunOptions, RunResult, Workload, run};
use crate::time::{Dur, SimTime};
use std::path::Path;

const S: u64 = 1_000_000;

/// Three hosts (`h-a`, `h-b`, `h-c`, logged in the order c, a, b so numbering by value shows),
/// a call every 100 ms in turn for 60 s; `h-b` answers 503 after 10 ms from 20 s to 40 s, every
/// other call 200 after 20 ms. Call `i` is at `i` × 100 ms on host `[c, a, b][i % 3]`.
fn three_hosts() -> String {
    let mut log = String::from("ts_ms,host,latency_ms,status\n");
    for i in 0..600u64 {
        let host = ["h-c", "h-a", "h-b"][(i % 3) as usize];
        let failing = host == "h-b" && (200..400).contains(&i);
        let (latency, status) = if failing { (10, 503) } else { (20, 200) };
        log.push_str(&format!("{},{host},{latency},{status}\n", 1_700_000_000_000 + i * 100));
    }
    log
}

fn scenario(dir: &Path, log: &str, extra: &str) -> Result<Scenario, crate::scenario::InputError> {
    std::fs::write(dir.join("calls.csv"), log).unwrap();
    let text = format!("[trace]\nfile = \"calls.csv\"\n{extra}");
    crate::scenario::parse(&dir.join("s.toml"), &text)
}

fn run_with(s: &Scenario, preset: &str, sets: &[(&str, toml::Value)]) -> RunResult {
    let sets: Vec<(String, toml::Value)> = sets.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let policy = s.resolve_policy(&s.policy_spec(Some(preset), &sets)).unwrap();
    let w = Workload::build(s, s.seed, 0).unwrap();
    run(s, &w, &policy, &RunOptions { timeline_bin: None, explain: false })
}

fn ejections(r: &RunResult) -> Vec<(u64, usize)> {
    r.record
        .transitions
        .iter()
        .filter(|(_, t)| t.to == State::Open)
        .map(|(i, t)| (t.at.micros(), *i))
        .collect()
}

const FIVE: [(&str, i64); 2] = [("consecutive_5xx", 5), ("max_ejection_percent", 100)];

fn five() -> Vec<(&'static str, toml::Value)> {
    FIVE.iter().map(|(k, v)| (*k, toml::Value::Integer(*v))).collect()
}

#[test]
fn a_failing_host_is_ejected_at_its_fifth_logged_failure_and_its_calls_go_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let slo = "host_column = \"host\"\nslo = \"error_rate > 50% for 2s\"\nslo_interval = \"1s\"\n";
    let s = scenario(dir.path(), &three_hosts(), slo).unwrap();
    let crate::scenario::Source::Trace { trace: crate::trace::Trace::Calls(log), truth, .. } = &s.source
    else {
        panic!("a per-call trace")
    };
    let hosts = log.hosts().expect("the log names hosts");
    assert_eq!(hosts.names, ["h-a", "h-b", "h-c"], "numbered by sorted value, not first seen");
    assert_eq!((log.host_of(0), log.host_of(2)), (Some(2), Some(1)));
    // Per-host truth: only h-b breaks the rule, from its first failure's second to its last's.
    assert_eq!(hosts.windows.len(), 1);
    assert_eq!(
        (hosts.windows[0].start, hosts.windows[0].end, &hosts.windows[0].hosts),
        (SimTime(20 * S), SimTime(40 * S), &vec![1])
    );
    let truth = truth.as_ref().unwrap();
    assert_eq!((truth.len(), truth[0].kind.as_str()), (1, "h-b:slo"));

    let r = run_with(&s, "envoy-outlier", &five());
    // h-b's calls from 20 s: 20.0, 20.3, 20.6, 20.9 and 21.2 s; the fifth's 503 comes back 10 ms
    // later and ejects it (instance = client 0 × 3 hosts + host 1).
    assert_eq!(ejections(&r), vec![(21_210_000, 1)]);
    let c = &r.record.counters;
    assert_eq!((c.requests, c.attempts), (600, 600));
    assert_eq!(c.attempt_failures, 5, "only the five failures before the ejection reach the client");
    let p = r.metrics.pool.as_ref().unwrap();
    assert_eq!((p.ejections, p.bad_host_requests, p.false_ejections, p.ejections_missed), (1, 5, 0, 0));
    assert_eq!(p.eject_delay_mean_s, Some(1.21));

    // The redirected calls draw their answers from the other hosts' calls nearest in time, the
    // same whichever configuration asks (common random numbers); a first attempt to its
    // logged host gets the logged answer.
    let w = Workload::build(&s, s.seed, 0).unwrap();
    let at = SimTime(21_500_000); // call 215, h-b's
    let (answer, code) = w.host_answer(0, 215, 1, at);
    assert_eq!((answer.class, answer.latency, code), (OutcomeClass::Ok, Dur::from_millis(20), 200));
    assert_eq!(w.host_answer(0, 215, 1, at), (answer, code));
    let (logged, code) = w.host_answer(1, 215, 1, at);
    assert_eq!((logged.class, logged.latency, code), (OutcomeClass::Error, Dur::from_millis(10), 500));
    // A retry to h-b itself draws from h-b's own calls: all failing at 30 s.
    assert_eq!(w.host_answer(1, 300, 2, SimTime(30 * S)).0.class, OutcomeClass::Error);
    assert_eq!(w.host_answer(1, 300, 2, SimTime(50 * S)).0.class, OutcomeClass::Ok);
}

#[test]
fn a_pool_replay_that_ejects_nothing_reproduces_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &three_hosts(), "host_column = \"host\"\n").unwrap();
    let never = [("consecutive_5xx", toml::Value::Integer(1_000)), ("max_ejection_percent", 100.into())];
    let r = run_with(&s, "envoy-outlier", &never);
    assert!(ejections(&r).is_empty());
    let c = &r.record.counters;
    assert_eq!((c.requests, c.attempts, c.attempt_failures), (600, 600, 67), "h-b's 67 logged 503s");
    assert_eq!(r.metrics.latency_p50_ms.map(|v| v.round()), Some(20.0));
    // The same log without its host column: one dependency, the same answers.
    let plain = scenario(dir.path(), &three_hosts(), "").unwrap();
    let one = run_with(&plain, "consecutive", &[("failure_threshold", 1_000.into())]);
    assert_eq!(one.record.counters.attempt_failures, 67);
    assert!(one.metrics.pool.is_none());
}

/// An Envoy access log (default format) of `calls` calls over three upstream hosts, the second
/// failing from call 100 to call 200; `host` replaces every upstream host when given.
fn envoy_log(host: Option<&str>) -> String {
    let mut out = String::new();
    for i in 0..300u64 {
        let h = i % 3;
        let (code, ms) = if h == 1 && (100..200).contains(&i) { (503, 10) } else { (200, 20) };
        let upstream = host.map_or_else(|| format!("10.0.0.{}:8080", h + 1), str::to_string);
        out.push_str(&format!(
            "[2024-06-01T12:00:{:02}.{:03}Z] \"GET /api HTTP/1.1\" {code} - 0 10 {ms} {ms} \"-\" \"curl\" \"r{i}\" \"api\" \"{upstream}\"\n",
            i / 10,
            (i % 10) * 100
        ));
    }
    out
}

#[test]
fn envoy_upstream_hosts_are_used_by_outlier_detectors_only() {
    let dir = tempfile::tempdir().unwrap();
    let load = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        crate::scenario::parse(&dir.path().join("s.toml"), &format!("[trace]\nfile = \"{name}\"\n")).unwrap()
    };
    let hosts = load("hosts.log", &envoy_log(None));
    let none = load("none.log", &envoy_log(Some("-")));
    let names = |s: &Scenario| match &s.source {
        crate::scenario::Source::Trace { trace: crate::trace::Trace::Calls(log), .. } => {
            log.hosts().map(|h| h.names.clone())
        }
        _ => None,
    };
    assert_eq!(names(&hosts).unwrap(), ["10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080"]);
    assert_eq!(names(&none), None, "a log without upstream hosts replays as one dependency");
    // A breaker replays the log as one dependency, hosts or not: the same run.
    let sets = [("failure_threshold", toml::Value::Integer(3))];
    let (a, b) = (run_with(&hosts, "consecutive", &sets), run_with(&none, "consecutive", &sets));
    assert!(a.metrics.pool.is_none());
    assert_eq!(format!("{:?}", a.record.counters), format!("{:?}", b.record.counters));
    assert_eq!(a.record.transitions, b.record.transitions);
    // An outlier detector runs the hosts as a pool: the second host leaves at its fifth 503
    // (calls 100, 103, 106, 109, 112: 11.2 s, answered 10 ms later).
    let r = run_with(&hosts, "envoy-outlier", &five());
    assert_eq!(ejections(&r), vec![(11_210_000, 1)]);
    assert_eq!(r.record.counters.attempt_failures, 5);
}

#[test]
fn bad_host_columns_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let err = |log: &str, extra: &str| scenario(dir.path(), log, extra).unwrap_err().to_string();
    let e = err(&three_hosts(), "host_column = \"pod\"\n");
    assert!(
        e.contains("calls.csv: option `host_column` names column `pod`, which is not in the header")
            && e.contains("s.toml:1:1"),
        "{e}"
    );
    let empty = three_hosts().replacen(",h-a,", ",,", 1);
    let e = err(&empty, "host_column = \"host\"\n");
    assert!(e.contains("calls.csv: line 3, column `host`: expected a host name"), "{e}");
    let dash = three_hosts().replacen(",h-b,", ",-,", 1);
    assert!(err(&dash, "host_column = \"host\"\n").contains("calls.csv: line 4, column `host`"));
    let mut many = String::from("ts_ms,host,latency_ms,status\n");
    for i in 0..1_001 {
        many.push_str(&format!("{},h{i},5,200\n", 1_000 + i));
    }
    let e = err(&many, "host_column = \"host\"\n");
    assert!(e.contains("calls.csv: line 1002, column `host`: \"h1000\" would be host 1001"), "{e}");
    // Under skip_bad_rows, a row without a host is skipped and counted like any bad row.
    let s = scenario(dir.path(), &empty, "host_column = \"host\"\nskip_bad_rows = true\n").unwrap();
    assert_eq!(s.import_report().unwrap().bad_rows_skipped, 1);
}

#[test]
fn an_unsorted_log_keeps_each_calls_host() {
    let dir = tempfile::tempdir().unwrap();
    let log = "ts_ms,pod,latency_ms,status\n2000,b,7,503\n1000,a,5,200\n3000,a,9,200\n";
    let s = scenario(dir.path(), log, "host_column = \"pod\"\n").unwrap();
    let crate::scenario::Source::Trace { trace: crate::trace::Trace::Calls(log), .. } = &s.source else {
        panic!("a per-call trace")
    };
    let hosts: Vec<Option<u16>> = (0..3).map(|i| log.host_of(i)).collect();
    assert_eq!(hosts, [Some(0), Some(1), Some(0)]);
    assert_eq!(log.first_answer(1).class, OutcomeClass::Error);
    assert_eq!(
        log.answer_near_host(1, SimTime(0), &mut crate::rng::rng_from_seed(1)).latency,
        Dur::from_millis(7)
    );
}

#[test]
fn a_replay_takes_its_balancer_from_upstream_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = "host_column = \"host\"\n[upstream]\nbalancer = \"least_request\"\nchoice_count = 3\n";
    let s = scenario(dir.path(), &three_hosts(), hosts).unwrap();
    let w = Workload::build(&s, s.seed, 0).unwrap();
    let b = w.pool().unwrap().balancer;
    assert_eq!((b.kind.as_str(), b.choice_count), ("least_request", 3));
    let e =
        scenario(dir.path(), &three_hosts(), "[upstream]\nbalancer = \"random\"\n").unwrap_err().to_string();
    assert!(e.contains("s.toml:3:1") && e.contains("give [trace] host_column"), "{e}");
    let e = scenario(dir.path(), &three_hosts(), "host_column = \"host\"\n[upstream]\nchoice_count = 3\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("`choice_count` applies to balancer = \"least_request\""), "{e}");
    let e = scenario(dir.path(), &three_hosts(), "host_column = \"host\"\n[upstream]\np50 = \"5ms\"\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes only [upstream] balancer, choice_count and hash_keys"), "{e}");
}

#[test]
fn spans_name_their_host_by_server_address_and_port() {
    let dir = tempfile::tempdir().unwrap();
    let span = |t: u64, host: &str, port: &str| {
        format!(
            r#"{{"name":"GET /cart","kind":3,"startTimeUnixNano":"{t}","endTimeUnixNano":"{}","attributes":[{{"key":"server.address","value":{{"stringValue":"{host}"}}}}{port}],"status":{{}}}}"#,
            t + 5_000_000
        )
    };
    let port = r#",{"key":"server.port","value":{"intValue":"7070"}}"#;
    let spans = [
        span(1_700_000_000_000_000_000, "cart-1", port),
        span(1_700_000_001_000_000_000, "cart-0", port),
        span(1_700_000_002_000_000_000, "cart-1", ""),
    ];
    let doc = format!(
        r#"{{"resourceSpans":[{{"resource":{{"attributes":[]}},"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
        spans.join(",")
    );
    std::fs::write(dir.path().join("spans.json"), doc).unwrap();
    let t =
        crate::trace::load(&dir.path().join("spans.json"), &crate::trace::TraceOptions::default()).unwrap();
    let crate::trace::Trace::Calls(log) = t else { panic!("a per-call trace") };
    let hosts = log.hosts().unwrap();
    assert_eq!(hosts.names, ["cart-0:7070", "cart-1", "cart-1:7070"]);
    assert!(!hosts.explicit, "found in the format, not named");
    assert_eq!((0..3).map(|i| log.host_of(i).unwrap()).collect::<Vec<_>>(), [2, 0, 1]);
    // A named field that a span lacks is refused, located.
    let named = crate::trace::TraceOptions { host_column: Some("k8s.pod.name".into()), ..Default::default() };
    let e = crate::trace::load(&dir.path().join("spans.json"), &named).unwrap_err().to_string();
    assert!(e.contains("resourceSpans[0].scopeSpans[0].spans[0]: no host (field `k8s.pod.name`)"), "{e}");
}
