//! The numbers of an interval row read by the row's shape: a row whose bytes after the time
//! are classed as one of the last few new rows' were (commas, dots and digits at the same
//! places; checked 16 bytes at once with SSE2 compares on x86_64, a byte at a time elsewhere)
//! is converted by that shape's positions and shifts, with no check per number (with SSSE3
//! where the CPU has it, found once per reader: four numbers at once when each has at most four
//! digits, else two). Values are bit-identical to the
//! general parser's: at most eight digits over an exact power of ten (one correctly rounded
//! division), as [`FastRows`](super::interval_fast::FastRows) reads them.

use super::interval_fast::{MAX_FIELDS, POW10_F64, Values, ZEROS, digit_values};

/// Bytes a shape may span, from the comma before a row's first number.
const SPAN: usize = 64;
/// Bytes a row must have from that comma on: a word may be read at any byte of the span.
pub(super) const NEEDED: usize = SPAN + 8;
/// Row shapes kept.
const KEPT: usize = 4;
/// Most numbers a row holds (every field after the time).
const FIELDS: usize = MAX_FIELDS - 1;

/// The bytes of a span by class, bit `k` for byte `k`.
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
struct Classes {
    commas: u64,
    dots: u64,
    digits: u64,
}

impl Classes {
    fn of(span: &[u8; SPAN]) -> Classes {
        let mut classes = Classes::default();
        for (k, b) in span.iter().enumerate() {
            let bit = 1u64 << k;
            match b {
                b',' => classes.commas |= bit,
                b'.' => classes.dots |= bit,
                b'0'..=b'9' => classes.digits |= bit,
                _ => {}
            }
        }
        classes
    }
}

/// A byte pattern: byte `k` of a span matches when `span[k] ^ xor[k] <= limit[k]`.
#[derive(Copy, Clone)]
pub(super) struct Pattern {
    xor: [u8; SPAN],
    limit: [u8; SPAN],
}

impl Pattern {
    /// The pattern of `bytes` (at most [`SPAN`]): each byte as it is, but a digit (any digit)
    /// where bit `k` of `digits` is set; any byte past them.
    pub(super) fn new(bytes: &[u8], digits: u64) -> Pattern {
        let mut pattern = Pattern { xor: [0; SPAN], limit: [u8::MAX; SPAN] };
        let n = bytes.len().min(SPAN);
        pattern.xor[..n].copy_from_slice(&bytes[..n]);
        pattern.limit[..n].fill(0);
        let mut rest = digits & u64::MAX.checked_shr((SPAN - n) as u32).unwrap_or(0);
        while rest != 0 {
            let k = rest.trailing_zeros() as usize % SPAN;
            (pattern.xor[k], pattern.limit[k]) = (b'0', 9);
            rest &= rest - 1;
        }
        pattern
    }

    /// True when the first `chunks` 16-byte chunks (1..=4) of `span` match, 16 bytes at once
    /// with SSE2 (part of every x86_64 target).
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    pub(super) fn matches(&self, span: &[u8; NEEDED], chunks: usize) -> bool {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_set1_epi8, _mm_xor_si128,
        };
        let chunks = chunks.min(SPAN / 16);
        // SAFETY: the build enables SSE2 (the cfg above), which these intrinsics need; each
        // unaligned load reads 16 bytes at `16 * k` for k < 4, inside the 64-byte pattern
        // arrays and the 72-byte span.
        unsafe {
            let mut all = _mm_set1_epi8(-1);
            for k in 0..chunks {
                let load = |bytes: &[u8]| _mm_loadu_si128(bytes.as_ptr().add(16 * k).cast::<__m128i>());
                let (x, limit) = (_mm_xor_si128(load(span), load(&self.xor)), load(&self.limit));
                all = _mm_and_si128(all, _mm_cmpeq_epi8(_mm_max_epu8(x, limit), limit));
            }
            _mm_movemask_epi8(all) == 0xFFFF
        }
    }

    /// [`matches`](Self::matches) a byte at a time (other targets; on x86_64 the tests'
    /// reference).
    #[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
    fn matches_bytes(&self, span: &[u8; NEEDED], chunks: usize) -> bool {
        let n = 16 * chunks.min(SPAN / 16);
        span[..n].iter().zip(&self.xor[..n]).zip(&self.limit[..n]).all(|((b, x), limit)| b ^ x <= *limit)
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    #[inline(always)]
    pub(super) fn matches(&self, span: &[u8; NEEDED], chunks: usize) -> bool {
        self.matches_bytes(span, chunks)
    }
}

/// The commas among the first 32 bytes of `span`, bit `k` for byte `k`: with SSE2 (part of
/// every x86_64 target), two compares and two masks.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn commas(span: &[u8; NEEDED]) -> u32 {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: the build enables SSE2 (the cfg above), which these intrinsics need; the loads
    // read bytes 0..32 of the 72-byte span.
    unsafe {
        let mask = |k: usize| {
            let chunk = _mm_loadu_si128(span.as_ptr().add(16 * k).cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8(b',' as i8))) as u32 & 0xFFFF
        };
        mask(0) | mask(1) << 16
    }
}

/// [`commas`] a byte at a time (other targets; on x86_64 the tests' reference).
#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
fn commas_bytes(span: &[u8; NEEDED]) -> u32 {
    span[..32].iter().enumerate().fold(0, |mask, (k, b)| mask | u32::from(*b == b',') << k)
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn commas(span: &[u8; NEEDED]) -> u32 {
    commas_bytes(span)
}

/// Where one number of a row shape is and how the word read there converts.
#[derive(Copy, Clone, Default)]
struct Field {
    /// Its first byte in the span.
    start: u32,
    /// Left shift moving its digits (the dot taken out) to the top of the word.
    shift: u32,
    /// The bytes before its dot (all of them when it has none); the rest move down a byte.
    low: u64,
    /// 10 to the number of fraction digits.
    scale: f64,
}

/// A row's numbers written one way: its bytes up to where the last number ends (commas,
/// dots, and digits everywhere else) and the byte after that number as it was (neither a
/// digit nor a dot).
#[derive(Copy, Clone)]
struct Shape {
    /// Its commas among the first 32 bytes (see [`commas`]), and those bytes of the span that
    /// it fixes: a span whose [`commas`] differ there is not of this shape.
    commas: u32,
    commas_mask: u32,
    pattern: Pattern,
    /// The 16-byte chunks holding the bytes up to `end`.
    chunks: usize,
    /// Where the last number ends (the byte after it).
    end: usize,
    /// The byte after the last number is a line feed: the row ends there.
    line_ends: bool,
    fields: [Field; FIELDS],
    /// For [`convert_ssse3`]: where the 16 bytes holding each number are loaded from, and
    /// the shuffle moving its digits (the dot taken out) to the top of its pair's half.
    loads: [u8; FIELDS],
    shuffles: [[u8; 16]; FIELDS],
    /// Each number's `scale`, the pairs side by side.
    scales: [f64; FIELDS + 1],
    /// When every number has at most four digits, each lying within 32 bytes of its quad's
    /// first: the numbers by fours, for [`convert_quads`] (else none).
    quads: [Quad; QUADS],
    quads_len: usize,
}

/// Most quads a row shape has.
const QUADS: usize = FIELDS.div_ceil(4);

/// Four consecutive numbers of up to four digits (fewer in a row's last quad), converted
/// together by [`convert_quads`].
#[derive(Copy, Clone)]
struct Quad {
    /// Where the two 16-byte loads start (at most `NEEDED - 32`).
    load: u8,
    /// The first number's place in the row's values.
    first: u8,
    /// The shuffles taking each number's digits (the dot taken out) from the first and the
    /// second load to the end of its 4-byte slot, leading bytes zero.
    shuffles: [[u8; 16]; 2],
    /// Each number's `scale` (1 for an empty slot).
    scales: [f64; 4],
}

impl Quad {
    const EMPTY: Quad = Quad { load: 0, first: 0, shuffles: [[0x80; 16]; 2], scales: [1.0; 4] };

    /// The quad of the numbers `fields` (each with its length, dot included, and its digit
    /// count) of a span with its dots at `dots`; `first` is the first one's place in the row's
    /// values. `None` unless every digit lies within 32 bytes of the load.
    fn new(fields: &[(Field, u32, u32)], dots: u64, first: usize) -> Option<Quad> {
        let start = fields.first()?.0.start;
        let load = start.min((NEEDED - 32) as u32);
        let mut quad = Quad { load: load as u8, first: first as u8, ..Quad::EMPTY };
        for (j, (field, len, digits)) in fields.iter().enumerate().take(4) {
            if *digits > 4 || field.start + len > load + 32 {
                return None;
            }
            quad.scales[j] = field.scale;
            let places = (field.start..field.start + len).filter(|p| dots >> p & 1 == 0);
            for (at, place) in (4 * j + 4 - *digits as usize..).zip(places) {
                let rel = (place - load) as usize;
                quad.shuffles[rel / 16 % 2][at % 16] = (rel % 16) as u8;
            }
        }
        Some(quad)
    }
}

impl Shape {
    /// The shape of a span holding `count` numbers (1..=[`FIELDS`]) after its first byte, a
    /// comma: each one to eight digits with at most one dot between two digits, commas between
    /// them, all ending inside the span. `None` for any other span.
    fn new(span: &[u8; NEEDED], count: usize) -> Option<Shape> {
        let classes = Classes::of(span.first_chunk()?);
        let ends = !(classes.digits | classes.dots);
        if classes.commas & 1 == 0 || count == 0 {
            return None;
        }
        let mut fields = [Field::default(); FIELDS];
        let mut sized = [(Field::default(), 0, 0); FIELDS];
        let (mut loads, mut shuffles, mut scales) = ([0; FIELDS], [[0x80; 16]; FIELDS], [1.0; FIELDS + 1]);
        let mut at = 0u32;
        for k in 0..count {
            let start = at + 1;
            let end = start + ends.checked_shr(start)?.trailing_zeros();
            let len = end - start;
            if end >= SPAN as u32 || len == 0 || len > 8 {
                return None;
            }
            let dots = (classes.dots >> start) & ((1 << len) - 1);
            let (low, digits, frac) = match dots.trailing_zeros() {
                64 => (u64::MAX, len, 0),
                j if dots & (dots - 1) == 0 && j > 0 && j < len - 1 => {
                    ((1 << (8 * j)) - 1, len - 1, len - 1 - j)
                }
                _ => return None,
            };
            *fields.get_mut(k)? =
                Field { start, shift: 64 - 8 * digits, low, scale: POW10_F64[frac as usize] };
            scales[k] = POW10_F64[frac as usize];
            sized[k] = (fields[k], len, digits);
            let load = start.min((NEEDED - 16) as u32);
            loads[k] = load as u8;
            let half = &mut shuffles[k][8 * (k % 2)..8 * (k % 2) + 8];
            let digit_at = (0..len).filter(|n| dots >> n & 1 == 0).map(|n| (start + n - load) as u8);
            for (slot, at) in half[(8 - digits) as usize..].iter_mut().zip(digit_at) {
                *slot = at;
            }
            if k + 1 < count && classes.commas >> end & 1 == 0 {
                return None;
            }
            at = end;
        }
        let end = at as usize;
        let pattern = Pattern::new(span.get(..=end)?, classes.digits);
        let mut quads = [Quad::EMPTY; QUADS];
        let mut quads_len = 0;
        for (k, (quad, numbers)) in quads.iter_mut().zip(sized[..count].chunks(4)).enumerate() {
            match Quad::new(numbers, classes.dots, 4 * k + 1) {
                Some(q) => (*quad, quads_len) = (q, k + 1),
                None => {
                    quads_len = 0;
                    break;
                }
            }
        }
        let commas_mask = u32::MAX >> (31 - end.min(31));
        Some(Shape {
            commas: classes.commas as u32 & commas_mask,
            commas_mask,
            pattern,
            chunks: (end + 1).div_ceil(16),
            end,
            line_ends: span[end % SPAN] == b'\n',
            fields,
            loads,
            shuffles,
            scales,
            quads,
            quads_len,
        })
    }

    /// True when `span`, whose [`commas`] are `commas`, has this shape.
    #[inline(always)]
    fn fits(&self, span: &[u8; NEEDED], commas: u32) -> bool {
        commas & self.commas_mask == self.commas && self.pattern.matches(span, self.chunks)
    }
}

/// The shapes of the last rows read with a new one, for rows of `count` numbers.
pub(super) struct RowShapes {
    shapes: Vec<Shape>,
    count: usize,
    /// Rows that needed a new shape, and rows read by a kept one (wrapping: only a heuristic):
    /// a file whose rows rarely repeat a shape stops being read this way (`off`).
    built: u32,
    hits: u32,
    off: bool,
    /// The CPU has SSSE3: numbers are converted by [`convert_ssse3`] (or [`convert_quads`]
    /// where a shape has quads and `quads` is set; the tests clear it to try the pairs).
    ssse3: bool,
    quads: bool,
}

impl RowShapes {
    /// No shapes yet, for rows of `count` numbers; `None` for more than [`FIELDS`].
    pub(super) fn new(count: usize) -> Option<RowShapes> {
        (count <= FIELDS).then(|| RowShapes {
            shapes: Vec::with_capacity(KEPT),
            count,
            built: 0,
            hits: 0,
            off: false,
            ssse3: has_ssse3(),
            quads: true,
        })
    }

    /// The numbers of the span at the comma before a row's first number into
    /// `values[1..=count]`, where the last one ends (the byte after it) and whether that byte
    /// is a line feed, when the span has a kept shape or a new one; `None` leaves the row to
    /// another reader.
    #[inline(always)]
    pub(super) fn read(&mut self, span: &[u8; NEEDED], values: &mut Values) -> Option<(usize, bool)> {
        let (count, ssse3) = (self.count, self.ssse3);
        if self.off {
            return None;
        }
        let commas = commas(span);
        let shape = match self.shapes.iter().find(|s| s.fits(span, commas)) {
            Some(shape) => {
                self.hits = self.hits.wrapping_add(1);
                shape
            }
            None => self.add(span)?,
        };
        #[cfg(target_arch = "x86_64")]
        if ssse3 {
            // SAFETY: `ssse3` is set only when the CPU has SSSE3 (`has_ssse3`).
            unsafe {
                match shape.quads_len {
                    0 => convert_ssse3(shape, span, values, count),
                    _ => convert_quads(shape, span, values),
                }
            };
            return Some((shape.end, shape.line_ends));
        }
        convert(shape, span, values, count);
        Some((shape.end, shape.line_ends))
    }

    /// A new shape for `span`, kept in place of the last one when the table is full (none once
    /// new shapes outnumber an eighth of the rows read by kept ones, after the first 16).
    #[cold]
    #[inline(never)]
    fn add(&mut self, span: &[u8; NEEDED]) -> Option<&Shape> {
        self.built = self.built.saturating_add(1);
        if self.built > 16 && self.built > self.hits / 8 {
            self.off = true;
            return None;
        }
        let mut shape = Shape::new(span, self.count)?;
        if !self.quads {
            shape.quads_len = 0;
        }
        if self.shapes.len() == KEPT {
            self.shapes.pop();
        }
        self.shapes.push(shape);
        self.shapes.last()
    }
}

/// True when the CPU has SSSE3 (std caches what it finds).
fn has_ssse3() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("ssse3");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The `count` numbers of a span of `shape` into `values[1..=count]`, one word each.
#[inline(always)]
fn convert(shape: &Shape, span: &[u8; NEEDED], values: &mut Values, count: usize) {
    for (value, field) in values[1..].iter_mut().zip(&shape.fields[..count.min(FIELDS)]) {
        let at = field.start as usize % SPAN;
        let Some(word) = span[at..].first_chunk::<8>() else { return };
        let x = u64::from_le_bytes(*word) ^ ZEROS;
        let joined = (x & field.low) | ((x >> 8) & !field.low);
        *value = digit_values(joined << field.shift) as i64 as f64 / field.scale;
    }
}

/// [`convert`] two numbers at once: each one's digit values shuffled into its half of a
/// register (leading zeros before them), digit pairs, then fours, then eights summed by
/// multiply-adds, both converted and divided by their scales together.
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn convert_ssse3(shape: &Shape, span: &[u8; NEEDED], values: &mut Values, count: usize) {
    use std::arch::x86_64::{
        __m128i, _mm_cvtepi32_pd, _mm_div_pd, _mm_loadu_pd, _mm_loadu_si128, _mm_madd_epi16,
        _mm_maddubs_epi16, _mm_or_si128, _mm_packs_epi32, _mm_set1_epi8, _mm_set1_epi16, _mm_set1_epi32,
        _mm_shuffle_epi8, _mm_storel_pd, _mm_storeu_pd, _mm_sub_epi8,
    };
    let count = count.min(FIELDS);
    let mut k = 0;
    while k < count {
        // SAFETY: SSSE3 is enabled (the caller's promise); each number is loaded from
        // `span[loads[k]..][..16]` with `loads[k] <= NEEDED - 16`; the scales read are
        // `scales[k..k + 2]` with `k + 1 <= FIELDS`; the stores go to `values[k + 1..]` through
        // checked slices of one or two entries.
        unsafe {
            let digits = |k: usize| {
                let at = usize::from(shape.loads[k]).min(NEEDED - 16);
                let bytes =
                    _mm_sub_epi8(_mm_loadu_si128(span.as_ptr().add(at).cast()), _mm_set1_epi8(b'0' as i8));
                _mm_shuffle_epi8(bytes, _mm_loadu_si128(shape.shuffles[k].as_ptr().cast::<__m128i>()))
            };
            let pair = if k + 1 < count { _mm_or_si128(digits(k), digits(k + 1)) } else { digits(k) };
            let twos = _mm_maddubs_epi16(pair, _mm_set1_epi16(0x010A));
            let fours = _mm_madd_epi16(twos, _mm_set1_epi32(0x0001_0064));
            let eights = _mm_madd_epi16(_mm_packs_epi32(fours, fours), _mm_set1_epi32(0x0001_2710));
            let scaled = _mm_div_pd(_mm_cvtepi32_pd(eights), _mm_loadu_pd(shape.scales[k..].as_ptr()));
            if k + 1 < count {
                if let Some(out) = values.get_mut(k + 1..k + 3) {
                    _mm_storeu_pd(out.as_mut_ptr(), scaled);
                }
            } else if let Some(out) = values.get_mut(k + 1) {
                _mm_storel_pd(out, scaled);
            }
        }
        k += 2;
    }
}

/// [`convert_ssse3`] for a shape of quads (all numbers of up to four digits): each quad's
/// digits shuffled from two loads into 4-byte slots, summed by two multiply-adds, converted and
/// divided by their scales two at a time, all four stored (past the row's numbers, the last
/// quad's empty slots write zeros into `values` entries no column reads).
///
/// # Safety
/// The CPU must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn convert_quads(shape: &Shape, span: &[u8; NEEDED], values: &mut Values) {
    use std::arch::x86_64::{
        __m128i, _mm_cvtepi32_pd, _mm_div_pd, _mm_loadu_pd, _mm_loadu_si128, _mm_madd_epi16,
        _mm_maddubs_epi16, _mm_or_si128, _mm_set1_epi8, _mm_set1_epi16, _mm_set1_epi32, _mm_shuffle_epi8,
        _mm_shuffle_epi32, _mm_storeu_pd, _mm_subs_epu8,
    };
    for quad in &shape.quads[..shape.quads_len.min(QUADS)] {
        let at = usize::from(quad.load).min(NEEDED - 32);
        let first = usize::from(quad.first) % MAX_FIELDS;
        let out = &mut values[first..first + 4];
        // SAFETY: SSSE3 is enabled (the caller's promise); the loads read `span[at..at + 32]`
        // with `at <= NEEDED - 32`, the quad's shuffles and scales; the stores write `out`,
        // four entries.
        unsafe {
            let load = |from: usize| _mm_loadu_si128(span.as_ptr().add(from).cast::<__m128i>());
            let shuffle = |m: usize| _mm_loadu_si128(quad.shuffles[m].as_ptr().cast::<__m128i>());
            let bytes = _mm_or_si128(
                _mm_shuffle_epi8(load(at), shuffle(0)),
                _mm_shuffle_epi8(load(at + 16), shuffle(1)),
            );
            // Digits become 0..=9; the zeroed slots stay 0.
            let digits = _mm_subs_epu8(bytes, _mm_set1_epi8(b'0' as i8));
            let twos = _mm_maddubs_epi16(digits, _mm_set1_epi16(0x010A));
            let fours = _mm_madd_epi16(twos, _mm_set1_epi32(0x0001_0064));
            let low = _mm_div_pd(_mm_cvtepi32_pd(fours), _mm_loadu_pd(quad.scales.as_ptr()));
            let high = _mm_div_pd(
                _mm_cvtepi32_pd(_mm_shuffle_epi32::<0b1110>(fours)),
                _mm_loadu_pd(quad.scales.as_ptr().add(2)),
            );
            _mm_storeu_pd(out.as_mut_ptr(), low);
            _mm_storeu_pd(out.as_mut_ptr().add(2), high);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::columns::parse_f64;
    use proptest::prelude::*;

    fn span(text: &[u8]) -> [u8; NEEDED] {
        let mut span = [b'x'; NEEDED];
        span[..text.len().min(NEEDED)].copy_from_slice(&text[..text.len().min(NEEDED)]);
        span
    }

    #[test]
    fn patterns_match_alike_sixteen_bytes_at_once_and_one_at_a_time() {
        let mut state = 3u64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            state
        };
        let mut outcomes = [0; 2];
        for _ in 0..5_000 {
            let mut pattern = Pattern { xor: [0; SPAN], limit: [0; SPAN] };
            let mut span = [0u8; NEEDED];
            for (k, byte) in span.iter_mut().enumerate() {
                let r = next();
                if k < SPAN {
                    pattern.xor[k] = [b'0', b',', b'.', (r >> 40) as u8][(r >> 60) as usize % 4];
                    pattern.limit[k] = [9, 0, 255, (r >> 8) as u8][(r >> 50) as usize % 4];
                }
                // Mostly a byte that matches (or would, past the pattern), sometimes any byte.
                let (x, limit) = (pattern.xor[k % SPAN], pattern.limit[k % SPAN]);
                *byte = if r >> 58 == 0 {
                    (r >> 16) as u8
                } else {
                    x ^ ((r >> 24) as u8 % limit.saturating_add(1).max(1))
                };
            }
            for chunks in 1..=5 {
                let matches = pattern.matches(&span, chunks);
                assert_eq!(matches, pattern.matches_bytes(&span, chunks), "{span:?} {chunks}");
                outcomes[usize::from(matches)] += 1;
            }
            assert_eq!(commas(&span), commas_bytes(&span), "{span:?}");
        }
        assert!(outcomes.iter().all(|n| *n > 1_000), "{outcomes:?}");
        let c = Classes::of(span(b",12.5,7/:-\xb0")[..SPAN].try_into().unwrap());
        assert_eq!((c.commas & 0x3FF, c.dots & 0x3FF, c.digits & 0x3FF), (0b10_0001, 0b1000, 0b101_0110));
    }

    #[test]
    fn patterns_of_bytes_match_those_bytes_and_digits_where_asked() {
        let text = b",12.5,7\n";
        let pattern = Pattern::new(text, 0b0101_0110);
        let fits = |bytes: &[u8]| pattern.matches(&span(bytes), 1);
        assert!(fits(b",12.5,7\n") && fits(b",98.0,0\nmore") && fits(b",00.0,9\n\xff"));
        for other in [&b",1a.5,7\n"[..], b",12,5,7\n", b".12.5,7\n", b",12.5,7\r", b",12.5,77", b",12.5;7\n"]
        {
            assert!(!fits(other), "{}", String::from_utf8_lossy(other));
        }
        // Digits asked for past the bytes are not: any byte matches there.
        assert!(Pattern::new(b"", u64::MAX).matches(&span(b"xyz"), 4));
        assert!(Pattern::new(&[b'a'; SPAN + 4], u64::MAX).matches(&span(&[b'5'; SPAN]), 4));
    }

    /// Reads `rows` (each the numbers after the time, from the comma on) with one table:
    /// every row read gives the general parser's values, and ends where its last number does.
    fn agree(rows: &[String], count: usize) {
        convert_alike(rows, count);
        let mut shapes = RowShapes::new(count).unwrap();
        for row in rows {
            let mut values = [f64::NAN; MAX_FIELDS + 3];
            let Some((end, line_ends)) = shapes.read(&span(row.as_bytes()), &mut values) else { continue };
            let after = row.as_bytes().get(end).copied().unwrap_or(b'x');
            assert!(!after.is_ascii_digit() && after != b'.', "{row}");
            assert_eq!(line_ends, after == b'\n', "{row}");
            let cells: Vec<&str> = row[1..end].split(',').collect();
            assert_eq!(cells.len(), count, "{row}");
            for (k, cell) in cells.iter().enumerate() {
                let general = parse_f64(cell.as_bytes()).filter(|v| *v >= 0.0).map(f64::to_bits);
                assert_eq!(Some(values[k + 1].to_bits()), general, "{row}: {cell}");
            }
        }
    }

    /// Reads `rows` with a table converting one number at a time and one converting with SSSE3
    /// (where the CPU has it): the same rows read, to the same bits.
    fn convert_alike(rows: &[String], count: usize) {
        let mut tables = [(false, false), (has_ssse3(), false), (has_ssse3(), true)]
            .map(|(ssse3, quads)| RowShapes { ssse3, quads, ..RowShapes::new(count).unwrap() });
        for row in rows {
            let span = span(row.as_bytes());
            let read = tables.each_mut().map(|table| {
                let mut values = [f64::NAN; MAX_FIELDS + 3];
                table
                    .read(&span, &mut values)
                    .map(|end| (end, values[..=count].iter().map(|v| v.to_bits()).collect::<Vec<_>>()))
            });
            assert_eq!(read[0], read[1], "{row}");
            assert_eq!(read[0], read[2], "{row}");
        }
    }

    #[test]
    fn rows_read_by_shape_match_the_general_parser() {
        let rows: Vec<String> = [
            ",4523,17,95.0,199.5,285.0,617.5\n",
            ",4524,7,95.1,199.7,285.3,617.9\n",
            ",5999,59,119.9,251.7,359.7,779.3\n",
            ",0001,00,0.001,12345678,1234567.8,1.2345678\r\n",
            ",1,2,3,4,5,6,x\n",
            ",1,2,3,4,5,6\n",
            ",1,2,3,4,5\n",
            ",1,2,3,4,5,6.\n",
            ",1,2,3,4,5,.6\n",
            ",1,2,3,4,5,1.2.3\n",
            ",1,2,3,4,5,123456789\n",
            ",1,2,3,4,5,1e5\n",
            ",1,-2,3,4,5,6\n",
            ",1,2,,4,5,6\n",
            ",1, 2,3,4,5,6\n",
            ",1;2,3,4,5,6,7\n",
        ]
        .iter()
        .map(|r| r.to_string())
        .collect();
        agree(&rows, 6);
        let mut shapes = RowShapes::new(6).unwrap();
        let mut values = [0.0; MAX_FIELDS + 3];
        assert_eq!(shapes.read(&span(rows[0].as_bytes()), &mut values), Some((31, true)));
        assert_eq!(values[1..7], [4523.0, 17.0, 95.0, 199.5, 285.0, 617.5]);
        // A row written as the first is read by its shape; one with a shorter number needs another.
        assert_eq!(shapes.read(&span(b",4524,18,95.1,199.7,285.3,617.9\n"), &mut values), Some((31, true)));
        assert_eq!((shapes.shapes.len(), shapes.hits, values[3]), (1, 1, 95.1));
        assert_eq!(shapes.read(&span(rows[1].as_bytes()), &mut values), Some((30, true)));
        assert_eq!((shapes.shapes.len(), shapes.hits, values[6]), (2, 1, 617.9));
        for declined in [&b",1,2,3,4,5,6."[..], b",1,2,3,4,5,.6\n", b",1,2,,4,5,6\n", b"1,2,3,4,5,6,7\n"] {
            assert_eq!(RowShapes::new(6).unwrap().read(&span(declined), &mut values), None);
        }
        // A number running past the span.
        let long = format!(",{}1,2,3,4,5,6\n", "0".repeat(60));
        assert_eq!(RowShapes::new(6).unwrap().read(&span(long.as_bytes()), &mut values), None);
        assert!(RowShapes::new(FIELDS + 1).is_none());
    }

    #[test]
    fn a_file_of_ever_new_shapes_stops_being_read_so() {
        let mut shapes = RowShapes::new(1).unwrap();
        let mut values = [0.0; MAX_FIELDS + 3];
        // Numbers of one to eight digits in turn: eight shapes, four kept.
        let read: Vec<bool> = (0..80u32)
            .map(|n| {
                let row = format!(",{}\n", 10u64.pow(n % 8));
                shapes.read(&span(row.as_bytes()), &mut values).is_some()
            })
            .collect();
        assert!(read[..8].iter().all(|r| *r) && !read[79] && shapes.off, "{read:?}");
    }

    proptest! {
        #[test]
        fn random_rows_read_as_the_general_parser_reads_them(
            rows in prop::collection::vec(prop::collection::vec(
                "[0-9]{1,3}|[0-9]{1,2}\\.[0-9]{1,2}|[0-9]{1,4}\\.[0-9]|[0-9]{5,9}(\\.[0-9]{1,3})?|[0-9]\\.|\\.[0-9]|-1|1e3|", 4), 1..40),
            end in prop::sample::select(vec!["\n", "\r\n", ",x\n", ".5\n", "5", ""]),
        ) {
            let rows: Vec<String> = rows.iter().map(|cells| format!(",{}{end}", cells.join(","))).collect();
            agree(&rows, 4);
        }

        #[test]
        fn rows_of_any_width_convert_alike_with_and_without_ssse3(
            rows in prop::collection::vec(prop::collection::vec("[0-9]{1,8}|[0-9]{1,4}\\.[0-9]{1,4}|[0-9]\\.[0-9]{6}", 15), 1..20),
            count in 1usize..=FIELDS,
        ) {
            let rows: Vec<String> = rows.iter().map(|cells| format!(",{}\n", cells[..count].join(","))).collect();
            agree(&rows, count);
        }

        #[test]
        fn rows_of_short_numbers_convert_alike_with_and_without_ssse3(
            rows in prop::collection::vec(prop::collection::vec(
                "[0-9]{1,4}|[0-9]{1,2}\\.[0-9]{1,2}|[0-9]\\.[0-9]{1,3}|[0-9]{1,3}\\.[0-9]|[0-9]{2}|[0-9]\\.[0-9]|[0-9]{5,8}|[0-9]{4}\\.[0-9]{1,4}", 15), 1..20),
            count in 1usize..=FIELDS,
        ) {
            let rows: Vec<String> = rows.iter().map(|cells| format!(",{}\n", cells[..count].join(","))).collect();
            agree(&rows, count);
        }
    }
}
