//! timeline.png: one scenario on a shared time axis. On top the dependency's health (p95
//! latency on a log axis and error rate, incident windows shaded and labelled by expectation),
//! then one state band per configuration (closed / half-open / open occupancy per bin, entries
//! into open marked), then traffic (offered, admitted, rejected, failed per second). Recorded
//! bins are merged so a week stays readable; a [`TimeRange`] zooms in.

use super::axis::TimeAxis;
use super::data::{Bin, Incident, SINGLE_POLICY, Series, TransitionRow};
use super::style::*;
use super::{ChartError, TimeRange};
use crate::policy::State;
use crate::time::Dur;
use crate::truth::Expect;
use plotters::prelude::*;

/// Everything the timeline draws (filled by the output folder's reader, `report::folder`).
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

    /// Entries into OPEN of configuration `policy`, each with whether it was a false open: from
    /// CLOSED, at a time no incident expecting `open` or `either` covers (with the default
    /// 30 s tolerance after its end, as the scoring uses).
    pub fn open_marks(&self, policy: &str) -> Vec<(u64, bool)> {
        self.of(policy)
            .filter(|t| t.to == State::Open && t.from != State::Open)
            .map(|t| {
                let excused = self.incidents.iter().any(|i| {
                    matches!(i.expect, Expect::Open | Expect::Either)
                        && t.at_us >= i.start_us
                        && t.at_us < i.end_us.saturating_add(TOLERANCE_US)
                });
                (t.at_us, t.from == State::Closed && !excused)
            })
            .collect()
    }

    /// The incidents expecting `open` that configuration `policy` missed: no instance was open
    /// at the start and none entered OPEN before the end plus the default tolerance.
    pub fn missed(&self, policy: &str) -> Vec<&Incident> {
        self.incidents
            .iter()
            .filter(|i| i.expect == Expect::Open)
            .filter(|i| {
                let mut open_at_start = std::collections::BTreeMap::new();
                for t in self.of(policy).filter(|t| t.at_us < i.start_us) {
                    open_at_start.insert(t.instance, t.to == State::Open);
                }
                let caught = self.of(policy).any(|t| {
                    t.to == State::Open
                        && t.at_us >= i.start_us
                        && t.at_us < i.end_us.saturating_add(TOLERANCE_US)
                });
                !caught && !open_at_start.values().any(|o| *o)
            })
            .collect()
    }
}

/// The scoring's default tolerance after an incident's end (µs), used to mark false opens and
/// missed incidents (a scenario may set another; summary.csv's counts are authoritative).
const TOLERANCE_US: u64 = 30_000_000;

/// The pixel size of the timeline for `configs` configurations.
pub fn timeline_size(configs: usize) -> (u32, u32) {
    let k = configs.clamp(1, TIMELINE_MAX_CONFIGS) as u32;
    let traffic = if k == 1 { TIMELINE_TRAFFIC_HEIGHT } else { k * TIMELINE_TRAFFIC_MULTI_HEIGHT };
    let h = TITLE_HEIGHT
        + TIMELINE_HEALTH_HEIGHT
        + TIMELINE_BAND_LEGEND_HEIGHT
        + k * TIMELINE_BAND_HEIGHT
        + traffic
        + TIMELINE_AXIS_HEIGHT;
    (TIMELINE_WIDTH, h)
}

/// Draws the timeline (PNG bytes), zoomed to `range` when given.
pub fn draw_timeline(data: &TimelineData, range: Option<TimeRange>) -> Result<Vec<u8>, ChartError> {
    check(data)?;
    png(timeline_size(data.series.len()), |root| render_timeline(data, range, root))
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
}

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
            let true_p95 = g
                .iter()
                .filter_map(|b| b.true_p95_ms)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            let weighed: Vec<(f64, f64)> =
                g.iter().filter_map(|b| b.true_error_rate.map(|e| (e, b.offered.max(1.0)))).collect();
            let true_err = (!weighed.is_empty()).then(|| {
                weighed.iter().map(|r| r.0 * r.1).sum::<f64>() / weighed.iter().map(|r| r.1).sum::<f64>()
            });
            Shown { start, end, rates, admitted, states, p95, err, true_p95, true_err }
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
    let axis = TimeAxis::new(from, to);
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
    let mut sub = format!("{} to {}", axis.label(from), axis.label(to));
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
    let (health_area, rest) = rest.split_vertically(TIMELINE_HEALTH_HEIGHT);
    let (bands_area, traffic_area) =
        rest.split_vertically(TIMELINE_BAND_LEGEND_HEIGHT + k * TIMELINE_BAND_HEIGHT);

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
    draw_health(&health_area, &axis, &health, &data.incidents)?;
    draw_bands(&bands_area, &axis, data, shown, &merged)?;
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
            label: "true p95 / error rate, every request (dashed)".into(),
            colour: DARK_GREY,
            swatch: Swatch::Dashed,
        });
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

    let p95s: Vec<f64> =
        bins.iter().flat_map(|b| [b.p95, b.true_p95]).flatten().filter(|v| *v > 0.0).collect();
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

    // Incident windows, shaded, with labels where they fit (two rows, no overlaps).
    let plot = chart.plotting_area();
    let mut row_end = [i32::MIN, i32::MIN];
    for inc in incidents {
        let s = inc.start_us.max(axis.start_us());
        let e = inc.end_us.min(axis.to_us());
        if e <= s {
            continue;
        }
        let c = shade_of(inc.expect);
        plot.draw(&Rectangle::new([(s, lo), (e, hi)], c.mix(SHADE_ALPHA).filled())).map_err(draw_err)?;
        let label = if inc.kind.is_empty() {
            expect_label(inc.expect).to_string()
        } else {
            format!("{}: {}", inc.kind, expect_label(inc.expect))
        };
        let (px, py) = chart.backend_coord(&(s, hi));
        let w = text_width(&label, LEGEND_SIZE);
        if let Some(r) = (0..2).find(|r| row_end[*r] < px) {
            row_end[r] = px + w + 8;
            let base = plot.get_base_pixel();
            let pos = (px - base.0 + 3, py - base.1 + 3 + r as i32 * (LEGEND_SIZE as i32 + 6));
            let flat = plot.strip_coord_spec();
            let bg = [(pos.0 - 2, pos.1 - 1), (pos.0 + w + 2, pos.1 + LEGEND_SIZE as i32 + 3)];
            flat.draw(&Rectangle::new(bg, WHITE.mix(0.8).filled())).map_err(draw_err)?;
            flat.draw(&Text::new(label, pos, text(LEGEND_SIZE, OI_BLACK))).map_err(draw_err)?;
        }
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
    heading(&head, "Breaker state (share of each bin)", &legend)?;
    for (s, bins) in shown.iter().zip(merged) {
        let (band, next) = rest.split_vertically(TIMELINE_BAND_HEIGHT);
        rest = next;
        let (label_row, rest_band) = band.split_vertically(20);
        let (tick_row, strip) = rest_band.split_vertically(12);
        let opens: Vec<(u64, bool)> = data
            .open_marks(&s.policy)
            .into_iter()
            .filter(|(t, _)| *t >= axis.start_us() && *t <= axis.to_us())
            .collect();
        let false_opens = opens.iter().filter(|o| o.1).count();
        let missed = data.missed(&s.policy);
        let mut label = format!(
            "{} · {} entr{} into open",
            s.policy,
            opens.len(),
            if opens.len() == 1 { "y" } else { "ies" }
        );
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
        let max_w = TIMELINE_WIDTH as i32 - TIMELINE_LEFT_AREA as i32 - TIMELINE_RIGHT_AREA as i32 - 40;
        label_row
            .draw(&Text::new(
                fit_text(&label, LEGEND_SIZE, max_w),
                (10 + TIMELINE_LEFT_AREA as i32, 3),
                text(LEGEND_SIZE, OI_BLACK),
            ))
            .map_err(draw_err)?;
        let mut chart = ChartBuilder::on(&strip)
            .margin_left(10)
            .margin_right(10 + TIMELINE_RIGHT_AREA)
            .margin_bottom(6)
            .y_label_area_size(TIMELINE_LEFT_AREA)
            .x_label_area_size(0)
            .build_cartesian_2d(axis.clone(), 0.0..1.0)
            .map_err(draw_err)?;
        let plot = chart.plotting_area();
        plot.fill(&LIGHT_GREY).map_err(draw_err)?;
        for b in bins {
            let (s0, e0) = (b.start.max(axis.start_us()), b.end.min(axis.to_us()));
            if let Some([c, h, o]) = b.states {
                let mut y = 0.0;
                for (share, colour) in [(c, STATE_CLOSED), (h, STATE_HALF_OPEN), (o, STATE_OPEN)] {
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
        for i in &missed {
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
        for (t, false_open) in &opens {
            let (x, _) = chart.backend_coord(&(*t, 1.0));
            let x = x - tick_base.0;
            let colour = if *false_open { OI_VERMILLION } else { OI_BLACK };
            tick_row.draw(&Rectangle::new([(x, 1), (x + 1, 11)], colour.filled())).map_err(draw_err)?;
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
    }
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
                Series { policy: "a".into(), bins: vec![] },
                Series { policy: "b".into(), bins: vec![] },
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

    #[test]
    fn size_grows_with_configurations() {
        assert_eq!(
            timeline_size(1).1,
            TITLE_HEIGHT
                + TIMELINE_HEALTH_HEIGHT
                + TIMELINE_BAND_LEGEND_HEIGHT
                + TIMELINE_BAND_HEIGHT
                + TIMELINE_TRAFFIC_HEIGHT
                + TIMELINE_AXIS_HEIGHT
        );
        assert_eq!(
            timeline_size(3).1 - timeline_size(2).1,
            TIMELINE_BAND_HEIGHT + TIMELINE_TRAFFIC_MULTI_HEIGHT
        );
        assert_eq!(timeline_size(50), timeline_size(TIMELINE_MAX_CONFIGS));
    }
}
