//! No breaker at all: every call is sent. The baseline every configuration is compared against.

use super::evidence::Evidence;
use super::family::{Family, Preset};
use super::machine::{Admission, Breaker, Observation, State, Ticket, Transitions};
use super::param::{PolicyError, family_config};
use crate::outcome::Classifier;
use crate::time::SimTime;

family_config! {
    /// The no-breaker family has no parameters.
    NoneConfig {
    }
}

impl Family for NoneConfig {
    type Breaker = NoBreaker;
    const NAME: &'static str = "none";
    const TITLE: &'static str = "none (no breaker)";
    const PRESETS: &'static [Preset<Self>] = &[Preset {
        name: "none",
        library: "",
        summary: "no breaker: every call is sent (the baseline to compare against)",
        source: "breakerlab (src/policy/none.rs, NoBreaker)",
        quirks: &[],
        config: NoneConfig::default,
        classifier: Classifier::DEFAULT,
    }];

    fn validate(&self) -> Result<(), PolicyError> {
        Ok(())
    }

    fn build(&self, _seed: u64) -> NoBreaker {
        NoBreaker
    }
}

/// A policy that never rejects: the baseline "no breaker" run.
#[derive(Clone, Debug, Default)]
pub struct NoBreaker;

impl Breaker for NoBreaker {
    const TIMED: bool = false;

    fn admit(&mut self, _now: SimTime, _out: &mut Transitions) -> Admission {
        Admission::Allow(Ticket::default())
    }
    fn record(&mut self, _now: SimTime, _ticket: Ticket, _obs: Observation, _out: &mut Transitions) {}
    fn state(&self) -> State {
        State::Closed
    }
    /// Nothing decides anything: no evidence.
    fn evidence(&self, _now: SimTime, _ev: &mut Evidence) {}
}
