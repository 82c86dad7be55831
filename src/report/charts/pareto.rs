//! pareto.png: two scatter panels of a sweep's configurations, one marker per configuration
//! coloured by policy family. Left: mean detection delay (a miss counted as the incident's
//! duration plus the tolerance) against false opens; right: availability against wasted quota.
//! Configurations ruled out by a constraint are hollow and never on a front: each panel rings
//! and joins the two-metric front among the configurations that qualify (those a reviewer could
//! deploy), so a ruled-out configuration can neither look chosen nor make a qualifying one look
//! beaten. The recommended one is labelled, and today's configuration (the sweep's baseline)
//! marked. The no-breaker baseline (`none`) does not stretch the axes: beyond them it is drawn
//! at the edge with its value. Beyond [`DENSITY_ABOVE`] configurations the markers would only
//! pile up: the cloud is drawn as shaded cells (how many configurations fall in each, ruled-out
//! ones grey), with the front, the recommended one and today's drawn one by one on top.
//!
//! Built from summary.csv in passes over its configurations that keep the points drawn one by
//! one, the axes' extent, the fronts and the cells' counts, never every configuration.

use super::ChartError;
use super::data::{Mean, Summary, SummaryRow};
use super::style::*;
use crate::sweep::pareto::{Direction, Front, front};
use plotters::prelude::*;
use std::collections::HashSet;

/// Beyond this many configurations the cloud is drawn as shaded cells, not one marker each.
pub const DENSITY_ABOVE: usize = 2000;

/// Cells of the density across and up a panel.
const DENSITY_CELLS: (usize, usize) = (100, 80);

/// At most this many no-breaker (`none`) configurations are drawn one by one in a dense chart.
const MAX_BASELINE_POINTS: usize = 16;

/// One configuration, its metrics averaged over scenarios.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Configuration label.
    pub label: String,
    /// Policy family (colour).
    pub family: String,
    /// Mean false opens.
    pub false_opens: Option<f64>,
    /// Mean detection delay (s), a missed incident counting as its duration plus the tolerance
    /// (`detection_delay_with_misses_mean_s`; the plain mean in folders written before it).
    pub delay_s: Option<f64>,
    /// Mean wasted quota (failed attempts).
    pub wasted: Option<f64>,
    /// Mean availability (0..1).
    pub availability: Option<f64>,
    /// Meets every constraint on every scenario (summary.csv's `feasible`; true when unknown).
    pub feasible: bool,
}

impl Point {
    /// Its values on panel `panel` (0: false opens, delay; 1: wasted quota, availability).
    fn on(&self, panel: usize) -> Option<(f64, f64)> {
        if panel == 0 {
            Some((self.false_opens?, self.delay_s?))
        } else {
            Some((self.wasted?, self.availability?))
        }
    }
}

/// The family of the no-breaker baseline, kept off the axis ranges.
pub const BASELINE_FAMILY: &str = "none";

/// One point as a panel draws it: the decisions tests check.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    /// Index into [`ParetoData::points`].
    pub index: usize,
    /// Its value on x and y.
    pub x: f64,
    /// Its value on y.
    pub y: f64,
    /// Ruled out by a constraint: drawn hollow.
    pub hollow: bool,
    /// On the panel's front among the configurations that qualify: ringed and joined.
    pub ringed: bool,
    /// Beyond the axes (the baseline): drawn clamped at the edge with its value.
    pub off_scale: bool,
}

/// A panel's cloud as counts per cell: [`DENSITY_CELLS`] across and up the axes' extent.
#[derive(Clone, Debug, PartialEq)]
pub struct Density {
    /// Per cell (row by row from the bottom left), the configurations that qualify, per family
    /// (in [`ParetoData::families`] order).
    pub qualifying: Vec<Vec<u32>>,
    /// Per cell, the configurations ruled out.
    pub ruled_out: Vec<u32>,
}

impl Density {
    fn new(families: usize) -> Density {
        let cells = DENSITY_CELLS.0 * DENSITY_CELLS.1;
        Density { qualifying: vec![vec![0; families]; cells], ruled_out: vec![0; cells] }
    }

    /// The cell of (x, y) on axes `0..x_max` and `y_range`.
    fn cell(x: f64, y: f64, x_max: f64, (lo, hi): (f64, f64)) -> usize {
        let at = |v: f64, n: usize| ((v * n as f64) as usize).min(n - 1);
        let (cx, cy) = (at(x / x_max, DENSITY_CELLS.0), at((y - lo) / (hi - lo), DENSITY_CELLS.1));
        cy * DENSITY_CELLS.0 + cx
    }

    /// The most configurations in one cell, of those that qualify and of those ruled out.
    pub fn most(&self) -> (u32, u32) {
        let q = self.qualifying.iter().map(|c| c.iter().sum::<u32>()).max().unwrap_or(0);
        (q, self.ruled_out.iter().copied().max().unwrap_or(0))
    }
}

/// One panel's axes and points.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelView {
    /// x axis maximum (from 0).
    pub x_max: f64,
    /// y axis range.
    pub y_range: (f64, f64),
    /// Points drawn one by one, in summary order: every one with both values, or in a dense
    /// chart the front's (one of each position), the recommended, today's and the no-breaker
    /// ones.
    pub points: Vec<Placed>,
    /// Configurations without a value on x or y (not drawn).
    pub missing: usize,
    /// The cloud's counts, in a dense chart.
    pub density: Option<Density>,
}

/// Everything the Pareto chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoData {
    /// Configurations drawn one by one, in summary order (every one below
    /// [`DENSITY_ABOVE`]).
    pub points: Vec<Point>,
    /// Configurations in the summary.
    pub configs: usize,
    /// Of those, ruled out by a constraint.
    pub ruled_out: usize,
    /// Families in order of first appearance (colour index).
    pub families: Vec<String>,
    /// Label of the recommended configuration, if any.
    pub recommended: Option<String>,
    /// Label of today's configuration (the sweep's baseline), if any.
    pub baseline: Option<String>,
    /// Number of scenarios averaged.
    pub scenarios: usize,
    /// The two panels (0: delay vs false opens, 1: availability vs wasted quota).
    pub views: [PanelView; 2],
}

/// What a panel keeps over the first pass: the extent of the values with and without the
/// no-breaker baseline, how many have both values, and the front among those that qualify.
struct Extent<'d> {
    /// (largest x, largest y, smallest y from 1) over the points but the baseline's, and over all.
    scaled: Option<(f64, f64, f64)>,
    all: Option<(f64, f64, f64)>,
    with: usize,
    front: Front<'d>,
    /// Values offered to the front (up to [`MAX_OFFERED`]): one point a value is enough, as
    /// points of equal values are all on a front or all off it.
    offered: HashSet<(u64, u64)>,
}

/// At most this many distinct values are remembered as offered to a front.
const MAX_OFFERED: usize = 1 << 15;

impl Extent<'_> {
    /// Offers a point that qualifies to the front, unless one of equal values was.
    fn offer(&mut self, x: f64, y: f64) {
        let key = (x.to_bits(), y.to_bits());
        if self.offered.contains(&key) {
            return;
        }
        if self.offered.len() < MAX_OFFERED {
            self.offered.insert(key);
        }
        // Only the values on the front are used: the index is of no use.
        self.front.offer(0, &[Some(x), Some(y)]);
    }

    /// The values on the front.
    fn finish(self) -> HashSet<(u64, u64)> {
        self.front.finish().into_iter().map(|(_, v)| (v[0].to_bits(), v[1].to_bits())).collect()
    }

    fn add(&mut self, p: &Point, x: f64, y: f64) {
        let grow = |e: &mut Option<(f64, f64, f64)>| {
            let (mx, my, ny) = e.unwrap_or((0.0, 0.0, 1.0));
            *e = Some((mx.max(x), my.max(y), ny.min(y)));
        };
        if p.family != BASELINE_FAMILY {
            grow(&mut self.scaled);
        }
        grow(&mut self.all);
        self.with += 1;
    }

    /// The axes: from every point but the baseline's (unless nothing else has values).
    fn axes(&self, panel: usize) -> (f64, (f64, f64)) {
        let (mx, my, ny) = self.scaled.or(self.all).unwrap_or((0.0, 0.0, 1.0));
        let x_max = nice_ceil(mx * 1.08);
        let y_range = if panel == 1 {
            let lo = (((ny - (1.0 - ny) * 0.15) * 100.0).floor() / 100.0).clamp(0.0, 0.99);
            (lo, 1.0 + (1.0 - lo) * 0.05)
        } else {
            (0.0, nice_ceil(my * 1.08))
        };
        (x_max, y_range)
    }
}

/// A configuration's means over its rows, folded one row at a time.
#[derive(Default)]
struct Means {
    false_opens: Mean,
    delay_with_misses: Mean,
    delay: Mean,
    wasted: Mean,
    availability: Mean,
    ruled_out: bool,
}

impl Means {
    fn add(&mut self, r: &SummaryRow) {
        self.false_opens.add(r.metric("false_opens"));
        self.delay_with_misses.add(r.metric("detection_delay_with_misses_mean_s"));
        self.delay.add(r.metric("detection_delay_mean_s"));
        self.wasted.add(r.metric("wasted_quota"));
        self.availability.add(r.metric("availability"));
        self.ruled_out |= r.feasible() == Some(false);
    }

    fn point(&self, first: &SummaryRow) -> Point {
        Point {
            label: first.policy().to_string(),
            family: first.family().to_string(),
            false_opens: self.false_opens.get(),
            delay_s: self.delay_with_misses.get().or_else(|| self.delay.get()),
            wasted: self.wasted.get(),
            availability: self.availability.get(),
            feasible: !self.ruled_out,
        }
    }
}

/// The direction of each panel's y (x, a count, is always better low).
const Y_DIRECTIONS: [[Direction; 2]; 2] =
    [[Direction::Minimise, Direction::Minimise], [Direction::Minimise, Direction::Maximise]];

impl ParetoData {
    /// Aggregates `summary` per configuration: each metric is the mean over the scenarios where
    /// it has a value, as pareto.csv's `all` rows average it. One pass over the configurations
    /// finds the axes and the fronts (and keeps every point while there are few); a dense chart
    /// counts its cells in a second.
    pub fn new(
        summary: &Summary,
        recommended: Option<String>,
        baseline: Option<String>,
    ) -> Result<ParetoData, ChartError> {
        let mut families: Vec<String> = Vec::new();
        let mut extents = Y_DIRECTIONS.each_ref().map(|dirs| Extent {
            scaled: None,
            all: None,
            with: 0,
            front: Front::new(dirs),
            offered: HashSet::new(),
        });
        let mut points: Vec<Point> = Vec::new();
        let (mut configs, mut ruled_out) = (0, 0);
        let mut fold = |m: &mut Means, r: &SummaryRow| {
            if !families.iter().any(|f| f == r.family()) {
                families.push(r.family().to_string());
            }
            m.add(r);
        };
        // The fronts of the points in hand while there are few; past that, kept as they come.
        let offer = |extents: &mut [Extent; 2], p: &Point| {
            for (panel, e) in extents.iter_mut().enumerate() {
                if let Some((x, y)) = p.on(panel).filter(|_| p.feasible) {
                    e.offer(x, y);
                }
            }
        };
        summary.configs(&mut fold, |first, means| {
            let p = means.point(first);
            for (panel, e) in extents.iter_mut().enumerate() {
                if let Some((x, y)) = p.on(panel) {
                    e.add(&p, x, y);
                }
            }
            ruled_out += usize::from(!p.feasible);
            if configs < DENSITY_ABOVE {
                points.push(p);
            } else {
                for kept in points.drain(..) {
                    offer(&mut extents, &kept);
                }
                offer(&mut extents, &p);
            }
            configs += 1;
            Ok(())
        })?;
        let axes = [extents[0].axes(0), extents[1].axes(1)];
        let with = [extents[0].with, extents[1].with];
        // Each front as the values on it: a configuration that qualifies is on it when its
        // values are (ties are all on a front).
        let fronts: [HashSet<(u64, u64)>; 2] = extents.map(|e| e.finish());
        let fronts = match configs <= DENSITY_ABOVE {
            false => fronts,
            true => [0, 1].map(|panel| {
                let values = |p: &Point| match p.on(panel).filter(|_| p.feasible) {
                    Some((x, y)) => vec![Some(x), Some(y)],
                    None => vec![None, None],
                };
                let on = front(&points.iter().map(values).collect::<Vec<_>>(), &Y_DIRECTIONS[panel]);
                on.iter()
                    .filter_map(|&i| points[i].on(panel))
                    .map(|(x, y)| (x.to_bits(), y.to_bits()))
                    .collect()
            }),
        };
        let on_front = |panel: usize, p: &Point, x: f64, y: f64| {
            p.feasible && fronts[panel].contains(&(x.to_bits(), y.to_bits()))
        };
        let place = |panel: usize, index: usize, p: &Point| -> Option<Placed> {
            let (x, y) = p.on(panel)?;
            let (x_max, (lo, hi)) = axes[panel];
            Some(Placed {
                index,
                x,
                y,
                hollow: !p.feasible,
                ringed: on_front(panel, p, x, y),
                off_scale: x > x_max || y < lo || y > hi,
            })
        };
        let view = |panel: usize, points: Vec<Placed>, density: Option<Density>| PanelView {
            x_max: axes[panel].0,
            y_range: axes[panel].1,
            points,
            missing: configs - with[panel],
            density,
        };
        let mut data = ParetoData {
            points: Vec::new(),
            configs,
            ruled_out,
            families,
            recommended,
            baseline,
            scenarios: summary.scenarios.len(),
            views: [view(0, Vec::new(), None), view(1, Vec::new(), None)],
        };
        if configs <= DENSITY_ABOVE {
            data.views = [0, 1].map(|panel| {
                let placed = points.iter().enumerate().filter_map(|(i, p)| place(panel, i, p)).collect();
                view(panel, placed, None)
            });
            data.points = points;
            return Ok(data);
        }
        // A dense chart: count the cells, and keep the points drawn one by one.
        let mut density = [Density::new(data.families.len()), Density::new(data.families.len())];
        let mut placed: [Vec<Placed>; 2] = [Vec::new(), Vec::new()];
        // The front's positions drawn (one configuration each), and the no-breaker points kept.
        let mut drawn: [HashSet<(u64, u64, usize)>; 2] = [HashSet::new(), HashSet::new()];
        let mut baselines = 0;
        let specials = [data.recommended.as_deref(), data.baseline.as_deref()];
        summary.configs(
            |m: &mut Means, r| m.add(r),
            |first, means| {
                let p = means.point(first);
                let family = data.families.iter().position(|f| *f == p.family).unwrap_or(0);
                let special = specials.contains(&Some(p.label.as_str()));
                let no_breaker = p.family == BASELINE_FAMILY && baselines < MAX_BASELINE_POINTS;
                let mut keep = false;
                for panel in 0..2 {
                    let Some(at) = place(panel, data.points.len(), &p) else { continue };
                    if !at.off_scale {
                        let cell = Density::cell(at.x, at.y, axes[panel].0, axes[panel].1);
                        match p.feasible {
                            true => density[panel].qualifying[cell][family] += 1,
                            false => density[panel].ruled_out[cell] += 1,
                        }
                    }
                    let first_here =
                        at.ringed && drawn[panel].insert((at.x.to_bits(), at.y.to_bits(), family));
                    if special || no_breaker || first_here {
                        placed[panel].push(at);
                        keep = true;
                    }
                }
                if keep {
                    baselines += usize::from(no_breaker);
                    data.points.push(p);
                }
                Ok(())
            },
        )?;
        let [d0, d1] = density;
        let [p0, p1] = placed;
        data.views = [view(0, p0, Some(d0)), view(1, p1, Some(d1))];
        Ok(data)
    }

    fn colour(&self, family: &str) -> RGBColor {
        series_colour(self.families.iter().position(|f| f == family).unwrap_or(0))
    }

    /// Panel `panel` (0: delay vs false opens, 1: availability vs wasted quota): its axes,
    /// from every point but the baseline's (unless nothing else has values), and each point's
    /// marks: hollow when ruled out, ringed when on the front among those that qualify.
    pub fn view(&self, panel: usize) -> &PanelView {
        &self.views[panel]
    }

    /// Whether the cloud is drawn as shaded cells.
    pub fn dense(&self) -> bool {
        self.views[0].density.is_some()
    }
}

/// Draws the chart (PNG of [`PARETO_SIZE`], or of [`pareto_size`] when narrow).
pub fn draw_pareto(data: &ParetoData, layout: Layout) -> Result<Vec<u8>, ChartError> {
    png(pareto_size(data, layout), |root| render_pareto(data, layout, root))
}

/// Pixel size of the chart: [`PARETO_SIZE`], or narrow: the legend one entry a row over the
/// two panels one under the other.
pub fn pareto_size(data: &ParetoData, layout: Layout) -> (u32, u32) {
    match layout {
        Layout::Wide => PARETO_SIZE,
        Layout::Narrow => {
            let rows = flow_legend(&legend_items(data), NARROW_LEGEND_ROOM).len() as u32;
            (NARROW_WIDTH, TITLE_HEIGHT + legend_height(rows) + 2 * NARROW_PANEL_HEIGHT)
        }
    }
}

/// The room for a narrow chart's legend row (px).
const NARROW_LEGEND_ROOM: i32 = NARROW_WIDTH as i32 - 24;

/// Height of a legend of `rows` rows (px).
fn legend_height(rows: u32) -> u32 {
    14 + rows.max(1) * 26
}

struct Panel<'a> {
    index: usize,
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    y_higher: bool,
    y_pct: bool,
}

/// Draws the chart into `root`.
pub fn render_pareto(data: &ParetoData, layout: Layout, root: &Area) -> Result<(), ChartError> {
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = vec![match data.dense() {
        true => format!(
            "{} configurations, too many for a marker each: cells shaded by how many fall there",
            data.configs
        ),
        false => format!("{} configurations", data.configs),
    }];
    if data.scenarios > 1 {
        sub.push(format!("metrics averaged over {} scenarios", data.scenarios));
    }
    let ruled_out = data.ruled_out;
    if ruled_out > 0 {
        let how = if data.dense() { "grey" } else { "hollow" };
        sub.push(format!("{ruled_out} ruled out by the constraints ({how})"));
    }
    if let Some(r) = &data.recommended {
        sub.push(format!("recommended: {r}"));
    }
    draw_title(&title_area, "Trade-offs between configurations (Pareto view)", &sub.join(" · "))?;
    let items = legend_items(data);
    let rows = match layout {
        Layout::Wide => vec![items],
        Layout::Narrow => flow_legend(&items, NARROW_LEGEND_ROOM),
    };
    let (legend_area, panels) = match layout {
        Layout::Wide => rest.split_vertically(40),
        Layout::Narrow => rest.split_vertically(legend_height(rows.len() as u32)),
    };
    let x = if layout == Layout::Wide { 30 } else { 16 };
    for (i, row) in rows.iter().enumerate() {
        draw_legend_row(&legend_area, row, x, 8 + i as i32 * 26)?;
    }
    let areas = layout.panels(&panels, &[50, 50]);
    draw_panel(
        &areas[0],
        data,
        &Panel {
            index: 0,
            title: "Detection delay vs false opens",
            x_desc: "false opens (count, mean per run)",
            y_desc: "detection delay, mean (s; a miss counts its duration)",
            y_higher: false,
            y_pct: false,
        },
    )?;
    draw_panel(
        &areas[1],
        data,
        &Panel {
            index: 1,
            title: "Availability vs wasted quota",
            x_desc: "wasted quota (failed attempts sent upstream)",
            y_desc: "availability (%)",
            y_higher: true,
            y_pct: true,
        },
    )
}

/// The legend's entries: the families, the marks drawn, the front, today's configuration.
fn legend_items(data: &ParetoData) -> Vec<LegendItem> {
    let ruled_out = data.ruled_out;
    let mut items: Vec<LegendItem> = data
        .families
        .iter()
        .map(|f| LegendItem { label: f.clone(), colour: data.colour(f), swatch: Swatch::Dot })
        .collect();
    if data.dense() {
        let (most, _) = data
            .views
            .iter()
            .filter_map(|v| v.density.as_ref())
            .map(Density::most)
            .fold((0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
        items.push(LegendItem {
            label: format!(
                "cell shade: configurations there, 1 (pale) to {} (dark)",
                fmt_num(f64::from(most))
            ),
            colour: shade(series_colour(0), 0.6),
            swatch: Swatch::Box,
        });
    }
    if ruled_out > 0 {
        items.push(match data.dense() {
            true => LegendItem {
                label: "grey: ruled out only".into(),
                colour: shade(GREY, 0.6),
                swatch: Swatch::Box,
            },
            false => LegendItem { label: "hollow: ruled out".into(), colour: GREY, swatch: Swatch::Hollow },
        });
    }
    if data.configs > data.ruled_out {
        items.push(LegendItem {
            label: "ringed, joined: the front among those that qualify".into(),
            colour: OI_BLACK,
            swatch: Swatch::Ring,
        });
    } else {
        items.push(LegendItem {
            label: "no configuration qualifies: no front".into(),
            colour: GREY,
            swatch: Swatch::Line,
        });
    }
    if let Some(b) = &data.baseline
        && data.views.iter().any(|v| v.points.iter().any(|p| data.points[p.index].label == *b))
    {
        items.push(LegendItem {
            label: "today's configuration".into(),
            colour: OI_BLACK,
            swatch: Swatch::Square,
        });
    }
    items
}

fn draw_panel(area: &Area, data: &ParetoData, panel: &Panel) -> Result<(), ChartError> {
    let view = data.view(panel.index);
    let (xmax, (ylo, yhi)) = (view.x_max, view.y_range);
    let caption = if view.missing > 0 {
        format!("{} ({} without a value not shown)", panel.title, view.missing)
    } else {
        panel.title.to_string()
    };
    let mut chart = ChartBuilder::on(area)
        .margin(18)
        .caption(caption, bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..xmax, ylo..yhi)
        .map_err(draw_err)?;
    let yfmt = |v: &f64| if panel.y_pct { fmt_pct(*v) } else { fmt_num(*v) };
    chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .x_desc(panel.x_desc)
        .y_desc(panel.y_desc)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&yfmt)
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    if let Some(density) = &view.density {
        draw_density(&chart, data, density, xmax, (ylo, yhi))?;
    }
    // The qualifying front, as a staircase through its points on the scale, left to right.
    let mut front: Vec<(f64, f64)> =
        view.points.iter().filter(|p| p.ringed && !p.off_scale).map(|p| (p.x, p.y)).collect();
    front.sort_by(|a, b| {
        a.0.total_cmp(&b.0).then(if panel.y_higher { b.1.total_cmp(&a.1) } else { a.1.total_cmp(&b.1) })
    });
    if front.len() >= 2 {
        // A staircase: between front points the next x is reached before the y improves.
        let mut stairs = Vec::with_capacity(front.len() * 2);
        for (i, p) in front.iter().enumerate() {
            if i > 0 {
                stairs.push((p.0, front[i - 1].1));
            }
            stairs.push(*p);
        }
        chart.draw_series(LineSeries::new(stairs, DARK_GREY.stroke_width(2))).map_err(draw_err)?;
    }
    let base = chart.plotting_area().get_base_pixel();
    let (pw, ph) = chart.plotting_area().dim_in_pixel();
    let flat = chart.plotting_area().strip_coord_spec();
    // Feasible points last, so a hollow one never hides a filled one.
    let mut order: Vec<&Placed> = view.points.iter().collect();
    order.sort_by_key(|p| !p.hollow);
    for p in order {
        let point = &data.points[p.index];
        let c = data.colour(&point.family);
        let (x, y) = (p.x.min(xmax), p.y.clamp(ylo, yhi));
        let (px, py) = chart.backend_coord(&(x, y));
        let (cx, cy) = (px - base.0, py - base.1);
        if p.hollow {
            flat.draw(&Circle::new((cx, cy), 6, WHITE.filled())).map_err(draw_err)?;
            flat.draw(&Circle::new((cx, cy), 6, c.stroke_width(2))).map_err(draw_err)?;
        } else {
            flat.draw(&Circle::new((cx, cy), 6, c.mix(0.9).filled())).map_err(draw_err)?;
        }
        if p.ringed {
            flat.draw(&Circle::new((cx, cy), 10, OI_BLACK.stroke_width(2))).map_err(draw_err)?;
        }
        if p.off_scale {
            // At the edge: an arrow pointing off the axis and the real value.
            let value = if panel.index == 0 {
                format!("{}: {} false opens, {} s →", point.label, fmt_num(p.x), fmt_num(p.y))
            } else {
                format!("{}: wasted {}, {} →", point.label, fmt_num(p.x), fmt_pct(p.y))
            };
            let label = fit_text(&value, LEGEND_SIZE, (pw as i32 - 40).min(360));
            let tw = text_width(&label, LEGEND_SIZE);
            let tx = (cx - tw - 12).clamp(2, pw as i32 - tw - 2);
            let ty = (cy - 26).clamp(2, ph as i32 - 20);
            flat.draw(&Rectangle::new(
                [(tx - 3, ty - 2), (tx + tw + 3, ty + LEGEND_SIZE as i32 + 4)],
                WHITE.mix(0.9).filled(),
            ))
            .map_err(draw_err)?;
            flat.draw(&Text::new(label, (tx, ty), text(LEGEND_SIZE, DARK_GREY))).map_err(draw_err)?;
        }
    }
    // The recommended one (a diamond, labelled above) and today's (a square, labelled below).
    let marks = [(&data.recommended, Mark::Recommended), (&data.baseline, Mark::Today)];
    for (label, mark) in marks {
        if let Some(label) = label
            && let Some(p) = view.points.iter().find(|p| data.points[p.index].label == *label)
        {
            let (px, py) = chart.backend_coord(&(p.x.min(xmax), p.y.clamp(ylo, yhi)));
            draw_mark(&flat, (px - base.0, py - base.1), (pw, ph), label, mark)?;
        }
    }
    Ok(())
}

/// A configuration marked by name on a panel.
#[derive(Copy, Clone, PartialEq)]
enum Mark {
    /// The recommendation: a diamond, not a ring (it need not be on a panel's front).
    Recommended,
    /// Today's configuration (the sweep's baseline): a square.
    Today,
}

/// Draws `mark` at pixel `(cx, cy)` of a panel of `(pw, ph)` pixels with its label: the
/// recommendation's above the point unless at the top, today's below unless at the bottom, so
/// the two never cover each other; to the right unless that would leave the panel.
fn draw_mark(
    flat: &Area,
    (cx, cy): (i32, i32),
    (pw, ph): (u32, u32),
    label: &str,
    mark: Mark,
) -> Result<(), ChartError> {
    let r = 15;
    let (shape, words) = match mark {
        Mark::Recommended => {
            (vec![(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy), (cx, cy - r)], "recommended")
        }
        Mark::Today => {
            let r = 12;
            (
                vec![
                    (cx - r, cy - r),
                    (cx + r, cy - r),
                    (cx + r, cy + r),
                    (cx - r, cy + r),
                    (cx - r, cy - r),
                ],
                "today",
            )
        }
    };
    flat.draw(&PathElement::new(shape, OI_BLACK.stroke_width(3))).map_err(draw_err)?;
    let room = (pw as i32 - 40 - text_width(&format!("{words}: "), LEGEND_SIZE)).min(320);
    let label = format!("{words}: {}", fit_text(label, LEGEND_SIZE, room));
    let tw = text_width(&label, LEGEND_SIZE);
    let tx = if cx + 22 + tw < pw as i32 { cx + 22 } else { (cx - 22 - tw).max(2) };
    let ty = match mark {
        Mark::Recommended if cy > 40 => cy - 34,
        Mark::Recommended => cy + 20,
        Mark::Today if cy + 40 < ph as i32 => cy + 20,
        Mark::Today => cy - 34,
    };
    flat.draw(&PathElement::new(
        vec![(cx, cy), (tx.min(cx + 14).max(cx - 14), ty + 10)],
        OI_BLACK.stroke_width(1),
    ))
    .map_err(draw_err)?;
    flat.draw(&Rectangle::new(
        [(tx - 4, ty - 3), (tx + tw + 4, ty + LEGEND_SIZE as i32 + 5)],
        WHITE.mix(0.9).filled(),
    ))
    .map_err(draw_err)?;
    let style = match mark {
        Mark::Recommended => bold(LEGEND_SIZE, OI_BLACK),
        Mark::Today => text(LEGEND_SIZE, OI_BLACK),
    };
    flat.draw(&Text::new(label, (tx, ty), style)).map_err(draw_err)?;
    Ok(())
}

/// `colour` mixed with white: `t` 0 is white, 1 the colour itself.
fn shade(colour: RGBColor, t: f64) -> RGBColor {
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * t.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(colour.0), mix(colour.1), mix(colour.2))
}

/// How dark a cell of `n` configurations is drawn, when the fullest holds `most`: on a log
/// scale from 0.35 (one) to 1, so a lone configuration still shows.
fn darkness(n: u32, most: u32) -> f64 {
    if most <= 1 {
        return 1.0;
    }
    0.35 + 0.65 * (f64::from(n)).ln() / f64::from(most).ln()
}

/// Draws a panel's cloud: each cell with a configuration that qualifies in the colour of the
/// family most of them belong to, darker with more; a cell holding only ruled-out ones grey.
fn draw_density<DB: DrawingBackend>(
    chart: &ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    data: &ParetoData,
    density: &Density,
    xmax: f64,
    (ylo, yhi): (f64, f64),
) -> Result<(), ChartError> {
    let (most, most_ruled) = density.most();
    let (nx, ny) = DENSITY_CELLS;
    let plot = chart.plotting_area();
    for (cell, (families, &ruled)) in density.qualifying.iter().zip(&density.ruled_out).enumerate() {
        let qualifying: u32 = families.iter().sum();
        let colour = if qualifying > 0 {
            // The family with most configurations here (the first on a tie).
            let family =
                (0..families.len()).fold(0, |best, f| if families[f] > families[best] { f } else { best });
            shade(data.colour(&data.families[family]), darkness(qualifying, most))
        } else if ruled > 0 {
            shade(GREY, 0.8 * darkness(ruled, most_ruled))
        } else {
            continue;
        };
        let (cx, cy) = ((cell % nx) as f64, (cell / nx) as f64);
        let at = |x: f64, y: f64| (x / nx as f64 * xmax, ylo + y / ny as f64 * (yhi - ylo));
        plot.draw(&Rectangle::new([at(cx, cy), at(cx + 1.0, cy + 1.0)], colour.filled()))
            .map_err(draw_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruled_out_is_hollow_and_only_the_front_among_those_that_qualify_is_ringed() {
        // `fast` beats everything on both panels but breaks a constraint on scenario a; `none`
        // is the ruled-out baseline far off the scale.
        let s = Summary::of_text(
            "scenario,config_id,policy,family,false_opens,detection_delay_with_misses_mean_s,\
             wasted_quota,availability,feasible\n\
             a,0,fast,consecutive,0,50,100,0.99,false\n\
             b,0,fast,consecutive,0,70,100,0.99,true\n\
             a,1,slow,windowed,1,400,200,0.95,true\n\
             b,1,slow,windowed,1,400,200,0.95,true\n\
             a,2,mid,windowed,0.5,500,150,0.93,true\n\
             a,3,worse,windowed,1,600,300,0.94,true\n\
             a,4,none,none,0,1000,18000,0.85,false\n",
        );
        let d = ParetoData::new(&s, Some("slow".into()), None).unwrap();
        assert_eq!(d.points.iter().map(|p| p.feasible).collect::<Vec<_>>(), [false, true, true, true, false]);
        assert_eq!(d.points[0].delay_s, Some(60.0));
        let marks = |panel: usize| -> Vec<(bool, bool, bool)> {
            d.view(panel).points.iter().map(|p| (p.hollow, p.ringed, p.off_scale)).collect()
        };
        // Delay panel: `fast` dominates `slow` and `mid`, but is ruled out, so they are the
        // front; `worse` (1 false open, 600 s) is beaten by `slow`.
        assert_eq!(
            marks(0),
            [
                (true, false, false),
                (false, true, false),
                (false, true, false),
                (false, false, false),
                (true, false, true)
            ]
        );
        // The axis stops short of the baseline's 1000 s.
        let delay = d.view(0);
        assert!(delay.y_range.1 >= 600.0 && delay.y_range.1 < 1000.0, "{:?}", delay.y_range);
        // Quota panel: `worse` (300 wasted, 94 %) is beaten by `slow` (200, 95 %); `mid`
        // (150, 93 %) and `slow` trade off.
        assert_eq!(
            marks(1),
            [
                (true, false, false),
                (false, true, false),
                (false, true, false),
                (false, false, false),
                (true, false, true)
            ]
        );
        assert!(d.view(1).x_max < 18_000.0);
        // With nothing qualifying there is no front at all.
        let none = Summary::of_text(
            "scenario,config_id,policy,family,false_opens,detection_delay_with_misses_mean_s,\
             wasted_quota,availability,feasible\n\
             a,0,fast,consecutive,0,50,100,0.99,false\n\
             a,1,slow,windowed,1,400,200,0.95,false\n",
        );
        let d = ParetoData::new(&none, None, None).unwrap();
        assert!(d.view(0).points.iter().chain(&d.view(1).points).all(|p| p.hollow && !p.ringed));
    }

    #[test]
    fn many_configurations_are_counted_in_cells_and_only_the_marks_are_kept() {
        // 5,000 configurations on two scenarios one after the other (a sweep's order), every
        // seventh ruled out, on a coarse grid so fronts tie; `none` far off, and today's one.
        let n = 5_000;
        let mut text = String::from(
            "scenario,config_id,policy,family,false_opens,detection_delay_with_misses_mean_s,\
             wasted_quota,availability,feasible\n",
        );
        let value = |i: usize| ((i * 37) % 11, (i * 53) % 13, (i * 71) % 17, (i * 29) % 7);
        for scenario in ["a", "b"] {
            for i in 0..n {
                let (fo, delay, wasted, av) = value(i);
                let (family, label) =
                    if i == 0 { ("none", "none".to_string()) } else { (["w", "c"][i % 2], format!("k{i}")) };
                let delay = if i == 0 { 9_000 } else { 100 + delay * 10 };
                text.push_str(&format!(
                    "{scenario},{i},{label},{family},{fo},{delay},{},0.9{av},{}\n",
                    wasted * 5,
                    i % 7 != 3
                ));
            }
        }
        let s = Summary::of_text(&text);
        let d = ParetoData::new(&s, Some("k10".into()), Some("k20".into())).unwrap();
        assert!(d.dense());
        assert_eq!((d.configs, d.ruled_out, d.scenarios), (n, (0..n).filter(|i| i % 7 == 3).count(), 2));
        for (panel, dirs) in Y_DIRECTIONS.iter().enumerate() {
            let v = d.view(panel);
            let density = v.density.as_ref().unwrap();
            // Every configuration on the scale is in a cell; `none` is beyond the axes.
            let counted: u32 =
                density.qualifying.iter().flatten().sum::<u32>() + density.ruled_out.iter().sum::<u32>();
            assert_eq!(counted as usize, n - if panel == 0 { 1 } else { 0 } - v.missing, "panel {panel}");
            // The front is the one of all points, one configuration drawn per position.
            let all: Vec<Vec<Option<f64>>> = (0..n)
                .map(|i| {
                    let (fo, delay, wasted, av) = value(i);
                    let (x, y) = if panel == 0 {
                        (fo as f64, if i == 0 { 9_000.0 } else { (100 + delay * 10) as f64 })
                    } else {
                        ((wasted * 5) as f64, format!("0.9{av}").parse().unwrap())
                    };
                    if i % 7 != 3 { vec![Some(x), Some(y)] } else { vec![None, None] }
                })
                .collect();
            let want = front(&all, dirs);
            let ringed: Vec<&Placed> = v.points.iter().filter(|p| p.ringed).collect();
            let positions: HashSet<(u64, u64)> =
                want.iter().map(|&i| (all[i][0].unwrap().to_bits(), all[i][1].unwrap().to_bits())).collect();
            let drawn: HashSet<(u64, u64)> = ringed.iter().map(|p| (p.x.to_bits(), p.y.to_bits())).collect();
            assert_eq!(drawn, positions);
            // One per position and family (two families), however many tie there.
            assert!(
                ringed.len() <= 2 * positions.len() && want.len() > ringed.len(),
                "{} {}",
                ringed.len(),
                want.len()
            );
            // The marks are kept: the recommended, today's and the no-breaker configurations.
            let labels: Vec<&str> = v.points.iter().map(|p| d.points[p.index].label.as_str()).collect();
            for l in ["k10", "k20", "none"] {
                assert!(labels.contains(&l), "panel {panel}: {l} in {labels:?}");
            }
        }
        // Only the points drawn one by one are held.
        assert!(d.points.len() < 60, "{}", d.points.len());
        let png = draw_pareto(&d, Layout::Wide).unwrap();
        assert_eq!(crate::report::charts::tests::png_size(&png), PARETO_SIZE);
    }
}
