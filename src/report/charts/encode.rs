//! PNG encoding of an RGB bitmap: every row Paeth-filtered, the rows deflated by `fdeflate`
//! (zero runs and fixed Huffman codes), as one IDAT chunk. The bytes are those of `png`'s
//! fast compression with the Paeth filter (the encoder the charts used before), made faster:
//! the filter is written so the compiler processes a row many bytes at a time.

use std::io::Cursor;

/// Bytes per pixel (RGB, 8 bits a channel).
const BPP: usize = 3;

/// The PNG of an RGB bitmap of `width` × `height` pixels (`rgb`: 3 bytes a pixel, row by
/// row). `None` if `rgb` is not that long or a side is 0 or too large for PNG.
pub fn rgb_png(rgb: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    let row = (width as usize).checked_mul(BPP)?;
    if width == 0 || height == 0 || width > i32::MAX as u32 || height > i32::MAX as u32 {
        return None;
    }
    if row.checked_mul(height as usize)? != rgb.len() {
        return None;
    }
    let idat = deflated_rows(rgb, row).ok()?;
    let mut png = Vec::with_capacity(idat.len() + 57);
    png.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    // 8 bits a channel, colour type 2 (RGB), deflate, adaptive filtering, no interlace.
    ihdr[8..].copy_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    // One IDAT holds up to 2^31 - 1 bytes; more is split as `png` splits it.
    for part in idat.chunks(i32::MAX as usize) {
        chunk(&mut png, b"IDAT", part);
    }
    chunk(&mut png, b"IEND", &[]);
    Some(png)
}

/// The zlib stream of the rows of `rgb` (`row` bytes each), each Paeth-filtered and prefixed by
/// its filter type, as `png` writes it; stored uncompressed (and unfiltered) if that is
/// smaller, as `png` does.
fn deflated_rows(rgb: &[u8], row: usize) -> std::io::Result<Vec<u8>> {
    let rows = rgb.len() / row;
    let mut deflate = fdeflate::Compressor::new(Cursor::new(Vec::with_capacity(rgb.len() / 16)))?;
    let mut filtered = vec![0u8; row + 1];
    filtered[0] = 4; // Paeth
    let zeros = vec![0u8; row];
    let mut prev: &[u8] = &zeros;
    for line in rgb.chunks_exact(row) {
        paeth(prev, line, &mut filtered[1..]);
        deflate.write_data(&filtered)?;
        prev = line;
    }
    let compressed = deflate.finish()?.into_inner();
    if compressed.len() <= fdeflate::StoredOnlyCompressor::<()>::compressed_size((row + 1) * rows) {
        return Ok(compressed);
    }
    let mut stored = fdeflate::StoredOnlyCompressor::new(Cursor::new(Vec::new()))?;
    for line in rgb.chunks_exact(row) {
        stored.write_data(&[0])?;
        stored.write_data(line)?;
    }
    Ok(stored.finish()?.into_inner())
}

/// Paeth-filters the row `cur` under `prev` (zeros above the first row) into `out`, with the
/// wider vector instructions of AVX2 where the processor has them.
fn paeth(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor supports AVX2, checked above.
        return unsafe { paeth_avx2(prev, cur, out) };
    }
    paeth_rows(prev, cur, out);
}

/// [`paeth_rows`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn paeth_avx2(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    paeth_rows(prev, cur, out);
}

/// [`paeth`], written for the compiler to vectorize (the predictor without branches).
#[inline(always)]
fn paeth_rows(prev: &[u8], cur: &[u8], out: &mut [u8]) {
    let n = cur.len();
    // Nothing to the left: the predictor is the byte above.
    for i in 0..n.min(BPP) {
        out[i] = cur[i].wrapping_sub(prev[i]);
    }
    if n <= BPP {
        return;
    }
    let (left, above, corner) = (&cur[..n - BPP], &prev[BPP..], &prev[..n - BPP]);
    let pairs = out[BPP..].iter_mut().zip(&cur[BPP..]).zip(left.iter().zip(above).zip(corner));
    for ((o, &x), ((&a, &b), &c)) in pairs {
        *o = x.wrapping_sub(predict(a, b, c));
    }
}

/// The Paeth predictor of a byte from its left (`a`), upper (`b`) and upper-left (`c`)
/// neighbours: whichever is nearest to `a + b - c`, ties to `a`, then `b`. Written in bytes
/// (maxima, minima, saturating sums), which the compiler turns into vector instructions on 32
/// bytes at a time: the distances to `a` and `b` are `|b - c|` and `|a - c|`; the distance to
/// `c`, `|(b - c) + (a - c)|`, is their sum when both differences have the same sign (capped at
/// 255, which orders it the same against the other two, both at most 255), else their
/// difference.
#[inline(always)]
fn predict(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.max(c) - b.min(c);
    let pb = a.max(c) - a.min(c);
    let same_sign = (b.max(c) == b) == (a.max(c) == a);
    let pc = if same_sign { pa.saturating_add(pb) } else { pa.max(pb) - pa.min(pb) };
    // `a` when its distance is the least; else `b` when its distance is at most `c`'s.
    let least = pb.min(pc);
    let b_or_c = if least == pb { b } else { c };
    if pa.min(least) == pa { a } else { b_or_c }
}

/// Appends the chunk `kind` holding `data` (length, type, data, CRC of type and data).
fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    png.extend_from_slice(&crc.finalize().to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the charts' encoder was: `image`'s PNG encoder, fast compression, Paeth filter.
    fn oracle(rgb: &[u8], w: u32, h: u32) -> Vec<u8> {
        use image::ImageEncoder as _;
        use image::codecs::png::{CompressionType, FilterType, PngEncoder};
        let mut bytes = Vec::new();
        PngEncoder::new_with_quality(&mut bytes, CompressionType::Fast, FilterType::Paeth)
            .write_image(rgb, w, h, image::ColorType::Rgb8)
            .unwrap();
        bytes
    }

    /// A deterministic pseudo-random byte stream.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    #[test]
    fn the_bytes_are_those_of_the_former_encoder() {
        // Flat areas, edges, gradients and noise (which is stored, not compressed), at widths
        // whose rows leave every remainder of 8 bytes.
        for (w, h) in [(1, 1), (1, 5), (2, 3), (3, 1), (7, 9), (33, 17), (160, 90), (401, 13)] {
            let n = (w * h * 3) as usize;
            let flat = vec![255u8; n];
            let mut drawn = flat.clone();
            for (i, p) in drawn.chunks_mut(3).enumerate() {
                let (x, y) = (i as u32 % w, i as u32 / w);
                if (x + 2 * y) % 11 < 3 {
                    p.copy_from_slice(&[0x00, 0x72, (x * 7 + y) as u8]);
                }
            }
            for (name, rgb) in [("flat", flat), ("drawn", drawn), ("noise", noise(n, u64::from(w * h)))] {
                assert!(rgb_png(&rgb, w, h).unwrap() == oracle(&rgb, w, h), "{name} {w}x{h}");
            }
        }
    }

    #[test]
    fn the_predictor_is_paeths_on_every_triple() {
        for (a, b, c) in
            (0..=255u8).flat_map(|a| (0..=255u8).flat_map(move |b| (0..=255u8).map(move |c| (a, b, c))))
        {
            let p = i16::from(a) + i16::from(b) - i16::from(c);
            let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
            let expected = if pa <= pb && pa <= pc {
                a
            } else if pb <= pc {
                b
            } else {
                c
            };
            assert_eq!(predict(a, b, c), expected, "{a} {b} {c}");
        }
        // The portable rows and the AVX2 rows agree.
        let (prev, cur) = (noise(3 * 301, 7), noise(3 * 301, 8));
        let (mut x, mut y) = (vec![0; cur.len()], vec![0; cur.len()]);
        paeth(&prev, &cur, &mut x);
        paeth_rows(&prev, &cur, &mut y);
        assert_eq!(x, y);
    }

    #[test]
    fn a_wrong_size_is_refused() {
        assert_eq!(rgb_png(&[0; 9], 2, 2), None);
        assert_eq!(rgb_png(&[], 0, 0), None);
        assert_eq!(rgb_png(&[0; 3], 1, 0), None);
        assert_eq!(rgb_png(&[0; 3], u32::MAX, 1), None);
    }
}
