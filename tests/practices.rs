//! The practices around the breaker (issue: fleets, restarts, overload, routing, error classes,
//! budgets), each asserted in numbers on a bundled scenario.

mod util;

use breakerlab::metrics::Metrics;
use breakerlab::policy::PolicySpec;
use breakerlab::scenario::Scenario;
use breakerlab::sim::{self, RunOptions, Workload};
use util::scenario;

/// Runs a bundled scenario under `preset` (or its own policy) and returns the scores.
fn scores(file: &str, preset: Option<&str>) -> Metrics {
    scores_of(&Scenario::load(&scenario(file)).expect("bundled scenario is valid"), preset)
}

fn scores_of(sc: &Scenario, preset: Option<&str>) -> Metrics {
    let policy = sc.policy_spec(preset, &[]).resolve().expect("preset resolves");
    let workload = Workload::build(sc, sc.seed, 0).expect("workload");
    sim::run(sc, &workload, &policy, &RunOptions::default()).metrics
}

fn get(m: &Metrics, column: &str) -> f64 {
    m.get(column).unwrap_or_else(|| panic!("{column} has a value"))
}

/// Seed 001's storm: without a breaker the retries keep the capacity-limited route overloaded
/// from the 5-minute hang to the end of the run; per-replica gates let it recover.
#[test]
fn retry_storm_keeps_the_dependency_down_without_a_breaker_and_recovers_with_one() {
    let none = scores("retry-storm.toml", Some("none"));
    let gates = scores("retry-storm.toml", None);
    assert!(get(&none, "overloaded_s") > 3_500.0, "never recovers: {}", get(&none, "overloaded_s"));
    assert!(get(&none, "amplification") > 2.0);
    assert!(get(&none, "availability") < 0.6);
    assert!(get(&gates, "overloaded_s") < 1_200.0, "recovers: {}", get(&gates, "overloaded_s"));
    assert!(get(&gates, "amplification") < 1.0);
    assert!(get(&gates, "availability") > 0.9);
    assert_eq!(get(&gates, "missed_incidents"), 0.0);
}

/// Seed 002: 401s from an expired key trip a breaker that counts every error, not one that
/// ignores client errors.
#[test]
fn an_expired_key_trips_only_a_breaker_that_counts_client_errors() {
    let every_error = scores("expired-key.toml", None);
    let ignores_401 = scores("expired-key.toml", Some("consecutive"));
    assert!(get(&every_error, "false_opens") >= 1.0);
    assert!(get(&every_error, "shed") > 1_000.0);
    assert_eq!(get(&ignores_401, "false_opens"), 0.0);
    assert_eq!(get(&ignores_401, "shed"), 0.0);
    let counted = PolicySpec::new("ai-service-breaker").resolve().unwrap().classifier();
    assert_eq!(
        counted.verdict(breakerlab::outcome::OutcomeClass::ClientError),
        breakerlab::outcome::Verdict::Failure
    );
}

/// Every retry budget limits amplification during the outage; the token bucket and the AWS quota
/// cut it to about one attempt per request.
#[test]
fn retry_budgets_limit_amplification() {
    let base = Scenario::load(&scenario("retry-budget.toml")).unwrap();
    let with_budget = |budget: breakerlab::client::BudgetSpec| {
        let mut sc = base.clone();
        sc.client.retry.budget = budget;
        scores_of(&sc, None)
    };
    use breakerlab::client::BudgetSpec;
    let none = with_budget(BudgetSpec::None);
    let bucket = scores_of(&base, None);
    let quota = with_budget(toml::from_str("kind = \"retry_quota\"").unwrap());
    let ratio = with_budget(toml::from_str("kind = \"ratio\"").unwrap());
    let concurrency = with_budget(toml::from_str("kind = \"concurrency\"").unwrap());
    let amp = |m: &Metrics| get(m, "amplification");
    assert!(amp(&none) > 1.9, "{}", amp(&none));
    assert!(amp(&bucket) < 1.1 && amp(&quota) < 1.1, "{} {}", amp(&bucket), amp(&quota));
    assert!(amp(&ratio) < amp(&none) - 0.2);
    assert!(amp(&concurrency) < amp(&none));
    for m in [&bucket, &quota, &ratio, &concurrency] {
        assert!(get(m, "retries_refused") > 0.0);
        assert!(get(m, "wasted_quota") < get(&none, "wasted_quota"));
    }
    assert_eq!(get(&none, "retries_refused"), 0.0);
}

/// The fallbacks report their own counts: a cached answer for every request the breaker shed
/// or that failed for good.
#[test]
fn fallbacks_report_their_own_counts() {
    let m = scores("hard-outage.toml", None);
    let fallbacks = get(&m, "fallback_rate") * get(&m, "requests");
    assert!((get(&m, "fallback_cached") - fallbacks).abs() < 0.5);
    assert_eq!(get(&m, "fallback_local"), 0.0);
    let storm = scores("retry-storm.toml", None);
    assert!(get(&storm, "fallback_local") > 0.0);
    assert_eq!(get(&storm, "fallback_cached"), 0.0);
}

/// Seed 001's limitation: twenty process-local gates each send their own probe after every
/// cooloff; one shared breaker sends one.
#[test]
fn a_fleet_of_local_breakers_sends_a_probe_per_instance() {
    let local = Scenario::load(&scenario("fleet-recovery.toml")).unwrap();
    let mut shared = local.clone();
    shared.client.shared_breaker = true;
    let (l, s) = (scores_of(&local, None), scores_of(&shared, None));
    assert_eq!(get(&l, "missed_incidents"), 0.0);
    assert_eq!(get(&s, "missed_incidents"), 0.0);
    assert!(get(&l, "probes_per_incident") >= 10.0 * get(&s, "probes_per_incident"));
    assert!(get(&l, "probes_per_incident") >= 200.0, "{}", get(&l, "probes_per_incident"));
    assert!(get(&l, "recovery_load_rps") > 0.0 && get(&s, "recovery_load_rps") > 0.0);
    assert!(get(&s, "recovery_lag_mean_s") < get(&l, "recovery_lag_mean_s"));
}

/// Seed 000: a job restarted every 15 minutes with a handful of calls per run. A fresh process
/// forgets what the last runs saw and misses slow nights; reloading the samples catches them.
#[test]
fn persisting_samples_across_job_restarts_catches_what_fresh_processes_miss() {
    use breakerlab::client::Persist;
    let base = Scenario::load(&scenario("nightly-jobs.toml")).unwrap();
    let with = |persist: Persist| {
        let mut sc = base.clone();
        sc.client.process.as_mut().expect("the scenario restarts").persist = persist;
        scores_of(&sc, None)
    };
    let (fresh, samples, state) = (with(Persist::None), with(Persist::Samples), with(Persist::State));
    assert!(get(&fresh, "missed_incidents") >= 1.0);
    assert_eq!(get(&samples, "missed_incidents"), 0.0);
    assert_eq!(get(&state, "missed_incidents"), 0.0);
    assert!(get(&samples, "time_open_s") > 2.0 * get(&fresh, "time_open_s"));
    assert_eq!(get(&fresh, "requests"), get(&samples, "requests"), "same arrivals");
}
