//! What one breaker family provides, in one place: its parameters and their validation, its
//! presets, how to build its state machine and how to write it in its library's syntax. A family
//! is one file implementing [`Family`] plus one line in the registry (`policy/mod.rs`), from
//! which the [`Policy`](super::Policy) enum, the preset catalogue, resolution and export are
//! generated.

use super::library::{ExportInput, Library};
use super::machine::Breaker;
use super::param::{Params, PolicyError};
use crate::Result;
use crate::outcome::Classifier;
use crate::time::{Dur, SimTime};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// One named configuration of a family: its defaults, default classifier and documentation.
#[derive(Copy, Clone, Debug)]
pub struct Preset<C: 'static> {
    /// The name used in files and on the command line, e.g. `connector-breaker`.
    pub name: &'static str,
    /// The library and version it reproduces (empty for breakerlab's own and the seeds').
    pub library: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where the behaviour comes from (seed file or library source), to check it against.
    pub source: &'static str,
    /// Behaviours of the original that a reader would not expect, each reproduced.
    pub quirks: &'static [&'static str],
    /// The preset's parameter values.
    pub config: fn() -> C,
    /// What the preset counts as a failure and ignores.
    pub classifier: Classifier,
}

/// A breaker family: implemented by its configuration type (a flat serde struct whose fields
/// are the family's parameters, unknown keys refused, written with
/// [`family_config!`](super::param::family_config) with its [`Params`]).
pub trait Family: Params + Serialize + DeserializeOwned + Clone + Debug + PartialEq + 'static {
    /// The state machine the engine drives.
    type Breaker: Breaker + Clone + Debug;
    /// The family's name in listings: `generic`, `connector`, ...
    const NAME: &'static str;
    /// How export refusals name the family, e.g. `connector (seed 000)`.
    const TITLE: &'static str = Self::NAME;
    /// The family's presets, in catalogue order.
    const PRESETS: &'static [Preset<Self>];

    /// Checks ranges and combinations that types alone do not.
    fn validate(&self) -> Result<(), PolicyError>;

    /// A fresh, closed state machine; `seed` feeds any randomness it draws.
    fn build(&self, seed: u64) -> Self::Breaker;

    /// `Some(timeout)` when the family dictates the client's call timeout (the seeds 002 and
    /// 003, Hystrix, opossum), where `Some(None)` means no timeout at all; `None` lets the
    /// scenario's client decide.
    fn imposed_call_timeout(&self) -> Option<Option<Dur>> {
        None
    }

    /// Writes this configuration in `lib`'s syntax (`Err` with the reason when `lib` cannot
    /// express it), or `None` when the family is not `lib`'s state machine.
    fn export(&self, _lib: Library, _input: &ExportInput) -> Option<Result<String>> {
        None
    }

    /// Why a configuration of this family cannot be exported to `lib` at all.
    fn refusal(lib: Library) -> String {
        format!(
            "the {} family is not {}'s state machine; start from the `{}` preset",
            Self::TITLE,
            lib.name(),
            lib.default_preset()
        )
    }

    /// After a client restart with persisted samples, loads `old`'s samples into `fresh` at
    /// `now` (seed 000's `load_samples`); families that persist nothing keep `fresh` as is.
    fn carry_samples(_old: &Self::Breaker, _fresh: &mut Self::Breaker, _now: SimTime) {}
}
