//! Plain script rows: `t_ms,latency_ms,ok\n` with unquoted numbers written plainly (up to 15
//! whole digits and 3 decimals) and `ok` a bare 0 or 1. The common short shape (whole
//! milliseconds, the row within a word and a half) is read a word at a time ([`row`]); any other
//! plain row one byte at a time ([`fast_row`]). Anything else is not plain: the general reader
//! takes the file and names the error.

use crate::trace::columns::{digit_run, eight_digits_value, non_digit_flags};

/// Bytes [`row`] may look at from a row's start: a buffer keeps this many zeros after its data.
pub(crate) const WINDOW: usize = 40;

/// The longest plain row (two fields of 15 digits and 3 decimals, `ok`, separators and the line
/// end), rounded up: a reader that holds this many bytes from a row's start holds the whole row.
pub(crate) const MAX_ROW: usize = 64;

/// The plain row at the start of `window` (whose data are `data`, the rest zeros): its time and
/// latency in microseconds, `ok` and its length with the `\n`; `None` when it is not plain.
#[inline(always)]
pub(crate) fn row(window: &[u8; WINDOW], data: &[u8]) -> Option<(u64, u64, bool, usize)> {
    match short_row(window) {
        Some((t, latency, ok, n)) => Some((t * 1_000, latency * 1_000, ok, n)),
        None => other_row(data),
    }
}

/// [`fast_row`], out of the short rows' loop.
#[inline(never)]
pub(crate) fn other_row(data: &[u8]) -> Option<(u64, u64, bool, usize)> {
    fast_row(data)
}

/// The value of the first `len` (1 to 8) bytes of `w`, known to be digits (the first in the
/// lowest byte): the others become leading zeros.
#[inline(always)]
fn leading_digits(w: u64, len: u32) -> u64 {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    eight_digits_value((w << (64 - 8 * len)) | ((ZEROS >> 1) >> (8 * len - 1)))
}

/// A plain row of the short shape at the start of `w`: whole `t_ms` of 1 to 15 digits and whole
/// `latency_ms` of 1 to 7, read from 8-byte words (a field's length is its word's first
/// non-digit byte), in milliseconds; `None` for any other row. Equal to [`fast_row`] (in
/// microseconds) wherever it answers. The zeros after a buffer's data are no digit, comma or
/// line end, so a row found ends in the data.
#[inline(always)]
pub(crate) fn short_row(w: &[u8; WINDOW]) -> Option<(u64, u64, bool, usize)> {
    const POW10: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
    // Offsets are masked below 32 so every read is in the window without a check.
    let word = |i: usize| u64::from_le_bytes(w[i & 31..][..8].try_into().unwrap_or_default());
    let w0 = word(0);
    let f0 = non_digit_flags(w0);
    let (t, comma) = if f0 != 0 {
        let len = f0.trailing_zeros() / 8;
        if len == 0 {
            return None;
        }
        (leading_digits(w0, len), len as usize)
    } else {
        let w1 = word(8);
        let len = non_digit_flags(w1).trailing_zeros() / 8;
        let high = eight_digits_value(w0);
        match len {
            0 => (high, 8),
            // Nine digits (a week in milliseconds): the last one alone.
            1 => (high * 10 + (w1 & 0xF), 9),
            2..=7 => (high * POW10[len as usize] + leading_digits(w1, len), 8 + len as usize),
            _ => return None, // 16 digits or more
        }
    };
    if w[comma & 31] != b',' {
        return None;
    }
    let lw = word(comma + 1);
    let len = non_digit_flags(lw).trailing_zeros() / 8;
    if len == 0 || len == 8 {
        return None;
    }
    let latency = leading_digits(lw, len);
    let end = comma + 1 + len as usize;
    let tail = u32::from_le_bytes(w[end & 31..][..4].try_into().unwrap_or_default());
    // `,`, `0` or `1`, `\n`.
    if tail & 0x00FF_FEFF != 0x000A_302C {
        return None;
    }
    Some((t, latency, tail & 0x100 != 0, end + 3))
}

/// Milliseconds at `b[start..]` as [`super::parse_ms`] reads them, when written plainly (up to
/// 15 whole digits, then at most 3 decimals), and the byte after them; `None` otherwise. The
/// whole digits are read one at a time: a plain loop the compiler keeps in registers is cheap for
/// the rows [`short_row`] does not take.
#[inline(always)]
fn fast_ms(b: &[u8], start: usize) -> Option<(u64, usize)> {
    let mut i = start;
    let mut ms = 0u64;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        // Wraps past 19 digits, which are refused below anyway.
        ms = ms.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    if i == start || i - start > 15 {
        return None;
    }
    let mut micros = ms * 1_000;
    if b.get(i) == Some(&b'.') {
        let (frac, end) = digit_run(b, i + 1);
        micros += frac * [0, 100, 10, 1].get(end - i - 1).filter(|p| **p > 0)?;
        i = end;
    }
    Some((micros, i))
}

/// A plain row `t_ms,latency_ms,ok\n` (see [`fast_ms`]; `ok` a bare 0 or 1) at the start of
/// `b`: its values and length with the `\n`; `None` for anything else.
#[inline]
pub(crate) fn fast_row(b: &[u8]) -> Option<(u64, u64, bool, usize)> {
    let (t, i) = fast_ms(b, 0)?;
    let (latency, i) = fast_ms(b, i.checked_add(1).filter(|_| b.get(i) == Some(&b','))?)?;
    match b.get(i..i + 3)? {
        [b',', ok @ (b'0' | b'1'), b'\n'] => Some((t, latency, *ok == b'1', i + 3)),
        _ => None,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `text` as a window with zeros after it.
    pub(in crate::upstream::script) fn window(text: &[u8]) -> [u8; WINDOW] {
        let mut w = [0u8; WINDOW];
        let n = text.len().min(WINDOW);
        w[..n].copy_from_slice(&text[..n]);
        w
    }

    #[test]
    fn short_rows_are_read_from_words_and_others_byte_by_byte() {
        for (text, expected) in [
            ("0,0,0\n", Some((0, 0, false, 6))),
            ("604799668,179,1\n7", Some((604_799_668_000, 179_000, true, 16))),
            ("12345678,1234567,1\n", Some((12_345_678_000, 1_234_567_000, true, 19))),
            ("999999999999999,9999999,0\n", Some((999_999_999_999_999_000, 9_999_999_000, false, 26))),
            ("0012,007,1\n", Some((12_000, 7_000, true, 11))),
        ] {
            let ms = expected.map(|(t, l, ok, n)| (t / 1_000, l / 1_000, ok, n));
            assert_eq!(short_row(&window(text.as_bytes())), ms, "{text:?}");
            assert_eq!(fast_row(text.as_bytes()), expected, "{text:?}");
        }
        // Decimals, long latencies and anything not plain are not the short shape.
        for text in [
            "1.5,2,1\n",
            "1,12345678,1\n",
            "1000000000000000,1,1\n",
            ",1,1\n",
            "1,,1\n",
            "1,2,2\n",
            "1,2,1\r\n",
            "1,2,1",
            "1,2,true\n",
            " 1,2,1\n",
        ] {
            assert_eq!(short_row(&window(text.as_bytes())), None, "{text:?}");
        }
        assert_eq!(fast_row(b"1.5,2,1\n"), Some((1_500, 2_000, true, 8)));
        assert_eq!(fast_row(b"1,12345678,1\n"), Some((1_000, 12_345_678_000, true, 13)));
        assert_eq!(fast_row(b"1000000000000000,1,1\n"), None);
    }

    proptest! {
        /// Wherever the word reader answers, it answers as the byte reader does, and it answers
        /// for every short row; noise after the row changes nothing.
        #[test]
        fn words_agree_with_bytes(
            t in "[0-9]{1,16}",
            sep in prop::sample::select(vec![",", ".", ".5,", "x", ""]),
            latency in "[0-9]{0,9}",
            ok in prop::sample::select(vec![",0\n", ",1\n", ",2\n", ",1", ",1\r\n", "\n"]),
            noise in "[0-9,.\n]{0,30}",
        ) {
            let text = format!("{t}{sep}{latency}{ok}{noise}");
            let b = text.as_bytes();
            let short = short_row(&window(b));
            if let Some((t, l, ok, n)) = short {
                prop_assert_eq!(Some((t * 1_000, l * 1_000, ok, n)), fast_row(b));
            }
            // Judged on the row as written: an empty `sep` can join `latency` and `ok` into a
            // short row of their own ("0" + ",1" + ",0\n").
            let digits = |s: &str, max: usize| (1..=max).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit());
            let shaped = text.split_once('\n').is_some_and(|(line, _)| {
                let fields: Vec<&str> = line.split(',').collect();
                fields.len() == 3 && digits(fields[0], 15) && digits(fields[1], 7) && ["0", "1"].contains(&fields[2])
            }) && fast_row(b).is_some();
            prop_assert_eq!(short.is_some(), shaped);
            prop_assert_eq!(row(&window(b), b), fast_row(b));
        }
    }
}
