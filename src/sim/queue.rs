//! The event queue: a binary heap ordered by `(time, phase, sequence number)`. At one instant the
//! [`Phase`] decides (results and timers before arrivals, arrivals before the engine's own
//! follow-ups); within a phase, events are served in the order they were scheduled. Never ordered
//! by floats or hashes.

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

struct Entry<E> {
    at: SimTime,
    phase: Phase,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (SimTime, Phase, u64) {
        (self.at, self.phase, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the earliest `(at, phase, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// A min-queue of events by `(time, phase, insertion order)`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue with room for `capacity` events.
    pub fn with_capacity(capacity: usize) -> EventQueue<E> {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), next_seq: 0 }
    }

    /// Schedules `event` at `at`, in `phase` of that instant.
    pub fn push(&mut self, at: SimTime, phase: Phase, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, phase, seq, event });
    }

    /// The time and phase of the earliest event.
    pub fn peek(&self) -> Option<(SimTime, Phase)> {
        self.heap.peek().map(|e| (e.at, e.phase))
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }

    /// Number of scheduled events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
        assert_eq!(q.peek(), Some((SimTime(1), Phase::FollowUp)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(order, vec![(1, "a"), (3, "c"), (5, "b1"), (5, "b2"), (5, "b3"), (5, "retry")]);
        assert!(q.is_empty());
    }
}
