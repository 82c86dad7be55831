//! The evidence of each breaker at an incident's notable moments, for explain.csv: why a
//! breaker did not open during an incident needs what its rules saw when nothing changed. The
//! engine offers every result recorded while a breaker is closed; inside an incident window
//! this keeps the first and last such moment, the peak (the moment its trip rules came closest
//! to firing, [`Evidence::closeness`]) and each check's best value over the incident. Only runs
//! that write explain.csv keep snapshots ([`crate::sim::RunOptions::explain`]).

use crate::policy::{Breaker, Evidence, State};
use crate::time::SimTime;
use crate::truth::IncidentWindow;

/// Which moment of an incident a snapshot is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Moment {
    /// The first result recorded while closed inside the incident.
    Start,
    /// The result after which the trip rules came closest to firing.
    Peak,
    /// The last result recorded while closed inside the incident.
    End,
    /// Each check's value nearest to firing over the incident (not one instant: `at` is the
    /// peak's), so "never reached" is exact.
    Best,
}

impl Moment {
    /// Every moment, in explain.csv's order.
    pub const ALL: [Moment; 4] = [Moment::Start, Moment::Peak, Moment::End, Moment::Best];

    /// The `kind` written in explain.csv.
    pub fn kind(self) -> &'static str {
        match self {
            Moment::Start => "incident_start",
            Moment::Peak => "incident_peak",
            Moment::End => "incident_end",
            Moment::Best => "incident_best",
        }
    }
}

/// One breaker's evidence at one moment of one incident.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The incident's index in the record's truth (incidents.csv row order).
    pub incident: usize,
    /// The breaker (instance) index, as in transitions.csv.
    pub instance: usize,
    /// Which moment.
    pub moment: Moment,
    /// When.
    pub at: SimTime,
    /// Results recorded while closed inside the incident (on the `Best` row; 0 elsewhere).
    pub results: u64,
    /// What the closed state's rules saw.
    pub evidence: Evidence,
}

#[derive(Copy, Clone, Debug)]
struct Track {
    start: (SimTime, Evidence),
    peak: (SimTime, Evidence, (usize, f64)),
    end: (SimTime, Evidence),
    best: Evidence,
    results: u64,
}

/// Collects snapshots during a run, one track per (incident, breaker).
#[derive(Clone, Debug)]
pub struct Snapshots {
    windows: Vec<(SimTime, SimTime)>,
    breakers: usize,
    /// The first window that may still contain the clock (those before it have ended).
    cursor: usize,
    tracks: Vec<Option<Track>>,
}

impl Snapshots {
    /// For `truth` (sorted by start) and `breakers` breakers.
    pub fn new(truth: &[IncidentWindow], breakers: usize) -> Snapshots {
        Snapshots {
            windows: truth.iter().map(|w| (w.start, w.end)).collect(),
            breakers,
            cursor: 0,
            tracks: vec![None; truth.len() * breakers],
        }
    }

    /// Breaker `b` has just recorded a result at `now` (times never go back).
    #[inline]
    pub fn observe<B: Breaker>(&mut self, now: SimTime, b: usize, breaker: &B) {
        while self.windows.get(self.cursor).is_some_and(|w| w.1 <= now) {
            self.cursor += 1;
        }
        // Outside every incident (windows are sorted by start: none after the cursor's has
        // started either) there is nothing to keep, and no state to ask.
        if self.windows.get(self.cursor).is_some_and(|w| w.0 <= now) {
            self.observe_windows(now, b, breaker);
        }
    }

    /// [`Snapshots::observe`] once an incident window has started and not ended by `now`.
    fn observe_windows<B: Breaker>(&mut self, now: SimTime, b: usize, breaker: &B) {
        if breaker.state() != State::Closed {
            return;
        }
        let mut evidence = None;
        for i in self.cursor..self.windows.len() {
            let (start, end) = self.windows[i];
            if start > now {
                break;
            }
            if now >= end {
                continue;
            }
            let ev = *evidence.get_or_insert_with(|| breaker.evidence_at(now));
            let close = ev.closeness();
            let slot = &mut self.tracks[i * self.breakers + b];
            match slot {
                None => {
                    *slot = Some(Track {
                        start: (now, ev),
                        peak: (now, ev, close),
                        end: (now, ev),
                        best: ev,
                        results: 1,
                    })
                }
                Some(t) => {
                    if close > t.peak.2 {
                        t.peak = (now, ev, close);
                    }
                    t.end = (now, ev);
                    t.best.keep_best(&ev);
                    t.results += 1;
                }
            }
        }
    }

    /// Every snapshot, by incident, then instance, then moment.
    pub fn finish(self) -> Vec<Snapshot> {
        let mut out = Vec::new();
        for (k, track) in self.tracks.iter().enumerate() {
            let Some(t) = track else { continue };
            let (incident, instance) = (k / self.breakers, k % self.breakers);
            for moment in Moment::ALL {
                let (at, evidence, results) = match moment {
                    Moment::Start => (t.start.0, t.start.1, 0),
                    Moment::Peak => (t.peak.0, t.peak.1, 0),
                    Moment::End => (t.end.0, t.end.1, 0),
                    Moment::Best => (t.peak.0, t.best, t.results),
                };
                out.push(Snapshot { incident, instance, moment, at, results, evidence });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicySpec, Transitions};
    use crate::truth::Expect;

    #[test]
    fn keeps_start_peak_end_and_best_inside_the_window_only() {
        let mut p = PolicySpec::new("consecutive").resolve().unwrap().build(0);
        let truth = [IncidentWindow {
            start: SimTime(10),
            end: SimTime(100),
            kind: "outage".into(),
            expect: Expect::Open,
        }];
        let mut s = Snapshots::new(&truth, 1);
        let mut out = Transitions::new();
        let fail = crate::policy::Observation {
            verdict: crate::outcome::Verdict::Failure,
            latency: crate::time::Dur::ZERO,
        };
        let ok = crate::policy::Observation { verdict: crate::outcome::Verdict::Success, ..fail };
        for (t, obs) in [(5, fail), (20, fail), (30, fail), (40, ok), (50, fail), (120, fail)] {
            let crate::policy::Admission::Allow(ticket) = p.admit(SimTime(t), &mut out) else { panic!() };
            p.record(SimTime(t), ticket, obs, &mut out);
            s.observe(SimTime(t), 0, &p);
        }
        let snaps = s.finish();
        let at: Vec<(Moment, u64, f64)> =
            snaps.iter().map(|x| (x.moment, x.at.micros(), x.evidence.items()[0].value)).collect();
        // Consecutive failures: 2 at 20, 3 at 30 (the peak), 0 at 40, 1 at 50; 5 and 120 are outside.
        assert_eq!(
            at,
            [
                (Moment::Start, 20, 2.0),
                (Moment::Peak, 30, 3.0),
                (Moment::End, 50, 1.0),
                (Moment::Best, 30, 3.0)
            ]
        );
        assert_eq!(snaps[3].results, 4);
    }
}
