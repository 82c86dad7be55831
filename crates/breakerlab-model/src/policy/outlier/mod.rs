//! Service-mesh outlier detection over a pool of hosts: one [`Detector`] per client (an Envoy
//! sidecar, a gRPC channel), fed each attempt's result with its host and ticking on its
//! interval timer, after Envoy's `DetectorImpl` and gRPC's `outlier_detection` balancer. The
//! configuration is the `envoy` family's ([`EnvoyConfig`]): on a scenario with a pool the
//! engine runs a detector per client in place of a breaker, and the client's balancer skips the
//! ejected hosts unless the pool is in panic ([`in_rotation`]).
//!
//! Every rule is cited by function in its file (`detector`, `grpc`, `ejection`, `stats`), and
//! in docs/service-mesh.md. Pure model: no I/O.

mod detector;
pub mod ejection;
pub mod export;
mod grpc;
mod health;
mod monitor;
mod stats;

#[cfg(test)]
pub use detector::Kind;
pub use detector::{Detection, Detector, HostChange, Outcome};

use super::envoy::EnvoyConfig;
use super::registry::{FamilyConfig, Policy};
use super::spec::PolicyConfig;

impl PolicyConfig {
    /// The outlier-detection settings when this policy is one (the `envoy` family's presets):
    /// on a pool of hosts the engine runs a [`Detector`] per client for it.
    pub fn outlier(&self) -> Option<&EnvoyConfig> {
        match self.family_config() {
            FamilyConfig::Envoy(c) => Some(c),
            _ => None,
        }
    }
}

/// The breaker a client runs in front of its balancer when its policy is outlier detection:
/// none (every call goes to the balancer, which the detector steers).
pub fn pass_through() -> Policy {
    Policy::None(super::none::NoBreaker)
}

/// The hosts `detector`'s client may send to, into `usable` (ascending: neither ejected nor
/// marked failed by active health checks), and whether the pool is in panic: Envoy's `LoadBalancerBase::isHostSetInPanic`
/// (source/extensions/load_balancing_policies/common/load_balancer_impl.cc) puts a host set in
/// panic when `100 × hosts in rotation / hosts < healthy_panic_threshold`, and a set in panic
/// balances over every host, ejected ones too. A threshold of 0 never panics: with every host
/// ejected there is none to send to (Envoy's "no healthy upstream").
pub fn in_rotation(detector: &Detector, hosts: u16, panic_threshold: f64, usable: &mut Vec<u16>) -> bool {
    usable.clear();
    usable.extend((0..hosts).filter(|h| !detector.out_of_rotation(*h)));
    let healthy_percent = 100.0 * usable.len() as f64 / f64::from(hosts.max(1));
    let panic = healthy_percent < panic_threshold;
    if panic {
        usable.clear();
        usable.extend(0..hosts);
    }
    panic
}

#[cfg(test)]
mod tests;
