//! Grid expansion: each `[[policies]]` entry of a sweep file is a preset plus parameters whose
//! values are fixed, listed or a range; its configurations are the cartesian product.
//!
//! Order (documented, stable): entries in file order; within an entry, parameters in file order,
//! the last varying fastest. Configuration ids are positions in that order, so a sweep split into
//! shards and merged back keeps the same ids. An exact duplicate of an earlier configuration
//! (same preset, same values) is dropped.

use crate::time::Dur;
use crate::{Error, Result};
use std::collections::BTreeSet;
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
pub fn expand(grids: &[PolicyGrid]) -> Result<Vec<Configuration>> {
    let mut total: usize = 0;
    for (i, g) in grids.iter().enumerate() {
        let n = g.params.iter().try_fold(1usize, |acc, p| acc.checked_mul(p.values.len()));
        total =
            n.and_then(|n| total.checked_add(n)).filter(|t| *t <= MAX_CONFIGURATIONS).ok_or_else(|| {
                Error::invalid(format!(
                    "policies[{i}] ({}): the grid has more than {MAX_CONFIGURATIONS} configurations",
                    g.preset
                ))
            })?;
    }
    let mut out: Vec<Configuration> = Vec::with_capacity(total);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for g in grids.iter().filter(|g| g.params.iter().all(|p| !p.values.is_empty())) {
        let mut index = vec![0usize; g.params.len()];
        loop {
            let overrides: Vec<(String, toml::Value)> =
                g.params.iter().zip(&index).map(|(p, &i)| (p.name.clone(), p.values[i].clone())).collect();
            let candidate = Configuration { id: out.len(), preset: g.preset.clone(), overrides };
            if seen.insert(format!("{} {}", candidate.preset, candidate.overrides_inline())) {
                out.push(candidate);
            }
            // Odometer: the last parameter varies fastest.
            let mut k = g.params.len();
            let done = loop {
                if k == 0 {
                    break true;
                }
                k -= 1;
                index[k] += 1;
                if index[k] < g.params[k].values.len() {
                    break false;
                }
                index[k] = 0;
            };
            if done {
                break;
            }
        }
    }
    Ok(out)
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

    #[test]
    fn oversized_grid_is_refused() {
        let many: Vec<toml::Value> = (0..1001).map(I).collect();
        let g = grid("consecutive", &[("a", many.clone()), ("b", many)]);
        assert!(expand(&[g]).unwrap_err().to_string().contains("more than 1000000"));
    }
}
