//! Time windows `[start, end)` asked "does any of them cover this instant?" by binary search:
//! the windows sorted by start, with the latest end among each prefix, so checking many
//! instants against many incidents costs `n log n`, not their product.

/// A set of windows, in microseconds.
#[derive(Clone, Debug, Default)]
pub struct Windows {
    /// `(start, end)`, sorted.
    sorted: Vec<(u64, u64)>,
    /// The latest end among `sorted[..=k]`.
    latest_end: Vec<u64>,
}

impl Windows {
    /// The windows `[start, end)` of `spans`.
    pub fn new(spans: impl IntoIterator<Item = (u64, u64)>) -> Windows {
        let mut sorted: Vec<(u64, u64)> = spans.into_iter().collect();
        sorted.sort_unstable();
        let latest_end = sorted
            .iter()
            .scan(0u64, |latest, &(_, end)| {
                *latest = (*latest).max(end);
                Some(*latest)
            })
            .collect();
        Windows { sorted, latest_end }
    }

    /// True when some window holds `at`.
    pub fn cover(&self, at: u64) -> bool {
        let started = self.sorted.partition_point(|&(start, _)| start <= at);
        started > 0 && self.latest_end[started - 1] > at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_is_covered_by_any_window_that_holds_it() {
        let w = Windows::new([(50, 60), (10, 100), (20, 30)]);
        assert!(w.cover(10) && w.cover(55) && w.cover(99));
        assert!(!w.cover(9) && !w.cover(100));
        let gaps = Windows::new([(0, 5), (10, 15)]);
        assert!(gaps.cover(4) && !gaps.cover(5) && !gaps.cover(7) && gaps.cover(10));
        assert!(!Windows::default().cover(0));
    }
}
