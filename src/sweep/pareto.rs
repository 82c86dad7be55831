//! Pareto fronts over chosen metrics: the configurations that no other configuration beats on
//! every metric at once. Each metric is minimised or maximised (availability is better high,
//! everything else low).

/// Whether a metric is better low or high.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Lower is better (delays, false opens, wasted quota, latency).
    Minimise,
    /// Higher is better (availability).
    Maximise,
}

/// The direction of a metric column: `availability` is maximised, every other metric minimised.
pub fn direction(metric: &str) -> Direction {
    match metric {
        "availability" => Direction::Maximise,
        _ => Direction::Minimise,
    }
}

/// The default fronts of pareto.csv: detection delay (a miss counted as the incident's duration
/// plus the tolerance) vs false opens, wasted quota vs availability.
pub const DEFAULT_FRONTS: [(&str, &str); 2] =
    [("detection_delay_with_misses_mean_s", "false_opens"), ("wasted_quota", "availability")];

/// True when `a` is at least as good as `b` on every metric and strictly better on one.
fn dominates(a: &[f64], b: &[f64], dirs: &[Direction]) -> bool {
    let mut strictly = false;
    for ((x, y), d) in a.iter().zip(b).zip(dirs) {
        let (better, worse) = match d {
            Direction::Minimise => (x < y, x > y),
            Direction::Maximise => (x > y, x < y),
        };
        if worse {
            return false;
        }
        strictly |= better;
    }
    strictly
}

/// Indices (in input order) of the points on the Pareto front. A point with a missing metric
/// cannot be placed and is left out; identical points dominate neither other, so ties are all kept.
pub fn front(points: &[Vec<Option<f64>>], dirs: &[Direction]) -> Vec<usize> {
    let complete: Vec<(usize, Vec<f64>)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let values: Option<Vec<f64>> = p.iter().copied().collect();
            values.filter(|v| v.len() == dirs.len() && v.iter().all(|x| !x.is_nan())).map(|v| (i, v))
        })
        .collect();
    complete
        .iter()
        .filter(|(_, p)| !complete.iter().any(|(_, q)| dominates(q, p, dirs)))
        .map(|(i, _)| *i)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{Maximise, Minimise};

    fn pts(rows: &[(Option<f64>, Option<f64>)]) -> Vec<Vec<Option<f64>>> {
        rows.iter().map(|(a, b)| vec![*a, *b]).collect()
    }

    #[test]
    fn front_of_a_hand_made_table_minimising_both() {
        // (detection delay, false opens)
        let p = pts(&[
            (Some(10.0), Some(3.0)), // 0: front
            (Some(20.0), Some(1.0)), // 1: front
            (Some(15.0), Some(3.0)), // 2: dominated by 0
            (Some(40.0), Some(0.0)), // 3: front
            (Some(20.0), Some(2.0)), // 4: dominated by 1
            (None, Some(0.0)),       // 5: missing a metric: left out
            (Some(10.0), Some(3.0)), // 6: tie with 0: kept
            (Some(50.0), Some(0.0)), // 7: dominated by 3
        ]);
        assert_eq!(front(&p, &[Minimise, Minimise]), vec![0, 1, 3, 6]);
    }

    #[test]
    fn maximised_metric_flips_the_order() {
        // (wasted quota, availability)
        let p = pts(&[
            (Some(100.0), Some(0.99)), // 0: front
            (Some(50.0), Some(0.95)),  // 1: front
            (Some(100.0), Some(0.97)), // 2: dominated by 0
            (Some(200.0), Some(0.99)), // 3: dominated by 0
            (Some(10.0), Some(0.90)),  // 4: front
        ]);
        assert_eq!(front(&p, &[Minimise, Maximise]), vec![0, 1, 4]);
        assert_eq!(direction("availability"), Maximise);
        assert_eq!(direction("false_opens"), Minimise);
    }

    #[test]
    fn single_point_and_empty_table() {
        assert_eq!(front(&pts(&[(Some(1.0), Some(1.0))]), &[Minimise, Minimise]), vec![0]);
        assert!(front(&[], &[Minimise]).is_empty());
        assert!(front(&pts(&[(None, None)]), &[Minimise, Minimise]).is_empty());
    }
}
