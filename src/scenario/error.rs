//! Errors in user input (scenario files, scripts, command-line settings), each naming the file,
//! the line and column (or row) and the field, and what was expected. The CLI exits with code 2
//! on any of these.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with something the user wrote. Displayed as `FILE:LINE:COL: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, or `None` for command-line input.
    pub path: Option<PathBuf>,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl InputError {
    /// An error about a whole file (missing, unreadable, empty).
    pub fn file(path: &Path, message: impl Into<String>) -> InputError {
        InputError { path: Some(path.to_path_buf()), position: None, message: message.into() }
    }

    /// An error at a byte offset of a file's text.
    pub fn at_offset(path: &Path, text: &str, offset: usize, message: impl Into<String>) -> InputError {
        InputError {
            path: Some(path.to_path_buf()),
            position: Some(line_col(text, offset)),
            message: message.into(),
        }
    }

    /// An error in a command-line argument.
    pub fn argument(message: impl Into<String>) -> InputError {
        InputError { path: None, position: None, message: message.into() }
    }

    /// Converts a TOML parse or deserialisation error into one with file:line:col.
    /// When the error points at a value, the message names its key.
    pub fn from_toml(path: &Path, text: &str, err: &toml::de::Error) -> InputError {
        let message = err.message().trim().to_string();
        match err.span() {
            Some(span) => {
                let message = match key_of_value_at(text, span.start) {
                    Some(key) if !message.contains(&format!("`{key}`")) => format!("`{key}`: {message}"),
                    _ => message,
                };
                InputError::at_offset(path, text, span.start, message)
            }
            None => InputError::file(path, message),
        }
    }
}

/// The key of a `key = value` line when `offset` lies in its value.
fn key_of_value_at(text: &str, offset: usize) -> Option<&str> {
    let offset = text.floor_char_boundary(offset.min(text.len()));
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    let (key, _) = before.split_once('=')?;
    let key = key.trim().trim_matches('"');
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    plain.then_some(key)
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.position) {
            (Some(p), Some((line, col))) => write!(f, "{}:{line}:{col}: {}", p.display(), self.message),
            (Some(p), None) => write!(f, "{}: {}", p.display(), self.message),
            (None, _) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for InputError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        assert_eq!(line_col(text, 11), (2, 6));
        assert_eq!(line_col(text, 999), (3, 1));
    }

    #[test]
    fn value_errors_name_their_key() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Doc {
            rate: f64,
        }
        let text = "rate = \"fast\"\n";
        let err = toml::from_str::<Doc>(text).unwrap_err();
        let e = InputError::from_toml(Path::new("x.toml"), text, &err);
        assert_eq!(e.position, Some((1, 8)));
        assert!(e.message.starts_with("`rate`: invalid type"), "{e}");
    }

    #[test]
    fn toml_errors_carry_file_line_col() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Doc {
            a: u32,
        }
        let text = "a = 1\nb = 2\n";
        let err = toml::from_str::<Doc>(text).unwrap_err();
        let e = InputError::from_toml(Path::new("x.toml"), text, &err);
        assert_eq!(e.position, Some((2, 1)));
        assert!(e.to_string().starts_with("x.toml:2:1: unknown field `b`"), "{e}");
    }
}
