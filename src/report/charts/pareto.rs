//! pareto.png: two scatter panels of a sweep's configurations, one marker per configuration
//! coloured by policy family. Left: mean detection delay against false opens; right:
//! availability against wasted quota. Each panel draws its own two-metric front; configurations
//! on the sweep's Pareto front (pareto.csv) are ringed and the recommended one is labelled.

use super::ChartError;
use super::data::Summary;
use super::style::*;
use plotters::prelude::*;

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
    /// On the sweep's Pareto front (pareto.csv).
    pub on_front: bool,
}

/// Everything the Pareto chart draws.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoData {
    /// Configurations in summary order.
    pub points: Vec<Point>,
    /// Families in order of first appearance (colour index).
    pub families: Vec<String>,
    /// Label of the recommended configuration, if any.
    pub recommended: Option<String>,
    /// Number of scenarios averaged.
    pub scenarios: usize,
}

impl ParetoData {
    /// Aggregates `summary` per configuration; `front` (pareto.csv) marks front membership.
    pub fn new(summary: &Summary, front: Option<&Summary>, recommended: Option<String>) -> ParetoData {
        let mut ids: Vec<&str> = Vec::new();
        let mut scenarios: Vec<&str> = Vec::new();
        let mut families: Vec<String> = Vec::new();
        for r in &summary.rows {
            if !ids.contains(&r.config_id.as_str()) {
                ids.push(&r.config_id);
            }
            if !scenarios.contains(&r.scenario.as_str()) {
                scenarios.push(&r.scenario);
            }
            if !families.contains(&r.family) {
                families.push(r.family.clone());
            }
        }
        let points = ids
            .iter()
            .map(|id| {
                let rows: Vec<_> = summary.rows.iter().filter(|r| r.config_id == *id).collect();
                let mean = |m: &str| {
                    let v: Vec<f64> = rows.iter().filter_map(|r| r.metric(m)).collect();
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                };
                let on_front = front
                    .is_some_and(|f| f.rows.iter().any(|r| r.config_id == *id || r.policy == rows[0].policy));
                Point {
                    label: rows[0].policy.clone(),
                    family: rows[0].family.clone(),
                    false_opens: mean("false_opens"),
                    delay_s: mean("detection_delay_with_misses_mean_s")
                        .or_else(|| mean("detection_delay_mean_s")),
                    wasted: mean("wasted_quota"),
                    availability: mean("availability"),
                    on_front,
                }
            })
            .collect();
        ParetoData { points, families, recommended, scenarios: scenarios.len() }
    }

    fn colour(&self, family: &str) -> RGBColor {
        series_colour(self.families.iter().position(|f| f == family).unwrap_or(0))
    }
}

/// The two-metric front: points not beaten on both `x` (lower better) and `y` (lower better
/// unless `y_higher`), sorted by x; ties broken by label for determinism.
pub fn front_2d(pts: &[(f64, f64, usize)], y_higher: bool) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64, usize)> = pts.to_vec();
    let yk = |y: f64| if y_higher { -y } else { y };
    v.sort_by(|a, b| a.0.total_cmp(&b.0).then(yk(a.1).total_cmp(&yk(b.1))).then(a.2.cmp(&b.2)));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (x, y, _) in v {
        if out.last().is_none_or(|l| yk(y) < yk(l.1)) {
            out.push((x, y));
        }
    }
    out
}

/// Draws the chart to `path` (PNG of [`PARETO_SIZE`]).
pub fn draw_pareto(data: &ParetoData) -> Result<Vec<u8>, ChartError> {
    png(PARETO_SIZE, |root| render_pareto(data, root))
}

struct Panel<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    x: fn(&Point) -> Option<f64>,
    y: fn(&Point) -> Option<f64>,
    y_higher: bool,
    y_pct: bool,
}

/// Draws the chart into `root`.
pub fn render_pareto(data: &ParetoData, root: &Area) -> Result<(), ChartError> {
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = vec![format!("{} configurations", data.points.len())];
    if data.scenarios > 1 {
        sub.push(format!("metrics averaged over {} scenarios", data.scenarios));
    }
    if let Some(r) = &data.recommended {
        sub.push(format!("recommended: {r}"));
    }
    draw_title(&title_area, "Trade-offs between configurations (Pareto view)", &sub.join(" · "))?;
    let (legend_area, panels) = rest.split_vertically(40);
    let mut items: Vec<LegendItem> = data
        .families
        .iter()
        .map(|f| LegendItem { label: f.clone(), colour: data.colour(f), swatch: Swatch::Dot })
        .collect();
    items.push(LegendItem { label: "front of this panel".into(), colour: DARK_GREY, swatch: Swatch::Line });
    if data.points.iter().any(|p| p.on_front) {
        items.push(LegendItem {
            label: "ringed: on the sweep's Pareto front".into(),
            colour: OI_BLACK,
            swatch: Swatch::Ring,
        });
    }
    draw_legend_row(&legend_area, &items, 30, 8)?;
    let (w, _) = panels.dim_in_pixel();
    let (left, right) = panels.split_horizontally(w / 2);
    draw_panel(
        &left,
        data,
        &Panel {
            title: "Detection delay vs false opens",
            x_desc: "false opens (count, mean per run)",
            y_desc: "detection delay, mean (s; a miss counts its duration)",
            x: |p| p.false_opens,
            y: |p| p.delay_s,
            y_higher: false,
            y_pct: false,
        },
    )?;
    draw_panel(
        &right,
        data,
        &Panel {
            title: "Availability vs wasted quota",
            x_desc: "wasted quota (failed attempts sent upstream)",
            y_desc: "availability (%)",
            x: |p| p.wasted,
            y: |p| p.availability,
            y_higher: true,
            y_pct: true,
        },
    )
}

fn draw_panel(area: &Area, data: &ParetoData, panel: &Panel) -> Result<(), ChartError> {
    let pts: Vec<(f64, f64, usize)> =
        data.points.iter().enumerate().filter_map(|(i, p)| Some(((panel.x)(p)?, (panel.y)(p)?, i))).collect();
    let missing = data.points.len() - pts.len();
    let xmax = nice_ceil(pts.iter().map(|p| p.0).fold(0.0, f64::max) * 1.08);
    let (ylo, yhi) = if panel.y_pct {
        let mn = pts.iter().map(|p| p.1).fold(1.0, f64::min);
        let lo = ((mn - (1.0 - mn) * 0.15) * 100.0).floor() / 100.0;
        let lo = lo.clamp(0.0, 0.99);
        (lo, 1.0 + (1.0 - lo) * 0.05)
    } else {
        (0.0, nice_ceil(pts.iter().map(|p| p.1).fold(0.0, f64::max) * 1.08))
    };
    let caption = if missing > 0 {
        format!("{} ({} without a value not shown)", panel.title, missing)
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
    let front = front_2d(&pts, panel.y_higher);
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
    for (x, y, i) in &pts {
        let p = &data.points[*i];
        let c = data.colour(&p.family);
        chart
            .draw_series(std::iter::once(Circle::new((*x, *y), 6, c.mix(0.85).filled())))
            .map_err(draw_err)?;
        if p.on_front {
            chart
                .draw_series(std::iter::once(Circle::new((*x, *y), 9, OI_BLACK.stroke_width(2))))
                .map_err(draw_err)?;
        }
    }
    if let Some(rec) = &data.recommended
        && let Some((x, y, _)) = pts.iter().find(|(_, _, i)| &data.points[*i].label == rec)
    {
        let (px, py) = chart.backend_coord(&(*x, *y));
        let base = chart.plotting_area().get_base_pixel();
        let (pw, _) = chart.plotting_area().dim_in_pixel();
        let flat = chart.plotting_area().strip_coord_spec();
        let (cx, cy) = (px - base.0, py - base.1);
        flat.draw(&Circle::new((cx, cy), 14, OI_BLACK.stroke_width(3))).map_err(draw_err)?;
        let label = format!("recommended: {}", fit_text(rec, LEGEND_SIZE, 320));
        let tw = text_width(&label, LEGEND_SIZE);
        // Put the label to the right unless it would leave the panel; above unless at the top.
        let tx = if cx + 22 + tw < pw as i32 { cx + 22 } else { (cx - 22 - tw).max(2) };
        let ty = if cy > 40 { cy - 34 } else { cy + 20 };
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
        flat.draw(&Text::new(label, (tx, ty), bold(LEGEND_SIZE, OI_BLACK))).map_err(draw_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_keeps_only_undominated_points() {
        let pts = [(0.0, 10.0, 0), (1.0, 5.0, 1), (1.0, 7.0, 2), (2.0, 6.0, 3), (3.0, 1.0, 4)];
        assert_eq!(front_2d(&pts, false), vec![(0.0, 10.0), (1.0, 5.0), (3.0, 1.0)]);
        let av = [(10.0, 0.9, 0), (20.0, 0.95, 1), (15.0, 0.8, 2), (30.0, 0.99, 3)];
        assert_eq!(front_2d(&av, true), vec![(10.0, 0.9), (20.0, 0.95), (30.0, 0.99)]);
    }
}
