//! How long an ejected host stays out and how many hosts may be out at once: the arithmetic
//! Envoy's `DetectorImpl` and gRPC's `outlier_detection` balancer share, and the ejection limit
//! of each Envoy release. A leaf: numbers in, numbers out.

use super::super::envoy::EnvoyVersion;
use crate::time::Dur;

/// Envoy's ejection time: `min(base × multiplier, max) + jitter`
/// (`DetectorImpl::checkHostForUneject`, outlier_detection_impl.cc @ 00c7146).
pub fn time(base: Dur, max: Dur, multiplier: u64, jitter: Dur) -> Dur {
    Dur::from_micros(base.micros().saturating_mul(multiplier).min(max.micros())) + jitter
}

/// The multiplier after one more Envoy ejection: one more while `multiplier × base < max + base`
/// (`DetectorImpl::ejectHost`), so it can climb one step past the cap.
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
/// (`DetectorImpl::ejectHost`): up to 1.26, `100 × ejected / hosts < max` (so one host always
/// can go); from 1.27 (PR #27909), `100 × (ejected + 1) / hosts <= max`, or no host out yet
/// when `always_eject_one_host` is set (1.31, PR #34796). `max` is capped at 100.
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
        _ => (always_one && ejected == 0) || 100.0 * (f64::from(ejected) + 1.0) / n <= max,
    }
}

/// Whether gRPC goes on ejecting with `ejected` of `hosts` out: it stops once the share ejected
/// is greater than `max` (gRFC A50, "Success Rate Algorithm" 3.1), so it may go one past it.
pub fn grpc_may_eject(max_percent: u32, ejected: u32, hosts: u16) -> bool {
    100.0 * f64::from(ejected) / f64::from(hosts.max(1)) <= f64::from(max_percent)
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
        // false); 1.27 and later eject none (33 <= 10 is false) unless always_eject_one_host.
        assert!(envoy_may_eject(V1_26, false, 10, 0, 3));
        assert!(!envoy_may_eject(V1_26, false, 10, 1, 3));
        assert!(!envoy_may_eject(V1_27, false, 10, 0, 3));
        assert!(!envoy_may_eject(V1_28, false, 10, 0, 3));
        assert!(envoy_may_eject(V1_28, true, 10, 0, 3));
        assert!(!envoy_may_eject(V1_28, true, 10, 1, 3));
        // 100 % with three hosts: every host may go.
        assert!(envoy_may_eject(V1_28, false, 100, 2, 3));
        // Ten hosts, 10 %: one host (10 <= 10), not two.
        assert!(envoy_may_eject(V1_28, false, 10, 0, 10));
        assert!(!envoy_may_eject(V1_28, false, 10, 1, 10));
        // gRPC goes on while the share out is not above the limit: two of ten at 10 %.
        assert!(grpc_may_eject(10, 0, 10) && grpc_may_eject(10, 1, 10) && !grpc_may_eject(10, 2, 10));
        assert!(grpc_may_eject(10, 0, 3) && !grpc_may_eject(10, 1, 3));
    }
}
