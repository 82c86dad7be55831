//! `compare`'s stated confidence: for each policy after the first (B, C, …), the paired
//! difference of its cost from the first's (A), in total over the scenarios and on each
//! scenario, with a simultaneous interval and what it says: "B is better than A with 95 %
//! confidence", "A is better than B …" or "A and B cannot be told apart at R replicates".
//!
//! The pairing is the sweep selection's ([`super::selection`]): replicate `r` of every policy
//! ran on the same request streams, so differences are taken replicate by replicate, and the
//! total is a configuration's per-replicate total cost ([`super::recommend::standing`]). The
//! intervals are two-sided, Bonferroni-corrected (Student t at `1 − α / k`,
//! [`super::stats::Interval`]) over the `k` comparisons of their family: the `P − 1` totals, or
//! the `(P − 1) · S` per-scenario differences. So every statement of a family holds at once
//! with probability at least the stated confidence.

use super::objective::BoundObjective;
use super::recommend::{num, standing};
use super::selection::replicates as replicates_text;
use super::stats::Interval;
use super::table::ResultTable;
use std::fmt::Write as _;

/// The confidence `compare` states.
pub const CONFIDENCE: f64 = 0.95;

/// What one paired difference says.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The interval lies below zero: the other policy costs less.
    OtherBetter,
    /// The interval lies above zero: the first policy costs less.
    FirstBetter,
    /// The interval holds zero, or there are fewer than two pairs.
    Tied,
}

/// The paired difference of one policy's cost from the first's (other − first).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Pair {
    /// The difference's mean and simultaneous half-width.
    pub interval: Interval,
    /// What the interval says.
    pub verdict: Verdict,
}

impl Pair {
    fn new(first: &[Option<f64>], other: &[Option<f64>], level: f64) -> Pair {
        let interval = Interval::paired(first, other, level);
        let verdict = match (interval.mean, interval.half) {
            (Some(m), Some(h)) if m + h < 0.0 => Verdict::OtherBetter,
            (Some(m), Some(h)) if m - h > 0.0 => Verdict::FirstBetter,
            _ => Verdict::Tied,
        };
        Pair { interval, verdict }
    }

    /// `-3.2 ± 1.1` (`-` without pairs).
    pub fn text(&self) -> String {
        let Some(mean) = self.interval.mean else { return "-".into() };
        let m = if mean > 0.0 { format!("+{}", num(mean)) } else { num(mean) };
        match self.interval.half {
            Some(h) => format!("{m} ± {}", num(h)),
            None => m,
        }
    }

    /// `B better`, `A better` or `cannot tell` (letters `first` and `other`).
    pub fn short(&self, first: &str, other: &str) -> String {
        match self.verdict {
            Verdict::OtherBetter => format!("{other} better"),
            Verdict::FirstBetter => format!("{first} better"),
            Verdict::Tied => "cannot tell".into(),
        }
    }
}

/// The confidence statement of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareConfidence {
    /// The stated confidence of each family of statements.
    pub confidence: f64,
    /// Replicates per (scenario, policy).
    pub replicates: u32,
    /// Scenario names, in order.
    pub scenarios: Vec<String>,
    /// Per policy after the first: the difference of its total cost over the scenarios.
    pub totals: Vec<Pair>,
    /// Per scenario, per policy after the first: the difference of its cost on that scenario.
    pub per_scenario: Vec<Vec<Pair>>,
}

impl CompareConfidence {
    /// The statement for a table whose configurations are the compared policies in order, run
    /// on replicates `0..replicates`, costs under `objective`.
    pub fn from_table(table: &ResultTable, replicates: u32, objective: &BoundObjective) -> CompareConfidence {
        let policies = table.n_configs();
        let others = policies.saturating_sub(1);
        let alpha = 1.0 - CONFIDENCE;
        let totals: Vec<Vec<Option<f64>>> = (0..policies)
            .map(|p| {
                standing(table, objective, &[], &[], p).totals.into_iter().take(replicates as usize).collect()
            })
            .collect();
        let level = |k: usize| 1.0 - alpha / k.max(1) as f64;
        let total_level = level(others);
        let totals_pairs = (1..policies).map(|p| Pair::new(&totals[0], &totals[p], total_level)).collect();
        let scenario_level = level(others * table.scenarios.len());
        let per_scenario = (0..table.scenarios.len())
            .map(|s| {
                let first = replicate_costs(table, s, 0, replicates, objective);
                (1..policies)
                    .map(|p| {
                        Pair::new(
                            &first,
                            &replicate_costs(table, s, p, replicates, objective),
                            scenario_level,
                        )
                    })
                    .collect()
            })
            .collect();
        CompareConfidence {
            confidence: CONFIDENCE,
            replicates,
            scenarios: table.scenarios.clone(),
            totals: totals_pairs,
            per_scenario,
        }
    }

    /// Comparisons the totals' Bonferroni correction spreads α over.
    pub fn total_comparisons(&self) -> usize {
        self.totals.len()
    }

    /// Comparisons the per-scenario correction spreads α over.
    pub fn scenario_comparisons(&self) -> usize {
        self.totals.len() * self.scenarios.len()
    }

    /// One sentence per policy after the first about its total: `B is better than A with 95 %
    /// confidence (total cost B − A = -3.2 ± 1.1)`.
    pub fn statements(&self) -> Vec<String> {
        let pct = num(100.0 * self.confidence);
        self.totals
            .iter()
            .enumerate()
            .map(|(i, pair)| {
                let (a, b) = (letter(0), letter(i + 1));
                let what = match pair.verdict {
                    Verdict::OtherBetter => format!("{b} is better than {a} with {pct} % confidence"),
                    Verdict::FirstBetter => format!("{a} is better than {b} with {pct} % confidence"),
                    Verdict::Tied => format!(
                        "{a} and {b} cannot be told apart at {}{}",
                        replicates_text(self.replicates as usize),
                        if self.replicates < 2 { " (one replicate gives no interval)" } else { "" }
                    ),
                };
                format!("{what} (total cost {b} − {a} = {})", pair.text())
            })
            .collect()
    }

    /// The method in one sentence: what the costs are and how the intervals are made.
    pub fn method(&self) -> String {
        format!(
            "Cost: the default objective (lower is better), totals over the {} scenario(s); each \
             difference from A paired by replicate (the same request streams) over {}; {} % \
             simultaneous intervals, Bonferroni over {} comparison(s) (totals) and {} (per scenario).",
            self.scenarios.len(),
            replicates_text(self.replicates as usize),
            num(100.0 * self.confidence),
            self.total_comparisons(),
            self.scenario_comparisons()
        )
    }

    /// The per-scenario table: headings (`scenario`, `B − A`, …) and one row per scenario, then
    /// a `total` row; each cell `-3.2 ± 1.1 (B better)`.
    pub fn table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut headings = vec!["scenario".to_string()];
        headings.extend((1..=self.totals.len()).map(|i| format!("{} − A", letter(i))));
        let cells = |pairs: &[Pair]| -> Vec<String> {
            pairs
                .iter()
                .enumerate()
                .map(|(i, p)| format!("{} ({})", p.text(), p.short(&letter(0), &letter(i + 1))))
                .collect()
        };
        let mut rows: Vec<Vec<String>> = self
            .scenarios
            .iter()
            .zip(&self.per_scenario)
            .map(|(name, pairs)| {
                let mut row = vec![name.clone()];
                row.extend(cells(pairs));
                row
            })
            .collect();
        let mut total = vec!["total".to_string()];
        total.extend(cells(&self.totals));
        rows.push(total);
        (headings, rows)
    }

    /// The block the terminal prints first: the statements, then the per-scenario table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.totals.is_empty() {
            return out;
        }
        let _ = writeln!(out, "result:");
        for s in self.statements() {
            let _ = writeln!(out, "  {s}");
        }
        let (headings, rows) = self.table();
        let mut all = vec![headings];
        all.extend(rows);
        aligned(&mut out, &all, 4);
        let _ = writeln!(out, "  {}", self.method());
        out
    }
}

/// Writes `table` (rows of cells, the first row the headings) with its columns aligned, each
/// line indented by `indent` spaces: the first column left-aligned, the others right-aligned.
pub fn aligned(out: &mut String, table: &[Vec<String>], indent: usize) {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> =
        (0..columns).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for line in table {
        let mut text = " ".repeat(indent);
        for (c, cell) in line.iter().enumerate() {
            let pad = " ".repeat(widths[c] - cell.chars().count());
            let _ = if c == 0 { write!(text, "{cell}{pad}") } else { write!(text, "  {pad}{cell}") };
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
}

/// Policy `p`'s cost on scenario `s` in each replicate `0..replicates` (`None`: missing).
pub fn replicate_costs(
    table: &ResultTable,
    s: usize,
    p: usize,
    replicates: u32,
    objective: &BoundObjective,
) -> Vec<Option<f64>> {
    let mut out = vec![None; replicates as usize];
    for r in table.group(s, p) {
        if let Some(slot) = out.get_mut(r.replicate as usize) {
            *slot = Some(objective.cost(&r.values));
        }
    }
    out
}

/// `A`, `B`, … `Z`, then `P27`, `P28`, … (as `compare` letters its policies).
pub fn letter(i: usize) -> String {
    if i < 26 { char::from(b'A' + i as u8).to_string() } else { format!("P{}", i + 1) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::objective::BindToColumns as _;
    use crate::sweep::table::tests::{cfg, run};

    /// Three policies on two scenarios over four replicates: B costs about 10 less than A on
    /// each scenario in every replicate; C is A plus noise that changes sign.
    fn table() -> ResultTable {
        let a = [[20.0, 22.0, 19.0, 21.0], [30.0, 33.0, 29.0, 31.0]];
        let b_less = [[10.5, 11.0, 9.0, 11.5], [20.0, 23.5, 18.5, 21.0]];
        let c_noise = [[21.0, 20.0, 20.0, 22.5], [29.0, 34.5, 28.0, 31.5]];
        let mut runs = Vec::new();
        for (p, costs) in [a, b_less, c_noise].iter().enumerate() {
            for (s, per) in costs.iter().enumerate() {
                for (r, c) in per.iter().enumerate() {
                    runs.push(run(s, p, r as u32, &[Some(*c)]));
                }
            }
        }
        ResultTable::new(
            vec!["outage".into(), "blip".into()],
            vec![
                cfg(0, "consecutive", "failure_threshold", 5),
                cfg(1, "windowed", "window", 60),
                cfg(2, "x", "y", 1),
            ],
            vec!["false_opens".into()],
            runs,
        )
        .unwrap()
    }

    #[test]
    fn one_clearly_better_and_one_tie_are_stated() {
        let t = table();
        let objective = crate::metrics::Objective::new([(crate::metrics::Metric::FalseOpens, 1.0)])
            .bind(&t.metrics)
            .unwrap();
        let c = CompareConfidence::from_table(&t, 4, &objective);
        assert_eq!((c.total_comparisons(), c.scenario_comparisons()), (2, 4));
        assert_eq!(c.totals[0].verdict, Verdict::OtherBetter);
        assert_eq!(c.totals[1].verdict, Verdict::Tied);
        // Totals per replicate: A 50, 55, 48, 52; B 30.5, 34.5, 27.5, 32.5 → differences -19.5,
        // -20.5, -20.5, -19.5.
        assert_eq!(c.totals[0].interval.mean, Some(-20.0));
        assert_eq!(c.per_scenario[0][0].verdict, Verdict::OtherBetter);
        assert_eq!(c.per_scenario[1][1].verdict, Verdict::Tied);
        // Bonferroni: the per-scenario family (4 comparisons) is wider than one 95 % interval.
        let one = Interval::paired(
            &[Some(20.0), Some(22.0), Some(19.0), Some(21.0)],
            &[Some(21.0), Some(20.0), Some(20.0), Some(22.5)],
            0.95,
        );
        assert!(c.per_scenario[0][1].interval.half.unwrap() > one.half.unwrap());
        let s = c.statements();
        assert!(
            s[0].starts_with("B is better than A with 95 % confidence (total cost B − A = -20 ± "),
            "{s:?}"
        );
        assert!(
            s[1].starts_with("A and C cannot be told apart at 4 replicates (total cost C − A = +"),
            "{s:?}"
        );
        let text = c.render();
        assert!(text.starts_with("result:\n  B is better than A"), "{text}");
        assert!(text.contains("    scenario   "), "{text}");
        assert!(text.contains("(B better)") && text.contains("(cannot tell)"), "{text}");
        assert!(text.contains("Bonferroni over 2 comparison(s) (totals) and 4 (per scenario)"), "{text}");
        let (_, rows) = c.table();
        assert_eq!(rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["outage", "blip", "total"]);
        // One replicate: nothing is told apart.
        let one = CompareConfidence::from_table(&t, 1, &objective);
        assert!(one.totals.iter().all(|p| p.verdict == Verdict::Tied));
        assert!(
            one.statements()[0]
                .contains("cannot be told apart at 1 replicate (one replicate gives no interval)")
        );
    }
}
