//! gRPC's `outlier_detection` balancer on its interval timer, after grpc-go's
//! xds/internal/balancer/outlierdetection/balancer.go at the release tag v1.60.0
//! (`intervalTimerAlgorithm`, :737-778) and gRFC A50: swap the call counters, run the
//! success-rate rule (when `enforcing_success_rate` > 0: gRPC's xDS translation leaves the rule
//! out at 0) and the failure-percentage rule (likewise), then lower the multiplier of every
//! address in rotation and return the ejected ones whose time is up.
//!
//! Its differences from Envoy, each reproduced:
//! - only these two rules; a call is a success when its status is OK, every other status a
//!   failure (the consecutive counters of [`super::Detector::record`] are not kept);
//! - the ejection timestamp is the tick's time (`ejectAddress`, :876-885); a host returns at a
//!   tick strictly after `timestamp + min(base × multiplier, max(base, max))` (:764-769); the
//!   multiplier has no cap and drops by one on every tick an address is not ejected (:755-757);
//! - each rule considers every address with the request volume in the last interval, ejected
//!   ones included (`addrsWithAtLeastRequestVolume`, :784-794), and needs `minimum_hosts` of
//!   them (:827, :855);
//! - each rule stops as soon as `100 × ejected / addresses >= max_ejection_percent`, checked
//!   before each address (:834, :862), and draws an integer in [0, 100) against the enforcement
//!   percentage for each outlier (:841, :868);
//! - failure percentage ejects above its threshold, strictly (:866);
//! - grpc-go walks its addresses in Go map order; here in host order, so runs are reproducible.

use super::detector::{Detection, Detector, HostChange, Kind, Outcome, Seen};
use super::ejection;
use super::stats::success_rate_threshold;
use crate::time::SimTime;
use rand::Rng as _;

impl Detector {
    /// One gRPC interval tick at `now`.
    pub(super) fn grpc_tick(&mut self, now: SimTime, out: &mut Vec<HostChange>) {
        for m in &mut self.hosts {
            m.swap_buckets();
        }
        let n = self.hosts.len() as u16;
        let c = self.cfg.clone();
        if c.enforcing_success_rate > 0 {
            let candidates = self.with_volume(c.success_rate_request_volume);
            if candidates.len() >= c.success_rate_minimum_hosts as usize {
                let threshold =
                    success_rate_threshold(&candidates, f64::from(c.success_rate_stdev_factor) / 1000.0);
                for &(h, rate) in &candidates {
                    if !ejection::grpc_may_eject(c.max_ejection_percent, self.active, n) {
                        break;
                    }
                    if rate < threshold {
                        let seen = Seen::Percent(rate, threshold);
                        self.grpc_detect(now, h, Kind::SuccessRate, seen, c.enforcing_success_rate, out);
                    }
                }
            }
        }
        if c.enforcing_failure_percentage > 0 {
            let candidates = self.with_volume(c.failure_percentage_request_volume);
            if candidates.len() >= c.failure_percentage_minimum_hosts as usize {
                let threshold = f64::from(c.failure_percentage_threshold);
                for &(h, rate) in &candidates {
                    if !ejection::grpc_may_eject(c.max_ejection_percent, self.active, n) {
                        break;
                    }
                    if 100.0 - rate > threshold {
                        let seen = Seen::Percent(100.0 - rate, threshold);
                        let pct = c.enforcing_failure_percentage;
                        self.grpc_detect(now, h, Kind::FailurePercentage, seen, pct, out);
                    }
                }
            }
        }
        for h in 0..n {
            let i = usize::from(h);
            if !self.hosts[i].ejected {
                self.hosts[i].multiplier = self.hosts[i].multiplier.saturating_sub(1);
            } else if now > self.hosts[i].ejected_at + self.ejection_time(h) {
                self.uneject(now, h, "ejection_elapsed", out);
            }
        }
    }

    /// Each address with at least `volume` calls in the last interval, ejected ones included,
    /// with its success rate (grpc-go's `addrsWithAtLeastRequestVolume`, balancer.go:784-794).
    fn with_volume(&self, volume: u32) -> Vec<(u16, f64)> {
        let volume = u64::from(volume);
        let with = |(h, m): (usize, &super::monitor::Monitor)| {
            let (rate, v) = m.external.rate_and_volume()?;
            (v >= volume).then_some((h as u16, rate))
        };
        self.hosts.iter().enumerate().filter_map(with).collect()
    }

    /// An outlier found by gRPC's `kind` rule, which saw `seen`: ejected at the tick's time with
    /// one more multiplier step when a draw in [0, 100) falls under `pct`.
    fn grpc_detect(
        &mut self,
        now: SimTime,
        host: u16,
        kind: Kind,
        seen: Seen,
        pct: u32,
        out: &mut Vec<HostChange>,
    ) {
        let draw = self.rng.next_u64() % 100;
        if draw >= u64::from(pct) {
            self.record_detection(Detection { at: now, host, kind, outcome: Outcome::NotEnforced });
            return;
        }
        let multiplier = self.hosts[usize::from(host)].multiplier + 1;
        self.put_out(now, host, kind, seen, multiplier, crate::time::Dur::ZERO, out);
    }
}
