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
