//! The look shared by every chart: the embedded font, fixed pixel sizes, the colour-blind-safe
//! palette (Okabe–Ito), a perceptually uniform colour scale (viridis), number formatting, and
//! the bitmap every chart is drawn on (plotters' RGB backend) with its PNG encoding (the `png`
//! crate); charts are bytes in memory, the output folder writes them.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::sync::OnceLock;

/// Name under which the embedded font is registered with plotters (never a system font name,
/// so nothing can silently fall back to fontconfig).
pub const FONT_FAMILY: &str = "breakerlab-dejavu-sans";
/// DejaVu Sans regular, compiled into the binary (licence: assets/fonts/LICENSE-DejaVu.txt).
pub const FONT_REGULAR: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
/// DejaVu Sans bold, compiled into the binary.
pub const FONT_BOLD: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf");

/// Chart title size (px).
pub const TITLE_SIZE: u32 = 28;
/// Panel caption and axis description size (px).
pub const LABEL_SIZE: u32 = 18;
/// Tick label size (px).
pub const TICK_SIZE: u32 = 15;
/// Legend and annotation size (px).
pub const LEGEND_SIZE: u32 = 15;
/// Height of the title strip at the top of every chart (px).
pub const TITLE_HEIGHT: u32 = 64;

/// Timeline width (px).
pub const TIMELINE_WIDTH: u32 = 1600;
/// Height of the dependency health panel (px).
pub const TIMELINE_HEALTH_HEIGHT: u32 = 340;
/// Height of the state legend strip above the bands (px).
pub const TIMELINE_BAND_LEGEND_HEIGHT: u32 = 34;
/// Height of one configuration's state band, its name included (px).
pub const TIMELINE_BAND_HEIGHT: u32 = 58;
/// Height of one breaker's lane when a configuration has several breakers (client instances
/// or providers): its entry ticks above its state strip (px).
pub const TIMELINE_LANE_HEIGHT: u32 = 24;
/// Most lanes one configuration draws (a fleet of hundreds would not be readable).
pub const TIMELINE_MAX_LANES: usize = 24;
/// Height of one line of the incident key under the health panel (px).
pub const TIMELINE_KEY_LINE_HEIGHT: u32 = 22;
/// Most lines of the incident key.
pub const TIMELINE_MAX_KEY_LINES: usize = 4;
/// Height of the traffic panel when one configuration is drawn (px).
pub const TIMELINE_TRAFFIC_HEIGHT: u32 = 300;
/// Height of each traffic panel when several configurations are drawn (px).
pub const TIMELINE_TRAFFIC_MULTI_HEIGHT: u32 = 190;
/// Height of the time axis strip at the bottom (tick labels and description) (px).
pub const TIMELINE_AXIS_HEIGHT: u32 = 70;
/// Most configurations one timeline draws (more would not be readable).
pub const TIMELINE_MAX_CONFIGS: usize = 8;
/// Most display bins across the time axis: finer bins are merged so each is ≥ 2 px wide.
pub const TIMELINE_MAX_BINS: usize = 600;
/// Left label area shared by every timeline panel so the time axes line up (px).
pub const TIMELINE_LEFT_AREA: u32 = 100;
/// Right label area shared by every timeline panel (the error-rate axis) (px).
pub const TIMELINE_RIGHT_AREA: u32 = 90;

/// Heatmap size (px).
pub const HEATMAP_SIZE: (u32, u32) = (1200, 900);
/// Pareto chart size: two panels side by side (px).
pub const PARETO_SIZE: (u32, u32) = (1600, 800);
/// Comparison chart width (px).
pub const COMPARISON_WIDTH: u32 = 1600;
/// Height of one row of metric panels in the comparison chart (px).
pub const COMPARISON_ROW_HEIGHT: u32 = 300;
/// Metric panels per row in the comparison chart.
pub const COMPARISON_COLUMNS: usize = 3;
/// Most configurations one comparison chart draws.
pub const COMPARISON_MAX_CONFIGS: usize = 6;
/// Latency CDF size: CDF and tail panels side by side (px).
pub const LATENCY_SIZE: (u32, u32) = (1600, 760);

/// Width of a chart's narrow rendering (px): what a phone-width page (about 400 CSS px) shows
/// instead of the full-size PNG, so its text is drawn at about three quarters of its size
/// rather than a quarter.
pub const NARROW_WIDTH: u32 = 500;
/// Height of one panel of a narrow rendering, its panels stacked one under the other (px).
pub const NARROW_PANEL_HEIGHT: u32 = 420;

/// How a chart is laid out: `Wide`, the PNG file and the page at desktop width; `Narrow`, the
/// rendering a phone-width page shows: [`NARROW_WIDTH`] px wide, panels stacked in one column,
/// legends one entry a row, the same type sizes.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// The full-size chart.
    #[default]
    Wide,
    /// The phone-width chart.
    Narrow,
}

impl Layout {
    /// Legend entries per row: `wide` of them, or one on a narrow chart.
    pub fn legend_per_row(self, wide: usize) -> usize {
        match self {
            Layout::Wide => wide.max(1),
            Layout::Narrow => 1,
        }
    }

    /// Splits `area` into one panel per share: side by side at those shares of the width
    /// (percent, the last one taking the rest), or one under the other in equal heights.
    pub fn panels<'a>(self, area: &Area<'a>, shares: &[u32]) -> Vec<Area<'a>> {
        let (w, h) = area.dim_in_pixel();
        let n = shares.len().max(1) as u32;
        let mut out = Vec::with_capacity(shares.len());
        let mut rest = area.clone();
        for (i, share) in shares.iter().enumerate() {
            if i + 1 == shares.len() {
                out.push(rest);
                break;
            }
            let (first, after) = match self {
                Layout::Wide => rest.split_horizontally(w * share / 100),
                Layout::Narrow => rest.split_vertically(h / n),
            };
            out.push(first);
            rest = after;
        }
        out
    }
}

/// Okabe–Ito black.
pub const OI_BLACK: RGBColor = RGBColor(0x00, 0x00, 0x00);
/// Okabe–Ito orange.
pub const OI_ORANGE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
/// Okabe–Ito sky blue.
pub const OI_SKY_BLUE: RGBColor = RGBColor(0x56, 0xB4, 0xE9);
/// Okabe–Ito bluish green.
pub const OI_GREEN: RGBColor = RGBColor(0x00, 0x9E, 0x73);
/// Okabe–Ito yellow.
pub const OI_YELLOW: RGBColor = RGBColor(0xF0, 0xE4, 0x42);
/// Okabe–Ito blue.
pub const OI_BLUE: RGBColor = RGBColor(0x00, 0x72, 0xB2);
/// Okabe–Ito vermillion.
pub const OI_VERMILLION: RGBColor = RGBColor(0xD5, 0x5E, 0x00);
/// Okabe–Ito reddish purple.
pub const OI_PURPLE: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
/// Mid grey for "no data" and infeasible cells.
pub const GREY: RGBColor = RGBColor(0x9A, 0x9A, 0x9A);
/// Light grey for grids and frames.
pub const LIGHT_GREY: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
/// Dark grey for secondary text.
pub const DARK_GREY: RGBColor = RGBColor(0x44, 0x44, 0x44);

/// Colours for categorical series (configurations, families), in order of use. Yellow comes
/// last among the colours because it is faint on white.
pub const SERIES: [RGBColor; 8] =
    [OI_BLUE, OI_ORANGE, OI_GREEN, OI_VERMILLION, OI_PURPLE, OI_SKY_BLUE, OI_BLACK, OI_YELLOW];

/// Breaker state colour: closed.
pub const STATE_CLOSED: RGBColor = OI_GREEN;
/// Breaker state colour: half-open.
pub const STATE_HALF_OPEN: RGBColor = OI_YELLOW;
/// Breaker state colour: open.
pub const STATE_OPEN: RGBColor = OI_VERMILLION;

/// Traffic colours: offered, admitted, rejected, failed.
pub const TRAFFIC_OFFERED: RGBColor = OI_BLACK;
/// Admitted requests.
pub const TRAFFIC_ADMITTED: RGBColor = OI_BLUE;
/// Requests rejected by the breaker.
pub const TRAFFIC_REJECTED: RGBColor = OI_VERMILLION;
/// Requests that failed.
pub const TRAFFIC_FAILED: RGBColor = OI_PURPLE;

/// Health colours: upstream p95 latency and error rate.
pub const HEALTH_P95: RGBColor = OI_BLUE;
/// Upstream error rate.
pub const HEALTH_ERRORS: RGBColor = OI_VERMILLION;

/// Shade of an incident the breaker should open on.
pub const SHADE_OPEN: RGBColor = OI_VERMILLION;
/// Shade of a blip the breaker should ride out.
pub const SHADE_STAY_CLOSED: RGBColor = OI_SKY_BLUE;
/// Shade of an incident where either behaviour is fine.
pub const SHADE_EITHER: RGBColor = GREY;
/// Opacity of incident shading.
pub const SHADE_ALPHA: f64 = 0.22;

/// The series colour for index `i` (cycles through [`SERIES`]).
pub fn series_colour(i: usize) -> RGBColor {
    SERIES[i % SERIES.len()]
}

/// The colour of a configuration on every chart of a page: its family's palette colour (the
/// families numbered in order of first appearance, as pareto.png colours them), the `nth`
/// configuration of that family on the chart (from 0) in a lighter or darker shade of it, so
/// a configuration keeps its colour from chart to chart and two of one family stay apart.
pub fn family_colour(family: usize, nth: usize) -> RGBColor {
    let c = series_colour(family);
    // Towards white (positive) or black (negative), by how much: every other one darker, and
    // [`family_hatched`] tells the pairs apart.
    let t = [0.0, 0.0, -0.5, -0.5, 0.55, 0.55][nth % 6];
    let (towards, t) = if t >= 0.0 { (255.0, t) } else { (0.0, -t) };
    let mix = |v: u8| (f64::from(v) * (1.0 - t) + towards * t).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// Whether the `nth` configuration of a family on a chart is drawn hatched (every second one),
/// so two configurations of one family never look alike.
pub fn family_hatched(nth: usize) -> bool {
    nth % 2 == 1
}

/// [`family_colour`] of each label in `labels` (a label's family is its preset, the text
/// before `[`), families numbered in order of first appearance.
pub fn label_colours(labels: &[&str]) -> Vec<RGBColor> {
    let mut families: Vec<&str> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    labels
        .iter()
        .map(|l| {
            let family = l.split('[').next().unwrap_or(l);
            let f = match families.iter().position(|x| *x == family) {
                Some(f) => f,
                None => {
                    families.push(family);
                    seen.push(0);
                    families.len() - 1
                }
            };
            seen[f] += 1;
            family_colour(f, seen[f] - 1)
        })
        .collect()
}

/// Registers the embedded fonts with plotters once per process.
pub fn register_fonts() -> Result<(), ChartError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, FONT_REGULAR).is_ok()
            && plotters::style::register_font(FONT_FAMILY, FontStyle::Bold, FONT_BOLD).is_ok()
    });
    if ok { Ok(()) } else { Err(ChartError::Font) }
}

/// Regular text of `size` px in `colour`.
pub fn text(size: u32, colour: RGBColor) -> TextStyle<'static> {
    (FONT_FAMILY, size as f64).into_font().color(&colour)
}

/// Bold text of `size` px in `colour`.
pub fn bold(size: u32, colour: RGBColor) -> TextStyle<'static> {
    (FONT_FAMILY, size as f64, FontStyle::Bold).into_font().color(&colour)
}

/// Width in pixels `s` takes at `size` px in the regular face (from the font's advances).
pub fn text_width(s: &str, size: u32) -> i32 {
    measure(s, size, FontStyle::Normal)
}

/// Width in pixels `s` takes at `size` px in the bold face.
pub fn bold_width(s: &str, size: u32) -> i32 {
    measure(s, size, FontStyle::Bold)
}

fn measure(s: &str, size: u32, style: FontStyle) -> i32 {
    let font = (FONT_FAMILY, size as f64, style).into_font();
    font.box_size(s).map(|(w, _)| w as i32).unwrap_or((s.chars().count() as u32 * size * 6 / 10) as i32)
}

/// Shortens `s` to at most `max_px` pixels at `size` px, ending it with "…" when cut.
pub fn fit_text(s: &str, size: u32, max_px: i32) -> String {
    if text_width(s, size) <= max_px {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut n = chars.len();
    while n > 0 {
        n -= 1;
        let cut: String = chars[..n].iter().chain(std::iter::once(&'…')).collect();
        if text_width(&cut, size) <= max_px {
            return cut;
        }
    }
    String::new()
}

/// Shortens `s` to at most `max_px` pixels at `size` px by cutting its middle ("…"), so both
/// its start and its end (where configuration labels differ) stay readable.
pub fn fit_middle(s: &str, size: u32, max_px: i32) -> String {
    if text_width(s, size) <= max_px {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    for keep in (0..chars.len()).rev() {
        let head = keep.div_ceil(2);
        let cut: String = chars[..head]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(&chars[chars.len() - (keep - head)..])
            .collect();
        if text_width(&cut, size) <= max_px {
            return cut;
        }
    }
    String::new()
}

/// A drawing area on a bitmap, in pixels.
pub type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Converts any plotters error into a [`ChartError::Draw`].
pub fn draw_err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Draw(e.to_string())
}

/// Draws the chart title (bold) and an optional subtitle in the title strip of `root`.
/// A title too wide for the chart is drawn smaller (down to [`LABEL_SIZE`]) before it is cut.
pub fn draw_title(root: &Area, title: &str, subtitle: &str) -> Result<(), ChartError> {
    let (w, _) = root.dim_in_pixel();
    let room = w as i32 - 40;
    let size = (LABEL_SIZE..=TITLE_SIZE).rev().find(|&s| bold_width(title, s) <= room).unwrap_or(LABEL_SIZE);
    let t = fit_text(title, size, room);
    let y = 10 + (TITLE_SIZE - size) as i32 / 2;
    root.draw(&Text::new(t, (20, y), bold(size, OI_BLACK))).map_err(draw_err)?;
    if !subtitle.is_empty() {
        let s = fit_text(subtitle, LEGEND_SIZE, w as i32 - 40);
        root.draw(&Text::new(s, (20, 42), text(LEGEND_SIZE, DARK_GREY))).map_err(draw_err)?;
    }
    Ok(())
}

/// One entry of a hand-drawn legend: a swatch (filled box, line or marker) and its label.
#[derive(Clone, Debug)]
pub struct LegendItem {
    /// Label text.
    pub label: String,
    /// Colour of the swatch.
    pub colour: RGBColor,
    /// How the swatch is drawn.
    pub swatch: Swatch,
}

/// The shape of a legend swatch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Swatch {
    /// A filled square (areas, bars, states).
    Box,
    /// A translucent square (shaded windows).
    Shade,
    /// A short thick line (line series).
    Line,
    /// A filled circle (scatter points).
    Dot,
    /// A downward triangle (event markers).
    Marker,
    /// A circle outline (highlighted points).
    Ring,
    /// A small hollow dot (points ruled out by a constraint).
    Hollow,
    /// A square outline (a configuration marked by name).
    Square,
    /// A filled square with white hatching (series beyond the palette's eight colours).
    Hatched,
    /// A short dashed line (line series beyond the palette's eight colours).
    Dashed,
    /// A dotted line (the true health of a provider after the first).
    Dotted,
}

/// The legend swatch of categorical series `i` drawn as lines (dashed past the palette).
pub fn line_swatch(i: usize) -> Swatch {
    if i >= SERIES.len() { Swatch::Dashed } else { Swatch::Line }
}

/// Draws legend items left to right starting at `(x, y)` (top-left, pixels); returns the x
/// after the last item.
pub fn draw_legend_row(area: &Area, items: &[LegendItem], x: i32, y: i32) -> Result<i32, ChartError> {
    let mut x = x;
    let s = LEGEND_SIZE as i32;
    for it in items {
        match it.swatch {
            Swatch::Box => {
                area.draw(&Rectangle::new([(x, y + 1), (x + s, y + s + 1)], it.colour.filled()))
                    .map_err(draw_err)?;
                area.draw(&Rectangle::new([(x, y + 1), (x + s, y + s + 1)], DARK_GREY.stroke_width(1)))
                    .map_err(draw_err)?;
            }
            Swatch::Shade => {
                area.draw(&Rectangle::new(
                    [(x, y + 1), (x + s, y + s + 1)],
                    it.colour.mix(SHADE_ALPHA * 1.6).filled(),
                ))
                .map_err(draw_err)?;
            }
            Swatch::Line => {
                area.draw(&PathElement::new(
                    vec![(x, y + s / 2 + 1), (x + s + 8, y + s / 2 + 1)],
                    it.colour.stroke_width(3),
                ))
                .map_err(draw_err)?;
                x += 8;
            }
            Swatch::Dot => {
                area.draw(&Circle::new((x + s / 2, y + s / 2 + 1), s / 2 - 1, it.colour.filled()))
                    .map_err(draw_err)?;
            }
            Swatch::Hatched => {
                area.draw(&Rectangle::new([(x, y + 1), (x + s, y + s + 1)], it.colour.filled()))
                    .map_err(draw_err)?;
                hatch(area, (x, y + 1), (x + s, y + s + 1), 5, WHITE)?;
            }
            Swatch::Dotted | Swatch::Dashed => {
                // (dashes, period, dash length, extra width): dotted 5 × 2 px, dashed 3 × 5 px.
                let (n, period, len, extra) =
                    if it.swatch == Swatch::Dotted { (5, 6, 2, 12) } else { (3, 9, 5, 8) };
                for k in 0..n {
                    let x0 = x + k * period;
                    area.draw(&PathElement::new(
                        vec![(x0, y + s / 2 + 1), (x0 + len, y + s / 2 + 1)],
                        it.colour.stroke_width(3),
                    ))
                    .map_err(draw_err)?;
                }
                x += extra;
            }
            Swatch::Ring => {
                area.draw(&Circle::new((x + s / 2, y + s / 2 + 1), s / 2, it.colour.stroke_width(2)))
                    .map_err(draw_err)?;
            }
            Swatch::Square => {
                area.draw(&Rectangle::new([(x + 1, y + 2), (x + s - 1, y + s)], it.colour.stroke_width(2)))
                    .map_err(draw_err)?;
            }
            Swatch::Hollow => {
                area.draw(&Circle::new((x + s / 2, y + s / 2 + 1), s / 2 - 2, it.colour.stroke_width(2)))
                    .map_err(draw_err)?;
            }
            Swatch::Marker => {
                area.draw(&Polygon::new(
                    vec![(x, y + 2), (x + s, y + 2), (x + s / 2, y + s)],
                    it.colour.filled(),
                ))
                .map_err(draw_err)?;
            }
        }
        x += s + 6;
        area.draw(&Text::new(it.label.clone(), (x, y), text(LEGEND_SIZE, OI_BLACK))).map_err(draw_err)?;
        x += text_width(&it.label, LEGEND_SIZE) + 22;
    }
    Ok(x)
}

/// Width a legend entry takes in a row drawn by [`draw_legend_row`] (px).
fn legend_item_width(it: &LegendItem) -> i32 {
    let extra = match it.swatch {
        Swatch::Line => 8,
        Swatch::Dotted => 12,
        Swatch::Dashed => 8,
        _ => 0,
    };
    LEGEND_SIZE as i32 + 6 + extra + text_width(&it.label, LEGEND_SIZE) + 22
}

/// `items` in rows of at most `room` px each, in order (an entry wider than `room` has a row
/// of its own).
pub fn flow_legend(items: &[LegendItem], room: i32) -> Vec<Vec<LegendItem>> {
    let mut rows: Vec<Vec<LegendItem>> = Vec::new();
    let mut used = 0;
    for it in items {
        let w = legend_item_width(it);
        match rows.last_mut() {
            Some(row) if used + w <= room => {
                row.push(it.clone());
                used += w;
            }
            _ => {
                rows.push(vec![it.clone()]);
                used = w;
            }
        }
    }
    rows
}

/// Draws diagonal hatching (lines at 45°, `gap` px apart) inside the pixel rectangle
/// `(x0, y0)..(x1, y1)`; used for infeasible cells and bars beyond the palette.
pub fn hatch(
    area: &Area,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    gap: i32,
    colour: RGBColor,
) -> Result<(), ChartError> {
    let (x0, x1) = (x0.min(x1), x0.max(x1));
    let (y0, y1) = (y0.min(y1), y0.max(y1));
    let (w, h) = (x1 - x0, y1 - y0);
    if w <= 0 || h <= 0 {
        return Ok(());
    }
    // Lines x - y = c for c from -h to w, clipped to the rectangle.
    let mut c = -h;
    while c <= w {
        let (sx, sy) = if c >= 0 { (x0 + c, y0) } else { (x0, y0 - c) };
        let len = (w - (sx - x0)).min(h - (sy - y0));
        area.draw(&PathElement::new(vec![(sx, sy), (sx + len, sy + len)], colour.stroke_width(1)))
            .map_err(draw_err)?;
        c += gap;
    }
    Ok(())
}

/// Viridis colour map control points (perceptually uniform, readable in grey and for
/// colour-blind readers), sampled every 1/8 of the scale.
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2D, 0x7B),
    (0x3B, 0x52, 0x8B),
    (0x2C, 0x72, 0x8E),
    (0x21, 0x91, 0x8C),
    (0x28, 0xAE, 0x80),
    (0x5E, 0xC9, 0x62),
    (0xAD, 0xDC, 0x30),
    (0xFD, 0xE7, 0x25),
];

/// The viridis colour at `t` in [0, 1] (clamped; NaN gives the low end).
pub fn viridis(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let pos = t * (VIRIDIS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(VIRIDIS.len() - 2);
    let f = pos - i as f64;
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    RGBColor(lerp(a.0, b.0), lerp(a.1, b.1), lerp(a.2, b.2))
}

/// True when text drawn on `c` should be white rather than black (dark background).
pub fn is_dark(c: RGBColor) -> bool {
    0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2) < 140.0
}

/// Formats a number for tick labels and cells: at most 3 significant digits for small values,
/// thousands as "12.3k", millions as "4.5M"; integers stay integers.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    if a >= 1e6 {
        return format!("{}M", trim_zeros(&format!("{:.2}", v / 1e6)));
    }
    if a >= 1e4 {
        return format!("{}k", trim_zeros(&format!("{:.1}", v / 1e3)));
    }
    if a >= 100.0 || v == v.round() {
        return format!("{}", v.round() as i64);
    }
    if a >= 10.0 {
        return trim_zeros(&format!("{v:.1}"));
    }
    if a >= 1.0 {
        return trim_zeros(&format!("{v:.2}"));
    }
    if a >= 0.001 {
        return trim_zeros(&format!("{v:.3}"));
    }
    format!("{v:.1e}")
}

/// Formats a fraction in [0, 1] as a percentage with enough digits to tell 99.9% from 100%.
pub fn fmt_pct(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let p = v * 100.0;
    if p == p.round() {
        format!("{}%", p as i64)
    } else if (p - p.round()).abs() < 0.05 || (10.0..=99.0).contains(&p) {
        format!("{}%", trim_zeros(&format!("{p:.1}")))
    } else {
        format!("{}%", trim_zeros(&format!("{p:.2}")))
    }
}

/// Formats a value with three significant digits, keeping trailing zeros so cells line up and
/// 11.0 is not shown as 11 (`0.244`, `11.0`, `162`, `1.24k`, `2.50M`).
pub fn fmt_sig3(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let (scaled, suffix) = match v.abs() {
        a if a >= 999_500.0 => (v / 1e6, "M"),
        a if a >= 999.5 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    if scaled == 0.0 {
        return "0".to_string();
    }
    let digits = (scaled.abs().log10().floor() as i32).max(-6);
    let decimals = (2 - digits).max(0) as usize;
    let mut out = format!("{scaled:.decimals$}");
    // Rounding may carry into a new digit (9.996 -> 10.00): drop the extra decimal.
    if decimals > 0 && out.trim_start_matches('-').replace('.', "").trim_start_matches('0').len() > 3 {
        out.pop();
        if out.ends_with('.') {
            out.pop();
        }
    }
    format!("{out}{suffix}")
}

/// A parameter value as a reader expects it: a duration written the way `Dur` prints it
/// (`34s600ms`, `1m30s`) becomes a decimal in its largest unit with up to three significant
/// digits (`34.6s`, `1.5m`); anything else is returned as written.
pub fn fmt_param(value: &str) -> String {
    let has_unit = value.bytes().any(|b| b.is_ascii_alphabetic());
    let Some(d) = has_unit.then(|| crate::time::Dur::parse(value).ok()).flatten() else {
        return value.to_string();
    };
    let us = d.micros() as f64;
    let (n, unit) = [(86_400e6, "d"), (3_600e6, "h"), (60e6, "m"), (1e6, "s"), (1e3, "ms")]
        .into_iter()
        .find(|(scale, _)| us >= *scale)
        .map(|(scale, unit)| (us / scale, unit))
        .unwrap_or((us, "us"));
    let rounded = crate::sweep::grid::round_significant(n, 3);
    format!("{}{unit}", trim_zeros(&format!("{rounded:.2}")))
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
}

/// Rounds a positive axis maximum up to a round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8
/// × 10^k), so axes end close to the data (0 and negatives give 1).
pub fn nice_ceil(v: f64) -> f64 {
    if v.is_nan() || v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let e = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if v <= m * e * (1.0 + 1e-12) {
            return m * e;
        }
    }
    10.0 * e
}

/// Renders a chart of `size` pixels with `draw` and encodes it as PNG: 8-bit RGB, the `png`
/// crate's fast compression, the Paeth filter on every row. Against a filter chosen row by row
/// a week's timeline encodes in half the time for a file about 6 % larger; the pixels are the
/// same.
pub fn png<F>(size: (u32, u32), draw: F) -> Result<Vec<u8>, ChartError>
where
    F: FnOnce(&Area) -> Result<(), ChartError>,
{
    let rgb = render_rgb(size, draw)?;
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, size.0, size.1);
    encoder.set_depth(png::BitDepth::Eight);
    // A chart of at most 256 colours (most are: flat fills, a few lines, anti-aliased text) is
    // written as an indexed PNG, the same pixels in a fraction of the bytes ([`indexed`]);
    // others as RGB.
    let indexed = indexed(&rgb);
    match &indexed {
        Some((palette, _)) => {
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(palette.clone());
            encoder.set_compression(png::Compression::Best);
            encoder.set_filter(png::FilterType::NoFilter);
        }
        None => {
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_compression(png::Compression::Default);
            encoder.set_filter(png::FilterType::Paeth);
        }
    }
    encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    let encode_err = |e: png::EncodingError| {
        ChartError::Draw(format!("cannot encode a chart of {}x{} pixels: {e}", size.0, size.1))
    };
    let mut writer = encoder.write_header().map_err(encode_err)?;
    let data = indexed.as_ref().map_or(&rgb, |(_, pixels)| pixels);
    writer.write_image_data(data).map_err(encode_err)?;
    writer.finish().map_err(encode_err)?;
    Ok(bytes)
}

/// Most distinct colours a chart may have and still be written indexed.
const INDEXED_MAX_COLOURS: usize = 4096;
/// Share of a chart's pixels the 256 commonest colours must cover for the rest (anti-aliased
/// fringes where text crosses a coloured fill) to take their nearest palette colour.
const INDEXED_COVER: f64 = 0.995;

/// The palette (RGB triples) and each pixel's index in it: every colour when `rgb` has at most
/// 256 (exact); else the 256 commonest when they cover [`INDEXED_COVER`] of the pixels, each
/// other colour drawn as its nearest palette colour (a fringe pixel a shade off). `None` for a
/// chart of graded colours, which stays RGB. The same pixels always give the same palette.
fn indexed(rgb: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    use std::collections::HashMap;
    let mut counts: HashMap<[u8; 3], u32> = HashMap::new();
    for px in rgb.chunks_exact(3) {
        *counts.entry([px[0], px[1], px[2]]).or_insert(0) += 1;
        if counts.len() > INDEXED_MAX_COLOURS {
            return None;
        }
    }
    let mut colours: Vec<([u8; 3], u32)> = counts.into_iter().collect();
    // Commonest first, ties by colour: the palette depends on the pixels only.
    colours.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let pixels = (rgb.len() / 3) as f64;
    let kept = &colours[..colours.len().min(256)];
    if colours.len() > 256 && f64::from(kept.iter().map(|c| c.1).sum::<u32>()) < INDEXED_COVER * pixels {
        return None;
    }
    let mut index: HashMap<[u8; 3], u8> = kept.iter().enumerate().map(|(i, c)| (c.0, i as u8)).collect();
    for (colour, _) in &colours[kept.len()..] {
        let distance =
            |p: &[u8; 3]| -> i32 { (0..3).map(|k| (i32::from(p[k]) - i32::from(colour[k])).pow(2)).sum() };
        let nearest = (0..kept.len()).min_by_key(|&i| (distance(&kept[i].0), i)).unwrap_or(0);
        index.insert(*colour, nearest as u8);
    }
    let palette = kept.iter().flat_map(|c| c.0).collect();
    let pixels = rgb.chunks_exact(3).map(|px| index[&[px[0], px[1], px[2]]]).collect();
    Some((palette, pixels))
}

/// Renders a chart of `size` pixels into an RGB buffer (3 bytes per pixel), without any file;
/// used by tests to compare pixels.
pub fn render_rgb<F>(size: (u32, u32), draw: F) -> Result<Vec<u8>, ChartError>
where
    F: FnOnce(&Area) -> Result<(), ChartError>,
{
    register_fonts()?;
    let mut buf = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(&root)?;
        root.present().map_err(draw_err)?;
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_and_middle() {
        assert_eq!(viridis(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(viridis(1.0), RGBColor(0xFD, 0xE7, 0x25));
        assert_eq!(viridis(0.5), RGBColor(0x21, 0x91, 0x8C));
        assert_eq!(viridis(f64::NAN), viridis(0.0));
        assert_eq!(viridis(7.0), viridis(1.0));
    }

    #[test]
    fn numbers_format_compactly() {
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(12.34), "12.3");
        assert_eq!(fmt_num(1234.0), "1234");
        assert_eq!(fmt_num(12_345.0), "12.3k");
        assert_eq!(fmt_num(2_500_000.0), "2.5M");
        assert_eq!(fmt_num(f64::NAN), "–");
        assert_eq!(fmt_pct(0.999), "99.9%");
        assert_eq!(fmt_pct(1.0), "100%");
        assert_eq!(fmt_pct(0.5), "50%");
        assert_eq!(fmt_pct(0.0123), "1.23%");
    }

    #[test]
    fn three_significant_digits_and_durations() {
        assert_eq!(fmt_sig3(11.04), "11.0");
        assert_eq!(fmt_sig3(16.0), "16.0");
        assert_eq!(fmt_sig3(0.24381), "0.244");
        assert_eq!(fmt_sig3(162.4), "162");
        assert_eq!(fmt_sig3(9.996), "10.0");
        assert_eq!(fmt_sig3(1244.0), "1.24k");
        assert_eq!(fmt_sig3(-2.71234), "-2.71");
        assert_eq!(fmt_sig3(0.0), "0");
        assert_eq!(fmt_param("34s600ms"), "34.6s");
        assert_eq!(fmt_param("2m"), "2m");
        assert_eq!(fmt_param("1m30s"), "1.5m");
        assert_eq!(fmt_param("10s"), "10s");
        assert_eq!(fmt_param("900ms"), "900ms");
        assert_eq!(fmt_param("3"), "3");
        assert_eq!(fmt_param("0.5"), "0.5");
        assert_eq!(fmt_param("count"), "count");
    }

    #[test]
    fn nice_ceil_rounds_up() {
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(nice_ceil(3.2), 4.0);
        assert_eq!(nice_ceil(10.0), 10.0);
        assert_eq!(nice_ceil(11.0), 12.0);
        assert_eq!(nice_ceil(230.0), 250.0);
        assert_eq!(nice_ceil(5.4), 6.0);
    }

    #[test]
    fn a_chart_encodes_to_a_png_that_decodes_to_its_pixels() {
        let size = (301, 97);
        let draw = |root: &Area| {
            draw_title(root, "Timeline", "seed 7")?;
            root.draw(&PathElement::new(vec![(10, 90), (290, 70)], OI_BLUE.stroke_width(3))).map_err(draw_err)
        };
        let rgb = render_rgb(size, draw).unwrap();
        let bytes = png(size, draw).unwrap();
        let mut decoder = png::Decoder::new(bytes.as_slice());
        decoder.set_transformations(png::Transformations::EXPAND);
        let mut reader = decoder.read_info().unwrap();
        // Few colours: an indexed PNG, decoded (expanded) to the same RGB pixels.
        assert_eq!(reader.info().color_type, png::ColorType::Indexed);
        let mut decoded = vec![0; reader.output_buffer_size()];
        let frame = reader.next_frame(&mut decoded).unwrap();
        assert_eq!((frame.width, frame.height), size);
        assert_eq!((frame.color_type, frame.bit_depth), (png::ColorType::Rgb, png::BitDepth::Eight));
        assert!(decoded[..frame.buffer_size()] == rgb[..], "the decoded pixels differ from those drawn");
        assert!(rgb.chunks(3).any(|p| p != [255, 255, 255]), "nothing was drawn");
    }

    #[test]
    fn a_chart_of_more_than_256_colours_stays_rgb() {
        let size = (300, 2);
        let draw = |root: &Area| {
            for x in 0..300 {
                let c = RGBColor((x % 256) as u8, (x / 256) as u8, 7);
                root.draw(&Rectangle::new([(x, 0), (x + 1, 2)], c.filled())).map_err(draw_err)?;
            }
            Ok(())
        };
        let bytes = png(size, draw).unwrap();
        let reader = png::Decoder::new(bytes.as_slice()).read_info().unwrap();
        assert_eq!(reader.info().color_type, png::ColorType::Rgb);
        assert_eq!(indexed(&render_rgb(size, draw).unwrap()), None);
        // A few rare colours beyond 256 beside common ones take their nearest palette colour.
        let mut rgb = Vec::new();
        for i in 0..300u32 {
            let (r, n) = if i < 256 { (i as u8, 1000) } else { (255, 1) };
            for _ in 0..n {
                rgb.extend([r, (i / 256) as u8 * 2, 7]);
            }
        }
        let (palette, pixels) = indexed(&rgb).unwrap();
        assert_eq!(palette.len(), 256 * 3);
        let last = *pixels.last().unwrap() as usize;
        assert_eq!(&palette[last * 3..last * 3 + 3], &[255, 0, 7]);
    }

    #[test]
    fn fonts_register_and_measure() {
        register_fonts().unwrap();
        let w = text_width("breakerlab", 20);
        assert!(w > 60 && w < 200, "width {w}");
        assert_eq!(fit_text("short", 15, 500), "short");
        assert_eq!(fit_middle("short", 15, 500), "short");
        let a = fit_middle("consecutive[failure_threshold=10,open_duration=2m]", 15, 200);
        let b = fit_middle("consecutive[failure_threshold=10,open_duration=10s]", 15, 200);
        assert!(a.starts_with("consec") && a.ends_with("=2m]") && a.contains('…'), "{a}");
        assert!(b.ends_with("=10s]") && text_width(&b, 15) <= 200 && a != b, "{b}");
        let cut = fit_text("a very long configuration name indeed", 15, 80);
        assert!(cut.ends_with('…') && text_width(&cut, 15) <= 80, "{cut}");
    }
}
