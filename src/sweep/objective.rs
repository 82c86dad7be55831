//! The objective bound to a sweep's result tables: command-line overrides, and costs computed by
//! column index. The objective itself ([`Objective`]) is the one `run` uses too.

use super::constraint::resolve_metric;
use super::table::Values;
use crate::metrics::Metric;
pub use crate::metrics::{Objective, check_weight};
use crate::{Error, Result};

/// What a sweep does with an [`Objective`]: read a command-line override of one weight, and
/// bind the weights to a result table's columns.
pub trait BindToColumns {
    /// Parses a command-line override `metric=weight` (aliases accepted, see
    /// [`resolve_metric`]) against the known metric `columns`.
    fn parse_override<S: AsRef<str>>(text: &str, columns: &[S]) -> Result<(Metric, f64)>;
    /// Binds the objective to the column order of a result table, so costs are computed by
    /// index. Fails when a weighted metric is not among `columns`.
    fn bind<S: AsRef<str>>(&self, columns: &[S]) -> Result<BoundObjective>;
}

impl BindToColumns for Objective {
    /// Parses a command-line override `metric=weight` (aliases accepted, see
    /// [`resolve_metric`]) against the known metric `columns`.
    fn parse_override<S: AsRef<str>>(text: &str, columns: &[S]) -> Result<(Metric, f64)> {
        let Some((name, weight)) = text.split_once('=') else {
            return Err(Error::invalid(format!(
                "--objective {text}: expected `metric=weight`, e.g. `false_opens=10`"
            )));
        };
        let metric =
            resolve_metric(name, columns).map_err(|e| Error::invalid(format!("--objective {text}: {e}")))?;
        let weight = check_weight(weight.trim().parse::<f64>().ok(), weight.trim())
            .map_err(|e| Error::invalid(format!("--objective {text}: {e}")))?;
        Ok((metric, weight))
    }

    /// Binds the objective to the column order of a result table, so costs are computed by
    /// index. Fails when a weighted metric is not among `columns`.
    fn bind<S: AsRef<str>>(&self, columns: &[S]) -> Result<BoundObjective> {
        let mut terms = Vec::with_capacity(self.weights.len());
        for (metric, weight) in &self.weights {
            let index = columns.iter().position(|c| c.as_ref() == metric.name()).ok_or_else(|| {
                Error::invalid(format!("objective metric `{metric}` is not a column of the results"))
            })?;
            terms.push((index, *weight));
        }
        Ok(BoundObjective { terms })
    }
}

/// An [`Objective`] whose metrics are column indices of one result table.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundObjective {
    terms: Vec<(usize, f64)>,
}

impl BoundObjective {
    /// The cost of one row of metric values (summed in the objective's order).
    pub fn cost(&self, values: &Values) -> f64 {
        let mut total = 0.0;
        for &(i, w) in &self.terms {
            if let Some(v) = values.get(i) {
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
        let o = Objective::new([
            (Metric::FalseOpens, 10.0),
            (Metric::Availability, -100.0),
            (Metric::LatencyP99Ms, 0.01),
        ]);
        let b = o.bind(&COLS).unwrap();
        assert_eq!(b.cost(&vec![Some(2.0), Some(1500.0), Some(0.5)].into()), 20.0 - 50.0 + 15.0);
        assert_eq!(b.cost(&vec![Some(2.0), None, None].into()), 20.0);
        assert!(
            Objective::new([(Metric::Flaps, 1.0)]).bind(&COLS).unwrap_err().to_string().contains("flaps")
        );
    }

    #[test]
    fn overrides_parse_and_replace() {
        let mut o = Objective::new([(Metric::FalseOpens, 10.0)]);
        let (m, w) = Objective::parse_override("p99_latency=0.5", &COLS).unwrap();
        assert_eq!((m.name(), w), ("latency_p99_ms", 0.5));
        o.set(m, w);
        o.set(Metric::FalseOpens, 3.0);
        assert_eq!(o.weights, vec![(Metric::FalseOpens, 3.0), (Metric::LatencyP99Ms, 0.5)]);
        assert_eq!(o.weight(Metric::Availability), 0.0);
        assert!(
            Objective::parse_override("false_opens", &COLS)
                .unwrap_err()
                .to_string()
                .contains("metric=weight")
        );
        assert!(
            Objective::parse_override("false_opens=x", &COLS)
                .unwrap_err()
                .to_string()
                .contains("finite number")
        );
        assert!(
            Objective::parse_override("nope=1", &COLS).unwrap_err().to_string().contains("unknown metric")
        );
    }
}
