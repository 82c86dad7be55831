//! Side-by-side comparison of a few policies on the same scenarios: every metric per scenario,
//! each policy's mean and 95% CI over replicates, and the paired difference of each policy
//! against the first with its CI. Pairing is by (scenario, replicate): both policies saw the
//! same request stream and the same upstream answers (common random numbers).

use super::constraint::{Constraint, Scope};
use super::objective::BoundObjective;
use super::recommend::num;
use super::stats::{Stat, describe, paired};
use super::table::ResultTable;
use std::fmt::Write as _;

/// One metric of one scenario across the compared policies.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// The metric column (or `cost`).
    pub metric: String,
    /// Per policy: mean and CI over replicates.
    pub per_policy: Vec<Stat>,
    /// Per policy after the first: paired difference (policy − first).
    pub differences: Vec<Stat>,
}

/// The comparison of every policy on one scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioComparison {
    /// Scenario name.
    pub scenario: String,
    /// One row per metric, then `cost`.
    pub rows: Vec<CompareRow>,
    /// Per policy: the constraints it breaks on this scenario, each with the value that breaks
    /// it and in how many of how many replicates (empty: meets every constraint). Empty when no
    /// constraints were applied.
    pub broken: Vec<Vec<Broken>>,
}

/// A constraint a policy breaks on a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Broken {
    /// The constraint as written.
    pub constraint: String,
    /// The value that breaks it (see [`super::constraint::Judged::shown`]).
    pub value: f64,
    /// Replicates breaking it, of how many (for a `mean` or `worst` constraint: 1 of 1).
    pub replicates: (usize, usize),
    /// How the value reads: `mean 0.3333`, `worst 4` or `4 in 1 of 3 replicates`.
    pub reading: String,
}

/// What `compare` found.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareReport {
    /// Policy labels, in the order given (the first is the baseline of the differences).
    pub policies: Vec<String>,
    /// Replicates per (scenario, policy).
    pub replicates: u32,
    /// One comparison per scenario.
    pub scenarios: Vec<ScenarioComparison>,
    /// The constraints applied (as written), empty when none.
    pub constraints: Vec<String>,
}

impl CompareReport {
    /// Builds the comparison from a table whose configurations are the compared policies, in
    /// order, run on replicates `0..replicates`; costs under `objective`.
    pub fn from_table(table: &ResultTable, replicates: u32, objective: &BoundObjective) -> CompareReport {
        let n_p = table.n_configs();
        let mut scenarios = Vec::with_capacity(table.scenarios.len());
        for (s, name) in table.scenarios.iter().enumerate() {
            let mut rows = Vec::with_capacity(table.metrics.len() + 1);
            for m in 0..=table.metrics.len() {
                let series: Vec<Vec<Option<f64>>> = (0..n_p)
                    .map(|p| {
                        if m < table.metrics.len() {
                            table.replicate_values(s, p, m, replicates)
                        } else {
                            let mut out = vec![None; replicates as usize];
                            for r in table.group(s, p) {
                                if let Some(slot) = out.get_mut(r.replicate as usize) {
                                    *slot = Some(objective.cost(&r.values));
                                }
                            }
                            out
                        }
                    })
                    .collect();
                rows.push(CompareRow {
                    metric: table.metrics.get(m).cloned().unwrap_or_else(|| "cost".into()),
                    per_policy: series.iter().map(|v| describe(v.iter().copied())).collect(),
                    differences: series.iter().skip(1).map(|v| paired(&series[0], v)).collect(),
                });
            }
            scenarios.push(ScenarioComparison { scenario: name.clone(), rows, broken: Vec::new() });
        }
        CompareReport {
            policies: table.configs().map(|c| c.label).collect(),
            replicates,
            scenarios,
            constraints: Vec::new(),
        }
    }

    /// Applies `constraints` to each policy's runs on each scenario, each on the replicates its
    /// scope names, as a sweep does for its `feasible` column: the report then says per scenario
    /// which policies meet them and which constraint each other one breaks.
    pub fn with_verdicts(mut self, table: &ResultTable, constraints: &[Constraint]) -> Self {
        self.constraints = constraints.iter().map(|c| format!("{} ({})", c.text, c.scope_words())).collect();
        for (s, sc) in self.scenarios.iter_mut().enumerate() {
            sc.broken = (0..table.n_configs())
                .map(|p| {
                    constraints
                        .iter()
                        .filter_map(|con| {
                            let m = table.column(con.metric.name())?;
                            let judged = con.judge(&table.replicate_values(s, p, m, self.replicates));
                            let value = judged.shown.unwrap_or(f64::NAN);
                            let reading = match con.scope {
                                Scope::Mean => format!("mean {}", num(value)),
                                Scope::Worst => format!("worst {}", num(value)),
                                _ => format!(
                                    "{} in {} of {} replicates",
                                    num(value),
                                    judged.breaking,
                                    judged.replicates
                                ),
                            };
                            (!judged.holds).then(|| Broken {
                                constraint: con.text.clone(),
                                value,
                                replicates: (judged.breaking, judged.replicates),
                                reading,
                            })
                        })
                        .collect()
                })
                .collect();
        }
        self
    }

    /// The comparison as aligned text tables, one per scenario. Policies are lettered A, B, …;
    /// a difference whose 95% CI excludes zero is marked `*`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "policies ({} replicate(s) each; differences are paired by replicate):",
            self.replicates
        );
        for (i, p) in self.policies.iter().enumerate() {
            let _ = writeln!(out, "  {}  {p}", letter(i));
        }
        if !self.constraints.is_empty() {
            let _ = writeln!(out, "constraints (on each scenario): {}", self.constraints.join(", "));
        }
        for sc in &self.scenarios {
            let _ = writeln!(out, "\nscenario {}", sc.scenario);
            for (i, broken) in sc.broken.iter().enumerate() {
                let verdict = match broken.as_slice() {
                    [] => "yes".to_string(),
                    all => {
                        let why: Vec<String> =
                            all.iter().map(|b| format!("`{}` broken: {}", b.constraint, b.reading)).collect();
                        format!("no ({})", why.join("; "))
                    }
                };
                let _ = writeln!(out, "  {} meets constraints: {verdict}", letter(i));
            }
            let mut header: Vec<String> = vec!["metric".into()];
            header.extend((0..self.policies.len()).map(letter));
            header.extend((1..self.policies.len()).map(|i| format!("{} - A", letter(i))));
            let mut table: Vec<Vec<String>> = vec![header];
            for row in &sc.rows {
                let mut line = vec![row.metric.clone()];
                line.extend(row.per_policy.iter().map(|s| show(s, false)));
                line.extend(row.differences.iter().map(|s| show(s, true)));
                table.push(line);
            }
            let widths: Vec<usize> = (0..table[0].len())
                .map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
                .collect();
            for line in &table {
                let mut text = String::from(" ");
                for (c, cellv) in line.iter().enumerate() {
                    let pad = widths[c] - cellv.chars().count();
                    if c == 0 {
                        let _ = write!(text, " {cellv}{}", " ".repeat(pad));
                    } else {
                        let _ = write!(text, "  {}{cellv}", " ".repeat(pad));
                    }
                }
                let _ = writeln!(out, "{}", text.trim_end());
            }
        }
        out
    }
}

/// `A`, `B`, … `Z`, then `P27`, `P28`, ….
fn letter(i: usize) -> String {
    if i < 26 { char::from(b'A' + i as u8).to_string() } else { format!("P{}", i + 1) }
}

/// `mean ± ci` (`-` when empty); differences get a sign and `*` when the CI excludes zero.
pub fn show(s: &Stat, difference: bool) -> String {
    let Some(mean) = s.mean else { return "-".into() };
    let m = if difference && mean > 0.0 { format!("+{}", num(mean)) } else { num(mean) };
    match s.ci95 {
        Some(ci) => {
            let star = if difference && (mean - ci > 0.0 || mean + ci < 0.0) { " *" } else { "" };
            format!("{m} ± {}{star}", num(ci))
        }
        None => m,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::objective::BindToColumns;
    use crate::sweep::table::tests::{cfg, run};

    #[test]
    fn paired_differences_per_metric_and_scenario() {
        let t = ResultTable::new(
            vec!["outage".into()],
            vec![cfg(0, "gobreaker", "timeout", 60), cfg(1, "consecutive", "failure_threshold", 3)],
            vec!["false_opens".into(), "detection_delay_mean_s".into()],
            vec![
                run(0, 0, 0, &[Some(2.0), Some(10.0)]),
                run(0, 0, 1, &[Some(4.0), Some(12.0)]),
                run(0, 0, 2, &[Some(3.0), None]),
                run(0, 1, 0, &[Some(0.0), Some(20.0)]),
                run(0, 1, 1, &[Some(1.0), Some(23.0)]),
                run(0, 1, 2, &[Some(2.0), Some(30.0)]),
            ],
        )
        .unwrap();
        // Costs 30, 52, 30, 20, 33, 50.
        let weights =
            [(crate::metrics::Metric::FalseOpens, 10.0), (crate::metrics::Metric::DetectionDelayMeanS, 1.0)];
        let costs = crate::metrics::Objective::new(weights).bind(&t.metrics).unwrap();
        let r = CompareReport::from_table(&t, 3, &costs);
        assert_eq!(r.policies, vec!["gobreaker[timeout=60]", "consecutive[failure_threshold=3]"]);
        let rows = &r.scenarios[0].rows;
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].per_policy[0].mean, Some(3.0));
        assert_eq!(rows[0].per_policy[1].mean, Some(1.0));
        // false opens differences: -2, -3, -1 → mean -2, sd 1.
        assert_eq!(rows[0].differences[0].mean, Some(-2.0));
        assert_eq!(rows[0].differences[0].sd, Some(1.0));
        // delay: pairs (10, 20), (12, 23); replicate 2 lacks A's value.
        assert_eq!(rows[1].differences[0].n, 2);
        assert_eq!(rows[1].differences[0].mean, Some(10.5));
        assert_eq!(rows[2].metric, "cost");
        assert_eq!(rows[2].differences[0].mean, Some((-10.0 - 19.0 + 20.0) / 3.0));
        // Constraints apply to each policy's runs, as a sweep's `feasible` does: A has 2, 4 and 3
        // false opens, breaking `false_opens <= 1` in every replicate, B's 0, 1 and 2 break it in
        // one; on the mean (1), B meets it.
        let cons = [
            Constraint::parse("false_opens <= 1", &t.metrics).unwrap(),
            Constraint::parse("mean false_opens <= 1", &t.metrics).unwrap(),
        ];
        let r = r.with_verdicts(&t, &cons);
        let brief = |p: usize| -> Vec<(String, f64, (usize, usize))> {
            r.scenarios[0].broken[p].iter().map(|b| (b.constraint.clone(), b.value, b.replicates)).collect()
        };
        assert_eq!(
            brief(0),
            [
                ("false_opens <= 1".to_string(), 4.0, (3, 3)),
                ("mean false_opens <= 1".to_string(), 3.0, (3, 3))
            ]
        );
        assert_eq!(brief(1), [("false_opens <= 1".to_string(), 2.0, (1, 3))]);
        let text = r.render();
        assert!(
            text.contains("constraints (on each scenario): false_opens <= 1 (in every replicate), mean false_opens <= 1 (on the mean over replicates)\n"),
            "{text}"
        );
        assert!(
            text.contains("  A meets constraints: no (`false_opens <= 1` broken: 4 in 3 of 3 replicates; `mean false_opens <= 1` broken: mean 3)\n"),
            "{text}"
        );
        assert!(
            text.contains("  B meets constraints: no (`false_opens <= 1` broken: 2 in 1 of 3 replicates)\n"),
            "{text}"
        );
        assert!(
            text.contains("  A  gobreaker[timeout=60]\n  B  consecutive[failure_threshold=3]\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "of 3 replicates)\n  metric                              A              B            B - A\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n  false_opens                 3 ± 2.484      1 ± 2.484       -2 ± 2.484\n"),
            "{text}"
        );
        assert!(
            text.contains("\n  detection_delay_mean_s     11 ± 12.71  24.33 ± 12.75  +10.5 ± 6.353 *\n"),
            "{text}"
        );
    }
}
