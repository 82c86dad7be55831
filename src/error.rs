//! The library's one error type. Every command returns it, and the command line maps it to an
//! exit code through [`Error::exit_code`]: 2 when the user's input is at fault (a file, row,
//! field or argument is named), 1 for a failure of the machine (a file that cannot be written)
//! or of breakerlab itself.

use crate::scenario::InputError;
use std::path::PathBuf;

/// What went wrong, typed by whose fault it is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a file, row, field or argument, and what was expected.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A file or folder could not be read or written for a reason outside the input.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A failure of breakerlab itself (a chart that could not be drawn, a table out of shape).
    #[error("{0}")]
    Internal(String),
}

/// A library result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The process exit code for this error: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_) => 2,
            Error::Io { .. } | Error::Internal(_) => 1,
        }
    }

    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io { path: path.into(), source }
    }

    /// An input error in a command-line argument.
    pub fn argument(message: impl Into<String>) -> Error {
        Error::Input(InputError::argument(message))
    }

    /// A refused value (a ratio, a duration, a rule) checked where its place is not known:
    /// displayed as the bare message, so the reader that knows the file, line and field
    /// prefixes it (`FILE:LINE:COL: FIELD: message`).
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::Input(InputError::argument(message))
    }
}

impl From<Error> for InputError {
    /// An error met while reading input, as an input error: the input error itself, or the text
    /// of an I/O or internal failure.
    fn from(e: Error) -> InputError {
        match e {
            Error::Input(e) => e,
            other => InputError::argument(other.to_string()),
        }
    }
}

impl From<crate::time::DurError> for Error {
    fn from(e: crate::time::DurError) -> Error {
        Error::invalid(e.to_string())
    }
}

impl From<crate::policy::PolicyError> for Error {
    fn from(e: crate::policy::PolicyError) -> Error {
        Error::Input(InputError::argument(e.to_string()))
    }
}

impl From<crate::policy::export::ExportError> for Error {
    fn from(e: crate::policy::export::ExportError) -> Error {
        Error::Input(InputError::argument(e.to_string()))
    }
}

impl From<crate::sweep::SweepError> for Error {
    fn from(e: crate::sweep::SweepError) -> Error {
        Error::Input(e.into())
    }
}

impl From<crate::report::charts::ChartError> for Error {
    /// A chart's input is an output folder's files: a malformed or truncated one is bad input
    /// (exit 2); a file that cannot be read or written, or a drawing failure, is not.
    fn from(e: crate::report::charts::ChartError) -> Error {
        use crate::report::charts::ChartError as C;
        match e {
            C::Io { path, source } => Error::Io { path, source },
            C::Csv { ref path, .. }
            | C::Toml { ref path, .. }
            | C::MissingColumn { ref path, .. }
            | C::BadValue { ref path, .. } => {
                let message = e.to_string();
                let prefix = format!("{}: ", path.display());
                let message = message.strip_prefix(&prefix).unwrap_or(&message).to_string();
                Error::Input(InputError::file(path, message))
            }
            C::NoData(_) => Error::Input(InputError::argument(e.to_string())),
            C::Font | C::Draw(_) => Error::Internal(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::charts::ChartError;

    #[test]
    fn exit_codes_follow_whose_fault_it_is() {
        assert_eq!(Error::argument("--to before --from").exit_code(), 2);
        let io = Error::io("out/summary.csv", std::io::Error::other("disk full"));
        assert_eq!(io.exit_code(), 1);
        assert_eq!(io.to_string(), "out/summary.csv: disk full");
        assert_eq!(Error::Internal("x".into()).exit_code(), 1);
        let csv =
            ChartError::Csv { path: "o/timeline.csv".into(), line: 3, message: "found 2 fields".into() };
        let e = Error::from(csv);
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "o/timeline.csv: line 3: found 2 fields");
        assert_eq!(Error::from(ChartError::Font).exit_code(), 1);
    }
}
