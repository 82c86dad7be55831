//! Breaker state machines. Every family is one file implementing [`Family`] plus one line in
//! the registry (`registry.rs`); [`Policy`] is the enum the engine drives (static dispatch on
//! the hot path). A policy knows nothing of the upstream: it is told when a call wants to start
//! ([`Breaker::admit`]) and how each admitted call ended ([`Breaker::record`]), both at
//! simulated times chosen by the engine.
//!
//! Imports run one way: the leaves (`evidence`, `machine`, `param`, `library`, `window`, `ring`, `family`) import
//! nothing else of `policy`; each family imports only leaves; the registry, resolution (`spec`),
//! the catalogue (`presets`) and `export` sit on top.

mod evidence;
mod family;
mod library;
mod machine;
mod param;
mod registry;
mod ring;
pub mod window;

pub mod ai_service;
pub mod bounds;
pub mod circuitbreaker;
pub mod cockatiel;
pub mod connector;
pub mod envoy;
pub mod failsafe;
pub mod finagle;
mod footprint;
pub mod gate;
pub mod generic;
pub mod gobreaker;
pub mod hystrix;
pub mod node;
pub mod none;
pub mod opossum;
pub mod outlier;
pub mod polly;
pub mod pybreaker;
pub mod resilience4j;
pub mod throttle;

pub mod export;
pub mod presets;
pub mod spec;

#[cfg(test)]
pub mod testkit;

pub use evidence::{Evidence, Item, Test, Unit, phrase};
pub use library::Library;
pub use machine::{Admission, Breaker, Observation, State, Ticket, Transition, Transitions};
pub use param::PolicyError;
pub use presets::{preset_params, presets};
pub use registry::{FamilyVisitor, Policy, Variant};
pub use spec::{PolicyConfig, PolicySpec};

#[cfg(test)]
mod tests {
    use super::testkit::{C, Ev::*, O, drive};
    use super::*;
    use crate::time::SimTime;

    #[test]
    fn policy_enum_dispatches_to_its_family() {
        let mut p = PolicySpec::new("circuit-gate").resolve().unwrap().build(0);
        let mut s = Vec::new();
        for i in 0..5 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        s.push((10, A));
        let r = drive(&mut p, &s);
        assert_eq!(r.tr, vec![(4, C, O, "failures_in_window")]);
        assert_eq!(p.state(), State::Open);
        assert_eq!(r.admits.last(), Some(&false));

        let mut none = PolicySpec::new("none").resolve().unwrap().build(0);
        let r = drive(&mut none, &[(0, A), (0, F(1)), (1, A), (1, F(1)), (2, A)]);
        assert_eq!(r.admit_string(), "111");
        assert!(r.tr.is_empty());
        assert_eq!(none.deadline(), None);
    }

    #[test]
    fn a_restart_carries_persisted_samples_into_the_fresh_breaker() {
        let cfg = PolicySpec::new("connector-breaker").resolve().unwrap();
        let mut old = cfg.build(0);
        let mut s = Vec::new();
        for i in 0..7 {
            s.push((i, A));
            s.push((i, F(1)));
        }
        assert!(drive(&mut old, &s).tr.is_empty(), "7 samples are under min_samples = 8");
        let after = |p: &mut Policy| drive(p, &[(10, A), (10, F(1))]).tr;
        let mut carried = old.restarted_with_samples(cfg.build(0), SimTime::ZERO);
        assert_eq!(after(&mut carried), vec![(10, C, O, "error_rate")]);
        assert!(after(&mut cfg.build(0)).is_empty(), "a fresh breaker has one sample");
        // Families without persisted samples start fresh.
        let plain = PolicySpec::new("consecutive").resolve().unwrap();
        let mut p = plain.build(0);
        drive(&mut p, &[(0, A), (0, F(1)), (1, A), (1, F(1)), (2, A), (2, F(1)), (3, A), (3, F(1))]);
        let mut restarted = p.restarted_with_samples(plain.build(0), SimTime::ZERO);
        assert!(drive(&mut restarted, &[(10, A), (10, F(1))]).tr.is_empty());
    }

    /// Every family's transitions carry evidence, and every quantity it measures reads in words.
    #[test]
    fn every_family_explains_its_transitions() {
        use crate::outcome::Verdict;
        use crate::time::Dur;
        let mut families: Vec<(&str, usize)> = Vec::new();
        for preset in presets() {
            let mut p = PolicySpec::new(preset.name).resolve().unwrap().build(1);
            let mut out = Transitions::new();
            // Slow failures every 50 ms for 30 s, then an hour later slow-free successes for 10 min.
            let mut steps: Vec<(u64, Verdict, u64)> =
                (0..600).map(|i| (i * 50, Verdict::Failure, 9_000)).collect();
            steps.extend((0..1_200).map(|i| (3_600_000 + i * 500, Verdict::Success, 5)));
            for (t_ms, verdict, lat) in steps {
                let now = SimTime(t_ms * 1000);
                if let Some(d) = p.deadline()
                    && d <= now
                {
                    p.on_deadline(now, &mut out);
                }
                if let Admission::Allow(ticket) = p.admit(now, &mut out) {
                    let obs = Observation { verdict, latency: Dur::from_millis(lat) };
                    p.record(now, ticket, obs, &mut out);
                }
            }
            let family = p.family();
            if family == "none" {
                assert!(out.is_empty());
                continue;
            }
            for (i, t) in out.iter().enumerate() {
                let evidence = out.evidence(i).expect("Transitions::new keeps the evidence");
                assert!(!evidence.is_empty(), "{}: {t:?}", preset.name);
                for item in evidence.items() {
                    let words = phrase(item.name).is_some() || item.test == Test::Fact;
                    assert!(words, "{}: no phrase for `{}`", preset.name, item.name);
                }
            }
            match families.iter_mut().find(|(f, _)| *f == family) {
                Some((_, n)) => *n += out.len(),
                None => families.push((family, out.len())),
            }
        }
        assert!(families.len() >= 17, "{families:?}");
        for (family, n) in &families {
            assert!(*n > 0, "family {family} never changed state");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Random traffic against every preset (and a few generic variants): no panic, the
        /// transitions form a chain in time order, the reported state is the last one entered,
        /// and a closed breaker never rejects.
        #[test]
        fn every_policy_keeps_its_invariants(
            ops in proptest::collection::vec((0u64..3_000, 0u8..6, 0u64..4_000), 1..300),
            seed in 0u64..1_000,
        ) {
            use crate::outcome::Verdict;
            use crate::time::Dur;
            let mut specs: Vec<PolicySpec> = presets().iter().map(|p| PolicySpec::new(p.name)).collect();
            for sets in [
                &["half_open_transition=active", "max_half_open=2s", "backoff_multiplier=2.0", "jitter=0.3"][..],
                &["late_results=drop", "probes=3", "close_rule=failure_rate", "time_window=10s", "buckets=5", "failure_rate=0.5", "min_calls=3"][..],
                &["failure_threshold=0", "time_window=10s", "latency_threshold=1s", "slow_call_rate=0.5", "min_calls=2", "comparison=>"][..],
            ] {
                let mut s = PolicySpec::new("consecutive");
                for a in sets {
                    let (k, v) = PolicySpec::parse_set(a).unwrap();
                    s.overrides.insert(k, v);
                }
                specs.push(s);
            }
            specs.push({
                let mut s = PolicySpec::new("connector-breaker");
                for a in ["min_samples=2", "cooldown=3s", "half_open_max_calls=2", "clear_window_on_close=true"] {
                    let (k, v) = PolicySpec::parse_set(a).unwrap();
                    s.overrides.insert(k, v);
                }
                s
            });
            for spec in &specs {
                let mut p = spec.resolve().unwrap().build(seed);
                let mut out = Transitions::new();
                let mut outstanding: Vec<Ticket> = Vec::new();
                let mut now = SimTime::ZERO;
                for &(dt_ms, op, lat_ms) in &ops {
                    now += Dur::from_millis(dt_ms);
                    if let Some(d) = p.deadline()
                        && d <= now
                    {
                        p.on_deadline(now, &mut out);
                    }
                    match op {
                        0..=2 => match p.admit(now, &mut out) {
                            Admission::Allow(t) => outstanding.push(t),
                            // pybreaker's lock holds a second concurrent call even when closed.
                            Admission::Wait => {}
                            Admission::Reject => proptest::prop_assert_ne!(p.state(), State::Closed),
                        },
                        _ if outstanding.is_empty() => {}
                        _ => {
                            let t = outstanding.remove((lat_ms as usize) % outstanding.len());
                            let verdict = [Verdict::Success, Verdict::Failure, Verdict::Ignored][usize::from(op - 3)];
                            p.record(now, t, Observation { verdict, latency: Dur::from_millis(lat_ms) }, &mut out);
                        }
                    }
                    if let Some(last) = out.last() {
                        proptest::prop_assert_eq!(last.to, p.state(), "{}", spec.preset);
                        proptest::prop_assert!(last.at <= now);
                    }
                }
                let mut prev = (SimTime::ZERO, State::Closed);
                for t in &out {
                    proptest::prop_assert_eq!(t.from, prev.1, "{}: {:?}", spec.preset, out);
                    proptest::prop_assert!(t.at >= prev.0, "{}: {:?}", spec.preset, out);
                    proptest::prop_assert_ne!(t.from, t.to);
                    prev = (t.at, t.to);
                }
            }
        }
    }
}
