//! The event queue: a binary heap ordered by `(time, phase, sequence number)`. At one instant the
//! [`Phase`] decides (results and timers before arrivals, arrivals before the engine's own
//! follow-ups); within a phase, events are served in the order they were scheduled. Never ordered
//! by floats or hashes.
//!
//! The order is one 128-bit key (time in the high word; phase in the top two bits of the low
//! word, above the sequence number), so a comparison is one integer comparison and an entry
//! with a small event (the engine's carry a 4-byte index into its call slab) is 24 to 32 bytes:
//! the heap moves entries on every push and pop, so their size is the queue's cost.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Where an event falls among the events of the same instant.
///
/// A client that calls again the instant an answer returns has already seen that answer: every
/// real library behaves so on back-to-back calls. So whatever settles something (a call's result
/// or timeout, a breaker's timer, the dependency freeing capacity) comes first, then the new
/// calls of the request stream in trace order, then what the engine scheduled for itself
/// (retries, retry-queue cycles, process restarts).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Results, call timeouts, breaker timers, capacity freed.
    Settle,
    /// New requests from the request stream (kept outside the queue, in trace order).
    Arrive,
    /// Retries, retry-queue cycles, restarts.
    FollowUp,
}

/// Bits of the low key word below the phase: room for 2⁶² scheduled events per run.
const SEQ_BITS: u32 = 62;

/// The order of an event: `(time, phase, sequence)` as one integer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(u128);

impl Key {
    /// The key of the `seq`-th event scheduled at `at` in `phase`.
    #[inline]
    fn new(at: SimTime, phase: Phase, seq: u64) -> Key {
        debug_assert!(seq < 1 << SEQ_BITS);
        Key((u128::from(at.micros()) << 64) | (u128::from(phase as u64) << SEQ_BITS) | u128::from(seq))
    }

    /// The key of a request arriving at `at`: after every [`Phase::Settle`] event of that
    /// instant and before every [`Phase::FollowUp`] event.
    #[inline]
    pub fn arrival(at: SimTime) -> Key {
        Key::new(at, Phase::Arrive, 0)
    }

    /// The event's time.
    #[inline]
    pub fn at(self) -> SimTime {
        SimTime((self.0 >> 64) as u64)
    }

    /// The event's phase.
    #[cfg(test)]
    pub fn phase(self) -> Phase {
        match (self.0 as u64) >> SEQ_BITS {
            0 => Phase::Settle,
            1 => Phase::Arrive,
            _ => Phase::FollowUp,
        }
    }
}

struct Entry<E> {
    key: Key,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the smallest key first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A min-queue of events by `(time, phase, insertion order)`.
pub struct EventQueue<E> {
    /// The earliest event, held out of the heap (`None` only when nothing is scheduled): a run
    /// mostly has one event pending at a time, which then never enters the heap.
    first: Option<Entry<E>>,
    /// The other events.
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue with room for `capacity` events.
    pub fn with_capacity(capacity: usize) -> EventQueue<E> {
        EventQueue { first: None, heap: BinaryHeap::with_capacity(capacity), next_seq: 0 }
    }

    /// Schedules `event` at `at`, in `phase` of that instant.
    #[inline(always)]
    pub fn push(&mut self, at: SimTime, phase: Phase, event: E) {
        let key = Key::new(at, phase, self.next_seq);
        self.next_seq += 1;
        let entry = Entry { key, event };
        if self.first.is_none() {
            self.first = Some(entry);
        } else {
            self.push_behind(entry);
        }
    }

    /// [`EventQueue::push`] when an event is already scheduled: the earlier of the two stays
    /// out of the heap.
    #[inline(never)]
    fn push_behind(&mut self, mut entry: Entry<E>) {
        if let Some(first) = &mut self.first
            && entry.key < first.key
        {
            std::mem::swap(first, &mut entry);
        }
        self.heap.push(entry);
    }

    /// The key (time, phase, order) of the earliest event.
    #[inline(always)]
    pub fn peek(&self) -> Option<Key> {
        self.first.as_ref().map(|e| e.key)
    }

    /// Removes and returns the earliest event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.first.take()?;
        if !self.heap.is_empty() {
            self.first = self.heap.pop();
        }
        Some((e.key.at(), e.event))
    }

    /// True when nothing is scheduled.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_by_phase_then_insertion_order() {
        let mut q = EventQueue::with_capacity(8);
        q.push(SimTime(5), Phase::FollowUp, "retry");
        q.push(SimTime(5), Phase::Settle, "b1");
        q.push(SimTime(1), Phase::FollowUp, "a");
        q.push(SimTime(5), Phase::Settle, "b2");
        q.push(SimTime(3), Phase::Settle, "c");
        q.push(SimTime(5), Phase::Settle, "b3");
        let first = q.peek().unwrap();
        assert_eq!((first.at(), first.phase()), (SimTime(1), Phase::FollowUp));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(order, vec![(1, "a"), (3, "c"), (5, "b1"), (5, "b2"), (5, "b3"), (5, "retry")]);
        assert!(q.is_empty());
    }

    #[test]
    fn an_arrival_falls_between_settling_and_follow_ups_of_its_instant() {
        let mut q = EventQueue::with_capacity(4);
        q.push(SimTime(7), Phase::Settle, ());
        assert!(q.peek().unwrap() < Key::arrival(SimTime(7)), "a result at 7 comes first");
        assert!(Key::arrival(SimTime(6)) < q.peek().unwrap());
        q.pop();
        q.push(SimTime(7), Phase::FollowUp, ());
        assert!(Key::arrival(SimTime(7)) < q.peek().unwrap(), "a retry at 7 comes after");
        assert!(q.peek().unwrap() < Key::arrival(SimTime(8)));
    }
}
