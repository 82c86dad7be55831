//! What a call to the dependency can come back with, and how a policy's classifier reads it.

use crate::time::Dur;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The class of one attempt's answer, as the client sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeClass {
    /// A good answer.
    Ok,
    /// A server error (5xx-like): the dependency's health.
    Error,
    /// The client gave up at its call timeout (the dependency still did the work).
    Timeout,
    /// 429: a quota or rate limit, possibly with a retry-after.
    RateLimited,
    /// 4xx/auth: the caller's fault, not the dependency's health.
    ClientError,
}

impl OutcomeClass {
    /// Every class, in a fixed order (the order of [`Classifier`]'s table).
    pub const ALL: [OutcomeClass; 5] = [
        OutcomeClass::Ok,
        OutcomeClass::Error,
        OutcomeClass::Timeout,
        OutcomeClass::RateLimited,
        OutcomeClass::ClientError,
    ];

    /// Position in [`OutcomeClass::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::Ok => "ok",
            OutcomeClass::Error => "error",
            OutcomeClass::Timeout => "timeout",
            OutcomeClass::RateLimited => "rate_limited",
            OutcomeClass::ClientError => "client_error",
        }
    }
}

/// The dependency's answer to one attempt, before the client's timeout is applied.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// How long the dependency takes to answer (it keeps working past the client's timeout).
    pub latency: Dur,
    /// What it answers with; never [`OutcomeClass::Timeout`] (only the client times out).
    pub class: OutcomeClass,
    /// Retry-after hint carried by a rate-limited answer.
    pub retry_after: Option<Dur>,
}

/// How a policy counts one completed attempt.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Counts as a success.
    Success,
    /// Counts as a failure.
    Failure,
    /// Not recorded by the breaker at all.
    Ignored,
}

/// Maps each outcome class to a verdict: the policy's idea of what counts as a failure.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Classifier {
    table: [Verdict; 5],
}

impl Classifier {
    /// 5xx, timeouts and 429s are failures; client errors (4xx/auth) are ignored.
    pub const DEFAULT: Classifier = Classifier {
        table: [Verdict::Success, Verdict::Failure, Verdict::Failure, Verdict::Failure, Verdict::Ignored],
    };
    /// Every non-ok answer is a failure (as code that catches every exception does).
    pub const EVERY_ERROR: Classifier = Classifier {
        table: [Verdict::Success, Verdict::Failure, Verdict::Failure, Verdict::Failure, Verdict::Failure],
    };

    /// The verdict for one class.
    pub fn verdict(&self, class: OutcomeClass) -> Verdict {
        self.table[class.index()]
    }

    /// The same classifier with one class mapped to `verdict`.
    pub const fn with(mut self, class: OutcomeClass, verdict: Verdict) -> Classifier {
        self.table[class.index()] = verdict;
        self
    }

    /// Builds a classifier from lists: `failures` count as failures, `ignored` are not recorded,
    /// every other class is a success. `ok` may not be a failure.
    pub fn from_lists(failures: &[OutcomeClass], ignored: &[OutcomeClass]) -> Result<Classifier> {
        let mut table = [Verdict::Success; 5];
        for class in failures {
            if *class == OutcomeClass::Ok {
                return Err(Error::invalid("`ok` cannot be counted as a failure"));
            }
            table[class.index()] = Verdict::Failure;
        }
        for class in ignored {
            if table[class.index()] == Verdict::Failure {
                return Err(Error::invalid(format!(
                    "`{}` is listed both as a failure and as ignored",
                    class.as_str()
                )));
            }
            table[class.index()] = Verdict::Ignored;
        }
        Ok(Classifier { table })
    }

    /// The classes this classifier counts as failures, in [`OutcomeClass::ALL`] order.
    pub fn failures(&self) -> Vec<OutcomeClass> {
        OutcomeClass::ALL.into_iter().filter(|c| self.verdict(*c) == Verdict::Failure).collect()
    }

    /// The classes this classifier ignores, in [`OutcomeClass::ALL`] order.
    pub fn ignored(&self) -> Vec<OutcomeClass> {
        OutcomeClass::ALL.into_iter().filter(|c| self.verdict(*c) == Verdict::Ignored).collect()
    }
}

impl Default for Classifier {
    fn default() -> Classifier {
        Classifier::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_ignores_client_errors() {
        let c = Classifier::DEFAULT;
        assert_eq!(c.verdict(OutcomeClass::Ok), Verdict::Success);
        assert_eq!(c.verdict(OutcomeClass::Timeout), Verdict::Failure);
        assert_eq!(c.verdict(OutcomeClass::ClientError), Verdict::Ignored);
        assert_eq!(Classifier::EVERY_ERROR.verdict(OutcomeClass::ClientError), Verdict::Failure);
    }

    #[test]
    fn lists_build_and_refuse_contradictions() {
        let c = Classifier::from_lists(&[OutcomeClass::Error], &[OutcomeClass::RateLimited]).unwrap();
        assert_eq!(c.verdict(OutcomeClass::Timeout), Verdict::Success);
        assert_eq!(c.verdict(OutcomeClass::RateLimited), Verdict::Ignored);
        assert_eq!(c.failures(), vec![OutcomeClass::Error]);
        assert!(Classifier::from_lists(&[OutcomeClass::Ok], &[]).is_err());
        assert!(Classifier::from_lists(&[OutcomeClass::Error], &[OutcomeClass::Error]).is_err());
    }
}
