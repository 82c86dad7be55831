//! Grid expansion: each `[[policies]]` entry of a sweep file is a preset plus parameters whose
//! values are fixed, listed or a range; its configurations are the cartesian product.
//!
//! Order (documented, stable): entries in file order; within an entry, parameters in file order,
//! the last varying fastest. Configuration ids are positions in that order, so a sweep split into
//! shards and merged back keeps the same ids. An exact duplicate of an earlier configuration
//! (same preset, same values) is dropped.

use crate::time::Dur;
use crate::{Error, Result};
use std::fmt::Write as _;

/// The most configurations one sweep may expand to (a guard against a typo such as `steps = 1e6`).
pub const MAX_CONFIGURATIONS: usize = 1_000_000;
/// The most values one range may produce.
pub const MAX_STEPS: i64 = 100_000;

/// One swept parameter: its name and the values it takes, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The preset parameter's name.
    pub name: String,
    /// Its values (one for a fixed parameter), distinct, in the order they are swept.
    pub values: Vec<toml::Value>,
}

/// One `[[policies]]` entry: a preset and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyGrid {
    /// The preset name.
    pub preset: String,
    /// Parameters in file order.
    pub params: Vec<Param>,
}

/// One configuration of a sweep: a preset with its overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Configuration {
    /// Position in the sweep's grid order (stable across shards).
    pub id: usize,
    /// The preset.
    pub preset: String,
    /// Overrides in file order.
    pub overrides: Vec<(String, toml::Value)>,
}

impl Configuration {
    /// A short label, `preset[key=value,key=value]` (strings unquoted; the form `run` prints
    /// and `compare --policy` reads), or the preset alone without overrides.
    pub fn label(&self) -> String {
        if self.overrides.is_empty() {
            return self.preset.clone();
        }
        let mut s = format!("{}[", self.preset);
        for (i, (k, v)) in self.overrides.iter().enumerate() {
            let _ = write!(s, "{}{k}={}", if i == 0 { "" } else { "," }, plain(v));
        }
        s.push(']');
        s
    }

    /// The overrides as a TOML table (for a policy spec).
    pub fn overrides_table(&self) -> toml::Table {
        self.overrides.iter().cloned().collect()
    }

    /// The overrides as a one-line TOML inline table, `{ failure_threshold = 5, cooldown = "30s" }`
    /// (the form stored in runs.csv and read back by `recommend`).
    pub fn overrides_inline(&self) -> String {
        if self.overrides.is_empty() {
            return "{}".into();
        }
        let items: Vec<String> = self.overrides.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        format!("{{ {} }}", items.join(", "))
    }

    /// A ready-to-paste `[policy]` section for a scenario file.
    pub fn policy_snippet(&self) -> String {
        let mut s = format!("[policy]\npreset = {}\n", toml::Value::String(self.preset.clone()));
        for (k, v) in &self.overrides {
            let _ = writeln!(s, "{k} = {v}");
        }
        s
    }
}

/// A value as it reads in a label: strings without quotes, everything else as TOML.
pub fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The configurations of every entry, in grid order, with ids from 0. Fails when the product
/// exceeds [`MAX_CONFIGURATIONS`].
#[cfg(test)]
pub fn expand(grids: &[PolicyGrid]) -> Result<Vec<Configuration>> {
    Ok(ConfigGrid::new(grids.to_vec())?.iter().collect())
}

/// The configurations of a sweep, made from their position when asked (mixed radix over each
/// entry's parameter lists, the last varying fastest) rather than held: what it keeps is the
/// entries, the positions of the duplicates it drops, and the configurations added after the
/// grid (the baseline).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigGrid {
    grids: Vec<PolicyGrid>,
    /// Where each entry's configurations start, counting duplicates, and the end.
    starts: Vec<usize>,
    /// Positions (counting duplicates) of the duplicates dropped, increasing.
    dropped: Vec<usize>,
    /// Configurations added after the grid's.
    extra: Vec<Configuration>,
    /// Configurations standing in for the grid's at their ids (a sweep's `target_mode =
    /// "nearest"`).
    replaced: std::collections::BTreeMap<usize, Configuration>,
}

impl ConfigGrid {
    /// The grid of `grids`. Fails when the product exceeds [`MAX_CONFIGURATIONS`].
    pub fn new(grids: Vec<PolicyGrid>) -> Result<ConfigGrid> {
        let mut starts = vec![0usize];
        for (i, g) in grids.iter().enumerate() {
            let n = g.params.iter().try_fold(1usize, |acc, p| acc.checked_mul(p.values.len()));
            let total = n
                .and_then(|n| starts[i].checked_add(n))
                .filter(|t| *t <= MAX_CONFIGURATIONS)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "policies[{i}] ({}): the grid has more than {MAX_CONFIGURATIONS} configurations",
                        g.preset
                    ))
                })?;
            starts.push(total);
        }
        let mut dropped = Vec::new();
        for (b, g) in grids.iter().enumerate() {
            // Per parameter, whether each value repeats an earlier one of its list; per earlier
            // entry of the same preset and parameters, whether each value is among its values.
            let text = |v: &toml::Value| v.to_string();
            let repeats: Vec<Vec<bool>> = g
                .params
                .iter()
                .map(|p| {
                    (0..p.values.len())
                        .map(|j| p.values[..j].iter().any(|e| text(e) == text(&p.values[j])))
                        .collect()
                })
                .collect();
            let earlier: Vec<Vec<Vec<bool>>> = grids[..b]
                .iter()
                .filter(|a| {
                    a.preset == g.preset
                        && a.params.iter().map(|p| &p.name).eq(g.params.iter().map(|p| &p.name))
                })
                .map(|a| {
                    a.params
                        .iter()
                        .zip(&g.params)
                        .map(|(pa, pb)| {
                            pb.values.iter().map(|v| pa.values.iter().any(|e| text(e) == text(v))).collect()
                        })
                        .collect()
                })
                .collect();
            if earlier.is_empty() && repeats.iter().flatten().all(|r| !r) {
                continue;
            }
            let mut index = vec![0usize; g.params.len()];
            for raw in starts[b]..starts[b + 1] {
                let repeated = index.iter().zip(&repeats).any(|(&i, r)| r[i]);
                let seen = earlier.iter().any(|a| index.iter().zip(a).all(|(&i, inside)| inside[i]));
                if repeated || seen {
                    dropped.push(raw);
                }
                // Odometer: the last parameter varies fastest.
                for k in (0..index.len()).rev() {
                    index[k] += 1;
                    if index[k] < g.params[k].values.len() {
                        break;
                    }
                    index[k] = 0;
                }
            }
        }
        Ok(ConfigGrid { grids, starts, dropped, extra: Vec::new(), replaced: Default::default() })
    }

    /// How many configurations.
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0) - self.dropped.len() + self.extra.len()
    }

    /// Configuration `id` (`None` beyond the last).
    pub fn get(&self, id: usize) -> Option<Configuration> {
        if let Some(c) = self.replaced.get(&id) {
            return Some(c.clone());
        }
        let in_grid = self.len() - self.extra.len();
        if id >= in_grid {
            return self.extra.get(id - in_grid).cloned();
        }
        // The position counting duplicates: past every dropped one at or before it.
        let (mut skipped, mut hi) = (0, self.dropped.len());
        while skipped < hi {
            let mid = (skipped + hi) / 2;
            if self.dropped[mid] - mid <= id {
                skipped = mid + 1;
            } else {
                hi = mid;
            }
        }
        let raw = id + skipped;
        let b = self.starts.partition_point(|s| *s <= raw).saturating_sub(1);
        let g = self.grids.get(b)?;
        let mut rest = raw - self.starts[b];
        let mut picked = vec![0usize; g.params.len()];
        for (k, p) in g.params.iter().enumerate().rev() {
            picked[k] = rest % p.values.len();
            rest /= p.values.len();
        }
        let overrides =
            g.params.iter().zip(picked).map(|(p, i)| (p.name.clone(), p.values[i].clone())).collect();
        Some(Configuration { id, preset: g.preset.clone(), overrides })
    }

    /// Every configuration, in order, made one at a time.
    pub fn iter(&self) -> impl Iterator<Item = Configuration> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// Runs `preset` with `overrides` in place of configuration `id` (which keeps its id).
    pub fn replace(&mut self, id: usize, preset: String, overrides: Vec<(String, toml::Value)>) {
        self.replaced.insert(id, Configuration { id, preset, overrides });
    }

    /// Adds a configuration after the others (its id is the next), returning its id.
    pub fn push(&mut self, preset: String, overrides: Vec<(String, toml::Value)>) -> usize {
        let id = self.len();
        self.extra.push(Configuration { id, preset, overrides });
        id
    }
}

/// How range steps are spaced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Equal differences.
    Linear,
    /// Equal ratios (both ends must be positive).
    Log,
}

/// The kind of values a range produces, from the type of its ends.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Ends {
    /// Both ends TOML integers: values rounded to integers.
    Int(i64, i64),
    /// Numbers with a fractional part: values rounded to 6 significant digits.
    Float(f64, f64),
    /// Duration strings: values rounded to 3 significant digits (at least 1 µs).
    Duration(Dur, Dur),
}

/// Expands `from..=to` in `steps` values on `scale`, rounded as [`Ends`] says; consecutive
/// duplicates created by rounding are dropped. Errors say what is impossible.
pub fn expand_range(ends: Ends, steps: i64, scale: Scale) -> Result<Vec<toml::Value>> {
    let (a, b) = match ends {
        Ends::Int(a, b) => (a as f64, b as f64),
        Ends::Float(a, b) => (a, b),
        Ends::Duration(a, b) => (a.micros() as f64, b.micros() as f64),
    };
    if !(a.is_finite() && b.is_finite()) {
        return Err(Error::invalid("`from` and `to` must be finite numbers"));
    }
    if a > b {
        return Err(Error::invalid(format!(
            "`from` ({}) is greater than `to` ({})",
            show(ends, a),
            show(ends, b)
        )));
    }
    if !(1..=MAX_STEPS).contains(&steps) {
        return Err(Error::invalid(format!("`steps` must be between 1 and {MAX_STEPS}, found {steps}")));
    }
    if steps == 1 && a != b {
        return Err(Error::invalid(
            "`steps = 1` gives a single value: use `from == to`, or at least 2 steps",
        ));
    }
    if scale == Scale::Log && a <= 0.0 {
        return Err(Error::invalid(format!("a log scale needs `from` > 0, found {}", show(ends, a))));
    }
    let mut out: Vec<toml::Value> = Vec::new();
    for i in 0..steps {
        let x = if i == 0 {
            a
        } else if i == steps - 1 {
            b
        } else {
            let t = i as f64 / (steps - 1) as f64;
            match scale {
                Scale::Linear => a + (b - a) * t,
                Scale::Log => a * (b / a).powf(t),
            }
        };
        let v = match ends {
            Ends::Int(..) => toml::Value::Integer(x.round() as i64),
            Ends::Float(..) => toml::Value::Float(round_significant(x, 6)),
            Ends::Duration(..) => {
                toml::Value::String(Dur::from_micros(round_significant(x, 3).max(1.0) as u64).to_string())
            }
        };
        if out.last() != Some(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

fn show(ends: Ends, x: f64) -> String {
    match ends {
        Ends::Duration(..) => Dur::from_micros(x as u64).to_string(),
        _ => x.to_string(),
    }
}

/// `x` rounded to `digits` significant decimal digits (exact for integers below 10^digits).
pub fn round_significant(x: f64, digits: usize) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{:.*e}", digits.saturating_sub(1), x).parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use toml::Value::{Integer as I, String as S};

    fn s(x: &str) -> toml::Value {
        S(x.into())
    }

    #[test]
    fn linear_integer_range_rounds_and_deduplicates() {
        let v = expand_range(Ends::Int(1, 4), 7, Scale::Linear).unwrap();
        assert_eq!(v, vec![I(1), I(2), I(3), I(4)]); // 1, 1.5→2, 2, 2.5→3, 3, 3.5→4, 4
        let v = expand_range(Ends::Int(2, 20), 4, Scale::Linear).unwrap();
        assert_eq!(v, vec![I(2), I(8), I(14), I(20)]);
    }

    #[test]
    fn log_duration_range_of_the_issue() {
        let d = |t: &str| Dur::parse(t).unwrap();
        let v = expand_range(Ends::Duration(d("10s"), d("5m")), 6, Scale::Log).unwrap();
        // 10 s · 30^(i/5): 10, 19.74, 38.98, 76.96, 151.9, 300 s, to 3 significant digits.
        assert_eq!(v, vec![s("10s"), s("19s700ms"), s("39s"), s("1m17s"), s("2m32s"), s("5m")]);
    }

    #[test]
    fn log_integer_and_float_ranges() {
        let v = expand_range(Ends::Int(1, 100), 5, Scale::Log).unwrap();
        assert_eq!(v, vec![I(1), I(3), I(10), I(32), I(100)]);
        let v = expand_range(Ends::Float(0.1, 0.5), 5, Scale::Linear).unwrap();
        let f: Vec<f64> = v.iter().map(|x| x.as_float().unwrap()).collect();
        assert_eq!(f, vec![0.1, 0.2, 0.3, 0.4, 0.5]);
        assert_eq!(expand_range(Ends::Int(5, 5), 1, Scale::Linear).unwrap(), vec![I(5)]);
        assert_eq!(expand_range(Ends::Int(5, 5), 3, Scale::Log).unwrap(), vec![I(5)]);
    }

    #[test]
    fn impossible_ranges_are_refused() {
        for (ends, steps, scale, expected) in [
            (Ends::Int(5, 1), 3, Scale::Linear, "greater than `to`"),
            (Ends::Int(1, 5), 0, Scale::Linear, "`steps` must be between 1"),
            (Ends::Int(1, 5), 1, Scale::Linear, "single value"),
            (Ends::Int(0, 5), 3, Scale::Log, "log scale needs `from` > 0"),
            (Ends::Float(-1.0, 1.0), 3, Scale::Log, "log scale"),
            (Ends::Duration(Dur::ZERO, Dur::from_secs(1)), 3, Scale::Log, "log scale"),
            (Ends::Float(0.0, f64::INFINITY), 3, Scale::Linear, "finite"),
        ] {
            let err = expand_range(ends, steps, scale).unwrap_err().to_string();
            assert!(err.contains(expected), "{ends:?}: {err}");
        }
    }

    fn grid(preset: &str, params: &[(&str, Vec<toml::Value>)]) -> PolicyGrid {
        PolicyGrid {
            preset: preset.into(),
            params: params.iter().map(|(n, v)| Param { name: (*n).into(), values: v.clone() }).collect(),
        }
    }

    #[test]
    fn cartesian_product_last_parameter_fastest_over_several_families() {
        let grids = [
            grid(
                "consecutive",
                &[("failure_threshold", vec![I(3), I(5)]), ("cooldown", vec![s("10s"), s("1m")])],
            ),
            grid("windowed", &[("window", vec![s("30s")]), ("failure_rate", vec![I(1), I(2), I(3)])]),
            grid("gobreaker", &[]),
        ];
        let configs = expand(&grids).unwrap();
        let labels: Vec<String> = configs.iter().map(|c| format!("{} {}", c.id, c.label())).collect();
        assert_eq!(
            labels,
            vec![
                "0 consecutive[failure_threshold=3,cooldown=10s]",
                "1 consecutive[failure_threshold=3,cooldown=1m]",
                "2 consecutive[failure_threshold=5,cooldown=10s]",
                "3 consecutive[failure_threshold=5,cooldown=1m]",
                "4 windowed[window=30s,failure_rate=1]",
                "5 windowed[window=30s,failure_rate=2]",
                "6 windowed[window=30s,failure_rate=3]",
                "7 gobreaker",
            ]
        );
        assert_eq!(configs[1].overrides_inline(), "{ failure_threshold = 3, cooldown = \"1m\" }");
        assert_eq!(configs[7].overrides_inline(), "{}");
        assert_eq!(
            configs[1].policy_snippet(),
            "[policy]\npreset = \"consecutive\"\nfailure_threshold = 3\ncooldown = \"1m\"\n"
        );
        assert_eq!(configs[1].overrides_table().get("failure_threshold"), Some(&I(3)));
    }

    #[test]
    fn duplicate_configurations_are_dropped_and_ids_stay_dense() {
        let grids = [
            grid("consecutive", &[("failure_threshold", vec![I(3)])]),
            grid("consecutive", &[("failure_threshold", vec![I(3), I(4)])]),
        ];
        let configs = expand(&grids).unwrap();
        assert_eq!(configs.len(), 2);
        assert_eq!((configs[1].id, configs[1].label()), (1, "consecutive[failure_threshold=4]".to_string()));
    }

    /// The grid expanded whole, duplicates found by their text (as the grid once was).
    fn expanded_whole(grids: &[PolicyGrid]) -> Vec<Configuration> {
        let mut out: Vec<Configuration> = Vec::new();
        let mut seen = BTreeSet::new();
        for g in grids.iter().filter(|g| g.params.iter().all(|p| !p.values.is_empty())) {
            let n: usize = g.params.iter().map(|p| p.values.len()).product();
            for raw in 0..n {
                let mut rest = raw;
                let mut overrides = vec![(String::new(), I(0)); g.params.len()];
                for (k, p) in g.params.iter().enumerate().rev() {
                    overrides[k] = (p.name.clone(), p.values[rest % p.values.len()].clone());
                    rest /= p.values.len();
                }
                let c = Configuration { id: out.len(), preset: g.preset.clone(), overrides };
                if seen.insert(format!("{} {}", c.preset, c.overrides_inline())) {
                    out.push(c);
                }
            }
        }
        out
    }

    #[test]
    fn a_lazy_grid_makes_the_configurations_of_the_whole_expansion() {
        let grids = [
            grid(
                "consecutive",
                &[("failure_threshold", vec![I(3), I(5), I(3)]), ("cooldown", vec![s("1m"), s("2m")])],
            ),
            grid("windowed", &[("window", vec![])]),
            grid(
                "consecutive",
                &[("failure_threshold", vec![I(4), I(5)]), ("cooldown", vec![s("2m"), s("3m")])],
            ),
            grid("consecutive", &[("cooldown", vec![s("1m")]), ("failure_threshold", vec![I(3)])]),
            grid("gobreaker", &[]),
            grid("gobreaker", &[]),
            grid(
                "consecutive",
                &[("failure_threshold", vec![I(5), I(4)]), ("cooldown", vec![s("3m"), s("1m")])],
            ),
        ];
        let whole = expanded_whole(&grids);
        let mut lazy = ConfigGrid::new(grids.to_vec()).unwrap();
        assert_eq!(lazy.iter().collect::<Vec<_>>(), whole);
        assert_eq!(lazy.len(), whole.len());
        assert_eq!(lazy.get(whole.len()), None);
        let id = lazy.push("windowed".into(), vec![]);
        assert_eq!(
            (id, lazy.len(), lazy.get(id).unwrap().label()),
            (whole.len(), whole.len() + 1, "windowed".into())
        );
    }

    #[test]
    fn oversized_grid_is_refused() {
        let many: Vec<toml::Value> = (0..1001).map(I).collect();
        let g = grid("consecutive", &[("a", many.clone()), ("b", many)]);
        assert!(expand(&[g]).unwrap_err().to_string().contains("more than 1000000"));
    }
}
