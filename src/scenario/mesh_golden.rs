//! The golden service-mesh scenarios (scenarios/mesh-*.toml), each reproducing a reported
//! issue with its figure asserted, and the pool's behaviour end to end (balancer, detector,
//! panic, scores, bad input). See docs/service-mesh.md for what each shows.

use crate::policy::State;
use crate::scenario::Scenario;
use crate::sim::{RunOptions, RunResult, Workload, run};
use crate::time::{Dur, SimTime};
use std::path::{Path, PathBuf};

const S: u64 = 1_000_000;

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name)
}

/// Runs scenario file `name` under its own policy with `sets` on top (and `--explain`).
fn run_file(name: &str, sets: &[(&str, toml::Value)]) -> RunResult {
    let scenario = crate::scenario::load(&path(name)).expect("valid scenario");
    run_scenario(&scenario, sets)
}

fn run_scenario(scenario: &Scenario, sets: &[(&str, toml::Value)]) -> RunResult {
    let owned: Vec<(String, toml::Value)> = sets.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let policy = scenario.resolve_policy(&scenario.policy_spec(None, &owned)).expect("valid policy");
    let workload = Workload::build(scenario, scenario.seed, 0).expect("workload");
    run(scenario, &workload, &policy, &RunOptions { timeline_bin: None, explain: true })
}

/// Each ejection `(µs, instance)` and return, in order.
fn changes(r: &RunResult, to: State) -> Vec<(u64, usize)> {
    r.record.transitions.iter().filter(|(_, t)| t.to == to).map(|(i, t)| (t.at.micros(), *i)).collect()
}

fn pool(r: &RunResult) -> &crate::metrics::pool::PoolScores {
    r.metrics.pool.as_ref().expect("a pool scenario has pool scores")
}

#[test]
fn istio_45128_pods_leave_one_at_a_time_after_13_errors_across_the_pool() {
    // One request a second, every pod failing from 60 s: round robin gives each pod every third
    // error, so the first pod's fifth error is the pool's 13th (request 72 s, answered 20 ms
    // later), the other two follow at the 14th and 15th.
    let r = run_file("mesh-istio-45128.toml", &[]);
    let ejections = changes(&r, State::Open);
    assert_eq!(&ejections[..3], &[(72_020_000, 2), (73_020_000, 1), (74_020_000, 0)]);
    let errors_before_first = (ejections[0].0 - 60 * S) / S + 1;
    assert_eq!(errors_before_first, 13);
    // The ejected pod had seen 5 of them in a row.
    let seen = r.record.evidence[0].items().iter().find(|i| i.name == "consecutive_5xx_seen").unwrap().value;
    assert_eq!(seen, 5.0);
    // With one bad pod, it is ejected after about 15 requests (its fifth error).
    let text = std::fs::read_to_string(path("mesh-istio-45128.toml")).unwrap();
    let one_pod = text.replace("latency = \"20ms\"\nexpect", "latency = \"20ms\"\nhosts = [1]\nexpect");
    let scenario = crate::scenario::parse(&path("mesh-istio-45128.toml"), &one_pod).unwrap();
    let one = run_scenario(&scenario, &[]);
    let first = changes(&one, State::Open)[0];
    assert_eq!(first.1, 1, "the bad pod");
    let requests = (first.0 - 60 * S) / S + 1;
    assert!((13..=15).contains(&requests), "{requests} requests to eject the bad pod");
    assert_eq!(pool(&one).false_ejections, 0);
    // Envoy 1.28 with the default max_ejection_percent 10: three pods can never lose one.
    let current =
        run_scenario(&scenario, &[("envoy_version", "1.28".into()), ("max_ejection_percent", 10.into())]);
    assert_eq!(pool(&current).ejections, 0);
    assert!(pool(&current).detections_overflow >= 1);
    assert_eq!(pool(&current).ejections_missed, 1);
}

#[test]
fn envoy_2671_a_lone_ejected_host_stays_in_rotation_in_panic() {
    let r = run_file("mesh-envoy-2671.toml", &[]);
    let p = pool(&r);
    assert!(p.ejections >= 4, "ejected again and again: {}", p.ejections);
    assert_eq!(p.panic_episodes, p.ejections, "every ejection puts the pool of one in panic");
    let c = &r.record.counters;
    assert_eq!((c.rejections, c.answered_ok), (0, 0), "every request still went to the host");
    assert_eq!(c.attempts, c.requests);
    assert_eq!(p.bad_host_requests, c.requests);
    // Istio's translation (panic threshold 0): the ejected host is refused instead.
    let off = run_file("mesh-envoy-2671.toml", &[("healthy_panic_threshold", 0.0.into())]);
    assert!(off.record.counters.rejections > off.record.counters.requests / 2);
    assert_eq!(pool(&off).panic_episodes, 0);
}

/// How long each ejection of instance `i` lasted, in seconds.
fn durations(r: &RunResult, i: usize) -> Vec<u64> {
    let outs = changes(r, State::Open).into_iter().filter(|c| c.1 == i).map(|c| c.0);
    let ins = changes(r, State::Closed).into_iter().filter(|c| c.1 == i).map(|c| c.0);
    outs.zip(ins).map(|(o, c)| (c - o) / S).collect()
}

#[test]
fn envoy_26758_failure_percentage_ejections_do_not_grow_before_1_28() {
    let old = run_file("mesh-envoy-26758.toml", &[]);
    let d = durations(&old, 0);
    assert!(d.len() >= 8, "{d:?}");
    assert!(d.iter().all(|s| *s == 60), "every ejection lasts the base 60 s: {d:?}");
    let new = run_file("mesh-envoy-26758.toml", &[("envoy_version", "1.28".into())]);
    assert_eq!(&durations(&new, 0)[..4], &[60, 120, 180, 240]);
    assert_eq!(pool(&old).false_ejections, 0);
}

#[test]
fn gateway_6985_gateway_errors_never_eject_with_enforcement_unset() {
    let r = run_file("mesh-gateway-6985.toml", &[]);
    let p = pool(&r);
    assert_eq!(p.ejections, 0);
    assert!(p.detections_unenforced >= 100, "{}", p.detections_unenforced);
    assert_eq!(p.ejections_missed, 2);
    // envoyproxy/gateway#7284 sets the enforcement to 100: both bad hosts leave within a
    // second of the incident (three 503s each at 10 requests a second over 10 hosts).
    let fixed = run_file("mesh-gateway-6985.toml", &[("enforcing_consecutive_gateway_failure", 100.into())]);
    let p = pool(&fixed);
    assert_eq!(p.ejections_missed, 0);
    assert!(p.eject_delay_max_s.unwrap() < 3.5, "{:?}", p.eject_delay_max_s);
    assert!(p.bad_host_requests < pool(&r).bad_host_requests / 5);
    assert!(fixed.metrics.availability > r.metrics.availability);
}

#[test]
fn a_breaker_in_front_of_a_pool_sees_every_host_and_ejects_none() {
    let scenario = crate::scenario::load(&path("mesh-gateway-6985.toml")).unwrap();
    let mut spec = crate::policy::PolicySpec::new("consecutive");
    spec.overrides.insert("failure_threshold".into(), 1_000_000.into());
    let policy = spec.resolve().unwrap();
    let workload = Workload::build(&scenario, 1, 0).unwrap();
    let r = run(&scenario, &workload, &policy, &RunOptions::default());
    let p = pool(&r);
    assert_eq!((p.ejections, p.ejections_missed), (0, 2));
    assert_eq!(r.record.instances, 1, "one breaker, in front of the balancer");
    // Round robin sends the bad hosts their share: 2 of 10 of the 8 minutes' requests.
    assert!((900..=1_000).contains(&p.bad_host_requests), "{}", p.bad_host_requests);
}

#[test]
fn every_client_runs_its_own_detector_and_balancer() {
    // Ten clients share the pool: each counts its own errors, so each ejects the bad host when
    // its own fifth error comes, not the pool's fifth.
    let text = "duration = \"2m\"\n[traffic]\nkind = \"constant\"\nrate = 30.0\n[client]\ninstances = 10\n\
                [upstream]\np50 = \"10ms\"\np95 = \"10ms\"\nhosts = 3\n\
                [[incidents]]\nkind = \"outage\"\nstart = \"30s\"\nduration = \"1m\"\nhosts = [0]\nlatency = \"10ms\"\n\
                [policy]\npreset = \"envoy-outlier\"\nmax_ejection_percent = 50\n";
    let scenario = crate::scenario::parse(Path::new("fleet.toml"), text).unwrap();
    let r = run_scenario(&scenario, &[]);
    assert_eq!(r.record.instances, 30, "10 clients x 3 hosts");
    let mut ejected: Vec<usize> = changes(&r, State::Open).iter().map(|c| c.1).collect();
    assert!(ejected.iter().all(|i| i % 3 == 0), "only host 0: {ejected:?}");
    ejected.sort_unstable();
    ejected.dedup();
    assert_eq!(ejected, (0..10).map(|c| 3 * c).collect::<Vec<_>>(), "each client ejects it itself");
    // Each client sees every tenth request and every third of those goes to host 0: its fifth
    // error comes about 15 of its requests (5 s) into the incident.
    let p = pool(&r);
    assert!(p.eject_delay_mean_s.unwrap() > 3.0 && p.eject_delay_max_s.unwrap() < 7.0, "{p:?}");
    assert_eq!((p.false_ejections, p.ejections_missed), (0, 0));
}

#[test]
fn pool_runs_are_deterministic_and_draw_the_same_answers_for_every_policy() {
    let scenario = crate::scenario::load(&path("mesh-gateway-6985.toml")).unwrap();
    let a = run_scenario(&scenario, &[]);
    let b = run_scenario(&scenario, &[]);
    assert_eq!(format!("{:?}", a.record), format!("{:?}", b.record));
    // Least request and ring hash run too, and send attempts to every host.
    for balancer in ["least_request", "random", "ring_hash"] {
        let text = std::fs::read_to_string(path("mesh-gateway-6985.toml"))
            .unwrap()
            .replace("hosts = 10\n", &format!("hosts = 10\nbalancer = \"{balancer}\"\n"));
        let s = crate::scenario::parse(&path("mesh-gateway-6985.toml"), &text).unwrap();
        let r = run_scenario(&s, &[("enforcing_consecutive_gateway_failure", 100.into())]);
        let p = pool(&r);
        assert!(p.ejections >= 2, "{balancer}: {p:?}");
        assert!(r.record.end >= SimTime(600 * S) && r.record.end < SimTime(600 * S) + Dur::from_secs(1));
    }
}

#[test]
fn pool_input_errors_name_the_place_and_the_fix() {
    let err = |text: &str| crate::scenario::parse(Path::new("p.toml"), text).unwrap_err().to_string();
    let base = "duration = \"1m\"\n[traffic]\nkind = \"constant\"\nrate = 1.0\n";
    let e = err(&format!(
        "{base}[[incidents]]\nkind = \"outage\"\nstart = \"1s\"\nduration = \"5s\"\nhosts = [1]\n"
    ));
    assert!(e.contains("p.toml:5") && e.contains("`hosts` names hosts of a pool"), "{e}");
    let e = err(&format!(
        "{base}[upstream]\nhosts = 2\n[[incidents]]\nkind = \"outage\"\nstart = \"1s\"\nduration = \"5s\"\nhosts = [2]\n"
    ));
    assert!(e.contains("names host 2, but the pool has 2 hosts"), "{e}");
    let e = err(&format!(
        "{base}[upstream]\nhosts = 2\n[[hosts]]\nhost = 1\np50 = \"1s\"\np95 = \"2s\"\n[[hosts]]\nhost = 1\n"
    ));
    assert!(e.contains("p.toml:11") && e.contains("[[hosts]] #2: host 1 is described twice"), "{e}");
    let e = err(&format!("{base}[upstream]\nhosts = 2\n[[hosts]]\nhost = 1\np50 = \"1s\"\n"));
    assert!(
        e.contains("p.toml:7") && e.contains("(host 1): `p95` (400ms) must not be shorter than `p50` (1s)"),
        "{e}"
    );
    let e = err(&format!("{base}[upstream]\nbalancer = \"random\"\n"));
    assert!(e.contains("`balancer` balances a pool of hosts"), "{e}");
    let e = err(&format!("{base}[upstream]\nhosts = 3\nbalancer = \"fastest\"\n"));
    assert!(e.contains("p.toml:7") && e.contains("round_robin"), "{e}");
    let e = err(&format!(
        "{base}[upstream]\nhosts = 3\n[[incidents]]\nkind = \"slowdown\"\nfactor = 3.0\nstart = \"1s\"\nduration = \"5s\"\nstatus = 503\n"
    ));
    assert!(e.contains("`status` applies to kinds whose answers fail"), "{e}");
    let e = err(&format!("{base}[upstream]\nhosts = 3\n[client.process]\nevery = \"10s\"\n"));
    assert!(e.contains("remove [client.process] or `hosts`"), "{e}");
    let e = err(&format!(
        "{base}[upstream]\nhosts = 3\n[[incidents]]\nkind = \"outage\"\nstart = \"1s\"\nduration = \"5s\"\nstatus = 404\n"
    ));
    assert!(e.contains("from 500 to 599") && e.contains("404"), "{e}");
}

/// The completion times of a constant-rate client's requests (`rate` per second, answered after
/// `latency_ms`), up to `horizon_s`.
fn completions(rate: f64, latency_ms: u64, horizon_s: u64) -> Vec<u64> {
    let period = (1e6 / rate).round() as u64;
    (0..).map(|k| k * period + latency_ms * 1000).take_while(|t| *t < horizon_s * S).collect()
}

#[test]
fn envoy_40697_three_errors_per_return_the_rest_is_the_setup() {
    let r = run_file("mesh-envoy-40697.toml", &[]);
    let ejections: Vec<u64> = changes(&r, State::Open).iter().map(|c| c.0).collect();
    let returns: Vec<u64> = changes(&r, State::Closed).iter().map(|c| c.0).collect();
    let done = completions(3.125, 20, 180);
    let between = |from: u64, to: u64| done.iter().filter(|t| from <= **t && **t <= to).count();
    // The detector: three 504s from the start to the first ejection, three after every return.
    assert_eq!(between(0, ejections[0]), 3);
    assert!(ejections.len() >= 25, "{}", ejections.len());
    for (k, e) in ejections.iter().enumerate().skip(1) {
        assert_eq!(between(returns[k - 1], *e), 3, "after return {k}");
        assert_eq!(returns[k - 1] % S, 0, "returns happen on the 1 s ticks only");
    }
    // The setup: the lone host stays in rotation while ejected (panic), so every request got a
    // 504 and the client never saw an ejection...
    let c = &r.record.counters;
    assert_eq!((c.rejections, c.answered_ok, c.attempts), (0, 0, c.requests));
    // ... and a client expecting the host back 5 s after each ejection counts the 504s answered
    // until the first tick after that too: 4 in three cycles of four here, 3 in the fourth.
    let seen: Vec<usize> = ejections.windows(2).map(|w| between(w[0] + 5 * S, w[1])).collect();
    assert!(seen.iter().all(|n| (3..=4).contains(n)), "{seen:?}");
    assert!(seen.iter().filter(|n| **n == 4).count() * 2 > seen.len(), "{seen:?}");
    // Under Istio's translation (panic threshold 0) the ejection is visible instead: the loop
    // gets 503s (no healthy upstream) until the return, then exactly three 504s.
    let istio = run_file("mesh-envoy-40697.toml", &[("healthy_panic_threshold", 0.0.into())]);
    let c = &istio.record.counters;
    let cycles = changes(&istio, State::Open).len() as u64;
    assert!(
        (3 * cycles..3 * cycles + 3).contains(&c.attempts),
        "{} attempts, {cycles} ejections",
        c.attempts
    );
    assert_eq!(c.rejections, c.requests - c.attempts);
}

#[test]
fn ten_hosts_need_twenty_percent_to_lose_both_bad_pods_at_once() {
    // The swept scenario: pod 3 slow (its calls time out: 504s to the detector) from 2 to
    // 12 min, pod 7 failing from 6 to 16 min, four sidecars. With the default 10 % a sidecar
    // may have one pod out at a time, so while both are bad one of them stays in rotation.
    let narrow = run_file("mesh-ten-hosts.toml", &[("consecutive_5xx", 3.into())]);
    let wide = run_file(
        "mesh-ten-hosts.toml",
        &[("consecutive_5xx", 3.into()), ("max_ejection_percent", 20.into())],
    );
    let (n, w) = (pool(&narrow), pool(&wide));
    assert!(n.detections_overflow > 0 && w.detections_overflow < n.detections_overflow, "{n:?} {w:?}");
    assert_eq!(w.ejections_missed, 0);
    assert!(w.bad_host_requests < n.bad_host_requests, "{} vs {}", w.bad_host_requests, n.bad_host_requests);
    assert!(wide.metrics.availability >= narrow.metrics.availability);
    assert_eq!(wide.record.instances, 40, "4 sidecars x 10 pods");
}

#[test]
fn active_health_checks_take_failing_hosts_out_and_return_ejected_ones_early() {
    // gateway#6985 with health checks every 5 s: the two hosts answering 503 fail their
    // checks (a 503 marks a host failed at once), so they leave rotation within one check
    // although the detector ejects nothing, and far fewer requests reach them.
    let plain = run_file("mesh-gateway-6985.toml", &[]);
    let checked = run_file("mesh-gateway-6985.toml", &[("health_check_interval", "5s".into())]);
    let (p, c) = (pool(&plain), pool(&checked));
    assert_eq!(c.ejections, 0);
    assert!(
        c.bad_host_requests * 5 < p.bad_host_requests,
        "{} vs {}",
        c.bad_host_requests,
        p.bad_host_requests
    );
    assert!(checked.metrics.availability > plain.metrics.availability);
    // A 1.8 s outage of host 0 from 30.2 s, the gateway rule enforced, checks every 2 s (they
    // complete at 0.01 s, 2.02 s, ... 30.16 s, 32.17 s: sent 2 s after the last completion,
    // answered in 10 ms): the host is ejected on its third 503, about 0.6 s into the outage;
    // no check is sent during it, and the one completing at 32.17 s passes and returns the
    // host, long before its 30 s ejection time.
    let text = "duration = \"2m\"\n[traffic]\nkind = \"constant\"\nrate = 20.0\n\
                [upstream]\np50 = \"10ms\"\np95 = \"10ms\"\nhosts = 4\n\
                [[incidents]]\nkind = \"outage\"\nstart = \"30200ms\"\nduration = \"1800ms\"\nhosts = [0]\nlatency = \"10ms\"\nstatus = 503\n\
                [policy]\npreset = \"envoy-outlier\"\nmax_ejection_percent = 50\nconsecutive_gateway_failure = 3\n\
                enforcing_consecutive_gateway_failure = 100\nhealth_check_interval = \"2s\"\n";
    let scenario = Scenario::parse(Path::new("hc.toml"), text).unwrap();
    let r = run_scenario(&scenario, &[]);
    let back: Vec<_> = r.record.transitions.iter().filter(|(_, t)| t.to == State::Closed).collect();
    assert!(!back.is_empty(), "{:?}", r.metrics.pool);
    let (host, first) = back[0];
    assert_eq!((*host, first.reason, first.at), (0, "active_health_check", SimTime(32_170_000)));
    // Same bytes twice.
    let again = run_scenario(&scenario, &[]);
    assert_eq!(format!("{:?}", r.record), format!("{:?}", again.record));
}
