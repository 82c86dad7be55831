//! Hidden regressions: per scenario, every metric on which a configuration does worse than a
//! reference (the baseline, else the runner-up) beyond noise, in the metric's own unit
//! ("hard-outage: detects in 29.9 s vs 0.75 s"), so a lower total cannot hide one.
//!
//! A metric is worse beyond noise when the paired interval of its difference (same scenario,
//! replicate by replicate, at the stated confidence, Student t) lies wholly on the worse side
//! of zero. A missed incident is listed whenever the reference caught it in that replicate,
//! noise or not: one miss is never noise to the team that gets paged.

use super::recommend::num;
use super::selection::replicates;
use super::stats::{Interval, describe};
use super::table::ResultTable;
use serde::{Deserialize, Serialize};

/// One regression of a configuration against a reference, on one scenario and metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regression {
    /// The scenario.
    pub scenario: String,
    /// The metric's column.
    pub metric: String,
    /// What got worse, in the metric's unit: `detects in 29.9 s vs 0.75 s`.
    pub text: String,
    /// The paired difference (configuration − reference) in the metric's unit, as shown.
    pub difference: String,
}

impl Regression {
    /// `hard-outage: detects in 29.9 s vs 0.75 s (+29.15 ± 0.41 s)`.
    pub fn line(&self) -> String {
        format!("{}: {} ({})", self.scenario, self.text, self.difference)
    }
}

/// Every regression of one configuration against a reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regressions {
    /// `baseline` or `runner-up`.
    pub against: String,
    /// The reference's label.
    pub label: String,
    /// The reference's id.
    pub config_id: usize,
    /// The confidence of the intervals.
    pub confidence: f64,
    /// The most replicates a comparison had (below two, nothing can be told from noise).
    pub replicates: usize,
    /// Scenario by scenario, in sweep order; per scenario in [`COMPARED`] order.
    #[serde(default)]
    pub items: Vec<Regression>,
}

impl Regressions {
    /// The heading: `Worse than the baseline X beyond noise (per scenario, paired 95 % interval
    /// excludes zero)`, and whether anything is listed.
    pub fn heading(&self) -> String {
        format!(
            "Worse than the {} {} beyond noise, per scenario (paired over {}, {} % interval excludes zero; \
             a missed incident whenever the {} caught it)",
            self.against,
            self.label,
            replicates(self.replicates),
            num(100.0 * self.confidence),
            self.against
        )
    }

    /// The heading and one line per regression, indented by `indent`; a line saying so when
    /// there is none, or when one replicate cannot tell anything from noise.
    pub fn render(&self, indent: &str) -> String {
        let mut out = format!("{indent}{}:\n", self.heading());
        for r in &self.items {
            out.push_str(&format!("{indent}  {}\n", r.line()));
        }
        if self.items.is_empty() {
            let none = if self.replicates < 2 {
                "nothing can be told from noise with one replicate: run more".to_string()
            } else {
                "nothing: no metric is worse on any scenario".to_string()
            };
            out.push_str(&format!("{indent}  {none}\n"));
        }
        out
    }
}

/// How a compared metric reads: its column, the phrase of a value pair (configuration,
/// reference) and the unit of the difference.
struct Natural {
    column: &'static str,
    phrase: fn(f64, f64) -> String,
    unit: &'static str,
    /// The factor from the column's unit to the one shown (availability: a ratio shown in %).
    scale: f64,
    /// Higher is better.
    higher: bool,
}

impl Natural {
    /// A metric shown in its column's unit, lower being better.
    const fn lower(column: &'static str, phrase: fn(f64, f64) -> String, unit: &'static str) -> Natural {
        Natural { column, phrase, unit, scale: 1.0, higher: false }
    }
}

/// The metrics compared, in order.
const COMPARED: [Natural; 8] = [
    Natural::lower("detection_delay_mean_s", |b, a| format!("detects in {} s vs {} s", num(b), num(a)), " s"),
    Natural::lower(
        "recovery_lag_mean_s",
        |b, a| format!("closes {} s after the incident ends vs {} s", num(b), num(a)),
        " s",
    ),
    Natural::lower("false_opens", |b, a| format!("opens for nothing {} times vs {}", num(b), num(a)), ""),
    Natural::lower("flaps", |b, a| format!("flaps {} times vs {}", num(b), num(a)), ""),
    Natural::lower(
        "shed_healthy",
        |b, a| format!("refuses {} requests while healthy vs {}", num(b), num(a)),
        "",
    ),
    Natural::lower(
        "wasted_quota",
        |b, a| format!("sends {} attempts into a failing dependency vs {}", num(b), num(a)),
        "",
    ),
    Natural {
        column: "availability",
        phrase: |b, a| format!("availability {} % vs {} %", num(b), num(a)),
        unit: " pp",
        scale: 100.0,
        higher: true,
    },
    Natural::lower("latency_p99_ms", |b, a| format!("p99 latency {} ms vs {} ms", num(b), num(a)), " ms"),
];

/// Every regression of configuration `b` against configuration `a` (table positions), per
/// scenario, at `confidence`, and the most replicates any comparison paired.
pub fn regressions(table: &ResultTable, b: usize, a: usize, confidence: f64) -> (Vec<Regression>, usize) {
    let reps = table.replicates();
    let mut out = Vec::new();
    let mut most = 0;
    for (s, scenario) in table.scenarios.iter().enumerate() {
        if let Some(m) = table.column("missed_incidents") {
            let (va, vb) = (table.replicate_values(s, a, m, reps), table.replicate_values(s, b, m, reps));
            let missing = |v: &[Option<f64>]| v.iter().filter(|x| x.is_some_and(|m| m > 0.0)).count();
            let worse = va
                .iter()
                .zip(&vb)
                .filter(|(x, y)| x.is_some_and(|x| x == 0.0) && y.is_some_and(|y| y > 0.0))
                .count();
            let (na, nb) = (va.iter().flatten().count(), vb.iter().flatten().count());
            most = most.max(na.min(nb));
            if worse > 0 {
                out.push(Regression {
                    scenario: scenario.clone(),
                    metric: "missed_incidents".into(),
                    text: format!(
                        "misses incidents in {} of {} vs {} of {}",
                        missing(&vb),
                        replicates(nb),
                        missing(&va),
                        na
                    ),
                    difference: format!("the reference caught them in {worse} of these"),
                });
            }
        }
        for n in &COMPARED {
            let Some(m) = table.column(n.column) else { continue };
            let scaled = |v: Vec<Option<f64>>| -> Vec<Option<f64>> {
                v.into_iter().map(|x| x.map(|x| x * n.scale)).collect()
            };
            let va = scaled(table.replicate_values(s, a, m, reps));
            let vb = scaled(table.replicate_values(s, b, m, reps));
            let d = Interval::paired(&va, &vb, confidence);
            let worse = match (d.mean, d.half) {
                (Some(mean), Some(half)) if n.higher => mean + half < 0.0,
                (Some(mean), Some(half)) => mean - half > 0.0,
                _ => false,
            };
            if !worse {
                continue;
            }
            let (ma, mb) = (describe(va).mean.unwrap_or(f64::NAN), describe(vb).mean.unwrap_or(f64::NAN));
            let (mean, half) = (d.mean.unwrap_or(0.0), d.half.unwrap_or(0.0));
            let sign = if mean > 0.0 { "+" } else { "" };
            out.push(Regression {
                scenario: scenario.clone(),
                metric: n.column.into(),
                text: (n.phrase)(mb, ma),
                difference: format!("{sign}{} ± {}{}", num(mean), num(half), n.unit),
            });
        }
    }
    (out, most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::tests::{cfg, run};

    /// Two scenarios, two configurations (0: the reference), three replicates; per replicate
    /// (missed_incidents, detection_delay_mean_s, false_opens, availability).
    fn table() -> ResultTable {
        let v = |m: f64, d: Option<f64>, f: f64, a: f64| [Some(m), d, Some(f), Some(a)];
        let rows = [
            // reference on "hard-outage": fast, never misses
            (
                0,
                0,
                [v(0.0, Some(0.75), 0.0, 0.99), v(0.0, Some(0.7), 0.0, 0.99), v(0.0, Some(0.8), 1.0, 0.99)],
            ),
            // the other: slow every replicate; one more false open in one replicate only (noise)
            (
                0,
                1,
                [
                    v(0.0, Some(29.9), 0.0, 0.98),
                    v(0.0, Some(30.1), 1.0, 0.98),
                    v(0.0, Some(29.7), 1.0, 0.981),
                ],
            ),
            // on "slow": the reference catches it, the other misses in one replicate
            (
                1,
                0,
                [v(0.0, Some(100.0), 0.0, 0.9), v(0.0, Some(120.0), 0.0, 0.9), v(0.0, Some(110.0), 0.0, 0.9)],
            ),
            (1, 1, [v(0.0, Some(90.0), 0.0, 0.9), v(1.0, None, 0.0, 0.9), v(0.0, Some(95.0), 0.0, 0.9)]),
        ];
        let mut runs = Vec::new();
        for (s, c, reps) in rows {
            for (r, vals) in reps.iter().enumerate() {
                runs.push(run(s, c, r as u32, vals));
            }
        }
        let metrics = ["missed_incidents", "detection_delay_mean_s", "false_opens", "availability"];
        ResultTable::new(
            vec!["hard-outage".into(), "slow".into()],
            vec![cfg(0, "consecutive", "failure_threshold", 3), cfg(1, "windowed", "x", 1)],
            metrics.map(String::from).to_vec(),
            runs,
        )
        .unwrap()
    }

    #[test]
    fn every_regression_beyond_noise_in_natural_units() {
        let (found, most) = regressions(&table(), 1, 0, 0.95);
        let lines: Vec<String> = found.iter().map(Regression::line).collect();
        assert_eq!(most, 3);
        assert_eq!(
            lines,
            [
                "hard-outage: detects in 29.9 s vs 0.75 s (+29.15 ± 0.621 s)",
                "hard-outage: availability 98.03 % vs 99 % (-0.9667 ± 0.1434 pp)",
                "slow: misses incidents in 1 of 3 replicates vs 0 of 3 (the reference caught them in 1 of these)",
            ]
        );
        // The other way round: the reference is worse nowhere beyond noise (its faster
        // detection on slow is within noise: 90 and 95 against 100 and 110, one pair missing).
        let (back, _) = regressions(&table(), 0, 1, 0.95);
        assert!(back.is_empty(), "{back:?}");
        let r = Regressions {
            against: "baseline".into(),
            label: "consecutive".into(),
            config_id: 0,
            confidence: 0.95,
            replicates: 3,
            items: found,
        };
        let text = r.render("  ");
        assert!(text.starts_with("  Worse than the baseline consecutive beyond noise, per scenario (paired over 3 replicates, 95 % interval excludes zero; a missed incident whenever the baseline caught it):\n    hard-outage: detects"), "{text}");
        let none = Regressions { items: vec![], replicates: 1, ..r };
        assert!(none.render("").ends_with("  nothing can be told from noise with one replicate: run more\n"));
    }
}
