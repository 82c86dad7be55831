//! calls.csv (scripted runs): `row,t_us,admitted,start_us,end_us`, one line per script row in
//! script order: admitted 1/0, when the call started (empty if rejected; later than `t_us` when
//! it waited) and when the caller had its answer. Lets another implementation be compared call
//! by call (see conformance/). A week's script is about 600,000 rows (28 MB): [`CallsCsv`] takes
//! the calls in pieces as the run hands them out and writes them in blocks of [`CALL_BLOCK`]
//! rows, so the file is never held whole. Integers are formatted eight digits at a time with
//! plain arithmetic on one 64-bit word ([`eight_digits`]).

use crate::metrics::CallRecord;
use std::io::Write;

/// calls.csv's header line.
const HEADER: &[u8] = b"row,t_us,admitted,start_us,end_us\n";

/// Rows formatted before they are written (about 100 KB of text, still in cache when copied to
/// the file).
const CALL_BLOCK: usize = 1 << 11;

/// The longest row: five fields of at most 20 digits, their separators and the line end.
const MAX_ROW: usize = 5 * 20 + 5;

/// calls.csv being written: the header first, then the calls in script order, numbered on.
pub struct CallsCsv<W: Write> {
    w: W,
    /// The next row's number.
    row: RowNumber,
    block: Vec<u8>,
}

/// A row number held as its decimal digits and counted up in place: no division per row.
struct RowNumber {
    /// The digits, left-aligned (`digits[..len]`), zeros after them.
    digits: [u8; 20],
    len: usize,
}

impl RowNumber {
    fn zero() -> RowNumber {
        RowNumber { digits: [b'0'; 20], len: 1 }
    }

    /// Appends the number: all twenty places copied at once, the unused ones dropped.
    #[inline(always)]
    fn push(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.digits);
        out.truncate(out.len() - (self.digits.len() - self.len));
    }

    /// Adds one (a carry past the first digit shifts the digits one place right; 20 digits
    /// hold every `u64`, so the places never run out before the rows do).
    #[inline(always)]
    fn step(&mut self) {
        for i in (0..self.len).rev() {
            if self.digits[i] < b'9' {
                self.digits[i] += 1;
                return;
            }
            self.digits[i] = b'0';
        }
        if self.len < self.digits.len() {
            self.digits.copy_within(0..self.len, 1);
            self.digits[0] = b'1';
            self.len += 1;
        }
    }
}

impl<W: Write> CallsCsv<W> {
    /// Starts calls.csv in `w` (its header goes out with the first rows).
    pub fn new(w: W) -> CallsCsv<W> {
        let mut block = Vec::with_capacity(HEADER.len() + CALL_BLOCK * MAX_ROW);
        block.extend_from_slice(HEADER);
        CallsCsv { w, row: RowNumber::zero(), block }
    }

    /// Writes the rows of the next calls, in order.
    pub fn rows(&mut self, calls: &[CallRecord]) -> std::io::Result<()> {
        for block in calls.chunks(CALL_BLOCK) {
            for c in block {
                push_row(&mut self.block, &self.row, c);
                self.row.step();
            }
            self.w.write_all(&self.block)?;
            self.block.clear();
        }
        Ok(())
    }

    /// The writer (to name it in an error).
    pub fn writer(&self) -> &W {
        &self.w
    }

    /// Writes what is pending (the header, when no row came).
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.w.write_all(&self.block)?;
        self.block.clear();
        Ok(())
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.w
    }
}

/// Appends call `c`'s row, numbered `row`. A call that started when it arrived (most do)
/// copies the arrival's digits.
#[inline(always)]
fn push_row(out: &mut Vec<u8>, row: &RowNumber, c: &CallRecord) {
    row.push(out);
    out.push(b',');
    let from = out.len();
    push_u64(out, c.arrival.micros());
    let to = out.len();
    match c.start() {
        Some(t) if t == c.arrival => {
            out.extend_from_slice(b",1,");
            out.extend_from_within(from..to);
        }
        Some(t) => {
            out.extend_from_slice(b",1,");
            push_u64(out, t.micros());
        }
        None => out.extend_from_slice(b",0,"),
    }
    out.push(b',');
    if let Some(t) = c.end() {
        push_u64(out, t.micros());
    }
    out.push(b'\n');
}

/// Appends `n` in decimal: up to 16 digits as two words of eight, longer ones by `itoa`.
#[inline(always)]
fn push_u64(out: &mut Vec<u8>, n: u64) {
    const E8: u64 = 100_000_000;
    if n < E8 {
        push_leading(out, n);
    } else if n < E8 * E8 {
        push_leading(out, n / E8);
        out.extend_from_slice(&(eight_digits(n % E8) + ASCII_ZEROS).to_le_bytes());
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// `'0'` in each byte of a word.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// Appends `n` (below 10^8) without leading zeros: its digits are shifted to the word's first
/// bytes and the eight bytes written, then the zeros' places dropped (no search, no copy of a
/// variable length).
#[inline(always)]
fn push_leading(out: &mut Vec<u8>, n: u64) {
    let digits = eight_digits(n);
    // Leading zero digits are the word's first bytes that are 0 (one digit kept for n = 0).
    let zeros = (digits.trailing_zeros() / 8).min(7) as usize;
    out.extend_from_slice(&((digits + ASCII_ZEROS) >> (8 * zeros)).to_le_bytes());
    out.truncate(out.len() - zeros);
}

/// The eight decimal digits of `n` (below 10^8, with leading zeros), one in each byte of a word,
/// the first in the lowest (add [`ASCII_ZEROS`] for text), computed in the word: split into two
/// halves of four digits, each into two pairs, each pair into its two digits, by multiplying
/// with the reciprocals of 10,000, 100 and 10 in every lane at once.
#[inline]
fn eight_digits(n: u64) -> u64 {
    // Lanes of 32 bits: the first four digits in the low one (the first byte printed).
    let halves = (n / 10_000) | ((n % 10_000) << 32);
    // x / 100 = x * 10486 >> 20 for x < 10,000 (each product stays in its lane).
    let hundreds = ((halves * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | ((halves - hundreds * 100) << 16);
    // Lanes of 16 bits: x / 10 = x * 103 >> 10 for x < 100.
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | ((pairs - tens * 10) << 8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    #[test]
    fn eight_digits_and_every_length_match_the_standard_formatting() {
        for n in [0, 1, 9, 10, 99, 100, 1_234, 9_999, 10_000, 12_345_678, 99_999_999] {
            assert_eq!((eight_digits(n) + ASCII_ZEROS).to_le_bytes(), *format!("{n:08}").as_bytes(), "{n}");
        }
        let mut x = 1u64;
        let mut out = Vec::new();
        for _ in 0..20 {
            for n in [x - 1, x, x + 1, x.wrapping_mul(7) / 3, u64::MAX - x] {
                out.clear();
                push_u64(&mut out, n);
                assert_eq!(out, n.to_string().as_bytes(), "{n}");
            }
            x = x.saturating_mul(10);
        }
    }

    #[test]
    fn row_numbers_count_up_past_every_new_digit() {
        let mut row = RowNumber::zero();
        let mut out = Vec::new();
        for n in 0..100_123u64 {
            out.clear();
            row.push(&mut out);
            assert_eq!(out, n.to_string().as_bytes(), "{n}");
            row.step();
        }
        let mut big = RowNumber { digits: *b"99999999999999999990", len: 19 };
        big.step();
        out.clear();
        big.push(&mut out);
        assert_eq!(out, b"10000000000000000000");
    }

    #[test]
    fn calls_exact_text_across_blocks_and_pieces() {
        let t = SimTime;
        let calls: Vec<CallRecord> = (0..(3 * CALL_BLOCK as u64 + 1000))
            .map(|i| match i % 3 {
                0 => CallRecord::with(
                    t(i * 1_000_000),
                    Some(t(i * 1_000_000)),
                    Some(t(i * 1_000_000 + 120_000)),
                ),
                1 => CallRecord::with(t(i * 1_000_000), None, Some(t(i * 1_000_000))),
                _ => CallRecord::with(t(i * 1_000_000), Some(t(i * 1_000_000 + 7)), None),
            })
            .collect();
        let mut expected = String::from("row,t_us,admitted,start_us,end_us\n");
        for (row, c) in calls.iter().enumerate() {
            let us = |t: Option<SimTime>| t.map(|t| t.micros().to_string()).unwrap_or_default();
            let admitted = u8::from(c.start().is_some());
            expected +=
                &format!("{row},{},{admitted},{},{}\n", c.arrival.micros(), us(c.start()), us(c.end()));
        }
        // Handed over in uneven pieces, as a run drains its answered calls.
        let mut csv = CallsCsv::new(Vec::new());
        let (a, rest) = calls.split_at(5);
        let (b, c) = rest.split_at(CALL_BLOCK + 17);
        for piece in [a, b, &[], c] {
            csv.rows(piece).unwrap();
        }
        assert!(calls.len() > 3 * CALL_BLOCK, "the rows span several blocks, the last one short");
        csv.finish().unwrap();
        assert_eq!(String::from_utf8(csv.into_inner()).unwrap(), expected);
        assert!(expected.starts_with(
            "row,t_us,admitted,start_us,end_us\n0,0,1,0,120000\n1,1000000,0,,1000000\n2,2000000,1,2000007,\n"
        ));
        let mut empty = CallsCsv::new(Vec::new());
        empty.finish().unwrap();
        assert_eq!(empty.into_inner(), b"row,t_us,admitted,start_us,end_us\n");
    }
}
