//! A plain script read straight from its file, never held whole: one pass on every core checks
//! every row (16 bytes at once where the CPU can, [`row16`]), keeps it as a 4-byte code and
//! indexes the file before the run ([`StreamedScript::scan`]); the run then hands out the rows
//! from their codes ([`StreamedScript::read`]: never parsed twice, the file not read again).
//! What the run used is what the first pass found: the file is read again only to hash it for
//! the review page ([`Rehash`]) or to answer for one row on its own ([`StreamedScript::get`]),
//! each block's bytes checked against the first pass. Reads are positioned reads into one small
//! buffer per reader (no copy of the file, and a file cut short while it is read is an error,
//! not a fault). A file found changed since the first pass is reported by
//! [`StreamedScript::check`].

use super::plain::{self, MAX_ROW, WINDOW};
use super::{ScriptError, ScriptRow, row16};
use crate::positioned::{read_at, read_exact_at};
use crate::time::{Dur, SimTime};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Rows per indexed block: a row asked for out of order costs reading its block.
const BLOCK_ROWS: u64 = 64;

/// The most bytes a block of plain rows may take.
const BLOCK_BYTES: usize = BLOCK_ROWS as usize * MAX_ROW;

/// Bytes read at a time: small enough to stay in the core's cache.
const READ_BYTES: usize = 32 << 10;

/// Below this many bytes a script is scanned by one thread (a thread costs more than it saves).
const PARALLEL_BYTES: u64 = 1 << 20;

/// A plain script, checked and indexed, read from its file as the run goes.
#[derive(Debug)]
pub struct StreamedScript {
    file: File,
    path: PathBuf,
    /// Rows in the file.
    rows: u64,
    /// The latest end of a call (time plus latency), in microseconds.
    latest_end: u64,
    /// The file's pieces as the first pass cut them, in order, none empty.
    pieces: Vec<Piece>,
    /// Once rows read again were not those the first pass found: the first such row and why.
    changed: OnceLock<(u64, String)>,
    /// Bytes before the first row (an optional byte-order mark, then the header).
    head: usize,
    /// Whether rows are read 16 bytes at once and blocks checked by CRC ([`row16::available`]).
    wide: bool,
}

/// What the first pass found in one piece of the file.
#[derive(Debug)]
struct Piece {
    /// Index of its first row in the file.
    first_row: u64,
    /// Its rows.
    rows: u64,
    /// Byte after its last row.
    end: u64,
    /// Its blocks of [`BLOCK_ROWS`] rows (the last may have fewer).
    blocks: Vec<Block>,
    /// Each row's [`code`], in order (the first row's step is from time 0).
    codes: Vec<u32>,
    /// The rows coded [`OTHER`], in order.
    others: Vec<ScriptRow>,
}

/// One block of rows: where it starts and a check of its bytes ([`bytes_check`]).
#[derive(Debug, Clone, Copy)]
struct Block {
    offset: u64,
    check: u64,
}

/// The header a plain script starts with (after an optional [`BOM`]).
const HEADER: &[u8] = b"t_ms,latency_ms,ok\n";

/// A byte-order mark.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Why a block read again was refused when its bytes are not those found before.
const BLOCK_CHANGED: &str = "a row from this line on is not what it was";

/// The code of a row of the short shape ([`plain::short_row`]) whose time is `step`
/// milliseconds after the row before's, with its latency in milliseconds and `ok`: the step (16
/// bits), the latency (15 bits) and `ok` (1 bit); [`OTHER`] when they do not fit.
#[inline(always)]
fn code(step: u64, latency: u64, ok: bool) -> u32 {
    if step < 0xFFFF && latency < 0x8000 { (step << 16 | latency << 1 | u64::from(ok)) as u32 } else { OTHER }
}

/// The code of a row kept whole (no other code has a step of `0xFFFF`).
const OTHER: u32 = u32::MAX;

/// A [`code`]'s step and latency in microseconds, and `ok`.
#[inline(always)]
fn decode(code: u32) -> (u64, u64, bool) {
    (u64::from(code >> 16) * 1_000, u64::from(code >> 1 & 0x7FFF) * 1_000, code & 1 != 0)
}

/// A check of a block's bytes: any change of the length, or of up to 4 bytes in a row, changes
/// it, and other changes but for a chance of 2^-32. CRC-32C where the CPU has SSE4.2 (`wide`,
/// [`row16::available`]), else a word hash (which any change of one 8-byte word changes): a
/// script's passes all take the same.
#[inline]
fn bytes_check(bytes: &[u8], wide: bool) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is set only where the CPU has SSE4.2.
        return unsafe { crc_check(bytes) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let step = |h: u64, w: u64| (h ^ w).wrapping_mul(K).rotate_left(29);
    let mut words = bytes.chunks_exact(8);
    let mut h = bytes.len() as u64;
    for w in &mut words {
        h = step(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    step(h, u64::from_le_bytes(last))
}

/// [`bytes_check`] with SSE4.2: the CRC-32C of the bytes from the length on.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn crc_check(bytes: &[u8]) -> u64 {
    use std::arch::x86_64::{_mm_crc32_u8, _mm_crc32_u64};
    let mut words = bytes.chunks_exact(8);
    let mut h = bytes.len() as u64;
    for w in &mut words {
        h = _mm_crc32_u64(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    for &b in words.remainder() {
        h = u64::from(_mm_crc32_u8(h as u32, b));
    }
    h
}

/// The bytes a reader reads at a time, and a window's zeros after them.
type Buffer = [u8; READ_BYTES + WINDOW];

/// A window on part of a file read into one buffer that always holds [`WINDOW`] zeros after the
/// bytes read (so a row is parsed from a fixed window) and, unless the file ends first, more than
/// a block's bytes from the next byte not taken on (so a block is whole in it).
#[derive(Debug)]
struct Blocks {
    buf: Box<Buffer>,
    /// Bytes read but not yet taken: `buf[lo..hi]`.
    lo: usize,
    hi: usize,
    /// Offset in the file of `buf[hi]`.
    next: u64,
    /// Nothing at or past this offset is read.
    size: u64,
}

impl Blocks {
    fn new(at: u64, size: u64) -> Blocks {
        Blocks { buf: Box::new([0; READ_BYTES + WINDOW]), lo: 0, hi: 0, next: at, size }
    }

    /// The offset in the file of the next byte not taken.
    #[inline(always)]
    fn offset(&self) -> u64 {
        self.next - (self.hi - self.lo) as u64
    }

    /// The bytes read and not taken.
    fn unread(&self) -> &[u8] {
        &self.buf[self.lo..self.hi]
    }

    /// Reads more when at most a block's bytes are left and the file has more; an error when it
    /// ends early (it was cut short since its length was taken).
    #[inline(always)]
    fn ensure(&mut self, file: &File) -> std::io::Result<()> {
        if self.hi - self.lo <= BLOCK_BYTES && self.next < self.size { self.refill(file) } else { Ok(()) }
    }

    #[cold]
    fn refill(&mut self, file: &File) -> std::io::Result<()> {
        self.buf.copy_within(self.lo..self.hi, 0);
        self.hi -= self.lo;
        self.lo = 0;
        while self.hi < READ_BYTES && self.next < self.size {
            let want = (READ_BYTES - self.hi).min((self.size - self.next) as usize);
            let n = read_at(file, &mut self.buf[self.hi..self.hi + want], self.next)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.hi += n;
            self.next += n as u64;
        }
        self.buf[self.hi..self.hi + WINDOW].fill(0);
        Ok(())
    }

    /// Takes and codes the next block of plain rows into `c`: those from the current position on
    /// that start before offset `until`, at most [`BLOCK_ROWS`] ([`code_rows`]; `wide` as there).
    /// How many, whether it stopped at a row that is not plain (left untaken), and the
    /// [`bytes_check`] of the rows taken.
    #[inline(always)]
    fn code_block(
        &mut self,
        file: &File,
        until: u64,
        wide: bool,
        c: &mut Coder,
    ) -> std::io::Result<(u64, bool, u64)> {
        self.ensure(file)?;
        let start = self.next - self.hi as u64; // the offset of `buf[0]`
        // Every row wanted is whole in the buffer: a block's bytes are, or the file ends at `hi`.
        let stop = self.hi.min(usize::try_from(until.saturating_sub(start)).unwrap_or(usize::MAX));
        let first = self.lo;
        let (taken, end, declined) = code_rows(wide, &self.buf, first, stop, self.hi, c);
        self.lo = end;
        Ok((taken, declined, bytes_check(self.buf.get(first..end).unwrap_or_default(), wide)))
    }

    /// Takes the next `len` bytes (at most a block's); an error when the file ends before them.
    #[inline]
    fn take(&mut self, file: &File, len: usize) -> std::io::Result<&[u8]> {
        self.ensure(file)?;
        if len > BLOCK_BYTES || self.hi - self.lo < len {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.lo += len;
        Ok(&self.buf[self.lo - len..self.lo])
    }
}

/// What the first pass keeps of a piece's rows as it codes them.
struct Coder {
    /// Room for a [`code`] per row the piece may hold (zeros, only touched as written); the first
    /// `coded` are its rows', in order (the first row's step is from time 0).
    codes: Vec<u32>,
    coded: usize,
    /// The last row's time in milliseconds when whole (else [`NOT_WHOLE`]).
    last_ms: u64,
    /// The latest end of a call among whole rows, in milliseconds.
    latest_ms: u64,
    /// The rows coded [`OTHER`].
    kept: Kept,
}

/// The rows coded [`OTHER`], and the order and ends of calls they are checked for.
struct Kept {
    /// The rows, in order.
    others: Vec<ScriptRow>,
    /// The time of the last of them, in microseconds.
    last_t: u64,
    /// The latest end of their calls, in microseconds.
    latest_end: u64,
    /// Whether one's time was earlier than the row before's.
    unordered: bool,
}

impl Kept {
    /// Keeps a row coded [`OTHER`] (times in microseconds) after a row at `last_ms` milliseconds
    /// (at `self.last_t` when [`NOT_WHOLE`]).
    #[cold]
    #[inline(never)]
    fn keep(&mut self, t: u64, latency: u64, ok: bool, last_ms: u64) {
        let before = if last_ms == NOT_WHOLE { self.last_t } else { last_ms * 1_000 };
        self.unordered |= t < before;
        self.last_t = t;
        self.latest_end = self.latest_end.max(t + latency);
        self.others.push(ScriptRow { t: SimTime(t), latency: Dur(latency), ok });
    }
}

/// The last time in milliseconds after a row that is not whole: the next step from it never fits
/// a code (times are below 2^50 ms).
const NOT_WHOLE: u64 = 1 << 63;

/// Codes into `c` the plain rows of `buf` (its data end at `data`, [`WINDOW`] zeros after them)
/// from `at` on that start before `stop` (at most `data`), at most [`BLOCK_ROWS`]: how many, the
/// index after the last, and whether it stopped at a row that is not plain. Rows are read 16
/// bytes at once when `wide`.
#[inline(always)]
fn code_rows(
    wide: bool,
    buf: &Buffer,
    at: usize,
    stop: usize,
    data: usize,
    c: &mut Coder,
) -> (u64, usize, bool) {
    #[cfg(target_arch = "x86_64")]
    if wide {
        // SAFETY: `wide` is set only where the CPU has SSSE3 (`row16::available`).
        return unsafe { code_rows_ssse3(buf, at, stop, data, c) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    code_rows_in::<false>(buf, at, stop, data, c)
}

/// [`code_rows_in`] compiled for SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn code_rows_ssse3(
    buf: &Buffer,
    at: usize,
    stop: usize,
    data: usize,
    c: &mut Coder,
) -> (u64, usize, bool) {
    code_rows_in::<true>(buf, at, stop, data, c)
}

/// [`code_rows`], with [`row16::row`] first when `WIDE` (only where the CPU has SSSE3). A row of
/// whole milliseconds whose step fits a code is in order: only the others are checked
/// ([`Kept::keep`]).
#[inline(always)]
fn code_rows_in<const WIDE: bool>(
    buf: &Buffer,
    at: usize,
    stop: usize,
    data: usize,
    c: &mut Coder,
) -> (u64, usize, bool) {
    let Coder { codes, coded, last_ms, latest_ms, kept } = c;
    let first = *coded;
    // Room for this block's codes (short only if the piece has more rows than it may: never).
    let room = codes.len().min(first + BLOCK_ROWS as usize);
    let codes = codes.get_mut(..room).unwrap_or_default();
    // Every window is in the buffer: rows start before `stop`, at most `READ_BYTES`.
    let stop = stop.min(READ_BYTES);
    let (mut i, mut w, mut last, mut latest) = (at, first, *last_ms, *latest_ms);
    let declined = loop {
        if w >= codes.len() {
            break w < first + BLOCK_ROWS as usize && i < stop;
        }
        let Some(window) = buf.get(i..i + WINDOW).and_then(|w| w.first_chunk()).filter(|_| i < stop) else {
            break false;
        };
        // SAFETY: `WIDE` only where the CPU has SSSE3.
        let short = if WIDE { unsafe { row16::row(window) } } else { plain::short_row(window) };
        // Times and latencies: in milliseconds when `whole`, else in microseconds.
        let (t, latency, ok, n, whole) = match short {
            Some((t, latency, ok, n)) => (t, latency, ok, n, true),
            None => match slow_row::<WIDE>(window, buf.get(i..data).unwrap_or_default()) {
                Some(row) => row,
                None => break true,
            },
        };
        let code = if whole {
            latest = latest.max(t + latency);
            let code = code(t.wrapping_sub(last), latency, ok);
            if code == OTHER {
                kept.keep(t * 1_000, latency * 1_000, ok, last);
            }
            last = t;
            code
        } else {
            kept.keep(t, latency, ok, last);
            last = NOT_WHOLE;
            OTHER
        };
        codes[w] = code;
        i += n;
        w += 1;
    };
    (*coded, *last_ms, *latest_ms) = (w, last, latest);
    ((w - first) as u64, i, declined)
}

/// A row [`code_rows_in`]'s first reader left: of the short shape ([`plain::short_row`], in
/// milliseconds, `true`) unless that reader was it, else any plain row ([`plain::other_row`], in
/// microseconds, `false`); `None` when it is not plain.
#[inline(never)]
fn slow_row<const WIDE: bool>(window: &[u8; WINDOW], data: &[u8]) -> Option<(u64, u64, bool, usize, bool)> {
    if WIDE && let Some((t, latency, ok, n)) = plain::short_row(window) {
        return Some((t, latency, ok, n, true));
    }
    plain::other_row(data).map(|(t, latency, ok, n)| (t, latency, ok, n, false))
}

/// What the first pass found in the file: its rows, the latest end of a call, its pieces and the
/// bytes before the first row.
type Indexed = (u64, u64, Vec<Piece>, usize);

/// What the first pass found in one piece.
struct Scanned {
    rows: u64,
    end: u64,
    first_t: u64,
    last_t: u64,
    latest_end: u64,
    blocks: Vec<Block>,
    codes: Vec<u32>,
    others: Vec<ScriptRow>,
}

/// Checks, codes and indexes the rows that start in `[from, until)` (the first is the line after
/// the first line end at or past `from - 1` when `skip`, as the piece before ends with the row
/// that crosses `from`): `None` unless every one is plain and in time order. Rows are read 16
/// bytes at once when `wide`.
fn scan_piece(
    file: &File,
    size: u64,
    from: u64,
    until: u64,
    skip: bool,
    wide: bool,
) -> std::io::Result<Option<Scanned>> {
    let mut r = Blocks::new(if skip { from - 1 } else { from }, size);
    if skip {
        r.ensure(file)?;
        let head = &r.unread()[..r.unread().len().min(MAX_ROW)];
        let Some(i) = memchr::memchr(b'\n', head) else { return Ok(None) };
        r.lo += i + 1;
    }
    // Room for the most rows the piece may hold (the shortest plain row takes 6 bytes): memory
    // is only touched as it is used.
    let most = (until - from) / 6 + 1;
    let mut blocks: Vec<Block> = Vec::with_capacity((most / BLOCK_ROWS + 2) as usize);
    let kept = Kept { others: Vec::new(), last_t: 0, latest_end: 0, unordered: false };
    let mut c = Coder { codes: vec![0; most as usize], coded: 0, last_ms: 0, latest_ms: 0, kept };
    // The first row's time, for the order across pieces (when it is not plain, the loop stops).
    r.ensure(file)?;
    let first = r.buf.get(r.lo..).and_then(|b| Some(plain::row(b.first_chunk()?, r.unread())?.0));
    let mut rows = 0;
    while r.offset() < until {
        let offset = r.offset();
        let (n, declined, check) = r.code_block(file, until, wide, &mut c)?;
        if declined || c.kept.unordered {
            return Ok(None);
        }
        if n == 0 {
            break;
        }
        blocks.push(Block { offset, check });
        rows += n;
    }
    let last_t = if c.last_ms == NOT_WHOLE { c.kept.last_t } else { c.last_ms * 1_000 };
    let latest_end = c.kept.latest_end.max(c.latest_ms * 1_000);
    c.codes.truncate(c.coded);
    let (first_t, codes, others) = (first.unwrap_or(0), c.codes, c.kept.others);
    Ok(Some(Scanned { rows, end: r.offset(), first_t, last_t, latest_end, blocks, codes, others }))
}

impl StreamedScript {
    /// Checks every row of the script `file` (at `path`) and indexes it, in pieces read at once
    /// (one thread per core): the file back unless it is a regular file holding the exact header
    /// (after an optional byte-order mark) and then plain rows ([`plain`]) in time order, at
    /// least one, all ending with `\n`, and no longer than when its length was taken.
    pub(super) fn scan(file: File, path: &Path) -> std::io::Result<Result<StreamedScript, File>> {
        Self::scan_in(file, path, None, row16::available())
    }

    /// [`StreamedScript::scan`] in `parts` pieces (by default one per core, and one below
    /// [`PARALLEL_BYTES`]), reading rows 16 bytes at once when `wide` (only where the CPU can).
    fn scan_in(
        file: File,
        path: &Path,
        parts: Option<u64>,
        wide: bool,
    ) -> std::io::Result<Result<StreamedScript, File>> {
        match Self::index(&file, parts, wide)? {
            Some((rows, latest_end, pieces, head)) => Ok(Ok(StreamedScript {
                file,
                path: path.to_path_buf(),
                rows,
                latest_end,
                pieces,
                changed: OnceLock::new(),
                head,
                wide,
            })),
            None => Ok(Err(file)),
        }
    }

    /// [`StreamedScript::scan`]'s pass: the rows, the latest end of a call, the pieces and the
    /// bytes before the first row.
    fn index(file: &File, parts: Option<u64>, wide: bool) -> std::io::Result<Option<Indexed>> {
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Ok(None);
        }
        let size = meta.len();
        let mut head = [0u8; 32];
        let n = read_at(file, &mut head, 0)?;
        let head = &head[..n];
        let bom = if head.starts_with(BOM) { BOM.len() } else { 0 };
        if !head[bom..].starts_with(HEADER) {
            return Ok(None);
        }
        let body = (bom + HEADER.len()) as u64;
        if size < body {
            return Ok(None); // cut short since its length was taken
        }
        let parts = match parts {
            Some(parts) => parts.clamp(1, (size - body).max(1)),
            None if size - body < PARALLEL_BYTES => 1,
            None => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) as u64,
        };
        let nominal = |k: u64| body + (size - body) * k / parts;
        let scanned = std::thread::scope(|s| {
            let others: Vec<_> = (1..parts)
                .map(|k| s.spawn(move || scan_piece(file, size, nominal(k), nominal(k + 1), true, wide)))
                .collect();
            let first = scan_piece(file, size, body, nominal(1), false, wide);
            std::iter::once(first)
                .chain(others.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))))
                .collect::<std::io::Result<Option<Vec<Scanned>>>>()
        });
        let scanned = match scanned {
            Ok(Some(s)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            other => return other.map(|_| None),
        };
        // A file that grew since its length was taken is read by the other readers.
        if read_at(file, &mut [0u8; 1], size)? > 0 {
            return Ok(None);
        }
        let mut pieces = Vec::with_capacity(scanned.len());
        let (mut rows, mut last_t, mut latest_end) = (0, 0, 0);
        for s in scanned.into_iter().filter(|s| s.rows > 0) {
            // Each piece is in order; so is the whole when each starts no earlier than the last ended.
            if s.first_t < last_t {
                return Ok(None);
            }
            last_t = s.last_t;
            latest_end = latest_end.max(s.latest_end);
            let (blocks, codes, others) = (s.blocks, s.codes, s.others);
            pieces.push(Piece { first_row: rows, rows: s.rows, end: s.end, blocks, codes, others });
            rows += s.rows;
        }
        Ok((rows > 0).then_some((rows, latest_end, pieces, body as usize)))
    }

    /// Rows in the script.
    pub fn len(&self) -> u64 {
        self.rows
    }

    /// Always false: a script has at least one row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The latest end of a call (time plus latency), in microseconds.
    pub fn latest_end(&self) -> u64 {
        self.latest_end
    }

    /// Bytes its index and codes hold (the rows themselves stay in the file).
    pub fn index_bytes(&self) -> u64 {
        let piece = |p: &Piece| {
            p.blocks.len() * size_of::<Block>() + p.codes.len() * 4 + p.others.len() * size_of::<ScriptRow>()
        };
        self.pieces.iter().map(|p| piece(p) as u64).sum()
    }

    /// Whether every row read again so far was the one the first pass found.
    pub fn check(&self) -> Result<(), ScriptError> {
        match self.changed.get() {
            None => Ok(()),
            Some((row, why)) => {
                Err(ScriptError::Changed { path: self.path.clone(), line: row + 2, why: why.clone() })
            }
        }
    }

    /// Notes that row `row` read again is not what the first pass found (the first such note
    /// stays).
    #[cold]
    fn changed(&self, row: u64, why: impl std::fmt::Display) {
        self.changed.get_or_init(|| (row, why.to_string()));
    }

    /// A reader from the first row on.
    pub fn cursor(&self) -> StreamCursor {
        StreamCursor { row: 0, piece: 0, local: 0, other: 0, last_t: 0 }
    }

    /// Reads up to `n` rows from `c` on, handing each to `each`: how many were read (fewer only at
    /// the end). The rows come from their codes, as the first pass found them; nothing is read
    /// from the file and nothing allocated.
    #[inline]
    pub fn read(&self, c: &mut StreamCursor, n: usize, mut each: impl FnMut(ScriptRow)) -> usize {
        let mut done = 0u64;
        let n = n as u64;
        while done < n && c.row < self.rows {
            let Some(piece) = self.pieces.get(c.piece) else { break };
            let want = (piece.rows - c.local).min(n - done);
            let Some(codes) = piece.codes.get(c.local as usize..(c.local + want) as usize) else { break };
            let (mut last_t, mut other) = (c.last_t, c.other);
            for &code in codes {
                let row = if code == OTHER {
                    other += 1;
                    match piece.others.get(other - 1) {
                        Some(row) => *row,
                        None => return self.stop(c, "its index is short", done), // never: one per code
                    }
                } else {
                    let (step, latency, ok) = decode(code);
                    ScriptRow { t: SimTime(last_t + step), latency: Dur(latency), ok }
                };
                last_t = row.t.0;
                each(row);
            }
            (c.last_t, c.other) = (last_t, other);
            c.row += want;
            c.local += want;
            done += want;
            if c.local == piece.rows {
                // The next piece's first code steps from time 0.
                (c.piece, c.local, c.other, c.last_t) = (c.piece + 1, 0, 0, 0);
            }
        }
        done as usize
    }

    /// Stops `c` for good after a change found at its row: `done` rows were read.
    #[cold]
    fn stop(&self, c: &mut StreamCursor, why: impl std::fmt::Display, done: u64) -> usize {
        self.changed(c.row, why);
        c.row = self.rows;
        done as usize
    }

    /// A hash of the whole file, made a few blocks at a time by [`StreamedScript::rehash`].
    pub fn start_rehash(&self) -> Rehash {
        let mut sha = Sha256::new();
        // The bytes before the first row, as the first pass found them.
        sha.update(if self.head > HEADER.len() { BOM } else { b"" });
        sha.update(HEADER);
        let size = self.pieces.last().map_or(0, |p| p.end);
        Rehash { reader: Blocks::new(self.head as u64, size), sha, piece: 0, block: 0, done: None }
    }

    /// Reads, checks and hashes up to `blocks` more blocks of `r`: once all were, the file's
    /// SHA-256, or `None` when the file is not what the first pass found (the first change is
    /// noted for [`StreamedScript::check`]); nothing while blocks are left.
    pub fn rehash(&self, r: &mut Rehash, blocks: usize) -> Option<Option<[u8; 32]>> {
        for _ in 0..blocks {
            if r.done.is_some() {
                break;
            }
            let Some(piece) = self.pieces.get(r.piece) else {
                // Every byte hashed; the file must end where it did.
                let size = r.reader.size;
                r.done = Some(match read_at(&self.file, &mut [0u8; 1], size) {
                    Ok(0) => Some(std::mem::take(&mut r.sha).finalize().into()),
                    Ok(_) => self.changed_to_none(self.rows - 1, "it is longer than it was"),
                    Err(e) => self.changed_to_none(self.rows - 1, e),
                });
                break;
            };
            if r.block == piece.blocks.len() {
                (r.piece, r.block) = (r.piece + 1, 0);
                continue;
            }
            match self.checked_block(&mut r.reader, piece, r.block) {
                Ok(bytes) => r.sha.update(bytes),
                Err(why) => {
                    let first = piece.first_row + r.block as u64 * BLOCK_ROWS;
                    r.done = Some(self.changed_to_none(first, why));
                }
            }
            r.block += 1;
        }
        r.done
    }

    /// Notes a change found at row `row` ([`StreamedScript::changed`]): no hash.
    #[cold]
    fn changed_to_none(&self, row: u64, why: impl std::fmt::Display) -> Option<[u8; 32]> {
        self.changed(row, why);
        None
    }

    /// Block `b` of `piece`, read by `reader` (which must be at its start) and checked against
    /// the first pass: its bytes, or why not.
    fn checked_block<'r>(&self, reader: &'r mut Blocks, piece: &Piece, b: usize) -> Result<&'r [u8], String> {
        let Some(block) = piece.blocks.get(b) else { return Err("its index is short".into()) };
        let end = piece.blocks.get(b + 1).map_or(piece.end, |next| next.offset);
        if reader.offset() != block.offset {
            return Err("its rows are no longer where they were".into());
        }
        match reader.take(&self.file, (end - block.offset) as usize) {
            Ok(bytes) if bytes_check(bytes, self.wide) == block.check => Ok(bytes),
            Ok(_) => Err(BLOCK_CHANGED.into()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Row `i`, read from its block (whose bytes are checked whole against the first pass);
    /// `None` past the end or when the file changed (noted for [`StreamedScript::check`]).
    pub fn get(&self, i: u64) -> Option<ScriptRow> {
        let p = self.pieces.partition_point(|p| p.first_row <= i).checked_sub(1)?;
        let piece = &self.pieces[p];
        let local = i - piece.first_row;
        let b = (local / BLOCK_ROWS) as usize;
        let block = piece.blocks.get(b)?;
        let end = piece.blocks.get(b + 1).map_or(piece.end, |next| next.offset);
        let len = (end - block.offset) as usize;
        let mut buf = [0u8; BLOCK_BYTES + WINDOW];
        let first = i - local % BLOCK_ROWS;
        if len > BLOCK_BYTES {
            self.changed(first, "a block is longer than plain rows can be");
            return None;
        }
        if let Err(e) = read_exact_at(&self.file, &mut buf[..len], block.offset) {
            self.changed(first, e);
            return None;
        }
        if bytes_check(&buf[..len], self.wide) != block.check {
            self.changed(first, BLOCK_CHANGED);
            return None;
        }
        let mut at = 0;
        for _ in 0..local % BLOCK_ROWS {
            let window = buf[at..].first_chunk::<WINDOW>()?;
            at += plain::row(window, &buf[at..len])?.3;
        }
        let (t, latency, ok, _) = plain::row(buf[at..].first_chunk::<WINDOW>()?, &buf[at..len])?;
        Some(ScriptRow { t: SimTime(t), latency: Dur(latency), ok })
    }
}

/// A hash of a [`StreamedScript`]'s file being made ([`StreamedScript::start_rehash`]): where
/// its reader is, and what it found once done.
#[derive(Debug)]
pub struct Rehash {
    reader: Blocks,
    sha: Sha256,
    /// The next block: its piece, and its index there.
    piece: usize,
    block: usize,
    /// Once every block was read: the hash, or `None` when the file changed.
    done: Option<Option<[u8; 32]>>,
}

/// Where a reader of a [`StreamedScript`] is.
#[derive(Debug)]
pub struct StreamCursor {
    /// Index of the next row.
    row: u64,
    /// Its piece, and its index there.
    piece: usize,
    local: u64,
    /// Index in its piece's rows kept whole of the next one.
    other: usize,
    /// The time of the row before (0 at a piece's start).
    last_t: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f
    }

    /// `content` scanned in `parts` pieces.
    fn scan(f: &tempfile::NamedTempFile, parts: u64) -> Option<StreamedScript> {
        scan_as(f, parts, row16::available())
    }

    /// `content` scanned in `parts` pieces, rows read 16 bytes at once when `wide`.
    fn scan_as(f: &tempfile::NamedTempFile, parts: u64, wide: bool) -> Option<StreamedScript> {
        StreamedScript::scan_in(File::open(f.path()).unwrap(), f.path(), Some(parts), wide).unwrap().ok()
    }

    /// Whether rows are read a word at a time, then 16 bytes at once (where the CPU can).
    fn widths() -> Vec<bool> {
        [false, true].into_iter().filter(|w| !w || row16::available()).collect()
    }

    /// Each of `parts` with each of [`widths`].
    fn parts_and_widths(parts: &[u64]) -> Vec<(u64, bool)> {
        parts.iter().flat_map(|&p| widths().into_iter().map(move |w| (p, w))).collect()
    }

    /// An error's text from its line on (the path cut off).
    fn from_line(e: impl ToString) -> String {
        let e = e.to_string();
        e[e.find(", line").unwrap_or(0)..].to_string()
    }

    /// Every row of `s`, read `n` at a time.
    fn rows(s: &StreamedScript, n: usize) -> Vec<ScriptRow> {
        let mut c = s.cursor();
        let mut rows = Vec::new();
        while s.read(&mut c, n, |r| rows.push(r)) > 0 {}
        rows
    }

    fn script(rows: u64) -> String {
        let mut text = String::from("\u{feff}t_ms,latency_ms,ok\n");
        for i in 0..rows {
            text +=
                &format!("{}{},{}.{},{}\n", i * 37 / 3, [".5", ""][(i % 2) as usize], i % 900, i % 10, i % 2);
        }
        text
    }

    #[test]
    fn rows_are_the_same_however_cut_and_read() {
        let text = script(5_000);
        let f = write(text.as_bytes());
        let expected = super::super::tests::all_rows(&super::super::load_script(f.path()).unwrap());
        assert_eq!(expected.len(), 5_000);
        for (parts, wide) in parts_and_widths(&[1, 2, 3, 7, 64, 10_000]) {
            let s = scan_as(&f, parts, wide).expect("plain");
            assert_eq!(s.len(), 5_000);
            assert_eq!(s.latest_end(), expected.iter().map(|r| (r.t + r.latency).0).max().unwrap());
            for n in [1, 7, 64, 100_000] {
                assert_eq!(rows(&s, n), expected, "{parts} parts, {n} at a time");
            }
            for i in [0, 1, 63, 64, 65, 2_500, 4_999] {
                assert_eq!(s.get(i), Some(expected[i as usize]), "row {i} of {parts} parts");
            }
            assert_eq!(s.get(5_000), None);
            s.check().unwrap();
        }
        // Anything but plain rows in order, in any piece or across two, is declined.
        let header = "t_ms,latency_ms,ok\n";
        let late =
            format!("{header}{}", (0..1000).map(|i| format!("{},5,1\n", 1000 - i / 600)).collect::<String>());
        for other in [
            String::new(),
            header.to_string(),
            "t_ms,latency_ms,ok\r\n5,1,1\r\n".to_string(),
            format!("{header}5,1,1"),
            format!("{header}5,1,1\n\n6,1,1\n"),
            late,
            format!("{header}10,1,1\n9,1,1\n"),
        ] {
            let f = write(other.as_bytes());
            for (parts, wide) in parts_and_widths(&[1, 2, 3]) {
                assert!(scan_as(&f, parts, wide).is_none(), "{other:?} in {parts} parts");
            }
        }
    }

    #[test]
    fn rows_of_every_shape_are_read_alike_wide_or_narrow() {
        // Steps and latencies of every length, decimals, and whole rows next to rows with
        // decimals, across blocks and pieces.
        let mut text = String::from("t_ms,latency_ms,ok\n");
        let mut t = 0u64;
        for i in 0..3_000u64 {
            t += [1, 65_534, 65_535, 2, 1_000_000, 7][(i % 6) as usize];
            let latency = [0, 32_767, 32_768, 5, 999_999_999, 12, 1, 9_999, 10_000][(i % 9) as usize];
            match i % 11 {
                3 => text += &format!("{t}.5,{latency},{}\n", i % 2),
                4 => text += &format!("{t},{latency}.001,{}\n", i % 2),
                _ => text += &format!("{t},{latency},{}\n", i % 2),
            }
        }
        let f = write(text.as_bytes());
        let expected = super::super::tests::all_rows(&super::super::load_script(f.path()).unwrap());
        assert_eq!(expected.len(), 3_000);
        for wide in widths() {
            for parts in [1, 2, 3, 7] {
                let s = scan_as(&f, parts, wide).expect("plain");
                for n in [1, 63, 64, 65, 4_096] {
                    assert_eq!(rows(&s, n), expected, "{parts} parts, {n} at a time, wide {wide}");
                }
                for i in [0, 3, 4, 5, 1_500, 2_999] {
                    assert_eq!(s.get(i), Some(expected[i as usize]), "row {i} of {parts} parts");
                }
                s.check().unwrap();
            }
        }
    }

    /// The file's hash as [`StreamedScript::rehash`] makes it, `blocks` at a time.
    fn hash(s: &StreamedScript, blocks: usize) -> Option<[u8; 32]> {
        let mut r = s.start_rehash();
        loop {
            if let Some(hash) = s.rehash(&mut r, blocks) {
                return hash;
            }
        }
    }

    #[test]
    fn a_change_anywhere_in_a_block_is_found_by_the_hash_and_by_its_rows_read_alone() {
        let text = script(1_000);
        let f = write(text.as_bytes());
        let before = rows(&scan(&f, 1).unwrap(), 100);
        // The first, a middle and the last row changed in place (same length): the run's rows
        // are still those the first pass found; the hash is refused, the error names the first
        // line of the changed row's block.
        for (row, block_first) in [(0u64, 0u64), (500, 448), (999, 960)] {
            let line = text.lines().nth(row as usize + 1).unwrap();
            let changed_line = line.replacen(',', ";", 1);
            let f = write(text.as_bytes());
            let s = scan(&f, 1).unwrap();
            std::fs::write(f.path(), text.replacen(line, &changed_line, 1)).unwrap();
            assert_eq!(rows(&s, 100), before, "row {row}");
            assert!(s.check().is_ok(), "not read again yet");
            assert_eq!(hash(&s, 3), None, "row {row}");
            let err = s.check().unwrap_err().to_string();
            assert!(err.contains(&format!("line {}: the file changed", block_first + 2)), "{err}");
            assert_eq!(s.get(row), None);
        }
        // Cut short in the middle of the last row: found at once (the file is shorter than a
        // read); and a row asked for alone in a changed block is refused.
        let f = write(text.as_bytes());
        let s = scan(&f, 1).unwrap();
        std::fs::write(f.path(), &text[..text.len() - 3]).unwrap();
        assert_eq!(hash(&s, usize::MAX), None);
        assert!(s.check().unwrap_err().to_string().contains("line 2: the file changed"));
        assert_eq!(s.get(999), None);
    }

    #[test]
    fn the_hash_is_the_whole_files_made_in_steps_of_any_size() {
        let with_bom = script(3_000);
        let without = with_bom.trim_start_matches('\u{feff}').to_string();
        for (text, parts) in [(&with_bom, 1), (&with_bom, 3), (&without, 2), (&without, 64)] {
            let f = write(text.as_bytes());
            let s = scan(&f, parts).unwrap();
            for blocks in [1, 2, 63, usize::MAX] {
                assert_eq!(hash(&s, blocks), Some(Sha256::digest(text.as_bytes()).into()), "{parts} parts");
            }
            assert!(s.check().is_ok());
        }
        // A hash asked for again after it was made gives it again.
        let f = write(with_bom.as_bytes());
        let s = scan(&f, 1).unwrap();
        let mut r = s.start_rehash();
        let made = s.rehash(&mut r, usize::MAX);
        assert_eq!(made, Some(Some(Sha256::digest(with_bom.as_bytes()).into())));
        assert_eq!(s.rehash(&mut r, 1), made);
    }

    #[test]
    fn a_file_changed_after_the_first_pass_is_reported_with_its_first_changed_line() {
        let text = script(1_000);
        let f = write(text.as_bytes());
        let s = scan(&f, 1).unwrap();
        let before = rows(&s, 100);
        // Same length, other values (row 501, in the block of rows 448 to 511).
        let changed = text.replacen("\n6179,", "\n6178,", 1);
        assert!(changed.len() == text.len() && changed != text);
        std::fs::write(f.path(), &changed).unwrap();
        assert_eq!(rows(&s, 100), before, "the run's rows are the first pass's");
        assert_eq!(hash(&s, 7), None);
        let s2 = scan(&write(text.as_bytes()), 1).unwrap();
        assert!(s2.check().is_ok());
        let err = s.check().unwrap_err().to_string();
        assert!(
            err.contains("line 450: the file changed while it was read (a row from this line on"),
            "{err}"
        );
        // A row asked for on its own is checked with its block.
        assert_eq!(s2.get(500), Some(before[500]));
        assert_eq!(s.get(500), None);
        // Cut short: the reads fail.
        let f = write(text.as_bytes());
        let s = scan(&f, 3).unwrap();
        std::fs::write(f.path(), &text[..text.len() / 2]).unwrap();
        assert_eq!(hash(&s, 7), None);
        assert!(s.check().unwrap_err().to_string().contains("the file changed while it was read"));
        // Grown: every byte as it was, and more after them.
        let f = write(text.as_bytes());
        let s = scan(&f, 2).unwrap();
        std::fs::write(f.path(), format!("{text}99999,1,1\n")).unwrap();
        assert_eq!(hash(&s, 7), None);
        let err = s.check().unwrap_err().to_string();
        assert!(
            err.contains("line 1001: the file changed while it was read (it is longer than it was)"),
            "{err}"
        );
    }

    /// Rows as the week's are written (whole milliseconds, mostly 12 to 16 bytes), with longer
    /// steps and latencies, decimals and leading zeros here and there: `seed` picks them.
    fn week_like(rows: u64, seed: u64) -> String {
        let mut text = String::from("t_ms,latency_ms,ok\n");
        let (mut t, mut x) = (600_000_000u64, seed | 1);
        for _ in 0..rows {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += x % 2_000;
            let latency = [x >> 20 & 0xFF, x >> 20 & 0xFFF, x >> 20 & 0x1_FFFF, 0][(x >> 40 & 3) as usize];
            text += &match x >> 50 & 31 {
                0 => format!("{t}.{},{latency},{}\n", x % 10, x >> 8 & 1),
                1 => format!("{t},{latency}.25,{}\n", x >> 8 & 1),
                2 => format!("{t},00{latency},{}\n", x >> 8 & 1),
                _ => format!("{t},{latency},{}\n", x >> 8 & 1),
            };
        }
        text
    }

    /// The rows the general reader finds in `content`, or its error (the path cut off).
    fn general(content: &[u8]) -> Result<Vec<ScriptRow>, String> {
        let f = write(content);
        let file = File::open(f.path()).unwrap();
        super::super::read_rows(f.path(), file, content.len() as u64).map_err(from_line)
    }

    /// Whether `content` is plain: an optional byte-order mark, the exact header, then rows [`plain::fast_row`] reads, each
    /// ending with `\n`, in time order.
    fn is_plain(content: &[u8]) -> bool {
        let content = content.strip_prefix(BOM).unwrap_or(content);
        let Some(body) = content.strip_prefix(HEADER) else { return false };
        let mut last = 0;
        let mut rest = body;
        while !rest.is_empty() {
            let Some((t, _, _, n)) = plain::fast_row(rest) else { return false };
            if t < last {
                return false;
            }
            (last, rest) = (t, &rest[n..]);
        }
        !body.is_empty()
    }

    /// `content` streamed in 1 to 3 pieces, rows parsed wide and narrow: declined exactly when it
    /// is not plain, and otherwise the general reader's rows and latest end.
    fn streams_as_the_general_reader_reads(content: &[u8]) -> Result<(), TestCaseError> {
        let f = write(content);
        let expected = general(content);
        let plain = is_plain(content);
        for (parts, wide) in parts_and_widths(&[1, 2, 3]) {
            let s = scan_as(&f, parts, wide);
            prop_assert_eq!(s.is_some(), plain, "{} parts, wide {}", parts, wide);
            if let Some(s) = s {
                let rows = rows(&s, 100);
                prop_assert!(s.check().is_ok());
                let latest = rows.iter().map(|r| (r.t + r.latency).0).max();
                prop_assert_eq!(Some(s.latest_end()), latest);
                prop_assert_eq!(&Ok(rows), &expected);
            }
        }
        Ok(())
    }

    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// A week-like script with one byte changed, taken out or put in, or cut short,
        /// anywhere (across 16-byte rows, blocks, reads and pieces): streamed exactly when plain,
        /// with the general reader's rows.
        #[test]
        fn any_change_of_a_plain_script_streams_or_falls_back_alike(
            seed in any::<u64>(),
            rows in 1u64..3_000,
            at in any::<prop::sample::Index>(),
            edit in 0usize..4,
            byte in prop::sample::select(b",.x\n\r 0129\"-".to_vec()),
        ) {
            let mut content = week_like(rows, seed).into_bytes();
            let at = HEADER.len() + at.index(content.len() - HEADER.len());
            match edit {
                0 => content[at] = byte,
                1 => { content.remove(at); }
                2 => content.insert(at, byte),
                _ => content.truncate(at),
            }
            streams_as_the_general_reader_reads(&content)?;
        }
    }

    #[test]
    fn week_like_scripts_stream_whole_and_wide() {
        for seed in [1, 2, 3] {
            let text = week_like(5_000, seed);
            assert!(is_plain(text.as_bytes()));
            streams_as_the_general_reader_reads(text.as_bytes()).unwrap();
        }
    }

    #[test]
    fn errors_anywhere_are_the_general_readers() {
        // Rows of 16 and 17 bytes in turn: a bad byte at the first, a middle and the last rows,
        // at each of the bytes around the 16th; no final line end; cut short in the middle of a
        // row; CRLF, a byte-order mark, quotes (read by the general reader).
        let rows: Vec<String> = (0..3_000u64)
            .map(|i| format!("{},{},1\n", 100_000_000 + i * 7, [100, 1_000][(i % 2) as usize] + i % 900))
            .collect();
        assert!(rows.iter().enumerate().all(|(i, r)| r.len() == 16 + i % 2));
        let text = format!("t_ms,latency_ms,ok\n{}", rows.concat());
        let at = |row: usize, byte: usize| {
            HEADER.len() + rows[..row].iter().map(String::len).sum::<usize>() + byte
        };
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for row in [0, 1, 1_500, 1_501, 2_998, 2_999] {
            for byte in [0, 9, 10, 14, 15, 16] {
                for bad in [b'x', b',', b'\n'] {
                    let mut content = text.clone().into_bytes();
                    content[at(row, byte)] = bad;
                    cases.push(content);
                }
            }
        }
        cases.push(text.trim_end().as_bytes().to_vec());
        cases.push(text.as_bytes()[..at(1_500, 12)].to_vec());
        cases.push(text.replace('\n', "\r\n").into_bytes());
        cases.push(format!("\u{feff}{text}").into_bytes());
        cases.push(text.replacen("\n100000007,", "\n\"100000007\",", 1).into_bytes());
        for content in cases {
            let f = write(&content);
            let loaded = super::super::load_script(f.path())
                .map(|c| super::super::tests::all_rows(&c))
                .map_err(from_line);
            assert_eq!(loaded, general(&content), "{:?}", String::from_utf8_lossy(&content[..80]));
            streams_as_the_general_reader_reads(&content).unwrap();
        }
    }
}
