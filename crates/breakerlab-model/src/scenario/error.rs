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

/// Where a value that sizes a run was written (file, 1-based line and column, field), so a
/// limit checked after parsing (`breakerlab`'s limits check) can point at it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spot {
    /// The file, or `None` for a command-line flag.
    pub path: Option<PathBuf>,
    /// 1-based line and column, when the value was written (absent: a default).
    pub position: Option<(usize, usize)>,
    /// The field or flag, e.g. `[traffic] rate` or `--rate`.
    pub field: String,
}

impl Spot {
    /// A command-line flag.
    pub fn flag(flag: &str) -> Spot {
        Spot { path: None, position: None, field: flag.to_string() }
    }

    /// A field of `path` at byte `offset` of its `text`, or at no line when `offset` is `None`.
    pub fn in_file(path: &Path, text: &str, offset: Option<usize>, field: &str) -> Spot {
        Spot {
            path: Some(path.to_path_buf()),
            position: offset.map(|o| line_col(text, o)),
            field: field.into(),
        }
    }

    /// An input error at this spot: `FILE:LINE:COL: FIELD: message`.
    pub fn error(&self, message: impl std::fmt::Display) -> InputError {
        InputError {
            path: self.path.clone(),
            position: self.position,
            message: format!("{}: {message}", self.field),
        }
    }
}

/// The byte offset of the line `key = ...` inside the table whose header (or inline table)
/// starts at `table_start`: searched through its sub-tables (`[client.retry]` for `[client]`)
/// up to the next other table, or within an inline `{ ... }` table.
pub fn key_position(text: &str, table_start: usize, key: &str) -> Option<usize> {
    let rest = text.get(table_start..)?;
    let matches_key =
        |line: &str| line.strip_prefix(key).is_some_and(|after| after.trim_start().starts_with('='));
    if rest.starts_with('{') {
        let inline = &rest[..rest.find('}').unwrap_or(rest.len())];
        let mut offset = table_start;
        for part in inline.split_inclusive([',', '{']) {
            let trimmed = part.trim_start();
            if matches_key(trimmed) {
                return Some(offset + (part.len() - trimmed.len()));
            }
            offset += part.len();
        }
        return None;
    }
    let header = rest.lines().next()?.trim();
    let name = header.trim_start_matches('[').trim_end_matches(']').trim();
    let mut offset = table_start;
    for (n, line) in rest.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if n > 0 && trimmed.starts_with('[') {
            let other = trimmed.trim_start_matches('[').split(']').next().unwrap_or("").trim();
            let sub_table = other.starts_with(&format!("{name}.")) && !trimmed.starts_with("[[");
            if !sub_table {
                break;
            }
        }
        if n > 0 && matches_key(trimmed) {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
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
    fn keys_are_found_in_their_table_and_sub_tables() {
        let text = "a = 1\n[client]\ntimeout = \"2s\"\n[client.retry]\nmax_attempts = 3\n[policy]\nmax_attempts = 9\n";
        let client = text.find("[client]").unwrap();
        let at = key_position(text, client, "max_attempts").unwrap();
        assert_eq!(line_col(text, at), (5, 1));
        assert_eq!(key_position(text, client, "instances"), None);
        let text = "[[instances]]\npreset = \"a\"\n[[instances]]\npreset = \"b\"\nx = 1\n";
        assert_eq!(key_position(text, 0, "x"), None, "the next array element is another table");
        let text = "client = { timeout = \"1s\", instances = 7 }\n";
        let at = key_position(text, text.find('{').unwrap(), "instances").unwrap();
        assert_eq!(line_col(text, at), (1, 28));
        let spot = Spot::in_file(Path::new("s.toml"), text, Some(at), "[client] instances");
        assert_eq!(spot.error("too many").to_string(), "s.toml:1:28: [client] instances: too many");
        assert_eq!(Spot::flag("--rate").error("too high").to_string(), "--rate: too high");
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
