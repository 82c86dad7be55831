//! timeline.png: one scenario on a shared time axis. On top the dependency's health (p95
//! latency on a log axis and error rate, incident windows shaded and labelled by expectation,
//! numbered with a key underneath when labels would collide), then one state band per
//! configuration (closed / half-open / open occupancy per bin, entries into open marked), with
//! one lane per breaker when a run has several (client instances, providers), then traffic
//! (offered, admitted, rejected, failed per second). Recorded bins are merged so a week stays
//! readable; a [`TimeRange`] zooms in. The axis shows UTC clock time when the input had
//! absolute timestamps.

use super::axis::TimeAxis;
use super::data::{Bin, Incident, SINGLE_POLICY, Series, TransitionRow};
use super::style::*;
use super::{ChartError, TimeRange};
use crate::policy::State;
use crate::time::Dur;
use crate::truth::Expect;
use plotters::prelude::*;

/// Everything the timeline draws (`report::contents::timeline`).
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineData {
    /// Per-configuration bins (timeline.csv).
    pub series: Vec<Series>,
    /// State changes (transitions.csv; empty when absent).
    pub transitions: Vec<TransitionRow>,
    /// Ground-truth windows (incidents.csv; empty when absent).
    pub incidents: Vec<Incident>,
    /// What run the timeline shows, for its title (`slow-not-down · seed 7 · replicate 0`);
    /// empty when unknown.
    pub context: String,
    /// The breakers' names in transitions.csv's `instance` order (inputs.toml), when the run
    /// had several; empty otherwise (then instances seen in transitions.csv are numbered).
    pub lanes: Vec<String>,
    /// The providers, in file order (the first one's true health is timeline.csv's `true_*`
    /// columns; the others' are in their `provider.NAME.true_*` columns).
    pub providers: Vec<String>,
    /// The absolute time of time zero (µs since the Unix epoch), when the input had one.
    pub epoch_us: Option<i64>,
}

impl TimelineData {
    /// The configurations drawn (at most [`TIMELINE_MAX_CONFIGS`]).
    fn shown(&self) -> &[Series] {
        &self.series[..self.series.len().min(TIMELINE_MAX_CONFIGS)]
    }

    /// Transitions of configuration `policy` (all of them when only one is drawn and the files
    /// disagree on labels).
    fn of<'a>(&'a self, policy: &'a str) -> impl Iterator<Item = &'a TransitionRow> + 'a {
        let only_one = self.series.len() == 1;
        self.transitions.iter().filter(move |t| t.policy == policy || only_one || t.policy == SINGLE_POLICY)
    }

    /// The lanes drawn per configuration: one name per breaker, or none when the run had one
    /// breaker (its band is then timeline.csv's occupancy).
    pub fn lane_names(&self) -> Vec<String> {
        let seen = self.transitions.iter().map(|t| t.instance as usize + 1).max().unwrap_or(0);
        if self.lanes.len() <= 1 && seen <= 1 {
            return Vec::new();
        }
        (0..self.lanes.len().max(seen))
            .map(|i| self.lanes.get(i).cloned().unwrap_or_else(|| format!("instance {i}")))
            .collect()
    }

    /// Per display bin, the shares of the bin breaker `instance` of `policy` spent closed,
    /// half-open and open, from its transitions (closed from time 0); `None` where the bin has
    /// no state data (after the run's end).
    fn lane_states(&self, policy: &str, instance: u64, bins: &[Shown]) -> Vec<Option<[f64; 3]>> {
        let changes: Vec<(u64, State)> =
            self.of(policy).filter(|t| t.instance == instance).map(|t| (t.at_us, t.to)).collect();
        let slot = |s: State| match s {
            State::Closed => 0,
            State::HalfOpen => 1,
            State::Open => 2,
        };
        let (mut k, mut state) = (0, State::Closed);
        bins.iter()
            .map(|b| {
                while k < changes.len() && changes[k].0 <= b.start {
                    state = changes[k].1;
                    k += 1;
                }
                let mut acc = [0.0; 3];
                let mut t = b.start;
                while k < changes.len() && changes[k].0 < b.end {
                    acc[slot(state)] += (changes[k].0 - t) as f64;
                    (t, state) = changes[k];
                    k += 1;
                }
                acc[slot(state)] += (b.end - t) as f64;
                let span = (b.end - b.start).max(1) as f64;
                b.states.map(|_| acc.map(|v| v / span))
            })
            .collect()
    }

    /// Entries into OPEN of configuration `policy`, each with whether it was a false open: from
    /// CLOSED, at a time no incident expecting `open` or `either` covers (with the default
    /// 30 s tolerance after its end, as the scoring uses).
    pub fn open_marks(&self, policy: &str) -> Vec<(u64, bool)> {
        self.open_marks_of(policy, None)
    }

    /// [`TimelineData::open_marks`] of one breaker (`Some(instance)`) or all (each entry judged
    /// by a binary search over the excusing incidents).
    fn open_marks_of(&self, policy: &str, instance: Option<u64>) -> Vec<(u64, bool)> {
        let excusing = crate::report::windows::Windows::new(
            self.incidents
                .iter()
                .filter(|i| matches!(i.expect, Expect::Open | Expect::Either))
                .map(|i| (i.start_us, i.end_us.saturating_add(TOLERANCE_US))),
        );
        self.of(policy)
            .filter(|t| instance.is_none_or(|i| t.instance == i))
            .filter(|t| t.to == State::Open && t.from != State::Open)
            .map(|t| (t.at_us, t.from == State::Closed && !excusing.cover(t.at_us)))
            .collect()
    }

    /// Of `policy`'s entries into open at `from_us..=to_us` (one breaker's, or all): how many
    /// start an open episode (closed → open, what `open_episodes` counts) and how many re-open
    /// after a failed probe (half-open → open, `probe_failures`).
    pub fn open_counts(
        &self,
        policy: &str,
        instance: Option<u64>,
        from_us: u64,
        to_us: u64,
    ) -> (usize, usize) {
        let entries = self.of(policy).filter(|t| instance.is_none_or(|i| t.instance == i)).filter(|t| {
            t.to == State::Open && t.from != State::Open && t.at_us >= from_us && t.at_us <= to_us
        });
        entries.fold((0, 0), |(e, r), t| if t.from == State::Closed { (e + 1, r) } else { (e, r + 1) })
    }

    /// The incidents expecting `open` that configuration `policy` missed: no instance was open
    /// at the start and none entered OPEN before the end plus the default tolerance. The
    /// incidents are judged in order of start as the changes before each are replayed once, so
    /// the cost is `n log n` in incidents and changes, not their product.
    pub fn missed(&self, policy: &str) -> Vec<&Incident> {
        let mut changes: Vec<&TransitionRow> = self.of(policy).collect();
        changes.sort_by_key(|t| t.at_us);
        let opens: Vec<u64> = changes.iter().filter(|t| t.to == State::Open).map(|t| t.at_us).collect();
        let mut order: Vec<usize> =
            (0..self.incidents.len()).filter(|&k| self.incidents[k].expect == Expect::Open).collect();
        order.sort_by_key(|&k| self.incidents[k].start_us);
        let mut open_now = std::collections::BTreeMap::new();
        let (mut open_count, mut next) = (0usize, 0usize);
        let mut missed = vec![false; self.incidents.len()];
        for k in order {
            let i = &self.incidents[k];
            while let Some(t) = changes.get(next).filter(|t| t.at_us < i.start_us) {
                let was = open_now.insert(t.instance, t.to == State::Open).unwrap_or(false);
                open_count = open_count + usize::from(t.to == State::Open) - usize::from(was);
                next += 1;
            }
            let first = opens.partition_point(|&at| at < i.start_us);
            let caught = opens.get(first).is_some_and(|&at| at < i.end_us.saturating_add(TOLERANCE_US));
            missed[k] = !caught && open_count == 0;
        }
        self.incidents.iter().zip(missed).filter(|(_, m)| *m).map(|(i, _)| i).collect()
    }
}

/// The scoring's default tolerance after an incident's end (µs), used to mark false opens and
/// missed incidents (a scenario may set another; summary.csv's counts are authoritative).
const TOLERANCE_US: u64 = 30_000_000;

/// Height of one configuration's state band with `lanes` breakers (0 or 1: one band).
fn band_height(lanes: usize) -> u32 {
    if lanes <= 1 {
        TIMELINE_BAND_HEIGHT
    } else {
        LANE_LABEL_HEIGHT + lanes.min(TIMELINE_MAX_LANES) as u32 * TIMELINE_LANE_HEIGHT + 8
    }
}

/// The configuration's name row above its band (px).
const LANE_LABEL_HEIGHT: u32 = 20;

/// The pixel size of the timeline of `data`, zoomed to `range` when given.
pub fn timeline_size(data: &TimelineData, range: Option<TimeRange>) -> (u32, u32) {
    let k = data.series.len().clamp(1, TIMELINE_MAX_CONFIGS) as u32;
    let traffic = if k == 1 { TIMELINE_TRAFFIC_HEIGHT } else { k * TIMELINE_TRAFFIC_MULTI_HEIGHT };
    let key = window(data, range)
        .map(|(from, to)| incident_labels(&data.incidents, &axis_of(data, from, to)).key.len() as u32)
        .unwrap_or(0);
    let h = TITLE_HEIGHT
        + TIMELINE_HEALTH_HEIGHT
        + key * TIMELINE_KEY_LINE_HEIGHT
        + TIMELINE_BAND_LEGEND_HEIGHT
        + k * band_height(data.lane_names().len())
        + traffic
        + TIMELINE_AXIS_HEIGHT;
    (TIMELINE_WIDTH, h)
}

/// The time axis of `data` over `[from, to]`: clock time when the input had absolute times.
fn axis_of(data: &TimelineData, from: u64, to: u64) -> TimeAxis {
    TimeAxis::new(from, to).with_epoch(data.epoch_us)
}

/// Width of the health panel's plot, where incident labels go (px).
const PLOT_WIDTH: i32 = TIMELINE_WIDTH as i32 - 20 - TIMELINE_LEFT_AREA as i32 - TIMELINE_RIGHT_AREA as i32;
/// Rows of incident labels at the top of the health panel.
const LABEL_ROWS: usize = 2;

/// One incident label on the health panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedLabel {
    /// The incident's number (from 1, incidents.csv's row, as `explain --incident N`).
    pub number: usize,
    /// Left edge, in px from the plot's left.
    pub x: i32,
    /// Row, 0 at the top.
    pub row: usize,
    /// The text drawn.
    pub text: String,
}

/// Where incident labels go: full labels (`#1 outage: should open`) when every one fits in
/// [`LABEL_ROWS`] rows without overlapping; otherwise only numbers in the windows, and a key
/// under the panel (`#1 outage at 00:30 for 20m: should open`) listing every incident shown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncidentLabels {
    /// The labels drawn in the panel.
    pub placed: Vec<PlacedLabel>,
    /// The key's lines (empty when the full labels fit).
    pub key: Vec<String>,
}

/// Lays out the labels of `incidents` inside `axis`'s window (see [`IncidentLabels`]).
pub fn incident_labels(incidents: &[Incident], axis: &TimeAxis) -> IncidentLabels {
    let _ = register_fonts();
    let shown: Vec<(usize, &Incident, i32)> = incidents
        .iter()
        .enumerate()
        .filter(|(_, i)| i.end_us.min(axis.to_us()) > i.start_us.max(axis.start_us()))
        .map(|(n, i)| (n + 1, i, axis.map(&i.start_us.max(axis.start_us()), (0, PLOT_WIDTH))))
        .collect();
    // Greedy, left to right: each label in the first row where it clears the previous one.
    let mut row_end = [i32::MIN; LABEL_ROWS];
    let mut placed: Vec<PlacedLabel> = Vec::new();
    let mut all = true;
    for (number, i, x) in &shown {
        let text = format!("#{number} {}", incident_label(i));
        let w = text_width(&text, LEGEND_SIZE) + 10;
        match (0..LABEL_ROWS).find(|r| row_end[*r] <= *x) {
            Some(row) => {
                row_end[row] = x + w;
                placed.push(PlacedLabel { number: *number, x: *x, row, text });
            }
            None => all = false,
        }
    }
    if all {
        return IncidentLabels { placed, key: Vec::new() };
    }
    // Numbers only; a number with no room joins the label before it (`#2–4`, `#7,9`).
    let mut row_end = [i32::MIN; LABEL_ROWS];
    let mut groups: Vec<(Vec<usize>, i32, usize)> = Vec::new();
    for (number, _, x) in &shown {
        let w = text_width(&format!("#{number}"), LEGEND_SIZE) + 10;
        match (0..LABEL_ROWS).find(|r| row_end[*r] <= *x) {
            Some(row) => {
                row_end[row] = x + w;
                groups.push((vec![*number], *x, row));
            }
            None => {
                let Some((numbers, gx, row)) = groups.last_mut() else { continue };
                numbers.push(*number);
                row_end[*row] = *gx + text_width(&numbers_text(numbers), LEGEND_SIZE) + 10;
            }
        }
    }
    let placed = groups
        .into_iter()
        .map(|(numbers, x, row)| PlacedLabel { number: numbers[0], x, row, text: numbers_text(&numbers) })
        .collect();
    let items: Vec<String> = shown
        .iter()
        .map(|(n, i, _)| {
            let kind = if i.kind.is_empty() { "incident" } else { i.kind.as_str() };
            format!(
                "#{n} {kind} at {} for {}: {}",
                axis.label(i.start_us),
                fmt_param(&Dur(i.end_us - i.start_us).to_string()),
                expect_label(i.expect)
            )
        })
        .collect();
    let width = TIMELINE_WIDTH as i32 - TIMELINE_LEFT_AREA as i32 - 40;
    let join = |line: &[usize]| line.iter().map(|k| items[*k].as_str()).collect::<Vec<_>>().join("   ");
    let mut lines: Vec<Vec<usize>> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        match lines.last_mut() {
            Some(line) if text_width(&format!("{}   {item}", join(line)), LEGEND_SIZE) <= width => {
                line.push(k)
            }
            _ => lines.push(vec![k]),
        }
    }
    if lines.len() > TIMELINE_MAX_KEY_LINES {
        lines.truncate(TIMELINE_MAX_KEY_LINES);
        // The last line ends with how many more incidents.csv lists.
        loop {
            let listed: usize = lines.iter().map(Vec::len).sum();
            let last = lines.last_mut().expect("at least one line");
            let more = format!("   … and {} more in incidents.csv", items.len() - listed);
            if last.len() == 1 || text_width(&format!("{}{more}", join(last)), LEGEND_SIZE) <= width {
                break;
            }
            last.pop();
        }
        let listed: usize = lines.iter().map(Vec::len).sum();
        let mut key: Vec<String> = lines.iter().map(|l| join(l)).collect();
        if let Some(last) = key.last_mut() {
            last.push_str(&format!("   … and {} more in incidents.csv", items.len() - listed));
        }
        return IncidentLabels { placed, key };
    }
    IncidentLabels { placed, key: lines.iter().map(|l| join(l)).collect() }
}

/// Incident numbers as one label: `#3`, `#2–4` (a run), `#2,5`.
fn numbers_text(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("#{one}"),
        [first, .., last] if last - first + 1 == numbers.len() => format!("#{first}–{last}"),
        _ => format!("#{}", numbers.iter().map(usize::to_string).collect::<Vec<_>>().join(",")),
    }
}

/// An incident's label: `outage: should open`.
fn incident_label(i: &Incident) -> String {
    if i.kind.is_empty() {
        expect_label(i.expect).to_string()
    } else {
        format!("{}: {}", i.kind, expect_label(i.expect))
    }
}

/// Draws the timeline (PNG bytes), zoomed to `range` when given.
pub fn draw_timeline(data: &TimelineData, range: Option<TimeRange>) -> Result<Vec<u8>, ChartError> {
    check(data)?;
    png(timeline_size(data, range), |root| render_timeline(data, range, root))
}

fn check(data: &TimelineData) -> Result<(), ChartError> {
    if data.series.iter().all(|s| s.bins.is_empty()) {
        return Err(ChartError::NoData("timeline.csv has no bins".into()));
    }
    Ok(())
}

/// A bin as displayed: recorded bins merged, counts turned into rates.
#[derive(Clone, Debug, PartialEq)]
struct Shown {
    start: u64,
    end: u64,
    /// offered, admitted, rejected, failed per second.
    rates: [f64; 4],
    admitted: f64,
    /// closed, half-open, open shares (None = no data).
    states: Option<[f64; 3]>,
    p95: Option<f64>,
    err: Option<f64>,
    /// The dependency's true p95 and error rate (every arrival, admitted or not).
    true_p95: Option<f64>,
    true_err: Option<f64>,
    /// The same for each provider after the first.
    others: Vec<Health>,
}

/// A true p95 (ms) and error rate.
type Health = (Option<f64>, Option<f64>);

/// Round display-bin widths (µs): merged bins take the smallest that is a multiple of the
/// recorded bin, leaves at most [`TIMELINE_MAX_BINS`] bins and merges at most three times
/// more than needed (else a plain multiple of the recorded bin is used).
const DISPLAY_WIDTHS: [u64; 22] = [
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    15_000_000,
    30_000_000,
    60_000_000,
    120_000_000,
    300_000_000,
    600_000_000,
    900_000_000,
    1_200_000_000,
    1_800_000_000,
    3_600_000_000,
    7_200_000_000,
    10_800_000_000,
    21_600_000_000,
    43_200_000_000,
    86_400_000_000,
    172_800_000_000,
    604_800_000_000,
    2_419_200_000_000,
];

/// The display-bin width for `count` recorded bins of `recorded` µs.
fn display_width(recorded: u64, count: usize) -> u64 {
    let need = count.div_ceil(TIMELINE_MAX_BINS).max(1) as u64;
    if need == 1 || recorded == 0 {
        return recorded.max(1);
    }
    DISPLAY_WIDTHS
        .iter()
        .copied()
        .find(|w| w % recorded == 0 && w / recorded >= need && w / recorded <= 3 * need)
        .unwrap_or(recorded * need)
}

/// Merges the bins overlapping `[from, to)` into display bins aligned on multiples of `width`.
fn merge(bins: &[Bin], from: u64, to: u64, width: u64) -> Vec<Shown> {
    let inside: Vec<&Bin> = bins.iter().filter(|b| b.end_us > from && b.start_us < to).collect();
    inside
        .chunk_by(|a, b| a.start_us / width.max(1) == b.start_us / width.max(1))
        .map(|g| {
            let start = g[0].start_us;
            let end = g[g.len() - 1].end_us;
            let secs = (end - start) as f64 / 1e6;
            let sum = |f: fn(&Bin) -> f64| g.iter().map(|b| f(b)).sum::<f64>();
            let admitted = sum(|b| b.admitted);
            let rates = [
                sum(|b| b.offered) / secs,
                admitted / secs,
                sum(|b| b.rejected) / secs,
                sum(|b| b.failures) / secs,
            ];
            // State shares: duration-weighted over the bins that report them.
            let mut st = [0.0; 3];
            let mut st_w = 0.0;
            for b in g {
                if let (Some(c), Some(h), Some(o)) = (b.closed_frac, b.half_open_frac, b.open_frac) {
                    let w = (b.end_us - b.start_us) as f64;
                    let total = c + h + o;
                    if total > 0.0 {
                        st[0] += w * c / total;
                        st[1] += w * h / total;
                        st[2] += w * o / total;
                        st_w += w;
                    }
                }
            }
            let states = (st_w > 0.0).then(|| [st[0] / st_w, st[1] / st_w, st[2] / st_w]);
            // p95: the worst merged bin, so short spikes stay visible.
            let p95 = g
                .iter()
                .filter_map(|b| b.upstream_p95_ms)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            // Error rate: pooled over calls (weighted by admitted requests, or evenly).
            let rated: Vec<(f64, f64)> =
                g.iter().filter_map(|b| b.upstream_error_rate.map(|e| (e, b.admitted))).collect();
            let err = if rated.is_empty() {
                None
            } else {
                let w: f64 = rated.iter().map(|r| r.1).sum();
                Some(if w > 0.0 {
                    rated.iter().map(|r| r.0 * r.1).sum::<f64>() / w
                } else {
                    rated.iter().map(|r| r.0).sum::<f64>() / rated.len() as f64
                })
            };
            // True health: the worst p95, the error rate pooled over arrivals.
            let true_health = |of: &dyn Fn(&Bin) -> Health| {
                let p95 = g
                    .iter()
                    .filter_map(|b| of(b).0)
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
                let weighed: Vec<(f64, f64)> =
                    g.iter().filter_map(|b| of(b).1.map(|e| (e, b.offered.max(1.0)))).collect();
                let err = (!weighed.is_empty()).then(|| {
                    weighed.iter().map(|r| r.0 * r.1).sum::<f64>() / weighed.iter().map(|r| r.1).sum::<f64>()
                });
                (p95, err)
            };
            let (true_p95, true_err) = true_health(&|b| (b.true_p95_ms, b.true_error_rate));
            let providers = g.iter().map(|b| b.other_true.len()).max().unwrap_or(0);
            let others = (0..providers)
                .map(|p| true_health(&|b| b.other_true.get(p).copied().unwrap_or((None, None))))
                .collect();
            Shown { start, end, rates, admitted, states, p95, err, true_p95, true_err, others }
        })
        .collect()
}

/// The time window shown: the requested range, else the span of all bins.
fn window(data: &TimelineData, range: Option<TimeRange>) -> Result<(u64, u64), ChartError> {
    if let Some(r) = range {
        if r.to_us <= r.from_us {
            return Err(ChartError::NoData(format!("empty time range {}..{}", Dur(r.from_us), Dur(r.to_us))));
        }
        return Ok((r.from_us, r.to_us));
    }
    let from = data.series.iter().filter_map(|s| s.bins.first()).map(|b| b.start_us).min().unwrap_or(0);
    let to = data.series.iter().filter_map(|s| s.bins.last()).map(|b| b.end_us).max().unwrap_or(1);
    Ok((from, to))
}

fn shade_of(e: Expect) -> RGBColor {
    match e {
        Expect::Open => SHADE_OPEN,
        Expect::StayClosed => SHADE_STAY_CLOSED,
        Expect::Either => SHADE_EITHER,
    }
}

fn expect_label(e: Expect) -> &'static str {
    match e {
        Expect::Open => "should open",
        Expect::StayClosed => "should stay closed",
        Expect::Either => "either",
    }
}

/// Splits bins into runs of consecutive present values, each drawn as a step line: the value
/// holds from the bin's start to its end, so changes line up with incident windows exactly.
fn runs(points: impl Iterator<Item = (u64, u64, Option<f64>)>) -> Vec<Vec<(u64, f64)>> {
    let mut out: Vec<Vec<(u64, f64)>> = Vec::new();
    let mut cur = Vec::new();
    for (start, end, v) in points {
        match v {
            Some(v) => {
                cur.push((start, v));
                cur.push((end, v));
            }
            None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Draws the timeline into `root` (sized by [`timeline_size`]).
pub fn render_timeline(data: &TimelineData, range: Option<TimeRange>, root: &Area) -> Result<(), ChartError> {
    check(data)?;
    let (from, to) = window(data, range)?;
    let axis = axis_of(data, from, to);
    let shown = data.shown();
    let max_bins = shown
        .iter()
        .map(|s| s.bins.iter().filter(|b| b.end_us > from && b.start_us < to).count())
        .max()
        .unwrap_or(0);
    let recorded = shown.iter().find_map(|s| s.bins.first()).map(|b| b.end_us - b.start_us).unwrap_or(0);
    let width = display_width(recorded, max_bins);
    let merged: Vec<Vec<Shown>> = shown.iter().map(|s| merge(&s.bins, from, to, width)).collect();

    // Title strip.
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = axis.span_text();
    if range.is_some() {
        sub.push_str(" (zoomed)");
    }
    if width > recorded {
        sub.push_str(&format!(" · bins of {} merged into {} (p95: worst bin)", Dur(recorded), Dur(width)));
    } else if recorded > 0 {
        sub.push_str(&format!(" · bins of {}", Dur(recorded)));
    }
    if shown.len() > 1 {
        sub.push_str(" · health as seen by the configuration that sent the most calls in each bin");
    }
    if data.series.len() > shown.len() {
        sub.push_str(&format!(" · first {} of {} configurations", shown.len(), data.series.len()));
    }
    let mut title = match data.context.as_str() {
        "" => "Timeline".to_string(),
        context => format!("Timeline: {context}"),
    };
    if shown.len() == 1 && shown[0].policy != SINGLE_POLICY {
        title.push_str(&format!(" · {}", shown[0].policy));
    } else if data.context.is_empty() {
        title.push_str(": dependency health, breaker state and traffic");
    }
    let title = fit_text(&title, TITLE_SIZE, TIMELINE_WIDTH as i32 - 40);
    draw_title(&title_area, &title, &sub)?;

    let k = shown.len() as u32;
    let labels = incident_labels(&data.incidents, &axis);
    let key_height = labels.key.len() as u32 * TIMELINE_KEY_LINE_HEIGHT;
    let (health_area, rest) = rest.split_vertically(TIMELINE_HEALTH_HEIGHT);
    let (key_area, rest) = rest.split_vertically(key_height);
    let lanes = data.lane_names();
    let (bands_area, traffic_area) =
        rest.split_vertically(TIMELINE_BAND_LEGEND_HEIGHT + k * band_height(lanes.len()));

    // Health: per display bin, the configuration with the most admitted calls.
    let n = merged.iter().map(Vec::len).max().unwrap_or(0);
    let health: Vec<&Shown> = (0..n)
        .filter_map(|i| {
            let mut best: Option<&Shown> = None;
            for m in &merged {
                if let Some(b) = m.get(i)
                    && best.is_none_or(|x| b.admitted > x.admitted)
                {
                    best = Some(b);
                }
            }
            best
        })
        .collect();
    // The providers whose true health is drawn: the first (the bins' own columns), then those
    // timeline.csv has columns for.
    let mut true_of: Vec<&str> = data.providers.first().map(String::as_str).into_iter().collect();
    if let Some(s) = data.series.first() {
        true_of.extend(s.other_providers.iter().map(String::as_str));
    }
    draw_health(&health_area, &axis, &health, &data.incidents, &labels, &true_of)?;
    for (i, line) in labels.key.iter().enumerate() {
        let y = i as i32 * TIMELINE_KEY_LINE_HEIGHT as i32 + 3;
        key_area
            .draw(&Text::new(line.clone(), (10 + TIMELINE_LEFT_AREA as i32, y), text(LEGEND_SIZE, OI_BLACK)))
            .map_err(draw_err)?;
    }
    draw_bands(&bands_area, &axis, data, shown, &merged, &lanes)?;
    draw_traffic(&traffic_area, &axis, shown, &merged, &data.incidents)?;
    Ok(())
}

const HEADING: u32 = 28;

fn heading(area: &Area, label: &str, legend: &[LegendItem]) -> Result<(), ChartError> {
    let x = 10 + TIMELINE_LEFT_AREA as i32;
    area.draw(&Text::new(label.to_string(), (x, 5), bold(LABEL_SIZE, OI_BLACK))).map_err(draw_err)?;
    let lx = x + bold_width(label, LABEL_SIZE) + 30;
    draw_legend_row(area, legend, lx, 7)?;
    Ok(())
}

fn draw_health(
    area: &Area,
    axis: &TimeAxis,
    bins: &[&Shown],
    incidents: &[Incident],
    labels: &IncidentLabels,
    true_of: &[&str],
) -> Result<(), ChartError> {
    let (head, body) = area.split_vertically(HEADING);
    let has_true = bins.iter().any(|b| b.true_p95.is_some() || b.true_err.is_some());
    let mut legend = vec![
        LegendItem {
            label: "p95 of calls let through (left)".into(),
            colour: HEALTH_P95,
            swatch: Swatch::Line,
        },
        LegendItem { label: "their error rate (right)".into(), colour: HEALTH_ERRORS, swatch: Swatch::Line },
    ];
    if has_true {
        legend.push(LegendItem {
            label: match true_of.first() {
                Some(p) => format!("true p95 / error rate of {p}, every request (dashed)"),
                None => "true p95 / error rate, every request (dashed)".into(),
            },
            colour: DARK_GREY,
            swatch: Swatch::Dashed,
        });
    }
    for (k, p) in true_of.iter().enumerate().skip(1) {
        if bins.iter().any(|b| b.others.get(k - 1).is_some_and(|o| o.0.is_some() || o.1.is_some())) {
            legend.push(LegendItem {
                label: format!("of {p} (dotted)"),
                colour: DARK_GREY,
                swatch: Swatch::Dotted,
            });
        }
    }
    for e in [Expect::Open, Expect::StayClosed, Expect::Either] {
        if incidents.iter().any(|i| i.expect == e) {
            legend.push(LegendItem {
                label: format!("incident: {}", expect_label(e)),
                colour: shade_of(e),
                swatch: Swatch::Shade,
            });
        }
    }
    heading(&head, "Dependency health", &legend)?;

    let p95s: Vec<f64> = bins
        .iter()
        .flat_map(|b| [b.p95, b.true_p95].into_iter().chain(b.others.iter().map(|o| o.0)))
        .flatten()
        .filter(|v| *v > 0.0)
        .collect();
    let (lo, hi) = if p95s.is_empty() {
        (1.0, 1000.0)
    } else {
        let mn = p95s.iter().copied().fold(f64::INFINITY, f64::min);
        let mx = p95s.iter().copied().fold(0.0, f64::max);
        let lo = 10f64.powf(mn.log10().floor());
        let mut hi = 10f64.powf(mx.log10().ceil());
        if hi <= lo {
            hi = lo * 10.0;
        }
        (lo, hi)
    };
    let mut chart = ChartBuilder::on(&body)
        .margin_left(10)
        .margin_right(10)
        .margin_top(4)
        .y_label_area_size(TIMELINE_LEFT_AREA)
        .right_y_label_area_size(TIMELINE_RIGHT_AREA)
        .x_label_area_size(0)
        .build_cartesian_2d(axis.clone(), (lo..hi).log_scale())
        .map_err(draw_err)?
        .set_secondary_coord(axis.clone(), 0.0..1.0);
    chart
        .configure_mesh()
        .x_labels(super::axis::MAX_TIME_TICKS + 1)
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .y_desc("upstream p95 latency (ms, log)")
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    chart
        .configure_secondary_axes()
        .y_desc("upstream error rate (%)")
        .y_labels(6)
        .y_label_formatter(&|v| fmt_pct(*v))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;

    // Incident windows, shaded, labelled as laid out by `incident_labels`.
    let plot = chart.plotting_area();
    for inc in incidents {
        let s = inc.start_us.max(axis.start_us());
        let e = inc.end_us.min(axis.to_us());
        if e > s {
            plot.draw(&Rectangle::new([(s, lo), (e, hi)], shade_of(inc.expect).mix(SHADE_ALPHA).filled()))
                .map_err(draw_err)?;
        }
    }
    let flat = plot.strip_coord_spec();
    for l in &labels.placed {
        let pos = (l.x + 3, 3 + l.row as i32 * (LEGEND_SIZE as i32 + 6));
        let w = text_width(&l.text, LEGEND_SIZE);
        let bg = [(pos.0 - 2, pos.1 - 1), (pos.0 + w + 2, pos.1 + LEGEND_SIZE as i32 + 3)];
        flat.draw(&Rectangle::new(bg, WHITE.mix(0.8).filled())).map_err(draw_err)?;
        flat.draw(&Text::new(l.text.clone(), pos, text(LEGEND_SIZE, OI_BLACK))).map_err(draw_err)?;
    }

    // The true health first, dashed, under the observed lines.
    for run in runs(bins.iter().map(|b| (b.start, b.end, b.true_p95.filter(|v| *v > 0.0)))) {
        chart
            .draw_series(DashedLineSeries::new(run, 7, 5, HEALTH_P95.mix(0.7).stroke_width(2)))
            .map_err(draw_err)?;
    }
    for run in runs(bins.iter().map(|b| (b.start, b.end, b.true_err))) {
        chart
            .draw_secondary_series(DashedLineSeries::new(run, 7, 5, HEALTH_ERRORS.mix(0.7).stroke_width(2)))
            .map_err(draw_err)?;
    }
    // The other providers' true health, dotted and lighter.
    for k in 0..true_of.len().saturating_sub(1) {
        let other = |b: &&Shown| b.others.get(k).copied().unwrap_or((None, None));
        for run in runs(bins.iter().map(|b| (b.start, b.end, other(b).0.filter(|v| *v > 0.0)))) {
            chart
                .draw_series(DashedLineSeries::new(run, 2, 4, HEALTH_P95.mix(0.55).stroke_width(2)))
                .map_err(draw_err)?;
        }
        for run in runs(bins.iter().map(|b| (b.start, b.end, other(b).1))) {
            chart
                .draw_secondary_series(DashedLineSeries::new(
                    run,
                    2,
                    4,
                    HEALTH_ERRORS.mix(0.55).stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
    }
    for run in runs(bins.iter().map(|b| (b.start, b.end, b.p95.filter(|v| *v > 0.0)))) {
        chart.draw_series(LineSeries::new(run, HEALTH_P95.stroke_width(2))).map_err(draw_err)?;
    }
    for run in runs(bins.iter().map(|b| (b.start, b.end, b.err))) {
        chart.draw_secondary_series(LineSeries::new(run, HEALTH_ERRORS.stroke_width(2))).map_err(draw_err)?;
    }
    if p95s.is_empty() {
        let plot = chart.plotting_area();
        let (w, h) = plot.dim_in_pixel();
        plot.strip_coord_spec()
            .draw(&Text::new(
                "no upstream latency recorded in this window",
                (w as i32 / 2 - 170, h as i32 / 2),
                text(LABEL_SIZE, DARK_GREY),
            ))
            .map_err(draw_err)?;
    }
    Ok(())
}

fn draw_bands(
    area: &Area,
    axis: &TimeAxis,
    data: &TimelineData,
    shown: &[Series],
    merged: &[Vec<Shown>],
    lanes: &[String],
) -> Result<(), ChartError> {
    let (head, mut rest) = area.split_vertically(TIMELINE_BAND_LEGEND_HEIGHT);
    let legend = [
        LegendItem { label: "closed".into(), colour: STATE_CLOSED, swatch: Swatch::Box },
        LegendItem { label: "half-open".into(), colour: STATE_HALF_OPEN, swatch: Swatch::Box },
        LegendItem { label: "open".into(), colour: STATE_OPEN, swatch: Swatch::Box },
        LegendItem { label: "entry into open (tick)".into(), colour: OI_BLACK, swatch: Swatch::Marker },
        LegendItem { label: "false open".into(), colour: OI_VERMILLION, swatch: Swatch::Marker },
        LegendItem { label: "missed incident".into(), colour: OI_VERMILLION, swatch: Swatch::Hatched },
        LegendItem { label: "no data".into(), colour: LIGHT_GREY, swatch: Swatch::Box },
    ];
    let heading_text = if lanes.is_empty() {
        "Breaker state (share of each bin)".to_string()
    } else {
        format!("Breaker state, one lane per breaker ({})", lanes.len())
    };
    heading(&head, &heading_text, &legend)?;
    let in_view = |marks: Vec<(u64, bool)>| -> Vec<(u64, bool)> {
        marks.into_iter().filter(|(t, _)| *t >= axis.start_us() && *t <= axis.to_us()).collect()
    };
    for (s, bins) in shown.iter().zip(merged) {
        let (band, next) = rest.split_vertically(band_height(lanes.len()));
        rest = next;
        let (label_row, mut body) = band.split_vertically(LANE_LABEL_HEIGHT);
        let opens = in_view(data.open_marks(&s.policy));
        let false_opens = opens.iter().filter(|o| o.1).count();
        let missed = data.missed(&s.policy);
        let (episodes, reopens) = data.open_counts(&s.policy, None, axis.start_us(), axis.to_us());
        let mut label = format!("{} · {}", s.policy, episodes_text(episodes, reopens));
        if !lanes.is_empty() {
            label.push_str(" (all breakers)");
        }
        if false_opens > 0 {
            label.push_str(&format!(" · {false_opens} false (red ticks)"));
        }
        if !missed.is_empty() {
            label.push_str(&format!(
                " · {} incident{} missed",
                missed.len(),
                if missed.len() == 1 { "" } else { "s" }
            ));
        }
        if lanes.len() > TIMELINE_MAX_LANES {
            label.push_str(&format!(" · first {TIMELINE_MAX_LANES} of {} breakers drawn", lanes.len()));
        }
        let max_w = TIMELINE_WIDTH as i32 - TIMELINE_LEFT_AREA as i32 - TIMELINE_RIGHT_AREA as i32 - 40;
        label_row
            .draw(&Text::new(
                fit_text(&label, LEGEND_SIZE, max_w),
                (10 + TIMELINE_LEFT_AREA as i32, 3),
                text(LEGEND_SIZE, OI_BLACK),
            ))
            .map_err(draw_err)?;
        if lanes.is_empty() {
            let states: Vec<Option<[f64; 3]>> = bins.iter().map(|b| b.states).collect();
            let lane = Lane { name: None, note: None, tick_height: 12, states: &states, opens: &opens };
            draw_lane(&body, &lane, axis, bins, &missed)?;
            continue;
        }
        for (i, name) in lanes.iter().enumerate().take(TIMELINE_MAX_LANES) {
            let (area, next) = body.split_vertically(TIMELINE_LANE_HEIGHT);
            body = next;
            let states = data.lane_states(&s.policy, i as u64, bins);
            let opens = in_view(data.open_marks_of(&s.policy, Some(i as u64)));
            let (episodes, reopens) =
                data.open_counts(&s.policy, Some(i as u64), axis.start_us(), axis.to_us());
            let note = episodes_text(episodes, reopens);
            let lane =
                Lane { name: Some(name), note: Some(note), tick_height: 7, states: &states, opens: &opens };
            draw_lane(&area, &lane, axis, bins, &missed)?;
        }
    }
    Ok(())
}

/// `9 open episodes (+11 re-opens after a failed probe)`: the terminal's `open_episodes` and
/// `probe_failures`, which together are the ticks drawn.
fn episodes_text(episodes: usize, reopens: usize) -> String {
    let mut t = format!("{episodes} open episode{}", if episodes == 1 { "" } else { "s" });
    if reopens > 0 {
        t.push_str(&format!(
            " (+{reopens} re-open{} after a failed probe)",
            if reopens == 1 { "" } else { "s" }
        ));
    }
    t
}

/// One state strip: per display bin, the closed / half-open / open shares; entries into open
/// as ticks above it; a name on the left and a note on the right when the band has lanes.
struct Lane<'a> {
    name: Option<&'a str>,
    note: Option<String>,
    /// Height of the tick row above the strip (px).
    tick_height: u32,
    states: &'a [Option<[f64; 3]>],
    opens: &'a [(u64, bool)],
}

fn draw_lane(
    area: &Area,
    lane: &Lane,
    axis: &TimeAxis,
    bins: &[Shown],
    missed: &[&Incident],
) -> Result<(), ChartError> {
    let (tick_row, strip) = area.split_vertically(lane.tick_height);
    let mut chart = ChartBuilder::on(&strip)
        .margin_left(10)
        .margin_right(10 + TIMELINE_RIGHT_AREA)
        .margin_bottom(if lane.name.is_some() { 3 } else { 6 })
        .y_label_area_size(TIMELINE_LEFT_AREA)
        .x_label_area_size(0)
        .build_cartesian_2d(axis.clone(), 0.0..1.0)
        .map_err(draw_err)?;
    let plot = chart.plotting_area();
    plot.fill(&LIGHT_GREY).map_err(draw_err)?;
    for (b, states) in bins.iter().zip(lane.states) {
        let (s0, e0) = (b.start.max(axis.start_us()), b.end.min(axis.to_us()));
        if let Some([c, h, o]) = states {
            let mut y = 0.0;
            for (share, colour) in [(*c, STATE_CLOSED), (*h, STATE_HALF_OPEN), (*o, STATE_OPEN)] {
                if share > 0.0 {
                    plot.draw(&Rectangle::new([(s0, y), (e0, (y + share).min(1.0))], colour.filled()))
                        .map_err(draw_err)?;
                }
                y += share;
            }
        }
    }
    // Missed incidents: a red outline and hatching over the lane across the window.
    let base = plot.get_base_pixel();
    let flat = plot.strip_coord_spec();
    for i in missed {
        let (s0, e0) = (i.start_us.max(axis.start_us()), i.end_us.min(axis.to_us()));
        if e0 <= s0 {
            continue;
        }
        let a = chart.backend_coord(&(s0, 1.0));
        let b = chart.backend_coord(&(e0, 0.0));
        let (a, b) = ((a.0 - base.0, a.1 - base.1), ((b.0 - base.0).max(a.0 - base.0 + 3), b.1 - base.1));
        hatch(&flat, a, b, 5, OI_VERMILLION)?;
        flat.draw(&Rectangle::new([a, b], OI_VERMILLION.stroke_width(2))).map_err(draw_err)?;
    }
    // Entries into open: thin ticks above the lane (red for a false open), never over it.
    let tick_base = tick_row.get_base_pixel();
    let h = lane.tick_height as i32;
    // False opens last, so a dense run of true ones cannot hide them.
    let ordered = lane.opens.iter().filter(|o| !o.1).chain(lane.opens.iter().filter(|o| o.1));
    for (t, false_open) in ordered {
        let (x, _) = chart.backend_coord(&(*t, 1.0));
        let x = x - tick_base.0;
        let colour = if *false_open { OI_VERMILLION } else { OI_BLACK };
        tick_row.draw(&Rectangle::new([(x, 1), (x + 1, h - 1)], colour.filled())).map_err(draw_err)?;
    }
    // The lane's name on the left, its note on the right, centred on the strip.
    let (w, sh) = strip.dim_in_pixel();
    let y = (sh as i32 - TICK_SIZE as i32) / 2 - 1;
    if let Some(name) = lane.name {
        let name = fit_text(name, TICK_SIZE, TIMELINE_LEFT_AREA as i32 - 6);
        let x = 10 + TIMELINE_LEFT_AREA as i32 - 4 - text_width(&name, TICK_SIZE);
        strip.draw(&Text::new(name, (x, y), text(TICK_SIZE, OI_BLACK))).map_err(draw_err)?;
    }
    if let Some(note) = &lane.note {
        let x = w as i32 - TIMELINE_RIGHT_AREA as i32 - 10 + 6;
        let note = fit_text(note, TICK_SIZE, TIMELINE_RIGHT_AREA as i32 - 8);
        strip.draw(&Text::new(note, (x, y), text(TICK_SIZE, DARK_GREY))).map_err(draw_err)?;
    }
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(super::axis::MAX_TIME_TICKS + 1)
        .light_line_style(TRANSPARENT)
        .bold_line_style(WHITE.mix(0.5))
        .draw()
        .map_err(draw_err)?;
    Ok(())
}

fn draw_traffic(
    area: &Area,
    axis: &TimeAxis,
    shown: &[Series],
    merged: &[Vec<Shown>],
    incidents: &[Incident],
) -> Result<(), ChartError> {
    let k = shown.len();
    let ymax =
        nice_ceil(merged.iter().flatten().flat_map(|b| b.rates.iter().copied()).fold(0.0, f64::max) * 1.05);
    let names = ["offered", "admitted", "rejected by breaker", "failed"];
    let colours = [TRAFFIC_OFFERED, TRAFFIC_ADMITTED, TRAFFIC_REJECTED, TRAFFIC_FAILED];
    let panel_h = if k == 1 { TIMELINE_TRAFFIC_HEIGHT } else { TIMELINE_TRAFFIC_MULTI_HEIGHT };
    let mut rest = area.clone();
    for (i, (s, bins)) in shown.iter().zip(merged).enumerate() {
        let last = i + 1 == k;
        let (panel, next) = if last { (rest.clone(), rest.clone()) } else { rest.split_vertically(panel_h) };
        rest = next;
        let (head, body) = panel.split_vertically(HEADING);
        let legend: Vec<LegendItem> = if i == 0 {
            names
                .iter()
                .zip(colours)
                .map(|(n, c)| LegendItem { label: n.to_string(), colour: c, swatch: Swatch::Line })
                .collect()
        } else {
            Vec::new()
        };
        let title = if k == 1 { "Traffic".to_string() } else { format!("Traffic: {}", s.policy) };
        let title = fit_text(&title, LABEL_SIZE, 520);
        heading(&head, &title, &legend)?;
        let mut chart = ChartBuilder::on(&body)
            .margin_left(10)
            .margin_right(10 + TIMELINE_RIGHT_AREA)
            .margin_top(4)
            .y_label_area_size(TIMELINE_LEFT_AREA)
            .x_label_area_size(if last { TIMELINE_AXIS_HEIGHT } else { 0 })
            .build_cartesian_2d(axis.clone(), 0.0..ymax)
            .map_err(draw_err)?;
        let desc = axis.description();
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(super::axis::MAX_TIME_TICKS + 1)
            .y_labels(if k == 1 { 6 } else { 4 })
            .light_line_style(WHITE)
            .bold_line_style(LIGHT_GREY)
            .y_desc("requests/s")
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style(text(TICK_SIZE, OI_BLACK))
            .axis_desc_style(text(LABEL_SIZE, OI_BLACK));
        if last {
            mesh.x_desc(desc);
        }
        mesh.draw().map_err(draw_err)?;
        for inc in incidents {
            let (s0, e0) = (inc.start_us.max(axis.start_us()), inc.end_us.min(axis.to_us()));
            if e0 > s0 {
                chart
                    .plotting_area()
                    .draw(&Rectangle::new(
                        [(s0, 0.0), (e0, ymax)],
                        shade_of(inc.expect).mix(SHADE_ALPHA * 0.6).filled(),
                    ))
                    .map_err(draw_err)?;
            }
        }
        for (j, c) in colours.iter().enumerate() {
            let width = if j == 0 { 3 } else { 2 };
            for run in runs(bins.iter().map(|b| (b.start, b.end, Some(b.rates[j])))) {
                chart.draw_series(LineSeries::new(run, c.stroke_width(width))).map_err(draw_err)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(start: u64, end: u64, admitted: f64, p95: Option<f64>, err: Option<f64>, open: f64) -> Bin {
        Bin {
            start_us: start,
            end_us: end,
            offered: 10.0,
            admitted,
            rejected: 10.0 - admitted,
            failures: 1.0,
            successes: admitted - 1.0,
            closed_frac: Some(1.0 - open),
            open_frac: Some(open),
            half_open_frac: Some(0.0),
            upstream_p95_ms: p95,
            upstream_error_rate: err,
            true_p95_ms: p95,
            true_error_rate: err,
            other_true: vec![],
        }
    }

    #[test]
    fn merging_sums_rates_keeps_worst_p95_and_pools_errors() {
        let bins = vec![
            bin(0, 1_000_000, 10.0, Some(100.0), Some(0.1), 0.0),
            bin(1_000_000, 2_000_000, 2.0, Some(900.0), Some(1.0), 0.5),
            bin(2_000_000, 3_000_000, 10.0, None, None, 0.0),
        ];
        let m = merge(&bins, 0, 3_000_000, 2_000_000);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].start, m[0].end), (0, 2_000_000));
        assert_eq!(m[0].rates[0], 10.0); // 20 offered over 2 s
        assert_eq!(m[0].rates[2], 4.0); // 8 rejected over 2 s
        assert_eq!(m[0].p95, Some(900.0));
        assert!((m[0].err.unwrap() - 3.0 / 12.0).abs() < 1e-12);
        assert_eq!(m[0].states, Some([0.75, 0.0, 0.25]));
        assert_eq!(m[1].p95, None);
        assert_eq!(m[1].err, None);
    }

    #[test]
    fn zoom_keeps_only_overlapping_bins() {
        let bins: Vec<Bin> =
            (0..10).map(|i| bin(i * 1_000_000, (i + 1) * 1_000_000, 5.0, Some(1.0), None, 0.0)).collect();
        let m = merge(&bins, 2_500_000, 4_000_000, 1_000_000);
        assert_eq!(m.iter().map(|b| b.start).collect::<Vec<_>>(), vec![2_000_000, 3_000_000]);
    }

    #[test]
    fn display_bins_are_round_multiples_of_the_recorded_bin() {
        // A week of one-minute bins: 10 080 bins, at least 17 per display bin: 20 minutes.
        assert_eq!(display_width(60_000_000, 10_080), 1_200_000_000);
        assert_eq!(display_width(60_000_000, 600), 60_000_000);
        assert_eq!(display_width(30_000_000, 1_200), 60_000_000);
        // A recorded width no round width is a multiple of: plain multiple.
        assert_eq!(display_width(7_000_000, 1_800), 21_000_000);
    }

    #[test]
    fn runs_break_at_missing_values() {
        let r = runs([(0, 1, Some(1.0)), (1, 2, None), (2, 3, Some(2.0)), (3, 4, Some(3.0))].into_iter());
        assert_eq!(r, vec![vec![(0, 1.0), (1, 1.0)], vec![(2, 2.0), (3, 2.0), (3, 3.0), (4, 3.0)]]);
    }

    #[test]
    fn false_opens_and_missed_incidents_are_marked() {
        let tr = |policy: &str, at_s: u64, from: State, to: State| TransitionRow {
            policy: policy.into(),
            at_us: at_s * 1_000_000,
            instance: 0,
            from,
            to,
            reason: String::new(),
        };
        let inc = |s: u64, e: u64, expect| Incident {
            start_us: s * 1_000_000,
            end_us: e * 1_000_000,
            kind: "outage".into(),
            expect,
        };
        let data = TimelineData {
            series: vec![
                Series { policy: "a".into(), bins: vec![], other_providers: vec![] },
                Series { policy: "b".into(), bins: vec![], other_providers: vec![] },
            ],
            transitions: vec![
                tr("a", 50, State::Closed, State::Open), // no incident: false
                tr("a", 60, State::Open, State::HalfOpen),
                tr("a", 61, State::HalfOpen, State::Closed),
                tr("a", 120, State::Closed, State::Open), // inside [100, 200): caught
                tr("a", 225, State::Open, State::HalfOpen),
                tr("a", 226, State::HalfOpen, State::Open), // a re-open, not false
                tr("a", 260, State::Open, State::HalfOpen),
                tr("a", 261, State::HalfOpen, State::Closed), // closed again before 300
                tr("b", 500, State::Closed, State::Open),     // inside the blip + 30 s? no: false
            ],
            incidents: vec![
                inc(100, 200, Expect::Open),
                inc(300, 400, Expect::Open),
                inc(450, 460, Expect::StayClosed),
            ],
            context: String::new(),
            lanes: Vec::new(),
            providers: Vec::new(),
            epoch_us: None,
        };
        assert_eq!(
            data.open_marks("a"),
            vec![(50_000_000, true), (120_000_000, false), (226_000_000, false)]
        );
        assert_eq!(data.open_marks("b"), vec![(500_000_000, true)]);
        // a caught the first outage, missed the second; b missed both.
        assert_eq!(data.missed("a").iter().map(|i| i.start_us).collect::<Vec<_>>(), vec![300_000_000]);
        assert_eq!(data.missed("b").len(), 2);
    }

    fn tr(policy: &str, at_s: u64, instance: u64, from: State, to: State) -> TransitionRow {
        TransitionRow {
            policy: policy.into(),
            at_us: at_s * 1_000_000,
            instance,
            from,
            to,
            reason: String::new(),
        }
    }

    fn inc(s: u64, e: u64, kind: &str, expect: Expect) -> Incident {
        Incident { start_us: s * 1_000_000, end_us: e * 1_000_000, kind: kind.into(), expect }
    }

    /// `configs` configurations with 10 one-minute bins each, and the given transitions and
    /// incidents.
    fn data(configs: usize, transitions: Vec<TransitionRow>, incidents: Vec<Incident>) -> TimelineData {
        let bins: Vec<Bin> =
            (0..10).map(|i| bin(i * 60_000_000, (i + 1) * 60_000_000, 10.0, Some(5.0), None, 0.0)).collect();
        TimelineData {
            series: (0..configs)
                .map(|c| Series { policy: format!("p{c}"), bins: bins.clone(), other_providers: vec![] })
                .collect(),
            transitions,
            incidents,
            context: String::new(),
            lanes: Vec::new(),
            providers: Vec::new(),
            epoch_us: None,
        }
    }

    #[test]
    fn size_grows_with_configurations_lanes_and_the_incident_key() {
        let base = TITLE_HEIGHT
            + TIMELINE_HEALTH_HEIGHT
            + TIMELINE_BAND_LEGEND_HEIGHT
            + TIMELINE_BAND_HEIGHT
            + TIMELINE_TRAFFIC_HEIGHT
            + TIMELINE_AXIS_HEIGHT;
        assert_eq!(timeline_size(&data(1, vec![], vec![]), None).1, base);
        assert_eq!(
            timeline_size(&data(3, vec![], vec![]), None).1 - timeline_size(&data(2, vec![], vec![]), None).1,
            TIMELINE_BAND_HEIGHT + TIMELINE_TRAFFIC_MULTI_HEIGHT
        );
        assert_eq!(
            timeline_size(&data(50, vec![], vec![]), None),
            timeline_size(&data(8, vec![], vec![]), None)
        );
        // Two providers: two lanes per configuration.
        let mut two = data(1, vec![], vec![]);
        two.lanes = vec!["primary".into(), "secondary".into()];
        assert_eq!(
            timeline_size(&two, None).1,
            base - TIMELINE_BAND_HEIGHT + LANE_LABEL_HEIGHT + 2 * TIMELINE_LANE_HEIGHT + 8
        );
        // Incidents too close for their labels: a key line under the health panel.
        let close = data(
            1,
            vec![],
            vec![
                inc(60, 70, "outage", Expect::Open),
                inc(75, 80, "blip", Expect::StayClosed),
                inc(85, 90, "blip", Expect::StayClosed),
            ],
        );
        assert_eq!(timeline_size(&close, None).1, base + TIMELINE_KEY_LINE_HEIGHT);
    }

    #[test]
    fn breakers_get_one_lane_each_with_their_own_states_and_ticks() {
        // Instance 1 opens at 90 s, half-opens at 150 s and closes at 165 s; instance 0 never
        // changes; instance 2 is named in the inputs but never seen in transitions.csv.
        let mut d = data(
            1,
            vec![
                tr("p0", 90, 1, State::Closed, State::Open),
                tr("p0", 150, 1, State::Open, State::HalfOpen),
                tr("p0", 165, 1, State::HalfOpen, State::Closed),
            ],
            vec![],
        );
        assert_eq!(d.lane_names(), ["instance 0", "instance 1"]);
        d.lanes = vec!["a".into(), "b".into(), "c".into()];
        assert_eq!(d.lane_names(), ["a", "b", "c"]);
        let bins = merge(&d.series[0].bins, 0, 600_000_000, 60_000_000);
        let one = d.lane_states("p0", 1, &bins);
        assert_eq!(one[0], Some([1.0, 0.0, 0.0]));
        assert_eq!(one[1], Some([0.5, 0.0, 0.5]));
        assert_eq!(one[2], Some([0.25, 0.25, 0.5]));
        assert_eq!(one[3], Some([1.0, 0.0, 0.0]));
        assert!(d.lane_states("p0", 0, &bins).iter().all(|s| *s == Some([1.0, 0.0, 0.0])));
        assert_eq!(d.open_marks_of("p0", Some(1)), vec![(90_000_000, true)]);
        assert!(d.open_marks_of("p0", Some(0)).is_empty());
        // One breaker: no lanes (the band is timeline.csv's occupancy).
        assert!(data(1, vec![tr("p0", 90, 0, State::Closed, State::Open)], vec![]).lane_names().is_empty());
    }

    #[test]
    fn lane_states_average_to_the_recorded_occupancy_of_a_real_fleet() {
        // fleet-recovery: 20 process-local gates; timeline.csv's shares average the instances.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let scenario = crate::scenario::load(&root.join("scenarios/fleet-recovery.toml")).unwrap();
        let workload = crate::sim::Workload::build(&scenario, scenario.seed, 0).unwrap();
        let policy = scenario.policy.clone().unwrap().resolve().unwrap();
        let opts =
            crate::sim::RunOptions { timeline_bin: Some(crate::time::Dur::from_secs(60)), explain: false };
        let run = crate::sim::run(&scenario, &workload, &policy, &opts);
        let rows = [("gate", &run.record)];
        let mut d = data(1, vec![], vec![]);
        d.series = crate::report::contents::series(&rows);
        d.transitions = crate::report::contents::transitions(&rows);
        let lanes = d.lane_names();
        assert_eq!(lanes.len(), 20);
        let policy = d.series[0].policy.clone();
        let bins = merge(&d.series[0].bins, 0, u64::MAX, 60_000_000);
        let per_lane: Vec<Vec<Option<[f64; 3]>>> =
            (0..20).map(|i| d.lane_states(&policy, i, &bins)).collect();
        let mut opened = 0;
        for (k, b) in bins.iter().enumerate() {
            let Some(recorded) = b.states else { continue };
            for s in 0..3 {
                let mean = per_lane.iter().map(|l| l[k].unwrap()[s]).sum::<f64>() / 20.0;
                assert!((mean - recorded[s]).abs() < 1e-6, "bin {k}, state {s}: {mean} vs {recorded:?}");
            }
            opened += usize::from(recorded[2] > 0.0);
        }
        assert!(opened > 5, "the outage opens the gates");
    }

    #[test]
    fn incident_labels_fall_back_to_numbers_and_a_key_when_they_would_collide() {
        let axis = TimeAxis::new(0, 3_600_000_000);
        // Far apart: full labels, numbered as incidents.csv's rows, no key.
        let far = [inc(600, 900, "outage", Expect::Open), inc(2400, 2460, "blip", Expect::StayClosed)];
        let l = incident_labels(&far, &axis);
        assert!(l.key.is_empty());
        let texts: Vec<(&str, usize)> = l.placed.iter().map(|p| (p.text.as_str(), p.row)).collect();
        assert_eq!(texts, [("#1 outage: should open", 0), ("#2 blip: should stay closed", 0)]);
        // Close: the second full label goes to the second row.
        let two_rows = [inc(600, 900, "outage", Expect::Open), inc(630, 660, "blip", Expect::StayClosed)];
        let l = incident_labels(&two_rows, &axis);
        assert!(l.key.is_empty());
        assert_eq!(l.placed.iter().map(|p| p.row).collect::<Vec<_>>(), [0, 1]);
        // Three within a minute: numbers in the panel, the words in a key.
        let three = [
            inc(600, 900, "outage", Expect::Open),
            inc(630, 660, "blip", Expect::StayClosed),
            inc(650, 700, "slowdown", Expect::Either),
        ];
        let l = incident_labels(&three, &axis);
        // #3 has no room of its own beside #1 and #2: it joins #2's label.
        assert_eq!(l.placed.iter().map(|p| p.text.as_str()).collect::<Vec<_>>(), ["#1", "#2–3"]);
        assert_eq!(
            l.key,
            [
                "#1 outage at 00:10 for 5m: should open   #2 blip at 00:10 for 30s: should stay closed   #3 slowdown at 00:10 for 50s: either"
            ]
        );
        // No two labels of a row overlap.
        for a in &l.placed {
            for b in l.placed.iter().filter(|b| b.row == a.row && b.x > a.x) {
                assert!(b.x >= a.x + text_width(&a.text, LEGEND_SIZE), "{a:?} {b:?}");
            }
        }
        // Hundreds: the key stops after its last line and says how many more incidents.csv has.
        let many: Vec<Incident> =
            (0..300).map(|i| inc(i * 10, i * 10 + 5, "blip", Expect::StayClosed)).collect();
        let l = incident_labels(&many, &axis);
        assert_eq!(l.key.len(), TIMELINE_MAX_KEY_LINES);
        // Every incident is named in the panel, runs of close ones as ranges.
        assert!(l.placed.len() < 300 && l.placed.iter().any(|p| p.text.contains('–')));
        assert_eq!(l.placed.iter().map(|p| p.number).collect::<Vec<_>>().first(), Some(&1));
        let listed: usize = l.key.iter().map(|k| k.matches("blip at").count()).sum();
        assert!(
            l.key[TIMELINE_MAX_KEY_LINES - 1]
                .ends_with(&format!("… and {} more in incidents.csv", 300 - listed))
        );
        // Outside the window: not labelled.
        let zoomed = TimeAxis::new(1_000_000_000, 2_000_000_000);
        assert!(incident_labels(&far, &zoomed).placed.is_empty());
    }
}
