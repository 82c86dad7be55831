//! How long an ejected host stays out and how many hosts may be out at once: the arithmetic
//! Envoy's `DetectorImpl` and gRPC's `outlier_detection` balancer share, and the ejection limit
//! of each Envoy release. A leaf: numbers in, numbers out.

use super::super::envoy::EnvoyVersion;
use crate::time::Dur;

/// Envoy's ejection time: `min(base × multiplier, max) + jitter`
/// (`DetectorImpl::checkHostForUneject`, outlier_detection_impl.cc:366 at v1.28.0).
pub fn time(base: Dur, max: Dur, multiplier: u64, jitter: Dur) -> Dur {
    Dur::from_micros(base.micros().saturating_mul(multiplier).min(max.micros())) + jitter
}

/// The multiplier after one more Envoy ejection: one more while `multiplier × base < max + base`
/// (`DetectorImpl::ejectHost`, :511-514 at v1.28.0), so it can climb one step past the cap.
pub fn grown(base: Dur, max: Dur, multiplier: u64) -> u64 {
    let (b, m) = (base.micros(), max.micros());
    if b.saturating_mul(multiplier) < m.saturating_add(b) { multiplier + 1 } else { multiplier }
}

/// gRPC's ejection time: `min(base × multiplier, max(base, max))` (gRFC A50, "Outlier Detection
/// Behavior" step 5); the multiplier has no cap.
pub fn grpc_time(base: Dur, max: Dur, multiplier: u64) -> Dur {
    Dur::from_micros(base.micros().saturating_mul(multiplier).min(max.micros().max(base.micros())))
}

/// Whether Envoy may eject one more host with `ejected` of `hosts` already out
/// (`DetectorImpl::ejectHost`). v1.26.0 (outlier_detection_impl.cc:480-483):
/// `100 × ejected / hosts < max`, so with `max` above 0 one host can always go. v1.27.0
/// (:480-484): `100 × (ejected + 1) / hosts <= max`, or no host out yet ("at-least one host is
/// ejected"). v1.28.0 (:474-483): `100 × (ejected + 1) / hosts <= max` alone (runtime guard
/// `check_mep_on_first_eject`, on by default: "Outlier detection will always respect
/// max_ejection_percent now", changelogs/current.yaml:75-79), or no host out yet when
/// `always_eject_one_host` is set (1.31, PR #34796). `max` is capped at 100.
pub fn envoy_may_eject(
    version: EnvoyVersion,
    always_one: bool,
    max_percent: u32,
    ejected: u32,
    hosts: u16,
) -> bool {
    let max = f64::from(max_percent.min(100));
    let n = f64::from(hosts.max(1));
    match version {
        EnvoyVersion::V1_26 => 100.0 * f64::from(ejected) / n < max,
        EnvoyVersion::V1_27 => ejected == 0 || 100.0 * (f64::from(ejected) + 1.0) / n <= max,
        EnvoyVersion::V1_28 => (always_one && ejected == 0) || 100.0 * (f64::from(ejected) + 1.0) / n <= max,
    }
}

/// Whether gRPC goes on ejecting with `ejected` of `hosts` out: grpc-go v1.60.0 stops once
/// `100 × ejected / addresses >= max` (balancer.go:834 and :862). gRFC A50's text says "greater
/// than"; the release's code is followed.
pub fn grpc_may_eject(max_percent: u32, ejected: u32, hosts: u16) -> bool {
    100.0 * f64::from(ejected) / f64::from(hosts.max(1)) < f64::from(max_percent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000;

    #[test]
    fn ejection_time_is_capped_and_jittered() {
        let (base, max) = (Dur::from_secs(30), Dur::from_secs(300));
        assert_eq!(time(base, max, 1, Dur::ZERO), Dur(30 * S));
        assert_eq!(time(base, max, 11, Dur::ZERO), Dur(300 * S));
        assert_eq!(time(base, max, 2, Dur::from_millis(7)), Dur(60 * S + 7_000));
        assert_eq!(grpc_time(base, Dur::from_secs(10), 3), Dur(30 * S), "max(base, max)");
    }

    #[test]
    fn the_multiplier_climbs_one_step_past_the_cap() {
        let (base, max) = (Dur::from_secs(30), Dur::from_secs(300));
        let mut m = 0;
        for _ in 0..20 {
            m = grown(base, max, m);
        }
        assert_eq!(m, 11, "10 x 30 = 300 < 330 lets it reach 11, then 330 is not < 330");
    }

    #[test]
    fn the_limit_of_each_release() {
        use EnvoyVersion::*;
        // Three hosts, the default 10 %: 1.26 ejects one (0 < 10) and no second (33 < 10 is
        // false); 1.27 ejects the first whatever the limit, and no second (67 <= 10 is false);
        // 1.28 and later eject none (33 <= 10 is false) unless always_eject_one_host.
        assert!(envoy_may_eject(V1_26, false, 10, 0, 3));
        assert!(!envoy_may_eject(V1_26, false, 10, 1, 3));
        assert!(!envoy_may_eject(V1_26, false, 0, 0, 3), "1.26 with 0 %: none");
        assert!(envoy_may_eject(V1_27, false, 10, 0, 3));
        assert!(envoy_may_eject(V1_27, false, 0, 0, 3), "1.27: the first one even at 0 %");
        assert!(!envoy_may_eject(V1_27, false, 10, 1, 3));
        assert!(envoy_may_eject(V1_27, false, 70, 1, 3), "67 <= 70");
        assert!(!envoy_may_eject(V1_28, false, 10, 0, 3));
        assert!(envoy_may_eject(V1_28, true, 10, 0, 3));
        assert!(!envoy_may_eject(V1_28, true, 10, 1, 3));
        // 100 % with three hosts: every host may go.
        assert!(envoy_may_eject(V1_28, false, 100, 2, 3));
        // Ten hosts, 10 %: one host (10 <= 10), not two.
        assert!(envoy_may_eject(V1_28, false, 10, 0, 10));
        assert!(!envoy_may_eject(V1_28, false, 10, 1, 10));
        // gRPC goes on while the share out is under the limit: one of ten at 10 %, none at 0 %.
        assert!(grpc_may_eject(10, 0, 10) && !grpc_may_eject(10, 1, 10));
        assert!(grpc_may_eject(10, 0, 3) && !grpc_may_eject(10, 1, 3));
        assert!(!grpc_may_eject(0, 0, 10));
        assert!(grpc_may_eject(50, 1, 3) && !grpc_may_eject(50, 2, 3), "33 < 50, 67 >= 50");
    }
}
