//! heatmap_<family>_<p1>_<p2>.png: for every pair of swept parameters of a policy family, the
//! cost (or a chosen metric) of each cell on a viridis scale with its legend, the best feasible
//! cell outlined, the recommended configuration's cell marked, cells that break a constraint
//! greyed and hatched (never colour-ranked, even when no cell is feasible). Values carry three
//! significant digits; a colour scale stretched over a narrow spread says so. When other
//! parameters vary too, each cell shows the best configuration with those two values; over
//! several scenarios the cost is their total (the decision table's), any other metric their mean.

use super::ChartError;
use super::data::{Mean, Summary, SummaryRow, param_order};
use super::style::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::{HashMap, HashSet};

/// One cell of a heatmap.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The metric of the cell's best configuration (the cost summed over the scenarios, as the
    /// decision table's total; any other metric averaged over them); `None` when unknown.
    pub value: Option<f64>,
    /// Whether that configuration meets the constraints.
    pub feasible: bool,
    /// Whether that configuration is the recommended one.
    pub recommended: bool,
}

/// A heatmap of one family over two swept parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    /// Policy family.
    pub family: String,
    /// Parameter across (x).
    pub x_param: String,
    /// Parameter up (y).
    pub y_param: String,
    /// The metric coloured.
    pub metric: String,
    /// Values of the x parameter, sorted by magnitude.
    pub x_values: Vec<String>,
    /// Values of the y parameter, sorted by magnitude.
    pub y_values: Vec<String>,
    /// Cells, `cells[y][x]`; `None` where no configuration has these two values.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// Number of scenarios averaged.
    pub scenarios: usize,
    /// Other swept parameters of the family (each cell shows the best over them).
    pub others: Vec<String>,
    /// The (x, y) cell of the recommended configuration's two values, if it is of this family
    /// (marked whether or not it is the cell's best).
    pub recommended: Option<(usize, usize)>,
    /// The (x, y) cell of the baseline's (today's configuration's) two values, if of this family.
    pub baseline: Option<(usize, usize)>,
}

/// How a cell is filled: the decision the drawing follows, kept apart so tests can check it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Fill {
    /// No value: white.
    Empty,
    /// Breaks a constraint: grey and hatched, whatever its value.
    Infeasible,
    /// On the colour scale, at this position in [0, 1].
    Scale(f64),
}

/// Below this relative spread ((max − min) / max |value|) the colour scale is called narrow.
pub const NARROW_SPREAD: f64 = 0.10;

/// True for metrics where more is better (the best cell is then the largest).
pub fn higher_is_better(metric: &str) -> bool {
    matches!(metric, "availability" | "successes")
}

impl Heatmap {
    /// `heatmap_<family>_<p1>_<p2>.png`, with characters unsafe in file names replaced by `-`.
    pub fn file_name(&self) -> String {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
                .collect()
        };
        format!("heatmap_{}_{}_{}.png", clean(&self.family), clean(&self.x_param), clean(&self.y_param))
    }

    /// The (x, y) position of the best cell: lowest (or highest) value among feasible cells.
    pub fn best(&self) -> Option<(usize, usize)> {
        let hi = higher_is_better(&self.metric);
        let mut best: Option<((usize, usize), f64)> = None;
        for (y, row) in self.cells.iter().enumerate() {
            for (x, c) in row.iter().enumerate() {
                if let Some(Cell { value: Some(v), feasible: true, .. }) = c {
                    let better = match best {
                        None => true,
                        Some((_, b)) => (hi && *v > b) || (!hi && *v < b),
                    };
                    if better {
                        best = Some(((x, y), *v));
                    }
                }
            }
        }
        best.map(|b| b.0)
    }

    /// How many feasible cells have a value, and the smallest and largest of those values
    /// (infinite when none), folded in cell order without collecting them.
    fn extremes(&self) -> (usize, f64, f64) {
        let values = self.cells.iter().flatten().flatten().filter(|c| c.feasible).filter_map(|c| c.value);
        values.fold((0, f64::INFINITY, f64::NEG_INFINITY), |(n, lo, hi), v| (n + 1, lo.min(v), hi.max(v)))
    }

    /// The colour scale's range: over the feasible cells only (infeasible ones are greyed);
    /// `None` when no cell is feasible.
    pub fn range(&self) -> Option<(f64, f64)> {
        let (_, lo, hi) = self.extremes();
        if !lo.is_finite() {
            None
        } else if hi <= lo {
            Some((lo, lo + lo.abs().max(1.0) * 0.01))
        } else {
            Some((lo, hi))
        }
    }

    /// When no cell meets the constraints, what the map would show, in a sentence (the page
    /// says it instead of drawing a grey map): `windowed: no configuration over time_window ×
    /// failure_rate meets the constraints (4 cells, cost total over 12 scenarios 275 to 287)`.
    pub fn no_cell_sentence(&self) -> Option<String> {
        if self.range().is_some() {
            return None;
        }
        let values: Vec<f64> = self.cells.iter().flatten().flatten().filter_map(|c| c.value).collect();
        let cells = self.cells.iter().flatten().flatten().count();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let over = match (self.scenarios > 1, self.metric == COST) {
            (true, true) => format!(" total over {} scenarios", self.scenarios),
            (true, false) => format!(" mean over {} scenarios", self.scenarios),
            _ => String::new(),
        };
        let span = if values.is_empty() {
            String::new()
        } else if lo == hi {
            format!(", {}{over} {}", self.metric, fmt_num(lo))
        } else {
            format!(", {}{over} {} to {}", self.metric, fmt_num(lo), fmt_num(hi))
        };
        Some(format!(
            "{}: no configuration over {} × {} meets the constraints ({cells} cell{}{span}), so no heatmap \
             is drawn.",
            self.family,
            self.x_param,
            self.y_param,
            if cells == 1 { "" } else { "s" }
        ))
    }

    /// How `cell` is filled (see [`Fill`]) on a colour scale over `range` (the map's
    /// [`Heatmap::range`], found once for its many cells).
    pub fn fill(cell: &Cell, range: Option<(f64, f64)>) -> Fill {
        match (cell.value, cell.feasible, range) {
            (_, false, _) => Fill::Infeasible,
            (Some(v), true, Some((lo, hi))) => Fill::Scale(((v - lo) / (hi - lo)).clamp(0.0, 1.0)),
            _ => Fill::Empty,
        }
    }

    /// The relative spread of the feasible values when it is below [`NARROW_SPREAD`] (the
    /// colours then exaggerate small differences, and the chart says so).
    pub fn narrow_spread(&self) -> Option<f64> {
        let (count, lo, hi) = self.extremes();
        if count < 2 {
            return None;
        }
        let scale = lo.abs().max(hi.abs());
        let spread = if scale > 0.0 { (hi - lo) / scale } else { 0.0 };
        (spread < NARROW_SPREAD).then_some(spread)
    }
}

/// One configuration's mean of the metric over its rows (and how many rows had one) and
/// whether a row breaks a constraint: all a heatmap keeps of a configuration between its passes.
#[derive(Default)]
struct Total {
    mean: Mean,
    rows: u32,
    ruled_out: bool,
}

impl Total {
    /// Adds `row`'s value of `metric` and feasibility.
    fn add(&mut self, row: &SummaryRow, metric: &str) {
        self.mean.add(row.metric(metric));
        self.rows += u32::from(row.metric(metric).is_some());
        self.ruled_out |= row.feasible() == Some(false);
    }

    /// The value a cell shows: the cost summed over the scenarios (the decision table's total
    /// cost), any other metric's mean over them.
    fn value(&self, metric: &str) -> Option<f64> {
        let mean = self.mean.get()?;
        Some(if metric == COST { mean * f64::from(self.rows) } else { mean })
    }
}

/// The column whose cells are totals over the scenarios.
const COST: &str = "cost";

/// Whether `cand` should replace `best` in a cell: feasible first, then with a value, then the
/// better value (the earlier configuration on a tie).
fn better(cand: (Option<f64>, bool), best: &Cell, hi: bool) -> bool {
    let rank = |value: Option<f64>, feasible: bool| (feasible, value.is_some());
    if rank(cand.0, cand.1) != rank(best.value, best.feasible) {
        return rank(cand.0, cand.1) > rank(best.value, best.feasible);
    }
    match (cand.0, best.value) {
        (Some(v), Some(w)) => (hi && v > w) || (!hi && v < w),
        _ => false,
    }
}

/// A heatmap being filled: its parameters' positions and values, and the best configuration of
/// each cell.
struct Filling {
    map: Heatmap,
    /// Positions of the x and y parameters in the file's parameter columns.
    params: (String, String),
    x_at: HashMap<String, usize>,
    y_at: HashMap<String, usize>,
    /// The best configuration so far of each cell, `best[y][x]` (moved into the map's cells).
    best: Vec<Vec<Option<Cell>>>,
}

/// The configurations a heatmap marks by label: the recommendation and the baseline.
#[derive(Copy, Clone, Debug, Default)]
pub struct Marked<'a> {
    /// The recommended configuration's label.
    pub recommended: Option<&'a str>,
    /// The baseline's (today's configuration's) label.
    pub baseline: Option<&'a str>,
}

/// Builds every heatmap `summary` allows for `metric` (falling back to nothing when the
/// column is absent): per family, per pair of parameters with two or more values. Each cell
/// shows the best configuration with its two values, a configuration's metric being its mean
/// over the scenarios with a value. The cells of the recommended configuration's and the
/// baseline's two values are marked. Two passes over the configurations (values, then cells), keeping per family the
/// parameter values and per cell its best configuration.
pub fn heatmaps(summary: &Summary, metric: &str, marked: Marked) -> Result<Vec<Heatmap>, ChartError> {
    if !summary.metric_columns.iter().any(|m| m == metric) {
        return Ok(Vec::new());
    }
    let params = &summary.param_columns;
    // Families in order of first appearance with their scenarios; the values each parameter
    // takes among a family's configurations.
    let mut order: Vec<String> = Vec::new();
    let mut scenarios: HashMap<String, HashSet<String>> = HashMap::new();
    let mut values: HashMap<String, Vec<HashSet<String>>> = HashMap::new();
    summary.configs(
        |_: &mut (), row| {
            let seen = match scenarios.get_mut(row.family()) {
                Some(s) => s,
                None => {
                    order.push(row.family().to_string());
                    scenarios.entry(row.family().to_string()).or_default()
                }
            };
            if !seen.contains(row.scenario()) {
                seen.insert(row.scenario().to_string());
            }
        },
        |first, ()| {
            let fam = match values.get_mut(first.family()) {
                Some(v) => v,
                None => {
                    values.entry(first.family().to_string()).or_insert(vec![HashSet::new(); params.len()])
                }
            };
            for (p, values) in params.iter().zip(fam) {
                if let Some(v) = first.param(p).filter(|v| !v.is_empty())
                    && !values.contains(v)
                {
                    values.insert(v.to_string());
                }
            }
            Ok(())
        },
    )?;
    let mut fillings: Vec<Filling> = Vec::new();
    let mut by_family: HashMap<&str, Vec<usize>> = HashMap::new();
    let none: Vec<HashSet<String>> = vec![HashSet::new(); params.len()];
    for name in &order {
        let fam_values = values.get(name).unwrap_or(&none);
        let sorted = |values: &HashSet<String>| {
            let mut v: Vec<String> = values.iter().cloned().collect();
            v.sort_unstable();
            v.sort_by(|a, b| param_order(a, b));
            v
        };
        let swept: Vec<(&String, Vec<String>)> = params
            .iter()
            .zip(fam_values)
            .filter(|(_, v)| v.len() >= 2)
            .map(|(p, v)| (p, sorted(v)))
            .collect();
        for i in 0..swept.len() {
            for j in i + 1..swept.len() {
                let ((xp, xs), (yp, ys)) = (&swept[i], &swept[j]);
                let position = |vs: &[String]| -> HashMap<String, usize> {
                    vs.iter().enumerate().map(|(i, v)| (v.clone(), i)).collect()
                };
                by_family.entry(name.as_str()).or_default().push(fillings.len());
                fillings.push(Filling {
                    params: (xp.to_string(), yp.to_string()),
                    x_at: position(xs),
                    y_at: position(ys),
                    best: vec![vec![None; xs.len()]; ys.len()],
                    map: Heatmap {
                        family: name.clone(),
                        x_param: xp.to_string(),
                        y_param: yp.to_string(),
                        metric: metric.to_string(),
                        x_values: xs.clone(),
                        y_values: ys.clone(),
                        cells: Vec::new(),
                        scenarios: scenarios.get(name).map_or(0, HashSet::len),
                        others: swept
                            .iter()
                            .filter(|(p, _)| p != xp && p != yp)
                            .map(|(p, _)| p.to_string())
                            .collect(),
                        recommended: None,
                        baseline: None,
                    },
                });
            }
        }
    }
    let hi = higher_is_better(metric);
    summary.configs(
        |t: &mut Total, row| t.add(row, metric),
        |first, total| {
            let cand = (total.value(metric), !total.ruled_out);
            for &k in by_family.get(first.family()).map(Vec::as_slice).unwrap_or_default() {
                let f = &mut fillings[k];
                let (Some(&x), Some(&y)) = (
                    first.param(&f.params.0).and_then(|v| f.x_at.get(v)),
                    first.param(&f.params.1).and_then(|v| f.y_at.get(v)),
                ) else {
                    continue;
                };
                let recommended = marked.recommended == Some(first.policy());
                if recommended {
                    f.map.recommended = Some((x, y));
                }
                if marked.baseline == Some(first.policy()) {
                    f.map.baseline = Some((x, y));
                }
                let slot = &mut f.best[y][x];
                if slot.as_ref().is_none_or(|b| better(cand, b, hi)) {
                    *slot = Some(Cell { value: cand.0, feasible: cand.1, recommended });
                }
            }
            Ok(())
        },
    )?;
    Ok(fillings
        .into_iter()
        .map(|f| {
            let mut map = f.map;
            map.cells = f.best;
            map
        })
        .collect())
}

/// Draws `map` (PNG of [`heatmap_size`]).
pub fn draw_heatmap(map: &Heatmap, layout: Layout) -> Result<Vec<u8>, ChartError> {
    png(heatmap_size(layout), |root| render_heatmap(map, layout, root))
}

/// Pixel size of a heatmap: [`HEATMAP_SIZE`], or [`NARROW_WIDTH`] wide with a narrower colour
/// scale and label area.
pub fn heatmap_size(layout: Layout) -> (u32, u32) {
    match layout {
        Layout::Wide => HEATMAP_SIZE,
        Layout::Narrow => (NARROW_WIDTH, 640),
    }
}

/// Columns narrower than this (px) label every few values instead of each one.
const MIN_LABEL_PX: i32 = 24;
/// Cells narrower or lower than this (px) are drawn without border or hatching.
const MIN_CELL_PX: i32 = 6;

/// Width of the colour scale strip on the right, and of the y label area (px).
fn side_widths(layout: Layout) -> (u32, u32) {
    match layout {
        Layout::Wide => (190, 110),
        Layout::Narrow => (150, 76),
    }
}

/// Draws `map` into `root`.
pub fn render_heatmap(map: &Heatmap, layout: Layout, root: &Area) -> Result<(), ChartError> {
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = Vec::new();
    if map.scenarios > 1 {
        let over = if map.metric == COST { "total" } else { "mean" };
        sub.push(format!("{over} over {} scenarios", map.scenarios));
    }
    if !map.others.is_empty() {
        sub.push(format!("each cell: best over {}", map.others.join(", ")));
    }
    sub.push(if higher_is_better(&map.metric) {
        "higher is better".into()
    } else {
        "lower is better".into()
    });
    if map.range().is_none() {
        sub.push("no cell meets the constraints: all greyed".into());
    } else if let Some(spread) = map.narrow_spread() {
        sub.push(format!("colours stretched: the feasible values differ by only {}", fmt_pct(spread)));
    }
    draw_title(
        &title_area,
        &format!("{} of {}: {} × {}", map.metric, map.family, map.x_param, map.y_param),
        &sub.join(" · "),
    )?;
    let (w, _) = rest.dim_in_pixel();
    let (scale_width, y_labels) = side_widths(layout);
    let (main, scale) = rest.split_horizontally(w - scale_width);
    let (nx, ny) = (map.x_values.len() as i32, map.y_values.len() as i32);
    let mut chart = ChartBuilder::on(&main)
        .margin(16)
        .x_label_area_size(80)
        .y_label_area_size(y_labels)
        .build_cartesian_2d(0.0..nx.max(1) as f64, 0.0..ny.max(1) as f64)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc(format!("{} (swept parameter)", map.x_param))
        .y_desc(format!("{} (swept parameter)", map.y_param))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    // Tick labels at cell centres, drawn by hand so every value gets exactly one label.
    let main_base = main.get_base_pixel();
    let at = |x: f64, y: f64| {
        let p = chart.backend_coord(&(x, y));
        (p.0 - main_base.0, p.1 - main_base.1)
    };
    // Columns too narrow for any label (hundreds of values) label every k-th value in full.
    let colw = (at(1.0, 0.0).0 - at(0.0, 0.0).0) - 4;
    let widest = map.x_values.iter().map(|v| text_width(&fmt_param(v), TICK_SIZE)).max().unwrap_or(0);
    let x_every = if colw >= MIN_LABEL_PX { 1 } else { ((widest + 16) / (colw + 4).max(1) + 1) as usize };
    for (i, v) in map.x_values.iter().enumerate().step_by(x_every) {
        let (x, y) = at(i as f64 + 0.5, 0.0);
        let style = text(TICK_SIZE, OI_BLACK).pos(Pos::new(HPos::Center, VPos::Top));
        let label = if x_every == 1 { fit_text(&fmt_param(v), TICK_SIZE, colw) } else { fmt_param(v) };
        main.draw(&Text::new(label, (x, y + 8), style)).map_err(draw_err)?;
    }
    let rowh = at(0.0, 0.0).1 - at(0.0, 1.0).1;
    let y_every =
        if rowh >= TICK_SIZE as i32 + 2 { 1 } else { ((TICK_SIZE as i32 + 8) / rowh.max(1) + 1) as usize };
    for (j, v) in map.y_values.iter().enumerate().step_by(y_every) {
        let (x, y) = at(0.0, j as f64 + 0.5);
        let style = text(TICK_SIZE, OI_BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        let label = fit_text(&fmt_param(v), TICK_SIZE, y_labels as i32 - 20);
        main.draw(&Text::new(label, (x - 8, y), style)).map_err(draw_err)?;
    }
    let (best, range) = (map.best(), map.range());
    let plot = chart.plotting_area();
    let base = plot.get_base_pixel();
    let px = plot.strip_coord_spec();
    let (pw, ph) = px.dim_in_pixel();
    let (cw, chh) = (pw as i32 / nx.max(1), ph as i32 / ny.max(1));
    let cell_px = |x: i32, y: i32| {
        let a = chart.backend_coord(&(x as f64, (y + 1) as f64));
        let b = chart.backend_coord(&((x + 1) as f64, y as f64));
        ((a.0 - base.0, a.1 - base.1), (b.0 - base.0, b.1 - base.1))
    };
    let big = cw >= 56 && chh >= 30;
    // Cells a few pixels wide show their colour only: borders and hatching would hide it.
    let fine = cw >= MIN_CELL_PX && chh >= MIN_CELL_PX;
    for (y, row) in map.cells.iter().enumerate() {
        for (x, cell) in row.iter().enumerate() {
            let (a, b) = cell_px(x as i32, y as i32);
            let centre = ((a.0 + b.0) / 2, (a.1 + b.1) / 2);
            match cell {
                None => {
                    px.draw(&Rectangle::new([a, b], WHITE.filled())).map_err(draw_err)?;
                    if fine {
                        hatch(&px, a, b, 6, LIGHT_GREY)?;
                    }
                }
                Some(c) => {
                    let fill = match Heatmap::fill(c, range) {
                        Fill::Infeasible => INFEASIBLE_GREY,
                        Fill::Scale(t) => viridis(t),
                        Fill::Empty => WHITE,
                    };
                    px.draw(&Rectangle::new([a, b], fill.filled())).map_err(draw_err)?;
                    if !c.feasible && fine {
                        hatch(&px, a, b, 8, GREY)?;
                    }
                    if big {
                        let colour = if is_dark(fill) { WHITE } else { OI_BLACK };
                        let label = c.value.map(fmt_sig3).unwrap_or_else(|| "no value".into());
                        let style = text(TICK_SIZE, colour).pos(Pos::new(HPos::Center, VPos::Center));
                        px.draw(&Text::new(label, centre, style)).map_err(draw_err)?;
                    }
                }
            }
            if fine {
                px.draw(&Rectangle::new([a, b], WHITE.stroke_width(1))).map_err(draw_err)?;
            }
        }
    }
    if let Some((x, y)) = best {
        let (a, b) = cell_px(x as i32, y as i32);
        px.draw(&Rectangle::new([(a.0 + 2, a.1 + 2), (b.0 - 2, b.1 - 2)], OI_BLACK.stroke_width(4)))
            .map_err(draw_err)?;
        px.draw(&Rectangle::new([(a.0 + 5, a.1 + 5), (b.0 - 5, b.1 - 5)], WHITE.stroke_width(2)))
            .map_err(draw_err)?;
        if big && chh >= 48 {
            let fill = map.cells[y][x].as_ref().map(|c| Heatmap::fill(c, range));
            let colour = if let Some(Fill::Scale(t)) = fill {
                if is_dark(viridis(t)) { WHITE } else { OI_BLACK }
            } else {
                OI_BLACK
            };
            let style = bold(TICK_SIZE, colour).pos(Pos::new(HPos::Center, VPos::Center));
            px.draw(&Text::new("best", ((a.0 + b.0) / 2, (a.1 + b.1) / 2 + 18), style)).map_err(draw_err)?;
        }
    }
    if let Some((x, y)) = map.recommended {
        // A purple diamond in the cell's top-left corner (and the word where it fits).
        let (a, _) = cell_px(x as i32, y as i32);
        let (cx, cy, r) = (a.0 + 16, a.1 + 16, 9);
        let diamond = vec![(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)];
        px.draw(&Polygon::new(diamond.clone(), RECOMMENDED.filled())).map_err(draw_err)?;
        px.draw(&PathElement::new([diamond, vec![(cx, cy - r)]].concat(), WHITE.stroke_width(2)))
            .map_err(draw_err)?;
        if big && cw >= 140 {
            let style = bold(TICK_SIZE, OI_BLACK);
            let pos = (cx + r + 6, cy - TICK_SIZE as i32 / 2 - 1);
            let w = bold_width("recommended", TICK_SIZE);
            px.draw(&Rectangle::new(
                [(pos.0 - 3, pos.1 - 1), (pos.0 + w + 3, pos.1 + TICK_SIZE as i32 + 3)],
                WHITE.mix(0.85).filled(),
            ))
            .map_err(draw_err)?;
            px.draw(&Text::new("recommended", pos, style)).map_err(draw_err)?;
        }
    }
    if let Some((x, y)) = map.baseline {
        // A black square on white in the cell's top-right corner, as pareto.png marks it.
        let (a, b) = cell_px(x as i32, y as i32);
        let (cx, cy) = (b.0 - 16, a.1 + 16);
        baseline_mark(&px, (cx, cy))?;
        if big && cw >= 140 {
            let label = "today's";
            let w = bold_width(label, TICK_SIZE);
            let pos = (cx - 10 - 6 - w, cy - TICK_SIZE as i32 / 2 - 1);
            px.draw(&Rectangle::new(
                [(pos.0 - 3, pos.1 - 1), (pos.0 + w + 3, pos.1 + TICK_SIZE as i32 + 3)],
                WHITE.mix(0.85).filled(),
            ))
            .map_err(draw_err)?;
            px.draw(&Text::new(label, pos, bold(TICK_SIZE, OI_BLACK))).map_err(draw_err)?;
        }
    }
    draw_scale(&scale, map)
}

/// The baseline's mark centred at `(cx, cy)`: a black square outline on a white square.
fn baseline_mark(area: &Area, (cx, cy): (i32, i32)) -> Result<(), ChartError> {
    let r = 9;
    area.draw(&Rectangle::new([(cx - r, cy - r), (cx + r, cy + r)], WHITE.filled())).map_err(draw_err)?;
    area.draw(&Rectangle::new(
        [(cx - r + 2, cy - r + 2), (cx + r - 2, cy + r - 2)],
        OI_BLACK.stroke_width(3),
    ))
    .map_err(draw_err)?;
    Ok(())
}

/// Height of the key under the colour scale (px).
const KEY_HEIGHT: u32 = 250;

/// Fill of a cell that breaks a constraint.
const INFEASIBLE_GREY: RGBColor = RGBColor(0xD0, 0xD0, 0xD0);
/// Colour of the recommended cell's mark.
const RECOMMENDED: RGBColor = OI_PURPLE;

fn draw_scale(area: &Area, map: &Heatmap) -> Result<(), ChartError> {
    let (_, h) = area.dim_in_pixel();
    let (bar_area, key_area) = area.split_vertically(h - KEY_HEIGHT);
    let Some((lo, hi)) = map.range() else {
        let style = text(LEGEND_SIZE, DARK_GREY);
        for (i, line) in ["no cell meets", "the constraints:", "no colour scale"].iter().enumerate() {
            bar_area.draw(&Text::new(*line, (14, 30 + i as i32 * 22), style.clone())).map_err(draw_err)?;
        }
        return draw_key(&key_area, map);
    };
    let mut chart = ChartBuilder::on(&bar_area)
        .margin_top(16)
        .margin_bottom(8)
        .margin_right(10)
        .right_y_label_area_size(110)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(8)
        .y_label_formatter(&|v| fmt_sig3(*v))
        .y_desc(format!(
            "{} ({} is better)",
            map.metric,
            if higher_is_better(&map.metric) { "higher" } else { "lower" }
        ))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    // 48 bands read as a continuous scale and keep the map within an indexed PNG's 256 colours.
    let steps = 48;
    chart
        .draw_series((0..steps).map(|i| {
            let a = lo + (hi - lo) * i as f64 / steps as f64;
            let b = lo + (hi - lo) * (i + 1) as f64 / steps as f64;
            Rectangle::new([(0.0, a), (1.0, b)], viridis(i as f64 / (steps - 1) as f64).filled())
        }))
        .map_err(draw_err)?;
    chart
        .plotting_area()
        .draw(&Rectangle::new([(0.0, lo), (1.0, hi)], DARK_GREY.stroke_width(1)))
        .map_err(draw_err)?;
    draw_key(&key_area, map)
}

/// The key for the marks under the colour scale.
fn draw_key(key_area: &Area, map: &Heatmap) -> Result<(), ChartError> {
    let s = LEGEND_SIZE as i32;
    let x = 14;
    key_area
        .draw(&Rectangle::new([(x, 10), (x + 2 * s, 10 + 2 * s)], OI_BLACK.stroke_width(4)))
        .map_err(draw_err)?;
    key_area
        .draw(&Text::new("best feasible", (x + 2 * s + 8, 16), text(LEGEND_SIZE, OI_BLACK)))
        .map_err(draw_err)?;
    key_area
        .draw(&Rectangle::new([(x, 56), (x + 2 * s, 56 + 2 * s)], RGBColor(0xD0, 0xD0, 0xD0).filled()))
        .map_err(draw_err)?;
    hatch(key_area, (x, 56), (x + 2 * s, 56 + 2 * s), 8, GREY)?;
    key_area
        .draw(&Text::new("breaks a", (x + 2 * s + 8, 54), text(LEGEND_SIZE, OI_BLACK)))
        .map_err(draw_err)?;
    key_area
        .draw(&Text::new("constraint", (x + 2 * s + 8, 72), text(LEGEND_SIZE, OI_BLACK)))
        .map_err(draw_err)?;
    key_area.draw(&Rectangle::new([(x, 102), (x + 2 * s, 102 + 2 * s)], WHITE.filled())).map_err(draw_err)?;
    hatch(key_area, (x, 102), (x + 2 * s, 102 + 2 * s), 6, LIGHT_GREY)?;
    key_area
        .draw(&Rectangle::new([(x, 102), (x + 2 * s, 102 + 2 * s)], GREY.stroke_width(1)))
        .map_err(draw_err)?;
    key_area
        .draw(&Text::new("not run", (x + 2 * s + 8, 110), text(LEGEND_SIZE, OI_BLACK)))
        .map_err(draw_err)?;
    if map.recommended.is_some() {
        let (cx, cy, r) = (x + s, 160, 9);
        key_area
            .draw(&Polygon::new(
                vec![(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)],
                RECOMMENDED.filled(),
            ))
            .map_err(draw_err)?;
        key_area
            .draw(&Text::new("recommended", (x + 2 * s + 8, cy - 9), text(LEGEND_SIZE, OI_BLACK)))
            .map_err(draw_err)?;
    }
    if map.baseline.is_some() {
        let cy = 196;
        baseline_mark(key_area, (x + s, cy))?;
        for (i, line) in ["today's", "configuration"].iter().enumerate() {
            key_area
                .draw(&Text::new(
                    *line,
                    (x + 2 * s + 8, cy - 18 + i as i32 * 18),
                    text(LEGEND_SIZE, OI_BLACK),
                ))
                .map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_with_no_qualifying_cell_is_a_sentence_not_a_picture() {
        let cell =
            |value: f64, feasible: bool| Some(Cell { value: Some(value), feasible, recommended: false });
        let mut map = Heatmap {
            family: "windowed".into(),
            x_param: "time_window".into(),
            y_param: "failure_rate".into(),
            metric: "cost".into(),
            x_values: vec!["30s".into(), "2m".into()],
            y_values: vec!["0.2".into(), "0.5".into()],
            cells: vec![vec![cell(283.0, false), cell(287.0, false)], vec![cell(275.0, false), None]],
            scenarios: 12,
            others: Vec::new(),
            recommended: None,
            baseline: None,
        };
        assert_eq!(
            map.no_cell_sentence().unwrap(),
            "windowed: no configuration over time_window × failure_rate meets the constraints (3 cells, cost \
             total over 12 scenarios 275 to 287), so no heatmap is drawn."
        );
        map.cells[1][1] = cell(290.0, true);
        assert_eq!(map.no_cell_sentence(), None);
    }

    fn summary(text: &str) -> Summary<'static> {
        Summary::of_text(text)
    }

    fn heatmaps(s: &Summary, metric: &str, recommended: Option<&str>) -> Vec<Heatmap> {
        super::heatmaps(s, metric, Marked { recommended, baseline: None }).unwrap()
    }

    const SWEEP: &str = "scenario,policy,config_id,family,param.threshold,param.open_for,param.fixed,cost,feasible\n\
        s,c1,c1,count,5,30s,x,10,true\n\
        s,c2,c2,count,10,30s,x,4,true\n\
        s,c3,c3,count,5,1m,x,2,false\n\
        s,c4,c4,count,10,1m,x,6,true\n\
        s,w1,w1,window,0.5,,x,3,true\n";

    #[test]
    fn one_heatmap_per_pair_of_swept_parameters() {
        let maps = heatmaps(&summary(SWEEP), "cost", None);
        assert_eq!(maps.len(), 1);
        let m = &maps[0];
        assert_eq!(m.file_name(), "heatmap_count_threshold_open_for.png");
        assert_eq!(m.x_values, vec!["5", "10"]);
        assert_eq!(m.y_values, vec!["30s", "1m"]);
        assert_eq!(m.cells[1][0].as_ref().unwrap().value, Some(2.0));
        assert!(!m.cells[1][0].as_ref().unwrap().feasible);
        // The infeasible 2 does not win; the feasible 4 does.
        assert_eq!(m.best(), Some((1, 0)));
        assert!(heatmaps(&summary(SWEEP), "no_such_metric", None).is_empty());
        // The infeasible cell is greyed, never placed on the scale (4..10 over the feasible).
        assert_eq!(Heatmap::fill(m.cells[1][0].as_ref().unwrap(), m.range()), Fill::Infeasible);
        assert_eq!(Heatmap::fill(m.cells[0][1].as_ref().unwrap(), m.range()), Fill::Scale(0.0));
        assert_eq!(Heatmap::fill(m.cells[0][0].as_ref().unwrap(), m.range()), Fill::Scale(1.0));
        assert_eq!(m.range(), Some((4.0, 10.0)));
        assert_eq!(m.narrow_spread(), None);
        assert_eq!(m.recommended, None);
        let marked = heatmaps(&summary(SWEEP), "cost", Some("c4"));
        assert_eq!(marked[0].recommended, Some((1, 1)));
    }

    #[test]
    fn nothing_feasible_is_all_grey_and_a_narrow_spread_is_reported() {
        // Every cell breaks a constraint: all greyed, no colour scale at all.
        let text = "scenario,policy,config_id,family,param.a,param.b,cost,feasible\n\
            s,k1,k1,f,1,1,11.04,false\ns,k2,k2,f,2,1,16,false\ns,k3,k3,f,1,2,11.9,false\n";
        let m = &heatmaps(&summary(text), "cost", None)[0];
        assert_eq!(m.range(), None);
        assert!(m.cells.iter().flatten().flatten().all(|c| Heatmap::fill(c, m.range()) == Fill::Infeasible));
        // Feasible values 11.04 and 11.9 differ by 7.2% of 11.9: a narrow spread.
        let text = text.replace("false", "true").replace("16,true", "16,false");
        let m = &heatmaps(&summary(&text), "cost", None)[0];
        let spread = m.narrow_spread().unwrap();
        assert!((spread - (11.9 - 11.04) / 11.9).abs() < 1e-12, "{spread}");
    }

    #[test]
    fn other_parameters_collapse_to_their_best() {
        let text = "scenario,policy,config_id,family,param.a,param.b,param.c,cost\n\
            s,k1,k1,f,1,1,x,5\ns,k2,k2,f,1,1,y,3\ns,k3,k3,f,2,2,x,7\ns,k4,k4,f,2,2,y,8\n";
        let maps = heatmaps(&summary(text), "cost", Some("k2"));
        assert_eq!(maps.len(), 3);
        let ab = maps.iter().find(|m| m.x_param == "a" && m.y_param == "b").unwrap();
        assert_eq!(ab.others, vec!["c"]);
        assert_eq!(ab.cells[0][0], Some(Cell { value: Some(3.0), feasible: true, recommended: true }));
        assert_eq!(ab.recommended, Some((0, 0)));
        assert_eq!(ab.cells[1][1].as_ref().unwrap().value, Some(7.0));
        assert_eq!(ab.cells[0][1], None);
        // The baseline k4 and a recommended k1 are marked at their own two values, though
        // their cells show a better configuration (k3, k2); a label of no map marks nothing.
        let s = summary(text);
        let maps =
            super::heatmaps(&s, "cost", Marked { recommended: Some("k1"), baseline: Some("k4") }).unwrap();
        let ab = maps.iter().find(|m| m.x_param == "a" && m.y_param == "b").unwrap();
        assert_eq!((ab.recommended, ab.baseline), (Some((0, 0)), Some((1, 1))));
        assert!(!ab.cells[0][0].as_ref().unwrap().recommended, "k2 shows in k1's cell");
        let bc = maps.iter().find(|m| m.x_param == "b" && m.y_param == "c").unwrap();
        assert_eq!(bc.baseline, Some((1, 1)));
        let none =
            super::heatmaps(&s, "cost", Marked { recommended: None, baseline: Some("other") }).unwrap();
        assert!(none.iter().all(|m| m.baseline.is_none()));
        // Both drawn, with their key: the picture differs from the unmarked one.
        let plain = maps.iter().map(|m| Heatmap { recommended: None, baseline: None, ..m.clone() });
        for (m, p) in maps.iter().zip(plain) {
            let (a, b) = (draw_heatmap(m, Layout::Wide).unwrap(), draw_heatmap(&p, Layout::Wide).unwrap());
            assert!(a != b, "{}: the marks changed nothing", m.file_name());
        }
    }

    #[test]
    fn row_order_does_not_change_a_map() {
        // Two scenarios: one after the other (a sweep's order) or each configuration's rows
        // together: the same means, cells and marks.
        let rows = |scenario: &str, shift: f64| -> Vec<String> {
            (0..6)
                .map(|i| {
                    format!(
                        "{scenario},{i},k{i},f,{},{},{},{}",
                        i % 3,
                        i / 3,
                        10.0 - i as f64 + shift,
                        i != 4
                    )
                })
                .collect()
        };
        let head = "scenario,config_id,policy,family,param.a,param.b,cost,feasible\n";
        let (a, b) = (rows("a", 0.0), rows("b", 0.5));
        let split = format!("{head}{}\n{}\n", a.join("\n"), b.join("\n"));
        let together: Vec<String> = a.iter().zip(&b).flat_map(|(x, y)| [x.clone(), y.clone()]).collect();
        let together = format!("{head}{}\n", together.join("\n"));
        let (m1, m2) = (
            heatmaps(&summary(&split), "cost", Some("k2")),
            heatmaps(&summary(&together), "cost", Some("k2")),
        );
        assert_eq!(m1, m2);
        assert_eq!(m1[0].scenarios, 2);
        // The total cost over the two scenarios: 8 + 8.5.
        assert_eq!(m1[0].cells[0][2], Some(Cell { value: Some(16.5), feasible: true, recommended: true }));
        assert_eq!(m1[0].cells[1][1].as_ref().map(|c| c.feasible), Some(false));
    }
}
