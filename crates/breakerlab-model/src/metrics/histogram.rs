//! A log-linear latency histogram: one fixed bucket array allocated once, nothing allocated per
//! recorded value, percentiles within 0.79% of the true value.
//!
//! Layout (in microseconds): values below 64 µs get one bucket each (exact). Every octave
//! `[2^e, 2^(e+1))` for `e` in 6..=63 is split into 64 equal sub-buckets of width `2^(e-6)`.
//! A value is reported as its bucket's midpoint, so the error is at most half a bucket width,
//! `2^(e-7)`, against a value of at least `2^e`: at most 1/128 ≈ 0.78%. The whole `u64` range is
//! covered (3,776 buckets, 30 KiB), so no value is ever clamped.
//!
//! Percentile definition (nearest rank): the `q`-th percentile of `n` recorded values is the
//! value of rank `max(1, ceil(q · n))` in ascending order, reported as its bucket's midpoint
//! clamped to the recorded minimum and maximum, which are kept exactly (rank 1 is the minimum,
//! rank `n` the maximum, both exact).

use crate::time::Dur;
use std::fmt;

/// Bits of linear resolution inside one octave (64 sub-buckets).
const SUB_BITS: u32 = 6;
/// Sub-buckets per octave, and also the count of exact buckets below the first octave.
const SUB: u64 = 1 << SUB_BITS;
/// Total number of buckets: 64 exact ones, then 64 per octave for exponents 6..=63.
pub const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;
/// Places in the bucket array: [`BUCKETS`] rounded up to a power of two, so a bucket index
/// masked to it needs no bounds check (the places past the last bucket stay 0).
const PLACES: usize = BUCKETS.next_power_of_two();

/// Counts of durations in log-linear buckets; see the module documentation for the error bound
/// and the percentile definition.
#[derive(Clone, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: Box<[u64; PLACES]>,
    total: u64,
    min: u64,
    max: u64,
    sum: u128,
}

/// The bucket holding `v` microseconds, without a branch (so the two histograms an answer
/// goes into share one computation): the octave's shift is the bit length of `v >> 7`, 0 below
/// 128 (values below 64 are their own bucket and `[64, 128)` has buckets of width 1), and the
/// bucket is `shift · 64 + (v >> shift)`, which for `v >= 64` is `64 + shift · 64 + m` with
/// `m = (v >> shift) − 64` the sub-bucket of the layout above. That bit length is the highest
/// set bit of `(v >> 6) | 1`, never 0, so it needs no test for zero.
#[inline(always)]
fn bucket_index(v: u64) -> usize {
    let shift = ((v >> SUB_BITS) | 1).ilog2();
    ((u64::from(shift) << SUB_BITS) + (v >> shift)) as usize
}

/// Lowest value and width of bucket `i`.
fn bucket_bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        (i, 1)
    } else {
        let shift = (i - SUB) / SUB;
        let m = (i - SUB) % SUB;
        ((SUB + m) << shift, 1u64 << shift)
    }
}

/// The value bucket `i` reports: its midpoint.
fn bucket_mid(i: usize) -> u64 {
    let (lo, width) = bucket_bounds(i);
    lo + width / 2
}

impl LatencyHistogram {
    /// Non-empty buckets in increasing order: (exclusive upper edge, count).
    pub fn buckets(&self) -> impl Iterator<Item = (Dur, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| {
            let (low, width) = bucket_bounds(i);
            (Dur(low.saturating_add(width)), *c)
        })
    }

    /// An empty histogram (allocates its bucket array once).
    pub fn new() -> LatencyHistogram {
        LatencyHistogram {
            // Zeroed by the allocator (untouched pages stay unmapped); the conversion cannot fail.
            counts: vec![0u64; PLACES]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| Box::new([0; PLACES])),
            total: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }

    /// Adds one value. Allocates nothing.
    #[inline(always)]
    pub fn record(&mut self, d: Dur) {
        let v = d.micros();
        self.add(v, bucket_index(v));
    }

    /// Adds value `v`, of bucket `bucket`.
    #[inline(always)]
    fn add(&mut self, v: u64, bucket: usize) {
        self.count_in(v, bucket);
        self.sum += u128::from(v);
    }

    /// [`LatencyHistogram::add`] but for the sum.
    #[inline(always)]
    fn count_in(&mut self, v: u64, bucket: usize) {
        self.counts[bucket & (PLACES - 1)] += 1;
        self.total += 1;
        // Branches, not selects: both are rarely taken, and a store is saved.
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Smallest recorded value (exact), `None` when empty.
    pub fn min(&self) -> Option<Dur> {
        (self.total > 0).then_some(Dur(self.min))
    }

    /// Largest recorded value (exact), `None` when empty.
    pub fn max(&self) -> Option<Dur> {
        (self.total > 0).then_some(Dur(self.max))
    }

    /// Exact mean in microseconds, `None` when empty.
    pub fn mean_micros(&self) -> Option<f64> {
        (self.total > 0).then(|| self.sum as f64 / self.total as f64)
    }

    /// The percentile `permille / 10` (500 = p50, 950 = p95, 990 = p99, 999 = p99.9) by the
    /// nearest-rank definition in the module documentation; `None` when empty. `permille` above
    /// 1000 is treated as 1000 (the maximum).
    pub fn percentile_permille(&self, permille: u32) -> Option<Dur> {
        if self.total == 0 {
            return None;
        }
        let permille = u128::from(permille.min(1000));
        let rank = ((u128::from(self.total) * permille).div_ceil(1000)).max(1) as u64;
        if rank == 1 {
            return Some(Dur(self.min));
        }
        if rank == self.total {
            return Some(Dur(self.max));
        }
        let (low, high) = (bucket_index(self.min), bucket_index(self.max) & (PLACES - 1));
        if rank > self.total / 2 {
            // A high rank is found sooner from the top: its bucket is the highest whose count
            // and those above it exceed the `total − rank` values ranked above it.
            let above = self.total - rank;
            let mut seen = 0u64;
            for i in (low..=high).rev() {
                seen += self.counts[i];
                if seen > above {
                    return Some(Dur(bucket_mid(i).clamp(self.min, self.max)));
                }
            }
            return Some(Dur(self.max));
        }
        // No bucket below the minimum's holds anything: the count starts there.
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate().skip(low) {
            seen += c;
            if seen >= rank {
                return Some(Dur(bucket_mid(i).clamp(self.min, self.max)));
            }
        }
        Some(Dur(self.max))
    }

    /// Empties the histogram, touching only the buckets between the recorded min and max.
    pub fn clear(&mut self) {
        if self.total > 0 {
            let (a, b) = (bucket_index(self.min), bucket_index(self.max));
            self.counts[a..=b].fill(0);
        }
        self.total = 0;
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
    }

    /// Adds every value of `other` (for pooling runs).
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.total == 0 {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }
}

/// A histogram read only for one percentile at a time, then emptied (a timeline bin's p95): a
/// [`LatencyHistogram`] without the running sum, which nothing reads here, so a value costs a few
/// instructions less.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PercentileHistogram(LatencyHistogram);

impl PercentileHistogram {
    /// An empty histogram (allocates its bucket array once).
    pub fn new() -> PercentileHistogram {
        PercentileHistogram(LatencyHistogram::new())
    }

    /// Adds one value. Allocates nothing.
    #[inline(always)]
    pub fn record(&mut self, d: Dur) {
        let v = d.micros();
        self.0.count_in(v, bucket_index(v));
    }

    /// Adds one value here and to `whole`, its bucket found once. Allocates nothing.
    #[inline(always)]
    pub fn record_with(&mut self, whole: &mut LatencyHistogram, d: Dur) {
        let v = d.micros();
        let bucket = bucket_index(v);
        self.0.count_in(v, bucket);
        whole.add(v, bucket);
    }

    /// The percentile `permille / 10` ([`LatencyHistogram::percentile_permille`]), `None` when
    /// empty; empties the histogram.
    pub fn take_percentile(&mut self, permille: u32) -> Option<Dur> {
        let p = self.0.percentile_permille(permille);
        self.0.clear();
        p
    }
}

impl Default for LatencyHistogram {
    fn default() -> LatencyHistogram {
        LatencyHistogram::new()
    }
}

impl fmt::Debug for LatencyHistogram {
    /// A summary only: the 3,776 buckets would drown any test failure message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyHistogram")
            .field("count", &self.total)
            .field("min", &self.min())
            .field("max", &self.max())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_whole_range() {
        // Consecutive buckets are adjacent and every bucket's bounds map back to it.
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bucket_bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(bucket_index(lo), i);
            assert_eq!(bucket_index(lo + (w - 1)), i);
            next = lo.wrapping_add(w);
        }
        assert_eq!(next, 0, "the last bucket ends at 2^64");
        assert_eq!(bucket_index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
            h.record(Dur(v));
        }
        // n = 10: p50 rank ceil(5) = 5 -> 5; p95 rank ceil(9.5) = 10 -> 10; p0 rank max(1, 0) = 1.
        assert_eq!(h.percentile_permille(500), Some(Dur(5)));
        assert_eq!(h.percentile_permille(950), Some(Dur(10)));
        assert_eq!(h.percentile_permille(0), Some(Dur(1)));
        assert_eq!(h.min(), Some(Dur(1)));
        assert_eq!(h.max(), Some(Dur(10)));
        assert_eq!(h.mean_micros(), Some(5.5));
    }

    #[test]
    fn percentiles_of_a_known_set_within_one_percent() {
        // 1,000 latencies 1 ms, 2 ms, ..., 1000 ms. Nearest rank: p50 = rank 500 = 500 ms,
        // p95 = rank 950 = 950 ms, p99 = rank 990 = 990 ms.
        let mut h = LatencyHistogram::new();
        for k in 1..=1000u64 {
            h.record(Dur::from_millis(k));
        }
        for (permille, expect_ms) in [(500u32, 500.0f64), (950, 950.0), (990, 990.0), (1000, 1000.0)] {
            let got = h.percentile_permille(permille).unwrap().as_millis_f64();
            assert!((got - expect_ms).abs() / expect_ms <= 0.01, "p{permille}: {got} vs {expect_ms}");
        }
        // Every single value comes back within 0.79%.
        for v in [64u64, 65, 127, 128, 1_000, 12_345, 999_999, 86_400_000_000, u64::MAX / 3] {
            let mut one = LatencyHistogram::new();
            // v is rank 2 of 3, so neither the exact minimum nor the exact maximum.
            one.record(Dur(0));
            one.record(Dur(v));
            one.record(Dur(u64::MAX));
            let got = one.percentile_permille(500).unwrap().micros() as f64;
            assert!((got - v as f64).abs() / v as f64 <= 1.0 / 128.0, "{v}: {got}");
        }
    }

    proptest::proptest! {
        /// Against the exact nearest-rank percentile of a sorted copy: within 1/128.
        #[test]
        fn percentiles_match_exact_nearest_rank(
            values in proptest::collection::vec(0u64..10_000_000_000, 1..300),
            permille in 0u32..=1000,
        ) {
            let mut h = LatencyHistogram::new();
            for v in &values {
                h.record(Dur(*v));
            }
            let mut sorted = values.clone();
            sorted.sort();
            let rank = (sorted.len() * permille as usize).div_ceil(1000).max(1);
            let exact = sorted[rank - 1] as f64;
            let got = h.percentile_permille(permille).unwrap().micros() as f64;
            proptest::prop_assert!((got - exact).abs() <= exact / 128.0, "{} vs {}", got, exact);
            // Exactly the value the definition gives, whichever end the scan starts from.
            let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
            let want = match rank {
                1 => min,
                r if r == sorted.len() => max,
                r => bucket_mid(bucket_index(sorted[r - 1])).clamp(min, max),
            };
            proptest::prop_assert_eq!(h.percentile_permille(permille), Some(Dur(want)));
        }
    }

    #[test]
    fn clear_and_merge() {
        let mut a = LatencyHistogram::new();
        a.record(Dur::from_millis(3));
        a.record(Dur::from_secs(40));
        a.clear();
        assert_eq!(a, LatencyHistogram::new());
        assert_eq!(a.percentile_permille(500), None);
        let mut b = LatencyHistogram::new();
        b.record(Dur(10));
        a.record(Dur(20));
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.percentile_permille(500), Some(Dur(10)));
        assert_eq!(a.percentile_permille(1000), Some(Dur(20)));
    }
}
