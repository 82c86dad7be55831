//! Sliding-window structures the breaker families share: an exact time window of samples, an
//! epoch-aligned bucketed time window, a count window of the last N calls, and the count-based
//! percentile test. Each keeps running totals so a decision costs O(1) (O(buckets) for the
//! bucketed window) and allocates nothing once its buffer has grown.

use crate::time::{Dur, SimTime};

/// Totals over the samples currently in a window.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Calls recorded.
    pub calls: u64,
    /// Of which failures.
    pub failures: u64,
    /// Of which slow (latency above the slow-call duration).
    pub slow: u64,
    /// Of which at or over the latency threshold of a percentile rule (see [`percentile_exceeds`]).
    pub over: u64,
}

impl Tally {
    #[inline(always)]
    fn add(&mut self, s: Sample) {
        self.calls += 1;
        self.failures += u64::from(s.failed);
        self.slow += u64::from(s.slow);
        self.over += u64::from(s.over);
    }
    #[inline(always)]
    fn remove(&mut self, s: Sample) {
        self.calls -= 1;
        self.failures -= u64::from(s.failed);
        self.slow -= u64::from(s.slow);
        self.over -= u64::from(s.over);
    }
}

/// One recorded call, reduced to the flags the rules need (the latency itself is never kept:
/// the percentile test only needs to know whether it was at or over the threshold).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// When it was recorded.
    pub at: SimTime,
    /// Counted as a failure.
    pub failed: bool,
    /// Slower than the slow-call duration.
    pub slow: bool,
    /// At or over the percentile rule's latency threshold.
    pub over: bool,
}

/// Which samples an exact time window still holds at `now`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Edge {
    /// A sample exactly `window` old is still in (dropped only when strictly older), as seeds
    /// 000 and 001 do (`ts < now - window` is pruned).
    KeepExact,
    /// A sample exactly `window` old is out: the window is the half-open span `(now − window, now]`.
    DropExact,
}

impl Edge {
    /// True when a sample recorded at `at` has left a window of length `window` at `now`.
    #[inline(always)]
    pub fn expired(self, at: SimTime, now: SimTime, window: Dur) -> bool {
        let age = now.since(at);
        match self {
            Edge::KeepExact => age > window,
            Edge::DropExact => age >= window,
        }
    }
}

/// A first-in first-out ring: a buffer used circularly from a head index, so a push is one
/// store and a pop one increment (no wrap-around copy, no per-call branch on the layout). It
/// grows by doubling only when full, so it allocates nothing once it has reached its size.
#[derive(Clone, Debug, Default)]
struct Ring<T> {
    buf: Vec<T>,
    /// The place of the oldest element.
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Ring<T> {
    /// An empty ring with room for exactly `n` elements.
    fn with_capacity(n: usize) -> Ring<T> {
        Ring { buf: vec![T::default(); n], head: 0, len: 0 }
    }
    /// The place `i` elements after the head.
    #[inline(always)]
    fn place(&self, i: usize) -> usize {
        let p = self.head + i;
        if p >= self.buf.len() { p - self.buf.len() } else { p }
    }
    #[inline(always)]
    fn push_back(&mut self, v: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let p = self.place(self.len);
        self.buf[p] = v;
        self.len += 1;
    }
    /// Doubles the buffer (at least 16 places), oldest element first.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut buf = Vec::with_capacity((self.buf.len() * 2).max(16));
        buf.extend((0..self.len).map(|i| self.buf[self.place(i)]));
        buf.resize(buf.capacity(), T::default());
        self.buf = buf;
        self.head = 0;
    }
    #[inline(always)]
    fn front(&self) -> Option<T> {
        (self.len > 0).then(|| self.buf[self.head])
    }
    #[inline(always)]
    fn pop_front(&mut self) -> Option<T> {
        let v = self.front()?;
        self.drop_front();
        Some(v)
    }
    /// Drops the oldest element (the ring must not be empty).
    #[inline(always)]
    fn drop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = self.place(1);
        self.len -= 1;
    }
    fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }
    fn capacity(&self) -> usize {
        self.buf.len()
    }
}

/// Samples held oldest first with their running totals: what the exact and count windows share.
#[derive(Clone, Debug, Default)]
struct Held {
    samples: Ring<Sample>,
    tally: Tally,
}

impl Held {
    fn with_capacity(n: usize) -> Held {
        Held { samples: Ring::with_capacity(n), tally: Tally::default() }
    }
    #[inline(always)]
    fn push(&mut self, s: Sample) {
        self.samples.push_back(s);
        self.tally.add(s);
    }
    #[inline(always)]
    fn front(&self) -> Option<Sample> {
        self.samples.front()
    }
    #[inline(always)]
    fn pop_front(&mut self) {
        if let Some(old) = self.front() {
            self.drop_front(old);
        }
    }
    /// Drops the oldest sample, `front` (the ring must not be empty).
    #[inline(always)]
    fn drop_front(&mut self, front: Sample) {
        self.samples.drop_front();
        self.tally.remove(front);
    }
    fn clear(&mut self) {
        self.samples.clear();
        self.tally = Tally::default();
    }
}

/// Every sample of the last `window`, oldest first.
#[derive(Clone, Debug)]
pub struct ExactWindow {
    /// The age (µs) at which a sample has left: the window's length, one more when a sample
    /// exactly that old stays ([`Edge::KeepExact`]); as `u128` so no length overflows it.
    min_age: u128,
    held: Held,
    /// Before this instant no sample leaves: the oldest one's time plus `min_age` (`u64::MAX`
    /// when empty, or when that is past the clock's range), so most prunes are one comparison.
    until: SimTime,
}

impl ExactWindow {
    /// An empty window of length `window`.
    pub fn new(window: Dur, edge: Edge) -> ExactWindow {
        let min_age = u128::from(window.micros()) + u128::from(edge == Edge::KeepExact);
        ExactWindow { min_age, held: Held::default(), until: SimTime(u64::MAX) }
    }
    /// The instant a sample taken at `at` leaves ([`ExactWindow::until`]).
    #[inline]
    fn leaves(&self, at: SimTime) -> SimTime {
        u64::try_from(u128::from(at.micros()) + self.min_age).map_or(SimTime(u64::MAX), SimTime)
    }
    /// Drops the samples that have left the window at `now` ([`Edge::expired`]).
    #[inline(always)]
    pub fn prune(&mut self, now: SimTime) {
        if now < self.until {
            return;
        }
        while let Some(front) = self.held.front() {
            if u128::from(now.since(front.at).micros()) < self.min_age {
                self.until = self.leaves(front.at);
                return;
            }
            self.held.drop_front(front);
        }
        self.until = SimTime(u64::MAX);
    }
    /// Appends a sample (its time must not precede the last one) and prunes at its time.
    #[inline(always)]
    pub fn push(&mut self, s: Sample) {
        if self.held.front().is_none() {
            self.until = self.leaves(s.at);
        }
        self.held.push(s);
        self.prune(s.at);
    }
    /// Totals over the samples held (call [`ExactWindow::prune`] first for a given instant).
    #[inline(always)]
    pub fn tally(&self) -> Tally {
        self.held.tally
    }
    /// Forgets every sample (keeps the buffer's capacity).
    pub fn clear(&mut self) {
        self.held.clear();
        self.until = SimTime(u64::MAX);
    }
    /// Samples the buffer can hold without growing (to check that memory stays flat).
    pub fn capacity(&self) -> usize {
        self.held.samples.capacity()
    }
}

#[derive(Copy, Clone, Debug, Default)]
struct Bucket {
    /// The epoch index of the bucket (`at / bucket_len`); `u64::MAX` when never used.
    index: u64,
    tally: Tally,
}

/// A time window of `n` buckets of `window / n` each, aligned on multiples of the bucket length
/// since time zero (epoch-aligned, as Resilience4j's time-based window aligns on whole seconds).
/// At `now` it holds the current bucket and the `n − 1` before it, so its effective span varies
/// between `window − bucket` and `window`.
#[derive(Clone, Debug)]
pub struct BucketWindow {
    bucket_len: u64,
    ring: Vec<Bucket>,
}

impl BucketWindow {
    /// `buckets` buckets of `window / buckets` (the caller has checked that it divides exactly
    /// and is at least a microsecond).
    pub fn new(window: Dur, buckets: u32) -> BucketWindow {
        let n = buckets.max(1) as usize;
        let bucket_len = (window.micros() / n as u64).max(1);
        BucketWindow { bucket_len, ring: vec![Bucket { index: u64::MAX, tally: Tally::default() }; n] }
    }
    /// Records a sample in the bucket of its time.
    #[inline]
    pub fn push(&mut self, s: Sample) {
        let idx = s.at.micros() / self.bucket_len;
        let slot = (idx % self.ring.len() as u64) as usize;
        let b = &mut self.ring[slot];
        if b.index != idx {
            *b = Bucket { index: idx, tally: Tally::default() };
        }
        b.tally.add(s);
    }
    /// Totals over the buckets still in the window at `now`.
    #[inline]
    pub fn tally(&self, now: SimTime) -> Tally {
        let cur = now.micros() / self.bucket_len;
        let n = self.ring.len() as u64;
        let mut t = Tally::default();
        for b in &self.ring {
            if b.index != u64::MAX && b.index <= cur && b.index + n > cur {
                t.calls += b.tally.calls;
                t.failures += b.tally.failures;
                t.slow += b.tally.slow;
                t.over += b.tally.over;
            }
        }
        t
    }
    /// Forgets every bucket.
    pub fn clear(&mut self) {
        for b in &mut self.ring {
            *b = Bucket { index: u64::MAX, tally: Tally::default() };
        }
    }
}

/// The last `size` calls, whatever their age.
#[derive(Clone, Debug)]
pub struct CountWindow {
    size: usize,
    held: Held,
}

impl CountWindow {
    /// An empty window of `size` calls (at least one).
    pub fn new(size: u32) -> CountWindow {
        let size = size.max(1) as usize;
        CountWindow { size, held: Held::with_capacity(size) }
    }
    /// Records a call, evicting the oldest when full.
    #[inline]
    pub fn push(&mut self, s: Sample) {
        if self.held.samples.len() == self.size {
            self.held.pop_front();
        }
        self.held.push(s);
    }
    /// Totals over the calls held.
    #[inline]
    pub fn tally(&self) -> Tally {
        self.held.tally
    }
    /// Forgets every call.
    pub fn clear(&mut self) {
        self.held.clear();
    }
    /// Calls the buffer can hold without growing.
    pub fn capacity(&self) -> usize {
        self.held.samples.capacity()
    }
}

/// One window of whichever kind a family's parameters choose (count, exact time, bucketed
/// time), behind one interface, so a family whose window kind is a parameter holds one field.
/// A plain tag byte (`repr(u8)`) rather than a niche in a buffer's capacity, so telling the
/// kind on every call is one byte comparison.
#[derive(Clone, Debug)]
#[repr(u8)]
pub enum Window {
    /// The last N calls.
    Count(CountWindow),
    /// Every sample of a time span (pruned as samples arrive).
    Exact(ExactWindow),
    /// Epoch-aligned buckets of a time span.
    Buckets(BucketWindow),
}

impl Window {
    /// Records a sample.
    #[inline(always)]
    pub fn push(&mut self, s: Sample) {
        match self {
            Window::Count(w) => w.push(s),
            Window::Exact(w) => w.push(s),
            Window::Buckets(w) => w.push(s),
        }
    }
    /// Totals over what the window holds at `now` (an exact window: as of its last sample).
    #[inline(always)]
    pub fn tally(&self, now: SimTime) -> Tally {
        match self {
            Window::Count(w) => w.tally(),
            Window::Exact(w) => w.tally(),
            Window::Buckets(w) => w.tally(now),
        }
    }
    /// Forgets everything (keeps buffer capacity).
    pub fn clear(&mut self) {
        match self {
            Window::Count(w) => w.clear(),
            Window::Exact(w) => w.clear(),
            Window::Buckets(w) => w.clear(),
        }
    }
    /// Samples the buffers hold without growing (buckets: none, their ring is fixed).
    pub fn capacity(&self) -> usize {
        match self {
            Window::Count(w) => w.capacity(),
            Window::Exact(w) => w.capacity(),
            Window::Buckets(_) => 0,
        }
    }
}

/// Timestamps of recent failures (the "N failures within a sliding window" rule).
#[derive(Clone, Debug, Default)]
pub struct FailureTimes {
    times: Ring<SimTime>,
}

impl FailureTimes {
    /// Appends a failure time.
    #[inline]
    pub fn push(&mut self, at: SimTime) {
        self.times.push_back(at);
    }
    /// Drops failures that have left a window of `window` at `now`.
    #[inline]
    pub fn prune(&mut self, now: SimTime, window: Dur, edge: Edge) {
        while let Some(front) = self.times.front() {
            if !edge.expired(front, now, window) {
                break;
            }
            self.times.pop_front();
        }
    }
    /// Failures held.
    #[inline]
    pub fn len(&self) -> usize {
        self.times.len()
    }
    /// True when no failure is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.times.len() == 0
    }
    /// Forgets every failure.
    pub fn clear(&mut self) {
        self.times.clear();
    }
    /// Failures the buffer can hold without growing.
    pub fn capacity(&self) -> usize {
        self.times.capacity()
    }
}

/// The least count (of failures, slow calls, calls over a latency) at which a rule over a
/// window of `calls` calls holds, kept per number of calls. A rule such as "failures / calls >=
/// rate" (a float division) or the count-based percentile test is, for a given number of calls,
/// a threshold on the count, so once found the test is one table read and one integer
/// comparison. Thresholds for fewer than [`TABLE_CALLS`] calls go in a table grown (to the next
/// power of two) as the window reaches a new size, so a run allocates only a few times and the
/// table takes at most 4 bytes per call the window holds (its samples take more); larger
/// windows keep the last few numbers of calls asked. A threshold not kept is found by walking
/// from a start near it (a closed form, or the threshold for one call fewer). The rule must be
/// monotone in the count (false up to some count, true from it on: a float division is
/// monotone in its numerator) and the same at every call of one `LeastCount`.
#[derive(Clone, Debug)]
pub struct LeastCount {
    /// `table[calls]` is the least count for `calls` ([`UNKNOWN`] until found).
    table: Vec<u16>,
    /// For `calls` of [`TABLE_CALLS`] or more: `(calls, least)` by `calls % PLACES`; `calls
    /// == u64::MAX` marks an empty place. (Seven places keep the breakers' size, which the
    /// memory estimate reads.)
    kept: [(u64, u64); PLACES],
}

/// Numbers of calls whose thresholds go in [`LeastCount`]'s table (2 bytes each).
const TABLE_CALLS: u64 = 1 << 12;
/// A table place not yet found.
const UNKNOWN: u16 = u16::MAX;
/// Places kept for larger numbers of calls.
const PLACES: usize = 7;

impl Default for LeastCount {
    fn default() -> LeastCount {
        LeastCount { table: Vec::new(), kept: [(u64::MAX, 0); PLACES] }
    }
}

impl LeastCount {
    /// `rule(count, calls)`, from the threshold kept for `calls` (found if not kept).
    #[inline(always)]
    pub fn holds(&mut self, count: u64, calls: u64, rule: impl Fn(u64, u64) -> bool) -> bool {
        self.holds_near(count, calls, |_| None, rule)
    }

    /// [`LeastCount::holds`], where a threshold not kept is found from `near(calls)` when it
    /// gives one (a closed form close to the threshold, such as `ceil(rate · calls)`: the walk
    /// from it is a step or two, however far the number of calls moved).
    #[inline(always)]
    pub fn holds_near(
        &mut self,
        count: u64,
        calls: u64,
        near: impl Fn(u64) -> Option<u64>,
        rule: impl Fn(u64, u64) -> bool,
    ) -> bool {
        if let Some(&least) = self.table.get(calls as usize)
            && least != UNKNOWN
        {
            return count >= u64::from(least);
        }
        count >= self.least(calls, near, rule)
    }

    /// The threshold for `calls` when the table does not hold it: found and kept.
    #[inline(never)]
    fn least(
        &mut self,
        calls: u64,
        near: impl Fn(u64) -> Option<u64>,
        rule: impl Fn(u64, u64) -> bool,
    ) -> u64 {
        if calls < TABLE_CALLS {
            let i = calls as usize;
            if i >= self.table.len() {
                self.table.resize((i + 1).next_power_of_two().max(64), UNKNOWN);
            }
            // The threshold for one call fewer is at most one away, when known.
            let below = i.checked_sub(1).map_or(UNKNOWN, |j| self.table[j]);
            let start = near(calls).unwrap_or(if below == UNKNOWN { calls / 2 } else { u64::from(below) });
            let least = find(calls, start, rule);
            // At most `calls + 1`, below `TABLE_CALLS + 1 < UNKNOWN`.
            self.table[i] = least as u16;
            return least;
        }
        let place = (calls % PLACES as u64) as usize;
        if self.kept[place].0 != calls {
            let before = self.kept[(place + PLACES - 1) % PLACES].1;
            let least = find(calls, near(calls).unwrap_or(before), rule);
            self.kept[place] = (calls, least);
        }
        self.kept[place].1
    }
}

/// The least count in `0..=calls` for which `rule` holds (`calls + 1` if none), walking from
/// `start`.
fn find(calls: u64, start: u64, rule: impl Fn(u64, u64) -> bool) -> u64 {
    let mut least = start.min(calls + 1);
    while least > 0 && rule(least - 1, calls) {
        least -= 1;
    }
    while least <= calls && !rule(least, calls) {
        least += 1;
    }
    least
}

/// The count-based percentile test: is the element at `index` of the ascending-sorted window
/// at or over the threshold, knowing only that `over` of the `n` samples are at or over it?
///
/// The sorted window puts its `n − over` samples under the threshold first, so the element at
/// `index` is at or over it exactly when `n − over <= index`. No sort, no allocation.
#[inline]
pub fn percentile_exceeds(n: u64, over: u64, index: u64) -> bool {
    n > 0 && n - over <= index
}

/// Seed 000's p95 index, `max(0, int(len(values) * 0.95) - 1)`, computed with the same IEEE
/// double product Python uses so every `n` matches.
#[inline]
pub fn connector_p95_index(n: u64) -> u64 {
    ((n as f64 * 0.95) as u64).saturating_sub(1)
}

/// Nearest-rank index of quantile `q` in (0, 1] over `n` sorted samples: `ceil(q·n) − 1`,
/// at least 0 and at most `n − 1`.
#[inline]
pub fn nearest_rank_index(q: f64, n: u64) -> u64 {
    let rank = (q * n as f64).ceil() as u64;
    rank.clamp(1, n.max(1)) - 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(at_ms: u64, failed: bool) -> Sample {
        Sample { at: SimTime(at_ms * 1000), failed, slow: false, over: false }
    }

    #[test]
    fn exact_window_edges() {
        let mut keep = ExactWindow::new(Dur::from_secs(10), Edge::KeepExact);
        let mut drop = ExactWindow::new(Dur::from_secs(10), Edge::DropExact);
        for w in [&mut keep, &mut drop] {
            w.push(s(0, true));
            w.push(s(5_000, false));
            w.prune(SimTime(10_000_000));
        }
        assert_eq!(keep.tally(), Tally { calls: 2, failures: 1, slow: 0, over: 0 });
        assert_eq!(drop.tally(), Tally { calls: 1, failures: 0, slow: 0, over: 0 });
        keep.prune(SimTime(10_000_001));
        assert_eq!(keep.tally().calls, 1);
        keep.clear();
        assert_eq!(keep.tally(), Tally::default());
    }

    #[test]
    fn ring_keeps_order_across_wrap_around_and_growth() {
        let mut ring: Ring<u32> = Ring::with_capacity(3);
        let mut model = std::collections::VecDeque::new();
        // Pushes two, pops one, for a while (wrapping the 3-place buffer), then pushes without
        // popping (growing it while it is wrapped), then drains: always the model's order.
        for step in 0..40u32 {
            ring.push_back(step);
            model.push_back(step);
            if step % 2 == 1 || step >= 30 {
                continue;
            }
            assert_eq!(ring.pop_front(), model.pop_front());
            assert_eq!(ring.front(), model.front().copied());
        }
        assert_eq!(ring.len(), model.len());
        while let Some(v) = model.pop_front() {
            assert_eq!(ring.pop_front(), Some(v));
        }
        assert_eq!(ring.pop_front(), None);
        let cap = ring.capacity();
        ring.clear();
        assert_eq!((ring.len(), ring.front(), ring.capacity()), (0, None, cap));
    }

    #[test]
    fn bucket_window_is_epoch_aligned() {
        // 4 buckets of 250 ms over 1 s.
        let mut w = BucketWindow::new(Dur::from_secs(1), 4);
        w.push(s(0, true));
        w.push(s(249, true));
        w.push(s(250, false));
        w.push(s(999, false));
        assert_eq!(w.tally(SimTime(999_000)).calls, 4);
        // At 1000 ms the first bucket [0, 250) has left: its two failures are gone.
        let t = w.tally(SimTime(1_000_000));
        assert_eq!((t.calls, t.failures), (2, 0));
        // A new sample reuses the slot of bucket 0.
        w.push(s(1_100, true));
        let t = w.tally(SimTime(1_100_000));
        assert_eq!((t.calls, t.failures), (3, 1));
        assert_eq!(w.tally(SimTime(2_100_000)).calls, 0);
        w.clear();
        assert_eq!(w.tally(SimTime(1_100_000)).calls, 0);
    }

    #[test]
    fn count_window_keeps_last_n() {
        let mut w = CountWindow::new(3);
        for (i, f) in [true, true, false, false].into_iter().enumerate() {
            w.push(s(i as u64, f));
        }
        assert_eq!(w.tally(), Tally { calls: 3, failures: 1, slow: 0, over: 0 });
    }

    #[test]
    fn connector_index_matches_python() {
        // int(n * 0.95) - 1, floored at 0, checked by hand for small n.
        let expected = [(1, 0), (2, 0), (8, 6), (19, 17), (20, 18), (21, 18), (100, 94)];
        for (n, idx) in expected {
            assert_eq!(connector_p95_index(n), idx, "n = {n}");
        }
        assert_eq!(nearest_rank_index(0.95, 20), 18);
        assert_eq!(nearest_rank_index(0.95, 21), 19);
        assert_eq!(nearest_rank_index(1.0, 5), 4);
        assert_eq!(nearest_rank_index(0.01, 5), 0);
    }

    proptest! {
        /// The kept threshold answers as the rule itself, whatever the order of the questions
        /// (rate rules `>=` and `>`, and the percentile test).
        #[test]
        fn least_count_answers_as_the_rule(
            asks in proptest::collection::vec((0u64..400, 0u64..400), 1..200),
            rate in 0.0f64..=1.0,
        ) {
            let at_least = |f: u64, n: u64| f as f64 / n as f64 >= rate;
            let above = |f: u64, n: u64| f as f64 / n as f64 > rate;
            let p95 = |o: u64, n: u64| percentile_exceeds(n, o, connector_p95_index(n));
            let (mut a, mut b, mut c) = (LeastCount::default(), LeastCount::default(), LeastCount::default());
            // The same from closed forms near the thresholds (the connector's), and from a poor one.
            let (mut d, mut e, mut f) = (LeastCount::default(), LeastCount::default(), LeastCount::default());
            let near_rate = |n: u64| Some((rate * n as f64).ceil() as u64);
            let near_p95 = |n: u64| Some(n.saturating_sub(connector_p95_index(n)));
            // Any numbers of calls, then a few near one another (a window at a steady rate),
            // then a few on either side of the table's end.
            let steady = asks.clone().into_iter().map(|(x, y)| (x % 60, 56 + y % 5));
            let edge = asks.clone().into_iter().map(|(x, y)| (4040 + x % 60, 4090 + y % 12));
            for (x, y) in asks.into_iter().chain(steady).chain(edge) {
                let (count, calls) = (x.min(y), x.max(y));
                prop_assert_eq!(a.holds(count, calls, at_least), at_least(count, calls));
                prop_assert_eq!(b.holds(count, calls, above), above(count, calls));
                prop_assert_eq!(c.holds(count, calls, p95), p95(count, calls));
                prop_assert_eq!(d.holds_near(count, calls, near_rate, at_least), at_least(count, calls));
                prop_assert_eq!(e.holds_near(count, calls, near_p95, p95), p95(count, calls));
                prop_assert_eq!(f.holds_near(count, calls, |n| Some(n / 3), above), above(count, calls));
            }
        }

        /// The counting test agrees with sorting the window and reading the element.
        #[test]
        fn percentile_count_matches_sort(
            lat in proptest::collection::vec(0u64..50, 1..200),
            threshold in 0u64..55,
            q in 0.01f64..=1.0,
        ) {
            let n = lat.len() as u64;
            let over = lat.iter().filter(|&&l| l >= threshold).count() as u64;
            let mut sorted = lat.clone();
            sorted.sort_unstable();
            for idx in [connector_p95_index(n), nearest_rank_index(q, n)] {
                prop_assert_eq!(percentile_exceeds(n, over, idx), sorted[idx as usize] >= threshold);
            }
        }
    }
}
