//! Fixed-width records of 64-bit words, held in memory when small and spilled to a scratch file
//! when large, so a sweep's results cost disk, not memory, per cell. The file has no name once
//! open (it is removed as soon as it is created, where the system allows; else when dropped), so
//! nothing is left behind, whatever happens. Reads go through a small cache of blocks, sized
//! for a few interleaved sequential readers (one per scenario).

use crate::positioned::{read_exact_at, write_all_at};
use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where large records go: memory, or a scratch file in a folder above `threshold` bytes.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The folder of scratch files (`None`: always memory).
    pub dir: Option<PathBuf>,
    /// Records of at most this many bytes stay in memory.
    pub threshold: usize,
}

/// Records above this size go to the scratch folder.
pub const SPILL_ABOVE: usize = 1 << 20;

impl Scratch {
    /// Everything in memory (small tables, tests).
    pub fn memory() -> Scratch {
        Scratch::default()
    }

    /// Records above [`SPILL_ABOVE`] bytes in a scratch file in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Scratch {
        Scratch { dir: Some(dir.into()), threshold: SPILL_ABOVE }
    }
}

/// Words per cached block.
const BLOCK_WORDS: usize = 2048;

/// A scratch file and the blocks read from it.
struct Spilled {
    file: File,
    /// The folder the file is in, named in its errors.
    dir: PathBuf,
    /// Set when the file could not be removed on creation: removed on drop.
    path: Option<PathBuf>,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// Block index -> slot in `blocks`.
    at: HashMap<usize, usize>,
    /// (block index, last use, words).
    blocks: Vec<(usize, u64, Vec<u64>)>,
    clock: u64,
    /// The first I/O error met (reads then give zeros): see [`Records::check`].
    error: Option<std::io::Error>,
}

enum Backing {
    Memory(Vec<u64>),
    File(Spilled),
}

/// `len` records of `width` words each, all zero at first.
pub struct Records {
    width: usize,
    len: usize,
    /// Blocks the cache may hold.
    capacity: usize,
    backing: Backing,
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let spilled = matches!(self.backing, Backing::File(_));
        write!(f, "Records {{ width: {}, len: {}, spilled: {spilled} }}", self.width, self.len)
    }
}

static SCRATCH_FILES: AtomicU64 = AtomicU64::new(0);

impl Records {
    /// `len` zeroed records of `width` words, in `scratch`; `readers` is how many sequential
    /// readers may interleave (the cache keeps a few blocks for each). When the scratch folder
    /// cannot take the file, the records are held in memory instead.
    pub fn new(width: usize, len: usize, readers: usize, scratch: &Scratch) -> Records {
        let bytes = width.saturating_mul(len).saturating_mul(8);
        let capacity = 2 * readers.max(1) + 4;
        let spilled = scratch.dir.as_deref().filter(|_| bytes > scratch.threshold).and_then(|dir| {
            let (file, path) = scratch_file(dir).ok()?;
            file.set_len(bytes as u64).ok()?;
            Some(Spilled { file, dir: dir.to_path_buf(), path, cache: Mutex::new(Cache::default()) })
        });
        let backing = spilled.map_or_else(|| Backing::Memory(vec![0; width * len]), Backing::File);
        Records { width, len, capacity, backing }
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Words per record.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Writes record `i` (`words` is `width` long).
    pub fn put(&mut self, i: usize, words: &[u64]) -> std::io::Result<()> {
        debug_assert_eq!(words.len(), self.width);
        let start = i * self.width;
        match &mut self.backing {
            Backing::Memory(v) => {
                v[start..start + self.width].copy_from_slice(words);
                Ok(())
            }
            Backing::File(s) => {
                let cache = s.cache.get_mut().unwrap_or_else(|p| p.into_inner());
                let (first, last) = (start / BLOCK_WORDS, (start + self.width - 1) / BLOCK_WORDS);
                for b in first..=last {
                    if let Some(slot) = cache.at.remove(&b) {
                        cache.blocks[slot].0 = usize::MAX;
                    }
                }
                let mut bytes = Vec::with_capacity(words.len() * 8);
                for w in words {
                    bytes.extend_from_slice(&w.to_le_bytes());
                }
                write_all_at(&s.file, &bytes, start as u64 * 8).map_err(|e| s.located(e))
            }
        }
    }

    /// Reads record `i` into `out` (`width` long). After an I/O error, zeros (see [`check`]).
    ///
    /// [`check`]: Records::check
    pub fn get(&self, i: usize, out: &mut [u64]) {
        let start = i * self.width;
        match &self.backing {
            Backing::Memory(v) => out.copy_from_slice(&v[start..start + self.width]),
            Backing::File(s) => {
                let mut cache = s.cache.lock().unwrap_or_else(|p| p.into_inner());
                let total = self.len * self.width;
                let mut k = 0;
                while k < self.width {
                    let word = start + k;
                    let (b, within) = (word / BLOCK_WORDS, word % BLOCK_WORDS);
                    let n = (BLOCK_WORDS - within).min(self.width - k);
                    match cache.block(&s.file, b, total, self.capacity) {
                        Some(block) => out[k..k + n].copy_from_slice(&block[within..within + n]),
                        None => out[k..k + n].fill(0),
                    }
                    k += n;
                }
            }
        }
    }

    /// The first I/O error met reading the scratch file, if any (taken: reported once).
    pub fn check(&self) -> std::io::Result<()> {
        match &self.backing {
            Backing::Memory(_) => Ok(()),
            Backing::File(s) => match s.cache.lock().unwrap_or_else(|p| p.into_inner()).error.take() {
                Some(e) => Err(s.located(e)),
                None => Ok(()),
            },
        }
    }
}

impl Spilled {
    /// `e` with the folder of the scratch file named (the file itself has no name).
    fn located(&self, e: std::io::Error) -> std::io::Error {
        let place = format!("a scratch file in {} (beside the output folder)", self.dir.display());
        std::io::Error::new(e.kind(), format!("{place}: {e}"))
    }
}

impl Cache {
    /// Block `b` of the file, read when not cached (evicting the least recently used).
    fn block(&mut self, file: &File, b: usize, total: usize, capacity: usize) -> Option<&[u64]> {
        self.clock += 1;
        let clock = self.clock;
        if let Some(&slot) = self.at.get(&b) {
            self.blocks[slot].1 = clock;
            return Some(&self.blocks[slot].2);
        }
        let words = BLOCK_WORDS.min(total.saturating_sub(b * BLOCK_WORDS));
        let mut bytes = vec![0u8; words * 8];
        if let Err(e) = read_exact_at(file, &mut bytes, (b * BLOCK_WORDS * 8) as u64) {
            self.error.get_or_insert(e);
            return None;
        }
        let data: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let slot = if self.blocks.len() < capacity {
            self.blocks.push((b, clock, data));
            self.blocks.len() - 1
        } else {
            let slot = (0..self.blocks.len()).min_by_key(|&i| self.blocks[i].1).unwrap_or(0);
            self.at.remove(&self.blocks[slot].0);
            self.blocks[slot] = (b, clock, data);
            slot
        };
        self.at.insert(b, slot);
        Some(&self.blocks[slot].2)
    }
}

/// A new scratch file in `dir`, removed at once where the system allows (else its path, to
/// remove on drop).
fn scratch_file(dir: &std::path::Path) -> std::io::Result<(File, Option<PathBuf>)> {
    std::fs::create_dir_all(dir)?;
    loop {
        let n = SCRATCH_FILES.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".breakerlab-scratch-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
            Ok(file) => {
                let keep = if cfg!(unix) && std::fs::remove_file(&path).is_ok() { None } else { Some(path) };
                return Ok((file, keep));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Drop for Spilled {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_records_read_back_as_written_and_leave_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch { dir: Some(dir.path().to_path_buf()), threshold: 0 };
        let mut r = Records::new(3, 5000, 2, &scratch);
        assert!(format!("{r:?}").contains("spilled: true"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        for i in (0..5000).rev() {
            r.put(i, &[i as u64, 7, u64::MAX - i as u64]).unwrap();
        }
        let mut out = [0u64; 3];
        for i in [0, 682, 683, 4999, 1, 2500] {
            r.get(i, &mut out);
            assert_eq!(out, [i as u64, 7, u64::MAX - i as u64]);
        }
        r.put(683, &[1, 2, 3]).unwrap();
        r.get(683, &mut out);
        assert_eq!(out, [1, 2, 3]);
        r.check().unwrap();
        let m = Records::new(3, 10, 1, &Scratch::memory());
        m.get(9, &mut out);
        assert_eq!(out, [0, 0, 0]);
        // A scratch folder that cannot be made (under a file): held in memory.
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let held = Records::new(3, 10, 1, &Scratch { dir: Some(file.join("sub")), threshold: 0 });
        assert!(format!("{held:?}").contains("spilled: false"));
    }

    #[test]
    fn scratch_errors_name_the_folder_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (file, path) = scratch_file(dir.path()).unwrap();
        let s = Spilled { file, dir: dir.path().to_path_buf(), path, cache: Mutex::new(Cache::default()) };
        let e = s.located(std::io::Error::from(std::io::ErrorKind::StorageFull));
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
        let expected = format!("a scratch file in {} (beside the output folder): ", dir.path().display());
        assert!(e.to_string().starts_with(&expected), "{e}");
    }
}
