//! calls.csv (scripted runs): `row,t_us,admitted,start_us,end_us`, one line per script row in
//! script order: admitted 1/0, when the call started (empty if rejected; later than `t_us` when
//! it waited) and when the caller had its answer. Lets another implementation be compared call
//! by call (see conformance/). A week's script is about 600,000 rows (28 MB): [`CallsCsv`] takes
//! the calls in pieces as the run hands them out and writes them through a buffer, so the file
//! is never held whole.

use crate::metrics::CallRecord;
use std::io::{BufWriter, Write};

/// calls.csv's header line.
const HEADER: &[u8] = b"row,t_us,admitted,start_us,end_us\n";

/// Bytes buffered before they are written out.
const BUFFER_BYTES: usize = 1 << 16;

/// calls.csv being written: the header first, then the calls in script order, numbered on.
pub struct CallsCsv<W: Write> {
    w: BufWriter<W>,
    /// The next row's number.
    row: u64,
    /// Whether the header was written.
    started: bool,
}

impl<W: Write> CallsCsv<W> {
    /// Starts calls.csv in `w` (its header goes out with the first rows).
    pub fn new(w: W) -> CallsCsv<W> {
        CallsCsv { w: BufWriter::with_capacity(BUFFER_BYTES, w), row: 0, started: false }
    }

    /// Writes the rows of the next calls, in order.
    pub fn rows(&mut self, calls: &[CallRecord]) -> std::io::Result<()> {
        self.start()?;
        let mut digits = itoa::Buffer::new();
        let w = &mut self.w;
        for c in calls {
            w.write_all(digits.format(self.row).as_bytes())?;
            w.write_all(b",")?;
            w.write_all(digits.format(c.arrival.micros()).as_bytes())?;
            match c.start() {
                Some(t) => {
                    w.write_all(b",1,")?;
                    w.write_all(digits.format(t.micros()).as_bytes())?;
                }
                None => w.write_all(b",0,")?,
            }
            w.write_all(b",")?;
            if let Some(t) = c.end() {
                w.write_all(digits.format(t.micros()).as_bytes())?;
            }
            w.write_all(b"\n")?;
            self.row += 1;
        }
        Ok(())
    }

    /// The writer (to name it in an error).
    pub fn writer(&self) -> &W {
        self.w.get_ref()
    }

    /// Writes the header (when no row came) and everything buffered.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.start()?;
        self.w.flush()
    }

    /// The writer back (after [`CallsCsv::finish`]: nothing is left buffered).
    pub fn into_inner(self) -> W {
        self.w.into_parts().0
    }

    /// Writes the header, once.
    fn start(&mut self) -> std::io::Result<()> {
        if !self.started {
            self.w.write_all(HEADER)?;
            self.started = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    /// Calls of every shape (answered at once, rejected, waited and unanswered, the largest
    /// times) spanning many buffers, and calls.csv's text of them.
    fn calls_and_text() -> (Vec<CallRecord>, String) {
        let t = SimTime;
        let calls: Vec<CallRecord> = (0..(3 * BUFFER_BYTES as u64 / 10))
            .map(|i| match i % 3 {
                0 => CallRecord::with(
                    t(i * 1_000_000),
                    Some(t(i * 1_000_000)),
                    Some(t(i * 1_000_000 + 120_000)),
                ),
                1 => CallRecord::with(t(i * 1_000_000), None, Some(t(i * 1_000_000))),
                _ => CallRecord::with(t(i * 1_000_000), Some(t(i * 1_000_000 + 7)), None),
            })
            .chain([CallRecord::with(t(u64::MAX - 1), Some(t(u64::MAX - 1)), Some(t(u64::MAX - 1)))])
            .collect();
        let mut expected = String::from("row,t_us,admitted,start_us,end_us\n");
        for (row, c) in calls.iter().enumerate() {
            let us = |t: Option<SimTime>| t.map(|t| t.micros().to_string()).unwrap_or_default();
            let admitted = u8::from(c.start().is_some());
            expected +=
                &format!("{row},{},{admitted},{},{}\n", c.arrival.micros(), us(c.start()), us(c.end()));
        }
        (calls, expected)
    }

    #[test]
    fn calls_exact_text_across_buffers_and_pieces() {
        let (calls, expected) = calls_and_text();
        assert!(expected.len() > 3 * BUFFER_BYTES, "the rows span several buffers");
        // Handed over in uneven pieces as a run drains its answered calls.
        let mut csv = CallsCsv::new(Vec::new());
        let (a, rest) = calls.split_at(5);
        let (b, c) = rest.split_at(BUFFER_BYTES / 30 + 17);
        for piece in [a, b, &[], c] {
            csv.rows(piece).unwrap();
        }
        csv.finish().unwrap();
        assert_eq!(String::from_utf8(csv.into_inner()).unwrap(), expected);
        assert!(expected.starts_with(
            "row,t_us,admitted,start_us,end_us\n0,0,1,0,120000\n1,1000000,0,,1000000\n2,2000000,1,2000007,\n"
        ));
        // No rows: the header alone, once.
        let mut empty = CallsCsv::new(Vec::new());
        empty.rows(&[]).unwrap();
        empty.finish().unwrap();
        assert_eq!(empty.into_inner(), b"row,t_us,admitted,start_us,end_us\n");
    }

    /// A writer that fails: the error comes back (from a later piece or the finish).
    #[test]
    fn a_write_that_fails_is_returned() {
        let (calls, _) = calls_and_text();
        let mut full = [0u8; 100];
        let mut csv = CallsCsv::new(&mut full[..]);
        let failed = csv.rows(&calls).and_then(|()| csv.finish());
        assert_eq!(failed.unwrap_err().kind(), std::io::ErrorKind::WriteZero);
    }
}
