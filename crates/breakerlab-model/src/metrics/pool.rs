//! A pool's scores (DESIGN.md "Pools of hosts"): how fast each client ejected each bad host,
//! how many attempts went to a host during its incident, how many healthy hosts were ejected,
//! how much capacity that cost and how often the pool was in panic; plus what the detectors
//! detected without ejecting.
//!
//! [`PoolRecorder`] counts during the run what the transitions do not hold (attempts sent to a
//! host in trouble, panic, detections); [`PoolRecord::score`] reads the rest from the run's
//! transitions, where host `h` of client `c` is breaker instance `c × hosts + h`. Columns are
//! written `pool.<name>` after the other metrics, for pool scenarios only.

use crate::policy::outlier::{Detection, Outcome};
use crate::policy::{State, Transition};
use crate::time::{Dur, SimTime};
use crate::truth::Expect;
use crate::upstream::pool::{HostWindow, Pool};

/// What one run recorded about its pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolRecord {
    /// Hosts in the pool.
    pub hosts: u16,
    /// Clients, each with its own balancer (and detector).
    pub clients: usize,
    /// True when the clients ran outlier detection (the transitions are then hosts' ejections).
    pub detects: bool,
    /// The incidents with the hosts they hit, sorted by start.
    pub windows: Vec<HostWindow>,
    /// Attempts sent to a host while an incident expecting an ejection hit it.
    pub bad_host_requests: u64,
    /// Entries into panic, summed over clients.
    pub panic_episodes: u64,
    /// Time in panic, summed over clients.
    pub panic_time: Dur,
    /// Every detection, with its client, in the order made.
    pub detections: Vec<(u32, Detection)>,
}

/// Counts, as the run goes, what a pool's scores need besides the transitions.
#[derive(Debug)]
pub struct PoolRecorder {
    record: PoolRecord,
    /// Per host, its incident windows expecting an ejection (start, end), sorted, and the first
    /// not yet over (attempts come in time order).
    bad: Vec<(Vec<(SimTime, SimTime)>, usize)>,
    /// Per client, when its current panic started.
    panic_since: Vec<Option<SimTime>>,
}

impl PoolRecorder {
    /// A recorder for `pool` seen by `clients` clients.
    pub fn new(pool: &Pool, clients: usize) -> PoolRecorder {
        let hosts = pool.len();
        let mut bad = vec![(Vec::new(), 0usize); usize::from(hosts)];
        for w in pool.windows.iter().filter(|w| w.expect != Expect::StayClosed) {
            for &h in &w.hosts {
                bad[usize::from(h)].0.push((w.start, w.end));
            }
        }
        for (list, _) in &mut bad {
            list.sort_unstable();
        }
        PoolRecorder {
            record: PoolRecord {
                hosts,
                clients,
                detects: false,
                windows: pool.windows.clone(),
                bad_host_requests: 0,
                panic_episodes: 0,
                panic_time: Dur::ZERO,
                detections: Vec::new(),
            },
            bad,
            panic_since: vec![None; clients],
        }
    }

    /// Notes that the clients run outlier detection.
    pub fn set_detects(&mut self, detects: bool) {
        self.record.detects = detects;
    }

    /// An attempt went to `host` at `at` (attempts come in time order).
    #[inline]
    pub fn sent(&mut self, at: SimTime, host: u16) {
        let (windows, cursor) = &mut self.bad[usize::from(host)];
        while windows.get(*cursor).is_some_and(|w| w.1 <= at) {
            *cursor += 1;
        }
        if windows[*cursor..].iter().take_while(|w| w.0 <= at).any(|w| at < w.1) {
            self.record.bad_host_requests += 1;
        }
    }

    /// Client `client`'s pool entered (`entered`) or left panic at `at`.
    pub fn panic(&mut self, at: SimTime, client: u32, entered: bool) {
        let since = &mut self.panic_since[client as usize];
        if entered {
            self.record.panic_episodes += 1;
            *since = Some(at);
        } else if let Some(start) = since.take() {
            self.record.panic_time = self.record.panic_time + at.since(start);
        }
    }

    /// Client `client`'s detector made `detections`.
    pub fn detections(&mut self, client: u32, detections: impl Iterator<Item = Detection>) {
        self.record.detections.extend(detections.map(|d| (client, d)));
    }

    /// The record at the run's end `end`.
    pub fn finish(mut self, end: SimTime) -> PoolRecord {
        for since in self.panic_since.iter_mut() {
            if let Some(start) = since.take() {
                self.record.panic_time = self.record.panic_time + end.since(start);
            }
        }
        self.record
    }
}

/// A pool's scores; see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolScores {
    /// Hosts ejected (closed → open), summed over clients.
    pub ejections: u64,
    /// Mean time from an incident's start to a client's first ejection of a host it hits,
    /// over (incident, host, client) with one, seconds; 0 when the host was already ejected.
    pub eject_delay_mean_s: Option<f64>,
    /// The largest of those, seconds.
    pub eject_delay_max_s: Option<f64>,
    /// (incident expecting an ejection, host, client) with no ejection before the incident's end
    /// plus the tolerance.
    pub ejections_missed: u64,
    /// Attempts sent to a host during an incident that hit it.
    pub bad_host_requests: u64,
    /// Ejections of a host outside every incident (plus tolerance) that hit it.
    pub false_ejections: u64,
    /// Time hosts spent ejected while no incident hit them, summed over hosts and averaged over
    /// clients: host-seconds of the pool's capacity lost.
    pub capacity_lost_host_s: f64,
    /// Entries into panic, summed over clients.
    pub panic_episodes: u64,
    /// Time in panic, summed over clients, seconds.
    pub panic_s: f64,
    /// Detections whose enforcement draw said no.
    pub detections_unenforced: u64,
    /// Detections the ejection limit refused.
    pub detections_overflow: u64,
}

impl PoolScores {
    /// Column names, in summary.csv order.
    pub const COLUMNS: [&'static str; 11] = [
        "pool.ejections",
        "pool.eject_delay_mean_s",
        "pool.eject_delay_max_s",
        "pool.ejections_missed",
        "pool.bad_host_requests",
        "pool.false_ejections",
        "pool.capacity_lost_host_s",
        "pool.panic_episodes",
        "pool.panic_s",
        "pool.detections_unenforced",
        "pool.detections_overflow",
    ];

    /// A column's value by name (`None`: empty cell, or not a pool column).
    pub fn column(&self, column: &str) -> Option<f64> {
        let n = |v: u64| Some(v as f64);
        match column {
            "pool.ejections" => n(self.ejections),
            "pool.eject_delay_mean_s" => self.eject_delay_mean_s,
            "pool.eject_delay_max_s" => self.eject_delay_max_s,
            "pool.ejections_missed" => n(self.ejections_missed),
            "pool.bad_host_requests" => n(self.bad_host_requests),
            "pool.false_ejections" => n(self.false_ejections),
            "pool.capacity_lost_host_s" => Some(self.capacity_lost_host_s),
            "pool.panic_episodes" => n(self.panic_episodes),
            "pool.panic_s" => Some(self.panic_s),
            "pool.detections_unenforced" => n(self.detections_unenforced),
            "pool.detections_overflow" => n(self.detections_overflow),
            _ => None,
        }
    }
}

impl PoolRecord {
    /// The ejection intervals `[from, to)` of each (client, host) instance from `transitions`,
    /// an interval still open at the end closing at `end`.
    fn ejections(&self, transitions: &[(usize, Transition)], end: SimTime) -> Vec<Vec<(SimTime, SimTime)>> {
        let instances = self.clients * usize::from(self.hosts);
        let mut out = vec![Vec::new(); instances];
        let mut open: Vec<Option<SimTime>> = vec![None; instances];
        if !self.detects {
            return out;
        }
        for (i, t) in transitions {
            let Some(slot) = open.get_mut(*i) else { continue };
            match (t.to, *slot) {
                (State::Open, None) => *slot = Some(t.at),
                (State::Closed, Some(from)) => {
                    out[*i].push((from, t.at));
                    *slot = None;
                }
                _ => {}
            }
        }
        for (i, slot) in open.into_iter().enumerate() {
            if let Some(from) = slot {
                out[i].push((from, end.max(from)));
            }
        }
        out
    }

    /// The scores of this pool given the run's transitions, its end and the scoring tolerance.
    pub fn score(&self, transitions: &[(usize, Transition)], end: SimTime, tolerance: Dur) -> PoolScores {
        let hosts = usize::from(self.hosts);
        let ejected = self.ejections(transitions, end);
        // Per host, the windows of incidents expecting an ejection (open or either), and the
        // windows it must be ejected in (open).
        let mut troubled: Vec<Vec<(SimTime, SimTime)>> = vec![Vec::new(); hosts];
        for w in self.windows.iter().filter(|w| w.expect != Expect::StayClosed) {
            for &h in &w.hosts {
                troubled[usize::from(h)].push((w.start, w.end));
            }
        }
        let mut delays = Vec::new();
        let mut missed = 0u64;
        for w in self.windows.iter().filter(|w| w.expect == Expect::Open) {
            for &h in &w.hosts {
                for c in 0..self.clients {
                    let spans = &ejected[c * hosts + usize::from(h)];
                    let covering = spans.iter().find(|s| s.0 <= w.start && w.start < s.1);
                    let first = spans.iter().find(|s| s.0 >= w.start && s.0 < w.end + tolerance);
                    match (covering, first) {
                        (Some(_), _) => delays.push(0.0),
                        (None, Some(s)) => delays.push(s.0.since(w.start).as_secs_f64()),
                        (None, None) => missed += 1,
                    }
                }
            }
        }
        let mut false_ejections = 0u64;
        let mut lost = Dur::ZERO;
        for (i, spans) in ejected.iter().enumerate() {
            let windows = &troubled[i % hosts];
            for &(from, to) in spans {
                if !windows.iter().any(|w| w.0 <= from && from < w.1 + tolerance) {
                    false_ejections += 1;
                }
                lost = lost + Dur(to.since(from).micros() - overlap(from, to, windows).micros());
            }
        }
        let count = |o: Outcome| self.detections.iter().filter(|(_, d)| d.outcome == o).count() as u64;
        let mean = (!delays.is_empty()).then(|| delays.iter().sum::<f64>() / delays.len() as f64);
        PoolScores {
            ejections: ejected.iter().map(|s| s.len() as u64).sum(),
            eject_delay_mean_s: mean,
            eject_delay_max_s: delays.iter().copied().reduce(f64::max),
            ejections_missed: missed,
            bad_host_requests: self.bad_host_requests,
            false_ejections,
            capacity_lost_host_s: lost.as_secs_f64() / self.clients.max(1) as f64,
            panic_episodes: self.panic_episodes,
            panic_s: self.panic_time.as_secs_f64(),
            detections_unenforced: count(Outcome::NotEnforced),
            detections_overflow: count(Outcome::Overflow),
        }
    }
}

/// How much of `[from, to)` the union of `windows` covers.
fn overlap(from: SimTime, to: SimTime, windows: &[(SimTime, SimTime)]) -> Dur {
    let mut cut: Vec<(SimTime, SimTime)> =
        windows.iter().map(|w| (w.0.max(from), w.1.min(to))).filter(|w| w.0 < w.1).collect();
    cut.sort_unstable();
    let mut total = Dur::ZERO;
    let mut reach = from;
    for (a, b) in cut {
        let a = a.max(reach);
        if b > a {
            total = total + b.since(a);
            reach = b;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::outlier::Kind;

    const S: u64 = 1_000_000;

    fn window(start_s: u64, end_s: u64, hosts: Vec<u16>) -> HostWindow {
        HostWindow { start: SimTime(start_s * S), end: SimTime(end_s * S), hosts, expect: Expect::Open }
    }

    fn t(at_s: u64, to: State) -> Transition {
        let from = if to == State::Open { State::Closed } else { State::Open };
        Transition { at: SimTime(at_s * S), from, to, reason: "test" }
    }

    fn record(windows: Vec<HostWindow>) -> PoolRecord {
        PoolRecord {
            hosts: 3,
            clients: 2,
            detects: true,
            windows,
            bad_host_requests: 7,
            panic_episodes: 1,
            panic_time: Dur::from_secs(4),
            detections: vec![
                (
                    0,
                    Detection {
                        at: SimTime(S),
                        host: 1,
                        kind: Kind::ConsecutiveGateway,
                        outcome: Outcome::NotEnforced,
                    },
                ),
                (
                    1,
                    Detection {
                        at: SimTime(S),
                        host: 1,
                        kind: Kind::Consecutive5xx,
                        outcome: Outcome::Ejected,
                    },
                ),
            ],
        }
    }

    #[test]
    fn delays_misses_false_ejections_and_capacity() {
        // Host 1 is bad over [100 s, 200 s). Client 0 ejects it at 110 s until 140 s, and host 2
        // (healthy) at 150 s until the end (300 s); client 1 never ejects host 1.
        let r = record(vec![window(100, 200, vec![1])]);
        let trs = vec![(1, t(110, State::Open)), (1, t(140, State::Closed)), (2, t(150, State::Open))];
        let s = r.score(&trs, SimTime(300 * S), Dur::from_secs(30));
        assert_eq!(s.ejections, 2);
        assert_eq!(
            (s.eject_delay_mean_s, s.eject_delay_max_s, s.ejections_missed),
            (Some(10.0), Some(10.0), 1)
        );
        assert_eq!(s.false_ejections, 1, "host 2 had no incident");
        // Host 2 out 150 s while healthy, over 2 clients: 75 host-seconds; host 1's time was
        // all inside its incident.
        assert_eq!(s.capacity_lost_host_s, 75.0);
        assert_eq!((s.bad_host_requests, s.panic_episodes, s.panic_s), (7, 1, 4.0));
        assert_eq!((s.detections_unenforced, s.detections_overflow), (1, 0));
        assert_eq!(s.column("pool.false_ejections"), Some(1.0));
        assert_eq!(s.column("pool.nope"), None);
        for c in PoolScores::COLUMNS {
            assert!(
                c == "pool.eject_delay_mean_s" || c == "pool.eject_delay_max_s" || s.column(c).is_some(),
                "{c}"
            );
        }
    }

    #[test]
    fn a_host_already_ejected_at_the_start_counts_as_caught_at_once() {
        let r = record(vec![window(100, 200, vec![0])]);
        let trs = vec![(0, t(90, State::Open)), (3, t(120, State::Open))];
        let s = r.score(&trs, SimTime(300 * S), Dur::from_secs(30));
        assert_eq!(
            (s.eject_delay_mean_s, s.eject_delay_max_s, s.ejections_missed),
            (Some(10.0), Some(20.0), 0)
        );
        assert_eq!(s.false_ejections, 1, "the ejection at 90 s came before the incident");
        assert_eq!(
            overlap(SimTime(0), SimTime(10), &[(SimTime(2), SimTime(4)), (SimTime(3), SimTime(6))]),
            Dur(4)
        );
    }
}
