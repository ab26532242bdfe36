//! Errors are values with context (file, line, field); the CLI turns them into one message.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is impossible; `field` names it as the user wrote it.
    #[error("invalid configuration: {}: {}", escaped(field), escaped(reason))]
    Config { field: String, reason: String },

    /// A preset name that does not exist; lists the valid ones.
    #[error("unknown {kind} '{name}'; valid {}: {}", plural(kind), valid.join(", "))]
    UnknownName { kind: &'static str, name: String, valid: Vec<String> },

    /// A malformed line in an input file. The reason quotes the input, so it is shown escaped
    /// and cut short: a binary file's bytes never reach the terminal raw.
    /// Line 0 is a place without a line (a binary file's header).
    #[error("{}: {}", location(path, *line), printable(reason))]
    Parse { path: PathBuf, line: u64, reason: String },

    /// A file could not be opened or read.
    #[error("{}: {source}", escaped(&path.display().to_string()))]
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

/// "file:line", or "file" for line 0.
fn location(path: &std::path::Path, line: u64) -> String {
    let shown = escaped(&path.display().to_string());
    if line == 0 {
        shown
    } else {
        format!("{shown}:{line}")
    }
}

/// `text` with control characters escaped, whole (names and lists of valid values).
fn escaped(text: &str) -> String {
    if text.chars().any(char::is_control) {
        text.chars().map(|c| if c.is_control() { escape(c) } else { c.to_string() }).collect()
    } else {
        text.to_string()
    }
}

fn escape(c: char) -> String {
    match c {
        '\0' => "\\0".into(),
        '\r' => "\\r".into(),
        '\n' => "\\n".into(),
        '\t' => "\\t".into(),
        c => format!("\\x{:02x}", c as u32),
    }
}

/// Longest reason a parse error shows, in characters.
const MAX_REASON: usize = 400;

/// `text` with control characters escaped (`\x1b`, `\0`, `\r`) and cut to `MAX_REASON`
/// characters.
pub fn printable(text: &str) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == MAX_REASON {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.push_str(&escape(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// "policy" -> "policies", "machine" -> "machines".
fn plural(kind: &str) -> String {
    match kind.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{kind}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse errors used to echo ESC, NUL and CR from a binary file raw and unbounded.
    #[test]
    fn a_parse_error_shows_control_bytes_escaped_and_cut_short() {
        let e = Error::Parse { path: "t".into(), line: 3, reason: format!("bad 'a\x1b[2J\0\r{}'", "z".repeat(1000)) };
        let shown = e.to_string();
        assert!(shown.starts_with("t:3: bad 'a\\x1b[2J\\0\\r"), "{shown}");
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert!(shown.len() < 450 && shown.ends_with("..."), "{}", shown.len());
    }
}
