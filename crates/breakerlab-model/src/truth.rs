//! Ground truth: the incident windows a run is scored against, and what the breaker was expected
//! to do in each. Synthetic incidents, label files and SLO rules all end up as these.

use crate::time::SimTime;
use serde::{Deserialize, Serialize};

/// What a breaker should do during an incident.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// A real incident: the breaker should open.
    Open,
    /// A blip the retries should absorb: opening is a false open.
    StayClosed,
    /// Either is acceptable.
    Either,
}

impl Expect {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Open => "open",
            Expect::StayClosed => "stay_closed",
            Expect::Either => "either",
        }
    }
}

/// One ground-truth window `[start, end)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncidentWindow {
    /// First instant of the incident.
    pub start: SimTime,
    /// First instant after it.
    pub end: SimTime,
    /// What happened (`outage`, `slowdown`, `label`, `slo`, ...).
    pub kind: String,
    /// What the breaker should do.
    pub expect: Expect,
}

impl IncidentWindow {
    /// True when `t` lies in `[start, end + tolerance)`.
    pub fn covers(&self, t: SimTime, tolerance: crate::time::Dur) -> bool {
        t >= self.start && t < self.end + tolerance
    }
}
