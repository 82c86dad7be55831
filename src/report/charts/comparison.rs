//! comparison.png: the compared configurations side by side. One panel per metric; in each,
//! one group of bars per scenario and one bar per configuration, with the 95% confidence
//! interval (the `<metric>_ci95` column, when present) as an error bar. On the detection-delay
//! panel a configuration that missed incidents says so above its bar (`×2 missed`), and the
//! delay counts each miss as its duration plus the tolerance, so a miss never reads as speed.

use super::ChartError;
use super::data::{Summary, SummaryRow};
use super::style::*;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Metrics the comparison shows, in order: (column, panel title, axis unit).
pub const COMPARISON_METRICS: [(&str, &str, &str); 12] = [
    ("false_opens", "False opens", "opens (count)"),
    ("missed_incidents", "Missed incidents", "incidents (count)"),
    ("detection_delay_with_misses_mean_s", "Detection delay, mean (a miss = its duration)", "seconds"),
    ("recovery_lag_mean_s", "Recovery lag, mean", "seconds"),
    ("flaps", "Flaps", "flaps (count)"),
    ("wasted_quota", "Wasted quota", "failed attempts"),
    ("amplification", "Amplification", "attempts per request"),
    ("shed_healthy", "Shed while healthy", "requests"),
    ("availability", "Unavailability (1 − availability)", "% of requests"),
    ("answered_latency_p95_ms", "Latency p95 of the answered requests", "milliseconds"),
    ("deferred_share", "Deferred to later (not answered in time)", "% of requests"),
    ("cost", "Cost (sweep objective)", "weighted sum"),
];

/// One value with its confidence half-width.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Value {
    /// Mean over replicates.
    pub mean: f64,
    /// 95% CI half-width, when known.
    pub ci95: Option<f64>,
    /// On a detection-delay panel: the mean number of incidents missed, when above zero.
    pub missed: Option<f64>,
}

/// The delay columns whose panel marks missed incidents.
const DELAY_COLUMNS: [&str; 2] = ["detection_delay_with_misses_mean_s", "detection_delay_mean_s"];

/// One metric panel: `values[scenario][config]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricPanel {
    /// Column name.
    pub column: String,
    /// Panel title.
    pub title: String,
    /// Y axis unit.
    pub unit: String,
    /// True when values are fractions shown as percentages.
    pub percent: bool,
    /// Values per scenario, per configuration.
    pub values: Vec<Vec<Option<Value>>>,
}

/// Everything the comparison chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonData {
    /// Scenarios (groups).
    pub scenarios: Vec<String>,
    /// Configurations (bars), at most [`COMPARISON_MAX_CONFIGS`].
    pub configs: Vec<String>,
    /// Per configuration shown: ruled out by a constraint on some scenario (summary.csv's
    /// `feasible`), said in the legend.
    pub ruled_out: Vec<bool>,
    /// Configurations in the summary, before the cap.
    pub total_configs: usize,
    /// Panels with at least one value.
    pub panels: Vec<MetricPanel>,
    /// What was run, for the title: `slow-not-down · seed 7 · 5 replicates`.
    pub context: String,
    /// Per configuration shown: its colour ([`family_colour`], the families numbered over the
    /// whole summary as pareto.png numbers them).
    pub colours: Vec<RGBColor>,
    /// Per configuration shown: drawn hatched ([`family_hatched`]).
    pub hatched: Vec<bool>,
    /// Per configuration shown: its parameters that take another value in some other
    /// configuration of its family shown (`time_window=2m`), what its legend names.
    pub differing: Vec<Vec<String>>,
    /// Per configuration shown: `recommended`, `baseline` (both, or none), said in the legend.
    pub roles: Vec<Vec<&'static str>>,
    /// The chart's layout: the full-size PNG, or the narrow rendering ([`Self::narrow`]).
    pub layout: Layout,
}

/// Adds `v` to `values` unless empty or already there (first appearance order).
fn note(values: &mut Vec<String>, v: &str) {
    if !v.is_empty() && !values.iter().any(|x| x == v) {
        values.push(v.to_string());
    }
}

/// The title's context: the scenario (or how many), the seed and the replicates.
fn context(scenarios: &[String], seeds: &[String], replicates: &[String]) -> String {
    let mut parts = Vec::new();
    let scenarios: Vec<&String> = scenarios.iter().filter(|s| !s.is_empty()).collect();
    match scenarios.as_slice() {
        [] => {}
        [one] => parts.push(one.to_string()),
        many => parts.push(format!("{} scenarios", many.len())),
    }
    match seeds {
        [] => {}
        [one] => parts.push(format!("seed {one}")),
        many => parts.push(format!("seeds {}", many.join(", "))),
    }
    match replicates {
        [] => {}
        [one] if one == "1" => parts.push("1 replicate".to_string()),
        [one] => parts.push(format!("{one} replicates")),
        many => parts.push(format!("{} replicates", many.join(" or "))),
    }
    parts.join(" · ")
}

/// A configuration as the comparison ranks it: ruled out somewhere, its mean cost (infinite
/// without one), its order of first appearance, its id and label.
type Ranked = (bool, f64, usize, String, String);

impl ComparisonData {
    /// Builds the panels from `summary`; beyond [`COMPARISON_MAX_CONFIGS`] configurations
    /// those that qualify come first, then the lowest mean cost (the first ones when there is
    /// no cost): a sweep's chart shows what could be chosen, not the cheap ruled-out ones.
    /// One pass over the configurations keeps the ones shown, one over the rows their values.
    #[cfg(test)]
    pub fn new(summary: &Summary) -> Result<ComparisonData, ChartError> {
        Self::marked(summary, None, None)
    }

    /// [`ComparisonData::new`] that always shows the recommended configuration and the
    /// baseline (by label), whatever their cost or constraints, and says so in the legend: a
    /// sweep's chart compares what it recommends with what runs today.
    pub fn marked(
        summary: &Summary,
        recommended: Option<&str>,
        baseline: Option<&str>,
    ) -> Result<ComparisonData, ChartError> {
        let pinned = |label: &str| recommended == Some(label) || baseline == Some(label);
        // Each configuration: whether a row rules it out, the sum and count of its costs.
        let mut shown: Vec<Ranked> = Vec::new();
        let mut total_configs = 0;
        let mut families: Vec<String> = Vec::new();
        // Pinned first, then those that qualify, the lowest cost, the first seen.
        let key = |r: &Ranked| (!pinned(&r.4), r.0, r.1, r.2);
        summary.configs(
            |c: &mut (bool, f64, usize), r| {
                c.0 |= r.feasible() == Some(false);
                if let Some(v) = r.metric("cost") {
                    (c.1, c.2) = (c.1 + v, c.2 + 1);
                }
            },
            |first, (ruled_out, sum, costs)| {
                if !families.iter().any(|f| f == first.family()) {
                    families.push(first.family().to_string());
                }
                let cost = if costs == 0 { f64::INFINITY } else { sum / costs as f64 };
                let cand = (
                    ruled_out,
                    cost,
                    total_configs,
                    first.config_id().to_string(),
                    first.policy().to_string(),
                );
                total_configs += 1;
                let worse = |a: &Ranked, b: &Ranked| {
                    let (a, b) = (key(a), key(b));
                    a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.total_cmp(&b.2)).then(a.3.cmp(&b.3)).is_gt()
                };
                if shown.len() < COMPARISON_MAX_CONFIGS {
                    shown.push(cand);
                } else if let Some(w) =
                    (0..shown.len()).reduce(|w, i| if worse(&shown[i], &shown[w]) { i } else { w })
                    && worse(&shown[w], &cand)
                {
                    shown[w] = cand;
                }
                Ok(())
            },
        )?;
        shown.sort_by_key(|r| r.2);
        let scenarios = summary.scenarios.clone();
        // The first row of each (scenario, configuration shown), and the seeds and replicates.
        let mut first: Vec<Vec<Option<SummaryRow>>> = vec![vec![None; shown.len()]; scenarios.len()];
        let (mut seeds, mut replicates) = (Vec::new(), Vec::new());
        summary.for_each(|r| {
            note(&mut seeds, r.seed());
            note(&mut replicates, r.replicates());
            if let (Some(k), Some(s)) = (
                shown.iter().position(|c| c.3 == r.config_id()),
                scenarios.iter().position(|s| s == r.scenario()),
            ) && first[s][k].is_none()
            {
                first[s][k] = Some(r.clone());
            }
            Ok(())
        })?;
        let has = |col: &str| summary.metric_columns.iter().any(|m| m == col);
        let panels = COMPARISON_METRICS
            .iter()
            .map(|&(col, title, unit)| {
                // Folders written before the with-misses column show the plain mean, those before
                // the answered requests' p95 the p95 over every request.
                if col == DELAY_COLUMNS[0] && !has(col) {
                    (DELAY_COLUMNS[1], "Detection delay, mean", unit)
                } else if col == "answered_latency_p95_ms" && !has(col) {
                    ("latency_p95_ms", "User latency p95", unit)
                } else {
                    (col, title, unit)
                }
            })
            .filter(|(col, _, _)| has(col))
            .map(|(col, title, unit)| {
                let invert = col == "availability";
                let percent = invert || col == "deferred_share";
                let marks_misses = DELAY_COLUMNS.contains(&col);
                let values = first
                    .iter()
                    .map(|rows| {
                        rows.iter()
                            .map(|row| {
                                let row = row.as_ref()?;
                                let missed =
                                    row.metric("missed_incidents").filter(|m| marks_misses && *m > 0.0);
                                // A configuration that missed every incident has no plain mean:
                                // it still gets a slot, so the miss is marked instead of a blank.
                                let mean = match row.metric(col) {
                                    Some(v) => v,
                                    None if missed.is_some() => 0.0,
                                    None => return None,
                                };
                                let ci95 = row.metric(&format!("{col}_ci95"));
                                Some(Value { mean: if invert { 1.0 - mean } else { mean }, ci95, missed })
                            })
                            .collect()
                    })
                    .collect();
                MetricPanel {
                    column: col.to_string(),
                    title: title.to_string(),
                    unit: unit.to_string(),
                    percent,
                    values,
                }
            })
            .filter(|p| p.values.iter().flatten().any(Option::is_some))
            // Nothing deferred anywhere: no panel of zeros (most breakers never defer).
            .filter(|p| {
                p.column != "deferred_share" || p.values.iter().flatten().flatten().any(|v| v.mean > 0.0)
            })
            .collect();
        // Each shown configuration's family and parameters, from its first row.
        let rows: Vec<&SummaryRow> =
            (0..shown.len()).filter_map(|k| first.iter().find_map(|s| s[k].as_ref())).collect();
        let family_of = |r: &SummaryRow| families.iter().position(|f| f == r.family()).unwrap_or(0);
        let mut nth = vec![0; families.len()];
        let (colours, hatched) = rows
            .iter()
            .map(|r| {
                let f = family_of(r);
                nth[f] += 1;
                (family_colour(f, nth[f] - 1), family_hatched(nth[f] - 1))
            })
            .unzip();
        let params = &summary.param_columns;
        let differing = rows
            .iter()
            .map(|r| {
                params
                    .iter()
                    .filter_map(|p| {
                        let mine = r.param(p).filter(|v| !v.is_empty())?;
                        let varies = rows.iter().any(|o| {
                            o.family() == r.family() && o.param(p).filter(|v| !v.is_empty()) != Some(mine)
                        });
                        varies
                            .then(|| format!("{}={mine}", p.trim_start_matches(crate::report::PARAM_PREFIX)))
                    })
                    .collect()
            })
            .collect();
        let roles = shown
            .iter()
            .map(|c| {
                let mut roles = Vec::new();
                if recommended == Some(c.4.as_str()) {
                    roles.push("recommended");
                }
                if baseline == Some(c.4.as_str()) {
                    roles.push("baseline");
                }
                roles
            })
            .collect();
        Ok(ComparisonData {
            colours,
            hatched,
            differing,
            roles,
            layout: Layout::Wide,
            context: context(&scenarios, &seeds, &replicates),
            scenarios,
            configs: shown.iter().map(|c| c.4.clone()).collect(),
            ruled_out: shown.iter().map(|c| c.0).collect(),
            total_configs,
            panels,
        })
    }

    /// The same chart laid out for a phone-width page: one column of panels, one legend entry
    /// a row.
    pub fn narrow(&self) -> ComparisonData {
        ComparisonData { layout: Layout::Narrow, ..self.clone() }
    }

    /// Width of the chart (px).
    fn width(&self) -> u32 {
        match self.layout {
            Layout::Wide => COMPARISON_WIDTH,
            Layout::Narrow => NARROW_WIDTH,
        }
    }

    /// Panels per row.
    fn columns(&self) -> usize {
        match self.layout {
            Layout::Wide => COMPARISON_COLUMNS,
            Layout::Narrow => 1,
        }
    }

    /// The plot width of one panel, shared by its scenario groups (px; the panel's width less
    /// its y-label area and margins).
    fn group_width(&self) -> i32 {
        (self.width() / self.columns() as u32) as i32 - 80 - 24
    }

    /// The room for one legend entry's text (px).
    fn legend_item_width(&self) -> i32 {
        match self.layout {
            Layout::Wide => LEGEND_ITEM_WIDTH,
            Layout::Narrow => NARROW_WIDTH as i32 - 90,
        }
    }

    /// The scenario key's lines, each fitting the chart's width (none when groups are named).
    fn key_lines(&self) -> Vec<String> {
        let Some(key) = self.scenario_key() else { return Vec::new() };
        let room = self.width() as i32 - 60;
        let mut lines: Vec<String> = Vec::new();
        for part in key.split(" · ") {
            match lines.last_mut() {
                Some(line) if text_width(&format!("{line} · {part}"), LEGEND_SIZE) <= room => {
                    line.push_str(" · ");
                    line.push_str(part);
                }
                _ => lines.push(part.to_string()),
            }
        }
        lines.into_iter().map(|l| fit_text(&l, LEGEND_SIZE, room)).collect()
    }

    fn legend_rows(&self) -> u32 {
        (self.configs.len() as u32).div_ceil(self.layout.legend_per_row(LEGEND_PER_ROW) as u32)
            + self.key_lines().len() as u32
    }

    /// The label under each scenario's group of bars: its name when every name fits its
    /// group, else its number (from 1), with the key (`1 blip · 2 brownout · …`) drawn under
    /// the legend, so no two groups read alike.
    pub fn group_labels(&self) -> Vec<String> {
        match self.scenario_key() {
            None => self.scenarios.clone(),
            Some(_) => (1..=self.scenarios.len()).map(|i| i.to_string()).collect(),
        }
    }

    /// The key of numbered scenario groups, when their names do not fit.
    pub fn scenario_key(&self) -> Option<String> {
        let group = self.group_width() / self.scenarios.len().max(1) as i32 - 6;
        if self.scenarios.len() < 2 || self.scenarios.iter().all(|s| text_width(s, TICK_SIZE) <= group) {
            return None;
        }
        let key: Vec<String> =
            self.scenarios.iter().enumerate().map(|(i, s)| format!("{} {s}", i + 1)).collect();
        Some(format!("scenarios: {}", key.join(" · ")))
    }

    /// The legend's text for configuration `i`: its label when it fits, else its preset with the
    /// parameters that tell it from the other configurations of its family shown (cut in the
    /// middle only if still too long); then its roles and whether it is ruled out.
    pub fn legend_label(&self, i: usize) -> String {
        let mut suffix: Vec<&str> = self.roles.get(i).cloned().unwrap_or_default();
        if self.ruled_out.get(i).copied().unwrap_or(false) {
            suffix.push("ruled out");
        }
        let suffix = if suffix.is_empty() { String::new() } else { format!(" ({})", suffix.join(", ")) };
        let room = self.legend_item_width() - text_width(&suffix, LEGEND_SIZE);
        let label = &self.configs[i];
        let name = match self.differing.get(i) {
            Some(d) if text_width(label, LEGEND_SIZE) > room && !d.is_empty() => {
                format!("{}[{}]", label.split('[').next().unwrap_or(label), d.join(","))
            }
            _ => label.clone(),
        };
        format!("{}{suffix}", fit_middle(&name, LEGEND_SIZE, room))
    }

    /// The colour of configuration `i`.
    pub fn colour(&self, i: usize) -> RGBColor {
        self.colours.get(i).copied().unwrap_or_else(|| series_colour(i))
    }
}

/// Legend entries per row, and the room for each one's text (px).
const LEGEND_PER_ROW: usize = 3;
const LEGEND_ITEM_WIDTH: i32 = 470;

/// Pixel size of the comparison chart.
pub fn comparison_size(data: &ComparisonData) -> (u32, u32) {
    let rows = (data.panels.len().max(1) as u32).div_ceil(data.columns() as u32);
    (data.width(), TITLE_HEIGHT + 12 + data.legend_rows() * 26 + rows * COMPARISON_ROW_HEIGHT)
}

/// Draws the chart (PNG bytes).
pub fn draw_comparison(data: &ComparisonData) -> Result<Vec<u8>, ChartError> {
    if data.panels.is_empty() || data.configs.is_empty() {
        return Err(ChartError::NoData("summary.csv has no metric to compare".into()));
    }
    png(comparison_size(data), |root| render_comparison(data, root))
}

/// Draws the chart into `root`.
pub fn render_comparison(data: &ComparisonData, root: &Area) -> Result<(), ChartError> {
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = format!(
        "{} configuration{} on {} scenario{}; error bars: 95% confidence interval over replicates; ×N or a dot \
         in red: incidents missed",
        data.configs.len(),
        if data.configs.len() == 1 { "" } else { "s" },
        data.scenarios.len(),
        if data.scenarios.len() == 1 { "" } else { "s" }
    );
    if data.total_configs > data.configs.len() {
        sub.push_str(&format!(
            " · {} of {}: those that qualify first, then the lowest cost",
            data.configs.len(),
            data.total_configs
        ));
    }
    let title = match data.context.as_str() {
        "" => "Configurations compared".to_string(),
        context => format!("Configurations compared: {context}"),
    };
    draw_title(&title_area, &title, &sub)?;
    let (legend_area, grid) = rest.split_vertically(12 + data.legend_rows() * 26);
    let per_row = data.layout.legend_per_row(LEGEND_PER_ROW);
    let config_rows = data.configs.len().div_ceil(per_row);
    for row in 0..config_rows {
        let items: Vec<LegendItem> = (row * per_row..data.configs.len().min((row + 1) * per_row))
            .map(|i| LegendItem {
                label: data.legend_label(i),
                colour: data.colour(i),
                swatch: if data.hatched.get(i) == Some(&true) { Swatch::Hatched } else { Swatch::Box },
            })
            .collect();
        draw_legend_row(&legend_area, &items, 30, 4 + row as i32 * 26)?;
    }
    for (i, line) in data.key_lines().into_iter().enumerate() {
        let y = 4 + (config_rows + i) as i32 * 26;
        legend_area.draw(&Text::new(line, (30, y), text(LEGEND_SIZE, DARK_GREY))).map_err(draw_err)?;
    }
    let rows = data.panels.len().div_ceil(data.columns());
    let cells = grid.split_evenly((rows, data.columns()));
    for (panel, cell) in data.panels.iter().zip(cells.iter()) {
        draw_panel(cell, data, panel)?;
    }
    Ok(())
}

/// Beyond this ratio between a panel's largest and smallest positive values, the panel's y axis
/// is logarithmic: one long miss (2,730 s) must not flatten a 19× difference between others.
pub const LOG_RATIO: f64 = 30.0;

/// A panel's y scale: linear from 0, or logarithmic from `floor` (values at or below it sit on
/// the axis), in either case drawn on a linear coordinate `y(v)`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scale {
    /// Linear from zero.
    Linear,
    /// log10(v / floor), 0 at and below `floor`.
    Log {
        /// The value at the bottom of the axis (a power of ten).
        floor: f64,
    },
}

impl Scale {
    /// The scale of `panel`: logarithmic when its positive values span more than [`LOG_RATIO`].
    pub fn of(panel: &MetricPanel) -> Scale {
        // Only durations: a count or a cost near zero reads better on a linear axis.
        if panel.unit != "seconds" {
            return Scale::Linear;
        }
        let positive = panel.values.iter().flatten().flatten().map(|v| v.mean).filter(|v| *v > 0.0);
        let (lo, hi) = positive.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if panel.percent || !lo.is_finite() || hi / lo <= LOG_RATIO {
            return Scale::Linear;
        }
        Scale::Log { floor: 10f64.powf(lo.log10().floor()) }
    }

    /// Where `v` sits on the drawn (linear) coordinate.
    pub fn y(&self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log { floor } => (v / floor).max(1.0).log10(),
        }
    }
}

fn draw_panel(area: &Area, data: &ComparisonData, panel: &MetricPanel) -> Result<(), ChartError> {
    let scale = Scale::of(panel);
    let top =
        panel.values.iter().flatten().flatten().map(|v| v.mean + v.ci95.unwrap_or(0.0)).fold(0.0, f64::max);
    let ymax = match scale {
        Scale::Linear => nice_ceil(top * 1.12),
        // Whole decades, with room above the top bar for its labels.
        Scale::Log { .. } => (scale.y(top) + 0.35).ceil(),
    };
    let ns = data.scenarios.len();
    let k = data.configs.len();
    let log = matches!(scale, Scale::Log { .. });
    let caption = if log { format!("{} (log scale)", panel.title) } else { panel.title.clone() };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .caption(&caption, bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(if ns > 1 { 30 } else { 8 })
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..ns as f64, 0.0..ymax)
        .map_err(draw_err)?;
    let yfmt = |v: &f64| match scale {
        Scale::Log { floor } => fmt_num(floor * 10f64.powf(*v)),
        Scale::Linear if panel.percent => fmt_pct(*v),
        Scale::Linear => fmt_num(*v),
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(if log { ymax as usize + 1 } else { 5 })
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .y_desc(&panel.unit)
        .y_label_formatter(&yfmt)
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(TICK_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    let group = 0.8;
    let bw = group / k as f64;
    let plot = chart.plotting_area();
    let base = plot.get_base_pixel();
    let flat = plot.strip_coord_spec();
    let (pw, ph) = flat.dim_in_pixel();
    let bar_px = pw as f64 / ns as f64 * bw;
    for (si, per_config) in panel.values.iter().enumerate() {
        for (ci, v) in per_config.iter().enumerate() {
            let x0 = si as f64 + (1.0 - group) / 2.0 + ci as f64 * bw;
            let x1 = x0 + bw * 0.9;
            let xm = (x0 + x1) / 2.0;
            let Some(v) = v else {
                // "n/a" only where it fits; narrower bars leave the slot empty.
                if bar_px >= 18.0 {
                    let (px, py) = chart.backend_coord(&(xm, 0.0));
                    let style = text(TICK_SIZE - 2, DARK_GREY).pos(Pos::new(HPos::Center, VPos::Bottom));
                    flat.draw(&Text::new("n/a", (px - base.0, py - base.1 - 3), style)).map_err(draw_err)?;
                }
                continue;
            };
            let c = data.colour(ci);
            plot.draw(&Rectangle::new([(x0, 0.0), (x1, scale.y(v.mean))], c.filled())).map_err(draw_err)?;
            if data.hatched.get(ci) == Some(&true) {
                let a = chart.backend_coord(&(x0, scale.y(v.mean)));
                let b = chart.backend_coord(&(x1, 0.0));
                hatch(&flat, (a.0 - base.0, a.1 - base.1), (b.0 - base.0, b.1 - base.1), 6, WHITE)?;
            }
            let mut label_y = scale.y(v.mean);
            if let Some(ci95) = v.ci95.filter(|c| *c > 0.0) {
                let (lo, hi) = (scale.y((v.mean - ci95).max(0.0)), scale.y(v.mean + ci95));
                let cap = bw * 0.25;
                // Thin on a log scale, where an interval reaching zero runs to the axis.
                let style = OI_BLACK.stroke_width(if log { 1 } else { 2 });
                plot.draw(&PathElement::new(vec![(xm, lo), (xm, hi)], style)).map_err(draw_err)?;
                plot.draw(&PathElement::new(vec![(xm - cap, hi), (xm + cap, hi)], style))
                    .map_err(draw_err)?;
                plot.draw(&PathElement::new(vec![(xm - cap, lo), (xm + cap, lo)], style))
                    .map_err(draw_err)?;
                label_y = hi;
            }
            let mut label_top = 3;
            if bar_px >= 22.0 {
                let (px, py) = chart.backend_coord(&(xm, label_y));
                let label = if panel.percent { fmt_pct(v.mean) } else { fmt_num(v.mean) };
                let size = if bar_px >= 34.0 { TICK_SIZE - 2 } else { TICK_SIZE - 4 };
                let style = text(size, OI_BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
                flat.draw(&Text::new(label, (px - base.0, (py - base.1 - 3).max(12)), style))
                    .map_err(draw_err)?;
                label_top += size as i32 + 2;
            }
            if let Some(missed) = v.missed {
                // A miss is marked in red above the bar: never a silent blank or a short bar.
                let (px, py) = chart.backend_coord(&(xm, label_y));
                // The words only where they fit above the bar: wider, they ran into the next one's.
                let words = format!("×{} missed", fmt_num(missed));
                let short = format!("×{}", fmt_num(missed));
                let fits = |t: &str| f64::from(text_width(t, TICK_SIZE - 2)) <= bar_px * 1.05;
                let y = (py - base.1 - label_top).max(12 + TICK_SIZE as i32);
                if fits(&words) || fits(&short) {
                    let mark = if fits(&words) { words } else { short };
                    let style = bold(TICK_SIZE - 2, OI_VERMILLION).pos(Pos::new(HPos::Center, VPos::Bottom));
                    flat.draw(&Text::new(mark, (px - base.0, y), style)).map_err(draw_err)?;
                } else {
                    // Too narrow for any text without running into the next bar's: a red dot.
                    let r = ((bar_px / 2.0) as i32).clamp(2, 5);
                    flat.draw(&Circle::new((px - base.0, y - r - 1), r, OI_VERMILLION.filled()))
                        .map_err(draw_err)?;
                }
            }
        }
    }
    let present: Vec<f64> = panel.values.iter().flatten().flatten().map(|v| v.mean).collect();
    if present.iter().all(|v| *v == 0.0)
        && !panel.values.iter().flatten().flatten().any(|v| v.missed.is_some())
    {
        let style = text(LABEL_SIZE, DARK_GREY).pos(Pos::new(HPos::Center, VPos::Center));
        let note = if panel.percent { "0% for every configuration" } else { "0 for every configuration" };
        flat.draw(&Text::new(note, (pw as i32 / 2, ph as i32 / 2), style)).map_err(draw_err)?;
    }
    if ns > 1 {
        let label_area = area.clone();
        for (si, s) in data.group_labels().iter().enumerate() {
            let (px, _) = chart.backend_coord(&(si as f64 + 0.5, 0.0));
            let abs = area.get_base_pixel();
            let style = text(TICK_SIZE, OI_BLACK).pos(Pos::new(HPos::Center, VPos::Top));
            let max = (pw as f64 / ns as f64) as i32 - 6;
            label_area
                .draw(&Text::new(
                    fit_text(s, TICK_SIZE, max),
                    (px - abs.0, (base.1 - abs.1) + ph as i32 + 6),
                    style,
                ))
                .map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::data::read_summary;

    #[test]
    fn panels_follow_columns_and_invert_availability() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.csv");
        std::fs::write(
            &p,
            "scenario,policy,false_opens,false_opens_ci95,availability,detection_delay_mean_s\n\
             a,x,1,0.5,0.99,\n\
             a,y,3,,0.9,\n\
             b,x,0,0,1,\n",
        )
        .unwrap();
        let d = ComparisonData::new(&read_summary(&p).unwrap()).unwrap();
        assert_eq!(d.scenarios, vec!["a", "b"]);
        assert_eq!(d.configs, vec!["x", "y"]);
        let cols: Vec<&str> = d.panels.iter().map(|p| p.column.as_str()).collect();
        // The delay column has no value at all: no panel.
        assert_eq!(cols, vec!["false_opens", "availability"]);
        assert_eq!(d.panels[0].values[0][0], Some(Value { mean: 1.0, ci95: Some(0.5), missed: None }));
        assert_eq!(d.panels[0].values[1][1], None);
        let av = d.panels[1].values[0][1].unwrap().mean;
        assert!((av - 0.1).abs() < 1e-12);
        // No seed or replicates columns: the title names the scenarios only.
        assert_eq!(d.context, "2 scenarios");
    }

    #[test]
    fn the_title_names_the_scenario_seed_and_replicates() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.csv");
        let write = |rows: &str| {
            std::fs::write(&p, format!("scenario,policy,seed,replicates,false_opens\n{rows}")).unwrap();
            ComparisonData::new(&read_summary(&p).unwrap()).unwrap().context
        };
        assert_eq!(write("slow,x,7,5,1\nslow,y,7,5,2\n"), "slow · seed 7 · 5 replicates");
        assert_eq!(write("slow,x,7,1,1\nfast,y,7,1,2\n"), "2 scenarios · seed 7 · 1 replicate");
        assert_eq!(write("slow,x,7,3,1\nslow,y,8,5,2\n"), "slow · seeds 7, 8 · 3 or 5 replicates");
    }

    #[test]
    fn misses_are_marked_on_the_delay_panel() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.csv");
        // x caught both incidents in 20 s; y missed both (no plain mean, 7 missed).
        std::fs::write(
            &p,
            "scenario,policy,missed_incidents,detection_delay_mean_s,detection_delay_with_misses_mean_s\n\
             a,x,0,20,20\n\
             a,y,7,,630\n",
        )
        .unwrap();
        let d = ComparisonData::new(&read_summary(&p).unwrap()).unwrap();
        let delay = d.panels.iter().find(|p| p.column == "detection_delay_with_misses_mean_s").unwrap();
        assert_eq!(delay.values[0][0], Some(Value { mean: 20.0, ci95: None, missed: None }));
        assert_eq!(delay.values[0][1], Some(Value { mean: 630.0, ci95: None, missed: Some(7.0) }));
        // An older folder without the column: the plain mean, the miss still marked (bar at 0).
        std::fs::write(&p, "scenario,policy,missed_incidents,detection_delay_mean_s\na,x,0,20\na,y,7,\n")
            .unwrap();
        let d = ComparisonData::new(&read_summary(&p).unwrap()).unwrap();
        let delay = d.panels.iter().find(|p| p.column == "detection_delay_mean_s").unwrap();
        assert_eq!(delay.values[0][1], Some(Value { mean: 0.0, ci95: None, missed: Some(7.0) }));
        let missed = d.panels.iter().find(|p| p.column == "missed_incidents").unwrap();
        assert_eq!(missed.values[0][1].unwrap().missed, None);
    }

    #[test]
    fn beyond_the_maximum_the_cheapest_configurations_are_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        crate::report::charts::fixtures::sweep_dir(dir.path());
        let d = ComparisonData::new(&read_summary(&dir.path().join("summary.csv")).unwrap()).unwrap();
        assert_eq!(d.total_configs, 28);
        assert_eq!(d.configs.len(), COMPARISON_MAX_CONFIGS);
        // The cheapest (cost 20.5) is kept; the dearest (cost 96) is not.
        assert!(d.configs.iter().any(|c| c == "window(rate=0.8,win=10s,min=10)"));
        assert!(!d.configs.iter().any(|c| c == "consecutive(th=12,open=5m)"));
        // Summary order is kept among those shown.
        let summary = read_summary(&dir.path().join("summary.csv")).unwrap();
        let mut order: Vec<String> = Vec::new();
        summary
            .for_each(|r| {
                order.push(r.policy().to_string());
                Ok(())
            })
            .unwrap();
        let positions: Vec<usize> =
            d.configs.iter().map(|c| order.iter().position(|o| o == c).unwrap()).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    }

    #[test]
    fn those_that_qualify_come_first_and_labels_stay_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("summary.csv");
        // Eight configurations on two scenarios; the four cheapest are ruled out on `b`.
        let mut csv = String::from("scenario,policy,cost,feasible\n");
        for (i, cost) in [1, 2, 3, 4, 50, 60, 70, 80].iter().enumerate() {
            let label = format!("consecutive[failure_threshold=10,open_duration={i}s]");
            csv.push_str(&format!("a-long-scenario-name,\"{label}\",{cost},true\n"));
            csv.push_str(&format!("another-long-name,\"{label}\",{cost},{}\n", i >= 4));
        }
        std::fs::write(&p, csv).unwrap();
        let d = ComparisonData::new(&read_summary(&p).unwrap()).unwrap();
        let shown: Vec<&str> = d.configs.iter().map(|c| &c[c.len() - 4..]).collect();
        // The four that qualify and the two cheapest ruled-out ones, in summary order.
        assert_eq!(shown, ["=0s]", "=1s]", "=4s]", "=5s]", "=6s]", "=7s]"]);
        assert_eq!(d.ruled_out, [true, true, false, false, false, false]);
        assert!(d.legend_label(0).ends_with("=0s] (ruled out)"), "{}", d.legend_label(0));
        assert!(d.legend_label(2).ends_with("=4s]"));
        let labels: Vec<String> = (0..6).map(|i| d.legend_label(i)).collect();
        assert!(labels.iter().enumerate().all(|(i, l)| !labels[..i].contains(l)), "{labels:?}");
        // Two long names fit a group each: named; twelve do not: numbered, with a key.
        assert_eq!(d.group_labels(), ["a-long-scenario-name", "another-long-name"]);
        assert_eq!(d.scenario_key(), None);
        let many = ComparisonData { scenarios: (0..12).map(|i| format!("scenario-{i}")).collect(), ..d };
        assert_eq!(many.group_labels()[11], "12");
        assert!(many.scenario_key().unwrap().starts_with("scenarios: 1 scenario-0 · 2 scenario-1 · "));
        // The recommendation and the baseline are always shown, whatever their cost or
        // constraints, and the legend says which is which.
        let baseline = "consecutive[failure_threshold=10,open_duration=7s]";
        let recommended = "consecutive[failure_threshold=10,open_duration=3s]";
        let d =
            ComparisonData::marked(&read_summary(&p).unwrap(), Some(recommended), Some(baseline)).unwrap();
        let shown: Vec<&str> = d.configs.iter().map(|c| &c[c.len() - 4..]).collect();
        assert_eq!(shown, ["=0s]", "=3s]", "=4s]", "=5s]", "=6s]", "=7s]"]);
        assert_eq!(d.roles[1], ["recommended"]);
        assert_eq!(d.roles[5], ["baseline"]);
        assert!(d.legend_label(1).ends_with("(recommended, ruled out)"), "{}", d.legend_label(1));
        assert!(d.legend_label(5).ends_with("=7s] (baseline)"), "{}", d.legend_label(5));
    }
}
