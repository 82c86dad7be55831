//! What makes a shard's runs.csv tamper-evident, and what every value in it may be.
//!
//! - [`RunsDigest`]: the SHA-256 of the whole file (what `sha256sum` prints), plus digests of
//!   blocks of rows and of each column, so a file that no longer matches is reported at the
//!   rows and fields that changed, not only as "different". A shard records it in shard.toml
//!   after its runs.csv is complete; `merge` recomputes it and refuses a file that differs.
//! - [`check_value`]: the range a metric's value must lie in (finite, not negative; a share of
//!   requests within 0..1), so a merge refuses -5, NaN or inf wherever it stands.
//!
//! Computation only: the caller opens the files.

use super::SweepError;
use super::shard::hex;
use crate::metrics::Metric;
use crate::script::Hashing;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;

/// The most row blocks a digest lists: a shard of up to this many rows is located to the row.
pub const MAX_BLOCKS: u64 = 1024;

/// Hex digits kept of each block's and column's SHA-256 (the whole file's is kept whole).
const SHORT: usize = 16;

/// How many rows each block of a runs.csv of `rows` rows holds: 1 up to [`MAX_BLOCKS`] rows,
/// then as many as keep the blocks within [`MAX_BLOCKS`].
pub fn block_rows(rows: u64) -> u64 {
    rows.div_ceil(MAX_BLOCKS).max(1)
}

/// A runs.csv's digests, as a shard records them in its shard.toml (`[runs]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunsDigest {
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// Rows below the header.
    pub rows: u64,
    /// Rows per block (the last may hold fewer).
    pub block_rows: u64,
    /// Per block of rows, in order: the first 16 hex digits of the SHA-256 of its fields.
    pub blocks: Vec<String>,
    /// Per column, in order: (header, the first 16 hex digits of the SHA-256 of its fields).
    pub columns: Vec<(String, String)>,
}

/// A field's bytes and a separator no CSV field holds unquoted, so `a,bc` and `ab,c` differ.
fn feed(h: &mut Sha256, field: &[u8]) {
    h.update((field.len() as u64).to_le_bytes());
    h.update(field);
}

fn short(h: Sha256) -> String {
    let mut s = hex(&h.finalize());
    s.truncate(SHORT);
    s
}

impl RunsDigest {
    /// Reads `input` to its end (`file` names it in errors) and digests it, `block_rows` rows
    /// a block.
    pub fn compute(input: impl Read, block_rows: u64, file: &str) -> Result<RunsDigest, SweepError> {
        let block_rows = block_rows.max(1);
        let mut hashing = Hashing { inner: input, sha: Sha256::new() };
        let (mut blocks, mut columns, mut names) = (Vec::new(), Vec::<Sha256>::new(), Vec::new());
        let mut rows = 0u64;
        {
            let mut reader =
                csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(&mut hashing);
            let mut record = csv::ByteRecord::new();
            let mut block = Sha256::new();
            let mut first = true;
            loop {
                let more = reader.read_byte_record(&mut record).map_err(|e| SweepError::At {
                    file: file.to_string(),
                    line: e.position().map_or(0, |p| p.line() as usize),
                    col: 1,
                    message: e.to_string(),
                })?;
                if !more {
                    break;
                }
                if first {
                    names = record.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
                    columns = vec![Sha256::new(); names.len()];
                    first = false;
                    continue;
                }
                for (k, field) in record.iter().enumerate() {
                    feed(&mut block, field);
                    if let Some(c) = columns.get_mut(k) {
                        feed(c, field);
                    }
                }
                block.update(b"\n");
                rows += 1;
                if rows.is_multiple_of(block_rows) {
                    blocks.push(short(std::mem::take(&mut block)));
                }
            }
            if !rows.is_multiple_of(block_rows) {
                blocks.push(short(block));
            }
        }
        // Whatever the CSV reader left unread (nothing, normally) still counts in the hash.
        std::io::copy(&mut hashing, &mut std::io::sink())
            .map_err(|e| SweepError::Io { file: file.to_string(), source: e })?;
        Ok(RunsDigest {
            sha256: hex(&hashing.sha.finalize()),
            rows,
            block_rows,
            blocks,
            columns: names.into_iter().zip(columns.into_iter().map(short)).collect(),
        })
    }

    /// Checks `found` (this file, digested with this digest's `block_rows`) against what was
    /// recorded (`recorded_in` names the shard.toml). The error names the rows (as lines of
    /// `file`) and the fields that changed, or says the whole file was replaced.
    pub fn verify(&self, found: &RunsDigest, file: &str, recorded_in: &str) -> Result<(), SweepError> {
        if self.sha256 == found.sha256 {
            return Ok(());
        }
        let fields: Vec<&str> = self
            .columns
            .iter()
            .zip(&found.columns)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0.as_str())
            .collect();
        let blocks: Vec<usize> = (0..self.blocks.len().max(found.blocks.len()))
            .filter(|&i| self.blocks.get(i) != found.blocks.get(i))
            .collect();
        let why = format!(
            "its SHA-256 is {} but {recorded_in} recorded {} when the shard wrote it",
            &found.sha256, &self.sha256
        );
        let lines = |i: usize| {
            let first = i as u64 * self.block_rows + 2; // the header is line 1
            let last = (first + self.block_rows - 1).min(self.rows.max(found.rows) + 1);
            (first, last)
        };
        let changed_names = |fields: &[&str]| {
            if fields.len() == 1 {
                format!("field {}", fields[0])
            } else {
                format!("fields {}", fields.join(", "))
            }
        };
        match (blocks.as_slice(), self.rows == found.rows && self.columns.len() == found.columns.len()) {
            ([i], true) if !fields.is_empty() => {
                let (first, last) = lines(*i);
                let message = format!("{}: edited after the shard wrote it ({why})", changed_names(&fields));
                if first == last {
                    return Err(SweepError::At {
                        file: file.to_string(),
                        line: first as usize,
                        col: 1,
                        message,
                    });
                }
                Err(SweepError::File {
                    file: file.to_string(),
                    message: format!("rows at lines {first}-{last}, {message}"),
                })
            }
            _ => {
                let rows = if self.rows == found.rows {
                    format!("{} of its {} row blocks differ", blocks.len(), self.blocks.len())
                } else {
                    format!("it holds {} rows where the shard wrote {}", found.rows, self.rows)
                };
                let first =
                    blocks.first().map_or(String::new(), |&i| format!(", the first at line {}", lines(i).0));
                let fields = if fields.is_empty() {
                    String::new()
                } else {
                    format!(" ({} changed)", changed_names(&fields))
                };
                Err(SweepError::File {
                    file: file.to_string(),
                    message: format!(
                        "not the file this shard wrote: {why}; {rows}{first}{fields}. Was it replaced by \
                         another sweep's or another run's runs.csv? Rerun the shard, or restore its own file"
                    ),
                })
            }
        }
    }
}

/// Checks a value of metric column `name` is one it can take: finite and not negative, and a
/// share of requests (`availability`, `fallback_rate`) within 0..1. The error says what was
/// expected.
pub fn check_value(name: &str, value: f64) -> Result<(), String> {
    let share = matches!(Metric::from_name(name), Some(Metric::Availability | Metric::FallbackRate));
    let expected = if share { "a share of requests within 0..1" } else { "a finite number, 0 or more" };
    let ok = value.is_finite() && value >= 0.0 && (!share || value <= 1.0);
    if ok { Ok(()) } else { Err(format!("{name}: {value} is out of range: expected {expected}")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "scenario,config_id,seed,false_opens,availability\n\
                       blip,0,42,1,0.99\nblip,1,42,0,1\nhang,0,42,3,0.5\nhang,1,42,2,0.75\n";

    fn digest(text: &str, block_rows: u64) -> RunsDigest {
        RunsDigest::compute(text.as_bytes(), block_rows, "a/runs.csv").unwrap()
    }

    #[test]
    fn the_digest_holds_the_files_sha256_and_locates_an_edit_to_its_row_and_field() {
        let d = digest(CSV, 1);
        assert_eq!(d.sha256, crate::sweep::shard::sha256_hex(CSV.as_bytes()));
        assert_eq!((d.rows, d.blocks.len(), d.columns.len()), (4, 4, 5));
        assert_eq!(
            d.verify(&digest(CSV, 1), "a/runs.csv", "a/shard.toml").map_err(|e| e.to_string()),
            Ok(())
        );
        let edited = CSV.replace("hang,0,42,3,", "hang,0,42,4,");
        let e = d.verify(&digest(&edited, 1), "a/runs.csv", "a/shard.toml").unwrap_err().to_string();
        let sha = crate::sweep::shard::sha256_hex(edited.as_bytes());
        assert_eq!(
            e,
            format!(
                "a/runs.csv:4:1: field false_opens: edited after the shard wrote it (its SHA-256 is {sha} but \
                 a/shard.toml recorded {} when the shard wrote it)",
                d.sha256
            )
        );
        // Blocks of two rows: the edit is located to the block.
        let d2 = digest(CSV, 2);
        let e = d2.verify(&digest(&edited, 2), "a/runs.csv", "a/shard.toml").unwrap_err().to_string();
        assert!(e.starts_with("a/runs.csv: rows at lines 4-5, field false_opens: edited"), "{e}");
        // Moving a value between columns changes both fields.
        let moved = CSV.replace("blip,1,42,0,1", "blip,1,42,1,0");
        let e = d.verify(&digest(&moved, 1), "a/runs.csv", "a/shard.toml").unwrap_err().to_string();
        assert!(e.starts_with("a/runs.csv:3:1: fields false_opens, availability: edited"), "{e}");
    }

    #[test]
    fn a_replaced_or_cut_file_is_named_as_not_the_shards_own() {
        let d = digest(CSV, 1);
        let other = CSV.replace(",42,", ",7,").replace("0.99", "0.98");
        let e = d.verify(&digest(&other, 1), "a/runs.csv", "a/shard.toml").unwrap_err().to_string();
        assert!(e.starts_with("a/runs.csv: not the file this shard wrote: its SHA-256 is"), "{e}");
        assert!(
            e.contains(
                "; 4 of its 4 row blocks differ, the first at line 2 (fields seed, availability changed)"
            ),
            "{e}"
        );
        let cut: String = CSV.lines().take(4).map(|l| format!("{l}\n")).collect();
        let e = d.verify(&digest(&cut, 1), "a/runs.csv", "a/shard.toml").unwrap_err().to_string();
        assert!(e.contains("it holds 3 rows where the shard wrote 4, the first at line 5"), "{e}");
        assert_eq!(
            (block_rows(1), block_rows(1024), block_rows(1025), block_rows(5_000_000)),
            (1, 1, 2, 4883)
        );
    }

    #[test]
    fn values_out_of_range_are_named_with_what_was_expected() {
        assert_eq!(check_value("availability", 0.5), Ok(()));
        assert_eq!(
            check_value("availability", -5.0),
            Err("availability: -5 is out of range: expected a share of requests within 0..1".into())
        );
        assert!(check_value("availability", 1.5).is_err());
        assert!(check_value("availability", f64::NAN).unwrap_err().contains("NaN is out of range"));
        assert_eq!(
            check_value("false_opens", f64::INFINITY),
            Err("false_opens: inf is out of range: expected a finite number, 0 or more".into())
        );
        assert_eq!(check_value("amplification", 2.5), Ok(()));
        assert!(check_value("latency_p99_ms", -0.1).is_err());
    }
}
