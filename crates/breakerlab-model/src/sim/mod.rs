//! The simulation: build the request stream of a (scenario, replicate) once, then run any number
//! of breaker configurations on it.

mod engine;
mod queue;
mod workload;

pub use engine::{RunOptions, Simulation, simulate, simulate_fleet};
pub use workload::{CHUNK_REQUESTS, SCRIPT_CHUNK_REQUESTS};
pub use workload::{Chunk, RequestStream, Workload};

use crate::metrics::{CallRecord, Metrics, RunRecord, ScoringOptions, score};
use crate::policy::{Evidence, PolicyConfig, Transition};
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

/// [`run_fleet`], handing each state change with its evidence to `each` as the run goes (after
/// every chunk of the request stream, and at the end), so a long run streams transitions.csv
/// and explain.csv instead of holding every transition's evidence: the record keeps the
/// transitions for scoring, and only the evidence not yet handed out. A scripted run's answered
/// calls go to `calls` the same way, in script order, when the run is direct, each piece a
/// vector of its own that `calls` answers with an empty one for the log to reuse
/// ([`Simulation::drain_calls`]; the record keeps the others). After each chunk, `fed` hears
/// how many requests were simulated so far (for progress lines). Stops at the first error.
pub fn run_fleet_streaming<E>(
    scenario: &Scenario,
    workload: &Workload,
    policies: &[PolicyConfig],
    opts: &RunOptions,
    mut each: impl FnMut(usize, &Transition, &Evidence) -> Result<(), E>,
    mut calls: impl FnMut(Vec<CallRecord>) -> Result<Vec<CallRecord>, E>,
    mut fed: impl FnMut(u64),
) -> Result<RunResult, E> {
    let mut sim = Simulation::new(&scenario.client, workload, policies, opts);
    let mut stream = workload.streamed();
    let mut chunk = Chunk::default();
    while stream.next_chunk(&mut chunk) {
        sim.feed(&chunk);
        sim.drain_transitions(&mut each)?;
        sim.drain_calls(&mut calls)?;
        fed(chunk.first + chunk.arrivals.len() as u64);
    }
    let mut record = sim.finish();
    record.drain_transitions(&mut each)?;
    Ok(scored(scenario, workload, record))
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

    /// `preset` run on `workload` at once, with a timeline of minutes: its policy, the options
    /// and the result.
    fn whole_run(
        scenario: &Scenario,
        workload: &Workload,
        preset: &str,
        explain: bool,
    ) -> (PolicyConfig, RunOptions, RunResult) {
        let policy = crate::policy::PolicySpec::new(preset).resolve().unwrap();
        let opts = RunOptions { timeline_bin: Some(Dur::from_secs(60)), explain };
        let whole = run_fleet(scenario, workload, std::slice::from_ref(&policy), &opts);
        (policy, opts, whole)
    }

    #[test]
    fn a_streamed_scripted_run_hands_out_its_calls_in_order_and_keeps_the_rest() {
        // 150,000 calls over several chunks: outages of failures and slow calls trip the
        // breaker, so some calls are rejected and some wait (cockatiel's half-open callers).
        let mut text = String::new();
        for i in 0..150_000u64 {
            let bad = (i / 500) % 7 == 3;
            let latency = if bad { 900 + i % 50 } else { 20 + i % 30 };
            text += &format!("{},{latency},{}\n", i * 100, u8::from(!bad));
        }
        let calls = crate::upstream::script::calls_from_text(&text);
        let scenario = Scenario::from_calls(std::path::Path::new("week.csv"), calls).unwrap();
        let workload = Workload::build(&scenario, 1, 0).unwrap();
        for preset in ["circuit-gate", "cockatiel-consecutive"] {
            let (policy, opts, whole) = whole_run(&scenario, &workload, preset, false);
            let policies = std::slice::from_ref(&policy);
            assert_eq!((whole.record.calls.len(), whole.record.calls_from), (150_000, 0));
            let mut pieces = Vec::new();
            let streamed = run_fleet_streaming(
                &scenario,
                &workload,
                policies,
                &opts,
                |_, _, _| Ok::<(), ()>(()),
                |calls| {
                    pieces.push(calls);
                    Ok(Vec::new())
                },
                |_| {},
            )
            .unwrap();
            let handed: usize = pieces.iter().map(Vec::len).sum();
            assert!(
                pieces.len() > 1 && handed > 100_000,
                "{preset}: {} pieces, {handed} calls",
                pieces.len()
            );
            assert!(pieces.iter().flatten().all(|c| c.end().is_some()), "only answered calls are handed out");
            assert_eq!(streamed.record.calls_from, handed as u64);
            let mut all: Vec<_> = pieces.concat();
            all.extend(&streamed.record.calls);
            assert_eq!(all, whole.record.calls, "{preset}");
            assert!(all.iter().any(|c| c.start().is_none()), "{preset}: some calls were rejected");
            assert_eq!(streamed.metrics, whole.metrics);
        }
    }

    #[test]
    fn auto_bin_keeps_bins_readable() {
        assert_eq!(auto_bin(Dur::from_secs(600)), Dur::from_secs(1));
        assert_eq!(auto_bin(Dur::from_secs(2 * 3600)), Dur::from_secs(5));
        assert_eq!(auto_bin(Dur::from_secs(7 * 86_400)), Dur::from_secs(600));
    }
}
