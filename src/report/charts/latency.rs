//! latency_cdf.png: the distribution of user-perceived latency (arrival to final answer,
//! retries and backoff included) per configuration, from latency.csv's histograms. Left: the
//! CDF on a log latency axis; right: the tail (share of requests slower than x) on log-log axes,
//! where p95 and p99 differences are visible.

use super::ChartError;
use super::data::LatencyHist;
use super::style::*;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;

/// The CDF at each bucket's upper edge: (edge ms, share of requests ≤ edge).
pub fn cdf(h: &LatencyHist) -> Vec<(f64, f64)> {
    let total: f64 = h.buckets.iter().map(|b| b.1).sum();
    if total <= 0.0 {
        return Vec::new();
    }
    let mut acc = 0.0;
    h.buckets
        .iter()
        .map(|(edge, n)| {
            acc += n;
            (*edge, (acc / total).min(1.0))
        })
        .collect()
}

/// Draws the chart (PNG bytes of [`LATENCY_SIZE`]).
pub fn draw_latency_cdf(hists: &[LatencyHist]) -> Result<Vec<u8>, ChartError> {
    png(LATENCY_SIZE, |root| render_latency_cdf(hists, root))
}

/// Most configurations drawn (beyond the palette, lines are dashed).
pub const LATENCY_MAX_CONFIGS: usize = 12;

type LogChart<'a, Y> = ChartContext<'a, BitMapBackend<'a>, Cartesian2d<LogCoord<f64>, Y>>;

/// Draws curve `i`: solid in its palette colour, dashed once the palette has been used.
fn draw_curve<Y: Ranged<ValueType = f64>>(
    chart: &mut LogChart<'_, Y>,
    pts: Vec<(f64, f64)>,
    i: usize,
) -> Result<(), ChartError> {
    let style = series_colour(i).stroke_width(3);
    if i >= SERIES.len() {
        chart.draw_series(DashedLineSeries::new(pts, 10, 6, style)).map_err(draw_err)?;
    } else {
        chart.draw_series(LineSeries::new(pts, style)).map_err(draw_err)?;
    }
    Ok(())
}

/// Lowest share drawn on the tail panel.
const TAIL_FLOOR: f64 = 1e-4;

/// Draws the chart into `root`.
pub fn render_latency_cdf(hists: &[LatencyHist], root: &Area) -> Result<(), ChartError> {
    let all: Vec<(&str, Vec<(f64, f64)>)> =
        hists.iter().map(|h| (h.policy.as_str(), cdf(h))).filter(|c| !c.1.is_empty()).collect();
    if all.is_empty() {
        return Err(ChartError::NoData("latency.csv has no requests".into()));
    }
    let curves = &all[..all.len().min(LATENCY_MAX_CONFIGS)];
    // x range: from the first bucket holding requests to the edge where every curve is at 1.
    let first = curves
        .iter()
        .filter_map(|c| c.1.iter().find(|p| p.1 > 0.0).map(|p| p.0))
        .fold(f64::INFINITY, f64::min);
    let last = curves.iter().filter_map(|c| c.1.iter().find(|p| p.1 >= 1.0).map(|p| p.0)).fold(0.0, f64::max);
    let lo = 10f64.powf(first.max(1e-3).log10().floor());
    let mut hi = 10f64.powf(last.max(first).log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub =
        "arrival to final answer, retries, backoff and fallbacks included; from histogram bucket edges"
            .to_string();
    if all.len() > curves.len() {
        sub.push_str(&format!(" · first {} of {} configurations", curves.len(), all.len()));
    }
    draw_title(&title_area, "User-perceived latency", &sub)?;
    let (legend_area, panels) = rest.split_vertically(12 + (curves.len() as u32).div_ceil(4) * 26);
    for (row, chunk) in curves.chunks(4).enumerate() {
        let items: Vec<LegendItem> = chunk
            .iter()
            .enumerate()
            .map(|(j, c)| LegendItem {
                label: fit_text(c.0, LEGEND_SIZE, 330),
                colour: series_colour(row * 4 + j),
                swatch: line_swatch(row * 4 + j),
            })
            .collect();
        draw_legend_row(&legend_area, &items, 30, 4 + row as i32 * 26)?;
    }
    let (w, _) = panels.dim_in_pixel();
    let (left, right) = panels.split_horizontally(w / 2);

    let mut cdf_chart = ChartBuilder::on(&left)
        .margin(18)
        .caption("Cumulative distribution", bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
        .map_err(draw_err)?;
    cdf_chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .x_desc("user latency (ms, log scale)")
        .y_desc("requests answered within x (%)")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_pct(*v))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    for (i, (_, pts)) in curves.iter().enumerate() {
        let pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 >= lo && p.0 <= hi).collect();
        cdf_chart.draw_series(LineSeries::new(pts, series_colour(i).stroke_width(3))).map_err(draw_err)?;
    }

    let mut tail = ChartBuilder::on(&right)
        .margin(18)
        .caption("Tail: requests slower than x", bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), (TAIL_FLOOR..1.0).log_scale())
        .map_err(draw_err)?;
    tail.configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .x_desc("user latency (ms, log scale)")
        .y_desc("requests slower than x (%, log scale)")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_pct(*v))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    for (q, label) in [(0.5, "p50"), (0.05, "p95"), (0.01, "p99"), (0.001, "p99.9")] {
        tail.draw_series(LineSeries::new(vec![(lo, q), (hi, q)], DARK_GREY.mix(0.6).stroke_width(1)))
            .map_err(draw_err)?;
        let (px, py) = tail.backend_coord(&(hi, q));
        let base = tail.plotting_area().get_base_pixel();
        tail.plotting_area()
            .strip_coord_spec()
            .draw(&Text::new(label, (px - base.0 - 50, py - base.1 - 18), text(TICK_SIZE, DARK_GREY)))
            .map_err(draw_err)?;
    }
    for (i, (_, pts)) in curves.iter().enumerate() {
        let pts: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.0, 1.0 - p.1))
            .take_while(|p| p.1 >= TAIL_FLOOR)
            .filter(|p| p.0 >= lo && p.0 <= hi)
            .collect();
        draw_curve(&mut tail, pts, i)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_accumulates_to_one() {
        let h = LatencyHist { policy: "p".into(), buckets: vec![(10.0, 2.0), (20.0, 1.0), (40.0, 1.0)] };
        assert_eq!(cdf(&h), vec![(10.0, 0.5), (20.0, 0.75), (40.0, 1.0)]);
        let empty = LatencyHist { policy: "p".into(), buckets: vec![(10.0, 0.0)] };
        assert!(cdf(&empty).is_empty());
    }

    #[test]
    fn many_configurations_draw_dashed_lines_and_empty_input_is_an_error() {
        let hists: Vec<LatencyHist> = (0..14)
            .map(|i| LatencyHist {
                policy: format!("config-{i}"),
                buckets: vec![(5.0, 10.0), (50.0, 80.0 + i as f64), (500.0, 5.0 + i as f64), (5000.0, 1.0)],
            })
            .collect();
        let rgb = render_rgb(LATENCY_SIZE, |root| render_latency_cdf(&hists, root)).unwrap();
        assert!(rgb.chunks(3).any(|p| p != [255, 255, 255]));
        let none = vec![LatencyHist { policy: "p".into(), buckets: vec![(10.0, 0.0)] }];
        let err = render_rgb(LATENCY_SIZE, |root| render_latency_cdf(&none, root)).unwrap_err();
        assert!(err.to_string().contains("no requests"), "{err}");
    }
}
