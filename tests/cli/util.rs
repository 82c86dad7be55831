//! Shared helpers for the integration tests: run the binary in a temporary folder, read its
//! output files, and compare texts with a readable diff.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The repository root (where `scenarios/` lives).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A bundled scenario's path.
pub fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// The `breakerlab` binary, run inside `dir`.
pub fn breakerlab(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("breakerlab").expect("binary builds");
    cmd.current_dir(dir);
    cmd
}

/// Reads a file the run wrote.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Writes `text` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write test input");
    path
}

/// The value of `column` in the first data row of a CSV text.
pub fn csv_field(csv: &str, column: &str) -> String {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().expect("header").clone();
    let row = reader.records().next().expect("a data row").expect("a valid row");
    let i =
        header.iter().position(|h| h == column).unwrap_or_else(|| panic!("no column {column} in {header:?}"));
    row[i].to_string()
}

/// Asserts two texts are equal, printing the first differing line when not.
#[track_caller]
pub fn assert_same_text(left: &str, right: &str, what: &str) {
    if left == right {
        return;
    }
    for (n, (a, b)) in left.lines().zip(right.lines()).enumerate() {
        if a != b {
            panic!("{what} differ at line {}:\n  left:  {a}\n  right: {b}", n + 1);
        }
    }
    panic!("{what} differ in length: {} vs {} lines", left.lines().count(), right.lines().count());
}

/// Every file name in a folder, sorted (an absent folder gives an empty list).
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// 2 scenarios × 7 configurations (a 2 × 2 `consecutive` grid for a heatmap, two `windowed`, and
/// a baseline outside the grid, added after it) × 2 replicates = 28 cells.
pub fn small_sweep(dir: &Path) -> PathBuf {
    let text = format!(
        r#"
name = "small"
scenarios = ["{0}/hard-outage.toml", "{0}/blip.toml"]
replicates = 2
constraints = ["missed_incidents == 0"]
baseline = {{ preset = "consecutive", failure_threshold = 5, open_duration = "30s" }}

[[policies]]
preset = "consecutive"
failure_threshold = [3, 10]
open_duration = ["10s", "1m"]

[[policies]]
preset = "windowed"
failure_rate = [0.2, 0.5]
"#,
        root().join("scenarios").display()
    );
    write(dir, "small.toml", &text)
}
