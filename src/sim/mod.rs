//! The simulation: build the request stream of a (scenario, replicate) once, then run any number
//! of breaker configurations on it.

mod engine;
mod queue;
mod workload;

pub use engine::{RunOptions, Simulation, simulate, simulate_fleet};
pub(crate) use workload::CHUNK_REQUESTS;
pub use workload::{Chunk, RequestStream, Workload};

use crate::metrics::{Metrics, RunRecord, ScoringOptions, score};
use crate::policy::PolicyConfig;
use crate::scenario::{Scenario, ScoringSpec};
use crate::time::Dur;

/// The raw record and the scores of one run.
#[derive(Debug)]
pub struct RunResult {
    /// Counters, transitions, timeline.
    pub record: RunRecord,
    /// The metrics computed from the record.
    pub metrics: Metrics,
}

/// Runs one configuration on a prepared workload and scores it.
pub fn run(scenario: &Scenario, workload: &Workload, policy: &PolicyConfig, opts: &RunOptions) -> RunResult {
    run_fleet(scenario, workload, std::slice::from_ref(policy), opts)
}

/// Runs a mixed fleet (client instance `i` runs `policies[i % len]`) and scores it.
pub fn run_fleet(
    scenario: &Scenario,
    workload: &Workload,
    policies: &[PolicyConfig],
    opts: &RunOptions,
) -> RunResult {
    scored(scenario, workload, simulate_fleet(&scenario.client, workload, policies, opts))
}

/// Scores the record of a run of `scenario` on `workload` (a [`Simulation`] fed chunk by chunk).
pub fn scored(scenario: &Scenario, workload: &Workload, record: RunRecord) -> RunResult {
    let metrics = score(&record, &scoring_options(&scenario.scoring, workload.truth_known));
    RunResult { record, metrics }
}

/// The scorer's options from a scenario's `[scoring]` table; `ground_truth` says whether the
/// workload has any (a synthetic scenario always does, even with no incidents).
pub fn scoring_options(spec: &ScoringSpec, ground_truth: bool) -> ScoringOptions {
    ScoringOptions { tolerance: spec.tolerance, flap_window: spec.flap_window, ground_truth }
}

/// A timeline bin width for a span: the smallest round width giving at most 1,500 bins.
pub fn auto_bin(span: Dur) -> Dur {
    const WIDTHS_S: [u64; 14] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 21_600];
    let secs = span.as_secs_f64();
    let chosen = WIDTHS_S.iter().copied().find(|w| secs / *w as f64 <= 1_500.0).unwrap_or(86_400);
    Dur::from_secs(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_bin_keeps_bins_readable() {
        assert_eq!(auto_bin(Dur::from_secs(600)), Dur::from_secs(1));
        assert_eq!(auto_bin(Dur::from_secs(2 * 3600)), Dur::from_secs(5));
        assert_eq!(auto_bin(Dur::from_secs(7 * 86_400)), Dur::from_secs(600));
    }
}
