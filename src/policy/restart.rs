//! What a breaker keeps across a restart of the client process when its observation samples are
//! persisted (seed 000's `save_samples` / `load_samples`: "carry the facts, not the state").

use super::Policy;
use crate::time::SimTime;

impl Policy {
    /// `fresh` (a newly built breaker of the same configuration) with this breaker's samples
    /// reloaded at `now`, as seed 000 does at a job's start: the connector breaker's window, the
    /// circuit gate's failure times. The state (open, cooldown) is not carried. Families without
    /// a persisted sample list start fresh.
    pub fn restarted_with_samples(&self, mut fresh: Policy, now: SimTime) -> Policy {
        match (self, &mut fresh) {
            (Policy::Connector(old), Policy::Connector(new)) => new.load_samples(old, now),
            (Policy::Gate(old), Policy::Gate(new)) => new.load_failures(old),
            _ => {}
        }
        fresh
    }
}
