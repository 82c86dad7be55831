//! Overload feedback: a dependency that serves `concurrency` calls at its normal speed, queues
//! up to `queue` more, and sheds the rest with a fast 503. A call that arrives with `n` calls
//! already in flight (`n >= concurrency`) waits `(n + 1 − concurrency) × p50 / concurrency` on
//! top of its own latency: the queue ahead of it, served `concurrency` at a time at the healthy
//! median. Calls keep their slot until the dependency finishes them, even after the
//! client timed out, so retries and probes from many clients can keep it overloaded after the
//! trigger has passed (seed 001's retry storm).
//!
//! Stateful, so the engine applies it on top of the pure answer of [`super::Dependency`].

use crate::outcome::{Answer, OutcomeClass};
use crate::time::{Dur, SimTime};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// `[upstream.capacity]`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Calls served at once at normal speed (>= 1).
    pub concurrency: u32,
    /// Calls accepted beyond `concurrency`; any more are shed with a 503.
    #[serde(default)]
    pub queue: u32,
    /// Latency of a shed 503.
    #[serde(default = "default_shed_latency")]
    pub shed_latency: Dur,
}

fn default_shed_latency() -> Dur {
    Dur::from_millis(5)
}

impl CapacitySpec {
    /// `concurrency` must be at least 1.
    pub fn validate(&self) -> Result<()> {
        if self.concurrency == 0 {
            return Err(Error::invalid("capacity: `concurrency` must be at least 1"));
        }
        Ok(())
    }
}

/// The dependency's load: calls it is working on, and how long it has been over capacity.
#[derive(Debug, Clone)]
pub struct Load {
    spec: CapacitySpec,
    /// Healthy median service time: the queueing delay per call ahead, times `concurrency`.
    service: Dur,
    in_flight: u32,
    overloaded_since: Option<SimTime>,
    overloaded: Dur,
}

impl Load {
    /// An idle dependency whose healthy median latency is `service`.
    pub fn new(spec: &CapacitySpec, service: Dur) -> Load {
        Load { spec: spec.clone(), service, in_flight: 0, overloaded_since: None, overloaded: Dur::ZERO }
    }

    /// An attempt arrives at `at` with the dependency's unloaded `answer`. Returns the answer
    /// under the current load and whether the call took a slot (then [`Load::finish`] must be
    /// called when the dependency is done with it, at `at + answer.latency`).
    pub fn admit(&mut self, at: SimTime, mut answer: Answer) -> (Answer, bool) {
        let n = self.in_flight + 1;
        if n > self.spec.concurrency + self.spec.queue {
            let shed =
                Answer { latency: self.spec.shed_latency, class: OutcomeClass::Error, retry_after: None };
            return (shed, false);
        }
        if n > self.spec.concurrency {
            let ahead = u64::from(n - self.spec.concurrency);
            answer.latency =
                answer.latency + Dur(self.service.micros() * ahead / u64::from(self.spec.concurrency));
        }
        self.in_flight = n;
        self.track(at);
        (answer, true)
    }

    /// The dependency finished a call at `at`.
    pub fn finish(&mut self, at: SimTime) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.track(at);
    }

    /// Calls the dependency is working on.
    #[cfg(test)]
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// Time spent over capacity until `end` (an overload still running is counted up to `end`).
    pub fn overloaded_until(&self, end: SimTime) -> Dur {
        self.overloaded + self.overloaded_since.map_or(Dur::ZERO, |since| end - since)
    }

    fn track(&mut self, at: SimTime) {
        let over = self.in_flight > self.spec.concurrency;
        match (over, self.overloaded_since) {
            (true, None) => self.overloaded_since = Some(at),
            (false, Some(since)) => {
                self.overloaded = self.overloaded + (at - since);
                self.overloaded_since = None;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: Answer = Answer { latency: Dur::from_millis(100), class: OutcomeClass::Ok, retry_after: None };

    #[test]
    fn latency_grows_with_load_then_calls_are_shed() {
        let spec = CapacitySpec { concurrency: 2, queue: 2, shed_latency: Dur::from_millis(5) };
        let mut load = Load::new(&spec, Dur::from_millis(100));
        let t = SimTime(0);
        assert_eq!(load.admit(t, OK), (OK, true));
        assert_eq!(load.admit(t, OK), (OK, true));
        let (third, took) = load.admit(t, OK);
        assert!(took);
        assert_eq!(third.latency, Dur::from_millis(150), "one call ahead in the queue: + 100 ms / 2");
        assert_eq!(load.admit(t, OK).0.latency, Dur::from_millis(200), "two ahead: + 100 ms");
        let (shed, took) = load.admit(t, OK);
        assert!(!took);
        assert_eq!((shed.class, shed.latency), (OutcomeClass::Error, Dur::from_millis(5)));
        assert_eq!(load.in_flight(), 4);
    }

    #[test]
    fn overload_time_is_measured_while_above_concurrency() {
        let mut load =
            Load::new(&CapacitySpec { concurrency: 1, queue: 5, shed_latency: Dur::ZERO }, Dur::ZERO);
        load.admit(SimTime(0), OK);
        load.admit(SimTime(1_000), OK); // 2 > 1: overloaded from 1 ms
        load.finish(SimTime(4_000)); // back to 1: 3 ms over
        assert_eq!(load.overloaded_until(SimTime(10_000)), Dur(3_000));
        load.admit(SimTime(6_000), OK);
        assert_eq!(
            load.overloaded_until(SimTime(10_000)),
            Dur(7_000),
            "a running overload counts to the end"
        );
    }
}
