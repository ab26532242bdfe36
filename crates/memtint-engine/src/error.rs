//! Errors are values with context (file, line, field); the CLI turns them into one message.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is impossible; `field` names it as the user wrote it.
    #[error("invalid configuration: {field}: {reason}")]
    Config { field: String, reason: String },

    /// A preset name that does not exist; lists the valid ones.
    #[error("unknown {kind} '{name}'; valid {}: {}", plural(kind), valid.join(", "))]
    UnknownName { kind: &'static str, name: String, valid: Vec<String> },

    /// A malformed line in an input file.
    #[error("{}:{line}: {reason}", path.display())]
    Parse { path: PathBuf, line: u64, reason: String },

    /// A file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    /// A timing or protocol violation found by the independent checker.
    #[error("timing violation: {0}")]
    Violation(String),
}

impl Error {
    pub fn config(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Config { field: field.into(), reason: reason.into() }
    }

    pub fn unknown(kind: &'static str, name: &str, valid: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Error::UnknownName { kind, name: name.to_string(), valid: valid.into_iter().map(Into::into).collect() }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// "policy" -> "policies", "machine" -> "machines".
fn plural(kind: &str) -> String {
    match kind.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{kind}s"),
    }
}
