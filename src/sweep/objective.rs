//! The objective of a sweep: weights over metric columns whose weighted sum is a run's cost.
//! Lower cost is better; a negative weight rewards a metric (e.g. availability).

use super::constraint::resolve_metric;

/// Weights over metric columns, in the order written. `cost = Σ weight · metric`, where a metric
/// with no value in a run (no incidents, so no detection delay) contributes nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Objective {
    /// (metric column, weight) pairs, each metric at most once.
    pub weights: Vec<(String, f64)>,
}

impl Objective {
    /// An objective from (metric, weight) pairs; a repeated metric keeps its last weight.
    pub fn new<S: Into<String>>(pairs: impl IntoIterator<Item = (S, f64)>) -> Objective {
        let mut o = Objective::default();
        for (m, w) in pairs {
            o.set(&m.into(), w);
        }
        o
    }

    /// Sets one metric's weight, replacing an earlier one (a weight of 0 removes its influence).
    pub fn set(&mut self, metric: &str, weight: f64) {
        match self.weights.iter_mut().find(|(m, _)| m == metric) {
            Some(slot) => slot.1 = weight,
            None => self.weights.push((metric.to_string(), weight)),
        }
    }

    /// The weight of `metric` (0 when absent).
    pub fn weight(&self, metric: &str) -> f64 {
        self.weights.iter().find(|(m, _)| m == metric).map_or(0.0, |(_, w)| *w)
    }

    /// Parses a command-line override `metric=weight` (aliases accepted, see
    /// [`resolve_metric`]) against the known metric `columns`.
    pub fn parse_override<S: AsRef<str>>(text: &str, columns: &[S]) -> Result<(String, f64), String> {
        let Some((name, weight)) = text.split_once('=') else {
            return Err(format!("objective {text:?}: expected `metric=weight`, e.g. `false_opens=10`"));
        };
        let metric = resolve_metric(name, columns).map_err(|e| format!("objective {text:?}: {e}"))?;
        let weight = check_weight(weight.trim().parse::<f64>().ok(), weight.trim())
            .map_err(|e| format!("objective {text:?}: {e}"))?;
        Ok((metric, weight))
    }

    /// Binds the objective to the column order of a result table, so costs are computed by
    /// index. Fails when a weighted metric is not among `columns`.
    pub fn bind<S: AsRef<str>>(&self, columns: &[S]) -> Result<BoundObjective, String> {
        let mut terms = Vec::with_capacity(self.weights.len());
        for (metric, weight) in &self.weights {
            let index = columns
                .iter()
                .position(|c| c.as_ref() == metric)
                .ok_or_else(|| format!("objective metric `{metric}` is not a column of the results"))?;
            terms.push((index, *weight));
        }
        Ok(BoundObjective { terms })
    }
}

/// Checks a weight read from a file or the command line: a finite number.
pub(crate) fn check_weight(value: Option<f64>, text: &str) -> Result<f64, String> {
    match value {
        Some(w) if w.is_finite() => Ok(w),
        _ => Err(format!("expected a finite number as the weight, found {text:?}")),
    }
}

/// An [`Objective`] whose metrics are column indices of one result table.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundObjective {
    terms: Vec<(usize, f64)>,
}

impl BoundObjective {
    /// The cost of one row of metric values (summed in the objective's order).
    pub fn cost(&self, values: &[Option<f64>]) -> f64 {
        let mut total = 0.0;
        for &(i, w) in &self.terms {
            if let Some(v) = values.get(i).copied().flatten() {
                total += w * v;
            }
        }
        total
    }

    /// (column index, weight) of every weighted metric, in the objective's order.
    pub fn terms(&self) -> &[(usize, f64)] {
        &self.terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [&str; 3] = ["false_opens", "latency_p99_ms", "availability"];

    #[test]
    fn cost_is_the_weighted_sum_of_present_values() {
        let o = Objective::new([("false_opens", 10.0), ("availability", -100.0), ("latency_p99_ms", 0.01)]);
        let b = o.bind(&COLS).unwrap();
        assert_eq!(b.cost(&[Some(2.0), Some(1500.0), Some(0.5)]), 20.0 - 50.0 + 15.0);
        assert_eq!(b.cost(&[Some(2.0), None, None]), 20.0);
        assert!(Objective::new([("flaps", 1.0)]).bind(&COLS).unwrap_err().contains("flaps"));
    }

    #[test]
    fn overrides_parse_and_replace() {
        let mut o = Objective::new([("false_opens", 10.0)]);
        let (m, w) = Objective::parse_override("p99_latency=0.5", &COLS).unwrap();
        assert_eq!((m.as_str(), w), ("latency_p99_ms", 0.5));
        o.set(&m, w);
        o.set("false_opens", 3.0);
        assert_eq!(o.weights, vec![("false_opens".into(), 3.0), ("latency_p99_ms".into(), 0.5)]);
        assert_eq!(o.weight("availability"), 0.0);
        assert!(Objective::parse_override("false_opens", &COLS).unwrap_err().contains("metric=weight"));
        assert!(Objective::parse_override("false_opens=x", &COLS).unwrap_err().contains("finite number"));
        assert!(Objective::parse_override("nope=1", &COLS).unwrap_err().contains("unknown metric"));
    }
}
