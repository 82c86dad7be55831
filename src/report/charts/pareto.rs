//! pareto.png: two scatter panels of a sweep's configurations, one marker per configuration
//! coloured by policy family. Left: mean detection delay (a miss counted as the incident's
//! duration plus the tolerance) against false opens; right: availability against wasted quota.
//! Configurations ruled out by a constraint are hollow and never on a front: each panel rings
//! and joins the two-metric front among the configurations that qualify (those a reviewer could
//! deploy), so a ruled-out configuration can neither look chosen nor make a qualifying one look
//! beaten. The recommended one is labelled. The no-breaker baseline (`none`) does not stretch
//! the axes: beyond them it is drawn at the edge with its value.

use super::ChartError;
use super::data::{Summary, by_config, mean_of};
use super::style::*;
use crate::sweep::pareto::{Direction, front};
use plotters::prelude::*;
use std::collections::HashSet;

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

/// One panel's axes and points.
#[derive(Clone, Debug, PartialEq)]
pub struct PanelView {
    /// x axis maximum (from 0).
    pub x_max: f64,
    /// y axis range.
    pub y_range: (f64, f64),
    /// Points with both values, in summary order.
    pub points: Vec<Placed>,
    /// Configurations without a value on x or y (not drawn).
    pub missing: usize,
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
    /// Aggregates `summary` per configuration: each metric is the mean over the scenarios where
    /// it has a value, as pareto.csv's `all` rows average it.
    pub fn new(summary: &Summary, recommended: Option<String>) -> ParetoData {
        let mut scenarios: HashSet<&str> = HashSet::new();
        let mut families: Vec<String> = Vec::new();
        for r in &summary.rows {
            scenarios.insert(&r.scenario);
            if !families.iter().any(|f| *f == *r.family) {
                families.push(r.family.to_string());
            }
        }
        let points = by_config(summary.rows.iter())
            .iter()
            .map(|rows| {
                let mean = |m: &str| mean_of(rows, m);
                Point {
                    label: rows[0].policy.clone(),
                    family: rows[0].family.to_string(),
                    false_opens: mean("false_opens"),
                    delay_s: mean("detection_delay_with_misses_mean_s")
                        .or_else(|| mean("detection_delay_mean_s")),
                    wasted: mean("wasted_quota"),
                    availability: mean("availability"),
                    feasible: rows.iter().all(|r| r.feasible != Some(false)),
                }
            })
            .collect();
        ParetoData { points, families, recommended, scenarios: scenarios.len() }
    }

    fn colour(&self, family: &str) -> RGBColor {
        series_colour(self.families.iter().position(|f| f == family).unwrap_or(0))
    }

    /// Panel `panel` (0: delay vs false opens, 1: availability vs wasted quota): its axes,
    /// from every point but the baseline's (unless nothing else has values), and each point's
    /// marks: hollow when ruled out, ringed when on the front among those that qualify.
    pub fn view(&self, panel: usize) -> PanelView {
        let value = |p: &Point| -> Option<(f64, f64)> {
            if panel == 0 { Some((p.false_opens?, p.delay_s?)) } else { Some((p.wasted?, p.availability?)) }
        };
        let with: Vec<(usize, f64, f64)> =
            self.points.iter().enumerate().filter_map(|(i, p)| value(p).map(|(x, y)| (i, x, y))).collect();
        let scaled: Vec<&(usize, f64, f64)> =
            with.iter().filter(|(i, _, _)| self.points[*i].family != BASELINE_FAMILY).collect();
        let scaled = if scaled.is_empty() { with.iter().collect() } else { scaled };
        let x_max = nice_ceil(scaled.iter().map(|p| p.1).fold(0.0, f64::max) * 1.08);
        let y_range = if panel == 1 {
            let mn = scaled.iter().map(|p| p.2).fold(1.0, f64::min);
            let lo = (((mn - (1.0 - mn) * 0.15) * 100.0).floor() / 100.0).clamp(0.0, 0.99);
            (lo, 1.0 + (1.0 - lo) * 0.05)
        } else {
            (0.0, nice_ceil(scaled.iter().map(|p| p.2).fold(0.0, f64::max) * 1.08))
        };
        // The front among the qualifying configurations only (x lower is better; y lower on
        // the delay panel, higher on the availability one).
        let y_dir = if panel == 1 { Direction::Maximise } else { Direction::Minimise };
        let qualifying: Vec<Vec<Option<f64>>> = with
            .iter()
            .map(|&(i, x, y)| if self.points[i].feasible { vec![Some(x), Some(y)] } else { vec![None, None] })
            .collect();
        let on_front = front(&qualifying, &[Direction::Minimise, y_dir]);
        let points = with
            .iter()
            .enumerate()
            .map(|(k, &(index, x, y))| Placed {
                index,
                x,
                y,
                hollow: !self.points[index].feasible,
                ringed: on_front.binary_search(&k).is_ok(),
                off_scale: x > x_max || y < y_range.0 || y > y_range.1,
            })
            .collect();
        PanelView { x_max, y_range, points, missing: self.points.len() - with.len() }
    }
}

/// Draws the chart to `path` (PNG of [`PARETO_SIZE`]).
pub fn draw_pareto(data: &ParetoData) -> Result<Vec<u8>, ChartError> {
    png(PARETO_SIZE, |root| render_pareto(data, root))
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
pub fn render_pareto(data: &ParetoData, root: &Area) -> Result<(), ChartError> {
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = vec![format!("{} configurations", data.points.len())];
    if data.scenarios > 1 {
        sub.push(format!("metrics averaged over {} scenarios", data.scenarios));
    }
    let ruled_out = data.points.iter().filter(|p| !p.feasible).count();
    if ruled_out > 0 {
        sub.push(format!("{ruled_out} ruled out by the constraints (hollow)"));
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
    if ruled_out > 0 {
        items.push(LegendItem { label: "hollow: ruled out".into(), colour: GREY, swatch: Swatch::Hollow });
    }
    if data.points.iter().any(|p| p.feasible) {
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
    draw_legend_row(&legend_area, &items, 30, 8)?;
    let (w, _) = panels.dim_in_pixel();
    let (left, right) = panels.split_horizontally(w / 2);
    draw_panel(
        &left,
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
        &right,
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
            let label = fit_text(&value, LEGEND_SIZE, 360);
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
    if let Some(rec) = &data.recommended
        && let Some(p) = view.points.iter().find(|p| &data.points[p.index].label == rec)
    {
        let (px, py) = chart.backend_coord(&(p.x.min(xmax), p.y.clamp(ylo, yhi)));
        let (cx, cy) = (px - base.0, py - base.1);
        // A diamond, not a ring: the recommendation need not be on a panel's front.
        let r = 15;
        let diamond = vec![(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy), (cx, cy - r)];
        flat.draw(&PathElement::new(diamond, OI_BLACK.stroke_width(3))).map_err(draw_err)?;
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
    fn ruled_out_is_hollow_and_only_the_front_among_those_that_qualify_is_ringed() {
        use crate::report::charts::data::{Table, summary};
        let table = |text: &str| Table::from_reader(std::path::Path::new("t.csv"), text.as_bytes()).unwrap();
        // `fast` beats everything on both panels but breaks a constraint on scenario a; `none`
        // is the ruled-out baseline far off the scale.
        let s = summary(&table(
            "scenario,config_id,policy,family,false_opens,detection_delay_with_misses_mean_s,\
             wasted_quota,availability,feasible\n\
             a,0,fast,consecutive,0,50,100,0.99,false\n\
             b,0,fast,consecutive,0,70,100,0.99,true\n\
             a,1,slow,windowed,1,400,200,0.95,true\n\
             b,1,slow,windowed,1,400,200,0.95,true\n\
             a,2,mid,windowed,0.5,500,150,0.93,true\n\
             a,3,worse,windowed,1,600,300,0.94,true\n\
             a,4,none,none,0,1000,18000,0.85,false\n",
        ))
        .unwrap();
        let d = ParetoData::new(&s, Some("slow".into()));
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
        let none = summary(&table(
            "scenario,config_id,policy,family,false_opens,detection_delay_with_misses_mean_s,\
             wasted_quota,availability,feasible\n\
             a,0,fast,consecutive,0,50,100,0.99,false\n\
             a,1,slow,windowed,1,400,200,0.95,false\n",
        ))
        .unwrap();
        let d = ParetoData::new(&none, None);
        assert!(d.view(0).points.iter().chain(&d.view(1).points).all(|p| p.hollow && !p.ringed));
    }
}
