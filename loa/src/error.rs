//! The crate's one error type.

use std::fmt;

/// Why text, a move or a position was rejected: parsing (squares, moves, positions,
/// records, SGF, rules, variants, colours), an illegal move, or pieces that do not make a
/// position. The message names the offending text and, for multi-line input, where it is.
/// Every fallible function of `loa` returns it; none panics on any input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// Human-readable description naming the bad token.
    pub message: String,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
