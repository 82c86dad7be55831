//! The recommendation: the configuration with the lowest total cost among those that meet every
//! constraint on every scenario, and why, in plain words.
//!
//! Rules (documented in docs/selection.md):
//! - A configuration's cost on a scenario is the mean over replicates of its per-run cost
//!   (Σ weight · metric). Its total cost is the sum of those means over the scenarios: every
//!   scenario counts equally, whatever its length or traffic.
//! - A constraint is checked on each scenario, on the replicates its scope names (every
//!   replicate unless it says `in P % of replicates`, `worst` or `mean`; see
//!   [`super::constraint`]). A run in which the metric has no value (no incident, so no
//!   detection delay) cannot break it.
//! - A configuration that misses an incident in any replicate says so ([`Candidate::missed`]),
//!   whether or not a constraint forbids it.
//! - A configuration without results on some scenario (an unfinished shard) is not eligible.
//! - Ties in cost go to the lower configuration id (earlier in the sweep file).
//! - A bound decided when the chosen value of a swept parameter is the lowest or highest its
//!   sweep entry tried (and the preset accepts a value beyond it): the best may lie outside the
//!   range, so the explanation says so and suggests extending it ([`BoundNote`]).

use super::constraint::Constraint;
use super::file::Validate;
use super::grid::{Configuration, plain, round_significant};
use super::objective::{BoundObjective, Objective};
use super::output::ParamsOf;
use super::regress::{Regressions, regressions};
use super::selection::{
    Confidence, Rule, Settings, Subset, TIED_LISTED, TieBreak, Tied, Totals, Versus, gap, subset,
};
use super::stats::describe;
use super::table::ConfigInfo;
use super::table::{ResultTable, RunRow, Summary};
use crate::sweep::objective::BindToColumns;
use crate::time::Dur;
use crate::{Error, Result};
use std::fmt::Write as _;
use std::sync::Arc;

/// A constraint broken by a configuration on a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Index into [`Recommendation::constraints`].
    pub constraint: usize,
    /// Index into [`Recommendation::scenarios`].
    pub scenario: usize,
    /// The value that breaks it ([`super::constraint::Judged::shown`]): the breaking replicate's
    /// farthest from the bound, the worst replicate's or the mean, by the constraint's scope.
    pub value: f64,
    /// Replicates whose value breaks the bound, of how many.
    pub breaking: (usize, usize),
}

impl Violation {
    /// `` `missed_incidents == 0` on hang (missed_incidents = 1 in 1 of 3 replicates) ``.
    pub fn text(&self, constraints: &[Constraint], scenarios: &[String]) -> String {
        let c = &constraints[self.constraint];
        let detail = match c.scope {
            super::constraint::Scope::Mean => " (mean over replicates)".to_string(),
            super::constraint::Scope::Worst => " (worst replicate)".to_string(),
            _ => format!(" in {} of {} replicates", self.breaking.0, self.breaking.1),
        };
        format!("`{}` on {} ({} = {}{detail})", c.text, scenarios[self.scenario], c.metric, num(self.value))
    }
}

/// The replicates of one scenario in which a configuration missed an incident.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missed {
    /// Index into [`Recommendation::scenarios`].
    pub scenario: usize,
    /// Replicates with at least one missed incident.
    pub replicates: usize,
    /// Replicates run.
    pub of: usize,
}

/// `hang in 1 of 3 replicates, slow-not-down in 3 of 3`: where a configuration missed
/// incidents; `None` when it never did.
pub fn missed_text(missed: &[Missed], scenarios: &[String]) -> Option<String> {
    let parts: Vec<String> = missed
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let of = if i == 0 { " replicates" } else { "" };
            format!("{} in {} of {}{of}", scenarios[m.scenario], m.replicates, m.of)
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One configuration's standing.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The configuration.
    pub config: Arc<Configuration>,
    /// Its label.
    pub label: String,
    /// Sum over scenarios of the mean cost.
    pub total_cost: f64,
    /// Mean cost per scenario (`None`: no results there).
    pub scenario_costs: Vec<Option<f64>>,
    /// Per objective term: weight × metric mean, summed over scenarios.
    pub contributions: Vec<f64>,
    /// Constraints it breaks, per scenario.
    pub violations: Vec<Violation>,
    /// Scenarios on which it missed an incident in some replicate.
    pub missed: Vec<Missed>,
    /// True when it has results on every scenario.
    pub complete: bool,
    /// Replicates it ran (the fewest over the scenarios).
    pub replicates: usize,
    /// True when `replicates = "auto"` screened it out before the last stage (it ran fewer
    /// replicates than the configurations still in the running).
    pub screened: bool,
}

impl Candidate {
    /// Complete, meeting every constraint and not screened out.
    pub fn eligible(&self) -> bool {
        self.complete && self.violations.is_empty() && !self.screened
    }

    /// How many distinct constraints it breaks (on any scenario).
    pub fn broken_constraints(&self) -> usize {
        let mut ks: Vec<usize> = self.violations.iter().map(|v| v.constraint).collect();
        ks.sort_unstable();
        ks.dedup();
        ks.len()
    }
}

/// How many configurations one constraint rules out.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// Index into [`Recommendation::constraints`].
    pub constraint: usize,
    /// Configurations that break it on at least one scenario.
    pub eliminated: usize,
}

/// The outcome of `recommend`: a ranking of every configuration and the choice, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// The objective used.
    pub objective: Objective,
    /// The constraints used.
    pub constraints: Vec<Constraint>,
    /// Scenario names.
    pub scenarios: Vec<String>,
    /// Eligible first, then by total cost, then by id: the first [`KEPT`] configurations, each
    /// preset's first, the cheapest complete one and the baseline (not every configuration).
    pub ranking: Vec<Candidate>,
    /// How many configurations were ranked, eligible and incomplete.
    pub counts: Counts,
    /// Constraints by how many configurations they rule out (most first; ties in file order).
    pub binding: Vec<Binding>,
    /// The chosen configuration's parameters that sit at an edge of their swept range.
    pub bounds: Vec<BoundNote>,
    /// Whether the chosen configuration is separated from the other qualifying ones, and by
    /// how much (none when nothing qualifies).
    pub confidence: Option<Confidence>,
    /// Where the chosen configuration is worse than the baseline (else the runner-up) beyond
    /// noise, per scenario (none when nothing is chosen or there is nothing to compare with).
    pub regressions: Option<Regressions>,
    /// The stated confidence and indifference zone.
    pub rule: Rule,
}

/// How many configurations a recommendation ranked, in all and by standing.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every configuration ranked.
    pub configurations: usize,
    /// Those meeting every constraint with results on every scenario.
    pub eligible: usize,
    /// Those without results on some scenario.
    pub incomplete: usize,
    /// Those `replicates = "auto"` screened out before its last stage.
    pub screened: usize,
}

/// Which edge of its swept range a chosen value sits at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Edge {
    /// The lowest value swept.
    Lowest,
    /// The highest value swept.
    Highest,
}

/// A parameter of the chosen configuration whose value is the lowest or highest its sweep
/// entry tried: the range, not the data, may have decided.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundNote {
    /// The parameter.
    pub param: String,
    /// The chosen value, as written in labels.
    pub value: String,
    /// Which edge.
    pub edge: Edge,
    /// Every value its entry swept, in increasing order.
    pub swept: Vec<String>,
    /// A value one step beyond the edge that the preset accepts, to extend the range to.
    pub beyond: String,
}

impl BoundNote {
    /// One sentence: which value sits at which edge, and how to extend the range.
    pub fn sentence(&self) -> String {
        let (edge, side) = match self.edge {
            Edge::Lowest => ("lowest", "below"),
            Edge::Highest => ("highest", "above"),
        };
        format!(
            "{} = {} is the {edge} value swept ({}): the best may lie {side} it; extend the range to {} or further.",
            self.param,
            self.value,
            self.swept.join(", "),
            self.beyond
        )
    }
}

impl Recommendation {
    /// The chosen configuration: the first of the ranking when it is eligible.
    pub fn chosen(&self) -> Option<&Candidate> {
        self.ranking.first().filter(|c| c.eligible())
    }

    /// The next eligible configuration after the chosen one.
    pub fn runner_up(&self) -> Option<&Candidate> {
        self.chosen().and_then(|_| self.ranking.get(1)).filter(|c| c.eligible())
    }
}

/// How many of the best configurations a recommendation keeps in its ranking: the chosen one,
/// the runner-up and the review's alternatives to a baseline that is neither.
pub const KEPT: usize = super::review::ALTERNATIVES + 2;

/// What decides a recommendation beside the objective and the constraints.
#[derive(Clone, Copy)]
pub struct Rules<'a> {
    /// Says whether a value beyond a swept range is one the preset accepts (for the
    /// [`BoundNote`]s).
    pub validate: Validate<'a>,
    /// A configuration's resolved parameters (for the tie-break's distance to the baseline);
    /// `None`: its written overrides.
    pub params: Option<ParamsOf<'a>>,
    /// Confidence, indifference zone, baseline and whether the sweep was automatic.
    pub settings: Settings,
}

impl<'a> Rules<'a> {
    /// The default rules: no baseline, the default confidence and indifference zone, an
    /// exhaustive sweep, parameters as written.
    pub fn new(validate: Validate<'a>) -> Rules<'a> {
        Rules { validate, params: None, settings: Settings::default() }
    }
}

/// Ranks every configuration of `table` under `objective` and `constraints` (whose metrics
/// must be columns of the table) and selects among the qualifying ones under `rules`.
pub fn recommend(
    table: &ResultTable,
    objective: &Objective,
    constraints: &[Constraint],
    rules: &Rules,
) -> Result<Recommendation> {
    let summary = table.summarize(&objective.bind(&table.metrics)?)?;
    recommend_from(table, &summary, objective, constraints, rules)
}

/// [`recommend`] on the table's summary under `objective`, computed already (a sweep holds one
/// summary, not two). The ranking keeps only what the outputs show ([`Recommendation::ranking`]),
/// with the chosen configuration first and the baseline among it.
pub fn recommend_from(
    table: &ResultTable,
    summary: &Summary,
    objective: &Objective,
    constraints: &[Constraint],
    rules: &Rules,
) -> Result<Recommendation> {
    let columns: Vec<usize> = constraints
        .iter()
        .map(|c| {
            table.column(c.metric.name()).ok_or_else(|| {
                Error::invalid(format!("constraint `{}`: the results have no column `{}`", c.text, c.metric))
            })
        })
        .collect::<Result<_, _>>()?;
    let bound = objective.bind(&table.metrics)?;
    let looked = Looked { table, summary, objective, bound: &bound, constraints, columns: &columns };
    // Under `replicates = "auto"`, the configurations in the running are those run to the most
    // replicates (every stage runs all of its configurations on every scenario).
    let run_to = match rules.settings.auto {
        Some(_) => (0..table.n_configs()).map(|c| table.group(0, c).len()).max().unwrap_or(0),
        None => 0,
    };
    let mut kept = Kept::default();
    let mut eliminated = vec![0; constraints.len()];
    let mut totals = Totals::new(table.replicates() as usize);
    for c in 0..table.n_configs() {
        let (mut cand, costs) = looked.candidate(c);
        cand.screened = cand.replicates < run_to;
        for (k, n) in eliminated.iter_mut().enumerate() {
            *n += usize::from(cand.violations.iter().any(|v| v.constraint == k));
        }
        if cand.eligible() {
            totals.push(cand.config.id, cand.total_cost, &costs);
        }
        kept.offer(cand, rules.settings.baseline);
    }
    let (mut ranking, counts) = kept.finish();
    let confidence = match select(&looked, &totals, rules) {
        Some((pick, tie_break, subset)) => {
            // The pick first: the tie-break may choose one the ranking did not keep.
            let at = match ranking.iter().position(|c| c.config.id == pick) {
                Some(at) => at,
                None => {
                    let index = table.index_of(pick).unwrap_or(0);
                    ranking.push(looked.candidate(index).0);
                    ranking.len() - 1
                }
            };
            let chosen = ranking.remove(at);
            ranking.insert(0, chosen);
            Some(statement(&looked, &totals, rules, &ranking, &subset, tie_break))
        }
        None => None,
    };
    // Labels are made for the candidates kept only.
    for cand in &mut ranking {
        if let Some(i) = table.index_of(cand.config.id) {
            cand.label = table.config(i).label;
        }
    }
    let confidence = confidence.map(|mut c| {
        label_statement(&mut c, table);
        c
    });
    let mut binding: Vec<Binding> = eliminated
        .into_iter()
        .enumerate()
        .map(|(constraint, eliminated)| Binding { constraint, eliminated })
        .collect();
    binding.sort_by(|a, b| b.eliminated.cmp(&a.eliminated).then(a.constraint.cmp(&b.constraint)));
    let bounds = match ranking.first().filter(|c| c.eligible()) {
        Some(chosen) => bound_notes(&chosen.config, table.configurations(), rules.validate),
        None => Vec::new(),
    };
    let regressions = hidden_regressions(table, &ranking, &rules.settings);
    Ok(Recommendation {
        objective: objective.clone(),
        constraints: constraints.to_vec(),
        scenarios: table.scenarios.clone(),
        ranking,
        counts,
        binding,
        bounds,
        confidence,
        regressions,
        rule: rules.settings.rule,
    })
}

/// The chosen configuration's regressions against the baseline (when it is not the baseline
/// itself), else against the runner-up.
fn hidden_regressions(
    table: &ResultTable,
    ranking: &[Candidate],
    settings: &Settings,
) -> Option<Regressions> {
    let chosen = ranking.first().filter(|c| c.eligible())?;
    let (against, reference) = match settings.baseline.filter(|b| *b != chosen.config.id) {
        Some(b) => ("baseline", ranking.iter().find(|c| c.config.id == b)?),
        None => ("runner-up", ranking.get(1).filter(|c| c.eligible())?),
    };
    let (b, a) = (table.index_of(chosen.config.id)?, table.index_of(reference.config.id)?);
    let (items, replicates) = regressions(table, b, a, settings.rule.confidence);
    Some(Regressions {
        against: against.to_string(),
        label: reference.label.clone(),
        config_id: reference.config.id,
        confidence: settings.rule.confidence,
        replicates,
        items,
    })
}

/// What every configuration is looked at with.
struct Looked<'a> {
    table: &'a ResultTable,
    summary: &'a Summary,
    objective: &'a Objective,
    bound: &'a BoundObjective,
    constraints: &'a [Constraint],
    columns: &'a [usize],
}

/// The selection among the qualifying configurations (`totals`): the pick (an id), the
/// tie-break that chose it and the subset; `None` when nothing qualifies.
fn select(looked: &Looked, totals: &Totals, rules: &Rules) -> Option<(usize, TieBreak, Subset)> {
    let share = rules.settings.auto.map_or(1.0, super::auto::selection_share);
    let subset = subset(totals, rules.settings.rule.alpha() * share, rules.settings.rule.indifference)?;
    let table = looked.table;
    let best = totals.id(subset.best);
    if subset.members.len() == 1 {
        return Some((best, TieBreak::None, subset));
    }
    let config = |id: usize| table.configuration(table.index_of(id).unwrap_or(0));
    let written = |c: &Configuration| -> Vec<(String, String)> {
        c.overrides.iter().map(|(k, v)| (k.clone(), plain(v))).collect()
    };
    let params = |c: &Configuration| -> Vec<(String, String)> {
        let resolved = rules.params.map(|p| p(&ConfigInfo::new(c.clone()))).unwrap_or_default();
        if resolved.is_empty() { written(c) } else { resolved }
    };
    let mean_order = |i: usize| (totals.mean(i), totals.id(i));
    match rules.settings.baseline.filter(|b| table.index_of(*b).is_some()) {
        Some(b) => {
            let base = config(b);
            let base_params = params(&base);
            let distance = |i: usize| {
                let c = config(totals.id(i));
                let mine = params(&c);
                let changed = mine.iter().filter(|kv| !base_params.contains(kv)).count()
                    + base_params.iter().filter(|(k, _)| !mine.iter().any(|(m, _)| m == k)).count();
                (c.preset != base.preset, changed)
            };
            let pick = *subset.members.iter().min_by(|&&a, &&b| {
                distance(a)
                    .cmp(&distance(b))
                    .then(mean_order(a).0.total_cmp(&mean_order(b).0))
                    .then(mean_order(a).1.cmp(&mean_order(b).1))
            })?;
            let (other, changed) = distance(pick);
            let label = table.config(table.index_of(b).unwrap_or(0)).label;
            Some((totals.id(pick), TieBreak::Baseline { label, same_preset: !other, changed }, subset))
        }
        None => {
            let size = |i: usize| config(totals.id(i)).overrides.len();
            let pick = *subset.members.iter().min_by(|&&a, &&b| {
                size(a)
                    .cmp(&size(b))
                    .then(mean_order(a).0.total_cmp(&mean_order(b).0))
                    .then(mean_order(a).1.cmp(&mean_order(b).1))
            })?;
            Some((totals.id(pick), TieBreak::Simplest { parameters: size(pick) }, subset))
        }
    }
}

/// The selection's statement for the chosen configuration (`ranking[0]`): separated or not,
/// the configurations that cannot be told apart, the tie-break, and the paired gaps of the
/// runner-up and the baseline from it. Labels are filled in by [`label_statement`].
fn statement(
    looked: &Looked,
    totals: &Totals,
    rules: &Rules,
    ranking: &[Candidate],
    subset: &Subset,
    tie_break: TieBreak,
) -> Confidence {
    let table = looked.table;
    let position = |id: usize| (0..totals.len()).find(|&i| totals.id(i) == id);
    let chosen = &ranking[0];
    let costs_of = |id: usize| match position(id) {
        Some(i) => totals.costs(i),
        None => looked.replicate_totals(table.index_of(id).unwrap_or(0)),
    };
    let mine = costs_of(chosen.config.id);
    let share = rules.settings.auto.map_or(1.0, super::auto::selection_share);
    let gap_rule = Rule { confidence: 1.0 - rules.settings.rule.alpha() * share, ..rules.settings.rule };
    let versus_of = |role: &str, cand: &Candidate| Versus {
        role: role.to_string(),
        label: String::new(),
        config_id: cand.config.id,
        total_cost: cand.total_cost,
        gap: {
            let mut g = gap(&mine, &costs_of(cand.config.id), &gap_rule, subset.comparisons);
            // The interval is stated at the confidence asked for; the bound at the share used.
            g.half = super::stats::Interval::paired(
                &mine,
                &costs_of(cand.config.id),
                rules.settings.rule.confidence,
            )
            .half;
            g
        },
    };
    let mut versus = Vec::new();
    if let Some(second) = ranking.get(1).filter(|c| c.eligible()) {
        versus.push(versus_of("runner-up", second));
    }
    if let Some(b) = rules.settings.baseline.filter(|b| *b != chosen.config.id)
        && let Some(cand) = ranking.iter().find(|c| c.config.id == b)
    {
        versus.push(versus_of("baseline", cand));
    }
    let listed = subset
        .members
        .iter()
        .take(TIED_LISTED)
        .map(|&i| Tied { label: String::new(), config_id: totals.id(i), total_cost: totals.mean(i) })
        .collect();
    Confidence {
        separated: subset.members.len() == 1,
        confidence: rules.settings.rule.confidence,
        indifference: rules.settings.rule.indifference,
        replicates: subset.replicates,
        comparisons: subset.comparisons,
        alpha_share: share,
        tied: subset.members.len(),
        listed: if subset.members.len() > 1 { listed } else { Vec::new() },
        tie_break: tie_break.sentence(),
        versus,
    }
}

/// Fills in the labels of a statement's configurations, and names the pick in its tie-break.
fn label_statement(c: &mut Confidence, table: &ResultTable) {
    let label = |id: usize| table.index_of(id).map(|i| table.config(i).label).unwrap_or_default();
    for t in &mut c.listed {
        t.label = label(t.config_id);
    }
    for v in &mut c.versus {
        v.label = label(v.config_id);
    }
}

/// Ranking order: eligible first, then complete, then fewest broken constraints, then total
/// cost, then id.
fn rank_order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    let key = |c: &Candidate| (!c.eligible(), !c.complete, c.broken_constraints());
    key(a).cmp(&key(b)).then(a.total_cost.total_cmp(&b.total_cost)).then(a.config.id.cmp(&b.config.id))
}

/// Cheapest first among complete configurations, ties to the lower id.
fn cost_order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    a.total_cost.total_cmp(&b.total_cost).then(a.config.id.cmp(&b.config.id))
}

/// The candidates a ranking keeps as configurations are offered one at a time: the first
/// [`KEPT`] in ranking order, each preset's first, the cheapest complete one and the one asked
/// for; memory bounded by the number of presets, not of configurations.
#[derive(Default)]
struct Kept {
    top: Vec<Candidate>,
    families: Vec<Candidate>,
    cheapest: Option<Candidate>,
    asked: Option<Candidate>,
    counts: Counts,
}

impl Kept {
    fn offer(&mut self, cand: Candidate, keep: Option<usize>) {
        self.counts.configurations += 1;
        self.counts.eligible += usize::from(cand.eligible());
        self.counts.incomplete += usize::from(!cand.complete);
        self.counts.screened += usize::from(cand.screened);
        if keep == Some(cand.config.id) {
            self.asked = Some(cand.clone());
        }
        if cand.complete && self.cheapest.as_ref().is_none_or(|c| cost_order(&cand, c).is_lt()) {
            self.cheapest = Some(cand.clone());
        }
        match self.families.iter_mut().find(|f| f.config.preset == cand.config.preset) {
            Some(f) if rank_order(&cand, f).is_lt() => *f = cand.clone(),
            Some(_) => {}
            None => self.families.push(cand.clone()),
        }
        let at = self.top.partition_point(|c| rank_order(c, &cand).is_lt());
        if at < KEPT {
            self.top.insert(at, cand);
            self.top.truncate(KEPT);
        }
    }

    /// Everything kept, in ranking order, each configuration once.
    fn finish(self) -> (Vec<Candidate>, Counts) {
        let mut all = self.top;
        all.extend(self.families.into_iter().chain(self.cheapest).chain(self.asked));
        all.sort_by(rank_order);
        all.dedup_by(|a, b| a.config.id == b.config.id);
        (all, self.counts)
    }
}

/// A swept value as a number on its own scale: integers and floats as they are, durations in
/// microseconds; `None` for values without an order (names, booleans, lists).
fn magnitude(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        toml::Value::String(s) => Dur::parse(s).ok().map(|d| d.micros() as f64),
        _ => None,
    }
}

/// The value `x` in the kind of `like` (an integer, a float to 6 significant digits, a
/// duration to 3), `None` when it cannot be one (a negative duration).
fn value_like(like: &toml::Value, x: f64) -> Option<toml::Value> {
    match like {
        toml::Value::Integer(_) => Some(toml::Value::Integer(x.round() as i64)),
        toml::Value::Float(_) => Some(toml::Value::Float(round_significant(x, 6))),
        _ => (x >= 1.0)
            .then(|| toml::Value::String(Dur::from_micros(round_significant(x, 3) as u64).to_string())),
    }
}

/// The chosen configuration's parameters that sit at an edge of the values its sweep entry
/// (the configurations of the same preset with the same parameter names) tried, when the entry
/// tried at least two ordered values and `validate` accepts a value one step beyond: the step
/// of the last two values, as a ratio when the values are spaced more evenly by ratio (a log
/// range), else as a difference (halving instead of reaching 0 below a positive range).
pub fn bound_notes<C: std::ops::Deref<Target = Configuration>>(
    chosen: &Configuration,
    configs: impl Iterator<Item = C>,
    validate: Validate,
) -> Vec<BoundNote> {
    let names: Vec<&String> = chosen.overrides.iter().map(|(k, _)| k).collect();
    // Per parameter, the distinct ordered values of the entry's configurations, in the order
    // met (a value without an order starts the list again), one configuration at a time.
    let mut swept_of: Vec<Vec<(f64, toml::Value)>> = vec![Vec::new(); names.len()];
    for c in configs {
        if c.preset != chosen.preset || !c.overrides.iter().map(|(k, _)| k).eq(names.iter().copied()) {
            continue;
        }
        for (swept, (_, v)) in swept_of.iter_mut().zip(&c.overrides) {
            match magnitude(v) {
                Some(m) if !swept.iter().any(|(n, _)| *n == m) => swept.push((m, v.clone())),
                Some(_) => {}
                None => swept.clear(),
            }
        }
    }
    let mut notes = Vec::new();
    for (k, (name, value)) in chosen.overrides.iter().enumerate() {
        let Some(x) = magnitude(value) else { continue };
        let swept = &mut swept_of[k];
        swept.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = swept.len();
        if n < 2 {
            continue;
        }
        let edge = if x == swept[0].0 {
            Edge::Lowest
        } else if x == swept[n - 1].0 {
            Edge::Highest
        } else {
            continue;
        };
        let spread = |xs: &[f64]| {
            let (lo, hi) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            hi / lo
        };
        let ms: Vec<f64> = swept.iter().map(|(m, _)| *m).collect();
        let diffs: Vec<f64> = ms.windows(2).map(|w| w[1] - w[0]).collect();
        let ratios: Vec<f64> = ms.windows(2).map(|w| w[1] / w[0]).collect();
        let by_ratio = n > 2 && ms[0] > 0.0 && spread(&ratios) < spread(&diffs);
        let beyond = match (edge, by_ratio) {
            (Edge::Highest, true) => x * ratios[n - 2],
            (Edge::Highest, false) => x + diffs[n - 2],
            (Edge::Lowest, true) => x / ratios[0],
            // Below a positive range, never down to 0 (for many parameters 0 turns a rule off).
            (Edge::Lowest, false) if x > 0.0 && x - diffs[0] <= 0.0 => x / 2.0,
            (Edge::Lowest, false) => x - diffs[0],
        };
        let Some(beyond) = value_like(value, beyond).filter(|b| magnitude(b) != Some(x)) else { continue };
        let mut overrides = chosen.overrides.clone();
        overrides[k].1 = beyond.clone();
        if validate(&chosen.preset, &overrides).is_err() {
            continue;
        }
        notes.push(BoundNote {
            param: name.clone(),
            value: plain(value),
            edge,
            swept: swept.iter().map(|(_, v)| plain(v)).collect(),
            beyond: plain(&beyond),
        });
    }
    notes
}

/// One configuration's runs judged: what the ranking and the stages of `replicates = "auto"`
/// both read of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// Sum over scenarios of the mean cost over replicates (the summary's arithmetic).
    pub total_cost: f64,
    /// Its total over the scenarios in each replicate slot (`None` where a scenario lacks it).
    pub totals: Vec<Option<f64>>,
    /// True when it has runs on every scenario.
    pub complete: bool,
    /// Replicates it ran (the fewest over the scenarios).
    pub replicates: usize,
    /// The constraints it breaks, per scenario.
    pub violations: Vec<Violation>,
    /// Scenarios on which it missed an incident in some replicate.
    pub missed: Vec<Missed>,
}

/// Configuration `c`'s [`Standing`] in `table` under `bound` and `constraints` (whose metrics
/// are the table's `columns`).
pub fn standing(
    table: &ResultTable,
    bound: &BoundObjective,
    constraints: &[Constraint],
    columns: &[usize],
    c: usize,
) -> Standing {
    let mut st = Standing {
        total_cost: 0.0,
        totals: vec![Some(0.0); table.replicates() as usize],
        complete: true,
        replicates: usize::MAX,
        violations: Vec::new(),
        missed: Vec::new(),
    };
    let missed_col = table.column("missed_incidents");
    for s in 0..table.scenarios.len() {
        let runs = table.group(s, c);
        st.replicates = st.replicates.min(runs.len());
        let mut present = vec![false; st.totals.len()];
        let costs: Vec<Option<f64>> = runs.iter().map(|r| Some(bound.cost(&r.values))).collect();
        for (r, cost) in runs.iter().zip(&costs) {
            let slot = r.replicate as usize;
            present[slot] = true;
            if let (Some(t), Some(cost)) = (&mut st.totals[slot], cost) {
                *t += cost;
            }
        }
        for (t, here) in st.totals.iter_mut().zip(present) {
            if !here {
                *t = None;
            }
        }
        if runs.is_empty() {
            st.complete = false;
            continue;
        }
        st.total_cost += describe(costs).mean.unwrap_or(0.0);
        let values = |col: usize| -> Vec<Option<f64>> { runs.iter().map(|r| r.values.get(col)).collect() };
        for (k, (constraint, &col)) in constraints.iter().zip(columns).enumerate() {
            let judged = constraint.judge(&values(col));
            if !judged.holds {
                st.violations.push(Violation {
                    constraint: k,
                    scenario: s,
                    value: judged.shown.unwrap_or(f64::NAN),
                    breaking: (judged.breaking, judged.replicates),
                });
            }
        }
        if let Some(col) = missed_col {
            let missing = values(col).iter().filter(|v| v.is_some_and(|m| m > 0.0)).count();
            if missing > 0 {
                st.missed.push(Missed { scenario: s, replicates: missing, of: runs.len() });
            }
        }
    }
    if st.replicates == usize::MAX {
        st.replicates = 0;
    }
    st
}

impl Looked<'_> {
    /// Configuration `c`'s standing, its label left empty (made for the kept ones only), and
    /// its total cost in each replicate.
    fn candidate(&self, c: usize) -> (Candidate, Vec<Option<f64>>) {
        let table = self.table;
        let st = standing(table, self.bound, self.constraints, self.columns, c);
        let mut contributions = vec![0.0; self.objective.weights.len()];
        let mut scenario_costs = Vec::with_capacity(table.scenarios.len());
        for s in 0..table.scenarios.len() {
            let Some(cell) = self.summary.get(s, c) else {
                scenario_costs.push(None);
                continue;
            };
            scenario_costs.push(Some(cell.cost.mean.unwrap_or(0.0)));
            for (sum, x) in contributions.iter_mut().zip(&cell.contributions) {
                *sum += x;
            }
        }
        let cand = Candidate {
            config: table.configuration(c),
            label: String::new(),
            complete: st.complete,
            total_cost: st.total_cost,
            scenario_costs,
            contributions,
            violations: st.violations,
            missed: st.missed,
            replicates: st.replicates,
            screened: false,
        };
        (cand, st.totals)
    }

    /// Configuration `c`'s total cost in each replicate.
    fn replicate_totals(&self, c: usize) -> Vec<Option<f64>> {
        standing(self.table, self.bound, self.constraints, self.columns, c).totals
    }
}

/// Per scenario, the `k` configurations (table indices) with the lowest mean cost among those
/// meeting every constraint on that scenario, with that cost; ties go to the lower id.
pub fn best_per_scenario(
    table: &ResultTable,
    summary: &Summary,
    constraints: &[Constraint],
    k: usize,
) -> Vec<Vec<(usize, f64)>> {
    (0..table.scenarios.len())
        .map(|s| {
            // The best `k` so far, by cost then position (positions follow ids).
            let mut ok: Vec<(usize, f64)> = Vec::with_capacity(k + 1);
            for c in 0..table.n_configs() {
                let Some(cell) = summary.get(s, c) else { continue };
                if !meets_constraints(table, &table.group(s, c), constraints) {
                    continue;
                }
                let cost = cell.cost.mean.unwrap_or(0.0);
                let at = ok.partition_point(|&(d, x)| x.total_cmp(&cost).then(d.cmp(&c)).is_lt());
                if at < k {
                    ok.insert(at, (c, cost));
                    ok.truncate(k);
                }
            }
            ok
        })
        .collect()
}

/// True when the runs of one (scenario, configuration) meet every constraint on the
/// replicates its scope names (a metric with no value breaks none).
pub fn meets_constraints(table: &ResultTable, runs: &[RunRow], constraints: &[Constraint]) -> bool {
    constraints.iter().all(|con| {
        table.column(con.metric.name()).is_none_or(|m| {
            let values: Vec<Option<f64>> = runs.iter().map(|r| r.values.get(m)).collect();
            con.judge(&values).holds
        })
    })
}

/// The unit a metric's values carry in prose: ` s`, ` ms`, or nothing for counts and ratios.
pub fn unit_suffix(metric: crate::metrics::Metric) -> &'static str {
    match metric.unit() {
        crate::metrics::Unit::Seconds => " s",
        crate::metrics::Unit::Millis => " ms",
        crate::metrics::Unit::Plain => "",
    }
}

/// A number for prose: at most 4 significant digits, no trailing zeros.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".into();
    }
    let r = super::grid::round_significant(x, 4);
    if r.abs() >= 1e15 { format!("{r:e}") } else { format!("{r}") }
}

impl Recommendation {
    /// The recommendation in plain words, ending with a `[policy]` snippet when one was chosen.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let n = self.counts.configurations;
        let Some(best) = self.chosen() else {
            self.render_none(&mut out);
            return out;
        };
        let _ = writeln!(out, "Recommended: {} (configuration {})", best.label, best.config.id);
        if let Some(r) = &self.regressions {
            out.push_str(&r.render("  "));
        }
        if let Some(c) = &self.confidence {
            out.push_str(&c.render(&best.label));
        }
        let meets = match self.constraints.as_slice() {
            [] => "no constraints were given".to_string(),
            [c] => format!("meets the constraint `{}` ({}) on every scenario", c.text, c.scope_words()),
            all => format!("meets all {} constraints on every scenario", all.len()),
        };
        let _ = writeln!(
            out,
            "  total cost {} = sum over {} scenario(s) of the mean cost over replicates; {meets}.",
            num(best.total_cost),
            self.scenarios.len(),
        );
        if let Some(missed) = missed_text(&best.missed, &self.scenarios) {
            let _ = writeln!(out, "  It misses incidents on {missed}.");
        }
        let eligible = self.counts.eligible;
        match self.runner_up() {
            Some(second) => {
                let gap = second.total_cost - best.total_cost;
                let rel = if best.total_cost.abs() > 0.0 {
                    format!(", {}%", num(100.0 * gap.abs() / best.total_cost.abs()))
                } else {
                    String::new()
                };
                let more = if gap >= 0.0 {
                    format!("{} more{rel}", num(gap))
                } else {
                    format!(
                        "{} less{rel}; the selection cannot tell the two apart, and the tie-break chose the \
                         recommendation",
                        num(-gap)
                    )
                };
                let _ = writeln!(
                    out,
                    "Runner-up: {} (configuration {}), cost {}: {more}.",
                    second.label,
                    second.config.id,
                    num(second.total_cost),
                );
                if let Some(missed) = missed_text(&second.missed, &self.scenarios) {
                    let _ = writeln!(out, "  It misses incidents on {missed}.");
                }
                let _ = writeln!(
                    out,
                    "What decided it (chosen vs runner-up: each metric summed over the {} scenario(s) of its mean \
                     over replicates, in its unit, × its weight = its part of the total cost):",
                    self.scenarios.len()
                );
                let mut terms: Vec<(usize, f64)> = best
                    .contributions
                    .iter()
                    .zip(&second.contributions)
                    .map(|(a, b)| b - a)
                    .enumerate()
                    .filter(|(_, d)| *d != 0.0)
                    .collect();
                terms.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
                if terms.is_empty() {
                    let _ = writeln!(
                        out,
                        "  the two cost the same on every weighted metric; the earlier configuration wins the tie."
                    );
                }
                for (t, d) in terms.iter().take(4) {
                    let (metric, weight) = self.objective.weights[*t];
                    let natural = |c: f64| format!("{}{}", num(c / weight), unit_suffix(metric));
                    let _ = writeln!(
                        out,
                        "  {metric}: {} vs {} × weight {} = cost {} vs {} ({} {})",
                        natural(best.contributions[*t]),
                        natural(second.contributions[*t]),
                        num(weight),
                        num(best.contributions[*t]),
                        num(second.contributions[*t]),
                        if *d > 0.0 { "better by" } else { "worse by" },
                        num(d.abs())
                    );
                }
            }
            None => {
                let _ = writeln!(out, "It is the only configuration of {n} that meets the constraints.");
            }
        }
        if eligible < n {
            let _ =
                writeln!(out, "{} of {n} configurations were ruled out by the constraints.", n - eligible);
        }
        if self.scenarios.len() > 1 {
            let mut hard: Vec<(usize, f64)> =
                best.scenario_costs.iter().enumerate().filter_map(|(s, c)| c.map(|c| (s, c))).collect();
            hard.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let parts: Vec<String> = hard
                .iter()
                .take(3)
                .map(|(s, c)| {
                    let share = if best.total_cost != 0.0 {
                        format!(", {}% of the total", num(100.0 * c / best.total_cost))
                    } else {
                        String::new()
                    };
                    format!("{} (cost {}{share})", self.scenarios[*s], num(*c))
                })
                .collect();
            let _ = writeln!(out, "Hardest scenarios for it: {}.", parts.join("; "));
        }
        for note in &self.bounds {
            let _ = writeln!(out, "Bound: {}", note.sentence());
        }
        let _ = writeln!(out, "\nPaste into a scenario file:\n{}", best.config.policy_snippet());
        out
    }

    fn render_none(&self, out: &mut String) {
        let (n, incomplete) = (self.counts.configurations, self.counts.incomplete);
        let _ = writeln!(out, "No configuration meets every constraint on every scenario ({n} tried).");
        if incomplete > 0 {
            let _ = writeln!(
                out,
                "{incomplete} configuration(s) lack results on some scenario and were not eligible."
            );
        }
        if let Some(top) = self.binding.first().filter(|b| b.eliminated > 0) {
            let _ = writeln!(
                out,
                "Binding constraint: `{}` rules out {} of {n} configurations.",
                self.constraints[top.constraint].text, top.eliminated
            );
            for b in self.binding.iter().skip(1).filter(|b| b.eliminated > 0) {
                let _ = writeln!(
                    out,
                    "  also `{}` rules out {}.",
                    self.constraints[b.constraint].text, b.eliminated
                );
            }
        }
        if let Some(cheapest) = self.ranking.iter().filter(|c| c.complete).min_by(|a, b| cost_order(a, b)) {
            let _ = writeln!(
                out,
                "The lowest-cost configuration, {} (cost {}), breaks:",
                cheapest.label,
                num(cheapest.total_cost)
            );
            for v in cheapest.violations.iter().take(6) {
                let _ = writeln!(out, "  {}", v.text(&self.constraints, &self.scenarios));
            }
        }
        if let Some(closest) = self.ranking.first().filter(|c| c.complete) {
            let broken: Vec<&str> = self
                .constraints
                .iter()
                .enumerate()
                .filter(|(k, _)| closest.violations.iter().any(|v| v.constraint == *k))
                .map(|(_, c)| c.text.as_str())
                .collect();
            let _ = writeln!(
                out,
                "Closest: {} breaks {} constraint(s) ({}).",
                closest.label,
                broken.len(),
                broken.join(", ")
            );
        }
        let _ = writeln!(out, "Relax the binding constraint or widen the grid.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;
    use crate::sweep::table::tests::{cfg, run};
    use crate::sweep::table::{ConfigInfo, ResultTable};

    const METRICS: [&str; 3] = ["false_opens", "missed_incidents", "detection_delay_mean_s"];

    /// Accepts every configuration.
    fn any(_: &str, _: &[(String, toml::Value)]) -> crate::Result<()> {
        Ok(())
    }

    /// The default rules with configuration `id` as the baseline.
    fn with_baseline(id: usize) -> Rules<'static> {
        Rules { settings: Settings { baseline: Some(id), ..Settings::default() }, ..Rules::new(&any) }
    }

    /// Two scenarios, four consecutive-count thresholds, two replicates each.
    /// (false_opens, missed_incidents, detection_delay_mean_s) per replicate:
    /// - t=2: many false opens, fast detection          cost 10·fo + delay
    /// - t=4: few false opens                           
    /// - t=8: misses an incident on "outage"
    /// - t=6: like t=4 but slower
    fn table() -> ResultTable {
        let configs: Vec<ConfigInfo> = [2, 4, 8, 6]
            .iter()
            .enumerate()
            .map(|(i, t)| cfg(i, "consecutive", "failure_threshold", *t))
            .collect();
        let v = |fo: f64, mi: f64, dd: Option<f64>| vec![Some(fo), Some(mi), dd];
        let mut runs = Vec::new();
        let data: [[Vec<Option<f64>>; 2]; 8] = [
            // config 0, scenario 0 (outage)
            [v(3.0, 0.0, Some(5.0)), v(5.0, 0.0, Some(7.0))],
            // config 0, scenario 1 (brownout)
            [v(2.0, 0.0, Some(10.0)), v(2.0, 0.0, Some(10.0))],
            // config 1
            [v(1.0, 0.0, Some(20.0)), v(0.0, 0.0, Some(22.0))],
            [v(0.0, 0.0, Some(30.0)), v(0.0, 0.0, Some(34.0))],
            // config 2
            [v(0.0, 1.0, None), v(0.0, 0.0, Some(40.0))],
            [v(0.0, 0.0, Some(50.0)), v(0.0, 0.0, Some(50.0))],
            // config 3
            [v(0.0, 0.0, Some(30.0)), v(1.0, 0.0, Some(30.0))],
            [v(0.0, 0.0, Some(40.0)), v(0.0, 0.0, Some(40.0))],
        ];
        for (k, reps) in data.iter().enumerate() {
            let (config, scenario) = (k / 2, k % 2);
            for (r, vals) in reps.iter().enumerate() {
                runs.push(run(scenario, config, r as u32, vals));
            }
        }
        ResultTable::new(
            vec!["outage".into(), "brownout".into()],
            configs,
            METRICS.iter().map(|m| m.to_string()).collect(),
            runs,
        )
        .unwrap()
    }

    fn objective() -> Objective {
        Objective::new([
            (Metric::FalseOpens, 10.0),
            (Metric::MissedIncidents, 100.0),
            (Metric::DetectionDelayMeanS, 1.0),
        ])
    }

    #[test]
    fn picks_the_cheapest_configuration_meeting_every_constraint() {
        let t = table();
        let constraints = vec![Constraint::parse("missed_incidents == 0", &METRICS).unwrap()];
        let r = recommend(&t, &objective(), &constraints, &Rules::new(&any)).unwrap();
        // Costs: t=2: outage 40+6=46, brownout 20+10=30 → 76
        //        t=4: outage 5+21=26, brownout 0+32=32 → 58
        //        t=8: outage 50 (missed) + 20 (delay 40 over 2 runs, empty counts 0) = 70, brownout 50 → 120, ineligible
        //        t=6: outage 5+30=35, brownout 40 → 75
        let chosen = r.chosen().unwrap();
        assert_eq!(chosen.label, "consecutive[failure_threshold=4]");
        assert_eq!(chosen.total_cost, 58.0);
        assert_eq!(chosen.scenario_costs, vec![Some(26.0), Some(32.0)]);
        assert_eq!(chosen.contributions, vec![5.0, 0.0, 53.0]);
        let second = r.runner_up().unwrap();
        assert_eq!((second.label.as_str(), second.total_cost), ("consecutive[failure_threshold=6]", 75.0));
        let order: Vec<usize> = r.ranking.iter().map(|c| c.config.id).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
        // The ranking shares each configuration with the table (no copy per configuration).
        assert!(r.ranking.iter().all(|c| c.config == t.config(c.config.id).config));
        let last = &r.ranking[3];
        assert_eq!(
            last.violations,
            vec![Violation { constraint: 0, scenario: 0, value: 1.0, breaking: (1, 2) }]
        );
        assert_eq!(r.binding, vec![Binding { constraint: 0, eliminated: 1 }]);

        let text = r.render();
        assert!(
            text.starts_with("Recommended: consecutive[failure_threshold=4] (configuration 1)\n"),
            "{text}"
        );
        assert!(text.contains("total cost 58 = sum over 2 scenario(s)"), "{text}");
        assert!(
            text.contains(
                "Runner-up: consecutive[failure_threshold=6] (configuration 3), cost 75: 17 more, 29.31%."
            ),
            "{text}"
        );
        assert!(
            text.contains("  detection_delay_mean_s: 53 s vs 70 s × weight 1 = cost 53 vs 70 (better by 17)"),
            "{text}"
        );
        assert!(text.contains("1 of 4 configurations were ruled out"), "{text}");
        assert!(text.contains("Hardest scenarios for it: brownout (cost 32, 55.17% of the total); outage (cost 26, 44.83% of the total)."), "{text}");
        assert!(text.ends_with("[policy]\npreset = \"consecutive\"\nfailure_threshold = 4\n\n"), "{text}");
    }

    #[test]
    fn a_metric_with_no_value_breaks_no_constraint_but_a_tighter_bound_does() {
        let t = table();
        let constraints = vec![
            Constraint::parse("false_opens <= 0.25", &METRICS).unwrap(),
            Constraint::parse("detection_delay_mean_s <= 45", &METRICS).unwrap(),
        ];
        let r = recommend(&t, &objective(), &constraints, &Rules::new(&any)).unwrap();
        // t=2 breaks false_opens on both; t=4 and t=6 (one false open in one replicate on outage)
        // break it; t=8 breaks the delay bound on brownout (50): nothing is eligible.
        assert!(r.chosen().is_none());
        assert_eq!(
            r.binding,
            vec![Binding { constraint: 0, eliminated: 3 }, Binding { constraint: 1, eliminated: 1 }]
        );
        let text = r.render();
        assert!(
            text.starts_with("No configuration meets every constraint on every scenario (4 tried).\n"),
            "{text}"
        );
        assert!(
            text.contains("Binding constraint: `false_opens <= 0.25` rules out 3 of 4 configurations."),
            "{text}"
        );
        assert!(text.contains("  also `detection_delay_mean_s <= 45` rules out 1."), "{text}");
        assert!(text.contains("The lowest-cost configuration, consecutive[failure_threshold=4] (cost 58), breaks:\n  `false_opens <= 0.25` on outage (false_opens = 1 in 1 of 2 replicates)"), "{text}");
        assert!(
            text.contains(
                "Closest: consecutive[failure_threshold=4] breaks 1 constraint(s) (false_opens <= 0.25)."
            ),
            "{text}"
        );
        assert!(!text.contains("[policy]"), "{text}");
        let order: Vec<usize> = r.ranking.iter().map(|c| c.config.id).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn the_ranking_keeps_the_best_each_presets_first_the_cheapest_and_the_baseline_only() {
        // 40 configurations on one scenario; every fourth misses an incident (ineligible and the
        // cheapest); node-breaker (ids 30-39) costs 100 more than any consecutive one.
        let configs: Vec<ConfigInfo> = (0..40)
            .map(|i| {
                cfg(i, if i < 30 { "consecutive" } else { "node-breaker" }, "failure_threshold", i as i64)
            })
            .collect();
        let runs = (0..40)
            .map(|i| {
                let opens = ((i * 7) % 30) as f64 + if i < 30 { 1.0 } else { 101.0 };
                let missed = if i % 4 == 0 { 1.0 } else { 0.0 };
                run(0, i, 0, &[Some(opens - 100.0 * missed), Some(missed), None])
            })
            .collect();
        let metrics = METRICS.iter().map(|m| m.to_string()).collect();
        let t = ResultTable::new(vec!["outage".into()], configs, metrics, runs).unwrap();
        let objective = Objective::new([(Metric::FalseOpens, 1.0)]);
        let constraints = vec![Constraint::parse("missed_incidents == 0", &METRICS).unwrap()];
        let summary = t.summarize(&objective.bind(&t.metrics).unwrap()).unwrap();
        let r = recommend_from(&t, &summary, &objective, &constraints, &with_baseline(17)).unwrap();
        let columns = [1];
        let bound = objective.bind(&t.metrics).unwrap();
        let looked = Looked {
            table: &t,
            summary: &summary,
            objective: &objective,
            bound: &bound,
            constraints: &constraints,
            columns: &columns,
        };
        let mut all: Vec<Candidate> =
            (0..40).map(|c| Candidate { label: t.config(c).label, ..looked.candidate(c).0 }).collect();
        all.sort_by(rank_order);
        let ids = |cs: &[Candidate]| cs.iter().map(|c| c.config.id).collect::<Vec<_>>();
        let full = ids(&all);
        let kept = ids(&r.ranking);
        assert_eq!(kept[1..KEPT], full[..KEPT - 1]);
        // Kept in ranking order: node-breaker's first, the baseline 17, the cheapest (an
        // ineligible one: missed incidents make it cost less) and nothing else.
        let node = *full.iter().find(|&&id| id >= 30).unwrap();
        let cheapest = all.iter().min_by(|a, b| cost_order(a, b)).unwrap().config.id;
        assert_eq!(cheapest % 4, 0);
        let mut expected: Vec<usize> = full[..KEPT].to_vec();
        expected.extend([node, 17, cheapest]);
        expected.sort_by_key(|id| full.iter().position(|f| f == id));
        expected.dedup();
        // One replicate tells no two configurations apart: the tie-break keeps the baseline,
        // which goes first.
        expected.retain(|id| *id != 17);
        expected.insert(0, 17);
        assert_eq!(kept, expected);
        let c = r.confidence.as_ref().unwrap();
        assert_eq!((c.separated, c.tied, c.replicates, c.comparisons), (false, 30, 1, 29));
        assert_eq!(r.counts, Counts { configurations: 40, eligible: 30, incomplete: 0, screened: 0 });
        assert_eq!(r.binding, vec![Binding { constraint: 0, eliminated: 10 }]);
        let at = all.iter().position(|c| c.config.id == 17).unwrap();
        let baseline = all.remove(at);
        all.insert(0, baseline);
        let full_rec = Recommendation { ranking: all, ..r.clone() };
        assert_eq!(r.render(), full_rec.render());
        let none = vec![Constraint::parse("false_opens >= 1000", &METRICS).unwrap()];
        let r = recommend_from(&t, &summary, &objective, &none, &Rules::new(&any)).unwrap();
        assert!(r.render().contains(&format!("The lowest-cost configuration, {}", t.config(cheapest).label)));
    }

    #[test]
    fn best_per_scenario_respects_constraints_per_scenario() {
        let t = table();
        let summary = t.summarize(&objective().bind(&t.metrics).unwrap()).unwrap();
        let constraints = vec![Constraint::parse("missed_incidents == 0", &METRICS).unwrap()];
        let best = best_per_scenario(&t, &summary, &constraints, 2);
        // outage: t=4 26, t=6 35, t=2 46 (t=8 misses); brownout: t=2 30, t=4 32, t=6 40, t=8 50.
        assert_eq!(best, vec![vec![(1, 26.0), (3, 35.0)], vec![(0, 30.0), (1, 32.0)]]);
    }

    #[test]
    fn incomplete_configurations_are_not_eligible_and_ties_go_to_the_lower_id() {
        let configs = vec![
            cfg(0, "consecutive", "failure_threshold", 3),
            cfg(1, "consecutive", "failure_threshold", 5),
            cfg(2, "consecutive", "failure_threshold", 1),
        ];
        let runs = vec![
            run(0, 0, 0, &[Some(1.0)]),
            run(1, 0, 0, &[Some(1.0)]),
            run(0, 1, 0, &[Some(1.0)]),
            run(1, 1, 0, &[Some(1.0)]),
            run(0, 2, 0, &[Some(0.0)]),
        ];
        let t = ResultTable::new(vec!["a".into(), "b".into()], configs, vec!["false_opens".into()], runs)
            .unwrap();
        let r = recommend(&t, &Objective::new([(Metric::FalseOpens, 1.0)]), &[], &Rules::new(&any)).unwrap();
        assert_eq!(r.chosen().unwrap().config.id, 0);
        assert_eq!(r.runner_up().unwrap().config.id, 1);
        assert!(!r.ranking[2].complete);
        let text = r.render();
        assert!(text.contains("the two cost the same on every weighted metric"), "{text}");
        assert!(text.contains("  total cost 2 = sum over 2 scenario(s) of the mean cost over replicates; no constraints were given.\n"), "{text}");
        assert!(
            recommend(&t, &Objective::new([(Metric::Flaps, 1.0)]), &[], &Rules::new(&any))
                .unwrap_err()
                .to_string()
                .contains("flaps")
        );
    }

    #[test]
    fn a_chosen_value_at_the_edge_of_its_range_is_noted_with_a_step_beyond() {
        use toml::Value::{Integer as I, String as S};
        let grid = |preset: &str, a: &[i64], b: &[&str]| -> Vec<Configuration> {
            let mut out = Vec::new();
            for x in a {
                for y in b {
                    out.push(Configuration {
                        id: out.len(),
                        preset: preset.into(),
                        overrides: vec![
                            ("failure_threshold".into(), I(*x)),
                            ("open_duration".into(), S((*y).into())),
                        ],
                    });
                }
            }
            out
        };
        let mut configs = grid("consecutive", &[3, 5, 10], &["10s", "34s600ms", "2m"]);
        // Another entry of the same preset with other parameters is another range.
        configs.push(Configuration {
            id: 9,
            preset: "consecutive".into(),
            overrides: vec![("failure_threshold".into(), I(1))],
        });
        let positive = |_: &str, o: &[(String, toml::Value)]| -> crate::Result<()> {
            match o.iter().find(|(k, _)| k == "failure_threshold").and_then(|(_, v)| v.as_integer()) {
                Some(n) if n < 1 => Err(crate::Error::invalid("failure_threshold must be at least 1")),
                _ => Ok(()),
            }
        };
        // failure_threshold 3 of 3, 5, 10 (spaced more evenly by ratio: 3 / 2 = 1.5 → 2);
        // open_duration 2m of a log range (× 3.47 → 6m56s).
        let notes = bound_notes(&configs[2], configs.iter(), &positive);
        let sentences: Vec<String> = notes.iter().map(BoundNote::sentence).collect();
        assert_eq!(
            sentences,
            [
                "failure_threshold = 3 is the lowest value swept (3, 5, 10): the best may lie below it; extend the range to 2 or further.",
                "open_duration = 2m is the highest value swept (10s, 34s600ms, 2m): the best may lie above it; extend the range to 6m56s or further.",
            ]
        );
        // Inside the range: no note.
        assert!(bound_notes(&configs[4], configs.iter(), &positive).is_empty());
        // At the edge of what the preset accepts: no note (nothing to extend to).
        let low = grid("consecutive", &[1, 2, 3], &["10s"]);
        assert!(bound_notes(&low[0], low.iter(), &positive).is_empty());
        let notes = bound_notes(&low[2], low.iter(), &positive);
        assert_eq!((notes.len(), notes[0].edge, notes[0].beyond.as_str()), (1, Edge::Highest, "4"));
        // Below a positive range the step stops short of 0 (slow_call_rate = 0 turns the rule off).
        let rates: Vec<Configuration> = [0.3, 0.6]
            .iter()
            .enumerate()
            .map(|(id, r)| Configuration {
                id,
                preset: "windowed".into(),
                overrides: vec![("slow_call_rate".into(), toml::Value::Float(*r))],
            })
            .collect();
        let notes = bound_notes(&rates[0], rates.iter(), &positive);
        assert_eq!((notes[0].edge, notes[0].beyond.as_str()), (Edge::Lowest, "0.15"));
        // A single value swept decides nothing.
        assert!(bound_notes(&configs[9], configs.iter(), &positive).is_empty());
        // The explanation says so.
        let t = ResultTable::new(
            vec!["s".into()],
            low.iter().map(|c| ConfigInfo::new(c.clone())).collect(),
            vec!["false_opens".into()],
            vec![run(0, 0, 0, &[Some(3.0)]), run(0, 1, 0, &[Some(2.0)]), run(0, 2, 0, &[Some(1.0)])],
        )
        .unwrap();
        let r =
            recommend(&t, &Objective::new([(Metric::FalseOpens, 1.0)]), &[], &Rules::new(&positive)).unwrap();
        assert!(
            r.render().contains("Bound: failure_threshold = 3 is the highest value swept (1, 2, 3): the best may lie above it; extend the range to 4 or further.\n"),
            "{}",
            r.render()
        );
    }

    /// A constructed configuration: preset, one parameter, per replicate (false opens, missed
    /// incidents).
    type Row<'a> = (&'a str, i64, &'a [(f64, f64)]);

    /// One scenario, one row per configuration; costed by false opens alone.
    fn constructed(rows: &[Row]) -> ResultTable {
        let configs =
            rows.iter().enumerate().map(|(i, (p, v, _))| cfg(i, p, "failure_threshold", *v)).collect();
        let mut runs = Vec::new();
        for (c, (_, _, reps)) in rows.iter().enumerate() {
            for (r, (fo, mi)) in reps.iter().enumerate() {
                runs.push(run(0, c, r as u32, &[Some(*fo), Some(*mi), None]));
            }
        }
        ResultTable::new(vec!["s".into()], configs, METRICS.map(String::from).to_vec(), runs).unwrap()
    }

    fn choose(t: &ResultTable, constraint: &str, rules: &Rules) -> Recommendation {
        let constraints = vec![Constraint::parse(constraint, &METRICS).unwrap()];
        recommend(t, &Objective::new([(Metric::FalseOpens, 1.0)]), &constraints, rules).unwrap()
    }

    #[test]
    fn one_clearly_best_configuration_is_recommended_with_the_stated_confidence() {
        let reps = |v: [f64; 5]| v.map(|fo| (fo, 0.0));
        let (a, b, c) =
            (reps([10.0, 11.0, 10.0, 12.0, 10.0]), reps([3.0, 4.0, 3.0, 3.0, 4.0]), reps([20.0; 5]));
        let t = constructed(&[("consecutive", 1, &a), ("consecutive", 2, &b), ("consecutive", 3, &c)]);
        let r = choose(&t, "missed_incidents == 0", &Rules::new(&any));
        assert_eq!(r.chosen().unwrap().config.id, 1);
        let conf = r.confidence.as_ref().unwrap();
        assert!(conf.separated && conf.tie_break.is_none());
        assert_eq!((conf.tied, conf.comparisons, conf.replicates), (1, 2, 5));
        let up = &conf.versus[0];
        assert_eq!((up.role.as_str(), up.config_id, up.gap.mean), ("runner-up", 0, Some(7.2)));
        assert!(up.gap.bound.unwrap() > 0.0);
        assert!(r.render().contains("  Selection: best with 95 % confidence (indifference zone δ = 1 cost unit): no other of the 3 qualifying configurations"), "{}", r.render());
    }

    #[test]
    fn three_tied_configurations_are_said_with_the_tie_break_used() {
        let reps = |v: [f64; 3]| v.map(|fo| (fo, 0.0));
        let (a, b, c, worse) =
            (reps([5.0, 7.0, 6.0]), reps([6.0, 6.0, 6.5]), reps([7.0, 5.0, 6.5]), reps([30.0, 31.0, 29.0]));
        let t = constructed(&[
            ("consecutive", 1, &a),
            ("consecutive", 2, &b),
            ("consecutive", 3, &c),
            ("consecutive", 4, &worse),
        ]);
        let r = choose(&t, "missed_incidents == 0", &Rules::new(&any));
        let conf = r.confidence.as_ref().unwrap();
        assert!(!conf.separated);
        assert_eq!(conf.tied, 3);
        let tied: Vec<usize> = conf.listed.iter().map(|t| t.config_id).collect();
        assert_eq!(tied, [0, 1, 2]);
        // No baseline: the simplest (each sets one parameter), then the lowest cost.
        assert_eq!(r.chosen().unwrap().config.id, 0);
        let text = r.render();
        assert!(
            text.contains("  Selection: 3 configurations cannot be told apart at 3 replicates"),
            "{text}"
        );
        assert!(text.contains("tie-break (no baseline given): the simplest, fewest parameters set (1; then the lowest cost): consecutive[failure_threshold=1].\n"), "{text}");
        // With today's configuration among them, it is kept.
        let r = choose(&t, "missed_incidents == 0", &with_baseline(2));
        assert_eq!(r.chosen().unwrap().config.id, 2);
        let text = r.render();
        assert!(text.contains("tie-break: the closest to the baseline consecutive[failure_threshold=3] (the same preset, 0 parameter(s) changed; then the lowest cost): consecutive[failure_threshold=3].\n"), "{text}");
        assert!(text.contains("Runner-up: consecutive[failure_threshold=1] (configuration 0), cost 6: 0.1667 less, 2.703%; the selection cannot tell the two apart"), "{text}");
    }

    #[test]
    fn the_best_on_the_mean_that_misses_in_one_replicate_is_ruled_out() {
        // Config 0 costs 1 but misses the incident in one replicate of three: a mean of 0.33
        // misses would meet "<= 0.5", every replicate does not.
        let (misses, steady) = ([(1.0, 0.0), (1.0, 1.0), (1.0, 0.0)], [(5.0, 0.0), (5.0, 0.0), (6.0, 0.0)]);
        let t = constructed(&[("consecutive", 1, &misses), ("windowed", 2, &steady)]);
        let r = choose(&t, "missed_incidents == 0", &Rules::new(&any));
        assert_eq!(r.chosen().unwrap().config.id, 1);
        let out = r.ranking.iter().find(|c| c.config.id == 0).unwrap();
        assert!(!out.eligible());
        assert_eq!(out.missed, [Missed { scenario: 0, replicates: 1, of: 3 }]);
        assert_eq!(
            out.violations[0].text(&r.constraints, &r.scenarios),
            "`missed_incidents == 0` on s (missed_incidents = 1 in 1 of 3 replicates)"
        );
        assert_eq!(r.confidence.as_ref().unwrap().comparisons, 0);
        assert!(r.render().contains("Selection: the only qualifying configuration"), "{}", r.render());
        // On the mean, it would win; it then says where it misses.
        let r = choose(&t, "mean missed_incidents <= 0.5", &Rules::new(&any));
        assert_eq!(r.chosen().unwrap().config.id, 0);
        assert!(r.render().contains("  It misses incidents on s in 1 of 3 replicates.\n"), "{}", r.render());
        // In two of three replicates is not enough either; in 60 % is.
        assert_eq!(
            choose(&t, "missed_incidents == 0 in 70 % of replicates", &Rules::new(&any))
                .chosen()
                .unwrap()
                .config
                .id,
            1
        );
        assert_eq!(
            choose(&t, "missed_incidents == 0 in 60 % of replicates", &Rules::new(&any))
                .chosen()
                .unwrap()
                .config
                .id,
            0
        );
    }
}
