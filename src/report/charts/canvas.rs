//! The bitmap every chart is drawn on: plotters' RGB bitmap with two of its slow paths done
//! faster, pixel for pixel the same. Text is drawn from a process-wide cache of rasterized
//! glyphs (plotters outlines and rasterizes every glyph of every label anew), and filled
//! polygons (every line thicker than a pixel) are swept without an allocation per column.
//! Everything else goes to plotters' backend unchanged.

use super::style::{FONT_BOLD, FONT_FAMILY, FONT_REGULAR};
use ab_glyph::{Font as _, FontRef, GlyphId, ScaleFont as _};
use plotters::prelude::{BitMapBackend, DrawingBackend};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontStyle,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// The error of the bitmap backend (plotters does not name its type).
type BitmapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;
/// What a drawing call returns.
type Drawn = Result<(), DrawingErrorKind<BitmapError>>;

/// An RGB bitmap of a chart (see the module's documentation).
pub struct Canvas<'a> {
    /// The pixels, 3 bytes each, row by row.
    buf: &'a mut [u8],
    size: (u32, u32),
    /// A polygon's edges, kept between fills.
    edges: Vec<(BackendCoord, BackendCoord)>,
    /// The edges crossing the sweep line, kept between fills.
    active: Vec<Edge>,
    /// A polygon's vertices, kept between fills.
    vertices: Vec<BackendCoord>,
}

impl<'a> Canvas<'a> {
    /// A canvas of `size` pixels over `buf` (3 bytes a pixel, row by row).
    pub fn with_buffer(buf: &'a mut [u8], size: (u32, u32)) -> Canvas<'a> {
        Canvas { buf, size, edges: Vec::new(), active: Vec::new(), vertices: Vec::new() }
    }
}

/// plotters' RGB bitmap over `buf`, for what the canvas leaves to it.
fn bitmap(buf: &mut [u8], size: (u32, u32)) -> BitMapBackend<'_> {
    BitMapBackend::with_buffer(buf, size)
}

/// Draws the pixel `(x, y)` of `color` into `buf` as plotters' RGB bitmap does
/// (`RGBPixel::draw_pixel`), without its calls: nearly opaque, the colour is set; else each
/// channel moves towards it by the alpha in 256ths, rounded down.
#[inline(always)]
fn put(buf: &mut [u8], (w, h): (u32, u32), (x, y): BackendCoord, color: BackendColor) {
    if x < 0 || y < 0 || x as u32 >= w || y as u32 >= h {
        return;
    }
    let i = (y as usize * w as usize + x as usize) * 3;
    let Some(px) = buf.get_mut(i..i + 3) else { return };
    let (r, g, b) = color.rgb;
    if color.alpha >= 1.0 - 1.0 / 256.0 {
        px.copy_from_slice(&[r, g, b]);
        return;
    }
    if color.alpha <= 0.0 {
        return;
    }
    let a = (color.alpha * 256.0).floor() as u64;
    for (p, new) in px.iter_mut().zip([r, g, b]) {
        if new > *p {
            *p += (u64::from(new - *p) * a / 256) as u8;
        } else {
            *p -= (u64::from(*p - new) * a / 256) as u8;
        }
    }
}

impl DrawingBackend for Canvas<'_> {
    type ErrorType = BitmapError;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Drawn {
        Ok(())
    }

    fn present(&mut self) -> Drawn {
        Ok(())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn {
        put(self.buf, self.size, point, color);
        Ok(())
    }

    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Drawn {
        bitmap(self.buf, self.size).draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn {
        bitmap(self.buf, self.size).draw_rect(upper_left, bottom_right, style, fill)
    }

    /// As plotters draws a path: thin ones line by line, thicker ones as the polygon around
    /// them, filled here.
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn {
        if style.color().alpha == 0.0 {
            return Ok(());
        }
        if style.stroke_width() == 1 {
            return bitmap(self.buf, self.size).draw_path(path, style);
        }
        let points: Vec<BackendCoord> = path.into_iter().collect();
        let outline = plotters_backend::rasterizer::polygonize(&points, style.stroke_width());
        self.fill_polygon(outline, &style.color())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn {
        bitmap(self.buf, self.size).draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn {
        let mut vertices = std::mem::take(&mut self.vertices);
        vertices.clear();
        vertices.extend(vert);
        let filled = self.fill(&vertices, style);
        self.vertices = vertices;
        filled
    }

    /// As plotters draws text (each glyph rasterized at the origin, placed at its whole-pixel
    /// offset, blended pixel by pixel), the glyphs taken from the cache. Text in a font other
    /// than the embedded ones goes to plotters.
    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> Drawn {
        let bold = match style.style() {
            FontStyle::Normal => false,
            FontStyle::Bold => true,
            _ => return bitmap(self.buf, self.size).draw_text(text, style, pos),
        };
        let Some(fonts) = fonts() else { return bitmap(self.buf, self.size).draw_text(text, style, pos) };
        if style.family().as_str() != FONT_FAMILY {
            return bitmap(self.buf, self.size).draw_text(text, style, pos);
        }
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) =
            style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        let size = style.size() as f32;
        let font = fonts[usize::from(bold)].as_scaled(size);
        let glyphs = glyphs(&font, bold, size, text);
        let mut x_shift = 0f32;
        let mut prev: Option<GlyphId> = None;
        for glyph in &glyphs {
            if let Some(p) = prev {
                x_shift += font.kern(p, glyph.id);
            }
            prev = Some(glyph.id);
            let shift = x_shift as i32;
            for &(gx, gy, coverage) in glyph.pixels.iter() {
                let (x, y) = trans.transform(gx + shift + dx - min_x, gy + dy - min_y);
                let (x, y) = (pos.0 + x, pos.1 + y);
                if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                    put(self.buf, self.size, (x, y), color.mix(f64::from(coverage)));
                }
            }
            x_shift += glyph.advance;
        }
        Ok(())
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Drawn {
        bitmap(self.buf, self.size).blit_bitmap(pos, size, src)
    }
}

impl Canvas<'_> {
    /// Fills the polygon `vertices` as plotters' `rasterizer::fill_polygon` does, sweep line by
    /// sweep line (columns when the polygon is wider than tall), with the same arithmetic and
    /// the same calls to the bitmap, without allocating per sweep line.
    fn fill<S: BackendStyle>(&mut self, vertices: &[BackendCoord], style: &S) -> Drawn {
        let Some(&first) = vertices.first() else { return Ok(()) };
        let (mut x_span, mut y_span) = ((first.0, first.0), (first.1, first.1));
        for &(x, y) in vertices {
            x_span = (x_span.0.min(x), x_span.1.max(x));
            y_span = (y_span.0.min(y), y_span.1.max(y));
        }
        // All the points on one vertical or horizontal line.
        if x_span.0 == x_span.1 || y_span.0 == y_span.1 {
            return bitmap(self.buf, self.size).draw_line((x_span.0, y_span.0), (x_span.1, y_span.1), style);
        }
        let horizontal = x_span.1 - x_span.0 > y_span.1 - y_span.0;
        // In sweep coordinates: the sweep position first.
        let swap = |(x, y): BackendCoord| if horizontal { (x, y) } else { (y, x) };
        let edges = &mut self.edges;
        edges.clear();
        edges.extend(vertices.windows(2).map(|w| (swap(w[0]), swap(w[1]))));
        edges.push((swap(vertices[vertices.len() - 1]), swap(vertices[0])));
        // A stable sort by the lower end, as plotters sorts (ties keep the polygon's order).
        edges.sort_by_key(|(a, b)| a.0.min(b.0));
        for edge in edges.iter_mut() {
            if edge.0.0 > edge.1.0 {
                std::mem::swap(&mut edge.0, &mut edge.1);
            }
        }
        let (low, high) = if horizontal { x_span } else { y_span };
        let color = style.color();
        let active = &mut self.active;
        active.clear();
        let mut next = 0;
        for sweep in low..=high {
            active.retain_mut(|e| {
                let going = e.master() > 0;
                if going {
                    e.epoch += 1;
                }
                going
            });
            while let Some(&(from, to)) = edges.get(next) {
                if from.0 > sweep {
                    break;
                }
                if from.0 != to.0 {
                    active.push(Edge {
                        epoch: 0,
                        total: (to.0 - from.0) as u32,
                        begin: from.1,
                        end: to.1,
                        pos: 0.0,
                    });
                }
                next += 1;
            }
            for e in active.iter_mut() {
                e.pos = e.slave();
            }
            // Stable, by position (never NaN: every active edge spans at least one step).
            active.sort_by(|a, b| a.pos.partial_cmp(&b.pos).unwrap_or(std::cmp::Ordering::Equal));
            let (mut a, mut b): (Option<usize>, Option<usize>) = (None, None);
            for k in 0..active.len() {
                if a.is_none() {
                    a = Some(k);
                } else if b.is_none() {
                    b = Some(k);
                }
                let (Some(i), Some(j)) = (a, b) else { continue };
                let (ea, eb) = (&active[i], &active[j]);
                if ea.master() == 0 && eb.master() != 0 {
                    (a, b) = (Some(j), None);
                    continue;
                }
                if ea.master() != 0 && eb.master() == 0 {
                    b = None;
                    continue;
                }
                let (from, to) = (ea.pos, eb.pos);
                if ea.master() == 0 && eb.master() == 0 && to - from > 1.0 {
                    (a, b) = (None, None);
                    continue;
                }
                if horizontal {
                    bitmap(self.buf, self.size).draw_line(
                        (sweep, from.ceil() as i32),
                        (sweep, to.floor() as i32),
                        &color,
                    )?;
                    put(self.buf, self.size, (sweep, from.floor() as i32), color.mix(from.ceil() - from));
                    put(self.buf, self.size, (sweep, to.ceil() as i32), color.mix(to - to.floor()));
                } else {
                    bitmap(self.buf, self.size).draw_line(
                        (from.ceil() as i32, sweep),
                        (to.floor() as i32, sweep),
                        &color,
                    )?;
                    put(self.buf, self.size, (from.floor() as i32, sweep), color.mix(from.ceil() - from));
                    put(self.buf, self.size, (to.ceil() as i32, sweep), color.mix(to.floor() - to));
                }
                (a, b) = (None, None);
            }
        }
        Ok(())
    }
}

/// A polygon edge crossing the sweep line (plotters' `Edge`, its position computed once per
/// sweep line).
#[derive(Clone, Copy, Debug)]
struct Edge {
    /// Steps taken along the sweep.
    epoch: u32,
    /// Steps from one end to the other.
    total: u32,
    /// The other coordinate at the two ends.
    begin: i32,
    end: i32,
    /// The other coordinate at the sweep line.
    pos: f64,
}

impl Edge {
    fn master(&self) -> i32 {
        (self.total - self.epoch) as i32
    }

    fn slave(&self) -> f64 {
        f64::from(self.begin)
            + (i64::from(self.end - self.begin) * i64::from(self.epoch)) as f64 / f64::from(self.total)
    }
}

/// A glyph as plotters draws it at one size: its coverage of each pixel it touches (offsets
/// from the text's origin, the vertical placement applied), its id and its advance.
#[derive(Debug)]
struct Glyph {
    id: GlyphId,
    advance: f32,
    pixels: Box<[(i32, i32, f32)]>,
}

/// The embedded faces, regular and bold (`None` if they cannot be read).
fn fonts() -> Option<&'static [FontRef<'static>; 2]> {
    static FONTS: OnceLock<Option<[FontRef<'static>; 2]>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            Some([FontRef::try_from_slice(FONT_REGULAR).ok()?, FontRef::try_from_slice(FONT_BOLD).ok()?])
        })
        .as_ref()
}

/// An embedded face at one size.
type Scaled = ab_glyph::PxScaleFont<&'static FontRef<'static>>;

/// Glyphs rasterized so far, by face (bold or not), size and character.
type Cache = HashMap<(bool, u32, char), Arc<Glyph>>;

/// The glyphs of `text` at `size` px in `font` (bold or not), rasterized on first use.
fn glyphs(font: &Scaled, bold: bool, size: f32, text: &str) -> Vec<Arc<Glyph>> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
    text.chars()
        .map(|c| {
            Arc::clone(
                cache.entry((bold, size.to_bits(), c)).or_insert_with(|| Arc::new(rasterize(font, size, c))),
            )
        })
        .collect()
}

/// One glyph of `font` at `size` px, as plotters' `FontDataInternal::draw` rasterizes it.
fn rasterize(font: &Scaled, size: f32, c: char) -> Glyph {
    let glyph = font.scaled_glyph(c);
    let id = glyph.id;
    let mut pixels = Vec::new();
    if let Some(outline) = font.outline_glyph(glyph) {
        let y_shift = (size / 2.0 + outline.px_bounds().min.y) as i32;
        // Uncovered pixels leave the bitmap as it is: only covered ones are kept.
        outline.draw(|x, y, coverage| {
            if coverage > 0.0 {
                pixels.push((x as i32, y as i32 + y_shift, coverage));
            }
        });
    }
    Glyph { id, advance: font.h_advance(id), pixels: pixels.into_boxed_slice() }
}

#[cfg(test)]
mod tests {
    use super::Canvas;
    use crate::report::charts::style::{bold, register_fonts, text};
    use plotters::coord::Shift;
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    /// Text, thick lines and polygons of every shape the charts draw, and some they do not.
    fn scene<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>) {
        root.fill(&WHITE).unwrap();
        let colour = RGBColor(0x00, 0x72, 0xB2);
        for (k, size) in [9u32, 15, 18, 28].into_iter().enumerate() {
            let y = 10 + 40 * k as i32;
            let words = "Timeline: week42 · seed 1 · AVAWTo fi — 99.9% ≥ µs é";
            root.draw(&Text::new(words, (5, y), text(size, OI))).unwrap();
            root.draw(&Text::new(words, (700, y), bold(size, colour).color(&colour.mix(0.6)))).unwrap();
        }
        let anchored = text(15, OI).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new("centred, rotated", (300, 300), anchored.transform(FontTransform::Rotate270)))
            .unwrap();
        let right = text(18, OI).pos(Pos::new(HPos::Right, VPos::Bottom)).transform(FontTransform::Rotate90);
        root.draw(&Text::new("right, bottom", (340, 300), right)).unwrap();
        // Off the edges: clipped the same way.
        root.draw(&Text::new("clipped at the edge", (1190, -6), text(28, OI))).unwrap();
        // Step lines, as the timeline draws them, thick and dashed.
        let steps: Vec<(i32, i32)> = (0..300)
            .flat_map(|i| {
                let y = 420 + ((i * 37) % 23) * 4 - if i % 17 == 0 { 60 } else { 0 };
                [(10 + i * 4, y), (14 + i * 4, y)]
            })
            .collect();
        for (w, dy) in [(2u32, 0), (3, 90), (5, 180)] {
            let path: Vec<(i32, i32)> = steps.iter().map(|(x, y)| (*x, y + dy)).collect();
            root.draw(&PathElement::new(path, colour.mix(0.7).stroke_width(w))).unwrap();
        }
        let tall: Vec<(i32, i32)> = (0..80).map(|i| (900 + (i % 5) * 7, 300 + i * 6)).collect();
        root.draw(&PathElement::new(tall, RED.stroke_width(2))).unwrap();
        for k in 0..40 {
            let x = 20 + k * 29;
            root.draw(&PathElement::new(vec![(x, 800), (x + 7, 795 + k % 9)], BLUE.stroke_width(2))).unwrap();
        }
        root.draw(&Polygon::new(vec![(1000, 700), (1150, 720), (1080, 860)], GREEN.mix(0.5).filled()))
            .unwrap();
        root.draw(&Polygon::new(vec![(1000, 650), (1100, 650)], BLACK.filled())).unwrap();
        root.draw(&Circle::new((1100, 500), 30, BLACK.stroke_width(2))).unwrap();
    }

    /// Plain black, as `style::OI_BLACK` (kept local so the test reads on its own).
    const OI: RGBColor = RGBColor(0, 0, 0);

    #[test]
    fn the_canvas_draws_what_plotters_draws() {
        register_fonts().unwrap();
        let size = (1200, 900);
        let mut plain = vec![0u8; 1200 * 900 * 3];
        let mut ours = plain.clone();
        scene(&BitMapBackend::with_buffer(&mut plain, size).into_drawing_area());
        // Twice: the second draw is from the cache.
        for _ in 0..2 {
            scene(&Canvas::with_buffer(&mut ours, size).into_drawing_area());
            assert!(
                plain == ours,
                "{} pixels differ",
                plain.chunks(3).zip(ours.chunks(3)).filter(|(a, b)| a != b).count()
            );
        }
        let inked = plain.chunks(3).filter(|p| p[0] < 128).count();
        assert!(inked > 20_000, "only {inked} dark pixels: the scene was not drawn");
    }

    #[test]
    fn a_pixel_blends_as_plotters_blends_it() {
        use plotters_backend::{BackendColor, DrawingBackend as _};
        let size = (64, 64);
        let mut plain: Vec<u8> = (0..64 * 64 * 3).map(|i| (i * 37 % 256) as u8).collect();
        let mut ours = plain.clone();
        // Every alpha from 0 to 1 in 257 steps (and past both ends), colours above and below
        // the pixels they land on, points off the bitmap too.
        let mut theirs = BitMapBackend::with_buffer(&mut plain, size);
        let mut canvas = Canvas::with_buffer(&mut ours, size);
        for k in -2i32..260 {
            let alpha = f64::from(k) / 256.0;
            let rgb = ((k * 7) as u8, (255 - k * 3) as u8, (k * 13 % 256) as u8);
            let point = (k % 70 - 3, (k / 4) % 68 - 2);
            let color = BackendColor { alpha, rgb };
            theirs.draw_pixel(point, color).unwrap();
            canvas.draw_pixel(point, color).unwrap();
        }
        drop((theirs, canvas));
        assert!(plain == ours);
    }
}
