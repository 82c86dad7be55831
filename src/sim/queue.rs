//! The event queue: a binary heap ordered by `(time, sequence number)`, so events at equal times
//! are served in the order they were scheduled. Never ordered by floats or hashes.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the earliest `(at, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// A min-queue of events by `(time, insertion order)`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue whose sequence numbers start at `first_seq` (the engine reserves the
    /// numbers below it for the pre-generated arrivals, which precede every later event at
    /// the same instant).
    pub fn with_capacity(capacity: usize, first_seq: u64) -> EventQueue<E> {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), next_seq: first_seq }
    }

    /// Schedules `event` at `at`.
    pub fn push(&mut self, at: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, event });
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.at)
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
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(8, 0);
        q.push(SimTime(5), "b1");
        q.push(SimTime(1), "a");
        q.push(SimTime(5), "b2");
        q.push(SimTime(3), "c");
        q.push(SimTime(5), "b3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(order, vec![(1, "a"), (3, "c"), (5, "b1"), (5, "b2"), (5, "b3")]);
        assert!(q.is_empty());
    }
}
