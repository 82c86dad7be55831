//! Scripted calls: a script's rows (`t_ms,latency_ms,ok`), one per call, as the engine replays
//! them. The client makes exactly these calls (at `t_ms`, taking `latency_ms`, succeeding when
//! `ok`), with no retries. Reading the file is `breakerlab`'s (`script::load_script`).

use crate::time::{Dur, SimTime};
use std::path::{Path, PathBuf};

/// The header a script must start with, exactly.
pub const SCRIPT_HEADER: [&str; 3] = ["t_ms", "latency_ms", "ok"];

/// One scripted call. Packed (17 bytes, not 24): a script holds all of them in memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(C, packed)]
pub struct ScriptRow {
    /// When the call is made.
    pub t: SimTime,
    /// How long the dependency takes to answer.
    pub latency: Dur,
    /// Whether it succeeds (otherwise it is a server error).
    pub ok: bool,
}

/// A script's calls in time order, held in memory, with the file they were read from and the
/// SHA-256 of its bytes as read.
#[derive(Debug, Default)]
pub struct ScriptCalls {
    rows: Vec<ScriptRow>,
    path: PathBuf,
    sha256: [u8; 32],
}

impl ScriptCalls {
    /// The calls `rows` (in time order) read from `path`, whose bytes hash to `sha256`.
    pub fn new(rows: Vec<ScriptRow>, path: PathBuf, sha256: [u8; 32]) -> ScriptCalls {
        ScriptCalls { rows, path, sha256 }
    }

    /// The rows, in file order (which is time order).
    pub fn rows(&self) -> &[ScriptRow] {
        &self.rows
    }

    /// Rows in the script.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when it has no rows (a loaded script always has some).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The file the rows were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SHA-256 of the file as it was read.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The latest end of a call (time plus latency), in microseconds.
    pub fn latest_end(&self) -> u64 {
        self.rows.iter().map(|r| (r.t + r.latency).0).max().unwrap_or(0)
    }
}

/// The calls of `t_ms,latency_ms,ok` lines (no header; milliseconds with up to 3 decimals), for
/// tests that replay a script without a file (the file reader is `breakerlab`'s).
#[cfg(test)]
pub fn calls_from_text(text: &str) -> ScriptCalls {
    let ms = |cell: &str| Dur((cell.trim().parse::<f64>().expect("milliseconds") * 1000.0).round() as u64);
    let rows = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            ScriptRow { t: SimTime(ms(cells[0]).0), latency: ms(cells[1]), ok: cells[2].trim() == "1" }
        })
        .collect();
    ScriptCalls::new(rows, PathBuf::from("calls.csv"), [0; 32])
}
