//! The application layer: one module per command, each taking a typed request and returning a
//! typed report with a `render` to text. Every input is validated before anything runs; files
//! are written only through [`output::OutputDir`], all at once, and only once everything
//! succeeded. `main.rs` parses arguments into requests, prints reports and maps
//! [`crate::Error`] to an exit code; nothing here reads the command line or the environment.

pub mod compare;
pub mod export;
pub mod merge;
pub mod output;
pub mod presets;
pub mod recommend;
pub mod replay;
pub mod report;
pub mod run;
pub mod shard;
pub mod sweep;

use crate::error::Result;
use crate::policy::PolicySpec;
use crate::scenario::{InputError, Scenario};
use std::path::PathBuf;

/// Parses `--set key=value` arguments.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, toml::Value)>, InputError> {
    sets.iter()
        .map(|s| PolicySpec::parse_set(s).map_err(|m| InputError::argument(format!("--set {s}: {m}"))))
        .collect()
}

/// Loads scenario files, refusing two with the same name (cells are identified by name).
fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<Scenario>> {
    let mut out: Vec<Scenario> = Vec::with_capacity(paths.len());
    for p in paths {
        let s = Scenario::load(p)?;
        if let Some(other) = out.iter().find(|o| o.name == s.name) {
            let first = other.path.as_deref().map_or_else(String::new, |q| q.display().to_string());
            return Err(InputError::file(
                p,
                format!("scenario name `{}` is also used by {first}: names must be unique", s.name),
            )
            .into());
        }
        out.push(s);
    }
    Ok(out)
}

/// `names` of `files`, comma-separated, and the folder they are in: `wrote a, b to DIR/`.
fn wrote(files: &[PathBuf]) -> Option<String> {
    let dir = files.first().and_then(|f| f.parent())?;
    Some(format!("wrote {} to {}/", list(files), dir.display()))
}

/// File names, comma-separated, for the printout.
pub fn list(files: &[PathBuf]) -> String {
    files.iter().filter_map(|f| f.file_name()).map(|n| n.to_string_lossy()).collect::<Vec<_>>().join(", ")
}

/// The bundled scenarios folder, for tests.
#[cfg(test)]
fn bundled(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name)
}
