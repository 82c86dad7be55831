//! The family registry: one line per family. From it [`families!`] generates the [`Policy`]
//! enum the engine drives (static dispatch: a `match`, no box, no virtual call, nothing
//! allocated per call), the [`FamilyConfig`] enum resolution works on, and the preset catalogue
//! in registry order. Adding a family is its file plus one line here.

use super::evidence::Evidence;
use super::family::Family;
use super::library::{ExportInput, Library};
use super::machine::{Admission, Breaker, Observation, State, Ticket, Transitions};
use super::param::{ParamMeta, Params, PolicyError};
use super::presets::PresetInfo;
use super::spec::{merge, table_of};
use super::{
    ai_service, circuitbreaker, cockatiel, connector, envoy, failsafe, finagle, gate, generic, gobreaker,
    hystrix, node, none, opossum, polly, pybreaker, resilience4j, throttle,
};
use crate::outcome::Classifier;
use crate::time::{Dur, SimTime};
use crate::{Error, Result};
use std::sync::OnceLock;

families! {
    None => none::NoneConfig,
    Generic => generic::GenericConfig,
    Connector => connector::ConnectorConfig,
    Gate => gate::GateConfig,
    AiService => ai_service::AiServiceConfig,
    Node => node::NodeConfig,
    Resilience4j => resilience4j::Resilience4jConfig,
    Hystrix => hystrix::HystrixConfig,
    Opossum => opossum::OpossumConfig,
    Polly => polly::PollyConfig,
    Cockatiel => cockatiel::CockatielConfig,
    Pybreaker => pybreaker::PybreakerConfig,
    Circuitbreaker => circuitbreaker::CircuitbreakerConfig,
    Gobreaker => gobreaker::GobreakerConfig,
    Failsafe => failsafe::FailsafeConfig,
    Finagle => finagle::FinagleConfig,
    Envoy => envoy::EnvoyConfig,
    Throttle => throttle::ThrottleConfig;
    // Test-only families: the file beside this one, its module declared here.
    tests {
        Toy => "toy.rs" toy::ToyConfig,
    }
}

/// A family whose breaker a [`Policy`] can hold: the concrete breaker out of the enum, for
/// code monomorphised per family ([`FamilyConfig::visit`]).
pub trait Variant: Family {
    /// The breaker in `policy`, which must be of this family (panics otherwise).
    fn of(policy: &mut Policy) -> &mut Self::Breaker;
    /// As [`Variant::of`], read-only.
    fn of_ref(policy: &Policy) -> &Self::Breaker;
}

/// Code generic over a family, run by [`FamilyConfig::visit`] for the family of a
/// configuration.
pub trait FamilyVisitor {
    /// What the visit returns.
    type Out;
    /// Runs with the family `F`.
    fn visit<F: Variant>(self) -> Self::Out;
}

/// Generates [`Policy`], [`FamilyConfig`] and their per-family dispatch from the registry lines
/// (`Variant => family::Config`), then `tests { Variant => "file.rs" module::Config }` for
/// families compiled only in tests, whose module it declares and which it keeps out of the
/// listed catalogue (they still resolve by name).
macro_rules! families {
    (
        $( $variant:ident => $family:ty ),* ;
        tests { $( $tvariant:ident => $file:literal $module:ident :: $tfamily:ident ),* $(,)? }
    ) => {
        $( #[cfg(test)] #[path = $file] mod $module; )*
        families!(@all [$( [] $variant => $family, )* $( [#[cfg(test)]] $tvariant => $module::$tfamily, )*]);
        /// Every preset of every family, in registry order, with how many come first from the
        /// product's families (the rest are test-only).
        fn all_presets() -> &'static (Vec<PresetInfo>, usize) {
            static ALL: OnceLock<(Vec<PresetInfo>, usize)> = OnceLock::new();
            ALL.get_or_init(|| {
                let mut all = Vec::new();
                $( all.extend(<$family as Family>::PRESETS.iter().map(PresetInfo::of::<$family>)); )*
                let listed = all.len();
                $(
                    #[cfg(test)]
                    all.extend(<$module::$tfamily as Family>::PRESETS.iter().map(PresetInfo::of::<$module::$tfamily>));
                )*
                (all, listed)
            })
        }
    };
    (@all [$( [$(#[$attr:meta])*] $variant:ident => $family:ty, )*]) => {
        /// Every concrete policy, so the engine drives them with static dispatch (a `match`, no
        /// virtual call, no box) on the hot path. Built by
        /// [`PolicyConfig::build`](super::PolicyConfig::build).
        ///
        /// Transition reasons used across families (the `reason` of
        /// [`Transition`](super::Transition)): `consecutive_failures`, `failures_in_window`,
        /// `count_failure_rate`, `failure_rate`, `slow_call_rate`, `latency_percentile`,
        /// `error_rate`, `p95_latency`, `error_percentage` (Hystrix, opossum), `success_rate`
        /// (Finagle), `consecutive_5xx` (Envoy), `throttling` (SRE throttle) (closed → open);
        /// `cooldown_elapsed` (open → half-open); `probe_successes`, `probe_failure_rate_below`
        /// (half-open → closed); `late_success` (open → closed, seed 001 only),
        /// `ejection_elapsed` (Envoy: open → closed, no half-open), `throttle_released`;
        /// `probe_failed`, `probe_failure_rate`, `half_open_timeout` (half-open → open).
        // One policy lives per client instance for a whole run: the size of the largest variant
        // costs nothing, while a box would add an indirection to every call on the hot path.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug)]
        pub enum Policy {
            $(
                $(#[$attr])*
                #[doc = concat!("The state machine of `", stringify!($family), "`.")]
                $variant(<$family as Family>::Breaker),
            )*
        }

        impl Breaker for Policy {
            #[inline]
            fn admit(&mut self, now: SimTime, out: &mut Transitions) -> Admission {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.admit(now, out), )* }
            }
            #[inline]
            fn record(&mut self, now: SimTime, ticket: Ticket, obs: Observation, out: &mut Transitions) {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.record(now, ticket, obs, out), )* }
            }
            #[inline]
            fn state(&self) -> State {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.state(), )* }
            }
            fn evidence(&self, now: SimTime, ev: &mut Evidence) {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.evidence(now, ev), )* }
            }
            #[inline]
            fn deadline(&self) -> Option<SimTime> {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.deadline(), )* }
            }
            #[inline]
            fn on_deadline(&mut self, now: SimTime, out: &mut Transitions) {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.on_deadline(now, out), )* }
            }
            #[inline]
            fn wait_key(&self) -> u64 {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.wait_key(), )* }
            }
            #[inline]
            fn holds(&self, key: u64) -> bool {
                match self { $( $(#[$attr])* Policy::$variant(b) => b.holds(key), )* }
            }
        }

        impl Policy {
            /// The family's name, e.g. `connector`.
            pub fn family(&self) -> &'static str {
                match self { $( $(#[$attr])* Policy::$variant(_) => <$family as Family>::NAME, )* }
            }

            /// `fresh` (a newly built breaker of the same configuration) with this breaker's
            /// samples reloaded at `now`, as seed 000 does at a job's start ("carry the facts,
            /// not the state"). The state (open, cooldown) is not carried; families without a
            /// persisted sample list start fresh.
            pub fn restarted_with_samples(&self, mut fresh: Policy, now: SimTime) -> Policy {
                match (self, &mut fresh) {
                    $(
                        $(#[$attr])*
                        (Policy::$variant(old), Policy::$variant(new)) => {
                            <$family as Family>::carry_samples(old, new, now)
                        }
                    )*
                    _ => {}
                }
                fresh
            }
        }

        /// The family-specific part of a resolved policy: one family's parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum FamilyConfig {
            $(
                $(#[$attr])*
                #[doc = concat!("The parameters of `", stringify!($family), "`.")]
                $variant($family),
            )*
        }

        impl FamilyConfig {
            /// The defaults and default classifier of preset `name`.
            pub fn preset_default(name: &str) -> Option<(FamilyConfig, Classifier)> {
                $(
                    $(#[$attr])*
                    if let Some(p) = <$family as Family>::PRESETS.iter().find(|p| p.name == name) {
                        return Some((FamilyConfig::$variant((p.config)()), p.classifier));
                    }
                )*
                None
            }

            /// The family's parameter descriptions, in order.
            pub fn meta(&self) -> &'static [ParamMeta] {
                match self { $( $(#[$attr])* FamilyConfig::$variant(_) => <$family as Params>::PARAMS, )* }
            }

            /// The parameters as a TOML table.
            pub fn table(&self) -> toml::Table {
                match self { $( $(#[$attr])* FamilyConfig::$variant(c) => table_of(c), )* }
            }

            /// The same family with `o` merged over these values, validated.
            pub fn with_overrides(&self, o: &toml::Table) -> Result<FamilyConfig, PolicyError> {
                Ok(match self { $( $(#[$attr])* FamilyConfig::$variant(c) => FamilyConfig::$variant(merge(c, o)?), )* })
            }

            /// A fresh state machine of this configuration.
            pub fn build(&self, seed: u64) -> Policy {
                match self { $( $(#[$attr])* FamilyConfig::$variant(c) => Policy::$variant(c.build(seed)), )* }
            }

            /// See [`Family::imposed_call_timeout`].
            pub fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
                match self { $( $(#[$attr])* FamilyConfig::$variant(c) => c.imposed_call_timeout(), )* }
            }

            /// The configuration in `lib`'s syntax, or why it cannot be written.
            pub fn export(&self, lib: Library, input: &ExportInput) -> Result<String> {
                match self {
                    $(
                        $(#[$attr])*
                        FamilyConfig::$variant(c) => {
                            c.export(lib, input).unwrap_or_else(|| Err(Error::invalid(<$family as Family>::refusal(lib))))
                        }
                    )*
                }
            }
        }

        $(
            $(#[$attr])*
            impl Variant for $family {
                #[inline(always)]
                fn of(policy: &mut Policy) -> &mut Self::Breaker {
                    match policy {
                        Policy::$variant(b) => b,
                        #[allow(unreachable_patterns)]
                        _ => unreachable!("a run's breakers are all of its policy's family"),
                    }
                }
                #[inline(always)]
                fn of_ref(policy: &Policy) -> &Self::Breaker {
                    match policy {
                        Policy::$variant(b) => b,
                        #[allow(unreachable_patterns)]
                        _ => unreachable!("a run's breakers are all of its policy's family"),
                    }
                }
            }
        )*

        impl FamilyConfig {
            /// Calls `visitor` with this configuration's family as a type, so a caller can run
            /// code monomorphised for its breaker (the engine's direct path).
            pub fn visit<V: FamilyVisitor>(&self, visitor: V) -> V::Out {
                match self { $( $(#[$attr])* FamilyConfig::$variant(_) => visitor.visit::<$family>(), )* }
            }
        }

    };
}
use families;

/// The product's presets, in registry order (what `presets` lists).
pub fn catalogue() -> &'static [PresetInfo] {
    let (all, listed) = all_presets();
    &all[..*listed]
}

/// Every preset that resolves by name: the catalogue, plus the test-only families' in tests.
pub fn resolvable() -> &'static [PresetInfo] {
    &all_presets().0
}
