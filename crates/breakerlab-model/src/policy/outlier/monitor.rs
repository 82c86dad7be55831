//! One host's outlier-detection state as one client sees it: its consecutive counters, its two
//! success-rate accumulators (external and local origin) and its ejection bookkeeping, after
//! Envoy's `DetectorHostMonitorImpl` and `SuccessRateAccumulator` (outlier_detection_impl.cc
//! :863-883 at v1.28.0). A leaf.

use crate::time::{Dur, SimTime};

/// Requests and successes counted over one interval.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Requests counted.
    pub total: u64,
    /// Of those, successes.
    pub success: u64,
}

/// Envoy's `SuccessRateAccumulator`: the bucket being written, and the one the interval timer
/// last swapped out, which the success-rate and failure-percentage rules read.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Accumulator {
    current: Bucket,
    backup: Bucket,
}

impl Accumulator {
    /// One request, a success or not.
    #[inline]
    pub fn add(&mut self, success: bool) {
        self.current.total += 1;
        self.current.success += u64::from(success);
    }

    /// `updateCurrentWriter`: the interval's counts become the ones read, a fresh bucket starts.
    pub fn swap(&mut self) {
        self.backup = std::mem::take(&mut self.current);
    }

    /// `getSuccessRateAndVolume`: the last interval's success rate in percent and its volume;
    /// `None` when it had no request.
    pub fn rate_and_volume(&self) -> Option<(f64, u64)> {
        let b = self.backup;
        (b.total > 0).then(|| (b.success as f64 * 100.0 / b.total as f64, b.total))
    }
}

/// One host's monitor.
#[derive(Clone, Debug, Default)]
pub struct Monitor {
    /// Ejected (`FAILED_OUTLIER_CHECK`).
    pub ejected: bool,
    /// Consecutive 5xx (including local-origin failures when not split).
    pub consecutive_5xx: u32,
    /// Consecutive gateway failures (502, 503, 504).
    pub consecutive_gateway: u32,
    /// Consecutive local-origin failures (split only).
    pub consecutive_local: u32,
    /// The ejection-time multiplier (`ejectTimeBackoff`).
    pub multiplier: u64,
    /// Ejections so far.
    pub ejections: u32,
    /// The latest ejection's time.
    pub ejected_at: SimTime,
    /// The latest un-ejection's time, once there was one.
    pub returned_at: Option<SimTime>,
    /// The jitter drawn at the latest ejection.
    pub jitter: Dur,
    /// External-origin success rate (HTTP status).
    pub external: Accumulator,
    /// Local-origin success rate (split only).
    pub local: Accumulator,
}

impl Monitor {
    /// The consecutive counters back to zero (`resetConsecutive5xx` and friends), as an
    /// un-ejection does.
    pub fn reset_consecutive(&mut self) {
        self.consecutive_5xx = 0;
        self.consecutive_gateway = 0;
        self.consecutive_local = 0;
    }

    /// `updateCurrentSuccessRateBucket` on both accumulators.
    pub fn swap_buckets(&mut self) {
        self.external.swap();
        self.local.swap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_read_the_last_interval_only() {
        let mut a = Accumulator::default();
        a.add(true);
        a.add(false);
        assert_eq!(a.rate_and_volume(), None, "nothing swapped out yet");
        a.swap();
        assert_eq!(a.rate_and_volume(), Some((50.0, 2)));
        a.add(true);
        assert_eq!(a.rate_and_volume(), Some((50.0, 2)), "this interval's counts are not read");
        a.swap();
        assert_eq!(a.rate_and_volume(), Some((100.0, 1)));
        a.swap();
        assert_eq!(a.rate_and_volume(), None, "an idle interval has no rate");
    }
}
