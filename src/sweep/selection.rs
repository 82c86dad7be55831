//! Ranking and selection with common random numbers (Kim & Nelson, "Selecting the Best
//! System"; Nelson, Swann, Goldsman & Song 2001, "Simple procedures for selecting the best
//! simulated system when the number of alternatives is large"): is the recommended
//! configuration separated from every other qualifying one, and by how much?
//!
//! - A configuration's cost in replicate `r` is its total over the scenarios; every
//!   configuration ran replicate `r` on the same request streams, so differences are taken
//!   replicate by replicate (paired).
//! - Against the lowest-cost configuration `w`, each other qualifying configuration `i` gets
//!   the one-sided lower confidence bound of `μ_i − μ_w`:
//!   `L_i = D̄_i − t(1 − α / k, n − 1) · S_i / √n`, Bonferroni over the `k` comparisons, where
//!   `D̄_i` and `S_i` are the mean and standard deviation of the `n` paired differences and
//!   `α = 1 − confidence`. With probability at least `1 − α` every bound holds at once.
//! - `i` cannot be told apart from `w` when `L_i ≤ −δ` (it may be better than `w` by more than
//!   the indifference zone `δ`) or when `D̄_i ≤ 0`. When no configuration is left so, `w` is
//!   "best with the stated confidence": no other is better by more than `δ`. Otherwise the set
//!   that cannot be told apart is listed and a tie-break picks among it ([`TieBreak`]).

use super::recommend::num;
use super::stats::{Interval, t_quantile};
use serde::{Deserialize, Serialize};

/// The confidence a selection states when the sweep file does not say.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// The indifference zone δ, in cost units, when the sweep file does not say: under the default
/// objective one false open, summed over the scenarios.
pub const DEFAULT_INDIFFERENCE: f64 = 1.0;

/// How sure a selection must be.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Rule {
    /// The probability that the statement holds (0.5 to 0.9999).
    pub confidence: f64,
    /// The indifference zone δ: a difference in total cost below this does not matter.
    pub indifference: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule { confidence: DEFAULT_CONFIDENCE, indifference: DEFAULT_INDIFFERENCE }
    }
}

impl Rule {
    /// The error rate α = 1 − confidence.
    pub fn alpha(&self) -> f64 {
        1.0 - self.confidence
    }
}

/// How a sweep selects, as its output folder records it (objective.toml) for `recommend`.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The stated confidence and indifference zone.
    pub rule: Rule,
    /// The configuration in use today (its id): kept in the ranking, compared with the choice
    /// and preferred by the tie-break.
    pub baseline: Option<usize>,
    /// `replicates = "auto"`: the number of its looks that can err ([`super::auto::looks`]).
    /// The selection then uses its share of the error rate ([`super::auto::selection_share`])
    /// and only the configurations run to the most replicates are in the running.
    pub auto: Option<usize>,
}

/// Per-replicate total costs of the configurations in the running, held flat (a missing
/// replicate is NaN), in the order pushed.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    replicates: usize,
    ids: Vec<usize>,
    means: Vec<f64>,
    costs: Vec<f64>,
}

impl Totals {
    /// Room for configurations of `replicates` replicate slots.
    pub fn new(replicates: usize) -> Totals {
        Totals { replicates, ..Totals::default() }
    }

    /// Adds configuration `id` with mean total cost `mean` and its total in each replicate.
    pub fn push(&mut self, id: usize, mean: f64, costs: &[Option<f64>]) {
        self.ids.push(id);
        self.means.push(mean);
        self.costs.extend((0..self.replicates).map(|r| costs.get(r).copied().flatten().unwrap_or(f64::NAN)));
    }

    /// How many configurations.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The id of the `i`-th.
    pub fn id(&self, i: usize) -> usize {
        self.ids[i]
    }

    /// The mean total cost of the `i`-th.
    pub fn mean(&self, i: usize) -> f64 {
        self.means[i]
    }

    /// The `i`-th's total in each replicate (`None`: missing).
    pub fn costs(&self, i: usize) -> Vec<Option<f64>> {
        self.costs[i * self.replicates..(i + 1) * self.replicates]
            .iter()
            .map(|c| (!c.is_nan()).then_some(*c))
            .collect()
    }

    /// The position of the lowest mean (ties to the earlier one).
    pub fn lowest(&self) -> Option<usize> {
        (0..self.len()).reduce(|a, b| if self.means[b] < self.means[a] { b } else { a })
    }
}

/// Student's t quantiles at one level, by degrees of freedom, computed once each.
struct Quantiles {
    p: f64,
    by_df: Vec<Option<f64>>,
}

impl Quantiles {
    fn new(p: f64) -> Quantiles {
        Quantiles { p, by_df: Vec::new() }
    }

    fn get(&mut self, df: usize) -> f64 {
        if df >= self.by_df.len() {
            self.by_df.resize(df + 1, None);
        }
        *self.by_df[df].get_or_insert_with(|| t_quantile(self.p, df))
    }
}

/// The paired difference of one configuration's total cost from a reference's (other −
/// reference), with its two-sided interval at the stated confidence and the one-sided
/// simultaneous lower bound the selection used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// Replicates paired.
    pub n: usize,
    /// Mean difference (positive: the other costs more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Half-width of the two-sided interval at the stated confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half: Option<f64>,
    /// Lower bound of the difference at the stated confidence, Bonferroni-corrected over the
    /// selection's comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
}

impl Gap {
    /// `+0.1266 ± 3.38` (`-` without pairs).
    pub fn text(&self) -> String {
        let Some(mean) = self.mean else { return "-".into() };
        let m = if mean > 0.0 { format!("+{}", num(mean)) } else { num(mean) };
        match self.half {
            Some(h) => format!("{m} ± {}", num(h)),
            None => m,
        }
    }
}

/// The paired gap of `other` from `reference` (per-replicate totals): its interval at `rule`'s
/// confidence and its lower bound at `1 − α / comparisons`.
pub fn gap(reference: &[Option<f64>], other: &[Option<f64>], rule: &Rule, comparisons: usize) -> Gap {
    let i = Interval::paired(reference, other, rule.confidence);
    let bound = match (i.mean, i.sd) {
        (Some(m), Some(sd)) if i.n >= 2 => {
            let t = t_quantile(1.0 - rule.alpha() / comparisons.max(1) as f64, i.n - 1);
            Some(m - t * sd / (i.n as f64).sqrt())
        }
        _ => None,
    };
    Gap { n: i.n, mean: i.mean, half: i.half, bound }
}

/// What the selection found among the qualifying configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct Subset {
    /// The position (in the [`Totals`]) of the lowest mean cost.
    pub best: usize,
    /// The positions of the configurations that cannot be told apart from it, itself first,
    /// then by mean cost (ties by position).
    pub members: Vec<usize>,
    /// How many comparisons the Bonferroni correction spreads α over.
    pub comparisons: usize,
    /// The fewest replicates any comparison had.
    pub replicates: usize,
}

/// Selects among `totals` at error rate `alpha` (already spread over looks, when several) with
/// indifference zone `delta`: the lowest mean and every configuration that cannot be told
/// apart from it (module documentation). `None` without configurations.
pub fn subset(totals: &Totals, alpha: f64, delta: f64) -> Option<Subset> {
    let best = totals.lowest()?;
    let comparisons = totals.len() - 1;
    let mut quantiles = Quantiles::new(1.0 - alpha / comparisons.max(1) as f64);
    let reference = totals.costs(best);
    let mut members = vec![best];
    let mut replicates = reference.iter().flatten().count();
    for i in (0..totals.len()).filter(|&i| i != best) {
        let (tied, n) = indistinct(&reference, &totals.costs(i), delta, &mut quantiles);
        replicates = replicates.min(n);
        if tied {
            members.push(i);
        }
    }
    members[1..].sort_by(|&a, &b| totals.mean(a).total_cmp(&totals.mean(b)).then(a.cmp(&b)));
    Some(Subset { best, members, comparisons, replicates })
}

/// Whether `other` cannot be told apart from `reference` (paired totals): `D̄ ≤ 0`, or the
/// lower bound `D̄ − t·S/√n ≤ −δ`; below two pairs nothing tells them apart. Also the pairs.
fn indistinct(
    reference: &[Option<f64>],
    other: &[Option<f64>],
    delta: f64,
    t: &mut Quantiles,
) -> (bool, usize) {
    let d = super::stats::paired(reference, other);
    match (d.mean, d.sd) {
        (Some(mean), Some(sd)) if d.n >= 2 => {
            let w = t.get(d.n - 1) * sd / (d.n as f64).sqrt();
            (mean <= 0.0 || mean - w <= -delta, d.n)
        }
        _ => (true, d.n),
    }
}

/// `replicates = "auto"`'s screening: the positions of `candidates` that stay in the running
/// at error rate `alpha` (already spread over the looks): `i` is dropped when one of the
/// [`SCREEN_AGAINST`] lowest means among `leaders` (the qualifying configurations) beats it
/// beyond noise, `D̄_ij > (W_ij − δ)⁺` with `W_ij = t(1 − α / k, n − 1) · S_ij / √n`
/// (Bonferroni over the `k` others). Kept in order.
pub fn screen(candidates: &Totals, leaders: &Totals, alpha: f64, delta: f64) -> Vec<usize> {
    let k = candidates.len().saturating_sub(1).max(1);
    let mut quantiles = Quantiles::new(1.0 - alpha / k as f64);
    let mut order: Vec<usize> = (0..leaders.len()).collect();
    order.sort_by(|&a, &b| leaders.mean(a).total_cmp(&leaders.mean(b)).then(a.cmp(&b)));
    let best: Vec<(usize, Vec<Option<f64>>)> =
        order.iter().take(SCREEN_AGAINST).map(|&j| (leaders.id(j), leaders.costs(j))).collect();
    (0..candidates.len())
        .filter(|&i| {
            let mine = candidates.costs(i);
            best.iter().all(|(id, theirs)| {
                *id == candidates.id(i) || indistinct(theirs, &mine, delta, &mut quantiles).0
            })
        })
        .collect()
}

/// How many of the lowest means each configuration is screened against (the guarantee holds
/// against any subset; more only drops more).
pub const SCREEN_AGAINST: usize = 32;

/// A configuration that cannot be told apart from the winner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tied {
    /// Its label.
    pub label: String,
    /// Its id.
    pub config_id: usize,
    /// Its total cost (sum over scenarios of the mean over replicates).
    pub total_cost: f64,
}

/// The chosen configuration against another: the runner-up or the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Versus {
    /// `runner-up` or `baseline`.
    pub role: String,
    /// Its label.
    pub label: String,
    /// Its id.
    pub config_id: usize,
    /// Its total cost.
    pub total_cost: f64,
    /// Its paired difference in total cost from the chosen one (it − chosen).
    pub gap: Gap,
}

impl Versus {
    /// `runner-up windowed[…] (cost 36.18): +0.1266 ± 3.38 over 3 replicates; lower bound -9.1`.
    pub fn text(&self, confidence: f64) -> String {
        let bound =
            self.gap.bound.map(|b| format!("; simultaneous lower bound {}", num(b))).unwrap_or_default();
        format!(
            "{} {} (cost {}): {} ({} % interval, {}{bound})",
            self.role,
            self.label,
            num(self.total_cost),
            self.gap.text(),
            num(100.0 * confidence),
            replicates(self.gap.n)
        )
    }
}

/// How the recommendation was picked among configurations that cannot be told apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// Nothing to break: the winner is separated.
    None,
    /// The one closest to the baseline: the same preset first, then the fewest parameters
    /// changed.
    Baseline {
        /// The baseline's label.
        label: String,
        /// Whether the pick has the baseline's preset.
        same_preset: bool,
        /// Parameters whose value differs from the baseline's.
        changed: usize,
    },
    /// No baseline: the simplest, the fewest parameters set.
    Simplest {
        /// Parameters the pick sets.
        parameters: usize,
    },
}

impl TieBreak {
    /// The tie-break in words (the pick is named after it).
    pub fn sentence(&self) -> Option<String> {
        match self {
            TieBreak::None => None,
            TieBreak::Baseline { label, same_preset, changed } => Some(format!(
                "tie-break: the closest to the baseline {label} ({}, {changed} parameter(s) changed; then the \
                 lowest cost)",
                if *same_preset { "the same preset" } else { "another preset" }
            )),
            TieBreak::Simplest { parameters } => Some(format!(
                "tie-break (no baseline given): the simplest, fewest parameters set ({parameters}; then the \
                 lowest cost)"
            )),
        }
    }
}

/// The selection's statement: whether the recommendation is separated, and by how much.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confidence {
    /// True when the winner is separated from every other qualifying configuration.
    pub separated: bool,
    /// The stated confidence.
    pub confidence: f64,
    /// The indifference zone δ, in cost units.
    pub indifference: f64,
    /// The fewest replicates a comparison had.
    pub replicates: usize,
    /// Qualifying configurations compared with the winner (the Bonferroni count).
    pub comparisons: usize,
    /// The share of the error rate this selection used (1, or less when `replicates = "auto"`
    /// spread it over its looks and its screening).
    pub alpha_share: f64,
    /// How many configurations cannot be told apart, the winner included (1 when separated).
    pub tied: usize,
    /// The first of them, lowest cost first (at most [`TIED_LISTED`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<Tied>,
    /// The tie-break used, in words, without the pick (none when separated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tie_break: Option<String>,
    /// The chosen configuration against the runner-up and the baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versus: Vec<Versus>,
}

impl Confidence {
    /// The statement as recommendation.txt and the terminal print it: the sentence, the
    /// tie-break naming `chosen`, and the paired gaps of the runner-up and the baseline.
    pub fn render(&self, chosen: &str) -> String {
        let mut out = format!("  Selection: {}.\n", self.sentence());
        if let Some(t) = &self.tie_break {
            out.push_str(&format!("  {t}: {chosen}.\n"));
        }
        if !self.versus.is_empty() {
            out.push_str("  Paired difference of total cost from it (other − recommended, over the same replicates):\n");
            for v in &self.versus {
                out.push_str(&format!("    {}\n", v.text(self.confidence)));
            }
        }
        out
    }
}

/// `1 cost unit`, `2.5 cost units`.
pub fn cost_units(x: f64) -> String {
    if x == 1.0 { "1 cost unit".into() } else { format!("{} cost units", num(x)) }
}

/// `1 replicate`, `3 replicates`.
pub fn replicates(n: usize) -> String {
    if n == 1 { "1 replicate".into() } else { format!("{n} replicates") }
}

/// The most configurations that cannot be told apart a statement names.
pub const TIED_LISTED: usize = 8;

impl Confidence {
    /// The statement in one sentence (no tie-break): `best with 95 % confidence (indifference
    /// zone δ = 1 cost unit) ...` or `4 configurations cannot be told apart at 3 replicates: ...`.
    pub fn sentence(&self) -> String {
        let pct = num(100.0 * self.confidence);
        let delta = cost_units(self.indifference);
        if self.comparisons == 0 {
            return "the only qualifying configuration: nothing to tell it apart from".into();
        }
        if self.separated {
            return format!(
                "best with {pct} % confidence (indifference zone δ = {delta}): no other of the {} \
                 qualifying configurations is better by more than δ (paired over {}, Bonferroni over \
                 {} comparisons)",
                self.comparisons + 1,
                replicates(self.replicates),
                self.comparisons
            );
        }
        let mut names: Vec<String> =
            self.listed.iter().map(|t| format!("{} (cost {})", t.label, num(t.total_cost))).collect();
        if self.tied > self.listed.len() {
            names.push(format!("and {} more", self.tied - self.listed.len()));
        }
        format!(
            "{} configurations cannot be told apart at {} ({pct} % confidence, indifference zone \
             δ = {delta}): {}",
            self.tied,
            replicates(self.replicates),
            names.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Totals of configurations given as per-replicate costs.
    fn totals(rows: &[&[f64]]) -> Totals {
        let mut t = Totals::new(rows.iter().map(|r| r.len()).max().unwrap_or(0));
        for (id, r) in rows.iter().enumerate() {
            let costs: Vec<Option<f64>> = r.iter().map(|c| Some(*c)).collect();
            t.push(id, r.iter().sum::<f64>() / r.len() as f64, &costs);
        }
        t
    }

    #[test]
    fn one_clearly_best_configuration_is_separated() {
        // Config 1 is 10 below the others in every replicate, with little noise in the pairs.
        let t = totals(&[
            &[50.0, 52.0, 49.0, 51.0, 50.5],
            &[40.0, 42.5, 39.0, 41.0, 40.0],
            &[60.0, 61.0, 58.0, 63.0, 60.0],
        ]);
        let s = subset(&t, 0.05, 1.0).unwrap();
        assert_eq!((s.best, s.members.clone(), s.comparisons, s.replicates), (1, vec![1], 2, 5));
        let g = gap(&t.costs(1), &t.costs(0), &Rule::default(), 2);
        assert_eq!((g.n, g.mean), (5, Some(10.0)));
        // One-sided at α / 2 over two comparisons: the two-sided 95 % interval's lower end.
        assert!(g.bound.unwrap() > 0.0);
        assert!((g.bound.unwrap() - (g.mean.unwrap() - g.half.unwrap())).abs() < 1e-9);
        let g3 = gap(&t.costs(1), &t.costs(0), &Rule::default(), 3);
        assert!(g3.bound.unwrap() < g.bound.unwrap());
    }

    #[test]
    fn three_tied_configurations_cannot_be_told_apart() {
        // Three configurations within noise of each other; a fourth clearly worse.
        let t = totals(&[&[30.0, 35.0, 28.0], &[31.0, 33.0, 30.0], &[29.5, 36.0, 29.0], &[80.0, 85.0, 79.0]]);
        let s = subset(&t, 0.05, 1.0).unwrap();
        assert_eq!(s.best, 0);
        assert_eq!(s.members, vec![0, 1, 2]);
        // The same data with a wide indifference zone: differences below 5 do not matter.
        let wide = subset(&t, 0.05, 50.0).unwrap();
        assert_eq!(wide.members, vec![0]);
        // Identical costs are a tie whatever δ.
        let same = totals(&[&[3.0, 4.0], &[3.0, 4.0]]);
        assert_eq!(subset(&same, 0.05, 100.0).unwrap().members, vec![0, 1]);
        // One replicate tells nothing apart.
        let one = totals(&[&[3.0], &[30.0]]);
        let s = subset(&one, 0.05, 1.0).unwrap();
        assert_eq!((s.members.clone(), s.replicates), (vec![0, 1], 1));
    }

    #[test]
    fn screening_drops_only_what_a_leader_beats_beyond_noise() {
        let t = totals(&[
            &[30.0, 35.0, 28.0, 31.0],
            &[31.0, 33.0, 30.0, 30.0],
            &[80.0, 85.0, 79.0, 82.0],
            &[45.0, 20.0, 70.0, 33.0],
        ]);
        // 2 is beaten by 0 and 1 in every replicate by ~50; 3 is noisy enough to stay.
        assert_eq!(screen(&t, &t, 0.05, 1.0), vec![0, 1, 3]);
        let one = totals(&[&[1.0, 2.0]]);
        assert_eq!(screen(&one, &one, 0.05, 1.0), vec![0]);
        // Beaten only by a configuration that does not qualify: kept.
        let mut leaders = Totals::new(4);
        leaders.push(7, 31.0, &[Some(30.0), Some(35.0), Some(28.0), Some(31.0)]);
        let rest = totals(&[&[99.0, 99.0, 99.0, 99.0], &[80.0, 85.0, 79.0, 82.0]]);
        assert_eq!(screen(&rest, &totals(&[]), 0.05, 1.0), vec![0, 1]);
        assert_eq!(screen(&rest, &leaders, 0.05, 1.0), Vec::<usize>::new());
    }

    #[test]
    fn the_statement_reads_either_way() {
        let mut c = Confidence {
            separated: true,
            confidence: 0.95,
            indifference: 1.0,
            replicates: 3,
            comparisons: 3,
            alpha_share: 1.0,
            tied: 1,
            listed: vec![],
            tie_break: None,
            versus: vec![],
        };
        assert_eq!(
            c.sentence(),
            "best with 95 % confidence (indifference zone δ = 1 cost unit): no other of the 4 qualifying \
             configurations is better by more than δ (paired over 3 replicates, Bonferroni over 3 comparisons)"
        );
        c.separated = false;
        c.tied = 3;
        c.listed = vec![
            Tied { label: "a".into(), config_id: 0, total_cost: 36.05 },
            Tied { label: "b".into(), config_id: 1, total_cost: 36.18 },
        ];
        assert_eq!(
            c.sentence(),
            "3 configurations cannot be told apart at 3 replicates (95 % confidence, indifference zone δ = 1 cost \
             unit): a (cost 36.05); b (cost 36.18); and 1 more"
        );
        let tb = TieBreak::Baseline { label: "base".into(), same_preset: false, changed: 4 };
        assert_eq!(
            tb.sentence().unwrap(),
            "tie-break: the closest to the baseline base (another preset, 4 parameter(s) changed; then the lowest \
             cost)"
        );
        assert_eq!(TieBreak::None.sentence(), None);
        let v = Versus {
            role: "runner-up".into(),
            label: "b".into(),
            config_id: 1,
            total_cost: 36.18,
            gap: Gap { n: 3, mean: Some(0.1266), half: Some(3.38), bound: Some(-9.1) },
        };
        assert_eq!(
            v.text(0.95),
            "runner-up b (cost 36.18): +0.1266 ± 3.38 (95 % interval, 3 replicates; simultaneous lower bound -9.1)"
        );
    }
}
