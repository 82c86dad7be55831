//! gRPC's `outlier_detection` balancer on its interval timer (gRFC A50, grpc/proposal
//! A50-xds-outlier-detection.md @ 00fa54f, "Outlier Detection Behavior"): swap the call
//! counters, run the success-rate rule (when `enforcing_success_rate` > 0) and the
//! failure-percentage rule (when `enforcing_failure_percentage` > 0), then lower the multiplier
//! of every address in rotation and return the ejected ones whose time is up.
//!
//! Its differences from Envoy, each reproduced:
//! - only these two rules; a call is a success when its status is OK, every other status a
//!   failure (the consecutive counters of [`super::Detector::record`] are not kept);
//! - the ejection timestamp is the tick's time; a host returns at a tick strictly after
//!   `timestamp + min(base × multiplier, max(base, max))`; the multiplier has no cap and drops
//!   by one on every tick an address is not ejected (step 5);
//! - each rule stops once more than `max_ejection_percent` of the addresses are ejected
//!   (checked before each address, so one more can go), and draws an integer in [0, 100)
//!   against the enforcement percentage for each outlier;
//! - failure percentage ejects above its threshold (strictly), and needs `minimum_hosts`
//!   addresses in the pool, not with volume;
//! - an address already ejected is skipped (gRFC A50 does not say; an ejected address gets no
//!   calls, so it has no volume unless calls were in flight).

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
            let candidates: Vec<(u16, f64)> = self
                .hosts
                .iter()
                .enumerate()
                .filter(|(_, m)| !m.ejected)
                .filter_map(|(h, m)| {
                    let (rate, volume) = m.external.rate_and_volume()?;
                    (volume >= u64::from(c.success_rate_request_volume)).then_some((h as u16, rate))
                })
                .collect();
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
        if c.enforcing_failure_percentage > 0 && u32::from(n) >= c.failure_percentage_minimum_hosts {
            for h in 0..n {
                if !ejection::grpc_may_eject(c.max_ejection_percent, self.active, n) {
                    break;
                }
                let m = &self.hosts[usize::from(h)];
                if m.ejected {
                    continue;
                }
                let Some((rate, volume)) = m.external.rate_and_volume() else { continue };
                let threshold = f64::from(c.failure_percentage_threshold);
                if volume >= u64::from(c.failure_percentage_request_volume) && 100.0 - rate > threshold {
                    let seen = Seen::Percent(100.0 - rate, threshold);
                    self.grpc_detect(
                        now,
                        h,
                        Kind::FailurePercentage,
                        seen,
                        c.enforcing_failure_percentage,
                        out,
                    );
                }
            }
        }
        for h in 0..n {
            let i = usize::from(h);
            if !self.hosts[i].ejected {
                self.hosts[i].multiplier = self.hosts[i].multiplier.saturating_sub(1);
            } else if now > self.hosts[i].ejected_at + self.ejection_time(h) {
                self.uneject(now, h, out);
            }
        }
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
