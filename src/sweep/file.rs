//! Sweep files (TOML) → a validated [`SweepFile`]: scenarios (paths or globs), policy grids,
//! replicates, base seed, objective, constraints and Pareto fronts. Unknown keys and impossible
//! values are errors with `file:line:col`, and every configuration is validated before anything
//! runs.
//!
//! ```toml
//! name = "thresholds"                 # default: the file's stem
//! scenarios = ["../*.toml"]           # relative to this file; sorted, deduplicated
//! replicates = 5                      # default 3; or "auto" (sequential, see `super::auto`)
//! max_replicates = 10                 # with "auto": the most any configuration gets (default 10)
//! confidence = 0.95                   # the selection's stated confidence (default 0.95)
//! indifference = 1.0                  # δ: a total-cost difference that does not matter (default 1)
//! seed = 42                           # default: each scenario's own seed
//! shards = 4                          # an array job's shards: its task ids are the shard indices
//!
//! [[policies]]
//! preset = "consecutive"
//! failure_threshold = [3, 5, 8]                                     # a list
//! cooldown = { from = "10s", to = "5m", steps = 6, scale = "log" }  # a range
//! probes = 1                                                        # fixed
//! failure_on = [["error", "timeout"]]   # a list-valued parameter: wrap it (or "error,timeout")
//!
//! [objective]                         # replaces the default weights when present
//! false_opens = 10
//! detection_delay_mean_s = 1
//!
//! # Each holds in every replicate unless it says `in P % of replicates`, `worst` or `mean`;
//! # without `constraints`, "missed_incidents == 0" applies (`constraints = []`: none).
//! constraints = ["missed_incidents == 0", "p99_latency <= \"2s\""]  # top level or in [objective]
//! pareto = [["detection_delay_mean_s", "false_opens"]]               # top level
//!
//! # The configuration in use today, as a policy entry with one value per parameter: run with
//! # the grid (one of its configurations when it is one, else added after them) and judged on
//! # the review page.
//! baseline = { preset = "consecutive", failure_threshold = 5, cooldown = "1m" }
//!
//! # The library the recommendation is deployed to (see `super::target`): every configuration
//! # must be one it expresses exactly (refused before anything runs), or with "nearest", each
//! # one it cannot is replaced by its nearest expressible configuration (listed).
//! target = "resilience4j"
//! target_mode = "exact"               # or "nearest"
//! ```

use super::SweepError;
use super::auto::{DEFAULT_MAX_REPLICATES, MAX_REPLICATES};
use super::constraint::{Constraint, DEFAULT_CONSTRAINT, resolve_metric};
use super::grid::{ConfigGrid, Ends, Param, PolicyGrid, Scale, expand_range};
use super::objective::{Objective, check_weight};
use super::pareto::DEFAULT_FRONTS;
use super::selection::Rule;
use super::target::{PolicySpots, Target, TargetMode};
use crate::scenario::Spot;
use crate::time::Dur;
use crate::{Error, Result};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Finds the files a sweep file's `scenarios` entries name, so that parsing does no I/O: the
/// application looks on the file system (`app::files`), tests in a list.
pub trait ScenarioFiles {
    /// The files `pattern` (a glob with `*`, `?`, `[...]`, or a plain path) names relative to
    /// `base`, sorted; a refusal saying where it looked when it names none.
    fn resolve(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>>;
    /// Whether `a` and `b` name one file (the sweep file must not list itself).
    fn same_file(&self, a: &Path, b: &Path) -> bool;
}

/// Replicates per (scenario, configuration) when a sweep file does not say.
pub const DEFAULT_REPLICATES: u32 = 3;

/// Checks one configuration (preset and overrides) without running it; the error says what is
/// wrong. The runner passes a check built on the policy module, tests pass their own.
pub type Validate<'a> = &'a dyn Fn(&str, &[(String, toml::Value)]) -> crate::Result<()>;

/// How many replicates: a number, or `"auto"` (sequential, [`super::auto`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Replicates {
    /// This many per (scenario, configuration).
    Count(u32),
    /// As many as the selection needs, up to `max_replicates`.
    Auto,
}

impl Replicates {
    /// Parses `--replicates`: a whole number of at least 1, or `auto`.
    pub fn parse(text: &str) -> Result<Replicates> {
        match text.trim() {
            "auto" => Ok(Replicates::Auto),
            t => t.parse::<u32>().ok().filter(|n| *n >= 1).map(Replicates::Count).ok_or_else(|| {
                Error::invalid(format!("expected a whole number of at least 1, or `auto`, found {text:?}"))
            }),
        }
    }
}

/// A validated sweep file.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The sweep's name (the output folder's default name).
    pub name: String,
    /// Scenario files, sorted and deduplicated.
    pub scenarios: Vec<PathBuf>,
    /// Replicates per (scenario, configuration), at least 1; with [`SweepFile::auto`], the most
    /// any configuration gets (`max_replicates`).
    pub replicates: u32,
    /// `replicates = "auto"`: sequential replicates ([`super::auto`]).
    pub auto: bool,
    /// The selection's stated confidence and indifference zone.
    pub rule: Rule,
    /// Where `replicates` is written (the file alone when it is not), for the resource limits.
    pub replicates_spot: Spot,
    /// Base seed for every scenario, or `None` to use each scenario's own seed.
    pub seed: Option<u64>,
    /// One grid per `[[policies]]` entry, in file order.
    pub grids: Vec<PolicyGrid>,
    /// Every configuration in grid order (see [`super::grid`]), made when asked.
    pub configurations: ConfigGrid,
    /// The objective, or `None` for the documented default weights.
    pub objective: Option<Objective>,
    /// Constraints every scenario must meet ([`DEFAULT_CONSTRAINT`] when the file sets none).
    pub constraints: Vec<Constraint>,
    /// True when the file sets no constraints and [`DEFAULT_CONSTRAINT`] applies (its metric is
    /// among the known columns).
    pub constraints_default: bool,
    /// Metric groups of pareto.csv, each of at least two metrics.
    pub pareto: Vec<Vec<String>>,
    /// The configuration in use today (`baseline`), as an index into
    /// [`SweepFile::configurations`] (its id).
    pub baseline: Option<usize>,
    /// `shards = N`: the number of shards an array job runs it as (its task ids 0..N-1 are the
    /// shard indices, so one failed task reruns alone), with where it is written.
    pub shards: Option<(u32, Spot)>,
    /// `target` and `target_mode`: the library the recommendation is deployed to.
    pub target: Option<Target>,
    /// Where each `[[policies]]` entry, its preset and its parameters are written (line and
    /// column), and the baseline, for the target's refusals.
    pub policy_spots: Vec<PolicySpots>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    name: Option<Spanned<String>>,
    scenarios: Spanned<Vec<Spanned<String>>>,
    replicates: Option<Spanned<toml::Value>>,
    max_replicates: Option<Spanned<i64>>,
    confidence: Option<Spanned<f64>>,
    indifference: Option<Spanned<f64>>,
    seed: Option<u64>,
    shards: Option<Spanned<i64>>,
    policies: Spanned<Vec<Spanned<RawPolicy>>>,
    objective: Option<RawObjective>,
    constraints: Option<Vec<Spanned<String>>>,
    pareto: Option<Vec<Spanned<Vec<Spanned<String>>>>>,
    baseline: Option<Spanned<RawPolicy>>,
    target: Option<Spanned<String>>,
    target_mode: Option<Spanned<String>>,
}

/// A `[[policies]]` entry: `preset` plus parameters in any order (sorted back to file order).
struct RawPolicy {
    preset: Option<Spanned<String>>,
    params: Vec<(String, Spanned<ParamValues>)>,
}

impl<'de> Deserialize<'de> for RawPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawPolicy, D::Error> {
        let (preset, params) =
            d.deserialize_map(Entries::new("preset", "a policy table with `preset` and parameters"))?;
        Ok(RawPolicy { preset, params })
    }
}

/// A table read as its one `special` key plus every other entry, in file order: a policy's
/// `preset` and parameters, the objective's `constraints` and weights.
struct Entries<S, V> {
    special: &'static str,
    expecting: &'static str,
    types: std::marker::PhantomData<(S, V)>,
}

impl<S, V> Entries<S, V> {
    fn new(special: &'static str, expecting: &'static str) -> Entries<S, V> {
        Entries { special, expecting, types: std::marker::PhantomData }
    }
}

impl<'de, S: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for Entries<S, V> {
    type Value = (Option<S>, Vec<(String, Spanned<V>)>);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut special = None;
        let mut entries: Vec<(String, Spanned<V>)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == self.special {
                special = Some(map.next_value()?);
            } else {
                entries.push((key, map.next_value()?));
            }
        }
        entries.sort_by_key(|(_, v)| v.span().start);
        Ok((special, entries))
    }
}

/// The values a parameter takes: a scalar, a list or an expanded range.
struct ParamValues(Vec<toml::Value>);

impl<'de> Deserialize<'de> for ParamValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ParamValues, D::Error> {
        let value = toml::Value::deserialize(d)?;
        param_values(value).map(ParamValues).map_err(de::Error::custom)
    }
}

fn param_values(value: toml::Value) -> Result<Vec<toml::Value>> {
    match value {
        toml::Value::Array(items) => {
            if items.is_empty() {
                return Err(Error::invalid("an empty list: give at least one value"));
            }
            let mut out: Vec<toml::Value> = Vec::with_capacity(items.len());
            for item in items {
                if item.is_table() {
                    return Err(Error::invalid(format!(
                        "expected a list of values (numbers, strings, booleans or lists), found the table {item}"
                    )));
                }
                if !out.contains(&item) {
                    out.push(item);
                }
            }
            Ok(out)
        }
        toml::Value::Table(table) => range_values(table),
        scalar => Ok(vec![scalar]),
    }
}

fn range_values(mut table: toml::Table) -> Result<Vec<toml::Value>> {
    const KEYS: &str = "from, to, steps, scale";
    if let Some(k) = table.keys().find(|k| !["from", "to", "steps", "scale"].contains(&k.as_str())) {
        return Err(Error::invalid(format!("unknown key `{k}` in a range: expected {KEYS}")));
    }
    let mut take = |k: &str| {
        table.remove(k).ok_or_else(|| Error::invalid(format!("a range needs `{k}` (keys: {KEYS})")))
    };
    let (from, to, steps) = (take("from")?, take("to")?, take("steps")?);
    let steps = steps
        .as_integer()
        .ok_or_else(|| Error::invalid(format!("`steps` must be an integer, found {steps}")))?;
    let scale = match table.remove("scale") {
        None => Scale::Linear,
        Some(toml::Value::String(s)) if s == "linear" => Scale::Linear,
        Some(toml::Value::String(s)) if s == "log" => Scale::Log,
        Some(other) => {
            return Err(Error::invalid(format!("`scale` must be \"linear\" or \"log\", found {other}")));
        }
    };
    let dur = |v: &str, k: &str| Dur::parse(v).map_err(|e| Error::invalid(format!("`{k}`: {e}")));
    let ends = match (&from, &to) {
        (toml::Value::Integer(a), toml::Value::Integer(b)) => Ends::Int(*a, *b),
        (toml::Value::String(a), toml::Value::String(b)) => Ends::Duration(dur(a, "from")?, dur(b, "to")?),
        (a, b)
            if a.as_float().or(a.as_integer().map(|i| i as f64)).is_some()
                && b.as_float().or(b.as_integer().map(|i| i as f64)).is_some() =>
        {
            let f = |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap_or(f64::NAN);
            Ends::Float(f(a), f(b))
        }
        (a, b) => {
            return Err(Error::invalid(format!(
                "`from` and `to` must be both numbers or both durations such as \"10s\", found {a} and {b}"
            )));
        }
    };
    expand_range(ends, steps, scale)
}

/// `[objective]`: metric weights, and optionally `constraints`, in any order.
struct RawObjective {
    weights: Vec<(String, Spanned<f64>)>,
    constraints: Option<Vec<Spanned<String>>>,
}

impl<'de> Deserialize<'de> for RawObjective {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawObjective, D::Error> {
        let (constraints, weights) =
            d.deserialize_map(Entries::new("constraints", "a table of metric weights"))?;
        Ok(RawObjective { weights, constraints })
    }
}

/// Parses a TOML file written by breakerlab (a shard's manifest, review.toml) into `T`; errors
/// name `file` with the line and column.
pub fn from_toml<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T, SweepError> {
    toml::from_str(text).map_err(|e| match e.span() {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            SweepError::At { file: file.into(), line, col, message: e.message().trim().to_string() }
        }
        None => SweepError::File { file: file.into(), message: e.message().trim().to_string() },
    })
}

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl SweepFile {
    /// Applies `--replicates` and `--max-replicates`: a number replaces `replicates` (and turns
    /// "auto" off), `auto` turns it on (up to `max`, else the file's `max_replicates`, else
    /// [`DEFAULT_MAX_REPLICATES`]). `--max-replicates` without "auto" is refused.
    pub fn set_replicates(&mut self, replicates: Option<Replicates>, max: Option<u32>) -> Result<(), String> {
        match replicates {
            Some(Replicates::Count(n)) => (self.replicates, self.auto) = (n, false),
            Some(Replicates::Auto) if !self.auto => {
                (self.replicates, self.auto) = (DEFAULT_MAX_REPLICATES, true)
            }
            _ => {}
        }
        match max {
            Some(_) if !self.auto => Err(
                "--max-replicates applies to replicates = \"auto\" only: give --replicates auto, or set it in the \
                 sweep file"
                    .to_string(),
            ),
            Some(m) if !(1..=MAX_REPLICATES).contains(&m) => {
                Err(format!("--max-replicates must be between 1 and {MAX_REPLICATES}, found {m}"))
            }
            Some(m) => {
                self.replicates = m;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Validates the text of the sweep file at `path`: `files` finds what its `scenarios`
    /// entries name (relative to `path`'s folder), `columns` are the known metric columns,
    /// `validate` checks each configuration.
    pub fn parse<S: AsRef<str>>(
        text: &str,
        path: &Path,
        columns: &[S],
        validate: Validate,
        files: &dyn ScenarioFiles,
    ) -> Result<SweepFile, SweepError> {
        let cx = SweepText { file: path.display().to_string(), text };
        let raw: RawSweep = toml::from_str(text).map_err(|e| match e.span() {
            Some(span) => cx.at(span, e.message().trim().to_string()),
            None => SweepError::File { file: cx.file.clone(), message: e.message().trim().to_string() },
        })?;
        let name = cx.name(raw.name, path)?;
        let replicates_spot =
            Spot::in_file(path, text, raw.replicates.as_ref().map(|r| r.span().start), "replicates");
        let (replicates, auto) = cx.replicates(raw.replicates, raw.max_replicates)?;
        let rule = cx.rule(raw.confidence, raw.indifference)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let scenarios = cx.scenarios(&raw.scenarios, base, files)?;
        let itself = |p: &PathBuf| p == path || files.same_file(p, path);
        if let Some(pattern) = raw
            .scenarios
            .get_ref()
            .iter()
            .find(|pat| files.resolve(base, pat.get_ref()).is_ok_and(|found| found.iter().any(itself)))
        {
            return Err(cx.at(
                pattern.span(),
                format!(
                    "{:?} matches this sweep file itself: `scenarios` lists scenario files only \
                     (narrow the pattern, or keep sweeps in another folder)",
                    pattern.get_ref()
                ),
            ));
        }
        let (grids, mut configurations) = cx.grids(&raw.policies, validate)?;
        let baseline =
            raw.baseline.as_ref().map(|b| cx.baseline(b, &mut configurations, validate)).transpose()?;
        let mut given = raw.constraints.is_some();
        let mut constraint_texts = raw.constraints.unwrap_or_default();
        let objective = match raw.objective {
            None => None,
            Some(o) => {
                given |= o.constraints.is_some();
                constraint_texts.extend(o.constraints.unwrap_or_default());
                Some(cx.objective(o.weights, columns)?)
            }
        };
        let mut constraints = Vec::with_capacity(constraint_texts.len());
        for c in &constraint_texts {
            constraints
                .push(Constraint::parse(c.get_ref(), columns).map_err(|m| cx.at(c.span(), m.to_string()))?);
        }
        // The default applies where its metric is known (always, with the simulator's metrics).
        let default = (!given).then(|| Constraint::parse(DEFAULT_CONSTRAINT, columns).ok()).flatten();
        let constraints_default = default.is_some();
        constraints.extend(default);
        let pareto = cx.pareto(raw.pareto, columns)?;
        let shards = match raw.shards {
            None => None,
            Some(n) => {
                let max = super::shard::MAX_SHARDS;
                let count =
                    u32::try_from(*n.get_ref()).ok().filter(|c| (1..=max).contains(c)).ok_or_else(|| {
                        cx.at(
                            n.span(),
                            format!("`shards` must be a whole number from 1 to {max}, found {}", n.get_ref()),
                        )
                    })?;
                Some((count, Spot::in_file(path, text, Some(n.span().start), "shards")))
            }
        };
        let target = cx.target(raw.target, raw.target_mode)?;
        let mut policy_spots: Vec<PolicySpots> =
            raw.policies.get_ref().iter().map(|entry| cx.spots(entry)).collect();
        if let Some(b) = &raw.baseline {
            policy_spots.push(cx.spots(b));
        }
        Ok(SweepFile {
            path: path.to_path_buf(),
            name,
            scenarios,
            replicates,
            auto,
            rule,
            replicates_spot,
            seed: raw.seed,
            grids,
            configurations,
            objective,
            constraints,
            constraints_default,
            pareto,
            baseline,
            shards,
            target,
            policy_spots,
        })
    }
}

/// The sweep file being validated: names it, with line and column, in errors.
struct SweepText<'a> {
    file: String,
    text: &'a str,
}

impl SweepText<'_> {
    /// An error at a position of the file.
    fn at(&self, span: Range<usize>, message: String) -> SweepError {
        let (line, col) = line_col(self.text, span.start);
        SweepError::At { file: self.file.clone(), line, col, message }
    }

    /// `name`, or the file's stem: a plain folder name.
    fn name(&self, name: Option<Spanned<String>>, path: &Path) -> Result<String, SweepError> {
        match name {
            Some(n) => {
                let v = n.get_ref().trim();
                if !crate::scenario::is_plain_name(v) {
                    return Err(self.at(n.span(), format!("`name` must be a plain folder name, found {v:?}")));
                }
                Ok(v.to_string())
            }
            None => {
                Ok(path.file_stem().map_or_else(|| "sweep".to_string(), |s| s.to_string_lossy().into_owned()))
            }
        }
    }

    /// `replicates`: at least 1 (default [`DEFAULT_REPLICATES`]), or `"auto"` with its
    /// `max_replicates` (default [`DEFAULT_MAX_REPLICATES`]): the count, and whether it is auto.
    fn replicates(
        &self,
        replicates: Option<Spanned<toml::Value>>,
        max: Option<Spanned<i64>>,
    ) -> Result<(u32, bool), SweepError> {
        let auto = replicates.as_ref().is_some_and(|r| r.get_ref().as_str() == Some("auto"));
        if let Some(m) = max.as_ref().filter(|_| !auto) {
            return Err(self.at(
                m.span(),
                "`max_replicates` applies to `replicates = \"auto\"` only: give one or the other".into(),
            ));
        }
        match replicates {
            None => Ok((DEFAULT_REPLICATES, false)),
            Some(_) if auto => match max {
                None => Ok((DEFAULT_MAX_REPLICATES, true)),
                Some(m) => u32::try_from(*m.get_ref())
                    .ok()
                    .filter(|n| (1..=MAX_REPLICATES).contains(n))
                    .map(|n| (n, true))
                    .ok_or_else(|| {
                        self.at(
                            m.span(),
                            format!(
                                "`max_replicates` must be between 1 and {MAX_REPLICATES}, found {}",
                                m.get_ref()
                            ),
                        )
                    }),
            },
            Some(r) => match r.get_ref() {
                toml::Value::Integer(n) => {
                    u32::try_from(*n).ok().filter(|n| *n >= 1).map(|n| (n, false)).ok_or_else(|| {
                        self.at(r.span(), format!("`replicates` must be at least 1, found {n}"))
                    })
                }
                other => Err(self
                    .at(r.span(), format!("`replicates` must be a whole number or \"auto\", found {other}"))),
            },
        }
    }

    /// `confidence` (in [0.5, 0.9999]) and `indifference` (a finite number ≥ 0, in cost units).
    fn rule(
        &self,
        confidence: Option<Spanned<f64>>,
        indifference: Option<Spanned<f64>>,
    ) -> Result<Rule, SweepError> {
        let mut rule = Rule::default();
        if let Some(c) = confidence {
            let v = *c.get_ref();
            if !(0.5..=0.9999).contains(&v) {
                return Err(self.at(
                    c.span(),
                    format!("`confidence` must be between 0.5 and 0.9999 (e.g. 0.95), found {v}"),
                ));
            }
            rule.confidence = v;
        }
        if let Some(d) = indifference {
            let v = *d.get_ref();
            if !(v.is_finite() && v >= 0.0) {
                return Err(self.at(
                    d.span(),
                    format!("`indifference` must be a number of cost units, 0 or more, found {v}"),
                ));
            }
            rule.indifference = v;
        }
        Ok(rule)
    }

    /// `scenarios`: every file its globs and paths name, relative to `base`, sorted, once each.
    fn scenarios(
        &self,
        patterns: &Spanned<Vec<Spanned<String>>>,
        base: &Path,
        files: &dyn ScenarioFiles,
    ) -> Result<Vec<PathBuf>, SweepError> {
        if patterns.get_ref().is_empty() {
            return Err(
                self.at(patterns.span(), "`scenarios` is empty: name at least one scenario file".into())
            );
        }
        let mut scenarios: Vec<PathBuf> = Vec::new();
        for pattern in patterns.get_ref() {
            let found =
                files.resolve(base, pattern.get_ref()).map_err(|m| self.at(pattern.span(), m.to_string()))?;
            scenarios.extend(found);
        }
        scenarios.sort();
        scenarios.dedup();
        Ok(scenarios)
    }

    /// `[[policies]]`: each entry's grid, every value checked on its own, then every
    /// configuration of the expanded grids checked whole (an error names its entry).
    fn grids(
        &self,
        entries: &Spanned<Vec<Spanned<RawPolicy>>>,
        validate: Validate,
    ) -> Result<(Vec<PolicyGrid>, ConfigGrid), SweepError> {
        if entries.get_ref().is_empty() {
            return Err(
                self.at(entries.span(), "`policies` is empty: add at least one [[policies]] entry".into())
            );
        }
        let mut grids: Vec<PolicyGrid> = Vec::new();
        let mut grid_spans: Vec<Range<usize>> = Vec::new();
        for entry in entries.get_ref() {
            let span = entry.span();
            let policy = entry.get_ref();
            let Some(preset) = &policy.preset else {
                return Err(self.at(span, "a [[policies]] entry needs `preset = \"...\"`".into()));
            };
            validate(preset.get_ref(), &[]).map_err(|m| self.at(preset.span(), m.to_string()))?;
            let mut params = Vec::with_capacity(policy.params.len());
            for (name, values) in &policy.params {
                for v in values.get_ref().0.iter() {
                    validate(preset.get_ref(), &[(name.clone(), v.clone())])
                        .map_err(|m| self.at(values.span(), format!("`{name}` = {v}: {m}")))?;
                }
                params.push(Param { name: name.clone(), values: values.get_ref().0.clone() });
            }
            grids.push(PolicyGrid { preset: preset.get_ref().clone(), params });
            grid_spans.push(span);
        }
        let configurations = ConfigGrid::new(grids.clone())
            .map_err(|m| SweepError::File { file: self.file.clone(), message: m.to_string() })?;
        for c in configurations.iter() {
            if let Err(m) = validate(&c.preset, &c.overrides) {
                let entry = grids
                    .iter()
                    .position(|g| {
                        g.preset == c.preset
                            && g.params.iter().map(|p| &p.name).eq(c.overrides.iter().map(|o| &o.0))
                    })
                    .unwrap_or(0);
                return Err(self.at(grid_spans[entry].clone(), format!("configuration `{}`: {m}", c.label())));
            }
        }
        Ok((grids, configurations))
    }

    /// `baseline`: one configuration, checked as a policy entry is; the index of the grid's
    /// configuration with the same preset and overrides (in any order), else of a configuration
    /// added after the grid's (so shards and merges, which share the grid order, agree).
    fn baseline(
        &self,
        entry: &Spanned<RawPolicy>,
        configurations: &mut ConfigGrid,
        validate: Validate,
    ) -> Result<usize, SweepError> {
        let policy = entry.get_ref();
        let Some(preset) = &policy.preset else {
            return Err(self.at(
                entry.span(),
                "`baseline` needs `preset = \"...\"`: the configuration in use today, e.g. \
                 baseline = { preset = \"consecutive\", failure_threshold = 5 }"
                    .into(),
            ));
        };
        validate(preset.get_ref(), &[]).map_err(|m| self.at(preset.span(), format!("baseline: {m}")))?;
        let mut overrides = Vec::with_capacity(policy.params.len());
        for (name, values) in &policy.params {
            let [value] = values.get_ref().0.as_slice() else {
                return Err(self.at(
                    values.span(),
                    format!(
                        "baseline: `{name}` has {} values, but the baseline is one configuration: give one \
                         (a list-valued parameter is wrapped, as in a [[policies]] entry)",
                        values.get_ref().0.len()
                    ),
                ));
            };
            validate(preset.get_ref(), &[(name.clone(), value.clone())])
                .map_err(|m| self.at(values.span(), format!("baseline: `{name}` = {value}: {m}")))?;
            overrides.push((name.clone(), value.clone()));
        }
        validate(preset.get_ref(), &overrides)
            .map_err(|m| self.at(entry.span(), format!("baseline: {m}")))?;
        let same = |c: &super::grid::Configuration| {
            c.preset == *preset.get_ref()
                && c.overrides.len() == overrides.len()
                && overrides.iter().all(|o| c.overrides.contains(o))
        };
        if let Some(found) = configurations.iter().position(|c| same(&c)) {
            return Ok(found);
        }
        Ok(configurations.push(preset.get_ref().clone(), overrides))
    }

    /// `target` (a library `export` writes for) and `target_mode` (`exact`, the default, or
    /// `nearest`); `target_mode` alone is refused.
    fn target(
        &self,
        target: Option<Spanned<String>>,
        mode: Option<Spanned<String>>,
    ) -> Result<Option<Target>, SweepError> {
        let mode_value = match &mode {
            None => TargetMode::Exact,
            Some(m) => TargetMode::parse(m.get_ref())
                .map_err(|e| self.at(m.span(), format!("`target_mode`: {e}")))?,
        };
        match (target, mode) {
            (None, None) => Ok(None),
            (None, Some(m)) => Err(self.at(
                m.span(),
                "`target_mode` applies with `target = \"<library>\"` only: name the library".into(),
            )),
            (Some(t), _) => {
                let library = crate::policy::Library::parse(t.get_ref())
                    .map_err(|e| self.at(t.span(), format!("`target`: {e}")))?;
                let (line, col) = line_col(self.text, t.span().start);
                Ok(Some(Target { library, mode: mode_value, at: Some((line, col)) }))
            }
        }
    }

    /// Where a policy entry, its preset and each parameter's values are written.
    fn spots(&self, entry: &Spanned<RawPolicy>) -> PolicySpots {
        let at = |start: usize| line_col(self.text, start);
        let policy = entry.get_ref();
        PolicySpots {
            entry: at(entry.span().start),
            preset: policy.preset.as_ref().map_or(at(entry.span().start), |p| at(p.span().start)),
            params: policy.params.iter().map(|(k, v)| (k.clone(), at(v.span().start))).collect(),
        }
    }

    /// `[objective]` weights: metrics among `columns` (aliases accepted), finite weights.
    fn objective<S: AsRef<str>>(
        &self,
        weights: Vec<(String, Spanned<f64>)>,
        columns: &[S],
    ) -> Result<Objective, SweepError> {
        let mut objective = Objective::default();
        for (metric, weight) in weights {
            let m = resolve_metric(&metric, columns)
                .map_err(|e| self.at(weight.span(), format!("objective: {e}")))?;
            let w = check_weight(Some(*weight.get_ref()), &weight.get_ref().to_string())
                .map_err(|e| self.at(weight.span(), format!("objective `{metric}`: {e}")))?;
            objective.set(m, w);
        }
        Ok(objective)
    }

    /// `pareto`: groups of at least two metrics (default [`DEFAULT_FRONTS`]).
    fn pareto<S: AsRef<str>>(
        &self,
        groups: Option<Vec<Spanned<Vec<Spanned<String>>>>>,
        columns: &[S],
    ) -> Result<Vec<Vec<String>>, SweepError> {
        let Some(groups) = groups else {
            return Ok(DEFAULT_FRONTS.iter().map(|(a, b)| vec![a.to_string(), b.to_string()]).collect());
        };
        let mut out = Vec::with_capacity(groups.len());
        for g in groups {
            if g.get_ref().len() < 2 {
                return Err(self.at(g.span(), "a Pareto front needs at least two metrics".into()));
            }
            let mut metrics = Vec::new();
            for m in g.get_ref() {
                let metric =
                    resolve_metric(m.get_ref(), columns).map_err(|e| self.at(m.span(), e.to_string()))?;
                metrics.push(metric.name().to_string());
            }
            out.push(metrics);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metric;

    const COLS: [&str; 7] = [
        "false_opens",
        "missed_incidents",
        "detection_delay_mean_s",
        "wasted_quota",
        "availability",
        "latency_p99_ms",
        "flaps",
    ];

    /// Knows two presets; `failure_threshold` must be a positive integer, `cooldown` a duration,
    /// and a `window` shorter than its `bucket` is impossible.
    fn check(preset: &str, overrides: &[(String, toml::Value)]) -> crate::Result<()> {
        if !["consecutive", "windowed"].contains(&preset) {
            return Err(crate::Error::invalid(format!("unknown preset `{preset}`")));
        }
        let mut window = None;
        let mut bucket = None;
        for (k, v) in overrides {
            match k.as_str() {
                "failure_threshold" => match v.as_integer() {
                    Some(n) if n >= 1 => {}
                    _ => {
                        return Err(crate::Error::invalid(format!("expected a positive integer, found {v}")));
                    }
                },
                "cooldown" | "window" | "bucket" => {
                    let d = v
                        .as_str()
                        .map(Dur::parse)
                        .and_then(Result::ok)
                        .ok_or_else(|| crate::Error::invalid("expected a duration"))?;
                    if k == "window" {
                        window = Some(d);
                    } else if k == "bucket" {
                        bucket = Some(d);
                    }
                }
                "failure_rate" | "failure_on" => {}
                other => return Err(crate::Error::invalid(format!("unknown parameter `{other}`"))),
            }
        }
        match (window, bucket) {
            (Some(w), Some(b)) if w < b => Err(crate::Error::invalid("window is shorter than its bucket")),
            _ => Ok(()),
        }
    }

    /// A sweep folder holding `scen/a.toml`, `scen/b.toml` and `scen/c.txt`, matched in memory.
    struct Dir;

    fn dir() -> Dir {
        Dir
    }

    impl ScenarioFiles for Dir {
        fn resolve(&self, base: &Path, pattern: &str) -> Result<Vec<PathBuf>> {
            let glob = glob::Pattern::new(pattern).map_err(|e| Error::invalid(e.to_string()))?;
            let found: Vec<PathBuf> = ["scen/a.toml", "scen/b.toml", "scen/c.txt"]
                .iter()
                .filter(|f| glob.matches(f))
                .map(|f| base.join(f))
                .collect();
            if found.is_empty() {
                Err(Error::invalid(format!("{pattern:?} names no file")))
            } else {
                Ok(found)
            }
        }

        fn same_file(&self, a: &Path, b: &Path) -> bool {
            a == b
        }
    }

    fn parse(d: &Dir, text: &str) -> Result<SweepFile, SweepError> {
        SweepFile::parse(text, Path::new("sw.toml"), &COLS, &check, d)
    }

    fn err(text: &str) -> String {
        parse(&dir(), text).unwrap_err().to_string()
    }

    const GOOD: &str = r#"
scenarios = ["scen/*.toml", "scen/a.toml"]
replicates = 4
seed = 7

[[policies]]
preset = "consecutive"
failure_threshold = [3, 5, 8]
cooldown = { from = "10s", to = "5m", steps = 6, scale = "log" }

[[policies]]
preset = "windowed"
window = "1m"
failure_rate = { from = 0.1, to = 0.5, steps = 3 }

[objective]
false_opens = 10
detection_delay = 1
constraints = ["missed_incidents == 0"]
"#;

    #[test]
    fn a_good_file_expands_in_documented_order() {
        let d = dir();
        let text = format!("constraints = [\"p99_latency <= \\\"2s\\\"\"]\n{GOOD}");
        let s = parse(&d, &text).unwrap();
        assert_eq!(s.name, "sw");
        assert_eq!(s.replicates, 4);
        assert_eq!(s.seed, Some(7));
        let names: Vec<String> =
            s.scenarios.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, vec!["a.toml", "b.toml"]);
        assert_eq!(s.configurations.len(), 3 * 6 + 3);
        assert_eq!(s.configurations.get(0).unwrap().label(), "consecutive[failure_threshold=3,cooldown=10s]");
        assert_eq!(
            s.configurations.get(1).unwrap().label(),
            "consecutive[failure_threshold=3,cooldown=19s700ms]"
        );
        assert_eq!(s.configurations.get(6).unwrap().label(), "consecutive[failure_threshold=5,cooldown=10s]");
        assert_eq!(s.configurations.get(18).unwrap().label(), "windowed[window=1m,failure_rate=0.1]");
        assert_eq!(s.configurations.get(20).unwrap().label(), "windowed[window=1m,failure_rate=0.5]");
        assert_eq!(s.configurations.get(20).unwrap().id, 20);
        let o = s.objective.unwrap();
        assert_eq!(o.weights, vec![(Metric::FalseOpens, 10.0), (Metric::DetectionDelayMeanS, 1.0)]);
        let cs: Vec<&str> = s.constraints.iter().map(|c| c.metric.name()).collect();
        assert_eq!(cs, vec!["latency_p99_ms", "missed_incidents"]);
        assert_eq!(s.constraints[0].value, 2000.0);
        assert_eq!(s.pareto.len(), 2);
    }

    #[test]
    fn defaults_apply_when_keys_are_absent() {
        let d = dir();
        let s = parse(&d, "scenarios = [\"scen/b.toml\"]\n[[policies]]\npreset = \"consecutive\"\n").unwrap();
        assert_eq!((s.replicates, s.seed, s.objective.is_none()), (DEFAULT_REPLICATES, None, true));
        assert_eq!((s.auto, s.rule), (false, Rule::default()));
        let auto = parse(
            &d,
            "scenarios = [\"scen/b.toml\"]\nreplicates = \"auto\"\nconfidence = 0.9\nindifference = 2\n\
             [[policies]]\npreset = \"consecutive\"\n",
        )
        .unwrap();
        assert_eq!((auto.auto, auto.replicates), (true, DEFAULT_MAX_REPLICATES));
        assert_eq!(auto.rule, Rule { confidence: 0.9, indifference: 2.0 });
        let max = parse(
            &d,
            "scenarios = [\"scen/b.toml\"]\nreplicates = \"auto\"\nmax_replicates = 20\n[[policies]]\npreset = \"consecutive\"\n",
        )
        .unwrap();
        assert_eq!((max.auto, max.replicates), (true, 20));
        // No constraints: no miss in any replicate.
        assert!(s.constraints_default);
        assert_eq!(s.constraints.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), [DEFAULT_CONSTRAINT]);
        let none = parse(
            &d,
            "scenarios = [\"scen/b.toml\"]\nconstraints = []\n[[policies]]\npreset = \"consecutive\"\n",
        )
        .unwrap();
        assert!(none.constraints.is_empty() && !none.constraints_default);
        assert_eq!(s.configurations.len(), 1);
        assert_eq!(s.configurations.get(0).unwrap().label(), "consecutive");
    }

    #[test]
    fn the_command_line_replaces_the_replicates() {
        let d = dir();
        let mut s =
            parse(&d, "scenarios = [\"scen/b.toml\"]\n[[policies]]\npreset = \"consecutive\"\n").unwrap();
        assert!(
            s.set_replicates(None, Some(5)).unwrap_err().contains("--max-replicates applies to replicates")
        );
        s.set_replicates(Some(Replicates::Auto), None).unwrap();
        assert_eq!((s.auto, s.replicates), (true, DEFAULT_MAX_REPLICATES));
        s.set_replicates(None, Some(20)).unwrap();
        assert_eq!((s.auto, s.replicates), (true, 20));
        assert!(s.set_replicates(None, Some(0)).unwrap_err().contains("between 1 and 1000"));
        s.set_replicates(Some(Replicates::Count(7)), None).unwrap();
        assert_eq!((s.auto, s.replicates), (false, 7));
        assert_eq!(Replicates::parse("auto").unwrap(), Replicates::Auto);
        assert_eq!(Replicates::parse(" 12 ").unwrap(), Replicates::Count(12));
        assert!(Replicates::parse("0").unwrap_err().to_string().contains("or `auto`"));
        assert!(Replicates::parse("some").is_err());
    }

    #[test]
    fn a_list_valued_parameter_is_fixed_by_wrapping_it() {
        let d = dir();
        let text = "scenarios = [\"scen/b.toml\"]\n[[policies]]\npreset = \"consecutive\"\n\
                    failure_on = [[\"error\", \"timeout\"], [\"error\"]]\nfailure_threshold = 3\n";
        let s = parse(&d, text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.configurations.len(), 2);
        assert_eq!(
            s.configurations.get(0).unwrap().overrides_inline(),
            "{ failure_on = [\"error\", \"timeout\"], failure_threshold = 3 }"
        );
        let e = err(
            "scenarios = [\"scen/b.toml\"]\n[[policies]]\npreset = \"consecutive\"\nfailure_threshold = [{ a = 1 }]\n",
        );
        assert!(e.contains("sw.toml:4:21: expected a list of values"), "{e}");
    }

    #[test]
    fn bad_files_report_file_line_col_and_what_was_expected() {
        let p = "scenarios = [\"scen/a.toml\"]\n";
        for (text, expected) in [
            (
                format!("{p}replicate = 3\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:1: unknown field `replicate`",
            ),
            (
                format!("{p}replicates = 0\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:14: `replicates` must be at least 1",
            ),
            (
                format!("{p}replicates = \"many\"\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:14: `replicates` must be a whole number or \"auto\"",
            ),
            (
                format!("{p}max_replicates = 5\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:18: `max_replicates` applies to `replicates = \"auto\"` only",
            ),
            (
                format!(
                    "{p}replicates = \"auto\"\nmax_replicates = 0\n[[policies]]\npreset = \"consecutive\"\n"
                ),
                "sw.toml:3:18: `max_replicates` must be between 1 and 1000",
            ),
            (
                format!("{p}confidence = 95\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:14: `confidence` must be between 0.5 and 0.9999",
            ),
            (
                format!("{p}indifference = -1\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:16: `indifference` must be a number of cost units",
            ),
            (
                format!("{p}[[policies]]\npreset = \"consecutive\"\nfailure_threshold = []\n"),
                "sw.toml:4:21: an empty list",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"consecutive\"\ncooldown = {{ from = \"5m\", to = \"10s\", steps = 3 }}\n"
                ),
                "sw.toml:4:12: `from` (5m) is greater than `to` (10s)",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"consecutive\"\ncooldown = {{ from = \"0s\", to = \"10s\", steps = 3, scale = \"log\" }}\n"
                ),
                "log scale needs `from` > 0",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"consecutive\"\ncooldown = {{ from = \"1s\", to = \"10s\", step = 3 }}\n"
                ),
                "sw.toml:4:12: unknown key `step` in a range",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"consecutive\"\ncooldown = {{ from = \"1s\", to = 10, steps = 3 }}\n"
                ),
                "both numbers or both durations",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"consecutive\"\ncooldown = {{ from = \"1s\", to = \"10s\", steps = 3, scale = \"exp\" }}\n"
                ),
                "`scale` must be \"linear\" or \"log\"",
            ),
            (
                format!("{p}[[policies]]\npreset = \"consecutve\"\n"),
                "sw.toml:3:10: unknown preset `consecutve`",
            ),
            (format!("{p}[[policies]]\nfailure_threshold = 3\n"), "needs `preset"),
            (
                format!("{p}[[policies]]\npreset = \"consecutive\"\nfailure_treshold = 3\n"),
                "sw.toml:4:20: `failure_treshold` = 3: unknown parameter",
            ),
            (
                format!("{p}[[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, 0]\n"),
                "sw.toml:4:21: `failure_threshold` = 0: expected a positive integer",
            ),
            (
                format!(
                    "{p}[[policies]]\npreset = \"windowed\"\nwindow = [\"1s\", \"1m\"]\nbucket = \"10s\"\n"
                ),
                "sw.toml:2:1: configuration `windowed[window=1s,bucket=10s]`: window is shorter",
            ),
            (
                format!("{p}constraints = [\"flops <= 1\"]\n[[policies]]\npreset = \"consecutive\"\n"),
                "sw.toml:2:16: constraint \"flops <= 1\": unknown metric `flops`",
            ),
            (
                format!("{p}constraints = [\"false_opens =< 1\"]\n[[policies]]\npreset = \"consecutive\"\n"),
                "unknown operator `=<`",
            ),
            (
                format!("{p}[[policies]]\npreset = \"consecutive\"\n[objective]\nflops = 1\n"),
                "sw.toml:5:9: objective: unknown metric `flops`",
            ),
            (
                format!("{p}[[policies]]\npreset = \"consecutive\"\n[objective]\nflaps = \"x\"\n"),
                "sw.toml:5:9:",
            ),
            (
                "scenarios = [\"nope/*.toml\"]\n[[policies]]\npreset = \"consecutive\"\n".to_string(),
                "sw.toml:1:14: \"nope/*.toml\" names no file",
            ),
            (
                "scenarios = [\"scen/missing.toml\"]\n[[policies]]\npreset = \"consecutive\"\n".to_string(),
                "sw.toml:1:14: \"scen/missing.toml\" names no file",
            ),
            (
                "scenarios = []\n[[policies]]\npreset = \"consecutive\"\n".to_string(),
                "sw.toml:1:13: `scenarios` is empty",
            ),
            (format!("{p}policies = []\n"), "`policies` is empty"),
            (p.to_string(), "missing field `policies`"),
            (
                format!("{p}pareto = [[\"flaps\"]]\n[[policies]]\npreset = \"consecutive\"\n"),
                "at least two metrics",
            ),
            (format!("{p}name = \"a/b\"\n[[policies]]\npreset = \"consecutive\"\n"), "plain folder name"),
        ] {
            let e = err(&text);
            assert!(e.contains(expected), "expected {expected:?} in:\n{e}\nfor:\n{text}");
        }
    }

    #[test]
    fn line_and_column_are_one_based() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("ab\ncd", 99), (2, 3));
    }

    #[test]
    fn a_baseline_is_a_grid_configuration_or_one_added_after_them() {
        let d = dir();
        let head = "scenarios = [\"scen/a.toml\"]\n[[policies]]\npreset = \"consecutive\"\nfailure_threshold = [3, 5]\ncooldown = \"1m\"\n";
        // The same preset and overrides, in another order: the grid's configuration 1.
        let s = parse(
            &d,
            &format!(
                "baseline = {{ preset = \"consecutive\", cooldown = \"1m\", failure_threshold = 5 }}\n{head}"
            ),
        )
        .unwrap();
        assert_eq!((s.baseline, s.configurations.len()), (Some(1), 2));
        // Another configuration: added after the grid's, with the next id.
        let s =
            parse(&d, &format!("baseline = {{ preset = \"windowed\", window = \"30s\" }}\n{head}")).unwrap();
        assert_eq!((s.baseline, s.configurations.len()), (Some(2), 3));
        assert_eq!(
            (s.configurations.get(2).unwrap().id, s.configurations.get(2).unwrap().label()),
            (2, "windowed[window=30s]".to_string())
        );
        // A list-valued parameter, wrapped as in a policy entry.
        let s = parse(
            &d,
            &format!("baseline = {{ preset = \"consecutive\", failure_on = [[\"error\"]] }}\n{head}"),
        )
        .unwrap();
        assert_eq!(
            s.configurations.get(2).unwrap().overrides[0].1,
            toml::Value::Array(vec![toml::Value::String("error".into())])
        );
        assert_eq!(parse(&d, head).unwrap().baseline, None);
    }

    #[test]
    fn a_bad_baseline_is_refused_where_it_is_written() {
        let tail = "scenarios = [\"scen/a.toml\"]\n[[policies]]\npreset = \"consecutive\"\n";
        for (baseline, expected) in [
            ("baseline = { failure_threshold = 5 }", "sw.toml:1:12: `baseline` needs `preset"),
            ("baseline = { preset = \"consecutve\" }", "sw.toml:1:23: baseline: unknown preset `consecutve`"),
            (
                "baseline = { preset = \"consecutive\", failure_threshold = [3, 5] }",
                "sw.toml:1:58: baseline: `failure_threshold` has 2 values",
            ),
            (
                "baseline = { preset = \"consecutive\", failure_threshold = 0 }",
                "sw.toml:1:58: baseline: `failure_threshold` = 0: expected a positive integer",
            ),
            (
                "baseline = { preset = \"consecutive\", failure_treshold = 3 }",
                "sw.toml:1:57: baseline: `failure_treshold` = 3: unknown parameter",
            ),
            (
                "baseline = { preset = \"windowed\", window = \"1s\", bucket = \"10s\" }",
                "sw.toml:1:12: baseline: window is shorter than its bucket",
            ),
            (
                "baseline = \"consecutive\"",
                "sw.toml:1:12: invalid type: string \"consecutive\", expected a policy table",
            ),
        ] {
            let e = err(&format!("{baseline}\n{tail}"));
            assert!(e.contains(expected), "expected {expected:?} in:\n{e}");
        }
    }
}
