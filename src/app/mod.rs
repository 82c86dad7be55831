//! The application layer: one module per command, each taking a typed request and returning a
//! typed report with a `render` to text. Every input is validated before anything runs; files
//! are written only through [`output::OutputDir`], all at once, and only once everything
//! succeeded. `main.rs` parses arguments into requests, prints reports and maps
//! [`crate::Error`] to an exit code; nothing here reads the command line or the environment.

pub mod check;
pub mod compare;
pub mod deploy;
pub mod explain;
pub mod export;
mod files;
pub mod merge;
pub mod merge_stages;
pub mod output;
pub mod presets;
pub mod recommend;
pub mod replay;
pub mod report;
pub mod resume;
pub mod run;
pub mod run_result;
pub mod shard;
pub mod sweep;

pub use crate::limits::{Limits, parse_bytes, parse_calls};
pub use crate::sweep::shard::{SCHEDULER_VARIABLES, ShardId};

use crate::Result;
use crate::policy::PolicySpec;
use crate::scenario::{self, InputError, Scenario};
use std::path::PathBuf;

/// Parses `--set key=value` arguments.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, toml::Value)>, InputError> {
    sets.iter()
        .map(|s| PolicySpec::parse_set(s).map_err(|m| InputError::argument(format!("--set {s}: {m}"))))
        .collect()
}

/// A refused policy value as the flag the user typed: `--set ARG: ...` when the message names
/// a key a `--set` gave, else `--policy ARG: ...` when `policy` is the `--policy` argument, else
/// as it is.
pub fn name_flag(message: impl std::fmt::Display, policy: Option<&str>, sets: &[String]) -> InputError {
    let message = message.to_string();
    let from_set = sets
        .iter()
        .find(|s| s.split_once('=').is_some_and(|(k, _)| message.contains(&format!("`{}`", k.trim()))));
    match (from_set, policy) {
        (Some(s), _) => InputError::argument(format!("--set {s}: {message}")),
        (None, Some(p)) => InputError::argument(format!("--policy {p}: {message}")),
        (None, None) => InputError::argument(message),
    }
}

/// Loads scenario files, refusing two with the same name (cells are identified by name).
fn load_scenarios(paths: &[PathBuf]) -> Result<Vec<Scenario>> {
    let mut out: Vec<Scenario> = Vec::with_capacity(paths.len());
    for p in paths {
        let s = scenario::load(p)?;
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

/// The command line that reproduces a run when pasted into a POSIX shell: the program name
/// `breakerlab`, then each argument of `args` (the program's own name first, dropped) quoted
/// by [`shell_word`].
pub fn command_line<S: AsRef<str>>(args: &[S]) -> String {
    let mut words = vec!["breakerlab".to_string()];
    words.extend(args.iter().skip(1).map(|a| shell_word(a.as_ref()).into_owned()));
    words.join(" ")
}

/// One word for a POSIX shell: as is when it holds only characters no shell treats specially
/// (letters, digits and `_ @ % + = : , . / -`), else in single quotes, each `'` written `'\''`.
pub fn shell_word(word: &str) -> std::borrow::Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        std::borrow::Cow::Borrowed(word)
    } else {
        std::borrow::Cow::Owned(format!("'{}'", word.replace('\'', "'\\''")))
    }
}

/// Every input file of a run, in order and once each: `first` (a sweep file, when given),
/// then each scenario's file and the files it reads (script, trace, labels).
fn input_paths(first: Option<&std::path::Path>, scenarios: &[Scenario]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = first.map(std::path::Path::to_path_buf).into_iter().collect();
    for s in scenarios {
        for p in s.path.iter().chain(&s.inputs) {
            if !paths.contains(p) {
                paths.push(p.clone());
            }
        }
    }
    paths
}

/// The bundled scenarios folder, for tests.
#[cfg(test)]
fn bundled(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_the_shell() {
        let args = [
            "target/debug/breakerlab",
            "replay",
            "calls.csv",
            "--slo",
            "success_rate < 80% or p95 > 8s for 2m",
        ];
        assert_eq!(
            command_line(&args),
            "breakerlab replay calls.csv --slo 'success_rate < 80% or p95 > 8s for 2m'"
        );
        assert_eq!(shell_word("consecutive[failure_threshold=3]"), "'consecutive[failure_threshold=3]'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("--out=output/a-b_c"), "--out=output/a-b_c");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
    }
}
