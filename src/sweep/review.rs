//! What the review page opens with, computed from a sweep's results (never written here):
//!
//! - the decision table: the configurations worth reading (the recommendation, the runner-up,
//!   the best of each family, the baseline) with total cost, difference and ratio to the
//!   recommendation (hyperfine's relative table), whether each qualifies and the first
//!   constraint it breaks, and its missed incidents, false opens and flaps;
//! - with a baseline (the configuration in use today): a verdict on it, the three best
//!   alternatives with what each changes and what it risks, and the paired difference of each
//!   against the baseline with its 95% confidence interval (the statistics `compare` prints:
//!   [`super::stats`], shown with [`super::compare::show`]);
//! - the bound notes of the recommendation.
//!
//! Totals over scenarios follow the recommendation's rule: every scenario counts once, by its
//! mean over replicates. A paired difference is taken per replicate (the same request streams
//! on every scenario), summed over the scenarios (counts, cost) or averaged (delays,
//! availability), then described over replicates.

use super::SweepError;
use super::grid::round_significant;
use super::objective::BoundObjective;
use super::recommend::{Candidate, Recommendation, num};
use super::regress::{Regressions, regressions};
use super::selection::Confidence;
use super::stats::{Stat, describe};
use super::table::{ResultTable, Summary};
use crate::time::Dur;
use serde::{Deserialize, Serialize};

/// File name of the review in an output folder.
pub const REVIEW_TOML: &str = "review.toml";

/// How many alternatives to the baseline the review shows.
pub const ALTERNATIVES: usize = 3;

/// A baseline whose cost is within this factor of the recommendation's, breaking nothing, is
/// "fine".
pub const FINE_RATIO: f64 = 1.1;

/// Significant digits of the numbers in review.toml (the page shows at most four).
pub const REVIEW_DIGITS: usize = 6;

/// One row of the decision table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRow {
    /// The configuration's label.
    pub label: String,
    /// Its id in the sweep's grid order.
    pub config_id: usize,
    /// Why it is in the table: `recommended`, `runner-up`, `best <family>`, `baseline`.
    pub roles: Vec<String>,
    /// Sum over scenarios of the mean cost.
    pub total_cost: f64,
    /// Total cost minus the recommendation's (none without a recommendation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
    /// Total cost over the recommendation's (none without one, or when it costs 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Complete and meeting every constraint on every scenario.
    pub qualifies: bool,
    /// The first constraint it breaks, with the scenario and the value there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken: Option<String>,
    /// Sums over scenarios of the means (none when no scenario has a value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_incidents: Option<f64>,
    /// Where it missed an incident in some replicate: `hang in 1 of 3 replicates` (none when it
    /// never did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_in: Option<String>,
    /// Incidents to open on, summed over scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incidents: Option<f64>,
    /// False opens, summed over scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_opens: Option<f64>,
    /// Flaps, summed over scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaps: Option<f64>,
}

/// The paired difference (alternative − baseline) of one metric, over replicates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Difference {
    /// What is compared, e.g. `false opens (sum over scenarios)`.
    pub metric: String,
    /// Replicates paired.
    pub n: usize,
    /// Mean difference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Half-width of its 95% confidence interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
}

impl Difference {
    /// As `compare` prints a difference: `+2 ± 1.5 *` (`*`: the interval excludes zero).
    pub fn text(&self) -> String {
        super::compare::show(&Stat { n: self.n, mean: self.mean, sd: None, ci95: self.ci95 }, true)
    }

    /// True when the 95% interval excludes zero.
    pub fn significant(&self) -> bool {
        matches!((self.mean, self.ci95), (Some(m), Some(ci)) if m - ci > 0.0 || m + ci < 0.0)
    }
}

/// One alternative to the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    /// The configuration's label.
    pub label: String,
    /// Its total cost.
    pub total_cost: f64,
    /// What it changes from the baseline (`failure_threshold 5 → 10`).
    pub changes: Vec<String>,
    /// Where it is worse than the baseline beyond noise, per scenario, in natural units
    /// ([`super::regress`]), and where it misses incidents.
    pub risks: Vec<String>,
    /// Paired differences against the baseline, one per compared metric.
    pub differences: Vec<Difference>,
}

/// The verdict on the baseline and what to change it to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineReview {
    /// The baseline's label.
    pub label: String,
    /// True when nothing is wrong with it: it qualifies, misses nothing, opens on no noise and
    /// costs at most [`FINE_RATIO`] times the recommendation.
    pub fine: bool,
    /// The verdict in a few words ("opens for nothing: 6 false opens, about 500 a week on noise
    /// alone", "fine").
    pub verdict: String,
    /// Every finding, most serious first.
    pub findings: Vec<String>,
    /// The best qualifying configurations other than the baseline, cheapest first.
    pub alternatives: Vec<Alternative>,
}

/// Everything the review page opens with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The recommended configuration's label, the reference of the decision table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended: Option<String>,
    /// Bound notes on the recommendation, as sentences.
    #[serde(default)]
    pub bounds: Vec<String>,
    /// Where the recommendation is worse than the baseline (else the runner-up) beyond noise,
    /// per scenario, in natural units: the page opens with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regressions: Option<Regressions>,
    /// Whether the recommendation is separated from the other qualifying configurations, and
    /// its paired gaps from the runner-up and the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Confidence>,
    /// The decision table, in ranking order.
    pub decision: Vec<DecisionRow>,
    /// The verdict on the baseline, when the sweep names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineReview>,
    /// `replicates = "auto"`: its stages and why it stopped, one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<String>,
}

/// How a compared metric adds up over scenarios.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Over {
    /// Summed (counts, cost).
    Sum,
    /// Averaged (delays, rates).
    Mean,
}

/// The compared metrics: (column, heading, how it adds up, higher is better). `cost` is the
/// objective's; the first delay column present of the two is used.
const COMPARED: [(&str, &str, Over, bool); 9] = [
    ("cost", "cost (sum over scenarios)", Over::Sum, false),
    ("missed_incidents", "missed incidents (sum)", Over::Sum, false),
    ("false_opens", "false opens (sum)", Over::Sum, false),
    (
        "detection_delay_with_misses_mean_s",
        "detection delay, misses counted (s, mean over scenarios)",
        Over::Mean,
        false,
    ),
    (
        "detection_delay_mean_s",
        "detection delay of caught incidents (s, mean over scenarios)",
        Over::Mean,
        false,
    ),
    ("flaps", "flaps (sum)", Over::Sum, false),
    ("wasted_quota", "wasted quota (attempts, sum)", Over::Sum, false),
    ("shed_healthy", "requests refused while healthy (sum)", Over::Sum, false),
    ("availability", "availability (mean over scenarios)", Over::Mean, true),
];

/// What a review needs to know of a scenario to extrapolate false opens to a week.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScenarioFacts {
    /// Its simulated length.
    pub duration: Dur,
    /// Whether it injects an incident the breaker should ride out (`stay_closed`): a false open
    /// there may be on that incident, which says nothing about a week of ordinary traffic.
    pub ride_out: bool,
}

/// What a review is built from.
pub struct Inputs<'a> {
    /// The sweep's results.
    pub table: &'a ResultTable,
    /// Their aggregates over replicates.
    pub summary: &'a Summary,
    /// The objective the costs use, bound to the table.
    pub objective: &'a BoundObjective,
    /// The ranking.
    pub recommendation: &'a Recommendation,
    /// The baseline's configuration id, when the sweep names one.
    pub baseline: Option<usize>,
    /// Each scenario's simulated length and whether it injects an incident to ride out, in
    /// table order (for false opens per week), when known.
    pub scenarios: Option<&'a [ScenarioFacts]>,
    /// A configuration's resolved parameters (none for results read back without them).
    pub params: super::output::ParamsOf<'a>,
}

impl Review {
    /// The review of a sweep. Fails when the baseline id is not a configuration of the table.
    pub fn build(x: &Inputs) -> Result<Review, SweepError> {
        let rec = x.recommendation;
        let table_index = |id: usize| x.table.index_of(id);
        let baseline = match x.baseline {
            None => None,
            Some(id) => Some(table_index(id).ok_or_else(|| {
                SweepError::Invalid(format!("the baseline, configuration {id}, is not among the results"))
            })?),
        };
        let chosen = rec.chosen();
        let mut rows: Vec<DecisionRow> = Vec::new();
        let mut families: Vec<&str> = Vec::new();
        for (rank, cand) in rec.ranking.iter().enumerate() {
            let mut roles = Vec::new();
            if rank == 0 && chosen.is_some() {
                roles.push("recommended".to_string());
            }
            if rank == 1 && rec.runner_up().is_some() {
                roles.push("runner-up".to_string());
            }
            if !families.contains(&cand.config.preset.as_str()) {
                families.push(&cand.config.preset);
                roles.push(format!("best {}", cand.config.preset));
            }
            let c = table_index(cand.config.id);
            if c.is_some() && c == baseline {
                roles.push("baseline".to_string());
            }
            if !roles.is_empty() {
                rows.push(decision_row(x, cand, roles, chosen));
            }
        }
        let baseline = match baseline {
            Some(b) => Some(baseline_review(x, b)?),
            None => None,
        };
        Ok(Review {
            recommended: chosen.map(|c| c.label.clone()),
            bounds: rec.bounds.iter().map(|b| b.sentence()).collect(),
            regressions: rec.regressions.clone(),
            selection: rec.confidence.clone(),
            decision: rows,
            baseline,
            stages: Vec::new(),
        })
    }

    /// The text of review.toml, every number rounded to [`REVIEW_DIGITS`] significant digits
    /// (the page reads it back and shows fewer; `163.00000000000003` reads `163`).
    pub fn to_toml(&self) -> Result<String, SweepError> {
        let body = toml::to_string(&self.rounded())
            .map_err(|e| SweepError::Invalid(format!("{REVIEW_TOML}: {e}")))?;
        Ok(format!("# The review page's opening, written by `breakerlab sweep` (docs/outputs.md).\n{body}"))
    }

    /// This review with every number rounded to [`REVIEW_DIGITS`] significant digits.
    pub fn rounded(&self) -> Review {
        let r = |x: f64| round_significant(x, REVIEW_DIGITS);
        let o = |x: Option<f64>| x.map(r);
        let mut out = self.clone();
        for d in &mut out.decision {
            d.total_cost = r(d.total_cost);
            (d.difference, d.ratio) = (o(d.difference), o(d.ratio));
            (d.missed_incidents, d.incidents) = (o(d.missed_incidents), o(d.incidents));
            (d.false_opens, d.flaps) = (o(d.false_opens), o(d.flaps));
        }
        if let Some(c) = &mut out.selection {
            for t in &mut c.listed {
                t.total_cost = r(t.total_cost);
            }
            for v in &mut c.versus {
                v.total_cost = r(v.total_cost);
                (v.gap.mean, v.gap.half, v.gap.bound) = (o(v.gap.mean), o(v.gap.half), o(v.gap.bound));
            }
        }
        for a in out.baseline.iter_mut().flat_map(|b| &mut b.alternatives) {
            a.total_cost = r(a.total_cost);
            for d in &mut a.differences {
                (d.mean, d.ci95) = (o(d.mean), o(d.ci95));
            }
        }
        out
    }

    /// Reads review.toml; errors name `file` and the line.
    pub fn parse(text: &str, file: &str) -> Result<Review, SweepError> {
        super::file::from_toml(text, file)
    }
}

/// Sum over scenarios of a configuration's mean of `metric` (`None` when no scenario has one).
fn total(x: &Inputs, config: usize, metric: &str) -> Option<f64> {
    let col = x.table.column(metric)?;
    let mut sum = None;
    for s in 0..x.table.scenarios.len() {
        if let Some(m) = x.summary.get(s, config).and_then(|cell| cell.means.get(col)) {
            *sum.get_or_insert(0.0) += m;
        }
    }
    sum
}

/// Per scenario, a configuration's mean of `metric` (scenario index, value), where present.
fn per_scenario(x: &Inputs, config: usize, metric: &str) -> Vec<(usize, f64)> {
    let Some(col) = x.table.column(metric) else { return Vec::new() };
    (0..x.table.scenarios.len())
        .filter_map(|s| x.summary.get(s, config).and_then(|c| c.means.get(col)).map(|m| (s, m)))
        .collect()
}

fn decision_row(x: &Inputs, cand: &Candidate, roles: Vec<String>, chosen: Option<&Candidate>) -> DecisionRow {
    let rec = x.recommendation;
    let c = x.table.index_of(cand.config.id).unwrap_or(0);
    let broken = match cand.violations.first() {
        Some(v) => Some(v.text(&rec.constraints, &rec.scenarios)),
        None if !cand.complete => Some("no results on some scenario".to_string()),
        None => None,
    };
    let reference = chosen.map(|r| r.total_cost);
    DecisionRow {
        label: cand.label.clone(),
        config_id: cand.config.id,
        roles,
        total_cost: cand.total_cost,
        difference: reference.map(|r| cand.total_cost - r),
        ratio: reference.filter(|r| *r > 0.0).map(|r| cand.total_cost / r),
        qualifies: cand.eligible(),
        broken,
        missed_incidents: total(x, c, "missed_incidents"),
        missed_in: super::recommend::missed_text(&cand.missed, &rec.scenarios),
        incidents: total(x, c, "incidents"),
        false_opens: total(x, c, "false_opens"),
        flaps: total(x, c, "flaps"),
    }
}

/// The paired differences (config `b` − config `a`) of every compared metric present.
fn differences(x: &Inputs, a: usize, b: usize) -> Vec<Difference> {
    let t = x.table;
    let replicates = t.replicates();
    let mut delay_done = false;
    let mut out = Vec::new();
    for (column, heading, over, _) in COMPARED {
        let values = |c: usize, s: usize| -> Vec<Option<f64>> {
            if column == "cost" {
                let mut v = vec![None; replicates as usize];
                for r in t.group(s, c) {
                    v[r.replicate as usize] = Some(x.objective.cost(&r.values));
                }
                v
            } else {
                t.column(column).map_or_else(
                    || vec![None; replicates as usize],
                    |m| t.replicate_values(s, c, m, replicates),
                )
            }
        };
        if column != "cost" && t.column(column).is_none() {
            continue;
        }
        if column.starts_with("detection_delay") {
            if delay_done {
                continue;
            }
            delay_done = true;
        }
        // Per replicate: the differences on every scenario where both have a value, summed
        // or averaged; then described over replicates.
        let mut per_replicate: Vec<Option<f64>> = vec![None; replicates as usize];
        let mut counts = vec![0usize; replicates as usize];
        for s in 0..t.scenarios.len() {
            for (r, (va, vb)) in values(a, s).into_iter().zip(values(b, s)).enumerate() {
                if let (Some(va), Some(vb)) = (va, vb) {
                    *per_replicate[r].get_or_insert(0.0) += vb - va;
                    counts[r] += 1;
                }
            }
        }
        if over == Over::Mean {
            for (d, n) in per_replicate.iter_mut().zip(&counts) {
                if let Some(d) = d {
                    *d /= *n as f64;
                }
            }
        }
        let stat = describe(per_replicate);
        out.push(Difference { metric: heading.to_string(), n: stat.n, mean: stat.mean, ci95: stat.ci95 });
    }
    out
}

/// The parameters of `b` that differ from `a`'s: resolved values when both are of one preset
/// and carry them, else the preset and `b`'s overrides.
fn changes(x: &Inputs, a: usize, b: usize) -> Vec<String> {
    let (ca, cb) = (x.table.config(a), x.table.config(b));
    if ca.config.preset != cb.config.preset {
        let mut out = vec![format!("preset {} → {}", ca.config.preset, cb.config.preset)];
        out.extend(cb.config.overrides.iter().map(|(k, v)| format!("{k} = {}", super::grid::plain(v))));
        return out;
    }
    let (ra, rb) = ((x.params)(&ca), (x.params)(&cb));
    let written = |c: &super::table::ConfigInfo| -> Vec<(String, String)> {
        c.config.overrides.iter().map(|(k, v)| (k.clone(), super::grid::plain(v))).collect()
    };
    let (pa, pb) = if !ra.is_empty() && !rb.is_empty() { (ra, rb) } else { (written(&ca), written(&cb)) };
    let mut out = Vec::new();
    for (k, vb) in &pb {
        match pa.iter().find(|(n, _)| n == k) {
            Some((_, va)) if va == vb => {}
            Some((_, va)) => out.push(format!("{k} {va} → {vb}")),
            None => out.push(format!("{k} = {vb}")),
        }
    }
    if out.is_empty() {
        out.push("nothing: the same parameters".to_string());
    }
    out
}

/// `n` with its unit, e.g. `6 false opens`.
fn count(n: f64, one: &str, many: &str) -> String {
    if n == 1.0 { format!("1 {one}") } else { format!("{} {many}", num(n)) }
}

/// Scenario names with their values, largest first, at most three: `blip 3, ramp 1`.
fn worst(x: &Inputs, values: &[(usize, f64)]) -> String {
    let mut v: Vec<&(usize, f64)> = values.iter().filter(|(_, m)| *m > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut parts: Vec<String> =
        v.iter().take(3).map(|(s, m)| format!("{} {}", x.table.scenarios[*s], num(*m))).collect();
    if v.len() > 3 {
        parts.push(format!("{} more", v.len() - 3));
    }
    parts.join(", ")
}

/// The finding on a configuration's false opens (`opens` per scenario, `total` of them): how
/// many and where, and a rate per week extrapolated from the scenarios that inject no incident
/// to ride out only (their false opens come from the noise of ordinary traffic), saying so.
fn false_opens_finding(x: &Inputs, opens: &[(usize, f64)], total: f64) -> String {
    let head = format!("opens for nothing: {}", count(total, "false open", "false opens"));
    let Some(facts) = x.scenarios.filter(|f| f.len() == x.table.scenarios.len()) else {
        return format!("{head} ({})", worst(x, opens));
    };
    let (mut noise, mut seconds, mut quiet) = (0.0, 0.0, 0usize);
    let mut ride_out: Vec<(usize, f64)> = Vec::new();
    for (s, f) in facts.iter().enumerate() {
        let here = opens.iter().find(|(k, _)| *k == s).map_or(0.0, |(_, m)| *m);
        if f.ride_out {
            if here > 0.0 {
                ride_out.push((s, here));
            }
        } else {
            (noise, seconds, quiet) = (noise + here, seconds + f.duration.as_secs_f64(), quiet + 1);
        }
    }
    let simulated = Dur::from_micros((seconds * 1e6) as u64);
    let basis =
        format!("the {simulated} simulated on the {quiet} scenario(s) that inject no incident to ride out");
    let ridden: f64 = ride_out.iter().map(|(_, m)| m).sum();
    let ride_clause = if ridden > 0.0 {
        let names: Vec<&str> = ride_out.iter().map(|(s, _)| x.table.scenarios[*s].as_str()).collect();
        format!(
            "; {} on scenarios that inject an incident to ride out ({}), not extrapolated",
            num(ridden),
            names.join(", ")
        )
    } else {
        String::new()
    };
    if noise > 0.0 && seconds > 0.0 {
        let week = Dur::from_secs(7 * 24 * 3600).as_secs_f64();
        let per_week = super::grid::round_significant(noise * week / seconds, 2);
        format!(
            "{head}, about {} a week on noise alone ({}; basis: {} in {basis}{ride_clause})",
            num(per_week),
            worst(x, opens),
            num(noise)
        )
    } else if seconds > 0.0 {
        format!("{head}, none on noise alone ({}; none in {basis}{ride_clause})", worst(x, opens))
    } else {
        format!(
            "{head} ({}{ride_clause}; no scenario without one to extrapolate a week from)",
            worst(x, opens)
        )
    }
}

/// Mean over scenarios of a configuration's delay column (with misses counted when present).
fn mean_delay(x: &Inputs, config: usize) -> Option<f64> {
    let column = ["detection_delay_with_misses_mean_s", "detection_delay_mean_s"]
        .into_iter()
        .find(|c| x.table.column(c).is_some())?;
    let v = per_scenario(x, config, column);
    (!v.is_empty()).then(|| v.iter().map(|(_, m)| m).sum::<f64>() / v.len() as f64)
}

fn baseline_review(x: &Inputs, b: usize) -> Result<BaselineReview, SweepError> {
    let rec = x.recommendation;
    let info = x.table.config(b);
    let cand =
        rec.ranking.iter().find(|c| c.config.id == info.config.id).ok_or_else(|| {
            SweepError::Invalid(format!("the baseline `{}` is not in the ranking", info.label))
        })?;
    let chosen = rec.chosen();
    let is_chosen = chosen.is_some_and(|c| c.config.id == cand.config.id);
    // Problems, most serious first; each one sentence.
    let mut findings: Vec<String> = Vec::new();
    let missed = per_scenario(x, b, "missed_incidents");
    let missed_total: f64 = missed.iter().map(|(_, m)| m).sum();
    if missed_total > 0.0 {
        let incidents = total(x, b, "incidents").unwrap_or(0.0);
        let mut names: Vec<&(usize, f64)> = missed.iter().filter(|(_, m)| *m > 0.0).collect();
        names.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let names: Vec<&str> = names.iter().map(|(s, _)| x.table.scenarios[*s].as_str()).collect();
        let detail = if names.len() > 1 { format!(": {}", worst(x, &missed)) } else { String::new() };
        findings.push(format!(
            "misses incidents on {} ({} of {} incidents, mean over replicates{detail})",
            names.join(", "),
            num(missed_total),
            num(incidents),
        ));
    }
    let opens = per_scenario(x, b, "false_opens");
    let opens_total: f64 = opens.iter().map(|(_, m)| m).sum();
    if opens_total > 0.0 {
        findings.push(false_opens_finding(x, &opens, opens_total));
    }
    let flaps = per_scenario(x, b, "flaps");
    let flaps_total: f64 = flaps.iter().map(|(_, m)| m).sum();
    if flaps_total > 0.0 {
        findings.push(format!(
            "flaps: {} soon after closing ({})",
            count(flaps_total, "re-open", "re-opens"),
            worst(x, &flaps)
        ));
    }
    if let (Some(mine), Some(best)) =
        (mean_delay(x, b), chosen.and_then(|c| x.table.index_of(c.config.id).and_then(|c| mean_delay(x, c))))
        && !is_chosen
        && mine > 1.5 * best
        && mine > best + 10.0
    {
        findings.push(format!(
            "detects late: {}s on average per scenario, against {}s for the recommendation",
            num(mine),
            num(best)
        ));
    }
    if let Some(v) = cand.violations.first() {
        let more = cand.violations.len() - 1;
        findings.push(format!(
            "breaks {}{}",
            v.text(&rec.constraints, &rec.scenarios),
            if more > 0 { format!(", and {more} more constraint(s) or scenario(s)") } else { String::new() }
        ));
    }
    let problems = findings.len();
    let ratio = chosen.filter(|c| c.total_cost > 0.0).map(|c| cand.total_cost / c.total_cost);
    if let (Some(c), Some(r)) = (chosen, ratio)
        && !is_chosen
    {
        findings.push(format!(
            "costs {}× the recommendation ({} against {} for {})",
            num(r),
            num(cand.total_cost),
            num(c.total_cost),
            c.label
        ));
    }
    let fine = problems == 0 && cand.eligible() && (is_chosen || ratio.is_some_and(|r| r <= FINE_RATIO));
    let headline = |f: &String| f.split(" (").next().unwrap_or(f).to_string();
    let verdict = if fine && is_chosen {
        "fine: it is the recommended configuration".to_string()
    } else if is_chosen {
        format!("keep it: nothing swept does better, though it {}", headline(&findings[0]))
    } else if fine {
        format!(
            "fine: it breaks nothing and costs within {}% of the recommendation",
            num(100.0 * (FINE_RATIO - 1.0))
        )
    } else if problems > 0 {
        headline(&findings[0])
    } else if let Some(r) = ratio {
        format!("works, but costs {}× the recommendation", num(r))
    } else {
        "no configuration meets the constraints to compare it with".to_string()
    };
    let alternatives = rec
        .ranking
        .iter()
        .filter(|c| c.eligible() && c.config.id != cand.config.id)
        .take(ALTERNATIVES)
        .map(|alt| {
            let a = x.table.index_of(alt.config.id).unwrap_or(0);
            let differences = differences(x, b, a);
            let mut risks: Vec<String> = super::recommend::missed_text(&alt.missed, &rec.scenarios)
                .map(|m| format!("misses incidents on {m}"))
                .into_iter()
                .collect();
            risks.extend(regressions(x.table, a, b, rec.rule.confidence).0.iter().map(|r| r.line()));
            if risks.is_empty() {
                risks.push("nothing is worse than the baseline's beyond noise, on any scenario".to_string());
            }
            Alternative {
                label: alt.label.clone(),
                total_cost: alt.total_cost,
                changes: changes(x, b, a),
                risks,
                differences,
            }
        })
        .collect();
    Ok(BaselineReview { label: info.label.clone(), fine, verdict, findings, alternatives })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;
    use crate::sweep::constraint::Constraint;
    use crate::sweep::objective::BindToColumns;
    use crate::sweep::objective::Objective;
    use crate::sweep::recommend::{Rules, recommend};
    use crate::sweep::selection::Settings;
    use crate::sweep::table::tests::{cfg, run};

    const METRICS: [&str; 5] =
        ["false_opens", "missed_incidents", "incidents", "flaps", "detection_delay_mean_s"];

    /// Two scenarios of one hour, two replicates, four configurations; per replicate
    /// (false_opens, missed, incidents, flaps, delay):
    /// - 0 consecutive t=2: opens on noise (3 + 3 false opens), one flap, fast: cost 70
    /// - 1 consecutive t=4: no false open, slower: cost 52 (recommended)
    /// - 2 consecutive t=8: misses the incident on s0: cost 150, ruled out
    /// - 3 windowed x=1: cost 60 (runner-up)
    fn table() -> ResultTable {
        let configs = vec![
            cfg(0, "consecutive", "failure_threshold", 2),
            cfg(1, "consecutive", "failure_threshold", 4),
            cfg(2, "consecutive", "failure_threshold", 8),
            cfg(3, "windowed", "x", 1),
        ];
        let v =
            |fo: f64, mi: f64, fl: f64, dd: Option<f64>| vec![Some(fo), Some(mi), Some(1.0), Some(fl), dd];
        let data: [[[Vec<Option<f64>>; 2]; 2]; 4] = [
            [
                [v(3.0, 0.0, 1.0, Some(5.0)), v(3.0, 0.0, 1.0, Some(5.0))],
                [v(2.0, 0.0, 0.0, Some(5.0)), v(4.0, 0.0, 0.0, Some(5.0))],
            ],
            [
                [v(0.0, 0.0, 0.0, Some(20.0)), v(0.0, 0.0, 0.0, Some(20.0))],
                [v(0.0, 0.0, 0.0, Some(30.0)), v(0.0, 0.0, 0.0, Some(34.0))],
            ],
            [
                [v(0.0, 1.0, 0.0, None), v(0.0, 1.0, 0.0, None)],
                [v(0.0, 0.0, 0.0, Some(50.0)), v(0.0, 0.0, 0.0, Some(50.0))],
            ],
            [
                [v(0.0, 0.0, 0.0, Some(30.0)), v(0.0, 0.0, 0.0, Some(30.0))],
                [v(0.0, 0.0, 0.0, Some(30.0)), v(0.0, 0.0, 0.0, Some(30.0))],
            ],
        ];
        let mut runs = Vec::new();
        for (c, per_scenario) in data.iter().enumerate() {
            for (s, reps) in per_scenario.iter().enumerate() {
                for (r, vals) in reps.iter().enumerate() {
                    runs.push(run(s, c, r as u32, vals));
                }
            }
        }
        ResultTable::new(vec!["s0".into(), "s1".into()], configs, METRICS.map(String::from).to_vec(), runs)
            .unwrap()
    }

    fn review(baseline: Option<usize>) -> Review {
        review_weighing(baseline, 10.0)
    }

    /// The review when a false open costs `false_open` (10 in [`review`]).
    fn review_weighing(baseline: Option<usize>, false_open: f64) -> Review {
        review_with(baseline, false_open, [false, false])
    }

    /// The review when a false open costs `false_open` and the scenarios inject an incident to
    /// ride out or not (`ride_out`).
    fn review_with(baseline: Option<usize>, false_open: f64, ride_out: [bool; 2]) -> Review {
        let t = table();
        let objective = Objective::new([
            (Metric::FalseOpens, false_open),
            (Metric::MissedIncidents, 100.0),
            (Metric::DetectionDelayMeanS, 1.0),
        ]);
        let bound = objective.bind(&t.metrics).unwrap();
        let summary = t.summarize(&bound).unwrap();
        let constraints = vec![Constraint::parse("missed_incidents == 0", &METRICS).unwrap()];
        // Differences below 100 cost units do not matter here: the lowest cost is separated and
        // recommended (the selection itself is tested in `selection` and `recommend`).
        let rule = crate::sweep::selection::Rule { indifference: 100.0, ..Default::default() };
        let rules = Rules {
            settings: Settings { baseline, rule, ..Settings::default() },
            ..Rules::new(&|_, _| Ok(()))
        };
        let rec = recommend(&t, &objective, &constraints, &rules).unwrap();
        let hour = ride_out.map(|ride_out| ScenarioFacts { duration: Dur::from_secs(3600), ride_out });
        Review::build(&Inputs {
            table: &t,
            summary: &summary,
            objective: &bound,
            recommendation: &rec,
            baseline,
            scenarios: Some(&hour),
            params: &|c| vec![(c.config.overrides[0].0.clone(), c.config.overrides[0].1.to_string())],
        })
        .unwrap()
    }

    #[test]
    fn the_decision_table_has_the_recommendation_runner_up_best_of_each_family_and_baseline() {
        let r = review(Some(0));
        type Row<'a> = (&'a str, Vec<&'a str>, f64, Option<f64>, bool);
        let rows: Vec<Row> = r
            .decision
            .iter()
            .map(|d| {
                (
                    d.label.as_str(),
                    d.roles.iter().map(String::as_str).collect(),
                    d.total_cost,
                    d.ratio,
                    d.qualifies,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    "consecutive[failure_threshold=4]",
                    vec!["recommended", "best consecutive"],
                    52.0,
                    Some(1.0),
                    true
                ),
                ("windowed[x=1]", vec!["runner-up", "best windowed"], 60.0, Some(60.0 / 52.0), true),
                ("consecutive[failure_threshold=2]", vec!["baseline"], 70.0, Some(70.0 / 52.0), true),
            ]
        );
        assert_eq!(r.decision[2].difference, Some(18.0));
        assert_eq!((r.decision[2].false_opens, r.decision[2].flaps), (Some(6.0), Some(1.0)));
        assert_eq!((r.decision[0].missed_incidents, r.decision[0].incidents), (Some(0.0), Some(2.0)));
        // Without a baseline the ruled-out configuration stays out (no role), and with it as the
        // baseline it is shown with the constraint it breaks.
        assert_eq!(review(None).decision.len(), 2);
        let r = review(Some(2));
        let last = r.decision.last().unwrap();
        assert_eq!((last.roles.clone(), last.qualifies), (vec!["baseline".to_string()], false));
        assert_eq!(
            last.broken.as_deref(),
            Some("`missed_incidents == 0` on s0 (missed_incidents = 1 in 2 of 2 replicates)")
        );
        let b = r.baseline.unwrap();
        assert_eq!(b.verdict, "misses incidents on s0");
        assert_eq!(b.findings[0], "misses incidents on s0 (1 of 2 incidents, mean over replicates)");
        // review.toml round-trips.
        let r = review(Some(0));
        assert_eq!(Review::parse(&r.to_toml().unwrap(), "review.toml").unwrap(), r.rounded());
        // Sums of floats are written rounded, not as their last bits.
        let mut noisy = r.clone();
        noisy.decision[0].flaps = Some(163.00000000000003);
        noisy.decision[0].ratio = Some(1.470355658358743);
        let text = noisy.to_toml().unwrap();
        assert!(text.contains("flaps = 163.0\n") && text.contains("ratio = 1.47036\n"), "{text}");
        assert!(
            Review::parse("decision = 3\n", "review.toml")
                .unwrap_err()
                .to_string()
                .starts_with("review.toml:1:12:")
        );
    }

    #[test]
    fn the_verdict_on_a_noisy_baseline_with_alternatives_and_paired_differences() {
        let b = review(Some(0)).baseline.unwrap();
        assert_eq!(b.label, "consecutive[failure_threshold=2]");
        assert!(!b.fine);
        assert_eq!(b.verdict, "opens for nothing: 6 false opens, about 500 a week on noise alone");
        assert_eq!(
            b.findings,
            [
                "opens for nothing: 6 false opens, about 500 a week on noise alone (s0 3, s1 3; basis: 6 in the 2h \
                 simulated on the 2 scenario(s) that inject no incident to ride out)",
                "flaps: 1 re-open soon after closing (s0 1)",
                "costs 1.346× the recommendation (70 against 52 for consecutive[failure_threshold=4])",
            ]
        );
        let labels: Vec<&str> = b.alternatives.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["consecutive[failure_threshold=4]", "windowed[x=1]"]);
        assert_eq!(b.alternatives[0].changes, ["failure_threshold 2 → 4"]);
        assert_eq!(b.alternatives[1].changes, ["preset consecutive → windowed", "x = 1"]);
        // Paired by replicate: cost −10 and −26 → −18; false opens −5 and −7 → −6; the delay
        // (mean over scenarios) +20 and +22 → +21, the one risk; flaps −1 twice, an interval of
        // zero width that excludes zero.
        let d = |name: &str| {
            b.alternatives[0].differences.iter().find(|d| d.metric.starts_with(name)).unwrap().clone()
        };
        assert_eq!((d("cost").mean, d("cost").n), (Some(-18.0), 2));
        assert_eq!(d("false opens").mean, Some(-6.0));
        assert_eq!(d("detection delay").mean, Some(21.0));
        assert_eq!(d("flaps").text(), "-1 ± 0 *");
        assert!(d("flaps").significant() && !d("cost").significant());
        assert_eq!(d("false opens").text(), "-6 ± 12.71");
        assert_eq!(
            b.alternatives[0].risks,
            ["s0: detects in 20 s vs 5 s (+15 ± 0 s)", "s1: detects in 32 s vs 5 s (+27 ± 25.41 s)"]
        );
        // The recommended configuration as the baseline is fine.
        let b = review(Some(1)).baseline.unwrap();
        assert!(b.fine);
        assert_eq!(b.verdict, "fine: it is the recommended configuration");
        assert_eq!(b.alternatives[0].label, "windowed[x=1]");
        // The runner-up (within 16% of the cost, nothing broken) works but costs more.
        let b = review(Some(3)).baseline.unwrap();
        assert_eq!(b.verdict, "works, but costs 1.154× the recommendation");
    }

    #[test]
    fn false_opens_are_extrapolated_to_a_week_from_noise_alone_never_from_injected_incidents() {
        let finding = |ride_out| review_with(Some(0), 10.0, ride_out).baseline.unwrap().findings[0].clone();
        assert_eq!(
            finding([true, false]),
            "opens for nothing: 6 false opens, about 500 a week on noise alone (s0 3, s1 3; basis: 3 in the 1h \
             simulated on the 1 scenario(s) that inject no incident to ride out; 3 on scenarios that inject an \
             incident to ride out (s0), not extrapolated)"
        );
        assert_eq!(
            finding([true, true]),
            "opens for nothing: 6 false opens (s0 3, s1 3; 6 on scenarios that inject an incident to ride out (s0, \
             s1), not extrapolated; no scenario without one to extrapolate a week from)"
        );
    }

    #[test]
    fn a_recommended_baseline_with_problems_is_kept_with_them_said() {
        // A false open costing 1 instead of 10: configuration 0 costs 8 + 8 = 16 against 52 for
        // configuration 1 and 60 for the windowed one, so the noisy baseline is the
        // recommendation itself: keep it, but say what is wrong with it.
        let r = review_weighing(Some(0), 1.0);
        assert_eq!(r.recommended.as_deref(), Some("consecutive[failure_threshold=2]"));
        assert_eq!(r.decision[0].total_cost, 16.0);
        assert_eq!(r.decision[0].roles, ["recommended", "best consecutive", "baseline"]);
        let b = r.baseline.unwrap();
        assert!(!b.fine);
        assert_eq!(
            b.verdict,
            "keep it: nothing swept does better, though it opens for nothing: 6 false opens, about 500 a week on noise alone"
        );
        assert_eq!(
            b.findings,
            [
                "opens for nothing: 6 false opens, about 500 a week on noise alone (s0 3, s1 3; basis: 6 in the 2h \
                 simulated on the 2 scenario(s) that inject no incident to ride out)",
                "flaps: 1 re-open soon after closing (s0 1)",
            ]
        );
        let labels: Vec<&str> = b.alternatives.iter().map(|a| a.label.as_str()).collect();
        assert_eq!(labels, ["consecutive[failure_threshold=4]", "windowed[x=1]"]);
        // Its first alternative removes the noise at the price of a slower detection.
        let d = &b.alternatives[0].differences;
        let fo = d.iter().find(|d| d.metric.starts_with("false opens")).unwrap();
        assert_eq!(fo.mean, Some(-6.0));
        assert_eq!(b.alternatives[0].total_cost, 52.0);
    }
}
