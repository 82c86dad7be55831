//! latency_cdf.png: how requests ended and how long callers waited, per configuration, from
//! latency.csv. A request the breaker refused is answered in ~0 ms, but that is not speed: so
//! the latency curves are of the requests the dependency itself answered, and the requests that
//! were refused, served a fallback or deferred to a retry queue are shown as shares beside them,
//! with the delay of the deferred work. Left: the CDF of answered latency as a share of *all*
//! requests (it levels off at the answered share); middle: the tail of the answered requests on
//! log-log axes (p95 and p99 differences are visible there); right: how requests ended.
//!
//! Lines are drawn as one-pixel paths offset around the curve, never as plotters' wide strokes:
//! a wide stroke is filled as a polygon, and a curve of many sub-pixel steps folds that polygon
//! onto itself, which used to show as dips in a CDF that cannot dip.

use super::ChartError;
use super::data::LatencyHist;
use super::style::*;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The CDF at each bucket's upper edge: (edge ms, share of `total` requests ≤ edge), from
/// cumulative counts, so it never decreases and ends at (sum of counts) / `total`.
pub fn cdf(buckets: &[(f64, f64)], total: f64) -> Vec<(f64, f64)> {
    if total <= 0.0 {
        return Vec::new();
    }
    let mut acc = 0.0;
    buckets
        .iter()
        .map(|(edge, n)| {
            acc += n;
            (*edge, (acc / total).min(1.0))
        })
        .collect()
}

/// A curve in pixels as drawn: repeated pixels dropped, and a CDF's y (pixels grow downwards)
/// held where rounding would make it step back, so the drawn line is monotone too.
pub fn monotone_pixels(points: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(points.len());
    for &(x, y) in points {
        let y = out.last().map_or(y, |l| y.min(l.1));
        let x = out.last().map_or(x, |l| x.max(l.0));
        if out.last() != Some(&(x, y)) {
            out.push((x, y));
        }
    }
    out
}

/// Draws the chart (PNG bytes of [`latency_size`]).
pub fn draw_latency_cdf(hists: &[LatencyHist], layout: Layout) -> Result<Vec<u8>, ChartError> {
    png(latency_size(hists, layout), |root| render_latency_cdf(hists, layout, root))
}

/// Pixel size of the chart: [`LATENCY_SIZE`], or narrow: the legend one entry a row over the
/// three panels one under the other.
pub fn latency_size(hists: &[LatencyHist], layout: Layout) -> (u32, u32) {
    match layout {
        Layout::Wide => LATENCY_SIZE,
        Layout::Narrow => {
            let curves = hists.iter().filter(|h| h.total() > 0.0).count().min(LATENCY_MAX_CONFIGS) as u32;
            (NARROW_WIDTH, TITLE_HEIGHT + 12 + curves.max(1) * 26 + 3 * NARROW_PANEL_HEIGHT)
        }
    }
}

/// Most configurations drawn (beyond the palette, lines are dashed).
pub const LATENCY_MAX_CONFIGS: usize = 12;

type LogChart<'a, Y> = ChartContext<'a, BitMapBackend<'a>, Cartesian2d<LogCoord<f64>, Y>>;

/// Draws curve `i` three pixels thick from one-pixel paths (dashed once the palette is used).
fn draw_curve<Y: Ranged<ValueType = f64>>(
    chart: &LogChart<'_, Y>,
    pts: &[(f64, f64)],
    (colour, dashed): (RGBColor, bool),
    falling: bool,
) -> Result<(), ChartError> {
    let plot = chart.plotting_area();
    let base = plot.get_base_pixel();
    let raw: Vec<(i32, i32)> = pts
        .iter()
        .map(|p| {
            let (x, y) = chart.backend_coord(p);
            // A falling curve (the tail) is monotone the other way: mirror it for the check.
            (x - base.0, if falling { -(y - base.1) } else { y - base.1 })
        })
        .collect();
    let px: Vec<(i32, i32)> =
        monotone_pixels(&raw).into_iter().map(|(x, y)| (x, if falling { -y } else { y })).collect();
    let flat = plot.strip_coord_spec();
    for (dx, dy) in [(0, 0), (0, -1), (0, 1), (-1, 0), (1, 0)] {
        let moved: Vec<(i32, i32)> = px.iter().map(|&(x, y)| (x + dx, y + dy)).collect();
        if dashed {
            // Dashes every 16 pixels along x.
            for seg in moved.chunk_by(|a, b| a.0 / 16 == b.0 / 16).step_by(2) {
                flat.draw(&PathElement::new(seg.to_vec(), colour.stroke_width(1))).map_err(draw_err)?;
            }
        } else {
            flat.draw(&PathElement::new(moved, colour.stroke_width(1))).map_err(draw_err)?;
        }
    }
    Ok(())
}

/// Lowest share drawn on the tail panel.
const TAIL_FLOOR: f64 = 1e-4;

/// Colours of the endings on the split panel: answered, refused, fallback, deferred.
/// Neutral and warm tones, apart from the configurations' palette.
const ENDING_COLOURS: [RGBColor; 4] = [
    RGBColor(0x4D, 0x4D, 0x4D),
    RGBColor(0xC0, 0x39, 0x2B),
    RGBColor(0xE8, 0xC5, 0x47),
    RGBColor(0x9B, 0x8E, 0xC4),
];
/// Names of the endings on the split panel.
const ENDING_NAMES: [&str; 4] =
    ["answered by the dependency", "refused by the breaker", "fallback", "deferred"];

/// A duration in ms for prose: `850 ms`, `12.3 s`, `50.5 min`, `2.1 h`.
fn fmt_ms(ms: f64) -> String {
    match ms {
        m if m >= 7_200_000.0 => format!("{} h", fmt_sig3(m / 3_600_000.0)),
        m if m >= 120_000.0 => format!("{} min", fmt_sig3(m / 60_000.0)),
        m if m >= 1_000.0 => format!("{} s", fmt_sig3(m / 1_000.0)),
        m => format!("{} ms", fmt_sig3(m)),
    }
}

/// Mean and p95 (by bucket edge) of a histogram's values in ms.
fn mean_p95(buckets: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n: f64 = buckets.iter().map(|b| b.1).sum();
    if n <= 0.0 {
        return None;
    }
    // Bucket edges are exclusive upper bounds; the mean uses them too (within 0.8%).
    let mean = buckets.iter().map(|b| b.0 * b.1).sum::<f64>() / n;
    let rank = (0.95 * n).ceil();
    let mut acc = 0.0;
    let p95 = buckets.iter().find(|b| {
        acc += b.1;
        acc >= rank
    });
    Some((mean, p95.map_or(mean, |b| b.0)))
}

/// Draws the chart into `root`.
pub fn render_latency_cdf(hists: &[LatencyHist], layout: Layout, root: &Area) -> Result<(), ChartError> {
    let all: Vec<(&LatencyHist, Vec<(f64, f64)>)> =
        hists.iter().map(|h| (h, cdf(&h.buckets, h.total()))).filter(|c| c.0.total() > 0.0).collect();
    if all.is_empty() {
        return Err(ChartError::NoData("latency.csv has no requests".into()));
    }
    let curves = &all[..all.len().min(LATENCY_MAX_CONFIGS)];
    // Each configuration in its colour on every chart of the page (its family's).
    let colours = label_colours(&curves.iter().map(|c| c.0.policy.as_str()).collect::<Vec<_>>());
    let style = |i: usize| (colours[i], i >= SERIES.len());
    // x range: from the first bucket holding requests to the last edge of any curve.
    let first = curves.iter().filter_map(|c| c.1.first().map(|p| p.0)).fold(f64::INFINITY, f64::min);
    let last = curves.iter().filter_map(|c| c.1.last().map(|p| p.0)).fold(0.0, f64::max);
    let first = if first.is_finite() { first } else { 1.0 };
    let lo = 10f64.powf(first.max(1e-3).log10().floor());
    let mut hi = 10f64.powf(last.max(first).log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let mut sub = "arrival to final answer, retries and backoff included; refused, fallback and deferred \
                   requests are counted apart, never as fast answers"
        .to_string();
    if all.len() > curves.len() {
        sub.push_str(&format!(" · first {} of {} configurations", curves.len(), all.len()));
    }
    draw_title(&title_area, "User-perceived latency and how requests ended", &sub)?;
    let per_row = layout.legend_per_row(4);
    let (legend_area, panels) =
        rest.split_vertically(12 + (curves.len() as u32).div_ceil(per_row as u32) * 26);
    let (x, room) = if layout == Layout::Wide { (30, 330) } else { (16, NARROW_WIDTH as i32 - 70) };
    for (row, chunk) in curves.chunks(per_row).enumerate() {
        let items: Vec<LegendItem> = chunk
            .iter()
            .enumerate()
            .map(|(j, c)| LegendItem {
                label: fit_middle(&c.0.policy, LEGEND_SIZE, room),
                colour: colours[row * per_row + j],
                swatch: line_swatch(row * per_row + j),
            })
            .collect();
        draw_legend_row(&legend_area, &items, x, 4 + row as i32 * 26)?;
    }
    let areas = layout.panels(&panels, &[36, 32, 32]);
    let (left, middle, right) = (&areas[0], &areas[1], &areas[2]);

    let mut cdf_chart = ChartBuilder::on(left)
        .margin(18)
        .caption("Answered by the dependency within x", bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.0)
        .map_err(draw_err)?;
    cdf_chart
        .configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .x_desc("user latency (ms, log scale)")
        .y_desc("share of all requests (%)")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_pct(*v))
        .label_style(text(TICK_SIZE, OI_BLACK))
        .axis_desc_style(text(LABEL_SIZE, OI_BLACK))
        .draw()
        .map_err(draw_err)?;
    for (i, (_, pts)) in curves.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 >= lo && p.0 <= hi).collect();
        // Level off to the right edge: the rest of the requests were never answered.
        if let Some(&(_, y)) = pts.last() {
            pts.push((hi, y));
        }
        draw_curve(&cdf_chart, &pts, style(i), false)?;
    }

    let mut tail = ChartBuilder::on(middle)
        .margin(18)
        .caption("Tail of the answered requests", bold(LABEL_SIZE, OI_BLACK))
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d((lo..hi).log_scale(), (TAIL_FLOOR..1.0).log_scale())
        .map_err(draw_err)?;
    tail.configure_mesh()
        .light_line_style(WHITE)
        .bold_line_style(LIGHT_GREY)
        .x_desc("user latency (ms, log scale)")
        .y_desc("answered slower than x (%, log)")
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
    for (i, (h, _)) in curves.iter().enumerate() {
        let answered: f64 = h.buckets.iter().map(|b| b.1).sum();
        let pts: Vec<(f64, f64)> = cdf(&h.buckets, answered)
            .iter()
            .map(|p| (p.0, 1.0 - p.1))
            .take_while(|p| p.1 >= TAIL_FLOOR)
            .filter(|p| p.0 >= lo && p.0 <= hi)
            .collect();
        draw_curve(&tail, &pts, style(i), true)?;
    }
    draw_split(right, curves, &colours)
}

/// The right panel: per configuration a 100% bar split by how requests ended, with the shares
/// and the delay of the deferred work written out.
fn draw_split(
    area: &Area,
    curves: &[(&LatencyHist, Vec<(f64, f64)>)],
    colours: &[RGBColor],
) -> Result<(), ChartError> {
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    area.draw(&Text::new(
        "How requests ended",
        (w / 2, 22),
        bold(LABEL_SIZE, OI_BLACK).pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(draw_err)?;
    let items: Vec<LegendItem> = ENDING_NAMES
        .iter()
        .zip(ENDING_COLOURS)
        .map(|(n, c)| LegendItem { label: n.to_string(), colour: c, swatch: Swatch::Box })
        .collect();
    draw_legend_row(area, &items[..2], 20, 42)?;
    draw_legend_row(area, &items[2..], 20, 66)?;
    let top = 100;
    let row_h = ((h - top - 20) / curves.len().max(1) as i32).clamp(44, 110);
    let (x0, x1) = (20, w - 30);
    for (i, (hist, _)) in curves.iter().enumerate() {
        let y = top + i as i32 * row_h;
        let total = hist.total();
        let shares: Vec<f64> = if hist.ended.iter().sum::<f64>() > 0.0 {
            hist.ended.iter().map(|n| n / total).collect()
        } else {
            vec![1.0, 0.0, 0.0, 0.0]
        };
        let name = fit_text(&hist.policy, LEGEND_SIZE, x1 - x0);
        area.draw(&Text::new(name, (x0, y), text(LEGEND_SIZE, colours[i]))).map_err(draw_err)?;
        let (by, bh) = (y + 20, 18);
        let mut x = x0 as f64;
        for (k, share) in shares.iter().enumerate() {
            let bw = share * (x1 - x0) as f64;
            if bw > 0.0 {
                let r = [(x.round() as i32, by), ((x + bw).round() as i32, by + bh)];
                area.draw(&Rectangle::new(r, ENDING_COLOURS[k].filled())).map_err(draw_err)?;
            }
            x += bw;
        }
        area.draw(&Rectangle::new([(x0, by), (x1, by + bh)], DARK_GREY.stroke_width(1))).map_err(draw_err)?;
        let words: Vec<String> = ["answered", "refused", "fallback", "deferred"]
            .iter()
            .zip(&shares)
            .filter(|(_, s)| **s > 0.0)
            .map(|(n, s)| format!("{n} {}", fmt_pct(*s)))
            .collect();
        let mut lines = vec![words.join(" · ")];
        if let Some((mean, p95)) = mean_p95(&hist.deferred) {
            lines.push(format!("deferred work done after {} on average (p95 {})", fmt_ms(mean), fmt_ms(p95)));
        }
        for (k, line) in lines.iter().enumerate() {
            let line = fit_text(line, TICK_SIZE - 2, x1 - x0);
            let pos = (x0, by + bh + 4 + k as i32 * (TICK_SIZE as i32 + 2));
            area.draw(&Text::new(line, pos, text(TICK_SIZE - 2, DARK_GREY))).map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(policy: &str, buckets: Vec<(f64, f64)>, ended: [f64; 4]) -> LatencyHist {
        LatencyHist { policy: policy.into(), buckets, ended, deferred: Vec::new() }
    }

    #[test]
    fn cdf_of_answered_levels_off_at_the_answered_share() {
        // 4 answered of 8 requests (4 refused): the CDF ends at 50%, never at 100%.
        let h = hist("p", vec![(10.0, 2.0), (20.0, 1.0), (40.0, 1.0)], [4.0, 4.0, 0.0, 0.0]);
        assert_eq!(cdf(&h.buckets, h.total()), vec![(10.0, 0.25), (20.0, 0.375), (40.0, 0.5)]);
        // Without count rows (an older latency.csv) the histogram is the whole.
        let old = hist("p", vec![(10.0, 2.0), (20.0, 2.0)], [0.0; 4]);
        assert_eq!(cdf(&old.buckets, old.total()), vec![(10.0, 0.5), (20.0, 1.0)]);
        assert!(cdf(&[(10.0, 0.0)], 0.0).is_empty());
    }

    #[test]
    fn the_drawn_cdf_never_dips() {
        // Pixels as rounding may give them: a step back up in y (down the chart) is held.
        let px = [(0, 100), (0, 100), (1, 98), (2, 99), (2, 97), (3, 97), (5, 60)];
        let out = monotone_pixels(&px);
        assert_eq!(out, vec![(0, 100), (1, 98), (2, 98), (2, 97), (3, 97), (5, 60)]);
        assert!(out.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 <= w[0].1));
        // A real histogram's CDF is monotone share by share.
        let buckets: Vec<(f64, f64)> =
            (1..500).map(|i| (i as f64 * 1.01, ((i * 7919) % 13) as f64)).collect();
        let c = cdf(&buckets, 10_000.0);
        assert!(c.windows(2).all(|w| w[1].1 >= w[0].1 && w[1].0 > w[0].0));
    }

    #[test]
    fn many_configurations_draw_dashed_lines_and_empty_input_is_an_error() {
        let hists: Vec<LatencyHist> = (0..14)
            .map(|i| LatencyHist {
                policy: format!("config-{i}"),
                buckets: vec![(5.0, 10.0), (50.0, 80.0 + i as f64), (500.0, 5.0 + i as f64), (5000.0, 1.0)],
                ended: [96.0 + 2.0 * i as f64, 10.0, 5.0, 3.0],
                deferred: vec![(60_000.0, 2.0), (3_000_000.0, 1.0)],
            })
            .collect();
        let rgb = render_rgb(LATENCY_SIZE, |root| render_latency_cdf(&hists, Layout::Wide, root)).unwrap();
        assert!(rgb.chunks(3).any(|p| p != [255, 255, 255]));
        let none = vec![hist("p", vec![(10.0, 0.0)], [0.0; 4])];
        let err = render_rgb(LATENCY_SIZE, |root| render_latency_cdf(&none, Layout::Wide, root)).unwrap_err();
        assert!(err.to_string().contains("no requests"), "{err}");
        assert_eq!(mean_p95(&[(60_000.0, 2.0), (3_000_000.0, 1.0)]), Some((1_040_000.0, 3_000_000.0)));
        assert_eq!(fmt_ms(3_030_000.0), "50.5 min");
    }
}
