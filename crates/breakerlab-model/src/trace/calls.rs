//! Per-call logs (one row per call: timestamp, latency, outcome) for exact replay; the
//! importers are `breakerlab`'s (`trace::calls` for CSV, `trace::spans` for span formats).
//!
//! Storage is three parallel vectors (arrival time, latency in µs as `u32`, outcome class), about
//! 13 bytes a call, so a week at 100 calls/s fits in memory without any of the file's strings.
//! Time zero is the first call's time; calls are in time order (equal times are kept). A logged
//! timeout is an `error` answer at the logged latency (the log knows only that the dependency
//! took at least that long; the replay client's own timeout applies on top).

use super::hosts::{HostColumn, HostIds};
use super::{ImportReport, IntervalTrace, TraceError, TraceOptions, to_sim};
use crate::outcome::{Answer, OutcomeClass};
use crate::time::{Dur, SimTime};
use rand::{Rng, RngExt};

/// A per-call log, ready for exact replay.
#[derive(Clone, Debug)]
pub struct CallTrace {
    times: Vec<SimTime>,
    latency_us: Vec<u32>,
    class: Vec<OutcomeClass>,
    near: usize,
    offset_s: i64,
    horizon: SimTime,
    /// What the import did (the loader adds what it knows: format, span).
    pub report: ImportReport,
    /// The host of each call, when the log names one (see [`super::hosts`]).
    hosts: Option<Box<HostColumn>>,
}

/// `x` (finite, at least 0) rounded half away from zero, as `f64::round` does, without the
/// library call.
pub fn round_non_negative(x: f64) -> f64 {
    if x >= 4_503_599_627_370_496.0 {
        return x; // 2^52 and above: already whole
    }
    let whole = (x as u64) as f64;
    if x - whole >= 0.5 { whole + 1.0 } else { whole }
}

impl CallTrace {
    /// An empty trace for an importer to fill with [`push`](CallTrace::push): unlogged
    /// attempts draw from the `near` logged calls nearest in time.
    pub fn new(near: usize, offset_s: i64, report: ImportReport) -> CallTrace {
        CallTrace {
            times: Vec::new(),
            latency_us: Vec::new(),
            class: Vec::new(),
            near,
            offset_s,
            horizon: SimTime::ZERO,
            report,
            hosts: None,
        }
    }

    /// Appends a call made at `at` (not before the last one), answered `class` after
    /// `latency_us` microseconds.
    #[inline]
    pub fn push(&mut self, at: SimTime, latency_us: u32, class: OutcomeClass) {
        self.horizon = self.horizon.max(at + Dur(u64::from(latency_us)));
        self.times.push(at);
        self.latency_us.push(latency_us);
        self.class.push(class);
    }

    /// Gives back the memory the pushes reserved beyond the calls.
    pub fn shrink_to_fit(&mut self) {
        self.times.shrink_to_fit();
        self.latency_us.shrink_to_fit();
        self.class.shrink_to_fit();
    }

    /// A call trace from calls already read and sorted by time (the span importers):
    /// `(absolute start µs, latency µs, class)`.
    pub fn from_calls(
        mut report: ImportReport,
        calls: impl Iterator<Item = (i64, f64, OutcomeClass)>,
        opts: &TraceOptions,
    ) -> Result<CallTrace, TraceError> {
        let near = opts.near_calls.unwrap_or(16).max(1);
        let n = calls.size_hint().0;
        let (mut times, mut latency_us, mut class) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut epoch, mut horizon, mut clipped) = (None, SimTime::ZERO, 0u64);
        for (t, lat, c) in calls {
            let epoch = *epoch.get_or_insert(t);
            let lat = if lat > 0.0 { round_non_negative(lat) } else { 0.0 };
            clipped += u64::from(lat > f64::from(u32::MAX));
            let lat = lat.min(f64::from(u32::MAX)) as u32;
            let at = to_sim(t, epoch);
            horizon = horizon.max(at + Dur(u64::from(lat)));
            times.push(at);
            latency_us.push(lat);
            class.push(c);
        }
        if clipped > 0 {
            report.notes.push(format!("{clipped} latencies above 71m34s were clipped to 71m34s"));
        }
        report.epoch_offset_us = epoch.unwrap_or(0);
        report.rows_used = times.len() as u64;
        let offset_s = opts.offset_seconds()?;
        Ok(CallTrace { times, latency_us, class, near, offset_s, horizon, report, hosts: None })
    }

    /// Per-interval aggregates of the log, for SLO rules and charts: buckets of `step` from the
    /// first call, each with its call count, error rate (calls answered `error` or
    /// `rate_limited`) and exact p50/p90/p95/p99 (nearest rank). Buckets without calls are gaps
    /// treated as missing data.
    pub fn aggregate(&self, step: Dur) -> Result<IntervalTrace, TraceError> {
        if step.is_zero() {
            return Err(TraceError::Option {
                option: "slo_interval",
                message: "expected a positive duration".into(),
            });
        }
        let mut rows = Vec::new();
        let mut lat: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < self.times.len() {
            let bucket = self.times[i].0 / step.0;
            let start = i;
            while i < self.times.len() && self.times[i].0 / step.0 == bucket {
                i += 1;
            }
            lat.clear();
            lat.extend_from_slice(&self.latency_us[start..i]);
            lat.sort_unstable();
            let n = lat.len();
            let errors = self.class[start..i]
                .iter()
                .filter(|c| matches!(c, OutcomeClass::Error | OutcomeClass::RateLimited))
                .count();
            let mut logged = [0.0; 4];
            for (k, q) in super::quantile::QUANTILES.iter().enumerate() {
                let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
                logged[k] = f64::from(lat[rank - 1]);
            }
            let offset = i64::try_from(bucket * step.0).unwrap_or(i64::MAX);
            rows.push(super::interval::Raw {
                t: self.report.epoch_offset_us.saturating_add(offset),
                line: 0,
                count: Some(n as u64),
                error_rate: errors as f64 / n as f64,
                logged,
            });
        }
        let opts =
            TraceOptions { interval: Some(step), gaps: super::GapPolicy::Missing, ..TraceOptions::default() };
        let report = ImportReport {
            file: format!("{} (aggregated per {step})", self.report.file),
            rows: rows.len() as u64,
            ..ImportReport::default()
        };
        IntervalTrace::build(rows, &opts, self.offset_s, report)
    }

    /// Logged calls.
    pub fn len(&self) -> usize {
        self.times.len()
    }
    /// True when no call was logged (never, for an imported trace).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The arrival times, exactly as logged (sorted; equal times keep file order).
    pub fn arrivals(&self) -> Vec<SimTime> {
        self.times.clone()
    }

    /// The arrival time of logged call `i`, if there is one.
    pub fn arrival(&self, i: usize) -> Option<SimTime> {
        self.times.get(i).copied()
    }

    /// The logged answer of call `request` (its index in [`CallTrace::arrivals`]): the first
    /// attempt replays exactly. An index past the end answers with the last call.
    pub fn first_answer(&self, request: usize) -> Answer {
        let i = request.min(self.times.len() - 1);
        Answer { latency: Dur(u64::from(self.latency_us[i])), class: self.class[i], retry_after: None }
    }

    /// The answer to an attempt the log never saw (a retry, a probe) at `at`: one of the
    /// `near_calls` logged calls nearest in time to `at`, chosen uniformly (one draw). Nearness
    /// is |t − at|, ties going to the earlier call. Allocation-free, O(near_calls).
    pub fn answer_near<R: Rng + ?Sized>(&self, at: SimTime, rng: &mut R) -> Answer {
        let n = self.times.len();
        let right = self.times.partition_point(|t| *t < at);
        self.first_answer(self.near_index(n, right, |i| self.times[i], at, rng))
    }

    /// Host `host`'s answer to an attempt at `at` (a request its log sent elsewhere, a retry,
    /// a health check): one of the `near_calls` calls of that host nearest in time to `at`,
    /// chosen as [`CallTrace::answer_near`] chooses among all calls. Allocation-free.
    pub fn answer_near_host<R: Rng + ?Sized>(&self, host: u16, at: SimTime, rng: &mut R) -> Answer {
        let Some(hosts) = &self.hosts else { return self.answer_near(at, rng) };
        let calls = hosts.calls_of(host);
        let time = |i: usize| self.times[calls[i] as usize];
        let right = calls.partition_point(|&c| self.times[c as usize] < at);
        let k = self.near_index(calls.len(), right, time, at, rng);
        self.first_answer(calls[k] as usize)
    }

    /// Position (in `0..n`, ordered by `time`) of the call drawn among the `near` nearest to
    /// `at`; `right` is the first position at or after `at`. One draw from `rng`.
    #[inline]
    fn near_index<R: Rng + ?Sized>(
        &self,
        n: usize,
        mut right: usize,
        time: impl Fn(usize) -> SimTime,
        at: SimTime,
        rng: &mut R,
    ) -> usize {
        let k = self.near.min(n);
        let pick = rng.random_range(0..k);
        let mut left = right; // candidates are left-1, left-2, ... and right, right+1, ...
        let mut chosen = 0;
        for _ in 0..=pick {
            let take_left = match (left > 0, right < n) {
                (true, true) => at - time(left - 1) <= time(right) - at,
                (true, false) => true,
                _ => false,
            };
            if take_left {
                left -= 1;
                chosen = left;
            } else {
                chosen = right;
                right += 1;
            }
        }
        chosen
    }

    /// Attaches the host of each call (`ids.of_call`, one per call in log order), numbered by
    /// sorted value; `explicit` when the scenario named the column. An error when the counts
    /// differ (an importer's mistake, never the user's).
    pub fn set_hosts(&mut self, ids: HostIds, explicit: bool) -> Result<(), TraceError> {
        if ids.of_call.len() != self.times.len() {
            return Err(TraceError::Option {
                option: "host_column",
                message: format!("{} hosts read for {} calls", ids.of_call.len(), self.times.len()),
            });
        }
        self.hosts = Some(Box::new(HostColumn::new(ids, explicit)));
        Ok(())
    }

    /// The hosts of the calls, when the log names them.
    pub fn hosts(&self) -> Option<&HostColumn> {
        self.hosts.as_deref()
    }

    /// The hosts, to set their ground truth while the import is not yet shared.
    pub fn hosts_mut(&mut self) -> Option<&mut HostColumn> {
        self.hosts.as_deref_mut()
    }

    /// The host logged call `request` went to, when the log names hosts.
    #[inline]
    pub fn host_of(&self, request: u64) -> Option<u16> {
        self.hosts.as_ref().and_then(|h| h.host_of(usize::try_from(request).ok()?))
    }

    /// Host `host`'s calls alone, on the log's time base (time zero and epoch unchanged), for
    /// per-host ground truth; `None` without hosts.
    pub fn host_calls(&self, host: u16) -> Option<CallTrace> {
        let calls = self.hosts.as_ref()?.calls_of(host);
        let mut sub = CallTrace::new(self.near, self.offset_s, self.report.clone());
        for &i in calls {
            let i = i as usize;
            sub.push(self.times[i], self.latency_us[i], self.class[i]);
        }
        Some(sub)
    }

    /// End of the log: the latest completion (arrival plus latency) of any logged call.
    pub fn horizon(&self) -> SimTime {
        self.horizon
    }
    /// Absolute time of time zero (the first row), microseconds since the Unix epoch.
    pub fn epoch_offset_us(&self) -> i64 {
        self.report.epoch_offset_us
    }
    /// What label files need to move absolute times into this trace's time base.
    pub fn time_base(&self) -> super::TimeBase {
        super::TimeBase {
            epoch_us: self.report.epoch_offset_us,
            horizon: self.horizon(),
            utc_offset_s: self.offset_s,
            step: Dur::ZERO,
        }
    }
    /// What the import did.
    pub fn report(&self) -> &ImportReport {
        &self.report
    }
}
