//! The host each call of a per-call log went to (`[trace] host_column`, Envoy's
//! `upstream_host`, a span's `server.address`): [`HostIds`] numbers the values as an importer
//! meets them, [`HostColumn`] holds them once the log is read, numbered in sorted order of
//! their values (so the numbering does not depend on which host logged first or on `--where`),
//! with each host's calls for answers drawn from that host alone and the per-host ground truth.
//!
//! A replay runs these hosts as a pool ([`crate::upstream::pool::Pool::replay`]). Pure model:
//! no I/O.

use crate::upstream::pool::{HostWindow, MAX_HOSTS};
use std::collections::HashMap;

/// Numbers host values in the order an importer meets them (one per kept call).
#[derive(Clone, Debug, Default)]
pub struct HostIds {
    names: Vec<String>,
    index: HashMap<String, u16>,
    /// The host of each call pushed, first-seen numbering.
    pub of_call: Vec<u16>,
}

impl HostIds {
    /// No host yet.
    pub fn new() -> HostIds {
        HostIds::default()
    }

    /// The number of host `value` (a new one when first met); an error says how many hosts a
    /// pool may have when `value` would be one too many.
    pub fn id(&mut self, value: &str) -> Result<u16, String> {
        if let Some(&id) = self.index.get(value) {
            return Ok(id);
        }
        if self.names.len() >= MAX_HOSTS as usize {
            return Err(format!(
                "{value:?} would be host {} of the pool: at most {MAX_HOSTS} distinct hosts fit (narrow the log \
                 with --where, or name another host column)",
                MAX_HOSTS + 1
            ));
        }
        let id = self.names.len() as u16;
        self.names.push(value.to_string());
        self.index.insert(value.to_string(), id);
        Ok(id)
    }

    /// Appends the host of the next call ([`HostIds::id`] of `value`).
    pub fn push(&mut self, value: &str) -> Result<(), String> {
        let id = self.id(value)?;
        self.of_call.push(id);
        Ok(())
    }

    /// How many distinct hosts.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True before any host.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The values, by first-seen number.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// The hosts of a per-call log, numbered in sorted order of their values.
#[derive(Clone, Debug, PartialEq)]
pub struct HostColumn {
    /// Each host's value (its name in every output), host 0 first; sorted.
    pub names: Vec<String>,
    /// The host of each logged call.
    of_call: Vec<u16>,
    /// Per host, the indices of its calls in the log, ascending (so in time order).
    calls_of: Vec<Vec<u32>>,
    /// True when the scenario named the column (`host_column`): the log then replays as a pool
    /// whatever the policy; a host field found in the format is used only by outlier detectors.
    pub explicit: bool,
    /// The log's ground truth per host (set by the importer's ground-truth step).
    pub windows: Vec<HostWindow>,
}

impl HostColumn {
    /// The column of `ids` (first-seen numbering), renumbered by sorted value.
    pub fn new(ids: HostIds, explicit: bool) -> HostColumn {
        let HostIds { names, of_call, .. } = ids;
        let mut order: Vec<u16> = (0..names.len() as u16).collect();
        order.sort_by(|a, b| names[usize::from(*a)].cmp(&names[usize::from(*b)]));
        let mut renumber = vec![0u16; names.len()];
        for (new, old) in order.iter().enumerate() {
            renumber[usize::from(*old)] = new as u16;
        }
        let sorted: Vec<String> = order.iter().map(|o| names[usize::from(*o)].clone()).collect();
        let of_call: Vec<u16> = of_call.iter().map(|h| renumber[usize::from(*h)]).collect();
        let mut calls_of = vec![Vec::new(); sorted.len()];
        for (i, h) in of_call.iter().enumerate() {
            calls_of[usize::from(*h)].push(i as u32);
        }
        HostColumn { names: sorted, of_call, calls_of, explicit, windows: Vec::new() }
    }

    /// How many hosts.
    pub fn len(&self) -> u16 {
        self.names.len() as u16
    }

    /// True without hosts (never, for a column of a log).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The host of logged call `i`.
    #[inline]
    pub fn host_of(&self, i: usize) -> Option<u16> {
        self.of_call.get(i).copied()
    }

    /// How many calls the log holds (the column's length).
    pub fn calls(&self) -> usize {
        self.of_call.len()
    }

    /// The indices of host `host`'s calls in the log, in time order.
    pub fn calls_of(&self, host: u16) -> &[u32] {
        &self.calls_of[usize::from(host)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_numbered_by_sorted_value() {
        let mut ids = HostIds::new();
        for v in ["pod-c", "pod-a", "pod-c", "pod-b", "pod-a"] {
            ids.push(v).unwrap();
        }
        assert_eq!(ids.names(), ["pod-c", "pod-a", "pod-b"]);
        let col = HostColumn::new(ids, true);
        assert_eq!(col.names, ["pod-a", "pod-b", "pod-c"]);
        let hosts: Vec<u16> = (0..5).map(|i| col.host_of(i).unwrap()).collect();
        assert_eq!(hosts, [2, 0, 2, 1, 0]);
        assert_eq!(col.calls_of(0), [1, 4]);
        assert_eq!(col.calls_of(2), [0, 2]);
        assert_eq!(col.host_of(5), None);
    }

    #[test]
    fn too_many_hosts_are_refused() {
        let mut ids = HostIds::new();
        for h in 0..MAX_HOSTS {
            ids.push(&format!("h{h}")).unwrap();
        }
        ids.push("h0").unwrap();
        let err = ids.push("one-more").unwrap_err();
        assert!(err.contains("\"one-more\" would be host 1001") && err.contains("at most 1000"), "{err}");
    }
}
