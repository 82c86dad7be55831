//! A shard's rows journalled beside its folder while it runs, so a shard killed and run again
//! resumes from the cells it had finished instead of starting over.
//!
//! The rows go to `<out>/.shard-K-of-N.resume/runs.csv` as they are computed; every
//! [`CHECKPOINT_ROWS`] rows the writer is flushed and `checkpoint.toml` records how many rows and
//! bytes are complete, with the SHA-256 of those bytes and what the run was (sweep hash, shard,
//! build). A rerun of the same shard of the same sweep by the same build checks the journal's
//! first bytes against that hash, cuts whatever followed (a row half written when the process
//! died), and runs only the cells after them; anything that does not match is discarded and the
//! shard starts over. When the shard finishes, the journal becomes its runs.csv and is removed:
//! the bytes are those of a run never interrupted.

use crate::sweep::shard::{Slice, hex};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{self, File};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Rows between checkpoints.
pub const CHECKPOINT_ROWS: u64 = 64;

/// The journal's folder for the shard folder `dir`: a hidden sibling (no `shard-*` glob sees it).
pub fn journal_dir(dir: &Path) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "shard".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}.resume"))
}

/// `checkpoint.toml`: how much of the journal is complete.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Checkpoint {
    /// What was running: the sweep's hash, the shard and the build.
    run: String,
    /// Complete rows below the header.
    rows: u64,
    /// Bytes of the file they fill (header included).
    bytes: u64,
    /// SHA-256 of those bytes.
    sha256: String,
}

/// The rows being journalled: a writer that hashes and counts what it passes to the file.
pub struct Journal {
    dir: PathBuf,
    file: std::io::BufWriter<File>,
    hasher: Sha256,
    bytes: u64,
    run: String,
    /// Header bytes still to drop: a resumed journal already has its header.
    skip_header: bool,
}

/// What [`Journal::open`] found of an earlier run.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// No journal: the shard starts.
    Nothing,
    /// A journal whose first rows were checked: the shard resumes after them.
    Resumed(u64),
    /// A journal that could not be used, and why: the shard starts over.
    Discarded(String),
}

impl Found {
    /// Rows already done.
    pub fn rows(&self) -> u64 {
        if let Found::Resumed(rows) = self { *rows } else { 0 }
    }
}

impl Journal {
    /// Opens the journal of shard folder `dir` for the run `run` (sweep hash, shard, build):
    /// resumes a checked journal of the same run, else starts a new one.
    pub fn open(dir: &Path, run: &str) -> Result<(Journal, Found)> {
        let jdir = journal_dir(dir);
        let found = match Self::check(&jdir, run) {
            Ok(Some((hasher, cp))) => Some((hasher, cp)),
            Ok(None) => None,
            Err(why) => {
                let _ = fs::remove_dir_all(&jdir);
                return Self::start(jdir, run).map(|j| (j, Found::Discarded(why)));
            }
        };
        let Some((hasher, cp)) = found else {
            let _ = fs::remove_dir_all(&jdir);
            return Self::start(jdir, run).map(|j| (j, Found::Nothing));
        };
        let path = jdir.join("runs.csv");
        let file = File::options().write(true).open(&path).map_err(|e| Error::io(&path, e))?;
        file.set_len(cp.bytes).map_err(|e| Error::io(&path, e))?;
        let mut file = std::io::BufWriter::new(file);
        file.seek(std::io::SeekFrom::End(0)).map_err(|e| Error::io(&path, e))?;
        let journal =
            Journal { dir: jdir, file, hasher, bytes: cp.bytes, run: run.to_string(), skip_header: true };
        Ok((journal, Found::Resumed(cp.rows)))
    }

    /// A journal's checkpoint and the hasher over its checked bytes; `None` when there is none
    /// (or nothing done yet), an error saying why it cannot be used.
    fn check(jdir: &Path, run: &str) -> std::result::Result<Option<(Sha256, Checkpoint)>, String> {
        let cp_path = jdir.join("checkpoint.toml");
        let Ok(text) = fs::read_to_string(&cp_path) else { return Ok(None) };
        let cp: Checkpoint =
            toml::from_str(&text).map_err(|e| format!("{}: {}", cp_path.display(), e.message().trim()))?;
        if cp.run != run {
            return Err("it is of another sweep, shard or build".into());
        }
        if cp.rows == 0 {
            return Ok(None);
        }
        let path = jdir.join("runs.csv");
        let file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut hasher = Sha256::new();
        let read = std::io::copy(&mut file.take(cp.bytes), &mut hasher)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if read != cp.bytes || hex(&hasher.clone().finalize()) != cp.sha256 {
            return Err(format!(
                "its first {} rows are not the bytes its checkpoint's SHA-256 vouches for",
                cp.rows
            ));
        }
        Ok(Some((hasher, cp)))
    }

    fn start(jdir: PathBuf, run: &str) -> Result<Journal> {
        fs::create_dir_all(&jdir).map_err(|e| Error::io(&jdir, e))?;
        let path = jdir.join("runs.csv");
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Journal {
            dir: jdir,
            file: std::io::BufWriter::new(file),
            hasher: Sha256::new(),
            bytes: 0,
            run: run.to_string(),
            skip_header: false,
        })
    }

    /// Records that the first `rows` rows are complete: everything written so far, flushed to
    /// the file (call it every [`CHECKPOINT_ROWS`] rows, after a flush).
    pub fn checkpoint(&self, rows: u64) -> Result<()> {
        let cp = Checkpoint {
            run: self.run.clone(),
            rows,
            bytes: self.bytes,
            sha256: hex(&self.hasher.clone().finalize()),
        };
        let text = toml::to_string(&cp).map_err(|e| Error::Internal(format!("checkpoint.toml: {e}")))?;
        let (tmp, path) = (self.dir.join("checkpoint.toml.new"), self.dir.join("checkpoint.toml"));
        fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }

    /// Flushes the rows and returns the journal's runs.csv, to be copied into the shard's folder.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.file.flush().map_err(|e| Error::io(&self.dir, e))?;
        Ok(self.dir.join("runs.csv"))
    }

    /// Removes the journal of shard folder `dir` (once its shard is done).
    pub fn remove(dir: &Path) {
        let _ = fs::remove_dir_all(journal_dir(dir));
    }
}

impl Write for Journal {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut data = buf;
        if self.skip_header {
            match memchr::memchr(b'\n', data) {
                Some(i) => {
                    self.skip_header = false;
                    data = &data[i + 1..];
                }
                None => return Ok(buf.len()),
            }
        }
        self.file.write_all(data)?;
        self.hasher.update(data);
        self.bytes += data.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// `slices` without their first `done` cells (the ones a resumed journal holds), in order.
pub fn skip_cells(slices: &[Slice], done: u64) -> Vec<Slice> {
    let mut left = done;
    let mut out = Vec::new();
    for s in slices {
        let n = s.configs.len() as u64;
        if left >= n {
            left -= n;
            continue;
        }
        out.push(Slice { configs: s.configs.start + left as usize..s.configs.end, ..s.clone() });
        left = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "a,b\n";

    fn write_rows(j: &mut Journal, from: u64, to: u64) {
        for i in from..to {
            j.write_all(format!("{i},{}\n", i * i).as_bytes()).unwrap();
            if (i + 1).is_multiple_of(CHECKPOINT_ROWS) {
                j.flush().unwrap();
                j.checkpoint(i + 1).unwrap();
            }
        }
    }

    fn expected(rows: u64) -> String {
        HEADER.to_string() + &(0..rows).map(|i| format!("{i},{}\n", i * i)).collect::<String>()
    }

    #[test]
    fn a_killed_journal_resumes_after_its_last_checked_rows_and_gives_the_same_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("shard-0-of-2");
        let (mut j, found) = Journal::open(&dir, "run").unwrap();
        assert_eq!(found, Found::Nothing);
        j.write_all(HEADER.as_bytes()).unwrap();
        write_rows(&mut j, 0, 150);
        // Killed mid-row: the buffered rows after the checkpoint at 128, and half a row, reach the file.
        j.write_all(b"150,22").unwrap();
        drop(j);
        let (mut j, found) = Journal::open(&dir, "run").unwrap();
        assert_eq!(found, Found::Resumed(128));
        j.write_all(HEADER.as_bytes()).unwrap(); // the new writer's header is dropped
        write_rows(&mut j, 128, 200);
        let path = j.finish().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), expected(200));
        Journal::remove(&dir);
        assert!(!journal_dir(&dir).exists());
        // Another run's journal, or one edited within its checked rows, is discarded.
        let (mut j, _) = Journal::open(&dir, "run").unwrap();
        j.write_all(HEADER.as_bytes()).unwrap();
        write_rows(&mut j, 0, 70);
        drop(j);
        let (_, found) = Journal::open(&dir, "another").unwrap();
        assert_eq!(found, Found::Discarded("it is of another sweep, shard or build".into()));
        let (mut j, _) = Journal::open(&dir, "run").unwrap();
        j.write_all(HEADER.as_bytes()).unwrap();
        write_rows(&mut j, 0, 70);
        drop(j);
        let path = journal_dir(&dir).join("runs.csv");
        let text = fs::read_to_string(&path).unwrap().replacen("5,25", "5,26", 1);
        fs::write(&path, text).unwrap();
        let (_, found) = Journal::open(&dir, "run").unwrap();
        assert_eq!(
            found,
            Found::Discarded(
                "its first 64 rows are not the bytes its checkpoint's SHA-256 vouches for".into()
            )
        );
    }

    #[test]
    fn skipping_cells_trims_the_slices_in_order() {
        let s = |sc: usize, r: u32, a: usize, b: usize| Slice { scenario: sc, replicate: r, configs: a..b };
        let slices = [s(0, 0, 2, 6), s(0, 1, 0, 6), s(1, 0, 0, 3)];
        assert_eq!(skip_cells(&slices, 0), slices);
        assert_eq!(skip_cells(&slices, 3), [s(0, 0, 5, 6), s(0, 1, 0, 6), s(1, 0, 0, 3)]);
        assert_eq!(skip_cells(&slices, 4), [s(0, 1, 0, 6), s(1, 0, 0, 3)]);
        assert_eq!(skip_cells(&slices, 12), [s(1, 0, 2, 3)]);
        assert!(skip_cells(&slices, 13).is_empty());
    }
}
