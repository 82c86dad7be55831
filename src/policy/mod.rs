//! Breaker state machines. Every family implements [`Breaker`]; [`Policy`] is the enum the
//! engine drives (static dispatch on the hot path). A policy knows nothing of the upstream: it is
//! told when a call wants to start ([`Breaker::admit`]) and how each admitted call ended
//! ([`Breaker::record`]), both at simulated times chosen by the engine.

use crate::outcome::Verdict;
use crate::time::{Dur, SimTime};

/// The three states every breaker reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// Calls pass.
    Closed,
    /// Calls are rejected.
    Open,
    /// Some calls pass as probes of recovery.
    HalfOpen,
}

impl State {
    /// Every state, in a fixed order.
    pub const ALL: [State; 3] = [State::Closed, State::Open, State::HalfOpen];

    /// Position in [`State::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in files: `closed`, `open`, `half_open`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Closed => "closed",
            State::Open => "open",
            State::HalfOpen => "half_open",
        }
    }
}

/// One state change, with the rule that caused it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// When it happened.
    pub at: SimTime,
    /// The state left.
    pub from: State,
    /// The state entered.
    pub to: State,
    /// A short snake_case reason, e.g. `consecutive_failures`, `cooldown_elapsed`, `probe_failed`.
    pub reason: &'static str,
}

/// Handed out by [`Breaker::admit`] and given back to [`Breaker::record`] with the call's result,
/// so a policy can tell a probe from an ordinary call and a result of an earlier generation from
/// a current one. Its meaning belongs to the policy that issued it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ticket {
    /// The policy's generation (or epoch) when the call was admitted.
    pub generation: u64,
    /// True when the call was admitted as a half-open probe.
    pub probe: bool,
}

/// The answer to "may this call start now?".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Send the call; return the ticket with its result.
    Allow(Ticket),
    /// Do not send it (the client falls back).
    Reject,
    /// Hold it: the engine parks the call and offers it again (in arrival order) after the
    /// breaker next records a result or runs its timer, as a caller blocked on the library's
    /// lock or on the half-open probe would wake. The wait counts in the caller's latency.
    Wait,
}

/// How one admitted call ended, as the breaker is told.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Success, failure or ignored, from the policy's classifier.
    pub verdict: Verdict,
    /// How long the call took as the client saw it (capped at the client's timeout).
    pub latency: Dur,
}

/// Where a policy reports its state changes. The engine passes one reusable buffer, so
/// reporting allocates nothing once the buffer has grown.
pub type Transitions = Vec<Transition>;

/// A breaker state machine, driven by the engine in event order.
pub trait Breaker {
    /// A call wants to start at `now`.
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission;
    /// A call admitted with `ticket` completed at `now`.
    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions);
    /// The current state (without side effects).
    fn state(&self) -> State;
    /// The next instant at which the policy wants [`Breaker::on_deadline`] called (active
    /// transitions, periodic evaluation), or `None`.
    fn deadline(&self) -> Option<SimTime> {
        None
    }
    /// Called by the engine at (or after) the instant [`Breaker::deadline`] returned.
    fn on_deadline(&mut self, _now: SimTime, _out: &mut Transitions) {}
}

/// A policy that never rejects: the baseline "no breaker" run.
#[derive(Clone, Debug, Default)]
pub struct NoBreaker;

impl Breaker for NoBreaker {
    fn admit(&mut self, _now: SimTime, _out: &mut Transitions) -> Admission {
        Admission::Allow(Ticket::default())
    }
    fn record(&mut self, _now: SimTime, _ticket: Ticket, _obs: Observation, _out: &mut Transitions) {}
    fn state(&self) -> State {
        State::Closed
    }
}

pub mod ai_service;
pub mod bounds;
pub mod cockatiel;
pub mod connector;
pub mod envoy;
pub mod export;
pub mod failsafe;
pub mod finagle;
mod footprint;
pub mod gate;
pub mod generic;
pub mod gobreaker;
pub mod hystrix;
pub mod node;
pub mod opossum;
pub mod polly;
pub mod presets;
pub mod pybreaker;
pub mod resilience4j;
mod restart;
pub mod spec;
pub mod throttle;
pub mod window;

#[cfg(test)]
pub(crate) mod testkit;

pub use ai_service::{AiServiceBreaker, AiServiceConfig};
pub use cockatiel::{CockatielBreaker, CockatielConfig};
pub use connector::{ConnectorBreaker, ConnectorConfig};
pub use envoy::{EnvoyBreaker, EnvoyConfig};
pub use failsafe::{FailsafeBreaker, FailsafeConfig};
pub use finagle::{FinagleBreaker, FinagleConfig};
pub use gate::{CircuitGate, GateConfig};
pub use generic::{CloseRule, Comparison, GenericBreaker, GenericConfig, HalfOpenTransition, LateResults};
pub use gobreaker::{GobreakerBreaker, GobreakerConfig};
pub use hystrix::{HystrixBreaker, HystrixConfig};
pub use node::{NodeBreaker, NodeConfig};
pub use opossum::{OpossumBreaker, OpossumConfig};
pub use polly::{PollyBreaker, PollyConfig};
pub use presets::{ParamDoc, PresetInfo, preset_params, presets};
pub use pybreaker::{PybreakerBreaker, PybreakerConfig};
pub use resilience4j::{Resilience4jBreaker, Resilience4jConfig};
pub use spec::{FamilyConfig, PolicyConfig, PolicyError, PolicySpec};
pub use throttle::{SreThrottle, ThrottleConfig};

/// Every concrete policy, so the engine drives them with static dispatch (a `match`, no
/// virtual call, no box) on the hot path. Built by [`PolicyConfig::build`].
///
/// Transition reasons used across families (the `reason` of [`Transition`]):
/// `consecutive_failures`, `failures_in_window`, `count_failure_rate`, `failure_rate`,
/// `slow_call_rate`, `latency_percentile`, `error_rate`, `p95_latency`, `error_percentage`
/// (Hystrix, opossum), `success_rate` (Finagle), `consecutive_5xx` (Envoy), `throttling`
/// (SRE throttle) (closed → open); `cooldown_elapsed` (open → half-open); `probe_successes`,
/// `probe_failure_rate_below` (half-open → closed); `late_success` (open → closed, seed 001
/// only), `ejection_elapsed` (Envoy: open → closed, no half-open), `throttle_released`;
/// `probe_failed`, `probe_failure_rate`, `half_open_timeout` (half-open → open).
// One policy lives per client instance for a whole run: the size of the largest variant costs
// nothing, while a box would add an indirection to every call on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Policy {
    /// Never rejects: the baseline.
    None(NoBreaker),
    /// The composable family (`consecutive`, `windowed`, and anything built from its blocks).
    Generic(GenericBreaker),
    /// Seed 000's windowed error-rate + p95 breaker.
    Connector(ConnectorBreaker),
    /// Seed 001's sliding-window gate.
    Gate(CircuitGate),
    /// Seed 002's consecutive breaker with a half-open success threshold.
    AiService(AiServiceBreaker),
    /// Seed 003's Node.js consecutive breaker.
    Node(NodeBreaker),
    /// Google SRE client-side adaptive throttling.
    Throttle(SreThrottle),
    /// Envoy outlier detection (consecutive 5xx) for one host.
    Envoy(EnvoyBreaker),
    /// Finagle's FailureAccrualFactory with the default policy.
    Finagle(FinagleBreaker),
    /// failsafe-go's count-based breaker.
    Failsafe(FailsafeBreaker),
    /// sony/gobreaker v2's generation-counting breaker.
    Gobreaker(GobreakerBreaker),
    /// pybreaker's lock-serialized breaker.
    Pybreaker(PybreakerBreaker),
    /// cockatiel's CircuitBreakerPolicy with a consecutive, count or sampling breaker.
    Cockatiel(CockatielBreaker),
    /// Polly v8's advanced circuit breaker.
    Polly(PollyBreaker),
    /// opossum's breaker: fires-based error percentage, active half-open.
    Opossum(OpossumBreaker),
    /// Hystrix 1.5's breaker over its 500 ms health-count snapshots.
    Hystrix(HystrixBreaker),
    /// Resilience4j's CircuitBreakerStateMachine (count- or time-based).
    Resilience4j(Resilience4jBreaker),
}

macro_rules! dispatch {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Policy::None($b) => $e,
            Policy::Generic($b) => $e,
            Policy::Connector($b) => $e,
            Policy::Gate($b) => $e,
            Policy::AiService($b) => $e,
            Policy::Node($b) => $e,
            Policy::Throttle($b) => $e,
            Policy::Envoy($b) => $e,
            Policy::Finagle($b) => $e,
            Policy::Failsafe($b) => $e,
            Policy::Gobreaker($b) => $e,
            Policy::Pybreaker($b) => $e,
            Policy::Cockatiel($b) => $e,
            Policy::Polly($b) => $e,
            Policy::Opossum($b) => $e,
            Policy::Hystrix($b) => $e,
            Policy::Resilience4j($b) => $e,
        }
    };
}

impl Breaker for Policy {
    #[inline]
    fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
        dispatch!(self, b => b.admit(now, out))
    }
    #[inline]
    fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
        dispatch!(self, b => b.record(now, ticket, obs, out))
    }
    #[inline]
    fn state(&self) -> State {
        dispatch!(self, b => b.state())
    }
    #[inline]
    fn deadline(&self) -> Option<SimTime> {
        dispatch!(self, b => b.deadline())
    }
    #[inline]
    fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
        dispatch!(self, b => b.on_deadline(now, out))
    }
}

/// Appends a transition to `out` (shared by the families).
#[inline]
pub(crate) fn emit(out: &mut Transitions, at: SimTime, from: State, to: State, reason: &'static str) {
    out.push(Transition { at, from, to, reason });
}

#[cfg(test)]
mod tests {
    use super::testkit::{C, Ev::*, O, drive};
    use super::*;

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
