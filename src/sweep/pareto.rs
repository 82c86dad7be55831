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
    let mut f = Front::new(dirs);
    for (i, p) in points.iter().enumerate() {
        f.offer(i, p);
    }
    f.finish().into_iter().map(|(i, _)| i).collect()
}

/// A Pareto front kept as points are offered one at a time: only the points no point offered
/// so far dominates are held (a front is small), so a front over many configurations costs
/// time and memory in the front's size, not the number of points.
pub struct Front<'a> {
    dirs: &'a [Direction],
    /// (index, values) of the points on the front so far.
    points: Vec<(usize, Vec<f64>)>,
}

impl<'a> Front<'a> {
    /// An empty front over metrics of directions `dirs`.
    pub fn new(dirs: &'a [Direction]) -> Front<'a> {
        Front { dirs, points: Vec::new() }
    }

    /// Offers point `index`: kept when complete (a value for every metric, none NaN) and not
    /// dominated by a point on the front; the points it dominates leave the front.
    pub fn offer(&mut self, index: usize, point: &[Option<f64>]) {
        let Some(values) = point.iter().copied().collect::<Option<Vec<f64>>>() else { return };
        if values.len() != self.dirs.len() || values.iter().any(|x| x.is_nan()) {
            return;
        }
        if self.points.iter().any(|(_, q)| dominates(q, &values, self.dirs)) {
            return;
        }
        self.points.retain(|(_, q)| !dominates(&values, q, self.dirs));
        self.points.push((index, values));
    }

    /// The points on the front, (index, values), in increasing index order.
    pub fn finish(mut self) -> Vec<(usize, Vec<f64>)> {
        self.points.sort_unstable_by_key(|(i, _)| *i);
        self.points
    }
}

/// The distinct values on a front, gathered in a first pass over the points so that a second
/// pass can tell which points lie on it ([`Staircase::on_front`]): memory in the number of
/// distinct values on the front, not of points, and each offer in its logarithm for two
/// metrics (more metrics keep the values in a [`Front`]).
pub struct Staircase<'a> {
    dirs: &'a [Direction],
    /// Two metrics, both turned to "lower is better": y by x, y falling as x grows.
    steps: std::collections::BTreeMap<Key, f64>,
    /// More metrics: the front of distinct values.
    wide: Front<'a>,
}

/// A value that is neither NaN nor -0.0, ordered.
#[derive(Copy, Clone)]
struct Key(f64);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl<'a> Staircase<'a> {
    /// An empty staircase over metrics of directions `dirs`.
    pub fn new(dirs: &'a [Direction]) -> Staircase<'a> {
        Staircase { dirs, steps: std::collections::BTreeMap::new(), wide: Front::new(dirs) }
    }

    /// The point as (x, y) to minimise (-0.0 read as 0.0), when it has two complete values.
    fn two(&self, point: &[Option<f64>]) -> Option<(f64, f64)> {
        let [Some(x), Some(y)] = point else { return None };
        if x.is_nan() || y.is_nan() {
            return None;
        }
        let flip = |v: f64, d: Direction| match d {
            Direction::Minimise => v + 0.0,
            Direction::Maximise => -v + 0.0,
        };
        Some((flip(*x, self.dirs[0]), flip(*y, self.dirs[1])))
    }

    /// The step at or left of `x` dominates or equals (x, y): (dominated, equal).
    fn below(&self, x: f64, y: f64) -> (bool, bool) {
        match self.steps.range(..=Key(x)).next_back() {
            Some((qx, &qy)) => (qy < y || (qy == y && qx.0 < x), qy == y && qx.0 == x),
            None => (false, false),
        }
    }

    /// Offers a point (first pass).
    pub fn offer(&mut self, point: &[Option<f64>]) {
        if self.dirs.len() != 2 {
            if !self.on_front_wide(point) {
                return;
            }
            self.wide.offer(0, point);
            return;
        }
        let Some((x, y)) = self.two(point) else { return };
        let (dominated, equal) = self.below(x, y);
        if dominated || equal {
            return;
        }
        // Steps it dominates: at x or to its right, no lower.
        let gone: Vec<Key> =
            self.steps.range(Key(x)..).take_while(|(_, qy)| **qy >= y).map(|(k, _)| *k).collect();
        for k in gone {
            self.steps.remove(&k);
        }
        self.steps.insert(Key(x), y);
    }

    /// Whether no value held dominates the point (more than two metrics) nor equals it.
    fn on_front_wide(&self, point: &[Option<f64>]) -> bool {
        let Some(values) = point.iter().copied().collect::<Option<Vec<f64>>>() else { return false };
        values.len() == self.dirs.len()
            && !values.iter().any(|x| x.is_nan())
            && !self.wide.points.iter().any(|(_, q)| dominates(q, &values, self.dirs) || *q == values)
    }

    /// Whether a point (complete, offered in the first pass) lies on the front (second pass).
    pub fn on_front(&self, point: &[Option<f64>]) -> bool {
        if self.dirs.len() != 2 {
            let Some(values) = point.iter().copied().collect::<Option<Vec<f64>>>() else { return false };
            return values.len() == self.dirs.len()
                && !values.iter().any(|x| x.is_nan())
                && !self.wide.points.iter().any(|(_, q)| dominates(q, &values, self.dirs));
        }
        match self.two(point) {
            Some((x, y)) => !self.below(x, y).0,
            None => false,
        }
    }
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
    fn a_front_holds_only_its_points_and_agrees_with_every_pair_compared() {
        // 10,000 points on a coarse grid, many tied, some incomplete.
        let points: Vec<Vec<Option<f64>>> = (0..10_000u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                let x = (h % 97) as f64;
                let y = ((h / 97) % 89) as f64;
                vec![(i % 101 != 0).then_some(x), Some(y)]
            })
            .collect();
        let dirs = [Minimise, Maximise];
        let mut f = Front::new(&dirs);
        let mut most = 0;
        for (i, p) in points.iter().enumerate() {
            f.offer(i, p);
            most = most.max(f.points.len());
        }
        // What it holds is the front so far, never the points offered.
        assert!(most < 200, "{most}");
        let got: Vec<usize> = f.finish().into_iter().map(|(i, _)| i).collect();
        let complete: Vec<(usize, Vec<f64>)> = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.iter().copied().collect::<Option<Vec<f64>>>().map(|v| (i, v)))
            .collect();
        let brute: Vec<usize> = complete
            .iter()
            .filter(|(_, p)| !complete.iter().any(|(_, q)| dominates(q, p, &dirs)))
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(got, brute);
        assert!(!got.is_empty());
    }

    #[test]
    fn a_staircase_agrees_with_the_front_on_ties_signs_and_more_metrics() {
        let points: Vec<Vec<Option<f64>>> = (0..5_000u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                let x = (h % 37) as f64 - 18.0;
                let y = ((h / 37) % 29) as f64;
                let z = ((h / 1073) % 5) as f64;
                let x = if x == 0.0 && i % 2 == 0 { -0.0 } else { x };
                vec![(i % 101 != 0).then_some(x), Some(y), Some(z)]
            })
            .collect();
        for dirs in [
            vec![Minimise, Minimise],
            vec![Minimise, Maximise],
            vec![Maximise, Minimise],
            vec![Maximise, Maximise, Minimise],
        ] {
            let pts: Vec<Vec<Option<f64>>> = points.iter().map(|p| p[..dirs.len()].to_vec()).collect();
            let mut st = Staircase::new(&dirs);
            for p in &pts {
                st.offer(p);
            }
            let got: Vec<usize> = (0..pts.len()).filter(|&i| st.on_front(&pts[i])).collect();
            assert_eq!(got, front(&pts, &dirs), "{dirs:?}");
            assert!(st.steps.len() < 100);
        }
    }

    #[test]
    fn single_point_and_empty_table() {
        assert_eq!(front(&pts(&[(Some(1.0), Some(1.0))]), &[Minimise, Minimise]), vec![0]);
        assert!(front(&[], &[Minimise]).is_empty());
        assert!(front(&pts(&[(None, None)]), &[Minimise, Minimise]).is_empty());
    }
}
