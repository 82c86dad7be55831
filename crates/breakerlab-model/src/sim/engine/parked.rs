//! The calls a breaker told to wait ([`Admission::Wait`](crate::policy::Admission)), in arrival
//! order, with a count of the calls waiting for each key, so that offering them again stops as
//! soon as every key still waiting is known to be held: with pybreaker's lock (one key) a
//! breaker holding ten thousand waiting calls looks at one of them per result, not all of them.

use std::collections::{BTreeMap, VecDeque};

/// Waiting calls (`T`, each with its wait key) in arrival order.
pub(super) struct Parked<T> {
    line: VecDeque<(T, u64)>,
    /// Calls waiting per key (no entry for a key nobody waits for).
    per_key: BTreeMap<u64, usize>,
}

impl<T: Copy> Parked<T> {
    pub(super) fn new() -> Parked<T> {
        Parked { line: VecDeque::with_capacity(16), per_key: BTreeMap::new() }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    pub(super) fn len(&self) -> usize {
        self.line.len()
    }

    /// How many different keys the waiting calls wait for.
    pub(super) fn keys(&self) -> usize {
        self.per_key.len()
    }

    /// The `i`th waiting call in line and its key.
    pub(super) fn get(&self, i: usize) -> Option<(T, u64)> {
        self.line.get(i).copied()
    }

    /// Puts a call at the end of the line.
    pub(super) fn push_back(&mut self, call: T, key: u64) {
        self.insert(self.line.len(), call, key);
    }

    /// Puts a call at place `i` of the line.
    pub(super) fn insert(&mut self, i: usize, call: T, key: u64) {
        *self.per_key.entry(key).or_default() += 1;
        self.line.insert(i, (call, key));
    }

    /// Takes the `i`th call out of the line.
    pub(super) fn remove(&mut self, i: usize) -> Option<(T, u64)> {
        let (call, key) = self.line.remove(i)?;
        self.forget(key);
        Some((call, key))
    }

    /// Takes the last call out of the line.
    pub(super) fn pop_back(&mut self) -> Option<(T, u64)> {
        let last = self.line.len().checked_sub(1)?;
        self.remove(last)
    }

    /// Takes the first call out of the line.
    pub(super) fn pop_front(&mut self) -> Option<(T, u64)> {
        self.remove(0)
    }

    fn forget(&mut self, key: u64) {
        if let Some(n) = self.per_key.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                self.per_key.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_counted_through_every_change_of_the_line() {
        let mut p = Parked::new();
        p.push_back('a', 7);
        p.push_back('b', 7);
        p.insert(1, 'c', 9);
        assert_eq!((p.len(), p.keys()), (3, 2));
        assert_eq!(p.get(1), Some(('c', 9)));
        assert_eq!(p.remove(1), Some(('c', 9)));
        assert_eq!(p.keys(), 1);
        assert_eq!(p.pop_back(), Some(('b', 7)));
        assert_eq!(p.pop_front(), Some(('a', 7)));
        assert!(p.is_empty() && p.keys() == 0 && p.pop_front().is_none());
    }
}
