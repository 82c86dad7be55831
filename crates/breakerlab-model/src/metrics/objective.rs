//! The objective: weights over metrics whose weighted sum is a run's cost, for `run` and
//! `sweep` alike. Lower cost is better; a negative weight rewards a metric (e.g. availability).

use super::metric::Metric;
use crate::{Error, Result};

/// Weights over metrics, in the order written: `cost = Σ weight · metric`, summed in that order
/// (so the float result is reproducible), where a metric with no value in a run (no incidents,
/// so no detection delay) contributes nothing.
///
/// [`Objective::standard`] prices everything in "false opens" for a run at a few requests per
/// second:
/// - `false_opens` 1: the unit. A false open sheds healthy traffic for one open period and pages
///   someone for nothing.
/// - `detection_delay_with_misses_mean_s` 1/60: a minute of late detection costs about one false
///   open (a minute of failing calls at a few rps is a couple of hundred failed user requests,
///   roughly what a 30 to 60 s false open sheds). A missed incident counts in this mean as its
///   whole duration plus the tolerance, so a configuration cannot look fast by missing the
///   hard incidents (the plain `detection_delay_mean_s` averages only the caught ones).
/// - `missed_incidents` 10: missing a real incident is ten false opens on top of its exposure
///   time: someone has to notice it by other means.
/// - `recovery_lag_mean_s` 1/120: half the detection rate; lingering open after the dependency
///   recovered sheds traffic, which `shed_healthy` also prices.
/// - `flaps` 0.5: a quick re-trip is churn on top of an episode already counted.
/// - `shed_healthy` 0.01: 100 healthy requests shed (what a false open of ~30 s sheds at 3 rps)
///   ≈ one false open.
/// - `wasted_quota` 0.001: 1,000 attempts sent into a failing dependency ≈ one false open
///   (quota and load on a dependency that is already down).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Objective {
    /// (metric, weight) pairs, each metric at most once, in the order written.
    pub weights: Vec<(Metric, f64)>,
}

impl Objective {
    /// An objective from (metric, weight) pairs; a repeated metric keeps its last weight.
    pub fn new(pairs: impl IntoIterator<Item = (Metric, f64)>) -> Objective {
        let mut o = Objective::default();
        for (m, w) in pairs {
            o.set(m, w);
        }
        o
    }

    /// The documented default weights (see the type's documentation), in metric-name order.
    pub fn standard() -> Objective {
        Objective::new([
            (Metric::DetectionDelayWithMissesMeanS, 1.0 / 60.0),
            (Metric::FalseOpens, 1.0),
            (Metric::Flaps, 0.5),
            (Metric::MissedIncidents, 10.0),
            (Metric::RecoveryLagMeanS, 1.0 / 120.0),
            (Metric::ShedHealthy, 0.01),
            (Metric::WastedQuota, 0.001),
        ])
    }

    /// Sets one metric's weight, replacing an earlier one (a weight of 0 removes its influence).
    pub fn set(&mut self, metric: Metric, weight: f64) {
        match self.weights.iter_mut().find(|(m, _)| *m == metric) {
            Some(slot) => slot.1 = weight,
            None => self.weights.push((metric, weight)),
        }
    }

    /// The weight of `metric` (0 when absent).
    pub fn weight(&self, metric: Metric) -> f64 {
        self.weights.iter().find(|(m, _)| *m == metric).map_or(0.0, |(_, w)| *w)
    }

    /// The cost of one run or row, given each weighted metric's value.
    pub fn cost(&self, value: impl Fn(Metric) -> Option<f64>) -> f64 {
        let mut total = 0.0;
        for &(m, w) in &self.weights {
            if let Some(v) = value(m) {
                total += w * v;
            }
        }
        total
    }
}

/// Checks a weight read from a file or the command line: a finite number.
pub fn check_weight(value: Option<f64>, text: &str) -> Result<f64> {
    match value {
        Some(w) if w.is_finite() => Ok(w),
        _ => Err(Error::invalid(format!("expected a finite number as the weight, found {text:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_the_weighted_sum_of_present_values_in_written_order() {
        let o = Objective::new([(Metric::FalseOpens, 10.0), (Metric::Availability, -100.0)]);
        let v = |m: Metric| match m {
            Metric::FalseOpens => Some(2.0),
            _ => None,
        };
        assert_eq!(o.cost(v), 20.0);
        let mut o = o;
        o.set(Metric::FalseOpens, 3.0);
        assert_eq!(o.weights, vec![(Metric::FalseOpens, 3.0), (Metric::Availability, -100.0)]);
        assert_eq!(o.weight(Metric::Flaps), 0.0);
        // The standard weights are listed in name order and never weigh `cost` itself.
        let names: Vec<&str> = Objective::standard().weights.iter().map(|(m, _)| m.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert!(!names.contains(&"cost"));
        assert!(check_weight(Some(f64::NAN), "nan").unwrap_err().to_string().contains("finite number"));
    }
}
