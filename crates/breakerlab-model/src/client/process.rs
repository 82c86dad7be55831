//! The client as a scheduled job (seed 000's nightly runs): every run is a fresh process, so the
//! breaker's memory is lost unless something is persisted between runs.

use crate::time::{Dur, SimTime};
use crate::upstream::TimeOfDay;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// What survives a restart of the client process.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Persist {
    /// Nothing: every run starts with a fresh, closed breaker.
    #[default]
    None,
    /// The observation samples, reloaded into a fresh breaker (seed 000's save_samples /
    /// load_samples: "carry the facts, not the state"); families without a sample window start
    /// fresh.
    Samples,
    /// The whole breaker state, as if the process had never stopped.
    State,
}

/// `[client.process]`: the client process restarts every `every`, first at `at` (time of day)
/// or `offset` (default: one period after the start).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSpec {
    /// Time between restarts (> 0).
    pub every: Dur,
    /// Time of day of the first restart.
    #[serde(default)]
    pub at: Option<TimeOfDay>,
    /// Time of the first restart after the start.
    #[serde(default)]
    pub offset: Option<Dur>,
    /// What survives a restart.
    #[serde(default)]
    pub persist: Persist,
}

impl ProcessSpec {
    /// `every` must be positive; `at` and `offset` exclude each other.
    pub fn validate(&self) -> Result<()> {
        if self.every.is_zero() {
            return Err(Error::invalid("process: `every` must be longer than 0s"));
        }
        if self.at.is_some() && self.offset.is_some() {
            return Err(Error::invalid("process: give `at` or `offset`, not both"));
        }
        Ok(())
    }

    /// The first restart.
    pub fn first(&self) -> SimTime {
        let first = match (self.at, self.offset) {
            (Some(at), _) => at.since_midnight(),
            (None, Some(offset)) => offset,
            (None, None) => self.every,
        };
        SimTime(first.micros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_restart_from_at_offset_or_period() {
        let spec: ProcessSpec = toml::from_str("every = \"15m\"\npersist = \"samples\"").unwrap();
        assert_eq!((spec.first(), spec.persist), (SimTime(900_000_000), Persist::Samples));
        let at: ProcessSpec = toml::from_str("every = \"1d\"\nat = \"01:30\"").unwrap();
        assert_eq!(at.first(), SimTime(5_400_000_000));
        assert!(
            toml::from_str::<ProcessSpec>("every = \"1d\"\nat = \"01:30\"\noffset = \"1h\"")
                .unwrap()
                .validate()
                .is_err()
        );
        assert!(toml::from_str::<ProcessSpec>("every = \"1d\"\npersist = \"everything\"").is_err());
    }
}
