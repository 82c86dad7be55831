//! `replicates = "auto"`: sequential replicates (the screen-then-select procedures of Nelson,
//! Swann, Goldsman & Song 2001, and Kim & Nelson's sequential ones, made deterministic).
//!
//! The sweep runs in stages. Stage 1 runs replicate 0 of every configuration: the constraints
//! that hold in every replicate already rule out each configuration that breaks one there (no
//! more replicates can mend that), at no error. Each later stage brings the configurations
//! still in the running to the next replicate count of the [`schedule`] (1, 3, 5, 10, 20, …,
//! up to `max_replicates`). After each stage:
//!
//! 1. the selection ([`super::selection::subset`]) runs on the qualifying configurations; when
//!    the lowest-cost one is separated from every other, the sweep stops: confidence reached;
//! 2. else, at the last replicate count (or when the next stage would pass `--max-calls`), it
//!    stops and says the budget ran out, listing what cannot be told apart;
//! 3. else it screens ([`super::selection::screen`]): a configuration beaten beyond noise by one
//!    of the lowest-cost qualifying ones leaves the running, as does one breaking a constraint
//!    that more replicates cannot mend; the rest go to the next stage.
//!
//! The error rate α = 1 − confidence is spread over the looks that can err (those with at least
//! two replicates, `J` of them): each look screens at α / 2J and selects at α / 2J, so the
//! probability that the best configuration is screened out, or wrongly declared separated, at
//! any look is at most α (Bonferroni over the looks and the comparisons; under normal paired
//! differences, as the procedures assume).
//!
//! Replicate `r` of a configuration is the replicate `r` an exhaustive sweep runs (the same
//! seed, the same request streams), so every comparison stays paired and a stage is a fixed set
//! of cells: the bytes written do not depend on the thread count.

use super::constraint::{Constraint, Scope};
use super::objective::BoundObjective;
use super::recommend::standing;
use super::selection::{Rule, Totals, screen, subset};
use super::table::ResultTable;

/// The most replicates `replicates = "auto"` gives a configuration when the sweep file does not
/// say (`max_replicates`).
pub const DEFAULT_MAX_REPLICATES: u32 = 10;

/// The most replicates `max_replicates` may ask for.
pub const MAX_REPLICATES: u32 = 1000;

/// The replicate counts the stages bring the configurations in the running to: 1, 3, 5, then
/// doubling (10, 20, 40, …), the last one `max` (at least 1).
pub fn schedule(max: u32) -> Vec<u32> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut n = 1u32;
    while n < max {
        out.push(n);
        n = match n {
            1 => 3,
            3 => 5,
            _ => n.saturating_mul(2),
        };
    }
    out.push(max);
    out
}

/// The looks of a schedule that can err: those with at least two replicates.
pub fn looks(max: u32) -> usize {
    schedule(max).iter().filter(|n| **n >= 2).count()
}

/// The share of the error rate each look's selection (and each look's screening) uses: 1 / 2J
/// for `J` looks.
pub fn selection_share(looks: usize) -> f64 {
    1.0 / (2 * looks.max(1)) as f64
}

/// Whether a constraint broken in `breaking` of `replicates` replicates stays broken whatever
/// further replicates up to `max` show: always for one that holds in every replicate or on the
/// worst; for `in P % of replicates` when too many break it already; never on the mean.
pub fn broken_for_good(constraint: &Constraint, breaking: usize, max: u32) -> bool {
    match constraint.scope {
        Scope::Every | Scope::Worst => breaking > 0,
        Scope::Share(p) => (f64::from(max) - breaking as f64) < p * f64::from(max) - 1e-9,
        Scope::Mean => false,
    }
}

/// Why an automatic sweep stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The lowest-cost qualifying configuration is separated from every other.
    Confident,
    /// One configuration qualifies.
    Alone,
    /// Nothing is left that could qualify.
    NoneQualifies,
    /// The configurations in the running reached `max_replicates`.
    MaxReplicates(u32),
    /// The next stage would have passed `--max-calls` (its calls, the limit).
    Calls(u64, u64),
}

/// One stage of an automatic sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The replicates it ran: `from..to`.
    pub replicates: std::ops::Range<u32>,
    /// Configurations it ran.
    pub configurations: usize,
    /// Cells it ran (configurations × scenarios × replicates).
    pub cells: u64,
    /// After it: configurations out for breaking a constraint more replicates cannot mend.
    pub broke: usize,
    /// After it: configurations screened out on cost.
    pub screened: usize,
}

/// What an automatic sweep did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoReport {
    /// `max_replicates`.
    pub max_replicates: u32,
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// Why it stopped.
    pub stop: Stop,
    /// Cells an exhaustive sweep of `max_replicates` replicates would run.
    pub exhaustive_cells: u64,
}

impl AutoReport {
    /// Cells run in all.
    pub fn cells(&self) -> u64 {
        self.stages.iter().map(|s| s.cells).sum()
    }

    /// The stages and the outcome, one sentence a line.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, s) in self.stages.iter().enumerate() {
            let reps = if s.replicates.end - s.replicates.start == 1 {
                format!("replicate {}", s.replicates.start)
            } else {
                format!("replicates {}-{}", s.replicates.start, s.replicates.end - 1)
            };
            let mut line = format!(
                "stage {}: {reps} of {} configuration(s), {} cells",
                i + 1,
                s.configurations,
                s.cells
            );
            if s.broke > 0 || s.screened > 0 {
                line.push_str(&format!(
                    "; then {} out for breaking a constraint in a replicate, {} screened out on cost",
                    s.broke, s.screened
                ));
            }
            out.push(line);
        }
        let share = if self.exhaustive_cells > 0 {
            format!(
                " ({} % of the {} an exhaustive sweep of {} replicates runs)",
                super::recommend::num(100.0 * self.cells() as f64 / self.exhaustive_cells as f64),
                self.exhaustive_cells,
                self.max_replicates
            )
        } else {
            String::new()
        };
        out.push(format!("ran {} cells{share}", self.cells()));
        out.push(match &self.stop {
            Stop::Confident => "stopped: the confidence was reached".to_string(),
            Stop::Alone => "stopped: one configuration qualifies".to_string(),
            Stop::NoneQualifies => "stopped: no configuration can meet the constraints".to_string(),
            Stop::MaxReplicates(n) => format!(
                "stopped: the budget ran out (max_replicates = {n}) before the confidence was reached"
            ),
            Stop::Calls(next, limit) => format!(
                "stopped: the budget ran out: the next stage would simulate about {:.3e} calls, past \
                 --max-calls {:.3e}, before the confidence was reached",
                *next as f64, *limit as f64
            ),
        });
        out
    }
}

/// What to do after a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Stop, for this reason.
    Stop(Stop),
    /// Run the next stage on `keep` (table positions, in order).
    Run {
        /// The configurations still in the running.
        keep: Vec<usize>,
        /// How many broke a constraint for good at this stage.
        broke: usize,
        /// How many were screened out on cost at this stage.
        screened: usize,
    },
}

/// What a stage's decision reads: the results so far and how the sweep ranks them.
pub struct Judge<'a> {
    /// The results so far.
    pub table: &'a ResultTable,
    /// The objective, bound to the table.
    pub bound: &'a BoundObjective,
    /// The constraints.
    pub constraints: &'a [Constraint],
    /// Their metrics' columns in the table.
    pub columns: &'a [usize],
    /// The stated confidence and indifference zone.
    pub rule: Rule,
    /// `max_replicates`.
    pub max: u32,
    /// The baseline's table position: never dropped, so the recommendation is compared with
    /// today's configuration on as many replicates as it ran.
    pub baseline: Option<usize>,
}

impl Judge<'_> {
    /// Decides after the stage that brought the configurations `running` (table positions, in
    /// order) to `n` replicates: drops those breaking a constraint for good, selects among the
    /// qualifying ones (stopping when the lowest cost is separated and nothing else could
    /// still qualify), else screens on cost; at `max` replicates, stops.
    pub fn decide(&self, running: &[usize], n: u32) -> Next {
        let share = selection_share(looks(self.max));
        let alpha = self.rule.alpha() * share;
        let reps = self.table.replicates() as usize;
        let (mut all, mut qualifying) = (Totals::new(reps), Totals::new(reps));
        let mut broke = 0;
        for &c in running {
            let st = standing(self.table, self.bound, self.constraints, self.columns, c);
            let max = self.max;
            if st
                .violations
                .iter()
                .any(|v| broken_for_good(&self.constraints[v.constraint], v.breaking.0, max))
            {
                broke += usize::from(self.baseline != Some(c));
                continue;
            }
            all.push(c, st.total_cost, &st.totals);
            if st.violations.is_empty() {
                qualifying.push(c, st.total_cost, &st.totals);
            }
        }
        if all.is_empty() {
            return Next::Stop(Stop::NoneQualifies);
        }
        let mut keep: Vec<usize> =
            screen(&all, &qualifying, alpha, self.rule.indifference).into_iter().map(|i| all.id(i)).collect();
        let ids: Vec<usize> = (0..qualifying.len()).map(|i| qualifying.id(i)).collect();
        let pending = keep.iter().filter(|c| !ids.contains(c)).count();
        let mut screened = all.len() - keep.len();
        // The baseline stays in the running, whatever it broke or whatever beats it.
        if let Some(b) = self.baseline.filter(|b| running.contains(b) && !keep.contains(b)) {
            screened -= usize::from((0..all.len()).any(|i| all.id(i) == b));
            keep.push(b);
            keep.sort_unstable();
        }
        if pending == 0 {
            if qualifying.len() == 1 {
                return Next::Stop(Stop::Alone);
            }
            if subset(&qualifying, alpha, self.rule.indifference).is_some_and(|s| s.members.len() == 1) {
                return Next::Stop(Stop::Confident);
            }
        }
        if n >= self.max {
            return Next::Stop(Stop::MaxReplicates(self.max));
        }
        Next::Run { keep, broke, screened }
    }
}

/// The cells of one stage: its number (1, 2, …), the configurations it runs (table positions,
/// increasing) and the replicates it brings them to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageCells<'a> {
    /// The stage's number, from 1.
    pub number: u32,
    /// The configurations still in the running.
    pub running: &'a [usize],
    /// The replicates it runs: `from..to`.
    pub replicates: std::ops::Range<u32>,
}

/// An automatic sweep's stages as they go: which cells the current stage runs and, once they
/// ran, what follows. The one-machine sweep runs each stage itself; `merge` replays the same
/// steps on the shards' results, so both decide alike and write the same [`AutoReport`].
#[derive(Clone, Debug)]
pub struct Stages {
    schedule: Vec<u32>,
    /// Position of the current stage in `schedule`.
    at: usize,
    running: Vec<usize>,
    from: u32,
    /// Expected calls simulated so far.
    spent: u64,
    /// Expected calls of one replicate of one configuration over every scenario.
    per_run: u64,
    max_calls: u64,
    scenarios: u64,
    report: AutoReport,
    stopped: bool,
}

impl Stages {
    /// The first stage of a sweep of `configs` configurations over `scenarios` scenarios, up to
    /// `max` replicates; `per_run` calls a replicate of a configuration, `max_calls` the budget.
    pub fn new(configs: usize, scenarios: usize, max: u32, per_run: u64, max_calls: u64) -> Stages {
        let scenarios = scenarios as u64;
        Stages {
            schedule: schedule(max),
            at: 0,
            running: (0..configs).collect(),
            from: 0,
            spent: 0,
            per_run,
            max_calls,
            scenarios,
            report: AutoReport {
                max_replicates: max,
                stages: Vec::new(),
                stop: Stop::MaxReplicates(max),
                exhaustive_cells: scenarios * configs as u64 * u64::from(max),
            },
            stopped: false,
        }
    }

    /// The stage to run next; `None` once the sweep stopped.
    pub fn current(&self) -> Option<StageCells<'_>> {
        (!self.stopped).then(|| StageCells {
            number: self.at as u32 + 1,
            running: &self.running,
            replicates: self.from..self.schedule[self.at],
        })
    }

    /// Cells of the current stage.
    pub fn cells(&self) -> u64 {
        let to = self.schedule.get(self.at).copied().unwrap_or(self.from);
        self.scenarios * self.running.len() as u64 * u64::from(to.saturating_sub(self.from))
    }

    /// Expected calls simulated by the stages run so far.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Records that the current stage ran and decides what follows with `judge`, whose table
    /// holds every stage so far: stop, or the next stage on the configurations kept (unless it
    /// would pass the call budget: then stop, saying so).
    pub fn ran(&mut self, judge: &Judge) {
        let Some(&to) = self.schedule.get(self.at).filter(|_| !self.stopped) else { return };
        let reps = u64::from(to - self.from);
        let cells = self.cells();
        self.spent += self.per_run * self.running.len() as u64 * reps;
        self.report.stages.push(Stage {
            replicates: self.from..to,
            configurations: self.running.len(),
            cells,
            broke: 0,
            screened: 0,
        });
        match judge.decide(&self.running, to) {
            Next::Stop(stop) => {
                self.report.stop = stop;
                self.stopped = true;
            }
            Next::Run { keep, broke, screened } => {
                if let Some(last) = self.report.stages.last_mut() {
                    (last.broke, last.screened) = (broke, screened);
                }
                let next = self.schedule.get(self.at + 1).copied().unwrap_or(self.report.max_replicates);
                let calls = self.per_run * keep.len() as u64 * u64::from(next - to);
                if self.spent.saturating_add(calls) > self.max_calls {
                    self.report.stop = Stop::Calls(calls, self.max_calls);
                    self.stopped = true;
                } else {
                    (self.running, self.from, self.at) = (keep, to, self.at + 1);
                }
            }
        }
    }

    /// What the stages did (final once [`Stages::current`] is `None`).
    pub fn report(&self) -> &AutoReport {
        &self.report
    }

    /// What the stages did.
    pub fn into_report(self) -> AutoReport {
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::objective::BindToColumns;

    #[test]
    fn the_schedule_starts_with_one_replicate_and_ends_at_the_maximum() {
        assert_eq!(schedule(10), [1, 3, 5, 10]);
        assert_eq!(schedule(20), [1, 3, 5, 10, 20]);
        assert_eq!(schedule(30), [1, 3, 5, 10, 20, 30]);
        assert_eq!(schedule(4), [1, 3, 4]);
        assert_eq!(schedule(2), [1, 2]);
        assert_eq!(schedule(1), [1]);
        assert_eq!(schedule(0), [1]);
        assert_eq!((looks(10), looks(1)), (3, 0));
        assert_eq!(selection_share(3), 1.0 / 6.0);
    }

    #[test]
    fn only_constraints_more_replicates_cannot_mend_screen_out() {
        let cols = ["missed_incidents"];
        let c = |t: &str| Constraint::parse(t, &cols).unwrap();
        assert!(broken_for_good(&c("missed_incidents == 0"), 1, 10));
        assert!(broken_for_good(&c("worst missed_incidents == 0"), 1, 10));
        assert!(!broken_for_good(&c("mean missed_incidents <= 0.5"), 1, 10));
        assert!(!broken_for_good(&c("missed_incidents == 0 in 90 % of replicates"), 1, 10));
        assert!(broken_for_good(&c("missed_incidents == 0 in 90 % of replicates"), 2, 10));
        assert!(!broken_for_good(&c("missed_incidents == 0"), 0, 10));
    }

    /// One scenario; per configuration, per replicate (false opens, missed incidents): the
    /// results of the stages run so far.
    fn table(rows: &[&[(f64, f64)]]) -> ResultTable {
        use crate::sweep::table::tests::{cfg, run};
        let configs = (0..rows.len()).map(|i| cfg(i, "consecutive", "failure_threshold", i as i64)).collect();
        let mut runs = Vec::new();
        for (c, reps) in rows.iter().enumerate() {
            for (r, (fo, mi)) in reps.iter().enumerate() {
                runs.push(run(0, c, r as u32, &[Some(*fo), Some(*mi)]));
            }
        }
        let metrics = vec!["false_opens".to_string(), "missed_incidents".to_string()];
        ResultTable::new(vec!["s".into()], configs, metrics, runs).unwrap()
    }

    fn decide(t: &ResultTable, running: &[usize], n: u32, baseline: Option<usize>) -> Next {
        let bound = crate::metrics::Objective::new([(crate::metrics::Metric::FalseOpens, 1.0)])
            .bind(&t.metrics)
            .unwrap();
        let constraints = [Constraint::parse("missed_incidents == 0", &t.metrics).unwrap()];
        Judge {
            table: t,
            bound: &bound,
            constraints: &constraints,
            columns: &[1],
            rule: Rule::default(),
            max: 10,
            baseline,
        }
        .decide(running, n)
    }

    #[test]
    fn a_stage_drops_what_breaks_a_constraint_for_good_keeps_the_baseline_and_screens_on_cost() {
        // After stage 1: config 1 missed an incident (out for good), 0, 2 and 3 go on; with one
        // replicate nothing is screened on cost.
        let t = table(&[&[(3.0, 0.0)], &[(0.0, 1.0)], &[(9.0, 0.0)], &[(4.0, 0.0)]]);
        assert_eq!(
            decide(&t, &[0, 1, 2, 3], 1, None),
            Next::Run { keep: vec![0, 2, 3], broke: 1, screened: 0 }
        );
        // The baseline stays in the running, though it broke the constraint.
        assert_eq!(
            decide(&t, &[0, 1, 2, 3], 1, Some(1)),
            Next::Run { keep: vec![0, 1, 2, 3], broke: 0, screened: 0 }
        );
        // After three replicates, 2 is beaten beyond noise by 0 (by 40, every replicate); 3 is
        // within noise of 0: the two go on.
        let t = table(&[
            &[(3.0, 0.0), (5.0, 0.0), (4.0, 0.0)],
            &[(0.0, 1.0)],
            &[(43.0, 0.0), (45.0, 0.0), (44.0, 0.0)],
            &[(4.0, 0.0), (3.0, 0.0), (5.0, 0.0)],
        ]);
        assert_eq!(decide(&t, &[0, 2, 3], 3, None), Next::Run { keep: vec![0, 3], broke: 0, screened: 1 });
        // At the last replicate count the budget has run out.
        assert_eq!(decide(&t, &[0, 3], 10, None), Next::Stop(Stop::MaxReplicates(10)));
    }

    #[test]
    fn a_stage_stops_when_the_best_is_separated_or_alone_or_nothing_can_qualify() {
        let t = table(&[
            &[(3.0, 0.0), (4.0, 0.0), (3.0, 0.0), (4.0, 0.0), (3.0, 0.0)],
            &[(20.0, 0.0), (21.0, 0.0), (20.0, 0.0), (22.0, 0.0), (21.0, 0.0)],
            &[(0.0, 1.0)],
        ]);
        assert_eq!(decide(&t, &[0, 1], 5, None), Next::Stop(Stop::Confident));
        assert_eq!(decide(&t, &[0, 2], 5, None), Next::Stop(Stop::Alone));
        assert_eq!(decide(&t, &[2], 1, None), Next::Stop(Stop::NoneQualifies));
    }

    #[test]
    fn the_report_says_what_ran_and_why_it_stopped() {
        let r = AutoReport {
            max_replicates: 10,
            stages: vec![
                Stage { replicates: 0..1, configurations: 100, cells: 200, broke: 60, screened: 0 },
                Stage { replicates: 1..3, configurations: 40, cells: 160, broke: 0, screened: 35 },
            ],
            stop: Stop::MaxReplicates(10),
            exhaustive_cells: 2000,
        };
        assert_eq!(
            r.lines(),
            [
                "stage 1: replicate 0 of 100 configuration(s), 200 cells; then 60 out for breaking a constraint in a replicate, 0 screened out on cost",
                "stage 2: replicates 1-2 of 40 configuration(s), 160 cells; then 0 out for breaking a constraint in a replicate, 35 screened out on cost",
                "ran 360 cells (18 % of the 2000 an exhaustive sweep of 10 replicates runs)",
                "stopped: the budget ran out (max_replicates = 10) before the confidence was reached",
            ]
        );
    }
}
