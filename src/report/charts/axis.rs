//! The simulated-time axis: a plotters coordinate over integer microseconds whose ticks fall on
//! round clock times (every 5 s, 15 min, 6 h, 1 d, ...) and are labelled as seconds, "hh:mm" or
//! "d2 02:00" depending on the span, so a week-long run stays readable. When the input had
//! absolute timestamps ([`TimeAxis::with_epoch`]), ticks fall on round UTC clock times and read
//! "13:40" or "06-02 13:40".

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use std::ops::Range;

const SEC: u64 = 1_000_000;
const MIN: u64 = 60 * SEC;
const HOUR: u64 = 60 * MIN;
const DAY: u64 = 24 * HOUR;

/// Candidate tick steps, smallest first.
const STEPS: [u64; 33] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    SEC,
    2 * SEC,
    5 * SEC,
    10 * SEC,
    15 * SEC,
    30 * SEC,
    MIN,
    2 * MIN,
    5 * MIN,
    10 * MIN,
    15 * MIN,
    30 * MIN,
    HOUR,
    2 * HOUR,
    3 * HOUR,
    6 * HOUR,
    12 * HOUR,
    DAY,
    2 * DAY,
    7 * DAY,
    14 * DAY,
    28 * DAY,
    56 * DAY,
    364 * DAY,
];

/// Most tick labels drawn along a time axis.
pub const MAX_TIME_TICKS: usize = 12;

/// How tick labels are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TimeLabels {
    /// Seconds since start ("12.5"), for spans up to 2 minutes.
    Seconds,
    /// Clock time since start ("01:30", "01:30:15"), for spans inside the first day.
    Clock,
    /// Day and clock time ("d2 02:00", day 1 being the first 24 h).
    Days,
}

/// A time axis from `from_us` to `to_us` (microseconds since the scenario's start).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeAxis {
    from: u64,
    to: u64,
    step: u64,
    labels: TimeLabels,
    /// Absolute time of time zero (µs since the Unix epoch), when known.
    epoch: Option<i64>,
}

impl TimeAxis {
    /// An axis over `[from_us, to_us]` (an empty span is widened to one second).
    pub fn new(from_us: u64, to_us: u64) -> TimeAxis {
        let to = if to_us > from_us { to_us } else { from_us.saturating_add(SEC) };
        let from_us = from_us.min(to - 1);
        let span = to - from_us;
        let step = STEPS
            .iter()
            .copied()
            .find(|s| span / s <= MAX_TIME_TICKS as u64)
            .unwrap_or(STEPS[STEPS.len() - 1]);
        let labels = if to > DAY {
            TimeLabels::Days
        } else if span > 2 * MIN {
            TimeLabels::Clock
        } else {
            TimeLabels::Seconds
        };
        TimeAxis { from: from_us, to, step, labels, epoch: None }
    }

    /// The same axis in UTC clock time, time zero being `epoch_us` (µs since the Unix epoch).
    pub fn with_epoch(mut self, epoch_us: Option<i64>) -> TimeAxis {
        self.epoch = epoch_us;
        if let Some(e) = epoch_us {
            // Days are calendar days: a span crossing midnight (UTC) shows dates.
            let day = |t: u64| (i128::from(e) + t as i128).div_euclid(DAY as i128);
            self.labels = if day(self.from) != day(self.to) {
                TimeLabels::Days
            } else if self.to - self.from > 2 * MIN {
                TimeLabels::Clock
            } else {
                TimeLabels::Seconds
            };
        }
        self
    }

    /// The absolute time (µs since the epoch) of `t_us`, when the axis has one.
    fn absolute(&self, t_us: u64) -> Option<i128> {
        self.epoch.map(|e| i128::from(e) + t_us as i128)
    }

    /// The shown span in words: `00:00 to 02:00` since the start, or in UTC with the date
    /// (`2024-06-01 13:00 to 15:00 UTC`).
    pub fn span_text(&self) -> String {
        match (self.absolute(self.from), self.absolute(self.to)) {
            (Some(a), Some(b)) => {
                let (a, b) = (utc(a), utc(b));
                if a[..10] == b[..10] {
                    format!("{} to {} UTC", &a[..16], &b[11..16])
                } else {
                    format!("{} to {} UTC", &a[..16], &b[..16])
                }
            }
            _ => format!("{} to {}", self.label(self.from), self.label(self.to)),
        }
    }

    /// The tick step (µs).
    #[cfg(test)]
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The label style chosen from the span.
    #[cfg(test)]
    pub fn labels(&self) -> TimeLabels {
        self.labels
    }

    /// Start of the axis (µs).
    pub fn start_us(&self) -> u64 {
        self.from
    }

    /// End of the axis (µs).
    pub fn to_us(&self) -> u64 {
        self.to
    }

    /// The axis description, with its unit.
    pub fn description(&self) -> String {
        if let Some(a) = self.absolute(self.from) {
            let secs = !self.step.is_multiple_of(MIN);
            let clock = if secs { "hh:mm:ss" } else { "hh:mm" };
            return match self.labels {
                TimeLabels::Days => format!("UTC date and time (MM-DD {clock})"),
                _ => format!("UTC time ({clock}) on {}", &utc(a)[..10]),
            };
        }
        match self.labels {
            TimeLabels::Seconds => "time since start (s)",
            TimeLabels::Clock if !self.step.is_multiple_of(MIN) => "time since start (hh:mm:ss)",
            TimeLabels::Clock => "time since start (hh:mm)",
            TimeLabels::Days if !self.step.is_multiple_of(MIN) => {
                "time since start (day dN, hh:mm:ss; d1 = first 24 h)"
            }
            TimeLabels::Days => "time since start (day dN, hh:mm; d1 = first 24 h)",
        }
        .to_string()
    }

    /// The tick label of `t_us`.
    pub fn label(&self, t_us: u64) -> String {
        let secs = !self.step.is_multiple_of(MIN);
        if let Some(a) = self.absolute(t_us) {
            // `YYYY-MM-DD hh:mm:ss[.ffffff]Z`
            let u = utc(a);
            let clock = if !self.step.is_multiple_of(SEC) {
                let decimals = if self.step.is_multiple_of(SEC / 10) { 1 } else { 3 };
                let frac = format!("{:06}", a.rem_euclid(SEC as i128));
                format!("{}.{}", &u[11..19], &frac[..decimals])
            } else if secs {
                u[11..19].to_string()
            } else {
                u[11..16].to_string()
            };
            return match self.labels {
                TimeLabels::Days => format!("{} {clock}", &u[5..10]),
                _ => clock,
            };
        }
        let clock = |t: u64| {
            let d = t % DAY;
            if secs {
                format!("{:02}:{:02}:{:02}", d / HOUR, d % HOUR / MIN, d % MIN / SEC)
            } else {
                format!("{:02}:{:02}", d / HOUR, d % HOUR / MIN)
            }
        };
        match self.labels {
            TimeLabels::Seconds => {
                let decimals = if self.step.is_multiple_of(SEC) {
                    0
                } else if self.step.is_multiple_of(SEC / 10) {
                    1
                } else if self.step.is_multiple_of(SEC / 100) {
                    2
                } else {
                    3
                };
                format!("{:.*}", decimals, t_us as f64 / SEC as f64)
            }
            TimeLabels::Clock => clock(t_us),
            TimeLabels::Days => format!("d{} {}", t_us / DAY + 1, clock(t_us)),
        }
    }
}

/// `YYYY-MM-DD hh:mm:ss...Z` of an absolute time (µs since the epoch), clamped to i64.
fn utc(us: i128) -> String {
    crate::trace::timestamp::format_utc(us.clamp(i128::from(i64::MIN / 2), i128::from(i64::MAX / 2)) as i64)
}

impl Ranged for TimeAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = u64;

    fn map(&self, value: &u64, limit: (i32, i32)) -> i32 {
        let span = (self.to - self.from) as f64;
        let f = (*value as f64 - self.from as f64) / span;
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<u64> {
        let max = hint.max_num_points().min(MAX_TIME_TICKS + 1);
        if max == 0 {
            return Vec::new();
        }
        let span = self.to - self.from;
        let mut step = self.step;
        while step < span && span / step + 1 > max as u64 {
            step = step.saturating_mul(2);
        }
        let first = match self.absolute(self.from) {
            // The first round clock time at or after the start.
            Some(a) => {
                let s = step as i128;
                let round = (a + s - 1).div_euclid(s) * s;
                self.from.saturating_add((round - a) as u64)
            }
            None => self.from.div_ceil(step).saturating_mul(step),
        };
        let mut out = Vec::new();
        let mut t = first;
        while t <= self.to && out.len() <= MAX_TIME_TICKS {
            out.push(t);
            match t.checked_add(step) {
                Some(n) => t = n,
                None => break,
            }
        }
        out
    }

    fn range(&self) -> Range<u64> {
        self.from..self.to
    }
}

impl ValueFormatter<u64> for TimeAxis {
    fn format_ext(&self, value: &u64) -> String {
        self.label(*value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_week_is_labelled_in_days() {
        let a = TimeAxis::new(0, 7 * DAY);
        assert_eq!(a.step(), DAY);
        assert_eq!(a.labels(), TimeLabels::Days);
        assert_eq!(a.label(26 * HOUR), "d2 02:00");
        assert_eq!(a.key_points(20usize), (0..=7).map(|d| d * DAY).collect::<Vec<_>>());
    }

    #[test]
    fn an_hour_is_labelled_as_clock_time() {
        let a = TimeAxis::new(0, HOUR);
        assert_eq!(a.step(), 5 * MIN);
        assert_eq!(a.labels(), TimeLabels::Clock);
        assert_eq!(a.label(90 * MIN), "01:30");
        assert_eq!(a.description(), "time since start (hh:mm)");
        assert_eq!(a.key_points(100usize).len(), 13);
    }

    #[test]
    fn short_spans_use_seconds_and_zoom_keeps_days() {
        let a = TimeAxis::new(0, 30 * SEC);
        assert_eq!(a.labels(), TimeLabels::Seconds);
        assert_eq!(a.step(), 5 * SEC);
        assert_eq!(a.label(15 * SEC), "15");
        let z = TimeAxis::new(3 * DAY + 2 * HOUR, 3 * DAY + 4 * HOUR);
        assert_eq!(z.labels(), TimeLabels::Days);
        assert_eq!(z.step(), 10 * MIN);
        assert_eq!(z.label(3 * DAY + 2 * HOUR + 10 * MIN), "d4 02:10");
        let sub = TimeAxis::new(0, 3 * SEC);
        assert_eq!(sub.step(), 500_000);
        assert_eq!(sub.label(1_500_000), "1.5");
    }

    #[test]
    fn extreme_spans_do_not_overflow() {
        let a = TimeAxis::new(u64::MAX - 5, u64::MAX);
        assert!(a.key_points(10usize).len() <= MAX_TIME_TICKS + 1);
        let b = TimeAxis::new(0, u64::MAX);
        assert!(!b.key_points(10usize).is_empty());
        let c = TimeAxis::new(u64::MAX, u64::MAX);
        assert!(c.start_us() < c.to_us());
    }

    #[test]
    fn absolute_time_puts_ticks_on_round_utc_times() {
        // Time zero at 2024-06-01 13:07:30 UTC; two hours shown.
        let epoch = 1_717_247_250_000_000;
        let a = TimeAxis::new(0, 2 * HOUR).with_epoch(Some(epoch));
        assert_eq!(a.labels(), TimeLabels::Clock);
        assert_eq!(a.step(), 10 * MIN);
        let pts = a.key_points(100usize);
        // The first tick is 13:10, 2.5 minutes after time zero.
        assert_eq!(pts[0], 150 * SEC);
        assert_eq!(a.label(pts[0]), "13:10");
        assert_eq!(a.label(pts[1]), "13:20");
        assert_eq!(a.description(), "UTC time (hh:mm) on 2024-06-01");
        assert_eq!(a.span_text(), "2024-06-01 13:07 to 15:07 UTC");
        // Crossing midnight: dates, in the calendar's days.
        let late = TimeAxis::new(10 * HOUR, 12 * HOUR).with_epoch(Some(epoch));
        assert_eq!(late.labels(), TimeLabels::Days);
        assert_eq!(late.label(late.key_points(100usize)[0]), "06-01 23:10");
        assert_eq!(late.description(), "UTC date and time (MM-DD hh:mm)");
        assert_eq!(late.span_text(), "2024-06-01 23:07 to 2024-06-02 01:07 UTC");
        // Without an epoch nothing changes.
        assert_eq!(TimeAxis::new(0, HOUR).with_epoch(None), TimeAxis::new(0, HOUR));
    }

    #[test]
    fn map_is_linear_and_ticks_respect_the_hint() {
        let a = TimeAxis::new(HOUR, 2 * HOUR);
        assert_eq!(a.map(&HOUR, (0, 1000)), 0);
        assert_eq!(a.map(&(HOUR + 30 * MIN), (0, 1000)), 500);
        assert_eq!(a.map(&(2 * HOUR), (0, 1000)), 1000);
        let pts = a.key_points(4usize);
        assert!(pts.len() <= 4, "{pts:?}");
        assert_eq!(pts[0], HOUR);
    }
}
