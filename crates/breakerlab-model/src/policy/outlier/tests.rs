//! The detector's rules, transition by transition, with the times they happen at.

use super::super::envoy::{EnvoyConfig, EnvoyVersion, Implementation};
use super::super::machine::State;
use super::{Detection, Detector, HostChange, Kind, Outcome, in_rotation};
use crate::outcome::OutcomeClass;
use crate::time::{Dur, SimTime};
use crate::upstream::pool::CONNECT_FAILURE;

const S: u64 = 1_000_000;

/// A detector over `hosts` hosts with every limit out of the way (max_ejection_percent 100).
fn detector(hosts: u16, cfg: EnvoyConfig) -> Detector {
    Detector::new(&cfg, hosts, 7, false)
}

fn open() -> EnvoyConfig {
    EnvoyConfig { max_ejection_percent: 100, ..EnvoyConfig::default() }
}

/// What a run of the detector reported: `(ms, host, to, reason)` per change.
#[derive(Default)]
struct Log {
    changes: Vec<(u64, u16, State, &'static str)>,
}

impl Log {
    fn take(&mut self, out: &mut Vec<HostChange>) {
        self.changes.extend(
            out.drain(..)
                .map(|c| (c.transition.at.micros() / 1000, c.host, c.transition.to, c.transition.reason)),
        );
    }
}

/// Feeds `n` results of `code` (class from the code: 2xx ok, else error) to `host` at `ms`.
fn feed(d: &mut Detector, log: &mut Log, ms: u64, host: u16, code: u16, n: usize) {
    let class = if code < 500 && code != CONNECT_FAILURE { OutcomeClass::Ok } else { OutcomeClass::Error };
    let mut out = Vec::new();
    for _ in 0..n {
        d.record(SimTime(ms * 1000), host, class, code, &mut out);
    }
    log.take(&mut out);
}

/// Runs every tick up to `ms`.
fn ticks_to(d: &mut Detector, log: &mut Log, ms: u64) {
    let mut out = Vec::new();
    while d.next_tick() <= SimTime(ms * 1000) {
        let t = d.next_tick();
        d.tick(t, &mut out);
    }
    log.take(&mut out);
}

fn outcomes(d: &mut Detector) -> Vec<(u16, Kind, Outcome)> {
    d.take_detections().map(|Detection { host, kind, outcome, .. }| (host, kind, outcome)).collect()
}

#[test]
fn consecutive_5xx_fires_at_the_threshold_resets_and_ignores_results_while_ejected() {
    let mut d = detector(3, open());
    let mut log = Log::default();
    feed(&mut d, &mut log, 1_000, 1, 500, 4);
    feed(&mut d, &mut log, 1_100, 1, 200, 1); // a success resets the counter
    feed(&mut d, &mut log, 2_000, 1, 500, 4);
    assert!(log.changes.is_empty());
    feed(&mut d, &mut log, 2_500, 1, 500, 1); // the 5th in a row
    assert_eq!(log.changes, vec![(2_500, 1, State::Open, "consecutive_5xx")]);
    assert_eq!(d.multiplier(1), 1);
    // While ejected, 5xx are counted but never fire (the counter passes the threshold).
    feed(&mut d, &mut log, 3_000, 1, 500, 12);
    assert_eq!(outcomes(&mut d), vec![(1, Kind::Consecutive5xx, Outcome::Ejected)]);
    // Ejected at 2.5 s for 30 s: back at the first 10 s tick at or after 32.5 s, i.e. 40 s.
    ticks_to(&mut d, &mut log, 39_999);
    assert!(d.is_ejected(1));
    ticks_to(&mut d, &mut log, 40_000);
    assert_eq!(log.changes[1], (40_000, 1, State::Closed, "ejection_elapsed"));
    // Counters were reset on return: four 5xx do not eject, the fifth does, for 60 s now.
    feed(&mut d, &mut log, 40_500, 1, 500, 4);
    assert!(!d.is_ejected(1));
    feed(&mut d, &mut log, 40_600, 1, 500, 1);
    assert_eq!(log.changes[2], (40_600, 1, State::Open, "consecutive_5xx"));
    assert_eq!(d.multiplier(1), 2);
    // 60 s from 40.6 s: back at the 110 s tick, not the 100 s one.
    ticks_to(&mut d, &mut log, 100_000);
    assert!(d.is_ejected(1));
    ticks_to(&mut d, &mut log, 110_000);
    assert_eq!(log.changes[3], (110_000, 1, State::Closed, "ejection_elapsed"));
}

#[test]
fn gateway_errors_count_twice_and_unenforced_detections_are_logged() {
    // Envoy's defaults: gateway failure 5 with enforcing 0, consecutive 5xx 5 with 100.
    let mut d = detector(4, EnvoyConfig { consecutive_5xx: 7, ..open() });
    let mut log = Log::default();
    feed(&mut d, &mut log, 1_000, 0, 503, 5);
    assert_eq!(outcomes(&mut d), vec![(0, Kind::ConsecutiveGateway, Outcome::NotEnforced)]);
    assert!(log.changes.is_empty(), "enforcing_consecutive_gateway_failure 0 never ejects");
    feed(&mut d, &mut log, 1_100, 0, 503, 2); // the 7th consecutive 5xx
    assert_eq!(log.changes, vec![(1_100, 0, State::Open, "consecutive_5xx")]);
    // A 500 breaks a gateway run without breaking the 5xx run.
    let mut d =
        detector(4, EnvoyConfig { enforcing_consecutive_gateway_failure: 100, consecutive_5xx: 0, ..open() });
    let mut log = Log::default();
    feed(&mut d, &mut log, 1_000, 2, 504, 4);
    feed(&mut d, &mut log, 1_001, 2, 500, 1);
    feed(&mut d, &mut log, 1_002, 2, 502, 4);
    assert!(log.changes.is_empty());
    feed(&mut d, &mut log, 1_003, 2, 503, 1);
    assert_eq!(log.changes, vec![(1_003, 2, State::Open, "consecutive_gateway_failure")]);
    // Without the split, a connect failure is a 503 and a timeout a 504: gateway errors.
    let mut d = detector(
        4,
        EnvoyConfig { enforcing_consecutive_gateway_failure: 100, consecutive_gateway_failure: 3, ..open() },
    );
    let mut out = Vec::new();
    d.record(SimTime(S), 3, OutcomeClass::Error, CONNECT_FAILURE, &mut out);
    d.record(SimTime(S), 3, OutcomeClass::Timeout, 200, &mut out);
    d.record(SimTime(2 * S), 3, OutcomeClass::Timeout, 200, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].host, out[0].transition.reason, out[0].transition.at),
        (3, "consecutive_gateway_failure", SimTime(2 * S))
    );
}

#[test]
fn split_local_origin_failures_have_their_own_counter() {
    let cfg = EnvoyConfig {
        split_external_local_origin_errors: true,
        consecutive_local_origin_failure: 3,
        ..open()
    };
    let mut d = detector(3, cfg);
    let mut out = Vec::new();
    let at = |s| SimTime(s * S);
    d.record(at(1), 0, OutcomeClass::Timeout, 200, &mut out);
    d.record(at(1), 0, OutcomeClass::Error, CONNECT_FAILURE, &mut out);
    d.record(at(2), 0, OutcomeClass::Error, 500, &mut out); // answered: a local-origin success
    d.record(at(3), 0, OutcomeClass::Timeout, 200, &mut out);
    d.record(at(3), 0, OutcomeClass::Timeout, 200, &mut out);
    assert!(out.is_empty(), "the answered 500 reset the local-origin run");
    d.record(at(4), 0, OutcomeClass::Timeout, 200, &mut out);
    assert_eq!((out[0].transition.at, out[0].transition.reason), (at(4), "consecutive_local_origin_failure"));
}

#[test]
fn the_ejection_limit_of_each_release_on_three_hosts() {
    for (version, always, max, ejected) in [
        (EnvoyVersion::V1_26, false, 10, vec![true, false]),
        (EnvoyVersion::V1_26, false, 0, vec![false, false]),
        (EnvoyVersion::V1_27, false, 10, vec![true, false]),
        (EnvoyVersion::V1_27, false, 0, vec![true, false]),
        (EnvoyVersion::V1_27, false, 70, vec![true, true]),
        (EnvoyVersion::V1_28, false, 10, vec![false, false]),
        (EnvoyVersion::V1_28, true, 10, vec![true, false]),
        (EnvoyVersion::V1_28, false, 100, vec![true, true]),
        (EnvoyVersion::V1_28, false, 50, vec![true, false]),
    ] {
        let cfg = EnvoyConfig {
            envoy_version: version,
            always_eject_one_host: always,
            max_ejection_percent: max,
            ..EnvoyConfig::default()
        };
        let mut d = detector(3, cfg);
        let mut log = Log::default();
        feed(&mut d, &mut log, 1_000, 0, 500, 5);
        feed(&mut d, &mut log, 1_000, 1, 500, 5);
        let got = vec![d.is_ejected(0), d.is_ejected(1)];
        assert_eq!(got, ejected, "{version:?} always={always} max={max}");
        let overflow = outcomes(&mut d).iter().filter(|o| o.2 == Outcome::Overflow).count();
        assert_eq!(overflow, ejected.iter().filter(|e| !**e).count());
    }
}

/// Feeds each host `total` results over the interval ending at `tick_ms`, `failures[h]` of them
/// 500s, then runs the tick.
fn interval(d: &mut Detector, log: &mut Log, tick_ms: u64, total: usize, failures: &[usize]) {
    for (h, &f) in failures.iter().enumerate() {
        feed(d, log, tick_ms - 5_000, h as u16, 200, total - f);
        feed(d, log, tick_ms - 5_000, h as u16, 500, f);
    }
    ticks_to(d, log, tick_ms);
}

#[test]
fn success_rate_ejects_below_mean_minus_factor_stdev_on_the_tick() {
    // Five hosts, 100 requests each; host 0 at 50 %: mean 90, stdev 20, threshold 52.
    let cfg = EnvoyConfig { consecutive_5xx: 0, consecutive_gateway_failure: 0, ..open() };
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[50, 0, 0, 0, 0]);
    assert_eq!(log.changes, vec![(10_000, 0, State::Open, "success_rate")]);
    // One outlier x among four at 100 % has threshold 4 + 0.96 x with a factor of 1.9 (always
    // above x), and 1.04 x - 4 with 2.1 (never).
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[3, 0, 0, 0, 0]);
    assert_eq!(log.changes.len(), 1, "97 % is under 4 + 0.96 x 97 = 97.12");
    let mut d = detector(5, EnvoyConfig { success_rate_stdev_factor: 2100, ..cfg.clone() });
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[50, 0, 0, 0, 0]);
    assert!(log.changes.is_empty());
    // Four hosts with volume are under success_rate_minimum_hosts 5: nothing runs.
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[50, 0, 0, 0]);
    assert!(log.changes.is_empty());
    // Volume under success_rate_request_volume (100) on one host: four count, nothing runs.
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    feed(&mut d, &mut log, 5_000, 0, 500, 50);
    feed(&mut d, &mut log, 5_000, 0, 200, 50);
    for h in 1..5u16 {
        feed(&mut d, &mut log, 5_000, h, 200, if h == 4 { 99 } else { 100 });
    }
    ticks_to(&mut d, &mut log, 10_000);
    assert!(log.changes.is_empty());
    // Results after a tick wait for the next one: the rule reads the last interval only.
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    ticks_to(&mut d, &mut log, 10_000);
    for h in 0..5u16 {
        feed(&mut d, &mut log, 12_000, h, 200, if h == 0 { 50 } else { 100 });
    }
    feed(&mut d, &mut log, 12_000, 0, 500, 50);
    ticks_to(&mut d, &mut log, 19_999);
    assert!(log.changes.is_empty());
    ticks_to(&mut d, &mut log, 20_000);
    assert_eq!(log.changes, vec![(20_000, 0, State::Open, "success_rate")]);
    // Istio forces enforcing_success_rate to 0: detected, not ejected.
    let mut d = detector(5, EnvoyConfig { enforcing_success_rate: 0, ..cfg });
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[50, 0, 0, 0, 0]);
    assert!(log.changes.is_empty());
    assert_eq!(outcomes(&mut d), vec![(0, Kind::SuccessRate, Outcome::NotEnforced)]);
}

/// Failure-percentage ejections of a host that always fails, one interval of traffic after
/// each return: the ejection times, in seconds.
fn failure_percentage_times(version: EnvoyVersion) -> Vec<(u64, State)> {
    let cfg = EnvoyConfig {
        consecutive_5xx: 0,
        consecutive_gateway_failure: 0,
        enforcing_success_rate: 0,
        enforcing_failure_percentage: 100,
        envoy_version: version,
        ..open()
    };
    let mut d = detector(5, cfg);
    let mut log = Log::default();
    let mut t = 10_000;
    while t <= 400_000 {
        // An ejected host gets no traffic; in rotation it fails every call.
        let failing = if d.is_ejected(0) { 0 } else { 60 };
        for h in 1..5u16 {
            feed(&mut d, &mut log, t - 5_000, h, 200, 60);
        }
        feed(&mut d, &mut log, t - 5_000, 0, 500, failing);
        ticks_to(&mut d, &mut log, t);
        t += 10_000;
    }
    log.changes.iter().filter(|c| c.1 == 0).map(|c| (c.0 / 1000, c.2)).collect()
}

#[test]
fn failure_percentage_ejections_grow_only_from_1_28() {
    use State::{Closed as C, Open as O};
    // Up to 1.27 the multiplier drops first thing in the tick after the return, before the
    // rule ejects again: every ejection lasts 30 s (envoy#26758).
    let old = failure_percentage_times(EnvoyVersion::V1_27);
    assert_eq!(&old[..6], &[(10, O), (40, C), (50, O), (80, C), (90, O), (120, C)]);
    // From 1.28 the drop waits for an interval back and comes after the rules: 30 s, 60 s, 90 s.
    let new = failure_percentage_times(EnvoyVersion::V1_28);
    assert_eq!(&new[..6], &[(10, O), (40, C), (50, O), (110, C), (120, O), (210, C)]);
}

#[test]
fn a_host_failing_both_rules_in_one_tick_is_ejected_twice() {
    let cfg = EnvoyConfig {
        consecutive_5xx: 0,
        consecutive_gateway_failure: 0,
        enforcing_failure_percentage: 100,
        ..open()
    };
    let mut d = detector(5, cfg);
    let mut log = Log::default();
    interval(&mut d, &mut log, 10_000, 100, &[100, 0, 0, 0, 0]);
    assert_eq!(log.changes, vec![(10_000, 0, State::Open, "success_rate")]);
    assert_eq!(d.active_ejections(), 2, "the failure-percentage rule ejected it again");
    assert_eq!(d.multiplier(0), 2);
    // It returns once, at the 70 s tick (60 s for multiplier 2), and Envoy's count stays at 1.
    ticks_to(&mut d, &mut log, 70_000);
    assert_eq!(log.changes[1], (70_000, 0, State::Closed, "ejection_elapsed"));
    assert_eq!(d.active_ejections(), 1);
}

#[test]
fn jitter_lengthens_an_ejection_by_up_to_its_maximum() {
    let cfg =
        EnvoyConfig { max_ejection_time_jitter: Dur::from_secs(15), interval: Dur::from_secs(1), ..open() };
    let mut returns = Vec::new();
    for seed in 0..20 {
        let mut d = Detector::new(&cfg, 2, seed, false);
        let mut log = Log::default();
        feed(&mut d, &mut log, 0, 0, 500, 5);
        ticks_to(&mut d, &mut log, 60_000);
        returns.push(log.changes[1].0);
    }
    assert!(returns.iter().all(|ms| (30_000..=45_000).contains(ms)), "{returns:?}");
    assert!(returns.iter().any(|ms| *ms != returns[0]));
}

#[test]
fn grpc_ejects_at_the_tick_returns_strictly_after_and_decays_every_tick() {
    let cfg = EnvoyConfig {
        implementation: Implementation::Grpc,
        healthy_panic_threshold: 0.0,
        ..EnvoyConfig::default()
    };
    let mut d = detector(5, cfg.clone());
    let mut log = Log::default();
    // Consecutive 5xx do nothing in gRPC.
    feed(&mut d, &mut log, 1_000, 1, 500, 20);
    assert!(log.changes.is_empty());
    ticks_to(&mut d, &mut log, 10_000);
    interval(&mut d, &mut log, 20_000, 100, &[50, 0, 0, 0, 0]);
    assert_eq!(log.changes, vec![(20_000, 0, State::Open, "success_rate")]);
    // Timestamp 20 s + 30 s = 50 s: not at the 50 s tick (not after), at the 60 s one.
    ticks_to(&mut d, &mut log, 50_000);
    assert!(d.is_ejected(0));
    ticks_to(&mut d, &mut log, 60_000);
    assert_eq!(log.changes[1], (60_000, 0, State::Closed, "ejection_elapsed"));
    assert_eq!(d.multiplier(0), 1);
    ticks_to(&mut d, &mut log, 70_000);
    assert_eq!(d.multiplier(0), 0, "one step per tick in rotation");
    // The limit is checked before each address and stops at 100 x ejected / hosts >= max
    // (grpc-go v1.60.0 balancer.go:862): with 10 hosts and 10 %, one goes, at 20 %, two.
    for (max, out) in [(10, 1), (20, 2)] {
        let fp = EnvoyConfig { enforcing_failure_percentage: 100, max_ejection_percent: max, ..cfg.clone() };
        let mut d = detector(10, fp);
        let mut log = Log::default();
        interval(&mut d, &mut log, 10_000, 100, &[100, 100, 100, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(log.changes.iter().filter(|c| c.2 == State::Open).count(), out, "max {max}");
        assert!(log.changes.iter().all(|c| c.0 == 10_000));
    }
}

#[test]
fn grpc_failure_percentage_counts_minimum_hosts_among_those_with_volume() {
    // Five addresses, minimum hosts 5: at the 10 s tick only four had the volume (50), so the
    // rule does not run (balancer.go:855); at 20 s all five had it and host 0 goes.
    let cfg = EnvoyConfig {
        implementation: Implementation::Grpc,
        enforcing_success_rate: 0,
        enforcing_failure_percentage: 100,
        max_ejection_percent: 100,
        ..EnvoyConfig::default()
    };
    let mut d = detector(5, cfg);
    let mut log = Log::default();
    for h in 0..4 {
        feed(&mut d, &mut log, 5_000, h, if h == 0 { 500 } else { 200 }, 60);
    }
    feed(&mut d, &mut log, 5_000, 4, 200, 10);
    ticks_to(&mut d, &mut log, 10_000);
    assert!(log.changes.is_empty(), "{:?}", log.changes);
    interval(&mut d, &mut log, 20_000, 60, &[60, 0, 0, 0, 0]);
    assert_eq!(log.changes, vec![(20_000, 0, State::Open, "failure_percentage")]);
}

#[test]
fn panic_uses_every_host_below_the_threshold() {
    let mut d = detector(3, EnvoyConfig { healthy_panic_threshold: 50.0, ..open() });
    let mut log = Log::default();
    let mut usable = Vec::new();
    assert!(!in_rotation(&d, 3, 50.0, &mut usable));
    assert_eq!(usable, vec![0, 1, 2]);
    feed(&mut d, &mut log, 0, 0, 500, 5);
    assert!(!in_rotation(&d, 3, 50.0, &mut usable), "2 of 3 in rotation: 66.7 % >= 50 %");
    assert_eq!(usable, vec![1, 2]);
    feed(&mut d, &mut log, 0, 1, 500, 5);
    assert!(in_rotation(&d, 3, 50.0, &mut usable), "33.3 % < 50 %: panic");
    assert_eq!(usable, vec![0, 1, 2]);
    assert!(!in_rotation(&d, 3, 0.0, &mut usable), "a threshold of 0 never panics");
    assert_eq!(usable, vec![2]);
}

/// A detector over three hosts with health checks every 2 s whose answers `answer(host, at)`
/// gives (class, status), 10 ms each.
fn checked(cfg: EnvoyConfig, answer: fn(u16, SimTime) -> (OutcomeClass, u16)) -> Detector {
    let cfg = EnvoyConfig { health_check_interval: Dur::from_secs(2), ..cfg };
    let mut d = detector(3, cfg);
    d.start_health_checks(&mut |h, at, _| {
        let (class, code) = answer(h, at);
        (class, code, Dur::from_millis(10))
    });
    d
}

/// Runs `d`'s ticks and health checks up to `ms`.
fn advance_to(d: &mut Detector, log: &mut Log, answer: fn(u16, SimTime) -> (OutcomeClass, u16), ms: u64) {
    let mut out = Vec::new();
    let mut draw = |h: u16, at: SimTime, _: u64| {
        let (class, code) = answer(h, at);
        (class, code, Dur::from_millis(10))
    };
    while d.next_event() <= SimTime(ms * 1000) {
        let t = d.next_event();
        d.advance(t, &mut draw, &mut out);
    }
    log.take(&mut out);
}

#[test]
fn a_passing_health_check_returns_an_ejected_host_at_its_completion() {
    fn healthy(_: u16, _: SimTime) -> (OutcomeClass, u16) {
        (OutcomeClass::Ok, 200)
    }
    // Checks complete at 10 ms, then 2.02 s, 4.03 s ... (sent 2 s after each completion).
    let mut d = checked(open(), healthy);
    let mut log = Log::default();
    advance_to(&mut d, &mut log, healthy, 1_000);
    feed(&mut d, &mut log, 1_000, 0, 500, 5);
    assert_eq!(log.changes, vec![(1_000, 0, State::Open, "consecutive_5xx")]);
    advance_to(&mut d, &mut log, healthy, 3_000);
    assert_eq!(log.changes[1], (2_020, 0, State::Closed, "active_health_check"));
    assert!(!d.out_of_rotation(0));
    // Without successful_active_health_check_uneject_host the host waits for the timer: 30 s
    // after its ejection, at the 40 s tick.
    let off = EnvoyConfig { successful_active_health_check_uneject_host: false, ..open() };
    let mut d = checked(off, healthy);
    let mut log = Log::default();
    feed(&mut d, &mut log, 1_000, 0, 500, 5);
    advance_to(&mut d, &mut log, healthy, 45_000);
    assert_eq!(
        log.changes,
        vec![(1_000, 0, State::Open, "consecutive_5xx"), (40_000, 0, State::Closed, "ejection_elapsed")]
    );
}

#[test]
fn a_host_failing_its_health_checks_leaves_rotation_and_is_not_returned_by_them() {
    // Host 0's health endpoint answers 503 from 3 s: its check completing at 4.03 s marks it
    // failed at once, out of rotation with no ejection, and no later check returns it.
    fn sick(h: u16, at: SimTime) -> (OutcomeClass, u16) {
        if h == 0 && at >= SimTime(3 * S) { (OutcomeClass::Error, 503) } else { (OutcomeClass::Ok, 200) }
    }
    let mut d = checked(open(), sick);
    let mut log = Log::default();
    advance_to(&mut d, &mut log, sick, 4_029);
    assert!(!d.out_of_rotation(0));
    advance_to(&mut d, &mut log, sick, 4_030);
    assert!(d.out_of_rotation(0) && !d.is_ejected(0));
    let mut usable = Vec::new();
    assert!(!in_rotation(&d, 3, 50.0, &mut usable));
    assert_eq!(usable, vec![1, 2]);
    feed(&mut d, &mut log, 5_000, 0, 500, 5);
    advance_to(&mut d, &mut log, sick, 20_000);
    assert_eq!(log.changes, vec![(5_000, 0, State::Open, "consecutive_5xx")], "no return by a failing check");
}

#[test]
fn a_timed_out_check_under_the_unhealthy_threshold_also_returns_an_ejected_host() {
    // Every check of host 0 times out (over the 1 s timeout, completing at it): the first three
    // complete at 1 s, 4 s and 7 s (sent 2 s after each completion). Ejected at 1.5 s, the host
    // returns at the 4 s completion, the second timeout of three: Envoy's callback runs after
    // every check and looks only at the failed mark, which the third sets at 7 s.
    let cfg = EnvoyConfig { health_check_interval: Dur::from_secs(2), ..open() };
    let mut d = detector(3, cfg);
    let mut draw = |h: u16, _: SimTime, _: u64| {
        let ms = if h == 0 { 5_000 } else { 10 };
        (OutcomeClass::Ok, 200, Dur::from_millis(ms))
    };
    d.start_health_checks(&mut draw);
    let mut log = Log::default();
    let mut out = Vec::new();
    let mut run_to = |d: &mut Detector, ms: u64, out: &mut Vec<HostChange>| {
        while d.next_event() <= SimTime(ms * 1000) {
            let t = d.next_event();
            d.advance(t, &mut draw, out);
        }
    };
    run_to(&mut d, 1_500, &mut out);
    log.take(&mut out);
    feed(&mut d, &mut log, 1_500, 0, 500, 5);
    run_to(&mut d, 7_000, &mut out);
    log.take(&mut out);
    assert_eq!(
        log.changes,
        vec![(1_500, 0, State::Open, "consecutive_5xx"), (4_000, 0, State::Closed, "active_health_check")]
    );
    assert!(d.out_of_rotation(0), "marked failed by the third timeout at 7 s");
}
