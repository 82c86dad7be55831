//! calls.csv (scripted runs): `row,t_us,admitted,start_us,end_us`, one line per script row in
//! script order: admitted 1/0, when the call started (empty if rejected; later than `t_us` when
//! it waited) and when the caller had its answer. Lets another implementation be compared call
//! by call (see conformance/). A week's script is about 600,000 rows (28 MB): [`CallsCsv`] takes
//! the calls in pieces as the run hands them out and formats them into a block of
//! [`BLOCK_BYTES`], written out whenever it is full, so the file is never held whole. Into a
//! file ([`CallsCsv::to_file`]) the full blocks are written by a thread of their own while the
//! next one is formatted ([`WriteBehind`]), their whole pages straight to the disk where the
//! system can (Linux's `O_DIRECT`): the kernel neither copies them nor keeps them cached, the
//! formatting never waits for the disk, and the file's sync has little left to do. Each row is
//! formatted in a fixed-size window of the block with whole-word writes; integers eight digits
//! at a time with plain arithmetic on one 64-bit word ([`eight_digits`]).

use crate::metrics::CallRecord;
use std::fs::File;
use std::io::Write;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

/// calls.csv's header line.
const HEADER: &[u8] = b"row,t_us,admitted,start_us,end_us\n";

/// The bytes of a block rows are formatted in before they are written.
const BLOCK_BYTES: usize = 1 << 20;

/// The most blocks a file's rows take at once: one being formatted, the others being written or
/// waiting to be (a disk a little slower than the formatting for a moment does not stop it).
const BLOCKS: usize = 3;

/// What the memory, length and place in the file of a direct write are multiples of (a page:
/// at least any disk's block).
const ALIGN: usize = 4096;

/// The longest row: five fields of at most 20 digits, their separators and the line end.
const MAX_ROW: usize = 5 * 20 + 5;

/// The window a row is formatted in: the longest row, and room after it, as every field is
/// written in whole words (or a 24-byte copy) before the cursor moves on by its length.
const ROOM: usize = MAX_ROW + 32;

/// calls.csv being written: the header first, then the calls in script order, numbered on.
pub struct CallsCsv<W: Write> {
    w: W,
    /// The thread full blocks go to when the rows are written into a file ([`CallsCsv::to_file`]).
    behind: Option<WriteBehind>,
    /// The next row's number.
    row: u64,
    /// The rows not yet written, `block.bytes()[..end]`.
    block: Block,
    end: usize,
    /// The digits above the last eight of the last such number ([`Row::digits`]).
    high: High,
}

/// [`BLOCK_BYTES`] of memory starting at an address aligned to [`ALIGN`], allocated once.
struct Block {
    buf: Vec<u8>,
    /// Where the aligned bytes start in `buf`.
    at: usize,
}

impl Block {
    fn new() -> Block {
        let mut buf = vec![0; BLOCK_BYTES + ALIGN];
        let at = buf.as_ptr().align_offset(ALIGN).min(ALIGN);
        buf.truncate(at + BLOCK_BYTES);
        Block { buf, at }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[self.at..]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.at..]
    }

    /// The window for a row at `end`, when the block has room for one.
    fn room(&mut self, end: usize) -> Option<&mut [u8; ROOM]> {
        self.bytes_mut().get_mut(end..).and_then(|b| b.first_chunk_mut::<ROOM>())
    }
}

/// A block handed to the [`WriteBehind`] thread: its first `len` bytes go out; all but the
/// last block hold whole pages.
struct Full {
    block: Block,
    len: usize,
}

/// The thread that writes a file's full blocks in order, through a second handle on it,
/// whole pages straight to the disk while it can (the rest, and everything after a direct
/// write is refused or cut short, through the page cache); each block comes back emptied.
struct WriteBehind {
    /// To the thread; `None` once the last block went.
    full: Option<SyncSender<Full>>,
    /// The blocks written, back from the thread.
    written: Receiver<Block>,
    /// Blocks made so far (at most [`BLOCKS`]).
    made: usize,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl WriteBehind {
    /// Starts the thread writing into `file`, straight to the disk when `direct` and the system
    /// can.
    fn start(file: File, direct: bool) -> std::io::Result<WriteBehind> {
        let (full, blocks) = sync_channel::<Full>(BLOCKS);
        let (give_back, written) = sync_channel::<Block>(BLOCKS);
        let thread = std::thread::Builder::new()
            .name("calls.csv disk".into())
            .spawn(move || write_blocks(&file, direct, blocks, give_back))?;
        Ok(WriteBehind { full: Some(full), written, made: 1, thread: Some(thread) })
    }

    /// An empty block: one written, or a new one while fewer than [`BLOCKS`] were made.
    fn empty(&mut self) -> std::io::Result<Block> {
        match self.written.try_recv() {
            Ok(block) => return Ok(block),
            Err(TryRecvError::Empty) if self.made < BLOCKS => {
                self.made += 1;
                return Ok(Block::new());
            }
            Err(_) => {}
        }
        match self.written.recv() {
            Ok(block) => Ok(block),
            Err(_) => Err(self.stopped()),
        }
    }

    /// Hands `full` over to be written.
    fn send(&mut self, full: Full) -> std::io::Result<()> {
        match self.full.as_ref().map(|f| f.send(full)) {
            Some(Ok(())) => Ok(()),
            _ => Err(self.stopped()),
        }
    }

    /// Waits for every block handed over to be written: the first error on the way, if any.
    fn finish(&mut self) -> std::io::Result<()> {
        self.full = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(panic)) => std::panic::resume_unwind(panic),
        }
    }

    /// Why the thread stopped taking blocks (it returns only on an error).
    #[cold]
    fn stopped(&mut self) -> std::io::Error {
        match self.finish() {
            Err(e) => e,
            Ok(()) => std::io::Error::other("calls.csv's writer stopped"),
        }
    }
}

impl Drop for WriteBehind {
    /// Waits for the blocks handed over, so nothing writes into the file once it is dropped.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// [`WriteBehind`]'s thread: writes each full block of `blocks` into `file` in turn (whole pages
/// straight to the disk when `direct` and the system can) and gives it back.
fn write_blocks(
    mut file: &File,
    direct: bool,
    blocks: Receiver<Full>,
    give_back: SyncSender<Block>,
) -> std::io::Result<()> {
    let mut direct = direct && direct_io(file, true).is_ok();
    for Full { block, len } in blocks {
        let bytes = &block.bytes()[..len];
        let pages = if direct { len / ALIGN * ALIGN } else { 0 };
        let sent = if pages > 0 { write_direct(file, &bytes[..pages])? } else { 0 };
        if sent < len {
            // The end, or written through the page cache (or refused, or cut short, from here on).
            if direct {
                direct_io(file, false)?;
                direct = false;
            }
            file.write_all(&bytes[sent..])?;
        }
        let _ = give_back.try_send(block);
    }
    // The file's other handles share its opening: they read and write as any file again.
    if direct {
        direct_io(file, false)?;
    }
    Ok(())
}

/// A number's digits above its last eight, as the word [`leading`] gives: consecutive times
/// share them for 100 s at a time, so they are formatted once.
#[derive(Copy, Clone)]
struct High {
    /// `n / 10^8` (`u64::MAX` before any).
    value: u64,
    word: u64,
    len: usize,
}

impl<W: Write> CallsCsv<W> {
    /// Starts calls.csv in `w` (its header goes out with the first rows).
    pub fn new(w: W) -> CallsCsv<W> {
        let mut block = Block::new();
        block.bytes_mut()[..HEADER.len()].copy_from_slice(HEADER);
        let high = High { value: u64::MAX, word: 0, len: 0 };
        CallsCsv { w, behind: None, row: 0, block, end: HEADER.len(), high }
    }

    /// Formats the rows of the next calls, in order, writing out each block that fills.
    pub fn rows(&mut self, calls: &[CallRecord]) -> std::io::Result<()> {
        for c in calls {
            if self.block.room(self.end).is_none() {
                self.flush(false)?;
            }
            // A block holds far more than a page and a row.
            let Some(room) = self.block.room(self.end) else { continue };
            let mut row = Row { room, at: 0, high: &mut self.high };
            row.call(self.row, c);
            self.end += row.at;
            self.row += 1;
        }
        Ok(())
    }

    /// The writer (to name it in an error).
    pub fn writer(&self) -> &W {
        &self.w
    }

    /// Writes what is pending (the header, when no row came) and, into a file, waits until every
    /// block is written.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.flush(true)?;
        self.behind.as_mut().map_or(Ok(()), WriteBehind::finish)
    }

    /// The writer back.
    pub fn into_inner(self) -> W {
        self.w
    }

    /// Writes the block's rows and empties it: all of them when `last` or not into a file, else
    /// its whole pages, handed to the [`WriteBehind`] thread (the rest moves to the start of the
    /// next block).
    fn flush(&mut self, last: bool) -> std::io::Result<()> {
        let len = self.end;
        let Some(behind) = &mut self.behind else {
            self.w.write_all(&self.block.bytes()[..len])?;
            self.end = 0;
            return Ok(());
        };
        let whole = if last { len } else { len / ALIGN * ALIGN };
        let next = if last {
            Block { buf: Vec::new(), at: 0 } // no row comes after the last
        } else {
            let mut next = behind.empty()?;
            next.bytes_mut()[..len - whole].copy_from_slice(&self.block.bytes()[whole..len]);
            next
        };
        let full = std::mem::replace(&mut self.block, next);
        behind.send(Full { block: full, len: whole })?;
        self.end = len - whole;
        Ok(())
    }
}

#[cfg(unix)]
impl<W: Write + std::os::fd::AsFd> CallsCsv<W> {
    /// Starts calls.csv in the file `w` (nothing written to it yet), its blocks written by a
    /// thread of their own through a second handle on it, straight to the disk where the
    /// system can (through `w` itself, as [`CallsCsv::new`], where neither can be had).
    pub fn to_file(w: W) -> CallsCsv<W> {
        Self::to_file_as(w, true)
    }

    /// [`CallsCsv::to_file`], trying to write straight to the disk only when `direct`.
    fn to_file_as(w: W, direct: bool) -> CallsCsv<W> {
        let file = w.as_fd().try_clone_to_owned().ok().map(File::from);
        let behind = file.and_then(|file| WriteBehind::start(file, direct).ok());
        CallsCsv { behind, ..CallsCsv::new(w) }
    }
}

#[cfg(not(unix))]
impl<W: Write> CallsCsv<W> {
    /// Starts calls.csv in the file `w`, as [`CallsCsv::new`].
    pub fn to_file(w: W) -> CallsCsv<W> {
        CallsCsv::new(w)
    }
}

/// Writes `pages` (whole pages, aligned in memory) straight to the disk through `file`: how many
/// bytes went, fewer when the write was refused (an invalid argument: the file system cannot)
/// or cut short (the rest is then written through the page cache).
fn write_direct(mut file: &File, pages: &[u8]) -> std::io::Result<usize> {
    loop {
        match file.write(pages) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => return Ok(0),
            Err(e) => return Err(e),
        }
    }
}

/// Turns writing straight to the disk on or off for `file` (and every handle on its opening).
#[cfg(target_os = "linux")]
fn direct_io(file: &File, on: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for the calls; F_GETFL and F_SETFL touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let flags = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Elsewhere blocks go through the system's cache.
#[cfg(not(target_os = "linux"))]
fn direct_io(_file: &File, on: bool) -> std::io::Result<()> {
    if on { Err(std::io::ErrorKind::Unsupported.into()) } else { Ok(()) }
}

/// One row being formatted in its window of the block: `room[..at]` so far.
struct Row<'a> {
    room: &'a mut [u8; ROOM],
    at: usize,
    high: &'a mut High,
}

impl Row<'_> {
    /// Call `c`'s row, numbered `row`. A call that started when it arrived (most do) repeats
    /// the arrival's digits. Every field is made in registers and stored whole: nothing
    /// written is read back (a load of bytes just stored piecemeal stalls).
    #[inline(always)]
    fn call(&mut self, row: u64, c: &CallRecord) {
        self.put_digits(Digits::of(row));
        self.put(b",", 1);
        let arrival = self.digits(c.arrival.micros());
        self.put_digits(arrival);
        match c.start() {
            Some(t) if t == c.arrival => {
                self.put(b",1,", 3);
                self.put_digits(arrival);
            }
            Some(t) => {
                self.put(b",1,", 3);
                let start = self.digits(t.micros());
                self.put_digits(start);
            }
            None => self.put(b",0,", 3),
        }
        self.put(b",", 1);
        if let Some(t) = c.end() {
            let end = self.digits(t.micros());
            self.put_digits(end);
        }
        self.put(b"\n", 1);
    }

    /// Writes `bytes` and keeps the first `len` of them.
    #[inline(always)]
    fn put<const N: usize>(&mut self, bytes: &[u8; N], len: usize) {
        self.room[self.at..self.at + N].copy_from_slice(bytes);
        self.at += len;
    }

    /// Writes `d`'s words and keeps its digits.
    #[inline(always)]
    fn put_digits(&mut self, d: Digits) {
        for (i, word) in d.words.iter().enumerate() {
            self.room[self.at + 8 * i..self.at + 8 * i + 8].copy_from_slice(&word.to_le_bytes());
        }
        self.at += d.len;
    }

    /// `n`'s digits, those above its last eight kept from the number before when they are the
    /// same ([`High`]).
    #[inline(always)]
    fn digits(&mut self, n: u64) -> Digits {
        if !(E8..E8 * E8).contains(&n) {
            return Digits::of(n);
        }
        let value = n / E8;
        if value != self.high.value {
            let (word, len) = leading(value);
            *self.high = High { value, word, len };
        }
        let High { word, len, .. } = *self.high;
        let low = eight_digits(n % E8) + ASCII_ZEROS;
        let words = match len {
            8 => [word, low, 0],
            _ => [word | low << (8 * len), low >> (64 - 8 * len), 0],
        };
        Digits { words, len: len + 8 }
    }
}

/// 10^8: the numbers one word of digits holds.
const E8: u64 = 100_000_000;

/// A number in decimal, in three words (24 bytes hold the 20 digits of any `u64`), the first
/// digit in the first word's lowest byte: its first `len` bytes.
#[derive(Clone, Copy)]
struct Digits {
    words: [u64; 3],
    len: usize,
}

impl Digits {
    /// The digits of `n`: one word below 10^8, else by `itoa` (no run reaches it).
    #[inline(always)]
    fn of(n: u64) -> Digits {
        if n < E8 {
            let (word, len) = leading(n);
            return Digits { words: [word, 0, 0], len };
        }
        Digits::of_text(n)
    }

    #[cold]
    fn of_text(n: u64) -> Digits {
        let mut buffer = itoa::Buffer::new();
        let text = buffer.format(n).as_bytes();
        let mut bytes = [0u8; 24];
        bytes[..text.len()].copy_from_slice(text);
        let word = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap_or_default());
        Digits { words: [word(0), word(1), word(2)], len: text.len() }
    }
}

/// `n` (below 10^8) without leading zeros: its digits shifted to the word's first bytes, and
/// how many there are (no search, no copy of a variable length).
#[inline(always)]
fn leading(n: u64) -> (u64, usize) {
    let digits = eight_digits(n);
    // Leading zero digits are the word's first bytes that are 0 (one digit kept for n = 0).
    let zeros = (digits.trailing_zeros() / 8).min(7) as usize;
    ((digits + ASCII_ZEROS) >> (8 * zeros), 8 - zeros)
}

/// `'0'` in each byte of a word.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

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
        let mut room = [0; ROOM];
        let mut high = High { value: u64::MAX, word: 0, len: 0 };
        for _ in 0..20 {
            for n in [x - 1, x, x + 1, x.wrapping_mul(7) / 3, u64::MAX - x, x + 100_000_000] {
                // As a time (the digits above the last eight kept) and as a row number.
                let mut row = Row { room: &mut room, at: 0, high: &mut high };
                let digits = row.digits(n);
                row.put_digits(digits);
                row.put(b",", 1);
                row.put_digits(Digits::of(n));
                let at = row.at;
                assert_eq!(&room[..at], format!("{n},{n}").as_bytes(), "{n}");
            }
            x = x.saturating_mul(10);
        }
    }

    /// Calls of every shape (answered at once, rejected, waited and unanswered, the largest
    /// times) spanning several blocks, and calls.csv's text of them.
    fn calls_and_text() -> (Vec<CallRecord>, String) {
        let t = SimTime;
        let calls: Vec<CallRecord> = (0..(3 * BLOCK_BYTES as u64 / 30))
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

    /// `calls` written into `csv`, handed over in uneven pieces as a run drains its answered calls.
    fn write_in_pieces<W: Write>(csv: &mut CallsCsv<W>, calls: &[CallRecord]) {
        let (a, rest) = calls.split_at(5.min(calls.len()));
        let (b, c) = rest.split_at((BLOCK_BYTES / 30 + 17).min(rest.len()));
        for piece in [a, b, &[], c] {
            csv.rows(piece).unwrap();
        }
        csv.finish().unwrap();
    }

    #[test]
    fn calls_exact_text_across_blocks_and_pieces() {
        let (calls, expected) = calls_and_text();
        let mut csv = CallsCsv::new(Vec::new());
        write_in_pieces(&mut csv, &calls);
        assert!(expected.len() > 3 * BLOCK_BYTES, "the rows span several blocks, the last one short");
        assert_eq!(String::from_utf8(csv.into_inner()).unwrap(), expected);
        assert!(expected.starts_with(
            "row,t_us,admitted,start_us,end_us\n0,0,1,0,120000\n1,1000000,0,,1000000\n2,2000000,1,2000007,\n"
        ));
        let mut empty = CallsCsv::new(Vec::new());
        empty.finish().unwrap();
        assert_eq!(empty.into_inner(), b"row,t_us,admitted,start_us,end_us\n");
    }

    /// A file the blocks cannot be written into: the writer's error comes back (from a later
    /// block or the finish), and nothing waits for ever.
    #[cfg(unix)]
    #[test]
    fn a_write_that_fails_on_the_writers_thread_is_returned() {
        let (calls, _) = calls_and_text();
        let path = tempfile::NamedTempFile::new().unwrap();
        let read_only = File::open(path.path()).unwrap();
        let mut csv = CallsCsv::to_file(&read_only);
        let failed = csv.rows(&calls).and_then(|()| csv.finish());
        assert_eq!(failed.unwrap_err().raw_os_error(), Some(libc::EBADF));
    }

    /// Into a file, straight to the disk (where the system can) or through the page cache, the
    /// same bytes: for no rows, a few, and texts ending short of, at and past a page's end.
    #[cfg(unix)]
    #[test]
    fn calls_into_a_file_are_the_same_bytes_written_straight_to_the_disk_or_not() {
        let (calls, expected) = calls_and_text();
        let ends = |n: usize| expected.split_inclusive('\n').take(n + 1).map(str::len).sum::<usize>();
        let at_page = (0..calls.len()).find(|&n| ends(n) % ALIGN == 0);
        let counts = [0, 3, 200, calls.len() / 2, calls.len()].into_iter().chain(at_page);
        for n in counts {
            for direct in [true, false] {
                let mut file = tempfile::tempfile().unwrap();
                let mut csv = CallsCsv::to_file_as(&file, direct);
                write_in_pieces(&mut csv, &calls[..n]);
                drop(csv);
                let mut text = String::new();
                std::io::Seek::rewind(&mut file).unwrap();
                std::io::Read::read_to_string(&mut file, &mut text).unwrap();
                assert_eq!(text.len(), ends(n), "{n} rows, direct {direct}");
                assert!(text == expected[..ends(n)], "{n} rows, direct {direct}");
            }
        }
    }
}
