//! Per-interval aggregates ("a week of logged p95/error data") imported into a dependency model.
//!
//! Each row becomes an [`Interval`]: latency drawn from a [`Fit`] through every logged percentile,
//! errors at the logged rate, and (when a count column exists) that many arrivals. Row `i`
//! covers `[t_i, t_i + step)`; a shorter spacing ends it at the next row. Spacing beyond 1.5 steps
//! is a [`Gap`], filled as [`GapPolicy`] says; smaller slack holds the interval until the next row.
//! Time zero is the first row's timestamp.

use super::quantile::{Fit, FitCache, open_unit, probit};
use super::{GapPolicy, ImportReport, TraceError, TraceOptions, to_sim};
use crate::outcome::{Answer, OutcomeClass};
use crate::rng::{rng_from_u64, sub_seed};
use crate::time::{Dur, SimTime};
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Poisson};

/// One logged interval, ready to answer attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    start: SimTime,
    logged_end: SimTime,
    end: SimTime,
    count: Option<u64>,
    error_rate: f64,
    logged: [f64; 4],
    /// Where its fitted distribution is in the trace's table of fits.
    fit: usize,
}

impl Interval {
    /// First instant of the interval.
    pub fn start(&self) -> SimTime {
        self.start
    }
    /// End of the time the row describes (`start + step`, or the next row if sooner).
    pub fn logged_end(&self) -> SimTime {
        self.logged_end
    }
    /// End of the time this interval answers for (later than `logged_end` when it is held).
    pub fn end(&self) -> SimTime {
        self.end
    }
    /// Logged request count, if the trace has one.
    pub fn count(&self) -> Option<u64> {
        self.count
    }
    /// Logged error fraction.
    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }
    /// Logged percentile `k` (0 = p50, 1 = p90, 2 = p95, 3 = p99) in µs, if logged.
    pub fn percentile_us(&self, k: usize) -> Option<f64> {
        self.logged.get(k).copied().filter(|v| !v.is_nan())
    }
    /// An answer drawn from `fit`, the interval's fitted distribution.
    fn draw<R: Rng + ?Sized>(&self, fit: &Fit, rng: &mut R) -> Answer {
        // Two draws per answer, always in this order, so a given stream position means the same
        // thing for every configuration (common random numbers).
        let u_err: f64 = rng.random();
        let z = probit(open_unit(rng));
        let micros = fit.at_score(z).round().max(1.0);
        let class = if u_err < self.error_rate { OutcomeClass::Error } else { OutcomeClass::Ok };
        Answer { latency: Dur(micros as u64), class, retry_after: None }
    }
}

/// A stretch with no rows (spacing beyond 1.5 intervals): `[start, end)` in trace time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// End of the last logged interval before the gap.
    pub start: SimTime,
    /// Timestamp of the next row.
    pub end: SimTime,
    /// Whole intervals missing.
    pub missing_intervals: u64,
    /// Line of the row after the gap.
    pub line: u64,
}

/// An interval trace: per-interval aggregates as a dependency model.
#[derive(Clone, Debug)]
pub struct IntervalTrace {
    intervals: Vec<Interval>,
    /// The intervals' fitted distributions, each percentile set's once (see [`FitCache`]).
    fits: Vec<Fit>,
    gaps: Vec<Gap>,
    gap_policy: GapPolicy,
    step: Dur,
    horizon: SimTime,
    /// What answers in a gap read as healthy, and the arrival rate there (per µs): built only
    /// under that policy, when the trace has gaps.
    healthy: Option<(Interval, f64)>,
    has_counts: bool,
    offset_s: i64,
    /// What the import did (the loader adds what it knows: format, span).
    pub report: ImportReport,
}

/// One parsed row (or one bucket of a per-call log): absolute time and logged values.
pub struct Raw {
    pub t: i64,
    pub line: u64,
    pub count: Option<u64>,
    pub error_rate: f64,
    pub logged: [f64; 4],
}

/// Line numbers of the kept rows, stored only where one does not follow on from the row kept
/// before it (most rows are on consecutive lines).
struct Lines {
    /// (row index, its line) where the lines break off.
    breaks: Vec<(usize, u64)>,
    /// The line that would follow on from the last row's.
    next: u64,
}

impl Lines {
    /// Row `index` (the next one) is on `line`.
    #[inline]
    fn push(&mut self, index: usize, line: u64) {
        if line != self.next || index == 0 {
            self.breaks.push((index, line));
        }
        self.next = line.wrapping_add(1);
    }

    /// Row `index` (the last one) is now on `line`.
    fn set_last(&mut self, index: usize, line: u64) {
        match self.breaks.last_mut() {
            Some(last) if last.0 == index => last.1 = line,
            _ => self.breaks.push((index, line)),
        }
        self.next = line.wrapping_add(1);
    }

    /// The last row's line.
    fn last(&self) -> u64 {
        self.next.wrapping_sub(1)
    }

    /// Row `index`'s line.
    fn line(&self, index: usize) -> u64 {
        let k = self.breaks.partition_point(|b| b.0 <= index).saturating_sub(1);
        self.breaks.get(k).map_or(0, |&(i, line)| line.wrapping_add((index - i) as u64))
    }
}

/// The intervals of the rows kept so far, in time order: each row's values, fit and start,
/// with its ends left for [`finish`](Intervals::finish), which knows the interval length.
pub struct Intervals {
    list: Vec<Interval>,
    fits: FitCache,
    /// Kept rows whose fit was repaired.
    repaired: u64,
    /// The first and the last row's time.
    epoch: i64,
    last_t: i64,
    lines: Lines,
    /// The spacing of the first two rows, and whether every spacing since is the same.
    spacing: Option<u64>,
    uniform: bool,
}

impl Intervals {
    pub fn new(capacity: usize, tail_sigma: f64) -> Intervals {
        Intervals {
            list: Vec::with_capacity(capacity),
            fits: FitCache::new(tail_sigma),
            repaired: 0,
            epoch: 0,
            last_t: 0,
            lines: Lines { breaks: Vec::new(), next: 0 },
            spacing: None,
            uniform: true,
        }
    }

    /// True when no row has been kept.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The last row's time and line.
    pub fn last(&self) -> Option<(i64, u64)> {
        (!self.list.is_empty()).then(|| (self.last_t, self.lines.last()))
    }

    /// Keeps `raw` as the next interval.
    #[inline(always)]
    pub fn push(&mut self, raw: Raw) {
        if self.list.is_empty() {
            self.epoch = raw.t;
        } else {
            let spacing = raw.t.wrapping_sub(self.last_t) as u64;
            match self.spacing {
                None => self.spacing = Some(spacing),
                Some(first) => self.uniform &= spacing == first,
            }
        }
        self.last_t = raw.t;
        self.lines.push(self.list.len(), raw.line);
        let (fit, repaired) = self.fits.fit(&raw.logged);
        self.repaired += u64::from(repaired);
        self.list.push(Interval {
            start: to_sim(raw.t, self.epoch),
            logged_end: SimTime::ZERO,
            end: SimTime::ZERO,
            count: raw.count,
            error_rate: raw.error_rate,
            logged: raw.logged,
            fit,
        });
    }

    /// Replaces the last interval's values with `raw`'s (a repeated time kept last).
    pub fn replace_last(&mut self, raw: Raw) {
        let Some(last) = self.list.last_mut() else { return };
        self.repaired -= u64::from(self.fits.repaired(last.fit));
        let (fit, repaired) = self.fits.fit(&raw.logged);
        self.repaired += u64::from(repaired);
        (last.count, last.error_rate, last.logged, last.fit) = (raw.count, raw.error_rate, raw.logged, fit);
        self.lines.set_last(self.list.len() - 1, raw.line);
    }
}

/// The element at index `len / 2` of `values` in ascending order (the upper median; `None` when
/// empty): without sorting when every value is the same (a regular trace's spacing), else by
/// selection.
fn upper_median<T: Ord + Copy>(values: &mut [T]) -> Option<T> {
    let first = *values.first()?;
    if values.iter().all(|v| *v == first) {
        return Some(first);
    }
    let mid = values.len() / 2;
    Some(*values.select_nth_unstable(mid).1)
}

/// `x` as the integer [`f64::total_cmp`] compares: integers order as the numbers do, and
/// selecting among them is cheaper than among floats.
fn order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The bits of the number whose [`order_key`] is `key` (the mapping is its own inverse).
fn order_key_inverse(key: i64) -> u64 {
    (key ^ ((((key >> 63) as u64) >> 1) as i64)) as u64
}

impl IntervalTrace {
    /// The trace of `rows` (in time order, no time repeated), made as an imported file's is.
    pub fn build(
        rows: Vec<Raw>,
        opts: &TraceOptions,
        offset_s: i64,
        report: ImportReport,
    ) -> Result<IntervalTrace, TraceError> {
        let mut intervals = Intervals::new(rows.len(), opts.tail_sigma());
        for raw in rows {
            intervals.push(raw);
        }
        intervals.finish(opts, offset_s, report)
    }
}

impl Intervals {
    /// The trace: the interval length (given, or the spacing's upper median), each interval's
    /// ends, the gaps, the healthy model where the policy wants it.
    pub fn finish(
        self,
        opts: &TraceOptions,
        offset_s: i64,
        mut report: ImportReport,
    ) -> Result<IntervalTrace, TraceError> {
        let Intervals { list: mut intervals, mut fits, repaired, epoch, lines, spacing, uniform, .. } = self;
        report.epoch_offset_us = epoch;
        report.rows_used = intervals.len() as u64;
        report.repaired_intervals += repaired;
        let step = match opts.interval {
            Some(d) if d.is_zero() => {
                return Err(TraceError::Option {
                    option: "interval",
                    message: "expected a positive duration".into(),
                });
            }
            Some(d) => d,
            None => {
                let median = match spacing {
                    Some(first) if uniform => Some(first),
                    _ => {
                        let mut diffs: Vec<u64> =
                            intervals.windows(2).map(|w| w[1].start.0.wrapping_sub(w[0].start.0)).collect();
                        upper_median(&mut diffs)
                    }
                };
                let Some(median) = median else {
                    return Err(TraceError::Option {
                        option: "interval",
                        message: format!(
                            "{} has a single row: set `interval` to say how long it lasts",
                            report.file
                        ),
                    });
                };
                let step = Dur(median);
                report.notes.push(format!("interval length detected from row spacing: {step}"));
                step
            }
        };
        let mut gaps = Vec::new();
        let mut has_counts = true;
        let last_start = intervals.last().map_or(0, |iv| iv.start.0);
        if uniform
            && spacing == Some(step.0)
            && step.0.checked_mul(intervals.len().saturating_sub(1) as u64) == Some(last_start)
        {
            // Every row one step after the one before, none of them clamped (the last one is
            // where the steps put it): each interval ends where the next begins, no gaps.
            for iv in &mut intervals {
                iv.logged_end = iv.start + step;
                iv.end = iv.logged_end;
                has_counts &= iv.count.is_some();
            }
        } else {
            for i in 0..intervals.len() {
                let start = intervals[i].start;
                let mut logged_end = start + step;
                let mut end = logged_end;
                if let Some(next) = intervals.get(i + 1).map(|iv| iv.start) {
                    logged_end = logged_end.min(next);
                    end = next;
                    let spacing = next - start;
                    if spacing.0 > step.0 + step.0 / 2 {
                        gaps.push(Gap {
                            start: logged_end,
                            end: next,
                            missing_intervals: (spacing.0 + step.0 / 2) / step.0 - 1,
                            line: lines.line(i + 1),
                        });
                        if opts.gaps != GapPolicy::Hold {
                            end = logged_end;
                        }
                    }
                }
                let iv = &mut intervals[i];
                (iv.logged_end, iv.end) = (logged_end, end);
                has_counts &= iv.count.is_some();
            }
        }
        report.gaps = gaps.len() as u64;
        let horizon = intervals.last().map_or(SimTime::ZERO, |iv| iv.logged_end);
        let healthy = (opts.gaps == GapPolicy::Healthy && !gaps.is_empty())
            .then(|| IntervalTrace::healthy(&intervals, horizon, &mut fits));
        Ok(IntervalTrace {
            intervals,
            fits: fits.into_fits(),
            gaps,
            gap_policy: opts.gaps,
            step,
            horizon,
            healthy,
            has_counts,
            offset_s,
            report,
        })
    }
}

impl IntervalTrace {
    /// The healthy model: no errors, each percentile the median of its logged values, arrivals
    /// at the median rate of the intervals with counts.
    fn healthy(intervals: &[Interval], horizon: SimTime, fits: &mut FitCache) -> (Interval, f64) {
        let mut keys = Vec::with_capacity(intervals.len());
        let mut median = |values: &mut dyn Iterator<Item = f64>| {
            keys.clear();
            keys.extend(values.map(order_key));
            upper_median(&mut keys).map(|m| f64::from_bits(order_key_inverse(m)))
        };
        let logged: [f64; 4] = std::array::from_fn(|k| {
            median(&mut intervals.iter().filter_map(|iv| iv.percentile_us(k))).unwrap_or(f64::NAN)
        });
        let rate_per_us = median(
            &mut intervals
                .iter()
                .filter_map(|iv| iv.count.map(|c| c as f64 / (iv.logged_end - iv.start).0.max(1) as f64)),
        )
        .unwrap_or(0.0);
        let healthy = Interval {
            start: SimTime::ZERO,
            logged_end: horizon,
            end: horizon,
            count: None,
            error_rate: 0.0,
            logged,
            fit: fits.add(&logged).0,
        };
        (healthy, rate_per_us)
    }

    /// The interval answering for time `at` (the last one past the horizon).
    pub fn interval_at(&self, at: SimTime) -> &Interval {
        let i = self.intervals.partition_point(|iv| iv.start <= at).saturating_sub(1);
        let iv = &self.intervals[i];
        if at >= iv.end
            && at < self.horizon
            && let Some((healthy, _)) = &self.healthy
        {
            healthy
        } else {
            iv
        }
    }

    /// The dependency's answer to an attempt at `at`: latency from the interval's fitted
    /// distribution, class `Error` with the logged error probability, else `Ok`. Allocation-free.
    pub fn answer<R: Rng + ?Sized>(&self, at: SimTime, rng: &mut R) -> Answer {
        let iv = self.interval_at(at);
        iv.draw(&self.fits[iv.fit], rng)
    }

    /// The fitted latency distribution of `interval` (one of this trace's).
    pub fn fit(&self, interval: &Interval) -> &Fit {
        &self.fits[interval.fit]
    }

    /// Arrivals from the logged counts, or `None` when the trace has no count column (use the
    /// scenario's traffic model then). Each interval gets exactly its logged count, placed
    /// uniformly at random inside it (a Poisson process conditioned on its count); held slack
    /// and gaps get Poisson arrivals at the held (or, for `healthy`, the median) rate, `missing`
    /// gaps none. Each interval draws from its own generator seeded from (`seed`, interval), so
    /// the stream does not depend on draw order.
    pub fn arrivals(&self, seed: u64) -> Option<Vec<SimTime>> {
        if !self.has_counts {
            return None;
        }
        let total = self.intervals.iter().filter_map(|iv| iv.count).fold(0u64, u64::saturating_add);
        let mut out = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
        for i in 0..self.intervals.len() {
            self.interval_arrivals(seed, i, &mut out);
        }
        Some(out)
    }

    /// How many arrivals [`IntervalTrace::arrivals`] draws on average (`None` without counts):
    /// each interval's count plus the mean Poisson draw of the gap after it, computed without
    /// drawing, so a run's size is checked before anything is allocated.
    pub fn expected_arrivals(&self) -> Option<f64> {
        self.has_counts.then(|| {
            (0..self.intervals.len())
                .map(|i| {
                    let count = self.intervals[i].count.unwrap_or(0) as f64;
                    match self.after(i) {
                        Some((rate, span)) => count + rate * span as f64,
                        None => count,
                    }
                })
                .sum()
        })
    }

    /// The stretch after interval `i`'s logged end and before the next interval starts, if any:
    /// its arrival rate (per µs: none in a gap read as missing, the healthy rate in a gap read
    /// as healthy, else interval `i`'s own rate carried on) and its length in µs.
    fn after(&self, i: usize) -> Option<(f64, u64)> {
        let iv = &self.intervals[i];
        let next = self.intervals.get(i + 1).map_or(iv.logged_end, |n| n.start);
        if next <= iv.logged_end {
            return None;
        }
        let in_gap = self.gaps.binary_search_by_key(&iv.logged_end, |g| g.start).is_ok();
        let rate = match (in_gap, self.gap_policy) {
            (true, GapPolicy::Missing) => 0.0,
            (true, GapPolicy::Healthy) => self.healthy.as_ref().map_or(0.0, |h| h.1),
            _ => iv.count.unwrap_or(0) as f64 / (iv.logged_end - iv.start).0.max(1) as f64,
        };
        Some((rate, (next - iv.logged_end).0))
    }

    /// Appends the arrivals of interval `i` (and of the gap after it), sorted: the part of
    /// [`IntervalTrace::arrivals`] that interval `i` draws, so a run can draw them as its clock
    /// reaches them.
    pub fn interval_arrivals(&self, seed: u64, i: usize, out: &mut Vec<SimTime>) {
        let iv = &self.intervals[i];
        let mut rng = rng_from_u64(sub_seed(seed, i as u64));
        let first = out.len();
        let len = (iv.logged_end - iv.start).0.max(1);
        for _ in 0..iv.count.unwrap_or(0) {
            out.push(iv.start + Dur(rng.random_range(0..len)));
        }
        out[first..].sort_unstable();
        if let Some((rate, span)) = self.after(i) {
            let lambda = rate * span as f64;
            if let Ok(poisson) = Poisson::new(lambda) {
                let n = poisson.sample(&mut rng) as u64;
                let first = out.len();
                for _ in 0..n {
                    out.push(iv.logged_end + Dur(rng.random_range(0..span)));
                }
                out[first..].sort_unstable();
            }
        }
    }

    /// End of the last logged interval.
    pub fn horizon(&self) -> SimTime {
        self.horizon
    }
    /// Gaps in the log, in time order.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }
    /// True when `at` falls in a gap and gaps are treated as missing data (leave it out of scoring).
    pub fn is_missing(&self, at: SimTime) -> bool {
        if self.gap_policy != GapPolicy::Missing {
            return false;
        }
        let i = self.gaps.partition_point(|g| g.start <= at);
        i > 0 && at < self.gaps[i - 1].end
    }
    /// The length of one interval.
    pub fn step(&self) -> Dur {
        self.step
    }
    /// The imported intervals, in time order.
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }
    /// True when every row carried a request count.
    pub fn has_counts(&self) -> bool {
        self.has_counts
    }
    /// The gap policy in force.
    pub fn gap_policy(&self) -> GapPolicy {
        self.gap_policy
    }
    /// Absolute time of time zero (the first row), microseconds since the Unix epoch.
    pub fn epoch_offset_us(&self) -> i64 {
        self.report.epoch_offset_us
    }
    /// What label files need to move absolute times into this trace's time base.
    pub fn time_base(&self) -> super::TimeBase {
        super::TimeBase {
            epoch_us: self.report.epoch_offset_us,
            horizon: self.horizon,
            utc_offset_s: self.offset_s,
            step: self.step,
        }
    }
    /// What the import did.
    pub fn report(&self) -> &ImportReport {
        &self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_are_kept_where_rows_break_off() {
        let mut lines = Lines { breaks: Vec::new(), next: 0 };
        for (i, line) in [0u64, 1, 2, 7, 8, 10].into_iter().enumerate() {
            lines.push(i, line);
        }
        assert_eq!(lines.breaks, [(0, 0), (3, 7), (5, 10)]);
        lines.set_last(5, 12);
        lines.push(6, 13);
        let all: Vec<u64> = (0..7).map(|i| lines.line(i)).collect();
        assert_eq!((all, lines.last()), (vec![0, 1, 2, 7, 8, 12, 13], 13));
    }
}
