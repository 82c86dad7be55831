//! What the JSON importers share besides the scanner ([`super::scan`]): reading the whole file
//! (exports are read in one piece and scanned in place, so no string of the file is copied) and
//! the message for a bad value at a JSON path.

use super::TraceError;
use std::path::Path;

/// Reads `path` into memory, naming it in the error.
pub fn read(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path)
        .map_err(|source| TraceError::Io { file: path.display().to_string(), source })
}

/// A bad value at a JSON path (`data.result[2].values[17]`), with what was expected.
pub fn bad_value(file: &str, path: &str, found: &str, expected: &str) -> TraceError {
    TraceError::Format {
        file: file.to_string(),
        message: format!("{path}: expected {expected}, found {found}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_their_path() {
        let e = bad_value("f.json", "data.result[0].values[3][1]", "\"x\"", "a number").to_string();
        assert_eq!(e, "f.json: data.result[0].values[3][1]: expected a number, found \"x\"");
        let e = read(Path::new("/nonexistent/f.json")).unwrap_err().to_string();
        assert!(e.starts_with("/nonexistent/f.json: "), "{e}");
    }
}
