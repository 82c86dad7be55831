//! A short plain row read 16 bytes at once (x86_64 CPUs with SSSE3, found at run time by
//! [`available`]): its commas, line end and digits found by SSE2 compares (a bit a byte), its two
//! numbers converted by SSSE3 multiply-adds. Wherever [`row`] answers it answers as
//! [`short_row`](super::plain::short_row); the rows it leaves (longer than 16 bytes, a latency of
//! 5 digits or more, anything not plain) go to that one.

use super::plain::WINDOW;

/// Whether this CPU can run [`row`] (and has SSE4.2, for the streamed script's checks).
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("ssse3") && std::arch::is_x86_feature_detected!("sse4.2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Most digits of a latency [`row`] converts (those of a time are bounded by the 16 bytes).
const LATENCY_DIGITS: usize = 4;

/// One shape of a row within 16 bytes (a cache line): byte `k` matches when `byte ^ xor[k] <= limit[k]`, and
/// `shuffle` moves the matched row's digits (its bytes `^ xor`) into 16 slots: the time's
/// right-aligned in the first 12 and the latency's in the last 4 (`0x80`: a zero).
#[cfg(target_arch = "x86_64")]
#[repr(C, align(64))]
struct Shape {
    xor: [u8; 16],
    limit: [u8; 16],
    shuffle: [u8; 16],
}

/// The shapes by the first comma `t` and the first line end `n` (entry `t * 16 + n`): `t` digits
/// of time, a comma, `n - t - 3` of latency (1 to [`LATENCY_DIGITS`]), a comma, `0` or `1` and
/// the line end. Any other entry wants a digit at `n`, where a line end is: it never matches.
#[cfg(target_arch = "x86_64")]
static SHAPES: [Shape; 256] = {
    let mut shapes = [const { Shape { xor: [0; 16], limit: [0xFF; 16], shuffle: [0x80; 16] } }; 256];
    let mut i = 0;
    while i < 256 {
        let (t, n) = (i / 16, i % 16);
        let s = &mut shapes[i];
        if t == 0 || n < t + 4 || n > t + 3 + LATENCY_DIGITS {
            (s.xor[n], s.limit[n]) = (b'0', 9);
        } else {
            let l = n - t - 3;
            let mut k = 0;
            while k < n - 1 {
                (s.xor[k], s.limit[k]) = if k == t || k == n - 2 { (b',', 0) } else { (b'0', 9) };
                k += 1;
            }
            (s.xor[n - 1], s.limit[n - 1]) = (b'0', 1);
            (s.xor[n], s.limit[n]) = (b'\n', 0);
            k = 0;
            while k < t {
                s.shuffle[12 - t + k] = k as u8;
                k += 1;
            }
            k = 0;
            while k < l {
                s.shuffle[16 - l + k] = (t + 1 + k) as u8;
                k += 1;
            }
        }
        i += 1;
    }
    shapes
};

/// The plain row of the short shape at the start of `w`, when it is within its first 16 bytes
/// with a latency of at most [`LATENCY_DIGITS`] digits: its time and latency in milliseconds,
/// `ok` and its length with the `\n`; `None` for any other row.
///
/// # Safety
/// The CPU must have SSSE3 ([`available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
#[inline]
pub(super) unsafe fn row(w: &[u8; WINDOW]) -> Option<(u64, u64, bool, usize)> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_load_si128, _mm_loadu_si128, _mm_madd_epi16,
        _mm_maddubs_epi16, _mm_max_epu8, _mm_movemask_epi8, _mm_set1_epi8, _mm_set1_epi16, _mm_set1_epi32,
        _mm_shuffle_epi8, _mm_unpackhi_epi64, _mm_xor_si128,
    };
    // SAFETY: reads the first 16 of the window's 40 bytes.
    let v = unsafe { _mm_loadu_si128(w.as_ptr().cast::<__m128i>()) };
    let bits = |b: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u32;
    // The line end (32 when not in these 16 bytes) and the first comma.
    let n = bits(b'\n').trailing_zeros();
    if n > 15 {
        return None;
    }
    let shape = &SHAPES[((bits(b',').trailing_zeros() & 15) * 16 + n) as usize];
    // SAFETY: aligned 16-byte loads of the shape's arrays.
    let load = |a: &[u8; 16]| unsafe { _mm_load_si128(a.as_ptr().cast::<__m128i>()) };
    let (x, limit) = (_mm_xor_si128(v, load(&shape.xor)), load(&shape.limit));
    if _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(x, limit), limit)) != 0xFFFF {
        return None;
    }
    // Digit pairs, then fours: the time's in three groups of four, the latency in one.
    let pairs = _mm_maddubs_epi16(_mm_shuffle_epi8(x, load(&shape.shuffle)), _mm_set1_epi16(0x010A));
    let fours = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_0064));
    let low = _mm_cvtsi128_si64(fours) as u64;
    let high = _mm_cvtsi128_si64(_mm_unpackhi_epi64(fours, fours)) as u64;
    let t = ((low & 0xFFFF_FFFF) * 10_000 + (low >> 32)) * 10_000 + (high & 0xFFFF_FFFF);
    Some((t, high >> 32, w[(n - 1) as usize & 15] & 1 != 0, n as usize + 1))
}

/// Never called: [`available`] is false on other targets.
///
/// # Safety
/// None needed.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) unsafe fn row(_: &[u8; WINDOW]) -> Option<(u64, u64, bool, usize)> {
    None
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::super::plain::{short_row, tests::window};
    use super::*;
    use proptest::prelude::*;

    /// [`row`] on `text`, `None` where the CPU lacks SSSE3.
    fn wide(text: &[u8]) -> Option<(u64, u64, bool, usize)> {
        // SAFETY: only where the CPU has SSSE3.
        available().then(|| unsafe { row(&window(text)) }).flatten()
    }

    /// [`short_row`], for rows [`row`] takes: within 16 bytes, a latency of at most 4 digits.
    fn expected(text: &[u8]) -> Option<(u64, u64, bool, usize)> {
        short_row(&window(text)).filter(|&(_, _, _, n)| n <= 16).filter(|_| {
            text.iter()
                .position(|b| *b == b',')
                .is_some_and(|c| text[c + 1..].iter().position(|b| *b == b',').is_some_and(|l| l <= 4))
        })
    }

    #[test]
    fn rows_within_16_bytes_are_read_at_once() {
        if !available() {
            return;
        }
        for (text, value) in [
            ("0,0,0\n", Some((0, 0, false, 6))),
            ("604799123,85,1\n", Some((604_799_123, 85, true, 15))),
            ("12345678901,1,0\n", Some((12_345_678_901, 1, false, 16))),
            ("1,9999,1\n9,9,9", Some((1, 9_999, true, 9))),
            ("0012,0007,1\n", Some((12, 7, true, 12))),
            ("1234567890,12,1\n", Some((1_234_567_890, 12, true, 16))),
        ] {
            assert_eq!(wide(text.as_bytes()), value, "{text:?}");
            assert_eq!(expected(text.as_bytes()), value, "{text:?}");
        }
        // Longer than 16 bytes, a latency of 5 digits, anything not plain: left to the others.
        for text in [
            "123456789012,1,0\n",
            "1234567890,123,1\n",
            "1,12345,1\n",
            "1.5,2,1\n",
            "1,2.5,1\n",
            ",1,1\n",
            "1,,1\n",
            "1,2,2\n",
            "1,2,1\r\n",
            "1,2,1",
            "1,2,10\n",
            "1,2,1,\n",
            "1,2\n",
            " 1,2,1\n",
            "\n",
            "",
        ] {
            assert_eq!(wide(text.as_bytes()), None, "{text:?}");
        }
    }

    proptest! {
        /// Wherever it answers it answers as the word reader does, and it answers for every row
        /// of the short shape within 16 bytes with a latency of at most 4 digits.
        #[test]
        fn sixteen_bytes_agree_with_words(
            t in "[0-9]{0,12}",
            sep in prop::sample::select(vec![",", ",", ",", ".", "x", "", ",,"]),
            latency in "[0-9]{0,6}",
            ok in prop::sample::select(vec![",0", ",1", ",1", ",2", ",x", ",", "1", ",10", ",,1"]),
            end in prop::sample::select(vec!["\n", "\n", "\r\n", "", " \n", "\0"]),
            noise in "[0-9,\n]{0,20}",
        ) {
            let text = format!("{t}{sep}{latency}{ok}{end}{noise}");
            if available() {
                prop_assert_eq!(wide(text.as_bytes()), expected(text.as_bytes()), "{:?}", text);
            }
        }
    }
}
