//! Provider routing (seed 002's `MultiProviderRouter`): which provider an attempt tries next, and
//! the health scores the `health` strategy orders by.
//!
//! Health scores are kept in tenths, as integers (1 to 10, starting at 10), so ordering never
//! depends on float rounding: a success adds 1 (0.1) up to 10, a failure takes 2 (0.2) down
//! to 1. The `health` strategy ranks the untried providers by `health × U`, with `U` uniform in
//! [0.8, 1.0) as the fixed-point integer `(4·2³² + x) / (5·2³²)`, `x` the top 32 bits of one
//! draw per provider (file order) from `RunSeed::draw(Stream::Routing, request, attempt)`: the
//! same attempt of the same request gets the same `U`s in every configuration, and every step
//! of one attempt's failover uses them with the current scores. Ties go to the earlier provider.

use crate::outcome::Verdict;
use crate::rng::{RunSeed, Stream};
use crate::scenario::Strategy;
use rand::Rng as _;

/// Highest (and starting) health score, in tenths.
pub(super) const HEALTH_MAX: u8 = 10;
/// Lowest health score, in tenths.
pub(super) const HEALTH_MIN: u8 = 1;
/// What a success adds, in tenths.
const SUCCESS_STEP: u8 = 1;
/// What a failure takes, in tenths.
const FAILURE_STEP: u8 = 2;

/// The router of every client instance: its strategy and the health score of each (breaker
/// slot, provider), stored at `slot · providers + provider`.
#[derive(Clone, Debug)]
pub(super) struct Router {
    providers: u32,
    /// One bit per provider.
    all: u32,
    strategy: Strategy,
    health: Vec<u8>,
}

impl Router {
    /// A router over `providers` providers (1 to 32) for `slots` breaker slots, every score at
    /// its maximum.
    pub(super) fn new(providers: u32, strategy: Strategy, slots: usize) -> Router {
        let all = if providers >= 32 { u32::MAX } else { (1u32 << providers) - 1 };
        Router { providers, all, strategy, health: vec![HEALTH_MAX; slots * providers as usize] }
    }

    /// How many providers there are.
    pub(super) fn providers(&self) -> u32 {
        self.providers
    }

    /// The mask with one bit per provider.
    #[inline]
    pub(super) fn all(&self) -> u32 {
        self.all
    }

    /// The health score (tenths) of `provider` as seen by breaker slot `slot`.
    pub(super) fn health(&self, slot: u32, provider: u32) -> u8 {
        self.health[(slot * self.providers + provider) as usize]
    }

    /// The provider attempt `attempt` of `request` (through slot `slot`) tries next, among those
    /// not in `tried`; `None` when every provider was tried. Allocates nothing.
    #[inline]
    pub(super) fn next(
        &self,
        slot: u32,
        tried: u32,
        seed: &RunSeed,
        request: u64,
        attempt: u32,
    ) -> Option<u32> {
        let untried = !tried & self.all;
        if untried == 0 {
            return None;
        }
        if self.providers == 1 || self.strategy == Strategy::Priority {
            return Some(untried.trailing_zeros());
        }
        let mut rng = seed.draw(Stream::Routing, request, attempt);
        let mut best: Option<(u64, u32)> = None;
        for p in 0..self.providers {
            let x = rng.next_u64() >> 32;
            if untried & (1 << p) == 0 {
                continue;
            }
            let score = u64::from(self.health(slot, p)) * ((4u64 << 32) + x);
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, p));
            }
        }
        best.map(|(_, p)| p)
    }

    /// The providers passed over when `first` took an attempt's first try after the providers
    /// in `rejected` refused it, `tried` being every provider asked so far (`first` included):
    /// the rejected ones, plus each untried provider that ranks below `first` for a reason other
    /// than the random draw (`priority`: all of them, they come later in the file; `health`:
    /// those with a strictly lower score than `first`'s).
    pub(super) fn passed_over(&self, slot: u32, first: u32, rejected: u32, tried: u32) -> u32 {
        let untried = !tried & self.all();
        match self.strategy {
            Strategy::Priority => rejected | untried,
            Strategy::Health => {
                let top = self.health(slot, first);
                let mut lower = 0u32;
                for p in 0..self.providers {
                    if untried & (1 << p) != 0 && self.health(slot, p) < top {
                        lower |= 1 << p;
                    }
                }
                rejected | lower
            }
        }
    }

    /// Updates `provider`'s score in slot `slot` with a completed attempt's verdict (an ignored
    /// verdict changes nothing).
    pub(super) fn record(&mut self, slot: u32, provider: u32, verdict: Verdict) {
        let h = &mut self.health[(slot * self.providers + provider) as usize];
        *h = match verdict {
            Verdict::Success => (*h + SUCCESS_STEP).min(HEALTH_MAX),
            Verdict::Failure => h.saturating_sub(FAILURE_STEP).max(HEALTH_MIN),
            Verdict::Ignored => *h,
        };
    }

    /// Forgets every score (a fresh client process).
    pub(super) fn reset(&mut self) {
        self.health.iter_mut().for_each(|h| *h = HEALTH_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_moves_by_tenths_within_bounds() {
        let mut r = Router::new(2, Strategy::Health, 1);
        assert_eq!(r.health(0, 1), 10);
        r.record(0, 1, Verdict::Failure);
        assert_eq!(r.health(0, 1), 8);
        for _ in 0..5 {
            r.record(0, 1, Verdict::Failure);
        }
        assert_eq!(r.health(0, 1), 1, "floored at 0.1");
        r.record(0, 1, Verdict::Success);
        assert_eq!(r.health(0, 1), 2);
        r.record(0, 1, Verdict::Ignored);
        assert_eq!(r.health(0, 1), 2);
        for _ in 0..20 {
            r.record(0, 1, Verdict::Success);
        }
        assert_eq!(r.health(0, 1), 10, "capped at 1.0");
        assert_eq!(r.health(0, 0), 10, "the other provider is untouched");
        r.record(0, 0, Verdict::Failure);
        r.reset();
        assert_eq!((r.health(0, 0), r.health(0, 1)), (10, 10));
    }

    #[test]
    fn priority_goes_in_file_order_skipping_the_tried() {
        let r = Router::new(3, Strategy::Priority, 1);
        let seed = RunSeed::new(1, "t", 0);
        assert_eq!(r.next(0, 0, &seed, 0, 1), Some(0));
        assert_eq!(r.next(0, 0b001, &seed, 0, 1), Some(1));
        assert_eq!(r.next(0, 0b011, &seed, 0, 1), Some(2));
        assert_eq!(r.next(0, 0b101, &seed, 0, 1), Some(1));
        assert_eq!(r.next(0, 0b111, &seed, 0, 1), None);
        // Provider 0 rejected, provider 1 took the try: 0 (rejected) and 2 (later) passed over.
        assert_eq!(r.passed_over(0, 1, 0b001, 0b011), 0b101);
    }

    #[test]
    fn health_orders_by_score_times_a_seeded_uniform() {
        let seed = RunSeed::new(1, "t", 0);
        let mut r = Router::new(2, Strategy::Health, 1);
        // Equal scores: the draw decides, the same way for the same (request, attempt).
        let firsts: Vec<u32> = (0..200).map(|req| r.next(0, 0, &seed, req, 1).unwrap()).collect();
        let again: Vec<u32> = (0..200).map(|req| r.next(0, 0, &seed, req, 1).unwrap()).collect();
        assert_eq!(firsts, again);
        let zeros = firsts.iter().filter(|p| **p == 0).count();
        assert!((70..=130).contains(&zeros), "about half each: {zeros}");
        // Equal scores: losing by the draw is not being passed over.
        assert_eq!(r.passed_over(0, 0, 0, 0b01), 0);
        // One failure: 0.8 × U ≤ 0.8 ≤ 1.0 × U, so provider 1 always wins, and 0 is passed over.
        r.record(0, 0, Verdict::Failure);
        assert!((0..200).all(|req| r.next(0, 0, &seed, req, 1) == Some(1)));
        assert_eq!(r.passed_over(0, 1, 0, 0b10), 0b01);
        // Once provider 1 was tried, provider 0 is next whatever its score.
        assert_eq!(r.next(0, 0b10, &seed, 5, 1), Some(0));
        // 0.9 against 1.0 overlaps: [0.72, 0.9) against [0.8, 1.0): provider 0 wins sometimes.
        r.record(0, 0, Verdict::Success);
        let wins = (0..2_000).filter(|req| r.next(0, 0, &seed, *req, 1) == Some(0)).count();
        // P(0.9·U₀ > U₁), 0.9·U₀ uniform on [0.72, 0.9), U₁ on [0.8, 1.0):
        // ∫₀.₈^⁰·⁹ (0.9 − u) / 0.18 du / 0.2 = 0.005 / 0.036 ≈ 13.9 %, about 278 of 2,000.
        assert!((220..=340).contains(&wins), "{wins}");
    }
}
