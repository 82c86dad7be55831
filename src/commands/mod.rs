//! What each CLI command does, as library functions: they take typed requests, validate every
//! input before anything runs, write output files atomically, and return what to print.
//! `main.rs` only parses arguments and prints.

pub mod export;
pub mod presets;
pub mod replay;
pub mod report;
pub mod run;
pub mod shard;

use crate::policy::PolicySpec;
use crate::scenario::InputError;
use std::path::{Path, PathBuf};

/// The command line as typed (program name and arguments), for report pages.
pub fn command_line() -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(first) = args.first_mut() {
        *first = "breakerlab".to_string();
    }
    args.join(" ")
}

/// Parses `--set key=value` arguments.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, toml::Value)>, InputError> {
    sets.iter()
        .map(|s| PolicySpec::parse_set(s).map_err(|m| InputError::argument(format!("--set {s}: {m}"))))
        .collect()
}

/// `--out` if given, else `output/<name>`.
pub fn out_dir(out: Option<&Path>, name: &str) -> PathBuf {
    out.map_or_else(|| Path::new("output").join(name), Path::to_path_buf)
}

/// Creates `dir` and writes each `(file name, bytes)` into it atomically.
pub fn write_files(dir: &Path, files: &[(&str, Vec<u8>)]) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create output folder {}", dir.display()))?;
    let mut written = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let path = dir.join(name);
        crate::report::write_atomic(&path, bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Writes `path` atomically from a stream: `fill` writes into a buffered temporary file beside
/// it, which is synced and renamed over `path` only when `fill` succeeds. A large file (a
/// shard's runs.csv) is never held in memory, and a failed run leaves no half-written file.
pub fn write_streamed(
    path: &Path,
    fill: impl FnOnce(&mut (dyn std::io::Write + Send)) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let io = |e: std::io::Error| anyhow::Error::new(e).context(format!("cannot write {}", path.display()));
    let tmp = crate::report::atomic::temp_path(path).map_err(io)?;
    let result = (|| -> anyhow::Result<()> {
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(io)?;
        let mut w = std::io::BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
