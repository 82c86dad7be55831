//! A ring of time buckets, each holding two counts, addressed by bucket index (time divided by
//! the bucket length): opossum's status window, Hystrix's health counts and the SRE throttle's
//! request history. A leaf: it imports nothing else of `policy`.

/// One bucket: its index and its two counts.
#[derive(Copy, Clone, Debug, Default)]
struct Bucket {
    index: u64,
    used: bool,
    counts: (u64, u64),
}

/// `n` buckets: bucket `k` lives in slot `k % n` until a later bucket takes the slot over.
#[derive(Clone, Debug)]
pub struct CountRing {
    buckets: Vec<Bucket>,
}

impl CountRing {
    /// `n` empty buckets (at least one).
    pub fn new(n: usize) -> CountRing {
        CountRing { buckets: vec![Bucket::default(); n.max(1)] }
    }

    /// The number of buckets.
    pub fn len(&self) -> u64 {
        self.buckets.len() as u64
    }

    /// Adds `(a, b)` to bucket `k`'s counts, first emptying its slot when it held another bucket.
    pub fn add(&mut self, k: u64, (a, b): (u64, u64)) {
        let n = self.len();
        let bucket = &mut self.buckets[(k % n) as usize];
        if !bucket.used || bucket.index != k {
            *bucket = Bucket { index: k, used: true, counts: (0, 0) };
        }
        bucket.counts.0 += a;
        bucket.counts.1 += b;
    }

    /// The sums of the buckets with index in `[lo, hi)`.
    pub fn sum(&self, lo: u64, hi: u64) -> (u64, u64) {
        self.buckets
            .iter()
            .filter(|b| b.used && b.index >= lo && b.index < hi)
            .fold((0, 0), |(a, b), x| (a + x.counts.0, b + x.counts.1))
    }

    /// The sums over the window that ends with bucket `k`: the last `len` buckets up to `k`.
    pub fn window(&self, k: u64) -> (u64, u64) {
        self.sum((k + 1).saturating_sub(self.len()), k + 1)
    }

    /// Empties every bucket.
    pub fn clear(&mut self) {
        self.buckets.fill(Bucket::default());
    }
}

#[cfg(test)]
mod tests {
    use super::CountRing;

    #[test]
    fn a_bucket_is_replaced_by_the_next_one_in_its_slot() {
        let mut r = CountRing::new(3);
        r.add(0, (1, 0));
        r.add(1, (2, 1));
        r.add(1, (1, 1));
        assert_eq!((r.window(1), r.window(3), r.sum(1, 2)), ((4, 2), (3, 2), (3, 2)));
        r.add(3, (5, 5)); // takes bucket 0's slot
        assert_eq!((r.window(3), r.sum(0, 1), r.window(9)), ((8, 7), (0, 0), (0, 0)));
        r.clear();
        assert_eq!(r.sum(0, u64::MAX), (0, 0));
    }
}
