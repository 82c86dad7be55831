//! The practices around the breaker (issue: fleets, restarts, overload, routing, error classes,
//! budgets), each asserted in numbers on a bundled scenario.

use crate::util::scenario;
use breakerlab::PolicySpec;
use breakerlab::Scenario;
use breakerlab::{Metric, Metrics};
use breakerlab::{RunOptions, Workload};

/// Runs a bundled scenario under `preset` (or its own policy) and returns the scores.
fn scores(file: &str, preset: Option<&str>) -> Metrics {
    scores_of(&breakerlab::scenario::load(&scenario(file)).expect("bundled scenario is valid"), preset)
}

fn scores_of(sc: &Scenario, preset: Option<&str>) -> Metrics {
    let policy = sc.policy_spec(preset, &[]).resolve().expect("preset resolves");
    let workload = Workload::build(sc, sc.seed, 0).expect("workload");
    breakerlab::run(sc, &workload, &policy, &RunOptions::default()).metrics
}

fn get(m: &Metrics, metric: Metric) -> f64 {
    m.get(metric).unwrap_or_else(|| panic!("{metric} has a value"))
}

fn column(m: &Metrics, name: &str) -> f64 {
    m.column(name).unwrap_or_else(|| panic!("{name} has a value"))
}

/// Seed 001's storm: without a breaker the retries keep the capacity-limited route overloaded
/// from the 5-minute hang to the end of the run; per-replica gates let it recover.
#[test]
fn retry_storm_keeps_the_dependency_down_without_a_breaker_and_recovers_with_one() {
    let none = scores("retry-storm.toml", Some("none"));
    let gates = scores("retry-storm.toml", None);
    assert!(get(&none, Metric::OverloadedS) > 3_500.0, "never recovers: {}", get(&none, Metric::OverloadedS));
    assert!(get(&none, Metric::Amplification) > 2.0);
    assert!(get(&none, Metric::Availability) < 0.6);
    assert!(get(&gates, Metric::OverloadedS) < 1_200.0, "recovers: {}", get(&gates, Metric::OverloadedS));
    assert!(get(&gates, Metric::Amplification) < 1.0);
    assert!(get(&gates, Metric::Availability) > 0.9);
    assert_eq!(get(&gates, Metric::MissedIncidents), 0.0);
}

/// Seed 002: 401s from an expired key trip a breaker that counts every error, not one that
/// ignores client errors.
#[test]
fn an_expired_key_trips_only_a_breaker_that_counts_client_errors() {
    let every_error = scores("expired-key.toml", None);
    let ignores_401 = scores("expired-key.toml", Some("consecutive"));
    assert!(get(&every_error, Metric::FalseOpens) >= 1.0);
    assert!(get(&every_error, Metric::Shed) > 1_000.0);
    assert_eq!(get(&ignores_401, Metric::FalseOpens), 0.0);
    assert_eq!(get(&ignores_401, Metric::Shed), 0.0);
    let counted = PolicySpec::new("ai-service-breaker").resolve().unwrap().classifier();
    assert_eq!(
        counted.verdict(breakerlab_model::outcome::OutcomeClass::ClientError),
        breakerlab_model::outcome::Verdict::Failure
    );
}

/// Every retry budget limits amplification during the outage; the token bucket and the AWS quota
/// cut it to about one attempt per request.
#[test]
fn retry_budgets_limit_amplification() {
    let base = breakerlab::scenario::load(&scenario("retry-budget.toml")).unwrap();
    let with_budget = |budget: breakerlab_model::client::BudgetSpec| {
        let mut sc = base.clone();
        sc.client.retry.budget = budget;
        scores_of(&sc, None)
    };
    use breakerlab_model::client::BudgetSpec;
    let none = with_budget(BudgetSpec::None);
    let bucket = scores_of(&base, None);
    let quota = with_budget(toml::from_str("kind = \"retry_quota\"").unwrap());
    let ratio = with_budget(toml::from_str("kind = \"ratio\"").unwrap());
    let concurrency = with_budget(toml::from_str("kind = \"concurrency\"").unwrap());
    let amp = |m: &Metrics| get(m, Metric::Amplification);
    assert!(amp(&none) > 1.9, "{}", amp(&none));
    assert!(amp(&bucket) < 1.1 && amp(&quota) < 1.1, "{} {}", amp(&bucket), amp(&quota));
    assert!(amp(&ratio) < amp(&none) - 0.2);
    assert!(amp(&concurrency) < amp(&none));
    for m in [&bucket, &quota, &ratio, &concurrency] {
        assert!(get(m, Metric::RetriesRefused) > 0.0);
        assert!(get(m, Metric::WastedQuota) < get(&none, Metric::WastedQuota));
    }
    assert_eq!(get(&none, Metric::RetriesRefused), 0.0);
}

/// The fallbacks report their own counts: a cached answer for every request the breaker shed
/// or that failed for good.
#[test]
fn fallbacks_report_their_own_counts() {
    let m = scores("hard-outage.toml", None);
    let fallbacks = get(&m, Metric::FallbackRate) * get(&m, Metric::Requests);
    assert!((get(&m, Metric::FallbackCached) - fallbacks).abs() < 0.5);
    assert_eq!(get(&m, Metric::FallbackLocal), 0.0);
    let storm = scores("retry-storm.toml", None);
    assert!(get(&storm, Metric::FallbackLocal) > 0.0);
    assert_eq!(get(&storm, Metric::FallbackCached), 0.0);
}

/// Seed 001's limitation: twenty process-local gates each send their own probe after every
/// cooloff; one shared breaker sends one.
#[test]
fn a_fleet_of_local_breakers_sends_a_probe_per_instance() {
    let local = breakerlab::scenario::load(&scenario("fleet-recovery.toml")).unwrap();
    let mut shared = local.clone();
    shared.client.shared_breaker = true;
    let (l, s) = (scores_of(&local, None), scores_of(&shared, None));
    assert_eq!(get(&l, Metric::MissedIncidents), 0.0);
    assert_eq!(get(&s, Metric::MissedIncidents), 0.0);
    assert!(get(&l, Metric::ProbesPerIncident) >= 10.0 * get(&s, Metric::ProbesPerIncident));
    assert!(get(&l, Metric::ProbesPerIncident) >= 200.0, "{}", get(&l, Metric::ProbesPerIncident));
    assert!(get(&l, Metric::RecoveryLoadRps) > 0.0 && get(&s, Metric::RecoveryLoadRps) > 0.0);
    assert!(get(&s, Metric::RecoveryLagMeanS) < get(&l, Metric::RecoveryLagMeanS));
}

/// Seed 000: a job restarted every 15 minutes with a handful of calls per run. A fresh process
/// forgets what the last runs saw and misses slow nights; reloading the samples catches them.
#[test]
fn persisting_samples_across_job_restarts_catches_what_fresh_processes_miss() {
    use breakerlab_model::client::Persist;
    let base = breakerlab::scenario::load(&scenario("nightly-jobs.toml")).unwrap();
    let with = |persist: Persist| {
        let mut sc = base.clone();
        sc.client.process.as_mut().expect("the scenario restarts").persist = persist;
        scores_of(&sc, None)
    };
    let (fresh, samples, state) = (with(Persist::None), with(Persist::Samples), with(Persist::State));
    assert!(get(&fresh, Metric::MissedIncidents) >= 1.0);
    assert_eq!(get(&samples, Metric::MissedIncidents), 0.0);
    assert_eq!(get(&state, Metric::MissedIncidents), 0.0);
    assert!(get(&samples, Metric::TimeOpenS) > 2.0 * get(&fresh, Metric::TimeOpenS));
    assert_eq!(get(&fresh, Metric::Requests), get(&samples, Metric::Requests), "same arrivals");
}

/// Seed 002's multi-provider router: a cheap primary with a 20-minute outage (each call fails
/// after 2 s) and a pricier secondary. Failover keeps availability near 100 % whatever the
/// routing; a per-provider breaker moves traffic off the primary within seconds instead of
/// making every request wait out a failure first; health routing ignores the price and spends
/// several times more.
#[test]
fn multi_provider_routing_fails_over_and_shows_the_spend() {
    use breakerlab_model::scenario::{Source, Strategy};
    let priority = breakerlab::scenario::load(&scenario("multi-provider.toml")).unwrap();
    let mut health = priority.clone();
    match &mut health.source {
        Source::Providers { routing, .. } => routing.strategy = Strategy::Health,
        _ => panic!("the scenario lists providers"),
    }
    let breaker = scores_of(&priority, None);
    let none = scores_of(&priority, Some("none"));
    let health_breaker = scores_of(&health, None);
    let requests = get(&breaker, Metric::Requests);
    for m in [&breaker, &none, &health_breaker] {
        assert!(get(m, Metric::Availability) > 0.995, "failover serves nearly everything");
        assert_eq!(get(m, Metric::Requests), requests, "same arrivals");
    }
    // Without a breaker every request tries the primary first for the whole 20-minute window.
    assert_eq!(get(&none, Metric::FailoverDelayMeanS), 1_200.0);
    assert_eq!(column(&none, "provider.primary.attempts"), requests);
    // With one, 5 failures open it and requests skip the primary within seconds.
    assert!(
        get(&breaker, Metric::FailoverDelayMeanS) < 10.0,
        "{}",
        get(&breaker, Metric::FailoverDelayMeanS)
    );
    assert!(get(&none, Metric::Failovers) > 10.0 * get(&breaker, Metric::Failovers));
    assert!(get(&none, Metric::LatencyP95Ms) > 2_000.0, "requests wait out the primary's 2 s failure");
    assert!(get(&breaker, Metric::LatencyP95Ms) < 1_500.0);
    // The spend shifts to the secondary during the outage only: about a sixth of the requests
    // (20 of 120 minutes) go to it, and back to the cheap primary afterwards.
    let secondary = column(&breaker, "provider.secondary.attempts");
    assert!((0.9 * requests / 6.0..1.1 * requests / 6.0).contains(&secondary), "{secondary} of {requests}");
    let spend = 0.42 * column(&breaker, "provider.primary.attempts") + 8.0 * secondary;
    assert!((get(&breaker, Metric::Spend) - spend).abs() < 1e-6 * spend);
    // Health routing fails over after the first failure, but splits healthy traffic regardless
    // of price and never returns to a demoted primary while the secondary answers.
    assert!(get(&health_breaker, Metric::FailoverDelayMeanS) < get(&breaker, Metric::FailoverDelayMeanS));
    assert!(column(&health_breaker, "provider.secondary.attempts") > 0.5 * requests);
    assert!(get(&health_breaker, Metric::Spend) > 3.0 * get(&breaker, Metric::Spend));
}

/// A mixed fleet ([[instances]]): each instance sees the same requests whatever the others run,
/// so instance i's transitions equal those of instance i in a run where every instance runs
/// policy i — the presets sit side by side on common random numbers.
#[test]
fn a_mixed_fleet_runs_each_instance_on_its_own_preset() {
    use breakerlab_model::sim::simulate_fleet;
    let sc = breakerlab::scenario::load(&scenario("mixed-fleet.toml")).unwrap();
    assert_eq!(sc.client.instances, 4, "one instance per [[instances]] table");
    let policies: Vec<_> = sc.instance_policies.iter().map(|p| p.resolve().unwrap()).collect();
    let workload = Workload::build(&sc, sc.seed, 0).unwrap();
    let opts = RunOptions::default();
    let fleet = simulate_fleet(&sc.client, &workload, &policies, &opts);
    let of = |record: &breakerlab_model::metrics::RunRecord, i: usize| -> Vec<_> {
        record.transitions.iter().filter(|(b, _)| *b == i).map(|(_, t)| *t).collect()
    };
    let mut first_opens = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        let alone = simulate_fleet(&sc.client, &workload, std::slice::from_ref(policy), &opts);
        let mine = of(&fleet, i);
        assert!(!mine.is_empty(), "instance {i} ({}) opened", policy.preset());
        assert_eq!(mine, of(&alone, i), "instance {i} runs {}", policy.preset());
        first_opens.push(mine[0].at);
    }
    // Different presets open at different times on the same outage.
    first_opens.dedup();
    assert_eq!(first_opens.len(), 4);
}
